"""Small building blocks for writing checks of one's own claims (paper-independent).

A claim module wires printed formulas to references with :func:`rfcheck.ledger.deterministic_check`,
:func:`rfcheck.ledger.inequality_check` and plain :class:`rfcheck.ledger.Check` objects.  The helpers here
are the pieces of that wiring which do not depend on any paper:

* :func:`mp_reference`: a ``reference(point, dps)`` from a formula written against a number-system
  context, evaluated in mpmath with guard digits;
* :func:`ball_of`: the Arb ball function ``(point, bits)`` of such a formula;
* :func:`max_below`: the ``sides_ball`` of a claimed ``max <= bound``;
* :func:`capped`: an expensive check limited to a few grid points, without the optimiser's climb;
* :func:`certify_on_draws`: certification of a point that compares two estimators on the same random
  draws (the draws are exact floats, so both sides have balls);
* :func:`dps_of_bits`: the digits whose working precision is a given number of bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath

from rfcheck.arb_backend import on_balls
from rfcheck.backends import MP
from rfcheck.claims._common import certify_eval, eval_on_balls
from rfcheck.ledger import Budget, Check, PointEval, certify_equal

__all__ = ["ball_of", "capped", "certify_on_draws", "dps_of_bits", "max_below", "mp_reference"]


def mp_reference(f: Callable[[Any, dict[str, Any]], Any],
                 scale: Callable[[dict[str, Any], Any], Any] = lambda p, v: 1 + abs(v),
                 digits: int = 5) -> Callable[[dict[str, Any], int], tuple[Any, Any]]:
    """``reference(point, dps)`` of a formula written against a context: ``f(MP, point)`` in mpmath.

    Parameters
    ----------
    f : callable
        ``f(ctx, point)``, the formula (its floats converted by the context, e.g.
        :func:`rfcheck.backends.num`).
    scale : callable, optional
        ``scale(point, value)``: the magnitude of the error bar (default ``1 + |value|``).
    digits : int, default 5
        The error bar is ``10^(-dps - digits) scale(point, value)``.

    Returns
    -------
    callable
        ``reference(point, dps) -> (value, error bar)``, both computed at ``dps + 10`` digits.

    Examples
    --------
    >>> import mpmath
    >>> ref = mp_reference(lambda ctx, p: ctx.exp(p["t"]))
    >>> v, e = ref({"t": 1.0}, 30)
    >>> with mpmath.workdps(50):
    ...     abs(v - mpmath.e) < mpmath.mpf(10) ** -38, abs(e / (1 + v) - mpmath.mpf(10) ** -35) < mpmath.mpf(10) ** -70
    (True, True)
    """
    def ref(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
        with mpmath.workdps(dps + 10):
            v = f(MP, p)
            return v, mpmath.mpf(10) ** (-dps - digits) * scale(p, v)

    return ref


def ball_of(f: Callable[[Any, dict[str, Any]], Any]) -> Callable[[dict[str, Any], int], Any]:
    """The ball function ``(point, bits)`` of a formula written against a context, ``f(ctx, point)``.

    Unlike :func:`rfcheck.claims._common.eval_on_balls` the point is passed as it is (its ints stay
    ints): its floats become exact balls where ``f`` converts them (:func:`rfcheck.backends.num`).

    Parameters
    ----------
    f : callable
        ``f(ctx, point)``.

    Returns
    -------
    callable
        ``ball(point, bits)``: ``f(ARB, point)`` at ``bits`` bits, a ``flint.arb``/``acb`` (or a tuple
        of them, as ``f`` returns).

    Examples
    --------
    >>> import flint
    >>> from rfcheck.backends import num
    >>> b = ball_of(lambda ctx, p: ctx.exp(num(ctx, p["t"])))({"t": 0.5}, 64)
    >>> bool(b.overlaps(flint.arb(0.5).exp())), bool(b.rad() < 1e-15)
    (True, True)
    """
    return lambda p, bits: on_balls(lambda ctx: f(ctx, p), bits=bits)


def max_below(lhs_ball: Callable[[dict[str, Any], int, Any], Any], rhs: Callable[[Any, dict[str, Any]], Any] | None,
              rhs_ball: Callable[[dict[str, Any], int], Any] | None = None) -> Callable[[dict[str, Any], int], Any]:
    """The ``sides_ball`` of a claimed ``max <= rhs`` (:func:`rfcheck.ledger.inequality_check`).

    The right side's ball comes first, so that the enclosure of the maximum, which is costly, can aim at it
    (a branch-and-bound stops once it has proven the maximum below the bound).

    Parameters
    ----------
    lhs_ball : callable
        ``lhs_ball(point, bits, rhs)``: an enclosure of the maximum, trying to prove it below the ball ``rhs``.
    rhs : callable or None
        ``rhs(ctx, point)``: the bound written against a context, evaluated on balls
        (:func:`rfcheck.claims._common.eval_on_balls`); None to use ``rhs_ball``.
    rhs_ball : callable, optional
        ``rhs_ball(point, bits)``: the bound's ball, where it is not a context formula.

    Returns
    -------
    callable
        ``sides(point, bits) -> (lhs ball, rhs ball)``, or a string where the bound leaves ball
        arithmetic.

    Examples
    --------
    >>> import flint
    >>> sides = max_below(lambda p, bits, rhs: flint.arb(1), lambda ctx, p: ctx.exp(p["t"]))
    >>> lhs, rhs = sides({"t": 0.5}, 64)
    >>> bool(lhs < rhs)
    True
    """
    def balls(p: dict[str, Any], bits: int) -> Any:
        rhs_b = eval_on_balls(rhs, p, bits) if rhs is not None else rhs_ball(p, bits)  # type: ignore[misc]
        if rhs_b is None:
            return "the right side leaves ball arithmetic"
        return lhs_ball(p, bits, rhs_b), rhs_b

    return balls


def capped(check: Check, n: int) -> Check:
    """Cap an expensive check (a quadrature) at ``n`` grid/corner points, with no optimiser climb.

    Parameters
    ----------
    check : Check
        The check; changed in place.
    n : int
        At most this many points per run.

    Returns
    -------
    Check
        ``check`` itself, with ``max_points = n`` and ``search = False``.

    Examples
    --------
    >>> from rfcheck.claims import Check
    >>> c = capped(Check("quadrature", 1, lambda p, budget, seed: None, max_points=30), 4)
    >>> c.max_points, c.search
    (4, False)
    """
    check.max_points = n
    check.search = False
    return check


def dps_of_bits(bits: int) -> int:
    """The digits ``dps`` whose working precision is ``bits`` (the inverse of
    :func:`rfcheck.arb_backend.bits_for_dps`, which is one-to-one).

    A ball function receives the bits; a check's floor ``10^(5 - dps)`` needs the digits.

    Parameters
    ----------
    bits : int
        A working precision that :func:`rfcheck.arb_backend.bits_for_dps` gives.

    Returns
    -------
    int
        ``dps`` with ``bits_for_dps(dps) == bits``.

    Raises
    ------
    ValueError
        If no ``dps`` has that working precision.

    Examples
    --------
    >>> from rfcheck.arb_backend import bits_for_dps
    >>> [dps_of_bits(bits_for_dps(d)) for d in (15, 30, 50)]
    [15, 30, 50]
    """
    from rfcheck.arb_backend import bits_for_dps

    dps = max(1, math.floor((bits - 64) / math.log2(10)))
    while bits_for_dps(dps) < bits:
        dps += 1
    if bits_for_dps(dps) != bits:
        raise ValueError(f"{bits} bits is not the working precision of any dps")
    return dps


def certify_on_draws(ev: PointEval, budget: Budget, sides: Callable[[Any], Any],
                     tol: float | None = None) -> PointEval:
    """Certify a same-draws point: two estimators compared on the same float64 draws.

    ``sides(ctx) -> (printed, reference)`` is evaluated on balls (the draws, floats, are exact balls);
    the point is certified when the balls are equal within the check's absolute tolerance ``tol``
    (default ``ev.err``), or disjoint.  ``sides`` may return a list of such pairs, one per replicate
    the point's verdict covers: a HOLDS is certified when every pair is equal within ``tol``, a REFUTED
    when some pair is disjoint.  A sign on the draws that the balls leave undecided
    (``UndecidableError``) leaves the point uncertified, saying so.

    Parameters
    ----------
    ev : PointEval
        The point's evaluation (undecided points are returned as they are).
    budget : Budget
        The run's budget; the balls are computed at the bits of its ``dps``.
    sides : callable
        ``sides(ctx)``: a pair of numbers of ``ctx``, or a list of pairs.
    tol : float, optional
        The absolute tolerance (default ``ev.err``).

    Returns
    -------
    PointEval
        ``ev``, marked ``certified`` (or not, with the reason) in its ``extra``.

    Examples
    --------
    >>> from rfcheck.claims import BUDGETS
    >>> from rfcheck.stats import compare_deterministic
    >>> ev = compare_deterministic({}, 0.5, 0.5, 0, rtol=0, atol=1e-15)
    >>> third = lambda ctx: ctx.num(1) / 3
    >>> certify_on_draws(ev, BUDGETS["smoke"], lambda ctx: [(third(ctx), third(ctx))] * 4, tol=1e-15).extra
    {'certified': True}
    """
    from rfcheck.arb_backend import UndecidableError, bits_for_dps
    from rfcheck.certify import certified_all, certified_equal

    if not ev.decided:
        return ev
    atol = float(ev.err if tol is None else tol)
    try:
        got = on_balls(sides, bits=bits_for_dps(budget.dps))
    except UndecidableError as exc:
        return certify_eval(ev, None, f"a sign on the draws is not decided by the balls ({exc})")
    if not isinstance(got, list):
        pb, rb = got
        return certify_equal(ev, pb, rb, 0.0, atol)
    verdict = certified_all([certified_equal(pb, rb, 0.0, atol=atol) for pb, rb in got])
    return certify_eval(ev, verdict, "the balls of a replicate overlap but are wider than the tolerance")

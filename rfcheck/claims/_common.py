"""Building blocks shared by the claim modules: pair domains, pair statistics at a point,
and the three kinds of check (deterministic equality, inequality, Monte Carlo)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

from rfcheck.backends import MP
from rfcheck.claims import Budget, Check, mpmath_rtol, recheck_rounding
from rfcheck.domains import Domain, Int, Real
from rfcheck.stats import PointEval, compare_deterministic, compare_inequality

__all__ = [
    "certify_equal",
    "certify_eval",
    "certify_with_balls",
    "deterministic_check",
    "eval_on_balls",
    "inequality_check",
    "mp_point",
    "not_certifiable",
    "on_mp",
    "pair_domain",
    "pair_vectors",
    "raw_number",
    "raw_point",
    "stats_fp",
    "stats_mp",
]


def _snap_d1(p: dict[str, Any]) -> dict[str, Any]:
    """In d = 1 two vectors are parallel or anti-parallel: snap the angle to 0 or pi."""
    if p.get("d") == 1 and "theta" in p:
        p["theta"] = 0.0 if p["theta"] < math.pi / 2 else math.pi
    return p


def pair_domain(
    d: tuple[int, int] = (1, 128), norm: tuple[float, float] = (0.0, 4.0), extra: dict[str, Any] | None = None,
    constraint: Callable[[dict[str, Any]], bool] | None = None,
    derive: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    description: str = "", fixed_points: list[dict[str, Any]] | None = None,
) -> Domain:
    """Pairs ``x = nx e1``, ``y = ny (cos theta e1 + sin theta e2)`` in R^d, plus ``extra`` params.

    The norms' grid includes 0 and the top of the range; theta covers [0, pi] (parallel,
    orthogonal and anti-parallel pairs); d = 1 snaps theta to 0 or pi.

    Parameters
    ----------
    d : (int, int), default (1, 128)
        The range of the dimension (its grid adds 1, 2, 3 and 64 where they lie inside).
    norm : (float, float), default (0.0, 4.0)
        The range of both norms ``nx`` and ``ny``.
    extra : dict of str to Int or Real or Choice, optional
        Further parameters of the claim, by name (they may replace the four above).
    constraint : callable, optional
        ``constraint(point) -> bool``: points where it is False are outside the domain.
    derive : callable, optional
        ``derive(point) -> point``, applied after the ``d = 1`` snap (completes or snaps a point).
    description : str, default ""
        The domain as stated, for reports.
    fixed_points : list of dict, optional
        Points always tried (a paper's own examples).

    Returns
    -------
    Domain
        The parameters ``d``, ``nx``, ``ny``, ``theta`` and those of ``extra``.

    Examples
    --------
    >>> dom = pair_domain(d=(1, 8), norm=(0.0, 2.0))
    >>> sorted(dom.params)
    ['d', 'nx', 'ny', 'theta']
    >>> dom.derive({"d": 1, "nx": 1.0, "ny": 1.0, "theta": 3.0})["theta"] == math.pi
    True
    """
    params: dict[str, Any] = {
        "d": Int(d[0], d[1], extra=tuple(v for v in (1, 2, 3, 64) if d[0] <= v <= d[1])),
        "nx": Real(norm[0], norm[1]),
        "ny": Real(norm[0], norm[1]),
        "theta": Real(0.0, math.pi, extra=(math.pi / 2,)),
    }
    params.update(extra or {})

    def full_derive(p: dict[str, Any]) -> dict[str, Any]:
        p = _snap_d1(p)
        return derive(p) if derive else p

    return Domain(params, constraint, full_derive, description, fixed_points or [])


def stats_mp(p: dict[str, Any]) -> dict[str, Any]:
    """``sq_x, sq_y, sq_sum, sq_diff`` at the current mpmath precision, without cancellation.

    ``|x - y|^2 = (nx - ny)^2 + 4 nx ny sin^2(theta/2)``, ``|x + y|^2 = (nx - ny)^2 +
    4 nx ny cos^2(theta/2)``.

    Parameters
    ----------
    p : dict
        A point of :func:`pair_domain` (``d``, ``nx``, ``ny``, ``theta``).

    Returns
    -------
    dict
        ``sq_x = |x|^2``, ``sq_y = |y|^2``, ``sq_sum = |x + y|^2``, ``sq_diff = |x - y|^2``
        (mpmath numbers) and ``d`` (int).

    Examples
    --------
    Anti-parallel unit vectors: ``|x + y|^2`` is 0 up to the working precision, ``|x - y|^2 = 4``:

    >>> with mpmath.workdps(30):
    ...     st = stats_mp({"d": 2, "nx": 1.0, "ny": 1.0, "theta": math.pi})
    >>> bool(st["sq_sum"] < 1e-30), st["sq_diff"] == 4
    (True, True)
    """
    nx, ny, th = mpmath.mpf(p["nx"]), mpmath.mpf(p["ny"]), mpmath.mpf(p["theta"])
    return {
        "sq_x": nx**2,
        "sq_y": ny**2,
        "sq_sum": (nx - ny) ** 2 + 4 * nx * ny * mpmath.cos(th / 2) ** 2,
        "sq_diff": (nx - ny) ** 2 + 4 * nx * ny * mpmath.sin(th / 2) ** 2,
        "d": int(p["d"]),
    }


def stats_fp(p: dict[str, Any]) -> dict[str, Any]:
    """``sq_x, sq_y, sq_sum, sq_diff`` in float64: the twin of :func:`rfcheck.ledger.pair_stats`
    (the same cancellation-free formulas), for float64 references and Monte Carlo set-ups.

    Parameters
    ----------
    p : dict
        A point of :func:`rfcheck.ledger.pair_domain` (``d``, ``nx``, ``ny``, ``theta``).

    Returns
    -------
    dict
        ``sq_x = |x|^2``, ``sq_y = |y|^2``, ``sq_sum = |x + y|^2``, ``sq_diff = |x - y|^2``
        (floats) and ``d`` (int).

    Examples
    --------
    Orthogonal vectors of norms 3 and 4: ``|x + y|^2 = |x - y|^2 = 25`` (to rounding):

    >>> st = stats_fp({"d": 2, "nx": 3.0, "ny": 4.0, "theta": math.pi / 2})
    >>> st["sq_x"], st["sq_y"], round(st["sq_sum"], 12), round(st["sq_diff"], 12), st["d"]
    (9.0, 16.0, 25.0, 25.0, 2)
    """
    nx, ny, th = float(p["nx"]), float(p["ny"]), float(p["theta"])
    return {
        "sq_x": nx**2,
        "sq_y": ny**2,
        "sq_sum": (nx - ny) ** 2 + 4 * nx * ny * math.cos(th / 2) ** 2,
        "sq_diff": (nx - ny) ** 2 + 4 * nx * ny * math.sin(th / 2) ** 2,
        "d": int(p["d"]),
    }


def pair_vectors(p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The vectors ``x, y`` (float64, shape (1, d)) of a pair point.

    Parameters
    ----------
    p : dict
        A point of :func:`pair_domain`: ``x = nx e1``, ``y = ny (cos theta e1 + sin theta e2)``.

    Returns
    -------
    x, y : numpy.ndarray, shape (1, d)
        The two vectors, one row each (the pair layout of the engines).

    Examples
    --------
    >>> x, y = pair_vectors({"d": 3, "nx": 2.0, "ny": 1.0, "theta": math.pi / 2})
    >>> x.tolist(), y.shape, float(y[0, 1])
    ([[2.0, 0.0, 0.0]], (1, 3), 1.0)
    """
    d = int(p["d"])
    x = np.zeros((1, d))
    y = np.zeros((1, d))
    x[0, 0] = p["nx"]
    y[0, 0] = p["ny"] * math.cos(p["theta"])
    if d > 1:
        y[0, 1] = p["ny"] * math.sin(p["theta"])
    return x, y


def mp_point(p: dict[str, Any]) -> dict[str, Any]:
    """The point with its floats as mpmath numbers (integers and strings unchanged), so that a
    printed formula's arithmetic runs at the working precision, not in float64.

    Parameters
    ----------
    p : dict
        A point (parameter name -> value).

    Returns
    -------
    dict
        The same keys; floats as ``mpmath.mpf``, complex numbers as ``mpmath.mpc``.

    Examples
    --------
    >>> q = mp_point({"d": 2, "nx": 0.5, "mech": "trig"})
    >>> q["d"], q["nx"] == mpmath.mpf(0.5), type(q["nx"]).__name__, q["mech"]
    (2, True, 'mpf', 'trig')
    """
    return {k: mpmath.mpf(v) if isinstance(v, float) else mpmath.mpc(v) if isinstance(v, complex) else v
            for k, v in p.items()}


def on_mp(printed_ctx: Callable[[Any, dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """``printed_ctx(ctx, point)`` as ``printed(point)``: evaluated in mpmath at the working precision, the
    point's floats exact (:func:`mp_point`) -- the mpmath face of a transcription written against a context.

    Parameters
    ----------
    printed_ctx : callable
        ``printed_ctx(ctx, point)``, a formula written against a number-system context.

    Returns
    -------
    callable
        ``printed(point)``, its value in mpmath (the docstring of ``printed_ctx`` kept).

    Examples
    --------
    >>> f = on_mp(lambda ctx, p: ctx.exp(p["t"]) / 3)
    >>> with mpmath.workdps(30):  # the 30-digit value, not a float64 one
    ...     v, exact = f({"t": 0.5}), mpmath.exp(mpmath.mpf("0.5")) / 3
    >>> v == exact, v == mpmath.mpf(float(exact))
    (True, False)
    """

    def printed(p: dict[str, Any]) -> Any:
        return printed_ctx(MP, mp_point(p))

    printed.__doc__ = printed_ctx.__doc__
    return printed


def eval_on_balls(printed: Callable[[Any, dict[str, Any]], Any], p: dict[str, Any], bits: int) -> Any:
    """``printed(ARB, p)``: the printed formula as an Arb ball (the point's numbers exact), or
    None where the formula leaves ball arithmetic or a comparison on balls is undecidable.

    Parameters
    ----------
    printed : callable
        ``printed(ctx, point)``, the printed formula written against a number-system context
        (:mod:`rfcheck.backends`).
    p : dict
        The point; its ints, floats and complex numbers (not bools) become exact balls.
    bits : int
        The working precision in bits.

    Returns
    -------
    flint.arb or flint.acb or None
        The enclosure, or None (a ``NotImplementedError``, ``TypeError``, ``AttributeError`` or
        undecidable comparison inside ``printed``).

    Examples
    --------
    >>> import flint
    >>> b = eval_on_balls(lambda ctx, p: ctx.exp(p["t"]), {"t": 0.5}, 64)
    >>> bool(b.overlaps(flint.arb(0.5).exp())), bool(b.rad() < 1e-15)
    (True, True)
    """
    from rfcheck.arb_backend import ARB, Ball, UndecidableError, to_ball, workprec

    try:
        with workprec(bits):
            out = printed(ARB, {k: Ball(to_ball(v)) if isinstance(v, int | float | complex) and not isinstance(v, bool)
                                else v for k, v in p.items()})
        return out.v if isinstance(out, Ball) else to_ball(out)
    except (NotImplementedError, UndecidableError, TypeError, AttributeError):
        return None


def certify_eval(ev: PointEval, verdict: str | None, why: str) -> PointEval:
    """Mark a point evaluation ``certified`` when the balls decide it the same way (else say why not)."""
    decided = "REFUTED" if ev.decided and ev.disc > 1 else "HOLDS" if ev.decided else None
    ok = verdict is not None and verdict == decided
    ev.extra = {**(ev.extra or {}), "certified": ok,
                **({} if ok else {"not_certified": why if verdict is None else f"the balls say {verdict}"})}
    return ev


def not_certifiable(check: Check, why: str) -> Check:
    """``check`` with every decided point marked not certified, saying ``why`` (a reference
    without an enclosure: Monte Carlo, a float64 library routine, an optimiser's output).

    Parameters
    ----------
    check : Check
        The check; its ``evaluate`` is wrapped (the object is changed in place).
    why : str
        The reason stated in the ledger.

    Returns
    -------
    Check
        ``check`` itself; a point it already marked certified stays so.

    Examples
    --------
    >>> from rfcheck.claims import BUDGETS
    >>> def reference(p, dps):
    ...     with mpmath.workdps(dps):
    ...         return mpmath.exp(mpmath.mpf(p["t"])), 0
    >>> chk = not_certifiable(deterministic_check("closed-form", None, reference,
    ...                                           printed_ctx=lambda ctx, p: ctx.exp(p["t"])), "no enclosure")
    >>> ev = chk.evaluate({"t": 0.5}, BUDGETS["smoke"], 0)
    >>> ev.decided, ev.extra
    (True, {'certified': False, 'not_certified': 'no enclosure'})
    """
    inner = check.evaluate

    def evaluate(p: dict[str, Any], budget: Budget, seed: int) -> PointEval:
        ev = inner(p, budget, seed)
        if ev.decided and not (ev.extra or {}).get("certified"):
            ev.extra = {**(ev.extra or {}), "certified": False, "not_certified": why}
        return ev

    check.evaluate = evaluate
    return check


def deterministic_check(
    name: str,
    printed: Callable[[dict[str, Any]], Any] | None,
    reference: Callable[[dict[str, Any], int], tuple[Any, Any]],
    *, atol_scale: Callable[[dict[str, Any], int], Any] | None = None,
    max_points: int | None = None, description: str = "",
    printed_ctx: Callable[[Any, dict[str, Any]], Any] | None = None,
    printed_ball: Callable[[dict[str, Any], int], Any] | None = None,
    reference_ball: Callable[[dict[str, Any], int], Any] | None = None,
    not_certified: str | None = None, reference_ball_is_lower_bound: bool = False,
) -> Check:
    """Equality of ``printed(point)`` (evaluated in mpmath) with ``reference(point, dps)``.

    ``reference`` returns ``(value, abs_err)``.  The printed side is evaluated at the
    budget's ``dps``; its rounding enters as ``rtol = 10^(5 - dps)``.  ``atol_scale`` gives
    a magnitude for absolute tolerance where the value itself may vanish (a variance that
    is exactly 0 at some point is compared on the scale of the second moment).

    ``printed_ctx(ctx, point)``: the printed formula written against a number-system context
    (as :meth:`rfcheck.ledger.Paper.equality`); it replaces ``printed`` (pass ``None``),
    evaluated in mpmath on the point's floats as mpmath numbers.  ``printed_ball(point, bits)``:
    for a printed side not written against a context, its Arb enclosure (default: ``printed_ctx``
    evaluated on balls).  With ``reference_ball(point, bits)`` -- a rigorous enclosure of the
    reference (a ``flint.arb``/``acb``), or a string saying why there is none at this point --
    each decided point is marked ``certified`` when the balls decide it the same way, with the
    same tolerance (:func:`certify_with_balls`, the one certification step of every equality
    check).  ``not_certified``: why the decided points cannot be certified (no enclosure of the
    reference), stated in the ledger.  With ``reference_ball_is_lower_bound`` the ball encloses
    a lower bound of the reference (a maximum's value at one exact argument): a printed ball
    below it certifies a refutation, nothing else is certified.

    Parameters
    ----------
    name : str
        The check's name in reports.
    printed : callable or None
        ``printed(point)``, the printed side evaluated in mpmath (None with ``printed_ctx``).
    reference : callable
        ``reference(point, dps) -> (value, abs_err)``, an independent computation.
    atol_scale : callable, optional
        ``atol_scale(point, dps)``: the magnitude of the absolute tolerance
        ``|atol_scale| 10^(5 - dps)``.
    max_points : int, optional
        At most this many points per run (default: the budget's).
    description : str, default ""
        How the reference is computed, for reports.
    printed_ctx : callable, optional
        ``printed_ctx(ctx, point)``: the printed side written against a context.
    printed_ball : callable, optional
        ``printed_ball(point, bits)``: the printed side's Arb enclosure.
    reference_ball : callable, optional
        ``reference_ball(point, bits)``: the reference's Arb enclosure, or a string saying why
        there is none.
    not_certified : str, optional
        Why the decided points cannot be certified.
    reference_ball_is_lower_bound : bool, default False
        The reference ball encloses a lower bound of the reference.

    Returns
    -------
    Check
        A strength-1 check the optimiser may search with (``search=True``).

    Raises
    ------
    ValueError
        If neither ``printed`` nor ``printed_ctx`` is given.

    Examples
    --------
    >>> import flint
    >>> from rfcheck.claims import BUDGETS
    >>> def reference(p, dps):
    ...     with mpmath.workdps(dps):
    ...         return mpmath.exp(mpmath.mpf(p["t"])), 0
    >>> chk = deterministic_check("closed-form", None, reference, printed_ctx=lambda ctx, p: ctx.exp(p["t"]),
    ...                           reference_ball=lambda p, bits: flint.arb(p["t"]).exp())
    >>> ev = chk.evaluate({"t": 0.5}, BUDGETS["smoke"], 0)
    >>> ev.decided, ev.disc <= 1, ev.extra
    (True, True, {'certified': True})
    """
    if printed is None and printed_ctx is None:
        raise ValueError(f"check {name!r}: give printed or printed_ctx")

    def printed_at(p: dict[str, Any], prec: int) -> Any:
        with mpmath.workdps(prec):
            return printed_ctx(MP, mp_point(p)) if printed_ctx is not None else printed(p)  # type: ignore[misc]

    def evaluate(p: dict[str, Any], budget: Budget, seed: int) -> PointEval:
        dps = budget.dps
        ref, err = reference(p, dps)
        with mpmath.workdps(dps):
            pv = printed_at(p, dps)
            scale = abs(atol_scale(p, dps)) if atol_scale else 0
            rtol = mpmath_rtol(dps)
            atol = scale * mpmath.mpf(10) ** (5 - dps)

            def compare(v: Any) -> PointEval:
                return compare_deterministic(p, v, ref, err, rtol=rtol, atol=atol, scale=scale)

            ev = recheck_rounding(compare(pv), pv, lambda prec: printed_at(p, prec), compare, dps,
                                  10 * abs(err) + rtol * abs(ref) + atol)
        if not ev.decided:
            return ev
        if reference_ball is None or (printed_ball is None and printed_ctx is None):
            if not_certified:
                ev.extra = {**(ev.extra or {}), "certified": False, "not_certified": not_certified}
            return ev
        with mpmath.workdps(dps):
            atol = float(scale * mpmath.mpf(10) ** (5 - dps))
        return certify_with_balls(ev, p, dps, printed_ball or _ctx_ball(printed_ctx), reference_ball,  # type: ignore[arg-type]
                                  rtol=rtol, atol=atol, reference_is_lower_bound=reference_ball_is_lower_bound)

    return Check(name, 1, evaluate, search=True, max_points=max_points, description=description)


def _ctx_ball(printed_ctx: Callable[[Any, dict[str, Any]], Any]) -> Callable[[dict[str, Any], int], Any]:
    """The ball function of a printed formula written against a context (``None``: it leaves
    ball arithmetic, said as such)."""
    def ball(p: dict[str, Any], bits: int) -> Any:
        out = eval_on_balls(printed_ctx, p, bits)
        return "the printed formula leaves ball arithmetic" if out is None else out
    return ball


def certify_equal(ev: PointEval, printed_ball: Any, reference_ball: Any, rtol: float, atol: float = 0.0, *,
                  reference_is_lower_bound: bool = False) -> PointEval:
    """Mark a decided point of an equality ``printed == reference`` certified when Arb balls of
    both sides decide it the same way, else record why not; the one certification step of every
    equality check (:func:`deterministic_check`, :func:`rfcheck.ledger.check_equal`, bespoke checks).

    Parameters
    ----------
    ev : PointEval
        The point's evaluation (``disc > 1``: a refutation).
    printed_ball, reference_ball : flint.arb or flint.acb or str or None
        Enclosures of the two sides; a string says why a side has none at this point, ``None``
        that it has none.  A real ball beside a complex one is compared as complex.
    rtol, atol : float
        The check's tolerance: agreement is certified when the difference ball lies within
        ``rtol |reference| + atol`` (:func:`rfcheck.certify.certified_equal`); disjoint balls
        certify a refutation.
    reference_is_lower_bound : bool, optional
        The reference ball encloses a lower bound of the reference (a maximum's value at one
        exact argument): a printed ball below it certifies a refutation, nothing else.

    Returns
    -------
    PointEval
        ``ev``, its ``extra`` carrying ``certified`` and, if not, ``not_certified``.
    """
    from rfcheck.certify import certified_equal, certified_inequality

    for side in (printed_ball, reference_ball):
        if side is None or isinstance(side, str):
            return certify_eval(ev, None, side or "a side has no ball (Arb) enclosure")
    if reference_is_lower_bound:
        below = certified_inequality(reference_ball, printed_ball) == "REFUTED"  # printed < lower bound <= reference
        return certify_eval(ev, "REFUTED" if below else None,
                            "the reference ball is a lower bound of a maximum: it certifies a printed value "
                            "below it only")
    return certify_eval(ev, certified_equal(printed_ball, reference_ball, rtol, atol=atol),
                        "the balls overlap but are wider than the tolerance")


def certify_with_balls(ev: PointEval, p: dict[str, Any], dps: int,
                       printed_ball: Callable[[dict[str, Any], int], Any],
                       reference_ball: Callable[[dict[str, Any], int], Any], *, rtol: float, atol: float = 0.0,
                       reference_is_lower_bound: bool = False) -> PointEval:
    """:func:`certify_equal` with the balls computed here: ``printed_ball(point, bits)`` and
    ``reference_ball(point, bits)`` at the working precision matching ``dps`` digits
    (:func:`rfcheck.arb_backend.bits_for_dps`).  A ball function raising ``NotImplementedError``,
    ``ValueError`` or an undecidable comparison leaves the point uncertified, with the reason.

    Parameters
    ----------
    ev : PointEval
        The point's evaluation.
    p : dict
        The point (each ball function gets a copy).
    dps : int
        The decimal digits of the check; the balls use :func:`rfcheck.arb_backend.bits_for_dps`
        bits.
    printed_ball, reference_ball : callable
        ``f(point, bits)``: an Arb enclosure of the side, or a string saying why there is none
        (the reference ball is not computed when the printed one is missing).
    rtol, atol : float
        The check's tolerance (:func:`certify_equal`).
    reference_is_lower_bound : bool, default False
        The reference ball encloses a lower bound of the reference.

    Returns
    -------
    PointEval
        ``ev``, its ``extra`` carrying ``certified`` and, if not, ``not_certified``.

    Examples
    --------
    >>> import flint
    >>> from rfcheck.stats import PointEval
    >>> ev = PointEval({"t": 0.5}, 1.6487212707001282, 1.6487212707001282, 0.0, 0.0)
    >>> exp_ball = lambda p, bits: flint.arb(p["t"]).exp()
    >>> certify_with_balls(ev, {"t": 0.5}, 20, exp_ball, exp_ball, rtol=1e-15).extra
    {'certified': True}
    >>> certify_with_balls(ev, {"t": 0.5}, 20, lambda p, bits: "no enclosure", exp_ball, rtol=1e-15).extra
    {'certified': False, 'not_certified': 'no enclosure'}
    """
    from rfcheck.arb_backend import UndecidableError, bits_for_dps, workprec

    bits = bits_for_dps(dps)
    try:
        with workprec(bits):
            pb = printed_ball(dict(p), bits)
            rb = None if isinstance(pb, str) else reference_ball(dict(p), bits)
    except (NotImplementedError, UndecidableError, ValueError) as exc:
        return certify_eval(ev, None, f"no ball at this point ({type(exc).__name__}: {exc})")
    return certify_equal(ev, pb, rb if rb is not None else "", rtol, atol,
                         reference_is_lower_bound=reference_is_lower_bound)


def inequality_check(
    name: str,
    lhs_rhs: Callable[[dict[str, Any], int], tuple[Any, Any, Any]],
    *, strength: int = 1, max_points: int | None = None, search: bool = True, description: str = "",
    sides_ball: Callable[[dict[str, Any], int], Any] | None = None, not_certified: str | None = None,
    lhs_ball_is_lower_bound: bool = False, rhs_ball_is_lower_bound: bool = False,
) -> Check:
    """A claimed ``lhs <= rhs`` where ``lhs_rhs(point, dps) -> (lhs, rhs, err)``.

    ``sides_ball(point, bits) -> (lhs, rhs)``: balls enclosing the two sides (or a string saying
    why there are none at this point); each decided point is then marked ``certified`` when the
    violation ball ``lhs - rhs`` decides it the same way (:func:`rfcheck.certify.certified_inequality`:
    above 0 for a refutation).  With ``lhs_ball_is_lower_bound`` the lhs ball encloses a lower
    bound of the lhs (a maximum's value at one exact argument): it certifies ``max <= rhs``
    violated, never that it holds.  With ``rhs_ball_is_lower_bound`` the rhs ball encloses a lower
    bound of the rhs (e.g. a maximum's value at one argument): it certifies ``lhs <= rhs``, never a
    violation.  ``not_certified``: why the decided points cannot be certified, stated in the ledger.

    Parameters
    ----------
    name : str
        The check's name in reports.
    lhs_rhs : callable
        ``lhs_rhs(point, dps) -> (lhs, rhs, err)``; ``err`` bounds the error of ``lhs - rhs``.
    strength : int, default 1
        1 deterministic high-precision, 2 symbolic, 3 Monte Carlo.
    max_points : int, optional
        At most this many points per run (default: the budget's).
    search : bool, default True
        Whether the optimiser may climb the violation with this check.
    description : str, default ""
        How the two sides are computed, for reports.
    sides_ball : callable, optional
        ``sides_ball(point, bits) -> (lhs, rhs)`` balls, or a string saying why there are none.
    not_certified : str, optional
        Why the decided points cannot be certified.
    lhs_ball_is_lower_bound : bool, default False
        The lhs ball encloses a lower bound of the lhs.
    rhs_ball_is_lower_bound : bool, default False
        The rhs ball encloses a lower bound of the rhs.

    Returns
    -------
    Check
        The check (its points' values are labelled ``rhs`` and ``lhs`` in reports).

    Examples
    --------
    ``sin t <= t``, certified by balls:

    >>> import flint
    >>> from rfcheck.claims import BUDGETS
    >>> chk = inequality_check("bound", lambda p, dps: (mpmath.sin(p["t"]), mpmath.mpf(p["t"]), 0),
    ...                        sides_ball=lambda p, bits: (flint.arb(p["t"]).sin(), flint.arb(p["t"])))
    >>> ev = chk.evaluate({"t": 0.5}, BUDGETS["smoke"], 0)
    >>> ev.decided, ev.disc < 1, ev.extra
    (True, True, {'certified': True})
    """

    def evaluate(p: dict[str, Any], budget: Budget, seed: int) -> PointEval:
        lhs, rhs, err = lhs_rhs(p, budget.dps)
        ev = compare_inequality(p, lhs, rhs, err, rtol=budget.rtol)
        if not ev.decided:
            return ev
        if sides_ball is None:
            if not_certified:
                ev.extra = {**(ev.extra or {}), "certified": False, "not_certified": not_certified}
            return ev
        if lhs_ball_is_lower_bound and not ev.disc > 1:  # nothing to certify: skip the (costly) balls
            return certify_eval(ev, None, "the lhs ball is a lower bound of a maximum: it certifies violations only")
        if rhs_ball_is_lower_bound and ev.disc > 1:  # nothing to certify: skip the (costly) balls
            return certify_eval(ev, None, "the rhs ball is a lower bound of the right side: it certifies the "
                                          "bound holding only")
        from rfcheck.arb_backend import bits_for_dps
        from rfcheck.certify import certified_inequality

        sides = sides_ball(dict(p), bits_for_dps(budget.dps))
        if isinstance(sides, str):
            return certify_eval(ev, None, sides)
        verdict = certified_inequality(*sides)
        if lhs_ball_is_lower_bound and verdict == "HOLDS":
            return certify_eval(ev, None, "the lhs ball is a lower bound of a maximum: it certifies violations only")
        if rhs_ball_is_lower_bound and verdict == "REFUTED":
            return certify_eval(ev, None, "the rhs ball is a lower bound of the right side: it certifies the "
                                          "bound holding only")
        return certify_eval(ev, verdict, "the balls of the two sides overlap")

    return Check(name, strength, evaluate, search=search, max_points=max_points, description=description,
                 labels=("rhs", "lhs"))


def mc_check(
    name: str,
    printed: Callable[[dict[str, Any]], Any],
    simulate_point: Callable[[dict[str, Any], int, int], tuple[np.ndarray, float, tuple[float, float] | None]],
    *, description: str = "", domain: Domain | None = None,
) -> Check:
    """A printed variance/MSE against a Monte Carlo estimate from the Numba engine.

    ``simulate_point(point, n_trials, seed) -> (estimates, target, exact_moments)``; the
    MSE of the estimates about the (exactly known) target kernel value is compared with
    ``printed(point)`` by a z-test at family-wise level ``budget.alpha`` over the check's
    points (Bonferroni).  ``exact_moments`` (``E e``, ``E e^2`` of ``e = (K_hat - K)^2``)
    gives the exact standard error; otherwise the sample SE is used only when the tail
    diagnostic trusts it.

    Parameters
    ----------
    name : str
        The check's name in reports.
    printed : callable
        ``printed(point)``: the printed variance or MSE (evaluated at 30 digits, then float64).
    simulate_point : callable
        ``simulate_point(point, n_trials, seed) -> (estimates, target, exact_moments)``.
    description : str, default ""
        How the estimates are simulated, for reports.
    domain : Domain, optional
        A sub-domain where the Monte Carlo reference has power (default: the claim's).

    Returns
    -------
    Check
        A strength-3 check, not used by the optimiser (``search=False``).

    Examples
    --------
    Estimates ``1 + 0.1 N(0, 1)`` of the target 1 have MSE 0.01: the printed 0.01 agrees, 0.02
    does not (``disc > 1``):

    >>> import numpy as np
    >>> from rfcheck.claims import BUDGETS
    >>> def simulate_point(p, n, seed):
    ...     return 1.0 + 0.1 * np.random.default_rng(seed).standard_normal(n), 1.0, None
    >>> [mc_check("monte-carlo", lambda p: v, simulate_point).evaluate({}, BUDGETS["smoke"], 0).disc > 1
    ...  for v in (0.01, 0.02)]
    [False, True]
    """
    from rfcheck.stats import compare_mc, estimate_mse, z_critical

    def evaluate(p: dict[str, Any], budget: Budget, seed: int) -> PointEval:
        with mpmath.workdps(30):
            pv = float(mpmath.re(printed(p)))
        if not math.isfinite(pv):
            return PointEval(p, pv, None, math.inf, math.nan, False, "printed value outside float64")
        est_samples, target, exact = simulate_point(p, budget.mc_trials, seed)
        est = estimate_mse(est_samples, target, exact_moments=exact)
        # float64 rounding of the simulated estimates (relative 1e-13 of the target, squared)
        atol = (1e-13 * max(abs(target), 1e-300)) ** 2 * 1e4
        return compare_mc(p, pv, est, z_crit=z_critical(budget.alpha, budget.mc_points), atol=atol)

    return Check(name, 3, evaluate, search=False, description=description, domain=domain)


def raw_number(v: Any) -> Any:
    """The Python number a point coordinate was lifted from: the inverse of :func:`mp_point` and of the exact
    balls of :func:`eval_on_balls`, so that data a printed formula generates from the point (seeded float64
    sets, random matrices) are the very floats of the float point, whatever the context.

    Parameters
    ----------
    v : object
        A coordinate: an exact ball (``rfcheck.arb_backend.Ball``), an mpmath number, or anything else.

    Returns
    -------
    object
        ``float`` (a real ball or ``mpf``), ``complex`` (a complex ball or ``mpc``), else ``v`` unchanged.

    Raises
    ------
    ValueError
        If a ball is not exact (it was not lifted from a float).

    Examples
    --------
    >>> from rfcheck.arb_backend import Ball, to_ball
    >>> raw_number(Ball(to_ball(0.1))), raw_number(mpmath.mpc(1, 2)), raw_number(mpmath.mpf(0.1)), raw_number("x")
    (0.1, (1+2j), 0.1, 'x')
    """
    from flint import acb

    from rfcheck.arb_backend import Ball

    if isinstance(v, Ball):
        if not v.v.is_exact():
            raise ValueError("a point coordinate is not an exact ball")
        v = v.v
        return complex(float(v.real.mid()), float(v.imag.mid())) if isinstance(v, acb) else float(v.mid())
    if isinstance(v, mpmath.mpf):
        return float(v)
    if isinstance(v, mpmath.mpc):
        return complex(v)
    return v


def raw_point(p: dict[str, Any]) -> dict[str, Any]:
    """:func:`raw_number` of every coordinate of a point.

    Parameters
    ----------
    p : dict
        A point as a number-system context receives it (:func:`mp_point`, :func:`eval_on_balls`).

    Returns
    -------
    dict
        The same keys, each number the Python number it was lifted from.

    Examples
    --------
    >>> raw_point(mp_point({"d": 2, "t": 0.25, "mech": "trig"}))
    {'d': 2, 't': 0.25, 'mech': 'trig'}
    """
    return {k: raw_number(v) for k, v in p.items()}

"""Certified verdicts from Arb balls, and rigorous Arb references.

A deterministic check compares a *printed* value (a paper's formula, evaluated with
``backend="arb"``) with a *reference* (a correct closed form on balls, or one of the
references below).  Both are balls that contain their exact values, so

* the balls **decide** a refutation: if they are disjoint, the exact values differ
  (:func:`certified_equal` returns ``"REFUTED"``); for a claimed inequality ``lhs <= rhs``,
  a violation ``lhs - rhs`` whose ball lies above 0 refutes it
  (:func:`certified_inequality`);
* they **decide** agreement at a point only within a tolerance: ``"HOLDS"`` when every
  difference the balls allow is within ``rtol |reference| + atol``;
* otherwise (overlapping balls, too wide for the tolerance) the verdict is ``None``: not
  certified either way.  A ball made wider never turns ``None`` into a verdict.

References with rigorous error bounds:

* :func:`gaussian_expectation_1d`: ``E f(W)``, ``W ~ N(0, 1)``, by ``acb.integral`` on
  ``[-T, T]`` plus a proven bound on the Gaussian tails;
* :func:`gaussian_moment`: ``E W^n`` exactly;
* :func:`series_sum`: ``sum_k t_k`` with a proven remainder bound from a ratio bound;
* :func:`tight_ball`: a formula's Arb face, the precision raised until the ball is tight.

Inputs that are not balls are converted exactly (ints, floats: their binary value) or as
enclosures (decimal strings, e.g. ``"0.00778"`` as printed in a paper); mpmath numbers are
refused, since they are rounded values without an error bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import mpmath
import numpy as np
from flint import acb, arb

from rfcheck.arb_backend import Ball, bits_for_dps, to_ball, workprec

__all__ = [
    "Verdict",
    "certified_all",
    "certified_equal",
    "certified_inequality",
    "gaussian_expectation_1d",
    "gaussian_moment",
    "gaussian_tail_bound",
    "series_sum",
    "tight_ball",
]

#: a certified verdict: ``"REFUTED"``, ``"HOLDS"``, or ``None`` (the balls decide nothing)
Verdict = Literal["REFUTED", "HOLDS"] | None


def _balls(x: Any, y: Any, names: tuple[str, str], prec: int | None) -> tuple[int, list[arb | acb | str]]:
    """Exact balls of ``x, y`` (decimal strings kept for parsing) and the working precision
    of a comparison: ``prec``, or 64 bits above the widest midpoint (at least 128 + 64)."""
    out: list[arb | acb | str] = []
    for v, what in zip((x, y), names, strict=True):
        if isinstance(v, np.ndarray) and v.shape == ():
            v = v[()]
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, mpmath.mpf | mpmath.mpc):
            raise TypeError(f"{what}: an mpmath number is a rounded value without an error bound; "
                            "evaluate it with backend='arb' to get a ball")
        else:
            try:
                out.append(to_ball(v))
            except TypeError:
                raise TypeError(f"{what}: expected a ball (flint.arb/acb), an int, a float or a decimal "
                                f"string; got {type(v).__name__}") from None
    if prec is None:
        prec = max([128] + [int(b.bits()) for b in out if not isinstance(b, str)]) + 64
    return prec, out


def _parsed(b: arb | acb | str) -> arb | acb:
    return arb(b) if isinstance(b, str) else b


def certified_equal(
    printed: Any, reference: Any, rtol: float = 0.0, *, atol: float = 0.0, prec: int | None = None
) -> Verdict:
    """Certified verdict on ``printed == reference`` at one point.

    Parameters
    ----------
    printed, reference : flint.arb, flint.acb, Ball, int, float or str
        Balls containing the exact printed and reference values (numbers are exact, decimal
        strings are enclosed); a real ball beside a complex one is compared as complex.
    rtol, atol : float, optional
        Tolerance of ``"HOLDS"``: ``|printed - reference| <= rtol |reference| + atol``.
    prec : int, optional
        Working precision (bits) of the difference and of decimal strings; default 64 bits
        above the widest midpoint, and at least 192.

    Returns
    -------
    {"REFUTED", "HOLDS", None}
        ``"REFUTED"`` if the balls are disjoint (the exact values differ, however little:
        the tolerance does not apply to refutations); ``"HOLDS"`` if
        ``|p - r| <= rtol |r| + atol`` for **every** ``p`` in the printed ball and ``r`` in
        the reference ball (checked as the ball inequality ``|P - R| <= rtol |R| + atol``,
        decided only if it holds for all points); ``None`` otherwise.

    Notes
    -----
    With exact inputs ``p != r`` both verdicts can apply; disjointness wins, since the
    printed value is then provably not the reference value.  NaN balls (Arb's "any value")
    overlap everything and never satisfy the tolerance: ``None``.

    Raises
    ------
    ValueError
        If ``rtol`` or ``atol`` is negative (or NaN).
    TypeError
        If ``printed`` or ``reference`` is an mpmath number (a rounded value without an error
        bound) or of a type that is not a ball, a number or a decimal string.

    Examples
    --------
    >>> from flint import arb
    >>> certified_equal(1, "1.0000000001", rtol=1e-6)  # disjoint: refuted despite the tolerance
    'REFUTED'
    >>> certified_equal(arb("1 +/- 1e-20"), 1, rtol=1e-15)
    'HOLDS'
    >>> certified_equal(arb(1, 1), 1) is None
    True

    A real ball beside a complex one is compared as complex:

    >>> from flint import acb
    >>> certified_equal(acb(2, arb(0, 1e-30)), arb(2), rtol=1e-20), certified_equal(acb(2, 1), arb(2), rtol=1e-20)
    ('HOLDS', 'REFUTED')
    """
    if not (rtol >= 0 and atol >= 0):
        raise ValueError(f"rtol and atol must be >= 0; got rtol={rtol}, atol={atol}")
    bits, (p, r) = _balls(printed, reference, ("printed", "reference"), prec)
    with workprec(bits):
        p, r = _parsed(p), _parsed(r)
        if isinstance(p, acb) != isinstance(r, acb):  # a real ball beside a complex one: compared as complex
            p, r = acb(p), acb(r)
        if not p.overlaps(r):
            return "REFUTED"
        if abs(p - r) <= arb(rtol) * abs(r) + arb(atol):
            return "HOLDS"
    return None


def certified_all(verdicts: list[Verdict]) -> Verdict:
    """The certified verdict of a conjunction (a point that stands for several replicates, each
    decided on its own balls).

    Parameters
    ----------
    verdicts : list of {"REFUTED", "HOLDS", None}
        The replicates' certified verdicts.

    Returns
    -------
    {"REFUTED", "HOLDS", None}
        ``"REFUTED"`` if some replicate is refuted, ``"HOLDS"`` if every one holds, ``None``
        otherwise (and for an empty list).

    Examples
    --------
    >>> certified_all(["HOLDS", "REFUTED", None]), certified_all(["HOLDS", "HOLDS"]), certified_all(["HOLDS", None])
    ('REFUTED', 'HOLDS', None)
    """
    if "REFUTED" in verdicts:
        return "REFUTED"
    return "HOLDS" if verdicts and all(v == "HOLDS" for v in verdicts) else None


def certified_inequality(lhs: Any, rhs: Any, *, strict: bool = False, prec: int | None = None) -> Verdict:
    """Certified verdict on the claim ``lhs <= rhs`` (``lhs < rhs`` if ``strict``) at one point.

    Parameters
    ----------
    lhs, rhs : flint.arb, Ball, int, float or str
        Real balls containing the exact two sides.
    strict : bool, optional
        Claim ``lhs < rhs`` instead of ``lhs <= rhs``.
    prec : int, optional
        Working precision (bits), as in :func:`certified_equal`.

    Returns
    -------
    {"REFUTED", "HOLDS", None}
        With the violation ball ``V = lhs - rhs``: ``"REFUTED"`` if ``V > 0`` for every point
        (the ball excludes 0 and lies above it; for a strict claim also an exact ``V = 0``);
        ``"HOLDS"`` if ``V <= 0`` (strict: ``V < 0``) for every point; ``None`` if ``V``
        contains 0 (and is not exactly 0).

    Raises
    ------
    TypeError
        For complex balls (not ordered).
    """
    bits, (a, b) = _balls(lhs, rhs, ("lhs", "rhs"), prec)
    with workprec(bits):
        v = _parsed(a) - _parsed(b)
    if isinstance(v, acb):
        raise TypeError("an inequality needs real balls; got a complex one")
    if v > 0 or (strict and v.is_exact() and v.is_zero()):
        return "REFUTED"
    if (v < 0) if strict else (v <= 0):
        return "HOLDS"
    return None


def _prec(prec: int | None, dps: int | None) -> int:
    if prec is not None:
        return prec
    return bits_for_dps(dps) if dps is not None else 128


def gaussian_tail_bound(c: float, a: float, t: Any) -> arb:
    """Upper bound of ``|int_{|w| > T} f(w) phi(w) dw|`` given ``|f(w)| <= C exp(a |w|)``.

    ``phi`` is the standard normal density.  Since ``exp(a w) phi(w) = exp(a^2/2) phi(w - a)``,

        int_{|w|>T} C e^{a|w|} phi(w) dw = 2 C e^{a^2/2} int_{T-a}^inf phi = C e^{a^2/2} erfc((T - a)/sqrt 2).

    Parameters
    ----------
    c, a : float
        The growth bound (``C >= 0``, ``a >= 0``).
    t : float or flint.arb
        The truncation point ``T``.

    Returns
    -------
    flint.arb
        A ball whose upper end bounds the tail integral (evaluated at the working precision).
    """
    a_b, t_b = arb(a), to_ball(t)
    return arb(c) * (a_b * a_b / 2).exp() * ((t_b - a_b) / arb(2).sqrt()).erfc()


def gaussian_expectation_1d(
    f: Callable[[acb, bool], acb],
    *,
    growth: tuple[float, float],
    T: float | None = None,
    prec: int | None = None,
    dps: int | None = None,
    real: bool = True,
) -> arb | acb:
    """``E f(W) = int_R f(w) phi(w) dw``, ``W ~ N(0, 1)``, as a ball with a rigorous radius.

    The integral over ``[-T, T]`` is Arb's rigorous ``acb.integral`` (Gauss-Legendre with
    error bounds from analytic continuation); the tails contribute at most (see
    :func:`gaussian_tail_bound`)

        |int_{|w|>T} f phi| <= C e^{a^2/2} erfc((T - a)/sqrt 2)   (<= C e^{a^2/2} e^{-(T-a)^2/2} for T >= a)

    given the user's growth bound ``|f(w)| <= C exp(a |w|)`` for all real ``|w| > T``; that
    bound is added to the radius (of both the real and imaginary parts).

    Parameters
    ----------
    f : callable
        ``f(w, analytic) -> acb`` in ``acb.integral``'s convention: ``w`` is a complex ball;
        where ``analytic`` is true, ``f`` must return a non-finite ball unless it is analytic
        on ``w`` (entire functions -- polynomials, ``exp``, ``cos`` -- can ignore the flag;
        ``sqrt``, ``log``, ``abs`` cannot).
    growth : (float, float)
        ``(C, a)`` with ``|f(w)| <= C exp(a |w|)`` on the real line outside ``[-T, T]``: the
        caller's proof obligation, not checked.
    T : float, optional
        Truncation point; default ``a + sqrt(2 (log max(C, 1) + a^2/2 + (prec + 10) log 2))``,
        where the tail bound is below ``2^-(prec+10)``.
    prec, dps : int, optional
        Working precision in bits (default 128), or in digits.
    real : bool, optional
        Return the real part (an ``arb``; ``f`` real on the real line), else the ``acb``.

    Returns
    -------
    flint.arb or flint.acb
        A ball containing ``E f(W)``.

    Raises
    ------
    ValueError
        If ``growth`` is not ``(C, a)`` with finite ``C >= 0`` and ``a >= 0``, or the
        truncation point ``T`` (given or computed) is not ``> 0``; from
        :func:`rfcheck.arb_backend.bits_for_dps`, if ``dps`` (without ``prec``) is not an
        integer ``>= 1``.

    Examples
    --------
    >>> b = gaussian_expectation_1d(lambda w, analytic: w * w, growth=(1.0, 1.0))
    >>> b.contains(1), b.rad() < 1e-30
    (True, True)
    """
    c, a = (float(v) for v in growth)
    if not (c >= 0 and a >= 0 and math.isfinite(c) and math.isfinite(a)):
        raise ValueError(f"growth must be (C, a) with finite C >= 0 and a >= 0; got {growth}")
    bits = _prec(prec, dps)
    if T is None:
        T = a + math.sqrt(2 * (math.log(max(c, 1.0)) + a * a / 2 + (bits + 10) * math.log(2)))
    if not T > 0:
        raise ValueError(f"T must be > 0; got {T}")
    with workprec(bits):
        tb = arb(T)

        def integrand(w: acb, analytic: bool) -> acb:
            return f(w, analytic) * (-w * w / 2).exp()

        body = acb.integral(integrand, -tb, tb) / (2 * arb.pi()).sqrt()
        tail = arb(0, gaussian_tail_bound(c, a, tb).upper())
        out = acb(body.real + tail, body.imag + tail)
        return out.real if real else out


def gaussian_moment(n: int) -> arb:
    """``E W^n`` for ``W ~ N(0, 1)``, exactly: 0 for odd ``n``, ``(n - 1)!!`` for even ``n``.

    Parameters
    ----------
    n : int
        The order, ``n >= 0``.

    Returns
    -------
    flint.arb
        An exact ball (radius 0).

    Raises
    ------
    ValueError
        If ``n`` is not an integer (``int`` or NumPy integer) ``>= 0``.

    Examples
    --------
    >>> gaussian_moment(6) == 15, gaussian_moment(5) == 0, gaussian_moment(6).rad() == 0
    (True, True, True)
    """
    if not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n must be an integer >= 0; got {n!r}")
    n = int(n)
    if n % 2:
        return arb(0)
    return arb(math.prod(range(n - 1, 0, -2)))


def series_sum(
    term: Callable[[int], Any],
    ratio: Callable[[int], float],
    *,
    start: int = 0,
    prec: int | None = None,
    dps: int | None = None,
    rtol: float | None = None,
    max_terms: int = 100_000,
) -> arb | acb:
    """``sum_{k >= start} t_k`` as a ball, with a proven bound on the truncated remainder.

    If ``|t_{k+1}| <= q_N |t_k|`` for every ``k >= N`` with ``q_N < 1`` (``q_N = ratio(N)``, the
    caller's proof obligation), then

        |sum_{k >= N} t_k| <= |t_N| (1 + q_N + q_N^2 + ...) = |t_N| / (1 - q_N).

    Terms are summed until that bound falls below ``rtol`` times the partial sum (default
    ``2^-prec``), and it is added to the radius.

    Parameters
    ----------
    term : callable
        ``term(k)`` -> the ``k``-th term as a ball (or an exact number), at the working precision.
    ratio : callable
        ``ratio(N)`` -> ``q_N`` (a float or ball) bounding ``|t_{k+1}/t_k|`` for all ``k >= N``.
    start : int, optional
        First index.
    prec, dps : int, optional
        Working precision in bits (default 128) or digits.
    rtol : float, optional
        Target of the remainder relative to the partial sum.
    max_terms : int, optional
        ``ArithmeticError`` if the bound is not reached within this many terms.

    Returns
    -------
    flint.arb or flint.acb
        A ball containing the sum.
    """
    bits = _prec(prec, dps)
    with workprec(bits):
        tol = arb(2) ** -bits if rtol is None else arb(rtol)
        total = to_ball(term(start))
        for n in range(start + 1, start + max_terms):
            t = to_ball(term(n))
            q = to_ball(ratio(n))
            if q < 1:
                bound = abs(t) / (1 - q)
                if bound <= tol * abs(total):
                    e = arb(0, bound.upper())
                    return total + (acb(e, e) if isinstance(total, acb) else e)
            total = total + t
    raise ArithmeticError(f"series_sum: the remainder bound did not reach {tol} within {max_terms} terms")


def tight_ball(
    f: Callable[..., Any],
    *args: Any,
    rtol: float = 1e-30,
    prec: int = 128,
    max_prec: int = 16384,
    **kwargs: Any,
) -> arb | acb:
    """The Arb face of the formula ``f`` at ``args``, with the precision doubled until the
    ball's radius is at most ``rtol`` times its magnitude.

    Where a formula cancels, the radius grows with its conditioning at a fixed precision; this
    raises the precision as far as needed (as the mpmath face raises ``dps``).  An exact ball,
    or a ball of an infinite value, is tight.

    Parameters
    ----------
    f : formula
        A :func:`rfcheck.backends.formula` object.
    *args, **kwargs
        Its arguments.
    rtol : float, optional
        Target relative radius.
    prec, max_prec : int, optional
        First and largest working precision in bits.

    Returns
    -------
    flint.arb or flint.acb
        The first ball that is tight, or the one at ``max_prec`` (still a valid enclosure;
        e.g. a value that is exactly 0 but not computed exactly is never relatively tight).
    """
    bits = prec
    while True:
        out = f(*args, backend="arb", prec=bits, **kwargs)
        if _is_tight(out, rtol) or bits >= max_prec:
            return out
        bits = min(2 * bits, max_prec)


def _is_tight(x: arb | acb, rtol: float) -> bool:
    if isinstance(x, Ball):
        x = x.v
    if x.is_exact():
        return True
    parts = (x.real, x.imag) if isinstance(x, acb) else (x,)
    mag = abs(x).mid()
    return all(p.rad() <= rtol * abs(mag) for p in parts) and mag != 0

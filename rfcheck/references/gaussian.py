"""Gaussian and chi-law integrals: mpmath quadratures and rigorous Arb twins.

Generic numerical library code behind the proof-step checks of SimRF (and usable by any user
claim): one-dimensional expectations over the half line against a Gaussian weight
(``chi``-law moments and expectations, ``int_0^inf w^{2z-1} e^{-w^2/2} dw``), averages over the
uniform direction on the sphere, and the covariance ``E cos(w_12 . z)`` of an orthogonal pair of
Gaussian rows.

Each Arb function returns a ``flint.arb`` ball that **contains** the exact value: the integral
over a finite interval is Arb's rigorous ``acb.integral`` (Gauss-Legendre with error bounds from
analytic continuation), and the truncated Gaussian tail is added to the radius as a proven bound
(:func:`half_line_tail_bound`, the inequality stated there).  The caller's obligation is a growth
bound ``|f(w)| <= C e^{c w}`` on the tail, stated in each docstring where it is used.

References
----------
SimRF appendix A.1 (the polar-angle average, eq (31)-(33)), A.4 (eq (53) and the Gaussian
integral after it), A.5 (the chi_2d law, eq (57)-(58), footnote 4), A.8-A.9 (eq (74)-(78)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
from flint import acb, arb

from rfcheck.arb_backend import to_ball, workprec

__all__ = [
    "chi_expectation_ball",
    "chi_moment",
    "chi_moment_ball",
    "chi_pdf_ball",
    "gaussian_power_integral",
    "gaussian_power_integral_ball",
    "guarded_quad",
    "half_line_gaussian_integral_ball",
    "half_line_tail_bound",
    "integral_ball",
    "orthogonal_pair_cos_ball",
    "sphere_average_ball",
]

#: extra working bits tried, at most, when an integral loses digits to cancellation
MAX_EXTRA_BITS = 256


# ------------------------------------------------------------------------ mpmath quadratures


def guarded_quad(fn: Callable[[Any], Any], pts: Any) -> Any:
    """``mpmath.quad(fn, pts)`` at twice the working precision (+10 digits).

    Tanh-sinh stops when successive levels agree, which for a narrow peak leaves about half the
    digits (measured: 1e-13 relative at 30 digits, ``(sin phi)^{127}``); doubling the precision
    keeps the working precision's digits.

    Parameters
    ----------
    fn : callable
        The integrand (mpmath numbers in and out).
    pts : sequence or callable
        The break points, or ``() -> break points`` (evaluated at the raised precision).

    Returns
    -------
    mpmath.mpf
        The integral, rounded to the caller's working precision.

    References
    ----------
    SimRF appendix A.4-A.6, eq (53), (55), (57), (62): the printed integrals evaluated by quadrature.
    """
    with mpmath.workdps(2 * mpmath.mp.dps + 10):
        out = mpmath.quad(fn, pts() if callable(pts) else pts)
    return +out


def gaussian_power_integral(z: Any) -> Any:
    """``int_0^inf w^{2z-1} e^{-w^2/2} dw`` by tanh-sinh quadrature (mpmath, working precision).

    Parameters
    ----------
    z : float or mpmath.mpf
        The exponent parameter (> 0).

    Returns
    -------
    mpmath.mpf
        The integral (break point at the peak ``sqrt(2z - 1)``).

    References
    ----------
    SimRF appendix A.4, the sentence after eq (53).
    """
    z = mpmath.mpf(z)
    return mpmath.quad(
        lambda w: w ** (2 * z - 1) * mpmath.exp(-w * w / 2), [0, mpmath.sqrt(2 * z - 1) if z > 1 else 1, mpmath.inf]
    )


def chi_moment(k: int, dof: int) -> Any:
    """``E R^k`` for ``R ~ chi_dof`` by tanh-sinh quadrature of the density (mpmath).

    The density ``w^{dof-1} e^{-w^2/2} / (2^{dof/2-1} Gamma(dof/2))`` in log space (large ``dof``),
    break point at ``sqrt(dof)``.

    Parameters
    ----------
    k : int
        The moment's order (>= 0).
    dof : int
        Degrees of freedom (>= 1).

    Returns
    -------
    mpmath.mpf
        The moment at the working precision.

    References
    ----------
    SimRF sec 3.2 footnote 4 and appendix A.5, eq (58): ``w_ij ~ chi_2d`` for an orthogonal pair.
    """
    half = mpmath.mpf(dof) / 2
    return mpmath.quad(
        lambda w: w ** (dof - 1 + k) * mpmath.exp(-w * w / 2 - (half - 1) * mpmath.log(2) - mpmath.loggamma(half)),
        [0, mpmath.sqrt(dof), mpmath.inf],
    )


# ---------------------------------------------------------------------------- Arb integrals


def integral_ball(f: Callable[[acb, bool], acb], a: Any, b: Any, prec: int) -> acb:
    """``int_a^b f`` by Arb's rigorous ``acb.integral``, with a relative accuracy of ``2^-prec``.

    ``acb.integral``'s default absolute tolerance is ``2^-prec``; a small integral would keep
    only an absolute accuracy, so where the result's radius exceeds ``2^-prec`` of its magnitude
    the integral is repeated with the absolute tolerance scaled to the magnitude and, where
    digits cancel, more working bits (at most :data:`MAX_EXTRA_BITS`).

    Parameters
    ----------
    f : callable
        ``f(x, analytic) -> acb`` in ``acb.integral``'s convention (a non-finite ball where
        ``analytic`` is set and ``f`` is not analytic on ``x``).
    a, b : number or flint ball
        The end points.
    prec : int
        Target relative accuracy in bits.

    Returns
    -------
    flint.acb
        A ball containing the integral (its radius says how accurate it is).

    References
    ----------
    F. Johansson, "Numerical integration in arbitrary-precision ball arithmetic" (2018), the
    algorithm of ``acb_calc_integrate``.
    """
    extra, abs_tol = 0, None
    while True:
        with workprec(prec + 20 + extra):
            out = acb.integral(f, to_ball(a), to_ball(b), abs_tol=abs_tol)
            mag = abs(out).lower()
            rad = max(out.real.rad(), out.imag.rad())
            if (mag > 0 and rad <= mag * arb(2) ** (-prec)) or extra >= MAX_EXTRA_BITS:
                return out
            if mag > 0:
                abs_tol = arb(mag.mid()) * arb(2) ** (-prec - 10)
            extra += 32


def half_line_tail_bound(n: Any, s2: Any, c: Any, big_r: Any) -> arb:
    """An upper bound of ``int_R^inf w^n exp(-w^2/(2 s2) + c w) dw``.

    Proof: ``log x <= x - 1`` gives ``w^n = R^n exp(n log(w/R)) <= R^n e^{-n} e^{n w/R}`` for
    ``w >= R > 0``, ``n >= 0``; with ``c' = c + n/R`` the remaining integral is exact,
    ``int_R^inf exp(-w^2/(2 s2) + c' w) dw = e^{s2 c'^2/2} sqrt(pi s2/2) erfc((R - s2 c')/sqrt(2 s2))``.

    Parameters
    ----------
    n : number or flint.arb
        The power (>= 0, real).
    s2 : number or flint.arb
        The Gaussian's variance (> 0).
    c : number or flint.arb
        The exponential growth rate (>= 0).
    big_r : number or flint.arb
        The truncation point ``R`` (> 0).

    Returns
    -------
    flint.arb
        The bound (an upper end; the ball's upper end is the bound to use).

    References
    ----------
    The Gaussian tail integral ``int_x^inf e^{-t^2} dt = sqrt(pi)/2 erfc(x)`` (DLMF 7.2.2).
    """
    n, s2, c, big_r = (arb(to_ball(x)) for x in (n, s2, c, big_r))
    c2 = c + n / big_r
    lead = big_r**n * (-n).exp() if n != 0 else arb(1)
    return (
        lead
        * (s2 * c2 * c2 / 2).exp()
        * (arb.pi() * s2 / 2).sqrt()
        * ((big_r - s2 * c2) / (2 * s2).sqrt()).erfc()
    )


def _power(w: acb, n: Any, analytic: bool) -> acb:
    """``w^n`` (integer ``n``: exact powers, entire; else the principal branch, analytic off ``Re w <= 0``)."""
    if isinstance(n, int):
        return w**n
    if analytic and not w.real > 0:
        return acb("nan")
    return (to_ball(n) * w.log()).exp()


def half_line_gaussian_integral_ball(
    f: Callable[[acb, bool], acb],
    *,
    power: Any,
    s2: Any = 1,
    growth: tuple[Any, Any],
    log_scale: float,
    prec: int,
    peak: float | None = None,
) -> arb:
    """``int_0^inf w^power e^{-w^2/(2 s2)} f(w) dw`` as a real ball with a rigorous radius.

    ``acb.integral`` over ``[L, R]``; the two pieces left out are bounded and added to the radius:

    * ``[0, L]``, ``L <= sqrt(power s2)``: ``w^power e^{-w^2/(2 s2)}`` increases there, so the
      piece is at most ``C e^{c L} L^{power+1} e^{-L^2/(2 s2)}``;
    * ``[R, inf)``: at most ``C`` times :func:`half_line_tail_bound` ``(power, s2, c, R)``;

    given the growth bound ``|f(w)| <= C e^{c w}`` for real ``w >= 0``.  ``L`` and ``R`` are
    chosen so that both are below ``2^-(prec + 10)`` of ``exp(log_scale)``.

    Parameters
    ----------
    f : callable
        ``f(w, analytic) -> acb``, analytic near ``(0, inf)`` (``acb.integral``'s convention) and real
        on the real line.
    power : int or float
        The power of ``w`` (>= 0; a non-integer power takes the principal branch).
    s2 : number
        The Gaussian's variance.
    growth : (C, c)
        ``|f(w)| <= C e^{c w}`` for real ``w >= 0``: the caller's proof obligation (stated in the
        caller's docstring), not checked.
    log_scale : float
        A rough natural log of the integral's magnitude (sets where the pieces left out are negligible).
    prec : int
        Target relative accuracy in bits.
    peak : float, optional
        Where the integrand peaks (a starting point for ``R``).

    Returns
    -------
    flint.arb
        A ball containing the integral.

    References
    ----------
    SimRF appendix A.4 (eq (53) and the sentence after it), A.5 (footnote 4), A.9 (eq (78)).
    """
    big_c, c = growth
    pw = float(power)
    s2f = float(s2)
    cf = float(c)
    log_c = math.log(max(float(big_c), 1e-300))
    target = log_scale - (prec + 10) * math.log(2) - 5
    # R: the log of the float tail bound below target (the ball bound is what is added)
    r = max(1.0, peak or 0.0, s2f * cf) + 1.0
    while True:
        c2 = cf + pw / r
        x = (r - s2f * c2) / math.sqrt(2 * s2f)
        log_tail = (pw * math.log(r) - pw if pw else 0.0) + s2f * c2 * c2 / 2 + 0.5 * math.log(math.pi * s2f / 2)
        log_tail += -x * x - math.log(max(x, 1.0)) if x > 0 else 0.0
        if log_tail + log_c < target:
            break
        r *= 1.25
    # L: largest of a halving sequence below sqrt(power s2) whose head bound is below target
    low = 0.0
    if pw > 0:
        cand = math.sqrt(pw * s2f)
        for _ in range(4 * prec + 200):
            if log_c + cf * cand + (pw + 1) * math.log(cand) - cand * cand / (2 * s2f) < target:
                low = cand
                break
            cand /= 1.5
    with workprec(prec + 30):
        s2b = arb(to_ball(s2))
        tail = arb(to_ball(big_c)) * half_line_tail_bound(power, s2, c, r)
        head = arb(0)
        if low > 0:
            lb, pb = arb(low), arb(to_ball(power))
            head = arb(to_ball(big_c)) * (arb(to_ball(c)) * lb).exp() * lb ** (pb + 1) * (-(lb * lb) / (2 * s2b)).exp()

        def integrand(w: acb, analytic: bool) -> acb:
            return _power(w, power, analytic) * (-(w * w) / (2 * s2b)).exp() * f(w, analytic)

        body = integral_ball(integrand, low, r, prec)
        return body.real + arb(0, head.upper()) + arb(0, tail.upper())


def gaussian_power_integral_ball(z: Any, prec: int) -> arb:
    """``int_0^inf w^{2z-1} e^{-w^2/2} dw`` as a ball (rigorous quadrature, not the closed form).

    Parameters
    ----------
    z : number
        The exponent parameter (>= 1/2).
    prec : int
        Target relative accuracy in bits.

    Returns
    -------
    flint.arb
        A ball containing the integral (:func:`half_line_gaussian_integral_ball` with ``f = 1``:
        growth bound ``(1, 0)``).

    References
    ----------
    SimRF appendix A.4, the sentence after eq (53).
    """
    zf = float(z)
    n = 2 * z - 1
    power = int(n) if float(n) == int(n) else n
    log_scale = (zf - 1) * math.log(2) + math.lgamma(zf)
    return half_line_gaussian_integral_ball(
        lambda w, _a: acb(1), power=power, growth=(1, 0), log_scale=log_scale, prec=prec,
        peak=math.sqrt(max(2 * zf - 1, 0.0)),
    )


def chi_expectation_ball(
    f: Callable[[acb, bool], acb], dof: int, *, growth: tuple[Any, Any], log_scale: float, prec: int
) -> arb:
    """``E f(R)``, ``R ~ chi_dof``, as a ball: the density ``w^{dof-1} e^{-w^2/2}/(2^{dof/2-1} Gamma(dof/2))``
    integrated against ``f`` by :func:`half_line_gaussian_integral_ball`.

    Parameters
    ----------
    f : callable
        ``f(w, analytic) -> acb``, entire (or analytic near ``[0, inf)``), real on the real line.
    dof : int
        Degrees of freedom (>= 1).
    growth : (C, c)
        ``|f(w)| <= C e^{c w}`` for real ``w >= 0``: the caller's proof obligation.
    log_scale : float
        A rough natural log of ``|E f(R)|``.
    prec : int
        Target relative accuracy in bits.

    Returns
    -------
    flint.arb
        A ball containing the expectation.

    References
    ----------
    SimRF appendix A.5, eq (58) (the ``chi_2d`` law of an orthogonal pair) and footnote 4.
    """
    with workprec(prec + 30):
        half = arb(dof) / 2
        norm = arb(2) ** (half - 1) * half.gamma()
        val = half_line_gaussian_integral_ball(
            f, power=dof - 1, growth=growth, log_scale=log_scale + float((norm.log()).mid()), prec=prec,
            peak=math.sqrt(dof),
        )
        return val / norm


def chi_pdf_ball(w: Any, dof: int, prec: int) -> arb:
    """The ``chi_dof`` density at ``w`` as a ball: ``w^{dof-1} e^{-w^2/2} / (2^{dof/2-1} Gamma(dof/2))``.

    It is ``d/dw P(dof/2, w^2/2)`` (the regularised lower incomplete Gamma function has
    ``d/dx P(a, x) = x^{a-1} e^{-x}/Gamma(a)``, times ``dx/dw = w``).

    Parameters
    ----------
    w : number
        The point (>= 0).
    dof : int
        Degrees of freedom (>= 1).
    prec : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the density.

    References
    ----------
    SimRF appendix A.5, eq (57)-(58) (``chi_2d``, the law of ``w_ij`` for an orthogonal pair).
    """
    with workprec(prec + 20):
        wb, half = arb(to_ball(w)), arb(dof) / 2
        return wb ** (dof - 1) * (-(wb * wb) / 2).exp() / (arb(2) ** (half - 1) * half.gamma())


def chi_moment_ball(k: int, dof: int, prec: int) -> arb:
    """``E R^k``, ``R ~ chi_dof``, as a ball (rigorous quadrature of the density, not the Gamma ratio).

    Parameters
    ----------
    k : int
        The order (>= 0).
    dof : int
        Degrees of freedom (>= 1).
    prec : int
        Target relative accuracy in bits.

    Returns
    -------
    flint.arb
        A ball containing the moment.  The integrand ``w^{dof-1+k} e^{-w^2/2}`` has growth bound
        ``(1, 0)`` after the power is split off.

    References
    ----------
    SimRF sec 3.2 footnote 4 (moments of ``chi_2d``).
    """
    log_scale = k / 2 * math.log(2) + math.lgamma((dof + k) / 2) - math.lgamma(dof / 2)
    with workprec(prec + 30):
        half = arb(dof) / 2
        norm = arb(2) ** (half - 1) * half.gamma()
        val = half_line_gaussian_integral_ball(
            lambda w, _a: acb(1), power=dof - 1 + k, growth=(1, 0),
            log_scale=log_scale + float(norm.log().mid()), prec=prec, peak=math.sqrt(dof + k),
        )
        return val / norm


def sphere_average_ball(g: Callable[[acb, bool], acb], d: int, prec: int) -> arb:
    """``E g(q_1)`` over ``q`` uniform on the sphere ``S^{d-1}`` as a ball.

    ``int_0^pi g(cos a) sin^{d-2} a da`` (``acb.integral``, a finite interval: no tail) over the
    normalisation ``sqrt(pi) Gamma((d-1)/2)/Gamma(d/2)``; ``(g(1) + g(-1))/2`` for ``d = 1``.

    Parameters
    ----------
    g : callable
        ``g(t, analytic) -> acb``, entire in ``t`` and real on the real line.
    d : int
        Dimension (>= 1).
    prec : int
        Target relative accuracy in bits.

    Returns
    -------
    flint.arb
        A ball containing the average.

    References
    ----------
    SimRF appendix A.1, eq (31)-(33) and A.8, eq (75) (the direction average of ``exp`` / ``cos``).
    """
    with workprec(prec + 30):
        if d == 1:
            return ((g(acb(1), False) + g(acb(-1), False)) / 2).real
        num = integral_ball(lambda a, an: g(a.cos(), an) * a.sin() ** (d - 2), 0, arb.pi(), prec)
        den = arb.pi().sqrt() * (arb(d - 1) / 2).gamma() / (arb(d) / 2).gamma()
        return num.real / den


def orthogonal_pair_cos_ball(z: Any, d: int, prec: int) -> arb:
    """``E cos(w_12 . z)`` for an orthogonal pair of ``N(0, I_d)`` rows, ``w_12 = w_1 + w_2``, as a ball.

    ``|w_12| ~ chi_2d`` (SimRF appendix A.5) and the direction average of ``cos(r q . z)`` over
    ``q`` uniform on ``S^{d-1}`` is ``0F1(; d/2; -r^2 z^2/4)`` (Arb's rigorous series); the
    ``chi_2d`` expectation by :func:`chi_expectation_ball`, growth bound ``(1, 0)``: the direction
    average of a cosine is at most 1 in modulus on the real line.

    Parameters
    ----------
    z : number
        ``|z|`` (>= 0).
    d : int
        Dimension (>= 1).
    prec : int
        Target relative accuracy in bits.

    Returns
    -------
    flint.arb
        A ball containing the covariance.

    References
    ----------
    SimRF Thm 4.5, eq (26) and appendix A.8-A.9, eq (74)-(78).
    """
    zb = to_ball(z)
    half = arb(d) / 2
    zf = float(z)
    # the value decays like exp(-z^2) (its order of magnitude, for the tail's target)
    return chi_expectation_ball(
        lambda r, _a: (-(r * zb) ** 2 / 4).hypgeom_0f1(half), 2 * d, growth=(1, 0),
        log_scale=-zf * zf, prec=prec,
    )

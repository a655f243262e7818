"""Reference computations for Simplex Random Features (SimRF): quadratures, series, exact moments.

The independent side of the SimRF checks of the ledger: each function here computes a quantity
of the paper from its *definition* (a Gaussian expectation, a density as the derivative of a
distribution function, a direction average on the sphere) and never from the formula the paper
prints, so that a claim compared against it is tested, not restated.  The printed formulas and
the claim declarations stay in :mod:`rfcheck.claims.simrf`.

Conventions: functions taking ``dps`` return ``(value, error bar)`` as mpmath numbers (the
computation is repeated at ``dps + 10`` and ``dps + 25`` digits, see :func:`two_precision_value`);
mpmath functions without ``dps`` work at the caller's ``mpmath.mp.dps``.

References
----------
I. Reid, K. Choromanski, V. Likhosherstov, A. Weller, "Simplex Random Features", ICML 2023.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
from scipy import special, stats

from rfcheck.backends import MP

__all__ = [
    "alternating_k2_series",
    "alternating_k2_series_ball",
    "angle_conformity_hyp1f1_integral_ball",
    "angle_conformity_moment_series_ball",
    "cdf_angle_root_quadrature",
    "cdf_derivative_chi2d",
    "cdf_derivative_sqrt2_chi",
    "chi_mean_quadrature",
    "configuration_objective",
    "configuration_search",
    "conformity_of_ensemble_ball",
    "direction_average",
    "direction_average_ball",
    "direction_average_cos",
    "eq10_pair_quadrature",
    "eq10_quadrature",
    "equal_norm_minimum",
    "gamma_ratio_product",
    "gamma_ratio_product_exact",
    "iid_mgf_ball",
    "iid_mgf_quadrature",
    "optimised_ensemble",
    "orf_conformity_chi_ball",
    "pair_conformity_closed_form",
    "pair_conformity_mc",
    "panel_quad",
    "pdf_angle_change_of_variables",
    "pdf_angle_change_of_variables_ball",
    "pdf_angle_change_of_variables_with_error",
    "prf_mse_simrf_orf",
    "prf_mse_simrf_orf_ball",
    "prf_orthogonality_gap_ball",
    "prf_orthogonality_gap_quadrature",
    "quad_to_precision",
    "random_unit_rows",
    "random_unit_rows_ball",
    "ratio_series",
    "ratio_series_ball",
    "remainder_growth_sides_ball",
    "rff_mse_ratio_ball",
    "rff_mse_ratio_exact",
    "rff_mse_ratio_exact_ball",
    "rff_mse_ratio_quadrature",
    "rff_orf_covariance",
    "rff_orf_covariance_ball",
    "rff_orthogonality_gap",
    "rff_orthogonality_gap_ball",
    "rotated_configuration_pair_products",
    "rotated_ensemble_conformity",
    "series",
    "simrf_mse_small_v_coefficient",
    "simrf_mse_small_v_coefficient_ball",
    "simrf_plus_draw",
    "simrf_plus_draw_ball",
    "sine_power_integral",
    "sine_power_integral_ball",
    "two_precision_value",
    "two_precision_value_with_error",
    "unit_pair_sum",
    "unit_pair_sum_ball",
]

_MF = mpmath.mpf


def series(term: Callable[[int], Any]) -> Any:
    """``sum_{k>=0} term(k)``, summed directly in mpmath (the mpmath context's ``series``).

    Stops once the terms, past their peak, fall below ``10^-(dps+8)`` of the sum
    (``mpmath.nsum``'s extrapolation misjudges large-argument series).

    Parameters
    ----------
    term : callable
        ``k -> k-th term`` (mpmath numbers).

    Returns
    -------
    mpmath.mpf or mpmath.mpc
        The sum at the working precision.

    Raises
    ------
    ValueError
        If 200000 terms do not reach the tolerance.
    """
    return MP.series(term)


def ratio_series(t0: Any, ratio: Callable[[int], Any]) -> Any:
    """``sum_k t_k`` of a positive series given by ``t_{k+1} = t_k ratio(k)``, to ``10^-(dps+8)``.

    Parameters
    ----------
    t0 : mpmath.mpf
        The first term (> 0).
    ratio : callable
        ``k -> t_{k+1} / t_k`` (>= 0).

    Returns
    -------
    mpmath.mpf
        The sum, stopped once the ratio is below 1 and the term below ``10^-(dps+8)`` of the sum
        (the mpmath context's ``ratio_series``, :data:`rfcheck.backends.MP`).
    """
    return MP.ratio_series(t0, ratio)


def ratio_series_ball(t0: Any, ratio: Callable[[int], Any], *, max_terms: int = 1_000_000) -> Any:
    """``sum_k t_k`` of a positive series on Arb balls, with its tail enclosed.

    ``t_{k+1} = t_k ratio(k)``; ``ratio(k)`` must be non-negative and non-increasing in ``k``
    (true of hypergeometric series with positive parameters).  Terms are added until the ratio
    is below 1/2 and the next term below ``2^-(prec + 4)`` of the sum; the rest of the series is
    then at most ``t_K / (1 - ratio(K))`` and is added as the ball ``[0, t_K / (1 - ratio(K))]``.

    Parameters
    ----------
    t0 : flint.arb
        The first term (>= 0).
    ratio : callable
        ``k -> t_{k+1} / t_k`` as a ball.
    max_terms : int, optional
        ``ValueError`` past this many terms (default 1,000,000).

    Returns
    -------
    flint.arb
        A ball containing the exact sum (at flint's working precision).

    Raises
    ------
    ValueError
        If no tail bound is reached within ``max_terms`` terms (the ratio never falls below
        1/2 with the next term below ``2^-(prec + 4)`` of the sum).

    References
    ----------
    The printed series of SimRF eq (23) and eq (25) (``Gamma(d/2)/Gamma(d) sum_k ...``).

    Examples
    --------
    ``e = sum_k 1/k!`` (``t_0 = 1``, ratio ``1/(k + 1)``):

    >>> from flint import arb
    >>> from rfcheck.references.simrf import ratio_series_ball
    >>> s = ratio_series_ball(arb(1), lambda k: 1 / arb(k + 1))
    >>> s.contains(arb(1).exp()), float(s.rad()) < 1e-14
    (True, True)
    """
    from flint import arb
    from flint import ctx as flint_ctx

    eps = arb(2) ** (-flint_ctx.prec - 4)
    t, tot = arb(t0), arb(0)
    for k in range(max_terms):
        tot += t
        r = ratio(k)
        t = t * r
        if r < arb(1) / 2 and t <= eps * tot:
            bound = (t / (1 - ratio(k + 1))).upper()
            return tot + arb(bound / 2, bound / 2)
    raise ValueError(f"ratio_series_ball: no tail bound within {max_terms} terms")


def two_precision_value(compute: Callable[[], Any], dps: int) -> tuple[Any, Any]:
    """A mpmath computation repeated at ``dps + 10`` and ``dps + 25`` digits.

    Parameters
    ----------
    compute : callable
        ``() -> value`` at the working precision (a quadrature, a numerical derivative).
    dps : int
        Digits asked for.

    Returns
    -------
    value, error : mpmath.mpf
        The finer value, and the difference of the two plus ``10^(3 - dps)`` relative.
    """
    with mpmath.workdps(dps + 10):
        a = compute()
    with mpmath.workdps(dps + 25):
        b = compute()
        return b, abs(b - a) + abs(b) * _MF(10) ** (3 - dps)


def two_precision_value_with_error(compute: Callable[[], tuple[Any, Any]], dps: int) -> tuple[Any, Any]:
    """:func:`two_precision_value` for a computation that reports its own error estimate.

    Parameters
    ----------
    compute : callable
        ``() -> (value, own_error)`` at the working precision (a quadrature with its error estimate).
    dps : int
        Digits asked for.

    Returns
    -------
    value, error : mpmath.mpf
        The finer value, and the difference of the two plus both own error estimates plus
        ``10^(3 - dps)`` relative.
    """
    with mpmath.workdps(dps + 10):
        a, ea = compute()
    with mpmath.workdps(dps + 25):
        b, eb = compute()
        return b, abs(b - a) + abs(ea) + abs(eb) + abs(b) * _MF(10) ** (3 - dps)


def panel_quad(f: Callable[[Any], Any], pts: list[Any], rtol: Any, max_panels: int = 2048) -> tuple[Any, Any]:
    """``int f`` over ``[pts[0], pts[-1]]`` by tanh-sinh on panels, bisecting the panels whose error is large.

    The integrand is scaled to a largest sampled value 1 (mpmath's tanh-sinh stops on an absolute
    error).  Each panel is integrated by mpmath's tanh-sinh rule with its error estimate; while the sum of the
    estimates exceeds ``rtol |total|``, every panel whose estimate exceeds its share
    ``rtol |total| / n_panels`` is bisected (at most ``max_panels`` panels).  The estimate returned is
    the sum of the panels' estimates, whether or not the tolerance was met: the caller checks it.

    Parameters
    ----------
    f : callable
        The integrand, ``mpf -> mpf``, smooth on each panel.
    pts : list of mpmath.mpf
        The initial breakpoints, increasing.
    rtol : mpmath.mpf
        The relative accuracy asked for.
    max_panels : int, default 2048
        The most panels the bisection may make.

    Returns
    -------
    value, error : mpmath.mpf
        The integral and the sum of the panels' error estimates.
    """
    # mpmath's tanh-sinh stops on an absolute error (the working epsilon): the integrand is scaled to
    # a maximum ~1 first (its largest value at 8 points per panel), so that the stop is a relative one
    scale = max((abs(f(a + (b - a) * j / 8)) for a, b in itertools.pairwise(pts) for j in range(1, 8)),
                default=_MF(0))
    scale = scale if scale > 0 else _MF(1)

    def g(x: Any) -> Any:
        return f(x) / scale

    panels = [(a, b, *mpmath.quad(g, [a, b], error=True)) for a, b in itertools.pairwise(pts)]
    while True:
        total = mpmath.fsum(v for _, _, v, _ in panels)
        err = mpmath.fsum(e for _, _, _, e in panels)
        share = rtol * abs(total) / len(panels)
        bad = [q for q in panels if q[3] > share]
        if err <= rtol * abs(total) or not bad or len(panels) + len(bad) > max_panels:
            return scale * total, scale * err
        out = []
        for q in panels:
            if q[3] > share:
                a, b = q[0], q[1]
                m = (a + b) / 2
                out += [(a, m, *mpmath.quad(g, [a, m], error=True)), (m, b, *mpmath.quad(g, [m, b], error=True))]
            else:
                out.append(q)
        panels = out



def quad_to_precision(f: Callable[[Any], Any], pts: Callable[[], list[Any]], what: str = "the integral") -> Any:
    """``int f`` over ``[pts[0], pts[-1]]`` accurate to the working precision, or ``ArithmeticError``.

    :func:`panel_quad` with 10 guard digits until its error estimate is below ``10^-(dps+3)``
    relative; failing that the guard digits and the panel budget are raised twice (25 digits and
    8192 panels, 50 and 32768).  For the printed integrals of SimRF eq (20) and eq (56), whose
    integrands peak near ``pi/4`` with width ~ ``1/sqrt(d)`` (a fixed Gauss-Legendre rule lost up to
    22% there).

    Parameters
    ----------
    f : callable
        The integrand, ``mpf -> mpf``, smooth on each initial panel (evaluated at the raised precision).
    pts : callable
        ``() -> breakpoints``, increasing, formed at the raised precision (``mpmath.pi / 2`` to all
        its digits).
    what : str, optional
        Names the integral in the error message.

    Returns
    -------
    mpmath.mpf
        The integral, carrying its guard digits (round with ``+``, or scale it at the raised
        precision first).

    Raises
    ------
    ArithmeticError
        If the error estimate stays above ``10^-(dps+3)`` relative at 50 guard digits.

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.references.simrf import quad_to_precision
    >>> with mpmath.workdps(30):
    ...     v = quad_to_precision(lambda t: mpmath.exp(-400 * (t - 1) ** 2), lambda: mpmath.linspace(0, 2, 5))
    ...     abs(v / (mpmath.sqrt(mpmath.pi) / 20 * mpmath.erf(20)) - 1) < mpmath.mpf(10) ** -29
    True
    """
    dps = mpmath.mp.dps
    for guard, panels in ((10, 2048), (25, 8192), (50, 32768)):
        with mpmath.workdps(dps + guard):
            rtol = _MF(10) ** -(dps + 3)
            val, err = panel_quad(f, pts(), rtol, max_panels=panels)
            if err <= rtol * abs(val):
                return val
    raise ArithmeticError(f"{what}: quadrature error estimate {err} above {rtol} relative")


def eq10_quadrature(v: float, d: int, c: float, n: int = 160) -> tuple[float, float]:
    """The RF-conformity of a pair at fixed angle from its definition, by 2-D quadrature.

    ``E 0F1(; d/2; v^2 |w_i + w_j|^2 / 4)`` over the two independent ``chi_d`` norms of rows at
    ``cos theta = c`` (Gauss-Legendre on ``sqrt(d) -+ 14``, float64, scipy's ``0F1``).

    Parameters
    ----------
    v : float
        ``|x + y|`` (>= 0).
    d : int
        Dimension (>= 1).
    c : float
        ``cos theta`` in ``[-1, 1]``.
    n : int
        Nodes per norm of the coarser rule.

    Returns
    -------
    value, error : float
        The ``3n/2``-node value, and its change from ``n`` nodes plus 1e-13 relative.

    References
    ----------
    SimRF Def 3.1, eq (10); Lemma 4.2, eq (21).
    """

    def rule(nn: int) -> float:
        lo, hi = max(0.0, math.sqrt(d) - 14.0), math.sqrt(d) + 14.0
        x, wq = np.polynomial.legendre.leggauss(nn)
        r = lo + (hi - lo) * (x + 1) / 2
        wr = wq * (hi - lo) / 2 * stats.chi(d).pdf(r)
        r1, r2 = r[:, None], r[None, :]
        w2 = np.maximum(r1 * r1 + r2 * r2 + 2 * c * r1 * r2, 0.0)
        return float(wr @ special.hyp0f1(d / 2, w2 * v * v / 4) @ wr)

    a, b = rule(n), rule(n * 3 // 2)
    return b, abs(a - b) + 1e-13 * abs(b)


def direction_average(w: Any, v: Any, d: int) -> tuple[Any, Any]:
    """``E exp(w q . v)`` over ``q`` uniform on the sphere ``S^{d-1}`` (``|v| = v``), mpmath.

    1-D quadrature in the polar angle, ``int_0^pi e^{w v cos a} sin^{d-2} a da`` over its
    normalisation; ``cosh(w v)`` for ``d = 1``.

    Parameters
    ----------
    w, v : mpmath.mpf
        The norm of the random vector and of ``v``.
    d : int
        Dimension.

    Returns
    -------
    value, error : mpmath.mpf
        The average and an error bar of ``10^(5 - dps)`` relative.

    References
    ----------
    SimRF appendix A.1, eq (31) and eq (33) (the bracket of eq (10) is this average).
    """
    if d == 1:
        return mpmath.cosh(w * v), 0
    num = mpmath.quad(
        lambda a: mpmath.exp(w * v * mpmath.cos(a)) * mpmath.sin(a) ** (d - 2), [0, mpmath.pi / 2, mpmath.pi]
    )
    den = mpmath.sqrt(mpmath.pi) * mpmath.gamma(_MF(d - 1) / 2) / mpmath.gamma(_MF(d) / 2)
    return num / den, abs(num / den) * _MF(10) ** (5 - mpmath.mp.dps)


def direction_average_cos(w: Any, z: Any, d: int) -> Any:
    """``E cos(w q . z)`` over ``q`` uniform on the sphere ``S^{d-1}`` (``|z| = z``), mpmath.

    1-D quadrature in the polar angle, ``int_0^pi cos(w z cos a) sin^{d-2} a da`` over its
    normalisation (``max(4, w z + 4)`` panels for the oscillation); ``cos(w z)`` for ``d = 1``.

    Parameters
    ----------
    w, z : mpmath.mpf
        The norm of the random vector and of ``z``.
    d : int
        Dimension.

    Returns
    -------
    mpmath.mpf
        The average at the working precision.

    References
    ----------
    SimRF appendix A.8, eq (75) (the direction average of an RFF pair).
    """
    if d == 1:
        return mpmath.cos(w * z)
    n = max(4, int(float(w * z)) + 4)
    num = mpmath.quad(
        lambda a: mpmath.cos(w * z * mpmath.cos(a)) * mpmath.sin(a) ** (d - 2), mpmath.linspace(0, mpmath.pi, n)
    )
    den = mpmath.sqrt(mpmath.pi) * mpmath.gamma(_MF(d - 1) / 2) / mpmath.gamma(_MF(d) / 2)
    return num / den


def cdf_angle_root_quadrature(w: Any, d: int, c: Any) -> Any:
    """``P(r_1^2 + r_2^2 + 2 c r_1 r_2 <= w^2)``, ``r_1, r_2`` iid ``chi_d``, in mpmath.

    1-D quadrature over ``r_1`` of the ``chi_d`` CDF between the roots
    ``r_2 = -c r_1 -+ sqrt(w^2 - r_1^2 (1 - c^2))``; ``|c| < 1``.

    Parameters
    ----------
    w : float or mpmath.mpf
        The point (> 0).
    d : int
        Dimension.
    c : float or mpmath.mpf
        ``cos theta`` in ``(-1, 1)``.

    Returns
    -------
    mpmath.mpf
        The probability at the working precision.

    References
    ----------
    SimRF appendix A.5, eq (54)-(55) (the CDF of ``w_ij`` for rows at a fixed angle).
    """
    w, c = _MF(w), _MF(c)

    def cdf(x: Any) -> Any:
        return mpmath.gammainc(_MF(d) / 2, 0, x * x / 2, regularized=True) if x > 0 else _MF(0)

    def pdf(x: Any) -> Any:
        if x <= 0:
            return _MF(0) if d > 1 else mpmath.sqrt(2 / mpmath.pi)
        return mpmath.exp(
            (d - 1) * mpmath.log(x) - x * x / 2 - (_MF(d) / 2 - 1) * mpmath.log(2) - mpmath.loggamma(_MF(d) / 2)
        )

    top = w / mpmath.sqrt(1 - c * c)

    def f(r1: Any) -> Any:
        disc = w * w - r1 * r1 * (1 - c * c)
        if disc <= 0:
            return _MF(0)
        q = mpmath.sqrt(disc)
        hi, lo = -c * r1 + q, max(_MF(0), -c * r1 - q)
        return pdf(r1) * (cdf(hi) - cdf(lo)) if hi > 0 else _MF(0)

    brk = sorted({_MF(0), min(w, top), top})
    pts = [a + (b - a) * j / 8 for a, b in itertools.pairwise(brk) for j in range(8)] + [brk[-1]]
    return mpmath.quad(f, pts)


def cdf_derivative_sqrt2_chi(w: Any, d: int, dps: int) -> tuple[Any, Any]:
    """pdf of ``|g|``, ``g ~ N(0, 2 I_d)``, as the derivative of its CDF ``P(d/2, w^2/4)``.

    Parameters
    ----------
    w : float or mpmath.mpf
        The point (> 0).
    d : int
        Dimension.
    dps : int
        Digits asked for.

    Returns
    -------
    value, error : mpmath.mpf
        See :func:`two_precision_value`.

    References
    ----------
    SimRF Lemma 4.1, eq (18) (the law of ``w_ij = |w_i + w_j|`` for iid rows).
    """
    w = _MF(w)
    return _gamma_cdf_derivative(_MF(d) / 2, 4, w, dps)


def cdf_derivative_chi2d(w: Any, d: int, dps: int) -> tuple[Any, Any]:
    """pdf of ``chi_{2d}`` as the derivative of its CDF ``P(d, w^2/2)``.

    Parameters
    ----------
    w : float or mpmath.mpf
        The point (> 0).
    d : int
        Half the degrees of freedom.
    dps : int
        Digits asked for.

    Returns
    -------
    value, error : mpmath.mpf
        See :func:`two_precision_value`.

    References
    ----------
    SimRF appendix A.5, eq (57)-(58) (the law of ``w_ij`` for orthogonal rows).
    """
    return _gamma_cdf_derivative(_MF(d), 2, w, dps)


def _gamma_cdf_derivative(a: Any, s: int, w: Any, dps: int) -> tuple[Any, Any]:
    """``d/dw P(a, w^2/s)`` (a regularised incomplete gamma CDF) by numerical differentiation, with the
    error bar of :func:`two_precision_value`.

    Where the CDF is above 1/2 the upper tail ``Q = 1 - P`` is differentiated instead (``dP = -dQ``):
    a CDF within ``10^-dps`` of 1 has no digits of its derivative left (at ``w = 40``, ``d = 256``
    the chi_2d density is 8.5e-111 and the difference quotient of ``P`` was exactly 0)."""
    w = _MF(w)
    upper = mpmath.gammainc(a, 0, w * w / s, regularized=True) > 0.5

    def cdf(t: Any) -> Any:
        if upper:
            return -mpmath.gammainc(a, t * t / s, mpmath.inf, regularized=True)
        return mpmath.gammainc(a, 0, t * t / s, regularized=True)

    return two_precision_value(lambda: mpmath.diff(cdf, w, direction=1), dps)


def iid_mgf_quadrature(v: Any, dps: int) -> tuple[Any, Any]:
    """``E exp((w_i + w_j) . v)`` for independent ``w_i, w_j ~ N(0, I_d)`` by 1-D quadrature.

    Only the component along ``v`` matters: ``E e^{t v}``, ``t ~ N(0, 2)``, integrated in mpmath
    around the peak ``t = 2 v^2`` of the integrand.

    Parameters
    ----------
    v : float or mpmath.mpf
        ``|v|``.
    dps : int
        Digits asked for.

    Returns
    -------
    value, error : mpmath.mpf
        See :func:`two_precision_value`.

    References
    ----------
    SimRF Lemma 4.1, eq (19) and appendix A.4, eq (53).
    """
    v = _MF(v)
    return two_precision_value(
        lambda: mpmath.quad(
            lambda t: mpmath.exp(t * v - t * t / 4) / mpmath.sqrt(4 * mpmath.pi),
            [-mpmath.inf, 2 * v * v - 10, 2 * v * v, 2 * v * v + 10, mpmath.inf],
        ),
        dps,
    )


def pdf_angle_change_of_variables(w: Any, d: int, c: Any) -> Any:
    """pdf of ``sqrt(r_1^2 + r_2^2 + 2 c r_1 r_2)``, ``r_1, r_2`` iid ``chi_d``, in mpmath.

    The change of variables ``r_2(r_1, w)`` (both roots) leaves a 1-D quadrature in ``r_1``
    of ``chi_d(r_1) chi_d(r_2) w / sqrt(w^2 - r_1^2 (1 - c^2))``; ``|c| < 1``.  Its ``1/sqrt``
    singularity at ``r_1 = T = w / sqrt(1 - c^2)`` is removed by ``r_1 = T sin(alpha)`` (as in
    :func:`pdf_angle_change_of_variables_ball`): the roots become ``r_2 = T sin(theta -+ alpha)``
    (``c = cos theta``, up to sign) and the root factor times ``dr_1`` becomes ``T dalpha``, so that

    ``p(w) = T int_0^{min(theta, pi/2)} chi_d(T sin a) chi_d(T sin(theta - a)) da
    + T int_{pi - theta}^{pi/2} chi_d(T sin a) chi_d(-T sin(theta + a)) da``

    (the second only for ``c < 0``), smooth integrands integrated by :func:`panel_quad`.

    Parameters
    ----------
    w : float or mpmath.mpf
        The point (> 0).
    d : int
        Dimension.
    c : float or mpmath.mpf
        ``cos theta`` in ``(-1, 1)``.

    Returns
    -------
    mpmath.mpf
        The density at the working precision (its error estimate:
        :func:`pdf_angle_change_of_variables_with_error`).

    References
    ----------
    SimRF Lemma 4.2, eq (20) (the law of ``w_ij`` for rows at a fixed angle).
    """
    return _pdf_angle_cov(w, d, c)[0]


def pdf_angle_change_of_variables_with_error(w: Any, d: int, c: Any, dps: int) -> tuple[Any, Any]:
    """:func:`pdf_angle_change_of_variables` with an error bar.

    Parameters
    ----------
    w : float or mpmath.mpf
        The point (> 0).
    d : int
        Dimension.
    c : float or mpmath.mpf
        ``cos theta`` in ``(-1, 1)``.
    dps : int
        Digits asked for.

    Returns
    -------
    value, error : mpmath.mpf
        See :func:`two_precision_value_with_error`: the change between ``dps + 10`` and ``dps + 25``
        digits plus the quadrature's own error estimates (``10^(3 - dps)`` relative at least).

    References
    ----------
    SimRF Lemma 4.2, eq (20) (the law of ``w_ij`` for rows at a fixed angle).
    """
    return two_precision_value_with_error(lambda: _pdf_angle_cov(w, d, c), dps)


def _pdf_angle_cov(w: Any, d: int, c: Any) -> tuple[Any, Any]:
    """(value, quadrature error estimate) of :func:`pdf_angle_change_of_variables` at the working precision."""
    w, c = _MF(w), _MF(c)
    lnorm = (_MF(d) / 2 - 1) * mpmath.log(2) + mpmath.loggamma(_MF(d) / 2)

    def lchi(r: Any) -> Any:
        return (d - 1) * mpmath.log(r) - r * r / 2 - lnorm

    s = mpmath.sqrt(1 - c * c)
    top = w / s
    theta = mpmath.acos(c)

    def piece(lo: Any, hi: Any, sign: int) -> tuple[Any, Any]:
        def f(a: Any) -> Any:
            r1 = top * mpmath.sin(a)
            ca, sa = mpmath.cos(a), mpmath.sin(a)
            r2 = top * (s * ca - c * sa) if sign > 0 else -top * (s * ca + c * sa)
            return mpmath.exp(lchi(r1) + lchi(r2)) if r1 > 0 and r2 > 0 else _MF(0)

        return panel_quad(f, [lo + (hi - lo) * j / 8 for j in range(9)], _MF(10) ** (5 - mpmath.mp.dps))

    if c >= 0:
        val, err = piece(_MF(0), theta, 1)
    else:
        (v1, e1), (v2, e2) = piece(_MF(0), mpmath.pi / 2, 1), piece(mpmath.pi - theta, mpmath.pi / 2, -1)
        val, err = v1 + v2, e1 + e2
    return top * val, top * err


def rff_orf_covariance(z: Any, d: int) -> Any:
    """``E cos(w_ij . z)`` for an orthogonal pair of Gaussian rows, by 1-D quadrature.

    ``|w_ij| ~ chi_{2d}`` (appendix A.5) and the direction average of ``cos(r q . z)`` is
    ``Gamma(d/2) (r z/2)^{1-d/2} J_{d/2-1}(r z)``; the remaining integral over ``r`` is done by
    scipy's adaptive quadrature in float64 (relative error ~1e-13).

    Parameters
    ----------
    z : float or mpmath.mpf
        ``|z|`` (>= 0).
    d : int
        Dimension.

    Returns
    -------
    mpmath.mpf
        The float64 value, as an mpmath number.

    References
    ----------
    SimRF Thm 4.5, eq (26) and appendix A.8, eq (74)-(76).
    """
    from scipy import integrate

    zf = float(z)

    def f(r: float) -> float:
        x = r * zf
        lchi = (2 * d - 1) * math.log(r) - r * r / 2 - (d - 1) * math.log(2) - math.lgamma(d) if r > 0 else -math.inf
        if x < 1e-8:
            return math.exp(lchi)
        return math.exp(lchi + math.lgamma(d / 2) + (1 - d / 2) * math.log(x / 2)) * special.jv(d / 2 - 1, x)

    hi = math.sqrt(2 * d) + 14
    lo = max(0.0, math.sqrt(2 * d) - 14)
    val, _ = integrate.quad(f, lo, hi, limit=400, epsabs=0, epsrel=1e-13)
    return _MF(val)


def optimised_ensemble(norms: Any, v: float, *, starts: int = 3, seed: int = 0) -> tuple[np.ndarray, float]:
    """Numerically minimise the conformity eq (12) over the directions of vectors with given norms.

    L-BFGS-B on unconstrained direction vectors, from the simplex and ``starts`` random starts;
    the objective is :func:`rfcheck.closed_forms.simrf.conformity_of_ensemble`.

    Parameters
    ----------
    norms : array_like
        The ``d`` positive norms of the rows (``m = d``), a finite 1-D array, ``d >= 2``.
    v : float
        ``|x + y|``.
    starts : int, optional
        Random starts besides the simplex (default 3).
    seed : int, optional
        Seed of the random starts (default 0).

    Returns
    -------
    ensemble : numpy.ndarray
        The best ensemble found, shape ``(d, d)``.
    value : float
        Its conformity: an upper bound on the true minimum (the 'numerically optimised'
        benchmark of SimRF Fig. 4).

    Raises
    ------
    ValueError
        If ``norms`` is not numeric, holds NaN or inf, is not 1-D, has fewer than 2 entries, or
        has an entry ``<= 0``.

    References
    ----------
    SimRF sec 3.2, eq (12) and Fig. 4.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.simrf import optimised_ensemble
    >>> ens, value = optimised_ensemble([1.0, 2.0], 0.5, starts=0)
    >>> ens.shape, bool(np.allclose(np.linalg.norm(ens, axis=1), [1.0, 2.0])), bool(np.isfinite(value))
    ((2, 2), True, True)
    """
    from scipy import optimize

    from rfcheck import validate
    from rfcheck.closed_forms.simrf import conformity_of_ensemble
    from rfcheck.engine.montecarlo import simplex_matrix

    r = validate.finite_array(norms, "norms")
    if r.ndim != 1 or r.size < 2 or np.any(r <= 0):
        raise ValueError("norms must be a 1-D array of >= 2 positive numbers")
    d = r.size
    rng = np.random.default_rng(seed)

    def ens(flat: np.ndarray) -> np.ndarray:
        X = flat.reshape(d, d)
        return r[:, None] * X / np.linalg.norm(X, axis=1, keepdims=True)

    def obj(flat: np.ndarray) -> float:
        return conformity_of_ensemble(ens(flat), v)

    inits = [simplex_matrix(d).ravel()] + [rng.standard_normal(d * d) for _ in range(starts)]
    best, best_val = None, math.inf
    for x0 in inits:
        res = optimize.minimize(obj, x0, method="L-BFGS-B", options={"maxiter": 500})
        if res.fun < best_val:
            best, best_val = res.x, float(res.fun)
    return ens(best), best_val


# ------------------------------------------------------------------------------------------------
# Gamma on a context, closed-form moments, quadratures, Monte Carlo and optimisers used by the
# SimRF claims (moved out of rfcheck.claims.simrf).


def chi_mean_quadrature(d: int) -> Any:
    """``E r`` for ``r ~ chi_d``, by mpmath quadrature of ``r p_chi(r)`` on ``[0, sqrt(d), inf)``.

    The density is taken in log form, ``(d-1) log r - r^2/2 - (d/2-1) log 2 - log Gamma(d/2)``.

    Parameters
    ----------
    d : int
        Degrees of freedom (>= 1).

    Returns
    -------
    mpmath.mpf
        The mean at the working precision (exactly ``sqrt(2) Gamma((d+1)/2) / Gamma(d/2)``).

    References
    ----------
    SimRF sec 5.1 (the ``v^2`` coefficient of the SimRF MSE) and Lemma 4.2 (``chi_d`` norms).
    """
    return mpmath.quad(
        lambda r: (
            r
            * mpmath.exp(
                (d - 1) * mpmath.log(r) - r * r / 2 - (_MF(d) / 2 - 1) * mpmath.log(2) - mpmath.loggamma(_MF(d) / 2)
            )
        ),
        [0, mpmath.sqrt(d), mpmath.inf],
    )


def _small_v_coefficient(er: Any, d: Any) -> Any:
    """The small-``v`` coefficient from ``E r`` (one formula, mpmath numbers or Arb balls)."""
    coef_rho = (2 * d + 2 * (-1 / (d - 1)) * er**2) / (2 * d)
    return 1 + (d - 1) * (coef_rho - 1)  # e^{2v^2}-e^{v^2} -> v^2, (m-1)(rho - e^{v^2}) -> (m-1)(coef-1) v^2


def simrf_mse_small_v_coefficient(d: int, dps: int) -> tuple[Any, Any]:
    """``lim_{v->0} m e^{2(x^2+y^2)} MSE_SimRF / v^2`` at ``m = d``, from the definition eq (10)-(11).

    The ``v^2`` coefficient of ``rho_SimRF`` is ``E[w_ij^2]/(2d)`` with ``E w_ij^2 = 2d + 2c (E r)^2``,
    ``c = -1/(d-1)``, ``E r`` by quadrature of ``chi_d`` (:func:`chi_mean_quadrature`); eq (11)
    then gives ``1 + (d-1)(coef - 1)``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    dps : int
        Digits asked for (the quadrature runs at ``dps + 10``, see :func:`two_precision_value`).

    Returns
    -------
    value, error : mpmath.mpf
        The coefficient and its error bar.

    References
    ----------
    SimRF sec 5.1 (the printed prefactor ``1 - sqrt(pi) Gamma(d+1) Gamma(d/2+1/2) / (Gamma(d/2)
    Gamma(d/2+1)^2 2^d)``), Thm 3.2 eq (11).
    """
    return two_precision_value(lambda: _small_v_coefficient(chi_mean_quadrature(d), _MF(d)), dps + 10)


def simrf_mse_small_v_coefficient_ball(d: int, bits: int) -> Any:
    """:func:`simrf_mse_small_v_coefficient` on Arb balls, with the exact ``chi_d`` mean
    ``E r = sqrt(2) Gamma((d+1)/2) / Gamma(d/2)``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the coefficient.

    References
    ----------
    SimRF sec 5.1; the mean of ``chi_d`` (Johnson, Kotz, Balakrishnan, *Continuous Univariate
    Distributions*, vol. 1, ch. 18).
    """
    from flint import arb

    from rfcheck.arb_backend import workprec

    with workprec(bits):
        er = arb(2).sqrt() * (arb(d + 1) / 2).gamma() / (arb(d) / 2).gamma()
        return _small_v_coefficient(er, arb(d))


def sine_power_integral(d: int, k: int = 0, points: Any = None) -> Any:
    """``int_0^pi (sin phi)^{d-1} (1 - sin(phi)/(d-1))^k dphi`` by mpmath quadrature.

    Parameters
    ----------
    d : int
        Dimension (>= 1; >= 2 when ``k > 0``).
    k : int
        Power of the second factor (``k = 0``: the plain Wallis integral).
    points : list, optional
        Quadrature break points (default ``[0, pi/2, pi]``).

    Returns
    -------
    mpmath.mpf
        The integral at the working precision.

    References
    ----------
    SimRF appendix A.6, eq (64) (``k = 0``) and eq (66).
    """
    pts = [0, mpmath.pi / 2, mpmath.pi] if points is None else points
    if k == 0:
        return mpmath.quad(lambda x: mpmath.sin(x) ** (d - 1), pts)
    return mpmath.quad(lambda ph: mpmath.sin(ph) ** (d - 1) * (1 - mpmath.sin(ph) / (d - 1)) ** k, pts)


def sine_power_integral_ball(d: int, bits: int, k: int = 0) -> Any:
    """:func:`sine_power_integral` as an Arb ball (rigorous ``acb.integral``; entire integrand).

    Parameters
    ----------
    d : int
        Dimension (>= 1; >= 2 when ``k > 0``).
    bits : int
        Working precision in bits.
    k : int
        Power of ``(1 - sin(phi)/(d-1))``.

    Returns
    -------
    flint.arb
        A ball containing the integral.

    References
    ----------
    SimRF appendix A.6, eq (64) and eq (66).
    """
    from flint import acb, arb

    from rfcheck.arb_backend import workprec

    with workprec(bits):
        def f(x: Any, _analytic: bool) -> Any:
            return x.sin() ** (d - 1) * (1 - x.sin() / (d - 1)) ** k if k else x.sin() ** (d - 1)

        return acb.integral(f, 0, arb.pi(), rel_tol=arb(2) ** -bits, eval_limit=2_000_000).real


def iid_mgf_ball(v: Any, bits: int) -> Any:
    """``E exp(t v)``, ``t ~ N(0, 2)`` (:func:`iid_mgf_quadrature`) as an Arb ball.

    :func:`rfcheck.certify.gaussian_expectation_1d` of ``exp(sqrt(2) v g)``, growth bound
    ``(1, sqrt(2) |v|)``: the integral over ``[-T, T]`` by Arb plus a proven tail bound.

    Parameters
    ----------
    v : float
        ``|x + y|``.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the expectation.

    References
    ----------
    SimRF Lemma 4.1, eq (19).
    """
    from rfcheck.arb_backend import to_ball
    from rfcheck.certify import gaussian_expectation_1d

    a = math.sqrt(2) * abs(float(v)) * (1 + 1e-12)  # an upper bound of sqrt(2) |v|

    def f(g: Any, _analytic: bool) -> Any:
        from flint import arb

        return (arb(2).sqrt() * to_ball(v) * g).exp()

    return gaussian_expectation_1d(f, growth=(1.0, a), prec=bits)


def alternating_k2_series_ball(z: Any, d: int, bits: int) -> Any:
    """``-sum_k (-z^2)^k / k! k(k-1)/(2d)`` as an Arb ball (the series, with a proven tail bound).

    The terms vanish for ``k < 2``; for ``k >= 2`` their ratio is ``|t_{k+1}/t_k| = z^2/(k-1)``,
    non-increasing, so :func:`rfcheck.certify.series_sum` bounds the remainder.

    Parameters
    ----------
    z : float
        ``|x - y|``.
    d : int
        Dimension (>= 1).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the sum.

    References
    ----------
    SimRF appendix A.9, eq (85) (the left-hand side).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec
    from rfcheck.certify import series_sum

    # the terms peak near k = z^2 at about e^{z^2}: guard bits against their cancellation
    with workprec(bits + int(1.5 * float(z) ** 2) + 10):
        x = to_ball(z) ** 2

        def term(k: int) -> Any:
            return (-x) ** k / arb.fac_ui(k) * k * (k - 1) / (2 * d)

        return -series_sum(term, lambda n: x / (n - 1), start=2, prec=bits + int(1.5 * float(z) ** 2) + 10)


def pair_conformity_mc(coupling: str, v: float, d: int, n: int, seed: int) -> Any:
    """``E[b_1 b_2] = E exp(v (w_1 + w_2) . u_hat)`` for two rows of one coupled block, by Monte Carlo.

    Draws from the coupling's projection sampler (:func:`rfcheck.engine.couplings.sample_projection`).

    Parameters
    ----------
    coupling : str
        ``"iid"``, ``"orf"`` or ``"simrf"``.
    v : float
        ``|x + y|``.
    d : int
        Dimension.
    n : int
        Number of draws.
    seed : int
        Seed of the sampler.

    Returns
    -------
    rfcheck.stats.Estimate
        The mean with its standard error.

    References
    ----------
    SimRF Def 3.1, eq (10) (the RF-conformity of a pair) and Thm 4.3.
    """
    from rfcheck.engine.couplings import sample_projection
    from rfcheck.stats import estimate_mean

    t, _ = sample_projection(coupling, 2, d, n, seed=seed, need_sq=False)
    return estimate_mean(np.exp(v * (t[:, 0] + t[:, 1])))


def prf_orthogonality_gap_quadrature(v: float, d: int, m: int, sq: Any, dps: int) -> tuple[Any, Any]:
    """``MSE_IID - MSE_ORF = e^{-2 sq} (m-1)/m (e^{v^2} - rho_ORF)``, ``rho_ORF`` from the definition.

    ``rho_ORF`` by :func:`eq10_quadrature` at ``cos theta = 0`` (float64); the prefactor and
    ``e^{v^2}`` in mpmath at ``dps`` digits.

    Parameters
    ----------
    v : float
        ``|x + y|``.
    d, m : int
        Dimension and number of features (``m <= d``: one orthogonal block).
    sq : float
        ``|x|^2 + |y|^2``.
    dps : int
        Digits of the mpmath part.

    Returns
    -------
    value, error : mpmath.mpf
        The gap and its error bar (the quadrature's, times the prefactor).

    References
    ----------
    SimRF Cor 4.4, eq (25); Thm 3.2, eq (11).
    """
    rho, err = eq10_quadrature(v, d, 0.0)
    with mpmath.workdps(dps):
        pref = mpmath.exp(-2 * _MF(sq)) * _MF(m - 1) / m
        return pref * (mpmath.exp(_MF(v) ** 2) - _MF(rho)), pref * _MF(err)


def random_unit_rows(m: int, dim: int, seed: int) -> list[list[Any]]:
    """``m`` random unit vectors in ``R^dim`` (Gaussian draws normalised in mpmath), as lists of mpf.

    Parameters
    ----------
    m, dim : int
        Number and dimension of the vectors.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    list of list of mpmath.mpf
        The rows, unit-norm at the working precision.

    References
    ----------
    SimRF appendix A.2, eq (39) (sums over normalised directions).
    """
    g = np.random.default_rng(int(seed)).standard_normal((m, dim))
    rows = []
    for i in range(m):
        r = [_MF(float(x)) for x in g[i]]
        n = mpmath.sqrt(mpmath.fsum(x * x for x in r))
        rows.append([x / n for x in r])
    return rows


def configuration_objective(d: int, v: float) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """``X -> (mean_{i != j} rho_theta(cos theta_ij), gradient)`` for ``d`` directions (rows of ``X``).

    ``rho_theta`` is the eq (21) closed form (:func:`rfcheck.closed_forms.simrf.log_conformity_angle`)
    through a degree-256 Chebyshev fit in ``cos theta`` on the Chebyshev-Lobatto nodes; the
    gradient is the fit's exact gradient, projected onto the tangent space of each row (rows are
    normalised, so the objective is invariant to their lengths).

    Parameters
    ----------
    d : int
        Number of directions and dimension (>= 2).
    v : float
        ``|x + y|``.

    Returns
    -------
    callable
        ``obj(flat) -> (value, gradient)`` for ``flat`` the ``d x d`` matrix raveled; its attribute
        ``fit_err`` is the fit's largest deviation from the closed form at the 256 midpoints
        between nodes.

    References
    ----------
    SimRF Thm 3.4 (proof appendix A.2) and Lemma 4.2, eq (21).
    """
    from rfcheck.closed_forms.simrf import log_conformity_angle

    cs = np.cos(np.linspace(0, np.pi, 257))  # Chebyshev-Lobatto nodes in c
    vals = log_conformity_angle(v, d, cs)
    cheb = np.polynomial.chebyshev.Chebyshev.fit(cs, np.exp(vals), 256)
    dcheb = cheb.deriv()
    mid = np.cos(np.linspace(0, np.pi, 513)[1::2])
    fit_err = float(np.max(np.abs(cheb(mid) - np.exp(log_conformity_angle(v, d, mid)))))
    off = ~np.eye(d, dtype=bool)
    norm = 1.0 / (d * (d - 1))

    def obj(flat: np.ndarray) -> tuple[float, np.ndarray]:
        X = flat.reshape(d, d)
        n = np.linalg.norm(X, axis=1, keepdims=True)
        U = X / n
        G = np.clip(U @ U.T, -1, 1)
        H = np.where(off, dcheb(G), 0.0)
        gU = 2 * norm * (H @ U)
        gX = (gU - np.sum(gU * U, axis=1, keepdims=True) * U) / n
        return float(norm * np.sum(cheb(G[off]))), gX.ravel()

    obj.fit_err = fit_err  # type: ignore[attr-defined]
    return obj


def configuration_search(
    d: int, v: float, restarts: int, seed: int = 0, maxiter: int = 2000
) -> tuple[float, float, float]:
    """Lowest mean pairwise conformity over ``d`` unit directions, against the simplex's.

    L-BFGS-B on :func:`configuration_objective` (exact gradient) from ``restarts`` Gaussian starts
    plus one perturbed simplex.

    Parameters
    ----------
    d : int
        Number of directions and dimension (>= 2).
    v : float
        ``|x + y|``.
    restarts : int
        Gaussian starting points.
    seed : int
        Seed (with ``d`` and ``v``) of the starting points.
    maxiter : int
        L-BFGS iterations per start.

    Returns
    -------
    simplex, best, err : float
        The simplex conformity (closed form, eq (24)), the lowest value found, and the error bar
        of ``best`` (the Chebyshev fit's deviation, plus 1e-13 relative).

    References
    ----------
    SimRF Thm 3.4 (SimRFs are the optimal weight-independent geometrical coupling).
    """
    from scipy import optimize

    from rfcheck.closed_forms.simrf import conformity_simrf
    from rfcheck.engine.montecarlo import simplex_matrix

    simplex = float(conformity_simrf(v, d))
    obj = configuration_objective(d, v)
    rng = np.random.default_rng([d, int(1000 * v), seed])
    starts = [rng.standard_normal(d * d) for _ in range(restarts)]
    starts.append((simplex_matrix(d) + 0.3 * rng.standard_normal((d, d))).ravel())
    best = math.inf
    for x0 in starts:
        r = optimize.minimize(obj, x0, jac=True, method="L-BFGS-B", options={"maxiter": maxiter, "gtol": 1e-12})
        best = min(best, float(r.fun))
    return simplex, best, obj.fit_err + 1e-13 * simplex  # type: ignore[attr-defined]


def equal_norm_minimum(v: float, w: float, d: int, *, starts: int = 3, seed: int = 0, maxiter: int = 300) -> float:
    """Numerical minimum over directions of the equal-norm conformity eq (36) (L-BFGS-B, random starts).

    The objective is :func:`rfcheck.closed_forms.simrf.equal_norm_conformity` of ``d`` rows of length
    ``w`` (``m = d``); the result is an upper bound on the true minimum.

    Parameters
    ----------
    v : float
        ``|x + y|``.
    w : float
        The common row length.
    d : int
        Dimension and number of rows.
    starts : int
        Gaussian starting points.
    seed : int
        Seed of ``numpy.random.default_rng`` for the starts.
    maxiter : int
        L-BFGS iterations per start.

    Returns
    -------
    float
        The lowest value found.

    References
    ----------
    SimRF Lemma A.1, eq (36)-(40).
    """
    from scipy import optimize

    from rfcheck.closed_forms.simrf import equal_norm_conformity

    rng = np.random.default_rng(seed)
    best = math.inf
    for _ in range(starts):
        r = optimize.minimize(
            lambda f: equal_norm_conformity(v, w, d, f.reshape(d, d)),
            rng.standard_normal(d * d),
            method="L-BFGS-B",
            options={"maxiter": maxiter},
        )
        best = min(best, float(r.fun))
    return best


def direction_average_ball(w: Any, v: Any, d: int, bits: int) -> Any:
    """:func:`direction_average` as an Arb ball: Arb's rigorous integral in the polar angle.

    ``int_0^pi e^{w v cos a} sin^{d-2} a da`` (an entire integrand) over its normalisation
    ``sqrt(pi) Gamma((d-1)/2) / Gamma(d/2)``; ``cosh(w v)`` for ``d = 1``.

    Parameters
    ----------
    w, v : float
        The norm of the random vector and of ``v``.
    d : int
        Dimension (>= 1).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing ``E exp(w q . v)``, ``q`` uniform on ``S^{d-1}``.

    References
    ----------
    SimRF appendix A.1, eq (31) and eq (33).
    """
    from flint import acb, arb

    from rfcheck.arb_backend import to_ball, workprec

    with workprec(bits):
        x = to_ball(w) * to_ball(v)
        if d == 1:
            return x.cosh()
        num = acb.integral(lambda a, _an: (x * a.cos()).exp() * a.sin() ** (d - 2), 0, arb.pi(),
                           rel_tol=arb(2) ** -bits, eval_limit=2_000_000).real
        return num / (arb.pi().sqrt() * (arb(d - 1) / 2).gamma() / (arb(d) / 2).gamma())


def alternating_k2_series(z: Any, d: int, dps: int) -> tuple[Any, Any]:
    """``-sum_k (-z^2)^k / k! k(k-1)/(2d)``, summed term by term in mpmath with guard digits.

    The terms peak near ``k = z^2`` at about ``e^{z^2}`` and cancel to ``~ z^4 e^{-z^2}``: the sum
    runs at ``dps + 10 + z^2`` digits (:func:`series`).

    Parameters
    ----------
    z : float or mpmath.mpf
        ``|x - y|``.
    d : int
        Dimension (>= 1).
    dps : int
        Digits asked for.

    Returns
    -------
    value, error : mpmath.mpf
        The sum and an error bar of ``10^(3 - dps)`` relative plus ``10^-dps``.

    References
    ----------
    SimRF appendix A.9, eq (85) (the left-hand side); :func:`alternating_k2_series_ball` is its ball.
    """
    z = _MF(z)
    with mpmath.workdps(dps + 10 + int(float(z) ** 2)):
        s = -series(lambda k: (-z * z) ** k / mpmath.factorial(k) * k * (k - 1) / (2 * d))
    return s, abs(s) * _MF(10) ** (-dps + 3) + _MF(10) ** (-dps)


def gamma_ratio_product(d: int, k: int) -> Any:
    """``prod_{j<k} (d+j)/(d+2j) = 2^-k Gamma(k+d) Gamma(d/2) / (Gamma(k+d/2) Gamma(d))``, in mpmath.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    k : int
        Number of factors (>= 0).

    Returns
    -------
    mpmath.mpf
        The product at the working precision (1 for ``k = 0``).

    References
    ----------
    SimRF appendix A.7, eq (70) and appendix A.9, eq (84).
    """
    return mpmath.fprod(_MF(d + j) / (d + 2 * j) for j in range(k))


def rff_mse_ratio_exact(z: Any, d: int, m: int) -> Any:
    """``MSE_ORF / MSE_IID = 1 - 2(m-1) G / (1 - e^{-z^2})^2`` for RFFs, ``G = e^{-z^2} - 1F1(d; d/2; -z^2/2)``.

    The mpmath twin of :func:`rfcheck.closed_forms.simrf.rff_mse_ratio_orf_iid` (float64), at the
    working precision.

    Parameters
    ----------
    z : mpmath.mpf
        ``|x - y|`` (> 0).
    d, m : int
        Dimension and number of features (``m <= d``).

    Returns
    -------
    mpmath.mpf
        The ratio.

    References
    ----------
    SimRF eq (74), (76) and eq (77) with the denominator ``(1 - e^{-z^2})^2``; Cor 4.6, eq (27).
    """
    e = mpmath.exp(-z * z)
    g = e - mpmath.hyp1f1(d, _MF(d) / 2, -z * z / 2)
    return 1 - 2 * (m - 1) * g / (1 - e) ** 2


def simrf_plus_draw(d: int, v: float, seed: int) -> tuple[float, float, np.ndarray]:
    """Conformities (eq (12), fixed vectors) of the SimRF and SimRF+ arrangements of one draw of norms.

    Parameters
    ----------
    d : int
        Dimension (``m = d`` rows).
    v : float
        ``|x + y|``.
    seed : int
        Seed of the draw (the same norms for both arrangements).

    Returns
    -------
    rho_plus, rho_simrf : float
        :func:`rfcheck.closed_forms.simrf.conformity_of_ensemble` of the SimRF+ and the SimRF ensemble.
    norms : numpy.ndarray
        The row norms of the draw.

    References
    ----------
    SimRF sec 3.2, eq (12)-(15) and Fig. 4.
    """
    from rfcheck.closed_forms.simrf import conformity_of_ensemble
    from rfcheck.engine import couplings

    W0 = couplings.sample_ensemble("simrf", d, d, seed=seed)
    W1, _ = couplings.sample_simrf_plus(d, d, seed=seed)
    return conformity_of_ensemble(W1, v), conformity_of_ensemble(W0, v), np.linalg.norm(W0, axis=1)


def gamma_ratio_product_exact(d: int, k: int) -> Any:
    """``prod_{j<k} (d+j)/(d+2j)`` as an exact rational (``flint.fmpq``).

    The exact twin of :func:`gamma_ratio_product`: a ball made from it (``flint.arb(q)``) encloses
    the product rigorously, so checks built on it certify.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    k : int
        Number of factors (>= 0).

    Returns
    -------
    flint.fmpq
        The product (1 for ``k = 0``).

    References
    ----------
    SimRF appendix A.7, eq (70) and appendix A.9, eq (84).

    Examples
    --------
    >>> gamma_ratio_product_exact(4, 3)  # 4/4 * 5/6 * 6/8
    5/8
    """
    from flint import fmpq

    out = fmpq(1)
    for j in range(k):
        out *= fmpq(d + j, d + 2 * j)
    return out


def rff_mse_ratio_exact_ball(z: Any, d: int, m: int, bits: int) -> Any:
    """:func:`rff_mse_ratio_exact` on Arb balls: ``1 - 2(m-1) G / (1 - e^{-z^2})^2``,
    ``G = e^{-z^2} - 1F1(d; d/2; -z^2/2)`` with Arb's rigorous confluent hypergeometric function.

    Parameters
    ----------
    z : float or flint.arb
        ``|x - y|`` (> 0); a float is taken as exact.
    d, m : int
        Dimension and number of features (``m <= d``).
    bits : int
        Working precision; the difference ``G`` is formed with ``bits + 20`` guard bits.

    Returns
    -------
    flint.arb
        A ball containing the exact ratio.

    References
    ----------
    SimRF eq (74), (76) and eq (77) with the denominator ``(1 - e^{-z^2})^2``; Cor 4.6, eq (27).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec

    with workprec(bits + 20):
        x = to_ball(z) ** 2
        e = (-x).exp()
        g = e - (-x / 2).hypgeom_1f1(d, arb(d) / 2)
        return 1 - 2 * (m - 1) * g / (-x).expm1() ** 2


def pdf_angle_change_of_variables_ball(w: Any, d: int, c: Any, bits: int) -> Any:
    """:func:`pdf_angle_change_of_variables` on Arb balls: the same change of variables, made smooth.

    With ``r_1 = T sin(alpha)``, ``T = w / sqrt(1 - c^2)``, the root factor ``w / sqrt(w^2 - r_1^2
    (1 - c^2)) dr_1`` becomes ``T dalpha`` and the two roots are ``r_2 = T sin(theta -+ alpha)``
    (``c = cos theta``, up to sign), so that

    ``p(w) = T int_0^{min(theta, pi/2)} chi_d(T sin a) chi_d(T sin(theta - a)) da
    + T int_{pi - theta}^{pi/2} chi_d(T sin a) chi_d(-T sin(theta + a)) da``

    (the second only for ``c < 0``): integrals of entire functions over finite intervals (mapped
    onto ``[0, 1]``), enclosed by Arb's rigorous integration
    (:func:`rfcheck.references.gaussian.integral_ball`); no tail, no truncation.

    Parameters
    ----------
    w : float or flint.arb
        The point (> 0); a float is exact.
    d : int
        Dimension (>= 1).
    c : float or flint.arb
        ``cos theta`` in ``(-1, 1)``.
    bits : int
        Target relative accuracy (bits).

    Returns
    -------
    flint.arb
        A ball containing the density.

    Raises
    ------
    ValueError
        If the sign of ``cos theta`` cannot be decided (not an exact number).

    References
    ----------
    SimRF Lemma 4.2, eq (20) and appendix A.5, eq (54)-(56) (the law of ``w_ij`` for rows at a
    fixed angle).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec
    from rfcheck.references.gaussian import integral_ball

    with workprec(bits + 20):
        w, c = to_ball(w), to_ball(c)
        s = (1 - c * c).sqrt()
        top = w / s
        norm = (2 ** (arb(d) / 2 - 1) * (arb(d) / 2).gamma()) ** 2

        def chi2(r1: Any, r2: Any) -> Any:
            return (r1 * r2) ** (d - 1) * (-(r1 * r1 + r2 * r2) / 2).exp() / norm

        def piece(lo: Any, hi: Any, sign: int) -> Any:
            # alpha = lo + (hi - lo) u, u in [0, 1]; r_2 = T sin(theta - alpha) (sign +1) or -T sin(theta + alpha)
            def f(u: Any, analytic: bool) -> Any:
                a = lo + (hi - lo) * u
                r2 = top * (s * a.cos() - c * a.sin()) if sign > 0 else -top * (s * a.cos() + c * a.sin())
                return (hi - lo) * chi2(top * a.sin(), r2)

            return integral_ball(f, 0, 1, bits).real

        half_pi = arb.pi() / 2
        theta = c.acos()
        if c >= 0:
            out = piece(arb(0), theta, 1)
        elif c < 0:
            out = piece(arb(0), half_pi, 1) + piece(arb.pi() - theta, half_pi, -1)
        else:
            raise ValueError("cos theta must be decided as >= 0 or < 0 (an exact number)")
        return top * out


def random_unit_rows_ball(m: int, dim: int, seed: int, bits: int) -> list[list[Any]]:
    """:func:`random_unit_rows` as Arb balls: the same Gaussian draws (exact floats) normalised on balls.

    Each ball row contains the exact unit vector ``g_i / |g_i|`` of the float64 draw ``g_i``, so any
    algebraic expression evaluated on these balls contains its exact value at those unit vectors.

    Parameters
    ----------
    m, dim : int
        Number and dimension of the vectors.
    seed : int
        Seed of ``numpy.random.default_rng`` (the draws of :func:`random_unit_rows`).
    bits : int
        Working precision.

    Returns
    -------
    list of list of flint.arb
        The rows.

    References
    ----------
    SimRF appendix A.2, eq (39) (sums over normalised directions).
    """
    from flint import arb

    from rfcheck.arb_backend import workprec

    g = np.random.default_rng(int(seed)).standard_normal((m, dim))
    with workprec(bits):
        rows = []
        for i in range(m):
            r = [arb(float(x)) for x in g[i]]
            n = sum((x * x for x in r), arb(0)).sqrt()
            rows.append([x / n for x in r])
    return rows


def orf_conformity_chi_ball(v: Any, d: int, bits: int) -> Any:
    """``rho_ORF = E 0F1(; d/2; v^2 w^2 / 4)``, ``w ~ chi_{2d}``, as a ball: the definition eq (10) for an
    orthogonal pair (``|w_i + w_j|^2 = |w_i|^2 + |w_j|^2``), integrated rigorously.

    :func:`rfcheck.references.gaussian.chi_expectation_ball` with the growth bound ``0F1(; d/2;
    v^2 w^2/4) <= cosh(v w) <= e^{v w}`` (term by term, ``(d/2)_k >= (1/2)_k``, ``d >= 1``): a finite
    Arb integral plus a proven Gaussian tail; no series of the paper is used.

    Parameters
    ----------
    v : float or flint.arb
        ``|x + y|`` (>= 0); a float is exact.
    d : int
        Dimension (>= 1).
    bits : int
        Target relative accuracy (bits).

    Returns
    -------
    flint.arb
        A ball containing ``rho_ORF``.

    References
    ----------
    SimRF eq (10) and appendix A.5, eq (58) (the ``chi_{2d}`` law of ``w_ij`` for orthogonal rows).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec
    from rfcheck.references.gaussian import chi_expectation_ball

    with workprec(bits + 20):
        vb, b = to_ball(v), arb(d) / 2

        def f(w: Any, analytic: bool) -> Any:
            return (vb * vb * w * w / 4).hypgeom_0f1(b)

        # log_scale: e^{v^2/2} <= rho_ORF, an underestimate (truncation errors then relatively smaller);
        # the growth rate is v, rounded up (1e-9 covers the float conversion of the ball's upper end)
        return chi_expectation_ball(f, 2 * d, growth=(1, float(vb.upper()) + 1e-9),
                                    log_scale=float(vb.mid()) ** 2 / 2, prec=bits)


def prf_orthogonality_gap_ball(v: Any, d: int, m: int, sq: Any, bits: int) -> Any:
    """``MSE_IID - MSE_ORF = e^{-2 sq} (m-1)/m (e^{v^2} - rho_ORF)`` as a ball, ``rho_ORF`` from the
    definition eq (10) by :func:`orf_conformity_chi_ball` (a ``chi_{2d}`` expectation; no series or
    hypergeometric closed form of the paper is used).

    Parameters
    ----------
    v : float or flint.arb
        ``|x + y|`` (>= 0); a float is exact.
    d, m : int
        Dimension and number of features (``m <= d``: one orthogonal block).
    sq : float or flint.arb
        ``|x|^2 + |y|^2``.
    bits : int
        Target relative accuracy (bits) of ``rho_ORF``.

    Returns
    -------
    flint.arb
        A ball containing the gap.

    References
    ----------
    SimRF Corollary 4.4, eq (25), and appendix A.7, eq (68)-(69) (the difference of the two MSEs,
    eq (10) for the ORF conformity).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec

    with workprec(bits + 20):
        vb = to_ball(v)
        rho = orf_conformity_chi_ball(v, d, bits)
        return (-2 * to_ball(sq)).exp() * arb(m - 1) / m * ((vb * vb).exp() - rho)


def rff_orf_covariance_ball(z: Any, d: int, bits: int) -> Any:
    """``E cos(w_ij . z)`` for an orthogonal pair of Gaussian rows as a ball: ``|w_ij| ~ chi_{2d}``
    (appendix A.5) and the average over a uniform direction of ``cos(r q . z)`` is
    ``0F1(; d/2; -r^2 z^2/4) = Gamma(d/2) (r z/2)^{1-d/2} J_{d/2-1}(r z)``; the ``chi_{2d}`` expectation
    by :func:`rfcheck.references.gaussian.chi_expectation_ball` (finite Arb integral plus a proven
    Gaussian tail) with the growth bound ``|0F1(; d/2; -x^2/4)| <= 1`` (it is the characteristic
    function ``E cos(x q_1)`` of one coordinate of a uniform unit vector, ``d >= 1``).  The rigorous
    face of :func:`rff_orf_covariance`; the series of eq (26) is not used.

    Parameters
    ----------
    z : float or flint.arb
        ``|z|`` (>= 0); a float is exact.
    d : int
        Dimension (>= 1).
    bits : int
        Target absolute accuracy (bits; the value is at most 1 in magnitude).

    Returns
    -------
    flint.arb
        A ball containing the covariance.

    References
    ----------
    SimRF Thm 4.5, eq (26), and appendix A.8, eq (74)-(76).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec
    from rfcheck.references.gaussian import chi_expectation_ball

    with workprec(bits + 20):
        zb, b = to_ball(z), arb(d) / 2

        def f(w: Any, analytic: bool) -> Any:
            return (-(zb * zb * w * w) / 4).hypgeom_0f1(b)

        # log_scale 0: absolute accuracy 2^-bits (|E cos| <= 1; the checks compare on an absolute scale)
        return chi_expectation_ball(f, 2 * d, growth=(1, 0), log_scale=0.0, prec=bits)


def conformity_of_ensemble_ball(W: Any, v: Any, bits: int) -> Any:
    """Eq (12) on Arb balls: ``mean_{i != j} 0F1(; d/2; v^2 |w_i + w_j|^2 / 4)`` for an ensemble ``W`` of
    exact float64 rows.

    The ball twin of :func:`rfcheck.closed_forms.simrf.conformity_of_ensemble` (float64): the squared
    norms are formed exactly on balls and ``0F1`` is Arb's rigorous hypergeometric function.

    Parameters
    ----------
    W : array_like
        The rows ``w_i`` (float64), shape (m, d) with ``m >= 2``.
    v : float or flint.arb
        ``|x + y|`` (>= 0); a float is exact.
    bits : int
        Working precision.

    Returns
    -------
    flint.arb
        A ball containing ``rho`` of the ensemble.

    References
    ----------
    SimRF sec 3.2, eq (12) (the quantity compared in Fig. 4).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec

    W = np.asarray(W, dtype=float)
    m, d = W.shape
    with workprec(bits):
        rows = [[arb(float(x)) for x in r] for r in W]
        x = to_ball(v) ** 2 / 4
        b = arb(d) / 2
        tot = arb(0)
        for i in range(m):
            for j in range(i + 1, m):
                s2 = sum(((a + c) ** 2 for a, c in zip(rows[i], rows[j], strict=True)), arb(0))
                tot += (x * s2).hypgeom_0f1(b)
        return 2 * tot / (m * (m - 1))


def simrf_plus_draw_ball(d: int, v: float, seed: int, bits: int) -> tuple[Any, Any]:
    """:func:`simrf_plus_draw`'s two conformities on Arb balls (the same two ensembles, exact floats).

    Parameters
    ----------
    d : int
        Dimension (``m = d`` rows).
    v : float
        ``|x + y|``.
    seed : int
        Seed of the draw.
    bits : int
        Working precision.

    Returns
    -------
    rho_plus, rho_simrf : flint.arb
        :func:`conformity_of_ensemble_ball` of the SimRF+ and the SimRF ensemble.

    References
    ----------
    SimRF sec 3.2, eq (12)-(15) and Fig. 4.
    """
    from rfcheck.engine import couplings

    W0 = couplings.sample_ensemble("simrf", d, d, seed=seed)
    W1, _ = couplings.sample_simrf_plus(d, d, seed=seed)
    return conformity_of_ensemble_ball(W1, v, bits), conformity_of_ensemble_ball(W0, v, bits)


def angle_conformity_moment_series_ball(v: Any, d: int, c: Any, bits: int) -> Any:
    """``rho_theta = E 0F1(; d/2; v^2 w^2 / 4)`` from the definition eq (10) by exact moments, as a ball.

    ``w^2 = r_1^2 + r_2^2 + 2 c r_1 r_2`` with ``r_1, r_2`` iid ``chi_d`` (moments ``mu_j = E r^j``,
    ``mu_{j+2} = (d + j) mu_j``), so ``E w^{2k} = sum_{a+b+e=k} k!/(a! b! e!) (2c)^e mu_{2a+e} mu_{2b+e}``
    (multinomial expansion) and ``rho_theta = sum_k (v^2/4)^k E w^{2k} / (k! (d/2)_k)``.  The terms are
    non-negative and, as ``w <= r_1 + r_2``, ``E w^{2k} <= 4^k mu_{2k} = 8^k (d/2)_k``, so ``T_k <= (2v^2)^k/k!``:
    past ``K`` the rest is at most ``M_{K+1} / (1 - 2v^2/(K+2))``, ``M_k = (2v^2)^k/k!``.  The alternating
    multinomial sum (``c < 0``) cancels; the working precision is doubled until the ball is
    ``2^-bits``-tight.  The angle integral of eq (21) is not used.

    Parameters
    ----------
    v : float or flint.arb
        ``|x + y|`` (>= 0); a float is exact.
    d : int
        Dimension (>= 1).
    c : float or flint.arb
        ``cos theta`` in ``[-1, 1]``.
    bits : int
        Target relative accuracy (bits).

    Returns
    -------
    flint.arb
        A ball containing ``rho_theta``.

    Raises
    ------
    ValueError
        If no tail bound is reached within 100000 terms.

    References
    ----------
    SimRF eq (10) and Lemma 4.2, eq (21) (the quantity; computed here from the definition's moments).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec

    prec = bits + 64
    for _ in range(6):
        with workprec(prec):
            vb, cb = to_ball(v), to_ball(c)
            x = vb * vb / 4
            bound_x = 2 * vb * vb
            mu = [arb(1), arb(2).sqrt() * (arb(d + 1) / 2).gamma() / (arb(d) / 2).gamma()]
            binom = [[arb(1)]]
            tot, eps = arb(0), arb(2) ** (-bits - 8)
            poch, fac, xk, mk = arb(1), arb(1), arb(1), arb(1)  # (d/2)_k, k!, x^k, (2v^2)^k/k!
            for k in range(100_000):
                while len(mu) <= 2 * k:
                    j = len(mu) - 2
                    mu.append((d + j) * mu[j])
                if k:
                    binom.append([arb(1)] + [binom[k - 1][i - 1] + binom[k - 1][i] for i in range(1, k)] + [arb(1)])
                    poch *= arb(d) / 2 + k - 1
                    fac *= k
                    xk *= x
                    mk *= bound_x / k
                ew = arb(0)
                for e in range(k + 1):
                    inner = sum((binom[k - e][a] * mu[2 * a + e] * mu[2 * (k - e - a) + e] for a in range(k - e + 1)),
                                arb(0))
                    ew += binom[k][e] * (2 * cb) ** e * inner
                tot += xk * ew / (fac * poch)
                m_next, q = mk * bound_x / (k + 1), bound_x / (k + 2)
                if q < arb(1) / 2 and m_next <= eps * abs(tot):
                    tot += arb(0, (m_next / (1 - q)).upper())
                    break
            else:
                raise ValueError("angle_conformity_moment_series_ball: no tail bound within 100000 terms")
            if tot.rad() <= arb(2) ** (-bits) * abs(tot.mid()):
                return tot
        prec *= 2
    return tot


# ---------------------------------------------------------------------------------------------
# Arb enclosures of the printed SimRF series and integrals (the printed sides' ball faces, summed
# or integrated with a proven remainder) and the references of the MSE claims.


def prf_mse_simrf_orf(v: Any, d: int, m: int, dps: int) -> tuple[Any, Any, Any]:
    """``(MSE_SimRF, MSE_ORF, err)`` of the PRF estimator at ``|x|^2 + |y|^2 = 0`` from the closed forms.

    Parameters
    ----------
    v : float
        ``|x + y|``.
    d, m : int
        Dimension and number of features (blocks of ``d`` coupled rows).
    dps : int
        Decimal digits of :func:`rfcheck.closed_forms.simrf.prf_mse` (mpmath face).

    Returns
    -------
    tuple of mpmath.mpf
        Both MSEs and an error bar ``(|a| + |b|) 10^(3 - dps)``.

    Examples
    --------
    >>> a, b, err = prf_mse_simrf_orf(1.0, 4, 4, 30)
    >>> bool(0 < a < b), bool(err < 1e-25)
    (True, True)

    References
    ----------
    SimRF Theorem 3.2, eq (11); Corollary 3.3.
    """
    from rfcheck.closed_forms import simrf as cf

    a = cf.prf_mse(float(v), d, m, 0.0, "simrf", backend="mpmath", dps=dps)
    b = cf.prf_mse(float(v), d, m, 0.0, "orf", backend="mpmath", dps=dps)
    return a, b, (abs(a) + abs(b)) * _MF(10) ** (-dps + 3)


def prf_mse_simrf_orf_ball(v: Any, d: int, m: int, bits: int) -> tuple[Any, Any]:
    """:func:`prf_mse_simrf_orf` on Arb balls (both MSEs are exactly 0 at ``v = 0``).

    ``(first - q (e^{v^2} - rho_c)) / m`` (eq (11), ``|x|^2 + |y|^2 = 0``, ``q`` the coupled pairs per
    feature), ``e^{v^2} - rho_ORF`` and ``rho_ORF - rho_SimRF`` by the Arb faces of
    :func:`rfcheck.closed_forms.simrf.log_prf_orthogonality_gap` and
    :func:`rfcheck.closed_forms.simrf.orf_simrf_conformity_gap` (sums of positive terms).

    Parameters
    ----------
    v : float
        ``|x + y|``, taken as exact.
    d, m : int
        Dimension and number of features.
    bits : int
        Working precision.

    Returns
    -------
    tuple of flint.arb
        Balls of ``(MSE_SimRF, MSE_ORF)``.

    Examples
    --------
    >>> a, b = prf_mse_simrf_orf_ball(1.0, 4, 4, 64)
    >>> x, y, _ = prf_mse_simrf_orf(1.0, 4, 4, 30)
    >>> from flint import arb
    >>> bool(a.overlaps(arb(mpmath.nstr(x, 25)))), float(a.rad()) < 1e-15, bool(a < b)
    (True, True, True)

    References
    ----------
    SimRF Theorem 3.2, eq (11); Corollary 3.3.
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec
    from rfcheck.closed_forms import simrf as cf

    if float(v) == 0:
        return arb(0), arb(0)
    with workprec(bits):
        v2 = to_ball(v) ** 2
        first = v2.exp() * v2.expm1()
        g_orf = to_ball(cf.log_prf_orthogonality_gap(v, d, backend="arb", prec=bits)).exp()
        h = to_ball(cf.orf_simrf_conformity_gap(v, d, backend="arb", prec=bits)).exp()
        q_s, q_o = (arb(cf._n_coupled_pairs(m, d, c)) / m for c in ("simrf", "orf"))
        return (first - q_s * (g_orf + h)) / m, (first - q_o * g_orf) / m


def rff_orthogonality_gap(z: Any, d: int, m: int, dps: int) -> tuple[Any, Any]:
    """``(m-1)/m (e^{-z^2} - E cos(w_ij . z))`` for an ORF pair, the covariance by Bessel quadrature.

    Parameters
    ----------
    z : float or mpmath.mpf
        ``|x - y|``.
    d, m : int
        Dimension and number of features.
    dps : int
        Working precision in decimal digits.

    Returns
    -------
    tuple of mpmath.mpf
        The gap and the error bar ``1e-12`` of :func:`rff_orf_covariance`.

    Examples
    --------
    >>> import mpmath
    >>> val, err = rff_orthogonality_gap(1.0, 3, 2, 30)
    >>> exact = (mpmath.exp(-1) - mpmath.hyp1f1(3, 1.5, -0.5)) / 2
    >>> bool(abs(val - exact) < 1e-12), float(err)
    (True, 1e-12)

    References
    ----------
    SimRF Theorem 4.5, eq (26), appendix A.8.
    """
    zz = _MF(z)
    with mpmath.workdps(dps):
        return _MF(m - 1) / m * (mpmath.exp(-zz * zz) - rff_orf_covariance(zz, d)), _MF(1e-12)


def rff_orthogonality_gap_ball(z: Any, d: int, m: int, bits: int) -> Any:
    """:func:`rff_orthogonality_gap` on Arb balls, the covariance the ``chi_{2d}`` expectation of the
    direction-averaged cosine (:func:`rff_orf_covariance_ball`): independent of the series of eq (26) and
    of its ``1F1`` sum.

    Parameters
    ----------
    z : float or flint.arb
        ``|x - y|``; a float is taken as exact.
    d, m : int
        Dimension and number of features.
    bits : int
        Working precision (20 guard bits are added).

    Returns
    -------
    flint.arb
        A ball containing the gap.

    Examples
    --------
    >>> val, _ = rff_orthogonality_gap(1.0, 3, 2, 30)
    >>> b = rff_orthogonality_gap_ball(1.0, 3, 2, 64)
    >>> abs(float(b.mid()) - float(val)) < 1e-12, float(b.rad()) < 1e-15
    (True, True)

    References
    ----------
    SimRF Theorem 4.5, eq (26), appendix A.8.
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec

    with workprec(bits + 20):
        zb = to_ball(z)
        return arb(m - 1) / m * ((-(zb * zb)).exp() - rff_orf_covariance_ball(z, d, bits))


def rff_mse_ratio_quadrature(z: Any, d: int, m: int, dps: int) -> tuple[Any, Any]:
    """``MSE_ORF / MSE_IIDRF`` of the RFF estimator from eq (74), the ORF pair covariance by Bessel quadrature.

    Parameters
    ----------
    z : float or mpmath.mpf
        ``|x - y|`` (> 0).
    d, m : int
        Dimension and number of features (``m <= d``).
    dps : int
        Working precision in decimal digits.

    Returns
    -------
    tuple of mpmath.mpf
        The ratio and its error bar (the covariance's ``1e-12`` times ``(m-1)/MSE_IID``).

    Examples
    --------
    >>> val, err = rff_mse_ratio_quadrature(1.0, 3, 2, 30)
    >>> bool(abs(val - rff_mse_ratio_exact(mpmath.mpf(1), 3, 2)) < 1e-10), bool(val < 1)
    (True, True)

    References
    ----------
    SimRF appendix A.8-A.9, eq (74), (77).
    """
    zz = _MF(z)
    with mpmath.workdps(dps):
        iid = (1 - mpmath.exp(-zz * zz)) ** 2 / 2
        val = (iid + (m - 1) * (rff_orf_covariance(zz, d) - mpmath.exp(-zz * zz))) / iid
        return val, (m - 1) * _MF(1e-12) / iid


def rff_mse_ratio_ball(z: Any, d: int, m: int, bits: int) -> Any:
    """The ratio ``1 - 2 m gap / (1 - e^{-z^2})^2`` on Arb balls (eq (74), (76)), ``gap`` by
    :func:`rff_orthogonality_gap_ball` (the ``chi_{2d}`` expectation of the direction-averaged cosine, not
    the ``1F1`` of :func:`rff_mse_ratio_exact_ball`).

    Parameters
    ----------
    z : float or flint.arb
        ``|x - y|`` (> 0); a float is taken as exact.
    d, m : int
        Dimension and number of features.
    bits : int
        Working precision (20 guard bits are added).

    Returns
    -------
    flint.arb
        A ball containing ``MSE_ORF / MSE_IIDRF``.

    Examples
    --------
    >>> b = rff_mse_ratio_ball(1.0, 3, 2, 64)
    >>> bool(b.overlaps(rff_mse_ratio_exact_ball(1.0, 3, 2, 64))), float(b.rad()) < 1e-14
    (True, True)

    References
    ----------
    SimRF appendix A.8-A.9, eq (74), (77).
    """
    from rfcheck.arb_backend import to_ball, workprec

    zb = to_ball(z)
    with workprec(bits + 20):
        return 1 - 2 * m * rff_orthogonality_gap_ball(z, d, m, bits) / (-zb * zb).expm1() ** 2


def unit_pair_sum(m: int, dim: int, seed: int, dps: int) -> tuple[Any, Any]:
    """``sum_i sum_{j != i} |u_i + u_j|^2`` for the unit vectors of :func:`random_unit_rows`, summed directly.

    Parameters
    ----------
    m, dim : int
        Number of vectors and their dimension.
    seed : int
        Seed of :func:`random_unit_rows`.
    dps : int
        Working precision in decimal digits.

    Returns
    -------
    tuple of mpmath.mpf
        The double sum and the error bar ``10^(3 - dps) (m^2 + 1)``.

    Examples
    --------
    Two opposite unit vectors (``dim = 1``) give ``|u_1 + u_2|^2 = 0`` or two equal ones ``2 * 4``:

    >>> val, _ = unit_pair_sum(2, 1, 0, 30)
    >>> val in (0, 8)
    True

    References
    ----------
    SimRF appendix A.2, eq (39).
    """
    with mpmath.workdps(dps):
        rows = random_unit_rows(m, dim, seed)
        lhs = mpmath.fsum(
            mpmath.fsum((rows[i][k] + rows[j][k]) ** 2 for k in range(dim))
            for i in range(m)
            for j in range(m)
            if i != j
        )
        return lhs, _MF(10) ** (-dps + 3) * (m * m + 1)


def unit_pair_sum_ball(m: int, dim: int, seed: int, bits: int) -> Any:
    """:func:`unit_pair_sum` on Arb balls, on the same unit vectors (:func:`random_unit_rows_ball`).

    Parameters
    ----------
    m, dim : int
        Number of vectors and their dimension.
    seed : int
        Seed of :func:`random_unit_rows_ball`.
    bits : int
        Working precision.

    Returns
    -------
    flint.arb
        A ball containing the double sum.

    Examples
    --------
    >>> val, _ = unit_pair_sum(5, 3, 7, 30)
    >>> b = unit_pair_sum_ball(5, 3, 7, 64)
    >>> abs(float(b.mid()) - float(val)) < 1e-12
    True

    References
    ----------
    SimRF appendix A.2, eq (39).
    """
    from flint import arb

    from rfcheck.arb_backend import workprec

    with workprec(bits):
        rows = random_unit_rows_ball(m, dim, seed, bits)
        return sum(
            (
                sum(((rows[i][k] + rows[j][k]) ** 2 for k in range(dim)), arb(0))
                for i in range(m)
                for j in range(m)
                if i != j
            ),
            arb(0),
        )


def remainder_growth_sides_ball(r1: Any, r2: Any) -> Any:
    """``(r2 / r1, 2)`` as balls for a remainder-growth check (an ``O(1/d^2)`` remainder ``r`` scaled by
    ``d^2`` grows by at most 2 from ``d`` to ``4 d``), ``(0, 2)`` for an exactly vanishing ``r1`` (the
    convention of the mpmath side), or why the balls cannot decide.

    Parameters
    ----------
    r1, r2 : flint.arb, flint.fmpq, Ball or number
        The scaled remainders at ``d`` and at the larger dimension.

    Returns
    -------
    tuple of flint.arb or str
        The two sides of ``growth <= 2``, or a reason (``r1`` not separated from 0).

    Examples
    --------
    >>> from flint import arb, fmpq
    >>> g, two = remainder_growth_sides_ball(arb(4), fmpq(6))
    >>> float(g.mid()), float(two.mid())
    (1.5, 2.0)
    >>> remainder_growth_sides_ball(arb(0, 1), arb(1))[:20]
    'the remainder ball a'

    References
    ----------
    SimRF appendix A.9, eq (81)-(84), Corollary 4.6.
    """
    from flint import arb, fmpq

    from rfcheck.arb_backend import to_ball

    r1, r2 = (arb(r) if isinstance(r, fmpq) else to_ball(getattr(r, "v", r)) for r in (r1, r2))
    if r1.is_exact() and r1.is_zero():
        return arb(0), arb(2)
    if not r1 > 0:
        return "the remainder ball at d contains 0: the growth ratio has no finite ball"
    return r2 / r1, arb(2)


def pair_conformity_closed_form(v: Any, d: int, coupling: str, dps: int) -> tuple[Any, Any]:
    """``rho`` of a coupled ORF or SimRF pair from the hypergeometric closed form, with an error bar.

    Parameters
    ----------
    v : float or mpmath.mpf
        ``|x + y|``.
    d : int
        Dimension.
    coupling : {"orf", "simrf"}
        The pair's coupling.
    dps : int
        Target decimal digits (the closed form runs at ``dps + 10``).

    Returns
    -------
    tuple of mpmath.mpf
        The conformity and the error bar ``|rho| 10^-(dps + 3)``.

    Examples
    --------
    >>> val, err = pair_conformity_closed_form(1.0, 4, "orf", 30)
    >>> with mpmath.workdps(40):
    ...     bool(abs(val - mpmath.hyp1f1(4, 2, mpmath.mpf(1) / 2)) < 1e-30), bool(err < 1e-32)
    (True, True)

    References
    ----------
    SimRF Theorem 4.3, eq (23), (24) (:func:`rfcheck.closed_forms.simrf.pair_conformity`).
    """
    from rfcheck.closed_forms import simrf as cf

    val = cf.pair_conformity(_MF(v), d, coupling, backend="mpmath", dps=dps + 10)
    return val, abs(val) * _MF(10) ** (-dps - 3)


def eq10_pair_quadrature(v: Any, d: int, coupling: str) -> tuple[Any, Any]:
    """``rho`` of a coupled ORF (``cos theta = 0``) or SimRF (``cos theta = -1/(d-1)``) pair from the definition
    eq (10) by :func:`eq10_quadrature`, as mpmath numbers (``(nan, inf)`` where the quadrature is not finite).

    Parameters
    ----------
    v : float
        ``|x + y|``.
    d : int
        Dimension (>= 2).
    coupling : {"orf", "simrf"}
        The pair's coupling.

    Returns
    -------
    tuple of mpmath.mpf
        The conformity and the quadrature's error bar.

    Examples
    --------
    >>> val, err = eq10_pair_quadrature(1.0, 4, "orf")
    >>> bool(abs(val - mpmath.hyp1f1(4, 2, 0.5)) < 1e-12), bool(err < 1e-10)
    (True, True)

    References
    ----------
    SimRF eq (10); Theorem 4.3.
    """
    c = 0.0 if coupling == "orf" else -1.0 / (d - 1)
    val, err = eq10_quadrature(float(v), d, c)
    if not math.isfinite(val):
        return mpmath.nan, mpmath.inf
    return _MF(val), _MF(err)


def angle_conformity_hyp1f1_integral_ball(v: Any, d: int, c: Any, bits: int) -> Any:
    """``rho_theta(v)`` on balls as a ``phi``-integral of ``1F1``: ``2^d Gamma(d)/(2^{d-1} Gamma(d/2)^2)
    int_0^{pi/2} (sin phi cos phi)^{d-1} 1F1(d; d/2; v^2 s/2) dphi``, ``s = 1 + sin 2phi cos theta``.

    This is eq (10) at a fixed angle with the norms integrated in polar coordinates (``w``, ``phi``): for
    ``s > 0`` (``|cos theta| < 1``) the ``w``-integral of each term is a Gaussian moment, ``int_0^inf
    w^{2k+2d-1} e^{-w^2/(2s)} dw = (2s)^{k+d} Gamma(k+d)/2``; the terms being positive the ``k``-sum and the
    integrals exchange (Tonelli), ``s^{-d} (2s)^d = 2^d``, and ``Gamma(k+d)/Gamma(k+d/2) = Gamma(d)/Gamma(d/2)
    (d)_k/(d/2)_k`` sums to Arb's rigorous ``1F1``.  The integrand is entire in ``phi``; the integral over
    ``[0, pi/2]`` is :func:`rfcheck.references.simrf_proofs.quarter_period_integral_ball` (no tail).

    Parameters
    ----------
    v : float or flint.arb
        ``|x + y|``, taken exactly.
    d : int
        Dimension (>= 1).
    c : float or flint.arb
        ``cos theta``, ``|c| < 1`` (``s > 0`` on the whole interval), taken exactly.
    bits : int
        The working precision (the integral runs with 20 guard bits).

    Returns
    -------
    flint.arb
        An enclosure of ``rho_theta(v)``.

    Examples
    --------
    At ``cos theta = 0`` (an orthogonal pair) it is ``rho_ORF = 1F1(d; d/2; v^2/2)``, eq (23):

    >>> b = angle_conformity_hyp1f1_integral_ball(1.0, 4, 0.0, 64)
    >>> bool(abs(b.mid() - float(mpmath.hyp1f1(4, 2, 0.5))) < 1e-14), bool(b.rad() < 1e-14)
    (True, True)

    References
    ----------
    SimRF eq (10), appendix A.6 eq (61) (the double integral this evaluates, its ``w``-integral done exactly).
    """
    from flint import arb

    from rfcheck.arb_backend import workprec
    from rfcheck.references.simrf_proofs import quarter_period_integral_ball

    with workprec(bits):
        vb, cb = arb(v), arb(c)
        half = arb(d) / 2
        coef = arb(2) ** d * arb(d).gamma() / (arb(2) ** (d - 1) * half.gamma() ** 2)

        def inner(ph: Any, _analytic: bool) -> Any:
            s = 1 + (2 * ph).sin() * cb
            return (ph.sin() * ph.cos()) ** (d - 1) * coef * (vb * vb * s / 2).hypgeom_1f1(d, half)

        return quarter_period_integral_ball(inner, bits)


def rotated_ensemble_conformity(ctx: Any, U: list[list[Any]], v: Any, w: Any, d: int) -> Any:
    """``mean_{i != j} E exp(w (u_i + u_j) . R v)`` over a uniform rotation ``R`` for unit rows ``u_i`` of equal
    norm ``w``, on a context: per pair the direction average ``E exp(w |u_i + u_j| v q_1)``, ``q`` uniform on
    ``S^{d-1}``, by :func:`direction_average` (mpmath) or on balls by
    :func:`rfcheck.references.gaussian.sphere_average_ball` (``acb.integral``).

    Parameters
    ----------
    ctx : Backend
        :data:`rfcheck.backends.MP` or :data:`rfcheck.arb_backend.ARB`.
    U : list of list
        ``m >= 2`` unit rows of length ``d``, numbers of the context.
    v, w : number of the context
        ``|v|`` and the common norm.
    d : int
        Dimension (>= 1).

    Returns
    -------
    number of the context
        The RF-conformity ``rho`` of the equal-norm ensemble (the estimand ``mean_{i != j} E b_i b_j``).

    Examples
    --------
    Two antipodal rows (``u_1 + u_2 = 0``) give 1; an orthogonal pair gives ``E exp(sqrt(2) w v q_1)``:

    >>> from rfcheck.backends import MP
    >>> one = [[MP.num(1), MP.num(0)], [MP.num(-1), MP.num(0)]]
    >>> float(rotated_ensemble_conformity(MP, one, MP.num(1), MP.num(2), 2))
    1.0
    >>> orth = [[MP.num(1), MP.num(0)], [MP.num(0), MP.num(1)]]
    >>> val = rotated_ensemble_conformity(MP, orth, MP.num(1), MP.num(1), 2)  # d = 2: I_0(sqrt 2)
    >>> bool(abs(val - mpmath.besseli(0, mpmath.sqrt(2))) < 1e-12)
    True

    References
    ----------
    SimRF eq (10), appendix A.2 eq (36) (the estimand of a rotated equal-norm ensemble).
    """
    m = len(U)
    tot = ctx.num(0)
    for i, j in itertools.combinations(range(m), 2):
        s = ctx.sqrt(ctx.fsum(*((a + b) ** 2 for a, b in zip(U[i], U[j], strict=True))))
        if ctx.name == "arb":
            from flint import ctx as flint_ctx

            from rfcheck.arb_backend import Ball
            from rfcheck.references.gaussian import sphere_average_ball

            x = (w * s * v).v
            tot += 2 * Ball(sphere_average_ball(lambda t, _a, x=x: (x * t).exp(), d, flint_ctx.prec))
        else:
            tot += 2 * direction_average(w * s, v, d)[0]
    return tot / (m * (m - 1))


def rotated_configuration_pair_products(U: np.ndarray, v: float, n: int, seed: int) -> np.ndarray:
    """``n`` samples of ``mean_{i != j} b_i b_j``, ``b_i = exp(w_i . v)``, ``w_i = r_i R u_i`` with i.i.d. ``chi_d``
    norms ``r_i`` and a uniform rotation ``R`` of the fixed unit rows ``u_i`` (``R^T v_hat`` uniform on the sphere).

    Parameters
    ----------
    U : numpy.ndarray
        ``(m, d)`` unit rows, ``m >= 2``.
    v : float
        ``|v|``.
    n : int
        Number of samples.
    seed : int
        Seed of ``numpy.random.default_rng`` (norms drawn first, then the directions).

    Returns
    -------
    numpy.ndarray
        The ``n`` samples; their mean estimates the RF-conformity of the configuration.

    Examples
    --------
    An orthogonal block: each pair is an ORF pair, ``rho_ORF = 1F1(d; d/2; v^2/2)`` (eq (23)):

    >>> s = rotated_configuration_pair_products(np.eye(3), 0.5, 200_000, 1)
    >>> bool(abs(s.mean() - float(mpmath.hyp1f1(3, 1.5, 0.125))) < 5 * s.std() / np.sqrt(s.size))
    True

    References
    ----------
    SimRF eq (10), appendix A.2 eq (41) (the estimand for i.i.d. norms and a fixed configuration).
    """
    m, d = U.shape
    rng = np.random.default_rng(seed)
    r = np.sqrt(rng.chisquare(d, size=(n, m)))
    q = rng.standard_normal((n, d))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    b = np.exp(v * r * (q @ U.T))
    return (b.sum(axis=1) ** 2 - (b * b).sum(axis=1)) / (m * (m - 1))

"""References for the Hybrid Random Features paper (Choromanski et al., ICLR 2022), on any context.

Every function takes a number-system context first (``ctx``: :data:`rfcheck.backends.MP`,
:data:`rfcheck.backends.FP` or the ball context :data:`rfcheck.arb_backend.ARB`), so that one
definition gives the mpmath value and, on balls, a rigorous enclosure.  The moments are exact:
they come from the Gaussian moment-generating function ``E exp(b g) = exp(b^2/2)``
(``g ~ N(0, 1)``, HRF Lemma 2.4) and from the binomial moments of the angular ``lambda``
(HRF eq (42)-(43)); no quadrature, series or optimiser enters, so on balls the radius is an
honest error bound.

Notation (HRF sec 2): ``z = x + y``, ``Delta = x - y``, ``SM(x, y) = exp(x.y)``,
``Y = cosh(w.z)``, ``Z = cos(w.Delta)`` with ``w ~ N(0, I_d)``; ``SM^++_m = exp(-(|x|^2 +
|y|^2)/2) mean(Y)``, ``SM^trig_m = exp((|x|^2 + |y|^2)/2) mean(Z)`` over ``m`` projections.

:func:`rfcheck.arb_backend.on_balls` evaluates one of these on exact input balls at a given precision.

Besides these exact references, the module holds the generic mpmath numerics the HRF claims
share (no context argument, no enclosure): :func:`mp_max_on_interval` (grid + golden section),
:func:`mp_bracketed_root`, :func:`mp_interior_local_maxima`, :func:`sign_pattern_margin`,
:func:`quad_gaussian_exp_dot` (the quadrature alternative to Lemma 2.4's closed form) and
:func:`grid_argmax` (float64); and the moments with error bars the claims compare against:
the closed forms at raised precision or the same expectations by 1-d quadrature
(:func:`base_moments_with_error`, :func:`gauss_lambda_moments_with_error`,
:func:`feature_exp_moments_quad`, :func:`cexp_variance_quad`, :func:`sgn_product_mean_quad`,
:func:`angular_lambda_moments_binomial`) and the error bookkeeping of the hybrid's moment
expansion (:func:`hybrid_moments_with_error`, :func:`hybrid_mse_with_error`,
:func:`hybrid_variance_with_error`, :func:`hybrid_variance_terms_with_error`); the real system of
eq (18) and its null space (:func:`ce_real_system`, :func:`real_null_space`).

Ball twins of some of these numerics, with rigorous radii: :func:`sgn_product_mean_ball` (the sign
product integrated exactly between its breakpoints), :func:`feature_exp_moments_ball` (Arb quadrature
with proven Gaussian tails), :func:`derivative_ball` (a derivative on Arb power series),
:func:`max_on_interval_ball` (a maximum over an interval by branch and bound) and
:func:`interior_local_maxima_balls` (every interior local maximum, from the derivative's signs).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

from rfcheck.arb_backend import on_balls
from rfcheck.backends import num

__all__ = [
    "angular_lambda_moments",
    "angular_lambda_moments_binomial",
    "angular_lambda_moments_with_error",
    "angular_lambda_on_draws",
    "angular_log_max_rel_error_ball",
    "angular_rel_error_argmax",
    "angular_rel_error_sqrt_limit",
    "base_estimator_mean_with_error",
    "base_estimator_mse",
    "base_max_rel_error",
    "base_moments",
    "base_moments_quad",
    "base_moments_quad_ball",
    "base_moments_with_error",
    "base_rel_error_ball",
    "base_rel_error_end_ball",
    "base_rel_error_limit",
    "base_rel_error_with_error",
    "ce_real_solutions_max_residual",
    "ce_real_system",
    "cexp_mean_quad",
    "cexp_mgf_quad",
    "cexp_scalar_on_draws",
    "cexp_variance_quad",
    "cexp_vectors_ball",
    "derivative_ball",
    "exp_dot_mean_ball",
    "exp_dot_mean_quad",
    "exp_dot_sample_variance_quad",
    "feature_exp_moments_ball",
    "feature_exp_moments_quad",
    "gauss_lambda_moments",
    "gauss_lambda_moments_quad",
    "gauss_lambda_moments_with_error",
    "gauss_lambda_on_draws",
    "gauss_lambda_same_length",
    "gaussian_exp_dot_ball",
    "grid_argmax",
    "hrf_feature_dim",
    "hrf_feature_dim_exponent",
    "hull_of_balls",
    "hybrid_moments",
    "hybrid_moments_quad_ball",
    "hybrid_moments_with_error",
    "hybrid_mse",
    "hybrid_mse_with_error",
    "hybrid_variance",
    "hybrid_variance_terms",
    "hybrid_variance_terms_with_error",
    "hybrid_variance_with_error",
    "increasing_root_ball",
    "inf_diagonal_residual_sq",
    "interior_local_maxima_balls",
    "interval_max_ball",
    "interval_max_bounds",
    "lambda_estimator_variance",
    "lambda_estimator_variance_ball",
    "local_maximiser_balls",
    "log_rel_error_hybrid_same_length",
    "max_bounds_0_pi",
    "max_of_balls",
    "max_on_interval_ball",
    "mp_bracketed_root",
    "mp_interior_local_maxima",
    "mp_max_on_interval",
    "pair_geometry",
    "positive_rho_features_mean",
    "quad_gaussian_exp_dot",
    "real_null_space",
    "same_length_distance_sq",
    "sgn_product_mean_ball",
    "sgn_product_mean_quad",
    "sign_feature_lambda_mean",
    "sign_feature_lambda_mean_ball",
    "sign_pattern_margin",
    "sign_pattern_margin_ball",
    "sm_pos_on_draws",
    "sm_trig_on_draws",
    "theta_sin_theta_root",
    "theta_sin_theta_root_ball",
    "two_point_limit",
]


def pair_geometry(ctx: Any, nx: Any, ny: Any, theta: Any) -> dict[str, Any]:
    """``|x|^2, |y|^2, |x + y|^2, |x - y|^2, x.y`` and ``SM = exp(x.y)`` of a pair at angle ``theta``.

    The squared norms of ``x +- y`` are written without cancellation:
    ``(|x| - |y|)^2 + 4 |x||y| cos^2(theta/2)`` (resp. ``sin^2``).

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    nx, ny : number
        ``|x|, |y| >= 0``.
    theta : number
        The angle between ``x`` and ``y``, in ``[0, pi]``.

    Returns
    -------
    dict
        Keys ``x2, y2, z2, d2, xy, sm``.

    Examples
    --------
    >>> from rfcheck.backends import MP
    >>> g = pair_geometry(MP, mpmath.mpf(1), mpmath.mpf(2), mpmath.mpf(0))
    >>> float(g["z2"]), float(g["d2"]), float(g["xy"])
    (9.0, 1.0, 2.0)
    """
    nx, ny, theta = num(ctx, nx), num(ctx, ny), num(ctx, theta)
    z2 = (nx - ny) ** 2 + 4 * nx * ny * ctx.cos(theta / 2) ** 2
    d2 = (nx - ny) ** 2 + 4 * nx * ny * ctx.sin(theta / 2) ** 2
    xy = nx * ny * ctx.cos(theta)
    return {"x2": nx**2, "y2": ny**2, "z2": z2, "d2": d2, "xy": xy, "sm": ctx.exp(xy)}


def base_moments(ctx: Any, nx: Any, ny: Any, theta: Any) -> tuple[Any, Any, Any, Any, Any]:
    """``E Y, E Y^2, E Z, E Z^2, E YZ`` for one projection (HRF sec 2, Lemma 2.2's moments).

    From the Gaussian MGF: ``E cosh(w.z) = exp(|z|^2/2)``, ``E cosh^2 = (1 + exp(2|z|^2))/2``,
    ``E cos(w.Delta) = exp(-|Delta|^2/2)``, ``E cos^2 = (1 + exp(-2|Delta|^2))/2``, and
    ``E[cosh(w.z) cos(w.Delta)] = Re E exp(w.(z + i Delta)) = Re exp((z + i Delta)^2/2)
    = exp((|z|^2 - |Delta|^2)/2) cos(z.Delta) = exp(2 x.y) cos(|x|^2 - |y|^2)`` (the sine
    part of ``cosh(a) cos(b) = Re(cosh(a + i b))``-type products has mean zero by symmetry
    ``w -> -w``).  That last closed form is HRF eq (37) itself (claim ``hrf.eq37``): it is
    tested here against 1-d quadratures of the defining expectation, and the claims of eq (37)
    and (38) keep their own quadrature/decomposition references rather than this one.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    nx, ny, theta : number
        The pair (:func:`pair_geometry`).

    Returns
    -------
    tuple
        ``(E Y, E Y^2, E Z, E Z^2, E YZ)``.
    """
    g = pair_geometry(ctx, nx, ny, theta)
    ey = ctx.exp(g["z2"] / 2)
    ey2 = (1 + ctx.exp(2 * g["z2"])) / 2
    ez = ctx.exp(-g["d2"] / 2)
    ez2 = (1 + ctx.exp(-2 * g["d2"])) / 2
    eyz = ctx.exp(2 * g["xy"]) * ctx.cos(g["x2"] - g["y2"])
    return ey, ey2, ez, ez2, eyz


def hybrid_moments(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any,
                   base: tuple[Any, Any, Any, Any, Any] | None = None) -> dict[str, Any]:
    """Moments of the two base estimators with ``m`` projections (HRF appendix C, eq (31)-(38)).

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    nx, ny, theta : number
        The pair.
    m : int
        Number of random projections.
    base : tuple, optional
        ``(E Y, E Y^2, E Z, E Z^2, E YZ)`` to use instead of :func:`base_moments` (e.g. the same
        expectations by quadrature, for an independent cross-check); default: :func:`base_moments`.

    Returns
    -------
    dict
        ``ES1, ES1sq`` (``SM^++_m``), ``ES2, ES2sq`` (``SM^trig_m``), ``ES12`` (``E[SM^++_m
        SM^trig_m]`` with the same projections, ``(1/m) E YZ + (1 - 1/m) E Y E Z``), ``K = SM``.
    """
    g = pair_geometry(ctx, nx, ny, theta)
    ey, ey2, ez, ez2, eyz = base_moments(ctx, nx, ny, theta) if base is None else base
    m = num(ctx, m)
    a = (g["x2"] + g["y2"]) / 2
    return {"ES1": ctx.exp(-a) * ey, "ES1sq": ctx.exp(-2 * a) * (ey2 / m + (1 - 1 / m) * ey**2),
            "ES2": ctx.exp(a) * ez, "ES2sq": ctx.exp(2 * a) * (ez2 / m + (1 - 1 / m) * ez**2),
            "ES12": eyz / m + (1 - 1 / m) * ey * ez, "K": g["sm"]}


def hybrid_mse(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any, l1: Any, l2: Any, shared: Any,
               base: tuple[Any, Any, Any, Any, Any] | None = None) -> Any:
    """``E[(lam S1 + (1 - lam) S2 - SM)^2]``, ``lam`` independent of ``S1 = SM^++_m``, ``S2 = SM^trig_m``.

    Expanded from moments (HRF eq (31), Thm 3.1): ``E lam^2 E S1^2 + E(1 - lam)^2 E S2^2 +
    2 E[lam(1 - lam)] E[S1 S2] - 2 SM (E lam E S1 + (1 - E lam) E S2) + SM^2`` with
    ``E[S1 S2] = ES12`` for shared projections, ``E S1 E S2`` otherwise.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    nx, ny, theta, m : number
        The pair and the number of projections (:func:`hybrid_moments`).
    l1, l2 : number
        ``E lam`` and ``E lam^2`` (:func:`angular_lambda_moments`, :func:`gauss_lambda_moments`).
    shared : int
        1: ``SM^++_m`` and ``SM^trig_m`` use the same projections; 0: independent ones.
    base : tuple, optional
        Base moments passed to :func:`hybrid_moments` (default: :func:`base_moments`).

    Returns
    -------
    number
        The MSE.
    """
    h = hybrid_moments(ctx, nx, ny, theta, m, base)
    k = h["K"]
    e12 = h["ES12"] if bool(shared) else h["ES1"] * h["ES2"]
    second = l2 * h["ES1sq"] + (1 - 2 * l1 + l2) * h["ES2sq"] + 2 * (l1 - l2) * e12
    return second - 2 * k * (l1 * h["ES1"] + (1 - l1) * h["ES2"]) + k**2


def angular_lambda_moments(ctx: Any, theta: Any, n: Any) -> tuple[Any, Any]:
    """``E lam, E lam^2`` of the angular ``lam = K/n``, ``K ~ Bin(n, theta/pi)`` (HRF eq (19), (42)-(43)).

    The probability that a Gaussian direction separates ``x`` and ``y`` is ``theta/pi``; the
    binomial moments ``E K = n q``, ``E K^2 = n q (1 - q) + n^2 q^2`` give
    ``E lam^2 = q (q - q/n + 1/n)``.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    theta : number
        Angle in ``[0, pi]``.
    n : int
        Number of sign features.

    Returns
    -------
    tuple
        ``(E lam, E lam^2)``.
    """
    q = num(ctx, theta) / ctx.pi
    n = num(ctx, n)
    return q, (n * q * (1 - q) + n * n * q * q) / (n * n)


def gauss_lambda_moments(ctx: Any, nx: Any, ny: Any, theta: Any, n: Any, sigma: Any, r: Any) -> tuple[Any, Any]:
    """``E lam, E lam^2`` of the normalized Gaussian-kernel ``lam`` (HRF appendix F, eq (67)-(69)).

    ``lam = (1 - mean_n cos(sigma w.Delta)) / rho``, ``rho = 1 - exp(-2 sigma^2 r^2)``, with the
    MGF moments ``E cos(sigma w.Delta) = exp(-sigma^2 |Delta|^2/2)``, ``E cos^2 = (1 +
    exp(-2 sigma^2 |Delta|^2))/2``.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    nx, ny, theta : number
        The pair.
    n : int
        Number of features of ``lam``.
    sigma, r : number
        Bandwidth and the radius entering ``rho`` (eq (68)).

    Returns
    -------
    tuple
        ``(E lam, E lam^2)``.
    """
    g = pair_geometry(ctx, nx, ny, theta)
    sigma, r, n = num(ctx, sigma), num(ctx, r), num(ctx, n)
    c1 = ctx.exp(-(sigma**2) * g["d2"] / 2)
    c2 = (1 + ctx.exp(-2 * sigma**2 * g["d2"])) / 2
    rho = 1 - ctx.exp(-2 * sigma**2 * r**2)
    mean_c2 = c1**2 + (c2 - c1**2) / n
    return (1 - c1) / rho, (1 - 2 * c1 + mean_c2) / rho**2


def log_rel_error_hybrid_same_length(ctx: Any, r: Any, theta: Any, m: Any, n: Any) -> Any:
    """``log eps_{theta,r}`` of the angular hybrid on ``S(r)``: ``log(sqrt(MSE)/SM)`` (HRF Def 3.3).

    The MSE is :func:`hybrid_mse` with the angular ``lam`` (either projection variant: at
    ``|x| = |y|`` they agree, HRF Thm D.1).

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    r, theta : number
        Common norm ``|x| = |y| = r`` and angle.
    m, n : int
        Projections of the base estimators, sign features of ``lam``.

    Returns
    -------
    number
        ``log eps_{theta,r}``.
    """
    l1, l2 = angular_lambda_moments(ctx, theta, n)
    mse = hybrid_mse(ctx, r, r, theta, m, l1, l2, 0)
    return ctx.log(mse) / 2 - num(ctx, r) ** 2 * ctx.cos(num(ctx, theta))


def angular_rel_error_argmax(r: float, m: int, n: int) -> float:
    """A float ``theta`` in ``[0, pi/2]`` where ``eps_{theta,r}`` of the angular hybrid is (nearly) largest.

    Grid (uniform and geometric towards 0) then bounded Brent, on the float64 face of the
    library's closed form :func:`rfcheck.closed_forms.hrf.log_rel_error_angular_hybrid`
    (log-domain, no overflow for large ``r``).  Only the argument is taken from it: any
    ``theta`` gives a *lower bound* ``eps_{theta,r} <= eps_{S(r)}`` of the maximum (HRF Def
    3.3); this one makes it tight to float64 accuracy.

    Parameters
    ----------
    r : float
        Common norm.
    m, n : int
        As in :func:`log_rel_error_hybrid_same_length`.

    Returns
    -------
    float
        The maximiser found.
    """
    from rfcheck.closed_forms.hrf import log_rel_error_angular_hybrid

    key = (float(r), int(m), int(n))
    if key not in _ARGMAX:
        if len(_ARGMAX) > 4096:
            _ARGMAX.clear()
        _ARGMAX[key] = grid_argmax(lambda t: log_rel_error_angular_hybrid(float(r), t, int(m), int(n)),
                                   1e-9, math.pi / 2, geometric=True, vectorized=True)
    return _ARGMAX[key]


_ARGMAX: dict[tuple[float, int, int], float] = {}


def grid_argmax(f: Callable[[Any], Any], lo: float, hi: float, *, npts: int = 129,
                geometric: bool = False, vectorized: bool = False) -> float:
    """A float ``t`` in ``[lo, hi]`` where ``f`` is (nearly) largest: grid, then bounded Brent.

    Parameters
    ----------
    f : callable
        ``f(t) -> float`` (NaN and ``-inf`` are never the maximum unless everything is).
    lo, hi : float
        The interval, ``lo < hi``.
    npts : int, optional
        Grid points (uniform; with ``geometric`` also as many geometric towards ``lo > 0``).
    geometric : bool, optional
        Add a geometric grid (for a maximiser near ``lo``).
    vectorized : bool, optional
        ``f`` takes the whole grid (a float array) at once.

    Returns
    -------
    float
        The best point found; ``f`` there is at least its value at every grid point.

    Raises
    ------
    ValueError
        If ``lo < hi`` does not hold, or if ``geometric`` is set with ``lo <= 0``.

    Examples
    --------
    >>> from rfcheck.references.hrf import grid_argmax
    >>> abs(grid_argmax(lambda t: -(t - 0.3) ** 2, 0.0, 1.0) - 0.3) < 1e-8
    True
    """
    from scipy.optimize import minimize_scalar

    if not lo < hi:
        raise ValueError(f"need lo < hi; got {lo}, {hi}")
    parts = [np.linspace(lo, hi, npts)]
    if geometric:
        if lo <= 0:
            raise ValueError("a geometric grid needs lo > 0")
        parts.append(np.geomspace(lo, hi, npts))
    grid = np.unique(np.concatenate(parts))
    vals = np.array(f(grid) if vectorized else [f(float(t)) for t in grid], dtype=float)
    vals[np.isnan(vals)] = -np.inf
    k = int(np.argmax(vals))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    if a == b:
        return float(grid[k])
    res = minimize_scalar(lambda t: -float(f(t)), bounds=(a, b), method="bounded", options={"xatol": 1e-12})
    return float(res.x) if math.isfinite(res.fun) and -res.fun >= vals[k] else float(grid[k])


def mp_max_on_interval(f: Callable[[Any], Any], dps: int, lo: float = 0.0,
                       hi: float | None = None) -> tuple[Any, Any]:
    """Maximum of ``f`` on ``[lo, hi]`` in mpmath: a 401-point grid, then golden section.

    The golden section runs on the two grid cells around the best grid point, at ``dps + 10``
    working digits, until the bracket is below ``10^-(dps//2 + 3)`` (a smooth maximum is then
    resolved to about ``dps`` digits in value).  No enclosure: the returned error bar is the
    nominal ``|max| 10^(5 - dps)``.

    Parameters
    ----------
    f : callable
        ``f(t) -> mpf``, evaluated at mpmath numbers.
    dps : int
        Target decimal digits.
    lo : float, optional
        Left end (default 0).
    hi : float or None, optional
        Right end; ``None``: exactly ``pi`` at the working precision.

    Returns
    -------
    tuple
        ``(max, error bar)``; the max is at least ``f`` at every grid point.
    """
    with mpmath.workdps(dps + 10):
        hi = mpmath.pi if hi is None else mpmath.mpf(hi)
        grid = [mpmath.mpf(lo) + (mpmath.mpf(hi) - lo) * k / 400 for k in range(401)]
        vals = [f(t) for t in grid]
        k = max(range(len(vals)), key=lambda i: vals[i])
        a, b = grid[max(k - 1, 0)], grid[min(k + 1, 400)]
        g = (mpmath.sqrt(5) - 1) / 2
        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = f(c), f(d)
        for _ in range(200):
            if b - a < mpmath.mpf(10) ** (-(dps // 2) - 3):
                break
            if fc > fd:
                b, d, fd = d, c, fc
                c = b - g * (b - a)
                fc = f(c)
            else:
                a, c, fc = c, d, fd
                d = a + g * (b - a)
                fd = f(d)
        best = max(fc, fd, vals[k])
        return best, abs(best) * mpmath.mpf(10) ** (5 - dps)


def inf_diagonal_residual_sq(ri: Any, rj: Any, dps: int) -> Any:
    """``inf_{a > 0} (a r_i + r_j / a)^2``, one coordinate of ``|A r_i + (A^T)^-1 r_j|^2`` for a positive diagonal
    ``A`` (HRF appendix H.2, eq (88)), found numerically: :func:`mp_max_on_interval` of its negative over
    ``t = log a`` in ``[-30, 30]``, where it is convex (grid + golden section).

    The closed form is ``4 r_i r_j`` when ``r_i r_j > 0`` (attained at ``a^2 = r_j / r_i``) and ``0`` otherwise
    (attained at ``a^2 = -r_j / r_i``, approached as ``a -> 0`` or ``a -> inf`` when ``r_j = 0`` or ``r_i = 0``);
    a minimiser outside ``[e^-30, e^30]`` is not found.  No enclosure.

    Parameters
    ----------
    ri, rj : mpmath.mpf or float
        The two coefficients, evaluated at the caller's working precision.
    dps : int
        Target decimal digits (:func:`mp_max_on_interval`).

    Returns
    -------
    mpmath.mpf
        The minimum found.

    Examples
    --------
    >>> import mpmath
    >>> with mpmath.workdps(40):
    ...     v, w = inf_diagonal_residual_sq(mpmath.mpf(1), mpmath.mpf(4), 30), inf_diagonal_residual_sq(1.5, -2.0, 30)
    >>> bool(abs(v - 16) < 1e-25), bool(abs(w) < 1e-25)
    (True, True)
    """
    def f(t: Any) -> Any:
        return -((mpmath.exp(t) * ri + rj / mpmath.exp(t)) ** 2)

    return -mp_max_on_interval(f, dps, -30.0, 30.0)[0]


def quad_gaussian_exp_dot(z: list[Any], dps: int) -> tuple[Any, Any]:
    """``E exp(w^T z)``, ``w ~ N(0, I_d)``, ``z`` in ``C^d``, by per-coordinate quadrature.

    ``prod_i E exp(w_i z_i)`` (independence of the coordinates, HRF appendix A, eq (28)), each
    factor a 1-d Gaussian quadrature (:func:`rfcheck.quadrature.gaussian_exp_moment`), repeated at
    rising precision until stable (:func:`rfcheck.quadrature.with_error`).  The independent
    alternative to the closed form ``exp(sum z_i^2 / 2)`` (HRF Lemma 2.4), used where a check needs
    a reference that does not assume it.

    Parameters
    ----------
    z : list
        The coordinates of ``z`` (mpmath numbers, complex allowed).
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(value, error bar)``.
    """
    from rfcheck import quadrature

    def compute(prec: int) -> tuple[Any, Any]:
        val, err = mpmath.mpf(1), mpmath.mpf(0)
        for zi in z:
            v, e = quadrature.gaussian_exp_moment(0, zi)
            err = err * abs(v) + abs(val) * abs(e)
            val *= v
        return val, err

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def mp_bracketed_root(f: Callable[[Any], Any], a: Any, b: Any, dps: int) -> Any:
    """A root of ``f`` in ``[a, b]`` where ``f(a) > 0 > f(b)``, to about ``dps`` digits (mpmath).

    Anderson's secant-type iteration (``mpmath.findroot``, tolerance ``10^(-2 dps)``); if it
    fails, ``4 dps`` bisection steps.

    Parameters
    ----------
    f : callable
        ``f(t) -> mpf``, positive at ``a``, negative at ``b``.
    a, b : mpf
        The bracket.
    dps : int
        Target decimal digits.

    Returns
    -------
    mpf
        The root.

    Raises
    ------
    ArithmeticError
        If ``f`` does not change sign from positive to negative on ``[a, b]``.
    """
    fa, fb = f(a), f(b)
    if not (fa > 0 > fb):
        raise ArithmeticError(f"no sign change of the derivative on [{mpmath.nstr(a, 8)}, {mpmath.nstr(b, 8)}]")
    try:
        return mpmath.findroot(f, (a, b), solver="anderson", tol=mpmath.mpf(10) ** (-2 * dps))
    except (ValueError, ZeroDivisionError):
        for _ in range(4 * dps):
            c = (a + b) / 2
            if f(c) > 0:
                a = c
            else:
                b = c
        return (a + b) / 2


def gaussian_exp_dot_ball(z: list[Any], bits: int) -> Any:
    """``E exp(w.z)``, ``w ~ N(0, I_d)``, ``z`` complex, as a ball with a rigorous radius (HRF Lemma 2.4's left side).

    The product over coordinates (independence) of ``E exp(z_k g)``, each by Arb's rigorous
    ``acb.integral`` on ``[-T, T]`` plus a proven bound of the Gaussian tails
    (:func:`rfcheck.certify.gaussian_expectation_1d` with ``|exp(z_k w)| <= exp(|Re z_k| |w|)``):
    the defining integral, not the closed form ``exp(z.z/2)`` it is compared with.

    Parameters
    ----------
    z : list
        The coordinates (numbers or balls; a ball's whole range is covered).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.acb
        A ball containing ``E exp(w.z)``.
    """
    from flint import acb

    from rfcheck.arb_backend import Ball, to_ball, workprec
    from rfcheck.certify import gaussian_expectation_1d

    with workprec(bits):
        out = acb(1)
        for zk in z:
            zb = acb(zk.v if isinstance(zk, Ball) else to_ball(zk))
            growth = float(abs(zb.real).upper()) * (1 + 1e-12) + 1e-300  # >= |Re z_k| despite rounding

            def f(w: Any, analytic: bool, zb: Any = zb) -> Any:
                return (w * zb).exp()

            out = out * gaussian_expectation_1d(f, growth=(1.0, growth), prec=bits, real=False)
        return out


def _dots(ctx: Any, w: Any, u: list[Any]) -> list[Any]:
    """``w_i . u`` for the rows of ``w`` (floats, exact on balls) and the vector ``u``."""
    return [sum(num(ctx, float(wi[c])) * u[c] for c in range(len(u))) for wi in np.asarray(w, dtype=float)]


def sm_trig_on_draws(ctx: Any, x: list[Any], y: list[Any], w: Any) -> Any:
    """``SM^trig_m(x, y)`` (HRF eq (2)) on given projections ``w`` (shape ``(m, d)``).

    ``(1/m) exp((|x|^2 + |y|^2)/2) sum_i [sin(w_i x) sin(w_i y) + cos(w_i x) cos(w_i y)]``.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    x, y : list
        The vectors (numbers of ``ctx``, or floats).
    w : array_like
        The projections, floats (exact on balls).

    Returns
    -------
    number
        The estimate for these draws.
    """
    x, y = [num(ctx, v) for v in x], [num(ctx, v) for v in y]
    m = num(ctx, len(w))
    px, py = _dots(ctx, w, x), _dots(ctx, w, y)
    s = sum(ctx.sin(a) * ctx.sin(b) + ctx.cos(a) * ctx.cos(b) for a, b in zip(px, py, strict=True))
    return ctx.exp((sum(v * v for v in x) + sum(v * v for v in y)) / 2) / m * s


def sm_pos_on_draws(ctx: Any, x: list[Any], y: list[Any], w: Any) -> Any:
    """``SM^++_m(x, y)`` (HRF eq (3), antithetic positive features) on given projections ``w``.

    ``(1/(2m)) exp(-(|x|^2 + |y|^2)/2) sum_i [exp(w_i (x + y)) + exp(-w_i (x + y))]``.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    x, y : list
        The vectors.
    w : array_like
        The projections ``(m, d)``.

    Returns
    -------
    number
        The estimate for these draws.
    """
    x, y = [num(ctx, v) for v in x], [num(ctx, v) for v in y]
    m = num(ctx, len(w))
    px, py = _dots(ctx, w, x), _dots(ctx, w, y)
    s = sum(ctx.exp(a) * ctx.exp(b) + ctx.exp(-a) * ctx.exp(-b) for a, b in zip(px, py, strict=True))
    return ctx.exp(-(sum(v * v for v in x) + sum(v * v for v in y)) / 2) / (2 * m) * s


def cexp_scalar_on_draws(ctx: Any, c: complex, x: list[Any], y: list[Any], w: Any) -> Any:
    """The complex-exponential estimator ``Psi_A(x)^T Psi_{(A^T)^-1}(y)`` (HRF eq (15)-(16)) for ``A = c I``.

    With ``B = (A^T)^-1 = I/c`` and the bilinear squares of sec 2.3:
    ``(1/m) exp(-c^2 x.x/2) exp(-y.y/(2 c^2)) sum_i exp(c w_i x) exp(w_i y / c)``.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    c : complex
        The scalar of ``A = c I`` (``1`` or ``1j`` in HRF sec 2.3), ``c != 0``.
    x, y : list
        The vectors.
    w : array_like
        The projections ``(m, d)``.

    Returns
    -------
    number
        The (complex) estimate for these draws.
    """
    x, y = [num(ctx, v) for v in x], [num(ctx, v) for v in y]
    m = num(ctx, len(w))
    px, py = _dots(ctx, w, x), _dots(ctx, w, y)
    c2 = c * c
    s = sum(ctx.exp(c * a) * ctx.exp(b / c) for a, b in zip(px, py, strict=True))
    return ctx.exp(-c2 * sum(v * v for v in x) / 2) * ctx.exp(-sum(v * v for v in y) / (2 * c2)) / m * s


def gauss_lambda_on_draws(ctx: Any, x: list[Any], y: list[Any], tau: Any, sigma: Any, r: Any) -> Any:
    """HRF eq (69): ``lam_hat = 1/rho - (1/(n rho)) sum_i cos(sigma tau_i (x - y))``, ``rho = 1 - exp(-2 sigma^2 r^2)``.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    x, y : list
        The vectors.
    tau : array_like
        The projections ``(n, d)``.
    sigma, r : number
        Bandwidth and radius of eq (68).

    Returns
    -------
    number
        The estimate for these draws.
    """
    x, y = [num(ctx, v) for v in x], [num(ctx, v) for v in y]
    sigma, r, n = num(ctx, sigma), num(ctx, r), num(ctx, len(tau))
    rho = 1 - ctx.exp(-2 * sigma**2 * r**2)
    pd = _dots(ctx, tau, [a - b for a, b in zip(x, y, strict=True)])
    return 1 / rho - sum(ctx.cos(sigma * v) for v in pd) / (n * rho)


# ----------------------------------------------------------------------------------------------------------
# Moments with error bars (mpmath): the exact closed forms above at raised precision, or the same
# expectations by 1-d Gaussian quadrature (the independent alternative the claims cross-check with), and
# the error bookkeeping of the hybrid's moment expansion.


def base_moments_quad(nx: Any, ny: Any, theta: Any) -> tuple[list[Any], list[Any]]:
    """``E Y, E Y^2, E Z, E Z^2, E YZ`` (``Y = cosh(w.z)``, ``Z = cos(w.Delta)``) by 1-d quadratures.

    The independent alternative to :func:`base_moments` (exact MGFs), one pass at the current
    mpmath precision: every factor is ``E exp(b g)``, ``g ~ N(0, 1)``, by
    :func:`rfcheck.quadrature.gaussian_exp_moment` (complex ``b``); ``E YZ`` decomposes
    ``Delta = alpha z^ + beta e_perp``: ``E[cosh(|z| g1) cos(alpha g1)] E[cos(beta g2)]`` (the
    sine part has mean zero).

    Parameters
    ----------
    nx, ny, theta : number
        The pair (:func:`pair_geometry`), converted to mpmath numbers at the current precision.

    Returns
    -------
    tuple
        ``([E Y, E Y^2, E Z, E Z^2, E YZ], [error estimate of each])``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2, eq (2)-(3), Lemma 2.2 and
    appendix C, eq (37); Gaussian expectations as in Lemma 2.4, eq (13).
    """
    from rfcheck import quadrature

    nx, ny, th = mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta)
    g = pair_geometry(_mp(), nx, ny, th)
    zz, dd = mpmath.sqrt(g["z2"]), mpmath.sqrt(g["d2"])
    gm = lambda beta: quadrature.gaussian_exp_moment(0, beta)  # noqa: E731
    ey, e1 = gm(zz)
    ey2_, e2 = gm(2 * zz)
    ez_, e3 = gm(1j * dd)
    ez2_, e4 = gm(2j * dd)
    ey2 = (1 + ey2_) / 2
    ez, ez2 = mpmath.re(ez_), (1 + mpmath.re(ez2_)) / 2
    if zz == 0:
        eyz, e5 = ez, e3
    else:
        alpha = (g["x2"] - g["y2"]) / zz
        beta2 = g["d2"] - alpha**2
        beta = mpmath.sqrt(beta2) if beta2 > 0 else mpmath.mpf(0)
        a_, e5a = gm(zz + 1j * alpha)
        b_, e5b = gm(1j * beta)
        eyz, e5 = mpmath.re(a_) * mpmath.re(b_), abs(e5a) * abs(b_) + abs(e5b) * abs(a_)
    return [ey, ey2, ez, ez2, eyz], [abs(e1), abs(e2) / 2, abs(e3), abs(e4) / 2, abs(e5)]


def _mp() -> Any:
    from rfcheck.backends import MP

    return MP


def base_moments_with_error(nx: Any, ny: Any, theta: Any, dps: int, quad: bool = False) -> tuple[list[Any], list[Any]]:
    """:func:`base_moments` (``quad=False``) or :func:`base_moments_quad` (``quad=True``) with error bars.

    The exact moments are evaluated at ``dps + 15`` digits with a bar of ``|v| 10^(-dps-10)``; the
    quadratures are repeated at rising precision until stable (``rfcheck.quadrature``'s adaptive
    rule: each bar ``|v(prec) - v(prec + 15)| + quad_err``).

    Parameters
    ----------
    nx, ny, theta : number
        The pair.
    dps : int
        Target decimal digits.
    quad : bool
        Quadrature instead of the closed forms.

    Returns
    -------
    tuple
        ``([E Y, E Y^2, E Z, E Z^2, E YZ], [error bar of each])``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Lemma 2.2, Lemma 2.4 (eq 13), appendix C, eq (37).
    """
    if quad:
        from rfcheck import quadrature

        vals, errs, _ = quadrature._adaptive(lambda prec: base_moments_quad(nx, ny, theta), dps)
        return vals, errs
    with mpmath.workdps(dps + 15):
        vals = list(base_moments(_mp(), mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta)))
        errs = [abs(v) * mpmath.mpf(10) ** (-dps - 10) for v in vals]
    return vals, errs


def gauss_lambda_moments_quad(nx: Any, ny: Any, theta: Any, n: int, sigma: Any, r: Any) -> tuple[list[Any], list[Any]]:
    """``E lam, E lam^2`` of the normalized Gaussian-kernel ``lam`` (eq 69) from quadrature moments.

    The independent alternative to :func:`gauss_lambda_moments`: ``E cos(sigma g |Delta|)`` and
    ``E cos^2`` by 1-d Gaussian quadrature (:func:`rfcheck.quadrature.gaussian_exp_moment`), one
    pass at the current mpmath precision.

    Parameters
    ----------
    nx, ny, theta : number
        The pair, converted to mpmath numbers at the current precision.
    n : int
        Number of features of ``lam``.
    sigma, r : number
        Bandwidth and the radius entering ``rho = 1 - exp(-2 sigma^2 r^2)`` (eq 68).

    Returns
    -------
    tuple
        ``([E lam, E lam^2], [error estimate of each])``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix F, eq (67)-(69).
    """
    from rfcheck import quadrature

    g = pair_geometry(_mp(), mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta))
    n, sigma, r = int(n), mpmath.mpf(sigma), mpmath.mpf(r)
    dd = mpmath.sqrt(g["d2"])
    c1_, e1 = quadrature.gaussian_exp_moment(0, 1j * sigma * dd)
    c2_, e2 = quadrature.gaussian_exp_moment(0, 2j * sigma * dd)
    c1, c2 = mpmath.re(c1_), (1 + mpmath.re(c2_)) / 2
    rho = 1 - mpmath.exp(-2 * sigma**2 * r**2)
    mean_c2 = c1**2 + (c2 - c1**2) / n
    return [(1 - c1) / rho, (1 - 2 * c1 + mean_c2) / rho**2], [abs(e1) / rho, (abs(e1) * 3 + abs(e2)) / rho**2]


def gauss_lambda_moments_with_error(nx: Any, ny: Any, theta: Any, n: int, sigma: Any, r: Any, dps: int,
                                    quad: bool = False) -> tuple[list[Any], list[Any]]:
    """:func:`gauss_lambda_moments` (``quad=False``) or :func:`gauss_lambda_moments_quad` with error bars.

    Exact moments at ``dps + 15`` digits with a bar ``|v| 10^(-dps-10) + 10^(-dps-10)``; the
    quadratures repeated at rising precision until stable (as in :func:`base_moments_with_error`).

    Parameters
    ----------
    nx, ny, theta : number
        The pair.
    n : int
        Number of features of ``lam``.
    sigma, r : number
        Bandwidth and radius (eq 68).
    dps : int
        Target decimal digits.
    quad : bool
        Quadrature instead of the closed forms.

    Returns
    -------
    tuple
        ``([E lam, E lam^2], [error bar of each])``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix F, eq (67)-(69).
    """
    if quad:
        from rfcheck import quadrature

        vals, errs, _ = quadrature._adaptive(lambda prec: gauss_lambda_moments_quad(nx, ny, theta, n, sigma, r), dps)
        return vals, errs
    with mpmath.workdps(dps + 15):
        vals = list(gauss_lambda_moments(_mp(), mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta), int(n),
                                         mpmath.mpf(sigma), mpmath.mpf(r)))
        errs = [abs(v) * mpmath.mpf(10) ** (-dps - 10) + mpmath.mpf(10) ** (-dps - 10) for v in vals]
    return vals, errs


def angular_lambda_moments_with_error(theta: Any, n: int, dps: int) -> tuple[list[Any], list[Any]]:
    """:func:`angular_lambda_moments` at ``dps + 10`` digits with a bar of ``10^(-dps-5)`` each.

    Parameters
    ----------
    theta : number
        Angle in ``[0, pi]``.
    n : int
        Number of sign features.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``([E lam, E lam^2], [error bar of each])``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.4, eq (19); appendix C, eq (42)-(43).
    """
    with mpmath.workdps(dps + 10):
        m1, m2 = angular_lambda_moments(_mp(), mpmath.mpf(theta), int(n))
    return [m1, m2], [mpmath.mpf(10) ** (-dps - 5)] * 2


def hybrid_moments_with_error(nx: Any, ny: Any, theta: Any, m: int, base: Any, base_err: Any,
                              lam: Any, lam_err: Any, dps: int) -> dict[str, Any]:
    """:func:`hybrid_moments` from given base and ``lam`` moments, with the error bars of the expansion.

    The inputs' largest relative error ``rel`` (base moments relative to ``|v|``, ``lam`` moments
    relative to ``max(|v|, 1)``), times 10, plus ``10^(-dps-5)``, is propagated as ``rel`` times
    a multiple of the sum of the absolute values of the terms of each expansion.

    Parameters
    ----------
    nx, ny, theta : number
        The pair (converted to mpmath numbers at ``dps + 10`` digits).
    m : int
        Number of random projections.
    base, base_err : sequence
        ``(E Y, E Y^2, E Z, E Z^2, E YZ)`` and their error bars (:func:`base_moments_with_error`).
    lam, lam_err : sequence
        ``(E lam, E lam^2)`` and their error bars (e.g. :func:`angular_lambda_moments_with_error`);
        ``(0, 0)`` when no ``lam`` enters.
    dps : int
        Target decimal digits.

    Returns
    -------
    dict
        ``ES1, ES1sq`` (``SM^++_m``), ``ES2, ES2sq`` (``SM^trig_m``), ``ES12`` (same projections),
        ``l1, l2`` (``E lam, E lam^2``), ``mse1, mse2`` (the base estimators' MSEs), ``K = SM``,
        ``rel`` (relative input error), ``scale`` (``exp(2a) + exp(-2a) E Y^2 + SM^2``,
        ``a = (|x|^2 + |y|^2)/2``), ``base``, ``m``, ``g`` (:func:`pair_geometry` plus ``nx, ny,
        th``) and the error bars ``err1``, ``err2`` (of ``mse1``, ``mse2``), ``err12`` (of ``ES12``).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Lemma 2.2, eq (7); appendix C, eq (31)-(38).
    """
    ey, ey2, ez, ez2, eyz = base
    with mpmath.workdps(dps + 10):
        nx, ny, th = mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta)
        g = {"nx": nx, "ny": ny, "th": th, **pair_geometry(_mp(), nx, ny, th)}
        m = int(m)
        a = (g["x2"] + g["y2"]) / 2
        hm = hybrid_moments(_mp(), g["nx"], g["ny"], g["th"], m, tuple(base))
        es1, es1sq, es2, es2sq, es12 = hm["ES1"], hm["ES1sq"], hm["ES2"], hm["ES2sq"], hm["ES12"]
        k = hm["K"]
        scale = mpmath.exp(2 * a) + mpmath.exp(-2 * a) * ey2 + k**2
        # relative error of the inputs (moments), propagated as rel * (sum of |terms|) by callers
        rel = max([abs(e) / abs(v) for e, v in zip(base_err, (ey, ey2, ez, ez2, eyz), strict=True) if v != 0]
                  + [abs(e) / max(abs(v), 1) for e, v in zip(lam_err, lam, strict=True)])
        rel = 10 * rel + mpmath.mpf(10) ** (-dps - 5)
        return {"ES1": es1, "ES1sq": es1sq, "ES2": es2, "ES2sq": es2sq, "ES12": es12, "l1": lam[0],
                "l2": lam[1], "mse1": es1sq - 2 * k * es1 + k**2, "mse2": es2sq - 2 * k * es2 + k**2,
                "K": k, "rel": rel, "scale": scale, "base": tuple(base), "m": m, "g": g,
                "err1": rel * 3 * (abs(es1sq) + 2 * k * abs(es1) + k**2),
                "err2": rel * 3 * (abs(es2sq) + 2 * k * abs(es2) + k**2),
                "err12": rel * 3 * (abs(eyz) / m + abs(ey * ez))}


def hybrid_mse_with_error(h: dict[str, Any], shared: int, dps: int) -> tuple[Any, Any]:
    """:func:`hybrid_mse` from the moments of :func:`hybrid_moments_with_error`, with its error bar.

    The bar is ``5 rel`` times the sum of the absolute values of the terms of the expansion.

    Parameters
    ----------
    h : dict
        The output of :func:`hybrid_moments_with_error`.
    shared : int
        1: ``SM^++_m`` and ``SM^trig_m`` share projections; 0: independent.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(MSE, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Thm 3.1, eq (22)-(23); appendix C, eq (31).
    """
    with mpmath.workdps(dps + 10):
        l1, l2 = h["l1"], h["l2"]
        o2 = 1 - 2 * l1 + l2
        c = l1 - l2
        e12 = h["ES12"] if shared else h["ES1"] * h["ES2"]
        k = h["K"]
        g = h["g"]
        mse = hybrid_mse(_mp(), g["nx"], g["ny"], g["th"], h["m"], l1, l2, shared, h["base"])
        terms = (abs(l2 * h["ES1sq"]) + abs(o2 * h["ES2sq"]) + abs(2 * c * e12) + abs(2 * k * l1 * h["ES1"])
                 + abs(2 * k * (1 - l1) * h["ES2"]) + k**2)
        return mse, h["rel"] * 5 * terms


def cexp_variance_quad(a: Any, x: Any, y: Any, dps: int) -> tuple[Any, Any]:
    """``E|X - E X|^2`` of one complex-exponential feature product ``X = c exp(w^T z)`` by quadrature.

    ``z = A x + (A^T)^-1 y``, ``c = exp(-(Ax)^2/2 - ((A^T)^-1 y)^2/2)`` (bilinear squares), ``w ~
    N(0, I_d)``: ``|c|^2 (E exp(2 w.Re z) - |E exp(w.z)|^2)``, both expectations by
    :func:`quad_gaussian_exp_dot` (not Lemma 2.4's closed form): :func:`exp_dot_sample_variance_quad`
    of ``z`` and ``c`` formed at ``dps + 10`` digits.

    Parameters
    ----------
    a : mpmath.matrix
        Invertible ``d x d`` complex matrix ``A``.
    x, y : mpmath.matrix
        Column vectors of length ``d``.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(variance, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (14)-(17).
    """
    def bsq(v: Any) -> Any:
        return mpmath.fsum(v[i] ** 2 for i in range(len(v)))

    with mpmath.workdps(dps + 10):
        b = (a.T) ** -1
        z = a * x + b * y
        c = mpmath.exp(-bsq(a * x) / 2 - bsq(b * y) / 2)
        return exp_dot_sample_variance_quad([z[i] for i in range(len(z))], c, dps)


def sgn_product_mean_quad(theta: Any, dps: int) -> tuple[Any, Any]:
    """``E[sgn(tau^T x) sgn(tau^T y)]``, ``tau ~ N(0, I_2)``, ``x, y`` at angle ``theta``, by quadrature.

    The radial part of ``tau`` does not change the signs, so the expectation is the average of
    ``sgn(cos phi) sgn(cos(phi - theta))`` over ``phi in [0, 2 pi)``; the integrand is piecewise
    constant and ``mpmath.quad`` integrates it between its breakpoints (``1 - 2 theta/pi`` in
    closed form).

    Parameters
    ----------
    theta : number
        Angle between ``x`` and ``y``.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(value, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.4, eq (19).
    """
    with mpmath.workdps(dps + 10):
        t = mpmath.mpf(theta)
        tp = 2 * mpmath.pi
        brk = sorted({mpmath.mpf(0), mpmath.pi / 2, 3 * mpmath.pi / 2, (mpmath.pi / 2 + t) % tp,
                      (3 * mpmath.pi / 2 + t) % tp, tp})

        def f(phi: Any) -> Any:
            return mpmath.sign(mpmath.cos(phi)) * mpmath.sign(mpmath.cos(phi - t))

        total, err = mpmath.quad(f, brk, error=True)
        return total / tp, abs(err) / tp + mpmath.mpf(10) ** (-dps - 5)


def sign_pattern_margin(deriv: Callable[[Any], Any], ts: list[Any], dps: int) -> tuple[Any, Any]:
    """How strongly ``deriv`` shows the forbidden pattern ``-, +, -`` at ``t1 < t2 < t3``.

    A function is "first non-negative, then non-positive, then non-negative" (any piece may be
    empty) iff no ``t1 < t2 < t3`` has ``deriv(t1) < 0 < deriv(t2)`` and ``deriv(t3) < 0``.
    An optimiser over ``(t1, t2, t3)`` climbs the margin continuously.

    Parameters
    ----------
    deriv : callable
        ``deriv(t) -> mpf``.
    ts : list
        Three points (sorted here).
    dps : int
        Target decimal digits (evaluated at ``dps + 20``).

    Returns
    -------
    tuple
        ``(min(-D(t1), D(t2), -D(t3)), err)``: positive beyond ``err`` is a violation.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, the remark after eq (57)-(58).
    """
    t1, t2, t3 = sorted(ts)
    with mpmath.workdps(dps + 20):
        d = [deriv(mpmath.mpf(t)) for t in (t1, t2, t3)]
        margin = min(-d[0], d[1], -d[2])
        return margin, mpmath.mpf(10) ** (10 - dps) * (1 + sum(abs(v) for v in d))


def mp_interior_local_maxima(f: Callable[[Any], Any], dps: int, npts: int = 1200) -> list[Any]:
    """Interior local maxima of ``f`` on ``(0, pi)``: every point of an ``npts``-point grid above both
    neighbours, refined to the root of the numerical derivative (:func:`mp_bracketed_root`).

    Parameters
    ----------
    f : callable
        ``f(t) -> mpf`` on ``(0, pi)`` (evaluated at ``dps + 20`` digits).
    dps : int
        Target decimal digits.
    npts : int
        Grid points ``pi k/(npts + 1)``, ``k = 1..npts``.

    Returns
    -------
    list
        The maximisers, in increasing order.

    Raises
    ------
    ArithmeticError
        If the derivative does not change sign from positive to negative around a grid maximum.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, eq (59)-(62) (local maxima of
    ``b_r^i``).
    """
    with mpmath.workdps(dps + 20):
        grid = [mpmath.pi * k / (npts + 1) for k in range(1, npts + 1)]
        vals = [f(t) for t in grid]

        def d(t: Any) -> Any:
            return mpmath.diff(f, t)

        return [mp_bracketed_root(d, grid[k - 1], grid[k + 1], dps + 10)
                for k in range(1, npts - 1) if vals[k] > vals[k - 1] and vals[k] >= vals[k + 1]]


def feature_exp_moments_quad(kind: str, r: Any, theta: Any, sigma: Any, dps: int) -> tuple[Any, Any, Any]:
    """``(E f, E f^2, err)`` of one random feature ``f`` estimating ``exp(-sigma^2/2 |x - y|^2)``, by quadrature.

    ``kind = "trig"``: ``f = cos(sigma w^T (x - y))``; ``kind = "pos"``: ``f = exp(sigma w^T x - sigma^2 |x|^2)
    exp(sigma w^T y - sigma^2 |y|^2)`` (positive features of ``exp(sigma^2 x^T y)``, as in eq (3)).  With
    ``w ~ N(0, I_d)``, ``w^T v ~ |v| g``, ``g ~ N(0, 1)``, so both are 1-D Gaussian quadratures (mpmath) of
    ``x = r e1``, ``y = r (cos theta e1 + sin theta e2)`` built from coordinates; ``d`` does not enter.
    The ``N(0, 1)`` mass beyond ``T = sqrt(2 (dps + 10) log 10)`` is below ``10^-(dps + 10)``; ``f^k phi``
    is a bounded (trig) or shifted (pos) Gaussian, integrated on ``+-T`` around its centre in pieces
    shorter than an oscillation, the neglected tails added to the error bar.

    Parameters
    ----------
    kind : {"trig", "pos"}
        The feature.
    r, theta : number
        ``|x| = |y| = r`` and the angle between ``x`` and ``y``.
    sigma : number
        Bandwidth.
    dps : int
        Target decimal digits (computed at ``dps + 15``).

    Returns
    -------
    tuple
        ``(E f, E f^2, error bar)``.

    Raises
    ------
    ValueError
        If ``kind`` is neither ``"trig"`` nor ``"pos"``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix F, eq (67)-(68) and the text after
    eq (68); positive features as in sec 1, eq (3).
    """
    with mpmath.workdps(dps + 15):
        r, t, s = mpmath.mpf(r), mpmath.mpf(theta), mpmath.mpf(sigma)
        x, y = (r, mpmath.mpf(0)), (r * mpmath.cos(t), r * mpmath.sin(t))
        sign = -1 if kind == "trig" else 1
        v = mpmath.sqrt(sum((a + sign * b) ** 2 for a, b in zip(x, y, strict=True)))
        if kind == "trig":
            def f(g: Any) -> Any:
                return mpmath.cos(s * v * g)
        elif kind == "pos":
            c = s**2 * (x[0] ** 2 + x[1] ** 2 + y[0] ** 2 + y[1] ** 2)

            def f(g: Any) -> Any:
                return mpmath.exp(s * v * g - c)
        else:
            raise ValueError(f"kind must be 'trig' or 'pos'; got {kind!r}")
        phi = lambda g: mpmath.exp(-g**2 / 2) / mpmath.sqrt(2 * mpmath.pi)  # noqa: E731
        big_t = mpmath.sqrt(2 * (dps + 10) * mpmath.log(10))
        step = min(mpmath.mpf(1), 2 / (s * v)) if kind == "trig" and v > 0 else mpmath.mpf(1)
        moments, err = [], mpmath.mpf(10) ** (-dps - 5)
        for k in (1, 2):
            centre = k * s * v if kind == "pos" else 0
            n_pts = int(mpmath.ceil(2 * big_t / step))
            pts = [centre - big_t + 2 * big_t * i / n_pts for i in range(n_pts + 1)]
            val, e = mpmath.quad(lambda g, k=k: f(g) ** k * phi(g), pts, error=True)
            bound = mpmath.exp(k**2 * s**2 * v**2 / 2 - k * c) if kind == "pos" else 1
            moments.append(val)
            err += e + 2 * bound * mpmath.exp(-big_t**2 / 2)
        m1, m2 = moments
        err *= 1 + 2 * abs(m1)
        return +m1, +m2, err


def _binomials(n: int) -> list[Any]:
    """``binom(n, k)``, ``k = 0 .. n``, as mpmath numbers at the working precision: each the exact
    integer (the multiplicative recurrence on Python integers) rounded once, the value
    ``mpmath.binomial`` returns, at ~1/20 of its cost for ``n`` in the thousands (no gamma functions)."""
    c, out = 1, []
    for k in range(n + 1):
        out.append(mpmath.mpf(c))
        c = c * (n - k) // (k + 1)
    return out


def angular_lambda_moments_binomial(theta: Any, n: int, dps: int) -> tuple[Any, Any]:
    """``E lam, E lam^2`` of the angular ``lam = K/n`` by summing the binomial law of ``K`` term by term.

    ``q`` (the probability that a Gaussian direction separates ``x`` and ``y``) is measured as the total
    length of the arcs of directions ``tau`` in the plane of ``x, y`` with ``sgn(tau.x) != sgn(tau.y)``,
    over ``2 pi``; then ``E lam^j = n^-j sum_k binom(n, k) q^k (1 - q)^(n - k) k^j``.  The independent
    alternative to :func:`angular_lambda_moments` (which uses the closed binomial moments).

    Parameters
    ----------
    theta : number
        Angle in ``[0, pi]``.
    n : int
        Number of sign features.
    dps : int
        Target decimal digits (computed at ``dps + 10``).

    Returns
    -------
    tuple
        ``(E lam, E lam^2)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.4, eq (19); Lemma 3.2, eq (24).
    """
    import itertools

    with mpmath.workdps(dps + 10):
        t = mpmath.mpf(theta)
        brk = sorted({mpmath.pi / 2, 3 * mpmath.pi / 2, (mpmath.pi / 2 + t) % (2 * mpmath.pi),
                      (3 * mpmath.pi / 2 + t) % (2 * mpmath.pi)})
        pts = [mpmath.mpf(0), *brk, 2 * mpmath.pi]
        q = mpmath.fsum((b - a) for a, b in itertools.pairwise(pts)
                        if mpmath.cos((a + b) / 2) * mpmath.cos((a + b) / 2 - t) < 0) / (2 * mpmath.pi)
        n = int(n)
        pk = [c * q**k * (1 - q) ** (n - k) for k, c in enumerate(_binomials(n))]
        m1 = mpmath.fsum(pk[k] * k for k in range(n + 1)) / n
        m2 = mpmath.fsum(pk[k] * k * k for k in range(n + 1)) / n**2
        return m1, m2


def hybrid_variance_terms(h: dict[str, Any], shared: int) -> dict[str, Any]:
    """``Var(lam S1)``, ``Var((1 - lam) S2)``, ``Cov(lam S1, (1 - lam) S2)`` from their definitions.

    ``E[UV] - E U E V`` with ``lam`` independent of the base estimators ``S1 = SM^++_m``,
    ``S2 = SM^trig_m``; ``E S1``, ``E S2`` are not assumed to equal ``SM``.  Plain arithmetic on the
    moments, so it runs on any context's numbers.

    Parameters
    ----------
    h : dict
        ``l1, l2`` (``E lam, E lam^2``) and ``ES1, ES1sq, ES2, ES2sq, ES12`` (:func:`hybrid_moments`,
        :func:`hybrid_moments_with_error`).
    shared : int
        1: ``S1`` and ``S2`` share projections (``E[S1 S2] = ES12``); 0: independent.

    Returns
    -------
    dict
        ``v1 = Var(lam S1)``, ``v2 = Var((1 - lam) S2)``, ``cov``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix C, eq (31)-(32), (39)-(41).
    """
    l1, l2 = h["l1"], h["l2"]
    o1, o2 = 1 - l1, 1 - 2 * l1 + l2
    e12 = h["ES12"] if shared else h["ES1"] * h["ES2"]
    return {"v1": l2 * h["ES1sq"] - (l1 * h["ES1"]) ** 2, "v2": o2 * h["ES2sq"] - (o1 * h["ES2"]) ** 2,
            "cov": (l1 - l2) * e12 - l1 * h["ES1"] * o1 * h["ES2"]}


def hybrid_variance(h: dict[str, Any], shared: int) -> Any:
    """``Var(SM^hyb) = E[SM^hyb^2] - (E SM^hyb)^2`` expanded over ``lam`` and the base estimators.

    Parameters
    ----------
    h : dict
        The moments, as in :func:`hybrid_variance_terms`.
    shared : int
        1: shared projections; 0: independent.

    Returns
    -------
    number
        The variance.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix C, eq (31).
    """
    l1, l2 = h["l1"], h["l2"]
    e12 = h["ES12"] if shared else h["ES1"] * h["ES2"]
    second = l2 * h["ES1sq"] + (1 - 2 * l1 + l2) * h["ES2sq"] + 2 * (l1 - l2) * e12
    return second - (l1 * h["ES1"] + (1 - l1) * h["ES2"]) ** 2


def hybrid_variance_terms_with_error(h: dict[str, Any], shared: int, dps: int) -> dict[str, Any]:
    """:func:`hybrid_variance_terms` at ``dps + 10`` digits with one error bar ``err``.

    ``err`` is ``5 rel`` times the sum of the absolute values of the terms (``rel``: the relative
    input error of :func:`hybrid_moments_with_error`).

    Parameters
    ----------
    h : dict
        The output of :func:`hybrid_moments_with_error`.
    shared : int
        1: shared projections; 0: independent.
    dps : int
        Target decimal digits.

    Returns
    -------
    dict
        ``v1``, ``v2``, ``cov``, ``err`` and ``h`` (the moments).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix C, eq (31)-(32), (39)-(41).
    """
    with mpmath.workdps(dps + 10):
        t = hybrid_variance_terms(h, shared)
        l1, l2 = h["l1"], h["l2"]
        o1, o2 = 1 - l1, 1 - 2 * l1 + l2
        e12 = h["ES12"] if shared else h["ES1"] * h["ES2"]
        mag = (abs(l2 * h["ES1sq"]) + abs(o2 * h["ES2sq"]) + 2 * abs((l1 - l2) * e12)
               + 2 * abs(l1 * o1 * h["ES1"] * h["ES2"]) + (l1 * h["ES1"]) ** 2 + (o1 * h["ES2"]) ** 2)
        return {**t, "err": h["rel"] * 5 * mag, "h": h}


def hybrid_variance_with_error(h: dict[str, Any], shared: int, dps: int) -> tuple[Any, Any]:
    """:func:`hybrid_variance` at ``dps + 10`` digits with its error bar (``5 rel`` times the terms' magnitude).

    Parameters
    ----------
    h : dict
        The output of :func:`hybrid_moments_with_error`.
    shared : int
        1: shared projections; 0: independent.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(variance, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix C, eq (31).
    """
    with mpmath.workdps(dps + 10):
        l1, l2 = h["l1"], h["l2"]
        e12 = h["ES12"] if shared else h["ES1"] * h["ES2"]
        first = l1 * h["ES1"] + (1 - l1) * h["ES2"]
        mag = abs(l2 * h["ES1sq"]) + abs((1 - 2 * l1 + l2) * h["ES2sq"]) + 2 * abs((l1 - l2) * e12) + first**2
        return hybrid_variance(h, shared), h["rel"] * 5 * mag


def ce_real_system(a: Any) -> Any:
    """The real ``2d x 2d`` matrix of HRF eq (18) acting on ``(x, y)``: rows ``Re(A) x + Re(B) y`` and
    ``Im(A) x + Im(B) y``, ``B = (A^T)^-1``.

    Parameters
    ----------
    a : mpmath.matrix
        Invertible ``d x d`` complex matrix ``A``.

    Returns
    -------
    mpmath.matrix
        The real system.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (17)-(18).
    """
    d = a.rows
    b = (a.T) ** -1
    mat = mpmath.matrix(2 * d, 2 * d)
    for i in range(d):
        for j in range(d):
            mat[i, j], mat[i, j + d] = mpmath.re(a[i, j]), mpmath.re(b[i, j])
            mat[i + d, j], mat[i + d, j + d] = mpmath.im(a[i, j]), mpmath.im(b[i, j])
    return mat


def real_null_space(mat: Any, dps: int) -> list[Any]:
    """An orthonormal basis of the null space of a real square matrix: the right singular vectors whose
    singular value is at most ``10^(10 - dps)`` times ``max(s_max, 1)`` (mpmath SVD).

    Parameters
    ----------
    mat : mpmath.matrix
        Real square matrix.
    dps : int
        Decimal digits of the working precision (sets the tolerance).

    Returns
    -------
    list of mpmath.matrix
        Column vectors.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (18) (its real solutions).
    """
    _, s, v = mpmath.svd_r(mat)
    tol = mpmath.mpf(10) ** (10 - dps) * max(abs(s[0]), 1)
    return [v.T.column(k) for k in range(mat.rows) if abs(s[k]) <= tol]


# ------------------------------------------------------------------ balls for sec 2.3 and appendix D.3


def cexp_vectors_ball(a: Any, x: Any, y: Any, bits: int) -> tuple[list[Any], list[Any], list[Any]]:
    """``A x``, ``(A^T)^-1 y`` and ``z = A x + (A^T)^-1 y`` as complex balls (HRF sec 2.3, eq (14)-(16)).

    The inverse is Arb's rigorous ``acb_mat.inv`` (Gaussian elimination on balls with an
    enclosure of the exact inverse), so every entry contains the exact value for the exact
    inputs.

    Parameters
    ----------
    a : sequence of sequences
        The ``d x d`` complex matrix ``A`` (numbers, exact as balls, or balls).
    x, y : sequence
        Vectors of length ``d`` (numbers or balls).
    bits : int
        Working precision in bits.

    Returns
    -------
    tuple of lists of flint.acb
        ``(A x, (A^T)^-1 y, A x + (A^T)^-1 y)``.

    Raises
    ------
    ZeroDivisionError
        If ``A`` is not provably invertible at this precision.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (14)-(16).
    """
    from flint import acb, acb_mat

    from rfcheck.arb_backend import Ball, to_ball, workprec

    def ball(v: Any) -> Any:
        return acb(v.v if isinstance(v, Ball) else to_ball(v))

    with workprec(bits):
        am = acb_mat([[ball(v) for v in row] for row in a])
        b = am.transpose().inv()
        xv, yv = acb_mat([[ball(v)] for v in x]), acb_mat([[ball(v)] for v in y])
        ax, by = am * xv, b * yv
        d = am.nrows()
        axl, byl = [ax[i, 0] for i in range(d)], [by[i, 0] for i in range(d)]
        return axl, byl, [u + v for u, v in zip(axl, byl, strict=True)]


def increasing_root_ball(g: Callable[[Any], Any], guess: Any, bits: int) -> Any:
    """A ball containing the root of a strictly increasing function ``g`` near ``guess``.

    The root is bracketed by ``guess -+ 2^(20 - bits) max(1, |guess|)``; the signs ``g(lo) < 0 < g(hi)``
    are decided on balls, so by the intermediate value theorem and monotonicity the unique root
    lies in ``[lo, hi]``.

    Parameters
    ----------
    g : callable
        ``g(t)`` on the ball context (a :class:`rfcheck.arb_backend.Ball` in, a ball out),
        strictly increasing on the bracket's interval (the caller's proof).
    guess : float or mpmath.mpf
        An approximation of the root (e.g. from ``mpmath.findroot`` at higher precision).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        ``[lo, hi]`` as a ball.

    Raises
    ------
    ValueError
        If the signs at the bracket's ends are not decided as ``g(lo) < 0 < g(hi)``.
    """
    from flint import arb

    from rfcheck.arb_backend import Ball, to_ball, workprec

    with workprec(bits):
        mid = to_ball(guess if isinstance(guess, mpmath.mpf) else float(guess))  # exact (no rounding)
        half = arb(2) ** (20 - bits) * max(1, abs(float(guess)))
        lo, hi = (mid - half).mid(), (mid + half).mid()  # exact points
        glo, ghi = (v.v if isinstance(v, Ball) else v for v in (g(Ball(lo)), g(Ball(hi))))
        if not (glo < 0 and ghi > 0):
            raise ValueError(f"no sign change of g on [{lo}, {hi}]: {glo}, {ghi}")
        return lo.union(hi)


def _sgn(v: Any) -> int:
    """``sgn(v)`` in {-1, 0, 1}; on a ball the comparison must be decided (else ``UndecidableError``)."""
    return 1 if v > 0 else -1 if v < 0 else 0


def angular_lambda_on_draws(ctx: Any, x: list[Any], y: list[Any], tau: Any) -> Any:
    """``lambda_hat_n(x, y)`` of HRF eq (19) on given projections ``tau`` (shape ``(n, d)``): the fraction
    of the ``n`` hyperplanes ``tau_i^T u = 0`` that separate ``x`` from ``y``.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB`` (on balls each product ``tau_ij x_j`` of two floats is exact at
        >= 106 bits, but their sum ``tau_i^T x`` is in general not: for ``d = 2`` it is one correctly
        rounded addition, whose ball excludes 0 unless the sum is exactly 0, so the sign is decided;
        for ``d >= 3`` a near-cancelling sum can leave a ball around 0 and the sign undecided).
    x, y : list
        The vectors (floats or numbers of ``ctx``).
    tau : array_like
        The projections, floats (exact on balls).

    Returns
    -------
    number
        ``#{i : sgn(tau_i^T x) != sgn(tau_i^T y)} / n`` as a number of ``ctx``.

    Raises
    ------
    rfcheck.arb_backend.UndecidableError
        On balls, if the sign of a dot product ``tau_i^T x`` or ``tau_i^T y`` is not decided.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), eq (19).
    """
    x, y = [num(ctx, v) for v in x], [num(ctx, v) for v in y]
    px, py = _dots(ctx, tau, x), _dots(ctx, tau, y)
    sep = sum(1 for a, b in zip(px, py, strict=True) if _sgn(a) != _sgn(b))
    return num(ctx, sep) / num(ctx, len(px))


def interval_max_ball(f: Callable[[Any], Any], lo: Any, hi: Any, bits: int, *, below: Any = None,
                      guess: Any = None, max_evals: int = 400) -> Any:
    """A ball containing ``max_{t in [lo, hi]} f(t)``: the hull of :func:`interval_max_bounds`.

    Parameters
    ----------
    f, lo, hi, bits, below, guess, max_evals
        As in :func:`interval_max_bounds`.

    Returns
    -------
    flint.arb
        ``[L, U]`` as a ball, ``L <= max f <= U`` (for ``U/L`` beyond ``2^bits`` the midpoint-radius hull
        is wider than ``[L, U]``: take a monotone function of the bounds first, e.g. their logs).
    """
    from rfcheck.arb_backend import workprec

    lo_b, hi_b = interval_max_bounds(f, lo, hi, bits, below=below, guess=guess, max_evals=max_evals)
    with workprec(bits):
        return lo_b.union(hi_b)


def interval_max_bounds(f: Callable[[Any], Any], lo: Any, hi: Any, bits: int, *, below: Any = None,
                        guess: Any = None, max_evals: int = 400) -> tuple[Any, Any]:
    """Lower and upper bounds of ``max_{t in [lo, hi]} f(t)``, by branch-and-bound on balls.

    Each subinterval ``[a, b]`` is one ball ``t``; ``f(t)`` encloses ``f`` over all of it (Arb's
    interval extension), so its upper end bounds ``f`` on ``[a, b]``.  The lower end of the result
    is the largest lower end of ``f`` at exact points (subinterval midpoints and ``guess``): a value
    of ``f``, hence at most the maximum; the upper end is the largest upper bound over the
    subintervals still kept (a subinterval whose upper bound is below that lower end cannot hold
    the maximum and is dropped).  The subinterval with the largest upper bound is bisected until the
    upper bound is below ``below`` or the lower end above it (when given), or the evaluations reach
    ``max_evals``; the result is a valid enclosure whenever it stops, only wider.  The upper bounds are
    exact points compared exactly (Arb comparisons, never their float roundings, which can tie or
    overflow), both for the order of the subintervals and for ``U``.

    Parameters
    ----------
    f : callable
        ``f(t)`` on the ball context (a :class:`rfcheck.arb_backend.Ball` in, a real ball out),
        continuous on ``[lo, hi]``; a non-finite enclosure counts as unbounded (bisected further).
    lo, hi : float
        The interval (exact as balls).
    bits : int
        Working precision in bits.
    below : flint.arb or float, optional
        Stop as soon as the upper bound is below its lower end, or the lower end above it.
    guess : float, optional
        A point of ``[lo, hi]`` where ``f`` is (nearly) largest, for a tight lower end.
    max_evals : int, optional
        Budget of evaluations of ``f``.

    Returns
    -------
    tuple of flint.arb
        ``(L, U)``, exact points (``U`` may be ``+inf``), ``L <= max f <= U``.

    Raises
    ------
    ValueError
        If ``guess`` is not in ``[lo, hi]`` (its value would not bound the maximum from below).
    """
    import heapq

    from flint import arb

    from rfcheck.arb_backend import Ball, to_ball, workprec

    def ev(t: Any) -> Any:
        v = f(Ball(t))
        return v.v if isinstance(v, Ball) else to_ball(v)

    class _Sub:
        """A subinterval ``[a, b]`` with the exact upper bound ``up`` of ``f`` on it; the heap's
        smallest is the largest ``up`` (exact Arb comparison of exact points), ties by age ``k``."""

        __slots__ = ("a", "b", "k", "up")

        def __init__(self, up: Any, k: int, a: Any, b: Any) -> None:
            self.up, self.k, self.a, self.b = up, k, a, b

        def __lt__(self, other: _Sub) -> bool:
            return bool(self.up > other.up or (self.up == other.up and self.k < other.k))

    with workprec(bits):
        lo_b, hi_b = to_ball(lo), to_ball(hi)
        if not (lo_b.is_exact() and hi_b.is_exact() and lo_b <= hi_b):
            raise ValueError(f"interval_max_bounds: [lo, hi] = [{lo}, {hi}] is not an interval of exact points")
        stop = None if below is None else arb(below).lower()
        best = arb("-inf")
        if guess is not None:
            g = to_ball(guess)
            if not (g.is_exact() and lo_b <= g <= hi_b):
                raise ValueError(f"interval_max_bounds: guess {guess} is not an exact point of [{lo}, {hi}]")
            at_g = ev(g)
            if at_g.is_finite():
                best = max(best, at_g.lower())
        heap: list[_Sub] = []
        evals, k = 0, 0

        def push(a: Any, b: Any) -> None:
            nonlocal evals, best, k
            mid = ((a + b) / 2).mid()
            whole = ev(a.union(b))
            at_mid = ev(mid)
            evals += 2
            if at_mid.is_finite():
                best = max(best, at_mid.lower())
            up = whole.upper() if whole.is_finite() else arb("inf")
            k += 1
            heapq.heappush(heap, _Sub(up, k, a, b))

        push(lo_b, hi_b)
        while True:
            heap = [h for h in heap if not (h.up < best)]  # cannot hold the maximum
            heapq.heapify(heap)
            top = best
            for h in heap:  # the exact maximum of the kept upper bounds (exact points: decided)
                if h.up > top:
                    top = h.up
            if stop is not None and (top < stop or (best > stop and top.is_finite())):  # decided either way
                break
            if evals >= max_evals or not heap:
                break
            sub = heapq.heappop(heap)
            mid = ((sub.a + sub.b) / 2).mid()
            push(sub.a, mid)
            push(mid, sub.b)
        return best, top


def base_moments_quad_ball(nx: Any, ny: Any, theta: Any, bits: int) -> tuple[Any, Any, Any, Any, Any]:
    """``E Y, E Y^2, E Z, E Z^2, E YZ`` as balls by rigorous 1-d quadrature: :func:`base_moments_quad` on balls.

    The same decomposition as :func:`base_moments_quad` (``Y = cosh(w.z)``, ``Z = cos(w.Delta)``,
    ``Delta = alpha z^ + beta e_perp``), every factor ``E exp(b g)``, ``g ~ N(0, 1)``, by
    :func:`gaussian_exp_dot_ball` (Arb's ``acb.integral`` on ``[-T, T]`` plus a proven tail
    bound): the defining expectations, not the MGF closed forms of :func:`base_moments`.
    ``beta^2 = |Delta|^2 - alpha^2 >= 0`` (a squared component) is intersected with ``[0, inf)``
    before its square root.

    Parameters
    ----------
    nx, ny, theta : number or flint.arb
        The pair (:func:`pair_geometry`; a ball's whole range is covered).
    bits : int
        Working precision in bits.

    Returns
    -------
    tuple of flint.arb
        ``(E Y, E Y^2, E Z, E Z^2, E YZ)``; ``E YZ`` is a NaN ball where ``|z|`` is not
        separated from 0 (``|z| = 0`` exactly gives ``E Z``, as in :func:`base_moments_quad`).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2, eq (2)-(3), Lemma 2.2 and
    appendix C, eq (37); Gaussian expectations as in Lemma 2.4, eq (13).
    """
    from flint import acb, arb

    from rfcheck.arb_backend import workprec

    g = on_balls(pair_geometry, nx, ny, theta, bits=bits)
    with workprec(bits):
        def gm(beta: Any) -> Any:
            return gaussian_exp_dot_ball([acb(beta)], bits).real

        zz, dd = g["z2"].nonnegative_part().sqrt(), g["d2"].nonnegative_part().sqrt()
        ey, ey2 = gm(zz), (1 + gm(2 * zz)) / 2
        ez, ez2 = gm(acb(0, dd)), (1 + gm(acb(0, 2 * dd))) / 2
        if zz.is_exact() and zz.is_zero():
            eyz = ez
        elif zz > 0:
            alpha = (g["x2"] - g["y2"]) / zz
            beta = (g["d2"] - alpha**2).nonnegative_part().sqrt()
            eyz = gm(acb(zz, alpha)) * gm(acb(0, beta))
        else:
            eyz = arb("nan")
        return ey, ey2, ez, ez2, eyz



def sgn_product_mean_ball(theta: float, bits: int) -> Any:
    """``E[sgn(tau^T x) sgn(tau^T y)]``, ``tau ~ N(0, I_2)``, ``x, y`` at angle ``theta``, as a ball.

    The ball twin of :func:`sgn_product_mean_quad`, by exact integration of the same piecewise
    constant integrand: the average over ``phi in [0, 2 pi)`` of ``sgn(cos phi) sgn(cos(phi -
    theta))`` is ``(1/(2 pi)) sum_k s_k (b_{k+1} - b_k)`` over the arcs between the breakpoints
    ``0, pi/2, 3 pi/2, (pi/2 + theta) mod 2 pi, (3 pi/2 + theta) mod 2 pi, 2 pi`` (the zeros of the
    two cosines), ``s_k`` the sign of the integrand at the arc's midpoint decided on balls.  No
    closed form of the mean (``1 - 2 theta/pi``) is used.  At ``theta = 0`` the integrand is
    ``sgn(cos phi)^2 = 1`` (almost everywhere): exactly 1.

    Parameters
    ----------
    theta : float
        Angle between ``x`` and ``y``, in ``[0, pi]`` (a float, exact).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the expectation.

    Raises
    ------
    ValueError
        If ``theta`` is outside ``[0, pi]``, or two breakpoints or an arc's sign cannot be
        separated on balls at this precision.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.4, eq (19).

    Examples
    --------
    >>> b = sgn_product_mean_ball(1.0, 128)
    >>> sgn_product_mean_ball(0.0, 64) == 1, abs(float(b.mid()) - (1 - 2 / math.pi)) < 1e-15, b.rad() < 1e-35
    (True, True, True)
    """
    from flint import arb

    from rfcheck.arb_backend import workprec

    if not 0 <= theta <= math.pi:
        raise ValueError(f"theta must be in [0, pi]; got {theta}")
    with workprec(bits):
        if theta == 0:
            return arb(1)
        t, pi = arb(theta), arb.pi()
        two_pi = 2 * pi
        shifted = [(pi / 2 + t), (3 * pi / 2 + t)]
        shifted = [s - two_pi if s > two_pi else s for s in shifted]
        if any(not (s < two_pi or s > two_pi) for s in shifted):  # pragma: no cover - theta is a float
            raise ValueError("a breakpoint cannot be placed on balls")
        def cmp(a: Any, b: Any) -> int:
            if a < b:
                return -1
            if a > b:
                return 1
            raise ValueError("two breakpoints cannot be separated on balls at this precision")

        pts = sorted([arb(0), pi / 2, 3 * pi / 2, *shifted, two_pi], key=functools.cmp_to_key(cmp))
        total = arb(0)
        for a, b in itertools.pairwise(pts):
            mid = (a + b) / 2
            c1, c2 = mid.cos(), (mid - t).cos()
            if c1.contains(0) or c2.contains(0):
                raise ValueError("the integrand's sign on an arc cannot be decided on balls")
            total += (b - a) * (1 if (c1 > 0) == (c2 > 0) else -1)
        return total / two_pi


def feature_exp_moments_ball(kind: str, r: float, theta: float | str, sigma: float, bits: int) -> tuple[Any, Any, Any]:
    """``(E f, E f^2, Var f)`` of one random feature ``f`` estimating ``exp(-sigma^2/2 |x - y|^2)``, as balls.

    The ball twin of :func:`feature_exp_moments_quad` (same features, same geometry): ``x = r e1``,
    ``y = r (cos theta, sin theta)`` from coordinates, ``w^T v ~ |v| g`` with ``g ~ N(0, 1)``, and each
    moment is the defining 1-D Gaussian integral by Arb's ``acb.integral`` on ``[-T, T]`` with a proven
    tail bound (:func:`rfcheck.certify.gaussian_expectation_1d`): ``|cos(s v g)^k| <= 1`` (trig) and
    ``exp(k s v g - k c) <= exp(-k c) exp(k s v |g|)`` (pos).  Where ``v = |x -+ y|`` is exactly 0
    (``theta = 0`` for trig, ``theta = "pi"`` for pos: ``cos pi = -1``, ``sin pi = 0`` exactly) the
    feature is a constant and ``Var f = 0`` exactly; otherwise ``Var f = E f^2 - (E f)^2``.

    Parameters
    ----------
    kind : {"trig", "pos"}
        ``f = cos(sigma w^T (x - y))`` or ``f = exp(sigma w^T x - sigma^2 |x|^2) exp(sigma w^T y -
        sigma^2 |y|^2)``.
    r : float
        ``|x| = |y| = r``.
    theta : float or "pi"
        The angle between ``x`` and ``y`` (a float, exact), or ``"pi"`` for exactly ``pi``.
    sigma : float
        Bandwidth.
    bits : int
        Working precision in bits.

    Returns
    -------
    tuple of flint.arb
        Balls containing ``E f``, ``E f^2`` and ``Var f``.

    Raises
    ------
    ValueError
        If ``kind`` is neither ``"trig"`` nor ``"pos"``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix F, eq (67)-(68) and the text after
    eq (68); positive features as in sec 1, eq (3).

    Examples
    --------
    >>> m1, m2, v = feature_exp_moments_ball("trig", 1.0, 0.0, 1.0, 64)
    >>> v.is_exact() and v.is_zero(), m1.contains(1)
    (True, True)
    """
    from flint import arb

    from rfcheck.arb_backend import workprec
    from rfcheck.certify import gaussian_expectation_1d

    if kind not in ("trig", "pos"):
        raise ValueError(f"kind must be 'trig' or 'pos'; got {kind!r}")
    with workprec(bits):
        rb, sb = arb(r), arb(sigma)
        if theta == "pi":
            ct, st = arb(-1), arb(0)
        else:
            tb = arb(float(theta))
            ct, st = (arb(1), arb(0)) if float(theta) == 0 else (tb.cos(), tb.sin())
        x, y = (rb, arb(0)), (rb * ct, rb * st)
        sign = -1 if kind == "trig" else 1
        v2 = sum(((a + sign * b) ** 2 for a, b in zip(x, y, strict=True)), arb(0))
        c = sb**2 * (x[0] ** 2 + x[1] ** 2 + y[0] ** 2 + y[1] ** 2) if kind == "pos" else arb(0)
        if v2.is_exact() and v2.is_zero():
            m1 = arb(1) if kind == "trig" else (-c).exp()
            return m1, m1 * m1, arb(0)
        a = sb * v2.sqrt()
        moments = []
        for k in (1, 2):
            if kind == "trig":
                def f(w: Any, analytic: bool, k: int = k) -> Any:
                    return (a * w).cos() ** k

                growth = (1.0, 0.0)
            else:
                def f(w: Any, analytic: bool, k: int = k) -> Any:
                    return (k * (a * w - c)).exp()

                growth = (float((-k * c).exp().upper()) * (1 + 1e-12), float((k * a).upper()) * (1 + 1e-12))
            moments.append(gaussian_expectation_1d(f, growth=growth, prec=bits))
        m1, m2 = moments
        return m1, m2, m2 - m1 * m1


class _SeriesContext:
    """A minimal number-system context whose numbers are Arb power series (``flint.arb_series``):
    ``exp``, ``cos``, ``sin``, ``log``, ``sqrt`` and ``pi`` at flint's working precision."""

    name = "arb_series"

    @property
    def pi(self) -> Any:
        from flint import arb

        return arb.pi()

    @staticmethod
    def exp(z: Any) -> Any:
        return z.exp()

    @staticmethod
    def cos(z: Any) -> Any:
        return z.cos()

    @staticmethod
    def sin(z: Any) -> Any:
        return z.sin()

    @staticmethod
    def log(z: Any) -> Any:
        return z.log()

    @staticmethod
    def sqrt(z: Any) -> Any:
        return z.sqrt()


def derivative_ball(fn: Callable[[Any, Any], Any], t: float, bits: int) -> Any:
    """``d fn(ctx, t)/dt`` at ``t`` as a ball, by Arb's power-series arithmetic (no finite differences).

    ``fn(ctx, u)`` is a formula written against a number-system context (``ctx.exp``, ``ctx.cos``,
    ``ctx.sin``, ``ctx.log``, ``ctx.sqrt``, ``ctx.pi``, arithmetic); it is evaluated once on the
    truncated series ``u = t + eps`` (``flint.arb_series`` of length 2), whose coefficient of ``eps``
    is the derivative with a rigorous radius (Arb's series functions are exact up to rounding,
    which is enclosed).  Numbers other than ``u`` must reach ``fn`` as exact balls (``flint.arb``),
    so that no float64 division enters.

    Parameters
    ----------
    fn : callable
        ``fn(ctx, u)``.
    t : float, mpmath number or flint.arb
        The point (a float or mpmath number is taken exactly; a ball's whole range is covered).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the derivative (exactly 0 where ``fn`` does not depend on ``u``).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, eq (54)-(58) (the derivatives
    of ``b_r^i`` whose signs the remark after eq (58) describes).

    Examples
    --------
    >>> derivative_ball(lambda ctx, u: u * ctx.sin(u), 0.5, 64).contains(0)
    False
    """
    from flint import arb, arb_series

    from rfcheck.arb_backend import to_ball, workprec

    with workprec(bits):
        out = fn(_SeriesContext(), arb_series([to_ball(t), arb(1)], prec=2))
        return out[1] if isinstance(out, arb_series) else arb(0)


def max_on_interval_ball(fn: Callable[[Any, Any], Any], lo: Any, hi: Any, bits: int, *, rtol: float,
                         npts: int = 64, max_levels: int = 200, max_pieces: int = 20_000) -> Any:
    """``max_{u in [lo, hi]} fn(ctx, u)`` as a ball, by rigorous branch and bound on Arb balls.

    The interval is cut into ``npts`` pieces; on each piece ``X`` (midpoint ``m``) the upper bound is
    the smaller of the interval enclosure ``fn(X)`` and the mean-value form ``fn(m) + fn'(X) (X - m)``,
    ``fn(X)`` and ``fn'(X)`` from one evaluation on the Arb power series ``X + eps`` (as
    :func:`derivative_ball`); every midpoint's and end's value gives a lower bound of the maximum.  Pieces
    whose upper bound is decided below the best lower bound are dropped, the rest halved, until the upper and
    lower bounds are within ``rtol`` (relative), ``max_levels`` halvings or ``max_pieces`` pieces.  A
    non-finite enclosure (NaN, e.g. ``fn'`` unbounded at a piece's end) bounds nothing: the piece's bound is
    the other, finite one, else ``+inf``, so such a piece is never dropped; a non-finite value is no lower
    bound.  The returned ball spans ``[best lower bound, largest upper bound]``: it contains the maximum
    whatever the stopping point (no optimiser's output is trusted), unbounded above where a kept piece has no
    finite bound.

    Parameters
    ----------
    fn : callable
        ``fn(ctx, u)`` as for :func:`derivative_ball` (analytic on a neighbourhood of ``[lo, hi]``).
    lo, hi : float, mpmath number, flint.arb or "pi"
        The interval's ends (a ball end is covered whole; ``"pi"`` is ``arb.pi()`` at ``bits``: a ball made at a
        lower precision would stop the pieces from shrinking below its radius).
    bits : int
        Working precision in bits.
    rtol : float
        Target relative width of the result.
    npts : int, optional
        Initial pieces.
    max_levels : int, optional
        Most halvings.
    max_pieces : int, optional
        Most pieces kept at one level (pieces without a finite bound are never dropped, so a region where
        ``fn`` is not finite would otherwise double them at every level).

    Returns
    -------
    flint.arb
        A ball containing the maximum.

    Raises
    ------
    ValueError
        If ``fn`` has no finite value at any point evaluated (no lower bound of the maximum).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, eq (56)-(64) (the maxima of
    ``b_r``, ``b_r^1``, ``b_r^2`` over ``[0, pi]``).

    Examples
    --------
    >>> b = max_on_interval_ball(lambda ctx, u: u * ctx.sin(u), 0.0, 3.0, 128, rtol=1e-30)
    >>> round(float(b.mid()), 10), b.rad() < 1e-29  # max of u sin u, at u = 2.0288
    (1.8197057412, True)
    """
    from flint import arb, arb_series

    from rfcheck.arb_backend import to_ball, workprec

    ctx = _SeriesContext()

    def val_der(x: Any) -> tuple[Any, Any]:
        out = fn(ctx, arb_series([x, arb(1)], prec=2))
        val, der = (out[0], out[1]) if isinstance(out, arb_series) else (arb(out), arb(0))
        if not val.is_finite():  # the series can fail where only the derivative is unbounded (sqrt at 0)
            val = arb(fn(ctx, x))
        return val, der

    with workprec(bits):
        a0, b0 = (arb.pi() if isinstance(v, str) and v == "pi" else to_ball(v) for v in (lo, hi))
        edges = [a0 + (b0 - a0) * k / npts for k in range(1, npts)]
        edges = [a0, *edges, b0]
        inf = arb("inf")

        def up_of(*vals: Any) -> Any:
            """The least finite upper end of ``vals``; ``+inf`` when none is finite (NaN bounds nothing)."""
            ups = [v.upper() for v in vals if v.is_finite()]
            out = inf
            for u in ups:
                out = out.min(u)
            return out

        best = arb("-inf")

        def raise_best(v: Any) -> None:
            """Raise the lower bound ``best`` to ``v``'s lower end when ``v`` is finite (a NaN gives nothing)."""
            nonlocal best
            if v.is_finite():
                best = best.max(v.lower())

        for e in (a0, b0):
            raise_best(val_der(e)[0])
        pieces = list(itertools.pairwise(edges))
        upper = inf
        for _ in range(max_levels):
            scored = []
            for a, b in pieces:
                x, m = a.union(b), (a + b) / 2
                fx, dx = val_der(x)
                fm = val_der(m)[0]
                raise_best(fm)
                scored.append((a, m, b, up_of(fx, fm + dx * (x - m))))
            # drop a piece only where its bound is decided below the best value (exact points, +inf never)
            scored = [s for s in scored if not bool(s[3] < best)]
            if not scored or not best.is_finite():
                raise ValueError("max_on_interval_ball: no piece keeps a finite value of fn (fn is not finite "
                                 "at any point evaluated)")
            upper = scored[0][3]
            for s in scored[1:]:
                upper = upper.max(s[3])
            if upper.is_finite() and upper - best <= abs(best) * rtol:
                break
            if 2 * len(scored) > max_pieces:
                break  # the enclosure is valid here, only wider
            pieces = [piece for a, m, b, _ in scored for piece in ((a, m), (m, b))]
        return best.union(upper)


def interior_local_maxima_balls(fn: Callable[[Any, Any], Any], lo: Any, hi: Any, bits: int, *,
                                npts: int = 61, max_depth: int = 40) -> list[Any]:
    """Balls, one per interior local maximum of ``fn(ctx, u)`` on ``(lo, hi)``, with a proof that there are no others.

    ``fn'`` and ``fn''`` are enclosed on pieces of ``[lo, hi]`` by one evaluation on the Arb power series
    ``X + eps`` (as :func:`derivative_ball`).  A piece where ``fn'`` excludes 0 has a known sign; one where
    ``fn''`` excludes 0 has a monotone ``fn'``, whose signs at the piece's ends (points) tell whether it holds
    one simple root (a ``+ -> -`` root is a local maximum; an end where ``fn'`` is exactly 0 is a root there,
    a local maximum when ``fn'' < 0`` on the piece, recorded by the piece to its left, and inside the piece
    ``fn'`` has the sign of the other end); any other piece is halved, up to ``max_depth`` times.  The local
    maxima are the ``+ -> -`` roots; a change of sign across two pieces' common end would need ``fn'`` of
    both signs there, which the balls exclude, or ``fn'`` exactly 0 there, which is recorded.

    Parameters
    ----------
    fn : callable
        ``fn(ctx, u)`` as for :func:`derivative_ball` (analytic on a neighbourhood of ``[lo, hi]``).
    lo, hi : float, mpmath number, flint.arb or "pi"
        The interval's ends, as for :func:`max_on_interval_ball`.
    bits : int
        Working precision in bits.
    npts : int, optional
        Initial pieces (a prime, so that no end falls on a simple fraction of the interval such as its middle,
        where a critical point would leave ``fn'`` at a piece's end undecidable).
    max_depth : int, optional
        Most halvings of a piece.

    Returns
    -------
    list of flint.arb
        A ball around each interior local maximiser, left to right.

    Raises
    ------
    ValueError
        If a piece's signs stay undecided after ``max_depth`` halvings.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, the remark after eq (58) (a unique
    local maximum of ``b_r^i`` on ``[0, pi]``).

    Examples
    --------
    >>> (b,) = interior_local_maxima_balls(lambda ctx, u: u * ctx.sin(u), 0.0, 3.0, 128)
    >>> b.contains(2.028757838), b.rad() < 0.1  # the maximiser of u sin u
    (True, True)
    """
    from flint import arb, arb_series

    from rfcheck.arb_backend import to_ball, workprec

    ctx = _SeriesContext()

    def d12(x: Any) -> tuple[Any, Any]:
        out = fn(ctx, arb_series([x, arb(1)], prec=3))
        if not isinstance(out, arb_series):
            return arb(0), arb(0)
        c = out.coeffs()
        c += [arb(0)] * (3 - len(c))
        return c[1], 2 * c[2]

    def sign(v: Any) -> int | None:
        return 1 if v > 0 else -1 if v < 0 else 0 if (v.is_exact() and v.is_zero()) else None

    with workprec(bits):
        a0, b0 = (arb.pi() if isinstance(v, str) and v == "pi" else to_ball(v) for v in (lo, hi))
        edges = [a0, *(a0 + (b0 - a0) * k / npts for k in range(1, npts)), b0]
        stack = [(a, b, 0) for a, b in reversed(list(itertools.pairwise(edges)))]
        maxima = []
        while stack:
            a, b, depth = stack.pop()
            x = a.union(b)
            d1, d2 = d12(x)
            if sign(d1) in (1, -1):
                continue
            if sign(d2) in (1, -1):
                sa, sb = sign(d12(a)[0]), sign(d12(b)[0])
                if sa is not None and sb is not None and not (sa == 0 and sb == 0):
                    if sa * sb < 0 and sa > 0:
                        maxima.append(x)
                    elif sb == 0 and sign(d2) == -1 and b is not b0:
                        # fn'(b) = 0 exactly and fn'' < 0 on a ball holding b: a strict local maximum at the
                        # interior end b (fn' goes + then -), recorded here, by the piece left of b only
                        maxima.append(b)
                    continue
            if depth >= max_depth:
                raise ValueError("the sign of the derivative stays undecided on a piece of [lo, hi]")
            m = (a + b) / 2
            stack.extend([(m, b, depth + 1), (a, m, depth + 1)])
        return maxima


# ---- appendix D.3 and F: local maximisers, maxima and hulls of balls; lambda-estimator variances; sign patterns


def local_maximiser_balls(fn: Callable[[Any, Any], Any], maxima: list[Any], bits: int, dps: int, *,
                          count: Callable[[], int | str] | None = None) -> list[Any] | str:
    """Balls enclosing every interior local maximiser of ``fn(ctx, u)`` on ``(0, pi)``, from numerical maximisers.

    Around each numerical maximiser ``t0`` (found to about ``dps`` digits, e.g. by
    :func:`mp_interior_local_maxima`) the ball ``[t0 - d, t0 + d]``, ``d = 10^(3 - dps) (1 + t0)``, inside
    ``(0, pi)``, is kept only where the exact derivative (:func:`derivative_ball`) is certified positive at
    ``t0 - d`` and negative at ``t0 + d``: the maximum of ``fn`` on the ball is then interior, a local
    maximiser.  When the proven number of interior local maximisers (``count()``, by default
    :func:`interior_local_maxima_balls`) equals the number of these balls and they are pairwise disjoint,
    each holds a distinct maximiser, so every maximiser lies in exactly one of them.

    Parameters
    ----------
    fn : callable
        ``fn(ctx, u)`` as for :func:`derivative_ball` (analytic on a neighbourhood of ``[0, pi]``).
    maxima : list of mpmath numbers
        The numerical interior local maximisers.
    bits : int
        Working precision of the balls in bits.
    dps : int
        The digits of ``maxima`` (the balls' half-width is ``10^(3 - dps) (1 + t0)``).
    count : callable, optional
        ``count() -> int``: the proven number of interior local maximisers, or a string saying why there is
        no proof; called only after every ball is certified.  Default: the length of
        :func:`interior_local_maxima_balls` on ``(0, pi)`` (a string where it raises ``ValueError``).

    Returns
    -------
    list of flint.arb or str
        The balls, in the order of ``maxima``; a string saying which step failed.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, eq (59)-(62) and the remark after
    eq (58) (the local maximisers of ``b_r^i``).

    Examples
    --------
    >>> import mpmath
    >>> f = lambda ctx, u: u * ctx.sin(u)
    >>> ts = mp_interior_local_maxima(lambda t: t * mpmath.sin(t), 30, npts=50)
    >>> (b,) = local_maximiser_balls(f, ts, 128, 30)
    >>> from flint import arb
    >>> from rfcheck.arb_backend import workprec
    >>> with workprec(200), mpmath.workdps(50):  # the root of d(t sin t)/dt = sin t + t cos t, independently
    ...     root = arb(mpmath.nstr(mpmath.findroot(lambda t: mpmath.sin(t) + t * mpmath.cos(t), 2), 45))
    >>> bool(b.contains(root)), bool(b.rad() < 1e-25)
    (True, True)
    >>> local_maximiser_balls(f, [mpmath.mpf(1)], 128, 30)
    "the exact derivative's sign change around the numerical maximiser is not decided on balls"
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec

    out = []
    for t0 in maxima:
        with mpmath.workdps(dps + 20):
            d = mpmath.mpf(10) ** (3 - dps) * (1 + t0)
            lo, hi = t0 - d, t0 + d
        slopes = [derivative_ball(fn, t, bits) for t in (lo, hi)]
        if not (slopes[0] > 0 and slopes[1] < 0):
            return "the exact derivative's sign change around the numerical maximiser is not decided on balls"
        with workprec(bits):
            ball = to_ball(lo).union(to_ball(hi))
            if not (ball > 0 and ball < arb.pi()):
                return "a numerical maximiser's ball is not inside (0, pi)"
        out.append(ball)
    if count is None:
        def count() -> int | str:
            try:
                return len(interior_local_maxima_balls(fn, 0.0, "pi", bits))
            except ValueError as exc:
                return f"no proof of the number of local maxima ({exc})"
    proven = count()
    if isinstance(proven, str):
        return proven
    if proven != len(out):
        return (f"the grid found {len(out)} interior local maxima, the proof on balls {proven}: the balls do not "
                f"enclose every maximiser")
    with workprec(bits):
        if any(a.overlaps(b) for j, a in enumerate(out) for b in out[j + 1:]):
            return "two local maximisers' balls overlap: they need not hold distinct maximisers"
    return out


def max_of_balls(balls: list[Any], bits: int) -> Any:
    """A ball containing ``max(v_1, ..., v_k)`` for every choice of ``v_j`` in ``balls[j]``.

    Parameters
    ----------
    balls : list of flint.arb
        At least one ball.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        The enclosure of the maximum (Arb's ``max``, pairwise from the left).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, eq (60), (62) and the global
    maximum of ``b_r^i`` (a maximum over every local maximiser's ball).

    Examples
    --------
    >>> from flint import arb
    >>> m = max_of_balls([arb(1, 0.5), arb(2, 0.1), arb(-3)], 64)
    >>> m.contains(2.05), m.contains(1.4), m.contains(1.95)
    (True, False, True)
    """
    from rfcheck.arb_backend import workprec

    with workprec(bits):
        out = balls[0]
        for v in balls[1:]:
            out = out.max(v)
        return out


def hull_of_balls(balls: list[Any], bits: int) -> Any:
    """The smallest ball (up to rounding) containing every ball of ``balls``.

    Parameters
    ----------
    balls : list of flint.arb
        At least one ball.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        The union (Arb's ``union``, pairwise from the left).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, eq (59) (``theta* sin theta*``
    over every local maximiser's ball).

    Examples
    --------
    >>> from flint import arb
    >>> h = hull_of_balls([arb(1, 0.5), arb(3, 0.1)], 64)
    >>> h.contains(0.5), h.contains(2), h.contains(3.2)
    (True, True, False)
    """
    from rfcheck.arb_backend import workprec

    with workprec(bits):
        out = balls[0]
        for v in balls[1:]:
            out = out.union(v)
        return out


def lambda_estimator_variance(kind: str, r: Any, theta: Any, sigma: Any, n: int, dps: int,
                              moments: tuple[Any, Any, Any] | None = None) -> tuple[Any, Any, Any]:
    """``(Var lam_hat, E[f^2]/(n rho^2), err)`` of ``lam_hat = 1/rho - (1/(n rho)) sum_i f_i`` (eq 69 form).

    ``f_i`` are ``n`` iid features estimating ``exp(-sigma^2/2 |x - y|^2)`` (:func:`feature_exp_moments_quad`)
    and ``rho = 1 - exp(-2 sigma^2 r^2)`` (eq 68), so ``Var lam_hat = Var(f)/(n rho^2)``; the second entry
    is the scale of that variance (the second moment's part).

    Parameters
    ----------
    kind : {"trig", "pos"}
        The feature (as :func:`feature_exp_moments_quad`).
    r, theta, sigma : number
        ``|x| = |y| = r``, the angle between ``x`` and ``y``, the bandwidth.
    n : int
        Number of features.
    dps : int
        Target decimal digits (computed at ``dps + 15``).
    moments : tuple, optional
        ``(E f, E f^2, err)`` if already computed (default: :func:`feature_exp_moments_quad`).

    Returns
    -------
    tuple
        ``(Var lam_hat, E[f^2]/(n rho^2), error bar of the variance)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix F, eq (67)-(69) and the text after
    eq (68) (the variance of the estimated lambda).

    Examples
    --------
    >>> import mpmath
    >>> v, _, e = lambda_estimator_variance("trig", 1.0, 2.0, 0.5, 4, 30)
    >>> d2 = 2 - 2 * mpmath.cos(2)  # |x - y|^2;  Var cos = (1 - exp(-sigma^2 |Delta|^2))^2 / 2
    >>> exact = (1 - mpmath.exp(-0.25 * d2)) ** 2 / 2 / (4 * (1 - mpmath.exp(-0.5)) ** 2)
    >>> bool(abs(v - exact) < 1e-13 * exact), bool(e < 1e-25)
    (True, True)
    """
    m1, m2, err = moments if moments is not None else feature_exp_moments_quad(kind, r, theta, sigma, dps)
    with mpmath.workdps(dps + 15):
        s, r = mpmath.mpf(sigma), mpmath.mpf(r)
        rho = -mpmath.expm1(-2 * s**2 * r**2)
        k = 1 / (n * rho**2)
        return k * (m2 - m1**2), k * m2, k * err


def lambda_estimator_variance_ball(kind: str, r: float, theta: float | str, sigma: float, n: int,
                                   bits: int) -> tuple[Any, Any]:
    """Balls of ``(Var lam_hat, E[f^2]/(n rho^2))``: the ball twin of :func:`lambda_estimator_variance`.

    The feature moments are enclosed by rigorous quadrature (:func:`feature_exp_moments_ball`; exactly 0
    variance where the feature is a constant).

    Parameters
    ----------
    kind : {"trig", "pos"}
        The feature.
    r, sigma : float
        ``|x| = |y| = r`` and the bandwidth (exact).
    theta : float or "pi"
        The angle (a float, exact), or ``"pi"`` for exactly ``pi``.
    n : int
        Number of features.
    bits : int
        Working precision in bits.

    Returns
    -------
    tuple of flint.arb
        Balls containing ``Var lam_hat`` and ``E[f^2]/(n rho^2)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix F, eq (67)-(69) and the text after
    eq (68).

    Examples
    --------
    >>> var, scale = lambda_estimator_variance_ball("trig", 1.0, 0.0, 0.5, 4, 128)
    >>> var.is_zero(), scale > 0  # cos(sigma w^T 0) = 1: a constant feature
    (True, True)
    """
    from flint import arb

    from rfcheck.arb_backend import workprec

    _, m2, var = feature_exp_moments_ball(kind, float(r), theta, float(sigma), bits)
    with workprec(bits):
        s, r_, n_ = arb(float(sigma)), arb(float(r)), arb(int(n))
        rho = -(-2 * s**2 * r_**2).expm1()
        k = 1 / (n_ * rho**2)
        return k * var, k * m2


def hrf_feature_dim(m: int, n: int) -> int:
    """Length of the feature map ``Psi(z)`` (Lemma 2.3, eq 11) of the angular hybrid (eq 12 with eq 19).

    Counted by building ``Psi`` with :func:`rfcheck.estimators.hrf.hrf_feature_vectors` for ``m n <= 2^14``,
    otherwise by the same block count: ``Psi^1 + Psi^3`` hold the ``t = 2`` blocks of ``m`` of each base,
    ``Psi^2 + Psi^4`` their Kronecker products with the one ``n``-block of ``rho_n``: ``4 m + 4 m n``.

    Parameters
    ----------
    m, n : int
        Base and lambda feature counts (at least 1).

    Returns
    -------
    int
        ``dim Psi``.

    Raises
    ------
    ValueError
        If ``m < 1`` or ``n < 1``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Lemma 2.3 (eq 11) and appendix D.4 / L
    (``Theta(mn)``-dimensional HRFs).

    Examples
    --------
    >>> hrf_feature_dim(3, 5), hrf_feature_dim(1000, 1000)
    (72, 4004000)
    """
    if m < 1 or n < 1:
        raise ValueError(f"m >= 1 and n >= 1 are required; got m = {m}, n = {n}")
    if m * n > 2**14:
        return 4 * m + 4 * m * n
    from rfcheck.estimators import hrf as hy

    rng = np.random.default_rng(0)
    x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    w1, w2, tau = rng.normal(size=(m, 2)), rng.normal(size=(m, 2)), rng.normal(size=(n, 2))
    lam = hy.Blocks((hy.angular_lambda_features(x, tau),), (hy.angular_lambda_features(y, tau),))
    psi, _ = hy.hrf_feature_vectors([hy.pos_blocks(x, y, w1), hy.trig_blocks(x, y, w2)], [(0.5, lam)])
    return int(psi.shape[-1])


def sign_pattern_margin_ball(fn: Callable[[Any, Any], Any], ts: list[float], bits: int, *,
                             weight: Callable[[Any], Any] | None = None) -> Any:
    """Ball of ``min(-D(t1), D(t2), -D(t3))``, ``t1 <= t2 <= t3`` sorted: the ball twin of :func:`sign_pattern_margin`.

    ``D(t) = fn'(t) weight(t)``, the derivative exact on Arb power series (:func:`derivative_ball`, not finite
    differences) and ``weight`` a positive factor that keeps the sign (default 1); positive is a violation of
    the pattern "first non-negative, then non-positive, then non-negative".

    Parameters
    ----------
    fn : callable
        ``fn(ctx, u)`` as for :func:`derivative_ball`.
    ts : list of float
        Three points (taken exactly, sorted here).
    bits : int
        Working precision in bits.
    weight : callable, optional
        ``weight(t) -> flint.arb`` of the exact ball of ``t``.

    Returns
    -------
    flint.arb
        A ball containing the margin.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, the remark after eq (57)-(58).

    Examples
    --------
    >>> m = sign_pattern_margin_ball(lambda ctx, u: ctx.cos(3 * u), [2.5, 0.5, 1.5], 128)
    >>> m > 0  # D = -3 sin(3t) is -, +, - at 0.5, 1.5, 2.5: a violation
    True
    """
    from flint import arb

    from rfcheck.arb_backend import workprec

    d = []
    for t in sorted(float(v) for v in ts):
        db = derivative_ball(fn, t, bits)
        with workprec(bits):
            d.append(db * weight(arb(t)) if weight is not None else db)
    with workprec(bits):
        return (-d[0]).min(d[1]).min(-d[2])


# ---- Lemma 3.4, Thm 3.5: hybrid moments by quadrature on balls, maxima over [0, pi], relative-error maxima


def hybrid_moments_quad_ball(nx: Any, ny: Any, theta: Any, m: int, bits: int, *,
                             flip: bool = False) -> dict[str, Any]:
    """The moments of :func:`hybrid_moments` as balls, the base moments by rigorous 1-d quadrature, and the base MSEs.

    The base moments come from :func:`base_moments_quad_ball` (the defining Gaussian expectations by Arb
    quadrature with proven tails, not the MGF closed forms of :func:`base_moments`); :func:`hybrid_moments`
    turns them into the moments of ``SM^++_m`` and ``SM^trig_m``.  The MSE of each base estimator is expanded
    as ``E S^2 - 2 SM E S + SM^2`` (HRF Lemma 2.2).

    Parameters
    ----------
    nx, ny, theta : float
        The pair (:func:`pair_geometry`), exact as balls.
    m : int
        Number of random features of each base estimator.
    bits : int
        Working precision in bits.
    flip : bool, default False
        Evaluate at the angle ``pi - theta`` (pi as a ball) instead of ``theta``.

    Returns
    -------
    dict of flint.arb
        The keys of :func:`hybrid_moments` (``ES1, ES1sq, ES2, ES2sq, ES12, K``), ``mse1`` (MSE of
        ``SM^++_m``), ``mse2`` (MSE of ``SM^trig_m``) and ``EYZ`` (``E[cosh(w.z) cos(w.Delta)]``).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), eq (2)-(3), Lemma 2.2 eq (7) and appendix C,
    eq (36)-(38).

    Examples
    --------
    >>> import mpmath
    >>> from flint import arb
    >>> from rfcheck.arb_backend import workprec
    >>> from rfcheck.backends import MP
    >>> h = hybrid_moments_quad_ball(0.5, 0.3, 1.0, 2, 128)
    >>> with mpmath.workdps(50):  # the MGF closed forms
    ...     exact = mpmath.nstr(hybrid_moments(MP, mpmath.mpf(0.5), mpmath.mpf(0.3), 1, 2)["ES12"], 45)
    >>> with workprec(200):
    ...     bool(h["ES12"].overlaps(arb(exact))), bool(h["ES12"].overlaps(arb(exact) + arb(10) ** -25))
    (True, False)
    """
    from flint import arb

    from rfcheck.arb_backend import Ball, to_ball, workprec

    with workprec(bits):
        th = arb.pi() - to_ball(theta) if flip else to_ball(theta)
    base = base_moments_quad_ball(nx, ny, th, bits)
    h = on_balls(lambda ctx, a, b, k: hybrid_moments(ctx, a, b, Ball(th), k, base=tuple(Ball(v) for v in base)),
                 nx, ny, int(m), bits=bits)
    with workprec(bits):
        k = h["K"]
        h["mse1"], h["mse2"] = h["ES1sq"] - 2 * k * h["ES1"] + k**2, h["ES2sq"] - 2 * k * h["ES2"] + k**2
    return {**h, "EYZ": base[4]}


def max_bounds_0_pi(f: Callable[[Any], Any], bits: int, **kw: Any) -> tuple[Any, Any]:
    """Bounds ``(L, U)``, ``L <= max_{theta in [0, pi]} f(theta) <= U``, by branch-and-bound on balls.

    :func:`interval_max_bounds` on ``[0, math.pi]`` (exact ends; the float ``math.pi`` lies below pi by
    about ``1.2e-16``), its ``U`` raised to cover the sliver ``[math.pi, pi]`` by one ball evaluation of ``f``
    on ``[math.pi, upper end of pi]`` (``f`` must be defined and continuous there); ``L`` stays a value of
    ``f`` at a point of ``[0, math.pi]``.

    Parameters
    ----------
    f : callable
        ``f(t)`` of a :class:`rfcheck.arb_backend.Ball` ``t``, a ball (or a number) enclosing ``f`` over ``t``.
    bits : int
        Working precision in bits.
    **kw
        ``below``, ``guess``, ``max_evals`` as for :func:`interval_max_bounds`.

    Returns
    -------
    tuple of flint.arb
        ``(L, U)``; ``U`` is ``+inf`` where ``f`` on the sliver is not finite.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Def 3.3 (the maximum over theta in [0, pi] of
    the max-relative-error) and appendix D.3, eq (48)-(64).

    Examples
    --------
    >>> from flint import arb
    >>> lo, hi = max_bounds_0_pi(lambda t: t, 128, max_evals=40)  # the identity: its maximum is pi
    >>> bool(lo < arb.pi() < hi), bool(hi - lo < 0.01)
    (True, True)
    """
    from flint import arb

    from rfcheck.arb_backend import Ball, to_ball, workprec

    lo, hi = interval_max_bounds(f, 0.0, math.pi, bits, **kw)
    with workprec(bits):
        sliver = arb(math.pi).union(arb.pi().upper())
        v = f(Ball(sliver))
        v = v.v if isinstance(v, Ball) else to_ball(v)
        return lo, hi.max(v.upper()) if v.is_finite() else arb("inf")


def angular_log_max_rel_error_ball(r: Any, m: int, n: int, bits: int, *, below: Any = None,
                                   max_evals: int = 1500) -> Any:
    """A ball of ``log eps_{S(r)}``, the log of the max-relative-error of the angular hybrid on the sphere.

    ``eps_{S(r)}^2 = max_{theta in [0, pi]} MSE/SM^2`` with the exact moments (:func:`hybrid_mse` with the
    angular lambda-moments of :func:`angular_lambda_moments`, independent projections, ``SM = exp(r^2 cos
    theta)``), enclosed by :func:`max_bounds_0_pi` (at most ``max_evals`` ball evaluations); the lower end
    is the value at the float maximiser :func:`angular_rel_error_argmax`.  The hull is taken after the log
    (``eps^2`` spans many orders of magnitude).

    Parameters
    ----------
    r : float
        Common norm ``|x| = |y| = r``.
    m, n : int
        Random features of the base estimators and of the lambda-estimator.
    bits : int
        Working precision in bits.
    below : flint.arb, optional
        A log target: the branch-and-bound stops once it proves the maximum below it (or above it).
    max_evals : int, default 1500
        Most ball evaluations of ``eps^2``.

    Returns
    -------
    flint.arb
        A ball containing ``log eps_{S(r)}``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Def 3.3, Theorem 3.5 eq (27), Theorem D.1 eq (45)
    and appendix D.3, eq (48).

    Examples
    --------
    >>> from flint import arb
    >>> from rfcheck.closed_forms.hrf import log_max_rel_error_angular_hybrid
    >>> import mpmath
    >>> v = arb(mpmath.nstr(log_max_rel_error_angular_hybrid(4.0, 3, 5, backend="mpmath", dps=30), 25))
    >>> b = angular_log_max_rel_error_ball(4.0, 3, 5, 128, below=v + 0.01)  # proves the maximum below v + 0.01
    >>> bool(b.overlaps(v)), bool(b.overlaps(v + 0.01))
    (True, False)
    """
    from rfcheck.arb_backend import ARB, workprec

    rb, mb, nb = (num(ARB, v) for v in (r, m, n))

    def eps2(t: Any) -> Any:
        l1, l2 = angular_lambda_moments(ARB, t, nb)
        return hybrid_mse(ARB, rb, rb, t, mb, l1, l2, 0) * ARB.exp(-2 * rb**2 * ARB.cos(t))

    with workprec(bits):
        target = None if below is None else (2 * below).exp()
    lo, hi = max_bounds_0_pi(eps2, bits, below=target, guess=angular_rel_error_argmax(float(r), int(m), int(n)),
                             max_evals=max_evals)
    with workprec(bits):
        return (lo.log() / 2).union(hi.log() / 2)


# ---- base-estimator MSEs and relative errors, limits at the ends, CE quadratures, theta sin theta = c/r^2


def base_estimator_mse(h: dict[str, Any], which: str) -> Any:
    """The mean squared error ``E(S - SM)^2 = E S^2 - 2 SM E S + SM^2`` of a base estimator from its moments.

    ``S`` is ``SM^trig_m`` (``which="trig"``) or ``SM^++_m`` (``which="pos"``); the expansion does not
    assume ``E S = SM``.  Plain arithmetic on the moments, so it runs on any context's numbers (mpmath,
    Arb balls, floats).

    Parameters
    ----------
    h : dict
        ``ES1, ES1sq`` (first and second moment of ``SM^++_m``), ``ES2, ES2sq`` (of ``SM^trig_m``) and
        ``K = SM(x, y)``, as :func:`hybrid_moments` returns them.
    which : {"trig", "pos"}
        The base estimator.

    Returns
    -------
    number
        The MSE, a number of the moments' context.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), eq (2)-(3) (the estimators) and Lemma 2.2,
    eq (7) (the quantity it states).

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.backends import MP
    >>> h = hybrid_moments(MP, mpmath.mpf(1), mpmath.mpf(1), mpmath.pi, 1)  # x = -y, |x| = 1, one feature
    >>> g = lambda u: mpmath.npdf(u) * (mpmath.e * mpmath.cos(2 * u) - 1 / mpmath.e) ** 2  # E (S - SM)^2, S trig
    >>> mpmath.almosteq(base_estimator_mse(h, "trig"), mpmath.quad(g, [-mpmath.inf, 0, mpmath.inf]), 1e-12)
    True
    """
    s1, s2 = ("ES2", "ES2sq") if which == "trig" else ("ES1", "ES1sq")
    return h[s2] - 2 * h["K"] * h[s1] + h["K"] ** 2


def base_rel_error_ball(which: str, r: Any, theta: Any, m: int, bits: int, *, quad: bool = False) -> Any:
    """Ball of the relative error ``eps_{theta,r} = sqrt(MSE(S)) / SM(x, y)`` of a base estimator on the sphere.

    ``x, y`` on ``S(r)`` at angle ``theta``; ``S = SM^trig_m`` at ``theta`` (``which="trig"``) or
    ``S = SM^++_m`` at ``pi - theta`` (``which="pos"``, pi as a ball).  The moments are the exact MGF forms
    (:func:`hybrid_moments`) or, with ``quad``, the defining Gaussian expectations by rigorous quadrature
    (:func:`hybrid_moments_quad_ball`).  The MSE (:func:`base_estimator_mse`) is expanded at ``2 bits`` (it
    cancels to 0 at the zero-variance end) and its enclosure is intersected with ``[0, inf)`` before the
    square root: ``MSE = E(S - SM)^2 >= 0``, so the intersection loses no point of the true value and the
    ball is rigorous wherever the moments' balls are.

    Parameters
    ----------
    which : {"trig", "pos"}
        The base estimator.
    r, theta : float
        Radius and angle, exact as balls.
    m : int
        Number of random features.
    bits : int
        Working precision in bits (the MSE is expanded at ``2 bits``).
    quad : bool, default False
        Base moments by rigorous quadrature instead of the MGF closed forms.

    Returns
    -------
    flint.arb
        The enclosure.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Def 3.3 (the relative error) and Lemma 3.4,
    eq (25).

    Examples
    --------
    >>> import mpmath
    >>> from flint import arb
    >>> f = lambda u: mpmath.npdf(u) * (mpmath.e * mpmath.cos(2 * u) - 1 / mpmath.e) ** 2  # theta = pi, r = 1
    >>> from rfcheck.arb_backend import workprec
    >>> b = base_rel_error_ball("trig", 1.0, math.pi, 1, 128)  # math.pi: 1.2e-16 below pi, where d eps/d theta = 0
    >>> with mpmath.workdps(40), workprec(128):
    ...     v = arb(mpmath.nstr(mpmath.sqrt(mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf])) * mpmath.e, 35))
    ...     bool(abs(b - v) < 1e-28), bool(b.overlaps(v + 1e-25))
    (True, False)
    """
    from rfcheck.arb_backend import workprec

    def f(ctx: Any, rr: Any, t: Any, mm: Any) -> Any:
        h = hybrid_moments(ctx, rr, rr, ctx.pi - t if which == "pos" else t, mm)
        return base_estimator_mse(h, which), h["K"]

    if quad:
        h = hybrid_moments_quad_ball(r, r, theta, int(m), 2 * bits, flip=which == "pos")
        mse, k = h["mse2" if which == "trig" else "mse1"], h["K"]
    else:
        mse, k = on_balls(f, r, theta, int(m), bits=2 * bits)
    with workprec(2 * bits):
        return mse.nonnegative_part().sqrt() / k


def base_rel_error_end_ball(which: str, r: Any, m: int, bits: int) -> Any:
    """Ball of the relative error ``sqrt(MSE)/SM`` of ``SM^trig_m`` at ``theta = pi`` or ``SM^++_m`` at ``theta = 0``.

    ``x, y`` on ``S(r)``; the moments are the exact MGF forms (:func:`hybrid_moments`), the MSE
    :func:`base_estimator_mse`.  The relative error is a composition of ``exp``, ``cos``, ``sqrt`` and
    arithmetic, continuous in ``theta`` on ``[0, pi]`` (``SM > 0``, ``MSE >= 0``), so this is also its limit
    ``theta -> pi`` (trig) or ``theta -> 0`` (pos); the end point is exact (pi as a ball).

    Parameters
    ----------
    which : {"trig", "pos"}
        The base estimator: ``trig`` at ``theta = pi``, ``pos`` at ``theta = 0``.
    r : float
        Radius, exact as a ball.
    m : int
        Number of random features.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        The enclosure.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Def 3.3 and Lemma 3.4, eq (26) (the limits).

    Examples
    --------
    >>> import mpmath
    >>> from flint import arb
    >>> f = lambda u: mpmath.npdf(u) * (mpmath.e * mpmath.cos(2 * u) - 1 / mpmath.e) ** 2  # E (S - SM)^2, r = 1
    >>> from rfcheck.arb_backend import workprec
    >>> b = base_rel_error_end_ball("trig", 1.0, 3, 128)
    >>> with mpmath.workdps(40), workprec(128):
    ...     v = arb(mpmath.nstr(mpmath.sqrt(mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf]) / 3) * mpmath.e, 35))
    ...     bool(abs(b - v) < 1e-30), bool(b.overlaps(v + 1e-25))
    (True, False)
    """
    def f(ctx: Any, rr: Any, mm: Any) -> Any:
        h = hybrid_moments(ctx, rr, rr, ctx.pi if which == "trig" else num(ctx, 0.0), mm)
        return ctx.sqrt(base_estimator_mse(h, which)) / h["K"]

    return on_balls(f, r, int(m), bits=bits)


def two_point_limit(f: Callable[[Any], Any], dps: int) -> tuple[Any, Any]:
    """``lim_{h -> 0+} f(h)`` estimated from ``f`` at ``h = 10^-(dps+5)`` and ``h = 10^-(dps+6)``.

    Both values at ``dps + 20`` digits; the value is ``f(10^-(dps+6))``, the error bar ten times the
    difference of the two values plus ``10^-dps`` times the value.  For ``f`` with a first-order
    expansion ``f(h) = L + c h + O(h^2)`` the bar covers ``|f(h) - L|`` (the difference of the two values
    is ``0.9 c 10^-(dps+5)``); it is an estimate, not a proof (nothing bounds the higher orders), and it
    fails where ``f`` cancels catastrophically at these ``h``.

    Parameters
    ----------
    f : callable
        ``f(h)`` of an mpmath number ``h > 0``, evaluated at the working precision.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(value, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Lemma 3.4, eq (26) and Theorem 3.5 (the limits
    of the relative errors at the ends of ``[0, pi]``).

    Examples
    --------
    >>> import mpmath
    >>> v, e = two_point_limit(lambda h: mpmath.sin(h) / h, 30)  # the limit is 1
    >>> bool(abs(v - 1) <= e < mpmath.mpf(10) ** -29)
    True
    >>> v, e = two_point_limit(lambda h: 2 + 3 * h, 30)  # linear: the bar covers the distance to 2
    >>> bool(abs(v - 2) <= e), bool(abs(v - 2 - mpmath.mpf(10) ** -25) <= e)
    (True, False)
    """
    with mpmath.workdps(dps + 20):
        out = [f(mpmath.mpf(10) ** (-k)) for k in (dps + 5, dps + 6)]
        return out[1], abs(out[1] - out[0]) * 10 + abs(out[1]) * mpmath.mpf(10) ** (-dps)


def cexp_mgf_quad(a: Any, x: Any, y: Any, dps: int) -> tuple[Any, Any]:
    """``E exp(w^T z)``, ``z = A x + (A^T)^-1 y``, ``w ~ N(0, I_d)``, by per-coordinate quadrature.

    ``z`` at ``dps + 10`` digits (``(A^T)^-1`` by mpmath's LU), then :func:`quad_gaussian_exp_dot` (the
    defining expectation, not the MGF closed form ``exp(sum z_i^2 / 2)`` of Lemma 2.4).

    Parameters
    ----------
    a : mpmath.matrix
        Invertible complex ``d x d`` matrix ``A``.
    x, y : sequence
        The inputs, ``d`` real numbers each.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(value, error bar)`` of :func:`quad_gaussian_exp_dot`.

    Raises
    ------
    ZeroDivisionError
        If ``A`` is singular at the working precision (mpmath's LU).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (14) (the right side).

    Examples
    --------
    >>> import mpmath
    >>> a = mpmath.matrix([[1 + 0.5j, 0.2], [-0.3j, 1.5]])
    >>> v, e = cexp_mgf_quad(a, [0.4, -0.7], [0.1, 0.9], 25)
    >>> with mpmath.workdps(40):  # the closed form of Lemma 2.4, exp(sum z_i^2 / 2)
    ...     z = a * mpmath.matrix([0.4, -0.7]) + (a.T) ** -1 * mpmath.matrix([0.1, 0.9])
    ...     closed = mpmath.exp((z[0] ** 2 + z[1] ** 2) / 2)
    ...     bool(abs(v - closed) <= e < mpmath.mpf(10) ** -20), bool(abs(v - closed * (1 + 1e-15)) <= e)
    (True, False)
    """
    with mpmath.workdps(dps + 10):
        z = a * mpmath.matrix(list(x)) + (a.T) ** -1 * mpmath.matrix(list(y))
    return quad_gaussian_exp_dot([z[i] for i in range(z.rows)], dps)


def cexp_mean_quad(a: Any, x: Any, y: Any, dps: int) -> tuple[Any, Any]:
    """The mean of one complex-exponential (CE) sample, ``c E exp(w^T (A x + (A^T)^-1 y))``, by quadrature.

    ``z`` and ``c = exp(-(Ax)^2/2 - ((A^T)^-1 y)^2/2)`` (``u^2 = sum u_i^2``, no conjugation) at ``dps + 10``
    digits, then :func:`exp_dot_mean_quad` (the error bar is ``|c|`` times the quadrature's).

    Parameters
    ----------
    a : mpmath.matrix
        Invertible complex ``d x d`` matrix ``A``.
    x, y : sequence
        The inputs, ``d`` real numbers each.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(value, error bar)``.

    Raises
    ------
    ZeroDivisionError
        If ``A`` is singular at the working precision (mpmath's LU).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (15)-(16) (the estimator).

    Examples
    --------
    >>> import mpmath
    >>> a = mpmath.matrix([[1 + 0.5j, 0.2], [-0.3j, 1.5]])
    >>> v, e = cexp_mean_quad(a, [0.4, -0.7], [0.1, 0.9], 25)
    >>> with mpmath.workdps(40):  # the estimator is unbiased for SM(x, y) = exp(x.y)
    ...     sm = mpmath.exp(mpmath.mpf(0.4) * 0.1 - mpmath.mpf(0.7) * 0.9)
    ...     bool(abs(v - sm) <= e + mpmath.mpf(10) ** -24), bool(abs(v - sm * (1 + 1e-15)) <= e)
    (True, False)
    """
    with mpmath.workdps(dps + 10):
        ax, by = a * mpmath.matrix(list(x)), (a.T) ** -1 * mpmath.matrix(list(y))
        z = ax + by
        c = mpmath.exp(-mpmath.fsum(ax[i] ** 2 for i in range(ax.rows)) / 2
                       - mpmath.fsum(by[i] ** 2 for i in range(by.rows)) / 2)
    return exp_dot_mean_quad([z[i] for i in range(z.rows)], c, dps)


def base_rel_error_with_error(h: dict[str, Any], which: str, dps: int) -> tuple[Any, Any]:
    """The relative error ``sqrt(MSE)/SM`` of a base estimator from the moments of :func:`hybrid_moments_with_error`.

    ``MSE`` is ``mse2`` (``SM^trig_m``, ``which="trig"``) or ``mse1`` (``SM^++_m``); a value that the
    expansion leaves ``<= 0`` (it cancels to 0 at the zero-variance ends) gives 0.  The error bar is
    ``sqrt(err)/SM``, ``err`` the MSE's bar: ``|sqrt(a) - sqrt(b)| <= sqrt(|a - b|)`` for ``a, b >= 0``
    (so the bar is about the square root of the MSE's: half the digits, the price of covering the end
    points where the MSE is 0).

    Parameters
    ----------
    h : dict
        The output of :func:`hybrid_moments_with_error` at the pair (``|x| = |y| = r`` for the sphere).
    which : {"trig", "pos"}
        The base estimator.
    dps : int
        Target decimal digits (the value at ``dps + 10``).

    Returns
    -------
    tuple
        ``(relative error, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Def 3.3 and Lemma 3.4, eq (25).

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.backends import MP
    >>> base, berr = base_moments_with_error(1.0, 1.0, 2.0, 30)
    >>> v, e = base_rel_error_with_error(hybrid_moments_with_error(1.0, 1.0, 2.0, 1, base, berr, [0, 0], [0, 0], 30),
    ...                                  "trig", 30)
    >>> with mpmath.workdps(40):  # one feature at theta = 2: |x - y| = 2 sin 1, SM = exp(cos 2)
    ...     sm = mpmath.exp(mpmath.cos(2))
    ...     f = lambda u: mpmath.npdf(u) * (mpmath.e * mpmath.cos(2 * mpmath.sin(1) * u) - sm) ** 2
    ...     exact = mpmath.sqrt(mpmath.quad(f, mpmath.linspace(-20, 20, 21))) / sm
    ...     bool(abs(v - exact) <= e < 1e-16), bool(abs(v - exact * (1 + mpmath.mpf(10) ** -15)) <= e)
    (True, False)
    """
    with mpmath.workdps(dps + 10):
        mse = h["mse2"] if which == "trig" else h["mse1"]
        v = mpmath.sqrt(mse) / h["K"] if mse > 0 else mpmath.mpf(0)
        return v, mpmath.sqrt(h["err2"] if which == "trig" else h["err1"]) / h["K"]


def ce_real_solutions_max_residual(a: Any, dps: int) -> Any:
    """``max |(A x + (A^T)^-1 y)_i|`` over an orthonormal basis ``(x, y)`` of the real solutions of HRF eq (18).

    The real solutions are the null space of :func:`ce_real_system` (``Re(A) x + Re((A^T)^-1) y = 0``,
    ``Im(A) x + Im((A^T)^-1) y = 0``), from :func:`real_null_space` (an mpmath SVD, tolerance
    ``10^(10 - dps)``); everything at ``dps + 10`` digits.  The value is 0 when the null space is
    ``{0}``; a value above the working precision's noise means some real solution of (18) has
    ``A x + (A^T)^-1 y != 0``, i.e. violates (17).  Not an enclosure: the SVD is a floating-point
    computation (no bound on the null space's error).

    Parameters
    ----------
    a : mpmath.matrix
        Invertible complex ``d x d`` matrix ``A``.
    dps : int
        Decimal digits of the working precision.

    Returns
    -------
    mpmath.mpf
        The largest residual component (0 for a trivial null space).

    Raises
    ------
    ZeroDivisionError
        If ``A`` is singular at the working precision (mpmath's LU).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (17)-(18).

    Examples
    --------
    >>> import mpmath
    >>> real = mpmath.matrix([[1.5, 0.3], [-0.2, 1.1]])  # real A: (18) has a 2-d solution space, all solving (17)
    >>> len(real_null_space(ce_real_system(real), 30)), bool(ce_real_solutions_max_residual(real, 30) < 1e-30)
    (2, True)
    >>> ce_real_solutions_max_residual(mpmath.matrix([[1 + 1j, 0.3], [0.2j, 1.1]]), 30)  # only (x, y) = 0
    mpf('0.0')
    """
    with mpmath.workdps(dps + 10):
        d = a.rows
        b = (a.T) ** -1
        worst = mpmath.mpf(0)
        for v in real_null_space(ce_real_system(a), dps):
            z = a * mpmath.matrix([v[i] for i in range(d)]) + b * mpmath.matrix([v[d + i] for i in range(d)])
            worst = max(worst, max(abs(z[i]) for i in range(d)))
        return worst


def theta_sin_theta_root(r: Any, c: int = 1) -> Any:
    """The root ``theta*`` of ``c r^2 theta sin(theta) = 1`` in ``[0, pi/2]``, by mpmath's Anderson solver.

    ``theta sin(theta)`` increases on ``[0, pi/2]`` from 0 to ``pi/2``, so the root exists and is unique
    when ``c r^2 >= 2/pi``; it is the local maximiser of ``b_r^1`` (``c = 1``) or ``b_r^2`` (``c = 2``) of
    HRF appendix D.3 (where their derivatives, eq (57)-(58), change sign).  At the working precision;
    no error bar (:func:`theta_sin_theta_root_ball` encloses it).

    Parameters
    ----------
    r : mpmath.mpf
        The radius.
    c : int, default 1
        The constant (1 or 2).

    Returns
    -------
    mpmath.mpf
        The root.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, eq (57)-(61).

    Examples
    --------
    >>> import mpmath
    >>> t = theta_sin_theta_root(mpmath.mpf(2))
    >>> mpmath.nstr(4 * t * mpmath.sin(t), 15), bool(0 < t < mpmath.pi / 2)
    ('1.0', True)
    """
    return mpmath.findroot(lambda t: 1 - c * r**2 * t * mpmath.sin(t), (mpmath.mpf(0), mpmath.pi / 2),
                           solver="anderson")


def theta_sin_theta_root_ball(r: float, bits: int) -> Any:
    """Ball of the root ``theta*`` of ``r^2 theta sin(theta) = 1`` in ``[0, pi/2]`` (:func:`theta_sin_theta_root`).

    ``r^2 t sin(t) - 1`` increases on ``[0, pi/2]``: :func:`increasing_root_ball` encloses its root by a
    sign change on balls around a guess (:func:`theta_sin_theta_root`, polished by the secant method at
    ``0.31 bits + 10`` digits), so the ball is rigorous.

    Parameters
    ----------
    r : float
        The radius, exact as a ball (``r >= 0.8`` so that the root lies in ``[0, pi/2]``).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        The enclosure.

    Raises
    ------
    ValueError
        If no sign change brackets the guess (:func:`increasing_root_ball`).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix D.3, eq (59)-(61).

    Examples
    --------
    >>> import mpmath
    >>> from flint import arb
    >>> from rfcheck.arb_backend import workprec
    >>> b = theta_sin_theta_root_ball(3.0, 128)
    >>> with mpmath.workdps(45), workprec(128):  # t sin t = 1/9 by Newton on a different start
    ...     t = arb(mpmath.nstr(mpmath.findroot(lambda t: t * mpmath.sin(t) - mpmath.mpf(1) / 9, 0.3), 40))
    ...     bool(b.overlaps(t)), bool(b.rad() < 1e-30), bool(b.overlaps(t + 1e-30))
    (True, True, False)
    """
    from rfcheck.arb_backend import ARB

    rb = num(ARB, r)
    with mpmath.workdps(int(bits * 0.31) + 10):
        rm = mpmath.mpf(r)
        guess = mpmath.findroot(lambda t: 1 - rm**2 * t * mpmath.sin(t), theta_sin_theta_root(rm))  # polished (secant)
    return increasing_root_ball(lambda u: rb**2 * u * ARB.sin(u) - 1, guess, bits)


def positive_rho_features_mean(ctx: Any, x: list[Any], my: list[Any], c: Any) -> Any:
    """``E[rho_1(x)^T rho_2(y)]`` for HRF eq (20)'s features built on positive random features, by the Gaussian MGF.

    ``rho_1(x) = exp(-|x|^2/(2c^2)) phi(x/c)``, ``rho_2(y) = exp(-|My|^2/(2c^2)) phi(-My/c)`` with ``phi`` the
    antithetic positive features of eq (3), whose inner product has mean ``exp(-(|u|^2 + |v|^2)/2)
    E cosh(w^T (u + v)) = exp(-(|u|^2 + |v|^2)/2) exp(|u + v|^2/2)`` (the Gaussian MGF, Lemma 2.4); the
    product of the prefactors and that mean, evaluated term by term (not simplified to the target
    ``exp(-|x + My|^2/(2c^2))``).  Plain arithmetic and ``exp`` on the context's numbers.

    Parameters
    ----------
    ctx : context
        The number system (``rfcheck.backends.MP``, ``rfcheck.arb_backend.ARB``, ...).
    x, my : list
        ``x`` and ``M y`` (``d`` numbers of ``ctx`` each).
    c : number
        The scale ``c_k > 0``.

    Returns
    -------
    number
        The mean, a number of ``ctx``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.4, eq (20); eq (3) and Lemma 2.4, eq (13).

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.backends import MP
    >>> with mpmath.workdps(40):
    ...     x, my, c = [mpmath.mpf(0.5), mpmath.mpf(-0.2)], [mpmath.mpf(0.3), mpmath.mpf(0.9)], mpmath.mpf(1.5)
    ...     v = positive_rho_features_mean(MP, x, my, c)
    ...     target = mpmath.exp(-((x[0] + my[0]) ** 2 + (x[1] + my[1]) ** 2) / (2 * c**2))  # eq (20)'s lambda
    ...     bool(abs(v - target) < 1e-35), bool(abs(v - target * (1 + mpmath.mpf(10) ** -30)) < 1e-35)
    (True, False)
    """
    u = [a / c for a in x]
    v = [-b / c for b in my]
    sq = lambda w: ctx.fsum(*(t**2 for t in w))  # noqa: E731
    pref = ctx.exp(-sq(x) / (2 * c**2)) * ctx.exp(-sq(my) / (2 * c**2))
    return pref * ctx.exp(-(sq(u) + sq(v)) / 2) * ctx.exp(sq([a + b for a, b in zip(u, v, strict=True)]) / 2)


def exp_dot_sample_variance_quad(z: list[Any], c: Any, dps: int) -> tuple[Any, Any]:
    """``E|X - E X|^2`` of ``X = c exp(w^T z)``, ``w ~ N(0, I_d)``, ``z`` in ``C^d``, by quadrature.

    ``|c|^2 (E exp(2 w.Re z) - |E exp(w.z)|^2)`` (``|exp(w.z)|^2 = exp(2 w.Re z)``), both expectations by
    :func:`quad_gaussian_exp_dot` (the defining integrals, not Lemma 2.4's closed form); the error bar is
    ``|c|^2 (e_2 + 2 |E exp(w.z)| e_1)`` from the two quadratures' bars ``e_2``, ``e_1``.  ``2 Re z`` is
    formed at the caller's precision, the result at ``dps + 10`` digits.

    Parameters
    ----------
    z : list
        The coordinates of ``z`` (mpmath numbers, complex allowed).
    c : number
        The scale ``c`` (complex allowed).
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(variance, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (16)-(17) (the CE estimator) and
    appendix H.2, eq (91)-(92).

    Examples
    --------
    >>> import mpmath
    >>> z, c = [mpmath.mpc(0.3, -0.4), mpmath.mpc(-0.1, 0.2)], mpmath.mpc(0.8, 0.1)
    >>> v, e = exp_dot_sample_variance_quad(z, c, 25)
    >>> with mpmath.workdps(40):  # |c|^2 (exp(2 |Re z|^2) - exp(|Re z|^2 - |Im z|^2)) from the closed form
    ...     re2, im2 = mpmath.re(z[0]) ** 2 + mpmath.re(z[1]) ** 2, mpmath.im(z[0]) ** 2 + mpmath.im(z[1]) ** 2
    ...     exact = abs(c) ** 2 * (mpmath.exp(2 * re2) - mpmath.exp(re2 - im2))
    ...     bool(abs(v - exact) <= e < 1e-20), bool(abs(v - exact * (1 + mpmath.mpf(10) ** -18)) <= e)
    (True, False)
    """
    zr = [2 * mpmath.re(v) for v in z]
    m2, e2 = quad_gaussian_exp_dot(zr, dps)  # E exp(2 w.Re z) = E|exp(w.z)|^2
    m1, e1 = quad_gaussian_exp_dot(list(z), dps)
    with mpmath.workdps(dps + 10):
        return abs(c) ** 2 * (m2 - abs(m1) ** 2), abs(c) ** 2 * (abs(e2) + 2 * abs(m1) * abs(e1))


def exp_dot_mean_quad(z: list[Any], c: Any, dps: int) -> tuple[Any, Any]:
    """``E[c exp(w^T z)] = c E exp(w^T z)``, ``w ~ N(0, I_d)``, ``z`` in ``C^d``, by quadrature.

    :func:`quad_gaussian_exp_dot` (the defining integral, not Lemma 2.4's closed form) times ``c`` at
    ``dps + 10`` digits; the error bar is ``|c|`` times the quadrature's.  The mean of one sample of the
    complex-exponential estimators of HRF eq (15)-(16) and (91)-(92), ``c`` their normaliser.

    Parameters
    ----------
    z : list
        The coordinates of ``z`` (mpmath numbers, complex allowed).
    c : number
        The scale ``c`` (complex allowed).
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(mean, error bar)``; the mean is complex where ``c`` or ``z`` is.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (15)-(16), and appendix H.2,
    eq (90)-(92), (94)-(96).

    Examples
    --------
    >>> import mpmath
    >>> z, c = [mpmath.mpc(0.3, -0.4), mpmath.mpc(-0.1, 0.2)], mpmath.mpc(0.8, 0.1)
    >>> v, e = exp_dot_mean_quad(z, c, 25)
    >>> with mpmath.workdps(40):  # Lemma 2.4: E exp(w.z) = exp(sum z_i^2 / 2)
    ...     exact = c * mpmath.exp((z[0] ** 2 + z[1] ** 2) / 2)
    ...     bool(abs(v - exact) <= e < 1e-20), bool(abs(v - exact * (1 + mpmath.mpf(10) ** -18)) <= e)
    (True, False)
    """
    v, e = quad_gaussian_exp_dot(z, dps)
    with mpmath.workdps(dps + 10):
        return c * v, abs(c) * e


def exp_dot_mean_ball(z: list[Any], c: Any, bits: int) -> Any:
    """Ball of ``c E exp(w^T z)`` (:func:`exp_dot_mean_quad`): ``c`` times :func:`gaussian_exp_dot_ball`.

    The expectation is enclosed by rigorous Arb quadrature of the defining integral with proven tails
    (:func:`gaussian_exp_dot_ball`), the product by ball arithmetic, so the ball is rigorous wherever the
    balls of ``z`` and ``c`` are.

    Parameters
    ----------
    z : list
        The coordinates of ``z`` (balls or numbers exact as balls; complex allowed).
    c : flint.arb or flint.acb
        The scale.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.acb
        The enclosure.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.3, eq (15)-(16), and appendix H.2,
    eq (90)-(92), (94)-(96).

    Examples
    --------
    >>> import mpmath
    >>> from flint import acb
    >>> from rfcheck.arb_backend import workprec
    >>> b = exp_dot_mean_ball([0.5, -0.25j], acb(0.75), 128)
    >>> with mpmath.workdps(40), workprec(128):  # 0.75 exp((0.25 - 0.0625)/2), Lemma 2.4
    ...     exact = acb(mpmath.nstr(0.75 * mpmath.exp(mpmath.mpf(0.1875) / 2), 38))
    ...     bool(b.overlaps(exact)), bool(b.overlaps(exact + 1e-25))
    (True, False)
    """
    from rfcheck.arb_backend import workprec

    v = gaussian_exp_dot_ball(z, bits)
    with workprec(bits):
        return c * v


def _log_rel_error_form(which: str) -> Any:
    """The library closed form ``log eps_{theta,r}`` of ``SM^trig_m`` or ``SM^++_m`` (``rfcheck.closed_forms.hrf``)."""
    from rfcheck.closed_forms.hrf import log_rel_error_pos, log_rel_error_trig

    return log_rel_error_trig if which == "trig" else log_rel_error_pos


def base_max_rel_error(which: str, r: Any, m: int, dps: int) -> tuple[Any, Any]:
    """``eps_{S(r)} = max_{theta in [0, pi]} eps_{theta,r}`` of a base estimator, by numerical maximisation.

    ``eps_{theta,r}`` is the relative error ``sqrt(MSE)/SM`` of ``SM^trig_m`` (``which="trig"``) or
    ``SM^++_m`` on ``S(r)``, from the library closed forms :func:`rfcheck.closed_forms.hrf.log_rel_error_trig`
    / ``log_rel_error_pos`` (tested against the moment expansion and quadrature, cf.
    :func:`base_rel_error_ball`); its log is maximised over ``[0, pi]`` by :func:`mp_max_on_interval`
    (grid plus golden section), then exponentiated at ``dps + 10`` digits.  The error bar is the
    maximiser's bar scaled by the value: a numerical estimate, not an enclosure (a maximum found on a
    grid is a lower bound unless the grid resolves the peak).

    Parameters
    ----------
    which : {"trig", "pos"}
        The base estimator.
    r : float
        The radius.
    m : int
        Number of random features.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(maximum, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Def 3.3 and Lemma 3.4, eq (25)-(26).

    Examples
    --------
    >>> import mpmath
    >>> v, e = base_max_rel_error("trig", 1.0, 2, 20)
    >>> with mpmath.workdps(40):  # the maximum is the theta -> pi end: exp(2)(1 - exp(-4))/sqrt(4)
    ...     end = mpmath.exp(2) * (1 - mpmath.exp(-4)) / 2
    ...     bool(abs(v - end) <= e + mpmath.mpf(10) ** -18), bool(abs(v - end * 1.001) <= e)
    (True, False)
    """
    from rfcheck.backends import MP

    fn = _log_rel_error_form(which)
    r, m = mpmath.mpf(r), int(m)
    v, e = mp_max_on_interval(lambda t: fn.impl(MP, r, t, m), dps)
    with mpmath.workdps(dps + 10):
        return mpmath.exp(v), mpmath.exp(v) * e


def base_rel_error_limit(which: str, r: Any, m: int, dps: int) -> tuple[Any, Any]:
    """``lim eps_{theta,r}`` of ``SM^trig_m`` as ``theta -> pi`` or of ``SM^++_m`` as ``theta -> 0``, numerically.

    :func:`two_point_limit` of ``exp`` of the closed form (:func:`base_max_rel_error`'s) at ``10^-(dps+5)``
    and ``10^-(dps+6)`` from the end point: an estimate (:func:`base_rel_error_end_ball` encloses the
    value at the end point, which equals the limit by continuity).

    Parameters
    ----------
    which : {"trig", "pos"}
        The base estimator: ``trig`` at ``theta -> pi``, ``pos`` at ``theta -> 0``.
    r : float
        The radius.
    m : int
        Number of random features.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(limit, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Def 3.3 and Lemma 3.4, eq (26).

    Examples
    --------
    >>> import mpmath
    >>> v, e = base_rel_error_limit("pos", 0.5, 3, 25)
    >>> with mpmath.workdps(40):  # one feature: S = exp(-r^2) cosh(|x + y| g), |x + y| = 2r = 1, SM = exp(r^2)
    ...     f = lambda u: mpmath.npdf(u) * (mpmath.exp(-0.25) * mpmath.cosh(u) - mpmath.exp(0.25)) ** 2
    ...     exact = mpmath.sqrt(mpmath.quad(f, mpmath.linspace(-40, 40, 41)) / 3) / mpmath.exp(0.25)
    ...     bool(abs(v - exact) <= e), bool(abs(v - exact * (1 + mpmath.mpf(10) ** -20)) <= e)
    (True, False)
    """
    from rfcheck.backends import MP

    fn = _log_rel_error_form(which)
    r, m = mpmath.mpf(r), int(m)
    return two_point_limit(lambda h: mpmath.exp(fn.impl(MP, r, mpmath.pi - h if which == "trig" else h, m)), dps)


def angular_rel_error_sqrt_limit(end: str, r: Any, m: int, n: int, dps: int) -> tuple[Any, Any]:
    """``lim eps_{theta,r}/sqrt(theta)`` (``end="0"``) or ``/sqrt(pi - theta)`` (``end="pi"``) of the angular hybrid.

    ``eps_{theta,r}`` of ``SM^anghyb_{m,n}`` on ``S(r)`` from the library closed form
    :func:`rfcheck.closed_forms.hrf.log_rel_error_angular_hybrid` (the moment expansion, eq (45)); the
    ratio by :func:`two_point_limit` at ``10^-(dps+5)`` and ``10^-(dps+6)`` from the end: an estimate of a
    ``0/0`` limit, not an enclosure.  At ``end="pi"`` the angle ``pi - h`` is formed at ``2 dps + 30`` digits,
    so that the closed form recovers ``1 - theta/pi ~ h/pi`` from it with ``dps`` digits to spare.

    Parameters
    ----------
    end : {"0", "pi"}
        The end point of ``[0, pi]``.
    r : float
        The radius.
    m, n : int
        Numbers of random features of the base estimators and of the lambda-estimator.
    dps : int
        Target decimal digits.

    Returns
    -------
    tuple
        ``(limit, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Theorem 3.5 ('Furthermore') and Theorem D.1,
    eq (45).

    Examples
    --------
    >>> import mpmath
    >>> v, e = angular_rel_error_sqrt_limit("0", 1.0, 2, 3, 20)
    >>> with mpmath.workdps(40):  # Thm 3.5: sqrt(1/(2 pi m n)) W(r), W(r) = exp(2r^2)(1 - exp(-4r^2))
    ...     w = mpmath.sqrt(1 / (12 * mpmath.pi)) * mpmath.exp(2) * (1 - mpmath.exp(-4))
    ...     bool(abs(v - w) <= e), bool(abs(v - w * (1 + mpmath.mpf(10) ** -15)) <= e)
    (True, False)
    """
    from rfcheck.backends import MP
    from rfcheck.closed_forms.hrf import log_rel_error_angular_hybrid

    r, m, n = mpmath.mpf(r), int(m), int(n)

    def ratio(h: Any) -> Any:
        if end == "0":
            return mpmath.exp(log_rel_error_angular_hybrid.impl(MP, r, h, m, n)) / mpmath.sqrt(h)
        with mpmath.workdps(2 * dps + 30):  # pi - h keeps h's digits: 1 - theta/pi ~ h/pi is recovered exactly
            return +(mpmath.exp(log_rel_error_angular_hybrid.impl(MP, r, mpmath.pi - h, m, n)) / mpmath.sqrt(h))

    return two_point_limit(ratio, dps)


def base_estimator_mean_with_error(h: dict[str, Any], which: str) -> tuple[Any, Any]:
    """The mean ``E S`` of a base estimator from the moments of :func:`hybrid_moments_with_error`, with its bar.

    ``S`` is ``SM^trig_m`` (``which="trig"``, ``ES2``) or ``SM^++_m`` (``ES1``): the Gaussian expectation of
    the features' inner product (from the MGF or by quadrature, as the moments were computed), not assumed
    to equal ``SM``.  The error bar is ``3 rel |E S|``, ``rel`` the moments' relative input error.

    Parameters
    ----------
    h : dict
        The output of :func:`hybrid_moments_with_error`.
    which : {"trig", "pos"}
        The base estimator.

    Returns
    -------
    tuple
        ``(mean, error bar)``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 1, eq (2)-(3) and (6).

    Examples
    --------
    >>> import mpmath
    >>> base, berr = base_moments_with_error(0.7, 0.4, 1.1, 30, quad=True)  # the moments by 1-d quadrature
    >>> v, e = base_estimator_mean_with_error(
    ...     hybrid_moments_with_error(0.7, 0.4, 1.1, 3, base, berr, [0, 0], [0, 0], 30), "pos")
    >>> with mpmath.workdps(40):  # unbiased: E S = SM(x, y) = exp(|x| |y| cos theta)
    ...     sm = mpmath.exp(mpmath.mpf(0.7) * mpmath.mpf(0.4) * mpmath.cos(mpmath.mpf(1.1)))
    ...     bool(abs(v - sm) <= e < 1e-25), bool(abs(v - sm * (1 + mpmath.mpf(10) ** -20)) <= e)
    (True, False)
    """
    v = h["ES2"] if which == "trig" else h["ES1"]
    return v, h["rel"] * 3 * abs(v)


# ---- eq (19) sign-feature lambda, same-length pairs (eq (67), (76), (80)), the feature count of appendix D.4


def sign_feature_lambda_mean(theta: Any, n: int, dps: int) -> tuple[Any, Any]:
    """``E[1/2 + rho_n(x)^T rho_n(y)]``, the mean of the angular lambda-estimator with complex sign features.

    ``rho_n(z) = i/sqrt(2n) (sgn(tau_1^T z), ..., sgn(tau_n^T z))``, ``tau_i ~ N(0, I_d)``, ``x, y`` at angle
    ``theta``.  Term by term, ``rho_n(x)[k] rho_n(y)[k] = c sgn(tau_k^T x) sgn(tau_k^T y)`` with
    ``c = (i/sqrt(2n))^2`` (computed in complex arithmetic, not simplified), so the mean is
    ``1/2 + n c E[sgn sgn]``, the sign-product mean by quadrature (:func:`sgn_product_mean_quad`).  No closed
    form of the mean (``theta/pi``) is used.

    Parameters
    ----------
    theta : number
        Angle between ``x`` and ``y``.
    n : int
        Number of sign features.
    dps : int
        Target decimal digits (the arithmetic runs at ``dps + 10``).

    Returns
    -------
    tuple
        ``(value, error bar)``: the value an ``mpmath.mpc`` (its imaginary part is an exact zero), the error
        bar ``|n c|`` times that of the quadrature (which integrates a piecewise constant integrand between its
        breakpoints, with a ``10^(-dps-5)`` floor).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.4, eq (19).

    Examples
    --------
    >>> v, e = sign_feature_lambda_mean(1.0, 7, 30)
    >>> with mpmath.workdps(40):
    ...     bool(abs(v - mpmath.mpf(1) / mpmath.pi) < 1e-30), v.imag == 0, bool(e < 1e-30)
    (True, True, True)
    """
    s, e = sgn_product_mean_quad(theta, dps)
    with mpmath.workdps(dps + 10):
        c = (mpmath.mpc(0, 1) / mpmath.sqrt(2 * n)) ** 2  # rho_n(x)[i] rho_n(y)[i] = c sgn sgn
        v = mpmath.mpf(1) / 2 + n * c * s
        return v, abs(n * c) * e


def sign_feature_lambda_mean_ball(theta: float, n: int, bits: int) -> Any:
    """``E[1/2 + rho_n(x)^T rho_n(y)]`` (as :func:`sign_feature_lambda_mean`) as a complex ball.

    The sign-product mean is the exact integral of its piecewise constant integrand between the breakpoints
    (:func:`sgn_product_mean_ball`); ``c = (i/sqrt(2n))^2`` and ``1/2 + n c s`` are evaluated in Arb complex
    ball arithmetic, so the ball is a rigorous enclosure.

    Parameters
    ----------
    theta : float
        Angle between ``x`` and ``y``, in ``[0, pi]`` (a float, exact).
    n : int
        Number of sign features.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.acb
        A complex ball containing the mean.

    Raises
    ------
    ValueError
        From :func:`sgn_product_mean_ball` (``theta`` outside ``[0, pi]`` or breakpoints not separated).

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), sec 2.4, eq (19).

    Examples
    --------
    >>> from flint import arb
    >>> from rfcheck.arb_backend import workprec
    >>> b = sign_feature_lambda_mean_ball(1.0, 7, 128)
    >>> with workprec(128):
    ...     bool(b.real.overlaps(1 / arb.pi())), bool(b.real.overlaps(1 / arb.pi() + 1e-30)), bool(b.imag.contains(0))
    (True, False, True)
    """
    from flint import acb

    from rfcheck.arb_backend import workprec

    s = sgn_product_mean_ball(float(theta), bits)
    with workprec(bits):
        nb = acb(int(n))
        c = (acb(0, 1) / (2 * nb).sqrt()) ** 2  # rho_n(x)[i] rho_n(y)[i] = c sgn sgn
        return acb(1) / 2 + nb * c * s


def same_length_distance_sq(ctx: Any, r: Any, theta: Any) -> Any:
    """``|x - y|^2`` for ``x = r e_1`` and ``y = r (cos theta, sin theta)``, from the coordinates.

    ``(r - r cos theta)^2 + (r sin theta)^2``: the squared Euclidean distance of two vectors of length ``r``
    at angle ``theta``, summed coordinate by coordinate (no half-angle or law-of-cosines identity).

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    r, theta : number
        Common length and angle (ints and floats become numbers of ``ctx`` by :func:`rfcheck.backends.num`).

    Returns
    -------
    number
        ``|x - y|^2`` in ``ctx``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix F, eq (76) and (80).

    Examples
    --------
    >>> from rfcheck.backends import MP
    >>> with mpmath.workdps(40):
    ...     bool(abs(same_length_distance_sq(MP, 2, 1.0) - 8 * (1 - mpmath.cos(1))) < mpmath.mpf(10) ** -38)
    True
    """
    r, t = num(ctx, r), num(ctx, theta)
    return (r - r * ctx.cos(t)) ** 2 + (r * ctx.sin(t)) ** 2


def gauss_lambda_same_length(ctx: Any, r: Any, theta: Any, sigma: Any) -> Any:
    """The normalised bipolar Gaussian ``lambda(x, y)`` for ``|x| = |y| = r`` at angle ``theta``.

    ``(1 - exp(-sigma^2/2 |x - y|^2)) / rho``, ``rho = 1 - exp(-2 sigma^2 r^2)``, with ``|x - y|^2`` from the
    coordinates (:func:`same_length_distance_sq`); the mean of the lambda-estimator of :func:`gauss_lambda_moments`
    at equal lengths, written without the half-angle form.

    Parameters
    ----------
    ctx : context
        ``MP``, ``FP`` or ``ARB``.
    r, theta, sigma : number
        Common length, angle and bandwidth.

    Returns
    -------
    number
        ``lambda`` in ``ctx``.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), appendix F, eq (67)-(68) and (76).

    Examples
    --------
    >>> from rfcheck.backends import MP
    >>> with mpmath.workdps(40):
    ...     v = gauss_lambda_same_length(MP, 1.5, 2.0, 0.7)
    ...     e = gauss_lambda_moments(MP, 1.5, 1.5, 2.0, 3, 0.7, 1.5)[0]
    ...     bool(abs(v - e) < mpmath.mpf(10) ** -37), bool(0 < v < 1)
    (True, True)
    """
    s, r = num(ctx, sigma), num(ctx, r)
    return (1 - ctx.exp(-s**2 / 2 * same_length_distance_sq(ctx, r, theta))) / (1 - ctx.exp(-2 * s**2 * r**2))


def hrf_feature_dim_exponent(m: int, n: int, s: int, dps: int) -> Any:
    """Local exponent of the feature count ``d_est = dim Psi`` in ``mn`` along the ray ``(s m, s n)``.

    ``log(d_est(2 s m, 2 s n) / d_est(s m, s n)) / log 4`` (doubling ``s`` multiplies ``mn`` by 4), with
    ``d_est`` from :func:`hrf_feature_dim`; the log-log slope of ``d_est`` against ``mn`` at scale ``s``.  It
    increases with ``s`` towards the exponent of ``d_est = Theta(mn)``, i.e. 1.

    Parameters
    ----------
    m, n : int
        Base and lambda feature counts (at least 1).
    s : int
        Scale of the ray (at least 1).
    dps : int
        Decimal digits of the logarithms.

    Returns
    -------
    mpmath.mpf
        The slope.

    Raises
    ------
    ValueError
        From :func:`hrf_feature_dim` if ``m``, ``n`` or ``s`` is below 1.

    References
    ----------
    Choromanski et al., Hybrid Random Features (ICLR 2022), Lemma 2.3 (eq 11) and appendix D.4 / L.

    Examples
    --------
    >>> v = hrf_feature_dim_exponent(3, 5, 10**9, 30)
    >>> bool(abs(v - 1) < 1e-9), bool(v < 1)
    (True, True)
    """
    dim = hrf_feature_dim
    with mpmath.workdps(dps):
        return mpmath.log(mpmath.mpf(dim(2 * s * m, 2 * s * n)) / dim(s * m, s * n)) / mpmath.log(4)

"""Closed forms of Hybrid Random Features (HRF) -- correct versions, each citing its equation.

Every scalar result is one context-generic definition (``rfcheck.backends.formula``) with a
float64 face (vectorised), an mpmath face (``backend="mpmath", dps=...``) and a sympy face
(``.symbolic(...)``).  MSEs and relative errors are returned as logarithms (``log_*``):
on the sphere ``S(r)`` the relative error grows like ``exp(2 r^2)`` and its square like
``exp(4 r^2)``, which leaves float64 near ``r = 13``; in log-space nothing overflows for
any ``r`` the float64 exponent can hold.

Pair geometry
-------------
A pair enters through its norms and angle ``(nx, ny, theta)``, ``theta in [0, pi]`` (all
the paper's results depend on nothing else).  From these, without cancellation,

* ``|x - y|^2 = (nx - ny)^2 + 4 nx ny sin^2(theta/2)``  (``Delta`` of Lemma 2.2),
* ``|x + y|^2 = (nx - ny)^2 + 4 nx ny cos^2(theta/2)``  (``z`` of Lemma 2.2),
* ``x . y = nx ny cos(theta)``, ``|x|^2 - |y|^2 = (nx - ny)(nx + ny)``.

:func:`pair_geometry` computes ``(nx, ny, theta)`` from vectors with an angle formula
accurate near 0 and pi.

Status of the printed results (see ``rfcheck.claims.hrf`` for the verdicts)
--------------------------------------------------------------------------
Lemma 2.2, Thm 3.1 (both variants), Lemma 3.2, eq (45)-(46), Lemma 3.4 and Thm F.1's
main formula hold as printed.  Corrected here:

* eq (47) (same-length angular hybrid MSE): the trigonometric term's coefficient is
  ``E[(1 - lambda)^2] = (1 - p)(1 - p + p/n)``, not ``p(1 - 1/n - p + p/n)``;
* Thm 3.5, bound (27): eq (64) of its proof should read ``1/(2 n sqrt(pi) r)``
  (not ``r^2``); the valid bound is :func:`log_angular_hybrid_max_rel_error_bound`, and
  for fixed ``n`` the max-relative-error scales like ``exp(2r^2)/sqrt(r)``, not
  ``exp(2r^2)/r``; (27) fails for small ``n`` and large ``r``;
* Thm F.1's "furthermore" (same projections leave the MSE unchanged) needs ``|x| = |y|``
  (or ``|x|^2 - |y|^2 in 2 pi Z``): :func:`log_mse_gauss_hybrid` with ``shared=1`` is
  Thm 3.1 variant II with the Gaussian lambda-moments.

The Gaussian-lambda moments (:func:`gauss_lambda_mean` etc.) and :func:`log_mse_gauss_hybrid`
accept any radius ``r > 0``: they are the exact moments of eq (69)'s estimator for every input.
Where ``|x - y| > 2r`` the coefficient ``lambda(x, y)`` of eq (67) exceeds 1 (it is in ``[0, 1]``
for ``|x| = |y| = r``, the premise of appendix F); the estimator is still unbiased, but
``rfcheck.estimators.hrf`` refuses to build it there unless ``allow_lambda_above_one=True``
(``rfcheck.estimators.hrf.check_gauss_lambda_range``).

References
----------
K. Choromanski et al., "Hybrid Random Features", ICLR 2022:
Lemma 2.2 eq (7); Thm 3.1 eq (22)-(23), appendix C eq (31)-(41); Lemma 3.2 eq (24),
appendix D.1 eq (42)-(44); Thm D.1 eq (45)-(47); Lemma 3.4 eq (25)-(26); Thm 3.5 eq (27),
appendix D.3 eq (48)-(66); appendix F eq (67)-(80), Thm F.1, F.2.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from rfcheck import validate
from rfcheck.backends import _MAX_DPS, formula, get_backend

__all__ = [
    "angular_lambda_cross_moment",
    "angular_lambda_mean",
    "angular_lambda_second_moment",
    "angular_one_minus_second_moment",
    "cexp_log_mse",
    "gauss_lambda_mean",
    "gauss_lambda_second_moment",
    "gauss_one_minus_second_moment",
    "gauss_rho",
    "log_angular_hybrid_max_rel_error_bound",
    "log_max_rel_error_angular_hybrid",
    "log_max_rel_error_base",
    "log_mse_angular_hybrid",
    "log_mse_angular_hybrid_same_length",
    "log_mse_bipolar",
    "log_mse_gauss_hybrid",
    "log_mse_gauss_hybrid_same_length",
    "log_mse_pos",
    "log_mse_trig",
    "log_rel_error_angular_hybrid",
    "log_rel_error_pos",
    "log_rel_error_trig",
    "log_w",
    "pair_geometry",
]


# --------------------------------------------------------------------------- validation


def _finite(name: str, v: Any) -> np.ndarray:
    a = np.asarray(validate.not_complex(v, name), dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return a


def _check_norm(name: str, v: Any) -> None:
    if np.any(_finite(name, v) < 0):
        raise ValueError(f"{name} must be >= 0 (a norm)")


def _check_theta(theta: Any) -> None:
    t = _finite("theta", theta)
    if np.any(t < 0) or np.any(t > math.pi * (1 + 1e-15)):
        raise ValueError("theta must lie in [0, pi] (the angle between x and y)")


def _check_count(name: str, v: Any) -> None:
    a = validate.not_complex(v, name)
    if a.dtype.kind not in "iuf" or not np.all(np.isfinite(a.astype(float))):
        raise ValueError(f"{name} must be an integer >= 1")
    if np.any(a < 1) or np.any(np.asarray(a, dtype=float) != np.floor(np.asarray(a, dtype=float))):
        raise ValueError(f"{name} must be an integer >= 1 (number of random features)")


def _check_pair(nx: Any, ny: Any, theta: Any) -> None:
    _check_norm("nx = |x|", nx)
    _check_norm("ny = |y|", ny)
    _check_theta(theta)


def _check_pair_m(nx: Any, ny: Any, theta: Any, m: Any) -> None:
    _check_pair(nx, ny, theta)
    _check_count("m", m)


def _check_r(r: Any) -> None:
    if np.any(_finite("r", r) <= 0):
        raise ValueError("r must be > 0 (radius of the sphere S(r))")


# ------------------------------------------------------------------------------ geometry


def pair_geometry(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(|x|, |y|, theta_{x,y})`` of vectors (shape (d,) or (P, d)), float64.

    ``theta = 2 atan2(|x^ - y^|, |x^ + y^|)`` with unit vectors ``x^, y^``: accurate near
    0 and pi, where ``arccos`` of the cosine loses half the digits.  A zero vector has no
    angle: ``ValueError``.  Below ``theta = 1e-2`` (where that formula's absolute error of a few
    eps is no longer ~eps relative) ``theta = atan2(sqrt(|x|^2 |y|^2 - (x.y)^2), x.y)`` from
    exact integer arithmetic on the float64 inputs (exactly 0 for parallel vectors).

    Parameters
    ----------
    x, y : array_like
        Vectors of shape (d,), or (P, d) for ``P`` pairs.

    Returns
    -------
    nx, ny, theta : numpy.ndarray
        Shape (P,) each (``P = 1`` for vectors): ``|x|``, ``|y|`` and the angle in ``[0, pi]``.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in shape, an input is not finite, or a vector is zero.

    Examples
    --------
    >>> nx, ny, theta = pair_geometry([1.0, 0.0], [0.0, 2.0])
    >>> nx.tolist(), ny.tolist(), bool(np.isclose(theta[0], np.pi / 2))
    ([1.0], [2.0], True)
    """
    xa = np.atleast_2d(_finite("x", x))
    ya = np.atleast_2d(_finite("y", y))
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same shape; got {xa.shape} and {ya.shape}")
    nx = np.linalg.norm(xa, axis=1)
    ny = np.linalg.norm(ya, axis=1)
    if np.any(nx == 0) or np.any(ny == 0):
        raise ValueError("theta_{x,y} is undefined for a zero vector (need |x|, |y| > 0)")
    ux, uy = xa / nx[:, None], ya / ny[:, None]
    theta = 2 * np.arctan2(np.linalg.norm(ux - uy, axis=1), np.linalg.norm(ux + uy, axis=1))
    for i in np.flatnonzero(theta < _SMALL_ANGLE):
        theta[i] = _exact_angle(xa[i], ya[i])
    return nx, ny, theta


_SMALL_ANGLE = 1e-2  # pair_geometry: angles below this are recomputed exactly


def _scaled_ints(v: np.ndarray) -> list[int]:
    """Integers ``V_l`` with ``v_l = V_l 2^-K`` exactly (one ``K`` for the whole vector)."""
    ratios = [float(t).as_integer_ratio() for t in v.tolist()]  # denominators are powers of 2
    k = max(den.bit_length() for _, den in ratios)
    return [num << (k - den.bit_length()) for num, den in ratios]


def _exact_angle(x: np.ndarray, y: np.ndarray) -> float:
    """``atan2(|x ^ y|, x.y)`` with ``|x ^ y|^2 = |x|^2 |y|^2 - (x.y)^2`` in exact integer
    arithmetic (the scales of ``x`` and ``y`` cancel in the ratio), then 30 digits."""
    xi, yi = _scaled_ints(x), _scaled_ints(y)
    sx, sy = sum(t * t for t in xi), sum(t * t for t in yi)
    xy = sum(a * b for a, b in zip(xi, yi, strict=True))
    wedge = sx * sy - xy * xy  # >= 0 (Cauchy-Schwarz), exactly 0 for parallel vectors
    with mpmath.workdps(30):
        return float(mpmath.atan2(mpmath.sqrt(mpmath.mpf(wedge)), mpmath.mpf(xy)))


def _sq_diff(ctx: Any, nx: Any, ny: Any, theta: Any) -> Any:
    return (nx - ny) ** 2 + 4 * nx * ny * ctx.sin(theta / 2) ** 2


def _sq_sum(ctx: Any, nx: Any, ny: Any, theta: Any) -> Any:
    return (nx - ny) ** 2 + 4 * nx * ny * ctx.cos(theta / 2) ** 2


_TINY = 1e-70  # float64 inputs in (0, _TINY) may underflow in products of four: mpmath instead


def _tiny(ctx: Any, *vals: Any) -> Any:
    """Conditioning term: ``inf`` where a float64 input lies in ``(0, 1e-70)`` (products such
    as ``nx ny sin^2(theta/2)`` could underflow and silently zero an MSE), else 1; the
    formula mechanism then recomputes those points in mpmath.  Always 1 in mpmath."""
    if ctx.name != "float64":
        return 1
    bad = np.zeros(np.broadcast(*[np.asarray(v, dtype=float) for v in vals]).shape, dtype=bool)
    for v in vals:
        a = np.abs(np.asarray(v, dtype=float))
        bad = bad | ((a > 0) & (a < _TINY))
    return np.where(bad, np.inf, 1.0)


_PI_LO = 1.2246467991473532e-16  # pi - float(pi)


def _pi_minus(ctx: Any, theta: Any) -> Any:
    """``pi - theta``; in float64 with the low part of pi, so that ``theta = float(pi)``
    gives ``1.2e-16`` (its true distance from pi), not 0."""
    if ctx.name == "float64":
        return (np.pi - theta) + _PI_LO
    return ctx.pi - theta


def _clip_theta(ctx: Any, theta: Any) -> Any:
    """``theta`` clipped into ``[0, pi]``: :func:`_check_theta` admits ``theta`` up to ``pi (1 + 1e-15)``
    (a rounding of pi), which would make ``pi - theta`` and ``1 - theta/pi`` negative.  In float64 the
    clip is to ``float(pi)`` (as if ``np.pi`` had been passed).  The sympy face takes ``theta`` in
    ``[0, pi]`` as given."""
    if ctx.name == "sympy":
        return theta
    return ctx.where(theta > ctx.pi, ctx.pi, theta)


def _log1mexp(ctx: Any, t: Any) -> Any:
    """``log(1 - exp(-t))`` for ``t >= 0`` (``-inf`` at ``t = 0``)."""
    return ctx.log(-ctx.expm1(-t))


# ------------------------------------------------------------------------ Lemma 2.2, eq (7)


def _cond_pair(ctx: Any, nx: Any, ny: Any, theta: Any, *rest: Any) -> Any:
    return _tiny(ctx, nx, ny, theta)


@formula(check=_check_pair_m, conditioning=_cond_pair)
def log_mse_trig(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any) -> Any:
    """log MSE of ``SM^trig_m`` (eq 2): ``(2m)^-1 exp(|x|^2 + |y|^2) (1 - exp(-|x - y|^2))^2``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    nx, ny : array_like
        The norms ``|x|, |y| >= 0`` (broadcast together with the other arguments).
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the MSE of ``SM^trig_m`` about ``SM(x, y)`` (``-inf`` where it is
        0): float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If a norm is negative, ``theta`` is outside ``[0, pi]``, a count is not an integer ``>= 1``,
        or an input is not finite.

    References
    ----------
    HRF Lemma 2.2, eq (7): ``f1(|z|) f3(|Delta|)`` with ``f1(u) = (2m)^-1 exp(u^2) SM^-2``
    (``exp(|z|^2) SM^-2 = exp(|x|^2 + |y|^2)``); holds as printed.

    Examples
    --------
    >>> float(log_mse_trig(1.0, 1.0, 0.0, 4))  # x = y: every trigonometric estimate is exact
    -inf
    >>> d2 = 1.0**2 + 0.5**2 - 2 * 0.5 * np.cos(1.0)  # |x - y|^2
    >>> bool(np.isclose(log_mse_trig(1.0, 0.5, 1.0, 4), np.log((1 - np.exp(-d2)) ** 2 / 8) + 1.25))
    True
    """
    theta = _clip_theta(ctx, theta)
    return -ctx.log(2 * m) + nx**2 + ny**2 + 2 * _log1mexp(ctx, _sq_diff(ctx, nx, ny, theta))


@formula(check=_check_pair_m, conditioning=_cond_pair)
def log_mse_pos(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any) -> Any:
    """log MSE of ``SM^++_m`` (eq 3): ``(2m)^-1 exp(2|z|^2 - |x|^2 - |y|^2)(1 - exp(-|z|^2))^2``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    nx, ny : array_like
        The norms ``|x|, |y| >= 0`` (broadcast together with the other arguments).
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the MSE of ``SM^++_m`` about ``SM(x, y)`` (``-inf`` where it is 0):
        float64 arrays broadcast over the arguments, or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If a norm is negative, ``theta`` is outside ``[0, pi]``, a count is not an integer ``>= 1``,
        or an input is not finite.

    References
    ----------
    HRF Lemma 2.2, eq (7): ``f2(|z|) f3(|z|)``, ``exp(|z|^2) SM^2 = exp(2|z|^2 - |x|^2 - |y|^2)``;
    holds as printed.

    Examples
    --------
    >>> z2 = 1.0**2 + 0.5**2 + 2 * 0.5 * np.cos(1.0)  # |x + y|^2
    >>> bool(np.isclose(log_mse_pos(1.0, 0.5, 1.0, 4), np.log((1 - np.exp(-z2)) ** 2 / 8) + 2 * z2 - 1.25))
    True
    """
    theta = _clip_theta(ctx, theta)
    s = _sq_sum(ctx, nx, ny, theta)
    return -ctx.log(2 * m) + 2 * s - nx**2 - ny**2 + 2 * _log1mexp(ctx, s)


# ----------------------------------------------------------------- Thm 3.1, eq (22)-(23)


_MOMENT_SLACK = 1e-9  # relative rounding slack of the Cauchy-Schwarz check of the lambda-moments


def _check_bipolar(nx: Any, ny: Any, theta: Any, m: Any, e2: Any, o2: Any, c: Any, shared: Any) -> None:
    _check_pair_m(nx, ny, theta, m)
    for name, v in (("E[lambda^2]", e2), ("E[(1-lambda)^2]", o2)):
        if np.any(_finite(name, v) < 0):
            raise ValueError(f"{name} must be >= 0 (a second moment)")
    cc = _finite("E[lambda(1-lambda)]", c)
    # moments of one random lambda: the Gram matrix [[E l^2, E l(1-l)], [E l(1-l), E (1-l)^2]] is PSD
    if np.any(np.abs(cc) > np.sqrt(_finite("E[lambda^2]", e2)) * np.sqrt(_finite("E[(1-lambda)^2]", o2))
              * (1 + _MOMENT_SLACK)):
        raise ValueError("E[lambda^2], E[(1-lambda)^2], E[lambda(1-lambda)] are not the moments of one random "
                         "lambda: need E[lambda(1-lambda)]^2 <= E[lambda^2] E[(1-lambda)^2] (Cauchy-Schwarz)")
    sh = validate.not_complex(shared, "shared")
    if not np.all((sh == 0) | (sh == 1)):
        raise ValueError("shared must be 0 (variant I, independent projections) or 1 (variant II, shared)")


def _bipolar_terms(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any, e2: Any, o2: Any, c: Any, shared: Any):
    theta = _clip_theta(ctx, theta)
    lp = log_mse_pos.impl(ctx, nx, ny, theta, m)
    lt = log_mse_trig.impl(ctx, nx, ny, theta, m)
    big = ctx.where(lp > lt, lp, lt)
    if ctx.name != "sympy":  # (sympy is exact: any shift does, and this one keeps the expression small)
        # shift by the larger exponent among the terms with a nonzero coefficient: a zero-coefficient
        # term must not set it (the other term, exp(l - big), could underflow to 0)
        nz = ctx.where(e2 > 0, ctx.where(o2 > 0, big, lp), ctx.where(o2 > 0, lt, big))
        big = ctx.where(nz > -ctx.exp(700), nz, big)  # unless its MSE is zero, or both coefficients are
        # exponents capped at the shift: a zero-coefficient term above it gives 0, not 0 * inf
        lp, lt = ctx.where(lp > big, big, lp), ctx.where(lt > big, big, lt)
    big = ctx.where(big > -ctx.exp(700), big, 0)  # both MSEs zero (x = y = 0): any shift
    # (2/m) SM^2 (1 - cos(|x|^2 - |y|^2)) = (4/m) exp(2 x.y) sin^2((|x|^2 - |y|^2)/2)
    lc = ctx.log(4) - ctx.log(m) + 2 * nx * ny * ctx.cos(theta) - big
    lc = lc + 2 * ctx.log(ctx.abs(ctx.sin((nx - ny) * (nx + ny) / 2)))  # -inf when |x| = |y|
    cross = shared * c * ctx.exp(lc)
    return big, e2 * ctx.exp(lp - big), o2 * ctx.exp(lt - big), cross


def _bipolar_conditioning(ctx: Any, *args: Any) -> Any:
    big, a, b, cr = _bipolar_terms(ctx, *args)
    # a, b >= 0: only the subtracted term can cancel; no subtraction (cr = 0) -> 1.  Each term is
    # exp(l - big) with an exponent l ~ big good to ~eps |big| absolute (e.g. log MSE ~ -600 for tiny
    # norms), so the cancellation amplifies max(1, |big|) eps, not eps
    amp = ctx.where(ctx.abs(big) > 1, ctx.abs(big), 1)
    return (1 + 2 * amp * ctx.abs(cr) / (ctx.abs(a + b - cr) + (ctx.abs(cr) == 0))) * _tiny(ctx, *args[:3])


@formula(check=_check_bipolar, conditioning=_bipolar_conditioning)
def log_mse_bipolar(
    ctx: Any, nx: Any, ny: Any, theta: Any, m: Any, e_lam2: Any, e_oml2: Any, e_lam_oml: Any, shared: Any
) -> Any:
    """log MSE of the bipolar hybrid ``lambda SM^++_m + (1 - lambda) SM^trig_m`` (eq 12).

    ``e_lam2 = E[lambda^2]``, ``e_oml2 = E[(1 - lambda)^2]``, ``e_lam_oml =
    E[lambda (1 - lambda)]`` of the lambda-estimator (independent of the base
    estimators).  ``shared=0``: independent projections (variant I, eq 22); ``shared=1``:
    the same projections (variant II, eq 23), which subtracts
    ``(2/m) SM^2 (1 - cos(|x|^2 - |y|^2)) E[lambda(1 - lambda)]``.  Float64 points where
    that subtraction cancels are recomputed in mpmath.  Moments that no random ``lambda``
    has (``E[lambda(1 - lambda)]^2 > E[lambda^2] E[(1 - lambda)^2]``, which could make the
    MSE negative) raise ``ValueError``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    nx, ny : array_like
        The norms ``|x|, |y| >= 0`` (broadcast together with the other arguments).
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.
    e_lam2 : array_like
        ``E[lambda^2] >= 0`` of the lambda-estimator.
    e_oml2 : array_like
        ``E[(1 - lambda)^2] >= 0``.
    e_lam_oml : array_like
        ``E[lambda (1 - lambda)]``, with ``E[lambda(1 - lambda)]^2 <= E[lambda^2] E[(1 - lambda)^2]``.
    shared : {0, 1}
        0: independent projections for the two base estimators (variant I); 1: the same projections
        (variant II).

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the hybrid's MSE about ``SM(x, y)`` (``-inf`` where it is 0):
        float64 arrays broadcast over the arguments, or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As the pair checks of :func:`log_mse_trig`; if a second moment is negative, the three
        moments are not those of one random ``lambda`` (Cauchy-Schwarz), or ``shared`` is not 0 or
        1.

    References
    ----------
    HRF Thm 3.1, eq (22)-(23); proof appendix C, eq (31)-(41).  Both hold as printed
    (the intermediate eq (36) writes ``binom(m, 2)`` where ``m(m - 1)`` is meant).

    Examples
    --------
    ``lambda = 1`` (moments 1, 0, 0) is ``SM^++_m``:

    >>> bool(np.isclose(log_mse_bipolar(1.0, 0.5, 1.0, 4, 1.0, 0.0, 0.0, 0), log_mse_pos(1.0, 0.5, 1.0, 4)))
    True
    """
    big, a, b, cr = _bipolar_terms(ctx, nx, ny, theta, m, e_lam2, e_oml2, e_lam_oml, shared)
    return big + ctx.log(a + b - cr)


# --------------------------------------------------------------------- Lemma 3.2, eq (24)


def _check_theta_n(theta: Any, n: Any) -> None:
    _check_theta(theta)
    _check_count("n", n)


@formula(check=_check_theta)
def angular_lambda_mean(ctx: Any, theta: Any) -> Any:
    """``E[lambda_hat] = theta/pi`` for the sgn-feature estimator (eq 19).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``theta/pi``: float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``theta`` is outside ``[0, pi]`` or not finite.

    References
    ----------
    HRF Lemma 3.2, eq (24); appendix D.1 (Goemans-Williamson).

    Examples
    --------
    >>> float(angular_lambda_mean(np.pi / 2))
    0.5
    """
    return _clip_theta(ctx, theta) / ctx.pi


@formula(check=_check_theta_n)
def angular_lambda_second_moment(ctx: Any, theta: Any, n: Any) -> Any:
    """``E[lambda_hat_n^2] = p (p - p/n + 1/n)``, ``p = theta/pi`` (eq 19 with n sgn features).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``E[lambda_hat_n^2]``: float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``theta`` is outside ``[0, pi]`` or ``n`` is not an integer ``>= 1``.

    References
    ----------
    HRF Lemma 3.2, eq (24); proof appendix D.1, eq (42)-(44) (the middle expression of
    eq (44) is misprinted; the final one holds).

    Examples
    --------
    >>> float(angular_lambda_second_moment(np.pi / 2, 2))  # p = 1/2: p (p - p/n + 1/n)
    0.375
    """
    p = _clip_theta(ctx, theta) / ctx.pi
    return p * (p * (n - 1) + 1) / n  # = p (p - p/n + 1/n); no float 1/n in the mpmath face


@formula(check=_check_theta_n)
def angular_one_minus_second_moment(ctx: Any, theta: Any, n: Any) -> Any:
    """``E[(1 - lambda_hat_n)^2] = (1 - p)(1 - p + p/n)``, ``p = theta/pi``.

    ``1 - p`` is evaluated as ``(pi - theta)/pi`` (no cancellation near ``theta = pi``).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``E[(1 - lambda_hat_n)^2]``: float64 arrays broadcast over the arguments, or an mpmath
        number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``theta`` is outside ``[0, pi]`` or ``n`` is not an integer ``>= 1``.

    References
    ----------
    HRF Thm D.1, eq (45) (second coefficient); from Lemma 3.2 by ``theta -> pi - theta``.

    Examples
    --------
    >>> round(float(angular_one_minus_second_moment(np.pi / 2, 2)), 12)
    0.375
    """
    q = _pi_minus(ctx, _clip_theta(ctx, theta)) / ctx.pi
    return q * (q + (1 - q) / n)


@formula(check=_check_theta_n)
def angular_lambda_cross_moment(ctx: Any, theta: Any, n: Any) -> Any:
    """``E[lambda_hat_n (1 - lambda_hat_n)] = p (1 - p)(1 - 1/n)``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``E[lambda_hat_n (1 - lambda_hat_n)]``: float64 arrays broadcast over the arguments, or an
        mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``theta`` is outside ``[0, pi]`` or ``n`` is not an integer ``>= 1``.

    References
    ----------
    HRF Thm D.1, eq (46) (``p(1 - 1/n - p + p/n)``).

    Examples
    --------
    The three moments add up to ``E[(lambda + 1 - lambda)^2] = 1``:

    >>> t, n = 1.0, 3
    >>> tot = (angular_lambda_second_moment(t, n) + angular_one_minus_second_moment(t, n)
    ...        + 2 * angular_lambda_cross_moment(t, n))
    >>> bool(np.isclose(tot, 1.0))
    True
    """
    theta = _clip_theta(ctx, theta)
    p = theta / ctx.pi
    q = _pi_minus(ctx, theta) / ctx.pi
    return p * q * (n - 1) / n


# ------------------------------------------------------------------- Thm D.1, eq (45)-(47)


def _check_ang(nx: Any, ny: Any, theta: Any, m: Any, n: Any, shared: Any) -> None:
    _check_pair_m(nx, ny, theta, m)
    _check_count("n", n)
    sh = validate.not_complex(shared, "shared")
    if not np.all((sh == 0) | (sh == 1)):
        raise ValueError("shared must be 0 (independent projections) or 1 (shared projections)")


def _ang_args(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any, n: Any, shared: Any) -> tuple[Any, ...]:
    return (nx, ny, theta, m, angular_lambda_second_moment.impl(ctx, theta, n),
            angular_one_minus_second_moment.impl(ctx, theta, n),
            angular_lambda_cross_moment.impl(ctx, theta, n), shared)


@formula(check=_check_ang, conditioning=lambda ctx, *a: _bipolar_conditioning(ctx, *_ang_args(ctx, *a)))
def log_mse_angular_hybrid(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any, n: Any, shared: Any) -> Any:
    """log MSE of the angular hybrid ``SM^anghyb_{m,n}`` (eq 12 with lambda of eq 19).

    Thm 3.1 with Lemma 3.2's moments.  ``shared`` as in :func:`log_mse_bipolar`.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    nx, ny : array_like
        The norms ``|x|, |y| >= 0`` (broadcast together with the other arguments).
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.
    shared : {0, 1}
        0: independent projections for the two base estimators (variant I); 1: the same projections
        (variant II).

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the angular hybrid's MSE about ``SM(x, y)`` (``-inf`` where it is
        0): float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If a norm is negative, ``theta`` is outside ``[0, pi]``, a count is not an integer ``>= 1``,
        or an input is not finite. Also if ``shared`` is not 0 or 1.

    References
    ----------
    HRF Thm D.1, eq (45) (``shared=0``) and eq (46) (``shared=1``); both hold as printed.

    Examples
    --------
    At ``theta = pi`` every sign feature separates the pair, ``lambda = 1``: the hybrid is ``SM^++_m``:

    >>> bool(np.isclose(log_mse_angular_hybrid(1.0, 0.5, np.pi, 4, 3, 0), log_mse_pos(1.0, 0.5, np.pi, 4)))
    True
    """
    return log_mse_bipolar.impl(ctx, *_ang_args(ctx, nx, ny, theta, m, n, shared))


def _check_same(r: Any, theta: Any, m: Any, n: Any) -> None:
    _check_r(r)
    _check_theta(theta)
    _check_count("m", m)
    _check_count("n", n)


def _cond_r_theta(ctx: Any, r: Any, theta: Any, *rest: Any) -> Any:
    return _tiny(ctx, r, theta)


@formula(check=_check_same, conditioning=_cond_r_theta)
def log_mse_angular_hybrid_same_length(ctx: Any, r: Any, theta: Any, m: Any, n: Any) -> Any:
    """log MSE of the angular hybrid for ``|x| = |y| = r`` (either projection variant).

    ``MSE = (2m)^-1 [E lambda^2 exp(8 r^2 cos^2(theta/2) - 2r^2)(1 - exp(-4 r^2 cos^2(theta/2)))^2
    + E(1-lambda)^2 exp(2 r^2)(1 - exp(-4 r^2 sin^2(theta/2)))^2]``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        The common norm ``r = |x| = |y|``, ``> 0``.
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the MSE (``-inf`` where it is 0): float64 arrays broadcast over the
        arguments, or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``r <= 0``, ``theta`` is outside ``[0, pi]``, or a count is not an integer ``>= 1``.

    References
    ----------
    HRF Thm D.1, eq (47), corrected: eq (47) prints the second coefficient as
    ``p(1 - 1/n - p + p/n)`` (that is ``E[lambda(1 - lambda)]``); the correct one is
    ``E[(1 - lambda)^2] = (1 - p)(1 - p + p/n)`` (eq 45 with ``|x| = |y|``).

    Examples
    --------
    >>> bool(np.isclose(log_mse_angular_hybrid_same_length(1.0, 1.0, 4, 3),
    ...                 log_mse_angular_hybrid(1.0, 1.0, 1.0, 4, 3, 0)))
    True
    """
    return log_mse_angular_hybrid.impl(ctx, r, r, theta, m, n, 0)


# ------------------------------------------------------------------ Lemma 3.4, eq (25)-(26)


def _check_r_theta_m(r: Any, theta: Any, m: Any) -> None:
    _check_r(r)
    _check_theta(theta)
    _check_count("m", m)


def _log_rel_err_base(ctx: Any, m: Any, u: Any) -> Any:
    """``log((2m)^-1/2 exp(u/2)(1 - exp(-u)))`` with ``u = |Delta|^2`` (trig) or ``|z|^2`` (++)."""
    return -ctx.log(2 * m) / 2 + u / 2 + _log1mexp(ctx, u)


@formula(check=_check_r_theta_m, conditioning=_cond_r_theta)
def log_rel_error_trig(ctx: Any, r: Any, theta: Any, m: Any) -> Any:
    """``log eps_{theta,r}(SM^trig_m) = log((2m)^-1/2 exp(2r^2 s)(1 - exp(-4 r^2 s)))``, ``s = sin^2(theta/2)``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        The radius of the sphere ``S(r)``, ``> 0``.
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the relative error ``sqrt(MSE)/SM`` on ``S(r)`` (``-inf`` where it
        is 0): float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``r <= 0``, ``theta`` is outside ``[0, pi]``, or ``m`` is not an integer ``>= 1``.

    References
    ----------
    HRF Lemma 3.4, eq (25); holds as printed.

    Examples
    --------
    The largest relative error of ``SM^trig`` on ``S(r)`` is at ``theta = pi`` (eq 26):

    >>> bool(np.isclose(log_rel_error_trig(1.0, np.pi, 4), log_max_rel_error_base(1.0, 4)))
    True
    """
    return _log_rel_err_base(ctx, m, 4 * r**2 * ctx.sin(_clip_theta(ctx, theta) / 2) ** 2)


@formula(check=_check_r_theta_m, conditioning=_cond_r_theta)
def log_rel_error_pos(ctx: Any, r: Any, theta: Any, m: Any) -> Any:
    """``log eps_{theta,r}(SM^++_m)``: eq (25)'s expression at ``pi - theta`` (``cos^2(theta/2)``).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        The radius of the sphere ``S(r)``, ``> 0``.
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the relative error ``sqrt(MSE)/SM`` on ``S(r)`` (``-inf`` where it
        is 0): float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``r <= 0``, ``theta`` is outside ``[0, pi]``, or ``m`` is not an integer ``>= 1``.

    References
    ----------
    HRF Lemma 3.4, eq (25); holds as printed.

    Examples
    --------
    The largest relative error of ``SM^++`` on ``S(r)`` is at ``theta = 0`` (eq 26):

    >>> bool(np.isclose(log_rel_error_pos(1.0, 0.0, 4), log_max_rel_error_base(1.0, 4)))
    True
    """
    return _log_rel_err_base(ctx, m, 4 * r**2 * ctx.cos(_clip_theta(ctx, theta) / 2) ** 2)


@formula(check=_check_r)
def log_w(ctx: Any, r: Any) -> Any:
    """``log W(r) = 2 r^2 + log(1 - exp(-4 r^2))`` (Lemma 3.4, Thm 3.5).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        The radius of the sphere ``S(r)``, ``> 0``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``log W(r)``: float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``r <= 0`` or not finite.

    Examples
    --------
    >>> bool(np.isclose(log_w(1.0), 2 + np.log(1 - np.exp(-4))))
    True
    """
    return 2 * r**2 + _log1mexp(ctx, 4 * r**2)


def _check_r_m(r: Any, m: Any) -> None:
    _check_r(r)
    _check_count("m", m)


@formula(check=_check_r_m)
def log_max_rel_error_base(ctx: Any, r: Any, m: Any) -> Any:
    """``log eps_{S(r)}(SM^trig_m) = log eps_{S(r)}(SM^++_m) = log(W(r)/sqrt(2m))``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        The radius of the sphere ``S(r)``, ``> 0``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``log(W(r)/sqrt(2m))``: float64 arrays broadcast over the arguments, or an mpmath number
        with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``r <= 0`` or ``m`` is not an integer ``>= 1``.

    References
    ----------
    HRF Lemma 3.4, eq (26); holds as printed (the maximum is at theta = pi, resp. 0).

    Examples
    --------
    >>> bool(np.isclose(log_max_rel_error_base(1.0, 4), log_w(1.0) - np.log(8) / 2))
    True
    """
    return log_w.impl(ctx, r) - ctx.log(2 * m) / 2


# --------------------------------------------------------------------- Thm 3.5, eq (27)


@formula(check=_check_same, conditioning=_cond_r_theta)
def log_rel_error_angular_hybrid(ctx: Any, r: Any, theta: Any, m: Any, n: Any) -> Any:
    """``log eps_{theta,r}(SM^anghyb_{m,n}) = (log MSE - 2 r^2 cos(theta)) / 2`` on ``S(r)``.

    Equals ``log(exp(r^2) sqrt(h_r(theta)/(2m)))`` with ``h_r`` of eq (49)-(50).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        The radius of the sphere ``S(r)``, ``> 0``.
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the relative error ``sqrt(MSE)/SM`` on ``S(r)`` (``-inf`` where it
        is 0): float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``r <= 0``, ``theta`` is outside ``[0, pi]``, or a count is not an integer ``>= 1``.

    References
    ----------
    HRF Def 3.3; appendix D.3 eq (48)-(50) (eq (66) misprints ``exp(2r^2)`` for ``exp(r^2)``).

    Examples
    --------
    Symmetric under ``theta -> pi - theta`` (eq 49):

    >>> bool(np.isclose(log_rel_error_angular_hybrid(1.5, 0.3, 4, 8),
    ...                 log_rel_error_angular_hybrid(1.5, np.pi - 0.3, 4, 8)))
    True
    """
    theta = _clip_theta(ctx, theta)
    return (log_mse_angular_hybrid_same_length.impl(ctx, r, theta, m, n) - 2 * r**2 * ctx.cos(theta)) / 2


def log_max_rel_error_angular_hybrid(r: float, m: int, n: int, *, backend: str = "float64",
                                     dps: int = 50) -> Any:
    """``log eps_{S(r)}(SM^anghyb_{m,n})``: maximum over ``theta`` of the relative error.

    The relative error is symmetric, ``eps_theta = eps_{pi - theta}`` (eq 49), so the
    maximum is searched on ``[0, pi/2]``: a grid (uniform plus geometric towards 0, where
    the maximiser sits, ``theta* ~ 1/r``) locates it, bounded Brent refines it in
    float64; the mpmath face refines the bracket by golden-section search at ``dps``
    digits (the maximum value is then good to ~``dps`` digits, the maximiser to half).

    Parameters
    ----------
    r : float
        The radius of the sphere ``S(r)``, ``> 0``.
    m : int
        Random features of each base estimator, ``>= 1``.
    n : int
        Random features of the lambda-estimator, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        The face: float64 (bounded Brent) or mpmath (golden-section search at ``dps`` digits).
    dps : int, optional
        Digits of the mpmath face (default 50).

    Returns
    -------
    float or mpmath.mpf
        ``max_theta log eps_{theta,r}(SM^anghyb_{m,n})``.

    Raises
    ------
    ValueError
        If ``r <= 0``, a count is not an integer ``>= 1``, or ``backend`` is unknown.

    References
    ----------
    HRF Def 3.3, Thm 3.5; appendix D.3 eq (48).

    Examples
    --------
    The maximum is at least the value on a fine grid of angles:

    >>> grid = np.linspace(0, np.pi, 1001)
    >>> best = float(np.max(log_rel_error_angular_hybrid(2.0, grid, 4, 8)))
    >>> bool(best <= log_max_rel_error_angular_hybrid(2.0, 4, 8) < best + 1e-6)
    True
    """
    _check_r(r)
    _check_count("m", m)
    _check_count("n", n)
    get_backend(backend)
    grid = np.unique(np.concatenate([np.linspace(0, math.pi / 2, 257),
                                     np.geomspace(1e-8, math.pi / 2, 257)]))
    vals = np.asarray(log_rel_error_angular_hybrid(r, grid, m, n), dtype=float)
    k = int(np.nanargmax(vals))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    if backend == "float64":
        from scipy.optimize import minimize_scalar

        res = minimize_scalar(lambda t: -float(log_rel_error_angular_hybrid(r, t, m, n)),
                              bounds=(lo, hi), method="bounded", options={"xatol": 1e-13})
        return max(-float(res.fun), float(vals[k]))
    with mpmath.workdps(dps + 10):
        def f(t: Any) -> Any:
            return log_rel_error_angular_hybrid.impl(get_backend("mpmath"), mpmath.mpf(r), t, m, n)

        a, b = mpmath.mpf(lo), mpmath.mpf(hi)
        g = (mpmath.sqrt(5) - 1) / 2
        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = f(c), f(d)
        tol = mpmath.mpf(10) ** (-(dps // 2) - 5)
        while b - a > tol:
            if fc > fd:
                b, d, fd = d, c, fc
                c = b - g * (b - a)
                fc = f(c)
            else:
                a, c, fc = c, d, fd
                d = a + g * (b - a)
                fd = f(d)
        best = max(fc, fd, f(mpmath.mpf(lo)), f(mpmath.mpf(hi)))
    with mpmath.workdps(dps):
        return +best


def _check_bound(r: Any, m: Any, n: Any) -> None:
    if np.any(_finite("r", r) < 1):
        raise ValueError("r must be >= 1 (Thm 3.5's condition)")
    _check_count("m", m)
    _check_count("n", n)


@formula(check=_check_bound)
def log_angular_hybrid_max_rel_error_bound(ctx: Any, r: Any, m: Any, n: Any) -> Any:
    """Corrected Thm 3.5 bound: ``eps_{S(r)} <= W(r)/sqrt(2m) sqrt((1 - 1/n)/(pi r^2) + 1/(n sqrt(pi) r))``.

    The proof of (27) is right up to eq (63); eq (64) should read
    ``max b_r^2 <= exp(2r^2)/(2 n sqrt(pi) r)`` (from ``theta* <= sqrt(pi)/(2r)``), which
    gives this bound for ``r >= 1``.  For fixed ``n`` it scales like
    ``exp(2r^2)/sqrt(r)`` -- and so does the true maximum, so no bound ``O(exp(2r^2)/r)``
    holds uniformly in ``n``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        The radius of the sphere ``S(r)``, ``>= 1`` (Thm 3.5's condition).
    m : array_like of int
        Random features of each base estimator, ``>= 1``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The log of the bound: float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``r < 1`` or a count is not an integer ``>= 1``.

    References
    ----------
    HRF Thm 3.5, eq (27); appendix D.3 eq (51)-(65) with eq (64) corrected.

    Examples
    --------
    The bound lies above the true maximum:

    >>> bool(log_angular_hybrid_max_rel_error_bound(2.0, 4, 8) >= log_max_rel_error_angular_hybrid(2.0, 4, 8))
    True
    """
    return log_w.impl(ctx, r) - ctx.log(2 * m) / 2 + ctx.log(
        (n - 1) / (n * ctx.pi * r**2) + 1 / (n * ctx.sqrt(ctx.pi) * r)) / 2


# --------------------------------------------------------------- appendix F, Thm F.1/F.2


def _check_sigma_r(sigma: Any, r: Any) -> None:
    if np.any(_finite("sigma", sigma) <= 0):
        raise ValueError("sigma must be > 0 (Gaussian-lambda smoothness, eq 67)")
    _check_r(r)


@formula(check=lambda r, sigma: _check_sigma_r(sigma, r))
def gauss_rho(ctx: Any, r: Any, sigma: Any) -> Any:
    """``rho = 1 - exp(-2 sigma^2 r^2)`` (eq 68).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        Appendix F's radius ``r > 0`` (eq 68: ``rho = 1 - exp(-2 sigma^2 r^2)``).
    sigma : array_like
        The Gaussian lambda's ``sigma > 0`` (eq 67).

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``rho`` in ``(0, 1)``: float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``sigma <= 0`` or ``r <= 0``.

    Examples
    --------
    >>> bool(np.isclose(gauss_rho(1.0, 1.0), 1 - np.exp(-2)))
    True
    """
    return -ctx.expm1(-2 * sigma**2 * r**2)


def _check_gauss(nx: Any, ny: Any, theta: Any, n: Any, sigma: Any, r: Any) -> None:
    _check_pair(nx, ny, theta)
    _check_count("n", n)
    _check_sigma_r(sigma, r)


def _ratio(ctx: Any, num: Any, den: Any) -> Any:
    """``num / den`` for ``den >= 0``, ``inf`` at ``den = 0`` (no ``ZeroDivisionError`` in mpmath)."""
    return ctx.where(den > 0, num / ctx.where(den > 0, den, 1), math.inf)


def _gauss_gap(ctx: Any, nx: Any, ny: Any, theta: Any, r: Any) -> tuple[Any, Any]:
    """``(4 r^2 - |Delta|^2, conditioning)`` in the better of two exact forms.

    A: ``(2r - nx - ny)(2r + nx + ny) + 4 nx ny cos^2(theta/2)`` (exact at ``nx = ny = r``,
    the premise of appendix F); B: ``(2r - |nx - ny|)(2r + |nx - ny|) - 4 nx ny sin^2(theta/2)``
    (no cancellation where ``|Delta| << 2r``, e.g. ``nx, ny >> r`` at a small angle).  The
    first factors are compensated sums of the exact inputs.  Each form's conditioning is the
    sum of its terms' magnitudes over its value; the float64 face takes the form with the
    smaller one and returns that as the conditioning (``inf`` where the gap is 0).
    """
    a = ctx.fsum(2 * r, -nx, -ny)
    form_a = a * (2 * r + nx + ny) + 4 * nx * ny * ctx.cos(theta / 2) ** 2
    if ctx.name == "sympy":
        return form_a, 1
    hi = ctx.where(nx > ny, nx, ny)
    lo = ctx.where(nx > ny, ny, nx)
    b1 = ctx.fsum(2 * r, -hi, lo) * (2 * r + (hi - lo))
    b2 = 4 * nx * ny * ctx.sin(theta / 2) ** 2
    form_b = b1 - b2
    cond_a = _ratio(ctx, ctx.abs(a) * (2 * r + nx + ny) + 4 * nx * ny * ctx.cos(theta / 2) ** 2, ctx.abs(form_a))
    cond_b = _ratio(ctx, ctx.abs(b1) + b2, ctx.abs(form_b))
    use_a = cond_a <= cond_b
    return ctx.where(use_a, form_a, form_b), ctx.where(use_a, cond_a, cond_b)


def _gauss_parts(ctx: Any, nx: Any, ny: Any, theta: Any, n: Any, sigma: Any, r: Any):
    """``(rho, 1 - g, (1 - rho) - g, 1 - g^2 over sqrt(2n))`` with ``g = exp(-sigma^2 |Delta|^2/2)``.

    ``(1 - rho) - g = exp(-2 s^2 r^2) - exp(-s^2 |Delta|^2/2)`` is written as
    ``-exp(-2 s^2 r^2) expm1(v)``, ``v = s^2 (4 r^2 - |Delta|^2)/2`` with the gap from
    :func:`_gauss_gap`, where the difference cancels (``v < 1``); for ``v >= 1`` it is the plain
    difference (cancellation factor below 2.2), since there ``exp(-2 s^2 r^2)`` can underflow
    while ``expm1(v)`` overflows.
    """
    theta = _clip_theta(ctx, theta)
    dd = _sq_diff(ctx, nx, ny, theta)
    rho = -ctx.expm1(-2 * sigma**2 * r**2)
    one_g = -ctx.expm1(-sigma**2 * dd / 2)
    v = sigma**2 * _gauss_gap(ctx, nx, ny, theta, r)[0] / 2
    omr_g = ctx.where(v < 1, -ctx.exp(-2 * sigma**2 * r**2) * ctx.expm1(ctx.where(v < 1, v, 0)),
                      ctx.exp(-2 * sigma**2 * r**2) - ctx.exp(-sigma**2 * dd / 2))
    var_n = ctx.expm1(-sigma**2 * dd) ** 2 / (2 * n)
    return rho, one_g, omr_g, var_n


def _gauss_omr_cond(ctx: Any, nx: Any, ny: Any, theta: Any, sigma: Any, r: Any) -> Any:
    """Relative error amplification of ``(1 - rho) - g`` from :func:`_gauss_parts`: the gap's
    conditioning where ``v < 1`` (``expm1(v)`` passes ``v``'s relative error on), else 3."""
    theta = _clip_theta(ctx, theta)
    gap, cond = _gauss_gap(ctx, nx, ny, theta, r)
    return ctx.where(sigma**2 * gap / 2 < 1, cond, 3)


def _cond_one_minus(ctx: Any, nx: Any, ny: Any, theta: Any, n: Any, sigma: Any, r: Any) -> Any:
    _, _, omr_g, var_n = _gauss_parts(ctx, nx, ny, theta, n, sigma, r)
    share = _ratio(ctx, omr_g**2, omr_g**2 + var_n)  # the part of the moment that carries the gap's error
    return (1 + 2 * _gauss_omr_cond(ctx, nx, ny, theta, sigma, r) * share) * _tiny(ctx, nx, ny, theta, sigma, r)


def _cond_gauss_tiny(ctx: Any, nx: Any, ny: Any, theta: Any, n: Any, sigma: Any, r: Any) -> Any:
    return _tiny(ctx, nx, ny, theta, sigma, r)  # (products like rho^2 ~ (sigma r)^4 underflow)


@formula(check=_check_gauss, conditioning=_cond_gauss_tiny)
def gauss_lambda_mean(ctx: Any, nx: Any, ny: Any, theta: Any, n: Any, sigma: Any, r: Any) -> Any:
    """``E[lambda_hat] = lambda(x, y) = (1 - exp(-sigma^2 |x - y|^2/2))/rho`` (eq 67, 69).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    nx, ny : array_like
        The norms ``|x|, |y| >= 0`` (broadcast together with the other arguments).
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.
    sigma : array_like
        The Gaussian lambda's ``sigma > 0`` (eq 67).
    r : array_like
        Appendix F's radius ``r > 0`` (eq 68: ``rho = 1 - exp(-2 sigma^2 r^2)``).

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``E[lambda_hat]``, in ``[0, 1]`` where ``|x - y| <= 2r``: float64 arrays broadcast over the
        arguments, or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If a norm is negative, ``theta`` is outside ``[0, pi]``, ``n`` is not an integer ``>= 1``,
        or ``sigma`` or ``r`` is not positive.

    Examples
    --------
    The coefficient that :func:`rfcheck.estimators.hrf.check_gauss_lambda_range` computes from vectors:

    >>> from rfcheck.estimators.hrf import check_gauss_lambda_range
    >>> x, y = np.array([0.3, 0.0]), 0.4 * np.array([np.cos(1.0), np.sin(1.0)])
    >>> bool(np.isclose(gauss_lambda_mean(0.3, 0.4, 1.0, 2, 1.0, 0.5), check_gauss_lambda_range(x, y, 1.0, 0.5)))
    True
    """
    rho, one_g, _, _ = _gauss_parts(ctx, nx, ny, theta, n, sigma, r)
    return one_g / rho


@formula(check=_check_gauss, conditioning=_cond_gauss_tiny)
def gauss_lambda_second_moment(ctx: Any, nx: Any, ny: Any, theta: Any, n: Any, sigma: Any, r: Any) -> Any:
    """``E[lambda_hat^2] = rho^-2 (1 - e^{-s^2|D|^2/2})^2 + (2 rho^2 n)^-1 (1 - e^{-s^2|D|^2})^2``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    nx, ny : array_like
        The norms ``|x|, |y| >= 0`` (broadcast together with the other arguments).
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.
    sigma : array_like
        The Gaussian lambda's ``sigma > 0`` (eq 67).
    r : array_like
        Appendix F's radius ``r > 0`` (eq 68: ``rho = 1 - exp(-2 sigma^2 r^2)``).

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``E[lambda_hat^2]``: float64 arrays broadcast over the arguments, or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As :func:`gauss_lambda_mean`.

    References
    ----------
    HRF Thm F.1, eq (72); proof eq (75).  Holds as printed.

    Examples
    --------
    The variance ``E[lambda_hat^2] - lambda^2 = (1 - exp(-sigma^2 |x - y|^2))^2 / (2 n rho^2)``:

    >>> args = (0.3, 0.4, 1.0, 2, 1.0, 0.5)
    >>> d2 = 0.3**2 + 0.4**2 - 2 * 0.3 * 0.4 * np.cos(1.0)
    >>> var = gauss_lambda_second_moment(*args) - gauss_lambda_mean(*args) ** 2
    >>> bool(np.isclose(var, np.expm1(-d2) ** 2 / (2 * 2 * gauss_rho(0.5, 1.0) ** 2)))
    True
    """
    rho, one_g, _, var_n = _gauss_parts(ctx, nx, ny, theta, n, sigma, r)
    return (one_g**2 + var_n) / rho**2


@formula(check=_check_gauss, conditioning=_cond_one_minus)
def gauss_one_minus_second_moment(ctx: Any, nx: Any, ny: Any, theta: Any, n: Any, sigma: Any, r: Any) -> Any:
    """``E[(1 - lambda_hat)^2] = rho^-2 ((1 - rho) - e^{-s^2|D|^2/2})^2 + (2 rho^2 n)^-1 (1 - e^{-s^2|D|^2})^2``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    nx, ny : array_like
        The norms ``|x|, |y| >= 0`` (broadcast together with the other arguments).
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.
    sigma : array_like
        The Gaussian lambda's ``sigma > 0`` (eq 67).
    r : array_like
        Appendix F's radius ``r > 0`` (eq 68: ``rho = 1 - exp(-2 sigma^2 r^2)``).

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        ``E[(1 - lambda_hat)^2]``: float64 arrays broadcast over the arguments, or an mpmath number
        with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As :func:`gauss_lambda_mean`.

    References
    ----------
    HRF Thm F.1, eq (73); proof eq (74).  Holds as printed.  ``(1 - rho) - g`` cancels where
    ``|Delta| ~ 2r``: it is taken from ``4r^2 - |Delta|^2`` in whichever of two exact forms
    cancels less, and float64 points where both cancel are recomputed in mpmath.

    Examples
    --------
    ``E[(1 - lambda)^2] = 1 - 2 E[lambda] + E[lambda^2]``:

    >>> args = (0.3, 0.4, 1.0, 2, 1.0, 0.5)
    >>> ref = 1 - 2 * gauss_lambda_mean(*args) + gauss_lambda_second_moment(*args)
    >>> bool(np.isclose(gauss_one_minus_second_moment(*args), ref))
    True
    """
    rho, _, omr_g, var_n = _gauss_parts(ctx, nx, ny, theta, n, sigma, r)
    return (omr_g**2 + var_n) / rho**2


def _gauss_args(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any, n: Any, sigma: Any, r: Any, shared: Any):
    rho, one_g, omr_g, var_n = _gauss_parts(ctx, nx, ny, theta, n, sigma, r)
    e2 = (one_g**2 + var_n) / rho**2
    o2 = (omr_g**2 + var_n) / rho**2
    # E[lam(1 - lam)] = E lam (1 - E lam) - Var lam, 1 - E lam = ((1 - rho) - g)/rho ... sign: (rho - 1 + g)/rho
    cross = one_g * (-omr_g) / rho**2 - var_n / rho**2
    return (nx, ny, theta, m, e2, o2, cross, shared)


def _check_gauss_mse(nx: Any, ny: Any, theta: Any, m: Any, n: Any, sigma: Any, r: Any, shared: Any) -> None:
    _check_gauss(nx, ny, theta, n, sigma, r)
    _check_count("m", m)
    sh = validate.not_complex(shared, "shared")
    if not np.all((sh == 0) | (sh == 1)):
        raise ValueError("shared must be 0 (independent projections) or 1 (shared projections)")


def _gauss_hybrid_conditioning(ctx: Any, nx: Any, ny: Any, theta: Any, m: Any, n: Any, sigma: Any, r: Any,
                               shared: Any) -> Any:
    """Thm 3.1's conditioning plus the error that ``(1 - rho) - g`` (:func:`_gauss_omr_cond`)
    carries into ``E[(1 - lambda)^2]`` and ``E[lambda(1 - lambda)]``, relative to the MSE."""
    args = _gauss_args(ctx, nx, ny, theta, m, n, sigma, r, shared)
    _, a, b, cr = _bipolar_terms(ctx, *args)
    _, one_g, omr_g, var_n = _gauss_parts(ctx, nx, ny, theta, n, sigma, r)
    prod = ctx.abs(one_g * omr_g)
    sens = (2 * b * _ratio(ctx, omr_g**2, omr_g**2 + var_n)
            + ctx.where(ctx.abs(cr) > 0, ctx.abs(cr) * _ratio(ctx, prod, ctx.abs(one_g * omr_g + var_n)), 0))
    gap_part = ctx.where(sens > 0, _gauss_omr_cond(ctx, nx, ny, theta, sigma, r)
                         * _ratio(ctx, sens, ctx.abs(a + b - cr)), 0)
    return (_bipolar_conditioning(ctx, *args) + gap_part) * _tiny(ctx, sigma, r)


@formula(check=_check_gauss_mse, conditioning=_gauss_hybrid_conditioning)
def log_mse_gauss_hybrid(
    ctx: Any, nx: Any, ny: Any, theta: Any, m: Any, n: Any, sigma: Any, r: Any, shared: Any
) -> Any:
    """log MSE of the normalised bipolar Gaussian hybrid (eq 67-70, trig-estimated lambda).

    Thm 3.1 with the moments of eq (72)-(73) and ``E[lambda(1 - lambda)] = E lambda -
    E lambda^2``; ``rho`` from eq (68) with the radius ``r``.  ``shared=1`` (the same
    projections for both base estimators) subtracts Thm 3.1's variant-II term, which is
    zero only when ``|x|^2 - |y|^2 in 2 pi Z`` (e.g. ``|x| = |y|``).

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    nx, ny : array_like
        The norms ``|x|, |y| >= 0`` (broadcast together with the other arguments).
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.
    sigma : array_like
        The Gaussian lambda's ``sigma > 0`` (eq 67).
    r : array_like
        Appendix F's radius ``r > 0`` (eq 68: ``rho = 1 - exp(-2 sigma^2 r^2)``).
    shared : {0, 1}
        0: independent projections for the two base estimators (variant I); 1: the same projections
        (variant II).

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the hybrid's MSE about ``SM(x, y)`` (``-inf`` where it is 0):
        float64 arrays broadcast over the arguments, or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As :func:`gauss_lambda_mean`; also if ``m`` is not an integer ``>= 1`` or ``shared`` is not
        0 or 1.

    References
    ----------
    HRF Thm F.1, eq (71)-(73) (holds as printed for ``shared=0``); its "furthermore" is
    corrected here for ``|x| != |y|``.

    Examples
    --------
    For ``|x| = |y|`` sharing the projections leaves the MSE unchanged (Thm F.1's "furthermore"):

    >>> bool(np.isclose(log_mse_gauss_hybrid(0.5, 0.5, 1.0, 4, 2, 1.0, 0.5, 0),
    ...                 log_mse_gauss_hybrid(0.5, 0.5, 1.0, 4, 2, 1.0, 0.5, 1)))
    True
    """
    return log_mse_bipolar.impl(ctx, *_gauss_args(ctx, nx, ny, theta, m, n, sigma, r, shared))


def _check_gauss_same(r: Any, theta: Any, m: Any, n: Any, sigma: Any) -> None:
    _check_same(r, theta, m, n)
    _check_sigma_r(sigma, r)


def _cond_gauss_same(ctx: Any, r: Any, theta: Any, m: Any, n: Any, sigma: Any) -> Any:
    # products below 1e-70, not only the inputs: rho^2 ~ 4 (sigma r)^4 underflows (0/0 = NaN), and so
    # do (1 - g)^2 ~ (sigma r theta)^4 / 4 and |Delta|^2 ~ (r theta)^2 (a lost term of the MSE)
    return _tiny(ctx, r, theta, sigma, sigma * r, r * theta, sigma * r * theta)


@formula(check=_check_gauss_same, conditioning=_cond_gauss_same)
def log_mse_gauss_hybrid_same_length(ctx: Any, r: Any, theta: Any, m: Any, n: Any, sigma: Any) -> Any:
    """log MSE of the normalised bipolar Gaussian hybrid for ``|x| = |y| = r`` (either variant).

    Float64 points where ``sigma r``, ``r theta`` or ``sigma r theta`` is below 1e-70 (where ``rho^2``
    or ``(1 - g)^2`` underflows) are computed in mpmath.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    r : array_like
        The common norm ``r = |x| = |y|`` (also appendix F's radius), ``> 0``.
    theta : array_like
        The angle between ``x`` and ``y``, in ``[0, pi]``.
    m : array_like of int
        Random features of each base estimator, ``>= 1``.
    n : array_like of int
        Random features of the lambda-estimator, ``>= 1``.
    sigma : array_like
        The Gaussian lambda's ``sigma > 0`` (eq 67).

    Returns
    -------
    numpy.ndarray or mpmath.mpf
        The natural logarithm of the MSE (``-inf`` where it is 0): float64 arrays broadcast over the
        arguments, or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``r <= 0`` or ``sigma <= 0``, ``theta`` is outside ``[0, pi]``, or a count is not an
        integer ``>= 1``.

    References
    ----------
    HRF Thm F.2, eq (76)-(80); holds as printed.

    Examples
    --------
    >>> bool(np.isclose(log_mse_gauss_hybrid_same_length(0.5, 1.0, 4, 2, 1.0),
    ...                 log_mse_gauss_hybrid(0.5, 0.5, 1.0, 4, 2, 1.0, 0.5, 0)))
    True
    """
    return log_mse_gauss_hybrid.impl(ctx, r, r, theta, m, n, sigma, r, 0)


# ------------------------------------------------------- complex exponential, eq (14)-(18)


def cexp_log_mse(a: Any, x: Any, y: Any, m: int, *, part: str = "complex", backend: str = "float64",
                 dps: int = 50) -> Any:
    """log MSE of the complex-exponential estimator ``Psi_A(x)^T Psi_{A^-T}(y)`` (eq 16).

    With ``z = A x + A^-T y`` and ``c = exp(-((A x)^2 + (A^-T y)^2)/2)`` (bilinear squares,
    ``z^2 = sum z_i^2``), one feature is ``X = c exp(w . z)``, ``E X = SM(x, y)``
    (eq 14, Lemma 2.4), ``E|X|^2 = |c|^2 exp(2 |Re z|^2)``, ``E X^2 = c^2 exp(2 z^2)``:

    * ``part="complex"``: ``E|X_m - SM|^2 = (|c|^2 e^{2|Re z|^2} - SM^2)/m``;
    * ``part="real"`` (the estimator ``Re X_m``): ``((|c|^2 e^{2|Re z|^2} + Re(c^2 e^{2 z^2}))/2 - SM^2)/m``.

    Both vanish iff ``z = 0`` (eq 17-18).  ``A`` must be invertible (``ValueError``
    otherwise).  They are evaluated without cancellation as ``SM^2 expm1(|z|^2)/m`` and
    ``SM^2 (expm1(|z|^2) + Re expm1(z^2))/(2m)`` (``|c|^2 e^{2|Re z|^2} = SM^2 e^{|z|^2}``,
    ``c^2 e^{2 z^2} = SM^2 e^{z^2}``), with ``z = (A^T)^-1 (A^T A x + y)`` (exactly 0 when
    ``A^T A x = -y``); ``z`` itself cancels, so the working precision is raised until two
    precisions 20 digits apart agree to 17 digits (float64 face) or ``dps`` digits (mpmath face;
    inputs taken as the float values given); ``ValueError`` if that needs over 2000 digits
    (``rfcheck.backends._MAX_DPS``).

    Parameters
    ----------
    a : array_like
        Shape (d, d): the invertible (complex) matrix ``A``.
    x, y : array_like
        Shape (d,): the query and the key.
    m : int
        Random features, ``>= 1``.
    part : {"complex", "real"}, optional
        The MSE of the complex estimate (default) or of its real part.
    backend : {"float64", "mpmath"}, optional
        The face of the result (default float64).
    dps : int, optional
        Digits of the mpmath face (default 50).

    Returns
    -------
    float or mpmath.mpf
        The natural logarithm of the MSE about ``SM(x, y) = exp(x^T y)`` (``-inf`` where ``z = 0``).

    Raises
    ------
    ValueError
        If ``part`` or ``backend`` is unknown, ``A`` is not a finite square matrix or is singular,
        ``x`` and ``y`` do not match ``A``, ``m`` is not an integer ``>= 1``, or no precision up to
        ``rfcheck.backends._MAX_DPS`` digits settles the value.

    References
    ----------
    HRF sec 2.3, Lemma 2.4, eq (13)-(18).

    Examples
    --------
    ``A = I`` and ``y = -x`` make ``z = 0``: every draw gives ``SM(x, y)`` exactly:

    >>> float(cexp_log_mse(np.eye(2), [0.3, -0.2], [-0.3, 0.2], 4))
    -inf
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> bool(np.isclose(cexp_log_mse(np.eye(2), x, y, 4), 2 * (x @ y) + np.log(np.expm1(np.sum((x + y) ** 2)) / 4)))
    True
    """
    if part not in ("complex", "real"):
        raise ValueError(f"part must be 'complex' or 'real'; got {part!r}")
    am = np.asarray(a, dtype=complex)
    if am.ndim != 2 or am.shape[0] != am.shape[1] or not np.all(np.isfinite(am)):
        raise ValueError("A must be a finite square (d, d) matrix")
    xv, yv = _finite("x", x).ravel(), _finite("y", y).ravel()
    if xv.shape != yv.shape or xv.size != am.shape[0]:
        raise ValueError("x, y must be vectors of length d matching A")
    _check_count("m", m)
    get_backend(backend)
    work = dps + 10 if backend == "mpmath" else 30
    digits = dps if backend == "mpmath" else 17
    with mpmath.workdps(work):
        A = mpmath.matrix([[mpmath.mpc(v) for v in row] for row in am])
        if abs(mpmath.det(A)) <= mpmath.mpf(10) ** (-mpmath.mp.dps // 2) * mpmath.mnorm(A, 1) ** am.shape[0]:
            raise ValueError("A must be invertible (eq 14 needs (A^T)^-1)")

    def log_mse(prec: int) -> Any:
        with mpmath.workdps(prec):
            A = mpmath.matrix([[mpmath.mpc(v) for v in row] for row in am])
            X = mpmath.matrix([mpmath.mpf(v) for v in xv])
            Y = mpmath.matrix([mpmath.mpf(v) for v in yv])
            z = mpmath.lu_solve(A.T, A.T * (A * X) + Y)  # = A x + (A^T)^-1 y
            lse = 2 * mpmath.fsum(X[i] * Y[i] for i in range(len(X)))  # log SM^2
            e = mpmath.expm1(mpmath.fsum(abs(z[i]) ** 2 for i in range(len(z))))
            if part == "real":
                e = (e + mpmath.re(mpmath.expm1(mpmath.fsum(z[i] ** 2 for i in range(len(z)))))) / 2
            return lse + mpmath.log(e) - mpmath.log(m) if e > 0 else mpmath.mpf("-inf")

    tol = mpmath.mpf(10) ** -digits
    while True:
        lo, hi = log_mse(work), log_mse(work + 20)
        if lo == hi or (mpmath.isfinite(hi) and abs(hi - lo) <= tol * abs(hi)):
            break
        if work >= _MAX_DPS:
            raise ValueError(f"cexp_log_mse: no value good to {digits} digits at {_MAX_DPS} working digits "
                             "(z = A x + (A^T)^-1 y cancels beyond that)")
        work = min(2 * work, _MAX_DPS)
    if backend == "mpmath":
        with mpmath.workdps(dps):
            return +hi
    return float(hi)

"""Closed forms of Chefs' Random Tables (CRT) -- correct versions, each citing its equation.

Every function is one context-generic definition (``rfcheck.backends.formula``) with a
float64 face (vectorised), an mpmath face (``backend="mpmath", dps=...``) and a sympy
face (``.symbolic(...)``).  Variances are defined in log-space (``log_*``); the
value-space functions exponentiate and refuse to overflow silently.

Pair statistics
---------------
Variances of estimators of the Gaussian kernel ``K(x, y) = exp(-|x - y|^2 / 2)`` depend
on a pair only through ``sq_x = |x|^2``, ``sq_y = |y|^2``, ``sq_sum = |x + y|^2``,
``sq_diff = |x - y|^2`` (and ``d``).  Compute them accurately from vectors with
:func:`pair_stats`; ``sq_sum`` and ``sq_diff`` are kept separate (rather than derived
from ``x . y``) so that neither cancels when ``x`` is close to ``+-y``.

``kernel="softmax"`` gives the variance for ``exp(x . y)``: the features are multiplied
by ``exp(|x|^2/2)``, ``exp(|y|^2/2)`` (CRT sec 2.1), so the variance is multiplied by
``exp(|x|^2 + |y|^2)``.

References
----------
V. Likhosherstov, K. Choromanski, A. Dubey, F. Liu, T. Sarlos, A. Weller,
"Chefs' Random Tables: Non-Trigonometric Random Features", NeurIPS 2022:
sec 2.2, eq (4)-(7), Thm 3.1-3.3, Thm 4.1, appendix 9.2-9.4, 9.7.
"""

from __future__ import annotations

import cmath
import inspect
import math
from fractions import Fraction
from typing import Any

import numpy as np
import scipy.special as sc

from rfcheck import validate
from rfcheck.backends import FP, MP, formula, get_backend

__all__ = [
    "dirf_log_variance",
    "discrete_pair_stats",
    "geometric_log_pk",
    "geometric_log_second_ratio",
    "geometric_log_variance",
    "geometric_p_star",
    "geometric_variance",
    "gerf_coefficients",
    "gerf_iid_error_moments",
    "gerf_log_raw_moment",
    "gerf_log_variance",
    "gerf_optimize",
    "gerf_variance",
    "log_expm1",
    "log_i0",
    "oprf_a_star",
    "oprf_log_variance",
    "oprf_log_variance_ratio",
    "oprf_rho_star",
    "oprf_variance",
    "orf_gerf_log_variance",
    "orf_gerf_variance",
    "orf_log_covariance_factor",
    "pair_stats",
    "poisson_lambda_star",
    "poisson_log_pk",
    "poisson_log_variance",
    "poisson_variance",
    "positive_log_variance",
    "positive_shift",
    "positive_variance",
    "set_stats",
    "trig_log_variance",
    "trig_variance",
]

_KERNELS = ("gaussian", "softmax")
_LOG_FLOAT_MAX = 709.78  # log of the largest float64 (exp overflows above)
_LOG_FLOAT_TINY = math.log(np.finfo(float).tiny)  # -708.396: log of the smallest normal float64
_INEQ_SLACK = 1e-12  # relative rounding slack allowed in the inequalities pair statistics satisfy


# --------------------------------------------------------------------------- helpers


def pair_stats(x: Any, y: Any) -> dict[str, Any]:
    """Pair statistics ``sq_x, sq_y, sq_sum, sq_diff, d`` of vectors (float64, vectorised).

    ``sq_sum`` and ``sq_diff`` are computed from ``x + y`` and ``x - y`` themselves (not from
    ``x . y``), so neither cancels when ``x`` is close to ``+-y``.

    Parameters
    ----------
    x, y : array_like
        Real vectors of the same shape, (d,) for one pair or (P, d) for ``P`` pairs.

    Returns
    -------
    dict
        ``{"sq_x", "sq_y", "sq_sum", "sq_diff"}``: float64 arrays of shape (P,) (``P = 1`` for
        one pair), and ``"d"``: the int dimension; to splat into the variance functions.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in shape, are not 1-D or 2-D, or are not finite real numbers.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: sec 2.2 and Thm 3.2 (the variances depend on a
    pair only through these).

    Examples
    --------
    >>> s = pair_stats([1.0, 2.0], [3.0, -1.0])
    >>> [float(s[k][0]) for k in ("sq_x", "sq_y", "sq_sum", "sq_diff")], s["d"]
    ([5.0, 10.0, 17.0, 13.0], 2)
    >>> bool(s["sq_sum"][0] + s["sq_diff"][0] == 2 * (s["sq_x"][0] + s["sq_y"][0]))
    True
    """
    xa, ya = validate.pairs(x, y)
    return {
        "sq_x": np.sum(xa * xa, axis=1),
        "sq_y": np.sum(ya * ya, axis=1),
        "sq_sum": np.sum((xa + ya) ** 2, axis=1),
        "sq_diff": np.sum((xa - ya) ** 2, axis=1),
        "d": xa.shape[1],
    }


_TWO_PROD_MIN = 2.0**-960  # |a b| above which Dekker's product a b = p + e is exact in float64
_TWO_PROD_MAX = 1e290  # |a|, |b| below which its splitting does not overflow


def _exact_products(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p, e, ok)`` with ``a b = p + e`` exactly where ``ok`` (Dekker's product; not where
    the splitting overflows or the error term ``e`` would underflow)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        p, e = FP.two_prod(a, b)
    ok = ((np.abs(a) < _TWO_PROD_MAX) & (np.abs(b) < _TWO_PROD_MAX) & np.isfinite(e)
          & ((a == 0) | (b == 0) | (np.abs(p) >= _TWO_PROD_MIN)))
    return p, e, ok


def _exact_dot_rows(xa: np.ndarray, ya: np.ndarray) -> np.ndarray:
    """Row-wise ``sum_l x_l y_l`` of (P, d) arrays, correctly rounded: ``math.fsum`` of the exact
    products ``p + e`` (rows where Dekker's product is not exact: exact rational arithmetic), so
    that a dot product that cancels (orthogonal vectors) keeps every digit."""
    p, e, ok = _exact_products(xa, ya)
    out = np.empty(xa.shape[0])
    for i in range(xa.shape[0]):
        if np.all(ok[i]):
            out[i] = math.fsum(np.concatenate([p[i], e[i]]).tolist())
        else:
            out[i] = float(sum((Fraction(u) * Fraction(v) for u, v in zip(xa[i].tolist(), ya[i].tolist(),
                                                                            strict=True)), Fraction(0)))
    return out


def _check_stats(sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any) -> None:
    arrs = {}
    for name, v in (("sq_x", sq_x), ("sq_y", sq_y), ("sq_sum", sq_sum), ("sq_diff", sq_diff)):
        a = validate.real_array(v, name)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite (no NaN or inf)")
        if np.any(a < 0):
            raise ValueError(f"{name} = |.|^2 must be >= 0")
        arrs[name] = a
    validate.positive_int(d, "d")
    lhs = arrs["sq_sum"] + arrs["sq_diff"]
    rhs = 2 * (arrs["sq_x"] + arrs["sq_y"])
    if np.any(np.abs(lhs - rhs) > 1e-9 * np.maximum(1.0, rhs)):
        raise ValueError(
            "pair statistics are inconsistent: need |x+y|^2 + |x-y|^2 = 2(|x|^2 + |y|^2)"
        )


def _kernel_shift(ctx: Any, kernel: str, sq_x: Any, sq_y: Any) -> Any:
    """log of the variance factor from the Gaussian to the requested kernel."""
    return sq_x + sq_y if kernel == "softmax" else 0


def _with_kernel(out: Any, kernel: str, sq_x: Any, sq_y: Any, backend: str, dps: int) -> Any:
    """Add the kernel's log-factor to a Gaussian log-variance ``out``.

    The mpmath face adds it at ``dps`` digits (exact inputs, not a float64 sum), so that a
    result computed at ``dps`` digits is not rounded to the caller's precision here.
    """
    if kernel != "softmax":
        return out
    if backend != "mpmath":
        return out + _kernel_shift(None, kernel, sq_x, sq_y)
    import mpmath

    with mpmath.workdps(dps):
        add = np.frompyfunc(lambda o, a, b: o + mpmath.mpf(a) + mpmath.mpf(b), 3, 1)
        return add(out, np.asarray(sq_x, dtype=object), np.asarray(sq_y, dtype=object))


def _check_kernel(kernel: str) -> None:
    if kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {_KERNELS}; got {kernel!r}")


def _exp_checked(log_value: Any, name: str) -> Any:
    """exp of a float64 log-value that refuses to overflow or underflow silently.

    ``ValueError`` above ``log(max float64)`` and below ``log(smallest normal float64)``
    (where the result would be inf, or 0 or a subnormal short of digits); an exact zero
    (log value ``-inf``) stays 0.
    """
    arr = np.asarray(log_value, dtype=float)
    use = f"use {name.replace('_variance', '_log_variance')} or backend='mpmath'"
    if np.any(arr > _LOG_FLOAT_MAX):
        raise ValueError(f"{name} exceeds the float64 range (log value up to {np.max(arr):.1f}); {use}")
    tiny = (arr < _LOG_FLOAT_TINY) & (arr > -np.inf)
    if np.any(tiny):
        raise ValueError(
            f"{name} is below the float64 normal range (log value down to {np.min(arr[tiny]):.1f}); {use}"
        )
    with np.errstate(under="ignore"):
        out = np.exp(arr)
    return out if out.shape else float(out)


def _check_log_expm1(t: Any) -> None:
    a = validate.real_array(t, "t")
    if np.any(np.isnan(a)) or np.any(a < 0):
        raise ValueError("log_expm1 needs t >= 0 (exp(t) - 1 > 0 has a real log only there; no NaN)")


@formula(check=_check_log_expm1)
def log_expm1(ctx: Any, t: Any) -> Any:
    """``log(exp(t) - 1)`` for ``t >= 0`` without overflow or cancellation.

    Evaluated as ``t + log(-expm1(-t))``: no overflow at large ``t`` and full relative accuracy
    at small ``t`` (where ``log(exp(t) - 1) ~ log t``); ``t = 0`` gives ``-inf``.

    Parameters
    ----------
    t : array_like
        Real numbers ``>= 0`` (no NaN).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        ``log(exp(t) - 1)`` elementwise (float64), or an mpmath number (object array for array
        input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``t < 0`` or NaN (``exp(t) - 1 > 0`` has a real logarithm only for ``t > 0``), or
        ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: the variances ``K^2 expm1(z)`` of Thm 3.2-3.5
    are evaluated in log space with it.

    Examples
    --------
    >>> import math
    >>> abs(float(log_expm1(1.0)) - math.log(math.e - 1)) < 1e-15
    True
    >>> float(log_expm1(1000.0))  # exp(1000) overflows float64; its log does not
    1000.0
    >>> abs(float(log_expm1(1e-20)) - math.log(1e-20)) < 1e-13
    True
    """
    return t + ctx.log(-ctx.expm1(-t))


def _re_expm1(ctx: Any, w: Any) -> Any:
    """``Re(exp(w) - 1)`` for complex ``w`` without cancellation near 0."""
    x, y = ctx.re(w), ctx.im(w)
    return ctx.expm1(x) * ctx.cos(y) - 2 * ctx.sin(y / 2) ** 2


# ------------------------------------------------------------------ TrigRF and PosRF


@formula(check=_check_stats)
def _trig_log_variance(ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any) -> Any:
    return ctx.log(0.5) + 2 * ctx.log(-ctx.expm1(-sq_diff))


@formula(check=_check_stats)
def _positive_log_variance(
    ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any
) -> Any:
    return -sq_diff + log_expm1.impl(ctx, sq_sum)


def trig_log_variance(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, *,
    kernel: str = "gaussian", backend: str = "float64", dps: int = 50,
) -> Any:
    """log Var of one TrigRF sample, ``log((1 - K^2)^2 / 2)``.

    ``K = K(x, y) = exp(-|x - y|^2 / 2)``; evaluated as ``log(1/2) + 2 log(-expm1(-|x - y|^2))``.

    Parameters
    ----------
    sq_x, sq_y : array_like
        ``|x|^2`` and ``|y|^2``: finite, ``>= 0`` (e.g. from :func:`pair_stats` or :func:`set_stats`).
    sq_sum, sq_diff : array_like
        ``|x + y|^2`` and ``|x - y|^2``: finite, ``>= 0``, with ``sq_sum + sq_diff = 2 (sq_x + sq_y)``
        to 1e-9 relative.  The four statistics broadcast together.
    d : int
        The dimension of ``x`` and ``y``, ``>= 1``.
    kernel : {"gaussian", "softmax"}, optional
        The kernel estimated: ``K(x, y) = exp(-|x - y|^2 / 2)`` (default) or ``exp(x . y)``, whose
        features carry the extra factors ``exp(|x|^2/2)``, ``exp(|y|^2/2)`` (the log-variance
        grows by ``sq_x + sq_y``).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The natural logarithm of the variance (``-inf`` where it is 0): float64 values broadcast
        over the statistics, or mpmath numbers (an object array for array input) with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If a statistic is negative, NaN or infinite, the four statistics are inconsistent,
        ``d`` is not an integer ``>= 1``, the arguments do not broadcast, ``kernel`` is unknown,
        or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022, sec 2.2: ``Var Re(f1 f2) = (1/2) (1 - K(x,
    y)^2)^2``; holds as printed.

    Examples
    --------
    >>> import math
    >>> s = pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> k2 = math.exp(-0.5)  # K^2 = exp(-|x - y|^2), |x - y|^2 = 0.5
    >>> abs(float(trig_log_variance(**s)[0]) - math.log((1 - k2) ** 2 / 2)) < 1e-14
    True
    >>> float(trig_log_variance(1.0, 1.0, 4.0, 0.0, 3))  # x = y: the estimate is exact
    -inf
    """
    _check_kernel(kernel)
    out = _trig_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, backend=backend, dps=dps)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


def positive_log_variance(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, *,
    kernel: str = "gaussian", backend: str = "float64", dps: int = 50,
) -> Any:
    """log Var of one PosRF sample, ``log(exp(4 x.y) - K^2) = -|x-y|^2 + log expm1(|x+y|^2)``.

    Parameters
    ----------
    sq_x, sq_y : array_like
        ``|x|^2`` and ``|y|^2``: finite, ``>= 0`` (e.g. from :func:`pair_stats` or :func:`set_stats`).
    sq_sum, sq_diff : array_like
        ``|x + y|^2`` and ``|x - y|^2``: finite, ``>= 0``, with ``sq_sum + sq_diff = 2 (sq_x + sq_y)``
        to 1e-9 relative.  The four statistics broadcast together.
    d : int
        The dimension of ``x`` and ``y``, ``>= 1``.
    kernel : {"gaussian", "softmax"}, optional
        The kernel estimated: ``K(x, y) = exp(-|x - y|^2 / 2)`` (default) or ``exp(x . y)``, whose
        features carry the extra factors ``exp(|x|^2/2)``, ``exp(|y|^2/2)`` (the log-variance
        grows by ``sq_x + sq_y``).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The natural logarithm of the variance (``-inf`` where it is 0): float64 values broadcast
        over the statistics, or mpmath numbers (an object array for array input) with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If a statistic is negative, NaN or infinite, the four statistics are inconsistent,
        ``d`` is not an integer ``>= 1``, the arguments do not broadcast, ``kernel`` is unknown,
        or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022, sec 2.2: ``Var f1 f2 = exp(4 x^T y) - K(x,
    y)^2``; holds as printed.

    Examples
    --------
    >>> import math
    >>> s = pair_stats([0.3, 0.5], [0.4, -0.2])  # x . y = 0.02, |x - y|^2 = 0.5
    >>> abs(float(positive_log_variance(**s)[0]) - math.log(math.exp(0.08) - math.exp(-0.5))) < 1e-14
    True
    >>> v_mp = positive_log_variance(**s, backend="mpmath")[0]
    >>> abs(float(v_mp) - float(positive_log_variance(**s)[0])) < 1e-14
    True
    """
    _check_kernel(kernel)
    out = _positive_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, backend=backend, dps=dps)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


# ------------------------------------------------------------------------------- GERF


def gerf_coefficients(a: complex, s: int, d: int) -> tuple[complex, complex, complex, complex]:
    """The coefficients ``(A, B, C, D)`` of GERF for a given ``A`` and sign ``s``.

    ``B = sqrt(s (1 - 4A))``, ``C = -(s + 1)/2``, ``D = (fourth_root(1 - 4A))^d`` with principal
    roots, so that ``f(w, x) = D exp(A|w|^2 + B w.x + C|x|^2)`` is an unbiased feature of the
    Gaussian kernel.

    Parameters
    ----------
    a : complex
        The GERF parameter ``A``, finite, with ``Re(1 - 4A) > 0``.
    s : int
        The sign ``s = -1`` or ``+1``.
    d : int
        The dimension, ``>= 1``.

    Returns
    -------
    tuple of complex
        ``(A, B, C, D)``.

    Raises
    ------
    ValueError
        If ``Re(1 - 4A) <= 0``, ``A`` is not finite, ``s`` is not ``+-1``, ``d`` is not an integer
        ``>= 1``, or ``|D| = |1 - 4A|^(d/4)`` exceeds the float64 range.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.1, eq (5); proof in appendix 9.2, eq
    (16)-(18).

    Examples
    --------
    >>> gerf_coefficients(0, 1, 3)  # A = 0, s = +1: the positive random features
    (0j, (1+0j), (-1+0j), (1+0j))
    >>> a, b, c, dd = gerf_coefficients(-0.25, -1, 2)
    >>> abs(b * b - (-1) * (1 - 4 * a)) < 1e-15 and abs(dd - 2 ** 0.5) < 1e-15
    True
    """
    a = validate.finite_complex(a, "A")
    validate.sign(s, "s")
    validate.positive_int(d, "d")
    if not (1 - 4 * a).real > 0:
        raise ValueError(f"GERF needs Re(1 - 4A) > 0 (CRT Thm 3.1); got A = {a}")
    one4a = complex(1 - 4 * a)
    too_big = ValueError(f"D = (1 - 4A)^(d/4) exceeds the float64 range (log|D| = d/4 log|1 - 4A| = "
                         f"{d / 4 * math.log(abs(one4a)):.4g} > {_LOG_FLOAT_MAX}); got A = {a}, d = {d}")
    try:
        dd = complex(one4a**0.25) ** d
    except OverflowError:
        raise too_big from None
    if not cmath.isfinite(dd):  # complex ** int can give nan+nanj instead of raising
        raise too_big
    return a, complex(np.sqrt(complex(s) * one4a)), complex(-(s + 1) / 2), dd


def _gerf_z1_parts(ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any, s: Any):
    """The two terms of ``z1 = d/2 log1p(16 A^2/(1 - 8A)) + s v/(1 - 8A)`` (see :func:`_gerf_terms`),
    ``v = |x + s y|^2``; their real parts may cancel."""
    v = (1 + s) / 2 * sq_sum + (1 - s) / 2 * sq_diff
    one8a = 1 - 8 * a
    return d / 2 * ctx.log1p(16 * a**2 / one8a), s / one8a * v  # log1p: small A keeps digits


def _gerf_terms(ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any, s: Any):
    """Exponents ``z1, z2`` with ``Var = (K^2/2) (Re expm1(z1) + expm1(z2))`` (CRT eq 19-21).

    ``z1 = log(E[(f1 f2)^2] / K^2)``, ``z2 = log(E|f1 f2|^2 / K^2)`` written so that
    nothing cancels: with ``v = |x + s y|^2`` the factor ``exp(-(s+1)(|x|^2+|y|^2))/K^2``
    equals ``exp(-s v)``.  The coefficient of ``v`` in ``z2``, ``-s/2 + (s + 2|1 - 4A|)/(2c)``
    with ``c = 1 - 8 Re A > 0``, is summed from non-negative terms, ``(1 - s)/2 + (s + 1)/(2c)
    + 16 (Im A)^2 / (c (|1 - 4A| + 1 - 4 Re A))`` (from ``2(1 - 4 Re A) = 1 + c``): for real ``A``
    and ``s = -1`` it is exactly 1, where the printed form cancels to ``1/2 + 1/2``.
    """
    z1a, z1b = _gerf_z1_parts(ctx, sq_x, sq_y, sq_sum, sq_diff, d, a, s)
    v = (1 + s) / 2 * sq_sum + (1 - s) / 2 * sq_diff
    re_a, im_a = ctx.re(a), ctx.im(a)
    one8re = 1 - 8 * re_a
    one4re = 1 - 4 * re_a
    coef = (1 - s) / _two(ctx) + (s + 1) / (2 * one8re) + 16 * im_a**2 / (
        one8re * (ctx.abs(1 - 4 * a) + one4re))
    z2 = d / 2 * ctx.log1p(16 * ctx.abs(a) ** 2 / one8re) + coef * v
    return z1a + z1b, ctx.re(z2)


def _two(ctx: Any) -> Any:
    """The number 2, exact in the sympy face (``(1 - s)/2`` stays rational)."""
    if ctx.name == "sympy":
        import sympy

        return sympy.Integer(2)
    return 2


def _check_gerf(sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any, s: Any) -> None:
    _check_stats(sq_x, sq_y, sq_sum, sq_diff, d)
    validate.sign(s, "s")
    aa = np.asarray(a, dtype=complex)
    if not np.all(np.isfinite(aa)):
        raise ValueError("A must be finite (no NaN or inf)")
    if not np.all((1 - 8 * aa).real > 0):
        raise ValueError("GERF variance needs Re(1 - 8A) > 0 (CRT Thm 3.2)")


def _gerf_conditioning(ctx: Any, *args: Any) -> Any:
    """Rounding-error amplification of ``Re expm1(z1) + expm1(z2)``: the sum's own
    cancellation, plus the absolute error of ``z1`` where its two terms cancel
    (``|e^{z1}| (|term 1| + |term 2|)`` over the sum: an absolute error of ``z1`` is a
    relative one of ``e^{z1}``); ``z2`` is a sum of non-negative terms."""
    z1, z2 = _gerf_terms(ctx, *args)
    z1a, z1b = _gerf_z1_parts(ctx, *args)
    t1, t2 = _re_expm1(ctx, z1), ctx.expm1(z2)
    spread = ctx.exp(ctx.re(z1)) * (ctx.abs(z1a) + ctx.abs(z1b))
    return (ctx.abs(t1) + ctx.abs(t2) + spread) / ctx.abs(t1 + t2)


@formula(check=_check_gerf, conditioning=_gerf_conditioning)
def _gerf_log_ratio(ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any, s: Any) -> Any:
    """``log(Var / K^2)`` of one GERF sample, ``log((Re expm1(z1) + expm1(z2))/2)``."""
    z1, z2 = _gerf_terms(ctx, sq_x, sq_y, sq_sum, sq_diff, d, a, s)
    m = ctx.where(ctx.re(z1) > z2, ctx.re(z1), z2)
    small = ctx.log((_re_expm1(ctx, z1) + ctx.expm1(z2)) / 2)
    # large exponents: log((Re e^{z1} + e^{z2} - 2)/2) = m + log((Re e^{z1-m} + e^{z2-m} - 2e^{-m})/2)
    big = m + ctx.log(
        (ctx.exp(ctx.re(z1) - m) * ctx.cos(ctx.im(z1)) + ctx.exp(z2 - m) - 2 * ctx.exp(-m)) / 2
    )
    return ctx.where(m > 600, big, small)


@formula(check=_check_gerf, conditioning=_gerf_conditioning)
def _gerf_log_variance(
    ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any, s: Any
) -> Any:
    return -sq_diff + _gerf_log_ratio.impl(ctx, sq_x, sq_y, sq_sum, sq_diff, d, a, s)


def gerf_log_variance(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, a: Any, s: int, *,
    kernel: str = "gaussian", backend: str = "float64", dps: int = 50,
) -> Any:
    """log Var of one GERF(A, s) sample for complex ``A`` with ``Re(1 - 8A) > 0``.

    Equal to eq (6): ``(1/2) e^{-(s+1)(|x|^2+|y|^2)} (Re(a1 e^{a2 v}) + a3 e^{a4 v}) - K^2`` with
    ``v = |x + s y|^2``, evaluated as ``(K^2/2)(Re expm1(z1) + expm1(z2))`` so that small
    variances keep their digits (float64 points whose two terms cancel are recomputed in
    mpmath).  ``A = 0`` gives PosRF (``s = +1``) and TrigRF (``s = -1``).

    Parameters
    ----------
    sq_x, sq_y : array_like
        ``|x|^2`` and ``|y|^2``: finite, ``>= 0`` (e.g. from :func:`pair_stats` or :func:`set_stats`).
    sq_sum, sq_diff : array_like
        ``|x + y|^2`` and ``|x - y|^2``: finite, ``>= 0``, with ``sq_sum + sq_diff = 2 (sq_x + sq_y)``
        to 1e-9 relative.  The four statistics broadcast together.
    d : int
        The dimension of ``x`` and ``y``, ``>= 1``.
    a : complex or array_like
        The GERF parameter ``A`` (complex allowed), with ``Re(1 - 8A) > 0`` (finite variance).
    s : int
        The sign ``-1`` or ``+1``.
    kernel : {"gaussian", "softmax"}, optional
        The kernel estimated: ``K(x, y) = exp(-|x - y|^2 / 2)`` (default) or ``exp(x . y)``, whose
        features carry the extra factors ``exp(|x|^2/2)``, ``exp(|y|^2/2)`` (the log-variance
        grows by ``sq_x + sq_y``).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The natural logarithm of the variance (``-inf`` where it is 0): float64 values broadcast
        over the statistics, or mpmath numbers (an object array for array input) with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`positive_log_variance`, and if ``Re(1 - 8A) <= 0`` or ``s`` is not ``+-1``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.2, eq (6); proof in appendix 9.3, eq
    (19)-(21).  Eq (6) holds as printed;
    the intermediate line of eq (21) writes ``(1-4A)(1-4A)`` where ``|1-4A|^2`` is meant.

    Examples
    --------
    >>> s = pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> bool(abs(gerf_log_variance(**s, a=0, s=1) - positive_log_variance(**s))[0] < 1e-13)
    True
    >>> bool(abs(gerf_log_variance(**s, a=0, s=-1) - trig_log_variance(**s))[0] < 1e-13)
    True
    """
    _check_kernel(kernel)
    out = _gerf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, a, s, backend=backend, dps=dps)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


# ------------------------------------------------------------------------------- OPRF


def _check_u_d(u: Any, d: Any) -> None:
    arr = validate.real_array(u, "|x+y|^2")
    if not np.all(np.isfinite(arr)):
        raise ValueError("|x+y|^2 must be finite (no NaN or inf)")
    if np.any(arr < 0):
        raise ValueError("|x+y|^2 must be >= 0")
    validate.positive_int(d, "d")


def _rho_parts(ctx: Any, u: Any, d: Any) -> tuple[Any, Any]:
    """``rho*`` and ``1 - rho*`` of CRT eq (22) in forms that never cancel.

    ``rho* = 2d / ((2u + d) + S)`` (rationalised eq (22)), ``S = sqrt((2u+d)^2 + 8du)``;
    ``1 - rho* = (2u + 4u(u + 3d)/(S + d)) / (2u + d + S)``.  Both are homogeneous of degree
    0 in ``(u, d)``: the float64 face evaluates them at ``(c u, c d)`` with ``c = 2^-600``
    (exact scaling) where ``2u + d > 1e150``, so that ``(2u + d)^2`` cannot overflow.
    """
    if ctx is FP:
        c = np.where(2 * np.asarray(u, dtype=float) + d < 1e150, 1.0, 2.0**-600)
        u, d = u * c, d * c
    big_s = ctx.sqrt((2 * u + d) ** 2 + 8 * d * u)
    rho = 2 * d / ((2 * u + d) + big_s)
    one_minus = (2 * u + 4 * u * (u + 3 * d) / (big_s + d)) / (2 * u + d + big_s)
    return rho, one_minus


@formula(check=_check_u_d)
def oprf_rho_star(ctx: Any, u: Any, d: Any) -> Any:
    """``rho*`` of OPRF (the optimal real ``A``) as a function of ``u = |x + y|^2`` and ``d``.

    The positive root of ``2u rho^2 + (2u + d) rho - d = 0`` (eq (22)), written as
    ``2d / ((2u + d) + sqrt((2u + d)^2 + 8du))``, which does not cancel for small ``u``;
    ``rho*(0) = 1`` and ``rho* in (0, 1]``.

    Parameters
    ----------
    u : array_like
        ``|x + y|^2``, finite, ``>= 0``.
    d : int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        ``rho*`` (float64, broadcast over ``u``), or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``u`` is negative or not finite, ``d`` is not an integer ``>= 1``, or ``dps < 15``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.3, eq (7), and its proof, eq (22).  Eq
    (22) holds; eq (7) as printed
    places ``- 2|x+y|^2 - d`` inside the square root (claim ``crt.thm3.3``).

    Examples
    --------
    >>> r, u, d = float(oprf_rho_star(2.0, 3)), 2.0, 3
    >>> abs(2 * u * r * r + (2 * u + d) * r - d) < 1e-14
    True
    >>> float(oprf_rho_star(0.0, 5))
    1.0
    """
    return _rho_parts(ctx, u, d)[0]


@formula(check=_check_u_d)
def oprf_a_star(ctx: Any, u: Any, d: Any) -> Any:
    """The optimal real GERF parameter ``A* = (1 - 1/rho*)/8 = -(1 - rho*)/(8 rho*) <= 0``.

    Parameters
    ----------
    u : array_like
        ``|x + y|^2``, finite, ``>= 0``.
    d : int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        ``A*`` (float64, broadcast over ``u``), or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``u`` is negative or not finite, ``d`` is not an integer ``>= 1``, or ``dps < 15``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.3, eq (7) (with ``rho*`` from eq (22)).

    Examples
    --------
    >>> r = float(oprf_rho_star(2.0, 3))
    >>> abs(float(oprf_a_star(2.0, 3)) - (1 - 1 / r) / 8) < 1e-15
    True
    >>> float(oprf_a_star(0.0, 3))  # u = 0: A* = 0 (PosRF is optimal)
    -0.0
    """
    rho, one_minus = _rho_parts(ctx, u, d)
    return -one_minus / (8 * rho)


def _oprf_delta_terms(ctx: Any, u: Any, d: Any) -> tuple[Any, Any, Any]:
    """``(rho u, d log((1 + rho)/(2 sqrt(rho))), (1 - rho) u)`` at ``rho = rho*``: the
    exponent ``delta`` of :func:`_oprf_delta` is the sum of the first two, and
    ``delta - u`` (<= 0) the second minus the third, both without cancellation."""
    rho, one_minus = _rho_parts(ctx, u, d)
    sr = ctx.sqrt(rho)
    gap = one_minus / (1 + sr)  # 1 - sqrt(rho), no cancellation
    return rho * u, d * ctx.log1p(gap**2 / (2 * sr)), one_minus * u


def _oprf_delta(ctx: Any, u: Any, d: Any) -> Any:
    """``log(E[X^2]/K^2)`` at the optimum: ``rho u + d log((1 + rho)/(2 sqrt(rho)))``."""
    t_rho, t_log, _ = _oprf_delta_terms(ctx, u, d)
    return t_rho + t_log


@formula(check=_check_stats)
def _oprf_log_variance(ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any) -> Any:
    return -sq_diff + log_expm1.impl(ctx, _oprf_delta(ctx, sq_sum, d))


@formula(check=_check_stats)
def _oprf_log_variance_softmax(ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any) -> Any:
    """Softmax kernel: ``|x|^2 + |y|^2 - |x - y|^2 + log expm1(delta)`` as one compensated sum
    (the exact inputs may cancel, ``2 x.y ~ -log expm1(delta)``)."""
    return ctx.fsum(sq_x, sq_y, -sq_diff, log_expm1.impl(ctx, _oprf_delta(ctx, sq_sum, d)))


def oprf_log_variance(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, *,
    kernel: str = "gaussian", backend: str = "float64", dps: int = 50,
) -> Any:
    """log of the minimal GERF variance (OPRF: real ``A = A*``, ``s = +1``) of one sample.

    ``Var = K^2 expm1(rho* u + d log((1 + rho*)/(2 sqrt(rho*))))`` with ``u = |x + y|^2``: eq (6)
    at ``A = A*`` (for real ``A`` and ``s = +1``, ``a1 = a3`` and ``a2 = a4 = 1 + rho``).

    Parameters
    ----------
    sq_x, sq_y : array_like
        ``|x|^2`` and ``|y|^2``: finite, ``>= 0`` (e.g. from :func:`pair_stats` or :func:`set_stats`).
    sq_sum, sq_diff : array_like
        ``|x + y|^2`` and ``|x - y|^2``: finite, ``>= 0``, with ``sq_sum + sq_diff = 2 (sq_x + sq_y)``
        to 1e-9 relative.  The four statistics broadcast together.
    d : int
        The dimension of ``x`` and ``y``, ``>= 1``.
    kernel : {"gaussian", "softmax"}, optional
        The kernel estimated: ``K(x, y) = exp(-|x - y|^2 / 2)`` (default) or ``exp(x . y)``, whose
        features carry the extra factors ``exp(|x|^2/2)``, ``exp(|y|^2/2)`` (the log-variance
        grows by ``sq_x + sq_y``).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The natural logarithm of the variance (``-inf`` where it is 0): float64 values broadcast
        over the statistics, or mpmath numbers (an object array for array input) with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If a statistic is negative, NaN or infinite, the four statistics are inconsistent,
        ``d`` is not an integer ``>= 1``, the arguments do not broadcast, ``kernel`` is unknown,
        or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.2-3.3, eq (6), (7), (22).

    Examples
    --------
    >>> s = pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> a = float(oprf_a_star(s["sq_sum"][0], 2))
    >>> bool(abs(oprf_log_variance(**s) - gerf_log_variance(**s, a=a, s=1))[0] < 1e-12)
    True
    >>> bool(oprf_log_variance(**s)[0] < positive_log_variance(**s)[0])
    True
    """
    _check_kernel(kernel)
    if kernel == "softmax" and backend == "float64":  # the kernel's factor in the same compensated sum
        return _oprf_log_variance_softmax(sq_x, sq_y, sq_sum, sq_diff, d)
    out = _oprf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, backend=backend, dps=dps)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


@formula(check=_check_u_d)
def oprf_log_variance_ratio(ctx: Any, u: Any, d: Any) -> Any:
    """``mu = log(Var_OPRF / Var_PosRF)`` as a function of ``u = |x + y|^2`` and ``d``.

    The same for the Gaussian and the softmax kernel (the kernel factor cancels);
    ``mu <= 0`` and ``mu -> 0`` as ``u -> 0``.  Where ``mu > -log 2`` (small ``u``) it is
    evaluated as ``log1p(r)``, ``r = expm1(delta - u) / (1 - e^{-u})``, which keeps the digits
    that the difference of two logarithms cancels; ``mu = -2u/d + (6 - d) u^2/d^2 + O(u^3)``,
    and the float64 face returns ``-2u/d`` for ``u < 1e-20``.

    Parameters
    ----------
    u : array_like
        ``|x + y|^2``, finite, ``>= 0``.
    d : int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        ``mu`` (float64, broadcast over ``u``), or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``u`` is negative or not finite, ``d`` is not an integer ``>= 1``, or ``dps < 15``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Figure 1 (right) and its caption.

    Examples
    --------
    >>> s = pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> diff = oprf_log_variance(**s) - positive_log_variance(**s)
    >>> bool(abs(oprf_log_variance_ratio(s["sq_sum"], 2) - diff)[0] < 1e-13)
    True
    >>> u, d = 1e-8, 4  # mu = -2u/d + (6 - d) u^2/d^2 + O(u^3)
    >>> abs(float(oprf_log_variance_ratio(u, d)) - (-2 * u / d + (6 - d) * u**2 / d**2)) < 1e-23
    True
    """
    t_rho, t_log, t_gap = _oprf_delta_terms(ctx, u, d)
    mu = log_expm1.impl(ctx, t_rho + t_log) - log_expm1.impl(ctx, u)
    if ctx.name == "sympy":  # exact arithmetic: nothing cancels
        return ctx.where(u > 0, mu, 0)
    r = ctx.expm1(t_log - t_gap) / ctx.where(u > 0, -ctx.expm1(-u), 1)  # (no 0/0 at u = 0)
    mu = ctx.where(r > -0.5, ctx.log1p(r), mu)
    if ctx is FP:
        mu = ctx.where(u < 1e-20, -2 * u / d, mu)
    return ctx.where(u > 0, mu, 0)  # the limit u -> 0 (both variances vanish at u = 0)


def _value(log_fn: Any, name: str, doc: str | None = None) -> Any:
    """Value-space twin of a log-space closed form (one definition, two spellings).

    ``doc`` is the twin's docstring (default: the log-space one, prefixed); the twin reports the
    log-space signature (a formula's ``ctx`` replaced by its ``backend=``, ``dps=`` keywords), so
    that ``help`` and the documentation show its real arguments.
    """

    def value(*args: Any, **kwargs: Any) -> Any:
        out = log_fn(*args, **kwargs)
        if kwargs.get("backend", "float64") == "float64":
            return _exp_checked(out, name)
        import mpmath

        with mpmath.workdps(kwargs.get("dps", 50)):  # exp at the requested precision
            if isinstance(out, np.ndarray):
                return np.vectorize(mpmath.exp, otypes=[object])(out)
            return mpmath.exp(out)

    value.__name__ = name
    value.__qualname__ = name
    value.__doc__ = doc if doc is not None else (
        f"Value-space twin of :func:`{getattr(log_fn, '__name__', name)}` (same arguments).  Raises ``ValueError`` "
        "instead of overflowing to inf in float64.\n\n" + (log_fn.__doc__ or "")
    )
    sig = inspect.signature(log_fn)
    params = list(sig.parameters.values())
    if hasattr(log_fn, "impl") and params[:1] and params[0].name == "ctx":  # a formula
        kw = inspect.Parameter.KEYWORD_ONLY
        params = [*params[1:], inspect.Parameter("backend", kw, default="float64", annotation="str"),
                  inspect.Parameter("dps", kw, default=50, annotation="int")]
    value.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return value


trig_variance = _value(
    trig_log_variance, "trig_variance",
    """Var of one TrigRF sample, ``(1 - K^2)^2 / 2``.

    Value-space twin of :func:`trig_log_variance` (``exp`` of it; the same arguments).

    Parameters
    ----------
    sq_x, sq_y, sq_sum, sq_diff, d, kernel, backend, dps
        As for :func:`trig_log_variance`.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The variance: float64 values broadcast over the statistics, or mpmath numbers (an object
        array for array input), exponentiated at ``dps`` digits, with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`trig_log_variance`, and (float64) where the variance exceeds the float64 range or
        falls below its smallest normal number instead of returning inf, 0 or a subnormal
        (use :func:`trig_log_variance` or ``backend="mpmath"`` there).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022, sec 2.2 (holds as printed).

    Examples
    --------
    >>> import math
    >>> v = float(trig_variance(0.34, 0.2, 0.58, 0.5, 2))  # pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> abs(v - (1 - math.exp(-0.5)) ** 2 / 2) < 1e-16
    True
    """,
)
positive_variance = _value(
    positive_log_variance, "positive_variance",
    """Var of one PosRF sample, ``exp(4 x.y) - K^2``.

    Value-space twin of :func:`positive_log_variance` (``exp`` of it; the same arguments).

    Parameters
    ----------
    sq_x, sq_y, sq_sum, sq_diff, d, kernel, backend, dps
        As for :func:`positive_log_variance`.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The variance: float64 values broadcast over the statistics, or mpmath numbers (an object
        array for array input), exponentiated at ``dps`` digits, with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`positive_log_variance`, and (float64) where the variance exceeds the float64 range or
        falls below its smallest normal number instead of returning inf, 0 or a subnormal
        (use :func:`positive_log_variance` or ``backend="mpmath"`` there).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022, sec 2.2 (holds as printed).

    Examples
    --------
    >>> import math
    >>> v = float(positive_variance(0.34, 0.2, 0.58, 0.5, 2))  # x . y = 0.02
    >>> abs(v - (math.exp(0.08) - math.exp(-0.5))) < 1e-15
    True
    >>> try:
    ...     positive_variance(400.0, 400.0, 1600.0, 0.0, 2)  # exp(1600) overflows float64
    ... except ValueError:
    ...     print("refused")
    refused
    """,
)
gerf_variance = _value(
    gerf_log_variance, "gerf_variance",
    """Var of one GERF(A, s) sample (eq (6)), complex ``A`` with ``Re(1 - 8A) > 0``.

    Value-space twin of :func:`gerf_log_variance` (``exp`` of it; the same arguments).

    Parameters
    ----------
    sq_x, sq_y, sq_sum, sq_diff, d, a, s, kernel, backend, dps
        As for :func:`gerf_log_variance`.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The variance: float64 values broadcast over the statistics, or mpmath numbers (an object
        array for array input), exponentiated at ``dps`` digits, with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`gerf_log_variance`, and (float64) where the variance exceeds the float64 range or
        falls below its smallest normal number instead of returning inf, 0 or a subnormal
        (use :func:`gerf_log_variance` or ``backend="mpmath"`` there).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.2, eq (6); appendix 9.3.

    Examples
    --------
    >>> st = (0.34, 0.2, 0.58, 0.5, 2)  # pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> v = float(gerf_variance(*st, 0, 1))
    >>> abs(v / float(positive_variance(*st)) - 1) < 1e-13  # A = 0, s = +1 is PosRF
    True
    """,
)
oprf_variance = _value(
    oprf_log_variance, "oprf_variance",
    """The minimal GERF variance over real ``A`` with ``s = +1`` (OPRF) of one sample.

    Value-space twin of :func:`oprf_log_variance` (``exp`` of it; the same arguments).

    Parameters
    ----------
    sq_x, sq_y, sq_sum, sq_diff, d, kernel, backend, dps
        As for :func:`oprf_log_variance`.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The variance: float64 values broadcast over the statistics, or mpmath numbers (an object
        array for array input), exponentiated at ``dps`` digits, with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`oprf_log_variance`, and (float64) where the variance exceeds the float64 range or
        falls below its smallest normal number instead of returning inf, 0 or a subnormal
        (use :func:`oprf_log_variance` or ``backend="mpmath"`` there).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.2-3.3, eq (6), (7), (22).

    Examples
    --------
    >>> st = (0.34, 0.2, 0.58, 0.5, 2)  # pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> a = float(oprf_a_star(0.58, 2))
    >>> bool(float(oprf_variance(*st)) <= min(float(gerf_variance(*st, b, 1)) for b in (a - 0.01, a + 0.01)))
    True
    """,
)


# ---------------------------------------------------------------- orthogonal ensembles


def _orf_cov_conditioning(ctx: Any, u: Any, d: Any) -> Any:
    lh = ctx.log(ctx.hyp1f1(-d / 2, d / 2, -u / 2))
    # + 1: the log of a rounded 1F1 near 1 has an *absolute* error of ~eps
    return (u / 2 + ctx.abs(lh) + 1) / ctx.abs(lh - u / 2)


@formula(check=_check_u_d, conditioning=_orf_cov_conditioning)
def orf_log_covariance_factor(ctx: Any, u: Any, d: Any) -> Any:
    """``log(1 + G)`` with ``G = Cov(X_1, X_2)/K^2`` for two orthogonal GERF samples.

    For GERF with real ``A`` and ``s = +1`` and two projections from one orthogonal block
    (directions orthonormal, norms independent ``chi_d``), ``E[X_1 X_2] =
    exp(-2(|x|^2 + |y|^2)) 1F1(d; d/2; u/2)`` whatever ``A`` is, so ``1 + G = e^{-u} 1F1(d;
    d/2; u/2) = e^{-u/2} 1F1(-d/2; d/2; -u/2)`` (Kummer) and ``G = -u^2 / (2(d + 2)) + O(u^3)
    <= 0``.  Derivation: expand ``E[cosh(s R t_1) cosh(s R' t_2)]`` in moments of the first
    two coordinates of a uniform point on the sphere and of ``chi_d`` norms; the double series
    collapses by Chu-Vandermonde.

    Parameters
    ----------
    u : array_like
        ``|x + y|^2``, finite, ``>= 0``.
    d : int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        ``log(1 + G) <= 0`` (float64, broadcast over ``u``; points that cancel are recomputed in
        mpmath), or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``u`` is negative or not finite, ``d`` is not an integer ``>= 1``, or ``dps < 15``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 4.1 and appendix 9.7, eq (23)-(33) (where
    the same covariance is bounded);
    Reid et al., Simplex Random Features, ICML 2023, eq (23) is the PosRF special case.

    Examples
    --------
    >>> import mpmath
    >>> ref = -2.0 + mpmath.log(mpmath.hyp1f1(3, 1.5, 1.0))  # e^-u 1F1(d; d/2; u/2), u = 2, d = 3
    >>> abs(float(orf_log_covariance_factor(2.0, 3)) - float(ref)) < 1e-13
    True
    >>> abs(float(orf_log_covariance_factor(1e-4, 3)) + 1e-8 / 10) < 1e-13  # -u^2/(2(d + 2))
    True
    """
    return -u / 2 + ctx.log(ctx.hyp1f1(-d / 2, d / 2, -u / 2))


def _orf_npairs(m: int, d: int) -> int:
    q, r = divmod(m, d)
    return q * d * (d - 1) + r * (r - 1)


def orf_gerf_log_variance(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, a: Any, m: int, *,
    coupling: str = "orf", kernel: str = "gaussian", backend: str = "float64", dps: int = 50,
) -> Any:
    """log Var of the M-sample GERF estimator (real ``A``, ``s = +1``) under iid or orthogonal blocks.

    ``Var = K^2 [expm1(z(A)) / M + (n_pairs / M^2) G]`` where ``z(A)`` is eq (6)'s exponent,
    ``G`` is :func:`orf_log_covariance_factor` and ``n_pairs = sum_k b_k (b_k - 1)`` over blocks
    of sizes ``b_k`` (``d`` each, the last truncated); ``coupling="iid"`` sets ``n_pairs = 0``.
    For ``M <= d`` the ORF variance is ``Var_iid - (1 - 1/M) K^2 |G|``, which proves Thm 4.1.

    Parameters
    ----------
    sq_x, sq_y : array_like
        ``|x|^2`` and ``|y|^2``: finite, ``>= 0`` (e.g. from :func:`pair_stats` or :func:`set_stats`).
    sq_sum, sq_diff : array_like
        ``|x + y|^2`` and ``|x - y|^2``: finite, ``>= 0``, with ``sq_sum + sq_diff = 2 (sq_x + sq_y)``
        to 1e-9 relative.  The four statistics broadcast together.
    d : int
        The dimension of ``x`` and ``y``, ``>= 1``.
    a : float or array_like
        The real GERF parameter ``A`` with ``1 - 8A > 0``.
    m : int
        The number of samples ``M``, ``>= 1``.
    coupling : {"orf", "iid"}, optional
        Orthogonal blocks (default) or independent samples.
    kernel : {"gaussian", "softmax"}, optional
        The kernel estimated: ``K(x, y) = exp(-|x - y|^2 / 2)`` (default) or ``exp(x . y)``, whose
        features carry the extra factors ``exp(|x|^2/2)``, ``exp(|y|^2/2)`` (the log-variance
        grows by ``sq_x + sq_y``).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The natural logarithm of the variance of the mean of ``M`` samples: float64 broadcast
        over the statistics, or an mpmath number with ``backend="mpmath"`` (scalars only).

    Raises
    ------
    ValueError
        If ``coupling`` is not ``"iid"`` or ``"orf"``, ``A`` has a nonzero imaginary part,
        ``M`` is not an integer ``>= 1``, the mpmath face gets arrays, or as for
        :func:`gerf_log_variance`.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.2, eq (6); Thm 4.1, eq (15); appendix 9.1
    (block construction), 9.7.

    Examples
    --------
    >>> import math
    >>> s = pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> iid = orf_gerf_log_variance(**s, a=-0.05, m=2, coupling="iid")[0]
    >>> bool(abs(iid - (gerf_log_variance(**s, a=-0.05, s=1)[0] - math.log(2))) < 1e-13)
    True
    >>> bool(orf_gerf_log_variance(**s, a=-0.05, m=2)[0] < iid)  # Thm 4.1: ORF beats iid
    True
    """
    _check_kernel(kernel)
    validate.positive_int(m, "M")
    if coupling not in ("iid", "orf"):
        raise ValueError(f"coupling must be 'iid' or 'orf'; got {coupling!r}")
    a_arr = np.asarray(a)
    if np.iscomplexobj(a_arr) and np.any(a_arr.imag != 0):
        raise ValueError("orf_gerf_log_variance needs real A (s = +1)")
    a = a_arr.real if a_arr.ndim else float(a_arr.real)
    get_backend(backend)
    npairs = 0 if coupling == "iid" else _orf_npairs(m, d)
    if backend == "mpmath":
        import mpmath

        single = gerf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, a, 1, backend=backend, dps=dps)
        with mpmath.workdps(dps):
            lk2 = -mpmath.mpf(sq_diff) if not isinstance(sq_diff, np.ndarray) else None
            single_m = mpmath.mpf(single) if not isinstance(single, np.ndarray) else None
            if lk2 is None or single_m is None:
                raise ValueError("the mpmath face of orf_gerf_log_variance takes scalars")
            g = mpmath.expm1(orf_log_covariance_factor(sq_sum, d, backend="mpmath", dps=dps))
            inner = mpmath.exp(single_m - lk2) / m + mpmath.mpf(npairs) / m**2 * g
            return _with_kernel(lk2 + mpmath.log(inner), kernel, sq_x, sq_y, backend, dps)
    g = np.expm1(orf_log_covariance_factor(sq_sum, d))
    ratio = _gerf_log_ratio(sq_x, sq_y, sq_sum, sq_diff, d, a, 1)  # log(expm1(z)), without -|x-y|^2
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        l1 = ratio - np.log(m)  # log(expm1(z)/M)
        # g = 0 (u = 0) leaves Var_iid, also where Var_iid = 0 (0 * inf would be NaN)
        corr = np.where(npairs * g == 0, 0.0, npairs / m**2 * g * np.exp(-l1))
        # one compensated sum with the kernel's exact log-factors (they may cancel the rest)
        shift = (sq_x, sq_y) if kernel == "softmax" else ()
        return FP.fsum(*shift, -np.asarray(sq_diff, dtype=float), ratio, -np.log(m), np.log1p(corr))


orf_gerf_variance = _value(
    orf_gerf_log_variance, "orf_gerf_variance",
    """Var of the M-sample GERF estimator (real ``A``, ``s = +1``), iid or orthogonal blocks.

    Value-space twin of :func:`orf_gerf_log_variance` (``exp`` of it; the same arguments).

    Parameters
    ----------
    sq_x, sq_y, sq_sum, sq_diff, d, a, m, coupling, kernel, backend, dps
        As for :func:`orf_gerf_log_variance`.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The variance: float64 values broadcast over the statistics, or mpmath numbers (an object
        array for array input), exponentiated at ``dps`` digits, with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`orf_gerf_log_variance`, and (float64) where the variance exceeds the float64 range or
        falls below its smallest normal number instead of returning inf, 0 or a subnormal
        (use :func:`orf_gerf_log_variance` or ``backend="mpmath"`` there).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.2, eq (6); Thm 4.1, eq (15); appendix 9.7.

    Examples
    --------
    >>> st = (0.34, 0.2, 0.58, 0.5, 2)  # pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> iid = float(orf_gerf_variance(*st, -0.05, 2, coupling="iid"))
    >>> abs(iid - float(gerf_variance(*st, -0.05, 1)) / 2) < 1e-15  # M iid samples: Var / M
    True
    >>> float(orf_gerf_variance(*st, -0.05, 2)) < iid  # Thm 4.1
    True
    """,
)


def _check_raw_moment(k: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any) -> None:
    _check_stats(sq_x, sq_y, sq_sum, sq_diff, d)
    validate.positive_int(k, "k")
    aa = np.asarray(a)
    if np.iscomplexobj(aa) or not np.all(np.isfinite(aa)):
        raise ValueError("A must be real and finite for the raw moments of positive GERF features")
    if not np.all(1 - 4 * k * aa > 0):
        raise ValueError(f"E[X^k] is finite only if 1 - 4kA > 0 (k = {k})")


def _one_minus(ctx: Any, c: Any, a: Any) -> Any:
    """``1 - c a`` for an exact small integer ``c``: ``(1 - p) - e`` with ``c a = p + e`` exactly
    (``1 - p`` is exact where it cancels), so that it keeps its relative accuracy near 0."""
    p, e = ctx.two_prod(c, a)
    return (1 - p) - e


def _raw_moment_terms(ctx: Any, k: Any, sq_x: Any, sq_y: Any, sq_sum: Any, a: Any, d: Any) -> tuple[Any, ...]:
    one4a = _one_minus(ctx, 4, a)
    one4ka = _one_minus(ctx, 4 * k, a)
    return ((k * d / 2) * ctx.log(one4a), -(d / 2) * ctx.log(one4ka), k**2 * one4a * sq_sum / (2 * one4ka),
            -k * (sq_x + sq_y))


def _raw_moment_conditioning(ctx: Any, k: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any,
                             a: Any) -> Any:
    """Rounding error of :func:`gerf_log_raw_moment` (a logarithm: absolute, in units of eps, up to
    ``|value| = 1000`` and relative beyond): ``1 - 4A`` and ``1 - 4kA`` are good to ~2 eps
    relative (:func:`_one_minus`), which their logs pass on absolutely (times ``kd/2``, ``d/2``)
    and the third term relatively; every term adds its own rounding."""
    t1, t2, t3, t4 = _raw_moment_terms(ctx, k, sq_x, sq_y, sq_sum, a, d)
    err = 2 * (k * d / 2 + d / 2) + 6 * ctx.abs(t3) + 2 * (ctx.abs(t1) + ctx.abs(t2) + ctx.abs(t4))
    val = ctx.abs(t1 + t2 + t3 + t4)
    return err / ctx.where(val > 1000, val / 1000, 1)


@formula(check=_check_raw_moment, conditioning=_raw_moment_conditioning)
def gerf_log_raw_moment(ctx: Any, k: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any) -> Any:
    """``log E[X^k]`` of one positive GERF sample (real ``A``, ``s = +1``).

    ``X = D^2 exp(2A|w|^2 + B w.(x+y) - |x|^2 - |y|^2)`` with (5):
    ``E X^k = (1-4A)^{kd/2} (1-4kA)^{-d/2} exp(k^2 (1-4A) u / (2(1-4kA)) - k(|x|^2+|y|^2))``,
    finite iff ``1 - 4kA > 0``.  ``1 - 4kA`` is formed from an error-free product, and float64
    points whose terms cancel are recomputed in mpmath.  Used for exact Monte Carlo standard
    errors (``k <= 4``).

    Parameters
    ----------
    k : int
        The order of the moment, ``>= 1``.
    sq_x, sq_y : array_like
        ``|x|^2`` and ``|y|^2``: finite, ``>= 0`` (e.g. from :func:`pair_stats` or :func:`set_stats`).
    sq_sum, sq_diff : array_like
        ``|x + y|^2`` and ``|x - y|^2``: finite, ``>= 0``, with ``sq_sum + sq_diff = 2 (sq_x + sq_y)``
        to 1e-9 relative.  The four statistics broadcast together.
    d : int
        The dimension of ``x`` and ``y``, ``>= 1``.
    a : float or array_like
        The real GERF parameter ``A`` with ``1 - 4kA > 0``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        ``log E[X^k]`` (float64, broadcast over the arguments), or an mpmath number with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``A`` is complex or not finite, ``1 - 4kA <= 0``, ``k`` is not an integer ``>= 1``,
        or as for :func:`positive_log_variance` (statistics, ``d``, ``dps``).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: eq (4)-(5) and (16)-(17) (the same Gaussian
    integral with parameters scaled by
    ``k``).

    Examples
    --------
    >>> import math
    >>> st = (0.34, 0.2, 0.58, 0.5)  # pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> abs(float(gerf_log_raw_moment(1, *st, 2, -0.1)) + 0.25) < 1e-14  # E X = K (unbiased)
    True
    >>> m2 = math.exp(float(gerf_log_raw_moment(2, *st, 2, -0.1)))
    >>> abs(math.log(m2 - math.exp(-0.5)) - float(gerf_log_variance(*st, 2, -0.1, 1))) < 1e-12
    True
    """
    t1, t2, t3, t4 = _raw_moment_terms(ctx, k, sq_x, sq_y, sq_sum, a, d)
    return t1 + t2 + t3 + t4


def gerf_iid_error_moments(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, a: float, m: int = 1
) -> tuple[float, float] | None:
    """``(E e, E e^2)`` for ``e = (K_hat_M - K)^2``, ``K_hat_M`` the mean of ``M`` iid positive GERF samples.

    From the exact raw moments ``E X^k`` (``k <= 4``, :func:`gerf_log_raw_moment`) in mpmath, at
    40 digits or more (the central moments cancel heavily: :func:`rfcheck.stats.exact_moments_of_mean`
    raises the precision until 20 digits survive).  These give Monte Carlo tests an exact
    standard error instead of a sample one.

    Parameters
    ----------
    sq_x, sq_y, sq_sum, sq_diff : float
        The pair statistics (see :func:`gerf_log_variance`).
    d : int
        The dimension, ``>= 1``.
    a : float
        The real GERF parameter ``A``.
    m : int, optional
        The number of samples averaged (default 1).

    Returns
    -------
    tuple of float or None
        ``(E e, E e^2)``, the mean squared error of ``K_hat_M`` and the second moment of the
        squared error; ``None`` when ``E X^4`` is infinite (``1 - 16A <= 0``) or a result
        leaves the float64 range.

    Raises
    ------
    ValueError
        If the statistics, ``d`` or ``A`` are refused by :func:`gerf_log_raw_moment`.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: eq (4)-(6) (the moments behind the variance of
    Thm 3.2).

    Examples
    --------
    >>> st = (0.34, 0.2, 0.58, 0.5)  # pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> mse, _ = gerf_iid_error_moments(*st, 2, -0.05)
    >>> abs(mse / float(gerf_variance(*st, 2, -0.05, 1)) - 1) < 1e-12  # M = 1: E e = Var
    True
    >>> gerf_iid_error_moments(*st, 2, 0.07) is None  # 1 - 16A < 0: E X^4 is infinite
    True
    """
    import mpmath

    from rfcheck.stats import exact_moments_of_mean

    if not 1 - 16 * a > 0:
        return None

    def raw(dps: int) -> tuple[Any, ...]:
        return tuple(mpmath.exp(gerf_log_raw_moment(k, sq_x, sq_y, sq_sum, sq_diff, d, a, backend="mpmath", dps=dps))
                     for k in (1, 2, 3, 4))

    out = exact_moments_of_mean(raw, m)
    return out if all(np.isfinite(v) for v in out) else None


# ------------------------------------------------------- discretely-induced RFs (sec 3.2)


def discrete_pair_stats(x: Any, y: Any) -> dict[str, Any]:
    """Statistics of pairs that the DIRF variances need (float64, vectorised over pairs).

    ``q = sum_l x_l^2 y_l^2`` (Thm 3.4), ``abs_prod = |x_l y_l|`` (Thm 3.5), ``xy = x . y``
    and ``sq_diff = |x - y|^2`` (so that ``K^2 = e^{-sq_diff}``).  ``xy`` is correctly rounded
    (a compensated sum of exact products): it cancels for near-orthogonal pairs.

    Parameters
    ----------
    x, y : array_like
        Real vectors of the same shape, (d,) for one pair or (P, d) for ``P`` pairs.

    Returns
    -------
    dict
        ``"q"``, ``"xy"``, ``"sq_diff"``: float64 arrays of shape (P,); ``"abs_prod"``: shape
        (P, d); ``"d"``: the int dimension.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in shape, are not 1-D or 2-D, or are not finite real numbers.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.4, eq (11) and Thm 3.5, eq (13).

    Examples
    --------
    >>> s = discrete_pair_stats([1.0, 1e-20], [1e-20, -1.0])  # x . y = 0 exactly
    >>> float(s["xy"][0]), float(s["q"][0]), s["abs_prod"].tolist()
    (0.0, 2e-40, [[1e-20, 1e-20]])
    """
    xa, ya = validate.pairs(x, y)
    prod = xa * ya
    return {
        "q": np.sum(prod * prod, axis=1),
        "abs_prod": np.abs(prod),
        "xy": _exact_dot_rows(xa, ya),
        "sq_diff": np.sum((xa - ya) ** 2, axis=1),
        "d": xa.shape[1],
    }


def _check_pois(q: Any, xy: Any, sq_diff: Any, d: Any, lam: Any) -> None:
    for name, v in (("q", q), ("xy", xy), ("sq_diff", sq_diff), ("lambda", lam)):
        if not np.all(np.isfinite(validate.real_array(v, name))):
            raise ValueError(f"{name} must be finite (no NaN or inf)")
    if np.any(np.asarray(q, dtype=float) < 0):
        raise ValueError("q = sum_l x_l^2 y_l^2 must be >= 0")
    if np.any(np.asarray(sq_diff, dtype=float) < 0):
        raise ValueError("sq_diff = |x - y|^2 must be >= 0")
    if not np.all(np.asarray(lam, dtype=float) > 0):
        raise ValueError("PoisRF needs lambda > 0 (CRT sec 3.2.1)")
    validate.positive_int(d, "d")
    xya, bound = np.asarray(xy, dtype=float), np.sqrt(d * np.asarray(q, dtype=float))
    if np.any(xya - bound > _INEQ_SLACK * np.maximum(np.abs(xya), bound)):
        raise ValueError("inconsistent PoisRF statistics: need x.y <= sqrt(d q), q = sum_l x_l^2 y_l^2 "
                         "(Cauchy-Schwarz: (x.y)^2 <= d sum_l x_l^2 y_l^2)")


def _pois_z(ctx: Any, q: Any, xy: Any, d: Any, lam: Any) -> Any:
    """``log(E[(f f)^2] / K^2) = lambda d + q/lambda - 2 x.y >= 0`` (AM-GM, Cauchy-Schwarz).

    Clipped at 0: a negative value can only come from rounding of the inputs (statistics
    that break Cauchy-Schwarz by more than rounding are refused by ``_check_pois``) or of
    the working precision at the zero-variance point.
    """
    z = lam * d + q / lam - 2 * xy
    return ctx.where(z > 0, z, 0 * z)


def _pois_conditioning(ctx: Any, q: Any, xy: Any, sq_diff: Any, d: Any, lam: Any) -> Any:
    z = _pois_z(ctx, q, xy, d, lam)
    return (lam * d + q / lam + 2 * ctx.abs(xy)) / ctx.abs(z)


@formula(check=_check_pois, conditioning=_pois_conditioning)
def poisson_log_variance(ctx: Any, q: Any, xy: Any, sq_diff: Any, d: Any, lam: Any) -> Any:
    """log Var of one PoisRF sample (Gaussian kernel), ``lambda > 0``.

    ``Var = exp(lambda d + q/lambda - |x|^2 - |y|^2) - K^2 = K^2 expm1(lambda d + q/lambda -
    2 x.y)`` with ``q = sum_l x_l^2 y_l^2``; the exponent is ``>= 0`` and vanishes (zero
    variance) iff all ``x_l y_l`` are equal, positive and ``lambda = lambda*``.  Float64 points
    where the exponent cancels are recomputed in mpmath.

    Parameters
    ----------
    q : array_like
        ``sum_l x_l^2 y_l^2 >= 0`` (from :func:`discrete_pair_stats`).
    xy : array_like
        ``x . y``, with ``(x . y)^2 <= d q`` (Cauchy-Schwarz).
    sq_diff : array_like
        ``|x - y|^2 >= 0``.
    d : int
        The dimension, ``>= 1``.
    lam : array_like
        The Poisson parameter ``lambda > 0``.  All arguments broadcast together.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The natural logarithm of the variance (``-inf`` where it is 0): float64 values broadcast
        over the statistics, or mpmath numbers (an object array for array input) with
        ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If an argument is not finite, ``q`` or ``sq_diff`` is negative, ``lambda <= 0``,
        ``x . y > sqrt(d q)`` beyond rounding, ``d`` is not an integer ``>= 1``, or ``dps < 15``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.4, eq (11); proof in appendix 9.5 (holds
    as printed).

    Examples
    --------
    >>> x, y = [0.3, 0.5], [0.4, -0.2]
    >>> s = discrete_pair_stats(x, y)
    >>> lv = poisson_log_variance(s["q"], s["xy"], s["sq_diff"], 2, 0.7)[0]
    >>> bool(abs(lv - float(dirf_log_variance(x, y, poisson_log_pk(0.7)))) < 1e-13)  # the eq (10) series
    True
    >>> float(poisson_log_variance(0.25, 1.0, 0.0, 4, 0.25))  # x = y = (1/2, ..), lambda*: exact
    -inf
    """
    return -sq_diff + log_expm1.impl(ctx, _pois_z(ctx, q, xy, d, lam))


def _check_q_d(q: Any, d: Any) -> None:
    arr = np.asarray(q, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError("q must be finite (no NaN or inf)")
    if not np.all(arr > 0):
        raise ValueError("lambda* needs q = sum_l x_l^2 y_l^2 > 0 (otherwise the infimum is at lambda -> 0)")
    validate.positive_int(d, "d")


@formula(check=_check_q_d)
def poisson_lambda_star(ctx: Any, q: Any, d: Any) -> Any:
    """``lambda* = d^(-1/2) q^(1/2)``, the minimiser of the PoisRF variance (11) over ``lambda > 0``.

    The exponent ``lambda d + q/lambda`` is strictly convex for ``q > 0`` with derivative
    ``d - q/lambda^2``.  For ``q = 0`` the infimum is approached as ``lambda -> 0`` and no
    ``lambda > 0`` attains it.

    Parameters
    ----------
    q : array_like
        ``sum_l x_l^2 y_l^2 > 0`` (from :func:`discrete_pair_stats` or :func:`set_stats`).
    d : int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        ``lambda*`` (float64, broadcast over ``q``), or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``q <= 0`` or not finite, ``d`` is not an integer ``>= 1``, or ``dps < 15``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: sec 3.2.1, after Thm 3.4 (holds for ``q > 0``).

    Examples
    --------
    >>> float(poisson_lambda_star(0.0244, 2)) == (0.0244 / 2) ** 0.5
    True
    >>> lam = float(poisson_lambda_star(0.0244, 2))
    >>> f = lambda t: float(poisson_log_variance(0.0244, 0.02, 0.5, 2, t))
    >>> f(lam) < min(f(0.99 * lam), f(1.01 * lam))
    True
    """
    return ctx.sqrt(q / d)


def _check_log_i0(t: Any) -> None:
    if not np.all(np.isfinite(validate.real_array(t, "t"))):
        raise ValueError("log_i0 needs a finite real t (no NaN or inf)")


def _i0_minus_1(ctx: Any, t: Any) -> Any:
    """``I_0(t) - 1 = sum_{k>=1} (t^2/4)^k / (k!)^2`` without cancellation, for ``|t| < 1``.

    float64: the series to k = 12 (Horner; the terms fall below 1e-16 of the sum by k = 10);
    mpmath: ``(t^2/4) 1F2(1; 2, 2; t^2/4)``, good to the working precision.
    """
    y = t * t / 4
    if ctx is MP:
        import mpmath

        return y * mpmath.hyp1f2(1, 2, 2, y)
    if ctx is FP and isinstance(y, np.ndarray) and y.dtype == np.float64:
        # the same operations in the same order, in place (no temporaries on large arrays)
        acc = y / (12 * 12) + 1
        for k in range(11, 1, -1):
            acc *= y
            acc /= k * k
            acc += 1
        return y * acc
    acc = 1
    for k in range(12, 1, -1):
        acc = 1 + acc * y / (k * k)
    return y * acc


@formula(check=_check_log_i0)
def log_i0(ctx: Any, t: Any) -> Any:
    """``log I_0(t)`` for finite real ``t`` without overflow and with relative accuracy at small ``t``.

    ``log i0e(|t|) + |t|`` (no overflow at large ``|t|``) and, for ``|t| < 1``,
    ``log1p(I_0(t) - 1)`` with the series of ``I_0 - 1`` (``log I_0(t) ~ t^2/4``).

    Parameters
    ----------
    t : array_like
        Finite real numbers.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        ``log I_0(t)`` elementwise (float64), or an mpmath number with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``t`` is NaN or infinite, or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.5, eq (13) (the product of ``I_0`` of the
    GeomRF variance).

    Examples
    --------
    >>> import mpmath
    >>> abs(float(log_i0(0.5)) - float(mpmath.log(mpmath.besseli(0, 0.5)))) < 1e-16
    True
    >>> abs(float(log_i0(1e-9)) - 0.25e-18) < 1e-33  # ~ t^2/4, kept to relative accuracy
    True
    >>> abs(float(log_i0(1000.0)) - float(mpmath.log(mpmath.besseli(0, 1000)))) < 1e-12
    True
    """
    if ctx.name == "arb":  # log I_0(t) = log 0F1(; 1; t^2/4): Arb's series with a proven remainder
        from rfcheck.closed_forms.simrf import _log_hyp0f1

        return _log_hyp0f1(ctx, 1, t * t / 4)
    big = ctx.log(ctx.i0e(t)) + ctx.abs(t)
    if ctx.name == "sympy":
        return big
    if ctx is MP:  # scalars: evaluate one branch only
        return ctx.log1p(_i0_minus_1(ctx, t)) if ctx.abs(t) < 1 else big
    return ctx.where(ctx.abs(t) < 1, ctx.log1p(_i0_minus_1(ctx, t)), big)


def _log_i0_fp(t: np.ndarray) -> np.ndarray:
    """:func:`log_i0` on a float64 array, each branch evaluated only where it is taken.

    Element for element the same operations as ``log_i0.impl(FP, t)`` (which evaluates both
    branches everywhere and selects with ``where``), hence the same values, at about half
    the cost on the large arrays of :func:`geometric_log_variance`.
    """
    small = np.abs(t) < 1
    out = np.empty(t.shape)
    ts = t[small]
    out[small] = FP.log1p(_i0_minus_1(FP, ts))
    tb = t[~small]
    out[~small] = FP.log(FP.i0e(tb)) + FP.abs(tb)
    return out


def _check_geom(abs_prod: Any, xy: Any, sq_diff: Any, p: Any) -> np.ndarray:
    a = validate.real_array(abs_prod, "abs_prod")
    if a.ndim == 0:
        raise ValueError("abs_prod must have a last axis of length d (one entry per coordinate)")
    for name, v in (("abs_prod", a), ("xy", xy), ("sq_diff", sq_diff), ("p", p)):
        if not np.all(np.isfinite(validate.real_array(v, name))):
            raise ValueError(f"{name} must be finite (no NaN or inf)")
    if np.any(a < 0):
        raise ValueError("abs_prod = |x_l y_l| must be >= 0")
    validate.broadcast_shape({"abs_prod (without its last axis)": a[..., 0], "xy": xy, "sq_diff": sq_diff, "p": p},
                             "GeomRF statistics")
    if np.any(np.asarray(sq_diff, dtype=float) < 0):
        raise ValueError("sq_diff = |x - y|^2 must be >= 0")
    pa = np.asarray(p, dtype=float)
    if not np.all((pa > 0) & (pa < 1)):
        raise ValueError("GeomRF needs 0 < p < 1 (CRT sec 3.2.2)")
    xya, bound = np.asarray(xy, dtype=float), np.sum(a, axis=-1)
    if np.any(xya - bound > _INEQ_SLACK * np.maximum(np.abs(xya), bound)):
        raise ValueError("inconsistent GeomRF statistics: need x.y <= sum_l |x_l y_l| (triangle inequality)")
    return a


def _geom_z_mp(a_row: Any, xy: Any, p: Any, dps: int) -> Any:
    import mpmath

    with mpmath.workdps(dps):
        p = mpmath.mpf(p)
        c = 2 / mpmath.sqrt(1 - p)
        s = mpmath.fsum(log_i0.impl(MP, c * mpmath.mpf(a)) for a in a_row)
        return -len(a_row) * mpmath.log(p) + s - 2 * mpmath.mpf(xy)


def geometric_log_variance(abs_prod: Any, xy: Any, sq_diff: Any, p: Any, *,
                           backend: str = "float64", dps: int = 50) -> Any:
    """log Var of one GeomRF sample (Gaussian kernel), ``0 < p < 1``.

    ``Var = p^{-d} e^{-|x|^2-|y|^2} prod_l I_0(2 (1-p)^{-1/2} |x_l y_l|) - K^2 = K^2 expm1(z)``,
    ``z = -d log p + sum_l log I_0(2|x_l y_l|/sqrt(1-p)) - 2 x.y``, with ``log I_0`` from
    :func:`log_i0` (so that products over ``d`` coordinates never overflow).  Float64 points
    where ``z`` loses more than 3 digits to cancellation are recomputed in mpmath.

    Parameters
    ----------
    abs_prod : array_like
        ``|x_l y_l| >= 0``, shape (..., d) (from :func:`discrete_pair_stats`).
    xy : array_like
        ``x . y``, with ``x . y <= sum_l |x_l y_l|``; broadcasts against (...).
    sq_diff : array_like
        ``|x - y|^2 >= 0``; broadcasts against (...).
    p : array_like
        The geometric parameter, ``0 < p < 1``; broadcasts against (...).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The natural logarithm of the variance, of shape (...) (a float for a scalar result), or
        mpmath numbers (an object array for array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``abs_prod`` is a scalar or negative, an argument is not finite or the shapes do
        not broadcast, ``sq_diff < 0``, ``p`` is outside ``(0, 1)``, ``x . y > sum_l |x_l y_l|``
        beyond rounding, or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.5, eq (13); proof in appendix 9.6 (eq (13)
    holds; the proof's second line
    carries a stray ``- K^2`` inside the product).

    Examples
    --------
    >>> x, y = [0.3, 0.5], [0.4, -0.2]
    >>> s = discrete_pair_stats(x, y)
    >>> lv = geometric_log_variance(s["abs_prod"], s["xy"], s["sq_diff"], 0.6)[0]
    >>> bool(abs(lv - float(dirf_log_variance(x, y, geometric_log_pk(0.6)))) < 1e-13)  # the eq (10) series
    True
    """
    a = _check_geom(abs_prod, xy, sq_diff, p)
    d = a.shape[-1]
    shp = np.broadcast_shapes(a.shape[:-1], np.shape(xy), np.shape(sq_diff), np.shape(p))  # (checked)
    if backend == "mpmath":
        import mpmath

        if dps < 15:
            raise ValueError(f"dps must be >= 15; got {dps}")
        # keep exact mpmath inputs
        flat = np.broadcast_to(np.asarray(abs_prod, dtype=object), (*shp, d)).reshape(-1, d)
        xyb = np.broadcast_to(np.asarray(xy, dtype=object), shp).reshape(-1)
        sdb = np.broadcast_to(np.asarray(sq_diff, dtype=object), shp).reshape(-1)
        pb = np.broadcast_to(np.asarray(p, dtype=object), shp).reshape(-1)
        out = np.empty(flat.shape[0], dtype=object)
        for i in range(flat.shape[0]):
            with mpmath.workdps(dps + 10):
                z = _geom_z_mp(flat[i], xyb[i], pb[i], dps + 10)
                out[i] = -mpmath.mpf(sdb[i]) + log_expm1.impl(MP, z)
        return out.reshape(shp) if shp else out[0]
    get_backend(backend)
    pa = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        t = 2 * a / np.sqrt(1 - pa)[..., None]
        s = np.sum(_log_i0_fp(t), axis=-1)  # relative accuracy also at small t (p* -> 1)
        nlp = -d * np.log(pa)
        z = nlp + s - 2 * np.asarray(xy, dtype=float)
        cond = (nlp + s + 2 * np.abs(xy)) / np.abs(z)
        out = -np.asarray(sq_diff, dtype=float) + log_expm1.impl(FP, z)  # bad z is recomputed below
    out = np.array(out, dtype=float)
    bad = ~(np.asarray(cond) <= 1e3)
    if np.any(bad):
        import mpmath

        shp = np.broadcast_shapes(a.shape[:-1], np.shape(xy), np.shape(sq_diff), np.shape(p))
        out = np.broadcast_to(out, shp).copy()
        ab = np.broadcast_to(a, (*shp, d))
        xyb, sdb, pb = (np.broadcast_to(np.asarray(v, dtype=float), shp) for v in (xy, sq_diff, p))
        badb = np.broadcast_to(bad, shp)
        for idx in np.ndindex(shp):
            if badb[idx]:
                z = _geom_z_mp(ab[idx], xyb[idx], pb[idx], 40)
                with mpmath.workdps(40):
                    out[idx] = float(-mpmath.mpf(sdb[idx]) + log_expm1.impl(MP, z))
    return out if out.shape else float(out)


def geometric_log_second_ratio(abs_prod: Any, xy: Any, p: Any) -> Any:
    """``z(p) = log(E[(f f)^2] / K^2)`` of GeomRF (float64): the objective behind ``p*``.

    ``z = -d log p + sum_l log I_0(2|x_l y_l|/sqrt(1-p)) - 2 x.y``; the variance is
    ``K^2 expm1(z)`` (:func:`geometric_log_variance`).

    Parameters
    ----------
    abs_prod : array_like
        ``|x_l y_l| >= 0``, shape (..., d).
    xy : array_like
        ``x . y`` (``<= sum_l |x_l y_l|``); broadcasts against (...).
    p : array_like
        The geometric parameter, ``0 < p < 1``; broadcasts against (...).

    Returns
    -------
    numpy.ndarray or float
        ``z(p)``, of shape (...).

    Raises
    ------
    ValueError
        As for :func:`geometric_log_variance`.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.5, eq (13), and sec 3.2.2 (``p*``
    minimises it).

    Examples
    --------
    >>> import math
    >>> s = discrete_pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> z = float(geometric_log_second_ratio(s["abs_prod"], s["xy"], 0.6)[0])
    >>> lv = float(geometric_log_variance(s["abs_prod"], s["xy"], s["sq_diff"], 0.6)[0])
    >>> abs(lv - (-0.5 + math.log(math.expm1(z)))) < 1e-13
    True
    """
    a = _check_geom(abs_prod, xy, 0.0, p)
    pa = np.asarray(p, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):  # (log_i0's unused series branch at large t)
        t = 2 * a / np.sqrt(1 - pa)[..., None]
        li = log_i0.impl(FP, t)
    return -a.shape[-1] * np.log(pa) + np.sum(li, axis=-1) - 2 * np.asarray(xy, dtype=float)


def geometric_p_star(abs_prod: Any, xy: float = 0.0, *, maxiter: int = 100) -> tuple[float, float]:
    """``(p*, z(p*))``: the GeomRF parameter minimising eq (13), by Brent's method.

    Brent's bounded method on ``t = logit(p)`` in [-40, 40] (``p`` from 4e-18 to 1 - 4e-18),
    at most ``maxiter`` iterations (the paper uses 100); the objective is
    :func:`geometric_log_second_ratio`.

    Parameters
    ----------
    abs_prod : array_like
        One pair's ``|x_l y_l|`` (shape (d,)) or the set averages of eq (14) (:func:`set_stats`).
    xy : float, optional
        ``x . y`` (or its set average), default 0.
    maxiter : int, optional
        Iterations of the bounded scalar minimiser (default 100).

    Returns
    -------
    tuple of float
        ``(p*, z(p*))``.

    Raises
    ------
    ValueError
        If ``abs_prod`` is not of shape (d,), or as for :func:`geometric_log_variance`.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: sec 3.2.2 (after eq (14)), appendix 9.10.1.

    Examples
    --------
    >>> p, z = geometric_p_star([0.12, 0.1], 0.02)
    >>> f = lambda q: float(geometric_log_second_ratio([0.12, 0.1], 0.02, q))
    >>> z <= min(f(p - 0.01), f(p + 0.01)) and abs(z - f(p)) < 1e-15
    True
    """
    from scipy.optimize import minimize_scalar

    a = np.asarray(abs_prod, dtype=float)
    if a.ndim != 1:
        raise ValueError("geometric_p_star takes one pair: abs_prod of shape (d,)")
    _check_geom(a, xy, 0.0, 0.5)

    def obj(t: float) -> float:
        p = float(sc.expit(t))
        if not 0 < p < 1:
            return np.inf
        return float(geometric_log_second_ratio(a, xy, p))

    r = minimize_scalar(obj, bounds=(-40.0, 40.0), method="bounded",
                        options={"maxiter": maxiter, "xatol": 1e-10})
    p = float(sc.expit(r.x))
    return p, float(obj(r.x))


def dirf_log_variance(x: Any, y: Any, log_pk: Any, *, dps: int = 30, kmax: int = 100_000) -> Any:
    """log Var of one DIRF sample for a general discrete ``p_k`` (mpmath, one pair).

    ``f_DI(w, x) = e^{-|x|^2/2} prod_l x_l^{w_l} (w_l!)^{-1/2} p_{w_l}^{-1/2}`` (eq (10)), so
    ``E[(f f)^2] = e^{-|x|^2-|y|^2} prod_l sum_k (x_l y_l)^{2k} / (p_k (k!)^2)``; each series is
    summed in mpmath until a term falls below ``10^-(dps+5)`` of the sum and the terms are
    decreasing.  An independent check of :func:`poisson_log_variance` and
    :func:`geometric_log_variance`.

    Parameters
    ----------
    x, y : array_like
        One pair of real vectors, shape (d,) (or (1, d)).
    log_pk : callable
        ``k -> log p_k`` in mpmath (e.g. :func:`poisson_log_pk`, :func:`geometric_log_pk`);
        every ``p_k`` must be ``> 0``.
    dps : int, optional
        mpmath digits (default 30; the sums run at ``dps + 10``).
    kmax : int, optional
        The most terms of each series (default 100000).

    Returns
    -------
    mpmath.mpf
        The natural logarithm of the variance.

    Raises
    ------
    ValueError
        If more than one pair is given, or ``x`` and ``y`` differ in shape or are not finite.
    ArithmeticError
        If a series does not converge in ``kmax`` terms (the variance is infinite when
        ``(x_l y_l)^{2k}/(p_k k!^2)`` does not decay).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: sec 3.2, eq (9)-(10); Thm 3.4-3.5 are the
    Poisson and geometric cases.

    Examples
    --------
    >>> import mpmath  # d = 1, geometric p_k: E[(f f)^2] = e^(-|x|^2-|y|^2) I_0(2|x y|/sqrt(1-p)) / p
    >>> with mpmath.workdps(40):  # x = 0.5, y = 0.75, p = 0.25 (exact binary numbers)
    ...     ref = mpmath.log(mpmath.exp(-0.25 - 0.5625) / 0.25 * mpmath.besseli(0, 0.75 / mpmath.sqrt(0.75))
    ...                      - mpmath.exp(-0.0625))
    >>> abs(dirf_log_variance([0.5], [0.75], geometric_log_pk(0.25)) - ref) < 1e-25
    True
    """
    import mpmath

    xa, ya = validate.pairs(x, y)
    if xa.shape[0] != 1:
        raise ValueError("dirf_log_variance takes one pair")
    with mpmath.workdps(dps + 10):
        tot = mpmath.mpf(0)
        for xl, yl in zip(xa[0], ya[0], strict=True):
            a2 = (mpmath.mpf(xl) * mpmath.mpf(yl)) ** 2
            if a2 == 0:
                tot += -log_pk(0)
                continue
            la2 = mpmath.log(a2)
            terms = []
            prev = None
            for k in range(kmax):
                lt = k * la2 - log_pk(k) - 2 * mpmath.loggamma(k + 1)
                terms.append(lt)
                big = max(terms)
                if prev is not None and lt < prev and lt < big - (dps + 5) * mpmath.log(10):
                    break
                prev = lt
            else:
                raise ArithmeticError("DIRF second-moment series did not converge")
            big = max(terms)
            tot += big + mpmath.log(mpmath.fsum(mpmath.exp(t - big) for t in terms))
        sx = sum(mpmath.mpf(v) ** 2 for v in xa[0])
        sy = sum(mpmath.mpf(v) ** 2 for v in ya[0])
        sd = sum((mpmath.mpf(u) - mpmath.mpf(v)) ** 2 for u, v in zip(xa[0], ya[0], strict=True))
        log_m2 = tot - sx - sy
        return -sd + log_expm1.impl(MP, log_m2 + sd)


def poisson_log_pk(lam: float) -> Any:
    """``k -> log p_k`` of Poisson(``lambda``) in mpmath (for :func:`dirf_log_variance`).

    Parameters
    ----------
    lam : float
        The Poisson parameter ``lambda > 0``.

    Returns
    -------
    callable
        ``k -> -lambda + k log(lambda) - log(k!)`` as an mpmath number.

    Raises
    ------
    ValueError
        If ``lambda`` is not a finite number ``> 0``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: sec 3.2.1 (PoisRF).

    Examples
    --------
    >>> import mpmath
    >>> lp = poisson_log_pk(0.7)
    >>> abs(float(mpmath.exp(lp(3))) - mpmath.exp(-0.7) * 0.7**3 / 6) < 1e-16
    True
    >>> abs(float(mpmath.fsum(mpmath.exp(lp(k)) for k in range(40))) - 1) < 1e-15
    True
    """
    import mpmath

    lam = validate.finite_real(lam, "lambda")
    if not lam > 0:
        raise ValueError("PoisRF needs lambda > 0")
    return lambda k: -mpmath.mpf(lam) + k * mpmath.log(lam) - mpmath.loggamma(k + 1)


def geometric_log_pk(p: float) -> Any:
    """``k -> log p_k`` of the geometric distribution ``p_k = p (1-p)^k`` on {0, 1, ...} (mpmath).

    Parameters
    ----------
    p : float
        The success probability, ``0 < p < 1``.

    Returns
    -------
    callable
        ``k -> log(p) + k log(1 - p)`` as an mpmath number (for :func:`dirf_log_variance`).

    Raises
    ------
    ValueError
        If ``p`` is not a finite number in ``(0, 1)``.

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: sec 3.2.2 (GeomRF).

    Examples
    --------
    >>> import mpmath
    >>> lp = geometric_log_pk(0.6)
    >>> abs(float(mpmath.exp(lp(2))) - 0.6 * 0.4**2) < 1e-16
    True
    >>> abs(float(mpmath.fsum(mpmath.exp(lp(k)) for k in range(100))) - 1) < 1e-15
    True
    """
    import mpmath

    p = validate.finite_real(p, "p")
    if not 0 < p < 1:
        raise ValueError("GeomRF needs 0 < p < 1")
    return lambda k: mpmath.log(p) + k * mpmath.log1p(-mpmath.mpf(p))


def positive_shift(x: Any, y: Any, eps: float = 1e-8) -> np.ndarray:
    """The shift ``c_l = min_i min(x_l^(i), y_l^(i)) - eps`` of PoisRF+ / GeomRF+.

    ``x - c`` and ``y - c`` have entries ``>= eps > 0`` and ``K(x - c, y - c) = K(x, y)`` (the
    Gaussian kernel depends on ``x - y`` only).

    Parameters
    ----------
    x, y : array_like
        Points of shape (d,) or (L, d), (L', d).
    eps : float, optional
        The positivity margin, ``> 0`` (default ``1e-8``, as in appendix 9.10.2).

    Returns
    -------
    numpy.ndarray
        ``c``, shape (d,).

    Raises
    ------
    ValueError
        If ``eps <= 0`` or not finite, or ``x``, ``y`` are not finite arrays of shape (d,) or (L, d).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: sec 3.2.3, appendix 9.10.2.

    Examples
    --------
    >>> import numpy as np
    >>> x, y = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([[-1.0, 4.0]])
    >>> c = positive_shift(x, y)
    >>> c.tolist() == [-1.0 - 1e-8, -2.0 - 1e-8] and bool(np.all(x - c >= 1e-8 * 0.99))
    True
    """
    xa, ya = validate.points(x, "x"), validate.points(y, "y")
    eps = validate.finite_real(eps, "eps")
    if not eps > 0:
        raise ValueError("the positivity margin eps must be > 0")
    return np.minimum(xa.min(axis=0), ya.min(axis=0)) - eps


# ------------------------------------------------------- set-level statistics (eq 8, 12, 14)


def _column_sums_dd(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column sums of ``a`` as ``hi + lo``: ``hi`` correctly rounded, ``lo`` the correctly
    rounded remainder (so ``hi + lo`` is the exact sum to ``~eps^2``)."""
    hi = np.array([math.fsum(c) for c in a.T.tolist()])
    lo = np.array([math.fsum([*c, -h]) for c, h in zip(a.T.tolist(), hi.tolist(), strict=True)])
    return hi, lo


def _mean_dot(xa: np.ndarray, ya: np.ndarray) -> float:
    """``mean_{i,j} x_i . y_j = (sum_i x_i) . (sum_j y_j) / (L L')`` to ``~eps^2`` of
    ``sum_l |sum_i x_il| |sum_j y_jl|`` (then one rounding)."""
    hx, lx = _column_sums_dd(xa)
    hy, ly = _column_sums_dd(ya)
    p, e, ok = _exact_products(hx, hy)
    if np.all(ok):
        terms = [p, e, hx * ly, lx * hy, lx * ly]
        return math.fsum(np.concatenate(terms).tolist()) / (xa.shape[0] * ya.shape[0])
    fx = [Fraction(h) + Fraction(v) for h, v in zip(hx.tolist(), lx.tolist(), strict=True)]
    fy = [Fraction(h) + Fraction(v) for h, v in zip(hy.tolist(), ly.tolist(), strict=True)]
    return float(sum((u * v for u, v in zip(fx, fy, strict=True)), Fraction(0)) / (xa.shape[0] * ya.shape[0]))


def set_stats(x: Any, y: Any) -> dict[str, Any]:
    """Averages over all ``L L'`` pairs ``(x_i, y_j)`` in ``O((L + L') d)``.

    ``sq_sum`` and ``sq_diff`` are computed from centred data (``mean|x_i - mx|^2 + mean|y_j -
    my|^2 + |mx +- my|^2``) after a shift that leaves ``x_i +- y_j`` unchanged, so that neither
    cancels when the sets are close to ``+-`` each other; ``xy = (sum_i x_i) . (sum_j y_j) /
    (L L')`` is taken from double-double column sums and exact products, so that it keeps its
    digits when the set means are near-orthogonal.

    Parameters
    ----------
    x : array_like
        The points ``x_i``, shape (L, d) (or (d,)).
    y : array_like
        The points ``y_j``, shape (L', d) (or (d,)).

    Returns
    -------
    dict
        ``sq_x, sq_y`` (means of ``|x_i|^2``, ``|y_j|^2``), ``sq_sum`` and ``sq_diff`` (means of
        ``|x_i + y_j|^2``, ``|x_i - y_j|^2``, eq (8) with ``s = +1, -1``), ``xy`` (mean
        ``x_i . y_j``), ``q`` (mean of ``sum_l x_il^2 y_jl^2``, eq (12)): floats; ``abs_prod``
        (per-coordinate means of ``|x_il y_jl|``, eq (14)): array of shape (d,); ``d``: int.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` have different dimensions or are not finite arrays of shape (d,) or (L, d).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: eq (8), (12), (14) (the set-level parameter
    choices of sec 3.1-3.2).

    Examples
    --------
    >>> import numpy as np
    >>> x, y = np.array([[0.3, 0.5], [1.0, -1.0]]), np.array([[0.4, -0.2], [0.0, 2.0], [1.5, 0.5]])
    >>> s = set_stats(x, y)
    >>> pairs = [(a, b) for a in x for b in y]
    >>> bool(np.isclose(s["sq_sum"], np.mean([np.sum((a + b) ** 2) for a, b in pairs]), rtol=1e-14))
    True
    >>> bool(np.isclose(s["xy"], np.mean([a @ b for a, b in pairs]), rtol=1e-14))
    True
    """
    xa, ya = validate.points(x, "x"), validate.points(y, "y")
    if xa.shape[1] != ya.shape[1]:
        raise ValueError("x and y must have the same dimension d")
    lx, ly = xa.shape[0], ya.shape[0]
    sx, sy = np.sum(xa * xa) / lx, np.sum(ya * ya) / ly
    xy = _mean_dot(xa, ya)

    def centred(v: np.ndarray) -> tuple[np.ndarray, float]:  # (mean, mean squared distance to it)
        m = v.sum(axis=0) / len(v)
        return m, np.sum((v - m) ** 2) / len(v)

    (ma, va), (mb, vb), (mc, vc) = centred(xa - xa[0]), centred(ya - xa[0]), centred(ya + xa[0])
    return {
        "sq_x": float(sx), "sq_y": float(sy),
        "sq_sum": float(va + vc + np.sum((ma + mc) ** 2)), "sq_diff": float(va + vb + np.sum((ma - mb) ** 2)),
        "xy": xy,
        "q": float(np.sum((xa * xa).sum(axis=0) * (ya * ya).sum(axis=0)) / (lx * ly)),
        "abs_prod": np.abs(xa).sum(axis=0) * np.abs(ya).sum(axis=0) / (lx * ly),
        "d": xa.shape[1],
    }


# ------------------------------------------------------- GERF optimised over complex A (9.10.1)


def gerf_optimize(sq_x: float, sq_y: float, sq_sum: float, sq_diff: float, d: int, *,
                  maxiter: int = 50, real: bool = False, signs: tuple[int, ...] = (-1, 1)) -> dict[str, Any]:
    """Minimise the GERF variance (6) over ``A`` (complex unless ``real``) for each ``s``.

    One L-BFGS-B routine of ``maxiter`` iterations per ``s`` in ``signs`` (appendix 9.10.1: two
    routines of 50 iterations), over ``(Re A, Im A)`` with ``Re A <= 1/8 - 1e-6`` (``Re(1 - 8A)
    > 0``), started at ``A = 0`` (PosRF / TrigRF), never returning a worse point than the start.
    The objective is :func:`gerf_log_variance` (log space, so variances of ``e^-700`` are
    optimised as well).

    Parameters
    ----------
    sq_x, sq_y, sq_sum, sq_diff : float
        The pair (or set-averaged, :func:`set_stats`) statistics.
    d : int
        The dimension, ``>= 1``.
    maxiter : int, optional
        L-BFGS-B iterations per sign (default 50).
    real : bool, optional
        Restrict ``A`` to real values (default False).
    signs : tuple of int, optional
        The signs ``s`` tried (default ``(-1, 1)``).

    Returns
    -------
    dict
        ``{"a": complex, "s": int, "log_var": float, "per_s": {s: (a, log_var)}}`` with the best
        ``s`` at the top level.

    Raises
    ------
    ValueError
        If a sign is not ``+-1``, or the final evaluation refuses the statistics (as
        :func:`gerf_log_variance`).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: sec 3.1 (after eq (8)), Thm 3.2, appendix
    9.10.1.

    Examples
    --------
    >>> st = (0.34, 0.2, 0.58, 0.5)  # pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> r = gerf_optimize(*st, 2)
    >>> r["log_var"] <= min(float(positive_log_variance(*st, 2)), float(trig_log_variance(*st, 2)))
    True
    >>> abs(gerf_optimize(*st, 2, real=True, signs=(1,))["log_var"] - float(oprf_log_variance(*st, 2))) < 1e-6
    True
    """
    from scipy.optimize import minimize

    per_s: dict[int, tuple[complex, float]] = {}
    for s in signs:
        validate.sign(s)

        def obj(v: np.ndarray, s: int = s) -> float:
            a = complex(v[0], 0.0 if real else v[1])
            try:
                lv = float(gerf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, a, s))
            except ValueError:
                return 1e300
            return lv if np.isfinite(lv) else (-1e300 if lv < 0 else 1e300)

        x0 = np.zeros(1 if real else 2)
        bounds = [(None, 0.125 - 1e-6)] + ([] if real else [(None, None)])
        r = minimize(obj, x0, method="L-BFGS-B", bounds=bounds, options={"maxiter": maxiter})
        best = r.x if r.fun <= obj(x0) else x0
        a = complex(best[0], 0.0 if real else best[1])
        per_s[s] = (a, float(gerf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, a, s)))
    s_best = min(per_s, key=lambda k: per_s[k][1])
    return {"a": per_s[s_best][0], "s": s_best, "log_var": per_s[s_best][1], "per_s": per_s}


poisson_variance = _value(
    poisson_log_variance, "poisson_variance",
    """Var of one PoisRF sample (Gaussian kernel), ``K^2 expm1(lambda d + q/lambda - 2 x.y)``.

    Value-space twin of :func:`poisson_log_variance` (``exp`` of it; the same arguments).

    Parameters
    ----------
    q, xy, sq_diff, d, lam, backend, dps
        As for :func:`poisson_log_variance`.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The variance: float64 values broadcast over the statistics, or mpmath numbers (an object
        array for array input), exponentiated at ``dps`` digits, with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`poisson_log_variance`, and (float64) where the variance exceeds the float64 range or
        falls below its smallest normal number instead of returning inf, 0 or a subnormal
        (use :func:`poisson_log_variance` or ``backend="mpmath"`` there).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.4, eq (11); appendix 9.5.

    Examples
    --------
    >>> import math
    >>> v = float(poisson_variance(0.0244, 0.02, 0.5, 2, 0.7))  # discrete_pair_stats([0.3, 0.5], [0.4, -0.2])
    >>> abs(v - (math.exp(0.7 * 2 + 0.0244 / 0.7 - 0.34 - 0.2) - math.exp(-0.5))) < 1e-15
    True
    """,
)
geometric_variance = _value(
    geometric_log_variance, "geometric_variance",
    """Var of one GeomRF sample (Gaussian kernel), ``0 < p < 1``.

    Value-space twin of :func:`geometric_log_variance` (``exp`` of it; the same arguments).

    Parameters
    ----------
    abs_prod, xy, sq_diff, p, backend, dps
        As for :func:`geometric_log_variance`.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The variance: float64 values broadcast over the statistics, or mpmath numbers (an object
        array for array input), exponentiated at ``dps`` digits, with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`geometric_log_variance`, and (float64) where the variance exceeds the float64 range or
        falls below its smallest normal number instead of returning inf, 0 or a subnormal
        (use :func:`geometric_log_variance` or ``backend="mpmath"`` there).

    References
    ----------
    Likhosherstov et al., Chefs' Random Tables (CRT), NeurIPS 2022: Thm 3.5, eq (13); appendix 9.6.

    Examples
    --------
    >>> import mpmath  # d = 1: p^-1 e^(-|x|^2-|y|^2) I_0(2|x y|/sqrt(1-p)) - K^2
    >>> ref = mpmath.exp(-0.25 - 0.64) / 0.3 * mpmath.besseli(0, 0.8 / mpmath.sqrt(0.7)) - mpmath.exp(-0.09)
    >>> abs(float(geometric_variance([0.4], 0.4, 0.09, 0.3)) - float(ref)) < 1e-15
    True
    """,
)

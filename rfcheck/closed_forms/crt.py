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

    ``x, y`` of shape (d,) or (P, d); returns a dict to splat into the variance functions.
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
    """``log(exp(t) - 1)`` for ``t >= 0`` without overflow or cancellation (``ValueError``
    for ``t < 0`` or NaN; ``t = 0`` gives ``-inf``)."""
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
    """log Var of one TrigRF sample, ``log((1 - K^2)^2 / 2)`` (CRT sec 2.2).

    References
    ----------
    CRT sec 2.2: ``Var Re(f1 f2) = (1/2) (1 - K(x, y)^2)^2``; holds as printed.
    """
    _check_kernel(kernel)
    out = _trig_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, backend=backend, dps=dps)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


def positive_log_variance(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, *,
    kernel: str = "gaussian", backend: str = "float64", dps: int = 50,
) -> Any:
    """log Var of one PosRF sample, ``log(exp(4 x.y) - K^2) = -|x-y|^2 + log expm1(|x+y|^2)``.

    References
    ----------
    CRT sec 2.2: ``Var f1 f2 = exp(4 x^T y) - K(x, y)^2``; holds as printed.
    """
    _check_kernel(kernel)
    out = _positive_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, backend=backend, dps=dps)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


# ------------------------------------------------------------------------------- GERF


def gerf_coefficients(a: complex, s: int, d: int) -> tuple[complex, complex, complex, complex]:
    """(A, B, C, D) of CRT Thm 3.1, eq (5): ``B = sqrt(s(1-4A))``, ``C = -(s+1)/2``,
    ``D = (fourth_root(1-4A))^d``, principal roots; needs ``Re(1 - 4A) > 0``
    (``ValueError`` also where ``|D|`` exceeds the float64 range).

    References
    ----------
    CRT Thm 3.1, eq (5); proof appendix 9.2, eq (16)-(18).
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

    Equal to CRT Thm 3.2, eq (6): ``(1/2) e^{-(s+1)(|x|^2+|y|^2)} (Re(a1 e^{a2 v}) +
    a3 e^{a4 v}) - K^2`` with ``v = |x + s y|^2``, evaluated as
    ``(K^2/2)(Re expm1(z1) + expm1(z2))`` so that small variances keep their digits
    (float64 points whose two terms cancel are recomputed in mpmath).

    References
    ----------
    CRT Thm 3.2, eq (6); proof appendix 9.3, eq (19)-(21).  Eq (6) holds as printed; the
    intermediate line of eq (21) writes ``(1-4A)(1-4A)`` where ``|1-4A|^2`` is meant.
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
    """``rho*`` of CRT Thm 3.3 as a function of ``u = |x + y|^2`` and ``d``.

    The positive root of ``2u rho^2 + (2u + d) rho - d = 0`` (CRT eq (22)), written as
    ``2d / ((2u + d) + sqrt((2u + d)^2 + 8du))`` which does not cancel for small ``u``;
    ``rho*(0) = 1``, ``rho* in (0, 1]``.

    References
    ----------
    CRT Thm 3.3, eq (7) and its proof, eq (22).  Eq (22) holds; eq (7) as printed places
    ``- 2|x+y|^2 - d`` inside the square root (see claim ``crt.thm3.3``).
    """
    return _rho_parts(ctx, u, d)[0]


@formula(check=_check_u_d)
def oprf_a_star(ctx: Any, u: Any, d: Any) -> Any:
    """Optimal real ``A* = (1 - 1/rho*)/8 = -(1 - rho*)/(8 rho*) <= 0`` (CRT Thm 3.3)."""
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
    """log of the minimal GERF variance (OPRF, real A, s = +1) of one sample.

    ``Var = K^2 expm1(rho* u + d log((1 + rho*)/(2 sqrt(rho*))))``, ``u = |x + y|^2``:
    eq (6) at ``A = A*`` (for real A, s = +1, ``a1 = a3``, ``a2 = a4 = 1 + rho``).

    References
    ----------
    CRT Thm 3.2-3.3, eq (6), (7), (22).
    """
    _check_kernel(kernel)
    if kernel == "softmax" and backend == "float64":  # the kernel's factor in the same compensated sum
        return _oprf_log_variance_softmax(sq_x, sq_y, sq_sum, sq_diff, d)
    out = _oprf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, backend=backend, dps=dps)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


@formula(check=_check_u_d)
def oprf_log_variance_ratio(ctx: Any, u: Any, d: Any) -> Any:
    """``mu = log(Var_OPRF / Var_PosRF)`` as a function of ``u = |x + y|^2`` and ``d``.

    The same for the Gaussian and the softmax kernel (the kernel factor cancels).
    ``mu -> 0`` as ``u -> 0``; ``mu <= 0``.

    Where ``mu > -log 2`` (small ``u``) it is evaluated as ``log1p(r)``,
    ``r = expm1(delta - u) / (1 - e^{-u})`` (from ``expm1(delta) - expm1(u) = e^u
    expm1(delta - u)``), which keeps the digits that the difference of the two logs
    cancels; ``mu = -2u/d + (6 - d) u^2/d^2 + O(u^3)``, and the float64 face returns
    ``-2u/d`` for ``u < 1e-20`` (where ``delta - u ~ -2u^2/d`` would underflow).

    References
    ----------
    CRT Figure 1 (right) and its caption.
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


def _value(log_fn: Any, name: str) -> Any:
    """Value-space twin of a log-space closed form (one definition, two spellings)."""

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
    value.__doc__ = (
        f"Value-space twin of :func:`{getattr(log_fn, '__name__', name)}` (same arguments).  Raises ``ValueError`` "
        "instead of overflowing to inf in float64.\n\n" + (log_fn.__doc__ or "")
    )
    return value


trig_variance = _value(trig_log_variance, "trig_variance")
positive_variance = _value(positive_log_variance, "positive_variance")
gerf_variance = _value(gerf_log_variance, "gerf_variance")
oprf_variance = _value(oprf_log_variance, "oprf_variance")


# ---------------------------------------------------------------- orthogonal ensembles


def _orf_cov_conditioning(ctx: Any, u: Any, d: Any) -> Any:
    lh = ctx.log(ctx.hyp1f1(-d / 2, d / 2, -u / 2))
    # + 1: the log of a rounded 1F1 near 1 has an *absolute* error of ~eps
    return (u / 2 + ctx.abs(lh) + 1) / ctx.abs(lh - u / 2)


@formula(check=_check_u_d, conditioning=_orf_cov_conditioning)
def orf_log_covariance_factor(ctx: Any, u: Any, d: Any) -> Any:
    """``log(1 + G)`` with ``G = Cov(X_1, X_2)/K^2`` for two orthogonal GERF samples.

    For GERF with real ``A`` and ``s = +1`` and two projections from one orthogonal block
    (directions orthonormal, norms independent chi_d), ``E[X_1 X_2] =
    exp(-2(|x|^2 + |y|^2)) 1F1(d; d/2; u/2)`` **whatever A is** (the ``exp(2A|w|^2)``
    factor turns chi_d into a scaled chi_d that ``B`` and ``D`` undo), so
    ``1 + G = e^{-u} 1F1(d; d/2; u/2) = e^{-u/2} 1F1(-d/2; d/2; -u/2)`` (Kummer), and
    ``G = -u^2 / (2(d + 2)) + O(u^3) <= 0``.

    Derivation: expand ``E[cosh(s R t_1) cosh(s R' t_2)]`` in moments of the first two
    coordinates ``t`` of a uniform point on S^{d-1} and of chi_d norms; the double series
    collapses by Chu-Vandermonde.  Tied to 2-D quadrature and Monte Carlo in the tests.

    References
    ----------
    CRT Thm 4.1 and appendix 9.7 (eq (23)-(33), where the same covariance is bounded);
    SimRF (003) eq (23) is the PosRF special case.
    """
    return -u / 2 + ctx.log(ctx.hyp1f1(-d / 2, d / 2, -u / 2))


def _orf_npairs(m: int, d: int) -> int:
    q, r = divmod(m, d)
    return q * d * (d - 1) + r * (r - 1)


def orf_gerf_log_variance(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, a: Any, m: int, *,
    coupling: str = "orf", kernel: str = "gaussian", backend: str = "float64", dps: int = 50,
) -> Any:
    """log Var of the M-sample GERF estimator (real A, s = +1) under iid or orthogonal blocks.

    ``Var = K^2 [expm1(z(A)) / M + (n_pairs / M^2) G]`` where ``z(A)`` is eq (6)'s exponent,
    ``G`` is :func:`orf_log_covariance_factor` and ``n_pairs = sum_k b_k (b_k - 1)`` over
    blocks of sizes ``b_k`` (``d`` each, the last truncated); ``coupling="iid"`` sets
    ``n_pairs = 0``.  For M <= d the ORF variance is ``Var_iid - (1 - 1/M)K^2 |G|``,
    which proves CRT Thm 4.1 (``|G| >= 0``).

    References
    ----------
    CRT Thm 3.2, eq (6); Thm 4.1, eq (15); appendix 9.1 (block construction), 9.7.
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


orf_gerf_variance = _value(orf_gerf_log_variance, "orf_gerf_variance")


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
    finite iff ``1 - 4kA > 0``.  Used for exact Monte Carlo standard errors (k <= 4).

    References
    ----------
    CRT eq (4)-(5), (16)-(17) (the same Gaussian integral with parameters scaled by k).
    ``1 - 4kA`` is formed from an error-free product (it rounds where ``A -> 1/(4k)``), and
    float64 points whose terms cancel by more than ``COND_MAX`` are recomputed in mpmath.
    """
    t1, t2, t3, t4 = _raw_moment_terms(ctx, k, sq_x, sq_y, sq_sum, a, d)
    return t1 + t2 + t3 + t4


def gerf_iid_error_moments(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, a: float, m: int = 1
) -> tuple[float, float] | None:
    """``(E e, E e^2)`` for ``e = (K_hat_M - K)^2``, K_hat_M the mean of M iid positive GERF samples.

    From the exact raw moments ``E X^k`` (k <= 4, :func:`gerf_log_raw_moment`) in mpmath, at
    40 digits or more (the central moments cancel heavily: :func:`rfcheck.stats.exact_moments_of_mean`
    raises the precision until 20 digits survive).  ``None`` when ``E X^4`` is infinite
    (``1 - 16A <= 0``) or the result leaves the float64 range.  These give Monte Carlo tests
    an exact standard error instead of a sample one.
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

    ``q = sum_l x_l^2 y_l^2`` (Thm 3.4), ``abs_prod = |x_l y_l|`` of shape (P, d)
    (Thm 3.5), ``xy = x . y`` and ``sq_diff = |x - y|^2`` (so that ``K^2 = e^{-sq_diff}``).
    ``xy`` is correctly rounded (a compensated sum of exact products): it cancels for
    near-orthogonal pairs.
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

    ``Var = exp(lambda d + q/lambda - |x|^2 - |y|^2) - K^2 = K^2 expm1(lambda d + q/lambda
    - 2 x.y)`` with ``q = sum_l x_l^2 y_l^2`` (:func:`discrete_pair_stats`); the exponent
    is >= 0 and vanishes (zero variance) iff all ``x_l y_l`` are equal, positive and
    ``lambda = lambda*``.  Float64 points where the exponent cancels are recomputed in
    mpmath.

    References
    ----------
    CRT Thm 3.4, eq (11); proof appendix 9.5 (holds as printed).
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
    """``lambda* = d^{-1/2} q^{1/2}``, the minimiser of (11) over ``lambda > 0``.

    The exponent ``lambda d + q/lambda`` is strictly convex for ``q > 0`` with derivative
    ``d - q/lambda^2``.  For ``q = 0`` the infimum is approached as ``lambda -> 0`` and no
    ``lambda > 0`` attains it (``ValueError``).

    References
    ----------
    CRT sec 3.2.1, after Thm 3.4 (holds for q > 0).
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
    """``log I_0(t)`` for finite real ``t`` without overflow (``log i0e(|t|) + |t|``) and, for
    ``|t| < 1``, without losing relative accuracy (``log1p(I_0(t) - 1)``, ``log I_0(t) ~ t^2/4``)."""
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

    ``Var = p^{-d} e^{-|x|^2-|y|^2} prod_l I_0(2 (1-p)^{-1/2} |x_l y_l|) - K^2
    = K^2 expm1(z)``, ``z = -d log p + sum_l log I_0(2|x_l y_l|/sqrt(1-p)) - 2 x.y``, with
    ``log I_0`` from :func:`log_i0` (exponentially scaled Bessel function, so that products over
    ``d`` coordinates never overflow; a series at small arguments, where ``p* -> 1`` puts them).
    ``abs_prod`` has shape (..., d); ``xy``, ``sq_diff``, ``p`` broadcast against (...).  Float64
    points where ``z`` loses more than 3 digits to cancellation are recomputed in mpmath.

    References
    ----------
    CRT Thm 3.5, eq (13); proof appendix 9.6 (eq (13) holds; the proof's second line
    carries a stray ``- K^2`` inside the product).
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
    """``z(p) = log(E[(f f)^2] / K^2)`` of GeomRF (float64); the objective behind p*."""
    a = _check_geom(abs_prod, xy, 0.0, p)
    pa = np.asarray(p, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):  # (log_i0's unused series branch at large t)
        t = 2 * a / np.sqrt(1 - pa)[..., None]
        li = log_i0.impl(FP, t)
    return -a.shape[-1] * np.log(pa) + np.sum(li, axis=-1) - 2 * np.asarray(xy, dtype=float)


def geometric_p_star(abs_prod: Any, xy: float = 0.0, *, maxiter: int = 100) -> tuple[float, float]:
    """``(p*, z(p*))``: the GeomRF parameter minimising eq (13), by Brent's method.

    ``abs_prod`` is one pair's ``|x_l y_l|`` (shape (d,)) or the set averages of eq (14).
    Brent's bounded method on ``t = logit(p)`` in [-40, 40] (``p`` from 4e-18 to
    1 - 4e-18), at most ``maxiter`` iterations (the paper uses 100).  Appendix 9.10.1.

    References
    ----------
    CRT sec 3.2.2 (after eq (14)), appendix 9.10.1.
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

    ``f_DI(w, x) = e^{-|x|^2/2} prod_l x_l^{w_l} (w_l!)^{-1/2} p_{w_l}^{-1/2}`` (eq 10), so
    ``E[(f f)^2] = e^{-|x|^2-|y|^2} prod_l sum_k (x_l y_l)^{2k} / (p_k (k!)^2)``; each
    series is summed in mpmath until a term falls below ``10^-(dps+5)`` of the sum and
    the terms are decreasing (``ArithmeticError`` if ``kmax`` terms do not converge:
    the variance is infinite when ``(x_l y_l)^{2k}/(p_k k!^2)`` does not decay).
    ``log_pk(k)`` returns ``log p_k`` (mpmath); every ``p_k`` must be > 0.

    References
    ----------
    CRT sec 3.2, eq (9)-(10); Thm 3.4-3.5 are the Poisson and geometric cases.
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
    """``k -> log p_k`` of Poisson(lambda) in mpmath (for :func:`dirf_log_variance`)."""
    import mpmath

    lam = validate.finite_real(lam, "lambda")
    if not lam > 0:
        raise ValueError("PoisRF needs lambda > 0")
    return lambda k: -mpmath.mpf(lam) + k * mpmath.log(lam) - mpmath.loggamma(k + 1)


def geometric_log_pk(p: float) -> Any:
    """``k -> log p_k`` of the geometric distribution ``p (1-p)^k`` on {0, 1, ...}."""
    import mpmath

    p = validate.finite_real(p, "p")
    if not 0 < p < 1:
        raise ValueError("GeomRF needs 0 < p < 1")
    return lambda k: mpmath.log(p) + k * mpmath.log1p(-mpmath.mpf(p))


def positive_shift(x: Any, y: Any, eps: float = 1e-8) -> np.ndarray:
    """The shift ``c_l = min_i min(x_l^(i), y_l^(i)) - eps`` of CRT sec 3.2.3 (PoisRF+/GeomRF+).

    ``x - c`` and ``y - c`` have entries >= eps > 0 and ``K(x - c, y - c) = K(x, y)``.
    ``eps = 1e-8`` as in appendix 9.10.2.
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
    """Averages over all L^2 pairs (x_i, y_j) in O(Ld) (CRT eq (8), (12), (14)).

    Returns ``sq_x, sq_y`` (means of |x_i|^2, |y_j|^2), ``sq_sum`` and ``sq_diff`` (means
    of |x_i + y_j|^2, |x_i - y_j|^2, eq 8 with s = +1, -1), ``xy`` (mean x_i . y_j),
    ``q`` (mean of sum_l x_il^2 y_jl^2, eq 12), ``abs_prod`` (per-coordinate means of
    |x_il y_jl|, eq 14) and ``d``.  ``x`` is (L, d), ``y`` is (L', d).

    ``sq_sum``, ``sq_diff`` are computed from centred data, ``mean|x_i - mx|^2 + mean|y_j -
    my|^2 + |mx +- my|^2`` (``mx``, ``my`` the means), after shifting ``x`` by ``-x_1`` and
    ``y`` by ``-+x_1`` (which leaves ``x_i +- y_j`` unchanged), so that neither cancels when the
    sets are close to ``+-`` each other.  ``xy = (sum_i x_i) . (sum_j y_j) / (L L')`` is taken
    from the column sums as double-doubles (``math.fsum`` and its remainder) and exact products,
    so that it keeps its digits when the set means are near-orthogonal.
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

    One L-BFGS-B routine of ``maxiter`` iterations per ``s`` in ``signs`` (CRT appendix
    9.10.1: two routines of 50 iterations), over ``(Re A, Im A)`` with ``Re A <= 1/8 -
    1e-6`` (``Re(1 - 8A) > 0``), started at ``A = 0`` (PosRF / TrigRF).  The objective is
    :func:`gerf_log_variance` (log-space, so variances of e^-700 are optimised as well).
    Returns ``{"a", "s", "log_var", "per_s": {s: (a, log_var)}}`` for the best ``s``.

    References
    ----------
    CRT sec 3.1 (after eq (8)), Thm 3.2, appendix 9.10.1.
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


poisson_variance = _value(poisson_log_variance, "poisson_variance")
geometric_variance = _value(geometric_log_variance, "geometric_variance")

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
"Chefs' Random Tables: Non-Trigonometric Random Features", NeurIPS 2022
(``../shared/seeds/000_*``): sec 2.2, eq (4)-(7), Thm 3.1-3.3, Thm 4.1, appendix 9.2-9.4, 9.7.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfcheck import validate
from rfcheck.backends import formula

__all__ = [
    "gerf_coefficients",
    "gerf_iid_error_moments",
    "gerf_log_raw_moment",
    "gerf_log_variance",
    "gerf_variance",
    "log_expm1",
    "oprf_a_star",
    "oprf_log_variance",
    "oprf_log_variance_ratio",
    "oprf_rho_star",
    "oprf_variance",
    "orf_gerf_log_variance",
    "orf_gerf_variance",
    "orf_log_covariance_factor",
    "pair_stats",
    "positive_log_variance",
    "positive_variance",
    "trig_log_variance",
    "trig_variance",
]

_KERNELS = ("gaussian", "softmax")


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


def _check_stats(sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any) -> None:
    arrs = {}
    for name, v in (("sq_x", sq_x), ("sq_y", sq_y), ("sq_sum", sq_sum), ("sq_diff", sq_diff)):
        a = np.asarray(v, dtype=float)
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
    """exp of a float64 log-value that refuses to overflow silently."""
    arr = np.asarray(log_value, dtype=float)
    if np.any(arr > 709.78):
        raise ValueError(
            f"{name} exceeds the float64 range (log value up to {np.max(arr):.1f}); "
            f"use {name.replace('_variance', '_log_variance')} or backend='mpmath'"
        )
    with np.errstate(under="ignore"):
        out = np.exp(arr)
    return out if out.shape else float(out)


@formula
def log_expm1(ctx: Any, t: Any) -> Any:
    """``log(exp(t) - 1)`` for ``t >= 0`` without overflow or cancellation."""
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
    ``D = (fourth_root(1-4A))^d``, principal roots; needs ``Re(1 - 4A) > 0``.

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
    return a, complex(np.sqrt(complex(s) * one4a)), complex(-(s + 1) / 2), complex(one4a**0.25) ** d


def _gerf_terms(ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any, s: Any):
    """Exponents ``z1, z2`` with ``Var = (K^2/2) (Re expm1(z1) + expm1(z2))`` (CRT eq 19-21).

    ``z1 = log(E[(f1 f2)^2] / K^2)``, ``z2 = log(E|f1 f2|^2 / K^2)`` written so that
    nothing cancels: with ``v = |x + s y|^2`` the factor ``exp(-(s+1)(|x|^2+|y|^2))/K^2``
    equals ``exp(-s v)``.
    """
    v = (1 + s) / 2 * sq_sum + (1 - s) / 2 * sq_diff
    one8a = 1 - 8 * a
    re_a = ctx.re(a)
    one8re = 1 - 8 * re_a
    z1 = d / 2 * ctx.log1p(16 * a**2 / one8a) + s / one8a * v  # log1p: small A keeps digits
    z2 = d / 2 * ctx.log1p(16 * ctx.abs(a) ** 2 / one8re) + (
        -s / 2 + (s + 2 * ctx.abs(1 - 4 * a)) / (2 * one8re)
    ) * v
    return z1, ctx.re(z2)


def _check_gerf(sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any, s: Any) -> None:
    _check_stats(sq_x, sq_y, sq_sum, sq_diff, d)
    validate.sign(s, "s")
    aa = np.asarray(a, dtype=complex)
    if not np.all(np.isfinite(aa)):
        raise ValueError("A must be finite (no NaN or inf)")
    if not np.all((1 - 8 * aa).real > 0):
        raise ValueError("GERF variance needs Re(1 - 8A) > 0 (CRT Thm 3.2)")


def _gerf_conditioning(ctx: Any, *args: Any) -> Any:
    z1, z2 = _gerf_terms(ctx, *args)
    t1, t2 = _re_expm1(ctx, z1), ctx.expm1(z2)
    return (ctx.abs(t1) + ctx.abs(t2)) / ctx.abs(t1 + t2)


@formula(check=_check_gerf, conditioning=_gerf_conditioning)
def _gerf_log_variance(
    ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any, s: Any
) -> Any:
    z1, z2 = _gerf_terms(ctx, sq_x, sq_y, sq_sum, sq_diff, d, a, s)
    m = ctx.where(ctx.re(z1) > z2, ctx.re(z1), z2)
    small = ctx.log((_re_expm1(ctx, z1) + ctx.expm1(z2)) / 2)
    # large exponents: log((Re e^{z1} + e^{z2} - 2)/2) = m + log((Re e^{z1-m} + e^{z2-m} - 2e^{-m})/2)
    big = m + ctx.log(
        (ctx.exp(ctx.re(z1) - m) * ctx.cos(ctx.im(z1)) + ctx.exp(z2 - m) - 2 * ctx.exp(-m)) / 2
    )
    return -sq_diff + ctx.where(m > 600, big, small)


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
    arr = np.asarray(u, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError("|x+y|^2 must be finite (no NaN or inf)")
    if np.any(arr < 0):
        raise ValueError("|x+y|^2 must be >= 0")
    validate.positive_int(d, "d")


def _rho_parts(ctx: Any, u: Any, d: Any) -> tuple[Any, Any]:
    """``rho*`` and ``1 - rho*`` of CRT eq (22) in forms that never cancel.

    ``rho* = 2d / ((2u + d) + S)`` (rationalised eq (22)), ``S = sqrt((2u+d)^2 + 8du)``;
    ``1 - rho* = (2u + 4u(u + 3d)/(S + d)) / (2u + d + S)``.
    """
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


def _oprf_delta(ctx: Any, u: Any, d: Any) -> Any:
    """``log(E[X^2]/K^2)`` at the optimum: ``rho u + d log((1 + rho)/(2 sqrt(rho)))``."""
    rho, one_minus = _rho_parts(ctx, u, d)
    sr = ctx.sqrt(rho)
    gap = one_minus / (1 + sr)  # 1 - sqrt(rho), no cancellation
    return rho * u + d * ctx.log1p(gap**2 / (2 * sr))


@formula(check=_check_stats)
def _oprf_log_variance(ctx: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any) -> Any:
    return -sq_diff + log_expm1.impl(ctx, _oprf_delta(ctx, sq_sum, d))


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
    out = _oprf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, backend=backend, dps=dps)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


@formula(check=_check_u_d)
def oprf_log_variance_ratio(ctx: Any, u: Any, d: Any) -> Any:
    """``mu = log(Var_OPRF / Var_PosRF)`` as a function of ``u = |x + y|^2`` and ``d``.

    The same for the Gaussian and the softmax kernel (the kernel factor cancels).
    ``mu -> 0`` as ``u -> 0``; ``mu <= 0``.

    References
    ----------
    CRT Figure 1 (right) and its caption.
    """
    mu = log_expm1.impl(ctx, _oprf_delta(ctx, u, d)) - log_expm1.impl(ctx, u)
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
        f"Value-space twin of :func:`log_{name}` (same arguments).  Raises ``ValueError`` "
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
    npairs = 0 if coupling == "iid" else _orf_npairs(m, d)
    single = gerf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, a, 1, backend=backend, dps=dps)
    if backend == "mpmath":
        import mpmath

        with mpmath.workdps(dps):
            lk2 = -mpmath.mpf(sq_diff) if not isinstance(sq_diff, np.ndarray) else None
            single_m = mpmath.mpf(single) if not isinstance(single, np.ndarray) else None
            if lk2 is None or single_m is None:
                raise ValueError("the mpmath face of orf_gerf_log_variance takes scalars")
            g = mpmath.expm1(orf_log_covariance_factor(sq_sum, d, backend="mpmath", dps=dps))
            inner = mpmath.exp(single_m - lk2) / m + mpmath.mpf(npairs) / m**2 * g
            return _with_kernel(lk2 + mpmath.log(inner), kernel, sq_x, sq_y, backend, dps)
    lk2 = -np.asarray(sq_diff, dtype=float)
    g = np.expm1(orf_log_covariance_factor(sq_sum, d))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        l1 = single - lk2 - np.log(m)  # log(expm1(z)/M)
        # g = 0 (u = 0) leaves Var_iid, also where Var_iid = 0 (0 * inf would be NaN)
        corr = np.where(npairs * g == 0, 0.0, npairs / m**2 * g * np.exp(-l1))
        out = lk2 + l1 + np.log1p(corr)
    return _with_kernel(out, kernel, sq_x, sq_y, backend, dps)


orf_gerf_variance = _value(orf_gerf_log_variance, "orf_gerf_variance")


def _check_raw_moment(k: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any) -> None:
    _check_stats(sq_x, sq_y, sq_sum, sq_diff, d)
    validate.positive_int(k, "k")
    aa = np.asarray(a)
    if np.iscomplexobj(aa) or not np.all(np.isfinite(aa)):
        raise ValueError("A must be real and finite for the raw moments of positive GERF features")
    if not np.all(1 - 4 * k * aa > 0):
        raise ValueError(f"E[X^k] is finite only if 1 - 4kA > 0 (k = {k})")


@formula(check=_check_raw_moment)
def gerf_log_raw_moment(ctx: Any, k: Any, sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: Any, a: Any) -> Any:
    """``log E[X^k]`` of one positive GERF sample (real ``A``, ``s = +1``).

    ``X = D^2 exp(2A|w|^2 + B w.(x+y) - |x|^2 - |y|^2)`` with (5):
    ``E X^k = (1-4A)^{kd/2} (1-4kA)^{-d/2} exp(k^2 (1-4A) u / (2(1-4kA)) - k(|x|^2+|y|^2))``,
    finite iff ``1 - 4kA > 0``.  Used for exact Monte Carlo standard errors (k <= 4).

    References
    ----------
    CRT eq (4)-(5), (16)-(17) (the same Gaussian integral with parameters scaled by k).
    """
    one4a = 1 - 4 * a
    one4ka = 1 - 4 * k * a
    return (k * d / 2) * ctx.log(one4a) - (d / 2) * ctx.log(one4ka) + k**2 * one4a * sq_sum / (2 * one4ka) - k * (sq_x + sq_y)


def gerf_iid_error_moments(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, a: float, m: int = 1
) -> tuple[float, float] | None:
    """``(E e, E e^2)`` for ``e = (K_hat_M - K)^2``, K_hat_M the mean of M iid positive GERF samples.

    From the exact raw moments ``E X^k`` (k <= 4, :func:`gerf_log_raw_moment`) evaluated at
    40 digits (the central moments cancel heavily in float64).  ``None`` when
    ``E X^4`` is infinite (``1 - 16A <= 0``) or the result leaves the float64 range.
    These give Monte Carlo tests an exact standard error instead of a sample one.
    """
    import mpmath

    from rfcheck.stats import fourth_central_moment_of_mean

    if not 1 - 16 * a > 0:
        return None
    with mpmath.workdps(40):
        raw = tuple(
            mpmath.exp(gerf_log_raw_moment(k, sq_x, sq_y, sq_sum, sq_diff, d, a, backend="mpmath", dps=40))
            for k in (1, 2, 3, 4)
        )
        var, mu4 = fourth_central_moment_of_mean(raw, m)
        out = (float(var), float(mu4))
    return out if all(np.isfinite(v) for v in out) else None

"""Closed forms of Simplex Random Features (SimRF) -- correct versions, each citing its equation.

Every public result is one context-generic definition (``rfcheck.backends.formula``)
with a float64 face (vectorised), an mpmath face (``backend="mpmath", dps=...``) and a
sympy face (``.symbolic(...)``).

The RF-conformity as a hypergeometric function
----------------------------------------------
The bracket of eq (10) is ``Gamma(d/2) sum_k (v w/2)^{2k} / (k! Gamma(k + d/2)) =
0F1(; d/2; v^2 w^2 / 4)`` -- the conditional expectation ``E[exp(w_ij . v) | |w_ij| = w]``
of an isotropic vector -- so ``rho = E 0F1(; d/2; v^2 w_ij^2 / 4)``.  For two rows with
independent ``chi_d`` norms at a fixed angle (``cos theta = c``), integrating the norm
radius in closed form (``int r^{2d-1} e^{-r^2/2} 0F1(; b; a r^2) dr = 2^{d-1} Gamma(d)
1F1(d; b; 2a)``) gives

    rho_theta(v) = E_t 1F1(d; d/2; (v^2 / 2)(1 + c t)),   t = sin(phi),
    phi with density  sin(phi)^{d-1} / B  on [0, pi],

i.e. ``t^2 ~ Beta(d/2, 1/2)``.  Hence (all terms positive, no cancellation):

* IIDRF (eq 19): ``exp(v^2)``;
* ORF (eq 23, ``c = 0``): ``1F1(d; d/2; v^2 / 2)``;
* SimRF (eq 24, ``c = -1/(d-1)``): the ``t``-average above, equal to the single series
  ``sum_p (c v^2/2)^p / p! (d)_p / (d/2)_p  E[t^p]  1F1(d + p; d/2 + p; v^2/2)`` (a
  rearrangement of eq 24; tested against the printed double series at 50 digits).

Float64 faces sum positive hypergeometric series with rescaling (log-space values, no
overflow; relative error ~ sqrt(#terms) eps) and average over ``t`` with a Gauss-Jacobi
rule for the weight ``t^{d-1} (1 - t)^{-1/2}`` (the remaining factor ``(1 + t)^{-1/2}``
is smooth).  Gaps (differences of nearly equal conformities) are summed as series of
positive differences (``-expm1`` of accurate logarithms), never as a difference of two
rounded values; the one alternating series (RFFs) carries a conditioning estimate so
that the float64 face recomputes ill-conditioned points in mpmath.

References
----------
I. Reid, K. Choromanski, V. Likhosherstov, A. Weller, "Simplex Random Features", ICML 2023:
Def 3.1 eq (10), Thm 3.2 eq (11), Lemma 4.1 eq (18)-(19),
Lemma 4.2 eq (20)-(21), Thm 4.3 eq (23)-(24), Cor 4.4 eq (25), Thm 4.5 eq (26),
Cor 4.6 eq (27), sec 5.1, Lemma A.1 eq (40), appendix A.5 eq (58), A.8 eq (74).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from rfcheck import validate
from rfcheck.backends import SYM, formula

__all__ = [
    "conformity_angle",
    "conformity_estimate",
    "conformity_iid",
    "conformity_kernel",
    "conformity_of_ensemble",
    "conformity_orf",
    "conformity_simrf",
    "equal_norm_conformity",
    "equal_norm_conformity_bound",
    "log_conformity_angle",
    "log_conformity_iid",
    "log_conformity_kernel",
    "log_conformity_orf",
    "log_conformity_simrf",
    "log_pdf_wij_angle",
    "log_pdf_wij_iid",
    "log_pdf_wij_orf",
    "log_prf_orthogonality_gap",
    "log_rff_orthogonality_gap",
    "orf_simrf_conformity_gap",
    "pair_conformity",
    "pdf_wij_angle",
    "pdf_wij_iid",
    "pdf_wij_orf",
    "prf_mse",
    "prf_mse_from_conformity",
    "prf_orthogonality_gap",
    "rff_mse",
    "rff_mse_ratio_asymptotic",
    "rff_mse_ratio_orf_iid",
    "rff_orthogonality_gap",
    "simplex_cos",
    "small_v_mse_coefficient",
    "small_v_prefactor_simrf",
]

_COUPLINGS = ("iid", "orf", "simrf")
_EPS = float(np.finfo(float).eps)
_GJ_NODES = 96  # Gauss-Jacobi nodes of the t-average (tested to 1e-13 for d <= 1024, v <= 10)
_GJ_BETA_MAX = 900.0  # larger t-powers stay in the integrand (weights overflow past ~1020)
_MP_MAXTERMS = 10**6  # terms mpmath's hypergeometric series may take (its default stops short at d ~ 1000)
_TINY_V = 1e-140  # below this v the gaps are their leading terms (v^2 may underflow in float64)


# ------------------------------------------------------------------ validation helpers


def _nonneg(v: Any, name: str) -> np.ndarray:
    a = validate.real_array(v, name)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if np.any(a < 0):
        raise ValueError(f"{name} must be >= 0")
    return a


def _dims(d: Any, minimum: int = 1) -> None:
    arr = np.asarray(d, dtype=object).ravel()
    for x in arr:
        validate.positive_int(x, "d", minimum)


def _cos(c: Any) -> None:
    a = validate.real_array(c, "cos_theta")
    if not np.all(np.isfinite(a)):
        raise ValueError("cos_theta must be finite (no NaN or inf)")
    if np.any(np.abs(a) > 1):
        raise ValueError("cos_theta must lie in [-1, 1]")


def _check_vd(v: Any, d: Any) -> None:
    _nonneg(v, "v")
    _dims(d)


def _check_vd2(v: Any, d: Any) -> None:
    _nonneg(v, "v")
    _dims(d, 2)


def _check_angle(v: Any, d: Any, cos_theta: Any) -> None:
    _nonneg(v, "v")
    _dims(d)
    _cos(cos_theta)


def _check_coupling(coupling: str) -> None:
    if coupling not in _COUPLINGS:
        raise ValueError(f"coupling must be one of {_COUPLINGS}; got {coupling!r}")


def _check_m(m: Any, minimum: int = 1) -> None:
    for x in np.asarray(m, dtype=object).ravel():
        validate.positive_int(x, "m", minimum)


def _check_m_le_d(m: Any, d: Any, source: str) -> None:
    if np.any(np.asarray(m) > np.asarray(d)):
        raise ValueError(f"{source} needs m <= d (one orthogonal block)")


# --------------------------------------------------------- float64 positive series engine


def _fp_pos_series(z: np.ndarray, ratio: Any, factor: Any = None, min_terms: int = 0) -> np.ndarray:
    """``log sum_k T_k f_k`` with ``T_0 = 1``, ``T_{k+1} = T_k ratio(k) z`` (all >= 0).

    ``ratio(k)`` and ``factor(k)`` return arrays broadcastable to ``z``; ``factor`` (default
    1) must be in ``[0, 1]`` and non-increasing-irrelevant: the series stops once the
    terms are past their peak and below ``eps/4`` of the sum.  Rescales term and sum by a
    power of 2 whenever a term exceeds ``2^600`` (or falls below ``2^-300`` while the sum is
    below ``2^-500``), so the value may lie far outside float64.
    """
    z = np.asarray(z, dtype=float)
    t = np.ones_like(z)
    f0 = factor(0) if factor is not None else 1.0
    s = np.broadcast_to(np.asarray(f0, dtype=float), z.shape).copy()
    tail = np.zeros_like(z)  # s - f0, kept apart so that log(1 + tail) keeps its relative accuracy
    bits = np.zeros(z.shape, dtype=np.int64)  # the sum is s 2^bits
    big = 2.0**600
    k = 0
    while True:
        r = ratio(k) * z
        t = t * r
        k += 1
        f = factor(k) if factor is not None else 1.0
        s = s + t * f
        tail = tail + t * f
        # a huge term, or a tiny one while the sum is still tiny (leading factors 0, e.g. a gap ~ z^2,
        # where z^k would underflow to 0 at tiny z): rescale term and sum by 2^-e, t = m 2^e
        resc = (t > big) | ((t < 2.0**-300) & (t > 0) & (s < 2.0**-500))
        if np.any(resc):
            e = np.where(resc, np.frexp(t)[1], 0)
            t, s, tail = np.ldexp(t, -e), np.ldexp(s, -e), np.ldexp(tail, -e)
            bits = bits + e
        done = (r < 1) & (t <= 0.25 * _EPS * s) | (t == 0)
        if k >= min_terms and np.all(done):
            break
        if k > 200_000:
            raise ValueError("series did not converge in 200000 terms (argument too large for float64 face)")
    with np.errstate(divide="ignore"):
        out = np.log(s) + bits * math.log(2.0)  # (one rounding: no running sum of rescalings)
        if factor is None:  # s = 1 + tail: log1p keeps small logarithms (v -> 0) accurate
            out = np.where(bits == 0, np.log1p(tail), out)[()]
        return out


def _fp_log_hyp0f1(b: Any, z: Any) -> np.ndarray:
    b, z = np.broadcast_arrays(np.asarray(b, dtype=float), np.asarray(z, dtype=float))
    return _fp_pos_series(z, lambda k: 1.0 / ((b + k) * (k + 1)))


def _fp_log_hyp1f1(a: Any, b: Any, z: Any) -> np.ndarray:
    """log 1F1(a; b; z) for ``a, b > 0``, ``z >= 0`` (positive series)."""
    a, b, z = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (a, b, z)))
    return _fp_pos_series(z, lambda k: (a + k) / ((b + k) * (k + 1)))


def _jacobi_and_derivative(n: int, a: Any, b: Any, x: Any) -> tuple[Any, Any]:
    """``(P_n^{(a,b)}(x), d/dx P_n^{(a,b)}(x))`` by the three-term recurrence (mpmath numbers, or
    float64 arrays elementwise)."""
    p0, p1 = 1 + 0 * x, (a + 1) + (a + b + 2) * (x - 1) / 2
    for k in range(2, n + 1):
        s = 2 * k + a + b
        p0, p1 = p1, ((s - 1) * (s * (s - 2) * x + a * a - b * b) * p1
                      - 2 * (k + a - 1) * (k + b - 1) * s * p0) / (2 * k * (k + a + b) * (s - 2))
    s = 2 * n + a + b
    dp = (n * ((a - b) - s * x) * p1 + 2 * (n + a) * (n + b) * p0) / (s * (1 - x * x))
    return p1, dp


_GJ_REFINE = 0.05  # Gauss-Jacobi nodes within this of +-1 are refined in mpmath


@functools.lru_cache(maxsize=64)
def _gj_rule(d: int, n: int = _GJ_NODES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes ``t``, ``1 - t`` and normalised weights of ``E_t g(t)`` for the density
    ``prop. to t^{d-1} (1 - t^2)^{-1/2}`` on [0, 1] (``t = sin phi``).

    Gauss-Jacobi in ``x = 2t - 1`` (weight ``(1 - x)^{-1/2} (1 + x)^beta``): scipy's nodes, with
    the weights ``prop. to 1/((1 - x^2) P_n'(x)^2)`` (scipy's own weights are off by ~1e-12
    relative, which ``1 + cos(theta) t`` amplifies at ``cos(theta) -> -1``); within 0.05 of
    ``+-1``, where a node's rounding moves the weight by ~eps/(1 -+ x), the nodes are refined by
    Newton's method at 40 digits and their weights evaluated there.  ``1 - t = (1 - x)/2`` is
    exact for the float nodes.
    """
    beta = min(float(d - 1), _GJ_BETA_MAX)
    x, _ = sc.roots_jacobi(n, -0.5, beta)
    with np.errstate(over="ignore", invalid="ignore"):
        lw = -np.log((1 - x) * (1 + x) * _jacobi_and_derivative(n, -0.5, beta, x)[1] ** 2)
    with mpmath.workdps(40):
        a, b = mpmath.mpf(-0.5), mpmath.mpf(beta)
        for i in np.flatnonzero((1 - np.abs(x) < _GJ_REFINE) | ~np.isfinite(lw)):
            xi = mpmath.mpf(float(x[i]))
            for _ in range(50):
                p, dp = _jacobi_and_derivative(n, a, b, xi)
                step = p / dp
                xi -= step
                if abs(step) <= mpmath.mpf(10) ** -36:
                    break
            _, dp = _jacobi_and_derivative(n, a, b, xi)
            x[i] = float(xi)
            lw[i] = float(-mpmath.log((1 - xi * xi) * dp * dp))
    t, omt = (1 + x) / 2, (1 - x) / 2
    lw = lw + (d - 1 - beta) * np.log(t) - 0.5 * np.log1p(t)
    lw -= lw.max()
    ww = np.exp(lw)
    return t, omt, ww / ww.sum()


def _fp_one_plus_ct(c: Any, t: Any, omt: Any) -> Any:
    """``1 + c t`` for ``|c| <= 1``, ``t`` in [0, 1] given with ``1 - t``: ``(1 + c) - c (1 - t)``
    (two non-negative terms) where ``c t < -1/2``, since ``1 + c t`` cancels near ``c t = -1``."""
    return np.where(c * t < -0.5, (1 + c) - c * omt, 1 + c * t)


def _fp_log_one_plus_ct(c: Any, t: Any, omt: Any) -> Any:
    """``log(1 + c t)``: ``log1p(c t)``, or the log of :func:`_fp_one_plus_ct` where ``c t < -1/2``."""
    return np.where(c * t < -0.5, np.log(_fp_one_plus_ct(c, t, omt)), np.log1p(c * t))


def _fp_t_average_log(d: np.ndarray, log_g: Any, *args: np.ndarray) -> np.ndarray:
    """``log E_t exp(log_g(t, d, *args))`` elementwise over broadcast ``d, args``."""
    bc = np.broadcast_arrays(np.asarray(d), *[np.asarray(a, dtype=float) for a in args])
    dd, rest = bc[0], bc[1:]
    out = np.empty(dd.shape, dtype=float)
    for dv in np.unique(dd):
        sel = dd == dv
        t, omt, w = _gj_rule(int(dv))
        sub = [r[sel][:, None] for r in rest]
        lg = np.broadcast_to(log_g(t[None, :], omt[None, :], float(dv), *sub), (int(np.sum(sel)), t.size))
        mx = np.max(lg, axis=1, keepdims=True)
        res = mx[:, 0] + np.log(np.sum(w[None, :] * np.exp(lg - mx), axis=1))
        small = np.max(np.abs(lg), axis=1) <= 0.5  # log E e^lg ~ 0: log1p(E expm1(lg)) keeps it relative
        if np.any(small):
            res[small] = np.log1p(np.sum(w[None, :] * np.expm1(lg[small]), axis=1))
        out[sel] = res
    return out[()]


# --------------------------------------------------------------- context dispatch helpers


def _mp_hyp0f1_m1(b: Any, z: Any) -> Any:
    """``0F1(; b; z) - 1`` in mpmath without cancellation for ``z >= 0``: ``(z/b) 1F2(1; 2, b + 1; z)``
    below ``z = 1`` (the series with its first term removed); above, mpmath's series with up to
    ``10^6`` terms (its default gives up at large ``a``, ``z`` and 50 digits)."""
    return z / b * mpmath.hyp1f2(1, 2, b + 1, z) if z < 1 else mpmath.hyp0f1(b, z, maxterms=_MP_MAXTERMS) - 1


def _mp_hyp1f1_m1(a: Any, b: Any, z: Any) -> Any:
    """``1F1(a; b; z) - 1`` in mpmath without cancellation for ``a, b > 0``, ``z >= 0``:
    ``(a z/b) 2F2(1, a + 1; 2, b + 1; z)`` below ``z = 1``."""
    if z < 1:
        return a * z / b * mpmath.hyp2f2(1, a + 1, 2, b + 1, z)
    return mpmath.hyp1f1(a, b, z, maxterms=_MP_MAXTERMS) - 1


def _log_hyp0f1(ctx: Any, b: Any, z: Any) -> Any:
    if ctx.name == "float64":
        return _fp_log_hyp0f1(b, z)
    if ctx.name == "mpmath":  # log1p keeps the relative accuracy of log 0F1 ~ z/b at small z
        return mpmath.log1p(_mp_hyp0f1_m1(b, z))
    if ctx.name == "arb":
        return _as_ball(_ab_hyp0f1_m1(_ab(b), _ab(z)).log1p())
    return sympy.log(sympy.hyper([], [b], z))


def _log_hyp1f1(ctx: Any, a: Any, b: Any, z: Any) -> Any:
    if ctx.name == "float64":
        return _fp_log_hyp1f1(a, b, z)
    if ctx.name == "mpmath":  # log1p keeps the relative accuracy of log 1F1 ~ a z/b at small z
        return mpmath.log1p(_mp_hyp1f1_m1(a, b, z))
    if ctx.name == "arb":
        return _as_ball(_ab_hyp1f1_m1(_ab(a), _ab(b), _ab(z)).log1p())
    return sympy.log(sympy.hyper([a], [b], z))


def _mp_quad_verified(f: Any, pts: list[Any], what: str) -> Any:
    """``int f`` over the panels ``pts`` (Gauss-Legendre, 10 guard digits), verified.

    ``mpmath.quad`` stops on an *absolute* error estimate: ``f`` is divided by a rough value of
    its integral, so that integrals far from 1 neither stop early nor run to the maximal degree.
    The finite panels are then halved until two successive values agree to the working
    precision; ``ValueError`` if that takes more than 6 halvings.
    """
    tol = mpmath.eps * 2**20
    with mpmath.extradps(10):
        rough = abs(mpmath.quad(f, pts, method="gauss-legendre", maxdegree=3))
        if rough == 0 or not mpmath.isfinite(rough):
            rough = mpmath.mpf(1)

        def fn(x: Any) -> Any:
            return f(x) / rough

        prev = mpmath.quad(fn, pts, method="gauss-legendre")
        for _ in range(6):
            mids = [(a + b) / 2 for a, b in itertools.pairwise(pts) if mpmath.isfinite(b)]
            pts = sorted(pts + mids)
            val = mpmath.quad(fn, pts, method="gauss-legendre")
            if val == prev or abs(val - prev) <= tol * abs(val):
                return val * rough
            prev = val
    raise ValueError(f"{what} did not converge in 6 halvings of its panels at {mpmath.mp.dps} digits")


def _mp_t_average(d: int, g: Any, scale: Any = None) -> Any:
    """``E_t g(t, 1 - t)`` in mpmath, ``t = sin phi``, ``phi ~ sin^{d-1}`` on [0, pi] (symmetric).

    ``1 - t = 2 sin^2(pi/4 - phi/2)`` is passed without cancellation.  The weight peaks at
    ``pi/2`` with width ``~1/sqrt(d)``: 16 Gauss-Legendre panels over the peak; ``scale`` (the
    width in ``phi`` of a feature of ``g`` at ``t = 1``, i.e. ``phi = pi/2``) adds panels graded
    geometrically towards ``pi/2`` down to ``scale/64``.  Verified by :func:`_mp_quad_verified`.
    """
    half_pi = mpmath.pi / 2
    norm = mpmath.sqrt(mpmath.pi) * mpmath.gamma(mpmath.mpf(d) / 2) / (2 * mpmath.gamma(mpmath.mpf(d + 1) / 2))
    lo = max(mpmath.mpf(0), half_pi - 10 / mpmath.sqrt(d))
    pts = ([mpmath.mpf(0)] if lo > 0 else []) + list(mpmath.linspace(lo, half_pi, 17))
    if scale is not None:
        h = (half_pi - lo) / 32
        while h > scale / 64:
            pts.append(half_pi - h)
            h /= 2
        pts = sorted(set(pts))

    def f(ph: Any) -> Any:
        return mpmath.sin(ph) ** (d - 1) * g(mpmath.sin(ph), 2 * mpmath.sin(mpmath.pi / 4 - ph / 2) ** 2)

    return _mp_quad_verified(f, pts, f"SimRF t-average (d = {d})") / norm


def _sym_t_average(d: Any, g: Any) -> Any:
    ph = sympy.Symbol("phi", positive=True)
    norm = sympy.sqrt(sympy.pi) * sympy.gamma(d / sympy.Integer(2)) / sympy.gamma((d + 1) / sympy.Integer(2))
    return sympy.Integral(sympy.sin(ph) ** (d - 1) * g(sympy.sin(ph)), (ph, 0, sympy.pi)) / norm


# ------------------------------------------------------------------------- the Arb face
#
# Ball versions of the series, t-averages and integrals above (``backend="arb"``, see
# rfcheck.arb_backend).  Every number is a flint ball containing the exact value; a branch
# taken on a ball only chooses between two enclosures of the same quantity (the tighter one),
# never between two quantities.  Integrals are Arb's rigorous Gauss-Legendre integration of an
# integrand that is analytic near the path (``acb.integral``), plus, for the one integral over
# [0, inf), a proved bound of the tail.


def _ab(x: Any) -> Any:
    """The flint ball of an operand on the Arb face (a :class:`rfcheck.arb_backend.Ball`, an
    exact Python number or a flint ball)."""
    from rfcheck.arb_backend import to_ball

    return to_ball(x)


def _as_ball(x: Any) -> Any:
    """A flint ball back into the :class:`rfcheck.arb_backend.Ball` a formula works with."""
    from rfcheck.arb_backend import Ball

    return Ball(x)


def _ab_int(x: Any) -> int:
    """The Python integer of an exact integer ball (a dimension)."""
    v = _ab(x)
    n = v.unique_fmpz()
    if n is None or not v.is_exact():
        raise ValueError(f"expected an exact integer, got the ball {v}")
    return int(n)


def _ab_small(z: Any) -> bool:
    """``|z| < 1`` for every point of the ball ``z`` (real or complex): the series forms below."""
    return bool(abs(z).upper() < 1)


def _ab_hyp0f1_m1(b: Any, z: Any) -> Any:
    """``0F1(; b; z) - 1``: ``(z/b) 1F2(1; 2, b + 1; z)`` for ``|z| < 1`` (no cancellation), else
    Arb's ``0F1`` minus 1."""
    if _ab_small(z):
        return z / b * z.hypgeom([1], [2, b + 1])
    return z.hypgeom_0f1(b) - 1


def _ab_hyp1f1_m1(a: Any, b: Any, z: Any) -> Any:
    """``1F1(a; b; z) - 1`` (real or complex ball ``z``): ``(a z/b) 2F2(1, a + 1; 2, b + 1; z)``
    for ``|z| < 1``, else Arb's ``1F1`` minus 1."""
    if _ab_small(z):
        return a * z / b * z.hypgeom([1, a + 1], [2, b + 1])
    return z.hypgeom_1f1(a, b) - 1


def _ab_exp_minus_1f1(x: Any, d: int) -> Any:
    """``e^x - 1F1(d; d/2; x/2)`` for a real ball ``x`` (the RFF bracket at ``x = -z^2``; for ``x >= 0``
    :func:`_ab_orf_gap` sums positive terms).  The terms of order 0 and 1 cancel exactly, so for ``|x| < 1``
    ``(x^2/2) (1F1(1; 3; x) - (d+1)/(d+2) 2F2(1, d+2; 3, d/2+2; x/2))`` (both series with their
    first two terms removed; the bracket ~ ``1/(d+2)`` loses only ``log2(d+2)`` bits)."""
    from flint import arb

    b = arb(d) / 2
    if _ab_small(x):
        rest = x.hypgeom([1], [3]) - arb(d + 1) / (d + 2) * (x / 2).hypgeom([1, d + 2], [3, b + 2])
        return x * x / 2 * rest
    return x.exp() - (x / 2).hypgeom_1f1(d, b)


def _ab_orf_gap(x: Any, d: int) -> Any:
    """``e^x - 1F1(d; d/2; x/2) = sum_k x^k/k! q_k`` for a real ball ``x >= 0``, summed on balls.

    ``q_k = 1 - prod_{j<k} (d+j)/(d+2j)`` is built without cancellation, ``q_{k+1} = q_k + p_k
    k/(d+2k)`` with ``p_k`` the product, so every term is a non-negative ball (the mpmath face's
    series).  Once ``k + 1 > 2x`` the remaining terms are below ``t_{k+1} sum_j 2^-j``
    (``q <= 1``), and the sum stops with that bound added as the ball ``[0, 2 t_{k+1}]``.
    """
    from flint import arb
    from flint import ctx as flint_ctx

    eps = arb(2) ** (-flint_ctx.prec - 4)
    t, q, p, s, k = arb(1), arb(0), arb(1), arb(0), 0
    while True:
        s += t * q
        q, p = q + p * k / (d + 2 * k), p * arb(d + k) / (d + 2 * k)
        t = t * x / (k + 1)
        k += 1
        if k >= 3 and k > 2 * x and t <= eps * s:
            bound = (2 * t).upper()
            return s + arb(bound / 2, bound / 2)
        if k > 1_000_000:
            raise ValueError(f"log_prf_orthogonality_gap: the series of x = {x} did not converge on balls")


def _ab_t_average(d: int, g: Any) -> Any:
    """``E_t g(t, 1 - t)`` on balls, ``t = sin phi``, ``phi ~ sin^{d-1}`` on [0, pi] (symmetric about
    pi/2): ``2 int_0^{pi/2} sin^{d-1}(phi) g dphi / (sqrt(pi) Gamma(d/2) / Gamma((d+1)/2))``.

    ``g`` takes complex balls (``acb``) and must be analytic near [0, pi/2] wherever it returns a
    finite ball (poles give non-finite balls, which Arb's integration subdivides around).  ``1 - t
    = 2 sin^2(pi/4 - phi/2)`` is passed without cancellation.  The absolute tolerance is scaled by
    the integrand's size at a few points, so that tiny integrals (``v -> 0``) are still resolved
    to the working precision.
    """
    from flint import acb, arb
    from flint import ctx as flint_ctx

    prec = flint_ctx.prec
    quarter_pi = arb.pi() / 4

    def f(ph: Any, analytic: bool) -> Any:
        s = ph.sin()
        omt = 2 * (quarter_pi - ph / 2).sin() ** 2
        return s ** (d - 1) * g(s, omt)

    mag = arb(0)
    for frac in (2, 3, 4, 6):
        y = abs(f(acb(arb.pi() / frac), False))
        if y.is_finite():
            mag = max(mag, y.mid())
    tol = mag * arb(2) ** (-prec - 8) if mag > 0 else arb(2) ** (-4 * prec)
    val = acb.integral(f, 0, 2 * quarter_pi, rel_tol=arb(2) ** -prec, abs_tol=tol, eval_limit=2_000_000).real
    norm = arb.pi().sqrt() * (arb(d) / 2).lgamma().exp() / (arb(d + 1) / 2).lgamma().exp()
    return 2 * val / norm


def _ab_one_plus_ct(c: Any, t: Any, omt: Any) -> Any:
    """``1 + c t`` on balls, as ``(1 + c) - c (1 - t)`` (two non-negative terms) for ``c < 0``."""
    return (1 + c) - c * omt if c < 0 else 1 + c * t


def _ab_pdf_antipodal(w: Any, d: int) -> Any:
    """``p(w)`` of ``|R_1 - R_2|``, ``R_i`` iid ``chi_d``: ``2 int_0^inf chi_d(r) chi_d(r + w) dr``.

    Integrated over ``[0, R]`` (``R = sqrt(d) + w + 12``) by Arb, plus the tail: the log of the
    integrand ``f`` is concave in ``r`` with slope ``-s < 0`` at ``R``, so
    ``int_R^inf f <= f(R) / s``, added as the ball ``[0, f(R)/s]``.
    """
    from flint import acb, arb

    lc = (1 - arb(d) / 2) * arb(2).log() - (arb(d) / 2).lgamma()

    def f(r: Any, analytic: bool) -> Any:
        return (2 * lc - (r * r + (r + w) ** 2) / 2).exp() * (r * (r + w)) ** (d - 1)

    big_r = arb(d).sqrt() + w + 12
    slope = (d - 1) * (1 / big_r + 1 / (big_r + w)) - (2 * big_r + w)
    if not slope < 0:  # (R^2 > d - 1 makes it negative)
        raise ValueError(f"pdf_wij_angle: tail bound failed at d = {d}, w = {w}")
    tail = (f(acb(big_r), False).real / -slope).upper()
    tol = f(acb(arb(d).sqrt()), False).real.mid() * arb(2) ** (-_ab_prec() - 8)
    body = acb.integral(f, 0, big_r, rel_tol=arb(2) ** -_ab_prec(), abs_tol=tol, eval_limit=2_000_000).real
    return 2 * (body + arb(tail / 2, tail / 2))


def _ab_prec() -> int:
    """flint's working precision (bits)."""
    from flint import ctx as flint_ctx

    return int(flint_ctx.prec)


# ----------------------------------------------------------------------- eq (10) kernel


@formula(check=lambda w, v, d: (_nonneg(w, "w"), _check_vd(v, d)) and None)
def log_conformity_kernel(ctx: Any, w: Any, v: Any, d: Any) -> Any:
    """log of the eq (10) bracket ``Gamma(d/2) sum_k (v w)^{2k} / (2^{2k} k! Gamma(k + d/2))``.

    Equal to ``log 0F1(; d/2; v^2 w^2 / 4) = log E[exp(w_ij . v) | |w_ij| = w]`` (an isotropic
    ``w_ij``); summed as a positive series in log space (no overflow).

    Parameters
    ----------
    w : array_like
        The norm ``w = |w_i + w_j|``, finite, ``>= 0``.
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``w`` or ``v`` is negative or not finite, ``d`` is not an integer ``>= 1``, the
        arguments do not broadcast, or ``dps < 15``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Def 3.1, eq (10) and eq (33).

    Examples
    --------
    >>> import math
    >>> abs(float(log_conformity_kernel(1.5, 0.8, 1)) - math.log(math.cosh(1.2))) < 1e-15  # 0F1(;1/2;t^2/4) = cosh t
    True
    >>> abs(float(log_conformity_kernel(1.5, 0.8, 3)) - math.log(math.sinh(1.2) / 1.2)) < 1e-15
    True
    """
    return _log_hyp0f1(ctx, d / _two(ctx), v * v * w * w / 4)


def _frac(ctx: Any, a: Any, b: Any) -> Any:
    """``a / b`` of integers in the context: exact in mpmath (``int / int`` would round to a
    float64 before mpmath sees it), a rounded float64, or a ball/sympy quotient."""
    return mpmath.mpf(a) / b if ctx.name == "mpmath" else a / b


def _two(ctx: Any) -> Any:
    """The number 2 in the context's exact arithmetic (sympy keeps d/2 rational)."""
    return sympy.Integer(2) if ctx.name == "sympy" else 2


def conformity_kernel(w: Any, v: Any, d: Any, *, backend: str = "float64", dps: int = 50) -> Any:
    """The eq (10) bracket ``0F1(; d/2; v^2 w^2 / 4)`` (``exp`` of :func:`log_conformity_kernel`).

    Parameters
    ----------
    w : array_like
        The norm ``w = |w_i + w_j|``, finite, ``>= 0``.
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`log_conformity_kernel`.
    ValueError
        Also (float64) where the value exceeds the float64 range; use the ``log_`` function or
        ``backend="mpmath"`` there.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Def 3.1, eq (10).

    Examples
    --------
    >>> import math
    >>> abs(conformity_kernel(1.5, 0.8, 3) - math.sinh(1.2) / 1.2) < 1e-15  # d = 3: sinh(t)/t
    True
    >>> float(conformity_kernel(0.0, 0.8, 5))  # w = 0: the bracket is 1
    1.0
    """
    out = log_conformity_kernel(w, v, d, backend=backend, dps=dps)
    return _exp(out, backend, dps, "conformity_kernel")


def conformity_estimate(w_samples: Any, v: float, d: int) -> tuple[float, float]:
    """Eq (10) as an estimand: the sample mean of ``0F1(; d/2; v^2 w_ij^2/4)`` and its standard error.

    ``w_ij = |w_i + w_j|`` (e.g. all ordered pairs ``i != j`` of simulated ensembles); the
    standard error is ``std / sqrt(n)`` over the rows of ``w_samples`` (assumed independent:
    one row per ensemble, pairs along the last axis).  Deviations from 1 are averaged (``0F1 -
    1`` kept to relative accuracy), so that tiny ``v w`` keep their spread.

    Parameters
    ----------
    w_samples : array_like
        Samples of ``w_ij >= 0``, shape (n,) (one per ensemble) or (n, pairs), ``n >= 2``.
    v : float
        ``|x + y|``, ``>= 0``.
    d : int
        The dimension, ``>= 1``.

    Returns
    -------
    tuple of float
        ``(mean, standard error)``.

    Raises
    ------
    ValueError
        If there are fewer than 2 ensembles (rows), a sample or ``v`` is negative or not
        finite, or ``d`` is not an integer ``>= 1``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Def 3.1, eq (10).

    Examples
    --------
    >>> mean, se = conformity_estimate([[1.5, 1.5], [1.5, 1.5], [1.5, 1.5]], 0.8, 3)
    >>> abs(mean - conformity_kernel(1.5, 0.8, 3)) < 1e-15 and se == 0.0  # identical samples
    True
    """
    w = validate.finite_array(w_samples, "w_samples")
    if w.ndim == 1:
        w = w[:, None]
    if w.shape[0] < 2:
        raise ValueError("conformity_estimate needs samples from at least 2 ensembles")
    validate.positive_int(d, "d")
    _nonneg(v, "v")
    _nonneg(w, "w_samples")
    # centred at 1 (0F1 >= 1): the rows' 0F1 - 1 = expm1(log 0F1) keep their relative digits,
    # so that the spread of values all ~1 + 1e-17 (tiny v w) is not lost to the rounding of 1 + ...
    dev = np.expm1(_fp_log_hyp0f1(d / 2, (v * w) ** 2 / 4)).mean(axis=1)
    return float(1 + dev.mean()), float(dev.std(ddof=1) / math.sqrt(dev.size))


def _exp(log_value: Any, backend: str, dps: int, name: str, alternative: str | None = None) -> Any:
    if backend == "mpmath":
        with mpmath.workdps(dps):
            f = np.frompyfunc(mpmath.exp, 1, 1)
            out = f(log_value)
            if isinstance(out, np.ndarray):
                return out if out.shape else out[()]
            return out
    arr = np.asarray(log_value, dtype=float)
    if np.any(arr > 709.78):
        alternative = alternative or f"log_{name} or backend='mpmath'"
        raise ValueError(f"{name} exceeds the float64 range (log value {np.max(arr):.1f}); use {alternative}")
    out = np.exp(arr)
    return out if out.shape else float(out)


# ------------------------------------------------------------------ conformities (eq 19-24)


@formula(check=_check_vd)
def log_conformity_iid(ctx: Any, v: Any, d: Any) -> Any:
    """log RF-conformity of IIDRFs, ``log rho = v^2``.

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 1``, the arguments do not
        broadcast, or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma 4.1, eq (19) (holds as printed).

    Examples
    --------
    >>> float(log_conformity_iid(0.7, 4)) == 0.7 * 0.7
    True
    """
    return v * v + 0 * d


@formula(check=_check_vd)
def log_conformity_orf(ctx: Any, v: Any, d: Any) -> Any:
    """log RF-conformity of ORFs, ``log 1F1(d; d/2; v^2/2)`` (positive series, log space).

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 1``, the arguments do not
        broadcast, or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Thm 4.3, eq (23): ``Gamma(d/2)/Gamma(d) sum_k
    v^{2k}/(2^k k!) Gamma(k+d)/Gamma(k+d/2)``
    is the series of ``1F1(d; d/2; v^2/2)``.

    Examples
    --------
    >>> import mpmath
    >>> abs(float(log_conformity_orf(0.7, 4)) - float(mpmath.log(mpmath.hyp1f1(4, 2, 0.245)))) < 1e-15
    True
    >>> bool(log_conformity_orf(0.7, 4) < log_conformity_iid(0.7, 4))  # ORFs conform less
    True
    """
    return _log_hyp1f1(ctx, d, d / _two(ctx), v * v / 2)


def _angle_impl(ctx: Any, v: Any, d: Any, c: Any) -> Any:
    if ctx.name == "float64":

        def lg(t: Any, omt: Any, dv: float, vv: Any, cc: Any) -> Any:
            return _fp_log_hyp1f1(dv, dv / 2, vv * vv / 2 * _fp_one_plus_ct(cc, t, omt))

        return _fp_t_average_log(np.asarray(d), lg, v, c)
    if ctx.name == "mpmath":
        d = int(d)
        b = mpmath.mpf(d) / 2
        if not v:
            return mpmath.mpf(0)

        def g(t: Any, omt: Any) -> Any:
            one_ct = 1 + c * t if c * t >= -0.5 else (1 + c) - c * omt  # (no cancellation near c t = -1)
            return _mp_hyp1f1_m1(d, b, v * v / 2 * one_ct)

        return mpmath.log1p(_mp_t_average(d, g))  # log1p of E[1F1 - 1]: relative accuracy at small v
    if ctx.name == "arb":
        di, vb, cb = _ab_int(d), _ab(v), _ab(c)
        if vb.is_zero():
            return _as_ball(vb * 0)
        u = vb * vb / 2
        return _as_ball(_ab_t_average(di, lambda t, omt: _ab_hyp1f1_m1(di, di / 2, u * _ab_one_plus_ct(cb, t, omt)))
                        .log1p())
    return sympy.log(_sym_t_average(d, lambda t: sympy.hyper([d], [d / sympy.Integer(2)], v * v / 2 * (1 + c * t))))


@formula(check=_check_angle)
def log_conformity_angle(ctx: Any, v: Any, d: Any, cos_theta: Any) -> Any:
    """log RF-conformity of two marginally Gaussian rows at a fixed angle ``theta``.

    ``rho_theta = E_t 1F1(d; d/2; (v^2/2)(1 + cos(theta) t))``, ``t = sin phi`` with ``phi ~
    sin^{d-1}`` on [0, pi]: eq (21) with its sum over ``k`` summed.  The float64 face averages
    over ``t`` with a Gauss-Jacobi rule, the mpmath face with verified quadrature.

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    cos_theta : array_like
        ``cos theta`` in ``[-1, 1]``; broadcasts with ``v`` and ``d``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 1``, ``cos_theta`` is
        outside ``[-1, 1]`` or not finite, the arguments do not broadcast, or ``dps < 15``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma 4.2, eq (21) (holds as printed).

    Examples
    --------
    >>> bool(abs(log_conformity_angle(0.7, 4, 0.0) - log_conformity_orf(0.7, 4)) < 1e-14)  # orthogonal rows
    True
    >>> bool(log_conformity_angle(0.7, 4, -0.5) < log_conformity_angle(0.7, 4, 0.5))
    True
    """
    return _angle_impl(ctx, v, d, cos_theta)


def simplex_cos(d: Any) -> Any:
    """``cos theta = -1/(d - 1)``: the angle between two rows of a simplex block.

    Parameters
    ----------
    d : array_like of int
        The dimension, ``>= 2``.

    Returns
    -------
    numpy.ndarray or float
        ``-1/(d - 1)`` (float64, the shape of ``d``).

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: eq (9) (the simplex block ``S``).

    Examples
    --------
    >>> float(simplex_cos(3))
    -0.5
    >>> simplex_cos([2, 5]).tolist()
    [-1.0, -0.25]
    """
    return -1 / (np.asarray(d, dtype=float) - 1)


@formula(check=_check_vd2)
def log_conformity_simrf(ctx: Any, v: Any, d: Any) -> Any:
    """log RF-conformity of SimRFs: :func:`log_conformity_angle` at ``cos theta = -1/(d-1)``.

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 2`` (the simplex needs two rows); broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 2``, the arguments do not
        broadcast, or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Thm 4.3, eq (24) (holds as printed; the double series
    is the ``t``-average expanded
    binomially, eq (66)).

    Examples
    --------
    >>> bool(abs(log_conformity_simrf(0.7, 4) - log_conformity_angle(0.7, 4, -1 / 3)) < 1e-15)
    True
    >>> bool(log_conformity_simrf(0.7, 4) < log_conformity_orf(0.7, 4))  # Cor 3.3: SimRF < ORF
    True
    """
    one = {"float64": 1.0, "mpmath": mpmath.mpf(1), "sympy": sympy.Integer(1)}.get(ctx.name, 1)  # exact -1/(d-1)
    return _angle_impl(ctx, v, d, -one / (d - 1))


def conformity_iid(v: Any, d: Any, *, backend: str = "float64", dps: int = 50) -> Any:
    """RF-conformity of IIDRFs, ``exp(v^2)``.

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 1``, the arguments do not
        broadcast, or ``dps < 15`` with ``backend="mpmath"``.
    ValueError
        Also (float64) where the value exceeds the float64 range; use the ``log_`` function or
        ``backend="mpmath"`` there.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma 4.1, eq (19).

    Examples
    --------
    >>> import math
    >>> abs(conformity_iid(0.7, 4) - math.exp(0.49)) < 1e-15
    True
    """
    return _exp(log_conformity_iid(v, d, backend=backend, dps=dps), backend, dps, "conformity_iid")


def conformity_orf(v: Any, d: Any, *, backend: str = "float64", dps: int = 50) -> Any:
    """RF-conformity of ORFs, ``1F1(d; d/2; v^2/2)``.

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 1``, the arguments do not
        broadcast, or ``dps < 15`` with ``backend="mpmath"``.
    ValueError
        Also (float64) where the value exceeds the float64 range; use the ``log_`` function or
        ``backend="mpmath"`` there.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Thm 4.3, eq (23).

    Examples
    --------
    >>> import mpmath
    >>> abs(conformity_orf(0.7, 4) - float(mpmath.hyp1f1(4, 2, 0.245))) < 1e-15
    True
    >>> r = conformity_orf(0.7, 4, backend="mpmath", dps=40)
    >>> with mpmath.workdps(40):
    ...     bool(abs(r - mpmath.hyp1f1(4, 2, mpmath.mpf(0.7) ** 2 / 2)) < mpmath.mpf(10) ** -38)
    True
    """
    return _exp(log_conformity_orf(v, d, backend=backend, dps=dps), backend, dps, "conformity_orf")


def conformity_simrf(v: Any, d: Any, *, backend: str = "float64", dps: int = 50) -> Any:
    """RF-conformity of SimRFs (``exp`` of :func:`log_conformity_simrf`).

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 2`` (the simplex needs two rows); broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 2``, the arguments do not
        broadcast, or ``dps < 15`` with ``backend="mpmath"``.
    ValueError
        Also (float64) where the value exceeds the float64 range; use the ``log_`` function or
        ``backend="mpmath"`` there.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Thm 4.3, eq (24).

    Examples
    --------
    >>> conformity_simrf(0.7, 4) < conformity_orf(0.7, 4) < conformity_iid(0.7, 4)  # Cor 3.3, Thm 4.3
    True
    >>> abs(conformity_simrf(0.0, 4) - 1.0) < 1e-15  # v = 0: every conformity is 1
    True
    """
    return _exp(log_conformity_simrf(v, d, backend=backend, dps=dps), backend, dps, "conformity_simrf")


def conformity_angle(v: Any, d: Any, cos_theta: Any, *, backend: str = "float64", dps: int = 50) -> Any:
    """RF-conformity at a fixed angle (``exp`` of :func:`log_conformity_angle`).

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    cos_theta : array_like
        ``cos theta`` in ``[-1, 1]``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`log_conformity_angle`.
    ValueError
        Also (float64) where the value exceeds the float64 range; use the ``log_`` function or
        ``backend="mpmath"`` there.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma 4.2, eq (21).

    Examples
    --------
    >>> abs(conformity_angle(0.7, 4, 0.0) / conformity_orf(0.7, 4) - 1) < 1e-14
    True
    """
    return _exp(log_conformity_angle(v, d, cos_theta, backend=backend, dps=dps), backend, dps, "conformity_angle")


def pair_conformity(v: Any, d: int, coupling: str, *, backend: str = "float64", dps: int = 50) -> Any:
    """``E[b_i b_j]`` of one coupled pair of a block -- the conformity of the coupling.

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    coupling : {"iid", "orf", "simrf"}
        The coupling of the rows (``exp(v^2)`` for iid).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``coupling`` is unknown, or as for :func:`conformity_iid`, :func:`conformity_orf`,
        :func:`conformity_simrf` (``d >= 2`` for SimRF).

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: eq (19), (23), (24).

    Examples
    --------
    >>> pair_conformity(0.7, 4, "orf") == conformity_orf(0.7, 4)
    True
    >>> import math
    >>> abs(pair_conformity(0.7, 4, "iid") - math.exp(0.49)) < 1e-15
    True
    """
    _check_coupling(coupling)
    fn = {"iid": conformity_iid, "orf": conformity_orf, "simrf": conformity_simrf}[coupling]
    return fn(v, d, backend=backend, dps=dps)


# ------------------------------------------------------------------------------ pdfs


_MODE_FORM_MIN = 32  # exponents n of w^n e^{-w^2/(2s)} from which the float64 face centres on the mode
_BINET = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


def _fp_binet(z: np.ndarray) -> np.ndarray:
    """``mu(z) = log Gamma(z) - (z - 1/2) log z + z - log(2 pi)/2`` for ``z >= 16`` (Stirling
    series to ``z^-13``, truncation below 1e-18)."""
    zi = 1 / np.asarray(z, dtype=float)
    out = np.zeros_like(zi)
    for c in reversed(_BINET):
        out = out * zi * zi + c
    return out * zi


def _fp_log1pmx_m_half_sq(x: np.ndarray) -> np.ndarray:
    """``log(1 + x) - x - x^2/2`` for ``x >= -1/2`` with relative accuracy (a sum of non-positive
    terms): ``-x^2/(2 + x) + 2 atanh-series(u)`` with ``u = x/(2 + x)`` for ``|x| <= 1/2``."""
    u = x / (2 + x)
    u2 = u * u
    acc = np.zeros_like(u)
    for k in range(41, 1, -2):  # 2 (u^3/3 + u^5/5 + ...) / u^3, |u| <= 1/3: 20 terms reach 1e-20
        acc = acc * u2 + 2 / k
    small = -x * x / (2 + x) + acc * u2 * u - x * x / 2
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x) <= 0.5, small, np.log1p(x) - x - x * x / 2)


def _fp_log_power_gauss(w: Any, n: Any, s: float, log_const: Any) -> np.ndarray:
    """``n log w - w^2/(2s) + K`` (a chi-type log-density) for ``n >= 32``, given ``log_const =
    n/2 log(n s) - n/2 + K`` (its value at the mode ``m = sqrt(n s)``, computed without
    cancellation by the caller).

    With ``x = w/m - 1``: ``n (log(1 + x) - x - x^2/2) + log_const`` -- a sum of terms of one
    sign, where the direct form sums terms of size ``n log n`` that cancel to ``O(log n)``
    (1e-12 relative error of the density at ``n ~ 2000``).  Below ``x = -1/2``
    ``log(w/m)`` replaces ``log(1 + x)``.
    """
    w = np.asarray(w, dtype=float)
    m = np.sqrt(n * s)
    x = (w - m) / m
    with np.errstate(divide="ignore", invalid="ignore"):
        far = np.log(w / m) - x - x * x / 2
        h = np.where(x < -0.5, far, _fp_log1pmx_m_half_sq(np.maximum(x, -0.5)))
    return n * h + log_const


def _log_pdf_iid(ctx: Any, w: Any, d: Any) -> Any:
    naive = _xlogy(ctx, d - 1, w) - w * w / 4 - (d - 1) * ctx.log(2) - ctx.gammaln(d / _two(ctx))
    if ctx.name != "float64":
        return naive
    n = np.asarray(d, dtype=float) - 1
    if not np.any(n >= _MODE_FORM_MIN):
        return naive
    z = np.maximum(np.asarray(d, dtype=float) / 2, 16.0)
    # n/2 log(2n) - n/2 - n log 2 - log Gamma(d/2) = (d - 1)/2 log1p(-1/d) + 1/2 - log(2 pi)/2 - mu(d/2)
    log_const = n / 2 * np.log1p(-1 / np.maximum(n + 1, 2)) + 0.5 - 0.5 * np.log(2 * np.pi) - _fp_binet(z)
    # (for w <= 1 every term of the direct sum is <= 0: nothing cancels there)
    use = (n >= _MODE_FORM_MIN) & (np.asarray(w) > 1)
    return np.where(use, _fp_log_power_gauss(w, np.maximum(n, 1), 2.0, log_const), naive)[()]


def _log_pdf_orf(ctx: Any, w: Any, d: Any) -> Any:
    naive = (2 * d - 1) * ctx.log(w) - w * w / 2 - (d - 1) * ctx.log(2) - ctx.gammaln(d)
    if ctx.name != "float64":
        return naive
    dd = np.asarray(d, dtype=float)
    n = 2 * dd - 1
    if not np.any(n >= _MODE_FORM_MIN):
        return naive
    # n/2 log n - n/2 - (d - 1) log 2 - log Gamma(d) = log(2)/2 + (d - 1/2) log1p(-1/(2d)) + 1/2
    #                                                  - log(2 pi)/2 - mu(d)
    log_const = (0.5 * np.log(2) + (dd - 0.5) * np.log1p(-1 / (2 * dd)) + 0.5 - 0.5 * np.log(2 * np.pi)
                 - _fp_binet(np.maximum(dd, 16.0)))
    use = (n >= _MODE_FORM_MIN) & (np.asarray(w) > 1)  # (as for _log_pdf_iid)
    return np.where(use, _fp_log_power_gauss(w, n, 1.0, log_const), naive)[()]


def _check_w_d(w: Any, d: Any) -> None:
    _nonneg(w, "w")
    _dims(d)


@formula(check=_check_w_d)
def log_pdf_wij_iid(ctx: Any, w: Any, d: Any) -> Any:
    """log pdf of ``w_ij = |w_i + w_j|`` for iid Gaussian rows (``sqrt(2) chi_d``).

    ``(d - 1) log w - w^2/4 - (d - 1) log 2 - log Gamma(d/2)``; ``-inf`` at ``w = 0`` for ``d >=
    2``.  Holds values far below the float64 range of :func:`pdf_wij_iid`; from ``d = 33`` the
    float64 face centres the exponent on the mode ``sqrt(2(d - 1))`` (the direct sum cancels
    terms of size ``d log d``).

    Parameters
    ----------
    w : array_like
        The norm, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``w`` is negative or not finite, ``d`` is not an integer ``>= 1``, the arguments do
        not broadcast, or ``dps < 15``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma 4.1, eq (18) (holds as printed).

    Examples
    --------
    >>> import math
    >>> abs(float(log_pdf_wij_iid(1.3, 1)) - (-1.3**2 / 4 - math.log(math.pi) / 2)) < 1e-15  # |N(0, 2)|
    True
    >>> import scipy.stats as st
    >>> ref = st.chi(64).logpdf(13.0 / 2**0.5) - math.log(2) / 2  # d = 64: the mode-centred form
    >>> bool(abs(float(log_pdf_wij_iid(13.0, 64)) - ref) < 1e-12)
    True
    """
    return _log_pdf_iid(ctx, w, d)


@formula(check=_check_w_d)
def pdf_wij_iid(ctx: Any, w: Any, d: Any) -> Any:
    """pdf of ``w_ij = |w_i + w_j|`` for iid Gaussian rows: ``sqrt(2) chi_d``.

    ``exp`` of :func:`log_pdf_wij_iid`; values below the smallest normal float64 (2.2e-308) lose
    digits and underflow to 0 in the float64 face (use :func:`log_pdf_wij_iid` there).

    Parameters
    ----------
    w : array_like
        The norm, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`log_pdf_wij_iid`.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma 4.1, eq (18) (holds as printed).

    Examples
    --------
    >>> import numpy as np, scipy.integrate as si
    >>> abs(si.quad(lambda w: pdf_wij_iid(w, 3), 0, np.inf)[0] - 1) < 1e-12  # a density
    True
    """
    return ctx.exp(_log_pdf_iid(ctx, w, d))


def _xlogy(ctx: Any, x: Any, y: Any) -> Any:
    """``x log y`` with ``0 log 0 = 0`` (the ``w^0`` of ``d = 1`` at ``w = 0``)."""
    if ctx.name == "float64":
        return sc.xlogy(x, y)
    if ctx.name == "mpmath":
        return x * mpmath.log(y) if x else mpmath.mpf(0)
    if ctx.name == "arb":  # (x: an exact ball, d - 1)
        return x * ctx.log(y) if x else x * 0
    return x * sympy.log(y)


@formula(check=_check_w_d)
def log_pdf_wij_orf(ctx: Any, w: Any, d: Any) -> Any:
    """log pdf of ``w_ij`` for orthogonal rows (``chi_{2d}``).

    ``(2d - 1) log w - w^2/2 - (d - 1) log 2 - log Gamma(d)``; ``-inf`` at ``w = 0``.  Holds
    values far below the float64 range of :func:`pdf_wij_orf`; from ``d = 17`` the float64 face
    centres the exponent on the mode ``sqrt(2d - 1)``.

    Parameters
    ----------
    w : array_like
        The norm, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`log_pdf_wij_iid`.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: appendix A.5, eq (58) (eq (20) at ``theta = pi/2``;
    holds as printed).

    Examples
    --------
    >>> import scipy.stats as st
    >>> bool(abs(float(log_pdf_wij_orf(1.3, 3)) - st.chi(6).logpdf(1.3)) < 1e-14)
    True
    >>> float(log_pdf_wij_orf(0.0, 3))
    -inf
    """
    return _log_pdf_orf(ctx, w, d)


@formula(check=_check_w_d)
def pdf_wij_orf(ctx: Any, w: Any, d: Any) -> Any:
    """pdf of ``w_ij`` for orthogonal rows: ``chi_{2d}``, ``w^{2d-1} e^{-w^2/2} / (2^{d-1} Gamma(d))``.

    ``exp`` of :func:`log_pdf_wij_orf`; values below the smallest normal float64 (2.2e-308) lose
    digits and underflow to 0 in the float64 face (use :func:`log_pdf_wij_orf` there).

    Parameters
    ----------
    w : array_like
        The norm, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`log_pdf_wij_iid`.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: appendix A.5, eq (58) (eq (20) at ``theta = pi/2``;
    holds as printed).

    Examples
    --------
    >>> import scipy.stats as st
    >>> bool(abs(float(pdf_wij_orf(1.3, 3)) / st.chi(6).pdf(1.3) - 1) < 1e-14)
    True
    """
    return ctx.exp(_log_pdf_orf(ctx, w, d))


def _log_pdf_angle_impl(ctx: Any, w: Any, d: Any, c: Any) -> Any:
    # p(w) = w^{2d-1} 2^{1-d} / (Gamma(d/2)^2) * int_0^1 t^{d-1}(1-t^2)^{-1/2} e^{-w^2/(2(1+ct))}(1+ct)^{-d} dt
    #      = chi_{2d}(w) * E_t[ e^{-w^2 c t / (2(1+ct))} (1+ct)^{-d} ]   (t-average as for rho)
    # since e^{-w^2/(2(1+ct))} = e^{-w^2/2} e^{w^2 c t/(2(1+ct))}.
    if ctx.name == "float64":

        def lg(t: Any, omt: Any, dv: float, ww: Any, cc: Any) -> Any:
            one_ct = _fp_one_plus_ct(cc, t, omt)
            return ww * ww * cc * t / (2 * one_ct) - dv * _fp_log_one_plus_ct(cc, t, omt)

        with np.errstate(divide="ignore", invalid="ignore"):
            return _log_pdf_orf(ctx, w, d) + _fp_t_average_log(np.asarray(d), lg, w, c)
    if ctx.name == "mpmath":
        d = int(d)
        if c == -1:  # w_ij = |R_1 - R_2|, R_i iid chi_d: 2 int chi_d(r) chi_d(r + w) dr (smooth)
            lc = (1 - mpmath.mpf(d) / 2) * mpmath.log(2) - mpmath.loggamma(mpmath.mpf(d) / 2)

            def chi2(r: Any) -> Any:
                return mpmath.exp(2 * lc + (d - 1) * mpmath.log(r * (r + w)) - (r * r + (r + w) ** 2) / 2)

            mode = mpmath.sqrt(d)
            pts = [mpmath.mpf(0)] + [mode + k for k in (-8, -4, -2, -1, 0, 1, 2, 4, 8) if mode + k > 0]
            return mpmath.log(2 * _mp_quad_verified(chi2, [*pts, mpmath.inf],
                                                    f"pdf_wij_angle (d = {d}, cos_theta = -1)"))

        def g(t: Any, omt: Any) -> Any:
            one_ct = 1 + c * t if c * t >= -0.5 else (1 + c) - c * omt  # (no cancellation near c t = -1)
            return mpmath.exp(w * w * c * t / (2 * one_ct)) * one_ct ** (-d)

        # for c < 0 the integrand peaks at t = 1 (phi = pi/2), in phi with a width ~ sqrt(2(1 + c)/|c|)
        # or, where w^2 > 1 + c (the exponential vanishes at t = 1), ~ w / sqrt(d); (1 + c > 0 here)
        scale = max(mpmath.sqrt(2 * (1 + c) / -c), w / mpmath.sqrt(d)) if c < 0 else None
        return _log_pdf_orf(ctx, w, d) + mpmath.log(_mp_t_average(d, g, scale))
    if ctx.name == "arb":
        di, wb, cb = _ab_int(d), _ab(w), _ab(c)
        if cb == -1:
            return _as_ball(_ab_pdf_antipodal(wb, di).log())

        def ga(t: Any, omt: Any) -> Any:
            one_ct = _ab_one_plus_ct(cb, t, omt)
            return (wb * wb * cb * t / (2 * one_ct)).exp() / one_ct**di

        return _log_pdf_orf(ctx, w, d) + _as_ball(_ab_t_average(di, ga).log())
    return sympy.log(_pdf_angle_sym(w, d, c))


def _pdf_angle_sym(w: Any, d: Any, c: Any) -> Any:
    return pdf_wij_orf.impl(SYM, w, d) * _sym_t_average(
        d, lambda t: sympy.exp(w * w * c * t / (2 * (1 + c * t))) * (1 + c * t) ** (-d)
    )


def _check_pdf_angle(w: Any, d: Any, cos_theta: Any) -> None:
    _check_w_d(w, d)
    _cos(cos_theta)


@formula(check=_check_pdf_angle)
def log_pdf_wij_angle(ctx: Any, w: Any, d: Any, cos_theta: Any) -> Any:
    """log pdf of ``w_ij = |w_i + w_j|`` for marginally Gaussian rows at a fixed angle.

    ``log chi_{2d}(w) + log E_t[exp(w^2 c t / (2(1 + c t))) (1 + c t)^{-d}]``, ``c = cos
    theta`` (see :func:`pdf_wij_angle`), holding values far below the float64 range.  The
    float64 face is accurate (1e-12) for ``|cos theta| <= 1/2``; the mpmath face (verified
    quadrature; the law of ``|R_1 - R_2|`` of two ``chi_d`` norms at ``cos theta = -1``)
    everywhere.

    Parameters
    ----------
    w : array_like
        The norm, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    cos_theta : array_like
        ``cos theta`` in ``[-1, 1]``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``w`` is negative or not finite, ``d`` is not an integer ``>= 1``, ``cos_theta`` is
        outside ``[-1, 1]`` or not finite, the arguments do not broadcast, or ``dps < 15``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma 4.2, eq (20) (holds as printed).

    Examples
    --------
    >>> bool(abs(log_pdf_wij_angle(1.3, 3, 0.0) - log_pdf_wij_orf(1.3, 3)) < 1e-14)  # orthogonal rows
    True
    """
    return _log_pdf_angle_impl(ctx, w, d, cos_theta)


@formula(check=_check_pdf_angle)
def pdf_wij_angle(ctx: Any, w: Any, d: Any, cos_theta: Any) -> Any:
    """pdf of ``w_ij = |w_i + w_j|`` for marginally Gaussian rows at a fixed angle.

    ``chi_{2d}(w) E_t[exp(w^2 c t / (2(1 + c t))) (1 + c t)^{-d}]``, ``c = cos theta``, ``t =
    sin phi``, ``phi ~ sin^{d-1}``: eq (20) after ``phi -> phi/2``.  For ``|cos theta| = 1`` the
    law has an atom or a singular density at the ends; the float64 face is accurate (1e-12) for
    ``|cos theta| <= 1/2``; use mpmath otherwise (a verified quadrature, graded towards the peak
    at ``t = 1`` for ``cos theta < 0``; at ``cos theta = -1`` the law of ``|R_1 - R_2|``, ``R_i``
    iid ``chi_d``).  Values below the smallest normal float64 underflow to 0 in the float64
    face (use :func:`log_pdf_wij_angle` there).

    Parameters
    ----------
    w : array_like
        The norm, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    cos_theta : array_like
        ``cos theta`` in ``[-1, 1]``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        As for :func:`log_pdf_wij_angle`.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma 4.2, eq (20) (holds as printed).

    Examples
    --------
    >>> import numpy as np, scipy.integrate as si
    >>> abs(si.quad(lambda w: pdf_wij_angle(w, 3, 0.3), 0, np.inf)[0] - 1) < 1e-10  # a density
    True
    >>> bool(abs(pdf_wij_angle(1.3, 3, 0.0) / pdf_wij_orf(1.3, 3) - 1) < 1e-13)
    True
    """
    if ctx.name == "sympy":
        return _pdf_angle_sym(w, d, cos_theta)
    return ctx.exp(_log_pdf_angle_impl(ctx, w, d, cos_theta))


# -------------------------------------------------------------------- MSE (Thm 3.2, eq 11)


def _n_coupled_pairs(m: int, d: int, coupling: str) -> int:
    """``sum_k b_k (b_k - 1)`` over independent blocks of ``min(d, remaining)`` rows."""
    if coupling == "iid":
        return 0
    b = [d] * (m // d) + ([m % d] if m % d else [])
    return sum(x * (x - 1) for x in b)


def prf_mse_from_conformity(rho: Any, v: Any, m: Any, sq_norms: Any) -> Any:
    """Eq (11) as a function of the conformity, in float64.

    ``e^{-2(|x|^2+|y|^2)}/m ((e^{2v^2} - e^{v^2}) + (m-1)(rho - e^{v^2}))``; where
    ``e^{2v^2}`` overflows (or the prefactor underflows) each term is exponentiated once in log
    space.  It subtracts nearly equal numbers for ``rho ~ e^{v^2}``: use :func:`prf_mse` for a
    cancellation-free value.

    Parameters
    ----------
    rho : array_like
        The RF-conformity of the whole ensemble (eq (10)).
    v : array_like
        ``|x + y|``, finite, ``>= 0``.
    m : array_like of int
        The number of features, ``>= 1``.
    sq_norms : array_like
        ``|x|^2 + |y|^2``, finite, ``>= 0``.  All arguments broadcast together.

    Returns
    -------
    numpy.ndarray or float
        The MSE of the PRF estimator of the Gaussian kernel.

    Raises
    ------
    ValueError
        If ``v`` or ``sq_norms`` is negative or not finite, or ``m`` is not an integer ``>= 1``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Thm 3.2, eq (11) (holds as printed, with ``rho`` of the
    whole ensemble, eq (10)).

    Examples
    --------
    >>> import math
    >>> iid = prf_mse_from_conformity(math.exp(0.49), 0.7, 4, 0.3)  # rho = e^(v^2): iid features
    >>> bool(abs(iid / prf_mse(0.7, 4, 4, 0.3, "iid") - 1) < 1e-14)
    True
    """
    _nonneg(v, "v")
    _nonneg(sq_norms, "sq_norms")
    _check_m(m)
    v2, sq, rho_a, m_a = np.broadcast_arrays(np.asarray(v, dtype=float) ** 2, np.asarray(sq_norms, dtype=float),
                                             np.asarray(rho, dtype=float), np.asarray(m, dtype=float))
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(-2 * sq) / m_a * (np.exp(v2) * np.expm1(v2) + (m_a - 1) * (rho_a - np.exp(v2)))
    redo = ~np.isfinite(out) | (out == 0)
    if np.any(redo):  # e^{2 v^2} overflows (or e^{-2 sq} underflows): each term exponentiated once
        v2, sq, rho_a, m_a = v2[redo], sq[redo], rho_a[redo], m_a[redo]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            shift = -2 * sq - np.log(m_a)
            t1 = np.exp(2 * v2 + np.log(-np.expm1(-v2)) + shift)  # e^{v^2} expm1(v^2) e^{-2 sq} / m
            # (m - 1)(rho - e^{v^2}) = (m - 1) e^{v^2} (rho e^{-v^2} - 1), with rho e^{-v^2} not underflowing
            gap = np.sign(rho_a) * np.exp(np.log(np.abs(rho_a)) - v2) - 1
            t2 = np.sign(gap) * np.exp(np.log(m_a - 1) + v2 + np.log(np.abs(gap)) + shift)
            out = np.array(out, dtype=float)
            out[redo] = t1 + np.where(m_a > 1, t2, 0.0)
    return out[()]


def _gap_orf_terms(ctx: Any, v: Any, d: Any) -> Any:
    """``e^{v^2} - rho_ORF = sum_k v^{2k}/k! (1 - prod_{j<k} (d+j)/(d+2j))`` (all terms >= 0)."""
    if ctx.name == "float64":
        v2 = np.asarray(v, dtype=float) ** 2
        dd = np.asarray(d, dtype=float)
        v2, dd = np.broadcast_arrays(v2, dd)
        state = {"L": np.zeros(v2.shape)}

        def factor(k: int) -> Any:
            if k >= 1:
                state["L"] = state["L"] + np.log1p(-(k - 1) / (dd + 2 * (k - 1)))
            return -np.expm1(state["L"])

        out = _fp_pos_series(v2, lambda k: 1.0 / (k + 1), factor, min_terms=3)
        # below v = 1e-140 (v^2 may underflow) the first term alone, v^4 / (2 (d + 2)), to ~1e-280
        with np.errstate(divide="ignore"):
            lead = 4 * np.log(np.abs(np.asarray(v, dtype=float))) - np.log(2 * (dd + 2))
        return np.where(np.asarray(v) < _TINY_V, lead, out)[()]
    if ctx.name == "mpmath":  # the same positive series (e^{v^2} - 1F1 would cancel ~ v^4 / (2 (d + 2)))
        v2 = v * v
        if not v2:
            return mpmath.ninf
        with mpmath.extradps(10):
            s, term, lp, k = mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(0), 0
            while True:
                k += 1
                term = term * v2 / k
                lp += mpmath.log1p(-mpmath.mpf(k - 1) / (d + 2 * (k - 1)))  # log prod_{j<k} (d+j)/(d+2j)
                s += term * -mpmath.expm1(lp)
                if k >= 3 and k > v2 and term <= mpmath.eps * s:
                    return mpmath.log(s)
    if ctx.name == "arb":  # the same positive series on balls, with a bound on its tail
        vb = _ab(v)
        if vb.is_zero():
            return ctx.log(_as_ball(vb))
        return ctx.log(_as_ball(_ab_orf_gap(vb * vb, _ab_int(d))))
    return sympy.log(sympy.exp(v * v) - sympy.hyper([d], [d / sympy.Integer(2)], v * v / 2))


def _gap_simrf_terms(ctx: Any, v: Any, d: Any) -> Any:
    """``rho_ORF - rho_SimRF = E_t sum_j T_j(v^2/2) (1 - (1 + c t)^j)``, ``T_j`` the terms of
    ``1F1(d; d/2; .)``, ``c = -1/(d-1)`` (all terms >= 0)."""
    if ctx.name == "float64":

        def lg(t: Any, omt: Any, dv: float, vv: Any) -> Any:
            c = -1.0 / (dv - 1)
            u = np.broadcast_to(vv * vv / 2, np.broadcast_shapes(np.shape(vv), np.shape(t)))
            lt = np.broadcast_to(_fp_log_one_plus_ct(c, t, omt), u.shape)
            return _fp_pos_series(
                u, lambda k: (dv + k) / ((dv / 2 + k) * (k + 1)), lambda k: -np.expm1(k * lt), min_terms=3
            )

        vv, dd = np.broadcast_arrays(np.asarray(v, dtype=float), np.asarray(d, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _fp_t_average_log(np.asarray(d), lg, v)
            # below v = 1e-140 the first term alone, E_t[2 u (-c t)] = v^2 E[t]/(d - 1), with
            # E[t] = Gamma((d+1)/2)^2 / (Gamma(d/2) Gamma(d/2 + 1)) (also v = 0: -inf, not NaN)
            log_et = 2 * sc.gammaln((dd + 1) / 2) - sc.gammaln(dd / 2) - sc.gammaln(dd / 2 + 1)
            lead = 2 * np.log(vv) + log_et - np.log(dd - 1)
        return np.where(vv < _TINY_V, lead, out)[()]
    if ctx.name == "mpmath":
        d = int(d)
        c = -mpmath.mpf(1) / (d - 1)
        u = v * v / 2
        b = mpmath.mpf(d) / 2
        if not u:
            return mpmath.ninf

        def g(t: Any, omt: Any) -> Any:  # (1F1 - 1 at both ends: the difference keeps digits at small u)
            one_ct = 1 + c * t if c * t >= -0.5 else (1 + c) - c * omt
            return _mp_hyp1f1_m1(d, b, u) - _mp_hyp1f1_m1(d, b, u * one_ct)

        f = _mp_t_average(d, g)
        return mpmath.log(f)
    if ctx.name == "arb":
        di, vb = _ab_int(d), _ab(v)
        if vb.is_zero():
            return ctx.log(_as_ball(vb))
        ca, ua, ba = -1 / _ab(di - 1), vb * vb / 2, _ab(di) / 2

        def ga(t: Any, omt: Any) -> Any:  # (1F1 - 1 at both ends, as the mpmath face)
            return _ab_hyp1f1_m1(di, ba, ua) - _ab_hyp1f1_m1(di, ba, ua * _ab_one_plus_ct(ca, t, omt))

        return ctx.log(_as_ball(_ab_t_average(di, ga)))
    c = -sympy.Integer(1) / (d - 1)
    return sympy.log(
        _sym_t_average(
            d,
            lambda t: (
                sympy.hyper([d], [d / sympy.Integer(2)], v * v / 2)
                - sympy.hyper([d], [d / sympy.Integer(2)], v * v / 2 * (1 + c * t))
            ),
        )
    )


@formula(check=_check_vd)
def log_prf_orthogonality_gap(ctx: Any, v: Any, d: Any) -> Any:
    """``log(rho_IID - rho_ORF) = log(e^{v^2} - 1F1(d; d/2; v^2/2))`` without cancellation.

    Summed as the positive series ``sum_k v^{2k}/k! (1 - prod_{j<k} (d+j)/(d+2j))``; ``-inf``
    at ``v = 0``.  The MSE gap of Cor 4.4 is ``e^{-2(|x|^2+|y|^2)} (m-1)/m`` times it
    (:func:`prf_orthogonality_gap`).

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``; broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 1``, the arguments do not
        broadcast, or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Cor 4.4, eq (68)-(69) (eq (25) as printed drops the
    ``2^k`` of eq (23); see claim
    ``simrf.cor4.4``).

    Examples
    --------
    >>> import mpmath
    >>> with mpmath.workdps(50):  # the difference, at 50 digits (here it cancels little)
    ...     ref = mpmath.log(mpmath.exp(0.49) - mpmath.hyp1f1(4, 2, mpmath.mpf(0.7) ** 2 / 2))
    >>> abs(float(log_prf_orthogonality_gap(0.7, 4)) - float(ref)) < 1e-14
    True
    >>> with mpmath.workdps(60):  # v = 1e-5: the difference cancels 10 digits
    ...     ref = mpmath.log(mpmath.exp(mpmath.mpf(1e-5) ** 2) - mpmath.hyp1f1(4, 2, mpmath.mpf(1e-5) ** 2 / 2))
    >>> abs(float(log_prf_orthogonality_gap(1e-5, 4)) - float(ref)) < 1e-13
    True
    """
    return _gap_orf_terms(ctx, v, d)


def prf_orthogonality_gap(v: Any, d: Any, m: Any, sq_norms: Any) -> Any:
    """PRF orthogonality gap ``MSE_IID - MSE_ORF = e^{-2(|x|^2+|y|^2)} (m-1)/m (e^{v^2} - rho_ORF)``, ``m <= d``.

    Float64, without cancellation (from :func:`log_prf_orthogonality_gap`).

    Parameters
    ----------
    v : array_like
        ``|x + y|``, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    m : int or array_like of int
        The number of features, ``1 <= m <= d`` (one orthogonal block).
    sq_norms : array_like
        ``|x|^2 + |y|^2``, finite, ``>= 0``.  All arguments broadcast together.

    Returns
    -------
    numpy.ndarray or float
        The gap (``>= 0``).

    Raises
    ------
    ValueError
        If ``m > d``, ``m`` or ``d`` is not an integer ``>= 1``, ``v`` or ``sq_norms`` is negative
        or not finite, or the arguments do not broadcast.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Cor 4.4, corrected eq (25) = eq (68)/(69).

    Examples
    --------
    >>> gap = prf_orthogonality_gap(0.7, 4, 4, 0.3)
    >>> diff = prf_mse(0.7, 4, 4, 0.3, "iid") - prf_mse(0.7, 4, 4, 0.3, "orf")
    >>> bool(abs(gap / diff - 1) < 1e-13)
    True
    >>> float(prf_orthogonality_gap(0.7, 4, 1, 0.3))  # one feature: nothing to couple
    0.0
    """
    _check_m(m)
    _check_m_le_d(m, d, "Cor 4.4")
    _nonneg(sq_norms, "sq_norms")
    validate.broadcast_shape({"v": v, "d": d, "m": m, "sq_norms": sq_norms}, "prf_orthogonality_gap")
    lg = log_prf_orthogonality_gap(v, d)
    with np.errstate(under="ignore"):
        return (np.asarray(m) - 1) / np.asarray(m) * np.exp(lg - 2 * np.asarray(sq_norms, dtype=float))


@formula(check=_check_vd2)
def orf_simrf_conformity_gap(ctx: Any, v: Any, d: Any) -> Any:
    """log of ``rho_ORF - rho_SimRF > 0``, summed without cancellation (``-inf`` at ``v = 0``).

    ``rho_ORF - rho_SimRF = E_t sum_j T_j(v^2/2) (1 - (1 + c t)^j)``, ``T_j`` the terms of
    ``1F1(d; d/2; .)`` and ``c = -1/(d-1)``: every term is positive.

    Parameters
    ----------
    v : array_like
        ``|x + y|`` (the PRF argument), finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 2`` (the simplex needs two rows); broadcasts with ``v``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` is negative or not finite, ``d`` is not an integer ``>= 2``, the arguments do not
        broadcast, or ``dps < 15`` with ``backend="mpmath"``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Cor 3.3 and eq (22) (every term of the ``t``-average is
    smaller for ``cos theta < 0``).

    Examples
    --------
    >>> import math
    >>> ref = math.log(conformity_orf(0.7, 4) - conformity_simrf(0.7, 4))  # (cancels ~1 digit here)
    >>> abs(float(orf_simrf_conformity_gap(0.7, 4)) - ref) < 1e-13
    True
    >>> float(orf_simrf_conformity_gap(0.0, 4))
    -inf
    """
    return _gap_simrf_terms(ctx, v, d)


def prf_mse(
    v: Any,
    d: int,
    m: int,
    sq_norms: Any,
    coupling: str,
    *,
    backend: str = "float64",
    dps: int = 50,
    refine: bool = True,
) -> Any:
    """MSE of the PRF estimator of the Gaussian kernel with ``m`` features (eq (11)).

    ``e^{-2(|x|^2+|y|^2)}/m (e^{v^2} expm1(v^2) - (P/m) (e^{v^2} - rho_c))`` with ``P = sum_k
    b_k (b_k - 1)`` over independent blocks of ``min(d, remaining)`` rows and ``rho_c`` the
    conformity of a coupled pair; the bracket is assembled from the cancellation-free gaps.
    ``m > d`` uses independent blocks.  The float64 face recomputes points whose bracket
    cancels by more than a factor 50 (SimRF, small ``v``, ``m ~ d``) in mpmath, so that the
    result is good to 1e-12; the mpmath face raises its working precision with the
    cancellation, so that it is good to ``dps`` digits.

    Parameters
    ----------
    v : array_like
        ``|x + y|``, finite, ``>= 0`` (scalar for the mpmath face).
    d : int
        The dimension, ``>= 1`` (``>= 2`` for SimRF).
    m : int
        The number of features, ``>= 1``.
    sq_norms : array_like
        ``|x|^2 + |y|^2``, finite, ``>= 0``; broadcasts with ``v`` (scalar for the mpmath face).
    coupling : {"iid", "orf", "simrf"}
        The coupling within a block.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.
    refine : bool, optional
        Recompute ill-conditioned float64 points in mpmath (default True); ``False`` leaves a
        relative error up to ~50-1000 x 1e-14 (for plots).

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        The MSE: float64 broadcast over ``v`` and ``sq_norms``, or an mpmath number.

    Raises
    ------
    ValueError
        If ``coupling`` is unknown, ``d`` or ``m`` is not a valid integer, ``v`` or ``sq_norms``
        is negative or not finite, the shapes do not broadcast, the mpmath face gets arrays, or
        (float64) the MSE exceeds the float64 range.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Thm 3.2, eq (11) with eq (19), (23), (24).

    Examples
    --------
    >>> import math
    >>> iid = prf_mse(0.7, 4, 4, 0.3, "iid")  # e^(-2 sq) e^(v^2) expm1(v^2) / m
    >>> abs(iid - math.exp(-0.6) * math.exp(0.49) * math.expm1(0.49) / 4) < 1e-16
    True
    >>> prf_mse(0.7, 4, 4, 0.3, "simrf") < prf_mse(0.7, 4, 4, 0.3, "orf") < iid  # Thm 4.3
    True
    >>> rho = conformity_simrf(0.7, 4)  # eq (11) from the conformity, m = d: one block
    >>> bool(abs(prf_mse_from_conformity(rho, 0.7, 4, 0.3) / prf_mse(0.7, 4, 4, 0.3, "simrf") - 1) < 1e-12)
    True
    """
    _check_coupling(coupling)
    validate.positive_int(d, "d", 2 if coupling == "simrf" else 1)
    validate.positive_int(m, "m")
    _nonneg(v, "v")
    _nonneg(sq_norms, "sq_norms")
    validate.broadcast_shape({"v": v, "sq_norms": sq_norms}, "prf_mse")
    npairs = _n_coupled_pairs(m, d, coupling)
    if backend == "mpmath":
        if np.ndim(v) or np.ndim(sq_norms):
            raise ValueError("the mpmath face of prf_mse takes scalar v and sq_norms")
        with mpmath.workdps(dps + 10):
            vv = mpmath.mpf(float(v)) if not isinstance(v, mpmath.mpf) else v
            bracket = _mp_prf_bracket(vv, d, m, npairs, coupling, dps + 5)
            out = mpmath.exp(-2 * mpmath.mpf(sq_norms)) / m * bracket
        with mpmath.workdps(dps):
            return +out
    v = np.asarray(v, dtype=float)
    v2 = v * v
    # log space: first = e^{v^2} expm1(v^2) and the gaps may overflow before e^{-2 sq_norms} comes in
    with np.errstate(divide="ignore", invalid="ignore"):
        log_first = 2 * v2 + np.log(-np.expm1(-v2))
        if coupling == "iid" or npairs == 0:
            gap = 0.0  # gaps relative to first
        elif coupling == "orf":
            gap = np.exp(log_prf_orthogonality_gap(v, d) - log_first)
        else:
            gap = np.exp(log_prf_orthogonality_gap(v, d) - log_first) + np.exp(
                orf_simrf_conformity_gap(v, d) - log_first
            )
        rel = np.array(np.broadcast_to(1 - npairs / m * gap, np.shape(v2)), dtype=float, ndmin=1)  # bracket/first
        # cancellation when (P/m) gap ~ first (SimRF, small v, m = d): recompute those in mpmath
        cond = 1 / rel
        lf = np.broadcast_to(np.array(log_first, ndmin=1), rel.shape)
        log_bracket = np.where(np.isneginf(lf), -np.inf, lf + np.log(rel))
    vf = np.broadcast_to(np.array(v, ndmin=1), rel.shape)
    for i in np.flatnonzero(~((cond > 0) & (cond <= 50)) & (vf > 0) & refine):  # 50 eps-losses stay below 1e-12
        # bracket / v^2 = c1 + c2 v^2 + ... is constant to ~1e-24 below v = 1e-15: scale from there
        vi = float(vf[i])
        vr = max(vi, 1e-15)
        with mpmath.workdps(30):
            lb = mpmath.log(_mp_prf_bracket(mpmath.mpf(vr), d, m, npairs, coupling, 20))
            log_bracket[i] = float(lb + 2 * (mpmath.log(vi) - mpmath.log(vr)))
    log_out = log_bracket.reshape(np.shape(v2)) - 2 * np.asarray(sq_norms, dtype=float) - math.log(m)
    return _exp(log_out, "float64", dps, "prf_mse", "backend='mpmath'")


def _mp_prf_bracket(v: Any, d: int, m: int, npairs: int, coupling: str, dps: int) -> Any:
    """mpmath ``e^{v^2} expm1(v^2) - (P/m)(e^{v^2} - rho_c)`` good to ``dps`` digits (0 at ``v = 0``).

    ``e^{v^2} - rho_c`` cancels (~ v^2 or v^4) and the bracket cancels again for SimRF, so the
    working precision grows with the conditioning ``(first + (P/m)(e^{v^2} + rho_c)) / bracket``
    (recomputed until it leaves ``dps`` digits).
    """
    if not v:
        return mpmath.mpf(0)
    q = mpmath.mpf(npairs) / m
    work = dps + 15 + max(0, int(-mpmath.log10(v * v))) + int(math.log10(1 + npairs))
    while work <= 20_000:
        with mpmath.workdps(work):
            v2 = v * v
            e = mpmath.exp(v2)
            first = e * mpmath.expm1(v2)
            rho = pair_conformity(v, d, coupling, backend="mpmath", dps=work) if npairs else e
            bracket = first - q * (e - rho)
            if bracket > 0:
                need = dps + 5 + int(mpmath.log10((first + q * (e + rho)) / bracket)) + 1
                if need <= work:
                    return bracket
            else:
                need = 2 * work
        work = max(need + 5, work + 10)
    raise ValueError(f"prf_mse: bracket not resolved at 20000 digits for v = {v}")


# ------------------------------------------------------------- sec 5.1 small-v expansion


_S_COEF = [float((sympy.Rational(1, 2**n) - 2) * sympy.bernoulli(n + 1) / (n * (n + 1))) for n in range(1, 24, 2)]


def _fp_log_gamma_half_ratio(z: np.ndarray) -> np.ndarray:
    """``S(z) = log(Gamma(z + 1/2) / (Gamma(z) sqrt(z)))`` accurate to ~eps relative.

    Asymptotic series (Bernoulli numbers) at ``z + N >= 24`` and the exact recurrence
    ``S(z) = S(z+N) - sum_j [log1p(1/(2(z+j))) - log1p(1/(z+j))/2]``.
    """
    z = np.asarray(z, dtype=float)
    n_up = np.maximum(0, np.ceil(24 - z)).astype(int)
    zz = z + n_up
    s = np.zeros_like(zz)
    for i, c in enumerate(_S_COEF):
        s = s + c / zz ** (2 * i + 1)
    for j in range(int(n_up.max()) if n_up.size else 0):
        act = j < n_up
        zj = z + j
        s = s - np.where(act, np.log1p(0.5 / zj) - 0.5 * np.log1p(1.0 / zj), 0.0)
    return s


def _log_half_ratio(ctx: Any, z: Any) -> Any:
    if ctx.name == "float64":
        return _fp_log_gamma_half_ratio(z)
    if ctx.name == "sympy":
        return sympy.log(sympy.gamma(z + sympy.Rational(1, 2)) / (sympy.gamma(z) * sympy.sqrt(z)))
    return ctx.gammaln(z + 0.5) - ctx.gammaln(z) - ctx.log(z) / 2  # (mpmath, arb; 0.5 is exact)


@formula(check=lambda d, m: (_dims(d, 2), _check_m(m), _check_m_le_d(m, d, "small_v_mse_coefficient")) and None)
def small_v_mse_coefficient(ctx: Any, d: Any, m: Any) -> Any:
    """Coefficient of ``v^2`` in ``m e^{2(|x|^2+|y|^2)} MSE_SimRF`` for ``m <= d``.

    ``1 - (m-1) 2 Gamma((d+1)/2)^2 / (Gamma(d/2)^2 d (d-1))`` (from ``E w_ij^2 = 2d - 2(E
    r)^2/(d-1)``); ``m = d`` is the printed prefactor :func:`small_v_prefactor_simrf`, ``m = 1``
    gives 1 (a single feature).

    Parameters
    ----------
    d : int or array_like of int
        The dimension, ``>= 2``.
    m : int or array_like of int
        The number of features, ``1 <= m <= d``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``d < 2``, ``m < 1``, ``m > d``, either is not an integer, or ``dps < 15``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: sec 5.1.

    Examples
    --------
    >>> float(small_v_mse_coefficient(64, 1))
    1.0
    >>> bool(small_v_mse_coefficient(64, 64) == small_v_prefactor_simrf(64))
    True
    """
    # 2 Gamma((d+1)/2)^2 / (d Gamma(d/2)^2) = exp(2 S(d/2)); the m = d value is -expm1(2S)
    return (_frac(ctx, m - 1, d - 1) * (-ctx.expm1(2 * _log_half_ratio(ctx, d / _two(ctx))))
            + _frac(ctx, d - m, d - 1))


@formula(check=lambda d: _dims(d, 2))
def small_v_prefactor_simrf(ctx: Any, d: Any) -> Any:
    """The ``v^2`` prefactor of ``MSE_SimRF`` in sec 5.1 (``m = d``).

    ``1 - sqrt(pi) Gamma(d+1) Gamma(d/2+1/2) / (Gamma(d/2) Gamma(d/2+1)^2 2^d) = -expm1(2
    S(d/2))``, ``S(z) = log(Gamma(z + 1/2) / (Gamma(z) sqrt(z)))``, with the MSE normalised so
    that IIDRF gives ``v^2``; ``~ 1/(4d)`` for large ``d``.

    Parameters
    ----------
    d : int or array_like of int
        The dimension, ``>= 2``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``d`` is not an integer ``>= 2``, or ``dps < 15``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: sec 5.1 (holds as printed; 0.00778 at ``d = 64``).

    Examples
    --------
    >>> import mpmath
    >>> with mpmath.workdps(50):
    ...     ref = 1 - mpmath.sqrt(mpmath.pi) * mpmath.gamma(65) * mpmath.gamma(32.5) / (
    ...         mpmath.gamma(32) * mpmath.gamma(33) ** 2 * mpmath.mpf(2) ** 64)
    >>> abs(float(small_v_prefactor_simrf(64)) / float(ref) - 1) < 1e-13
    True
    >>> round(float(small_v_prefactor_simrf(64)), 5)
    0.00778
    """
    return -ctx.expm1(2 * _log_half_ratio(ctx, d / _two(ctx)))


# --------------------------------------------------------------------------- RFFs (sec 4.1)


def _check_zdm(z: Any, d: Any, m: Any) -> None:
    _nonneg(z, "z")
    _dims(d)
    _check_m(m)


def _rff_gap_bracket(ctx: Any, z: Any, d: Any) -> Any:
    """``e^{-z^2} - 1F1(d; d/2; -z^2/2) = sum_k (-z^2)^k/k! (1 - prod_{j<k}(d+j)/(d+2j))``."""
    if ctx.name == "float64":
        return np.exp(-z * z) - sc.hyp1f1(d, d / 2, -z * z / 2)
    if ctx.name == "mpmath":
        return mpmath.exp(-z * z) - mpmath.hyp1f1(d, mpmath.mpf(d) / 2, -z * z / 2)
    if ctx.name == "arb":  # (no cancellation of the terms of order 0 and 1 at small z)
        zb = _ab(z)
        return _as_ball(_ab_exp_minus_1f1(-zb * zb, _ab_int(d)))
    return sympy.exp(-z * z) - sympy.hyper([d], [d / sympy.Integer(2)], -z * z / 2)


def _rff_gap_conditioning(ctx: Any, z: Any, d: Any, m: Any) -> Any:
    # |terms| sum: e^{z^2} - ... bounded by e^{z^2} + 1F1(d; d/2; z^2/2); relative to the gap
    if ctx.name == "float64":
        num = np.exp(z * z) + np.exp(_fp_log_hyp1f1(d, d / 2, z * z / 2))
        den = np.abs(_rff_gap_bracket(ctx, z, d))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(z == 0, 1.0, num / den)
    num = mpmath.exp(z * z) + mpmath.hyp1f1(d, mpmath.mpf(d) / 2, z * z / 2)
    return num / abs(_rff_gap_bracket(ctx, z, d))


def _check_zdm_block(z: Any, d: Any, m: Any) -> None:
    _check_zdm(z, d, m)
    _check_m_le_d(m, d, "Thm 4.5")


@formula(check=_check_zdm_block, conditioning=_rff_gap_conditioning)
def rff_orthogonality_gap(ctx: Any, z: Any, d: Any, m: Any) -> Any:
    """RFF orthogonality gap ``MSE_IID - MSE_ORF = (m-1)/m (e^{-z^2} - 1F1(d; d/2; -z^2/2))``, ``m <= d``.

    The bracket alternates in sign; ill-conditioned float64 points (large ``z``) are recomputed
    in mpmath by the ``formula`` machinery.  Gaps below the smallest normal float64 lose digits
    and underflow to 0 (large ``z``); use :func:`log_rff_orthogonality_gap` there.

    Parameters
    ----------
    z : array_like
        ``|x - y|``, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    m : int or array_like of int
        The number of features, ``1 <= m <= d`` (one orthogonal block).
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``z`` is negative or not finite, ``d`` or ``m`` is not an integer ``>= 1``, ``m > d``,
        the arguments do not broadcast, or ``dps < 15``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Thm 4.5, eq (26) and eq (76) (hold as printed).

    Examples
    --------
    >>> import mpmath
    >>> ref = 2 * (mpmath.exp(-0.81) - mpmath.hyp1f1(4, 2, -0.405)) / 3  # z = 0.9, d = 4, m = 3
    >>> abs(float(rff_orthogonality_gap(0.9, 4, 3)) - float(ref)) < 1e-16
    True
    """
    return _frac(ctx, m - 1, m) * _rff_gap_bracket(ctx, z, d)


@formula(check=_check_zdm_block, conditioning=_rff_gap_conditioning)
def _log_abs_rff_gap(ctx: Any, z: Any, d: Any, m: Any) -> Any:
    return ctx.log(_frac(ctx, m - 1, m)) + ctx.log(ctx.abs(_rff_gap_bracket(ctx, z, d)))


@formula(check=_check_zdm_block, conditioning=_rff_gap_conditioning)
def _rff_gap_sign(ctx: Any, z: Any, d: Any, m: Any) -> Any:
    b = _rff_gap_bracket(ctx, z, d)
    return ctx.where(m > 1, ctx.where(b > 0, 1, ctx.where(b < 0, -1, 0)), 0)


def log_rff_orthogonality_gap(z: Any, d: Any, m: Any, *, backend: str = "float64", dps: int = 50) -> tuple[Any, Any]:
    """``(sign, log|gap|)`` of the RFF orthogonality gap :func:`rff_orthogonality_gap`, ``m <= d``.

    The convention of ``numpy.linalg.slogdet``: the gap is ``sign * exp(log|gap|)``.  The gap
    changes sign with ``z`` and decays like ``e^{-z^2/2}`` (even ``d``) or ``z^{-2d}`` (odd
    ``d``), below the float64 range of :func:`rff_orthogonality_gap` for large ``z``; here
    float64 points whose bracket cancels or underflows are recomputed in mpmath.  ``(0, -inf)``
    where the gap vanishes (``z = 0`` or ``m = 1``).

    Parameters
    ----------
    z : array_like
        ``|x - y|``, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    m : int or array_like of int
        The number of features, ``1 <= m <= d``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    tuple
        ``(sign, log|gap|)``: the sign (``-1``, ``0`` or ``1``) and the natural logarithm of the
        absolute gap, each float64 (broadcast over the arguments) or mpmath.

    Raises
    ------
    ValueError
        As for :func:`rff_orthogonality_gap`.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Thm 4.5, eq (26) and eq (76) (hold as printed).

    Examples
    --------
    >>> import math
    >>> sign, lg = log_rff_orthogonality_gap(0.9, 4, 3)
    >>> abs(int(sign) * math.exp(float(lg)) / float(rff_orthogonality_gap(0.9, 4, 3)) - 1) < 1e-14
    True
    >>> sign, lg = log_rff_orthogonality_gap(40.0, 4, 3)  # the gap underflows float64
    >>> abs(float(rff_orthogonality_gap(40.0, 4, 3))), bool(-900 < lg < -700)
    (0.0, True)
    """
    sign = _rff_gap_sign(z, d, m, backend=backend, dps=dps)
    return sign, _log_abs_rff_gap(z, d, m, backend=backend, dps=dps)


def rff_mse(z: Any, d: int, m: int, coupling: str) -> Any:
    """MSE of the RFF estimator ``(1/m) sum cos(w_i . z)`` (eq (74)), iid or ORF, any ``m``.

    ``(1/m)((1 - e^{-z^2})^2/2 + (P/m)(1F1(d; d/2; -z^2/2) - e^{-z^2}))`` with ``P`` the number of
    ordered coupled pairs (0 for iid; blocks of ``min(d, remaining)`` rows).

    Parameters
    ----------
    z : array_like
        ``|x - y|``, finite, ``>= 0``.
    d : int
        The dimension, ``>= 1``.
    m : int
        The number of features, ``>= 1``.
    coupling : {"iid", "orf"}
        The coupling within a block.

    Returns
    -------
    numpy.ndarray or float
        The MSE (float64, the shape of ``z``).

    Raises
    ------
    ValueError
        If ``coupling`` is not ``"iid"`` or ``"orf"``, ``d`` or ``m`` is not an integer ``>= 1``,
        or ``z`` is negative or not finite.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: appendix A.8, eq (74)-(75).

    Examples
    --------
    >>> import math
    >>> abs(float(rff_mse(0.9, 4, 3, "iid")) - (1 - math.exp(-0.81)) ** 2 / 6) < 1e-17
    True
    >>> gap = float(rff_orthogonality_gap(0.9, 4, 3))  # m <= d: iid - ORF is the gap
    >>> abs(float(rff_mse(0.9, 4, 3, "iid") - rff_mse(0.9, 4, 3, "orf")) / gap - 1) < 1e-12
    True
    """
    if coupling not in ("iid", "orf"):
        raise ValueError(f"rff_mse supports coupling 'iid' or 'orf'; got {coupling!r}")
    validate.positive_int(d, "d")
    validate.positive_int(m, "m")
    z = _nonneg(z, "z")
    npairs = _n_coupled_pairs(m, d, coupling)
    first = (-np.expm1(-z * z)) ** 2 / 2
    if npairs == 0:
        return first / m
    b = int(min(m, d))
    gap_b = rff_orthogonality_gap(z, d, b) * b / (b - 1)  # e^{-z^2} - 1F1
    return (first - npairs / m * gap_b) / m


def rff_mse_ratio_orf_iid(z: Any, d: int, m: int) -> Any:
    """Exact ``MSE_ORF / MSE_IID`` for RFFs, ``m <= d``: ``1 - 2(m-1) G / (1 - e^{-z^2})^2``.

    ``G = e^{-z^2} - 1F1(d; d/2; -z^2/2)``.  Below ``z = 1e-10`` the scale-free limit ``G / z^4
    -> 1/(2(d+2))`` is used (``z^4`` underflows).

    Parameters
    ----------
    z : array_like
        ``|x - y|``, finite, ``> 0``.
    d : int
        The dimension, ``>= 1``.
    m : int
        The number of features, ``1 <= m <= d``.

    Returns
    -------
    numpy.ndarray or float
        The ratio (float64, the shape of ``z``).

    Raises
    ------
    ValueError
        If ``z = 0`` (both MSEs vanish), ``z`` is negative or not finite, ``m`` is not an integer
        ``>= 1``, or ``m > d``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: eq (77) with the denominator ``(1 - e^{-z^2})^2`` (eq
    (77) prints ``(1 + e^{-z^2})^2``).

    Examples
    --------
    >>> r = float(rff_mse_ratio_orf_iid(0.9, 4, 3))
    >>> abs(r - float(rff_mse(0.9, 4, 3, "orf") / rff_mse(0.9, 4, 3, "iid"))) < 1e-14
    True
    >>> abs(float(rff_mse_ratio_orf_iid(1e-12, 8, 3)) - (1 - 2 / 10)) < 1e-15  # z -> 0: 1 - (m-1)/(d+2)
    True
    """
    z = _nonneg(z, "z")
    if np.any(z == 0):
        raise ValueError("the MSE ratio needs z > 0 (both MSEs vanish at z = 0)")
    validate.positive_int(m, "m")
    if m > d:
        raise ValueError("Cor 4.6 needs m <= d")
    z2 = z * z
    small = z2 < 1e-20  # G and expm1(-z^2)^2 ~ z^4 underflow: use G / z^4 = 1/(2(d+2)) - z^2/(2(d+4)) + ...
    g = np.zeros(np.shape(z))
    if m > 1 and not np.all(small):
        zb = z[~small] if z.ndim else z
        g[~small] = rff_orthogonality_gap(zb, d, m) * m / (m - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1 - 2 * (m - 1) * g / np.expm1(-z2) ** 2
    # scale-free small-z form: (G / z^4) (z^2 / expm1(-z^2))^2, exprel(-x) = -expm1(-x) / x
    return np.where(small, 1 - (m - 1) / (d + 2) / sc.exprel(-z2) ** 2, out)[()]


def _check_zdm_cor46(z: Any, d: Any, m: Any) -> None:
    _check_zdm(z, d, m)
    _check_m_le_d(m, d, "Cor 4.6")


@formula(check=_check_zdm_cor46)
def rff_mse_ratio_asymptotic(ctx: Any, z: Any, d: Any, m: Any) -> Any:
    """Leading-order ``MSE_ORF / MSE_IID = 1 - (m-1) e^{-z^2} z^4 / (d (1 - e^{-z^2})^2)``, ``m <= d``.

    One orthogonal block, as :func:`rff_mse_ratio_orf_iid`; evaluated as ``1 - (m-1) q^2/d``
    with ``q = (z^2/2) / sinh(z^2/2)`` (no cancellation; ``q -> 1`` at ``z = 0``).

    Parameters
    ----------
    z : array_like
        ``|x - y|``, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    m : int or array_like of int
        The number of features, ``1 <= m <= d``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``z`` is negative or not finite, ``d`` or ``m`` is not an integer ``>= 1``, ``m > d``,
        the arguments do not broadcast, or ``dps < 15``.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Cor 4.6, eq (27) and eq (86); Yu et al. (2016).

    Examples
    --------
    >>> import math
    >>> float(rff_mse_ratio_asymptotic(0.0, 8, 3))  # z -> 0: 1 - (m-1)/d
    0.75
    >>> x = 0.81  # z = 0.9
    >>> ref = 1 - 2 * math.exp(-x) * x**2 / (8 * (1 - math.exp(-x)) ** 2)
    >>> abs(float(rff_mse_ratio_asymptotic(0.9, 8, 3)) - ref) < 1e-15
    True
    """
    if ctx.name == "sympy":
        return 1 - (m - 1) * ctx.exp(-z * z) * z**4 / (d * ctx.expm1(-z * z) ** 2)
    # e^{-x} x^2 / expm1(-x)^2 = (e^{-x/2} / exprel(-x))^2 = (x / (2 sinh(x/2)))^2 -> 1 at x = z^2 = 0
    x = z * z
    if ctx.name == "float64":
        q = np.exp(-x / 2) / sc.exprel(-x)
    elif ctx.name == "arb":  # 2 sinh(x/2) = -e^{x/2} expm1(-x), no cancellation for x > 0
        q = x / (-ctx.exp(x / 2) * ctx.expm1(-x)) if x else x * 0 + 1
    else:
        q = x / (2 * mpmath.sinh(x / 2)) if x else mpmath.mpf(1)
    return 1 - (m - 1) * q * q / d


# ----------------------------------------------------------------- Lemma A.1 (equal norms)


@formula(check=lambda v, w, d, m: (_nonneg(v, "v"), _nonneg(w, "w"), _dims(d), _check_m(m, 2)) and None)
def equal_norm_conformity_bound(ctx: Any, v: Any, w: Any, d: Any, m: Any) -> Any:
    """Lower bound of Lemma A.1 for ``m >= 2`` rows of equal norm ``w``.

    ``m(m-1) f(2(m-2)/(m-1)) = 0F1(; d/2; v^2 w^2 (m-2) / (2(m-1)))``, attained by the simplex
    (``m = d``) (see :func:`equal_norm_conformity`).

    Parameters
    ----------
    v : array_like
        ``|x + y|``, finite, ``>= 0``.
    w : array_like
        The common row norm, finite, ``>= 0``.
    d : int or array_like of int
        The dimension, ``>= 1``.
    m : int or array_like of int
        The number of rows, ``>= 2``.
    backend : {"float64", "mpmath"}, optional
        ``"float64"`` (default): vectorised numpy; ``"mpmath"``: elementwise at ``dps`` digits.
    dps : int, optional
        mpmath working digits (default 50, at least 15); ignored by the float64 face.

    Returns
    -------
    numpy.ndarray or float or mpmath.mpf
        Float64 values broadcast over the arguments, or mpmath numbers (an object array for
        array input) with ``backend="mpmath"``.

    Raises
    ------
    ValueError
        If ``v`` or ``w`` is negative or not finite, ``d`` is not an integer ``>= 1``, ``m`` is
        not an integer ``>= 2``, the arguments do not broadcast, ``dps < 15``, or (float64) the
        value exceeds the float64 range.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma A.1, eq (37)-(40) (holds as printed).

    Examples
    --------
    >>> float(equal_norm_conformity_bound(0.8, 1.2, 3, 2))  # m = 2: antipodal rows, 0F1(; b; 0) = 1
    1.0
    """
    lg = _log_hyp0f1(ctx, d / _two(ctx), v * v * w * w * (m - 2) / (2 * (m - 1)))
    if ctx.name == "float64":  # raise where the value leaves float64, never inf
        return _exp(lg, "float64", 0, "equal_norm_conformity_bound", "backend='mpmath'")
    return ctx.exp(lg)


def equal_norm_conformity(v: float, w: float, d: int, directions: Any) -> float:
    """Eq (36): the RF-conformity of ``m`` rows of equal norm ``w`` with given directions.

    ``rho = (1/(m(m-1))) sum_{i != j} 0F1(; d/2; v^2 w^2 |u_i + u_j|^2 / 4)`` for unit directions
    ``u_i`` (the rows of ``directions``, normalised here).

    Parameters
    ----------
    v : float
        ``|x + y|``, ``>= 0``.
    w : float
        The common row norm.
    d : int
        The dimension entering ``0F1(; d/2; .)``.
    directions : array_like
        Shape (m, d') with ``m >= 2`` nonzero rows.

    Returns
    -------
    float
        ``rho``.

    Raises
    ------
    ValueError
        If ``directions`` is not a finite array of shape (m, d') with ``m >= 2``, or has a zero row.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: Lemma A.1, eq (36).

    Examples
    --------
    >>> import numpy as np  # a regular simplex of 3 directions (in a plane) attains the bound
    >>> u = np.array([[1.0, 0.0], [-0.5, 3**0.5 / 2], [-0.5, -(3**0.5) / 2]])
    >>> abs(equal_norm_conformity(0.8, 1.2, 3, u) - float(equal_norm_conformity_bound(0.8, 1.2, 3, 3))) < 1e-15
    True
    >>> equal_norm_conformity(0.8, 1.2, 3, [[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]) > 1.16
    True
    """
    u = validate.finite_array(directions, "directions")
    if u.ndim != 2 or u.shape[0] < 2:
        raise ValueError("directions must have shape (m, d') with m >= 2")
    nrm = np.linalg.norm(u, axis=1)
    if np.any(nrm == 0):
        raise ValueError("directions must be nonzero")
    u = u / nrm[:, None]
    m = u.shape[0]
    s2 = np.maximum(2 + 2 * (u @ u.T), 0.0)
    iu = ~np.eye(m, dtype=bool)
    vals = np.exp(_fp_log_hyp0f1(d / 2, v * v * w * w * s2[iu] / 4))
    return float(vals.mean())


# ------------------------------------------------------------- eq (12): fixed-norm ensembles


def conformity_of_ensemble(W: Any, v: float) -> float:
    """Eq (12): the RF-conformity of one ensemble ``W`` of fixed vectors.

    ``rho = Gamma(d/2)/(m(m-1)) sum_{i != j} sum_k (v w_ij)^{2k}/(2^{2k} k! Gamma(k+d/2)) =
    mean_{i != j} 0F1(; d/2; v^2 |w_i + w_j|^2 / 4)``.

    Parameters
    ----------
    W : array_like
        The rows ``w_i``, finite, shape (m, d) with ``m >= 2``.
    v : float
        ``|x + y|``, ``>= 0``.

    Returns
    -------
    float
        ``rho``.

    Raises
    ------
    ValueError
        If ``W`` is not a finite array of shape (m, d) with ``m >= 2``, or ``v`` is negative or
        not finite.

    References
    ----------
    Reid et al., Simplex Random Features (SimRF), ICML 2023: sec 3.2, eq (12) (the quantity compared in Fig. 4).

    Examples
    --------
    >>> w = [[1.0, 0.0], [0.0, 2.0]]  # one pair: |w_1 + w_2|^2 = 5
    >>> abs(conformity_of_ensemble(w, 0.5) - conformity_kernel(5**0.5, 0.5, 2)) < 1e-15
    True
    """
    W = validate.finite_array(W, "W")
    if W.ndim != 2 or W.shape[0] < 2:
        raise ValueError("W must have shape (m, d) with m >= 2")
    _nonneg(v, "v")
    m, d = W.shape
    sums = W[:, None, :] + W[None, :, :]
    s2 = np.sum(sums * sums, axis=2)[~np.eye(m, dtype=bool)]
    return float(np.mean(np.exp(_fp_log_hyp0f1(d / 2, v * v * s2 / 4))))


def __getattr__(name: str) -> Any:
    """Names moved out of the closed forms, still importable from here (lazily).

    ``optimised_ensemble`` is a numerical optimiser, not a closed form: it lives in
    :mod:`rfcheck.references.simrf` (it needs the Monte Carlo module's simplex).
    """
    if name == "optimised_ensemble":
        from rfcheck.references.simrf import optimised_ensemble

        return optimised_ensemble
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

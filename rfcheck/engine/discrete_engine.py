"""Numba engine for discretely-induced random features (CRT sec 3.2, eq (9)-(10)):
PoisRF and GeomRF (and their positive variants via a shift), with per-coordinate Poisson
and geometric projections.

Estimator
---------
For a pair ``(x, y)`` in R^d, ``M`` projections ``w_1..w_M`` with i.i.d. coordinates
``w_{m,l} ~ p_k`` and

    K_hat_M = (1/M) sum_m f(w_m, x) f(w_m, y),
    f(w, x) f(w, y) = e^{-(|x|^2+|y|^2)/2} prod_l (x_l y_l)^{w_l} / (w_l! p_{w_l})   (eq 10),

evaluated in log-space with its sign.  Writing ``a_l = x_l y_l`` the log-modulus is
``sum_l [w_l log|a_l| - log w_l! - log p_{w_l}] - (|x|^2+|y|^2)/2``, which is

- Poisson(lambda): ``sum_l w_l (log|a_l| - log lambda) + d lambda - (|x|^2+|y|^2)/2``;
- geometric ``p (1-p)^k``: ``sum_l [w_l (log|a_l| - log(1-p)) - log w_l!] - d log p - ...``;

``0^0 = 1``: a coordinate with ``a_l = 0`` contributes ``0`` when ``w_l = 0`` and makes the
product vanish otherwise.  The sign is ``(-1)^{sum_l w_l [a_l < 0]}``.

Samplers (from the generators of :mod:`rfcheck.engine.rng`; the mode depends on the parameter only)
----------------------------------------------------------------------------------------------
- mode 0, dense table: one guide-table inversion per coordinate (Chen & Asau 1974;
  :func:`inversion_table`): the CDF on ``[k_lo, k_hi]`` (Poisson: ``lambda -/+ (40
  sqrt(lambda) + 40)``, CDF from ``scipy.special.pdtr``; geometric: up to ``(1-p)^(k_hi+1) <
  1e-25``; the mass outside is given to the end points) as integer thresholds ``T =
  ceil(F 2^53)``, and ``X = min{i : v < T[i]}`` for ``v`` the top 53 bits of one generator
  word, searched from ``guide[v >> shift]``: O(1) expected comparisons, integer arithmetic.
  Used for Poisson (``lambda <= 1e9``) and geometric with at most 2^16 table entries.
- mode 1, dense log inversion (geometric, ``p <~ 8.8e-4``): ``X = floor(log(u) /
  log(1-p))``, ``u`` on ``(0, 1)`` (``P(X >= j) = (1-p)^j``); needs ``p >= 1e-12`` so that
  every count is an exact float64 integer below ``2^53``.
- mode 2, sparse (``P(X > 0) <= SPARSE_MAX = 0.25``: small lambda, large p -- the regime of
  the optimal parameters for small inputs): per row of ``d`` coordinates, the gap of zeros
  before the next nonzero count (``P(G = g) = p_0^g (1 - p_0)``, capped at ``d``) and the
  nonzero count (the law conditioned on ``X >= 1``) are drawn alternately by guide tables;
  the row's coordinates are then i.i.d. with the target law (the gap law is that of the
  run of zeros of i.i.d. draws).  The feature products are summed over the nonzeros only.

The tabulated CDFs equal the exact ones to ~2e-16 absolute (tested against mpmath); with
the 2^-53 grid of the uniforms, the laws equal the targets far below anything a Monte
Carlo test can see.

Reproducibility
---------------
Trials are split into blocks of :data:`TRIALS_PER_BLOCK`; block ``b`` uses the generator
:func:`rfcheck.engine.rng.block_state` ``(seed, stream, b)``, so the numbers do not depend on the
thread count (blocks on threads, :func:`rfcheck.engine.parallel.run_jobs`).  Within a trial
the ``M x d`` counts are drawn row by row and serve all pairs (one ensemble per trial, as a
real feature map); sums are taken in a fixed order.  :func:`simulate_reference` is a
plain-Python twin giving the same counts and, with the same ``libm``, the same estimates to the
last bit (the sums over coordinates of the dense modes are taken in four interleaved partial
sums, ``l mod 4``, in both); :func:`simulate_numpy` is the vectorised NumPy baseline
(``numpy.random.Generator``).

References
----------
CRT (Likhosherstov et al., "Chefs' Random Tables: Non-Trigonometric Random Features"),
sec 3.2, eq (9)-(10), sec 3.2.1-3.2.3, Thm 3.4-3.5.  H.-C. Chen, Y. Asau, "On generating
random variates from an empirical distribution", AIIE Trans. 6 (1974) (guide tables);
L. Devroye, "Non-Uniform Random Variate Generation" (1986), sec III.2 and X.2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as sc
from numba import njit

from rfcheck import validate
from rfcheck.engine import rng as _rng
from rfcheck.engine.parallel import n_blocks, run_jobs

__all__ = [
    "DISTRIBUTIONS",
    "GEOMETRIC_P_MIN",
    "SPARSE_MAX",
    "TRIALS_PER_BLOCK",
    "draw_counts",
    "draw_counts_reference",
    "inversion_table",
    "simulate",
    "simulate_numpy",
    "simulate_reference",
]

#: the distributions of the projections' entries: PoisRF and GeomRF (CRT sec 3.2)
DISTRIBUTIONS = ("poisson", "geometric")
_DIST_CODE = {"poisson": 0, "geometric": 1}
TRIALS_PER_BLOCK = 64
"""Trials per independently seeded block (part of the stream definition)."""
SPARSE_MAX = 0.25
"""Largest ``P(k > 0)`` for which the sparse mode (gaps of zeros, then nonzero values) is used."""
GEOMETRIC_P_MIN = 1e-12
"""Smallest geometric ``p`` the sampler accepts (counts stay exact integers < 2^53)."""
_STREAM_BASE = 0xD15C << 44  # disjoint from the Gaussian couplings' stream tags (code << 40)
_LGAMMA_TABLE_SIZE = 1024
_LGAMMA_TABLE = np.array([math.lgamma(k + 1.0) for k in range(_LGAMMA_TABLE_SIZE)])
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_TABLE_MAX_GEOM = 1 << 16


def _stream(dist: str) -> int:
    return _STREAM_BASE | (_DIST_CODE[dist] << 32)


# --------------------------------------------------------------------------- parameters
def _check_param(dist: object, param: object) -> tuple[str, float]:
    if dist not in DISTRIBUTIONS:
        raise ValueError(f"dist must be one of {DISTRIBUTIONS}; got {dist!r}")
    if dist == "poisson":
        lam = validate.finite_real(param, "lambda")
        if not lam > 0:
            raise ValueError(f"PoisRF needs lambda > 0 (CRT sec 3.2.1); got {lam}")
        if lam > 1e9:
            raise ValueError(f"the Poisson sampler needs lambda <= 1e9 (table size); got {lam}")
        return "poisson", lam
    p = validate.finite_real(param, "p")
    if not 0 < p < 1:
        raise ValueError(f"GeomRF needs 0 < p < 1 (CRT sec 3.2.2); got {p}")
    if p < GEOMETRIC_P_MIN:
        raise ValueError(f"the geometric sampler needs p >= {GEOMETRIC_P_MIN:g} (counts below 2^53); got {p}")
    return "geometric", p


def _guide_bits(n: int) -> int:
    """log2 of the guide-table length for a table of ``n`` thresholds: 8 guide cells per
    threshold (the search then almost always stops at its first comparison, a predictable
    branch), at least 2^10 cells, at most 2^22."""
    return min(22, max(10, math.ceil(math.log2(n)) + 3))


def inversion_table(dist: str, param: float, positive: bool = False) -> tuple[int, np.ndarray, np.ndarray, int] | None:
    """``(k_lo, T, guide, shift)`` of the table sampler, or ``None`` where it is not used
    (geometric with a table longer than :data:`_TABLE_MAX_GEOM`: log inversion instead).
    ``positive=True``: the law conditioned on ``k >= 1`` (the values of the sparse mode):
    ``F(k) = 1 - P(X > k) / P(X >= 1)`` with the upper tail from ``scipy.special.pdtrc``
    over ``-expm1(-lambda)`` (no cancellation for small lambda), or ``1 - (1-p)^k``.

    ``T[i] = ceil(F(k_lo + i) 2^53)`` with ``F`` the CDF (Poisson: ``scipy.special.pdtr``,
    the regularised incomplete gamma function, ~1e-15 relative, no cumulative rounding;
    geometric: ``-expm1((k+1) log1p(-p))``) on ``[k_lo, k_hi]``, outside which the mass is
    below 1e-25 and is given to the end points (``T[-1] = 2^53``).  A draw is
    ``min{i : v < T[i]}`` for ``v`` uniform on the integers ``[0, 2^53)`` (the top 53 bits of
    one generator word), searched from ``guide[v >> shift]``, ``guide[j] = min{i : T[i] >
    j 2^shift}`` (Chen-Asau guide table of at least twice the table length).

    Parameters
    ----------
    dist : {"poisson", "geometric"}
        The law of the projections' entries.
    param : float
        Poisson ``lambda`` or geometric ``p``.
    positive : bool, default False
        The law conditioned on ``k >= 1`` (the nonzero values of the sparse mode).

    Returns
    -------
    tuple of (int, numpy.ndarray, numpy.ndarray, int) or None
        ``(k_lo, T, guide, shift)``: the smallest tabulated value, the thresholds ``T``
        (``int64``, nondecreasing, ``T[-1] = 2**53``), the guide table and its shift; ``None`` for a
        geometric law whose table would be longer than 2^16 entries (log inversion instead).

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS`, or ``param`` is out of range (Poisson:
        not ``0 < lambda <= 1e9``; geometric: not ``0 < p < 1``, or ``p <`` :data:`GEOMETRIC_P_MIN`).

    References
    ----------
    H.-C. Chen, Y. Asau, "On generating random variates from an empirical distribution", AIIE
    Trans. 6 (1974) (guide tables); CRT sec 3.2.1-3.2.2 (the Poisson and geometric laws).

    Examples
    --------
    Geometric ``p = 1/2``: ``F(0) = 1/2``, ``F(1) = 3/4``, so the first thresholds are ``2^52`` and
    ``3 * 2^51``:

    >>> k_lo, T, guide, shift = inversion_table("geometric", 0.5)
    >>> k_lo, int(T[0]) == 2**52, int(T[1]) == 3 * 2**51, int(T[-1]) == 2**53
    (0, True, True, True)
    >>> inversion_table("geometric", 1e-6) is None
    True
    """
    dist, param = _check_param(dist, param)
    if dist == "poisson":
        w = 40.0 * math.sqrt(param) + 40.0
        k_lo, k_hi = max(int(positive), math.floor(param - w)), math.ceil(param + w)
        ks = np.arange(k_lo, k_hi + 1, dtype=float)
        F = 1.0 - sc.pdtrc(ks, param) / -math.expm1(-param) if positive else sc.pdtr(ks, param)
    else:
        k_lo = int(positive)
        k_hi = math.ceil(57.6 / -math.log1p(-param))  # (1-p)^(k_hi+1) < e^-57.6 < 1e-25
        if k_hi + 1 > _TABLE_MAX_GEOM:
            return None
        ks = np.arange(k_lo, k_hi + 1, dtype=float)
        F = -np.expm1((ks + 1 - k_lo) * math.log1p(-param))
    T = np.ceil(np.maximum.accumulate(F) * 2.0**53)
    T = np.minimum(T, 2.0**53).astype(np.int64)
    T[-1] = 1 << 53
    gbits = _guide_bits(len(T))
    shift = 53 - gbits
    guide = np.searchsorted(T, np.arange(1 << gbits, dtype=np.int64) << shift, side="right").astype(np.int64)
    return k_lo, T, guide, shift


# --------------------------------------------------------------------------- kernels
@njit(cache=True, error_model="numpy", inline="always")
def _table_draw(st, T, guide, shift):
    """Guide-table inversion: ``min{i : v < T[i]}``, ``v`` = top 53 bits; ``(i, state)``."""
    r, st = _rng.next_u64(st)
    v = np.int64(r >> np.uint64(11))
    i = guide[v >> shift]
    while T[i] <= v:
        i += 1
    return i, st


@njit(cache=True, error_model="numpy", inline="always")
def _log_inversion_draw(st, inv_log1mp):
    """Geometric by inversion, ``floor(log(u) / log(1-p))``, ``u`` on (0, 1); ``(k, state)``."""
    u, st = _rng.uniform_open(st)
    return math.floor(math.log(u) * inv_log1mp), st


@njit(cache=True, error_model="numpy")
def _log_factorial(k, table):
    """``log k!``: the table below its size, else Stirling's series (error < 1e-24 there)."""
    if k < table.shape[0]:
        return table[np.int64(k)]
    n = k + 1.0
    r = 1.0 / n
    r2 = r * r
    return ((n - 0.5) * math.log(n) - n + _HALF_LOG_2PI) + r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 / 1260.0))


@njit(cache=True, error_model="numpy")
def _fill_counts(mode, st, k_lo, T, guide, shift, inv_log, counts):
    """Fill ``counts`` (float) with i.i.d. draws in order (dense modes); returns the new
    state.  mode 0: one table draw per coordinate; mode 1: one log-inversion draw
    (``inv_log = 1/log(1-p)``)."""
    n = counts.shape[0]
    if mode == 0:
        for i in range(n):
            j, st = _table_draw(st, T, guide, shift)
            counts[i] = float(k_lo + j)
    else:
        for i in range(n):
            counts[i], st = _log_inversion_draw(st, inv_log)
    return st


@njit(cache=True, error_model="numpy")
def _fill_sparse(st, M, d, k_lo, T, guide, shift, TG, guideG, shiftG, idx, val, rowptr):
    """Sparse mode: per row of ``d`` coordinates, table draws of the gap ``G`` (zeros before
    the next nonzero count; ``P(G = g) = p_0^g (1 - p_0)``, capped at ``d`` = row done)
    alternate with table draws of the count given ``k >= 1``.  Nonzeros go to ``idx``,
    ``val`` (row ``m`` in ``rowptr[m]:rowptr[m+1]``); returns the new state."""
    nnz = 0
    for m in range(M):
        rowptr[m] = nnz
        pos = -1
        while True:
            g, st = _table_draw(st, TG, guideG, shiftG)
            pos += g + 1
            if pos >= d:
                break
            j, st = _table_draw(st, T, guide, shift)
            idx[nnz] = pos
            val[nnz] = float(k_lo + j)
            nnz += 1
    rowptr[M] = nnz
    return st


@njit(cache=True, error_model="numpy")
def _pair_mean_sparse(code, idx, val, rowptr, M, b, neg, zero, c0, lgtab, terms):
    """:func:`_pair_mean` over the nonzero counts only (sparse mode), in increasing position."""
    for m in range(M):
        s = 0.0
        par = 0
        for e in range(rowptr[m], rowptr[m + 1]):
            c = idx[e]
            k = val[e]
            if zero[c]:
                s = -np.inf
            else:
                s += k * b[c]
                if code == 1:
                    s -= lgtab[np.int64(k)]
                par ^= np.int64(k) & neg[c]
        v = math.exp(c0 + s)
        terms[m] = -v if par == 1 else v
    acc = 0.0
    for m in range(M):
        acc += terms[m]
    return acc / M


@njit(cache=True, error_model="numpy")
def _pair_mean(code, mode, counts, M, d, b, neg, zero, any_zero, c0, lgtab, terms):
    """``(1/M) sum_m sign_m exp(c0 + sum_l [k_ml b_l - h(k_ml)])`` (h = 0 Poisson, log k!
    geometric); coordinates with ``zero[c]`` (a_l = 0) contribute 0 if ``k = 0`` else -inf.
    Without zero coordinates the loop over ``c`` has no branches (Poisson) and a table
    lookup for ``log k!`` (geometric)."""
    tmax = lgtab.shape[0] - 1
    for m in range(M):
        row = counts[m * d:(m + 1) * d]
        s = 0.0
        par = 0
        if any_zero:
            for c in range(d):
                k = row[c]
                if k != 0.0:
                    if zero[c]:
                        s = -np.inf
                    else:
                        s += k * b[c]
                        if code == 1:
                            s -= _log_factorial(k, lgtab)
                        par ^= np.int64(k) & neg[c]
        else:
            big = False
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            l4 = d - d % 4
            if code == 0:  # Poisson: sum_l k b_l in four interleaved partial sums (l mod 4)
                for c in range(0, l4, 4):
                    s0 += row[c] * b[c]
                    s1 += row[c + 1] * b[c + 1]
                    s2 += row[c + 2] * b[c + 2]
                    s3 += row[c + 3] * b[c + 3]
                for c in range(l4, d):
                    s0 += row[c] * b[c]
            elif mode == 0:  # geometric, table sampler: every count is inside the log-factorial table
                for c in range(0, l4, 4):
                    s0 += row[c] * b[c] - lgtab[np.int64(row[c])]
                    s1 += row[c + 1] * b[c + 1] - lgtab[np.int64(row[c + 1])]
                    s2 += row[c + 2] * b[c + 2] - lgtab[np.int64(row[c + 2])]
                    s3 += row[c + 3] * b[c + 3] - lgtab[np.int64(row[c + 3])]
                for c in range(l4, d):
                    s0 += row[c] * b[c] - lgtab[np.int64(row[c])]
            else:  # geometric, log inversion: sum_l (k b_l - log k!), the same way, table clipped
                for c in range(0, l4, 4):
                    s0 += row[c] * b[c] - lgtab[min(np.int64(row[c]), tmax)]
                    s1 += row[c + 1] * b[c + 1] - lgtab[min(np.int64(row[c + 1]), tmax)]
                    s2 += row[c + 2] * b[c + 2] - lgtab[min(np.int64(row[c + 2]), tmax)]
                    s3 += row[c + 3] * b[c + 3] - lgtab[min(np.int64(row[c + 3]), tmax)]
                for c in range(l4, d):
                    s0 += row[c] * b[c] - lgtab[min(np.int64(row[c]), tmax)]
                for c in range(d):
                    big |= row[c] > tmax
            s = (s0 + s1) + (s2 + s3)
            for c in range(d):
                par += np.int64(row[c]) & neg[c]
            if big:  # a count beyond the log-factorial table (geometric, small p): exact pass
                s = 0.0
                for c in range(d):
                    s += row[c] * b[c] - _log_factorial(row[c], lgtab)
        v = math.exp(c0 + s)
        terms[m] = -v if (par & 1) == 1 else v
    acc = 0.0
    for m in range(M):
        acc += terms[m]
    return acc / M


@njit(cache=True, error_model="numpy", nogil=True)
def _kernel(code, mode, seed, stream, M, d, k_lo, T, guide, shift, inv_log, TG, guideG, shiftG, B, NEG, ZERO,
            ANYZ, C0, lgtab, out, lo, hi):
    """Blocks ``lo <= b < hi`` of :func:`simulate` (a range kernel of
    :func:`rfcheck.engine.parallel.run_jobs`)."""
    n_pairs, n_trials = out.shape
    for blk in range(lo, hi):
        counts = np.empty(M * d)
        idx = np.empty(M * d, dtype=np.int64)
        rowptr = np.empty(M + 1, dtype=np.int64)
        terms = np.empty(M)
        st = _rng.block_state(seed, stream, np.uint64(blk))
        stop = min(n_trials, (blk + 1) * TRIALS_PER_BLOCK)
        for trial in range(blk * TRIALS_PER_BLOCK, stop):
            if mode == 2:
                st = _fill_sparse(st, M, d, k_lo, T, guide, shift, TG, guideG, shiftG, idx, counts, rowptr)
                for p in range(n_pairs):
                    out[p, trial] = _pair_mean_sparse(code, idx, counts, rowptr, M, B[p], NEG[p], ZERO[p], C0[p],
                                                      lgtab, terms)
            else:
                st = _fill_counts(mode, st, k_lo, T, guide, shift, inv_log, counts)
                for p in range(n_pairs):
                    out[p, trial] = _pair_mean(code, mode, counts, M, d, B[p], NEG[p], ZERO[p], ANYZ[p], C0[p],
                                               lgtab, terms)


@njit(cache=True, error_model="numpy", nogil=True)
def _counts_kernel(mode, seed, stream, M, d, k_lo, T, guide, shift, inv_log, TG, guideG, shiftG, out, lo, hi):
    """Blocks ``lo <= b < hi`` of :func:`draw_counts` (a range kernel of
    :func:`rfcheck.engine.parallel.run_jobs`)."""
    n_trials = out.shape[0]
    for blk in range(lo, hi):
        idx = np.empty(M * d, dtype=np.int64)
        val = np.empty(M * d)
        rowptr = np.empty(M + 1, dtype=np.int64)
        st = _rng.block_state(seed, stream, np.uint64(blk))
        stop = min(n_trials, (blk + 1) * TRIALS_PER_BLOCK)
        for trial in range(blk * TRIALS_PER_BLOCK, stop):
            row = out[trial]
            if mode == 2:
                st = _fill_sparse(st, M, d, k_lo, T, guide, shift, TG, guideG, shiftG, idx, val, rowptr)
                row[:] = 0.0
                for m in range(M):
                    for e in range(rowptr[m], rowptr[m + 1]):
                        row[m * d + idx[e]] = val[e]
            else:
                st = _fill_counts(mode, st, k_lo, T, guide, shift, inv_log, row)


# --------------------------------------------------------------------------- set-up
def _log_factorial_table(n: int) -> np.ndarray:
    """``log k!`` for ``k < max(n, 1024)`` (the first 1024 from ``math.lgamma``, the rest
    from ``scipy.special.gammaln``); table-sampler counts never exceed the table."""
    if n <= _LGAMMA_TABLE_SIZE:
        return _LGAMMA_TABLE
    return np.concatenate([_LGAMMA_TABLE, sc.gammaln(np.arange(_LGAMMA_TABLE_SIZE, n) + 1.0)])


def _gap_table(log_p0: float, d: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(T, guide, shift)`` of the gap law of the sparse mode: ``P(G = g) = p_0^g (1 - p_0)``
    for ``g < d`` and ``P(G = d) = p_0^d`` (``G >= d``: the row has no further nonzero)."""
    g = np.arange(d + 1, dtype=float)
    F = -np.expm1((g + 1) * log_p0)
    T = np.minimum(np.ceil(F * 2.0**53), 2.0**53).astype(np.int64)
    T[-1] = 1 << 53
    gbits = _guide_bits(len(T))
    shift = 53 - gbits
    guide = np.searchsorted(T, np.arange(1 << gbits, dtype=np.int64) << shift, side="right").astype(np.int64)
    return T, guide, shift


def _sampler_args(dist: str, param: float, d: int) -> dict[str, Any]:
    """Sampler set-up: ``code`` (0 Poisson, 1 geometric), ``mode`` (0 dense table, 1 dense log
    inversion with ``inv_log = 1/log(1-p)``, 2 sparse when ``P(k > 0) <= SPARSE_MAX``: gap
    table ``TG, guideG, shiftG`` for rows of length ``d`` and a value table conditioned on
    ``k >= 1``), the table ``k_lo, T, guide, shift`` and the log-factorial table ``lgtab``."""
    dist, param = _check_param(dist, param)
    code = _DIST_CODE[dist]
    log_p0 = -param if dist == "poisson" else math.log(param)
    none = np.zeros(1, dtype=np.int64)
    out: dict[str, Any] = {"code": code, "inv_log": 0.0, "TG": none, "guideG": none, "shiftG": 0}
    if -math.expm1(log_p0) <= SPARSE_MAX:
        k_lo, T, guide, shift = inversion_table(dist, param, positive=True)
        TG, guideG, shiftG = _gap_table(log_p0, d)
        out.update(mode=2, TG=TG, guideG=guideG, shiftG=shiftG)
    else:
        tab = inversion_table(dist, param)
        if tab is None:
            k_lo, T, guide, shift = 0, np.ones(1, dtype=np.int64), none, 0
            out.update(mode=1, inv_log=1.0 / math.log1p(-param))
        else:
            k_lo, T, guide, shift = tab
            out.update(mode=0)
    out.update(k_lo=k_lo, T=T, guide=guide, shift=shift,
               lgtab=_log_factorial_table(k_lo + len(T) if out["mode"] != 1 else 0))
    return out


def _engine_args(sa: dict[str, Any]) -> tuple:
    return (sa["k_lo"], sa["T"], sa["guide"], sa["shift"], sa["inv_log"], sa["TG"], sa["guideG"], sa["shiftG"])


def _pair_args(x: Any, y: Any, dist: str, param: float, shift: Any) -> dict[str, np.ndarray]:
    """Per-pair constants: ``b_l``, sign mask, zero mask and the constant ``c0``."""
    xa = validate.finite_array(x, "x")
    ya = validate.finite_array(y, "y")
    xa = xa[None, :] if xa.ndim == 1 else xa
    ya = ya[None, :] if ya.ndim == 1 else ya
    if xa.ndim != 2 or xa.shape != ya.shape or xa.shape[0] < 1 or xa.shape[1] < 1:
        raise ValueError(f"x and y must have the same shape (d,) or (P, d) with P, d >= 1; "
                         f"got {xa.shape} and {ya.shape}")
    if shift is not None:
        c = validate.finite_array(shift, "shift").ravel()
        if c.shape != (xa.shape[1],):
            raise ValueError(f"shift must have shape (d,) = ({xa.shape[1]},); got {c.shape}")
        xa, ya = xa - c, ya - c
    a = xa * ya
    zero = a == 0
    with np.errstate(divide="ignore"):
        la = np.where(zero, 0.0, np.log(np.abs(np.where(zero, 1.0, a))))
    d = xa.shape[1]
    norm = (np.sum(xa * xa, axis=1) + np.sum(ya * ya, axis=1)) / 2
    if dist == "poisson":
        b = la - math.log(param)
        c0 = d * param - norm
    else:
        b = la - math.log1p(-param)
        c0 = -d * math.log(param) - norm
    return {"b": np.ascontiguousarray(b), "neg": np.ascontiguousarray((a < 0).astype(np.int64)),
            "zero": np.ascontiguousarray(zero), "any_zero": np.ascontiguousarray(np.any(zero, axis=1)),
            "c0": np.ascontiguousarray(c0), "d": d}


def simulate(x: Any, y: Any, dist: str, param: float, M: int, n_trials: int, *, seed: int = 0,
             shift: Any = None) -> np.ndarray:
    """Independent replicas of the PoisRF / GeomRF estimator ``K_hat_M`` (Numba engine).

    Parameters
    ----------
    x, y : array_like, shape (d,) or (P, d)
        The pairs; each trial draws one ensemble of ``M`` projections shared by all pairs.
    dist : {"poisson", "geometric"}
        ``p_k``: Poisson(lambda) (PoisRF) or geometric ``p (1-p)^k`` on {0, 1, ...} (GeomRF).
    param : float
        ``lambda > 0`` (<= 1e9) or ``0 < p < 1`` (sampler: ``p >= 1e-12``).
    M : int
        Number of random features (>= 1).
    n_trials : int
        Number of independent replicas (>= 1).
    seed : int
        Integer in ``[0, 2**64)``.  Same seed, same numbers, whatever the thread count.
    shift : array_like, shape (d,), optional
        The vector ``c`` of CRT sec 3.2.3 (PoisRF+ / GeomRF+): features of ``x - c``, ``y - c``.

    Returns
    -------
    ndarray, shape (P, n_trials)
        ``K_hat_M`` of each pair in each trial; unbiased for ``exp(-|x-y|^2/2)``.

    References
    ----------
    CRT sec 3.2, eq (9)-(10); variances Thm 3.4 (eq 11) and Thm 3.5 (eq 13).
    """
    dist, param = _check_param(dist, param)
    M = validate.positive_int(M, "M")
    n_trials = validate.positive_int(n_trials, "n_trials")
    key = np.uint64(_rng.seed_key(seed))
    pa = _pair_args(x, y, dist, param, shift)
    sa = _sampler_args(dist, param, pa["d"])
    out = np.empty((pa["b"].shape[0], n_trials))
    run_jobs(_kernel, n_blocks(n_trials, TRIALS_PER_BLOCK), sa["code"], sa["mode"], key, np.uint64(_stream(dist)), M,
             pa["d"], *_engine_args(sa), pa["b"], pa["neg"], pa["zero"], pa["any_zero"], pa["c0"], sa["lgtab"], out)
    return out


def draw_counts(dist: str, param: float, n: int, M: int = 1, d: int = 1, *, seed: int = 0) -> np.ndarray:
    """``(n, M, d)`` projections exactly as :func:`simulate` draws them (``[t]`` = the
    ensemble of trial ``t``, for the same ``seed``, ``M`` and ``d``).  For tests and users.

    Parameters
    ----------
    dist : {"poisson", "geometric"}
        The law of the entries: Poisson(lambda) or geometric ``p (1-p)^k`` on {0, 1, ...}.
    param : float
        ``lambda`` or ``p``.
    n : int
        Number of trials (>= 1).
    M, d : int, default 1
        Projections per trial and their dimension (>= 1).
    seed : int, default 0
        Integer in ``[0, 2**64)``.

    Returns
    -------
    numpy.ndarray, shape (n, M, d)
        The counts (float64, nonnegative integer values).

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS`, or ``param`` is out of range (Poisson:
        not ``0 < lambda <= 1e9``; geometric: not ``0 < p < 1``, or ``p <`` :data:`GEOMETRIC_P_MIN`);
        if ``n``, ``M`` or ``d`` is not an integer >= 1, or ``seed`` not an integer in ``[0, 2**64)``.

    References
    ----------
    CRT sec 3.2, eq (9)-(10) (the i.i.d. projections of PoisRF and GeomRF).

    Examples
    --------
    >>> w = draw_counts("poisson", 0.5, 3, M=2, d=4, seed=1)
    >>> w.shape, bool((w >= 0).all() and (w == w.round()).all())
    ((3, 2, 4), True)
    >>> bool((w == draw_counts_reference("poisson", 0.5, 3, M=2, d=4, seed=1)).all())
    True
    """
    dist, param = _check_param(dist, param)
    n = validate.positive_int(n, "n")
    M = validate.positive_int(M, "M")
    d = validate.positive_int(d, "d")
    sa = _sampler_args(dist, param, d)
    out = np.empty((n, M * d))
    run_jobs(_counts_kernel, n_blocks(n, TRIALS_PER_BLOCK), sa["mode"], np.uint64(_rng.seed_key(seed)),
             np.uint64(_stream(dist)), M, d, *_engine_args(sa), out)
    return out.reshape(n, M, d)


# --------------------------------------------------------------------------- Python twin
def _py_log_factorial(k: float, lgtab: list[float]) -> float:
    if k < len(lgtab):
        return lgtab[int(k)]
    n = k + 1.0
    r = 1.0 / n
    r2 = r * r
    return ((n - 0.5) * math.log(n) - n + _HALF_LOG_2PI) + r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 / 1260.0))


def _py_feature_product(dist: str, row: list[float], b: np.ndarray, neg: np.ndarray, zero: np.ndarray,
                        c0: float, lgtab: list[float], table_mode: bool, sparse: bool) -> float:
    """Twin of one term of :func:`_pair_mean` (same operations in the same order); with
    ``sparse`` (or a zero coordinate) the loop over the nonzero counts of :func:`_pair_mean_sparse`."""
    s = 0.0
    par = 0
    if sparse or bool(np.any(zero)):
        for k, bl, nl, zl in zip(row, b, neg, zero, strict=True):
            if k != 0.0:
                if zl:
                    s = -math.inf
                else:
                    s += k * float(bl)
                    if dist == "geometric":
                        s -= _py_log_factorial(k, lgtab)
                    par ^= int(k) & int(nl)
    else:
        tmax = len(lgtab) - 1
        acc = [0.0, 0.0, 0.0, 0.0]
        for j, (k, bl, nl) in enumerate(zip(row, b, neg, strict=True)):
            t = k * float(bl)
            if dist == "geometric":
                t = t - lgtab[min(int(k), tmax)]
            acc[j % 4 if j < len(row) - len(row) % 4 else 0] += t
            par += int(k) & int(nl)
        s = (acc[0] + acc[1]) + (acc[2] + acc[3])
        if dist == "geometric" and not table_mode and max(row) > tmax:
            s = 0.0
            for k, bl in zip(row, b, strict=True):
                s += k * float(bl) - _py_log_factorial(k, lgtab)
    v = math.exp(c0 + s)
    return -v if (par & 1) == 1 else v


class _PySampler:
    """Plain-Python twin of the count draws on one block's generator."""

    def __init__(self, dist: str, param: float, d: int, seed: int, block: int) -> None:
        sa = _sampler_args(dist, param, d)
        self.mode, self.k_lo, self.shift, self.inv = sa["mode"], sa["k_lo"], sa["shift"], sa["inv_log"]
        self.T = [int(v) for v in sa["T"]]
        self.guide = [int(v) for v in sa["guide"]]
        self.TG = [int(v) for v in sa["TG"]]
        self.guideG = [int(v) for v in sa["guideG"]]
        self.shiftG = sa["shiftG"]
        self.g = _rng.PySplitMix(seed, _stream(dist), block, 0)

    def _table(self, T: list[int], guide: list[int], shift: int) -> int:
        v = self.g.next_u64() >> 11
        i = guide[v >> shift]
        while T[i] <= v:
            i += 1
        return i

    def ensemble(self, M: int, d: int) -> list[float]:
        """The ``M * d`` counts of one trial (twin of :func:`_fill_counts` / :func:`_fill_sparse`)."""
        if self.mode == 0:
            return [float(self.k_lo + self._table(self.T, self.guide, self.shift)) for _ in range(M * d)]
        if self.mode == 1:
            return [float(math.floor(math.log(self.g.uniform_open()) * self.inv)) for _ in range(M * d)]
        out = [0.0] * (M * d)
        for r0 in range(0, M * d, d):
            pos = -1
            while True:
                pos += self._table(self.TG, self.guideG, self.shiftG) + 1
                if pos >= d:
                    break
                out[r0 + pos] = float(self.k_lo + self._table(self.T, self.guide, self.shift))
        return out


def draw_counts_reference(dist: str, param: float, n: int, M: int = 1, d: int = 1, *, seed: int = 0) -> np.ndarray:
    """Plain-Python twin of :func:`draw_counts` (bit-identical; slow).

    Parameters
    ----------
    dist : {"poisson", "geometric"}
        The law of the entries.
    param : float
        ``lambda`` or ``p``.
    n : int
        Number of trials (>= 1).
    M, d : int, default 1
        Projections per trial and their dimension (>= 1).
    seed : int, default 0
        Integer in ``[0, 2**64)``.

    Returns
    -------
    numpy.ndarray, shape (n, M, d)
        The counts :func:`draw_counts` gives for the same arguments.

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS`, or ``param`` is out of range (Poisson:
        not ``0 < lambda <= 1e9``; geometric: not ``0 < p < 1``, or ``p <`` :data:`GEOMETRIC_P_MIN`);
        if ``n``, ``M`` or ``d`` is not an integer >= 1, or ``seed`` not an integer in ``[0, 2**64)``.

    References
    ----------
    CRT sec 3.2, eq (9)-(10).

    Examples
    --------
    The geometric law with ``p = 0.05`` uses the dense table sampler, ``p = 0.9`` the sparse one:

    >>> for p in (0.05, 0.9):
    ...     a = draw_counts_reference("geometric", p, 2, M=3, d=5, seed=4)
    ...     print(a.shape, bool((a == draw_counts("geometric", p, 2, M=3, d=5, seed=4)).all()))
    (2, 3, 5) True
    (2, 3, 5) True
    """
    dist, param = _check_param(dist, param)
    n = validate.positive_int(n, "n")
    M = validate.positive_int(M, "M")
    d = validate.positive_int(d, "d")
    key = _rng.seed_key(seed)
    out = np.empty((n, M * d))
    for blk in range(n_blocks(n, TRIALS_PER_BLOCK)):
        s = _PySampler(dist, param, d, key, blk)
        for t in range(blk * TRIALS_PER_BLOCK, min(n, (blk + 1) * TRIALS_PER_BLOCK)):
            out[t] = s.ensemble(M, d)
    return out.reshape(n, M, d)


def simulate_reference(x: Any, y: Any, dist: str, param: float, M: int, n_trials: int, *, seed: int = 0,
                       shift: Any = None) -> np.ndarray:
    """Plain-Python twin of :func:`simulate` (same streams and order; slow, for parity tests).

    Parameters
    ----------
    x, y : array_like, shape (d,) or (P, d)
        The pairs; each trial draws one ensemble of ``M`` projections shared by all pairs.
    dist : {"poisson", "geometric"}
        ``p_k``: Poisson(lambda) (PoisRF) or geometric ``p (1-p)^k`` on {0, 1, ...} (GeomRF).
    param : float
        ``lambda > 0`` (<= 1e9) or ``0 < p < 1`` (``p >=`` :data:`GEOMETRIC_P_MIN`).
    M : int
        Number of random features (>= 1).
    n_trials : int
        Number of independent replicas (>= 1).
    seed : int, default 0
        Integer in ``[0, 2**64)``.
    shift : array_like, shape (d,), optional
        The vector ``c`` of CRT sec 3.2.3 (PoisRF+ / GeomRF+): features of ``x - c``, ``y - c``.

    Returns
    -------
    numpy.ndarray, shape (P, n_trials)
        The estimates :func:`simulate` gives for the same arguments (to the last bit with the
        same ``libm``).

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS`, or ``param`` is out of range (Poisson:
        not ``0 < lambda <= 1e9``; geometric: not ``0 < p < 1``, or ``p <`` :data:`GEOMETRIC_P_MIN`);
        if ``M`` or ``n_trials`` is not an integer >= 1, ``seed`` not an integer in ``[0, 2**64)``,
        ``x``/``y``/``shift`` hold non-finite values, or their shapes do not match.

    References
    ----------
    CRT sec 3.2, eq (9)-(10).

    Examples
    --------
    >>> import numpy as np
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> ref = simulate_reference(x, y, "poisson", 0.5, 4, 3, seed=2)
    >>> ref.shape, bool(np.allclose(ref, simulate(x, y, "poisson", 0.5, 4, 3, seed=2), rtol=1e-14, atol=0))
    ((1, 3), True)
    """
    dist, param = _check_param(dist, param)
    M = validate.positive_int(M, "M")
    n_trials = validate.positive_int(n_trials, "n_trials")
    key = _rng.seed_key(seed)
    pa = _pair_args(x, y, dist, param, shift)
    d = pa["d"]
    P = pa["b"].shape[0]
    sa = _sampler_args(dist, param, d)
    mode = sa["mode"]
    lgtab = [float(v) for v in sa["lgtab"]]
    out = np.empty((P, n_trials))
    for blk in range(n_blocks(n_trials, TRIALS_PER_BLOCK)):
        s = _PySampler(dist, param, d, key, blk)
        for t in range(blk * TRIALS_PER_BLOCK, min(n_trials, (blk + 1) * TRIALS_PER_BLOCK)):
            counts = s.ensemble(M, d)
            for p in range(P):
                b, neg, zero, c0 = pa["b"][p], pa["neg"][p], pa["zero"][p], float(pa["c0"][p])
                terms = [_py_feature_product(dist, counts[m * d:(m + 1) * d], b, neg, zero, c0, lgtab,
                                             mode != 1, mode == 2) for m in range(M)]
                acc = 0.0
                for e in terms:
                    acc += e
                out[p, t] = acc / M
    return out


# --------------------------------------------------------------------------- NumPy baseline
def simulate_numpy(x: Any, y: Any, dist: str, param: float, M: int, n_trials: int, *, seed: int = 0,
                   shift: Any = None, chunk_elems: int = 1 << 20) -> np.ndarray:
    """Vectorised NumPy estimator replicas: the baseline of ``rfcheck bench`` and a
    distributional cross-check of :func:`simulate` (equal in law, not in numbers).

    Per chunk of trials: counts ``(n, M, d)`` from ``numpy.random.Generator.poisson`` or
    ``.geometric - 1``; the log-moduli ``W @ b`` (one matrix product) plus, for GeomRF,
    ``log k!`` by table lookup (``scipy.special.gammaln`` beyond the table); the signs from
    ``(W mod 2) @ neg``; ``exp`` and the mean over ``M``.

    Parameters
    ----------
    x, y : array_like, shape (d,) or (P, d)
        The pairs; each trial draws one ensemble of ``M`` projections shared by all pairs.
    dist : {"poisson", "geometric"}
        ``p_k``: Poisson(lambda) (PoisRF) or geometric ``p (1-p)^k`` on {0, 1, ...} (GeomRF).
    param : float
        ``lambda > 0`` (<= 1e9) or ``0 < p < 1`` (``p >=`` :data:`GEOMETRIC_P_MIN`).
    M : int
        Number of random features (>= 1).
    n_trials : int
        Number of independent replicas (>= 1).
    seed : int, default 0
        Integer in ``[0, 2**64)``.
    shift : array_like, shape (d,), optional
        The vector ``c`` of CRT sec 3.2.3 (PoisRF+ / GeomRF+): features of ``x - c``, ``y - c``.
    chunk_elems : int, default 2**20
        A bound on the counts drawn at once: each chunk holds ``max(1, chunk_elems // (M d))``
        trials (memory use).

    Returns
    -------
    numpy.ndarray, shape (P, n_trials)
        ``K_hat_M`` of each pair in each trial; unbiased for ``exp(-|x-y|^2/2)``.

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS`, or ``param`` is out of range (Poisson:
        not ``0 < lambda <= 1e9``; geometric: not ``0 < p < 1``, or ``p <`` :data:`GEOMETRIC_P_MIN`);
        if ``M`` or ``n_trials`` is not an integer >= 1, ``seed`` not an integer in ``[0, 2**64)``,
        ``x``/``y``/``shift`` hold non-finite values, or their shapes do not match.

    References
    ----------
    CRT sec 3.2, eq (9)-(10).

    Examples
    --------
    The estimates are unbiased for the Gaussian kernel (here within 5 standard errors):

    >>> import numpy as np
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> est = simulate_numpy(x, y, "geometric", 0.5, 64, 2000, seed=0)
    >>> k = np.exp(-np.sum((x - y) ** 2) / 2)
    >>> est.shape, bool(abs(est.mean() - k) < 5 * est.std() / np.sqrt(est.size))
    ((1, 2000), True)
    """
    dist, param = _check_param(dist, param)
    M = validate.positive_int(M, "M")
    n_trials = validate.positive_int(n_trials, "n_trials")
    pa = _pair_args(x, y, dist, param, shift)
    b, neg, zero, c0, d = pa["b"], pa["neg"], pa["zero"], pa["c0"], pa["d"]
    b = np.where(zero, 0.0, b)
    rng = np.random.default_rng(_rng.seed_key(seed))
    out = np.empty((b.shape[0], n_trials))
    per = max(1, chunk_elems // (M * d))
    any_zero = bool(np.any(zero))
    for start in range(0, n_trials, per):
        n = min(per, n_trials - start)
        if dist == "poisson":
            W = rng.poisson(param, size=(n, M, d))
        else:
            W = rng.geometric(param, size=(n, M, d)) - 1
        Wf = W.astype(float)
        s = Wf @ b.T + c0  # (n, M, P)
        if dist == "geometric":
            lf = _LGAMMA_TABLE[np.minimum(W, _LGAMMA_TABLE_SIZE - 1)]
            big = W >= _LGAMMA_TABLE_SIZE
            if big.any():
                lf[big] = sc.gammaln(Wf[big] + 1)
            s -= lf.sum(axis=2)[..., None]
        if any_zero:
            s = np.where((W > 0).astype(float) @ zero.T.astype(float) > 0, -np.inf, s)
        odd = ((W & 1).astype(float) @ neg.T.astype(float)) % 2  # (n, M, P)
        vals = np.exp(s) * (1.0 - 2.0 * odd)
        out[:, start:start + n] = vals.mean(axis=1).T
    return out


CACHE_FILES = ("bits.py", "llvm_vectors.py", "simd_ziggurat.py", "rng.py", "discrete_engine.py")
"""The modules whose compiled code this module's kernels inline: their on-disk Numba cache is
keyed to these files' contents (:func:`rfcheck.engine.rng.tie_cache_to_engine`)."""

_rng.tie_cache_to_engine(globals(), CACHE_FILES, "rfcheck-discrete-engine")

"""Monte Carlo engine: independent replicas of a random-feature estimator.

For one pair ``(x, y)`` described by an :class:`~rfcheck.features.ExpProduct`, the
estimator of ``M`` features is

    K_hat_M = (1/M) sum_m Re exp(log_c + alpha |w_m|^2 + beta w_m . u),

with ``w_1..w_M`` drawn jointly by a coupling (:mod:`rfcheck.engine.couplings`).
:func:`simulate` returns ``n_trials`` independent replicas of ``K_hat_M`` for every pair.

Two paths
---------
``"ensemble"``
    one ensemble ``W`` (M, d) is drawn per trial and serves all ``P`` pairs
    (``W @ u.T`` and the row norms); replicas of different pairs in the same trial are
    dependent, as in a real feature map.
``"projection"``
    the estimator depends on ``W`` only through ``(|w_m|^2, w_m . u_hat)``, whose joint law
    each coupling with a projection sampler draws directly (``O(M + d)`` per trial for
    ORF instead of ``O(d^3)``).  Pairs get independent random streams.

Both are compiled with Numba (``fastmath=False``): trials are split into fixed blocks of
:data:`TRIALS_PER_BLOCK`, each with its own generator seeded from ``(seed, stream, block)``
(:mod:`rfcheck.engine.rng`), run on Numba's thread count by
:func:`rfcheck.engine.parallel.run_jobs`, so the numbers do not depend on the thread count.
:func:`simulate_reference` is a plain-Python twin that gives bit-identical numbers (slow; for
parity tests), and :func:`simulate_numpy` a vectorised NumPy implementation that draws full
matrices (batched QR), used as a baseline and distributional cross-check.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from rfcheck import validate
from rfcheck.engine import couplings as _cp
from rfcheck.engine import rng as _rng
from rfcheck.engine.bits import pow2
from rfcheck.engine.parallel import n_blocks, run_jobs
from rfcheck.engine.project import column_sqnorms as _column_sqnorms
from rfcheck.engine.project import project as _project
from rfcheck.features import ExpProduct

__all__ = [
    "PATHS",
    "TRIALS_PER_BLOCK",
    "exp_into",
    "exp_work",
    "simplex_matrix",
    "simulate",
    "simulate_numpy",
    "simulate_reference",
]

TRIALS_PER_BLOCK = 64
"""Trials per independently seeded block (part of the stream definition: changing it
changes the numbers)."""

#: the two simulation paths of :func:`simulate` (see the module docstring)
PATHS = ("projection", "ensemble")
_PATH_CODE = {"projection": 0, "ensemble": 1}


# --------------------------------------------------------------------------- kernels
_LN2_HI = 6.93147180369123816490e-01  # fdlibm split of ln 2: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700
(_E0, _E1, _E2, _E3, _E4, _E5, _E6, _E7, _E8, _E9, _E10, _E11, _E12, _E13) = (
    1.0 / math.factorial(n) for n in range(14)
)
_EXP_MIN, _EXP_MAX = -708.0, 709.0  # fast path range: 2^k and the result stay normal


@njit(cache=True, error_model="numpy", inline="always")
def _exp_reduce(x):
    """``x = k ln2 + r``, ``|r| <= ln2 / 2`` (Cody-Waite, two-part ``ln 2``): ``(float(k), r)``;
    arguments outside ``[-708, 709]`` are replaced by 0 (the caller redoes them with libm)."""
    ok = (x >= _EXP_MIN) & (x <= _EXP_MAX)
    x = x if ok else 0.0
    kf = np.floor(x * _INV_LN2 + 0.5)
    return kf, (x - kf * _LN2_HI) - kf * _LN2_LO


@njit(cache=True, error_model="numpy")
def exp_work(x, out, r, kf):
    """``out[i] = exp(x[i])`` (``<= 1 ulp``) with scratch ``r``, ``kf``; ``out``, ``r``, ``kf``
    need ``>= len(x)`` elements (``ValueError`` otherwise: Numba does not check bounds) and
    must not overlap ``x`` (the last pass reads ``x`` again).

    The fast path, for ``-708 <= x <= 709``: :func:`_exp_reduce`, then ``e^r`` by its Taylor
    polynomial of degree 13 (truncation < 5e-18 relative) in Horner form, times ``2^k`` built
    from its bits (:func:`rfcheck.engine.bits.pow2`); arguments outside that range (overflow,
    underflow, inf, NaN) take ``math.exp`` in a last pass.

    The Horner chain runs in **three passes** over the array (steps 13..9, 8..4, 3..0), the
    same operations in the same order, so the results are bit-identical to one pass.  Why:
    the 26 dependent operations of one pass are a latency chain (~80 cycles per vector) and
    the out-of-order window holds only ~2 iterations of it; three shorter chains let ~3x as
    many vectors be in flight.  Measured on the AVX2 machine (Zen 3, one thread, 64
    arguments): 220-235 ns in one pass, 140-165 ns in three; two passes gave 140-180 ns, one
    pass per Horner step 230-250 ns (loop overhead), recomputing ``r`` in each pass instead of
    storing it 230 ns (``vroundpd`` latency back on the chain).  Until 2026-11-25 ``2^k`` came
    from two tables indexed by ``int(k)``: the same numbers, but on AVX2 (no SIMD
    double -> int64 conversion, no cheap gathers) LLVM did the conversion and both lookups one
    lane at a time.

    Parameters
    ----------
    x : numpy.ndarray of float64, shape (n,)
        The arguments (any doubles: inf and NaN included).
    out : numpy.ndarray of float64, shape (>= n,)
        ``out[:n]`` receives ``exp(x)``; must not overlap ``x``.
    r, kf : numpy.ndarray of float64, shape (>= n,)
        Scratch, overwritten (the reduced arguments and the exponents ``k``).

    Raises
    ------
    ValueError
        If ``out``, ``r`` or ``kf`` has fewer than ``len(x)`` elements.

    Examples
    --------
    Within one ulp of ``math.exp`` over the whole range, and ``math.exp``'s own values (inf,
    0, NaN) outside the fast path:

    >>> import math
    >>> import numpy as np
    >>> from rfcheck.engine.montecarlo import exp_work
    >>> x = np.concatenate([np.linspace(-745.0, 709.7, 20001), [-np.inf, np.inf, np.nan, 710.0]])
    >>> out, r, kf = np.empty(x.size), np.empty(x.size), np.empty(x.size)
    >>> exp_work(x, out, r, kf)
    >>> ref = [math.exp(v) for v in x[:-4]]
    >>> all(abs(o - e) <= math.ulp(e) for o, e in zip(out[:-4], ref)), out[-4:].tolist()
    (True, [0.0, inf, nan, inf])
    >>> exp_work(x, out, r, kf[:10])
    Traceback (most recent call last):
    ...
    ValueError: exp_work: out, r and kf need at least len(x) elements
    """
    n = x.shape[0]
    if out.shape[0] < n or r.shape[0] < n or kf.shape[0] < n:
        raise ValueError("exp_work: out, r and kf need at least len(x) elements")
    nbad = 0
    for i in range(n):
        xi = x[i]
        nbad += np.int64(not ((xi >= _EXP_MIN) & (xi <= _EXP_MAX)))
        k, ri = _exp_reduce(xi)
        kf[i] = k
        r[i] = ri
        p = _E13 * ri + _E12
        p = p * ri + _E11
        p = p * ri + _E10
        out[i] = p * ri + _E9
    for i in range(n):
        ri = r[i]
        p = out[i] * ri + _E8
        p = p * ri + _E7
        p = p * ri + _E6
        p = p * ri + _E5
        out[i] = p * ri + _E4
    for i in range(n):
        ri = r[i]
        p = out[i] * ri + _E3
        p = p * ri + _E2
        p = p * ri + _E1
        p = p * ri + _E0
        out[i] = p * pow2(kf[i])
    if nbad > 0:
        for i in range(n):
            xi = x[i]
            if not ((xi >= _EXP_MIN) & (xi <= _EXP_MAX)):
                out[i] = math.exp(xi)


@njit(cache=True, error_model="numpy")
def exp_into(x, out):
    """``out[i] = exp(x[i])``: :func:`exp_work` with its scratch allocated here.

    Parameters
    ----------
    x : numpy.ndarray of float64, shape (n,)
        The arguments (any doubles).
    out : numpy.ndarray of float64, shape (>= n,)
        ``out[:n]`` receives ``exp(x)`` (within 1 ulp, :func:`exp_work`); must not overlap ``x``.

    Raises
    ------
    ValueError
        From :func:`exp_work`, if ``out`` has fewer than ``len(x)`` elements.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> from rfcheck.engine.montecarlo import exp_into
    >>> x = np.random.default_rng(0).uniform(-700.0, 700.0, 1000)
    >>> out = np.empty(1000)
    >>> exp_into(x, out)
    >>> all(abs(o - math.exp(v)) <= math.ulp(math.exp(v)) for o, v in zip(out, x))
    True
    """
    n = x.shape[0]
    exp_work(x, out, np.empty(n), np.empty(n))


@njit(cache=True, error_model="numpy", inline="always")
def _sum4(e, M):
    """``sum(e[:M])`` in a fixed order: four interleaved partial sums (``m mod 4``), then
    ``(s0 + s1) + (s2 + s3)``."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    m = 0
    while m + 3 < M:
        s0 += e[m]
        s1 += e[m + 1]
        s2 += e[m + 2]
        s3 += e[m + 3]
        m += 4
    if m < M:
        s0 += e[m]
    if m + 1 < M:
        s1 += e[m + 1]
    if m + 2 < M:
        s2 += e[m + 2]
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, error_model="numpy", inline="always")
def _mean_product(lcr, lci, ar, ai, br, bi, cplx, need_sq, sq, proj, scale, M, z, e, w):
    """``(1/M) sum_m Re exp(lc + alpha sq_m + beta scale proj_m)``; ``z, e`` (>= M) and ``w``
    (2, >= M) scratch.

    ``Re z_m = (lcr + ar sq_m) + br (scale proj_m)`` (the ``sq`` term only if ``need_sq``),
    exponentials by :func:`exp_work`, times ``cos(Im z_m)`` if ``cplx``, summed by
    :func:`_sum4`.
    """
    zz = z[:M]
    ee = e[:M]
    if need_sq:
        for m in range(M):
            zz[m] = (lcr + ar * sq[m]) + br * (scale * proj[m])
    else:
        for m in range(M):
            zz[m] = lcr + br * (scale * proj[m])
    exp_work(zz, ee, w[0], w[1])
    if cplx:
        for m in range(M):
            zi = lci
            if need_sq:
                zi += ai * sq[m]
            ee[m] = ee[m] * math.cos(zi + bi * (scale * proj[m]))
    return _sum4(ee, M) / M


@njit(cache=True, error_model="numpy", nogil=True)
def _projection_jobs(code, seed, stream0, M, d, lcr, lci, ar, ai, br, bi, unorm, cplx, need_sq,
                     out, lo, hi):
    """Jobs ``lo <= job < hi`` of the projection path (a range kernel of
    :func:`rfcheck.engine.parallel.run_jobs`); job ``p nb + b`` (``nb`` blocks per pair) is
    the trials of block ``b`` of pair ``p``, on the stream ``stream0 + p``.

    The coupling's sampler is inlined into the trial loop: a call per trial, its array
    arguments reference-counted, would cost ~50 ns against ~300 ns for a whole iid projection
    trial."""
    n_trials = out.shape[1]
    nb = (n_trials + TRIALS_PER_BLOCK - 1) // TRIALS_PER_BLOCK
    for job in range(lo, hi):
        p = job // nb
        blk = job - p * nb
        t = np.empty(M)
        sq = np.empty(M)
        z = np.empty(M)
        e = np.empty(M)
        w = np.empty((2, M))
        vec, raw = _cp.projection_scratch(M, d)
        st = _rng.init_block(seed, stream0 + np.uint64(p), np.uint64(blk), raw)
        stop = min(n_trials, (blk + 1) * TRIALS_PER_BLOCK)
        for trial in range(blk * TRIALS_PER_BLOCK, stop):
            st = _cp.projection_into(code, st, M, d, need_sq, t, sq, vec, raw)
            out[p, trial] = _mean_product(lcr[p], lci[p], ar, ai, br, bi, cplx, need_sq, sq, t,
                                          unorm[p], M, z, e, w)


@njit(cache=True, error_model="numpy", nogil=True)
def _ensemble_jobs(code, seed, stream, M, d, lcr, lci, ar, ai, br, bi, U, cplx, need_sq, out,
                   lo, hi):
    """Blocks ``lo <= b < hi`` of the ensemble path, every pair on each trial's ensemble (a
    range kernel of :func:`rfcheck.engine.parallel.run_jobs`; the sampler's dispatch is inlined
    into the trial loop, as in :func:`_projection_jobs`)."""
    n_pairs, n_trials = out.shape
    for blk in range(lo, hi):
        Wt = _cp.empty_lines(d * M).reshape((d, M))
        X, vec, raw, nbuf = _cp.scratch(M, d)
        st = _rng.init_block(seed, stream, np.uint64(blk), raw)
        proj = np.empty(M)
        sq = np.empty(M)
        z = np.empty(M)
        e = np.empty(M)
        w = np.empty((2, M))
        stop = min(n_trials, (blk + 1) * TRIALS_PER_BLOCK)
        for trial in range(blk * TRIALS_PER_BLOCK, stop):
            st = _cp.ensemble_into(code, st, M, d, Wt, X, vec, raw, nbuf)
            if need_sq:
                _column_sqnorms(sq, Wt)
            for p in range(n_pairs):
                _project(proj, Wt, U[p])
                out[p, trial] = _mean_product(lcr[p], lci[p], ar, ai, br, bi, cplx, need_sq, sq,
                                              proj, 1.0, M, z, e, w)


# --------------------------------------------------------------------------- public API
def _check(prod: object, M: object, n_trials: object, coupling: object, path: object):
    if not isinstance(prod, ExpProduct):
        raise ValueError(f"prod must be a features.ExpProduct; got {type(prod).__name__}")
    M = validate.positive_int(M, "M")
    n_trials = validate.positive_int(n_trials, "n_trials")
    c = _cp.get_coupling(coupling)
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}; got {path!r}")
    if path == "projection" and not c.has_projection:
        raise ValueError(f"coupling {c.name!r} has no projection sampler; use path='ensemble'")
    u = validate.finite_array(prod.u, "prod.u")
    if u.ndim != 2 or u.shape[0] < 1 or u.shape[1] < 1:
        raise ValueError(f"prod.u must have shape (P, d) with P, d >= 1; got {u.shape}")
    _cp.check_dim(c, u.shape[1])
    log_c = np.asarray(prod.log_c)
    if log_c.shape != (u.shape[0],):
        raise ValueError(f"prod.log_c must have shape (P,) = ({u.shape[0]},); got {log_c.shape}")
    if not np.all(np.isfinite(log_c)):
        raise ValueError("prod.log_c must be finite")
    alpha = validate.finite_complex(prod.alpha, "prod.alpha")
    beta = validate.finite_complex(prod.beta, "prod.beta")
    return c, M, n_trials, np.ascontiguousarray(u), log_c, alpha, beta


def simulate(
    prod: ExpProduct,
    M: int,
    n_trials: int,
    *,
    coupling: str = "iid",
    path: str = "projection",
    seed: int = 0,
) -> np.ndarray:
    """Independent replicas of the random-feature estimator ``K_hat_M`` (Numba engine).

    Parameters
    ----------
    prod : features.ExpProduct
        Feature product ``Re exp(log_c + alpha |w|^2 + beta w.u)`` of ``P`` pairs.
    M : int
        Number of random features per estimator (>= 1).
    n_trials : int
        Number of independent replicas (>= 1).
    coupling : str
        Key of :data:`rfcheck.engine.couplings.COUPLINGS` (``"iid"``, ``"orf"``, ``"simrf"``,
        ``"simrf+"``, and each with ``"-anti"``: antithetic pairs; ensemble path only:
        ``"orf-hd"``, ``"simrf-hd"``, the HD-product fast variants).
    path : {"projection", "ensemble"}
        ``"projection"`` draws ``(|w_m|^2, w_m . u_hat)`` from their joint law, pairs on
        independent streams; ``"ensemble"`` draws one ensemble ``W`` per trial shared by
        all pairs.  Equal in law for each pair.
    seed : int
        Integer in ``[0, 2**64)``.  Same seed, same numbers, whatever the thread count.

    Returns
    -------
    ndarray, shape (P, n_trials)
        ``K_hat_M`` of each pair in each trial; unbiased for ``prod.target``.

    Raises
    ------
    ValueError
        For an unknown coupling or path, a coupling the path does not support, or counts below 1.

    Notes
    -----
    Real arithmetic is used when ``prod.is_real`` (PosRF, OPRF, real GERF), otherwise
    ``Re exp(z) = exp(Re z) cos(Im z)``.  ``|w|^2`` is drawn only when ``alpha != 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck import features
    >>> from rfcheck.engine.montecarlo import simulate
    >>> prod = features.positive_product(np.array([0.1, 0.2]), np.array([0.2, -0.1]))
    >>> est = simulate(prod, 16, 10_000, coupling="orf", seed=0)
    >>> est.shape, bool(abs(est.mean() - prod.target[0]) < 0.01)
    ((1, 10000), True)
    """
    c, M, n_trials, u, log_c, alpha, beta = _check(prod, M, n_trials, coupling, path)
    key = np.uint64(_rng.seed_key(seed))
    P, d = u.shape
    # fresh writable copies: np.imag of a real array is read-only, and a read-only array is
    # another type to Numba -- a second compilation of the kernel for real products
    lcr = np.array(np.real(log_c), dtype=float, order="C")
    lci = np.array(np.imag(log_c), dtype=float, order="C")
    cplx = not (alpha.imag == 0.0 and beta.imag == 0.0 and not np.any(lci != 0.0))
    need_sq = alpha != 0
    out = np.empty((P, n_trials))
    stream = np.uint64(_cp.stream_tag(c.code, _PATH_CODE[path]))
    if path == "projection":
        unorm = np.sqrt(np.sum(u * u, axis=1))
        run_jobs(_projection_jobs, P * n_blocks(n_trials, TRIALS_PER_BLOCK), c.code, key, stream, M, d, lcr, lci,
                 alpha.real, alpha.imag, beta.real, beta.imag, unorm, cplx, need_sq, out)
    else:
        run_jobs(_ensemble_jobs, n_blocks(n_trials, TRIALS_PER_BLOCK), c.code, key, stream, M, d, lcr, lci,
                 alpha.real, alpha.imag, beta.real, beta.imag, u, cplx, need_sq, out)
    return out


# --------------------------------------------------------------------------- Python twin
def _py_exp(x: float) -> float:
    """Twin of :func:`exp_into` for one argument."""
    if not (_EXP_MIN <= x <= _EXP_MAX):
        try:
            return math.exp(x)
        except OverflowError:
            return math.inf
    kf = float(math.floor(x * _INV_LN2 + 0.5))
    r = (x - kf * _LN2_HI) - kf * _LN2_LO
    p = _E13 * r + _E12
    for c in (_E11, _E10, _E9, _E8, _E7, _E6, _E5, _E4, _E3, _E2, _E1, _E0):
        p = p * r + c
    return p * 2.0 ** int(kf)  # exact: -1021 <= k <= 1023


def _py_mean_product(lcr, lci, ar, ai, br, bi, cplx, need_sq, sq, proj, scale, M) -> float:
    e = []
    for m in range(M):
        if need_sq:
            zr = (lcr + ar * sq[m]) + br * (scale * proj[m])
        else:
            zr = lcr + br * (scale * proj[m])
        v = _py_exp(zr)
        if cplx:
            zi = lci
            if need_sq:
                zi += ai * sq[m]
            v = v * math.cos(zi + bi * (scale * proj[m]))
        e.append(v)
    acc = [0.0, 0.0, 0.0, 0.0]
    for m in range(M):
        acc[m % 4] += e[m]
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) / M


def simulate_reference(
    prod: ExpProduct,
    M: int,
    n_trials: int,
    *,
    coupling: str = "iid",
    path: str = "projection",
    seed: int = 0,
) -> np.ndarray:
    """Plain-Python twin of :func:`simulate`: same streams, bit-identical numbers.

    Pure Python loops (slow); for parity tests and for reading the algorithm.  Parameters
    and return value as :func:`simulate`.

    Parameters
    ----------
    prod : features.ExpProduct
        Feature product ``Re exp(log_c + alpha |w|^2 + beta w.u)`` of ``P`` pairs.
    M : int
        Number of random features per estimator (>= 1).
    n_trials : int
        Number of independent replicas (>= 1).
    coupling : str, optional
        Key of :data:`rfcheck.engine.couplings.COUPLINGS` (default ``"iid"``).
    path : {"projection", "ensemble"}, optional
        As in :func:`simulate` (default ``"projection"``).
    seed : int, optional
        Integer in ``[0, 2**64)`` (default 0).

    Returns
    -------
    ndarray, shape (P, n_trials)
        The same numbers as :func:`simulate` with the same arguments, bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck import features
    >>> from rfcheck.engine.montecarlo import simulate, simulate_reference
    >>> prod = features.positive_product(np.array([0.1, 0.2]), np.array([0.2, -0.1]))
    >>> ref = simulate_reference(prod, 4, 3, coupling="orf", seed=5)
    >>> ref.shape, bool(np.array_equal(ref, simulate(prod, 4, 3, coupling="orf", seed=5)))
    ((1, 3), True)
    """
    c, M, n_trials, u, log_c, alpha, beta = _check(prod, M, n_trials, coupling, path)
    key = _rng.seed_key(seed)
    P, d = u.shape
    lcr = [float(v) for v in np.real(log_c)]
    lci = [float(v) for v in np.imag(log_c)]
    ar, ai, br, bi = alpha.real, alpha.imag, beta.real, beta.imag
    cplx = not (ai == 0.0 and bi == 0.0 and not any(v != 0.0 for v in lci))
    need_sq = alpha != 0
    out = np.empty((P, n_trials))
    tag = _cp.stream_tag(c.code, _PATH_CODE[path])
    uu = [[float(v) for v in row] for row in u]
    for blk in range(n_blocks(n_trials, TRIALS_PER_BLOCK)):
        trials = range(blk * TRIALS_PER_BLOCK, min(n_trials, (blk + 1) * TRIALS_PER_BLOCK))
        if path == "projection":
            for p in range(P):
                r = _rng.PyRNG(key, tag + p, blk)
                unorm = math.sqrt(float(np.sum(u[p] * u[p])))
                for trial in trials:
                    t, sq = c.py_projection(r, M, d, need_sq)
                    out[p, trial] = _py_mean_product(lcr[p], lci[p], ar, ai, br, bi, cplx,
                                                     need_sq, sq, t, unorm, M)
        else:
            r = _rng.PyRNG(key, tag, blk)
            for trial in trials:
                wt = c.py_ensemble(r, M, d).tolist()
                sq = [0.0] * M
                if need_sq:
                    for i in range(d):
                        for m in range(M):
                            sq[m] += wt[i][m] * wt[i][m]
                for p in range(P):
                    proj = [0.0] * M
                    for i in range(d):
                        upi = uu[p][i]
                        for m in range(M):
                            proj[m] += upi * wt[i][m]
                    out[p, trial] = _py_mean_product(lcr[p], lci[p], ar, ai, br, bi, cplx,
                                                     need_sq, sq, proj, 1.0, M)
    return out


# --------------------------------------------------------------------------- NumPy baseline
def simplex_matrix(d: int) -> np.ndarray:
    """The simplex matrix ``S`` (d, d) of SimRF eq (9): unit rows, ``s_i . s_j = -1/(d-1)``.

    Parameters
    ----------
    d : int
        The dimension (>= 2).

    Returns
    -------
    numpy.ndarray
        ``S``, float64, shape ``(d, d)``: its rows are the vertices of a regular simplex
        centred at the origin on the unit sphere.

    Raises
    ------
    ValueError
        If ``d < 2``.

    References
    ----------
    Reid et al. 2023 (SimRF), eq (9).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.montecarlo import simplex_matrix
    >>> S = simplex_matrix(4)
    >>> bool(np.allclose(S @ S.T, np.where(np.eye(4) == 1, 1.0, -1 / 3)))
    True
    """
    if d < 2:
        raise ValueError(f"the simplex matrix needs d >= 2; got d={d}")
    S = np.zeros((d, d))
    S[:d - 1, :d - 1] = math.sqrt(d / (d - 1)) * np.eye(d - 1)
    S[:d - 1, :d - 1] -= (math.sqrt(d) + 1) / (d - 1) ** 1.5
    S[d - 1, :d - 1] = 1 / math.sqrt(d - 1)
    return S


def _numpy_simrf_plus(W: np.ndarray, tol: float, max_passes: int) -> np.ndarray:
    """SimRF+ update (eq 17) of ``n`` blocks ``W`` (n, b, d) at once, in place: the loop
    over rows and passes of :func:`rfcheck.engine.couplings.simrf_plus_block`, vectorised over the
    blocks; a block stops after its first pass moving no unit direction by more than
    ``tol`` (the engine's rule), the others go on."""
    n, b, _ = W.shape
    norms = np.linalg.norm(W, axis=2)  # (n, b)
    active = np.arange(n)
    for _ in range(max_passes):
        if active.size == 0:
            break
        Wa = W[active]
        na = norms[active]
        tot = Wa.sum(axis=1)
        change = np.zeros(active.size)
        for j in range(b):
            rest = tot - Wa[:, j]
            rn = np.linalg.norm(rest, axis=1)
            ok = (rn > 0) & (na[:, j] > 0)
            f = np.where(ok, na[:, j] / np.where(ok, rn, 1.0), 0.0)
            new = np.where(ok[:, None], -f[:, None] * rest, Wa[:, j])
            dj = np.linalg.norm(new - Wa[:, j], axis=1) / np.where(ok, na[:, j], 1.0)
            change = np.maximum(change, dj)
            tot = rest + new
            Wa[:, j] = new
        W[active] = Wa
        active = active[change > tol]
    return W


def _numpy_hd(rng: np.random.Generator, simplex: bool, n: int, M: int, d: int) -> np.ndarray:
    """``(n, M, d)`` fast ORF / fast SimRF rows (SimRF eq 89-90): per block of
    ``D = 2^ceil(log2 d)`` rows, ``r_j R~^T e_j`` (or ``R~^T s_j``) with
    ``R~^T = D_3 H D_2 H D_1 H`` applied by :func:`rfcheck.engine.couplings.fwht` to all blocks
    at once, ``r_j ~ chi_D``, first ``d`` coordinates."""
    D = _cp.hd_dim(max(d, 2) if simplex else d)
    base = simplex_matrix(D) if simplex else np.eye(D)  # rows e_j or s_j
    nb = -(-M // D)
    Y = np.broadcast_to(base, (n * nb, D, D)).copy()
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n * nb, _cp.HD_FACTORS, D))
    for f in range(_cp.HD_FACTORS):
        Y = _cp.fwht(Y) * signs[:, f, None, :]
    r = np.sqrt(rng.chisquare(D, size=(n * nb, D)))
    W = (r[..., None] * Y[..., :d]).reshape(n, nb * D, d)
    return W[:, :M]


def _numpy_directions(rng: np.random.Generator, coupling: str, n: int, M: int, d: int):
    """``(n, M, d)`` rows: iid normals, or ORF Haar directions (SimRF: the simplex rows
    rotated by them, ``S R``) times chi_d norms; SimRF+: the SimRF rows with each block
    rearranged by :func:`_numpy_simrf_plus`; ``-anti``: ``ceil(M/2)`` base rows, each
    followed by its negative; ``orf-hd`` / ``simrf-hd``: :func:`_numpy_hd`."""
    if coupling.endswith("-anti"):  # antithetic pairs (b_j, -b_j) of ceil(M/2) base rows
        B = _numpy_directions(rng, coupling[:-5], n, (M + 1) // 2, d)
        return np.stack([B, -B], axis=2).reshape(n, -1, d)[:, :M]
    if coupling == "iid":
        return rng.standard_normal((n, M, d))
    if coupling in ("orf-hd", "simrf-hd"):
        return _numpy_hd(rng, coupling == "simrf-hd", n, M, d)
    if coupling == "simrf+":
        W = _numpy_directions(rng, "simrf", n, M, d)
        for m0 in range(0, M, d):
            b = min(d, M - m0)
            if b >= 2:
                W[:, m0:m0 + b] = _numpy_simrf_plus(W[:, m0:m0 + b].copy(),
                                                    _cp.SIMRF_PLUS_TOL, _cp.SIMRF_PLUS_MAX_PASSES)
        return W
    nb = -(-M // d)
    G = rng.standard_normal((n * nb, d, d))
    Q, R = np.linalg.qr(G)
    s = np.sign(np.diagonal(R, axis1=1, axis2=2))
    s[s == 0] = 1.0
    Q *= s[:, None, :]  # sign fix: Q diag(sign(diag R)) is Haar
    rows = np.swapaxes(Q, 1, 2)  # R = Q^T, Haar
    if coupling == "simrf":
        rows = simplex_matrix(d) @ rows  # rows of S R
    dirs = rows.reshape(n, nb * d, d)[:, :M]
    norms = np.sqrt(rng.chisquare(d, size=(n, M)))
    return dirs * norms[..., None]


def simulate_numpy(
    prod: ExpProduct,
    M: int,
    n_trials: int,
    *,
    coupling: str = "iid",
    seed: int = 0,
) -> np.ndarray:
    """Vectorised NumPy estimator replicas (draws full ensembles; baseline and cross-check).

    ``numpy.random.default_rng(seed)``; ORF ensembles from a batched ``np.linalg.qr`` of
    Gaussian ``(n, d, d)`` arrays with the sign fix ``diag(R) > 0`` and norms
    ``sqrt(chisquare(d))``; SimRF the same with the directions multiplied by the simplex
    matrix (:func:`simplex_matrix`); SimRF+ the SimRF rows with the eq (17) update applied
    to all blocks at once (:func:`_numpy_simrf_plus`).  Equal in law to :func:`simulate`,
    not equal in numbers.  ``-anti`` couplings: ``ceil(M/2)`` base rows interleaved with
    their negatives.

    Parameters
    ----------
    prod : features.ExpProduct
        Feature product ``Re exp(log_c + alpha |w|^2 + beta w.u)`` of ``P`` pairs.
    M : int
        Number of random features per estimator (>= 1).
    n_trials : int
        Number of independent replicas (>= 1).
    coupling : str, optional
        ``"iid"`` (default), ``"orf"``, ``"simrf"``, ``"simrf+"``, ``"orf-hd"``,
        ``"simrf-hd"`` or an ``"-anti"`` variant of the first four.
    seed : int, optional
        Integer in ``[0, 2**64)`` (default 0), the seed of ``numpy.random.default_rng``.

    Returns
    -------
    ndarray, shape (P, n_trials)
        ``K_hat_M`` of each pair in each trial, equal in law to :func:`simulate`'s.

    Raises
    ------
    ValueError
        For an unknown coupling or one this baseline does not sample, counts below 1, or a
        seed outside ``[0, 2**64)``.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck import features
    >>> from rfcheck.engine.montecarlo import simulate_numpy
    >>> prod = features.positive_product(np.array([0.1, 0.2]), np.array([0.2, -0.1]))
    >>> est = simulate_numpy(prod, 16, 2000, coupling="orf", seed=0)
    >>> est.shape, bool(abs(est.mean() - prod.target[0]) < 0.01)
    ((1, 2000), True)
    """
    c, M, n_trials, u, log_c, alpha, beta = _check(prod, M, n_trials, coupling, "ensemble")
    if c.name.removesuffix("-anti") not in ("iid", "orf", "simrf", "simrf+", "orf-hd", "simrf-hd"):
        raise ValueError("simulate_numpy supports 'iid', 'orf', 'simrf', 'simrf+', 'orf-hd', "
                         f"'simrf-hd' and the '-anti' variants; got {c.name!r}")
    rng = np.random.default_rng(_rng.seed_key(seed))
    P, d = u.shape
    is_real = alpha.imag == 0 and beta.imag == 0 and not np.any(np.imag(log_c) != 0)
    out = np.empty((P, n_trials))
    per_trial = M * d if c.name == "iid" else -(-M // d) * d * d
    chunk = max(1, min(n_trials, (1 << 21) // per_trial))
    for start in range(0, n_trials, chunk):
        n = min(chunk, n_trials - start)
        W = _numpy_directions(rng, c.name, n, M, d)
        proj = W @ u.T  # (n, M, P)
        if is_real:
            z = np.real(log_c)[None, None, :] + beta.real * proj
            if alpha != 0:
                z = z + alpha.real * np.einsum("nmd,nmd->nm", W, W)[..., None]
            vals = np.exp(z)
        else:
            z = log_c[None, None, :] + beta * proj
            if alpha != 0:
                z = z + alpha * np.einsum("nmd,nmd->nm", W, W)[..., None]
            vals = np.real(np.exp(z))
        out[:, start:start + n] = vals.mean(axis=1).T
    return out


_rng.tie_cache_to_engine(globals())

"""Couplings of the projections w_1..w_M (each row marginally N(0, I_d)).

A coupling is how the M projections of one ensemble are drawn *jointly*.  Each one in
:data:`COUPLINGS` provides

- an **ensemble sampler** (Numba): fills ``Wt`` (d, M), the transposed ensemble
  ``W.T``, from a generator state ``st`` (see :mod:`rfcheck.engine.rng`);
- where the law allows it, a **projection sampler** (Numba): fills, for one fixed unit
  vector ``u_hat``, ``t[m] = w_m . u_hat`` and ``sq[m] = |w_m|^2`` directly, without
  drawing the ensemble (``O(M + d)`` instead of ``O(d^3)`` for ORF);
- plain-Python twins of both, consuming the same random stream bit for bit (for the
  parity tests of :mod:`rfcheck.engine.montecarlo`).

The engines dispatch on the integer ``code`` of a coupling inside compiled code
(:func:`ensemble_into`, :func:`projection_into`); a new coupling adds its samplers, one
branch in each dispatcher and an entry in :data:`COUPLINGS`.

Couplings here
--------------
``"iid"``
    rows independent N(0, I_d).  Projection law: ``t_m ~ N(0, 1)``,
    ``sq_m = t_m^2 + chi^2_{d-1}`` (drawn only when needed).
``"orf"``
    orthogonal random features (Yu et al. 2016): blocks of ``min(d, remaining)`` rows;
    within a block, Haar-random orthonormal directions, each scaled by an independent
    ``chi_d`` norm; blocks independent (the last one truncated).  Directions are the first
    ``b`` columns of a Haar matrix ``Q = H_1 ... H_b diag(s)`` built from Householder
    reflectors of fresh Gaussian vectors -- the ``Q`` of the QR factorisation of a Gaussian
    matrix with the sign fix ``diag(R) > 0`` (Stewart 1980), without computing ``R``.
    Projection law: ``(q_m . u_hat)_{m <= b}`` are the first ``b`` coordinates of a
    uniform unit vector of ``S^{d-1}`` (``b`` normals over the root of their squared sum
    plus an independent ``chi^2_{d-b}``), times independent ``chi_d`` norms.  The ensemble
    path applies the reflectors eight at a time (compact WY panels, :mod:`rfcheck.engine.wy`).
``"simrf"``
    simplex random features (Reid et al. 2023, eq (8)-(9)): blocks ``W = D S R`` of
    ``min(d, remaining)`` rows, ``R`` Haar (the ORF sampler; only the first ``d - 1``
    columns of ``R^T`` are needed because the simplex rows ``s_i`` vanish in the last
    coordinate), ``S`` the fixed simplex matrix (unit rows, pairwise inner products
    ``-1/(d-1)``), ``D`` independent ``chi_d`` norms; ``S x`` by Algorithm 1 in ``O(d)``.
    Needs ``d >= 2``.  Projection law: ``t_m = r_m s_m . v`` with ``v = R u_hat`` uniform
    on ``S^{d-1}``, all ``s_m . v`` from one Algorithm-1 pass; ``sq_m = r_m^2``.
``"simrf+"``
    SimRF+ (Reid et al. 2023, sec 3.2, eq 16-17): the ``simrf`` ensemble, then each block
    rearranged by the Gauss-Seidel update ``w_i <- -|w_i| (sum_{j!=i} w_j) / |...|`` until
    a pass moves no unit direction by more than :data:`SIMRF_PLUS_TOL` (at most
    :data:`SIMRF_PLUS_MAX_PASSES`; :func:`simrf_plus_passes` reports passes and
    convergence).  Norms are kept; rows stay ``N(0, I_d)`` (the update commutes with the
    Haar rotation).  Projection law, exact by that equivariance: the update applied to the
    unrotated rows ``r_j s_j``, then ``t_j = v_j . g`` with ``g`` uniform on ``S^{d-1}``.
    On both paths the first pass's factors come from scalars in ``O(b)`` (only ``|T|^2`` and
    ``T . s_l`` enter them; on the projection path also ``T . g``), because the rows start
    as the simplex rows; when a bound certifies that the second pass moves no direction by
    more than the tolerance (every full block at ``d >= 13`` in practice) the block is that
    first pass (applied to the rotated rows in ``O(d b)`` on the ensemble path, without
    norms), otherwise the vector iteration (``O(passes d b)``) runs.
``"<base>-anti"`` (``iid-anti``, ``orf-anti``, ``simrf-anti``, ``simrf+-anti``)
    antithetic pairs: ``ceil(M/2)`` rows of the base coupling, row ``2j + 1 = -`` row
    ``2j``; both paths.
``"orf-hd"``, ``"simrf-hd"``
    fast ORF / SimRF with HD-product rotations (SimRF eq 89-90, ``k = 3``), blocks of
    ``D = 2^ceil(log2 d)`` rows, data zero-padded to ``D``, ``chi_D`` norms.  Rows have
    exact first and second moments but are only approximately Gaussian
    (``exact_marginals=False``: estimators are biased, most at small ``D``).  Ensemble path
    only: the law of ``w . u_hat`` depends on the direction of ``u_hat``.

References
----------
F. X. Yu et al., "Orthogonal Random Features", NeurIPS 2016.  G. W. Stewart, "The
efficient generation of random orthogonal matrices with an application to condition
estimators", SIAM J. Numer. Anal. 17(3) (1980).  I. Reid, K. Choromanski, V. Likhosherstov,
A. Weller, "Simplex Random Features", ICML 2023 (eq (8)-(9), Algorithm 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from rfcheck import validate
from rfcheck.engine import gauss_seidel as _gs
from rfcheck.engine import rng as _rng
from rfcheck.engine import wy as _wy
from rfcheck.engine.bits import py_fma

__all__ = [
    "COUPLINGS",
    "Coupling",
    "SimRFPlusInfo",
    "antithetic",
    "block_sizes",
    "check_dim",
    "empty_lines",
    "ensemble_into",
    "fwht",
    "get_coupling",
    "hd_dim",
    "hd_rotation",
    "pad8",
    "projection_into",
    "projection_scratch",
    "sample_ensemble",
    "sample_ensemble_reference",
    "sample_fast",
    "sample_projection",
    "sample_simrf_plus",
    "scratch",
    "simrf_plus_block",
    "simrf_plus_passes",
    "stream_tag",
    "truncated_conformity_objective",
]

IID = 0
ORF = 1
SIMRF = 2
SIMRF_PLUS = 3
ORF_HD = 4
SIMRF_HD = 5
ANTI = 16
"""Code offset of the antithetic variant of a coupling (``iid-anti`` = ``ANTI + IID``, ...)."""


# --------------------------------------------------------------------------- helpers
@njit(cache=True, error_model="numpy")
def pad8(d):
    """``d`` rounded up to a multiple of 8 (column count of the scratch arrays).

    Parameters
    ----------
    d : int
        A dimension (``>= 0``).

    Returns
    -------
    int
        ``8 ceil(d / 8)``.

    Examples
    --------
    >>> from rfcheck.engine.couplings import pad8
    >>> pad8(13) == 16, [pad8(d) for d in (0, 1, 8, 9, 64)]
    (True, [0, 8, 8, 16, 64])
    """
    return (d + 7) // 8 * 8


@njit(cache=True, error_model="numpy")
def empty_lines(n):
    """An uninitialised float64 array of ``n`` entries whose first starts a 64-byte cache line.

    The 8-wide kernels (:mod:`rfcheck.engine.wy`, :mod:`rfcheck.engine.gauss_seidel`) load and
    store whole rows of ``pad8`` entries: on arrays as NumPy and Numba allocate them (32-byte
    aligned) every such vector straddles two cache lines, and the SimRF+ passes took ~20% longer
    (misaligned by 8 bytes, ~80%).  Alignment changes no number.

    Parameters
    ----------
    n : int
        The number of entries (``>= 0``).

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        C-contiguous, its data address a multiple of 64 (a view of a slightly longer array).

    Examples
    --------
    >>> from rfcheck.engine.couplings import empty_lines
    >>> a = empty_lines(100)
    >>> a.shape, a.ctypes.data % 64, a.flags.c_contiguous
    ((100,), 0, True)
    """
    a = np.empty(n + 8)
    k = (64 - a.ctypes.data % 64) % 64 // 8
    return a[k:k + n]


@njit(cache=True, error_model="numpy", inline="always")
def _gconsts(a):
    """Marsaglia-Tsang constants for shape ``a`` (same arithmetic as ``rng.gamma_consts``)."""
    ae = a if a >= 1.0 else a + 1.0
    dd = ae - 1.0 / 3.0
    return dd, 1.0 / math.sqrt(9.0 * dd)


def _py_gconsts(a: float) -> tuple[float, float]:
    ae = a if a >= 1.0 else a + 1.0
    dd = ae - 1.0 / 3.0
    return dd, 1.0 / math.sqrt(9.0 * dd)


# --------------------------------------------------------------------------- iid
@njit(cache=True, error_model="numpy", inline="always")
def _iid_ensemble(st, M, d, Wt, raw):
    return _rng.fill_normals(st, Wt.reshape(d * M), raw)


@njit(cache=True, error_model="numpy", inline="always")
def _iid_projection(st, M, d, need_sq, t, sq, vec, raw):
    st = _rng.fill_normals(st, t[:M], raw)
    if need_sq and d > 1:
        a = 0.5 * (d - 1)
        dd, c = _gconsts(a)
        g = vec[0, :M]
        st = _rng.fill_gammas(st, a, dd, c, g, vec[1], vec[2], raw)
        for m in range(M):
            sq[m] = t[m] * t[m] + 2.0 * g[m]
    else:
        for m in range(M):
            sq[m] = t[m] * t[m] if need_sq else np.nan
    return st


def _py_iid_ensemble(r: _rng.PyRNG, M: int, d: int) -> np.ndarray:
    return np.array(r.fill_normals(d * M)).reshape(d, M)


def _py_iid_projection(r: _rng.PyRNG, M: int, d: int, need_sq: bool) -> tuple[list, list]:
    t = r.fill_normals(M)
    if need_sq and d > 1:
        a = 0.5 * (d - 1)
        dd, c = _py_gconsts(a)
        g = r.fill_gammas(M, a, dd, c)
        sq = [t[m] * t[m] + 2.0 * g[m] for m in range(M)]
    else:
        sq = [t[m] * t[m] if need_sq else math.nan for m in range(M)]
    return t, sq


# --------------------------------------------------------------------------- orf
@njit(cache=True, error_model="numpy", inline="always")
def _dot4(a, b, lo, hi):
    """``sum_{lo <= i < hi} a[i] b[i]`` in a fixed order: four interleaved partial sums
    (``(i - lo) mod 4``), then ``(s0 + s1) + (s2 + s3)`` -- four independent chains."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    i = lo
    while i + 3 < hi:
        s0 += a[i] * b[i]
        s1 += a[i + 1] * b[i + 1]
        s2 += a[i + 2] * b[i + 2]
        s3 += a[i + 3] * b[i + 3]
        i += 4
    if i < hi:
        s0 += a[i] * b[i]
    if i + 1 < hi:
        s1 += a[i + 1] * b[i + 1]
    if i + 2 < hi:
        s2 += a[i + 2] * b[i + 2]
    return (s0 + s1) + (s2 + s3)


def _py_dot4(a: list, b: list, lo: int, hi: int) -> float:
    s = [0.0, 0.0, 0.0, 0.0]
    for i in range(lo, hi):
        s[(i - lo) % 4] += a[i] * b[i]
    return (s[0] + s[1]) + (s[2] + s[3])


@njit(cache=True, error_model="numpy")
def _haar_columns(st, d, b, X, vec, raw, nbuf):
    """First ``b`` columns of a Haar orthogonal matrix into ``X[:, :b]``; signs in ``vec[8]``.

    ``Q = H_0 H_1 ... H_{b-1}`` is applied to ``I[:, :b]`` by backward accumulation, the
    reflectors taken a panel of :data:`rfcheck.engine.wy.NB` (= 8) at a time, last panel
    first: panel ``[j0, j0 + 8)`` multiplies ``X[j0:, j0:]`` by ``I - V T V^T``
    (:mod:`rfcheck.engine.wy`: ``V`` the panel's reflector vectors, ``T`` from their Gram
    matrix).  Reflector ``k`` is ``H_k = I - tau_k v_k v_k^T``, ``v_k = x + sign(x_k) |x| e_k``
    with ``x`` (rows ``k .. d-1``) fresh standard normals, ``tau_k = 2 / |v_k|^2 =
    1 / (|x| (|x| + |x_k|))`` and ``|x|^2`` accumulated by ``fma`` over the rows in
    increasing order; ``vec[8, k]`` gets ``s_k = -sign(x_k)``, the sign of ``R_kk``, so that
    ``Q diag(s)`` is Haar (the ``Q`` of the QR factorisation of a Gaussian matrix with
    ``diag(R) > 0``; Stewart 1980).

    Draw order: one bulk draw of all ``sum_k (d - k)`` normals, dealt panel by panel, last
    first, each panel's lower trapezoid row by row (row ``j0 + r`` holds the panel's
    reflectors ``j <= r``), into the panel ``V`` (``nbuf`` as a ``(d, 8)`` row-major array; below
    the panel's triangle its rows are consecutive numbers of the draw).  Column ranges are
    widened to multiples of 8 (``X`` has ``pad8`` columns); the extra columns hold exact zeros
    and stay zero.  Scratch: ``nbuf`` (:func:`scratch`: ``V``, ``T``, the Gram matrix, ``tau``,
    the normals).  Returns the new generator state.
    """
    b8 = (b + 7) // 8 * 8
    for i in range(d):
        for c in range(b8):
            X[i, c] = 1.0 if (i == c and c < b) else 0.0
    sg = vec[8]
    nv = 8 * d
    V = nbuf[:nv].reshape((d, 8))
    T = nbuf[nv:nv + 64].reshape((8, 8))
    G = nbuf[nv + 64:nv + 128].reshape((8, 8))
    ptau = nbuf[nv + 128:nv + 136]
    nz = b * d - b * (b - 1) // 2  # the normals of all b reflectors, one bulk draw
    zs = nbuf[nv + 136:nv + 136 + nz]
    st = _rng.fill_normals(st, zs, raw)
    q = 0
    for p in range((b + 7) // 8 - 1, -1, -1):
        j0 = 8 * p
        nbp = min(8, b - j0)
        for r in range(min(8, d - j0)):  # the panel's triangle, row by row
            row = V[j0 + r]
            n = min(r + 1, nbp)
            for j in range(n):
                row[j] = zs[q + j]
            for j in range(n, 8):
                row[j] = 0.0
            q += n
        if d > j0 + 8:  # then its rectangle, nbp numbers a row
            if nbp == 8:
                n = 8 * (d - j0 - 8)
                Vr = V[j0 + 8:d].reshape(n)
                for k in range(n):
                    Vr[k] = zs[q + k]
                q += n
            else:
                for i in range(j0 + 8, d):
                    row = V[i]
                    for j in range(nbp):
                        row[j] = zs[q + j]
                    for j in range(nbp, 8):
                        row[j] = 0.0
                    q += nbp
        _wy.gram(V, j0, d, G)  # its diagonal: |x_j|^2, fma-accumulated over the rows in order
        for j in range(8):
            if j < nbp:
                nrm = math.sqrt(G[j, j])
                x1 = V[j0 + j, j]
                sgn = 1.0 if x1 >= 0.0 else -1.0
                V[j0 + j, j] = x1 + sgn * nrm
                den = nrm * (nrm + abs(x1))
                ptau[j] = 1.0 / den if den > 0.0 else 0.0
                sg[j0 + j] = -sgn
            else:
                ptau[j] = 0.0
        _wy.gram(V, j0, d, G)
        _wy.panel_t(G, ptau, T)
        _wy.panel_apply(X, V, T, j0, d, j0, b8, True)
    return st


@njit(cache=True, error_model="numpy", inline="always")
def _haar_block(st, d, k, b, X, vec, raw, nbuf):
    """One block's randomness: the first ``k`` Haar columns into ``X`` (signs in ``vec[8]``,
    :func:`_haar_columns`), then ``b`` chi_d norms ``sqrt(2 Gamma(d/2))`` into ``vec[3, :b]``."""
    a = 0.5 * d
    dd, c = _gconsts(a)
    st = _haar_columns(st, d, k, X, vec, raw, nbuf)
    g = vec[0, :b]
    st = _rng.fill_gammas(st, a, dd, c, g, vec[1], vec[2], raw)
    w = vec[3]
    for j in range(b):
        w[j] = math.sqrt(2.0 * g[j])
    return st


def _py_haar_block(r: _rng.PyRNG, d: int, k: int, b: int) -> tuple[list, list, list]:
    """Twin of :func:`_haar_block`: ``(X, signs, norms)``."""
    X, signs = _py_haar_columns(r, d, k)
    g = r.fill_gammas(b, 0.5 * d, *_py_gconsts(0.5 * d))
    return X, signs, [math.sqrt(2.0 * g[j]) for j in range(b)]


@njit(cache=True, error_model="numpy")
def _orf_ensemble(st, M, d, Wt, X, vec, raw, nbuf):
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        st = _haar_block(st, d, b, b, X, vec, raw, nbuf)
        w = vec[3]
        sg = vec[8]
        for j in range(b):
            w[j] = w[j] * sg[j]
        for i in range(d):
            xi = X[i, 0:b]
            wti = Wt[i, m0:m0 + b]
            for j in range(b):
                wti[j] = xi[j] * w[j]
        m0 += b
    return st


@njit(cache=True, error_model="numpy", inline="always")
def _orf_projection(st, M, d, need_sq, t, sq, vec, raw):
    a = 0.5 * d
    dd, c = _gconsts(a)
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        tb = t[m0:m0 + b]
        st = _rng.fill_normals(st, tb, raw)
        s = 0.0
        for j in range(b):
            s += tb[j] * tb[j]
        if b < d:
            ar = 0.5 * (d - b)
            ddr, cr = _gconsts(ar)
            gr, st = _rng.gamma(st, ar, ddr, cr)
            s += 2.0 * gr
        inv = 1.0 / math.sqrt(s)
        g = vec[0, :b]
        st = _rng.fill_gammas(st, a, dd, c, g, vec[1], vec[2], raw)
        sqb = sq[m0:m0 + b]
        for j in range(b):
            tb[j] = math.sqrt(2.0 * g[j]) * (tb[j] * inv)
            sqb[j] = 2.0 * g[j]
        m0 += b
    return st


def _py_haar_columns(r: _rng.PyRNG, d: int, b: int) -> tuple[list, list]:
    """Twin of :func:`_haar_columns` on columns ``< b`` (same draws, same operations)."""
    X = [[1.0 if i == c else 0.0 for c in range(b)] for i in range(d)]
    signs = [0.0] * b
    for p in range((b + 7) // 8 - 1, -1, -1):
        j0 = 8 * p
        nbp = min(8, b - j0)
        V = [[0.0] * 8 for _ in range(d)]
        for i in range(j0, d):
            n = min(i - j0 + 1, nbp)
            V[i][:n] = r.fill_normals(n)
        nrm2 = [0.0] * 8
        for i in range(j0, d):
            for j in range(8):
                nrm2[j] = py_fma(V[i][j], V[i][j], nrm2[j])
        taus = [0.0] * 8
        for j in range(nbp):
            nrm = math.sqrt(nrm2[j])
            x1 = V[j0 + j][j]
            sgn = 1.0 if x1 >= 0.0 else -1.0
            V[j0 + j][j] = x1 + sgn * nrm
            den = nrm * (nrm + abs(x1))
            taus[j] = 1.0 / den if den > 0.0 else 0.0
            signs[j0 + j] = -sgn
        T = _wy.py_panel_t(_wy.py_gram(V, j0, d), taus)
        _wy.py_panel_apply(X, V, T, j0, d, range(j0, b))
    return X, signs


def _py_orf_ensemble(r: _rng.PyRNG, M: int, d: int) -> np.ndarray:
    wt = np.empty((d, M))
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        X, signs, norms = _py_haar_block(r, d, b, b)
        scale = [norms[j] * signs[j] for j in range(b)]
        for i in range(d):
            for j in range(b):
                wt[i, m0 + j] = X[i][j] * scale[j]
        m0 += b
    return wt


def _py_orf_projection(r: _rng.PyRNG, M: int, d: int, need_sq: bool) -> tuple[list, list]:
    a = 0.5 * d
    dd, c = _py_gconsts(a)
    t, sq = [0.0] * M, [0.0] * M
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        t[m0:m0 + b] = r.fill_normals(b)
        s = 0.0
        for j in range(b):
            s += t[m0 + j] * t[m0 + j]
        if b < d:
            ar = 0.5 * (d - b)
            ddr, cr = _py_gconsts(ar)
            s += 2.0 * r.gamma(ar, ddr, cr)
        inv = 1.0 / math.sqrt(s)
        g = r.fill_gammas(b, a, dd, c)
        for j in range(b):
            t[m0 + j] = math.sqrt(2.0 * g[j]) * (t[m0 + j] * inv)
            sq[m0 + j] = 2.0 * g[j]
        m0 += b
    return t, sq


# --------------------------------------------------------------------------- simrf
@njit(cache=True, error_model="numpy", inline="always")
def _simplex_consts(d):
    """Constants of Algorithm 1 (SimRF App. B.2.1) for ``y = S x``:
    ``y_{d-1} = kinv sum_{i<d-1} x_i`` and ``y_i = a x_i - cc y_{d-1}`` (``i < d-1``), with
    ``kinv = 1/sqrt(d-1)``, ``a = sqrt(d/(d-1))``, ``cc = (sqrt(d) + 1)/(d-1)``."""
    return math.sqrt(d / (d - 1.0)), (math.sqrt(d) + 1.0) / (d - 1.0), 1.0 / math.sqrt(d - 1.0)


def _py_simplex_consts(d: int) -> tuple[float, float, float]:
    return math.sqrt(d / (d - 1.0)), (math.sqrt(d) + 1.0) / (d - 1.0), 1.0 / math.sqrt(d - 1.0)


@njit(cache=True, error_model="numpy")
def _simrf_block(st, d, m0, b, Wt, X, vec, raw, nbuf, fs):
    """One SimRF block of ``b`` rows into ``Wt[:, m0:m0 + b]`` (:func:`_simrf_ensemble`); its
    norms ``r_j`` stay in ``vec[3, :b]``.  With ``fs`` of length ``>= b >= 2`` (SimRF+) the
    factors of the first update pass (:func:`_py_plus_pass`) go into ``fs[:b]``, one step
    between the rows of ``Wt`` written, so that their chain of square roots and divisions
    overlaps with that work; returns ``(st, ok, |T|)`` (``ok`` False when no factors were
    asked for or a step failed)."""
    sa, cc, kinv = _simplex_consts(d)
    k = d - 1
    st = _haar_block(st, d, k, b, X, vec, raw, nbuf)
    w = vec[3]
    sg = vec[8]
    bs = min(b, k)
    ys = vec[9]
    i4 = d - d % 4
    for i in range(0, i4, 4):  # four rows' sums side by side: four chains of additions, not one
        x0, x1, x2, x3 = X[i, 0:k], X[i + 1, 0:k], X[i + 2, 0:k], X[i + 3, 0:k]
        s0 = s1 = s2 = s3 = 0.0
        for j in range(k):
            g = sg[j]
            v0, v1, v2, v3 = x0[j] * g, x1[j] * g, x2[j] * g, x3[j] * g
            x0[j], x1[j], x2[j], x3[j] = v0, v1, v2, v3
            s0 += v0
            s1 += v1
            s2 += v2
            s3 += v3
        ys[i], ys[i + 1], ys[i + 2], ys[i + 3] = kinv * s0, kinv * s1, kinv * s2, kinv * s3
    for i in range(i4, d):
        xi = X[i, 0:k]
        s = 0.0
        for j in range(k):
            xi[j] = xi[j] * sg[j]
            s += xi[j]
        ys[i] = kinv * s
    okp = b >= 2 and fs.shape[0] >= b
    rbar = dm1 = n2 = A = B = nt = 0.0
    if okp:
        rbar, dm1, n2, A, B, nt = _plus_start(w, b, d)
    for i in range(d):
        if okp and i < b:
            okp, fj, n2, A, B, nt = _plus_step(w[i], rbar, dm1, n2, A, B, nt)
            fs[i] = fj
        xi = X[i, 0:k]
        y = ys[i]
        wti = Wt[i, m0:m0 + b]
        for j in range(bs):
            wti[j] = (sa * xi[j] - cc * y) * w[j]
        if b == d:
            wti[k] = y * w[k]
    return st, okp, nt


@njit(cache=True, error_model="numpy")
def _simrf_ensemble(st, M, d, Wt, X, vec, raw, nbuf):
    """Blocks ``W = D S R`` (SimRF eq (8)): row ``j`` is ``r_j Q s_j`` with ``Q = R^T`` Haar.

    ``s_j`` vanishes in its last coordinate, so only the first ``d - 1`` columns of ``Q``
    are drawn (:func:`_haar_columns`, signs folded in); ``Q s_j`` follows Algorithm 1 row
    by row of ``Q``: ``y = kinv sum_k Q_ik s_k``, ``Q_ij a - cc y`` (``O(d)`` per row of
    ``Q``, ``O(d b)`` per block instead of the ``O(d^2 b)`` product; :func:`_simrf_block`).
    """
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        st, _, _ = _simrf_block(st, d, m0, b, Wt, X, vec, raw, nbuf, vec[4, :0])
        m0 += b
    return st


@njit(cache=True, error_model="numpy")
def _simrf_projection(st, M, d, need_sq, t, sq, vec, raw):
    """``t_m = r_m s_m . v`` with ``v = R u_hat`` uniform on ``S^{d-1}`` (``d`` normals over
    their norm) and ``S v`` by Algorithm 1; ``sq_m = r_m^2``.  ``O(d)`` per block."""
    a = 0.5 * d
    dd, c = _gconsts(a)
    sa, cc, kinv = _simplex_consts(d)
    k = d - 1
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        v = vec[4, :d]
        st = _rng.fill_normals(st, v, raw)
        s = 0.0
        for i in range(d):
            s += v[i] * v[i]
        inv = 1.0 / math.sqrt(s)
        sv = 0.0
        for i in range(k):
            sv += v[i]
        y = kinv * (sv * inv)
        g = vec[0, :b]
        st = _rng.fill_gammas(st, a, dd, c, g, vec[1], vec[2], raw)
        tb = t[m0:m0 + b]
        sqb = sq[m0:m0 + b]
        for j in range(min(b, k)):
            tb[j] = math.sqrt(2.0 * g[j]) * (sa * (v[j] * inv) - cc * y)
            sqb[j] = 2.0 * g[j]
        if b == d:
            tb[k] = math.sqrt(2.0 * g[k]) * y
            sqb[k] = 2.0 * g[k]
        m0 += b
    return st


def _py_simrf_ensemble(r: _rng.PyRNG, M: int, d: int, norms: list | None = None) -> np.ndarray:
    """Twin of :func:`_simrf_ensemble`; each block's norms appended to ``norms`` if given."""
    sa, cc, kinv = _py_simplex_consts(d)
    k = d - 1
    wt = np.empty((d, M))
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        X, signs, w = _py_haar_block(r, d, k, b)
        if norms is not None:
            norms.append(list(w[:b]))
        for i in range(d):
            xi = [X[i][j] * signs[j] for j in range(k)]
            s = 0.0
            for j in range(k):
                s += xi[j]
            y = kinv * s
            for j in range(min(b, k)):
                wt[i, m0 + j] = (sa * xi[j] - cc * y) * w[j]
            if b == d:
                wt[i, m0 + k] = y * w[k]
        m0 += b
    return wt


def _py_simrf_projection(r: _rng.PyRNG, M: int, d: int, need_sq: bool) -> tuple[list, list]:
    a = 0.5 * d
    dd, c = _py_gconsts(a)
    sa, cc, kinv = _py_simplex_consts(d)
    k = d - 1
    t, sq = [0.0] * M, [0.0] * M
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        v = r.fill_normals(d)
        s = 0.0
        for i in range(d):
            s += v[i] * v[i]
        inv = 1.0 / math.sqrt(s)
        sv = 0.0
        for i in range(k):
            sv += v[i]
        y = kinv * (sv * inv)
        g = r.fill_gammas(b, a, dd, c)
        for j in range(min(b, k)):
            t[m0 + j] = math.sqrt(2.0 * g[j]) * (sa * (v[j] * inv) - cc * y)
            sq[m0 + j] = 2.0 * g[j]
        if b == d:
            t[m0 + k] = math.sqrt(2.0 * g[k]) * y
            sq[m0 + k] = 2.0 * g[k]
        m0 += b
    return t, sq


# --------------------------------------------------------------------------- simrf+
def _py_dot8(a: list, b: list, n: int) -> float:
    """``sum_{i < n} a[i] b[i]`` in the SimRF+ step's order: eight partial sums (``i mod 8``; a
    product rounded, then a sum rounded), combined as ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) +
    (s6 + s7))`` (the lanes of :func:`rfcheck.engine.gauss_seidel.plus_step`)."""
    s = [0.0] * 8
    for i in range(n):
        s[i % 8] += a[i] * b[i]
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))


SIMRF_PLUS_TOL = 1e-10
"""SimRF+ stopping rule: stop after a pass that moves no unit direction by more than this."""
SIMRF_PLUS_MAX_PASSES = 1000
"""SimRF+ iteration cap (a block that has not met the rule by then is used as it is;
:func:`simrf_plus_passes` reports passes and convergence)."""


@njit(cache=True, error_model="numpy")
def _plus_update(X, b, d, nrm, tot, rest, dv, tol, max_passes):
    """SimRF+ (eq 17) on the ``b`` rows ``X[j, :d]`` of one block, in place, Gauss-Seidel.

    Row ``j`` becomes ``-nrm[j] (T - x_j) / |T - x_j|`` with ``T`` the running sum of the
    rows (``tot``; ``rest`` scratch), ``j = 0..b-1`` in turn; a row whose ``T - x_j`` or
    norm is zero is left alone (``dv`` scratch: the move of a row).  A pass's change is
    ``max_j |x_j(new) - x_j(old)| / nrm[j]``
    (how far the unit direction moved); the iteration stops after the first pass with
    change ``<= tol``, or after ``max_passes`` (a pass stops measuring moves once one
    exceeds ``tol``).  Returns ``(passes, converged)``.  Every sum has a fixed order
    (:func:`_py_dot8`'s, rows in index order), so the Python twin :func:`_py_plus_update` gives
    the same numbers.  Each step is one call of :func:`rfcheck.engine.gauss_seidel.plus_step`
    (8-wide vectors; ``X`` needs ``pad8(d)`` columns, ``tot``, ``rest``, ``dv`` as many
    entries; their entries past ``d`` are set to zero here).
    """
    nv = (d + 7) // 8
    d8 = 8 * nv
    if X.shape[1] < d8 or X.shape[0] < b or tot.shape[0] < d8 or rest.shape[0] < d8 or dv.shape[0] < d8:
        raise ValueError("_plus_update: X needs >= b rows of pad8(d) columns, tot, rest, dv pad8(d) entries")
    for k in range(d8):
        tot[k] = 0.0
    for j in range(b):
        xj = X[j]
        for k in range(d, d8):
            xj[k] = 0.0
        for k in range(d):
            tot[k] += xj[k]
    for p in range(1, max_passes + 1):
        change = 0.0
        for j in range(b):
            want = change <= tol  # once a row moved more than tol, the pass is not the last
            dj = _gs.plus_step(X[j, :d8], tot[:d8], rest[:d8], dv[:d8], nv, nrm[j], want)
            if want and dj > change:
                change = dj
        if change <= tol:
            return p, True
    return max_passes, False


def _py_plus_update(X: list, b: int, d: int, nrm: list, tol: float,
                    max_passes: int) -> tuple[int, bool]:
    """Twin of :func:`_plus_update` on a list of row lists."""
    tot = [0.0] * d
    for j in range(b):
        for k in range(d):
            tot[k] += X[j][k]
    for p in range(1, max_passes + 1):
        change = 0.0
        for j in range(b):
            xj = X[j]
            nj = nrm[j]
            rest = [tot[k] - xj[k] for k in range(d)]
            rn = math.sqrt(_py_dot8(rest, rest, d))
            if rn == 0.0 or nj == 0.0:
                continue
            f = nj / rn
            dv = [0.0] * d
            for k in range(d):
                nk = -(f * rest[k])
                dv[k] = nk - xj[k]
                tot[k] = rest[k] + nk
                xj[k] = nk
            if change <= tol:
                dj = math.sqrt(_py_dot8(dv, dv, d)) / nj
                if dj > change:
                    change = dj
        if change <= tol:
            return p, True
    return max_passes, False


@njit(cache=True, error_model="numpy")
def _rows_from_columns(Wt, m0, b, d, X):
    """``X[j, i] = Wt[i, m0 + j]`` (``j < b``, ``i < d``): the block's rows, contiguous, in
    tiles of 8 columns of ``Wt`` (each row of ``X`` written a cache line at a time; the
    naive loop's stride of ``pad8(d)`` doubles sends its writes to the same few cache sets)."""
    for i0 in range(0, d, 8):
        i1 = min(i0 + 8, d)
        for j in range(b):
            xj = X[j]
            for i in range(i0, i1):
                xj[i] = Wt[i, m0 + j]


@njit(cache=True, error_model="numpy")
def _columns_from_rows(X, b, d, Wt, m0):
    """The inverse copy of :func:`_rows_from_columns`: ``Wt[i, m0 + j] = X[j, i]``."""
    for i0 in range(0, d, 8):
        i1 = min(i0 + 8, d)
        for j in range(b):
            xj = X[j]
            for i in range(i0, i1):
                Wt[i, m0 + j] = xj[i]


@njit(cache=True, error_model="numpy")
def _plus_apply_columns(Wt, m0, b, d, f):
    """The pass of :func:`_py_plus_pass` with factors ``f`` applied to the rows ``x_j =
    Wt[:, m0 + j]`` (``j < b``) where they lie, the same operations on every coordinate: ``T``
    (coordinate ``i``) is ``sum_j x_j[i]`` in index order, then per row ``rest = T - x_j[i]``,
    ``x_j[i] <- -(f_j rest)``, ``T <- rest + x_j[i]``.  Coordinate ``i`` is row ``i`` of ``Wt``
    (contiguous), a chain of dependent operations over ``j``; eight coordinates run side by
    side, so that eight independent chains fill the processor and no copy of the block into
    rows is needed.  Same numbers as :func:`_py_plus_pass` on the rows, bit for bit."""
    i8 = d - d % 8
    for i in range(0, i8, 8):
        w0, w1, w2, w3 = Wt[i, m0:m0 + b], Wt[i + 1, m0:m0 + b], Wt[i + 2, m0:m0 + b], Wt[i + 3, m0:m0 + b]
        w4, w5, w6, w7 = Wt[i + 4, m0:m0 + b], Wt[i + 5, m0:m0 + b], Wt[i + 6, m0:m0 + b], Wt[i + 7, m0:m0 + b]
        t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = 0.0
        for j in range(b):
            t0, t1, t2, t3 = t0 + w0[j], t1 + w1[j], t2 + w2[j], t3 + w3[j]
            t4, t5, t6, t7 = t4 + w4[j], t5 + w5[j], t6 + w6[j], t7 + w7[j]
        for j in range(b):
            fj = f[j]
            r0, r1, r2, r3 = t0 - w0[j], t1 - w1[j], t2 - w2[j], t3 - w3[j]
            r4, r5, r6, r7 = t4 - w4[j], t5 - w5[j], t6 - w6[j], t7 - w7[j]
            n0, n1, n2, n3 = -(fj * r0), -(fj * r1), -(fj * r2), -(fj * r3)
            n4, n5, n6, n7 = -(fj * r4), -(fj * r5), -(fj * r6), -(fj * r7)
            w0[j], w1[j], w2[j], w3[j], w4[j], w5[j], w6[j], w7[j] = n0, n1, n2, n3, n4, n5, n6, n7
            t0, t1, t2, t3 = r0 + n0, r1 + n1, r2 + n2, r3 + n3
            t4, t5, t6, t7 = r4 + n4, r5 + n5, r6 + n6, r7 + n7
    for i in range(i8, d):
        w = Wt[i, m0:m0 + b]
        t = 0.0
        for j in range(b):
            t += w[j]
        for j in range(b):
            rest = t - w[j]
            nk = -(f[j] * rest)
            w[j] = nk
            t = rest + nk


@njit(cache=True, error_model="numpy")
def _simrf_plus_block(d, m0, b, Wt, X, vec, okf, nt):
    """The SimRF+ update (eq 17) of the block ``Wt[:, m0:m0 + b]`` just drawn by
    :func:`_simrf_block` (its norms ``r_j`` in ``vec[3, :b]``, the first pass's factors in
    ``vec[4, :b]``, with the recursion's ``ok`` and ``|T|`` in ``okf`` and ``nt``); returns
    ``(passes, converged, scalar)``.

    The rows start as ``r_j Q s_j`` (the simplex rows rotated), so the first pass's factors
    come from the scalar recursion of :func:`_py_plus_pass` on the norms ``r_j`` (``O(b)``,
    rotation-invariant).  When :func:`_plus_certified` shows that the second pass would move
    no unit direction by more than :data:`SIMRF_PLUS_TOL` (the stop rule would end the
    iteration there: 2 passes), the block is that first pass, applied where the rows lie
    (:func:`_plus_apply_columns`, ``O(b d)``, no norms), and the second pass's moves (below
    the bound; ~1e-16 at d = 64) are not applied -- as on the projection path; this is the
    *scalar* route.  Otherwise the rows are copied into ``X[:b, :d]`` (contiguous),
    :func:`_plus_update` runs the vector iteration with norms ``sqrt(_dot4(x_j, x_j))``, and
    the rows are copied back."""
    if b < 2:
        return 0, True, False
    r = vec[3, :b]
    nrm = vec[0]
    fs = vec[4]
    if okf and _nb_plus_certified(nt, r, b, SIMRF_PLUS_TOL):
        _plus_apply_columns(Wt, m0, b, d, fs)
        return 2, True, True
    _rows_from_columns(Wt, m0, b, d, X)
    for j in range(b):
        nrm[j] = math.sqrt(_dot4(X[j], X[j], 0, d))
    p, ok = _plus_update(X, b, d, nrm, vec[1], vec[2], vec[3], SIMRF_PLUS_TOL,
                         SIMRF_PLUS_MAX_PASSES)
    _columns_from_rows(X, b, d, Wt, m0)
    return p, ok, False


@njit(cache=True, error_model="numpy")
def _simrf_plus_into(st, M, d, Wt, X, vec, raw, nbuf, passes, conv, fast):
    """SimRF+ (SimRF sec 3.2, eq 16-17): each block drawn as for ``simrf``
    (:func:`_simrf_block`, same draws), then rearranged from its simplex start
    (:func:`_simrf_plus_block`); block ``k``'s pass count, convergence flag and route into
    ``passes[k]``, ``conv[k]``, ``fast[k]``."""
    m0 = 0
    kb = 0
    while m0 < M:
        b = min(d, M - m0)
        st, okf, nt = _simrf_block(st, d, m0, b, Wt, X, vec, raw, nbuf, vec[4])
        passes[kb], conv[kb], fast[kb] = _simrf_plus_block(d, m0, b, Wt, X, vec, okf, nt)
        m0 += b
        kb += 1
    return st


@njit(cache=True, error_model="numpy")
def _simrf_plus_ensemble(st, M, d, Wt, X, vec, raw, nbuf):
    """SimRF+ ensemble (:func:`_simrf_plus_into` without its per-block report)."""
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        st, okf, nt = _simrf_block(st, d, m0, b, Wt, X, vec, raw, nbuf, vec[4])
        _simrf_plus_block(d, m0, b, Wt, X, vec, okf, nt)
        m0 += b
    return st


def _py_plus_start(r, b: int, d: int) -> tuple[float, float, float, float, float, float]:
    """The start of the factor recursion of :func:`_py_plus_pass`: ``(rbar, d - 1, |T_0|^2, A,
    B, |T_0|)`` for the simplex rows with norms ``r[:b]``.  One source for the twin and the
    engine (:data:`_plus_start`)."""
    rs = 0.0
    for j in range(b):
        rs += r[j]
    rbar = rs / b
    q = 0.0
    for j in range(b):
        cj = r[j] - rbar
        q += cj * cj
    dm1 = d - 1.0
    n2 = (d * q + b * (d - b) * (rbar * rbar)) / dm1
    A = (d - b) * rbar / dm1
    B = d / dm1
    return rbar, dm1, n2, A, B, math.sqrt(n2)


def _py_plus_step(rj: float, rbar: float, dm1: float, n2: float, A: float, B: float,
                  nt: float) -> tuple[bool, float, float, float, float, float]:
    """One row's step of the factor recursion of :func:`_py_plus_pass`: ``(ok, f_j, |T|^2, A,
    B, |T|)`` after row ``j`` (norm ``rj``) is updated; ``ok`` False (the rest unchanged) when
    ``rho`` or ``rj`` is 0.  One source for the twin and the engine (:data:`_plus_step`)."""
    hj = A + B * (rj - rbar)
    rho2 = n2 - 2.0 * rj * hj + rj * rj
    if rho2 <= 0.0 or rj == 0.0:
        return False, 0.0, n2, A, B, nt
    rho = math.sqrt(rho2)
    fj = rj / rho
    e = 1.0 - fj
    nt = abs(rho - rj)
    return True, fj, nt * nt, e * (A + rj / dm1), e * B, nt


def _py_plus_pass(r, b: int, d: int, f, X, n: int, tot) -> tuple[bool, float]:
    """One SimRF+ Gauss-Seidel pass (eq 17) from the simplex start ``x_j = r_j s_j``, its
    factors computed on scalars: writes ``f_j = r_j / |T - x_j|`` (``T`` the running sum when
    row ``j`` is updated) and returns ``(ok, |T|)`` after the pass; with ``n > 0`` it also
    applies the pass to the rows ``X[j][:n]`` in place (``tot`` scratch of ``n`` entries).
    The factors cost ``O(b)`` instead of the ``O(d b)`` of the vector pass's norms, and they
    are rotation-invariant, so they serve the rotated rows ``r_j Q s_j`` of the ensemble (``n =
    d``) as well as the projection law's unrotated ones (``n = 0``: factors only).

    While row ``j`` is updated, every row ``l > j`` is still ``r_l s_l`` and the running sum
    ``T`` enters only through ``|T|^2`` and ``h_l = T . s_l``.  With
    ``s_i . s_l = -1/(d-1)`` (``i != l``), ``|s_l| = 1``, ``c_l = r_l - rbar``:
    ``|T_0|^2 = (d sum c_l^2 + b (d - b) rbar^2)/(d-1)`` and ``h_l = A + B c_l`` with
    ``A = (d-b) rbar/(d-1)``, ``B = d/(d-1)`` (centred: no cancellation of ``r_l`` against
    ``rbar``).  The update ``x_j <- -f_j (T - x_j)``, ``f_j = r_j / rho``,
    ``rho^2 = |T|^2 - 2 r_j h_j + r_j^2`` gives ``T <- (1 - f_j)(T - x_j)``, hence
    ``|T|^2 <- (rho - r_j)^2``, ``A <- (1-f_j)(A + r_j/(d-1))`` and ``B <- (1-f_j) B``.  On
    the rows: ``T = sum_j x_j`` (rows in index order), then per row ``rest = T - x_j``,
    ``x_j <- -(f_j rest)``, ``T <- rest + x_j`` (the operations of the vector step
    :func:`rfcheck.engine.gauss_seidel.plus_step`, without its norms); the recursion is
    :func:`_py_plus_start` and one :func:`_py_plus_step` per row (the engine runs those
    steps between the rows of the block it is drawing, :func:`_simrf_block`, so that their
    chain of square roots and divisions overlaps with that work).  ``ok`` is False when some
    ``rho`` or ``r_j`` is 0 (the vector update skips such a row; the caller then runs the
    vector iteration; the rows are then partly updated).  Plain float arithmetic on
    sequences; the engine's factors-only version is :func:`_plus_factors`."""
    rbar, dm1, n2, A, B, nt = _py_plus_start(r, b, d)
    for k in range(n):
        tot[k] = 0.0
    for j in range(b if n > 0 else 0):
        xj = X[j]
        for k in range(n):
            tot[k] += xj[k]
    for j in range(b):
        ok, fj, n2, A, B, nt = _py_plus_step(r[j], rbar, dm1, n2, A, B, nt)
        if not ok:
            return False, nt
        f[j] = fj
        if n > 0:
            xj = X[j]
            for k in range(n):
                rest = tot[k] - xj[k]
                nk = -(fj * rest)
                tot[k] = rest + nk
                xj[k] = nk
    return True, nt


def _py_plus_tau(r: list, sig: list, f: list, b: int, t: list) -> None:
    """The projections ``t_j = x_j(new) . g`` of the pass with factors ``f``
    (:func:`_py_plus_pass`), given ``sig_j = s_j . g``: ``tau = T . g`` starts at
    ``sum_j r_j sig_j``; row ``j`` gives ``t_j = -f_j (tau - r_j sig_j)`` and
    ``tau <- (tau - r_j sig_j) + t_j``.  One source for the twin and the engine
    (:data:`_plus_tau`)."""
    tau = 0.0
    for j in range(b):
        tau += r[j] * sig[j]
    for j in range(b):
        rest = tau - r[j] * sig[j]
        tj = -(f[j] * rest)
        t[j] = tj
        tau = rest + tj


def _py_plus_scalar_pass(r: list, sig: list, b: int, d: int, t: list) -> tuple[bool, float]:
    """One SimRF+ pass from the simplex start on scalars: the factors
    (:func:`_py_plus_pass`), then (if ``ok``) the projections :func:`_py_plus_tau`; returns
    ``(ok, |T|)``."""
    f = [0.0] * b
    ok, nt = _py_plus_pass(r, b, d, f, None, 0, None)
    if ok:
        _py_plus_tau(r, sig, f, b, t)
    return ok, nt


_plus_start = njit(cache=True, error_model="numpy")(_py_plus_start)
"""The engine's compilation of :func:`_py_plus_start` (one source: plain float arithmetic, so
the compiled and the Python runs agree bit for bit)."""
_plus_step = njit(cache=True, error_model="numpy", inline="always")(_py_plus_step)
"""The engine's compilation of :func:`_py_plus_step`."""


@njit(cache=True, error_model="numpy")
def _plus_factors(r, b, d, f):
    """The factors of :func:`_py_plus_pass` alone (``n = 0``), in the engine: writes ``f[:b]``,
    returns ``(ok, |T|)``."""
    rbar, dm1, n2, A, B, nt = _plus_start(r, b, d)
    for j in range(b):
        ok, fj, n2, A, B, nt = _plus_step(r[j], rbar, dm1, n2, A, B, nt)
        if not ok:
            return False, nt
        f[j] = fj
    return True, nt

_plus_tau = njit(cache=True, error_model="numpy")(_py_plus_tau)
"""The engine's compilation of :func:`_py_plus_tau`."""


def _plus_certified(nt, r, b, tol):
    """True when the pass after the scalar pass provably moves no unit direction by more
    than ``tol``: a row's move is at most ``2 |T| / r_j`` and ``|T|`` does not grow within a
    pass; ``|T|`` gets a rounding allowance of ``b * 1e-15 * max r``."""
    rmin = r[0]
    rmax = r[0]
    for j in range(1, b):
        if r[j] < rmin:
            rmin = r[j]
        if r[j] > rmax:
            rmax = r[j]
    return rmin > 0.0 and 2.0 * (nt + b * 1e-15 * rmax) <= tol * rmin


_nb_plus_certified = njit(cache=True, error_model="numpy")(_plus_certified)


@njit(cache=True, error_model="numpy")
def _simrf_plus_projection(st, M, d, need_sq, t, sq, vec, raw):
    """Exact projection law of SimRF+.  The update (eq 17) commutes with rotations, so a
    block is ``R^T V(r)`` with ``V(r)`` the update applied to the unrotated rows
    ``r_j s_j`` (norms ``r_j``) and ``R`` Haar; hence ``t_j = v_j(r) . g`` with
    ``g = R u_hat`` uniform on ``S^{d-1}`` (``d`` normals over their norm, drawn first as for
    ``simrf``), and ``sq_j = r_j^2``.

    The first pass runs on scalars (:func:`_plus_factors` and :func:`_plus_tau`, ``O(b)``
    after the ``O(d)`` Algorithm-1 products ``s_j . g``).  When the bound of :func:`_plus_certified` shows the
    second pass moves no direction by more than :data:`SIMRF_PLUS_TOL` (the iteration's stop
    rule then ends it there: 2 passes), its moves (each below that bound, at d = 64 ~1e-16)
    are not applied; otherwise the block is redone by the vector iteration
    (:func:`_plus_update` on the rows ``r_j s_j``, Algorithm 1's constants
    ``s_j = a e_j - cc kinv 1_{<d-1}``, ``s_{d-1} = kinv 1_{<d-1}``)."""
    a = 0.5 * d
    dd, c = _gconsts(a)
    sa, cc, kinv = _simplex_consts(d)
    off = cc * kinv
    k = d - 1
    V = np.empty((d, pad8(d)))
    sig = np.empty(d)
    fs = np.empty(d)
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        v = vec[4, :d]
        st = _rng.fill_normals(st, v, raw)
        s = 0.0
        for i in range(d):
            s += v[i] * v[i]
        inv = 1.0 / math.sqrt(s)
        for i in range(d):
            v[i] = v[i] * inv
        g = vec[0, :b]
        st = _rng.fill_gammas(st, a, dd, c, g, vec[1], vec[2], raw)
        r = vec[3, :b]
        for j in range(b):
            r[j] = math.sqrt(2.0 * g[j])
        tb = t[m0:m0 + b]
        sqb = sq[m0:m0 + b]
        done = False
        if b >= 2:
            sv = 0.0
            for i in range(k):
                sv += v[i]
            y = kinv * sv
            for j in range(min(b, k)):
                sig[j] = sa * v[j] - cc * y
            if b == d:
                sig[k] = y
            ok, nt = _plus_factors(r, b, d, fs)
            done = ok and _nb_plus_certified(nt, r, b, SIMRF_PLUS_TOL)
            if done:
                _plus_tau(r, sig, fs, b, tb)
        if not done:
            for j in range(b):
                vj = V[j]
                rj = r[j]
                if j < k:
                    for i in range(k):
                        vj[i] = -(off * rj)
                    vj[j] = (sa - off) * rj
                else:
                    for i in range(k):
                        vj[i] = kinv * rj
                vj[k] = 0.0
            if b >= 2:
                _plus_update(V, b, d, r, vec[5], vec[6], vec[7], SIMRF_PLUS_TOL,
                             SIMRF_PLUS_MAX_PASSES)
            for j in range(b):
                tb[j] = _dot4(V[j], v, 0, d)
        for j in range(b):
            sqb[j] = r[j] * r[j]
        m0 += b
    return st


def _py_simrf_plus_ensemble(r: _rng.PyRNG, M: int, d: int) -> np.ndarray:
    norms: list = []
    wt = _py_simrf_ensemble(r, M, d, norms)
    m0 = 0
    for rb in norms:
        b = len(rb)
        if b >= 2:
            X = [[float(wt[i, m0 + j]) for i in range(d)] for j in range(b)]
            f = [0.0] * b
            ok, nt = _py_plus_pass(rb, b, d, f, X, d, [0.0] * d)
            if not (ok and _plus_certified(nt, rb, b, SIMRF_PLUS_TOL)):
                X = [[float(wt[i, m0 + j]) for i in range(d)] for j in range(b)]
                nrm = [math.sqrt(_py_dot4(X[j], X[j], 0, d)) for j in range(b)]
                _py_plus_update(X, b, d, nrm, SIMRF_PLUS_TOL, SIMRF_PLUS_MAX_PASSES)
            for j in range(b):
                for i in range(d):
                    wt[i, m0 + j] = X[j][i]
        m0 += b
    return wt


def _py_simrf_plus_projection(r: _rng.PyRNG, M: int, d: int, need_sq: bool) -> tuple[list, list]:
    a = 0.5 * d
    dd, c = _py_gconsts(a)
    sa, cc, kinv = _py_simplex_consts(d)
    off = cc * kinv
    k = d - 1
    t, sq = [0.0] * M, [0.0] * M
    m0 = 0
    while m0 < M:
        b = min(d, M - m0)
        v = r.fill_normals(d)
        s = 0.0
        for i in range(d):
            s += v[i] * v[i]
        inv = 1.0 / math.sqrt(s)
        v = [v[i] * inv for i in range(d)]
        g = r.fill_gammas(b, a, dd, c)
        rr = [math.sqrt(2.0 * g[j]) for j in range(b)]
        tb = [0.0] * b
        done = False
        if b >= 2:
            sv = 0.0
            for i in range(k):
                sv += v[i]
            y = kinv * sv
            sig = [sa * v[j] - cc * y for j in range(min(b, k))]
            if b == d:
                sig.append(y)
            ok, nt = _py_plus_scalar_pass(rr, sig, b, d, tb)
            done = ok and _plus_certified(nt, rr, b, SIMRF_PLUS_TOL)
        if not done:
            V = []
            for j in range(b):
                if j < k:
                    vj = [-(off * rr[j])] * k + [0.0]
                    vj[j] = (sa - off) * rr[j]
                else:
                    vj = [kinv * rr[j]] * k + [0.0]
                V.append(vj)
            if b >= 2:
                _py_plus_update(V, b, d, rr, SIMRF_PLUS_TOL, SIMRF_PLUS_MAX_PASSES)
            tb = [_py_dot4(V[j], v, 0, d) for j in range(b)]
        for j in range(b):
            t[m0 + j] = tb[j]
            sq[m0 + j] = rr[j] * rr[j]
        m0 += b
    return t, sq


# --------------------------------------------------------------------------- HD-product (fast) ORF / SimRF
HD_FACTORS = 3
"""Number of ``H D_i`` factors of the HD-product rotation (SimRF App. B.2.2: ``k = 3``)."""


def hd_dim(d: int) -> int:
    """``D = 2^ceil(log2 d)`` (at least 2 for the simplex): the padded dimension of the
    HD-product couplings.

    Parameters
    ----------
    d : int
        The data dimension (>= 1; callers pass ``max(d, 2)`` for the simplex).

    Returns
    -------
    int
        The smallest power of two ``>= d``.

    References
    ----------
    SimRF eq (89)-(90) (App. B.2.2).

    Examples
    --------
    >>> from rfcheck.engine.couplings import hd_dim
    >>> [hd_dim(d) for d in (1, 2, 3, 8, 9)]
    [1, 2, 4, 8, 16]
    """
    return max(1, 1 << max(0, (d - 1).bit_length()))


@njit(cache=True, error_model="numpy", inline="always")
def _hd_dim(d):
    D = 1
    while D < d:
        D *= 2
    return D


@njit(cache=True, error_model="numpy")
def _hd_ensemble(st, M, d, Wt, vec, raw, simplex):
    """Fast ORF (``simplex`` false) / fast SimRF blocks of ``D = 2^ceil(log2 d)`` rows
    (SimRF eq 89-90, App. B.2.2): row ``j`` of a block is ``r_j (R~^T e_j)[:d]`` or
    ``r_j (R~^T s_j)[:d]`` with ``R~ = H D_1 H D_2 H D_3``, ``H`` the normalised Hadamard
    matrix, ``D_i`` Rademacher diagonals (``3 D`` bits of ``ceil(3D/64)`` generator words,
    bit ``q`` of word ``q // 64`` for entry ``q``), ``s_j`` the rows of the ``D``-dimensional
    simplex, ``r_j ~ chi_D``; data zero-padded to ``D``, so only the first ``d`` coordinates
    act.  ``R~^T = D_3 H D_2 H D_1 H`` is applied to the ``b`` columns at once: three rounds
    of an unnormalised butterfly over the rows followed by the row scaling
    ``sign / sqrt(D)``.  ``O(D log D)`` per row."""
    D = _hd_dim(d)
    c = 1.0 / math.sqrt(D)
    a = 0.5 * D
    dd, gc = _gconsts(a)
    sa, cc, kinv = _simplex_consts(D) if simplex else (0.0, 0.0, 0.0)
    off = cc * kinv
    nw = (HD_FACTORS * D + 63) // 64
    words = np.empty(nw, dtype=np.uint64)
    m0 = 0
    while m0 < M:
        b = min(D, M - m0)
        Y = np.empty((D, b))
        for w in range(nw):
            wd, st = _rng.next_u64(st)
            words[w] = wd
        g = vec[0, :b]
        st = _rng.fill_gammas(st, a, dd, gc, g, vec[1], vec[2], raw)
        for i in range(D):
            yi = Y[i]
            for j in range(b):
                if simplex:
                    if j < D - 1:
                        yi[j] = ((sa if i == j else 0.0) - off) if i < D - 1 else 0.0
                    else:
                        yi[j] = kinv if i < D - 1 else 0.0
                else:
                    yi[j] = 1.0 if i == j else 0.0
        for f in range(HD_FACTORS):
            h = 1
            while h < D:
                i0 = 0
                while i0 < D:
                    for i in range(i0, i0 + h):
                        yi = Y[i]
                        yh = Y[i + h]
                        for j in range(b):
                            u = yi[j]
                            v = yh[j]
                            yi[j] = u + v
                            yh[j] = u - v
                    i0 += 2 * h
                h *= 2
            for i in range(D):
                q = f * D + i
                bit = (words[q >> 6] >> np.uint64(q & 63)) & np.uint64(1)
                s = c if bit == np.uint64(0) else -c
                yi = Y[i]
                for j in range(b):
                    yi[j] = yi[j] * s
        for j in range(b):
            g[j] = math.sqrt(2.0 * g[j])
        for i in range(d):
            yi = Y[i]
            wti = Wt[i, m0:m0 + b]
            for j in range(b):
                wti[j] = yi[j] * g[j]
        m0 += b
    return st


def _py_hd_ensemble(r: _rng.PyRNG, M: int, d: int, simplex: bool) -> np.ndarray:
    """Twin of :func:`_hd_ensemble`."""
    D = hd_dim(d)
    c = 1.0 / math.sqrt(D)
    a = 0.5 * D
    dd, gc = _py_gconsts(a)
    sa, cc, kinv = _py_simplex_consts(D) if simplex else (0.0, 0.0, 0.0)
    off = cc * kinv
    nw = (HD_FACTORS * D + 63) // 64
    wt = np.empty((d, M))
    m0 = 0
    while m0 < M:
        b = min(D, M - m0)
        words = [r.next_u64() for _ in range(nw)]
        g = r.fill_gammas(b, a, dd, gc)
        Y = []
        for i in range(D):
            if simplex:
                row = [(((sa if i == j else 0.0) - off) if i < D - 1 else 0.0) if j < D - 1
                       else (kinv if i < D - 1 else 0.0) for j in range(b)]
            else:
                row = [1.0 if i == j else 0.0 for j in range(b)]
            Y.append(row)
        for f in range(HD_FACTORS):
            h = 1
            while h < D:
                for i0 in range(0, D, 2 * h):
                    for i in range(i0, i0 + h):
                        yi, yh = Y[i], Y[i + h]
                        for j in range(b):
                            u, v = yi[j], yh[j]
                            yi[j], yh[j] = u + v, u - v
                h *= 2
            for i in range(D):
                q = f * D + i
                s = c if (words[q >> 6] >> (q & 63)) & 1 == 0 else -c
                Y[i] = [y * s for y in Y[i]]
        rr = [math.sqrt(2.0 * g[j]) for j in range(b)]
        for i in range(d):
            for j in range(b):
                wt[i, m0 + j] = Y[i][j] * rr[j]
        m0 += b
    return wt


def _py_orf_hd_ensemble(r: _rng.PyRNG, M: int, d: int) -> np.ndarray:
    return _py_hd_ensemble(r, M, d, False)


def _py_simrf_hd_ensemble(r: _rng.PyRNG, M: int, d: int) -> np.ndarray:
    return _py_hd_ensemble(r, M, d, True)


# --------------------------------------------------------------------------- dispatch
@njit(cache=True, error_model="numpy")
def scratch(M, d):
    """Scratch arrays ``(X, vec, raw, nbuf)`` for :func:`ensemble_into` and
    :func:`projection_into`.

    ``X`` (d, pad8(d)) float, ``vec`` (10, pad8(max(M, d))) float, ``raw`` (RAW_SIZE,)
    uint64 (its tail holds the block's fallback generator, see ``rng.init_block``),
    ``nbuf`` (8 d + 136 + d (d + 1) / 2,) float (a Householder panel, its small matrices and
    the normals of a block's reflectors, :func:`_haar_columns`).  The arrays are uninitialised
    (``np.empty``).

    Parameters
    ----------
    M, d : int
        Number of projections and dimension (``>= 1``).

    Returns
    -------
    X : numpy.ndarray of float64, shape (d, pad8(d))
        The Haar columns of a block (and the SimRF+ rows).
    vec : numpy.ndarray of float64, shape (10, pad8(max(M, d)))
        Per-row vectors (norms, signs, gamma draws and their scratch).
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        The generator's scratch, to pass to :func:`rfcheck.engine.rng.init_block`.
    nbuf : numpy.ndarray of float64, shape (8 d + 136 + d (d + 1) / 2,)
        The Householder panel ``V`` (d, 8), ``T``, the Gram matrix, the 8 ``tau`` and the
        normals of a block's reflectors.

    Examples
    --------
    >>> from rfcheck.engine.couplings import scratch
    >>> X, vec, raw, nbuf = scratch(5, 12)
    >>> X.shape, vec.shape, raw.shape, raw.dtype.name, nbuf.shape == (8 * 12 + 136 + 12 * 13 // 2,)
    ((12, 16), (10, 16), (132,), 'uint64', True)
    """
    X = empty_lines(d * pad8(d)).reshape((d, pad8(d)))
    vec = empty_lines(10 * pad8(max(M, d))).reshape((10, pad8(max(M, d))))
    raw = np.empty(_rng.RAW_SIZE, dtype=np.uint64)
    nbuf = empty_lines(8 * d + 136 + d * (d + 1) // 2)
    return X, vec, raw, nbuf


@njit(cache=True, error_model="numpy")
def projection_scratch(M, d):
    """Scratch ``(vec, raw)`` for :func:`projection_into`: ``vec`` (10, pad8(max(M, d)))
    as in :func:`scratch`, without the ``O(d^2)`` arrays of the ensemble path.

    Parameters
    ----------
    M, d : int
        Number of projections and dimension (``>= 1``).

    Returns
    -------
    vec : numpy.ndarray of float64, shape (10, pad8(max(M, d)))
        Per-row vectors, as in :func:`scratch`.
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        The generator's scratch, to pass to :func:`rfcheck.engine.rng.init_block`.

    Examples
    --------
    >>> from rfcheck.engine.couplings import projection_scratch
    >>> vec, raw = projection_scratch(20, 3)
    >>> vec.shape, raw.shape, raw.dtype.name
    ((10, 24), (132,), 'uint64')
    """
    vec = empty_lines(10 * pad8(max(M, d))).reshape((10, pad8(max(M, d))))
    raw = np.empty(_rng.RAW_SIZE, dtype=np.uint64)
    return vec, raw


@njit(cache=True, error_model="numpy", inline="always")
def ensemble_into(code, st, M, d, Wt, X, vec, raw, nbuf):
    """Draw one ensemble of coupling ``code`` into ``Wt`` (d, M); returns the new state.

    ``X``, ``vec``, ``raw``, ``nbuf`` are the scratch arrays of :func:`scratch`, free to
    overwrite; they must be distinct arrays (the Householder panel kernels tell LLVM that ``X``
    and ``nbuf`` never overlap, :mod:`rfcheck.engine.wy`).  An antithetic code (``>= ANTI``)
    draws ``ceil(M/2)`` rows of its base coupling and interleaves them with their negatives
    (:func:`_anti_ensemble`).

    Parameters
    ----------
    code : int
        The coupling's ``Coupling.code`` (:data:`COUPLINGS`; not checked).
    st : tuple of 2 numpy.uint64
        The block's generator state (:func:`rfcheck.engine.rng.init_block`, with ``raw``).  From
        Python, wrap the ints a compiled call returns: ``tuple(np.uint64(v) for v in st)``.
    M, d : int
        Number of projections and dimension (``M >= 1``, ``d >=`` the coupling's ``min_d``; not
        checked here).
    Wt : numpy.ndarray of float64, shape (d, M)
        Output (C-contiguous): column ``m`` is ``w_m``.
    X, vec, raw, nbuf : numpy.ndarray
        The scratch of ``scratch(M, d)`` (``raw`` the one passed to ``init_block``: it holds the
        fallback generator).

    Returns
    -------
    tuple of 2 numpy.uint64
        The new generator state.

    Notes
    -----
    Nothing here checks the arrays' sizes: pass those of :func:`scratch`.  Numba does not check
    bounds, so an undersized array is written past its end; the shape checks of some kernels it
    calls (:func:`rfcheck.engine.wy.panel_apply`, the SimRF+ update: ``ValueError``) do not
    guard against that.

    Examples
    --------
    The ensemble :func:`sample_ensemble` draws, bit for bit; its ORF rows are orthogonal within a
    block (rows 0-3 here, d = 4):

    >>> import numpy as np
    >>> from rfcheck.engine import rng
    >>> from rfcheck.engine.couplings import COUPLINGS, ensemble_into, sample_ensemble, scratch, stream_tag
    >>> M, d, code = 6, 4, COUPLINGS["orf"].code
    >>> X, vec, raw, nbuf = scratch(M, d)
    >>> st = rng.init_block(np.uint64(7), np.uint64(stream_tag(code, 2)), np.uint64(0), raw)
    >>> Wt = np.empty((d, M))
    >>> st = ensemble_into(code, tuple(np.uint64(v) for v in st), M, d, Wt, X, vec, raw, nbuf)
    >>> bool(np.array_equal(Wt.T, sample_ensemble("orf", M, d, seed=7)))
    True
    >>> G = Wt[:, :4].T @ Wt[:, :4]
    >>> bool(np.allclose(G - np.diag(np.diag(G)), 0.0, atol=1e-12))
    True
    """
    if code >= ANTI:
        return _anti_ensemble(code - ANTI, st, M, d, Wt, X, vec, raw, nbuf)
    return _base_ensemble(code, st, M, d, Wt, X, vec, raw, nbuf)


@njit(cache=True, error_model="numpy")
def _anti_ensemble(base, st, M, d, Wt, X, vec, raw, nbuf):
    """Antithetic pairs: ``B`` = ``ceil(M/2)`` rows of coupling ``base``; row ``2j`` of the
    ensemble is ``b_j`` and row ``2j + 1`` is ``-b_j`` (the last pair truncated if ``M`` is
    odd)."""
    h = (M + 1) // 2
    B = np.empty((d, h))
    st = _base_ensemble(base, st, h, d, B, X, vec, raw, nbuf)
    for i in range(d):
        bi = B[i]
        wi = Wt[i]
        for j in range(h):
            wi[2 * j] = bi[j]
            if 2 * j + 1 < M:
                wi[2 * j + 1] = -bi[j]
    return st


@njit(cache=True, error_model="numpy", inline="always")
def _base_ensemble(code, st, M, d, Wt, X, vec, raw, nbuf):
    if code == IID:
        st = _iid_ensemble(st, M, d, Wt, raw)
    elif code == ORF:
        st = _orf_ensemble(st, M, d, Wt, X, vec, raw, nbuf)
    elif code == SIMRF:
        st = _simrf_ensemble(st, M, d, Wt, X, vec, raw, nbuf)
    elif code == SIMRF_PLUS:
        st = _simrf_plus_ensemble(st, M, d, Wt, X, vec, raw, nbuf)
    elif code == ORF_HD:
        st = _hd_ensemble(st, M, d, Wt, vec, raw, False)
    elif code == SIMRF_HD:
        st = _hd_ensemble(st, M, d, Wt, vec, raw, True)
    return st


@njit(cache=True, error_model="numpy", inline="always")
def projection_into(code, st, M, d, need_sq, t, sq, vec, raw):
    """Draw ``t[m] = w_m . u_hat`` and ``sq[m] = |w_m|^2`` for one ensemble of coupling ``code``.

    ``sq`` is NaN where ``need_sq`` is false and the coupling does not get it for free;
    ``vec``, ``raw`` are scratch from :func:`projection_scratch` (or :func:`scratch`).
    Returns the new generator state.  Antithetic codes: the base coupling's ``ceil(M/2)``
    projections, each followed by its negative (same ``sq``).

    Parameters
    ----------
    code : int
        The coupling's ``Coupling.code``, one with ``has_projection`` (:data:`COUPLINGS`; not
        checked).
    st : tuple of 2 numpy.uint64
        The block's generator state (:func:`rfcheck.engine.rng.init_block`, with ``raw``).
    M, d : int
        Number of projections and dimension (``M >= 1``, ``d >=`` the coupling's ``min_d``; not
        checked here).
    need_sq : bool
        Whether ``sq`` is wanted (``iid`` draws it only then).
    t, sq : numpy.ndarray of float64, shape (>= M,)
        Outputs: ``t[:M]`` and ``sq[:M]``.
    vec, raw : numpy.ndarray
        The scratch of ``projection_scratch(M, d)`` (``raw`` the one passed to ``init_block``).

    Returns
    -------
    tuple of 2 numpy.uint64
        The new generator state.

    Notes
    -----
    Nothing here checks the arrays' sizes: pass those of :func:`projection_scratch`; Numba does
    not check bounds.

    Examples
    --------
    The draws of :func:`sample_projection`, bit for bit; ``|w_m . u_hat| <= |w_m|``; an
    antithetic code pairs each projection with its negative:

    >>> import numpy as np
    >>> from rfcheck.engine import rng
    >>> from rfcheck.engine.couplings import COUPLINGS, projection_into, projection_scratch
    >>> from rfcheck.engine.couplings import sample_projection, stream_tag
    >>> def draw(name, M, d, seed):
    ...     code = COUPLINGS[name].code
    ...     vec, raw = projection_scratch(M, d)
    ...     st = rng.init_block(np.uint64(seed), np.uint64(stream_tag(code, 3)), np.uint64(0), raw)
    ...     t, sq = np.empty(M), np.empty(M)
    ...     projection_into(code, tuple(np.uint64(v) for v in st), M, d, True, t, sq, vec, raw)
    ...     return t, sq
    >>> t, sq = draw("orf", 7, 5, 3)
    >>> t_ref, sq_ref = sample_projection("orf", 7, 5, 1, seed=3)
    >>> bool(np.array_equal(t, t_ref[0]) and np.array_equal(sq, sq_ref[0])), bool((t * t <= sq).all())
    (True, True)
    >>> t, sq = draw("orf-anti", 6, 5, 3)
    >>> bool(np.array_equal(t[1::2], -t[::2]) and np.array_equal(sq[1::2], sq[::2]))
    True
    """
    if code >= ANTI:
        h = (M + 1) // 2
        st = _base_projection(code - ANTI, st, h, d, need_sq, t, sq, vec, raw)
        for j in range(h - 1, -1, -1):  # backwards: 2j >= j, nothing is overwritten early
            tj = t[j]
            sj = sq[j]
            t[2 * j] = tj
            sq[2 * j] = sj
            if 2 * j + 1 < M:
                t[2 * j + 1] = -tj
                sq[2 * j + 1] = sj
        return st
    return _base_projection(code, st, M, d, need_sq, t, sq, vec, raw)


@njit(cache=True, error_model="numpy", inline="always")
def _base_projection(code, st, M, d, need_sq, t, sq, vec, raw):
    if code == IID:
        st = _iid_projection(st, M, d, need_sq, t, sq, vec, raw)
    elif code == ORF:
        st = _orf_projection(st, M, d, need_sq, t, sq, vec, raw)
    elif code == SIMRF:
        st = _simrf_projection(st, M, d, need_sq, t, sq, vec, raw)
    elif code == SIMRF_PLUS:
        st = _simrf_plus_projection(st, M, d, need_sq, t, sq, vec, raw)
    return st


# --------------------------------------------------------------------------- antithetic twins
def _py_anti_ensemble(base: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """Twin of :func:`_anti_ensemble` around the base coupling's twin ``base``."""

    def sample(r: _rng.PyRNG, M: int, d: int) -> np.ndarray:
        h = (M + 1) // 2
        B = base(r, h, d)
        wt = np.empty((d, M))
        wt[:, 0::2] = B
        wt[:, 1::2] = -B[:, :M // 2]
        return wt

    return sample


def _py_anti_projection(base: Callable[..., tuple[list, list]]) -> Callable[..., tuple[list, list]]:
    """Twin of the antithetic branch of :func:`projection_into`."""

    def sample(r: _rng.PyRNG, M: int, d: int, need_sq: bool) -> tuple[list, list]:
        h = (M + 1) // 2
        tb, sb = base(r, h, d, need_sq)
        t, sq = [0.0] * M, [0.0] * M
        for j in range(h):
            t[2 * j], sq[2 * j] = tb[j], sb[j]
            if 2 * j + 1 < M:
                t[2 * j + 1], sq[2 * j + 1] = -tb[j], sb[j]
        return t, sq

    return sample


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class Coupling:
    """A registered coupling.

    Parameters
    ----------
    name, code, description, block, has_projection, py_ensemble, py_projection : see Attributes
        The fields, in this order (positional or by keyword), as described under Attributes.
    min_d : int, optional
        Smallest dimension the coupling is defined for (default 1).
    exact_marginals : bool, optional
        Whether every row is exactly ``N(0, I_d)`` (default True).

    Attributes
    ----------
    name : str
        Registry key.
    code : int
        Integer dispatched on by :func:`ensemble_into` / :func:`projection_into`.
    description : str
        One line for reports.
    block : Callable[[int], int] | None
        Rows per independent block as a function of ``d`` (``None``: rows independent).
    has_projection : bool
        Whether a projection sampler exists (the law of ``(|w_m|^2, w_m . u_hat)`` is
        known in closed form).
    py_ensemble, py_projection : callable
        Plain-Python twins (same random stream) for the reference engine.
    min_d : int
        Smallest dimension the coupling is defined for (:func:`check_dim`).
    exact_marginals : bool
        Whether every row is exactly ``N(0, I_d)`` (false for the HD-product couplings,
        whose rotations are only approximately Haar: their estimators are biased).
    """

    name: str
    code: int
    description: str
    block: Callable[[int], int] | None
    has_projection: bool
    py_ensemble: Callable[..., np.ndarray]
    py_projection: Callable[..., tuple[list, list]] | None
    min_d: int = 1
    exact_marginals: bool = True


#: every coupling by name (``"iid"``, ``"orf"``, ``"simrf"``, ``"simrf+"``, their ``"-anti"``
#: antithetic variants, and the ensemble-only ``"orf-hd"``, ``"simrf-hd"``)
COUPLINGS: dict[str, Coupling] = {
    "iid": Coupling(
        "iid", IID, "independent N(0, I_d) rows", None, True,
        _py_iid_ensemble, _py_iid_projection,
    ),
    "orf": Coupling(
        "orf", ORF, "orthogonal blocks of d Haar directions with chi_d norms (Yu et al. 2016)",
        lambda d: d, True, _py_orf_ensemble, _py_orf_projection,
    ),
    "simrf": Coupling(
        "simrf", SIMRF,
        "simplex blocks D S R of d rows at angle arccos(-1/(d-1)), chi_d norms (Reid et al. 2023)",
        lambda d: d, True, _py_simrf_ensemble, _py_simrf_projection, 2,
    ),
    "simrf+": Coupling(
        "simrf+", SIMRF_PLUS,
        "SimRF+ (Reid et al. 2023, eq 16-17): simrf blocks rearranged by the Gauss-Seidel "
        "update to tol 1e-10",
        lambda d: d, True, _py_simrf_plus_ensemble, _py_simrf_plus_projection, 2,
    ),
}
for _base in ("iid", "orf", "simrf", "simrf+"):
    _b = COUPLINGS[_base]
    COUPLINGS[_base + "-anti"] = Coupling(
        _base + "-anti", ANTI + _b.code,
        f"antithetic pairs (w, -w) of {_base} rows: ceil(M/2) {_base} rows, each followed "
        "by its negative",
        (lambda d: 2) if _b.block is None else (lambda d, f=_b.block: 2 * f(d)),
        _b.has_projection, _py_anti_ensemble(_b.py_ensemble),
        _py_anti_projection(_b.py_projection), _b.min_d,
    )
del _base, _b
_HD_NO_PROJECTION = ("the law of w . u_hat depends on the direction of u_hat (the HD product "
                     "is not rotation invariant); the projection interface carries |u| only")
COUPLINGS["orf-hd"] = Coupling(
    "orf-hd", ORF_HD,
    "fast ORF (SimRF eq 89-90): blocks of D = 2^ceil(log2 d) rows of diag(r) H D1 H D2 H D3, "
    "chi_D norms, zero-padded data; approximately Haar",
    hd_dim, False, _py_orf_hd_ensemble, None, 1, False,
)
COUPLINGS["simrf-hd"] = Coupling(
    "simrf-hd", SIMRF_HD,
    "fast SimRF (SimRF eq 89-90): blocks of D = 2^ceil(log2 d) rows of diag(r) S H D1 H D2 H D3, "
    "chi_D norms, zero-padded data; approximately Haar",
    lambda d: hd_dim(max(d, 2)), False, _py_simrf_hd_ensemble, None, 2, False,
)


def get_coupling(name: object) -> Coupling:
    """The registered coupling called ``name``; ``ValueError`` listing the known ones.

    Parameters
    ----------
    name : str
        A key of :data:`COUPLINGS` (``"iid"``, ``"orf"``, ``"simrf"``, ``"simrf+"``, their
        ``"-anti"`` variants, ``"orf-hd"``, ``"simrf-hd"``).

    Returns
    -------
    Coupling
        The registry entry.

    Raises
    ------
    ValueError
        If ``name`` is not a string or not a registered coupling.

    Examples
    --------
    >>> from rfcheck.engine.couplings import get_coupling
    >>> orf = get_coupling("orf")
    >>> orf.name, orf.block(5), orf.has_projection, get_coupling("orf-hd").has_projection
    ('orf', 5, True, False)
    """
    if not isinstance(name, str) or name not in COUPLINGS:
        raise ValueError(f"unknown coupling {name!r}; known: {sorted(COUPLINGS)}")
    return COUPLINGS[name]


def check_dim(c: Coupling, d: int) -> int:
    """``d`` if coupling ``c`` is defined in dimension ``d``, else ``ValueError``.

    Parameters
    ----------
    c : Coupling
        The coupling.
    d : int
        The dimension.

    Returns
    -------
    int
        ``d`` itself.

    Raises
    ------
    ValueError
        If ``d < c.min_d`` (e.g. ``d = 1`` for the simplex couplings).

    Examples
    --------
    >>> from rfcheck.engine.couplings import check_dim, get_coupling
    >>> check_dim(get_coupling("simrf"), 2)
    2
    >>> check_dim(get_coupling("simrf"), 1)
    Traceback (most recent call last):
    ...
    ValueError: coupling 'simrf' needs d >= 2; got d=1
    """
    if d < c.min_d:
        raise ValueError(f"coupling {c.name!r} needs d >= {c.min_d}; got d={d}")
    return d


def block_sizes(coupling: str, M: int, d: int) -> list[int]:
    """Sizes ``b_k`` of the independent blocks of an ensemble of ``M`` rows in dimension ``d``.

    ``[1] * M`` for ``iid``; ``[d, ..., d, M mod d]`` (without a zero) for ``orf``.

    Parameters
    ----------
    coupling : str
        A key of :data:`COUPLINGS`.
    M, d : int
        Number of rows and dimension (both >= 1; ``d >= min_d`` of the coupling).

    Returns
    -------
    list of int
        The block sizes, summing to ``M``.

    Raises
    ------
    ValueError
        Through its argument checks: an unknown coupling, ``M`` or ``d`` not an integer
        ``>= 1``, or ``d`` below the coupling's ``min_d``.

    Examples
    --------
    >>> from rfcheck.engine.couplings import block_sizes
    >>> block_sizes("orf", 7, 3), block_sizes("iid", 3, 5), block_sizes("orf-anti", 7, 3)
    ([3, 3, 1], [1, 1, 1], [6, 1])
    """
    c = get_coupling(coupling)
    M = validate.positive_int(M, "M")
    d = check_dim(c, validate.positive_int(d, "d"))
    if c.block is None:
        return [1] * M
    b = c.block(d)
    sizes = [b] * (M // b)
    if M % b:
        sizes.append(M % b)
    return sizes


def stream_tag(code: int, path: int) -> int:
    """Stream offset of (coupling, path): engines use ``stream_tag + pair`` as the stream.

    Parameters
    ----------
    code : int
        The coupling's integer code (``Coupling.code``).
    path : int
        The path's code (the projection and ensemble paths of
        :func:`rfcheck.engine.montecarlo.simulate`, 2 for :func:`sample_ensemble`, 3 for
        :func:`sample_projection`).

    Returns
    -------
    int
        ``code * 2^40 + path * 2^32``: ``2^32`` streams per (coupling, path).

    Examples
    --------
    >>> from rfcheck.engine.couplings import stream_tag
    >>> stream_tag(1, 2) == 2**40 + 2 * 2**32
    True
    """
    return (code << 40) | (path << 32)


@njit(cache=True, error_model="numpy")
def _sample_kernel(code, seed, stream, M, d, Wt):
    X, vec, raw, nbuf = scratch(M, d)
    st = _rng.init_block(seed, stream, 0, raw)
    ensemble_into(code, st, M, d, Wt, X, vec, raw, nbuf)


def sample_ensemble(coupling: str, M: int, d: int, seed: int = 0) -> np.ndarray:
    """One ensemble ``W`` (M, d) of the coupling ``coupling`` (for tests and users).

    Parameters
    ----------
    coupling : str
        A key of :data:`COUPLINGS`.
    M, d : int
        Number of projections and dimension (both >= 1).
    seed : int
        Integer in ``[0, 2**64)``; the same seed gives the same ensemble.

    Returns
    -------
    ndarray, shape (M, d)
        Rows ``w_m``, each marginally ``N(0, I_d)``.
    """
    c = get_coupling(coupling)
    M = validate.positive_int(M, "M")
    d = check_dim(c, validate.positive_int(d, "d"))
    key = _rng.seed_key(seed)
    wt = np.empty((d, M))
    _sample_kernel(c.code, np.uint64(key), np.uint64(stream_tag(c.code, 2)), M, d, wt)
    return np.ascontiguousarray(wt.T)


@njit(cache=True, error_model="numpy")
def _projection_sample_kernel(code, seed, stream, M, need_sq, d, t, sq):
    vec, raw = projection_scratch(M, d)
    st = _rng.init_block(seed, stream, 0, raw)
    for i in range(t.shape[0]):
        st = projection_into(code, st, M, d, need_sq, t[i], sq[i], vec, raw)


def sample_projection(
    coupling: str, M: int, d: int, n: int, seed: int = 0, *, need_sq: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` independent draws of ``(w_m . u_hat, |w_m|^2)_{m<M}`` from the projection sampler.

    Parameters
    ----------
    coupling : str
        A key of :data:`COUPLINGS` whose ``has_projection`` is true (not ``"orf-hd"``,
        ``"simrf-hd"``).
    M, d : int
        Number of projections and dimension (both >= 1; ``d >= min_d`` of the coupling).
    n : int
        Number of independent draws (>= 1).
    seed : int, optional
        Integer in ``[0, 2**64)`` (default 0); the same seed gives the same draws.
    need_sq : bool, optional
        Whether to fill ``sq`` (default True); ``iid`` leaves it NaN when false.

    Returns
    -------
    t, sq : ndarray, shape (n, M)
        Equal in law to ``W @ u_hat`` and the squared row norms of :func:`sample_ensemble`
        for any fixed unit vector ``u_hat`` (``sq`` is NaN for ``iid`` if not ``need_sq``).

    Raises
    ------
    ValueError
        If ``coupling`` is unknown or has no projection sampler, if ``M``, ``d`` or ``n`` is not
        an integer ``>= 1``, if ``d`` is below the coupling's ``min_d``, or if ``seed`` is not
        an integer in ``[0, 2**64)``.
    """
    c = get_coupling(coupling)
    if not c.has_projection:
        raise ValueError(f"coupling {c.name!r} has no projection sampler")
    M = validate.positive_int(M, "M")
    d = check_dim(c, validate.positive_int(d, "d"))
    n = validate.positive_int(n, "n")
    key = _rng.seed_key(seed)
    t = np.empty((n, M))
    sq = np.empty((n, M))
    _projection_sample_kernel(c.code, np.uint64(key), np.uint64(stream_tag(c.code, 3)), M,
                              bool(need_sq), d, t, sq)
    return t, sq


def sample_ensemble_reference(coupling: str, M: int, d: int, seed: int = 0) -> np.ndarray:
    """Plain-Python twin of :func:`sample_ensemble` (bit-identical; slow).

    Parameters
    ----------
    coupling : str
        A key of :data:`COUPLINGS`.
    M, d : int
        Number of projections and dimension (both >= 1).
    seed : int, default 0
        Integer in ``[0, 2**64)``.

    Returns
    -------
    ndarray, shape (M, d)
        The same rows as :func:`sample_ensemble` with the same arguments, bit for bit.

    Raises
    ------
    ValueError
        Through its argument checks, as :func:`sample_ensemble`.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import sample_ensemble, sample_ensemble_reference
    >>> bool(np.array_equal(sample_ensemble_reference("simrf", 5, 3, seed=4),
    ...                     sample_ensemble("simrf", 5, 3, seed=4)))
    True
    """
    c = get_coupling(coupling)
    M = validate.positive_int(M, "M")
    d = check_dim(c, validate.positive_int(d, "d"))
    key = _rng.seed_key(seed)
    r = _rng.PyRNG(key, stream_tag(c.code, 2), 0)
    return np.ascontiguousarray(c.py_ensemble(r, M, d).T)



@njit(cache=True, error_model="numpy")
def _simrf_plus_passes_kernel(seed, stream, M, d, passes, conv, fast):
    X, vec, raw, nbuf = scratch(M, d)
    Wt = np.empty((d, M))
    st = _rng.init_block(seed, stream, 0, raw)
    for i in range(passes.shape[0]):
        st = _simrf_plus_into(st, M, d, Wt, X, vec, raw, nbuf, passes[i], conv[i], fast[i])


def simrf_plus_passes(M: int, d: int, n: int, seed: int = 0, *,
                      scalar: bool = False) -> tuple[np.ndarray, ...]:
    """Iteration report of the engine's SimRF+ sampler over ``n`` independent ensembles.

    Parameters
    ----------
    M, d : int
        Number of projections and dimension (``M >= 1``, ``d >= 2``).
    n : int
        Number of independent ensembles (>= 1).
    seed : int, default 0
        Integer in ``[0, 2**64)``; the ``n`` ensembles are drawn in turn from block 0 of the
        stream :func:`sample_ensemble` uses for ``"simrf+"``.
    scalar : bool, default False
        Also return which blocks the scalar route finished.

    Returns
    -------
    passes : ndarray of int, shape (n, number of blocks)
        Passes of the eq (17) update each block took (0 for a one-row block; 2 for a block
        finished by the scalar route: its first pass, and a second one certified to move no
        unit direction by more than :data:`SIMRF_PLUS_TOL`).
    converged : ndarray of bool, same shape
        Whether the block met the stopping rule (a pass moving no unit direction by more
        than :data:`SIMRF_PLUS_TOL`) within :data:`SIMRF_PLUS_MAX_PASSES` passes.
    scalar : ndarray of bool, same shape
        Only with ``scalar=True``: whether the block took the scalar route (its first pass's
        factors from ``O(b)`` scalar arithmetic, applied in ``O(b d)``; the second pass
        certified and skipped) rather than the vector iteration.

    Examples
    --------
    At ``d = 64`` a full block takes the scalar route; a two-row block does not:

    >>> passes, conv, fast = simrf_plus_passes(66, 64, 3, scalar=True)
    >>> passes[:, 0].tolist(), fast[:, 0].tolist(), bool(conv.all()), fast[:, 1].tolist()
    ([2, 2, 2], [True, True, True], True, [False, False, False])
    """
    c = get_coupling("simrf+")
    M = validate.positive_int(M, "M")
    d = check_dim(c, validate.positive_int(d, "d"))
    n = validate.positive_int(n, "n")
    key = _rng.seed_key(seed)
    nb = -(-M // d)
    passes = np.zeros((n, nb), dtype=np.int64)
    conv = np.zeros((n, nb), dtype=np.bool_)
    fast = np.zeros((n, nb), dtype=np.bool_)
    _simrf_plus_passes_kernel(np.uint64(key), np.uint64(stream_tag(c.code, 2)), M, d, passes, conv,
                              fast)
    return (passes, conv, fast) if scalar else (passes, conv)




# ------------------------------------------------------------- NumPy samplers (SimRF sec 3.2, App. B.2)
# SimRF+, fast HD-product ORF/SimRF and antithetic pairs as NumPy samplers that return
# projection matrices W (M, d) -- independent implementations of the engine couplings
# "simrf+", "orf-hd"/"simrf-hd" and "<base>-anti" (tests/test_simrf_plus_engine.py).


@dataclass(frozen=True)
class SimRFPlusInfo:
    """Convergence report of the SimRF+ iteration (eq 17), one entry per block.

    Parameters
    ----------
    passes : tuple of int
        Passes each block took (:func:`simrf_plus_block`).
    converged : tuple of bool
        Whether each block met the stopping rule.
    max_change : tuple of float
        The largest move of a unit direction in each block's last pass.
    """

    passes: tuple[int, ...]
    converged: tuple[bool, ...]
    max_change: tuple[float, ...]


def truncated_conformity_objective(W: np.ndarray) -> float:
    """``sum_{i != j} |w_i + w_j|^2`` over the rows of one block -- eq (15) without its
    positive prefactor ``Gamma(d/2) v^2 / (4 m (m-1) Gamma(1 + d/2))``.

    Parameters
    ----------
    W : array_like, shape (m, d)
        The rows of the block (finite, ``m >= 2``).

    Returns
    -------
    float
        ``2 (m - 2) sum_i |w_i|^2 + 2 |sum_i w_i|^2`` (the same sum, in ``O(m d)``).

    Raises
    ------
    ValueError
        If ``W`` is not numeric or not finite, not 2-D, or has fewer than 2 rows.

    References
    ----------
    SimRF sec 3.2, eq (15).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import truncated_conformity_objective
    >>> W = np.random.default_rng(0).standard_normal((4, 3))
    >>> brute = sum(np.sum((W[i] + W[j]) ** 2) for i in range(4) for j in range(4) if i != j)
    >>> bool(np.isclose(truncated_conformity_objective(W), brute))
    True
    """
    W = validate.finite_array(W, "W")
    if W.ndim != 2 or W.shape[0] < 2:
        raise ValueError("W must have shape (m, d) with m >= 2")
    m = W.shape[0]
    sq = np.sum(W * W, axis=1)
    tot = np.sum(W, axis=0)
    # sum_{i != j} |w_i + w_j|^2 = 2 (m - 2) sum_i |w_i|^2 + 2 |sum_i w_i|^2
    return float(2 * (m - 2) * np.sum(sq) + 2 * np.dot(tot, tot))


def simrf_plus_block(
    W: np.ndarray, *, tol: float = 1e-10, max_passes: int = 1000
) -> tuple[np.ndarray, int, bool, float]:
    """Apply the SimRF+ update (eq 17) to one block until convergence.

    One pass updates ``w_i <- -|w_i| (sum_{j != i} w_j) / |sum_{j != i} w_j|`` for ``i = 1..m``
    in turn (Gauss-Seidel; each update cannot increase the truncated objective eq 15).
    Convergence criterion: a whole pass moves no unit direction by more than ``tol``
    (``max_i |w_hat_i(new) - w_hat_i(old)| <= tol``).  Returns ``(W, passes, converged,
    last max change)``; norms are unchanged.  Eq (16) is the fixed point.

    Parameters
    ----------
    W : array_like, shape (m, d)
        The block (finite, ``m >= 2``); not modified (a copy is updated).
    tol : float, default 1e-10
        The stopping tolerance (positive, finite).
    max_passes : int, default 1000
        The most passes made (>= 1).

    Returns
    -------
    (numpy.ndarray, int, bool, float)
        The updated block, the passes made, whether the stopping rule was met, and the
        largest move of a unit direction in the last pass.

    Raises
    ------
    ValueError
        If ``W`` is not numeric or not finite, not 2-D or has fewer than 2 rows, if ``tol`` is
        not a positive finite number, or if ``max_passes`` is not an integer ``>= 1``.

    References
    ----------
    SimRF sec 3.2, eq (15)-(17).

    Examples
    --------
    The update keeps the norms and does not increase the truncated objective:

    >>> import numpy as np
    >>> from rfcheck.engine.couplings import simrf_plus_block, truncated_conformity_objective
    >>> W0 = np.random.default_rng(1).standard_normal((3, 3))
    >>> W, passes, converged, change = simrf_plus_block(W0)
    >>> converged, bool(np.allclose(np.linalg.norm(W, axis=1), np.linalg.norm(W0, axis=1)))
    (True, True)
    >>> truncated_conformity_objective(W) <= truncated_conformity_objective(W0)
    True
    """
    W = np.array(validate.finite_array(W, "W"), dtype=float, copy=True)
    if W.ndim != 2 or W.shape[0] < 2:
        raise ValueError("W must have shape (m, d) with m >= 2")
    if not (tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be a positive finite number; got {tol}")
    max_passes = validate.positive_int(max_passes, "max_passes")
    norms = np.linalg.norm(W, axis=1)
    total = W.sum(axis=0)
    change = math.inf
    for n in range(1, max_passes + 1):
        change = 0.0
        for i in range(W.shape[0]):
            rest = total - W[i]
            rn = float(np.linalg.norm(rest))
            if rn == 0.0 or norms[i] == 0.0:
                continue
            new = -norms[i] * rest / rn
            change = max(change, float(np.linalg.norm(new / norms[i] - W[i] / norms[i])))
            total = rest + new
            W[i] = new
        if change <= tol:
            return W, n, True, change
    return W, max_passes, False, change


def sample_simrf_plus(M: int, d: int, seed: int = 0, *, tol: float = 1e-10,
                      max_passes: int = 1000) -> tuple[np.ndarray, SimRFPlusInfo]:
    """SimRF+ ensemble ``W`` (M, d) (SimRF sec 3.2, eq 16-17): SimRF blocks of ``min(d, remaining)``
    rows (:func:`sample_ensemble`), each rearranged by :func:`simrf_plus_block` from its simplex
    initialisation.  Norms stay ``chi_d``; each row stays marginally ``N(0, I_d)`` (the Haar
    rotation of the block is applied before the update and commutes with it).

    Parameters
    ----------
    M, d : int
        Number of projections and dimension (``M >= 1``, ``d >= 2``).
    seed : int, default 0
        Integer in ``[0, 2**64)``, the seed of the SimRF ensemble.
    tol : float, default 1e-10
        Stopping tolerance of :func:`simrf_plus_block`.
    max_passes : int, default 1000
        The most passes per block.

    Returns
    -------
    W : numpy.ndarray, shape (M, d)
        The SimRF+ ensemble.
    info : SimRFPlusInfo
        The convergence report of the blocks of two or more rows.

    Raises
    ------
    ValueError
        Through its argument checks: ``M`` or ``d`` not an integer ``>= 1``, ``d < 2``, a seed
        outside ``[0, 2**64)``, or an invalid ``tol``/``max_passes``.
    """
    M = validate.positive_int(M, "M")
    d = check_dim(get_coupling("simrf"), validate.positive_int(d, "d"))
    W = sample_ensemble("simrf", M, d, seed)
    out, passes, conv, changes = W.copy(), [], [], []
    start = 0
    for b in block_sizes("simrf", M, d):
        if b >= 2:
            blk, n, ok, ch = simrf_plus_block(W[start:start + b], tol=tol, max_passes=max_passes)
            out[start:start + b] = blk
            passes.append(n)
            conv.append(ok)
            changes.append(ch)
        start += b
    return out, SimRFPlusInfo(tuple(passes), tuple(conv), tuple(changes))


def _is_pow2(n: int) -> bool:
    return n >= 1 and (n & (n - 1)) == 0


def fwht(x: np.ndarray) -> np.ndarray:
    """Normalised fast Walsh-Hadamard transform ``H x`` along the last axis (eq 90), ``O(D log D)``;
    the length must be a power of two.

    Parameters
    ----------
    x : array_like
        The input; its last axis has length ``D``, a power of two.

    Returns
    -------
    numpy.ndarray
        ``H x`` along the last axis (float64, same shape); ``H`` is symmetric and orthogonal.

    Raises
    ------
    ValueError
        If the last axis's length is not a power of two.

    References
    ----------
    SimRF eq (90).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import fwht
    >>> x = np.arange(8.0)
    >>> bool(np.allclose(fwht(fwht(x)), x)), bool(np.isclose(np.linalg.norm(fwht(x)), np.linalg.norm(x)))
    (True, True)
    """
    a = np.array(x, dtype=float, copy=True)
    n = a.shape[-1]
    if not _is_pow2(n):
        raise ValueError(f"the Hadamard transform needs a power-of-two length; got {n}")
    h = 1
    while h < n:
        a = a.reshape(*a.shape[:-1], n // (2 * h), 2, h)
        u, v = a[..., 0, :].copy(), a[..., 1, :].copy()
        a[..., 0, :], a[..., 1, :] = u + v, u - v
        a = a.reshape(*a.shape[:-3], n)
        h *= 2
    return a / math.sqrt(n)


def hd_rotation(D: int, rng: np.random.Generator, k: int = 3) -> np.ndarray:
    """``R~ = prod_{i=1}^k H D_i`` (eq 89): ``H`` the normalised Hadamard matrix (eq 90) and
    ``D_i`` independent Rademacher diagonals; an exactly orthogonal (D, D) matrix, only
    approximately Haar.  ``D`` must be a power of two.

    Parameters
    ----------
    D : int
        The dimension (a power of two, >= 1).
    rng : numpy.random.Generator
        Source of the Rademacher signs.
    k : int, default 3
        Number of ``H D_i`` factors (>= 1).

    Returns
    -------
    numpy.ndarray
        ``R~``, float64, shape ``(D, D)``.

    Raises
    ------
    ValueError
        If ``D`` or ``k`` is not an integer ``>= 1``, or ``D`` is not a power of two.

    References
    ----------
    SimRF eq (89)-(90) (App. B.2.2).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import hd_rotation
    >>> R = hd_rotation(8, np.random.default_rng(0))
    >>> bool(np.allclose(R @ R.T, np.eye(8)))
    True
    """
    D = validate.positive_int(D, "D")
    if not _is_pow2(D):
        raise ValueError(f"HD-product rotations need D a power of two; got D={D}")
    k = validate.positive_int(k, "k")
    signs = rng.choice([-1.0, 1.0], size=(k, D))
    R = np.eye(D)
    for i in range(k - 1, -1, -1):  # R <- H D_i R, innermost factor first: R~ = H D_1 H D_2 ... H D_k
        R = fwht((signs[i][:, None] * R).T).T  # H X = (fwht of the columns of X), H symmetric
    return R


def sample_fast(coupling: str, M: int, d: int, seed: int = 0, *, k: int = 3, pad: bool = True) -> np.ndarray:
    """Fast ORF / fast SimRF projections (SimRF sec 4.2, App. B.2.2): ``W`` (M, d).

    Each block of ``D = 2^ceil(log2 d)`` rows is ``diag(r) R~`` (fast ORF) or ``diag(r) S R~``
    (fast SimRF, ``S`` the D-dimensional simplex of eq 9) with ``R~`` the HD-product of
    :func:`hd_rotation` (``k = 3``) and ``r ~ chi_D``; data are zero-padded to ``D``, so only
    the first ``d`` columns act (``W`` is returned restricted to them).  Blocks are
    independent; ``M > D`` uses several.  ``pad=False`` requires ``d`` a power of two.

    Parameters
    ----------
    coupling : {"orf", "simrf"}
        Fast ORF or fast SimRF.
    M, d : int
        Number of projections and dimension (``M >= 1``; ``d >= 1``, ``>= 2`` for SimRF).
    seed : int, default 0
        Integer in ``[0, 2**64)``, the seed of ``numpy.random.default_rng``.
    k : int, default 3
        Number of ``H D_i`` factors of each rotation.
    pad : bool, default True
        Zero-pad the data to ``D``; if false, ``d`` must be a power of two.

    Returns
    -------
    numpy.ndarray
        ``W``, float64, shape ``(M, d)``.

    Raises
    ------
    ValueError
        If ``coupling`` is neither ``"orf"`` nor ``"simrf"``, ``M`` or ``d`` is not an integer
        in range, ``pad`` is false and ``d`` is not a power of two, or the seed is outside
        ``[0, 2**64)``.

    References
    ----------
    SimRF sec 4.2, App. B.2.2, eq (89)-(90).

    Examples
    --------
    With ``d = D`` the rows of a fast ORF block are exactly orthogonal:

    >>> import numpy as np
    >>> from rfcheck.engine.couplings import sample_fast
    >>> W = sample_fast("orf", 4, 4, seed=2)
    >>> G = W @ W.T
    >>> W.shape, bool(np.allclose(G - np.diag(np.diag(G)), 0))
    ((4, 4), True)
    """
    if coupling not in ("orf", "simrf"):
        raise ValueError(f"sample_fast supports 'orf' and 'simrf'; got {coupling!r}")
    M = validate.positive_int(M, "M")
    d = validate.positive_int(d, "d", 2 if coupling == "simrf" else 1)
    if not pad and not _is_pow2(d):
        raise ValueError(f"HD-product rotations need d a power of two (or pad=True to zero-pad); got d={d}")
    D = 1 << max(0, (d - 1).bit_length())
    if coupling == "simrf" and D < 2:
        D = 2
    rng = np.random.default_rng(_rng.seed_key(seed))
    rows = []
    S = None
    if coupling == "simrf":
        S = np.zeros((D, D))
        S[:D - 1, :D - 1] = math.sqrt(D / (D - 1)) * np.eye(D - 1) - (math.sqrt(D) + 1) / (D - 1) ** 1.5
        S[D - 1, :D - 1] = 1 / math.sqrt(D - 1)
    while sum(r.shape[0] for r in rows) < M:
        R = hd_rotation(D, rng, k)
        B = R if S is None else S @ R
        r = np.sqrt(rng.chisquare(D, size=D))
        rows.append(r[:, None] * B)
    W = np.concatenate(rows)[:M, :d]
    return np.ascontiguousarray(W)


def antithetic(W: np.ndarray) -> np.ndarray:
    """Antithetic version of an ensemble: rows ``w_1, -w_1, w_2, -w_2, ...`` from the first
    ``ceil(M/2)`` rows of ``W`` (M, d), truncated to ``M`` rows.  Marginals are unchanged
    (N(0, I) is symmetric); the estimator's odd-order terms cancel within each pair.

    Parameters
    ----------
    W : array_like, shape (M, d)
        The ensemble (finite, ``M >= 1``).

    Returns
    -------
    numpy.ndarray
        The antithetic ensemble, float64, shape ``(M, d)``.

    Raises
    ------
    ValueError
        If ``W`` is not numeric or not finite, not 2-D, or has no row.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import antithetic
    >>> antithetic(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    array([[ 1.,  2.],
           [-1., -2.],
           [ 3.,  4.]])
    """
    W = validate.finite_array(W, "W")
    if W.ndim != 2 or W.shape[0] < 1:
        raise ValueError("W must have shape (M, d) with M >= 1")
    M = W.shape[0]
    half = W[: (M + 1) // 2]
    out = np.empty((2 * half.shape[0], W.shape[1]))
    out[0::2], out[1::2] = half, -half
    return out[:M]


_rng.tie_cache_to_engine(globals())

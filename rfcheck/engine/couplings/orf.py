"""The ``"orf"`` coupling: orthogonal random features (Yu et al. 2016).

Blocks of ``min(d, remaining)`` rows; within a block, Haar-random orthonormal directions, each
scaled by an independent ``chi_d`` norm; blocks independent (the last one truncated).
Directions are the first ``b`` columns of a Haar matrix ``Q = H_1 ... H_b diag(s)`` built from
Householder reflectors of fresh Gaussian vectors -- the ``Q`` of the QR factorisation of a
Gaussian matrix with the sign fix ``diag(R) > 0`` (Stewart 1980), without computing ``R``.  The
ensemble path applies the reflectors eight at a time (compact WY panels,
:mod:`rfcheck.engine.wy`); the Haar block here also serves the simplex couplings.

Projection law: ``(q_m . u_hat)_{m <= b}`` are the first ``b`` coordinates of a uniform unit
vector of ``S^{d-1}`` (``b`` normals over the root of their squared sum plus an independent
``chi^2_{d-b}``), times independent ``chi_d`` norms.

References
----------
F. X. Yu et al., "Orthogonal Random Features", NeurIPS 2016.  G. W. Stewart, "The efficient
generation of random orthogonal matrices with an application to condition estimators", SIAM J.
Numer. Anal. 17(3) (1980).

Examples
--------
>>> import numpy as np
>>> from rfcheck.engine.couplings import sample_ensemble
>>> W = sample_ensemble("orf", 3, 3, seed=0)
>>> G = W @ W.T
>>> bool(np.allclose(G - np.diag(np.diag(G)), 0.0, atol=1e-12))
True
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from rfcheck.engine import rng as _rng
from rfcheck.engine import wy as _wy
from rfcheck.engine.bits import py_fma
from rfcheck.engine.couplings.common import _gconsts, _py_gconsts

__all__: list[str] = []


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
    and stay zero.  Scratch: ``nbuf`` (:func:`~rfcheck.engine.couplings.scratch`: ``V``, ``T``,
    the Gram matrix, ``tau``, the normals).  Returns the new generator state.
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


_rng.tie_cache_to_engine(globals())

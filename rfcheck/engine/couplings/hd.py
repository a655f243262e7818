"""The ``"orf-hd"`` and ``"simrf-hd"`` couplings: fast ORF / SimRF with HD-product rotations
(SimRF eq 89-90, ``k = 3``).

Blocks of ``D = 2^ceil(log2 d)`` rows, data zero-padded to ``D``, ``chi_D`` norms.  Rows have
exact first and second moments but are only approximately Gaussian (``exact_marginals=False``:
estimators are biased, most at small ``D``).  Ensemble path only: the law of ``w . u_hat``
depends on the direction of ``u_hat``.

References
----------
I. Reid, K. Choromanski, V. Likhosherstov, A. Weller, "Simplex Random Features", ICML 2023
(eq (89)-(90), App. B.2.2).

Examples
--------
>>> from rfcheck.engine.couplings import hd
>>> hd.hd_dim(5), hd.HD_FACTORS
(8, 3)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from rfcheck.engine import rng as _rng
from rfcheck.engine.couplings.common import _gconsts, _py_gconsts
from rfcheck.engine.couplings.simrf import _py_simplex_consts, _simplex_consts

__all__ = ["HD_FACTORS"]


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


_rng.tie_cache_to_engine(globals())

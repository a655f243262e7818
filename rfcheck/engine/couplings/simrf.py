"""The ``"simrf"`` coupling: simplex random features (Reid et al. 2023, eq (8)-(9)).

Blocks ``W = D S R`` of ``min(d, remaining)`` rows: ``R`` Haar (the Haar block of
:mod:`rfcheck.engine.couplings.orf`; only the first ``d - 1`` columns of ``R^T`` are needed
because the simplex rows ``s_i`` vanish in the last coordinate), ``S`` the fixed simplex matrix
(unit rows, pairwise inner products ``-1/(d-1)``), ``D`` independent ``chi_d`` norms; ``S x``
by Algorithm 1 in ``O(d)``.  Needs ``d >= 2``.

Projection law: ``t_m = r_m s_m . v`` with ``v = R u_hat`` uniform on ``S^{d-1}``, all
``s_m . v`` from one Algorithm-1 pass; ``sq_m = r_m^2``.

The scalar recursion of the first SimRF+ pass (``_py_plus_start``, ``_py_plus_step``) lives
here because the simplex block runs it while it draws the rows (its chain of square roots and
divisions overlaps with that work); :mod:`rfcheck.engine.couplings.simrf_plus` uses the rest.

References
----------
I. Reid, K. Choromanski, V. Likhosherstov, A. Weller, "Simplex Random Features", ICML 2023
(eq (8)-(9), Algorithm 1, App. B.2.1).

Examples
--------
>>> import numpy as np
>>> from rfcheck.engine.couplings import sample_ensemble
>>> W = sample_ensemble("simrf", 4, 4, seed=0)
>>> U = W / np.linalg.norm(W, axis=1, keepdims=True)
>>> bool(np.allclose((U @ U.T)[np.triu_indices(4, 1)], -1 / 3))
True
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from rfcheck.engine import rng as _rng
from rfcheck.engine.couplings.common import _gconsts, _py_gconsts
from rfcheck.engine.couplings.orf import _haar_block, _py_haar_block
from rfcheck.engine.simplex_sums import signed_row_sums

__all__: list[str] = []


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
    factors of the first update pass
    (:func:`~rfcheck.engine.couplings.simrf_plus._py_plus_pass`) go into ``fs[:b]``, one step
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
    i4 = signed_row_sums(X, k, sg, ys, kinv, d)  # rows in the lanes of 4 x 4 tiles, 16 at a time
    for i in range(i4, d):
        xi = X[i, 0:k]
        s = 0.0
        for j in range(k):
            s += xi[j] * sg[j]
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
        for j in range(bs):  # the sign product again (exact: sg = +-1)
            wti[j] = (sa * (xi[j] * sg[j]) - cc * y) * w[j]
        if b == d:
            wti[k] = y * w[k]
    return st, okp, nt


@njit(cache=True, error_model="numpy")
def _simrf_ensemble(st, M, d, Wt, X, vec, raw, nbuf):
    """Blocks ``W = D S R`` (SimRF eq (8)): row ``j`` is ``r_j Q s_j`` with ``Q = R^T`` Haar.

    ``s_j`` vanishes in its last coordinate, so only the first ``d - 1`` columns of ``Q``
    are drawn (:func:`~rfcheck.engine.couplings.orf._haar_columns`, signs folded in); ``Q s_j`` follows Algorithm 1 row
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


def _py_plus_start(r, b: int, d: int) -> tuple[float, float, float, float, float, float]:
    """The start of the factor recursion of
    :func:`~rfcheck.engine.couplings.simrf_plus._py_plus_pass`: ``(rbar, d - 1, |T_0|^2, A, B,
    |T_0|)`` for the simplex rows with norms ``r[:b]``.  One source for the twin and the engine
    (:data:`_plus_start`)."""
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
    """One row's step of the factor recursion of
    :func:`~rfcheck.engine.couplings.simrf_plus._py_plus_pass`: ``(ok, f_j, |T|^2, A, B, |T|)``
    after row ``j`` (norm ``rj``) is updated; ``ok`` False (the rest unchanged) when ``rho`` or
    ``rj`` is 0.  One source for the twin and the engine (:data:`_plus_step`)."""
    hj = A + B * (rj - rbar)
    rho2 = n2 - 2.0 * rj * hj + rj * rj
    if rho2 <= 0.0 or rj == 0.0:
        return False, 0.0, n2, A, B, nt
    rho = math.sqrt(rho2)
    fj = rj / rho
    e = 1.0 - fj
    nt = abs(rho - rj)
    return True, fj, nt * nt, e * (A + rj / dm1), e * B, nt


_plus_start = njit(cache=True, error_model="numpy")(_py_plus_start)
"""The engine's compilation of :func:`_py_plus_start` (one source: plain float arithmetic, so
the compiled and the Python runs agree bit for bit)."""


_plus_step = njit(cache=True, error_model="numpy", inline="always")(_py_plus_step)
"""The engine's compilation of :func:`_py_plus_step`."""


_rng.tie_cache_to_engine(globals())

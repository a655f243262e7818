"""The ``"simrf+"`` coupling: SimRF+ (Reid et al. 2023, sec 3.2, eq 16-17).

The ``simrf`` ensemble, then each block rearranged by the Gauss-Seidel update
``w_i <- -|w_i| (sum_{j!=i} w_j) / |...|`` until a pass moves no unit direction by more than
:data:`SIMRF_PLUS_TOL` (at most :data:`SIMRF_PLUS_MAX_PASSES`;
:func:`rfcheck.engine.couplings.simrf_plus_passes` reports passes and convergence).  Norms are
kept; rows stay ``N(0, I_d)`` (the update commutes with the Haar rotation).

Projection law, exact by that equivariance: the update applied to the unrotated rows
``r_j s_j``, then ``t_j = v_j . g`` with ``g`` uniform on ``S^{d-1}``.  On both paths the first
pass's factors come from scalars in ``O(b)`` (only ``|T|^2`` and ``T . s_l`` enter them; on the
projection path also ``T . g``), because the rows start as the simplex rows; when a bound
certifies that the second pass moves no direction by more than the tolerance (every full block
at ``d >= 13`` in practice) the block is that first pass (applied to the rotated rows in
``O(d b)`` on the ensemble path, without norms, by :func:`rfcheck.engine.gauss_seidel.plus_apply`),
otherwise the vector iteration
(``O(passes d b)``, :mod:`rfcheck.engine.gauss_seidel`) runs.

References
----------
I. Reid, K. Choromanski, V. Likhosherstov, A. Weller, "Simplex Random Features", ICML 2023
(sec 3.2, eq (16)-(17)).

Examples
--------
>>> from rfcheck.engine.couplings import simrf_plus
>>> simrf_plus.SIMRF_PLUS_TOL, simrf_plus.SIMRF_PLUS_MAX_PASSES
(1e-10, 1000)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from rfcheck.engine import gauss_seidel as _gs
from rfcheck.engine import rng as _rng
from rfcheck.engine.couplings.common import _gconsts, _py_gconsts, pad8
from rfcheck.engine.couplings.orf import _dot4, _py_dot4
from rfcheck.engine.couplings.simrf import (
    _plus_start,
    _plus_step,
    _py_plus_start,
    _py_plus_step,
    _py_simplex_consts,
    _py_simrf_ensemble,
    _simplex_consts,
    _simrf_block,
)

__all__ = ["SIMRF_PLUS_MAX_PASSES", "SIMRF_PLUS_TOL"]


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
:func:`rfcheck.engine.couplings.simrf_plus_passes` reports passes and convergence)."""


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
    (contiguous), a chain of dependent operations over ``j``; the coordinates run in the lanes of
    :func:`rfcheck.engine.gauss_seidel.plus_apply` (4 x 4 tiles transposed in registers, 16
    coordinates in flight), the last ``d mod 4`` here, so that no copy of the block into rows is
    needed.  Same numbers as :func:`_py_plus_pass` on the rows, bit for bit."""
    for i in range(_gs.plus_apply(Wt, m0, b, d, f), d):
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


_rng.tie_cache_to_engine(globals())

"""Tests of the engine's SimRF+ coupling (``"simrf+"`` in rfcheck.engine.couplings / montecarlo).

SimRF+ (Reid et al. 2023, sec 3.2, eq 16-17): SimRF blocks rearranged by the Gauss-Seidel
update ``w_i <- -|w_i| (sum_{j!=i} w_j) / |sum_{j!=i} w_j|`` until a pass moves no unit
direction by more than 1e-10.  Checked here: the update against the NumPy sampler on the
same draw, the fixed point (eq 16), the truncated objective (eq 15) against SimRF, the
marginal law of every row (rfcheck.audit), equality in law of the engine's two paths and
of the NumPy baseline, and thread-count reproducibility.

Statistical checks use fixed seeds and a per-test false-alarm level ALPHA = 1e-4; each has
a power companion that feeds the same check a wrong law.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy import stats

from rfcheck import features
from rfcheck.audit import audit_sampler
from rfcheck.engine import couplings as cp
from rfcheck.engine import montecarlo
from rfcheck.engine.couplings import simrf as cp_simrf
from rfcheck.engine.couplings import simrf_plus as cp_plus

ALPHA = 1e-4
Z_CRIT = stats.norm.isf(ALPHA / 2)

pytestmark = pytest.mark.mc


def _engine_update(W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The engine's SimRF+ update (the Numba kernel the samplers call on each block just
    drawn, :func:`couplings.simrf_plus._simrf_plus_block`) applied to the SimRF ensemble ``W``, with the
    rows' norms as the block's chi norms ``r_j`` (the sampler's own ``r_j``, to rounding)."""
    M, d = W.shape
    wt = np.ascontiguousarray(W.T)
    X, vec, _raw, _nbuf = cp.scratch(M, d)
    blocks = cp.block_sizes("simrf", M, d)
    passes = np.zeros(len(blocks), dtype=np.int64)
    conv = np.zeros(len(blocks), dtype=np.bool_)
    m0 = 0
    for k, b in enumerate(blocks):
        vec[3, :b] = np.linalg.norm(W[m0:m0 + b], axis=1)
        ok, nt = cp_plus._plus_factors(vec[3, :b], b, d, vec[4]) if b >= 2 else (False, 0.0)
        passes[k], conv[k], _ = cp_plus._simrf_plus_block(d, m0, b, wt, X, vec, ok, nt)
        m0 += b
    return np.ascontiguousarray(wt.T), passes, conv


def _pair(d: int, u2: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    q, _ = np.linalg.qr(g.standard_normal((d, 2)))
    u, v = math.sqrt(u2) * q[:, 0], 0.6 * q[:, 1]
    return (u + v) / 2, (u - v) / 2


def _mse_diff_z(a: np.ndarray, b: np.ndarray, k: float) -> float:
    ea, eb = (a - k) ** 2, (b - k) ** 2
    return (ea.mean() - eb.mean()) / math.sqrt(ea.var(ddof=1) / ea.size + eb.var(ddof=1) / eb.size)


# ----------------------------------------------------------------------------- the update
@pytest.mark.parametrize(("M", "d"), [(3, 3), (6, 6), (5, 8), (16, 16), (64, 64), (11, 4)])
def test_engine_update_equals_numpy_sampler_on_the_same_draw(M, d):
    """Same SimRF draw, same row order and stopping rule: the Numba update and
    couplings.simrf_plus_block agree to rounding (1e-8 absolute on chi_d-sized rows; the
    stopping tolerance is 1e-10 per unit direction), with the same pass counts."""
    for seed in range(4):
        W0 = cp.sample_ensemble("simrf", M, d, seed)
        W, passes, conv = _engine_update(W0)
        m0 = 0
        for k, b in enumerate(cp.block_sizes("simrf", M, d)):
            if b < 2:
                continue
            ref, n, ok, _ = cp.simrf_plus_block(W0[m0:m0 + b])
            np.testing.assert_allclose(W[m0:m0 + b], ref, rtol=0, atol=1e-8)
            assert ok and conv[k]
            assert abs(int(passes[k]) - n) <= 1  # rounding may decide the last pass
            m0 += b


@pytest.mark.parametrize("d", [2, 3, 5, 8, 16, 64])
def test_update_lowers_eq15_objective_and_reaches_eq16(d):
    """On the same draw, SimRF+ never raises the truncated objective of eq (15) and lowers
    it strictly for unequal norms; norms are kept; at the fixed point (eq 16) each row points
    away from the sum of the others (cosine -1)."""
    strict = 0
    for seed in range(10):
        W0 = cp.sample_ensemble("simrf", d, d, 100 + seed)
        W, passes, conv = _engine_update(W0)
        assert 1 <= passes[0] <= cp.SIMRF_PLUS_MAX_PASSES
        np.testing.assert_allclose(np.linalg.norm(W, axis=1), np.linalg.norm(W0, axis=1),
                                   rtol=1e-13)
        f0 = cp.truncated_conformity_objective(W0)
        f1 = cp.truncated_conformity_objective(W)
        assert f1 <= f0 * (1 + 1e-13)
        strict += f1 < f0 * (1 - 1e-9)
        if not conv[0]:  # d = 3, 4: a few blocks near a collinear fixed point stop at the cap
            continue
        tot = W.sum(axis=0)
        for i in range(d):
            rest = tot - W[i]
            cos = W[i] @ rest / (np.linalg.norm(W[i]) * np.linalg.norm(rest))
            assert cos == pytest.approx(-1.0, abs=1e-8)
    assert strict == 10 if d > 2 else strict >= 0  # d = 2: the simplex is already antipodal


def test_passes_reported_and_converged():
    """d >= 5: every block meets the stopping rule within the cap (a few passes).  d = 3, 4:
    a small share of blocks -- norms with one close to the sum of the others, whose fixed
    point is nearly collinear -- converge slowly and stop at the cap (measured at 2e4
    blocks: 0.7% at d = 3, 0.03% at d = 4); they are reported as not converged."""
    for M, d in [(16, 16), (64, 64), (10, 5)]:
        passes, conv = cp.simrf_plus_passes(M, d, 300, seed=1)
        assert passes.shape == (300, -(-M // d))
        assert conv.all()
        full = passes[:, 0]
        assert np.all((full >= 1) & (full < 20))
    passes, conv = cp.simrf_plus_passes(3, 3, 3000, seed=1)
    assert 0 < (~conv).sum() < 60  # ~0.7%: the slow blocks exist and are flagged
    assert np.all(passes[~conv] == cp.SIMRF_PLUS_MAX_PASSES)
    assert np.all(passes[conv] < cp.SIMRF_PLUS_MAX_PASSES)
    passes, _ = cp.simrf_plus_passes(9, 4, 5, seed=1)
    assert np.all(passes[:, 2] == 0)  # the one-row block is not iterated


# ----------------------------------------------------------------------------- marginal law
def _engine_sampler(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
    seeds = rng.integers(0, 2**63, size=n)
    return np.stack([cp.sample_ensemble("simrf+", M, d, int(s)) for s in seeds])


def _unrotated_sampler(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
    """Wrong law (power companion): SimRF+ rows without the Haar rotation R."""
    S = montecarlo.simplex_matrix(d)[:M]
    out = np.empty((n, M, d))
    for i in range(n):
        r = np.sqrt(rng.chisquare(d, size=M))
        out[i] = cp.simrf_plus_block(r[:, None] * S)[0]
    return out


@pytest.mark.parametrize(("M", "d"), [(6, 6), (9, 4)])
def test_rows_marginally_standard_normal(M, d):
    """rfcheck.audit on the engine's sampler: chi_d norms, N(0,1) coordinates and
    projections, identity covariance, norms independent of directions, unbiased PosRF."""
    rep = audit_sampler(_engine_sampler, d, M, structure=None, n=2000, alpha=ALPHA, seed=M + d)
    assert rep.verdict == "HOLDS", str(rep)


def test_marginal_audit_has_power():
    rep = audit_sampler(_unrotated_sampler, 6, 6, structure=None, n=400, alpha=ALPHA, seed=1)
    assert rep.verdict == "REFUTED"


# ----------------------------------------------------------------------------- equal in law
@pytest.mark.parametrize(("d", "M"), [(5, 3), (6, 6), (16, 40)])
def test_paths_and_numpy_baseline_equal_in_law(d, M):
    """Projection path, ensemble path and the NumPy baseline give K_hat values with the same
    law (two-sample KS at ALPHA) and the same MSE within standard errors."""
    x, y = _pair(d, 1.5, seed=d)
    prod = features.positive_product(x, y)
    n = 6000
    k = float(prod.target[0])
    ke = montecarlo.simulate(prod, M, n, coupling="simrf+", path="ensemble", seed=11)[0]
    kp = montecarlo.simulate(prod, M, n, coupling="simrf+", path="projection", seed=12)[0]
    kn = montecarlo.simulate_numpy(prod, M, n, coupling="simrf+", seed=13)[0]
    for a, b in [(ke, kp), (ke, kn)]:
        assert stats.ks_2samp(a, b).pvalue > ALPHA
        assert abs(_mse_diff_z(a, b, k)) < Z_CRIT


def test_equal_in_law_check_has_power():
    """The same checks tell SimRF+ from iid (d = 16, M = 40; the MSE z was -9.1)."""
    x, y = _pair(16, 1.5, seed=16)
    prod = features.positive_product(x, y)
    k = float(prod.target[0])
    a = montecarlo.simulate(prod, 40, 6000, coupling="simrf+", path="ensemble", seed=11)[0]
    b = montecarlo.simulate(prod, 40, 6000, coupling="iid", path="ensemble", seed=12)[0]
    assert stats.ks_2samp(a, b).pvalue < ALPHA
    assert abs(_mse_diff_z(a, b, k)) > Z_CRIT


def test_projection_block_structure():
    """Exact facts of the projection sampler: ``t_j = v_j . g`` with ``|v_j| = r_j`` and
    ``|g| = 1``, so ``t_j^2 <= sq_j = r_j^2`` (Cauchy-Schwarz) with positive norms."""
    t, sq = cp.sample_projection("simrf+", 8, 8, 2000, seed=3)
    assert np.all(t * t <= sq * (1 + 1e-12))
    assert np.all(sq > 0)


# ----------------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("path", montecarlo.PATHS)
def test_same_numbers_with_one_or_two_threads(path):
    x, y = _pair(6, 1.0)
    prod = features.positive_product(np.stack([x, y]), np.stack([y, x]))
    n = 5 * montecarlo.TRIALS_PER_BLOCK + 7
    old = numba.get_num_threads()
    runs = []
    try:
        for k in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(k)
            runs.append(montecarlo.simulate(prod, 9, n, coupling="simrf+", path=path, seed=3))
    finally:
        numba.set_num_threads(old)
    for r in runs[1:]:
        np.testing.assert_array_equal(runs[0], r)
    assert not np.any(runs[0] == montecarlo.simulate(prod, 9, n, coupling="simrf", path=path,
                                                     seed=3))  # its own stream


def test_twin_bit_identical_and_bad_input():
    # (5, 5), (12, 5), (3, 4): the vector iteration; (16, 16), (64, 64): the scalar route;
    # (66, 64): a scalar-route block and a two-row block on the vector iteration
    for M, d in [(5, 5), (12, 5), (3, 4), (16, 16), (64, 64), (66, 64)]:
        np.testing.assert_array_equal(cp.sample_ensemble("simrf+", M, d, 2),
                                      cp.sample_ensemble_reference("simrf+", M, d, 2))
    for call in (lambda: cp.sample_ensemble("simrf+", 3, 1),
                 lambda: cp.simrf_plus_passes(3, 1, 2),
                 lambda: cp.sample_projection("simrf+", 3, 1, 2)):
        with pytest.raises(ValueError, match="'simrf\\+' needs d >= 2; got d=1"):
            call()
    with pytest.raises(ValueError, match="n must be"):
        cp.simrf_plus_passes(3, 3, 0)


# ----------------------------------------------------------------------------- scalar first pass
def _simplex_rows(r: list, d: int) -> list:
    sa, cc, kinv = cp_simrf._py_simplex_consts(d)
    off, k = cc * kinv, d - 1
    rows = []
    for j, rj in enumerate(r):
        if j < k:
            row = [-(off * rj)] * k + [0.0]
            row[j] = (sa - off) * rj
        else:
            row = [kinv * rj] * k + [0.0]
        rows.append(row)
    return rows


@pytest.mark.parametrize("d", [16, 64, 128])
def test_scalar_pass_equals_vector_iteration(d):
    """The projection sampler's O(b) first pass (:func:`couplings.simrf_plus._py_plus_scalar_pass`) gives the
    projections of the full vector iteration (:func:`couplings.simrf_plus._py_plus_update`, run to its
    stop rule) to rounding, whenever its certificate says the second pass moves nothing
    beyond the tolerance; and the certificate is not vacuous: at d >= 64 it holds for every
    full or nearly full block, so the fast path is the one the bench measures."""
    g = np.random.default_rng(d)
    certified = 0
    for b in (d // 2, d - 1, d):
        for _ in range(20):
            r = list(np.sqrt(g.chisquare(d, size=b)))
            u = g.standard_normal(d)
            u = list(u / np.linalg.norm(u))
            V = _simplex_rows(r, d)
            cp_plus._py_plus_update(V, b, d, r, cp.SIMRF_PLUS_TOL, cp.SIMRF_PLUS_MAX_PASSES)
            ref = np.array(V) @ np.array(u)
            sa, cc, kinv = cp_simrf._py_simplex_consts(d)
            y = kinv * sum(u[:d - 1])
            sig = [sa * u[j] - cc * y for j in range(min(b, d - 1))] + ([y] if b == d else [])
            t = [0.0] * b
            ok, nt = cp_plus._py_plus_scalar_pass(r, sig, b, d, t)
            if ok and cp_plus._plus_certified(nt, r, b, cp.SIMRF_PLUS_TOL):
                certified += 1
                # 2 |T| / r_j bounds the skipped moves; rounding of the two computations ~1e-14
                assert np.max(np.abs(np.array(t) - ref)) <= 1e-13 * max(r) + 2 * nt
            if d >= 64 and b >= d - 1:
                assert ok and cp_plus._plus_certified(nt, r, b, cp.SIMRF_PLUS_TOL)
    assert certified >= 40


@pytest.mark.parametrize("d", [13, 16, 64])
def test_ensemble_scalar_route_equals_vector_iteration(d):
    """The ensemble's scalar route (the first pass's factors from the chi norms, the pass
    applied to the rotated rows, the second pass certified and skipped) is the route a full
    block takes at these d, and gives the rows of the full vector iteration on the same draw
    to within the certificate's bound (the skipped moves are at most ``SIMRF_PLUS_TOL r_j``)
    plus rounding."""
    for seed in range(5):
        W0 = cp.sample_ensemble("simrf", d, d, seed)
        r = np.linalg.norm(W0, axis=1)
        wt = np.ascontiguousarray(W0.T)
        X, vec, _raw, _nbuf = cp.scratch(d, d)
        vec[3, :d] = r
        okf, nt = cp_plus._plus_factors(vec[3, :d], d, d, vec[4])
        passes, ok, scalar = cp_plus._simrf_plus_block(d, 0, d, wt, X, vec, okf, nt)
        assert scalar and ok and passes == 2
        V = [list(row) for row in W0]
        cp_plus._py_plus_update(V, d, d, list(r), cp.SIMRF_PLUS_TOL, cp.SIMRF_PLUS_MAX_PASSES)
        err = np.abs(wt.T - np.array(V)).max()
        assert err <= (cp.SIMRF_PLUS_TOL + 1e-13) * r.max()


def test_ensemble_scalar_route_power():
    """Power companion: the same route with the factors of orthogonal rows (``d`` taken as
    infinite, forgetting the simplex's ``-1/(d-1)`` inner products) misses the vector
    iteration by far more than the bound above."""
    d = 64
    W0 = cp.sample_ensemble("simrf", d, d, 0)
    r = list(np.linalg.norm(W0, axis=1))
    V = [list(row) for row in W0]
    cp_plus._py_plus_update(V, d, d, r, cp.SIMRF_PLUS_TOL, cp.SIMRF_PLUS_MAX_PASSES)
    X = [list(row) for row in W0]
    ok, _ = cp_plus._py_plus_pass(r, d, 10**9, [0.0] * d, X, d, [0.0] * d)
    assert ok and np.abs(np.array(X) - np.array(V)).max() > 1e-3


def test_scalar_pass_power():
    """Power companion: a scalar pass that forgets the ``-1/(d-1)`` coupling of the simplex
    rows (the ``A``, ``B`` recursion started from ``h_l = r_l``) misses the vector iteration."""
    d = b = 64
    g = np.random.default_rng(5)
    r = list(np.sqrt(g.chisquare(d, size=b)))
    u = g.standard_normal(d)
    u = list(u / np.linalg.norm(u))
    V = _simplex_rows(r, d)
    cp_plus._py_plus_update(V, b, d, r, cp.SIMRF_PLUS_TOL, cp.SIMRF_PLUS_MAX_PASSES)
    ref = np.array(V) @ np.array(u)
    sa, cc, kinv = cp_simrf._py_simplex_consts(d)
    y = kinv * sum(u[:d - 1])
    sig = [sa * u[j] - cc * y for j in range(d - 1)] + [y]
    t = [0.0] * b
    cp_plus._py_plus_scalar_pass(r, sig, b, 10**9, t)  # d -> infinity: orthogonal rows
    assert np.max(np.abs(np.array(t) - ref)) > 1e-3


@pytest.mark.parametrize("M", [64, 66, 130])
def test_projection_parity_at_d64(M):
    """Numba projection sampler == its Python twin bit for bit at d = 64, where full blocks
    take the scalar path and a 2-row tail block takes the vector fallback."""
    x, y = _pair(64, 1.0)
    prod = features.positive_product(np.stack([x, y]), np.stack([y, x]))
    n = 3
    got = montecarlo.simulate(prod, M, n, coupling="simrf+", path="projection", seed=4)
    ref = montecarlo.simulate_reference(prod, M, n, coupling="simrf+", path="projection", seed=4)
    np.testing.assert_array_equal(got, ref)

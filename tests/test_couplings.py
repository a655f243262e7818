"""Tests of rfcheck.engine.couplings: marginal laws, block structure, projection samplers, twins.

Statistical checks use fixed seeds and a per-test false-alarm level ALPHA = 1e-4; power
companions feed the same checks a wrong law.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from rfcheck.engine import couplings as cp
from rfcheck.engine import rng
from rfcheck.engine.couplings import common as cp_common
from rfcheck.engine.couplings import orf as cp_orf

ALPHA = 1e-4  # per-test false-alarm level of every statistical check below
Z_CRIT = stats.norm.isf(ALPHA / 2)  # two-sided z threshold at ALPHA (~3.89)
COUPLINGS = sorted(cp.COUPLINGS)

pytestmark = pytest.mark.mc


def _rows(coupling: str, M: int, d: int, n: int, seed: int) -> np.ndarray:
    """One row per ensemble (index cycling through 0..M-1): ``n`` independent rows."""
    return np.array([cp.sample_ensemble(coupling, M, d, seed + i)[i % M] for i in range(n)])


def _own_axis_p(w: np.ndarray, M: int, d: int) -> float:
    """KS p-value of row ``m``'s direction along its own axis ``e_{m mod d}`` (rows as in
    :func:`_rows`): uniform directions give Beta((d-1)/2, (d-1)/2) for (t+1)/2.  This is
    where a QR without the sign fix shows (Q_mm is biased)."""
    m = np.arange(w.shape[0]) % M % d
    t = w[np.arange(w.shape[0]), m] / np.linalg.norm(w, axis=1)
    return stats.kstest((t + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue


def _direction_check(w: np.ndarray, d: int) -> tuple[float, float, float]:
    """p-values: |w| ~ chi_d, (e.u + 1)/2 ~ Beta((d-1)/2, (d-1)/2), and |corr(|w|, t^2)|."""
    norms = np.linalg.norm(w, axis=1)
    e = np.ones(d) / math.sqrt(d)
    t = (w @ e) / norms
    p_norm = stats.kstest(norms, stats.chi(d).cdf).pvalue
    if d > 1:
        p_dir = stats.kstest((t + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue
    else:
        p_dir = stats.binomtest(int(np.sum(t > 0)), t.size, 0.5).pvalue
    r = stats.pearsonr(norms, t * t).pvalue if d > 1 else 1.0
    return p_norm, p_dir, r


@pytest.mark.parametrize("coupling", COUPLINGS)
@pytest.mark.parametrize(("M", "d"), [(5, 5), (3, 8), (11, 4), (2, 1), (7, 2)])
def test_rows_marginally_standard_normal(coupling, M, d):
    if d < cp.COUPLINGS[coupling].min_d:
        with pytest.raises(ValueError, match=f"needs d >= {cp.COUPLINGS[coupling].min_d}"):
            cp.sample_ensemble(coupling, M, d)
        return
    if not cp.COUPLINGS[coupling].exact_marginals:
        pytest.skip("HD-product rotations are only approximately Haar (tests/test_engine_variants.py)")
    w = _rows(coupling, M, d, 6000, seed=100 * M + d)
    p_norm, p_dir, p_indep = _direction_check(w, d)
    assert p_norm > ALPHA
    assert p_dir > ALPHA
    assert p_indep > ALPHA  # norms independent of directions (Pearson test of |w| vs t^2)
    if d > 1:
        assert _own_axis_p(w, M, d) > ALPHA


def test_missing_sign_fix_is_detected():
    """Power: Householder directions without the sign fix diag(R) > 0 (the classic ORF bug)
    fail the own-axis direction check, and the generic one."""
    d = M = 5
    a, dd, c = 0.5 * d, *cp_common._py_gconsts(0.5 * d)
    rows = []
    for i in range(3000):
        r = rng.PyRNG(i, 0, 0)
        X, _signs = cp_orf._py_haar_columns(r, d, M)  # signs dropped
        g = r.fill_gammas(M, a, dd, c)
        rows.append([X[k][i % M] * math.sqrt(2 * g[i % M]) for k in range(d)])
    w = np.array(rows)
    assert _own_axis_p(w, M, d) < ALPHA
    assert _direction_check(w, d)[1] < ALPHA


def test_marginal_checks_have_power():
    """Wrong laws fail the same checks: chi_{d+1} norms, a tilted direction, coupled norms."""
    g = np.random.default_rng(0)
    d, n = 5, 6000
    dirs = g.standard_normal((n, d))
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    w = dirs * stats.chi(d + 1).rvs(n, random_state=g)[:, None]
    assert _direction_check(w, d)[0] < ALPHA
    tilted = dirs + 0.15 / math.sqrt(d)
    r = stats.chi(d).rvs(n, random_state=g)
    w = tilted / np.linalg.norm(tilted, axis=1)[:, None] * r[:, None]
    assert _direction_check(w, d)[1] < ALPHA
    e = np.ones(d) / math.sqrt(d)
    t2 = (dirs @ e) ** 2
    r = np.sort(stats.chi(d).rvs(n, random_state=g))[np.argsort(np.argsort(t2))]  # comonotone
    assert _direction_check(dirs * r[:, None], d)[2] < ALPHA


@pytest.mark.parametrize(("M", "d"), [(16, 16), (5, 16), (40, 16), (64, 64), (1, 3), (7, 1)])
def test_orf_blocks_exactly_orthogonal(M, d):
    for seed in range(5):
        w = cp.sample_ensemble("orf", M, d, seed)
        q = w / np.linalg.norm(w, axis=1)[:, None]
        m0 = 0
        for b in cp.block_sizes("orf", M, d):
            blk = q[m0:m0 + b]
            np.testing.assert_allclose(blk @ blk.T, np.eye(b), rtol=0, atol=1e-12)
            m0 += b


@pytest.mark.parametrize("coupling", ["orf", "simrf"])
def test_blocks_independent(coupling):
    """Directions of different blocks are independent: E (q_0 . q_d)^2 = 1/d (z-test)."""
    d = 6
    c = np.empty(4000)
    for i in range(c.size):
        w = cp.sample_ensemble(coupling, 2 * d, d, 10_000 + i)
        q = w / np.linalg.norm(w, axis=1)[:, None]
        c[i] = (q[i % d] @ q[d + (i * 7) % d]) ** 2
    z = (c.mean() - 1 / d) / (c.std(ddof=1) / math.sqrt(c.size))
    assert abs(z) < Z_CRIT


def test_iid_rows_independent():
    w = np.array([cp.sample_ensemble("iid", 2, 3, i).ravel() for i in range(5000)])
    r = np.corrcoef(w.T)
    n = w.shape[0]
    off = r[np.triu_indices(6, 1)]
    assert np.max(np.abs(off)) * math.sqrt(n) < stats.norm.isf(ALPHA / 2 / off.size)


@pytest.mark.parametrize("coupling", COUPLINGS)
def test_sample_ensemble_reproducible(coupling):
    a = cp.sample_ensemble(coupling, 9, 4, 3)
    assert a.shape == (9, 4) and a.flags.c_contiguous
    np.testing.assert_array_equal(a, cp.sample_ensemble(coupling, 9, 4, 3))
    # another seed: no entry repeats, except exact zeros, which HD products at d = 4
    # produce with positive probability (H D H D H D can be a signed permutation)
    b = cp.sample_ensemble(coupling, 9, 4, 4)
    assert not np.any((a == b) & (a != 0))


@pytest.mark.parametrize("coupling", COUPLINGS)
@pytest.mark.parametrize(("M", "d"), [(3, 5), (5, 5), (12, 5), (1, 1), (4, 1), (7, 2), (9, 9)])
def test_ensemble_twin_bit_identical(coupling, M, d):
    if d < cp.COUPLINGS[coupling].min_d:
        with pytest.raises(ValueError, match="needs d >="):
            cp.sample_ensemble_reference(coupling, M, d)
        return
    for seed in (0, 17):
        np.testing.assert_array_equal(cp.sample_ensemble(coupling, M, d, seed),
                                      cp.sample_ensemble_reference(coupling, M, d, seed))


@njit
def _ensemble_with_poisoned_scratch(code, seed, stream, M, d, Wt):
    X, vec, raw, nbuf = cp.scratch(M, d)
    X[:] = np.nan
    vec[:] = np.inf
    nbuf[:] = np.nan
    st = rng.init_block(seed, stream, 0, raw)
    cp.ensemble_into(code, st, M, d, Wt, X, vec, raw, nbuf)


@pytest.mark.parametrize("coupling", COUPLINGS)
@pytest.mark.parametrize(("M", "d"), [(5, 5), (3, 4), (11, 4), (4, 4), (7, 7)])
def test_ensemble_ignores_stale_scratch(coupling, M, d):
    """Regression: scratch left NaN/inf by earlier use does not leak into the ensemble
    (a null Householder reflector of an odd block was once zeroed on rows >= r0 only, and
    0 * inf from the stale rows made NaN); the numbers equal the twin's."""
    c = cp.COUPLINGS[coupling]
    wt = np.empty((d, M))
    _ensemble_with_poisoned_scratch(c.code, np.uint64(3), np.uint64(cp.stream_tag(c.code, 2)),
                                    M, d, wt)
    np.testing.assert_array_equal(wt.T, cp.sample_ensemble_reference(coupling, M, d, 3))


# ----------------------------------------------------------------------------- projection law
@pytest.mark.parametrize(("M", "d"), [(8, 8), (20, 8), (3, 8), (1, 1), (5, 2)])
def test_orf_projection_structure(M, d):
    """Exact identity: within a full block sum_m t_m^2 / sq_m = |u_hat|^2 = 1; a partial
    block of b rows gives Beta(b/2, (d-b)/2)."""
    t, sq = cp.sample_projection("orf", M, d, 3000, seed=5)
    m0 = 0
    for b in cp.block_sizes("orf", M, d):
        s = np.sum(t[:, m0:m0 + b] ** 2 / sq[:, m0:m0 + b], axis=1)
        if b == d:
            np.testing.assert_allclose(s, 1.0, rtol=0, atol=1e-12)
        else:
            assert stats.kstest(s, stats.beta(b / 2, (d - b) / 2).cdf).pvalue > ALPHA
        m0 += b


@pytest.mark.parametrize("coupling", COUPLINGS)
@pytest.mark.parametrize(("M", "d"), [(6, 6), (10, 4), (3, 7)])
def test_projection_sampler_matches_ensemble_law(coupling, M, d):
    """(w_m . u_hat, |w_m|^2) from the projection sampler vs the drawn ensembles: two-sample
    KS per coordinate, and the pairwise products t_0 t_1 (the coupling between rows)."""
    if not cp.COUPLINGS[coupling].has_projection:
        pytest.skip("no projection sampler")
    n = 3000
    g = np.random.default_rng(1)
    uh = g.standard_normal(d)
    uh /= np.linalg.norm(uh)
    ws = [cp.sample_ensemble(coupling, M, d, 50_000 + i) for i in range(n)]
    te = np.array([w @ uh for w in ws])
    sqe = np.array([np.sum(w * w, axis=1) for w in ws])
    tp, sqp = cp.sample_projection(coupling, M, d, n, seed=6)
    checks = [(te[:, 0], tp[:, 0]), (te[:, -1], tp[:, -1]), (sqe[:, 0], sqp[:, 0]),
              (te[:, 0] * te[:, 1 % M], tp[:, 0] * tp[:, 1 % M]),
              (te[:, 0] ** 2 / sqe[:, 0], tp[:, 0] ** 2 / sqp[:, 0])]
    for a, b in checks:
        assert stats.ks_2samp(a, b).pvalue > ALPHA


def test_projection_law_check_has_power():
    """The same KS check tells the ORF row coupling from iid (products of two rows)."""
    d = M = 4
    tp_orf, sq_orf = cp.sample_projection("orf", M, d, 3000, seed=6)
    tp_iid, sq_iid = cp.sample_projection("iid", M, d, 3000, seed=7)
    a = tp_orf[:, 0] ** 2 / sq_orf[:, 0] + tp_orf[:, 1] ** 2 / sq_orf[:, 1]
    b = tp_iid[:, 0] ** 2 / sq_iid[:, 0] + tp_iid[:, 1] ** 2 / sq_iid[:, 1]
    assert stats.ks_2samp(a, b).pvalue < ALPHA


def test_iid_projection_without_norms():
    t, sq = cp.sample_projection("iid", 5, 3, 10, seed=1, need_sq=False)
    assert np.all(np.isnan(sq)) and np.all(np.isfinite(t))
    t, sq = cp.sample_projection("iid", 5, 1, 10, seed=1)
    np.testing.assert_array_equal(sq, t * t)  # d = 1: |w|^2 = t^2 exactly


# ----------------------------------------------------------------------------- registry
def test_registry_and_block_sizes():
    assert {"iid", "orf", "simrf"} <= set(cp.COUPLINGS)
    assert len({c.code for c in cp.COUPLINGS.values()}) == len(cp.COUPLINGS)
    tags = {cp.stream_tag(c.code, p) for c in cp.COUPLINGS.values() for p in range(4)}
    assert len(tags) == 4 * len(cp.COUPLINGS)  # distinct streams per (coupling, path)
    assert cp.block_sizes("simrf", 10, 4) == [4, 4, 2]
    for name, c in cp.COUPLINGS.items():
        assert c.name == name
    assert cp.block_sizes("orf", 10, 4) == [4, 4, 2]
    assert cp.block_sizes("orf", 3, 4) == [3]
    assert cp.block_sizes("orf", 8, 4) == [4, 4]
    assert cp.block_sizes("iid", 3, 4) == [1, 1, 1]
    assert cp.pad8(1) == 8 and cp.pad8(8) == 8 and cp.pad8(9) == 16


@pytest.mark.parametrize(("args", "match"), [
    (("nope", 3, 3), "unknown coupling"),
    (("orf", 0, 3), "M must be"),
    (("orf", 3, 0), "d must be"),
    (("orf", 3, 3, -1), "seed"),
    (("simrf", 3, 1), "needs d >= 2"),
])
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        cp.sample_ensemble(*args)


@pytest.mark.parametrize("call", [
    lambda: cp.sample_projection("simrf", 3, 1, 5),
    lambda: cp.block_sizes("simrf", 3, 1),
    lambda: cp.sample_ensemble_reference("simrf", 3, 1),
])
def test_simrf_needs_two_dimensions(call):
    with pytest.raises(ValueError, match="'simrf' needs d >= 2; got d=1"):
        call()


# ----------------------------------------------------------------------------- orf ensemble
def test_orf_ensemble_numbers_are_haar_blocks():
    """What the ensemble sampler returns (Householder panels of 8, rfcheck.engine.wy) is an ORF
    ensemble: within a block, W W^T is diagonal (orthogonal rows, to rounding) with chi_d^2 norms,
    whose mean is d (z-test at ALPHA)."""
    M, d, n = 16, 16, 400
    W = np.stack([cp.sample_ensemble("orf", M, d, seed=s) for s in range(n)])  # (n, M, d)
    G = W @ np.transpose(W, (0, 2, 1))
    off = G - np.einsum("nij,ij->nij", G, np.eye(M))
    assert np.abs(off).max() < 1e-12 * np.abs(G).max()
    sq = np.einsum("nii->ni", G).ravel()
    z = (sq.mean() - d) / (sq.std(ddof=1) / math.sqrt(sq.size))
    assert abs(z) < Z_CRIT
    # power companion: the chi_d^2 mean test rejects norms scaled by 1.05
    z_bad = (1.05**2 * sq.mean() - d) / (1.05**2 * sq.std(ddof=1) / math.sqrt(sq.size))
    assert abs(z_bad) > Z_CRIT

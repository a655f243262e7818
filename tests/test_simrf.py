"""Tests of the Simplex Random Features coupling (``"simrf"``, Reid et al. 2023, eq (8)-(9)).

Exact geometry (angles, zero sum), the projection sampler's exact structure, independence
of norms, the NumPy simplex matrix; marginal laws, twins, thread counts and MSE are in the
registry-driven tests of test_couplings.py and test_montecarlo.py.  Statistical checks use
fixed seeds and a per-test false-alarm level ALPHA = 1e-4; each has a power companion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rfcheck.engine import couplings as cp
from rfcheck.engine import montecarlo
from rfcheck.engine.couplings import simrf as cp_simrf

ALPHA = 1e-4  # per-test false-alarm level of every statistical check below

pytestmark = pytest.mark.mc

ANGLE_TOL = 1e-12  # float64 unit rows: ~5e-16 observed; 1e-12 leaves headroom


def _angle_error(w: np.ndarray, sizes: list[int], d: int) -> float:
    """Worst angle error within blocks, ``|cos angle(w_i, w_j) + 1/(d-1)|``, plus
    ``|angle - arccos(-1/(d-1))|`` where ``d > 2`` (at ``d = 2`` the angle is pi, where
    arccos is ill-conditioned: a 1e-16 cosine error is a 1.5e-8 angle error)."""
    q = w / np.linalg.norm(w, axis=1)[:, None]
    worst, m0 = 0.0, 0
    for b in sizes:
        g = q[m0:m0 + b] @ q[m0:m0 + b].T
        off = g[~np.eye(b, dtype=bool)]
        if off.size:
            worst = max(worst, float(np.max(np.abs(off + 1.0 / (d - 1)))))
            if d > 2:
                ang = np.arccos(np.clip(off, -1.0, 1.0))
                worst = max(worst, float(np.max(np.abs(ang - math.acos(-1.0 / (d - 1))))))
        m0 += b
    return worst


@pytest.mark.parametrize(("M", "d"), [(2, 2), (3, 3), (5, 5), (3, 8), (40, 16), (64, 64),
                                      (7, 2)])
def test_simrf_block_angles_exact(M, d):
    sizes = cp.block_sizes("simrf", M, d)
    for seed in range(5):
        w = cp.sample_ensemble("simrf", M, d, seed)
        assert _angle_error(w, sizes, d) < ANGLE_TOL
        q = w / np.linalg.norm(w, axis=1)[:, None]
        m0 = 0
        for b in sizes:  # a full simplex block sums to zero
            if b == d:
                np.testing.assert_allclose(q[m0:m0 + b].sum(axis=0), 0.0, rtol=0, atol=1e-12)
            m0 += b


def test_angle_check_has_power():
    """Power: orthogonal directions (ORF ensembles) labelled simplex fail the angle check,
    and so do simplex directions of the wrong dimension (angle arccos(-1/d))."""
    d = M = 6
    sizes = cp.block_sizes("simrf", M, d)
    assert _angle_error(cp.sample_ensemble("orf", M, d, 0), sizes, d) > 0.1
    s = montecarlo.simplex_matrix(d + 1)[:, :d]  # unit-free rows of a d+1 simplex, dropped coord
    s = s[:d] / np.linalg.norm(s[:d], axis=1)[:, None]
    assert _angle_error(s, sizes, d) > 1e-3


def test_simrf_norms_independent():
    """Within a block, norms are iid chi_d and independent of the (rotated) directions:
    Pearson tests of |w_0| vs |w_1| and of |w_0| vs (q_0 . e)^2; KS of |w_1| against chi_d."""
    d = M = 4
    n = 5000
    w = np.array([cp.sample_ensemble("simrf", M, d, 30_000 + i) for i in range(n)])
    r = np.linalg.norm(w, axis=2)
    t2 = (w[:, 0, 0] / r[:, 0]) ** 2
    assert stats.pearsonr(r[:, 0], r[:, 1]).pvalue > ALPHA
    assert stats.pearsonr(r[:, 0], t2).pvalue > ALPHA
    assert stats.kstest(r[:, 1], stats.chi(d).cdf).pvalue > ALPHA
    # power: comonotone norms within the block are caught by the same Pearson test
    r1 = np.sort(r[:, 1])[np.argsort(np.argsort(r[:, 0]))]
    assert stats.pearsonr(r[:, 0], r1).pvalue < ALPHA


@pytest.mark.parametrize(("M", "d"), [(8, 8), (20, 8), (3, 8), (4, 2)])
def test_simrf_projection_structure(M, d):
    """Exact identities of a full block: ``sum_m t_m / r_m = 0`` (the simplex rows sum to
    zero) and ``sum_m (t_m / r_m)^2 = d/(d-1) (1 - v_d^2) <= d/(d-1)``; and each
    ``(t_m/r_m + 1)/2 ~ Beta((d-1)/2, (d-1)/2)`` (uniform direction, KS)."""
    t, sq = cp.sample_projection("simrf", M, d, 3000, seed=5)
    c = t / np.sqrt(sq)
    m0 = 0
    for b in cp.block_sizes("simrf", M, d):
        blk = c[:, m0:m0 + b]
        if b == d:
            np.testing.assert_allclose(blk.sum(axis=1), 0.0, rtol=0, atol=1e-12)
            assert np.all(np.sum(blk**2, axis=1) <= d / (d - 1) + 1e-12)
        m0 += b
    assert stats.kstest((c[:, -1] + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue > ALPHA


def test_simplex_matrix():
    for d in (2, 3, 7, 64):
        s = montecarlo.simplex_matrix(d)
        g = s @ s.T
        np.testing.assert_allclose(np.diag(g), 1.0, rtol=0, atol=1e-14)
        np.testing.assert_allclose(g[~np.eye(d, dtype=bool)], -1 / (d - 1), rtol=0, atol=1e-14)
        np.testing.assert_allclose(s[:, -1], 0.0, rtol=0, atol=0)  # eq (9): last coordinate 0
        x = np.arange(1.0, d + 1)  # Algorithm 1 gives the same S x
        a, cc, kinv = cp_simrf._py_simplex_consts(d)
        yd = kinv * x[:-1].sum()
        np.testing.assert_allclose(s @ x, np.r_[a * x[:-1] - cc * yd, yd], rtol=1e-14, atol=1e-13)
    with pytest.raises(ValueError, match="d >= 2"):
        montecarlo.simplex_matrix(1)


def test_simulate_rejects_one_dimension():
    from rfcheck import features

    prod = features.positive_product(np.array([0.3]), np.array([0.2]))
    for path in montecarlo.PATHS:
        with pytest.raises(ValueError, match="'simrf' needs d >= 2"):
            montecarlo.simulate(prod, 3, 10, coupling="simrf", path=path)
    with pytest.raises(ValueError, match="'simrf' needs d >= 2"):
        montecarlo.simulate_numpy(prod, 3, 10, coupling="simrf")

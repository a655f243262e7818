"""Tests of the SimRF+ / fast HD-product / antithetic samplers in ``rfcheck.engine.couplings``.

Marginal checks use a KS test at level 1e-4 per test (fixed seeds) with a power check on a
wrongly scaled law; geometric checks are exact to rounding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
from scipy import stats

from rfcheck.engine import couplings as C

ALPHA = 1e-4


def test_simrf_plus_lowers_truncated_objective_and_keeps_norms() -> None:
    for seed in range(20):
        d = 3 + seed % 6
        W0 = C.sample_ensemble("simrf", d, d, seed=seed)
        W, info = C.sample_simrf_plus(d, d, seed=seed)
        assert info.converged == (True,)
        assert info.passes[0] <= 1000
        np.testing.assert_allclose(np.linalg.norm(W, axis=1), np.linalg.norm(W0, axis=1), rtol=1e-13)
        assert C.truncated_conformity_objective(W) <= C.truncated_conformity_objective(W0) * (1 + 1e-13)
        # eq (16): each vector points away from the resultant of the others
        tot = W.sum(axis=0)
        for i in range(d):
            rest = tot - W[i]
            cos = W[i] @ rest / (np.linalg.norm(W[i]) * np.linalg.norm(rest))
            assert cos == pytest.approx(-1.0, abs=1e-9)


def test_simrf_plus_strictly_better_for_unequal_norms() -> None:
    W0 = C.sample_ensemble("simrf", 6, 6, seed=5)
    W, _ = C.sample_simrf_plus(6, 6, seed=5)
    assert C.truncated_conformity_objective(W) < C.truncated_conformity_objective(W0) - 1e-6


def test_simrf_plus_marginal_gaussian() -> None:
    d, n = 5, 1500
    x = np.array([C.sample_simrf_plus(d, d, seed=100 + s)[0][s % d] for s in range(n)])
    u = np.ones(d) / math.sqrt(d)
    assert stats.kstest(x @ u, "norm").pvalue > ALPHA
    assert stats.kstest(np.sum(x * x, axis=1), stats.chi2(d).cdf).pvalue > ALPHA
    assert stats.kstest(1.35 * (x @ u), "norm").pvalue < ALPHA  # power: a 35% scale error is seen


def test_simrf_plus_blocks_and_info() -> None:
    W, info = C.sample_simrf_plus(11, 4, seed=2)
    assert W.shape == (11, 4)
    assert len(info.passes) == 3  # blocks 4, 4, 3


@pytest.mark.parametrize("D", [2, 8, 64])
def test_fwht_is_normalised_hadamard(D: int) -> None:
    x = np.random.default_rng(D).standard_normal((3, D))
    H = scipy.linalg.hadamard(D) / math.sqrt(D)
    np.testing.assert_allclose(C.fwht(x), x @ H.T, atol=1e-13)


def test_hd_rotation_orthogonal() -> None:
    R = C.hd_rotation(16, np.random.default_rng(0))
    np.testing.assert_allclose(R @ R.T, np.eye(16), atol=1e-13)


def test_fast_orf_and_simrf_geometry() -> None:
    d = 16
    W = C.sample_fast("orf", d, d, seed=1)
    G = W @ W.T
    np.testing.assert_allclose(G - np.diag(np.diag(G)), 0, atol=1e-11)
    W = C.sample_fast("simrf", d, d, seed=1)
    U = W / np.linalg.norm(W, axis=1, keepdims=True)
    off = (U @ U.T)[~np.eye(d, dtype=bool)]
    np.testing.assert_allclose(off, -1 / (d - 1), atol=1e-12)


def test_fast_padding_and_marginals() -> None:
    W = C.sample_fast("simrf", 7, 5, seed=3)
    assert W.shape == (7, 5)  # padded to D = 8, first 5 columns
    x = np.concatenate([C.sample_fast("orf", 8, 8, seed=s)[:, 0] for s in range(1500)])
    assert abs(x.mean()) < 4.5 / math.sqrt(x.size)
    assert abs(np.mean(x * x) - 1) < 4.5 * math.sqrt(2 / x.size)


def test_antithetic_pairs() -> None:
    W = C.sample_ensemble("orf", 5, 4, seed=0)
    A = C.antithetic(W)
    assert A.shape == (5, 4)
    np.testing.assert_array_equal(A[1], -A[0])
    np.testing.assert_array_equal(A[0], W[0])
    np.testing.assert_array_equal(A[4], W[2])


@pytest.mark.parametrize(
    ("call", "msg"),
    [
        (lambda: C.sample_fast("orf", 4, 6, pad=False), "power of two"),
        (lambda: C.sample_fast("simrf", 4, 1), "d must be an integer >= 2"),
        (lambda: C.sample_fast("iid", 4, 4), "supports 'orf' and 'simrf'"),
        (lambda: C.sample_simrf_plus(0, 4), "M must be an integer >= 1"),
        (lambda: C.sample_simrf_plus(4, 1), "needs d >= 2"),
        (lambda: C.simrf_plus_block(np.ones((3, 2)), tol=float("nan")), "tol must be"),
        (lambda: C.hd_rotation(6, np.random.default_rng(0)), "power of two"),
        (lambda: C.antithetic(np.full((2, 2), np.nan)), "finite"),
    ],
)
def test_bad_input(call: object, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        call()  # type: ignore[operator]

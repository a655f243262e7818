"""The public pytest helpers: pass on truth, fail on planted errors, refuse weak evidence."""

from __future__ import annotations

import numpy as np
import pytest

from rfcheck import features
from rfcheck.closed_forms import crt
from rfcheck.testing import Inconclusive, assert_no_worse_than, assert_unbiased, assert_variance_matches


def _pair(d: int, nx: float, ny: float) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.zeros(d), np.zeros(d)
    x[0], y[1] = nx, ny
    return x, y


def _pos_var(x: np.ndarray, y: np.ndarray, m: int) -> float:
    st = {k: (float(v[0]) if k != "d" else v) for k, v in crt.pair_stats(x, y).items()}
    return float(crt.positive_variance(**st)) / m


def test_variance_matches_true_formula_and_rejects_wrong_one():
    x, y = _pair(8, 0.4, 0.3)
    prod = features.positive_product(x, y)
    assert_variance_matches(prod, 4, _pos_var(x, y, 4), seed=1)
    with pytest.raises(AssertionError, match="disagrees"):
        assert_variance_matches(prod, 4, 1.2 * _pos_var(x, y, 4), seed=1)


def test_variance_heavy_tails_are_inconclusive():
    x, y = _pair(64, 1.5, 1.5)  # |x+y|^2 = 4.5: the squared error's 4th moment is not estimable at 20k trials
    with pytest.raises(Inconclusive):
        assert_variance_matches(features.positive_product(x, y), 1, _pos_var(x, y, 1), n_trials=20_000, seed=2)


def test_unbiased_and_bias_detected():
    x, y = _pair(4, 0.5, 0.2)
    prod = features.oprf_product(x[None, :], y[None, :])
    assert_unbiased(prod, 16, coupling="orf", seed=3)
    biased = features.ExpProduct(prod.alpha, prod.beta, prod.log_c + np.log(1.05), prod.u, prod.target)
    with pytest.raises(AssertionError, match="biased"):
        assert_unbiased(biased, 16, coupling="orf", seed=3)


def test_no_worse_than_orf_vs_iid_and_reverse_rejected():
    x, y = _pair(16, 0.4, 0.4)
    prod = features.positive_product(x, y)
    assert_no_worse_than(prod, 16, "orf", "iid", seed=4)
    with pytest.raises(AssertionError, match="worse"):
        assert_no_worse_than(prod, 16, "iid", "simrf", n_trials=400_000, seed=4)


def test_one_pair_only():
    x = np.ones((2, 3)) * 0.1
    with pytest.raises(ValueError, match="one"):
        assert_unbiased(features.positive_product(x, x), 2)

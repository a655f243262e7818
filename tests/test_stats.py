"""Statistics: standard errors, tail diagnostics, calibrated false-alarm rates, power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from rfcheck import stats


def test_exact_se_from_fourth_moments():
    rng = np.random.default_rng(0)
    x = rng.normal(size=10_000)
    # e = x^2 for K = 0: E e = 1, E e^2 = 3 -> Var e = 2
    est = stats.estimate_mse(x, 0.0, exact_moments=(1.0, 3.0))
    assert est.se == pytest.approx(math.sqrt(2.0 / 10_000), rel=1e-12)
    assert est.se_source == "exact-4th-moment" and est.trustworthy


def test_sample_se_trusted_for_light_tails():
    rng = np.random.default_rng(1)
    est = stats.estimate_mean(rng.normal(loc=5.0, size=100_000))
    assert est.trustworthy
    assert abs(est.value - 5.0) < 5 * est.se
    assert est.se == pytest.approx(1 / math.sqrt(100_000), rel=0.02)


def test_heavy_tails_flagged_untrustworthy():
    """Lognormal with sigma = 3: the fourth moment is dominated by a few draws."""
    rng = np.random.default_rng(2)
    x = rng.lognormal(sigma=3.0, size=200_000)
    est = stats.estimate_mse(x, float(np.exp(4.5)))
    assert not est.trustworthy
    assert "heavy tails" in est.reason


def test_trials_for_precision():
    est = stats.Estimate(1.0, 0.1, 100, "sample", True, 0.0, 0.0)
    assert est.trials_for(0.01) == 10_000


def test_fourth_central_moment_of_mean_matches_simulation():
    # X ~ Exp(1): raw moments k!
    var, mu4 = stats.fourth_central_moment_of_mean((1.0, 2.0, 6.0, 24.0), 5)
    rng = np.random.default_rng(3)
    means = rng.exponential(size=(400_000, 5)).mean(axis=1)
    assert var == pytest.approx(np.var(means), rel=0.02)
    assert mu4 == pytest.approx(np.mean((means - 1.0) ** 4), rel=0.05)


def test_z_critical_bonferroni():
    assert stats.z_critical(0.05) == pytest.approx(1.959964, rel=1e-6)
    assert stats.z_critical(0.05, 10) == pytest.approx(sps.norm.isf(0.0025), rel=1e-12)
    with pytest.raises(ValueError, match="alpha"):
        stats.z_critical(1.5)


@pytest.mark.mc
def test_compare_mc_false_alarm_rate_calibrated():
    """Over 400 seeds the true variance of a uniform variable is rejected at <= nominal rate."""
    alpha = 0.05
    zc = stats.z_critical(alpha)
    rejections = 0
    n_rep = 400
    for seed in range(n_rep):
        x = np.random.default_rng(seed).uniform(size=4000)
        est = stats.estimate_mse(x, 0.5)
        ev = stats.compare_mc({}, 1 / 12, est, z_crit=zc)
        rejections += ev.decided and ev.disc > 1
    # one-sided binomial test: the rate is not above nominal at the 1e-3 level
    assert sps.binom.sf(rejections - 1, n_rep, alpha) > 1e-3, rejections


@pytest.mark.mc
def test_compare_mc_power_against_wrong_formula():
    zc = stats.z_critical(1e-3, 10)
    x = np.random.default_rng(7).uniform(size=40_000)
    est = stats.estimate_mse(x, 0.5)
    assert stats.compare_mc({}, 1.1 / 12, est, z_crit=zc).disc > 1  # 10% too large: rejected
    assert stats.compare_mc({}, 1 / 12, est, z_crit=zc).disc <= 1


def test_compare_mc_without_power_is_undecided():
    est = stats.Estimate(1.0, 0.5, 100, "sample", True, 0.0, 0.0)
    ev = stats.compare_mc({}, 1.0, est, z_crit=3.0)
    assert not ev.decided and "no power" in ev.note


def test_compare_deterministic_and_inequality():
    ok = stats.compare_deterministic({}, 1.0 + 1e-30, 1.0, 1e-31, rtol=1e-25)
    assert ok.disc <= 1
    bad = stats.compare_deterministic({}, 1.001, 1.0, 1e-31, rtol=1e-25)
    assert bad.disc > 1
    undecided = stats.compare_deterministic({}, 1.0, 1.0, math.inf, rtol=1e-25)
    assert not undecided.decided
    assert stats.compare_inequality({}, 0.5, 1.0, 0.0, rtol=1e-20).disc < 0
    assert stats.compare_inequality({}, 1.0 + 1e-10, 1.0, 0.0, rtol=1e-20).disc > 1


def test_kernels_and_softmax_relation():
    from rfcheck import kernels

    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(5, 7)), rng.normal(size=(5, 7))
    lhs = kernels.log_softmax_kernel(x, y)
    rhs = 0.5 * np.sum(x * x, 1) + kernels.log_gaussian_kernel(x, y) + 0.5 * np.sum(y * y, 1)
    assert np.allclose(lhs, rhs, rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="float64 range"):
        kernels.softmax_kernel(np.full(4, 20.0), np.full(4, 20.0))
    with pytest.raises(ValueError, match="same shape"):
        kernels.gaussian_kernel(np.ones(3), np.ones(4))

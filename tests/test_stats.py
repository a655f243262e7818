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


# -- range and cancellation (audit of 2026-11-26) ------------------------------------------------


@pytest.mark.parametrize("scale", [1e-150, 1e-100, 1e-40, 1e40, 1e100, 1e150])
def test_mse_is_scale_equivariant_far_from_one(scale):
    """The same sample times ``scale``: value and SE scale by ``scale^2``, trust is unchanged (the
    squares of deviations ~ scale^2 used to underflow to a zero SE below ~1e-81 and overflow above ~1e77)."""
    k = 1.0 + 0.2 * np.random.default_rng(8).standard_normal(20_000)
    ref = stats.estimate_mse(k, 1.0)
    got = stats.estimate_mse(k * scale, scale)
    assert ref.trustworthy and got.trustworthy
    assert got.value == pytest.approx(ref.value * scale**2, rel=1e-12)
    assert got.se == pytest.approx(ref.se * scale**2, rel=1e-12)
    assert got.tail_cv == pytest.approx(ref.tail_cv, rel=1e-9)


def test_mean_is_scale_equivariant_far_from_one():
    x = 1.0 + 0.2 * np.random.default_rng(9).standard_normal(20_000)
    ref = stats.estimate_mean(x)
    for scale in (1e-300, 1e300):
        got = stats.estimate_mean(x * scale)
        assert got.trustworthy and got.value == pytest.approx(ref.value * scale, rel=1e-12)
        assert got.se == pytest.approx(ref.se * scale, rel=1e-12)


def test_mse_keeps_the_spread_of_estimates_far_below_the_target():
    """Positive features underflowing: every K_hat_i - K rounds to -K, but K_hat itself is
    max-dominated (lognormal, sigma = 40) -- heavy tails, not a zero standard error."""
    k = np.exp(-620.0 + 40.0 * np.random.default_rng(10).standard_normal(20_000))
    assert np.all(k - 1.0 == -1.0)
    est = stats.estimate_mse(k, 1.0)
    assert est.value == 1.0 and est.se > 0
    assert not est.trustworthy and "heavy tails" in est.reason


def test_mse_outside_float64_is_not_trusted():
    k = 1.0 + 0.2 * np.random.default_rng(11).standard_normal(20_000)
    over = stats.estimate_mse(k * 1e160, 1e160)  # MSE ~ 4e318
    assert math.isinf(over.value) and not over.trustworthy and "overflows" in over.reason
    sub = stats.estimate_mse(k * 1e-161, 1e-161)  # MSE ~ 4e-324: subnormal
    assert not sub.trustworthy and "underflows" in sub.reason and math.isinf(sub.se)


def test_constant_estimates_off_target_are_not_trusted():
    est = stats.estimate_mse(np.zeros(1000), 1.0)  # e.g. every feature product underflowed to 0
    assert est.value == 1.0 and not est.trustworthy and math.isinf(est.se)
    exact = stats.estimate_mse(np.full(1000, 2.0), 2.0)  # a deterministic, exact estimator
    assert exact.value == 0.0 and exact.se == 0.0 and exact.trustworthy


def test_non_finite_estimates_say_more_trials_cannot_help():
    est = stats.estimate_mse(np.array([1.0, np.inf] * 100), 1.0)
    assert not est.trustworthy and "1" in est.reason and "cannot help" in est.reason


@pytest.mark.parametrize("moments", [(1.0, 0.5), (1.0, math.nan), (math.inf, 1.0), (-1.0, 1.0)])
def test_invalid_exact_moments_raise(moments):
    with pytest.raises(ValueError, match="exact_moments"):
        stats.estimate_mse(np.ones(100), 0.0, exact_moments=moments)
    with pytest.raises(ValueError, match="exact_var"):
        stats.estimate_mean(np.ones(100), exact_var=-1.0)


def test_fourth_central_moment_of_mean_refuses_cancelled_moments():
    s2 = 1e-20  # lognormal with sigma^2 = 1e-20: raw moments exp(k^2 s2 / 2) are 1 to float64
    raw = tuple(math.exp(k * k * s2 / 2) for k in (1, 2, 3, 4))
    with pytest.raises(ValueError, match="cancellation"):
        stats.fourth_central_moment_of_mean((raw[0], raw[1], raw[2], raw[3] * (1 - 1e-15)), 1)


@pytest.mark.parametrize("s2", [1e-3, 1e-20, 1e-60])
def test_exact_moments_of_mean_raises_precision_until_digits_survive(s2):
    """Lognormal(0, sigma^2 = s2): var = (e^s2 - 1) e^s2 and mu4 = var^2 (e^{4 s2} + 2 e^{3 s2} + 3 e^{2 s2} - 3)
    (the closed-form kurtosis, independent of the raw-moment route), for the mean of 3."""
    import mpmath

    def raw(dps):
        with mpmath.workdps(dps):
            return tuple(mpmath.exp(k * k * mpmath.mpf(s2) / 2) for k in (1, 2, 3, 4))

    var, mu4m = stats.exact_moments_of_mean(raw, 3)
    with mpmath.workdps(60):
        v = mpmath.expm1(s2) * mpmath.exp(s2)
        kurt = mpmath.exp(4 * s2) + 2 * mpmath.exp(3 * s2) + 3 * mpmath.exp(2 * s2) - 3
        want = (v / 3, (kurt * v**2 + 6 * v**2) / 27)
    assert var == pytest.approx(float(want[0]), rel=1e-14)
    assert mu4m == pytest.approx(float(want[1]), rel=1e-14)


@pytest.mark.mc
def test_exact_moment_path_false_alarms_calibrated_on_skewed_errors():
    """Lognormal(sigma = 1) draws at n = 20,000, exact moments of the squared error, alpha = 1e-3.
    Before the tail check applied to the exact path (and the relative SE was taken against the
    sample value) such runs were rejected at 0.7% -- 7x nominal (audit of 2026-11-26)."""
    n, reps, s = 20_000, 1500, 1.0
    raw = tuple(math.exp(k * k * s * s / 2) for k in (1, 2, 3, 4))
    var, mu4 = stats.fourth_central_moment_of_mean(raw, 1)
    zc = stats.z_critical(1e-3)
    rng = np.random.default_rng(12)
    rejected = 0
    for _ in range(reps):
        est = stats.estimate_mse(rng.lognormal(0, s, n), raw[0], exact_moments=(var, mu4))
        ev = stats.compare_mc({}, var, est, z_crit=zc)
        rejected += ev.decided and ev.disc > 1
    assert sps.binom.sf(rejected - 1, reps, 1e-3) > 1e-3, rejected


def test_complex_samples_are_refused():
    with pytest.raises(ValueError, match="must be real"):
        stats.estimate_mean(np.array([1.0 + 1j, 2.0]))
    with pytest.raises(ValueError, match="must be real"):
        stats.estimate_mse(np.array([1.0 + 1j, 2.0]), 1.0)


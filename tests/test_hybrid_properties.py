"""HRF: the remaining items of the issue's "Tests and bad input" list.

Hypothesis properties: every MSE closed form is >= 0 (its log is never NaN, and the mpmath
face stays real) over the whole stated domain, including variant II at unequal norms; the
angular hybrid has zero error at theta = 0 and pi for equal norms for *every* draw (and the
normalised Gaussian hybrid at theta = 0); the Gaussian lambda of eq (67) lies in [0, 1] for
|x|, |y| <= r; unbiasedness by Monte Carlo over drawn pairs (z-test, Bonferroni over the
examples, with a power check).  Bad input: singular A, m, n < 1 (also as empty draws), theta
outside [0, pi] (lambda = theta/pi outside [0, 1]), NaN -> ValueError naming the condition.
The Lemma 2.3 identity is a Hypothesis property in tests/test_hrf_hybrid.py.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfcheck.closed_forms import hrf
from rfcheck.estimators import hrf as hy
from rfcheck.stats import estimate_mean, z_critical

norms = st.floats(0.0, 3.0, allow_nan=False)
pos_norms = st.floats(0.05, 3.0, allow_nan=False)
angles = st.floats(0.0, math.pi, allow_nan=False)
counts = st.integers(1, 64)
shared = st.sampled_from([0, 1])
sigmas = st.floats(0.2, 2.0, allow_nan=False)


def _pair(nx: float, ny: float, th: float) -> tuple[np.ndarray, np.ndarray]:
    return np.array([nx, 0.0]), ny * np.array([math.cos(th), math.sin(th)])


def _nonneg(lv) -> None:
    """log MSE is -inf (MSE = 0) or a real number: never NaN, never +inf here."""
    v = float(lv)
    assert not math.isnan(v) and v < math.inf, v


# ------------------------------------------------------------------------ MSE >= 0


@given(norms, norms, angles, counts, counts, shared)
def test_mse_closed_forms_nonnegative(nx, ny, th, m, n, sh):
    _nonneg(hrf.log_mse_trig(nx, ny, th, m))
    _nonneg(hrf.log_mse_pos(nx, ny, th, m))
    _nonneg(hrf.log_mse_angular_hybrid(nx, ny, th, m, n, sh))


@given(norms, norms, angles, counts, counts, sigmas, st.floats(0.3, 3.0), shared)
def test_gauss_hybrid_mse_nonnegative(nx, ny, th, m, n, sigma, r, sh):
    _nonneg(hrf.log_mse_gauss_hybrid(nx, ny, th, m, n, sigma, r, sh))


@settings(max_examples=15)
@given(pos_norms, pos_norms, angles, st.integers(1, 8), st.integers(1, 8), shared)
def test_mse_mpmath_face_real(nx, ny, th, m, n, sh):
    """A negative MSE would make the mpmath log complex."""
    v = hrf.log_mse_angular_hybrid(nx, ny, th, m, n, sh, backend="mpmath", dps=30)
    assert isinstance(v, mpmath.mpf) or v == -mpmath.inf


@given(pos_norms, angles, counts, counts, sigmas)
def test_same_length_forms_nonnegative(r, th, m, n, sigma):
    _nonneg(hrf.log_mse_angular_hybrid_same_length(r, th, m, n))
    _nonneg(hrf.log_mse_gauss_hybrid_same_length(r, th, m, n, sigma))
    _nonneg(hrf.log_rel_error_angular_hybrid(r, th, m, n))


# ------------------------------------------------ zero error at theta = 0 and pi, equal norms


@given(st.integers(0, 10_000), st.floats(0.05, 2.5), st.integers(1, 6), st.integers(1, 6), st.integers(2, 8))
def test_angular_hybrid_exact_at_both_ends_for_every_draw(seed, r, m, n, d):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=d)
    x *= r / np.linalg.norm(x)
    wp, wt, tau = rng.normal(size=(20, m, d)), rng.normal(size=(20, m, d)), rng.normal(size=(20, n, d))
    for y in (x.copy(), -x):
        est = hy.angular_hybrid(x, y, wp, wt, tau)
        # float64 rounding: lam_hat = 1/2 + sum (i/sqrt(2n))^2 sgn sgn is exact only to a few ulps, and the
        # weight's rounding multiplies the *other* base estimator (|SM^trig| ~ e^{r^2} at theta = pi, while
        # SM = e^{-r^2}); the bound is therefore a few eps times the base estimators' sizes, not times SM
        size = np.abs(hy.sm_pos(x, y, wp)) + np.abs(hy.sm_trig(x, y, wt))
        np.testing.assert_array_less(np.abs(est - math.exp(x @ y)), 16 * np.finfo(float).eps * size)
    # and not in between: a generic angle has a positive spread (the property is not vacuous)
    y = r * np.roll(x, 1) / np.linalg.norm(np.roll(x, 1))
    if abs(x @ y) < 0.9 * r * r:
        assert np.std(hy.angular_hybrid(x, y, wp, wt, tau)) > 0


@given(st.floats(0.05, 2.5), counts, counts)
def test_angular_hybrid_closed_form_zero_at_ends(r, m, n):
    assert hrf.log_mse_angular_hybrid_same_length(r, 0.0, m, n) == -np.inf
    # at pi - delta the MSE vanishes linearly in delta (E(1 - lambda)^2 ~ delta/(n pi)): float(pi)
    # itself is 1.2e-16 short of pi, so the limit is checked by the slope
    lo, hi = (float(hrf.log_mse_angular_hybrid_same_length(r, math.pi - dl, m, n)) for dl in (1e-8, 1e-4))
    assert abs((lo - hi) - math.log(1e-4)) < 0.01
    # a wrong formula (eq 47 printed / base estimators) would not vanish at both ends
    assert hrf.log_mse_trig(r, r, math.pi, m) - 2 * r * r * math.cos(math.pi) > math.log(1e-6)


@given(st.integers(0, 10_000), st.floats(0.05, 2.0), st.integers(1, 6), st.integers(1, 6), sigmas)
def test_normalized_gauss_hybrid_exact_at_zero(seed, r, m, n, sigma):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=3)
    x *= r / np.linalg.norm(x)
    wp, wt, tau = rng.normal(size=(10, m, 3)), rng.normal(size=(10, m, 3)), rng.normal(size=(10, n, 3))
    est = hy.normalized_gauss_hybrid(x, x.copy(), wp, wt, tau, sigma, r)
    np.testing.assert_allclose(est, math.exp(x @ x), rtol=1e-12)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), angles, st.floats(0.3, 3.0), sigmas)
def test_gauss_lambda_in_unit_interval_inside_ball(fx, fy, th, r, sigma):
    """eq (67): lambda(x, y) in [0, 1] for |x|, |y| <= r (the paper's lambda: R^d x R^d -> [0, 1])."""
    lam = hrf.gauss_lambda_mean(fx * r, fy * r, th, 1, sigma, r)
    assert -1e-15 <= lam <= 1 + 1e-12


# ------------------------------------------------------------------ unbiasedness by MC

N_EX = 8
ALPHA = 1e-3


@settings(max_examples=N_EX)
@given(st.sampled_from(["trig", "pos", "angular", "angular-shared", "gauss"]),
       st.floats(0.1, 0.6), st.floats(0.1, 0.6), angles, st.integers(1, 4), st.integers(1, 4),
       st.integers(0, 1000))
def test_unbiased_over_drawn_pairs(kind, nx, ny, th, m, n, seed):
    """Light-tailed region (|x|, |y| <= 0.6); two-sided z-test at family-wise ALPHA over the
    examples (Bonferroni); the tail diagnostic must trust the SE."""
    x, y = _pair(nx, ny, th)
    est = estimate_mean(hy.simulate(kind, x, y, m, n, 40_000, seed=seed, sigma=0.8, r=0.6))
    assert est.trustworthy, est.reason
    assert abs(est.value - math.exp(x @ y)) < z_critical(ALPHA, N_EX) * est.se


def test_unbiasedness_test_has_power():
    """The same test rejects a 3% bias (the estimator scaled by 1.03)."""
    x, y = _pair(0.5, 0.5, 1.0)
    est = estimate_mean(1.03 * hy.simulate("angular", x, y, 4, 4, 40_000, seed=1))
    assert abs(est.value - math.exp(x @ y)) > z_critical(ALPHA, N_EX) * est.se


# ------------------------------------------------------------------------------ bad input

X, Y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
W1 = np.ones((1, 1, 2))


@pytest.mark.parametrize("call,match", [
    # singular A (eq 14 needs (A^T)^-1)
    (lambda: hy.sm_cexp(np.zeros((2, 2)), X, Y, W1), "A must be invertible"),
    (lambda: hy.cexp_blocks(np.array([[1, 1], [1, 1]]), X, Y, W1), "A must be invertible"),
    (lambda: hy.zero_one_mixture_hybrid(X, Y, [[np.array([1.0, 0.0])]], 0, 0, W1), "A must be invertible"),
    (lambda: hy.gaussian_mixture_hybrid(X, Y, [[np.array([1.0, 0.0])]], 1.0, W1, W1, W1), "A must be invertible"),
    (lambda: hrf.cexp_log_mse(np.zeros((2, 2)), X, Y, 1), "invertible"),
    # m, n < 1, also as empty draws (no silent 0 or 1/0)
    (lambda: hy.simulate("angular", X, Y, 1, 0, 10), "n must be"),
    (lambda: hy.sm_trig(X, Y, np.zeros((3, 0, 2))), "at least one projection"),
    (lambda: hy.sm_pos(X, Y, np.zeros((0, 2))), "at least one projection"),
    (lambda: hy.angular_lambda(X, Y, np.zeros((3, 0, 2))), "at least one projection"),
    (lambda: hy.normalized_gauss_lambda(X, Y, np.zeros((1, 0, 2)), 1.0, 1.0), "at least one projection"),
    (lambda: hrf.log_mse_angular_hybrid(1, 1, 1, 1, 0, 0), "n must be"),
    (lambda: hrf.log_mse_angular_hybrid(1, 1, 1, 0, 1, 0), "m must be"),
    (lambda: hrf.log_mse_gauss_hybrid(1, 1, 1, 1, 0, 1.0, 1.0, 0), "n must be"),
    (lambda: hrf.angular_lambda_cross_moment(1.0, 0), "n must be"),
    (lambda: hrf.log_max_rel_error_angular_hybrid(1.0, 1, 0), "n must be"),
    (lambda: hrf.log_rel_error_angular_hybrid(1.0, 1.0, 1, 2.5), "n must be"),
    # lambda = theta/pi outside [0, 1] (Lemma 3.2): theta outside [0, pi]
    (lambda: hrf.angular_lambda_mean(-0.1), r"\[0, pi\]"),
    (lambda: hrf.angular_lambda_second_moment(3.5, 2), r"\[0, pi\]"),
    (lambda: hrf.angular_one_minus_second_moment(-1.0, 2), r"\[0, pi\]"),
    (lambda: hrf.log_mse_angular_hybrid_same_length(1.0, 4.0, 1, 1), r"\[0, pi\]"),
    # NaN
    (lambda: hy.simulate("trig", [np.nan, 0.0], Y, 1, 1, 10), "x must be finite"),
    (lambda: hy.angular_lambda(X, Y, np.full((1, 2), np.nan)), "tau must be finite"),
    (lambda: hy.sm_cexp(np.array([[np.nan, 0], [0, 1]]), X, Y, W1), "finite"),
    (lambda: hy.normalized_gauss_lambda(X, Y, W1, 1.0, float("nan")), "r must be finite"),
    (lambda: hrf.angular_lambda_mean(float("nan")), "theta must be finite"),
    (lambda: hrf.gauss_lambda_mean(1, 1, 1, 1, float("nan"), 1.0), "sigma must be finite"),
    (lambda: hrf.log_mse_angular_hybrid_same_length(float("nan"), 1.0, 1, 1), "r must be finite"),
    (lambda: hrf.log_max_rel_error_angular_hybrid(float("nan"), 1, 1), "r must be finite"),
    (lambda: hrf.log_mse_trig(1.0, 1.0, 1.0, float("nan")), "m must be"),
])
def test_bad_input_raises_naming_the_condition(call, match):
    with pytest.raises(ValueError, match=match):
        call()

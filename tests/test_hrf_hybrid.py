"""Tests of ``rfcheck.estimators.hrf``: estimators vs closed forms by Monte Carlo, Lemma 2.3 identity.

Monte Carlo comparisons use a two-sided z-test at family-wise level ``ALPHA`` over the
points of each test (Bonferroni, ``rfcheck.stats.z_critical``); every one has a power
check: a deliberately wrong formula that the same test must reject.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rfcheck.closed_forms import hrf
from rfcheck.estimators import hrf as hy
from rfcheck.stats import estimate_mean, z_critical

ALPHA = 1e-3
N = 100_000


def _pair(nx: float, ny: float, th: float) -> tuple[np.ndarray, np.ndarray]:
    return np.array([nx, 0.0]), ny * np.array([math.cos(th), math.sin(th)])


def _z(est, value: float) -> float:
    assert est.trustworthy, est.reason
    return (est.value - value) / est.se


# norms <= 0.9 with |x + y| <= 0.7: the squared error of SM^++ has an estimable fourth
# moment there (the tail diagnostic of rfcheck.stats trusts the sample SE)
MSE_CASES = [  # (kind, nx, ny, theta, m, n, closed form)
    ("trig", 0.8, 0.6, 1.1, 5, 1, lambda: hrf.log_mse_trig(0.8, 0.6, 1.1, 5)),
    ("pos", 0.5, 0.5, 2.0, 3, 1, lambda: hrf.log_mse_pos(0.5, 0.5, 2.0, 3)),
    ("angular", 0.6, 0.5, 2.1, 5, 3, lambda: hrf.log_mse_angular_hybrid(0.6, 0.5, 2.1, 5, 3, 0)),
    ("angular-shared", 0.4, 0.8, 2.5, 2, 2, lambda: hrf.log_mse_angular_hybrid(0.4, 0.8, 2.5, 2, 2, 1)),
    ("gauss", 0.5, 0.5, 2.2, 4, 2, lambda: hrf.log_mse_gauss_hybrid(0.5, 0.5, 2.2, 4, 2, 0.8, 0.5, 0)),
    ("gauss-shared", 0.4, 0.8, 2.5, 4, 2, lambda: hrf.log_mse_gauss_hybrid(0.4, 0.8, 2.5, 4, 2, 0.8, 0.9, 1)),
]


@pytest.mark.parametrize("case", MSE_CASES, ids=[c[0] for c in MSE_CASES])
def test_mc_mse_matches_closed_form(case):
    kind, nx, ny, th, m, n, cf = case
    x, y = _pair(nx, ny, th)
    est = hy.mse_estimate(kind, x, y, m, n, N, seed=11, sigma=0.8, r=0.5 if kind == "gauss" else 0.9)
    zc = z_critical(ALPHA, len(MSE_CASES))
    assert abs(_z(est, math.exp(cf()))) < zc


def test_mc_power_rejects_variant_confusion_and_printed_eq47():
    # shared projections at unequal norms: the variant-I formula must be rejected
    x, y = _pair(0.5, 1.0, 2.6)
    est = hy.mse_estimate("angular-shared", x, y, 1, 4, 4 * N, seed=5)
    wrong = math.exp(hrf.log_mse_angular_hybrid(0.5, 1.0, 2.6, 1, 4, 0))
    right = math.exp(hrf.log_mse_angular_hybrid(0.5, 1.0, 2.6, 1, 4, 1))
    zc = z_critical(ALPHA, 2)
    assert abs(_z(est, right)) < zc < abs(_z(est, wrong))
    # eq (47) as printed (second coefficient p(1-1/n-p+p/n)) at r = 0.5, theta = 2.4, m = 2, n = 2
    r, th, m, n = 0.5, 2.4, 2, 2
    p = th / math.pi
    printed = (p * (p - p / n + 1 / n) / (2 * m) * math.exp(8 * r * r * math.cos(th / 2) ** 2 - 2 * r * r)
               * (1 - math.exp(-4 * r * r * math.cos(th / 2) ** 2)) ** 2
               + p * (1 - 1 / n - p + p / n) / (2 * m) * math.exp(2 * r * r)
               * (1 - math.exp(-4 * r * r * math.sin(th / 2) ** 2)) ** 2)
    x, y = _pair(r, r, th)
    est = hy.mse_estimate("angular", x, y, m, n, N, seed=6)
    assert abs(_z(est, math.exp(hrf.log_mse_angular_hybrid_same_length(r, th, m, n)))) < zc < abs(_z(est, printed))


@pytest.mark.parametrize("kind", ["trig", "pos", "angular", "gauss-shared"])
def test_unbiased(kind):
    x, y = _pair(0.7, 0.5, 1.3)
    v = hy.simulate(kind, x, y, 3, 2, N, seed=3, sigma=0.6, r=0.7)
    est = estimate_mean(v)
    assert abs((est.value - math.exp(x @ y)) / est.se) < z_critical(ALPHA, 4)


def test_angular_lambda_moments_by_mc():
    x, y = _pair(1.0, 2.0, 2.0)
    lam = hy.simulate("angular-lambda", x, y, 1, 3, N, seed=9)
    zc = z_critical(ALPHA, 2)
    assert abs((lam.mean() - 2.0 / math.pi) / (lam.std() / math.sqrt(N))) < zc
    sq = lam**2
    assert abs((sq.mean() - hrf.angular_lambda_second_moment(2.0, 3)) / (sq.std() / math.sqrt(N))) < zc


def test_cexp_unbiased_and_mse():
    a = np.array([[1j, 0.3], [0.2, 1.5]])
    x, y = _pair(0.8, 0.6, 1.1)
    v = hy.simulate("cexp", x, y, 4, 1, N, seed=3, a=a, part="complex")
    zc = z_critical(ALPHA, 3)
    for part in (np.real, np.imag):
        e = estimate_mean(part(v))
        assert abs((e.value - (math.exp(x @ y) if part is np.real else 0.0)) / e.se) < zc
    e2 = estimate_mean(np.abs(v - math.exp(x @ y)) ** 2)
    assert abs((e2.value - math.exp(hrf.cexp_log_mse(a, x, y, 4))) / e2.se) < zc


def test_seeded_reproducible():
    x, y = _pair(0.7, 0.5, 1.3)
    a = hy.simulate("angular", x, y, 3, 2, 1000, seed=42)
    b = hy.simulate("angular", x, y, 3, 2, 1000, seed=42)
    c = hy.simulate("angular", x, y, 3, 2, 1000, seed=43)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ------------------------------------------------------------------------- Lemma 2.3


@given(st.integers(0, 10_000), st.integers(1, 3), st.integers(1, 5), st.integers(1, 4), st.integers(1, 3))
def test_lemma23_feature_vectors_reproduce_hrf(seed, p, m, n, d):
    """Psi_1(x)^T Psi_2(y) (eq 11) equals eq (8) for the same draws: CE bases with complex A,
    lambda-coefficients with angular and trig-type features and arbitrary a_k."""
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=d) * 0.7, rng.normal(size=d) * 0.7
    bases = []
    for k in range(p + 1):
        w = rng.normal(size=(4, m, d))
        if k % 3 == 0:
            bases.append(hy.pos_blocks(x, y, w))
        elif k % 3 == 1:
            bases.append(hy.trig_blocks(x, y, w))
        else:
            a = rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d)) + 2 * np.eye(d)
            bases.append(hy.cexp_blocks(a, x, y, w))
    lambdas = []
    for k in range(p):
        tau = rng.normal(size=(4, n, d))
        if k % 2 == 0:
            f = hy.angular_lambda_features
            blk = hy.Blocks((f(x, tau) * math.sqrt(n),), (f(y, tau) * math.sqrt(n),))
            lambdas.append((float(rng.uniform(-1, 2)), blk))
        else:
            ft = hy.normalized_gauss_lambda_features  # l_k = 2 blocks: sin and cos parts
            fx, fy = ft(x, tau, 0.7, 1.0) * math.sqrt(n), ft(y, tau, 0.7, 1.0) * math.sqrt(n)
            blk = hy.Blocks((fx[..., 0::2], fx[..., 1::2]), (fy[..., 0::2], fy[..., 1::2]))
            lambdas.append((float(rng.uniform(-1, 2)), blk))
    direct = hy.general_hrf(bases, lambdas)
    p1, p2 = hy.hrf_feature_vectors(bases, lambdas)
    dot = np.sum(p1 * p2, axis=-1)
    scale = sum(np.abs(b.value()) for b in bases) * (1 + sum(abs(a) + np.abs(lam.value()) for a, lam in lambdas))
    assert np.all(np.abs(dot - direct) <= 1e-13 * scale)


def test_lemma23_angular_hybrid_equals_bipolar():
    rng = np.random.default_rng(0)
    x, y = _pair(0.8, 0.6, 1.1)
    w1, w2, tau = rng.normal(size=(9, 4, 2)), rng.normal(size=(9, 4, 2)), rng.normal(size=(9, 3, 2))
    f = hy.angular_lambda_features
    lam = hy.Blocks((f(x, tau) * math.sqrt(3),), (f(y, tau) * math.sqrt(3),))
    bases = [hy.pos_blocks(x, y, w1), hy.trig_blocks(x, y, w2)]
    p1, p2 = hy.hrf_feature_vectors(bases, [(0.5, lam)])
    np.testing.assert_allclose(np.sum(p1 * p2, -1).real, hy.angular_hybrid(x, y, w1, w2, tau), rtol=1e-13)
    np.testing.assert_allclose(np.sum(p1 * p2, -1).imag, 0, atol=1e-13)


def test_normalized_gauss_features_match_eq69():
    rng = np.random.default_rng(1)
    x, y = _pair(0.9, 0.9, 2.0)
    tau = rng.normal(size=(5, 6, 2))
    f = hy.normalized_gauss_lambda_features
    rho = float(hrf.gauss_rho(0.9, 1.3))
    via = 1 / rho + np.sum(f(x, tau, 1.3, 0.9) * f(y, tau, 1.3, 0.9), -1)
    np.testing.assert_allclose(via.real, hy.normalized_gauss_lambda(x, y, tau, 1.3, 0.9), rtol=1e-13)


# ------------------------------------------------------------------------- clustered data


def test_cluster_a_complex_zeroes_z_and_variance():
    rng = np.random.default_rng(2)
    ri, rj = rng.normal(size=6), rng.normal(size=6)
    a = np.diag(hy.cluster_a_complex(ri, rj))
    z = a @ ri + np.linalg.inv(a.T) @ rj
    assert np.max(np.abs(z)) < 1e-12
    w = rng.normal(size=(50, 3, 6))
    v = hy.sm_cexp(a, ri, rj, w)
    np.testing.assert_allclose(v, math.exp(ri @ rj), rtol=1e-10)  # constant: zero variance, unbiased
    a_r = np.diag(hy.cluster_a_real(ri, rj))
    z_r = a_r @ ri + np.linalg.inv(a_r) @ rj
    # eq (88) is the coordinatewise minimiser over real diagonal A
    for k in range(6):
        grid = np.geomspace(1e-3, 1e3, 20001)
        assert (z_r[k]) ** 2 <= np.min((grid * ri[k] + rj[k] / grid) ** 2) + 1e-9


def test_zero_one_and_gaussian_mixture_unbiased():
    rng = np.random.default_rng(3)
    centers_q, centers_k = rng.normal(size=(2, 3)) * 0.6, rng.normal(size=(2, 3)) * 0.6
    diags = [[hy.cluster_a_complex(ci, cj) for cj in centers_k] for ci in centers_q]
    x, y = centers_q[1] + 0.05 * rng.normal(size=3), centers_k[0] + 0.05 * rng.normal(size=3)
    w = rng.normal(size=(N, 2, 3))
    v = hy.zero_one_mixture_hybrid(x, y, diags, 1, 0, w)
    zc = z_critical(ALPHA, 2)
    e = estimate_mean(np.real(v))
    assert abs((e.value - math.exp(x @ y)) / e.se) < zc
    w_lam, w0 = rng.normal(size=(N, 2, 3)), rng.normal(size=(N, 2, 3))
    g = hy.gaussian_mixture_hybrid(x, y, diags, 1.5, w, w_lam, w0)
    e = estimate_mean(np.real(g))
    assert abs((e.value - math.exp(x @ y)) / e.se) < zc


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("call,match", [
    (lambda: hy.sm_cexp(np.array([[1, 2], [2, 4]]), [1, 0], [0, 1], np.zeros((1, 2, 2))), "invertible"),
    (lambda: hy.sm_trig([1, np.nan], [0, 1], np.zeros((1, 2, 2))), "finite"),
    (lambda: hy.sm_trig([1, 0], [0, 1], np.zeros((1, 2, 3))), "shape"),
    (lambda: hy.simulate("angular", [1, 0], [0, 1], 0, 1, 10), "m must be"),
    (lambda: hy.simulate("nope", [1, 0], [0, 1], 1, 1, 10), "unknown"),
    (lambda: hy.normalized_gauss_lambda([1, 0], [0, 1], np.zeros((1, 2, 2)), 0.0, 1.0), "sigma"),
    (lambda: hy.cluster_a_real([1.0, 2.0], [0.0, 1.0]), "singular"),
    (lambda: hy.general_hrf([], []), "p \\+ 1"),
])
def test_invalid_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()

"""RFA: kernel closed form (three faces, Monte Carlo), reference implementations (recurrences
equal their quadratic forms with the same features to float64 rounding), operation counts,
and the verdicts of the printed kernel identity."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from rfcheck.claims import BUDGETS
from rfcheck.closed_forms import rfa as cf
from rfcheck.estimators import rfa as rfe
from rfcheck.stats import estimate_mean, z_critical

Z = z_critical(1e-4)
EPS = np.finfo(float).eps


def test_log_rff_limit_faces():
    args = (1.7, 0.8, 2.1, 0.6, 1 / 1.7**2)
    with mpmath.workdps(40):
        mp = cf.log_rff_limit(*args, backend="mpmath", dps=40)
        ref = ((mpmath.mpf(0.8) + mpmath.mpf(2.1)) / (2 * mpmath.mpf(1.7) ** 2)
               - mpmath.mpf(args[4]) * mpmath.mpf(0.6) / 2)
        assert abs(mp - ref) < mpmath.mpf(10) ** -35
    assert abs(cf.log_rff_limit(*args) - float(ref)) < 4 * EPS * abs(float(ref))
    s, a, b, c, w = sympy.symbols("s a b c w", positive=True)
    assert sympy.simplify(cf.log_rff_limit.symbolic(s, a, b, c, w) - ((a + b) / (2 * s**2) - w * c / 2)) == 0
    # with the corrected spectral variance 1/sigma^2 the limit is the kernel, exactly (symbolically)
    kern = cf.log_kernel_limit.symbolic(s, a, b, c)
    assert sympy.simplify(cf.log_rff_limit.symbolic(s, a, b, c, 1 / s**2) - kern) == 0
    # with the printed sigma^2 it is not (unless sigma = 1)
    assert sympy.simplify(cf.log_rff_limit.symbolic(s, a, b, c, s**2) - kern) != 0


@pytest.mark.parametrize("sigma", [0.5, 2.0])
def test_trig_features_monte_carlo_corrected_vs_printed(sigma):
    rng = np.random.default_rng(int(sigma * 10))
    x = np.array([[0.6, -0.3, 0.2]])
    y = np.array([[0.1, 0.5, -0.4]])
    target = math.exp(float(x[0] @ y[0]) / sigma**2)
    pref = math.exp((x[0] @ x[0] + y[0] @ y[0]) / (2 * sigma**2))
    n, big_d = 4000, 64
    vals = {}
    for name, w_sd in (("corrected", 1 / sigma), ("printed", sigma)):
        v = np.empty(n)
        for i in range(n):
            w = w_sd * rng.standard_normal((big_d, 3))
            v[i] = pref * (rfe.trig_features(x, w) @ rfe.trig_features(y, w).T)[0, 0]
        vals[name] = estimate_mean(v)
    assert vals["corrected"].trustworthy
    assert abs(vals["corrected"].value - target) < Z * vals["corrected"].se
    assert abs(vals["printed"].value - target) > Z * vals["printed"].se  # the printed N(0, sigma^2 I) is wrong


def _inst(n, d, big_d, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    q = scale * rng.standard_normal((n, d))
    k = scale * rng.standard_normal((n, d))
    v = rng.standard_normal((n, d))
    w = rng.standard_normal((big_d, d))
    g = 1 / (1 + np.exp(-2 * rng.standard_normal(n)))
    return rfe.trig_features(q, w), rfe.trig_features(k, w), v, g


def _tol(phi_q, phi_k, v, c=None):
    """Rounding bound: conditioning of each normaliser times a few hundred eps."""
    a = phi_q @ phi_k.T
    if c is not None:
        a = a * c
    cond = np.abs(a).sum(axis=1) / np.abs(a.sum(axis=1))
    return 200 * EPS * cond[:, None] * np.max(np.abs(v)) * (1 + phi_q.shape[1])


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(1, 16), st.integers(0, 10_000),
       st.floats(0.05, 3.0))
def test_causal_recurrence_equals_masked_quadratic(n, d, big_d, seed, scale):
    phi_q, phi_k, v, _ = _inst(n, d, big_d, seed, scale)
    h, _ = rfe.rfa_causal(phi_q, phi_k, v)
    ref = rfe.masked_linear_attention(phi_q, phi_k, v, causal=True)
    mask = np.tril(np.ones((n, n)))
    assert np.all(np.abs(h - ref) <= _tol(phi_q, phi_k, v, mask))


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(1, 16), st.integers(0, 10_000))
def test_noncausal_equals_quadratic(n, d, big_d, seed):
    phi_q, phi_k, v, _ = _inst(n, d, big_d, seed)
    h, _ = rfe.rfa_noncausal(phi_q, phi_k, v)
    ref = rfe.masked_linear_attention(phi_q, phi_k, v, causal=False)
    assert np.all(np.abs(h - ref) <= _tol(phi_q, phi_k, v))


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(st.integers(1, 25), st.integers(1, 5), st.integers(1, 12), st.integers(0, 10_000))
def test_gate_equals_explicit_product_weights(n, d, big_d, seed):
    phi_q, phi_k, v, g = _inst(n, d, big_d, seed)
    h = rfe.rfa_gated(phi_q, phi_k, v, g)
    ref = rfe.gated_attention_explicit(phi_q, phi_k, v, g)
    c = np.array([[(1 - g[i]) * np.prod(g[i + 1: t + 1]) if i <= t else 0.0 for i in range(n)] for t in range(n)])
    assert np.all(np.abs(h - ref) <= _tol(phi_q, phi_k, v, c))


def test_gate_differs_from_ungated_power():
    phi_q, phi_k, v, g = _inst(8, 3, 6, 1)
    assert np.max(np.abs(rfe.rfa_gated(phi_q, phi_k, v, g) - rfe.rfa_causal(phi_q, phi_k, v)[0])) > 1e-3


def test_rfa_with_equal_key_norms_approaches_softmax():
    """Large D, sigma = 1, unit-norm keys: RFA -> softmax attention (the keys' norms cancel)."""
    rng = np.random.default_rng(3)
    d, n = 3, 5
    q = 0.5 * rng.standard_normal((1, d))
    k = rng.standard_normal((n, d))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    v = rng.standard_normal((n, 1))
    w = rng.standard_normal((400_000, d))
    h, _ = rfe.rfa_noncausal(rfe.trig_features(q, w), rfe.trig_features(k, w), v)
    soft, _ = rfe.softmax_attention(q, k, v)
    assert abs(h[0, 0] - soft[0, 0]) < 0.02
    k2 = k * np.array([[0.3], [1.0], [2.0], [0.5], [1.5]])  # unequal norms: they do not cancel
    h2, _ = rfe.rfa_noncausal(rfe.trig_features(q, w), rfe.trig_features(k2, w), v)
    soft2, _ = rfe.softmax_attention(q, k2, v)
    assert abs(h2[0, 0] - soft2[0, 0]) > 0.1


def test_operation_counts():
    phi_q, phi_k, v, _ = _inst(10, 4, 3, 0)
    f, d = phi_k.shape[1], v.shape[1]
    _, ops = rfe.rfa_causal(phi_q, phi_k, v)
    per_step = rfe.rfa_decode_step_ops(0, 0, f, d) - ((d + 1) * (2 * f - 1) + d)
    assert ops == 10 * per_step
    _, ops20 = rfe.rfa_causal(*_inst(20, 4, 3, 0)[:3])
    assert ops20 == 2 * ops  # linear in N
    assert rfe.rfa_decode_step_ops(10, 5, f, d) == rfe.rfa_decode_step_ops(1000, 500, f, d)
    assert rfe.softmax_decode_step_ops(200, 100, d) > 10 * rfe.softmax_decode_step_ops(20, 10, d) // 2
    _, s1 = rfe.softmax_attention(np.ones((16, 4)), np.ones((16, 4)), np.ones((16, 4)))
    _, s2 = rfe.softmax_attention(np.ones((32, 4)), np.ones((32, 4)), np.ones((32, 4)))
    assert 3.8 < s2 / s1 <= 4.0  # quadratic in N


@pytest.mark.parametrize(("fn", "args", "msg"), [
    (rfe.rfa_gated, (np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 1)), np.array([0.5, 1.0])), r"\(0, 1\)"),
    (rfe.rfa_causal, (np.ones((2, 2)), np.ones((2, 3)), np.ones((2, 1))), "width"),
    (rfe.rfa_causal, (np.ones((2, 2)), np.ones((2, 2)), np.ones((3, 1))), "one value row"),
    (rfe.rfa_noncausal, (np.full((2, 2), np.nan), np.ones((2, 2)), np.ones((2, 1))), "finite"),
    (rfe.trig_features, (np.ones((2, 3)), np.ones((4, 2))), "R\\^"),
    (cf.log_rff_limit, (0.0, 1.0, 1.0, 1.0, 1.0), "sigma"),
    (cf.log_rff_limit, (1.0, float("nan"), 1.0, 1.0, 1.0), "finite"),
])
def test_bad_input(fn, args, msg):
    with pytest.raises(ValueError, match=msg):
        fn(*args)


def test_printed_kernel_identity_refuted_at_sigma_2_holds_at_sigma_1():
    from rfcheck.claims import get

    claim = get("rfa.eq-kernel")
    check = next(c for c in claim.checks if c.name == "quadrature")
    budget = BUDGETS["smoke"]
    bad = check.evaluate({"d": 2, "nx": 1.0, "ny": 0.5, "theta": 1.0, "sigma": 2.0}, budget, 0)
    good = check.evaluate({"d": 2, "nx": 1.0, "ny": 0.5, "theta": 1.0, "sigma": 1.0}, budget, 0)
    assert bad.decided and bad.disc > 1
    assert good.decided and good.disc <= 1

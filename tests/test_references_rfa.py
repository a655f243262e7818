"""rfcheck.references.rfa: the reference computations of the rfa claims against closed forms at
50 digits (the quadratures never use them), Arb balls that contain the exact values, the quadratic
form against the float64 implementation, and the operation counts' growth."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rfcheck.estimators import rfa as impl
from rfcheck.references import rfa as ref


def _ball(x):
    """A ball around the 60-digit mpmath value ``x`` (radius 1e-55 |x|)."""
    from flint import arb

    from rfcheck.arb_backend import to_ball

    return to_ball(x) + arb(0, 1e-55 * abs(float(x)))


POINTS = [(1.0, 0.7, 1.0, 2.0), (2.5, 2.5, math.pi, 0.25), (0.3, 1.9, 0.1, 1.0), (0.0, 1.2, 2.0, 4.0),
          (1.5, 1.5, 0.0, 3.0)]


def _limit_cf(nx, ny, theta, sigma):
    """exp((|x|^2+|y|^2)/(2 sigma^2) - sigma^2 |x - y|^2 / 2): E cos(w.(x-y)) = exp(-sigma^2 |x-y|^2/2)."""
    a, b, t, s = (mpmath.mpf(v) for v in (nx, ny, theta, sigma))
    diff2 = a * a + b * b - 2 * a * b * mpmath.cos(t)
    return mpmath.exp((a * a + b * b) / (2 * s * s) - s * s * diff2 / 2)


@pytest.mark.parametrize("pt", POINTS)
def test_trig_kernel_limit_matches_the_characteristic_function_at_50_digits(pt):
    with mpmath.workdps(60):
        exact = _limit_cf(*pt)
    v, err = ref.trig_kernel_limit(*pt, 50)
    with mpmath.workdps(60):
        assert abs(v - exact) <= err + abs(exact) * mpmath.mpf(10) ** -45
        assert err <= abs(exact) * mpmath.mpf(10) ** -40


def test_trig_kernel_limit_is_the_kernel_only_at_sigma_one():
    v1, _ = ref.trig_kernel_limit(1.0, 0.7, 1.0, 1.0, 30)
    v2, _ = ref.trig_kernel_limit(1.0, 0.7, 1.0, 2.0, 30)
    with mpmath.workdps(30):
        xy = mpmath.mpf(0.7) * mpmath.cos(mpmath.mpf(1.0))
        assert abs(v1 / mpmath.exp(xy) - 1) < 1e-25
        assert abs(v2 / mpmath.exp(xy / 4) - 1) > 0.1


@pytest.mark.parametrize("pt", POINTS[:3])
def test_trig_kernel_limit_ball_contains_the_exact_value(pt):
    ball = ref.trig_kernel_limit_ball(*pt, 200)
    with mpmath.workdps(60):
        exact = _limit_cf(*pt)
    assert ball.overlaps(_ball(exact))
    assert float(ball.rad()) <= 1e-40 * float(exact)


def _instance(seed, n=4, d=3, equal=False):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d)
    k = rng.standard_normal((n, d))
    if equal:
        k[:] = k / np.linalg.norm(k, axis=1, keepdims=True)
    return q, k, rng.standard_normal(n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rfa_limit_attention_matches_the_gaussian_weights_at_50_digits(seed):
    q, k, v = _instance(seed)
    with mpmath.workdps(60):
        w = [mpmath.exp(-sum((mpmath.mpf(a) - mpmath.mpf(b)) ** 2 for a, b in zip(q, row, strict=True)) / 2)
             for row in k]
        exact = sum(wi * vi for wi, vi in zip(w, v, strict=True)) / sum(w)
    val, err = ref.rfa_limit_attention(q, k, v, 50)
    with mpmath.workdps(60):
        assert abs(val - exact) <= err + mpmath.mpf(10) ** -45
    ball = ref.rfa_limit_attention_ball(q, k, v, 200)
    with mpmath.workdps(60):
        assert ball.overlaps(_ball(exact))


def test_rfa_limit_equals_softmax_for_keys_of_equal_norm_only():
    q, k, v = _instance(3, equal=True)
    with mpmath.workdps(40):
        lg = [sum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(q, row, strict=True)) for row in k]
        soft = sum(mpmath.exp(x) * vi for x, vi in zip(lg, v, strict=True)) / sum(mpmath.exp(x) for x in lg)
    lim, _ = ref.rfa_limit_attention(q, k, v, 30)
    assert abs(lim - soft) < 1e-12  # key norms equal up to float64 rounding
    q, k, v = _instance(3)
    lim2, _ = ref.rfa_limit_attention(q, k, v, 30)
    assert abs(lim2 - soft) > 1e-3


def test_attention_quadratic_matches_the_float64_implementation():
    rng = np.random.default_rng(5)
    pq, pk, v = rng.uniform(0.1, 1, (5, 6)), rng.uniform(0.1, 1, (5, 6)), rng.standard_normal((5, 2))
    with mpmath.workdps(30):
        h, cond = ref.attention_quadratic_mp(*(mpmath.matrix(a.tolist()) for a in (pq, pk, v)),
                                             lambda t, i: 1 if i <= t else 0)
        got = np.array(h.tolist(), dtype=float)
    assert np.allclose(got, impl.masked_linear_attention(pq, pk, v, causal=True), rtol=1e-12, atol=0)
    assert all(c == 1 for c in cond)  # positive features: no cancellation in the normaliser


def test_attention_quadratic_reports_a_vanishing_normaliser():
    with mpmath.workdps(20):
        h, cond = ref.attention_quadratic_mp(mpmath.matrix([[1.0, 0.0]]), mpmath.matrix([[1.0, 0.0], [-1.0, 0.0]]),
                                             mpmath.matrix([[1.0], [2.0]]), lambda t, i: 1)
    assert cond == [mpmath.inf]
    assert mpmath.isnan(h[0, 0])


def _exponent(method, column, var):
    base = {"N": 64, "M": 64, "D": 8, "d": 8}
    lo, hi = (ref.operation_count(method, column, {**base, var: base[var] * f}) for f in (1, 4))
    return math.log(hi / lo) / math.log(4)


def test_operation_counts_grow_as_the_implementations_do():
    assert abs(_exponent("softmax", "train-time", "N") - 2) < 0.1
    assert abs(_exponent("rfa", "train-time", "N") - 1) < 0.1
    assert _exponent("rfa", "decode-time", "N") == 0 and _exponent("rfa", "decode-time", "M") == 0
    assert abs(_exponent("rfa", "decode-time", "D") - 1) < 0.05
    assert _exponent("rfa", "space", "N") == 0
    assert ref.operation_count("softmax", "space", {"N": 3, "M": 5, "D": 1, "d": 2}) == 2 * 8 * 2


def test_operation_count_rejects_unknown_columns():
    with pytest.raises(ValueError):
        ref.operation_count("rfa", "memory", {"N": 1, "M": 1, "D": 1, "d": 1})


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_trig_kernel_samples_are_unbiased_for_the_limit(sigma):
    x, y = np.array([0.8, 0.0]), np.array([0.3, 0.5])
    vals = ref.trig_kernel_samples(x, y, sigma, 16, 40_000, seed=1)
    exact = float(_limit_cf(0.8, math.hypot(0.3, 0.5), math.atan2(0.5, 0.3), sigma))
    assert abs(vals.mean() - exact) < 5 * vals.std() / math.sqrt(len(vals))
    assert np.array_equal(vals, ref.trig_kernel_samples(x, y, sigma, 16, 40_000, seed=1))  # reproducible


def test_softmax_instance_is_seeded_and_equal_norm_keys_are_exactly_equal() -> None:
    """Same seed, same instance; the query has its norm; spread 0: every key has exactly the first key's norm."""
    from fractions import Fraction

    q, k, v, norms = ref.softmax_instance(5, 4, 1.5, 0.8, 0.6, 11)
    again = ref.softmax_instance(5, 4, 1.5, 0.8, 0.6, 11)
    assert all(np.array_equal(a, b) for a, b in zip((q, k, v, norms), again, strict=True))
    assert abs(float(np.linalg.norm(q)) - 1.5) < 1e-14
    assert np.allclose(np.linalg.norm(k, axis=1), norms, rtol=1e-14) and len(set(norms.tolist())) == 5
    assert bool(np.all(np.abs(norms / 0.8 - 1) <= 0.6))
    _, k0, _, _ = ref.softmax_instance(6, 3, 1.0, 0.7, 0.0, 2)
    exact = {sum(Fraction(float(x)) ** 2 for x in row) for row in k0}
    assert len(exact) == 1 and abs(float(next(iter(exact))) - 0.49) < 1e-14

"""The one trigonometric feature map (:func:`rfcheck.features.trig_feature_map`) and its three
callers -- HRF's ``phi^trig`` (eq 2), RFA's ``phi`` and the JAX attention harness's ``(s, b)`` --
against the formulas they computed before they shared it (written out here), bit for bit, and
the deprecated ``rfcheck.closed_forms.rfa.trig_features``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rfcheck.closed_forms import rfa as cf
from rfcheck.estimators import hrf as hybrid
from rfcheck.estimators import rfa as rfe
from rfcheck.features import trig_feature_map

SEEDS = range(6)


def _draw(seed: int) -> tuple[np.random.Generator, int, int]:
    rng = np.random.default_rng(seed)
    return rng, int(rng.integers(1, 40)), int(rng.integers(1, 17))


@pytest.mark.parametrize("seed", SEEDS)
def test_hybrid_trig_features_equal_eq2_formula(seed):
    rng, d, m = _draw(seed)
    u = rng.standard_normal(d) * rng.uniform(0.1, 2.0)
    w = rng.standard_normal((3, 2, m, d))
    p = w @ u
    old = np.exp(u @ u / 2) / np.sqrt(m) * np.concatenate([np.sin(p), np.cos(p)], axis=-1)
    new = hybrid.trig_features(u, w)
    assert new.shape == (3, 2, 2 * m)
    np.testing.assert_array_equal(new, old)


@pytest.mark.parametrize("seed", SEEDS)
def test_rfa_trig_features_equal_printed_formula(seed):
    rng, d, big_d = _draw(seed)
    x = rng.standard_normal((5, d)) * 3.0
    w = rng.standard_normal((big_d, d))
    proj = x @ w.T
    old = np.concatenate([np.sin(proj), np.cos(proj)], axis=1) / np.sqrt(w.shape[0])
    new = rfe.trig_features(x, w)
    assert new.shape == (5, 2 * big_d)
    np.testing.assert_array_equal(new, old)


def test_rfa_trig_features_one_row_and_errors():
    np.testing.assert_array_equal(rfe.trig_features([0.0, 0.0], [1.0, 0.0]), [[0.0, 1.0]])
    with pytest.raises(ValueError, match="R\\^"):
        rfe.trig_features(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="finite"):
        rfe.trig_features([[np.inf, 0.0]], [[1.0, 0.0]])


def test_closed_forms_rfa_trig_features_deprecated_alias():
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((6, 3))
    with pytest.warns(DeprecationWarning, match="rfcheck.estimators.rfa.trig_features"):
        old = cf.trig_features(x, w)
    np.testing.assert_array_equal(old, rfe.trig_features(x, w))
    assert "trig_features" not in cf.__all__  # closed_forms holds closed forms only


@pytest.mark.parametrize("seed", SEEDS)
def test_core_options_agree(seed):
    rng, d, m = _draw(seed)
    x, w = rng.standard_normal((4, d)), rng.standard_normal((m, d))
    phi = trig_feature_map(x, w)
    s, b = trig_feature_map(x, w, log_scale=True)
    np.testing.assert_array_equal(s, 0.5 * np.sum(x * x, axis=-1))
    np.testing.assert_allclose(np.exp(s)[:, None] * b, phi, rtol=4 * np.finfo(float).eps, atol=0)
    assert np.all(np.abs(b) <= 1 / math.sqrt(m) + 1e-16)
    s0, b0 = trig_feature_map(x, w, norm_factor=False, log_scale=True)
    np.testing.assert_array_equal(s0, np.zeros(4))
    np.testing.assert_array_equal(b0, trig_feature_map(x, w, norm_factor=False))
    _, bc = trig_feature_map(x, w, order="cos_sin", log_scale=True)
    np.testing.assert_array_equal(bc, np.concatenate([b[:, m:], b[:, :m]], axis=1))
    # the product is the softmax kernel estimate exp(|x|^2/2 + |y|^2/2) mean_i cos(w_i.(x - y))
    est = phi[0] @ phi[1]
    ref = math.exp(s[0] + s[1]) * np.mean(np.cos(w @ (x[0] - x[1])))
    assert est == pytest.approx(ref, rel=1e-12, abs=1e-300)
    # one point with batched draws equals the rows form draw by draw
    # (projections summed in another order: compare on the scale exp(|x|^2/2)/sqrt(m) of the map)
    scale = math.exp(s[0]) / math.sqrt(m)
    np.testing.assert_allclose(trig_feature_map(x[0], w[None])[0], phi[0], rtol=0, atol=1e-13 * scale)
    with pytest.raises(ValueError, match="order"):
        trig_feature_map(x, w, order="cos")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_factor", [True, False])
@pytest.mark.parametrize("stabilise", [True, False])
def test_jax_trig_features_equal_old_formula(seed, norm_factor, stabilise):
    jax = pytest.importorskip("jax", reason="the attention harness needs JAX")
    import jax.numpy as jnp

    from rfcheck.attention import _features as F
    from rfcheck.attention import enable_x64

    rng, d, m = _draw(seed)
    with enable_x64():
        x = jnp.asarray(rng.standard_normal((7, d)))
        w = jnp.asarray(rng.standard_normal((m, d)))
        proj = x @ w.T
        b_old = jnp.concatenate([jnp.cos(proj), jnp.sin(proj)], axis=-1) / math.sqrt(m)
        s_old = 0.5 * jnp.sum(x * x, axis=-1) if norm_factor else jnp.zeros(x.shape[:-1], x.dtype)
        if not stabilise:
            s_old, b_old = jnp.zeros_like(s_old), jnp.exp(s_old)[:, None] * b_old
        s, b = F.trig_features(x, w, norm_factor=norm_factor, stabilise=stabilise)
        assert b.dtype == jnp.float64
        np.testing.assert_array_equal(np.asarray(s), np.asarray(s_old))
        np.testing.assert_array_equal(np.asarray(b), np.asarray(b_old))
        # and under jit (the harness jits it)
        sj, bj = jax.jit(lambda a, v: F.trig_features(a, v, norm_factor=norm_factor, stabilise=stabilise))(x, w)
        np.testing.assert_allclose(np.asarray(bj), np.asarray(b_old), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(np.asarray(sj), np.asarray(s_old), rtol=1e-13, atol=0)

"""The causality audit perturbs every per-position input -- queries too -- and names the leak.

The Performer's JAX code seeds its random projection from a sum over all queries, so
replacing *future queries* moves past outputs; the audit used to perturb only keys and
values and could not see it.
"""

from __future__ import annotations

import numpy as np
import pytest

from rfcheck.attention.audit import causality_audit


def _linear_attention(q, k, v, W):
    fq = np.exp(q @ W.T - 0.5 * np.sum(q * q, -1, keepdims=True))
    fk = np.exp(k @ W.T - 0.5 * np.sum(k * k, -1, keepdims=True))
    num = np.cumsum(fk[..., :, :, None] * v[..., :, None, :], axis=-3)
    den = np.cumsum(fk, axis=-2)
    return np.einsum("...lm,...lmd->...ld", fq, num) / np.einsum("...lm,...lm->...l", fq, den)[..., None]


def _projection(seed, d, m=16):
    return np.random.default_rng(seed).standard_normal((m, d))


def seeded_from_queries(q, k, v):
    """Performer-style: the projection's seed is a function of the sum over all queries."""
    return _linear_attention(q, k, v, _projection(int(1e6 * np.abs(q).sum()) % 2**32, q.shape[-1]))


def fixed_projection(q, k, v):
    return _linear_attention(q, k, v, _projection(0, q.shape[-1]))


def _data(L=24, d=4, dv=3, seed=3):
    rng = np.random.default_rng(seed)
    return 0.3 * rng.standard_normal((L, d)), 0.3 * rng.standard_normal((L, d)), rng.standard_normal((L, dv))


def test_query_seeded_projection_leaks_through_the_queries():
    q, k, v = _data()
    # what the audit used to do -- keys and values only -- cannot see this leak
    assert causality_audit(seeded_from_queries, q, k, v, perturb=("k", "v")).causal
    rep = causality_audit(seeded_from_queries, q, k, v)
    assert not rep.causal and rep.leaked == ["q"], str(rep)
    assert rep.worst["input"] == "q" and rep.max_deviation > 1e-2  # not rounding: a different projection
    assert rep.by_input["k"] <= 1 and rep.by_input["v"] <= 1 and rep.by_input["q"] > 1e6
    assert "LEAKS through q" in str(rep)
    ok = causality_audit(fixed_projection, q, k, v)
    assert ok.causal and ok.leaked == [] and set(ok.by_input) == {"q", "k", "v"}
    assert ok.n_cases == 4 * 3 * 2  # 4 cuts x 3 inputs x 2 kinds


def test_heads_axis_and_bidirectional_leak():
    q, k, v = _data()
    qh, kh, vh = np.stack([q, 2 * q]), np.stack([k, k]), np.stack([v, -v])
    assert causality_audit(fixed_projection, qh, kh, vh).causal

    def bidirectional(q, k, v):
        out = fixed_projection(q, k, v)
        return out + 0.0 * out[..., -1:, :] + 1e-3 * v.mean(axis=-2, keepdims=True)

    rep = causality_audit(bidirectional, qh, kh, vh)
    assert rep.leaked == ["v"], str(rep)


def test_other_per_position_inputs_are_perturbed_and_named():
    q, k, v = _data()
    L = q.shape[0]
    seg = np.repeat(np.arange(4), L // 4)  # integer segment ids, shape (L,)
    mask = np.ones(L, dtype=bool)

    def segment_scaled(q, k, v, seg, mask):  # divides by the mean segment id of the *whole* sequence
        return fixed_projection(q, k, v) * np.where(mask, 1.0, 0.0)[:, None] / (1 + seg.mean())

    def causal_segments(q, k, v, seg, mask):  # the running maximum is causal
        return fixed_projection(q, k, v) * np.where(mask, 1.0, 0.0)[:, None] / (1 + np.maximum.accumulate(seg))[:, None]

    inputs = {"seg": (seg, -1), "mask": (mask, 0)}
    rep = causality_audit(segment_scaled, q, k, v, inputs=inputs)
    assert rep.leaked == ["seg"], str(rep)
    ok = causality_audit(causal_segments, q, k, v, inputs=inputs)
    assert ok.causal, str(ok)
    assert ok.n_cases == 4 * (3 * 2 + 2)  # integer and boolean inputs: one resampling per cut
    only_mask = causality_audit(segment_scaled, q, k, v, inputs=inputs, perturb=("mask",))
    assert only_mask.causal and set(only_mask.by_input) == {"mask"}


def test_causality_audit_validates_inputs():
    q, k, v = _data()
    with pytest.raises(ValueError, match="unknown inputs"):
        causality_audit(fixed_projection, q, k, v, perturb=("x",))
    with pytest.raises(ValueError, match="sequence axis"):
        causality_audit(lambda q, k, v, pos: fixed_projection(q, k, v), q, k, v, inputs={"pos": np.arange(5)})
    with pytest.raises(ValueError, match="redefine"):
        causality_audit(fixed_projection, q, k, v, inputs={"q": q})
    with pytest.raises(ValueError, match="kinds"):
        causality_audit(fixed_projection, q, k, v, kinds=("huge",))


def test_jax_query_seeded_key_is_caught():
    """The same leak in JAX: the PRNG key folded with a statistic of all queries."""
    jax = pytest.importorskip("jax", reason="needs JAX (pip install 'rfcheck[jax]')")
    import jax.numpy as jnp

    def performer_like(q, k, v):
        q, k, v = (jnp.asarray(a, jnp.float32) for a in (q, k, v))
        key = jax.random.fold_in(jax.random.key(0), (jnp.sum(q) * 1e4).astype(jnp.int32))
        W = jax.random.normal(key, (16, q.shape[-1]))
        fq = jnp.exp(q @ W.T - 0.5 * jnp.sum(q * q, -1, keepdims=True))
        fk = jnp.exp(k @ W.T - 0.5 * jnp.sum(k * k, -1, keepdims=True))
        num = jnp.cumsum(fk[:, :, None] * v[:, None, :], axis=0)
        return jnp.einsum("lm,lmd->ld", fq, num) / jnp.einsum("lm,lm->l", fq, jnp.cumsum(fk, axis=0))[:, None]

    q, k, v = (a.astype(np.float32) for a in _data(L=16))
    rep = causality_audit(performer_like, q, k, v, kinds=("normal",))
    assert rep.leaked == ["q"], str(rep)

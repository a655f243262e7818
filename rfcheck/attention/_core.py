"""Exact and linear (random-feature) attention in JAX (private; see :mod:`rfcheck.attention`)."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from rfcheck.attention import _features as F

METHODS = ("exact", "favor+", "favor++", "rfa", "darkformer", "hybrid")
CAUSAL_IMPLS = ("scan", "chunked")
_POSITIVE = ("favor+", "favor++", "darkformer")


# ------------------------------------------------------------------------ projections
def draw_params(key: Any, method: str, num_features: int, d: int, coupling: str, dtype: Any,
                hybrid_n: int = 8, dark_r: int | None = None) -> dict[str, jax.Array]:
    """Every random draw a method needs, from one key (split, each part consumed once)."""
    if method == "exact":
        return {}
    if method == "hybrid":
        k1, k2, k3 = jax.random.split(key, 3)
        return {"w": F.draw_projections(k1, coupling, num_features, d, dtype),
                "w_trig": F.draw_projections(k2, coupling, num_features, d, dtype),
                "tau": jax.random.normal(k3, (hybrid_n, d), dtype)}
    return {"w": F.draw_projections(key, coupling, num_features, dark_r or d, dtype)}


# ------------------------------------------------------------------------ features
def feature_pair(q: jax.Array, k: jax.Array, method: str, params: dict[str, Any], *, stabilise: bool,
                 oprf_a: Any = 0.0, sigma: Any = None, dark_m: Any = None, rfa_norm_factor: bool = True):
    """``((s_q, b_q), (s_k, b_k))`` of ``method`` for queries ``q`` and keys ``k`` (L, d)."""
    w = params["w"]
    if method == "favor+":
        return F.positive_features(q, w, 0.0, stabilise=stabilise), F.positive_features(k, w, 0.0, stabilise=stabilise)
    if method == "favor++":
        return (F.positive_features(q, w, oprf_a, stabilise=stabilise),
                F.positive_features(k, w, oprf_a, stabilise=stabilise))
    if method == "darkformer":
        qt, kt = q @ dark_m.T, k @ dark_m.T  # x -> M x: exp(q' Sigma k) with Sigma = M^T M
        return (F.positive_features(qt, w, 0.0, stabilise=stabilise),
                F.positive_features(kt, w, 0.0, stabilise=stabilise))
    if method == "rfa":
        qs, ks = (q, k) if sigma is None else (q / sigma, k / sigma)  # kernel exp(sum_i q_i k_i / sigma_i^2)
        return (F.trig_features(qs, w, norm_factor=rfa_norm_factor, stabilise=stabilise),
                F.trig_features(ks, w, norm_factor=rfa_norm_factor, stabilise=stabilise))
    if method == "hybrid":
        return (F.hybrid_features(q, w, params["w_trig"], params["tau"], "q", stabilise=stabilise),
                F.hybrid_features(k, w, params["w_trig"], params["tau"], "k", stabilise=stabilise))
    raise ValueError(f"method must be one of {METHODS}; got {method!r}")


# ------------------------------------------------------------------------ attention kernels
def exact_attention(q: jax.Array, k: jax.Array, v: jax.Array, causal: bool, stabilise: bool = True) -> jax.Array:
    """Softmax attention ``softmax(q k^T) v`` (no ``1/sqrt(d)``: scale q, k beforehand)."""
    s = q @ k.T
    if causal:
        mask = jnp.tril(jnp.ones(s.shape, dtype=bool))
        s = jnp.where(mask, s, -jnp.inf)
    if stabilise:
        s = s - jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
    p = jnp.exp(s)
    return (p @ v) / jnp.sum(p, axis=-1, keepdims=True)


def _key_scaled(sk: jax.Array, bk: jax.Array) -> jax.Array:
    """Key features scaled by ``exp(s_k - max s_k)``: one global constant (cancels)."""
    return bk * jnp.exp(sk - jax.lax.stop_gradient(jnp.max(sk)))[:, None]


def linear_bidirectional(fq: tuple, fk: tuple, v: jax.Array) -> jax.Array:
    """``phi(q) (phi(k)^T v) / phi(q) (phi(k)^T 1)``; the query log-scale cancels per row."""
    (_, bq), (sk, bk) = fq, fk
    pk = _key_scaled(sk, bk)
    return (bq @ (pk.T @ v)) / (bq @ jnp.sum(pk, axis=0))[:, None]


def linear_causal(fq: tuple, fk: tuple, v: jax.Array, gate: jax.Array | None = None) -> jax.Array:
    """Causal linear attention by a prefix scan (``lax.scan``); memory ``O(L F + F d_v)``.

    State ``(S, z, m)`` held at scale ``exp(-m)``, ``m`` the running max of the key log-scales
    (positions ``<= t`` only, so the stabiliser is causal); ``S`` is rescaled by
    ``exp(m_old - m_new)`` when ``m`` grows.  With ``gate`` ``g_t`` (RFA-Gate):
    ``S_t = g_t S_{t-1} + (1 - g_t) phi(k_t) v_t^T`` and ``z_t`` likewise.
    """
    (_, bq), (sk, bk) = fq, fk
    dt = bk.dtype
    if gate is None:
        decay = jnp.ones(sk.shape, dt)
        inw = jnp.ones(sk.shape, dt)
    else:
        decay, inw = gate.astype(dt), (1.0 - gate).astype(dt)

    def step(carry, xs):
        s_mat, z, m = carry
        bq_t, sk_t, bk_t, v_t, g_t, i_t = xs
        m_new = jnp.maximum(m, sk_t)
        old = g_t * jnp.exp(m - m_new)
        new = i_t * jnp.exp(sk_t - m_new) * bk_t
        s_mat = old * s_mat + new[:, None] * v_t[None, :]
        z = old * z + new
        return (s_mat, z, m_new), (bq_t @ s_mat) / (bq_t @ z)

    fdim = bk.shape[-1]
    init = (jnp.zeros((fdim, v.shape[-1]), dt), jnp.zeros((fdim,), dt), jnp.array(-jnp.inf, dt))
    _, out = jax.lax.scan(step, init, (bq, sk, bk, v, decay, inw))
    return out


def _log_weights(gate: jax.Array | None, shape: tuple[int, ...], dt: Any) -> tuple[jax.Array, jax.Array]:
    """``(log(1 - g), log g)`` per position (zeros without a gate: weight 1, no decay)."""
    if gate is None:
        z = jnp.zeros(shape, dt)
        return z, z
    g = gate.astype(dt)
    return jnp.log1p(-g), jnp.log(g)


def linear_causal_chunked(fq: tuple, fk: tuple, v: jax.Array, gate: jax.Array | None = None,
                          chunk: int = 64) -> jax.Array:
    """Causal linear attention by chunks: intra-chunk masked quadratic + inter-chunk prefix states.

    Positions are cut into ``L / chunk`` chunks (the last padded with zero-weight keys).  Each
    chunk is summarised by ``(S_c, z_c, M_c, G_c)``: ``S_c = sum_i w_i exp(s_i - M_c) phi(k_i)
    v_i^T`` and ``z_c`` likewise, ``M_c`` the chunk's max key log-scale, ``G_c`` its total log
    decay (RFA-Gate; 0 without a gate).  An *exclusive* prefix over chunks
    (``jax.lax.associative_scan`` of the associative combine ``(S_a, M_a, G_a) o (S_b, M_b, G_b)
    = (e^{M_a - M + G_b} S_a + e^{M_b - M} S_b, M = max(M_a, M_b), G_a + G_b)``) gives the
    state entering each chunk; position ``t`` adds it at scale ``e^{P_c - m_t + c_t}`` to the
    masked intra-chunk sum ``sum_{i <= t} e^{s_i - m_t + log w_ti} (b_q,t . b_k,i) v_i``, with
    ``m_t`` the running max of the key log-scales over positions ``<= t`` (causal stabiliser,
    as in :func:`linear_causal`) and ``log w_ti = log(1 - g_i) + C_t - C_i`` (gate).  Every
    exponent is ``<= 0``.  Memory ``O(L F + (L / chunk) F d_v + L chunk)``; parallel depth
    ``O(log(L / chunk))`` instead of the scan's ``L`` sequential steps.
    """
    (_, bq), (sk, bk) = fq, fk
    dt = bk.dtype
    n, fdim = bk.shape
    dv = v.shape[-1]
    c = int(min(max(chunk, 1), n))
    nc = -(-n // c)
    pad = nc * c - n
    lw, lg = _log_weights(gate, sk.shape, dt)

    def padded(x, fill):
        return jnp.concatenate([x, jnp.full((pad, *x.shape[1:]), fill, x.dtype)]) if pad else x

    bq_c = padded(bq, 0.0).reshape(nc, c, fdim)
    bk_c = padded(bk, 0.0).reshape(nc, c, fdim)
    v_c = padded(v.astype(dt), 0.0).reshape(nc, c, dv)
    sk_c = padded(sk, -jnp.inf).reshape(nc, c)
    lw_c = padded(lw, -jnp.inf).reshape(nc, c)  # padded keys carry weight 0
    lg_c = padded(lg, 0.0).reshape(nc, c)
    cum = jnp.cumsum(lg_c, axis=1)  # C_t within the chunk (log of prod_{start <= j <= t} g_j)
    big_m = jnp.max(sk_c, axis=1)  # (nc,)
    # chunk summaries at scale exp(-M_c); weight of key i at the chunk's end: w_i = (1 - g_i) prod_{j > i} g_j
    le = lw_c + cum[:, -1:] - cum + sk_c - big_m[:, None]
    pe = jnp.exp(le)[..., None] * bk_c  # (nc, c, F)
    s_sum = jnp.einsum("ncf,ncd->nfd", pe, v_c)
    z_sum = jnp.sum(pe, axis=1)

    def rel(a, b):  # exp(a - b) with exp(-inf - x) = 0 (empty prefix)
        return jnp.exp(jnp.where(jnp.isneginf(a), -jnp.inf, a - b))

    def combine(x, y):
        (sa, za, ma, ga), (sb, zb, mb, gb) = x, y
        m = jnp.maximum(ma, mb)
        fa, fb = rel(ma, m) * jnp.exp(gb), rel(mb, m)
        return (fa[..., None, None] * sa + fb[..., None, None] * sb, fa[..., None] * za + fb[..., None] * zb,
                m, ga + gb)

    inc = jax.lax.associative_scan(combine, (s_sum, z_sum, big_m, cum[:, -1]))

    def shift(x, fill):
        return jnp.concatenate([jnp.full((1, *x.shape[1:]), fill, x.dtype), x[:-1]])

    s_pre, z_pre, p_max = shift(inc[0], 0.0), shift(inc[1], 0.0), shift(inc[2], -jnp.inf)
    m_t = jnp.maximum(p_max[:, None], jax.lax.cummax(sk_c, axis=1))  # causal running max
    inter = rel(p_max[:, None], m_t) * jnp.exp(cum)  # (nc, c): carried state, decayed to t
    num = inter[..., None] * jnp.einsum("ncf,nfd->ncd", bq_c, s_pre)
    den = inter * jnp.einsum("ncf,nf->nc", bq_c, z_pre)
    tri = jnp.tril(jnp.ones((c, c), bool))
    lij = sk_c[:, None, :] - m_t[:, :, None] + lw_c[:, None, :] + cum[:, :, None] - cum[:, None, :]
    # mask after the product: exp(-inf) * (b_q . b_k) is NaN for a non-finite future key
    wij = jnp.where(tri[None], jnp.exp(lij) * jnp.einsum("ntf,nif->nti", bq_c, bk_c), 0.0)
    # and 0 * v_i is NaN for a non-finite future value: the product runs on the finite values,
    # and a non-finite value turns its column into NaN from its position on (as the scan would,
    # up to inf vs NaN); earlier chunks never see it, later ones through the carried state
    v_ok = jnp.isfinite(v_c)
    num = num + jnp.einsum("nti,nid->ntd", wij, jnp.where(v_ok, v_c, 0.0))
    num = jnp.where(jax.lax.cummin(v_ok.astype(jnp.int8), axis=1) > 0, num, jnp.nan)
    den = den + jnp.sum(wij, axis=-1)
    return (num / den[..., None]).reshape(nc * c, dv)[:n]


def linear_quadratic(fq: tuple, fk: tuple, v: jax.Array, causal: bool, gate: jax.Array | None = None) -> jax.Array:
    """The same estimator through the explicit ``L x L`` matrix ``phi(q) phi(k)^T`` (reference).

    With ``gate``: weights ``w_ti = (1 - g_i) prod_{i < j <= t} g_j`` for ``i <= t`` (RFA-Gate
    unrolled), computed as ``exp(log(1 - g_i) + C_t - C_i)`` with ``C_t = sum_{j <= t} log g_j``.
    """
    (_, bq), (sk, bk) = fq, fk
    a = bq @ _key_scaled(sk, bk).T
    if gate is not None:
        c = jnp.cumsum(jnp.log(gate))
        lw = jnp.log1p(-gate)[None, :] + c[:, None] - c[None, :]
        a = a * jnp.exp(jnp.where(jnp.tril(jnp.ones(a.shape, bool)), lw, -jnp.inf))
    elif causal:
        a = jnp.where(jnp.tril(jnp.ones(a.shape, bool)), a, 0.0)
    return (a @ v) / jnp.sum(a, axis=-1, keepdims=True)


# ------------------------------------------------------------------------ jitted entry
@functools.partial(jax.jit, static_argnames=("method", "num_features", "coupling", "causal", "stabilise",
                                              "hybrid_n", "rfa_norm_factor", "quadratic", "causal_impl",
                                              "chunk_size"))
def _attention(q, k, v, key, projections, oprf_a, sigma, gate, dark_m, *, method, num_features, coupling,
               causal, stabilise, hybrid_n, rfa_norm_factor, quadratic, causal_impl="scan", chunk_size=64):
    if method == "exact":
        return exact_attention(q, k, v, causal, stabilise)
    if projections is not None:
        params = dict(projections)
    else:
        params = draw_params(key, method, num_features, q.shape[-1], coupling, q.dtype, hybrid_n,
                             None if dark_m is None else dark_m.shape[0])
    if method == "favor++" and oprf_a is None:
        oprf_a = F.oprf_a_eq8(q, k)
    fq, fk = feature_pair(q, k, method, params, stabilise=stabilise, oprf_a=oprf_a, sigma=sigma, dark_m=dark_m,
                          rfa_norm_factor=rfa_norm_factor)
    if quadratic:
        return linear_quadratic(fq, fk, v, causal, gate)
    if causal and causal_impl == "chunked":
        return linear_causal_chunked(fq, fk, v, gate, chunk_size)
    if causal:
        return linear_causal(fq, fk, v, gate)
    return linear_bidirectional(fq, fk, v)


@functools.partial(jax.jit, static_argnames=("method", "num_features", "coupling", "stabilise", "hybrid_n",
                                              "rfa_norm_factor"))
def _features(q, k, key, projections, oprf_a, sigma, dark_m, *, method, num_features, coupling, stabilise, hybrid_n,
              rfa_norm_factor):
    """Jitted ``(phi(q), phi(k))`` with the scales multiplied in (see ``attention_features``)."""
    if projections is not None:
        params = dict(projections)
    else:
        params = draw_params(key, method, num_features, q.shape[-1], coupling, q.dtype, hybrid_n,
                             None if dark_m is None else dark_m.shape[0])
    if method == "favor++" and oprf_a is None:
        oprf_a = F.oprf_a_eq8(q, k)
    (sq, bq), (sk, bk) = feature_pair(q, k, method, params, stabilise=stabilise, oprf_a=oprf_a, sigma=sigma,
                                      dark_m=dark_m, rfa_norm_factor=rfa_norm_factor)
    return jnp.exp(sq)[:, None] * bq, jnp.exp(sk)[:, None] * bk


def as_params(projections: Any, method: str) -> dict[str, Any] | None:
    """Canonical ``projections=`` argument: an array ``W`` (M, d) or a dict of draws."""
    if projections is None:
        return None
    if isinstance(projections, dict):
        return {n: jnp.asarray(a) for n, a in projections.items()}
    if method == "hybrid":
        raise ValueError("method 'hybrid' needs projections={'w': ..., 'w_trig': ..., 'tau': ...}")
    return {"w": jnp.asarray(projections)}


"""Random Feature Attention (RFA, seed 002) in NumPy: the trigonometric feature map, and the
attention algorithms with exact operation counts.

These are a feature map and algorithms, not closed forms, so they live here rather than in
:mod:`rfcheck.closed_forms.rfa` (which holds the kernel identity and its limits, closed forms
only).  The map (:func:`trig_features`) is :func:`rfcheck.features.trig_feature_map` without
the norm factor ``exp(|x|^2/2)``.

The algorithms take feature matrices (any feature map -- :func:`trig_features` or another) so
that the algebraic claims (recurrence = masked quadratic attention, gate = explicit products
of gates) are checked with the *same* features on both sides, and each returns the number of
scalar floating-point operations it performed (one multiply or one add or one divide = 1),
counted alongside the computation, for the complexity table.

The algorithms lived in ``rfcheck.rfa`` in version 0.1.0; that path still imports, with a
:class:`DeprecationWarning`, for one release.

References
----------
Peng et al., *Random Feature Attention*, ICLR 2021, sec 2 ("Background: Random Feature
Methods"; summary in seed 002: the feature map ``phi``, non-causal RFA, Algorithm "Causal
RFA", RFA-Gate, complexity table).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfcheck.features import trig_feature_map

__all__ = [
    "gated_attention_explicit",
    "masked_linear_attention",
    "rfa_causal",
    "rfa_decode_step_ops",
    "rfa_gated",
    "rfa_noncausal",
    "softmax_attention",
    "softmax_decode_step_ops",
    "trig_features",
]


def trig_features(x: Any, w: Any) -> np.ndarray:
    """RFA feature map ``phi(x) = D^{-1/2} [sin(w_1.x) .. sin(w_D.x), cos(w_1.x) .. cos(w_D.x)]``.

    Parameters
    ----------
    x : array_like
        Shape (n, d) (or (d,)), the inputs.
    w : array_like
        Shape (D, d) (or (d,)), the projections (the printed summary draws ``w ~ N(0, sigma^2 I)``;
        :func:`rfcheck.closed_forms.rfa.log_rff_limit` shows ``N(0, sigma^{-2} I)`` is what the
        kernel needs).

    Returns
    -------
    numpy.ndarray
        Shape (n, 2D): ``phi(x)`` row by row (sines, then cosines):
        :func:`rfcheck.features.trig_feature_map` with ``norm_factor=False``.

    Raises
    ------
    ValueError
        If ``x`` and ``w`` differ in dimension ``d``, or either holds NaN or inf.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021, sec 2 ("Background: Random Feature
    Methods"): the feature map ``phi``.

    Examples
    --------
    >>> trig_features([[0.0, 0.0]], [[1.0, 0.0]])
    array([[0., 1.]])
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    w = np.atleast_2d(np.asarray(w, dtype=float))
    if x.shape[1] != w.shape[1]:
        raise ValueError(f"x is in R^{x.shape[1]} but w in R^{w.shape[1]}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(w))):
        raise ValueError("x and w must be finite (no NaN/inf)")
    return trig_feature_map(x, w, norm_factor=False)


# ------------------------------------------------------------------ attention algorithms


def _check(phi_q: np.ndarray, phi_k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    phi_q, phi_k, v = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (phi_q, phi_k, v))
    if phi_q.shape[1] != phi_k.shape[1]:
        raise ValueError("query and key features must have the same width 2D")
    if phi_k.shape[0] != v.shape[0]:
        raise ValueError("one value row per key")
    if not all(np.all(np.isfinite(a)) for a in (phi_q, phi_k, v)):
        raise ValueError("features and values must be finite (no NaN/inf)")
    return phi_q, phi_k, v


def rfa_noncausal(phi_q: np.ndarray, phi_k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, int]:
    """Non-causal RFA: ``h_t = phi(q_t)^T S / (phi(q_t) . z)``, ``S = sum_i phi(k_i) (x) v_i``,
    ``z = sum_j phi(k_j)`` (computed once, reused for every query).

    Parameters
    ----------
    phi_q : array_like
        Shape (n_q, F): the query features ``phi(q_t)``, one row per query (``F = 2D`` for
        :func:`trig_features`).
    phi_k : array_like
        Shape (n_k, F): the key features ``phi(k_i)``, one row per key.
    v : array_like
        Shape (n_k, d_v): the values, one row per key.

    Returns
    -------
    h : numpy.ndarray
        Shape (n_q, d_v): the attention outputs ``h_t``.
    ops : int
        The scalar floating-point operations performed (multiply, add, divide: 1 each):
        ``(2 n_k - 1) F d_v + (n_k - 1) F + n_q (d_v + 1)(2F - 1) + n_q d_v``, linear in ``n_q`` and ``n_k``.

    Raises
    ------
    ValueError
        If the query and key features differ in width, there is not one value row per key, or
        an input holds NaN or inf.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021 (summary in seed 002: non-causal RFA).

    Examples
    --------
    >>> phi_q, phi_k, v = [[1.0, 0.0], [0.5, 0.5]], [[1.0, 1.0], [1.0, 2.0]], [[1.0], [3.0]]
    >>> h, ops = rfa_noncausal(phi_q, phi_k, v)
    >>> h.ravel().tolist(), ops
    ([2.0, 2.2], 22)
    >>> bool(np.allclose(h, masked_linear_attention(phi_q, phi_k, v, causal=False)))
    True
    """
    phi_q, phi_k, v = _check(phi_q, phi_k, v)
    (n_k, f), d, n_q = phi_k.shape, v.shape[1], phi_q.shape[0]
    s = phi_k.T @ v                       # f x d: n_k*f*d mults + (n_k-1)*f*d adds
    z = phi_k.sum(axis=0)                 # (n_k-1)*f adds
    num = phi_q @ s                       # n_q*d*(2f-1)
    den = phi_q @ z                       # n_q*(2f-1)
    h = num / den[:, None]                # n_q*d
    ops = (2 * n_k - 1) * f * d + (n_k - 1) * f + n_q * (d + 1) * (2 * f - 1) + n_q * d
    return h, ops


def masked_linear_attention(phi_q: np.ndarray, phi_k: np.ndarray, v: np.ndarray, causal: bool = True) -> np.ndarray:
    """Quadratic form with the same features: ``A_ti = phi(q_t).phi(k_i)`` (``i <= t`` when
    ``causal``), ``h_t = sum_i A_ti v_i / sum_i A_ti`` -- the reference for the recurrences.

    Parameters
    ----------
    phi_q : array_like
        Shape (n_q, F): the query features ``phi(q_t)``, one row per query (``F = 2D`` for
        :func:`trig_features`).
    phi_k : array_like
        Shape (n_k, F): the key features ``phi(k_i)``, one row per key.
    v : array_like
        Shape (n_k, d_v): the values, one row per key.
    causal : bool, optional
        Mask the keys after each query (``i <= t``; needs ``n_q <= n_k`` rows aligned by position).
        Default True.

    Returns
    -------
    numpy.ndarray
        Shape (n_q, d_v): ``h_t``, computed from the full ``n_q x n_k`` weight matrix (no recurrence).

    Raises
    ------
    ValueError
        If the query and key features differ in width, there is not one value row per key, or
        an input holds NaN or inf.

    Examples
    --------
    >>> phi_q, phi_k, v = [[1.0, 0.0], [0.5, 0.5]], [[1.0, 1.0], [1.0, 2.0]], [[1.0], [3.0]]
    >>> masked_linear_attention(phi_q, phi_k, v).ravel().tolist()
    [1.0, 2.2]
    >>> masked_linear_attention(phi_q, phi_k, v, causal=False).ravel().tolist()
    [2.0, 2.2]
    """
    phi_q, phi_k, v = _check(phi_q, phi_k, v)
    a = phi_q @ phi_k.T
    if causal:
        a = np.tril(a)
    return (a @ v) / a.sum(axis=1, keepdims=True)


def rfa_causal(phi_q: np.ndarray, phi_k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, int]:
    """Algorithm "Causal RFA" as printed: ``S <- S + phi(k_t) (x) v_t``, ``z <- z + phi(k_t)``,
    ``h_t <- phi(q_t)^T S / (phi(q_t) . z)``, from ``S = 0``, ``z = 0``.

    Parameters
    ----------
    phi_q : array_like
        Shape (n_q, F): the query features ``phi(q_t)``, one row per query (``F = 2D`` for
        :func:`trig_features`).
    phi_k : array_like
        Shape (n_k, F): the key features ``phi(k_i)``, one row per key.
    v : array_like
        Shape (n_k, d_v): the values, one row per key.
        Queries and keys are aligned by position (``n_q = n_k = n``).

    Returns
    -------
    h : numpy.ndarray
        Shape (n, d_v): the outputs ``h_t``, equal to :func:`masked_linear_attention` with
        ``causal=True`` up to rounding.
    ops : int
        The scalar operations performed: ``n (2 F d_v + F + (d_v + 1)(2F - 1) + d_v)``, linear in ``n``.

    Raises
    ------
    ValueError
        If the query and key features differ in width, there is not one value row per key, or
        an input holds NaN or inf.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021 (summary in seed 002: Algorithm "Causal RFA").

    Examples
    --------
    >>> phi_q, phi_k, v = [[1.0, 0.0], [0.5, 0.5]], [[1.0, 1.0], [1.0, 2.0]], [[1.0], [3.0]]
    >>> h, ops = rfa_causal(phi_q, phi_k, v)
    >>> h.ravel().tolist(), ops
    ([1.0, 2.2], 26)
    """
    phi_q, phi_k, v = _check(phi_q, phi_k, v)
    n, f = phi_k.shape
    d = v.shape[1]
    s = np.zeros((f, d))
    z = np.zeros(f)
    h = np.empty((n, d))
    ops = 0
    for t in range(n):
        s += np.outer(phi_k[t], v[t])     # f*d mults + f*d adds
        z += phi_k[t]                     # f adds
        h[t] = (phi_q[t] @ s) / (phi_q[t] @ z)   # d*(2f-1) + (2f-1) + d
        ops += 2 * f * d + f + (d + 1) * (2 * f - 1) + d
    return h, ops


def rfa_gated(phi_q: np.ndarray, phi_k: np.ndarray, v: np.ndarray, g: np.ndarray) -> np.ndarray:
    """RFA-Gate as printed: ``S_t = g_t S_{t-1} + (1 - g_t) phi(k_t) (x) v_t``,
    ``z_t = g_t z_{t-1} + (1 - g_t) phi(k_t)``, ``h_t = phi(q_t)^T S_t / (phi(q_t) . z_t)``,
    ``S_0 = 0``, ``z_0 = 0``; ``g_t in (0, 1)``.

    Parameters
    ----------
    phi_q : array_like
        Shape (n_q, F): the query features ``phi(q_t)``, one row per query (``F = 2D`` for
        :func:`trig_features`).
    phi_k : array_like
        Shape (n_k, F): the key features ``phi(k_i)``, one row per key.
    v : array_like
        Shape (n_k, d_v): the values, one row per key.
        Queries and keys are aligned by position (``n_q = n_k = n``).
    g : array_like
        Shape (n,): the gates ``g_t``, each in the open interval (0, 1).

    Returns
    -------
    numpy.ndarray
        Shape (n, d_v): the outputs ``h_t``, equal to :func:`gated_attention_explicit` up to rounding.

    Raises
    ------
    ValueError
        If there is not one gate per step or a gate is outside (0, 1); or as
        :func:`masked_linear_attention` for the features and values.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021 (summary in seed 002: RFA-Gate).

    Examples
    --------
    >>> phi_q, phi_k, v = [[1.0, 0.0], [0.5, 0.5]], [[1.0, 1.0], [1.0, 2.0]], [[1.0], [3.0]]
    >>> rfa_gated(phi_q, phi_k, v, [0.5, 0.5]).ravel().tolist()
    [1.0, 2.5]
    """
    phi_q, phi_k, v = _check(phi_q, phi_k, v)
    g = np.asarray(g, dtype=float).ravel()
    if g.size != phi_k.shape[0]:
        raise ValueError("one gate per step")
    if not np.all((g > 0) & (g < 1)):
        raise ValueError("gates must lie in (0, 1)")
    f, d = phi_k.shape[1], v.shape[1]
    s, z = np.zeros((f, d)), np.zeros(f)
    h = np.empty((phi_k.shape[0], d))
    for t in range(phi_k.shape[0]):
        s = g[t] * s + (1 - g[t]) * np.outer(phi_k[t], v[t])
        z = g[t] * z + (1 - g[t]) * phi_k[t]
        h[t] = (phi_q[t] @ s) / (phi_q[t] @ z)
    return h


def gated_attention_explicit(phi_q: np.ndarray, phi_k: np.ndarray, v: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Attention with explicit weights ``c_ti = (1 - g_i) prod_{j=i+1}^t g_j`` (``i <= t``):
    ``h_t = sum_i c_ti A_ti v_i / sum_i c_ti A_ti``, ``A_ti = phi(q_t).phi(k_i)`` -- the
    unrolled RFA-Gate recurrence, computed without any recurrence.

    Parameters
    ----------
    phi_q : array_like
        Shape (n_q, F): the query features ``phi(q_t)``, one row per query (``F = 2D`` for
        :func:`trig_features`).
    phi_k : array_like
        Shape (n_k, F): the key features ``phi(k_i)``, one row per key.
    v : array_like
        Shape (n_k, d_v): the values, one row per key.
        Queries and keys are aligned by position (``n_q = n_k = n``).
    g : array_like
        Shape (n,): the gates ``g_t`` (not checked here: :func:`rfa_gated` requires (0, 1)).

    Returns
    -------
    numpy.ndarray
        Shape (n, d_v): the outputs ``h_t`` (``O(n^2)`` weights, ``O(n^3)`` gate products).

    Raises
    ------
    ValueError
        If the query and key features differ in width, there is not one value row per key, or
        an input holds NaN or inf.

    Examples
    --------
    >>> phi_q, phi_k, v = [[1.0, 0.0], [0.5, 0.5]], [[1.0, 1.0], [1.0, 2.0]], [[1.0], [3.0]]
    >>> gated_attention_explicit(phi_q, phi_k, v, [0.5, 0.5]).ravel().tolist()
    [1.0, 2.5]
    """
    phi_q, phi_k, v = _check(phi_q, phi_k, v)
    g = np.asarray(g, dtype=float).ravel()
    n = phi_k.shape[0]
    c = np.zeros((n, n))
    for t in range(n):
        for i in range(t + 1):
            c[t, i] = (1 - g[i]) * np.prod(g[i + 1: t + 1])
    a = (phi_q @ phi_k.T) * c
    return (a @ v) / a.sum(axis=1, keepdims=True)


def softmax_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> tuple[np.ndarray, int]:
    """Exact softmax attention ``sum_i exp(q.k_i) v_i / sum_j exp(q.k_j)`` (max-shifted),
    with its operation count (exp counted as 1 op).

    Parameters
    ----------
    q : array_like
        Shape (n_q, d_k): the queries (no ``1/sqrt(d_k)`` scaling is applied: scale them first).
    k : array_like
        Shape (n_k, d_k): the keys.
    v : array_like
        Shape (n_k, d_v): the values.
    causal : bool, optional
        Query ``t`` attends to keys ``i <= t`` only.  Default False.

    Returns
    -------
    h : numpy.ndarray
        Shape (n_q, d_v): the outputs.
    ops : int
        The scalar operations: ``n_q n_k (2 d_k - 1)`` for the logits, ``2 n_q n_k`` for the shift
        and the exponentials, ``n_q n_k (2 d_v - 1) + n_q (n_k - 1) + n_q d_v`` for the weighted sums;
        quadratic in the length (the causal mask is not subtracted).

    Examples
    --------
    >>> h, ops = softmax_attention([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [3.0]])
    >>> h.ravel().tolist(), ops
    ([2.0], 14)
    """
    q, k, v = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, k, v))
    n_q, d_k = q.shape
    n_k, d = k.shape[0], v.shape[1]
    logits = q @ k.T
    if causal:
        logits = np.where(np.tril(np.ones((n_q, n_k), bool)), logits, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    w = np.exp(logits)
    h = (w @ v) / w.sum(axis=1, keepdims=True)
    ops = n_q * n_k * (2 * d_k - 1) + 2 * n_q * n_k + n_q * n_k * (2 * d - 1) + n_q * (n_k - 1) + n_q * d
    return h, ops


def rfa_decode_step_ops(n_prev: int, m_src: int, f: int, d: int) -> int:
    """Operations of one RFA decoding step (self-attention state update and read-out, plus
    cross-attention read-out against the source state precomputed once): independent of
    the target position ``n_prev`` and the source length ``m_src``.

    Parameters
    ----------
    n_prev : int
        Target tokens decoded before this step (unused: the state has a fixed size).
    m_src : int
        Source length (unused: the source state is precomputed).
    f : int
        Feature width ``F`` (``2D`` for the trigonometric map).
    d : int
        Head dimension (of the values).

    Returns
    -------
    int
        ``2 F d + F + (d + 1)(2F - 1) + d`` (self-attention) plus ``(d + 1)(2F - 1) + d`` (cross-attention).

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021 (summary in seed 002: complexity table, decode time).

    Examples
    --------
    >>> rfa_decode_step_ops(10, 5, 4, 3), rfa_decode_step_ops(1000, 500, 4, 3)
    (90, 90)
    """
    del n_prev, m_src
    self_att = 2 * f * d + f + (d + 1) * (2 * f - 1) + d
    cross = (d + 1) * (2 * f - 1) + d
    return self_att + cross


def softmax_decode_step_ops(n_prev: int, m_src: int, d: int) -> int:
    """Operations of one softmax decoding step: attention over the ``n_prev`` cached target
    keys and the ``m_src`` source keys (cached keys and values).

    Parameters
    ----------
    n_prev : int
        Cached target keys (the tokens decoded before this step).
    m_src : int
        Source keys (cross-attention).
    d : int
        Head dimension (of keys and values).

    Returns
    -------
    int
        ``c(n_prev) + c(m_src)`` with ``c(n) = 2 n (2d - 1) + 2n + (n - 1) + d`` (logits,
        exponentials and shift, weighted sum, normaliser, division): linear in the lengths.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021 (summary in seed 002: complexity table, decode time).

    Examples
    --------
    >>> softmax_decode_step_ops(10, 5, 3), softmax_decode_step_ops(100, 5, 3)
    (199, 1369)
    """
    def one(n: int) -> int:
        return n * (2 * d - 1) + 2 * n + n * (2 * d - 1) + (n - 1) + d

    return one(n_prev) + one(m_src)

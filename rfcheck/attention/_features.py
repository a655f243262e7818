"""Projections and feature maps of the attention harness (JAX, private).

A feature map returns a pair ``(s, b)`` with ``phi(x) = exp(s)[:, None] * b``: ``s`` (L,) is a
per-row log-scale and ``b`` (L, F) bounded.  With ``stabilise=False`` every map returns
``s = 0`` and ``b = phi(x)`` computed directly (``exp`` of the log-feature, no
subtraction): the exact unbiased estimator used by the verification code.

Projections are drawn in JAX from an explicit key (jit-compatible):

- ``iid``: rows ``N(0, I_d)``;
- ``orf``: blocks of ``min(d, remaining)`` rows, Haar directions (QR of a Gaussian matrix
  with the sign fix ``diag(R) > 0``), independent ``chi_d`` norms (Yu et al. 2016;
  CRT appendix 9.1);
- ``simrf``: blocks ``W = D S R`` with ``R`` Haar, ``S`` the simplex matrix (unit rows,
  pairwise inner products ``-1/(d-1)``), ``D`` chi_d norms (SimRF eq (8)-(9)).

They follow the same laws as the NumPy/Numba samplers of :mod:`rfcheck.engine.couplings`, which
can be passed instead through ``projections=`` (tests tie the two by their feature
products and by moments).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from rfcheck.features import trig_feature_map

COUPLINGS = ("iid", "orf", "simrf")


def enable_x64(on: bool = True) -> Any:
    """Context manager turning JAX's 64-bit mode on (``jax.enable_x64`` or, on older JAX,
    ``jax.experimental.enable_x64``).

    Parameters
    ----------
    on : bool, default True
        Turn 64-bit mode on (``False``: off) inside the context.

    Returns
    -------
    context manager
        Restores the previous mode on exit.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> with enable_x64():
    ...     print(jnp.zeros(1).dtype)
    float64
    """
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(on)
    from jax.experimental import disable_x64 as _d
    from jax.experimental import enable_x64 as _e  # JAX < 0.6

    return _e() if on else _d()


# ------------------------------------------------------------------------ projections
def _haar(key: Any, d: int, dtype: Any) -> jax.Array:
    g = jax.random.normal(key, (d, d), dtype)
    q, r = jnp.linalg.qr(g)
    return q * jnp.where(jnp.diagonal(r) >= 0, 1.0, -1.0).astype(dtype)[None, :]


def _simplex(d: int, dtype: Any) -> jax.Array:
    """Rows ``s_i`` (d, d): unit vectors with ``s_i . s_j = -1/(d-1)`` for ``i != j``."""
    e = jnp.eye(d, dtype=dtype) - 1.0 / d
    return e / math.sqrt(1.0 - 1.0 / d)


def draw_projections(key: Any, coupling: str, m: int, d: int, dtype: Any = jnp.float32) -> jax.Array:
    """``W`` (m, d), each row marginally ``N(0, I_d)``, jointly drawn by ``coupling``.

    Parameters
    ----------
    key : jax PRNG key
        The randomness.
    coupling : {"iid", "orf", "simrf"}
        iid Gaussian rows; or blocks of ``d`` rows with orthogonal (``"orf"``) or simplex
        (``"simrf"``, pairwise cosines ``-1/(d-1)``) directions from a Haar rotation, times
        independent chi_d norms.
    m : int
        Number of rows.
    d : int
        Dimension (``"simrf"`` needs ``d >= 2``).
    dtype : jax dtype, default float32
        Of the result.

    Returns
    -------
    jax.Array
        Shape (m, d).

    Raises
    ------
    ValueError
        If ``coupling="simrf"`` and ``d < 2``.

    References
    ----------
    CRT sec 4, Thm 4.1 (orthogonal ensembles); Reid et al., *Simplex Random Features*,
    ICML 2023 (the simplex coupling).
    """
    if coupling == "iid":
        return jax.random.normal(key, (m, d), dtype)
    if coupling == "simrf" and d < 2:
        raise ValueError("coupling 'simrf' needs d >= 2")
    blocks = []
    n_blocks = -(-m // d)
    keys = jax.random.split(key, 2 * n_blocks)
    for i in range(n_blocks):
        b = min(d, m - i * d)
        r = _haar(keys[2 * i], d, dtype)  # columns orthonormal -> rows of r.T orthonormal
        dirs = r.T[:b] if coupling == "orf" else (_simplex(d, dtype) @ r.T)[:b]
        norms = jnp.linalg.norm(jax.random.normal(keys[2 * i + 1], (b, d), dtype), axis=1)
        blocks.append(dirs * norms[:, None])
    return jnp.concatenate(blocks, axis=0)


# ------------------------------------------------------------------------ helpers
def _sq(x: jax.Array) -> jax.Array:
    return jnp.sum(x * x, axis=-1)


def _from_log(logf: jax.Array, stabilise: bool) -> tuple[jax.Array, jax.Array]:
    """``(s, b)`` of positive features with log-values ``logf`` (L, F)."""
    if not stabilise:
        return jnp.zeros(logf.shape[:-1], logf.dtype), jnp.exp(logf)
    s = jax.lax.stop_gradient(jnp.max(logf, axis=-1))
    return s, jnp.exp(logf - s[..., None])


# ------------------------------------------------------------------------ GERF / PRF / OPRF
def gerf_log_features(x: jax.Array, w: jax.Array, a: Any) -> jax.Array:
    """log of the positive GERF feature (real ``A <= 0``-ish, ``s = +1``) for the softmax kernel.

    ``log f(w, x) = (d/4) log(1 - 4A) + A|w|^2 + B w.x - |x|^2 + |x|^2/2``,
    ``B = sqrt(1 - 4A)`` (CRT eq (4)-(5); the ``exp(|x|^2/2)`` turns the Gaussian kernel into
    the softmax kernel, CRT sec 2.1), divided by ``sqrt(M)`` so that ``phi(q) . phi(k)``
    is the M-sample mean.  ``A = 0`` is the positive RF of FAVOR+.
    """
    m, d = w.shape
    one4a = 1.0 - 4.0 * a
    const = 0.25 * d * jnp.log(one4a) - 0.5 * math.log(m)
    return const + a * _sq(w)[None, :] + jnp.sqrt(one4a) * (x @ w.T) - 0.5 * _sq(x)[:, None]


def positive_features(x: jax.Array, w: jax.Array, a: Any = 0.0, *, stabilise: bool = True):
    """Positive (FAVOR+, ``a = 0``) or OPRF (FAVOR++, ``a = A``) features as ``(s, b)``."""
    return _from_log(gerf_log_features(x, w, a), stabilise)


def oprf_a_eq8(q: jax.Array, k: jax.Array) -> jax.Array:
    """``A*`` (CRT Thm 3.3) at ``u`` = the eq (8) average of ``|q_i + k_j|^2`` over all pairs.

    ``u = mean|q|^2 + 2 mean(q) . mean(k) + mean|k|^2`` (eq (8), ``s = +1``); ``A* = -(1 - rho*)
    / (8 rho*)`` with ``rho*`` from eq (22) in the non-cancelling form of
    :func:`rfcheck.closed_forms.crt.oprf_a_star` (the same expressions, in JAX).  Uses every
    position: not causal.
    """
    d = q.shape[-1]
    u = jnp.mean(_sq(q)) + 2.0 * jnp.dot(jnp.mean(q, axis=0), jnp.mean(k, axis=0)) + jnp.mean(_sq(k))
    u = jnp.maximum(u, 0.0)
    big_s = jnp.sqrt((2 * u + d) ** 2 + 8 * d * u)
    rho = 2 * d / ((2 * u + d) + big_s)
    one_minus = (2 * u + 4 * u * (u + 3 * d) / (big_s + d)) / (2 * u + d + big_s)
    return -one_minus / (8 * rho)


# ------------------------------------------------------------------------ trigonometric
def trig_features(x: jax.Array, w: jax.Array, *, norm_factor: bool = True, stabilise: bool = True):
    """Trigonometric softmax features ``exp(|x|^2/2)/sqrt(M) [cos(w x), sin(w x)]`` as ``(s, b)``.

    With ``norm_factor=False`` the factor ``exp(|x|^2/2)`` is dropped (RFA as printed, which
    is exact only when all keys have the same norm).  The map is
    :func:`rfcheck.features.trig_feature_map` (cosines first, log-scale ``s = |x|^2/2``).
    """
    s, b = trig_feature_map(x, w, xp=jnp, norm_factor=norm_factor, order="cos_sin", log_scale=True)
    if not stabilise:
        return jnp.zeros_like(s), jnp.exp(s)[:, None] * b
    return jax.lax.stop_gradient(s), b


# ------------------------------------------------------------------------ angular hybrid
def hybrid_features(x: jax.Array, w_pos: jax.Array, w_trig: jax.Array, tau: jax.Array, side: str,
                    *, stabilise: bool = True):
    """Angular hybrid features (HRF eq (12), (19)) for the query (``side="q"``) or key side.

    ``lam = 1/2 + rho(x)^T rho(y)`` with ``rho(z) = i sgn(tau z) / sqrt(2n)`` (eq 19), i.e.
    ``lam = 1/2 - sgn(tau x) . sgn(tau y) / (2n)``, and the estimator
    ``lam SM++_m + (1 - lam) SM^trig_m`` is the dot product of
    ``[phi++/sqrt2, -/+ c (x) phi++, phi_t/sqrt2, c (x) phi_t]`` with ``c = sgn(tau z)/sqrt(2n)``
    (the minus on the query side carries ``i^2 = -1``).  Not a positive feature map.

    ``SM++_m`` is HRF's eq (3): the *antithetic* positive features
    ``(2m)^-1/2 exp(-|x|^2/2) (exp(w_i x), exp(-w_i x))`` of the ``m`` rows of ``w_pos``
    (FAVOR+ on the projections ``[w_pos; -w_pos]``), so that the estimator is the one whose
    MSE is HRF Thm D.1 eq (45) (:func:`rfcheck.closed_forms.hrf.log_mse_angular_hybrid`,
    ``shared=0``: ``w_pos`` and ``w_trig`` independent).  Feature count ``4 m (n + 1)``.
    """
    n = tau.shape[0]
    c = jnp.sign(x @ tau.T) / math.sqrt(2 * n)
    sp, bp = positive_features(x, jnp.concatenate([w_pos, -w_pos], axis=0), 0.0, stabilise=stabilise)
    st, bt = trig_features(x, w_trig, stabilise=stabilise)
    s = jnp.maximum(sp, st)
    bp = bp * jnp.exp(sp - s)[:, None]
    bt = bt * jnp.exp(st - s)[:, None]
    sign = -1.0 if side == "q" else 1.0

    def outer(a: jax.Array) -> jax.Array:
        return (c[:, :, None] * a[:, None, :]).reshape(a.shape[0], -1)

    r2 = 1.0 / math.sqrt(2.0)
    return s, jnp.concatenate([r2 * bp, sign * outer(bp), r2 * bt, outer(bt)], axis=-1)

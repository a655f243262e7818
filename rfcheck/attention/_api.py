"""Public functions of :mod:`rfcheck.attention` (validation, then a jitted kernel)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rfcheck.attention import _core
from rfcheck.attention import _features as F

__all__ = ["attention", "attention_features", "oprf_a_eq8", "unnormalised_attention", "whitening_matrix"]


#: matmul precisions accepted by ``precision=`` (JAX's names; "highest": full float32/float64 products)
PRECISIONS = ("highest", "high", "default")


def _matmul_precision(precision: str) -> Any:
    """Context fixing JAX's matmul precision while the harness traces and runs.

    ``"highest"`` (the harness's default) makes float32 mean float32 on every backend; JAX's
    own default lets XLA use TF32 (a 10-bit mantissa) for float32 products on Ampere and later
    GPUs and bf16 passes on TPUs, which on an H200 gave relative errors ~3e-4 instead of ~1e-7
    against a float64 reference (``python -m rfcheck.attention.devicecheck``).  The precision
    is part of JAX's trace context, so jitted code is traced once per precision.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}; got {precision!r}")
    return jax.default_matmul_precision(precision)


def _check_qkv(q: Any, k: Any, v: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    q, k, v = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
    if q.ndim not in (2, 3) or k.shape != q.shape:
        raise ValueError(f"q and k must have the same shape (L, d) or (H, L, d); got {q.shape} and {k.shape}")
    if v.ndim != q.ndim or v.shape[:-1] != q.shape[:-1]:
        raise ValueError(f"v must have shape {(*q.shape[:-1], 'd_v')}; got {v.shape}")
    if not all(jnp.issubdtype(a.dtype, jnp.floating) for a in (q, k, v)):
        raise ValueError("q, k, v must be floating arrays (float32 or float64)")
    dt = jnp.result_type(q, k, v)
    return q.astype(dt), k.astype(dt), v.astype(dt)


def attention(
    q: Any, k: Any, v: Any, *, method: str = "exact", num_features: int = 64, coupling: str = "iid",
    causal: bool = False, key: Any = None, stabilise: bool = True, projections: Any = None,
    oprf_a: float | None = None, sigma: Any = None, gate: Any = None, darkformer_m: Any = None,
    hybrid_n: int = 8, rfa_norm_factor: bool = True, quadratic: bool = False, causal_impl: str = "scan",
    chunk_size: int = 64, precision: str = "highest",
) -> jax.Array:
    """Softmax attention or a random-feature linear attention of ``q, k, v``.

    Parameters
    ----------
    q, k : array (L, d) or (H, L, d)
        Queries and keys (heads share the projections).  Kernel ``exp(q . k)`` (no ``1/sqrt(d)``).
    v : array (L, d_v) or (H, L, d_v)
    method : str
        ``"exact"``, ``"favor+"``, ``"favor++"``, ``"rfa"``, ``"darkformer"``, ``"hybrid"``
        (see the module docstring).
    num_features : int
        ``M``, the number of projections (``"rfa"`` gives ``2M`` features; ``"hybrid"``, with ``M`` projections
        for each base, ``4M(hybrid_n + 1)``).
    coupling : str
        ``"iid"``, ``"orf"`` or ``"simrf"`` (drawn in JAX from ``key``).
    causal : bool
        Position ``t`` attends to ``<= t``; linear methods use prefix sums (``causal_impl``).
    key : jax PRNG key
        Needed by the random-feature methods unless ``projections`` is given.
    stabilise : bool
        Log-space max subtraction (normalised output unchanged); ``False`` for the plain estimator.
    projections : array (M, d) or dict, optional
        Use these projections instead of drawing them.
    oprf_a : float, optional
        ``A`` of FAVOR++; ``None``: ``A*`` from the eq (8) statistics (bidirectional only).
    sigma : scalar, (d,), (H,) or (H, d), optional
        RFA scale(s): kernel ``exp(sum_i q_i k_i / sigma_i^2)``.
    gate : array (L,) or (H, L) in (0, 1), optional
        RFA-Gate ``g_t`` (needs ``causal=True``).
    darkformer_m : array (r, d)
        DARKFormer's ``M`` (``Sigma = M^T M``).
    hybrid_n : int
        Number of sgn features of the angular hybrid's ``lambda`` estimator (HRF eq 19).
    rfa_norm_factor : bool
        Keep ``exp(|x|^2 / (2 sigma^2))`` in the RFA features (the unbiased estimator).
    quadratic : bool
        Compute the linear estimator through the explicit ``L x L`` matrix (reference path).
    causal_impl : str
        Causal linear attention by ``"scan"`` (``lax.scan`` over positions, memory ``O(L F + F d_v)``,
        ``L`` sequential steps) or ``"chunked"`` (intra-chunk masked quadratic plus inter-chunk
        prefix states by an associative scan: memory ``O(L F + (L / chunk) F d_v + L chunk)``,
        parallel depth ``O(log(L / chunk))``); both give the same estimator, stabiliser and gate.
    chunk_size : int
        Chunk length of ``causal_impl="chunked"``.
    precision : str
        Matmul precision: ``"highest"`` (default; float32 inputs give float32 arithmetic on every
        backend), ``"high"`` or ``"default"`` (the backend's choice: TF32 products on Ampere and
        later GPUs, ~3e-4 relative error on an H200).  It overrides an enclosing
        ``jax.default_matmul_precision(...)`` context: pass ``precision=`` to change it.

    Returns
    -------
    jax.Array, shape (L, d_v) or (H, L, d_v), dtype of the inputs.

    Raises
    ------
    ValueError
        If ``q``, ``k``, ``v`` are not floating arrays of matching shapes (L, d)/(L, d_v) or
        (H, L, d)/(H, L, d_v); ``method``, ``coupling``, ``causal_impl`` or ``precision`` is
        unknown; ``num_features`` or ``chunk_size`` is not an integer >= 1; a random-feature
        method has neither ``key`` nor ``projections``; ``gate`` is given without
        ``method="rfa"`` and ``causal=True``, or has values outside (0, 1); causal FAVOR++ has no
        ``oprf_a``; ``"darkformer"`` has no ``darkformer_m``; ``oprf_a >= 1/8``; or, with heads,
        ``sigma`` is not a scalar, (H,) or (H, d).

    References
    ----------
    CRT sec 2.3 and eq (8) (FAVOR++), Thm 3.3; RFA (Peng et al. 2021) causal and gated
    recurrences; DARKFormer eq (3); HRF eq (12), (19).
    """
    with _matmul_precision(precision):  # validates precision first; in force while the kernels trace
        q, k, v = _check_qkv(q, k, v)
        if method not in _core.METHODS:
            raise ValueError(f"method must be one of {_core.METHODS}; got {method!r}")
        if coupling not in F.COUPLINGS:
            raise ValueError(f"coupling must be one of {F.COUPLINGS}; got {coupling!r}")
        if isinstance(num_features, bool) or not isinstance(num_features, int | np.integer) or num_features < 1:
            raise ValueError(f"num_features must be an integer >= 1; got {num_features!r}")
        if method != "exact" and projections is None and key is None:
            raise ValueError(f"method {method!r} draws random projections: pass key=jax.random.key(seed)")
        if causal_impl not in _core.CAUSAL_IMPLS:
            raise ValueError(f"causal_impl must be one of {_core.CAUSAL_IMPLS}; got {causal_impl!r}")
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer) or chunk_size < 1:
            raise ValueError(f"chunk_size must be an integer >= 1; got {chunk_size!r}")
        if gate is not None and (method != "rfa" or not causal):
            raise ValueError("gate= (RFA-Gate) needs method='rfa' and causal=True")
        if method == "favor++" and causal and oprf_a is None:
            raise ValueError("causal FAVOR++ needs an explicit oprf_a: the eq (8) statistics use every position "
                             "(future keys included); estimate A from training data or use oprf_a_eq8 on a prefix")
        if method == "darkformer" and darkformer_m is None:
            raise ValueError("method 'darkformer' needs darkformer_m (Sigma = M^T M), e.g. whitening_matrix(q, k)")
        if oprf_a is not None and not float(np.asarray(oprf_a)) < 0.125:
            raise ValueError(f"oprf_a must satisfy 1 - 8A > 0 (finite variance, CRT Thm 3.2); got {oprf_a}")
        dt = q.dtype
        params = _core.as_params(projections, method)
        if params is not None:
            params = {n: a.astype(dt) for n, a in params.items()}
        sig = None if sigma is None else jnp.asarray(sigma, dt)
        g = None if gate is None else jnp.asarray(gate, dt)
        if g is not None and not bool(jnp.all((g > 0) & (g < 1))):
            raise ValueError("gate values must lie in (0, 1)")
        dm = None if darkformer_m is None else jnp.asarray(darkformer_m, dt)
        a = None if oprf_a is None else jnp.asarray(oprf_a, dt)
        static = {"method": method, "num_features": int(num_features), "coupling": coupling, "causal": bool(causal),
                  "stabilise": bool(stabilise), "hybrid_n": int(hybrid_n), "rfa_norm_factor": bool(rfa_norm_factor),
                  "quadratic": bool(quadratic), "causal_impl": causal_impl, "chunk_size": int(chunk_size)}

        def one(qh, kh, vh, sh, gh):
            return _core._attention(qh, kh, vh, key, params, a, sh, gh, dm, **static)

        if q.ndim == 2:
            return one(q, k, v, sig, g)
        h = q.shape[0]
        sig_axis = None
        if sig is not None and sig.ndim >= 1:  # for (H, L, d) inputs sigma is per head: (H,) or (H, d)
            if sig.shape[0] != h or sig.ndim > 2:
                raise ValueError(f"with {h} heads sigma must be a scalar, (H,) or (H, d); got shape {sig.shape}")
            sig, sig_axis = (sig[:, None] if sig.ndim == 1 else sig), 0
        return jax.vmap(one, in_axes=(0, 0, 0, sig_axis, None if g is None else 0))(q, k, v, sig, g)


def attention_features(
    q: Any, k: Any, *, method: str, num_features: int = 64, coupling: str = "iid", key: Any = None,
    projections: Any = None, stabilise: bool = False, oprf_a: float | None = None, sigma: Any = None,
    darkformer_m: Any = None, hybrid_n: int = 8, rfa_norm_factor: bool = True, precision: str = "highest",
) -> tuple[jax.Array, jax.Array]:
    """Query and key feature matrices ``phi(q)``, ``phi(k)`` (L, F) with ``phi(q) phi(k)^T`` the estimate.

    With ``stabilise=False`` (default) these are the plain features; with ``True`` they are the
    stabilised ``b`` parts (scaled by per-row constants).  ``precision``: as in :func:`attention`.

    Parameters
    ----------
    q, k : array (L, d)
        Queries and keys of one head, floating.
    method : str
        A random-feature method of :func:`attention` (``"favor+"``, ``"favor++"``, ``"rfa"``,
        ``"darkformer"``, ``"hybrid"``).
    num_features : int, default 64
        ``M``, the number of projections.
    coupling : str, default "iid"
        ``"iid"``, ``"orf"`` or ``"simrf"`` (drawn from ``key``).
    key : jax PRNG key, optional
        Needed unless ``projections`` is given.
    projections : array (M, d) or dict, optional
        Use these projections instead of drawing them.
    stabilise : bool, default False
        Return the stabilised ``b`` parts instead of the plain features.
    oprf_a : float, optional
        ``A`` of FAVOR++ (default ``A*`` from the CRT eq (8) statistics).
    sigma : scalar or (d,), optional
        RFA scale(s).
    darkformer_m : array (r, d), optional
        DARKFormer's ``M`` (``Sigma = M^T M``).
    hybrid_n : int, default 8
        Number of sgn features of the angular hybrid's ``lambda`` estimator (HRF eq 19).
    rfa_norm_factor : bool, default True
        Keep ``exp(|x|^2 / (2 sigma^2))`` in the RFA features.
    precision : str, default "highest"
        Matmul precision (see :func:`attention`).

    Returns
    -------
    phi_q, phi_k : jax.Array
        Shape (L, F) each, ``F`` the number of features of ``method``.

    Raises
    ------
    ValueError
        If ``q``, ``k`` are not floating (L, d) arrays of one shape, ``method`` is ``"exact"`` or
        unknown, neither ``key`` nor ``projections`` is given, or ``precision`` is unknown.

    References
    ----------
    CRT sec 2.2, Thm 3.3 and eq (8); RFA (Peng et al. 2021) sec 2; DARKFormer eq (3); HRF eq (12), (19).
    """
    precision_ctx = _matmul_precision(precision)
    q, k, _ = _check_qkv(q, k, q)
    if q.ndim != 2:
        raise ValueError("attention_features takes one head: q, k of shape (L, d)")
    if method not in _core.METHODS or method == "exact":
        raise ValueError(f"method must be one of {_core.METHODS[1:]}; got {method!r}")
    params = _core.as_params(projections, method)
    if params is None and key is None:
        raise ValueError("pass key= or projections=")
    if params is not None:
        params = {n: a.astype(q.dtype) for n, a in params.items()}
    with precision_ctx:
        return _core._features(
            q, k, key, params, None if oprf_a is None else jnp.asarray(oprf_a, q.dtype),
            None if sigma is None else jnp.asarray(sigma, q.dtype),
            None if darkformer_m is None else jnp.asarray(darkformer_m, q.dtype),
            method=method, num_features=int(num_features), coupling=coupling, stabilise=bool(stabilise),
            hybrid_n=int(hybrid_n), rfa_norm_factor=bool(rfa_norm_factor))


def unnormalised_attention(q: Any, k: Any, **kwargs: Any) -> jax.Array:
    """The estimated matrix ``A_hat = phi(q) phi(k)^T`` (L, L), unbiased for ``exp(q k^T)``.

    Stabilisers are off (the plain estimator).  Keyword arguments as :func:`attention_features`.

    Parameters
    ----------
    q, k : array (L, d)
        Queries and keys of one head.
    **kwargs
        As :func:`attention_features` (``method=`` is required; ``stabilise`` is forced off).

    Returns
    -------
    jax.Array
        Shape (L, L): ``A_hat[i, j]``, an estimate of ``exp(q_i . k_j)``.

    Raises
    ------
    ValueError
        As :func:`attention_features`.
    """
    kwargs["stabilise"] = False
    fq, fk = attention_features(q, k, **kwargs)
    with _matmul_precision(kwargs.get("precision", "highest")):
        return fq @ fk.T


def oprf_a_eq8(q: Any, k: Any) -> float:
    """``A*`` of FAVOR++ from the CRT eq (8) statistics of ``q, k`` (L, d) (see ``_features``).

    Parameters
    ----------
    q, k : array (L, d)
        Queries and keys, floating, of one shape.

    Returns
    -------
    float
        ``A*`` (CRT Thm 3.3, eq (22)) at ``u`` = the eq (8) average of ``|q_i + k_j|^2``;
        ``<= 0`` (0 at ``u = 0``).

    Raises
    ------
    ValueError
        If ``q``, ``k`` are not floating arrays of one shape.

    References
    ----------
    Chefs' Random Tables (CRT), Thm 3.3, eq (8) and eq (22).
    """
    q, k, _ = _check_qkv(q, k, q)
    return float(F.oprf_a_eq8(q, k))


def whitening_matrix(q: Any, k: Any, *, ridge: float = 0.0) -> np.ndarray:
    """DARKFormer's whitening ``M = Lambda^{-1/2}`` (``Sigma = Lambda^{-1}``) from pooled q, k.

    ``Lambda`` is the sample covariance of the rows of ``q`` and ``k`` pooled (DARKFormer
    sec 4.1, Prop C.1), plus ``ridge I``; symmetric inverse square root by eigendecomposition.

    Parameters
    ----------
    q, k : array_like
        Shape (..., d): the rows pooled are ``q.reshape(-1, d)`` and ``k.reshape(-1, d)``.
    ridge : float, default 0.0
        Added to the diagonal of the covariance, >= 0.

    Returns
    -------
    numpy.ndarray
        ``M = Lambda^{-1/2}``, (d, d) symmetric, float64.

    Raises
    ------
    ValueError
        If ``Lambda + ridge I`` is not positive definite.

    References
    ----------
    DARKFormer (Farzam et al.), sec 4.1 and Proposition C.1.

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0], [-1.0, 0.0]]); k = np.array([[0.0, 1.0], [0.0, -1.0]])
    >>> whitening_matrix(q, k) @ whitening_matrix(q, k)  # Lambda = (2/3) I
    array([[1.5, 0. ],
           [0. , 1.5]])
    """
    x = np.concatenate([np.asarray(q, float).reshape(-1, np.shape(q)[-1]),
                        np.asarray(k, float).reshape(-1, np.shape(k)[-1])])
    lam = np.cov(x, rowvar=False) + ridge * np.eye(x.shape[1])
    ev, u = np.linalg.eigh(np.atleast_2d(lam))
    if not np.all(ev > 0):
        raise ValueError("the covariance of q, k must be positive definite (Lambda > 0); add ridge > 0")
    return (u / np.sqrt(ev)) @ u.T

"""DARKFormer (seed 001): the estimators -- Mahalanobis positive random features, the
importance-weighted estimator, a numerical optimisation of the proposal and a nested Monte
Carlo of its variance.

These are NumPy reference implementations, checked against the exact results of
:mod:`rfcheck.closed_forms.darkformer` (which holds closed forms only): the variance of the
importance-weighted estimator is :func:`rfcheck.closed_forms.darkformer.log_expected_variance`,
and :func:`nested_mc_variance` simulates it.

References
----------
DARKFormer: data-aware positive random features and importance sampling, eq (2), Lemma 3.1,
Theorem 3.2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rfcheck.closed_forms.darkformer import check_lambda, check_spd, log_expected_variance, variance_finite

__all__ = [
    "importance_weighted_estimate",
    "log_gaussian_density",
    "mahalanobis_prf",
    "mahalanobis_prf_estimate",
    "nested_mc_variance",
    "optimise_sigma",
]


def log_gaussian_density(omega: np.ndarray, sigma: Any) -> np.ndarray:
    """``log N(omega; 0, Sigma)`` for rows of ``omega`` (float64, Cholesky, no overflow).

    Parameters
    ----------
    omega : array_like
        Shape (n, d) (or (d,)): the points.
    sigma : array_like
        The covariance ``Sigma``, (d, d) symmetric positive definite.

    Returns
    -------
    numpy.ndarray
        Shape (n,): the log densities.

    Raises
    ------
    ValueError
        If ``sigma`` is not symmetric positive definite (:func:`check_spd`).

    Examples
    --------
    >>> import math
    >>> bool(abs(log_gaussian_density([0.0], 1.0)[0] + 0.5 * math.log(2 * math.pi)) < 1e-15)
    True
    """
    s = check_spd(sigma)
    omega = np.atleast_2d(np.asarray(omega, dtype=float))
    c = np.linalg.cholesky(s)
    z = np.linalg.solve(c, omega.T)
    d = s.shape[0]
    return -0.5 * np.sum(z * z, axis=0) - np.sum(np.log(np.diag(c))) - 0.5 * d * math.log(2 * math.pi)


def mahalanobis_prf(x: np.ndarray, omega: np.ndarray, m_mat: np.ndarray, *, normalise: bool = True) -> np.ndarray:
    """DARKFormer sec 4.1 feature map ``phi_Sigma(x, omega) = h(Mx)/sqrt(m) [exp(omega_j^T x)]_j``,
    ``h(x~) = exp(-|x~|^2/2)``, ``Sigma = M^T M`` (``M`` is ``r x d``, ``r <= d``).

    Parameters
    ----------
    x : array_like
        Shape (n, d) (or (d,)): the inputs.
    omega : array_like
        Shape (m, d): the projections (draw them from ``N(0, Sigma)``).
    m_mat : array_like
        ``M``, shape (r, d) with ``r <= d``.
    normalise : bool, default True
        Include the ``1/sqrt(m)``; ``False`` drops it (the sec 4.2 form used in eq 4).

    Returns
    -------
    numpy.ndarray
        Shape (n, m): ``phi_Sigma(x_i, omega_j)``.

    Raises
    ------
    ValueError
        If the shapes do not match (``M`` not ``r x d`` with ``r <= d``, ``omega`` not ``m x d``),
        or an input is not finite.

    References
    ----------
    DARKFormer (Farzam et al.), sec 4.1, eq (3).

    Examples
    --------
    >>> import numpy as np
    >>> mahalanobis_prf(np.zeros((1, 2)), np.ones((4, 2)), np.eye(2))
    array([[0.5, 0.5, 0.5, 0.5]])
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    omega = np.atleast_2d(np.asarray(omega, dtype=float))
    m_mat = np.atleast_2d(np.asarray(m_mat, dtype=float))
    if m_mat.shape[1] != x.shape[1] or omega.shape[1] != x.shape[1]:
        raise ValueError("M must be r x d and omega m x d for inputs x in R^d")
    if m_mat.shape[0] > m_mat.shape[1]:
        raise ValueError(f"M must have r <= d rows; got {m_mat.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(omega)) and np.all(np.isfinite(m_mat))):
        raise ValueError("x, omega and M must be finite (no NaN/inf)")
    xt = x @ m_mat.T
    logf = x @ omega.T - 0.5 * np.sum(xt * xt, axis=1, keepdims=True)
    f = np.exp(logf)
    return f / math.sqrt(omega.shape[0]) if normalise else f


def mahalanobis_prf_estimate(q: np.ndarray, k: np.ndarray, omega: np.ndarray, m_mat: np.ndarray) -> np.ndarray:
    """``phi_Sigma(q)^T phi_Sigma(k)``: unbiased for ``exp(q^T Sigma k)`` when the rows of
    ``omega`` are iid ``N(0, Sigma)`` (eq 3).  Rows of ``q``, ``k`` paired; returns ``(n,)``.

    Parameters
    ----------
    q, k : array_like
        Shape (n, d): paired queries and keys.
    omega : array_like
        Shape (m, d): the projections, iid ``N(0, Sigma)``.
    m_mat : array_like
        ``M``, shape (r, d), ``Sigma = M^T M``.

    Returns
    -------
    numpy.ndarray
        Shape (n,): the estimates.

    Raises
    ------
    ValueError
        As :func:`mahalanobis_prf`.

    References
    ----------
    DARKFormer (Farzam et al.), sec 4.1, eq (3).

    Examples
    --------
    >>> import numpy as np
    >>> mahalanobis_prf_estimate(np.zeros((1, 2)), np.zeros((1, 2)), np.ones((4, 2)), np.eye(2))
    array([1.])
    """
    fq = mahalanobis_prf(q, omega, m_mat)
    fk = mahalanobis_prf(k, omega, m_mat)
    return np.sum(fq * fk, axis=1)


def importance_weighted_estimate(q: np.ndarray, k: np.ndarray, omega: np.ndarray, log_w: np.ndarray,
                                 sigma: Any = None) -> np.ndarray:
    """Weighted PRF estimator, eq (2)/(4): ``1/m sum_j w(omega_j) phi(q, omega_j) phi(k, omega_j)``
    with ``phi(x, omega) = exp(omega^T x - x^T Sigma x / 2)`` (``Sigma = I`` for eq 2).

    ``log_w``: ``log w(omega_j)``, shape ``(m,)`` -- for eq (2) ``log p_I - log psi``; for
    eq (4) with ``w_Sigma = p_Sigma/p_I`` and ``omega ~ p_I``.  Computed in log space per
    term.  ``q``, ``k``: ``(n, d)`` paired rows; returns ``(n,)``.

    Parameters
    ----------
    q, k : array_like
        Shape (n, d): paired queries and keys.
    omega : array_like
        Shape (m, d): the projections.
    log_w : array_like
        Shape (m,): the log importance weights ``log w(omega_j)``.
    sigma : array_like, optional
        ``Sigma`` of the feature map, (d, d) SPD; default the identity (eq 2).

    Returns
    -------
    numpy.ndarray
        Shape (n,): the estimates.

    Raises
    ------
    ValueError
        If ``log_w`` does not have one entry per row of ``omega``, or ``sigma`` is not SPD.

    References
    ----------
    DARKFormer (Farzam et al.), eq (2) and eq (4).

    Examples
    --------
    >>> import numpy as np
    >>> importance_weighted_estimate(np.zeros((1, 2)), np.zeros((1, 2)), np.ones((3, 2)), np.zeros(3))
    array([1.])
    """
    q = np.atleast_2d(np.asarray(q, dtype=float))
    k = np.atleast_2d(np.asarray(k, dtype=float))
    omega = np.atleast_2d(np.asarray(omega, dtype=float))
    s = np.eye(q.shape[1]) if sigma is None else check_spd(sigma)
    log_w = np.asarray(log_w, dtype=float).reshape(1, -1)
    if log_w.shape[1] != omega.shape[0]:
        raise ValueError("log_w needs one entry per omega row")
    qq = 0.5 * np.einsum("ni,ij,nj->n", q, s, q)[:, None]
    kk = 0.5 * np.einsum("ni,ij,nj->n", k, s, k)[:, None]
    logt = log_w + (q + k) @ omega.T - qq - kk
    return np.mean(np.exp(logt), axis=1)


def _chol_from_params(theta: np.ndarray, d: int) -> np.ndarray:
    low = np.zeros((d, d))
    idx = np.tril_indices(d)
    low[idx] = theta
    low[np.diag_indices(d)] = np.exp(np.diag(low))
    return low


def optimise_sigma(lam: Any, *, seed: int = 0, maxiter: int = 2_000) -> tuple[np.ndarray, float]:
    """Minimise ``log V(N(0, Sigma))`` over SPD ``Sigma = L L^T`` (``L`` lower triangular with a
    log-parametrised diagonal) numerically; independent of Thm 3.2's formula.

    The start is ``c I`` with ``c`` doubled from 1 until ``V`` is finite, plus a small random
    perturbation (``seed``); Nelder-Mead then BFGS polish.  Returns ``(Sigma_opt, log V_opt)``.
    ``ValueError`` if no finite start exists (``lambda_max >= 1/2``).

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD with every eigenvalue ``< 1/2``.
    seed : int, default 0
        Seed of the start's perturbation.
    maxiter : int, default 2000
        Iteration cap of each optimiser stage (BFGS, Nelder-Mead, BFGS).

    Returns
    -------
    sigma_opt : numpy.ndarray
        The minimising ``Sigma``, (d, d).
    log_v_opt : float
        ``log V(N(0, sigma_opt))``.

    Raises
    ------
    ValueError
        If an eigenvalue of ``Lambda`` is ``>= 1/2``, or ``lam`` is not PSD.

    References
    ----------
    DARKFormer (Farzam et al.), Theorem 3.2 (checked independently by this optimisation).
    """
    from scipy.optimize import minimize

    lam_m = check_lambda(lam)
    if np.linalg.eigvalsh(lam_m)[-1] >= 0.5:
        raise ValueError("no Sigma gives finite V when an eigenvalue of Lambda is >= 1/2")
    d = lam_m.shape[0]
    c = 1.0
    while not variance_finite(lam_m, c * np.eye(d)):
        c *= 2.0
    rng = np.random.default_rng(seed)
    low0 = np.linalg.cholesky(2 * c * np.eye(d))
    theta0 = low0[np.tril_indices(d)].copy()
    diag_pos = [i for i, (r, cc) in enumerate(zip(*np.tril_indices(d), strict=True)) if r == cc]
    theta0[diag_pos] = np.log(theta0[diag_pos])
    theta0 += 0.05 * rng.standard_normal(theta0.size)

    def obj(theta: np.ndarray) -> float:
        low = _chol_from_params(theta, d)
        s = low @ low.T
        try:
            v = log_expected_variance(lam_m, s)
        except (ValueError, np.linalg.LinAlgError):
            return 1e6
        return float(v) if math.isfinite(v) else 1e6

    r = minimize(obj, theta0, method="BFGS", options={"gtol": 1e-10, "maxiter": maxiter})
    r2 = minimize(obj, r.x, method="Nelder-Mead",
                  options={"maxiter": maxiter, "maxfev": maxiter, "xatol": 1e-10, "fatol": 1e-15})
    r3 = minimize(obj, r2.x, method="BFGS", options={"gtol": 1e-12, "maxiter": maxiter})
    best = min((r, r2, r3), key=lambda res: res.fun)
    low = _chol_from_params(best.x, d)
    return low @ low.T, float(best.fun)


def nested_mc_variance(lam: Any, sigma: Any, *, n_outer: int, n_inner: int, seed: int) -> tuple[np.ndarray, float]:
    """Nested Monte Carlo of ``V(N(0, Sigma))`` with ``m = 1``: ``n_outer`` fresh pairs
    ``q, k ~ N(0, Lambda)``; for each, ``n_inner`` fresh ``omega ~ N(0, Sigma)`` and the
    unbiased sample variance of the importance-weighted one-feature estimator (eq 2).

    Returns ``(per-pair unbiased variance estimates, exact V)``; the mean of the first is
    unbiased for ``V`` (estimate its SE with :func:`rfcheck.stats.estimate_mean`, whose tail
    diagnostic flags heavy tails).  The second entry is ``+inf`` outside the finite domain.

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD.
    sigma : array_like
        The proposal covariance ``Sigma``, (d, d) SPD.
    n_outer : int
        Pairs ``(q, k)``, >= 2.
    n_inner : int
        Features ``omega`` per pair, >= 2.
    seed : int
        Seed of the NumPy generator.

    Returns
    -------
    per_pair : numpy.ndarray
        Shape (n_outer,): unbiased estimates of ``Var_omega kappa_hat(q, k)``.
    exact : float
        ``V`` from :func:`log_expected_variance` (``+inf`` outside the finite domain; ``0.0``
        where ``V = 0``, i.e. ``Lambda = 0`` and ``Sigma = I``).

    Raises
    ------
    ValueError
        If ``n_inner`` or ``n_outer`` is below 2, ``lam`` is not PSD or ``sigma`` not SPD.

    References
    ----------
    DARKFormer (Farzam et al.), eq (2) and eq (5)-(6).

    Examples
    --------
    >>> per_pair, exact = nested_mc_variance(0.05, 1.0, n_outer=4, n_inner=8, seed=0)
    >>> per_pair.shape, round(exact, 6)
    ((4,), 0.134568)
    """
    if n_inner < 2 or n_outer < 2:
        raise ValueError("n_inner and n_outer must be >= 2")
    lam_m, s = check_lambda(lam), check_spd(sigma)
    d = lam_m.shape[0]
    rng = np.random.default_rng(seed)
    ev, u = np.linalg.eigh(lam_m)
    root = u * np.sqrt(np.maximum(ev, 0))
    cs = np.linalg.cholesky(s)
    out = np.empty(n_outer)
    chunk = max(1, 200_000 // n_inner)
    for lo in range(0, n_outer, chunk):
        n = min(chunk, n_outer - lo)
        q = rng.standard_normal((n, d)) @ root.T
        k = rng.standard_normal((n, d)) @ root.T
        om = rng.standard_normal((n, n_inner, d)) @ cs.T
        flat = om.reshape(-1, d)
        log_w = (-0.5 * np.sum(flat * flat, axis=1) - 0.5 * d * math.log(2 * math.pi)) - log_gaussian_density(flat, s)
        log_t = (log_w.reshape(n, n_inner) + np.einsum("nmd,nd->nm", om, q + k)
                 - 0.5 * np.sum(q * q, axis=1)[:, None] - 0.5 * np.sum(k * k, axis=1)[:, None])
        out[lo:lo + n] = np.var(np.exp(log_t), axis=1, ddof=1)
    lv = log_expected_variance(lam_m, s)
    return out, (math.exp(lv) if math.isfinite(lv) else 0.0 if lv < 0 else lv)

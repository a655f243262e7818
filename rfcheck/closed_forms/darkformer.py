"""DARKFormer (seed 001): Mahalanobis positive random features and importance sampling.

Exact results for the importance-weighted positive-random-feature (PRF) estimator of
the softmax kernel when queries and keys are Gaussian, ``q, k ~ N(0, Lambda)`` iid:

* ``phi_Sigma`` (sec 4.1, eq 3) and the weighted estimators of eq (2) and eq (4);
* ``B_x(omega) = E_x exp(2 omega^T x - |x|^2)`` (Lemma 3.1, appendix A);
* ``V(psi) = E_{q,k} Var_omega kappa_hat_psi(q, k)`` for every Gaussian proposal
  ``psi = N(0, Sigma)``, in closed form, **with its exact domain of finiteness**;
* the optimal proposal covariance ``Sigma* = (I + 2 Lambda)(I - 2 Lambda)^{-1}``
  (Theorem 3.2).

Derivation (rfcheck; the paper gives only ``B_x`` up to constants).  Write
``A = 2 I - Sigma^{-1}``, ``s = q + k``.  For fixed ``(q, k)`` the one-sample second
moment is the Gaussian integral

    E_psi[(p_I/psi)^2 Z^2] = det(Sigma)^{1/2} det(A)^{-1/2} exp(2 s^T A^{-1} s - |q|^2 - |k|^2)

(finite iff ``A > 0``, i.e. ``Sigma > I/2``), so that, with ``kappa = exp(q^T k)``,

    m Var_omega = kappa^2 (c e^{s^T (2A^{-1} - I) s} - 1),   c = det(Sigma)^{1/2} det(A)^{-1/2} >= 1.

Averaging over ``q, k`` (the Fubini order of Lemma 3.1, ``E_{q,k} Z^2 = B_q B_k``):

    m V(N(0, Sigma)) = det(Sigma)^{1/2} det(2 Sigma*^{-1} - Sigma^{-1})^{-1/2} / det(I + 2 Lambda)
                       - det(I - 4 Lambda^2)^{-1/2}.

**Finiteness.**  ``V < inf`` iff ``P := 2 Sigma*^{-1} - Sigma^{-1}`` is positive definite,
i.e. iff every eigenvalue of ``Lambda`` is ``< 1/2`` *and* ``Sigma > Sigma*/2`` (Loewner
order).  For co-diagonal ``Sigma`` (eigenvalues ``s_i`` in the eigenbasis of
``Lambda``): ``s_i > (1 + 2 lambda_i) / (2 (1 - 2 lambda_i))``.  In particular the
isotropic PRF (``Sigma = I``) has finite expected variance iff ``lambda_max < 1/6``, and
*no* proposal (Gaussian or not) has finite expected variance once ``lambda_max >= 1/2``
(``E kappa^2 = E exp(2 q^T k)`` diverges and ``Var_omega >= kappa^2 (e^{t |s|^2} - 1)``
with ``t > 0``).  Functions below return ``+inf`` (never NaN, never an overflow) there.

References
----------
Farzam, Mobahi, Miller, Sernau, *Data-aware random feature kernel for transformers*
(DARKFormer): Lemma 2.1, eq (2)-(6), Lemma 3.1, Theorem 3.2 and its proof (appendix A),
eq (3)/(8) (appendix B), Proposition 4.1, Proposition C.1.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from rfcheck import validate
from rfcheck.backends import _MAX_DPS, COND_MAX, MP, formula

__all__ = [
    "b_x",
    "check_lambda",
    "check_spd",
    "coord_log_second_moment",
    "expected_variance",
    "isotropic_finite_threshold",
    "log_b_x",
    "log_expected_kappa_sq",
    "log_expected_second_moment",
    "log_expected_variance",
    "optimal_variance",
    "sigma_star",
    "sigma_star_eig",
    "variance_finite",
]

#: lambda_max of Lambda below which the isotropic PRF (Sigma = I) has finite V
ISOTROPIC_LIMIT = 1.0 / 6.0


def isotropic_finite_threshold() -> float:
    """``1/6``: ``V(p_I) < inf`` iff ``lambda_max(Lambda) < 1/6`` (see module docstring).

    Returns
    -------
    float
        :data:`ISOTROPIC_LIMIT`, ``1/6``.

    References
    ----------
    DARKFormer (Farzam et al.), Theorem 3.2 and eq (6); the threshold follows from the
    finiteness condition ``s_i > (1 + 2 lambda_i) / (2 (1 - 2 lambda_i))`` at ``s_i = 1``.

    Examples
    --------
    >>> isotropic_finite_threshold() == 1 / 6
    True
    """
    return ISOTROPIC_LIMIT


# ------------------------------------------------------------------- validation


def _as_matrix(a: Any, name: str) -> np.ndarray:
    m = np.asarray(a, dtype=float)
    if m.ndim == 0:
        m = m.reshape(1, 1)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"{name} must be a square matrix; got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} must be finite (no NaN/inf)")
    if not np.allclose(m, m.T, rtol=1e-12, atol=1e-14 * max(1.0, float(np.max(np.abs(m))))):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * (m + m.T)


def check_spd(sigma: Any, name: str = "Sigma") -> np.ndarray:
    """``sigma`` as a symmetric positive-definite float64 matrix, else ``ValueError``.

    Parameters
    ----------
    sigma : array_like
        A square matrix (a scalar is a 1 x 1 matrix), finite, symmetric to a relative 1e-12.
    name : str, default "Sigma"
        The argument's name, used in the error message.

    Returns
    -------
    numpy.ndarray
        ``(sigma + sigma.T) / 2``, shape (d, d).

    Raises
    ------
    ValueError
        If ``sigma`` is not square, not finite, not symmetric, or not positive definite.

    Examples
    --------
    >>> check_spd(2.0)
    array([[2.]])
    """
    s = _as_matrix(sigma, name)
    ev = np.linalg.eigvalsh(s)
    if not ev[0] > 0:
        raise ValueError(f"{name} must be positive definite; smallest eigenvalue {ev[0]:.3g}")
    return s


def check_lambda(lam: Any) -> np.ndarray:
    """``Lambda`` (covariance of q and k) as a symmetric PSD matrix, else ``ValueError``.

    Parameters
    ----------
    lam : array_like
        The covariance ``Lambda`` of the queries and keys: square (a scalar is 1 x 1), finite,
        symmetric, positive semidefinite (eigenvalues ``>= -1e-14 max(1, lambda_max)``).

    Returns
    -------
    numpy.ndarray
        ``(lam + lam.T) / 2``, shape (d, d).

    Raises
    ------
    ValueError
        If ``lam`` is not square, not finite, not symmetric, or has a negative eigenvalue.

    Examples
    --------
    >>> check_lambda([[0.1, 0.0], [0.0, 0.0]]).shape
    (2, 2)
    """
    s = _as_matrix(lam, "Lambda")
    ev = np.linalg.eigvalsh(s)
    if ev[0] < -1e-14 * max(1.0, ev[-1]):
        raise ValueError(f"Lambda must be positive semidefinite; smallest eigenvalue {ev[0]:.3g}")
    return s


def _check_lam_eig(lam: Any, *rest: Any) -> None:
    a = validate.real_array(lam, "eigenvalues of Lambda")
    if not np.all(np.isfinite(a)):
        raise ValueError("eigenvalues of Lambda must be finite (no NaN)")
    if np.any(a < 0):
        raise ValueError("eigenvalues of Lambda must be >= 0 (Lambda PSD)")


def _check_star(lam: Any) -> None:
    _check_lam_eig(lam)
    if np.any(np.asarray(lam, dtype=float) >= 0.5):
        raise ValueError("Sigma* = (I + 2 Lambda)(I - 2 Lambda)^{-1} is a covariance only if every "
                         "eigenvalue of Lambda is < 1/2 (Theorem 3.2)")


def _check_coord(lam: Any, s: Any) -> None:
    _check_lam_eig(lam)
    a = validate.real_array(s, "eigenvalues of Sigma")
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError("eigenvalues of Sigma must be finite and > 0 (Sigma positive definite)")


# ------------------------------------------------------------ scalar (eigen) faces


@formula(check=_check_star)
def sigma_star_eig(ctx: Any, lam: Any) -> Any:
    """Eigenvalue ``(1 + 2 lambda)/(1 - 2 lambda)`` of ``Sigma*`` (DARKFormer Thm 3.2, App. A:
    ``1/(1 - 2 beta)``, ``beta = 2 lambda/(2 lambda + 1)``); needs ``0 <= lambda < 1/2``.

    A :func:`rfcheck.backends.formula`: it also takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    lam : float or array_like
        An eigenvalue of ``Lambda``, ``0 <= lam < 1/2``.

    Returns
    -------
    float or numpy.ndarray
        The corresponding eigenvalue of ``Sigma*`` (same shape; mpmath numbers on the mpmath face).

    Raises
    ------
    ValueError
        If ``lam`` is NaN, negative, or ``>= 1/2``.

    References
    ----------
    DARKFormer (Farzam et al.), Theorem 3.2 and its proof (appendix A).

    Examples
    --------
    >>> float(sigma_star_eig(0.25))
    3.0
    """
    return (1 + 2 * lam) / (1 - 2 * lam)


def _coord_conditioning(ctx: Any, lam: Any, s: Any) -> Any:
    a, b = 2 * (1 - 2 * lam) * s, 1 + 2 * lam
    return (ctx.abs(a) + b) / ctx.abs(a - b)


@formula(check=_check_coord, conditioning=_coord_conditioning)
def coord_log_second_moment(ctx: Any, lam: Any, s: Any) -> Any:
    """Log of one coordinate's factor of ``E_{q,k} E_psi[(p_I/psi)^2 Z^2]`` for co-diagonal
    ``Sigma`` (eigenvalue ``s`` on the eigenvector of ``Lambda`` with eigenvalue ``lam``):

        1/2 log s - 1/2 log(2 (1 - 2 lam)/(1 + 2 lam) - 1/s) - log(1 + 2 lam).

    Finite iff ``lam < 1/2`` and ``s > (1 + 2 lam)/(2 (1 - 2 lam))``; the float64 face
    returns ``+inf`` outside (the mpmath face too).  DARKFormer eq (6), Thm 3.2.
    A :func:`rfcheck.backends.formula`: it also takes ``backend`` and ``dps``.

    Parameters
    ----------
    lam : float or array_like
        Eigenvalue of ``Lambda``, >= 0.
    s : float or array_like
        Eigenvalue of ``Sigma`` on the same eigenvector, > 0.

    Returns
    -------
    float or numpy.ndarray
        The log factor (broadcast shape), ``+inf`` outside the finite domain.

    Raises
    ------
    ValueError
        If ``lam`` is NaN or negative, or ``s`` is not finite and > 0.

    References
    ----------
    DARKFormer (Farzam et al.), eq (6) and Theorem 3.2.

    Examples
    --------
    >>> float(coord_log_second_moment(0.0, 1.0))  # Lambda = 0, Sigma = I: E Z^2 = 1
    0.0
    """
    p = (2 * (1 - 2 * lam) * s - (1 + 2 * lam)) / ((1 + 2 * lam) * s)
    val = ctx.log(s) / 2 - ctx.log(p) / 2 - ctx.log(1 + 2 * lam)
    if ctx.name == "sympy":
        return val
    return ctx.where(p > 0, val, math.inf)


# ----------------------------------------------------------- feature maps (sec 4)


def log_b_x(omega: np.ndarray, lam: Any) -> np.ndarray:
    """``log B_x(omega)``, ``B_x(omega) = E_{x ~ N(0, Lambda)} exp(2 omega^T x - |x|^2)``
    (Lemma 3.1; App. A):  ``-1/2 log det(I + 2 Lambda) + omega^T 2 Lambda (I + 2 Lambda)^{-1} omega``.
    Finite for every PSD ``Lambda``.  ``omega``: ``(n, d)``; returns ``(n,)``.

    Parameters
    ----------
    omega : array_like
        Shape (n, d) (or (d,)).
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD.

    Returns
    -------
    numpy.ndarray
        Shape (n,): ``log B_x(omega_i)``.

    Raises
    ------
    ValueError
        If ``lam`` is not symmetric PSD (:func:`check_lambda`).

    References
    ----------
    DARKFormer (Farzam et al.), Lemma 3.1 and appendix A.

    Examples
    --------
    >>> log_b_x([1.0, 2.0], [[0.0, 0.0], [0.0, 0.0]])
    array([0.])
    """
    lam = check_lambda(lam)
    d = lam.shape[0]
    omega = np.atleast_2d(np.asarray(omega, dtype=float))
    t = 2 * np.linalg.solve(np.eye(d) + 2 * lam, lam)
    t = 0.5 * (t + t.T)
    _, ld = np.linalg.slogdet(np.eye(d) + 2 * lam)
    return -0.5 * ld + np.einsum("ni,ij,nj->n", omega, t, omega)


def b_x(omega: np.ndarray, lam: Any) -> np.ndarray:
    """``B_x(omega)`` (see :func:`log_b_x`).

    Parameters
    ----------
    omega : array_like
        Shape (n, d) (or (d,)).
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD.

    Returns
    -------
    numpy.ndarray
        Shape (n,): ``B_x(omega_i) = exp(log_b_x(omega_i))`` (``inf`` where it overflows).

    Raises
    ------
    ValueError
        If ``lam`` is not symmetric PSD.

    References
    ----------
    DARKFormer (Farzam et al.), Lemma 3.1 and appendix A.

    Examples
    --------
    >>> b_x([0.0], 0.0)
    array([1.])
    """
    return np.exp(log_b_x(omega, lam))


# --------------------------------------------------------------- matrix closed forms


def sigma_star(lam: Any, *, backend: str = "float64", dps: int = 50) -> Any:
    """Optimal proposal covariance ``Sigma* = (I + 2 Lambda)(I - 2 Lambda)^{-1}`` (Thm 3.2).

    ``ValueError`` unless ``Lambda`` is PSD with every eigenvalue ``< 1/2`` (otherwise the
    expression is not a covariance and ``psi* propto p_I B`` is not normalisable).  Built
    from the eigen-decomposition, so it is symmetric to rounding.  ``backend="mpmath"``
    returns an ``mpmath.matrix`` at ``dps`` digits.  The float64 face recomputes in mpmath
    (verified at two precisions) where ``lambda_max`` is so close to 1/2 that the rounding of
    the eigenvalues would cost more than ``COND_MAX`` (1e3) eps: ``2 |Lambda| / (1 - 2 lambda_max)``.

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD with every eigenvalue ``< 1/2``.
    backend : {"float64", "mpmath"}, default "float64"
        The arithmetic.
    dps : int, default 50
        Decimal digits of the mpmath face.

    Returns
    -------
    numpy.ndarray or mpmath.matrix
        ``Sigma*``, (d, d).

    Raises
    ------
    ValueError
        If ``Lambda`` is not symmetric PSD, an eigenvalue is ``>= 1/2``, ``backend`` is unknown,
        or no value good to 17 digits is found near ``lambda_max = 1/2``.

    References
    ----------
    DARKFormer (Farzam et al.), Theorem 3.2 and its proof (appendix A).

    Examples
    --------
    >>> sigma_star([[0.25, 0.0], [0.0, 0.0]])
    array([[3., 0.],
           [0., 1.]])
    """
    lam_m = check_lambda(lam)
    if backend == "mpmath":
        with mpmath.workdps(dps):
            ev, u = mpmath.eigsy(mpmath.matrix(lam_m.tolist()))
            _check_star(np.maximum([float(ev[i]) for i in range(len(ev))], 0.0))
            vals = [sigma_star_eig.impl(MP, ev[i]) for i in range(len(ev))]
            return u * mpmath.diag(vals) * u.T
    if backend != "float64":
        raise ValueError(f"backend must be 'float64' or 'mpmath'; got {backend!r}")
    ev, u = np.linalg.eigh(lam_m)
    ev = np.maximum(ev, 0.0)
    g = sigma_star_eig(ev)
    # an eigenvalue error ~eps |Lambda| moves 1/(1 - 2 lambda) by ~2 eps |Lambda| / (1 - 2 lambda)
    # relative: near lambda_max = 1/2 recompute in mpmath with enough digits (two precisions agree)
    cond = 2 * max(float(np.max(np.abs(ev))), 1e-300) / (1 - 2 * float(ev[-1])) + 1
    if cond > COND_MAX:
        return _sigma_star_verified(lam_m, 20 + int(math.log10(cond)))
    return (u * g) @ u.T


def _sigma_star_verified(lam_m: np.ndarray, work: int) -> np.ndarray:
    """:func:`sigma_star` in mpmath, the working precision raised until the matrices at two
    precisions 20 digits apart agree to 17 digits (relative to their largest entry)."""
    while True:
        lo = sigma_star(lam_m, backend="mpmath", dps=work)
        hi = sigma_star(lam_m, backend="mpmath", dps=work + 20)
        with mpmath.workdps(work + 20):
            scale = max(abs(hi[i, j]) for i in range(hi.rows) for j in range(hi.cols))
            diff = max(abs(hi[i, j] - lo[i, j]) for i in range(hi.rows) for j in range(hi.cols))
            if diff <= mpmath.mpf(10) ** -17 * scale:
                return np.array([[float(hi[i, j]) for j in range(hi.cols)] for i in range(hi.rows)])
        if work >= _MAX_DPS:
            raise ValueError(f"sigma_star: no value good to 17 digits at {_MAX_DPS} working digits")
        work = min(2 * work, _MAX_DPS)


def _edge_conditioning(ev: np.ndarray) -> float:
    """Amplification of an eigenvalue error ``~eps |Lambda|`` in ``1 - 2 lambda_max``:
    ``2 |Lambda| / |1 - 2 lambda_max| + 1`` (``inf`` at ``lambda_max = 1/2`` in float64)."""
    gap = abs(1 - 2 * float(ev[-1]))
    return 2 * max(float(np.max(np.abs(ev))), 1e-300) / gap + 1 if gap > 0 else math.inf


def _mp_lambda_verified(lam_m: np.ndarray, cond: float, fn: Any, name: str) -> Any:
    """``fn(eigenvalues of Lambda)`` in mpmath (``fn`` returns an mpf, ``+inf``, or ``None`` for
    ``lambda_max >= 1/2``), the working precision raised until two precisions 20 digits apart
    agree to 17 digits; used where float64 eigenvalues cannot resolve ``1 - 2 lambda_max``."""
    work = 30 + (int(math.log10(cond)) if math.isfinite(cond) else 20)
    lm = mpmath.matrix(lam_m.tolist())
    while True:
        vals = []
        for dps in (work, work + 20):
            with mpmath.workdps(dps):
                ev = mpmath.eigsy(lm, eigvals_only=True)
                vals.append(fn([ev[i] for i in range(lm.rows)]))
        lo, hi = vals
        if lo is None and hi is None:
            return None
        if lo is not None and hi is not None:
            with mpmath.workdps(work + 20):
                if lo == hi or abs(hi - lo) <= mpmath.mpf(10) ** -17 * abs(hi):
                    return hi
        if work >= _MAX_DPS:
            raise ValueError(f"{name}: lambda_max of Lambda is 1/2 to {_MAX_DPS} digits; no value good to 17 digits")
        work = min(2 * work, _MAX_DPS)


def log_expected_kappa_sq(lam: Any) -> float:
    """``log E_{q,k} exp(2 q^T k) = -1/2 log det(I - 4 Lambda^2)``; ``+inf`` when
    ``lambda_max >= 1/2`` (the expectation diverges).  Where ``lambda_max`` is so close to 1/2
    that float64 eigenvalues lose ``1 - 2 lambda_max`` (conditioning ``2 |Lambda| /
    (1 - 2 lambda_max)`` above ``COND_MAX``), the eigenvalues are computed in mpmath (verified
    at two precisions), which also decides finiteness.

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD.

    Returns
    -------
    float
        ``log E exp(2 q^T k)``, ``+inf`` when ``lambda_max >= 1/2``.

    Raises
    ------
    ValueError
        If ``lam`` is not symmetric PSD, or ``lambda_max`` equals 1/2 to the largest working
        precision.

    References
    ----------
    DARKFormer (Farzam et al.), eq (6) (the constant ``E kappa^2``) and appendix A.

    Examples
    --------
    >>> round(log_expected_kappa_sq(0.25), 12)  # -1/2 log(1 - 4/16)
    0.143841036226
    >>> log_expected_kappa_sq(0.5)
    inf
    """
    lam = check_lambda(lam)
    ev = np.linalg.eigvalsh(lam)
    cond = _edge_conditioning(ev)
    if cond > COND_MAX:
        def mp_value(evs: list[Any]) -> Any:
            if max(evs) >= mpmath.mpf(1) / 2:
                return mpmath.inf
            return -mpmath.fsum(mpmath.log1p(-4 * e * e) for e in evs) / 2

        return float(_mp_lambda_verified(lam, cond, mp_value, "log_expected_kappa_sq"))
    if ev[-1] >= 0.5:
        return math.inf
    return float(-0.5 * np.sum(np.log1p(-4 * ev * ev)))


def _second_moment_parts(lam: np.ndarray, sigma: np.ndarray) -> tuple[float, np.ndarray]:
    d = lam.shape[0]
    ilam = np.eye(d) + 2 * lam
    cstar_inv = np.linalg.solve(ilam, np.eye(d) - 2 * lam)  # Sigma*^{-1}; commutes, symmetric
    p = 2 * 0.5 * (cstar_inv + cstar_inv.T) - np.linalg.inv(sigma)
    return float(np.linalg.slogdet(ilam)[1]), 0.5 * (p + p.T)


def _log_det_near_identity(ev: np.ndarray, minus_identity: Any, fallback: float) -> float:
    """log det of a symmetric positive-definite ``X`` with eigenvalues ``ev``.

    Where every eigenvalue lies in [1/2, 3/2]: ``sum log1p(eig(X - I))`` with ``X - I =
    minus_identity()`` formed analytically (the log of an eigenvalue ~ 1 is good only to eps
    absolute, while V ~ 2 tr(Lambda) may be ~1e-12); elsewhere ``fallback``.
    """
    if not np.all(np.abs(ev - 1) <= 0.5):
        return fallback
    m = minus_identity()
    return float(np.sum(np.log1p(np.linalg.eigvalsh(0.5 * (m + m.T)))))


def variance_finite(lam: Any, sigma: Any) -> bool:
    """Whether ``V(N(0, Sigma)) < inf``: ``2 Sigma*^{-1} - Sigma^{-1} > 0`` (module docstring).

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD.
    sigma : array_like
        The proposal covariance ``Sigma``, (d, d) SPD.

    Returns
    -------
    bool
        Whether the expected variance is finite.

    Raises
    ------
    ValueError
        If ``lam`` is not PSD or ``sigma`` not SPD.

    References
    ----------
    DARKFormer (Farzam et al.), Theorem 3.2 (the finite domain is derived in this module's
    docstring).

    Examples
    --------
    >>> variance_finite(0.1, 1.0), variance_finite(0.2, 1.0)  # the isotropic limit is 1/6
    (True, False)
    """
    lam_m, s = check_lambda(lam), check_spd(sigma)
    _, p = _second_moment_parts(lam_m, s)
    return bool(np.linalg.eigvalsh(p)[0] > 0)


def log_expected_second_moment(lam: Any, sigma: Any, *, backend: str = "float64", dps: int = 50) -> Any:
    """``log E_{q,k} E_{omega ~ N(0,Sigma)} [(p_I/psi)^2 Z^2] = log int p_I^2 B_q B_k / psi``
    (eq 6 times m, without subtracting ``E kappa^2``):

        1/2 log det Sigma - 1/2 log det(2 Sigma*^{-1} - Sigma^{-1}) - log det(I + 2 Lambda),

    ``+inf`` where ``2 Sigma*^{-1} - Sigma^{-1}`` is not positive definite (this includes
    every ``Sigma`` when ``lambda_max(Lambda) >= 1/2``).  ``Sigma*^{-1}`` is written as
    ``(I - 2 Lambda)(I + 2 Lambda)^{-1}``, defined for every PSD ``Lambda``.  The mpmath
    face also accepts ``sigma`` as an ``mpmath.matrix`` (used as given, symmetrised).  The
    float64 face takes the log-determinant of each of ``Sigma``, ``P`` and ``I + 2 Lambda``
    whose eigenvalues all lie in [1/2, 3/2] as ``sum log1p(eig(X - I))`` with ``X - I`` formed
    analytically, so that small ``Lambda`` (``V ~ 2 tr Lambda``) keeps its digits.

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD.
    sigma : array_like or mpmath.matrix
        The proposal covariance ``Sigma``, (d, d) SPD (an ``mpmath.matrix`` on the mpmath face).
    backend : {"float64", "mpmath"}, default "float64"
        The arithmetic.
    dps : int, default 50
        Decimal digits of the mpmath face.

    Returns
    -------
    float or mpmath.mpf
        The log second moment, ``+inf`` outside the finite domain.

    Raises
    ------
    ValueError
        If ``lam`` is not PSD or ``sigma`` not SPD.

    References
    ----------
    DARKFormer (Farzam et al.), eq (6), Lemma 3.1 and Theorem 3.2.

    Examples
    --------
    >>> log_expected_second_moment(0.0, 1.0)
    0.0
    """
    if backend == "mpmath" and isinstance(sigma, mpmath.matrix):  # an exact mpmath Sigma
        lam_m, s = check_lambda(lam), None
    else:
        lam_m, s = check_lambda(lam), check_spd(sigma)
    if backend == "mpmath":
        with mpmath.workdps(dps):
            lm = mpmath.matrix(lam_m.tolist())
            sm = (sigma + sigma.T) / 2 if s is None else mpmath.matrix(s.tolist())
            d = lm.rows
            eye = mpmath.eye(d)
            ilam = eye + 2 * lm
            cinv = mpmath.inverse(ilam) * (eye - 2 * lm)
            p = 2 * (cinv + cinv.T) / 2 - mpmath.inverse(sm)
            p = (p + p.T) / 2
            ev = mpmath.eigsy(p, eigvals_only=True)
            if min(ev[i] for i in range(d)) <= 0:
                return mpmath.inf
            return (mpmath.log(mpmath.det(sm)) / 2 - sum(mpmath.log(ev[i]) for i in range(d)) / 2
                    - mpmath.log(mpmath.det(ilam)))
    ld_ilam, p = _second_moment_parts(lam_m, s)
    ev = np.linalg.eigvalsh(p)
    # P = 2 Sigma*^{-1} - Sigma^{-1} cancels near the edge of the finite domain: where
    # float64 cannot resolve its smallest eigenvalue (conditioning > COND_MAX), decide
    # finiteness and the value in mpmath with enough digits (never a silent sign error)
    scale = 2 * np.max(np.abs(np.linalg.eigvalsh(p + np.linalg.inv(s)))) + 1 / np.linalg.eigvalsh(s)[0]
    cond = scale / abs(ev[0]) if ev[0] != 0 else math.inf
    if not cond <= COND_MAX:
        extra = 40 if not math.isfinite(cond) else int(math.log10(cond)) + 10
        val = log_expected_second_moment(lam_m, s, backend="mpmath", dps=20 + extra)
        if val == mpmath.inf and math.isfinite(cond):
            return math.inf
        if val == mpmath.inf:  # exactly singular in float64 arithmetic: try harder once
            val = log_expected_second_moment(lam_m, s, backend="mpmath", dps=120)
        return math.inf if val == mpmath.inf else float(val)
    if not ev[0] > 0:
        return math.inf
    eye = np.eye(lam_m.shape[0])
    ld_s = _log_det_near_identity(np.linalg.eigvalsh(s), lambda: s - eye, np.linalg.slogdet(s)[1])
    # P - I = (I - Sigma^{-1}) - 8 (I + 2 Lambda)^{-1} Lambda, as 2 Sigma*^{-1} = 2I - 8 (I + 2 Lambda)^{-1} Lambda
    ld_p = _log_det_near_identity(
        ev, lambda: np.linalg.solve(s, s - eye) - 8 * np.linalg.solve(eye + 2 * lam_m, lam_m), np.sum(np.log(ev))
    )
    ld_ilam = _log_det_near_identity(1 + 2 * np.linalg.eigvalsh(lam_m), lambda: 2 * lam_m, ld_ilam)
    return float(0.5 * ld_s - 0.5 * ld_p - ld_ilam)


def log_expected_variance(lam: Any, sigma: Any, m: int = 1, *, backend: str = "float64", dps: int = 50) -> Any:
    """``log V(N(0, Sigma))``, ``V = E_{q,k ~ N(0, Lambda)} Var_omega kappa_hat_psi(q, k)`` with
    ``m`` iid features (eq 5-6, here with the constant ``E kappa^2`` kept):

        log(exp(L2) - exp(K2)) - log m,   L2 = :func:`log_expected_second_moment`,
        K2 = :func:`log_expected_kappa_sq`,

    evaluated as ``L2 + log(-expm1(K2 - L2))`` (no cancellation to 0, no overflow).
    ``+inf`` outside the finiteness domain (module docstring); ``-inf`` only for
    ``Lambda = 0`` with ``Sigma = I`` (zero variance).

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD.
    sigma : array_like or mpmath.matrix
        The proposal covariance ``Sigma``, (d, d) SPD.
    m : int, default 1
        Number of iid features, >= 1.
    backend : {"float64", "mpmath"}, default "float64"
        The arithmetic (the mpmath face is good to ``dps`` digits).
    dps : int, default 50
        Decimal digits of the mpmath face.

    Returns
    -------
    float or mpmath.mpf
        ``log V``; ``+inf`` outside the finite domain, ``-inf`` for ``Lambda = 0``, ``Sigma = I``.

    Raises
    ------
    ValueError
        If ``m`` is not a positive integer, ``lam`` is not PSD, ``sigma`` not SPD, or the
        mpmath face finds no value good to ``dps`` digits.

    References
    ----------
    DARKFormer (Farzam et al.), eq (5)-(6) and Theorem 3.2.

    Examples
    --------
    >>> log_expected_variance(0.0, 1.0)
    -inf
    >>> log_expected_variance(0.2, 1.0)  # lambda > 1/6: the isotropic PRF diverges
    inf
    """
    if int(m) != m or m < 1:
        raise ValueError(f"m must be a positive integer; got {m}")
    if backend == "mpmath":
        return _log_expected_variance_mp(lam, sigma, m, dps)
    l2 = log_expected_second_moment(lam, sigma, backend=backend, dps=dps)
    if l2 == math.inf:
        return math.inf
    k2 = log_expected_kappa_sq(lam)
    diff = -math.expm1(k2 - l2)
    if diff <= 0:
        return -math.inf
    return l2 + math.log(diff) - math.log(m)


def _log_expected_variance_mp(lam: Any, sigma: Any, m: int, dps: int) -> Any:
    """mpmath face of :func:`log_expected_variance`, good to ``dps`` digits.

    ``V = E kappa^2 (exp(L2 - K2) - 1)`` loses ``-log10(L2 - K2)`` digits to the difference
    (``L2 - K2 ~ 2 tr Lambda`` for small ``Lambda``, e.g. 1e-133): the working precision is
    raised until it covers that loss and two precisions 20 digits apart agree.  ``V = 0``
    (``-inf``) exactly when ``Lambda = 0`` and ``Sigma = I``, which is decided exactly.
    """
    lam_m = check_lambda(lam)
    d = lam_m.shape[0]
    if isinstance(sigma, mpmath.matrix):
        is_eye = all(sigma[i, j] == (1 if i == j else 0) for i in range(sigma.rows) for j in range(sigma.cols))
    else:
        is_eye = bool(np.array_equal(check_spd(sigma), np.eye(d)))
    if is_eye and not np.any(lam_m):
        return -mpmath.inf

    def at(work: int) -> tuple[Any, Any]:  # (log V, L2 - K2) at `work` digits
        l2 = log_expected_second_moment(lam_m, sigma, backend="mpmath", dps=work)
        with mpmath.workdps(work):
            if l2 == mpmath.inf:
                return mpmath.inf, mpmath.inf
            ev = mpmath.eigsy(mpmath.matrix(lam_m.tolist()), eigvals_only=True)
            gap = l2 + mpmath.fsum(mpmath.log1p(-4 * ev[i] ** 2) for i in range(d)) / 2
            if gap <= 0:
                return None, gap
            return l2 + mpmath.log(-mpmath.expm1(-gap)) - mpmath.log(m), gap

    work = dps + 10
    while True:
        lo, gap = at(work)
        lost = 0 if gap is None or gap <= 0 or gap >= 1 else int(-mpmath.log10(gap)) + 1
        if lo is not None and work >= dps + 10 + lost:
            hi, _ = at(work + 20)
            if lo == hi or (hi is not None and abs(hi - lo) <= mpmath.mpf(10) ** -(dps + 3) * max(1, abs(hi))):
                with mpmath.workdps(dps):
                    return +hi
        if work >= _MAX_DPS:
            raise ValueError(f"log_expected_variance: no value good to {dps} digits at {_MAX_DPS} working digits")
        work = min(_MAX_DPS, max(2 * work, dps + 20 + lost))


def expected_variance(lam: Any, sigma: Any, m: int = 1) -> float:
    """``V(N(0, Sigma))`` (float64; ``+inf`` where infinite, see :func:`log_expected_variance`;
    ``ValueError`` if the finite value overflows float64 -- use the log form).

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD.
    sigma : array_like
        The proposal covariance ``Sigma``, (d, d) SPD.
    m : int, default 1
        Number of iid features, >= 1.

    Returns
    -------
    float
        ``V = E_{q,k} Var_omega kappa_hat``, >= 0, ``+inf`` outside the finite domain.

    Raises
    ------
    ValueError
        If the finite ``V`` exceeds float64, or the arguments are invalid (as
        :func:`log_expected_variance`).

    References
    ----------
    DARKFormer (Farzam et al.), eq (5)-(6).

    Examples
    --------
    >>> expected_variance(0.0, 1.0)
    0.0
    """
    lv = log_expected_variance(lam, sigma, m)
    if lv == math.inf:
        return math.inf
    if lv > 709.0:
        raise ValueError("V exceeds float64; use log_expected_variance")
    return math.exp(lv)


def optimal_variance(lam: Any, m: int = 1) -> float:
    """``V(psi*) = (prod 1/(1 - 2 lambda_i) - prod (1 - 4 lambda_i^2)^{-1/2}) / m``: the
    Cauchy-Schwarz bound ``((int f)^2 - E kappa^2)/m`` of Lemma 3.1 (App. A), attained by
    ``Sigma*``.  ``ValueError`` when ``lambda_max >= 1/2`` (no finite-variance proposal) or
    ``m`` is not an integer >= 1.

    Parameters
    ----------
    lam : array_like
        ``Lambda``, (d, d) symmetric PSD with every eigenvalue ``< 1/2``.
    m : int, default 1
        Number of iid features, >= 1.

    Returns
    -------
    float
        ``V(psi*)`` >= 0.

    Raises
    ------
    ValueError
        If ``lambda_max >= 1/2``, ``m`` is not an integer >= 1, ``lam`` is not PSD, or the value
        exceeds float64.

    References
    ----------
    DARKFormer (Farzam et al.), Lemma 3.1 and Theorem 3.2 (appendix A).

    Examples
    --------
    >>> round(optimal_variance(0.25), 12)  # 1/(1 - 1/2) - (1 - 1/4)^(-1/2)
    0.845299461621
    """
    m = validate.positive_int(m, "m")
    lam_m = check_lambda(lam)
    ev = np.linalg.eigvalsh(lam_m)
    cond = _edge_conditioning(np.maximum(ev, 0))
    if cond > COND_MAX:  # float64 eigenvalues lose 1 - 2 lambda_max: mpmath, verified
        def mp_value(evs: list[Any]) -> Any:
            evs = [max(e, 0) for e in evs]
            if max(evs) >= mpmath.mpf(1) / 2:
                return None
            # prod 1/(1 - 2l) - prod (1 - 4l^2)^(-1/2) = p2 expm1(sum atanh(2l)) (no cancellation)
            p2 = mpmath.fprod(1 / mpmath.sqrt(1 - 4 * e * e) for e in evs)
            return p2 * mpmath.expm1(mpmath.fsum(mpmath.atanh(2 * e) for e in evs)) / m

        val = _mp_lambda_verified(lam_m, cond, mp_value, "optimal_variance")
        _check_star([0.5] if val is None else [0.0])
        if val > mpmath.mpf(np.finfo(float).max):
            raise ValueError("V(psi*) exceeds the float64 range (lambda_max too close to 1/2)")
        return float(val)
    _check_star(np.maximum(ev, 0))
    ev = np.maximum(ev, 0)
    a = -np.sum(np.log1p(-2 * ev))
    b = -0.5 * np.sum(np.log1p(-4 * ev * ev))
    return float(math.exp(a) * -math.expm1(b - a) / m)


#: names that moved to :mod:`rfcheck.estimators.darkformer` (estimators, a numerical optimisation and a
#: nested Monte Carlo are not closed forms); importable from here, with a warning, for one release
_MOVED_TO_ESTIMATORS = ("importance_weighted_estimate", "log_gaussian_density", "mahalanobis_prf",
                        "mahalanobis_prf_estimate", "nested_mc_variance", "optimise_sigma")


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_ESTIMATORS:
        import warnings

        from rfcheck.estimators import darkformer as est

        warnings.warn(f"rfcheck.closed_forms.darkformer.{name} moved to rfcheck.estimators.darkformer.{name}; "
                      "the old path goes in the next release", DeprecationWarning, stacklevel=2)
        return getattr(est, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

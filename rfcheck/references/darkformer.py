"""Reference computations for DARKFormer (``darkformer``): Gaussian expectations by quadrature.

The independent sides of the ``darkformer`` claims, none of which uses a printed formula:
the positive random-feature kernel and its ``Sigma``-weighted version as Gaussian
expectations by 1-D quadratures, the two sides of Lemma 3.1's variance comparison by 1-D
quadrature, the Cauchy-Schwarz optimum ``(int p_I sqrt(B_q B_k))^2`` of Theorem 3.2, the two
expectations of Proposition 4.1 by separate quadratures, and the anisotropic covariances
``Lambda = U diag(l) U^T`` the claims are stated on.  Their rigorous (Arb) twins, and the ball
forms of the Gaussian-integral closed forms of eq (6) (second moment and ``log V`` from exact
rational determinants) and of Proposition C.1's whitening residuals (a rigorous eigendecomposition).

References
----------
DARKFormer (seed 001): Lemma 2.1 (Choromanski et al. 2021), eq (3)/(8), Lemma 3.1 (eq 2,
App. A eq 5-7), Theorem 3.2, Proposition 4.1 (App. B), Proposition C.1 (App. C).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
from flint import acb, acb_mat, arb, arb_mat, fmpq, fmpq_mat

from rfcheck import quadrature
from rfcheck.arb_backend import to_ball, workprec

__all__ = [
    "exact_identity",
    "exact_matrix",
    "expected_second_moment_ball",
    "haar_rotation",
    "importance_weighting_samples",
    "importance_weighting_sides",
    "importance_weighting_sides_ball",
    "lemma31_variances",
    "lemma31_variances_ball",
    "log_expected_variance_ball",
    "optimal_second_moment",
    "optimal_second_moment_ball",
    "positive_definite",
    "prf_kernel",
    "prf_kernel_ball",
    "real_line_integral_ball",
    "rotated_covariance",
    "second_moment_dets_exact",
    "sigma_prf_kernel",
    "sigma_prf_kernel_ball",
    "whitening_residual_ball",
]


def haar_rotation(d: int, seed: int) -> np.ndarray:
    """A Haar-random ``d x d`` rotation fixed by ``seed`` (``scipy.stats.ortho_group``; ``d = 1``: ``[[1]]``).

    Parameters
    ----------
    d : int
        The dimension (>= 1).
    seed : int
        The ``random_state`` of ``scipy.stats.ortho_group.rvs``.

    Returns
    -------
    numpy.ndarray
        A float64 orthogonal matrix, shape ``(d, d)``, Haar-distributed on ``O(d)`` (its
        determinant may be ``-1``).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.darkformer import haar_rotation
    >>> u = haar_rotation(3, seed=0)
    >>> u.shape, bool(np.allclose(u @ u.T, np.eye(3)))
    ((3, 3), True)
    """
    if d == 1:
        return np.eye(1)
    from scipy.stats import ortho_group

    return ortho_group.rvs(d, random_state=int(seed))


def rotated_covariance(eigs: list[float], seed: int) -> np.ndarray:
    """``Lambda = U diag(eigs) U^T`` (float64, symmetrised), ``U = haar_rotation(len(eigs), seed)``;
    exactly ``l I`` when all eigenvalues are equal (a rotation would add rounding).

    Parameters
    ----------
    eigs : list of float
        The eigenvalues ``l_i`` of ``Lambda`` (non-empty; ``d = len(eigs)``).
    seed : int
        Seed of the rotation (:func:`haar_rotation`).

    Returns
    -------
    numpy.ndarray
        The symmetric float64 matrix ``Lambda``, shape ``(d, d)``.

    References
    ----------
    DARKFormer Lemma 3.1 and Theorem 3.2 (the anisotropic covariances they are stated on).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.darkformer import rotated_covariance
    >>> lam = rotated_covariance([0.1, 0.2, 0.4], seed=3)
    >>> bool(np.array_equal(lam, lam.T)), bool(np.allclose(np.linalg.eigvalsh(lam), [0.1, 0.2, 0.4]))
    (True, True)
    """
    if max(eigs) == min(eigs):
        return eigs[0] * np.eye(len(eigs))
    u = haar_rotation(len(eigs), seed)
    lam = (u * np.array(eigs)) @ u.T
    return 0.5 * (lam + lam.T)


def prf_kernel(nx: float, ny: float, theta: float, dps: int) -> tuple[Any, Any]:
    """``E_{w ~ N(0, I)}[exp(w.x - |x|^2/2) exp(w.y - |y|^2/2)]`` by 1-D quadrature (Lemma 2.1).

    Only the component of ``w`` along ``x + y`` matters: ``exp(-(|x|^2+|y|^2)/2) E exp(|x + y| z)``
    for the pair ``x = nx e1``, ``y = ny (cos theta e1 + sin theta e2)``.  Returns
    ``(value, error bar)`` (:func:`rfcheck.quadrature.with_error`).

    Parameters
    ----------
    nx, ny : float
        The norms ``|x|``, ``|y|`` (>= 0).
    theta : float
        The angle between ``x`` and ``y`` (radians).
    dps : int
        Decimal digits asked for.

    Returns
    -------
    (mpmath.mpf, mpmath.mpf)
        The expectation (``exp(x.y)`` in exact arithmetic) and its error bar, rounded to the
        caller's mpmath precision.

    References
    ----------
    DARKFormer Lemma 2.1 (Choromanski et al. 2021, positive random features).

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.references.darkformer import prf_kernel
    >>> with mpmath.workdps(30):
    ...     value, err = prf_kernel(1.0, 0.5, 0.0, 30)
    ...     bool(abs(value - mpmath.exp(0.5)) < 1e-25), bool(err < 1e-25)
    (True, True)
    """
    def compute(prec: int) -> tuple[Any, Any]:
        a, b, t = mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta)
        sq_sum = (a - b) ** 2 + 4 * a * b * mpmath.cos(t / 2) ** 2  # |x + y|^2 without cancellation
        v, e = quadrature.gaussian_exp_moment(0, mpmath.sqrt(sq_sum))
        pref = mpmath.exp(-(a**2 + b**2) / 2)
        return pref * v, pref * e

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def sigma_prf_kernel(m_mat: np.ndarray, q: np.ndarray, k: np.ndarray, dps: int) -> tuple[Any, Any]:
    """``E_{w ~ N(0, Sigma)}[exp(w.q - q^T Sigma q/2) exp(w.k - k^T Sigma k/2)]``, ``Sigma = M^T M``.

    By 1-D quadratures along the eigenvectors of ``Sigma`` (``w = U diag(sqrt(ev)) z``,
    ``z ~ N(0, I)``; eq (3)/(8)).  ``m_mat``: ``r x d``; ``q, k``: length ``d``.  Returns
    ``(value, error bar)``.

    Parameters
    ----------
    m_mat : numpy.ndarray, shape (r, d)
        The factor ``M`` of ``Sigma = M^T M``.
    q, k : numpy.ndarray, shape (d,)
        The query and the key.
    dps : int
        Decimal digits asked for.

    Returns
    -------
    (mpmath.mpf, mpmath.mpf)
        The expectation (``exp(q^T Sigma k)`` in exact arithmetic) and its error bar, rounded
        to the caller's mpmath precision.

    References
    ----------
    DARKFormer eq (3) and eq (8).

    Examples
    --------
    >>> import mpmath
    >>> import numpy as np
    >>> from rfcheck.references.darkformer import sigma_prf_kernel
    >>> m_mat = np.array([[1.0, 0.5], [0.0, 0.5]])
    >>> q, k = np.array([0.5, 0.25]), np.array([0.25, -0.5])
    >>> value, err = sigma_prf_kernel(m_mat, q, k, 15)
    >>> bool(abs(value - mpmath.exp(q @ m_mat.T @ m_mat @ k)) < 1e-13)
    True
    """
    def compute(prec: int) -> tuple[Any, Any]:
        mm, qm, km = mpmath.matrix(m_mat.tolist()), mpmath.matrix(q.tolist()), mpmath.matrix(k.tolist())
        sig = mm.T * mm
        ev, u = mpmath.eigsy(sig)
        s = qm + km
        factors = []
        for j in range(sig.rows):
            lam_j = max(ev[j], mpmath.mpf(0))
            a_j = mpmath.sqrt(lam_j) * sum(u[i, j] * s[i] for i in range(sig.rows))
            v, e = quadrature.gaussian_exp_moment(0, a_j)
            factors.append((v, e, 1))
        val, err = quadrature.product_with_error(factors)
        pref = mpmath.exp(-(qm.T * sig * qm)[0] / 2 - (km.T * sig * km)[0] / 2)
        return pref * val, pref * err

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def _lemma31_setup(dist: str, a: Any) -> tuple[Callable[[Any], Any], Any, Any]:
    """1-D query/key distribution D: ``B(w) = E_x exp(2 w x - x^2)``, ``E kappa^2 = E exp(2 q k)``
    (exact) and the coefficient of ``-w^2`` in ``log(p_I^2 B^2)`` (its Gaussian tail)."""
    a = mpmath.mpf(a)
    if dist == "gauss":  # D = N(0, a): elementary Gaussian integrals
        def b(w: Any) -> Any:
            return mpmath.exp(2 * a * w * w / (1 + 2 * a)) / mpmath.sqrt(1 + 2 * a)
        return b, 1 / mpmath.sqrt(1 - 4 * a * a), 1 - 4 * a / (1 + 2 * a)
    if dist != "discrete":
        raise ValueError(f"dist must be 'gauss' or 'discrete'; got {dist!r}")
    pts = [-a, a / 3, 2 * a]  # D uniform on {-a, a/3, 2a}: exact finite sums

    def b_disc(w: Any) -> Any:
        return sum(mpmath.exp(2 * w * x - x * x) for x in pts) / 3
    return b_disc, sum(mpmath.exp(2 * x * y) for x in pts for y in pts) / 9, mpmath.mpf(1)


def _lemma31_proposal(alt: str, mu: Any, s: Any, eps: Any, psi_star: Callable[[Any], Any]) -> tuple[Any, Any]:
    """A competing proposal density and the coefficient of ``w^2`` in ``-log psi`` (its tail; the mixture
    with ``eps = 1`` is the normal, with the normal's Gaussian tail)."""
    mu, s, eps = mpmath.mpf(mu), mpmath.mpf(s), mpmath.mpf(eps)
    if alt == "normal":
        return (lambda w: mpmath.npdf(w, mu, s)), 1 / (2 * s * s)
    if alt == "student":
        nu = mpmath.mpf(3)

        def t(w: Any) -> Any:
            z = (w - mu) / s
            return (mpmath.gamma((nu + 1) / 2) / (mpmath.sqrt(nu * mpmath.pi) * mpmath.gamma(nu / 2) * s)
                    * (1 + z * z / nu) ** (-(nu + 1) / 2))
        return t, mpmath.mpf(0)
    if alt != "mix":
        raise ValueError(f"alt must be 'normal', 'student' or 'mix'; got {alt!r}")
    return (lambda w: (1 - eps) * psi_star(w) + eps * mpmath.npdf(w, mu, s)), \
        (1 / (2 * s * s) if eps == 1 else mpmath.mpf(0))


def lemma31_variances(dist: str, a: float, alt: str, mu: float, s: float, eps: float,
                      dps: int) -> tuple[Any, Any, Any]:
    """Expected variances ``V(psi*)`` and ``V(psi)`` of Lemma 3.1 in ``d = 1`` by quadrature.

    ``V(psi) = int p_I^2 B^2 / psi - E kappa^2`` (one feature), ``psi* = p_I B / int p_I B``
    normalised by quadrature.

    Parameters
    ----------
    dist : {"gauss", "discrete"}
        The query/key distribution: ``N(0, a)`` or uniform on ``{-a, a/3, 2a}``.
    a : float
        Its scale (``a < 1/2`` for ``"gauss"``).
    alt : {"normal", "student", "mix"}
        The competitor ``psi``: ``N(mu, s^2)``, Student-t_3 ``(mu, s)``, or
        ``(1 - eps) psi* + eps N(mu, s^2)``.
    mu, s, eps : float
    dps : int

    Returns
    -------
    (mpmath.mpf, mpmath.mpf, mpmath.mpf)
        ``V(psi*)``, ``V(psi)`` (``+inf`` where ``psi``'s Gaussian tail -- the normal's, or the
        mixture's with ``eps = 1`` -- is not heavier than ``p_I^2 B^2``'s and the integral diverges),
        and the error bar of their difference.
    """
    with mpmath.workdps(dps):
        b, k2, tail = _lemma31_setup(dist, a)
        z_star, e0 = mpmath.quad(lambda w: mpmath.npdf(w) * b(w), [-mpmath.inf, 0, mpmath.inf], error=True)

        def psi_star(w: Any) -> Any:
            return mpmath.npdf(w) * b(w) / z_star

        def second(psi: Callable[[Any], Any]) -> tuple[Any, Any]:
            return mpmath.quad(lambda w: mpmath.npdf(w) ** 2 * b(w) ** 2 / psi(w), [-mpmath.inf, -2, 0, 2, mpmath.inf],
                               error=True)

        m_star, e1 = second(psi_star)
        psi, c_alt = _lemma31_proposal(alt, mu, s, eps, psi_star)
        if c_alt >= tail:  # a normal (alt "normal", or "mix" with eps = 1) at least as light-tailed: diverges
            return m_star - k2, mpmath.inf, abs(e1) + abs(e0)
        m_alt, e2 = second(psi)
        return m_star - k2, m_alt - k2, abs(e0) * m_star / z_star + abs(e1) + abs(e2)


def optimal_second_moment(lam: np.ndarray, dps: int) -> tuple[Any, Any]:
    """``(int p_I sqrt(B_q B_k))^2 = (E_{x ~ N(0, Lambda)} exp(|x|^2))^2`` by 1-D quadratures.

    The smallest ``E_{q,k} E_psi[(p_I/psi)^2 Z^2]`` over proposals ``psi`` (Cauchy-Schwarz,
    proof of Lemma 3.1), for ``q, k ~ N(0, Lambda)``: by Fubini ``prod_i (E exp(l_i z^2))^2``
    over the eigenvalues ``l_i < 1/2`` of the float64 ``Lambda`` (computed in mpmath), each
    factor by quadrature (Theorem 3.2).  Returns ``(value, error bar)``.

    Parameters
    ----------
    lam : numpy.ndarray, shape (d, d)
        The covariance ``Lambda`` (symmetric, eigenvalues in ``[0, 1/2)``; at ``>= 1/2`` the
        expectation diverges).
    dps : int
        Decimal digits asked for.

    Returns
    -------
    (mpmath.mpf, mpmath.mpf)
        ``(E_{x ~ N(0, Lambda)} exp(|x|^2))^2`` (``prod_i 1/(1 - 2 l_i)`` in exact arithmetic)
        and its error bar, rounded to the caller's mpmath precision.

    References
    ----------
    DARKFormer Lemma 3.1 (proof, Cauchy-Schwarz) and Theorem 3.2.

    Examples
    --------
    ``Lambda = diag(1/4, 1/8)``: ``1/(1 - 1/2) * 1/(1 - 1/4) = 8/3``:

    >>> import numpy as np
    >>> from rfcheck.references.darkformer import optimal_second_moment
    >>> value, err = optimal_second_moment(np.diag([0.25, 0.125]), 15)
    >>> bool(abs(value - 8 / 3) < 1e-13)
    True
    """
    def compute(prec: int) -> tuple[Any, Any]:
        ev = mpmath.eigsy(mpmath.matrix(lam.tolist()), eigvals_only=True)
        factors = [(*quadrature.gaussian_exp_moment(ev[i], 0), 2) for i in range(len(ev))]
        return quadrature.product_with_error(factors)

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def importance_weighting_sides(s: float, q: float, k: float, dps: int) -> tuple[Any, Any, Any]:
    """Both sides of Proposition 4.1 in ``d = 1``: ``E_{p_Sigma}[f]`` and ``E_{p_I}[w_Sigma f]``.

    ``f(w) = exp(w q - Sigma q^2/2) exp(w k - Sigma k^2/2)``, ``w_Sigma = p_Sigma / p_I``
    evaluated literally; the first by quadrature in ``z = w / sqrt(Sigma)``, the second in
    ``w``, at ``dps + 10`` digits.  Returns ``(lhs, rhs, error bar)``.

    Parameters
    ----------
    s : float
        ``Sigma`` (> 0; the scalar covariance of ``p_Sigma = N(0, Sigma)``).
    q, k : float
        The query and the key.
    dps : int
        Decimal digits asked for.

    Returns
    -------
    (mpmath.mpf, mpmath.mpf, mpmath.mpf)
        ``E_{p_Sigma}[f]``, ``E_{p_I}[w_Sigma f]`` (both ``exp(Sigma q k)`` in exact arithmetic)
        and the sum of the two quadrature error estimates, at ``dps + 10`` digits.

    References
    ----------
    DARKFormer Proposition 4.1 (App. B).

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.references.darkformer import importance_weighting_sides
    >>> lhs, rhs, err = importance_weighting_sides(0.5, 0.75, 0.5, 15)
    >>> bool(abs(lhs - rhs) < 1e-14), bool(abs(lhs - mpmath.exp(0.1875)) < 1e-14)
    (True, True)
    """
    with mpmath.workdps(dps + 10):
        s, qq, kk = mpmath.mpf(s), mpmath.mpf(q), mpmath.mpf(k)

        def f(w: Any) -> Any:
            return mpmath.exp(w * qq - s * qq * qq / 2) * mpmath.exp(w * kk - s * kk * kk / 2)

        sd = mpmath.sqrt(s)
        lhs, e1 = mpmath.quad(lambda z: mpmath.npdf(z) * f(sd * z), [-mpmath.inf, 0, mpmath.inf], error=True)

        def w_sigma(w: Any) -> Any:
            return mpmath.npdf(w, 0, sd) / mpmath.npdf(w)

        rhs, e2 = mpmath.quad(lambda w: mpmath.npdf(w) * w_sigma(w) * f(w), [-mpmath.inf, 0, mpmath.inf],
                              error=True)
    return lhs, rhs, abs(e1) + abs(e2)


def importance_weighting_samples(sigma: np.ndarray, q: np.ndarray, k: np.ndarray, m: int, n: int,
                                 seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` draws each of the two estimators of Proposition 4.1 (eq (4)) with ``m`` features.

    Unweighted: ``m^-1 sum_j exp(w_j.(q + k) - (q^T Sigma q + k^T Sigma k)/2)``, ``w_j ~ N(0, Sigma)``;
    weighted: the same with ``w_j ~ N(0, I)`` and the weight ``w_Sigma = p_Sigma / p_I`` (log
    densities, :func:`rfcheck.estimators.darkformer.log_gaussian_density`).  Both have mean
    ``exp(q^T Sigma k)``; the weighted one infinite variance when ``Sigma`` has an eigenvalue
    ``>= 2``.  Drawn from ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    sigma : numpy.ndarray, shape (d, d)
        ``Sigma`` (symmetric positive definite: its Cholesky factor is taken).
    q, k : numpy.ndarray, shape (d,)
        The query and the key.
    m : int
        Features per estimate.
    n : int
        Independent estimates of each kind.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The unweighted and the weighted estimates, shape ``(n,)`` each.

    References
    ----------
    DARKFormer Proposition 4.1 and eq (4).

    Examples
    --------
    Both means agree with ``exp(q^T Sigma k)`` within five standard errors:

    >>> import numpy as np
    >>> from rfcheck.references.darkformer import importance_weighting_samples
    >>> sigma, q, k = 0.5 * np.eye(2), np.array([0.5, 0.0]), np.array([0.25, 0.25])
    >>> a, b = importance_weighting_samples(sigma, q, k, 8, 4000, seed=0)
    >>> target = np.exp(q @ sigma @ k)
    >>> [bool(abs(x.mean() - target) < 5 * x.std() / np.sqrt(x.size)) for x in (a, b)]
    [True, True]
    """
    from rfcheck.estimators import darkformer as dfe

    d = sigma.shape[0]
    rng = np.random.default_rng(seed)
    om_s = rng.standard_normal((n * m, d)) @ np.linalg.cholesky(sigma).T
    om_i = rng.standard_normal((n * m, d))
    base = -0.5 * (q @ sigma @ q + k @ sigma @ k)
    a = np.exp(om_s @ (q + k) + base).reshape(n, m).mean(axis=1)
    lw = dfe.log_gaussian_density(om_i, sigma) - dfe.log_gaussian_density(om_i, np.eye(d))
    return a, np.exp(lw + om_i @ (q + k) + base).reshape(n, m).mean(axis=1)


# ------------------------------------------------------------------ rigorous (Arb) twins


def _up(x: arb) -> float:
    """A float64 at or above the upper end of the real ball ``x``."""
    return math.nextafter(float(x.upper()), math.inf)


def _gauss_exp_mean_ball(a: arb, bits: int) -> arb:
    """``E exp(a Z)``, ``Z ~ N(0, 1)``, ``a >= 0`` a ball, by :func:`rfcheck.certify.gaussian_expectation_1d`.

    Growth bound of the integrand ``f(w) = exp(a w)``: ``|f(w)| <= exp(a_up |w|)`` for real ``w``,
    ``a_up`` the upper end of ``a``; ``f`` is entire.
    """
    from rfcheck.certify import gaussian_expectation_1d

    return gaussian_expectation_1d(lambda w, analytic: (a * w).exp(), growth=(1.0, _up(a)), prec=bits)


def prf_kernel_ball(nx: float, ny: float, theta: float, bits: int) -> arb:
    """Rigorous twin of :func:`prf_kernel`: a ball containing ``E_{w ~ N(0, I)}[exp(w.x - |x|^2/2)
    exp(w.y - |y|^2/2)]`` for the pair ``x = nx e1``, ``y = ny (cos theta e1 + sin theta e2)``.

    ``exp(-(|x|^2+|y|^2)/2) E exp(|x + y| Z)``, ``Z ~ N(0, 1)`` (only the component of ``w``
    along ``x + y`` matters), the expectation by Arb's rigorous ``acb.integral`` on ``[-T, T]``
    plus the proven Gaussian tail bound of :func:`rfcheck.certify.gaussian_tail_bound` (growth
    ``|exp(s w)| <= exp(s |w|)``, ``s = |x + y|``); never the closed form ``exp(x.y)``.

    Parameters
    ----------
    nx, ny : float
        The norms ``|x|``, ``|y|`` (>= 0), taken exactly.
    theta : float
        The angle between ``x`` and ``y`` (radians), taken exactly.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the expectation.

    References
    ----------
    DARKFormer Lemma 2.1 (Choromanski et al. 2021, positive random features).

    Examples
    --------
    >>> from flint import arb
    >>> from rfcheck.references.darkformer import prf_kernel_ball
    >>> b = prf_kernel_ball(1.0, 0.5, 0.0, 100)
    >>> bool(b.overlaps(arb(0.5).exp())), bool(b.rad() < 1e-28)
    (True, True)
    """
    with workprec(bits + 10):
        a, b, t = (arb(to_ball(float(v))) for v in (nx, ny, theta))
        sq_sum = (a - b) ** 2 + 4 * a * b * (t / 2).cos() ** 2  # |x + y|^2 without cancellation
        s = sq_sum.nonnegative_part().sqrt()  # a ball straddling 0: the exact |x + y|^2 >= 0 lies in its part >= 0
        return (-(a * a + b * b) / 2).exp() * _gauss_exp_mean_ball(s, bits + 10)


def exact_matrix(a: np.ndarray) -> fmpq_mat:
    """The float64 matrix ``a`` as an exact rational matrix (each entry's binary value).

    Parameters
    ----------
    a : numpy.ndarray
        A float64 (or integer) array, 1-D (a column) or 2-D.

    Returns
    -------
    flint.fmpq_mat
        The same numbers, exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.darkformer import exact_matrix
    >>> exact_matrix(np.array([[0.5, 0.1]]))[0, 1] == 0.1
    False
    >>> exact_matrix(np.array([[0.5, 0.1]]))[0, 0] * 2 == 1
    True
    """
    m = np.atleast_2d(np.asarray(a, dtype=float)) if np.ndim(a) != 1 else np.asarray(a, dtype=float)[:, None]
    return fmpq_mat(m.shape[0], m.shape[1], [fmpq(*float(x).as_integer_ratio()) for x in m.ravel()])


def _fmpq_ball(x: fmpq) -> arb:
    """A ball containing the rational ``x`` (at the working precision)."""
    return arb(x.p) / arb(x.q)


def sigma_prf_kernel_ball(m_mat: np.ndarray, q: np.ndarray, k: np.ndarray, bits: int) -> arb:
    """Rigorous twin of :func:`sigma_prf_kernel`: a ball containing
    ``E_{w ~ N(0, Sigma)}[exp(w.q - q^T Sigma q/2) exp(w.k - k^T Sigma k/2)]``, ``Sigma = M^T M``.

    ``w = M^T z`` with ``z ~ N(0, I_r)``, so ``w.(q + k) = z.(M(q + k))`` and, by the rotation
    invariance of ``N(0, I_r)``, the expectation is ``exp(-(|Mq|^2 + |Mk|^2)/2) E exp(|M(q + k)| Z)``,
    ``Z ~ N(0, 1)``: one 1-D expectation by Arb's rigorous ``acb.integral`` plus the proven tail
    bound (growth ``exp(a |w|)``, ``a = |M(q + k)|``).  ``M q``, ``M k`` are exact rationals of the
    float64 inputs; never the closed form ``exp(q^T Sigma k)``.

    Parameters
    ----------
    m_mat : numpy.ndarray, shape (r, d)
        The factor ``M`` of ``Sigma = M^T M`` (float64, taken exactly).
    q, k : numpy.ndarray, shape (d,)
        The query and the key (taken exactly).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the expectation.

    References
    ----------
    DARKFormer eq (3) and eq (8).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.darkformer import sigma_prf_kernel_ball
    >>> m_mat = np.array([[1.0, 0.5], [0.0, 0.5]])
    >>> q, k = np.array([0.5, 0.25]), np.array([0.25, -0.5])
    >>> b = sigma_prf_kernel_ball(m_mat, q, k, 100)
    >>> bool(abs(float(b.mid()) / np.exp(q @ m_mat.T @ m_mat @ k) - 1) < 1e-15), bool(b.rad() < 1e-28)
    (True, True)
    """
    mm = exact_matrix(m_mat)
    mq, mk = mm * exact_matrix(q), mm * exact_matrix(k)
    s2 = sum((mq[i, 0] + mk[i, 0]) ** 2 for i in range(mq.nrows()))
    e2 = sum(mq[i, 0] ** 2 + mk[i, 0] ** 2 for i in range(mq.nrows()))
    with workprec(bits + 10):
        s2b = _fmpq_ball(fmpq(s2))
        a = s2b.sqrt() if s2 != 0 else arb(0)
        return (-_fmpq_ball(fmpq(e2)) / 2).exp() * _gauss_exp_mean_ball(a, bits + 10)


def optimal_second_moment_ball(lam: np.ndarray, bits: int) -> arb:
    """Rigorous twin of :func:`optimal_second_moment`: a ball containing
    ``(E_{x ~ N(0, Lambda)} exp(|x|^2))^2`` for the float64 ``Lambda`` (taken exactly).

    The Gaussian integral ``E exp(|x|^2) = int exp(-x^T (Lambda^{-1} - 2 I) x/2) dx /
    sqrt(det(2 pi Lambda)) = det(I - 2 Lambda)^{-1/2}`` (the product of ``(1 - 2 l_i)^{-1/2}``
    over the eigenvalues ``l_i < 1/2``; continuous in ``Lambda``, so also for a singular one):
    the value is ``1/det(I - 2 Lambda)``, the determinant an exact rational of the float64
    entries.  Independent of any proposal ``Sigma``: it is the Cauchy-Schwarz optimum itself.

    Parameters
    ----------
    lam : numpy.ndarray, shape (d, d)
        The covariance ``Lambda`` (symmetric, eigenvalues in ``[0, 1/2)``).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the value.

    Raises
    ------
    ValueError
        If ``I - 2 Lambda`` is not positive definite (the expectation diverges).

    References
    ----------
    DARKFormer Lemma 3.1 (proof, Cauchy-Schwarz) and Theorem 3.2.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.darkformer import optimal_second_moment_ball
    >>> b = optimal_second_moment_ball(np.diag([0.25, 0.125]), 100)
    >>> bool(b.overlaps(__import__("flint").arb(8) / 3)), bool(b.rad() < 1e-28)
    (True, True)
    """
    lm = exact_matrix(lam)
    d = lm.nrows()
    a = exact_identity(d) - 2 * lm
    if not positive_definite(a):
        raise ValueError("I - 2 Lambda is not positive definite: E exp(|x|^2) diverges")
    with workprec(bits):
        return 1 / _fmpq_ball(a.det())


def positive_definite(a: fmpq_mat) -> bool:
    """Whether the symmetric rational matrix ``a`` is positive definite, exactly (Sylvester:
    every leading principal minor > 0).

    Parameters
    ----------
    a : flint.fmpq_mat
        A symmetric square rational matrix.

    Returns
    -------
    bool
        Whether every leading principal minor is > 0 (exact rational determinants).

    Examples
    --------
    >>> from flint import fmpq_mat
    >>> from rfcheck.references.darkformer import positive_definite
    >>> positive_definite(fmpq_mat(2, 2, [2, 1, 1, 2])), positive_definite(fmpq_mat(2, 2, [1, 2, 2, 1]))
    (True, False)
    """
    n = a.nrows()
    for m in range(1, n + 1):
        sub = fmpq_mat(m, m, [a[i, j] for i in range(m) for j in range(m)])
        if not sub.det() > 0:
            return False
    return True


def importance_weighting_sides_ball(s: float, q: float, k: float, bits: int) -> tuple[arb, arb]:
    """Rigorous twin of :func:`importance_weighting_sides`: balls containing ``E_{p_Sigma}[f]`` and
    ``E_{p_I}[w_Sigma f]`` in ``d = 1``, ``f(w) = exp(w q - Sigma q^2/2) exp(w k - Sigma k^2/2)``.

    The first as ``E f(sqrt(Sigma) Z)``, ``Z ~ N(0, 1)`` (:func:`rfcheck.certify.gaussian_expectation_1d`,
    growth ``|f(sqrt(Sigma) w)| <= exp(sqrt(Sigma) |q + k| |w|)`` since ``Sigma (q^2+k^2)/2 >= 0``);
    the second as ``int phi(w) w_Sigma(w) f(w) dw`` with ``w_Sigma = p_Sigma/p_I`` evaluated
    literally (``phi_Sigma(w)/phi(w)``) by ``acb.integral`` on ``[-T, T]``; its integrand is at most
    ``g(w) = (2 pi Sigma)^{-1/2} exp(-w^2/(2 Sigma) + |q + k| |w|)``, whose two tails beyond ``T``
    are bounded by :func:`rfcheck.references.gaussian.half_line_tail_bound` ``(0, Sigma, |q + k|, T)``
    each (times ``(2 pi Sigma)^{-1/2}``), added to the radius.  Never the closed form
    ``exp(Sigma q k)``.

    Parameters
    ----------
    s : float
        ``Sigma`` (> 0), taken exactly.
    q, k : float
        The query and the key, taken exactly.
    bits : int
        Working precision in bits.

    Returns
    -------
    (flint.arb, flint.arb)
        Balls containing ``E_{p_Sigma}[f]`` and ``E_{p_I}[w_Sigma f]``.

    References
    ----------
    DARKFormer Proposition 4.1 (App. B).

    Examples
    --------
    >>> from rfcheck.references.darkformer import importance_weighting_sides_ball
    >>> lhs, rhs = importance_weighting_sides_ball(0.5, 0.75, 0.5, 100)
    >>> exact = __import__("flint").arb(0.1875).exp()
    >>> bool(lhs.overlaps(exact)), bool(rhs.overlaps(exact)), bool(rhs.rad() < 1e-25)
    (True, True, True)
    """
    from rfcheck.certify import gaussian_expectation_1d
    from rfcheck.references.gaussian import half_line_tail_bound, integral_ball

    work = bits + 10
    with workprec(work):
        sb, qb, kb = (arb(to_ball(float(v))) for v in (s, q, k))
        sd = sb.sqrt()
        c = -sb * (qb * qb + kb * kb) / 2
        rate = abs(qb + kb)
        lhs = gaussian_expectation_1d(lambda z, analytic: (sd * z * (qb + kb) + c).exp(),
                                      growth=(1.0, _up(sd * rate)), prec=work)
        two_pi = 2 * arb.pi()

        def integrand(w: acb, analytic: bool) -> acb:
            phi = (-(w * w) / 2).exp() / two_pi.sqrt()
            phi_s = (-(w * w) / (2 * sb)).exp() / (two_pi * sb).sqrt()
            return phi * (phi_s / phi) * (w * qb - sb * qb * qb / 2).exp() * (w * kb - sb * kb * kb / 2).exp()

        fs, fr = float(s), _up(rate)
        # |integrand| <= (2 pi Sigma)^{-1/2} exp(-w^2/(2 Sigma) + r |w|): tails below 2^-(work+10) of the body
        t = fs * fr + math.sqrt(2 * fs * ((work + 20) * math.log(2) + fs * fr * fr / 2 + 10)) + 1
        body = integral_ball(integrand, -t, t, work).real
        tail = 2 * half_line_tail_bound(0, sb, fr, t) / (two_pi * sb).sqrt()
        return lhs, body + arb(0, tail.upper())


def real_line_integral_ball(f: Callable[[acb, bool], acb], *, growth: tuple[float, int, float, float], bits: int,
                            log_scale: float = 0.0) -> arb:
    """``int_R f(w) dw`` as a real ball: Arb's ``acb.integral`` on ``[-T, T]`` plus both tails, bounded.

    Given ``|f(w)| <= C |w|^n exp(-delta w^2 + b |w|)`` for real ``|w| >= 1`` (the caller's proof
    obligation, ``growth = (C, n, delta, b)``, ``delta > 0``), each tail beyond ``T >= 1`` is at most
    ``C`` times :func:`rfcheck.references.gaussian.half_line_tail_bound` ``(n, 1/(2 delta), b, T)``;
    ``T`` is raised until that is below ``2^-(bits + 10) exp(log_scale)``.

    Parameters
    ----------
    f : callable
        ``f(w, analytic) -> acb`` in ``acb.integral``'s convention, real on the real line.
    growth : (float, int, float, float)
        ``(C, n, delta, b)`` as above.
    bits : int
        Target relative accuracy in bits.
    log_scale : float, optional
        A rough natural log of the integral's magnitude (where the tails are negligible).

    Returns
    -------
    flint.arb
        A ball containing the integral.

    Raises
    ------
    ValueError
        If ``delta <= 0`` (no Gaussian decay to bound the tails with).

    Examples
    --------
    >>> from flint import arb
    >>> from rfcheck.references.darkformer import real_line_integral_ball
    >>> b = real_line_integral_ball(lambda w, analytic: (-w * w / 2).exp(), growth=(1.0, 0, 0.5, 0.0), bits=100)
    >>> bool(b.overlaps((2 * arb.pi()).sqrt())), bool(b.rad() < 1e-28)
    (True, True)
    """
    from rfcheck.references.gaussian import half_line_tail_bound, integral_ball

    big_c, n, delta, b = growth
    if not delta > 0:
        raise ValueError(f"the tails need Gaussian decay (delta > 0); got delta = {delta}")
    with workprec(bits + 20):
        target = arb(log_scale - (bits + 10) * math.log(2)).exp()
        t = max(1.0, b / (2 * delta)) + 1.0
        while True:
            tail = arb(big_c) * half_line_tail_bound(n, 1 / (2 * arb(delta)), b, t)
            if tail.upper() < target:
                break
            t *= 1.25
        body = integral_ball(f, -t, t, bits).real
        return body + arb(0, 2 * tail.upper())


def lemma31_variances_ball(dist: str, a: float, alt: str, mu: float, s: float, eps: float,
                           bits: int) -> tuple[arb, arb] | str:
    """Rigorous twin of :func:`lemma31_variances`: balls containing ``V(psi*)`` and ``V(psi)`` (``+inf``
    exactly where ``psi``'s Gaussian tail is lighter than ``p_I^2 B^2``'s), or a string saying why
    there are none.

    ``V(psi*) = Z^2 - E kappa^2`` with ``Z = int p_I B`` (``int p_I^2 B^2/psi* = Z int p_I B``, exactly);
    ``V(psi) = int p_I^2 B^2 / psi - E kappa^2`` with the integrand written literally, every integral
    by :func:`real_line_integral_ball`.  Tail bounds, with ``G = p_I^2 B^2 <= exp(-g w^2 + h |w|)/(2 pi)``
    (``N(0, a)``: ``g = (1 - 2a)/(1 + 2a)``, ``h = 0``; the discrete ``D``: ``B <= exp(2 x_max |w|)``, so
    ``g = 1``, ``h = 4 x_max``, ``x_max = 2a``):

    * ``p_I B = sqrt(G)``: ``C = (2 pi)^{-1/2}``, ``delta = g/2``, ``b = h/2``;
    * normal ``psi``: ``1/psi <= s sqrt(2 pi) exp(mu^2/(2 s^2)) exp(w^2/(2 s^2) + |mu| |w|/s^2)``;
      ``+inf`` exactly when ``1/(2 s^2) >= g`` (decided in rational arithmetic on the float64 inputs);
    * Student-t_3: ``1/psi = (sqrt(3) pi s/2)(1 + z^2/3)^2`` and, for ``|w| >= 1``,
      ``1 + z^2/3 <= A w^2``, ``A = 1 + (1 + |mu|)^2/(3 s^2)``: ``n = 4``;
    * the mixture, ``eps < 1``: ``1/psi <= Z/((1 - eps) p_I B)``, so the integrand is at most
      ``Z p_I B/(1 - eps)``; ``eps = 1``: ``psi`` is the normal, its bound and its ``+inf``.

    Parameters
    ----------
    dist, a, alt, mu, s, eps
        As :func:`lemma31_variances` (floats taken exactly).
    bits : int
        Working precision in bits.

    Returns
    -------
    (flint.arb, flint.arb) or str
        Balls containing ``V(psi*)`` and ``V(psi)`` (``arb.pos_inf()`` for ``+inf``), or why not.

    Raises
    ------
    ValueError
        If ``dist`` or ``alt`` is not one of the names above.

    References
    ----------
    DARKFormer Lemma 3.1, eq (2), App. A eq (5)-(7).
    """
    with workprec(bits + 20):
        ab, mub, sb, epsb = (arb(to_ball(float(v))) for v in (a, mu, s, eps))
        two_pi = 2 * arb.pi()
        # p_I B = sum_i c_i exp(e_i(w)), each exponent a quadratic (A, B, C): A w^2 + B w + C, so that the
        # Gaussian factors combine before exp (separate exps of w^2 would blow the balls up far from 0)
        if dist == "gauss":
            fa = fmpq(*float(a).as_integer_ratio())
            g_q = (1 - 2 * fa) / (1 + 2 * fa)
            g, h = float(g_q) * (1 - 2.0**-50), 0.0
            k2 = 1 / (1 - 4 * ab * ab).sqrt()
            terms = [(1 / (two_pi.sqrt() * (1 + 2 * ab).sqrt()), (-(1 - 2 * ab) / (1 + 2 * ab) / 2, arb(0), arb(0)))]
        elif dist == "discrete":
            g_q, g, h = fmpq(1), 1.0, _up(8 * ab)
            pts = [-ab, ab / 3, 2 * ab]
            k2 = sum((2 * x * y).exp() for x in pts for y in pts) / 9
            terms = [(1 / (3 * two_pi.sqrt()), (arb(-0.5), 2 * x, -x * x)) for x in pts]
        else:
            raise ValueError(f"dist must be 'gauss' or 'discrete'; got {dist!r}")

        def quad(e: tuple[arb, arb, arb], w: acb) -> acb:
            return (e[0] * w + e[1]) * w + e[2]

        def plus(*es: tuple[arb, arb, arb]) -> tuple[arb, arb, arb]:
            return (sum((e[0] for e in es), arb(0)), sum((e[1] for e in es), arb(0)), sum((e[2] for e in es), arb(0)))

        def phib(w: acb) -> acb:  # p_I(w) B(w)
            return sum((c * quad(e, w).exp() for c, e in terms), acb(0))

        def g_times(extra: tuple[arb, arb, arb], w: acb) -> acb:  # p_I^2 B^2 exp(extra(w))
            return sum((ci * cj * quad(plus(ei, ej, extra), w).exp() for ci, ei in terms for cj, ej in terms), acb(0))

        zero = (arb(0), arb(0), arb(0))
        z = real_line_integral_ball(lambda w, analytic: phib(w), growth=(0.4, 0, g / 2, h / 2), bits=bits)
        lhs = z * z - k2
        s_q = fmpq(*float(s).as_integer_ratio())
        c_alt = 1 / (2 * s_q * s_q)
        if (alt == "normal" or (alt == "mix" and float(eps) == 1)) and c_alt >= g_q:  # psi = N(mu, s^2) exactly
            return lhs, arb.pos_inf()
        fmu = abs(float(mu))
        # 1/N(w; mu, s^2) = s sqrt(2 pi) exp(r(w)), r(w) = (w - mu)^2/(2 s^2)
        r_e = (1 / (2 * sb * sb), -mub / (sb * sb), mub * mub / (2 * sb * sb))
        inv_n = sb * two_pi.sqrt()
        # decay rate g - 1/(2 s^2) in exact rationals, then rounded down (never above the exact rate)
        normal_growth = (_up(sb * (mub * mub / (2 * sb * sb)).exp() / two_pi.sqrt()), 0,
                         float(g_q - c_alt) * (1 - 2.0**-50), _up(h + abs(mub) / (sb * sb)))
        if alt == "normal":
            def integrand(w: acb) -> acb:
                return inv_n * g_times(r_e, w)
            growth = normal_growth
        elif alt == "student":
            def integrand(w: acb) -> acb:  # 1/t_3 = (sqrt(3) pi s/2)(1 + z^2/3)^2
                zz = (w - mub) / sb
                return g_times(zero, w) * (arb(3).sqrt() * arb.pi() * sb / 2) * (1 + zz * zz / 3) ** 2
            big_a = 1 + (1 + arb(fmu)) ** 2 / (3 * sb * sb)
            growth = (_up(arb(3).sqrt() * arb.pi() * sb / 2 * big_a * big_a / two_pi), 4, g, h)
        elif alt == "mix":
            def integrand(w: acb) -> acb:  # p_I^2 B^2/psi = p_I B/((1 - eps)/Z + eps N/(p_I B))
                pb_over_n = inv_n * sum((c * quad(plus(e, r_e), w).exp() for c, e in terms), acb(0))
                return phib(w) / ((1 - epsb) / z + epsb / pb_over_n)
            if float(eps) < 1:
                growth = (_up(z / (1 - epsb) / two_pi.sqrt()), 0, g / 2, h / 2)
            elif normal_growth[2] > 0:
                growth = normal_growth
            else:
                return "eps = 1 with a normal competitor whose tail is not lighter than p_I^2 B^2: no tail bound"
        else:
            raise ValueError(f"alt must be 'normal', 'student' or 'mix'; got {alt!r}")
        if not growth[2] > 0:
            return "the competitor's Gaussian tail leaves no decay margin in float64 (a boundary point)"
        m_alt = real_line_integral_ball(lambda w, analytic: integrand(w), growth=growth, bits=bits,
                                        log_scale=math.log(max(float(lhs.mid()) + float(k2.mid()), 1e-300)))
        return lhs, m_alt - k2


def exact_identity(d: int) -> fmpq_mat:
    """The ``d x d`` identity as an exact rational matrix.

    Parameters
    ----------
    d : int
        The size.

    Returns
    -------
    flint.fmpq_mat
        ``I_d``.

    Examples
    --------
    >>> from rfcheck.references.darkformer import exact_identity
    >>> e = exact_identity(3)
    >>> e.det() == 1, e[0, 1] == 0, e[2, 2] == 1
    (True, True, True)
    """
    return fmpq_mat(d, d, [fmpq(1 if i == j else 0) for i in range(d) for j in range(d)])


def second_moment_dets_exact(lam: fmpq_mat, sigma: fmpq_mat) -> tuple[fmpq, fmpq, fmpq] | None:
    """The three determinants of the log second moment of DARKFormer's eq (6), in exact rationals.

    ``log E [(p_I/psi)^2 Z^2] = 1/2 log det Sigma - 1/2 log det P - log det(I + 2 Lambda)``,
    ``P = 2 Sigma*^{-1} - Sigma^{-1}``, ``Sigma*^{-1} = (I + 2 Lambda)^{-1}(I - 2 Lambda)``
    (:func:`rfcheck.closed_forms.darkformer.log_expected_second_moment`), with that function's
    mpmath steps -- ``Sigma`` and ``P`` symmetrised -- carried out without rounding.

    Parameters
    ----------
    lam : flint.fmpq_mat
        ``Lambda`` (symmetric, ``d x d``), e.g. :func:`exact_matrix` of a float64 array.
    sigma : flint.fmpq_mat
        The proposal covariance ``Sigma`` (``d x d``, invertible).

    Returns
    -------
    (flint.fmpq, flint.fmpq, flint.fmpq) or None
        ``det Sigma``, ``det P``, ``det(I + 2 Lambda)``; None where ``P`` is not positive
        definite (the second moment is ``+inf``).

    References
    ----------
    DARKFormer Lemma 3.1 (eq 5-7, App. A) and Theorem 3.2: the Gaussian integral
    ``int p_I^2 B_q B_k / psi`` at ``psi = N(0, Sigma)``.

    Examples
    --------
    ``d = 1``, ``Lambda = 1/4``, ``Sigma = 1``: ``Sigma*^{-1} = (1/2)/(3/2) = 1/3``,
    ``P = 2/3 - 1 < 0`` (infinite); ``Sigma = 3 = Sigma*``: ``P = 1/3``:

    >>> from flint import fmpq, fmpq_mat
    >>> from rfcheck.references.darkformer import second_moment_dets_exact
    >>> lam = fmpq_mat(1, 1, [fmpq(1, 4)])
    >>> second_moment_dets_exact(lam, fmpq_mat(1, 1, [1])) is None
    True
    >>> second_moment_dets_exact(lam, fmpq_mat(1, 1, [3])) == (3, fmpq(1, 3), fmpq(3, 2))
    True
    """
    half = fmpq(1, 2)
    eye = exact_identity(lam.nrows())
    sm = half * (sigma + sigma.transpose())
    ilam = eye + 2 * lam
    cinv = ilam.inv() * (eye - 2 * lam)
    pm = 2 * half * (cinv + cinv.transpose()) - sm.inv()
    pm = half * (pm + pm.transpose())
    if not positive_definite(pm):
        return None
    return sm.det(), pm.det(), ilam.det()


def expected_second_moment_ball(lam: fmpq_mat, sigma: fmpq_mat, bits: int) -> arb | str:
    """A ball containing ``E_{q,k ~ N(0, Lambda)} E_{w ~ N(0, Sigma)}[(p_I/psi)^2 Z^2]`` (eq 6 with ``m = 1``,
    ``E kappa^2`` not subtracted): ``exp`` of :func:`second_moment_dets_exact`'s log second moment,
    every determinant an exact rational.

    Parameters
    ----------
    lam : flint.fmpq_mat
        ``Lambda`` (symmetric, ``d x d``).
    sigma : flint.fmpq_mat
        The proposal covariance ``Sigma``.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb or str
        The ball, or a sentence saying the value is ``+inf`` (``P`` not positive definite).

    References
    ----------
    DARKFormer Lemma 3.1 (eq 5-7) and Theorem 3.2.

    Examples
    --------
    At ``Sigma = Sigma* = 3`` for ``Lambda = 1/4`` the second moment is the Cauchy-Schwarz optimum
    ``1/det(I - 2 Lambda) = 2``:

    >>> from flint import fmpq, fmpq_mat
    >>> from rfcheck.references.darkformer import expected_second_moment_ball
    >>> b = expected_second_moment_ball(fmpq_mat(1, 1, [fmpq(1, 4)]), fmpq_mat(1, 1, [3]), 100)
    >>> bool(b.contains(2)), bool(b.rad() < 1e-25)
    (True, True)
    >>> expected_second_moment_ball(fmpq_mat(1, 1, [fmpq(1, 4)]), fmpq_mat(1, 1, [1]), 100)[:1]
    'P'
    """
    dets = second_moment_dets_exact(lam, sigma)
    if dets is None:
        return "P = 2 Sigma*^{-1} - Sigma^{-1} is not positive definite (+inf)"
    det_s, det_p, det_ilam = dets
    with workprec(bits):
        return (_fmpq_ball(det_s).log() / 2 - _fmpq_ball(det_p).log() / 2 - _fmpq_ball(det_ilam).log()).exp()


def log_expected_variance_ball(lam: fmpq_mat, sigma: fmpq_mat, bits: int) -> arb | float | None:
    """``log V(N(0, Sigma))`` (:func:`rfcheck.closed_forms.darkformer.log_expected_variance`, ``m = 1``)
    on balls.

    ``V = E kappa^2 (sqrt(R) - 1)`` with ``R = exp(2 (L2 - K2)) = det Sigma det(I - 4 Lambda^2) /
    (det P det(I + 2 Lambda)^2)`` an exact rational (:func:`second_moment_dets_exact`) and
    ``E kappa^2 = det(I - 4 Lambda^2)^{-1/2}``.

    Parameters
    ----------
    lam : flint.fmpq_mat
        ``Lambda`` (symmetric, ``d x d``).
    sigma : flint.fmpq_mat
        The proposal covariance ``Sigma``.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb or float or None
        The ball of ``log V``; ``math.inf`` where ``P`` is not positive definite and ``-math.inf``
        where ``R = 1`` (zero variance), both decided exactly; None where ``R < 1``.

    References
    ----------
    DARKFormer eq (5)-(6), Theorem 3.2 (item 2 compares this at ``Sigma*`` and ``I``).

    Examples
    --------
    ``d = 1``, ``Lambda = 1/8``, ``Sigma = I``: ``V = (1 - 4/64)^{-1/2} (sqrt(R) - 1)``,
    ``R = det(I - 4 Lambda^2)/(det P det(I + 2 Lambda)^2) = (15/16)/((1/5)(25/16)) = 3``:

    >>> import math
    >>> from flint import arb, fmpq, fmpq_mat
    >>> from rfcheck.references.darkformer import log_expected_variance_ball
    >>> lam = fmpq_mat(1, 1, [fmpq(1, 8)])
    >>> b = log_expected_variance_ball(lam, fmpq_mat(1, 1, [1]), 100)
    >>> bool(b.overlaps(-(arb(15) / 16).log() / 2 + (arb(3).sqrt() - 1).log())), bool(b.rad() < 1e-25)
    (True, True)
    >>> log_expected_variance_ball(fmpq_mat(1, 1, [0]), fmpq_mat(1, 1, [1]), 100) == -math.inf
    True
    """
    dets = second_moment_dets_exact(lam, sigma)
    if dets is None:
        return math.inf
    det_s, det_p, det_ilam = dets
    det_k = (exact_identity(lam.nrows()) - 4 * lam * lam).det()
    r = det_s * det_k / (det_p * det_ilam**2)
    if r == 1:
        return -math.inf
    if r < 1:
        return None
    with workprec(bits):
        return -_fmpq_ball(det_k).log() / 2 + (_fmpq_ball(r).sqrt() - 1).log()


def whitening_residual_ball(q: np.ndarray, k: np.ndarray, u: np.ndarray, lam_eigs: np.ndarray,
                            bits: int) -> arb | str:
    """An upper bound, on balls, of the residuals of the two whitening identities of DARKFormer
    Proposition C.1 at the exact ``Lambda = U diag(l) U^T`` of the float64 ``U, l``.

    The identities: ``Cov(Mq) = M Lambda M^T = I`` for ``M = Lambda^{-1/2}``, and
    ``|q - k|^2_{Lambda^{-1}} = sum_i delta_i^2 / lambda_i`` with ``delta = U^T (q - k)``.  ``Lambda``
    is a ball containing the exact matrix; its eigendecomposition is enclosed rigorously (Arb's
    ``acb_mat_eig_simple``: eigenvalue balls ``E``, eigenvector balls ``R`` and ``L = R^{-1}``
    containing an exact eigenbasis), so ``Lambda^{-1/2} = R diag(E^{-1/2}) L`` and ``delta_i^2 =
    (r_i^T (q - k))^2 / (r_i^T r_i)`` (any scaling of ``r_i``) are enclosed: the residual balls
    contain the exact residuals, 0.

    Parameters
    ----------
    q, k : numpy.ndarray, shape (d,)
        The two vectors (float64, taken exactly).
    u : numpy.ndarray, shape (d, d)
        The rotation ``U``.
    lam_eigs : numpy.ndarray, shape (d,)
        The eigenvalues ``l`` (positive).
    bits : int
        Working precision in bits (near-multiple eigenvalues need more to be isolated).

    Returns
    -------
    flint.arb or str
        An upper bound of ``max(|M Lambda M^T - I|_1, rel)``, ``rel`` the residual of the second
        identity relative to ``|q - k|^2_{Lambda^{-1}}`` (absolute where ``q = k``); or a sentence
        saying why there is none (eigenvalues not isolated, or not separated from 0, or the
        quadratic form's ball not separated from 0).

    References
    ----------
    DARKFormer Proposition C.1 (App. C).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.darkformer import haar_rotation, whitening_residual_ball
    >>> b = whitening_residual_ball(np.array([1.0, -0.5]), np.array([0.25, 2.0]), haar_rotation(2, 3),
    ...                             np.array([0.5, 0.01]), 128)
    >>> bool(b < 1e-30), bool(b >= 0)
    (True, True)
    """
    d = len(q)
    with workprec(bits):
        um = arb_mat([[to_ball(x) for x in row] for row in u.tolist()])
        lam = um * arb_mat([[to_ball(float(lam_eigs[i])) if i == j else 0 for j in range(d)] for i in range(d)]) \
            * um.transpose()
        try:
            evb, left, right = acb_mat(lam).eig(left=True, right=True)
        except ValueError:
            return "Arb could not isolate the eigenvalues of Lambda (rigorous eigendecomposition failed)"
        if not all(e.real > 0 for e in evb):
            return "the eigenvalue balls of Lambda are not separated from 0"
        eye = acb_mat([[1 if i == j else 0 for j in range(d)] for i in range(d)])
        m_w = right * acb_mat([[1 / evb[i].sqrt() if i == j else 0 for j in range(d)] for i in range(d)]) * left
        res = m_w * acb_mat(lam) * m_w.transpose() - eye  # exactly 0 at the exact Lambda^{-1/2}
        r3 = [sum((abs(res[i, j]) for i in range(d)), arb(0)).upper() for j in range(d)]  # 1-norm: column sums
        dq = arb_mat([[to_ball(float(q[i])) - to_ball(float(k[i]))] for i in range(d)])
        quad = (dq.transpose() * lam.inv() * dq)[0, 0]
        terms = acb(0)
        for i in range(d):
            rd = sum((right[j, i] * dq[j, 0] for j in range(d)), acb(0))
            rr = sum((right[j, i] ** 2 for j in range(d)), acb(0))
            terms += rd ** 2 / (rr * evb[i])
        r4 = abs(quad - terms)
        if not np.array_equal(q, k):  # relative to |quad| > 0 (else to 1)
            if not quad > 0:
                return "the ball of |q-k|^2_{Lambda^-1} is not separated from 0"
            r4 = r4 / quad
        return max([*r3, r4.upper()])

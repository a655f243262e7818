"""rfcheck.references.darkformer: the quadrature references of the darkformer claims against
closed forms at 50 digits (which the quadratures never use), and the covariances the claims are
stated on."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rfcheck.references import darkformer as ref

TOL = mpmath.mpf(10) ** -45


@pytest.mark.parametrize("pt", [(1.0, 0.7, 1.0), (6.0, 6.0, 0.0), (2.0, 3.0, math.pi), (0.0, 1.5, 2.0)])
def test_prf_kernel_is_exp_of_the_dot_product_at_50_digits(pt):
    v, err = ref.prf_kernel(*pt, 50)
    with mpmath.workdps(60):
        exact = mpmath.exp(mpmath.mpf(pt[0]) * pt[1] * mpmath.cos(mpmath.mpf(pt[2])))
        assert abs(v - exact) <= err + abs(exact) * TOL
        assert err <= abs(exact) * mpmath.mpf(10) ** -40


@pytest.mark.parametrize("r,d,seed", [(1, 1, 0), (1, 3, 1), (2, 3, 2), (3, 3, 3)])
def test_sigma_prf_kernel_is_exp_of_the_sigma_product_at_50_digits(r, d, seed):
    rng = np.random.default_rng(seed)
    m, q, k = rng.standard_normal((r, d)) / math.sqrt(d), rng.standard_normal(d), rng.standard_normal(d)
    v, err = ref.sigma_prf_kernel(m, q, k, 50)
    with mpmath.workdps(60):
        mm, qm, km = (mpmath.matrix(a.tolist()) for a in (m, q, k))
        exact = mpmath.exp((qm.T * mm.T * mm * km)[0])
        assert abs(v - exact) <= err + abs(exact) * TOL


@pytest.mark.parametrize("a", [0.0, 0.1, 0.3, 0.45])
def test_lemma31_optimal_variance_for_gaussian_queries_at_50_digits(a):
    """D = N(0, a): int p_I B = E exp(x^2) = (1 - 2a)^{-1/2}, E kappa^2 = (1 - 4a^2)^{-1/2}, so
    V(psi*) = 1/(1 - 2a) - 1/sqrt(1 - 4a^2); psi = psi* (mix, eps = 0) has the same variance."""
    v_star, v_alt, err = ref.lemma31_variances("gauss", a, "mix", 0.0, 1.0, 0.0, 50)
    with mpmath.workdps(60):
        a_ = mpmath.mpf(a)
        exact = 1 / (1 - 2 * a_) - 1 / mpmath.sqrt(1 - 4 * a_ * a_)
        assert abs(v_star - exact) <= err + TOL
        assert abs(v_alt - v_star) <= err + TOL


@pytest.mark.parametrize("dist", ["gauss", "discrete"])
@pytest.mark.parametrize("alt,mu,s,eps", [("normal", 0.5, 1.3, 0.0), ("student", -0.3, 0.8, 0.0),
                                          ("mix", 0.7, 0.5, 0.4)])
def test_lemma31_competitors_have_larger_variance(dist, alt, mu, s, eps):
    v_star, v_alt, err = ref.lemma31_variances(dist, 0.2, alt, mu, s, eps, 30)
    assert v_alt > v_star + err


def test_lemma31_light_tailed_competitor_has_infinite_variance():
    """N(mu, s^2) with 1/(2 s^2) >= 1 - 4a/(1 + 2a): int p_I^2 B^2 / psi diverges."""
    v_star, v_alt, _ = ref.lemma31_variances("gauss", 0.2, "normal", 0.0, 0.5, 0.0, 30)
    assert v_alt == mpmath.inf and mpmath.isfinite(v_star)


@pytest.mark.parametrize("dist", ["gauss", "discrete"])
@pytest.mark.parametrize("s", [0.5, 0.7, 3.0])
def test_lemma31_mixture_with_eps_1_is_the_normal(dist, s):
    """(1 - eps) psi* + eps N(mu, s^2) at eps = 1 is N(mu, s^2): the same V(psi), +inf where that diverges
    (not a finite quadrature value of a divergent integral), finite and equal otherwise."""
    mix = ref.lemma31_variances(dist, 0.2, "mix", 0.1, s, 1.0, 30)
    normal = ref.lemma31_variances(dist, 0.2, "normal", 0.1, s, 0.0, 30)
    assert mix[0] == normal[0] and mix[1] == normal[1]
    tail = 1 - 4 * mpmath.mpf(0.2) / (1 + 2 * mpmath.mpf(0.2)) if dist == "gauss" else 1
    assert (mix[1] == mpmath.inf) == (1 / (2 * mpmath.mpf(s) ** 2) >= tail)


def test_lemma31_rejects_unknown_distributions():
    with pytest.raises(ValueError):
        ref.lemma31_variances("cauchy", 0.2, "normal", 0.0, 1.0, 0.0, 20)
    with pytest.raises(ValueError):
        ref.lemma31_variances("gauss", 0.2, "laplace", 0.0, 1.0, 0.0, 20)


@pytest.mark.parametrize("eigs,seed", [([0.2], 0), ([0.1, 0.3], 4), ([0.0, 0.25, 0.45, 0.05], 9)])
def test_optimal_second_moment_is_the_product_of_gaussian_mgfs(eigs, seed):
    v, err = ref.optimal_second_moment(ref.rotated_covariance(eigs, seed), 50)
    with mpmath.workdps(60):
        exact = mpmath.fprod(1 / (1 - 2 * mpmath.mpf(x)) for x in eigs)
        # the float64 Lambda's eigenvalues differ from eigs by rounding (~1e-16 relative)
        assert abs(v / exact - 1) <= 1e-13
    assert err <= abs(v) * 1e-40


def test_optimal_second_moment_at_50_digits_for_an_exact_lambda():
    lam = np.diag([0.125, 0.25])  # exact in float64
    v, err = ref.optimal_second_moment(lam, 50)
    with mpmath.workdps(60):
        assert abs(v - mpmath.mpf(1) / (mpmath.mpf(0.75) * mpmath.mpf(0.5))) <= err + TOL


@pytest.mark.parametrize("s,q,k", [(0.2, 1.5, -0.3), (1.0, 0.0, 0.0), (3.0, 1.5, 1.5), (1.7, -0.4, 0.9)])
def test_importance_weighting_sides_both_equal_exp_s_q_k(s, q, k):
    with mpmath.workdps(50):
        lhs, rhs, err = ref.importance_weighting_sides(s, q, k, 50)
    with mpmath.workdps(60):
        exact = mpmath.exp(mpmath.mpf(s) * q * k)
        assert abs(lhs - exact) <= err + abs(exact) * TOL
        assert abs(rhs - exact) <= err + abs(exact) * TOL


def test_rotated_covariance_keeps_eigenvalues_and_is_exact_when_isotropic():
    lam = ref.rotated_covariance([0.1, 0.2, 0.4], 3)
    assert np.array_equal(lam, lam.T)
    assert np.allclose(np.linalg.eigvalsh(lam), [0.1, 0.2, 0.4], rtol=0, atol=1e-15)
    assert np.abs(lam - np.diag(np.diag(lam))).max() > 1e-3  # not axis-aligned
    assert np.array_equal(ref.rotated_covariance([0.3, 0.3], 5), 0.3 * np.eye(2))
    u = ref.haar_rotation(4, 11)
    assert np.allclose(u @ u.T, np.eye(4), atol=1e-14)
    assert np.array_equal(ref.haar_rotation(1, 0), np.eye(1))


def test_importance_weighting_samples_both_estimate_exp_q_sigma_k():
    sig = ref.rotated_covariance([0.5, 1.5], 2)
    q, k = np.array([0.4, -0.2]), np.array([0.1, 0.7])
    a, b = ref.importance_weighting_samples(sig, q, k, 8, 50_000, seed=3)
    exact = math.exp(q @ sig @ k)
    for x in (a, b):
        assert abs(x.mean() - exact) < 5 * x.std() / math.sqrt(len(x))
    assert a.std() != b.std()

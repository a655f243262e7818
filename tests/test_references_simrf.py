"""rfcheck.references.simrf: each reference against an independent closed form or identity.

The references compute SimRF quantities from their definitions (quadratures, CDF derivatives,
direction averages); here they are compared with the hypergeometric closed forms of
rfcheck.closed_forms.simrf (mpmath faces) and with elementary identities.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from rfcheck.closed_forms import simrf as cf
from rfcheck.references import simrf as ref

MF = mpmath.mpf


def test_public_api_is_documented() -> None:
    for name in ref.__all__:
        fn = getattr(ref, name)
        assert fn.__doc__ and "Returns" in fn.__doc__, name
    assert cf.optimised_ensemble is ref.optimised_ensemble  # the old name stays importable


def test_series_and_ratio_series_sum_exp() -> None:
    with mpmath.workdps(40):
        x = MF(7) / 3
        assert abs(ref.series(lambda k: x**k / mpmath.factorial(k)) - mpmath.exp(x)) < MF(10) ** -38
        assert abs(ref.ratio_series(MF(1), lambda k: x / (k + 1)) - mpmath.exp(x)) < MF(10) ** -38
        # an alternating series (terms growing before they decay)
        assert abs(ref.series(lambda k: (-x) ** k / mpmath.factorial(k)) - mpmath.exp(-x)) < MF(10) ** -36


def test_two_precision_value_error_bar_covers_a_truncation() -> None:
    val, err = ref.two_precision_value(lambda: mpmath.quad(mpmath.exp, [0, 1]), 30)
    with mpmath.workdps(40):
        assert abs(val - (mpmath.e - 1)) <= err and err < MF(10) ** -25


@pytest.mark.parametrize("v,d,c", [(0.7, 3, 0.0), (1.5, 8, -1 / 7), (2.0, 5, 0.6), (1.0, 2, -1.0)])
def test_eq10_quadrature_matches_the_angle_closed_form(v: float, d: int, c: float) -> None:
    val, err = ref.eq10_quadrature(v, d, c)
    exact = float(cf.conformity_angle(v, d, c, backend="mpmath", dps=30))
    assert abs(val - exact) <= err + 1e-12 * exact
    assert err < 1e-10 * exact


@pytest.mark.parametrize("w,v,d", [(1.3, 0.7, 1), (1.3, 0.7, 2), (2.0, 1.5, 7), (4.0, 2.0, 30)])
def test_direction_average_is_the_eq10_bracket(w: float, v: float, d: int) -> None:
    with mpmath.workdps(30):
        val, err = ref.direction_average(MF(w), MF(v), d)
        exact = mpmath.hyp0f1(MF(d) / 2, (MF(v) * MF(w)) ** 2 / 4)  # E e^{w q.v} = 0F1(; d/2; v^2 w^2/4)
        assert abs(val - exact) <= err + abs(exact) * MF(10) ** -25


@pytest.mark.parametrize("w,d", [(0.3, 1), (1.7, 2), (3.0, 7), (12.0, 64)])
def test_cdf_derivatives_are_the_chi_densities(w: float, d: int) -> None:
    val, err = ref.cdf_derivative_sqrt2_chi(w, d, 30)
    with mpmath.workdps(40):
        exact = mpmath.exp(cf.log_pdf_wij_iid(w, d, backend="mpmath", dps=40))
        assert abs(val - exact) <= err and err < abs(exact) * MF(10) ** -20
    val, err = ref.cdf_derivative_chi2d(w, d, 30)
    with mpmath.workdps(40):
        exact = cf.pdf_wij_orf(w, d, backend="mpmath", dps=40)
        assert abs(val - exact) <= err and err < abs(exact) * MF(10) ** -20


@pytest.mark.parametrize("v", [0.0, 0.4, 1.5, 3.0])
def test_iid_mgf_quadrature_is_exp_v2(v: float) -> None:
    val, err = ref.iid_mgf_quadrature(v, 30)
    with mpmath.workdps(40):
        assert abs(val - mpmath.exp(MF(v) ** 2)) <= err and err < mpmath.exp(MF(v) ** 2) * MF(10) ** -20


@pytest.mark.parametrize("w,d,c", [(1.0, 2, 0.0), (2.5, 6, -0.5), (3.0, 4, 0.7)])
def test_pdf_angle_change_of_variables_matches_the_closed_form(w: float, d: int, c: float) -> None:
    # (as the ledger uses it: the quadrature at two precisions, their difference as the error bar)
    val, err = ref.two_precision_value(lambda: ref.pdf_angle_change_of_variables(w, d, c), 15)
    with mpmath.workdps(40):
        exact = cf.pdf_wij_angle(w, d, c, backend="mpmath", dps=40)
        assert abs(val - exact) <= err and err < abs(exact) * MF(10) ** -8


@pytest.mark.parametrize("z,d", [(0.3, 2), (1.0, 5), (2.5, 16)])
def test_rff_orf_covariance_is_1f1_of_minus_half_z2(z: float, d: int) -> None:
    exact = mpmath.hyp1f1(d, MF(d) / 2, -MF(z) ** 2 / 2)  # E cos(w_ij . z), w_ij ~ chi_{2d} direction-averaged
    assert abs(ref.rff_orf_covariance(z, d) - exact) < 1e-12


def test_optimised_ensemble_is_no_worse_than_the_simplex() -> None:
    from rfcheck.engine.montecarlo import simplex_matrix

    norms = np.array([1.0, 1.5, 0.8, 1.2])
    W, val = ref.optimised_ensemble(norms, 1.0, starts=1, seed=3)
    np.testing.assert_allclose(np.linalg.norm(W, axis=1), norms, rtol=1e-12)
    assert val == pytest.approx(cf.conformity_of_ensemble(W, 1.0), rel=1e-12)
    assert val <= cf.conformity_of_ensemble(norms[:, None] * simplex_matrix(4), 1.0) + 1e-12
    with pytest.raises(ValueError):
        ref.optimised_ensemble(np.array([1.0, -1.0]), 1.0)


@pytest.mark.parametrize("x", ["0", "1e-30", "0.7", "25", "400"])
def test_ratio_series_ball_encloses_exp_and_1f1(x: str) -> None:
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec

    with workprec(150):
        xb = arb(x)
        e = ref.ratio_series_ball(arb(1), lambda k: xb / (k + 1))
        f = ref.ratio_series_ball(arb(1), lambda k: xb * (k + 7) / ((k + 1) * (k + arb(7) / 2)))
    with mpmath.workdps(60):
        xm = MF(x)
        with workprec(400):
            for ball, exact in ((e, mpmath.exp(xm)), (f, mpmath.hyp1f1(7, MF(7) / 2, xm))):
                slack = arb(0, 1e-55 * float(exact))  # (the 60-digit value's own error)
                assert (ball + slack).contains(to_ball(exact)), (x, ball, exact)
    assert float(e.rad() / e.mid()) < 1e-40 and float(f.rad() / f.mid()) < 1e-40


@pytest.mark.parametrize("w,z,d", [(1.3, 0.7, 1), (1.3, 0.7, 2), (2.0, 3.5, 7), (6.0, 4.0, 30)])
def test_direction_average_cos_is_the_bessel_form(w: float, z: float, d: int) -> None:
    with mpmath.workdps(30):
        x = MF(w) * MF(z)
        exact = mpmath.cos(x) if d == 1 else (
            mpmath.gamma(MF(d) / 2) * (x / 2) ** (1 - MF(d) / 2) * mpmath.besselj(MF(d) / 2 - 1, x))
        assert abs(ref.direction_average_cos(MF(w), MF(z), d) - exact) < MF(10) ** -25


@pytest.mark.parametrize("w,d", [(1.0, 2), (2.5, 6), (3.0, 4), (0.4, 1)])
def test_cdf_angle_root_quadrature_at_a_right_angle_is_the_chi_2d_cdf(w: float, d: int) -> None:
    with mpmath.workdps(30):
        exact = mpmath.gammainc(d, 0, MF(w) ** 2 / 2, regularized=True)  # r1^2 + r2^2 ~ chi^2_{2d}
        assert abs(ref.cdf_angle_root_quadrature(w, d, 0.0) - exact) < MF(10) ** -20


def test_cdf_angle_root_quadrature_decreases_with_the_cosine() -> None:
    with mpmath.workdps(20):
        vals = [ref.cdf_angle_root_quadrature(2.5, 6, c) for c in (-0.5, 0.0, 0.5)]
    assert 0 < vals[2] < vals[1] < vals[0] < 1


# ------------------------------------------------------------ moved out of rfcheck.claims.simrf


def test_configuration_search_reaches_simplex_and_sees_worse_configurations() -> None:
    simplex, best, err = ref.configuration_search(8, 1.0, 1)
    assert best >= simplex - 10 * err
    assert best <= simplex * (1 + 1e-6)  # the optimiser does reach the simplex value
    obj = ref.configuration_objective(8, 1.0)
    assert obj(np.eye(8).ravel())[0] > simplex * (1 + 1e-3)  # orthogonal directions are worse


@pytest.mark.parametrize("d,v", [(3, 0.7), (5, 1.3)])
def test_configuration_objective_value_and_gradient(d: int, v: float) -> None:
    """The value is the mean of rho_theta over pairs (eq (21) closed form at 30 digits), and the
    gradient matches central finite differences."""
    obj = ref.configuration_objective(d, v)
    X = np.random.default_rng(1).standard_normal((d, d))
    val, grad = obj(X.ravel())
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    G = U @ U.T
    exact = np.mean([float(cf.conformity_angle(v, d, G[i, j], backend="mpmath", dps=30))
                     for i in range(d) for j in range(d) if i != j])
    assert abs(val - exact) <= obj.fit_err + 1e-12 * exact
    h = 1e-6
    fd = np.array([(obj(X.ravel() + h * e)[0] - obj(X.ravel() - h * e)[0]) / (2 * h) for e in np.eye(d * d)])
    np.testing.assert_allclose(grad, fd, atol=1e-6 * abs(val))


def test_equal_norm_minimum_reaches_the_lemma_a1_bound() -> None:
    d, v, w = 4, 1.0, 1.5
    bound = float(cf.equal_norm_conformity_bound(v, w, d, d))
    best = ref.equal_norm_minimum(v, w, d, starts=3, seed=0)
    assert bound <= best * (1 + 1e-10) and best <= bound * (1 + 1e-6)
    # a random configuration is above the minimum
    X = np.random.default_rng(0).standard_normal((d, d))
    assert cf.equal_norm_conformity(v, w, d, X) > best


@pytest.mark.parametrize("d", [1, 2, 3, 64, 512])
def test_chi_mean_and_small_v_coefficient(d: int) -> None:
    with mpmath.workdps(50):
        exact_mean = mpmath.sqrt(2) * mpmath.gamma(MF(d + 1) / 2) / mpmath.gamma(MF(d) / 2)
        assert abs(ref.chi_mean_quadrature(d) - exact_mean) < exact_mean * MF(10) ** -45
    if d < 2:
        return
    val, err = ref.simrf_mse_small_v_coefficient(d, 30)
    with mpmath.workdps(50):
        c = -1 / MF(d - 1)
        exact = 1 + (d - 1) * ((2 * d + 2 * c * exact_mean**2) / (2 * d) - 1)
        assert abs(val - exact) <= err and err < abs(exact) * MF(10) ** -20
        from flint import arb

        from rfcheck.arb_backend import to_ball

        ball = ref.simrf_mse_small_v_coefficient_ball(d, 200)
        assert (ball + arb(0, 1e-47)).contains(to_ball(exact))  # (the 50-digit value's own error)
        assert float(ball.rad()) < 1e-45


@pytest.mark.parametrize("d,k", [(1, 0), (2, 0), (7, 0), (2, 3), (9, 5), (300, 40)])
def test_sine_power_integral_is_the_binomial_wallis_sum(d: int, k: int) -> None:
    with mpmath.workdps(50):
        # int_0^pi sin^n = sqrt(pi) Gamma((n+1)/2) / Gamma(n/2 + 1), expanded binomially in (1 - sin/(d-1))^k
        wallis = [mpmath.sqrt(mpmath.pi) * mpmath.gamma(MF(n + 1) / 2) / mpmath.gamma(MF(n) / 2 + 1)
                  for n in range(d - 1, d + k)]
        c = -1 / MF(d - 1) if k else 0
        exact = mpmath.fsum(mpmath.binomial(k, q) * c**q * wallis[q] for q in range(k + 1))
        got = ref.sine_power_integral(d, k, mpmath.linspace(0, mpmath.pi, 9) if k else None)
        assert abs(got - exact) < abs(exact) * MF(10) ** -40
        if k == 0:
            from flint import arb

            from rfcheck.arb_backend import to_ball

            ball = ref.sine_power_integral_ball(d, 200)
            assert (ball + arb(0, 1e-48 * float(exact))).contains(to_ball(exact))
            assert float(ball.rad()) < 1e-45 * float(exact)


@pytest.mark.parametrize("v", [0.0, 0.4, 1.5, 5.0])
def test_iid_mgf_ball_encloses_exp_v2(v: float) -> None:
    from flint import arb

    from rfcheck.arb_backend import to_ball

    ball = ref.iid_mgf_ball(v, 200)
    with mpmath.workdps(60):
        exact = mpmath.exp(MF(v) ** 2)
    assert (ball + arb(0, 1e-55 * float(exact))).contains(to_ball(exact))
    assert float(ball.rad()) < 1e-45 * float(exact)


@pytest.mark.parametrize("z,d", [(0.0, 1), (0.3, 2), (1.5, 3), (5.0, 1024)])
def test_alternating_k2_series_ball_encloses_the_closed_form(z: float, d: int) -> None:
    from flint import arb

    from rfcheck.arb_backend import to_ball

    ball = ref.alternating_k2_series_ball(z, d, 200)
    with mpmath.workdps(60):
        # sum_k (-x)^k/k! k(k-1) = x^2 e^{-x}, x = z^2
        exact = -(MF(z) ** 4) * mpmath.exp(-(MF(z) ** 2)) / (2 * d)
    assert (ball + arb(0, 1e-55)).contains(to_ball(exact))
    assert float(ball.rad()) < 1e-45


@pytest.mark.parametrize("coupling,d,v", [("orf", 3, 0.5), ("simrf", 6, 0.7), ("iid", 4, 0.3)])
def test_pair_conformity_mc_matches_the_closed_form(coupling: str, d: int, v: float) -> None:
    est = ref.pair_conformity_mc(coupling, v, d, 200_000, 7)
    exact = float(cf.pair_conformity(v, d, coupling, backend="mpmath", dps=30))
    assert abs(est.value - exact) < 5 * est.se and est.trustworthy


@pytest.mark.parametrize("v,d,m,sq", [(0.7, 3, 2, 0.4), (1.5, 8, 8, 1.0), (0.0, 5, 3, 0.0)])
def test_prf_orthogonality_gap_quadrature_matches_the_closed_form(v: float, d: int, m: int, sq: float) -> None:
    val, err = ref.prf_orthogonality_gap_quadrature(v, d, m, sq, 30)
    with mpmath.workdps(50):
        rho_orf = mpmath.hyp1f1(d, MF(d) / 2, MF(v) ** 2 / 2)
        exact = mpmath.exp(-2 * MF(sq)) * MF(m - 1) / m * (mpmath.exp(MF(v) ** 2) - rho_orf)
        assert abs(val - exact) <= err + MF(10) ** -25 and err < 1e-9


def test_random_unit_rows_are_unit_and_reproducible() -> None:
    with mpmath.workdps(40):
        rows = ref.random_unit_rows(5, 4, 3)
        assert len(rows) == 5 and all(len(r) == 4 for r in rows)
        for r in rows:
            assert abs(mpmath.fsum(x * x for x in r) - 1) < MF(10) ** -38
        g = np.random.default_rng(3).standard_normal((5, 4))
        np.testing.assert_allclose([[float(x) for x in r] for r in rows], g / np.linalg.norm(g, axis=1, keepdims=True),
                                   rtol=1e-14)


@pytest.mark.parametrize("w,v,d", [(1.3, 0.7, 1), (1.3, 0.7, 2), (2.0, 1.5, 7), (30.0, 5.0, 256), (0.0, 1.0, 5)])
def test_direction_average_ball_encloses_0f1(w: float, v: float, d: int) -> None:
    from flint import arb

    from rfcheck.arb_backend import to_ball

    ball = ref.direction_average_ball(w, v, d, 200)
    with mpmath.workdps(60):
        exact = mpmath.hyp0f1(MF(d) / 2, (MF(v) * MF(w)) ** 2 / 4)  # E e^{w q.v} = 0F1(; d/2; v^2 w^2/4)
        assert (ball + arb(0, 1e-55 * float(exact))).contains(to_ball(exact))
    assert float(ball.rad()) < 1e-45 * float(exact)


@pytest.mark.parametrize("d,k", [(2, 3), (9, 5), (300, 40)])
def test_sine_power_integral_ball_with_the_binomial_factor(d: int, k: int) -> None:
    from flint import arb

    from rfcheck.arb_backend import to_ball

    ball = ref.sine_power_integral_ball(d, 200, k)
    with mpmath.workdps(60):
        exact = mpmath.quad(lambda x: mpmath.sin(x) ** (d - 1) * (1 - mpmath.sin(x) / (d - 1)) ** k,
                            mpmath.linspace(0, mpmath.pi, 17))
        assert (ball + arb(0, 1e-50 * float(exact))).contains(to_ball(exact))
    assert float(ball.rad()) < 1e-45 * float(exact)


@pytest.mark.parametrize("z,d", [(0.0, 1), (1.5, 3), (5.0, 1024)])
def test_alternating_k2_series_is_the_closed_form(z: float, d: int) -> None:
    val, err = ref.alternating_k2_series(z, d, 30)
    with mpmath.workdps(50):
        exact = -(MF(z) ** 4) * mpmath.exp(-(MF(z) ** 2)) / (2 * d)  # sum_k (-x)^k/k! k(k-1) = x^2 e^{-x}
        assert abs(val - exact) <= err and err < abs(exact) * MF(10) ** -20 + MF(10) ** -29


@pytest.mark.parametrize("d,k", [(1, 0), (2, 2), (7, 5), (4096, 200)])
def test_gamma_ratio_product_is_the_gamma_ratio(d: int, k: int) -> None:
    with mpmath.workdps(50):
        exact = mpmath.gamma(k + d) * mpmath.gamma(MF(d) / 2) / (2**k * mpmath.gamma(k + MF(d) / 2) * mpmath.gamma(d))
        assert abs(ref.gamma_ratio_product(d, k) - exact) < exact * MF(10) ** -45


@pytest.mark.parametrize("z,d,m", [(0.3, 2, 2), (1.0, 5, 3), (2.5, 16, 16)])
def test_rff_mse_ratio_exact_is_the_ratio_of_the_eq74_mses(z: float, d: int, m: int) -> None:
    with mpmath.workdps(40):
        got = ref.rff_mse_ratio_exact(MF(z), d, m)
    assert float(got) == pytest.approx(float(cf.rff_mse(z, d, m, "orf") / cf.rff_mse(z, d, m, "iid")), rel=1e-11)
    assert float(got) == pytest.approx(float(cf.rff_mse_ratio_orf_iid(z, d, m)), rel=1e-11)


def test_simrf_plus_draw_shares_the_norms() -> None:
    from rfcheck.engine import couplings

    a, b, norms = ref.simrf_plus_draw(6, 1.0, 5)
    W0 = couplings.sample_ensemble("simrf", 6, 6, seed=5)
    W1, _ = couplings.sample_simrf_plus(6, 6, seed=5)
    np.testing.assert_allclose(np.sort(np.linalg.norm(W1, axis=1)), np.sort(norms), rtol=1e-12)
    assert a == cf.conformity_of_ensemble(W1, 1.0) and b == cf.conformity_of_ensemble(W0, 1.0)
    assert a <= b  # SimRF+ at small v (sec 3.2)

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

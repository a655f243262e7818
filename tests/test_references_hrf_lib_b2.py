"""Reference quantities of ``rfcheck.references.hrf`` that the claims of the second part of ``rfcheck.claims.hrf``
(eq 19, eq 76/80, the lambda range of appendix F and the feature-count rate of appendix D.4) used to compute
inline.  Each value is compared with an independent 50-digit computation by another method (Sheppard's closed form
of the sign-product mean, the law of cosines, the lambda-moments of the general pair, the block count of the
feature map); each ball must contain that value and exclude a planted wrong one."""

from __future__ import annotations

import itertools

import mpmath
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.backends import MP
from rfcheck.references import hrf as refs

BITS = 160
DPS = 50


def _arb(v: mpmath.mpf) -> arb:
    with workprec(BITS + 64):
        return arb(mpmath.nstr(v, 60))


# ------------------------------------------------------------------ sign_feature_lambda_mean (eq 19)


def _sheppard_mean(theta: float) -> mpmath.mpf:
    """``1/2 - E[sgn sgn]/2`` with Sheppard's ``E[sgn(g.x) sgn(g.y)] = 1 - 2 theta/pi`` (50 digits)."""
    with mpmath.workdps(DPS + 10):
        return mpmath.mpf(1) / 2 - (1 - 2 * mpmath.mpf(theta) / mpmath.pi) / 2


@pytest.mark.parametrize(("theta", "n"), [(0.0, 1), (0.3, 2), (1.0, 7), (1.5707963267948966, 100), (3.0, 10_000),
                                          (3.141592653589793, 5)])
def test_sign_feature_lambda_mean_is_sheppards_value(theta: float, n: int) -> None:
    v, e = refs.sign_feature_lambda_mean(theta, n, DPS)
    exact = _sheppard_mean(theta)
    with mpmath.workdps(DPS + 10):
        assert v.imag == 0
        assert abs(v.real - exact) <= e
        assert e < mpmath.mpf(10) ** (-DPS + 2)
        assert abs(v.real - (exact + mpmath.mpf(10) ** -30)) > e  # a planted wrong value is outside the error bar


def test_sign_feature_lambda_mean_does_not_depend_on_n() -> None:
    with mpmath.workdps(DPS + 10):
        a, _ = refs.sign_feature_lambda_mean(2.0, 1, DPS)
        b, _ = refs.sign_feature_lambda_mean(2.0, 999, DPS)
        assert abs(a - b) < mpmath.mpf(10) ** (-DPS)


@pytest.mark.parametrize(("theta", "n"), [(0.0, 1), (0.3, 2), (1.0, 7), (2.5, 10_000), (3.141592653589793, 3)])
def test_sign_feature_lambda_mean_ball_contains_sheppards_value(theta: float, n: int) -> None:
    b = refs.sign_feature_lambda_mean_ball(theta, n, BITS)
    exact = _arb(_sheppard_mean(theta))
    with workprec(BITS + 64):
        assert b.imag.contains(0)
        assert b.real.overlaps(exact)
        assert b.real.rad() < arb(10) ** -40
        assert not b.real.overlaps(exact + arb(10) ** -30)


def test_sign_feature_lambda_mean_ball_rejects_angles_outside_0_pi() -> None:
    with pytest.raises(ValueError, match="theta"):
        refs.sign_feature_lambda_mean_ball(3.5, 2, 64)


# ------------------------------------------------------------------ same_length_distance_sq (eq 76, 80)


@pytest.mark.parametrize(("r", "theta"), [(0.0, 1.0), (0.5, 0.0), (1.0, 1.0), (2.5, 1.5707963267948966),
                                          (10.0, 3.141592653589793), (3.0, 0.001)])
def test_same_length_distance_sq_is_the_law_of_cosines(r: float, theta: float) -> None:
    with mpmath.workdps(DPS + 20):  # 20 guard digits: 1 - cos(theta) cancels for small theta
        exact = 2 * mpmath.mpf(r) ** 2 * (1 - mpmath.cos(mpmath.mpf(theta)))
    with mpmath.workdps(DPS):
        v = refs.same_length_distance_sq(MP, r, theta)
        assert abs(v - exact) <= mpmath.mpf(10) ** (-DPS + 3) * (1 + abs(exact))
    b = refs.on_balls(refs.same_length_distance_sq, r, theta, bits=BITS)
    with workprec(BITS + 64):
        assert b.overlaps(_arb(exact))
        assert not b.overlaps(_arb(exact) + arb(10) ** -30 * (1 + abs(_arb(exact))))


def test_same_length_distance_sq_is_zero_at_theta_0_and_4r2_at_pi() -> None:
    with mpmath.workdps(DPS):
        assert refs.same_length_distance_sq(MP, 1.7, 0) == 0
        assert abs(refs.same_length_distance_sq(MP, 1.5, mpmath.pi) - 9) < mpmath.mpf(10) ** (-DPS + 2)


# ------------------------------------------------------------------ gauss_lambda_same_length (eq 67-68, 76)


@pytest.mark.parametrize(("r", "theta", "sigma"), [(0.05, 1.0, 0.1), (1.0, 0.5, 1.0), (1.5, 2.0, 0.7),
                                                   (3.0, 3.141592653589793, 2.0), (5.0, 1.5707963267948966, 3.0)])
def test_gauss_lambda_same_length_is_the_general_pair_lambda(r: float, theta: float, sigma: float) -> None:
    with mpmath.workdps(DPS):
        exact = refs.gauss_lambda_moments(MP, r, r, theta, 4, sigma, r)[0]  # E lam_hat = lambda, law of cosines
        v = refs.gauss_lambda_same_length(MP, r, theta, sigma)
        assert abs(v - exact) <= mpmath.mpf(10) ** (-DPS + 5)
        assert 0 <= v <= 1 + mpmath.mpf(10) ** (-DPS + 5)
    b = refs.on_balls(refs.gauss_lambda_same_length, r, theta, sigma, bits=BITS)
    with workprec(BITS + 64):
        assert b.overlaps(_arb(exact))
        assert not b.overlaps(_arb(exact) + arb(10) ** -30)


def test_gauss_lambda_same_length_is_one_at_pi_and_zero_at_0() -> None:
    with mpmath.workdps(DPS):
        assert refs.gauss_lambda_same_length(MP, 1.3, 0, 0.9) == 0
        assert abs(refs.gauss_lambda_same_length(MP, 1.3, mpmath.pi, 0.9) - 1) < mpmath.mpf(10) ** (-DPS + 3)


# ------------------------------------------------------------------ hrf_feature_dim_exponent (appendix D.4)


def _exponent_from_block_count(m: int, n: int, s: int) -> mpmath.mpf:
    """``log(d(2s)/d(s))/log 4`` with ``d(s) = 4 s m + 4 s^2 m n`` summed exactly (50 digits)."""
    def d(k: int) -> int:
        return 4 * k * m + 4 * (k * m) * (k * n)

    with mpmath.workdps(DPS):
        return mpmath.log(mpmath.mpf(d(2 * s)) / d(s)) / mpmath.log(4)


@pytest.mark.parametrize(("m", "n", "s"), [(1, 1, 1), (3, 5, 2), (64, 64, 10), (2, 7, 10**6), (1, 1, 10**12)])
def test_hrf_feature_dim_exponent_is_the_block_count_slope(m: int, n: int, s: int) -> None:
    v = refs.hrf_feature_dim_exponent(m, n, s, DPS)
    exact = _exponent_from_block_count(m, n, s)
    with mpmath.workdps(DPS):
        assert abs(v - exact) < mpmath.mpf(10) ** (-DPS + 3)
        assert abs(v - (exact + mpmath.mpf(10) ** -20)) > mpmath.mpf(10) ** (-DPS + 3)


def test_hrf_feature_dim_exponent_increases_to_one_not_one_half() -> None:
    vals = [refs.hrf_feature_dim_exponent(3, 4, s, DPS) for s in (1, 10, 10**3, 10**6, 10**9)]
    assert all(a < b for a, b in itertools.pairwise(vals))
    assert all(v < 1 for v in vals)
    assert abs(vals[-1] - 1) < 1e-9
    assert vals[0] > 0.5


def test_hrf_feature_dim_exponent_rejects_scale_zero() -> None:
    with pytest.raises(ValueError, match="m >= 1"):
        refs.hrf_feature_dim_exponent(3, 4, 0, DPS)


# ------------------------------------------------------------------ inf_diagonal_residual_sq (eq 88)


@pytest.mark.parametrize(("ri", "rj"), [(1.0, 4.0), (-0.3, -1.7), (2.0, 0.001), (1.5, -2.0), (-0.2, 1.9)])
def test_inf_diagonal_residual_sq_is_the_closed_form(ri: float, rj: float) -> None:
    """``inf_{a > 0} (a r_i + r_j/a)^2`` is ``4 r_i r_j`` for ``r_i r_j > 0`` (AM-GM) and 0 otherwise."""
    with mpmath.workdps(DPS + 10):
        v = refs.inf_diagonal_residual_sq(mpmath.mpf(ri), mpmath.mpf(rj), DPS)
        exact = 4 * mpmath.mpf(ri) * mpmath.mpf(rj) if ri * rj > 0 else mpmath.mpf(0)
        assert abs(v - exact) <= mpmath.mpf(10) ** (5 - DPS) * (abs(exact) + 1)
        # a planted wrong value (the square of the sum at a = 1) is far from it
        assert abs((mpmath.mpf(ri) + mpmath.mpf(rj)) ** 2 - v) > mpmath.mpf(10) ** -3


def test_inf_diagonal_residual_sq_is_below_every_sampled_a() -> None:
    """The minimum is at most the objective at any ``a > 0`` (a property, no closed form used)."""
    with mpmath.workdps(DPS + 10):
        ri, rj = mpmath.mpf("0.83"), mpmath.mpf("-1.21")
        v = refs.inf_diagonal_residual_sq(ri, rj, DPS)
        assert all(v <= (a * ri + rj / a) ** 2 + mpmath.mpf(10) ** (-DPS) for a in mpmath.linspace(0.01, 10, 97))


def test_inf_diagonal_residual_sq_stops_at_the_end_of_its_interval_when_not_attained() -> None:
    """With ``r_j = 0`` the infimum 0 is only approached (a -> 0): the value found is the objective at ``a = e^-30``."""
    with mpmath.workdps(DPS + 10):
        v = refs.inf_diagonal_residual_sq(mpmath.mpf("0.7"), mpmath.mpf(0), DPS)
        edge = (mpmath.exp(-30) * mpmath.mpf("0.7")) ** 2
        assert 0 < v and abs(v - edge) <= mpmath.mpf(10) ** (5 - DPS) * edge

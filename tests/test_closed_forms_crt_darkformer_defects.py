"""Regression tests for numerical defects found by an audit of ``closed_forms.crt`` and
``closed_forms.darkformer`` (cancellation, silent underflow, wrong error kinds).

Every value is checked against an independent mpmath reference at >= 60 digits, computed
from the defining expressions (never from the library's rearrangements).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rfcheck.closed_forms import crt
from rfcheck.closed_forms import darkformer as df

EPS = float(np.finfo(float).eps)


def _mp(v: float) -> mpmath.mpf:
    return mpmath.mpf(float(v))


# ------------------------------------------------------------------ 1. set_stats cancellation


def _ref_set_stats(x: np.ndarray, y: np.ndarray) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Means over all pairs of |x_i + y_j|^2 and |x_i - y_j|^2, pair by pair in mpmath."""
    with mpmath.workdps(60):
        ssum = sdiff = mpmath.mpf(0)
        for xi in x:
            for yj in y:
                ssum += mpmath.fsum((_mp(a) + _mp(b)) ** 2 for a, b in zip(xi, yj, strict=True))
                sdiff += mpmath.fsum((_mp(a) - _mp(b)) ** 2 for a, b in zip(xi, yj, strict=True))
        n = len(x) * len(y)
        return ssum / n, sdiff / n


@pytest.mark.parametrize("sign", [1, -1])
def test_set_stats_close_sets_keep_digits(sign):
    x = np.array([[1.0, 2.0, 3.0]])
    y = sign * np.array([[1.0, 2.0, 3 + 3e-8]])
    st = crt.set_stats(x, y)
    ref_sum, ref_diff = _ref_set_stats(x, y)
    small, ref_small = (st["sq_diff"], ref_diff) if sign == 1 else (st["sq_sum"], ref_sum)
    assert abs(small - ref_small) <= 1e-14 * ref_small, (small, ref_small)  # ~9e-16, was 0.0
    big, ref_big = (st["sq_sum"], ref_sum) if sign == 1 else (st["sq_diff"], ref_diff)
    assert abs(big - ref_big) <= 4 * EPS * ref_big


@pytest.mark.parametrize("sign", [1, -1])
def test_set_stats_sets_of_several_points(sign):
    rng = np.random.default_rng(3)
    c = np.array([1.0, 2.0, 3.0])
    x = c + 1e-6 * rng.normal(size=(4, 3))  # two small clouds around +-c: |x_i -+ y_j| ~ 1e-6
    y = sign * (c + 1e-6 * rng.normal(size=(5, 3)))
    st = crt.set_stats(x, y)
    ref_sum, ref_diff = _ref_set_stats(x, y)
    assert abs(st["sq_diff"] - ref_diff) <= 1e-14 * ref_diff
    assert abs(st["sq_sum"] - ref_sum) <= 1e-14 * ref_sum
    # the definition is unchanged: sq_sum + sq_diff = 2 (sq_x + sq_y), xy = mean x_i . y_j
    assert st["sq_sum"] + st["sq_diff"] == pytest.approx(2 * (st["sq_x"] + st["sq_y"]), rel=4 * EPS)
    assert st["xy"] == pytest.approx(float(np.mean(x @ y.T)), rel=1e-14)


def test_trig_log_variance_of_set_stats_is_finite():
    x = np.array([[1.0, 2.0, 3.0]])
    y = np.array([[1.0, 2.0, 3 + 3e-8]])
    st = crt.set_stats(x, y)
    got = crt.trig_log_variance(st["sq_x"], st["sq_y"], st["sq_sum"], st["sq_diff"], st["d"])
    with mpmath.workdps(60):
        sd = (_mp(3 + 3e-8) - 3) ** 2
        ref = mpmath.log((1 - mpmath.exp(-sd)) ** 2 / 2)  # CRT sec 2.2, (1 - K^2)^2 / 2
    assert abs(got - ref) <= 1e-13 * abs(ref), (got, ref)  # -69.98, was -inf


# ------------------------------------------------------------- 2. mu = log(Var OPRF / Var PosRF)


def _ref_mu(u: float, d: int) -> mpmath.mpf:
    """Eq (22) root and the OPRF exponent, straight, at 120 + 2 log10(1/u) digits (the root
    formula cancels ~log10(1/u) digits, log((1 + rho)/(2 sqrt(rho))) ~ u^2 twice that)."""
    with mpmath.workdps(120 + 2 * max(0, int(-math.log10(u)))):
        u, d = _mp(u), mpmath.mpf(d)
        rho = (-(2 * u + d) + mpmath.sqrt((2 * u + d) ** 2 + 8 * d * u)) / (4 * u)
        delta = rho * u + d * mpmath.log((1 + rho) / (2 * mpmath.sqrt(rho)))
        return mpmath.log(mpmath.expm1(delta) / mpmath.expm1(u))


@pytest.mark.parametrize(("u", "d"), [(1e-8, 10000), (1e-20, 1), (1e-300, 3), (1e-3, 64), (0.3, 10000)])
def test_oprf_log_variance_ratio_small_u_is_relatively_accurate(u, d):
    got = float(crt.oprf_log_variance_ratio(u, d))
    ref = _ref_mu(u, d)
    assert abs(got - ref) <= 8 * EPS * abs(ref), (got, ref)


def test_oprf_log_variance_ratio_across_magnitudes_relative():
    for d in (1, 3, 64, 1024):
        us = np.geomspace(1e-30, 1e4, 60)
        got = crt.oprf_log_variance_ratio(us, d)
        for u, g in zip(us, got, strict=True):
            ref = _ref_mu(u, d)
            assert abs(g - ref) <= 32 * EPS * abs(ref), (u, d, g, ref)


def test_oprf_log_variance_ratio_mpmath_face_keeps_its_digits():
    got = crt.oprf_log_variance_ratio(1e-8, 10000, backend="mpmath", dps=50)
    ref = _ref_mu(1e-8, 10000)
    with mpmath.workdps(60):
        assert abs(got - ref) <= mpmath.mpf("1e-45") * abs(ref)
    assert crt.oprf_log_variance_ratio(0.0, 3, backend="mpmath") == 0


# ------------------------------------------------------------- 3. impossible DIRF statistics


def test_poisson_rejects_statistics_that_break_cauchy_schwarz():
    with pytest.raises(ValueError, match="Cauchy-Schwarz"):
        crt.poisson_log_variance(0.0, 5.0, 1.0, 1, 1.0)
    with pytest.raises(ValueError, match="Cauchy-Schwarz"):
        crt.poisson_log_variance(1.0, 3.0, 1.0, 4, 1.0, backend="mpmath")  # 3 > sqrt(4 * 1)


def test_poisson_accepts_equality_up_to_rounding():
    # d = 1, x = y = 0.7: x.y = sqrt(d q); a relative excess of 1e-15 is rounding, not an error
    q, xy = 0.7**4, 0.7**2 * (1 + 1e-15)
    got = crt.poisson_log_variance(q, xy, 0.0, 1, 0.7**2)
    assert got == -math.inf or np.isfinite(got)


def test_geometric_rejects_statistics_that_break_the_triangle_inequality():
    with pytest.raises(ValueError, match="triangle inequality"):
        crt.geometric_log_variance([0.1], 5.0, 1.0, 0.5)
    with pytest.raises(ValueError, match="triangle inequality"):
        crt.geometric_log_variance([0.1], 5.0, 1.0, 0.5, backend="mpmath")
    # consistent statistics (x.y = sum |x_l y_l| up to rounding) are accepted
    a = np.array([0.3, 0.2, 0.1])
    got = crt.geometric_log_variance(a, float(np.sum(a)) * (1 + 1e-15), 0.0, 0.5)
    assert np.isfinite(got)


# ------------------------------------------------------------- 4. log_i0, log_expm1


@pytest.mark.parametrize("t", [1e-8, -1e-8, 1e-3, 0.01, 0.1, 0.5, -0.9, 1.5, 30.0])
def test_log_i0_relative_accuracy(t):
    got = float(crt.log_i0(t))
    with mpmath.workdps(80):
        ref = mpmath.log(mpmath.besseli(0, _mp(t)))
    assert abs(got - ref) <= 4 * EPS * abs(ref), (t, got, ref)
    got_mp = crt.log_i0(t, backend="mpmath", dps=50)
    with mpmath.workdps(80):
        assert abs(got_mp - ref) <= mpmath.mpf("1e-48") * abs(ref)


@pytest.mark.parametrize("t", [math.nan, math.inf, -math.inf, 0.5 + 1j])
def test_log_i0_rejects_non_finite_or_complex(t):
    with pytest.raises(ValueError, match="real"):
        crt.log_i0(t)


@pytest.mark.parametrize("t", [-1.0, math.nan, np.array([0.5, -1e-300])])
def test_log_expm1_rejects_negative_or_nan(t):
    with pytest.raises(ValueError, match="t >= 0"):
        crt.log_expm1(t)


def test_log_expm1_still_covers_its_domain():
    assert crt.log_expm1(0.0) == -math.inf
    with mpmath.workdps(60):
        for t in (1e-300, 1e-8, 1.0, 800.0):
            ref = mpmath.log(mpmath.expm1(_mp(t)))
            assert abs(crt.log_expm1(t) - ref) <= 2 * EPS * abs(ref)


# ------------------------------------------------------------- 5. value-space underflow


def test_value_space_refuses_to_underflow():
    with pytest.raises(ValueError, match="positive_variance is below the float64 normal range"):
        crt.positive_variance(200.5, 200.5, 2.0, 800.0, 3)
    with pytest.raises(ValueError, match="trig_variance is below the float64 normal range"):
        crt.trig_variance(1, 1, 4 - 1e-162, 1e-162, 3)
    # the log form and the mpmath face hold the value
    lv = crt.positive_log_variance(200.5, 200.5, 2.0, 800.0, 3)
    with mpmath.workdps(60):
        ref = -800 + mpmath.log(mpmath.expm1(2))  # exp(4 x.y) - K^2 = K^2 expm1(|x+y|^2)
    assert abs(lv - ref) <= 4 * EPS * abs(ref)
    v = crt.positive_variance(200.5, 200.5, 2.0, 800.0, 3, backend="mpmath", dps=30)
    with mpmath.workdps(60):
        assert abs(v - mpmath.exp(ref)) <= mpmath.mpf("1e-25") * mpmath.exp(ref)


def test_value_space_exact_zero_and_normal_values_pass():
    assert crt.trig_variance(1.0, 1.0, 4.0, 0.0, 3) == 0.0  # x = y: exactly zero, not underflow
    small = crt.positive_variance(150.0, 150.0, 2.0, 598.0, 3)  # ~ e^-596, a normal float64
    assert small > 0 and np.isfinite(small)


# ------------------------------------------------------------- 6. extreme inputs, error kinds


def test_oprf_rho_and_a_star_for_huge_u():
    with mpmath.workdps(60):
        u, d = _mp(1e300), mpmath.mpf(1)
        rho = 2 * d / ((2 * u + d) + mpmath.sqrt((2 * u + d) ** 2 + 8 * d * u))
        a = (1 - 1 / rho) / 8
    for got, ref in ((crt.oprf_rho_star(1e300, 1), rho), (crt.oprf_a_star(1e300, 1), a)):
        assert abs(got - ref) <= 4 * EPS * abs(ref), (got, ref)
    arr_rho = crt.oprf_rho_star(np.array([1e300, 0.3]), 1)
    arr_a = crt.oprf_a_star(np.array([1e300, 0.3]), 1)
    assert abs(arr_rho[0] - rho) <= 4 * EPS * rho and abs(arr_a[0] - a) <= 4 * EPS * abs(a)
    assert arr_rho[1] == crt.oprf_rho_star(0.3, 1) and arr_a[1] == crt.oprf_a_star(0.3, 1)


@pytest.mark.parametrize(("a", "d"), [(-1, 2000), (-2.5e199, 8)])
def test_gerf_coefficients_outside_float64_raise_value_error(a, d):
    with pytest.raises(ValueError, match="float64 range"):
        crt.gerf_coefficients(a, 1, d)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (crt.oprf_log_variance, (np.array([0.3 + 1j]), 0.2, 0.9, 0.1, 3)),
        (crt.positive_log_variance, (0.3, 0.2, np.array([0.9 + 0j]), 0.1, 3)),
        (crt.oprf_rho_star, (np.array([0.3 + 1j]), 3)),
        (crt.oprf_log_variance_ratio, (0.3 + 1j, 3)),
        (crt.poisson_log_variance, (0.3, 0.1 + 1j, 0.2, 3, 1.0)),
        (crt.geometric_log_variance, (np.array([0.1 + 1j]), 0.0, 0.2, 0.5)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_complex_input_is_rejected(fn, args):
    with pytest.raises(ValueError, match="must be real"):
        fn(*args)


# ------------------------------------------------------------------------- 7. DARKFormer


def _ref_log_v(lam: np.ndarray, sigma: np.ndarray) -> mpmath.mpf:
    """log V of the module docstring, from the float matrices at 80 digits:
    det(Sigma)^{1/2} det(2 Sigma*^{-1} - Sigma^{-1})^{-1/2} / det(I + 2 Lambda) - det(I - 4 Lambda^2)^{-1/2}."""
    with mpmath.workdps(80):
        lm, sm = mpmath.matrix(lam.tolist()), mpmath.matrix(sigma.tolist())
        eye = mpmath.eye(lm.rows)
        p = 2 * mpmath.inverse(eye + 2 * lm) * (eye - 2 * lm) - mpmath.inverse(sm)
        first = mpmath.sqrt(mpmath.det(sm) / mpmath.det(p)) / mpmath.det(eye + 2 * lm)
        return mpmath.log(first - 1 / mpmath.sqrt(mpmath.det(eye - 4 * lm * lm)))


@pytest.mark.parametrize(
    ("lam", "sigma"),
    [
        (1e-12 * np.eye(1), np.eye(1)),
        (np.diag([1e-10, 3e-9]), np.eye(2)),
        (np.diag([2e-9, 1e-8, 5e-10]), np.diag([1 + 1e-9, 1 - 2e-9, 1.0])),
        (np.diag([1e-6, 4e-6]), np.diag([1.25, 0.75])),
    ],
)
def test_log_expected_variance_small_lambda(lam, sigma):
    got = df.log_expected_variance(lam, sigma)
    ref = _ref_log_v(lam, sigma)
    assert abs(got - ref) <= 1e-13 * abs(ref), (got, ref)  # V to ~1e-12 relative, was 2e-5


def test_log_expected_variance_small_lambda_rotated():
    rng = np.random.default_rng(7)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    lam = (q * np.array([1e-11, 3e-10, 2e-9])) @ q.T
    lam = 0.5 * (lam + lam.T)
    got = df.log_expected_variance(lam, np.eye(3))
    ref = _ref_log_v(lam, np.eye(3))
    assert abs(got - ref) <= 1e-11 * abs(ref), (got, ref)


@pytest.mark.parametrize("m", [-1, 0, 1.5, math.nan, True])
def test_optimal_variance_needs_a_positive_integer_m(m):
    with pytest.raises(ValueError, match="m must be an integer >= 1"):
        df.optimal_variance(0.1 * np.eye(2), m)


def test_optimal_variance_valid_m():
    lam = np.diag([0.1, 0.05])
    v1, v3 = df.optimal_variance(lam, 1), df.optimal_variance(lam, 3)
    with mpmath.workdps(60):
        ev = [_mp(0.1), _mp(0.05)]
        ref = mpmath.fprod(1 / (1 - 2 * e) for e in ev) - mpmath.fprod(1 / mpmath.sqrt(1 - 4 * e * e) for e in ev)
    assert abs(v1 - ref) <= 1e-14 * ref and abs(v3 - ref / 3) <= 1e-14 * ref / 3


@pytest.mark.parametrize(("lam", "s"), [(np.array([0.1 + 0.1j]), 1.0), (0.1, np.array([1.0 + 1j]))])
def test_coord_log_second_moment_rejects_complex(lam, s):
    with pytest.raises(ValueError, match="must be real"):
        df.coord_log_second_moment(lam, s)

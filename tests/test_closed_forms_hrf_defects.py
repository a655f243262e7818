"""Regression tests for numerical defects of ``rfcheck.closed_forms.hrf`` found by an audit.

Each reference is computed here from the defining expression in mpmath at 60 (or 400) digits,
independently of the module: Lemma 2.2 eq (7) for the base MSEs, Thm 3.1 eq (22)-(23) for the
bipolar hybrid, eq (67)-(73) for the Gaussian lambda, eq (16) for the complex exponential.
Tolerances: float64 results to ``1e-13`` relative (``max(1, |ref|)`` for log values).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rfcheck.closed_forms import hrf

RTOL = 1e-13
DPS = 60


def _close(val: float, ref: mpmath.mpf) -> bool:
    return abs(val - float(ref)) <= RTOL * max(1.0, abs(float(ref)))


# ------------------------------------------------------------------ independent references


def _ref_base(nx: float, ny: float, theta: float, m: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``(MSE(SM^++_m), MSE(SM^trig_m))`` of Lemma 2.2 eq (7), at the working precision."""
    nx, ny, theta = mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta)
    dot = nx * ny * mpmath.cos(theta)
    d2 = nx**2 + ny**2 - 2 * dot  # |x - y|^2
    z2 = nx**2 + ny**2 + 2 * dot  # |x + y|^2
    pos = mpmath.exp(2 * z2 - nx**2 - ny**2) * (1 - mpmath.exp(-z2)) ** 2 / (2 * m)
    trig = mpmath.exp(nx**2 + ny**2) * (1 - mpmath.exp(-d2)) ** 2 / (2 * m)
    return pos, trig


def _ref_log_bipolar(nx, ny, theta, m, e2, o2, c, shared) -> mpmath.mpf:
    """log of Thm 3.1 eq (22) (``shared=0``) / eq (23) (``shared=1``), at the working precision."""
    pos, trig = _ref_base(nx, ny, theta, m)
    nx, ny, theta = mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta)
    sm2 = mpmath.exp(2 * nx * ny * mpmath.cos(theta))
    val = e2 * pos + o2 * trig - shared * c * 2 * sm2 * (1 - mpmath.cos(nx**2 - ny**2)) / m
    return mpmath.log(val)


def _ref_gauss_moments(nx, ny, theta, n, sigma, r):
    """``(E lambda, E lambda^2, E (1 - lambda)^2)`` of eq (67)-(73), at the working precision."""
    nx, ny, theta, sigma, r = (mpmath.mpf(v) for v in (nx, ny, theta, sigma, r))
    d2 = nx**2 + ny**2 - 2 * nx * ny * mpmath.cos(theta)
    rho = 1 - mpmath.exp(-2 * sigma**2 * r**2)
    g = mpmath.exp(-(sigma**2) * d2 / 2)
    var = (1 - g**2) ** 2 / (2 * rho**2 * n)
    mean = (1 - g) / rho
    return mean, mean**2 + var, (1 - mean) ** 2 + var


# ------------------------------------------------- 1: log-sum-exp shift with a zero coefficient


@pytest.mark.parametrize("shared", [0, 1])
def test_angular_hybrid_zero_lambda_coefficient_no_underflow(shared):
    # theta = 0: E[lambda^2] = 0, E[(1 - lambda)^2] = 1 -- the MSE is the trig MSE (~e^441),
    # while the ++ MSE (~e^1239) used to set the shift and underflow the only nonzero term.
    with mpmath.workdps(DPS):
        ref = _ref_log_bipolar(17.88, 11.13, 0.0, 4, 0, 1, 0, shared)
    assert _close(hrf.log_mse_angular_hybrid(17.88, 11.13, 0.0, 4, 1, shared), ref)
    assert abs(float(ref) - 441.49185845832) < 1e-10


@pytest.mark.parametrize("shared", [0, 1])
@pytest.mark.parametrize(
    "theta,e2,o2",
    [(0.0, 0.0, 1.0), (0.0, 0.0, 0.25), (math.pi, 1.0, 0.0), (math.pi, 0.5, 0.0), (2.9, 0.0, 1e-3)],
)
def test_bipolar_zero_coefficient_no_underflow(theta, e2, o2, shared):
    """A zero coefficient drops its term from the log-sum-exp shift (both orders of lp, lt)."""
    with mpmath.workdps(DPS):
        ref = _ref_log_bipolar(17.88, 11.13, theta, 4, e2, o2, 0, shared)
    assert _close(hrf.log_mse_bipolar(17.88, 11.13, theta, 4, e2, o2, 0.0, shared), ref)


def test_bipolar_all_coefficients_zero_is_zero_mse():
    assert hrf.log_mse_bipolar(17.88, 11.13, 1.0, 4, 0.0, 0.0, 0.0, 1) == -np.inf


# --------------------------------------------------------- 2: (1 - rho) - g without 0 * inf


@pytest.mark.parametrize(
    "nx,ny,theta,n,sigma,r",
    [
        (1.0, 1.0, 0.5, 1, 1.0, 20.0),  # exp(-800) * expm1(~800): was 0 * inf = nan
        (0.0, 0.0, 0.5, 1, 1.0, 19.0),  # subnormal * inf: was inf
        (1.0, 2.0, 1.0, 3, 1.0, 19.3),
        (3.0, 2.0, 2.5, 2, 0.3, 60.0),
        (1.2, 0.8, 1.0, 2, 0.7, 1.5),  # typical points, both sides of the switch (v = 1)
        (1.0, 1.0, 2.9, 4, 0.4, 1.0),
        (1.0, 1.0, 0.1, 4, 0.9, 1.0),
        (2.0, 2.5, 1.5, 4, 1.0, 1.0),  # |x - y| > 2r: v < 0
    ],
)
def test_gauss_one_minus_second_moment_large_radius(nx, ny, theta, n, sigma, r):
    with mpmath.workdps(DPS):
        _, e2, o2 = _ref_gauss_moments(nx, ny, theta, n, sigma, r)
    assert abs(hrf.gauss_one_minus_second_moment(nx, ny, theta, n, sigma, r) - float(o2)) <= RTOL * float(o2)
    assert abs(hrf.gauss_lambda_second_moment(nx, ny, theta, n, sigma, r) - float(e2)) <= RTOL * float(e2)


def test_gauss_one_minus_second_moment_audit_values():
    assert abs(hrf.gauss_one_minus_second_moment(1.0, 1.0, 0.5, 1, 1.0, 20.0) - 0.806414372984226) < 1e-14
    assert hrf.gauss_one_minus_second_moment(0.0, 0.0, 0.5, 1, 1.0, 19.0) == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("r,theta,m,n,sigma", [(20.0, 0.5, 1, 1, 1.0), (25.0, 2.0, 3, 2, 0.8), (1.5, 1.0, 3, 2, 0.7)])
def test_gauss_hybrid_same_length_large_radius(r, theta, m, n, sigma):
    with mpmath.workdps(DPS):
        mean, e2, o2 = _ref_gauss_moments(r, r, theta, n, sigma, r)
        ref = _ref_log_bipolar(r, r, theta, m, e2, o2, mean - e2, 0)
    assert _close(hrf.log_mse_gauss_hybrid_same_length(r, theta, m, n, sigma), ref)
    assert _close(hrf.log_mse_gauss_hybrid(r, r, theta, m, n, sigma, r, 1), ref)  # |x| = |y|: no variant-II term


# ----------------------------------------------------- 3: complex exponential without cancellation


def _ref_cexp(a, x, y, m, part):
    """log of eq (16)'s MSE from its defining expression at 400 digits (cancels ~2 log10(1/|z|) digits)."""
    with mpmath.workdps(400):
        A = mpmath.matrix([[mpmath.mpc(complex(v)) for v in row] for row in np.atleast_2d(a)])
        X = mpmath.matrix([mpmath.mpf(float(v)) for v in x])
        Y = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
        ax, by = A * X, (A.T) ** -1 * Y
        z = ax + by

        def sq(v):
            return mpmath.fsum(v[i] ** 2 for i in range(len(v)))

        log_c = -(sq(ax) + sq(by)) / 2
        sm2 = mpmath.exp(2 * mpmath.fsum(X[i] * Y[i] for i in range(len(X))))
        e_abs2 = mpmath.exp(2 * mpmath.re(log_c) + 2 * mpmath.fsum(mpmath.re(z[i]) ** 2 for i in range(len(z))))
        if part == "complex":
            val = e_abs2 - sm2
        else:
            val = (e_abs2 + mpmath.re(mpmath.exp(2 * log_c + 2 * sq(z)))) / 2 - sm2
        return mpmath.log(val / m)


def _near_zero_2d():
    """(A, x, y) with A = i(R + 1.2 I) and y = R'^T R' x rounded: z = A x + (A^T)^-1 y ~ 1e-16."""
    rng = np.random.default_rng(5)
    a = 1j * (rng.normal(size=(2, 2)) + 1.2 * np.eye(2))
    x = rng.normal(size=2)
    return a, x, -(a.T @ a @ x).real


CEXP_CASES = [
    ([[2.0]], [0.5], [np.nextafter(-2.0, 0)], 1),
    ([[2.0]], [0.5], [-2.0 + 1e-12], 1),
    (*_near_zero_2d(), 3),
    ([[1j, 0.3], [0.2, 1.5]], [0.4, -0.2], [0.1, 0.3], 4),  # a typical point
]


@pytest.mark.parametrize("part", ["complex", "real"])
@pytest.mark.parametrize("case", range(len(CEXP_CASES)))
def test_cexp_log_mse_near_z_zero(case, part):
    a, x, y, m = CEXP_CASES[case]
    ref = _ref_cexp(a, x, y, m, part)
    assert _close(hrf.cexp_log_mse(a, x, y, m, part=part), ref)
    mp = hrf.cexp_log_mse(a, x, y, m, part=part, backend="mpmath", dps=30)
    assert abs(mp - ref) <= mpmath.mpf("1e-29") * abs(ref)


def test_cexp_log_mse_audit_value():
    assert abs(hrf.cexp_log_mse([[2.0]], [0.5], [np.nextafter(-2.0, 0)], 1) + 75.4736011393542) < 1e-12


def test_cexp_log_mse_exact_zero():
    """A^T A x = -y exactly (integers): z = 0, zero MSE, although (A^T)^-1 is inexact."""
    a = np.array([[2.0, 1.0], [1.0, 1.0]])
    x = np.array([1.0, 0.0])
    y = -(a.T @ a @ x)
    for part in ("complex", "real"):
        assert hrf.cexp_log_mse(a, x, y, 2, part=part) == -np.inf


# ---------------------------------------------------------------- 4: theta just above pi


THETA_UP = float(np.nextafter(np.pi, 4))  # admitted by the tolerance check, clipped to float(pi)


@pytest.mark.parametrize("n", [1, 3, 40])
def test_angular_moments_theta_above_pi(n):
    with mpmath.workdps(DPS):
        p = mpmath.mpf(np.pi) / mpmath.pi  # the clip target float(pi), as a real number
        o2 = (1 - p) * (1 - p + p / n)
        cr = p * (1 - p) * (1 - mpmath.mpf(1) / n)
        e2 = p * (p - p / n + mpmath.mpf(1) / n)
    assert abs(hrf.angular_one_minus_second_moment(THETA_UP, n) - float(o2)) <= RTOL * float(o2)
    assert abs(hrf.angular_lambda_cross_moment(THETA_UP, n) - float(cr)) <= RTOL * float(cr) + 1e-300
    assert abs(hrf.angular_lambda_second_moment(THETA_UP, n) - float(e2)) <= RTOL * float(e2)
    assert hrf.angular_lambda_mean(THETA_UP) <= 1.0


@pytest.mark.parametrize("n", [1, 5])
def test_angular_hybrid_theta_above_pi(n):
    with mpmath.workdps(DPS):
        th = mpmath.mpf(np.pi)
        p = th / mpmath.pi
        ref = _ref_log_bipolar(3.0, 3.0, th, 1, p * (p - p / n + mpmath.mpf(1) / n), (1 - p) * (1 - p + p / n), 0, 0)
    val = hrf.log_mse_angular_hybrid(3.0, 3.0, THETA_UP, 1, n, 0)
    assert _close(val, ref)
    assert val == hrf.log_mse_angular_hybrid(3.0, 3.0, np.pi, 1, n, 0)
    if n == 1:
        assert abs(val + 20.4766) < 1e-4


def test_theta_beyond_tolerance_still_rejected():
    with pytest.raises(ValueError, match=r"theta must lie in \[0, pi\]"):
        hrf.angular_one_minus_second_moment(math.pi * (1 + 1e-14), 1)


# --------------------------------------------------------------------- 5: complex input rejected


@pytest.mark.parametrize(
    "call",
    [
        lambda: hrf.log_mse_trig(np.array([1 + 1j]), 1, 1, 1),
        lambda: hrf.log_mse_trig(1.0, 1.0 + 0j, 1.0, 1),
        lambda: hrf.log_mse_pos(1.0, 1.0, np.array([1.0 + 0.5j]), 1),
        lambda: hrf.angular_lambda_mean(1.0 + 0j),
        lambda: hrf.log_mse_bipolar(1.0, 1.0, 1.0, 1, 0.3 + 0.1j, 0.4, 0.1, 0),
        lambda: hrf.log_mse_angular_hybrid(1.0, 1.0, 1.0, 2, 2, 1 + 0j),
        lambda: hrf.gauss_rho(1.0, 0.5 + 0.1j),
        lambda: hrf.log_w(mpmath.mpc(1, 1)),
        lambda: hrf.cexp_log_mse([[2.0]], [0.5 + 1j], [0.3], 1),
        lambda: hrf.pair_geometry(np.array([1.0, 1j]), np.array([1.0, 0.0])),
    ],
)
def test_complex_input_rejected(call):
    with pytest.raises(ValueError, match="must be real"):
        call()


def test_complex_count_rejected():
    with pytest.raises(ValueError, match="m must be real"):
        hrf.log_mse_trig(1.0, 1.0, 1.0, 2 + 0j)

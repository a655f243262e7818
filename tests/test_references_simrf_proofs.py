"""rfcheck.references.simrf_proofs: the SimRF proof-step references against independent mpmath
computations at 50 digits, closed forms, finite differences and brute force."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.references import simrf_proofs as R

MF = mpmath.mpf


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    """Does the ball meet the 50-digit mpmath value (widened by its own rounding, 1e-48 relative)?"""
    with workprec(200):
        return ball.overlaps(arb(mpmath.nstr(value, 60), float(abs(value)) * 1e-48 + 1e-300))


def test_public_api_is_documented() -> None:
    for name in R.__all__:
        doc = getattr(R, name).__doc__
        assert doc and "Returns" in doc and "References" in doc and "SimRF" in doc, name


def test_f_series_is_the_0f1_over_gamma_and_its_derivative() -> None:
    with mpmath.workdps(50):
        for d, x in ((1, MF("0.3")), (3, MF(7)), (64, MF(250)), (5, MF(-2))):
            ref = mpmath.hyp0f1(MF(d) / 2, x / 4) / mpmath.gamma(MF(d) / 2)
            assert abs(R.f_series(x, d) - ref) <= MF(10) ** -45 * abs(ref)
            fd = mpmath.diff(lambda t, d=d: R.f_series(t, d), x)
            assert abs(R.f_series_deriv(x, d) - fd) <= MF(10) ** -30 * (1 + abs(fd))


def test_f_series_ball_contains_the_50_digit_value() -> None:
    rng = np.random.default_rng(11)
    pts = [(0.0, 1), (-3.5, 2), (1e-30, 7), (4000.0, 256)] + [
        (float(rng.uniform(-50, 500)), int(rng.integers(1, 300))) for _ in range(5)]
    for x, d in pts:
        with mpmath.workdps(50):
            exact = mpmath.hyp0f1(MF(d) / 2, MF(x) / 4) / mpmath.gamma(MF(d) / 2)
        with workprec(116):
            ball = R.f_series_ball(x, d)
        assert _contains(ball, exact), (x, d)
        assert ball.rad() <= abs(ball.mid()) * arb(2) ** -108, (x, d)
        with workprec(200):  # a planted error (the next term's weight) is outside the ball
            assert not ball.overlaps(arb(mpmath.nstr(exact * (1 + MF(10) ** -25), 60)))


def test_ratio_series_abs_ball_alternating_and_complex() -> None:
    """exp(-x) (alternating) and exp(i x) (complex) summed on balls contain the 50-digit values."""
    from flint import acb

    for x in (0.5, 7.0, 30.0):
        with workprec(116 + 100):
            ball = R.ratio_series_abs_ball(arb(1), lambda k, x=x: arb(-x) / (k + 1), lambda k, x=x: x / (k + 1))
        with mpmath.workdps(50):
            assert _contains(ball, mpmath.exp(-x)), x
        with workprec(116 + 100):
            cb = R.ratio_series_abs_ball(acb(1), lambda k, x=x: acb(0, x) / (k + 1), lambda k, x=x: x / (k + 1))
        with mpmath.workdps(50):
            assert _contains(cb.real, mpmath.cos(x)) and _contains(cb.imag, mpmath.sin(x)), x
        with workprec(200):  # a planted 1e-25 error is outside
            assert not ball.overlaps(arb(mpmath.nstr(mpmath.exp(-x) * (1 + MF(10) ** -25), 60)))


def test_configurations_and_norms() -> None:
    U = R.unit_config(4, 6, 3)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, rtol=1e-15)
    G = R.unit_config(5, 5, 0, "simplex") @ R.unit_config(5, 5, 0, "simplex").T
    np.testing.assert_allclose(G[~np.eye(5, dtype=bool)], -0.25, atol=1e-14)
    assert np.array_equal(R.unit_config(2, 3, 0, "orthogonal"), np.eye(3)[:2])
    with mpmath.workdps(50):
        rows = R.mp_rows(U)
        for r in rows:
            assert abs(R.dot(r, r) - 1) < MF(10) ** -48
    n = R.chi_norms(5, 200_000, 1)
    assert abs(np.mean(n**2) - 5) < 0.05  # E chi_5^2 = 5 (MC, 4 sigma ~ 0.04)


def test_pair_series_chi_integral_against_adaptive_quadrature() -> None:
    """2-D Gauss-Legendre vs scipy's adaptive dblquad (an independent rule), and 1/Gamma(d/2) at v = 0."""
    from scipy import integrate, special

    v, d, c = 0.7, 3, -0.4
    val, err = R.pair_series_chi_integral(v, d, c)

    def pdf(r: float) -> float:
        return r ** (d - 1) * math.exp(-r * r / 2) / (2 ** (d / 2 - 1) * math.gamma(d / 2))

    ref, _ = integrate.dblquad(
        lambda a, b: pdf(a) * pdf(b)
        * special.hyp0f1(d / 2, v * v * max(a * a + b * b + 2 * c * a * b, 0.0) / 4) / special.gamma(d / 2),
        0, 16, 0, 16, epsabs=1e-14, epsrel=1e-12)
    assert abs(val - ref) <= max(10 * err, 1e-11 * ref)
    assert err < 1e-10
    assert R.pair_series_chi_integral(0.0, 5, 0.3)[0] == pytest.approx(1 / math.gamma(2.5), rel=1e-12)


def test_lagrangian_gradient_is_the_finite_difference_gradient() -> None:
    d, v = 3, MF("1.1")
    with mpmath.workdps(30):
        U = R.mp_rows(R.unit_config(d, d, 2))
        r = [MF(float(x)) for x in R.chi_norms(d, d, 3)]

        def L(V):
            tot = MF(0)
            for P in itertools.permutations(range(d)):
                for i, j in itertools.permutations(range(d), 2):
                    a, b = r[P[i]], r[P[j]]
                    q = a * a * R.dot(V[i], V[i]) + b * b * R.dot(V[j], V[j]) + 2 * a * b * R.dot(V[i], V[j])
                    tot += R.f_series(v * v * q, d)
            return tot

        g = R.lagrangian_gradient(v, r, U, 1)
        for c in range(d):
            def f(t, c=c):
                V = [row[:] for row in U]
                V[1][c] += t
                return L(V)

            assert abs(mpmath.diff(f, 0) - g[c]) <= MF(10) ** -15 * (1 + abs(g[c]))


def test_symmetrised_objective_value_and_gradient() -> None:
    r, v = R.chi_norms(4, 4, 1), 0.9
    obj = R.symmetrised_pair_objective(r, v)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(16)
    val, g = obj(x)
    U = x.reshape(4, 4) / np.linalg.norm(x.reshape(4, 4), axis=1, keepdims=True)
    brute = 0.0  # sum over permutations and ordered pairs of f(r_{P_i}^2 + r_{P_j}^2 + 2 r r c_ij), / ... as defined
    for P in itertools.permutations(range(4)):
        for i, j in itertools.permutations(range(4), 2):
            s = r[P[i]] ** 2 + r[P[j]] ** 2 + 2 * r[P[i]] * r[P[j]] * (U[i] @ U[j])
            brute += float(mpmath.hyp0f1(2, v * v * s / 4)) / math.gamma(2)
    assert val == pytest.approx(brute, rel=1e-12)
    h = 1e-6
    fd = np.array([(obj(x + h * e)[0] - obj(x - h * e)[0]) / (2 * h) for e in np.eye(16)])
    np.testing.assert_allclose(fd, g, rtol=1e-6, atol=1e-6 * np.max(np.abs(g)))


def test_rho_tilde_minimum_gradient_and_residual() -> None:
    from rfcheck.engine.montecarlo import simplex_matrix

    # equal norms: the simplex is a minimiser; sum w_i = 0
    d, v = 5, 1.3
    norms = np.ones(d)
    W = simplex_matrix(d)
    S = W[:, None, :] + W[None, :, :]
    s2 = np.sum(S * S, axis=2)
    direct = math.gamma(d / 2) * v * v / (4 * d * (d - 1) * math.gamma(1 + d / 2)) * (s2.sum() - np.trace(s2))
    assert R.rho_tilde_minimum(norms, v, d) == pytest.approx(direct, rel=1e-13)
    assert R.eq16_residual(W) < 1e-13
    assert R.eq16_residual(np.eye(d)) > 0.1
    # a dominant norm: the antialigned minimum (2 max - sum) > 0
    norms = np.array([10.0, 1.0, 1.0])
    W = np.array([[10.0, 0], [-1.0, 0], [-1.0, 0]])
    S = W[:, None, :] + W[None, :, :]
    s2 = np.sum(S * S, axis=2)
    direct = math.gamma(1) * v * v / (4 * 6 * math.gamma(2)) * (s2.sum() - np.trace(s2))
    assert R.rho_tilde_minimum(norms, v, 2) == pytest.approx(direct, rel=1e-13)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 3))

    def obj(W):
        S = W[:, None, :] + W[None, :, :]
        s2 = np.sum(S * S, axis=2)
        return math.gamma(1.5) * v * v / (4 * 12 * math.gamma(2.5)) * (s2.sum() - np.trace(s2))

    for i in range(4):
        steps = (1e-6 * np.eye(4 * 3)[3 * i + c].reshape(4, 3) for c in range(3))
        fd = [(obj(W + h) - obj(W - h)) / 2e-6 for h in steps]
        np.testing.assert_allclose(fd, R.rho_tilde_gradient(W, v, i), rtol=1e-7, atol=1e-10)


def test_mean_pair_norm_sq_against_monte_carlo_and_closed_form() -> None:
    assert R.mean_pair_norm_sq(7, "iid") == 14 and R.mean_pair_norm_sq(7, "orf") == 14
    with mpmath.workdps(50):
        d = 6
        er = mpmath.quad(lambda r: r ** d * mpmath.exp(-r * r / 2), [0, mpmath.inf]) / (
            2 ** (MF(d) / 2 - 1) * mpmath.gamma(MF(d) / 2))
        assert abs(R.mean_pair_norm_sq(d, "simrf") - (2 * d - 2 * er**2 / (d - 1))) < MF(10) ** -45


def test_sine_power_integral_and_its_ball() -> None:
    with mpmath.workdps(50):
        # c = 0: the Wallis integral sqrt(pi) Gamma(d/2)/Gamma(d/2 + 1/2)
        for d in (1, 4, 33):
            ref = mpmath.sqrt(mpmath.pi) * mpmath.gamma(MF(d) / 2) / mpmath.gamma(MF(d) / 2 + MF(1) / 2)
            assert abs(R.sine_power_integral(d, 3, 0) - ref) < MF(10) ** -45
        rng = np.random.default_rng(7)
        for _ in range(4):
            d, k, c = int(rng.integers(1, 300)), int(rng.integers(0, 150)), float(rng.uniform(-1, 1))
            with mpmath.workdps(110):
                exact = R.sine_power_integral(d, k, MF(c))
            ball = R.sine_power_integral_ball(d, k, c, 116)
            assert _contains(ball, exact), (d, k, c)
            assert ball.rad() <= abs(ball.mid()) * arb(2) ** -110
            # power: the integral at another cosine is outside the ball
            assert not _contains(ball, R.sine_power_integral(d, k, MF(c) + MF(10) ** -20)) or k == 0

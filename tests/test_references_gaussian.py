"""rfcheck.references.gaussian: the mpmath quadratures against closed forms at 50 digits, and the
Arb balls (rigorous integrals plus proven tail bounds) contain the 50-digit mpmath values at random
points, are tight, and a deliberately widened ball is never reported certified."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from flint import acb, arb

from rfcheck.arb_backend import workprec
from rfcheck.certify import certified_equal
from rfcheck.references import gaussian as G

MF = mpmath.mpf
PREC = 116  # bits_for_dps(30), the default budget's


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    """Does the ball meet the 50-digit mpmath value (widened by its own rounding, 1e-48 relative)?"""
    with workprec(200):
        return ball.overlaps(arb(mpmath.nstr(value, 60), float(abs(value)) * 1e-48 + 1e-300))


def _tight(ball: arb) -> bool:
    return bool(ball.rad() <= abs(ball.mid()) * arb(2) ** (-PREC + 6))


def _widened_not_certified(ball: arb, value: mpmath.mpf) -> None:
    """The exact value, as a point, against the ball widened to 1e-20 relative: never 'HOLDS' at 1e-25."""
    with workprec(200):
        wide = arb(ball.mid(), abs(ball.mid()) * arb("1e-20"))
        assert certified_equal(arb(mpmath.nstr(value, 60)), wide, 1e-25) is None


def test_public_api_is_documented() -> None:
    for name in G.__all__:
        doc = getattr(G, name).__doc__
        assert doc and "Returns" in doc and "References" in doc, name


def test_guarded_quad_keeps_the_digits_of_a_narrow_peak() -> None:
    with mpmath.workdps(30):
        val = G.guarded_quad(lambda ph: mpmath.sin(ph) ** 127, lambda: mpmath.linspace(0, mpmath.pi, 33))
    with mpmath.workdps(50):
        exact = mpmath.sqrt(mpmath.pi) * mpmath.gamma(64) / mpmath.gamma(MF(129) / 2)
        assert abs(val - exact) <= MF(10) ** -28 * exact


@pytest.mark.parametrize("z", [0.5, 0.73, 1.0, 3.3, 57.5, 200.0])
def test_gaussian_power_integral_and_its_ball(z: float) -> None:
    with mpmath.workdps(50):
        exact = 2 ** (MF(z) - 1) * mpmath.gamma(MF(z))
        assert abs(G.gaussian_power_integral(z) - exact) <= MF(10) ** -45 * exact
    ball = G.gaussian_power_integral_ball(z, PREC)
    assert _contains(ball, exact) and _tight(ball)
    _widened_not_certified(ball, exact)
    with workprec(200):  # and the ball is narrow enough to certify the exact value
        assert certified_equal(arb(mpmath.nstr(exact, 60)), ball, 1e-25) == "HOLDS"


def test_chi_moments_and_their_balls() -> None:
    rng = np.random.default_rng(3)
    for dof, k in [(1, 2), (2, 4), (128, 4), (2048, 2)] + [(int(rng.integers(1, 500)), int(rng.integers(0, 7)))
                                                          for _ in range(3)]:
        with mpmath.workdps(50):
            exact = 2 ** (MF(k) / 2) * mpmath.gamma(MF(dof + k) / 2) / mpmath.gamma(MF(dof) / 2)
            assert abs(G.chi_moment(k, dof) - exact) <= MF(10) ** -44 * exact, (dof, k)
        ball = G.chi_moment_ball(k, dof, PREC)
        assert _contains(ball, exact) and _tight(ball), (dof, k)
        _widened_not_certified(ball, exact)


def test_chi_pdf_ball_is_the_derivative_of_the_cdf() -> None:
    rng = np.random.default_rng(5)
    for w, dof in [(0.05, 2), (20.025, 256), (9.0, 1)] + [(float(rng.uniform(0.1, 20)), int(rng.integers(1, 300)))
                                                           for _ in range(3)]:
        with mpmath.workdps(200):  # the CDF is ~1: its numerical derivative needs the extra digits
            exact = mpmath.diff(lambda t, dof=dof: mpmath.gammainc(MF(dof) / 2, 0, t * t / 2, regularized=True), MF(w))
        ball = G.chi_pdf_ball(w, dof, PREC)
        assert _contains(ball, exact) and _tight(ball), (w, dof)
        _widened_not_certified(ball, exact)
    with mpmath.workdps(50):  # far tail (value ~ 3e-348): against the density written out
        exact = mpmath.sqrt(2 / mpmath.pi) * mpmath.exp(-MF(40) ** 2 / 2)
    ball = G.chi_pdf_ball(40.0, 1, PREC)
    with workprec(200):
        assert abs(ball - arb(mpmath.nstr(exact, 60))) < arb(mpmath.nstr(exact, 60)) * arb("1e-33")
    assert _tight(ball)


def test_half_line_tail_bound_bounds_the_tail() -> None:
    rng = np.random.default_rng(0)
    for _ in range(6):
        n, s2, c = float(rng.uniform(0, 30)), float(rng.uniform(0.3, 3)), float(rng.uniform(0, 3))
        with mpmath.workdps(50):
            peak = float(s2 * c / 2 + mpmath.sqrt((s2 * c) ** 2 / 4 + n * s2))
            big_r = peak + float(rng.uniform(0, 6))
            tail = mpmath.quad(lambda w, n=n, s2=s2, c=c: w**n * mpmath.exp(-w * w / (2 * s2) + c * w),
                               [big_r, big_r + 10, mpmath.inf])
        bound = G.half_line_tail_bound(n, s2, c, big_r)
        assert bound.lower() >= arb(mpmath.nstr(tail, 30)) * (1 - 1e-20)
        assert bound.upper() <= arb(mpmath.nstr(tail, 30)) * 1e6  # and not absurdly loose near the peak


def test_chi_expectation_ball_with_an_exponential_growth() -> None:
    """E e^{t R}, R ~ chi_3 (growth bound (1, t)), against mpmath at 50 digits."""
    for t in (0.5, 2.0):
        with mpmath.workdps(50):
            num = mpmath.quad(lambda w, t=t: mpmath.exp(t * w) * w * w * mpmath.exp(-w * w / 2), [0, 5, mpmath.inf])
            exact = num / (mpmath.sqrt(2) * mpmath.gamma(MF(3) / 2))
        ball = G.chi_expectation_ball(lambda w, _a, t=t: (t * w).exp(), 3, growth=(1, t),
                                      log_scale=t * t / 2 + 1, prec=PREC)
        assert _contains(ball, exact) and _tight(ball)
        _widened_not_certified(ball, exact)


def test_sphere_average_ball_is_the_bessel_closed_form() -> None:
    """E exp(x q_1) over S^{d-1} = Gamma(d/2) (x/2)^{1-d/2} I_{d/2-1}(x); cosh x at d = 1."""
    rng = np.random.default_rng(1)
    for d, x in [(1, 3.0), (2, 1.0), (3, 0.01), (256, 150.0)] + [(int(rng.integers(2, 300)), float(rng.uniform(0, 60)))
                                                              for _ in range(3)]:
        with mpmath.workdps(50):
            xm = MF(x)
            exact = mpmath.cosh(xm) if d == 1 else (
                mpmath.gamma(MF(d) / 2) * (xm / 2) ** (1 - MF(d) / 2) * mpmath.besseli(MF(d) / 2 - 1, xm))
        ball = G.sphere_average_ball(lambda t, _a, x=x: (x * t).exp(), d, PREC)
        assert _contains(ball, exact) and _tight(ball), (d, x)
        _widened_not_certified(ball, exact)


def test_orthogonal_pair_cos_ball_against_mpmath() -> None:
    """E cos(w_12 . z), |w_12| ~ chi_2d: the chi_2d integral of the Bessel direction average in mpmath."""
    rng = np.random.default_rng(2)
    for z, d in [(0.0, 3), (1.0, 2), (4.0, 128)] + [(float(rng.uniform(0, 4)), int(rng.integers(1, 128)))
                                                   for _ in range(2)]:
        with mpmath.workdps(50):
            zm = MF(z)

            def f(r, d=d, zm=zm):
                dens = mpmath.exp((2 * d - 1) * mpmath.log(r) - r * r / 2 - (d - 1) * mpmath.log(2)
                                  - mpmath.loggamma(d))
                return dens * mpmath.hyp0f1(MF(d) / 2, -(r * zm) ** 2 / 4)

            top = mpmath.sqrt(2 * d)
            exact = mpmath.quad(f, [*mpmath.linspace(0, top + 20, 24), mpmath.inf])
        ball = G.orthogonal_pair_cos_ball(z, d, PREC)
        assert _contains(ball, exact), (z, d)
        assert ball.rad() <= arb(2) ** (-PREC + 6) * max(abs(ball.mid()), arb(1e-300)), (z, d)
        _widened_not_certified(ball, exact)


def test_integral_ball_reaches_relative_accuracy_on_a_small_integral() -> None:
    ball = G.integral_ball(lambda x, _a: (-(x * x) * 400).exp(), 0, 1, PREC)  # sqrt(pi)/40 (erf(20) = 1 - 5e-176)
    with mpmath.workdps(50):
        exact = mpmath.sqrt(mpmath.pi) / 40 * mpmath.erf(20)
    assert isinstance(ball, acb) and _contains(ball.real, exact) and _tight(ball.real)

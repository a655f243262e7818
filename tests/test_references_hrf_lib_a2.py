"""Reference quantities of ``rfcheck.references.hrf`` moved from the first part of ``rfcheck.claims.hrf`` (second
pass): each value is compared with an independent 50-digit computation by a different method (a 1-d Gaussian
quadrature of the defining expectation, the MGF closed form of Lemma 2.4, the unbiasedness ``E = SM``), each ball
must contain that value, and a planted wrong value must fall outside the ball or the error bar."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.backends import MP
from rfcheck.references import hrf as refs

BITS = 160


def _arb(v: mpmath.mpf) -> arb:
    """The 50-digit value as a ball of relative radius ``1e-45`` (what the 50-digit quadrature guarantees)."""
    with workprec(BITS + 64):
        return arb(mpmath.nstr(v, 60), mpmath.nstr(abs(v) * mpmath.mpf(10) ** -45, 5))


def _mse_by_quadrature(which: str, nx: float, ny: float, theta: float, m: int) -> mpmath.mpf:
    """``E (S - SM)^2`` of ``SM^trig_m`` / ``SM^++_m`` by a 1-d Gaussian quadrature of one feature's squared error
    (``w^T u ~ |u| g``, ``g ~ N(0, 1)``), divided by ``m`` (``m`` iid features of an unbiased estimator)."""
    nx, ny, theta = mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta)
    xy = nx * ny * mpmath.cos(theta)
    sm = mpmath.exp(xy)
    if which == "trig":  # exp((|x|^2 + |y|^2)/2) cos(w.(x - y))
        amp, norm, f = mpmath.exp((nx**2 + ny**2) / 2), mpmath.sqrt(nx**2 + ny**2 - 2 * xy), mpmath.cos
    else:  # exp(-(|x|^2 + |y|^2)/2) cosh(w.(x + y)) (the antithetic pair's average)
        amp, norm, f = mpmath.exp(-(nx**2 + ny**2) / 2), mpmath.sqrt(nx**2 + ny**2 + 2 * xy), mpmath.cosh
    one = mpmath.quad(lambda g: mpmath.npdf(g) * (amp * f(norm * g) - sm) ** 2, mpmath.linspace(-40, 40, 41))
    return one / m


_PAIRS = [(0.5, 0.3, 1.0, 1), (0.9, 0.7, 2.5, 3), (1.2, 1.2, 0.4, 5), (0.8, 0.8, math.pi / 2, 2)]


@pytest.mark.parametrize("which", ["trig", "pos"])
@pytest.mark.parametrize(("nx", "ny", "theta", "m"), _PAIRS)
def test_base_estimator_mse_equals_the_quadrature_of_the_squared_error(which: str, nx: float, ny: float,
                                                                       theta: float, m: int) -> None:
    with mpmath.workdps(50):
        exact = _mse_by_quadrature(which, nx, ny, theta, m)
        h = refs.hybrid_moments(MP, mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta), m)
        got = refs.base_estimator_mse(h, which)
        assert abs(got - exact) <= mpmath.mpf(10) ** -40 * (abs(exact) + 1)
        assert abs(got - exact * (1 + mpmath.mpf(10) ** -30)) > mpmath.mpf(10) ** -40 * (abs(exact) + 1)
        if abs(theta - math.pi / 2) > 0.1:  # at theta = pi/2 both MSEs are cosh(|x|^2 + |y|^2) - 1
            other = refs.base_estimator_mse(h, "pos" if which == "trig" else "trig")
            assert abs(other - exact) > mpmath.mpf(10) ** -6 * abs(exact)  # the other estimator's MSE differs


@pytest.mark.parametrize("which", ["trig", "pos"])
@pytest.mark.parametrize("quad", [False, True])
@pytest.mark.parametrize(("r", "theta", "m"), [(0.5, 1.0, 1), (0.9, 2.5, 3), (1.5, 0.3, 7)])
def test_base_rel_error_ball_contains_the_quadrature_value(which: str, quad: bool, r: float, theta: float,
                                                          m: int) -> None:
    with mpmath.workdps(50):
        t = mpmath.pi - mpmath.mpf(theta) if which == "pos" else mpmath.mpf(theta)
        exact = mpmath.sqrt(_mse_by_quadrature(which, r, r, t, m)) / mpmath.exp(mpmath.mpf(r) ** 2 * mpmath.cos(t))
    b = refs.base_rel_error_ball(which, r, theta, m, BITS, quad=quad)
    v = _arb(exact)
    with workprec(BITS + 64):
        assert b.overlaps(v)
        assert b.rad() < 1e-35 * abs(v)
        assert not b.overlaps(v * (1 + arb(10) ** -30))  # a planted wrong value


def test_base_rel_error_ball_is_zero_at_the_zero_variance_end() -> None:
    """SM^trig at theta = 0 (x = y) has MSE exactly 0: the ball is ``[0 +/- tiny]``, never negative."""
    b = refs.base_rel_error_ball("trig", 1.0, 0.0, 4, BITS)
    with workprec(BITS):
        assert b.contains(0) and b.rad() < 1e-20 and b.lower() >= 0


@pytest.mark.parametrize("which", ["trig", "pos"])
@pytest.mark.parametrize(("r", "m"), [(0.3, 1), (1.0, 3), (2.0, 10)])
def test_base_rel_error_end_ball_contains_the_quadrature_value(which: str, r: float, m: int) -> None:
    with mpmath.workdps(50):
        t = mpmath.pi if which == "trig" else mpmath.mpf(0)
        exact = mpmath.sqrt(_mse_by_quadrature(which, r, r, t, m)) / mpmath.exp(mpmath.mpf(r) ** 2 * mpmath.cos(t))
    b = refs.base_rel_error_end_ball(which, r, m, BITS)
    v = _arb(exact)
    with workprec(BITS + 64):
        assert b.overlaps(v) and b.rad() < 1e-35 * abs(v)
        assert not b.overlaps(v * (1 + arb(10) ** -30))


@pytest.mark.parametrize(("f", "limit"), [
    (lambda h: mpmath.sin(h) / h, lambda: mpmath.mpf(1)),
    (lambda h: mpmath.expm1(3 * h) / h, lambda: mpmath.mpf(3)),
    (lambda h: mpmath.atan(h) / h + 5 * h, lambda: mpmath.mpf(1)),
    (lambda h: mpmath.sqrt(2 + h), lambda: mpmath.sqrt(2)),
])
@pytest.mark.parametrize("dps", [20, 40])
def test_two_point_limit_covers_the_limit(f: Callable[[Any], Any], limit: Callable[[], Any], dps: int) -> None:
    v, e = refs.two_point_limit(f, dps)
    with mpmath.workdps(dps + 30):
        lim = limit()
        assert abs(v - lim) <= e
        assert e < mpmath.mpf(10) ** (1 - dps) * abs(lim)
        assert abs(v - lim * (1 + mpmath.mpf(10) ** (2 - dps))) > e  # a planted wrong limit


_CE = [([[1 + 0.5j, 0.2], [-0.3j, 1.5]], [0.4, -0.7], [0.1, 0.9]),
       ([[0.3j + 1.5j, 0.8 - 0.1j], [-0.6, -0.2 + 1.5j]], [-1.0, 0.25], [0.5, -0.5]),
       ([[1.2, -0.4], [0.7, 1.8]], [0.9, 0.9], [-0.3, 0.6])]


@pytest.mark.parametrize(("a", "x", "y"), _CE)
def test_cexp_mgf_quad_equals_the_lemma_2_4_closed_form(a: list[list[complex]], x: list[float], y: list[float]) -> None:
    with mpmath.workdps(40):
        am = mpmath.matrix(a)
    v, e = refs.cexp_mgf_quad(am, x, y, 30)
    with mpmath.workdps(50):
        am = mpmath.matrix(a)
        z = am * mpmath.matrix(x) + mpmath.inverse(am.T) * mpmath.matrix(y)
        closed = mpmath.exp(mpmath.fsum(z[i] ** 2 for i in range(2)) / 2)
        assert abs(v - closed) <= e + mpmath.mpf(10) ** -29 * abs(closed)
        assert e < mpmath.mpf(10) ** -25 * abs(closed)
        assert abs(v - closed * (1 + mpmath.mpf(10) ** -20)) > e


@pytest.mark.parametrize(("a", "x", "y"), _CE)
def test_cexp_mean_quad_is_unbiased_for_the_softmax_kernel(a: list[list[complex]], x: list[float],
                                                           y: list[float]) -> None:
    with mpmath.workdps(40):
        am = mpmath.matrix(a)
    v, e = refs.cexp_mean_quad(am, x, y, 30)
    with mpmath.workdps(50):
        sm = mpmath.exp(mpmath.fsum(mpmath.mpf(u) * w for u, w in zip(x, y, strict=True)))
        assert abs(v - sm) <= e + mpmath.mpf(10) ** -29 * sm
        assert abs(mpmath.im(v)) <= e + mpmath.mpf(10) ** -29 * sm  # the mean is real
        assert abs(v - sm * (1 + mpmath.mpf(10) ** -20)) > e


def test_cexp_mgf_quad_raises_for_a_singular_matrix() -> None:
    with pytest.raises(ZeroDivisionError):
        refs.cexp_mgf_quad(mpmath.matrix([[1, 2], [2, 4]]), [0.1, 0.2], [0.3, 0.4], 20)

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


@pytest.mark.parametrize("which", ["trig", "pos"])
@pytest.mark.parametrize(("r", "theta", "m"), [(0.5, 1.0, 1), (0.9, 2.5, 3), (1.5, 0.3, 7)])
def test_base_rel_error_with_error_covers_the_quadrature_value(which: str, r: float, theta: float, m: int) -> None:
    t = math.pi - theta if which == "pos" else theta  # the estimator's own angle (a float, as the claims pass it)
    base, berr = refs.base_moments_with_error(r, r, t, 30, quad=True)
    h = refs.hybrid_moments_with_error(r, r, t, m, base, berr, [0, 0], [0, 0], 30)
    v, e = refs.base_rel_error_with_error(h, which, 30)
    with mpmath.workdps(50):
        tm = mpmath.mpf(t)
        exact = mpmath.sqrt(_mse_by_quadrature(which, r, r, tm, m)) / mpmath.exp(mpmath.mpf(r) ** 2 * mpmath.cos(tm))
        assert abs(v - exact) <= e
        assert e < mpmath.mpf(10) ** -12 * exact
        assert abs(v - exact * (1 + mpmath.mpf(10) ** -10)) > e  # a planted wrong value


def test_base_rel_error_with_error_is_zero_where_the_mse_cancels() -> None:
    base, berr = refs.base_moments_with_error(1.0, 1.0, 0.0, 30)
    h = refs.hybrid_moments_with_error(1.0, 1.0, 0.0, 2, base, berr, [0, 0], [0, 0], 30)
    v, e = refs.base_rel_error_with_error(h, "trig", 30)  # x = y: SM^trig is exact
    assert v == 0 and 0 < e < 1e-14


@pytest.mark.parametrize("scale", [1, 1j])
@pytest.mark.parametrize("entries", [[[1.5, 0.3], [-0.2, 1.1]], [[0.7, -0.9], [0.4, 2.0]]])
def test_ce_real_solutions_max_residual_vanishes_where_18_is_17(scale: complex, entries: list[list[float]]) -> None:
    """A real or purely imaginary A: (18) has a 2-d real solution space, and every solution solves (17)."""
    with mpmath.workdps(40):  # as the claims build A: at dps + 10 digits
        a = mpmath.matrix(entries) * scale
        assert len(refs.real_null_space(refs.ce_real_system(a), 30)) == 2
        assert refs.ce_real_solutions_max_residual(a, 30) < mpmath.mpf(10) ** -30


def test_ce_real_solutions_max_residual_is_zero_for_a_trivial_null_space() -> None:
    a = mpmath.matrix([[1 + 1j, 0.3], [0.2j, 1.1]])
    assert refs.real_null_space(refs.ce_real_system(a), 30) == []
    assert refs.ce_real_solutions_max_residual(a, 30) == 0


def test_ce_real_solutions_max_residual_measures_the_basis_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted basis vector (x, y) = (e1, 0), not a solution of (18): the residual is |A e1|_inf = |a_00|."""
    a = mpmath.matrix([[1.5, 0.3], [-0.2, 1.1]])
    monkeypatch.setattr(refs, "real_null_space", lambda mat, dps: [mpmath.matrix([1, 0, 0, 0])])
    assert abs(refs.ce_real_solutions_max_residual(a, 30) - mpmath.mpf(1.5)) < 1e-30


@pytest.mark.parametrize("r", [0.9, 1.0, 2.0, 5.5, 10.0])
@pytest.mark.parametrize("c", [1, 2])
def test_theta_sin_theta_root_solves_its_equation(r: float, c: int) -> None:
    with mpmath.workdps(50):
        t = refs.theta_sin_theta_root(mpmath.mpf(r), c)
        newton = mpmath.findroot(lambda u: u * mpmath.sin(u) - 1 / (c * mpmath.mpf(r) ** 2), 1 / (mpmath.mpf(r)
                                                                                                  * math.sqrt(c)))
        assert 0 < t < mpmath.pi / 2
        assert abs(t - newton) < mpmath.mpf(10) ** -45
        assert abs(t - newton * (1 + mpmath.mpf(10) ** -30)) > mpmath.mpf(10) ** -45


@pytest.mark.parametrize("r", [1.0, 1.7, 4.0, 10.0])
def test_theta_sin_theta_root_ball_contains_the_root(r: float) -> None:
    b = refs.theta_sin_theta_root_ball(r, BITS)
    with mpmath.workdps(60):
        # bisection on the increasing r^2 t sin t - 1, a different method from the secant/Anderson guess
        lo, hi = mpmath.mpf(0), mpmath.pi / 2
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if mpmath.mpf(r) ** 2 * mid * mpmath.sin(mid) < 1 else (lo, mid)
        v = _arb(lo)
    with workprec(BITS + 64):
        assert b.overlaps(v) and b.rad() < 1e-35
        assert not b.overlaps(v + arb(10) ** -30)


@pytest.mark.parametrize(("x", "my", "c"), [([0.5, -0.2], [0.3, 0.9], 1.5), ([1.2, 0.0], [-2.0, 1.1], 0.3),
                                            ([0.0, 3.0], [0.5, -0.5], 3.0)])
def test_positive_rho_features_mean_is_the_gaussian_kernel_and_the_quadrature(x: list[float], my: list[float],
                                                                              c: float) -> None:
    with mpmath.workdps(50):
        xs, mys, cs = [mpmath.mpf(v) for v in x], [mpmath.mpf(v) for v in my], mpmath.mpf(c)
        v = refs.positive_rho_features_mean(MP, xs, mys, cs)
        target = mpmath.exp(-mpmath.fsum((a + b) ** 2 for a, b in zip(xs, mys, strict=True)) / (2 * cs**2))
        assert abs(v - target) < mpmath.mpf(10) ** -45 * (target + 1)
        # the defining expectation by quadrature: E cosh(w.(u + v)) per coordinate of w (u = x/c, v = -My/c)
        s = [(a - b) / cs for a, b in zip(xs, mys, strict=True)]
        pref = mpmath.exp(-mpmath.fsum(a**2 for a in xs + mys) / (2 * cs**2)) * mpmath.exp(
            -mpmath.fsum(a**2 for a in xs + mys) / (2 * cs**2))
        ecosh, _ = refs.quad_gaussian_exp_dot(s, 40)
        assert abs(v - pref * ecosh) < mpmath.mpf(10) ** -35 * (target + 1)
        assert abs(v * (1 + mpmath.mpf(10) ** -30) - target) > mpmath.mpf(10) ** -45 * (target + 1)


@pytest.mark.parametrize(("z", "c"), [([0.3 - 0.4j, -0.1 + 0.2j], 0.8 + 0.1j), ([1.2 + 0.0j, 0.5j], 1.0 + 0.0j),
                                      ([0.0j, 0.0j], 2.0 - 1.0j), ([-0.7 + 0.9j], 0.3j)])
def test_exp_dot_sample_variance_quad_equals_the_closed_form(z: list[complex], c: complex) -> None:
    """``|c|^2 (exp(2|Re z|^2) - exp(|Re z|^2 - |Im z|^2))`` from Lemma 2.4's closed form (a different method)."""
    zm, cm = [mpmath.mpc(v) for v in z], mpmath.mpc(c)
    v, e = refs.exp_dot_sample_variance_quad(zm, cm, 30)
    with mpmath.workdps(50):
        re2 = mpmath.fsum(mpmath.re(u) ** 2 for u in zm)
        im2 = mpmath.fsum(mpmath.im(u) ** 2 for u in zm)
        exact = abs(cm) ** 2 * (mpmath.exp(2 * re2) - mpmath.exp(re2 - im2))
        assert abs(v - exact) <= e + mpmath.mpf(10) ** -35
        assert e < mpmath.mpf(10) ** -25 * (abs(cm) ** 2 * mpmath.exp(2 * re2))
        planted = exact + mpmath.mpf(10) ** -20 * (abs(cm) ** 2 * mpmath.exp(2 * re2))
        assert abs(v - planted) > e + mpmath.mpf(10) ** -35


def test_exp_dot_sample_variance_quad_is_zero_for_a_constant_sample() -> None:
    v, e = refs.exp_dot_sample_variance_quad([mpmath.mpc(0), mpmath.mpc(0)], mpmath.mpc(1.5, -0.5), 30)
    assert abs(v) <= e + mpmath.mpf(10) ** -35


@pytest.mark.parametrize(("z", "c"), [([0.3 - 0.4j, -0.1 + 0.2j], 0.8 + 0.1j), ([1.2 + 0.0j, 0.5j], 1.0 + 0.0j),
                                      ([-0.7 + 0.9j], 0.3j), ([2.0 + 0.0j, -1.5 + 0.0j], 0.25 + 0.0j)])
def test_exp_dot_mean_quad_and_ball_equal_the_closed_form(z: list[complex], c: complex) -> None:
    """``c exp(sum z_i^2 / 2)`` (Lemma 2.4's closed form, a different method from both quadratures)."""
    from flint import acb

    zm, cm = [mpmath.mpc(v) for v in z], mpmath.mpc(c)
    v, e = refs.exp_dot_mean_quad(zm, cm, 30)
    with mpmath.workdps(50):
        exact = cm * mpmath.exp(mpmath.fsum(u**2 for u in zm) / 2)
        scale = abs(cm) * mpmath.exp(mpmath.fsum(mpmath.re(u) ** 2 for u in zm) / 2)
        assert abs(v - exact) <= e + mpmath.mpf(10) ** -35 * scale
        assert e < mpmath.mpf(10) ** -25 * scale
        assert abs(v - exact - mpmath.mpf(10) ** -20 * scale) > e + mpmath.mpf(10) ** -35 * scale
    b = refs.exp_dot_mean_ball(z, acb(c), BITS)
    with workprec(BITS + 64):
        eb = acb(_arb(mpmath.re(exact)), _arb(mpmath.im(exact)))
        assert b.overlaps(eb)
        assert not b.overlaps(eb + _arb(mpmath.mpf(10) ** -25 * scale))


@pytest.mark.parametrize("which", ["trig", "pos"])
@pytest.mark.parametrize(("r", "m"), [(0.3, 1), (1.0, 3), (2.0, 10)])
def test_base_max_rel_error_is_the_end_value_by_quadrature(which: str, r: float, m: int) -> None:
    """The relative error of each base estimator grows towards its bad end (pi for trig, 0 for ++), so its maximum
    over [0, pi] is the end value, computed here by a 1-d quadrature of the squared error (a different method)."""
    v, e = refs.base_max_rel_error(which, r, m, 20)
    with mpmath.workdps(50):
        t = mpmath.pi if which == "trig" else mpmath.mpf(0)
        end = mpmath.sqrt(_mse_by_quadrature(which, r, r, t, m)) / mpmath.exp(mpmath.mpf(r) ** 2 * mpmath.cos(t))
        assert abs(v - end) <= e + mpmath.mpf(10) ** -18 * end
        assert abs(v - end * (1 + mpmath.mpf(10) ** -12)) > e + mpmath.mpf(10) ** -18 * end


@pytest.mark.parametrize("which", ["trig", "pos"])
@pytest.mark.parametrize(("r", "m"), [(0.3, 1), (1.0, 3), (2.0, 10)])
def test_base_rel_error_limit_equals_the_end_ball(which: str, r: float, m: int) -> None:
    v, e = refs.base_rel_error_limit(which, r, m, 30)
    b = refs.base_rel_error_end_ball(which, r, m, BITS)
    with mpmath.workdps(50):
        t = mpmath.pi if which == "trig" else mpmath.mpf(0)
        end = mpmath.sqrt(_mse_by_quadrature(which, r, r, t, m)) / mpmath.exp(mpmath.mpf(r) ** 2 * mpmath.cos(t))
        assert abs(v - end) <= e
        assert e < mpmath.mpf(10) ** -28 * end
        assert abs(v - end * (1 + mpmath.mpf(10) ** -25)) > e
    with workprec(BITS + 64):
        assert b.overlaps(_arb(end))


@pytest.mark.parametrize("end", ["0", "pi"])
@pytest.mark.parametrize(("r", "m", "n"), [(1.0, 2, 3), (0.5, 1, 1), (2.0, 5, 40)])
def test_angular_rel_error_sqrt_limit_is_w_over_sqrt_2_pi_m_n(end: str, r: float, m: int, n: int) -> None:
    """Thm 3.5's 'Furthermore' holds at both ends (with sqrt(pi - theta) at pi): ``sqrt(1/(2 pi m n)) W(r)``,
    ``W(r) = exp(2r^2)(1 - exp(-4r^2))`` -- a closed form derived independently of the maximisation."""
    v, e = refs.angular_rel_error_sqrt_limit(end, r, m, n, 25)
    with mpmath.workdps(50):
        rm = mpmath.mpf(r)
        w = mpmath.sqrt(1 / (2 * mpmath.pi * m * n)) * mpmath.exp(2 * rm**2) * (1 - mpmath.exp(-4 * rm**2))
        assert e < mpmath.mpf(10) ** -20 * w
        assert abs(v - w) <= e  # the bar covers the error at both ends
        assert abs(v - w * (1 + mpmath.mpf(10) ** -18)) > e


@pytest.mark.parametrize("which", ["trig", "pos"])
@pytest.mark.parametrize("quad", [False, True])
@pytest.mark.parametrize(("nx", "ny", "theta", "m"), _PAIRS)
def test_base_estimator_mean_with_error_is_the_softmax_kernel(which: str, quad: bool, nx: float, ny: float,
                                                             theta: float, m: int) -> None:
    """Both base estimators are unbiased (eq (2)-(3) with eq (6)): ``E S = exp(|x| |y| cos theta)`` (a closed form,
    not the moments' MGF or quadrature)."""
    base, berr = refs.base_moments_with_error(nx, ny, theta, 30, quad=quad)
    h = refs.hybrid_moments_with_error(nx, ny, theta, m, base, berr, [0, 0], [0, 0], 30)
    v, e = refs.base_estimator_mean_with_error(h, which)
    with mpmath.workdps(50):
        sm = mpmath.exp(mpmath.mpf(nx) * mpmath.mpf(ny) * mpmath.cos(mpmath.mpf(theta)))
        assert abs(v - sm) <= e
        assert e < mpmath.mpf(10) ** -25 * sm
        assert abs(v - sm * (1 + mpmath.mpf(10) ** -22)) > e

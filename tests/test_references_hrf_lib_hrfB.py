"""rfcheck.references.hrf, the library code of the appendix C-F / D.3-D.4 claims of HRF (second part).

* ``local_maximiser_balls`` encloses the maximiser ``theta*`` of ``theta^2 exp(2 r^2 cos theta)`` (the shape of
  ``b_r^1``, eq 54), which is the root of ``theta sin theta = 1/r^2`` (eq 59) found independently by a
  50-digit ``findroot``; it refuses balls that are not proven (wrong count, overlap, no sign change);
* ``max_of_balls`` / ``hull_of_balls`` enclose every max / every member;
* ``lambda_estimator_variance`` (quadrature) equals the closed forms ``Var(cos) = (1 - exp(-s^2 |D|^2))^2 / 2``
  and ``Var(pos) = exp(2 s^2 |x + y|^2 - 2 s^2 (|x|^2 + |y|^2)) - exp(-s^2 |x - y|^2)``, over ``n rho^2``, at
  50 digits; its ball contains that value, a planted wrong value is outside, and the constant features give
  an exactly zero ball;
* ``hrf_feature_dim`` counts ``4 m + 4 m n`` features, built or by formula.
"""

from __future__ import annotations

import math

import mpmath
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.references import hrf as R

BITS = 200


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    """Whether ``ball`` contains the 50-digit ``value`` up to its own rounding (10^-45 relative)."""
    with workprec(BITS), mpmath.workdps(60):  # (ends and strings are rounded at the working precision)
        slack = abs(value) * mpmath.mpf(10) ** -45 + mpmath.mpf(10) ** -60
        lo, hi = mpmath.mpf(ball.lower().str(60, radius=False)), mpmath.mpf(ball.upper().str(60, radius=False))
        return lo - slack <= value <= hi + slack


def _b1_shape(r: float):
    ra = arb(r)
    return lambda ctx, u: u**2 * ctx.exp(2 * ra**2 * ctx.cos(u))


@pytest.mark.parametrize("r", [1.0, 1.5, 2.0, 5.0, 9.5])
def test_local_maximiser_ball_holds_the_root_of_eq59(r):
    dps = 40
    ts = R.mp_interior_local_maxima(lambda t: mpmath.log(t**2 * mpmath.exp(2 * mpmath.mpf(r) ** 2 * mpmath.cos(t))),
                                    dps, npts=300)
    balls = R.local_maximiser_balls(_b1_shape(r), ts, BITS, dps)
    assert isinstance(balls, list) and len(balls) == 1
    with mpmath.workdps(50):
        root = mpmath.findroot(lambda t: t * mpmath.sin(t) - 1 / mpmath.mpf(r) ** 2, (mpmath.mpf(0), mpmath.pi / 2),
                               solver="anderson")
        assert _contains(balls[0], root)
        assert not _contains(balls[0], root * (1 + mpmath.mpf(10) ** -20))  # a planted wrong maximiser
        assert balls[0].rad() < 1e-30


def test_local_maximiser_balls_two_maxima_and_refusals():
    f = lambda ctx, u: ctx.sin(3 * u)  # noqa: E731
    ts = R.mp_interior_local_maxima(lambda t: mpmath.sin(3 * t), 30, npts=200)
    balls = R.local_maximiser_balls(f, ts, BITS, 30)
    assert len(balls) == 2
    with mpmath.workdps(50):
        assert _contains(balls[0], mpmath.pi / 6) and _contains(balls[1], 5 * mpmath.pi / 6)
        assert not _contains(balls[0], 5 * mpmath.pi / 6)
    # the proven count must match; duplicate maximisers overlap; a minimiser has no '+ -> -' sign change
    assert "do not enclose" in R.local_maximiser_balls(f, ts[:1], BITS, 30)
    assert "overlap" in R.local_maximiser_balls(f, [ts[0], ts[0]], BITS, 30, count=lambda: 2)
    with mpmath.workdps(50):
        assert "sign change" in R.local_maximiser_balls(f, [mpmath.pi / 2], BITS, 30)
    assert R.local_maximiser_balls(f, ts, BITS, 30, count=lambda: "no proof") == "no proof"


def test_max_and_hull_of_balls():
    vals = [arb(1, 0.5), arb("2.5", 0.25), arb(-3, 1)]
    m, h = R.max_of_balls(vals, 64), R.hull_of_balls(vals, 64)
    for a in (2.25, 2.75):
        assert m.contains(a) and h.contains(a)
    assert not m.contains(1.0) and not m.contains(2.9)
    for a in (-4, 0.5, 1.5, 2.75):
        assert h.contains(a)
    assert not h.contains(2.8) and not h.contains(-4.1)


def _closed_var(kind: str, r, theta, sigma, n: int) -> mpmath.mpf:
    """``Var lam_hat`` from the closed-form feature variances (coordinates of x = r e1, y = r(cos, sin))."""
    r, t, s = mpmath.mpf(r), mpmath.mpf(theta), mpmath.mpf(sigma)
    x, y = (r, 0), (r * mpmath.cos(t), r * mpmath.sin(t))
    dm = (x[0] - y[0]) ** 2 + (x[1] - y[1]) ** 2
    dp = (x[0] + y[0]) ** 2 + (x[1] + y[1]) ** 2
    if kind == "trig":
        var = (1 - mpmath.exp(-s**2 * dm)) ** 2 / 2
    else:
        var = mpmath.exp(2 * s**2 * dp - 2 * s**2 * 2 * r**2) - mpmath.exp(-s**2 * dm)
    rho = 1 - mpmath.exp(-2 * s**2 * r**2)
    return var / (n * rho**2)


CASES = [("trig", 1.0, 2.0, 0.5, 4), ("trig", 0.3, 0.7, 1.7, 1), ("trig", 2.5, 3.0, 0.2, 64),
         ("pos", 1.0, 2.0, 0.5, 4), ("pos", 0.3, 0.7, 1.7, 1), ("pos", 1.2, 0.0, 0.9, 9)]


@pytest.mark.parametrize("kind,r,theta,sigma,n", CASES)
def test_lambda_estimator_variance_vs_closed_form(kind, r, theta, sigma, n):
    with mpmath.workdps(50):
        exact = _closed_var(kind, r, theta, sigma, n)
    v, scale, err = R.lambda_estimator_variance(kind, r, theta, sigma, n, 40)
    assert abs(v - exact) <= err + mpmath.mpf(10) ** -35 * abs(exact)
    assert err < mpmath.mpf(10) ** -35 * (1 + scale)
    assert scale >= v  # E[f^2]/(n rho^2) >= Var(f)/(n rho^2)
    # passing the moments gives the same numbers
    m = R.feature_exp_moments_quad(kind, r, theta, sigma, 40)
    assert R.lambda_estimator_variance(kind, r, theta, sigma, n, 40, moments=m) == (v, scale, err)
    ball, scale_ball = R.lambda_estimator_variance_ball(kind, r, theta, sigma, n, BITS)
    assert _contains(ball, exact) and _contains(scale_ball, scale)
    assert not _contains(ball, exact * (1 + mpmath.mpf(10) ** -20))


@pytest.mark.parametrize("kind,theta", [("trig", 0.0), ("pos", "pi")])
def test_lambda_estimator_variance_exact_zero(kind, theta):
    var, scale = R.lambda_estimator_variance_ball(kind, 1.3, theta, 0.8, 5, BITS)
    assert var.is_exact() and var.is_zero() and scale > 0
    v, _, err = R.lambda_estimator_variance(kind, 1.3, mpmath.pi if theta == "pi" else theta, 0.8, 5, 30)
    assert abs(v) <= err


@pytest.mark.parametrize("m,n", [(1, 1), (3, 5), (16, 16), (200, 100), (10**6, 10**6)])
def test_hrf_feature_dim(m, n):
    assert R.hrf_feature_dim(m, n) == 4 * m + 4 * m * n
    with pytest.raises(ValueError):
        R.hrf_feature_dim(0, n)
    assert math.isclose(R.hrf_feature_dim(m, n) / (m * n), 4 + 4 / n)


@pytest.mark.parametrize("ts", [(0.5, 1.5, 2.5), (2.9, 0.1, 1.0), (0.3, 0.3, 3.0)])
@pytest.mark.parametrize("r", [1.0, 2.5])
def test_sign_pattern_margin_ball(ts, r):
    """fn = theta^2 exp(2 r^2 cos theta) (b_r^1's shape), weight exp(-2 r^2 cos theta): D = 2 t - 2 r^2 t^2 sin t."""
    ra = arb(r)
    ball = R.sign_pattern_margin_ball(_b1_shape(r), list(ts), BITS, weight=lambda t: (-2 * ra**2 * t.cos()).exp())
    with mpmath.workdps(50):
        d = [2 * mpmath.mpf(t) - 2 * mpmath.mpf(r) ** 2 * mpmath.mpf(t) ** 2 * mpmath.sin(t) for t in sorted(ts)]
        exact = min(-d[0], d[1], -d[2])
        assert _contains(ball, exact)
        assert not _contains(ball, exact + mpmath.mpf(10) ** -20)
    # the mpmath twin (numerical derivative) agrees within its error bar
    margin, err = R.sign_pattern_margin(
        lambda t: mpmath.diff(lambda s: s**2 * mpmath.exp(2 * mpmath.mpf(r) ** 2 * mpmath.cos(s)), t)
        * mpmath.exp(-2 * mpmath.mpf(r) ** 2 * mpmath.cos(t)), list(ts), 30)
    assert abs(margin - exact) <= err + mpmath.mpf(10) ** -25
    # a positive weight keeps the sign: the unweighted margin is decided the same way
    unweighted = R.sign_pattern_margin_ball(_b1_shape(r), list(ts), BITS)
    assert bool(unweighted > 0) == bool(ball > 0) and bool(unweighted < 0) == bool(ball < 0)

"""Ball references of HRF (sec 2.4, appendix D.3, appendix F) against 50-digit mpmath, and the
certification they give the claims of appendix F to the end of ``rfcheck.claims.hrf``.

Each ball must contain the 50-digit mpmath value at random points, exclude a planted wrong value,
and a widened ball must never certify."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import arb

import rfcheck.claims.hrf  # noqa: F401  (registers the claims)
from rfcheck.arb_backend import workprec
from rfcheck.certify import certified_inequality
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.references import hrf as refs

BITS = 128  # about 38 digits: a 50-digit mpmath value lies well inside the radius
RNG = np.random.default_rng(20261127)


def _ball_of_mp(v: mpmath.mpf) -> arb:
    """The 50-digit mpmath value as a (near-exact) ball at 400 bits."""
    with workprec(400):
        return arb(mpmath.nstr(v, 60))


def _contains(ball: arb, v: mpmath.mpf) -> bool:
    with workprec(400):
        return ball.contains(_ball_of_mp(v))


def _contains_with_bar(ball: arb, v: mpmath.mpf, err: mpmath.mpf) -> bool:
    """The ball contains the whole interval ``[v - err, v + err]`` (where the true value lies), at 400 bits."""
    with workprec(400):
        return ball.contains(_ball_of_mp(v) + arb(0, float(err) * (1 + 1e-10)))


def _planted(v: mpmath.mpf, rel: float = 1e-20) -> mpmath.mpf:
    return v + (abs(v) + 1) * rel


# ---------------------------------------------------------------- sgn_product_mean_ball


@pytest.mark.parametrize("theta", [float(t) for t in RNG.uniform(0, math.pi, 5)] + [math.pi / 2, math.pi])
def test_sgn_product_mean_ball_contains_the_50_digit_quadrature(theta):
    ball = refs.sgn_product_mean_ball(theta, BITS)
    with mpmath.workdps(50):
        v, err = refs.sgn_product_mean_quad(theta, 50)
        closed = 1 - 2 * mpmath.mpf(theta) / mpmath.pi  # a third, independent value
    assert err < mpmath.mpf(10) ** -45
    assert _contains(ball, v) and _contains(ball, closed)
    assert not _contains(ball, _planted(v))
    assert ball.rad() < 1e-35


def test_sgn_product_mean_ball_is_exactly_one_at_theta_zero_and_rejects_bad_angles():
    one = refs.sgn_product_mean_ball(0.0, 64)
    assert one.is_exact() and one == 1
    with pytest.raises(ValueError):
        refs.sgn_product_mean_ball(-0.1, 64)
    with pytest.raises(ValueError):
        refs.sgn_product_mean_ball(3.2, 64)


# ------------------------------------------------------------- feature_exp_moments_ball


@pytest.mark.parametrize("kind", ["trig", "pos"])
@pytest.mark.parametrize("k", range(4))
def test_feature_exp_moments_ball_contains_the_50_digit_quadrature(kind, k):
    r, theta, sigma = (float(RNG.uniform(0.05, 2.0)), float(RNG.uniform(0.1, math.pi - 0.1)),
                       float(RNG.uniform(0.2, 1.5)))
    m1b, m2b, varb = refs.feature_exp_moments_ball(kind, r, theta, sigma, BITS)
    with mpmath.workdps(50):
        m1, m2, err = refs.feature_exp_moments_quad(kind, r, theta, sigma, 50)
        var = m2 - m1**2
    assert err < mpmath.mpf(10) ** -40 * (1 + abs(m2))
    for ball, v, bar in ((m1b, m1, err), (m2b, m2, err), (varb, var, err * (3 + 2 * abs(m1)))):
        # the quadrature's interval [v - bar, v + bar] (bar about 1e-55, far below the ball's radius) lies inside
        assert _contains_with_bar(ball, v, bar)
        assert not _contains(ball, _planted(v, 1e-15))


@pytest.mark.parametrize(("kind", "theta"), [("trig", 0.0), ("pos", "pi")])
def test_the_constant_feature_has_exactly_zero_variance(kind, theta):
    _, _, var = refs.feature_exp_moments_ball(kind, 1.3, theta, 0.7, 128)
    assert var.is_exact() and var.is_zero()
    assert certified_inequality(var, 0) == "HOLDS"


@pytest.mark.parametrize(("kind", "theta"), [("trig", "pi"), ("pos", 0.0)])
def test_the_other_end_has_a_certified_positive_variance(kind, theta):
    _, m2, var = refs.feature_exp_moments_ball(kind, 1.3, theta, 0.7, 128)
    with mpmath.workdps(50):
        m1q, m2q, err = refs.feature_exp_moments_quad(kind, 1.3, mpmath.pi if theta == "pi" else theta, 0.7, 50)
        assert err < mpmath.mpf(10) ** -45
        var_q, bar = m2q - m1q**2, err * (3 + 2 * abs(m1q))  # at 50 digits (not at the default 15)
    assert _contains_with_bar(var, var_q, bar)
    assert not _contains(var, _planted(var_q, 1e-12))
    assert certified_inequality(arb(1e-25) * m2, var) == "HOLDS"
    with pytest.raises(ValueError):
        refs.feature_exp_moments_ball("cos", 1.0, 0.5, 1.0, 64)


# ---------------------------------------------------------------------- derivative_ball


def _b1(ctx, u, r, n):
    """Eq (54)'s b_r^1 shape: (1 - 1/n) (u/pi)^2 exp(2 r^2 cos u)."""
    return (1 - 1 / n) * (u / ctx.pi) ** 2 * ctx.exp(2 * r**2 * ctx.cos(u))


@pytest.mark.parametrize("k", range(5))
def test_derivative_ball_contains_the_50_digit_derivative(k):
    r, t, n = float(RNG.uniform(1.0, 5.0)), float(RNG.uniform(0.0, math.pi)), int(RNG.integers(2, 1000))
    ball = refs.derivative_ball(lambda ctx, u: _b1(ctx, u, arb(r), arb(n)), t, BITS)
    with mpmath.workdps(60):
        rr = mpmath.mpf(r)
        d = mpmath.diff(lambda s: (1 - mpmath.mpf(1) / n) * (s / mpmath.pi) ** 2
                        * mpmath.exp(2 * rr**2 * mpmath.cos(s)), mpmath.mpf(t))
    assert _contains(ball, d)
    assert not _contains(ball, _planted(d))


def test_derivative_ball_of_a_constant_is_exactly_zero():
    zero = refs.derivative_ball(lambda ctx, u: _b1(ctx, u, arb(2), arb(1)), 0.7, 64)  # 1 - 1/n = 0
    assert zero.is_exact() and zero.is_zero()
    assert refs.derivative_ball(lambda ctx, u: arb(3), 0.7, 64) == 0


# ----------------------------------------------------------------- max_on_interval_ball


@pytest.mark.parametrize("k", range(4))
def test_max_on_interval_ball_contains_the_50_digit_maximum(k):
    i, r, n = int(RNG.integers(1, 3)), float(RNG.uniform(1.0, 6.0)), int(RNG.integers(2, 500))
    ball = refs.max_on_interval_ball(lambda ctx, u: _bi(ctx, i, u, arb(r), arb(n)), 0.0, "pi", BITS, rtol=1e-32)
    with mpmath.workdps(50):
        rr = mpmath.mpf(r)

        def f(t):
            return _bi(mpmath, i, t, rr, n)

        # the maximum is at theta = pi or at the interior critical point theta sin theta = c (d log b = 0)
        c = 1 / rr**2 if i == 1 else 1 / (2 * rr**2)
        t_star = mpmath.findroot(lambda t: t * mpmath.sin(t) - c, (mpmath.mpf(10) ** -8, mpmath.pi / 2),
                                 solver="anderson")
        best = max(f(t_star), f(mpmath.pi))
    assert _contains(ball, best)
    assert not _contains(ball, _planted(best))
    assert ball.rad() < 1e-30 * abs(ball.mid())


@pytest.mark.parametrize("k", range(3))
def test_interior_local_maxima_balls_find_the_one_maximiser_of_eq_54_55(k):
    i, r, n = int(RNG.integers(1, 3)), float(RNG.uniform(1.0, 8.0)), int(RNG.integers(2, 500))
    balls = refs.interior_local_maxima_balls(lambda ctx, u: _bi(ctx, i, u, arb(r), arb(n)), 0.0, "pi", BITS)
    with mpmath.workdps(50):
        c = 1 / mpmath.mpf(r) ** 2 if i == 1 else 1 / (2 * mpmath.mpf(r) ** 2)
        t_star = mpmath.findroot(lambda t: t * mpmath.sin(t) - c, (mpmath.mpf(10) ** -8, mpmath.pi / 2),
                                 solver="anderson")
    assert len(balls) == 1 and _contains(balls[0], t_star)
    assert not _contains(balls[0], t_star + 0.2)


def test_interior_local_maxima_balls_count_every_maximum():
    balls = refs.interior_local_maxima_balls(lambda ctx, u: ctx.sin(3 * u), 0.0, "pi", BITS)
    assert len(balls) == 2  # pi/6 and 5 pi/6 (pi/2 is a minimum)
    assert _contains(balls[0], mpmath.pi / 6) and _contains(balls[1], 5 * mpmath.pi / 6)


def _sqrt_bump(ctx, u):
    """sqrt(u) exp(-100 u) + 0.02 exp(-(u - 3)^2): its series is NaN on pieces touching 0 (sqrt' unbounded)."""
    return ctx.sqrt(u) * ctx.exp(-100 * u) + arb("0.02") * ctx.exp(-((u - 3) ** 2))


def test_max_on_interval_ball_keeps_a_piece_whose_bound_is_nan():
    # the true maximum 0.0429 is near u = 0.005, on the piece whose enclosure is NaN; dropping that piece
    # (a NaN bound compares False) returned [0.0200 +/- 1e-14], the other bump's maximum, excluding 0.0429
    with mpmath.workdps(50):
        def f(u):
            return mpmath.sqrt(u) * mpmath.exp(-100 * u) + mpmath.mpf("0.02") * mpmath.exp(-((u - 3) ** 2))

        def df(u):
            return (mpmath.exp(-100 * u) * (1 / (2 * mpmath.sqrt(u)) - 100 * mpmath.sqrt(u))
                    - mpmath.mpf("0.04") * (u - 3) * mpmath.exp(-((u - 3) ** 2)))

        t = mpmath.findroot(df, (mpmath.mpf("0.004"), mpmath.mpf("0.006")), solver="anderson")
        assert abs(mpmath.diff(f, t)) < mpmath.mpf(10) ** -30
        true = f(t)
    ball = refs.max_on_interval_ball(_sqrt_bump, 0.0, 4.0, 64, rtol=1e-12)
    assert _contains(ball, true)
    with workprec(64):
        assert not ball.upper() < arb("0.0428")


@pytest.mark.parametrize("rtol", [1e-2, 1.0])
@pytest.mark.parametrize("npts", [64, 2])
def test_max_on_interval_ball_never_ends_with_no_piece(rtol, npts):
    # every piece's bound NaN-or-below once made an empty list (IndexError); a piece is now kept unless its
    # bound is decided below the best value
    ball = refs.max_on_interval_ball(lambda ctx, u: ctx.sqrt(u) * ctx.exp(-100 * u), 0.0, 4.0, 64, rtol=rtol,
                                     npts=npts)
    with mpmath.workdps(50):
        true = mpmath.sqrt(mpmath.mpf("0.005")) * mpmath.exp(mpmath.mpf("-0.5"))  # at u = 1/200
    assert _contains(ball, true)


def test_max_on_interval_ball_raises_when_fn_has_no_finite_value():
    with pytest.raises(ValueError):
        refs.max_on_interval_ball(lambda ctx, u: ctx.log(u - 10), 0.0, 1.0, 64, rtol=1e-10)


def test_interior_local_maxima_balls_find_a_maximum_on_a_piece_edge():
    # on [0, 61/32] with 61 pieces the edges are k/32: the maximiser u = 1 of -(u - 1)^2 is an edge, where
    # fn' is exactly 0 (both pieces were skipped, returning [])
    balls = refs.interior_local_maxima_balls(lambda ctx, u: -((u - 1) ** 2), 0.0, 61 / 32, 64)
    assert len(balls) == 1 and balls[0].contains(1)
    # a minimum on an edge is no maximum; a maximum on an end of [lo, hi] is not interior
    assert refs.interior_local_maxima_balls(lambda ctx, u: (u - 1) ** 2, 0.0, 61 / 32, 64) == []
    assert refs.interior_local_maxima_balls(lambda ctx, u: -(u**2), 0.0, 61 / 32, 64) == []
    # two edge maxima (u = 1/2 and 3/2 of -(u - 1/2)^2 (u - 3/2)^2, 1 a minimum, all edges)
    two = refs.interior_local_maxima_balls(lambda ctx, u: -((u - 0.5) ** 2) * (u - 1.5) ** 2, 0.0, 61 / 32, 64)
    assert len(two) == 2 and two[0].contains(arb("0.5")) and two[1].contains(arb("1.5"))


def _bi(ctx, i, u, r, n):
    """Eq (54)-(55)'s shapes, ``ctx`` mpmath or a context."""
    q = u / ctx.pi
    return ((1 - 1 / mpmath.mpf(n) if ctx is mpmath else 1 - 1 / n) * q**2 if i == 1 else q / n) * \
        ctx.exp(2 * r**2 * ctx.cos(u))


# ------------------------------------------------------------------ the claims certify


def _evaluate(cid: str, check: str, p: dict):
    c = REGISTRY[cid]
    checks = list(c.checks) + [k for r in (c.readings or []) for k in r.checks]
    (chk,) = [k for k in checks if k.name == check]
    return chk.evaluate(p, BUDGETS["default"], 0)


@pytest.mark.parametrize(("cid", "check", "p"), [
    ("hrf.eq19", "quadrature", {"theta": 1.1, "n": 7, "nx": 1.0, "ny": 2.0}),
    ("hrf.eq19", "quadrature", {"theta": math.pi, "n": 10_000, "nx": 0.1, "ny": 3.0}),
    ("hrf.eq34", "same-draws", {"nx": 1.2, "ny": 0.7, "theta": 2.0, "m": 5}),
    ("hrf.eq35", "same-draws", {"nx": 1.2, "ny": 0.7, "theta": 2.0, "m": 5}),
    ("hrf.eq75", "characteristic-function", {"nx": 1.0, "ny": 2.0, "theta": 1.0, "n": 3, "sigma": 0.5, "r": 1.0}),
    ("hrf.eq102", "indicators", {"seed": 3, "d": 2, "nq": 3, "nk": 4}),
    ("hrf.text-d3-derivatives.signs", "numerical-differentiation",
     {"r": 2.0, "n": 10, "i": 1, "t1": 0.1, "t2": 1.0, "t3": 3.0}),
    ("hrf.text-d3-endpoints", "non-negative", {"r": 3.0, "n": 1, "theta": 0.0}),
    ("hrf.text-f-lambda-range", "coordinates", {"r": 5.0, "theta": math.pi, "sigma": 3.0}),
    ("hrf.text-f-not-both", "moment-expansion", {"r": 1.0, "theta": 0.5, "m": 2, "n": 3, "sigma": 0.5}),
    ("hrf.text-f-lambda-estimator.trig-zero-at-0", "quadrature", {"r": 1.0, "sigma": 0.5, "n": 3}),
    ("hrf.text-f-lambda-estimator.pos-zero-at-pi", "quadrature", {"r": 1.0, "sigma": 0.5, "n": 3}),
    ("hrf.text-f-lambda-estimator.not-both", "quadrature-trig-at-pi", {"r": 1.0, "sigma": 0.5, "n": 3}),
    ("hrf.eq56", "numerical-maximisation", {"r": 2.0, "n": 5}),
    ("hrf.text-d3-global-max", "numerical-maximisation", {"r": 2.0, "n": 7, "i": 1}),
    ("hrf.text-d3-global-max", "numerical-maximisation", {"r": 10.0, "n": 1, "i": 2}),
    ("hrf.eq59", "numerical-maximisation", {"r": 2.0, "n": 5}),
    ("hrf.text-d3-derivatives.local-max", "grid-and-root", {"r": 5.0, "n": 2, "i": 1}),
    ("hrf.text-d3-derivatives.local-max", "grid-and-root", {"r": 1.0, "n": 1, "i": 2}),
    ("hrf.eq60", "numerical-maximisation", {"r": 7.3, "n": 9000}),
    ("hrf.eq62.left", "numerical-maximisation", {"r": 1.0, "n": 2}),
    ("hrf.thmf.2", "moment-expansion", {"r": 0.05, "theta": math.pi, "m": 1, "n": 1, "sigma": 0.2}),
])
def test_decided_points_are_certified(cid, check, p):
    ev = _evaluate(cid, check, p)
    assert ev.decided and ev.disc <= 1
    assert ev.extra["certified"] is True, ev.extra


@pytest.mark.parametrize(("cid", "check", "p", "why"), [
    ("hrf.eq86", "mpmath", {"ri0": 1.0, "ri1": -0.5, "rj0": 0.3, "rj1": 0.7, "kind": "complex"}, "exactly 0"),
    ("hrf.eq56", "numerical-maximisation", {"r": 2.0, "n": 1}, "equality"),
    ("hrf.eq19", "monte-carlo", {"theta": 1.0, "n": 4, "nx": 1.0, "ny": 1.0}, "Monte Carlo"),
])
def test_uncertifiable_points_say_why(cid, check, p, why):
    ev = _evaluate(cid, check, p)
    assert ev.decided
    assert ev.extra["certified"] is False and why in ev.extra["not_certified"]


def test_the_local_maximiser_ball_brackets_a_sign_change_of_the_exact_derivative():
    from rfcheck.claims import hrf as H

    p = {"r": 2.0, "n": 5}
    (ball,) = H._b1_locmax_balls(p, 116)
    with mpmath.workdps(40):
        t = mpmath.findroot(lambda u: u * mpmath.sin(u) - mpmath.mpf(1) / 4, 0.5)  # eq (59) at r = 2
    assert _contains(ball, t) and ball.rad() < 1e-25
    with workprec(116):  # a ball of the printed 1/r^2 and of theta* sin theta* agree; a planted value does not
        assert (H._eq59_ball(p, 116) - arb(1) / 4).contains(0)
        assert not (H._eq59_ball(p, 116) - arb(1) / 4 - arb("1e-20")).contains(0)


def test_the_maximiser_balls_must_be_as_many_as_the_proven_maxima(monkeypatch):
    # the grid's balls enclose every maximiser only when their number is the proven one: a grid that misses
    # one (simulated: a proof counting two) leaves eq (59), (60), (62 left) uncertified, saying so
    from rfcheck.claims import hrf as H

    p = {"r": 2.0, "n": 5}
    b1 = lambda ctx, u: H._b_ctx(ctx, 1, arb(2), u, arb(5))  # noqa: E731
    assert len(refs.interior_local_maxima_balls(b1, 0.0, "pi", 116)) == 1  # the proven count
    ev = _evaluate("hrf.eq60", "numerical-maximisation", p)
    assert ev.extra["certified"] is True
    monkeypatch.setattr(refs, "interior_local_maxima_balls", lambda *a, **k: [arb(1), arb(2)])
    assert "the proof on balls 2" in H._b1_locmax_balls(p, 116)
    for cid in ("hrf.eq59", "hrf.eq60", "hrf.eq62.left"):
        ev = _evaluate(cid, "numerical-maximisation", p)
        assert ev.decided and ev.extra["certified"] is False
        assert "the proof on balls 2" in ev.extra["not_certified"], ev.extra


def test_the_maxima_over_0_pi_cover_pi_itself():
    # interval_max_bounds on [0, math.pi] misses (math.pi, pi]; the claims' bounds cover that sliver too
    with workprec(128):
        pi_hi = arb.pi().upper()
    lo, hi = refs.max_bounds_0_pi(lambda t: t, 128, max_evals=40)  # the identity: its maximum is pi
    with workprec(128):
        assert hi >= pi_hi and lo <= arb.pi().lower()
    with workprec(128):
        assert arb(math.pi) < arb.pi()  # the float pi is below pi


def test_a_widened_inequality_ball_never_certifies():
    from rfcheck.claims import hrf as H

    lhs, rhs = H._lam_range_balls({"r": 1.0, "theta": 1.0, "sigma": 1.0}, 128)
    assert certified_inequality(lhs, rhs) == "HOLDS"
    with workprec(128):
        assert certified_inequality(lhs + arb(0, 10), rhs) is None

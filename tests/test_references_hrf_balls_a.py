"""Balls behind the certified HOLDS claims of HRF sec 2.3 - appendix D.3 (rfcheck.references.hrf, second part).

* :func:`cexp_vectors_ball` (rigorous ``acb_mat`` inverse), :func:`increasing_root_ball`,
  :func:`angular_lambda_on_draws` and :func:`interval_max_ball` contain 50-digit mpmath values at
  random points; a planted wrong value is disjoint (REFUTED); a widened ball never certifies;
* the built-in claims whose HOLDS points these balls now certify (eq (14), (15), (43), (51), (52),
  (61), (63), (65), Lemma 3.4's limits) certify at a point, and the ones that cannot say why.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import acb, arb

from rfcheck.arb_backend import ARB, workprec
from rfcheck.backends import MP
from rfcheck.certify import certified_equal, certified_inequality
from rfcheck.checkkit import certify_on_draws
from rfcheck.claims._common import eval_on_balls, mp_point
from rfcheck.estimators import hrf as hy
from rfcheck.references import hrf as R

BITS = 200
RNG = np.random.default_rng(20261127)


def _contains(ball: arb | acb, value: mpmath.mpf | mpmath.mpc) -> bool:
    """Whether ``ball`` contains the 50-digit ``value`` up to 10^-45 relative."""
    slack = abs(value) * mpmath.mpf(10) ** -45 + mpmath.mpf(10) ** -60
    if isinstance(ball, acb):
        v = mpmath.mpc(value)
        return _contains(ball.real, v.real) and _contains(ball.imag, v.imag)
    lo, hi = mpmath.mpf(ball.lower().str(60, radius=False)), mpmath.mpf(ball.upper().str(60, radius=False))
    return lo - slack <= value <= hi + slack


def _random_a() -> list[list[complex]]:
    a = RNG.uniform(-1, 1, (2, 2)) + 1j * RNG.uniform(-1, 1, (2, 2)) + 1.5 * np.eye(2)
    return [[complex(v) for v in row] for row in a]


@pytest.mark.parametrize("k", range(4))
def test_cexp_vectors_ball_contains_mpmath(k: int) -> None:
    a, x, y = _random_a(), [float(v) for v in RNG.uniform(-1, 1, 2)], [float(v) for v in RNG.uniform(-1, 1, 2)]
    ax, by, z = R.cexp_vectors_ball(a, x, y, BITS)
    with mpmath.workdps(50):
        am = mpmath.matrix([[mpmath.mpc(v) for v in row] for row in a])
        axm, bym = am * mpmath.matrix(x), (am.T) ** -1 * mpmath.matrix(y)
        for i in range(2):
            assert _contains(ax[i], axm[i]) and _contains(by[i], bym[i]) and _contains(z[i], axm[i] + bym[i])
    with workprec(BITS):
        assert certified_equal(z[0], z[0] + arb(10) ** -20) == "REFUTED"  # planted


def test_eq14_balls_agree_and_planted_value_is_disjoint() -> None:
    """Both faces of eq (14) (printed, reference by quadrature) contain the mpmath value; a wrong sign is disjoint."""
    from rfcheck.claims import hrf as H

    p = {"a00r": 0.3, "a00i": -0.2, "a01r": 0.5, "a01i": 0.1, "a10r": -0.4, "a10i": 0.9, "a11r": 0.2, "a11i": 0.0,
         "shift": 1.5j, "x0": 0.3, "x1": -0.8, "y0": 0.9, "y1": 0.1}
    pb, rb = eval_on_balls(H.printed_eq14_ctx, p, BITS), H._eq14_ref_ball(p, BITS)
    with mpmath.workdps(50):
        v = H.printed_eq14_ctx(MP, mp_point(p))
    assert _contains(pb, v) and _contains(rb, v)
    assert certified_equal(pb, rb, 1e-40) == "HOLDS"
    with workprec(BITS):
        assert certified_equal(pb, rb * (1 + arb(10) ** -20)) == "REFUTED"
        assert certified_equal(pb, rb + acb(arb(0, 1))) is None  # widened: never a verdict


@pytest.mark.parametrize("r", [1.0, 1.7, 4.2, 9.9])
def test_increasing_root_ball_encloses_the_root(r: float) -> None:
    with mpmath.workdps(80):
        rm = mpmath.mpf(r)
        root = mpmath.findroot(lambda t: rm**2 * t * mpmath.sin(t) - 1, 1 / rm)
    rb = R.num(ARB, r)
    ball = R.increasing_root_ball(lambda u: rb**2 * u * ARB.sin(u) - 1, root, BITS)
    assert _contains(ball, root) and ball.rad() < 2.0 ** (-BITS + 30)
    with pytest.raises(ValueError):  # a guess off the root brackets no sign change
        R.increasing_root_ball(lambda u: rb**2 * u * ARB.sin(u) - 1, root + mpmath.mpf(10) ** -20, BITS)
    with mpmath.workdps(60), workprec(BITS):
        assert certified_equal(ball, arb(mpmath.nstr(root + mpmath.mpf(10) ** -30, 60))) == "REFUTED"


def test_angular_lambda_on_draws_matches_numpy_and_is_exact() -> None:
    for n in (1, 7, 64):
        x, y = RNG.normal(size=2), RNG.normal(size=2)
        tau = RNG.normal(size=(n, 2))
        b = R.on_balls(lambda ctx, x=x, y=y, tau=tau: R.angular_lambda_on_draws(ctx, list(x), list(y), tau), bits=BITS)
        v = float(hy.angular_lambda(x, y, tau[None])[0])
        sep = sum(1 for t in tau if np.sign(t @ x) != np.sign(t @ y))
        assert abs(v - sep / n) < 1e-15 and _contains(b, mpmath.mpf(sep) / n)
        assert R.angular_lambda_on_draws(MP, list(x), list(y), tau) == mpmath.mpf(sep) / n


def _mp_max(f, lo: float, hi: float) -> mpmath.mpf:
    """50-digit maximum of a smooth unimodal-near-the-top ``f``: dense grid, then a root of ``f'``."""
    with mpmath.workdps(50):
        ts = [lo + (hi - lo) * k / 2000 for k in range(2001)]
        t0 = max(ts, key=lambda t: f(mpmath.mpf(t)))
        t = (mpmath.findroot(lambda s: mpmath.diff(lambda u: mpmath.log(f(u)), s), mpmath.mpf(t0)) if lo < t0 < hi
             else mpmath.mpf(t0))
        return f(t)


@pytest.mark.parametrize("r, n", [(1.0, 2), (2.5, 10), (7.0, 1000)])
def test_interval_max_ball_encloses_the_maximum(r: float, n: int) -> None:
    """b_r^1 of HRF eq (54) on [0, pi]: the enclosure contains the 50-digit maximum; asked to prove the maximum below
    a value just under it, it never does (the upper end stays above the maximum)."""
    from rfcheck.claims import hrf as H

    mx = _mp_max(lambda t: H._b_ctx(MP, 1, r, t, n), 0.0, math.pi)
    rb, nb = R.num(ARB, r), R.num(ARB, n)
    ball = R.interval_max_ball(lambda t: H._b_ctx(ARB, 1, rb, t, nb), 0.0, math.pi, BITS, max_evals=4000)
    assert _contains(ball, mx)
    with mpmath.workdps(50), workprec(BITS):
        under = arb(mpmath.nstr(mx * (1 - mpmath.mpf(10) ** -6), 50))
        over = arb(mpmath.nstr(mx * 1.5, 50))
    tight = R.interval_max_ball(lambda t: H._b_ctx(ARB, 1, rb, t, nb), 0.0, math.pi, BITS, below=under, max_evals=400)
    assert certified_inequality(tight, under) in (None, "REFUTED") and _contains(tight, mx)
    proved = R.interval_max_ball(lambda t: H._b_ctx(ARB, 1, rb, t, nb), 0.0, math.pi, BITS, below=over,
                                 max_evals=400)
    assert certified_inequality(proved, over) == "HOLDS" and _contains(proved, mx)
    with workprec(BITS):  # widened past ``over`` (still containing the maximum): no longer certifies max <= over
        widened = proved + arb(0, 2 * (over - proved.lower()).upper())
        assert widened.upper() > over and _contains(widened, mx)
        assert certified_inequality(widened, over) is None
        assert certified_inequality(widened, widened.upper()) == "HOLDS"  # at its own upper end it still does


def _tie_f(c: arb):
    """``f(t) = 1 + c (2t - 1)^2 (t + 1) / 2`` on ``[0, 1]``: maximum ``1 + c`` at ``t = 1``; with ``c = 2^-70``
    the upper bounds of ``f`` on different subintervals round to the same float64."""
    return lambda t: 1 + c * (2 * t - 1) ** 2 * (t + 1) / 2


@pytest.mark.parametrize("max_evals", [4, 6, 10, 40, 400])
def test_interval_max_bounds_orders_bounds_exactly_not_by_their_floats(max_evals: int) -> None:
    """Upper bounds that differ below float64 resolution: ``U >= max f`` at every budget, and asked to prove
    ``max f <= 1 + 0.9 c`` (false) it never returns ``U`` below that value."""
    with workprec(128):
        c = arb(2) ** -70
        below, mx = 1 + c * arb("0.9"), 1 + c
    f = _tie_f(c)
    for kw in ({}, {"below": below}, {"guess": 0.25}):
        lo, hi = R.interval_max_bounds(f, 0.0, 1.0, 128, max_evals=max_evals, **kw)
        with workprec(128):
            assert lo <= mx <= hi, (kw, lo, hi)
            assert not hi < below
            assert certified_inequality(R.interval_max_ball(f, 0.0, 1.0, 128, max_evals=max_evals, **kw),
                                        below) != "HOLDS"


@pytest.mark.parametrize("max_evals", [6, 40])
def test_interval_max_bounds_beyond_float_range(max_evals: int) -> None:
    """Upper bounds above 1.8e308 (all ``inf`` as floats): ``U >= max g = e^810`` and ``L <= U``."""
    def g(t):
        return ARB.exp(800 + 10 * (2 * t - 1) ** 2 * (t + 1) / 2)

    lo, hi = R.interval_max_bounds(g, 0.0, 1.0, 128, max_evals=max_evals)
    with workprec(128):
        assert hi.is_finite() and lo <= arb(810).exp() <= hi


def test_interval_max_bounds_rejects_a_guess_outside_the_interval() -> None:
    with pytest.raises(ValueError, match="guess"):
        R.interval_max_bounds(_tie_f(arb(1)), 0.0, 1.0, 128, guess=1.5)


def test_eq43_certifies_all_replicates_and_an_undecided_sign_is_not_a_crash() -> None:
    """eq (43)'s point certification covers all 16 replicates (a planted wrong replicate among equal ones is not
    certified HOLDS); a dot product whose ball straddles 0 (d = 3, a near-cancelling sum) leaves the point
    uncertified with the reason, instead of raising ``UndecidableError``."""
    from rfcheck.claims import BUDGETS
    from rfcheck.claims import hrf as H
    from rfcheck.stats import compare_deterministic

    def holds() -> object:
        return compare_deterministic({}, 0.5, 0.5, 0, rtol=0, atol=1e-15)

    with workprec(BITS):
        good = [(arb(1) / 2, arb(1) / 2)] * 16
        bad = [*good[:7], (arb(1) / 2, arb(1) / 2 + arb(2) ** -40), *good[8:]]
    ev = certify_on_draws(holds(), BUDGETS["default"], lambda ctx: good, tol=1e-15)
    assert ev.extra["certified"] is True
    ev = certify_on_draws(holds(), BUDGETS["default"], lambda ctx: bad, tol=1e-15)
    assert ev.extra["certified"] is False and "REFUTED" in ev.extra["not_certified"]
    tau = [[1.0, 2.0**-200, -1.0]]
    x, y = [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]
    ev = certify_on_draws(holds(), BUDGETS["default"], lambda ctx: [(
        R.angular_lambda_on_draws(ctx, x, y, tau), R.angular_lambda_on_draws(ctx, x, y, tau))], tol=1e-15)
    assert ev.extra["certified"] is False and "not decided" in ev.extra["not_certified"]
    ev = certify_on_draws(holds(), BUDGETS["default"], lambda ctx: [(
        H._eq43_printed_on_draws(ctx, [1.0, 1.0], [1.0, 0.0], t), R.angular_lambda_on_draws(ctx, [1.0, 1.0],
                                                                                            [1.0, 0.0], t))
        for t in RNG.standard_normal((16, 9, 2))], tol=1e-15)
    assert ev.extra["certified"] is True


CERTIFIED_HOLDS_AT = [
    ("hrf.eq14", {"a00r": 0.3, "a00i": -0.2, "a01r": 0.5, "a01i": 0.1, "a10r": -0.4, "a10i": 0.9, "a11r": 0.2,
                  "a11i": 0.0, "shift": 1.5j, "x0": 0.3, "x1": -0.8, "y0": 0.9, "y1": 0.1}),
    ("hrf.eq15", {"a00r": 0.3, "a00i": -0.2, "a01r": 0.5, "a01i": 0.1, "a10r": -0.4, "a10i": 0.9, "a11r": 0.2,
                  "a11i": 0.0, "shift": 1.5, "x0": 0.3, "x1": -0.8, "y0": 0.9, "y1": 0.1}),
    ("hrf.eq43", {"nx": 1.0, "ny": 2.0, "theta": 1.0, "n": 9}),
    ("hrf.eq52", {"r": 10.0, "theta": math.pi / 2, "n": 1}),
    ("hrf.eq61", {"r": 2.0}),
    ("hrf.eq63", {"r": 3.0, "n": 100}),
    ("hrf.eq65", {"r": 2.0, "m": 3, "n": 10}),
    ("hrf.eq51", {"r": 2.0, "m": 3, "n": 10}),
    ("hrf.text-sec4-max-rel-error", {"r": 1.0, "base": "pos"}),
    ("hrf.lem3.4.limits", {"r": 2.0, "m": 5}),
    ("hrf.lem3.4.trig", {"r": 3.0, "theta": 0.0, "m": 1}),
]

# REFUTED claims whose holding points the enclosure of the maximum now certifies as well
CERTIFIED_HOLDING_POINT_OF_REFUTED = [
    ("hrf.thm3.5.bound", {"r": 2.0, "m": 10, "n": 10}),
    ("hrf.eq64", {"r": 1.5, "n": 10}),
]


@pytest.mark.parametrize("claim_id, at", CERTIFIED_HOLDING_POINT_OF_REFUTED,
                         ids=[c for c, _ in CERTIFIED_HOLDING_POINT_OF_REFUTED])
def test_holding_points_of_refuted_max_bounds_are_certified(claim_id: str, at: dict) -> None:
    from rfcheck.verify import run_claim

    d = run_claim(claim_id, at=at).as_dict()
    assert d["verdict"] == "HOLDS", d["reason"]  # at this point the bound holds
    assert d["certified"]["points"] == d["certified"]["decided"] > 0, d["certified"]


def test_interval_max_bounds_over_many_orders_of_magnitude() -> None:
    """eps^2 of the angular hybrid at r = 6.6 spans ~80 orders of magnitude over [0, pi]: the bounds stay ordered
    and finite, the lower one is a value of the function, and the hull of their logs contains the 50-digit maximum."""
    r, m, n = 6.6, 1000, 1
    rb, mb, nb = (R.num(ARB, v) for v in (r, m, n))

    def eps2(t):
        l1, l2 = R.angular_lambda_moments(ARB, t, nb)
        return R.hybrid_mse(ARB, rb, rb, t, mb, l1, l2, 0) * ARB.exp(-2 * rb**2 * ARB.cos(t))

    lo, hi = R.interval_max_bounds(eps2, 0.0, math.pi, BITS, guess=R.angular_rel_error_argmax(r, m, n),
                                   max_evals=3000)
    assert lo.is_finite() and hi.is_finite() and lo <= hi and lo > 0
    with mpmath.workdps(50):
        def log_eps(t):
            return R.log_rel_error_hybrid_same_length(MP, mpmath.mpf(r), t, m, n)
        mx = _mp_max(lambda t: mpmath.exp(2 * log_eps(t)), 1e-6, math.pi / 2)
        with workprec(BITS):
            hull = lo.log().union(hi.log())
        assert _contains(hull, mpmath.log(mx))


@pytest.mark.parametrize("claim_id, at", CERTIFIED_HOLDS_AT, ids=[c for c, _ in CERTIFIED_HOLDS_AT])
def test_hrf_holds_points_are_certified(claim_id: str, at: dict) -> None:
    from rfcheck.verify import run_claim

    d = run_claim(claim_id, at=at).as_dict()
    assert d["verdict"] == "HOLDS", d["reason"]
    assert d["certified"]["points"] == d["certified"]["decided"] > 0, d["certified"]


@pytest.mark.parametrize("claim_id, at, words", [
    ("hrf.eq17", {"r00": 0.1, "r01": 0.2, "r10": -0.3, "r11": 0.4, "imag": False, "y0": 0.5, "y1": -0.5}, "rounded"),
    ("hrf.text-angular-zero-variance", {"r": 1.0, "theta": 1.0, "m": 2, "n": 3, "shared": 0}, "exact identity"),
    ("hrf.lem2.3", {"seed": 3, "d": 2, "m": 3, "n": 3, "p": 2, "scale": 0.5}, "float64 identity"),
    ("hrf.thm3.5.limit0", {"r": 2.0, "m": 3, "n": 4}, "numerical limit"),
    ("hrf.lem3.4.max-trig", {"r": 2.0, "m": 3}, "maximum over theta"),
])
def test_uncertifiable_hrf_holds_say_why(claim_id: str, at: dict, words: str) -> None:
    from rfcheck.verify import run_claim

    d = run_claim(claim_id, at=at).as_dict()
    assert d["verdict"] == "HOLDS" and d["certified"]["points"] == 0
    assert "no ball (Arb) evaluation" not in d["certified"]["why_not"] and words in d["certified"]["why_not"]


@pytest.mark.parametrize("k", range(4))
def test_base_moments_quad_ball_contains_the_mgf_values(k: int) -> None:
    """The moments by rigorous quadrature contain the 50-digit closed forms (MGF) of ``refs.base_moments``; a value
    moved by 10^-25 is disjoint."""
    nx, ny, th = (float(v) for v in (RNG.uniform(0, 1), RNG.uniform(0, 1), RNG.uniform(0, math.pi)))
    balls = R.base_moments_quad_ball(nx, ny, th, BITS)
    with mpmath.workdps(50):
        exact = R.base_moments(MP, mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(th))
    for b, v in zip(balls, exact, strict=True):
        assert _contains(b, v) and b.rad() < 1e-40
        with workprec(BITS):
            assert certified_equal(b, b + arb(10) ** -25) == "REFUTED"


@pytest.mark.parametrize("claim_id", ["hrf.eq37", "hrf.lem2.2.trig", "hrf.lem3.4.pos"])
def test_quadrature_checks_certify(claim_id: str) -> None:
    """The 'quadrature' cross-checks (moments by 1-D quadrature) certify their points with rigorous quadrature balls."""
    from rfcheck.claims import BUDGETS, get

    check = next(c for c in get(claim_id).checks if c.name == "quadrature")
    at = {"nx": 0.6, "ny": 0.9, "theta": 1.2, "m": 3} if claim_id != "hrf.lem3.4.pos" else {
        "r": 0.05, "theta": 0.0, "m": 1, "nx": 0.05, "ny": 0.05}
    ev = check.evaluate(at, BUDGETS["default"], 0)
    assert ev.decided and ev.extra["certified"] is True, ev.extra


def test_eq66_printed_value_above_the_maximum_is_certified() -> None:
    """Where eq (66)'s printed value lies above max_theta eps (not below the float-maximiser lower bound), the
    branch-and-bound upper end of the maximum separates it: REFUTED, certified."""
    from rfcheck.verify import run_claim

    d = run_claim("hrf.eq66", at={"r": 5.0, "m": 1, "n": 1, "theta": 0.01}).as_dict()
    assert d["verdict"] == "REFUTED" and d["certified"]["verdict"] is True, d["certified"]

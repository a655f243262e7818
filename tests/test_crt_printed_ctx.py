"""CRT printed formulas written against a number-system context (claims/crt ``printed_*_ctx``).

Each printed side is evaluated in mpmath (the value the ledger stores) and on Arb balls: the ball
must contain the 50-digit mpmath value, the formulas that the ledger finds to hold must be certified
equal to the ball references (rfcheck.references.crt.gerf_moments_ball and the eq (17) ball), and a
check's decided point must come out certified.
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np
import pytest
from flint import acb, arb

from rfcheck.arb_backend import workprec
from rfcheck.backends import MP
from rfcheck.certify import certified_equal
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.claims import crt as C
from rfcheck.claims._common import eval_on_balls
from rfcheck.ledger import mp_point, on_mp
from rfcheck.references import crt as R

BITS = 200
GERF = {"d": 3, "nx": 0.7, "ny": 1.1, "theta": 1.0, "a_re": -0.3, "a_im": 0.4, "s": 1}
GERF_NEG = {"d": 5, "nx": 1.2, "ny": 0.4, "theta": 2.0, "a_re": 0.05, "a_im": -0.6, "s": -1}
EQ17 = {"d": 3, "al_re": 0.7, "al_im": -1.2, "be_re": 0.5, "be_im": 1.5}

CASES = [
    (C.printed_k_ctx, GERF),
    (C.printed_trig_variance_ctx, GERF),
    (C.printed_pos_variance_ctx, GERF),
    (C.printed_eq16_ctx, GERF),
    (C.printed_eq16_ctx, GERF_NEG),
    (C.printed_eq6_ctx, GERF),
    (C.printed_eq6_ctx, GERF_NEG),
    (C._printed_eq20_ctx(2), GERF_NEG),
    (C._printed_eq20_ctx(3), GERF),
    (C._printed_eq21_ctx(3), GERF_NEG),
    (C.printed_eq17_ctx, EQ17),
    (C.printed_eq22_a_ctx, GERF),
]


def _contains(ball: Any, value: Any) -> bool:
    with workprec(BITS):
        w = float(abs(value)) * 1e-45 + 1e-300
        if isinstance(ball, acb):
            return ball.overlaps(acb(arb(mpmath.nstr(mpmath.re(value), 60), w),
                                     arb(mpmath.nstr(mpmath.im(value), 60), w)))
        return ball.overlaps(arb(mpmath.nstr(value, 60), w))


@pytest.mark.parametrize("fn,p", CASES)
def test_ball_face_contains_the_mpmath_face(fn: Any, p: dict[str, Any]) -> None:
    with mpmath.workdps(50):
        v = fn(MP, mp_point(p))
        ball = eval_on_balls(fn, dict(p), BITS)
        assert ball is not None
        assert _contains(ball, v)
        assert float(ball.rad()) < 1e-45 * (1 + float(abs(v)))


def test_mpmath_wrappers_are_the_context_formulas() -> None:
    with mpmath.workdps(30):
        assert C.printed_eq16(GERF) == C.printed_eq16_ctx(MP, mp_point(GERF))
        assert on_mp(C.printed_eq6_ctx)(GERF_NEG) == C.printed_eq6_ctx(MP, mp_point(GERF_NEG))
        assert C.printed_pos_variance(GERF) == C.printed_pos_variance_ctx(MP, mp_point(GERF))
        # the two roots of eq (22): rho_1 > 0 > rho_2, and rho_1 rho_2 = -d/(2u) (Vieta)
        r1, r2 = on_mp(C.printed_eq22_roots_ctx)(GERF)
        u = mpmath.mpf(0.7) ** 2 + mpmath.mpf(1.1) ** 2 + 2 * mpmath.mpf(0.7) * mpmath.mpf(1.1) * mpmath.cos(1.0)
        assert r1 > 0 > r2 and abs(r1 * r2 + mpmath.mpf(3) / (2 * u)) < mpmath.mpf(10) ** -25


@pytest.mark.parametrize("fn,key,p", [
    (C.printed_k_ctx, "mean", dict(GERF, a_im=0.0)),  # real A, s = +1: E f1 f2 = K (eq 18)
    (C.printed_eq16_ctx, "mean", GERF_NEG),
    (C.printed_eq6_ctx, "var", GERF),
    (C.printed_eq6_ctx, "var", GERF_NEG),
    (C._printed_eq20_ctx(3), "second", GERF_NEG),
])
def test_holding_formulas_are_certified_equal_to_the_moment_balls(fn: Any, key: str, p: dict[str, Any]) -> None:
    pb = eval_on_balls(fn, dict(p), BITS)
    rb = R.gerf_moments_ball(dict(p), BITS)[key]
    if key != "second":
        rb = rb.real
    if isinstance(pb, acb) != isinstance(rb, acb):
        pb, rb = acb(pb), acb(rb)
    assert certified_equal(pb, rb, 1e-40) == "HOLDS"
    with workprec(BITS):  # a planted error (a factor 1 + 1e-30) is refuted
        assert certified_equal(pb * (1 + arb("1e-30")), rb, 1e-40) == "REFUTED"


def test_eq20_line2_is_refuted_on_balls_for_complex_a() -> None:
    """The second line of eq (20) drops the alpha_1 structure: it differs from E[(f1 f2)^2] for complex A."""
    pb = eval_on_balls(C._printed_eq20_ctx(2), dict(GERF_NEG), BITS)
    rb = R.gerf_moments_ball(dict(GERF_NEG), BITS)["second"]
    with mpmath.workdps(50):
        v = C._printed_eq20_ctx(2)(MP, mp_point(GERF_NEG))
        e2, _ = R.gerf_second_moment(GERF_NEG, 40)
    agree = abs(v - e2) <= mpmath.mpf(10) ** -30 * abs(e2)
    assert certified_equal(acb(pb), rb, 1e-40) == ("HOLDS" if agree else "REFUTED")


@pytest.mark.parametrize("cid,point", [
    ("crt.thm3.2", {"d": 3, "nx": 0.7, "ny": 1.1, "theta": 1.0, "a_re": -0.3, "a_im": 0.4, "s": 1}),
    ("crt.eq16", {"d": 2, "nx": 0.5, "ny": 0.9, "theta": 2.5, "a_re": 0.1, "a_im": -1.0, "s": -1}),
    ("crt.text-pos-variance", {"d": 4, "nx": 0.8, "ny": 1.3, "theta": 0.7}),
    ("crt.eq17", EQ17),
])
def test_decided_points_are_certified(cid: str, point: dict[str, Any]) -> None:
    ev = REGISTRY[cid].checks[0].evaluate(dict(point), BUDGETS["default"], 0)
    assert ev.decided and ev.disc <= 1
    assert ev.extra["certified"] is True, ev.extra


def test_moment_balls_share_the_mpmath_geometry_in_d1() -> None:
    """d = 1, theta = float(pi): the context formulas use the general pair statistics (as
    rfcheck.ledger.pair_stats), and so do the moment balls; pair_stats_ball's d = 1 vectors
    (y = ny cos(theta)) give a point 1e-31 away, which the balls resolve."""
    import math

    p = {"d": 1, "nx": 0.0, "ny": 4.0, "theta": math.pi, "a_re": -1.5, "a_im": -1.5, "s": 1}
    pb = eval_on_balls(C._printed_eq20_ctx(2), dict(p), 116)
    assert certified_equal(pb, R.gerf_moments_ball(dict(p), 116)["second"], 1e-25) == "HOLDS"
    assert certified_equal(pb, R.gerf_moments_ball(dict(p), 116, d1_pair_vectors=True)["second"], 1e-25) == "REFUTED"


# ------------------------------------------------ eq (8), (9), (11), (12), (14): seeded float64 data

SETS = {"L": 7, "d": 5, "s": -1, "scale": 0.37, "shift": 1.25, "seed": 11}
DIRF = {"d": 6, "scale": 0.4, "shift": 0.3, "seed": 5, "dist": "poisson", "lam": 1.7, "p": 0.5}


@pytest.mark.parametrize("fn,p", [
    (C.printed_eq8_ctx, SETS), (C._eq8_brute_ctx, SETS),
    (C.printed_eq12_ctx, SETS), (C._eq12_brute_ctx, SETS),
    (C.printed_eq14_ctx, SETS), (C._eq14_brute_ctx, SETS),
    (C.printed_eq9_ctx, DIRF), (C.printed_eq11_ctx, DIRF),
])
def test_seeded_data_formulas_on_balls_contain_the_mpmath_face(fn: Any, p: dict[str, Any]) -> None:
    """The data are the seeded float64 sets of the float point (the contexts' numbers map back to
    the floats they lift): the ball contains the 50-digit mpmath value, and is tight."""
    with mpmath.workdps(50):
        v = fn(MP, mp_point(p))
    ball = eval_on_balls(fn, dict(p), BITS)
    assert ball is not None
    assert _contains(ball, v)
    assert float(ball.rad()) < 1e-45 * (1 + float(abs(v)))


def test_seeded_data_formulas_keep_their_mpmath_values() -> None:
    """The mpmath faces are the former mpmath transcriptions, operation for operation (recomputed
    here as printed: fsum over the seeded floats)."""
    rng = np.random.default_rng(SETS["seed"])
    xs = rng.normal(size=(7, 5)) * SETS["scale"]
    ys = rng.normal(size=(7, 5)) * SETS["scale"] + SETS["shift"]
    with mpmath.workdps(30):
        X = [[mpmath.mpf(v) for v in row] for row in xs]
        Y = [[mpmath.mpf(v) for v in row] for row in ys]
        sx = [mpmath.fsum(X[i][k] for i in range(7)) for k in range(5)]
        sy = [mpmath.fsum(Y[i][k] for i in range(7)) for k in range(5)]
        eq8 = (mpmath.fsum(v**2 for row in X for v in row) / 7
               - 2 * mpmath.fsum(a * b for a, b in zip(sx, sy, strict=True)) / 49
               + mpmath.fsum(v**2 for row in Y for v in row) / 7)
        assert on_mp(C.printed_eq8_ctx)(SETS) == eq8
        assert on_mp(C.printed_eq14_ctx)(SETS) == (mpmath.fsum(abs(X[i][4]) for i in range(7))
                                        * mpmath.fsum(abs(Y[i][4]) for i in range(7)) / 49)
        x, y = C._dirf_vectors(DIRF)
        xy = mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(x, y, strict=True))
        assert on_mp(C.printed_eq9_ctx)(DIRF) == mpmath.exp(xy)


@pytest.mark.parametrize("cid,point", [("crt.eq8", SETS), ("crt.eq12", SETS), ("crt.eq14", SETS)])
def test_seeded_data_decided_points_are_certified(cid: str, point: dict[str, Any]) -> None:
    p = {k: v for k, v in point.items() if k != "s" or cid == "crt.eq8"}
    ev = REGISTRY[cid].checks[0].evaluate(p, BUDGETS["default"], 0)
    assert ev.decided and ev.disc <= 1
    assert ev.extra["certified"] is True, ev.extra
    with workprec(BITS):  # a planted error (1 + 1e-30) in the printed side is refuted on balls
        pb = eval_on_balls(C.printed_eq8_ctx, dict(SETS), BITS) * (1 + arb("1e-30"))
        assert certified_equal(pb, eval_on_balls(C._eq8_brute_ctx, dict(SETS), BITS), 1e-40) == "REFUTED"


def test_eq19_decided_points_are_certified() -> None:
    """Eq (19), last line: its expectations as balls of the same integrals, K^2 on balls, against the
    variance ball; a planted error is refuted."""
    p = {"d": 3, "nx": 0.7, "ny": 1.1, "theta": 1.0, "a_re": -0.3, "a_im": 0.4, "s": 1}
    ev = REGISTRY["crt.eq19"].checks[0].evaluate(dict(p), BUDGETS["default"], 0)
    assert ev.decided and ev.disc <= 1
    assert ev.extra["certified"] is True, ev.extra
    pb, rb = C._eq19_printed_ball(dict(p), BITS), R.gerf_moments_ball(dict(p), BITS)["var"]
    with workprec(BITS):
        assert certified_equal(pb, rb, 1e-40) == "HOLDS"
        assert certified_equal(pb + arb("1e-30"), rb, 1e-40) == "REFUTED"
    assert isinstance(C._eq19_printed_ball(dict(p, a_re=0.2), BITS), str)  # E X^2 diverges: no ball

"""The shared wiring of the CRT claims (``rfcheck.claims.crt``) and the library functions it calls:
the DIRF positivity counts (``rfcheck.references.crt.dirf_nonpositive_count``, float and exact) against
the sign of the feature by its definition in mpmath, the GERF quadrature factory and the DIRF pair adapter
against the references they wrap, and eq (34)'s bound written once on a context."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import arb

from rfcheck.claims import crt as C
from rfcheck.claims._common import eval_on_balls, on_mp
from rfcheck.references import crt as R

DPS = 50
BITS = 200


def _feature_sign_mp(w: np.ndarray, x: np.ndarray, log_pk) -> int:
    """The sign of f_DI(w, x) = exp(-|x|^2/2) prod_l x_l^{w_l} (w_l! p_{w_l})^{-1/2} (eq 10), in mpmath."""
    with mpmath.workdps(DPS):
        f = mpmath.exp(-mpmath.fsum(mpmath.mpf(float(v)) ** 2 for v in x) / 2)
        for v, k in zip(x, w, strict=True):
            f *= mpmath.mpf(float(v)) ** int(k) / mpmath.sqrt(mpmath.factorial(int(k)) * mpmath.exp(log_pk(int(k))))
        return int(mpmath.sign(f))


@pytest.mark.parametrize("dist, par", [("poisson", 1.0), ("poisson", 0.3), ("geometric", 0.5)])
def test_dirf_nonpositive_counts_match_the_sign_of_the_feature(dist: str, par: float) -> None:
    """Both counts equal the number of draws whose feature, by its definition in mpmath, is <= 0: on inputs
    with negative entries (where the count is neither 0 nor all draws) and on a positive input (count 0); the
    exact count also where an entry is 0 (``0^0 = 1``, ``0^k = 0`` for ``k > 0``)."""
    from rfcheck.closed_forms import crt as cf
    from rfcheck.estimators import crt as discrete

    log_pk = cf.poisson_log_pk(par) if dist == "poisson" else cf.geometric_log_pk(par)
    w = discrete.sample_omega(dist, par, (200, 4), np.random.default_rng(3))
    counts = []
    for x in (np.array([0.7, -1.2, 0.5, 0.4]), np.array([-0.3, -0.9, 1.1, -2.0]), np.array([0.2, 1.5, 0.8, 3.0])):
        want = sum(_feature_sign_mp(row, x, log_pk) <= 0 for row in w)
        assert R.dirf_nonpositive_count(w, x, dist, par) == want
        assert R.dirf_nonpositive_count(w, x, dist, par, exact=True) == want
        counts.append(want)
    assert 0 < counts[0] < len(w) and 0 < counts[1] < len(w) and counts[2] == 0
    x0 = np.array([0.7, 0.0, 0.5, -0.4])
    want = sum(_feature_sign_mp(row, x0, log_pk) <= 0 for row in w)
    assert R.dirf_nonpositive_count(w, x0, dist, par, exact=True) == want


PAIR = {"d": 3, "nx": 0.8, "ny": 1.1, "theta": 1.2, "a_re": -0.3, "a_im": 0.2, "s": 1}


@pytest.mark.parametrize("key", ["mean", "second", "var"])
def test_gerf_moment_is_the_memoised_quadrature(key: str) -> None:
    """``_gerf_moment(key, *a_s)`` returns the (value, error) of ``gerf_reference_at`` for the point's A, s or
    the fixed ones, and the mean agrees with K(x, y) (eq (18) holds for s = +1 with real A)."""
    for a_s in ((), (0, 1), (0, -1)):
        got = C._gerf_moment(key, *a_s)(PAIR, 30)
        r = R.gerf_reference_at(PAIR, 30, *a_s)[key]
        assert got == (r.value, r.err)
    with mpmath.workdps(30):
        k = mpmath.exp(-C.stats_mp(PAIR)["sq_diff"] / 2)
        value, err = C._gerf_moment("mean", 0, 1)(PAIR, 30)
        assert abs(value - k) <= err + mpmath.mpf(10) ** -25


def test_gerf_quadrature_checks_certify_a_true_identity_and_refute_a_wrong_one() -> None:
    """The factory's check decides eq (18) (K = E Re f1 f2) as holding, certified, and a printed K off by
    1e-6 as refuted, certified."""
    from rfcheck.claims import BUDGETS

    budget = BUDGETS["default"]
    good = C._gerf_quadrature(C.printed_k_ctx, max_points=4).evaluate(dict(PAIR), budget, 0)
    assert good.decided and good.disc <= 1 and good.extra.get("certified") is True
    bad = C._gerf_quadrature(lambda ctx, p: C.printed_k_ctx(ctx, p) * (1 + 1e-6)).evaluate(dict(PAIR), budget, 0)
    assert bad.decided and bad.disc > 1 and bad.extra.get("certified") is True


DIRF = {"d": 3, "scale": 0.6, "shift": 0.2, "seed": 11, "dist": "geometric", "p": 0.4}


def test_dirf_pair_adapter_evaluates_the_reference_at_the_seeded_pair() -> None:
    """``_on_dirf_pair`` calls the reference and its ball at the point's seeded pair with its law, and the
    ball encloses the mpmath value (E f f = K: eq (10) holds)."""
    x, y = C._dirf_vectors(DIRF)
    ref, ball = C._on_dirf_pair(R.dirf_product_moment, R.dirf_product_moment_ball, 1)
    want = R.dirf_product_moment(x, y, C._log_pk(DIRF), 1, DPS)
    assert ref(DIRF, DPS) == want
    b = ball(DIRF, BITS)
    assert b.overlaps(arb(mpmath.nstr(want[0], DPS)))
    with mpmath.workdps(DPS):
        k = mpmath.exp(-mpmath.fsum((mpmath.mpf(float(a)) - float(c)) ** 2 for a, c in zip(x, y, strict=True)) / 2)
        assert abs(want[0] - k) <= mpmath.mpf(10) ** -40


def test_printed_eq34_is_one_formula_on_both_faces() -> None:
    """Eq (34)'s bound 2 exp(-a^2 / (M (a_i + b_i)^2)), a = t M (a_i + b_i)/4: the mpmath face equals the
    formula written out, the ball encloses it, and the exact two-point tail lies below it."""
    p = {"M": 7, "a_i": 0.3, "b_i": 0.9, "t": 1.3}
    with mpmath.workdps(DPS):
        a = mpmath.mpf(1.3) * 7 * (mpmath.mpf(0.3) + mpmath.mpf(0.9)) / 4
        want = 2 * mpmath.exp(-a**2 / (7 * (mpmath.mpf(0.3) + mpmath.mpf(0.9)) ** 2))
        assert on_mp(C.printed_eq34_ctx)(p) == want
    assert eval_on_balls(C.printed_eq34_ctx, p, BITS).overlaps(arb(mpmath.nstr(want, DPS)))
    tail, bound, _ = C._hoeffding(p, 30)
    assert tail <= bound
    lhs, rhs = C._hoeffding_ball(p, BITS)
    assert lhs < rhs
    assert math.isclose(float(rhs.mid()), float(want), rel_tol=1e-15)


@pytest.mark.parametrize("p", [{"d": 1, "nx": 0.7, "ny": 1.9, "theta": math.pi},
                               {"d": 1, "nx": 2.0, "ny": 0.5, "theta": 0.0},
                               {"d": 5, "nx": 0.3, "ny": 4.0, "theta": 2.2}])
def test_pair_stats_ball_general_is_the_context_formula_on_balls(p: dict) -> None:
    """``pair_stats_ball(p, general=True)`` is the claim module's pair statistics on a context (``_stats_ctx``,
    the operations of ``rfcheck.ledger.pair_stats``) evaluated on exact balls, ball for ball, in every ``d``;
    it encloses the 50-digit mpmath statistics."""
    from rfcheck.arb_backend import ARB, Ball, to_ball, workprec

    with workprec(BITS):
        got = R.pair_stats_ball(p, general=True)
        want = C._stats_ctx(ARB, {"nx": Ball(to_ball(p["nx"])), "ny": Ball(to_ball(p["ny"])),
                                  "theta": Ball(to_ball(p["theta"])), "d": p["d"]})
    with mpmath.workdps(DPS):
        mp = C.stats_mp(p)
    for k in ("sq_x", "sq_y", "sq_sum", "sq_diff"):
        assert got[k].mid() == want[k].v.mid() and got[k].rad() == want[k].v.rad()
        assert got[k].overlaps(arb(mpmath.nstr(mp[k], DPS)))
    assert got["d"] == p["d"]


def test_raw_point_recovers_the_float_point_from_every_context() -> None:
    """``raw_point`` inverts the lifting of a point into mpmath (``mp_point``) and into exact balls (as
    ``eval_on_balls`` lifts it), bit for bit, complex coordinates included; an inexact ball is refused."""
    from rfcheck.arb_backend import Ball, to_ball
    from rfcheck.claims._common import mp_point, raw_number, raw_point

    p = {"d": 3, "t": 0.1, "a": -2.5e-300, "z": complex(0.3, -1.7), "mech": "trig", "plus": True}
    assert raw_point(mp_point(p)) == p
    balls = {k: Ball(to_ball(v)) if isinstance(v, int | float | complex) and not isinstance(v, bool) else v
             for k, v in p.items()}
    back = raw_point(balls)
    assert back == {**p, "d": 3.0} and type(back["t"]) is float and type(back["z"]) is complex
    with pytest.raises(ValueError):
        raw_number(Ball(arb(1) / 3))

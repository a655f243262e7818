"""The paper-independent check-building helpers of ``rfcheck.checkkit`` (moved out of ``rfcheck.claims.hrf``):
each against an independent value (mpmath at 50 digits, an exact ball) or a property that could fail."""

from __future__ import annotations

import math

import mpmath
import pytest
from flint import arb

from rfcheck.arb_backend import bits_for_dps, workprec
from rfcheck.backends import num
from rfcheck.checkkit import ball_of, capped, certify_on_draws, dps_of_bits, max_below, mp_reference
from rfcheck.claims import BUDGETS
from rfcheck.ledger import PointEval, deterministic_check
from rfcheck.stats import compare_deterministic


def _cosh(ctx, p):
    return ctx.exp(num(ctx, p["t"])) + 1


def test_mp_reference_matches_mpmath_at_50_digits_with_its_error_bar() -> None:
    for scale, digits in ((None, 5), (lambda p, v: 2, 0)):
        ref = mp_reference(_cosh, **({} if scale is None else {"scale": scale}), digits=digits)
        v, e = ref({"t": 0.75}, 40)
        with mpmath.workdps(50):
            exact = mpmath.exp(mpmath.mpf("0.75")) + 1
            assert abs(v - exact) < mpmath.mpf(10) ** -45
            bar = mpmath.mpf(10) ** (-40 - digits) * ((1 + abs(v)) if scale is None else 2)
            assert abs(e - bar) <= bar * mpmath.mpf(10) ** -40


def test_ball_of_encloses_the_value_and_keeps_ints() -> None:
    b = ball_of(_cosh)({"t": 0.75}, 128)
    with mpmath.workdps(50):
        exact = mpmath.exp(mpmath.mpf("0.75")) + 1
    with workprec(200):
        assert b.overlaps(arb(mpmath.nstr(exact, 50))) and not b.overlaps(arb(mpmath.nstr(exact, 50)) + 1e-30)
    assert float(b.rad()) < 1e-30
    seen = []
    ball_of(lambda ctx, p: seen.append(type(p["m"])) or num(ctx, p["m"]))({"m": 3}, 64)
    assert seen == [int]


def test_max_below_evaluates_the_bound_first_and_passes_it_on() -> None:
    got = []

    def lhs(p, bits, rhs):
        got.append(rhs)
        return arb(1)

    sides = max_below(lhs, lambda ctx, p: ctx.exp(p["t"]))
    left, right = sides({"t": 0.5}, 64)
    assert got and got[0] is right and bool(right.overlaps(arb(0.5).exp())) and left == arb(1)
    sides = max_below(lhs, None, lambda p, bits: arb(3))
    assert sides({}, 64)[1] == arb(3)
    assert max_below(lhs, lambda ctx, p: ctx.no_such_function(p["t"]))({"t": 0.5}, 64) == (
        "the right side leaves ball arithmetic")


def test_capped_limits_points_and_climb_in_place() -> None:
    c = deterministic_check("q", None, lambda p, dps: (0, 0), printed_ctx=lambda ctx, p: 0, max_points=30)
    assert c.search is True
    assert capped(c, 4) is c and (c.max_points, c.search) == (4, False)


def test_dps_of_bits_inverts_bits_for_dps_and_refuses_other_bits() -> None:
    for dps in range(1, 120):
        assert dps_of_bits(bits_for_dps(dps)) == dps
    odd = [b for b in range(bits_for_dps(20), bits_for_dps(21)) if b != bits_for_dps(20)]
    if odd:
        with pytest.raises(ValueError, match="not the working precision"):
            dps_of_bits(odd[0])


def _holds():
    return compare_deterministic({}, 0.5, 0.5, 0, rtol=0, atol=1e-15)


def test_certify_on_draws_decides_every_replicate() -> None:
    with workprec(200):
        good = [(arb(1) / 3, arb(1) / 3)] * 8
        bad = [*good[:3], (arb(1) / 3, arb(1) / 3 + arb(2) ** -30), *good[4:]]
    assert certify_on_draws(_holds(), BUDGETS["default"], lambda ctx: good, tol=1e-15).extra["certified"] is True
    ev = certify_on_draws(_holds(), BUDGETS["default"], lambda ctx: bad, tol=1e-15)
    assert ev.extra["certified"] is False and "REFUTED" in ev.extra["not_certified"]
    # one pair (not a list): equal within tol certifies; an undecided point is returned as it is
    assert certify_on_draws(_holds(), BUDGETS["default"], lambda ctx: good[0], tol=1e-15).extra["certified"] is True
    und = PointEval({}, None, None, math.inf, math.nan, False, "not a point of this check")
    assert not und.decided and certify_on_draws(und, BUDGETS["default"], lambda ctx: bad) is und

"""Every equality check certifies its points through one step (``certify_with_balls`` ->
``certify_equal``): the context route, the ball-function route and ``check_equal`` decide a
point's certification identically, and a widened or failing ball never certifies."""

from __future__ import annotations

import mpmath
import pytest

from rfcheck.ledger import Budget, PointEval, certify_equal, certify_with_balls, check_equal, deterministic_check

B = Budget("t", 1, 1, 1, 0, 1, 1, 30)


def printed_ctx(ctx, p):
    return ctx.exp(p["t"]) ** 2 / (1 + p["t"] ** 2)


def reference(p, dps):
    with mpmath.workdps(dps + 10):
        t = mpmath.mpf(p["t"])
        return +(mpmath.exp(2 * t) / (1 + t**2)), mpmath.mpf(10) ** (-dps - 5)


def reference_ball(p, bits):
    from flint import arb

    t = arb(p["t"])
    return (2 * t).exp() / (1 + t * t)


def wrong_ball(p, bits):
    return reference_ball(p, bits) * 1.001


def printed_ball(p, bits):
    from rfcheck.ledger import eval_on_balls

    return eval_on_balls(printed_ctx, p, bits)


@pytest.mark.parametrize("rball", [reference_ball, wrong_ball])
def test_the_three_routes_certify_alike(rball):
    p = {"t": 0.7}
    via_ctx = deterministic_check("c", None, reference, printed_ctx=printed_ctx, reference_ball=rball).evaluate(p, B, 0)
    via_ball = deterministic_check("c", lambda q: printed_ctx(mpmath.mp, {"t": mpmath.mpf(q["t"])}), reference,
                                   printed_ball=printed_ball, reference_ball=rball).evaluate(p, B, 0)
    via_ledger = check_equal(printed_ctx, reference, reference_ball=rball).evaluate(p, B, 0)
    extras = [ev.extra for ev in (via_ctx, via_ball, via_ledger)]
    assert extras[0] == extras[1] == extras[2]
    # the right reference certifies agreement; the 0.1 %-off ball says REFUTED against a HOLDS decision
    assert extras[0]["certified"] is (rball is reference_ball)
    if rball is wrong_ball:
        assert extras[0]["not_certified"] == "the balls say REFUTED"


def test_a_ball_function_that_fails_leaves_the_point_uncertified_with_its_reason():
    def failing(p, bits):
        raise ValueError("outside the series' disc")

    ev = deterministic_check("c", None, reference, printed_ctx=printed_ctx, reference_ball=failing).evaluate(
        {"t": 0.3}, B, 0)
    assert ev.decided and ev.extra["certified"] is False
    assert ev.extra["not_certified"] == "no ball at this point (ValueError: outside the series' disc)"


def test_a_ball_function_may_say_why_there_is_none():
    ev = certify_with_balls(PointEval({"t": 1.0}, 1.0, 1.0, 0.0, 0.0, True, ""), {"t": 1.0}, 30,
                            lambda p, bits: "no enclosure of this reference", reference_ball, rtol=1e-25)
    assert ev.extra == {"certified": False, "not_certified": "no enclosure of this reference"}


def test_widened_balls_never_certify():
    from flint import arb

    holds = PointEval({"t": 1.0}, 1.0, 1.0, 0.0, 0.0, True, "")
    assert not certify_equal(holds, arb(1, 1e-3), arb(1), 1e-20).extra["certified"]
    refuted = PointEval({"t": 1.0}, 1.0, 1.01, 0.0, 1e9, True, "")
    assert not certify_equal(refuted, arb(1, 0.1), arb("1.01"), 1e-20).extra["certified"]


def test_lower_bound_reference_certifies_refutations_only():
    from flint import arb

    below = PointEval({"t": 1.0}, 1.0, 2.0, 0.0, 1e9, True, "")  # printed 1 < max >= 2
    assert certify_equal(below, arb(1), arb(2), 1e-20, reference_is_lower_bound=True).extra["certified"]
    same = PointEval({"t": 1.0}, 2.0, 2.0, 0.0, 0.0, True, "")
    out = certify_equal(same, arb(2), arb(2), 1e-20, reference_is_lower_bound=True).extra
    assert not out["certified"] and "lower bound" in out["not_certified"]

"""The general form of the public claim API (rfcheck.ledger): a declared paper returned by id,
Paper.claim with several checks, readings and per-check sub-domains, check_equal and
certify_equal -- and the built-in papers declared through it."""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest

from rfcheck import verify
from rfcheck.claims import PAPERS, REGISTRY, get
from rfcheck.ledger import Check, Domain, PointEval, Reading, Real, certify_equal, check_equal, paper

CLAIMS = Path(__file__).parents[1] / "rfcheck" / "claims"


@pytest.fixture
def gen():
    P = paper("gentest", "General claims", citation="test", source="999 General")
    yield P
    for cid in [c for c in REGISTRY if c.startswith("gentest.")]:
        REGISTRY.pop(cid)
    PAPERS.pop("gentest", None)


def _exp2(ctx, p):
    return ctx.exp(p["t"]) ** 2


def _ref(p, dps):
    return mpmath.exp(2 * mpmath.mpf(p["t"]))


def test_paper_by_id_returns_a_declared_paper_with_its_source_line():
    P = paper("darkformer")
    assert P.id == "darkformer" and P.at("Lemma 2.1") == "DARKFormer, Lemma 2.1"
    assert paper("rfa").at("x") == "Random Feature Attention (summary), x"
    with pytest.raises(ValueError, match="not declared"):
        paper("no_such_paper")


def test_a_users_paper_source_defaults_to_its_title(gen):
    assert gen.at("eq (1)") == "999 General, eq (1)"
    P = paper("gentest2", "Another")
    try:
        assert P.at("eq (2)") == "Another, eq (2)"
    finally:
        PAPERS.pop("gentest2")


def test_claim_with_several_checks_and_a_sub_domain(gen):
    def mc(p, budget, seed):  # a bespoke check: always agrees, strength 3
        return PointEval(p, 1.0, 1.0, 0.1, 0.0, True, "")

    sub = Domain({"t": Real(0.0, 0.5)}, description="small t")
    c = gen.claim("eq1", source=gen.at("eq (1)"), statement="e^t squared = e^2t", domain=Domain({"t": Real(0.0, 1.0)}),
                  checks=[check_equal(_exp2, _ref, name="closed-form", domain=sub, description="exact"),
                          Check("bespoke", 3, mc, search=False)])
    assert c.id == "gentest.eq1" and c.source == "999 General, eq (1)"
    assert [ch.name for ch in c.checks] == ["closed-form", "bespoke"]
    assert c.checks[0].domain is sub and c.checks[0].description == "exact"
    e = verify.run_claim(c, budget="smoke").as_dict()
    assert e["verdict"] == "HOLDS" and e["evidence"]["deciding_check"] == "closed-form"
    # a further check on the declared claim is added to it
    gen.claim("eq1", checks=[Check("more", 3, mc, search=False)])
    assert [ch.name for ch in get("gentest.eq1").checks] == ["closed-form", "bespoke", "more"]


def test_claim_from_readings_and_a_refuting_check_equal(gen):
    wrong = check_equal(lambda ctx, p: ctx.exp(p["t"]) ** 3, _ref, name="closed-form")
    c = gen.claim("eq2", domain=Domain({"t": Real(0.5, 1.0)}), statement="e^t cubed = e^2t",
                  readings=[Reading("literal", [wrong], "cubed as printed"),
                            Reading("squared", [check_equal(_exp2, _ref)], "a typo for squared", natural=True,
                                    reason="the derivation squares")])
    assert verify.run_claim(c, budget="smoke").verdict == "MIXED"
    with pytest.raises(ValueError, match="readings"):
        gen.claim("eq3", domain=Domain({"t": Real(0.5, 1.0)}), checks=[wrong],
                  readings=[Reading("a", [wrong], natural=True, reason="r")])


def test_unverifiable_claim(gen):
    c = gen.claim("text-1", domain=Domain({"t": Real(0.0, 1.0)}), unverifiable="a qualitative remark")
    assert verify.run_claim(c, budget="smoke").verdict == "INCONCLUSIVE"


def test_certify_equal_marks_a_bespoke_point():
    from flint import arb

    ev = PointEval({"t": 1.0}, 1.0, 1.5, 0.0, 1e9, True, "")
    assert certify_equal(ev, arb(1), arb("1.5"), 1e-20).extra["certified"]
    ev = PointEval({"t": 1.0}, 1.0, 1.0, 0.0, 0.0, True, "")
    assert certify_equal(ev, arb(1), arb(1, 1e-30), 1e-20).extra["certified"]
    ev = PointEval({"t": 1.0}, 1.0, 1.0, 0.0, 0.0, True, "")
    out = certify_equal(ev, arb(1), None, 1e-20).extra
    assert not out["certified"] and "no ball" in out["not_certified"]
    ev = PointEval({"t": 1.0}, 1.0, 1.0, 0.0, 0.0, True, "")  # says HOLDS, the balls are disjoint
    assert certify_equal(ev, arb(1), arb(2), 1e-20).extra["not_certified"] == "the balls say REFUTED"


def test_rfa_counterexamples_are_certified_by_balls():
    """At a refuting point of rfa.eq-kernel (sigma != 1) and of rfa.eq-noncausal.cancel (keys of
    different norms) the Arb balls of both sides are disjoint; where it holds they agree."""
    from rfcheck.claims import BUDGETS

    b = BUDGETS["default"]
    kernel = get("rfa.eq-kernel").checks[0]
    bad = kernel.evaluate({"d": 2, "nx": 1.0, "ny": 0.7, "theta": 1.0, "sigma": 2.0}, b, 0)
    good = kernel.evaluate({"d": 2, "nx": 1.0, "ny": 0.7, "theta": 1.0, "sigma": 1.0}, b, 0)
    assert bad.disc > 1 and bad.extra["certified"]
    assert good.disc <= 1 and good.extra["certified"]
    cancel = get("rfa.eq-noncausal.cancel").checks[0]
    ev = cancel.evaluate({"n": 3, "d": 2, "qnorm": 1.0, "knorm": 1.0, "spread": 0.5, "draw": 5}, b, 0)
    assert ev.disc > 1 and ev.extra["certified"]


def test_rfa_cancel_holds_where_the_keys_norms_are_exactly_equal():
    """spread = 0 (keys of equal norm): the limit is softmax attention exactly, so the two sides
    agree to the working precision and the balls certify it.  Random directions scaled to one
    norm in float64 differed by rounding (relative 1e-16, ~1e8 tolerances), which the check then
    reported as a discrepancy; the keys are now signed permutations of one float64 key."""
    from rfcheck.claims import BUDGETS

    cancel = get("rfa.eq-noncausal.cancel").checks[0]
    for d, draw in ((1, 3), (3, 7), (4, 11)):
        ev = cancel.evaluate({"n": 5, "d": d, "qnorm": 1.7, "knorm": 1.9, "spread": 0.0, "draw": draw},
                             BUDGETS["default"], 0)
        norms = ev.extra["key_norms"]
        assert len(set(norms)) == 1
        assert ev.decided and ev.disc <= 1 and ev.extra["certified"]

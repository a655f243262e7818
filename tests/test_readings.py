"""Readings: an ambiguous printed statement gets every reasonable reading, each its own verdict, and the
claim's verdict says which one fails (REFUTED only under every reading; MIXED otherwise)."""

from __future__ import annotations

import mpmath
import pytest

from rfcheck import report, verify
from rfcheck.claims import REGISTRY, Check, Claim, Reading
from rfcheck.cli import main
from rfcheck.ledger import Domain, Real, paper
from rfcheck.stats import PointEval

X = Domain({"x": Real(0.5, 2.0)})


def _exp_half(p, dps):
    return mpmath.exp(-mpmath.mpf(p["x"]) ** 2 / 2)


@pytest.fixture
def ambiguous():
    """'e^{-x^2/2}' transcribed so that it can be read as exp(-x^2/2) (holds) or exp(-x^2)/2 (fails)."""
    P = paper("readingtest", "readings")
    P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2) / 2, reference=_exp_half, domain=X,
               statement="e^-x^2/2", reading={"name": "literal", "description": "exp(-x^2) / 2"})
    c = P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2), reference=_exp_half, domain=X,
                   reading={"name": "exponent", "description": "exp(-x^2/2): the /2 in the exponent",
                            "natural": True, "why": "the Gaussian kernel the section defines"})
    P.equality("eq2", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2) / 2, reference=_exp_half, domain=X,
               reading={"name": "literal", "description": "exp(-x^2) / 2"})
    P.equality("eq2", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2) * 2, reference=_exp_half, domain=X,
               reading={"name": "other", "description": "2 exp(-x^2)", "natural": True, "why": "a test"})
    yield c
    for cid in ("readingtest.eq1", "readingtest.eq2"):
        REGISTRY.pop(cid, None)


def test_one_reading_holds_one_fails_is_mixed_and_counted_apart(ambiguous, tmp_path, capsys):
    v = verify.run_claim(ambiguous, budget="smoke")
    assert v.verdict == "MIXED"
    assert "REFUTED as read 'literal', HOLDS as read 'exponent'" in v.reason
    assert "natural reading is 'exponent'" in v.reason
    e = v.as_dict()
    assert [(r["name"], r["natural"], r["verdict"]) for r in e["readings"]] == [
        ("literal", False, "REFUTED"), ("exponent", True, "HOLDS")]
    assert e["evidence"]["worst"]["disc"] > 1  # the evidence shown is the refuted reading's counterexample
    both = verify.run_claim("readingtest.eq2", budget="smoke")
    assert both.verdict == "REFUTED" and "REFUTED under every reading" in both.reason
    counts = report.summary_counts([e, both.as_dict()])["readingtest"]
    assert counts == {"HOLDS": 0, "REFUTED": 1, "INCONCLUSIVE": 0, "MIXED": 1}
    # --strict fails on REFUTED under every reading only; --strict=literal on MIXED too
    args = ["verify", "--claim", "readingtest.eq1", "--budget", "smoke", "--no-cache", "--jobs", "1"]
    assert main([*args, "--strict"]) == 0
    assert main([*args, "--strict=literal"]) == 1
    assert main([*args, "--report", str(tmp_path)]) == 0
    md = (tmp_path / "readingtest.md").read_text()
    assert "| literal |  | REFUTED | exp(-x^2) / 2 |" in md and "| exponent | yes | HOLDS |" in md
    assert "MIXED (REFUTED under one reading" in capsys.readouterr().out


def test_readings_must_be_complete():
    c = Claim(id="crt.text-zz-readings", statement="s", domain=X,
              readings=[Reading("a", [Check("c", 1, lambda p, b, s: PointEval(p, 1, 1, 0, 0))])])
    with pytest.raises(ValueError, match="exactly one natural reading"):
        verify.run_claim(c, budget="smoke")
    with pytest.raises(ValueError, match="the checks belong to the readings"):
        Claim(id="crt.text-zz-both", statement="s", domain=X, checks=c.readings[0].checks, readings=c.readings)


def test_reading_tables_escape_bars_and_show_a_readings_correction(tmp_path):
    from rfcheck.ledger import paper as declare

    P = declare("readingbars", "bars")
    P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2) / 2, reference=_exp_half, domain=X,
               correction="exp(-x^2/2)", reading={"name": "hermitian", "description": "||v||^2 Hermitian"})
    c = P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2), reference=_exp_half, domain=X,
                   reading={"name": "bilinear", "description": "(Mv)^2", "natural": True, "why": "sec 2.3"})
    try:
        e = verify.run_claim(c, budget="smoke").as_dict()
        md = report._entry_markdown(e)
    finally:
        REGISTRY.pop(c.id, None)
    assert "| hermitian |  | REFUTED | \\|\\|v\\|\\|^2 Hermitian |" in md
    assert "*Correction (hermitian reading):* exp(-x^2/2)" in md


def test_an_at_point_missing_a_parameter_of_one_reading_is_undecided_there():
    P = paper("readingat", "at")
    P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2), reference=_exp_half, domain=X,
               reading={"name": "plain", "description": "x only", "natural": True, "why": "t"})
    c = P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2) * p["s"],
                   reference=lambda p, dps: _exp_half(p, dps) * p["s"], domain=X,
                   reading={"name": "scaled", "description": "needs s"})
    try:
        v = verify.run_claim(c, budget="smoke", at={"x": 1.0})
        assert {r.name: r.verdict for r in v.readings} == {"plain": "HOLDS", "scaled": "INCONCLUSIVE"}
        assert "no parameter 's'" in v.readings[1].reason
    finally:
        REGISTRY.pop(c.id, None)


def test_a_reading_that_cannot_be_checked_leaves_the_verdict_to_the_others():
    ok = Check("c", 1, lambda p, b, s: PointEval(p, 1, 1, 0, 0))
    c = Claim(id="crt.text-zz-illformed", statement="lim ... = f(x)", domain=X, readings=[
        Reading("literal", [], "a limit equated to an x-dependent expression", unverifiable="ill-formed as printed"),
        Reading("asymptotic", [ok], "the ratio tends to 1", natural=True, reason="the standard statement")])
    v = verify.run_claim(c, budget="smoke")
    assert v.verdict == "HOLDS" and v.readings[0].verdict == "INCONCLUSIVE"
    assert "not checkable: ill-formed as printed" in v.readings[0].reason

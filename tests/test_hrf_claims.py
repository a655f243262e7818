"""The hrf claim ledger: ids present, and verdicts at chosen points (each could go either way).

Points are evaluated with ``rfcheck.verify.run_claim(at=...)``: the claim's checks at that
point only, so each test states one counterexample or one confirmation.
"""

from __future__ import annotations

import math

import mpmath
import pytest

from rfcheck.claims import load_all
from rfcheck.verify import run_claim

REQUIRED = [
    "hrf.lem2.2.trig", "hrf.lem2.2.pos", "hrf.lem2.3", "hrf.lem2.4", "hrf.thm3.1.variant1", "hrf.thm3.1.variant2",
    "hrf.lem3.2.mean", "hrf.lem3.2.second", "hrf.lem3.4.trig", "hrf.lem3.4.pos", "hrf.thm3.5.bound",
    "hrf.thm3.5.limit0", "hrf.thm3.5.limit-pi", "hrf.thmf.1", "hrf.thmf.1.furthermore", "hrf.thmf.2",
    "hrf.eq45", "hrf.eq46", "hrf.eq47", "hrf.eq17", "hrf.eq18", "hrf.text-h2-zero-variance", "hrf.tab1",
    "hrf.text-sec4-max-rel-error", "hrf.text-sec4-max-rel-error.attention", "hrf.eq45.attention",
]


def test_required_ids_registered():
    reg = load_all()
    missing = [c for c in REQUIRED if c not in reg]
    assert not missing


@pytest.mark.parametrize("cid,at,verdict", [
    # Thm 3.5 bound (27): fails for n = 1 at r = 5, holds at r = 1.5 and for large n at r = 5
    ("hrf.thm3.5.bound", {"r": 5.0, "m": 1, "n": 1}, "REFUTED"),
    ("hrf.thm3.5.bound", {"r": 1.5, "m": 3, "n": 1}, "HOLDS"),
    ("hrf.thm3.5.bound", {"r": 5.0, "m": 3, "n": 1000}, "HOLDS"),
    ("hrf.eq64", {"r": 3.0, "n": 2}, "REFUTED"),
    ("hrf.eq64", {"r": 1.0, "n": 2}, "HOLDS"),
    # eq (47): wrong trig coefficient; at theta = 0 both sides vanish
    ("hrf.eq47", {"r": 1.0, "theta": math.pi / 2, "m": 2, "n": 2, "shared": 0}, "REFUTED"),
    ("hrf.eq47", {"r": 1.0, "theta": 0.0, "m": 2, "n": 2, "shared": 0}, "HOLDS"),
    ("hrf.eq45", {"nx": 1.2, "ny": 0.4, "theta": 1.3, "m": 3, "n": 5}, "HOLDS"),
    # sec 4 / Fig 2: the (16, 8) hybrid's max-relative-error is below SM^trig_128's (eps 0.312 vs 0.453 at r = 1)
    ("hrf.text-sec4-max-rel-error", {"r": 1.0, "base": "trig"}, "HOLDS"),
    ("hrf.text-sec4-max-rel-error", {"r": 1.5, "base": "pos"}, "HOLDS"),
    ("hrf.eq46", {"nx": 1.2, "ny": 0.4, "theta": 1.3, "m": 3, "n": 5}, "HOLDS"),
    # Thm F.1 'furthermore': false for |x| != |y| (its 'general x, y' reading; the 'same length' reading has no
    # such point: INCONCLUSIVE there), true for |x| = |y| (Thm F.2; tests/test_builtin_readings.py)
    ("hrf.thmf.1.furthermore", {"nx": 1.0, "ny": 1.7, "theta": 1.3, "m": 4, "n": 2, "sigma": 0.8, "r": 1.2},
     "INCONCLUSIVE"),
    ("hrf.thmf.2.furthermore", {"r": 1.2, "theta": 1.3, "m": 4, "n": 2, "sigma": 0.8}, "HOLDS"),
    # eq (36): binom(m, 2) instead of m(m - 1); m = 1 agrees
    ("hrf.eq36", {"nx": 0.8, "ny": 0.5, "theta": 1.0, "m": 4}, "REFUTED"),
    ("hrf.eq36", {"nx": 0.8, "ny": 0.5, "theta": 1.0, "m": 1}, "HOLDS"),
    # eq (70): missing sigma; sigma = 1 agrees
    ("hrf.eq70", {"nx": 1.0, "ny": 0.7, "theta": 1.0, "n": 4, "sigma": 2.0, "r": 1.0}, "REFUTED"),
    ("hrf.eq70", {"nx": 1.0, "ny": 0.7, "theta": 1.0, "n": 4, "sigma": 1.0, "r": 1.0}, "HOLDS"),
    ("hrf.lem3.2.second", {"theta": 2.0, "n": 7, "nx": 1.0, "ny": 1.0, "m": 1}, "HOLDS"),
    ("hrf.eq44.line2", {"theta": 2.0, "n": 7, "nx": 1.0, "ny": 1.0, "m": 1}, "REFUTED"),
])
def test_verdict_at_point(cid, at, verdict):
    v = run_claim(cid, at=at)
    assert v.verdict == verdict, v.reason


def test_tab1_inconclusive_with_reason():
    v = run_claim("hrf.tab1")
    assert v.verdict == "INCONCLUSIVE" and "not specified" in v.reason


@pytest.mark.parametrize("r", [5.0, 9.5])
def test_eq65_as_printed_holds_where_eq27_fails(r):
    """Eq (65) is printed with sqrt(2mr) (r under the root); registered so, it holds at r = 5 and
    9.5 (n = 1, m = 1), where eq (27)'s (1/r) sqrt(1/(2m)) -- the form the registration carried
    before 2026-11-26 -- is refuted; and the printed bound is at least the corrected one."""
    from rfcheck import verify

    at = {"r": r, "m": 1, "n": 1}
    assert verify.evaluate_at("hrf.eq65", at).verdict == "HOLDS"
    assert verify.evaluate_at("hrf.thm3.5.bound", at).verdict == "REFUTED"
    from rfcheck.claims import hrf as ch

    with mpmath.workdps(30):
        v, log_b, _ = ch._eq65(at, 30)
        log27 = log_b - mpmath.log(r) / 2  # eq (27) = eq (65) / sqrt(r)
    assert log27 < v < log_b

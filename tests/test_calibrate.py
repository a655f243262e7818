"""Calibration machinery: planted errors are caught; true claims are rarely refuted."""

from __future__ import annotations

import pytest
from scipy import stats as sps

from rfcheck import calibrate
from rfcheck.verify import run_claim


def test_mutation_suite_has_at_least_20_mutants_of_every_kind():
    assert len(calibrate.MUTANTS) >= 20
    kinds = {m.kind for m in calibrate.MUTANTS}
    for k in ("dropped constant", "wrong power", "d -> d-1", "sign", "swapped argument", "missing prefactor",
              "square root for a square", "wrong limit of summation"):
        assert k in kinds


@pytest.mark.parametrize("name", ["trig: 1/2 dropped", "eq22: sqrt -> square", "eq8: sum to L-1",
                                  "eq6: prefactor 1/2 dropped", "thm4.1 reversed: Var_ort >= Var_iid"])
def test_planted_errors_refuted(name):
    m = next(m for m in calibrate.MUTANTS if m.name == name)
    assert run_claim(calibrate._mutant_claim(m), budget="default", seed=0, early_stop=True).verdict == "REFUTED"


@pytest.mark.parametrize("name", ["simrf eq23: 2^k dropped", "hrf lem3.2: 1/n -> 1/(n+1)"])
def test_planted_errors_in_other_papers_refuted(name):
    m = next(m for m in calibrate.MUTANTS if m.name == name)
    assert run_claim(calibrate._mutant_claim(m), budget="default", seed=0, early_stop=True).verdict == "REFUTED"


@pytest.mark.parametrize(("base", "true_formula"), [
    ("simrf.thm4.3.orf", lambda p: calibrate._simrf_eq23(p)),
    ("hrf.lem3.2.second", lambda p: calibrate._hrf_lem32(p)),
])
def test_generic_mutation_wrapper_holds_on_the_true_formula(base, true_formula):
    """The wrapper that plants errors in other papers' claims is itself no source of alarms."""
    from rfcheck.claims import Claim, get

    b = get(base)
    c = Claim(id=base + ".mutant", paper=b.paper, source="unmutated", statement="the true formula",
              domain=b.domain, checks=[calibrate._mutated_check(b, true_formula)])
    assert run_claim(c, budget="default", seed=0).verdict == "HOLDS"


@pytest.mark.mc
def test_false_alarm_rate_not_above_nominal():
    rows = calibrate.false_alarms(n_seeds=20, alpha=0.05)
    assert len(rows) >= 5
    for r in rows:
        # with the confirmation re-run the REFUTED rate is <= alpha; P(>= 4 of 20 | p = 0.05) < 0.016
        assert r["refuted"] <= 3, r
        assert sps.binom.sf(r["first_stage_alarms"] - 1, r["runs"], 0.05) > 1e-4, r


def test_clopper_pearson():
    lo, hi = calibrate._clopper_pearson(0, 200)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 200), rel=1e-10)  # exact for k = 0
    lo, hi = calibrate._clopper_pearson(10, 200)
    assert lo < 0.05 < hi

"""A paper outside the five seeds, verified through the public claim API: random Maclaurin features
(Kar & Karnick, AISTATS 2012), claims pack notebooks/rmf_claims.py (walked through in
notebooks/verify_your_paper.py).  The verdicts are computed by rfcheck at the smoke budget."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rfcheck import claims, verify
from rfcheck.claims import ORIGINS, REGISTRY, load_claims
from rfcheck.ledger import assert_verdict

PACK = Path(__file__).resolve().parent.parent / "notebooks" / "rmf_claims.py"

EXPECTED = {
    "rmf.eq1": "HOLDS",  # equality: unbiasedness (exp and (2 + t)^3 kernels)
    "rmf.eq2": "HOLDS",  # equality: the variance in closed form (Bessel I_0) against the exact series
    "rmf.eq2.mc": "HOLDS",  # variance: the same closed form against Monte Carlo of the sampler
    "rmf.eq2.typo": "REFUTED",  # eq (2) transcribed with a dropped factor 2
    "rmf.eq3": "HOLDS",  # bound: |Z(x)Z(y)| <= p/(p-1) f(p |x|_1 |y|_1)
    "rmf.eq4": "HOLDS",  # ordering: Var(Rademacher w) <= Var(Gaussian w)
    "rmf.eq5": "HOLDS",  # optimum: argmin_p Var = 1 + 1/k for f = t^k
    "rmf.eq6": "HOLDS",  # limit: Var -> a_0^2/(p - 1) as |x| -> 0
}


def _forget() -> None:
    """Unregister the pack (another test, or the notebook run in this process, may have loaded it)."""
    for cid in [c for c in REGISTRY if c.startswith("rmf.")]:
        REGISTRY.pop(cid)
        ORIGINS.pop(cid, None)
    claims._LOADED.pop(str(PACK), None)


@pytest.fixture(scope="module")
def rmf_ids():
    _forget()
    yield load_claims(str(PACK))
    _forget()


def test_the_pack_declares_a_claim_of_every_kind(rmf_ids):
    assert sorted(rmf_ids) == sorted(EXPECTED)
    checks = {cid: [ch.name for ch in REGISTRY[cid].checks] for cid in rmf_ids}
    assert checks["rmf.eq2.mc"] == ["monte-carlo"] and checks["rmf.eq3"] == ["bound"]
    assert checks["rmf.eq4"] == ["closed-forms"] and checks["rmf.eq5"] == ["optimiser"]
    assert all(REGISTRY[c].source.startswith("notebook eq (") for c in rmf_ids)


@pytest.mark.parametrize("cid", [pytest.param(c, marks=pytest.mark.mc) if c.endswith(".mc") else c
                                 for c in sorted(EXPECTED)])
def test_each_claim_gets_its_expected_verdict(rmf_ids, cid):
    assert_verdict(cid, EXPECTED[cid], budget="smoke")


def test_the_wrong_transcription_is_refuted_with_a_counterexample_where_eq2_holds(rmf_ids):
    v = verify.run_claim("rmf.eq2.typo", budget="smoke")
    assert v.verdict == "REFUTED"
    worst = v.deciding_check().worst
    assert worst.decided and worst.disc > 1e6  # far beyond the tolerance, not a rounding matter
    rel = abs(float(worst.printed) - float(worst.reference)) / abs(float(worst.reference))
    assert rel > 0.1 and math.isfinite(rel)
    rep = v.reproduce_point()
    assert rep.startswith(f"rfcheck verify --claims {PACK} --claim rmf.eq2.typo --at ")
    # the correctly transcribed eq (2) holds at the counterexample, and the typo is refuted there again
    assert verify.evaluate_at("rmf.eq2", worst.point, budget="smoke").verdict == "HOLDS"
    assert verify.evaluate_at("rmf.eq2.typo", worst.point, budget="smoke").verdict == "REFUTED"


def test_the_guide_page_runs_as_written(monkeypatch):
    """docs/guide/verify_your_paper.md: its Python blocks run in order, in one namespace, from the
    repository root (as a reader would paste them), with their own asserts."""
    import re
    from pathlib import Path

    pytest.importorskip("distributed")  # one block starts a Dask LocalCluster
    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(root)
    page = (root / "docs" / "guide" / "verify_your_paper.md").read_text()
    ns: dict = {"__name__": "__guide__"}
    for code in re.findall(r"^```python\n(.*?)^```", page, re.S | re.M):
        exec(compile(code, "verify_your_paper.md", "exec"), ns)

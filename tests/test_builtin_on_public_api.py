"""The built-in claims are declared through the public claim API (:mod:`rfcheck.ledger`), as a
user's own: ``P = paper("<id>")``, ``P.claim(...)`` / ``P.equality(...)``, sources ``P.at(...)``;
no internal registration, no post-hoc patching of checks or domains through the registry, no
other claim module's private helpers.  What a module still imports from
``rfcheck.claims._common`` is named here (helpers with no public path yet), so that nothing
else creeps in."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rfcheck.claims.attention
import rfcheck.claims.crt
import rfcheck.claims.darkformer
import rfcheck.claims.hrf
import rfcheck.claims.rfa
import rfcheck.claims.simrf  # noqa: F401  (these imports register the built-in papers' claims)
from rfcheck.claims import REGISTRY
from rfcheck.ledger import paper

CLAIMS = Path(__file__).parents[1] / "rfcheck" / "claims"
#: every claim module of the five papers (simrf's declarations are split over three files)
FILES = ["crt.py", "hrf.py", "simrf.py", "_simrf_proofs.py", "_simrf_shared.py", "rfa.py", "darkformer.py",
         "attention.py"]
#: helpers imported from rfcheck.claims._common because no public module exports them
ALLOWED_COMMON = {"certify_eval", "eval_on_balls", "mp_point", "stats_fp"}
#: the paper's own modules (one paper's declarations split over files)
ALLOWED_OWN = {"simrf.py": {"rfcheck.claims": {"_simrf_proofs"}, "rfcheck.claims._simrf_shared": None},
               "_simrf_proofs.py": {"rfcheck.claims._simrf_shared": None}}


@pytest.mark.parametrize("module", FILES)
def test_claim_modules_are_declared_through_the_public_api(module):
    text = (CLAIMS / module).read_text()
    assert "register(" not in text and "REGISTRY" not in text and "Claim(" not in text
    own = ALLOWED_OWN.get(module, {})
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            assert node.module is not None and node.level == 0, (module, node.module)
            names = {a.name for a in node.names}
            if node.module == "rfcheck.claims._common":
                assert names <= ALLOWED_COMMON, (module, sorted(names - ALLOWED_COMMON))
                continue
            if node.module in own:
                assert own[node.module] is None or names <= own[node.module], (module, node.module)
                continue
            assert not node.module.startswith("rfcheck.claims"), (module, node.module)
            assert not any(n.startswith("_") for n in names), (module, node.module)
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("rfcheck.claims") for a in node.names), module


@pytest.mark.parametrize("paper_id, at_least", [("crt", 60), ("hrf", 95), ("simrf", 68), ("rfa", 6),
                                                ("darkformer", 8)])
def test_claims_carry_the_papers_id_and_source_line(paper_id, at_least):
    """Each claim's paper is derived from its id, its source is ``P.at(...)`` of its paper's source line
    (the attention-scale restatements, ``*.attention``, have their own), and every claim is
    checkable (checks or readings, not both) or says why not."""
    P = paper(paper_id)
    claims = [c for cid, c in REGISTRY.items() if cid.startswith(paper_id + ".") and not cid.endswith(".attention")]
    assert len(claims) >= at_least
    for c in claims:
        assert c.paper == paper_id, c.id
        assert c.source.startswith(P.source + ", ") and len(c.source) > len(P.source) + 2, c.id
        assert c.statement, c.id
        assert c.checks or c.readings or c.unverifiable, c.id
        assert not (c.checks and c.readings), c.id


def _checks(cid):
    c = REGISTRY[cid]
    return [(r.name if r is not None else None, ch) for r in (c.readings or [None])
            for ch in (r.checks if r is not None else c.checks)]


@pytest.mark.parametrize("cid, cap", [
    ("simrf.eq22", 20), ("simrf.eq31", 24), ("simrf.eq36", 7), ("simrf.eq43", 16), ("simrf.eq43.relabel", 16),
    ("simrf.eq45", 16), ("simrf.eq48", 5), ("simrf.eq53", 6), ("simrf.eq57", 8), ("simrf.eq62", 4),
    ("simrf.eq75", 16), ("simrf.text-a4-integral", 12), ("simrf.text-footnote4", 5),
])
def test_expensive_proof_steps_are_capped_at_declaration(cid, cap):
    """Each check at most ``cap`` grid/random points and no optimiser climb (the literal (46)
    reading of eq (45): 12)."""
    checks = _checks(cid)
    assert checks
    for reading, ch in checks:
        assert ch.search is False, (cid, ch.name)
        assert ch.max_points == (12 if (cid, reading) == ("simrf.eq45", "literal (46)") else cap), (cid, ch.name)


@pytest.mark.parametrize("cid, n", [("simrf.eq36", 5), ("simrf.eq38", 2), ("simrf.eq43", 3), ("simrf.eq43.relabel", 3),
                                    ("simrf.eq45", 3), ("simrf.eq48", 2), ("simrf.eq53", 2), ("simrf.eq62", 3)])
def test_interior_fixed_points_are_declared_in_the_domain(cid, n):
    """Interior points tried first, inside the declared domain (its parameters, no others)."""
    dom = REGISTRY[cid].domain
    assert len(dom.fixed_points) == n
    for pt in dom.fixed_points:
        assert set(pt) == set(dom.params), (cid, pt)
        for k, v in pt.items():
            lo, hi = dom.params[k].lo, dom.params[k].hi
            assert lo <= v <= hi, (cid, k, v)

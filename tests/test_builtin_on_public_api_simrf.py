"""The SimRF claims (``simrf``) are declared through the public claim API (rfcheck.ledger):
no internal registration, no post-hoc patching of checks or domains through the registry,
no other paper's private helpers -- and what the proofs module used to patch afterwards
(point caps, fixed points) is part of each declaration."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rfcheck.claims.simrf  # noqa: F401  (registers the paper's claims)
from rfcheck.claims import REGISTRY
from rfcheck.ledger import paper

CLAIMS = Path(__file__).parents[1] / "rfcheck" / "claims"
FILES = ["simrf.py", "_simrf_proofs.py", "_simrf_shared.py"]
#: the paper's own modules (one paper's declarations split over files), and the check
#: builders that have no public path yet (rfcheck.claims._common)
ALLOWED_PRIVATE = {"rfcheck.claims._simrf_shared", "rfcheck.claims._common"}


@pytest.mark.parametrize("module", FILES)
def test_simrf_claims_are_declared_through_the_public_api(module):
    text = (CLAIMS / module).read_text()
    assert "register(" not in text and "REGISTRY" not in text and "Claim(" not in text
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            assert node.module is not None, module
            if node.module == "rfcheck.claims":  # only the paper's own proof-step module
                assert [a.name for a in node.names] == ["_simrf_proofs"] and module == "simrf.py", node.module
                continue
            if node.module.startswith("rfcheck.claims"):
                assert node.module in ALLOWED_PRIVATE, node.module
                continue
            assert not any(a.name.startswith("_") for a in node.names), node.module
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("rfcheck.claims") for a in node.names), module


def test_simrf_ids_sources_and_paper_come_from_the_declared_paper():
    P = paper("simrf")
    # the ``*.attention`` restatements are declared by rfcheck.claims.attention, with their own source line
    ours = [c for c in REGISTRY.values() if c.id.startswith("simrf.") and not c.id.endswith(".attention")]
    assert len(ours) == 68
    for c in ours:
        assert c.paper == "simrf", c.id
        assert c.source.startswith(P.source + ", "), c.id


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

"""The ``crt`` claims are declared through the public claim API (rfcheck.ledger): ``P = paper("crt")``,
``P.claim(...)``; no internal registration, no post-hoc patching through the registry, no other
claim module's private helpers.  The helpers that exist only in ``rfcheck.claims._common`` (no
public path yet) are the one allowed exception, named here so that nothing else creeps in."""

from __future__ import annotations

import ast
from pathlib import Path

from rfcheck.claims import REGISTRY
from rfcheck.ledger import paper

CRT = Path(__file__).parents[1] / "rfcheck" / "claims" / "crt.py"

#: helpers imported from rfcheck.claims._common because no public module exports them
ALLOWED_COMMON = {"stats_fp", "certify_eval"}


def test_crt_claims_are_declared_through_the_public_api():
    text = CRT.read_text()
    assert "register(" not in text and "REGISTRY" not in text and "Claim(" not in text
    assert "paper(\"crt\")" in text
    common = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            assert node.module is not None and node.level == 0, node.module
            if node.module == "rfcheck.claims._common":
                common |= {a.name for a in node.names}
                continue
            assert not node.module.startswith("rfcheck.claims"), node.module
            assert not any(a.name.startswith("_") for a in node.names), node.module
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("rfcheck.claims") for a in node.names)
    assert common <= ALLOWED_COMMON, sorted(common - ALLOWED_COMMON)


def test_crt_claims_carry_the_papers_id_and_source_line():
    """Each claim's paper is derived from its id, its source is ``P.at(...)`` of the paper's source line,
    and every claim is checkable (checks or readings) or says why not."""
    import rfcheck.claims.crt  # noqa: F401  (registers the claims)

    P = paper("crt")
    claims = [c for cid, c in REGISTRY.items() if cid.startswith("crt.")]
    assert len(claims) > 55
    for c in claims:
        assert c.paper == "crt"
        assert c.source.startswith(P.source + ", ") and len(c.source) > len(P.source) + 2, c.id
        assert c.statement, c.id
        assert c.checks or c.readings or c.unverifiable, c.id
        assert not (c.checks and c.readings), c.id

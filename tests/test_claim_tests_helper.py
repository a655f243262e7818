"""A user's claims pack as a pytest regression suite (rfcheck.ledger.claim_tests), run here through pytest
itself on the toy pack: the true claims pass, the wrong transcription passes only when expected REFUTED."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOY = Path(__file__).parent / "data" / "toy_claims.py"


def _pytest(tmp_path: Path, expect: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_toy.py").write_text(
        "from rfcheck.ledger import claim_tests\n"
        f"test_toy = claim_tests({str(TOY)!r}, budget='smoke', expect={expect})\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "eq1 or eq2 or eq3",
                           str(tmp_path / "test_toy.py")], capture_output=True, text=True, cwd=tmp_path, timeout=600)


def test_a_pack_runs_as_pytest_cases(tmp_path):
    r = _pytest(tmp_path, "{'toy.eq2': 'REFUTED'}")
    assert r.returncode == 0 and "3 passed" in r.stdout, r.stdout[-2000:]
    r = _pytest(tmp_path, "{}")
    assert r.returncode == 1 and "1 failed, 2 passed" in r.stdout
    assert "toy.eq2: REFUTED, expected HOLDS" in r.stdout and "rfcheck verify --claims" in r.stdout

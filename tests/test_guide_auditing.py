"""The user guide docs/guide/auditing.md runs as written: every ```python block, in order,
in one namespace (the blocks carry their own assertions at the guide's small sizes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "auditing.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)


def test_guide_has_the_worked_audits():
    text = GUIDE.read_text()
    assert len(_blocks()) >= 8
    for needle in ("RBFSampler", "random_offset_", "layout=\"columns\"", "custom.columns", "custom.Aux",
                   "qr_without_sign_fix", "likely_transposed", "float32", "causality_audit", "Inconclusive"):
        assert needle in text, needle


@pytest.mark.mc
def test_guide_code_blocks_run():
    pytest.importorskip("sklearn", reason="the guide audits scikit-learn's RBFSampler (pip install 'rfcheck[data]')")
    ns: dict = {"__name__": "guide"}
    for i, code in enumerate(_blocks()):
        exec(compile(code, f"{GUIDE.name} block {i}", "exec"), ns)  # the guide's own code
    assert ns["good"].verdict == "HOLDS" and ns["bad"].verdict == "REFUTED"
    assert ns["flawed"].verdict == "REFUTED" and ns["rows_read"].likely_transposed
    assert ns["leak"].leaked == ["q"]

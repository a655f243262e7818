"""README.md fits on a screen, its commands are the ones CI runs, every Python snippet runs as
written and prints what the comments under it say, and its ledger headline is the stored ledger's."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from rfcheck import docsgen

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAIN_JOB = 'pip install -e ".[jax]" && rfcheck verify --all'
TESTS = 'pip install -e ".[test,jax,dask,data]" && pytest'


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(), re.S | re.M)


def stated_output(code: str) -> list[str]:
    """The output a snippet states: the comment lines that follow its last ``print`` (one comment
    line per printed line), or a ``print(...)  # text`` line's own trailing comment."""
    lines = code.rstrip().splitlines()
    out: list[str] = []
    for i, ln in enumerate(lines):
        if "print(" in ln and "#" in ln.split("print(", 1)[1]:
            out.append(ln.rsplit("# ", 1)[1].strip())
        elif "print(" in ln:
            j = i + 1
            while j < len(lines) and lines[j].startswith("    "):  # the print's loop body / continuation
                j += 1
            while j < len(lines) and lines[j].startswith("# "):
                out.append(lines[j][2:].strip())
                j += 1
    return out


def test_readme_is_short():
    assert len(README.read_bytes()) < 10_000


def test_the_two_commands_are_there_verbatim():
    """CI (``.ci/run``) and the getting-started page follow these two commands."""
    bash = [b.strip() for b in _blocks("bash")]
    assert MAIN_JOB in bash and TESTS in bash
    assert MAIN_JOB in (ROOT / "docs" / "getting_started.md").read_text()
    assert TESTS in (ROOT / "docs" / "getting_started.md").read_text()


def test_stated_output_parser():
    code = 'x = 1\nprint(x)\n# 1\nfor s in "ab":\n    print(s)\n# a\n# b\nprint(2)  # 2\n'
    assert stated_output(code) == ["1", "a", "b", "2"]


PYTHON = _blocks("python")


@pytest.mark.mc
@pytest.mark.parametrize("code", PYTHON, ids=[f"block{i}" for i in range(len(PYTHON))])
def test_python_block_runs_and_prints_what_it_states(code):
    """Each block on its own, in a fresh namespace, as a reader would paste it."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    assert buf.getvalue().splitlines() == stated_output(code)


def test_every_python_block_is_tested():
    assert len(PYTHON) >= 3
    assert all(stated_output(c) or "assert_" in c for c in PYTHON)  # prints its numbers, or asserts


def test_headline_is_the_stored_ledgers():
    """The line between the ledger markers is :func:`rfcheck.docsgen.headline` of the stored
    ledger (``results/ledger/ledger.json``, or before it exists the table moved out of README)."""
    text = README.read_text()
    block = re.search(r"<!-- ledger:start[^>]*-->\n(.*?)\n<!-- ledger:end -->", text, re.S)
    assert block, "README lost its ledger markers (rfcheck verify --update-readme writes between them)"
    assert block.group(1).strip() == docsgen.headline(docsgen.load_ledger(ROOT).entries)


def test_local_links_exist():
    for target in re.findall(r"\]\(([^)#]+)\)", README.read_text()):
        if "://" not in target:
            assert (ROOT / target).exists(), target

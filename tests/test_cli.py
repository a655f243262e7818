"""The command line: bad input gives one clear line (no traceback); outputs are well formed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rfcheck.cli import _parse_at, main


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rfcheck.cli", *args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("args, needle", [
    (["verify", "--claim", "crt.nope"], "unknown claim id"),
    (["verify", "--paper", "nopaper"], "no claims registered"),
    (["verify", "--claim", "crt.thm3.3", "--at", "d=3,nx=1,ny=1,theta=3.141592653589793"], "outside the domain"),
    (["verify", "--claim", "crt.eq22", "--at", "bogus"], "name=value"),
    (["plot", "nofig"], "unknown figure"),
    (["plot"], "name a figure"),
])
def test_bad_input_is_one_line(args, needle):
    r = run(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_parse_at_types():
    got = _parse_at("d=3,nx=1.5,s=-1,mech=trig,a=0.1+0.2j")
    assert got == {"d": 3, "nx": 1.5, "s": -1, "mech": "trig", "a": 0.1 + 0.2j}


def test_list_shows_claims(capsys):
    assert main(["list", "--paper", "crt"]) == 0
    out = capsys.readouterr().out
    assert "crt.thm3.2" in out and "crt.eq22" in out


def test_verify_report_schema_and_strict(tmp_path):
    rep = tmp_path / "rep"
    r = run("verify", "--claim", "crt.thm3.3", "--claim", "crt.eq22", "--budget", "smoke", "--report", str(rep),
            "--strict", "--no-cache", "--jobs", "1")
    assert r.returncode == 1, r.stderr  # --strict: a REFUTED claim
    entries = json.loads((rep / "ledger.json").read_text())
    assert [e["id"] for e in entries] == ["crt.thm3.3", "crt.eq22"]
    for e in entries:
        for key in ("id", "paper", "source", "statement", "verdict", "evidence", "correction", "reproduce"):
            assert key in e
        assert e["verdict"] in ("HOLDS", "REFUTED", "INCONCLUSIVE")
        w = e["evidence"]["worst"]
        assert {"point", "printed", "reference", "err"} <= set(w)
    assert entries[0]["verdict"] == "REFUTED" and entries[0]["correction"]
    md = (rep / "crt.md").read_text()
    assert "crt.thm3.3" in md and "REFUTED" in md
    assert "| crt |" in (rep / "index.md").read_text()
    # HTML pages, and a printed-vs-reference plot for the REFUTED claim only
    page = (rep / "crt.html").read_text()
    assert "<span class='REFUTED'>REFUTED</span>" in page and "plots/crt.thm3.3.png" in page
    assert (rep / "plots" / "crt.thm3.3.png").stat().st_size > 1000
    assert not (rep / "plots" / "crt.eq22.png").exists()
    assert "crt.html" in (rep / "index.html").read_text()
    pts = entries[0]["evidence"]["checks"][0]["points"]
    assert pts and {"point", "printed", "reference", "disc", "decided"} <= set(pts[0])


def test_verify_without_strict_exits_zero():
    r = run("verify", "--claim", "crt.thm3.3", "--budget", "smoke", "--no-cache", "--jobs", "1")
    assert r.returncode == 0
    assert "REFUTED" in r.stdout


def test_figures_index(tmp_path):
    (tmp_path / "crt-fig1.png").write_bytes(b"png")
    assert main(["plot", "--index", "--out", str(tmp_path)]) == 0
    idx = (tmp_path / "index.md").read_text()
    assert "## crt-fig1" in idx and "rfcheck plot crt-fig1" in idx and "Files: crt-fig1.png" in idx
    assert "Figure 1" in idx  # the caption comes from the figure function's docstring

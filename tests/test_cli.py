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
    got = _parse_at("d=3,nx=1.5,s=-1,mech=trig,a=0.1+0.2j,imag=False,plus=True")
    assert got == {"d": 3, "nx": 1.5, "s": -1, "mech": "trig", "a": 0.1 + 0.2j, "imag": False, "plus": True}
    assert got["imag"] is False  # a reproduce command's False must not arrive as the (truthy) string 'False'


_AT32 = "d=3,nx=1.0,ny=1.0,theta=0.5,a_re=0.05,a_im=0,s=1"


@pytest.mark.parametrize("args, needle", [
    (["verify"], "name the claims"),
    (["verify", "--claim", "crt.eq16", "--all"], "--all selects every claim"),
    (["verify", "--claim", "crt.eq16", "--report", "/proc/rfcheck-x"], "--report /proc/rfcheck-x"),
    (["verify", "--claim", "crt.eq16", "--update-readme", "/nonexistent/README.md"], "no such file"),
    (["verify", "--claim", "crt.thm3.2", "--at", _AT32.replace("s=1", "s=7")], "s = 7 lies outside the domain"),
    (["verify", "--claim", "crt.thm3.2", "--at", _AT32.replace("a_re=0.05", "a_re=0.2")], "a_re = 0.2 lies outside"),
    (["verify", "--claim", "crt.thm3.2", "--at", _AT32 + ",bogus=7"], "unknown parameter bogus"),
    (["verify", "--claim", "crt.thm3.3", "--at", "zz=3"], "the point needs"),
    (["verify", "--claim", "crt.eq16", "--point-index", "3"], "--point-index goes with --at"),
    (["plot", "--index", "crt-fig1"], "--index writes the index"),
    (["bench", "--quick", "--json", "/proc/rfcheck-x/out.json"], "no such directory"),
    (["bench", "--min-len", "64"], "options of 'rfcheck bench attention'"),
    (["bench", "attention", "--summarise", "x.json"], "--summarise reads"),
    (["bench", "--summarise", "pyproject.toml"], "cannot read bench output"),
    (["calibrate", "--json", "/proc/rfcheck-x/c.json"], "no such directory"),
])
def test_bad_input_fails_before_the_work(args, needle, capsys):
    """Each fails at once with one line naming the problem (before any verdict or timing is computed)."""
    assert main(args) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and needle in err[0], err


def test_bench_summarise_rejects_an_attention_output(tmp_path, capsys):
    f = tmp_path / "att.json"
    f.write_text(json.dumps({"entries": [], "summary": {}}))
    assert main(["bench", "--summarise", str(f)]) == 2
    assert "not an `rfcheck bench --json` output" in capsys.readouterr().err
    from rfcheck.bench import WORKLOAD

    f.write_text(json.dumps([{"workload": WORKLOAD, "coupling": "iid", "path": "ensemble", "trials_per_s": "fast"}]))
    assert main(["bench", "--summarise", str(f)]) == 2
    assert "has no valid 'trials_per_s'" in capsys.readouterr().err


@pytest.mark.parametrize("args, needle", [
    (["verify", "--claim", "crt.eq16", "--jobs", "0"], "--jobs: must be >= 1"),
    (["verify", "--claim", "crt.eq16", "--seed", "-1"], "--seed: must be >= 0"),
    (["verify", "--claim", "crt.eq16", "--at", "d=1", "--point-index", "-2"], "--point-index: must be >= 0"),
    (["calibrate", "--seeds", "0"], "--seeds: must be >= 1"),
    (["calibrate", "--alpha", "nan"], "--alpha: must lie in (0, 1)"),
    (["bench", "attention", "--repeats", "0"], "--repeats: must be >= 1"),
    (["bench", "attention", "--exact-mem", "nan"], "--exact-mem: must be a finite number > 0"),
])
def test_bad_counts_and_levels_rejected_by_the_parser(args, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and needle in err.splitlines()[-1]


def test_list_shows_claims(capsys):
    assert main(["list", "--paper", "crt"]) == 0
    out = capsys.readouterr().out
    assert "crt.thm3.2" in out and "crt.eq22" in out


def test_verify_report_schema_and_strict(tmp_path):
    # crt.eq35 (one reading, REFUTED); crt.thm3.3, used here until its readings, is MIXED and --strict passes it
    rep = tmp_path / "rep"
    r = run("verify", "--claim", "crt.eq35", "--claim", "crt.eq22", "--budget", "smoke", "--report", str(rep),
            "--strict", "--no-cache", "--jobs", "1")
    assert r.returncode == 1, r.stderr  # --strict: a REFUTED claim
    entries = json.loads((rep / "ledger.json").read_text())
    assert [e["id"] for e in entries] == ["crt.eq35", "crt.eq22"]
    for e in entries:
        for key in ("id", "paper", "source", "statement", "verdict", "evidence", "correction", "reproduce"):
            assert key in e
        assert e["verdict"] in ("HOLDS", "REFUTED", "INCONCLUSIVE")
        w = e["evidence"]["worst"]
        assert {"point", "printed", "reference", "err"} <= set(w)
    assert entries[0]["verdict"] == "REFUTED" and entries[0]["correction"]
    md = (rep / "crt.md").read_text()
    assert "crt.eq35" in md and "REFUTED" in md
    assert "| crt |" in (rep / "index.md").read_text()
    # HTML pages, and a printed-vs-reference plot for the REFUTED claim only
    page = (rep / "crt.html").read_text()
    assert "<span class='REFUTED'>REFUTED</span>" in page and "plots/crt.eq35.png" in page
    assert (rep / "plots" / "crt.eq35.png").stat().st_size > 1000
    assert not (rep / "plots" / "crt.eq22.png").exists()
    assert "crt.html" in (rep / "index.html").read_text()
    pts = entries[0]["evidence"]["checks"][0]["points"]
    assert pts and {"point", "printed", "reference", "disc", "decided"} <= set(pts[0])


def test_verify_without_strict_exits_zero():
    # crt.thm3.3 is MIXED (refuted as transcribed, holds with eq (22)'s root): plain verify exits 0 and says so
    r = run("verify", "--claim", "crt.thm3.3", "--budget", "smoke", "--no-cache", "--jobs", "1")
    assert r.returncode == 0
    assert "MIXED" in r.stdout and "REFUTED" in r.stdout


def test_figures_index(tmp_path):
    (tmp_path / "crt-fig1.png").write_bytes(b"png")
    assert main(["plot", "--index", "--out", str(tmp_path)]) == 0
    idx = (tmp_path / "index.md").read_text()
    assert "## crt-fig1" in idx and "rfcheck plot crt-fig1" in idx and "Files: crt-fig1.png" in idx
    assert "Figure 1" in idx  # the caption comes from the figure function's docstring

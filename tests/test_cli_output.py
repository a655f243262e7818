"""CLI output a person can read: `list` with statements and last known verdicts, one-line usage errors,
did-you-mean ids, the smoke budget's caveat, one log line per claim off a terminal, `diff` of ledgers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from rfcheck.cli import main


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rfcheck", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "160"})


def _ledger(tmp_path, rows):
    p = tmp_path / "ledger.json"
    p.write_text(json.dumps([{"id": i, "paper": i.split(".")[0], "statement": s, "verdict": v,
                              "evidence": {"deciding_check": d}} for i, s, v, d in rows]))
    return p


def test_list_reads_the_stored_ledger_and_filters(tmp_path, capsys):
    led = _ledger(tmp_path, [("crt.thm3.2", "Var = ...", "HOLDS", "quadrature"),
                             ("crt.eq1", "K = E ...", "REFUTED", "quadrature"),
                             ("hrf.eq89", "||v||^2 ...", "MIXED", "exact")])
    assert main(["list", "--ledger", str(led), "--paper", "CRT", "--verdict", "refuted"]) == 0
    out = capsys.readouterr().out
    assert "crt.eq1" in out and "REFUTED" in out and "K = E ..." in out
    assert "crt.thm3.2" not in out and "hrf.eq89" not in out
    assert main(["list", "--ledger", str(led), "--paper", "nope"]) == 2
    assert "no claims of paper 'nope'" in capsys.readouterr().err


def test_list_without_a_stored_ledger_imports_the_claims(tmp_path, capsys):
    assert main(["list", "--ledger", str(tmp_path / "none.json"), "--paper", "rfa"]) == 0
    out = capsys.readouterr().out
    assert "rfa.eq-gate" in out and "6 claims" in out


def test_usage_errors_are_one_line_and_ids_get_suggestions():
    r = _run("verify", "--budget", "huge")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "invalid choice" in r.stderr
    r = _run("verify", "--claim", "crt.thm33")
    assert r.returncode == 2 and "did you mean crt.thm3.3" in r.stderr


def test_smoke_budget_says_it_is_a_quick_look_and_logs_a_line_per_claim():
    r = _run("verify", "--claim", "rfa.tab-complexity", "--budget", "smoke", "--no-cache", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert "budget smoke: a quick look" in r.stdout
    assert "[1/1] rfa.tab-complexity:" in r.stdout  # not a terminal: one log line per finished claim


def test_diff_names_every_changed_claim(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = _ledger(tmp_path / "a", [("crt.eq1", "", "REFUTED", "quadrature"), ("crt.eq2", "", "HOLDS", "q")])
    b = _ledger(tmp_path / "b", [("crt.eq1", "", "MIXED", "quadrature"), ("crt.eq3", "", "HOLDS", "q")])
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "3 changed" in out and "| `crt.eq1` | REFUTED (quadrature) | MIXED (quadrature) |" in out
    assert "| `crt.eq2` | HOLDS (q) | (absent) |" in out
    assert main(["diff", str(a), str(a)]) == 0


def test_report_index_says_where_the_time_went():
    from rfcheck.report import timing_markdown

    md = timing_markdown([{"id": "a.eq1", "elapsed_s": 30.0}, {"id": "a.eq2", "elapsed_s": 10.0}], top=1)
    assert "Claim-seconds: 40 over 2 claims" in md and "| `a.eq1` | 30.0 | 75.0% |" in md and "a.eq2" not in md


def test_a_reproduce_command_with_string_parameters_runs_as_printed():
    import shlex

    from rfcheck import verify

    v = verify.run_claim("rfa.tab-complexity", budget="smoke")
    cmd = v.reproduce_point()
    assert "method=" in cmd and "''" not in cmd
    r = _run(*shlex.split(cmd)[1:])
    # at the counterexample the literal reading is refuted (the other reading has no point there)
    assert r.returncode == 0 and "REFUTED as read 'literal'" in r.stdout, r.stderr


def test_diff_reads_a_markdown_ledger_whose_undecided_rows_name_no_check(tmp_path):
    from rfcheck.report import diff_ledgers, read_ledger

    md = tmp_path / "old.md"
    md.write_text("| claim | verdict | deciding reference |\n| --- | --- | --- |\n"
                  "| `crt.eq28` | INCONCLUSIVE | None |\n")
    js = _ledger(tmp_path, [("crt.eq28", "", "INCONCLUSIVE", None)])
    assert read_ledger(md)["crt.eq28"]["deciding_check"] is None
    assert diff_ledgers(read_ledger(md), read_ledger(js)) == []

"""Notebooks are executed (jupytext percent scripts) at small sizes."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest

# jupytext notebooks only: notebooks/ also holds rmf_claims.py, the claims pack verify_your_paper.py runs
NOTEBOOKS = sorted(p for p in (Path(__file__).resolve().parent.parent / "notebooks").glob("*.py")
                   if p.read_text().startswith("# ---\n# jupyter:"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch, capsys):
    if path.stem == "attention":
        pytest.importorskip("jax", reason="notebooks/attention.py needs JAX (pip install 'rfcheck[jax]')")
    monkeypatch.setenv("RFCHECK_NOTEBOOK_QUICK", "1")
    monkeypatch.chdir(path.parent)
    ns = runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip()
    if path.stem == "crt":
        verdicts = {e["id"]: e["verdict"] for e in ns["entries"]}
        assert verdicts["crt.thm3.3"] == "MIXED"  # refuted as transcribed (long root), holds with eq (22)'s root
        assert verdicts["crt.eq22"] == "HOLDS"
    if path.stem == "attention":
        assert ns["scan_vs_quadratic"] < 1e-5  # float32
        assert ns["chunked_vs_scan"] < 1e-5
        assert ns["ours"].causal and not ns["leaky"].causal
        assert "REFUTED" not in ns["verdicts"].values()
        assert ns["mr"].exact["hybrid"]["eps_max"] < ns["mr"].exact["trig"]["eps_max"]
        assert {e["verdict"] for e in ns["mr"].entries} <= {"HOLDS", "INCONCLUSIVE"}
    if path.stem == "your_estimator":
        assert ns["good"].verdict == "HOLDS"
        assert ns["bad"].verdict == "REFUTED"
        assert ns["flawed"].verdict == "REFUTED"
    if path.stem == "simrf":
        verdicts = {e["id"]: e["verdict"] for e in ns["entries"]}
        assert verdicts["simrf.cor4.4"] == "REFUTED"
        assert verdicts["simrf.thm4.3.orf"] == "HOLDS"
    if path.stem == "hrf":
        verdicts = {e["id"]: e["verdict"] for e in ns["entries"]}
        assert verdicts["hrf.thm3.5.bound"] == "REFUTED"
        assert verdicts["hrf.eq47"] == "REFUTED"
        assert verdicts["hrf.lem2.3"] == "HOLDS"
        assert verdicts["hrf.eq45"] == "HOLDS"
        assert ns["lemma23_gap"] < 1e-12
        assert all(hyb < base for base, hyb in ns["fig2_max"].values())
    if path.stem == "verify_your_paper":
        assert ns["verdicts"] == {**{f"rmf.eq{i}": "HOLDS" for i in range(1, 7)}, "rmf.eq2.mc": "HOLDS",
                                  "rmf.eq2.typo": "REFUTED"}
        assert {r["method"] for r in ns["loc_rows"]} == {"equality", "bound", "ordering", "optimum", "variance"}
    assert os.environ["RFCHECK_NOTEBOOK_QUICK"] == "1"

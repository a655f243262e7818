"""The main job survives a failing claim, a dead worker, an interrupt and a missing extra.

A claim whose computation raises is an ``ERROR`` entry and every other claim still runs and
is cached as soon as it finishes (serial and process pool alike); checks that need an
optional extra that is not installed are not run and say "needs rfcheck[<extra>]"; the CLI
exits non-zero on an ERROR and prints one line, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from rfcheck import report, verify
from rfcheck.claims import REGISTRY, Check, Claim, missing_extras
from rfcheck.cli import main
from rfcheck.domains import Choice, Domain
from rfcheck.stats import PointEval


def _ok(p, budget, seed):
    return PointEval(p, 1.0, 1.0, 1e-12, 0.0, True)


def _raises(p, budget, seed):
    raise RuntimeError("planted bug in a reference")


def _dies(p, budget, seed):
    os._exit(3)  # a worker killed mid-claim (out of memory, a segfault in compiled code)


def _claim(cid: str, evaluate, requires: tuple[str, ...] = ()) -> Claim:
    return Claim(id=cid, paper="crt", source="test", statement="planted", domain=Domain({"k": Choice((1, 2))}),
                 checks=[Check("ref", 1, evaluate, search=False, requires=requires)])


@pytest.fixture
def planted() -> Iterator[list[str]]:
    """Three planted claims in the registry: one that holds, one that raises, one that kills its worker."""
    claims = [_claim("crt.text-zz-ok", _ok), _claim("crt.text-zz-raises", _raises),
              _claim("crt.text-zz-dies", _dies)]
    for c in claims:
        REGISTRY[c.id] = c
    yield [c.id for c in claims]
    for c in claims:
        REGISTRY.pop(c.id, None)


# the planted claims live in this process's registry: the workers must be forked copies of it (JAX, if an
# earlier test imported it, warns that forking a multithreaded process is unsafe; not an issue for these workers)
FORK_OK = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@FORK_OK
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_raising_claim_is_an_error_entry_and_the_others_run_and_are_cached(planted, tmp_path, jobs):
    ids = ["crt.text-zz-raises", "crt.text-zz-ok"]
    entries = verify.run_many(ids, budget="smoke", jobs=jobs, cache_dir=str(tmp_path), start_method="fork")
    err, ok = entries
    assert err["verdict"] == "ERROR" and err["reason"] == "RuntimeError: planted bug in a reference"
    assert "planted bug" in err["error"]["traceback"] and err["reproduce"].startswith("rfcheck verify --claim")
    assert ok["verdict"] == "HOLDS"
    cached = sorted(p.name.split("__")[0] for p in tmp_path.glob("*.json"))
    assert cached == ["crt.text-zz-ok"]  # the ERROR is retried next run, not cached
    again = verify.run_many(ids, budget="smoke", jobs=jobs, cache_dir=str(tmp_path), start_method="fork")
    assert again[1].get("cached") and not again[0].get("cached")


@FORK_OK
def test_a_claim_that_kills_its_worker_is_an_error_and_the_others_finish(planted, tmp_path):
    ids = ["crt.text-zz-dies", "crt.text-zz-ok", "crt.text-zz-raises"]
    entries = {e["id"]: e for e in verify.run_many(ids, budget="smoke", jobs=2, cache_dir=str(tmp_path),
                                                   start_method="fork")}
    assert entries["crt.text-zz-ok"]["verdict"] == "HOLDS"
    assert entries["crt.text-zz-raises"]["verdict"] == "ERROR"
    assert entries["crt.text-zz-dies"]["verdict"] == "ERROR"
    assert "worker process died" in entries["crt.text-zz-dies"]["reason"]


def test_an_interrupt_keeps_finished_verdicts_and_the_next_run_resumes(planted, tmp_path):
    seen = []

    def progress(cid, entry):
        if entry is not None:
            seen.append(cid)
            raise KeyboardInterrupt  # Ctrl-C right after the first claim finished

    with pytest.raises(KeyboardInterrupt):
        verify.run_many(["crt.text-zz-ok", "crt.text-zz-raises"], budget="smoke", cache_dir=str(tmp_path),
                        progress=progress)
    assert seen == ["crt.text-zz-ok"]
    entries = verify.run_many(["crt.text-zz-ok"], budget="smoke", cache_dir=str(tmp_path))
    assert entries[0]["cached"] and entries[0]["verdict"] == "HOLDS"


def test_cli_exits_1_on_an_error_and_lists_it_in_the_summary_and_reports(planted, tmp_path, capsys):
    rc = main(["verify", "--claim", "crt.text-zz-raises", "--claim", "crt.text-zz-ok", "--budget", "smoke",
               "--jobs", "1", "--no-cache", "--report", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "ERROR (the computation raised; every other claim ran): 1" in out
    assert "Traceback" not in out
    ledger = json.loads((tmp_path / "ledger.json").read_text())
    assert [e["verdict"] for e in ledger] == ["ERROR", "HOLDS"]
    md = (tmp_path / "crt.md").read_text()
    assert "| ERROR |" in md and "RuntimeError: planted bug" in md


def test_summary_counts_errors_only_when_present():
    e = {"paper": "crt", "verdict": "HOLDS"}
    assert "ERROR" not in report.summary_markdown([e])
    counts = report.summary_counts([e, {"paper": "crt", "verdict": "ERROR", "id": "crt.x", "reason": "r",
                                        "reproduce": "c"}])
    assert counts["crt"] == {"HOLDS": 1, "REFUTED": 0, "INCONCLUSIVE": 0, "ERROR": 1}


def test_a_check_needing_a_missing_extra_is_not_run_and_says_so(monkeypatch, planted):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # as if rfcheck[data] were not installed
    assert missing_extras(("data",)) == ["data"]
    c = _claim("crt.text-zz-needs", _raises, requires=("data",))
    v = verify.run_claim(c, budget="smoke")
    assert v.verdict == "INCONCLUSIVE" and "needs rfcheck[data]" in v.reason
    assert v.as_dict()["needs"] == ["data"]
    with pytest.raises(ValueError, match="unknown extra"):
        missing_extras(("jaxx",))


def test_attention_claims_without_jax_are_inconclusive_not_a_crash():
    """The main job in an install without the jax extra (README's main command once crashed here after
    35 minutes): the JAX checks are not run, say why, and the exact check still decides."""
    code = ("import sys; sys.modules['jax'] = None\n"
            "from rfcheck.cli import main\n"
            "sys.exit(main(['verify', '--claim', 'crt.thm3.2.attention', '--claim', "
            "'hrf.text-sec4-max-rel-error.attention', '--budget', 'smoke', '--no-cache', '--jobs', '1']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    assert "crt.thm3.2.attention" in r.stdout and "needs rfcheck[jax]" in r.stdout
    assert "pip install 'rfcheck[jax]'" in r.stdout
    row = next(line for line in r.stdout.splitlines()
               if "hrf.text-sec4-max-rel-error.attention" in line and "exact-grid" in line)
    assert "HOLDS" in row and "exact-grid" in row


def test_plot_draws_the_other_figures_when_one_fails(monkeypatch, tmp_path, capsys):
    from rfcheck import plots

    def boom(**kw):
        raise RuntimeError("planted plot failure")

    def fine(out_dir, quick, seed):
        p = tmp_path / "fine.png"
        p.write_bytes(b"png")
        return [p]

    monkeypatch.setitem(plots.FIGURES, "crt-fig1", boom)
    monkeypatch.setitem(plots.FIGURES, "crt-fig2", fine)
    rc = main(["plot", "crt-fig1", "crt-fig2", "--out", str(tmp_path)])
    cap = capsys.readouterr()
    assert rc == 1 and "fine.png" in cap.out
    assert "crt-fig1: RuntimeError: planted plot failure" in cap.err and "Traceback" not in cap.err


def test_calibrate_writes_partial_rows_and_names_the_failure(monkeypatch, tmp_path, capsys):
    from rfcheck import calibrate

    mutants = calibrate.MUTANTS[:2]
    monkeypatch.setattr(calibrate, "MUTANTS", mutants)
    real = calibrate._mutant_claim

    def planted(m):
        if m is mutants[0]:
            raise RuntimeError("planted calibration failure")
        return real(m)

    monkeypatch.setattr(calibrate, "_mutant_claim", planted)
    out = tmp_path / "cal.json"
    rc = main(["calibrate", "--skip-false-alarms", "--budget", "smoke", "--json", str(out)])
    cap = capsys.readouterr()
    assert rc == 1 and "planted calibration failure" in cap.err
    rows = json.loads(out.read_text())
    first, second = rows["mutation_power"]
    assert rows["complete"] and first["verdict"] == "ERROR" and second["mutant"] == mutants[1].name
    assert second["verdict"] in ("HOLDS", "REFUTED", "INCONCLUSIVE")  # the next mutant still ran


def test_bench_writes_what_finished_when_a_workload_fails(monkeypatch, tmp_path, capsys):
    from rfcheck import bench

    monkeypatch.setattr(bench, "run_bench", lambda quick: (_ for _ in ()).throw(RuntimeError("planted")))
    monkeypatch.setattr(bench, "run_discrete_bench", lambda quick: [])
    out = tmp_path / "b.json"
    rc = main(["bench", "--quick", "--json", str(out)])
    assert rc == 1 and "engine bench: RuntimeError: planted" in capsys.readouterr().err
    assert json.loads(out.read_text()) == [{"workload": "engine bench", "error": "engine bench: RuntimeError: planted"}]


def test_the_pool_spawns_its_workers_once_jax_is_imported(monkeypatch):
    """A forked copy of multithreaded JAX can deadlock: with JAX imported, run_many spawns."""
    seen = []
    monkeypatch.setitem(sys.modules, "jax", sys.modules.get("jax") or object())
    def fake_pool(ids, budget, seed, jobs, done, packs=(), start_method=None, points=None):
        seen.append(start_method)
        for cid in ids:
            done(cid, {"id": cid, "verdict": "HOLDS"})
        return []

    monkeypatch.setattr(verify, "_run_pool", fake_pool)
    verify.run_many(["crt.eq22", "crt.eq16"], budget="smoke", jobs=2)
    assert seen == ["spawn"]


def test_an_unreadable_cache_entry_is_recomputed(planted, tmp_path):
    verify.run_many(["crt.text-zz-ok"], budget="smoke", cache_dir=str(tmp_path))
    (f,) = tmp_path.glob("*.json")
    f.write_text('{"id": "crt.text-zz-ok", "verd')  # torn by a full disk
    (e,) = verify.run_many(["crt.text-zz-ok"], budget="smoke", cache_dir=str(tmp_path))
    assert e["verdict"] == "HOLDS" and not e.get("cached")

"""Verify your own paper: the public claim API (rfcheck.ledger), claims packs from a file, a module or
an installed entry point, through the CLI with worker processes, and the verdict cache keyed by the
pack's source."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest

from rfcheck import verify
from rfcheck.claims import ORIGINS, REGISTRY, load_claims
from rfcheck.ledger import Domain, Real, assert_verdict, paper

TOY = Path(__file__).parent / "data" / "toy_claims.py"


@pytest.fixture
def toy(tmp_path):
    """A fresh copy of the toy pack (its own path, so each test loads it anew)."""
    path = tmp_path / "toy_claims.py"
    shutil.copy(TOY, path)
    yield path
    for cid in [c for c in REGISTRY if c.startswith("toy.")]:
        REGISTRY.pop(cid)
        ORIGINS.pop(cid, None)
    from rfcheck import claims

    claims._LOADED.clear()


def _rfcheck(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "rfcheck", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def test_a_users_claims_file_through_the_cli_with_two_worker_processes(toy, tmp_path):
    r = _rfcheck("verify", "--claims", str(toy), "--jobs", "2", "--budget", "smoke", "--report", "rep",
                 "--cache-dir", "cache", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ledger = {e["id"]: e for e in json.loads((tmp_path / "rep" / "ledger.json").read_text())}
    assert {k: e["verdict"] for k, e in ledger.items()} == {
        "toy.eq1": "HOLDS", "toy.eq2": "REFUTED", "toy.eq3": "HOLDS", "toy.eq4": "HOLDS", "toy.eq5": "HOLDS",
        "toy.eq6": "HOLDS", "toy.eq7": "HOLDS"}
    # the printed reproduce command works with the real command for a user claim
    rep = ledger["toy.eq2"]["reproduce_point"]
    assert rep.startswith(f"rfcheck verify --claims {toy} --claim toy.eq2 --at")
    args = rep.split(" ", 1)[1]
    r2 = subprocess.run(f"{sys.executable} -m rfcheck {args}", shell=True, capture_output=True, text=True,
                        cwd=tmp_path, timeout=300)
    assert r2.returncode == 0 and "REFUTED" in r2.stdout, r2.stderr
    assert "toy.eq2" in (tmp_path / "rep" / "toy.md").read_text()


def test_an_edited_formula_invalidates_its_cached_verdict(toy, tmp_path):
    r = _rfcheck("verify", "--claims", str(toy), "--claim", "toy.eq3", "--budget", "smoke", "--cache-dir", "c",
                 cwd=tmp_path)
    assert r.returncode == 0 and "HOLDS" in r.stdout
    # the same bound, printed the wrong way round: a cached HOLDS must not survive the edit
    toy.write_text(toy.read_text().replace('relation=">="', 'relation="<="'))
    r = _rfcheck("verify", "--claims", str(toy), "--claim", "toy.eq3", "--budget", "smoke", "--cache-dir", "c",
                 cwd=tmp_path)
    assert r.returncode == 0 and "REFUTED" in r.stdout, r.stdout


def test_spawned_workers_load_the_pack(toy):
    ids = load_claims(str(toy))
    entries = verify.run_many(ids[:2], budget="smoke", jobs=2, start_method="spawn")
    assert [e["verdict"] for e in entries] == ["HOLDS", "REFUTED"]


def test_an_installed_pack_loads_through_its_entry_point(toy, monkeypatch):
    from importlib import metadata

    monkeypatch.syspath_prepend(str(toy.parent))
    ep = metadata.EntryPoint(name="toypack", value="toy_claims", group="rfcheck.claims")
    real = metadata.entry_points

    def entry_points(**kw):
        return metadata.EntryPoints([ep]) if kw.get("group") == "rfcheck.claims" else real(**kw)

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    ids = load_claims("toypack")
    assert sorted(ids) == [f"toy.eq{i}" for i in range(1, 8)] and ORIGINS["toy.eq1"] == "toypack"
    assert load_claims("toypack") == ids  # a no-op the second time
    with pytest.raises(ValueError, match="not a file, an importable module or an installed claims pack"):
        load_claims("no_such_pack_anywhere")


def test_assert_verdict_runs_a_users_claim_as_a_test(toy):
    load_claims(str(toy))
    assert_verdict("toy.eq2", "REFUTED", budget="smoke")
    with pytest.raises(AssertionError, match=r"toy\.eq2: REFUTED, expected HOLDS"):
        assert_verdict("toy.eq2", "HOLDS", budget="smoke")


def test_printed_formulas_run_at_the_working_precision_not_in_float64():
    """A correct formula evaluated on float parameters used to round in float64 (1e-16) against a
    1e-25 tolerance and was REFUTED; the point now arrives as mpmath numbers."""
    P = paper("precisiontest", "precision")
    c = P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2),
                   reference=lambda p, dps: mpmath.exp(-mpmath.mpf(p["x"]) ** 2 / 2),
                   domain=Domain({"x": Real(0.1, 2.0)}))
    d = P.equality("eq2", precision="float64", printed=lambda ctx, p: float(sum([p["x"] / 10] * 10)),
                   reference=lambda p, dps: mpmath.mpf(p["x"]), domain=Domain({"x": Real(0.1, 2.0)}))
    try:
        assert verify.run_claim(c, budget="smoke").verdict == "HOLDS"
        # a float64 formula (rounding ~1e-16) against an exact reference: HOLDS within FLOAT64_RTOL
        assert verify.run_claim(d, budget="smoke").verdict == "HOLDS"
    finally:
        for cid in (c.id, d.id):
            REGISTRY.pop(cid, None)


def test_paper_and_claim_ids_are_validated():
    with pytest.raises(ValueError, match="lower case"):
        paper("My Paper", "x")
    P = paper("idtest", "ids")
    with pytest.raises(ValueError, match="does not follow"):
        P.bound("theorem2", lhs=lambda c, p: 0, rhs=lambda c, p: 1, domain=Domain({"t": Real(0, 1)}))
    with pytest.raises(ValueError, match="already declared"):
        paper("idtest", "another title")


def test_ordering_by_closed_forms_and_paired_monte_carlo(toy):
    import importlib

    load_claims(str(toy))
    v = verify.run_claim("toy.eq6", budget="default")
    assert {c.name: c.verdict for c in v.checks} == {"closed-forms": "HOLDS", "paired-mc": "HOLDS"}
    pack = importlib.import_module(next(m for m in sys.modules if m.startswith("rfcheck_claims_")
                                        and getattr(sys.modules[m], "__file__", "") == str(toy)))
    P = paper("ordertest", "orderings")
    flipped = P.ordering("eq1", domain=Domain({"x": Real(0.5, 2.0)}),
                         simulate_pair=lambda p, n, s: (lambda a, b, t: (b, a, t))(*pack.simulate_pair(p, n, s)))
    try:
        w = verify.run_claim(flipped, budget="default")
        assert w.verdict == "REFUTED"  # the reversed ordering: significantly positive differences
        e = w.as_dict()["evidence"]["worst"]
        assert e["labels"] == ["claim", "mean of (A - K)^2 - (B - K)^2"] and e["extra"]["z"] > e["extra"]["z_crit"]
    finally:
        REGISTRY.pop(flipped.id, None)


def test_inequality_reports_name_lhs_and_rhs_and_the_relative_error(toy):
    from rfcheck import report

    load_claims(str(toy))
    P = paper("labeltest", "labels")
    c = P.bound("eq1", lhs=lambda ctx, p: 1 - p["x"] ** 2 / 2, rhs=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2) / 2,
                domain=Domain({"x": Real(0.0, 1.0)}))
    try:
        e = verify.run_claim(c, budget="smoke").as_dict()
    finally:
        REGISTRY.pop(c.id, None)
    assert e["verdict"] == "REFUTED"  # at x = 0: 1 <= 1/2 is false
    w = e["evidence"]["worst"]
    assert w["labels"] == ["rhs", "lhs"] and w["point"]["x"] == 0.0 and w["rel_error"] == pytest.approx(0.5)
    text = report.counterexample_text(e)
    assert "rhs = 0.5, lhs = 1" in text and "relative error 0.5" in text


def test_a_monte_carlo_check_that_decides_nothing_leaves_a_deterministic_verdict_alone():
    from rfcheck.claims import Check, Claim
    from rfcheck.stats import PointEval

    def det(p, budget, seed):
        return PointEval(p, 1.0, 1.0, 1e-30, 0.0, True)

    def mc_undecided(p, budget, seed):
        return PointEval(p, 1.0, 1.3, 0.5, 0.3, False, "heavy tails")

    c = Claim(id="crt.text-zz-mixed", statement="x", domain=Domain({"x": Real(0.0, 1.0)}),
              checks=[Check("exact", 1, det), Check("mc", 3, mc_undecided, search=False)])
    v = verify.run_claim(c, budget="smoke")
    assert v.verdict == "HOLDS" and v.deciding_check().name == "exact"


def test_latex_printed_formulas_are_parsed_bound_and_shown():
    from rfcheck.backends import FP, MP
    from rfcheck.ledger import latex

    f = latex(r"\frac{1}{2}\left(1 + e^{-2\|x\|^2}\right) - e^{-\|x\|^2}", symbols={r"\|x\|": "nx"})
    with mpmath.workdps(50):
        want = (1 + mpmath.exp(-2 * mpmath.mpf(0.5) ** 2)) / 2 - mpmath.exp(-mpmath.mpf(0.5) ** 2)
        assert abs(f(MP, {"nx": mpmath.mpf(0.5)}) - want) < mpmath.mpf(10) ** -45  # e is Euler's number
    assert abs(f(FP, {"nx": 0.5}) - float(want)) < 1e-15
    assert f.latex.startswith(r"\frac{1}{2}") and str(f.expr) == "1/2 - exp(-nx**2) + exp(-2*nx**2)/2"
    with pytest.raises(ValueError, match="does not have"):
        f(MP, {"x": 1.0})
    with pytest.raises(ValueError, match="cannot parse the LaTeX"):
        latex(r"\frac{1}{2")
    # a wrong transcription pasted as LaTeX is refuted like any other
    P = paper("latextest", "latex")
    c = P.equality("eq1", printed=latex(r"e^{-x^2}"), reference=lambda p, dps: mpmath.exp(-mpmath.mpf(p["x"]) ** 2 / 2),
                   domain=Domain({"x": Real(0.5, 2.0)}))
    try:
        assert verify.run_claim(c, budget="smoke").verdict == "REFUTED"
        assert c.statement == "e^{-x^2}" and "parsed by sympy as: exp(-x**2)" in c.notes
    finally:
        REGISTRY.pop(c.id, None)


def test_latex_divides_integer_parameters_at_the_working_precision():
    from rfcheck.backends import MP
    from rfcheck.ledger import latex

    f = latex(r"1 + \frac{1}{k}")
    with mpmath.workdps(40):
        assert abs(f(MP, {"k": 12}) - (1 + mpmath.mpf(1) / 12)) < mpmath.mpf(10) ** -38


def test_one_pack_under_two_spellings_loads_once(toy, monkeypatch):
    monkeypatch.chdir(toy.parent)
    ids = load_claims("toy_claims.py")
    assert load_claims(str(toy)) == ids


def test_a_second_declaration_adds_an_independent_check():
    P = paper("twochecks", "two checks")
    dom = Domain({"x": Real(0.5, 2.0)})
    P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2),
               reference=lambda p, dps: mpmath.exp(-mpmath.mpf(p["x"]) ** 2 / 2), domain=dom)
    c = P.bound("eq1", lhs=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2), rhs=lambda ctx, p: 0.5, domain=dom,
                err=lambda p, dps: mpmath.mpf(10) ** -20)
    try:
        assert [ch.name for ch in c.checks] == ["reference", "bound"]
        v = verify.run_claim(c, budget="smoke")
        # the equality holds, the (wrong) bound is refuted: the two decided checks contradict each other
        assert v.verdict == "REFUTED" or "references disagree" in v.reason
        with pytest.raises(ValueError, match="give this one another name="):
            P.bound("eq1", lhs=lambda ctx, p: 0, rhs=lambda ctx, p: 1, domain=dom)
    finally:
        REGISTRY.pop(c.id, None)


def test_arb_balls_certify_a_counterexample_and_agreement():
    from flint import arb

    from rfcheck.certify import gaussian_expectation_1d

    def ball_ref(p, bits):  # E cos(w x), w ~ N(0, 1), by rigorous integration: |cos| <= 1
        x = arb(p["x"])
        return gaussian_expectation_1d(lambda w, analytic: (w * x).cos(), growth=(1.0, 0.0), prec=bits)

    P = paper("certtest", "certified")
    ok = P.equality("eq1", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2), domain=Domain({"x": Real(0.5, 2.0)}),
                    reference=lambda p, dps: mpmath.exp(-mpmath.mpf(p["x"]) ** 2 / 2), reference_ball=ball_ref)
    bad = P.equality("eq2", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2), domain=Domain({"x": Real(0.5, 2.0)}),
                     reference=lambda p, dps: mpmath.exp(-mpmath.mpf(p["x"]) ** 2 / 2), reference_ball=ball_ref)
    wide = P.equality("eq3", printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2), domain=Domain({"x": Real(0.5, 2.0)}),
                      reference=lambda p, dps: mpmath.exp(-mpmath.mpf(p["x"]) ** 2 / 2),
                      reference_ball=lambda p, bits: ball_ref(p, bits) + arb(0, 1e-3))  # made artificially wide
    try:
        e = verify.run_claim(ok, budget="smoke").as_dict()
        assert e["verdict"] == "HOLDS" and e["certified"]["points"] == e["certified"]["decided"] > 0
        r = verify.run_claim(bad, budget="smoke").as_dict()
        assert r["verdict"] == "REFUTED" and r["certified"]["verdict"]
        assert "[certified" in __import__("rfcheck.report").report.counterexample_text(r)
        w = verify.run_claim(wide, budget="smoke").as_dict()
        assert w["verdict"] == "HOLDS" and w["certified"]["points"] == 0 and not w["certified"]["verdict"]
    finally:
        for c in (ok, bad, wide):
            REGISTRY.pop(c.id, None)


def test_exact_bounds_are_certified_by_balls(toy):
    load_claims(str(toy))
    e = verify.run_claim("toy.eq3", budget="smoke").as_dict()
    assert e["verdict"] == "HOLDS" and e["certified"]["points"] == e["certified"]["decided"] > 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_inside_a_claim_reports_every_point(jobs):
    """``run_many(points=...)`` hears of each point a check evaluates, serially and from pool
    workers (the CLI's progress display inside a long claim); the last report of a check is
    ``done == total``."""
    ids = load_claims(str(TOY))
    pick = [i for i in ids if i.endswith((".eq1", ".eq3"))]
    seen: list[tuple[str, str, int, int]] = []
    verify.run_many(pick, budget="smoke", jobs=jobs, points=lambda *a: seen.append(a))
    for cid in pick:
        mine = [a for a in seen if a[0] == cid]
        assert mine, cid
        last = {}
        for _, check, k, n in mine:
            assert 1 <= k <= n and k > last.get(check, 0)
            last[check] = k
        assert all(k == n for _, check, k, n in mine if k == max(x[2] for x in mine if x[1] == check))


def test_the_pool_starts_the_longest_claims_first(monkeypatch):
    """``run_many(expected_s=...)`` submits the claims longest first (unknown ones last, in order);
    the results still come back in the order asked."""
    order: list[list[str]] = []

    def fake_pool(ids, budget, seed, jobs, done, packs=(), start_method=None, points=None):
        order.append(list(ids))
        for cid in ids:
            done(cid, {"id": cid, "verdict": "HOLDS"})
        return []

    monkeypatch.setattr(verify, "_run_pool", fake_pool)
    ids = ["crt.eq16", "crt.eq22", "crt.eq1", "crt.eq9"]
    out = verify.run_many(ids, budget="smoke", jobs=2, expected_s={"crt.eq1": 9.0, "crt.eq22": 30.0, "crt.eq16": 1.0})
    assert order == [["crt.eq22", "crt.eq1", "crt.eq16", "crt.eq9"]]
    assert [e["id"] for e in out] == ids


def test_the_mpmath_rounding_tolerance_is_defined_once():
    """``10^(5 - dps)`` is written in one place (:func:`rfcheck.claims.mpmath_rtol`); the budgets and
    the ledger's mpmath claims read it from there."""
    import re

    from rfcheck import ledger
    from rfcheck.claims import BUDGETS, mpmath_rtol

    root = Path(ledger.__file__).parent
    spelled = {p.relative_to(root).as_posix() for p in root.rglob("*.py")
               if re.search(r"10\.0 \*\* \(5 - ", p.read_text())}
    assert spelled == {"claims/__init__.py"}
    for b in BUDGETS.values():
        assert b.rtol == mpmath_rtol(b.dps) == ledger._rtol("mpmath", b.dps) == 10.0 ** (5 - b.dps)

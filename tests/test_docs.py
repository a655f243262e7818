"""The documentation: every public name is documented and in the API reference, the site builds
with warnings as errors (nitpicky cross-references), its internal links resolve, the pages
generated from the stored result files say what the files say, docstring examples run, and no
user-facing text points outside the project.

The build runs once per session (``sphinx-build -E -W -n``, notebooks not executed:
``RFCHECK_DOCS_EXECUTE=off``); it needs the ``docs`` extra (``pip install -e ".[docs]"``) and is
skipped without it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from rfcheck import docsgen

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: public names without documentation, in files whose owners were asked to document them; any
#: other undocumented public name fails :func:`test_every_public_name_is_documented`
KNOWN_UNDOCUMENTED: set[str] = set()
#: files that still point at documents outside the project (none left)
KNOWN_OUTSIDE_REFERENCES: set[str] = set()
OUTSIDE = re.compile(r"\.\./shared|shared/seeds|DESIGN\.md")


# ----------------------------------------------------------------------------- without a build


def test_every_public_name_is_documented():
    missing = set(docsgen.undocumented()) - KNOWN_UNDOCUMENTED
    assert not missing, f"public names without a docstring or #: comment: {sorted(missing)}"


def test_top_level_api():
    """``rfcheck`` exposes the main entry points in ``__all__``, each the object of its home module,
    without importing the heavy modules on ``import rfcheck``."""
    code = ("import sys, rfcheck; heavy = [m for m in ('numba', 'jax', 'rfcheck.verify', 'rfcheck.testing') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    import importlib

    import rfcheck

    assert rfcheck.__all__[0] == "__version__" and len(set(rfcheck.__all__)) == len(rfcheck.__all__)
    for name in rfcheck.__all__[1:]:
        home = importlib.import_module(rfcheck._HOMES[name])
        assert getattr(rfcheck, name) is getattr(home, name), name
        assert name in home.__all__, f"{name} is not public in {home.__name__}"
    assert {"paper", "assert_verdict", "check_estimator", "Inconclusive", "simulate", "estimate_mse"} <= set(
        rfcheck.__all__)
    assert rfcheck.features.__name__ == "rfcheck.features"  # subpackages on attribute access
    with pytest.raises(AttributeError):
        rfcheck.no_such_name  # noqa: B018


def test_no_user_facing_text_points_outside_the_project():
    files = [*ROOT.glob("*.md"), *DOCS.glob("**/*.md"), *ROOT.glob("notebooks/*.py"),
             *ROOT.glob("results/**/*.md"), *ROOT.glob("rfcheck/**/*.py")]
    files = [f for f in files if "_build" not in f.parts and not f.is_relative_to(DOCS / "results")]
    bad = {f.relative_to(ROOT).as_posix() for f in files if OUTSIDE.search(f.read_text())}
    assert bad <= KNOWN_OUTSIDE_REFERENCES, sorted(bad - KNOWN_OUTSIDE_REFERENCES)


def _doctest_modules() -> list[str]:
    return [m for m in docsgen.public_modules() if ">>>" in (Path(sys.modules.get(m).__file__).read_text()
                                                            if m in sys.modules else _source(m))]


def _source(module: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(module)
    return Path(spec.origin).read_text() if spec and spec.origin else ""


def test_docstring_examples_run():
    """Every ``>>>`` example in a public module's docstrings, in a fresh interpreter (examples may
    register papers: the registry of this test session stays untouched)."""
    mods = [m for m in docsgen.public_modules() if ">>>" in _source(m)]
    assert {"rfcheck", "rfcheck.docsgen"} <= set(mods)
    code = ("import doctest, importlib, sys\nfailed = 0\n"
            f"for name in {mods!r}:\n"
            "    r = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | "
            "doctest.NORMALIZE_WHITESPACE)\n"
            "    print(name, r.attempted, r.failed)\n    failed += r.failed\n"
            "sys.exit(1 if failed else 0)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


# ----------------------------------------------------------------------------- generated pages


def test_ledger_pages_follow_the_stored_ledger():
    ledger = docsgen.load_ledger(ROOT)
    page = docsgen.ledger_page(ledger)
    assert docsgen.headline(ledger.entries) in page
    for e in ledger.entries:
        assert f"`{e['id']}`" in page
    refuted = [e["id"] for e in ledger.entries if e["verdict"] == "REFUTED"]
    errata = docsgen.errata_page(ledger, (ROOT / "results/ledger/errata-notes.md").read_text())
    assert all(f"`{i}`" in errata for i in refuted)
    assert "## Notes on the errata" in errata


def _fake_entry(cid: str, verdict: str) -> dict:
    return {"id": cid, "paper": cid.split(".")[0], "source": "Lemma 2, eq (7)", "statement": "a | b * c_d",
            "verdict": verdict, "reason": "quadrature: 1 of 3 decided points disagree",
            "evidence": {"deciding_check": "quadrature", "checks": [
                {"name": "quadrature", "verdict": verdict, "points_tried": 3, "points_decided": 3,
                 "violations": int(verdict == "REFUTED"), "reason": "x"}],
                "worst": {"point": {"t": 0.5}, "printed": 1.5, "reference": 1.25, "err": 1e-30, "disc": 9.0}},
            "correction": "use `eq8` instead" if verdict == "REFUTED" else None, "notes": "", "needs": [],
            "reproduce": f"rfcheck verify --claim {cid}",
            "reproduce_point": f"rfcheck verify --claim {cid} --at 't=0.5'", "budget": "default", "seed": 0}


def test_a_stored_ledger_json_is_preferred_and_rendered(tmp_path):
    """Once ``results/ledger/ledger.json`` exists it is what the pages show: statements, worst points,
    corrections and reproduce commands; Markdown-special characters are escaped."""
    (tmp_path / "results" / "ledger").mkdir(parents=True)
    entries = [_fake_entry("toy.eq1", "HOLDS"), _fake_entry("toy.eq2", "REFUTED")]
    (tmp_path / "results" / "ledger" / "ledger.json").write_text(json.dumps(entries))
    ledger = docsgen.load_ledger(tmp_path)
    assert ledger.full and ledger.source == "results/ledger/ledger.json"
    assert docsgen.headline(ledger.entries) == "2 claims from 1 paper: 1 HOLDS, 1 REFUTED, 0 INCONCLUSIVE"
    page = docsgen.ledger_page(ledger)
    assert "| [`toy.eq2`](#claim-toy-eq2) | REFUTED | Lemma 2, eq (7) | quadrature |" in page
    assert "a | b * c_d" in page  # statements verbatim, in a code block
    errata = docsgen.errata_page(ledger)
    assert "toy.eq1" not in errata and "rfcheck verify --claim toy.eq2 --at 't=0.5'" in errata
    assert "**Correction:** use `eq8` instead" in errata
    with pytest.raises(FileNotFoundError):
        docsgen.load_ledger(tmp_path / "nowhere")


def test_the_run_record_is_written_and_rendered(tmp_path):
    """``rfcheck verify --report`` stores how long the run took and on what machine (``run.json``);
    ``index.md`` and the docs' ledger page show it, with the time per claim."""
    from rfcheck import report

    entries = [_fake_entry("toy.eq1", "HOLDS"), _fake_entry("toy.eq2", "REFUTED")]
    entries[0]["elapsed_s"], entries[1]["elapsed_s"] = 3.0, 9.0
    run = {"command": "rfcheck verify --all --jobs 2", "started": "2026-11-26 19:00 UTC", "wall_s": 330.0,
           "jobs": 2, "claims": 2, "cached": 0, "claim_seconds": 12.0, "machine": report.machine()}
    out = tmp_path / "results" / "ledger"
    report.write_reports(entries, out, plots=False, run=run)
    assert json.loads((out / "run.json").read_text())["wall_s"] == 330.0
    assert "**330 s** wall (5.5 min) with 2 worker process(es)" in (out / "index.md").read_text()
    m = run["machine"]
    assert m["cores"] >= 1 and m["python"].count(".") == 2 and "numpy" in m["versions"]
    page = docsgen.ledger_page(docsgen.load_ledger(tmp_path))
    assert "## How long it takes" in page and "`rfcheck verify --all --jobs 2`: 2 claims in **330 s**" in page
    assert "| `toy.eq2` | 9.0 | 75.0% |" in page


def test_benchmark_and_calibration_pages_come_from_the_files():
    from rfcheck import bench

    page = docsgen.benchmark_page(ROOT)
    assert "<!-- table:" not in page  # every table of the notes was rendered
    for folder in sorted({p.parent for p in (ROOT / "results/bench").glob("*/run*.json")}):
        runs = [json.loads(p.read_text()) for p in sorted(folder.glob("run*.json"))]
        rows = [ln for ln in bench.format_summary(bench.summarise_runs(runs)).splitlines() if ln.startswith("| ")]
        assert all(r in page for r in rows), folder.name
    cal = docsgen.calibration_page(ROOT / "results/calibrate/calibration.json")
    data = json.loads((ROOT / "results/calibrate/calibration.json").read_text())
    n_ref = sum(r["verdict"] == "REFUTED" for r in data["mutation_power"])
    assert f"Mutation power: {n_ref}/{len(data['mutation_power'])} planted errors REFUTED" in cal
    assert "No stored calibration run yet" in docsgen.calibration_page(ROOT / "no-such.json")


def test_a_pinned_series_is_the_latest_of_its_machine_not_another_machine(tmp_path):
    """Runs pinned to two of a machine's cores (``"(2 allowed to this process)"`` in their machine
    field) and runs of the whole machine are one machine: only the later series is its latest."""
    for folder, machine in (("a", "Xeon, 16 logical cores, AVX-512"),
                            ("b", "Xeon, 16 logical cores (2 allowed to this process), AVX-512"),
                            ("c", "EPYC, 2 logical cores, AVX2")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run1.json").write_text(json.dumps([{"machine": machine}]))
    assert docsgen._latest_per_machine(tmp_path, ["a", "c", "b"]) == ["b", "c"]
    assert docsgen._latest_per_machine(tmp_path, ["b", "a"]) == ["a"]


# ----------------------------------------------------------------------------- the built site


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[docs]')")
    pytest.importorskip("pydata_sphinx_theme", reason="the docs extra is not installed")
    pytest.importorskip("myst_nb", reason="the docs extra is not installed")
    out = tmp_path_factory.mktemp("html")
    env = {**os.environ, "RFCHECK_DOCS_EXECUTE": "off", "PYTHONWARNINGS": "ignore"}
    run = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "-n", "--keep-going", "-q",
                          "-b", "html", "-d", str(out / ".doctrees"), str(DOCS), str(out)],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert run.returncode == 0, f"sphinx-build -W failed:\n{run.stdout[-6000:]}\n{run.stderr[-6000:]}"
    return out


def test_site_builds_without_warnings(site):
    for page in ("index", "getting_started", "architecture", "changelog", "guide/index", "guide/ledger",
                 "guide/testing", "guide/figures", "guide/attention", "guide/montecarlo", "guide/dask",
                 "guide/papers", "results/ledger", "results/errata", "results/calibration", "results/benchmark",
                 "results/figures", "notebooks/index", "notebooks/crt", "api/index", "search", "genindex"):
        assert (site / f"{page}.html").exists(), page


def test_reference_lists_every_public_name(site):
    """Every module and every name of every public module's ``__all__`` has its entry in the
    built reference (the inventory Sphinx writes: what cross-references and search resolve)."""
    import zlib

    raw = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):  # "# Sphinx inventory version 2", project, version, "compressed using zlib"
        header_end = raw.index(b"\n", header_end) + 1
    lines = zlib.decompress(raw[header_end:]).decode().splitlines()
    documented = {m.group(1) for ln in lines if (m := re.match(r"(\S+) py:\w+ ", ln))}
    names = docsgen.public_names()
    expected = set(names) | {f"{m}.{n}" for m, ns in names.items() for n in ns}
    missing = expected - documented
    assert not missing, f"public names missing from the API reference: {sorted(missing)}"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name") if tag in ("a", "span", "div", "section", "dt", "p") or "id" in a else ():
            if a.get(key):
                self.ids.add(a[key])
        if a.get("id"):
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if tag in ("a", "img", "link", "script") and a.get(key):
                self.links.append(a[key])


def test_internal_links_resolve(site):
    """A link checker over the built site: every relative link (pages, images, stylesheets,
    scripts, downloads) points at a file that exists, and every fragment at an id on its page."""
    pages: dict[Path, _Links] = {}
    for html in site.rglob("*.html"):
        if "_static" in html.relative_to(site).parts:  # the theme's templates, not pages
            continue
        p = _Links()
        p.feed(html.read_text(errors="replace"))
        pages[html.resolve()] = p
    broken = []
    for html, parsed in pages.items():
        for link in set(parsed.links):
            u = urlsplit(link)
            if u.scheme or link.startswith("//"):
                continue
            target = (html.parent / unquote(u.path)).resolve() if u.path else html
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{html.relative_to(site)} -> {link}")
            elif u.fragment and target.suffix == ".html" and unquote(u.fragment) not in pages[target].ids:
                broken.append(f"{html.relative_to(site)} -> {link} (no such anchor)")
    assert not broken, "\n".join(sorted(broken)[:50])


def test_generated_pages_render_the_stored_files(site):
    ledger = docsgen.load_ledger(ROOT)
    text = (site / "results" / "ledger.html").read_text()
    assert docsgen.headline(ledger.entries) in text
    assert sum(e["verdict"] == "REFUTED" for e in ledger.entries) <= text.count("REFUTED")
    figures = (site / "results" / "figures.html").read_text()
    for png in (ROOT / "figures").glob("*.png"):
        assert png.name in figures, png.name


def _guide_snippets() -> list[tuple[str, str]]:
    out = []
    own = ("index", "getting_started", "architecture", "guide/ledger", "guide/testing", "guide/figures",
           "guide/attention", "guide/montecarlo", "guide/dask", "guide/papers")  # (others' pages test their own)
    for md in [DOCS / f"{p}.md" for p in own]:
        for i, code in enumerate(re.findall(r"^```python\n(.*?)^```", md.read_text(), re.S | re.M)):
            if "tcp://" not in code:  # needs a running Dask scheduler
                out.append((f"{md.relative_to(DOCS).as_posix()}[{i}]", code))
    return out


@pytest.mark.mc
@pytest.mark.parametrize("code", [c for _, c in _guide_snippets()], ids=[n for n, _ in _guide_snippets()])
def test_guide_snippets_run(code, capsys):
    """The Python examples of the hand-written pages run as written (and the test functions they
    define pass)."""
    if "jax" in code:
        pytest.importorskip("jax")
    ns: dict = {"__name__": "__docs__"}
    exec(compile(code, "docs", "exec"), ns)
    for name, fn in list(ns.items()):
        if name.startswith("test_") and callable(fn):
            fn()


# ----------------------------------------------------------------------------- attention-scale page


def _row(page: str, prefix: str) -> list[str]:
    """The cells of the first table row of ``page`` starting with ``prefix``."""
    rows = [ln for ln in page.splitlines() if ln.startswith(prefix)]
    assert rows, f"no row {prefix!r}"
    return [c.strip() for c in rows[0].strip().strip("|").split(" | ")]


def _close(shown: str, value: float) -> bool:
    """``shown`` is ``value`` rounded for the page (3-4 significant digits)."""
    return abs(float(shown) - value) <= 0.005 * max(1.0, abs(value)) + 0.005


def _section(page: str, rel: str) -> str:
    """The part of ``page`` from the ``###`` heading of ``rel`` to the next heading."""
    start = page.index(f"### `{rel}`")
    nxt = [i for i in (page.find("\n### ", start + 1), page.find("\n## ", start + 1)) if i > 0]
    return page[start:min(nxt) if nxt else len(page)]


def test_attention_scale_page_renders_the_mse_files():
    page = docsgen.attention_scale_page(ROOT)
    assert "## Missing files" not in page
    for rel in docsgen.ATTENTION_SCALE_FILES["mse"]:
        sec = _section(page, rel)
        studies = json.loads((ROOT / rel).read_text())
        c0 = studies[0]["config"]
        assert f"--len {c0['L']} " in sec and f"--draws {c0['R_requested']} " in sec and f"--json {rel}`" in sec
        for st in studies:
            c = st["config"]
            cells = _row(sec, f"| {c['L']} | {c['M']} | {c['R']} |")
            by = {e["id"].rsplit(".M", 1)[0]: e for e in st["entries"]}
            n_holds = sum(e["verdict"] == "HOLDS" for e in st["entries"])
            assert cells[3].startswith(f"{n_holds} HOLDS")
            eq = max(abs(e["z"]) for e in st["entries"] if e["kind"] == "equality")
            assert _close(cells[4], eq)
            assert _close(cells[5], by["attention.order.prf-simrf<=prf-orf"]["z"])
            orf = cells[6].split(" / ")
            assert _close(orf[0], by["attention.order.prf-orf<=prf-iid"]["z"])
            assert _close(orf[1], by["attention.order.oprf-orf<=oprf-iid"]["z"])
            oprf = cells[7].split(" / ")
            assert _close(oprf[0], by["attention.order.oprf-iid<=prf-iid"]["z"])
            assert _close(oprf[1], by["attention.order.oprf-orf<=prf-orf"]["z"])
            lo, hi = cells[8].rstrip("%").split("-")
            rse = [100 * v["rel_se"] for v in st["variants"].values()]
            assert abs(float(lo) - min(rse)) <= 0.006 and abs(float(hi) - max(rse)) <= 0.006
    assert "NVIDIA H200" in _section(page, "results/attention-scale/gpu-h200/mse-L16384.json")
    for rel in docsgen.ATTENTION_SCALE_FILES["darkformer"]:
        sec = _section(page, rel)
        for st in json.loads((ROOT / rel).read_text()):
            c = st["config"]
            for e in st["entries"]:
                name = e["id"].removeprefix("attention.").rsplit(".M", 1)[0]
                cells = _row(sec, f"| {c['L']} | {c['M']} | {c['R']} | `{name}` |")
                assert cells[4] == e["verdict"] and _close(cells[5], e["z"])


def test_attention_scale_page_renders_the_maxrel_files():
    page = docsgen.attention_scale_page(ROOT)
    for rel in docsgen.ATTENTION_SCALE_FILES["maxrel"]:
        sec = _section(page, rel)
        studies = json.loads((ROOT / rel).read_text())
        assert f"--draws {studies[0]['config']['R']} " in sec
        for st in studies:
            c, ex = st["config"], st["exact"]
            cells = _row(sec, f"| {c['r']:g} | {c['L']} | {c['R']} |")
            for i, m in ((3, "trig"), (4, "pos"), (5, "hybrid")):
                assert abs(float(cells[i]) / ex[m]["eps_max"] - 1) < 1e-3, (rel, c["r"], m)
            assert _close(cells[6], ex["hybrid"]["eps_max"] / min(ex["trig"]["eps_max"], ex["pos"]["eps_max"]))
            by = {e["id"]: e for e in st["entries"]}
            for i, test in ((7, "attention.maxrel.hybrid<=trig"), (8, "attention.maxrel.hybrid<=pos")):
                verdict, z = re.match(r"(\w+) \(z = (\S+?)[;)]", cells[i]).groups()
                assert verdict == by[test]["verdict"] and _close(z, by[test]["z"])


def test_attention_scale_page_renders_the_gpu_timings():
    page = docsgen.attention_scale_page(ROOT)
    sec = page[page.index("(attention-scale-precision)="):]
    times = sec[sec.index("Times in milliseconds"):sec.index("Peak memory in MiB")]
    assert "each cell `highest` / `default`" in times
    col = {("exact", False, "scan"): 1, ("exact", True, "scan"): 2, ("favor+", False, "scan"): 3,
           ("favor+", True, "scan"): 4, ("favor+", True, "chunked"): 5}
    folder = ROOT / "results/attention-scale/gpu-h200"
    data = json.loads((folder / "bench-precision-default.json").read_text())
    for e in data["entries"]:
        shown = _row(times, f"| {e['L']} |")[col[(e["method"], e["causal"], e["impl"])]].split(" / ")[1]
        assert shown == "skipped" if e["seconds"] is None else _close(shown, 1e3 * e["seconds"]), e
    n = 0
    for ln in (folder / "bench-precision-highest.log").read_text().splitlines()[1:]:
        parts = ln.split()
        if not parts:
            continue
        causal, chunked = "causal" in parts, "chunked" in parts
        length, t = int(parts[1 + causal + chunked]), parts[2 + causal + chunked]
        method = (parts[0], causal, "chunked" if chunked else "scan")
        shown = _row(times, f"| {length} |")[col[method]].split(" / ")[0]
        assert shown == "skipped" if t == "-" else _close(shown, 1e3 * float(t)), ln
        n += 1
    assert n > 30
    assert "NVIDIA H200" in sec and "--exact-mem 4e+10" in sec


def test_attention_scale_page_says_what_is_missing(tmp_path):
    page = docsgen.attention_scale_page(tmp_path)  # nothing stored
    assert "## Missing files" in page
    for files in docsgen.ATTENTION_SCALE_FILES.values():
        for rel in files:
            assert f"- `{rel}`" in page
    assert "No stored file: `python -m rfcheck.attention.mse --json PATH` writes one." in page
    base = tmp_path / "results" / "attention-scale"
    base.mkdir(parents=True)
    (base / "L1024.json").write_text((ROOT / "results/attention-scale/L1024.json").read_text())
    (base / "maxrel-L256.json").write_text("[{")  # a truncated file
    page = docsgen.attention_scale_page(tmp_path)
    study = json.loads((base / "L1024.json").read_text())[0]
    assert f"| 1024 | {study['config']['M']} | {study['config']['R']} |" in page
    assert "- `results/attention-scale/L1024.json`" not in page and "- `results/attention-scale/L4096.json`" in page
    assert "The file `results/attention-scale/maxrel-L256.json` is unreadable" in page
    missing = docsgen.attention_mse_table(base / "L4096.json", tmp_path)
    assert "The file `results/attention-scale/L4096.json` is missing" in missing
    assert "No stored `bench-precision-*` file" in docsgen.attention_precision_table(base, tmp_path)


def test_generate_writes_the_attention_scale_page(tmp_path):
    written = docsgen.generate(tmp_path, ROOT, api=False)
    page = tmp_path / "results" / "attention-scale.md"
    assert page in written and page.read_text() == docsgen.attention_scale_page(ROOT)
    assert "attention-scale" in (tmp_path / "results" / "index.md").read_text().split("```{toctree}")[1]
    guide = (DOCS / "guide" / "attention.md").read_text()
    assert not re.search(r"^\| *-+", guide, re.M), "the attention guide holds a hand-written table again"
    for label in re.findall(r"\{ref\}`(attention-scale[^`]*)`", guide):
        assert f"({label})=" in page.read_text(), label


def test_attention_scale_page_is_built(site):
    assert (site / "results" / "attention-scale.html").exists()
    assert "attention-scale.html#attention-scale-mse" in (site / "guide" / "attention.html").read_text()

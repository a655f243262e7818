"""Documentation pages generated from the stored result files, and the API reference.

The Sphinx configuration (``docs/conf.py``) calls :func:`generate` at the start of every build,
so the result pages are never written by hand: they are rendered from the files that the
commands computing them wrote,

* ``results/ledger/ledger.json`` -- ``rfcheck verify --all --report results/ledger`` (the ledger
  and errata pages; until that file exists, the ledger table last written into README.md,
  ``results/ledger/readme-ledger-*.md``), with ``results/ledger/errata-notes.md`` (commentary);
* ``results/calibrate/calibration.json`` -- ``rfcheck calibrate --json PATH``;
* ``results/bench/<folder>/run*.json`` -- ``rfcheck bench --json PATH`` (one folder per series
  of runs), with the lab notes ``results/bench/NOTES.md``, and
  ``results/attention-scale/**/bench*.json`` -- ``rfcheck bench attention --json PATH``;
* ``results/attention-scale/**`` -- ``python -m rfcheck.attention.mse --json PATH``,
  ``python -m rfcheck.attention.maxrel --json PATH`` and ``rfcheck bench attention --json PATH`` (the
  attention-scale page, :func:`attention_scale_page`);
* ``figures/*.png`` -- ``rfcheck plot NAME`` (the gallery, captions from :data:`rfcheck.plots.CAPTIONS`);

and the API reference lists every name of the ``__all__`` of every public module
(:func:`public_names`), one page per name.

Examples
--------
>>> from rfcheck import docsgen
>>> "rfcheck.engine.montecarlo" in docsgen.public_modules()
True
>>> entries = [{"id": "p.eq1", "paper": "p", "verdict": "HOLDS"},
...            {"id": "p.eq2", "paper": "p", "verdict": "REFUTED"}]
>>> docsgen.headline(entries)
'2 claims from 1 paper: 1 HOLDS, 1 REFUTED, 0 INCONCLUSIVE'
"""

from __future__ import annotations

import ast
import glob
import importlib
import inspect
import json
import math
import pkgutil
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rfcheck.report import columns as _columns
from rfcheck.report import format_value as _fmt
from rfcheck.report import headline

__all__ = [
    "ATTENTION_SCALE_FILES",
    "ROOT",
    "StoredLedger",
    "api_pages",
    "attention_mse_table",
    "attention_precision_table",
    "attention_scale_page",
    "benchmark_page",
    "calibration_page",
    "claim_code_page",
    "claim_code_stats",
    "errata_page",
    "figures_page",
    "generate",
    "headline",
    "ledger_page",
    "load_ledger",
    "maxrel_table",
    "public_modules",
    "public_names",
    "undocumented",
]

#: the project's root folder (the parent of the ``rfcheck`` package): where ``results/`` and
#: ``figures/`` are looked for by default
ROOT = Path(__file__).resolve().parent.parent


_NUMBERED_PAPER = re.compile(r"^\d{3} ")


# --------------------------------------------------------------------------- public API


def public_modules() -> list[str]:
    """Every public module of the package, sorted: ``rfcheck`` and each module or subpackage below
    it none of whose dotted parts starts with ``_`` (``rfcheck.__main__`` is not one), less the
    deprecated paths of moved modules (``rfcheck.montecarlo``, ``rfcheck.hybrid``, ...: importing
    one warns).

    Returns
    -------
    list of str
        Dotted module names, sorted (found without importing the modules, only the packages).

    Examples
    --------
    >>> mods = public_modules()
    >>> "rfcheck.estimators.hrf" in mods, "rfcheck.hybrid" in mods
    (True, False)
    """
    import rfcheck
    from rfcheck.engine import _MOVED as _ENGINE_MOVED
    from rfcheck.estimators import _MOVED as _ESTIMATORS_MOVED

    moved = {**_ENGINE_MOVED, **_ESTIMATORS_MOVED}

    names = ["rfcheck"]
    for info in pkgutil.walk_packages(rfcheck.__path__, "rfcheck."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]) and info.name not in moved:
            names.append(info.name)
    return sorted(names)


def public_names() -> dict[str, list[str]]:
    """``{module: its __all__}`` for every module of :func:`public_modules` (an empty list for a
    module without ``__all__``: it exports nothing, its page shows the module docstring).

    Returns
    -------
    dict of str to list of str
        ``module -> its __all__``, for every public module (each one imported).

    Raises
    ------
    ImportError
        Where a public module cannot be imported (an optional extra missing: install
        ``rfcheck[docs]``, which includes them).
    """
    out = {}
    for name in public_modules():
        mod = importlib.import_module(name)
        out[name] = list(getattr(mod, "__all__", None) or [])
    return out


def _attr_doc(module: str, name: str) -> str:
    """The ``#:`` comment or string literal documenting a module-level assignment, if any."""
    from sphinx.pycode import ModuleAnalyzer

    try:
        docs = ModuleAnalyzer.for_module(module).find_attr_docs()
    except Exception:  # no source (a C module) or a parse error
        return ""
    return "\n".join(docs.get(("", name), [])).strip()


def _is_data(obj: Any) -> bool:
    if getattr(obj, "__origin__", None) is not None:  # a typing alias (``Callable[...]``): a constant
        return True
    return not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)
                or (callable(obj) and type(obj).__doc__ != obj.__doc__))


def undocumented(names: dict[str, list[str]] | None = None) -> list[str]:
    """The public names (``module.name``) that have no documentation: a public module without a
    docstring, a function or class without a docstring, a constant without a ``#:`` comment or a
    docstring after its assignment (in the exporting module or the one defining it), or a name of
    ``__all__`` the module does not define.

    Parameters
    ----------
    names : dict of str to list of str, optional
        ``module -> exported names`` to check (default: :func:`public_names`).

    Returns
    -------
    list of str
        The undocumented ``module`` or ``module.name`` entries (empty when everything is documented).

    Examples
    --------
    >>> undocumented({"rfcheck.stats": ["estimate_mse", "no_such_name"]})
    ['rfcheck.stats.no_such_name']
    """
    names = public_names() if names is None else names
    bad = []
    for mod_name, exported in names.items():
        mod = importlib.import_module(mod_name)
        if not (mod.__doc__ or "").strip():
            bad.append(mod_name)
        for n in exported:
            if not hasattr(mod, n):
                bad.append(f"{mod_name}.{n}")
                continue
            obj = getattr(mod, n)
            if _is_data(obj):
                owners = [mod_name] + [m for m in (getattr(obj, "__module__", None),) if isinstance(m, str)]
                if not any(_attr_doc(m, n) for m in owners):
                    bad.append(f"{mod_name}.{n}")
            elif not (inspect.getdoc(obj) or "").strip():
                bad.append(f"{mod_name}.{n}")
    return bad


def _title(text: str, char: str = "=") -> str:
    return f"{text}\n{char * len(text)}\n"


def api_pages(out_dir: str | Path, names: dict[str, list[str]] | None = None) -> list[Path]:
    """Write the API reference sources into ``out_dir``: ``index.rst`` (every public module, with its
    summary line) and one ``<module>.rst`` per module -- the module docstring and an autosummary
    table of its ``__all__``, whose ``:toctree:`` makes Sphinx write one page per name under
    ``out_dir/generated``.  Returns the files written (stale module pages are removed).

    Parameters
    ----------
    out_dir : str or pathlib.Path
        The folder of the API reference sources (``docs/api``); created if missing.
    names : dict of str to list of str, optional
        ``module -> exported names`` (default: :func:`public_names`).

    Returns
    -------
    list of pathlib.Path
        One ``<module>.rst`` per module, then ``index.rst`` (files whose text did not change are
        listed but not rewritten).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [f.name for f in api_pages(tmp, {"rfcheck.stats": ["estimate_mse"]})]
    ['rfcheck.stats.rst', 'index.rst']
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = public_names() if names is None else names
    written = []
    keep = {f"{m}.rst" for m in names} | {"index.rst"}
    for p in out.glob("*.rst"):
        if p.name not in keep:
            p.unlink()
    for mod_name, exported in names.items():
        lines = [_title(mod_name), f".. automodule:: {mod_name}", "   :no-members:", "",
                 f".. currentmodule:: {mod_name}", ""]
        if exported:
            lines += [_title("Public names", "-"), ".. autosummary::", "   :toctree: generated",
                      "   :nosignatures:", ""]
            lines += [f"   {n}" for n in exported]
        else:
            lines += ["This module exports no names (its ``__all__`` is empty); it is loaded for its effect "
                      "or used through the functions that read it.", ""]
        p = out / f"{mod_name}.rst"
        _write_if_changed(p, "\n".join(lines) + "\n")
        written.append(p)
    rows = []
    for mod_name in names:
        mod = importlib.import_module(mod_name)
        summary = _rst_summary(" ".join((mod.__doc__ or "").strip().split("\n\n")[0].split()))
        rows.append(f"   * - :mod:`{mod_name}`\n     - {summary}")
    index = [_title("API reference"),
             "Every public name of rfcheck: each module's ``__all__``, one page per name.  The main entry",
             "points are also importable from :mod:`rfcheck` itself.  ``tests/test_docs.py`` fails when a",
             "public name is missing here or has no documentation.", "",
             ".. list-table::", "   :header-rows: 1", "   :widths: 30 70", "",
             "   * - module", "     - what it holds", *rows, "",
             ".. toctree::", "   :hidden:", "", *[f"   {m}" for m in names], ""]
    p = out / "index.rst"
    _write_if_changed(p, "\n".join(index))
    written.append(p)
    # stubs autosummary wrote for names that are no longer public would be orphan pages
    current = {f"{m}.{n}".lower() for m, ns in names.items() for n in ns}
    for stub in (out / "generated").glob("*.rst"):
        if stub.stem.lower().removesuffix("-lower").removesuffix("-upper") not in current:
            stub.unlink()
    return written


def _rst_summary(s: str) -> str:
    """A docstring's first paragraph for a table outside its module: cross-reference roles become
    code (``:func:`~a.b``` -> ````b````) and ``|`` outside code is escaped."""
    s = re.sub(r":[a-z]+:`~([^`]*?)([^.`]+)`", r"``\2``", s)
    s = re.sub(r":[a-z]+:`([^`]+)`", r"``\1``", s)
    parts = re.split(r"(``.+?``)", s)
    return "".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(parts))


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (Sphinx then keeps its cached pages)."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


# --------------------------------------------------------------------------- the ledger


@dataclass
class StoredLedger:
    """A stored ledger: the entries, where they came from and the command that produced them.

    Parameters
    ----------
    entries : list of dict
        One dict per claim (see the attribute below).
    source : str
        The file read, relative to the project root.
    full : bool
        True for ``ledger.json`` entries, False for the Markdown table.
    command : str
        The ``rfcheck verify`` command that produced it.
    papers : dict of str to str, optional
        Paper id to title.
    run : dict, optional
        ``results/ledger/run.json``, where it exists.
    """

    #: one dict per claim: the keys of ``ledger.json`` (``id``, ``paper``, ``verdict``, ...), or for
    #: the Markdown table only ``id``, ``paper``, ``verdict`` and ``deciding_check``
    entries: list[dict[str, Any]]
    #: the file read, relative to the project root
    source: str
    #: True for ``ledger.json`` entries (statements, evidence, corrections), False for the table
    full: bool
    #: the ``rfcheck verify`` command that produced it
    command: str
    #: titles of the papers (``crt`` -> "Chefs' Random Tables (...)")
    papers: dict[str, str] = field(default_factory=dict)
    #: ``results/ledger/run.json`` where it exists: how long the run took and on what machine
    run: dict[str, Any] | None = None


def _paper_titles(entries: list[dict[str, Any]]) -> dict[str, str]:
    try:
        from rfcheck.claims import PAPERS
    except Exception:  # pragma: no cover - the claims package always imports
        PAPERS = {}
    out = {}
    for paper in sorted({e["paper"] for e in entries}):
        out[paper] = _NUMBERED_PAPER.sub("", PAPERS.get(paper, paper))
    return out


def load_ledger(root: str | Path = ROOT) -> StoredLedger:
    """The stored ledger of the project at ``root``: ``results/ledger/ledger.json`` if it exists,
    else the newest ``results/ledger/readme-ledger-*.md`` (the table ``rfcheck verify --all
    --update-readme`` wrote into README.md before the ledger moved to result files).

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The project root (default: this checkout's).

    Returns
    -------
    StoredLedger
        The entries, their source file, whether they are full ``ledger.json`` entries, the command
        (from ``run.json`` where it exists), the paper titles and ``run.json`` itself.

    Raises
    ------
    FileNotFoundError
        Where neither exists.
    ValueError
        Where the newest Markdown ledger holds no ledger table.

    Examples
    --------
    >>> led = load_ledger()
    >>> led.source, led.full, len(led.entries) > 200
    ('results/ledger/ledger.json', True, True)
    """
    root = Path(root)
    js = root / "results" / "ledger" / "ledger.json"
    if js.exists():
        entries = json.loads(js.read_text())
        budgets = sorted({str(e.get("budget")) for e in entries if e.get("budget")})
        seeds = sorted({str(e.get("seed")) for e in entries if e.get("seed") is not None})
        cmd = "rfcheck verify --all --report results/ledger"
        if budgets == ["default"] or not budgets:
            cmd = "rfcheck verify --all --report results/ledger"
        else:
            cmd += " --budget " + "/".join(budgets)
        if seeds and seeds != ["0"]:
            cmd += " --seed " + "/".join(seeds)
        rj = js.with_name("run.json")
        run = json.loads(rj.read_text()) if rj.exists() else None
        if run and run.get("command"):
            cmd = run["command"]
        return StoredLedger(entries, js.relative_to(root).as_posix(), True, cmd, _paper_titles(entries), run)
    mds = sorted((root / "results" / "ledger").glob("readme-ledger-*.md"))
    if not mds:
        raise FileNotFoundError(f"no stored ledger: neither {js} nor results/ledger/readme-ledger-*.md")
    md = mds[-1]
    text = md.read_text()
    m = re.search(r"Produced by `([^`]+)`", text)
    entries = []
    for row in re.finditer(r"^\| `([^`]+)` \| (HOLDS|REFUTED|INCONCLUSIVE|MIXED|ERROR) \| ([^|]*) \|$", text, re.M):
        cid, verdict, deciding = row.group(1), row.group(2), row.group(3).strip()
        entries.append({"id": cid, "paper": cid.split(".")[0], "verdict": verdict, "deciding_check": deciding})
    if not entries:
        raise ValueError(f"{md} has no ledger table")
    return StoredLedger(entries, md.relative_to(root).as_posix(), False,
                        m.group(1) if m else "rfcheck verify --all", _paper_titles(entries))


_MD_SPECIAL = re.compile(r"([\\*_\[\]<>$|#~])")


def _text(s: Any) -> str:
    """Plain text for a Markdown page: Markdown's special characters escaped, code spans kept
    (where the backticks pair up), line breaks folded."""
    s = re.sub(r"``(.+?)``", r"`\1`", " ".join(str(s or "").split()))  # reST literals as Markdown code
    parts = s.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: escape everything
        return _MD_SPECIAL.sub(r"\\\1", s).replace("`", "\\`")
    return "".join(_code(p) if i % 2 else _MD_SPECIAL.sub(r"\\\1", p) for i, p in enumerate(parts))


def _code(s: Any) -> str:
    """An inline code span holding ``s`` (any backticks inside fenced by longer runs; ``|`` escaped
    for tables)."""
    s = " ".join(str(s).split()).replace("|", "\\|")
    fence = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _fenced(text: Any, lang: str = "text") -> list[str]:
    """A fenced code block holding ``text`` verbatim (the fence longer than any backtick run in it)."""
    s = str(text or "").strip()
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
    return [f"{fence}{lang}", s, fence]


def _worst(w: dict[str, Any]) -> tuple[str, str, str, str, str, str]:
    """A worst point's parts for a page: the point, the two values' names, the two values and the error bar."""
    pt = ", ".join(f"{k}={_fmt(v)}" for k, v in (w.get("point") or {}).items() if not str(k).startswith("_"))
    first, second = w.get("labels") or ("printed", "reference")
    return pt, first, second, _fmt(w.get("printed")), _fmt(w.get("reference")), _fmt(w.get("err"))


def _label(cid: str) -> str:
    return "claim-" + re.sub(r"[^a-z0-9]+", "-", cid.lower()).strip("-")


def _summary_table(entries: list[dict[str, Any]]) -> list[str]:
    cols = _columns(entries)
    lines = ["| paper | claims | " + " | ".join(cols) + " |", "| --- | ---: |" + " ---: |" * len(cols)]
    tot: Counter[str] = Counter()
    for paper in sorted({e["paper"] for e in entries}):
        c = Counter(e["verdict"] for e in entries if e["paper"] == paper)
        tot.update(c)
        lines.append(f"| {paper} | {sum(c.values())} | " + " | ".join(str(c.get(v, 0)) for v in cols) + " |")
    lines.append(f"| **all** | {sum(tot.values())} | " + " | ".join(str(tot.get(v, 0)) for v in cols) + " |")
    return lines


def _deciding(e: dict[str, Any]) -> str:
    return str(e.get("deciding_check") or (e.get("evidence") or {}).get("deciding_check") or "")


def _provenance(ledger: StoredLedger) -> list[str]:
    if ledger.full:
        return [f"Rendered from `{ledger.source}`, written by `{ledger.command}`."]
    return [f"Rendered from `{ledger.source}`: the ledger table that `{ledger.command} --update-readme` "
            "last wrote into README.md.  Once `rfcheck verify --all --report results/ledger` has stored "
            "`results/ledger/ledger.json`, this page shows each claim's statement, evidence and "
            "reproduce command from that file."]


def ledger_page(ledger: StoredLedger) -> str:
    """The ledger page (MyST Markdown): the headline, counts per paper and verdict, and one table per
    paper (claim, verdict, deciding reference; with ``ledger.json`` also the source and the
    reason, and a detail entry per claim: statement, worst point, checks, reproduce command).

    Parameters
    ----------
    ledger : StoredLedger
        The stored ledger (:func:`load_ledger`).

    Returns
    -------
    str
        The page's MyST Markdown (label ``ledger``).
    """
    es = ledger.entries
    out = ["(ledger)=", "# The ledger", "", f"**{headline(es)}.**", "", *_provenance(ledger), "",
           "A verdict is HOLDS, REFUTED (with a reproducible counterexample) or INCONCLUSIVE; "
           "{doc}`/guide/ledger` says how each is reached and how to rerun any of them, and "
           "{ref}`errata` lists the REFUTED claims with their corrections.", "",
           *_summary_table(es), ""]
    from rfcheck.report import certified_markdown

    if certified_markdown(es):
        out += [certified_markdown(es), ""]
    if ledger.run:
        from rfcheck.report import run_markdown, timing_markdown

        out += ["## How long it takes", "", "From `results/ledger/run.json`, written by the run itself: ",
                run_markdown(ledger.run), "", timing_markdown(es), ""]
    for paper, title in ledger.papers.items():
        pe = [e for e in es if e["paper"] == paper]
        out += [f"## {_text(title)} (`{paper}`)", ""]
        if ledger.full:
            out += ["| claim | verdict | source | deciding reference | reason |", "| --- | --- | --- | --- | --- |"]
            out += [f"| [{_code(e['id'])}](#{_label(e['id'])}) | {e['verdict']} | {_text(e.get('source'))} | "
                    f"{_text(_deciding(e))} | {_text(e.get('reason'))} |" for e in pe]
        else:
            out += ["| claim | verdict | deciding reference |", "| --- | --- | --- |"]
            out += [f"| {_code(e['id'])} | {e['verdict']} | {_text(_deciding(e))} |" for e in pe]
        out.append("")
    if ledger.full:
        out += ["## Every claim", ""]
        for e in es:
            out += _entry(e, heading="###")
    return "\n".join(out) + "\n"


def _entry(e: dict[str, Any], heading: str) -> list[str]:
    ev = e.get("evidence") or {}
    w = ev.get("worst") or {}
    lines = [f"({_label(e['id'])})=", f"{heading} {_code(e['id'])} {e['verdict']}", "",
             f"**Source:** {_text(e.get('source'))}", "", "**Statement (as printed):**", "",
             *_fenced(e.get("statement", "")), "", f"**Reason:** {_text(e.get('reason'))}", ""]
    if w:
        pt, first, second, pv, rv, err = _worst(w)
        lines += [f"**Worst point** ({_text(ev.get('deciding_check'))}): {_code(pt)}: {first} = "
                  f"{_code(pv)}, {second} = {_code(rv)} ± {_code(err)}, "
                  f"discrepancy {_code(_fmt(w.get('disc')))} x tolerance", ""]
    checks = ev.get("checks") or []
    if checks:
        lines += ["| check | verdict | points | decided | violations | reason |",
                  "| --- | --- | ---: | ---: | ---: | --- |"]
        lines += [f"| {_text(c.get('name'))} | {c.get('verdict')} | {c.get('points_tried')} | "
                  f"{c.get('points_decided')} | {c.get('violations')} | {_text(c.get('reason'))} |" for c in checks]
        lines.append("")
    if e.get("correction"):
        lines += [f"**Correction:** {_text(e['correction'])}", ""]
    if e.get("notes"):
        lines += [f"**Notes:** {_text(e['notes'])}", ""]
    if e.get("needs"):
        lines += ["**Not run:** checks needing " + ", ".join(f"`rfcheck[{x}]`" for x in e["needs"]), ""]
    rep = [c for c in (e.get("reproduce"), e.get("reproduce_point")) if c]
    if rep:
        lines += ["```bash", *rep, "```", ""]
    return lines


def _demote(md: str, levels: int = 1) -> str:
    """A notes file for a page: its title and the paragraph under it (which describes the file
    itself) dropped, the other headings ``levels`` deeper."""
    body = md.strip()
    if body.startswith("# "):
        parts = body.split("\n\n", 2)
        body = parts[2] if len(parts) > 2 else ""
    out = []
    for ln in body.splitlines():
        if re.match(r"^#{1,5} ", ln):
            ln = "#" * levels + ln
        out.append(ln)
    return "\n".join(out).strip()


def errata_page(ledger: StoredLedger, notes: str | None = None) -> str:
    """The errata page: every REFUTED claim of the stored ledger per paper (with ``ledger.json``
    the statement as printed, the counterexample, the correction and the reproduce commands),
    then the commentary ``notes`` (``results/ledger/errata-notes.md``).

    Parameters
    ----------
    ledger : StoredLedger
        The stored ledger (:func:`load_ledger`).
    notes : str, optional
        The commentary appended after the lists (Markdown).

    Returns
    -------
    str
        The page's MyST Markdown (label ``errata``).
    """
    es = ledger.entries
    refuted = [e for e in es if e["verdict"] in ("REFUTED", "MIXED")]
    n_mixed = sum(e["verdict"] == "MIXED" for e in refuted)
    out = ["(errata)=", "# Errata", "",
           f"{len(refuted) - n_mixed} of the {len(es)} registered claims are REFUTED: the printed statement "
           "disagrees with an independent reference beyond its error bars, at a point anyone can rerun"
           + (f"; {n_mixed} more are MIXED (refuted under one reading of ambiguous notation, holding under "
              "another)" if n_mixed else "") + ".  The library's closed forms carry the corrected results.", "",
           *_provenance(ledger), ""]
    for paper, title in ledger.papers.items():
        pr = [e for e in refuted if e["paper"] == paper]
        if not pr:
            continue
        out += [f"## {_text(title)}", ""]
        if ledger.full:
            for e in pr:
                out += _errata_entry(e)
        else:
            out += [f"- {_code(e['id'])} (deciding reference: {_text(_deciding(e))})" for e in pr]
            out.append("")
    if notes:
        out += ["## Notes on the errata", "", "From `results/ledger/errata-notes.md`.", "", _demote(notes, 1), ""]
    return "\n".join(out) + "\n"


def _errata_entry(e: dict[str, Any]) -> list[str]:
    ev = e.get("evidence") or {}
    w = ev.get("worst") or {}
    mixed = " (MIXED)" if e.get("verdict") == "MIXED" else ""
    lines = [f"### {_code(e['id'])}{mixed}: {_text(e.get('source'))}", "", *_fenced(e.get("statement", "")), ""]
    if w:
        pt, first, second, pv, rv, err = _worst(w)
        lines += [f"Counterexample ({_text(ev.get('deciding_check'))}) at {_code(pt)}: {first} "
                  f"{_code(pv)}, {second} {_code(rv)} ± {_code(err)}.", ""]
    cert = e.get("certified") or {}
    if cert:
        why = _text(cert.get("why_not") or "no ball evaluation")
        lines += ["**Certified:** yes -- Arb balls decide it (disjoint balls of the two sides; "
                  f"{cert.get('points', 0)} of {cert.get('decided', 0)} decided points certified)."
                  if cert.get("verdict") else f"**Certified:** no -- {why}.", ""]
    if e.get("verdict") == "MIXED":
        lines += [f"**Readings:** {_text(e.get('reason'))}", ""]
    if e.get("correction"):
        lines += [f"**Correction:** {_text(e['correction'])}", ""]
    if e.get("reproduce_point"):
        lines += ["```bash", e["reproduce_point"], "```", ""]
    return lines


# --------------------------------------------------------------------------- calibration


def calibration_page(path: str | Path | None, notes: str | None = None) -> str:
    """The calibration page from a stored ``rfcheck calibrate --json PATH`` file (the false-alarm and
    mutation-power tables, :func:`rfcheck.calibrate.format_tables`), followed by ``notes``.

    Parameters
    ----------
    path : str or pathlib.Path or None
        The stored calibration JSON; None (or a missing file) renders the page without tables.
    notes : str, optional
        The lab notes appended (Markdown).

    Returns
    -------
    str
        The page's MyST Markdown (label ``calibration``).
    """
    out = ["(calibration)=", "# Calibration and power", "",
           "`rfcheck calibrate` measures the verification machinery itself: how often a Monte Carlo "
           "check REFUTES a claim known to hold (false alarms, at a calibration level where the rate "
           "is measurable), and whether errors of the kinds papers contain, planted into true "
           "formulas, are REFUTED (power).", ""]
    if path is not None and Path(path).exists():
        from rfcheck.calibrate import format_tables

        data = json.loads(Path(path).read_text())
        rel = _rel(path)
        out += [f"Rendered from `{rel}`, written by `rfcheck calibrate --json {rel}`"
                + ("" if data.get("complete", True) else " (an incomplete run: the rows it reached)") + ".", ""]
        text = format_tables(data.get("false_alarms", []), data.get("mutation_power", []))
        out += [_plain_to_md(text), ""]
    else:
        out += ["No stored calibration run yet: `rfcheck calibrate --json results/calibrate/calibration.json` "
                "writes one.", ""]
    if notes:
        out += ["## Notes", "", _demote(notes), ""]
    return "\n".join(out) + "\n"


def _plain_to_md(text: str) -> str:
    """A command's plain output as Markdown: its tables in non-wrapping blocks, other lines kept as
    paragraphs."""
    out: list[str] = []
    in_table = False
    for ln in text.splitlines():
        is_row = ln.startswith("|")
        if is_row and not in_table:
            out += ["", ":::{div} rf-nowrap"]
        elif in_table and not is_row:
            out += [":::", ""]
        in_table = is_row
        out.append(ln)
    if in_table:
        out.append(":::")
    return "\n".join(out)


def _rel(path: str | Path, root: Path = ROOT) -> str:
    p = Path(path).resolve()
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


# --------------------------------------------------------------------------- benchmark

_TABLE = re.compile(r"^<!-- table: rfcheck bench --summarise (\S+)/run\*\.json -->$", re.M)


def _bench_summary(folder: Path) -> tuple[str, dict]:
    from rfcheck import bench

    runs = [json.loads(p.read_text()) for p in sorted(folder.glob("run*.json"))]
    sm = bench.summarise_runs(runs)
    return bench.format_summary(sm), sm


def _latest_per_machine(bdir: Path, ordered: list[str]) -> list[str]:
    """Of the series folders ``ordered`` (oldest first, as the lab notes list them), the latest of
    each machine (the machines their runs record; a run pinned to some of the machine's cores,
    ``"(k allowed to this process)"``, counts as that machine), the most recent first."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for f in reversed(ordered):
        runs = [json.loads(p.read_text()) for p in sorted((bdir / f).glob("run*.json"))]
        machine = tuple(sorted({re.sub(r" \(\d+ allowed to this process\)", "", str(e.get("machine", "")))
                                for run in runs for e in run}))  # a pinned run: the same machine
        if machine not in seen:
            seen.add(machine)
            out.append(f)
    return out


def _nowrap(table: list[str]) -> list[str]:
    """A Markdown table in a block whose cells do not wrap (the page scrolls sideways instead)."""
    return [":::{div} rf-nowrap", *table, ":::"]


def _summary_md(text: str) -> str:
    """``bench.format_summary`` output as Markdown: the header line, the table, the target counts
    as a list."""
    lines = text.splitlines()
    head, table = lines[0], [ln for ln in lines if ln.startswith("|")]
    rest = [ln for ln in lines[1:] if not ln.startswith("|")]
    out = [head[0].upper() + head[1:] + ".", "", *_nowrap(table), ""]
    if rest:
        out += [rest[0], ""] + [f"- {ln.strip()}" for ln in rest[1:]]
    return "\n".join(out)


def benchmark_page(root: str | Path = ROOT) -> str:
    """The benchmark page: for each stored series of ``rfcheck bench --json`` runs
    (``results/bench/<folder>/run*.json``) the median (min-max) table and target counts of
    :func:`rfcheck.bench.summarise_runs`; the stored attention benchmarks; then the lab notes
    ``results/bench/NOTES.md`` with each of their ``<!-- table: ... -->`` lines replaced by the
    table the named command prints.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The project root whose ``results/bench`` is read (default: this checkout's).

    Returns
    -------
    str
        The page's MyST Markdown (label ``benchmark``).
    """
    root = Path(root)
    bdir = root / "results" / "bench"
    notes = (bdir / "NOTES.md").read_text() if (bdir / "NOTES.md").exists() else ""
    in_notes = [Path(m.group(1)).name for m in _TABLE.finditer(notes)]
    folders = sorted({p.parent.name for p in bdir.glob("*/run*.json")},
                     key=lambda f: (in_notes.index(f) if f in in_notes else len(in_notes), f))
    out = ["(benchmark)=", "# Benchmark", "",
           "`rfcheck bench --json PATH` times the Numba engines on the positive-RF workload (d = 64, M = 64, "
           "one pair with |x+y| = 1) against the vectorised NumPy implementation in the same run, measures "
           "the machine's dgemm ceiling, times each engine row on one thread too, and checks the "
           "engine speed targets.  A series of runs is stored in a folder of `results/bench/`; "
           "`rfcheck bench --summarise FOLDER/run*.json` prints the median (min-max) over the series, "
           "which is what this page shows, computed from the stored files when the site is built.  Since "
           "2026-11-26 each run records the instruction set the engine was compiled for and the machine it ran on "
           "(shown in each table's first line); `rfcheck bench --cpu-target avx2` compiles the engine for an AVX2 "
           "CPU (LLVM `haswell`) in a subprocess, so that an AVX-512 machine also measures the AVX2 numbers -- an "
           "AVX2 build on an AVX-512 machine, not an AVX2 machine.  Since the evening of 2026-11-27 the other "
           "contenders of that subprocess run AVX2 code too (OpenBLAS's Haswell kernels for the dgemm ceiling and "
           "the NumPy baseline's products, NumPy's own loops without AVX-512), as on an AVX2 machine; the series "
           "before pitted the AVX2 engine against an AVX-512 ceiling and baseline.  The latest series of each "
           "machine the runs record comes first (a native AVX2 machine, AMD EPYC Zen 3, since the night of "
           "2026-11-27), then every stored series.  Since the afternoon of 2026-11-28 each run also measures "
           "the clock one thread runs at (a compiled chain of dependent two-cycle integer steps, timed beside "
           "the engines and before each generator round), and the generator rows state normals per cycle as "
           "well as per ns.", ""]
    tables: dict[str, str] = {}
    for f in folders:
        text, _ = _bench_summary(bdir / f)
        tables[f] = _summary_md(text)
    if folders:
        shown: list[str] = []
        for latest in _latest_per_machine(bdir, in_notes or folders[-1:]):
            pair = re.sub(r"-(avx2|avx512)$", lambda m: "-avx512" if m.group(1) == "avx2" else "-avx2", latest)
            shown += [f for f in ([pair] if pair != latest and pair in tables else []) + [latest]
                      if f not in shown]
        for f in shown:
            out += [f"## Latest series: {f}", "", f"`rfcheck bench --summarise results/bench/{f}/run*.json`:",
                    "", tables[f], ""]
        out += ["## Every stored series", ""]
        for f in folders:
            out += [f"### {f}", "", tables[f], ""]
    att = sorted(glob.glob(str(root / "results" / "attention-scale" / "**" / "bench*.json"), recursive=True))
    if att:
        out += ["## Attention", "",
                "`rfcheck bench attention --json PATH`: wall time of exact and linear attention against the "
                "sequence length L, each configuration in a fresh process (best of 3 after a warm-up), with "
                "log-log slopes and the crossover lengths.", ""]
        for p in att:
            out += _attention_bench(Path(p))
    if notes:
        body = _TABLE.sub(lambda m: "\n" + tables.get(Path(m.group(1)).name, f"(no runs stored in {m.group(1)})")
                          + "\n", notes)
        out += ["## History", "", "The lab notes of `results/bench/NOTES.md`, oldest first; the tables are "
                "computed from the stored runs they name.", "", _demote(body, 1), ""]
    return "\n".join(out) + "\n"


def _attention_bench(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    entries = data.get("entries", data if isinstance(data, list) else [])
    if not entries:
        return []
    dev = sorted({str(e.get("device")) for e in entries if e.get("device")})
    cols: dict[str, dict[int, dict]] = {}
    for e in entries:
        name = e["method"] + (" causal" if e.get("causal") else "") + (" chunked" if e.get("impl") == "chunked" else "")
        cols.setdefault(name, {})[e["L"]] = e
    lengths = sorted({e["L"] for e in entries})

    def cell(e: dict | None) -> str:
        if not e or e.get("seconds") is None:
            return "-" if not e else "skipped"
        t = 1e3 * e["seconds"]
        return f"{t:.3g}"

    rows = ["| L | " + " | ".join(cols) + " |", "| ---: |" + " ---: |" * len(cols)]
    rows += [f"| {n} | " + " | ".join(cell(cols[c].get(n)) for c in cols) + " |" for n in lengths]
    out = [f"### {path.parent.name}/{path.name}", "", f"`{_rel(path)}`. Device: {', '.join(dev) or '?'}; "
           f"{entries[0].get('workload', '')}.  Times in milliseconds.", "", *_nowrap(rows), ""]
    sm = data.get("summary") or {}
    if sm.get("slopes"):
        out += ["| method | log-log slope, time | log-log slope, memory |", "| --- | ---: | ---: |"]
        for name, s in sm["slopes"].items():
            def f(v: Any) -> str:
                return "-" if v is None or (isinstance(v, float) and v != v) else f"{v:.2f}"
            out.append(f"| {name} | {f(s.get('time'))} | {f(s.get('memory'))} |")
        out.append("")
    for kind, c in (sm.get("crossover") or {}).items():
        ln = "n/a" if c.get("length") is None else f"{c['length']:.0f}"
        out.append(f"- crossover ({kind}): L ~ {ln} ({_text(c.get('note'))})")
    out.append("")
    return out


# --------------------------------------------------------------------------- attention-scale studies

#: the stored attention-scale result files the attention guide relies on, by kind (relative to the
#: project root); :func:`attention_scale_page` says which of them are missing and also renders any
#: other file of ``results/attention-scale/`` matching :data:`_ATTENTION_PATTERNS`
ATTENTION_SCALE_FILES: dict[str, tuple[str, ...]] = {
    "mse": ("results/attention-scale/L1024.json", "results/attention-scale/L4096.json",
            "results/attention-scale/gpu-h200/mse-L16384.json"),
    "darkformer": ("results/attention-scale/dark_L1024_t005.json", "results/attention-scale/dark_L1024_t01.json"),
    "maxrel": ("results/attention-scale/maxrel-L256.json", "results/attention-scale/maxrel-L1024.json",
               "results/attention-scale/maxrel-L1024-r1-R12000.json"),
    "precision": ("results/attention-scale/gpu-h200/bench-precision-default.json",
                  "results/attention-scale/gpu-h200/bench-precision-highest.log"),
}

_ATTENTION_PATTERNS = {"mse": ("L*.json", "mse-L*.json"), "darkformer": ("dark_*.json",),
                       "maxrel": ("maxrel-*.json",), "precision": ("bench-precision-*.json", "bench-precision-*.log")}

#: the command that writes a file of each kind (for the note on a missing file)
_ATTENTION_WRITERS = {"mse": "python -m rfcheck.attention.mse --json PATH",
                      "darkformer": "python -m rfcheck.attention.mse --darkformer-only --json PATH",
                      "maxrel": "python -m rfcheck.attention.maxrel --json PATH",
                      "precision": "rfcheck bench attention --precision P --json PATH"}

_MSE_ORDER = ("attention.order.prf-simrf<=prf-orf", "attention.order.prf-orf<=prf-iid",
              "attention.order.oprf-orf<=oprf-iid", "attention.order.oprf-iid<=prf-iid",
              "attention.order.oprf-orf<=prf-orf")


def _z(z: float | None) -> str:
    """A z-score as the attention guide writes it: 2 decimals below 10, 1 below 100, none above."""
    if z is None or (isinstance(z, float) and not math.isfinite(z)):
        return "-"
    a = abs(z)
    return f"{z:.2f}" if a < 10 else f"{z:.1f}" if a < 100 else f"{z:.0f}"


def _verdict_counts(entries: list[dict[str, Any]]) -> str:
    c = Counter(e["verdict"] for e in entries)
    return ", ".join(f"{n} {v}" for v, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def _test_name(ident: str) -> str:
    """A test id without its ``attention.``/``.M<m>`` decoration, as a code span."""
    base = re.sub(r"\.M\d+$", "", ident)
    return _code(base.removeprefix("attention."))


def _short_note(note: str) -> str:
    """The reason of an INCONCLUSIVE test (``heavy tails``, ``no power``), without its numbers."""
    return note.split(":")[0].strip() if note else ""


def _device_line(path: Path, root: Path, entries: list[dict[str, Any]] | None = None) -> str:
    """Where a stored file ran: the ``device`` field of its entries if it has one, and the
    ``devicecheck.txt`` that ``python -m rfcheck.attention.devicecheck`` wrote into the same folder."""
    parts = []
    devs = sorted({str(e.get("device")) for e in entries or [] if e.get("device")})
    if devs:
        parts.append(f"the file's `device` field says {', '.join(_code(d) for d in devs)}")
    dc = path.parent / "devicecheck.txt"
    if dc.exists():
        lines = [ln.strip() for ln in dc.read_text().splitlines() if ln.strip()]
        gpu = next((ln.split(",")[0] for ln in lines if ln.startswith("NVIDIA")), "")
        ver = next((ln for ln in lines if " jax " in f" {ln} "), "")
        m = re.match(r"(\S+) jax (\S+)", ver)
        sw = f"Python {m.group(1)}, JAX {m.group(2)}" if m else ""
        what = "; ".join(x for x in (gpu, sw) if x)
        if what:
            parts.append(f"the session folder's {_code(_rel(dc, root))} names {_text(what)}")
    return "Device: " + ("; ".join(parts) if parts else "not recorded in the file") + "."


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return exc


def _mse_command(studies: list[dict[str, Any]], rel: str) -> str:
    c = studies[0]["config"]
    ms = " ".join(str(m) for m in dict.fromkeys(st["config"]["M"] for st in studies))
    kinds = {st.get("study", "isotropic") for st in studies}
    per_entry = any("max_rel_rmse" in v for st in studies for v in (st.get("variants") or {}).values())
    cmd = (f"python -m rfcheck.attention.mse --len {c['L']} --dim {c['d']} --features {ms} "
           f"--draws {c.get('R_requested', c['R'])} --batch {c['batch']} --seed {c['seed']} --alpha {c['alpha']:g}")
    if not per_entry:
        cmd += " --no-per-entry"
    if kinds == {"darkformer"}:
        cmd += " --darkformer-only"
    elif "darkformer" in kinds:
        cmd += " --darkformer"
    return cmd + f" --json {rel}"


def _mse_notes(studies: list[dict[str, Any]]) -> str:
    short = [(st["config"]["M"], st["config"]["R"], st["config"].get("R_requested")) for st in studies
             if st["config"].get("R_requested") and st["config"]["R"] < st["config"]["R_requested"]]
    out = ("The options were reconstructed from the `config` of each study in the file (L, d, the "
           "features M, the draws asked for, batch, seed, family level alpha; `--no-per-entry` where the "
           "variants carry no per-entry maximum)")
    if short:
        out += ("; a time cap `--max-seconds`, whose value the file does not record, stopped "
                + ", ".join(f"M = {m} at R = {r} of {rq}" for m, r, rq in short))
    if any(st.get("study") == "darkformer" for st in studies):
        out += "; the anisotropic data's `--dark-top` and `--dark-condition` are not recorded in the file"
    return out + "."


def attention_mse_table(path: str | Path, root: str | Path = ROOT) -> str:
    """The table of one stored attention-scale MSE study, as Markdown, with the command and device.

    Parameters
    ----------
    path : str or Path
        A ``python -m rfcheck.attention.mse --json PATH`` file: a list of studies, each with
        ``study`` (``"isotropic"`` or ``"darkformer"``), ``config`` (L, d, M, R, R_requested, seed,
        alpha, batch, ...), ``seconds``, ``variants`` and ``entries`` (one per test: ``id``,
        ``kind``, ``verdict``, ``z``, ``z_crit``, ``note``).
    root : str or Path
        The project root the page names files relative to.

    Returns
    -------
    str
        A ``###`` section: the command that wrote the file (reconstructed from its recorded
        configuration, unrecorded options named), the device, and for isotropic studies one row per
        M -- verdict counts, the largest ``|z|`` of the pair-averaged MSE equalities (CRT Thm 3.2 /
        eq 45 closed forms), the z of the orderings (SimRF <= ORF; ORF <= iid, Performer / CRT
        Thm 4.1; OPRF <= PRF, CRT Thm 3.3) and the range of the relative SE of the variants' MSE;
        for DARKFormer studies one row per test (DARKFormer Thm 3.2).  A file that is missing or
        unreadable gives a sentence saying so.
    """
    root, path = Path(root), Path(path)
    rel = _rel(path, root)
    head = [f"### {_code(rel)}", ""]
    data = _load(path) if path.exists() else None
    if not isinstance(data, list) or not data:
        why = "missing" if data is None else f"unreadable ({_text(data)})" if isinstance(data, Exception) else "empty"
        return "\n".join([*head, f"The file {_code(rel)} is {why}: `{_ATTENTION_WRITERS['mse']}` writes one.", ""])
    out = [*head, f"Command: {_code(_mse_command(data, rel))}.  {_mse_notes(data)}", "",
                  _device_line(path, root), ""]
    iso = [st for st in data if st.get("study", "isotropic") != "darkformer"]
    dark = [st for st in data if st.get("study") == "darkformer"]
    if iso:
        rows = ["| L | M | R | verdicts | max \\|z\\|, equalities | SimRF <= ORF z | ORF <= iid z (PRF / OPRF) "
                "| OPRF <= PRF z (iid / ORF) | rel. SE of MSE | seconds |",
                "| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for st in iso:
            c = st["config"]
            by = {re.sub(r"\.M\d+$", "", e["id"]): e for e in st["entries"]}
            eq = [e for e in st["entries"] if e.get("kind") == "equality"]

            def z(i: str, by: dict = by) -> str:
                return _z(by[i]["z"]) if i in by else "-"

            rse = [v["rel_se"] for v in st["variants"].values() if v.get("rel_se") is not None]
            rows.append(f"| {c['L']} | {c['M']} | {c['R']} | {_verdict_counts(st['entries'])} | "
                        f"{_z(max(abs(e['z']) for e in eq)) if eq else '-'} | {z(_MSE_ORDER[0])} | "
                        f"{z(_MSE_ORDER[1])} / {z(_MSE_ORDER[2])} | {z(_MSE_ORDER[3])} / {z(_MSE_ORDER[4])} | "
                        + (f"{100 * min(rse):.2f}-{100 * max(rse):.2f}%" if rse else "-")
                        + f" | {st.get('seconds', float('nan')):.0f} |")
        zc = sorted({round(e["z_crit"], 2) for st in iso for e in st["entries"]})
        out += [*_nowrap(rows), "", f"z_crit = {', '.join(f'{v:.2f}' for v in zc)} (Bonferroni over each "
                f"study's tests at family level alpha).", ""]
    if dark:
        rows = ["| L | M | R | test | verdict | z | z_crit | why not HOLDS |",
                "| ---: | ---: | ---: | --- | --- | ---: | ---: | --- |"]
        for st in dark:
            c = st["config"]
            for e in st["entries"]:
                rows.append(f"| {c['L']} | {c['M']} | {c['R']} | {_test_name(e['id'])} | {e['verdict']} | "
                            f"{_z(e['z'])} | {e['z_crit']:.2f} | {_text(e.get('note') or '')} |")
        out += [*_nowrap(rows), ""]
    return "\n".join(out)


def maxrel_table(path: str | Path, root: str | Path = ROOT) -> str:
    """The table of one stored max-relative-error study (HRF sec 4), as Markdown, with the command.

    Parameters
    ----------
    path : str or Path
        A ``python -m rfcheck.attention.maxrel --json PATH`` file: a list of studies, one per
        radius, each with ``config`` (r, L, d, m, hybrid_m, hybrid_n, R, seed, alpha), ``exact``
        (per method ``trig``/``pos``/``hybrid`` the exact ``eps_max`` over the L x L grid, from
        HRF Lemma 3.4 eq (25) and Thm D.1 eq (45)), ``mc`` and ``entries`` (the Monte Carlo tests).
    root : str or Path
        The project root the page names files relative to.

    Returns
    -------
    str
        A ``###`` section: the command that wrote the file (from its recorded configuration), and one
        row per radius -- the exact maxima, the ratio of the hybrid's to the smaller of the other two,
        the Monte Carlo ordering verdicts with their z (and why a test is INCONCLUSIVE), the verdict
        counts of the equality tests, and the seconds.  A missing or unreadable file gives a sentence.
    """
    root, path = Path(root), Path(path)
    rel = _rel(path, root)
    head = [f"### {_code(rel)}", ""]
    data = _load(path) if path.exists() else None
    if not isinstance(data, list) or not data:
        why = "missing" if data is None else f"unreadable ({_text(data)})" if isinstance(data, Exception) else "empty"
        return "\n".join([*head, f"The file {_code(rel)} is {why}: `{_ATTENTION_WRITERS['maxrel']}` writes one.", ""])
    c = data[0]["config"]
    radii = " ".join(f"{st['config']['r']:g}" for st in data)
    cmd = (f"python -m rfcheck.attention.maxrel --radii {radii} --len {c['L']} --dim {c['d']} --draws {c['R']} "
           f"--seed {c['seed']} --alpha {c['alpha']:g} --json {rel}")
    out = [*head, f"Command: {_code(cmd)} (options from the file's `config`; m = {c['m']} features for SM^trig "
                  f"and SM^++, the hybrid at (m, n) = ({c['hybrid_m']}, {c['hybrid_n']})).", "",
                  _device_line(path, root), ""]
    rows = ["| r | L | R | exact eps_max, SM^trig | exact eps_max, SM^++ | exact eps_max, hybrid | "
            "hybrid / min(others) | MC: hybrid <= SM^trig | MC: hybrid <= SM^++ | MC equalities | seconds |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | ---: |"]
    for st in data:
        cf, ex = st["config"], st["exact"]
        by = {e["id"]: e for e in st["entries"]}

        def mc(i: str, by: dict = by) -> str:
            e = by.get(i)
            if not e:
                return "-"
            why = _short_note(e.get("note", "")) if e["verdict"] != "HOLDS" else ""
            return f"{e['verdict']} (z = {_z(e['z'])}{'; ' + _text(why) if why else ''})"

        others = min(ex["trig"]["eps_max"], ex["pos"]["eps_max"])
        eqs = [e for e in st["entries"] if e.get("kind") == "equality"]
        rows.append(f"| {cf['r']:g} | {cf['L']} | {cf['R']} | {ex['trig']['eps_max']:#.4g} | "
                    f"{ex['pos']['eps_max']:#.4g} | {ex['hybrid']['eps_max']:#.4g} | "
                    f"{ex['hybrid']['eps_max'] / others:.3f} | {mc('attention.maxrel.hybrid<=trig')} | "
                    f"{mc('attention.maxrel.hybrid<=pos')} | {_verdict_counts(eqs)} | "
                    f"{st.get('seconds', float('nan')):.0f} |")
    zc = sorted({round(e["z_crit"], 2) for st in data for e in st["entries"]})
    out += [*_nowrap(rows), "", f"z_crit = {', '.join(f'{v:.2f}' for v in zc)}.", ""]
    return "\n".join(out)


_BENCH_ROW = re.compile(r"^(exact|favor\+)( causal)?( chunked)?\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$")


def _bench_log_entries(text: str) -> list[dict[str, Any]]:
    """The rows of a saved ``rfcheck bench attention`` output (:func:`rfcheck.attention.bench.format_entry`)
    as entries of its ``--json`` file (time, peak memory; the device is not in the printed rows)."""
    out = []
    for ln in text.splitlines():
        m = _BENCH_ROW.match(ln.rstrip())
        if not m:
            continue
        t, mb = m.group(5), m.group(6)
        out.append({"method": m.group(1), "causal": bool(m.group(2)), "impl": "chunked" if m.group(3) else "scan",
                    "L": int(m.group(4)), "seconds": None if t == "-" else float(t),
                    "peak_bytes": None if mb == "-" else float(mb) * 2**20, "note": m.group(8).strip()})
    return out


def _ms(e: dict[str, Any]) -> str:
    t = 1e3 * e["seconds"]
    return f"{t:.0f}" if t >= 100 else f"{t:.3g}"


_BENCH_COLS = (("exact", False, "scan", "exact"), ("exact", True, "scan", "exact causal"),
               ("favor+", False, "scan", "FAVOR+"), ("favor+", True, "scan", "FAVOR+ causal, scan"),
               ("favor+", True, "chunked", "FAVOR+ causal, chunked"))


def attention_precision_table(folder: str | Path, root: str | Path = ROOT) -> str:
    """The GPU timing table of ``rfcheck bench attention`` at each stored matmul precision of one folder.

    Parameters
    ----------
    folder : str or Path
        A folder holding ``bench-precision-<P>.json`` (``rfcheck bench attention --json PATH``) and/or
        ``bench-precision-<P>.log`` (the rows the command printed, where it wrote no JSON) files.
    root : str or Path
        The project root the page names files relative to.

    Returns
    -------
    str
        A ``###`` section: per file the command (the lengths, ``--exact-mem`` and precision
        recovered from the file; the precision from the workload field, else from the file name)
        and the device; then the times in milliseconds with every cell ``P1 / P2 / ...`` in the order
        of the precisions listed (``highest`` first), the peak memory in MiB the same way, and the
        log-log slopes and crossovers of :func:`rfcheck.attention.bench.summarise` per precision.
    """
    from rfcheck.attention.bench import summarise

    root, folder = Path(root), Path(folder)
    runs: dict[str, tuple[Path, list[dict[str, Any]]]] = {}
    for p in sorted(folder.glob("bench-precision-*.json")) + sorted(folder.glob("bench-precision-*.log")):
        prec = p.stem.removeprefix("bench-precision-")
        if prec in runs:
            continue  # the JSON of a precision is preferred to its printed log
        if p.suffix == ".json":
            data = _load(p)
            entries = data.get("entries", []) if isinstance(data, dict) else data if isinstance(data, list) else []
        else:
            entries = _bench_log_entries(p.read_text())
        if entries:
            runs[prec] = (p, entries)
    head = [f"### {_code(_rel(folder, root))}", ""]
    if not runs:
        return "\n".join([*head, f"No stored `bench-precision-*` file in {_code(_rel(folder, root))}: "
                                 f"`{_ATTENTION_WRITERS['precision']}` writes one.", ""])
    order = sorted(runs, key=lambda p: (p != "highest", p))
    out = head
    for prec in order:
        p, entries = runs[prec]
        lengths = [e["L"] for e in entries]
        mem = sorted({m.group(1) for e in entries if (m := re.search(r"--exact-mem (\S+) B", e.get("note") or ""))})
        wl = next((e.get("workload") for e in entries if e.get("workload")), "")
        m = re.search(r"precision=(\w+)", wl or "")
        source = ("the file's workload field" if m else "the file name; the printed rows record none"
                  if p.suffix == ".log" else f"the file name; the file's workload field, {_code(wl)}, records none")
        cmd = (f"rfcheck bench attention --min-len {min(lengths)} --max-len {max(lengths)}"
               + (f" --exact-mem {mem[0]}" if mem else "") + f" --precision {m.group(1) if m else prec}"
               + (f" --json {_rel(p, root)}" if p.suffix == ".json" else f" > {_rel(p, root)}"))
        last = entries[-1]
        last_name = (last["method"] + (" causal" if last["causal"] else "")
                     + (" chunked" if last["impl"] == "chunked" else ""))
        extra = (f" The file holds the printed rows only; the last is L = {last['L']}, {_code(last_name)}."
                 if p.suffix == ".log" else "")
        out += [f"- `{prec}`: {_code(cmd)} (precision from {source}).{extra} "
                + _device_line(p, root, entries), ""]
    by = {prec: {(e["method"], e["causal"], e.get("impl", "scan"), e["L"]): e for e in runs[prec][1]} for prec in order}
    lengths = sorted({e["L"] for prec in order for e in runs[prec][1]})

    def cells(key: tuple, fmt: Any) -> str:
        vals = []
        for prec in order:
            e = by[prec].get(key)
            vals.append("-" if e is None else "skipped" if e.get("seconds") is None else fmt(e))
        return " / ".join(vals)

    label = " / ".join(f"`{p}`" for p in order)
    hdr = "| L | " + " | ".join(c[3] for c in _BENCH_COLS) + " |"
    sep = "| ---: |" + " ---: |" * len(_BENCH_COLS)
    t_rows = [hdr, sep] + [f"| {n} | " + " | ".join(cells((c[0], c[1], c[2], n), _ms)
                                                    for c in _BENCH_COLS) + " |" for n in lengths]
    m_rows = [hdr, sep] + [f"| {n} | " + " | ".join(
        cells((c[0], c[1], c[2], n), lambda e: "?" if e.get("peak_bytes") is None else f"{e['peak_bytes'] / 2**20:.0f}")
        for c in _BENCH_COLS) + " |" for n in lengths]
    out += [f"Times in milliseconds (best of 3 after a warm-up), each cell {label} (`-`: not in that file):", "",
            *_nowrap(t_rows), "", f"Peak memory in MiB, each cell {label}:", "", *_nowrap(m_rows), ""]
    sums = {prec: summarise(runs[prec][1]) for prec in order}
    names = list(dict.fromkeys(n for s in sums.values() for n in s["slopes"]))

    def sl(v: Any) -> str:
        return "-" if v is None or not math.isfinite(v) else f"{v:.2f}"

    out += [f"Log-log slopes (fitted over L >= 4096; `rfcheck.attention.bench.summarise` on the stored rows), "
            f"each cell {label}:", "", "| method | time | memory |", "| --- | ---: | ---: |"]
    for n in names:
        out.append(f"| {n} | " + " / ".join(sl(sums[p]["slopes"].get(n, {}).get("time")) for p in order) + " | "
                   + " / ".join(sl(sums[p]["slopes"].get(n, {}).get("memory")) for p in order) + " |")
    out.append("")
    for prec in order:
        for kind, c in sums[prec]["crossover"].items():
            ln = "n/a" if c.get("length") is None else f"{c['length']:.0f}"
            out.append(f"- `{prec}`, crossover ({kind}): L ~ {ln} ({_text(c.get('note'))})")
    out.append("")
    return "\n".join(out)


def _attention_files(root: Path, kind: str) -> list[Path]:
    """The expected files of ``kind`` (:data:`ATTENTION_SCALE_FILES`) and any other stored one."""
    base = root / "results" / "attention-scale"
    found = {p for pat in _ATTENTION_PATTERNS[kind] for p in base.rglob(pat)} if base.exists() else set()
    expected = [root / f for f in ATTENTION_SCALE_FILES[kind]]
    return expected + sorted(found - set(expected))


def attention_scale_page(root: str | Path = ROOT) -> str:
    """The attention-scale results page (``docs/results/attention-scale.md``): every stored study of
    ``results/attention-scale/`` rendered from its file.

    Parameters
    ----------
    root : str or Path
        The project root (``results/attention-scale/`` is read below it).

    Returns
    -------
    str
        The page: the pair-averaged MSE studies (:func:`attention_mse_table`: CRT Thm 3.2/3.3/4.1,
        SimRF, DARKFormer Thm 3.2), the max-relative-error studies (:func:`maxrel_table`, HRF sec 4),
        the GPU timings at each matmul precision (:func:`attention_precision_table`), the device check
        as printed, and a list of the files of :data:`ATTENTION_SCALE_FILES` that are missing.
    """
    root = Path(root)
    out = ["(attention-scale)=", "# Attention-scale studies", "",
           "The stored outputs of the attention-scale commands in `results/attention-scale/`, rendered "
           "when the site is built: nothing on this page is written by hand.  {doc}`/guide/attention` "
           "says what each study tests and how to read it.", ""]
    missing = []
    sections = (("mse", "MSE of the attention matrix", attention_mse_table,
                 "Isotropic data (rows N(0, scale^2/d I)): the pair-averaged MSE of the L x L attention matrix "
                 "against the mean of the per-entry closed forms, and the orderings on paired draws."),
                ("darkformer", "DARKFormer: aligned against isotropic proposal", attention_mse_table,
                 "Anisotropic data: the DARKFormer proposal aligned with the data's covariance against the "
                 "isotropic one (PosRF-iid), paired and against the isotropic side's exact MSE."),
                ("maxrel", "Max-relative-error ordering (HRF sec 4)", maxrel_table,
                 "Queries and keys on the sphere S(r) at angles covering [0, pi]: the exact maximum over the "
                 "grid of the relative RMSE of SM^trig, SM^++ and the angular hybrid, and the Monte Carlo "
                 "at each method's exact argmax entry."))
    for kind, title, render, intro in sections:
        files = _attention_files(root, kind)
        present = [p for p in files if p.exists()]
        missing += [p for p in files if not p.exists()]
        out += [f"(attention-scale-{kind})=", f"## {title}", "", intro, ""]
        out += [render(p, root) for p in present] or [f"No stored file: `{_ATTENTION_WRITERS[kind]}` writes one.", ""]
    out += ["(attention-scale-precision)=", "## Timings by matmul precision", "",
            "`rfcheck bench attention`: wall time and peak memory of exact and FAVOR+ attention (float32, "
            "d = M = 64) against L, one configuration per fresh process, at each stored matmul precision "
            "(`highest`: float32 products; `default`: the backend's choice).", ""]
    files = _attention_files(root, "precision")
    missing += [p for p in files if not p.exists()]
    folders = sorted({p.parent for p in files if p.exists()})
    out += [attention_precision_table(f, root) for f in folders] or [
        f"No stored file: `{_ATTENTION_WRITERS['precision']}` writes one.", ""]
    for dc in sorted((root / "results" / "attention-scale").rglob("devicecheck.txt")):
        out += [f"### Device check: {_code(_rel(dc, root))}", "",
                "`python -m rfcheck.attention.devicecheck` as printed: the largest relative error of float32 "
                "attention against float64 at the `default` and `highest` matmul precisions.", "",
                *_fenced(dc.read_text()), ""]
    if missing:
        out += ["## Missing files", "", "These stored outputs are missing, so their tables are not on this page:", ""]
        out += [f"- {_code(_rel(p, root))}" for p in missing] + [""]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- figures


def figures_page(figures_dir: str | Path, image_dir: str | Path, image_prefix: str = "figures") -> str:
    """The figures gallery: every registered figure (:data:`rfcheck.plots.FIGURES`) whose PNG is in
    ``figures_dir`` (as ``rfcheck plot NAME`` writes them), copied into ``image_dir`` (which the page
    refers to as ``image_prefix``), with its caption and command; figures not drawn yet are listed.

    Parameters
    ----------
    figures_dir : str or pathlib.Path
        Where ``rfcheck plot`` wrote the PNGs (``figures/``).
    image_dir : str or pathlib.Path
        Where the page's copies go (created if missing).
    image_prefix : str, optional
        The path the page uses for ``image_dir`` (default ``"figures"``).

    Returns
    -------
    str
        The page's MyST Markdown (label ``figures``).
    """
    from rfcheck.plots import CAPTIONS, FIGURES

    src, dst = Path(figures_dir), Path(image_dir)
    dst.mkdir(parents=True, exist_ok=True)
    out = ["(figures)=", "# Figures", "",
           "Every figure that `rfcheck plot NAME` draws (closed forms with Monte Carlo overlays), as stored "
           "in `figures/`; `rfcheck plot NAME --out DIR` redraws one (`--quick` for small Monte Carlo "
           "sizes), and {doc}`/guide/figures` says what each shows.", ""]
    missing = []
    cards = []
    for name in sorted(FIGURES):
        png = src / f"{name}.png"
        if not png.exists():
            missing.append(name)
            continue
        target = dst / png.name
        if not target.exists() or target.read_bytes() != png.read_bytes():
            shutil.copyfile(png, target)
        cap = _text(_figure_caption(name, CAPTIONS.get(name, "")))
        cards += [f"## {name}", "", f"```{{figure}} {image_prefix}/{png.name}", f":alt: {name}", ":width: 100%", "",
                  cap, "```", "", f"Command: `rfcheck plot {name}`" + (f"; PDF: `figures/{name}.pdf`"
                                                                        if (src / f"{name}.pdf").exists() else ""), ""]
    out += cards
    if missing:
        out += ["## Not drawn yet", "", ", ".join(f"`{m}`" for m in missing), ""]
    return "\n".join(out) + "\n"


def _figure_caption(name: str, caption: str) -> str:
    """A figure's caption for the gallery: :data:`rfcheck.plots.CAPTIONS` without the drawing
    function's "Write ``x.png`` / ``.pdf``" and without its module's summary (which describes the
    paper's figures in general)."""
    import ast

    import rfcheck.plots

    module = ""
    for src in Path(rfcheck.plots.__file__).parent.glob("*.py"):
        mod_doc = " ".join((ast.get_docstring(ast.parse(src.read_text())) or "").split("\n\n")[0].split())
        if mod_doc and caption.endswith(mod_doc) and caption != mod_doc:
            caption, module = caption[: -len(mod_doc)].strip(), mod_doc
            break
    caption = re.sub(r"^Write ``[^`]+``(\s*/\s*``[^`]+``)?\s*[.:]?\s*", "", caption) or module
    return caption[:1].upper() + caption[1:] if caption else name


# --------------------------------------------------------------------------- everything



# ------------------------------------------------------------------ how the built-in claims are written

#: what the top-level statements of a claim module hold, in the order the page lists them
CLAIM_CODE_KINDS = ("claim declarations", "printed transcriptions", "references and check wiring",
                    "constants and domains", "imports and module text", "blank lines and comments")


def _claim_code_kind(node: ast.stmt) -> str:
    """The kind (:data:`CLAIM_CODE_KINDS`) of one top-level statement of a claim module."""
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return "printed transcriptions" if node.name.startswith(("printed", "_printed")) else \
            "references and check wiring"
    call = node.value if isinstance(node, ast.Expr) else None
    if isinstance(node, ast.For) or (isinstance(call, ast.Call) and (
            (isinstance(call.func, ast.Attribute) and call.func.attr in ("claim", "equality"))
            or (isinstance(call.func, ast.Name) and call.func.id.endswith("_claim")))):
        return "claim declarations"
    if isinstance(node, ast.Import | ast.ImportFrom) or (isinstance(call, ast.Constant)):
        return "imports and module text"
    return "constants and domains"


def _takes_ctx(fn: ast.FunctionDef) -> bool:
    """Whether a transcription is written against a number-system context: a ``ctx`` parameter, or a
    factory whose inner function or lambda takes one."""
    if "ctx" in [a.arg for a in fn.args.args]:
        return True
    return any(isinstance(n, ast.FunctionDef | ast.Lambda) and n is not fn and "ctx" in [a.arg for a in n.args.args]
               for n in ast.walk(fn))


def claim_code_stats(root: str | Path = ROOT) -> dict[str, Any]:
    """Lines of the built-in claim modules (``rfcheck/claims/<paper>.py``, ``attention.py`` and their
    private parts, not the claim machinery of ``__init__``/``_common``) by what they hold, per claim.

    Each top-level statement is classed by :data:`CLAIM_CODE_KINDS`: a ``P.claim``/``P.equality`` call
    or a loop or factory call declaring claims, a ``printed_*`` function (a transcription), any other
    function (a reference or the wiring of a check), other statements, imports and the module
    docstring; the rest of the lines are blank or comments.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The project root (default: this checkout's).

    Returns
    -------
    dict
        ``modules``: ``{file name: {"lines": n, kind: n, ..., "tokens": n}}``; ``lines``, ``claims``
        (registered built-in claims), ``lines_per_claim``; ``tokens`` and ``tokens_per_claim`` (Python
        tokens other than comments, newlines and indentation: a size the layout does not change);
        ``transcriptions`` and ``transcriptions_on_ctx`` (``printed_*`` functions, and those written
        against a context).

    Examples
    --------
    >>> st = claim_code_stats()
    >>> st["lines"] == sum(m["lines"] for m in st["modules"].values()), st["claims"] >= 248
    (True, True)
    """
    from rfcheck import claims

    folder = Path(root) / "rfcheck" / "claims"
    modules: dict[str, dict[str, int]] = {}
    n_printed = n_ctx = 0
    for f in sorted(folder.glob("*.py")):
        if f.name in ("__init__.py", "_common.py"):
            continue
        src = f.read_text()
        lines = src.splitlines()
        row = dict.fromkeys(CLAIM_CODE_KINDS, 0)
        seen: set[int] = set()
        for node in ast.parse(src).body:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            kind = _claim_code_kind(node)
            for i in range(first - 1, node.end_lineno or node.lineno):
                if lines[i].strip() and not lines[i].lstrip().startswith("#"):
                    row[kind] += 1
                    seen.add(i)
            if kind == "printed transcriptions" and isinstance(node, ast.FunctionDef):
                n_printed += 1
                n_ctx += _takes_ctx(node)
        row["blank lines and comments"] = len(lines) - len(seen)
        modules[f.name] = {"lines": len(lines), **row, "tokens": _code_tokens(src)}
    total = sum(m["lines"] for m in modules.values())
    tokens = sum(m["tokens"] for m in modules.values())
    n_claims = sum(1 for c in claims.load_all() if c.split(".")[0] in claims.PAPER_SOURCES)
    return {"modules": modules, "lines": total, "claims": n_claims, "lines_per_claim": total / n_claims,
            "tokens": tokens, "tokens_per_claim": tokens / n_claims,
            "transcriptions": n_printed, "transcriptions_on_ctx": n_ctx}


def _code_tokens(src: str) -> int:
    """Python tokens of ``src`` other than comments, line breaks, indentation and the end marker: a size
    of the code that its layout (how arguments are spread over lines) does not change."""
    import io
    import tokenize

    layout = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
              tokenize.ENDMARKER}
    return sum(1 for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type not in layout)


def claim_code_page(root: str | Path = ROOT) -> str:
    """The documentation page of :func:`claim_code_stats`: lines of the built-in claim modules per claim,
    by what they hold, computed from the source when the site is built.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The project root (default: this checkout's).

    Returns
    -------
    str
        The page (Markdown).

    Examples
    --------
    >>> claim_code_page().splitlines()[0]
    '# How the built-in claims are written'
    """
    st = claim_code_stats(root)
    mods = st["modules"]
    head = ["module", "lines", *CLAIM_CODE_KINDS, "tokens"]
    kinds = (*CLAIM_CODE_KINDS, "tokens")
    rows = [[f"`{name}`", str(m["lines"]), *(str(m[k]) for k in kinds)] for name, m in mods.items()]
    rows.append(["**all**", str(st["lines"]),
                 *(f"{sum(m[k] for m in mods.values())} ({sum(m[k] for m in mods.values()) / st['claims']:.1f}"
                   " per claim)" for k in kinds)])
    return "\n".join([
        "# How the built-in claims are written", "",
        "The five papers' claims are declared with the same public API as a user's own claims "
        "({doc}`/guide/verify_your_paper`): each claim module holds the claim declarations, the printed "
        "formulas transcribed exactly (written against the number-system context where they are formulas, so "
        "that one transcription evaluates in float64, mpmath, sympy and on Arb balls) and the wiring of each "
        "check to its references; the reference computations themselves are public, tested functions of "
        "{mod}`rfcheck.references`. Computed from the source by `rfcheck.docsgen.claim_code_stats` when the "
        "site is built.", "",
        f"**{st['lines']:,} lines for {st['claims']} claims: {st['lines_per_claim']:.1f} lines per claim.** "
        f"In tokens, a size the layout does not change (Python tokens other than comments, line breaks and "
        f"indentation): {st['tokens']:,}, {st['tokens_per_claim']:.0f} per claim. "
        f"{st['transcriptions_on_ctx']} of the {st['transcriptions']} `printed_*` transcriptions are written "
        "against a context (the others act on vectors, matrices or float64 iterates, or keep an mpmath operation "
        "whose digits a context would change, with a separate ball face).", "",
        "| " + " | ".join(head) + " |", "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in rows), ""])


def generate(docs_dir: str | Path, root: str | Path = ROOT, *, api: bool = True) -> list[Path]:
    """Write every generated source of the documentation under ``docs_dir`` (called by
    ``docs/conf.py``): ``results/`` (ledger, errata, calibration, benchmark, figures and the
    results index) and, with ``api``, ``api/`` (:func:`api_pages`).  Files whose contents did not
    change are not rewritten.  Returns the files.

    Parameters
    ----------
    docs_dir : str or pathlib.Path
        The documentation's source folder (``docs``).
    root : str or pathlib.Path, optional
        The project root whose result files are read (default: this checkout's).
    api : bool, optional
        Also write the API reference sources (default True).

    Returns
    -------
    list of pathlib.Path
        The generated files.
    """
    docs, root = Path(docs_dir), Path(root)
    res = docs / "results"
    res.mkdir(parents=True, exist_ok=True)
    ledger = load_ledger(root)
    notes = root / "results" / "ledger" / "errata-notes.md"
    pages = {
        "ledger.md": ledger_page(ledger),
        "errata.md": errata_page(ledger, notes.read_text() if notes.exists() else None),
        "calibration.md": calibration_page(root / "results" / "calibrate" / "calibration.json",
                                           _read(root / "results" / "calibrate" / "NOTES.md")),
        "benchmark.md": benchmark_page(root),
        "attention-scale.md": attention_scale_page(root),
        "figures.md": figures_page(root / "figures", res / "figures"),
        "claim-code.md": claim_code_page(root),
    }
    extra = [p for p in ("accuracy",) if (docs / f"{p}.md").exists()]
    pages["index.md"] = "\n".join([
        "# Results", "",
        "The results of the commands that compute them, stored in `results/` and `figures/` and rendered "
        "here when the site is built: nothing on these pages is written by hand.", "",
        "```{toctree}", ":maxdepth: 1", "", "ledger", "errata", *[f"/{p}" for p in extra], "calibration",
        "benchmark", "attention-scale", "figures", "claim-code", "```", ""])
    written = []
    for name, text in pages.items():
        p = res / name
        _write_if_changed(p, text)
        written.append(p)
    if api:
        written += api_pages(docs / "api")
    return written


def _read(p: Path) -> str | None:
    return p.read_text() if p.exists() else None

"""Ledger reports: JSON (machine-readable) and Markdown (one page per paper + a summary).

Input is the list of verdict dictionaries produced by ``Verdict.as_dict()`` (the
interchange format between worker processes, the cache and the reports).  The JSON schema
is documented in README.md ("Report format").
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from rfcheck.claims import PAPERS

__all__ = ["summary_counts", "summary_markdown", "write_reports"]

VERDICTS = ("HOLDS", "REFUTED", "INCONCLUSIVE")


def summary_counts(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Counts per paper and verdict."""
    out: dict[str, dict[str, int]] = {}
    for paper in sorted({e["paper"] for e in entries}):
        c = Counter(e["verdict"] for e in entries if e["paper"] == paper)
        out[paper] = {v: c.get(v, 0) for v in VERDICTS}
    return out


def summary_markdown(entries: list[dict[str, Any]]) -> str:
    """The ledger summary table (counts per paper and verdict) in Markdown."""
    counts = summary_counts(entries)
    lines = ["| paper | claims | HOLDS | REFUTED | INCONCLUSIVE |", "| --- | ---: | ---: | ---: | ---: |"]
    tot = Counter()
    for paper, c in counts.items():
        n = sum(c.values())
        tot.update(c)
        lines.append(f"| {paper} | {n} | {c['HOLDS']} | {c['REFUTED']} | {c['INCONCLUSIVE']} |")
    lines.append(f"| **all** | {sum(tot.values())} | {tot['HOLDS']} | {tot['REFUTED']} | {tot['INCONCLUSIVE']} |")
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, dict) and set(v) == {"re", "im"}:
        return f"{v['re']:.6g}{v['im']:+.6g}i"
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)


def _entry_markdown(e: dict[str, Any]) -> str:
    ev = e["evidence"]
    w = ev.get("worst") or {}
    lines = [
        f"### `{e['id']}` — **{e['verdict']}**",
        "",
        f"*Source:* {e['source']}  ",
        f"*Statement (as printed):* {e['statement']}",
        "",
        f"*Reason:* {e['reason']}",
        "",
    ]
    if w:
        pt = ", ".join(f"{k}={_fmt(v)}" for k, v in w.get("point", {}).items())
        lines += [
            f"*Worst point* ({ev.get('deciding_check')}): {pt}  ",
            f"printed = {_fmt(w.get('printed'))}, reference = {_fmt(w.get('reference'))} "
            f"± {_fmt(w.get('err'))} (discrepancy {_fmt(w.get('disc'))} × tolerance)",
            "",
        ]
    lines.append("| check | verdict | points | decided | violations | note |")
    lines.append("| --- | --- | ---: | ---: | ---: | --- |")
    for ch in ev["checks"]:
        lines.append(f"| {ch['name']} | {ch['verdict']} | {ch['points_tried']} | {ch['points_decided']} | "
                     f"{ch['violations']} | {ch['reason']} |")
    lines.append("")
    if e.get("correction"):
        lines += [f"*Correction:* {e['correction']}", ""]
    if e.get("notes"):
        lines += [f"*Notes:* {e['notes']}", ""]
    lines += [f"Reproduce: `{e['reproduce']}`" + (f"  \nAt the worst point: `{e['reproduce_point']}`"
                                                   if e.get("reproduce_point") else ""), ""]
    return "\n".join(lines)


def write_reports(entries: list[dict[str, Any]], out_dir: str | Path) -> list[Path]:
    """Write ``ledger.json``, ``<paper>.json``, ``<paper>.md`` and ``index.md`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    p = out / "ledger.json"
    p.write_text(json.dumps(entries, indent=2, default=str))
    written.append(p)
    index = ["# rfcheck ledger", "", summary_markdown(entries), ""]
    for paper in sorted({e["paper"] for e in entries}):
        ents = [e for e in entries if e["paper"] == paper]
        pj = out / f"{paper}.json"
        pj.write_text(json.dumps(ents, indent=2, default=str))
        md = [f"# {PAPERS.get(paper, paper)}", "", summary_markdown(ents), ""]
        md += [_entry_markdown(e) for e in ents]
        pm = out / f"{paper}.md"
        pm.write_text("\n".join(md))
        written += [pj, pm]
        index.append(f"- [{paper}]({paper}.md): {PAPERS.get(paper, paper)}")
    pi = out / "index.md"
    pi.write_text("\n".join(index) + "\n")
    written.append(pi)
    return written

"""Ledger reports: JSON (machine-readable), Markdown and HTML (one page per paper + an
index), and for every REFUTED claim a small plot of printed vs reference values over the
points the verification evaluated.

Input is the list of verdict dictionaries produced by ``Verdict.as_dict()`` (the
interchange format between worker processes, the cache and the reports).  The JSON schema
is documented in README.md ("Report format").
"""

from __future__ import annotations

import html
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from rfcheck.claims import PAPERS

__all__ = [
    "certified_markdown",
    "columns",
    "counterexample_text",
    "diff_ledgers",
    "format_diff",
    "format_value",
    "headline",
    "machine",
    "plot_refuted",
    "read_ledger",
    "run_markdown",
    "summary_counts",
    "summary_markdown",
    "timing_markdown",
    "update_readme",
    "write_reports",
]

VERDICTS = ("HOLDS", "REFUTED", "INCONCLUSIVE")
#: REFUTED under some reading of an ambiguous statement, HOLDS under another (a column only when
#: some entry has it), and not a verdict about the claim: its computation raised (likewise)
MIXED, ERROR = "MIXED", "ERROR"


def columns(entries: list[dict[str, Any]]) -> tuple[str, ...]:
    """The statuses a summary of ``entries`` shows: the three verdicts, and MIXED and ERROR
    only where some entry has them.

    Parameters
    ----------
    entries : list of dict
        Ledger entries; only their ``"verdict"`` is read.

    Returns
    -------
    tuple of str
        ``("HOLDS", "REFUTED", "INCONCLUSIVE")``, then ``"MIXED"`` and ``"ERROR"`` where present.

    Examples
    --------
    >>> columns([{"verdict": "HOLDS"}, {"verdict": "ERROR"}])
    ('HOLDS', 'REFUTED', 'INCONCLUSIVE', 'ERROR')
    """
    return VERDICTS + tuple(v for v in (MIXED, ERROR) if any(e["verdict"] == v for e in entries))


def headline(entries: list[dict[str, Any]]) -> str:
    """The one-line summary of a ledger (README states it; ``tests/test_readme.py`` compares it
    with the stored ledger): ``"250 claims from 5 papers: 199 HOLDS, 40 REFUTED, 11 INCONCLUSIVE"``
    (and ``", N MIXED"``, ``", N ERROR"`` where some claim has that status).

    Parameters
    ----------
    entries : list of dict
        Ledger entries; their ``"paper"`` and ``"verdict"`` are read.

    Returns
    -------
    str
        The headline.

    Examples
    --------
    >>> headline([{"paper": "rfa", "verdict": "HOLDS"}, {"paper": "rfa", "verdict": "MIXED"}])
    '2 claims from 1 paper: 1 HOLDS, 0 REFUTED, 0 INCONCLUSIVE, 1 MIXED'
    """
    c = Counter(e["verdict"] for e in entries)
    papers = len({e["paper"] for e in entries})
    parts = [f"{c.get(v, 0)} {v}" for v in columns(entries)]
    return f"{len(entries)} claims from {papers} paper{'s' if papers != 1 else ''}: " + ", ".join(parts)


def summary_counts(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Counts per paper and verdict (and ``ERROR`` where some claim errored).

    Parameters
    ----------
    entries : list of dict
        Ledger entries; their ``"paper"`` and ``"verdict"`` are read.

    Returns
    -------
    dict
        ``{paper: {status: count}}`` over the statuses of :func:`columns`, papers sorted.

    Examples
    --------
    >>> summary_counts([{"paper": "rfa", "verdict": "HOLDS"}, {"paper": "crt", "verdict": "REFUTED"}])
    {'crt': {'HOLDS': 0, 'REFUTED': 1, 'INCONCLUSIVE': 0}, 'rfa': {'HOLDS': 1, 'REFUTED': 0, 'INCONCLUSIVE': 0}}
    """
    cols = columns(entries)
    out: dict[str, dict[str, int]] = {}
    for paper in sorted({e["paper"] for e in entries}):
        c = Counter(e["verdict"] for e in entries if e["paper"] == paper)
        out[paper] = {v: c.get(v, 0) for v in cols}
    return out


def certified_markdown(entries: list[dict[str, Any]]) -> str:
    """One sentence on the certified (Arb) evidence of a ledger: decided points certified, and claims
    certified at every decided point; ``""`` when no entry has decided points.

    Parameters
    ----------
    entries : list of dict
        Ledger entries (each with a ``certified`` record: ``points``, ``decided``).

    Returns
    -------
    str

    Examples
    --------
    >>> print(certified_markdown([{"certified": {"points": 3, "decided": 3}},
    ...                           {"certified": {"points": 1, "decided": 4}}]))  # doctest: +NORMALIZE_WHITESPACE
    Certified points (Arb balls of both sides decide them as the check did): 4 of the 7 decided points;
    1 of the 2 claims with decided points are certified at every one (every other point's check says
    why in the claim's report).
    """
    certs = [e.get("certified") or {} for e in entries]
    decided = sum(c.get("decided", 0) for c in certs)
    if not decided:
        return ""
    with_decided = [c for c in certs if c.get("decided", 0)]
    full = sum(1 for c in with_decided if c.get("points", 0) == c["decided"])
    return (f"Certified points (Arb balls of both sides decide them as the check did): "
            f"{sum(c.get('points', 0) for c in certs):,} of the {decided:,} decided points; "
            f"{full} of the {len(with_decided)} claims with decided points are certified at every one "
            f"(every other point's check says why in the claim's report).")


def summary_markdown(entries: list[dict[str, Any]]) -> str:
    """The ledger summary table (counts per paper and verdict) in Markdown, followed by the
    claims that errored and those with checks skipped for a missing optional extra.

    Parameters
    ----------
    entries : list of dict
        Ledger entries (``Verdict.as_dict()``); ``"paper"`` and ``"verdict"``
        are required, ``"reason"``, ``"certified"``, ``"reproduce"`` and ``"needs"`` are read
        for the MIXED, REFUTED, ERROR and skipped claims.

    Returns
    -------
    str
        Markdown: the table, then the lists (each after a blank line).

    Examples
    --------
    >>> print(summary_markdown([{"id": "rfa.eq1", "paper": "rfa", "verdict": "HOLDS"}]))
    | paper | claims | HOLDS | REFUTED | INCONCLUSIVE |
    | --- | ---: | ---: | ---: | ---: |
    | rfa | 1 | 1 | 0 | 0 |
    | **all** | 1 | 1 | 0 | 0 |
    """
    counts = summary_counts(entries)
    cols = columns(entries)
    lines = ["| paper | claims | " + " | ".join(cols) + " |", "| --- | ---: |" + " ---: |" * len(cols)]
    tot: Counter[str] = Counter()
    for paper, c in counts.items():
        tot.update(c)
        lines.append(f"| {paper} | {sum(c.values())} | " + " | ".join(str(c[v]) for v in cols) + " |")
    lines.append(f"| **all** | {sum(tot.values())} | " + " | ".join(str(tot[v]) for v in cols) + " |")
    mixed = [e for e in entries if e["verdict"] == MIXED]
    if mixed:
        lines += ["", f"MIXED (REFUTED under one reading of the printed notation, HOLDS under another): {len(mixed)}"]
        lines += [f"- `{e['id']}`: {e['reason']}" for e in mixed]
    certified = certified_markdown(entries)
    if certified:
        lines += ["", certified]
    wrong = [e for e in entries if e["verdict"] in ("REFUTED", MIXED)]
    if wrong:
        cert = [e for e in wrong if (e.get("certified") or {}).get("verdict")]
        lines += ["", f"Certified counterexamples (Arb balls of the two sides disjoint): {len(cert)} of the "
                      f"{len(wrong)} REFUTED/MIXED claims" + ("; not certified:" if len(cert) < len(wrong) else "")]
        lines += [f"- `{e['id']}`: {(e.get('certified') or {}).get('why_not') or 'no ball evaluation'}"
                  for e in wrong if e not in cert]
    errored = [e for e in entries if e["verdict"] == ERROR]
    if errored:
        lines += ["", f"ERROR (the computation raised; every other claim ran): {len(errored)}"]
        lines += [f"- `{e['id']}`: {e['reason']} -- `{e['reproduce']}`" for e in errored]
    needs: dict[str, list[str]] = {}
    for e in entries:
        for x in e.get("needs") or ():
            needs.setdefault(x, []).append(e["id"])
    for x, ids in sorted(needs.items()):
        lines += ["", f"Checks not run, rfcheck[{x}] is not installed (pip install 'rfcheck[{x}]'): "
                      + ", ".join(f"`{i}`" for i in ids)]
    return "\n".join(lines)


def format_value(v: Any) -> str:
    """A report value for a page: complex values (``{"re", "im"}``) as ``a+bi``, floats to 10 digits.

    Parameters
    ----------
    v : object
        A value of a ledger entry: a ``{"re": float, "im": float}`` dict, a float, or anything
        else (shown with ``str``).

    Returns
    -------
    str
        The value as shown in reports (complex parts to 6 significant digits).

    Examples
    --------
    >>> format_value(1 / 3), format_value({"re": 1.0, "im": -0.5}), format_value(7)
    ('0.3333333333', '1-0.5i', '7')
    """
    if isinstance(v, dict) and set(v) == {"re", "im"}:
        return f"{v['re']:.6g}{v['im']:+.6g}i"
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)


_fmt = format_value


def _worst_values(w: dict[str, Any]) -> str:
    """``printed = a, reference = b ± err (relative error r; discrepancy d x tolerance)``, with the
    deciding check's own names for the two values (an inequality's are rhs and lhs)."""
    first, second = w.get("labels") or ("printed", "reference")
    rel = w.get("rel_error")
    rel_s = f"relative error {rel:.3g}; " if isinstance(rel, float) else ""
    return (f"{first} = {_fmt(w.get('printed'))}, {second} = {_fmt(w.get('reference'))} ± {_fmt(w.get('err'))} "
            f"({rel_s}discrepancy {_fmt(w.get('disc'))} x tolerance)")


def _cell(text: str) -> str:
    """Text for a Markdown table cell: ``|`` escaped (``||v||^2`` must not split the row)."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def counterexample_text(e: dict[str, Any]) -> str:
    """A REFUTED entry's counterexample in a few plain lines: the point, the two values with the
    error bar, the correction (where one is registered) and the command that reproduces it.

    Parameters
    ----------
    e : dict
        A ledger entry (``Verdict.as_dict()``) with ``"evidence"``; its
        ``evidence["worst"]`` is the point shown.

    Returns
    -------
    str
        Two to four lines, without a trailing newline.
    """
    w = e["evidence"].get("worst") or {}
    pt = ", ".join(f"{k}={_fmt(v)}" for k, v in w.get("point", {}).items() if not k.startswith("_"))
    cert = e.get("certified") or {}
    tag = " [certified: Arb balls are disjoint]" if cert.get("verdict") else ""
    lines = [f"{e['id']} {e['verdict']}{tag} at {pt} ({e['evidence'].get('deciding_check')}):",
             f"  {_worst_values(w)}"]
    if e.get("correction"):
        lines.append(f"  correction: {e['correction']}")
    if e.get("reproduce_point"):
        lines.append(f"  reproduce: {e['reproduce_point']}")
    return "\n".join(lines)


def timing_markdown(entries: list[dict[str, Any]], top: int = 15) -> str:
    """Where a run's time went: the total claim-seconds and the ``top`` slowest claims (each
    entry's ``elapsed_s``, measured in the process that verified it; cached entries keep the
    time of the run that computed them).

    Parameters
    ----------
    entries : list of dict
        Ledger entries; their ``"id"`` and ``"elapsed_s"`` (missing: 0) are read.
    top : int, default 15
        How many of the slowest claims the table lists.

    Returns
    -------
    str
        Markdown: the total line and a ``| claim | seconds | share |`` table (empty when no
        time was recorded).

    Examples
    --------
    >>> print(timing_markdown([{"id": "a", "elapsed_s": 3.0}, {"id": "b", "elapsed_s": 1.0}], top=1))
    Claim-seconds: 4 over 2 claims; the slowest:
    <BLANKLINE>
    | claim | seconds | share |
    | --- | ---: | ---: |
    | `a` | 3.0 | 75.0% |
    """
    timed = sorted(((float(e.get("elapsed_s") or 0.0), e["id"]) for e in entries), reverse=True)
    total = sum(t for t, _ in timed)
    lines = [f"Claim-seconds: {total:.0f} over {len(entries)} claims; the slowest:", "",
             "| claim | seconds | share |", "| --- | ---: | ---: |"]
    lines += [f"| `{cid}` | {t:.1f} | {100 * t / total:.1f}% |" for t, cid in timed[:top] if total > 0]
    return "\n".join(lines)


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
        lines += [f"*Worst point* ({ev.get('deciding_check')}): {pt}  ", _worst_values(w), ""]
    if e.get("readings"):
        lines += ["| reading | natural | verdict | how the statement is read | why |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [f"| {_cell(r['name'])} | {'yes' if r['natural'] else ''} | {r['verdict']} | "
                  f"{_cell(r['description'])} | {_cell(r['reason'] or r['verdict_reason'])} |" for r in e["readings"]]
        lines += [f"*Correction ({r['name']} reading):* {r['correction']}" for r in e["readings"]
                  if r.get("correction")]
        lines += ["", "Checks of the reading shown:", ""]
    lines.append("| check | verdict | points | decided | violations | note |")
    lines.append("| --- | --- | ---: | ---: | ---: | --- |")
    for ch in ev["checks"]:
        lines.append(f"| {ch['name']} | {ch['verdict']} | {ch['points_tried']} | {ch['points_decided']} | "
                     f"{ch['violations']} | {_cell(ch['reason'])} |")
    lines.append("")
    cert = e.get("certified") or {}
    if e["verdict"] in ("REFUTED", MIXED):
        lines += ["*Certified:* yes -- the Arb balls of the two values are disjoint" if cert.get("verdict") else
                  f"*Certified:* no ({cert.get('why_not') or 'no ball evaluation'})", ""]
    if cert.get("points"):
        lines += [f"*Certified points:* {cert['points']} of {cert['decided']} decided", ""]
    if e.get("error"):
        lines += ["*Error:*", "", "```", e["error"].get("traceback", "").rstrip(), "```", ""]
    if e.get("correction"):
        lines += [f"*Correction:* {e['correction']}", ""]
    if e.get("notes"):
        lines += [f"*Notes:* {e['notes']}", ""]
    if e.get("_plot"):
        lines += [f"![printed vs reference for {e['id']}]({e['_plot']})", ""]
    lines += [f"Reproduce: `{e['reproduce']}`" + (f"  \nAt the worst point: `{e['reproduce_point']}`"
                                                   if e.get("reproduce_point") else ""), ""]
    return "\n".join(lines)


def _num(v: Any) -> float:
    """A real number from a report value (complex values by their real part; else NaN)."""
    if isinstance(v, dict) and set(v) == {"re", "im"}:
        return float(v["re"])
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _deciding_points(e: dict[str, Any]) -> tuple[str, list[dict[str, Any]], tuple[str, str] | None]:
    """The deciding check's name, its evaluated points and its side labels (``(printed, reference)``
    names of an inequality's sides, e.g. ``("rhs", "lhs")``; ``None`` for an equality)."""
    ev = e["evidence"]
    for ch in ev["checks"]:
        if ch["name"] == ev.get("deciding_check"):
            labels = tuple(ch.get("labels") or ("printed", "reference"))
            return ch["name"], ch.get("points") or [], (  # type: ignore[return-value]
                None if labels == ("printed", "reference") else labels)
    return "", [], None


def _signed_log(v: float, e0: int) -> float:
    """Signed decades above ``10^(e0 - 1)``: ``0 -> 0``, ``+-10^e0 -> +-1``, ``+-10^(e0 + k) -> +-(k + 1)``
    (values below ``10^e0`` in magnitude shrink linearly towards 0)."""
    a = abs(v)
    if a == 0:
        return 0.0
    t = math.log10(a) - e0 + 1 if a >= 10.0**e0 else a / 10.0**e0
    return math.copysign(t, v)


def _signed_log_ticks(axis: Any, e0: int, bins: int) -> None:
    """Integer ticks (a few, :class:`~matplotlib.ticker.MaxNLocator`) labelled as the values they stand
    for on a :func:`_signed_log` axis: ``0``, ``10^n``, ``-10^n``."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    def label(k: float, _pos: Any = None) -> str:
        k = round(k)
        return "0" if k == 0 else ("$-" if k < 0 else "$") + f"10^{{{abs(k) - 1 + e0}}}$"

    axis.set_major_locator(MaxNLocator(nbins=bins, integer=True))
    axis.set_major_formatter(FuncFormatter(label))


def plot_refuted(e: dict[str, Any], path: str | Path) -> Path | None:
    """Printed vs reference at every decided point of the deciding check (left: the two
    values against the parameter that varies most; right: reference vs printed, with the
    violations marked).  For an inequality (a check with side labels) the axes name its sides
    and the right panel shades the region where it holds (the smaller side, recorded as the
    reference, at most the larger one) instead of suggesting agreement on the diagonal.
    ``None`` if the evidence holds no plottable points.

    Parameters
    ----------
    e : dict
        A ledger entry whose deciding check recorded its points (``evidence["checks"][i]["points"]``).
    path : str or Path
        The PNG file to write (its folder is created).

    Returns
    -------
    Path or None
        ``path``, or ``None`` (nothing written) when fewer than two decided points have finite
        printed and reference values.
    """
    name, pts, labels = _deciding_points(e)
    p_lab, r_lab = labels or ("printed", "reference")
    pts = [p for p in pts if p.get("decided") and math.isfinite(_num(p["printed"])) and math.isfinite(
        _num(p["reference"]))]
    if len(pts) < 2:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in pts[0]["point"] if not k.startswith("_")]
    spread = {k: len({str(p["point"].get(k)) for p in pts}) for k in keys}
    xk = max(keys, key=lambda k: spread[k]) if keys else None
    xs = [_num(p["point"].get(xk)) if xk else i for i, p in enumerate(pts)]
    pr = [_num(p["printed"]) for p in pts]
    rf = [_num(p["reference"]) for p in pts]
    bad = [_num(p["disc"]) > 1 for p in pts]
    mags = [abs(v) for v in rf + pr if v != 0]
    e0 = math.floor(math.log10(min(mags))) if mags and max(mags) / min(mags) > 1e3 else None
    if e0 is not None:  # values span decades: both panels on a signed log axis
        rf, pr = [_signed_log(v, e0) for v in rf], [_signed_log(v, e0) for v in pr]
    unit = "" if e0 is None else " (signed log scale)"
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    a1.scatter(xs, rf, s=14, marker="o", facecolors="none", edgecolors="C0", label=r_lab)
    a1.scatter(xs, pr, s=10, marker="x", color="C3", label=p_lab)
    a1.set_xlabel(xk or "point")
    a1.set_ylabel("value" + unit)
    a1.legend(fontsize=8)
    lo, hi = min(rf + pr), max(rf + pr)
    a2.plot([lo, hi], [lo, hi], color="0.6", lw=0.8)
    if labels:  # an inequality: it holds where the recorded reference (smaller side) <= printed (larger side)
        a2.fill_between([lo, hi], [lo, hi], [hi, hi], color="C0", alpha=0.08, lw=0,
                        label=f"{r_lab} <= {p_lab}")
    good_lab, bad_lab = ("holds", "violated") if labels else ("agree", "disagree")
    a2.scatter([r for r, b in zip(rf, bad, strict=True) if not b], [p for p, b in zip(pr, bad, strict=True) if not b],
               s=10, color="C0", label=good_lab)
    a2.scatter([r for r, b in zip(rf, bad, strict=True) if b], [p for p, b in zip(pr, bad, strict=True) if b],
               s=14, color="C3", label=bad_lab)
    a2.set_xlabel(r_lab + unit)
    a2.set_ylabel(p_lab + unit)
    a2.legend(fontsize=8)
    if e0 is not None:
        for axis, bins in ((a1.yaxis, 6), (a2.xaxis, 4), (a2.yaxis, 6)):
            _signed_log_ticks(axis, e0, bins)
    what = f"{r_lab} vs {p_lab} ({name})" if labels else f"printed vs {name}"
    fig.suptitle(f"{e['id']} {e['verdict']}: {what} at {len(pts)} evaluated points", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _html_page(title: str, body: str) -> str:
    style = ("body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em}"
             ".HOLDS{color:#176}.REFUTED{color:#b00}.INCONCLUSIVE{color:#a60}.ERROR{color:#70a}.MIXED{color:#06a}code{background:#f4f4f4}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>{body}</body></html>\n")


def _html_table(rows: list[list[str]], head: list[str]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{trs}</table>"


def _summary_html(entries: list[dict[str, Any]]) -> str:
    counts = summary_counts(entries)
    cols = list(columns(entries))
    rows = [[p, str(sum(c.values()))] + [str(c[v]) for v in cols] for p, c in counts.items()]
    return _html_table(rows, ["paper", "claims", *cols])


def _entry_html(e: dict[str, Any]) -> str:
    esc = html.escape
    ev = e["evidence"]
    w = ev.get("worst") or {}
    out = [f"<h3 id='{esc(e['id'])}'><code>{esc(e['id'])}</code> — "
           f"<span class='{e['verdict']}'>{e['verdict']}</span></h3>",
           f"<p><i>Source:</i> {esc(e['source'])}<br><i>Statement (as printed):</i> {esc(e['statement'])}</p>",
           f"<p><i>Reason:</i> {esc(e['reason'])}</p>"]
    if w:
        pt = ", ".join(f"{k}={_fmt(v)}" for k, v in w.get("point", {}).items())
        out.append(f"<p><i>Worst point</i> ({esc(str(ev.get('deciding_check')))}): {esc(pt)}<br>"
                   f"{esc(_worst_values(w))}</p>")
    if e.get("readings"):
        out.append(_html_table([[esc(r["name"]), "yes" if r["natural"] else "",
                                 f"<span class='{r['verdict']}'>{r['verdict']}</span>", esc(r["description"]),
                                 esc(r["reason"] or r["verdict_reason"])] for r in e["readings"]],
                               ["reading", "natural", "verdict", "how the statement is read", "why"]))
    out.append(_html_table([[esc(c["name"]), f"<span class='{c['verdict']}'>{c['verdict']}</span>",
                             str(c["points_tried"]), str(c["points_decided"]), str(c["violations"]),
                             esc(c["reason"])] for c in ev["checks"]],
                           ["check", "verdict", "points", "decided", "violations", "note"]))
    if e.get("error"):
        out.append(f"<pre>{esc(e['error'].get('traceback', ''))}</pre>")
    if e.get("correction"):
        out.append(f"<p><i>Correction:</i> {esc(e['correction'])}</p>")
    if e.get("notes"):
        out.append(f"<p><i>Notes:</i> {esc(e['notes'])}</p>")
    if e.get("_plot"):
        out.append(f"<p><img src='{esc(e['_plot'])}' alt='printed vs reference' style='max-width:100%'></p>")
    out.append(f"<p>Reproduce: <code>{esc(e['reproduce'])}</code>"
               + (f"<br>At the worst point: <code>{esc(e['reproduce_point'])}</code>" if e.get("reproduce_point")
                  else "") + "</p>")
    return "\n".join(out)


def machine() -> dict[str, Any]:
    """The machine a run is measured on: processor, cores, vector instruction set, platform and the
    versions of the numerical libraries (numbers in ``run.json`` are only comparable on one machine).

    Returns
    -------
    dict
        ``cpu``, ``cores`` (:func:`os.cpu_count`), ``simd`` (``"AVX-512"``, ``"AVX2"``, ``"NEON"`` or
        ``""``), ``platform``, ``python`` and ``versions`` (numpy, numba, mpmath, gmpy2 -- the
        integers under mpmath -- and python-flint).
    """
    import os
    import platform
    from importlib import metadata

    cpu, flags = platform.processor() or platform.machine(), ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key = line.split(":", 1)[0].strip()
            if key == "model name" and cpu in ("", platform.machine(), platform.processor()):
                cpu = line.split(":", 1)[1].strip()
            elif key in ("flags", "Features") and not flags:
                flags = line.split(":", 1)[1]
    except OSError:
        pass
    words = set(flags.split())
    simd = ("AVX-512" if "avx512f" in words else "AVX2" if "avx2" in words
            else "NEON" if {"asimd", "neon"} & words or platform.machine() in ("arm64", "aarch64") else "")
    versions = {}
    for dist in ("numpy", "numba", "mpmath", "gmpy2", "python-flint"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {"cpu": cpu, "cores": os.cpu_count(), "simd": simd, "platform": platform.platform(),
            "python": platform.python_version(), "versions": versions}


def run_markdown(run: dict[str, Any]) -> str:
    """One paragraph on how long a ledger run took and where: the ``run.json`` that
    ``rfcheck verify --report`` writes (wall time, jobs, claims computed and taken from the cache,
    claim-seconds, the machine).

    Parameters
    ----------
    run : dict
        The run record: ``"claims"`` and ``"wall_s"`` are required; ``"cached"``, ``"jobs"``,
        ``"command"``, ``"claim_seconds"``, ``"started"`` and ``"machine"`` (``cpu``, ``cores``,
        ``simd``, ``python``) are shown where present.

    Returns
    -------
    str
        One Markdown paragraph.
    """
    m = run.get("machine") or {}
    cached = run.get("cached", 0)
    how = (f"{run['claims'] - cached} computed, {cached} from the verdict cache" if cached
           else "every claim computed (no cache)")
    return (f"`{run.get('command', 'rfcheck verify')}`: {run['claims']} claims in **{run['wall_s']:.0f} s** wall "
            f"({run['wall_s'] / 60:.1f} min) with {run.get('jobs')} worker process(es), {how}; "
            f"{run.get('claim_seconds', 0):.0f} claim-seconds; started {run.get('started', '?')}. "
            f"Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('simd') or 'no wide SIMD'}, "
            f"Python {m.get('python', '?')}.")


def write_reports(entries: list[dict[str, Any]], out_dir: str | Path, *, plots: bool = True,
                  run: dict[str, Any] | None = None) -> list[Path]:
    """Write ``ledger.json``, ``<paper>.json``, ``<paper>.md``, ``<paper>.html``, ``index.md``,
    ``index.html`` and (``plots``) ``plots/<claim id>.png`` for every REFUTED claim into ``out_dir``;
    with ``run`` (wall time, jobs, machine: what ``rfcheck verify`` measured) also ``run.json``,
    summarised at the top of ``index.md`` (:func:`run_markdown`).

    Parameters
    ----------
    entries : list of dict
        Ledger entries (``Verdict.as_dict()`` or :func:`rfcheck.verify.error_entry`).
    out_dir : str or Path
        The report folder (created if missing; files in it are overwritten).
    plots : bool, default True
        Draw :func:`plot_refuted` for every REFUTED or MIXED claim (needs matplotlib).
    run : dict, optional
        The run record for ``run.json`` and :func:`run_markdown` (default: none written).

    Returns
    -------
    list of Path
        Every file written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    p = out / "ledger.json"
    p.write_text(json.dumps(entries, indent=2, default=str))
    written.append(p)
    if run is not None:
        p = out / "run.json"
        p.write_text(json.dumps(run, indent=2, default=str))
        written.append(p)
    shown = []
    for e in entries:
        e = dict(e)
        if plots and e["verdict"] in ("REFUTED", MIXED):
            img = plot_refuted(e, out / "plots" / f"{e['id']}.png")
            if img is not None:
                e["_plot"] = f"plots/{img.name}"
                written.append(img)
        shown.append(e)
    index = ["# rfcheck ledger", "", summary_markdown(entries), "", *([run_markdown(run), ""] if run else []),
             timing_markdown(entries), ""]
    index_html = ["<h1>rfcheck ledger</h1>", _summary_html(entries), "<ul>"]
    for paper in sorted({e["paper"] for e in entries}):
        ents = [e for e in entries if e["paper"] == paper]
        shown_p = [e for e in shown if e["paper"] == paper]
        pj = out / f"{paper}.json"
        pj.write_text(json.dumps(ents, indent=2, default=str))
        title = PAPERS.get(paper, paper)
        md = [f"# {title}", "", summary_markdown(ents), ""]
        md += [_entry_markdown(e) for e in shown_p]
        pm = out / f"{paper}.md"
        pm.write_text("\n".join(md))
        ph = out / f"{paper}.html"
        ph.write_text(_html_page(title, f"<h1>{html.escape(title)}</h1>" + _summary_html(ents)
                                 + "".join(_entry_html(e) for e in shown_p)))
        written += [pj, pm, ph]
        index.append(f"- [{paper}]({paper}.md): {title}")
        index_html.append(f"<li><a href='{paper}.html'>{paper}</a>: {html.escape(title)}</li>")
    pi = out / "index.md"
    pi.write_text("\n".join(index) + "\n")
    ph = out / "index.html"
    ph.write_text(_html_page("rfcheck ledger", "".join(index_html) + "</ul>"))
    written += [pi, ph]
    return written


README_START = "<!-- ledger:start (generated by `rfcheck verify --all --update-readme`; do not edit) -->"
README_END = "<!-- ledger:end -->"


def update_readme(entries: list[dict[str, Any]], readme: str | Path, command: str = "") -> None:
    """Replace the ledger block of README.md with the ledger's headline (:func:`headline`);
    the tables live in the report and the documentation, not in README.

    Parameters
    ----------
    entries : list of dict
        Ledger entries, summarised by :func:`headline`.
    readme : str or Path
        The README file, rewritten in place between ``README_START`` and ``README_END``.
    command : str, default ""
        Not used (kept for callers that pass the command of the run).

    Raises
    ------
    ValueError
        If the file lacks ``README_START`` or ``README_END``.
    """
    path = Path(readme)
    text = path.read_text()
    if README_START not in text or README_END not in text:
        raise ValueError(f"{path} has no ledger block ({README_START!r} ... {README_END!r})")
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(f"{head}{README_START}\n{headline(entries)}\n{README_END}{tail}")


def read_ledger(path: str | Path) -> dict[str, dict[str, Any]]:
    """id -> ``{"verdict", "deciding_check", "readings"}`` of a stored ledger: a ``ledger.json``
    written by ``rfcheck verify --report``, or a Markdown ledger table (``| `id` | verdict |
    deciding reference |`` rows, as ``--update-readme`` wrote them).

    Parameters
    ----------
    path : str or Path
        The ledger file: ``*.json`` is read as a ``ledger.json``, any other suffix as Markdown.

    Returns
    -------
    dict
        ``{claim id: {"verdict": str, "deciding_check": str or None, "readings": {name: verdict}}}``
        (no readings from a Markdown table).

    Raises
    ------
    ValueError
        If the file cannot be read, a ``.json`` file is not a list of ledger entries, or a
        Markdown file has no ledger row.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d, "ledger.md")
    ...     _ = p.write_text("| `rfa.eq3` | REFUTED | quadrature |")
    ...     read_ledger(p)
    {'rfa.eq3': {'verdict': 'REFUTED', 'deciding_check': 'quadrature', 'readings': {}}}
    """
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ValueError(f"cannot read the ledger {p}: {exc.strerror}") from None
    if p.suffix == ".json":
        try:
            return {e["id"]: {"verdict": e["verdict"], "deciding_check": e["evidence"].get("deciding_check"),
                              "readings": {r["name"]: r["verdict"] for r in e.get("readings") or ()}}
                    for e in json.loads(text)}
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{p}: not a ledger.json written by rfcheck verify --report ({exc})") from None
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[1] in (*VERDICTS, MIXED, ERROR):
            deciding = None if cells[2] in ("None", "-", "") else cells[2]  # as JSON's null was printed
            out[cells[0].strip("`")] = {"verdict": cells[1], "deciding_check": deciding, "readings": {}}
    if not out:
        raise ValueError(f"{p}: no ledger rows found")
    return out


def diff_ledgers(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Claim by claim: every id whose verdict or deciding reference differs, or that exists on
    one side only (``None`` there).

    Parameters
    ----------
    before, after : dict
        ``{claim id: {"verdict", "deciding_check", ...}}``, as :func:`read_ledger` returns.

    Returns
    -------
    list of dict
        ``{"id", "before", "after"}`` per differing claim, sorted by id; empty when the two
        ledgers agree.

    Examples
    --------
    >>> b = {"x.eq1": {"verdict": "HOLDS", "deciding_check": "quadrature"}}
    >>> a = {"x.eq1": {"verdict": "REFUTED", "deciding_check": "quadrature"}}
    >>> [r["id"] for r in diff_ledgers(b, a)], diff_ledgers(b, b)
    (['x.eq1'], [])
    """
    rows = []
    for cid in sorted(set(before) | set(after)):
        b, a = before.get(cid), after.get(cid)
        if b is None or a is None or (b["verdict"], b["deciding_check"]) != (a["verdict"], a["deciding_check"]):
            rows.append({"id": cid, "before": b, "after": a})
    return rows


def format_diff(rows: list[dict[str, Any]], n_before: int, n_after: int) -> str:
    """The ledger diff as a Markdown table (or one line saying the ledgers agree).

    Parameters
    ----------
    rows : list of dict
        The differing claims, as :func:`diff_ledgers` returns them.
    n_before, n_after : int
        How many claims each ledger has.

    Returns
    -------
    str
        Markdown: a count line, then a ``| claim | before | after |`` table when ``rows``.

    Examples
    --------
    >>> format_diff([], 248, 248)
    '248 claims before, 248 after: every verdict and deciding reference unchanged.'
    """
    head = f"{n_before} claims before, {n_after} after: "
    if not rows:
        return head + "every verdict and deciding reference unchanged."

    def cell(x: dict[str, Any] | None) -> str:
        if x is None:
            return "(absent)"
        r = ", ".join(f"{k}: {v}" for k, v in x.get("readings", {}).items())
        return f"{x['verdict']} ({x['deciding_check']})" + (f"; readings {r}" if r else "")

    lines = [head + f"{len(rows)} changed.", "", "| claim | before | after |", "| --- | --- | --- |"]
    lines += [f"| `{r['id']}` | {cell(r['before'])} | {cell(r['after'])} |" for r in rows]
    return "\n".join(lines)

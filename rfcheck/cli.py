"""Command line: ``rfcheck list | verify | plot | bench``.

Bad input never produces a traceback: a ``ValueError`` (the package's way of naming a
violated condition) is printed as one line ``rfcheck: error: ...`` with exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["main"]


def _parse_at(text: str) -> dict[str, Any]:
    """``'d=3,nx=1.5,s=-1,mech=trig'`` -> dict with ints, floats, complex or strings."""
    out: dict[str, Any] = {}
    for part in filter(None, (t.strip() for t in text.split(","))):
        if "=" not in part:
            raise ValueError(f"--at expects name=value pairs separated by commas; got {part!r}")
        k, v = (s.strip() for s in part.split("=", 1))
        v = v.strip("'\"")
        for conv in (int, float, complex):
            try:
                out[k] = conv(v)
                break
            except ValueError:
                continue
        else:
            out[k] = v
    return out


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, width=max(100, int(os.environ.get("COLUMNS", "0") or 0)))


def _verdict_style(v: str) -> str:
    return {"HOLDS": "green", "REFUTED": "bold red", "INCONCLUSIVE": "yellow"}.get(v, "")


def cmd_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from rfcheck.verify import select

    claims = select(papers=args.paper or [], all_=not args.paper)
    t = Table(title=f"{len(claims)} registered claims")
    t.add_column("id", no_wrap=True)
    t.add_column("source")
    t.add_column("checks")
    for c in claims:
        t.add_row(c.id, c.source, ", ".join(ch.name for ch in c.checks) or "-")
    _console().print(t)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from rfcheck import report, verify

    con = _console()
    if args.at is not None:
        if len(args.claim or []) != 1:
            raise ValueError("--at needs exactly one --claim")
        v = verify.evaluate_at(args.claim[0], _parse_at(args.at), seed=args.seed, budget=args.budget)
        entries = [v.as_dict()]
        for ch in v.checks:
            w = ch.worst.as_dict() if ch.worst else {}
            con.print(f"[bold]{ch.name}[/]: {ch.verdict} -- printed {w.get('printed')}, reference "
                      f"{w.get('reference')} ± {w.get('err')}, discrepancy {w.get('disc')} {w.get('note', '')}")
    else:
        claims = verify.select(args.claim or [], args.paper or [], args.all)
        ids = [c.id for c in claims]
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), console=con, transient=not con.is_terminal) as prog:
            task = prog.add_task("verifying", total=len(ids))

            def progress(cid: str, entry: dict[str, Any] | None) -> None:
                if entry is None:
                    prog.update(task, description=f"verifying {cid}")
                else:
                    prog.advance(task)

            entries = verify.run_many(ids, budget=args.budget, seed=args.seed, jobs=args.jobs,
                                      cache_dir=None if args.no_cache else args.cache_dir, progress=progress,
                                      scheduler=args.scheduler)
    t = Table(title=f"rfcheck ledger (budget {args.budget}, seed {args.seed})")
    for col in ("claim", "verdict", "deciding check", "reason"):
        t.add_column(col, overflow="fold")
    for e in entries:
        t.add_row(e["id"], f"[{_verdict_style(e['verdict'])}]{e['verdict']}[/]",
                  str(e["evidence"].get("deciding_check")), e["reason"])
    con.print(t)
    con.print(report.summary_markdown(entries))
    if args.report:
        paths = report.write_reports(entries, args.report)
        con.print(f"reports written: {', '.join(str(p) for p in paths)}")
    if args.update_readme:
        cmd = f"rfcheck verify --all --budget {args.budget} --seed {args.seed}"
        report.update_readme(entries, args.update_readme, cmd)
        con.print(f"ledger summary written into {args.update_readme}")
    if args.strict and any(e["verdict"] == "REFUTED" for e in entries):
        return 1
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from rfcheck.plots import FIGURES, write_index

    if args.index:
        print(write_index(args.out))
        return 0
    if args.figure is None:
        raise ValueError(f"name a figure (one of {', '.join(sorted(FIGURES))}) or pass --index")
    if args.figure not in FIGURES:
        raise ValueError(f"unknown figure {args.figure!r}; available: {', '.join(sorted(FIGURES))}")
    paths = FIGURES[args.figure](out_dir=args.out, quick=args.quick, seed=args.seed)
    for p in paths:
        print(p)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    import json

    if args.workload == "attention":
        try:
            from rfcheck.attention import bench as abench
        except ImportError as exc:
            raise ValueError(str(exc)) from None

        print(abench.HEADER, file=sys.stderr, flush=True)
        entries = abench.run_attention_bench(
            min_len=args.min_len, max_len=args.max_len, exact_mem=args.exact_mem, repeats=args.repeats,
            precision=args.precision,
            progress=lambda e: print(abench.format_entry(e), file=sys.stderr, flush=True))
        print(abench.format_bench(entries))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"entries": entries, "summary": abench.summarise(entries)}, fh, indent=2)
            print(f"wrote {args.json}")
        return 0

    from rfcheck import bench

    if args.summarise:
        runs = []
        for path in args.summarise:
            try:
                with open(path) as fh:
                    runs.append(json.load(fh))
            except (OSError, json.JSONDecodeError) as exc:
                raise ValueError(f"cannot read bench output {path}: {exc}") from None
        print(bench.format_summary(bench.summarise_runs(runs)))
        return 0
    entries = bench.run_bench(quick=args.quick)
    print(bench.format_table(entries))
    discrete = bench.run_discrete_bench(quick=args.quick)
    print()
    print(bench.format_discrete_table(discrete))
    entries = entries + bench.targets(entries) + discrete
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(entries, fh, indent=2)
        print(f"wrote {args.json}")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    import json

    from rfcheck import calibrate

    con = _console()
    fa = [] if args.skip_false_alarms else calibrate.false_alarms(
        n_seeds=args.seeds, alpha=args.alpha, progress=lambda c: con.print(f"false alarms: {c}"))
    mp_rows = [] if args.skip_mutants else calibrate.mutation_power(
        budget=args.budget, progress=lambda m: con.print(f"mutant: {m}"))
    print(calibrate.format_tables(fa, mp_rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"false_alarms": fa, "mutation_power": mp_rows}, fh, indent=2)
        print(f"wrote {args.json}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rfcheck", description="Verify formulas about random-feature estimators.")
    sub = p.add_subparsers(dest="command", required=True)

    lp = sub.add_parser("list", help="show the registered claims")
    lp.add_argument("--paper", action="append", help="only this paper (crt, darkformer, rfa, simrf, hrf)")
    lp.set_defaults(func=cmd_list)

    vp = sub.add_parser("verify", help="compute verdicts for claims")
    vp.add_argument("--claim", action="append", metavar="ID", help="claim id (repeatable)")
    vp.add_argument("--paper", action="append", metavar="P", help="every claim of paper P (repeatable)")
    vp.add_argument("--all", action="store_true", help="every registered claim")
    vp.add_argument("--seed", type=int, default=0)
    vp.add_argument("--budget", default="default", choices=["smoke", "default", "thorough"])
    vp.add_argument("--report", metavar="DIR", help="write JSON and Markdown reports into DIR")
    vp.add_argument("--strict", action="store_true", help="exit 1 if any claim is REFUTED")
    vp.add_argument("--at", metavar="K=V,...", help="evaluate one claim's checks at this point only")
    vp.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    vp.add_argument("--scheduler", metavar="ADDRESS",
                    help="run the claims on a Dask distributed scheduler (e.g. tcp://host:8786; extra rfcheck[dask])")
    vp.add_argument("--cache-dir", default=".rfcheck-cache", help="cache of verdicts (resume)")
    vp.add_argument("--no-cache", action="store_true")
    vp.add_argument("--update-readme", nargs="?", const="README.md", metavar="PATH",
                    help="rewrite the ledger block of README.md with this run's summary")
    vp.set_defaults(func=cmd_verify)

    pp = sub.add_parser("plot", help="reproduce a paper figure into figures/")
    pp.add_argument("figure", nargs="?", help="e.g. crt-fig1")
    pp.add_argument("--index", action="store_true", help="write OUT/index.md listing every figure")
    pp.add_argument("--out", default="figures")
    pp.add_argument("--quick", action="store_true", help="small Monte Carlo sizes")
    pp.add_argument("--seed", type=int, default=0)
    pp.set_defaults(func=cmd_plot)

    cp = sub.add_parser("calibrate", help="false-alarm rates and mutation power of the checks")
    cp.add_argument("--seeds", type=int, default=200)
    cp.add_argument("--alpha", type=float, default=0.05, help="calibration false-alarm level")
    cp.add_argument("--budget", default="default", choices=["smoke", "default", "thorough"])
    cp.add_argument("--json", metavar="PATH")
    cp.add_argument("--skip-false-alarms", action="store_true")
    cp.add_argument("--skip-mutants", action="store_true")
    cp.set_defaults(func=cmd_calibrate)

    bp = sub.add_parser("bench", help="Monte Carlo engine speed vs a NumPy baseline; 'bench attention': scaling")
    bp.add_argument("workload", nargs="?", default="engine", choices=["engine", "attention"],
                    help="engine (default) or attention (exact vs linear attention, time and memory vs L; needs jax)")
    bp.add_argument("--json", metavar="PATH")
    bp.add_argument("--quick", action="store_true")
    bp.add_argument("--summarise", nargs="+", metavar="JSON",
                    help="engine: no timing; median and range over stored --json outputs of earlier runs")
    bp.add_argument("--min-len", type=int, default=1024, help="attention: smallest L")
    bp.add_argument("--max-len", type=int, default=None,
                    help="attention: largest L (doubling from --min-len; default 65536 on CPU, 262144 on a GPU)")
    bp.add_argument("--exact-mem", type=float, default=4 * 2**30, help="attention: skip exact beyond this many bytes")
    bp.add_argument("--repeats", type=int, default=3, help="attention: best of this many timed runs")
    # the choices repeat rfcheck.attention._api.PRECISIONS so that building the parser needs no JAX (a test ties them)
    bp.add_argument("--precision", default="highest", choices=["highest", "high", "default"],
                    help="attention: matmul precision (highest: float32 products; default: backend's, TF32 on GPUs)")
    bp.set_defaults(func=cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        print(f"rfcheck: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rfcheck: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: still one line, the traceback on request
        if os.environ.get("RFCHECK_DEBUG"):
            raise
        print(f"rfcheck: internal error: {type(exc).__name__}: {exc} (rerun with RFCHECK_DEBUG=1 for the "
              "traceback, and please report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

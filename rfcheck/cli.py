"""Command line: ``rfcheck list | verify | plot | bench``.

Bad input never produces a traceback: a ``ValueError`` (the package's way of naming a
violated condition) is printed as one line ``rfcheck: error: ...`` with exit status 2.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["main"]


def _parse_at(text: str) -> dict[str, Any]:
    """``'d=3,nx=1.5,s=-1,mech=trig'`` -> dict with bools, ints, floats, complex or strings."""
    out: dict[str, Any] = {}
    for part in filter(None, (t.strip() for t in text.split(","))):
        if "=" not in part:
            raise ValueError(f"--at expects name=value pairs separated by commas; got {part!r}")
        k, v = (s.strip() for s in part.split("=", 1))
        v = v.strip("'\"")
        if v in ("True", "False"):
            out[k] = v == "True"
            continue
        for conv in (int, float, complex):
            try:
                out[k] = conv(v)
                break
            except ValueError:
                continue
        else:
            out[k] = v
    return out


#: defaults of the 'bench attention' options (None on the parser, so that the engine bench can
#: refuse them when given)
ATTENTION_DEFAULTS = {"min_len": 1024, "exact_mem": 4 * 2**30, "repeats": 3, "precision": "highest"}


def _typed(conv: Callable[[str], Any], ok: Callable[[Any], bool], must: str) -> Callable[[str], Any]:
    """argparse type: ``conv(text)`` that satisfies ``ok`` (else the error says it must ``must``)."""
    def parse(text: str) -> Any:
        try:
            v = conv(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if conv is int else 'a number'}, "
                                             f"got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"must {must}, got {text}")
        return v
    return parse


def _count(lo: int) -> Callable[[str], int]:
    """argparse type: an integer >= ``lo``."""
    return _typed(int, lambda v: v >= lo, f"be >= {lo}")


_level = _typed(float, lambda v: 0 < v < 1, "lie in (0, 1)")  # a false-alarm level
_positive = _typed(float, lambda v: math.isfinite(v) and v > 0, "be a finite number > 0")


def _writable_dir(path: str, option: str) -> None:
    """Fail before the work, not after it: ``path`` is (or can be made) a writable directory."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot create the directory ({exc.strerror})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {path}: directory is not writable")


def _writable_file(path: str, option: str, *, must_exist: bool = False) -> None:
    """``path`` can be written (its directory exists and is writable; it is not a directory)."""
    if os.path.isdir(path):
        raise ValueError(f"{option} {path}: is a directory")
    if must_exist and not os.path.isfile(path):
        raise ValueError(f"{option} {path}: no such file")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ValueError(f"{option} {path}: no such directory {parent}")
    if not os.access(path if os.path.exists(path) else parent, os.W_OK):
        raise ValueError(f"{option} {path}: not writable")


def _attempt(what: str, fn: Callable[[], Any], failures: list[str]) -> Any:
    """``fn()``; when it raises, the failure is recorded as ``"<what>: <Type>: <message>"`` and
    None returned, so that a command with several parts finishes and writes the others."""
    try:
        return fn()
    except Exception as exc:
        if os.environ.get("RFCHECK_DEBUG"):
            raise
        failures.append(f"{what}: {type(exc).__name__}: {exc}")
        print(f"rfcheck: failed: {failures[-1]}", file=sys.stderr, flush=True)
        return None


def _failed(failures: list[str], done: str) -> int:
    """Exit status of a command with several parts: 0, or 1 after listing what failed."""
    if not failures:
        return 0
    print(f"rfcheck: {len(failures)} part(s) failed ({done}):", file=sys.stderr)
    for f in failures:
        print(f"  - {f}", file=sys.stderr)
    return 1


def _write_json(path: str | None, obj: Any) -> None:
    """Write ``obj`` to ``path`` (if given) atomically: a partial result is never a torn file."""
    import json

    if path:
        tmp = f"{path}.tmp"
        with open(tmp, "w") as fh:
            json.dump(obj, fh, indent=2, default=str)
        os.replace(tmp, path)


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, width=max(100, int(os.environ.get("COLUMNS", "0") or 0)))


def _esc(text: object) -> str:
    """Text shown as is by rich (``rfcheck[jax]`` is not a markup tag)."""
    from rich.markup import escape

    return escape(str(text))


def _verdict_style(v: str) -> str:
    return {"HOLDS": "green", "REFUTED": "bold red", "INCONCLUSIVE": "yellow", "ERROR": "bold magenta",
            "MIXED": "bold cyan"}.get(v, "")


#: the ledger stored by ``rfcheck verify --all --report results/ledger`` in a source checkout
STORED_LEDGER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results", "ledger",
                             "ledger.json")


def _expected_seconds(path: str = STORED_LEDGER) -> dict[str, float]:
    """Each claim's time in the stored ledger (the pool starts the longest first); {} without one."""
    try:
        return {cid: float(e.get("elapsed_s") or 0.0) for cid, e in _stored_verdicts(path).items()}
    except ValueError:
        return {}


def _stored_verdicts(path: str) -> dict[str, dict[str, Any]]:
    """id -> entry of a stored ``ledger.json`` ({} when there is none)."""
    import json

    try:
        with open(path) as fh:
            return {e["id"]: e for e in json.load(fh)}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"--ledger {path}: not a ledger.json written by rfcheck verify --report ({exc})") from None


def cmd_list(args: argparse.Namespace) -> int:
    """Claims with a short statement and their last known verdict (from the stored ledger and,
    for claims it lacks, ``-``); without ``--claims`` the stored ledger alone is read (fast)."""
    from rich import box
    from rich.table import Table

    known = _stored_verdicts(args.ledger)
    if known and not args.claims:
        rows = [(e["id"], e["paper"], e.get("statement", ""), e["verdict"]) for e in known.values()]
    else:
        from rfcheck.claims import load_claims
        from rfcheck.verify import select

        for src in args.claims or []:
            load_claims(src)
        rows = [(c.id, c.paper, c.statement, known.get(c.id, {}).get("verdict", "-")) for c in select(all_=True)]
    papers = {p.lower() for p in args.paper or []}
    verdicts = {v.upper() for v in args.verdict or []}
    unknown = papers - {r[1] for r in rows}
    if unknown:
        have = ", ".join(sorted({r[1] for r in rows}))
        raise ValueError(f"no claims of paper {sorted(unknown)[0]!r}; papers: {have}")
    rows = [r for r in rows if (not papers or r[1] in papers) and (not verdicts or r[3] in verdicts)]
    t = Table(title=f"{len(rows)} claims" + (f" (verdicts of {args.ledger})" if known else ""), box=box.SIMPLE)
    t.add_column("id", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("statement", no_wrap=True, overflow="ellipsis", max_width=90)
    for cid, _, statement, verdict in rows:
        style = _verdict_style(verdict)
        t.add_row(cid, f"[{style}]{verdict}[/]" if style else _esc(verdict), _esc(" ".join(statement.split())))
    _console().print(t)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from rfcheck import report, verify
    from rfcheck.claims import load_claims

    con = _console()
    if args.all and (args.claim or args.paper):
        raise ValueError("--all selects every claim: drop --claim/--paper, or drop --all")
    pack_ids = [cid for src in args.claims or [] for cid in load_claims(src)]
    if not (args.all or args.claim or args.paper or pack_ids):
        raise ValueError("name the claims to verify: --claim ID, --paper P, --claims FILE, or --all")
    if args.report:
        _writable_dir(args.report, "--report")
    if args.update_readme:
        _writable_file(args.update_readme, "--update-readme", must_exist=True)
    if args.at is None and not args.no_cache:
        _writable_dir(args.cache_dir, "--cache-dir")
    if args.point_index and args.at is None:
        raise ValueError("--point-index goes with --at (the index of that point in the run that reported it)")
    if args.at is not None:
        if len(args.claim or []) != 1:
            raise ValueError("--at needs exactly one --claim")
        v = verify.evaluate_at(args.claim[0], _parse_at(args.at), seed=args.seed, budget=args.budget,
                               point_index=args.point_index)
        entries = [v.as_dict()]
        for ch in v.checks:
            w = ch.worst.as_dict() if ch.worst else {}
            con.print(f"[bold]{_esc(ch.name)}[/]: " + _esc(
                f"{ch.verdict} -- printed {w.get('printed')}, reference {w.get('reference')} ± {w.get('err')}, "
                f"discrepancy {w.get('disc')} {w.get('note', '') or ch.reason}"))
    else:
        if args.claim or args.paper or args.all:
            ids = [c.id for c in verify.select(args.claim or [], args.paper or [], args.all)]
        else:
            ids = pack_ids
        if args.budget == "smoke":
            con.print("budget smoke: a quick look (few points, 20,000 Monte Carlo trials); its verdicts may disagree "
                      "with the default budget's")
        finished: list[str] = []
        started, t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.perf_counter()
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), console=con, transient=not con.is_terminal) as prog:
            task = prog.add_task("verifying", total=len(ids))

            running: dict[str, str] = {}

            def show() -> None:
                prog.update(task, description="verifying " + ("; ".join(
                    f"{c} ({d})" if d else c for c, d in running.items()) or "..."))

            def points(cid: str, check: str, k: int, n: int) -> None:  # progress inside a long claim
                if cid not in finished:
                    running[cid] = f"{check}: {k}/{n} points"
                    show()

            def progress(cid: str, entry: dict[str, Any] | None) -> None:
                if entry is None:
                    running[cid] = ""
                    show()
                else:
                    running.pop(cid, None)
                    show()
                    finished.append(cid)
                    prog.advance(task)
                    if not con.is_terminal:  # a log, not a progress bar: one line per finished claim
                        print(f"[{len(finished)}/{len(ids)}] {cid}: {entry['verdict']} ({entry.get('elapsed_s', 0)} s"
                              f"{', cached' if entry.get('cached') else ''})", flush=True)
                    if entry["verdict"] == "ERROR":
                        prog.console.print(f"[bold magenta]ERROR[/] {cid}: {_esc(entry['reason'])}")

            try:
                entries = verify.run_many(ids, budget=args.budget, seed=args.seed, jobs=args.jobs,
                                          cache_dir=None if args.no_cache else args.cache_dir, progress=progress,
                                          scheduler=args.scheduler, points=points,
                                          expected_s=_expected_seconds())
            except KeyboardInterrupt:
                kept = (f"their verdicts are cached in {args.cache_dir}: rerun the same command to resume"
                        if not args.no_cache else "--no-cache: nothing was kept")
                raise KeyboardInterrupt(f"{len(finished)} of {len(ids)} claims had finished; {kept}") from None
    t = Table(title=f"rfcheck ledger (budget {args.budget}, seed {args.seed})")
    for col in ("claim", "verdict", "deciding check", "reason"):
        t.add_column(col, overflow="fold")
    for e in entries:
        t.add_row(e["id"], f"[{_verdict_style(e['verdict'])}]{e['verdict']}[/]",
                  _esc(e["evidence"].get("deciding_check")), _esc(e["reason"]))
    con.print(t)
    for e in entries:  # each counterexample where the reader is, not only in --report
        if e["verdict"] in ("REFUTED", "MIXED") and e["evidence"].get("worst"):
            con.print(_esc(report.counterexample_text(e)))
    con.print(_esc(report.summary_markdown(entries)))
    if args.report:
        run = None
        if args.at is None:
            run = {"command": "rfcheck " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["verify"] else
                   f"rfcheck verify ({len(entries)} claims)", "started": started,
                   "wall_s": round(time.perf_counter() - t0, 1), "jobs": args.jobs, "budget": args.budget,
                   "seed": args.seed, "claims": len(entries), "cached": sum(bool(e.get("cached")) for e in entries),
                   "claim_seconds": round(sum(float(e.get("elapsed_s") or 0) for e in entries), 1),
                   "machine": report.machine()}
        paths = report.write_reports(entries, args.report, run=run)
        con.print(f"reports written: {', '.join(str(p) for p in paths)}")
    if args.update_readme:
        cmd = f"rfcheck verify --all --budget {args.budget} --seed {args.seed}"
        report.update_readme(entries, args.update_readme, cmd)
        con.print(f"ledger summary written into {args.update_readme}")
    if any(e["verdict"] == "ERROR" for e in entries):
        return 1
    failing = ("REFUTED", "MIXED") if args.strict == "literal" else ("REFUTED",)
    if args.strict and any(e["verdict"] in failing for e in entries):
        return 1
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    """Claim-by-claim differences of two stored ledgers (exit 1 when any verdict moved)."""
    from rfcheck import report

    before, after = report.read_ledger(args.before), report.read_ledger(args.after)
    rows = report.diff_ledgers(before, after)
    print(report.format_diff(rows, len(before), len(after)))
    return 1 if rows else 0


def cmd_plot(args: argparse.Namespace) -> int:
    from rfcheck.plots import FIGURES, write_index

    if args.index and (args.figure or args.all):
        raise ValueError("--index writes the index of every figure: drop the figure names, or drop --index")
    if args.all and args.figure:
        raise ValueError("--all draws every figure: drop the figure names, or drop --all")
    _writable_dir(args.out, "--out")
    if args.index:
        print(write_index(args.out))
        return 0
    if not args.figure and not args.all:
        raise ValueError(f"name a figure (one of {', '.join(sorted(FIGURES))}; several may be given), "
                         "or pass --all or --index")
    unknown = [f for f in args.figure if f not in FIGURES]
    if unknown:
        raise ValueError(f"unknown figure {unknown[0]!r}; available: {', '.join(sorted(FIGURES))}")
    failures: list[str] = []
    for name in sorted(FIGURES) if args.all else args.figure:
        paths = _attempt(name, lambda name=name: FIGURES[name](out_dir=args.out, quick=args.quick,
                                                                seed=args.seed), failures)
        for p in paths or ():
            print(p)
    return _failed(failures, "the other figures were written")


def cmd_bench(args: argparse.Namespace) -> int:
    import json

    attention_opts = {"--min-len": args.min_len, "--max-len": args.max_len, "--exact-mem": args.exact_mem,
                      "--repeats": args.repeats, "--precision": args.precision}
    if args.json:
        _writable_file(args.json, "--json")
    if args.workload == "attention":
        if args.summarise:
            raise ValueError("--summarise reads `rfcheck bench --json` outputs of the engine bench, not 'attention'")
        if args.quick:
            raise ValueError("--quick is for the engine bench; 'bench attention' takes --min-len/--max-len")
        try:
            from rfcheck.attention import bench as abench
        except ImportError as exc:
            raise ValueError(str(exc)) from None

        print(abench.HEADER, file=sys.stderr, flush=True)
        opts = {k: ATTENTION_DEFAULTS[k] if getattr(args, k) is None else getattr(args, k) for k in ATTENTION_DEFAULTS}
        entries = abench.run_attention_bench(
            max_len=args.max_len, **opts,
            progress=lambda e: print(abench.format_entry(e), file=sys.stderr, flush=True))
        print(abench.format_bench(entries))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"entries": entries, "summary": abench.summarise(entries)}, fh, indent=2)
            print(f"wrote {args.json}")
        return 0

    from rfcheck import bench

    given = [k for k, v in attention_opts.items() if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: options of 'rfcheck bench attention', not of the engine bench")
    target = getattr(args, "cpu_target", None)
    if target is not None and not bench.in_target(target):
        if args.summarise:
            raise ValueError("--cpu-target compiles and times the engine; --summarise reads stored runs")
        argv = ["-m", "rfcheck", "bench", *(["--json", args.json] if args.json else []),
                *(["--quick"] if args.quick else []), "--cpu-target", target]
        env = bench.target_env(target, {})
        shown = {k: v for k, v in env.items() if k != "RFCHECK_BENCH_CPU_TARGET"}
        print(f"rfcheck bench: re-running in a subprocess compiled for {target!r} "
              f"({' '.join(f'{k}={v}' for k, v in shown.items()) or 'the host CPU'})",
              file=sys.stderr, flush=True)
        return bench.run_in_target(target, argv).returncode
    if target is not None:
        try:
            checked = bench.check_target(target)
        except RuntimeError as exc:  # the environment, not a bug: one line, exit status 2
            raise ValueError(str(exc)) from None
        print(f"rfcheck bench: {bench.describe_target(checked)}", file=sys.stderr, flush=True)
    if args.summarise:
        runs = []
        for path in args.summarise:
            try:
                with open(path) as fh:
                    runs.append(json.load(fh))
            except (OSError, json.JSONDecodeError) as exc:
                raise ValueError(f"cannot read bench output {path}: {exc}") from None
            try:
                if not bench.engine_entries(runs[-1]):
                    raise ValueError("no engine rows")
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}") from None
        print(bench.format_summary(bench.summarise_runs(runs)))
        return 0
    failures: list[str] = []
    entries: list[dict[str, Any]] = []
    engine = _attempt("engine bench", lambda: bench.run_bench(quick=args.quick), failures)
    rng_rows = _attempt("generator bench", lambda: bench.run_rng_bench(quick=args.quick), failures) or []
    if engine is not None:
        print(bench.format_table(engine + rng_rows))
        entries = engine + rng_rows + bench.targets(engine + rng_rows)
        _write_json(args.json, entries)
    if rng_rows:
        print(bench.format_rng_table(rng_rows))
    discrete = _attempt("discrete bench", lambda: bench.run_discrete_bench(quick=args.quick), failures)
    if discrete is not None:
        print()
        print(bench.format_discrete_table(discrete))
        entries = entries + discrete
    entries += [{"workload": f.split(":")[0], "error": f} for f in failures]
    _write_json(args.json, entries)
    if args.json:
        print(f"wrote {args.json}")
    return _failed(failures, f"the other rows were written{' to ' + args.json if args.json else ''}")


def cmd_calibrate(args: argparse.Namespace) -> int:

    from rfcheck import calibrate

    con = _console()
    if args.json:
        _writable_file(args.json, "--json")
    fa: list[dict[str, Any]] = []
    mp_rows: list[dict[str, Any]] = []

    def row(rows: list[dict[str, Any]]) -> Callable[[dict[str, Any]], None]:
        def keep(r: dict[str, Any]) -> None:  # every finished row is written at once
            rows.append(r)
            if "error" in r:
                print(f"rfcheck: failed: {r['error']}", file=sys.stderr, flush=True)
            _write_json(args.json, {"false_alarms": fa, "mutation_power": mp_rows, "complete": False})
        return keep

    if not args.skip_false_alarms:
        calibrate.false_alarms(n_seeds=args.seeds, alpha=args.alpha, on_row=row(fa),
                               progress=lambda c: con.print(_esc(f"false alarms: {c}")))
    if not args.skip_mutants:
        calibrate.mutation_power(budget=args.budget, on_row=row(mp_rows),
                                 progress=lambda m: con.print(_esc(f"mutant: {m}")))
    print(calibrate.format_tables(fa, mp_rows))
    _write_json(args.json, {"false_alarms": fa, "mutation_power": mp_rows, "complete": True})
    if args.json:
        print(f"wrote {args.json}")
    return _failed([r["error"] for r in fa + mp_rows if "error" in r], "the other rows were written")


def cmd_accuracy(args: argparse.Namespace) -> int:
    import datetime

    from rfcheck import accuracy

    if args.json:
        _writable_file(args.json, "--json")
    if args.markdown:
        _writable_file(args.markdown, "--markdown")
    entries: list[dict[str, Any]] = []

    def keep(e: dict[str, Any]) -> None:  # every finished function is written at once
        entries.append(e)
        print(accuracy.format_entry(e), file=sys.stderr, flush=True)
        _write_json(args.json, entries)

    accuracy.run_accuracy(quick=args.quick, functions=args.function, seed=args.seed, progress=keep)
    print(accuracy.format_table(entries))
    print(f"{sum(e['meets'] for e in entries)} of {len(entries)} functions meet the target")
    if args.json:
        print(f"wrote {args.json}")
    if args.markdown:
        parts = ["rfcheck accuracy", "--quick" if args.quick else "", f"--seed {args.seed}" if args.seed else "",
                 f"--function {' '.join(args.function)}" if args.function else "",
                 f"--json {args.json}" if args.json else "", f"--markdown {args.markdown}"]
        page = accuracy.format_page(entries, command=" ".join(p for p in parts if p),
                                    date=datetime.date.today().isoformat())
        tmp = f"{args.markdown}.tmp"
        with open(tmp, "w") as fh:
            fh.write(page)
        os.replace(tmp, args.markdown)
        print(f"wrote {args.markdown}")
    return _failed([f"{e['function']}: {e['error']}" for e in entries if "error" in e],
                   "the other functions were swept")


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (``rfcheck: error: ...``), not the whole usage text."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("rfcheck")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
        ver = "unknown"
    p = _Parser(prog="rfcheck", description="Verify formulas about random-feature estimators.")
    p.add_argument("--version", action="version", version=f"rfcheck {ver}")
    sub = p.add_subparsers(dest="command", required=True)

    lp = sub.add_parser("list", help="show the registered claims")
    lp.add_argument("--paper", action="append", help="only this paper (crt, darkformer, rfa, simrf, hrf; repeatable)")
    lp.add_argument("--verdict", action="append", type=str.upper,
                    choices=["HOLDS", "REFUTED", "INCONCLUSIVE", "MIXED", "ERROR", "-"],
                    help="only claims whose last known verdict is this (repeatable)")
    lp.add_argument("--ledger", default=STORED_LEDGER, metavar="PATH",
                    help="the stored ledger.json to read verdicts from")
    lp.add_argument("--claims", action="append", metavar="PACK", help="also your own claims (see verify --claims)")
    lp.set_defaults(func=cmd_list)

    vp = sub.add_parser("verify", help="compute verdicts for claims")
    vp.add_argument("--claim", action="append", metavar="ID", help="claim id (repeatable)")
    vp.add_argument("--paper", action="append", metavar="P", help="every claim of paper P (repeatable)")
    vp.add_argument("--all", action="store_true", help="every registered claim")
    vp.add_argument("--claims", action="append", metavar="PACK",
                    help="load your own claims: a .py file, an importable module or an installed claims pack "
                         "(entry point group rfcheck.claims); alone, verifies every claim it declares (repeatable)")
    vp.add_argument("--seed", type=_count(0), default=0)
    vp.add_argument("--budget", default="default", choices=["smoke", "default", "thorough"])
    vp.add_argument("--report", metavar="DIR", help="write JSON and Markdown reports into DIR")
    vp.add_argument("--strict", nargs="?", const="every-reading", choices=["every-reading", "literal"],
                    help="exit 1 if any claim is REFUTED (under every reading); --strict=literal: also if one is "
                         "MIXED (refuted as literally printed, holds under another reading). Exit 1 also, always, "
                         "if any claim is ERROR")
    vp.add_argument("--at", metavar="K=V,...", help="evaluate one claim's checks at this point only")
    vp.add_argument("--point-index", type=_count(0), default=0, metavar="K",
                    help="with --at: the point's index in the run that reported it (a reproduce line gives it); "
                         "it selects the point's random draws, so the reported numbers come back")
    vp.add_argument("--jobs", type=_count(1), default=min(2, os.cpu_count() or 1), help="worker processes")
    vp.add_argument("--scheduler", metavar="ADDRESS",
                    help="run the claims on a Dask distributed scheduler (e.g. tcp://host:8786; extra rfcheck[dask])")
    vp.add_argument("--cache-dir", default=".rfcheck-cache", help="cache of verdicts (resume)")
    vp.add_argument("--no-cache", action="store_true")
    vp.add_argument("--update-readme", nargs="?", const="README.md", metavar="PATH",
                    help="rewrite the ledger block of README.md with this run's summary")
    vp.set_defaults(func=cmd_verify)

    dp = sub.add_parser("diff", help="claim-by-claim differences of two stored ledgers (verdicts, deciding checks)")
    dp.add_argument("before", help="a ledger.json of rfcheck verify --report, or a Markdown ledger table")
    dp.add_argument("after", help="the same, after the change")
    dp.set_defaults(func=cmd_diff)

    pp = sub.add_parser("plot", help="reproduce a paper figure into figures/")
    pp.add_argument("figure", nargs="*", help="one or more figures, e.g. crt-fig1")
    pp.add_argument("--all", action="store_true", help="every figure (a failing one is reported, the others drawn)")
    pp.add_argument("--index", action="store_true", help="write OUT/index.md listing every figure")
    pp.add_argument("--out", default="figures")
    pp.add_argument("--quick", action="store_true", help="small Monte Carlo sizes")
    pp.add_argument("--seed", type=_count(0), default=0)
    pp.set_defaults(func=cmd_plot)

    cp = sub.add_parser("calibrate", help="false-alarm rates and mutation power of the checks")
    cp.add_argument("--seeds", type=_count(1), default=200)
    cp.add_argument("--alpha", type=_level, default=0.05, help="calibration false-alarm level, in (0, 1)")
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
    bp.add_argument("--cpu-target", default=None, choices=["native", "avx2"],
                    help="engine: compile for this instruction set (avx2: LLVM haswell, no AVX-512) and run the "
                         "whole bench in a subprocess so compiled; every row records the target")
    bp.add_argument("--summarise", nargs="+", metavar="JSON",
                    help="engine: no timing; median and range over stored --json outputs of earlier runs")
    bp.add_argument("--min-len", type=_count(1), default=None, help="attention: smallest L (default 1024)")
    bp.add_argument("--max-len", type=_count(1), default=None,
                    help="attention: largest L (doubling from --min-len; default 65536 on CPU, 262144 on a GPU)")
    bp.add_argument("--exact-mem", type=_positive, default=None,
                    help="attention: skip exact beyond this many bytes (default 4 GiB)")
    bp.add_argument("--repeats", type=_count(1), default=None,
                    help="attention: best of this many timed runs (default 3)")
    # the choices repeat rfcheck.attention._api.PRECISIONS so that building the parser needs no JAX (a test ties them)
    bp.add_argument("--precision", default=None, choices=["highest", "high", "default"],
                    help="attention: matmul precision (highest, the default: float32 products; default: backend's, "
                         "TF32 on GPUs)")
    bp.set_defaults(func=cmd_bench)

    ap = sub.add_parser("accuracy", help="float64 faces of every public closed form against converged mpmath")
    ap.add_argument("--json", metavar="PATH", help="write the entries (written as each function finishes)")
    ap.add_argument("--markdown", metavar="PATH", help="write the documentation page (e.g. docs/accuracy.md)")
    ap.add_argument("--quick", action="store_true", help="a few points per function")
    ap.add_argument("--function", nargs="+", action="extend", metavar="NAME",
                    help="only these closed forms, e.g. crt.gerf_log_variance (repeatable)")
    ap.add_argument("--seed", type=_count(0), default=0)
    ap.set_defaults(func=cmd_accuracy)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the ``rfcheck`` command line (``rfcheck list | verify | plot | bench | ...``).

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: the command's own (0 on success; 1 when a part failed, a claim's
        verdict is ERROR, a claim is refuted under ``verify --strict``, or ``diff`` finds a moved
        verdict), 2 when the input is bad (a ``ValueError``, printed as one line
        ``rfcheck: error: ...``), 130 when interrupted, 3 on an internal error (printed as one
        line; the traceback is raised instead when the environment variable ``RFCHECK_DEBUG``
        is set).  ``argparse`` exits with status 2 itself on an unknown option.

    Examples
    --------
    >>> main(["verify", "--claim", "no.such.claim"])
    2
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        print(f"rfcheck: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"rfcheck: interrupted{f' ({exc})' if str(exc) else ''}", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: still one line, the traceback on request
        if os.environ.get("RFCHECK_DEBUG"):
            raise
        print(f"rfcheck: internal error: {type(exc).__name__}: {exc} (rerun with RFCHECK_DEBUG=1 for the "
              "traceback, and please report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

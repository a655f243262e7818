"""Replay every reproduce line of a stored ledger and compare the worst point's numbers.

Usage: ``python results/ledger/reproduce_audit.py LEDGER.json OUT.jsonl [CLAIM ...]``

For each entry with a ``reproduce_point`` command (``rfcheck verify --claim ID --at ... --seed S
--budget B [--point-index K]``), the command is parsed as the command line parses it and run through
:func:`rfcheck.verify.evaluate_at`; one JSON line per claim records the verdict at the point and
every field of the worst point (``printed``, ``reference``, ``err``, ``disc``, ``decided``) that
differs from the ledger's.  The last line is a summary.  A verdict at one point may differ from
the claim's (a MIXED claim's other reading may have no point there; an INCONCLUSIVE claim's
worst point may be decided); numbers should not.
"""

from __future__ import annotations

import json
import shlex
import sys
import time

from rfcheck import verify
from rfcheck.cli import _parse_at, build_parser

FIELDS = ("printed", "reference", "err", "disc", "decided")


def replay(entry: dict) -> dict:
    a = build_parser().parse_args(shlex.split(entry["reproduce_point"])[1:])  # as the command line parses it
    t0 = time.time()
    try:
        v = verify.evaluate_at(a.claim[0], _parse_at(a.at), seed=a.seed, budget=a.budget, point_index=a.point_index)
    except ValueError as exc:
        return {"id": entry["id"], "error": str(exc), "s": round(time.time() - t0, 1)}
    new = json.loads(json.dumps(v.as_dict(), default=str))["evidence"].get("worst") or {}
    old = entry["evidence"].get("worst") or {}
    return {"id": entry["id"], "verdict": entry["verdict"], "verdict_at_point": new and v.verdict,
            "same_point": old.get("point") == new.get("point"),
            "differs": {k: [old.get(k), new.get(k)] for k in FIELDS if old.get(k) != new.get(k)},
            "s": round(time.time() - t0, 1)}


def main(argv: list[str]) -> int:
    ledger, out, only = argv[0], argv[1], set(argv[2:])
    rows = []
    with open(out, "w") as fh:
        for e in json.load(open(ledger)):
            if e.get("reproduce_point") and (not only or e["id"] in only):
                rows.append(replay(e))
                fh.write(json.dumps(rows[-1]) + "\n")
                fh.flush()
        bad = [r["id"] for r in rows if "error" in r or r["differs"] or not r["same_point"]]
        fh.write(json.dumps({"summary": {"replayed": len(rows), "numbers_identical": len(rows) - len(bad),
                                         "differ_or_refused": bad}}) + "\n")
    print(f"{len(rows)} reproduce lines replayed; {len(rows) - len(bad)} gave the worst point's numbers back; "
          f"{len(bad)} did not: {', '.join(bad) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

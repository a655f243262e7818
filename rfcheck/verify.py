"""Turn claims into verdicts: search each claim's domain with each of its checks, decide
HOLDS / REFUTED / INCONCLUSIVE from the computation, and write reports.

Verdict semantics (the architecture page of the documentation, "how a claim becomes a verdict"):

* a check REFUTES when some *decided* point disagrees beyond the reference's error bars
  (``disc > 1``); a Monte Carlo refutation must be confirmed by an independent re-run at
  that point (fresh seed, 4x the trials), so its false-alarm rate is below ``alpha^2``-ish;
* a check HOLDS when no decided point disagrees and every point was decided
  (deterministic checks) or at least half of them were (Monte Carlo checks, whose
  undecided points -- heavy tails, no power -- are listed in the evidence);
* otherwise it is INCONCLUSIVE.

The claim's verdict is that of its strongest check that reached one (1 deterministic <
2 symbolic < 3 Monte Carlo); when a weaker check contradicts it (HOLDS vs REFUTED) the
claim is INCONCLUSIVE with reason "references disagree" -- a bug somewhere, never hidden.

A claim whose printed notation is ambiguous declares **readings** (``Claim.readings``), each
with its own checks and verdict.  Its verdict: REFUTED when every reading is refuted; MIXED
when some reading is refuted and another holds (the reason names both, and which one is the
natural reading); otherwise the natural reading's verdict (INCONCLUSIVE where a refuted
reading meets only undecided others).

A check whose optional extra is not installed (``Check.requires``) is not run: it is
INCONCLUSIVE with the reason "needs rfcheck[jax]", and the entry lists the extra under
``needs``.  One status is not about the claim: **ERROR** -- its computation raised; the
entry records the exception and the reproduce command, and every other claim still runs
(:func:`run_many`).
"""

from __future__ import annotations

import math
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rfcheck import memo
from rfcheck.claims import (
    BUDGETS,
    ORIGINS,
    Budget,
    Check,
    Claim,
    get,
    load_all,
    load_claims,
    missing_extras,
    needs_reason,
    source_digest,
)
from rfcheck.stats import PointEval

__all__ = [
    "CheckResult",
    "ReadingResult",
    "Verdict",
    "error_entry",
    "evaluate_at",
    "point_seed",
    "run_claim",
    "run_claims",
    "run_many",
    "select",
]

HOLDS, REFUTED, INCONCLUSIVE, ERROR = "HOLDS", "REFUTED", "INCONCLUSIVE", "ERROR"
#: a claim with readings that is REFUTED under some and HOLDS under another (named in the reason)
MIXED = "MIXED"


#: evaluated points kept per check in a verdict's evidence (for the report's plots)
MAX_POINTS_KEPT = 400
_POINT_KEYS = ("point", "printed", "reference", "err", "disc", "decided")


@dataclass
class CheckResult:
    """A check's outcome over the searched domain.

    Parameters
    ----------
    name : str
        The check's name (``Check.name``).
    strength : int
        1 deterministic, 2 symbolic, 3 Monte Carlo; the strongest (lowest) decided check
        decides the claim.
    verdict : {"HOLDS", "REFUTED", "INCONCLUSIVE"}
        The check's verdict over its points.
    n_points, n_decided, n_violations : int
        Points evaluated, points decided, and decided points where the claim fails.
    worst : PointEval or None
        The point that decides the verdict (the worst violation, else the worst agreement);
        ``None`` when no point was decided.
    reason : str, default ""
        Why this verdict, in one line.
    undecided, violations, evals : list of PointEval, default []
        The undecided points, the violations, and every evaluated point.
    description : str, default ""
        How the reference is computed, for reports.
    domain : str, default ""
        The check's sub-domain as stated in reports (empty: the claim's whole domain).
    needs : list of str, default []
        Missing optional extras; when non-empty the check was not run.
    labels : (str, str), default ("printed", "reference")
        Names of the two compared sides, for reports.
    """

    name: str
    strength: int
    verdict: str
    n_points: int
    n_decided: int
    n_violations: int
    worst: PointEval | None
    reason: str = ""
    undecided: list[PointEval] = field(default_factory=list)
    violations: list[PointEval] = field(default_factory=list)
    evals: list[PointEval] = field(default_factory=list)
    description: str = ""
    domain: str = ""
    needs: list[str] = field(default_factory=list)  # missing optional extras: the check was not run
    labels: tuple[str, str] = ("printed", "reference")

    def certified(self) -> int:
        """How many decided points Arb balls decided the same way (``extra["certified"]``)."""
        return sum(bool((e.extra or {}).get("certified")) for e in self.evals if e.decided)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "points_certified": self.certified(),
            "strength": self.strength,
            "verdict": self.verdict,
            "points_tried": self.n_points,
            "points_decided": self.n_decided,
            "violations": self.n_violations,
            "reason": self.reason,
            "worst": self.worst.as_dict() if self.worst else None,
            "undecided_examples": [u.as_dict() for u in self.undecided[:3]],
            # every evaluated point, compact: the report draws printed vs reference from it
            "points": [{k: v for k, v in e.as_dict().items() if k in _POINT_KEYS}
                       for e in self.evals[:MAX_POINTS_KEPT]],
            "description": self.description,
            "domain": self.domain,
            "labels": list(self.labels),
        }


@dataclass
class ReadingResult:
    """One reading's verdict (a claim with readings, ``rfcheck.claims.Reading``).

    Parameters
    ----------
    name : str
        The reading's name.
    natural : bool
        Whether this is the claim's natural reading (exactly one is).
    verdict : {"HOLDS", "REFUTED", "INCONCLUSIVE"}
        The reading's verdict, combined from its checks.
    reason : str
        Why this verdict (from its checks).
    why_natural : str
        The reading's one-line justification (``Reading.reason``).
    description : str
        How the notation is read.
    checks : list of CheckResult
        The outcomes of the reading's checks.
    correction : str, optional
        The reading's correction, reported when it is refuted (default ``None``).
    """

    name: str
    natural: bool
    verdict: str
    reason: str  # why this verdict (from its checks)
    why_natural: str
    description: str
    checks: list[CheckResult]
    correction: str | None = None

    def as_dict(self) -> dict[str, Any]:
        done = [c for c in self.checks if c.verdict != INCONCLUSIVE]
        deciding = min(done, key=lambda c: c.strength) if done else None
        return {"name": self.name, "natural": self.natural, "verdict": self.verdict, "reason": self.why_natural,
                "description": self.description, "verdict_reason": self.reason,
                "correction": self.correction if self.verdict == REFUTED else None,
                "deciding_check": deciding.name if deciding else None,
                "worst": deciding.worst.as_dict() if deciding and deciding.worst else None}


@dataclass
class Verdict:
    """A claim's verdict with its evidence (for a claim with readings, ``checks`` are those of
    the deciding reading: the refuted one for REFUTED/MIXED, else the natural one).

    Parameters
    ----------
    claim : Claim
        The verified claim.
    verdict : {"HOLDS", "REFUTED", "INCONCLUSIVE", "MIXED"}
        The claim's verdict (MIXED only for a claim with readings).
    checks : list of CheckResult
        The outcomes of the claim's checks (of the deciding reading, see above).
    reason : str
        Why this verdict, in one line.
    seed : int
        The run seed (every point's seed derives from it, :func:`point_seed`).
    budget : Budget
        The budget the claim was verified with.
    elapsed : float
        Wall-clock seconds of the verification.
    readings : list of ReadingResult, default []
        Each reading's verdict, for a claim with readings.
    """

    claim: Claim
    verdict: str
    checks: list[CheckResult]
    reason: str
    seed: int
    budget: Budget
    elapsed: float
    readings: list[ReadingResult] = field(default_factory=list)

    def reproduce(self) -> str:
        return f"{claim_command(self.claim.id)} --seed {self.seed} --budget {self.budget.name}"

    def reproduce_point(self) -> str | None:
        deciding = self.deciding_check()
        if deciding is None or deciding.worst is None:
            return None
        pt = deciding.worst.point
        at = ",".join(f"{k}={_fmt(v)}" for k, v in pt.items() if not k.startswith("_"))
        idx = deciding.worst.index  # the point's random draws (point_seed) are those of its index
        tail = f" --point-index {idx}" if idx else ""
        return f"{claim_command(self.claim.id)} --at '{at}' --seed {self.seed} --budget {self.budget.name}{tail}"

    def deciding_check(self) -> CheckResult | None:
        done = [c for c in self.checks if c.verdict != INCONCLUSIVE]
        return min(done, key=lambda c: c.strength) if done else (self.checks[0] if self.checks else None)

    def as_dict(self) -> dict[str, Any]:
        c = self.claim
        deciding = self.deciding_check()
        worst = deciding.worst.as_dict() if deciding and deciding.worst else None
        if worst is not None and deciding is not None:
            worst["rel_error"] = _rel_error(deciding.worst)
            worst["labels"] = list(deciding.labels)
        extra = (deciding.worst.extra or {}) if deciding and deciding.worst else {}
        certified = {"points": sum(ch.certified() for ch in self.checks),
                     "decided": sum(ch.n_decided for ch in self.checks),
                     "verdict": bool(extra.get("certified")) and self.verdict in (REFUTED, MIXED),
                     "why_not": extra.get("not_certified") or (
                         "" if extra.get("certified") else "no ball (Arb) evaluation of this check: the printed side "
                         "or the reference has no enclosure")}
        needs = sorted({x for ch in self.checks for x in ch.needs})
        return {
            "id": c.id,
            "paper": c.paper,
            "source": c.source,
            "statement": c.statement,
            "verdict": self.verdict,
            "reason": self.reason,
            "evidence": {
                "points_tried": sum(ch.n_points for ch in self.checks),
                "deciding_check": deciding.name if deciding else None,
                "precision": f"mpmath {self.budget.dps} digits; Monte Carlo alpha={self.budget.alpha}",
                "worst": worst,
                "checks": [ch.as_dict() for ch in self.checks],
            },
            "correction": c.correction if self.verdict in (REFUTED, MIXED) else None,
            "notes": c.notes,
            "needs": needs,
            "certified": certified,
            "readings": [r.as_dict() for r in self.readings],
            "reproduce": self.reproduce(),
            "reproduce_point": self.reproduce_point(),
            "budget": self.budget.name,
            "seed": self.seed,
            "elapsed_s": round(self.elapsed, 2),
        }


def _rel_error(e: PointEval) -> float | None:
    """``|a - b| / |b|`` of a point's two values (printed and reference; an inequality's rhs and
    lhs), a scale users read without knowing the tolerance; None where not numeric."""
    import mpmath

    try:
        a, b = mpmath.mpmathify(e.printed), mpmath.mpmathify(e.reference)
    except (TypeError, ValueError):
        return None
    if not (mpmath.isfinite(a) and mpmath.isfinite(b)):
        return None
    d = abs(a - b)
    return float(d / abs(b)) if b != 0 else (0.0 if d == 0 else math.inf)


def claim_command(claim_id: str) -> str:
    """``rfcheck verify [--claims PACK] --claim ID``: the pack is named for a claim loaded from one."""
    import shlex

    origin = ORIGINS.get(claim_id)
    return f"rfcheck verify {f'--claims {shlex.quote(origin)} ' if origin else ''}--claim {claim_id}"


def _fmt(v: Any) -> str:
    """A value as ``--at`` parses it back: strings bare (quotes would nest in the shell's)."""
    if isinstance(v, complex):
        return repr(v).strip("()")
    if isinstance(v, str):
        return v
    return repr(v)


def point_seed(seed: int, claim_id: str, index: int) -> int:
    """A per-point seed derived from the run seed, the claim id and the point index.

    Parameters
    ----------
    seed : int
        The run seed (``>= 0``).
    claim_id : str
        The claim's id.
    index : int
        The point's index in the check's search (``>= 0``).

    Returns
    -------
    int
        A seed in ``[0, 2^63)``, the same wherever and in whatever order the point is evaluated.

    Examples
    --------
    >>> point_seed(0, "crt.eq33", 1) == point_seed(0, "crt.eq33", 1) != point_seed(0, "crt.eq33", 2)
    True
    """
    ss = np.random.SeedSequence([seed, zlib.crc32(claim_id.encode()), index])
    return int(ss.generate_state(1, dtype=np.uint64)[0] % (2**63))


def _safe_eval(check: Check, point: dict[str, Any], budget: Budget, seed: int) -> PointEval:
    try:
        return check.evaluate(point, budget, seed)
    except (ValueError, ArithmeticError, ZeroDivisionError) as exc:
        return PointEval(point, None, None, math.inf, math.nan, False, f"{type(exc).__name__}: {exc}")
    except KeyError as exc:  # e.g. an --at point of another reading's sub-domain: not this check's point
        return PointEval(point, None, None, math.inf, math.nan, False,
                         f"the point has no parameter {exc} that this check needs")


def _in_domain(dom: Any, p: dict[str, Any]) -> bool:
    """Whether ``p`` is a point of ``dom``: every parameter present and in range, the constraint met."""
    if any(n not in p for n in dom.params):
        return False
    if not all(r.contains(p[n]) or dom._derived_from_range(p, n, r) for n, r in dom.params.items()):
        return False
    return dom.constraint is None or bool(dom.constraint(p))


def _optimise(claim: Claim, domain: Any, check: Check, evals: list[PointEval], budget: Budget,
              seed: int, counter: list[int]) -> list[PointEval]:
    """Nelder-Mead on the continuous parameters from the two worst points, maximising disc."""
    from scipy.optimize import minimize

    names = domain.continuous()
    if not names or budget.opt_evals <= 0:
        return []
    found: list[PointEval] = []
    ranked = sorted((e for e in evals if e.decided and math.isfinite(e.disc)), key=lambda e: -e.disc)
    for start in ranked[:2]:
        base = start.point

        def objective(t: np.ndarray, base: dict[str, Any] = base) -> float:
            p = domain.from_unit(base, names, t)
            if p is None:
                return 1e300
            counter[0] += 1
            ev = replace(_safe_eval(check, p, budget, point_seed(seed, claim.id, counter[0])), index=counter[0])
            if ev.decided and math.isfinite(ev.disc):
                found.append(ev)
                return -ev.disc
            return 1e300

        t0 = domain.to_unit(base, names)
        minimize(objective, t0, method="Nelder-Mead",
                 options={"maxfev": max(budget.opt_evals // 2, 1), "xatol": 1e-4, "fatol": 1e-12})
    return found


#: where ``run_check`` reports each evaluated point: ``reporter(claim_id, check_name, done, total)``
#: (:func:`run_many`'s ``points``; in a pool worker, a queue back to the parent)
_POINT_REPORTER: Callable[[str, str, int, int], None] | None = None


def _report_point(claim_id: str, check_name: str, done: int, total: int) -> None:
    if _POINT_REPORTER is not None:
        try:
            _POINT_REPORTER(claim_id, check_name, done, total)
        except Exception:  # progress display only: never a reason for a claim to fail
            pass


def _queue_reporter(queue: Any) -> None:
    """Pool-worker initializer: report points through ``queue`` (drained by the parent)."""
    global _POINT_REPORTER
    _POINT_REPORTER = lambda *a: queue.put_nowait(a)  # noqa: E731


def _search_points(claim: Claim, check: Check, budget: Budget, seed: int) -> list[dict[str, Any]]:
    """The points a check evaluates before the optimiser (its domain's grid and random points, for
    Monte Carlo the fixed points first and at most ``budget.mc_points`` in all)."""
    rng = np.random.default_rng([seed, zlib.crc32((claim.id + check.name).encode())])
    domain = check.domain or claim.domain
    pts = domain.grid(budget.grid_levels, budget.grid_cap, rng)
    pts += domain.random(budget.n_random, rng)
    if check.strength == 3:
        order = rng.permutation(len(pts))
        # keep the domain's fixed points and corners first, then a random spread
        n_fix = len(domain.fixed_points)
        head = list(range(min(n_fix, len(pts))))
        rest = [i for i in order if i >= n_fix]
        pts = [pts[i] for i in (head + rest)][: max(budget.mc_points, n_fix)]
    if check.max_points is not None:
        pts = pts[: check.max_points]
    return pts


def run_check(claim: Claim, check: Check, budget: Budget, seed: int,
              points: list[dict[str, Any]] | None = None, early_stop: bool = False,
              first_index: int = 0) -> CheckResult:
    """Run one check over the claim's domain (or over ``points``) and decide its verdict.

    Point ``i`` is evaluated with the seed :func:`point_seed` ``(seed, claim.id, first_index + i)``
    and records that index (``PointEval.index``; the optimiser's points continue the count), so
    that ``--at`` with ``--point-index`` replays a reported point with its own draws.
    ``early_stop``: a deterministic check stops at its first decided violation (enough for
    a REFUTED verdict; used by the mutation suite, whose question is only "is it caught?").
    """
    domain = check.domain or claim.domain
    desc = domain.description or ("sub-domain" if check.domain else "the claim's domain")
    missing = missing_extras(check.requires)
    if missing:
        return CheckResult(check.name, check.strength, INCONCLUSIVE, 0, 0, 0, None, needs_reason(missing),
                           description=check.description, domain=desc, needs=missing, labels=check.labels)
    if points is None:
        pts = _search_points(claim, check, budget, seed)
    else:
        pts = points
        if check.domain is not None:  # a given point (--at) outside this check's sub-domain is not its point
            pts = [p for p in points if _in_domain(check.domain, p)]
            if not pts:
                return CheckResult(check.name, check.strength, INCONCLUSIVE, 0, 0, 0, None,
                                   f"the point lies outside this check's domain ({desc})",
                                   description=check.description, domain=desc, labels=check.labels)
    if check.strength == 3:
        # the checks share alpha over budget.mc_points tests (Bonferroni): count every point -- at a
        # given point (--at), every point the search would test, so that its test is the run's
        n_tests = len(pts) if points is None else max(len(pts), len(_search_points(claim, check, budget, seed)))
        if n_tests > budget.mc_points:
            budget = replace(budget, mc_points=n_tests)
    evals = []
    for i, p in enumerate(pts, start=first_index):
        evals.append(replace(_safe_eval(check, p, budget, point_seed(seed, claim.id, i)), index=i))
        _report_point(claim.id, check.name, i - first_index + 1, len(pts))
        if early_stop and check.strength < 3 and evals[-1].decided and evals[-1].disc > 1:
            break
    stopped = early_stop and any(e.decided and e.disc > 1 for e in evals) and check.strength < 3
    if check.search and points is None and not stopped:
        evals += _optimise(claim, domain, check, evals, budget, seed, [len(pts)])
    decided = [e for e in evals if e.decided and math.isfinite(e.disc)]
    undecided = [e for e in evals if not (e.decided and math.isfinite(e.disc))]
    violations = [e for e in decided if e.disc > 1]
    if violations and check.strength == 3:
        # confirm a Monte Carlo refutation with an independent run at 4x the trials, worst
        # point first; a violation that the re-run does not confirm becomes undecided (not an
        # agreement), and the next one is tried, until one is confirmed
        big = replace(budget, mc_trials=4 * budget.mc_trials)
        pending = sorted(violations, key=lambda e: e.disc, reverse=True)
        violations = []
        for k, v in enumerate(pending):
            conf = _safe_eval(check, v.point, big, point_seed(seed + 1_000_003, claim.id, k))
            if conf.decided and conf.disc > 1:
                violations = pending[k:]
                break
            decided.remove(v)
            undecided.append(PointEval(v.point, v.printed, v.reference, v.err, v.disc, False,
                                       "refutation not confirmed by an independent re-run", v.extra, v.index))
    worst_pool = violations or decided or evals
    worst = max(worst_pool, key=lambda e: e.disc if math.isfinite(e.disc) else -math.inf) if worst_pool else None
    if violations:
        verdict, reason = REFUTED, f"{len(violations)} of {len(decided)} decided points disagree"
    elif not decided:
        verdict = INCONCLUSIVE
        reason = "no point could be decided" + (f" ({undecided[0].note})" if undecided else "")
    elif undecided and (check.strength < 3 or len(undecided) > len(decided)):
        verdict = INCONCLUSIVE
        reason = f"{len(undecided)} of {len(evals)} points undecided (e.g. {undecided[0].note})"
    else:
        verdict = HOLDS
        reason = f"{len(decided)} points agree" + (f"; {len(undecided)} undecided" if undecided else "")
    return CheckResult(check.name, check.strength, verdict, len(evals), len(decided), len(violations),
                       worst, reason, undecided, violations, evals, check.description, desc, labels=check.labels)


def _combine(claim: Claim, results: list[CheckResult]) -> tuple[str, str]:
    if claim.unverifiable and not results:
        return INCONCLUSIVE, claim.unverifiable
    reached = sorted((r for r in results if r.verdict != INCONCLUSIVE), key=lambda r: r.strength)
    if not reached:
        reasons = "; ".join(f"{r.name}: {r.reason}" for r in results)
        return INCONCLUSIVE, claim.unverifiable or reasons or "no check reached a verdict"
    top = reached[0]
    conflicts = [r for r in reached if r.verdict != top.verdict]
    if conflicts:
        c = conflicts[0]
        return INCONCLUSIVE, (f"references disagree: {top.name} says {top.verdict}, "
                              f"{c.name} says {c.verdict} -- investigate")
    return top.verdict, f"{top.name}: {top.reason}"


def _all_checks(claim: Claim) -> list[Check]:
    return list(claim.checks) + [ch for r in claim.readings for ch in r.checks]


def _combine_readings(results: list[ReadingResult]) -> tuple[str, str, ReadingResult]:
    """The claim's verdict from its readings' verdicts, and the reading whose evidence is shown."""
    refuted = [r for r in results if r.verdict == REFUTED]
    holds = [r for r in results if r.verdict == HOLDS]
    natural = next(r for r in results if r.natural)
    names = lambda rs: ", ".join(repr(r.name) for r in rs)  # noqa: E731
    if refuted and len(refuted) == len(results):
        return REFUTED, f"REFUTED under every reading ({names(refuted)})", refuted[0]
    if refuted and holds:
        return (MIXED, f"REFUTED as read {names(refuted)}, HOLDS as read {names(holds)}; the natural reading is "
                f"{natural.name!r} ({natural.why_natural})", refuted[0])
    if refuted:
        return (INCONCLUSIVE, f"REFUTED as read {names(refuted)}; undecided under "
                f"{names([r for r in results if r not in refuted])}", refuted[0])
    return natural.verdict, f"{natural.name!r} reading (natural): {natural.reason}", natural


def _check_at(claim: Claim, at: dict[str, Any]) -> None:
    """A user-given point must be a point of the claim's domain or of one of its checks'."""
    doms = [claim.domain] + [ch.domain for ch in _all_checks(claim) if ch.domain is not None]
    errors = []
    for dom in doms:
        try:
            dom.check_point(at)
            return
        except ValueError as exc:
            errors.append(str(exc))
    raise ValueError(f"{claim.id}: {errors[0]}")


def run_claim(claim: Claim | str, *, budget: Budget | str = "default", seed: int = 0,
              at: dict[str, Any] | None = None, early_stop: bool = False, point_index: int = 0) -> Verdict:
    """Verify one claim (or evaluate it only at the point ``at``).

    Parameters
    ----------
    claim : Claim or str
        The claim, or its registered id.
    budget : Budget or str, default "default"
        The budget, or its name (``"smoke"``, ``"default"``, ``"thorough"``).
    seed : int, default 0
        The run seed.
    at : dict, optional
        Evaluate only this point of the claim's domain (or of a check's sub-domain) instead
        of searching the domain (default: search).
    early_stop : bool, default False
        Stop a deterministic check's search (strength < 3) at its first decided violation.
    point_index : int, default 0
        With ``at``: the index the point had in the run that reported it, which selects its random
        draws (:func:`point_seed`); a reported point's ``index`` (its reproduce line's
        ``--point-index``) replays it with the same numbers.

    Returns
    -------
    Verdict
        The claim's verdict with its evidence.

    Raises
    ------
    ValueError
        If ``claim`` is an unregistered id, ``at`` is not a point of the claim's domain nor of
        any check's sub-domain (a missing or unknown parameter, a value out of range, a failed
        constraint), ``point_index`` is negative or given without ``at``, or the claim's readings
        are ill-formed (names not distinct, not exactly one natural reading, a reading without
        checks).
    KeyError
        If ``budget`` is a name that is not a budget.

    Examples
    --------
    >>> run_claim("crt.eq33", at={"d": 128, "nx": 5.0, "ny": 5.0, "theta": 0.0, "M": 128}).verdict
    'REFUTED'
    >>> run_claim("crt.eq33", at={"d": 128, "nx": -5.0, "ny": 5.0, "theta": 0.0, "M": 128})
    Traceback (most recent call last):
    ...
    ValueError: crt.eq33: nx = -5.0 lies outside the domain: a real number in [0.0, 5.0]
    """
    claim = get(claim) if isinstance(claim, str) else claim
    budget = BUDGETS[budget] if isinstance(budget, str) else budget
    t0 = time.perf_counter()
    memo.forget()  # numbers independent of the claims that ran before (rfcheck.memo)
    pts = None
    if point_index < 0 or (point_index and at is None):
        raise ValueError(f"point_index must be >= 0 and goes with a point (at); got {point_index}")
    if at is not None:
        _check_at(claim, at)
        full = claim.domain._finish([at])
        if not full:
            raise ValueError(f"point {at} lies outside the domain of {claim.id}")
        pts = full
    if claim.readings:
        claim.check_readings()
        rr = []
        for r in claim.readings:
            res = [run_check(claim, ch, budget, seed, pts, early_stop, point_index) for ch in r.checks]
            v, why = _combine(claim, res) if res else (INCONCLUSIVE, f"not checkable: {r.unverifiable}")
            rr.append(ReadingResult(r.name, r.natural, v, why, r.reason, r.description, res, r.correction))
        verdict, reason, shown = _combine_readings(rr)
        return Verdict(claim, verdict, shown.checks, reason, seed, budget, time.perf_counter() - t0, rr)
    results = [run_check(claim, ch, budget, seed, pts, early_stop, point_index) for ch in claim.checks]
    verdict, reason = _combine(claim, results)
    return Verdict(claim, verdict, results, reason, seed, budget, time.perf_counter() - t0)


def evaluate_at(claim_id: str, at: dict[str, Any], *, seed: int = 0, budget: str = "default",
                point_index: int = 0) -> Verdict:
    """All checks of a claim at one point (the ``--at`` reproduction of a counterexample).

    Parameters
    ----------
    claim_id : str
        The claim's id.
    at : dict
        The point, ``{parameter: value}``: every parameter of the claim's domain (or of a
        check's sub-domain); derived parameters are computed from it.
    seed : int, default 0
        The run seed.
    budget : str, default "default"
        The budget's name (``"smoke"``, ``"default"``, ``"thorough"``).
    point_index : int, default 0
        The point's index in the run that reported it (``PointEval.index``, the reproduce
        line's ``--point-index``): checks that draw random numbers at a point draw those of
        :func:`point_seed` ``(seed, claim_id, point_index)``, so the reported numbers come back.

    Returns
    -------
    Verdict
        The verdict from this single point.

    Examples
    --------
    >>> v = evaluate_at("crt.eq33", {"d": 128, "nx": 5.0, "ny": 5.0, "theta": 0.0, "M": 128}, budget="smoke")
    >>> v.verdict, v.deciding_check().n_points
    ('REFUTED', 1)
    """
    return run_claim(claim_id, budget=budget, seed=seed, at=at, point_index=point_index)


def select(ids: Iterable[str] = (), papers: Iterable[str] = (), all_: bool = False) -> list[Claim]:
    """Claims by id and/or paper (``all_``: every registered claim).

    Parameters
    ----------
    ids : iterable of str, default ()
        Claim ids.
    papers : iterable of str, default ()
        Paper ids; every claim of each (after those of ``ids``, without repeats).
    all_ : bool, default False
        Every registered claim (also when neither ``ids`` nor ``papers`` is given).

    Returns
    -------
    list of Claim
        The selected claims, those of ``ids`` first.

    Raises
    ------
    ValueError
        If a paper has no registered claim, or an id is not registered.

    Examples
    --------
    >>> [c.id for c in select(ids=["crt.eq33"])]
    ['crt.eq33']
    >>> all(c.paper == "rfa" for c in select(papers=["rfa"]))
    True
    """
    reg = load_all()
    ids, papers = list(ids), list(papers)
    if all_ or (not ids and not papers):
        return list(reg.values())
    out = [get(i) for i in ids]
    for p in papers:
        got = [c for c in reg.values() if c.paper == p]
        if not got:
            raise ValueError(f"no claims registered for paper {p!r}")
        out += [c for c in got if c not in out]
    return out


def run_claims(claims: list[Claim], *, budget: str = "default", seed: int = 0,
               progress: Callable[[Claim, Verdict | None], None] | None = None) -> list[Verdict]:
    """Verify several claims in order, calling ``progress(claim, verdict)`` after each.

    Parameters
    ----------
    claims : list of Claim
        The claims, verified in this order in this process.
    budget : str, default "default"
        The budget's name.
    seed : int, default 0
        The run seed.
    progress : callable, optional
        ``progress(claim, None)`` before each claim and ``progress(claim, verdict)`` after it.

    Returns
    -------
    list of Verdict
        One verdict per claim, in order.

    Examples
    --------
    >>> from rfcheck.claims import get
    >>> [v.verdict for v in run_claims([get("crt.thm4.3")], budget="smoke")]
    ['INCONCLUSIVE']
    """
    out = []
    for c in claims:
        if progress:
            progress(c, None)
        v = run_claim(c, budget=budget, seed=seed)
        out.append(v)
        if progress:
            progress(c, v)
    return out


# ----------------------------------------------------------------- many claims, cached


def code_version() -> str:
    """A hash of the package's source: cached verdicts are reused only for identical code."""
    import hashlib
    from pathlib import Path

    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def error_entry(claim_id: str, exc: BaseException, *, budget: str, seed: int,
                elapsed: float = 0.0) -> dict[str, Any]:
    """The report entry of a claim whose computation raised: verdict ``ERROR``.

    Same keys as :meth:`Verdict.as_dict` (so tables and reports need no special case), the
    reason ``"<ExceptionType>: <message>"``, and ``error`` with the type, the message and
    the last frames of the traceback.

    Parameters
    ----------
    claim_id : str
        The claim's id (it need not be loadable: the paper is then taken from the id's prefix).
    exc : BaseException
        The exception the claim's computation raised.
    budget : str
        The budget's name, for the reproduce command.
    seed : int
        The run seed, for the reproduce command.
    elapsed : float, default 0.0
        Seconds spent before the exception.

    Returns
    -------
    dict
        The ledger entry, ``verdict`` ``"ERROR"``.

    Examples
    --------
    >>> e = error_entry("crt.eq33", ZeroDivisionError("division by zero"), budget="smoke", seed=0)
    >>> e["verdict"], e["reason"], e["error"]["type"]
    ('ERROR', 'ZeroDivisionError: division by zero', 'ZeroDivisionError')
    """
    import traceback

    try:
        c: Claim | None = get(claim_id)
    except Exception:  # the claim itself cannot be loaded: keep what is known
        c = None
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return {
        "id": claim_id,
        "paper": c.paper if c else claim_id.split(".")[0],
        "source": c.source if c else "",
        "statement": c.statement if c else "",
        "verdict": ERROR,
        "reason": f"{type(exc).__name__}: {exc}",
        "evidence": {"points_tried": 0, "deciding_check": None, "precision": "", "worst": None, "checks": []},
        "correction": None,
        "notes": c.notes if c else "",
        "needs": [],
        "error": {"type": type(exc).__name__, "message": str(exc), "traceback": "".join(tb[-6:])},
        "reproduce": f"{claim_command(claim_id)} --seed {seed} --budget {budget}",
        "reproduce_point": None,
        "budget": budget,
        "seed": seed,
        "elapsed_s": round(elapsed, 2),
    }


def _verify_one(args: tuple[str, str, int, tuple[str, ...]]) -> dict[str, Any]:
    """One claim as a task: its entry, or an ``ERROR`` entry when the computation raises.

    The claims packs are loaded first (a spawned worker or a Dask worker starts without
    them; in a forked one, or loaded already, it is a no-op)."""
    claim_id, budget, seed, packs = args
    t0 = time.perf_counter()
    try:
        for pack in packs:
            load_claims(pack)
        return run_claim(claim_id, budget=budget, seed=seed).as_dict()
    except Exception as exc:  # one claim's bug never aborts the run: it becomes its entry
        return error_entry(claim_id, exc, budget=budget, seed=seed, elapsed=time.perf_counter() - t0)


def _cacheable(entry: dict[str, Any]) -> bool:
    """Verdicts are cached; an ERROR or a check skipped for a missing extra is retried next run."""
    return entry["verdict"] != ERROR and not entry.get("needs")


#: how often the claims pending when a worker process died go to a fresh pool before each
#: is run alone (where a claim that kills its worker becomes an ERROR)
POOL_RETRIES = 2


def _run_pool(ids: list[str], budget: str, seed: int, jobs: int, done: Callable[[str, dict[str, Any]], None],
              packs: tuple[str, ...] = (), start_method: str | None = None,
              points: Callable[[str, str, int, int], None] | None = None) -> list[str]:
    """The claims ``ids`` in a process pool, ``done`` per result; returns those whose worker
    pool broke (a worker process died) before they finished.  On Ctrl-C the pool is dropped
    at once and the interrupt propagates (finished claims are cached already).  ``points``:
    the workers' point reports, passed on from a queue by a thread of this process."""
    import multiprocessing
    import queue as queue_mod
    import threading
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    broken = []
    ctx = multiprocessing.get_context(start_method)
    extra: dict[str, Any] = {}
    stop = threading.Event()
    if points is not None:
        q = ctx.Queue()
        extra = {"initializer": _queue_reporter, "initargs": (q,)}

        def drain() -> None:
            while not stop.is_set():
                try:
                    item = q.get(timeout=0.2)
                except (queue_mod.Empty, OSError, EOFError, ValueError):
                    continue
                try:
                    points(*item)
                except Exception:  # the display must not take the run down
                    pass

        threading.Thread(target=drain, daemon=True).start()
    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, **extra)
    try:
        futs = {ex.submit(_verify_one, (cid, budget, seed, packs)): cid for cid in ids}
        for f in as_completed(futs):
            try:
                entry = f.result()
            except BrokenProcessPool:
                broken.append(futs[f])
                continue
            done(futs[f], entry)
    except BaseException:
        stop.set()
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    stop.set()
    return broken


def run_many(ids: list[str], *, budget: str = "default", seed: int = 0, jobs: int = 1,
             cache_dir: str | None = None,
             progress: Callable[[str, dict[str, Any] | None], None] | None = None,
             scheduler: str | None = None, start_method: str | None = None,
             points: Callable[[str, str, int, int], None] | None = None,
             expected_s: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """Verify claims as independent tasks (a process pool when ``jobs > 1``), with a cache.

    ``expected_s``: each claim's expected seconds (e.g. the ``elapsed_s`` of a stored ledger);
    a pool then starts the longest first (claims without an estimate last, in their order), so
    that no long claim starts when the others are done.  Only the order of execution changes:
    every claim is seeded from (seed, claim id, point), and results come back in ``ids``' order.

    ``progress(claim_id, None)`` is called when a claim starts (serially) and
    ``progress(claim_id, entry)`` when it finishes; ``points(claim_id, check, done, total)``
    after each point a check evaluates (progress inside a long claim; serially and in the
    process pool, not on Dask).

    ``scheduler``: the address of a Dask distributed scheduler (``tcp://host:8786``); the
    same tasks then run on its workers (optional extra ``rfcheck[dask]``; the workers need
    rfcheck installed at the same code version).  Verdicts do not depend on where a task
    runs: every random number is seeded from (seed, claim id, point).

    ``start_method``: how the pool starts its workers (``"fork"``, ``"spawn"``,
    ``"forkserver"``; default: the platform's, except ``"spawn"`` once JAX is imported in this
    process -- JAX is multithreaded and a forked copy of it can deadlock).  Claims loaded from a pack
    (:func:`rfcheck.claims.load_claims`) are loaded again in each worker.

    The cache key is (claim id, code version, budget, seed, and for a claim from a pack the
    digest of the pack's source), and each verdict is written
    to the cache as soon as its claim finishes: re-running an interrupted ``verify --all``
    (Ctrl-C, a killed worker) resumes where it stopped, and any change to the code
    invalidates it.  A claim whose computation raises becomes an ``ERROR`` entry
    (:func:`error_entry`) and every other claim still runs; when a worker process dies, the
    claims it took down go to a fresh pool (:data:`POOL_RETRIES` times), then each alone, and
    a claim that kills its worker even alone is an ``ERROR``.  ERROR entries and entries with
    checks skipped for a missing extra are not
    cached.  Results come back in the order of ``ids``.

    Parameters
    ----------
    ids : list of str
        The claim ids.
    budget : str, default "default"
        The budget's name (a key of :data:`rfcheck.claims.BUDGETS`).
    seed : int, default 0
        The run seed.
    jobs : int, default 1
        Worker processes; ``1`` verifies in this process.
    cache_dir : str, optional
        The cache folder (default: no cache).
    progress : callable, optional
        ``progress(claim_id, entry)``, see above.
    scheduler : str, optional
        A Dask scheduler's address, see above (default: local).
    start_method : str, optional
        The pool's start method, see above.
    points : callable, optional
        ``points(claim_id, check, done, total)``, see above.
    expected_s : dict, optional
        Expected seconds by claim id, see above (default: ``ids``' order).

    Returns
    -------
    list of dict
        One ledger entry per claim (``Verdict.as_dict()``, or :func:`error_entry`), in the
        order of ``ids``; entries read from the cache have ``"cached": True``.

    Raises
    ------
    ValueError
        If ``budget`` is not a budget's name.

    Examples
    --------
    >>> [e["verdict"] for e in run_many(["crt.thm4.3"], budget="smoke")]
    ['INCONCLUSIVE']
    """
    import json
    from pathlib import Path

    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {sorted(BUDGETS)}; got {budget!r}")
    results: dict[str, dict[str, Any]] = {}
    cache = Path(cache_dir) if cache_dir else None
    version = code_version() if cache else ""

    packs = tuple(sorted({ORIGINS[c] for c in ids if c in ORIGINS}))

    def cpath(cid: str) -> Path:
        assert cache is not None
        key = (f"{cid}__{version}{source_digest(cid)}__{BUDGETS[budget].key()}__{seed}"
               .replace(":", "-").replace("/", "_"))
        return cache / f"{key}.json"

    todo = []
    for cid in ids:
        try:  # an unreadable cache file (e.g. a disk that filled up) is a miss, not a crash
            entry = json.loads(cpath(cid).read_text()) if cache and cpath(cid).exists() else None
        except (OSError, ValueError):
            entry = None
        if entry is None:
            todo.append(cid)
            continue
        results[cid] = {**entry, "cached": True}
        if progress:
            progress(cid, results[cid])

    def done(cid: str, entry: dict[str, Any]) -> None:
        results[cid] = entry
        if cache and _cacheable(entry):
            cache.mkdir(parents=True, exist_ok=True)
            tmp = cpath(cid).with_suffix(".tmp")
            tmp.write_text(json.dumps(entry, default=str))
            tmp.replace(cpath(cid))  # atomic: an interrupted write never leaves a torn entry
        if progress:
            progress(cid, entry)

    if scheduler is not None and todo:
        _run_dask(todo, budget, seed, scheduler, done, packs)
    elif jobs <= 1 or len(todo) <= 1:
        global _POINT_REPORTER
        saved, _POINT_REPORTER = _POINT_REPORTER, points
        try:
            for cid in todo:
                if progress:
                    progress(cid, None)
                done(cid, _verify_one((cid, budget, seed, packs)))
        finally:
            _POINT_REPORTER = saved
    else:
        if start_method is None and "jax" in sys.modules:
            start_method = "spawn"
        if expected_s:
            todo = sorted(todo, key=lambda c: -float(expected_s.get(c, -1.0)))  # stable: unknown ones keep order
        pending = _run_pool(todo, budget, seed, jobs, done, packs, start_method, points)
        for _ in range(POOL_RETRIES):  # a worker died (killed, out of memory): fresh pools
            if pending:
                pending = _run_pool(pending, budget, seed, jobs, done, packs, start_method, points)
        for cid in pending:  # still breaking: one claim per pool finds the one that kills its worker
            if not _run_pool([cid], budget, seed, 1, done, packs, start_method, points):
                continue
            done(cid, error_entry(cid, RuntimeError(
                "its worker process died (killed or crashed) each time this claim ran, alone as well"),
                budget=budget, seed=seed))
    return [results[c] for c in ids]


def _run_dask(todo: list[str], budget: str, seed: int, scheduler: str,
              done: Callable[[str, dict[str, Any]], None], packs: tuple[str, ...] = ()) -> None:
    """The claims ``todo`` as tasks on the Dask scheduler at ``scheduler``; ``done`` per result."""
    import os

    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as exc:
        raise ValueError("--scheduler needs the Dask extra: pip install 'rfcheck[dask]'") from exc
    timeout = float(os.environ.get("RFCHECK_DASK_TIMEOUT", "30"))
    try:
        client = Client(scheduler, timeout=f"{timeout}s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
                         f"({type(exc).__name__})") from exc
    with client:
        threads = client.nthreads()
        if any(n > 1 for n in threads.values()):
            # mpmath's working precision is process-global: threads would share it
            raise ValueError(f"Dask workers must run one thread each (dask worker --nthreads 1); got {threads}")
        futs = {client.submit(_verify_one, (cid, budget, seed, packs), key=f"rfcheck-{cid}-{seed}-{budget}",
                              pure=False): cid for cid in todo}
        for f in dask_completed(list(futs)):
            try:
                entry = f.result()
            except Exception as exc:  # a worker that died (KilledWorker) or lost the task
                entry = error_entry(futs[f], exc, budget=budget, seed=seed)
            done(futs[f], entry)

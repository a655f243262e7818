"""Calibration and power of the verification machinery, measured (``rfcheck calibrate``).

* **False alarms.**  The Monte Carlo checks of claims known to hold are run over many
  independent seeds at a calibration level ``alpha`` (0.05 by default, so that the rate is
  measurable with a few hundred runs); the fraction reported REFUTED must not exceed the
  nominal level.  The table gives the Clopper-Pearson 95% interval of that fraction, and of
  the first-stage alarms (a point's z-test rejecting, before the independent confirmation
  re-run that a REFUTED verdict also needs) -- the calibration of the z-test itself.
* **Power.**  A mutation suite plants errors of the kinds papers contain (a dropped constant,
  a wrong power, d -> d - 1, a sign, a swapped argument, a missing prefactor, a square root
  for a square, a wrong limit of summation) into registered true formulas; each mutant is
  verified at the default budget and must be REFUTED, with the time it took.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mpmath
from scipy import stats as sps

from rfcheck.claims import BUDGETS, Budget, Claim, get
from rfcheck.claims import crt as C
from rfcheck.claims._common import deterministic_check, pair_domain, stats_mp
from rfcheck.references.crt import reference_a_star
from rfcheck.verify import run_check, run_claim

__all__ = ["MUTANTS", "Mutant", "false_alarms", "mutation_power"]


@dataclass(frozen=True)
class Mutant:
    """A planted error: ``printed`` replaces the true formula of claim ``base``.

    Parameters
    ----------
    name : str
        What was planted (e.g. ``"trig: 1/2 dropped"``), the row's name in the power table.
    kind : str
        The class of error (``"dropped constant"``, ``"wrong power"``, ...).
    base : str
        The id of the registered true claim whose statement is replaced (its checks and domain are kept).
    printed : callable
        The mutated formula: a point (``dict`` of the claim's parameters) to its value in mpmath.

    Examples
    --------
    >>> m = next(m for m in MUTANTS if m.name == "trig: 1/2 dropped")
    >>> m.base, m.kind
    ('crt.text-trig-variance', 'dropped constant')
    """

    name: str
    kind: str
    base: str
    printed: Callable[[dict[str, Any]], Any]


def _k2(p: dict[str, Any]) -> Any:
    return mpmath.exp(-stats_mp(p)["sq_diff"])


def _a(p: dict[str, Any]) -> Any:
    """GERF's ``A = a_re + i a_im`` of a point (mpmath)."""
    return mpmath.mpc(p.get("a_re", 0.0), p.get("a_im", 0.0))


def _xy(p: dict[str, Any]) -> Any:
    st = stats_mp(p)
    return (st["sq_sum"] - st["sq_diff"]) / 4


def _eq6(p: dict[str, Any], *, pw1: Any = None, pw3: Any = None, den2: Any = 8, s_half: bool = True,
         half: bool = True, swap: bool = False) -> Any:
    """CRT eq (6) with optional planted errors (defaults: as printed)."""
    st = stats_mp(p)
    a, s, d = _a(p), p["s"], st["d"]
    v = st["sq_sum"] if (s == 1) != swap else st["sq_diff"]
    re_a = mpmath.re(a)
    al1 = mpmath.power(mpmath.sqrt(1 + 16 * a**2 / (1 - 8 * a)), d if pw1 is None else pw1(d))
    al2 = s + s / (1 - den2 * a)
    al3 = mpmath.power(1 + 16 * abs(a) ** 2 / (1 - 8 * re_a), (mpmath.mpf(d) / 2) if pw3 is None else pw3(d))
    al4 = (mpmath.mpf(s) / 2 if s_half else 0) + (s + 2 * abs(1 - 4 * a)) / (2 * (1 - 8 * re_a))
    pre = mpmath.mpf(1) / 2 if half else 1
    return pre * mpmath.exp(-(s + 1) * (st["sq_x"] + st["sq_y"])) * (
        mpmath.re(al1 * mpmath.exp(al2 * v)) + al3 * mpmath.exp(al4 * v)) - _k2(p)


def _rho22(p: dict[str, Any], *, c8: Any = None, den: int = 4, square: bool = False) -> Any:
    u, d = stats_mp(p)["sq_sum"], int(p["d"])
    inner = (2 * u + d) ** 2 + (8 * d if c8 is None else c8(d)) * u
    root = inner if square else mpmath.sqrt(inner)
    return (1 - 1 / ((root - 2 * u - d) / (den * u))) / 8


def _eq8(p: dict[str, Any], *, drop_last: bool = False, two: int = 2) -> Any:
    import numpy as np

    rng = np.random.default_rng(int(p["seed"]))
    L, d, s = int(p["L"]), int(p["d"]), int(p["s"])
    xs = rng.normal(size=(L, d)) * p["scale"]
    ys = rng.normal(size=(L, d)) * p["scale"] + p["shift"]
    n = L - 1 if drop_last else L
    X = [[mpmath.mpf(v) for v in row] for row in xs[:n]]
    Y = [[mpmath.mpf(v) for v in row] for row in ys[:n]]
    sx = [mpmath.fsum(X[i][k] for i in range(n)) for k in range(d)]
    sy = [mpmath.fsum(Y[i][k] for i in range(n)) for k in range(d)]
    return (mpmath.fsum(v**2 for row in X for v in row) / L
            + two * s * mpmath.fsum(a * b for a, b in zip(sx, sy, strict=True)) / L**2
            + mpmath.fsum(v**2 for row in Y for v in row) / L)


def _simrf_eq23(p: dict[str, Any], *, dshift: int = 0, two: bool = True) -> Any:
    """SimRF eq (23) (ORF conformity) with optional planted errors."""
    from rfcheck.references.simrf import series as _series

    v, d = mpmath.mpf(p["v"]), int(p["d"]) - dshift
    return mpmath.gamma(mpmath.mpf(d) / 2) / mpmath.gamma(d) * _series(
        lambda k: v ** (2 * k) / ((2**k if two else 1) * mpmath.factorial(k)) * mpmath.gamma(k + d)
        / mpmath.gamma(k + mpmath.mpf(d) / 2))


def _hrf_lem32(p: dict[str, Any], *, sign: int = -1, shift: int = 0) -> Any:
    """HRF Lemma 3.2, E lam^2 = p (p - p/n + 1/n), with optional planted errors."""
    q, n = mpmath.mpf(p["theta"]) / mpmath.pi, int(p["n"]) + shift
    return q * (q + sign * q / n + mpmath.mpf(1) / n)


#: the planted errors of the power study, each a :class:`Mutant` of a registered true formula
MUTANTS: list[Mutant] = [
    Mutant("trig: 1/2 dropped", "dropped constant", "crt.text-trig-variance", lambda p: (1 - _k2(p)) ** 2),
    Mutant("trig: outer square -> power 1", "wrong power", "crt.text-trig-variance", lambda p: (1 - _k2(p)) / 2),
    Mutant("trig: K^2 -> K", "wrong power", "crt.text-trig-variance",
           lambda p: (1 - mpmath.sqrt(_k2(p))) ** 2 / 2),
    Mutant("trig: 1 - K^2 -> 1 + K^2", "sign", "crt.text-trig-variance", lambda p: (1 + _k2(p)) ** 2 / 2),
    Mutant("pos: exp(4xy) -> exp(2xy)", "dropped constant", "crt.text-pos-variance",
           lambda p: mpmath.exp(2 * _xy(p)) - _k2(p)),
    Mutant("pos: - K^2 -> + K^2", "sign", "crt.text-pos-variance", lambda p: mpmath.exp(4 * _xy(p)) + _k2(p)),
    Mutant("pos: K^2 -> K", "wrong power", "crt.text-pos-variance",
           lambda p: mpmath.exp(4 * _xy(p)) - mpmath.sqrt(_k2(p))),
    Mutant("pos: x.y -> -x.y", "swapped argument", "crt.text-pos-variance",
           lambda p: mpmath.exp(-4 * _xy(p)) - _k2(p)),
    Mutant("eq6: alpha1 power d -> d-1", "d -> d-1", "crt.thm3.2", lambda p: _eq6(p, pw1=lambda d: d - 1)),
    Mutant("eq6: alpha3 power d/2 -> d", "wrong power", "crt.thm3.2", lambda p: _eq6(p, pw3=lambda d: d)),
    Mutant("eq6: alpha2 1-8A -> 1-4A", "dropped constant", "crt.thm3.2", lambda p: _eq6(p, den2=4)),
    Mutant("eq6: alpha4 without s/2", "missing term", "crt.thm3.2", lambda p: _eq6(p, s_half=False)),
    Mutant("eq6: prefactor 1/2 dropped", "missing prefactor", "crt.thm3.2", lambda p: _eq6(p, half=False)),
    Mutant("eq6: |x+sy| -> |x-sy|", "swapped argument", "crt.thm3.2", lambda p: _eq6(p, swap=True)),
    Mutant("eq22: 8du -> 8(d-1)u", "d -> d-1", "crt.eq22", lambda p: _rho22(p, c8=lambda d: 8 * (d - 1))),
    Mutant("eq22: 4u -> 2u", "dropped constant", "crt.eq22", lambda p: _rho22(p, den=2)),
    Mutant("eq22: sqrt -> square", "square root for a square", "crt.eq22", lambda p: _rho22(p, square=True)),
    Mutant("eq16: (sqrt(1-4A))^-d -> ^-(d-1)", "d -> d-1", "crt.eq16",
           lambda p: C.printed_eq16(p) * mpmath.re(mpmath.sqrt(1 - 4 * _a(p)))),
    Mutant("eq8: sum to L-1", "wrong limit of summation", "crt.eq8", lambda p: _eq8(p, drop_last=True)),
    Mutant("eq8: 2s/L^2 -> s/L^2", "dropped constant", "crt.eq8", lambda p: _eq8(p, two=1)),
    Mutant("e60 caption: > e^60 -> > e^70", "wrong constant", "crt.text-e60", lambda p: None),
    Mutant("thm4.1 reversed: Var_ort >= Var_iid", "sign", "crt.thm4.1", lambda p: None),
    # other papers: the printed formula of a true claim with a planted error (reference from the claim)
    Mutant("simrf eq23: d -> d-1", "d -> d-1", "simrf.thm4.3.orf", lambda p: _simrf_eq23(p, dshift=1)),
    Mutant("simrf eq23: 2^k dropped", "missing prefactor", "simrf.thm4.3.orf", lambda p: _simrf_eq23(p, two=False)),
    Mutant("hrf lem3.2: -p/n -> +p/n", "sign", "hrf.lem3.2.second", lambda p: _hrf_lem32(p, sign=1)),
    Mutant("hrf lem3.2: 1/n -> 1/(n+1)", "wrong limit of summation", "hrf.lem3.2.second",
           lambda p: _hrf_lem32(p, shift=1)),
]


def _mutated_check(base: Claim, printed: Callable[[dict[str, Any]], Any]) -> Any:
    """The base claim's first deterministic equality check with ``printed`` in place of the
    printed formula: the reference value and its error bar come from the base check itself."""
    from rfcheck.claims import Check
    from rfcheck.stats import PointEval, compare_deterministic

    det = next(ch for ch in base.checks if ch.strength == 1)

    def evaluate(p: dict[str, Any], budget: Budget, seed: int) -> PointEval:
        ev = det.evaluate(p, budget, seed)
        if ev.reference is None or not ev.decided:
            return ev
        with mpmath.workdps(budget.dps):
            # unit scale: values that vanish (e.g. at theta = 0) are compared absolutely at 10^(5-dps)
            return compare_deterministic(p, printed(p), mpmath.mpmathify(ev.reference), mpmath.mpmathify(ev.err),
                                         rtol=budget.rtol, atol=mpmath.mpf(10) ** (5 - budget.dps),
                                         scale=1)

    return Check(det.name, 1, evaluate, search=det.search, max_points=det.max_points)


def _mutant_claim(m: Mutant) -> Claim:
    base = get(m.base)
    if not m.base.startswith("crt."):
        return Claim(id=base.id + ".mutant", paper=base.paper, source=f"planted: {m.name}", statement=m.name,
                     domain=base.domain, checks=[_mutated_check(base, m.printed)])
    if m.base == "crt.text-e60":
        from rfcheck.claims._common import inequality_check
        from rfcheck.references.crt import gerf_log_variance_ratio

        checks = [inequality_check("quadrature",
                                   lambda p, dps: (lambda r: (r[0], -70, r[1]))(gerf_log_variance_ratio(p, dps)),
                                   search=False)]
    elif m.base == "crt.thm4.1":
        from rfcheck.claims._common import inequality_check

        checks = [inequality_check("quadrature", lambda p, dps: (lambda r: (-r[0], 0, r[2]))(C._orf_gap(p, dps)),
                                   max_points=24)]
    else:
        det = base.checks[0]
        ref = {
            "crt.text-trig-variance": C._gerf_moment("var", 0, -1),
            "crt.text-pos-variance": C._gerf_moment("var", 0, 1),
            "crt.thm3.2": C._gerf_moment("var"),
            "crt.eq22": reference_a_star,
            "crt.eq16": C._gerf_moment("mean"),
            "crt.eq8": C._brute(C._eq8_brute_ctx),
        }[m.base]
        checks = [deterministic_check(det.name, m.printed, ref, atol_scale=lambda p, dps: 1, max_points=det.max_points)]
    return Claim(id=base.id + ".mutant", paper="crt", source=f"planted: {m.name}", statement=m.name,
                 domain=base.domain, checks=checks)


def _rows(items: list[Any], name: Callable[[Any], str], compute: Callable[[Any], dict[str, Any]],
          progress: Callable[[str], None] | None, on_row: Callable[[dict[str, Any]], None] | None,
          key: str) -> list[dict[str, Any]]:
    """``compute(item)`` for each item; one that raises gives a row with ``error`` (the others
    still run); ``on_row`` sees each row as soon as it is finished (partial results)."""
    rows = []
    for item in items:
        if progress:
            progress(name(item))
        try:
            r = compute(item)
        except Exception as exc:
            r = {key: name(item), "verdict": "ERROR", "error": f"{key} {name(item)}: {type(exc).__name__}: {exc}"}
        rows.append(r)
        if on_row:
            on_row(r)
    return rows


def mutation_power(budget: str = "default", seed: int = 0,
                   progress: Callable[[str], None] | None = None,
                   on_row: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Verify every mutant; each row: mutant, kind, base claim, verdict, seconds (or ``error``).

    The power half of the calibration: a mutant that is not REFUTED is an error the checks miss.

    Parameters
    ----------
    budget : str, optional
        The budget the mutants are verified at (a key of ``rfcheck.claims.BUDGETS``; default
        ``"default"``).
    seed : int, optional
        The verification seed (default 0).
    progress : callable, optional
        Called with a one-line message as each row starts and finishes (the CLI's progress line).
    on_row : callable, optional
        Called with each finished row (``rfcheck calibrate`` writes partial results with it).

    Returns
    -------
    list of dict
        One row per mutant of :data:`MUTANTS`: ``mutant``, ``kind``, ``base``, ``verdict``, ``seconds``
        and ``reason`` (or ``error`` where the verification raised).
    """
    def one(m: Mutant) -> dict[str, Any]:
        t0 = time.perf_counter()
        v = run_claim(_mutant_claim(m), budget=budget, seed=seed, early_stop=True)
        return {"mutant": m.name, "kind": m.kind, "base": m.base, "verdict": v.verdict,
                "seconds": round(time.perf_counter() - t0, 2), "reason": v.reason}

    return _rows(list(MUTANTS), lambda m: m.name, one, progress, on_row, "mutant")


def false_alarms(n_seeds: int = 200, alpha: float = 0.05, seed0: int = 0,
                 progress: Callable[[str], None] | None = None,
                 on_row: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """REFUTED rates of the Monte Carlo checks of true claims over ``n_seeds`` seeds (a claim
    whose runs raise gives a row with ``error``; ``on_row`` sees each finished row).

    The size half of the calibration: the Monte Carlo check of each true claim runs at a
    smoke-sized budget with level ``alpha``, once per seed, and the rate of REFUTED verdicts
    (with its Clopper-Pearson 95% interval) is compared with ``alpha``.

    Parameters
    ----------
    n_seeds : int, optional
        Independent runs per claim (default 200).
    alpha : float, optional
        The nominal false-alarm level of the checks (default 0.05).
    seed0 : int, optional
        The first seed; the runs use ``seed0, ..., seed0 + n_seeds - 1``.
    progress : callable, optional
        Called with a one-line message as each row starts and finishes (the CLI's progress line).
    on_row : callable, optional
        Called with each finished row (``rfcheck calibrate`` writes partial results with it).

    Returns
    -------
    list of dict
        One row per claim: ``claim``, ``check``, ``runs``, ``decided_runs``, ``refuted``, ``rate``,
        ``ci95``, ``first_stage_alarms`` and ``first_stage_ci95`` (before the confirmation re-run),
        ``nominal`` (``alpha``), ``ok`` (the interval's lower end is at most ``alpha``) and ``seconds``
        (or ``error``).
    """
    base = BUDGETS["smoke"]
    budget = Budget("calibration", base.grid_levels, base.grid_cap, base.n_random, 0, 3, 20_000, 30, alpha)

    def one(claim: Claim) -> dict[str, Any]:
        check = next(ch for ch in claim.checks if ch.strength == 3)
        refuted = decided = raw = 0
        t0 = time.perf_counter()
        for k in range(n_seeds):
            r = run_check(claim, check, budget, seed0 + k)
            refuted += r.verdict == "REFUTED"
            decided += r.verdict != "INCONCLUSIVE"
            raw += any(e.decided and e.disc > 1 for e in r.evals)  # before the confirmation re-run
        lo, hi = _clopper_pearson(refuted, n_seeds)
        rlo, rhi = _clopper_pearson(raw, n_seeds)
        return {"claim": claim.id, "check": check.name, "runs": n_seeds, "decided_runs": decided,
                "refuted": refuted, "rate": refuted / n_seeds, "ci95": [lo, hi],
                "first_stage_alarms": raw, "first_stage_ci95": [rlo, rhi], "nominal": alpha,
                "ok": lo <= alpha, "seconds": round(time.perf_counter() - t0, 1)}

    claims = [get(c) for c in ("crt.text-trig-variance", "crt.text-pos-variance", "crt.thm3.2", "crt.thm4.1")]
    claims.append(_oprf_mc_claim())
    return _rows(claims, lambda c: c.id, one, progress, on_row, "claim")


def _oprf_mc_claim() -> Claim:
    """OPRF with M = 8 iid samples: the library's closed-form variance (a true claim) vs Monte Carlo."""
    from rfcheck.claims._common import mc_check
    from rfcheck.closed_forms import crt as cf

    def printed(p: dict[str, Any]) -> Any:
        st = stats_mp(p)
        return mpmath.exp(cf.oprf_log_variance(**st, backend="mpmath", dps=30)) / 8

    def sim(p: dict[str, Any], n: int, seed: int) -> Any:
        from rfcheck import features
        from rfcheck.engine.montecarlo import simulate
        from rfcheck.ledger import pair_stats_fp as stats_fp
        from rfcheck.ledger import pair_vectors

        x, y = pair_vectors(p)
        prod = features.oprf_product(x, y)
        st = stats_fp(p)
        a = float(cf.oprf_a_star(st["sq_sum"], st["d"]))
        return (simulate(prod, 8, n, coupling="iid", seed=seed)[0], float(prod.target[0]),
                cf.gerf_iid_error_moments(**st, a=a, m=8))

    return Claim(id="crt.text-oprf-variance-m8", paper="crt", source="library closed form (true)",
                 statement="Var of the 8-sample iid OPRF estimator = K^2 expm1(Delta*)/8",
                 domain=pair_domain(norm=(0.0, 0.7)), checks=[mc_check("monte-carlo", printed, sim)])


def _clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(sps.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(sps.beta.isf(a, k + 1, n - k))
    return lo, hi


def format_tables(fa: list[dict[str, Any]], mp_rows: list[dict[str, Any]]) -> str:
    """Both tables as Markdown."""
    out = ["False alarms (Monte Carlo checks of true claims):", "",
           "| claim | runs | decided | REFUTED | rate (95% CI) | first-stage alarms (95% CI) | nominal |",
           "| --- | ---: | ---: | ---: | --- | --- | ---: |"]
    for r in fa:
        if "error" in r:
            out.append(f"| {r['claim']} | ERROR: {r['error']} | | | | | |")
            continue
        out.append(f"| {r['claim']} | {r['runs']} | {r['decided_runs']} | {r['refuted']} | {r['rate']:.3f} "
                   f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] | {r['first_stage_alarms']} "
                   f"[{r['first_stage_ci95'][0]:.3f}, {r['first_stage_ci95'][1]:.3f}] | {r['nominal']} |")
    if mp_rows:
        n_ref = sum(r["verdict"] == "REFUTED" for r in mp_rows)
        out += ["", f"Mutation power: {n_ref}/{len(mp_rows)} planted errors REFUTED "
                f"({100 * n_ref / len(mp_rows):.0f}%), slowest "
                f"{max(r.get('seconds', 0.0) for r in mp_rows):.1f} s:", "",
                "| mutant | kind | base claim | verdict | seconds |", "| --- | --- | --- | --- | ---: |"]
        for r in mp_rows:
            out.append(f"| {r['mutant']} | {r.get('kind', '')} | {r.get('base', '')} | {r['verdict']} | "
                       f"{r.get('seconds', r.get('error', ''))} |")
    return "\n".join(out)


"""pytest helpers for researchers' own suites: is my estimator unbiased, does my variance
formula hold, is my coupling no worse than another, is this sampler what it claims?

A *subject* is either

* a :class:`rfcheck.features.ExpProduct` with one pair (the GERF family: TrigRF, PosRF,
  GERF with complex A, OPRF), simulated by the Numba engine under ``coupling``
  (``iid``, ``orf``, ``simrf``); or
* a :class:`rfcheck.custom.BoundEstimator` -- the user's own feature maps and sampler at
  one pair, ``Estimator(f1, f2, kernel, sampler).at(x, y)`` -- simulated in NumPy
  (``coupling`` then overrides the estimator's sampler).

Error rates.  Each helper compares with the statistics of :mod:`rfcheck.stats` at a
stated false-alarm level ``alpha``: a correct formula fails with probability <= ``alpha``
when the normal approximation holds (``rfcheck calibrate`` measures it).  Each refuses to
pass on weak evidence: when the standard error is untrustworthy (heavy tails) or too large
to see a ``power_rel`` relative error (the reported power), it raises :class:`Inconclusive`
(an ``AssertionError``) saying how many trials would be needed.

:func:`check_estimator` runs the same tests over a set of adversarial input pairs and
returns a verdict with the semantics of ``rfcheck.verify`` (HOLDS / REFUTED /
INCONCLUSIVE); :func:`assert_sampler_valid` wraps :func:`rfcheck.audit.audit_sampler`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rfcheck import validate
from rfcheck.audit import AuditReport, audit_sampler
from rfcheck.custom import BoundEstimator, Estimator, Sampler
from rfcheck.features import ExpProduct
from rfcheck.stats import Estimate, compare_mc, estimate_mean, estimate_mse, z_critical

__all__ = [
    "EstimatorReport",
    "Inconclusive",
    "adversarial_pairs",
    "assert_no_worse_than",
    "assert_sampler_valid",
    "assert_unbiased",
    "assert_variance_matches",
    "check_estimator",
]

Subject = ExpProduct | BoundEstimator


class Inconclusive(AssertionError):
    """The Monte Carlo evidence cannot decide (heavy tails or too few trials)."""


def _replicas(subject: Subject, m: int, n_trials: int, coupling: str | Sampler | None, seed: int
              ) -> tuple[np.ndarray, float]:
    """Trial values of the ``m``-feature estimate and the target kernel value."""
    if isinstance(subject, BoundEstimator):
        return (subject.replicas(m, n_trials, seed=seed, sampler=coupling),
                validate.finite_real(subject.target, "the kernel's value K(x, y)"))
    if isinstance(subject, ExpProduct):
        if subject.n_pairs != 1:
            raise ValueError(f"these helpers take one (x, y) pair; got {subject.n_pairs}")
        from rfcheck.montecarlo import simulate

        if coupling is not None and not isinstance(coupling, str):
            raise ValueError("an ExpProduct runs on the engine's couplings: pass a coupling name")
        return (simulate(subject, m, n_trials, coupling=coupling or "iid", seed=seed)[0],
                validate.finite_real(subject.target[0], "the kernel's value K(x, y)"))
    raise ValueError(f"subject must be an ExpProduct or Estimator.at(x, y); got {type(subject).__name__}")


def _need(est: Estimate, rel: float) -> str:
    n = est.trials_for(rel)
    if n > 0:
        return f"about {n:,} trials for a {rel:.0%} relative SE"
    return "more trials" if math.isfinite(est.se) else "more trials cannot help"


def _variance_test(subject: Subject, m: int, claimed: float, coupling: str | Sampler | None, n_trials: int,
                   seed: int, z_crit: float, power_rel: float, exact_moments: tuple[float, float] | None):
    claimed = validate.finite_real(claimed, "the claimed variance")
    validate.positive_real(power_rel, "power_rel")
    vals, target = _replicas(subject, m, n_trials, coupling, seed)
    est = estimate_mse(vals, target, exact_moments=exact_moments)
    # atol: float64 rounding of a (nearly) deterministic estimate, e.g. PosRF at x = -y (inf past 1e154)
    r = 1e-12 * abs(target)
    return est, compare_mc({}, float(claimed), est, z_crit=z_crit, power_rel=power_rel, atol=r * r)


def _bias_test(subject: Subject, m: int, coupling: str | Sampler | None, n_trials: int, seed: int,
               z_crit: float, rel: float) -> tuple[Estimate, float, float, str]:
    """(estimate, target, z, status) with status 'ok' | 'biased' | 'undecided: why'."""
    validate.positive_real(rel, "rel")
    vals, target = _replicas(subject, m, n_trials, coupling, seed)
    est = estimate_mean(vals)
    if est.trustworthy and est.se <= 1e-12 * abs(target):  # deterministic (e.g. PosRF at x = -y)
        ok = abs(est.value - target) <= 1e-12 * abs(target) + 1e-300
        return est, target, 0.0 if ok else math.inf, "ok" if ok else "biased"
    z = (est.value - target) / est.se
    if not est.trustworthy:
        return est, target, z, f"undecided: {est.reason}"
    if abs(z) > z_crit:
        return est, target, z, "biased"
    if z_crit * est.se > rel * abs(target) / 2:
        return est, target, z, f"undecided: no power to see a {rel:.0%} bias (SE {est.se:.2g})"
    return est, target, z, "ok"


def assert_variance_matches(
    subject: Subject, m: int, claimed: float, *, coupling: str | Sampler | None = None, n_trials: int = 200_000,
    seed: int = 0, alpha: float = 1e-3, power_rel: float = 0.1, exact_moments: tuple[float, float] | None = None,
) -> Estimate:
    """Assert that the MSE of the ``m``-sample estimator equals ``claimed`` (two-sided z-test).

    Returns the Monte Carlo estimate.  Raises ``AssertionError`` on a disagreement at level
    ``alpha`` and :class:`Inconclusive` when the test has no power to see a ``power_rel``
    relative error.  ``exact_moments = (E e, E e^2)`` of ``e = (K_hat - K)^2`` gives an exact
    standard error (e.g. ``closed_forms.crt.gerf_iid_error_moments``).
    """
    est, ev = _variance_test(subject, m, claimed, coupling, n_trials, seed, z_critical(alpha), power_rel,
                             exact_moments)
    if ev.decided and ev.disc > 1:
        raise AssertionError(f"variance {claimed:.6g} disagrees with Monte Carlo {est.value:.6g} +- {est.se:.2g} "
                             f"(z = {ev.extra['z']:.2f}, alpha = {alpha})")
    if not ev.decided:
        raise Inconclusive(f"cannot decide: {ev.note}; {_need(est, power_rel / 4)}")
    return est


def assert_unbiased(
    subject: Subject, m: int, *, coupling: str | Sampler | None = None, n_trials: int = 200_000, seed: int = 0,
    alpha: float = 1e-3, rel: float = 0.01,
) -> Estimate:
    """Assert ``E K_hat = K`` (two-sided z-test at ``alpha``); :class:`Inconclusive` if the
    standard error cannot resolve a bias of ``rel`` times ``K`` or is untrustworthy."""
    est, target, z, status = _bias_test(subject, m, coupling, n_trials, seed, z_critical(alpha), rel)
    if status == "biased":
        raise AssertionError(f"biased: mean {est.value:.6g} +- {est.se:.2g} vs K = {target:.6g} (z = {z:.2f})")
    if status != "ok":
        raise Inconclusive(f"cannot decide: {status.removeprefix('undecided: ')}")
    return est


def assert_no_worse_than(
    subject: Subject, m: int, coupling: str | Sampler, baseline: str | Sampler, *, n_trials: int = 200_000,
    seed: int = 0, alpha: float = 1e-3,
) -> tuple[Estimate, Estimate]:
    """Assert ``MSE(coupling) <= MSE(baseline)`` (one-sided z-test on the difference at ``alpha``)."""
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha (one-sided) must be in (0, 0.5); got {alpha}")
    va, target = _replicas(subject, m, n_trials, coupling, seed)
    vb, _ = _replicas(subject, m, n_trials, baseline, seed + 1)
    a, b = estimate_mse(va, target), estimate_mse(vb, target)
    if not (a.trustworthy and b.trustworthy):
        raise Inconclusive(f"cannot decide: {a.reason or b.reason}")
    se = math.hypot(a.se, b.se)
    z = (a.value - b.value) / se if se > 0 else 0.0
    zc = z_critical(2 * alpha)  # two-sided at 2 alpha = one-sided at alpha
    if z > zc:
        name = lambda c: c if isinstance(c, str) else getattr(c, "__name__", "sampler")  # noqa: E731
        raise AssertionError(f"{name(coupling)} MSE {a.value:.6g} is worse than {name(baseline)} {b.value:.6g} "
                             f"(z = {z:.2f})")
    return a, b


def assert_sampler_valid(sampler: str | Sampler, d: int, M: int | None = None, **kw: Any) -> AuditReport:
    """Assert that ``sampler`` passes :func:`rfcheck.audit.audit_sampler` (family-wise
    false-alarm level ``alpha``, default 1e-3); :class:`Inconclusive` if it cannot decide."""
    report = audit_sampler(sampler, d, M, **kw)
    if report.verdict == "REFUTED":
        raise AssertionError(str(report))
    if report.verdict == "INCONCLUSIVE":
        raise Inconclusive(str(report))
    return report


# -- a whole estimator over adversarial inputs --------------------------------------------


def adversarial_pairs(d: int, radii: Iterable[float] = (0.25, 0.5), seed: int = 0
                      ) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Input pairs where estimators break: along coordinate axes (first and last), equal,
    orthogonal, opposite, nearly opposite, with unequal norms, and random directions."""
    if not (isinstance(d, int | np.integer) and d >= 2):
        raise ValueError(f"d must be an integer >= 2; got {d!r}")
    radii = [validate.positive_real(r, "each of radii") for r in radii]
    if not radii:
        raise ValueError("radii must name at least one radius")
    e = np.eye(d)
    rng = np.random.default_rng(seed)
    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    for r in radii:
        v = rng.standard_normal((2, d))
        v *= r / np.linalg.norm(v, axis=1, keepdims=True)
        tilt = (e[0] * math.cos(0.1) + e[1] * math.sin(0.1))
        out += [(f"x = y = {r} e_0", r * e[0], r * e[0]),
                (f"x = y = {r} e_{d - 1}", r * e[d - 1], r * e[d - 1]),
                (f"x = {r} e_0, y = {r} e_1", r * e[0], r * e[1]),
                (f"x = {r} e_0, y = -{r} e_0", r * e[0], -r * e[0]),
                (f"x = {r} e_0, y nearly -x", r * e[0], -r * tilt),
                (f"x = {r} e_0, y = {r / 4} e_1", r * e[0], r / 4 * e[1]),
                (f"random, |x| = |y| = {r}", v[0], v[1])]
    return out


@dataclass
class EstimatorReport:
    """Verdicts of :func:`check_estimator`: one row per input pair and test."""

    name: str
    m: int
    alpha: float
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if any(r["status"] == "disagrees" for r in self.rows):
            return "REFUTED"
        if any(r["status"] != "agrees" for r in self.rows):
            return "INCONCLUSIVE"
        return "HOLDS"

    @property
    def counterexample(self) -> dict[str, Any] | None:
        bad = [r for r in self.rows if r["status"] == "disagrees"]
        return max(bad, key=lambda r: abs(r["z"])) if bad else None

    def __str__(self) -> str:
        lines = [f"{self.name}, m = {self.m}, family-wise alpha = {self.alpha:g}: {self.verdict}"]
        for r in self.rows:
            lines.append(f"  {r['status']:<10} {r['test']:<9} {r['pair']:<32} z = {r['z']:+.2f}  {r['detail']}")
        return "\n".join(lines)


def check_estimator(
    estimator: Estimator, m: int, *, claimed_variance: Callable[[np.ndarray, np.ndarray, int], float] | None = None,
    pairs: list[tuple[str, np.ndarray, np.ndarray]] | None = None, d: int | None = None, n_trials: int = 100_000,
    max_trials: int | None = 400_000, alpha: float = 1e-3, power_rel: float = 0.1, seed: int = 0,
) -> EstimatorReport:
    """Check unbiasedness (and ``claimed_variance(x, y, m)``, if given) at every pair.

    ``pairs`` defaults to :func:`adversarial_pairs` in dimension ``d``.  All tests share the
    family-wise false-alarm level ``alpha`` (Bonferroni).  The verdict is REFUTED if any
    decided test disagrees (the row with the largest |z| is the counterexample), HOLDS if
    every test decided and agreed, INCONCLUSIVE otherwise.  A test left undecided at
    ``n_trials`` (heavy tails, no power) is run once more with ``max_trials``, on a fresh
    independent stream; only the decided one counts.  Either look can reject, so the
    Bonferroni level counts both: ``alpha`` is shared by (tests) x (tries).
    """
    if pairs is None:
        if d is None:
            raise ValueError("check_estimator needs either pairs or the dimension d")
        pairs = adversarial_pairs(d)
    if not pairs:
        raise ValueError("check_estimator needs at least one input pair")
    tries = [n_trials] + ([max_trials] if max_trials and max_trials > n_trials else [])
    n_tests = len(pairs) * (2 if claimed_variance is not None else 1)
    zc = z_critical(alpha, n_tests * len(tries))
    rep = EstimatorReport(estimator.name, m, alpha)
    stride = 2 * len(pairs)  # try t of test j runs on seed + j + t * stride: no stream is reused
    for k, (label, x, y) in enumerate(pairs):
        subject = estimator.at(x, y)
        for t, n in enumerate(tries):  # undecided at n_trials: one more try with max_trials
            est, target, z, status = _bias_test(subject, m, None, n, seed + 2 * k + t * stride, zc, power_rel / 10)
            if status in ("ok", "biased"):
                break
        rep.rows.append({"pair": label, "test": "unbiased", "z": float(z), "trials": est.n,
                         "status": {"ok": "agrees", "biased": "disagrees"}.get(status, "undecided"),
                         "detail": f"mean {est.value:.6g} +- {est.se:.2g}, K = {target:.6g}"
                                   + ("" if status in ("ok", "biased") else f"; {status}"),
                         "x": x.tolist(), "y": y.tolist()})
        if claimed_variance is not None:
            claimed = float(claimed_variance(x, y, m))
            for t, n in enumerate(tries):
                est, ev = _variance_test(subject, m, claimed, None, n, seed + 2 * k + 1 + t * stride, zc,
                                         power_rel, None)
                if ev.decided:
                    break
            st = "undecided" if not ev.decided else ("disagrees" if ev.disc > 1 else "agrees")
            rep.rows.append({"pair": label, "test": "variance", "z": float(ev.extra["z"]), "trials": est.n,
                             "status": st,
                             "detail": f"claimed {claimed:.6g}, Monte Carlo {est.value:.6g} +- {est.se:.2g}"
                                       + (f"; {ev.note}" if not ev.decided else ""),
                             "x": x.tolist(), "y": y.tolist()})
    return rep

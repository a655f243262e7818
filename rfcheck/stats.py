"""Statistics that do not lie: estimates with standard errors, tail diagnostics, tests
with known false-alarm rates, and comparisons of printed values with references.

Random-feature estimators are far from Gaussian: the squared error of the PosRF
estimator can have kurtosis 1e5, so a sample standard error computed from 1e6 trials
can be off by a factor of several.  Every Monte Carlo number here therefore carries

* a standard error from the exact fourth moment when one is supplied, otherwise from
  the sample (with batch means as a cross-check);
* a tail diagnostic -- how unevenly the fourth moment is spread over batches, and the
  largest single contribution -- that marks the standard error *untrustworthy*;
* the achieved relative precision and the number of trials a requested precision needs.

Comparisons return a normalised discrepancy ``disc`` (> 1 means disagreement beyond the
error bars at the stated false-alarm level) and ``decided`` (False when the reference
cannot decide: heavy tails, too little precision); verdict logic lives in
``rfcheck.verify``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

__all__ = [
    "Estimate",
    "PointEval",
    "compare_deterministic",
    "compare_inequality",
    "compare_mc",
    "estimate_mean",
    "estimate_mse",
    "fourth_central_moment_of_mean",
    "z_critical",
]

#: batches used for the tail diagnostic and batch-means standard errors
N_BATCHES = 32
#: coefficient of variation of per-batch fourth moments above which the SE is not trusted
TAIL_CV_LIMIT = 1.0
#: largest share of the total squared-error mass one trial may carry before the SE is not trusted
TAIL_MAX_SHARE = 0.05
#: relative standard error above which a normal approximation is not trusted
MAX_REL_SE = 0.1


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate with its standard error and a tail diagnostic."""

    value: float
    se: float
    n: int
    se_source: str  # "exact-4th-moment" | "sample"
    trustworthy: bool
    tail_cv: float
    max_share: float
    reason: str = ""

    @property
    def rel_se(self) -> float:
        return self.se / abs(self.value) if self.value != 0 else math.inf

    def trials_for(self, rel: float) -> int:
        """Trials needed for relative standard error ``rel`` at this spread."""
        if self.value == 0 or not math.isfinite(self.se):
            return -1
        return math.ceil(self.n * (self.rel_se / rel) ** 2)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["rel_se"] = self.rel_se
        d["trials_for_1pct"] = self.trials_for(0.01)
        return d


def _tail_diagnostic(e: np.ndarray) -> tuple[float, float]:
    """Spread of per-batch second moments of ``e`` (i.e. fourth moments of the error) and
    the largest single share of ``sum(e^2)``."""
    n = e.size
    if n < 2 * N_BATCHES:
        return math.inf, 1.0
    e2 = e.astype(float) ** 2
    tot = float(np.sum(e2))
    if tot == 0.0:
        return 0.0, 0.0
    b = e2[: (n // N_BATCHES) * N_BATCHES].reshape(N_BATCHES, -1).mean(axis=1)
    cv = float(np.std(b, ddof=1) / np.mean(b)) if np.mean(b) > 0 else 0.0
    return cv, float(np.max(e2) / tot)


def _estimate(samples: np.ndarray, exact_var: float | None, what: str) -> Estimate:
    x = np.asarray(samples, dtype=float).ravel()
    n = x.size
    if n < 2:
        raise ValueError("an estimate needs at least 2 samples")
    if not np.all(np.isfinite(x)):
        return Estimate(math.nan, math.inf, n, "sample", False, math.inf, 1.0, f"non-finite {what}")
    value = float(np.mean(x))
    cv, share = _tail_diagnostic(x - value)
    if exact_var is not None:
        se = math.sqrt(max(exact_var, 0.0) / n)
        src = "exact-4th-moment"
        ok, reason = True, ""
    else:
        se = float(np.std(x, ddof=1) / math.sqrt(n))
        src = "sample"
        ok = cv <= TAIL_CV_LIMIT and share <= TAIL_MAX_SHARE
        reason = "" if ok else (
            f"heavy tails: per-batch 4th-moment CV {cv:.2g} (limit {TAIL_CV_LIMIT}), "
            f"largest single share {share:.2g} (limit {TAIL_MAX_SHARE})"
        )
    rel = se / abs(value) if value != 0 else (0.0 if se == 0 else math.inf)
    if ok and rel > MAX_REL_SE:
        ok, reason = False, f"relative SE {rel:.2g} > {MAX_REL_SE}: normal approximation not trusted"
    return Estimate(value, se, n, src, ok, cv, share, reason)


def estimate_mean(samples: np.ndarray, exact_var: float | None = None) -> Estimate:
    """Mean of ``samples`` with SE (``exact_var``: the exact variance of one sample)."""
    return _estimate(samples, exact_var, "samples")


def fourth_central_moment_of_mean(raw: tuple[float, float, float, float], m: int) -> tuple[float, float]:
    """Variance and fourth central moment of the mean of ``m`` iid copies of X.

    ``raw = (E X, E X^2, E X^3, E X^4)``.  Returns ``(sigma^2/m, (mu4 + 3(m-1) sigma^4)/m^3)``.
    """
    m1, m2, m3, m4 = raw
    var = m2 - m1**2
    mu4 = m4 - 4 * m1 * m3 + 6 * m1**2 * m2 - 3 * m1**4
    return var / m, (mu4 + 3 * (m - 1) * var**2) / m**3


def estimate_mse(
    estimates: np.ndarray, target: float, *, exact_moments: tuple[float, float] | None = None
) -> Estimate:
    """MSE ``E(K_hat - K)^2`` of an estimator from its trial values.

    ``exact_moments = (E(K_hat-K)^2, E(K_hat-K)^4)`` (e.g. from
    :func:`fourth_central_moment_of_mean` for an unbiased iid estimator) gives the exact
    standard error ``sqrt((E e^2 - (E e)^2)/N)`` for ``e = (K_hat - K)^2``; otherwise the
    sample SE is used and the tail diagnostic decides whether it can be trusted.
    """
    e = (np.asarray(estimates, dtype=float).ravel() - target) ** 2
    exact_var = None
    if exact_moments is not None:
        m2, m4 = exact_moments
        exact_var = m4 - m2**2
    return _estimate(e, exact_var, "squared errors")


def z_critical(alpha: float, n_tests: int = 1) -> float:
    """Two-sided normal critical value at family-wise level ``alpha`` over ``n_tests`` (Bonferroni)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}")
    return float(sps.norm.isf(alpha / (2 * max(n_tests, 1))))


@dataclass
class PointEval:
    """The outcome of one check at one point of a claim's domain."""

    point: dict[str, Any]
    printed: Any
    reference: Any
    err: float
    disc: float
    decided: bool = True
    note: str = ""
    extra: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        def num(v: Any) -> Any:
            if v is None or isinstance(v, str | bool | int):
                return v
            import mpmath

            if isinstance(v, mpmath.mpf | mpmath.mpc) and mpmath.isfinite(v) and abs(v) > 1e300:
                return mpmath.nstr(v, 17)
            try:
                c = complex(v)
            except (TypeError, ValueError):
                return str(v)
            if c.imag == 0:
                return float(c.real) if math.isfinite(c.real) else str(c.real)
            return {"re": c.real, "im": c.imag}

        return {
            "point": {k: num(v) for k, v in self.point.items()},
            "printed": num(self.printed),
            "reference": num(self.reference),
            "err": num(self.err),
            "disc": num(self.disc),
            "decided": self.decided,
            "note": self.note,
            **({"extra": self.extra} if self.extra else {}),
        }


def _abs(v: Any) -> Any:
    """|v| as an mpmath number: no overflow for references far outside float64."""
    import mpmath

    return abs(mpmath.mpmathify(v)) if v is not None else mpmath.mpf(0)


def _ratio(num: Any, den: Any) -> float:
    if den > 0:
        return float(num / den)
    return 0.0 if num == 0 else math.inf


#: a deterministic reference decides only if its error bar is this small relative to its scale
MAX_REF_REL_ERR = 1e-8


def compare_deterministic(
    point: dict[str, Any], printed: Any, ref: Any, ref_err: Any, *, rtol: float, atol: float = 0.0,
    scale: Any = 0.0,
) -> PointEval:
    """Equality of a printed value with a deterministic reference.

    ``disc = |printed - ref| / (10 * ref_err + rtol * |ref| + atol)``: the reference's error
    bar with a safety factor of 10, plus the rounding of the printed formula's evaluation.
    The point is undecided when the reference's error bar exceeds ``MAX_REF_REL_ERR``
    times ``max(|ref|, |scale|)`` -- an imprecise reference must not let a wrong formula pass.
    """
    import mpmath

    err, aref = _abs(ref_err), _abs(ref)
    if not (mpmath.isfinite(err) and mpmath.isfinite(aref)):
        return PointEval(point, printed, ref, math.inf, math.nan, False, "reference has no error bar")
    if err > MAX_REF_REL_ERR * max(aref, _abs(scale)):
        return PointEval(point, printed, ref, err, math.nan, False,
                         f"reference not precise enough (error {mpmath.nstr(err, 2)} vs value {mpmath.nstr(aref, 2)})")
    diff = _abs(mpmath.mpmathify(printed) - mpmath.mpmathify(ref))
    tol = 10 * err + rtol * aref + atol
    return PointEval(point, printed, ref, err, _ratio(diff, tol))


def compare_inequality(
    point: dict[str, Any], lhs: Any, rhs: Any, err: Any, *, rtol: float, printed: Any = None
) -> PointEval:
    """A claimed ``lhs <= rhs``: ``disc = (lhs - rhs) / tol``; ``disc > 1`` is a violation.

    ``tol = 10 * err + rtol * max(|lhs|, |rhs|)``.  ``disc`` is negative when the inequality
    holds with room to spare, so an optimiser can climb towards a violation.
    """
    import mpmath

    e = _abs(err)
    if not mpmath.isfinite(e):
        return PointEval(point, rhs, lhs, math.inf, math.nan, False, "reference has no error bar")
    lo, hi = mpmath.re(mpmath.mpmathify(lhs)), mpmath.re(mpmath.mpmathify(rhs))
    tol = 10 * e + rtol * max(abs(lo), abs(hi))
    margin = lo - hi
    disc = float(margin / tol) if tol > 0 else (math.copysign(math.inf, margin) if margin else 0.0)
    return PointEval(point, printed if printed is not None else rhs, lhs, e, disc)


def compare_mc(
    point: dict[str, Any], printed: float, est: Estimate, *, z_crit: float, power_rel: float = 0.1,
    atol: float = 0.0,
) -> PointEval:
    """A printed value against a Monte Carlo estimate: ``disc = |z| / z_crit``.

    ``z = (estimate - printed) / sqrt(SE^2 + atol^2)``: ``atol`` is float64 rounding of the
    simulation itself, which matters only where the variance is (nearly) zero, e.g. PosRF
    at ``x = -y``.  Undecided when the estimate's SE is untrustworthy (heavy tails) or when the test lacks
    power: it could not have detected a relative error of ``power_rel``
    (``z_crit * SE > power_rel * |printed| / 2``).
    """
    se = math.hypot(est.se, atol)
    z = (est.value - float(printed)) / se if se > 0 else (0.0 if est.value == printed else math.inf)
    disc = abs(z) / z_crit
    decided, note = est.trustworthy or se == atol, est.reason
    if decided and z_crit * se > power_rel * abs(float(printed)) / 2 and disc <= 1 and abs(float(printed)) > atol:
        decided, note = False, f"no power: SE {est.se:.3g} cannot resolve a {power_rel:.0%} error"
    return PointEval(point, printed, est.value, est.se, disc, decided, note,
                     {"z": z, "z_crit": z_crit, **est.as_dict()})

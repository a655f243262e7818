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
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from rfcheck import validate

__all__ = [
    "Estimate",
    "PointEval",
    "compare_deterministic",
    "compare_inequality",
    "compare_mc",
    "estimate_mean",
    "estimate_mse",
    "exact_moments_of_mean",
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
    """A Monte Carlo estimate with its standard error and a tail diagnostic.

    Parameters
    ----------
    value : float
        The estimate (a mean, or an MSE).
    se : float
        Its standard error (``inf`` where the sample says nothing about it).
    n : int
        The number of samples.
    se_source : {"exact-4th-moment", "sample"}
        Where ``se`` comes from: an exact variance supplied by the caller, or the sample.
    trustworthy : bool
        Whether the tail diagnostic passed and the relative SE is at most :data:`MAX_REL_SE`.
    tail_cv : float
        Coefficient of variation of the per-batch fourth moments over :data:`N_BATCHES` batches
        (``inf`` below ``2 * N_BATCHES`` samples); above :data:`TAIL_CV_LIMIT` the SE is not trusted.
    max_share : float
        Largest share, in [0, 1], of one sample in the squared-deviation mass; above
        :data:`TAIL_MAX_SHARE` the SE is not trusted.
    reason : str, default ""
        Why the estimate is not trustworthy (empty when it is).

    Attributes
    ----------
    rel_se : float
        ``se / |value|`` (``inf`` for ``value = 0``).

    Examples
    --------
    >>> est = Estimate(2.0, 0.02, 1000, "sample", True, 0.1, 0.01)
    >>> est.rel_se, est.trials_for(0.005)
    (0.01, 4000)
    """

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


def _product(*factors: float) -> float:
    """Product of non-negative floats with no intermediate overflow or underflow: the
    result is ``inf`` (or 0) only where the product itself lies outside float64."""
    mant, ex = 1.0, 0
    for f in factors:
        if f == 0.0:
            return 0.0
        if not math.isfinite(f):
            return math.inf
        m, e = math.frexp(f)
        mant, e2 = math.frexp(mant * m)
        ex += e + e2
    try:
        return math.ldexp(mant, ex)
    except OverflowError:
        return math.inf


def _spread(dev: np.ndarray, scale: tuple[float, ...] = ()) -> tuple[float, float, float]:
    """Sample SD (``ddof = 1``), tail CV and largest share of the deviations ``prod(scale) * dev``
    of a sample about its mean.

    Tail diagnostic: the spread over :data:`N_BATCHES` batches of the per-batch second
    moments of the deviations (i.e. fourth moments of the error) and the largest single
    share of their sum.  Everything is computed on ``dev / max|dev|``, so no square
    underflows or overflows: a standard error is 0 only for a sample that is constant.
    """
    n = dev.size
    t = float(np.max(np.abs(dev)))
    if t == 0.0:
        return 0.0, (math.inf if n < 2 * N_BATCHES else 0.0), (1.0 if n < 2 * N_BATCHES else 0.0)
    w2 = (dev / t) ** 2
    tot = float(np.sum(w2))
    sd = _product(*scale, t, math.sqrt(tot / (n - 1)))
    if n < 2 * N_BATCHES:
        return sd, math.inf, 1.0
    b = w2[: (n // N_BATCHES) * N_BATCHES].reshape(N_BATCHES, -1).mean(axis=1)
    return sd, float(np.std(b, ddof=1) / np.mean(b)), float(np.max(w2) / tot)


def _estimate(value: float, dev: np.ndarray, scale: tuple[float, ...], n: int, exact_var: float | None,
              exact_value: float | None = None, flag: str = "", deterministic: bool = False) -> Estimate:
    """An estimate from its value and its samples' deviations ``prod(scale) * dev`` about it.

    The SE is the sample SE, or ``sqrt(exact_var / n)``; either way it is trusted only if
    the tail diagnostic passes (an exact SE does not make the mean of a skewed sample
    normal: with an exact SE and no tail check, lognormal squared errors at a 7.5% relative
    SE were rejected 7x as often as the nominal ``alpha`` = 1e-3) and the relative SE --
    against ``exact_value`` where known, so that a sample is not trusted for being an
    upward fluke -- is at most :data:`MAX_REL_SE`.  ``flag``: a reason to distrust found
    by the caller (e.g. an estimate that underflowed).  ``deterministic``: the samples agree
    to rounding (relative spread <= :data:`DETERMINISTIC_REL`, e.g. PosRF at ``x = -y``), whose
    tail diagnostic would only describe rounding: trusted, the comparison's ``atol`` decides.
    """
    sd, cv, share = _spread(dev, scale)
    if exact_var is not None:
        se, src = math.sqrt(exact_var / n), "exact-4th-moment"
    else:
        se, src = sd / math.sqrt(n), "sample"
    ok = deterministic or (cv <= TAIL_CV_LIMIT and share <= TAIL_MAX_SHARE)
    reason = "" if ok else (
        f"too few samples ({n}) for the tail diagnostic" if n < 2 * N_BATCHES else
        f"heavy tails: per-batch 4th-moment CV {cv:.2g} (limit {TAIL_CV_LIMIT}), "
        f"largest single share {share:.2g} (limit {TAIL_MAX_SHARE})")
    ref = exact_value if exact_value is not None else value
    rel = se / abs(ref) if ref != 0 else (0.0 if se == 0 else math.inf)
    if ok and rel > MAX_REL_SE:
        ok, reason = False, f"relative SE {rel:.2g} > {MAX_REL_SE}: normal approximation not trusted"
    if not math.isfinite(value):
        ok, reason = False, "the estimate overflows float64 (work in log-space)"
    if flag:  # the sample's spread says nothing: no standard error
        ok, reason, se = False, flag, math.inf
    return Estimate(value, se, n, src, ok, cv, share, reason)


#: relative spread of the samples below which they are one number up to rounding
DETERMINISTIC_REL = 1e-12

_UNDERFLOW = "the estimate underflows float64's normal range (work in log-space)"
_TINY = sys.float_info.min  # below it, float64 numbers lose precision (subnormal) or vanish


def _samples(samples: np.ndarray, what: str) -> tuple[np.ndarray, Estimate | None]:
    x = validate.real_array(samples, what).ravel()  # complex samples: ValueError, not a cast with a warning
    if x.size < 2:
        raise ValueError("an estimate needs at least 2 samples")
    bad = int(np.sum(~np.isfinite(x)))
    if bad:
        return x, Estimate(math.nan, math.inf, x.size, "sample", False, math.inf, 1.0,
                           f"non-finite {what}: {bad} of {x.size} are inf or nan (the features overflow "
                           "float64; more trials cannot help)")
    return x, None


def _exact_var(v: float | None, what: str) -> float | None:
    """Validate an exact variance: finite, and not negative beyond rounding."""
    if v is None:
        return None
    v = float(v)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{what} must be finite and >= 0; got {v!r} (cancellation in computing it?)")
    return v


def estimate_mean(samples: np.ndarray, exact_var: float | None = None, *,
                  deterministic_rel: float = DETERMINISTIC_REL) -> Estimate:
    """Mean of ``samples`` with its standard error and the tail diagnostic.

    Parameters
    ----------
    samples : array_like
        Independent real, finite samples.
    exact_var : float, optional
        The exact variance of one sample: the SE is then ``sqrt(exact_var / N)`` instead of the
        sample SE.
    deterministic_rel : float
        Relative spread below which the samples count as one number up to rounding (default
        :data:`DETERMINISTIC_REL`, for float64 arithmetic; a caller whose samples were computed
        in a less precise dtype passes a multiple of its ``eps``).

    Returns
    -------
    Estimate
        ``value``, ``se`` and the tail diagnostic.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.stats import estimate_mean
    >>> est = estimate_mean(np.random.default_rng(0).exponential(2.0, 40_000))
    >>> abs(est.value - 2.0) < 4 * est.se, est.trustworthy
    (True, True)
    """
    x, bad = _samples(samples, "samples")
    if bad:
        return bad
    ev = _exact_var(exact_var, "exact_var")
    s = float(np.max(np.abs(x)))
    if s == 0.0:
        return _estimate(0.0, np.zeros_like(x), (), x.size, ev)
    u = x / s
    mu = float(np.mean(u))
    value = float(np.mean(x))  # as accurate as it gets; scaled only where the sum overflows
    if not math.isfinite(value):
        value = _product(abs(mu), s) * math.copysign(1.0, mu)
    det = _spread(u - mu)[0] <= deterministic_rel * abs(mu)
    return _estimate(value, u - mu, (s,), x.size, ev, flag=_UNDERFLOW if abs(value) < _TINY and mu != 0 else "",
                     deterministic=det)


def _central4(raw: tuple[Any, Any, Any, Any]) -> tuple[Any, Any]:
    m1, m2, m3, m4 = raw
    return m2 - m1**2, m4 - 4 * m1 * m3 + 6 * m1**2 * m2 - 3 * m1**4


def fourth_central_moment_of_mean(raw: tuple[float, float, float, float], m: int) -> tuple[float, float]:
    """Variance and fourth central moment of the mean of ``m`` iid copies of X.

    ``raw = (E X, E X^2, E X^3, E X^4)``.  Returns ``(sigma^2/m, (mu4 + 3(m-1) sigma^4)/m^3)``.
    Raises ``ValueError`` where cancellation leaves a negative variance or fourth moment
    (a nearly deterministic X: use :func:`exact_moments_of_mean`, which raises the precision).

    Parameters
    ----------
    raw : tuple of 4 floats
        The raw moments ``(E X, E X^2, E X^3, E X^4)`` of one copy.
    m : int
        The number of iid copies averaged, >= 1.

    Returns
    -------
    var_mean : float
        ``sigma^2 / m``, the variance of the mean.
    mu4_mean : float
        ``(mu4 + 3 (m - 1) sigma^4) / m^3``, its fourth central moment.

    Raises
    ------
    ValueError
        If the central moments come out with ``sigma^2 < 0``, ``mu4 < sigma^4`` or ``mu4`` not finite.

    Examples
    --------
    >>> fourth_central_moment_of_mean((0.0, 1.0, 0.0, 3.0), 2)  # X ~ N(0, 1)
    (0.5, 0.75)
    """
    var, mu4 = _central4(raw)
    if not (var >= 0 and mu4 >= var**2 and math.isfinite(mu4)):
        raise ValueError(f"raw moments give variance {float(var):.3g} and fourth central moment {float(mu4):.3g}: "
                         "need 0 <= variance and variance^2 <= mu4 (cancellation for a nearly deterministic X?)")
    return var / m, (mu4 + 3 * (m - 1) * var**2) / m**3


def exact_moments_of_mean(raw_at: Callable[[int], tuple[Any, Any, Any, Any]], m: int, *, dps: int = 40,
                          digits: int = 20, max_dps: int = 640) -> tuple[float, float]:
    """:func:`fourth_central_moment_of_mean` (as floats) of raw moments ``raw_at(dps)``
    computed in mpmath, at doubling precision until the central moments keep ``digits``
    digits (they cancel: for a nearly deterministic X, ``E X^2 - (E X)^2`` is many orders
    below ``E X^2``).  At ``max_dps`` a remainder below ``10^(digits - max_dps)`` of the
    raw moments is zero in float64 and is returned as such.  These are the
    ``exact_moments`` (``E e``, ``E e^2`` of ``e = (K_hat - K)^2``) of an unbiased mean.

    Parameters
    ----------
    raw_at : callable
        ``raw_at(dps) -> (E X, E X^2, E X^3, E X^4)``, computed with ``dps`` decimal digits
        (mpmath numbers or anything ``mpmath.mpmathify`` accepts).
    m : int
        The number of iid copies averaged, >= 1.
    dps : int, default 40
        The first working precision (decimal digits); doubled until the moments keep ``digits``.
    digits : int, default 20
        Significant digits the central moments must keep.
    max_dps : int, default 640
        The precision at which doubling stops.

    Returns
    -------
    var_mean : float
        ``sigma^2 / m``.
    mu4_mean : float
        ``(mu4 + 3 (m - 1) sigma^4) / m^3``.

    Examples
    --------
    >>> exact_moments_of_mean(lambda dps: (1, 1, 1, 1), 4)  # X = 1 deterministically
    (0.0, 0.0)
    """
    import mpmath

    while True:
        with mpmath.workdps(dps):
            raw = tuple(mpmath.mpmathify(r) for r in raw_at(dps))
            var, mu4 = _central4(raw)
            floor = mpmath.mpf(10) ** (digits - dps)
            if (var >= floor * abs(raw[1]) and mu4 >= floor * abs(raw[3])) or dps >= max_dps:
                var, mu4 = max(var, mpmath.mpf(0)), max(mu4, var**2)
                return float(var / m), float((mu4 + 3 * (m - 1) * var**2) / m**3)
        dps *= 2


def estimate_mse(
    estimates: np.ndarray, target: float, *, exact_moments: tuple[float, float] | None = None,
    deterministic_rel: float = DETERMINISTIC_REL,
) -> Estimate:
    """MSE ``E(K_hat - K)^2`` of an estimator from its trial values.

    Parameters
    ----------
    estimates : array_like
        Independent replicas ``K_hat_i`` of the estimate (real, finite; e.g. one row of
        :func:`rfcheck.engine.montecarlo.simulate`).
    target : float
        The value ``K`` the estimator is meant to estimate.
    exact_moments : (float, float), optional
        ``(E(K_hat-K)^2, E(K_hat-K)^4)`` (e.g. from :func:`fourth_central_moment_of_mean` for
        an unbiased iid estimator): the exact standard error ``sqrt((E e^2 - (E e)^2)/N)`` for
        ``e = (K_hat - K)^2`` is then used instead of the sample SE.  Either way the tail
        diagnostic decides whether it can be trusted.
    deterministic_rel : float
        The relative spread, and relative distance from ``K``, below which estimates count as
        equal up to rounding (default :data:`DETERMINISTIC_REL`, for float64 arithmetic).

    Returns
    -------
    Estimate
        ``value`` (the MSE), ``se``, and the tail diagnostic (``trustworthy``, ``tail_cv``,
        ``max_share``, ``reason``).  A sample whose estimates are all equal but differ from
        ``K`` is not trusted (a deterministic estimate, or under/overflow).

    Raises
    ------
    ValueError
        For a complex or non-finite ``target``, complex samples, or invalid ``exact_moments``.

    Notes
    -----
    No cancellation: the deviations of ``e_i = (K_hat_i - K)^2`` about their mean are
    computed as ``(K_hat_i - m)(K_hat_i + m - 2K)`` minus their mean (``m`` the mean of
    ``K_hat``), so an estimate far below its target (``K_hat_i - K`` rounding to ``-K``, as
    when positive features underflow) keeps its spread; and everything is scaled, so the
    squares neither overflow nor underflow.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.stats import estimate_mse
    >>> est = estimate_mse(np.random.default_rng(0).normal(1.0, 0.1, 20_000), 1.0)
    >>> round(est.value, 4), est.se < 2e-4, est.trustworthy
    (0.0099, True, True)
    """
    k, bad = _samples(estimates, "estimates")
    if bad:
        return bad
    target = float(target)
    if not math.isfinite(target):
        raise ValueError(f"target must be finite; got {target!r}")
    ev = None
    if exact_moments is not None:
        m2, m4 = (float(v) for v in exact_moments)
        if not (math.isfinite(m2) and math.isfinite(m4) and m2 >= 0):
            raise ValueError(f"exact_moments must be finite with E e >= 0; got {exact_moments!r}")
        v = m4 - m2**2
        ev = _exact_var(0.0 if -1e-12 * m4 <= v < 0 else v, "exact_moments: E e^2 - (E e)^2")
    s = max(float(np.max(np.abs(k))), abs(target))
    if s == 0.0:
        return _estimate(0.0, np.zeros_like(k), (), k.size, ev, m2 if ev is not None else None)
    ks, ts = k / s, target / s
    es = ks - ts
    t = float(np.max(np.abs(es)))
    if 1e-140 < t * s < 1e140:  # no square over- or underflows that could matter: the plain mean
        value = float(np.mean((k - target) ** 2))
    else:
        value = _product(t, t, float(np.mean((es / t) ** 2)), s, s) if t > 0 else 0.0
    ms = float(np.mean(ks))
    a = (ks - ms) * (ks + ms - 2 * ts)  # (k_i - K)^2 - (m - K)^2 in units of s^2: no cancellation
    flag = _UNDERFLOW if t > 0 and value < _TINY else ""
    det = _spread(ks - ms)[0] <= deterministic_rel * abs(ms)
    if det and abs(ms - ts) > deterministic_rel * abs(ts):
        flag = (f"every estimate is {k[0]:.6g} up to rounding, not the target {target:.6g}: a deterministic "
                "estimate, or features that under/overflow")
    return _estimate(value, a - float(np.mean(a)), (s, s), k.size, ev,
                     m2 if ev is not None else None, flag, det)


def z_critical(alpha: float, n_tests: int = 1) -> float:
    """Two-sided normal critical value at family-wise level ``alpha`` over ``n_tests`` (Bonferroni).

    Parameters
    ----------
    alpha : float
        The family-wise false-alarm probability, in (0, 1).
    n_tests : int, default 1
        The number of tests sharing ``alpha`` (values below 1 count as 1).

    Returns
    -------
    float
        ``z`` with ``P(|N(0, 1)| > z) = alpha / n_tests``.

    Raises
    ------
    ValueError
        If ``alpha`` is not in (0, 1).

    Examples
    --------
    >>> round(z_critical(0.05), 3)
    1.96
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}")
    return float(sps.norm.isf(alpha / (2 * max(n_tests, 1))))


@dataclass
class PointEval:
    """The outcome of one check at one point of a claim's domain.

    Parameters
    ----------
    point : dict
        The point (parameter name -> value).
    printed : object
        The printed formula's value there.
    reference : object
        The reference value (or, for an inequality, the left-hand side).
    err : float
        The reference's error bar (a standard error for Monte Carlo).
    disc : float
        Normalised discrepancy: > 1 means disagreement beyond the error bars (NaN if undecided).
    decided : bool, default True
        Whether the reference could decide at this point.
    note : str, default ""
        Why the point is undecided, or another remark.
    extra : dict, optional
        Check-specific details (e.g. ``z``, ``z_crit`` and the estimate for Monte Carlo).
    index : int, optional
        The point's index in the run that evaluated it, which selects its random draws
        (:func:`rfcheck.verify.point_seed`); ``rfcheck verify --at ... --point-index K`` evaluates
        the point with the same draws.  Set by the verifier, not by checks.

    Examples
    --------
    >>> PointEval({"d": 2}, 1.0, 1.0, 0.0, 0.0).as_dict()["disc"]
    0.0
    """

    point: dict[str, Any]
    printed: Any
    reference: Any
    err: float
    disc: float
    decided: bool = True
    note: str = ""
    extra: dict[str, Any] | None = None
    index: int | None = None

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
            **({"index": self.index} if self.index is not None else {}),
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

    Parameters
    ----------
    point : dict
        The point, recorded in the result.
    printed : number
        The printed formula's value (float, complex or mpmath).
    ref : number
        The reference value.
    ref_err : number
        The reference's error bar (>= 0; ``inf``/NaN: undecided).
    rtol : float
        Relative tolerance for the rounding of the printed formula's evaluation.
    atol : float, default 0.0
        Absolute tolerance added to the denominator.
    scale : number, default 0.0
        A magnitude for the precision test where ``|ref|`` itself is tiny (e.g. a cancelling sum).

    Returns
    -------
    PointEval
        ``disc`` as above, ``decided=False`` (``disc`` NaN) if the reference has no error bar or
        is not precise enough.

    Examples
    --------
    >>> compare_deterministic({}, 1.0 + 1e-12, 1.0, 0.0, rtol=1e-10).disc
    0.01...
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

    Parameters
    ----------
    point : dict
        The point, recorded in the result.
    lhs, rhs : number
        The two sides (their real parts are compared).
    err : number
        Error bar on ``lhs - rhs`` (>= 0; not finite: undecided).
    rtol : float
        Relative tolerance for rounding.
    printed : object, optional
        The value recorded as ``printed`` (default ``rhs``).

    Returns
    -------
    PointEval
        ``reference = lhs``, ``disc = (lhs - rhs) / tol``.

    Examples
    --------
    >>> compare_inequality({}, 1.0, 2.0, 0.0, rtol=0.1).disc  # holds: 1 <= 2
    -5.0
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

    Parameters
    ----------
    point : dict
        The point, recorded in the result.
    printed : float
        The printed value.
    est : Estimate
        The Monte Carlo estimate of the same quantity.
    z_crit : float
        The critical value (e.g. :func:`z_critical` over the claim's tests).
    power_rel : float, default 0.1
        Relative error the test must be able to resolve to decide a pass.
    atol : float, default 0.0
        Absolute float64 rounding of the simulation, added to the SE in quadrature.

    Returns
    -------
    PointEval
        ``reference = est.value``, ``err = est.se``, ``disc = |z| / z_crit``, ``extra`` holding
        ``z``, ``z_crit`` and the estimate.

    Examples
    --------
    >>> est = Estimate(1.01, 0.01, 10_000, "sample", True, 0.1, 0.001)
    >>> round(compare_mc({}, 1.0, est, z_crit=2.0).disc, 6)
    0.5
    """
    se = math.hypot(est.se, atol)
    z = (est.value - float(printed)) / se if se > 0 else (0.0 if est.value == printed else math.inf)
    disc = abs(z) / z_crit
    decided, note = est.trustworthy, est.reason
    if decided and z_crit * se > power_rel * abs(float(printed)) / 2 and disc <= 1 and abs(float(printed)) > atol:
        decided, note = False, f"no power: SE {est.se:.3g} cannot resolve a {power_rel:.0%} error"
    return PointEval(point, printed, est.value, est.se, disc, decided, note,
                     {"z": z, "z_crit": z_crit, **est.as_dict()})

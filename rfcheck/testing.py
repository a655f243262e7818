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
-- *not* an ``AssertionError``, so ``pytest.raises(AssertionError)`` never counts an
undecided result as a refutation -- with a forecast of the trials a fresh run needs.

Rounding.  Monte Carlo cannot average away floating-point error: an estimate that is
constant in exact arithmetic (PosRF at ``x = -y``) still differs from ``K`` by rounding, and
a correct variance formula evaluates to ``1e-16`` or ``-1e-17`` where the true variance is
0.  Every comparison therefore allows a rounding tolerance ``tau`` added to the standard
error in quadrature, ``z = (estimate - claimed) / sqrt(SE^2 + tau^2)``, with

* unbiasedness: ``tau = 2 * rtol * |K| + atol``;
* a claimed variance ``V``: ``tau = (rtol * |K|)^2 + rtol * max(|V|, K^2) + atol``
  (the simulation's squared rounding plus the claimed value's own rounding);

``rtol`` defaults to ``ROUNDING_ULPS * eps`` of the dtype each value was computed in (the
user's features -- float32 gives 7.6e-6, float64 1.4e-14 -- and the claimed value), and
samples whose relative spread is below it count as constant (no tail diagnostic of rounding
noise).  A claim of exactly 0 against a Monte Carlo value of ``1e-35`` is decided by the same
rule.  Pass ``rtol``/``atol`` to override.

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
from rfcheck.custom import BoundEstimator, Estimator, Sampler, least_precise
from rfcheck.features import ExpProduct
from rfcheck.stats import (
    MAX_REL_SE,
    N_BATCHES,
    TAIL_CV_LIMIT,
    TAIL_MAX_SHARE,
    Estimate,
    _spread,
    compare_mc,
    estimate_mean,
    estimate_mse,
    z_critical,
)

__all__ = [
    "EstimatorReport",
    "Inconclusive",
    "adversarial_pairs",
    "assert_no_worse_than",
    "assert_sampler_valid",
    "assert_unbiased",
    "assert_variance_matches",
    "check_estimator",
    "rounding_rtol",
]

Subject = ExpProduct | BoundEstimator


#: default rounding tolerance, in units of the machine epsilon of the dtype a value was computed in
ROUNDING_ULPS = 64
#: a forecast of the trials needed aims the tail diagnostic at this fraction of its limits
_FORECAST_TARGET = 0.5


class Inconclusive(Exception):
    """The Monte Carlo evidence cannot decide (heavy tails or too few trials).

    Deliberately *not* an ``AssertionError``: an undecided check is neither a pass nor a
    refutation.  ``trials_needed`` is the forecast number of trials for a fresh run to decide
    (``None`` where more trials cannot help, e.g. non-finite features).

    Parameters
    ----------
    message : str
        Why the evidence cannot decide.
    trials_needed : int, optional
        Forecast trials for a fresh run to decide (None: more trials cannot help).

    Examples
    --------
    >>> Inconclusive("heavy tails", 400_000).trials_needed
    400000
    """

    def __init__(self, message: str, trials_needed: int | None = None) -> None:
        super().__init__(message)
        self.trials_needed = trials_needed


def rounding_rtol(dtype: Any) -> float:
    """The default relative rounding tolerance for values computed in ``dtype``:
    ``ROUNDING_ULPS * np.finfo(dtype).eps`` (complex: its real part; non-floating: float64).

    Parameters
    ----------
    dtype : numpy dtype or type
        The dtype the values were computed in.

    Returns
    -------
    float
        ``ROUNDING_ULPS * eps`` (64 eps).

    Examples
    --------
    >>> rounding_rtol("float32") == 64 * 2.0**-23
    True
    """
    return ROUNDING_ULPS * float(np.finfo(least_precise(dtype)).eps)


def _claim_dtype(v: Any) -> np.dtype:
    dt = getattr(v, "dtype", None)
    return least_precise(dt) if dt is not None else np.dtype(np.float64)


def _replicas(subject: Subject, m: int, n_trials: int, coupling: str | Sampler | None, seed: int
              ) -> tuple[np.ndarray, float, np.dtype]:
    """Trial values of the ``m``-feature estimate, the target kernel value, and the dtype
    the values were computed in."""
    if isinstance(subject, BoundEstimator):
        tr = subject.trials(m, n_trials, seed=seed, sampler=coupling)
        k = subject.estimator.kernel(subject.x, subject.y)
        return (tr.values, validate.finite_real(k, "the kernel's value K(x, y)"),
                least_precise(tr.dtype, _claim_dtype(k)))
    if isinstance(subject, ExpProduct):
        if subject.n_pairs != 1:
            raise ValueError(f"these helpers take one (x, y) pair; got {subject.n_pairs}")
        from rfcheck.engine.montecarlo import simulate

        if coupling is not None and not isinstance(coupling, str):
            raise ValueError("an ExpProduct runs on the engine's couplings: pass a coupling name")
        return (simulate(subject, m, n_trials, coupling=coupling or "iid", seed=seed)[0],
                validate.finite_real(subject.target[0], "the kernel's value K(x, y)"), np.dtype(np.float64))
    raise ValueError(f"subject must be an ExpProduct or Estimator.at(x, y); got {type(subject).__name__}")


def _rtol(rtol: float | None, dtype: Any) -> float:
    if rtol is None:
        return rounding_rtol(dtype)
    r = validate.finite_real(rtol, "rtol")
    if r < 0:
        raise ValueError(f"rtol must be >= 0; got {r}")
    return r


def _atol(atol: float) -> float:
    a = validate.finite_real(atol, "atol")
    if a < 0:
        raise ValueError(f"atol must be >= 0; got {a}")
    return a


def _round_up(n: float) -> int:
    """``n`` rounded up to two significant digits."""
    if n <= 100:
        return math.ceil(n)
    q = 10 ** (math.floor(math.log10(n)) - 1)
    return int(math.ceil(n / q) * q)


def _tail_forecast(sample: np.ndarray) -> float:
    """Trials for the tail diagnostic of :mod:`rfcheck.stats` to pass on a fresh sample.

    The diagnostic (per-batch fourth-moment CV and the largest single share) is computed on
    disjoint sub-samples of ``n/2, n/4, ..., n/64`` values (at least 256 each) and averaged
    per size; a power law ``c s^b`` fitted to each (log-log least squares) is followed out to
    where it reaches :data:`_FORECAST_TARGET` times the limit (the diagnostic of one fresh
    run scatters about its trend, so the target sits below the limit).  The local slope of
    lognormal-like squared errors steepens as ``s`` grows (for a lognormal, the largest share
    falls like ``s^(sigma / sqrt(2 ln s) - 1)``), so the forecast errs on the large side.
    ``inf`` where the diagnostic does not shrink (``b > -0.05``).
    """
    n = sample.size
    if n < 2 * N_BATCHES:
        return 4.0 * N_BATCHES
    sizes = [n >> j for j in range(1, 7) if (n >> j) >= 8 * N_BATCHES]
    if len(sizes) < 3:  # too few values to see a trend: at least 8x as many
        return 8.0 * n
    cvs, shares = [], []
    for s in sizes:
        blocks = [_spread(b - b.mean())[1:] for b in sample[: (n // s) * s].reshape(-1, s)]
        cvs.append(float(np.mean([c for c, _ in blocks])))
        shares.append(float(np.mean([h for _, h in blocks])))
    ls = np.log(sizes)
    need = float(n)
    for vals, limit in ((cvs, TAIL_CV_LIMIT), (shares, TAIL_MAX_SHARE)):
        if min(vals) <= 0:
            continue
        b, a = np.polyfit(ls, np.log(vals), 1)
        at_n = math.exp(a + b * math.log(n))
        goal = _FORECAST_TARGET * limit
        if at_n <= goal:
            continue
        if b > -0.05:
            return math.inf
        need = max(need, n * (at_n / goal) ** (1.0 / -b))
    return need


def _forecast(sample: np.ndarray, est: Estimate, se_needed: float) -> tuple[int | None, str]:
    """Trials a fresh run needs to decide, and the sentence that says so.

    Two requirements, the larger wins: the standard error must fall to ``se_needed`` (the
    test's power and the trust limit :data:`rfcheck.stats.MAX_REL_SE`; SE ~ 1/sqrt(N)) and,
    where the SE was not trusted for heavy tails, the tail diagnostic must pass
    (:func:`_tail_forecast`).  Never fewer than twice the trials already run.
    """
    n = sample.size
    if not np.all(np.isfinite(sample)) or not math.isfinite(est.value):
        return None, "more trials cannot help (non-finite values: the features overflow)"
    if not math.isfinite(est.se):
        return None, "more trials cannot help (the sample's spread says nothing here)"
    if not se_needed > 0:
        return None, "more trials cannot help (the rounding tolerance alone exceeds the resolution needed)"
    need = n * (est.se / se_needed) ** 2
    heavy = est.tail_cv > TAIL_CV_LIMIT or est.max_share > TAIL_MAX_SHARE
    if heavy and not est.trustworthy:
        tail = _tail_forecast(sample)
        if not math.isfinite(tail):
            return None, ("more trials are unlikely to help: the tail diagnostic does not shrink with more "
                          "trials (heavy tails; an exact SE via exact_moments, or a larger m, may)")
        need = max(need, tail)
    need = _round_up(max(need, 2 * n))
    more = f" ({need / n:.0f}x as many: the tails are very heavy)" if need > 100 * n else ""
    return need, (f"a fresh run of about {need:,} trials should decide{more} (forecast from the standard error "
                  f"and from how the tail diagnostic shrank over sub-samples of these {n:,})")


def _constant(vals: np.ndarray, target: float, rtol: float) -> bool:
    """Every trial value equals ``target`` up to the rounding tolerance ``rtol * |target|``."""
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(vals - target) <= rtol * abs(target)))


def _variance_test(subject: Subject, m: int, claimed: float, coupling: str | Sampler | None, n_trials: int,
                   seed: int, z_crit: float, power_rel: float, exact_moments: tuple[float, float] | None,
                   rtol: float | None = None, atol: float = 0.0):
    claimed_dtype = _claim_dtype(claimed)
    claimed = validate.finite_real(claimed, "the claimed variance")
    validate.positive_real(power_rel, "power_rel")
    atol = _atol(atol)
    vals, target, dtype = _replicas(subject, m, n_trials, coupling, seed)
    r_mc, r_claim = _rtol(rtol, dtype), _rtol(rtol, claimed_dtype)
    est = estimate_mse(vals, target, exact_moments=exact_moments, deterministic_rel=r_mc)
    tau = (r_mc * abs(target)) ** 2 + r_claim * max(abs(claimed), target * target) + atol
    ev = compare_mc({}, float(claimed), est, z_crit=z_crit, power_rel=power_rel, atol=tau)
    ev.extra["tolerance"] = tau
    if not ev.decided and _constant(vals, target, r_mc):
        # every trial equals K up to rounding: the MSE is rounding (<= (r_mc K)^2, inside tau) and
        # the comparison is decided by the tolerance, with no normal approximation to trust
        ev.decided, ev.note = True, "every trial equals K up to rounding"
    if not ev.decided:
        resolution = min(power_rel * abs(claimed) / (2 * z_crit) if abs(claimed) > tau else math.inf,
                         MAX_REL_SE * abs(est.value) if est.value != 0 else math.inf)
        se_needed = math.sqrt(max(resolution**2 - tau**2, 0.0)) if math.isfinite(resolution) else est.se / 2
        need, hint = _forecast((vals - target) ** 2, est, se_needed)
        ev.extra["trials_needed"], ev.extra["hint"] = need, hint
    return est, ev


def _bias_test(subject: Subject, m: int, coupling: str | Sampler | None, n_trials: int, seed: int,
               z_crit: float, rel: float, rtol: float | None = None, atol: float = 0.0
               ) -> tuple[Estimate, float, float, str, int | None]:
    """(estimate, target, z, status, trials_needed) with status 'ok' | 'biased' | 'undecided: why'."""
    validate.positive_real(rel, "rel")
    atol = _atol(atol)
    vals, target, dtype = _replicas(subject, m, n_trials, coupling, seed)
    r = _rtol(rtol, dtype)
    est = estimate_mean(vals, deterministic_rel=r)
    # the estimate's rounding and the kernel value's rounding (both within r of K)
    tau = 2 * r * abs(target) + atol
    se = math.hypot(est.se, tau)
    diff = est.value - target
    z = diff / se if se > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    if _constant(vals, target, r):  # every trial equals K up to rounding: unbiased to rounding
        return est, target, z, "ok", None
    if est.trustworthy and abs(z) > z_crit:
        return est, target, z, "biased", None
    want = rel * abs(target) / (2 * z_crit)  # the SE (with tau) that resolves a bias of rel * K
    se_needed = min(math.sqrt(max(want**2 - tau**2, 0.0)),
                    MAX_REL_SE * abs(est.value) if est.value != 0 else math.inf)
    if not est.trustworthy:
        need, hint = _forecast(vals, est, se_needed)
        return est, target, z, f"undecided: {est.reason}; {hint}", need
    if z_crit * se > rel * abs(target) / 2:
        need, hint = _forecast(vals, est, se_needed)
        return est, target, z, f"undecided: no power to see a {rel:.0%} bias (SE {est.se:.2g}); {hint}", need
    return est, target, z, "ok", None


def assert_variance_matches(
    subject: Subject, m: int, claimed: float, *, coupling: str | Sampler | None = None, n_trials: int = 200_000,
    seed: int = 0, alpha: float = 1e-3, power_rel: float = 0.1, exact_moments: tuple[float, float] | None = None,
    rtol: float | None = None, atol: float = 0.0,
) -> Estimate:
    """Assert that the MSE of the ``m``-sample estimator equals ``claimed`` (two-sided z-test).

    Parameters
    ----------
    subject : ExpProduct or BoundEstimator
        The estimator at one input pair (see the module docstring).
    m : int
        Features per estimate.
    claimed : float
        The claimed variance (MSE) of the ``m``-feature estimate.
    coupling : str or callable, optional
        Overrides the subject's sampler (a coupling name for an ``ExpProduct``).
    n_trials, seed : int
        Monte Carlo trials and seed.
    alpha : float
        False-alarm level of the two-sided z-test.
    power_rel : float
        The relative error the test must be able to see, or it is inconclusive.
    exact_moments : (float, float), optional
        ``(E e, E e^2)`` of ``e = (K_hat - K)^2``: an exact standard error (e.g.
        ``closed_forms.crt.gerf_iid_error_moments``).
    rtol, atol : float
        Rounding tolerance: ``z = (MSE_hat - claimed) / sqrt(SE^2 + tau^2)`` with
        ``tau = (rtol_f |K|)^2 + rtol_c max(|claimed|, K^2) + atol``, where ``rtol_f`` and
        ``rtol_c`` default to :func:`rounding_rtol` of the dtype the features and the claimed
        value were computed in (``rtol`` sets both).  So a correct formula that rounds to
        ``1e-16`` where the variance is 0 agrees, as does a claim of exactly 0.

    Returns
    -------
    Estimate
        The Monte Carlo MSE.

    Raises
    ------
    AssertionError
        On a disagreement at level ``alpha``.
    Inconclusive
        When the standard error is untrustworthy (heavy tails) or cannot resolve a
        ``power_rel`` relative error; ``trials_needed`` forecasts the trials a fresh run needs.
    """
    est, ev = _variance_test(subject, m, claimed, coupling, n_trials, seed, z_critical(alpha), power_rel,
                             exact_moments, rtol=rtol, atol=atol)
    if ev.decided and ev.disc > 1:
        raise AssertionError(f"variance {float(claimed):.6g} disagrees with Monte Carlo {est.value:.6g} "
                             f"+- {est.se:.2g} (z = {ev.extra['z']:.2f}, alpha = {alpha}, rounding tolerance "
                             f"{ev.extra.get('tolerance', 0.0):.2g})")
    if not ev.decided:
        raise Inconclusive(f"cannot decide: {ev.note}; {ev.extra.get('hint', 'more trials')}",
                           ev.extra.get("trials_needed"))
    return est


def assert_unbiased(
    subject: Subject, m: int, *, coupling: str | Sampler | None = None, n_trials: int = 200_000, seed: int = 0,
    alpha: float = 1e-3, rel: float = 0.01, rtol: float | None = None, atol: float = 0.0,
) -> Estimate:
    """Assert ``E K_hat = K`` (two-sided z-test at ``alpha``).

    ``z = (mean - K) / sqrt(SE^2 + tau^2)`` with the rounding tolerance
    ``tau = 2 rtol |K| + atol``; ``rtol`` defaults to :func:`rounding_rtol` of the dtype the
    user's code computed in (features, sampler and kernel value), so a float32 estimator that
    is constant in exact arithmetic (PosRF at ``x = -y``) is not refuted for its rounding.

    Parameters
    ----------
    subject : ExpProduct or BoundEstimator
        The estimator at one input pair (see the module docstring).
    m : int
        Features per estimate, >= 1.
    coupling : str or callable, optional
        Overrides the subject's sampler (a coupling name for an ``ExpProduct``).
    n_trials : int, default 200_000
        Monte Carlo trials (independent ``m``-feature estimates).
    seed : int, default 0
        Seed of the trials.
    alpha : float, default 1e-3
        False-alarm level of the two-sided z-test, in (0, 1).
    rel : float, default 0.01
        The relative bias (times ``K``) the test must be able to resolve, or it is inconclusive.
    rtol, atol : float
        Rounding tolerance ``tau = 2 rtol |K| + atol`` (``rtol`` default :func:`rounding_rtol`
        of the computing dtype; both >= 0).

    Returns
    -------
    Estimate
        The Monte Carlo mean of the estimate.

    Raises
    ------
    AssertionError
        On a bias at level ``alpha``.
    Inconclusive
        If the standard error cannot resolve a bias of ``rel`` times ``K`` or is untrustworthy
        (with a forecast of the trials a fresh run needs).
    ValueError
        If the subject is not one input pair, or ``rtol``, ``atol`` or ``alpha`` are invalid.
    """
    est, target, z, status, need = _bias_test(subject, m, coupling, n_trials, seed, z_critical(alpha), rel,
                                              rtol=rtol, atol=atol)
    if status == "biased":
        raise AssertionError(f"biased: mean {est.value:.6g} +- {est.se:.2g} vs K = {target:.6g} (z = {z:.2f})")
    if status != "ok":
        raise Inconclusive(f"cannot decide: {status.removeprefix('undecided: ')}", need)
    return est


def assert_no_worse_than(
    subject: Subject, m: int, coupling: str | Sampler, baseline: str | Sampler, *, n_trials: int = 200_000,
    seed: int = 0, alpha: float = 1e-3,
) -> tuple[Estimate, Estimate]:
    """Assert ``MSE(coupling) <= MSE(baseline)`` (one-sided z-test on the difference at ``alpha``).

    Parameters
    ----------
    subject : ExpProduct or BoundEstimator
        The estimator at one input pair.
    m : int
        Features per estimate, >= 1.
    coupling, baseline : str or callable
        The sampler tested and the one it must not be worse than (coupling names for an
        ``ExpProduct``).
    n_trials : int, default 200_000
        Trials per sampler.
    seed : int, default 0
        Seed of ``coupling``'s trials (``seed + 1`` for ``baseline``).
    alpha : float, default 1e-3
        One-sided false-alarm level, in (0, 0.5).

    Returns
    -------
    mse, mse_baseline : Estimate
        The Monte Carlo MSEs of ``coupling`` and ``baseline``.

    Raises
    ------
    ValueError
        If ``alpha`` is not in (0, 0.5), or the subject is not one input pair.
    AssertionError
        If ``coupling``'s MSE exceeds the baseline's at level ``alpha``.
    Inconclusive
        If either standard error is untrustworthy (heavy tails).
    """
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha (one-sided) must be in (0, 0.5); got {alpha}")
    va, target, _ = _replicas(subject, m, n_trials, coupling, seed)
    vb, _, _ = _replicas(subject, m, n_trials, baseline, seed + 1)
    a, b = estimate_mse(va, target), estimate_mse(vb, target)
    if not (a.trustworthy and b.trustworthy):
        bad, vals = (a, va) if not a.trustworthy else (b, vb)
        need, hint = _forecast((vals - target) ** 2, bad, bad.se)
        raise Inconclusive(f"cannot decide: {bad.reason}; {hint}", need)
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
    false-alarm level ``alpha``, default 1e-3); :class:`Inconclusive` if it cannot decide.

    Parameters
    ----------
    sampler : str or callable
        A built-in coupling name or ``sampler(rng, n, M, d) -> (n, M, d)``.
    d : int
        Dimension, >= 2.
    M : int, optional
        Rows per ensemble (default ``d``).
    **kw
        Further keywords of :func:`rfcheck.audit.audit_sampler` (``structure``, ``n``, ``alpha``,
        ``seed``, ``radius``, ``geometry_tol``, ``check_layout``).

    Returns
    -------
    AuditReport
        The audit, with verdict HOLDS.

    Raises
    ------
    AssertionError
        If the audit refutes (the message is the report).
    Inconclusive
        If the audit cannot decide.
    ValueError
        For invalid arguments (see :func:`rfcheck.audit.audit_sampler`).
    """
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
    orthogonal, opposite, nearly opposite, with unequal norms, and random directions.

    Parameters
    ----------
    d : int
        Dimension, >= 2.
    radii : iterable of float, default (0.25, 0.5)
        The norms used (each > 0; seven pairs per radius).
    seed : int, default 0
        Seed of the random directions.

    Returns
    -------
    list of (str, numpy.ndarray, numpy.ndarray)
        ``(label, x, y)`` with ``x``, ``y`` float64 vectors of shape (d,).

    Raises
    ------
    ValueError
        If ``d`` is not an integer >= 2, a radius is not > 0, or ``radii`` is empty.

    Examples
    --------
    >>> ps = adversarial_pairs(3, radii=(0.5,))
    >>> len(ps), ps[0][0]
    (7, 'x = y = 0.5 e_0')
    """
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
    """Verdicts of :func:`check_estimator`: one row per input pair and test.

    Parameters
    ----------
    name : str
        The estimator's name.
    m : int
        Features per estimate.
    alpha : float
        Family-wise false-alarm level.
    rows : list of dict, default []
        One per pair and test: ``pair``, ``test`` (``"unbiased"`` or ``"variance"``), ``z``,
        ``trials``, ``status`` (``"agrees"``, ``"disagrees"``, ``"undecided"``), ``detail``,
        ``trials_needed``, ``x``, ``y``.

    Attributes
    ----------
    verdict : str
        ``"REFUTED"`` if a row disagrees, else ``"INCONCLUSIVE"`` if one is undecided, else
        ``"HOLDS"``.
    counterexample : dict or None
        The disagreeing row with the largest ``|z|``.
    """

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
    rtol: float | None = None, atol: float = 0.0,
) -> EstimatorReport:
    """Check unbiasedness (and ``claimed_variance(x, y, m)``, if given) at every pair.

    Parameters
    ----------
    estimator : Estimator
        The user's estimator (:class:`rfcheck.custom.Estimator`).
    m : int
        Features per estimate.
    claimed_variance : callable, optional
        ``claimed_variance(x, y, m) -> float``, the variance (MSE) formula under test.
    pairs : list of (label, x, y), optional
        Input pairs; default :func:`adversarial_pairs` in dimension ``d``.
    d : int, optional
        Dimension of the default pairs.
    n_trials, max_trials : int
        Trials of the first look and of the retry of an undecided test.
    alpha : float
        Family-wise false-alarm level, shared by all tests and tries (Bonferroni).
    power_rel : float
        Relative variance error the variance tests must resolve (bias tests: ``power_rel/10``
        of ``K``).
    seed : int
        Base seed; every test and try runs on its own stream.
    rtol, atol : float
        Rounding tolerance added to the standard error in quadrature (see
        :func:`assert_unbiased`, :func:`assert_variance_matches`); ``rtol`` defaults to
        :func:`rounding_rtol` of the dtype the estimator's code and the claimed formula
        return, e.g. ``64 * 1.19e-7`` for float32 features.

    Returns
    -------
    EstimatorReport
        REFUTED if any decided test disagrees (the row with the largest |z| is the
        counterexample), HOLDS if every test decided and agreed, INCONCLUSIVE otherwise.

    Raises
    ------
    ValueError
        If neither ``pairs`` nor ``d`` is given, or ``pairs`` is empty (and for invalid
        ``m``, ``alpha``, ``rtol`` or ``atol``).

    Notes
    -----
    A test left undecided at ``n_trials`` (heavy tails, no power) is run once more with
    ``max_trials``, on a fresh independent stream; only the decided one counts.  Either look
    can reject, so the Bonferroni level counts both: ``alpha`` is shared by (tests) x (tries).
    An undecided row carries ``trials_needed``, the forecast trials for a fresh run to decide.
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
    tol = {"rtol": rtol, "atol": atol}
    for k, (label, x, y) in enumerate(pairs):
        subject = estimator.at(x, y)
        for t, n in enumerate(tries):  # undecided at n_trials: one more try with max_trials
            est, target, z, status, need = _bias_test(subject, m, None, n, seed + 2 * k + t * stride, zc,
                                                      power_rel / 10, **tol)
            if status in ("ok", "biased"):
                break
        rep.rows.append({"pair": label, "test": "unbiased", "z": float(z), "trials": est.n,
                         "status": {"ok": "agrees", "biased": "disagrees"}.get(status, "undecided"),
                         "detail": f"mean {est.value:.6g} +- {est.se:.2g}, K = {target:.6g}"
                                   + ("" if status in ("ok", "biased") else f"; {status}"),
                         "trials_needed": need, "x": x.tolist(), "y": y.tolist()})
        if claimed_variance is not None:
            claimed = claimed_variance(x, y, m)
            for t, n in enumerate(tries):
                est, ev = _variance_test(subject, m, claimed, None, n, seed + 2 * k + 1 + t * stride, zc,
                                         power_rel, None, **tol)
                if ev.decided:
                    break
            st = "undecided" if not ev.decided else ("disagrees" if ev.disc > 1 else "agrees")
            hint = ev.extra.get("hint")
            rep.rows.append({"pair": label, "test": "variance", "z": float(ev.extra["z"]), "trials": est.n,
                             "status": st,
                             "detail": f"claimed {float(claimed):.6g}, Monte Carlo {est.value:.6g} +- {est.se:.2g}"
                                       + (f"; {ev.note}" if not ev.decided else "")
                                       + (f"; {hint}" if not ev.decided and hint else ""),
                             "trials_needed": ev.extra.get("trials_needed") if not ev.decided else None,
                             "x": x.tolist(), "y": y.tolist()})
    return rep

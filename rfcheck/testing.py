"""pytest helpers for researchers' own suites: is my estimator unbiased, does my variance
formula hold, is my coupling no worse than another?

Each helper runs the Numba engine, compares with the statistics of ``rfcheck.stats`` at a
stated false-alarm level ``alpha`` (a correct formula fails with probability <= alpha when
the normal approximation holds) and refuses to pass on weak evidence: when the standard
error is untrustworthy (heavy tails) or too large to see a ``power_rel`` relative error, it
raises :class:`Inconclusive` (an ``AssertionError``) saying how many trials would be needed.

Scope today: estimators of the GERF family described by a ``features.ExpProduct`` (TrigRF,
PosRF, GERF with complex A, OPRF) under the engine's couplings (``iid``, ``orf``, ``simrf``).
"""

from __future__ import annotations

import math


from rfcheck.features import ExpProduct
from rfcheck.montecarlo import simulate
from rfcheck.stats import Estimate, compare_mc, estimate_mean, estimate_mse, z_critical

__all__ = ["Inconclusive", "assert_no_worse_than", "assert_unbiased", "assert_variance_matches"]


class Inconclusive(AssertionError):
    """The Monte Carlo evidence cannot decide (heavy tails or too few trials)."""


def _one_pair(prod: ExpProduct) -> ExpProduct:
    if prod.n_pairs != 1:
        raise ValueError(f"these helpers take one (x, y) pair; got {prod.n_pairs}")
    return prod


def _need(est: Estimate, rel: float) -> str:
    n = est.trials_for(rel)
    return f"about {n:,} trials for a {rel:.0%} relative SE" if n > 0 else "more trials"


def assert_variance_matches(
    prod: ExpProduct, m: int, claimed: float, *, coupling: str = "iid", n_trials: int = 200_000,
    seed: int = 0, alpha: float = 1e-3, power_rel: float = 0.1, exact_moments: tuple[float, float] | None = None,
) -> Estimate:
    """Assert that the MSE of the ``m``-sample estimator equals ``claimed`` (two-sided z-test).

    Returns the Monte Carlo estimate.  Raises ``AssertionError`` on a disagreement at level
    ``alpha`` and :class:`Inconclusive` when the test has no power to see a ``power_rel``
    relative error.  ``exact_moments = (E e, E e^2)`` of ``e = (K_hat - K)^2`` gives an exact
    standard error (e.g. ``closed_forms.crt.gerf_iid_error_moments``).
    """
    prod = _one_pair(prod)
    target = float(prod.target[0])
    est = estimate_mse(simulate(prod, m, n_trials, coupling=coupling, seed=seed)[0], target,
                       exact_moments=exact_moments)
    ev = compare_mc({}, float(claimed), est, z_crit=z_critical(alpha), power_rel=power_rel)
    if ev.decided and ev.disc > 1:
        raise AssertionError(f"variance {claimed:.6g} disagrees with Monte Carlo {est.value:.6g} +- {est.se:.2g} "
                             f"(z = {ev.extra['z']:.2f}, alpha = {alpha})")
    if not ev.decided:
        raise Inconclusive(f"cannot decide: {ev.note}; {_need(est, power_rel / 4)}")
    return est


def assert_unbiased(
    prod: ExpProduct, m: int, *, coupling: str = "iid", n_trials: int = 200_000, seed: int = 0,
    alpha: float = 1e-3, rel: float = 0.01,
) -> Estimate:
    """Assert ``E K_hat = K`` (two-sided z-test at ``alpha``); :class:`Inconclusive` if the
    standard error cannot resolve a bias of ``rel`` times ``K`` or is untrustworthy."""
    prod = _one_pair(prod)
    target = float(prod.target[0])
    est = estimate_mean(simulate(prod, m, n_trials, coupling=coupling, seed=seed)[0])
    if not est.trustworthy and not (est.se == 0):
        raise Inconclusive(f"cannot decide: {est.reason}")
    zc = z_critical(alpha)
    z = (est.value - target) / est.se if est.se > 0 else (0.0 if est.value == target else math.inf)
    if abs(z) > zc:
        raise AssertionError(f"biased: mean {est.value:.6g} +- {est.se:.2g} vs K = {target:.6g} (z = {z:.2f})")
    if zc * est.se > rel * abs(target) / 2:
        raise Inconclusive(f"no power to see a {rel:.0%} bias: SE {est.se:.2g}")
    return est


def assert_no_worse_than(
    prod: ExpProduct, m: int, coupling: str, baseline: str, *, n_trials: int = 200_000, seed: int = 0,
    alpha: float = 1e-3,
) -> tuple[Estimate, Estimate]:
    """Assert ``MSE(coupling) <= MSE(baseline)`` (one-sided z-test on the difference at ``alpha``)."""
    prod = _one_pair(prod)
    target = float(prod.target[0])
    a = estimate_mse(simulate(prod, m, n_trials, coupling=coupling, seed=seed)[0], target)
    b = estimate_mse(simulate(prod, m, n_trials, coupling=baseline, seed=seed + 1)[0], target)
    if not (a.trustworthy and b.trustworthy):
        raise Inconclusive(f"cannot decide: {a.reason or b.reason}")
    se = math.hypot(a.se, b.se)
    z = (a.value - b.value) / se if se > 0 else 0.0
    zc = z_critical(2 * alpha)  # two-sided at 2 alpha = one-sided at alpha
    if z > zc:
        raise AssertionError(f"{coupling} MSE {a.value:.6g} is worse than {baseline} {b.value:.6g} (z = {z:.2f})")
    return a, b

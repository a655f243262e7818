"""rfcheck.references.simrf_proofs, the ball (Arb) faces added for certified SimRF proof-step claims:
each ball contains an independent 50-digit mpmath value at random points, and a planted wrong value
lies outside it."""

from __future__ import annotations

import mpmath
import numpy as np
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.references import simrf_proofs as R

MF = mpmath.mpf


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    """Does the ball meet the 50-digit mpmath value (widened by its own rounding, 1e-45 relative)?"""
    with workprec(200):
        return ball.overlaps(arb(mpmath.nstr(value, 60), float(abs(value)) * 1e-45 + 1e-300))


def _planted_outside(ball: arb, value: mpmath.mpf, rel: str = "1e-20") -> bool:
    with workprec(200):
        return not ball.overlaps(arb(mpmath.nstr(value * (1 + MF(rel)), 60)))


def test_f_series_derivative_ball_is_the_numerical_derivative() -> None:
    """F_d^{(n)} on balls (termwise) against mpmath's numerical derivative of f_series at 50 digits."""
    rng = np.random.default_rng(5)
    pts = [(0.0, 1, 1), (0.0, 256, 2), (-3.0, 2, 2)] + [
        (float(rng.uniform(0, 2000)), int(rng.integers(1, 257)), int(rng.integers(0, 3))) for _ in range(6)]
    for x, d, n in pts:
        with mpmath.workdps(50):
            exact = mpmath.diff(lambda t, d=d: R.f_series(t, d), MF(x), n) if n else R.f_series(MF(x), d)
        with workprec(116):
            ball = R.f_series_derivative_ball(x, d, n)
        assert _contains(ball, exact), (x, d, n)
        assert ball.rad() <= abs(ball.mid()) * arb(2) ** -100, (x, d, n)
        assert _planted_outside(ball, exact), (x, d, n)

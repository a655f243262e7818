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
    """Is the value moved by ``rel`` (relative) outside the ball?"""
    with mpmath.workdps(60):
        planted = mpmath.nstr(value * (1 + MF(rel)), 60)
    with workprec(200):
        return not ball.overlaps(arb(planted))


def test_f_series_derivative_ball_is_the_numerical_derivative() -> None:
    """F_d^{(n)} on balls (termwise) against mpmath's numerical derivative of f_series at 50 digits."""
    rng = np.random.default_rng(5)
    pts = [(0.0, 1, 1), (0.0, 256, 2), (-3.0, 2, 2)] + [
        (float(rng.uniform(0, 2000)), int(rng.integers(1, 257)), int(rng.integers(0, 3))) for _ in range(6)
    ]
    for x, d, n in pts:
        with mpmath.workdps(50):
            exact = mpmath.diff(lambda t, d=d: R.f_series(t, d), MF(x), n) if n else R.f_series(MF(x), d)
        with workprec(116):
            ball = R.f_series_derivative_ball(x, d, n)
        assert _contains(ball, exact), (x, d, n)
        assert ball.rad() <= abs(ball.mid()) * arb(2) ** -100, (x, d, n)
        assert _planted_outside(ball, exact), (x, d, n)


def test_pair_conformity_moment_ball_is_the_2d_expectation() -> None:
    """The moment-series ball of eq (10) against the eq (21) closed form in mpmath at 50 digits (random points),
    and against the float64 2-D Gauss-Legendre quadrature of the definition within its error bar."""
    from rfcheck.closed_forms import simrf as cf
    from rfcheck.references import simrf as ref

    rng = np.random.default_rng(17)
    pts = [(0.0, 3, 0.2), (1.0, 2, -1.0), (3.0, 32, 1.0)] + [
        (float(rng.uniform(0, 3)), int(rng.integers(1, 12)), float(rng.uniform(-1, 1))) for _ in range(3)
    ]
    for v, d, c in pts:
        ball = R.pair_conformity_moment_ball(v, d, c, 116)
        assert ball.rad() <= abs(ball.mid()) * arb(2) ** -100, (v, d, c)
        with mpmath.workdps(50):
            closed = cf.conformity_angle(MF(v), d, MF(c), backend="mpmath", dps=50)
        assert _contains(ball, closed), (v, d, c)
        assert _planted_outside(ball, closed), (v, d, c)
        quad, err = ref.eq10_quadrature(v, d, c)
        assert abs(float(ball.mid()) - quad) <= 10 * err, (v, d, c)


def test_cdf_angle_ball_contains_the_root_quadrature() -> None:
    """The angle-CDF ball against references.simrf.cdf_angle_root_quadrature at 50 digits (random points;
    c = 0: the chi_2d CDF P(d, w^2/2) in closed form); tight to the absolute 2^-100."""
    from rfcheck.references import simrf as ref

    rng = np.random.default_rng(23)
    pts = [(1.5, 3, 0.0), (20.0, 64, 0.95), (0.1, 1, -0.95), (9.0, 32, 0.5)] + [
        (float(rng.uniform(0.1, 12)), int(rng.integers(1, 40)), float(rng.uniform(-0.95, 0.95))) for _ in range(4)
    ]
    for w, d, c in pts:
        ball = R.cdf_angle_ball(w, d, c, 116)
        with mpmath.workdps(50):
            exact = (
                mpmath.gammainc(d, 0, MF(w) ** 2 / 2, regularized=True)
                if c == 0
                else ref.cdf_angle_root_quadrature(MF(w), d, MF(c))
            )
        assert ball.rad() <= arb(2) ** -100, (w, d, c)
        with workprec(200):
            assert ball.overlaps(arb(mpmath.nstr(exact, 60), 1e-40)), (w, d, c)
            assert not ball.overlaps(arb(mpmath.nstr(exact + MF(10) ** -25, 60))), (w, d, c)


def test_widened_balls_do_not_certify() -> None:
    """A reference ball widened past the check's tolerance, still containing the value, does not certify a
    HOLDS at that tolerance, for each ball reference of the certified SimRF checks (eq (10) by exact moments,
    by a chi_2d expectation; the PRF and RFF orthogonality gaps); unwidened, the same balls certify."""
    from rfcheck.certify import certified_equal
    from rfcheck.references import simrf as S

    bits, tol = 116, 1e-25
    with mpmath.workdps(50):
        cases = [
            (R.pair_conformity_moment_ball(1.5, 8, -1.0 / 7, bits), None),
            (S.orf_conformity_chi_ball(1.3, 5, bits), mpmath.hyp1f1(5, MF(5) / 2, MF(1.3) ** 2 / 2)),
            (S.prf_orthogonality_gap_ball(1.0, 4, 3, 0.5, bits),
             mpmath.exp(-1) * MF(2) / 3 * (mpmath.e - mpmath.hyp1f1(4, 2, MF(1) / 2))),
            (S.rff_orf_covariance_ball(0.9, 4, bits), mpmath.hyp1f1(4, 2, -MF(0.9) ** 2 / 2)),
        ]
    for ball, exact in cases:
        with workprec(bits):
            wide = ball + arb(0, float(abs(ball.mid())) * 1e-20)
        if exact is not None:
            assert _contains(ball, exact) and _contains(wide, exact)
        assert certified_equal(ball, ball, tol) == "HOLDS"
        assert certified_equal(wide, ball, tol) is None
        assert certified_equal(ball, wide, tol) is None

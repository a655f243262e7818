"""rfcheck.references.crt DIRF series balls (CRT sec 3.2, eq (9)-(13)): each ball contains the 50-digit value
of an independent closed form, a planted wrong value is disjoint, and a widened ball never certifies."""

from __future__ import annotations

import random

import mpmath
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.certify import certified_equal
from rfcheck.closed_forms import crt as cf
from rfcheck.references import crt as ref

BITS = 200
MF = mpmath.mpf


def _closed(a: float, dist: str, par: float, power: int) -> mpmath.mpf:
    """sum_k p_k (a^k/(k! p_k))^power at 50 digits: e^a (power 1, any p_k); Poisson power 2:
    exp(lambda + a^2/lambda); geometric power 2: p^{-1} I_0(2|a|/sqrt(1-p))."""
    a, par = MF(a), MF(par)
    if power == 1:
        return mpmath.exp(a)
    if dist == "poisson":
        return mpmath.exp(par + a * a / par)
    return mpmath.besseli(0, 2 * abs(a) / mpmath.sqrt(1 - par)) / par


def _meets(ball: arb, value: mpmath.mpf) -> bool:
    with workprec(BITS):
        return ball.overlaps(arb(mpmath.nstr(value, 60), float(abs(value)) * 1e-48 + 1e-300))


POINTS = [(dist, power, random.Random(seed).uniform(-3, 3), random.Random(seed + 1).uniform(-3, 3),
           random.Random(seed + 2).uniform(*((0.05, 8.0) if dist == "poisson" else (0.01, 0.99))))
          for seed, (dist, power) in enumerate([(d, pw) for d in ("poisson", "geometric") for pw in (1, 2)] * 3)]


@pytest.mark.parametrize(("dist", "power", "x", "y", "par"), POINTS)
def test_series_ball_contains_closed_form(dist: str, power: int, x: float, y: float, par: float) -> None:
    ball = ref.dirf_series_moment_ball((x, y), dist, par, power, BITS)
    with mpmath.workdps(50):
        exact = _closed(MF(x) * MF(y), dist, par, power)
        assert _meets(ball, exact)
        assert float(ball.rad()) <= 1e-45 * float(abs(exact))
        assert not _meets(ball, exact * (1 + MF(10) ** -30))  # a planted wrong value is disjoint
    # the mpmath reference agrees inside the ball
    lpk = cf.poisson_log_pk(par) if dist == "poisson" else cf.geometric_log_pk(par)
    v, err = ref.dirf_series_moment((x, y), lpk, power, 40)
    with workprec(BITS):
        assert ball.overlaps(arb(mpmath.nstr(v, 50), float(err) + 1e-300))


def test_widened_ball_never_certifies() -> None:
    ball = ref.dirf_series_moment_ball((0.7, -1.3), "poisson", 0.4, 2, BITS)
    with workprec(BITS), mpmath.workdps(50):
        v = _closed(MF(0.7) * MF(-1.3), "poisson", 0.4, 2)
        exact = arb(mpmath.nstr(v, 60), float(v) * 1e-48)  # the 50-digit value with its rounding
        assert certified_equal(ball, exact, 1e-25) == "HOLDS"
        wide = arb(ball.mid(), 1e-10)
        assert certified_equal(wide, exact, 1e-25) is None


def test_product_ball_contains_mpmath_product() -> None:
    rng = random.Random(7)
    x = [rng.uniform(-1.5, 1.5) for _ in range(6)]
    y = [rng.uniform(-1.5, 1.5) for _ in range(6)]
    for dist, par, power in (("poisson", 1.3, 1), ("poisson", 0.2, 2), ("geometric", 0.6, 2)):
        ball = ref.dirf_product_moment_ball(x, y, dist, par, power, BITS)
        with mpmath.workdps(50):
            pref = mpmath.exp(-power * (mpmath.fsum(MF(v) ** 2 for v in x) + mpmath.fsum(MF(v) ** 2 for v in y)) / 2)
            exact = pref * mpmath.fprod(_closed(MF(a) * MF(b), dist, par, power) for a, b in zip(x, y, strict=True))
            assert _meets(ball, exact)
            assert not _meets(ball, exact * (1 + MF(10) ** -30))


def test_invalid_arguments_raise() -> None:
    with pytest.raises(ValueError):
        ref.dirf_series_moment_ball((1.0, 1.0), "poisson", 1.0, 0, BITS)
    with pytest.raises(ValueError):
        ref.dirf_series_moment_ball((1.0, 1.0), "binomial", 0.5, 1, BITS)


# ------------------------------------------------------------------- noncentral chi^2 upper bound (Thm 4.2)


def _ncx2_cdf_quad(w: mpmath.mpf, d: int, nc: mpmath.mpf) -> mpmath.mpf:
    """P[W <= w] by quadrature of the noncentral chi^2 density (Bessel form), 50 digits."""
    def dens(t: mpmath.mpf) -> mpmath.mpf:
        return (mpmath.exp(-(t + nc) / 2) / 2 * (t / nc) ** (MF(d) / 4 - MF(1) / 2)
                * mpmath.besseli(MF(d) / 2 - 1, mpmath.sqrt(nc * t)))
    return mpmath.quad(dens, [0, w / 4, w / 2, w])


@pytest.mark.parametrize(("w", "d", "nc"), [("3.0", 3, "2.0"), ("40.0", 8, "25.0"), ("0.5", 2, "7.0"),
                                             ("300.0", 64, "180.0")])
def test_noncentral_chi2_mixture_upper_ball(w: str, d: int, nc: str) -> None:
    with mpmath.workdps(50):
        cdf = _ncx2_cdf_quad(MF(w), d, MF(nc))
        sf = 1 - cdf
    with workprec(BITS):
        for upper, exact in ((False, cdf), (True, sf)):
            ball = ref.noncentral_chi2_mixture_upper_ball(arb(w), d, arb(nc) / 2, upper=upper)
            with mpmath.workdps(50):
                u = MF(ball.upper().str(60, radius=False))
                assert u >= exact * (1 - MF(10) ** -45)  # an upper bound
                assert u - exact < MF(10) ** -8 * exact  # and a sharp one (omitted terms <= 2^-30 of the sum)
                assert u < exact * (1 + MF(10) ** -6)  # a planted value 1e-6 above is excluded
        # a wider threshold ball: still an upper bound at every point of the ball
        narrow = ref.noncentral_chi2_mixture_upper_ball(arb(w), d, arb(nc) / 2, upper=False)
        wide = ref.noncentral_chi2_mixture_upper_ball(arb(w, 0.1), d, arb(nc) / 2, upper=False)
        assert wide.upper() >= narrow.upper()


# ------------------------------------------------------ the chi_{2d} average of the orthogonal pair (eq (27))


@pytest.mark.parametrize("p", [
    {"d": 2, "nx": 0.5, "ny": 1.2, "theta": 0.7, "a_re": -0.3},
    {"d": 32, "nx": 2.0, "ny": 2.0, "theta": 0.0, "a_re": 0.05},
    {"d": 7, "nx": 0.0, "ny": 0.0, "theta": 0.0, "a_re": -1.0},
    {"d": 16, "nx": 1.7, "ny": 0.3, "theta": 2.5, "a_re": 0.0},
])
def test_ort_pair_conditional_mean_ball_contains_the_kummer_closed_form(p: dict) -> None:
    """E[X_1 X_2] of an orthogonal pair = e^{-2(|x|^2+|y|^2)} 1F1(d; d/2; |x+y|^2/2) whatever A is (the
    Chu-Vandermonde collapse of rfcheck.closed_forms.crt.orf_log_covariance_factor), at 50 digits."""
    from rfcheck.ledger import pair_stats

    ball = ref.gerf_ort_pair_conditional_mean_ball(p, BITS)
    with mpmath.workdps(50):
        st = pair_stats(p)
        d = p["d"]
        exact = mpmath.exp(-2 * (st["sq_x"] + st["sq_y"])) * mpmath.hyp1f1(d, MF(d) / 2, st["sq_sum"] / 2)
        assert _meets(ball, exact)
        assert not _meets(ball, exact * (1 + MF(10) ** -30))
    assert float(ball.rad()) <= 1e-40 * float(abs(exact))

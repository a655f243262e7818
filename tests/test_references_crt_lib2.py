"""rfcheck.references.crt, second pass: eq (9)'s unnormalised DIRF product mean, Thm 4.1's orthogonal-pair
covariance gap and Thm 9.1's variance reduction, moved out of the CRT claims file.

Each function against an independent 50-digit mpmath computation (a closed form the reference never uses:
``exp(x^T y)`` for the DIRF series, the Kummer-transformed ``e^{-u} 1F1(d; d/2; u/2)`` for the orthogonal
pair), its ball containing that value, and a planted wrong value outside the ball.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
from flint import arb

from rfcheck.arb_backend import ARB, workprec
from rfcheck.backends import MP
from rfcheck.closed_forms.crt import geometric_log_pk, poisson_log_pk
from rfcheck.ledger import pair_stats
from rfcheck.references import crt as R

NEW = ["dirf_product_variance", "dirf_product_variance_ball", "set_pair_mean_abs_product", "set_pair_mean_sq_norm",
       "set_pair_mean_sq_product",
       "dirf_unnormalised_product_mean", "dirf_unnormalised_product_mean_ball", "orf_pair_covariance_gap",
       "orf_pair_covariance_gap_ball", "orf_variance_reduction", "orf_variance_reduction_ball"]

BITS = 200

#: DIRF pairs (exact floats) and laws: E[prod X_l Y_l] = exp(x^T y) whatever p_k is
DIRF_CASES = [
    ([0.5, -0.75, 1.25], [0.25, 2.0, -0.5], "poisson", 1.0),
    ([0.5, -0.75, 1.25], [0.25, 2.0, -0.5], "poisson", 3.5),
    ([1.5, 0.125], [1.75, -2.5], "poisson", 0.2),
    ([0.5, -0.75, 1.25], [0.25, 2.0, -0.5], "geometric", 0.5),
    ([1.5, 0.125, -0.3], [1.75, -2.5, 0.9], "geometric", 0.1),
]

#: pair points with |x + y|^2 exact in float64 (theta = 0 or pi): (nx, ny, theta, d, M)
ORF_POINTS = [(1.0, 0.0, 0.0, 3, 2), (1.0, 0.5, 0.0, 2, 2), (0.75, 1.25, 0.0, 16, 7), (2.0, 0.5, math.pi, 64, 64),
              (0.5, 0.25, 0.0, 128, 3)]


def _log_pk(dist: str, par: float) -> Callable[[int], Any]:
    return poisson_log_pk(par) if dist == "poisson" else geometric_log_pk(par)


def _dot_exp(x: list[float], y: list[float]) -> mpmath.mpf:
    """``exp(x^T y)`` at 50 digits (the sum of the exact products)."""
    with mpmath.workdps(50):
        return mpmath.exp(mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(x, y, strict=True)))


def _point(nx: float, ny: float, theta: float, d: int, m: int) -> dict:
    return {"nx": nx, "ny": ny, "theta": theta, "d": d, "M": m}


def _one_plus_g(p: dict) -> mpmath.mpf:
    """``1 + G = e^{-u} 1F1(d; d/2; u/2)`` at 50 digits: the Kummer transform of the identity the balls use."""
    with mpmath.workdps(50):
        u, d = pair_stats(p)["sq_sum"], int(p["d"])
        return mpmath.exp(-u) * mpmath.hyp1f1(d, mpmath.mpf(d) / 2, u / 2)


def _gap(p: dict) -> mpmath.mpf:
    """``G = (1 + G) - 1`` at 50 digits."""
    with mpmath.workdps(50):
        return _one_plus_g(p) - 1


def _reduction(p: dict) -> mpmath.mpf:
    """``(1 - 1/M) K^2 (1 - (1 + G))`` at 50 digits."""
    with mpmath.workdps(50):
        k2 = mpmath.exp(-pair_stats(p)["sq_diff"])
        return (1 - mpmath.mpf(1) / p["M"]) * k2 * (1 - _one_plus_g(p))


def _ball(v: mpmath.mpf) -> arb:
    with mpmath.workdps(50):
        return arb(mpmath.nstr(v, 50), float(abs(v)) * 1e-45 + 1e-300)


def test_new_functions_are_public_and_documented() -> None:
    for name in NEW:
        assert name in R.__all__, name
        doc = R.__dict__[name].__doc__
        assert doc and "References" in doc and "CRT" in doc and ">>>" in doc, name


@pytest.mark.parametrize(("x", "y", "dist", "par"), DIRF_CASES)
def test_dirf_unnormalised_product_mean_matches_exp_dot(x: list[float], y: list[float], dist: str,
                                                        par: float) -> None:
    exact = _dot_exp(x, y)
    v, err = R.dirf_unnormalised_product_mean(x, y, _log_pk(dist, par), 40)
    assert err < mpmath.mpf(10) ** -35 * exact
    assert abs(v - exact) <= err + mpmath.mpf(10) ** -38 * exact


@pytest.mark.parametrize(("x", "y", "dist", "par"), DIRF_CASES)
def test_dirf_unnormalised_product_mean_ball_encloses_and_rejects(x: list[float], y: list[float], dist: str,
                                                                  par: float) -> None:
    exact = _dot_exp(x, y)
    with workprec(BITS):
        b = R.dirf_unnormalised_product_mean_ball(x, y, dist, par, BITS)
        assert b.overlaps(_ball(exact))
        assert b.rad() < 1e-40 * float(exact)
        with mpmath.workdps(50):
            assert not b.overlaps(_ball(exact * (1 + mpmath.mpf(10) ** -30)))


def test_dirf_unnormalised_product_mean_is_the_normalised_moment_times_the_prefactor() -> None:
    """The mean times ``exp(-(|x|^2 + |y|^2)/2)`` is the first DIRF product moment of
    :func:`rfcheck.references.crt.dirf_product_moment` (a property linking the two functions)."""
    x, y, dist, par = DIRF_CASES[3]
    v, _ = R.dirf_unnormalised_product_mean(x, y, _log_pk(dist, par), 40)
    m1, _ = R.dirf_product_moment(x, y, _log_pk(dist, par), 1, 40)
    with mpmath.workdps(50):
        pref = mpmath.exp(-(mpmath.fsum(mpmath.mpf(a) ** 2 for a in x) + mpmath.fsum(mpmath.mpf(b) ** 2 for b in y))
                          / 2)
        assert abs(v * pref - m1) < mpmath.mpf(10) ** -35


def test_dirf_unnormalised_product_mean_ball_rejects_an_unknown_law() -> None:
    with pytest.raises(ValueError, match="poisson/geometric"):
        R.dirf_unnormalised_product_mean_ball([1.0], [1.0], "binomial", 0.5, 64)


@pytest.mark.parametrize("pt", ORF_POINTS)
def test_orf_pair_covariance_gap_matches_the_kummer_identity(pt: tuple) -> None:
    p = _point(*pt)
    exact = _gap(p)
    g, err = R.orf_pair_covariance_gap(p, 25)
    assert g <= 0
    # the difference r - 1 is rounded at mpmath's working precision (15 digits here): relative 2^-52
    assert abs(g - exact) <= err + 2.0**-52 * abs(exact)
    assert not abs(g - exact * (1 + mpmath.mpf(10) ** -12)) <= err + 2.0**-52 * abs(exact)  # a planted value
    # the other face of Kummer's transform, as the balls use: e^{-u/2} 1F1(-d/2; d/2; -u/2)
    with mpmath.workdps(50):
        u, d = pair_stats(p)["sq_sum"], pt[3]
        assert abs(mpmath.exp(-u / 2) * mpmath.hyp1f1(-mpmath.mpf(d) / 2, mpmath.mpf(d) / 2, -u / 2) - 1 - exact) \
            < mpmath.mpf(10) ** -45


@pytest.mark.parametrize("pt", ORF_POINTS)
def test_orf_pair_covariance_gap_ball_encloses_and_rejects(pt: tuple) -> None:
    p = _point(*pt)
    exact = _gap(p)
    with workprec(BITS):
        b = R.orf_pair_covariance_gap_ball(p, BITS)
        assert b.overlaps(_ball(exact))
        with mpmath.workdps(50):
            assert not b.overlaps(_ball(exact * (1 + mpmath.mpf(10) ** -30)))
        assert b < 0 or exact == 0


def test_orf_pair_covariance_gap_ball_raises_precision_near_x_equal_minus_y() -> None:
    """At ``|x + y|^2 ~ 1e-12``, ``G ~ -u^2 / (2 (d + 2)) ~ -1e-25`` is below the rounding of ``1 + G`` at 64
    bits; the ball is still certified negative (the precision is raised) and matches the small-``u`` law."""
    p = _point(1.0, 1.0, math.pi - 1e-6, 4, 2)
    with workprec(64):
        b = R.orf_pair_covariance_gap_ball(p, 64)
    assert b < 0
    with mpmath.workdps(80):
        u = pair_stats(p)["sq_sum"]
        exact = mpmath.exp(-u) * mpmath.hyp1f1(4, 2, u / 2) - 1
        assert abs(exact / (-u**2 / 12) - 1) < 1e-6
    assert b.overlaps(arb(mpmath.nstr(exact, 60), abs(float(exact)) * 1e-15))


@pytest.mark.parametrize("pt", ORF_POINTS)
def test_orf_variance_reduction_matches_the_kummer_identity(pt: tuple) -> None:
    p = _point(*pt)
    exact = _reduction(p)
    v, err = R.orf_variance_reduction(p, 25)
    assert v >= 0
    assert abs(v - exact) <= err + mpmath.mpf(10) ** -18 * (1 + abs(exact))
    g, _ = R.orf_pair_covariance_gap(p, 25)  # the two functions agree: reduction = -(1 - 1/M) K^2 G
    with mpmath.workdps(30):
        k2 = mpmath.exp(-pair_stats(p)["sq_diff"])
        assert abs(v + (1 - mpmath.mpf(1) / pt[4]) * k2 * g) <= 2.0**-50 * abs(v)  # g rounded to 15 digits


@pytest.mark.parametrize("pt", ORF_POINTS)
def test_orf_variance_reduction_ball_encloses_and_rejects(pt: tuple) -> None:
    p = _point(*pt)
    exact = _reduction(p)
    with workprec(BITS):
        b = R.orf_variance_reduction_ball(p, BITS)
        assert b.overlaps(_ball(exact))
        with mpmath.workdps(50):
            assert not b.overlaps(_ball(exact * (1 + mpmath.mpf(10) ** -30)))
        assert b > 0 or exact == 0


def test_orf_variance_reduction_vanishes_for_one_sample() -> None:
    """``M = 1``: no pair, so ``Var_iid = Var_ort`` exactly (value and ball)."""
    p = _point(1.0, 0.5, 0.0, 8, 1)
    v, err = R.orf_variance_reduction(p, 25)
    assert v == 0 and err == 0
    with workprec(BITS):
        assert R.orf_variance_reduction_ball(p, BITS).is_zero()


def _dirf_variance(x: list[float], y: list[float], dist: str, par: float) -> mpmath.mpf:
    """``Var(f f)`` at 50 digits from the per-coordinate second moments summed in closed form:
    Poisson ``sum_k a^{2k} / (k!^2 p_k) = e^{lambda} e^{a^2 / lambda}``, geometric
    ``sum_k a^{2k} / (k!^2 p (1 - p)^k) = I_0(2 |a| / sqrt(1 - p)) / p`` (the series of ``I_0``), ``a = x_l y_l``;
    times ``e^{-|x|^2 - |y|^2}``, minus ``K^2 = e^{-|x - y|^2}``."""
    with mpmath.workdps(50):
        m2 = mpmath.mpf(1)
        for xl, yl in zip(x, y, strict=True):
            a2 = (mpmath.mpf(xl) * mpmath.mpf(yl)) ** 2
            lam_or_p = mpmath.mpf(par)
            m2 *= (mpmath.exp(lam_or_p + a2 / lam_or_p) if dist == "poisson"
                   else mpmath.besseli(0, 2 * mpmath.sqrt(a2 / (1 - lam_or_p))) / lam_or_p)
        sq = mpmath.fsum(mpmath.mpf(v) ** 2 for v in x) + mpmath.fsum(mpmath.mpf(v) ** 2 for v in y)
        k2 = mpmath.exp(-mpmath.fsum((mpmath.mpf(a) - mpmath.mpf(b)) ** 2 for a, b in zip(x, y, strict=True)))
        return m2 * mpmath.exp(-sq) - k2


@pytest.mark.parametrize(("x", "y", "dist", "par"), DIRF_CASES)
def test_dirf_product_variance_matches_the_closed_series(x: list[float], y: list[float], dist: str,
                                                         par: float) -> None:
    exact = _dirf_variance(x, y, dist, par)
    v, err = R.dirf_product_variance(x, y, _log_pk(dist, par), 40)
    assert exact > 0 and v > 0
    assert abs(v - exact) <= err + mpmath.mpf(10) ** -38 * (1 + abs(exact))
    with mpmath.workdps(50):
        assert not abs(v - exact * (1 + mpmath.mpf(10) ** -25)) <= err + mpmath.mpf(10) ** -38 * (1 + abs(exact))


@pytest.mark.parametrize(("x", "y", "dist", "par"), DIRF_CASES)
def test_dirf_product_variance_ball_encloses_and_rejects(x: list[float], y: list[float], dist: str,
                                                         par: float) -> None:
    exact = _dirf_variance(x, y, dist, par)
    with workprec(BITS):
        b = R.dirf_product_variance_ball(x, y, dist, par, BITS)
        assert b.overlaps(_ball(exact))
        assert b.rad() < 1e-40 * (1 + float(exact))
        with mpmath.workdps(50):
            assert not b.overlaps(_ball(exact * (1 + mpmath.mpf(10) ** -30)))


def test_dirf_product_variance_vanishes_at_poisrf_zero_variance_point() -> None:
    """PoisRF at ``x = y`` with equal entries ``c`` and ``lambda = c^2``: ``f f`` is constant (zero variance)."""
    x = [0.5, 0.5, 0.5]
    v, err = R.dirf_product_variance(x, x, poisson_log_pk(0.25), 40)
    assert abs(v) <= err + mpmath.mpf(10) ** -38
    with workprec(BITS):
        assert R.dirf_product_variance_ball(x, x, "poisson", 0.25, BITS).contains(0)


#: seeded sets (L, d, scale, shift, seed), as the points of crt.eq8 / eq12 / eq14 draw them
SET_CASES = [(1, 1, 1.0, 0.0, 0), (3, 2, 0.5, 1.5, 1), (7, 5, 3.0, -2.0, 2), (12, 16, 0.01, 0.3, 3)]


def _sets(L: int, d: int, scale: float, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(L, d)) * scale, rng.normal(size=(L, d)) * scale + shift


def _rows(ctx: Any, a: np.ndarray) -> list[list[Any]]:
    return [[ctx.num(float(v)) for v in row] for row in a]


def _exact_set_means(xs: np.ndarray, ys: np.ndarray, s: int) -> tuple[Fraction, Fraction, Fraction]:
    """The three averages in exact rational arithmetic on the floats (an independent method)."""
    X = [[Fraction(float(v)) for v in row] for row in xs]
    Y = [[Fraction(float(v)) for v in row] for row in ys]
    L, d = len(X), len(X[0])
    pairs = [(i, j) for i in range(L) for j in range(L)]
    sq_norm = sum(sum((X[i][k] + s * Y[j][k]) ** 2 for k in range(d)) for i, j in pairs) / L**2
    sq_prod = sum(sum(X[i][k] ** 2 * Y[j][k] ** 2 for k in range(d)) for i, j in pairs) / L**2
    abs_prod = sum(abs(X[i][d - 1] * Y[j][d - 1]) for i, j in pairs) / L**2
    return sq_norm, sq_prod, abs_prod


def _frac_ball(q: Fraction) -> arb:
    return arb(q.numerator) / arb(q.denominator)


@pytest.mark.parametrize("case", SET_CASES)
@pytest.mark.parametrize("s", [-1, 1])
def test_set_pair_means_match_exact_rationals(case: tuple, s: int) -> None:
    xs, ys = _sets(*case)
    exact = _exact_set_means(xs, ys, s)
    with mpmath.workdps(50):
        X, Y = _rows(MP, xs), _rows(MP, ys)
        got = (R.set_pair_mean_sq_norm(MP, X, Y, s), R.set_pair_mean_sq_product(MP, X, Y),
               R.set_pair_mean_abs_product(MP, X, Y, xs.shape[1] - 1))
        for g, q in zip(got, exact, strict=True):
            ref = mpmath.mpf(q.numerator) / q.denominator
            assert abs(g - ref) <= mpmath.mpf(10) ** -45 * abs(ref)
            assert not abs(g - ref * (1 + mpmath.mpf(10) ** -30)) <= mpmath.mpf(10) ** -45 * abs(ref)


@pytest.mark.parametrize("case", SET_CASES)
def test_set_pair_mean_balls_enclose_the_exact_rationals(case: tuple) -> None:
    xs, ys = _sets(*case)
    exact = _exact_set_means(xs, ys, -1)
    with workprec(BITS):
        X, Y = _rows(ARB, xs), _rows(ARB, ys)
        got = (R.set_pair_mean_sq_norm(ARB, X, Y, -1).v, R.set_pair_mean_sq_product(ARB, X, Y).v,
               R.set_pair_mean_abs_product(ARB, X, Y, xs.shape[1] - 1).v)
        for b, q in zip(got, exact, strict=True):
            assert b.overlaps(_frac_ball(q))
            assert b.rad() < 1e-50 * abs(float(q)) + 1e-300
            assert not b.overlaps(_frac_ball(q * (1 + Fraction(1, 10**30))))


def test_orf_variance_reduction_ball_works_at_its_own_bits_and_decides_near_antipodal_pairs():
    """Called at flint's default precision, the ball still has the precision asked for; near ``x = -y`` (``G``
    far below the rounding of ``1 + G``) its sign is decided, as the gap's ball decides it."""
    p = {"nx": 0.5, "ny": 0.5, "theta": 0.0, "d": 3, "M": 2}
    b = R.orf_variance_reduction_ball(p, 128)
    assert b.rad() < 2.0**-100 * abs(b.mid())
    near = {"nx": 1.0, "ny": 1.0, "theta": 3.14159265, "d": 8, "M": 4}
    assert R.orf_variance_reduction_ball(near, 64) > 0
    assert R.orf_pair_covariance_gap_ball(near, 64) < 0

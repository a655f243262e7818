"""rfcheck.references.crt: the minimisers, integrals and enclosures moved out of the CRT claims file.

Each function against an independent 50-digit mpmath computation (a closed form the reference never
uses, or the defining expectation), its ball containing that value and a planted wrong value outside.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from flint import acb, arb

from rfcheck.arb_backend import workprec
from rfcheck.ledger import pair_stats
from rfcheck.references import crt as R

NEW = ["gaussian_shifted_integral", "gaussian_shifted_integral_ball", "gerf_a_star_ball", "gerf_log_variance_ratio",
       "gerf_log_variance_ratio_ball", "gerf_ort_conditional_t_ball", "poisrf_lambda_star", "poisrf_lambda_star_ball",
       "poisrf_q_ball", "sec51_set_statistics", "oprf_tail_log_probability", "oprf_tail_lower_ball",
       "oprf_tail_upper_ball", "dirf_feature", "dirf_feature_ball", "oprf_log_z_balls",
       "two_point_sum_tail", "two_point_sum_tail_ball"]


def _mp_ball(v: mpmath.mpf, rel: float = 1e-45) -> arb:
    """A ball around a 50-digit mpmath value, widened by its own rounding."""
    return arb(mpmath.nstr(v, 55), float(abs(v)) * rel + 1e-300)


def _planted(v: mpmath.mpf, digits: int, shift: bool = False) -> arb:
    """A wrong value ``10^-digits`` (relative, or absolute on ``1 + |v|`` with ``shift``) off ``v``, at 60 digits."""
    with mpmath.workdps(60):
        eps = mpmath.mpf(10) ** -digits
        return _mp_ball(v + eps * (1 + abs(v)) if shift else v * (1 + eps))


def test_new_functions_are_public_and_documented() -> None:
    for name in NEW:
        assert name in R.__all__, name
        doc = getattr(R, name).__doc__
        assert doc and "Returns" in doc and "Examples" in doc and "CRT" in doc, name


def _a_star_closed(p: dict) -> mpmath.mpf:
    """A* in closed form: the '+' root of 2u r^2 + (2u + d) r - d = 0, A = (1 - 1/r)/8 = (r - 1)/(8r)."""
    st = pair_stats(p)
    u, d = st["sq_sum"], st["d"]
    r = (-(2 * u + d) + mpmath.sqrt((2 * u + d) ** 2 + 8 * u * d)) / (4 * u)
    return (r - 1) / (8 * r)


@pytest.mark.parametrize("p", [{"d": 3, "nx": 0.7, "ny": 1.3, "theta": 0.4},
                               {"d": 64, "nx": 5.0, "ny": 5.0, "theta": 0.0},
                               {"d": 1, "nx": 0.3, "ny": 0.2, "theta": 0.0}])
def test_a_star_ball_against_the_50_digit_root(p: dict) -> None:
    with mpmath.workdps(50):
        a = _a_star_closed(p)
    b = R.gerf_a_star_ball(dict(p), 200)
    with workprec(200):
        assert b.overlaps(_mp_ball(a))
        assert not b.overlaps(_planted(a, 30))  # planted
        assert b < 0 and float(b.rad()) < 1e-50 * abs(float(a))


def test_a_star_ball_raises_where_u_vanishes() -> None:
    with pytest.raises(ValueError):
        R.gerf_a_star_ball({"d": 2, "nx": 0.0, "ny": 0.0, "theta": 0.0}, 64)  # u = 0: f'(0) = 0


@pytest.mark.parametrize("p", [{"d": 2, "nx": 1.0, "ny": 0.0, "theta": 0.0},
                               {"d": 8, "nx": 0.9, "ny": 0.4, "theta": 1.0}])
def test_log_variance_ratio_against_the_closed_form_variance(p: dict) -> None:
    """mu = log(Var(A*)/Var(0)) with Var(A) = e^{u - 2(|x|^2+|y|^2)} (1-4A)^d (1-8A)^{-d/2} e^{u/(1-8A)} - K^2."""
    with mpmath.workdps(50):
        st = pair_stats(p)
        u, d = st["sq_sum"], st["d"]

        def var(a: mpmath.mpf) -> mpmath.mpf:
            scale = mpmath.exp(u - 2 * (st["sq_x"] + st["sq_y"]))
            return (scale * (1 - 4 * a) ** d * (1 - 8 * a) ** (-mpmath.mpf(d) / 2) * mpmath.exp(u / (1 - 8 * a))
                    - mpmath.exp(-st["sq_diff"]))

        mu = mpmath.log(var(_a_star_closed(p)) / var(mpmath.mpf(0)))
    got, err = R.gerf_log_variance_ratio(dict(p), 30)
    assert mu < 0 and abs(got - mu) <= 10 * err + mpmath.mpf(10) ** -20 * abs(mu)
    b = R.gerf_log_variance_ratio_ball(dict(p), 200)
    with workprec(200):
        assert b.overlaps(_mp_ball(mu, 1e-40))
        assert not b.overlaps(_planted(mu, 25))


PAIRS = [([0.5, 1.0], [2.0, 3.0]), ([0.3, -0.7, 1.1], [0.2, 0.4, -2.0]), ([0.02], [0.015])]


@pytest.mark.parametrize("x, y", PAIRS)
def test_lambda_star_against_sqrt_q_over_d(x: list, y: list) -> None:
    """(11) is minimised where d = q / lambda^2 (its exp argument is lambda d + q / lambda + const)."""
    with mpmath.workdps(50):
        q = mpmath.fsum((mpmath.mpf(a) * mpmath.mpf(b)) ** 2 for a, b in zip(x, y, strict=True))
        lam = mpmath.sqrt(q / len(x))
    got, err = R.poisrf_lambda_star(np.array(x), np.array(y), 25)
    assert abs(got - lam) <= err and err < 1e-12 * lam
    b = R.poisrf_lambda_star_ball(x, y, 200)
    with workprec(200):
        assert R.poisrf_q_ball(x, y).overlaps(_mp_ball(q))
        assert b.overlaps(_mp_ball(lam))
        assert not b.overlaps(_planted(lam, 30))


@pytest.mark.parametrize("p", [{"d": 1, "al_re": 2.0, "al_im": 0.5, "be_re": 0.3, "be_im": -0.2},
                               {"d": 3, "al_re": 0.4, "al_im": -1.5, "be_re": -1.0, "be_im": 0.7}])
def test_gaussian_shifted_integral_against_the_closed_form(p: dict) -> None:
    """The translation-invariant integral is (2 pi / alpha)^{d/2} (principal branch, Re alpha > 0)."""
    with mpmath.workdps(50):
        exact = (2 * mpmath.pi / mpmath.mpc(p["al_re"], p["al_im"])) ** (mpmath.mpf(p["d"]) / 2)
    v, err = R.gaussian_shifted_integral(p, 30)
    assert abs(v - exact) <= 10 * err + mpmath.mpf(10) ** -25 * abs(exact)
    b = R.gaussian_shifted_integral_ball(p, 128)
    with workprec(200):
        ex = acb(_mp_ball(exact.real), _mp_ball(exact.imag))
        assert b.overlaps(ex)
        assert not b.overlaps(ex * (1 + acb(10) ** -20))


@pytest.mark.parametrize("scaled", [False, True])
def test_conditional_t_ball_against_the_quadrature_route(scaled: bool) -> None:
    p = {"d": 4, "nx": 0.7, "ny": 1.1, "theta": 1.0, "a_re": -0.3, "M": 3, "rho1": 0.5, "rho2": 1.2, "rho3": 1.6}
    quad = R.conditional_moments(dict(p), 25, scaled, "quad")
    b = R.gerf_ort_conditional_t_ball(dict(p), 128, scaled)
    with workprec(128):
        assert b.overlaps(arb(mpmath.nstr(quad["T"], 30), 10 * float(quad["err"]) + 1e-20 * abs(float(quad["T"]))))
        assert not b.overlaps(arb(mpmath.nstr(quad["T"] * (1 + mpmath.mpf(10) ** -8), 30)))
        assert b > 0  # T >= 0 (eq (32) bounds it below by a positive sum)
    zero = R.gerf_ort_conditional_t_ball(dict(p, nx=1.0, ny=1.0, theta=float(mpmath.pi)), 128, scaled)
    assert abs(float(zero.mid())) < 1e-30  # z = x + y ~ 0: T vanishes


def test_sec51_set_statistics_jensen_and_memo() -> None:
    a = R.sec51_set_statistics("normal", 4, ("PosRF", "OPRF"), 2, 0, 4)
    assert a is R.sec51_set_statistics("normal", 4, ("PosRF", "OPRF"), 2, 0, 4)  # memoised
    for m in ("PosRF", "OPRF"):
        assert len(a[m]["mean_log"]) == 2
        assert all(lm >= ml - 1e-12 for lm, ml in zip(a[m]["log_mean"], a[m]["mean_log"], strict=True))


@pytest.mark.parametrize("p", [{"d": 2, "nx": 0.5, "ny": 0.5, "theta": 0.3, "eps": 0.2},
                               {"d": 5, "nx": 0.8, "ny": 0.3, "theta": 1.2, "eps": 0.05},
                               {"d": 3, "nx": 0.6, "ny": 0.6, "theta": 0.0, "eps": 0.4, "M": 3}])
def test_oprf_tail_against_scipy_and_its_balls(p: dict) -> None:
    """log P[|Z - K| >= eps] of one OPRF sample by scipy's noncentral chi^2 CDF (an independent implementation),
    and lower ball <= value <= upper ball; a planted value outside."""
    import scipy.stats as sps

    o = R.oprf_point(p, 30)
    a, b, u, d = (float(o[k]) for k in ("A", "B", "sq_sum", "d"))
    k = float(mpmath.exp(-o["sq_diff"] / 2))
    log_zmax = d / 2 * np.log(1 - 4 * a) - b * b * u / (8 * a) - float(o["sq_x"] + o["sq_y"])
    nc = b * b * u / (16 * a * a)
    up = sps.ncx2.cdf((log_zmax - np.log(k + p["eps"])) / (-2 * a), d, nc)
    low = sps.ncx2.sf((log_zmax - np.log(k - p["eps"])) / (-2 * a), d, nc) if k > p["eps"] else 0.0
    m = p.get("M", 1)
    want = np.log(up + low) if m == 1 else m * np.log(max(up, low))
    got, err = R.oprf_tail_log_probability(dict(p), 30)
    assert abs(float(got) - want) < 1e-9 * (1 + abs(want)) and err < 1e-15
    lo = R.oprf_tail_lower_ball(dict(p), 128)
    assert lo < float(got) + 1e-12 and not lo < float(got) - 1e-6  # a lower bound, and a tight one
    if m == 1:
        hi = R.oprf_tail_upper_ball(dict(p), 128)
        assert hi.log() > float(got) - 1e-12 and not hi.log() > float(got) + 1e-6


def test_oprf_tail_beyond_the_range_is_zero() -> None:
    p = {"d": 2, "nx": 0.5, "ny": 0.5, "theta": 0.3, "eps": 1e6}  # K + eps above sup Z, K - eps < 0
    assert R.oprf_tail_log_probability(dict(p), 20)[0] == -mpmath.inf
    assert R.oprf_tail_upper_ball(dict(p), 64).is_zero()
    assert isinstance(R.oprf_tail_lower_ball(dict(p), 64), str)


@pytest.mark.parametrize("dist, par", [("poisson", 1.5), ("geometric", 0.3)])
def test_dirf_feature_against_the_printed_special_forms(dist: str, par: float) -> None:
    """f_DI of eq (10) equals the PoisRF / GeomRF features of sec 3.2.1-3.2.2 (written out here at 50 digits)."""
    from rfcheck.closed_forms import crt as cf

    x, w = [0.7, -1.2, 0.05], [3, 1, 0]
    with mpmath.workdps(50):
        xs = [mpmath.mpf(a) for a in x]
        sq = mpmath.fsum(a * a for a in xs)
        if dist == "poisson":
            lam = mpmath.mpf(par)
            want = mpmath.exp(lam * 3 / 2 - sq / 2) * mpmath.fprod(a**k * lam ** (-mpmath.mpf(k) / 2)
                                                                 for a, k in zip(xs, w, strict=True))
            log_pk = cf.poisson_log_pk(par)
        else:
            pp = mpmath.mpf(par)
            want = pp ** (-mpmath.mpf(3) / 2) * mpmath.exp(-sq / 2) * mpmath.fprod(
                a**k * (1 - pp) ** (-mpmath.mpf(k) / 2) / mpmath.sqrt(mpmath.factorial(k))
                for a, k in zip(xs, w, strict=True))
            log_pk = cf.geometric_log_pk(par)
        got = R.dirf_feature(x, w, log_pk)
    assert abs(got - want) < mpmath.mpf(10) ** -45 * abs(want)
    with workprec(200):
        b = R.dirf_feature_ball(x, w, dist, par)
        assert b.overlaps(_mp_ball(want))
        assert not b.overlaps(_planted(want, 30))


@pytest.mark.parametrize("p", [{"d": 3, "nx": 1.0, "ny": 0.5, "theta": 0.7},
                               {"d": 64, "nx": 2.0, "ny": 2.0, "theta": 0.0}])
def test_oprf_log_z_balls_against_brute_maximisation(p: dict) -> None:
    """log sup_w Z by mpmath's maximisation of log Z along x + y (50 digits, an independent optimiser): the exact
    ball contains it, the golden-section ball is a lower bound within 1e-20, a planted value is outside."""
    o = R.oprf_point(p, 50)
    with mpmath.workdps(50):
        nz = mpmath.sqrt(o["sq_sum"])

        def neg_logz(t: mpmath.mpf) -> mpmath.mpf:
            return -(mpmath.log(o["D2"]) + 2 * o["A"] * t * t + o["B"] * t * nz - o["sq_x"] - o["sq_y"])

        t_star = mpmath.findroot(lambda t: mpmath.diff(neg_logz, t), 1)
        sup = -neg_logz(t_star)
    lower, exact = R.oprf_log_z_balls(dict(p), 200)
    with workprec(200):
        assert exact.overlaps(_mp_ball(sup, 1e-40))
        assert not exact.overlaps(_planted(sup, 30, shift=True))
        assert lower < exact + arb("1e-40") and lower > exact - arb("1e-20")


@pytest.mark.parametrize("m, a_i, b_i, t", [(5, 0.3, 0.7, 0.4), (8, 1.0, 0.05, 0.9), (1, 0.2, 0.2, 0.0)])
def test_two_point_sum_tail_against_enumeration(m: int, a_i: float, b_i: float, t: float) -> None:
    """The binomial sum against enumeration of all 2^M outcomes (50 digits); ball contains it, planted outside."""
    import itertools

    with mpmath.workdps(50):
        lo, hi = mpmath.mpf(a_i), mpmath.mpf(b_i)
        q = lo / (lo + hi)
        thr = mpmath.mpf(t) * m * (lo + hi) / 4
        want = mpmath.fsum(mpmath.fprod(q if x else 1 - q for x in xs)
                           for xs in itertools.product((0, 1), repeat=m)
                           if abs(sum(hi if x else -lo for x in xs)) > thr)
        got = R.two_point_sum_tail(m, a_i, b_i, t, 50)
    assert abs(got - want) < mpmath.mpf(10) ** -45
    with workprec(200):
        b = R.two_point_sum_tail_ball(m, a_i, b_i, t)
        assert b.overlaps(_mp_ball(want))
        assert not b.overlaps(_planted(want, 30))

"""Certified counterexamples of CRT's deterministic REFUTED claims (Arb balls).

crt.eq33 (printed ``F^2`` vs the exact covariance identity), crt.eq35 (``log Z`` at the
golden-section maximiser: a lower bound of the supremum) and crt.thm4.2 (a Poisson mixture of
regularized incomplete gamma functions: a lower bound of the tail) carry balls: at their stored
counterexamples the balls are disjoint (``extra["certified"]``), a planted correct formula is not
refuted on balls, and a widened ball never certifies anything.
"""

from __future__ import annotations

from typing import Any

import mpmath
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.certify import certified_equal, certified_inequality
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.claims import crt as C
from rfcheck.claims._common import eval_on_balls
from rfcheck.references import crt as R

BUDGET = BUDGETS["default"]
BITS = 116

EQ33_POINT = {"d": 2, "nx": 0.0, "ny": 5.0, "theta": 3.141592653589793, "M": 2}
EQ35_POINT = {"d": 3, "nx": 10.0, "ny": 10.0, "theta": 0.0}
THM42_POINT = {"d": 64, "nx": 1.009375, "ny": 1.009375, "theta": 0.00014726215563702155,
               "eps": 1412537544.6227562, "M": 1}
THM42_POINT_M8 = {"d": 64, "nx": 1.0, "ny": 1.0, "theta": 0.0, "eps": 1e9, "M": 8}


def _widen(b: Any, by: Any) -> Any:
    """``b`` with its radius grown by ``|by|`` (plus its own width)."""
    return b + arb(0, abs(by).upper() * 2 + 1)


@pytest.mark.parametrize("cid,point,check", [
    ("crt.eq33", EQ33_POINT, 0),
    ("crt.eq35", EQ35_POINT, 0),
    ("crt.thm4.2", THM42_POINT, 0),
    ("crt.thm4.2", THM42_POINT_M8, 1),
])
def test_stored_counterexample_is_certified(cid: str, point: dict[str, Any], check: int) -> None:
    ev = REGISTRY[cid].checks[check].evaluate(dict(point), BUDGET, 0)
    assert ev.decided and ev.disc > 1
    assert ev.extra["certified"] is True, ev.extra


def test_eq33_balls_disjoint_and_reference_matches_mpmath() -> None:
    with workprec(BITS):
        pb = C._eq33_printed_ball(dict(EQ33_POINT), BITS)
        rb = R.orf_variance_reduction_ball(dict(EQ33_POINT), BITS)
    assert certified_equal(pb, rb, 1e-25) == "REFUTED"
    # the reference ball contains (1 - 1/M) K^2 (1 - e^{-u/2} 1F1(-d/2; d/2; -u/2)) at 50 digits
    with mpmath.workdps(50):
        u = mpmath.mpf(25)
        exact = mpmath.mpf(1) / 2 * mpmath.exp(-25) * (1 - mpmath.exp(-u / 2) * mpmath.hyp1f1(-1, 1, -u / 2))
        assert rb.overlaps(arb(mpmath.nstr(exact, 50)))
        assert float(rb.rad()) < 1e-30 * float(exact)


def test_eq33_planted_correct_formula_holds_and_widened_ball_is_undecided() -> None:
    with workprec(BITS):
        rb = R.orf_variance_reduction_ball(dict(EQ33_POINT), BITS)
        pb = C._eq33_printed_ball(dict(EQ33_POINT), BITS)
        planted = arb(rb.mid(), rb.rad()) * 1  # the exact value, as a correct printed formula
        assert certified_equal(planted, rb, 1e-25) != "REFUTED"
        assert certified_equal(_widen(pb, pb - rb), rb, 1e-25) is None


def test_eq35_lower_bound_certifies_violation_not_the_corrected_bound() -> None:
    lhs, rhs = C._eq35_sides_ball(dict(EQ35_POINT), BITS)
    assert certified_inequality(lhs, rhs) == "REFUTED"
    # the corrected bound adds log D^2 = (d/2) log(1 - 4A) > 0: the lower bound no longer exceeds it
    with workprec(BITS):
        s = R.pair_stats_ball(EQ35_POINT)
        a = C.cf.oprf_a_star(s["sq_sum"], s["d"], backend="arb", prec=BITS)
        corrected = rhs + s["d"] * (1 - 4 * a).log() / 2
        assert certified_inequality(lhs, corrected) != "REFUTED"
        assert certified_inequality(_widen(lhs, lhs - rhs), rhs) is None
    # a narrow ball at the mpmath supremum (golden section)
    sup = C._eq35_sides(dict(EQ35_POINT), 30)[0]
    assert float(lhs.rad()) < 1e-25
    assert abs(float(lhs.mid()) - float(sup)) < 1e-12


@pytest.mark.parametrize("point", [THM42_POINT, THM42_POINT_M8])
def test_thm42_lower_bound_certifies_violation_not_the_corrected_bound(point: dict[str, Any]) -> None:
    lhs, rhs = C._thm42_sides_ball(dict(point), BITS)
    assert certified_inequality(lhs, rhs) == "REFUTED"
    # mpmath's tail (the same mixture, summed to full precision) agrees with the lower bound
    assert abs(float(lhs.mid()) - float(C._thm42_sides(dict(point), 30)[0])) < 1e-9
    # the corrected Hoeffding bound log 2 - 2 M eps^2 (1-4A)^{-d} exp((|x|^2+|y|^2)/(2A)) is not violated
    with workprec(BITS):
        s = R.pair_stats_ball(point)
        a = C.cf.oprf_a_star(s["sq_sum"], s["d"], backend="arb", prec=BITS)
        n, eps = int(point["M"]), arb(point["eps"])
        corrected = (arb(2).log() - 2 * n * eps * eps * (-(s["d"]) * (1 - 4 * a).log()
                                                          + (s["sq_x"] + s["sq_y"]) / (2 * a)).exp())
        assert certified_inequality(lhs, corrected) == "HOLDS"
        assert certified_inequality(_widen(lhs, lhs - rhs), rhs) is None


def test_thm42_holding_point_is_certified_by_the_upper_bound_only() -> None:
    p = {"d": 3, "nx": 0.5, "ny": 1.0, "theta": 1.0, "eps": 0.1, "M": 1}
    ev = REGISTRY["crt.thm4.2"].checks[0].evaluate(p, BUDGET, 0)
    assert ev.decided and ev.disc <= 1
    assert ev.extra.get("certified") is True, ev.extra
    lo, _ = C._thm42_sides_ball(p, BITS)
    up, rhs2 = C._thm42_upper_sides_ball(p, BITS)
    assert certified_inequality(up, rhs2) == "HOLDS"  # the upper bound's ball lies below the printed bound
    assert up.upper() >= lo.lower()  # and above the lower bound: the tail lies between them
    with mpmath.workdps(30):
        exact = C._thm42_sides(p, 30)[0]
    assert float(lo.lower()) <= float(exact) <= float(up.upper())
    # a ball widened past the bound does not certify
    assert certified_inequality(arb(up.mid(), 2 * float(abs(rhs2.mid() - up.mid())) + 1), rhs2) is None


EQ1_POINT = {"d": 1, "nx": 4.0, "ny": 4.0, "theta": 0.0, "mech": "trig", "s": -1}
THM31_POINT = {"d": 128, "nx": 4.0, "ny": 4.0, "theta": 0.0, "a_re": 0.2375, "a_im": -1.5, "s": -1}
EQ21_POINT = {"d": 128, "nx": 0.00086496, "ny": 0.0, "theta": 0.0, "a_re": -1.49906764368, "a_im": -1.5, "s": 1}


@pytest.mark.parametrize("cid,reading,point", [
    ("crt.eq1", "conjugate", EQ1_POINT),
    ("crt.thm3.1", "conjugate", THM31_POINT),
    ("crt.eq21.line2", "literal", EQ21_POINT),
])
def test_refuted_reading_is_certified(cid: str, reading: str, point: dict[str, Any]) -> None:
    check = next(r for r in REGISTRY[cid].readings if r.name == reading).checks[0]
    ev = check.evaluate(dict(point), BUDGET, 0)
    assert ev.decided and ev.disc > 1
    assert ev.extra["certified"] is True, ev.extra


@pytest.mark.parametrize("point", [EQ1_POINT, THM31_POINT,
                                   {"d": 3, "nx": 1.0, "ny": 0.5, "theta": 1.0, "a_re": 0.05, "a_im": 0.3, "s": -1}])
def test_conjugate_reference_ball_contains_mpmath_and_is_disjoint_from_k(point: dict[str, Any]) -> None:
    with workprec(BITS):
        rb = R.gerf_conjugate_mean_ball(dict(point), BITS)
        k = (-R.pair_stats_ball(point)["sq_diff"] / 2).exp()
    with mpmath.workdps(40):
        ref, err = R.gerf_conjugate_mean(dict(point), 40)
    assert rb.overlaps(arb(mpmath.nstr(ref, 45)) + arb(0, float(err) * 2 + 1e-300))
    assert certified_equal(k, rb, 1e-25) == "REFUTED"
    # the planted correct formula (the conjugate expectation itself) is not refuted; a widened ball decides nothing
    assert certified_equal(arb(rb.mid()), rb, 1e-25) != "REFUTED"
    assert certified_equal(_widen(k, k - rb), rb, 1e-25) is None


def test_eq21_bar_restored_agrees_with_the_ball_reference() -> None:
    """The corrected second line (overline restored) on balls is not refuted by the ball reference;
    the literal line is."""
    from rfcheck.claims._common import eval_on_balls

    rb = R.gerf_abs_second_moment_ball(dict(EQ21_POINT), BITS)
    literal = eval_on_balls(C._printed_eq21_ctx(2), dict(EQ21_POINT), BITS)
    restored = eval_on_balls(C._printed_eq21_ctx(2, bar=True), dict(EQ21_POINT), BITS)
    assert certified_equal(literal, rb, 1e-25) == "REFUTED"
    assert certified_equal(restored, rb, 1e-25) == "HOLDS"
    assert certified_equal(_widen(literal, literal - rb), rb, 1e-25) is None
    with mpmath.workdps(30):  # the mpmath face: the printed value stored in the ledger
        from rfcheck.backends import MP
        from rfcheck.ledger import mp_point

        assert float(C._printed_eq21_ctx(2)(MP, mp_point(EQ21_POINT))) == pytest.approx(-1.4426659687562267e52,
                                                                                     rel=1e-15)


ORT_POINTS = {
    "crt.eq29": {"d": 2, "nx": 0.0, "ny": 1.5, "theta": 0.0, "a_re": -1.0, "M": 2,
                 "rho1": 0.3, "rho2": 1.7, "rho3": 0.3, "rho4": 0.3},
    "crt.eq30": {"d": 2, "nx": 0.0, "ny": 1.5, "theta": 3.141592653589793, "a_re": -1.0, "M": 2,
                 "rho1": 1.7, "rho2": 0.3, "rho3": 1.7, "rho4": 1.7},
    "crt.eq31": {"d": 2, "nx": 0.0, "ny": 1.5, "theta": 3.141592653589793, "a_re": -1.0, "M": 2,
                 "rho1": 0.3, "rho2": 0.3, "rho3": 0.3, "rho4": 0.3},
    "crt.eq32.middle": {"d": 2, "nx": 1.5, "ny": 1.5, "theta": 0.0, "a_re": -1.0, "M": 2,
                        "rho1": 1.7, "rho2": 1.7, "rho3": 1.7, "rho4": 1.7},
}


@pytest.mark.parametrize("cid", sorted(ORT_POINTS))
def test_appendix97_counterexample_is_certified(cid: str) -> None:
    ev = REGISTRY[cid].checks[0].evaluate(C._orf_domain_derive(dict(ORT_POINTS[cid])), BUDGET, 0)
    assert ev.decided and ev.disc > 1
    assert ev.extra["certified"] is True, ev.extra


@pytest.mark.parametrize("key", ["var_iid", "var_ort", "T"])
@pytest.mark.parametrize("scaled", [False, True])
def test_cond_moments_ball_contains_the_quadrature(key: str, scaled: bool) -> None:
    """The 0F1 balls against the independent route (tanh-sinh quadrature over the law of u_1)."""
    p = C._orf_domain_derive({"d": 5, "nx": 0.7, "ny": 1.1, "theta": 1.0, "a_re": -0.3, "M": 3,
                              "rho1": 0.5, "rho2": 1.2, "rho3": 1.6, "rho4": 1.0})
    ball = R.conditional_moments_ball(p, BITS, scaled)[key]
    q = R.conditional_moments(p, 25, scaled, "quad")
    assert ball.overlaps(arb(mpmath.nstr(q[key], 30)) + arb(0, float(q["err"]) + 1e-20 * float(q["scale"])))
    assert float(ball.rad()) < 1e-25 * float(q["scale"])


def test_appendix97_planted_correct_formula_and_widened_ball() -> None:
    """With the norms inside g (the correction) the literal side equals the reference on balls;
    the literal side is refuted; widened, it decides nothing."""
    p = C._orf_domain_derive(dict(ORT_POINTS["crt.eq31"]))
    lit, ref = R.conditional_moments_ball(p, BITS, False)["T"], R.conditional_moments_ball(p, BITS, True)["T"]
    assert certified_equal(lit, ref, 1e-20) == "REFUTED"
    assert certified_equal(R.conditional_moments_ball(p, BITS, True)["T"], ref, 1e-20) == "HOLDS"
    assert certified_equal(_widen(lit, lit - ref), ref, 1e-20) is None


def test_eq32_middle_series_ball() -> None:
    """The series ball contains its closed sum P0 e^{2A r^2} expm1(B^2 |z|^2 / 2) per factor (mpmath, 40
    digits), and is refuted against F; the corrected member (F itself) is not."""
    p = C._orf_domain_derive(dict(ORT_POINTS["crt.eq32.middle"]))
    mid = eval_on_balls(C.printed_eq32_middle_ctx, p, BITS)  # the printed transcription on balls
    last = C._eq32_last_ball(p, BITS)
    with mpmath.workdps(40):
        o = R.gerf_ort_point(p)
        s = [o["P0"] * mpmath.exp(2 * o["A"] * r * r) * mpmath.expm1(o["B"] ** 2 * o["nz"] ** 2 / 2) for r in o["r"]]
        exact = 2 / mpmath.mpf(o["d"] + 2) * 2 / mpmath.mpf(o["M"]) ** 2 * s[0] * s[1]
    assert mid.overlaps(arb(mpmath.nstr(exact, 40)))
    assert certified_equal(mid, last, 1e-20) == "REFUTED"
    assert certified_equal(C._eq32_last_ball(p, BITS), last, 1e-20) == "HOLDS"
    assert certified_equal(_widen(mid, mid - last), last, 1e-20) is None


EQ25_POINT = {"d": 1, "nx": 0.0, "ny": 0.0, "theta": 3.141592653589793, "a_re": -1.0}
EQ26_POINT = {"d": 32, "nx": 0.0, "ny": 0.0, "theta": 0.0, "a_re": -1.0, "M": 2}


@pytest.mark.parametrize("cid,point", [("crt.eq25", EQ25_POINT), ("crt.eq26", EQ26_POINT)])
def test_total_variance_counterexample_is_certified(cid: str, point: dict[str, Any]) -> None:
    ev = REGISTRY[cid].checks[0].evaluate(dict(point), BUDGET, 0)
    assert ev.decided and ev.disc > 1
    assert ev.extra["certified"] is True, ev.extra


@pytest.mark.parametrize("point", [
    EQ25_POINT,
    {"d": 7, "nx": 1.3, "ny": 0.4, "theta": 1.0, "a_re": 0.05},
    {"d": 32, "nx": 2.0, "ny": 2.0, "theta": 0.0, "a_re": -1.0},
])
def test_eq25_balls_contain_the_mpmath_quadrature(point: dict[str, Any]) -> None:
    printed, var1, second = C._eq25_balls(dict(point), BITS)
    with mpmath.workdps(30):
        pv, rv, err, sc = C._eq25_sides(dict(point), 30)
    tol = float(err) + 1e-25 * float(sc)
    assert printed.overlaps(arb(mpmath.nstr(pv, 30)) + arb(0, tol))
    assert var1.overlaps(arb(mpmath.nstr(rv, 30)) + arb(0, tol))
    assert second.overlaps(arb(mpmath.nstr(sc, 30)) + arb(0, tol))
    assert float(printed.rad()) < 1e-25 * float(sc)


def test_eq25_planted_correction_holds_and_widened_ball_is_undecided() -> None:
    """Adding Var(E[X | |w|]) = E_r[m^2] - (E X)^2 (the law of total variance) to the printed side
    gives Var(X) on balls; the printed side is refuted; widened, it decides nothing."""
    p = {"d": 7, "nx": 1.3, "ny": 0.4, "theta": 1.0, "a_re": 0.05}
    printed, var1, second = C._eq25_balls(dict(p), BITS)
    assert certified_equal(printed, var1, 1e-20) == "REFUTED"
    with workprec(BITS):
        em2 = second - printed  # E_r[m(r)^2], the integral
        mean2 = second - var1  # (E X)^2, the Gaussian moments
        assert certified_equal(printed + (em2 - mean2), var1, 1e-20) == "HOLDS"
        assert certified_equal(_widen(printed, printed - var1), var1, 1e-20) is None
        assert em2 > mean2  # Var_r(m(r)) > 0: the term eq (25) misses
    p26 = dict(EQ26_POINT, nx=0.5, ny=0.7, theta=1.0, M=3)
    pb, rb = C._eq26_balls(p26, BITS)
    assert certified_equal(pb, rb, 1e-20) == "REFUTED"
    assert certified_equal(_widen(pb, pb - rb), rb, 1e-20) is None


THM33_POINT = {"d": 43, "nx": 7.038328892169735, "ny": 7.030912121015909, "theta": 3.141592653589793}


def test_thm33_long_root_refutation_is_certified() -> None:
    check = next(r for r in REGISTRY["crt.thm3.3"].readings if r.name == "long root").checks[0]
    ev = check.evaluate(dict(THM33_POINT), BUDGET, 0)
    assert ev.decided and ev.disc > 1
    assert ev.extra["certified"] is True, ev.extra


def test_thm33_certificate_compares_variances_on_balls() -> None:
    """Var at the printed A exceeds Var at the optimiser's A (certified); at the corrected A
    (oprf_a_star, eq 22's root) the variance is not above the optimiser's; the widened comparison is undecided."""
    from rfcheck.arb_backend import to_ball
    from rfcheck.claims._common import eval_on_balls

    a_p = eval_on_balls(lambda ctx, q: (1 - 1 / C.printed_eq7_rho_ctx(ctx, q)) / 8, dict(THM33_POINT), BITS)
    a_ref = R.reference_a_star(dict(THM33_POINT), 30)[0]
    with workprec(BITS):
        st = R.pair_stats_ball(THM33_POINT)
        args = {k: st[k] for k in ("sq_x", "sq_y", "sq_sum", "sq_diff", "d")}

        def logv(a: Any) -> Any:
            return C.cf.gerf_log_variance(**args, a=a, s=1, backend="arb", dps=35)

        a_corr = C.cf.oprf_a_star(st["sq_sum"], st["d"], backend="arb", prec=BITS)
        v_p, v_r, v_c = logv(a_p), logv(to_ball(a_ref)), logv(a_corr)
        assert certified_inequality(v_p, v_r) == "REFUTED"  # Var(printed A) > Var(optimiser's A)
        assert certified_inequality(v_c, v_r) != "REFUTED"  # the corrected A* is (within balls) optimal
        assert certified_inequality(_widen(v_p, v_p - v_r), v_r) is None
    with mpmath.workdps(30):  # the mpmath face of the printed rho is the ledger's printed A
        assert float((1 - 1 / C.printed_eq7_rho(THM33_POINT)) / 8) == pytest.approx(0.12499935280151843, rel=1e-15)


def test_sec51_decided_points_say_why_they_are_not_certified() -> None:
    from rfcheck.claims._common import inequality_check

    check = inequality_check("closed-forms-over-pairs", lambda p, dps: (1.0, 0.0, 1e-3), search=False,
                             not_certified=C._SEC51_NOT_CERTIFIED)
    ev = check.evaluate({"sigma": 1.0}, BUDGET, 0)
    assert ev.decided and ev.disc > 1
    assert ev.extra["certified"] is False and ev.extra["not_certified"].startswith("statistical")
    for cid in ("crt.text-sec5.1-gerf-vs-trigrf-normal", "crt.text-sec5.1-geomrfplus-vs-posrf-heterogen"):
        assert len(REGISTRY[cid].readings) == 2


def test_d1_holding_point_agrees_on_balls() -> None:
    """d = 1, theta = float(pi): the balls use the vectors x = nx, y = ny cos(theta) on both sides, so a
    point where eq (1) holds (PosRF: real features) is not refuted by the ~1e-31 that sin(theta) would add."""
    p = {"d": 1, "nx": 4.0, "ny": 4.0, "theta": 3.141592653589793, "mech": "pos", "s": 1}
    check = next(r for r in REGISTRY["crt.eq1"].readings if r.name == "conjugate").checks[0]
    ev = check.evaluate(dict(p), BUDGET, 0)
    assert ev.decided and ev.disc <= 1
    assert ev.extra["certified"] is True, ev.extra


LAMBDA_STAR_POINTS = [
    {"d": 3, "scale": 0.7, "shift": 0.2, "seed": 11, "dist": "poisson"},
    {"d": 64, "scale": 2.5, "shift": -0.9, "seed": 4242, "dist": "poisson"},
    {"d": 1, "scale": 0.02, "shift": 0.0, "seed": 7, "dist": "poisson"},
]


@pytest.mark.parametrize("p", LAMBDA_STAR_POINTS)
def test_lambda_star_argmin_ball_contains_the_50_digit_minimiser(p: dict[str, Any]) -> None:
    """The ball encloses the minimiser of (11) found by mpmath at 50 digits (the root of the numerical derivative
    of the library's variance, rfcheck.references.crt.poisrf_lambda_star), and the check certifies the point."""
    ball = R.poisrf_lambda_star_ball(*C._dirf_vectors(dict(p)), BITS)
    ref, err = R.poisrf_lambda_star(*C._dirf_vectors(dict(p)), 50)
    with workprec(200):
        assert ball.overlaps(arb(mpmath.nstr(ref, 55), float(err) + 1e-300))
        assert not ball.overlaps(arb(mpmath.nstr(ref * (1 + mpmath.mpf(10) ** -25), 55)))  # a planted value
        assert float(ball.rad()) <= 1e-33 * float(ball.mid())
    ev = REGISTRY["crt.thm3.4.lambda-star"].checks[0].evaluate(dict(p), BUDGET, 0)
    assert ev.decided and ev.extra["certified"] is True, ev.extra


A_STAR_POINTS = [
    {"d": 3, "nx": 0.7, "ny": 1.3, "theta": 0.4},
    {"d": 64, "nx": 5.0, "ny": 5.0, "theta": 0.0},
    {"d": 2, "nx": 1.0, "ny": 1.0, "theta": 3.141592653589793 - 1e-3},
    {"d": 128, "nx": 9.0, "ny": 2.0, "theta": 2.0},
]


@pytest.mark.parametrize("p", A_STAR_POINTS)
def test_gerf_variance_form_behind_the_a_star_ball(p: dict[str, Any]) -> None:
    """The library's variance at real A, s = +1, is e^{u - 2(|x|^2+|y|^2)} e^{f(A)} - K^2 with f(A) = d log(1-4A)
    - (d/2) log(1-8A) + u/(1-8A), u = |x+y|^2 (the form R.gerf_a_star_ball differentiates), at 50 digits."""
    from rfcheck.closed_forms import crt as cf
    from rfcheck.ledger import pair_stats

    with mpmath.workdps(50):
        st = pair_stats(p)
        d, u = st["d"], st["sq_sum"]
        for a in (mpmath.mpf("-2.5"), mpmath.mpf("-0.01"), mpmath.mpf("0.1")):
            f = d * mpmath.log(1 - 4 * a) - mpmath.mpf(d) / 2 * mpmath.log(1 - 8 * a) + u / (1 - 8 * a)
            mine = mpmath.log(mpmath.exp(u - 2 * (st["sq_x"] + st["sq_y"]) + f) - mpmath.exp(-st["sq_diff"]))
            lib = cf.gerf_log_variance(**st, a=a, s=1, backend="mpmath", dps=50)
            assert abs(mine - lib) < mpmath.mpf(10) ** -40 * (1 + abs(lib))


@pytest.mark.parametrize("p", A_STAR_POINTS)
def test_a_star_ball_contains_the_50_digit_minimiser(p: dict[str, Any]) -> None:
    ball = R.gerf_a_star_ball(dict(p), BITS)
    ref, err = R.reference_a_star(dict(p), 50)
    with workprec(200):
        assert ball.overlaps(arb(mpmath.nstr(ref, 55), float(err) + 1e-300))
        assert not ball.overlaps(arb(mpmath.nstr(ref * (1 + mpmath.mpf(10) ** -25), 55)))  # a planted value
        assert float(ball.rad()) <= 1e-33 * abs(float(ball.mid()))
    ev = REGISTRY["crt.eq22"].checks[0].evaluate(dict(p), BUDGET, 0)
    assert ev.decided
    if p["theta"] < 3:
        assert ev.extra["certified"] is True, ev.extra
    else:  # near x = -y the printed (1 - 1/rho)/8 cancels: its ball is wider than the tolerance
        assert ev.extra["not_certified"] == "the balls overlap but are wider than the tolerance"


@pytest.mark.parametrize("p", [{"d": 8, "nx": 0.9, "ny": 0.0, "theta": 0.0},
                               {"d": 64, "nx": 7.0, "ny": 3.0, "theta": 0.0}])
def test_mu_star_ball_contains_the_quadrature_mu(p: dict[str, Any]) -> None:
    """mu at the enclosed minimiser (closed-form variance on balls) contains mu by quadrature at the optimiser's A
    (their difference is second order in the optimiser's error), and a planted value 1e-12 off is excluded."""
    ball = R.gerf_log_variance_ratio_ball(dict(p), BITS)
    mu, err = R.gerf_log_variance_ratio(dict(p), 30)
    with workprec(BITS):
        assert ball.overlaps(arb(mpmath.nstr(mu, 35), float(err) + 1e-28 * abs(float(mu))))
        assert not ball.overlaps(arb(mpmath.nstr(mu * (1 + mpmath.mpf(10) ** -12), 35)))

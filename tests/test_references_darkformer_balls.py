"""Rigorous (Arb) twins of the DARKFormer references and the certification of the darkformer
claims' decided points: each ball contains a 50-digit mpmath value computed another way at
random points, a planted wrong value is disjoint from it, a widened ball never certifies, and
the claims' checks certify through the shared mechanism (exact rationals where the quantity is
rational in the float64 inputs)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import arb, fmpq

import rfcheck.claims.darkformer  # noqa: F401  (registers the claims)
from rfcheck.arb_backend import to_ball, workprec
from rfcheck.certify import certified_equal
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.references import darkformer as ref

BITS = 150
RNG = np.random.default_rng(20261127)


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    with workprec(BITS + 40):
        return bool(ball.contains(to_ball(value)))


def _wrong(value: mpmath.mpf) -> arb:
    """A value planted 1e-20 (relative) off."""
    with workprec(BITS + 40):
        return to_ball(value) * (1 + arb(10) ** -20)


@pytest.mark.parametrize("i", range(5))
def test_prf_kernel_ball_contains_exp_of_the_inner_product(i):
    nx, ny, th = RNG.uniform(0, 6), RNG.uniform(0, 6), RNG.uniform(0, math.pi)
    with mpmath.workdps(50):
        exact = mpmath.exp(mpmath.mpf(nx) * mpmath.mpf(ny) * mpmath.cos(mpmath.mpf(th)))
    b = ref.prf_kernel_ball(nx, ny, th, BITS)
    assert _contains(b, exact)
    assert b.rad() < 1e-38 * abs(b.mid())
    assert not b.overlaps(_wrong(exact))


@pytest.mark.parametrize("bits", [8, 12, 20, 60, 200])
def test_prf_kernel_ball_where_the_squared_norm_ball_straddles_0(bits):
    """x = -y (up to the float pi): |x + y|^2 ~ 1.5e-32, a ball around 0 at low precision; the kernel ball is then
    finite and contains exp(x.y) = exp(-1 + 2 cos^2(pi_f / 2)) (its part >= 0 is used, not a NaN or an error)."""
    with mpmath.workdps(120):
        exact = mpmath.exp(-1 + 2 * mpmath.cos(mpmath.mpf(math.pi) / 2) ** 2)
    b = ref.prf_kernel_ball(1.0, 1.0, math.pi, bits)
    assert b.is_finite() and b.rad() < 2.0 ** (10 - bits)
    with workprec(500):
        assert b.contains(arb(mpmath.nstr(exact, 110)))


@pytest.mark.parametrize("i", range(4))
def test_sigma_prf_kernel_ball_contains_exp_of_the_bilinear_form(i):
    d = int(RNG.integers(1, 4))
    r = int(RNG.integers(1, d + 1))
    m_mat, q, k = RNG.standard_normal((r, d)), RNG.uniform(-1.5, 1.5, d), RNG.uniform(-1.5, 1.5, d)
    with mpmath.workdps(50):
        mm, qm, km = (mpmath.matrix(a.tolist()) for a in (m_mat, q, k))
        exact = mpmath.exp((qm.T * (mm.T * mm) * km)[0])
    b = ref.sigma_prf_kernel_ball(m_mat, q, k, BITS)
    assert _contains(b, exact)
    assert b.rad() < 1e-38 * abs(b.mid())
    assert not b.overlaps(_wrong(exact))


@pytest.mark.parametrize("i", range(4))
def test_optimal_second_moment_ball_matches_the_50_digit_quadrature(i):
    d = int(RNG.integers(1, 5))
    lam = ref.rotated_covariance(list(RNG.uniform(0, 0.499, d)), int(RNG.integers(0, 1000)))
    with mpmath.workdps(50):
        value, err = ref.optimal_second_moment(lam, 50)
    b = ref.optimal_second_moment_ball(lam, BITS)
    assert err < 1e-45 * value
    with workprec(BITS + 40):
        assert b.overlaps(arb(to_ball(value), to_ball(err)))  # quadrature value +- its error bar
    assert b.rad() < 1e-38 * abs(b.mid())
    assert not b.overlaps(_wrong(value))


def test_optimal_second_moment_ball_refuses_a_divergent_lambda():
    with pytest.raises(ValueError, match="diverges"):
        ref.optimal_second_moment_ball(np.diag([0.5, 0.1]), BITS)


@pytest.mark.parametrize("i", range(4))
def test_importance_weighting_sides_balls_contain_exp_sigma_q_k(i):
    s, q, k = math.exp(RNG.uniform(math.log(0.2), math.log(3.0))), RNG.uniform(-1.5, 1.5), RNG.uniform(-1.5, 1.5)
    with mpmath.workdps(50):
        exact = mpmath.exp(mpmath.mpf(s) * mpmath.mpf(q) * mpmath.mpf(k))
    lhs, rhs = ref.importance_weighting_sides_ball(s, q, k, BITS)
    for b in (lhs, rhs):
        assert _contains(b, exact)
        assert b.rad() < 1e-38 * abs(b.mid())
        assert not b.overlaps(_wrong(exact))


def test_a_widened_reference_ball_never_certifies():
    b = ref.prf_kernel_ball(1.25, 0.75, 0.4, BITS)
    with workprec(BITS):
        printed = (arb(1.25) * arb(0.75) * arb(0.4).cos()).exp()
        assert certified_equal(printed, b, 1e-25) == "HOLDS"
        assert certified_equal(printed, b + arb(0, 1e-10), 1e-25) is None


def test_exact_matrix_keeps_float64_values():
    a = np.array([[0.1, -2.5e-300], [1e300, 3.0]])
    e = ref.exact_matrix(a)
    assert all(e[i, j] == fmpq(*float(a[i, j]).as_integer_ratio()) for i in range(2) for j in range(2))
    assert ref.exact_matrix(np.array([1.0, 2.0])).ncols() == 1


# ------------------------------------------------------------------- the claims' checks


def _check(cid: str, name: str):
    return next(ch for ch in REGISTRY[cid].checks if ch.name == name)


@pytest.mark.parametrize("cid, name, point", [
    ("darkformer.lem2.1", "quadrature", {"d": 3, "nx": 5.5, "ny": 4.0, "theta": 0.3}),
    ("darkformer.eq3", "quadrature", {"d": 3, "r": 2, "mscale": 1.7, "nq": 2.0, "nk": 2.4, "draw": 17}),
    ("darkformer.thm3.2", "cauchy-schwarz-equality", {"d": 4, "l1": 0.49, "l2": 0.1, "l3": 0.3, "l4": 0.0,
                                                      "rot": 5}),
    ("darkformer.thm3.2.item1", "mpmath-eigenvalues", {"d": 3, "l1": 0.2, "l2": 0.2, "l3": 0.2, "l4": 0.2, "rot": 1}),
    ("darkformer.thm3.2.item1", "mpmath-eigenvalues", {"d": 3, "l1": 0.2, "l2": 0.1, "l3": 0.2, "l4": 0.2, "rot": 1}),
    ("darkformer.thm3.2.item2", "expected-variance", {"d": 2, "l1": 0.1, "l2": 0.05, "l3": 0.0, "l4": 0.0,
                                                      "rot": 3}),
    ("darkformer.thm3.2.item2", "expected-variance", {"d": 2, "l1": 0.3, "l2": 0.05, "l3": 0.0, "l4": 0.0,
                                                      "rot": 3}),
    ("darkformer.thm3.2.item2", "expected-variance", {"d": 2, "l1": 0.0, "l2": 0.0, "l3": 0.0, "l4": 0.0, "rot": 7}),
    ("darkformer.prop4.1", "quadrature", {"d": 1, "s1": 2.7, "s2": 1.0, "s3": 1.0, "nq": 1.4, "nk": 0.9, "rot": 0}),
    ("darkformer.propc.1", "mpmath-algebra", {"d": 5, "lmin": 1e-5, "scale": 30.0, "draw": 11}),
])
def test_decided_points_of_the_claims_are_certified(cid, name, point):
    ev = _check(cid, name).evaluate(dict(point), BUDGETS["default"], 0)
    assert ev.decided and ev.disc <= 1
    assert ev.extra["certified"] is True, ev.extra


@pytest.mark.parametrize("d, lmin, scale, draw", [(5, 1e-5, 30.0, 11), (6, 1e-6, 100.0, 3), (1, 0.5, 1.0, 2),
                                                 (6, 1.0, 100.0, 0), (6, 1.0, 0.01, 1000)])
def test_propc1_balls_enclose_the_exact_eigendecomposition(d, lmin, scale, draw):
    """Prop C.1's last two identities on a rigorous eigendecomposition of Lambda (not mpmath's): they certify
    the printed tolerance, and a tolerance far below the balls' width (1e-300) is not certified (the residuals
    are enclosures of the exact 0, not a value that happens to be small); lmin = 1 (Lambda = U U^T, eigenvalues
    1 + O(1e-16)) is isolated at a higher precision."""
    import math

    import numpy as np

    from rfcheck.arb_backend import bits_for_dps
    from rfcheck.claims.darkformer import _propc1_ball
    from rfcheck.references import darkformer as dref

    rng = np.random.default_rng([draw, d])
    u = dref.haar_rotation(d, draw)
    lam_eigs = np.exp(rng.uniform(math.log(lmin), 0.0, d))
    m_np = rng.standard_normal((d, d))
    q_np, k_np = rng.standard_normal(d) * scale, rng.standard_normal(d) * scale
    tol = mpmath.mpf(10) ** -25 * (max(lam_eigs) / min(lam_eigs))
    assert _propc1_ball(m_np, q_np, k_np, u, lam_eigs, tol, bits_for_dps(30)) == ("HOLDS", "")
    verdict, why = _propc1_ball(m_np, q_np, k_np, u, lam_eigs, mpmath.mpf(10) ** -300, bits_for_dps(30))
    assert verdict is None and "overlap" in why


def test_item2_certifies_the_infinite_branch_exactly():
    """lambda_max >= 1/6: V(p_I) = +inf, decided by exact positive-definiteness, not by rounding."""
    ev = _check("darkformer.thm3.2.item2", "expected-variance").evaluate(
        {"d": 1, "l1": 0.25, "l2": 0.0, "l3": 0.0, "l4": 0.0, "rot": 0}, BUDGETS["default"], 0)
    assert ev.printed == mpmath.inf and ev.extra["certified"] is True


@pytest.mark.parametrize("cid, name, why", [
    ("darkformer.thm3.2", "numerical-minimisation", "optimiser"),
    ("darkformer.prop4.1", "monte-carlo", "Monte Carlo"),
])
def test_checks_without_an_enclosure_say_why(cid, name, why):
    dom = REGISTRY[cid].domain
    point = {"d": 2, "l1": 0.1, "l2": 0.2, "l3": 0.0, "l4": 0.0, "rot": 3} if cid.endswith("thm3.2") else \
        {"d": 1, "s1": 0.5, "s2": 1.0, "s3": 1.0, "nq": 0.5, "nk": 0.5, "rot": 0}
    assert dom is not None
    ev = _check(cid, name).evaluate(point, BUDGETS["smoke"], 0)
    if ev.decided:
        assert ev.extra["certified"] is False and why in ev.extra["not_certified"]


# ------------------------------------------------------------------ Lemma 3.1 on balls

LEM31_POINTS = [("gauss", 0.2, "normal", 0.3, 2.5, 0.5), ("gauss", 0.45, "student", 0.5, 2.0, 0.3),
                ("discrete", 0.3, "mix", -0.5, 0.5, 0.3), ("discrete", 0.45, "normal", 0.5, 0.8, 0.0),
                ("gauss", 0.2, "mix", 0.2, 1.2, 1.0), ("discrete", 0.45, "student", -1.0, 0.3, 0.0)]


@pytest.mark.parametrize("args", LEM31_POINTS)
def test_lemma31_balls_contain_the_50_digit_quadratures(args):
    with mpmath.workdps(50):
        lhs, rhs, err = ref.lemma31_variances(*args, 50)
    assert err < 1e-40
    b_lhs, b_rhs = ref.lemma31_variances_ball(*args, BITS)
    for b, v in ((b_lhs, lhs), (b_rhs, rhs)):
        with workprec(BITS + 40):
            assert b.overlaps(arb(to_ball(v), 1e-40))
        assert b.rad() < 1e-35 * max(1, abs(float(b.mid())))
        assert not b.overlaps(_wrong(v))


def test_lemma31_ball_infinite_branch_is_exact():
    lhs, rhs = ref.lemma31_variances_ball("gauss", 0.2, "normal", 0.0, 1.0, 0.5, 64)
    assert lhs.is_finite() and not rhs.is_finite() and rhs > 0
    _, rhs_mix = ref.lemma31_variances_ball("gauss", 0.45, "mix", 1.0, 0.3, 1.0, 64)  # eps = 1: the normal
    assert not rhs_mix.is_finite()


def test_real_line_integral_ball_needs_gaussian_decay():
    b = ref.real_line_integral_ball(lambda w, analytic: (-(w * w) / 2 + w).exp(), growth=(1.0, 0, 0.5, 1.0), bits=100)
    with workprec(120):
        assert b.overlaps((2 * arb.pi()).sqrt() * arb(0.5).exp()) and b.rad() < 1e-28
    with pytest.raises(ValueError, match="decay"):
        ref.real_line_integral_ball(lambda w, analytic: w, growth=(1.0, 0, 0.0, 1.0), bits=64)


@pytest.mark.parametrize("point", [
    {"dist": "gauss", "a": 0.45, "alt": "student", "mu": 0.5, "s": 2.0, "eps": 0.3},
    {"dist": "discrete", "a": 0.3, "alt": "mix", "mu": -0.5, "s": 0.5, "eps": 0.3},
    {"dist": "gauss", "a": 0.45, "alt": "mix", "mu": 1.0, "s": 3.0, "eps": 0.0},
])
def test_lemma31_points_are_certified(point):
    ev = _check("darkformer.lem3.1", "quadrature").evaluate(dict(point), BUDGETS["default"], 0)
    assert ev.decided and ev.disc <= 1 and ev.extra["certified"] is True

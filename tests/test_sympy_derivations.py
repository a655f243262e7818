"""Symbolic re-derivations (sympy) of the CRT closed forms, tied to the library's faces.

The Gaussian integrals behind CRT Thm 3.1-3.3 (appendix 9.2-9.4) are done by sympy from
the definition ``E exp(alpha w^2 + beta w)``, ``w ~ N(0, 1)``; the d-dimensional
expectations are products of 1-D ones with ``u = x + s y`` along the first axis.  The
results are compared with the library's *symbolic* faces (``.symbolic``) -- exactly where
sympy can decide the identity, and at exact rational points (evaluated to 50 digits)
where the library's face is piecewise.

Positivity conditions are encoded in the symbols: ``a = 1 - 4A > 0``, ``c = 1 - 8A > 0``.
"""

from __future__ import annotations

import functools

import mpmath
import pytest
import sympy as sp

from rfcheck.backends import SYM
from rfcheck.closed_forms import crt

W = sp.Symbol("w", real=True)
ALPHA = sp.Symbol("alpha", real=True)
BETA = sp.Symbol("beta")  # complex: B |u| is imaginary for s = -1
X, Y = sp.symbols("X Y", positive=True)  # |x|^2, |y|^2
P = sp.Symbol("P", real=True)  # x . y
D = sp.Symbol("d", positive=True, integer=True)
NU = sp.Symbol("n_u", positive=True)  # |x + s y|
U = sp.Symbol("u", positive=True)  # |x + y|^2
A_POS = sp.Symbol("a", positive=True)  # 1 - 4A > 0 (Thm 3.1)
C_POS = sp.Symbol("c", positive=True)  # 1 - 8A > 0 (Thm 3.2)
SQ_SUM, SQ_DIFF = X + Y + 2 * P, X + Y - 2 * P
K2 = sp.exp(-SQ_DIFF)  # K(x, y)^2

DIGITS = 40  # agreement required between the symbolic and the mpmath faces


def _mp(v: sp.Rational) -> mpmath.mpf:
    with mpmath.workdps(80):
        return mpmath.mpf(v.p) / v.q


@functools.cache
def gaussian_moment() -> sp.Expr:
    """``E exp(alpha w^2 + beta w)`` for ``w ~ N(0, 1)``, integrated by sympy.

    ``conds="none"``: the result is valid for ``1 - 2 alpha > 0``, which every use below
    guarantees through the positive symbols ``a`` and ``c``.
    """
    integrand = sp.exp(-(W**2) / 2 + ALPHA * W**2 + BETA * W)
    return sp.integrate(integrand, (W, -sp.oo, sp.oo), conds="none") / sp.sqrt(2 * sp.pi)


@functools.cache
def _moment_in_beta(alpha: sp.Expr) -> sp.Expr:
    # simplify while beta is a symbol: the raw result divides by beta (erf terms)
    return sp.simplify(gaussian_moment().subs(ALPHA, alpha))


def moment(alpha: sp.Expr, beta: sp.Expr) -> sp.Expr:
    """``E exp(alpha w^2 + beta w)`` with the positivity of ``1 - 2 alpha`` in the symbols."""
    return _moment_in_beta(alpha).subs(BETA, beta)


def test_one_dimensional_moment_is_the_gaussian_integral():
    """Sanity of the building block: the erf terms cancel and eq (17) (d = 1) results."""
    m = moment((1 - A_POS) / 2, BETA)  # alpha = 2A with a = 1 - 4A
    assert sp.simplify(m - sp.exp(BETA**2 / (2 * A_POS)) / sp.sqrt(A_POS)) == 0
    # and numerically against mpmath quadrature at one point (guards the derivation itself)
    val = m.subs({A_POS: sp.Rational(3, 2), BETA: sp.Rational(1, 3)})
    with mpmath.workdps(30):
        ref = mpmath.quad(
            lambda t: mpmath.exp(-t * t / 2 - t * t / 4 + t / 3), [-mpmath.inf, mpmath.inf]
        ) / mpmath.sqrt(2 * mpmath.pi)
        assert abs(mpmath.mpf(str(sp.N(val, 40))) - ref) < mpmath.mpf(10) ** -25


# ----------------------------------------------------------- (a) Thm 3.1: E f1 f2 = K


@pytest.mark.parametrize("s", [1, -1])
def test_gerf_expectation_is_the_gaussian_kernel(s):
    """CRT eq (16) with (5): ``E f1(w, x) f2(w, y) = exp(-|x - y|^2 / 2)`` for real A."""
    a_real = (1 - A_POS) / 4  # A, with 1 - 4A = a > 0
    b = sp.sqrt(s * A_POS)  # B = sqrt(s (1 - 4A)), principal root (imaginary for s = -1)
    c = -sp.Rational(s + 1, 2)  # C = -(s + 1)/2
    d2 = A_POS ** (D / 2)  # D^2 = (fourth_root(1 - 4A))^(2d)
    # u = x + s y along e1: first coordinate carries B|u|, the other d - 1 only A
    e = (
        d2
        * sp.exp(c * (X + Y))
        * moment(2 * a_real, b * NU)
        * moment(2 * a_real, 0) ** (D - 1)
    )
    e = e.subs(NU, sp.sqrt(X + Y + 2 * s * P))  # |x + s y|^2 = |x|^2 + |y|^2 + 2 s x.y
    assert sp.simplify(e / sp.exp(-SQ_DIFF / 2)) == 1
    # power test: a wrong C (the PosRF value for s = -1, or 0 for s = +1) is caught
    wrong = e * sp.exp((-1 - c) * (X + Y)) if s == -1 else e * sp.exp(-c * (X + Y))
    assert sp.simplify(wrong / sp.exp(-SQ_DIFF / 2)) != 1


# --------------------------------------------------- (b) Thm 3.2: variance, real A, s = +1


@functools.cache
def second_moment_real_a() -> sp.Expr:
    """``E[(f1 f2)^2]`` for real ``A = (1 - c)/8`` and ``s = +1``, from the Gaussian integral.

    ``(f1 f2)^2 = D^4 exp(4A|w|^2 + 2B w.u + 2C(|x|^2 + |y|^2))`` (appendix 9.3, eq 19-20).
    """
    a_real = (1 - C_POS) / 8
    one4a = 1 - 4 * a_real
    b = sp.sqrt(one4a)
    e2 = (
        one4a**D
        * sp.exp(-2 * (X + Y))
        * moment(4 * a_real, 2 * b * NU)
        * moment(4 * a_real, 0) ** (D - 1)
    )
    return e2.subs(NU, sp.sqrt(SQ_SUM))


def test_variance_exponent_matches_the_library():
    """``E[X^2] - K^2 = K^2 (exp(z) - 1)`` with ``z`` from the library's symbolic face."""
    a_real = (1 - C_POS) / 8
    z1, z2 = crt._gerf_terms(SYM, X, Y, SQ_SUM, SQ_DIFF, D, a_real, sp.Integer(1))
    e2 = second_moment_real_a()
    diff = sp.expand_log(sp.log(e2 / K2), force=True) - z1
    assert sp.simplify(sp.factor(diff, deep=True)) == 0
    # for real A both exponents of eq (19) coincide (alpha_1 = alpha_3, alpha_2 = alpha_4)
    assert sp.simplify(z1 - z2) == 0
    # power test: an exponent off by |x + y|^2 / (2(1 - 8A)) is told apart
    wrong = sp.expand_log(sp.log(e2 / K2), force=True) - (z1 - SQ_SUM / (2 * C_POS))
    assert sp.simplify(sp.factor(wrong, deep=True)) != 0


RATIONAL_POINTS = [
    # (|x|^2, |y|^2, x.y, d, c = 1 - 8A)
    (sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 7), 1, sp.Rational(3, 2)),
    (sp.Rational(5, 4), sp.Rational(2, 3), sp.Rational(-1, 5), 3, sp.Rational(1, 3)),
    (sp.Rational(2), sp.Rational(3), sp.Rational(2), 64, sp.Rational(7, 4)),
    # x close to -y: |x + y|^2 = 2e-6
    (sp.Rational(1, 10), sp.Rational(1, 10), sp.Rational(-99999, 10**6), 8, sp.Integer(2)),
    # m > 600: the library's face takes its large-exponent branch here
    (sp.Rational(200), sp.Rational(190), sp.Rational(190), 5, sp.Rational(1, 2)),
]


@pytest.mark.parametrize(("x2", "y2", "xy", "d", "c"), RATIONAL_POINTS)
def test_log_variance_face_at_rational_points(x2, y2, xy, d, c):
    """The whole symbolic face (piecewise) equals log(E[X^2] - K^2) to 40+ digits."""
    a_real = (1 - c) / 8
    face = crt._gerf_log_variance.symbolic(
        x2, y2, x2 + y2 + 2 * xy, x2 + y2 - 2 * xy, sp.Integer(d), a_real, sp.Integer(1)
    )
    subs = {X: x2, Y: y2, P: xy, D: d, C_POS: c}
    derived = sp.log(second_moment_real_a().subs(subs) - K2.subs(subs))
    f, r = sp.N(face, 60), sp.N(derived, 60)
    assert abs(f - r) <= sp.Float(10) ** -DIGITS * max(1, abs(r)), (f, r)
    # and the mpmath face (a separate code path through the same definition) agrees
    mp = crt.gerf_log_variance(
        *[_mp(v) for v in (x2, y2, x2 + y2 + 2 * xy, x2 + y2 - 2 * xy)],
        d, _mp(a_real), 1, backend="mpmath", dps=50,
    )
    with mpmath.workdps(60):
        ref = mpmath.mpf(str(r))
        # the inputs were rounded to 50 digits; the log-variance has condition <= ~1e3 here
        assert abs(mp - ref) <= mpmath.mpf(10) ** -DIGITS * max(1, abs(ref)), (mp, ref)


# --------------------------------------------------------------- (c) Thm 3.3: rho*

RHO = sp.Symbol("rho", positive=True)


def g_of_rho() -> sp.Expr:
    return D * sp.log(RHO + 1) - D / 2 * sp.log(RHO) + RHO * U


def test_g_is_the_log_second_moment_in_rho():
    """log E[X^2] at ``A = (1 - 1/rho)/8`` is ``g(rho)`` plus terms free of rho (app. 9.4)."""
    log_e2 = sp.expand_log(sp.log(second_moment_real_a()), force=True)
    log_e2 = log_e2.subs(P, (U - X - Y) / 2).subs(C_POS, 1 / RHO)  # 1 - 8A = 1/rho
    rest = sp.simplify(sp.expand_log(log_e2 - g_of_rho(), force=True))
    assert sp.diff(rest, RHO) == 0
    assert sp.simplify(rest - (-D * sp.log(2) + U - 2 * (X + Y))) == 0


def test_rho_star_is_the_unique_positive_stationary_point():
    r = sp.Symbol("r")  # no sign assumption, so that solve returns both roots
    gp = sp.diff(g_of_rho(), RHO).subs(RHO, r)
    roots = sp.solve(gp, r)
    assert len(roots) == 2
    # Vieta: the product of the roots of 2u r^2 + (2u + d) r - d is -d/(2u) < 0, so
    # exactly one root is positive for u > 0, d > 0
    assert sp.simplify(roots[0] * roots[1] + D / (2 * U)) == 0
    assert sp.simplify(roots[0] * roots[1]).is_negative
    negative = [x for x in roots if x.is_negative]
    assert len(negative) == 1
    (positive,) = [x for x in roots if x is not negative[0]]
    lib = crt.oprf_rho_star.symbolic(U, D)
    assert sp.simplify(positive - lib) == 0
    assert sp.simplify(gp.subs(r, lib)) == 0


def test_rho_star_is_a_minimum():
    """``g'' > 0`` at rho*: with ``rho = 1/(1 + q)``, ``q = -8A* >= 0`` (rho* in (0, 1])."""
    q = sp.Symbol("q", nonnegative=True)
    g2 = sp.simplify(sp.diff(g_of_rho(), RHO, 2).subs(RHO, 1 / (1 + q)))
    assert g2.is_positive
    q_star = -8 * crt.oprf_a_star.symbolic(U, D)
    assert q_star.is_nonnegative
    assert sp.simplify(1 / (1 + q_star) - crt.oprf_rho_star.symbolic(U, D)) == 0
    # and, directly, g'(rho*) changes sign from - to + (a minimum, not a maximum)
    gp = sp.diff(g_of_rho(), RHO)
    for uv, dv in [(sp.Rational(1, 3), 2), (sp.Rational(7), 64)]:
        rs = crt.oprf_rho_star.symbolic(uv, sp.Integer(dv))
        sub = {U: uv, D: dv}
        assert sp.N(gp.subs(sub).subs(RHO, rs * sp.Rational(99, 100)), 30) < 0
        assert sp.N(gp.subs(sub).subs(RHO, rs * sp.Rational(101, 100)), 30) > 0


# ---------------------------------------------------- (d) symbolic faces vs mpmath faces


EXACT_U = [sp.Rational(1, 3), sp.Rational(10, 7), sp.Rational(1, 10**9), sp.Rational(12345, 2)]
EXACT_D = [1, 3, 64, 1024]


@pytest.mark.parametrize(
    ("fn", "relative"),
    [
        (crt.oprf_rho_star, True),
        (crt.oprf_a_star, True),
        # a log of a ratio of variances: an absolute error on it is a relative one on the
        # ratio (near u = 0, mu ~ -u/d is a difference of two logs of size |log u|)
        (crt.oprf_log_variance_ratio, False),
        (crt.orf_log_covariance_factor, True),  # log(1 + G) ~ G: G itself to 40 digits
    ],
    ids=lambda f: getattr(f, "__name__", ""),
)
def test_symbolic_face_agrees_with_mpmath_face(fn, relative):
    u_sym, d_sym = sp.Symbol("u", positive=True), sp.Symbol("d", positive=True, integer=True)
    expr = fn.symbolic(u_sym, d_sym)
    assert isinstance(expr, sp.Expr)
    assert expr.free_symbols == {u_sym, d_sym}
    for uv in EXACT_U:
        for dv in EXACT_D:
            if fn is crt.orf_log_covariance_factor and dv == 1:
                continue  # an orthogonal pair needs d >= 2
            sym = sp.N(expr.subs({u_sym: uv, d_sym: dv}), 60)
            mp = fn(_mp(uv), dv, backend="mpmath", dps=50)
            with mpmath.workdps(60):
                ref = mpmath.mpf(str(sym))
                scale = abs(ref) if relative else max(1, abs(ref))
                assert abs(mp - ref) <= mpmath.mpf(10) ** -DIGITS * scale, (fn, uv, dv, mp, ref)


def test_rho_star_symbolic_at_exact_rationals_is_exact():
    """At ``u = 3/2, d = 2`` eq (22) has the rational root 1/3, and the face gives it exactly."""
    # 2u rho^2 + (2u + d) rho - d = 3 rho^2 + 5 rho - 2 = (3 rho - 1)(rho + 2)
    val = crt.oprf_rho_star.symbolic(sp.Rational(3, 2), sp.Integer(2))
    assert sp.nsimplify(sp.simplify(val)) == sp.Rational(1, 3)
    assert sp.simplify(val - sp.Rational(1, 3)) == 0


def test_log_expm1_symbolic_face():
    t = sp.Symbol("t", positive=True)
    expr = crt.log_expm1.symbolic(t)
    assert sp.simplify(sp.exp(expr) - (sp.exp(t) - 1)) == 0

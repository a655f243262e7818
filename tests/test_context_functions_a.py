"""The context functions ``i0``, ``rf`` and ``fac2`` on every face (float64, mpmath, sympy, Arb),
against mpmath at 50 digits, and the printed transcriptions written with them (CRT eq (13), eq (32)
middle member) on balls."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy
from flint import arb

from rfcheck.arb_backend import ARB, workprec
from rfcheck.backends import FP, MP, SYM
from rfcheck.certify import certified_equal
from rfcheck.claims import crt as C
from rfcheck.claims._common import eval_on_balls, mp_point, on_mp

DPS = 50
BITS = 200

I0_ARGS = [0.0, 1e-8, 0.75, 3.5, 40.0, -2.25]
RF_ARGS = [(0.5, 0), (1.5, 3), (16.0, 7), (2.25, 12), (-0.5, 4)]
FAC2_ARGS = [-1, 0, 1, 2, 7, 10, 41]


def _want_i0(x: float) -> mpmath.mpf:
    with mpmath.workdps(DPS):
        return mpmath.besseli(0, mpmath.mpf(x))


def _want_rf(x: float, n: int) -> mpmath.mpf:
    """``(x)_n = x (x + 1) ... (x + n - 1)`` by its definition."""
    with mpmath.workdps(DPS):
        return mpmath.fprod(mpmath.mpf(x) + k for k in range(n))


def _sym_close(expr: sympy.Expr, want: mpmath.mpf) -> bool:
    with mpmath.workdps(DPS):
        return abs(mpmath.mpf(str(sympy.N(expr, DPS + 5))) - want) <= mpmath.mpf(10) ** -(DPS - 5) * abs(want)


def _want_fac2(n: int) -> int:
    return math.prod(range(n, 0, -2))


def _contains(ball: object, want: mpmath.mpf) -> bool:
    """The ball overlaps the 50-digit value with its last-digit rounding (``want`` enclosed up to 10^-48)."""
    with workprec(BITS + 100):
        w = arb(mpmath.nstr(want, DPS)) if want else arb(0)
        return bool(ball.v.overlaps(w + arb(0, 1e-48 * abs(float(want)))))  # type: ignore[attr-defined]


@pytest.mark.parametrize("x", I0_ARGS)
def test_i0_every_face(x: float) -> None:
    want = _want_i0(x)
    assert abs(FP.i0(x) - float(want)) <= 4e-16 * float(want)
    with mpmath.workdps(DPS):
        assert abs(MP.i0(mpmath.mpf(x)) - want) <= mpmath.mpf(10) ** -(DPS - 2) * want
    assert _sym_close(SYM.i0(SYM.num(x)), want)
    with workprec(BITS):
        ball = ARB.i0(ARB.num(x))
    assert _contains(ball, want) and float(ball.v.rad()) <= 1e-45 * float(want)
    assert np.allclose(FP.i0(np.array(I0_ARGS)), [float(_want_i0(v)) for v in I0_ARGS], rtol=4e-16, atol=0)


def test_i0_is_i0e_times_exp() -> None:
    """The two Bessel faces agree: ``I_0(x) = i0e(x) e^{|x|}`` (float64 and mpmath)."""
    for x in I0_ARGS:
        assert math.isclose(FP.i0(x), FP.i0e(x) * math.exp(abs(x)), rel_tol=1e-15)
        with mpmath.workdps(DPS):
            v = mpmath.mpf(x)
            assert abs(MP.i0(v) - MP.i0e(v) * mpmath.exp(abs(v))) <= mpmath.mpf(10) ** -(DPS - 2) * MP.i0(v)


@pytest.mark.parametrize("x,n", RF_ARGS)
def test_rf_every_face(x: float, n: int) -> None:
    want = _want_rf(x, n)
    assert math.isclose(FP.rf(x, n), float(want), rel_tol=1e-14)
    with mpmath.workdps(DPS):
        assert abs(MP.rf(mpmath.mpf(x), n) - want) <= mpmath.mpf(10) ** -(DPS - 2) * abs(want)
    assert _sym_close(SYM.rf(SYM.num(x), n), want)
    with workprec(BITS):
        ball = ARB.rf(ARB.num(x), n)
    assert _contains(ball, want)


@pytest.mark.parametrize("n", FAC2_ARGS)
def test_fac2_every_face(n: int) -> None:
    want = _want_fac2(n)
    assert FP.fac2(n) == float(want)  # the exact integer, rounded once
    with mpmath.workdps(DPS):
        assert MP.fac2(n) == want
    assert SYM.fac2(n) == want
    with workprec(BITS):
        ball = ARB.fac2(n)
        assert ball.v.is_exact() and ball.v == arb(want)
        assert ARB.fac2(ARB.num(n)).v == arb(want)  # an exact integer ball is accepted
    assert list(FP.fac2(np.array(FAC2_ARGS))) == [float(_want_fac2(k)) for k in FAC2_ARGS]


def test_fac2_refuses_what_it_does_not_define() -> None:
    """Integers ``n >= -1`` only (``mpmath.fac2`` extends to other ``n``; the faces do not guess)."""
    with workprec(BITS), pytest.raises(TypeError):
        ARB.fac2(ARB.num(2.5))
    with workprec(BITS), pytest.raises(ValueError):
        ARB.fac2(-3)
    for bad in (-3, 2.5, [1, -2]):
        with pytest.raises(ValueError):
            FP.fac2(bad)


def test_fac2_of_odd_numbers_is_the_gaussian_moment() -> None:
    """``(2t - 1)!! = E r^{2t}``, ``r ~ N(0, 1)`` (the use in CRT eq (32)): ``2^t Gamma(t + 1/2) / sqrt(pi)``."""
    with mpmath.workdps(DPS):
        for t in range(1, 30):
            moment = 2**t * mpmath.gamma(t + mpmath.mpf(1) / 2) / mpmath.sqrt(mpmath.pi)
            assert MP.fac2(2 * t - 1) == mpmath.nint(moment)


EQ13_POINT = {"d": 3, "scale": 0.8, "shift": 0.1, "seed": 11, "dist": "geometric", "p": 0.35}


def test_printed_eq13_ball_contains_its_mpmath_face_and_matches_the_reference() -> None:
    """CRT eq (13) written once: the Arb face encloses the 50-digit mpmath face, and the balls
    certify the equality with the exact-series reference (Thm 3.5 holds)."""
    p = dict(EQ13_POINT)
    with mpmath.workdps(DPS):
        mp_val = C.printed_eq13_ctx(MP, mp_point(p))
        assert on_mp(C.printed_eq13_ctx)(p) == mp_val
        ref, err = C._dirf_var_ref(p, DPS)
        assert abs(mp_val - ref) <= mpmath.mpf(10) ** -(DPS - 5) * abs(ref) + err
    ball = eval_on_balls(C.printed_eq13_ctx, p, BITS)
    assert ball.overlaps(arb(mpmath.nstr(mp_val, DPS)))
    assert float(ball.rad()) < 1e-40 * abs(float(mp_val))
    assert certified_equal(ball, C._dirf_var_ball(p, BITS), 1e-30) == "HOLDS"


def test_printed_eq32_middle_ball_contains_its_mpmath_face() -> None:
    """CRT eq (32), middle member, written once: the ball (series tail enclosed by the ratio bound)
    overlaps the 50-digit mpmath face and is narrow."""
    p = C._orf_domain_derive({"d": 6, "nx": 0.9, "ny": 1.2, "theta": 1.1, "a_re": -0.4, "M": 3,
                              "rho1": 0.8, "rho2": 1.3, "rho3": 1.0, "rho4": 1.0})
    with mpmath.workdps(DPS):
        mp_val = on_mp(C.printed_eq32_middle_ctx)(p)
    ball = eval_on_balls(C.printed_eq32_middle_ctx, p, BITS)
    assert ball.overlaps(arb(mpmath.nstr(mp_val, DPS)))
    assert float(ball.rad()) < 1e-45 * abs(float(mp_val))


FDOT_ARGS = [([1e16, 1.0, -1e16], [1.0, 1.0, 1.0]), ([0.1, 0.2, 0.3], [0.7, -0.9, 1.1]),
             ([2.5, -1.25e-8, 3.0e5], [1e-3, 4.0, 7.0])]


@pytest.mark.parametrize("xs,ys", FDOT_ARGS)
def test_fdot_every_face(xs: list[float], ys: list[float]) -> None:
    """The dot product of exact floats: float64 to the last bit (exact split products, compensated sum,
    also where the sum cancels), mpmath exactly as mpmath's matrix product, sympy exact, the ball containing it."""
    with mpmath.workdps(DPS):
        want = mpmath.fsum(mpmath.mpf(x) * mpmath.mpf(y) for x, y in zip(xs, ys, strict=True))
        assert FP.fdot(xs, ys) == float(want)
        got = MP.fdot([mpmath.mpf(x) for x in xs], [mpmath.mpf(y) for y in ys])
        assert got == (mpmath.matrix([xs]) * mpmath.matrix(ys))[0, 0]
        assert abs(got - want) <= mpmath.mpf(10) ** -(DPS - 2) * abs(want)
    exact = SYM.fdot([SYM.num(x) for x in xs], [SYM.num(y) for y in ys])
    assert exact == sum((sympy.Rational(x) * sympy.Rational(y) for x, y in zip(xs, ys, strict=True)), sympy.S(0))
    with workprec(BITS):
        ball = ARB.fdot([ARB.num(x) for x in xs], [ARB.num(y) for y in ys])
    assert _contains(ball, want)


def test_printed_eq3_faces_agree() -> None:
    """DARKFormer eq (3) written once: its mpmath face equals exp of the mpmath matrix product
    ``q^T (M^T M) k`` bit for bit, and its ball contains the exp of the exact rational exponent."""
    from rfcheck.claims import darkformer as D
    from rfcheck.references import darkformer as R

    p = {"d": 3, "r": 2, "mscale": 1.3, "nq": 2.1, "nk": 0.7, "draw": 17}
    mm, q, k = D._eq3_parts(p)
    with mpmath.workdps(DPS):
        qm, km, m = (mpmath.matrix(a.tolist()) for a in (q, k, mm))
        want = mpmath.exp((qm.transpose() * (m.transpose() * m) * km)[0, 0])
        assert D.printed_eq3(MP, mp_point(p)) == want
    x = (R.exact_matrix(q).transpose() * (R.exact_matrix(mm).transpose() * R.exact_matrix(mm))
         * R.exact_matrix(k))[0, 0]
    ball = eval_on_balls(D.printed_eq3, p, BITS)
    with workprec(BITS):
        assert ball.contains((arb(x.p) / arb(x.q)).exp().mid()) and float(ball.rad()) < 1e-50 * float(want)

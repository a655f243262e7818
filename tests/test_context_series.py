"""``ctx.series``: one transcription of a printed series on the float64, mpmath, sympy and Arb
contexts (the Arb face encloses the tail with a ratio bound)."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy
from flint import arb
from hypothesis import given, settings
from hypothesis import strategies as st

from rfcheck.arb_backend import ARB, UndecidableError, to_ball, workprec
from rfcheck.backends import FP, MP, SYM


def _bessel_i0_term(ctx, x):
    """``I_0(x) = sum_k (x^2/4)^k / k!^2`` (DLMF 10.25.2)."""
    return lambda k: (x * x / 4) ** k / ctx.gamma(k + 1) ** 2


def _bessel_i0_ratio(x):
    # t_{j+1}/t_j = x^2 / (4 (j+1)^2), non-increasing in j
    return lambda k: ARB.num(x) ** 2 / (4 * (k + 1) ** 2)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.0, 30.0))
def test_every_face_sums_the_same_series(x):
    exact = mpmath.besseli(0, mpmath.mpf(x), maxterms=10**6)
    with mpmath.workdps(50):
        ref = mpmath.besseli(0, mpmath.mpf(x))
        mp_val = MP.series(_bessel_i0_term(MP, mpmath.mpf(x)))
        assert abs(mp_val - ref) <= mpmath.mpf(10) ** -48 * ref
    assert math.isclose(FP.series(_bessel_i0_term(FP, x)), float(exact), rel_tol=1e-13)
    with workprec(200):
        ball = ARB.series(_bessel_i0_term(ARB, ARB.num(x)), _bessel_i0_ratio(x))
    with mpmath.workdps(70):
        assert _encloses(ball.v, mpmath.besseli(0, mpmath.mpf(x)), mpmath.mpf(10) ** -65)
    assert float(ball.v.rad()) <= 1e-50 * float(ball.v.mid())


def _encloses(ball, value, err):
    """``value`` (an mpmath number with absolute error <= ``err``) is within the ball."""
    with workprec(300):
        lo, hi = to_ball(value) - to_ball(err), to_ball(value) + to_ball(err)
        return bool(ball.overlaps(arb.union(lo, hi)))


def test_ball_contains_the_exact_sum_and_is_tight():
    with workprec(120):
        e = ARB.series(lambda k: 1 / ARB.gamma(k + 1), lambda k: ARB.num(1) / (k + 1))
    with workprec(400):
        assert e.v.contains(arb(1).exp())
        assert float(e.v.rad()) < 2.0**-100


def test_a_missing_ratio_bound_is_refused_on_balls():
    with pytest.raises(NotImplementedError, match="ratio_bound"):
        ARB.series(lambda k: ARB.num(1) / ARB.gamma(k + 1))


def test_tail_term_dropped_would_be_caught():
    # a series whose terms stop decreasing only late: the ball must still contain the sum
    # (sum_k 20^k / k! = e^20), and the stopping rule must not end it before the peak
    with workprec(100):
        s = ARB.series(lambda k: ARB.num(20) ** k / ARB.gamma(k + 1), lambda k: ARB.num(20) / (k + 1))
    with workprec(400):
        assert s.v.contains(arb(20).exp())


def test_complex_terms_on_balls():
    z = complex(1.5, -2.0)
    with workprec(100):
        s = ARB.series(lambda k: ARB.num(z) ** k / ARB.gamma(k + 1), lambda k: ARB.num(abs(z)) / (k + 1))
    with mpmath.workdps(60):
        ref = mpmath.exp(mpmath.mpc(z))
        err = mpmath.mpf(10) ** -55
        assert _encloses(s.v.real, ref.real, err) and _encloses(s.v.imag, ref.imag, err)
    assert float(s.v.real.rad()) < 1e-25 and float(s.v.imag.rad()) < 1e-25


def test_sympy_face_is_an_unevaluated_sum():
    x = sympy.Symbol("x", positive=True)
    s = SYM.series(_bessel_i0_term(SYM, x))
    assert isinstance(s, sympy.Sum)
    assert sympy.simplify(s.doit() - sympy.besseli(0, x)) == 0


def test_mpmath_face_matches_the_reference_series_bit_for_bit():
    from rfcheck.references.simrf import series

    with mpmath.workdps(40):
        v = mpmath.mpf("3.7")
        a = series(lambda k: v ** (2 * k) / (2**k * mpmath.factorial(k)))
        b = MP.series(lambda k: v ** (2 * k) / (2**k * mpmath.factorial(k)))
    assert a == b


def test_undecidable_is_a_value_error():
    assert issubclass(UndecidableError, ValueError)

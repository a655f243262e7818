"""Exact bit-level conversions of :mod:`rfcheck.engine.bits` against Python's exact arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from rfcheck.engine import bits, montecarlo


@given(st.integers(0, 2**52 - 1))
def test_u52_to_f64_is_exact(j):
    assert bits.u52_to_f64(np.uint64(j)) == float(j)


@given(st.integers(0, 2**53 - 1))
def test_u53_to_f64_is_exact(j):
    assert bits.u53_to_f64(np.uint64(j)) == float(j)


@pytest.mark.parametrize("j", [0, 1, 2**26 + 1, 2**52 - 2, 2**52 - 1])
def test_u5x_to_f64_edges(j):
    assert bits.u52_to_f64(np.uint64(j)) == float(j)
    assert bits.u53_to_f64(np.uint64(2 * j + 1)) == float(2 * j + 1)


def test_pow2_every_exponent():
    """All 2046 normal powers of two, both domain ends included."""
    for k in range(-1022, 1024):
        assert bits.pow2(float(k)) == math.ldexp(1.0, k), k


@njit
def _cast_both(x):
    u = bits.f64_bits(x)
    return u, bits.as_f64(u)


@given(st.floats(allow_nan=False))
def test_bit_casts_round_trip(x):
    u, y = _cast_both(x)
    assert int(u) == int(np.float64(x).view(np.uint64))
    assert y == x and math.copysign(1.0, y) == math.copysign(1.0, x)


@given(st.floats(-708.0, 709.0))
def test_exp_fast_agrees_with_its_twin_and_libm(x):
    """The vectorised exp (2^k from bits since 2026-11-25) against its plain-Python twin (bit
    for bit) and libm's exp (<= 1 ulp)."""
    out = np.empty(1)
    montecarlo.exp_into(np.array([x]), out)
    assert out[0] == montecarlo._py_exp(x)
    assert abs(out[0] - math.exp(x)) <= math.ulp(math.exp(x))


def test_exp_into_edges_of_the_fast_range():
    x = np.array([-708.0, -707.9999, 0.0, 708.9999, 709.0, -745.0, 710.0, -np.inf, np.inf])
    out = np.empty(x.size)
    montecarlo.exp_into(x, out)
    want = [montecarlo._py_exp(v) for v in x]
    assert np.array_equal(out, want)
    for i in (0, 4):
        assert abs(out[i] - math.exp(x[i])) <= math.ulp(math.exp(x[i]))


# ----------------------------------------------------------------------------- fused multiply-add
@njit
def _fma(a, b, c):
    return bits.fma(a, b, c)


@njit
def _fma_loop(a, b, c, out):
    for i in range(out.shape[0]):  # the vectorised form of the kernels' sweeps
        out[i] = bits.fma(a[i], b[i], c[i])


def _same(x, y):
    return (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))


def _exact_fma(a, b, c):
    """The fma by the definition: the exact value, rounded to nearest-even once."""
    from fractions import Fraction
    return float(Fraction(a) * Fraction(b) + Fraction(c))


_finite = st.floats(allow_nan=False, allow_infinity=False)


@given(_finite, _finite, _finite)
def test_fma_is_the_exact_value_rounded_once(a, b, c):
    """Numba's fma, its Python twin and the definition agree bit for bit (products that
    overflow before rounding included)."""
    got = _fma(a, b, c)
    assert _same(got, bits.py_fma(a, b, c))
    try:
        want = _exact_fma(a, b, c)
    except OverflowError:
        assert math.isinf(got)
        return
    if want == 0:
        return  # the sign of an exact zero is checked below
    assert got == want


@given(st.floats(), st.floats(), st.floats())
def test_fma_specials_match_the_twin(a, b, c):
    """Infinities, NaN and signed zeros: the kernels' fma and its twin agree."""
    assert _same(_fma(a, b, c), bits.py_fma(a, b, c))


def test_fma_rounds_once():
    """A case where a * b + c (two roundings) loses everything and the fma does not:
    (1 + 2^-30)(1 - 2^-30) - 1 = -2^-60 exactly."""
    a, b = 1.0 + 2.0**-30, 1.0 - 2.0**-30
    assert a * b - 1.0 == 0.0
    assert _fma(a, b, -1.0) == bits.py_fma(a, b, -1.0) == -(2.0**-60)
    for x, y, z in [(0.0, -1.0, 0.0), (-0.0, 1.0, -0.0), (1.0, 1.0, -1.0), (-1.0, 1.0, 1.0),
                    (1e308, 10.0, -1e308), (1e308, 10.0, -math.inf), (math.inf, 0.0, 1.0)]:
        assert _same(_fma(x, y, z), bits.py_fma(x, y, z)), (x, y, z)


def test_fma_vectorised_loop_equals_scalar():
    g = np.random.default_rng(5)
    a, b, c = (g.standard_normal(1001) * 10.0 ** g.integers(-300, 300, 1001) for _ in range(3))
    out = np.empty(1001)
    _fma_loop(a, b, c, out)
    for i in range(1001):
        assert _same(out[i], bits.py_fma(a[i], b[i], c[i])), i

"""Exact bit-level conversions of :mod:`rfcheck.bits` against Python's exact arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from rfcheck import bits, montecarlo


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

"""The bulk ziggurat's vector fast-pass kernels (rfcheck.engine.simd_ziggurat), both of them on
every machine: whichever one this machine's fill uses, the other is compiled and checked too (LLVM
lowers 8-wide vectors on any target), candidate for candidate and bit for bit against the scalar
operations of the fill's tail loop."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from rfcheck.engine import rng, simd_ziggurat

_U = np.uint64
_MASK64 = (1 << 64) - 1


@njit(cache=False, error_model="numpy")
def _scalar(s, g, out, start, nvec, w, k):
    """The fill's tail loop over candidates 1 .. 8 nvec: the reference."""
    mask = _U(0)
    for i in range(8 * nvec):
        r = rng._out64(s + _U(i + 1) * g)
        idx = np.int64(r & _U(1023))
        rr = r >> _U(10)
        fa = float((rr >> _U(1)) & _U((1 << 52) - 1))
        x = fa * w[idx]
        out[start + i] = -x if (rr & _U(1)) != _U(0) else x
        mask |= _U(fa >= k[idx]) << _U(i)
    return mask


@njit(cache=False, error_model="numpy")
def _gathers(s, g, out, start, nvec, w, k):
    return simd_ziggurat.fast_pass(s, g, out, start, nvec, w, k)


@njit(cache=False, error_model="numpy")
def _pairs(s, g, out, start, nvec, wk):
    return simd_ziggurat.fast_pass_pairs(s, g, out, start, nvec, wk)


def _runs(s: int, g: int, nvec: int, start: int) -> list[tuple[np.ndarray, int]]:
    results = []
    for kernel in ("scalar", "gathers", "pairs"):
        out = np.full(start + 64 + 3, np.nan)
        if kernel == "scalar":
            m = _scalar(_U(s), _U(g), out, start, nvec, rng._ZW, rng._ZKF)
        elif kernel == "gathers":
            m = _gathers(_U(s), _U(g), out, start, nvec, rng._ZW, rng._ZKF)
        else:
            m = _pairs(_U(s), _U(g), out, start, nvec, rng._ZWK)
        results.append((out, int(m)))
    return results


@settings(max_examples=60, deadline=None)
@given(st.integers(0, _MASK64), st.integers(0, _MASK64 >> 1), st.integers(0, 8), st.integers(0, 3))
def test_both_kernels_equal_the_scalar_loop_bit_for_bit(s, half_g, nvec, start):
    g = 2 * half_g + 1  # the increments are odd
    (ref, mref), *others = _runs(s, g, nvec, start)
    for out, m in others:
        assert m == mref
        assert np.array_equal(out.view(np.uint64), ref.view(np.uint64))  # signs of zeros, NaN past the end


def test_the_kernels_meet_failures_and_both_signs():
    """Over 64 chunks of a real block, the failures (~0.43%) and both signs occur, so the
    comparison above covers the fast test's both outcomes."""
    s, g = rng.block_state(1, 2, 0)
    fails = 0
    for c in range(64):
        (ref, mref), *others = _runs((s + c * 64 * g) & _MASK64, g, 8, 0)
        assert all(m == mref and np.array_equal(o[:64], ref[:64]) for o, m in others)
        fails += bin(mref).count("1")
        assert (ref[:64] < 0).any() and (ref[:64] > 0).any()
    assert fails > 0


def test_the_interleaved_table_and_the_target_choice():
    assert np.array_equal(rng._ZWK[0::2], rng._ZW) and np.array_equal(rng._ZWK[1::2], rng._ZKF)
    assert not (simd_ziggurat.WIDE and simd_ziggurat.PAIRS)
    assert simd_ziggurat.KERNEL == simd_ziggurat.kernel_for(simd_ziggurat.target_features(), simd_ziggurat.target_cpu())
    assert simd_ziggurat.WIDE == (simd_ziggurat.KERNEL == "gathers")
    assert simd_ziggurat.PAIRS == (simd_ziggurat.KERNEL == "pairs")
    wide = "+avx2,+avx512f,+avx512dq"
    assert [simd_ziggurat.kernel_for(wide, c) for c in ("znver4", "znver5", "sapphirerapids", "skylake-avx512", "")] \
        == ["pairs", "pairs", "gathers", "gathers", "gathers"]
    assert simd_ziggurat.kernel_for("+avx2,-avx512f", "znver3") == "pairs"
    assert simd_ziggurat.kernel_for("-avx2", "znver4") == "loop"
    f = rng.__dict__
    assert f["_WIDE"] is simd_ziggurat.WIDE and f["_PAIRS"] is simd_ziggurat.PAIRS

"""A/B in one process on an AVX-512 build: the bulk normals' fast pass by gathers
(``simd_ziggurat.fast_pass``) against the one by paired loads (``simd_ziggurat.fast_pass_pairs``),
alone (64 chunks of 64 candidates per call) and inside the whole fill (``rng.fill_normals``,
4,096-normal refills: the package's, which compiles the kernel ``simd_ziggurat.KERNEL``, against a
frozen copy wired to the other kernel).  One thread, alternating rounds; first checks that the
kernels and the two fills give the same bits.  Only meaningful on an AVX-512 target (both kernels
compile there).  Usage: ``NUMBA_NUM_THREADS=1 python ab_gathers_pairs.py [ROUNDS]``."""

import sys
import time

import numpy as np
from numba import njit

from rfcheck.engine import rng, simd_ziggurat
from rfcheck.engine.bits import u52_to_f64
from rfcheck.engine.simd_ziggurat import fast_pass, fast_pass_pairs

assert simd_ziggurat.wide_int_vectors(simd_ziggurat.target_features()), "needs an AVX-512 target"
U = np.uint64
ZW, ZKF, ZWK = rng._ZW, rng._ZKF, rng._ZWK
OTHER_IS_GATHERS = simd_ziggurat.KERNEL != "gathers"  # the frozen fill takes the kernel the package does not


@njit
def pass_gathers(n, s, g, out):
    acc = U(0)
    for _ in range(n):
        for c in range(64):
            acc ^= fast_pass(s + U(c * 64) * g, g, out, c * 64, 8, ZW, ZKF)
        s += g
    return acc


@njit
def pass_pairs(n, s, g, out):
    acc = U(0)
    for _ in range(n):
        for c in range(64):
            acc ^= fast_pass_pairs(s + U(c * 64) * g, g, out, c * 64, 8, ZWK)
        s += g
    return acc


@njit(error_model="numpy")
def other_fill(st, out, raw):
    """``rng.fill_normals`` as of this change, its fast pass the other kernel (frozen copy)."""
    n = out.shape[0]
    s, g = U(st[0]), U(st[1])
    i0 = 0
    while i0 < n:
        span = min(rng.CHUNK * rng.GROUP, n - i0)
        nchunks = (span + rng.CHUNK - 1) // rng.CHUNK
        fails = U(0)
        for c in range(nchunks):
            j = i0 + c * rng.CHUNK
            m = min(rng.CHUNK, n - j)
            sc = s + U(c * rng.CHUNK) * g
            nv = m // 8
            if OTHER_IS_GATHERS:
                mask = fast_pass(sc, g, out, j, nv, ZW, ZKF)
            else:
                mask = fast_pass_pairs(sc, g, out, j, nv, ZWK)
            o = out[j:j + m]
            for i in range(8 * nv, m):
                r = rng._out64(sc + U(i + 1) * g)
                idx = np.int64(r & rng._ZIDX)
                rr = r >> rng._ZSH
                fa = u52_to_f64((rr >> rng._S1) & rng._MANT)
                x = fa * ZW[idx]
                o[i] = -x if (rr & rng._ONE) != U(0) else x
                mask |= U(fa >= ZKF[idx]) << U(i)
            raw[c] = mask
            fails |= mask
        if fails != U(0):
            fb = rng._load_fb(raw)
            for c in range(nchunks):
                mask = raw[c]
                while mask != U(0):
                    i = rng.trailing_zeros(mask) + c * rng.CHUNK
                    mask &= mask - rng._ONE
                    out[i0 + i], fb = rng._normal_fix_st(fb, rng._out64(s + U(i + 1) * g))
            rng._store_fb(raw, fb)
        s = s + U(span) * g
        i0 += span
    return (s, g)


@njit
def fill_package(n, st, out, raw):
    for _ in range(n):
        st = rng.fill_normals(st, out, raw)
    return st


@njit
def fill_other(n, st, out, raw):
    for _ in range(n):
        st = other_fill(st, out, raw)
    return st


a, b = np.empty(4096), np.empty(4096)
s, g = U(12345), U(0x9E3779B97F4A7C15)
assert pass_gathers(2, s, g, a) == pass_pairs(2, s, g, b) and np.array_equal(a, b)
raw1, raw2 = np.empty(rng.RAW_SIZE, dtype=U), np.empty(rng.RAW_SIZE, dtype=U)
st1 = rng.init_block(1, 2, 0, raw1)
st2 = rng.init_block(1, 2, 0, raw2)
assert fill_package(3, st1, a, raw1) == fill_other(3, st2, b, raw2) and np.array_equal(a, b)
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
n = 300
names = {"fast pass by gathers": lambda: pass_gathers(n, s, g, a),
         "fast pass by pairs": lambda: pass_pairs(n, s, g, b),
         f"whole fill, package ({simd_ziggurat.KERNEL})": lambda: fill_package(n, st1, a, raw1),
         f"whole fill, frozen copy ({'gathers' if OTHER_IS_GATHERS else 'pairs'})": lambda: fill_other(n, st2, b, raw2)}
res = {k: [] for k in names}
for r in range(rounds):
    for k in (list(names) if r % 2 == 0 else list(names)[::-1]):
        t = time.perf_counter()
        names[k]()
        res[k].append((time.perf_counter() - t) / (n * 4096) * 1e9)
print(f"CPU target {simd_ziggurat.target_cpu()}, one thread, {rounds} alternating rounds x {n} calls of 4,096 normals")
for k, v in res.items():
    print(f"{k:40s} {np.median(v):.3f} ns per normal (median; min {min(v):.3f})")

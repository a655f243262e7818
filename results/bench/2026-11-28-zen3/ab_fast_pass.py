"""A/B in one process (results/bench/NOTES.md, 2026-11-28): ``rng.fill_normals`` (with
``simd_ziggurat.fast_pass_pairs`` on AVX2 targets) against a copy of the fill with the Numba loop
it had there before, 4,096-normal refills, alternating rounds; first checks that both give the
same bits.  Usage: ``python results/bench/2026-11-28-zen3/ab_fast_pass.py [ROUNDS]``."""

import sys
import time

import numpy as np
from numba import njit

from rfcheck.engine import rng
from rfcheck.engine.bits import u52_to_f64

_U = np.uint64
CHUNK, GROUP = rng.CHUNK, rng.GROUP
_ZW, _ZKF, _ZIDX, _ZSH = rng._ZW, rng._ZKF, rng._ZIDX, rng._ZSH
_S1, _MANT, _ONE = rng._S1, rng._MANT, rng._ONE
_out64, _normal_fix_st, trailing_zeros = rng._out64, rng._normal_fix_st, rng.trailing_zeros


@njit(error_model="numpy")
def fill_loop(st, out, raw):
    """``rng.fill_normals`` as it ran on AVX2 targets before 2026-11-28 (every candidate in the loop)."""
    n = out.shape[0]
    s, g = _U(st[0]), _U(st[1])
    i0 = 0
    while i0 < n:
        span = min(CHUNK * GROUP, n - i0)
        nchunks = (span + CHUNK - 1) // CHUNK
        fails = _U(0)
        for c in range(nchunks):
            j = i0 + c * CHUNK
            m = min(CHUNK, n - j)
            sc = s + _U(c * CHUNK) * g
            mask = _U(0)
            o = out[j:j + m]
            for i in range(m):
                r = _out64(sc + _U(i + 1) * g)
                idx = np.int64(r & _ZIDX)
                rr = r >> _ZSH
                fa = u52_to_f64((rr >> _S1) & _MANT)
                x = fa * _ZW[idx]
                o[i] = -x if (rr & _ONE) != _U(0) else x
                mask |= _U(fa >= _ZKF[idx]) << _U(i)
            raw[c] = mask
            fails |= mask
        if fails != _U(0):
            fb = (raw[CHUNK], raw[CHUNK + 1])
            for c in range(nchunks):
                mask = raw[c]
                while mask != _U(0):
                    i = trailing_zeros(mask) + c * CHUNK
                    mask &= mask - _ONE
                    out[i0 + i], fb = _normal_fix_st(fb, _out64(s + _U(i + 1) * g))
            raw[CHUNK], raw[CHUNK + 1] = fb
        s = s + _U(span) * g
        i0 += span
    return (s, g)


@njit
def refill(f, st, out, raw, reps):
    for _ in range(reps):
        st = f(st, out, raw)
    return st


def main(rounds: int) -> None:
    fills = {"Numba loop (before)": fill_loop, "fill_normals (after)": rng.fill_normals}
    raw = np.empty(rng.RAW_SIZE, dtype=np.uint64)
    for n in (4096, 5000, 37):
        got = []
        for f in fills.values():
            s, g = rng.init_block(1, 2, 0, raw)
            a = np.empty(n)
            f((_U(s), _U(g)), a, raw)
            got.append(a)
        assert np.array_equal(got[0], got[1]), n
    s, g = rng.init_block(1, 2, 0, raw)
    st = (_U(s), _U(g))
    n, reps = 4096, 800
    out = np.empty(n)
    for f in fills.values():
        refill(f, st, out, raw, 2)
    res: dict[str, list[float]] = {k: [] for k in fills}
    for _ in range(rounds):
        for name, f in fills.items():
            t = time.perf_counter()
            refill(f, st, out, raw, reps)
            res[name].append((time.perf_counter() - t) / (reps * n) * 1e9)
    print(f"same bits: True; {rounds} alternating rounds of {reps} refills of {n} normals, one thread")
    for k, v in res.items():
        med, best = float(np.median(v)), min(v)
        print(f"{k:22s} ns per normal: median {med:.2f}, best {best:.2f} ({1 / med:.3f} per ns median)")
    ratio = np.median(np.array(res["Numba loop (before)"]) / np.array(res["fill_normals (after)"]))
    print(f"time before / after, median of the rounds' ratios: {ratio:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)

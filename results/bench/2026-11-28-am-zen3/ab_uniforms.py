"""A/B, one process: ``rng.fill_uniforms_open``, the former loop (each state ``s + (i + 1) g``
multiplied out, frozen here as it was) against the package's (the state stepped by ``g``).
Run: `NUMBA_NUM_THREADS=1 python results/bench/2026-11-28-am-zen3/ab_uniforms.py`."""
import time

import numpy as np
from numba import njit

from rfcheck.engine import rng as R

_U = np.uint64


@njit(error_model="numpy")
def old_fill(st, out):
    s, g = _U(st[0]), _U(st[1])
    n = out.shape[0]
    for i in range(n):
        r = R._out64(s + _U(i + 1) * g)
        out[i] = (R.u53_to_f64(r >> R._S11) + 0.5) * R._TWO_M53
    return (s + _U(n) * g, g)


@njit
def loop_old(k, out, st):
    for _ in range(k):
        st = old_fill(st, out)
    return st


@njit
def loop_new(k, out, st):
    for _ in range(k):
        st = R.fill_uniforms_open(st, out)
    return st


raw = np.empty(R.RAW_SIZE, dtype=np.uint64)
st = tuple(np.uint64(v) for v in R.init_block(1, 2, 0, raw))
for n in (1, 7, 64, 4096):
    a, b = np.empty(n), np.empty(n)
    assert loop_old(3, a, st) == loop_new(3, b, st) and np.array_equal(a.view(np.uint64), b.view(np.uint64))
for n, reps in ((64, 50000), (4096, 1000)):
    out = np.empty(n)
    ts = {"old": [], "new": []}
    for _ in range(15):
        for name, f in (("old", loop_old), ("new", loop_new)):
            t0 = time.perf_counter()
            f(reps, out, st)
            ts[name].append((time.perf_counter() - t0) / reps / n * 1e9)
    o, w = np.array(ts["old"]), np.array(ts["new"])
    print(f"{n} uniforms a call: {np.median(o):.2f} -> {np.median(w):.2f} ns per uniform "
          f"(median of 15 alternating rounds; paired ratio {np.median(o / w):.2f}x)")

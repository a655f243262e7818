"""A/B, one process: SimRF+'s scalar-route pass on a 64 x 64 block, the former Numba loop (eight scalar
chains, frozen here as it was) against the tiled kernel (`rfcheck.engine.gauss_seidel.plus_apply`).
Run: `NUMBA_NUM_THREADS=1 python results/bench/2026-11-28-am-zen3/ab_plus_apply.py`."""
import time, numpy as np
from numba import njit
from rfcheck.engine.couplings import simrf_plus as P

@njit(cache=False, error_model="numpy")
def old_apply(Wt, m0, b, d, f):
    i8 = d - d % 8
    for i in range(0, i8, 8):
        w0, w1, w2, w3 = Wt[i, m0:m0 + b], Wt[i + 1, m0:m0 + b], Wt[i + 2, m0:m0 + b], Wt[i + 3, m0:m0 + b]
        w4, w5, w6, w7 = Wt[i + 4, m0:m0 + b], Wt[i + 5, m0:m0 + b], Wt[i + 6, m0:m0 + b], Wt[i + 7, m0:m0 + b]
        t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = 0.0
        for j in range(b):
            t0, t1, t2, t3 = t0 + w0[j], t1 + w1[j], t2 + w2[j], t3 + w3[j]
            t4, t5, t6, t7 = t4 + w4[j], t5 + w5[j], t6 + w6[j], t7 + w7[j]
        for j in range(b):
            fj = f[j]
            r0, r1, r2, r3 = t0 - w0[j], t1 - w1[j], t2 - w2[j], t3 - w3[j]
            r4, r5, r6, r7 = t4 - w4[j], t5 - w5[j], t6 - w6[j], t7 - w7[j]
            n0, n1, n2, n3 = -(fj * r0), -(fj * r1), -(fj * r2), -(fj * r3)
            n4, n5, n6, n7 = -(fj * r4), -(fj * r5), -(fj * r6), -(fj * r7)
            w0[j], w1[j], w2[j], w3[j], w4[j], w5[j], w6[j], w7[j] = n0, n1, n2, n3, n4, n5, n6, n7
            t0, t1, t2, t3 = r0 + n0, r1 + n1, r2 + n2, r3 + n3
            t4, t5, t6, t7 = r4 + n4, r5 + n5, r6 + n6, r7 + n7
    for i in range(i8, d):
        w = Wt[i, m0:m0 + b]
        t = 0.0
        for j in range(b):
            t += w[j]
        for j in range(b):
            rest = t - w[j]
            nk = -(f[j] * rest)
            w[j] = nk
            t = rest + nk

@njit
def loop_old(n, Wt, W0, f):
    for _ in range(n):
        old_apply(Wt, 0, 64, 64, f)
        Wt[:, :] = W0   # keep values bounded: restore the block
@njit
def loop_new(n, Wt, W0, f):
    for _ in range(n):
        P._plus_apply_columns(Wt, 0, 64, 64, f)
        Wt[:, :] = W0
@njit
def loop_copy(n, Wt, W0, f):
    for _ in range(n):
        Wt[:, :] = W0

g = np.random.default_rng(0)
W0 = g.standard_normal((64, 64)); f = 0.9 + 0.1 * g.random(64)
A, B = W0.copy(), W0.copy()
old_apply(A, 0, 64, 64, f); P._plus_apply_columns(B, 0, 64, 64, f)
assert np.array_equal(A.view(np.uint64), B.view(np.uint64))
Wt = W0.copy()
fns = {"old": loop_old, "new": loop_new, "copy": loop_copy}
for fn in fns.values(): fn(10, Wt, W0, f)
ts = {k: [] for k in fns}
for r in range(21):
    for k, fn in fns.items():
        t = time.perf_counter(); fn(2000, Wt, W0, f); ts[k].append((time.perf_counter() - t) / 2000 * 1e6)
c = np.array(ts["copy"])
for k in ("old", "new"):
    v = np.array(ts[k]) - c
    print(f"{k}: {np.median(v):.2f} us a 64x64 block (pass alone; median of 21 rounds, min {v.min():.2f})")
print(f"copy (subtracted): {np.median(c):.2f} us; paired ratio old/new median {np.median((np.array(ts['old'])-c)/(np.array(ts['new'])-c)):.2f}x")

"""A/B: the simplex block's signed row sums, the former Numba loop (four rows at a time; frozen
copy below, which also stored the signed entries back) against
:func:`rfcheck.engine.simplex_sums.signed_row_sums` (which only reads them; the final loop of the
block multiplies by the sign again), one thread, d = 64 (k = 63 columns), in one process, the order
alternating between rounds; also checks that both give the same sums bit for bit.  Run: ``python ab_simplex_sums.py [rounds]``."""
import sys
import time

import numpy as np
from numba import njit

from rfcheck.engine.simplex_sums import signed_row_sums


@njit(cache=False, error_model="numpy")
def former(n, X, sg, ys, kinv, d):
    k = d - 1
    for _ in range(n):
        i4 = d - d % 4
        for i in range(0, i4, 4):
            x0, x1, x2, x3 = X[i, 0:k], X[i + 1, 0:k], X[i + 2, 0:k], X[i + 3, 0:k]
            s0 = s1 = s2 = s3 = 0.0
            for j in range(k):
                g = sg[j]
                v0, v1, v2, v3 = x0[j] * g, x1[j] * g, x2[j] * g, x3[j] * g
                x0[j], x1[j], x2[j], x3[j] = v0, v1, v2, v3
                s0 += v0
                s1 += v1
                s2 += v2
                s3 += v3
            ys[i], ys[i + 1], ys[i + 2], ys[i + 3] = kinv * s0, kinv * s1, kinv * s2, kinv * s3


@njit(cache=False, error_model="numpy")
def kernel(n, X, sg, ys, kinv, d):
    for _ in range(n):
        signed_row_sums(X, d - 1, sg, ys, kinv, d)


d = 64
rng = np.random.default_rng(0)
X0 = rng.standard_normal((d, 64))
sg = np.where(rng.random(64) < 0.5, -1.0, 1.0)
kinv = 1.0 / np.sqrt(d - 1.0)
Xa, Xb, ya, yb = X0.copy(), X0.copy(), np.zeros(d), np.zeros(d)
former(3, Xa, sg, ya, kinv, d)
kernel(3, Xb, sg, yb, kinv, d)
assert np.array_equal(ya, yb), "the two differ"
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
n = 4000
res = {"former": [], "kernel": []}
for r in range(rounds):
    for name in (("former", "kernel") if r % 2 == 0 else ("kernel", "former")):
        f = former if name == "former" else kernel
        X = X0.copy()
        t = time.perf_counter()
        f(n, X, sg, ya, kinv, d)
        res[name].append((time.perf_counter() - t) / n * 1e9)
a, b = np.array(res["former"]), np.array(res["kernel"])
print(f"signed row sums of a 64 x 63 block, one thread, {rounds} rounds x {n} calls, alternating order")
print(f"former Numba loop: {np.median(a):.0f} ns per block (median; min {a.min():.0f})")
print(f"tile kernel:       {np.median(b):.0f} ns per block (median; min {b.min():.0f})")
print(f"paired ratio former / kernel: median {np.median(a / b):.2f}x "
      f"(range {np.min(a / b):.2f}x-{np.max(a / b):.2f}x); the same numbers bit for bit")

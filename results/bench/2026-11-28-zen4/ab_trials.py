"""Time per ensemble trial of the ORF, SimRF and SimRF+ engines (d = M = 64, one pair), one thread,
15 rounds alternating the order of the couplings; run it in turn from two checkouts to compare them
(the package on ``PYTHONPATH`` decides which code runs):

    for i in 1 2 3; do
      PYTHONPATH=/path/to/old/checkout NUMBA_NUM_THREADS=1 python ab_trials.py   # before
      NUMBA_NUM_THREADS=1 python ab_trials.py                                   # this checkout
    done
"""
import sys
import time

import numpy as np

import rfcheck
from rfcheck import features
from rfcheck.engine import montecarlo

D = M = 64
x = np.zeros(D)
x[0] = 0.5
prod = features.positive_product(x, x.copy())
couplings = ["orf", "simrf", "simrf+"]
n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
for c in couplings:
    montecarlo.simulate(prod, M, 2048, coupling=c, path="ensemble", seed=1)
res = {c: [] for c in couplings}
for r in range(15):
    for c in (couplings if r % 2 == 0 else couplings[::-1]):
        t = time.perf_counter()
        montecarlo.simulate(prod, M, n, coupling=c, path="ensemble", seed=3)
        res[c].append((time.perf_counter() - t) / n * 1e6)
print(f"rfcheck from {rfcheck.__file__}")
for c in couplings:
    a = np.array(res[c])
    print(f"{c:7s} us/trial median {np.median(a):.2f} min {a.min():.2f}")

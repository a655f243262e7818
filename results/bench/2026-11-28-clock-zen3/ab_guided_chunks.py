"""A/B in one process: the engines' guided chunks (``parallel.chunk_bounds``: each ``1/(2 t)`` of
the blocks left) against the equal chunks they replaced (eight per thread), on two threads, with
one thread timed in the same rounds (scaling = one-thread time / (2 x two-thread time)).

    NUMBA_NUM_THREADS=2 python results/bench/2026-11-28-clock-zen3/ab_guided_chunks.py [ROUNDS]

Output of three runs (21 rounds each) on the AVX2 machine (AMD EPYC, Zen 3): ab_guided_chunks.txt.
"""
import sys
import time

import numba
import numpy as np

from rfcheck import features
from rfcheck.engine import montecarlo, parallel

guided = parallel.chunk_bounds


def equal(n_jobs, threads):
    """The chunks before 2026-11-28: ``min(8 threads, n_jobs)`` whose sizes differ by at most one."""
    k = min(8 * threads, n_jobs)
    if k == 0:
        return [0]
    q, r = divmod(n_jobs, k)
    return [i * q + min(i, r) for i in range(k + 1)]


x = np.zeros(64)
x[0] = 0.5
prod = features.positive_product(x, x.copy())  # the bench's workload: |x + y| = 1, d = M = 64
R = int(sys.argv[1]) if len(sys.argv) > 1 else 21
for c, p, n in (("iid", "projection", 400_000), ("orf", "projection", 200_000), ("orf", "ensemble", 6_000)):
    montecarlo.simulate(prod, 64, 2000, coupling=c, path=p, seed=1)
    res = {"equal": [], "guided": [], "one": []}
    for r in range(R):
        for v in (("equal", "guided", "one") if r % 2 == 0 else ("guided", "equal", "one")):  # alternate the order
            parallel.chunk_bounds = guided if v == "guided" else equal
            numba.set_num_threads(1 if v == "one" else 2)
            time.sleep(0.2)
            t0 = time.perf_counter()
            montecarlo.simulate(prod, 64, n, coupling=c, path=p, seed=3 + r)
            res[v].append(time.perf_counter() - t0)
    numba.set_num_threads(2)
    parallel.chunk_bounds = guided
    e, g, o = (np.array(res[k]) for k in ("equal", "guided", "one"))
    print(f"{c} {p} n={n}: median time equal {np.median(e) * 1e3:.1f} ms, guided {np.median(g) * 1e3:.1f} ms, "
          f"one thread {np.median(o) * 1e3:.1f} ms; scaling equal {np.median(o / (2 * e)):.3f}, guided "
          f"{np.median(o / (2 * g)):.3f}; time equal/guided, paired: median {np.median(e / g):.3f} "
          f"(rounds {np.min(e / g):.3f}-{np.max(e / g):.3f}; guided faster in {int(np.sum(e > g))} of {R})",
          flush=True)

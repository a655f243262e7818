"""In one process (results/bench/NOTES.md, 2026-11-28): the engine's SplitMix64 bulk normals against the
measured alternative ARS-5 / ARS-7 (``rfcheck.engine.ars``), one thread, 4,096-normal refills, alternating
rounds, at two levels: the fast passes alone (64 chunks of 64 candidates, each kernel on its own chunk
layout; SplitMix64's ``simd_ziggurat.fast_pass_pairs``, ARS's ``ars.fast_pass``), and the whole fills
(``rng.fill_normals_repeat``, ``ars.fill_normals_repeat``: fix-ups and structure included).  First
checks ARS's fill against its Python twin.  Needs a CPU with x86 AES instructions.
Usage: ``NUMBA_NUM_THREADS=1 python results/bench/2026-11-28-layers-zen3/ab_generators.py [ROUNDS]``
(output in ``ab_generators.txt``); ``ab_generators_haswell.txt`` is the same run compiled for the
bench's AVX2 target: ``NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES=<rfcheck.bench._HASWELL_FEATURES>``
(AES-NI, no VAES)."""

import sys
import time

import numpy as np
from numba import njit

from rfcheck.engine import ars, rng, simd_ziggurat

_U = np.uint64


@njit
def pass_splitmix(out, reps, s, g):
    m = _U(0)
    for _ in range(reps):
        for c in range(out.shape[0] // 64):
            m ^= simd_ziggurat.fast_pass_pairs(s + _U(c * 64) * g, g, out, c * 64, 8, rng._ZWK)
    return m


@njit
def pass_ars(out, raw, reps, rounds, klo, khi):
    words = raw.view(np.float64)
    m, j = _U(0), _U(0)
    for _ in range(reps):
        for c in range(out.shape[0] // 64):
            m ^= ars.fast_pass(rounds, klo, khi, j, 8, out, c * 64, 8, words)
            j += _U(32)
    return m


def main(rounds: int) -> None:
    assert ars.AES is not None, "needs AES instructions"
    for r in ars.ROUNDS:
        assert np.array_equal(ars.draw_normals(5000, 3, 1, r), ars.PyARS(3, 1, 0, r).fill_normals(5000))
    n, reps = 4096, 800
    out = np.empty(n)
    raw = np.empty(rng.RAW_SIZE, dtype=np.uint64)
    s, g = rng.block_state(1, 0, 0)
    klo, khi, _ = ars.init_block(1, 0, 0, raw)
    runs = {"fast pass, splitmix64": lambda k: pass_splitmix(out, k, _U(s), _U(g)),
            "fast pass, ars-5": lambda k: pass_ars(out, raw, k, 5, klo, khi),
            "fast pass, ars-7": lambda k: pass_ars(out, raw, k, 7, klo, khi),
            "fill, splitmix64": lambda k: rng.fill_normals_repeat(1, 0, out, k),
            "fill, ars-5": lambda k: ars.fill_normals_repeat(1, 0, out, k, 5),
            "fill, ars-7": lambda k: ars.fill_normals_repeat(1, 0, out, k, 7)}
    for f in runs.values():
        f(2)
    res: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, f in runs.items():
            t = time.perf_counter()
            f(reps)
            res[name].append((time.perf_counter() - t) / (reps * n) * 1e9)
    print(f"ARS fills equal their twin; {rounds} alternating rounds of {reps} x {n} normals, one thread, AES unit "
          f"{ars.AES}")
    for k, v in res.items():
        print(f"{k:22s} ns per normal: median {np.median(v):.3f}, best {min(v):.3f}")
    for level in ("fast pass", "fill"):
        base = np.array(res[f"{level}, splitmix64"])
        for r in ars.ROUNDS:
            ratio = np.median(base / np.array(res[f"{level}, ars-{r}"]))
            print(f"{level}: splitmix64 time / ars-{r} time, median of the rounds' ratios: {ratio:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)

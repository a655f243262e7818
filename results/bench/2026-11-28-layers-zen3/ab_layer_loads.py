"""A/B in one process (results/bench/NOTES.md, 2026-11-28, late morning): ``rng.fill_normals`` on an
AVX2 target, whose fast pass (``simd_ziggurat.fast_pass_pairs``) now reads each candidate's layer
by a scalar load of its word, against the same fill re-bound to the kernel as it was before (the
layers extracted from the word vector: the frozen ``_read_extracted`` below), 4,096-normal
refills, alternating rounds; first checks that both give the same bits.  Only meaningful where
``simd_ziggurat.PAIRS`` (an AVX2 target without AVX-512).
Usage: ``NUMBA_NUM_THREADS=1 python results/bench/2026-11-28-layers-zen3/ab_layer_loads.py [ROUNDS]``."""

import sys
import time
import types

import numpy as np
from llvmlite import ir
from numba import njit
from numba.extending import intrinsic

from rfcheck.engine import rng
from rfcheck.engine import simd_ziggurat as z
from rfcheck.engine.llvm_vectors import counted_loop, vector_ptr

_U = np.uint64
_I32 = ir.IntType(32)


def _function_extracted(module):
    """The kernel as it was before: the layers' offsets extracted from the word vector."""
    fn = z.declare(module, "rfcheck.zig_fast_pairs_before", 1)
    if fn is None:
        return module.get_global("rfcheck.zig_fast_pairs_before")
    s, g, out, nvec, wk = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    z0, step = z._first_states(b, s, g)

    def words(b, v, accs):
        (zz,) = accs
        b.store(z._mix64(b, zz), vector_ptr(b, out, b.mul(v, z._i64(z._W)), z._VI), align=8)
        return [b.add(zz, step)]

    def read(b, layer):
        twice = b.shl(layer, z._vec(1))
        pairs = [b.load(b.bitcast(b.gep(wk, [b.extract_element(twice, ir.Constant(_I32, i))]), z._V2.as_pointer()),
                        align=8) for i in range(z._W)]
        while len(pairs) > 1:
            n = 2 * pairs[0].type.count
            pairs = [b.shuffle_vector(p, q, ir.Constant(ir.VectorType(_I32, n), list(range(n))))
                     for p, q in zip(pairs[0::2], pairs[1::2], strict=True)]
        (both,) = pairs
        return tuple(b.shuffle_vector(both, both, ir.Constant(ir.VectorType(_I32, z._W), list(range(j, 2 * z._W, 2))))
                     for j in (0, 1))

    def candidates(b, v, accs):
        (mask,) = accs
        at = vector_ptr(b, out, b.mul(v, z._i64(z._W)), z._VI)
        cand, fails = z._candidates(b, b.load(at, align=8), read)
        b.store(cand, b.bitcast(at, z._VF.as_pointer()), align=8)
        return [z._mask_bits(b, mask, fails, v)]

    b, _ = counted_loop(fn, b, z._i64(0), nvec, [z0], words, "words")
    b, (mask,) = counted_loop(fn, b, z._i64(0), nvec, [z._i64(0)], candidates, "candidates")
    b.ret(mask)
    return fn


@intrinsic
def fast_pass_pairs_before(typingctx, s, g, out, start, nvec, wk):
    return z.kernel_call(_function_extracted, out, (wk,), start, nvec)


_py = rng.fill_normals.py_func
fill_before = njit(error_model="numpy")(types.FunctionType(
    _py.__code__, {**_py.__globals__, "fast_pass_pairs": fast_pass_pairs_before}, "fill_before"))


@njit
def refill(f, st, out, raw, reps):
    for _ in range(reps):
        st = f(st, out, raw)
    return st


def main(rounds: int) -> None:
    assert z.PAIRS, "an AVX2 target without AVX-512 only"
    fills = {"layers extracted (before)": fill_before, "layers loaded (after)": rng.fill_normals}
    raw = np.empty(rng.RAW_SIZE, dtype=np.uint64)
    for n in (4096, 5000, 37, 100_000):
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
        print(f"{k:26s} ns per normal: median {med:.2f}, best {best:.2f} ({1 / med:.3f} per ns median)")
    names = list(fills)
    ratio = np.median(np.array(res[names[0]]) / np.array(res[names[1]]))
    print(f"time before / after, median of the rounds' ratios: {ratio:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)

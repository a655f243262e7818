"""The fast pass of the bulk ziggurat normals as LLVM kernels on 8-wide vectors.

:func:`rfcheck.engine.rng.fill_normals` turns word ``k`` of a block's main generator,
``mix64(s + k g)`` (SplitMix64's output of the ``k``-th state), into a ziggurat candidate:
the low 10 bits pick the layer, bit 10 the sign, bits 11-62 the 52-bit abscissa ``a``;
the candidate ``a w[layer]`` is accepted by the fast test ``a < k[layer]`` (99.57%), the
others are finished later.  Both kernels here run that pass on ``<8 x i64>`` / ``<8 x double>``
vectors: the two 64-bit multiplies of ``mix64`` as vector multiplies, the abscissa converted
exactly by the bit trick of :func:`rfcheck.engine.bits.u52_to_f64`, the sign put in by flipping
the sign bit, the fast test's failures returned as the bits of a 64-bit mask.  The same integer
operations and the same two floating-point operations per candidate (``(2^52 + a) - 2^52``, then
``a w``), so the numbers are those of the Numba loop and of the plain-Python twin bit for bit
(``tests/test_simd_ziggurat.py`` runs both kernels on every machine).  They differ in how they
read the tables and in their loops:

- :func:`fast_pass` (AVX-512 targets other than AMD's Zen cores, :data:`WIDE`): one loop, both
  tables read by ``llvm.masked.gather``.  Measured (2026-11-27, one thread, 2,080 normals per
  call, alternating with the Numba loop): 1.47-1.50 -> 0.92-0.95 ns per normal on the AVX-512
  build; on the AVX2 build of the same machine it was *slower* (1.55 -> 1.83-1.87 ns: no 64-bit
  vector multiply, no 8-wide registers, gathers).
- :func:`fast_pass_pairs` (AVX2 targets without AVX-512, and AMD Zen cores with it: their
  64-bit gathers are slow, :data:`GATHERS_SLOW_PREFIXES`; :data:`PAIRS`): two loops, first the
  words of the whole chunk (stored in ``out`` as integers), then the candidates; the two tables
  interleaved (``wk[2 i] = w[i]``, ``wk[2 i + 1] = k[i]``), so one 16-byte load per candidate
  reads its layer's width and bound, at an offset computed from a scalar load of the candidate's
  word (:func:`candidates_loop`; against extracting the layers from the word vector, the whole
  fill 1.50 -> 1.29 ns per normal on one Zen 3 thread, 2026-11-28,
  ``results/bench/2026-11-28-layers-zen3/ab_layer_loads.py``).  In one loop the words' multiply
  chains and the table reads wait on each other and fill the out-of-order window; split, each
  loop streams.  Measured when the kernel was introduced (with the layers extracted) on the AVX2
  machine (AMD EPYC, Zen 3; 2026-11-28, one thread, 4,096-normal refills, 15 alternating
  rounds, :func:`rfcheck.engine.rng.fill_normals` as a whole,
  ``results/bench/2026-11-28-zen3/ab_fast_pass.py``): the Numba loop 1.97 ns per normal (median),
  this kernel 1.54; a single loop with the paired table took 1.75 in a scratch measurement
  (``results/bench/NOTES.md``).

Elsewhere (no AVX2: other CPUs, where LLVM would emulate the vectors) the fill keeps its Numba loop.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from rfcheck.engine.llvm_vectors import counted_loop, splat, target_cpu, target_features, vector_ptr

__all__ = ["GATHERS_SLOW_PREFIXES", "KERNEL", "PAIRS", "WIDE", "candidates_loop", "declare", "fast_pass",
           "fast_pass_pairs", "interleave_tables", "kernel_call", "kernel_for", "wide_int_vectors"]

_I64 = ir.IntType(64)
_I32 = ir.IntType(32)
_F64 = ir.DoubleType()
_W = 8
_VI = ir.VectorType(_I64, _W)
_VF = ir.VectorType(_F64, _W)
_VP = ir.VectorType(_F64.as_pointer(), _W)
_VB = ir.VectorType(ir.IntType(1), _W)

_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_LAYER_BITS = 10
_MANT = (1 << 52) - 1
_EXP52 = 0x4330000000000000  # the bits of 2.0**52


def wide_int_vectors(features: str) -> bool:
    """Whether LLVM CPU ``features`` have 8-wide 64-bit integer vectors with a multiply
    (AVX-512F and AVX-512DQ), where :func:`fast_pass` is faster than the Numba loop.

    Parameters
    ----------
    features : str
        LLVM's comma-separated feature list.

    Returns
    -------
    bool

    Examples
    --------
    >>> wide_int_vectors("+avx2,+avx512f,+avx512dq"), wide_int_vectors("+avx2,-avx512f")
    (True, False)
    """
    f = set(features.split(","))
    return "+avx512f" in f and "+avx512dq" in f


GATHERS_SLOW_PREFIXES = ("znver",)
"""LLVM CPU names (prefixes) whose AVX-512 builds take :func:`fast_pass_pairs` instead of
:func:`fast_pass`: AMD's Zen cores, whose 64-bit gathers are slow.  Measured (2026-11-28, one
thread of an AMD EPYC Zen 4 core, ``znver4``, AVX-512 build, 4,096 candidates per call, 21
alternating rounds, ``results/bench/2026-11-28-zen4/ab_gathers_pairs.py``): the fast pass by
gathers 1.198 ns per normal, by paired loads 0.544; the whole fill 1.468 -> 0.723.  Zen 5
(``znver5``) is taken to be alike, not measured; on the Intel Xeon of the AVX-512 series the
gathers kernel was measured faster than the Numba loop, the pairs kernel's AVX-512 build there not
yet."""


def kernel_for(features: str, cpu: str = "") -> str:
    """Which fast pass :func:`rfcheck.engine.rng.fill_normals` compiles for a CPU target.

    Parameters
    ----------
    features : str
        LLVM's comma-separated feature list of the target.
    cpu : str, optional
        LLVM's CPU name of the target (``znver4``, ``sapphirerapids``, ...; Numba's own choice:
        :func:`rfcheck.engine.llvm_vectors.target_cpu`).  Empty: decided by the features alone.

    Returns
    -------
    str
        ``"gathers"`` (:func:`fast_pass`) where :func:`wide_int_vectors`, except on the CPUs of
        :data:`GATHERS_SLOW_PREFIXES`; ``"pairs"`` (:func:`fast_pass_pairs`) there and on other
        AVX2 targets; ``"loop"`` (the fill's Numba loop) elsewhere.  All three give the same
        numbers bit for bit: the choice is one of speed only.

    Examples
    --------
    >>> [kernel_for(f) for f in ("+avx2,+avx512f,+avx512dq", "+avx2,-avx512f", "+neon")]
    ['gathers', 'pairs', 'loop']
    >>> kernel_for("+avx2,+avx512f,+avx512dq", "znver4"), kernel_for("+avx2,+avx512f,+avx512dq", "sapphirerapids")
    ('pairs', 'gathers')
    """
    if wide_int_vectors(features) and not cpu.startswith(GATHERS_SLOW_PREFIXES):
        return "gathers"
    return "pairs" if "+avx2" in set(features.split(",")) else "loop"


KERNEL = kernel_for(target_features(), target_cpu())
"""The fast pass this process compiles (:func:`kernel_for` of Numba's target; the CPU name and its
features are both in Numba's cache key, so a cached build never answers for another choice)."""

WIDE = KERNEL == "gathers"
"""Whether this process compiles for a target where :func:`fast_pass` is used."""

PAIRS = KERNEL == "pairs"
"""Whether this process compiles for a target where :func:`fast_pass_pairs` is used."""


def interleave_tables(w: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The ziggurat's widths and fast-test bounds interleaved for :func:`fast_pass_pairs`:
    ``wk[2 i] = w[i]``, ``wk[2 i + 1] = k[i]``.

    Parameters
    ----------
    w, k : numpy.ndarray of float64, shape (n,)
        The widths and the bounds (as doubles) of the ``n`` layers.

    Returns
    -------
    numpy.ndarray of float64, shape (2 n,)
        C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> interleave_tables(np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist()
    [1.0, 3.0, 2.0, 4.0]
    """
    wk = np.empty(2 * w.shape[0], dtype=np.float64)
    wk[0::2] = w
    wk[1::2] = k
    return wk


def _vec(value: int) -> ir.Constant:
    return ir.Constant(_VI, [value] * _W)


def _i64(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _first_states(b: ir.IRBuilder, s: ir.Value, g: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The states ``s + j g`` of candidates ``j = 1 .. 8`` and the step ``8 g`` between vectors."""
    gv = splat(b, g, _VI)
    return b.add(splat(b, s, _VI), b.mul(ir.Constant(_VI, list(range(1, _W + 1))), gv)), b.mul(gv, _vec(_W))


def _mix64(b: ir.IRBuilder, z: ir.Value) -> ir.Value:
    """SplitMix64's output function on each lane (``rng._out64``)."""
    x = b.mul(b.xor(z, b.lshr(z, _vec(30))), _vec(_MIX1))
    x = b.mul(b.xor(x, b.lshr(x, _vec(27))), _vec(_MIX2))
    return b.xor(x, b.lshr(x, _vec(31)))


_Reader = Callable[[ir.IRBuilder, ir.Value], tuple[ir.Value, ir.Value]]


def _candidates(b: ir.IRBuilder, r: ir.Value, read: _Reader) -> tuple[ir.Value, ir.Value]:
    """Words ``r`` -> (candidates ``+-a w[layer]``, the ``<8 x i1>`` fast-test failures
    ``a >= k[layer]``); ``read(b, layer)`` returns the vectors ``(w[layer], k[layer])``."""
    layer = b.and_(r, _vec((1 << _LAYER_BITS) - 1))
    mant = b.and_(b.lshr(r, _vec(_LAYER_BITS + 1)), _vec(_MANT))
    fa = b.fsub(b.bitcast(b.or_(mant, _vec(_EXP52)), _VF), ir.Constant(_VF, [2.0**52] * _W))
    w, k = read(b, layer)
    sign = b.and_(b.shl(r, _vec(63 - _LAYER_BITS)), _vec(1 << 63))  # bit 10 -> the sign bit
    cand = b.bitcast(b.xor(b.bitcast(b.fmul(fa, w), _VI), sign), _VF)
    return cand, b.fcmp_ordered(">=", fa, k)


def _mask_bits(b: ir.IRBuilder, mask: ir.Value, fails: ir.Value, v: ir.Value) -> ir.Value:
    """``mask`` with vector ``v``'s eight failure bits put in at bit ``8 v``."""
    return b.or_(mask, b.shl(b.zext(b.bitcast(fails, ir.IntType(_W)), _I64), b.mul(v, _i64(_W))))


def declare(module: ir.Module, name: str, tables: int, scalars: int = 2) -> ir.Function | None:
    """Declare the kernel ``i64 name(scalar..., out, nvec, table...)`` (``scalars`` ``i64``
    arguments first: ``s, g`` for SplitMix64's kernels; ``out`` and the tables ``double*``,
    ``out`` ``noalias``), internal to ``module``, or return ``None`` if the module defines it
    already.

    Parameters
    ----------
    module : llvmlite.ir.Module
        The module the kernel goes into.
    name : str
        Its LLVM name.
    tables : int
        How many table pointers follow ``nvec``.
    scalars : int, optional
        How many ``i64`` arguments come first (default 2).

    Returns
    -------
    llvmlite.ir.Function or None
        The declared function, without a body, or ``None``.
    """
    ptr = _F64.as_pointer()
    fn = cgutils.get_or_insert_function(
        module, ir.FunctionType(_I64, [_I64] * scalars + [ptr, _I64] + [ptr] * tables), name)
    if not fn.is_declaration:
        return None
    fn.linkage = "internal"
    fn.args[scalars].add_attribute("noalias")
    return fn


def _function(module: ir.Module) -> ir.Function:
    """``i64 rfcheck.zig_fast(s, g, out, nvec, w, k)``: candidates ``1 .. 8 nvec`` of the chunk
    starting at state ``s`` into ``out``; bit ``i`` of the result set where candidate ``i + 1``
    fails the fast test.  One loop; the tables read by gathers."""
    fn = declare(module, "rfcheck.zig_fast", 2)
    if fn is None:
        return module.get_global("rfcheck.zig_fast")
    s, g, out, nvec, wtab, ktab = fn.args
    gather = cgutils.get_or_insert_function(
        module, ir.FunctionType(_VF, [_VP, _I32, _VB, _VF]), "llvm.masked.gather.v8f64.v8p0")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    z0, step = _first_states(b, s, g)
    bases = [splat(b, b.ptrtoint(t, _I64), _VI) for t in (wtab, ktab)]

    def read(b, layer):
        off = b.shl(layer, _vec(3))  # layer * 8 bytes
        return tuple(b.call(gather, [b.inttoptr(b.add(base, off), _VP), ir.Constant(_I32, 8),
                                     ir.Constant(_VB, [1] * _W), ir.Constant(_VF, ir.Undefined)]) for base in bases)

    def body(b, v, accs):
        z, mask = accs
        cand, fails = _candidates(b, _mix64(b, z), read)
        b.store(cand, vector_ptr(b, out, b.mul(v, _i64(_W)), _VF), align=8)
        return [b.add(z, step), _mask_bits(b, mask, fails, v)]

    b, (_, mask) = counted_loop(fn, b, _i64(0), nvec, [z0, _i64(0)], body, "pass")
    b.ret(mask)
    return fn


_V2 = ir.VectorType(_F64, 2)


def candidates_loop(fn: ir.Function, b: ir.IRBuilder, words: ir.Value, out: ir.Value, nvec: ir.Value,
                    wk: ir.Value) -> tuple[ir.IRBuilder, ir.Value]:
    """Emit the candidates' loop of the two-loop fast pass: for ``v < nvec``, the eight 64-bit words
    at ``words[8 v:]`` (an ``i64*``) into candidates at ``out[8 v:]`` (a ``double*``; may be
    ``words`` itself, bitcast), their fast-test failures into the bits ``8 v ..`` of a mask.

    Each candidate's width and bound are one 16-byte load from the interleaved table ``wk``
    (:func:`interleave_tables`), at an offset computed from a scalar load of its word (extracting
    the eight layers from the word vector took shuffle uops on the vector ports, which this loop
    is short of).  Shared by :func:`fast_pass_pairs` and the measured alternative generator of
    :mod:`rfcheck.engine.ars`.

    Parameters
    ----------
    fn : llvmlite.ir.Function
        The kernel the loop's blocks are appended to.
    b : llvmlite.ir.IRBuilder
        The builder, positioned where the loop goes.
    words, out, nvec, wk : llvmlite.ir.Value
        The words (``i64*``), the candidates (``double*``), the number of vectors (``i64``) and
        the interleaved table (``double*``, 2048 entries).

    Returns
    -------
    tuple
        The builder after the loop and the ``i64`` failure mask (bit ``i``: candidate ``i``).
    """
    def reader(offsets):
        def read(b, _layer):  # the layers' pairs at the given offsets into wk
            pairs = [b.load(b.bitcast(b.gep(wk, [o]), _V2.as_pointer()), align=8) for o in offsets]
            while len(pairs) > 1:  # concatenate: (w0, k0, w1, k1, ...)
                n = 2 * pairs[0].type.count
                pairs = [b.shuffle_vector(p, q, ir.Constant(ir.VectorType(_I32, n), list(range(n))))
                         for p, q in zip(pairs[0::2], pairs[1::2], strict=True)]
            (both,) = pairs
            return tuple(b.shuffle_vector(both, both, ir.Constant(ir.VectorType(_I32, _W), list(range(j, 2 * _W, 2))))
                         for j in (0, 1))
        return read

    def candidates(b, v, accs):
        (mask,) = accs
        first = b.mul(v, _i64(_W))
        offsets = [b.shl(b.and_(b.load(b.gep(words, [b.add(first, _i64(i))]), align=8),
                                _i64((1 << _LAYER_BITS) - 1)), _i64(1)) for i in range(_W)]
        word_vec = b.load(b.bitcast(b.gep(words, [first], inbounds=True), _VI.as_pointer()), align=8)
        cand, fails = _candidates(b, word_vec, reader(offsets))
        b.store(cand, vector_ptr(b, out, first, _VF), align=8)
        return [_mask_bits(b, mask, fails, v)]

    b, (mask,) = counted_loop(fn, b, _i64(0), nvec, [_i64(0)], candidates, "candidates")
    return b, mask


def _function_pairs(module: ir.Module) -> ir.Function:
    """``i64 rfcheck.zig_fast_pairs(s, g, out, nvec, wk)``: as :func:`_function`, in two loops
    (the words into ``out`` as integers, then :func:`candidates_loop` over them)."""
    fn = declare(module, "rfcheck.zig_fast_pairs", 1)
    if fn is None:
        return module.get_global("rfcheck.zig_fast_pairs")
    s, g, out, nvec, wk = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    z0, step = _first_states(b, s, g)

    def words(b, v, accs):
        (z,) = accs
        b.store(_mix64(b, z), vector_ptr(b, out, b.mul(v, _i64(_W)), _VI), align=8)
        return [b.add(z, step)]

    words_i64 = b.bitcast(out, _I64.as_pointer())
    b, _ = counted_loop(fn, b, _i64(0), nvec, [z0], words, "words")
    b, mask = candidates_loop(fn, b, words_i64, out, nvec, wk)
    b.ret(mask)
    return fn


def _is_f64_vector(t: types.Type) -> bool:
    return isinstance(t, types.Array) and t.ndim == 1 and t.layout == "C" and t.dtype == types.float64


def kernel_call(build: Callable[[ir.Module], ir.Function], out: types.Type, tables: tuple[types.Type, ...],
                start: types.Type, nvec: types.Type, scalars: int = 2) -> tuple | None:
    """The signature and codegen of a Numba intrinsic ``(*scalars, out, start, nvec, *tables)``
    (``scalars`` ``uint64`` arguments; ``out`` and the tables C-contiguous ``float64`` arrays)
    calling the LLVM function ``build(module)`` (declared by :func:`declare` with ``scalars``) on
    ``out[start:]``; ``None`` (a typing failure) for other argument types.

    Parameters
    ----------
    build : callable
        ``build(module)`` returns the kernel's ``ir.Function`` in that module.
    out, tables, start, nvec : numba.types.Type
        The intrinsic's argument types.
    scalars : int, optional
        How many ``uint64`` arguments come first (default 2: ``s, g``).

    Returns
    -------
    tuple or None
        ``(signature, codegen)`` for :func:`numba.extending.intrinsic`.
    """
    if not (all(_is_f64_vector(t) for t in (out, *tables))
            and all(isinstance(t, types.Integer) for t in (start, nvec))):
        return None
    sig = types.uint64(*[types.uint64] * scalars, out, types.int64, types.int64, *tables)

    def codegen(context, builder, signature, args):
        k = scalars
        o = context.make_array(out)(context, builder, args[k]).data
        ts = [context.make_array(t)(context, builder, a).data for t, a in zip(tables, args[k + 3:], strict=True)]
        return builder.call(build(builder.module), [*args[:k], builder.gep(o, [args[k + 1]]), args[k + 2], *ts])

    return sig, codegen


@intrinsic
def fast_pass(typingctx, s, g, out, start, nvec, wtab, ktab):
    """``mask = fast_pass(s, g, out, start, nvec, wtab, ktab)``: the fast pass over candidates
    ``1 .. 8 nvec`` (``nvec <= 8``) of a chunk of :func:`rfcheck.engine.rng.fill_normals` whose
    state is ``s`` and increment ``g`` (``uint64``): their candidates into
    ``out[start:start + 8 nvec]`` (contiguous, not overlapping the tables; not bounds-checked),
    and bit ``i`` of the returned ``uint64`` set where
    candidate ``i + 1`` fails the fast test ``a < k[layer]``.  ``wtab``, ``ktab``: the
    ziggurat's widths and fast-test bounds (``float64``, 1024 entries).  Tables read by gathers."""
    return kernel_call(_function, out, (wtab, ktab), start, nvec)


@intrinsic
def fast_pass_pairs(typingctx, s, g, out, start, nvec, wk):
    """``mask = fast_pass_pairs(s, g, out, start, nvec, wk)``: :func:`fast_pass`'s result, bit
    for bit, computed in two loops (the words into ``out`` first) with the tables interleaved,
    ``wk = interleave_tables(w, k)`` (``float64``, 2048 entries): one 16-byte load per candidate."""
    return kernel_call(_function_pairs, out, (wk,), start, nvec)

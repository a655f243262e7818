"""The fast pass of the bulk ziggurat normals as an LLVM kernel on 8-wide vectors.

:func:`rfcheck.engine.rng.fill_normals` turns word ``k`` of a block's main generator,
``mix64(s + k g)`` (SplitMix64's output of the ``k``-th state), into a ziggurat candidate:
the low 10 bits pick the layer, bit 10 the sign, bits 11-62 the 52-bit abscissa ``a``;
the candidate ``a w[layer]`` is accepted by the fast test ``a < k[layer]`` (99.57%), the
others are finished later.  Written as a Numba loop, LLVM vectorised it 4 wide (its cost
model prefers 256-bit vectors on these CPUs) with each table lookup a gather; here the loop
is an LLVM function on ``<8 x i64>`` / ``<8 x double>`` vectors: the two 64-bit multiplies of
``mix64`` as vector multiplies, the abscissa converted exactly by the bit trick of
:func:`rfcheck.engine.bits.u52_to_f64`, both tables read by ``llvm.masked.gather``, the fast
test's failures returned as the bits of a 64-bit mask.  The same integer operations and the
same two floating-point operations per candidate (``(2^52 + a) - 2^52``, then ``a w``), so
the numbers are those of the Numba loop and of the plain-Python twin bit for bit; on CPUs
without 8-wide vectors LLVM splits each operation in two (AVX2: two 4-wide halves).

Measured (2026-11-27, one thread, 2,080 normals per call, alternating with the Numba loop):
1.47-1.50 -> 0.92-0.95 ns per normal on the AVX-512 build; on the AVX2 build of the same machine
(``rfcheck.bench.target_env("avx2")``) it was *slower*, 1.55 -> 1.83-1.87 ns (no 64-bit vector
multiply, no 8-wide registers), so it is used only where the compile target has AVX-512F and
AVX-512DQ (:data:`WIDE`); elsewhere :func:`rfcheck.engine.rng.fill_normals` keeps its Numba loop.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from rfcheck.engine.llvm_vectors import splat, target_features, vector_ptr

__all__ = ["WIDE", "fast_pass", "wide_int_vectors"]

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


WIDE = wide_int_vectors(target_features())
"""Whether this process compiles for a target where :func:`fast_pass` is used."""


def _vec(value: int) -> ir.Constant:
    return ir.Constant(_VI, [value] * _W)


def _function(module: ir.Module) -> ir.Function:
    """``i64 rfcheck.zig_fast(s, g, out, nvec, w, k)``: candidates ``1 .. 8 nvec`` of the chunk
    starting at state ``s`` into ``out``; bit ``i`` of the result set where candidate ``i + 1``
    fails the fast test."""
    name = "rfcheck.zig_fast"
    ptr = _F64.as_pointer()
    fn = cgutils.get_or_insert_function(module, ir.FunctionType(_I64, [_I64, _I64, ptr, _I64, ptr, ptr]), name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    s, g, out, nvec, wtab, ktab = fn.args
    out.add_attribute("noalias")
    gather = cgutils.get_or_insert_function(
        module, ir.FunctionType(_VF, [_VP, _I32, _VB, _VF]), "llvm.masked.gather.v8f64.v8p0")
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    gv = splat(b, g, _VI)
    z0 = b.add(splat(b, s, _VI), b.mul(ir.Constant(_VI, list(range(1, _W + 1))), gv))
    step = b.mul(gv, _vec(_W))
    wbase = splat(b, b.ptrtoint(wtab, _I64), _VI)
    kbase = splat(b, b.ptrtoint(ktab, _I64), _VI)
    b.cbranch(b.icmp_signed(">", nvec, ir.Constant(_I64, 0)), loop, done)

    b.position_at_end(loop)
    v = b.phi(_I64)
    v.add_incoming(ir.Constant(_I64, 0), entry)
    z = b.phi(_VI)
    z.add_incoming(z0, entry)
    mask = b.phi(_I64)
    mask.add_incoming(ir.Constant(_I64, 0), entry)
    x = b.mul(b.xor(z, b.lshr(z, _vec(30))), _vec(_MIX1))
    x = b.mul(b.xor(x, b.lshr(x, _vec(27))), _vec(_MIX2))
    r = b.xor(x, b.lshr(x, _vec(31)))
    off = b.shl(b.and_(r, _vec((1 << _LAYER_BITS) - 1)), _vec(3))  # layer * 8 bytes
    rr = b.lshr(r, _vec(_LAYER_BITS))
    neg = b.icmp_unsigned("!=", b.and_(rr, _vec(1)), _vec(0))
    mant = b.and_(b.lshr(rr, _vec(1)), _vec(_MANT))
    fa = b.fsub(b.bitcast(b.or_(mant, _vec(_EXP52)), _VF), ir.Constant(_VF, [2.0**52] * _W))
    every = ir.Constant(_VB, [1] * _W)
    align = ir.Constant(_I32, 8)
    w = b.call(gather, [b.inttoptr(b.add(wbase, off), _VP), align, every, ir.Constant(_VF, ir.Undefined)])
    k = b.call(gather, [b.inttoptr(b.add(kbase, off), _VP), align, every, ir.Constant(_VF, ir.Undefined)])
    cand = b.fmul(fa, w)
    dst = vector_ptr(b, out, b.mul(v, ir.Constant(_I64, _W)), _VF)
    b.store(b.select(neg, b.fneg(cand), cand), dst, align=8)
    fails = b.zext(b.bitcast(b.fcmp_ordered(">=", fa, k), ir.IntType(_W)), _I64)
    nmask = b.or_(mask, b.shl(fails, b.mul(v, ir.Constant(_I64, _W))))
    nv = b.add(v, ir.Constant(_I64, 1), flags=["nuw", "nsw"])
    v.add_incoming(nv, loop)
    z.add_incoming(b.add(z, step), loop)
    mask.add_incoming(nmask, loop)
    b.cbranch(b.icmp_signed("<", nv, nvec), loop, done)

    b.position_at_end(done)
    res = b.phi(_I64)
    res.add_incoming(ir.Constant(_I64, 0), entry)
    res.add_incoming(nmask, loop)
    b.ret(res)
    return fn


def _is_f64_vector(t: types.Type) -> bool:
    return isinstance(t, types.Array) and t.ndim == 1 and t.layout == "C" and t.dtype == types.float64


@intrinsic
def fast_pass(typingctx, s, g, out, start, nvec, wtab, ktab):
    """``mask = fast_pass(s, g, out, start, nvec, wtab, ktab)``: the fast pass over candidates
    ``1 .. 8 nvec`` (``nvec <= 8``) of a chunk of :func:`rfcheck.engine.rng.fill_normals` whose
    state is ``s`` and increment ``g`` (``uint64``): their candidates into
    ``out[start:start + 8 nvec]`` (contiguous, not overlapping the tables; not bounds-checked),
    and bit ``i`` of the returned ``uint64`` set where
    candidate ``i + 1`` fails the fast test ``a < k[layer]``.  ``wtab``, ``ktab``: the
    ziggurat's widths and fast-test bounds (``float64``, 1024 entries)."""
    if not (all(_is_f64_vector(t) for t in (out, wtab, ktab))
            and all(isinstance(t, types.Integer) for t in (start, nvec))):
        return None
    sig = types.uint64(types.uint64, types.uint64, out, types.int64, types.int64, wtab, ktab)

    def codegen(context, builder, signature, args):
        o, w, k = (context.make_array(t)(context, builder, a).data
                   for t, a in ((out, args[2]), (wtab, args[5]), (ktab, args[6])))
        return builder.call(_function(builder.module), [args[0], args[1], builder.gep(o, [args[3]]), args[4], w, k])

    return sig, codegen

"""The Householder row sweep of the orthogonal ensembles as an LLVM loop on ``noalias`` pointers.

Numba cannot tell LLVM that two arrays do not overlap (it has no ``restrict``; a ``noalias``
option for ``@njit`` was proposed and abandoned, numba/numba#9108).  So before a vectorised
loop that stores into one array and reads others, LLVM emits a runtime overlap check of every
stored array against every other one, and a scalar copy of the loop for when they overlap.
:func:`rfcheck.couplings._sweep_pair` updates three rows of ``X`` and two accumulators per pass
while reading two more rows: seven arrays, ~100 instructions of checks (with register spills)
before a vector loop of ~9 iterations of 22 instructions (d = 64, machine B, AVX2,
2026-11-26, from the assembly) -- about as long as the useful work, once per pass.

:func:`sweep_rows` emits the same loop as a separate LLVM function whose pointer arguments are
``noalias`` (C's ``restrict``), which is true of its callers: the rows of ``X`` and the rows
of the scratch ``vec`` it is given are distinct, non-overlapping ranges.  LLVM then vectorises
it without checks (and, inlining it, keeps the facts as scoped ``noalias`` metadata).  The
arithmetic is the loop's own, written once here: per column ``c``

    y_r = fma(b_r, wb[c], fma(a_r, wa[c], x_r[c]))     for each row r, stored into x_r[c]
    wc[c] = fma(g_{R-1}, y_{R-1}, ... fma(g_0, y_0, wc[c]))
    wd[c] = fma(h_{R-1}, y_{R-1}, ... fma(h_0, y_0, wd[c]))

each ``fma`` rounded once (``llvm.fma.f64``, as :func:`rfcheck.bits.fma`), so the numbers are
those of the plain-Python twin (:func:`rfcheck.couplings._py_haar_columns`) to the last bit,
whichever vector width LLVM picks.  Callers must pass non-overlapping ranges: overlapping
ones are undefined behaviour here, as with ``restrict`` in C.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["sweep_rows"]

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)


def _sweep_function(module: ir.Module, rows: int) -> ir.Function:
    """The LLVM function ``rfcheck.sweep_rows.<rows>`` of ``module`` (defined on first use).

    Arguments: ``rows`` row pointers, ``wa, wb, wc, wd`` pointers (all ``noalias``), then the
    ``4 rows`` coefficients ``a_r, b_r`` (interleaved), ``g_r, h_r`` (interleaved), then the
    column count ``n`` (``>= 0``).
    """
    name = f"rfcheck.sweep_rows.{rows}"
    ptr = _F64.as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [ptr] * (rows + 4) + [_F64] * (4 * rows) + [_I64])
    fn = cgutils.get_or_insert_function(module, fnty, name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    for a in fn.args[:rows + 4]:
        a.add_attribute("noalias")
    xs = fn.args[:rows]
    wa, wb, wc, wd = fn.args[rows:rows + 4]
    coef = fn.args[rows + 4:rows + 4 + 4 * rows]
    ab = coef[:2 * rows]
    gh = coef[2 * rows:]
    n = fn.args[-1]

    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(_I64, 0)), loop, done)

    b.position_at_end(loop)
    c = b.phi(_I64, name="c")
    c.add_incoming(ir.Constant(_I64, 0), entry)

    def at(p: ir.Argument) -> ir.Instruction:
        return b.gep(p, [c], inbounds=True)

    def load(p: ir.Argument) -> ir.Instruction:
        return b.load(at(p), align=8)

    pa = load(wa)
    pb = load(wb)
    ys = []
    for r, x in enumerate(xs):
        y = b.fma(ab[2 * r + 1], pb, b.fma(ab[2 * r], pa, load(x)))
        b.store(y, at(x), align=8)
        ys.append(y)
    for k, w in enumerate((wc, wd)):
        acc = load(w)
        for r, y in enumerate(ys):
            acc = b.fma(gh[2 * r + k], y, acc)
        b.store(acc, at(w), align=8)
    nxt = b.add(c, ir.Constant(_I64, 1), flags=["nuw", "nsw"])
    c.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)

    b.position_at_end(done)
    b.ret_void()
    return fn


@intrinsic
def sweep_rows(typingctx, xs, wa, wb, wc, wd, ab, gh, n):
    """``R`` rows ``xs`` (a tuple of 1-D float64 arrays) swept as in the module docstring over
    columns ``0 .. n-1`` of the views given; ``ab = (a_0, b_0, ..., a_{R-1}, b_{R-1})``,
    ``gh = (g_0, h_0, ...)`` (tuples of float64), ``n`` an integer.  All seven-or-so arrays
    must be distinct, non-overlapping, contiguous ranges of at least ``n`` elements (not
    checked: this is the kernel under a checked caller)."""
    if not isinstance(xs, types.UniTuple) or not isinstance(ab, types.UniTuple):
        return None
    rows = xs.count
    arr = types.Array(types.float64, 1, "C")
    if xs.dtype != arr or any(w != arr for w in (wa, wb, wc, wd)):
        return None
    if ab != types.UniTuple(types.float64, 2 * rows) or gh != ab:
        return None
    if not isinstance(n, types.Integer):
        return None
    sig = types.void(xs, wa, wb, wc, wd, ab, gh, n)

    def codegen(context, builder, signature, args):
        xs_v, wa_v, wb_v, wc_v, wd_v, ab_v, gh_v, n_v = args

        def data(ty, v):
            return context.make_array(ty)(context, builder, v).data

        ptrs = [data(arr, builder.extract_value(xs_v, r)) for r in range(rows)]
        ptrs += [data(arr, v) for v in (wa_v, wb_v, wc_v, wd_v)]
        coefs = [builder.extract_value(ab_v, k) for k in range(2 * rows)]
        coefs += [builder.extract_value(gh_v, k) for k in range(2 * rows)]
        nn = context.cast(builder, n_v, n, types.int64)
        builder.call(_sweep_function(builder.module, rows), ptrs + coefs + [nn])
        return context.get_dummy_value()

    return sig, codegen

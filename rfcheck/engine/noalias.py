"""The Householder row sweep of the orthogonal ensembles as an LLVM loop on ``noalias`` pointers.

Numba cannot tell LLVM that two arrays do not overlap (it has no ``restrict``; a ``noalias``
option for ``@njit`` was proposed and abandoned, numba/numba#9108).  So before a vectorised
loop that stores into one array and reads others, LLVM emits a runtime overlap check of every
stored array against every other one, and a scalar copy of the loop for when they overlap.
:func:`rfcheck.engine.couplings._sweep_pair` updates three rows of ``X`` and two accumulators per pass
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

each ``fma`` rounded once (``llvm.fma.f64``, as :func:`rfcheck.engine.bits.fma`), so the numbers are
those of the plain-Python twin (:func:`rfcheck.engine.couplings._py_haar_columns`) to the last bit,
whichever vector width LLVM picks.  Callers must pass non-overlapping ranges: overlapping
ones are undefined behaviour here, as with ``restrict`` in C.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["LANES", "LANE_COLS", "lane_sweep", "sweep_rows"]

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


# --------------------------------------------------------------------------- lane-interleaved sweep
LANES = 8
"""Trials factored side by side by :func:`lane_sweep` (the innermost, vector axis of its arrays)."""

LANE_COLS = 4
"""Columns of ``X`` that one :func:`lane_sweep` call updates together (they share the loads of
the reflector coefficients of a row); the callers pad the column count to a multiple."""


def _lane_sweep_function(module: ir.Module, lanes: int, ncols: int) -> ir.Function:
    """The LLVM function ``rfcheck.lane_sweep.<lanes>.<ncols>`` of ``module`` (defined on first use).

    Arguments (pointers ``noalias``): ``x`` (the first of ``ncols`` columns of ``X``, each
    ``d`` rows of ``lanes`` doubles, one after the other), ``coef`` (row ``r0`` of one pair's
    coefficients: per row ``a, b, g, h``, each ``lanes`` doubles), ``w`` (state: ``wa, wb``
    read, ``wc, wd`` written, each ``ncols x lanes`` doubles), then ``r0`` and ``d``.  Per row
    ``i = r0 .. d-1`` and column ``j``, lane by lane::

        y = fma(b_i, wb_j, fma(a_i, wa_j, x_j[i]));  x_j[i] = y
        wc_j = fma(g_i, y, wc_j);  wd_j = fma(h_i, y, wd_j)        (wc_j, wd_j start at +0)

    every ``fma`` rounded once (``llvm.fma.v<lanes>f64``), rows in increasing order: per lane,
    the operations of :func:`sweep_rows` on one trial, so its numbers to the last bit.
    """
    name = f"rfcheck.lane_sweep.{lanes}.{ncols}"
    ptr = _F64.as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr, _I64, _I64])
    fn = cgutils.get_or_insert_function(module, fnty, name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    for a in fn.args[:3]:
        a.add_attribute("noalias")
    x, coef, w, r0, d = fn.args
    vty = ir.VectorType(_F64, lanes)
    vptr = vty.as_pointer()
    fma = cgutils.get_or_insert_function(module, ir.FunctionType(vty, [vty, vty, vty]),
                                         f"llvm.fma.v{lanes}f64")

    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)

    def vload(p, off):
        return b.load(b.bitcast(b.gep(p, [off], inbounds=True), vptr), align=8)

    def vstore(v, p, off):
        b.store(v, b.bitcast(b.gep(p, [off], inbounds=True), vptr), align=8)

    def c64(v):
        return ir.Constant(_I64, v)

    nl = ncols * lanes
    wa = [vload(w, c64(j * lanes)) for j in range(ncols)]
    wb = [vload(w, c64(nl + j * lanes)) for j in range(ncols)]
    zero = ir.Constant(vty, [0.0] * lanes)
    colstride = b.mul(d, c64(lanes))
    b.cbranch(b.icmp_signed("<", r0, d), loop, done)

    b.position_at_end(loop)
    i = b.phi(_I64, name="i")
    i.add_incoming(r0, entry)
    accs = []
    for _ in range(2 * ncols):
        ph = b.phi(vty)
        ph.add_incoming(zero, entry)
        accs.append(ph)
    crow = b.mul(b.sub(i, r0), c64(4 * lanes))
    ca = vload(coef, crow)
    cb = vload(coef, b.add(crow, c64(lanes)))
    cg = vload(coef, b.add(crow, c64(2 * lanes)))
    ch = vload(coef, b.add(crow, c64(3 * lanes)))
    xrow = b.mul(i, c64(lanes))
    new = []
    for j in range(ncols):
        off = b.add(xrow, b.mul(colstride, c64(j))) if j else xrow
        xv = vload(x, off)
        y = b.call(fma, [cb, wb[j], b.call(fma, [ca, wa[j], xv])])
        vstore(y, x, off)
        new.append((b.call(fma, [cg, y, accs[2 * j]]), b.call(fma, [ch, y, accs[2 * j + 1]])))
    nxt = b.add(i, c64(1), flags=["nsw"])
    i.add_incoming(nxt, loop)
    for j in range(ncols):
        accs[2 * j].add_incoming(new[j][0], loop)
        accs[2 * j + 1].add_incoming(new[j][1], loop)
    b.cbranch(b.icmp_signed("<", nxt, d), loop, done)

    b.position_at_end(done)
    outs = []
    for j in range(ncols):
        for k in range(2):
            ph = b.phi(vty)
            ph.add_incoming(zero, entry)
            ph.add_incoming(new[j][k], loop)
            outs.append((ph, (2 + k) * nl + j * lanes))
    for ph, off in outs:
        vstore(ph, w, c64(off))
    b.ret_void()
    return fn


@intrinsic
def lane_sweep(typingctx, x, xoff, coef, coff, w, r0, d):
    """One reflector pair applied to :data:`LANE_COLS` columns of :data:`LANES` trials at once
    (:func:`_lane_sweep_function`): ``x[xoff:]`` the columns, ``coef[coff:]`` the pair's rows
    ``r0 .. d-1``, ``w`` (``4 LANE_COLS LANES``) the state.  The three arrays must be distinct
    contiguous float64 arrays, large enough (not checked: this is the kernel under a checked
    caller)."""
    arr = types.Array(types.float64, 1, "C")
    if x != arr or coef != arr or w != arr:
        return None
    if not all(isinstance(t, types.Integer) for t in (xoff, coff, r0, d)):
        return None
    sig = types.void(x, xoff, coef, coff, w, r0, d)

    def codegen(context, builder, signature, args):
        x_v, xo, c_v, co, w_v, r0_v, d_v = args
        tys = signature.args

        def data(v):
            return context.make_array(arr)(context, builder, v).data

        def i64(v, ty):
            return context.cast(builder, v, ty, types.int64)

        px = builder.gep(data(x_v), [i64(xo, tys[1])], inbounds=True)
        pc = builder.gep(data(c_v), [i64(co, tys[3])], inbounds=True)
        fn = _lane_sweep_function(builder.module, LANES, LANE_COLS)
        builder.call(fn, [px, pc, data(w_v), i64(r0_v, tys[5]), i64(d_v, tys[6])])
        return context.get_dummy_value()

    return sig, codegen

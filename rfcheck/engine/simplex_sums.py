"""The row sums of the simplex transform (SimRF Algorithm 1) as an LLVM kernel on 4 x 4 tiles.

A simplex block (:func:`rfcheck.engine.couplings.simrf._simrf_block`) needs, for each row ``i``
of the Haar columns ``X`` (a coordinate), the signed row sum ``y_i = kinv sum_{j < k} s_j
X[i, j]`` (``s_j = +-1`` the Householder signs).  Each sum is a chain
of dependent additions in column order (the order the plain-Python twin adds in), so a row's sum
is bound by the latency of an addition per column; written as a Numba loop over four rows at a
time it ran ~4 cycles per column of four rows (Zen 4).  Rows are independent, so here they run in the
lanes: four rows' 4 x 4 tiles are loaded, multiplied by the signs (lanes = columns), transposed
in registers (lanes = rows) and added column by column into the group's sums; four groups (16
rows) are in flight at once.  ``X`` is only read: storing the signed tiles back (as the loop did,
for the next loop to read) kept the compiler from moving the next tile's loads above those stores
(the rows are one array) and cost as much as the sums; the caller multiplies by the sign where it
reads ``X`` again (exact: ``s_j = +-1``).  The operations per row are the loop's, in its order
(the sign product, then ``s = s + v`` from ``+0`` in column order, then ``kinv s``), so the numbers
are the same bit for bit.  Measured: see :func:`signed_row_sums`.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from rfcheck.engine.llvm_vectors import F64_C1 as _A1
from rfcheck.engine.llvm_vectors import F64_C2 as _A2
from rfcheck.engine.llvm_vectors import V4 as _V4
from rfcheck.engine.llvm_vectors import counted_loop, i64, load_column, splat, transpose4, vector_ptr

__all__ = ["signed_row_sums"]

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)


def _sums_function(module: ir.Module, k: int) -> ir.Function:
    """``void rfcheck.signed_row_sums.<k>(x, ldx, ncol, sg, ys, scale)``: for the ``4 k`` rows
    starting at ``x + r ldx``, ``ys[r] = scale * sum_{j < ncol} x[r, j] sg[j]`` (each product
    rounded, the sum from ``+0`` in column order); columns in 4 x 4 tiles, then the ``ncol mod 4``
    last one by one."""
    name = f"rfcheck.signed_row_sums.{k}"
    ptr = _F64.as_pointer()
    fn = cgutils.get_or_insert_function(
        module, ir.FunctionType(ir.VoidType(), [ptr, _I64, _I64, ptr, ptr, _F64]), name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    x, ldx, ncol, sg, ys, scale = fn.args
    for a in (x, sg, ys):
        a.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    rows = [b.gep(x, [b.mul(i64(r), ldx)], inbounds=True) for r in range(4 * k)]
    ntile = b.lshr(ncol, i64(2))
    first = b.shl(ntile, i64(2))

    def sum_tile(b, t, acc):
        j = b.shl(t, i64(2))
        sv = b.load(vector_ptr(b, sg, j, _V4), align=8)
        acc = list(acc)
        for g in range(k):
            signed = [b.fmul(b.load(vector_ptr(b, rows[4 * g + r], j, _V4), align=8), sv)
                      for r in range(4)]
            for col in transpose4(b, signed):  # lanes = rows: the columns in order
                acc[g] = b.fadd(acc[g], col)
        return acc

    def sum_column(b, j, acc):
        sj = splat(b, b.load(b.gep(sg, [j], inbounds=True), align=8), _V4)
        return [b.fadd(a, b.fmul(col, sj)) for a, col in zip(acc, load_column(b, rows, j), strict=True)]

    zero = [ir.Constant(_V4, [0.0] * 4)] * k
    b, acc = counted_loop(fn, b, i64(0), ntile, zero, sum_tile, "sum")
    b, acc = counted_loop(fn, b, first, ncol, acc, sum_column, "sum1")
    sc = splat(b, scale, _V4)
    for g in range(k):
        b.store(b.fmul(sc, acc[g]), vector_ptr(b, ys, i64(4 * g), _V4), align=8)
    b.ret_void()
    return fn


@intrinsic
def _signed_row_sums(typingctx, X, i0, ncol, sg, ys, scale, k):
    if X != _A2 or sg != _A1 or ys != _A1 or not isinstance(k, types.IntegerLiteral):
        return None
    sig = types.void(X, i0, ncol, sg, ys, types.float64, k)

    def codegen(context, builder, signature, args):
        xa = context.make_array(_A2)(context, builder, args[0])
        i, n = (context.cast(builder, a, t, types.int64)
                for a, t in zip(args[1:3], signature.args[1:3], strict=True))
        ldx = builder.extract_value(xa.shape, 1)
        xp = builder.gep(xa.data, [builder.mul(i, ldx)], inbounds=True)
        sp = context.make_array(_A1)(context, builder, args[3]).data
        yp = builder.gep(context.make_array(_A1)(context, builder, args[4]).data, [i], inbounds=True)
        fn = _sums_function(builder.module, signature.args[6].literal_value)
        builder.call(fn, [xp, ldx, n, sp, yp, args[5]])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, error_model="numpy", inline="always")
def signed_row_sums(X, ncol, sg, ys, scale, d):
    """The signed sums of the rows ``i < d - d mod 4`` of ``X`` (module docstring): ``ys[i] = scale
    * s_i`` with ``s_i`` the sum of ``X[i, j] * sg[j]`` over ``j < ncol``, from ``+0`` in column
    order; returns ``d - d mod 4``, the first row left to the caller.  Per row, bit for bit the
    loop ``s = 0; for j: s += X[i, j] * sg[j]``, then ``scale * s``.

    Parameters
    ----------
    X : numpy.ndarray of float64, shape (>= d, >= ncol)
        C-contiguous; only read.
    ncol : int
        The columns summed (``>= 0``).
    sg : numpy.ndarray of float64, shape (>= ncol,)
        The signs (any factors), C-contiguous, not overlapping ``X`` or ``ys``.
    ys : numpy.ndarray of float64, shape (>= d,)
        The scaled sums (C-contiguous, not overlapping ``X``).
    scale : float
        The factor of every sum (Algorithm 1's ``1 / sqrt(d - 1)``).
    d : int
        The rows to sum.

    Returns
    -------
    int
        ``d - d mod 4``: the rows from it on are left to the caller.

    Notes
    -----
    Shapes are not checked (Numba does not check bounds).  Measured (2026-11-28, one thread of an
    AMD Zen 4 core, d = 64, ``k = 63`` columns, the former Numba loop of four rows at a time and
    this kernel in one process, 21 alternating rounds;
    ``results/bench/2026-11-28-zen4/ab_simplex_sums.py``): 1,125 -> 415 ns per block (median;
    paired ratio 2.72x).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.simplex_sums import signed_row_sums
    >>> X = np.random.default_rng(0).standard_normal((6, 7))
    >>> sg, ys = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 0.0]), np.zeros(6)
    >>> signed_row_sums(X, 6, sg, ys, 0.5, 6)
    4
    >>> bool(np.allclose(ys[:4], 0.5 * (X[:4, :6] * sg[:6]).sum(axis=1))), bool(np.all(ys[4:] == 0))
    (True, True)
    """
    i = 0
    while i + 16 <= d:  # four groups in flight: four chains of vector additions
        _signed_row_sums(X, i, ncol, sg, ys, scale, 4)
        i += 16
    while i + 4 <= d:
        _signed_row_sums(X, i, ncol, sg, ys, scale, 1)
        i += 4
    return i

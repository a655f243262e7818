"""The SimRF+ Gauss-Seidel row update as an LLVM kernel on 8-wide vectors.

One step of SimRF+ (SimRF sec 3.2, eq (17); :func:`rfcheck.engine.couplings.simrf_plus._plus_update`)
replaces row ``x_j`` of a block by ``-|x_j| (T - x_j) / |T - x_j|``, ``T`` the running sum
of the rows.  The steps of a pass are sequential (each reads the ``T`` the previous one left),
so a pass is bound by the latency of each step: a squared norm, a square root, a division.
Written as Numba loops, each step went through memory four times and the eight partial sums
of its norms (the order of :func:`rfcheck.engine.couplings.simrf_plus._py_dot8`) were scalar
chains; here a step is one LLVM function on ``<8 x double>`` vectors: ``rest = T - x``, its squared norm with the eight
partial sums as the eight lanes, the update, the move's squared norm -- the same operations
in the same order (a product rounded, then a sum rounded; lanes ``i mod 8``; the partial
sums combined as ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))``), so the numbers are
those of the Numba loops and the plain-Python twin bit for bit.

Rows are padded with zeros to a multiple of 8 (the caller keeps the pad lanes zero): a pad
lane adds ``+0`` to a partial sum of squares (never ``-0``), which leaves it unchanged.  This
needs the scale ``nj / |T - x_j|`` finite (true for SimRF+'s callers, whose ``nj = |x_j|``): an
infinite one would turn the pad lanes into NaN where the twin has none.

:func:`plus_apply` is the pass with its factors known (SimRF+'s scalar route,
:func:`rfcheck.engine.couplings.simrf_plus._plus_apply_columns`), on the block where it lies in
``W^T`` (coordinate ``i`` a row, the block's rows ``j`` its columns): per coordinate, ``T`` the
sum of the entries from ``+0`` in column order, then for each column ``rest = T - x_j``,
``x_j <- -(f_j rest)``, ``T <- rest + x_j`` -- a chain of dependent operations over the columns.
Coordinates are independent, so they run in the lanes: four rows' 4 x 4 tiles are loaded,
transposed in registers (lanes = coordinates), stepped through, transposed back and stored; four
such vectors (16 coordinates) are in flight at once, to cover the chain's latency.  The
operations per coordinate are the scalar loop's, in its order (no ``fma``), so the numbers are
the same bit for bit.  Measured (2026-11-28, one thread of an AMD Zen 3 core, d = b = 64, the
former Numba loop of eight scalar chains and this kernel in one process, alternating rounds;
``results/bench/2026-11-28-am-zen3/ab_plus_apply.py``): the pass 4.26 -> 2.89 us median (paired
ratio 1.51x; 1.56x-1.78x in three earlier runs).  Groups of eight coordinates (two vectors in
flight) were no faster (1.53x-1.56x) and groups of 32 slower (1.07x-1.29x: they spill),
as was keeping the sum pass's transposed tiles in scratch for the update (1.09x-1.46x).
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from rfcheck.engine.llvm_vectors import F64_C1 as _A1
from rfcheck.engine.llvm_vectors import F64_C2 as _A2
from rfcheck.engine.llvm_vectors import V4 as _V4
from rfcheck.engine.llvm_vectors import counted_loop, load_column, load_tiles, splat, transpose4, vector_ptr

__all__ = ["plus_apply", "plus_step"]

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)
_I32 = ir.IntType(32)
_VW = 8
_VEC = ir.VectorType(_F64, _VW)


def _vptr(b: ir.IRBuilder, base: ir.Value, k: ir.Value) -> ir.Value:
    return vector_ptr(b, base, b.mul(k, ir.Constant(_I64, _VW)), _VEC)


def _hsum(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    s = [b.extract_element(v, ir.Constant(_I32, i)) for i in range(_VW)]
    return b.fadd(b.fadd(b.fadd(s[0], s[1]), b.fadd(s[2], s[3])),
                  b.fadd(b.fadd(s[4], s[5]), b.fadd(s[6], s[7])))


def _sq_loop(fn: ir.Function, b: ir.IRBuilder, ptr: ir.Value, nv: ir.Value, tag: str) -> tuple:
    """Emit ``acc = sum_k ptr[k]^2`` lane-wise over ``nv >= 1`` vectors (product, then sum)."""

    def step(b: ir.IRBuilder, k: ir.Value, accs: list) -> list:
        r = b.load(_vptr(b, ptr, k), align=8)
        return [b.fadd(accs[0], b.fmul(r, r))]

    b, (acc,) = counted_loop(fn, b, ir.Constant(_I64, 0), nv, [ir.Constant(_VEC, [0.0] * _VW)], step, tag)
    return b, acc


def _step_function(module: ir.Module) -> ir.Function:
    """``double rfcheck.plus_step(x, tot, rest, dv, nv, nj, want_move)``: the step of the module
    docstring on row ``x`` (``nv`` vectors); returns ``-1`` if the row is left alone
    (``|T - x| = 0`` or ``nj = 0``), else the move's norm over ``nj`` if ``want_move``, else 0."""
    name = "rfcheck.plus_step"
    ptr = _F64.as_pointer()
    fnty = ir.FunctionType(_F64, [ptr, ptr, ptr, ptr, _I64, _F64, _I64])
    fn = cgutils.get_or_insert_function(module, fnty, name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    x, tot, rest, dv, nv, nj, want = fn.args
    for a in (x, tot, rest, dv):
        a.add_attribute("noalias")
    entry = fn.append_basic_block("entry")
    b = ir.IRBuilder(entry)
    # rest = tot - x
    head = b.block
    l1 = fn.append_basic_block("rest")
    b.branch(l1)
    b.position_at_end(l1)
    k = b.phi(_I64)
    k.add_incoming(ir.Constant(_I64, 0), head)
    b.store(b.fsub(b.load(_vptr(b, tot, k), align=8), b.load(_vptr(b, x, k), align=8)), _vptr(b, rest, k), align=8)
    nk = b.add(k, ir.Constant(_I64, 1), flags=["nuw", "nsw"])
    k.add_incoming(nk, l1)
    l1d = fn.append_basic_block("rest.done")
    b.cbranch(b.icmp_signed("<", nk, nv), l1, l1d)
    b.position_at_end(l1d)
    b, acc = _sq_loop(fn, b, rest, nv, "rn")
    rn = b.call(module.declare_intrinsic("llvm.sqrt", [_F64]), [_hsum(b, acc)])
    zero = ir.Constant(_F64, 0.0)
    skip = b.or_(b.fcmp_ordered("==", rn, zero), b.fcmp_ordered("==", nj, zero))
    upd = fn.append_basic_block("update")
    ret_skip = fn.append_basic_block("skip")
    b.cbranch(skip, ret_skip, upd)
    b.position_at_end(ret_skip)
    b.ret(ir.Constant(_F64, -1.0))
    b.position_at_end(upd)
    f = b.fdiv(nj, rn)
    fv = splat(b, f, _VEC)
    head = b.block
    l2 = fn.append_basic_block("upd.loop")
    b.branch(l2)
    b.position_at_end(l2)
    k = b.phi(_I64)
    k.add_incoming(ir.Constant(_I64, 0), head)
    r = b.load(_vptr(b, rest, k), align=8)
    xo = b.load(_vptr(b, x, k), align=8)
    nkv = b.fneg(b.fmul(fv, r))
    b.store(b.fsub(nkv, xo), _vptr(b, dv, k), align=8)
    b.store(b.fadd(r, nkv), _vptr(b, tot, k), align=8)
    b.store(nkv, _vptr(b, x, k), align=8)
    nk = b.add(k, ir.Constant(_I64, 1), flags=["nuw", "nsw"])
    k.add_incoming(nk, l2)
    l2d = fn.append_basic_block("upd.done")
    b.cbranch(b.icmp_signed("<", nk, nv), l2, l2d)
    b.position_at_end(l2d)
    mv = fn.append_basic_block("move")
    ret0 = fn.append_basic_block("nomove")
    b.cbranch(b.icmp_signed("!=", want, ir.Constant(_I64, 0)), mv, ret0)
    b.position_at_end(ret0)
    b.ret(zero)
    b.position_at_end(mv)
    b, acc2 = _sq_loop(fn, b, dv, nv, "dj")
    dj = b.fdiv(b.call(module.declare_intrinsic("llvm.sqrt", [_F64]), [_hsum(b, acc2)]), nj)
    b.ret(dj)
    return fn


@intrinsic
def _plus_step(typingctx, x, tot, rest, dv, nv, nj, want):
    if any(a != _A1 for a in (x, tot, rest, dv)):
        return None
    sig = types.float64(x, tot, rest, dv, types.int64, types.float64, types.int64)

    def codegen(context, builder, signature, args):
        ptrs = [context.make_array(_A1)(context, builder, a).data for a in args[:4]]
        return builder.call(_step_function(builder.module), [*ptrs, *args[4:]])

    return sig, codegen


@njit(cache=True, error_model="numpy", inline="always")
def plus_step(x, tot, rest, dv, nv, nj, want_move):
    """One SimRF+ step on row ``x`` (module docstring): ``x`` and the running sum ``tot`` updated in
    place, ``rest`` and ``dv`` scratch; all four contiguous, distinct, ``>= 8 nv`` long, their
    entries past the row's length zero.  Returns ``-1`` if the row was left alone, else (with
    ``want_move``) the move ``|x_new - x_old| / nj``, or 0.

    Parameters
    ----------
    x : numpy.ndarray of float64, shape (>= 8 nv,)
        The row ``x_j``, zero-padded; replaced by ``-nj (T - x_j) / |T - x_j|``.
    tot : numpy.ndarray of float64, shape (>= 8 nv,)
        The running sum ``T`` of the block's rows, zero-padded; updated to ``T - x_old + x_new``.
    rest, dv : numpy.ndarray of float64, shape (>= 8 nv,)
        Scratch, overwritten (``T - x_old`` and ``x_new - x_old``).
    nv : int
        The number of 8-wide vectors in a row (``pad8(d) / 8``).
    nj : float
        The row's norm ``|x_j|``, kept by the update (finite: see the module docstring).
    want_move : bool
        Whether to compute the move's norm.

    Returns
    -------
    float
        ``-1.0`` if the row was left alone (``|T - x_j| = 0`` or ``nj = 0``); otherwise
        ``|x_new - x_old| / nj`` if ``want_move``, else ``0.0``.

    Notes
    -----
    None of the preconditions (lengths, contiguity, distinct arrays, zero pad lanes) is checked:
    the kernel reads and writes ``8 nv`` entries of each array.

    Examples
    --------
    A row of norm ``sqrt(5)`` with the other rows summing to ``y`` moves to ``-sqrt(5) y / |y|``:

    >>> import numpy as np
    >>> from rfcheck.engine.gauss_seidel import plus_step
    >>> x0 = np.array([1.0, 2.0, 0, 0, 0, 0, 0, 0])
    >>> y = np.array([0.5, -1.0, 3.0, 0, 0, 0, 0, 0])
    >>> x, tot, rest, dv = x0.copy(), x0 + y, np.zeros(8), np.zeros(8)
    >>> nj = float(np.sqrt(5.0))
    >>> move = plus_step(x, tot, rest, dv, 1, nj, True)
    >>> new = -nj * y / np.linalg.norm(y)
    >>> bool(np.allclose(x, new)), bool(np.allclose(tot, y + new))
    (True, True)
    >>> bool(np.isclose(move, np.linalg.norm(new - x0) / nj)), plus_step(x, tot, rest, dv, 1, 0.0, True)
    (True, -1.0)
    """
    return _plus_step(x, tot, rest, dv, nv, nj, 1 if want_move else 0)


def _apply_function(module: ir.Module, k: int) -> ir.Function:
    """``void rfcheck.plus_apply.<k>(w, ldw, nb, f)``: the pass of :func:`plus_apply` on the ``4 k``
    coordinates whose rows start at ``w + r ldw`` (``r < 4 k``), over columns ``j < nb``, with
    factors ``f[j]``; columns in 4 x 4 tiles, then the ``nb mod 4`` last one by one."""
    name = f"rfcheck.plus_apply.{k}"
    ptr = _F64.as_pointer()
    fn = cgutils.get_or_insert_function(module, ir.FunctionType(ir.VoidType(), [ptr, _I64, _I64, ptr]), name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    w, ldw, nb, f = fn.args
    w.add_attribute("noalias")
    f.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    rows = [b.gep(w, [b.mul(ir.Constant(_I64, r), ldw)], inbounds=True) for r in range(4 * k)]
    ntile = b.lshr(nb, ir.Constant(_I64, 2))
    first = b.shl(ntile, ir.Constant(_I64, 2))
    lanes = [ir.Constant(_I32, q) for q in range(4)]

    def step(b, fj, t, x):  # the scalar loop's rest = t - x; x <- -(f_j rest); t <- rest + x
        rest = b.fsub(t, x)
        new = b.fneg(b.fmul(fj, rest))
        return b.fadd(rest, new), new

    def sum_tile(b, t, tot):
        cols = load_tiles(b, rows, b.shl(t, ir.Constant(_I64, 2)))
        for q in range(4):
            tot = [b.fadd(tot[g], cols[g][q]) for g in range(k)]
        return tot

    def sum_column(b, j, tot):
        return [b.fadd(a, x) for a, x in zip(tot, load_column(b, rows, j), strict=True)]

    def apply_tile(b, t, tot):
        j = b.shl(t, ir.Constant(_I64, 2))
        cols = load_tiles(b, rows, j)
        tot = list(tot)  # counted_loop's phi nodes stay in its list
        new = [[None] * 4 for _ in range(k)]
        for q in range(4):
            fj = splat(b, b.load(b.gep(f, [b.add(j, ir.Constant(_I64, q))], inbounds=True), align=8), _V4)
            for g in range(k):
                tot[g], new[g][q] = step(b, fj, tot[g], cols[g][q])
        for g in range(k):
            for r, v in enumerate(transpose4(b, new[g])):
                b.store(v, vector_ptr(b, rows[4 * g + r], j, _V4), align=8)
        return tot

    def apply_column(b, j, tot):
        fj = splat(b, b.load(b.gep(f, [j], inbounds=True), align=8), _V4)
        out = []
        for g, x in enumerate(load_column(b, rows, j)):
            t, new = step(b, fj, tot[g], x)
            for r in range(4):
                b.store(b.extract_element(new, lanes[r]), b.gep(rows[4 * g + r], [j], inbounds=True), align=8)
            out.append(t)
        return out

    zero = [ir.Constant(_V4, [0.0] * 4)] * k
    b, tot = counted_loop(fn, b, ir.Constant(_I64, 0), ntile, zero, sum_tile, "sum")
    b, tot = counted_loop(fn, b, first, nb, tot, sum_column, "sum1")
    b, tot = counted_loop(fn, b, ir.Constant(_I64, 0), ntile, tot, apply_tile, "apply")
    b, _ = counted_loop(fn, b, first, nb, tot, apply_column, "apply1")
    b.ret_void()
    return fn


@intrinsic
def _plus_apply(typingctx, Wt, i0, m0, nb, f, k):
    if Wt != _A2 or f != _A1 or not isinstance(k, types.IntegerLiteral):
        return None
    sig = types.void(Wt, i0, m0, nb, f, k)

    def codegen(context, builder, signature, args):
        wa = context.make_array(_A2)(context, builder, args[0])
        i, m, n = (context.cast(builder, a, t, types.int64)
                   for a, t in zip(args[1:4], signature.args[1:4], strict=True))
        ldw = builder.extract_value(wa.shape, 1)
        w = builder.gep(wa.data, [builder.add(builder.mul(i, ldw), m)], inbounds=True)
        fp = context.make_array(_A1)(context, builder, args[4]).data
        builder.call(_apply_function(builder.module, signature.args[5].literal_value), [w, ldw, n, fp])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, error_model="numpy", inline="always")
def plus_apply(Wt, m0, b, d, f):
    """The SimRF+ pass with known factors on the block ``Wt[:, m0:m0 + b]`` (module docstring), on
    its coordinates (rows of ``Wt``) ``i < d - d mod 4``; returns that count, the first coordinate
    left to the caller.  Per coordinate, bit for bit the loop ``t = 0; t += x[j]`` over ``j < b``,
    then ``rest = t - x[j]; x[j] = -(f[j] * rest); t = rest + x[j]``.

    Parameters
    ----------
    Wt : numpy.ndarray of float64, shape (>= d, >= m0 + b)
        ``W^T`` (C-contiguous), the block updated in place.
    m0, b : int
        The block's first column and its number of columns (``b >= 0``).
    d : int
        The coordinates (rows of ``Wt``) to update.
    f : numpy.ndarray of float64, shape (>= b,)
        The factors (C-contiguous, not overlapping ``Wt``).

    Returns
    -------
    int
        ``d - d mod 4``: the coordinates from it on are left to the caller.

    Notes
    -----
    Shapes are not checked (Numba does not check bounds).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.gauss_seidel import plus_apply
    >>> Wt, f = np.random.default_rng(0).standard_normal((9, 7)), np.full(7, 0.75)
    >>> want = Wt.copy()
    >>> for x in want[:8]:
    ...     t = 0.0
    ...     for j in range(1, 6):
    ...         t += x[j]
    ...     for j in range(1, 6):
    ...         rest = t - x[j]
    ...         x[j] = -(f[j - 1] * rest)
    ...         t = rest + x[j]
    >>> plus_apply(Wt, 1, 5, 9, f)
    8
    >>> bool(np.array_equal(Wt, want))
    True
    """
    i = 0
    while i + 16 <= d:  # four vectors in flight: the chain's subtraction, product and sum over four
        _plus_apply(Wt, i, m0, b, f, 4)
        i += 16
    while i + 4 <= d:
        _plus_apply(Wt, i, m0, b, f, 1)
        i += 4
    return i

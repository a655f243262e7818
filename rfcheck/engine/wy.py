"""Blocked (compact WY) Householder accumulation: the panel kernels of the orthogonal ensembles.

The Haar factor of an orthogonal ensemble is ``Q = H_0 H_1 ... H_{b-1}`` applied to
``I[:, :b]`` (:func:`rfcheck.engine.couplings._haar_columns`).  Applied one or two reflectors
at a time, every entry of ``X`` is loaded and stored once per pair of reflectors: the sweep is
matrix-vector shaped (BLAS-2) and runs at a fraction of the machine's FMA rate.  Here the
reflectors are taken :data:`NB` at a time (a *panel*, LAPACK's ``dlarft``/``dlarfb``): the
product of a panel's reflectors is ``P = I - V T V^T`` with ``V`` the panel's ``NB``
reflector vectors (rows ``j0 .. d-1``) and ``T`` an upper triangular ``NB x NB`` matrix
(:func:`panel_t`, from the Gram matrix ``G = V^T V``), and ``X <- P X`` is three small
matrix-matrix products per column chunk of 8:

    W  = V^T X[rows, chunk]            (8 x 8, accumulated over the rows in registers)
    W' = T W                           (in registers)
    X[rows, chunk] -= V W'             (each row loaded and stored once per panel)

so each entry of ``X`` is read and written once per ``NB = 8`` reflectors instead of once per
two, and the inner loops are register-tiled vector FMAs (8 accumulators of 8 doubles).  This is
the compact-WY form that LAPACK's blocked QR and Intel MKL's small-matrix routines use.

Arithmetic (fixed, so that the numbers are the same on every machine and equal the
plain-Python twin :func:`py_panel_apply` to the last bit): every operation is an IEEE
``fma`` (``llvm.fma``, rounded once) or a product, in this order --

- ``W[j, c] = fma(V[i, j], X[i, c], W[j, c])`` for ``i = r0, r0+1, ..., d-1``, from ``+0``;
- ``W'[j, c] = T[j, j] W[j, c]``, then ``W'[j, c] = fma(T[j, l], W[l, c], W'[j, c])`` for
  ``l = j+1, ..., 7``;
- ``X[i, c] = fma(-V[i, j], W'[j, c], X[i, c])`` for ``j = 0, ..., 7``.

The vector width only decides how many columns ``c`` share an instruction, never the order of
any sum.  The kernels are LLVM functions whose pointer arguments are ``noalias`` (as in
:mod:`rfcheck.engine.noalias`); callers pass non-overlapping arrays.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from rfcheck.engine.bits import fma, py_fma

__all__ = ["NB", "gram", "panel_apply", "panel_t", "py_gram", "py_panel_apply", "py_panel_t"]

NB = 8
"""Reflectors per panel (fixed: it decides the order of the sums, so the numbers)."""

_VW = 8  # doubles per chunk (the vector type <8 x double>)
_F64 = ir.DoubleType()
_I64 = ir.IntType(64)
_VEC = ir.VectorType(_F64, _VW)


def _splat(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    v = b.insert_element(ir.Constant(_VEC, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
    return b.shuffle_vector(v, ir.Constant(_VEC, ir.Undefined), ir.Constant(ir.VectorType(ir.IntType(32), _VW), [0] * _VW))


def _vload(b: ir.IRBuilder, base: ir.Value, off: ir.Value) -> ir.Value:
    p = b.bitcast(b.gep(base, [off], inbounds=True), _VEC.as_pointer())
    return b.load(p, align=8)


def _vstore(b: ir.IRBuilder, v: ir.Value, base: ir.Value, off: ir.Value) -> None:
    p = b.bitcast(b.gep(base, [off], inbounds=True), _VEC.as_pointer())
    b.store(v, p, align=8)


def _vfma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """``llvm.fma`` on ``<8 x double>`` (each lane rounded once)."""
    f = cgutils.get_or_insert_function(b.module, ir.FunctionType(_VEC, [_VEC] * 3), f"llvm.fma.v{_VW}f64")
    return b.call(f, [x, y, z])


def _const(v: int) -> ir.Constant:
    return ir.Constant(_I64, v)


def _emit_vtx(fn: ir.Function, b: ir.IRBuilder, x: ir.Value, ldx: ir.Value, v: ir.Value,
              r0: ir.Value, d: ir.Value, c: ir.Value, tag: str) -> tuple[ir.IRBuilder, list]:
    """Emit ``W = V^T X[r0:d, c:c+8]`` (8 vectors); returns the builder (at the loop's exit
    block) and the accumulators.  Requires ``r0 < d``."""
    zero = ir.Constant(_VEC, [0.0] * _VW)
    head = b.block
    loop = fn.append_basic_block(f"{tag}.vtx")
    done = fn.append_basic_block(f"{tag}.vtx.done")
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(_I64)
    i.add_incoming(r0, head)
    accs = []
    for j in range(NB):
        a = b.phi(_VEC)
        a.add_incoming(zero, head)
        accs.append(a)
    xr = _vload(b, x, b.add(b.mul(i, ldx), c))
    vrow = b.mul(i, _const(NB))
    new = []
    for j in range(NB):
        vij = b.load(b.gep(v, [b.add(vrow, _const(j))], inbounds=True), align=8)
        new.append(_vfma(b, _splat(b, vij), xr, accs[j]))
    for a, n in zip(accs, new, strict=True):
        a.add_incoming(n, loop)
    nxt = b.add(i, _const(1), flags=["nuw", "nsw"])
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, d), loop, done)
    b.position_at_end(done)
    return b, new


def _panel_function(module: ir.Module) -> ir.Function:
    """``rfcheck.wy_panel(X, ldx, V, T, r0, d, c0, c1)``: ``X[r0:d, c0:c1] <- (I - V T V^T) X``
    chunk by chunk (``c1 - c0`` a multiple of 8, ``r0 < d``)."""
    name = "rfcheck.wy_panel"
    ptr = _F64.as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [ptr, _I64, ptr, ptr, _I64, _I64, _I64, _I64])
    fn = cgutils.get_or_insert_function(module, fnty, name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    x, ldx, v, t, r0, d, c0, c1 = fn.args
    for a in (x, v, t):
        a.add_attribute("noalias")
    entry = fn.append_basic_block("entry")
    chunk = fn.append_basic_block("chunk")
    exit_ = fn.append_basic_block("exit")
    b = ir.IRBuilder(entry)
    b.cbranch(b.and_(b.icmp_signed("<", c0, c1), b.icmp_signed("<", r0, d)), chunk, exit_)

    b.position_at_end(chunk)
    c = b.phi(_I64)
    c.add_incoming(c0, entry)
    b, w = _emit_vtx(fn, b, x, ldx, v, r0, d, c, "p")
    # W' = T W, row j from its diagonal term up
    tv = [[b.load(b.gep(t, [_const(NB * j + l)], inbounds=True), align=8) for l in range(NB)]
          for j in range(NB)]
    wp = []
    for j in range(NB):
        acc = b.fmul(_splat(b, tv[j][j]), w[j])
        for l in range(j + 1, NB):
            acc = _vfma(b, _splat(b, tv[j][l]), w[l], acc)
        wp.append(acc)
    # X -= V W'
    head = b.block
    upd = fn.append_basic_block("p.upd")
    nextc = fn.append_basic_block("p.next")
    b.branch(upd)
    b.position_at_end(upd)
    i = b.phi(_I64)
    i.add_incoming(r0, head)
    off = b.add(b.mul(i, ldx), c)
    xr = _vload(b, x, off)
    vrow = b.mul(i, _const(NB))
    for j in range(NB):
        vij = b.load(b.gep(v, [b.add(vrow, _const(j))], inbounds=True), align=8)
        xr = _vfma(b, _splat(b, b.fneg(vij)), wp[j], xr)
    _vstore(b, xr, x, off)
    nxt = b.add(i, _const(1), flags=["nuw", "nsw"])
    i.add_incoming(nxt, upd)
    b.cbranch(b.icmp_signed("<", nxt, d), upd, nextc)
    b.position_at_end(nextc)
    cn = b.add(c, _const(_VW), flags=["nuw", "nsw"])
    c.add_incoming(cn, nextc)
    b.cbranch(b.icmp_signed("<", cn, c1), chunk, exit_)
    b.position_at_end(exit_)
    b.ret_void()
    return fn


def _gram_function(module: ir.Module) -> ir.Function:
    """``rfcheck.wy_gram(V, r0, d, G)``: ``G = V[r0:d]^T V[r0:d]`` (8 x 8; ``r0 < d``)."""
    name = "rfcheck.wy_gram"
    ptr = _F64.as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [ptr, _I64, _I64, ptr])
    fn = cgutils.get_or_insert_function(module, fnty, name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    v, r0, d, g = fn.args
    for a in (v, g):
        a.add_attribute("noalias")
    entry = fn.append_basic_block("entry")
    b = ir.IRBuilder(entry)
    b, w = _emit_vtx(fn, b, v, _const(NB), v, r0, d, _const(0), "g")
    for j in range(NB):
        _vstore(b, w[j], g, _const(NB * j))
    b.ret_void()
    return fn


_A2 = types.Array(types.float64, 2, "C")


def _data(context, builder, v):  # noqa: ANN001, ANN202
    return context.make_array(_A2)(context, builder, v)


@intrinsic
def _wy_panel(typingctx, X, V, T, r0, d, c0, c1):  # noqa: ANN001, ANN202, N803
    if X != _A2 or V != _A2 or T != _A2:
        return None
    sig = types.void(X, V, T, types.int64, types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        xa, va, ta = (_data(context, builder, a) for a in args[:3])
        ldx = builder.extract_value(xa.shape, 1)
        ints = [context.cast(builder, a, ty, types.int64) for a, ty in zip(args[3:], signature.args[3:], strict=True)]
        builder.call(_panel_function(builder.module), [xa.data, ldx, va.data, ta.data, *ints])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _wy_gram(typingctx, V, r0, d, G):  # noqa: ANN001, ANN202, N803
    if V != _A2 or G != _A2:
        return None
    sig = types.void(V, types.int64, types.int64, G)

    def codegen(context, builder, signature, args):
        va, ga = _data(context, builder, args[0]), _data(context, builder, args[3])
        ints = [context.cast(builder, a, ty, types.int64) for a, ty in zip(args[1:3], signature.args[1:3], strict=True)]
        builder.call(_gram_function(builder.module), [va.data, *ints, ga.data])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, error_model="numpy")
def gram(V, r0, d, G):
    """``G = V[r0:d]^T V[r0:d]`` for ``V`` of shape ``(>= d, 8)`` into ``G`` (8, 8), each entry
    ``fma``-accumulated over rows ``r0 .. d-1`` in increasing order (:func:`py_gram`)."""
    if r0 < d:
        _wy_gram(V, r0, d, G)
    else:
        G[:, :] = 0.0


@njit(cache=True, error_model="numpy")
def panel_t(G, taus, T):
    """The ``T`` of the panel ``H_0 ... H_7 = I - V T V^T`` (LAPACK ``dlarft``, forward,
    columnwise) into ``T`` (8, 8) from the Gram matrix ``G = V^T V`` and the reflectors' ``tau``:
    ``T[i, i] = tau_i``, ``T[l, i] = -(tau_i s)`` with ``s = T[l, l] G[l, i]`` then
    ``s = fma(T[l, m], G[m, i], s)`` for ``m = l+1 .. i-1``; zero below the diagonal."""
    for i in range(NB):
        for l in range(NB):
            T[i, l] = 0.0
    for i in range(NB):
        T[i, i] = taus[i]
        for l in range(i):
            s = T[l, l] * G[l, i]
            for m in range(l + 1, i):
                s = fma(T[l, m], G[m, i], s)
            T[l, i] = -(taus[i] * s)


@njit(cache=True, error_model="numpy")
def panel_apply(X, V, T, r0, d, c0, c1):
    """``X[r0:d, c0:c1] <- (I - V T V^T) X[r0:d, c0:c1]`` (module docstring; ``c1 - c0`` a
    multiple of 8, ``V`` of shape ``(>= d, 8)`` with row ``i`` the panel's reflectors at row
    ``i``, ``T`` (8, 8))."""
    if r0 < d and c0 < c1:
        _wy_panel(X, V, T, r0, d, c0, c1)


def py_gram(V: list, r0: int, d: int) -> list:
    """Plain-Python twin of :func:`gram` (rows of ``V`` as lists of 8)."""
    G = [[0.0] * NB for _ in range(NB)]
    for i in range(r0, d):
        for j in range(NB):
            for l in range(NB):
                G[j][l] = py_fma(V[i][j], V[i][l], G[j][l])
    return G


def py_panel_t(G: list, taus: list) -> list:
    """Plain-Python twin of :func:`panel_t`."""
    T = [[0.0] * NB for _ in range(NB)]
    for i in range(NB):
        T[i][i] = taus[i]
        for l in range(i):
            s = T[l][l] * G[l][i]
            for m in range(l + 1, i):
                s = py_fma(T[l][m], G[m][i], s)
            T[l][i] = -(taus[i] * s)
    return T


def py_panel_apply(X: list, V: list, T: list, r0: int, d: int, cols: range) -> None:
    """Plain-Python twin of :func:`panel_apply` on the columns ``cols`` (in place)."""
    for c in cols:
        w = [0.0] * NB
        for i in range(r0, d):
            for j in range(NB):
                w[j] = py_fma(V[i][j], X[i][c], w[j])
        wp = [0.0] * NB
        for j in range(NB):
            acc = T[j][j] * w[j]
            for l in range(j + 1, NB):
                acc = py_fma(T[j][l], w[l], acc)
            wp[j] = acc
        for i in range(r0, d):
            x = X[i][c]
            for j in range(NB):
                x = py_fma(-V[i][j], wp[j], x)
            X[i][c] = x

"""``W^T u`` of an ensemble as an LLVM kernel: the projections every ensemble trial computes.

An ensemble trial ends with ``proj[m] = sum_i u[i] Wt[i, m]`` over the ``d`` rows of ``Wt``
(:func:`rfcheck.engine.montecarlo._ensemble_jobs`).  Written as a Numba loop over the rows,
``proj`` went through memory once per row, behind a runtime overlap check per row (Numba has no
``restrict``); here the column chunks of ``proj`` stay in registers (four vectors of
:func:`rfcheck.engine.wy.vector_width` doubles a chunk, then single vectors, then single
columns) while the rows stream past, and the pointers are ``noalias``.  The arithmetic is the
loop's, in its order: from ``+0``, ``acc = acc + (u[i] * Wt[i, m])`` (a product rounded, then a
sum rounded; no ``fma``) for ``i = 0, 1, ..., d-1``, so the numbers are the same to the last
bit (:func:`column_sqnorms`: the same with ``Wt[i, m]^2``, the ``|w_m|^2`` of features with an
``alpha |w|^2`` term).  Measured (2026-11-27, one thread of the 2-core AVX-512 machine, d = M =
64, the loop's code and this one compiled into the same process and timed alternately, 30
rounds of 10,000 trials): an iid ensemble trial 4.38 -> 4.13 us median (-5.7%); ORF and SimRF
trials within +-2% (one run each: +1.3%, -2.0%; their run-to-run noise).
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from rfcheck.engine.llvm_vectors import F64_C1 as _A1
from rfcheck.engine.llvm_vectors import F64_C2 as _A2
from rfcheck.engine.llvm_vectors import counted_loop, i64, splat, target_features, vector_ptr
from rfcheck.engine.wy import vector_width

__all__ = ["column_sqnorms", "project"]

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)
_K = 4
"""Vectors per column chunk held in registers (4: measured against 8 on the AVX-512 machine,
where 8 made the SimRF and ORF trials around it slower by 1%-3%; 2026-11-27)."""



def _emit_chunks(fn: ir.Function, b: ir.IRBuilder, args: tuple, c0: ir.Value, width: int, vw: int,
                 tag: str, square: bool) -> tuple[ir.IRBuilder, ir.Value]:
    """Emit the loop over column chunks of ``width`` columns (``width / vw`` accumulators of
    ``vw`` lanes; ``vw = 1``: scalars) from ``c0`` while a whole chunk fits; returns the builder
    and the first column left.  ``square``: the terms are ``W[i, m]^2`` (``u`` unused)."""
    out, w, ldw, u, d, m = args
    k = width // vw
    vt = ir.VectorType(_F64, vw) if vw > 1 else _F64
    head = b.block
    chunk = fn.append_basic_block(f"{tag}.chunk")
    done = fn.append_basic_block(f"{tag}.done")
    b.cbranch(b.icmp_signed("<=", b.add(c0, i64(width)), m), chunk, done)
    b.position_at_end(chunk)
    c = b.phi(_I64)
    c.add_incoming(c0, head)
    zero = ir.Constant(vt, [0.0] * vw) if vw > 1 else ir.Constant(_F64, 0.0)

    def row(b: ir.IRBuilder, i: ir.Value, accs: list) -> list:
        if not square:
            ui = b.load(b.gep(u, [i], inbounds=True), align=8)
            us = splat(b, ui, vt) if vw > 1 else ui
        base = b.add(b.mul(i, ldw), c)
        new = []
        for j, a in enumerate(accs):
            off = b.add(base, i64(j * vw))
            wv = (b.load(vector_ptr(b, w, off, vt), align=8) if vw > 1
                  else b.load(b.gep(w, [off], inbounds=True), align=8))
            new.append(b.fadd(a, b.fmul(wv, wv) if square else b.fmul(us, wv)))
        return new

    b, sums = counted_loop(fn, b, i64(0), d, [zero] * k, row, f"{tag}.rows")
    for j, n in enumerate(sums):
        off = b.add(c, i64(j * vw))
        if vw > 1:
            b.store(n, vector_ptr(b, out, off, vt), align=8)
        else:
            b.store(n, b.gep(out, [off], inbounds=True), align=8)
    store = b.block
    nc = b.add(c, i64(width), flags=["nuw", "nsw"])
    c.add_incoming(nc, store)
    b.cbranch(b.icmp_signed("<=", b.add(nc, i64(width)), m), chunk, done)
    b.position_at_end(done)
    left = b.phi(_I64)
    left.add_incoming(c0, head)
    left.add_incoming(nc, store)
    return b, left


def _project_function(module: ir.Module, vw: int, square: bool = False) -> ir.Function:
    """``rfcheck.project.<vw>(out, W, ldw, u, d, M)``: ``out[m] = sum_i u[i] W[i ldw + m]`` for
    ``m < M`` (module docstring; ``d >= 1``); ``square``: ``rfcheck.sqnorms.<vw>``, the same with
    the terms ``W[i ldw + m]^2`` (``u`` unused)."""
    name = f"rfcheck.{'sqnorms' if square else 'project'}.{vw}"
    ptr = _F64.as_pointer()
    fn = cgutils.get_or_insert_function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr, _I64, ptr, _I64, _I64]),
                                        name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    for a in (fn.args[0], fn.args[1]) + (() if square else (fn.args[3],)):
        a.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    c = i64(0)
    for width, lanes, tag in ((_K * vw, vw, "wide"), (vw, vw, "one"), (1, 1, "col")):
        b, c = _emit_chunks(fn, b, tuple(fn.args), c, width, lanes, tag, square)
    b.ret_void()
    return fn


@intrinsic
def _project(typingctx, out, Wt, u, square):
    if out != _A1 or Wt != _A2 or u != _A1 or not isinstance(square, types.BooleanLiteral):
        return None

    def codegen(context, builder, signature, args):
        oa = context.make_array(_A1)(context, builder, args[0])
        wa = context.make_array(_A2)(context, builder, args[1])
        ua = context.make_array(_A1)(context, builder, args[2])
        d = builder.extract_value(wa.shape, 0)
        m = builder.extract_value(wa.shape, 1)
        fn = _project_function(builder.module, vector_width(target_features()), square.literal_value)
        builder.call(fn, [oa.data, wa.data, m, ua.data, d, m])
        return context.get_dummy_value()

    return types.void(out, Wt, u, square), codegen


@njit(cache=True, error_model="numpy", inline="always")
def project(out, Wt, u):
    """``out[m] = sum_i u[i] Wt[i, m]`` (``Wt`` of shape ``(d, M)``, ``d >= 1``), summed from
    ``+0`` over ``i = 0 .. d-1`` in order, each term a rounded product and each sum rounded:
    bit for bit the loop ``out[m] = 0; out[m] += u[i] * Wt[i, m]`` (module docstring).
    ``ValueError`` for shapes that do not fit.

    Parameters
    ----------
    out : numpy.ndarray of float64, shape (M,)
        Output (C-contiguous, not overlapping ``Wt`` or ``u``), overwritten.
    Wt : numpy.ndarray of float64, shape (d, M)
        The ensemble, column ``m`` the feature ``w_m`` (C-contiguous).
    u : numpy.ndarray of float64, shape (d,)
        The vector projected on (C-contiguous).

    Raises
    ------
    ValueError
        If ``out`` does not have ``M`` entries, ``u`` not ``d``, or ``d < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.project import project
    >>> rg = np.random.default_rng(0)
    >>> Wt, u, out = rg.standard_normal((7, 75)), rg.standard_normal(7), np.empty(75)
    >>> project(out, Wt, u)
    >>> ref = np.zeros(75)
    >>> for i in range(7):
    ...     ref = ref + u[i] * Wt[i]
    >>> bool(np.array_equal(out, ref))
    True
    """
    if out.shape[0] != Wt.shape[1] or u.shape[0] != Wt.shape[0] or Wt.shape[0] < 1:
        raise ValueError("project: Wt needs shape (d, M) with d >= 1, u (d,), out (M,)")
    _project(out, Wt, u, False)


@njit(cache=True, error_model="numpy", inline="always")
def column_sqnorms(out, Wt):
    """``out[m] = sum_i Wt[i, m]^2`` (``Wt`` of shape ``(d, M)``, ``d >= 1``), summed from ``+0``
    over ``i = 0 .. d-1`` in order, each square rounded and each sum rounded: bit for bit the loop
    ``out[m] = 0; out[m] += Wt[i, m] * Wt[i, m]`` (:func:`project`'s kernel with squared terms).

    Parameters
    ----------
    out : numpy.ndarray of float64, shape (M,)
        Output (C-contiguous, not overlapping ``Wt``), overwritten.
    Wt : numpy.ndarray of float64, shape (d, M)
        The ensemble (C-contiguous).

    Raises
    ------
    ValueError
        If ``out`` does not have ``M`` entries or ``d < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.project import column_sqnorms
    >>> Wt, out = np.random.default_rng(1).standard_normal((5, 70)), np.empty(70)
    >>> column_sqnorms(out, Wt)
    >>> ref = np.zeros(70)
    >>> for i in range(5):
    ...     ref = ref + Wt[i] * Wt[i]
    >>> bool(np.array_equal(out, ref))
    True
    """
    if out.shape[0] != Wt.shape[1] or Wt.shape[0] < 1:
        raise ValueError("column_sqnorms: Wt needs shape (d, M) with d >= 1, out (M,)")
    _project(out, Wt, out, True)

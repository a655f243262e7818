"""Blocked (compact WY) Householder accumulation: the panel kernels of the orthogonal ensembles.

The Haar factor of an orthogonal ensemble is ``Q = H_0 H_1 ... H_{b-1}`` applied to
``I[:, :b]`` (:func:`rfcheck.engine.couplings.orf._haar_columns`).  Applied one or two reflectors
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
two, and the inner loops are register-tiled vector FMAs (8 accumulators of 8 doubles on
AVX-512 targets, of 4 on others: :func:`vector_width`).  This is
the compact-WY form that LAPACK's blocked QR and Intel MKL's small-matrix routines use.
Measured (2026-11-27, one thread of the 2-core AVX-512 machine, d = b = 64, each part timed by
removing it): the panels of one Haar factor take ~4.2 us for their ~381k FLOPs, about one core's
share of that machine's dgemm rate; the row-pair sweep they replace (one or two reflectors per
pass over ``X``) ran the whole factor in ~14 us.  End to end an ORF ensemble trial (d = M = 64)
went from ~20.7 to ~12.5 us on that machine's AVX-512 build and from ~21 to ~16.7 us on its AVX2
build (``rfcheck.bench.target_env("avx2")``).

Arithmetic (fixed, so that the numbers are the same on every machine and equal the
plain-Python twin :func:`py_panel_apply` to the last bit): every operation is an IEEE
``fma`` (``llvm.fma``, rounded once) or a product, in this order --

- ``W[j, c] = fma(V[i, j], X[i, c], W[j, c])`` for ``i = r0, r0+1, ..., d-1``, from ``+0``;
- ``W'[j, c] = T[j, j] W[j, c]``, then ``W'[j, c] = fma(T[j, l], W[l, c], W'[j, c])`` for
  ``l = j+1, ..., 7``;
- ``X[i, c] = fma(-V[i, j], W'[j, c], X[i, c])`` for ``j = 0, ..., 7``.

The vector width only decides how many columns ``c`` share an instruction, never the order of
any sum.  The kernels are LLVM functions whose pointer arguments are ``noalias`` (C's
``restrict``, which Numba cannot express: without it LLVM guards vector loops with runtime
overlap checks); callers pass non-overlapping arrays.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from rfcheck.engine.bits import fma, py_fma
from rfcheck.engine.llvm_vectors import F64_C2 as _A2
from rfcheck.engine.llvm_vectors import counted_loop, i64, splat, target_features, vector_ptr

__all__ = ["NB", "gram", "panel_apply", "panel_t", "py_gram", "py_panel_apply", "py_panel_t", "vector_width"]

NB = 8
"""Reflectors per panel (fixed: it decides the order of the sums, so the numbers)."""

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)


def vector_width(features: str) -> int:
    """Doubles per chunk for LLVM CPU ``features``: 8 where the target has AVX-512 (its 32
    vector registers hold the 8 accumulators and the operands), else 4 (AVX2's 16 registers
    hold 8 four-wide accumulators; 8-wide ones would spill).  The width decides only how many
    columns share an instruction, never the numbers.

    Parameters
    ----------
    features : str
        LLVM's comma-separated feature list (``+avx512f,...``).

    Returns
    -------
    int
        8 or 4.

    Examples
    --------
    >>> vector_width("+avx2,+avx512f"), vector_width("+avx2,-avx512f")
    (8, 4)
    """
    return 8 if "+avx512f" in features.split(",") else 4


def _vt(vw: int) -> ir.VectorType:
    return ir.VectorType(_F64, vw)


def _splat(b: ir.IRBuilder, x: ir.Value, vw: int) -> ir.Value:
    return splat(b, x, _vt(vw))


def _vload(b: ir.IRBuilder, base: ir.Value, off: ir.Value, vw: int) -> ir.Value:
    return b.load(vector_ptr(b, base, off, _vt(vw)), align=8)


def _vstore(b: ir.IRBuilder, v: ir.Value, base: ir.Value, off: ir.Value) -> None:
    b.store(v, vector_ptr(b, base, off, v.type), align=8)


def _vfma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """``llvm.fma`` on vectors of doubles (each lane rounded once)."""
    vt = x.type
    f = cgutils.get_or_insert_function(b.module, ir.FunctionType(vt, [vt] * 3), f"llvm.fma.v{vt.count}f64")
    return b.call(f, [x, y, z])



def _emit_vtx(fn: ir.Function, b: ir.IRBuilder, x: ir.Value, ldx: ir.Value, v: ir.Value,
              lo: ir.Value, hi: ir.Value, c: ir.Value, tag: str, vw: int) -> tuple[ir.IRBuilder, list]:
    """Emit ``W = V[lo:hi]^T X[lo:hi, c:c+vw]`` (8 vectors, ``+0`` if ``lo >= hi``); returns
    the builder (at the loop's exit block) and the accumulators."""
    zero = ir.Constant(_vt(vw), [0.0] * vw)

    def row(b: ir.IRBuilder, i: ir.Value, accs: list) -> list:
        xr = _vload(b, x, b.add(b.mul(i, ldx), c), vw)
        vrow = b.mul(i, i64(NB))
        new = []
        for j in range(NB):
            vij = b.load(b.gep(v, [b.add(vrow, i64(j))], inbounds=True), align=8)
            new.append(_vfma(b, _splat(b, vij, vw), xr, accs[j]))
        return new

    return counted_loop(fn, b, lo, hi, [zero] * NB, row, f"{tag}.vtx")


def _panel_function(module: ir.Module, vw: int) -> ir.Function:
    """``rfcheck.wy_panel.<vw>(X, ldx, V, T, r0, d, c0, c1, structured)``: ``X[r0:d, c0:c1] <-
    (I - V T V^T) X`` chunk by chunk of ``vw`` columns (``c1 - c0`` a multiple of 8, ``r0 < d``).  With
    ``structured != 0`` the caller guarantees the zeros of a backward accumulation
    (:func:`panel_apply`) and ``W = V^T X`` skips the rows where ``X`` is zero."""
    name = f"rfcheck.wy_panel.{vw}"
    ptr = _F64.as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [ptr, _I64, ptr, ptr, _I64, _I64, _I64, _I64, _I64])
    fn = cgutils.get_or_insert_function(module, fnty, name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    x, ldx, v, t, r0, d, c0, c1, structured = fn.args
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
    # rows of X that can be nonzero in this chunk: all, or (structured) the panel's own 8 rows
    # in its own columns and the rows below them elsewhere
    r8 = b.add(r0, i64(NB))
    r8d = b.select(b.icmp_signed("<", r8, d), r8, d)
    st_on = b.icmp_signed("!=", structured, i64(0))
    own = b.icmp_signed("<", c, r8)
    lo = b.select(b.and_(st_on, b.not_(own)), r8d, r0)
    hi = b.select(b.and_(st_on, own), r8d, d)
    b, w = _emit_vtx(fn, b, x, ldx, v, lo, hi, c, "p", vw)
    # W' = T W, row j from its diagonal term up
    tv = [[b.load(b.gep(t, [i64(NB * j + k)], inbounds=True), align=8) for k in range(NB)]
          for j in range(NB)]
    wp = []
    for j in range(NB):
        acc = b.fmul(_splat(b, tv[j][j], vw), w[j])
        for k in range(j + 1, NB):
            acc = _vfma(b, _splat(b, tv[j][k], vw), w[k], acc)
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
    xr = _vload(b, x, off, vw)
    vrow = b.mul(i, i64(NB))
    for j in range(NB):
        vij = b.load(b.gep(v, [b.add(vrow, i64(j))], inbounds=True), align=8)
        xr = _vfma(b, _splat(b, b.fneg(vij), vw), wp[j], xr)
    _vstore(b, xr, x, off)
    nxt = b.add(i, i64(1), flags=["nuw", "nsw"])
    i.add_incoming(nxt, upd)
    b.cbranch(b.icmp_signed("<", nxt, d), upd, nextc)
    b.position_at_end(nextc)
    cn = b.add(c, i64(vw), flags=["nuw", "nsw"])
    c.add_incoming(cn, nextc)
    b.cbranch(b.icmp_signed("<", cn, c1), chunk, exit_)
    b.position_at_end(exit_)
    b.ret_void()
    return fn


def _gram_function(module: ir.Module, vw: int) -> ir.Function:
    """``rfcheck.wy_gram.<vw>(V, r0, d, G)``: ``G = V[r0:d]^T V[r0:d]`` (8 x 8; ``r0 < d``), in
    column chunks of ``vw``."""
    name = f"rfcheck.wy_gram.{vw}"
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
    for c in range(0, NB, vw):
        b, w = _emit_vtx(fn, b, v, i64(NB), v, r0, d, i64(c), f"g{c}", vw)
        for j in range(NB):
            _vstore(b, w[j], g, i64(NB * j + c))
    b.ret_void()
    return fn


def _data(context, builder, v):
    return context.make_array(_A2)(context, builder, v)


@intrinsic
def _wy_panel(typingctx, X, V, T, r0, d, c0, c1, structured):
    if X != _A2 or V != _A2 or T != _A2:
        return None
    sig = types.void(X, V, T, types.int64, types.int64, types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        xa, va, ta = (_data(context, builder, a) for a in args[:3])
        ldx = builder.extract_value(xa.shape, 1)
        ints = [context.cast(builder, a, ty, types.int64) for a, ty in zip(args[3:], signature.args[3:], strict=True)]
        vw = vector_width(target_features())
        builder.call(_panel_function(builder.module, vw), [xa.data, ldx, va.data, ta.data, *ints])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _wy_gram(typingctx, V, r0, d, G):
    if V != _A2 or G != _A2:
        return None
    sig = types.void(V, types.int64, types.int64, G)

    def codegen(context, builder, signature, args):
        va, ga = _data(context, builder, args[0]), _data(context, builder, args[3])
        ints = [context.cast(builder, a, ty, types.int64) for a, ty in zip(args[1:3], signature.args[1:3], strict=True)]
        vw = vector_width(target_features())
        builder.call(_gram_function(builder.module, vw), [va.data, *ints, ga.data])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, error_model="numpy")
def gram(V, r0, d, G):
    """``G = V[r0:d]^T V[r0:d]`` for ``V`` of shape ``(>= d, 8)`` into ``G`` (8, 8), each entry
    ``fma``-accumulated over rows ``r0 .. d-1`` in increasing order (:func:`py_gram`).
    ``ValueError`` for other shapes.

    Parameters
    ----------
    V : numpy.ndarray of float64, shape (>= d, 8)
        The panel (C-contiguous; row ``i`` holds the 8 reflectors' entries at row ``i``).
    r0, d : int
        The rows summed, ``r0 .. d-1`` (``G = 0`` if ``r0 >= d``).
    G : numpy.ndarray of float64, shape (8, 8)
        Output (C-contiguous, not overlapping ``V``), overwritten.

    Raises
    ------
    ValueError
        If ``V`` does not have 8 columns and at least ``d`` rows, or ``G`` is not (8, 8).

    Examples
    --------
    Bit for bit the plain-Python twin, and ``V^T V`` to rounding:

    >>> import numpy as np
    >>> from rfcheck.engine.wy import gram, py_gram
    >>> V, G = np.random.default_rng(0).standard_normal((13, 8)), np.empty((8, 8))
    >>> gram(V, 2, 13, G)
    >>> bool(np.array_equal(G, py_gram(V.tolist(), 2, 13))), bool(np.allclose(G, V[2:].T @ V[2:]))
    (True, True)
    >>> gram(V, 0, 13, np.empty((8, 7)))
    Traceback (most recent call last):
    ...
    ValueError: gram: V needs shape (>= d, 8) and G (8, 8)
    """
    if V.shape[1] != NB or V.shape[0] < d or G.shape[0] != NB or G.shape[1] != NB:
        raise ValueError("gram: V needs shape (>= d, 8) and G (8, 8)")
    if r0 < d:
        _wy_gram(V, r0, d, G)
    else:
        G[:, :] = 0.0


@njit(cache=True, error_model="numpy")
def panel_t(G, taus, T):
    """The ``T`` of the panel ``H_0 ... H_7 = I - V T V^T`` (LAPACK ``dlarft``, forward,
    columnwise) into ``T`` (8, 8) from the Gram matrix ``G = V^T V`` and the reflectors' ``tau``:
    ``T[i, i] = tau_i``, ``T[l, i] = -(tau_i s)`` with ``s = T[l, l] G[l, i]`` then
    ``s = fma(T[l, m], G[m, i], s)`` for ``m = l+1 .. i-1``; zero below the diagonal.

    Parameters
    ----------
    G : numpy.ndarray of float64, shape (8, 8)
        The panel's Gram matrix ``V^T V`` (:func:`gram`; entries ``G[m, i]``, ``m < i``, are
        read).
    taus : numpy.ndarray of float64, shape (>= 8,)
        The reflectors' ``tau_i`` (``H_i = I - tau_i v_i v_i^T``; 0 for an absent reflector).
    T : numpy.ndarray of float64, shape (8, 8)
        Output, overwritten (upper triangular).

    Raises
    ------
    ValueError
        If ``G`` or ``T`` is not (8, 8), or ``taus`` has fewer than 8 entries.

    Examples
    --------
    With ``tau_i = 2 / |v_i|^2`` (reflections), ``I - V T V^T`` is the product of the eight
    reflections, and ``T`` is the plain-Python twin's bit for bit:

    >>> import numpy as np
    >>> from rfcheck.engine.wy import gram, panel_t, py_panel_t
    >>> V = np.random.default_rng(1).standard_normal((10, 8))
    >>> G, T, taus = np.empty((8, 8)), np.empty((8, 8)), 2.0 / (V * V).sum(axis=0)
    >>> gram(V, 0, 10, G)
    >>> panel_t(G, taus, T)
    >>> H = np.eye(10)
    >>> for i in range(8):
    ...     H = H @ (np.eye(10) - taus[i] * np.outer(V[:, i], V[:, i]))
    >>> bool(np.allclose(np.eye(10) - V @ T @ V.T, H)), bool(np.array_equal(T, py_panel_t(G.tolist(), taus.tolist())))
    (True, True)
    """
    if G.shape[0] != NB or G.shape[1] != NB or T.shape[0] != NB or T.shape[1] != NB or taus.shape[0] < NB:
        raise ValueError("panel_t: G and T need shape (8, 8), taus 8 entries")
    for i in range(NB):
        for k in range(NB):
            T[i, k] = 0.0
    for i in range(NB):
        T[i, i] = taus[i]
        for k in range(i):
            s = T[k, k] * G[k, i]
            for m in range(k + 1, i):
                s = fma(T[k, m], G[m, i], s)
            T[k, i] = -(taus[i] * s)


@njit(cache=True, error_model="numpy")
def panel_apply(X, V, T, r0, d, c0, c1, structured=False):
    """``X[r0:d, c0:c1] <- (I - V T V^T) X[r0:d, c0:c1]`` (module docstring; ``c1 - c0`` a
    multiple of 8, ``V`` of shape ``(>= d, 8)`` with row ``i`` the panel's reflectors at row
    ``i``, ``T`` (8, 8)).

    ``structured``: the caller guarantees what a backward accumulation from ``I`` leaves at
    panel ``r0`` (a multiple of 8, ``c0 = r0``): ``X[r0:r0+8, c] = +0`` for ``c >= r0 + 8`` and
    ``X[r0+8:, r0:r0+8] = +0``, ``V`` finite; ``W = V^T X`` then skips those rows.  The numbers
    are those of the full sums (:func:`py_panel_apply`) bit for bit: in a chunk of later
    columns the skipped rows come first, so the full sum runs ``fma(v, +0, +0) = +0`` (``v``
    finite) until the first kept row; in the panel's own columns the kept rows hold exactly the
    identity's 0 and 1, so each accumulator there is one finite ``V`` entry or ``+0``, and adding
    the skipped ``v * (+0)`` leaves it unchanged.  ``ValueError`` for shapes that do not fit.

    Parameters
    ----------
    X : numpy.ndarray of float64, shape (>= d, >= c1)
        Updated in place (C-contiguous; rows ``r0 .. d-1`` of columns ``c0 .. c1-1`` change).
    V : numpy.ndarray of float64, shape (>= d, 8)
        The panel's reflector vectors (C-contiguous, not overlapping ``X`` or ``T``).
    T : numpy.ndarray of float64, shape (8, 8)
        The panel's ``T`` (:func:`panel_t`).
    r0, d : int
        The rows, ``r0 .. d-1`` (nothing is done if ``r0 >= d``).
    c0, c1 : int
        The columns, ``c0 .. c1-1``: ``0 <= c0``, ``c1 <= X.shape[1]``, ``c1 - c0`` a multiple
        of 8.
    structured : bool, default False
        Whether the caller guarantees the zeros of a backward accumulation described above
        (not checked: where they do not hold, the result is wrong).

    Raises
    ------
    ValueError
        If ``V`` is not ``(>= d, 8)``, ``T`` not (8, 8), ``X`` has fewer than ``d`` rows, or the
        columns ``c0 .. c1`` do not lie in ``X`` with ``c1 - c0`` a multiple of 8.

    Examples
    --------
    Bit for bit the plain-Python twin, and ``(I - V T V^T) X`` to rounding:

    >>> import numpy as np
    >>> from rfcheck.engine.wy import gram, panel_apply, panel_t, py_panel_apply
    >>> rg = np.random.default_rng(2)
    >>> V, X = rg.standard_normal((12, 8)), rg.standard_normal((12, 16))
    >>> G, T = np.empty((8, 8)), np.empty((8, 8))
    >>> gram(V, 0, 12, G)
    >>> panel_t(G, 2.0 / (V * V).sum(axis=0), T)
    >>> Y, Z = X.copy(), X.tolist()
    >>> panel_apply(Y, V, T, 0, 12, 0, 16)
    >>> py_panel_apply(Z, V.tolist(), T.tolist(), 0, 12, range(16))
    >>> bool(np.array_equal(Y, Z)), bool(np.allclose(Y, (np.eye(12) - V @ T @ V.T) @ X))
    (True, True)
    >>> panel_apply(Y, V, T, 0, 12, 0, 12)
    Traceback (most recent call last):
    ...
    ValueError: panel_apply: columns c0 .. c1 must lie in X, c1 - c0 a multiple of 8
    """
    if V.shape[1] != NB or T.shape[0] != NB or T.shape[1] != NB or V.shape[0] < d or X.shape[0] < d:
        raise ValueError("panel_apply: V needs shape (>= d, 8), T (8, 8), X >= d rows")
    if c1 > X.shape[1] or (c1 - c0) % 8 != 0 or c0 < 0:
        raise ValueError("panel_apply: columns c0 .. c1 must lie in X, c1 - c0 a multiple of 8")
    if r0 < d and c0 < c1:
        _wy_panel(X, V, T, r0, d, c0, c1, 1 if structured else 0)


def py_gram(V: list, r0: int, d: int) -> list:
    """Plain-Python twin of :func:`gram`: ``G = V[r0:d]^T V[r0:d]``, bit for bit.

    Parameters
    ----------
    V : list of list of float
        The panel, ``>= d`` rows of 8 numbers.
    r0, d : int
        The rows summed, ``r0 .. d-1`` (in increasing order, each product ``fma``-added).

    Returns
    -------
    list of list of float
        ``G`` (8 x 8).

    Examples
    --------
    >>> py_gram([[1.0, 2.0] + [0.0] * 6, [3.0, 4.0] + [0.0] * 6], 0, 2)[0][:2]
    [10.0, 14.0]
    """
    G = [[0.0] * NB for _ in range(NB)]
    for i in range(r0, d):
        for j in range(NB):
            for k in range(NB):
                G[j][k] = py_fma(V[i][j], V[i][k], G[j][k])
    return G


def py_panel_t(G: list, taus: list) -> list:
    """Plain-Python twin of :func:`panel_t` (LAPACK ``dlarft``, forward, columnwise), bit for bit.

    Parameters
    ----------
    G : list of list of float
        The panel's Gram matrix ``V^T V`` (8 x 8; entries ``G[m][i]``, ``m < i``, are used).
    taus : list of float
        The 8 reflectors' ``tau`` (0 for an absent reflector).

    Returns
    -------
    list of list of float
        ``T`` (8 x 8, upper triangular) with ``H_0 ... H_7 = I - V T V^T``.

    Examples
    --------
    Two orthogonal reflectors commute and their ``T`` is diagonal:

    >>> G = [[0.0] * 8 for _ in range(8)]
    >>> T = py_panel_t(G, [2.0, 1.0] + [0.0] * 6)
    >>> T[0][:2], T[1][:2]
    ([2.0, -0.0], [0.0, 1.0])
    """
    T = [[0.0] * NB for _ in range(NB)]
    for i in range(NB):
        T[i][i] = taus[i]
        for k in range(i):
            s = T[k][k] * G[k][i]
            for m in range(k + 1, i):
                s = py_fma(T[k][m], G[m][i], s)
            T[k][i] = -(taus[i] * s)
    return T


def py_panel_apply(X: list, V: list, T: list, r0: int, d: int, cols: range) -> None:
    """Plain-Python twin of :func:`panel_apply`: ``X[r0:d, c] <- (I - V T V^T) X[r0:d, c]`` for
    ``c`` in ``cols``, in place, bit for bit (the order of the module docstring).

    Parameters
    ----------
    X : list of list of float
        The matrix updated (rows ``r0 .. d-1`` change).
    V : list of list of float
        The panel, ``>= d`` rows of 8 numbers.
    T : list of list of float
        The panel's ``T`` (:func:`py_panel_t`).
    r0, d : int
        The rows.
    cols : range
        The columns.

    Examples
    --------
    One reflector ``v = (1, 1)``, ``tau = 1`` swaps the two rows of ``X`` and negates them:

    >>> X = [[1.0], [0.0]]
    >>> V = [[1.0] + [0.0] * 7, [1.0] + [0.0] * 7]
    >>> T = [[1.0] + [0.0] * 7] + [[0.0] * 8 for _ in range(7)]
    >>> py_panel_apply(X, V, T, 0, 2, range(1))
    >>> X
    [[0.0], [-1.0]]
    """
    for c in cols:
        w = [0.0] * NB
        for i in range(r0, d):
            for j in range(NB):
                w[j] = py_fma(V[i][j], X[i][c], w[j])
        wp = [0.0] * NB
        for j in range(NB):
            acc = T[j][j] * w[j]
            for k in range(j + 1, NB):
                acc = py_fma(T[j][k], w[k], acc)
            wp[j] = acc
        for i in range(r0, d):
            x = X[i][c]
            for j in range(NB):
                x = py_fma(-V[i][j], wp[j], x)
            X[i][c] = x

"""Small LLVM IR helpers shared by the engine's vector kernels (:mod:`rfcheck.engine.wy`,
:mod:`rfcheck.engine.gauss_seidel`, :mod:`rfcheck.engine.simplex_sums`,
:mod:`rfcheck.engine.simd_ziggurat`, :mod:`rfcheck.engine.project`): an ``i64`` constant, a
broadcast, a vector pointer into a ``double`` array, a counted loop with accumulators, the CPU name
and features Numba compiles for in this process, the 4 x 4 tiles of the kernels that run the rows
of a matrix in the lanes of ``<4 x double>`` vectors, and the Numba array types the kernels
accept."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from numba import types

__all__ = ["F64_C1", "F64_C2", "V4", "counted_loop", "i64", "load_column", "load_tiles", "splat",
           "target_cpu", "target_features", "transpose4", "vector_ptr"]

F64_C1 = types.Array(types.float64, 1, "C")
"""The Numba type of a C-contiguous ``float64`` vector (what the kernels' intrinsics accept)."""

F64_C2 = types.Array(types.float64, 2, "C")
"""The Numba type of a C-contiguous ``float64`` matrix."""

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def i64(v: int) -> ir.Constant:
    """The LLVM ``i64`` constant ``v`` (an index or a count in the kernels' IR).

    Parameters
    ----------
    v : int
        The value (``-2**63 <= v < 2**64``).

    Returns
    -------
    llvmlite.ir.Constant
        The constant, of type ``i64``.

    Examples
    --------
    >>> str(i64(8))
    'i64 8'
    """
    return ir.Constant(_I64, v)


def splat(b: ir.IRBuilder, x: ir.Value, vt: ir.VectorType) -> ir.Value:
    """The vector of type ``vt`` with every lane ``x`` (``insertelement`` + ``shufflevector``).

    Parameters
    ----------
    b : llvmlite.ir.IRBuilder
        The builder, positioned where the broadcast goes.
    x : llvmlite.ir.Value
        A scalar of ``vt``'s element type.
    vt : llvmlite.ir.VectorType
        The vector type.

    Returns
    -------
    llvmlite.ir.Value
        The broadcast.

    Examples
    --------
    >>> from llvmlite import ir
    >>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [ir.DoubleType()]), "f")
    >>> b = ir.IRBuilder(fn.append_basic_block())
    >>> str(splat(b, fn.args[0], ir.VectorType(ir.DoubleType(), 4)).type)
    '<4 x double>'
    """
    v = b.insert_element(ir.Constant(vt, ir.Undefined), x, ir.Constant(_I32, 0))
    mask = ir.Constant(ir.VectorType(_I32, vt.count), [0] * vt.count)
    return b.shuffle_vector(v, ir.Constant(vt, ir.Undefined), mask)


def vector_ptr(b: ir.IRBuilder, base: ir.Value, off: ir.Value, vt: ir.VectorType) -> ir.Value:
    """A ``vt*`` pointer to ``base[off]`` (``base`` a pointer to ``vt``'s elements; ``off`` in
    elements).

    Parameters
    ----------
    b : llvmlite.ir.IRBuilder
        The builder.
    base : llvmlite.ir.Value
        The array's pointer.
    off : llvmlite.ir.Value
        The offset, an ``i64`` count of elements.
    vt : llvmlite.ir.VectorType
        The vector type loaded or stored there.

    Returns
    -------
    llvmlite.ir.Value
        The pointer (loads and stores through it need only element alignment).

    Examples
    --------
    >>> from llvmlite import ir
    >>> f64 = ir.DoubleType()
    >>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [f64.as_pointer(), ir.IntType(64)]), "f")
    >>> b = ir.IRBuilder(fn.append_basic_block())
    >>> str(vector_ptr(b, fn.args[0], fn.args[1], ir.VectorType(f64, 8)).type)
    '<8 x double>*'
    """
    return b.bitcast(b.gep(base, [off], inbounds=True), vt.as_pointer())


def target_features() -> str:
    """LLVM's feature list of the CPU target Numba compiles for in this process (the host's, or
    ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``).

    Returns
    -------
    str
        Comma-separated features (``+avx2,+avx512f,...``).

    Examples
    --------
    >>> all(f[:1] in "+-" for f in target_features().split(",") if f)
    True
    """
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()[2]


def target_cpu() -> str:
    """LLVM's CPU name of the target Numba compiles for in this process (the host's, e.g.
    ``znver4``, or ``NUMBA_CPU_NAME``).

    Returns
    -------
    str
        The name (``generic`` where LLVM does not know the CPU).

    Examples
    --------
    >>> isinstance(target_cpu(), str) and target_cpu() != ""
    True
    """
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()[1]


def counted_loop(fn: ir.Function, b: ir.IRBuilder, lo: ir.Value, hi: ir.Value, inits: list,
                 body: Callable[[ir.IRBuilder, ir.Value, list], list], tag: str) -> tuple[ir.IRBuilder, list]:
    """Emit ``for i in range(lo, hi): accs = body(b, i, accs)`` with the accumulators carried in
    ``phi`` nodes (registers), the loop skipped if ``lo >= hi``.

    Parameters
    ----------
    fn : llvmlite.ir.Function
        The function the loop's blocks are appended to.
    b : llvmlite.ir.IRBuilder
        The builder, positioned where the loop goes (its block ends with the loop's entry branch).
    lo, hi : llvmlite.ir.Value
        The ``i64`` bounds.
    inits : list of llvmlite.ir.Value
        The accumulators' values before the loop.
    body : callable
        ``body(b, i, accs)`` emits one iteration in ``b``'s current block (without new blocks)
        and returns the accumulators' next values.
    tag : str
        Prefix of the blocks' names.

    Returns
    -------
    tuple
        The builder, positioned after the loop, and the accumulators' final values (``inits``
        where the loop did not run).

    Examples
    --------
    >>> from llvmlite import ir
    >>> i64 = ir.IntType(64)
    >>> fn = ir.Function(ir.Module(), ir.FunctionType(i64, [i64]), "f")
    >>> b = ir.IRBuilder(fn.append_basic_block())
    >>> b, (total,) = counted_loop(fn, b, ir.Constant(i64, 0), fn.args[0], [ir.Constant(i64, 0)],
    ...                            lambda b, i, accs: [b.add(accs[0], i)], "sum")
    >>> _ = b.ret(total)
    >>> [blk.name for blk in fn.blocks][1:]
    ['sum.loop', 'sum.done']
    """
    head = b.block
    loop = fn.append_basic_block(f"{tag}.loop")
    done = fn.append_basic_block(f"{tag}.done")
    b.cbranch(b.icmp_signed("<", lo, hi), loop, done)
    b.position_at_end(loop)
    i = b.phi(_I64)
    i.add_incoming(lo, head)
    accs = []
    for v in inits:
        a = b.phi(v.type)
        a.add_incoming(v, head)
        accs.append(a)
    new = body(b, i, accs)
    for a, n in zip(accs, new, strict=True):
        a.add_incoming(n, loop)
    nxt = b.add(i, ir.Constant(_I64, 1), flags=["nuw", "nsw"])
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, hi), loop, done)
    b.position_at_end(done)
    out = []
    for v, n in zip(inits, new, strict=True):
        ph = b.phi(v.type)
        ph.add_incoming(v, head)
        ph.add_incoming(n, loop)
        out.append(ph)
    return b, out


V4 = ir.VectorType(ir.DoubleType(), 4)
"""``<4 x double>``, the vector of the 4 x 4 tiles."""


def transpose4(b: ir.IRBuilder, rows: list) -> list:
    """The 4 x 4 transpose of four ``<4 x double>`` (its own inverse): lane ``q`` of output ``r`` is
    lane ``r`` of input ``q``.

    Parameters
    ----------
    b : llvmlite.ir.IRBuilder
        The builder.
    rows : list of llvmlite.ir.Value
        Four ``<4 x double>`` values.

    Returns
    -------
    list of llvmlite.ir.Value
        The four columns (eight ``shufflevector``).

    Examples
    --------
    >>> from llvmlite import ir
    >>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [V4] * 4), "f")
    >>> b = ir.IRBuilder(fn.append_basic_block())
    >>> [str(c.type) for c in transpose4(b, list(fn.args))] == ["<4 x double>"] * 4
    True
    """

    def shuffle(p: ir.Value, q: ir.Value, lanes: list[int]) -> ir.Value:
        return b.shuffle_vector(p, q, ir.Constant(ir.VectorType(_I32, 4), lanes))

    t = [shuffle(rows[p], rows[p + 1], lanes) for p in (0, 2) for lanes in ([0, 4, 2, 6], [1, 5, 3, 7])]
    return [shuffle(t[h], t[h + 2], lanes) for lanes in ([0, 1, 4, 5], [2, 3, 6, 7]) for h in (0, 1)]


def load_tiles(b: ir.IRBuilder, rows: list, j: ir.Value) -> list:
    """The 4 x 4 tiles at column ``j`` of groups of four rows, transposed: lanes = rows.

    Parameters
    ----------
    b : llvmlite.ir.IRBuilder
        The builder.
    rows : list of llvmlite.ir.Value
        ``4 k`` ``double*`` pointers, the rows (group ``g`` is rows ``4 g .. 4 g + 3``).
    j : llvmlite.ir.Value
        The tile's first column (``i64``).

    Returns
    -------
    list of list of llvmlite.ir.Value
        ``[g][q]``: the ``<4 x double>`` of group ``g``'s rows at column ``j + q``.

    Examples
    --------
    >>> from llvmlite import ir
    >>> p = ir.DoubleType().as_pointer()
    >>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [p] * 8), "f")
    >>> b = ir.IRBuilder(fn.append_basic_block())
    >>> t = load_tiles(b, list(fn.args), i64(4))
    >>> len(t), len(t[0]), str(t[1][3].type)
    (2, 4, '<4 x double>')
    """
    return [transpose4(b, [b.load(vector_ptr(b, rows[4 * g + r], j, V4), align=8) for r in range(4)])
            for g in range(len(rows) // 4)]


def load_column(b: ir.IRBuilder, rows: list, j: ir.Value) -> list:
    """Column ``j`` of groups of four rows, one ``<4 x double>`` per group (lanes = rows): four
    scalar loads each.

    Parameters
    ----------
    b : llvmlite.ir.IRBuilder
        The builder.
    rows : list of llvmlite.ir.Value
        ``4 k`` ``double*`` pointers, the rows.
    j : llvmlite.ir.Value
        The column (``i64``).

    Returns
    -------
    list of llvmlite.ir.Value
        ``[g]``: group ``g``'s rows at column ``j``.

    Examples
    --------
    >>> from llvmlite import ir
    >>> p = ir.DoubleType().as_pointer()
    >>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [p] * 4), "f")
    >>> b = ir.IRBuilder(fn.append_basic_block())
    >>> [str(v.type) for v in load_column(b, list(fn.args), i64(2))]
    ['<4 x double>']
    """
    out = []
    for g in range(len(rows) // 4):
        v = ir.Constant(V4, ir.Undefined)
        for r in range(4):
            v = b.insert_element(v, b.load(b.gep(rows[4 * g + r], [j], inbounds=True), align=8),
                                 ir.Constant(_I32, r))
        out.append(v)
    return out

"""Small LLVM IR helpers shared by the engine's vector kernels (:mod:`rfcheck.engine.wy`,
:mod:`rfcheck.engine.gauss_seidel`, :mod:`rfcheck.engine.simd_ziggurat`,
:mod:`rfcheck.engine.project`): an ``i64`` constant, a broadcast, a vector pointer into a ``double`` array,
a counted loop with accumulators, and the CPU features Numba compiles for in this process."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

__all__ = ["counted_loop", "i64", "splat", "target_features", "vector_ptr"]

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

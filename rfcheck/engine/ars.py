"""ARS (Salmon, Moraes, Dror & Shaw 2011): a counter-based generator made of AES rounds with a
Weyl-sequence key schedule, as a measured alternative to the engine's SplitMix64 words (against
the engine's speed targets, :data:`rfcheck.bench.TARGETS_BY_ISA`).

Why: on AVX2 the engine's bulk normals (:func:`rfcheck.engine.rng.fill_normals`) spend about a
third of their time on SplitMix64's two 64-bit multiplies per word, which AVX2 emulates with 32-bit
ones; :mod:`rfcheck.engine.philox` (32-bit multiplies) measured slower.  An AES round is one
instruction (``aesenc``: AES-NI on x86-64 since 2010, 128 bits; ``vaesenc`` on 256-bit vectors
with VAES: AMD Zen 3 and later, Intel Ice Lake and later), so ``R`` rounds cost ``R``
instructions per two 64-bit words, or per four with VAES.

The function: ``ars(c, k)`` maps a 128-bit counter ``c`` and key ``k`` to 128 bits by
``v = c ^ k``, then ``R - 1`` times ``k += w; v = aesenc(v, k)`` and once ``k += w; v =
aesenclast(v, k)``, where ``k += w`` adds ``0x9E3779B97F4A7C15`` to ``k``'s low and
``0xBB67AE8584CAA73B`` to its high 64 bits, each mod ``2**64`` (Random123's ``ars1xm128i_R``).
Random123 uses ``R = 7`` by default ("a considerable safety margin") and reports no known
statistical flaw from ``R = 5``; Intel MKL's ``VSL_BRNG_ARS5`` uses 5.  Both are measured here
(:data:`ROUNDS`).

Stream layout (kernel and twin alike): block ``(seed, stream, block)`` of the engine gets the
key with low half :func:`rfcheck.engine.rng.block_key` of lane 3 and high half of lane 4; its
call ``j`` the counter ``j`` (high 64 bits zero), whose output's low and high 64 bits are the
words ``2 j`` and ``2 j + 1``, used as :mod:`rfcheck.engine.counter_normals` describes (the
ziggurat fast test of the SplitMix64 fill, fix-ups on the block's SplitMix64 fallback).  The
state is ``(key_lo, key_hi, j)``, three ``uint64``.

The kernel (:func:`fast_pass`): the words of four calls per iteration as two 256-bit ``vaesenc``
chains (or four 128-bit ``aesenc`` chains without VAES), stored into scratch, then the candidates
loop of :func:`rfcheck.engine.simd_ziggurat.candidates_loop` (the engine's AVX2 loop).  It needs
AES instructions: :data:`AES` says which this process compiles for (``None``: this module's
compiled functions cannot be used here; the benchmark skips it).  :class:`PyARS` is the
bit-exact plain-Python twin (a software AES round, checked against FIPS-197's AES-128 example and
Random123.jl's known answers in ``tests/test_ars.py``).

Nothing in the engine uses this module: the benchmark measures it
(:func:`rfcheck.bench.run_rng_bench`).  Measured (2026-11-28, one Zen 3 thread, 4,096-normal
refills, in-process, ``results/bench/2026-11-28-layers-zen3/ab_generators.py``): with VAES the
fast pass takes 0.89 (ARS-5) and 0.94 (ARS-7) ns per normal against SplitMix64's 1.13, the whole
fill 1.13 and 1.15 against 1.25 (its fix-ups run per chunk, on words the next chunk overwrites;
SplitMix64's wait for 64 chunks and recompute their words); on the Haswell build (128-bit
AES-NI) the fast passes take 1.13 and 1.24 against 1.08, the fills 1.34 and 1.52 against 1.34.
So the engine keeps SplitMix64.

References
----------
J. K. Salmon, M. A. Moraes, R. O. Dror, D. E. Shaw, "Parallel random numbers: as easy as
1, 2, 3", SC'11 (2011), sec 4 (ARS).  NIST FIPS-197, *Advanced Encryption Standard* (2001),
sec 5.1 (the round) and appendix C.1.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic

from rfcheck.engine import rng as _rng
from rfcheck.engine.counter_normals import PyCounterNormals, chunk_candidates, finish_chunk
from rfcheck.engine.llvm_vectors import counted_loop, splat, target_features
from rfcheck.engine.simd_ziggurat import candidates_loop, declare, kernel_call

__all__ = ["AES", "ROUNDS", "PyARS", "aes_unit", "draw_normals", "fill_normals", "fill_normals_repeat", "init_block",
           "kernel_builder", "py_aes_round", "py_ars"]

ROUNDS = (5, 7)
"""The round counts this module compiles (MKL's ARS-5, Random123's default ARS-7)."""

_WEYL = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
_M64 = (1 << 64) - 1
_U = np.uint64


def aes_unit(features: str) -> str | None:
    """The x86 AES instructions the kernel uses on a CPU target: ``"vaes"`` (256-bit
    ``vaesenc``), ``"aes"`` (128-bit AES-NI) or ``None`` (none, or not an x86 target -- ARM's
    crypto extension also reads ``+aes``, but its instructions differ: the compiled functions
    cannot run there).

    Parameters
    ----------
    features : str
        LLVM's comma-separated feature list of the target.

    Returns
    -------
    str or None

    Examples
    --------
    >>> [aes_unit(f) for f in ("+sse2,+avx2,+aes,+vaes", "+sse2,+avx2,+aes,-vaes", "+neon", "+neon,+aes")]
    ['vaes', 'aes', None, None]
    """
    f = set(features.split(","))
    if "+aes" not in f or "+sse2" not in f:  # SSE2: every x86-64 target, no other
        return None
    return "vaes" if "+vaes" in f and "+avx2" in f else "aes"


AES = aes_unit(target_features())
"""The AES unit of this process's target (:func:`aes_unit`)."""


# --------------------------------------------------------------------------- the plain-Python twin
def _gmul(a: int, b: int) -> int:
    """Product in GF(2^8) modulo the AES polynomial x^8 + x^4 + x^3 + x + 1."""
    p = 0
    while b:
        if b & 1:
            p ^= a
        a = (a << 1) ^ (0x11B if a & 0x80 else 0)
        b >>= 1
    return p


def _sbox() -> list[int]:
    """The AES S-box computed from its definition (FIPS-197 sec 5.1.1): the multiplicative
    inverse in GF(2^8) (0 to 0), then the affine map ``b ^ rotl(b, 1..4) ^ 0x63``."""
    inv = [0] * 256
    for a in range(1, 256):
        inv[a] = next(b for b in range(1, 256) if _gmul(a, b) == 1)
    box = []
    for x in inv:
        y = x
        for s in range(1, 5):
            y ^= ((x << s) | (x >> (8 - s))) & 0xFF
        box.append(y ^ 0x63)
    return box


_SBOX = _sbox()
_MUL2 = [_gmul(a, 2) for a in range(256)]
_MUL3 = [_gmul(a, 3) for a in range(256)]


def py_aes_round(x: int, rk: int, last: bool = False) -> int:
    """One AES encryption round on a 128-bit state, as x86's ``aesenc`` (``aesenclast`` when
    ``last``): SubBytes, ShiftRows, MixColumns (not in the last round), then ``^ rk``.

    Parameters
    ----------
    x, rk : int
        The state and the round key, 128-bit integers; byte ``i`` is ``(x >> 8 i) & 0xFF``
        (an ``xmm`` register's byte ``i``), the AES state's row ``i mod 4``, column ``i // 4``.
    last : bool, optional
        Omit MixColumns.

    Returns
    -------
    int
        The new state.

    Examples
    --------
    The first round of FIPS-197's appendix C.1 example (the state after the initial key
    addition, the round key of round 1; the result is the start of round 2):

    >>> s = 0x00102030405060708090a0b0c0d0e0f0.to_bytes(16, "big")
    >>> k = 0xd6aa74fdd2af72fadaa678f1d6ab76fe.to_bytes(16, "big")
    >>> out = py_aes_round(int.from_bytes(s, "little"), int.from_bytes(k, "little"))
    >>> out.to_bytes(16, "little").hex()
    '89d810e8855ace682d1843d8cb128fe4'
    """
    s = x.to_bytes(16, "little")
    t = [_SBOX[s[r + 4 * ((c + r) % 4)]] for c in range(4) for r in range(4)]  # t[4 c + r]
    if not last:
        t = [_MUL2[t[4 * c + r]] ^ _MUL3[t[4 * c + (r + 1) % 4]] ^ t[4 * c + (r + 2) % 4] ^ t[4 * c + (r + 3) % 4]
             for c in range(4) for r in range(4)]
    return int.from_bytes(bytes(t), "little") ^ rk


def py_ars(ctr: int, key: int, rounds: int) -> int:
    """ARS with ``rounds`` rounds: Random123's ``ars1xm128i_R(rounds, ctr, key)``.

    Parameters
    ----------
    ctr, key : int
        128-bit integers (low 64 bits: the ``xmm`` register's low lane).
    rounds : int
        ``>= 1``.

    Returns
    -------
    int
        The 128-bit output.

    Examples
    --------
    Random123.jl's known answer for one round (its counter is incremented before the call):

    >>> ctr = (0x9799b5d54f7b9227 << 64 | 0xb47607190d0dfefb) + 1
    >>> hex(py_ars(ctr, 0x07b8e4b6aa98ec24 << 64 | 0x5a7da274d3b8146a, 1))
    '0x1a0b14c707b64224e548ef12331396ef'
    """
    def step(k: int) -> int:
        return ((k & _M64) + _WEYL[0]) & _M64 | (((k >> 64) + _WEYL[1]) & _M64) << 64

    k = key
    v = ctr ^ k
    for _ in range(rounds - 1):
        k = step(k)
        v = py_aes_round(v, k)
    return py_aes_round(v, step(k), last=True)


class PyARS(PyCounterNormals):
    """Plain-Python twin of a block's ARS stream and of :func:`fill_normals`; bit-identical,
    slow.

    Parameters
    ----------
    seed, stream, block : int
        The engine block: the key's halves are lanes 3 and 4 of its hash
        (:func:`rfcheck.engine.rng.block_key`), the fallback generator lane 1.
    rounds : int, optional
        One of :data:`ROUNDS` (default 7).

    Examples
    --------
    >>> g = PyARS(3, 0, 0)
    >>> len(g.words(2)), g.j
    (4, 2)
    """

    def __init__(self, seed: int, stream: int, block: int, rounds: int = 7) -> None:
        super().__init__(seed, stream, block)
        self.key = (_rng.py_block_key(seed, stream, block, 3), _rng.py_block_key(seed, stream, block, 4))
        self.rounds = rounds

    def call(self, c: int) -> tuple[int, int]:
        """The two 64-bit words (low, high) of call ``c``."""
        v = py_ars(c, self.key[0] | self.key[1] << 64, self.rounds)
        return v & _M64, v >> 64


# --------------------------------------------------------------------------- the kernel
_I32, _I64 = ir.IntType(32), ir.IntType(64)
_V4 = ir.VectorType(_I64, 4)
_V2 = ir.VectorType(_I64, 2)
_V8 = ir.VectorType(_I64, 8)


def _aes(b: ir.IRBuilder, v: ir.Value, k: ir.Value, last: bool, unit: str) -> ir.Value:
    """One round on a ``<4 x i64>`` (two 128-bit states): one ``vaesenc`` if ``unit`` is
    ``"vaes"``, else two ``aesenc`` on the halves."""
    name = "aesenclast" if last else "aesenc"
    if unit == "vaes":
        fn = cgutils.get_or_insert_function(b.module, ir.FunctionType(_V4, [_V4, _V4]), f"llvm.x86.aesni.{name}.256")
        return b.call(fn, [v, k])
    fn = cgutils.get_or_insert_function(b.module, ir.FunctionType(_V2, [_V2, _V2]), f"llvm.x86.aesni.{name}")
    halves = [b.call(fn, [b.shuffle_vector(x, x, ir.Constant(ir.VectorType(_I32, 2), [h, h + 1])) for x in (v, k)])
              for h in (0, 2)]
    return b.shuffle_vector(halves[0], halves[1], ir.Constant(ir.VectorType(_I32, 4), [0, 1, 2, 3]))


def kernel_builder(rounds: int, unit: str | None = None):
    """The builder of ``i64 rfcheck.ars{rounds}_{unit}(klo, khi, j, ncand, out, nwords, wk, words)``
    (for :func:`rfcheck.engine.simd_ziggurat.kernel_call`): the words of calls ``j .. j + 4 nwords -
    1`` into ``words`` (a ``double*`` holding ``uint64`` bits), then candidates ``0 .. 8 ncand - 1``
    from them into ``out``; returns their failure mask.

    Parameters
    ----------
    rounds : int
        ARS rounds (``>= 1``).
    unit : {"vaes", "aes"}, optional
        The AES instructions to emit (default :data:`AES`; ``"vaes"`` runs only where the CPU has
        VAES, ``"aes"`` where it has AES-NI: the tests build both where they can run).

    Returns
    -------
    callable
        ``build(module) -> llvmlite.ir.Function``.

    Raises
    ------
    ValueError
        If ``unit`` (or :data:`AES`, when ``unit`` is not given) is not ``"vaes"`` or ``"aes"``.
    """
    unit = unit or AES
    if unit not in ("vaes", "aes"):
        raise ValueError(f"unit must be 'vaes' or 'aes' (x86 AES instructions), got {unit!r}")
    name = f"rfcheck.ars{rounds}_{unit}"

    def build(module: ir.Module) -> ir.Function:
        fn = declare(module, name, 2, scalars=4)
        if fn is None:
            return module.get_global(name)
        klo, khi, j, ncand, out, nwords, wk, words = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        key = b.insert_element(b.insert_element(ir.Constant(_V4, ir.Undefined), klo, ir.Constant(_I32, 0)),
                               khi, ir.Constant(_I32, 1))
        key = b.shuffle_vector(key, key, ir.Constant(ir.VectorType(_I32, 4), [0, 1, 0, 1]))
        keys = [b.add(key, ir.Constant(_V4, [r * _WEYL[0] & _M64, r * _WEYL[1] & _M64] * 2)) for r in range(rounds + 1)]
        jv = splat(b, j, _V4)
        firsts = [b.add(b.and_(jv, ir.Constant(_V4, [_M64, 0, _M64, 0])), ir.Constant(_V4, [c, 0, c + 1, 0]))
                  for c in (0, 2)]
        step = ir.Constant(_V4, [4, 0, 4, 0])
        words_i64 = b.bitcast(words, _I64.as_pointer())

        def body(b, v, accs):
            outs = []
            for c in accs:
                x = b.xor(c, keys[0])
                for r in range(1, rounds + 1):
                    x = _aes(b, x, keys[r], r == rounds, unit)
                outs.append(x)
            both = b.shuffle_vector(outs[0], outs[1], ir.Constant(ir.VectorType(_I32, 8), list(range(8))))
            at = b.bitcast(b.gep(words_i64, [b.mul(v, ir.Constant(_I64, 8))], inbounds=True), _V8.as_pointer())
            b.store(both, at, align=8)
            return [b.add(c, step) for c in accs]

        b, _ = counted_loop(fn, b, ir.Constant(_I64, 0), nwords, firsts, body, "words")
        b, mask = candidates_loop(fn, b, words_i64, out, ncand, wk)
        b.ret(mask)
        return fn

    return build


def _typed(rounds: int, out, wk, words, start, nwords) -> tuple | None:
    if AES is None:  # LLVM would abort the process on the x86 intrinsics
        raise TypingError("ARS needs x86 AES instructions; this CPU target has none (rfcheck.engine.ars.AES)")
    return kernel_call(kernel_builder(rounds), out, (wk, words), start, nwords, scalars=4)


@intrinsic
def _fast_pass5(typingctx, klo, khi, j, ncand, out, start, nwords, wk, words):
    return _typed(5, out, wk, words, start, nwords)


@intrinsic
def _fast_pass7(typingctx, klo, khi, j, ncand, out, start, nwords, wk, words):
    return _typed(7, out, wk, words, start, nwords)


@njit(cache=True, error_model="numpy", inline="always")
def fast_pass(rounds, klo, khi, j, ncand, out, start, nwords, words):
    """The words of ``4 nwords`` ARS calls from ``j`` into ``words[:8 nwords]``, then candidates
    ``0 .. 8 ncand - 1`` of them into ``out[start:start + 8 ncand]``; returns the fast test's
    failures.  Needs :data:`AES`; not bounds-checked.

    The counters are ``j + q`` in the low 64 bits, without a carry into the high half (unlike the
    twin's 128-bit integers: a difference only for ``j >= 2**64 - 32``, out of reach).

    Parameters
    ----------
    rounds : int
        One of :data:`ROUNDS`.
    klo, khi, j : numpy.uint64
        The key's halves and the first call.
    ncand, nwords : int
        Vectors of eight candidates and of four calls (``ncand <= nwords <= 8``).
    out : numpy.ndarray of float64
        The candidates go to ``out[start:]``.
    start : int
        Offset into ``out``.
    words : numpy.ndarray of float64
        Scratch of at least ``8 nwords`` entries: the words' ``uint64`` bits.

    Returns
    -------
    numpy.uint64
        Bit ``i`` set where candidate ``i`` fails the fast test.

    Raises
    ------
    ValueError
        If ``rounds`` is not in :data:`ROUNDS`.
    """
    if rounds == 5:
        return _fast_pass5(klo, khi, j, ncand, out, start, nwords, _rng._ZWK, words)
    if rounds == 7:
        return _fast_pass7(klo, khi, j, ncand, out, start, nwords, _rng._ZWK, words)
    raise ValueError("rounds must be 5 or 7")


@njit(cache=True, error_model="numpy")
def init_block(seed, stream, block, raw):
    """Start a block: the ARS state ``(key_lo, key_hi, 0)``; the SplitMix64 fallback generator
    (lane 1, as :func:`rfcheck.engine.rng.init_block`) goes to ``raw``.

    Parameters
    ----------
    seed, stream, block : numpy.uint64 or int
        The block's coordinates.
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        The block's scratch.

    Returns
    -------
    tuple of 3 numpy.uint64
        Lanes 3 and 4 of the block's hash (:func:`rfcheck.engine.rng.block_key`) and the call
        counter 0.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine import rng
    >>> from rfcheck.engine.ars import PyARS, init_block
    >>> raw = np.zeros(rng.RAW_SIZE, dtype=np.uint64)
    >>> init_block(3, 0, 0, raw) == (*PyARS(3, 0, 0).key, 0)
    True
    """
    _rng.init_block(seed, stream, block, raw)
    return (_rng.block_key(seed, stream, block, 3), _rng.block_key(seed, stream, block, 4), _U(0))


@njit(cache=True, error_model="numpy")
def fill_normals(st, out, raw, rounds):
    """Fill ``out`` with standard normals from ARS state ``st = (key_lo, key_hi, j)``; ``raw``
    from :func:`init_block` (its first :data:`rfcheck.engine.rng.CHUNK` words are scratch).

    Per chunk of ``m <= 64`` outputs: the words of ``ceil(m / 2)`` calls (rounded up to a
    multiple of four) into ``raw``, candidates ``0 .. 8 (m // 8) - 1`` by :func:`fast_pass`, the
    last ``m mod 8`` by :func:`rfcheck.engine.counter_normals.chunk_candidates`, then the
    failures finished in order on the SplitMix64 fallback.  Needs :data:`AES`.

    Parameters
    ----------
    st : tuple of 3 uint64
        The ARS state (:func:`init_block`).
    out : numpy.ndarray of float64, shape (n,)
        Filled in place.
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        From :func:`init_block`.
    rounds : int
        One of :data:`ROUNDS`.

    Returns
    -------
    tuple of 3 numpy.uint64
        ``(key_lo, key_hi, j + calls)``: ``ceil(m / 2)`` calls per chunk of ``m`` outputs.
    """
    klo, khi, j = _U(st[0]), _U(st[1]), _U(st[2])
    words = raw.view(np.float64)
    n = out.shape[0]
    i0 = 0
    while i0 < n:
        m = min(_rng.CHUNK, n - i0)
        calls = (m + 1) // 2
        mask = fast_pass(rounds, klo, khi, j, m // 8, out, i0, (calls + 3) // 4, words)
        if m % 8 != 0:
            mask |= chunk_candidates(raw, out, i0, 8 * (m // 8), m)
        finish_chunk(raw, out, i0, mask)
        j = j + _U(calls)
        i0 += m
    return (klo, khi, j)


@njit(cache=True, error_model="numpy")
def _draw_normals(seed, stream, out, rounds):
    raw = np.empty(_rng.RAW_SIZE, dtype=np.uint64)
    fill_normals(init_block(seed, stream, _U(0), raw), out, raw, rounds)


@njit(cache=True, error_model="numpy")
def fill_normals_repeat(seed, stream, buf, reps, rounds=7):
    """``reps`` consecutive bulk fills of ``buf`` from block 0 of ``(seed, stream)`` (as
    :func:`rfcheck.engine.rng.fill_normals_repeat`); returns ``buf[0]``.  Needs :data:`AES`.

    Parameters
    ----------
    seed, stream : numpy.uint64 or int
        Select block 0's key and fallback generator.
    buf : numpy.ndarray of float64, shape (n,)
        Refilled ``reps`` times.
    reps : int
        Number of fills.
    rounds : int, optional
        One of :data:`ROUNDS` (default 7).

    Returns
    -------
    float
        ``buf[0]`` after the last fill.
    """
    raw = np.empty(_rng.RAW_SIZE, dtype=np.uint64)
    st = init_block(seed, stream, _U(0), raw)
    for _ in range(reps):
        st = fill_normals(st, buf, raw, rounds)
    return buf[0]


def draw_normals(n: int, seed: int = 0, stream: int = 0, rounds: int = 7) -> np.ndarray:
    """``n`` standard normals from block 0 of ``(seed, stream)`` by :func:`fill_normals`.

    Parameters
    ----------
    n : int
        Number of draws (>= 1).
    seed, stream : int, default 0
        Integers in ``[0, 2**64)``.
    rounds : int, default 7
        One of :data:`ROUNDS`.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Bit-identical to ``PyARS(seed, stream, 0, rounds).fill_normals(n)``.

    Raises
    ------
    ValueError
        If ``n``, ``seed`` or ``stream`` is invalid, or ``rounds`` is not in :data:`ROUNDS`.
    RuntimeError
        If this process's CPU target has no x86 AES instructions (:data:`AES` is ``None``).
    """
    if rounds not in ROUNDS:
        raise ValueError(f"rounds must be one of {ROUNDS}, got {rounds!r}")
    if AES is None:
        raise RuntimeError("ARS needs x86 AES instructions (AES-NI); this CPU target has none")
    n, s, t = _rng._args(n, seed, stream)
    out = np.empty(n)
    _draw_normals(s, t, out, rounds)
    return out


CACHE_FILES = ("bits.py", "llvm_vectors.py", "simd_ziggurat.py", "rng.py", "counter_normals.py", "ars.py")
"""The engine files whose compiled code this module's kernels inline: its Numba on-disk cache is
keyed to their contents (:func:`rfcheck.engine.rng.tie_cache_to_engine`)."""

_rng.tie_cache_to_engine(globals(), CACHE_FILES, "rfcheck-engine-ars")

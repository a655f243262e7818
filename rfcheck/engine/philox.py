"""Philox4x32-10 (Salmon, Moraes, Dror & Shaw 2011): a counter-based generator with 32-bit
multiplies, as a measured alternative to the engine's SplitMix64 words (against the engine's
speed targets, :data:`rfcheck.bench.TARGETS_BY_ISA`).

Why: the engine's bulk normal draw (:func:`rfcheck.engine.rng.fill_normals`) takes one 64-bit
word ``mix64(s + k g)`` per normal; ``mix64`` has two 64-bit multiplies, which AVX-512 does in
one instruction (``vpmullq``) and AVX2 does not have (three ``vpmuludq`` and shifts each, or
scalar code).  Philox4x32-10 maps a 128-bit counter and a 64-bit key to 128 bits by ten rounds
of two ``32 x 32 -> 64``-bit multiplies (``vpmuludq``, in AVX2 and NEON alike), xors and a key
schedule; it passes TestU01's BigCrush (Salmon et al.) and is the default of cuRAND, JAX and
TensorFlow's stateless generators.  Per 64-bit word it costs ten 32-bit multiplies against
SplitMix64's two 64-bit ones (six ``vpmuludq`` when emulated), so whether it is faster is a
question of measurement, which :func:`rfcheck.bench` answers for both instruction sets.

Stream layout (the same for the kernel and its twin): block ``(seed, stream, block)`` of the
engine gets the key ``key = mix(mix(mix(mix(seed) ^ stream) ^ block) ^ 2)`` (the hash of
:func:`rfcheck.engine.rng.block_state`, lane 2; ``k0``/``k1`` its low/high 32 bits), and its
``j``-th Philox call the counter ``(j mod 2**32, j >> 32, 0, 0)``; call ``j`` gives the 64-bit
words ``x0 | x1 << 32`` and ``x2 | x3 << 32``.  :func:`fill_normals` uses them exactly as
:func:`rfcheck.engine.rng.fill_normals` uses SplitMix64 words (ziggurat fast test in a
branch-free pass, failures finished on the block's SplitMix64 fallback generator, lane 1),
two normals per call; a request of odd length leaves the last call's second word unused, so,
unlike the SplitMix64 stream, the numbers depend on how a run of draws is split into requests
(each request starts at a fresh call).  The state is ``(key, j)``, two ``uint64``.

Nothing in the engine uses this module by default: the bench measures it
(:func:`rfcheck.bench.run_rng_bench`), and :class:`PyPhilox` is its bit-exact plain-Python twin
(``tests/test_philox.py``: Random123's known-answer vectors, twin parity, the normal law).

Measured (2026-11-26, one thread of a 2-core AVX-512 Xeon shared with other jobs, load 9-12;
150 interleaved rounds of 65,536 normals per generator, two processes per build): the Philox
loop does vectorise (``vpmuludq``, 20 per vector iteration: the ten rounds' two multiplies), but
it is slower than SplitMix64 under both builds -- native AVX-512 build: SplitMix64 0.65-0.67
normals per ns at best (0.59 median round), Philox 0.39 (0.35-0.36), Philox taking 1.63-1.67x
the time per normal (median of the paired rounds); AVX2 build (LLVM ``haswell``, compiled on the
same machine): SplitMix64 0.63 (0.57-0.60), Philox 0.42-0.43 (0.39-0.42), 1.44-1.47x.  Ten
rounds cost ten 32-bit multiplies per 64-bit word where SplitMix64 needs two 64-bit ones (one
``vpmullq`` each on AVX-512, three ``vpmuludq`` each when emulated on AVX2), and the ziggurat's
table gathers and fix-ups, common to both, are much of a normal's cost.  So the engine keeps
SplitMix64 (its streams unchanged).

References
----------
J. K. Salmon, M. A. Moraes, R. O. Dror, D. E. Shaw, "Parallel random numbers: as easy as
1, 2, 3", SC'11 (2011).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rfcheck.engine import rng as _rng
from rfcheck.engine.counter_normals import PyCounterNormals, chunk_candidates, finish_chunk

__all__ = ["PyPhilox", "block_key", "draw_normals", "fill_normals", "fill_normals_repeat", "init_block",
           "philox4x32_10", "py_philox4x32_10"]

_U = np.uint64
_M32 = _U(0xFFFFFFFF)
_S32 = _U(32)
_PM0 = _U(0xD2511F53)
_PM1 = _U(0xCD9E8D57)
_W0 = _U(0x9E3779B9)
_W1 = _U(0xBB67AE85)


@njit(cache=True, error_model="numpy", inline="always")
def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Philox4x32 with 10 rounds: counter ``c0..c3`` and key ``k0, k1`` (uint64 holding 32-bit
    values) to four 32-bit outputs (as uint64).  Random123's ``philox4x32_R(10, ...)``.

    Parameters
    ----------
    c0, c1, c2, c3 : numpy.uint64
        The 128-bit counter as four 32-bit words (each ``< 2**32``; typed ``uint64``: from
        Python pass ``np.uint64`` values).
    k0, k1 : numpy.uint64
        The 64-bit key as two 32-bit words (each ``< 2**32``).

    Returns
    -------
    tuple of 4 numpy.uint64
        The four 32-bit output words (Python ints when called from Python).

    Examples
    --------
    Random123's known-answer vector for a zero counter and key, and the plain-Python twin
    :func:`py_philox4x32_10` on another input:

    >>> import numpy as np
    >>> from rfcheck.engine.philox import philox4x32_10, py_philox4x32_10
    >>> [f"{w:08x}" for w in philox4x32_10(*[np.uint64(0)] * 6)]
    ['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']
    >>> c, k = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0)
    >>> philox4x32_10(*(np.uint64(v) for v in c + k)) == py_philox4x32_10(c, k)
    True
    """
    for _ in range(10):
        p0 = _PM0 * (c0 & _M32)
        p1 = _PM1 * (c2 & _M32)
        c0, c1, c2, c3 = ((p1 >> _S32) ^ c1 ^ k0) & _M32, p1 & _M32, ((p0 >> _S32) ^ c3 ^ k1) & _M32, p0 & _M32
        k0 = (k0 + _W0) & _M32
        k1 = (k1 + _W1) & _M32
    return c0, c1, c2, c3


def py_philox4x32_10(c: tuple[int, int, int, int], k: tuple[int, int]) -> tuple[int, int, int, int]:
    """Plain-Python twin of :func:`philox4x32_10` (Python integers).

    Parameters
    ----------
    c : tuple of 4 int
        The counter ``(c0, c1, c2, c3)``, each in ``[0, 2**32)``.
    k : tuple of 2 int
        The key ``(k0, k1)``, each in ``[0, 2**32)``.

    Returns
    -------
    tuple of 4 int
        The four 32-bit output words after ten rounds.

    References
    ----------
    Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11 (2011),
    sec 3 (the Philox S-box and key schedule); Random123's ``philox4x32_R(10, ...)``.

    Examples
    --------
    Random123's known-answer vector for a zero counter and key:

    >>> [f"{w:08x}" for w in py_philox4x32_10((0, 0, 0, 0), (0, 0))]
    ['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']
    """
    c0, c1, c2, c3 = c
    k0, k1 = k
    m = 0xFFFFFFFF
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & m, p1 & m, ((p0 >> 32) ^ c3 ^ k1) & m, p0 & m
        k0 = (k0 + 0x9E3779B9) & m
        k1 = (k1 + 0xBB67AE85) & m
    return c0, c1, c2, c3


@njit(cache=True, error_model="numpy")
def block_key(seed, stream, block):
    """The 64-bit Philox key of engine block ``(seed, stream, block)``: lane 2 of
    :func:`rfcheck.engine.rng.block_key`.

    Parameters
    ----------
    seed, stream, block : numpy.uint64 or int
        The block's coordinates, converted to ``uint64`` here (from Python: ints below ``2**63``
        or ``np.uint64`` values).

    Returns
    -------
    numpy.uint64
        ``mix(mix(mix(mix(seed) ^ stream) ^ block) ^ 2)``: ``k0`` its low, ``k1`` its high 32
        bits (a Python int when called from Python).

    Examples
    --------
    >>> from rfcheck.engine.philox import PyPhilox, block_key
    >>> block_key(3, 0, 0) == PyPhilox(3, 0, 0).key, block_key(3, 0, 1) != block_key(3, 0, 0)
    (True, True)
    """
    return _rng.block_key(seed, stream, block, 2)


@njit(cache=True, error_model="numpy")
def init_block(seed, stream, block, raw):
    """Start a block: the Philox state ``(key, 0)``; the SplitMix64 fallback generator (lane 1,
    as :func:`rfcheck.engine.rng.init_block`) goes to ``raw``.

    Parameters
    ----------
    seed, stream, block : numpy.uint64 or int
        The block's coordinates, as for :func:`block_key`.
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        The block's scratch: entries ``CHUNK``, ``CHUNK + 1`` (:data:`rfcheck.engine.rng.CHUNK`)
        get the fallback state.

    Returns
    -------
    tuple of 2 numpy.uint64
        The Philox state ``(block_key(seed, stream, block), 0)``: key and call counter.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine import rng
    >>> from rfcheck.engine.philox import PyPhilox, init_block
    >>> raw = np.zeros(rng.RAW_SIZE, dtype=np.uint64)
    >>> init_block(3, 0, 0, raw) == (PyPhilox(3, 0, 0).key, 0)
    True
    >>> tuple(int(v) for v in raw[rng.CHUNK:rng.CHUNK + 2]) == rng.block_state(3, 0, 0, 1)
    True
    """
    _rng.init_block(seed, stream, block, raw)
    return (block_key(seed, stream, block), _U(0))


@njit(cache=True, error_model="numpy")
def fill_normals(st, out, raw):
    """Fill ``out`` with standard normals from Philox state ``st = (key, j)``; ``raw`` from
    :func:`init_block` (its first :data:`rfcheck.engine.rng.CHUNK` words are scratch).

    Per chunk of 64 outputs: the 32 Philox calls' words into ``raw`` (a loop with no
    dependence between calls, SIMD), then the ziggurat fast test of
    :func:`rfcheck.engine.rng.fill_normals` on each word, failures recorded in a mask and
    finished in order on the SplitMix64 fallback generator.  Returns the new state.

    Parameters
    ----------
    st : tuple of 2 uint64
        The Philox state ``(key, j)``: key and index of the next call (:func:`init_block`);
        converted to ``uint64`` here, so plain ints work too.
    out : numpy.ndarray of float64, shape (n,)
        Filled in place (any ``n >= 0``).
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        From :func:`init_block`: entries ``0 .. CHUNK - 1`` are overwritten (the chunk's words),
        entries ``CHUNK``, ``CHUNK + 1`` hold the fallback generator, which the fix-ups advance.

    Returns
    -------
    tuple of 2 numpy.uint64
        ``(key, j + calls)``, ``calls`` the Philox calls made: ``ceil(m / 2)`` per chunk of
        ``m`` outputs.

    Examples
    --------
    Bit for bit the plain-Python twin :class:`PyPhilox`, the counter included:

    >>> import numpy as np
    >>> from rfcheck.engine import rng
    >>> from rfcheck.engine.philox import PyPhilox, fill_normals, init_block
    >>> raw, out = np.empty(rng.RAW_SIZE, dtype=np.uint64), np.empty(101)
    >>> key, j = fill_normals(init_block(3, 0, 0, raw), out, raw)
    >>> g = PyPhilox(3, 0, 0)
    >>> bool(np.array_equal(out, g.fill_normals(101))), (key, j) == (g.key, g.j), j
    (True, True, 51)
    """
    key, j = _U(st[0]), _U(st[1])
    k0, k1 = key & _M32, key >> _S32
    n = out.shape[0]
    i0 = 0
    while i0 < n:
        m = min(_rng.CHUNK, n - i0)
        calls = (m + 1) // 2
        for q in range(calls):
            ctr = j + _U(q)
            x0, x1, x2, x3 = philox4x32_10(ctr & _M32, ctr >> _S32, _U(0), _U(0), k0, k1)
            raw[2 * q] = x0 | (x1 << _S32)
            raw[2 * q + 1] = x2 | (x3 << _S32)
        finish_chunk(raw, out, i0, chunk_candidates(raw, out, i0, 0, m))
        j = j + _U(calls)
        i0 += m
    return (key, j)


@njit(cache=True, error_model="numpy")
def _draw_normals(seed, stream, out):
    raw = np.empty(_rng.RAW_SIZE, dtype=np.uint64)
    st = init_block(seed, stream, _U(0), raw)
    fill_normals(st, out, raw)


@njit(cache=True, error_model="numpy")
def fill_normals_repeat(seed, stream, buf, reps):
    """``reps`` consecutive bulk fills of ``buf`` from block 0 of ``(seed, stream)``
    (as :func:`rfcheck.engine.rng.fill_normals_repeat`); returns ``buf[0]``.

    Parameters
    ----------
    seed, stream : numpy.uint64 or int
        Select block 0's key and fallback generator (:func:`init_block`).
    buf : numpy.ndarray of float64, shape (n,)
        Refilled ``reps`` times (:func:`fill_normals`, each fill starting at a fresh call);
        holds the last fill on return.
    reps : int
        Number of fills (``>= 0``).

    Returns
    -------
    float
        ``buf[0]`` after the last fill.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.philox import PyPhilox, fill_normals_repeat
    >>> buf, g = np.empty(11), PyPhilox(1, 2, 0)
    >>> last = [g.fill_normals(11) for _ in range(3)][-1]
    >>> x0 = fill_normals_repeat(1, 2, buf, 3)
    >>> bool(np.array_equal(buf, last)), x0 == last[0]
    (True, True)
    """
    raw = np.empty(_rng.RAW_SIZE, dtype=np.uint64)
    st = init_block(seed, stream, _U(0), raw)
    for _ in range(reps):
        st = fill_normals(st, buf, raw)
    return buf[0]


def draw_normals(n: int, seed: int = 0, stream: int = 0) -> np.ndarray:
    """``n`` standard normals from block 0 of ``(seed, stream)`` by :func:`fill_normals`.

    Parameters
    ----------
    n : int
        Number of draws (>= 1).
    seed, stream : int, default 0
        Integers in ``[0, 2**64)`` selecting the block's key and fallback generator.

    Returns
    -------
    numpy.ndarray, shape (n,)
        The normals, bit-identical to ``PyPhilox(seed, stream, 0).fill_normals(n)``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer >= 1, or ``seed``/``stream`` is not an integer in
        ``[0, 2**64)``.

    Examples
    --------
    >>> x = draw_normals(5, seed=3)
    >>> x.shape, bool((x == draw_normals(5, seed=3)).all())
    ((5,), True)
    """
    n, s, t = _rng._args(n, seed, stream)
    out = np.empty(n)
    _draw_normals(s, t, out)
    return out


class PyPhilox(PyCounterNormals):
    """Plain-Python twin of a block's Philox stream and of :func:`fill_normals` (fallback on
    :class:`rfcheck.engine.rng.PySplitMix`, lane 1); bit-identical, slow.

    Parameters
    ----------
    seed, stream, block : int
        The engine block ``(seed, stream, block)``: the key is lane 2 of its hash
        (:func:`block_key`), the fallback generator lane 1 (:class:`rfcheck.engine.rng.PyRNG`).

    Examples
    --------
    >>> g = PyPhilox(3, 0, 0)
    >>> len(g.words(2)), g.j
    (4, 2)
    >>> PyPhilox(3, 0, 0).fill_normals(5) == draw_normals(5, seed=3).tolist()
    True
    """

    def __init__(self, seed: int, stream: int, block: int) -> None:
        super().__init__(seed, stream, block)
        self.key = _rng.py_block_key(seed, stream, block, 2)

    def call(self, c: int) -> tuple[int, int]:
        """The two 64-bit words ``x0 | x1 << 32`` and ``x2 | x3 << 32`` of Philox call ``c``."""
        x0, x1, x2, x3 = py_philox4x32_10((c & 0xFFFFFFFF, c >> 32, 0, 0), (self.key & 0xFFFFFFFF, self.key >> 32))
        return x0 | x1 << 32, x2 | x3 << 32


CACHE_FILES = ("bits.py", "llvm_vectors.py", "simd_ziggurat.py", "rng.py", "counter_normals.py", "philox.py")
"""The engine files whose compiled code this module's kernels inline: its Numba on-disk cache is
keyed to their contents (:func:`rfcheck.engine.rng.tie_cache_to_engine`)."""

_rng.tie_cache_to_engine(globals(), CACHE_FILES, "rfcheck-engine-philox")

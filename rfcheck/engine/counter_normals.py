"""What the measured alternative generators (:mod:`rfcheck.engine.philox`,
:mod:`rfcheck.engine.ars`) share: turning a chunk of 64-bit words into ziggurat normals, and the
plain-Python twin of their bulk fill.

Both are counter-based generators whose call ``q`` of a block gives two 64-bit words ``2 q`` and
``2 q + 1``; a request of ``n`` normals takes, chunk by chunk (:data:`rfcheck.engine.rng.CHUNK`
= 64 outputs), ``ceil(m / 2)`` calls for a chunk of ``m`` outputs and uses word ``i`` exactly as
:func:`rfcheck.engine.rng.fill_normals` uses SplitMix64's word ``i``: the ziggurat fast test
(layer in the low 10 bits, sign in bit 10, the 52-bit abscissa above), the failures finished in
order of position on the block's SplitMix64 fallback generator (lane 1).  A request of odd length
leaves its last call's second word unused, so, unlike the SplitMix64 stream, the numbers depend
on how a run of draws is split into requests.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from rfcheck.engine import rng as _rng
from rfcheck.engine.bits import u52_to_f64

__all__ = ["PyCounterNormals", "chunk_candidates", "finish_chunk"]

_U = np.uint64
_ONE = _U(1)


@njit(cache=True, error_model="numpy", inline="always")
def chunk_candidates(raw, out, at, lo, m):
    """Candidates ``lo .. m - 1`` of a chunk from the words ``raw[lo:m]`` into
    ``out[at + lo:at + m]``; returns the fast test's failures as bits ``lo .. m - 1`` of a
    ``uint64``.

    Parameters
    ----------
    raw : numpy.ndarray of uint64
        The chunk's words in ``raw[:m]`` (``m <= 64``).
    out : numpy.ndarray of float64
        The outputs; the chunk's start at ``out[at]`` (no slice: a view costs reference counting
        per chunk).
    at, lo, m : int
        The chunk's offset in ``out`` and the range of candidates.

    Returns
    -------
    numpy.uint64
        Bit ``i`` set where candidate ``i`` fails the fast test.

    Examples
    --------
    >>> import numpy as np
    >>> raw, o = np.array([2**11 * 5 + 3], dtype=np.uint64), np.empty(2)
    >>> int(chunk_candidates(raw, o, 1, 0, 1)), bool(o[1] > 0)
    (0, True)
    """
    mask = _U(0)
    for i in range(lo, m):
        r = raw[i]
        idx = np.int64(r & _rng._ZIDX)
        rr = r >> _rng._ZSH
        fa = u52_to_f64((rr >> _rng._S1) & _rng._MANT)
        x = fa * _rng._ZW[idx]
        out[_U(at + i)] = -x if (rr & _ONE) != _U(0) else x  # unsigned: no wraparound check
        mask |= _U(fa >= _rng._ZKF[idx]) << _U(i)
    return mask


@njit(cache=True, error_model="numpy", inline="always")
def finish_chunk(raw, out, at, mask):
    """Finish a chunk's failed candidates (the bits of ``mask``), in order of position, from
    their words ``raw[i]`` on the fallback generator kept in ``raw``
    (:func:`rfcheck.engine.rng._normal_fix`).

    Parameters
    ----------
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        The chunk's words in ``raw[:64]``, the fallback state in ``raw[CHUNK:CHUNK + 2]``
        (advanced here).
    out : numpy.ndarray of float64
        The outputs, the chunk's start at ``out[at]``; the failed ones are overwritten.
    at : int
        The chunk's offset.
    mask : numpy.uint64
        The failures (:func:`chunk_candidates`).
    """
    if mask == _U(0):
        return
    st = _rng._load_fb(raw)
    while mask != _U(0):
        i = trailing_zeros(mask)
        mask &= mask - _ONE
        out[_U(at + i)], st = _rng._normal_fix_st(st, raw[i])
    _rng._store_fb(raw, st)


class PyCounterNormals:
    """Plain-Python twin of a counter-based generator's bulk normal fill: subclasses give
    :meth:`~rfcheck.engine.counter_normals.PyCounterNormals.call` (call ``c`` -> two 64-bit words); the fallback is
    :class:`rfcheck.engine.rng.PyRNG`'s (lane 1).  Bit-identical to the compiled fill, slow.

    Parameters
    ----------
    seed, stream, block : int
        The engine block ``(seed, stream, block)``.

    Attributes
    ----------
    j : int
        The index of the next call.
    fb : rfcheck.engine.rng.PyRNG
        Its fix-ups use this twin's fallback generator.
    """

    def __init__(self, seed: int, stream: int, block: int) -> None:
        self.j = 0
        self.fb = _rng.PyRNG(seed, stream, block)  # its lane-1 fallback is the engine's

    def call(self, c: int) -> tuple[int, int]:  # pragma: no cover - abstract
        """The two 64-bit words of call ``c``."""
        raise NotImplementedError

    def words(self, calls: int) -> list[int]:
        """The 64-bit words of the next ``calls`` calls (two per call)."""
        out: list[int] = []
        for q in range(calls):
            out += self.call(self.j + q)
        self.j += calls
        return out

    def fill_normals(self, n: int) -> list[float]:
        """``n`` normals, as the compiled ``fill_normals`` of the subclass's module."""
        out: list[float] = []
        while len(out) < n:
            m = min(_rng.CHUNK, n - len(out))
            out.extend(_rng._py_chunk_normals(self.words((m + 1) // 2)[:m], self.fb._normal_fix))
        return out


CACHE_FILES = ("bits.py", "llvm_vectors.py", "simd_ziggurat.py", "rng.py", "counter_normals.py")
"""The engine files whose compiled code this module's functions inline: its Numba on-disk cache is
keyed to their contents (:func:`rfcheck.engine.rng.tie_cache_to_engine`)."""

_rng.tie_cache_to_engine(globals(), CACHE_FILES, "rfcheck-engine-counter-normals")

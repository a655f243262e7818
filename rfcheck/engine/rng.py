"""Counter-seeded random numbers for the Numba engines: SplitMix64 with per-block increments.

Every block of Monte Carlo trials gets its own generators, seeded from
``(seed, stream, block)`` alone (:func:`block_state`, :func:`init_block`), so the numbers a
block sees do not depend on which thread runs it or on how many threads there are.  A
generator is SplitMix64 as in ``java.util.SplittableRandom`` (Steele, Lea & Flood 2014):
state ``s`` and an odd increment ``g`` (Java's ``mixGamma``: odd, at least 24 bit
transitions), ``s <- s + g``, output ``mix64(s)`` (Stafford's variant 13).  Each block draws
its own ``(s, g)`` from a hash of ``(seed, stream, block, lane)``, so blocks run different
arithmetic progressions, not shifted copies of one sequence.  The state is a 2-tuple of
``uint64`` passed *by value* (``st = (s, g)``): every draw returns ``(value, new_state)``,
which keeps it in registers inside the compiled loops.

Why SplitMix64 and not xoshiro256** (used up to 2026-11-22): the ``k``-th output of a block
is a pure function ``mix64(s + k g)`` of its index, so the bulk loops below have no serial
dependence and compile to SIMD code (AVX-512 ``vpmullq`` and gathers for the ziggurat
tables).  Measured on the development machine (one core, ``draw_normals``), whose iid
ensemble path is RNG-bound: 2.4 ns per normal with xoshiro's serial recurrence and a
256-layer ziggurat; 1.9-2.0 ns with SplitMix64 (the SIMD fast path ~1.3 ns, the rest the
1.5% of candidates that fail the fast test, tens of ns each: scalar code, ``exp``,
mispredicted branches); 1.6-1.7 ns with 1024 layers (since 2026-11-24), whose fast test
fails for 0.43% of candidates.  The speed-up is in the failures, so the layer count was
chosen by measuring 256/512/1024/2048 (1.98/1.75/1.62/1.79 ns: at 2048 the three tables
outgrow the L1 cache).  On an AVX2-only machine (AMD EPYC, 2026-11-25) there is no
``vpmullq``: LLVM keeps the two 64-bit multiplies of ``mix64`` scalar and vectorises the rest;
there it also converted the 52-bit abscissa to double one lane at a time (no 64-bit
integer -> double instruction below AVX-512), which the exact bit conversion
:func:`rfcheck.engine.bits.u52_to_f64` removed: 3.6-4.7 -> 2.9-3.6 ns per normal, interleaved A/B runs, one
thread, bit-identical numbers (a vectorised ``mix64`` -- 3 ``vpmuludq`` per multiply --
measured no faster than the scalar one there, 1.2 ns per word alone).  SplitMix64 passes
TestU01's BigCrush (Steele et al. 2014); its period ``2**64`` per block is far above any
block's use (``TRIALS_PER_BLOCK`` trials of at most a few thousand words each).

Scalar draws
------------
- :func:`next_u64`: SplitMix64, period ``2**64`` (any odd ``g``);
- :func:`uniform`: ``[0, 1)`` with 53 random bits; :func:`uniform_open`: ``(0, 1)``;
- :func:`normal`: standard normal by a 1024-layer ziggurat (Marsaglia & Tsang 2000 with
  :data:`ZIGGURAT_LAYERS` layers instead of 256, 52-bit abscissae as in NumPy's generator;
  tail by Marsaglia's 1964 method);
- :func:`gamma`: ``Gamma(a, 1)`` by Marsaglia & Tsang (2000) with a tighter squeeze
  (:func:`_mt_squeeze`), boosted by ``U**(1/a)`` for ``a < 1``; :func:`chi`.

Bulk draws (what the engines use)
---------------------------------
:func:`fill_normals` and :func:`fill_gammas` take the first candidate of every output
from the block's *main* generator in vectorised loops without branches or calls (one word
``mix64(s + k g)`` per normal, computed from its index; one normal and one uniform per
gamma), and finish the ~0.43% (normals) / ~0.1% (gamma, shape 32) rejected candidates
afterwards, in order, on the block's *fallback* generator (lane 1, its state kept in the
``raw`` scratch array).  A rejected candidate is completed exactly as the scalar algorithm
would (wedge/tail test, or Marsaglia-Tsang's exact test) and otherwise replaced by a fresh
scalar draw, so each output has exactly the target law; the streams differ from the scalar
functions'.

Twins
-----
:class:`PySplitMix` (one generator, scalar draws) and :class:`PyRNG` (a block: main and
fallback, bulk draws) are plain-Python twins (Python integers, ``math``) that produce
bit-identical numbers; they back the pure-Python reference of the engines and the parity
tests.  Floating-point expressions are written in the same order in both, and the kernels
are compiled with ``fastmath=False``, so the two agree to the last bit.

References
----------
G. L. Steele, D. Lea, C. H. Flood, "Fast splittable pseudorandom number generators",
OOPSLA 2014 (SplitMix64, mixGamma); G. Marsaglia, W. W. Tsang, "The ziggurat method
for generating random variables", J. Stat. Softw. 5(8) (2000); G. Marsaglia, W. W. Tsang,
"A simple method for generating gamma variables", ACM TOMS 26(3) (2000).
"""

from __future__ import annotations

import hashlib
import math
import os

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from rfcheck import validate
from rfcheck.engine.bits import u52_to_f64, u53_to_f64
from rfcheck.engine.simd_ziggurat import PAIRS as _PAIRS
from rfcheck.engine.simd_ziggurat import WIDE as _WIDE
from rfcheck.engine.simd_ziggurat import fast_pass, fast_pass_pairs, interleave_tables

__all__ = [
    "CHUNK",
    "RAW_SIZE",
    "PyRNG",
    "PySplitMix",
    "block_key",
    "block_state",
    "chi",
    "draw_gammas",
    "draw_normals",
    "draw_uniforms",
    "fill_gammas",
    "fill_normals",
    "fill_normals_repeat",
    "fill_uniforms_open",
    "gamma",
    "gamma_consts",
    "init_block",
    "next_u64",
    "normal",
    "py_block_key",
    "seed_key",
    "uniform",
    "uniform_open",
]

_U = np.uint64
_MASK = (1 << 64) - 1

_GOLDEN = _U(0x9E3779B97F4A7C15)
_MIX1 = _U(0xBF58476D1CE4E5B9)
_MIX2 = _U(0x94D049BB133111EB)
_S30, _S27, _S31, _S33 = _U(30), _U(27), _U(31), _U(33)
_GM1 = _U(0xFF51AFD7ED558CCD)  # mixGamma's multipliers (MurmurHash3 fmix64)
_GM2 = _U(0xC4CEB9FE1A85EC53)
_ALT = _U(0xAAAAAAAAAAAAAAAA)
_S11, _S1 = _U(11), _U(1)
_ONE = _U(1)
ZIGGURAT_LAYERS = 1024
"""Layers of the normal ziggurat: a word's low 10 bits pick the layer, bit 10 the sign, bits
11-62 the 52-bit abscissa (1024 = 2**10; see :func:`_ziggurat_tables`)."""
_ZBITS = 10
_ZIDX, _ZSH = _U(ZIGGURAT_LAYERS - 1), _U(_ZBITS)
_MANT = _U((1 << 52) - 1)
_TWO_M53 = 2.0**-53


# --------------------------------------------------------------------------- ziggurat tables
ZIGGURAT_EDGES = {
    256: (3.6541528853610087716, 0.0049286732339746553474),
    1024: (4.0388498461095045227, 0.0012263246463530880729),
}
"""Right edge ``r`` and layer area ``v = r f(r) + int_r^inf f`` (``f(x) = exp(-x^2/2)``) of
the n-layer ziggurat: the root of "the top layer's rectangle ``[0, x_1] x [f(x_1), 1]`` has
area ``v``" after the recursion of :func:`_ziggurat_tables`, solved in mpmath at 40 digits
(``tests/test_rng.py`` re-derives both).  256 is Marsaglia-Tsang's classic size."""


def _ziggurat_tables(n: int = ZIGGURAT_LAYERS) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Tables ``k`` (uint64), ``w``, ``f`` of the n-layer normal ziggurat (Marsaglia-Tsang).

    Layer ``i >= 1`` is the rectangle ``[0, x_i] x [f(x_i), f(x_{i-1})]`` with ``x`` increasing
    in ``i`` up to ``x_{n-1} = r``; layer 0 is the base strip (rectangle plus tail).  An
    abscissa is ``j * w[i]`` for a 52-bit integer ``j``; ``j < k[i]`` means inside the next
    layer's width, accepted at once.  With 1024 layers about 0.43% of candidates fail that
    test (1.5% with 256), which is what the bulk loops pay for: a failed candidate costs tens
    of nanoseconds (scalar code, a call to ``exp``, mispredicted branches), a fast one ~1 ns.
    """
    r, v = ZIGGURAT_EDGES[n]
    m1 = 2.0**52
    k = np.zeros(n, dtype=np.uint64)
    w = np.zeros(n)
    f = np.zeros(n)
    dn = tn = r
    q = v / math.exp(-0.5 * dn * dn)
    k[0] = int((dn / q) * m1)
    k[1] = 0
    w[0] = q / m1
    w[n - 1] = dn / m1
    f[0] = 1.0
    f[n - 1] = math.exp(-0.5 * dn * dn)
    for i in range(n - 2, 0, -1):
        dn = math.sqrt(-2.0 * math.log(v / dn + math.exp(-0.5 * dn * dn)))
        k[i + 1] = int((dn / tn) * m1)
        tn = dn
        f[i] = math.exp(-0.5 * dn * dn)
        w[i] = dn / m1
    return k, w, f, r


_ZK, _ZW, _ZF, _ZR = _ziggurat_tables()
_ZKF = _ZK.astype(np.float64)  # exact: every k[i] < 2**52 (the bulk loop compares doubles)
_ZWK = interleave_tables(_ZW, _ZKF)  # (w[i], k[i]) side by side, for the AVX2 fast pass
_ZINV_R = 1.0 / _ZR
_ZK_INT = [int(v) for v in _ZK]  # Python-int copy for the twin
_ZW_L = [float(v) for v in _ZW]
_ZF_L = [float(v) for v in _ZF]


# --------------------------------------------------------------------------- Numba cache
_ENGINE_FILES = ("bits.py", "llvm_vectors.py", "simd_ziggurat.py", "wy.py", "gauss_seidel.py", "simplex_sums.py",
                 "project.py", "rng.py",
                 *sorted(f"couplings/{f}" for f in os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                           "couplings")) if f.endswith(".py")),
                 "montecarlo.py")
"""The engine files (relative to this package; every module of :mod:`rfcheck.engine.couplings`, found
by listing it, so a new family module cannot be left out) whose contents key the Numba cache of the
kernels that inline them (:func:`tie_cache_to_engine`)."""


def engine_stamp(files: tuple[str, ...] = _ENGINE_FILES, tag: str = "rfcheck-engine") -> tuple[str, str]:
    """``(tag, sha256 of the contents of files)``, the files named relative to this package."""
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in files:
        try:
            with open(os.path.join(here, name), "rb") as fh:
                h.update(fh.read())
        except OSError:  # pragma: no cover - a module shipped without its source
            h.update(name.encode())
    return (tag, h.hexdigest())


def tie_cache_to_engine(namespace: dict, files: tuple[str, ...] = _ENGINE_FILES,
                        tag: str = "rfcheck-engine") -> None:
    """Key the on-disk Numba cache of every cached function in ``namespace`` to the
    contents of ``files`` (default: all engine modules, :data:`_ENGINE_FILES`).

    Numba invalidates a cached function only when *its own* source file changes, but the
    kernels inline the samplers and the generator from the other engine modules, so an
    edit there would leave stale machine code in use.  This replaces each cache's source
    stamp (a private attribute of Numba's cache; skipped if absent) by a hash of those
    files, so that any edit recompiles everything.  ``files`` must name every module whose
    compiled code the namespace's functions inline (``tests/test_wy.py`` checks the
    rfcheck imports, transitively).
    """
    stamp = engine_stamp(files, tag)
    for obj in list(namespace.values()):
        cache_file = getattr(getattr(obj, "_cache", None), "_cache_file", None)
        if cache_file is not None and hasattr(cache_file, "_source_stamp"):
            cache_file._source_stamp = stamp


# --------------------------------------------------------------------------- seeding
def seed_key(seed: object) -> int:
    """Validate a user seed (integer in ``[0, 2**64)``) and return it as a Python int.

    Parameters
    ----------
    seed : int or numpy.integer
        The seed (a ``bool`` is refused).

    Returns
    -------
    int
        ``int(seed)``.

    Raises
    ------
    ValueError
        If ``seed`` is not an integer (or is a ``bool``), or lies outside ``[0, 2**64)``.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.rng import seed_key
    >>> seed_key(np.uint64(2**64 - 1)) == 2**64 - 1
    True
    >>> seed_key(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer in [0, 2**64); got -1
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer in [0, 2**64); got {seed!r}")
    s = int(seed)
    if not 0 <= s < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64); got {s}")
    return s


@njit(cache=True, error_model="numpy", inline="always")
def _out64(z):
    """SplitMix64's output function (Stafford's mix variant 13, Java's ``mix64``)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, error_model="numpy", inline="always")
def _mix64(z):
    """:func:`_out64` of ``z + golden`` (one SplitMix64 step from state ``z``)."""
    return _out64(z + _GOLDEN)


@njit(cache=True, error_model="numpy")
def _mix_gamma(z):
    """Java ``SplittableRandom.mixGamma``: an odd increment with >= 24 bit transitions."""
    z = (z ^ (z >> _S33)) * _GM1
    z = (z ^ (z >> _S33)) * _GM2
    z = (z ^ (z >> _S33)) | _ONE
    x = z ^ (z >> _ONE)
    n = 0
    while x != _U(0):  # popcount
        x &= x - _ONE
        n += 1
    return z ^ _ALT if n < 24 else z


@njit(cache=True, error_model="numpy", inline="always")
def block_key(seed, stream, block, lane=0):
    """The 64-bit hash ``mix(mix(mix(mix(seed) ^ stream) ^ block) ^ lane)`` of a block's
    coordinates and a lane: :func:`block_state` seeds lane ``lane``'s SplitMix64 generator from
    it; the measured alternative generators take it as their keys (lane 2 for
    :mod:`rfcheck.engine.philox`, lanes 3 and 4 for :mod:`rfcheck.engine.ars`).

    Parameters
    ----------
    seed, stream, block, lane : numpy.uint64 or int
        Converted to ``uint64`` here (from Python: ints below ``2**63``, or ``np.uint64`` values).

    Returns
    -------
    numpy.uint64
        The hash (a Python int when called from Python).

    Examples
    --------
    >>> from rfcheck.engine.rng import block_key, py_block_key
    >>> block_key(3, 0, 0, 4) == py_block_key(3, 0, 0, 4), block_key(3, 0, 1) != block_key(3, 0, 0)
    (True, True)
    """
    return _mix64(_mix64(_mix64(_mix64(_U(seed)) ^ _U(stream)) ^ _U(block)) ^ _U(lane))


@njit(cache=True, error_model="numpy")
def block_state(seed, stream, block, lane=0):
    """SplitMix64 state ``(s, g)`` for ``(seed, stream, block, lane)`` (all uint64).

    ``key = mix(mix(mix(mix(seed) ^ stream) ^ block) ^ lane)``; ``s = mix(key)`` and
    ``g = mixGamma(mix(key + golden))`` (as ``SplittableRandom.split``).  ``mix`` is a
    bijection, so for fixed ``seed`` and ``stream`` distinct ``(block, lane)`` get distinct
    keys.  Lane 0 is a block's main generator, lane 1 its fallback generator (see
    :func:`init_block`).

    Parameters
    ----------
    seed, stream, block : numpy.uint64 or int
        The block's coordinates, each converted to ``uint64`` here (from Python: ints below
        ``2**63``, or ``np.uint64`` values for the whole range ``[0, 2**64)``).
    lane : numpy.uint64 or int, default 0
        0 for the block's main generator, 1 for its fallback (the hash ``key`` of lane 2 is the
        Philox key, :func:`rfcheck.engine.philox.block_key`).

    Returns
    -------
    tuple of 2 numpy.uint64
        The state ``(s, g)``, ``g`` odd (Python ints when called from Python).

    Examples
    --------
    The plain-Python twin :class:`PySplitMix` starts from the same state:

    >>> import numpy as np
    >>> from rfcheck.engine.rng import PySplitMix, block_state
    >>> s, g = block_state(1, 2, 0)
    >>> (s, g) == (PySplitMix(1, 2, 0).s, PySplitMix(1, 2, 0).g), g % 2
    (True, 1)
    >>> big = block_state(np.uint64(2**64 - 1), np.uint64(5), np.uint64(0), np.uint64(1))
    >>> r = PySplitMix(2**64 - 1, 5, 0, lane=1)
    >>> big == (r.s, r.g)
    True
    """
    key = block_key(seed, stream, block, lane)
    return (_mix64(key), _mix_gamma(_mix64(key + _GOLDEN)))


CHUNK = 64  # fill_normals keeps one 64-bit failure mask per chunk: at most 64
"""Bulk normals are drawn in chunks of this many: a branch-free fast pass, then fix-ups."""

RAW_SIZE = 2 * CHUNK + 4
"""Length of the uint64 scratch ``raw`` of the bulk draws.  ``raw[CHUNK:CHUNK + 2]`` holds
the block's fallback generator state; the rest is scratch (kept at this size so that the
engines' scratch layout does not depend on the generator)."""


@njit(cache=True, error_model="numpy")
def init_block(seed, stream, block, raw):
    """Start block ``block`` of ``(seed, stream)``: returns the main state (lane 0) and
    stores the fallback state (lane 1) in ``raw[CHUNK:CHUNK + 2]``.

    The bulk draws take their first candidates from the main state in branch-free loops
    and the rare rejection fix-ups from the fallback, so that the main state never leaves
    registers.

    Parameters
    ----------
    seed, stream, block : numpy.uint64 or int
        The block's coordinates, as for :func:`block_state`.
    raw : numpy.ndarray of uint64, shape (RAW_SIZE,)
        The bulk draws' scratch (:data:`RAW_SIZE`; at least ``CHUNK + 2`` entries); entries
        ``CHUNK`` and ``CHUNK + 1`` are overwritten with the fallback state ``(s, g)``.

    Returns
    -------
    tuple of 2 numpy.uint64
        The main state ``block_state(seed, stream, block, 0)``.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.rng import CHUNK, RAW_SIZE, block_state, init_block
    >>> raw = np.zeros(RAW_SIZE, dtype=np.uint64)
    >>> st = init_block(1, 2, 0, raw)
    >>> st == block_state(1, 2, 0), tuple(int(v) for v in raw[CHUNK:CHUNK + 2]) == block_state(1, 2, 0, 1)
    (True, True)
    """
    _store_fb(raw, block_state(seed, stream, block, 1))
    return block_state(seed, stream, block, 0)


@njit(cache=True, error_model="numpy", inline="always")
def _load_fb(raw):
    return (raw[CHUNK], raw[CHUNK + 1])


@njit(cache=True, error_model="numpy", inline="always")
def _store_fb(raw, st):
    raw[CHUNK] = st[0]
    raw[CHUNK + 1] = st[1]


# --------------------------------------------------------------------------- scalar draws
@njit(cache=True, error_model="numpy", inline="always")
def next_u64(st):
    """One SplitMix64 output ``mix64(s + g)``; returns ``(r, (s + g, g))``.

    Parameters
    ----------
    st : tuple of 2 numpy.uint64
        The generator state ``(s, g)`` (:func:`block_state`, :func:`init_block`), passed by
        value.  From Python, wrap the ints that a compiled call returns:
        ``tuple(np.uint64(v) for v in st)`` (plain ints would be typed ``int64``).

    Returns
    -------
    r : numpy.uint64
        The output word.
    st : tuple of 2 numpy.uint64
        The new state ``(s + g mod 2**64, g)``.

    Examples
    --------
    The same word as the plain-Python twin :class:`PySplitMix`:

    >>> import numpy as np
    >>> from rfcheck.engine.rng import PySplitMix, block_state, next_u64
    >>> st = tuple(np.uint64(v) for v in block_state(1, 2, 0))
    >>> r, (s, g) = next_u64(st)
    >>> r == PySplitMix(1, 2, 0).next_u64(), s == (int(st[0]) + int(st[1])) % 2**64, g == int(st[1])
    (True, True, True)
    """
    s = st[0] + st[1]
    return _out64(s), (s, st[1])


@njit(cache=True, error_model="numpy", inline="always")
def uniform(st):
    """Uniform on ``[0, 1)`` (53 bits); returns ``(u, new_state)``.

    ``u = (r >> 11) 2^-53`` for the next word ``r`` (:func:`next_u64`).

    Parameters
    ----------
    st : tuple of 2 numpy.uint64
        The generator state ``(s, g)`` (:func:`block_state`, :func:`init_block`), passed by
        value.  From Python, wrap the ints that a compiled call returns:
        ``tuple(np.uint64(v) for v in st)`` (plain ints would be typed ``int64``).

    Returns
    -------
    u : float
        A multiple of ``2^-53`` in ``[0, 1)``.
    st : tuple of 2 numpy.uint64
        The new state (one word consumed).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.rng import PySplitMix, block_state, uniform
    >>> u, _ = uniform(tuple(np.uint64(v) for v in block_state(1, 2, 0)))
    >>> u == PySplitMix(1, 2, 0).uniform(), 0.0 <= u < 1.0, (u * 2.0**53).is_integer()
    (True, True, True)
    """
    r, st = next_u64(st)
    return float(r >> _S11) * _TWO_M53, st


@njit(cache=True, error_model="numpy", inline="always")
def uniform_open(st):
    """Uniform on the open interval ``(0, 1)`` up to one rounding (safe for ``log``: never 0);
    returns ``(u, new_state)``.

    ``u = fl(k + 1/2) 2^-53`` with ``k = r >> 11`` for the next word ``r`` (:func:`next_u64`).
    For ``k < 2^52`` the sum is exact (``u`` an odd multiple of ``2^-54``); for ``k >= 2^52`` the
    ``+ 1/2`` is rounded (ties to even), so ``u`` is a multiple of ``2^-52`` in ``[1/2, 1]``, and
    ``k = 2^53 - 1`` gives exactly ``u = 1.0`` (probability ``2^-53`` per draw).

    Parameters
    ----------
    st : tuple of 2 numpy.uint64
        The generator state ``(s, g)`` (:func:`block_state`, :func:`init_block`), passed by
        value.  From Python, wrap the ints that a compiled call returns:
        ``tuple(np.uint64(v) for v in st)`` (plain ints would be typed ``int64``).

    Returns
    -------
    u : float
        In ``(0, 1]``: ``1.0`` only for ``k = 2^53 - 1`` (see above).
    st : tuple of 2 numpy.uint64
        The new state (one word consumed).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.rng import PySplitMix, block_state, uniform_open
    >>> u, _ = uniform_open(tuple(np.uint64(v) for v in block_state(1, 2, 0)))
    >>> u == PySplitMix(1, 2, 0).uniform_open(), 0.0 < u < 1.0
    (True, True)

    The rounding at the top (the same arithmetic in double precision):

    >>> (float(2**53 - 1) + 0.5) * 2.0**-53, (float(2**52 + 1) + 0.5) * 2.0**-53 == (2**52 + 2) * 2.0**-53
    (1.0, True)
    """
    r, st = next_u64(st)
    return (float(r >> _S11) + 0.5) * _TWO_M53, st


@njit(cache=True, error_model="numpy")
def _normal_slow(st, idx, x):
    """Ziggurat rejection branch (about 1% of draws): tail or wedge test."""
    if idx == 0:
        while True:
            u1, st = uniform_open(st)
            u2, st = uniform_open(st)
            xx = -math.log(u1) * _ZINV_R
            yy = -math.log(u2)
            if yy + yy > xx * xx:
                return _ZR + xx, True, st
    u, st = uniform(st)
    if _ZF[idx] + u * (_ZF[idx - 1] - _ZF[idx]) < math.exp(-0.5 * x * x):
        return x, True, st
    return x, False, st


@njit(cache=True, error_model="numpy", inline="always")
def normal(st):
    """Standard normal by the 1024-layer ziggurat; returns ``(z, new_state)``.

    Parameters
    ----------
    st : tuple of 2 numpy.uint64
        The generator state ``(s, g)`` (:func:`block_state`, :func:`init_block`), passed by
        value.  From Python, wrap the ints that a compiled call returns:
        ``tuple(np.uint64(v) for v in st)`` (plain ints would be typed ``int64``).

    Returns
    -------
    z : float
        The standard normal draw.
    st : tuple of 2 numpy.uint64
        The new state (one word per candidate, more for a rejected one).

    Examples
    --------
    A thousand draws (a few take the slow branch) equal the plain-Python twin's, bit for bit:

    >>> import numpy as np
    >>> from numba import njit
    >>> from rfcheck.engine.rng import PySplitMix, block_state, normal
    >>> @njit
    ... def normals(n):
    ...     st, out = block_state(1, 2, 0), np.empty(n)
    ...     for i in range(n):
    ...         out[i], st = normal(st)
    ...     return out
    >>> r = PySplitMix(1, 2, 0)
    >>> bool(np.array_equal(normals(1000), [r.normal() for _ in range(1000)]))
    True
    """
    while True:
        r, st = next_u64(st)
        idx = np.int64(r & _ZIDX)
        r = r >> _ZSH
        neg = (r & _ONE) != _U(0)
        rabs = (r >> _S1) & _MANT
        x = float(rabs) * _ZW[idx]
        if rabs < _ZK[idx]:
            return (-x if neg else x), st
        x, ok, st = _normal_slow(st, idx, x)
        if ok:
            return (-x if neg else x), st


def gamma_consts(a: float) -> tuple[float, float, float]:
    """Constants ``(a, d, c)`` of Marsaglia-Tsang for shape ``a > 0``.

    ``d = a_eff - 1/3`` and ``c = 1 / sqrt(9 d)`` with ``a_eff = a`` for ``a >= 1`` and
    ``a + 1`` otherwise (then boosted by ``U**(1/a)``).

    Parameters
    ----------
    a : float
        The shape (> 0).

    Returns
    -------
    (float, float, float)
        ``(a, d, c)`` as floats, the arguments of :func:`gamma` / :func:`fill_gammas` after
        the state.

    Raises
    ------
    ValueError
        If ``a > 0`` does not hold (NaN included).

    References
    ----------
    Marsaglia and Tsang, "A simple method for generating gamma variables", ACM TOMS 26
    (2000).

    Examples
    --------
    >>> import math
    >>> from rfcheck.engine.rng import gamma_consts
    >>> a, d, c = gamma_consts(0.5)  # a < 1: a_eff = 1.5
    >>> d == 1.5 - 1 / 3, math.isclose(9 * d * c * c, 1.0)
    (True, True)
    """
    a = float(a)
    if not a > 0:
        raise ValueError(f"gamma shape must be > 0; got {a}")
    ae = a if a >= 1.0 else a + 1.0
    dd = ae - 1.0 / 3.0
    return a, dd, 1.0 / math.sqrt(9.0 * dd)


@njit(cache=True, error_model="numpy", inline="always")
def _mt_squeeze(x, u, dd, c):
    """First Marsaglia-Tsang test of a candidate ``(x, u)``: ``(accepted, v**3)``.

    With ``y = c x``, ``v = 1 + y``: the exact test ``log u < x^2/2 + d (1 - v^3 + log v^3)``
    equals ``log u < 3d (log(1+y) - y + y^2/2 - y^3/3)`` (as ``9 d c^2 = 1``); since
    ``log(1+y) - y + y^2/2 - y^3/3 >= -y^4/4`` for ``y >= 0`` and ``>= -y^4 / (4 (1+y))`` for
    ``-1 < y < 0``, and ``log u <= u - 1``, ``u < 1 - 3d y^4 / (4 min(1, 1+y))`` implies
    acceptance.  It accepts 99.9% at ``a = 32`` (Marsaglia-Tsang's own squeeze ~92%).
    Branch-free so that bulk loops vectorise.
    """
    y = c * x
    v = 1.0 + y
    y2 = y * y
    q = 0.75 * dd * (y2 * y2)
    q = q / v if y < 0.0 else q
    return (v > 0.0) & (u < 1.0 - q), v * v * v


@njit(cache=True, error_model="numpy", inline="always")
def _mt_exact(x, u, v3, dd):
    """Marsaglia-Tsang's exact acceptance test (after the squeeze failed)."""
    return v3 > 0.0 and math.log(u) < 0.5 * x * x + dd * (1.0 - v3 + math.log(v3))


@njit(cache=True, error_model="numpy")
def _gamma_core(st, dd, c):
    """``Gamma(d + 1/3, 1)`` by Marsaglia-Tsang (shape >= 1); returns ``(g, new_state)``."""
    while True:
        x, st = normal(st)
        u, st = uniform_open(st)
        ok, v3 = _mt_squeeze(x, u, dd, c)
        if ok or _mt_exact(x, u, v3, dd):
            return dd * v3, st


@njit(cache=True, error_model="numpy", inline="always")
def gamma(st, a, dd, c):
    """``Gamma(a, 1)`` by Marsaglia-Tsang; ``a, dd, c`` from :func:`gamma_consts`.

    Returns ``(g, new_state)``.  For ``a < 1`` it draws ``Gamma(a + 1) * U**(1/a)``.

    Parameters
    ----------
    st : tuple of 2 numpy.uint64
        The generator state ``(s, g)`` (:func:`block_state`, :func:`init_block`), passed by
        value.  From Python, wrap the ints that a compiled call returns:
        ``tuple(np.uint64(v) for v in st)`` (plain ints would be typed ``int64``).
    a, dd, c : float
        The shape ``a > 0`` and Marsaglia-Tsang's constants, as :func:`gamma_consts` returns
        them (not checked here).

    Returns
    -------
    g : float
        The ``Gamma(a, 1)`` draw.
    st : tuple of 2 numpy.uint64
        The new state.

    Examples
    --------
    Draws with ``a < 1`` (the boosted branch) equal the plain-Python twin's, bit for bit:

    >>> import numpy as np
    >>> from numba import njit
    >>> from rfcheck.engine.rng import PySplitMix, block_state, gamma, gamma_consts
    >>> @njit
    ... def gammas(n, a, dd, c):
    ...     st, out = block_state(1, 2, 0), np.empty(n)
    ...     for i in range(n):
    ...         out[i], st = gamma(st, a, dd, c)
    ...     return out
    >>> k, r = gamma_consts(0.5), PySplitMix(1, 2, 0)
    >>> bool(np.array_equal(gammas(500, *k), [r.gamma(*k) for _ in range(500)]))
    True
    """
    g, st = _gamma_core(st, dd, c)
    if a < 1.0:
        u, st = uniform_open(st)
        g = g * math.exp(math.log(u) / a)
    return g, st


@njit(cache=True, error_model="numpy", inline="always")
def chi(st, a, dd, c):
    """``chi_k`` draw, ``sqrt(2 Gamma(k/2))``; pass ``gamma_consts(k / 2)``.

    Parameters
    ----------
    st : tuple of 2 numpy.uint64
        The generator state ``(s, g)`` (:func:`block_state`, :func:`init_block`), passed by
        value.  From Python, wrap the ints that a compiled call returns:
        ``tuple(np.uint64(v) for v in st)`` (plain ints would be typed ``int64``).
    a, dd, c : float
        ``gamma_consts(k / 2)`` for ``k`` degrees of freedom (not checked here).

    Returns
    -------
    x : float
        The ``chi_k`` draw.
    st : tuple of 2 numpy.uint64
        The new state.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> from numba import njit
    >>> from rfcheck.engine.rng import PySplitMix, block_state, chi, gamma_consts
    >>> @njit
    ... def chis(n, a, dd, c):
    ...     st, out = block_state(1, 2, 0), np.empty(n)
    ...     for i in range(n):
    ...         out[i], st = chi(st, a, dd, c)
    ...     return out
    >>> k, r = gamma_consts(3 / 2), PySplitMix(1, 2, 0)
    >>> x = chis(200, *k)
    >>> bool(np.array_equal(x, [math.sqrt(2.0 * r.gamma(*k)) for _ in range(200)]))
    True
    """
    g, st = gamma(st, a, dd, c)
    return math.sqrt(2.0 * g), st


# --------------------------------------------------------------------------- bulk draws
@njit(cache=True, error_model="numpy")
def _normal_fix_st(st, r):
    """Slow branch for a raw word ``r`` whose ziggurat fast test failed, on the fallback
    generator state ``st``: the tail or wedge test on the same candidate, then, if that
    rejects too, a fresh :func:`normal` (a rejected candidate restarts the ziggurat).
    Returns ``(z, new_state)``."""
    idx = np.int64(r & _ZIDX)
    rr = r >> _ZSH
    x = float((rr >> _S1) & _MANT) * _ZW[idx]
    x, ok, st = _normal_slow(st, idx, x)
    if ok:
        return (-x if (rr & _ONE) != _U(0) else x), st
    return normal(st)


@njit(cache=True, error_model="numpy")
def _normal_fix(raw, r):
    """:func:`_normal_fix_st` on the fallback generator kept in ``raw``."""
    z, st = _normal_fix_st(_load_fb(raw), r)
    _store_fb(raw, st)
    return z


GROUP = CHUNK
""":func:`fill_normals` runs the fast pass over up to this many chunks (their failure masks
wait in ``raw[:GROUP]``) before it finishes their failed candidates: the slow branch's
mispredicted branches and calls leave the vector loop."""


@njit(cache=True, error_model="numpy")
def fill_normals(st, out, raw):
    """Fill ``out`` with standard normals; ``raw`` from :func:`init_block`.

    Per chunk of :data:`CHUNK` (= 64) outputs: main-generator word ``k`` is ``mix64(s + k
    g)``, computed from its index, and the ziggurat fast test (~99.6% accept) runs without
    branches or calls, 8 candidates at a time (:func:`rfcheck.engine.simd_ziggurat.fast_pass` on
    AVX-512 targets, :func:`~rfcheck.engine.simd_ziggurat.fast_pass_pairs` on AVX2 targets; the
    chunk's last ``m mod 8``, and on other targets all, in a loop that LLVM vectorises), the failures
    recorded as bits of a 64-bit mask (kept in ``raw[c]`` for chunk ``c`` of a group of up to
    :data:`GROUP` chunks); then, in order of position, the group's failed candidates (their
    words recomputed) are finished on the fallback generator (:func:`_normal_fix_st`).
    Equal in law to repeated :func:`normal`.  Returns the new main state.

    Parameters
    ----------
    st : tuple of 2 uint64
        The block's main state ``(s, g)`` (:func:`init_block`); converted to ``uint64`` here,
        so plain ints work too.
    out : numpy.ndarray of float64, shape (n,)
        Filled in place (C-contiguous; any ``n >= 0``).
    raw : numpy.ndarray of uint64, shape (RAW_SIZE,)
        The block's scratch from :func:`init_block`: entries ``CHUNK``, ``CHUNK + 1`` hold the
        fallback generator, which the fix-ups advance; entries ``0 .. GROUP - 1`` are
        overwritten (the failure masks).

    Returns
    -------
    tuple of 2 numpy.uint64
        The new main state ``(s + n g mod 2**64, g)``: one word per output.

    Examples
    --------
    Bit for bit the plain-Python twin's ``PyRNG.fill_normals``:

    >>> import numpy as np
    >>> from rfcheck.engine.rng import RAW_SIZE, PyRNG, fill_normals, init_block
    >>> raw, out = np.empty(RAW_SIZE, dtype=np.uint64), np.empty(200)
    >>> s, g = init_block(1, 2, 0, raw)
    >>> st = fill_normals((np.uint64(s), np.uint64(g)), out, raw)
    >>> bool(np.array_equal(out, PyRNG(1, 2, 0).fill_normals(200))), st == ((s + 200 * g) % 2**64, g)
    (True, True)
    """
    n = out.shape[0]
    s, g = _U(st[0]), _U(st[1])  # uint64 even when called from Python with plain ints
    i0 = 0
    while i0 < n:
        span = min(CHUNK * GROUP, n - i0)
        nchunks = (span + CHUNK - 1) // CHUNK
        fails = _U(0)
        for c in range(nchunks):  # the fast pass, chunk by chunk; masks into raw[c]
            j = i0 + c * CHUNK
            m = min(CHUNK, n - j)
            sc = s + _U(c * CHUNK) * g
            nv = m // 8 if (_WIDE or _PAIRS) else 0
            if _WIDE:  # candidates 1 .. 8 nv, 8 at a time
                mask = fast_pass(sc, g, out, j, nv, _ZW, _ZKF)
            elif _PAIRS:
                mask = fast_pass_pairs(sc, g, out, j, nv, _ZWK)
            else:  # all in the loop below
                mask = _U(0)
            o = out[j:j + m]
            for i in range(8 * nv, m):  # the rest, the same operations one at a time
                r = _out64(sc + _U(i + 1) * g)
                idx = np.int64(r & _ZIDX)
                rr = r >> _ZSH
                fa = u52_to_f64((rr >> _S1) & _MANT)  # the 52-bit abscissa, exactly
                x = fa * _ZW[idx]
                o[i] = -x if (rr & _ONE) != _U(0) else x
                mask |= _U(fa >= _ZKF[idx]) << _U(i)  # as rabs >= k[idx]: both exact
            raw[c] = mask
            fails |= mask
        if fails != _U(0):  # the failed candidates, in order of position, on the fallback
            fb = _load_fb(raw)
            for c in range(nchunks):
                mask = raw[c]
                while mask != _U(0):
                    i = trailing_zeros(mask) + c * CHUNK
                    mask &= mask - _ONE
                    out[i0 + i], fb = _normal_fix_st(fb, _out64(s + _U(i + 1) * g))
            _store_fb(raw, fb)
        s = s + _U(span) * g
        i0 += span
    return (s, g)


@njit(cache=True, error_model="numpy")
def fill_uniforms_open(st, out):
    """Fill ``out`` with uniforms on ``(0, 1)`` (word ``k`` is ``mix64(s + k g)``, as
    repeated :func:`uniform_open`, in a SIMD loop); returns the new state.

    The values are :func:`uniform_open`'s, rounding included (``1.0`` with probability
    ``2^-53`` per draw).  The states ``s + k g`` are stepped by ``g`` (the same integers mod
    ``2**64``), not multiplied out per word: on an AVX2 target, where a 64-bit vector multiply is
    three 32-bit ones, 1.83 -> 1.38 ns per uniform (one Zen 3 thread, 2026-11-28,
    ``results/bench/2026-11-28-am-zen3/ab_uniforms.py``).

    Parameters
    ----------
    st : tuple of 2 uint64
        The generator state ``(s, g)``; converted to ``uint64`` here.
    out : numpy.ndarray of float64, shape (n,)
        Filled in place.

    Returns
    -------
    tuple of 2 numpy.uint64
        The new state ``(s + n g mod 2**64, g)``.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.rng import PySplitMix, block_state, fill_uniforms_open
    >>> s, g = block_state(1, 2, 0)
    >>> out, r = np.empty(100), PySplitMix(1, 2, 0)
    >>> st = fill_uniforms_open((np.uint64(s), np.uint64(g)), out)
    >>> bool(np.array_equal(out, [r.uniform_open() for _ in range(100)])), st == (r.s, r.g)
    (True, True)
    """
    s, g = _U(st[0]), _U(st[1])
    n = out.shape[0]
    z = s
    for i in range(n):  # z = s + (i + 1) g mod 2**64, stepped: no 64-bit multiply per word
        z += g
        r = _out64(z)
        out[i] = (u53_to_f64(r >> _S11) + 0.5) * _TWO_M53
    return (s + _U(n) * g, g)


@njit(cache=True, error_model="numpy")
def _gamma_fixups(raw, out, xs, us, dd, c):
    st = _load_fb(raw)
    for i in range(out.shape[0]):
        ok, v3 = _mt_squeeze(xs[i], us[i], dd, c)
        if not ok and not _mt_exact(xs[i], us[i], v3, dd):
            out[i], st = _gamma_core(st, dd, c)
    _store_fb(raw, st)


@njit(cache=True, error_model="numpy")
def fill_gammas(st, a, dd, c, out, xbuf, ubuf, raw):
    """Fill ``out`` (n,) with ``Gamma(a, 1)``; ``xbuf, ubuf`` float scratch (>= n), ``raw``
    from :func:`init_block`.

    n normals and n uniforms in bulk give every output a first Marsaglia-Tsang candidate
    (branch-free squeeze, :func:`_mt_squeeze`); failed ones, in order, take the exact test
    and, if rejected, a fresh :func:`_gamma_core` draw from the fallback generator.  For
    ``a < 1``, n more uniforms boost all outputs by ``U**(1/a)``.  Returns the new state.

    Parameters
    ----------
    st : tuple of 2 uint64
        The block's main state (:func:`init_block`); converted to ``uint64`` by the bulk draws.
    a, dd, c : float
        The shape ``a > 0`` and Marsaglia-Tsang's constants, as :func:`gamma_consts` returns
        them (not checked here).
    out : numpy.ndarray of float64, shape (n,)
        Filled in place.
    xbuf, ubuf : numpy.ndarray of float64, shape (>= n,)
        Scratch, overwritten (distinct from ``out`` and from each other; sizes not checked:
        Numba does not check bounds).
    raw : numpy.ndarray of uint64, shape (RAW_SIZE,)
        The block's scratch from :func:`init_block`: entries ``CHUNK``, ``CHUNK + 1`` hold the
        fallback generator, which the fix-ups advance.

    Returns
    -------
    tuple of 2 numpy.uint64
        The new main state: ``n`` words for the normals, ``n`` for the uniforms, ``n`` more
        if ``a < 1``.

    Examples
    --------
    Bit for bit the plain-Python twin's ``PyRNG.fill_gammas`` (``a < 1``: boosted):

    >>> import numpy as np
    >>> from rfcheck.engine.rng import RAW_SIZE, PyRNG, fill_gammas, gamma_consts, init_block
    >>> raw, out, xb, ub = np.empty(RAW_SIZE, dtype=np.uint64), np.empty(300), np.empty(300), np.empty(300)
    >>> st = tuple(np.uint64(v) for v in init_block(1, 2, 0, raw))
    >>> k = gamma_consts(0.5)
    >>> _ = fill_gammas(st, *k, out, xb, ub, raw)
    >>> bool(np.array_equal(out, PyRNG(1, 2, 0).fill_gammas(300, *k)))
    True
    """
    n = out.shape[0]
    xs = xbuf[:n]
    us = ubuf[:n]
    st = fill_normals(st, xs, raw)
    st = fill_uniforms_open(st, us)
    nfail = 0
    for i in range(n):
        ok, v3 = _mt_squeeze(xs[i], us[i], dd, c)
        out[i] = dd * v3
        nfail += np.int64(not ok)
    if nfail > 0:
        _gamma_fixups(raw, out, xs, us, dd, c)
    if a < 1.0:
        st = fill_uniforms_open(st, us)
        for i in range(n):
            out[i] = out[i] * math.exp(math.log(us[i]) / a)
    return st


@njit(cache=True, error_model="numpy")
def _draw_normals(seed, stream, out):
    raw = np.empty(RAW_SIZE, dtype=np.uint64)
    st = init_block(seed, stream, _U(0), raw)
    fill_normals(st, out, raw)


@njit(cache=True, error_model="numpy")
def fill_normals_repeat(seed, stream, buf, reps):
    """``reps`` consecutive bulk fills of ``buf`` from block 0 of ``(seed, stream)`` (the
    engines' way of drawing: a few thousand normals at a time into a scratch array that stays
    in cache); returns ``buf[0]``.  For the generator benchmark (``rfcheck bench``).

    Parameters
    ----------
    seed, stream : numpy.uint64 or int
        Select block 0's generators (:func:`init_block`).
    buf : numpy.ndarray of float64, shape (n,)
        Refilled ``reps`` times (:func:`fill_normals`); holds the last fill on return.
    reps : int
        Number of fills (``>= 0``).

    Returns
    -------
    float
        ``buf[0]`` after the last fill (a value the caller can use, so that the work is not
        optimised away).

    Examples
    --------
    The last of three fills of 10 equals the twin's third request of 10:

    >>> import numpy as np
    >>> from rfcheck.engine.rng import PyRNG, fill_normals_repeat
    >>> buf, r = np.empty(10), PyRNG(1, 2, 0)
    >>> last = [r.fill_normals(10) for _ in range(3)][-1]
    >>> x0 = fill_normals_repeat(1, 2, buf, 3)
    >>> bool(np.array_equal(buf, last)), x0 == last[0]
    (True, True)
    """
    raw = np.empty(RAW_SIZE, dtype=np.uint64)
    st = init_block(seed, stream, _U(0), raw)
    for _ in range(reps):
        st = fill_normals(st, buf, raw)
    return buf[0]


@njit(cache=True, error_model="numpy")
def _draw_normals_scalar(seed, stream, out):
    st = block_state(seed, stream, _U(0))
    for i in range(out.shape[0]):
        out[i], st = normal(st)


@njit(cache=True, error_model="numpy")
def _draw_uniforms(seed, stream, out):
    st = block_state(seed, stream, _U(0))
    for i in range(out.shape[0]):
        out[i], st = uniform(st)


@njit(cache=True, error_model="numpy")
def _draw_gammas(seed, stream, a, dd, c, out):
    raw = np.empty(RAW_SIZE, dtype=np.uint64)
    st = init_block(seed, stream, _U(0), raw)
    n = out.shape[0]
    fill_gammas(st, a, dd, c, out, np.empty(n), np.empty(n), raw)


@njit(cache=True, error_model="numpy")
def _draw_gammas_scalar(seed, stream, a, dd, c, out):
    st = block_state(seed, stream, _U(0))
    for i in range(out.shape[0]):
        out[i], st = gamma(st, a, dd, c)


def _args(n: object, seed: object, stream: object) -> tuple[int, np.uint64, np.uint64]:
    return (validate.positive_int(n, "n"), _U(seed_key(seed)), _U(seed_key(stream)))


def draw_normals(n: int, seed: int = 0, stream: int = 0, *, bulk: bool = True) -> np.ndarray:
    """``n`` standard normals from block 0 of ``(seed, stream)``.

    ``bulk=True`` uses :func:`fill_normals` (what the engines use), ``bulk=False`` repeated
    :func:`normal` (the scalar path).  For tests and users.

    Parameters
    ----------
    n : int
        Number of draws (>= 1).
    seed, stream : int, default 0
        Integers in ``[0, 2**64)`` selecting the generators (:func:`block_state`).
    bulk : bool, default True
        The bulk path or the scalar path (different numbers, same law).

    Returns
    -------
    numpy.ndarray
        The ``n`` draws, float64, shape ``(n,)``.

    Raises
    ------
    ValueError
        Through its argument checks: ``n`` not an integer ``>= 1``, or ``seed``/``stream`` not
        an integer in ``[0, 2**64)``.

    Examples
    --------
    The bulk draws equal the plain-Python twin's, bit for bit:

    >>> import numpy as np
    >>> from rfcheck.engine.rng import PyRNG, draw_normals
    >>> bool(np.array_equal(draw_normals(5, seed=1, stream=2), PyRNG(1, 2, 0).fill_normals(5)))
    True
    """
    n, s, t = _args(n, seed, stream)
    out = np.empty(n)
    (_draw_normals if bulk else _draw_normals_scalar)(s, t, out)
    return out


def draw_uniforms(n: int, seed: int = 0, stream: int = 0) -> np.ndarray:
    """``n`` uniforms on ``[0, 1)`` from block 0 of ``(seed, stream)``.

    Parameters
    ----------
    n : int
        Number of draws (>= 1).
    seed, stream : int, default 0
        Integers in ``[0, 2**64)`` selecting the generator (:func:`block_state`).

    Returns
    -------
    numpy.ndarray
        The ``n`` draws, multiples of ``2^-53`` in ``[0, 1)``, float64, shape ``(n,)``.

    Raises
    ------
    ValueError
        Through its argument checks: ``n`` not an integer ``>= 1``, or ``seed``/``stream`` not
        an integer in ``[0, 2**64)``.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.rng import PyRNG, draw_uniforms
    >>> u, r = draw_uniforms(5, seed=1, stream=2), PyRNG(1, 2, 0)
    >>> bool(np.array_equal(u, [r.uniform() for _ in range(5)])), bool(((0 <= u) & (u < 1)).all())
    (True, True)
    """
    n, s, t = _args(n, seed, stream)
    out = np.empty(n)
    _draw_uniforms(s, t, out)
    return out


def draw_gammas(
    n: int, a: float, seed: int = 0, stream: int = 0, *, bulk: bool = True
) -> np.ndarray:
    """``n`` draws of ``Gamma(a, 1)`` (bulk :func:`fill_gammas` or repeated :func:`gamma`).

    Parameters
    ----------
    n : int
        Number of draws (>= 1).
    a : float
        The shape (> 0, finite).
    seed, stream : int, default 0
        Integers in ``[0, 2**64)`` selecting the generators (:func:`block_state`).
    bulk : bool, default True
        The bulk path or the scalar path (different numbers, same law).

    Returns
    -------
    numpy.ndarray
        The ``n`` draws, float64, shape ``(n,)``.

    Raises
    ------
    ValueError
        Through its argument checks: ``n`` not an integer ``>= 1``, ``seed``/``stream`` not
        an integer in ``[0, 2**64)``, or ``a`` not a finite real ``> 0``.

    Examples
    --------
    The sample mean is within five standard errors of ``a``:

    >>> import numpy as np
    >>> from rfcheck.engine.rng import draw_gammas
    >>> g = draw_gammas(20_000, 2.5, seed=3)
    >>> g.shape, bool(abs(g.mean() - 2.5) < 5 * np.sqrt(2.5 / g.size))
    ((20000,), True)
    """
    n, s, t = _args(n, seed, stream)
    a, dd, c = gamma_consts(validate.finite_real(a, "a"))
    out = np.empty(n)
    (_draw_gammas if bulk else _draw_gammas_scalar)(s, t, a, dd, c, out)
    return out


# --------------------------------------------------------------------------- Python twin
def _py_out64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _py_mix64(z: int) -> int:
    return _py_out64((z + 0x9E3779B97F4A7C15) & _MASK)


def _py_mix_gamma(z: int) -> int:
    z = ((z ^ (z >> 33)) * 0xFF51AFD7ED558CCD) & _MASK
    z = ((z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53) & _MASK
    z = (z ^ (z >> 33)) | 1
    return z ^ 0xAAAAAAAAAAAAAAAA if bin(z ^ (z >> 1)).count("1") < 24 else z


def _py_squeeze(x: float, u: float, dd: float, c: float) -> tuple[bool, float]:
    y = c * x
    v = 1.0 + y
    y2 = y * y
    q = 0.75 * dd * (y2 * y2)
    q = q / v if y < 0.0 else q
    return (v > 0.0) and (u < 1.0 - q), v * v * v


def _py_exact(x: float, u: float, v3: float, dd: float) -> bool:
    return v3 > 0.0 and math.log(u) < 0.5 * x * x + dd * (1.0 - v3 + math.log(v3))


def py_block_key(seed: int, stream: int, block: int, lane: int = 0) -> int:
    """Plain-Python twin of :func:`block_key`.

    Parameters
    ----------
    seed, stream, block, lane : int
        Integers in ``[0, 2**64)``.

    Returns
    -------
    int
        The hash.
    """
    return _py_mix64(_py_mix64(_py_mix64(_py_mix64(seed) ^ stream) ^ block) ^ lane)


def _py_chunk_normals(raws: list[int], fix) -> list[float]:
    """The twins' chunk of bulk normals from its words ``raws``: every candidate by the fast
    pass's operations, then the failed ones, in order of position, by ``fix(word)`` (the
    fallback generator's slow branch).  Shared by :class:`PyRNG` and the alternative
    generators' twin (:class:`rfcheck.engine.counter_normals.PyCounterNormals`)."""
    mant = (1 << 52) - 1
    chunk = []
    for r in raws:
        rr = r >> 10
        x = float((rr >> 1) & mant) * _ZW_L[r & 0x3FF]
        chunk.append(-x if rr & 1 else x)
    for i, r in enumerate(raws):
        if ((r >> 11) & mant) >= _ZK_INT[r & 0x3FF]:
            chunk[i] = fix(r)
    return chunk


class PySplitMix:
    """Plain-Python twin of one SplitMix64 generator (:func:`block_state`) and its scalar
    draws.

    Parameters
    ----------
    seed, stream, block : int
        The generator's coordinates, integers in ``[0, 2**64)`` (not checked here).
    lane : int, default 0
        0 for a block's main generator, 1 for its fallback.

    Examples
    --------
    >>> from rfcheck.engine.rng import PyRNG, PySplitMix
    >>> PySplitMix(1, 2, 0).next_u64() == PyRNG(1, 2, 0).next_u64()
    True
    >>> PySplitMix(1, 2, 0, lane=1).next_u64() == PyRNG(1, 2, 0).fb.next_u64()
    True
    """

    def __init__(self, seed: int, stream: int, block: int, lane: int = 0) -> None:
        key = py_block_key(seed, stream, block, lane)
        self.s = _py_mix64(key)
        self.g = _py_mix_gamma(_py_mix64((key + 0x9E3779B97F4A7C15) & _MASK))

    def next_u64(self) -> int:
        self.s = (self.s + self.g) & _MASK
        return _py_out64(self.s)

    def uniform(self) -> float:
        return float(self.next_u64() >> 11) * _TWO_M53

    def uniform_open(self) -> float:
        return (float(self.next_u64() >> 11) + 0.5) * _TWO_M53

    def normal_slow(self, idx: int, x: float) -> tuple[float, bool]:
        if idx == 0:
            while True:
                xx = -math.log(self.uniform_open()) * _ZINV_R
                yy = -math.log(self.uniform_open())
                if yy + yy > xx * xx:
                    return _ZR + xx, True
        u = self.uniform()
        ok = _ZF_L[idx] + u * (_ZF_L[idx - 1] - _ZF_L[idx]) < math.exp(-0.5 * x * x)
        return x, ok

    def normal(self) -> float:
        while True:
            r = self.next_u64()
            idx = r & 0x3FF
            r >>= 10
            neg = (r & 1) != 0
            rabs = (r >> 1) & ((1 << 52) - 1)
            x = float(rabs) * _ZW_L[idx]
            if rabs < _ZK_INT[idx]:
                return -x if neg else x
            x, ok = self.normal_slow(idx, x)
            if ok:
                return -x if neg else x

    def gamma_core(self, dd: float, c: float) -> float:
        while True:
            x = self.normal()
            u = self.uniform_open()
            ok, v3 = _py_squeeze(x, u, dd, c)
            if ok or _py_exact(x, u, v3, dd):
                return dd * v3

    def gamma(self, a: float, dd: float, c: float) -> float:
        g = self.gamma_core(dd, c)
        if a < 1.0:
            g = g * math.exp(math.log(self.uniform_open()) / a)
        return g

    def chi(self, a: float, dd: float, c: float) -> float:
        return math.sqrt(2.0 * self.gamma(a, dd, c))


class PyRNG(PySplitMix):
    """Plain-Python twin of a block's generators: bit-identical draws, scalar and bulk.

    The scalar methods draw from the main generator (lane 0); the ``fill_*`` methods
    follow :func:`fill_normals` / :func:`fill_gammas`, fix-ups on the fallback (lane 1).
    Slow (pure Python); for parity tests and for reading the algorithms.

    Parameters
    ----------
    seed, stream, block : int
        The block's coordinates, integers in ``[0, 2**64)`` (not checked here); the main
        generator is lane 0, the fallback (attribute ``fb``) lane 1.

    Examples
    --------
    The scalar normals equal the compiled scalar path's, bit for bit:

    >>> import numpy as np
    >>> from rfcheck.engine.rng import PyRNG, draw_normals
    >>> r = PyRNG(1, 2, 0)
    >>> bool(np.array_equal([r.normal() for _ in range(5)], draw_normals(5, 1, 2, bulk=False)))
    True
    """

    def __init__(self, seed: int, stream: int, block: int) -> None:
        super().__init__(seed, stream, block, 0)
        self.fb = PySplitMix(seed, stream, block, 1)

    def _normal_fix(self, r: int) -> float:
        idx = r & 0x3FF
        rr = r >> 10
        x = float((rr >> 1) & ((1 << 52) - 1)) * _ZW_L[idx]
        x, ok = self.fb.normal_slow(idx, x)
        if ok:
            return -x if rr & 1 else x
        return self.fb.normal()

    def fill_normals(self, n: int) -> list[float]:
        out: list[float] = []
        while len(out) < n:
            m = min(CHUNK, n - len(out))
            out.extend(_py_chunk_normals([self.next_u64() for _ in range(m)], self._normal_fix))
        return out

    def fill_uniforms_open(self, n: int) -> list[float]:
        return [self.uniform_open() for _ in range(n)]

    def fill_gammas(self, n: int, a: float, dd: float, c: float) -> list[float]:
        xs = self.fill_normals(n)
        us = self.fill_uniforms_open(n)
        res = []
        for x, u in zip(xs, us, strict=True):
            ok, v3 = _py_squeeze(x, u, dd, c)
            if ok or _py_exact(x, u, v3, dd):
                res.append(dd * v3)
            else:
                res.append(self.fb.gamma_core(dd, c))
        if a < 1.0:
            us = self.fill_uniforms_open(n)
            res = [g * math.exp(math.log(u) / a) for g, u in zip(res, us, strict=True)]
        return res


tie_cache_to_engine(globals())

"""The dispatch on a coupling's integer code inside compiled code: one ensemble
(:func:`~rfcheck.engine.couplings.ensemble_into`) or one projection draw
(:func:`~rfcheck.engine.couplings.projection_into`) of any coupling, and the scratch arrays they
work in (:func:`~rfcheck.engine.couplings.scratch`,
:func:`~rfcheck.engine.couplings.projection_scratch`).

A new coupling adds its family module, one branch in each dispatcher here and an entry in
:data:`rfcheck.engine.couplings.COUPLINGS` (:mod:`rfcheck.engine.couplings.registry`).

Examples
--------
>>> from rfcheck.engine.couplings import projection_scratch
>>> vec, raw = projection_scratch(4, 3)
>>> vec.shape
(10, 8)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rfcheck.engine import rng as _rng
from rfcheck.engine.couplings.anti import _interleave_rows, _mirror_projections
from rfcheck.engine.couplings.common import ANTI, IID, ORF, ORF_HD, SIMRF, SIMRF_HD, SIMRF_PLUS, empty_lines, pad8
from rfcheck.engine.couplings.hd import _hd_ensemble
from rfcheck.engine.couplings.iid import _iid_ensemble, _iid_projection
from rfcheck.engine.couplings.orf import _orf_ensemble, _orf_projection
from rfcheck.engine.couplings.simrf import _simrf_ensemble, _simrf_projection
from rfcheck.engine.couplings.simrf_plus import _simrf_plus_ensemble, _simrf_plus_projection

__all__: list[str] = []


@njit(cache=True, error_model="numpy")
def scratch(M, d):
    """Scratch arrays ``(X, vec, raw, nbuf)`` for :func:`ensemble_into` and
    :func:`projection_into`.

    ``X`` (d, pad8(d)) float, ``vec`` (10, pad8(max(M, d))) float, ``raw`` (RAW_SIZE,)
    uint64 (its tail holds the block's fallback generator, see ``rng.init_block``),
    ``nbuf`` (8 d + 136 + d (d + 1) / 2,) float (a Householder panel, its small matrices and
    the normals of a block's reflectors, :func:`~rfcheck.engine.couplings.orf._haar_columns`).
    The arrays are uninitialised (``np.empty``).

    Parameters
    ----------
    M, d : int
        Number of projections and dimension (``>= 1``).

    Returns
    -------
    X : numpy.ndarray of float64, shape (d, pad8(d))
        The Haar columns of a block (and the SimRF+ rows).
    vec : numpy.ndarray of float64, shape (10, pad8(max(M, d)))
        Per-row vectors (norms, signs, gamma draws and their scratch).
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        The generator's scratch, to pass to :func:`rfcheck.engine.rng.init_block`.
    nbuf : numpy.ndarray of float64, shape (8 d + 136 + d (d + 1) / 2,)
        The Householder panel ``V`` (d, 8), ``T``, the Gram matrix, the 8 ``tau`` and the
        normals of a block's reflectors.

    Examples
    --------
    >>> from rfcheck.engine.couplings import scratch
    >>> X, vec, raw, nbuf = scratch(5, 12)
    >>> X.shape, vec.shape, raw.shape, raw.dtype.name, nbuf.shape == (8 * 12 + 136 + 12 * 13 // 2,)
    ((12, 16), (10, 16), (132,), 'uint64', True)
    """
    X = empty_lines(d * pad8(d)).reshape((d, pad8(d)))
    vec, raw = projection_scratch(M, d)
    nbuf = empty_lines(8 * d + 136 + d * (d + 1) // 2)
    return X, vec, raw, nbuf


@njit(cache=True, error_model="numpy")
def projection_scratch(M, d):
    """Scratch ``(vec, raw)`` for :func:`projection_into`: ``vec`` (10, pad8(max(M, d)))
    as in :func:`scratch`, without the ``O(d^2)`` arrays of the ensemble path.

    Parameters
    ----------
    M, d : int
        Number of projections and dimension (``>= 1``).

    Returns
    -------
    vec : numpy.ndarray of float64, shape (10, pad8(max(M, d)))
        Per-row vectors, as in :func:`scratch`.
    raw : numpy.ndarray of uint64, shape (rfcheck.engine.rng.RAW_SIZE,)
        The generator's scratch, to pass to :func:`rfcheck.engine.rng.init_block`.

    Examples
    --------
    >>> from rfcheck.engine.couplings import projection_scratch
    >>> vec, raw = projection_scratch(20, 3)
    >>> vec.shape, raw.shape, raw.dtype.name
    ((10, 24), (132,), 'uint64')
    """
    vec = empty_lines(10 * pad8(max(M, d))).reshape((10, pad8(max(M, d))))
    raw = np.empty(_rng.RAW_SIZE, dtype=np.uint64)
    return vec, raw


@njit(cache=True, error_model="numpy", inline="always")
def ensemble_into(code, st, M, d, Wt, X, vec, raw, nbuf):
    """Draw one ensemble of coupling ``code`` into ``Wt`` (d, M); returns the new state.

    ``X``, ``vec``, ``raw``, ``nbuf`` are the scratch arrays of :func:`scratch`, free to
    overwrite; they must be distinct arrays (the Householder panel kernels tell LLVM that ``X``
    and ``nbuf`` never overlap, :mod:`rfcheck.engine.wy`).  An antithetic code (``>= ANTI``)
    draws ``ceil(M/2)`` rows of its base coupling and interleaves them with their negatives
    (:func:`_anti_ensemble`).

    Parameters
    ----------
    code : int
        The coupling's ``Coupling.code`` (:data:`~rfcheck.engine.couplings.COUPLINGS`; not checked).
    st : tuple of 2 numpy.uint64
        The block's generator state (:func:`rfcheck.engine.rng.init_block`, with ``raw``).  From
        Python, wrap the ints a compiled call returns: ``tuple(np.uint64(v) for v in st)``.
    M, d : int
        Number of projections and dimension (``M >= 1``, ``d >=`` the coupling's ``min_d``; not
        checked here).
    Wt : numpy.ndarray of float64, shape (d, M)
        Output (C-contiguous): column ``m`` is ``w_m``.
    X, vec, raw, nbuf : numpy.ndarray
        The scratch of ``scratch(M, d)`` (``raw`` the one passed to ``init_block``: it holds the
        fallback generator).

    Returns
    -------
    tuple of 2 numpy.uint64
        The new generator state.

    Notes
    -----
    Nothing here checks the arrays' sizes: pass those of :func:`scratch`.  Numba does not check
    bounds, so an undersized array is written past its end; the shape checks of some kernels it
    calls (:func:`rfcheck.engine.wy.panel_apply`, the SimRF+ update: ``ValueError``) do not
    guard against that.

    Examples
    --------
    The ensemble :func:`~rfcheck.engine.couplings.sample_ensemble` draws, bit for bit; its ORF
    rows are orthogonal within a block (rows 0-3 here, d = 4):

    >>> import numpy as np
    >>> from rfcheck.engine import rng
    >>> from rfcheck.engine.couplings import COUPLINGS, ensemble_into, sample_ensemble, scratch, stream_tag
    >>> M, d, code = 6, 4, COUPLINGS["orf"].code
    >>> X, vec, raw, nbuf = scratch(M, d)
    >>> st = rng.init_block(np.uint64(7), np.uint64(stream_tag(code, 2)), np.uint64(0), raw)
    >>> Wt = np.empty((d, M))
    >>> st = ensemble_into(code, tuple(np.uint64(v) for v in st), M, d, Wt, X, vec, raw, nbuf)
    >>> bool(np.array_equal(Wt.T, sample_ensemble("orf", M, d, seed=7)))
    True
    >>> G = Wt[:, :4].T @ Wt[:, :4]
    >>> bool(np.allclose(G - np.diag(np.diag(G)), 0.0, atol=1e-12))
    True
    """
    if code >= ANTI:
        return _anti_ensemble(code - ANTI, st, M, d, Wt, X, vec, raw, nbuf)
    return _base_ensemble(code, st, M, d, Wt, X, vec, raw, nbuf)


@njit(cache=True, error_model="numpy")
def _anti_ensemble(base, st, M, d, Wt, X, vec, raw, nbuf):
    """Antithetic pairs: ``B`` = ``ceil(M/2)`` rows of coupling ``base``; row ``2j`` of the
    ensemble is ``b_j`` and row ``2j + 1`` is ``-b_j`` (the last pair truncated if ``M`` is
    odd)."""
    h = (M + 1) // 2
    B = np.empty((d, h))
    st = _base_ensemble(base, st, h, d, B, X, vec, raw, nbuf)
    _interleave_rows(B, Wt, M, d)
    return st


@njit(cache=True, error_model="numpy", inline="always")
def _base_ensemble(code, st, M, d, Wt, X, vec, raw, nbuf):
    if code == IID:
        st = _iid_ensemble(st, M, d, Wt, raw)
    elif code == ORF:
        st = _orf_ensemble(st, M, d, Wt, X, vec, raw, nbuf)
    elif code == SIMRF:
        st = _simrf_ensemble(st, M, d, Wt, X, vec, raw, nbuf)
    elif code == SIMRF_PLUS:
        st = _simrf_plus_ensemble(st, M, d, Wt, X, vec, raw, nbuf)
    elif code == ORF_HD:
        st = _hd_ensemble(st, M, d, Wt, vec, raw, False)
    elif code == SIMRF_HD:
        st = _hd_ensemble(st, M, d, Wt, vec, raw, True)
    return st


@njit(cache=True, error_model="numpy", inline="always")
def projection_into(code, st, M, d, need_sq, t, sq, vec, raw):
    """Draw ``t[m] = w_m . u_hat`` and ``sq[m] = |w_m|^2`` for one ensemble of coupling ``code``.

    ``sq`` is NaN where ``need_sq`` is false and the coupling does not get it for free;
    ``vec``, ``raw`` are scratch from :func:`projection_scratch` (or :func:`scratch`).
    Returns the new generator state.  Antithetic codes: the base coupling's ``ceil(M/2)``
    projections, each followed by its negative (same ``sq``).

    Parameters
    ----------
    code : int
        The coupling's ``Coupling.code``, one with ``has_projection`` (:data:`~rfcheck.engine.couplings.COUPLINGS`; not
        checked).
    st : tuple of 2 numpy.uint64
        The block's generator state (:func:`rfcheck.engine.rng.init_block`, with ``raw``).
    M, d : int
        Number of projections and dimension (``M >= 1``, ``d >=`` the coupling's ``min_d``; not
        checked here).
    need_sq : bool
        Whether ``sq`` is wanted (``iid`` draws it only then).
    t, sq : numpy.ndarray of float64, shape (>= M,)
        Outputs: ``t[:M]`` and ``sq[:M]``.
    vec, raw : numpy.ndarray
        The scratch of ``projection_scratch(M, d)`` (``raw`` the one passed to ``init_block``).

    Returns
    -------
    tuple of 2 numpy.uint64
        The new generator state.

    Notes
    -----
    Nothing here checks the arrays' sizes: pass those of :func:`projection_scratch`; Numba does
    not check bounds.

    Examples
    --------
    The draws of :func:`~rfcheck.engine.couplings.sample_projection`, bit for bit; ``|w_m . u_hat| <= |w_m|``; an
    antithetic code pairs each projection with its negative:

    >>> import numpy as np
    >>> from rfcheck.engine import rng
    >>> from rfcheck.engine.couplings import COUPLINGS, projection_into, projection_scratch
    >>> from rfcheck.engine.couplings import sample_projection, stream_tag
    >>> def draw(name, M, d, seed):
    ...     code = COUPLINGS[name].code
    ...     vec, raw = projection_scratch(M, d)
    ...     st = rng.init_block(np.uint64(seed), np.uint64(stream_tag(code, 3)), np.uint64(0), raw)
    ...     t, sq = np.empty(M), np.empty(M)
    ...     projection_into(code, tuple(np.uint64(v) for v in st), M, d, True, t, sq, vec, raw)
    ...     return t, sq
    >>> t, sq = draw("orf", 7, 5, 3)
    >>> t_ref, sq_ref = sample_projection("orf", 7, 5, 1, seed=3)
    >>> bool(np.array_equal(t, t_ref[0]) and np.array_equal(sq, sq_ref[0])), bool((t * t <= sq).all())
    (True, True)
    >>> t, sq = draw("orf-anti", 6, 5, 3)
    >>> bool(np.array_equal(t[1::2], -t[::2]) and np.array_equal(sq[1::2], sq[::2]))
    True
    """
    if code >= ANTI:
        st = _base_projection(code - ANTI, st, (M + 1) // 2, d, need_sq, t, sq, vec, raw)
        _mirror_projections(t, sq, M)
        return st
    return _base_projection(code, st, M, d, need_sq, t, sq, vec, raw)


@njit(cache=True, error_model="numpy", inline="always")
def _base_projection(code, st, M, d, need_sq, t, sq, vec, raw):
    if code == IID:
        st = _iid_projection(st, M, d, need_sq, t, sq, vec, raw)
    elif code == ORF:
        st = _orf_projection(st, M, d, need_sq, t, sq, vec, raw)
    elif code == SIMRF:
        st = _simrf_projection(st, M, d, need_sq, t, sq, vec, raw)
    elif code == SIMRF_PLUS:
        st = _simrf_plus_projection(st, M, d, need_sq, t, sq, vec, raw)
    return st


_rng.tie_cache_to_engine(globals())

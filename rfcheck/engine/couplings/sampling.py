"""Draws of a coupling from Python: one ensemble (:func:`~rfcheck.engine.couplings.sample_ensemble`,
and its plain-Python twin :func:`~rfcheck.engine.couplings.sample_ensemble_reference`),
projection draws (:func:`~rfcheck.engine.couplings.sample_projection`) and the SimRF+ iteration
report (:func:`~rfcheck.engine.couplings.simrf_plus_passes`), each on its own stream.

Examples
--------
>>> from rfcheck.engine.couplings import sample_projection
>>> t, sq = sample_projection("orf", 3, 4, 2, seed=0)
>>> t.shape, bool((t * t <= sq).all())
((2, 3), True)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rfcheck import validate
from rfcheck.engine import rng as _rng
from rfcheck.engine.couplings.dispatch import ensemble_into, projection_into, projection_scratch, scratch
from rfcheck.engine.couplings.registry import coupling_args, stream_tag
from rfcheck.engine.couplings.simrf_plus import _simrf_plus_into

__all__: list[str] = []


@njit(cache=True, error_model="numpy")
def _sample_kernel(code, seed, stream, M, d, Wt):
    X, vec, raw, nbuf = scratch(M, d)
    st = _rng.init_block(seed, stream, 0, raw)
    ensemble_into(code, st, M, d, Wt, X, vec, raw, nbuf)


def sample_ensemble(coupling: str, M: int, d: int, seed: int = 0) -> np.ndarray:
    """One ensemble ``W`` (M, d) of the coupling ``coupling`` (for tests and users).

    Parameters
    ----------
    coupling : str
        A key of :data:`~rfcheck.engine.couplings.COUPLINGS`.
    M, d : int
        Number of projections and dimension (both >= 1).
    seed : int
        Integer in ``[0, 2**64)``; the same seed gives the same ensemble.

    Returns
    -------
    ndarray, shape (M, d)
        Rows ``w_m``, each marginally ``N(0, I_d)``.
    """
    c, M, d = coupling_args(coupling, M, d)
    key = _rng.seed_key(seed)
    wt = np.empty((d, M))
    _sample_kernel(c.code, np.uint64(key), np.uint64(stream_tag(c.code, 2)), M, d, wt)
    return np.ascontiguousarray(wt.T)


@njit(cache=True, error_model="numpy")
def _projection_sample_kernel(code, seed, stream, M, need_sq, d, t, sq):
    vec, raw = projection_scratch(M, d)
    st = _rng.init_block(seed, stream, 0, raw)
    for i in range(t.shape[0]):
        st = projection_into(code, st, M, d, need_sq, t[i], sq[i], vec, raw)


def sample_projection(
    coupling: str, M: int, d: int, n: int, seed: int = 0, *, need_sq: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` independent draws of ``(w_m . u_hat, |w_m|^2)_{m<M}`` from the projection sampler.

    Parameters
    ----------
    coupling : str
        A key of :data:`~rfcheck.engine.couplings.COUPLINGS` whose ``has_projection`` is true (not ``"orf-hd"``,
        ``"simrf-hd"``).
    M, d : int
        Number of projections and dimension (both >= 1; ``d >= min_d`` of the coupling).
    n : int
        Number of independent draws (>= 1).
    seed : int, optional
        Integer in ``[0, 2**64)`` (default 0); the same seed gives the same draws.
    need_sq : bool, optional
        Whether to fill ``sq`` (default True); ``iid`` leaves it NaN when false.

    Returns
    -------
    t, sq : ndarray, shape (n, M)
        Equal in law to ``W @ u_hat`` and the squared row norms of :func:`sample_ensemble`
        for any fixed unit vector ``u_hat`` (``sq`` is NaN for ``iid`` if not ``need_sq``).

    Raises
    ------
    ValueError
        If ``coupling`` is unknown or has no projection sampler, if ``M``, ``d`` or ``n`` is not
        an integer ``>= 1``, if ``d`` is below the coupling's ``min_d``, or if ``seed`` is not
        an integer in ``[0, 2**64)``.
    """
    c, M, d = coupling_args(coupling, M, d, projection=True)
    n = validate.positive_int(n, "n")
    key = _rng.seed_key(seed)
    t = np.empty((n, M))
    sq = np.empty((n, M))
    _projection_sample_kernel(c.code, np.uint64(key), np.uint64(stream_tag(c.code, 3)), M,
                              bool(need_sq), d, t, sq)
    return t, sq


def sample_ensemble_reference(coupling: str, M: int, d: int, seed: int = 0) -> np.ndarray:
    """Plain-Python twin of :func:`sample_ensemble` (bit-identical; slow).

    Parameters
    ----------
    coupling : str
        A key of :data:`~rfcheck.engine.couplings.COUPLINGS`.
    M, d : int
        Number of projections and dimension (both >= 1).
    seed : int, default 0
        Integer in ``[0, 2**64)``.

    Returns
    -------
    ndarray, shape (M, d)
        The same rows as :func:`sample_ensemble` with the same arguments, bit for bit.

    Raises
    ------
    ValueError
        Through its argument checks, as :func:`sample_ensemble`.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import sample_ensemble, sample_ensemble_reference
    >>> bool(np.array_equal(sample_ensemble_reference("simrf", 5, 3, seed=4),
    ...                     sample_ensemble("simrf", 5, 3, seed=4)))
    True
    """
    c, M, d = coupling_args(coupling, M, d)
    key = _rng.seed_key(seed)
    r = _rng.PyRNG(key, stream_tag(c.code, 2), 0)
    return np.ascontiguousarray(c.py_ensemble(r, M, d).T)


@njit(cache=True, error_model="numpy")
def _simrf_plus_passes_kernel(seed, stream, M, d, passes, conv, fast):
    X, vec, raw, nbuf = scratch(M, d)
    Wt = np.empty((d, M))
    st = _rng.init_block(seed, stream, 0, raw)
    for i in range(passes.shape[0]):
        st = _simrf_plus_into(st, M, d, Wt, X, vec, raw, nbuf, passes[i], conv[i], fast[i])


def simrf_plus_passes(M: int, d: int, n: int, seed: int = 0, *,
                      scalar: bool = False) -> tuple[np.ndarray, ...]:
    """Iteration report of the engine's SimRF+ sampler over ``n`` independent ensembles.

    Parameters
    ----------
    M, d : int
        Number of projections and dimension (``M >= 1``, ``d >= 2``).
    n : int
        Number of independent ensembles (>= 1).
    seed : int, default 0
        Integer in ``[0, 2**64)``; the ``n`` ensembles are drawn in turn from block 0 of the
        stream :func:`sample_ensemble` uses for ``"simrf+"``.
    scalar : bool, default False
        Also return which blocks the scalar route finished.

    Returns
    -------
    passes : ndarray of int, shape (n, number of blocks)
        Passes of the eq (17) update each block took (0 for a one-row block; 2 for a block
        finished by the scalar route: its first pass, and a second one certified to move no
        unit direction by more than :data:`~rfcheck.engine.couplings.simrf_plus.SIMRF_PLUS_TOL`).
    converged : ndarray of bool, same shape
        Whether the block met the stopping rule (a pass moving no unit direction by more
        than :data:`~rfcheck.engine.couplings.simrf_plus.SIMRF_PLUS_TOL`) within
        :data:`~rfcheck.engine.couplings.simrf_plus.SIMRF_PLUS_MAX_PASSES` passes.
    scalar : ndarray of bool, same shape
        Only with ``scalar=True``: whether the block took the scalar route (its first pass's
        factors from ``O(b)`` scalar arithmetic, applied in ``O(b d)``; the second pass
        certified and skipped) rather than the vector iteration.

    Examples
    --------
    At ``d = 64`` a full block takes the scalar route; a two-row block does not:

    >>> passes, conv, fast = simrf_plus_passes(66, 64, 3, scalar=True)
    >>> passes[:, 0].tolist(), fast[:, 0].tolist(), bool(conv.all()), fast[:, 1].tolist()
    ([2, 2, 2], [True, True, True], True, [False, False, False])
    """
    c, M, d = coupling_args("simrf+", M, d)
    n = validate.positive_int(n, "n")
    key = _rng.seed_key(seed)
    nb = -(-M // d)
    passes = np.zeros((n, nb), dtype=np.int64)
    conv = np.zeros((n, nb), dtype=np.bool_)
    fast = np.zeros((n, nb), dtype=np.bool_)
    _simrf_plus_passes_kernel(np.uint64(key), np.uint64(stream_tag(c.code, 2)), M, d, passes, conv,
                              fast)
    return (passes, conv, fast) if scalar else (passes, conv)


_rng.tie_cache_to_engine(globals())

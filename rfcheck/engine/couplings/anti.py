"""The antithetic couplings ``"<base>-anti"`` (``iid-anti``, ``orf-anti``, ``simrf-anti``,
``simrf+-anti``): ``ceil(M/2)`` rows of the base coupling, row ``2j + 1 = -`` row ``2j``; both
paths.

The base coupling's draws come through the dispatch (:mod:`rfcheck.engine.couplings.dispatch`);
here are the pairing kernels (rows of an ensemble, entries of a projection draw) and the twins
that wrap a base coupling's twin.

Examples
--------
>>> import numpy as np
>>> from rfcheck.engine.couplings import sample_ensemble
>>> W = sample_ensemble("orf-anti", 5, 3, seed=0)
>>> bool(np.array_equal(W[1::2], -W[0:4:2]))
True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from rfcheck.engine import rng as _rng

__all__: list[str] = []


@njit(cache=True, error_model="numpy", inline="always")
def _interleave_rows(B, Wt, M, d):
    """The ensemble of ``M`` rows from ``h = ceil(M/2)`` base rows, the columns of ``B`` (d, h):
    column ``2j`` of ``Wt`` (d, M) is ``b_j`` and column ``2j + 1`` is ``-b_j`` (the last pair
    truncated if ``M`` is odd)."""
    h = B.shape[1]
    for i in range(d):
        bi = B[i]
        wi = Wt[i]
        for j in range(h):
            wi[2 * j] = bi[j]
            if 2 * j + 1 < M:
                wi[2 * j + 1] = -bi[j]


@njit(cache=True, error_model="numpy", inline="always")
def _mirror_projections(t, sq, M):
    """The projection draw of ``M`` rows from the base coupling's ``h = ceil(M/2)`` in ``t[:h]``,
    ``sq[:h]``, in place: entry ``2j`` is the base draw ``j``, entry ``2j + 1`` its negative (the
    same ``sq``)."""
    h = (M + 1) // 2
    for j in range(h - 1, -1, -1):  # backwards: 2j >= j, nothing is overwritten early
        tj = t[j]
        sj = sq[j]
        t[2 * j] = tj
        sq[2 * j] = sj
        if 2 * j + 1 < M:
            t[2 * j + 1] = -tj
            sq[2 * j + 1] = sj


def _py_anti_ensemble(base: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """Twin of :func:`_interleave_rows` (after the base draw) around the base coupling's twin ``base``."""

    def sample(r: _rng.PyRNG, M: int, d: int) -> np.ndarray:
        h = (M + 1) // 2
        B = base(r, h, d)
        wt = np.empty((d, M))
        wt[:, 0::2] = B
        wt[:, 1::2] = -B[:, :M // 2]
        return wt

    return sample


def _py_anti_projection(base: Callable[..., tuple[list, list]]) -> Callable[..., tuple[list, list]]:
    """Twin of :func:`_mirror_projections` (after the base draw) around the base coupling's twin
    ``base``."""

    def sample(r: _rng.PyRNG, M: int, d: int, need_sq: bool) -> tuple[list, list]:
        h = (M + 1) // 2
        tb, sb = base(r, h, d, need_sq)
        t, sq = [0.0] * M, [0.0] * M
        for j in range(h):
            t[2 * j], sq[2 * j] = tb[j], sb[j]
            if 2 * j + 1 < M:
                t[2 * j + 1], sq[2 * j + 1] = -tb[j], sb[j]
        return t, sq

    return sample


_rng.tie_cache_to_engine(globals())

"""The ``"iid"`` coupling: rows independent ``N(0, I_d)``.

Ensemble path: ``d M`` normals in one bulk draw (:func:`rfcheck.engine.rng.fill_normals`).
Projection law: ``t_m = w_m . u_hat ~ N(0, 1)`` and ``sq_m = |w_m|^2 = t_m^2 + chi^2_{d-1}``
(the ``chi^2`` drawn only when needed).  Compiled kernels and their plain-Python twins, which
consume the same stream bit for bit.

Examples
--------
>>> from rfcheck.engine.couplings import sample_ensemble
>>> sample_ensemble("iid", 3, 2, seed=0).shape
(3, 2)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from rfcheck.engine import rng as _rng
from rfcheck.engine.couplings.common import _gconsts, _py_gconsts

__all__: list[str] = []


@njit(cache=True, error_model="numpy", inline="always")
def _iid_ensemble(st, M, d, Wt, raw):
    return _rng.fill_normals(st, Wt.reshape(d * M), raw)


@njit(cache=True, error_model="numpy", inline="always")
def _iid_projection(st, M, d, need_sq, t, sq, vec, raw):
    st = _rng.fill_normals(st, t[:M], raw)
    if need_sq and d > 1:
        a = 0.5 * (d - 1)
        dd, c = _gconsts(a)
        g = vec[0, :M]
        st = _rng.fill_gammas(st, a, dd, c, g, vec[1], vec[2], raw)
        for m in range(M):
            sq[m] = t[m] * t[m] + 2.0 * g[m]
    else:
        for m in range(M):
            sq[m] = t[m] * t[m] if need_sq else np.nan
    return st


def _py_iid_ensemble(r: _rng.PyRNG, M: int, d: int) -> np.ndarray:
    return np.array(r.fill_normals(d * M)).reshape(d, M)


def _py_iid_projection(r: _rng.PyRNG, M: int, d: int, need_sq: bool) -> tuple[list, list]:
    t = r.fill_normals(M)
    if need_sq and d > 1:
        a = 0.5 * (d - 1)
        dd, c = _py_gconsts(a)
        g = r.fill_gammas(M, a, dd, c)
        sq = [t[m] * t[m] + 2.0 * g[m] for m in range(M)]
    else:
        sq = [t[m] * t[m] if need_sq else math.nan for m in range(M)]
    return t, sq


_rng.tie_cache_to_engine(globals())

"""What every coupling family shares: the integer codes the compiled dispatch switches on
(:mod:`rfcheck.engine.couplings.dispatch`), the layout of the scratch arrays (rows padded to
multiples of 8, 64-byte aligned) and the Marsaglia-Tsang constants of the ``chi`` norms.

Examples
--------
>>> from rfcheck.engine.couplings import common
>>> common.pad8(13), common.ANTI + common.ORF
(16, 17)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from rfcheck.engine import rng as _rng

__all__ = ["ANTI", "IID", "ORF", "ORF_HD", "SIMRF", "SIMRF_HD", "SIMRF_PLUS"]


#: code of ``"iid"`` (:mod:`rfcheck.engine.couplings.iid`)
IID = 0
#: code of ``"orf"`` (:mod:`rfcheck.engine.couplings.orf`)
ORF = 1
#: code of ``"simrf"`` (:mod:`rfcheck.engine.couplings.simrf`)
SIMRF = 2
#: code of ``"simrf+"`` (:mod:`rfcheck.engine.couplings.simrf_plus`)
SIMRF_PLUS = 3
#: code of ``"orf-hd"`` (:mod:`rfcheck.engine.couplings.hd`)
ORF_HD = 4
#: code of ``"simrf-hd"`` (:mod:`rfcheck.engine.couplings.hd`)
SIMRF_HD = 5
ANTI = 16
"""Code offset of the antithetic variant of a coupling (``iid-anti`` = ``ANTI + IID``, ...)."""


@njit(cache=True, error_model="numpy")
def pad8(d):
    """``d`` rounded up to a multiple of 8 (column count of the scratch arrays).

    Parameters
    ----------
    d : int
        A dimension (``>= 0``).

    Returns
    -------
    int
        ``8 ceil(d / 8)``.

    Examples
    --------
    >>> from rfcheck.engine.couplings import pad8
    >>> pad8(13) == 16, [pad8(d) for d in (0, 1, 8, 9, 64)]
    (True, [0, 8, 8, 16, 64])
    """
    return (d + 7) // 8 * 8


@njit(cache=True, error_model="numpy")
def empty_lines(n):
    """An uninitialised float64 array of ``n`` entries whose first starts a 64-byte cache line.

    The 8-wide kernels (:mod:`rfcheck.engine.wy`, :mod:`rfcheck.engine.gauss_seidel`) load and
    store whole rows of ``pad8`` entries: on arrays as NumPy and Numba allocate them (32-byte
    aligned) every such vector straddles two cache lines, and the SimRF+ passes took ~20% longer
    (misaligned by 8 bytes, ~80%).  Alignment changes no number.

    Parameters
    ----------
    n : int
        The number of entries (``>= 0``).

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        C-contiguous, its data address a multiple of 64 (a view of a slightly longer array).

    Examples
    --------
    >>> from rfcheck.engine.couplings import empty_lines
    >>> a = empty_lines(100)
    >>> a.shape, a.ctypes.data % 64, a.flags.c_contiguous
    ((100,), 0, True)
    """
    a = np.empty(n + 8)
    k = (64 - a.ctypes.data % 64) % 64 // 8
    return a[k:k + n]


@njit(cache=True, error_model="numpy", inline="always")
def _gconsts(a):
    """Marsaglia-Tsang constants for shape ``a`` (same arithmetic as ``rng.gamma_consts``)."""
    ae = a if a >= 1.0 else a + 1.0
    dd = ae - 1.0 / 3.0
    return dd, 1.0 / math.sqrt(9.0 * dd)


def _py_gconsts(a: float) -> tuple[float, float]:
    ae = a if a >= 1.0 else a + 1.0
    dd = ae - 1.0 / 3.0
    return dd, 1.0 / math.sqrt(9.0 * dd)


_rng.tie_cache_to_engine(globals())

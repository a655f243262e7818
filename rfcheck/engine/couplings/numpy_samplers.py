"""NumPy samplers of SimRF+, the fast HD-product ORF/SimRF and antithetic pairs (SimRF sec 3.2,
App. B.2): they return projection matrices ``W`` (M, d) and are implementations of the engine
couplings ``"simrf+"``, ``"orf-hd"``/``"simrf-hd"`` and ``"<base>-anti"`` independent of the
compiled kernels (the law tests compare the two).

Examples
--------
>>> from rfcheck.engine.couplings import sample_fast
>>> sample_fast("orf", 5, 3, seed=0).shape
(5, 3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rfcheck import validate
from rfcheck.engine import rng as _rng
from rfcheck.engine.couplings.registry import block_sizes, coupling_args
from rfcheck.engine.couplings.sampling import sample_ensemble

__all__: list[str] = []


@dataclass(frozen=True)
class SimRFPlusInfo:
    """Convergence report of the SimRF+ iteration (eq 17), one entry per block.

    Parameters
    ----------
    passes : tuple of int
        Passes each block took (:func:`simrf_plus_block`).
    converged : tuple of bool
        Whether each block met the stopping rule.
    max_change : tuple of float
        The largest move of a unit direction in each block's last pass.
    """

    passes: tuple[int, ...]
    converged: tuple[bool, ...]
    max_change: tuple[float, ...]


def truncated_conformity_objective(W: np.ndarray) -> float:
    """``sum_{i != j} |w_i + w_j|^2`` over the rows of one block -- eq (15) without its
    positive prefactor ``Gamma(d/2) v^2 / (4 m (m-1) Gamma(1 + d/2))``.

    Parameters
    ----------
    W : array_like, shape (m, d)
        The rows of the block (finite, ``m >= 2``).

    Returns
    -------
    float
        ``2 (m - 2) sum_i |w_i|^2 + 2 |sum_i w_i|^2`` (the same sum, in ``O(m d)``).

    Raises
    ------
    ValueError
        If ``W`` is not numeric or not finite, not 2-D, or has fewer than 2 rows.

    References
    ----------
    SimRF sec 3.2, eq (15).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import truncated_conformity_objective
    >>> W = np.random.default_rng(0).standard_normal((4, 3))
    >>> brute = sum(np.sum((W[i] + W[j]) ** 2) for i in range(4) for j in range(4) if i != j)
    >>> bool(np.isclose(truncated_conformity_objective(W), brute))
    True
    """
    W = validate.finite_array(W, "W")
    if W.ndim != 2 or W.shape[0] < 2:
        raise ValueError("W must have shape (m, d) with m >= 2")
    m = W.shape[0]
    sq = np.sum(W * W, axis=1)
    tot = np.sum(W, axis=0)
    # sum_{i != j} |w_i + w_j|^2 = 2 (m - 2) sum_i |w_i|^2 + 2 |sum_i w_i|^2
    return float(2 * (m - 2) * np.sum(sq) + 2 * np.dot(tot, tot))


def simrf_plus_block(
    W: np.ndarray, *, tol: float = 1e-10, max_passes: int = 1000
) -> tuple[np.ndarray, int, bool, float]:
    """Apply the SimRF+ update (eq 17) to one block until convergence.

    One pass updates ``w_i <- -|w_i| (sum_{j != i} w_j) / |sum_{j != i} w_j|`` for ``i = 1..m``
    in turn (Gauss-Seidel; each update cannot increase the truncated objective eq 15).
    Convergence criterion: a whole pass moves no unit direction by more than ``tol``
    (``max_i |w_hat_i(new) - w_hat_i(old)| <= tol``).  Returns ``(W, passes, converged,
    last max change)``; norms are unchanged.  Eq (16) is the fixed point.

    Parameters
    ----------
    W : array_like, shape (m, d)
        The block (finite, ``m >= 2``); not modified (a copy is updated).
    tol : float, default 1e-10
        The stopping tolerance (positive, finite).
    max_passes : int, default 1000
        The most passes made (>= 1).

    Returns
    -------
    (numpy.ndarray, int, bool, float)
        The updated block, the passes made, whether the stopping rule was met, and the
        largest move of a unit direction in the last pass.

    Raises
    ------
    ValueError
        If ``W`` is not numeric or not finite, not 2-D or has fewer than 2 rows, if ``tol`` is
        not a positive finite number, or if ``max_passes`` is not an integer ``>= 1``.

    References
    ----------
    SimRF sec 3.2, eq (15)-(17).

    Examples
    --------
    The update keeps the norms and does not increase the truncated objective:

    >>> import numpy as np
    >>> from rfcheck.engine.couplings import simrf_plus_block, truncated_conformity_objective
    >>> W0 = np.random.default_rng(1).standard_normal((3, 3))
    >>> W, passes, converged, change = simrf_plus_block(W0)
    >>> converged, bool(np.allclose(np.linalg.norm(W, axis=1), np.linalg.norm(W0, axis=1)))
    (True, True)
    >>> truncated_conformity_objective(W) <= truncated_conformity_objective(W0)
    True
    """
    W = np.array(validate.finite_array(W, "W"), dtype=float, copy=True)
    if W.ndim != 2 or W.shape[0] < 2:
        raise ValueError("W must have shape (m, d) with m >= 2")
    if not (tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be a positive finite number; got {tol}")
    max_passes = validate.positive_int(max_passes, "max_passes")
    norms = np.linalg.norm(W, axis=1)
    total = W.sum(axis=0)
    change = math.inf
    for n in range(1, max_passes + 1):
        change = 0.0
        for i in range(W.shape[0]):
            rest = total - W[i]
            rn = float(np.linalg.norm(rest))
            if rn == 0.0 or norms[i] == 0.0:
                continue
            new = -norms[i] * rest / rn
            change = max(change, float(np.linalg.norm(new / norms[i] - W[i] / norms[i])))
            total = rest + new
            W[i] = new
        if change <= tol:
            return W, n, True, change
    return W, max_passes, False, change


def sample_simrf_plus(M: int, d: int, seed: int = 0, *, tol: float = 1e-10,
                      max_passes: int = 1000) -> tuple[np.ndarray, SimRFPlusInfo]:
    """SimRF+ ensemble ``W`` (M, d) (SimRF sec 3.2, eq 16-17): SimRF blocks of ``min(d, remaining)``
    rows (:func:`sample_ensemble`), each rearranged by :func:`simrf_plus_block` from its simplex
    initialisation.  Norms stay ``chi_d``; each row stays marginally ``N(0, I_d)`` (the Haar
    rotation of the block is applied before the update and commutes with it).

    Parameters
    ----------
    M, d : int
        Number of projections and dimension (``M >= 1``, ``d >= 2``).
    seed : int, default 0
        Integer in ``[0, 2**64)``, the seed of the SimRF ensemble.
    tol : float, default 1e-10
        Stopping tolerance of :func:`simrf_plus_block`.
    max_passes : int, default 1000
        The most passes per block.

    Returns
    -------
    W : numpy.ndarray, shape (M, d)
        The SimRF+ ensemble.
    info : SimRFPlusInfo
        The convergence report of the blocks of two or more rows.

    Raises
    ------
    ValueError
        Through its argument checks: ``M`` or ``d`` not an integer ``>= 1``, ``d < 2``, a seed
        outside ``[0, 2**64)``, or an invalid ``tol``/``max_passes``.
    """
    _, M, d = coupling_args("simrf", M, d)
    W = sample_ensemble("simrf", M, d, seed)
    out, passes, conv, changes = W.copy(), [], [], []
    start = 0
    for b in block_sizes("simrf", M, d):
        if b >= 2:
            blk, n, ok, ch = simrf_plus_block(W[start:start + b], tol=tol, max_passes=max_passes)
            out[start:start + b] = blk
            passes.append(n)
            conv.append(ok)
            changes.append(ch)
        start += b
    return out, SimRFPlusInfo(tuple(passes), tuple(conv), tuple(changes))


def _is_pow2(n: int) -> bool:
    return n >= 1 and (n & (n - 1)) == 0


def fwht(x: np.ndarray) -> np.ndarray:
    """Normalised fast Walsh-Hadamard transform ``H x`` along the last axis (eq 90), ``O(D log D)``;
    the length must be a power of two.

    Parameters
    ----------
    x : array_like
        The input; its last axis has length ``D``, a power of two.

    Returns
    -------
    numpy.ndarray
        ``H x`` along the last axis (float64, same shape); ``H`` is symmetric and orthogonal.

    Raises
    ------
    ValueError
        If the last axis's length is not a power of two.

    References
    ----------
    SimRF eq (90).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import fwht
    >>> x = np.arange(8.0)
    >>> bool(np.allclose(fwht(fwht(x)), x)), bool(np.isclose(np.linalg.norm(fwht(x)), np.linalg.norm(x)))
    (True, True)
    """
    a = np.array(x, dtype=float, copy=True)
    n = a.shape[-1]
    if not _is_pow2(n):
        raise ValueError(f"the Hadamard transform needs a power-of-two length; got {n}")
    h = 1
    while h < n:
        a = a.reshape(*a.shape[:-1], n // (2 * h), 2, h)
        u, v = a[..., 0, :].copy(), a[..., 1, :].copy()
        a[..., 0, :], a[..., 1, :] = u + v, u - v
        a = a.reshape(*a.shape[:-3], n)
        h *= 2
    return a / math.sqrt(n)


def hd_rotation(D: int, rng: np.random.Generator, k: int = 3) -> np.ndarray:
    """``R~ = prod_{i=1}^k H D_i`` (eq 89): ``H`` the normalised Hadamard matrix (eq 90) and
    ``D_i`` independent Rademacher diagonals; an exactly orthogonal (D, D) matrix, only
    approximately Haar.  ``D`` must be a power of two.

    Parameters
    ----------
    D : int
        The dimension (a power of two, >= 1).
    rng : numpy.random.Generator
        Source of the Rademacher signs.
    k : int, default 3
        Number of ``H D_i`` factors (>= 1).

    Returns
    -------
    numpy.ndarray
        ``R~``, float64, shape ``(D, D)``.

    Raises
    ------
    ValueError
        If ``D`` or ``k`` is not an integer ``>= 1``, or ``D`` is not a power of two.

    References
    ----------
    SimRF eq (89)-(90) (App. B.2.2).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import hd_rotation
    >>> R = hd_rotation(8, np.random.default_rng(0))
    >>> bool(np.allclose(R @ R.T, np.eye(8)))
    True
    """
    D = validate.positive_int(D, "D")
    if not _is_pow2(D):
        raise ValueError(f"HD-product rotations need D a power of two; got D={D}")
    k = validate.positive_int(k, "k")
    signs = rng.choice([-1.0, 1.0], size=(k, D))
    R = np.eye(D)
    for i in range(k - 1, -1, -1):  # R <- H D_i R, innermost factor first: R~ = H D_1 H D_2 ... H D_k
        R = fwht((signs[i][:, None] * R).T).T  # H X = (fwht of the columns of X), H symmetric
    return R


def sample_fast(coupling: str, M: int, d: int, seed: int = 0, *, k: int = 3, pad: bool = True) -> np.ndarray:
    """Fast ORF / fast SimRF projections (SimRF sec 4.2, App. B.2.2): ``W`` (M, d).

    Each block of ``D = 2^ceil(log2 d)`` rows is ``diag(r) R~`` (fast ORF) or ``diag(r) S R~``
    (fast SimRF, ``S`` the D-dimensional simplex of eq 9) with ``R~`` the HD-product of
    :func:`hd_rotation` (``k = 3``) and ``r ~ chi_D``; data are zero-padded to ``D``, so only
    the first ``d`` columns act (``W`` is returned restricted to them).  Blocks are
    independent; ``M > D`` uses several.  ``pad=False`` requires ``d`` a power of two.

    Parameters
    ----------
    coupling : {"orf", "simrf"}
        Fast ORF or fast SimRF.
    M, d : int
        Number of projections and dimension (``M >= 1``; ``d >= 1``, ``>= 2`` for SimRF).
    seed : int, default 0
        Integer in ``[0, 2**64)``, the seed of ``numpy.random.default_rng``.
    k : int, default 3
        Number of ``H D_i`` factors of each rotation.
    pad : bool, default True
        Zero-pad the data to ``D``; if false, ``d`` must be a power of two.

    Returns
    -------
    numpy.ndarray
        ``W``, float64, shape ``(M, d)``.

    Raises
    ------
    ValueError
        If ``coupling`` is neither ``"orf"`` nor ``"simrf"``, ``M`` or ``d`` is not an integer
        in range, ``pad`` is false and ``d`` is not a power of two, or the seed is outside
        ``[0, 2**64)``.

    References
    ----------
    SimRF sec 4.2, App. B.2.2, eq (89)-(90).

    Examples
    --------
    With ``d = D`` the rows of a fast ORF block are exactly orthogonal:

    >>> import numpy as np
    >>> from rfcheck.engine.couplings import sample_fast
    >>> W = sample_fast("orf", 4, 4, seed=2)
    >>> G = W @ W.T
    >>> W.shape, bool(np.allclose(G - np.diag(np.diag(G)), 0))
    ((4, 4), True)
    """
    if coupling not in ("orf", "simrf"):
        raise ValueError(f"sample_fast supports 'orf' and 'simrf'; got {coupling!r}")
    M = validate.positive_int(M, "M")
    d = validate.positive_int(d, "d", 2 if coupling == "simrf" else 1)
    if not pad and not _is_pow2(d):
        raise ValueError(f"HD-product rotations need d a power of two (or pad=True to zero-pad); got d={d}")
    D = 1 << max(0, (d - 1).bit_length())
    if coupling == "simrf" and D < 2:
        D = 2
    rng = np.random.default_rng(_rng.seed_key(seed))
    rows = []
    S = None
    if coupling == "simrf":
        S = np.zeros((D, D))
        S[:D - 1, :D - 1] = math.sqrt(D / (D - 1)) * np.eye(D - 1) - (math.sqrt(D) + 1) / (D - 1) ** 1.5
        S[D - 1, :D - 1] = 1 / math.sqrt(D - 1)
    while sum(r.shape[0] for r in rows) < M:
        R = hd_rotation(D, rng, k)
        B = R if S is None else S @ R
        r = np.sqrt(rng.chisquare(D, size=D))
        rows.append(r[:, None] * B)
    W = np.concatenate(rows)[:M, :d]
    return np.ascontiguousarray(W)


def antithetic(W: np.ndarray) -> np.ndarray:
    """Antithetic version of an ensemble: rows ``w_1, -w_1, w_2, -w_2, ...`` from the first
    ``ceil(M/2)`` rows of ``W`` (M, d), truncated to ``M`` rows.  Marginals are unchanged
    (N(0, I) is symmetric); the estimator's odd-order terms cancel within each pair.

    Parameters
    ----------
    W : array_like, shape (M, d)
        The ensemble (finite, ``M >= 1``).

    Returns
    -------
    numpy.ndarray
        The antithetic ensemble, float64, shape ``(M, d)``.

    Raises
    ------
    ValueError
        If ``W`` is not numeric or not finite, not 2-D, or has no row.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.couplings import antithetic
    >>> antithetic(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    array([[ 1.,  2.],
           [-1., -2.],
           [ 3.,  4.]])
    """
    W = validate.finite_array(W, "W")
    if W.ndim != 2 or W.shape[0] < 1:
        raise ValueError("W must have shape (M, d) with M >= 1")
    M = W.shape[0]
    half = W[: (M + 1) // 2]
    out = np.empty((2 * half.shape[0], W.shape[1]))
    out[0::2], out[1::2] = half, -half
    return out[:M]

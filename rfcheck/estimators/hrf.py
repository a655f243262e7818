"""Hybrid random features (HRF): base estimators, lambda-coefficients and hybrids, in NumPy.

Every estimator takes explicit random draws (projections ``w`` of shape ``(..., m, d)``,
``tau`` of shape ``(..., n, d)``), so that the same draws can be fed to two
implementations (e.g. the direct hybrid and the Lemma 2.3 feature vectors); leading
dimensions are trials, vectorised.  :func:`simulate` draws them from a seeded generator
and :func:`mse_estimate` turns replicas into an MSE with a standard error
(``rfcheck.stats.estimate_mse``).

Feature maps return arrays whose last axis is the feature index; an estimate is the
plain (bilinear, not conjugated) dot product ``sum(f1 * f2, -1)``, complex where the
paper's features are complex (eq 14-16, 19, 70: the ``i`` factors are part of the maps).

For a single pair with iid Gaussian projections only the components of ``w, tau`` in
``span{x, y}`` matter, so simulating in ``d = 2`` is exact in law for any ``d``.

This module was ``rfcheck.hybrid`` in version 0.1.0; that path still imports, with a
:class:`DeprecationWarning`, for one release.

References
----------
K. Choromanski et al., "Hybrid Random Features", ICLR 2022:
eq (2)-(3), (8)-(12), Lemma 2.3 eq (11) and appendix B eq (30), Lemma 2.4 eq (13)-(18),
eq (19)-(20), appendix F eq (67)-(70), appendix H.2 eq (81)-(104), Def H.1, H.2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfcheck import validate
from rfcheck.features import trig_feature_map
from rfcheck.stats import Estimate, estimate_mse

__all__ = [
    "FIG2_HYBRID",
    "FIG2_M",
    "Blocks",
    "angular_hybrid",
    "angular_lambda",
    "angular_lambda_features",
    "bipolar",
    "cexp_blocks",
    "cexp_features",
    "check_gauss_lambda_range",
    "cluster_a_complex",
    "cluster_a_real",
    "gaussian_lambda",
    "gaussian_mixture_hybrid",
    "general_hrf",
    "hrf_feature_vectors",
    "mse_estimate",
    "normalized_gauss_hybrid",
    "normalized_gauss_lambda",
    "normalized_gauss_lambda_features",
    "pos_blocks",
    "pos_features",
    "simulate",
    "sm_cexp",
    "sm_pos",
    "sm_trig",
    "trig_blocks",
    "trig_features",
    "zero_one_mixture_hybrid",
]

#: HRF Figure 2's configuration (sec 4): SM^trig and SM^++ with 128 random features, and the
#: angular hybrid at matched cost, ``(m, n) = (16, 8)`` (:func:`rfcheck.plots.hrf.matched_hybrid_config`)
FIG2_M = 128
#: the angular hybrid's ``(m, n)`` in HRF Figure 2 (cost matched to :data:`FIG2_M` features)
FIG2_HYBRID = (16, 8)


def _vec(u: Any, name: str) -> np.ndarray:
    a = validate.finite_array(u, name)
    if a.ndim != 1 or a.size < 1:
        raise ValueError(f"{name} must be a vector of shape (d,); got {a.shape}")
    return a


def _proj(w: Any, d: int, name: str = "w") -> np.ndarray:
    a = validate.finite_array(w, name)
    if a.ndim < 2 or a.shape[-1] != d:
        raise ValueError(f"{name} must have shape (..., k, d) with d = {d}; got {a.shape}")
    if a.shape[-2] < 1:
        raise ValueError(f"{name} must hold at least one projection (number of random features m, n >= 1); "
                         f"got shape {a.shape}")
    return a


def _dot(f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    return np.sum(f1 * f2, axis=-1)


# ------------------------------------------------------------------ eq (2), (3): SM^trig, SM^++


def trig_features(u: Any, w: Any) -> np.ndarray:
    """``phi^trig_m(u) = m^-1/2 exp(|u|^2/2)(sin(w_1 u)..sin(w_m u), cos(w_1 u)..cos(w_m u))`` (eq 2).

    :func:`rfcheck.features.trig_feature_map` for one point ``u`` (d,) and draws ``w`` (..., m, d).

    Parameters
    ----------
    u : array_like
        Shape (d,): the point.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    numpy.ndarray
        Shape (..., 2m): the sines, then the cosines, each scaled by ``m^-1/2 exp(|u|^2/2)``.

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (2).

    Examples
    --------
    >>> trig_features([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]]).round(6).tolist()
    [0.0, 0.0, 0.707107, 0.707107]
    """
    u = _vec(u, "u")
    w = _proj(w, u.size)
    return trig_feature_map(u, w)


def pos_features(u: Any, w: Any) -> np.ndarray:
    """``phi^++_m(u) = (2m)^-1/2 exp(-|u|^2/2)(exp(w_i u)..., exp(-w_i u)...)`` (eq 3, FAVOR+).

    Parameters
    ----------
    u : array_like
        Shape (d,): the point.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    numpy.ndarray
        Shape (..., 2m), positive: ``exp(w_i u)`` for every ``i``, then ``exp(-w_i u)`` (the antithetic half).

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (3).

    Examples
    --------
    >>> pos_features([0.0, 0.0], [[1.0, 0.0]]).round(6).tolist()
    [0.707107, 0.707107]
    """
    u = _vec(u, "u")
    w = _proj(w, u.size)
    p = w @ u
    m = w.shape[-2]
    return np.exp(-u @ u / 2) / np.sqrt(2 * m) * np.concatenate([np.exp(p), np.exp(-p)], axis=-1)


def sm_trig(x: Any, y: Any, w: Any) -> np.ndarray:
    """``SM^trig_m(x, y) = phi^trig(x)^T phi^trig(y)`` for projections ``w`` (..., m, d).

    Unbiased for the softmax kernel ``SM(x, y) = exp(x^T y)`` when ``w_i ~ N(0, I_d)`` i.i.d.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    numpy.ndarray
        Shape (...): one estimate per trial (a 0-d array for ``w`` of shape (m, d)).

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (2).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> round(float(sm_trig(x, y, w)), 12) == round(float(trig_features(x, w) @ trig_features(y, w)), 12)
    True
    >>> round(float(sm_trig(x, y, w)), 6)
    1.048789
    """
    return _dot(trig_features(x, w), trig_features(y, w))


def sm_pos(x: Any, y: Any, w: Any) -> np.ndarray:
    """``SM^++_m(x, y) = phi^++(x)^T phi^++(y)`` (antithetic positive features, eq 3).

    Unbiased for ``SM(x, y) = exp(x^T y)`` when ``w_i ~ N(0, I_d)`` i.i.d.; always positive.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    numpy.ndarray
        Shape (...): one estimate per trial.

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (3).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> round(float(sm_pos(x, y, w)), 6)
    0.904234
    """
    return _dot(pos_features(x, w), pos_features(y, w))


# ------------------------------------------------------------- Lemma 2.4, eq (14)-(16): CE


def _bilinear_sq(v: np.ndarray) -> np.ndarray:
    return np.sum(v * v, axis=-1)


def cexp_features(mat: Any, u: Any, w: Any) -> np.ndarray:
    """``Psi^m_M(u) = m^-1/2 exp(-(M u)^2/2)(exp(w_1^T M u), ..., exp(w_m^T M u))`` (eq 15).

    ``(M u)^2 = sum_i (M u)_i^2`` is the bilinear square of sec 2.3 (not ``|M u|^2``).

    Parameters
    ----------
    mat : array_like
        Shape (d, d): the (complex) matrix ``M``.
    u : array_like
        Shape (d,): the point.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    numpy.ndarray
        Shape (..., m), complex.

    Raises
    ------
    ValueError
        If ``M`` is not a finite (d, d) matrix, or as the other feature maps for ``u`` and ``w``.

    References
    ----------
    HRF Lemma 2.4, eq (15).

    Examples
    --------
    >>> cexp_features(np.eye(2), [0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]]).round(6).tolist()
    [(0.707107+0j), (0.707107+0j)]
    """
    u = _vec(u, "u")
    mm = np.asarray(mat, dtype=complex)
    if mm.shape != (u.size, u.size) or not np.all(np.isfinite(mm)):
        raise ValueError(f"M must be a finite ({u.size}, {u.size}) matrix")
    w = _proj(w, u.size)
    v = mm @ u
    return np.exp(-_bilinear_sq(v) / 2 + w @ v) / np.sqrt(w.shape[-2])


def _inv_t(a: Any) -> np.ndarray:
    am = np.asarray(a, dtype=complex)
    if am.ndim != 2 or am.shape[0] != am.shape[1] or not np.all(np.isfinite(am)):
        raise ValueError("A must be a finite square matrix")
    if np.linalg.cond(am) > 1e12:
        raise ValueError("A must be invertible (condition number > 1e12): eq (14) needs (A^T)^-1")
    return np.linalg.inv(am.T)


def sm_cexp(a: Any, x: Any, y: Any, w: Any) -> np.ndarray:
    """Complex-exponential estimator ``Psi_A(x)^T Psi_{(A^T)^-1}(y)`` (eq 16), complex-valued.

    Unbiased for ``SM(x, y)`` for every invertible complex ``A`` (eq 14-15); its variance is
    zero iff ``A x + (A^T)^-1 y = 0`` (eq 17-18).

    Parameters
    ----------
    a : array_like
        Shape (d, d): the invertible (complex) matrix ``A``.
    x, y : array_like
        Shape (d,): the query and the key.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    numpy.ndarray
        Shape (...), complex: one estimate per trial (its real part is also unbiased).

    Raises
    ------
    ValueError
        If ``A`` is not a finite square matrix or is numerically singular (condition number > 1e12),
        or as the feature maps for the points and projections.

    References
    ----------
    HRF Lemma 2.4, eq (14)-(18).

    Examples
    --------
    Where ``A x + (A^T)^-1 y = 0`` every draw gives ``SM(x, y)`` exactly:

    >>> x = np.array([0.3, -0.2])
    >>> v = sm_cexp(np.eye(2), x, -x, np.random.default_rng(0).standard_normal((5, 3, 2)))
    >>> bool(np.allclose(v, np.exp(-x @ x)))
    True
    """
    return _dot(cexp_features(a, x, w), cexp_features(_inv_t(a), y, w))


# ----------------------------------------------------------- eq (8)-(11): general HRF, Lemma 2.3


@dataclass(frozen=True)
class Blocks:
    """Unscaled feature blocks of one estimator: ``value = (1/k) sum_j x[j] . y[j]``.

    ``x[j], y[j]`` are the blocks ``phi^{j}_{1,m}(x)``, ``phi^{j}_{2,m}(y)`` (eq 8, without
    the ``1/sqrt(m)``) of a base estimator, or ``rho^{i}_{1,n}(x)``, ``rho^{i}_{2,n}(y)``
    (eq 10) of a lambda-estimator; ``k`` is ``m`` or ``n``.  Arrays ``(..., k)``.

    Parameters
    ----------
    x : tuple of numpy.ndarray
        The ``t >= 1`` blocks of the query side, each of shape (..., k).
    y : tuple of numpy.ndarray
        The ``t`` blocks of the key side, each of shape (..., k).

    Raises
    ------
    ValueError
        If the two sides hold different (or zero) numbers of blocks, or the blocks differ in length ``k``.

    References
    ----------
    HRF eq (8)-(10).

    Examples
    --------
    >>> b = Blocks((np.array([1.0, 2.0]),), (np.array([3.0, 4.0]),))
    >>> b.k, float(b.value())
    (2, 5.5)
    """

    x: tuple[np.ndarray, ...]
    y: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y) or not self.x:
            raise ValueError("Blocks needs the same positive number of x- and y-blocks")
        k = self.x[0].shape[-1]
        if any(b.shape[-1] != k for b in (*self.x, *self.y)):
            raise ValueError("all blocks of one estimator must have the same length")

    @property
    def k(self) -> int:
        return int(self.x[0].shape[-1])

    def value(self) -> np.ndarray:
        return sum(_dot(a, b) for a, b in zip(self.x, self.y, strict=True)) / self.k


def _check_hrf(bases: Sequence[Blocks], lambdas: Sequence[tuple[float, Blocks]]) -> None:
    if len(bases) != len(lambdas) + 1:
        raise ValueError(f"eq (8) needs p + 1 base estimators for p lambda-coefficients; "
                         f"got {len(bases)} and {len(lambdas)}")
    if len({b.k for b in bases}) != 1 or len({lam.k for _, lam in lambdas}) > 1:
        raise ValueError("base estimators must share m and lambda-estimators n (eq 11)")
    for a, _ in lambdas:
        validate.finite_real(a, "a_k")


def general_hrf(bases: Sequence[Blocks], lambdas: Sequence[tuple[float, Blocks]]) -> np.ndarray:
    """``sum_k lambda_k SM^k + (1 - sum_k lambda_k) SM^{p+1}`` (eq 8), ``lambda_k = a_k + rho_1^T rho_2`` (eq 10).

    Parameters
    ----------
    bases : sequence of Blocks
        The ``p + 1`` base estimators ``SM^1, ..., SM^{p+1}``, all with the same ``m``.
    lambdas : sequence of (float, Blocks)
        The ``p`` lambda-coefficients: the constant ``a_k`` and the lambda-estimator's blocks
        ``rho^k`` (all with the same ``n``).

    Returns
    -------
    numpy.ndarray
        Shape (...): the hybrid estimate per trial (complex where the blocks are).

    Raises
    ------
    ValueError
        If there are not ``p + 1`` bases for ``p`` coefficients, the bases (or lambda-estimators)
        differ in ``m`` (or ``n``), or an ``a_k`` is not finite.

    References
    ----------
    HRF eq (8)-(10).

    Examples
    --------
    The angular hybrid (eq 12 with eq 19) as a general HRF:

    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> tau = np.array([[1.0, 1.0]])
    >>> lam = Blocks((angular_lambda_features(x, tau),), (angular_lambda_features(y, tau),))
    >>> v = general_hrf([pos_blocks(x, y, w), trig_blocks(x, y, w)], [(0.5, lam)])
    >>> bool(np.isclose(v, angular_hybrid(x, y, w, w, tau)))
    True
    """
    _check_hrf(bases, lambdas)
    lam = [a + blk.value() for a, blk in lambdas]
    out = sum(lk * b.value() for lk, b in zip(lam, bases[:-1], strict=True))
    return out + (1 - sum(lam)) * bases[-1].value()


def hrf_feature_vectors(
    bases: Sequence[Blocks], lambdas: Sequence[tuple[float, Blocks]]
) -> tuple[np.ndarray, np.ndarray]:
    """``(Psi_1(x), Psi_2(y))`` of Lemma 2.3, eq (11): ``Psi_1(x)^T Psi_2(y)`` is eq (8)'s estimate.

    ``Psi_j = Psi_j^1 * Psi_j^2 * Psi_j^3 * Psi_j^4`` (concatenation): the ``a_k`` parts
    (scaled by ``sqrt(a_k/m)``), the products ``rho^{i,k} (x) phi^{j,k}`` scaled by
    ``1/sqrt(mn)``, the ``p+1``-st base scaled by ``sqrt((1 - sum a_k)/m)`` and the
    products with it scaled by ``i/sqrt(mn)`` (complex square roots: the dot product is
    bilinear, so ``sqrt(c)^2 = c`` for any sign of ``c``).

    Parameters
    ----------
    bases : sequence of Blocks
        The ``p + 1`` base estimators (as :func:`general_hrf`).
    lambdas : sequence of (float, Blocks)
        The ``p`` pairs ``(a_k, rho^k)`` (as :func:`general_hrf`).

    Returns
    -------
    psi_x, psi_y : numpy.ndarray
        Complex, shape (..., D) each, ``D = t m (p + 1) + t t' m n p`` for ``t``-block bases and
        ``t'``-block lambda-estimators; ``sum(psi_x * psi_y, -1)`` (bilinear) equals :func:`general_hrf`.

    Raises
    ------
    ValueError
        As :func:`general_hrf`.

    References
    ----------
    HRF Lemma 2.3, eq (11), appendix B eq (30).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> tau = np.array([[1.0, 1.0]])
    >>> lam = Blocks((angular_lambda_features(x, tau),), (angular_lambda_features(y, tau),))
    >>> bases = [pos_blocks(x, y, w), trig_blocks(x, y, w)]
    >>> px, py = hrf_feature_vectors(bases, [(0.5, lam)])
    >>> px.shape[-1], bool(np.isclose(np.sum(px * py, -1), general_hrf(bases, [(0.5, lam)])))
    (16, True)
    """
    _check_hrf(bases, lambdas)
    m = bases[0].k
    n = lambdas[0][1].k if lambdas else 1
    sides: list[list[np.ndarray]] = [[], []]
    for side in (0, 1):
        def get(b: Blocks, s: int = side) -> tuple[np.ndarray, ...]:
            return b.x if s == 0 else b.y

        parts = sides[side]
        for (a, _), base in zip(lambdas, bases[:-1], strict=True):  # Psi^1
            parts.extend(np.sqrt(complex(a) / m) * blk for blk in get(base))
        for (_, lam), base in zip(lambdas, bases[:-1], strict=True):  # Psi^2
            for rb in get(lam):
                for pb in get(base):
                    parts.append(_kron(rb, pb) / np.sqrt(m * n))
        rest = 1 - sum(a for a, _ in lambdas)
        parts.extend(np.sqrt(complex(rest) / m) * blk for blk in get(bases[-1]))  # Psi^3
        for _, lam in lambdas:  # Psi^4
            for rb in get(lam):
                for pb in get(bases[-1]):
                    parts.append(1j * _kron(rb, pb) / np.sqrt(m * n))
    shape = np.broadcast_shapes(*[p.shape[:-1] for p in sides[0] + sides[1]])
    cat = [np.concatenate([np.broadcast_to(p, (*shape, p.shape[-1])) for p in s], axis=-1) for s in sides]
    return cat[0], cat[1]


def _kron(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Vectorised outer product ``a (x) b`` over the last axis (``u (x) v`` of sec 2.2)."""
    out = a[..., :, None] * b[..., None, :]
    return out.reshape(*out.shape[:-2], a.shape[-1] * b.shape[-1])


def trig_blocks(x: Any, y: Any, w: Any) -> Blocks:
    """SM^trig as ``t = 2`` unscaled blocks (sin, cos), each times ``exp(|u|^2/2)``.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    Blocks
        The sine and cosine blocks of each side (:func:`trig_features` times ``sqrt(m)``), whose
        ``value()`` is :func:`sm_trig`.

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (2), (8).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> b = trig_blocks(x, y, w)
    >>> b.k, bool(np.isclose(b.value(), sm_trig(x, y, w)))
    (2, True)
    """
    fx, fy = trig_features(x, w), trig_features(y, w)
    m = np.asarray(w).shape[-2]
    s = np.sqrt(m)
    return Blocks((fx[..., :m] * s, fx[..., m:] * s), (fy[..., :m] * s, fy[..., m:] * s))


def pos_blocks(x: Any, y: Any, w: Any) -> Blocks:
    """SM^++ as ``t = 2`` unscaled blocks (``exp(+w u)``, ``exp(-w u)``), each with ``1/sqrt(2)``.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    Blocks
        The two halves of :func:`pos_features` times ``sqrt(m)`` on each side; ``value()`` is :func:`sm_pos`.

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (3), (8).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> bool(np.isclose(pos_blocks(x, y, w).value(), sm_pos(x, y, w)))
    True
    """
    fx, fy = pos_features(x, w), pos_features(y, w)
    m = np.asarray(w).shape[-2]
    s = np.sqrt(m)
    return Blocks((fx[..., :m] * s, fx[..., m:] * s), (fy[..., :m] * s, fy[..., m:] * s))


def cexp_blocks(a: Any, x: Any, y: Any, w: Any) -> Blocks:
    """The CE estimator (eq 16) as one unscaled block per side.

    Parameters
    ----------
    a : array_like
        Shape (d, d): the invertible (complex) matrix ``A``.
    x, y : array_like
        Shape (d,): the query and the key.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    Blocks
        ``Psi_A(x) sqrt(m)`` and ``Psi_{(A^T)^-1}(y) sqrt(m)``; ``value()`` is :func:`sm_cexp`.

    Raises
    ------
    ValueError
        As :func:`sm_cexp`.

    References
    ----------
    HRF eq (16), (8).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> bool(np.isclose(cexp_blocks(np.eye(2), x, y, w).value(), sm_cexp(np.eye(2), x, y, w)))
    True
    """
    m = np.asarray(w).shape[-2]
    s = np.sqrt(m)
    return Blocks((cexp_features(a, x, w) * s,), (cexp_features(_inv_t(a), y, w) * s,))


# ------------------------------------------------------------------- eq (12): bipolar


def bipolar(x: Any, y: Any, w_pos: Any, w_trig: Any, lam: Any) -> np.ndarray:
    """``lambda SM^++_m + (1 - lambda) SM^trig_m`` (eq 12); pass ``w_trig = w_pos`` to share projections.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    w_pos : array_like
        Shape (..., m, d): the projections of ``SM^++``.
    w_trig : array_like
        Shape (..., m, d): the projections of ``SM^trig`` (``w_pos`` itself to share them).
    lam : array_like
        The coefficient ``lambda``: a number or an estimate per trial (shape (...)).

    Returns
    -------
    numpy.ndarray
        Shape (...): one estimate per trial.

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (12).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> bool(np.isclose(bipolar(x, y, w, w, 1.0), sm_pos(x, y, w)))
    True
    >>> round(float(bipolar(x, y, w, w, 0.5)), 6)
    0.976511
    """
    return lam * sm_pos(x, y, w_pos) + (1 - lam) * sm_trig(x, y, w_trig)


# ------------------------------------------------------------ eq (19): angular lambda


def angular_lambda_features(z: Any, tau: Any) -> np.ndarray:
    """``rho_n(z) = i/sqrt(2n) (sgn(tau_1 z), ..., sgn(tau_n z))`` (eq 19), complex.

    Parameters
    ----------
    z : array_like
        Shape (d,): the point.
    tau : array_like
        Shape (..., n, d): ``n >= 1`` projections of the lambda-estimator per trial.

    Returns
    -------
    numpy.ndarray
        Shape (..., n), purely imaginary.

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (19).

    Examples
    --------
    >>> f = angular_lambda_features([0.3, -0.2], [[1.0, 0.0], [0.0, 1.0]])
    >>> bool(np.all(f.real == 0)), f.imag.tolist()
    (True, [0.5, -0.5])
    """
    z = _vec(z, "z")
    tau = _proj(tau, z.size, "tau")
    return 1j / np.sqrt(2 * tau.shape[-2]) * np.sign(tau @ z)


def angular_lambda(x: Any, y: Any, tau: Any) -> np.ndarray:
    """``lambda_hat(x, y) = 1/2 + rho_n(x)^T rho_n(y)`` (eq 19), real; ``E = theta_{x,y}/pi``.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    tau : array_like
        Shape (..., n, d): ``n >= 1`` projections of the lambda-estimator per trial.

    Returns
    -------
    numpy.ndarray
        Shape (...): the estimate per trial, in [0, 1] (the fraction of the ``n`` hyperplanes that
        separate ``x`` from ``y``).

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (19).

    Examples
    --------
    One of the two hyperplanes separates the pair:

    >>> float(angular_lambda([0.3, -0.2], [0.1, 0.4], [[1.0, 0.0], [0.0, 1.0]]))
    0.5
    """
    return np.real(0.5 + _dot(angular_lambda_features(x, tau), angular_lambda_features(y, tau)))


def angular_hybrid(x: Any, y: Any, w_pos: Any, w_trig: Any, tau: Any) -> np.ndarray:
    """Angular hybrid ``SM^anghyb_{m,n}`` (eq 12 with eq 19).

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    w_pos : array_like
        Shape (..., m, d): the projections of ``SM^++``.
    w_trig : array_like
        Shape (..., m, d): the projections of ``SM^trig`` (``w_pos`` itself to share them).
    tau : array_like
        Shape (..., n, d): ``n >= 1`` projections of the lambda-estimator per trial.

    Returns
    -------
    numpy.ndarray
        Shape (...): ``lambda_hat SM^++ + (1 - lambda_hat) SM^trig`` per trial, with ``lambda_hat`` of
        :func:`angular_lambda`.

    Raises
    ------
    ValueError
        If a point is not a finite vector or the projections do not have shape (..., k, d), k >= 1.

    References
    ----------
    HRF eq (12), (19).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> v = angular_hybrid(x, y, w, w, [[1.0, 1.0]])
    >>> bool(np.isclose(v, bipolar(x, y, w, w, angular_lambda(x, y, [[1.0, 1.0]]))))
    True
    """
    return bipolar(x, y, w_pos, w_trig, angular_lambda(x, y, tau))


# ------------------------------------------------------------ eq (20): Gaussian lambda


def gaussian_lambda(x: Any, y: Any, mat: Any, c: float, tau: Any, kind: str = "pos") -> np.ndarray:
    """``lambda_hat = rho_1(x)^T rho_2(y)`` of eq (20), estimating ``exp(-|x + M y|^2/(2c^2))``.

    ``rho_1(x) = exp(-|x|^2/(2c^2)) phi^SM(x/c)``, ``rho_2(y) = exp(-|M y|^2/(2c^2))
    phi^SM(-M y/c)`` with ``phi^SM`` the trig (``kind="trig"``) or positive (``"pos"``) map.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    mat : array_like
        Shape (d, d): the real matrix ``M_k``.
    c : float
        The nonzero scale ``c_k``.
    tau : array_like
        Shape (..., n, d): ``n >= 1`` projections of the lambda-estimator per trial.
    kind : {"pos", "trig"}, optional
        The softmax feature map inside ``rho``: :func:`pos_features` (default) or :func:`trig_features`.

    Returns
    -------
    numpy.ndarray
        Shape (...): the estimate per trial.

    Raises
    ------
    ValueError
        If ``c`` is zero or not finite, ``kind`` is unknown, or as the feature maps.

    References
    ----------
    HRF eq (20).

    Examples
    --------
    Unbiased: the mean of 20,000 draws is within 5 standard errors of the target:

    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> v = gaussian_lambda(x, y, np.eye(2), 1.0, np.random.default_rng(0).standard_normal((20_000, 4, 2)))
    >>> target = np.exp(-np.sum((x + y) ** 2) / 2)
    >>> bool(abs(v.mean() - target) < 5 * v.std() / np.sqrt(v.size))
    True
    """
    x, y = _vec(x, "x"), _vec(y, "y")
    c = validate.finite_real(c, "c")
    if c == 0:
        raise ValueError("c_k must be nonzero (eq 20 divides by c_k)")
    my = np.asarray(mat, dtype=float) @ y
    fmap = {"pos": pos_features, "trig": trig_features}.get(kind)
    if fmap is None:
        raise ValueError(f"kind must be 'pos' or 'trig'; got {kind!r}")
    r1 = np.exp(-(x @ x) / (2 * c * c)) * fmap(x / c, tau)
    r2 = np.exp(-(my @ my) / (2 * c * c)) * fmap(-my / c, tau)
    return _dot(r1, r2)


# ----------------------------------------------------- appendix F, eq (67)-(70): normalised


def _rho_norm(sigma: float, r: float) -> float:
    sigma, r = validate.finite_real(sigma, "sigma"), validate.finite_real(r, "r")
    if sigma <= 0 or r <= 0:
        raise ValueError("sigma > 0 and r > 0 are required (eq 67-68)")
    return float(-np.expm1(-2 * sigma**2 * r**2))


#: relative slack on ``|x - y| <= 2r``: antipodal same-length inputs meet it with equality up to rounding
_LAMBDA_RANGE_RTOL = 1e-12


def check_gauss_lambda_range(x: Any, y: Any, sigma: float, r: float) -> float:
    """``lambda(x, y)`` of eq (67)-(68), after checking that it lies in ``[0, 1]``.

    ``lambda = (1 - exp(-sigma^2 |x - y|^2/2))/(1 - exp(-2 sigma^2 r^2))`` is in ``[0, 1]`` iff
    ``|x - y| <= 2r`` -- always for ``|x| = |y| = r`` (appendix F's premise) or ``|x|, |y| <= r``.
    Otherwise ``ValueError``: the paper's lambda-coefficients map into ``[0, 1]`` (sec 2.2).

    Raising, not clipping: the estimate ``lambda_hat`` of eq (69) is independent of the base
    estimators, so the hybrid stays unbiased for any ``lambda``; clipping the coefficient is not
    linearisable (no eq 70 features, no Lemma 2.3), and clipping ``lambda_hat`` per draw changes
    its moments, so Thm F.1's MSE would no longer describe the estimator.  Callers who want the
    unbiased but non-convex weight pass ``allow_lambda_above_one=True`` to the estimators.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    sigma : float
        The Gaussian kernel's ``sigma > 0`` (eq 67).
    r : float
        The radius ``r > 0`` of appendix F (inputs of norm ``r``).

    Returns
    -------
    float
        ``lambda(x, y)`` in ``[0, 1]`` (up to a relative ``1e-12`` on ``|x - y| <= 2r``).

    Raises
    ------
    ValueError
        If ``|x - y| > 2r`` (``lambda > 1``), ``sigma`` or ``r`` is not positive, or a point is not a
        finite vector.

    References
    ----------
    HRF sec 2.2 (``lambda^k: R^d x R^d -> [0, 1]``), appendix F eq (67)-(68), (76).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> lam = check_gauss_lambda_range(x, y, 1.0, 1.0)
    >>> bool(np.isclose(lam, (1 - np.exp(-np.sum((x - y) ** 2) / 2)) / (1 - np.exp(-2))))
    True
    >>> check_gauss_lambda_range(x, -x, 1.0, 0.1)
    Traceback (most recent call last):
    ...
    ValueError: normalised Gaussian lambda (eq 67) lies in [0, 1] only for |x - y| <= 2r ...
    """
    x, y = _vec(x, "x"), _vec(y, "y")
    rho = _rho_norm(sigma, r)
    dd = float(np.sum((x - y) ** 2))
    lam = float(-np.expm1(-float(sigma) ** 2 * dd / 2) / rho)
    if dd > 4 * float(r) ** 2 * (1 + _LAMBDA_RANGE_RTOL):
        raise ValueError(
            f"normalised Gaussian lambda (eq 67) lies in [0, 1] only for |x - y| <= 2r (e.g. |x| = |y| = r, "
            f"appendix F); got |x - y| = {np.sqrt(dd):.6g} > 2r = {2 * float(r):.6g}, lambda = {lam:.6g} > 1. "
            "The hybrid stays unbiased: pass allow_lambda_above_one=True to use this non-convex weight")
    return lam


def normalized_gauss_lambda(x: Any, y: Any, tau: Any, sigma: float, r: float, *,
                            allow_lambda_above_one: bool = False) -> np.ndarray:
    """``lambda_hat = 1/rho - (1/(n rho)) sum_i cos(sigma tau_i^T (x - y))`` (eq 69), ``rho`` of eq (68).

    ``E lambda_hat = lambda(x, y)`` of eq (67), which must lie in ``[0, 1]``
    (:func:`check_gauss_lambda_range`, ``ValueError`` for ``|x - y| > 2r``) unless
    ``allow_lambda_above_one``.  The estimate itself ranges over ``[0, 2/rho]`` for any input.

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    tau : array_like
        Shape (..., n, d): ``n >= 1`` projections of the lambda-estimator per trial.
    sigma : float
        The Gaussian kernel's ``sigma > 0``.
    r : float
        The radius ``r > 0`` of appendix F.
    allow_lambda_above_one : bool, optional
        Accept ``lambda(x, y) > 1`` (default False: raise).

    Returns
    -------
    numpy.ndarray
        Shape (...): ``lambda_hat`` per trial.

    Raises
    ------
    ValueError
        As :func:`check_gauss_lambda_range` (unless ``allow_lambda_above_one``), or for bad projections.

    References
    ----------
    HRF appendix F eq (67)-(69).

    Examples
    --------
    With ``tau = 0`` every cosine is 1 and the estimate is 0:

    >>> float(normalized_gauss_lambda([0.3, -0.2], [0.1, 0.4], np.zeros((3, 2)), 1.0, 1.0))
    0.0
    """
    x, y = _vec(x, "x"), _vec(y, "y")
    rho = _rho_norm(sigma, r)
    if not allow_lambda_above_one:
        check_gauss_lambda_range(x, y, sigma, r)
    tau = _proj(tau, x.size, "tau")
    return 1 / rho - np.mean(np.cos(sigma * (tau @ (x - y))), axis=-1) / rho


def normalized_gauss_lambda_features(z: Any, tau: Any, sigma: float, r: float) -> np.ndarray:
    """``rho_n(z) = i/sqrt(n rho) (sin(sigma tau_1 z), cos(sigma tau_1 z), ...)``: eq (70) with the
    ``sigma`` that eq (69) needs (eq 70 as printed omits it), so ``1/rho + rho_n(x)^T rho_n(y)``
    equals eq (69)'s ``lambda_hat`` for the same ``tau``.

    Parameters
    ----------
    z : array_like
        Shape (d,): the point.
    tau : array_like
        Shape (..., n, d): ``n >= 1`` projections of the lambda-estimator per trial.
    sigma : float
        The Gaussian kernel's ``sigma > 0``.
    r : float
        The radius ``r > 0`` of appendix F (``rho = 1 - exp(-2 sigma^2 r^2)``, eq 68).

    Returns
    -------
    numpy.ndarray
        Shape (..., 2n), purely imaginary: sine and cosine of each projection, interleaved.

    Raises
    ------
    ValueError
        If ``sigma`` or ``r`` is not positive, or as the other feature maps.

    References
    ----------
    HRF appendix F eq (68)-(70).

    Examples
    --------
    >>> x, y, tau = np.array([0.3, -0.2]), np.array([0.1, 0.4]), np.array([[1.0, 0.5], [-0.3, 2.0]])
    >>> rho = 1 - np.exp(-2 * 1.5**2)
    >>> fx, fy = (normalized_gauss_lambda_features(u, tau, 1.5, 1.0) for u in (x, y))
    >>> bool(np.isclose(1 / rho + np.sum(fx * fy), normalized_gauss_lambda(x, y, tau, 1.5, 1.0)))
    True
    """
    z = _vec(z, "z")
    rho = _rho_norm(sigma, r)
    tau = _proj(tau, z.size, "tau")
    p = sigma * (tau @ z)
    n = tau.shape[-2]
    inter = np.stack([np.sin(p), np.cos(p)], axis=-1).reshape(*p.shape[:-1], 2 * n)
    return 1j / np.sqrt(n * rho) * inter


def normalized_gauss_hybrid(x: Any, y: Any, w_pos: Any, w_trig: Any, tau: Any, sigma: float, r: float, *,
                            allow_lambda_above_one: bool = False) -> np.ndarray:
    """Normalised bipolar Gaussian hybrid ``SM^gausshyb_{m,n}`` (appendix F: eq 12 with eq 69).

    ``ValueError`` when ``lambda(x, y) > 1`` (``|x - y| > 2r``) unless ``allow_lambda_above_one``:
    see :func:`check_gauss_lambda_range` (the estimator is unbiased either way, Thm F.1 holds).

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    w_pos : array_like
        Shape (..., m, d): the projections of ``SM^++``.
    w_trig : array_like
        Shape (..., m, d): the projections of ``SM^trig`` (``w_pos`` itself to share them).
    tau : array_like
        Shape (..., n, d): ``n >= 1`` projections of the lambda-estimator per trial.
    sigma : float
        The Gaussian kernel's ``sigma > 0``.
    r : float
        The radius ``r > 0`` of appendix F.
    allow_lambda_above_one : bool, optional
        Accept ``lambda(x, y) > 1`` (default False: raise).

    Returns
    -------
    numpy.ndarray
        Shape (...): the hybrid estimate per trial.

    Raises
    ------
    ValueError
        As :func:`normalized_gauss_lambda`.

    References
    ----------
    HRF appendix F (eq 12 with eq 69), Thm F.1.

    Examples
    --------
    With ``tau = 0``, ``lambda_hat = 0``: the hybrid is ``SM^trig``:

    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> v = normalized_gauss_hybrid(x, y, w, w, np.zeros((1, 2)), 1.0, 1.0)
    >>> bool(np.isclose(v, sm_trig(x, y, w)))
    True
    """
    lam = normalized_gauss_lambda(x, y, tau, sigma, r, allow_lambda_above_one=allow_lambda_above_one)
    return bipolar(x, y, w_pos, w_trig, lam)


# ------------------------------------------------------------ appendix H.2: clustered data


def cluster_a_complex(ri: Any, rj: Any, big: float = 1e3, small: float = 1e-3) -> np.ndarray:
    """Diagonal of the complex ``A^{i,j}`` solving eq (83) per coordinate (eq 85-87).

    ``r_i r_j > 0``: ``A_kk = i sqrt(r_j/r_i)`` (eq 86); ``r_i r_j < 0``: ``sqrt(-r_j/r_i)``
    (eq 87); both zero: ``1 + i``; ``r_i = 0 != r_j``: ``big`` (real); ``r_i != 0 = r_j``:
    ``small (1 + i)`` -- the paper's fallbacks where eq (83) has no solution.

    Parameters
    ----------
    ri, rj : array_like
        Shape (d,): the centres ``r_i`` (query cluster) and ``r_j`` (key cluster).
    big : float, optional
        The fallback for ``r_i,k = 0 != r_j,k`` (default 1e3).
    small : float, optional
        The fallback scale for ``r_i,k != 0 = r_j,k`` (default 1e-3).

    Returns
    -------
    numpy.ndarray
        Shape (d,), complex: the diagonal of ``A^{i,j}``.

    Raises
    ------
    ValueError
        If a centre is not a finite vector.

    References
    ----------
    HRF appendix H.2 eq (83)-(87).

    Examples
    --------
    >>> cluster_a_complex([1.0, -1.0, 0.0, 0.0, 2.0], [4.0, 4.0, 0.0, 1.0, 0.0]).tolist()
    [2j, (2+0j), (1+1j), (1000+0j), (0.001+0.001j)]
    """
    ri, rj = _vec(ri, "r_i"), _vec(rj, "r_j")
    with np.errstate(divide="ignore", invalid="ignore"):
        q = rj / ri
        out = np.where(ri * rj > 0, 1j * np.sqrt(np.abs(q)), np.sqrt(np.abs(q)) + 0j)
    out = np.where((ri == 0) & (rj == 0), 1 + 1j, out)
    out = np.where((ri == 0) & (rj != 0), big + 0j, out)
    return np.where((ri != 0) & (rj == 0), small * (1 + 1j), out)


def cluster_a_real(ri: Any, rj: Any, big: float = 1e3) -> np.ndarray:
    """Diagonal of the real ``A^{i,j}`` of eq (88): ``a_k = sqrt(|r_j,k / r_i,k|)``.

    ``r_i,k = 0 != r_j,k``: ``big``; both zero: 1.  ``r_i,k != 0 = r_j,k`` gives ``a_k = 0``
    as printed, which makes ``A`` singular: ``ValueError`` (the infimum of eq (21) is not
    attained there).

    Parameters
    ----------
    ri, rj : array_like
        Shape (d,): the centres ``r_i`` (query cluster) and ``r_j`` (key cluster).
    big : float, optional
        The fallback for ``r_i,k = 0 != r_j,k`` (default 1e3).

    Returns
    -------
    numpy.ndarray
        Shape (d,), real and positive: the diagonal of ``A^{i,j}``.

    Raises
    ------
    ValueError
        If some ``r_i,k != 0 = r_j,k`` (``A`` singular), or a centre is not a finite vector.

    References
    ----------
    HRF appendix H.2 eq (88), eq (21).

    Examples
    --------
    >>> cluster_a_real([1.0, -1.0, 0.0, 0.0], [4.0, 4.0, 0.0, 1.0]).tolist()
    [2.0, 2.0, 1.0, 1000.0]
    """
    ri, rj = _vec(ri, "r_i"), _vec(rj, "r_j")
    if np.any((ri != 0) & (rj == 0)):
        raise ValueError("eq (88) gives a_k = 0 where r_i,k != 0 = r_j,k: A would be singular")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(np.abs(rj / ri))
    out = np.where((ri == 0) & (rj != 0), big, out)
    return np.where((ri == 0) & (rj == 0), 1.0, out)


def zero_one_mixture_hybrid(x: Any, y: Any, a_diags: Any, i: int, j: int, w: Any) -> np.ndarray:
    """Def H.2 (eq 101-104): indicators pick the CE estimator ``A^{i,j}`` of the pair's clusters.

    ``a_diags[i][j]`` is the diagonal of ``A^{i,j}``; ``x`` is in query cluster ``i`` and
    ``y`` in key cluster ``j`` (the indicators ``Psi_i(x) Psi_j(y)`` of eq 103 are one for
    that pair only, so eq 102 holds).

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    a_diags : sequence of sequence of array_like
        ``a_diags[i][j]``: the diagonal (shape (d,)) of ``A^{i,j}`` (e.g. :func:`cluster_a_complex`).
    i : int
        The query cluster of ``x``.
    j : int
        The key cluster of ``y``.
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections per trial (leading axes: trials, vectorised).

    Returns
    -------
    numpy.ndarray
        Shape (...), complex: :func:`sm_cexp` with ``A^{i,j}``.

    Raises
    ------
    ValueError
        As :func:`sm_cexp`.

    References
    ----------
    HRF appendix H.2, Def H.2, eq (101)-(104).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> a = [[np.array([1.0, 2.0])]]
    >>> bool(np.isclose(zero_one_mixture_hybrid(x, y, a, 0, 0, w), sm_cexp(np.diag([1.0, 2.0]), x, y, w)))
    True
    """
    return sm_cexp(np.diag(np.asarray(a_diags[i][j])), x, y, w)


def _lambda_cluster_matrix(a: np.ndarray) -> np.ndarray:
    """``D = Re(A^H (A^T)^-1)``: ``|A x + (A^T)^-1 y|^2 = |A x|^2 + |(A^T)^-1 y|^2 + 2 x^T D y``."""
    return np.real(a.conj().T @ _inv_t(a))


def gaussian_mixture_hybrid(
    x: Any, y: Any, a_diags: Sequence[Sequence[Any]], tau_c: float, w: Any, w_lam: Any, w0: Any,
    base0: Callable[[Any, Any, Any], np.ndarray] = sm_pos,
) -> np.ndarray:
    """Def H.1 (eq 97-100): Gaussian lambda-coefficients with a default base estimator.

    ``lambda_hat^{i,j}`` estimates ``exp(-|A x + (A^T)^-1 y|^2/(2 tau^2))`` (eq 93) with
    positive features, written with ``D = Re(A^H (A^T)^-1)`` so that it is unbiased for
    complex ``A`` too (``D = I`` for real ``A``, where this is eq 94-96); the default
    estimator ``SM^0`` gets ``lambda^0 = 1 - sum lambda^{i,j}`` (eq 98).

    Parameters
    ----------
    x, y : array_like
        Shape (d,): the query and the key.
    a_diags : sequence of sequence of array_like
        ``a_diags[i][j]``: the diagonal (shape (d,)) of ``A^{i,j}``, for every pair of clusters.
    tau_c : float
        The bandwidth ``tau > 0`` of the Gaussian lambda-coefficients (eq 93).
    w : array_like
        Shape (..., m, d): ``m >= 1`` projections of the CE estimators per trial (leading axes: trials, vectorised).
    w_lam : array_like
        Shape (..., n, d): the projections of the lambda-estimators (positive features).
    w0 : array_like
        The projections passed to ``base0``.
    base0 : callable, optional
        The default estimator ``SM^0(x, y, w0)`` (default :func:`sm_pos`).

    Returns
    -------
    numpy.ndarray
        Shape (...), complex: the hybrid estimate per trial.

    Raises
    ------
    ValueError
        If ``tau_c`` is not positive, or as :func:`sm_cexp` and :func:`sm_pos`.

    References
    ----------
    HRF appendix H.2, Def H.1, eq (93)-(100).

    Examples
    --------
    One cluster pair with ``A = I`` and lambda-projections ``0``, which make the lambda-estimate
    the constant ``exp(-(|x|^2 + |y|^2)/tau^2)``:

    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> w = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> lam = np.exp(-(x @ x + y @ y))
    >>> v = gaussian_mixture_hybrid(x, y, [[np.ones(2)]], 1.0, w, np.zeros((1, 2)), w)
    >>> bool(np.isclose(v, lam * sm_cexp(np.eye(2), x, y, w) + (1 - lam) * sm_pos(x, y, w)))
    True
    """
    x, y = _vec(x, "x"), _vec(y, "y")
    tau_c = validate.finite_real(tau_c, "tau")
    if tau_c <= 0:
        raise ValueError("tau must be > 0 (eq 93)")
    total = 0.0
    lam_sum = 0.0
    for row in a_diags:
        for diag in row:
            a = np.diag(np.asarray(diag, dtype=complex))
            ax, by = a @ x, _inv_t(a) @ y
            dy = _lambda_cluster_matrix(a) @ y
            pref = np.exp(-(np.sum(np.abs(ax) ** 2) + np.sum(np.abs(by) ** 2)) / (2 * tau_c**2))
            lam = pref * sm_pos(x / tau_c, -dy / tau_c, w_lam)
            total = total + lam * sm_cexp(a, x, y, w)
            lam_sum = lam_sum + lam
    return total + (1 - lam_sum) * base0(x, y, w0)


# ------------------------------------------------------------------- Monte Carlo helpers


_CHUNK = 8192  # trials per chunk (part of the stream definition)


def simulate(kind: str, x: Any, y: Any, m: int, n: int, n_trials: int, *, seed: int = 0,
             **kw: Any) -> np.ndarray:
    """``n_trials`` seeded replicas of a hybrid estimator for one pair (NumPy, chunked).

    ``kind``: ``"trig"``, ``"pos"``, ``"cexp"`` (``a=``), ``"angular"`` / ``"angular-shared"``,
    ``"gauss"`` / ``"gauss-shared"`` / ``"gauss-lambda"`` (``sigma=``, ``r=``, optional
    ``allow_lambda_above_one=``), ``"angular-lambda"``.  Real part returned (the CE estimator's
    real part is ``Re`` of eq 16; ``part="complex"`` returns it complex).  Same seed, same numbers.

    Parameters
    ----------
    kind : str
        The estimator (above); ``-shared`` variants use the same projections for both bases.
    x, y : array_like
        Shape (d,): the pair.
    m : int
        Random features of each base estimator, ``>= 1``.
    n : int
        Random features of the lambda-estimator, ``>= 1`` (drawn, unused by the base-only kinds).
    n_trials : int
        Replicas, ``>= 1``.
    seed : int, optional
        Seed of the ``numpy.random.SeedSequence`` (default 0); draws come in chunks of 8192 trials.
    **kw
        The estimator's own arguments: ``a`` (``"cexp"``), ``part`` (``"real"`` or ``"complex"``),
        ``sigma``, ``r``, ``allow_lambda_above_one`` (the Gaussian kinds).

    Returns
    -------
    numpy.ndarray
        Shape (n_trials,): the replicas.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, ``m``, ``n`` or ``n_trials`` is not a positive integer, or as the
        estimator.

    References
    ----------
    HRF eq (2), (3), (12), (16), (19), appendix F eq (69).

    Examples
    --------
    >>> a = simulate("pos", [0.3, -0.2], [0.1, 0.4], 4, 1, 5, seed=0)
    >>> a.shape, bool(np.array_equal(a, simulate("pos", [0.3, -0.2], [0.1, 0.4], 4, 1, 5, seed=0)))
    ((5,), True)
    """
    x, y = _vec(x, "x"), _vec(y, "y")
    m = validate.positive_int(m, "m")
    n = validate.positive_int(n, "n")
    n_trials = validate.positive_int(n_trials, "n_trials")
    d = x.size
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    outs = []
    for start in range(0, n_trials, _CHUNK):
        k = min(_CHUNK, n_trials - start)
        w1 = rng.standard_normal((k, m, d))
        w2 = rng.standard_normal((k, m, d))
        tau = rng.standard_normal((k, n, d))
        if kind == "trig":
            v = sm_trig(x, y, w1)
        elif kind == "pos":
            v = sm_pos(x, y, w1)
        elif kind == "cexp":
            v = sm_cexp(kw["a"], x, y, w1)
            if kw.get("part", "real") == "real":
                v = np.real(v)
        elif kind in ("angular", "angular-shared"):
            v = angular_hybrid(x, y, w1, w1 if kind.endswith("shared") else w2, tau)
        elif kind in ("gauss", "gauss-shared"):
            v = normalized_gauss_hybrid(x, y, w1, w1 if kind.endswith("shared") else w2, tau, kw["sigma"], kw["r"],
                                        allow_lambda_above_one=kw.get("allow_lambda_above_one", False))
        elif kind == "angular-lambda":
            v = angular_lambda(x, y, tau)
        elif kind == "gauss-lambda":
            v = normalized_gauss_lambda(x, y, tau, kw["sigma"], kw["r"],
                                        allow_lambda_above_one=kw.get("allow_lambda_above_one", False))
        else:
            raise ValueError(f"unknown estimator kind {kind!r}")
        outs.append(v)
    return np.concatenate(outs)


def mse_estimate(kind: str, x: Any, y: Any, m: int, n: int, n_trials: int, *, seed: int = 0,
                 target: float | None = None, **kw: Any) -> Estimate:
    """Monte Carlo MSE of a hybrid estimator about ``SM(x, y)`` (or ``target``), with SE.

    Uses :func:`rfcheck.stats.estimate_mse` (sample SE with the tail diagnostic).

    Parameters
    ----------
    kind : str
        The estimator (as :func:`simulate`).
    x, y : array_like
        Shape (d,): the pair.
    m : int
        Random features of each base estimator.
    n : int
        Random features of the lambda-estimator.
    n_trials : int
        Replicas.
    seed : int, optional
        Seed (default 0).
    target : float, optional
        The value the MSE is about (default ``SM(x, y) = exp(x^T y)``).
    **kw
        Passed to :func:`simulate`.

    Returns
    -------
    rfcheck.stats.Estimate
        The MSE ``E(estimate - target)^2`` with its standard error and tail diagnostic.

    Raises
    ------
    ValueError
        As :func:`simulate`.

    References
    ----------
    HRF Lemma 2.2, Thm 3.1 (the MSEs this estimates).

    Examples
    --------
    >>> est = mse_estimate("trig", [0.3, -0.2], [0.1, 0.4], 8, 1, 20_000, seed=0)
    >>> est.n, est.trustworthy, bool(0 < est.value < 0.02)
    (20000, True, True)
    """
    x, y = _vec(x, "x"), _vec(y, "y")
    t = float(np.exp(x @ y)) if target is None else float(target)
    return estimate_mse(simulate(kind, x, y, m, n, n_trials, seed=seed, **kw), t)

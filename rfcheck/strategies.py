"""Hypothesis strategies for random-feature tests: input pairs and couplings.

Pairs are drawn where estimators are stressed -- norm-controlled, on a sphere, from an
anisotropic Gaussian, with very different norms, at a given angle -- and come back as a
tuple ``(x, y)`` of float64 vectors.  Requires ``hypothesis`` (the ``test`` extra).

>>> from hypothesis import given
>>> from rfcheck import strategies as rst
>>> @given(rst.sphere_pairs(d=8, radius=0.5))
... def test_my_estimator(pair):
...     x, y = pair
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

__all__ = [
    "anisotropic_pairs",
    "couplings",
    "heterogeneous_pairs",
    "norm_controlled_pairs",
    "pairs",
    "pairs_at_angle",
    "sphere_pairs",
]

_SEEDS = st.integers(0, 2**32 - 1)


def _check_d(d: int) -> None:
    if not (isinstance(d, int) and d >= 1):
        raise ValueError(f"d must be a positive integer; got {d!r}")


def _unit(rng: np.random.Generator, d: int) -> np.ndarray:
    v = rng.standard_normal(d)
    n = np.linalg.norm(v)
    while n == 0:  # pragma: no cover - probability zero
        v = rng.standard_normal(d)
        n = np.linalg.norm(v)
    return v / n


def norm_controlled_pairs(d: int, max_norm: float = 1.0, min_norm: float = 0.0) -> st.SearchStrategy:
    """Independent uniform directions with norms in ``[min_norm, max_norm]`` (edges included).

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    max_norm : float, default 1.0
        Largest norm, finite.
    min_norm : float, default 0.0
        Smallest norm, ``0 <= min_norm <= max_norm``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of pairs ``(x, y)``, float64 vectors of shape (d,), each norm drawn from the range
        (its ends drawn with high probability).

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer, or not ``0 <= min_norm <= max_norm < inf``.
    """
    _check_d(d)
    if not 0 <= min_norm <= max_norm or not math.isfinite(max_norm):
        raise ValueError(f"need 0 <= min_norm <= max_norm < inf; got {min_norm}, {max_norm}")
    norms = st.one_of(st.sampled_from([min_norm, max_norm]), st.floats(min_norm, max_norm))
    return st.tuples(_SEEDS, norms, norms).map(
        lambda t: _pair_from(np.random.default_rng(t[0]), d, t[1], t[2]))


def _pair_from(rng: np.random.Generator, d: int, rx: float, ry: float) -> tuple[np.ndarray, np.ndarray]:
    return rx * _unit(rng, d), ry * _unit(rng, d)


def sphere_pairs(d: int, radius: float = 1.0) -> st.SearchStrategy:
    """Both points uniform on the sphere of radius ``radius``.

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    radius : float, default 1.0
        The norm of both points, finite and >= 0.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of pairs ``(x, y)`` of float64 vectors of shape (d,) with ``|x| = |y| = radius``.
    """
    return norm_controlled_pairs(d, radius, radius)


def anisotropic_pairs(d: int, spectrum: tuple[float, ...] | None = None, scale: float = 0.5) -> st.SearchStrategy:
    """``x, y ~ N(0, scale^2 Q diag(spectrum) Q^T / d)`` with a random rotation ``Q``;
    ``spectrum`` defaults to a geometric decay over two decades (condition number 100).

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    spectrum : tuple of float, optional
        The ``d`` eigenvalues of the covariance (before ``scale^2 / d``), each >= 0; default
        ``geomspace(1, 1e-2, d)``.
    scale : float, default 0.5
        Overall scale: ``E|x|^2 = scale^2 mean(spectrum)``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of pairs ``(x, y)``, independent float64 vectors of shape (d,).

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer, or ``spectrum`` is not ``d`` non-negative numbers.
    """
    _check_d(d)
    lam = np.geomspace(1.0, 1e-2, d) if spectrum is None else np.asarray(spectrum, dtype=float)
    if lam.shape != (d,) or np.any(lam < 0):
        raise ValueError(f"spectrum must be {d} non-negative numbers")

    def make(seed: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        q, r = np.linalg.qr(rng.standard_normal((d, d)))
        q *= np.sign(np.diag(r))
        root = q * np.sqrt(lam) * scale / math.sqrt(d)
        return root @ rng.standard_normal(d), root @ rng.standard_normal(d)

    return _SEEDS.map(make)


def heterogeneous_pairs(d: int, max_norm: float = 1.0, ratio: float = 100.0) -> st.SearchStrategy:
    """Pairs whose norms differ by a factor up to ``ratio`` (one point near the origin).

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    max_norm : float, default 1.0
        The norm of ``x``.
    ratio : float, default 100.0
        Largest ``|x| / |y|``, >= 1 (``|y| = max_norm exp(-t)``, ``t`` in ``[0, log ratio]``).

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of pairs ``(x, y)`` of float64 vectors of shape (d,) in independent uniform directions.

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer, or ``ratio < 1``.
    """
    _check_d(d)
    if ratio < 1:
        raise ValueError(f"ratio must be >= 1; got {ratio}")
    return st.tuples(_SEEDS, st.floats(0.0, math.log(ratio))).map(
        lambda t: _pair_from(np.random.default_rng(t[0]), d, max_norm, max_norm * math.exp(-t[1])))


def pairs_at_angle(d: int, theta: float, rx: float = 1.0, ry: float = 1.0) -> st.SearchStrategy:
    """Random orientation, fixed angle ``theta`` in [0, pi] between ``x`` and ``y``.

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    theta : float
        The angle between ``x`` and ``y``, radians in ``[0, pi]`` (0 or pi when ``d = 1``).
    rx, ry : float, default 1.0
        The norms of ``x`` and ``y``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of pairs ``(x, y)`` of float64 vectors of shape (d,), the direction of ``x`` uniform.

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer, ``theta`` is outside ``[0, pi]``, or ``d = 1`` and
        ``theta`` is neither 0 nor pi.
    """
    _check_d(d)
    if not 0 <= theta <= math.pi:
        raise ValueError(f"theta must be in [0, pi]; got {theta}")
    if d == 1 and theta not in (0.0, math.pi):
        raise ValueError("in d = 1 the angle is 0 or pi")

    def make(seed: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        u = _unit(rng, d)
        if d == 1:
            return rx * u, ry * u * math.cos(theta)
        v = rng.standard_normal(d)
        v -= (v @ u) * u
        v /= np.linalg.norm(v)
        return rx * u, ry * (math.cos(theta) * u + math.sin(theta) * v)

    return _SEEDS.map(make)


def pairs(d: int, max_norm: float = 1.0) -> st.SearchStrategy:
    """Any of the above (the default for property tests).

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    max_norm : float, default 1.0
        The largest norm (or scale) passed to each strategy.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of pairs ``(x, y)`` of float64 vectors of shape (d,), drawn from one of
        :func:`norm_controlled_pairs`, :func:`sphere_pairs`, :func:`anisotropic_pairs`,
        :func:`heterogeneous_pairs` and :func:`pairs_at_angle`.
    """
    return st.one_of(norm_controlled_pairs(d, max_norm), sphere_pairs(d, max_norm),
                     anisotropic_pairs(d, scale=max_norm), heterogeneous_pairs(d, max_norm),
                     st.floats(0.0, math.pi).flatmap(lambda t: pairs_at_angle(d, t, max_norm, max_norm)))


def couplings(names: tuple[str, ...] | None = None) -> st.SearchStrategy:
    """Names of built-in couplings (default: every registered coupling whose rows are exactly
    ``N(0, I_d)`` -- not the HD-product ones, which are biased by design and ensemble-only).

    Parameters
    ----------
    names : tuple of str, optional
        The names to draw from; default every registered coupling with exact ``N(0, I_d)`` rows.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of coupling names (keys of ``rfcheck.engine.couplings.COUPLINGS``).
    """
    from rfcheck.engine.couplings import COUPLINGS

    exact = sorted(n for n, c in COUPLINGS.items() if c.exact_marginals)
    return st.sampled_from(exact if names is None else list(names))

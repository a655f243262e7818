"""Exact target kernels (vectorised over pairs), with log-space versions.

References
----------
CRT sec 2.1: Gaussian kernel ``exp(-|x - y|^2 / 2)`` and softmax kernel ``exp(x^T y) =
exp(|x|^2/2) K(x, y) exp(|y|^2/2)``.
"""

from __future__ import annotations

import numpy as np

from rfcheck import validate

__all__ = ["gaussian_kernel", "log_gaussian_kernel", "log_softmax_kernel", "softmax_kernel"]


def log_gaussian_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``-|x - y|^2 / 2`` for pairs ``x[i], y[i]`` (shape (d,) or (P, d)).

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite, equal shapes.

    Returns
    -------
    numpy.ndarray
        Shape (P,): ``log K(x[i], y[i])`` of the Gaussian kernel.

    Raises
    ------
    ValueError
        If the inputs are not valid pairs (:func:`rfcheck.validate.pairs`).

    References
    ----------
    Chefs' Random Tables, sec 2.1 (Gaussian kernel).

    Examples
    --------
    >>> log_gaussian_kernel([0.0, 0.0], [1.0, 1.0])
    array([-1.])
    """
    xa, ya = validate.pairs(x, y)
    return -0.5 * np.sum((xa - ya) ** 2, axis=1)


_LOG_TINY = float(np.log(np.finfo(float).tiny))  # -708.40: log of the smallest normal float64


def _exp_in_range(lk: np.ndarray, name: str) -> np.ndarray:
    """``exp(lk)``, refusing (``ValueError``) values that leave the float64 range or fall below
    its normal range (where they would be inf, or lose digits and round to 0)."""
    if np.any(lk > 709.78):
        raise ValueError(f"{name} exceeds the float64 range; use log_{name}")
    if np.any(lk < _LOG_TINY):
        raise ValueError(f"{name} is below the float64 normal range (log value {np.min(lk):.1f} < "
                         f"{_LOG_TINY:.1f}); use log_{name}")
    return np.exp(lk)


def gaussian_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``exp(-|x - y|^2 / 2)``; raises ``ValueError`` where it falls below the float64 normal
    range (``|x - y|^2 > 1416.8``), instead of losing digits or returning 0 (use the log version).

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite, equal shapes.

    Returns
    -------
    numpy.ndarray
        Shape (P,): ``K(x[i], y[i])``, in (0, 1].

    Raises
    ------
    ValueError
        If the inputs are not valid pairs, or a value is below the float64 normal range.

    References
    ----------
    Chefs' Random Tables, sec 2.1 (Gaussian kernel).

    Examples
    --------
    >>> gaussian_kernel([0.0], [0.0])
    array([1.])
    """
    return _exp_in_range(log_gaussian_kernel(x, y), "gaussian_kernel")


def log_softmax_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x^T y`` for pairs.

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite, equal shapes.

    Returns
    -------
    numpy.ndarray
        Shape (P,): ``log SM(x[i], y[i]) = x[i]^T y[i]``.

    Raises
    ------
    ValueError
        If the inputs are not valid pairs (:func:`rfcheck.validate.pairs`).

    References
    ----------
    Chefs' Random Tables, sec 2.1 (softmax kernel).

    Examples
    --------
    >>> log_softmax_kernel([1.0, 2.0], [3.0, 4.0])
    array([11.])
    """
    xa, ya = validate.pairs(x, y)
    return np.sum(xa * ya, axis=1)


def softmax_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``exp(x^T y)``; raises ``ValueError`` instead of overflowing, or of underflowing below the
    float64 normal range (use the log version).

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite, equal shapes.

    Returns
    -------
    numpy.ndarray
        Shape (P,): ``SM(x[i], y[i]) = exp(x[i]^T y[i])``.

    Raises
    ------
    ValueError
        If the inputs are not valid pairs, or ``x^T y`` leaves the float64 normal range
        (``> 709.78`` or ``< -708.40``).

    References
    ----------
    Chefs' Random Tables, sec 2.1 (softmax kernel).

    Examples
    --------
    >>> softmax_kernel([0.0], [1.0])
    array([1.])
    """
    return _exp_in_range(log_softmax_kernel(x, y), "softmax_kernel")

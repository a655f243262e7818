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
    """``-|x - y|^2 / 2`` for pairs ``x[i], y[i]`` (shape (d,) or (P, d))."""
    xa, ya = validate.pairs(x, y)
    return -0.5 * np.sum((xa - ya) ** 2, axis=1)


def gaussian_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``exp(-|x - y|^2 / 2)`` (never overflows; underflows to 0 only below e^-745)."""
    return np.exp(log_gaussian_kernel(x, y))


def log_softmax_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x^T y`` for pairs."""
    xa, ya = validate.pairs(x, y)
    return np.sum(xa * ya, axis=1)


def softmax_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``exp(x^T y)``; raises ``ValueError`` instead of overflowing (use the log version)."""
    lk = log_softmax_kernel(x, y)
    if np.any(lk > 709.78):
        raise ValueError("softmax kernel exceeds the float64 range; use log_softmax_kernel")
    return np.exp(lk)

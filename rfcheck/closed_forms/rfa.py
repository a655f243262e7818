"""Random Feature Attention (RFA, seed 002): the kernel behind the trigonometric features.

The summary prints, with ``w_i ~ N(0, sigma^2 I_d)`` iid and
``phi(x) = D^{-1/2} [sin(w_i.x), cos(w_i.x)]_i``,

    exp(x.y / sigma^2) ~= exp((|x|^2 + |y|^2) / (2 sigma^2)) phi(x).phi(y)   (D -> inf).

Since ``phi(x).phi(y) = D^{-1} sum_i cos(w_i.(x - y))``, its limit is the characteristic
function of ``w``:  ``E cos(w.delta) = exp(-s^2 |delta|^2 / 2)`` for ``w ~ N(0, s^2 I)``.
The right-hand side therefore tends to

    exp((|x|^2 + |y|^2)/(2 sigma^2) - s^2 |x - y|^2 / 2),

which equals ``exp(x.y/sigma^2)`` for all ``x, y`` iff ``s^2 = 1/sigma^2``: the identity
holds with ``w ~ N(0, sigma^{-2} I_d)`` (Rahimi & Recht's Gaussian kernel
``exp(-|x-y|^2/(2 sigma^2))`` has spectral density ``N(0, sigma^{-2} I)``), and with the
printed ``N(0, sigma^2 I_d)`` only at ``sigma = 1``.

References
----------
Peng et al., *Random Feature Attention*, ICLR 2021 (summary in seed 002, "Background:
Random Feature Methods"); Rahimi & Recht (2007).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfcheck.backends import formula

__all__ = ["check_sigma", "log_kernel_limit", "log_rff_limit", "trig_features"]


def check_sigma(sigma: Any, *rest: Any) -> None:
    """``ValueError`` unless the scale ``sigma`` is finite and > 0."""
    a = np.asarray(sigma, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError("sigma must be finite and > 0")
    for r in rest:
        if not np.all(np.isfinite(np.asarray(r, dtype=float))):
            raise ValueError("norms must be finite (no NaN/inf)")
        if np.any(np.asarray(r, dtype=float) < 0):
            raise ValueError("squared norms must be >= 0")


@formula(check=check_sigma)
def log_rff_limit(ctx: Any, sigma: Any, sq_x: Any, sq_y: Any, sq_diff: Any, w_var: Any) -> Any:
    """``log lim_{D->inf} exp((|x|^2+|y|^2)/(2 sigma^2)) phi(x).phi(y)`` when
    ``w ~ N(0, w_var I)``:  ``(|x|^2 + |y|^2)/(2 sigma^2) - w_var |x - y|^2 / 2``.

    The printed RFA identity uses ``w_var = sigma^2``; the correct spectral variance is
    ``w_var = 1/sigma^2``.  RFA summary, "Background: Random Feature Methods".
    """
    return (sq_x + sq_y) / (2 * sigma**2) - w_var * sq_diff / 2


@formula(check=check_sigma)
def log_kernel_limit(ctx: Any, sigma: Any, sq_x: Any, sq_y: Any, sq_diff: Any) -> Any:
    """``x.y / sigma^2`` written with the norms (the log of the target ``exp(x.y/sigma^2)``):
    ``(|x|^2 + |y|^2 - |x - y|^2) / (2 sigma^2)``."""
    return (sq_x + sq_y - sq_diff) / (2 * sigma**2)


def trig_features(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """RFA feature map ``phi(x) = D^{-1/2} [sin(w_1.x) .. sin(w_D.x), cos(w_1.x) .. cos(w_D.x)]``.

    ``x``: ``(n, d)``; ``w``: ``(D, d)`` (the printed summary draws ``w ~ N(0, sigma^2 I)``;
    :func:`log_rff_limit` shows ``N(0, sigma^{-2} I)`` is what the kernel needs).
    Returns ``(n, 2D)``.
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    w = np.atleast_2d(np.asarray(w, dtype=float))
    if x.shape[1] != w.shape[1]:
        raise ValueError(f"x is in R^{x.shape[1]} but w in R^{w.shape[1]}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(w))):
        raise ValueError("x and w must be finite (no NaN/inf)")
    proj = x @ w.T
    return np.concatenate([np.sin(proj), np.cos(proj)], axis=1) / np.sqrt(w.shape[0])

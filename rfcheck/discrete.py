"""Monte Carlo for discretely-induced random features (CRT sec 3.2): PoisRF, GeomRF and their
positive variants, with a seeded, vectorised NumPy sampler.

The projections ``w`` have i.i.d. coordinates ``w_l ~ p_k`` (Poisson(lambda) or geometric
``p (1-p)^k`` on {0, 1, ...}); the feature product of eq (10) is evaluated in log-space
with its sign, ``f(w, x) f(w, y) = e^{-(|x|^2+|y|^2)/2} prod_l (x_l y_l)^{w_l} / (w_l! p_{w_l})``,
so that large counts never overflow.  Same seed, same numbers: draws come from one
``numpy.random.Generator`` in fixed-size chunks.

References
----------
CRT sec 3.2, eq (9)-(10), sec 3.2.1-3.2.3; Thm 3.4-3.5.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sc

from rfcheck import validate

__all__ = ["DISTRIBUTIONS", "log_pk", "product_log_abs_sign", "sample_omega", "simulate_dirf"]

#: the distributions of the projections' entries: PoisRF and GeomRF (CRT sec 3.2)
DISTRIBUTIONS = ("poisson", "geometric")
_CHUNK = 8192


def _check_dist(dist: str, param: float) -> float:
    if dist not in DISTRIBUTIONS:
        raise ValueError(f"dist must be one of {DISTRIBUTIONS}; got {dist!r}")
    param = validate.finite_real(param, "lambda" if dist == "poisson" else "p")
    if dist == "poisson" and not param > 0:
        raise ValueError("PoisRF needs lambda > 0 (CRT sec 3.2.1)")
    if dist == "geometric" and not 0 < param < 1:
        raise ValueError("GeomRF needs 0 < p < 1 (CRT sec 3.2.2)")
    return param


def log_pk(dist: str, param: float, k: np.ndarray) -> np.ndarray:
    """``log p_k`` of the discrete distribution (float64, vectorised over ``k``)."""
    param = _check_dist(dist, param)
    k = np.asarray(k)
    if dist == "poisson":
        return -param + k * np.log(param) - sc.gammaln(k + 1)
    return np.log(param) + k * np.log1p(-param)


def sample_omega(dist: str, param: float, size: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """i.i.d. draws of ``w_l`` with ``P(w_l = k) = p_k`` (int64 array of shape ``size``)."""
    param = _check_dist(dist, param)
    if dist == "poisson":
        return rng.poisson(param, size=size)
    return rng.geometric(param, size=size) - 1  # numpy's geometric counts trials (support 1, 2, ...)


def product_log_abs_sign(omega: np.ndarray, x: np.ndarray, y: np.ndarray, dist: str,
                         param: float) -> tuple[np.ndarray, np.ndarray]:
    """``(log|f(w,x) f(w,y)|, sign)`` of the eq (10) feature product, over the last axis of ``w``.

    ``0^0 = 1``: coordinates with ``x_l y_l = 0`` contribute only when ``w_l = 0``.
    """
    a = x * y
    with np.errstate(divide="ignore"):
        la = np.log(np.abs(a))
    k = omega
    term = np.where(k == 0, 0.0, k * la) - sc.gammaln(k + 1) - log_pk(dist, param, k)
    logabs = np.sum(term, axis=-1) - (x @ x + y @ y) / 2
    neg = np.sum(np.where(a < 0, k % 2, 0), axis=-1) % 2
    return logabs, np.where(neg == 1, -1.0, 1.0)


def simulate_dirf(x: Any, y: Any, dist: str, param: float, m: int, n_trials: int, seed: int, *,
                  shift: Any = None) -> np.ndarray:
    """``n_trials`` independent estimates ``K_hat = (1/m) sum_j f(w_j, x) f(w_j, y)`` of ``K(x, y)``.

    ``shift``: the vector ``c`` of sec 3.2.3 (PoisRF+ / GeomRF+): the features are applied
    to ``x - c`` and ``y - c`` (the kernel is unchanged).  Seeded and reproducible.
    """
    xa = validate.finite_array(x, "x").ravel()
    ya = validate.finite_array(y, "y").ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same shape; got {xa.shape} and {ya.shape}")
    if shift is not None:
        c = validate.finite_array(shift, "shift").ravel()
        xa, ya = xa - c, ya - c
    m = validate.positive_int(m, "M")
    n_trials = validate.positive_int(n_trials, "n_trials")
    param = _check_dist(dist, param)
    rng = np.random.default_rng(seed)
    out = np.empty(n_trials)
    per = max(1, _CHUNK // m)
    for start in range(0, n_trials, per):
        n = min(per, n_trials - start)
        w = sample_omega(dist, param, (n, m, xa.size), rng)
        la, sg = product_log_abs_sign(w, xa, ya, dist, param)
        out[start:start + n] = np.mean(sg * np.exp(la), axis=1)
    return out

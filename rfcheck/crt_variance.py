"""The variance comparison of CRT sec 5.1 / Figure 2: log-variances of eight RF mechanisms
over all pairs of two sampled sets, with parameters chosen from the set statistics.

For each of ``n_sets`` pairs of sets ``{x_i}, {y_j}`` (``L`` points each, ``d = 64``) the
one-sample variance of every pair ``(x_i, y_j)`` is evaluated from the closed forms of
``rfcheck.closed_forms.crt`` (eq (6), (11), (13)); each method's parameter comes from the
set statistics (eq (8), (12), (14)) as the paper prescribes: GERF by the two L-BFGS-B
routines (s = -1, +1; 50 iterations), OPRF by Thm 3.3, PoisRF by lambda*, GeomRF by
Brent's method on p (100 iterations); PoisRF+ / GeomRF+ use the shift ``c`` of sec 3.2.3
with ``eps = 1e-8``.  Real-valued mechanisms have their variance divided by 2 (the M = 2
convention of appendix 9.10.1); TrigRF and GERF count as complex.

Regimes: ``normal`` (N(0, sigma^2 I)), ``sphere`` (uniform on sigma S^{d-1}),
``heterogen`` (x ~ N(0, sigma^2 I), y ~ N(sigma 1, sigma^2 I)) and ``digits``: the 8x8
handwritten digits shipped with scikit-learn (pixel values / 16, scaled by sigma) as an
offline stand-in for the paper's MNIST resized to 8x8 -- *not* the paper's data.

References
----------
CRT sec 5.1, Figure 2, appendix 9.10.1.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from rfcheck.closed_forms import crt as cf

__all__ = ["COMPLEX", "METHODS", "REGIMES", "log_variances", "mc_crosscheck", "sample_sets", "summary"]

#: the eight mechanisms of CRT Figure 2, in the figure's order
METHODS = ("TrigRF", "PosRF", "GERF", "PoisRF", "GeomRF", "OPRF", "PoisRF+", "GeomRF+")
#: the mechanisms whose features are complex (their variance is of the real part)
COMPLEX = ("TrigRF", "GERF")
#: the data regimes of CRT Figure 2 (``"digits"``: scikit-learn's 8x8 digits standing in for MNIST)
REGIMES = ("normal", "sphere", "heterogen", "digits")
_LOG2 = math.log(2.0)


@lru_cache(maxsize=1)
def _digits() -> np.ndarray:
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ValueError("the 'digits' regime needs scikit-learn (pip install rfcheck[data])") from exc
    return load_digits().data / 16.0


def sample_sets(regime: str, sigma: float, L: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two sets of ``L`` points in R^d drawn in one of the regimes of sec 5.1."""
    if not sigma > 0:
        raise ValueError("sigma must be > 0")
    if regime == "normal":
        return rng.normal(size=(L, d)) * sigma, rng.normal(size=(L, d)) * sigma
    if regime == "sphere":
        x, y = rng.normal(size=(L, d)), rng.normal(size=(L, d))
        return (sigma * x / np.linalg.norm(x, axis=1, keepdims=True),
                sigma * y / np.linalg.norm(y, axis=1, keepdims=True))
    if regime == "heterogen":
        return rng.normal(size=(L, d)) * sigma, rng.normal(size=(L, d)) * sigma + sigma
    if regime == "digits":
        data = _digits()
        if d != data.shape[1]:
            raise ValueError(f"the digits regime has d = {data.shape[1]}")
        return (sigma * data[rng.integers(0, len(data), L)], sigma * data[rng.integers(0, len(data), L)])
    raise ValueError(f"regime must be one of {REGIMES}; got {regime!r}")


def _geom_all_pairs(xs: np.ndarray, ys: np.ndarray, xy: np.ndarray, sd: np.ndarray, p: float) -> np.ndarray:
    out = np.empty(xy.shape)
    step = max(1, 4_000_000 // (ys.size))
    for i in range(0, len(xs), step):
        ab = np.abs(xs[i:i + step, None, :] * ys[None, :, :])
        out[i:i + step] = cf.geometric_log_variance(ab, xy[i:i + step], sd[i:i + step], p)
    return out


def log_variances(x: np.ndarray, y: np.ndarray, methods: tuple[str, ...] = METHODS) -> dict[str, Any]:
    """log-variance of every pair (x_i, y_j) for each method (arrays of shape (L, L')), and
    the parameters chosen from the set statistics (key ``"params"``)."""
    d = x.shape[1]
    sx, sy = np.sum(x * x, 1)[:, None], np.sum(y * y, 1)[None, :]
    xy = x @ y.T
    sq_sum = np.maximum(sx + sy + 2 * xy, 0.0)
    sq_diff = np.maximum(sx + sy - 2 * xy, 0.0)
    stats = (np.broadcast_to(sx, xy.shape), np.broadcast_to(sy, xy.shape), sq_sum, sq_diff, d)
    st = cf.set_stats(x, y)
    out: dict[str, Any] = {"params": {}}
    for m in methods:
        if m == "TrigRF":
            out[m] = cf.trig_log_variance(*stats)
        elif m == "PosRF":
            out[m] = cf.positive_log_variance(*stats) - _LOG2
        elif m == "GERF":
            opt = cf.gerf_optimize(st["sq_x"], st["sq_y"], st["sq_sum"], st["sq_diff"], d)
            out["params"][m] = (opt["a"], opt["s"])
            out[m] = cf.gerf_log_variance(*stats, opt["a"], opt["s"])
        elif m == "OPRF":
            a = float(cf.oprf_a_star(st["sq_sum"], d)) if st["sq_sum"] > 0 else 0.0
            out["params"][m] = a
            out[m] = cf.gerf_log_variance(*stats, a, 1) - _LOG2
        elif m in ("PoisRF", "PoisRF+", "GeomRF", "GeomRF+"):
            xs, ys = x, y
            if m.endswith("+"):
                c = cf.positive_shift(x, y)
                xs, ys = x - c, y - c
            sts = cf.set_stats(xs, ys)
            xy_s = xs @ ys.T
            if m.startswith("Pois"):
                lam = float(cf.poisson_lambda_star(sts["q"], d))
                out["params"][m] = lam
                q = (xs * xs) @ (ys * ys).T
                out[m] = cf.poisson_log_variance(q, xy_s, sq_diff, d, lam) - _LOG2
            else:
                p, _ = cf.geometric_p_star(sts["abs_prod"], sts["xy"])
                out["params"][m] = p
                out[m] = _geom_all_pairs(xs, ys, xy_s, sq_diff, p) - _LOG2
        else:
            raise ValueError(f"unknown method {m!r}; one of {METHODS}")
    return out


@lru_cache(maxsize=64)
def summary(regime: str, sigma: float, L: int = 1024, n_sets: int = 5, seed: int = 0, d: int = 64,
            methods: tuple[str, ...] = METHODS) -> dict[str, dict[str, float]]:
    """Mean and std of the log-variance over all pairs and sets, per method (memoised).

    Also ``set_means``: the per-set means (for a standard error of differences between
    methods over the ``n_sets`` independent samples).  Pairs with zero variance (log = -inf,
    e.g. two identical digits images, where K = 1 and TrigRF/GERF are exact) are left out
    of the means and counted in ``n_zero_variance``.
    """
    rng = np.random.default_rng([seed, REGIMES.index(regime), round(sigma * 1e6)])
    per: dict[str, list[np.ndarray]] = {m: [] for m in methods}
    for _ in range(n_sets):
        x, y = sample_sets(regime, sigma, L, d, rng)
        lv = log_variances(x, y, methods)
        for m in methods:
            per[m].append(np.asarray(lv[m], dtype=float).ravel())
    res = {}
    for m in methods:
        allv = np.concatenate(per[m])
        ok = np.isfinite(allv)  # zero variance (identical digits images: K = 1) gives log 0 = -inf
        res[m] = {"mean": float(np.mean(allv[ok])), "std": float(np.std(allv[ok])),
                  "set_means": tuple(float(np.mean(v[np.isfinite(v)])) for v in per[m]),
                  "n_pairs": int(allv.size), "n_zero_variance": int(np.sum(~ok))}
    return res


def _mc_samples(m: str, x: np.ndarray, y: np.ndarray, params: dict[str, Any], c: np.ndarray | None,
                n_trials: int, seed: int) -> np.ndarray:
    """One-feature estimates (M = 1) of ``K(x, y)`` by ``m`` with the figure's parameters."""
    from rfcheck import features
    from rfcheck.engine import discrete_engine, montecarlo

    if m in ("PoisRF", "PoisRF+", "GeomRF", "GeomRF+"):
        dist = "poisson" if m.startswith("Pois") else "geometric"
        return discrete_engine.simulate(x, y, dist, params[m], 1, n_trials, seed=seed,
                                        shift=c if m.endswith("+") else None)[0]
    if m == "TrigRF":
        prod = features.trig_product(x, y)
    elif m == "PosRF":
        prod = features.positive_product(x, y)
    elif m == "GERF":
        a, sgn = params[m]
        prod = features.gerf_product(x, y, a, sgn)
    else:  # OPRF
        prod = features.oprf_product(x, y, params[m])
    return montecarlo.simulate(prod, 1, n_trials, coupling="iid", seed=seed)[0]


def mc_crosscheck(regime: str, sigma: float, *, L: int = 16, n_pairs: int = 3, n_trials: int = 200_000,
                  seed: int = 0, d: int = 64, methods: tuple[str, ...] = METHODS) -> list[dict[str, Any]]:
    """Monte Carlo cross-check of the Figure 2 closed-form log-variances (CRT sec 5.1).

    Draws one pair of sets of ``L`` points in ``regime`` at scale ``sigma``, chooses every
    method's parameters from the set statistics exactly as :func:`log_variances` does, and
    for ``n_pairs`` pairs ``(x_i, y_i)`` estimates the one-feature variance ``E(K_hat - K)^2``
    from ``n_trials`` Numba-engine draws (:func:`rfcheck.stats.estimate_mse`; PoisRF/GeomRF on
    :mod:`rfcheck.engine.discrete_engine`).  Real-valued methods are compared after undoing the
    M = 2 convention (the closed form plus ``log 2``).  Returns one row per (method, pair):
    ``closed_form`` and ``mc`` log-variances, ``se_log`` (delta method), ``z``, and
    ``trustworthy`` (the tail diagnostic of the squared errors; False means the variance is
    not estimable at this ``n_trials`` and the row decides nothing).
    """
    from rfcheck import stats

    rng = np.random.default_rng([seed, REGIMES.index(regime), round(sigma * 1e6), 7])
    x, y = sample_sets(regime, sigma, L, d, rng)
    lv = log_variances(x, y, methods)
    c = cf.positive_shift(x, y) if any(m.endswith("+") for m in methods) else None
    rows = []
    for k in range(min(n_pairs, L)):
        xi, yi = x[k], y[k]
        for j, m in enumerate(methods):
            cf_log = float(lv[m][k, k]) + (0.0 if m in COMPLEX else _LOG2)
            samples = _mc_samples(m, xi, yi, lv["params"], c, n_trials, seed + 1000 * k + j)
            target = math.exp(-0.5 * float(np.sum((xi - yi) ** 2)))
            est = stats.estimate_mse(samples, target)
            ok = est.trustworthy and est.value > 0
            mc_log = math.log(est.value) if est.value > 0 else -math.inf
            se_log = est.se / est.value if est.value > 0 else math.inf
            rows.append({"method": m, "pair": k, "closed_form": cf_log, "mc": mc_log, "se_log": se_log,
                         "z": (mc_log - cf_log) / se_log if ok and se_log > 0 else math.nan,
                         "trustworthy": ok, "reason": est.reason})
    return rows

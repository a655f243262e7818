"""CRT's estimators in NumPy: the discretely-induced random features of sec 3.2 (PoisRF,
GeomRF and their positive variants) and the variance comparison of sec 5.1 / Figure 2.

Discretely-induced random features
----------------------------------
The projections ``w`` have i.i.d. coordinates ``w_l ~ p_k`` (Poisson(lambda) or geometric
``p (1-p)^k`` on {0, 1, ...}); the feature product of eq (10) is evaluated in log-space
with its sign, ``f(w, x) f(w, y) = e^{-(|x|^2+|y|^2)/2} prod_l (x_l y_l)^{w_l} / (w_l! p_{w_l})``,
so that large counts never overflow (:func:`simulate_dirf`).  Same seed, same numbers: draws
come from one ``numpy.random.Generator`` in fixed-size chunks.  The Numba engine of the same
estimator is :mod:`rfcheck.engine.discrete_engine`.

The variance comparison of Figure 2
-----------------------------------
Log-variances of eight RF mechanisms over all pairs of two sampled sets, with parameters
chosen from the set statistics.  For each of ``n_sets`` pairs of sets ``{x_i}, {y_j}`` (``L``
points each, ``d = 64``) the one-sample variance of every pair ``(x_i, y_j)`` is evaluated
from the closed forms of :mod:`rfcheck.closed_forms.crt` (eq (6), (11), (13)); each method's
parameter comes from the set statistics (eq (8), (12), (14)) as the paper prescribes: GERF by
the two L-BFGS-B routines (s = -1, +1; 50 iterations), OPRF by Thm 3.3, PoisRF by lambda*,
GeomRF by Brent's method on p (100 iterations); PoisRF+ / GeomRF+ use the shift ``c`` of
sec 3.2.3 with ``eps = 1e-8``.  Real-valued mechanisms have their variance divided by 2 (the
M = 2 convention of appendix 9.10.1); TrigRF and GERF count as complex
(:func:`log_variances`, :func:`summary`; :func:`mc_crosscheck` checks them by Monte Carlo).

Regimes: ``normal`` (N(0, sigma^2 I)), ``sphere`` (uniform on sigma S^{d-1}),
``heterogen`` (x ~ N(0, sigma^2 I), y ~ N(sigma 1, sigma^2 I)) and ``digits``: the 8x8
handwritten digits shipped with scikit-learn (pixel values / 16, scaled by sigma) as an
offline stand-in for the paper's MNIST resized to 8x8 -- *not* the paper's data.

These lived in ``rfcheck.discrete`` and ``rfcheck.crt_variance`` in version 0.1.0; those
paths still import, with a :class:`DeprecationWarning`, for one release.

References
----------
CRT sec 3.2, eq (9)-(10), sec 3.2.1-3.2.3; Thm 3.4-3.5; sec 5.1, Figure 2, appendix 9.10.1.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.special as sc

from rfcheck import validate
from rfcheck.closed_forms import crt as cf

__all__ = ["COMPLEX", "DISTRIBUTIONS", "METHODS", "REGIMES", "log_pk", "log_variances", "mc_crosscheck",
           "product_log_abs_sign", "sample_omega", "sample_sets", "simulate_dirf", "summary"]


# ------------------------------------------------------- sec 3.2: discretely-induced random features

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
    """``log p_k`` of the discrete distribution (float64, vectorised over ``k``).

    Parameters
    ----------
    dist : {"poisson", "geometric"}
        The law of the projections' entries: PoisRF (Poisson(lambda), sec 3.2.1) or GeomRF
        (``p (1-p)^k`` on {0, 1, ...}, sec 3.2.2).
    param : float
        ``lambda > 0`` (Poisson) or ``0 < p < 1`` (geometric).
    k : array_like of int
        The counts ``k >= 0``, any shape.

    Returns
    -------
    numpy.ndarray
        ``log p_k`` with the shape of ``k``: ``-lambda + k log lambda - log k!`` or ``log p + k log(1 - p)``.

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS` or ``param`` is outside its range or not finite.

    References
    ----------
    CRT sec 3.2.1-3.2.2 (the distributions ``p_k`` of PoisRF and GeomRF).

    Examples
    --------
    >>> log_pk("poisson", 1.0, np.array([0, 1, 2])).round(6).tolist()
    [-1.0, -1.0, -1.693147]
    >>> log_pk("geometric", 0.5, np.array([0, 1])).round(6).tolist()
    [-0.693147, -1.386294]
    """
    param = _check_dist(dist, param)
    k = np.asarray(k)
    if dist == "poisson":
        return -param + k * np.log(param) - sc.gammaln(k + 1)
    return np.log(param) + k * np.log1p(-param)


def sample_omega(dist: str, param: float, size: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """i.i.d. draws of ``w_l`` with ``P(w_l = k) = p_k`` (int64 array of shape ``size``).

    Parameters
    ----------
    dist : {"poisson", "geometric"}
        The law of the projections' entries: PoisRF (Poisson(lambda), sec 3.2.1) or GeomRF
        (``p (1-p)^k`` on {0, 1, ...}, sec 3.2.2).
    param : float
        ``lambda > 0`` (Poisson) or ``0 < p < 1`` (geometric).
    size : tuple of int
        The shape of the draws (e.g. ``(n_trials, m, d)``: trials, features, coordinates).
    rng : numpy.random.Generator
        The generator to draw from (the caller seeds it).

    Returns
    -------
    numpy.ndarray
        int64 counts of shape ``size`` on {0, 1, ...} (NumPy's geometric law, on {1, 2, ...},
        shifted down by one).

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS` or ``param`` is outside its range or not finite.

    References
    ----------
    CRT sec 3.2, eq (9): ``w`` with i.i.d. entries ``w_l ~ p_k``.

    Examples
    --------
    >>> w = sample_omega("geometric", 0.3, (4, 3), np.random.default_rng(0))
    >>> w.shape, w.dtype.name, bool(w.min() >= 0)
    ((4, 3), 'int64', True)
    """
    param = _check_dist(dist, param)
    if dist == "poisson":
        return rng.poisson(param, size=size)
    return rng.geometric(param, size=size) - 1  # numpy's geometric counts trials (support 1, 2, ...)


def product_log_abs_sign(omega: np.ndarray, x: np.ndarray, y: np.ndarray, dist: str,
                         param: float) -> tuple[np.ndarray, np.ndarray]:
    """``(log|f(w,x) f(w,y)|, sign)`` of the eq (10) feature product, over the last axis of ``w``.

    ``0^0 = 1``: coordinates with ``x_l y_l = 0`` contribute only when ``w_l = 0``.

    Parameters
    ----------
    omega : numpy.ndarray
        Counts of shape (..., d): one projection ``w`` per row (from :func:`sample_omega`).
    x, y : numpy.ndarray
        Shape (d,): the pair of inputs.
    dist : {"poisson", "geometric"}
        The law of the projections' entries: PoisRF (Poisson(lambda), sec 3.2.1) or GeomRF
        (``p (1-p)^k`` on {0, 1, ...}, sec 3.2.2).
    param : float
        ``lambda > 0`` (Poisson) or ``0 < p < 1`` (geometric).

    Returns
    -------
    logabs : numpy.ndarray
        Shape (...): ``log|f(w, x) f(w, y)| = -(|x|^2 + |y|^2)/2 + sum_l (w_l log|x_l y_l| - log w_l! - log p_{w_l})``.
    sign : numpy.ndarray
        Shape (...): ``+1.0`` or ``-1.0``, the sign of ``prod_l (x_l y_l)^{w_l}``.

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS` or ``param`` is outside its range or not finite.

    References
    ----------
    CRT sec 3.2, eq (10).

    Examples
    --------
    The second projection raises the negative ``x_2 y_2`` to an odd power:

    >>> la, sg = product_log_abs_sign(np.array([[1, 0], [0, 1]]), np.array([0.5, -0.5]), np.array([0.5, 0.5]),
    ...                               "poisson", 1.0)
    >>> la.round(6).tolist(), sg.tolist()
    ([0.113706, 0.113706], [1.0, -1.0])
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

    Unbiased for the Gaussian kernel ``K(x, y) = exp(-|x - y|^2/2)`` (eq 9-10).  Seeded and
    reproducible: the same arguments give the same numbers.

    Parameters
    ----------
    x, y : array_like
        The pair of inputs, the same shape (flattened to ``(d,)``).
    dist : {"poisson", "geometric"}
        The law of the projections' entries: PoisRF (Poisson(lambda), sec 3.2.1) or GeomRF
        (``p (1-p)^k`` on {0, 1, ...}, sec 3.2.2).
    param : float
        ``lambda > 0`` (Poisson) or ``0 < p < 1`` (geometric).
    m : int
        Random features per estimate (``M``), ``>= 1``.
    n_trials : int
        Independent estimates to return, ``>= 1``.
    seed : int
        Seed of the ``numpy.random.Generator`` (draws in chunks of ``8192 // m`` trials).
    shift : array_like, optional
        The vector ``c`` of sec 3.2.3 (PoisRF+ / GeomRF+): the features are applied to ``x - c`` and
        ``y - c`` (the kernel is unchanged).  Default: no shift.

    Returns
    -------
    numpy.ndarray
        Shape (n_trials,): the estimates ``K_hat``.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in shape, an input is not finite, ``m`` or ``n_trials`` is not a
        positive integer, or ``dist``/``param`` are invalid (as :func:`log_pk`).

    References
    ----------
    CRT sec 3.2, eq (9)-(10); sec 3.2.3 (the positive variants).

    Examples
    --------
    >>> x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> est = simulate_dirf(x, y, "poisson", 0.5, 4, 20_000, seed=0)
    >>> k = np.exp(-0.5 * np.sum((x - y) ** 2))
    >>> est.shape, bool(abs(est.mean() - k) < 5 * est.std() / np.sqrt(est.size))
    ((20000,), True)
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


# ----------------------------------------------------------------- sec 5.1, Figure 2: variances

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
    """Two sets of ``L`` points in R^d drawn in one of the regimes of sec 5.1.

    Parameters
    ----------
    regime : str
        One of :data:`REGIMES`: ``"normal"`` (N(0, sigma^2 I)), ``"sphere"`` (uniform on the sphere
        of radius ``sigma``), ``"heterogen"`` (x ~ N(0, sigma^2 I), y ~ N(sigma 1, sigma^2 I)) or
        ``"digits"`` (scikit-learn's 8x8 digits scaled to [0, sigma]; needs ``d = 64``).
    sigma : float
        The scale, ``> 0``.
    L : int
        Points per set.
    d : int
        Dimension.
    rng : numpy.random.Generator
        The generator to draw from.

    Returns
    -------
    x, y : numpy.ndarray
        Shape (L, d) each.

    Raises
    ------
    ValueError
        If ``sigma <= 0``, ``regime`` is unknown, ``d != 64`` for ``"digits"``, or scikit-learn is
        missing for ``"digits"``.

    References
    ----------
    CRT sec 5.1 (the data regimes of Figure 2).

    Examples
    --------
    >>> x, y = sample_sets("sphere", 2.0, 5, 3, np.random.default_rng(0))
    >>> x.shape, np.linalg.norm(x, axis=1).round(12).tolist()
    ((5, 3), [2.0, 2.0, 2.0, 2.0, 2.0])
    """
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
    the parameters chosen from the set statistics (key ``"params"``).

    Parameters
    ----------
    x : numpy.ndarray
        Shape (L, d): the first set.
    y : numpy.ndarray
        Shape (L', d): the second set.
    methods : tuple of str, optional
        Mechanisms among :data:`METHODS` (default: all eight).

    Returns
    -------
    dict
        ``{method: array (L, L')}`` of natural-log one-feature variances (real mechanisms divided by
        2, the M = 2 convention of appendix 9.10.1), and ``"params"``: ``{method: parameter}`` for the
        mechanisms that have one (GERF: ``(A, s)``, OPRF: ``A``, PoisRF: ``lambda*``, GeomRF: ``p*``).

    Raises
    ------
    ValueError
        If a method is not one of :data:`METHODS`.

    References
    ----------
    CRT sec 5.1, Figure 2; eq (6), (11), (13) (variances), (8), (12), (14) (set statistics).

    Examples
    --------
    >>> x, y = sample_sets("normal", 0.5, 4, 3, np.random.default_rng(0))
    >>> lv = log_variances(x, y, ("TrigRF", "PoisRF"))
    >>> sorted(lv), lv["TrigRF"].shape, sorted(lv["params"])
    (['PoisRF', 'TrigRF', 'params'], (4, 4), ['PoisRF'])
    """
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

    Parameters
    ----------
    regime : str
        One of :data:`REGIMES` (:func:`sample_sets`).
    sigma : float
        The data scale, ``> 0``.
    L : int, optional
        Points per set (default 1024, the paper's).
    n_sets : int, optional
        Independent pairs of sets (default 5).
    seed : int, optional
        Seed; the generator is seeded from ``(seed, regime, sigma)``.
    d : int, optional
        Dimension (default 64, the paper's).
    methods : tuple of str, optional
        Mechanisms among :data:`METHODS` (default: all eight).

    Returns
    -------
    dict
        ``{method: {"mean", "std", "set_means", "n_pairs", "n_zero_variance"}}``: the mean and standard
        deviation of the natural-log variance over the ``n_sets L^2`` pairs, the ``n_sets`` per-set
        means, the number of pairs, and how many had zero variance.

    Raises
    ------
    ValueError
        As :func:`sample_sets` and :func:`log_variances`.

    References
    ----------
    CRT sec 5.1, Figure 2.

    Examples
    --------
    >>> s = summary("normal", 0.5, L=8, n_sets=2, d=4, methods=("TrigRF", "PosRF"))
    >>> s["TrigRF"]["n_pairs"], len(s["PosRF"]["set_means"]), s["TrigRF"]["n_zero_variance"]
    (128, 2, 0)
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

    Parameters
    ----------
    regime : str
        One of :data:`REGIMES` (:func:`sample_sets`).
    sigma : float
        The data scale, ``> 0``.
    L : int, optional
        Points per set (default 16): the parameters come from these sets' statistics.
    n_pairs : int, optional
        Pairs ``(x_i, y_i)``, ``i < n_pairs``, simulated (default 3; at most ``L``).
    n_trials : int, optional
        Monte Carlo draws per (method, pair) (default 200,000).
    seed : int, optional
        Seed of the sets and (offset per method and pair) of the Monte Carlo streams.
    d : int, optional
        Dimension (default 64).
    methods : tuple of str, optional
        Mechanisms among :data:`METHODS` (default: all eight).

    Returns
    -------
    list of dict
        One row per (method, pair): ``method``, ``pair``, ``closed_form`` and ``mc`` (natural-log
        one-feature variances), ``se_log``, ``z`` (NaN where not trustworthy), ``trustworthy`` and
        ``reason`` (the tail diagnostic's explanation).

    Raises
    ------
    ValueError
        As :func:`sample_sets` and :func:`log_variances`.

    References
    ----------
    CRT sec 5.1, Figure 2, appendix 9.10.1.
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

"""Accuracy sweep of every public closed form: the float64 face against a converged reference.

``rfcheck accuracy`` (:func:`run_accuracy`) evaluates each public closed form of
``rfcheck.closed_forms.<paper>`` at random points of its documented domain -- with the
hard regions over-sampled: tiny and huge norms, ``d`` up to 1024, near-cancellation
(``x ~ +-y``, angles near 0 and pi) and parameters near the edges of their validity
(``A -> 1/8``, ``p -> 1``, ``lambda -> 1/2``) -- and compares the float64 face, evaluated
vectorised, with a reference:

* the **reference** is the function's mpmath face at 50 digits (:data:`DPS`), or, for a
  function without one, an independent mpmath expression written in its spec below;
* it is **checked for convergence** against the same face at 80 digits
  (:data:`DPS_CHECK`): a point where the two disagree beyond 1e-20 relative
  (:data:`CONVERGENCE_TOL`) is recorded as ``reference_unconverged`` and counts against
  the function (the high-precision face is part of what is checked);
* the **error** of a point is relative, ``|f - r| / max(|r|, tiny)`` with ``tiny`` the
  smallest normal float64 (so that a value below the normal range only has to be right to
  ``1e-12 * tiny`` absolutely), and for log-space functions (spec flag ``log_space``)
  absolute, ``|f - r| / max(1, |r|)`` (an absolute error of the logarithm is a relative
  error of the value; the floor at 1 only admits the rounding of a logarithm above 1).
  Array-valued results are compared normwise (largest difference over the largest
  reference entry), structured ones (tuples, dicts) leaf by leaf;
* a ``ValueError`` of the float64 face where the reference cannot be held in float64
  (beyond the float64 range, or below its normal range) is an explicit flag and counts as
  met (``flagged``); so is a float64 ``+-inf`` for a reference beyond the range.  A
  ``ValueError`` where the reference is finite and representable is a failure
  (``refused``: "refused a representable value"), and a NaN or inf where the reference is
  finite is counted in ``nonfinite``.

A function **meets** the target when every point is within :data:`TOL` (1e-12), nothing is
refused, non-finite or unconverged, and no face failed otherwise.  A function without a
float64/mpmath pair and without an independent reference is listed in :data:`COVERED_BY`
with the check that covers it and why; :func:`coverage` ties the two lists to the
modules' ``__all__`` so that no public closed form is silently skipped (a test fails when
one is added without a spec).

Points are drawn from a generator seeded by ``seed`` and the function's name, so a run is
reproducible and restricting it to some functions does not change their points.
"""

from __future__ import annotations

import importlib
import math
import time
import traceback
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

__all__ = [
    "CONVERGENCE_TOL",
    "COVERED_BY",
    "DPS",
    "DPS_CHECK",
    "PAPERS",
    "SPECS",
    "SWEPT_ESTIMATORS",
    "TOL",
    "CoveredBy",
    "Spec",
    "coverage",
    "format_entry",
    "format_page",
    "format_table",
    "public_closed_forms",
    "run_accuracy",
]

#: the papers whose closed forms are measured (the modules ``rfcheck.closed_forms.<paper>``)
PAPERS = ("crt", "darkformer", "hrf", "rfa", "simrf")
TOL = 1e-12  #: target error of the float64 face (relative; absolute for log-space values)
CONVERGENCE_TOL = 1e-20  #: largest relative disagreement of the 50- and 80-digit references
DPS = 50  #: digits of the reference
DPS_CHECK = 80  #: digits of the convergence check of the reference
#: log-space errors are absolute up to |r| = 1 / LOG_REL and LOG_REL-relative beyond (1e-15 |r|, ~5 ulp)
LOG_REL = 1e-3
FLOAT_MAX = float(np.finfo(float).max)
FLOAT_TINY = float(np.finfo(float).tiny)
QUICK_POINTS = 4  #: points per function with ``quick=True``
TIME_LIMIT_S = 60.0  #: a function stops drawing points after this long (the entry says ``truncated``)

Columns = dict[str, Any]
Sampler = Callable[[np.random.Generator, int], Any]


# ============================================================================ specs


@dataclass(frozen=True)
class Spec:
    """The domain and evaluation of one public closed form in the sweep.

    Parameters
    ----------
    function : str
        Qualified name, ``"<paper>.<name>"`` (e.g. ``"crt.gerf_log_variance"``).
    sample : callable
        ``sample(rng, n) -> dict`` of ``n``-long columns, one per argument (numpy arrays, or
        lists of arrays for vector arguments).
    points : int
        Points of the default sweep.
    log_space : bool
        Compare absolutely (``|f - r| / max(1, |r|)``) instead of relatively.
    scalar : tuple of str
        Arguments passed as scalars to the float64 face: points are grouped by their values
        (and by the shapes of the other arguments) and each group is one vectorised call.
    vectorised : bool
        ``False``: the float64 face is called one point at a time (array-valued results).
    kwargs : mapping
        Fixed keyword arguments of both faces.
    fp : callable, optional
        Float64 face ``fp(**args, **kwargs)``; default the public function.
    ref : callable, optional
        Reference ``ref(args, dps)``; default the public function with
        ``backend="mpmath", dps=dps``.
    fp_domain : callable, optional
        ``fp_domain(args) -> bool``: where the float64 face is documented to be accurate;
        elsewhere only the reference's convergence is checked.
    note : str
        Why the domain or reference is what it is (shown in the documentation).
    """

    function: str
    sample: Sampler
    points: int = 200
    log_space: bool = False
    scalar: tuple[str, ...] = ()
    vectorised: bool = True
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    fp: Callable[..., Any] | None = None
    ref: Callable[[dict[str, Any], int], Any] | None = None
    fp_domain: Callable[[dict[str, Any]], bool] | None = None
    note: str = ""


@dataclass(frozen=True)
class CoveredBy:
    """A public name that the sweep does not evaluate, with the check that covers it and why.

    Parameters
    ----------
    function : str
        Qualified name, ``"<paper>.<name>"``.
    covered_by : str
        The swept functions or tests that cover it.
    reason : str
        Why it has no float64/mpmath comparison of its own (an optimiser, a Monte Carlo
        estimator, an input validator).
    """

    function: str
    covered_by: str
    reason: str


def _resolve(name: str) -> Callable[..., Any]:
    paper, _, fname = name.partition(".")
    if paper not in PAPERS or not fname:
        raise ValueError(f"not a closed form: {name!r} (expected '<paper>.<name>' with paper in {PAPERS})")
    mod = importlib.import_module(f"rfcheck.closed_forms.{paper}")
    if fname not in getattr(mod, "__all__", ()) and not fname.startswith("_"):
        try:  # an estimator swept with the closed forms (rfcheck.estimators.<paper>)
            est = importlib.import_module(f"rfcheck.estimators.{paper}")
        except ModuleNotFoundError:
            est = None
        if est is not None and fname in est.__all__:
            return getattr(est, fname)
    return getattr(mod, fname)


# ======================================================================= samplers


def _lu(lo: float, hi: float) -> Sampler:
    """Log-uniform on ``[lo, hi]``."""
    return lambda rng, n: np.exp(rng.uniform(math.log(lo), math.log(hi), n))


def _uni(lo: float, hi: float) -> Sampler:
    return lambda rng, n: rng.uniform(lo, hi, n)


def _const(*values: Any) -> Sampler:
    return lambda rng, n: np.asarray(values)[rng.integers(len(values), size=n)]


def _int_lu(lo: int, hi: int) -> Sampler:
    """Integers, log-uniform on ``[lo, hi]``."""
    return lambda rng, n: np.clip(np.floor(np.exp(rng.uniform(math.log(lo), math.log(hi + 1), n))), lo, hi).astype(int)


def _near(b: float, lo: float, hi: float, side: int = -1, rel: bool = True) -> Sampler:
    """``b + side * delta`` with ``delta`` log-uniform on ``[lo, hi]`` (times ``|b|`` if ``rel``)."""
    def s(rng: np.random.Generator, n: int) -> np.ndarray:
        delta = _lu(lo, hi)(rng, n) * (abs(b) if rel else 1.0)
        return b + side * delta
    return s


def _signed(s: Sampler) -> Sampler:
    return lambda rng, n: s(rng, n) * rng.choice([-1.0, 1.0], n)


def _mix(*parts: tuple[float, Sampler]) -> Sampler:
    """Each point from one of ``parts`` (weight, sampler), chosen at random."""
    w = np.array([p[0] for p in parts], dtype=float)

    def s(rng: np.random.Generator, n: int) -> np.ndarray:
        idx = rng.choice(len(parts), size=n, p=w / w.sum())
        vals = np.stack([np.asarray(p[1](rng, n)) for p in parts])
        return vals[idx, np.arange(n)]
    return s


#: norms (and other non-negative scales): moderate, tiny, large, huge, exactly 0
NORM = _mix((0.4, _lu(1e-2, 3.0)), (0.2, _lu(1e-150, 1e-2)), (0.2, _lu(3.0, 40.0)), (0.12, _lu(40.0, 1e4)),
            (0.08, _const(0.0)))
NORM_POS = _mix((0.45, _lu(1e-2, 3.0)), (0.2, _lu(1e-150, 1e-2)), (0.2, _lu(3.0, 40.0)), (0.15, _lu(40.0, 1e4)))
#: moderate-to-large arguments of the hypergeometric series (their float64 faces sum ~z terms)
SERIES_ARG = _mix((0.4, _lu(1e-2, 3.0)), (0.25, _lu(1e-150, 1e-2)), (0.25, _lu(3.0, 30.0)), (0.05, _lu(30.0, 300.0)),
                  (0.05, _const(0.0)))
#: the same up to 30 (series summed term by term in both faces, or alternating 1F1 of -z^2/2)
SERIES_ARG_MID = _mix((0.4, _lu(1e-2, 3.0)), (0.25, _lu(1e-150, 1e-2)), (0.3, _lu(3.0, 30.0)), (0.05, _const(0.0)))
SERIES_ARG_MID_POS = _mix((0.4, _lu(1e-2, 3.0)), (0.3, _lu(1e-150, 1e-2)), (0.3, _lu(3.0, 30.0)))
#: v of the functions whose reference integrates over the angle (an mpmath quadrature of 1F1 per
#: point, seconds at 80 digits): up to 6
SERIES_ARG_QUAD = _mix((0.45, _lu(1e-2, 3.0)), (0.3, _lu(1e-150, 1e-2)), (0.2, _lu(3.0, 6.0)), (0.05, _const(0.0)))
#: angles in [0, pi]: uniform, near 0, near pi, exactly 0 or pi, near pi/2
ANGLE = _mix((0.35, _uni(0.0, math.pi)), (0.2, _lu(1e-300, 1e-2)), (0.2, _near(math.pi, 4.5e-16, 1e-2, rel=False)),
             (0.1, _const(0.0, math.pi)), (0.15, _near(math.pi / 2, 1e-16, 1e-3, side=1, rel=False)))
#: cosines in [-1, 1]: uniform, near +-1, exactly +-1 or 0
COS = _mix((0.4, _uni(-1.0, 1.0)), (0.2, _near(1.0, 1e-16, 1e-2)), (0.2, _near(-1.0, 1e-16, 1e-2, side=1)),
           (0.1, _const(-1.0, 0.0, 1.0)), (0.1, _signed(_lu(1e-300, 1e-3))))
COS_HALF = _mix((0.6, _uni(-0.5, 0.5)), (0.2, _const(-0.5, 0.0, 0.5)), (0.2, _signed(_lu(1e-300, 1e-3))))
#: dimensions: small, log-uniform up to 1024, 1024
DIM = _mix((0.3, _const(1, 2, 3)), (0.55, _int_lu(1, 1024)), (0.15, _const(1024)))
DIM2 = _mix((0.3, _const(2, 3)), (0.55, _int_lu(2, 1024)), (0.15, _const(1024)))
#: dimensions where the reference integrates over the angle (a quadrature per point)
DIM_QUAD = _mix((0.45, _const(2, 3)), (0.45, _int_lu(2, 64)), (0.1, _const(1024)))
#: numbers of features
COUNT = _mix((0.3, _const(1, 2)), (0.6, _int_lu(1, 10**6)), (0.1, _const(10**9)))
#: probabilities in (0, 1), near both ends
PROB = _mix((0.4, _uni(1e-3, 1 - 1e-3)), (0.2, _lu(1e-300, 1e-3)), (0.4, _near(1.0, 1.2e-16, 1e-3)))
#: positive scales (sigma of RFA and HRF): moderate, tiny, huge
SCALE = _mix((0.6, _lu(1e-3, 1e3)), (0.2, _lu(1e-150, 1e-3)), (0.2, _lu(1e3, 1e150)))


def _cols(*joint: Callable[[np.random.Generator, int], Columns], **single: Sampler) -> Sampler:
    """A sampler of columns: joint samplers return dicts, the others one column each."""
    def sample(rng: np.random.Generator, n: int) -> Columns:
        out: Columns = {}
        for j in joint:
            out.update(j(rng, n))
        for k, s in single.items():
            out[k] = s(rng, n)
        return out
    return sample


def _geometry(rng: np.random.Generator, n: int) -> Columns:
    """``(nx, ny, theta)`` of a pair: independent norms, or ``|y| ~ |x|`` (x ~ +-y at theta ~ 0, pi)."""
    nx = NORM(rng, n)
    fac = _mix((0.4, _lu(1e-3, 1e3)), (0.4, lambda r, k: 1 + _signed(_lu(1e-16, 1e-3))(r, k)),
               (0.2, _const(1.0)))(rng, n)
    ny = np.where(rng.random(n) < 0.2, NORM(rng, n), nx * fac)
    return {"nx": nx, "ny": ny, "theta": ANGLE(rng, n)}


def _stats_of(nx: np.ndarray, ny: np.ndarray, th: np.ndarray) -> Columns:
    dn2 = (nx - ny) ** 2
    return {"sq_x": nx * nx, "sq_y": ny * ny, "sq_sum": dn2 + 4 * nx * ny * np.cos(th / 2) ** 2,
            "sq_diff": dn2 + 4 * nx * ny * np.sin(th / 2) ** 2}


def _pair_stats(rng: np.random.Generator, n: int) -> Columns:
    """CRT pair statistics ``sq_x, sq_y, sq_sum, sq_diff`` (consistent to rounding)."""
    g = _geometry(rng, n)
    return _stats_of(g["nx"], g["ny"], g["theta"])


def _vectors(rng: np.random.Generator, d: int, lo: float = 1e-150, hi: float = 40.0) -> tuple[np.ndarray, np.ndarray]:
    """A pair of vectors in R^d: independent, x ~ y, x ~ -y, x _|_ y, equal positive entries, x = y."""
    sx = float(_mix((0.6, _lu(1e-2, 3.0)), (0.2, _lu(lo, 1e-2)), (0.2, _lu(3.0, hi)))(rng, 1)[0])
    x = rng.standard_normal(d) * sx / math.sqrt(d)
    regime = int(rng.integers(6))
    if regime == 0:
        y = rng.standard_normal(d) * float(_lu(1e-3, 1e3)(rng, 1)[0]) * sx / math.sqrt(d)
    elif regime in (1, 2):
        y = (1 if regime == 1 else -1) * x * (1 + rng.standard_normal(d) * float(_lu(1e-16, 1e-3)(rng, 1)[0]))
    elif regime == 3:
        y0 = rng.standard_normal(d) * sx / math.sqrt(d)
        y = y0 - (y0 @ x) / (x @ x) * x if x @ x > 0 else y0
    elif regime == 4:
        x = np.full(d, sx / math.sqrt(d))
        y = np.full(d, sx / math.sqrt(d) * float(_lu(1e-2, 1e2)(rng, 1)[0]))
    else:
        y = x.copy()
    return x, y


def _vector_pairs(dims: Sampler, **kw: Any) -> Callable[[np.random.Generator, int], Columns]:
    def s(rng: np.random.Generator, n: int) -> Columns:
        xs, ys = [], []
        for d in dims(rng, n):
            x, y = _vectors(rng, int(d), **kw)
            xs.append(x)
            ys.append(y)
        return {"x": xs, "y": ys}
    return s


def _mp_sum(terms: Iterable[Any]) -> Any:
    return mpmath.fsum(terms)


def _discrete_stats(rng: np.random.Generator, n: int, dims: Sampler = DIM) -> Columns:
    """Statistics of DIRF pairs (q, abs_prod, xy, sq_diff), exactly rounded from random vectors."""
    cols: dict[str, list[Any]] = {"q": [], "abs_prod": [], "xy": [], "sq_diff": [], "d": []}
    vp = _vector_pairs(dims)(rng, n)
    with mpmath.workdps(60):
        for x, y in zip(vp["x"], vp["y"], strict=True):
            xm, ym = [mpmath.mpf(float(v)) for v in x], [mpmath.mpf(float(v)) for v in y]
            prods = [a * b for a, b in zip(xm, ym, strict=True)]
            cols["q"].append(float(_mp_sum(p * p for p in prods)))
            cols["abs_prod"].append(np.array([float(abs(p)) for p in prods]))
            cols["xy"].append(float(_mp_sum(prods)))
            cols["sq_diff"].append(float(_mp_sum((a - b) ** 2 for a, b in zip(xm, ym, strict=True))))
            cols["d"].append(len(x))
    return {k: (v if k == "abs_prod" else np.array(v)) for k, v in cols.items()}


# ---------------------------------------------------------------- CRT samplers


A_REAL = _mix((0.35, _uni(-2.0, 0.12)), (0.3, _near(0.125, 1e-15, 1e-2)), (0.2, _signed(_lu(1e-20, 1e-2))),
              (0.1, _uni(-50.0, -2.0)), (0.05, _const(0.0)))


def _a_complex(rng: np.random.Generator, n: int) -> np.ndarray:
    """GERF's A with Re(1 - 8A) > 0: real, near 1/8, tiny, and complex with imaginary parts."""
    re = A_REAL(rng, n)
    im = _mix((0.5, _const(0.0)), (0.3, _signed(_lu(1e-10, 2.0))), (0.2, _signed(_lu(1e-20, 1e-10))))(rng, n)
    return re + 1j * im


def _gerf(rng: np.random.Generator, n: int) -> Columns:
    return {**_pair_stats(rng, n), "d": DIM(rng, n), "a": _a_complex(rng, n), "s": _const(-1, 1)(rng, n),
            "kernel": _const("gaussian", "softmax")(rng, n)}


def _raw_moment(rng: np.random.Generator, n: int) -> Columns:
    k = rng.integers(1, 5, size=n)
    edge = 1 / (4 * k)
    a = np.where(rng.random(n) < 0.5, edge * (1 - _lu(1e-15, 1e-1)(rng, n)), rng.uniform(-2.0, 1.0, n) * edge)
    return {"k": k, **_pair_stats(rng, n), "d": DIM(rng, n), "a": a}


def _u_d(rng: np.random.Generator, n: int) -> Columns:
    u = _mix((0.6, NORM), (0.2, _lu(1e-300, 1e-150)), (0.2, _lu(1e150, 1e300)))(rng, n)
    return {"u": u, "d": DIM(rng, n)}


def _u_d_moderate(rng: np.random.Generator, n: int) -> Columns:
    return {"u": _mix((0.7, NORM), (0.3, _lu(1e-300, 1e-150)))(rng, n), "d": DIM(rng, n)}


def _poisson(rng: np.random.Generator, n: int) -> Columns:
    st = _discrete_stats(rng, n)
    star = np.sqrt(st["q"] / st["d"])
    fac = _mix((0.3, _const(1.0)), (0.3, lambda r, k: 1 + _signed(_lu(1e-12, 1e-2))(r, k)),
               (0.4, _lu(1e-3, 1e3)))(rng, n)
    lam = np.where(star > 0, star * fac, _lu(1e-3, 1e3)(rng, n))
    return {"q": st["q"], "xy": st["xy"], "sq_diff": st["sq_diff"], "d": st["d"], "lam": lam}


def _geometric(rng: np.random.Generator, n: int) -> Columns:
    st = _discrete_stats(rng, n, dims=_mix((0.4, _const(1, 2, 3)), (0.5, _int_lu(1, 256)), (0.1, _const(1024))))
    return {"abs_prod": st["abs_prod"], "xy": st["xy"], "sq_diff": st["sq_diff"], "p": PROB(rng, n)}


def _without(sample: Callable[[np.random.Generator, int], Columns], *names: str) -> Sampler:
    """A joint sampler with some of its columns dropped."""
    return lambda rng, n: {k: v for k, v in sample(rng, n).items() if k not in names}


def _dirf(rng: np.random.Generator, n: int) -> Columns:
    """Pairs in R^1..R^3 and a Poisson lambda with (x_l y_l)^2 / lambda <= 50 (the series of
    ``dirf_log_variance`` has about that many terms, and its cost grows with their square)."""
    cols = _vector_pairs(_const(1, 2, 3), lo=1e-3, hi=3.0)(rng, n)
    top = np.array([float(np.max((x * y) ** 2)) for x, y in zip(cols["x"], cols["y"], strict=True)])
    lam = np.maximum(_lu(1e-2, 10.0)(rng, n), top / 50)
    return {**cols, "lam": lam}


# ------------------------------------------------------------------- HRF samplers


def _hrf_pair_m(rng: np.random.Generator, n: int) -> Columns:
    return {**_geometry(rng, n), "m": COUNT(rng, n)}


def _moments(rng: np.random.Generator, n: int) -> Columns:
    """Moments ``E lam^2, E(1-lam)^2, E lam(1-lam)`` of a real lambda law (mean, variance)."""
    mu = _mix((0.35, _uni(0.0, 1.0)), (0.15, _lu(1e-300, 1e-2)), (0.15, _near(1.0, 1.2e-16, 1e-2)),
              (0.15, _const(0.0, 1.0)), (0.2, _uni(-0.5, 1.5)))(rng, n)
    var = _mix((0.4, _const(0.0)), (0.6, _lu(1e-30, 0.25)))(rng, n)
    return {"e_lam2": mu * mu + var, "e_oml2": (1 - mu) ** 2 + var, "e_lam_oml": mu * (1 - mu) - var}


def _r_theta_m(rng: np.random.Generator, n: int) -> Columns:
    return {"r": NORM_POS(rng, n), "theta": ANGLE(rng, n), "m": COUNT(rng, n)}


def _gauss_geometry(rng: np.random.Generator, n: int) -> Columns:
    """``(nx, ny, theta, n, sigma, r)`` with ``|x|, |y|`` at or near the radius ``r``."""
    r = _mix((0.6, _lu(1e-2, 10.0)), (0.2, _lu(1e-150, 1e-2)), (0.2, _lu(10.0, 1e3)))(rng, n)
    fx, fy = (_mix((0.35, _const(1.0)), (0.35, lambda q, k: 1 + _signed(_lu(1e-16, 1e-3))(q, k)),
                   (0.3, _uni(0.0, 1.5)))(rng, n) for _ in range(2))
    sigma = _mix((0.6, _lu(1e-2, 1e2)), (0.2, _lu(1e-150, 1e-2)), (0.2, _lu(1e2, 1e6)))(rng, n)
    return {"nx": r * fx, "ny": r * fy, "theta": ANGLE(rng, n), "n": COUNT(rng, n), "sigma": sigma, "r": r}


def _cexp(rng: np.random.Generator, n: int) -> Columns:
    cols: dict[str, list[Any]] = {"a": [], "x": [], "y": [], "m": [], "part": []}
    for _ in range(n):
        d = int(rng.integers(1, 4))
        a = rng.standard_normal((d, d)) + np.eye(d) * 2
        if rng.random() < 0.5:
            a = a + 1j * rng.standard_normal((d, d)) * float(_lu(1e-3, 1.0)(rng, 1)[0])
        x = rng.standard_normal(d) * float(NORM_POS(rng, 1)[0]) / 10
        regime = int(rng.integers(3))
        if regime == 0:  # z = A x + A^-T y ~ 0: y ~ -A^T A x
            y = -np.real(a.T @ a @ x) * (1 + rng.standard_normal(d) * float(_lu(1e-16, 1e-6)(rng, 1)[0]))
        else:
            y = rng.standard_normal(d) * float(NORM_POS(rng, 1)[0]) / 10
        cols["a"].append(a)
        cols["x"].append(x)
        cols["y"].append(y)
        cols["m"].append(int(COUNT(rng, 1)[0]))
        cols["part"].append(str(rng.choice(["complex", "real"])))
    return cols


# -------------------------------------------------------------- SimRF samplers


def _simrf_m_le_d(rng: np.random.Generator, n: int, minimum: int = 1) -> Columns:
    d = (DIM2 if minimum > 1 else DIM)(rng, n)
    m = np.maximum(1, np.floor(rng.random(n) ** 2 * d).astype(int) + 1)
    m = np.where(rng.random(n) < 0.3, d, np.minimum(m, d))
    return {"d": d, "m": m}


def _asymptotic_ratio(rng: np.random.Generator, n: int) -> Columns:
    """``(z, d, m)`` of Cor 4.6, half of them with ``m > d`` near the zero of ``1 - (m-1) q^2 / d``."""
    from scipy.optimize import brentq

    d = DIM(rng, n)
    m = np.maximum(1, (rng.random(n) * d).astype(int) + 1)
    z = SERIES_ARG(rng, n)
    for i in range(n):
        if rng.random() < 0.5:
            m[i] = int(d[i] + 1 + rng.integers(1, 4 * d[i] + 2))
            t = d[i] / (m[i] - 1)  # q(x)^2 = t at the zero, q(x) = x / (2 sinh(x/2)), x = z^2
            x0 = brentq(lambda x, t=t: (x / (2 * math.sinh(x / 2)) if x else 1.0) ** 2 - t, 0.0, 200.0)
            z[i] = math.sqrt(x0) * (1 + float(_signed(_lu(1e-15, 1e-4))(rng, 1)[0]))
    return {"z": z, "d": d, "m": m}


# ---------------------------------------------------------- DARKFormer samplers


def _eigs(rng: np.random.Generator, d: int, beyond: bool) -> np.ndarray:
    parts: list[tuple[float, Sampler]] = [(0.35, _uni(0.0, 0.5)), (0.3, _near(0.5, 1e-15, 1e-2)),
                                          (0.2, _lu(1e-300, 1e-3)), (0.15, _const(0.0))]
    if beyond:
        parts.append((0.2, _uni(0.5, 2.0)))
    return _mix(*parts)(rng, d)


def _lambda_matrix(rng: np.random.Generator, d: int, beyond: bool = False) -> np.ndarray:
    """A PSD Lambda (float64): diagonal (exact eigenvalues) or rotated, eigenvalues near 1/2 and 0."""
    ev = _eigs(rng, d, beyond)
    if rng.random() < 0.4:
        return np.diag(ev)
    u, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = (u * ev) @ u.T
    return 0.5 * (lam + lam.T)


def _sigma_for(rng: np.random.Generator, lam: np.ndarray) -> np.ndarray:
    """A proposal covariance: I, c I, t Sigma* with t near 1/2 (the edge of finiteness), or random SPD."""
    d = lam.shape[0]
    regime = int(rng.integers(4))
    ev, u = np.linalg.eigh(lam)
    if regime == 2 and ev[-1] < 0.5 - 1e-9:
        t = 0.5 * (1 + float(_signed(_lu(1e-14, 1e-1))(rng, 1)[0]))
        s = (u * (t * (1 + 2 * ev) / (1 - 2 * ev))) @ u.T
    elif regime == 1:
        s = float(_lu(0.3, 100.0)(rng, 1)[0]) * np.eye(d)
    elif regime == 3:
        a = rng.standard_normal((d, d))
        s = a @ a.T / d + float(_lu(1e-3, 10.0)(rng, 1)[0]) * np.eye(d)
    else:
        s = np.eye(d)
    return 0.5 * (s + s.T)


def _lam_only(beyond: bool) -> Callable[[np.random.Generator, int], Columns]:
    def s(rng: np.random.Generator, n: int) -> Columns:
        return {"lam": [_lambda_matrix(rng, int(rng.integers(1, 6)), beyond) for _ in range(n)]}
    return s


def _lam_sigma(beyond: bool) -> Callable[[np.random.Generator, int], Columns]:
    def s(rng: np.random.Generator, n: int) -> Columns:
        lams = [_lambda_matrix(rng, int(rng.integers(1, 6)), beyond) for _ in range(n)]
        return {"lam": lams, "sigma": [_sigma_for(rng, lam) for lam in lams]}
    return s


def _coord(rng: np.random.Generator, n: int) -> Columns:
    lam = _mix((0.35, _uni(0.0, 0.5)), (0.25, _near(0.5, 1e-15, 1e-2)), (0.15, _lu(1e-300, 1e-3)),
               (0.1, _const(0.0)), (0.15, _uni(0.5, 3.0)))(rng, n)
    with np.errstate(divide="ignore"):
        edge = np.where(lam < 0.5, (1 + 2 * lam) / (2 * (1 - 2 * lam)), 1.0)
    fac = _mix((0.5, lambda r, k: 1 + _signed(_lu(1e-15, 1e-2))(r, k)), (0.5, _lu(1e-2, 1e2)))(rng, n)
    s = np.where(np.isfinite(edge * fac), edge * fac, 1.0)
    return {"lam": lam, "s": s}


def _small_vectors(rng: np.random.Generator, d: int, k: int, scale: float = 1.0) -> np.ndarray:
    return rng.standard_normal((k, d)) * scale / math.sqrt(d)


# ==================================================================== references


def _mp(v: Any) -> Any:
    """Exact mpmath value of a float64 (or complex) input."""
    if isinstance(v, complex | np.complexfloating):
        return mpmath.mpc(v)
    return mpmath.mpf(float(v)) if not isinstance(v, int | np.integer) else int(v)


def _mp_mat(a: Any) -> Any:
    a = np.atleast_2d(np.asarray(a))
    return mpmath.matrix([[_mp(v) for v in row] for row in a])


def _mp_vec(a: Any) -> list[Any]:
    return [_mp(v) for v in np.ravel(a)]


def _ref_log_pk(kind: str) -> Callable[[dict[str, Any], int], Any]:
    def ref(a: dict[str, Any], dps: int) -> Any:
        with mpmath.workdps(dps):
            k = int(a["k"])
            if kind == "poisson":
                lam = _mp(a["lam"])
                return -lam + k * mpmath.log(lam) - mpmath.loggamma(k + 1)
            p = _mp(a["p"])
            return mpmath.log(p) + k * mpmath.log1p(-p)
    return ref


def _ref_dirf(a: dict[str, Any], dps: int) -> Any:
    """DIRF with Poisson p_k equals PoisRF's closed form at the exact statistics of the vectors."""
    crt = importlib.import_module("rfcheck.closed_forms.crt")
    with mpmath.workdps(dps + 20):
        xm, ym = _mp_vec(a["x"]), _mp_vec(a["y"])
        prods = [u * v for u, v in zip(xm, ym, strict=True)]
        q, xy = mpmath.fsum(p * p for p in prods), mpmath.fsum(prods)
        sd = mpmath.fsum((u - v) ** 2 for u, v in zip(xm, ym, strict=True))
    return crt.poisson_log_variance(q, xy, sd, len(xm), _mp(a["lam"]), backend="mpmath", dps=dps)


def _fp_dirf(x: Any, y: Any, lam: float) -> float:
    crt = importlib.import_module("rfcheck.closed_forms.crt")
    return float(crt.dirf_log_variance(x, y, crt.poisson_log_pk(lam)))


def _fp_log_pk(kind: str) -> Callable[..., float]:
    def fp(k: int, **a: Any) -> float:
        crt = importlib.import_module("rfcheck.closed_forms.crt")
        fn = crt.poisson_log_pk(a["lam"]) if kind == "poisson" else crt.geometric_log_pk(a["p"])
        return float(fn(k))
    return fp


def _ref_geometric_ratio(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        p = _mp(a["p"])
        c = 2 / mpmath.sqrt(1 - p)
        ap = _mp_vec(a["abs_prod"])
        s = mpmath.fsum(mpmath.log(mpmath.besseli(0, c * v)) for v in ap)
        out = -len(ap) * mpmath.log(p) + s - 2 * _mp(a["xy"])
    with mpmath.workdps(dps):
        return +out


def _ref_gerf_coefficients(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        aa, s, d = _mp(complex(a["a"])), int(a["s"]), int(a["d"])
        one4a = 1 - 4 * aa
        return (aa, mpmath.sqrt(s * one4a), mpmath.mpf(-(s + 1)) / 2, mpmath.power(mpmath.power(one4a, 0.25), d))


def _fp_gerf_moments(**a: Any) -> Any:
    crt = importlib.import_module("rfcheck.closed_forms.crt")
    out = crt.gerf_iid_error_moments(**a)
    if out is None:
        raise ValueError("gerf_iid_error_moments returned None (E X^4 infinite or the result beyond float64)")
    return out


def _ref_gerf_moments(a: dict[str, Any], dps: int) -> Any:
    """``E e = mu2 / M``, ``E e^2 = (mu4 + 3 (M - 1) mu2^2) / M^3`` from the raw moments (central moments of X)."""
    crt = importlib.import_module("rfcheck.closed_forms.crt")
    work = dps + 60
    st = {k: a[k] for k in ("sq_x", "sq_y", "sq_sum", "sq_diff", "d", "a")}
    m1, m2, m3, m4 = (mpmath.exp(crt.gerf_log_raw_moment(k, **st, backend="mpmath", dps=work)) for k in (1, 2, 3, 4))
    with mpmath.workdps(work):
        mm = a["m"]
        mu2 = m2 - m1 * m1
        mu4 = m4 - 4 * m3 * m1 + 6 * m2 * m1 ** 2 - 3 * m1 ** 4
        out = (mu2 / mm, (mu4 + 3 * (mm - 1) * mu2 ** 2) / mpmath.mpf(mm) ** 3)
    with mpmath.workdps(dps):
        return tuple(+v for v in out)


def _ref_pair_stats(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        x, y = _mp_vec(a["x"]), _mp_vec(a["y"])
        return {"sq_x": mpmath.fsum(v * v for v in x), "sq_y": mpmath.fsum(v * v for v in y),
                "sq_sum": mpmath.fsum((u + v) ** 2 for u, v in zip(x, y, strict=True)),
                "sq_diff": mpmath.fsum((u - v) ** 2 for u, v in zip(x, y, strict=True)), "d": len(x)}


def _ref_discrete_pair_stats(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        x, y = _mp_vec(a["x"]), _mp_vec(a["y"])
        prods = [u * v for u, v in zip(x, y, strict=True)]
        return {"q": mpmath.fsum(p * p for p in prods), "abs_prod": [abs(p) for p in prods], "xy": mpmath.fsum(prods),
                "sq_diff": mpmath.fsum((u - v) ** 2 for u, v in zip(x, y, strict=True)), "d": len(x)}


def _ref_set_stats(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        xs = [_mp_vec(r) for r in np.atleast_2d(a["x"])]
        ys = [_mp_vec(r) for r in np.atleast_2d(a["y"])]
        lx, ly, d = len(xs), len(ys), len(xs[0])
        npair = lx * ly

        def mean_pairs(f: Callable[[list[Any], list[Any]], Any]) -> Any:
            return mpmath.fsum(f(u, v) for u in xs for v in ys) / npair

        return {
            "sq_x": mpmath.fsum(v * v for u in xs for v in u) / lx,
            "sq_y": mpmath.fsum(v * v for u in ys for v in u) / ly,
            "sq_sum": mean_pairs(lambda u, v: mpmath.fsum((p + q) ** 2 for p, q in zip(u, v, strict=True))),
            "sq_diff": mean_pairs(lambda u, v: mpmath.fsum((p - q) ** 2 for p, q in zip(u, v, strict=True))),
            "xy": mean_pairs(lambda u, v: mpmath.fsum(p * q for p, q in zip(u, v, strict=True))),
            "q": mean_pairs(lambda u, v: mpmath.fsum((p * q) ** 2 for p, q in zip(u, v, strict=True))),
            "abs_prod": [mean_pairs(lambda u, v, i=i: abs(u[i] * v[i])) for i in range(d)],
            "d": d,
        }


def _ref_positive_shift(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        xs, ys = np.atleast_2d(a["x"]), np.atleast_2d(a["y"])
        eps = _mp(a["eps"])
        return [min(min(_mp(v) for v in xs[:, j]), min(_mp(v) for v in ys[:, j])) - eps for j in range(xs.shape[1])]


def _ref_pair_geometry(a: dict[str, Any], dps: int) -> Any:
    """Norms and ``atan2(|x ^ y|, x.y)`` with ``|x ^ y|^2 = |x|^2 |y|^2 - (x.y)^2`` at ``dps + 400``
    digits, where the sums of products of the float64 inputs are exact (parallel vectors give 0)."""
    with mpmath.workdps(dps + 400):
        x, y = _mp_vec(a["x"]), _mp_vec(a["y"])
        sx, sy = mpmath.fsum(v * v for v in x), mpmath.fsum(v * v for v in y)
        xy = mpmath.fsum(u * v for u, v in zip(x, y, strict=True))
        wedge = sx * sy - xy * xy
        out = (mpmath.sqrt(sx), mpmath.sqrt(sy), mpmath.atan2(mpmath.sqrt(max(wedge, 0)), xy))
    with mpmath.workdps(dps):
        return tuple(+v for v in out)


def _ref_trig_features(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        x, w = _mp_vec(a["x"]), _mp_mat(a["w"])
        proj = [mpmath.fsum(w[j, i] * x[i] for i in range(len(x))) for j in range(w.rows)]
        s = mpmath.sqrt(w.rows)
        return [mpmath.sin(p) / s for p in proj] + [mpmath.cos(p) / s for p in proj]


# ------------------------------------------------------------- DARKFormer refs


def _mp_eigs(a: Any) -> list[Any]:
    ev = mpmath.eigsy(_mp_mat(a), eigvals_only=True)
    return [ev[i] for i in range(len(ev))]


def _ref_log_b_x(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        lam = _mp_mat(a["lam"])
        d = lam.rows
        ilam = mpmath.eye(d) + 2 * lam
        t = 2 * mpmath.inverse(ilam) * lam
        om = np.atleast_2d(a["omega"])
        ld = mpmath.log(mpmath.det(ilam))
        out = []
        for row in om:
            w = mpmath.matrix(_mp_vec(row))
            out.append(-ld / 2 + (w.T * t * w)[0, 0])
    with mpmath.workdps(dps):
        return [+v for v in out]


def _ref_b_x(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        return [mpmath.exp(v) for v in _ref_log_b_x(a, dps)]


def _ref_kappa_sq(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        ev = _mp_eigs(a["lam"])
        if max(ev) >= mpmath.mpf(1) / 2:
            return mpmath.inf
        out = -mpmath.fsum(mpmath.log(1 - 4 * e * e) for e in ev) / 2
    with mpmath.workdps(dps):
        return +out


def _ref_optimal_variance(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 20):
        ev = [max(e, 0) for e in _mp_eigs(a["lam"])]
        if max(ev) >= mpmath.mpf(1) / 2:
            raise ValueError("lambda_max >= 1/2: no finite-variance proposal")
        # prod 1/(1-2l) - prod (1-4l^2)^(-1/2) = p2 expm1(sum atanh(2l)): no cancellation for tiny l
        p2 = mpmath.fprod(1 / mpmath.sqrt(1 - 4 * e * e) for e in ev)
        out = p2 * mpmath.expm1(mpmath.fsum(mpmath.atanh(2 * e) for e in ev)) / a["m"]
    with mpmath.workdps(dps):
        return +out


def _ref_expected_variance(a: dict[str, Any], dps: int) -> Any:
    df = importlib.import_module("rfcheck.closed_forms.darkformer")
    lv = df.log_expected_variance(a["lam"], a["sigma"], a["m"], backend="mpmath", dps=dps)
    with mpmath.workdps(dps):
        return mpmath.exp(lv)


def _ref_log_gaussian_density(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        s = _mp_mat(a["sigma"])
        d = s.rows
        si = mpmath.inverse(s)
        ld = mpmath.log(mpmath.det(s))
        out = []
        for row in np.atleast_2d(a["omega"]):
            w = mpmath.matrix(_mp_vec(row))
            out.append(-(w.T * si * w)[0, 0] / 2 - ld / 2 - d * mpmath.log(2 * mpmath.pi) / 2)
    with mpmath.workdps(dps):
        return [+v for v in out]


def _mp_prf(x: Any, omega: Any, m_mat: Any, normalise: bool) -> list[list[Any]]:
    xs, om, mm = np.atleast_2d(x), np.atleast_2d(omega), _mp_mat(m_mat)
    rows = []
    for xr in xs:
        xv = mpmath.matrix(_mp_vec(xr))
        mx = mm * xv
        h = -mpmath.fsum(mx[i] ** 2 for i in range(mx.rows)) / 2
        f = [mpmath.exp(mpmath.fsum(_mp(o[i]) * xv[i] for i in range(xv.rows)) + h) for o in om]
        rows.append([v / mpmath.sqrt(len(om)) for v in f] if normalise else f)
    return rows


def _ref_mahalanobis_prf(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        rows = _mp_prf(a["x"], a["omega"], a["m_mat"], True)
    with mpmath.workdps(dps):
        return [+v for r in rows for v in r]


def _ref_mahalanobis_estimate(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        fq = _mp_prf(a["q"], a["omega"], a["m_mat"], True)
        fk = _mp_prf(a["k"], a["omega"], a["m_mat"], True)
        out = [mpmath.fsum(u * v for u, v in zip(r1, r2, strict=True)) for r1, r2 in zip(fq, fk, strict=True)]
    with mpmath.workdps(dps):
        return [+v for v in out]


def _ref_importance(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        s = _mp_mat(a["sigma"])
        om = np.atleast_2d(a["omega"])
        lw = _mp_vec(a["log_w"])
        out = []
        for qr, kr in zip(np.atleast_2d(a["q"]), np.atleast_2d(a["k"]), strict=True):
            q, k = mpmath.matrix(_mp_vec(qr)), mpmath.matrix(_mp_vec(kr))
            qq, kk = (q.T * s * q)[0, 0] / 2, (k.T * s * k)[0, 0] / 2
            terms = [mpmath.exp(lw[j] + mpmath.fsum(_mp(om[j][i]) * (q[i] + k[i]) for i in range(q.rows)) - qq - kk)
                     for j in range(len(om))]
            out.append(mpmath.fsum(terms) / len(terms))
    with mpmath.workdps(dps):
        return [+v for v in out]


def _ref_variance_finite(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        lam, s = _mp_mat(a["lam"]), _mp_mat(a["sigma"])
        d = lam.rows
        eye = mpmath.eye(d)
        p = 2 * mpmath.inverse(eye + 2 * lam) * (eye - 2 * lam) - mpmath.inverse(s)
        p = (p + p.T) / 2
        return bool(min(_mp_eigs_of(p)) > 0)


def _mp_eigs_of(m: Any) -> list[Any]:
    ev = mpmath.eigsy(m, eigvals_only=True)
    return [ev[i] for i in range(len(ev))]


# ------------------------------------------------------------------ SimRF refs


def _ref_simplex_cos(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps):
        return -mpmath.mpf(1) / (int(a["d"]) - 1)


def _mp_0f1_mean(d: int, args: Iterable[Any]) -> list[Any]:
    return [mpmath.hyp0f1(mpmath.mpf(d) / 2, z) for z in args]


def _ref_conformity_estimate(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 20):
        w = np.atleast_2d(np.asarray(a["w_samples"], dtype=float))
        if w.shape[0] == 1:
            w = w.T
        v, d = _mp(a["v"]), int(a["d"])
        rows = [mpmath.fsum(_mp_0f1_mean(d, [(v * _mp(x)) ** 2 / 4 for x in r])) / len(r) for r in w]
        n = len(rows)
        mean = mpmath.fsum(rows) / n
        var = mpmath.fsum((r - mean) ** 2 for r in rows) / (n - 1)
        out = (mean, mpmath.sqrt(var) / mpmath.sqrt(n))
    with mpmath.workdps(dps):
        return tuple(+v for v in out)


def _ref_conformity_of_ensemble(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        w = np.atleast_2d(a["W"])
        m, d = w.shape
        v = _mp(a["v"])
        rows = [_mp_vec(r) for r in w]
        vals = [mpmath.hyp0f1(mpmath.mpf(d) / 2, v * v * mpmath.fsum((p + q) ** 2 for p, q in
                                                                     zip(rows[i], rows[j], strict=True)) / 4)
                for i in range(m) for j in range(m) if i != j]
        out = mpmath.fsum(vals) / len(vals)
    with mpmath.workdps(dps):
        return +out


def _ref_equal_norm_conformity(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        u = [_mp_vec(r) for r in np.atleast_2d(a["directions"])]
        u = [[c / mpmath.sqrt(mpmath.fsum(x * x for x in r)) for c in r] for r in u]
        m = len(u)
        v, w, d = _mp(a["v"]), _mp(a["w"]), int(a["d"])
        vals = [mpmath.hyp0f1(mpmath.mpf(d) / 2, v * v * w * w * mpmath.fsum((p + q) ** 2 for p, q in
                                                                             zip(u[i], u[j], strict=True)) / 4)
                for i in range(m) for j in range(m) if i != j]
        out = mpmath.fsum(vals) / len(vals)
    with mpmath.workdps(dps):
        return +out


def _n_pairs(m: int, d: int, coupling: str) -> int:
    if coupling == "iid":
        return 0
    b = [d] * (m // d) + ([m % d] if m % d else [])
    return sum(x * (x - 1) for x in b)


def _extra_digits(z: Any) -> int:
    """Working digits lost to the cancellation ``e^{-z^2} - 1F1(d; d/2; -z^2/2) ~ z^4`` (and large z)."""
    zf = float(z)
    return 20 + (int(-4 * math.log10(zf)) if 0 < zf < 1 else 0) + int(zf * zf)


def _mp_rff_gap(z: Any, d: int) -> Any:
    """``e^{-z^2} - 1F1(d; d/2; -z^2/2)`` at the working precision (the caller adds the digits it cancels)."""
    return mpmath.exp(-z * z) - mpmath.hyp1f1(d, mpmath.mpf(d) / 2, -z * z / 2)


def _ref_rff_mse(a: dict[str, Any], dps: int) -> Any:
    z, d, m = _mp(a["z"]), int(a["d"]), int(a["m"])
    with mpmath.workdps(dps + _extra_digits(z)):
        first = mpmath.expm1(-z * z) ** 2 / 2
        npairs = _n_pairs(m, d, a["coupling"])
        out = (first - mpmath.mpf(npairs) / m * _mp_rff_gap(z, d)) / m if npairs else first / m
    with mpmath.workdps(dps):
        return +out


def _ref_rff_ratio(a: dict[str, Any], dps: int) -> Any:
    z, d, m = _mp(a["z"]), int(a["d"]), int(a["m"])
    with mpmath.workdps(dps + _extra_digits(z)):
        out = 1 - 2 * (m - 1) * _mp_rff_gap(z, d) / mpmath.expm1(-z * z) ** 2
    with mpmath.workdps(dps):
        return +out


def _ref_prf_gap(a: dict[str, Any], dps: int) -> Any:
    v, d, m, sq = _mp(a["v"]), int(a["d"]), int(a["m"]), _mp(a["sq_norms"])
    vf = float(v)
    with mpmath.workdps(dps + 20 + (int(-4 * math.log10(vf)) if 0 < vf < 1 else 0)):
        gap = mpmath.exp(v * v) - mpmath.hyp1f1(d, mpmath.mpf(d) / 2, v * v / 2)
        out = mpmath.mpf(m - 1) / m * mpmath.exp(-2 * sq) * gap
    with mpmath.workdps(dps):
        return +out


def _ref_prf_from_conformity(a: dict[str, Any], dps: int) -> Any:
    with mpmath.workdps(dps + 10):
        rho, v, m, sq = _mp(a["rho"]), _mp(a["v"]), int(a["m"]), _mp(a["sq_norms"])
        e = mpmath.exp(v * v)
        out = mpmath.exp(-2 * sq) / m * (e * mpmath.expm1(v * v) + (m - 1) * (rho - e))
    with mpmath.workdps(dps):
        return +out


def _prf_from_conformity_conditioning(a: dict[str, Any]) -> bool:
    """The float64 face of eq (11) is documented as cancelling: its domain is where it does not (factor <= 10)."""
    with mpmath.workdps(30):
        rho, v, m = _mp(a["rho"]), _mp(a["v"]), int(a["m"])
        e = mpmath.exp(v * v)
        first = e * mpmath.expm1(v * v)
        tot = first + (m - 1) * (rho - e)
        return bool(tot != 0 and (first + (m - 1) * (abs(rho) + e)) / abs(tot) <= 10)


def _simrf_rho(rng: np.random.Generator, n: int) -> Columns:
    v = _mix((0.6, _lu(1e-2, 3.0)), (0.2, _lu(1e-8, 1e-2)), (0.2, _lu(3.0, 20.0)))(rng, n)
    rho = np.exp(v * v) * _uni(0.5, 1.5)(rng, n)
    return {"rho": rho, "v": v, "m": COUNT(rng, n) % 10_000 + 1, "sq_norms": NORM(rng, n) ** 2 / 100}


def _ensembles(rng: np.random.Generator, n: int) -> Columns:
    ws, vs = [], []
    for _ in range(n):
        m, d = int(rng.integers(2, 6)), int(rng.integers(1, 9))
        w = _small_vectors(rng, d, m, float(_lu(1e-3, 5.0)(rng, 1)[0]))
        if rng.random() < 0.3:  # nearly opposite rows: |w_i + w_j| ~ 0
            w[1] = -w[0] * (1 + float(_lu(1e-16, 1e-6)(rng, 1)[0]))
        ws.append(w)
        vs.append(float(SERIES_ARG(rng, 1)[0]) / 3)
    return {"W": ws, "v": np.array(vs)}


def _directions(rng: np.random.Generator, n: int) -> Columns:
    dirs, ds = [], []
    for _ in range(n):
        m, dd = int(rng.integers(2, 6)), int(rng.integers(1, 9))
        u = rng.standard_normal((m, dd))
        if rng.random() < 0.3:
            u[1] = -u[0] * (1 + float(_lu(1e-16, 1e-6)(rng, 1)[0]))
        dirs.append(u)
        ds.append(int(DIM(rng, 1)[0]))
    return {"v": SERIES_ARG(rng, n) / 3, "w": _lu(1e-3, 5.0)(rng, n), "d": np.array(ds), "directions": dirs}


def _w_samples(rng: np.random.Generator, n: int) -> Columns:
    ws, ds = [], []
    for _ in range(n):
        d = int(DIM(rng, 1)[0])
        ens, pairs = int(rng.integers(2, 6)), int(rng.integers(1, 5))
        ws.append(np.sqrt(2 * d) * np.abs(1 + 0.3 * rng.standard_normal((ens, pairs))))
        ds.append(d)
    return {"w_samples": ws, "v": _mix((0.7, _lu(1e-2, 2.0)), (0.3, _lu(1e-8, 1e-2)))(rng, n) / 3,
            "d": np.array(ds)}


# ==================================================================== spec table


def _fp_mean_pair(name: str) -> Callable[..., Any]:
    """Float64 face of a pair-statistics helper for one pair (its (P, .) outputs at P = 1)."""
    def fp(**a: Any) -> Any:
        out = _resolve(name)(**a)
        return {k: (v[0] if isinstance(v, np.ndarray) and v.ndim >= 1 and k != "d" else v) for k, v in out.items()}
    return fp


def _darkformer_inputs(kind: str) -> Callable[[np.random.Generator, int], Columns]:
    """Inputs of the DARKFormer feature maps and estimators (small d, moderate values)."""
    def s(rng: np.random.Generator, n: int) -> Columns:
        cols: dict[str, list[Any]] = {}
        for _ in range(n):
            d, m = int(rng.integers(1, 6)), int(rng.integers(1, 5))
            sc = float(_lu(1e-3, 3.0)(rng, 1)[0])
            row: dict[str, Any]
            if kind == "b_x":
                row = {"omega": _small_vectors(rng, d, 1, 3 * sc), "lam": _lambda_matrix(rng, d)}
            elif kind == "density":
                row = {"omega": _small_vectors(rng, d, 1, 3 * sc), "sigma": _sigma_for(rng, _lambda_matrix(rng, d))}
            elif kind == "prf":
                r = int(rng.integers(1, d + 1))
                row = {"x": _small_vectors(rng, d, 1, sc), "omega": _small_vectors(rng, d, m, 2.0),
                       "m_mat": rng.standard_normal((r, d))}
            elif kind == "estimate":
                r = int(rng.integers(1, d + 1))
                row = {"q": _small_vectors(rng, d, 1, sc), "k": _small_vectors(rng, d, 1, sc),
                       "omega": _small_vectors(rng, d, m, 2.0), "m_mat": rng.standard_normal((r, d))}
            else:
                row = {"q": _small_vectors(rng, d, 1, sc), "k": _small_vectors(rng, d, 1, sc),
                       "omega": _small_vectors(rng, d, m, 2.0), "log_w": rng.standard_normal(m),
                       "sigma": _sigma_for(rng, _lambda_matrix(rng, d))}
            for k, v in row.items():
                cols.setdefault(k, []).append(v)
        return cols
    return s


def _crt_specs() -> list[Spec]:
    stats = _cols(_pair_stats, d=DIM, kernel=_const("gaussian", "softmax"))
    twin = "the value-space twin of the log form: ValueError where exp leaves float64"
    out = []
    for base in ("trig", "positive", "oprf"):
        out.append(Spec(f"crt.{base}_log_variance", stats, 300, log_space=True, scalar=("d", "kernel")))
        out.append(Spec(f"crt.{base}_variance", stats, 200, scalar=("d", "kernel"), note=twin))
    out += [
        Spec("crt.gerf_log_variance", _gerf, 300, log_space=True, scalar=("d", "s", "kernel")),
        Spec("crt.gerf_variance", _gerf, 200, scalar=("d", "s", "kernel"), note=twin),
        Spec("crt.orf_gerf_log_variance", _cols(_pair_stats, d=DIM, a=A_REAL, m=_int_lu(1, 5000),
                                                coupling=_const("iid", "orf"), kernel=_const("gaussian", "softmax")),
             150, log_space=True, scalar=("d", "m", "coupling", "kernel"), vectorised=False,
             note="the mpmath face takes scalars: one point per call"),
        Spec("crt.orf_gerf_variance", _cols(_pair_stats, d=DIM, a=A_REAL, m=_int_lu(1, 5000),
                                            coupling=_const("iid", "orf"), kernel=_const("gaussian", "softmax")),
             100, scalar=("d", "m", "coupling", "kernel"), vectorised=False, note=twin),
        Spec("crt.gerf_log_raw_moment", _raw_moment, 300, log_space=True, scalar=("k", "d")),
        Spec("crt.gerf_iid_error_moments", _cols(_pair_stats, d=_int_lu(1, 64),
                                                 a=_mix((0.5, _uni(-1.0, 1 / 16)), (0.5, _near(1 / 16, 1e-12, 1e-2))),
                                                 m=_int_lu(1, 1000)),
             40, vectorised=False, fp=_fp_gerf_moments, ref=_ref_gerf_moments,
             note="reference: E e = mu2/M, E e^2 = (mu4 + 3(M-1) mu2^2)/M^3 from the raw moments at 110 digits"),
        Spec("crt.gerf_coefficients", _cols(a=_a_complex, s=_const(-1, 1), d=DIM), 200, vectorised=False,
             ref=_ref_gerf_coefficients,
             note="reference: (A, sqrt(s(1-4A)), -(s+1)/2, ((1-4A)^(1/4))^d) in mpmath"),
        Spec("crt.log_expm1", _cols(t=_mix((0.5, NORM), (0.2, _lu(1e-300, 1e-150)), (0.2, _lu(1e4, 1e300)),
                                           (0.1, _near(math.log(2), 1e-16, 1e-3, side=1)))), 400, log_space=True),
        Spec("crt.log_i0", _cols(t=_signed(_mix((0.4, NORM), (0.2, _near(1.0, 1e-16, 1e-2)),
                                                (0.2, _near(1.0, 1e-16, 1e-2, side=1)), (0.2, _lu(1e4, 1e300))))),
             400, note="relative: the docstring promises relative accuracy for |t| < 1"),
        Spec("crt.oprf_rho_star", _u_d, 300, scalar=("d",)),
        Spec("crt.oprf_a_star", _u_d, 300, scalar=("d",)),
        Spec("crt.oprf_log_variance_ratio", _u_d, 300, scalar=("d",),
             note="relative: small-u digits are kept by design"),
        Spec("crt.orf_log_covariance_factor", _cols(_u_d_moderate), 200, scalar=("d",),
             note="relative: G = -u^2/(2(d+2)) + O(u^3) is resolved by the conditioning fallback"),
        Spec("crt.poisson_log_variance", _poisson, 200, log_space=True, scalar=("d",)),
        Spec("crt.poisson_variance", _poisson, 120, scalar=("d",), note=twin),
        Spec("crt.poisson_lambda_star", _cols(q=_mix((0.7, NORM_POS), (0.3, _lu(1e-300, 1e300))), d=DIM), 300,
             scalar=("d",)),
        Spec("crt.geometric_log_variance", _geometric, 60, log_space=True),
        Spec("crt.geometric_variance", _geometric, 40, note=twin),
        Spec("crt.geometric_log_second_ratio", _without(_geometric, "sq_diff"), 60, log_space=True,
             ref=_ref_geometric_ratio,
             note="reference: -d log p + sum log I_0(2|x_l y_l|/sqrt(1-p)) - 2 x.y with mpmath.besseli"),
        Spec("crt.dirf_log_variance", _dirf,
             25, log_space=True, vectorised=False, fp=_fp_dirf, ref=_ref_dirf,
             note="mpmath-only (dps=30) with Poisson p_k; reference: PoisRF's closed form at the exact statistics"),
        Spec("crt.poisson_log_pk", _cols(lam=_mix((0.7, _lu(1e-3, 1e3)), (0.3, _lu(1e-100, 1e-3))),
                                         k=lambda rng, n: _int_lu(1, 10**4 + 1)(rng, n) - 1),
             200, log_space=True, vectorised=False, fp=_fp_log_pk("poisson"), ref=_ref_log_pk("poisson"),
             note="returns an mpmath closure evaluated at the ambient precision"),
        Spec("crt.geometric_log_pk", _cols(p=PROB, k=lambda rng, n: _int_lu(1, 10**4 + 1)(rng, n) - 1), 200,
             log_space=True, vectorised=False,
             fp=_fp_log_pk("geometric"), ref=_ref_log_pk("geometric"),
             note="returns an mpmath closure evaluated at the ambient precision"),
        Spec("crt.pair_stats", _vector_pairs(DIM), 100, vectorised=False, fp=_fp_mean_pair("crt.pair_stats"),
             ref=_ref_pair_stats),
        Spec("crt.discrete_pair_stats", _vector_pairs(DIM), 100, vectorised=False,
             fp=_fp_mean_pair("crt.discrete_pair_stats"), ref=_ref_discrete_pair_stats),
        Spec("crt.set_stats", _sets, 40, vectorised=False, ref=_ref_set_stats),
        Spec("crt.positive_shift", _cols(_sets_xy, eps=_lu(1e-12, 1e-2)), 60, vectorised=False,
             ref=_ref_positive_shift),
    ]
    return out


def _sets_xy(rng: np.random.Generator, n: int) -> Columns:
    xs, ys = [], []
    for _ in range(n):
        d, lx, ly = int(rng.integers(1, 9)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
        sc = float(_mix((0.6, _lu(1e-2, 3.0)), (0.2, _lu(1e-150, 1e-2)), (0.2, _lu(3.0, 1e3)))(rng, 1)[0])
        x = rng.standard_normal((lx, d)) * sc
        regime = int(rng.integers(5))
        if regime == 1:  # y ~ x
            y = x[:1].repeat(ly, 0) * (1 + rng.standard_normal((ly, d)) * 1e-9)
        elif regime == 2:  # y ~ -x
            y = -x[:1].repeat(ly, 0) * (1 + rng.standard_normal((ly, d)) * 1e-9)
        elif regime == 3 and d > 1:  # mean of y orthogonal to the mean of x: x.y cancels
            y = rng.standard_normal((ly, d)) * sc
            mx = x.mean(axis=0)
            y = y - np.outer(np.ones(ly), (y.mean(axis=0) @ mx) / (mx @ mx) * mx) if mx @ mx > 0 else y
        else:
            y = rng.standard_normal((ly, d)) * sc
        xs.append(x)
        ys.append(y)
    return {"x": xs, "y": ys}


_sets = _sets_xy


def _darkformer_specs() -> list[Spec]:
    inf_note = "includes lambda_max >= 1/2 and Sigma beyond Sigma*/2, where the value is +inf"
    return [
        Spec("darkformer.sigma_star_eig", _cols(lam=_mix((0.4, _uni(0.0, 0.5)), (0.3, _near(0.5, 1e-16, 1e-2)),
                                                         (0.2, _lu(1e-300, 1e-3)), (0.1, _const(0.0)))), 300),
        Spec("darkformer.coord_log_second_moment", _coord, 300, log_space=True, note=inf_note),
        Spec("darkformer.sigma_star", _lam_only(False), 120, vectorised=False,
             note="matrices up to 5 x 5, compared normwise; eigenvalues near 1/2 and 0"),
        Spec("darkformer.log_expected_second_moment", _lam_sigma(True), 120, log_space=True, vectorised=False,
             note=inf_note),
        Spec("darkformer.log_expected_variance", _cols(_lam_sigma(True), m=_int_lu(1, 1000)), 120, log_space=True,
             vectorised=False, note=inf_note),
        Spec("darkformer.expected_variance", _cols(_lam_sigma(True), m=_int_lu(1, 1000)), 80, vectorised=False,
             ref=_ref_expected_variance, note="reference: exp of log_expected_variance's mpmath face"),
        Spec("darkformer.log_expected_kappa_sq", _lam_only(True), 150, log_space=True, vectorised=False,
             ref=_ref_kappa_sq, note="reference: -1/2 sum log(1 - 4 lambda_i^2) with mpmath.eigsy"),
        Spec("darkformer.optimal_variance", _cols(_lam_only(False), m=_int_lu(1, 1000)), 150, vectorised=False,
             ref=_ref_optimal_variance,
             note="reference: prod (1-4l^2)^(-1/2) expm1(sum atanh 2l) / m with mpmath.eigsy"),
        Spec("darkformer.variance_finite", _lam_sigma(True), 150, vectorised=False, ref=_ref_variance_finite,
             note="boolean: 2 Sigma*^-1 - Sigma^-1 > 0 decided by mpmath.eigsy"),
        Spec("darkformer.log_b_x", _darkformer_inputs("b_x"), 100, log_space=True, vectorised=False, ref=_ref_log_b_x),
        Spec("darkformer.b_x", _darkformer_inputs("b_x"), 80, vectorised=False, ref=_ref_b_x),
        Spec("darkformer.log_gaussian_density", _darkformer_inputs("density"), 100, log_space=True, vectorised=False,
             ref=_ref_log_gaussian_density),
        Spec("darkformer.mahalanobis_prf", _darkformer_inputs("prf"), 80, vectorised=False, ref=_ref_mahalanobis_prf),
        Spec("darkformer.mahalanobis_prf_estimate", _darkformer_inputs("estimate"), 80, vectorised=False,
             ref=_ref_mahalanobis_estimate),
        Spec("darkformer.importance_weighted_estimate", _darkformer_inputs("importance"), 80, vectorised=False,
             ref=_ref_importance),
        Spec("darkformer.isotropic_finite_threshold", lambda rng, n: {}, 1,
             ref=lambda a, dps: mpmath.mpf(1) / 6, vectorised=False),
    ]


def _hrf_specs() -> list[Spec]:
    pair_m = _hrf_pair_m
    same = _cols(r=NORM_POS, theta=ANGLE, m=COUNT, n=COUNT)
    ang = _cols(theta=ANGLE, n=COUNT)
    out = [
        Spec("hrf.angular_lambda_mean", _cols(theta=ANGLE), 300),
        Spec("hrf.angular_lambda_second_moment", ang, 300),
        Spec("hrf.angular_one_minus_second_moment", ang, 300),
        Spec("hrf.angular_lambda_cross_moment", ang, 300),
        Spec("hrf.gauss_rho", _cols(r=NORM_POS, sigma=SCALE), 300),
        Spec("hrf.log_w", _cols(r=NORM_POS), 300, log_space=True),
        Spec("hrf.log_max_rel_error_base", _cols(r=NORM_POS, m=COUNT), 300, log_space=True),
        Spec("hrf.log_angular_hybrid_max_rel_error_bound",
             _cols(r=_mix((0.7, _lu(1.0, 40.0)), (0.2, _near(1.0, 1e-16, 1e-3, side=1)), (0.1, _lu(40.0, 1e4))),
                   m=COUNT, n=COUNT), 300, log_space=True),
        Spec("hrf.log_mse_trig", pair_m, 300, log_space=True),
        Spec("hrf.log_mse_pos", pair_m, 300, log_space=True),
        Spec("hrf.log_mse_bipolar", _cols(_hrf_pair_m, _moments, shared=_const(0, 1)), 300, log_space=True,
             note="moments of a real lambda law (E lam^2 = mu^2 + var, ...), rounded to float64"),
        Spec("hrf.log_mse_angular_hybrid", _cols(_hrf_pair_m, n=COUNT, shared=_const(0, 1)), 300, log_space=True),
        Spec("hrf.log_mse_angular_hybrid_same_length", same, 300, log_space=True),
        Spec("hrf.log_rel_error_trig", _r_theta_m, 300, log_space=True),
        Spec("hrf.log_rel_error_pos", _r_theta_m, 300, log_space=True),
        Spec("hrf.log_rel_error_angular_hybrid", same, 300, log_space=True),
        Spec("hrf.log_max_rel_error_angular_hybrid", _cols(r=_mix((0.7, _lu(1e-2, 10.0)), (0.3, _lu(10.0, 100.0))),
                                                           m=COUNT, n=COUNT), 12, log_space=True, vectorised=False,
             note="a maximisation per point (golden section in mpmath)"),
        Spec("hrf.gauss_lambda_mean", _gauss_geometry, 300),
        Spec("hrf.gauss_lambda_second_moment", _gauss_geometry, 300),
        Spec("hrf.gauss_one_minus_second_moment", _gauss_geometry, 300),
        Spec("hrf.log_mse_gauss_hybrid", _cols(_gauss_geometry, m=COUNT, shared=_const(0, 1)), 300, log_space=True),
        Spec("hrf.log_mse_gauss_hybrid_same_length", _cols(r=NORM_POS, theta=ANGLE, m=COUNT, n=COUNT, sigma=SCALE),
             300, log_space=True),
        Spec("hrf.cexp_log_mse", _cexp, 60, log_space=True, vectorised=False,
             note="A up to 3 x 3, half with z = A x + A^-T y ~ 0"),
        Spec("hrf.pair_geometry", _vector_pairs(DIM), 100, vectorised=False, ref=_ref_pair_geometry,
             fp_domain=lambda a: bool(np.any(a["x"]) and np.any(a["y"])),  # documented: zero vector -> ValueError
             note="reference: norms and atan2(|x ^ y|, x.y) of the float vectors, summed exactly in mpmath"),
    ]
    return out


def _rfa_specs() -> list[Spec]:
    def limits(rng: np.random.Generator, n: int) -> Columns:
        sigma = SCALE(rng, n)
        st = _pair_stats(rng, n)
        w_var = _mix((0.4, lambda r, k: 1 / sigma ** 2), (0.3, lambda r, k: sigma ** 2), (0.3, _lu(1e-3, 1e3)))(rng, n)
        return {"sigma": sigma, "sq_x": st["sq_x"], "sq_y": st["sq_y"], "sq_diff": st["sq_diff"], "w_var": w_var}

    def kernel(rng: np.random.Generator, n: int) -> Columns:
        c = limits(rng, n)
        c.pop("w_var")
        return c

    def features(rng: np.random.Generator, n: int) -> Columns:
        xs, ws = [], []
        for _ in range(n):
            d, big_d = int(_int_lu(1, 64)(rng, 1)[0]), int(rng.integers(1, 9))
            xs.append(rng.standard_normal((1, d)) * float(_lu(1e-3, 30.0)(rng, 1)[0]) / math.sqrt(d))
            ws.append(rng.standard_normal((big_d, d)) * float(_lu(1e-2, 3.0)(rng, 1)[0]))
        return {"x": xs, "w": ws}

    return [
        Spec("rfa.log_rff_limit", limits, 300, log_space=True),
        Spec("rfa.log_kernel_limit", kernel, 300, log_space=True),
        Spec("rfa.trig_features", features, 80, vectorised=False, ref=_ref_trig_features,
             note="|x| <= 30, d <= 64 (the projections w.x stay where float64 rounds them to 1e-13)"),
    ]


def _simrf_specs() -> list[Spec]:
    vd = _cols(v=SERIES_ARG, d=DIM)
    vq = _cols(v=SERIES_ARG_QUAD, d=DIM_QUAD)
    twin = "value-space twin: ValueError where exp leaves float64"
    pdf_angle = _cols(w=SERIES_ARG_QUAD, d=_mix((0.5, _const(2, 3)), (0.5, _int_lu(2, 128))),
                      cos_theta=_mix((0.6, COS_HALF), (0.4, COS)))
    pdf_note = ("float64 face documented for |cos theta| <= 1/2; beyond, only the mpmath face's convergence is "
                "checked (d <= 128: the mpmath quadrature takes seconds per point)")

    def half_cos(a: dict[str, Any]) -> bool:
        return abs(a["cos_theta"]) <= 0.5

    return [
        Spec("simrf.log_conformity_kernel", _cols(w=SERIES_ARG, v=SERIES_ARG, d=DIM), 200, log_space=True),
        Spec("simrf.conformity_kernel", _cols(w=SERIES_ARG, v=SERIES_ARG, d=DIM), 100, note=twin),
        Spec("simrf.log_conformity_iid", vd, 300, log_space=True),
        Spec("simrf.conformity_iid", vd, 200, note=twin),
        Spec("simrf.log_conformity_orf", vd, 200, log_space=True),
        Spec("simrf.conformity_orf", vd, 100, note=twin),
        Spec("simrf.log_conformity_simrf", vq, 6, log_space=True, scalar=("d",)),
        Spec("simrf.conformity_simrf", vq, 3, scalar=("d",), note=twin),
        Spec("simrf.log_conformity_angle", _cols(v=SERIES_ARG_QUAD, d=DIM_QUAD, cos_theta=COS), 8, log_space=True,
             scalar=("d",)),
        Spec("simrf.conformity_angle", _cols(v=SERIES_ARG_QUAD, d=DIM_QUAD, cos_theta=COS), 3, scalar=("d",),
             note=twin),
        Spec("simrf.pair_conformity", _cols(v=SERIES_ARG_QUAD, d=DIM_QUAD, coupling=_const("iid", "orf", "simrf")), 4,
             scalar=("d", "coupling")),
        Spec("simrf.log_prf_orthogonality_gap", _cols(v=SERIES_ARG_MID, d=DIM), 200, log_space=True),
        Spec("simrf.orf_simrf_conformity_gap", _cols(v=SERIES_ARG_QUAD, d=DIM_QUAD), 6, log_space=True, scalar=("d",)),
        Spec("simrf.pdf_wij_iid", _cols(w=NORM, d=DIM), 300),
        Spec("simrf.pdf_wij_orf", _cols(w=NORM, d=DIM), 300),
        Spec("simrf.log_pdf_wij_iid", _cols(w=NORM, d=DIM), 300, log_space=True),
        Spec("simrf.log_pdf_wij_orf", _cols(w=NORM, d=DIM), 300, log_space=True),
        Spec("simrf.pdf_wij_angle", pdf_angle, 10, scalar=("d",), fp_domain=half_cos, note=pdf_note),
        Spec("simrf.log_pdf_wij_angle", pdf_angle, 10, log_space=True, scalar=("d",), fp_domain=half_cos,
             note=pdf_note),
        Spec("simrf.equal_norm_conformity_bound", _cols(v=SERIES_ARG, w=SERIES_ARG, d=DIM, m=_int_lu(2, 10**6)), 200),
        Spec("simrf.rff_orthogonality_gap", _cols(_simrf_m_le_d, z=SERIES_ARG_MID), 80, scalar=("d", "m")),
        Spec("simrf.log_rff_orthogonality_gap", _cols(_simrf_m_le_d, z=SERIES_ARG_MID), 60, log_space=True,
             vectorised=False, note="(sign, log|gap|): a wrong sign is an error of 2"),
        Spec("simrf.rff_mse_ratio_asymptotic", _asymptotic_ratio, 300,
             note="half the points with m > d near the zero of the ratio"),
        Spec("simrf.small_v_mse_coefficient", lambda rng, n: _simrf_m_le_d(rng, n, 2), 300),
        Spec("simrf.small_v_prefactor_simrf", _cols(d=DIM2), 300),
        Spec("simrf.prf_mse", _cols(v=SERIES_ARG_QUAD, d=_mix((0.5, _const(2, 3)), (0.5, _int_lu(2, 64))),
                                    m=_int_lu(1, 200), sq_norms=NORM, coupling=_const("iid", "orf", "simrf")),
             10, scalar=("d", "m", "coupling")),
        Spec("simrf.prf_orthogonality_gap", _cols(_simrf_m_le_d, v=SERIES_ARG_MID, sq_norms=NORM), 150,
             scalar=("d", "m"), ref=_ref_prf_gap,
             note="reference: (m-1)/m e^{-2 sq} (e^{v^2} - 1F1(d; d/2; v^2/2)) with the digits it cancels"),
        Spec("simrf.prf_mse_from_conformity", _simrf_rho, 200, ref=_ref_prf_from_conformity,
             fp_domain=_prf_from_conformity_conditioning,
             note="documented as cancelling (use prf_mse): float64 compared where the bracket loses < 1 digit"),
        Spec("simrf.rff_mse", _cols(_simrf_m_le_d, z=SERIES_ARG_MID, coupling=_const("iid", "orf")), 60,
             vectorised=True, scalar=("d", "m", "coupling"), ref=_ref_rff_mse,
             note="reference: eq (74) in mpmath with the digits e^{-z^2} - 1F1 cancels"),
        Spec("simrf.rff_mse_ratio_orf_iid", _cols(_simrf_m_le_d, z=_mix((0.9, SERIES_ARG_MID_POS),
                                                                        (0.1, _lu(1e-300, 1e-9)))),
             60, scalar=("d", "m"), ref=_ref_rff_ratio),
        Spec("simrf.simplex_cos", _cols(d=DIM2), 100, ref=_ref_simplex_cos),
        Spec("simrf.conformity_estimate", _w_samples, 40, vectorised=False, ref=_ref_conformity_estimate),
        Spec("simrf.conformity_of_ensemble", _ensembles, 40, vectorised=False, ref=_ref_conformity_of_ensemble),
        Spec("simrf.equal_norm_conformity", _directions, 40, vectorised=False, ref=_ref_equal_norm_conformity),
    ]


#: every swept function, in the order of the table
SPECS: tuple[Spec, ...] = tuple(_crt_specs() + _darkformer_specs() + _hrf_specs() + _rfa_specs() + _simrf_specs())

#: public names that the sweep does not evaluate, each with the check that covers it
COVERED_BY: tuple[CoveredBy, ...] = (
    CoveredBy("crt.gerf_optimize", "crt.gerf_log_variance (its objective); tests/test_crt_closed_forms.py",
              "an optimiser (L-BFGS-B over A): no closed-form value to compare; its objective is swept"),
    CoveredBy("crt.geometric_p_star", "crt.geometric_log_second_ratio (its objective); tests/test_crt_closed_forms.py",
              "an optimiser (Brent over logit p): the minimiser is tested against a grid; its objective is swept"),
    CoveredBy("darkformer.optimise_sigma", "darkformer.log_expected_variance (its objective); tests/test_darkformer.py",
              "a numerical optimiser (BFGS, Nelder-Mead), tested against Sigma* of Thm 3.2"),
    CoveredBy("darkformer.nested_mc_variance", "darkformer.log_expected_variance; tests/test_darkformer.py",
              "a Monte Carlo estimator (random output): its exact second output is log_expected_variance, swept"),
    CoveredBy("darkformer.check_lambda", "darkformer.sigma_star, darkformer.log_expected_variance",
              "an input validator (returns the symmetrised matrix): exercised by every DARKFormer matrix spec"),
    CoveredBy("darkformer.check_spd", "darkformer.log_expected_second_moment, darkformer.log_gaussian_density",
              "an input validator (returns the symmetrised matrix): exercised by the specs that take Sigma"),
    CoveredBy("rfa.check_sigma", "rfa.log_rff_limit, rfa.log_kernel_limit",
              "an input validator (returns None): exercised by both RFA limit specs"),
)


#: estimators swept with the closed forms: those that were closed forms before they moved to
#: ``rfcheck.estimators`` (``None``: every name of the module).  The NumPy Monte Carlo estimators and
#: attention algorithms there (``estimators.crt``, ``.hrf``, rfa's recurrences) are random or
#: algorithmic, not closed forms: their tests check them against the closed forms instead.
SWEPT_ESTIMATORS: dict[str, tuple[str, ...] | None] = {"darkformer": None, "rfa": ("trig_features",)}


def public_closed_forms() -> set[str]:
    """Qualified names of every public closed form (``__all__`` of each ``rfcheck.closed_forms`` module)
    and of the estimators swept with them (:data:`SWEPT_ESTIMATORS`).

    Returns
    -------
    set of str
        ``"<paper>.<name>"`` for every such name.
    """
    out: set[str] = set()
    for paper in PAPERS:
        mod = importlib.import_module(f"rfcheck.closed_forms.{paper}")
        out |= {f"{paper}.{n}" for n in mod.__all__}
        if paper in SWEPT_ESTIMATORS:
            names = SWEPT_ESTIMATORS[paper] or importlib.import_module(f"rfcheck.estimators.{paper}").__all__
            out |= {f"{paper}.{n}" for n in names}
    return out


def coverage() -> dict[str, Spec | CoveredBy]:
    """Every name the sweep accounts for: its :class:`Spec`, or its :class:`CoveredBy` entry.

    Returns
    -------
    dict
        Qualified name to spec or covered-by entry.

    Raises
    ------
    ValueError
        If a name has both, or two specs.
    """
    out: dict[str, Spec | CoveredBy] = {}
    for item in (*SPECS, *COVERED_BY):
        if item.function in out:
            raise ValueError(f"{item.function} has two entries in the accuracy sweep")
        out[item.function] = item
    return out


# ===================================================================== evaluation


def _py(v: Any) -> Any:
    """A numpy scalar as the Python number it holds (arrays and strings unchanged)."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def _rows(cols: Columns, n: int) -> list[dict[str, Any]]:
    return [{k: _py(v[i]) for k, v in cols.items()} for i in range(n)]


def _call(f: Callable[[], Any]) -> tuple[str, Any]:
    """``("value", result)``, ``("valueerror", message)`` or ``("exception", "Type: message")``."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return "value", f()
    except ValueError as exc:
        return "valueerror", str(exc)
    except Exception as exc:  # a face that fails otherwise: counted against the function
        return "exception", f"{type(exc).__name__}: {exc}"


def _fp_values(spec: Spec, fn: Callable[..., Any], rows: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """The float64 face at every row: one call per group of rows sharing the scalar arguments."""
    out: list[tuple[str, Any] | None] = [None] * len(rows)
    if spec.vectorised and rows:
        groups: dict[Any, list[int]] = {}
        for i, r in enumerate(rows):
            key = tuple((k, r[k]) if k in spec.scalar else (k, np.shape(r[k])) for k in r)
            groups.setdefault(key, []).append(i)
        for idx in groups.values():
            first = rows[idx[0]]
            args = {k: (first[k] if k in spec.scalar else np.array([rows[i][k] for i in idx])) for k in first}
            status, val = _call(lambda args=args: fn(**args, **spec.kwargs))
            arr = np.asarray(val) if status == "value" else None
            if arr is not None and arr.shape == (len(idx),) and arr.dtype != object:
                for j, i in enumerate(idx):
                    out[i] = ("value", arr[j])
    for i, r in enumerate(rows):
        if out[i] is None:
            out[i] = _call(lambda r=r: fn(**r, **spec.kwargs))
    return out  # type: ignore[return-value]


def _leaves(x: Any) -> list[list[Any]] | None:
    """The numbers of a result as a list of flat leaves (``None`` for ``None``)."""
    if x is None:
        return None
    if isinstance(x, dict):
        out: list[list[Any]] = []
        for k in sorted(x):
            sub = _leaves(x[k])
            if sub is None:
                return None
            out += sub
        return out
    if isinstance(x, mpmath.matrix):
        return [[x[i, j] for i in range(x.rows) for j in range(x.cols)]]
    if isinstance(x, tuple):
        out = []
        for e in x:
            sub = _leaves(e)
            if sub is None:
                return None
            out += sub
        return out
    if isinstance(x, list):
        if any(isinstance(e, list | tuple | np.ndarray | dict) for e in x):
            return [[v for e in x for leaf in (_leaves(e) or []) for v in leaf]]
        return [list(x)]
    if isinstance(x, np.ndarray):
        return [list(x.ravel())]
    return [[x]]


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool | np.bool_)


def _mpnum(v: Any) -> Any:
    if isinstance(v, mpmath.mpf | mpmath.mpc):
        return v
    if _is_bool(v):
        return mpmath.mpf(int(v))
    if isinstance(v, complex | np.complexfloating):
        return mpmath.mpc(complex(v))
    return mpmath.mpf(float(v)) if not isinstance(v, int | np.integer) else mpmath.mpf(int(v))


def _finite(v: Any) -> bool:
    return bool(mpmath.isfinite(v)) if not isinstance(v, mpmath.mpc) else bool(
        mpmath.isfinite(v.real) and mpmath.isfinite(v.imag))


def _isnan(v: Any) -> bool:
    return bool(mpmath.isnan(v)) if not isinstance(v, mpmath.mpc) else bool(
        mpmath.isnan(v.real) or mpmath.isnan(v.imag))


def _representable(ref: list[list[Any]], log_space: bool) -> bool:
    """Whether float64 can hold the reference to 1e-12 (finite, in range, not below the normal range)."""
    for leaf in ref:
        if any(_is_bool(v) for v in leaf):
            continue
        vals = [_mpnum(v) for v in leaf]
        if not all(_finite(v) for v in vals):
            return False
        scale = max((abs(v) for v in vals), default=mpmath.mpf(0))
        if scale > FLOAT_MAX or (not log_space and scale != 0 and scale < FLOAT_TINY):
            return False
    return True


def _scale(floor: Any, magnitudes: list[Any], log_space: bool) -> Any:
    """Denominator of an error: the largest reference magnitude, floored at ``tiny`` (values), or
    1 with :data:`LOG_REL` of the magnitude (log-space: absolute error, except where float64's own
    spacing of the logarithm approaches the target)."""
    if log_space:
        return max([floor, *(LOG_REL * m for m in magnitudes)])
    return max([floor, *magnitudes])


def _error(fp: list[list[Any]], ref: list[list[Any]], log_space: bool) -> tuple[float, bool, bool]:
    """``(error, nonfinite, reference_nan)`` of a float64 result against its reference, leaf by leaf.

    ``nonfinite``: a NaN or infinity that the reference does not have.  A reference beyond the
    float64 range is matched by the infinity of its sign.
    """
    floor = mpmath.mpf(1) if log_space else mpmath.mpf(FLOAT_TINY)
    worst, nonfinite = 0.0, False
    with mpmath.workdps(40):
        for f_leaf, r_leaf in zip(fp, ref, strict=True):
            if any(_is_bool(v) for v in (*f_leaf, *r_leaf)):
                if [bool(v) for v in f_leaf] != [bool(v) for v in r_leaf]:
                    worst = max(worst, 1.0)
                continue
            r = [_mpnum(v) for v in r_leaf]
            f = [_mpnum(v) for v in f_leaf]
            if any(_isnan(v) for v in r):
                return math.inf, False, True
            finite_r = [abs(v) for v in r if _finite(v)]
            scale = _scale(floor, finite_r, log_space)
            for fv, rv in zip(f, r, strict=True):
                if not _finite(rv) or abs(rv) > FLOAT_MAX:  # beyond float64: +-inf of the right sign is right
                    if not _isnan(fv) and fv == (rv if not _finite(rv) else mpmath.sign(rv) * mpmath.inf):
                        continue
                    if not _finite(rv):  # an exact infinity (e.g. log 0) missed
                        nonfinite = nonfinite or not _finite(fv)
                        worst = math.inf
                        continue
                if not _finite(fv):
                    nonfinite = True
                    worst = math.inf
                    continue
                worst = max(worst, float(abs(fv - rv) / scale))
    return worst, nonfinite, False


def _converged(lo: list[list[Any]], hi: list[list[Any]], log_space: bool) -> bool:
    floor = mpmath.mpf(1) if log_space else mpmath.mpf(FLOAT_TINY)
    if len(lo) != len(hi):
        return False
    with mpmath.workdps(DPS_CHECK + 10):
        for a_leaf, b_leaf in zip(lo, hi, strict=True):
            if len(a_leaf) != len(b_leaf):
                return False
            if any(_is_bool(v) for v in (*a_leaf, *b_leaf)):
                if [bool(v) for v in a_leaf] != [bool(v) for v in b_leaf]:
                    return False
                continue
            a, b = [_mpnum(v) for v in a_leaf], [_mpnum(v) for v in b_leaf]
            scale = _scale(floor, [abs(v) for v in b if _finite(v)], log_space)
            for u, v in zip(a, b, strict=True):
                if not (_finite(u) and _finite(v)):
                    if not (u == v):
                        return False
                elif abs(u - v) > CONVERGENCE_TOL * scale:
                    return False
    return True


def _jsonable(v: Any) -> Any:
    """JSON-safe form of an input or value: floats stay floats (non-finite ones become strings),
    complex numbers ``{"re", "im"}`` (as in the verdict reports), arrays nested lists, mpmath
    numbers floats or strings."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, np.ndarray | list | tuple):
        return [_jsonable(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v)]
    if isinstance(v, mpmath.matrix):
        return [[_jsonable(v[i, j]) for j in range(v.cols)] for i in range(v.rows)]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool | int | str) or v is None:
        return v
    if isinstance(v, complex | mpmath.mpc):
        return {"re": _jsonable(float(mpmath.re(v))), "im": _jsonable(float(mpmath.im(v)))}
    if isinstance(v, mpmath.mpf):
        f = float(v)
        return f if math.isfinite(f) and (f != 0 or v == 0) else mpmath.nstr(v, 17)
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    return str(v)


def _short(v: Any) -> str:
    """A compact string of a value (for the worst value/reference of an entry)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, mpmath.mpf | mpmath.mpc):
        return mpmath.nstr(v, 17)
    if isinstance(v, np.ndarray) and v.size > 8:
        return f"array{v.shape}"
    if isinstance(v, mpmath.matrix):
        return f"matrix({v.rows}x{v.cols})"
    s = repr(v)
    return s if len(s) <= 200 else s[:197] + "..."


def _escalated_dps(fval: Any) -> int:
    """Digits of the third reference of a disputed point: twice :data:`DPS_CHECK`, plus the decimal
    exponent of a tiny float64 value (a reference that rounds ``log(1 + 1e-200)`` to 0 needs 200 more)."""
    extra = 0
    if isinstance(fval, float | np.floating) and math.isfinite(fval) and 0 < abs(fval) < 1:
        extra = min(600, int(-math.log10(abs(fval))))
    return 2 * DPS_CHECK + extra


def _judge(spec: Spec, row: dict[str, Any], fstat: str, fval: Any,
           ref_fn: Callable[[dict[str, Any], int], Any]) -> tuple[dict[str, int], float | None, Any, list[str]]:
    """One point: ``(counts, error, reference, messages)``.

    ``counts`` has the tally keys to increment (``excluded`` when both faces refuse the point);
    ``error`` is ``None`` where the reference did not converge (the point counts against the
    function but says nothing about the float64 face) and ``inf`` for a refusal, a non-finite
    result or a failing face.
    """
    rstat, rval = _call(lambda: ref_fn(dict(row), DPS))
    if fstat == "valueerror" and rstat == "valueerror":
        return {"excluded": 1}, None, rval, []
    rleaves = _leaves(rval) if rstat == "value" else None
    if rleaves is None:
        return {"reference_errors": 1}, math.inf, rval, [f"reference: {rval}"]
    cstat, cval = _call(lambda: ref_fn(dict(row), DPS_CHECK))
    cleaves = _leaves(cval) if cstat == "value" else None
    if cleaves is None or not _converged(rleaves, cleaves, spec.log_space):
        why = f"reference at {DPS_CHECK} digits: {cval}" if cleaves is None else \
            f"reference at {DPS} and {DPS_CHECK} digits differ"
        return {"reference_unconverged": 1}, None, rval, [why]
    if fstat == "skipped":
        return {"reference_only": 1}, None, rval, []
    if fstat == "valueerror":
        if _representable(rleaves, spec.log_space):
            return {"refused": 1}, math.inf, rval, [f"refused: {fval}"]
        return {"flagged": 1}, 0.0, rval, []
    if fstat == "exception":
        return {"errors": 1}, math.inf, rval, [f"float64 face: {fval}"]
    fleaves = _leaves(fval)
    if fleaves is None or [len(x) for x in fleaves] != [len(x) for x in rleaves]:
        return {"errors": 1}, math.inf, rval, [f"float64 result {_short(fval)} does not match the reference's shape"]
    e, nonfinite, ref_nan = _error(fleaves, rleaves, spec.log_space)
    if ref_nan:
        return {"reference_errors": 1}, math.inf, rval, ["reference is NaN"]
    if e > TOL:  # disputed: is the reference right?  Once more, at many more digits
        dps = _escalated_dps(fval)
        hstat, hval = _call(lambda: ref_fn(dict(row), dps))
        hleaves = _leaves(hval) if hstat == "value" else None
        if hleaves is not None and not _converged(rleaves, hleaves, spec.log_space):
            return {"reference_unconverged": 1}, None, rval, [f"reference at {DPS} digits differs from {dps} digits"]
    return {"nonfinite": int(nonfinite)}, e, rval, []


def _evaluate(spec: Spec, n: int, seed: int) -> dict[str, Any]:
    """The entry of one function: ``n`` points of its spec, float64 against the reference."""
    t0 = time.perf_counter()
    rng = np.random.default_rng([seed, zlib.crc32(spec.function.encode())])
    fn = spec.fp or _resolve(spec.function)
    ref_fn = spec.ref
    if ref_fn is None:
        public = _resolve(spec.function)

        def ref_fn(a: dict[str, Any], dps: int) -> Any:
            return public(**a, **spec.kwargs, backend="mpmath", dps=dps)

    cols = spec.sample(rng, n)
    if cols:  # (a sampler may return fewer rows than asked for)
        rows = _rows(cols, min(n, *(len(v) for v in cols.values())))
    else:
        rows = [{} for _ in range(n)]
    in_fp = [spec.fp_domain(r) if spec.fp_domain else True for r in rows]
    fp_rows = [r for r, ok in zip(rows, in_fp, strict=True) if ok]
    fp_iter = iter(_fp_values(spec, fn, fp_rows))
    tally = {"points": 0, "nonfinite": 0, "refused": 0, "flagged": 0, "excluded": 0, "reference_unconverged": 0,
             "reference_errors": 0, "errors": 0, "reference_only": 0}
    worst: tuple[float, int] = (-1.0, -1)
    details: dict[int, tuple[Any, Any]] = {}
    messages: list[str] = []
    truncated = False

    def note(msg: str) -> None:
        if len(messages) < 5 and msg not in messages:
            messages.append(msg[:300])

    unconverged_at: int | None = None
    for i, row in enumerate(rows):
        if time.perf_counter() - t0 > TIME_LIMIT_S:
            truncated = True
            break
        fstat, fval = next(fp_iter) if in_fp[i] else ("skipped", None)
        counts, err, rval, msgs = _judge(spec, row, fstat, fval, ref_fn)
        for m in msgs:
            note(m)
        if counts.get("excluded"):
            tally["excluded"] += 1
            note(f"both faces refuse (outside the domain): {fval}")
            continue
        tally["points"] += 1
        for k, v in counts.items():
            tally[k] += v
        if counts.get("reference_unconverged"):
            unconverged_at = i if unconverged_at is None else unconverged_at
        elif err is not None and err > worst[0]:
            worst = (err, i)
            details[i] = (fval, rval)
    bad = ("nonfinite", "refused", "reference_unconverged", "reference_errors", "errors")
    max_err = max(worst[0], 0.0)
    entry: dict[str, Any] = {
        "function": spec.function,
        "points": tally["points"],
        "max_rel_error": max_err if math.isfinite(max_err) else "inf",
        "worst_input": _jsonable(rows[worst[1]]) if worst[1] >= 0 else {},
        "worst_value": _short(details[worst[1]][0]) if worst[1] >= 0 else None,
        "worst_reference": _short(details[worst[1]][1]) if worst[1] >= 0 else None,
        "log_space": spec.log_space,
        "meets": bool(tally["points"] > 0 and max_err <= TOL and not any(tally[k] for k in bad)),
        **{k: v for k, v in tally.items() if k != "points"},
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if unconverged_at is not None:
        entry["unconverged_input"] = _jsonable(rows[unconverged_at])
    if truncated:
        entry["truncated"] = True
    if messages:
        entry["messages"] = messages
    return entry


def _failed_entry(name: str, log_space: bool, exc: BaseException, t0: float) -> dict[str, Any]:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return {"function": name, "points": 0, "max_rel_error": "inf", "worst_input": {}, "worst_value": None,
            "worst_reference": None, "log_space": log_space, "meets": False, "nonfinite": 0, "refused": 0,
            "flagged": 0, "excluded": 0, "reference_unconverged": 0, "reference_errors": 0, "errors": 0,
            "reference_only": 0, "seconds": round(time.perf_counter() - t0, 2),
            "error": f"{type(exc).__name__}: {exc}{where}"}


def _select(functions: Iterable[str | Spec] | None) -> list[Spec]:
    if functions is None:
        return list(SPECS)
    by_name = {s.function: s for s in SPECS}
    covered = {c.function: c for c in COVERED_BY}
    out: list[Spec] = []
    for f in functions:
        if isinstance(f, Spec):
            out.append(f)
        elif f in by_name:
            out.append(by_name[f])
        elif f in covered:
            raise ValueError(f"{f} is not swept: covered by {covered[f].covered_by} ({covered[f].reason})")
        else:
            raise ValueError(f"unknown closed form {f!r}; the sweep covers {len(by_name)} functions "
                             f"(e.g. {', '.join(sorted(by_name)[:3])}; 'rfcheck accuracy' lists them all)")
    return out


def run_accuracy(quick: bool = False, functions: Iterable[str | Spec] | None = None, seed: int = 0,
                 progress: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Sweep the float64 faces of the public closed forms against converged references.

    Parameters
    ----------
    quick : bool
        :data:`QUICK_POINTS` points per function (for tests) instead of each spec's ``points``.
    functions : iterable of str or Spec, optional
        Qualified names (``"crt.gerf_log_variance"``) or specs of their own; default every
        function of :data:`SPECS`.
    seed : int
        Seed of the points (combined with each function's name).
    progress : callable, optional
        Called with each entry as it finishes.

    Returns
    -------
    list of dict
        One entry per function: ``function``, ``points``, ``max_rel_error`` (a float, or
        ``"inf"``), ``worst_input`` (JSON-safe dict of arguments), ``worst_value``,
        ``worst_reference``, ``nonfinite``, ``refused``, ``flagged``, ``excluded``,
        ``reference_unconverged``, ``reference_errors``, ``errors``, ``reference_only``,
        ``log_space``, ``meets``, ``seconds``; ``error`` when the function could not be swept
        at all (its entry then has ``meets: false``), ``messages`` with the first distinct
        exception messages, ``truncated`` when :data:`TIME_LIMIT_S` stopped it.

    Raises
    ------
    ValueError
        For an unknown name, or a name that is covered by another check (before any work).
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0; got {seed!r}")
    specs = _select(functions)
    entries = []
    for spec in specs:
        t0 = time.perf_counter()
        try:
            entry = _evaluate(spec, QUICK_POINTS if quick else spec.points, int(seed))
        except Exception as exc:  # a broken spec or sampler: an entry that says so, and the sweep goes on
            entry = _failed_entry(spec.function, spec.log_space, exc, t0)
        entries.append(entry)
        if progress is not None:
            progress(entry)
    return entries


# ====================================================================== reports


def _fmt_err(v: Any) -> str:
    if isinstance(v, str):
        return v
    return "0" if v == 0 else f"{v:.1e}"


def _flat(v: Any) -> list[Any]:
    return [x for e in v for x in _flat(e)] if isinstance(v, list) else [v]


def _fmt_input(d: dict[str, Any], limit: int = 160) -> str:
    parts = []
    for k, v in d.items():
        if isinstance(v, list):
            flat = _flat(v)
            s = f"[{len(flat)} values]" if len(flat) > 3 else "[" + ", ".join(_fmt_scalar(x) for x in flat) + "]"
        else:
            s = _fmt_scalar(v)
        parts.append(f"{k}={s}")
    out = ", ".join(parts)
    return out if len(out) <= limit else out[: limit - 3] + "..."


def _fmt_scalar(v: Any) -> str:
    if isinstance(v, dict):  # a complex number of _jsonable
        return str(complex(float(v["re"]), float(v["im"])))
    return f"{v:.17g}" if isinstance(v, float) else str(v)


def format_entry(entry: dict[str, Any]) -> str:
    """One line of progress for a finished :func:`run_accuracy` entry.

    Parameters
    ----------
    entry : dict
        An entry of :func:`run_accuracy`.

    Returns
    -------
    str
        Function, points, largest error, verdict and time.
    """
    if entry.get("error"):
        return f"{entry['function']}: NOT SWEPT ({entry['error']})"
    problems = [f"{entry[k]} {k.replace('_', ' ')}" for k in ("nonfinite", "refused", "reference_unconverged",
                                                              "reference_errors", "errors") if entry.get(k)]
    verdict = "meets" if entry["meets"] else "DOES NOT MEET"
    return (f"{entry['function']}: {entry['points']} points, max error {_fmt_err(entry['max_rel_error'])}"
            f"{' (' + ', '.join(problems) + ')' if problems else ''}: {verdict} ({entry.get('seconds', 0)} s)")


def format_table(entries: list[dict[str, Any]]) -> str:
    """A Markdown table of :func:`run_accuracy` entries (or of their JSON form).

    Parameters
    ----------
    entries : list of dict
        Entries of :func:`run_accuracy`, as returned or read back from its JSON.

    Returns
    -------
    str
        One row per function: points, largest error, metric, counts of non-finite results,
        refusals and unconverged references, whether it meets the target, and the worst input.
    """
    head = ("| function | points | max error | metric | nonfinite | refused | unconverged | meets | worst input |\n"
            "|---|---:|---:|---|---:|---:|---:|---|---|")
    rows = [head]
    for e in entries:
        other = e.get("reference_errors", 0) + e.get("errors", 0)
        meets = "yes" if e["meets"] else ("**no**" + (f" ({e['error']})" if e.get("error") else
                                                       f" ({other} face errors)" if other else ""))
        worst = _fmt_input(e["worst_input"]).replace("|", "\\|") if e["worst_input"] else "-"
        rows.append(f"| `{e['function']}` | {e['points']} | {_fmt_err(e['max_rel_error'])} | "
                    f"{'abs (log)' if e['log_space'] else 'rel'} | {e['nonfinite']} | {e['refused']} | "
                    f"{e['reference_unconverged']} | {meets} | {worst} |")
    return "\n".join(rows)


def format_page(entries: list[dict[str, Any]], *, command: str, date: str) -> str:
    """The documentation page of a sweep: what it is, how it was run, the table and the exemptions.

    Parameters
    ----------
    entries : list of dict
        Entries of :func:`run_accuracy`.
    command : str
        The command line that produced them.
    date : str
        When it ran (ISO date).

    Returns
    -------
    str
        Markdown.
    """
    met = sum(bool(e["meets"]) for e in entries)
    points = sum(e["points"] for e in entries)
    seconds = sum(e.get("seconds", 0) for e in entries)
    covered = "\n".join(f"| `{c.function}` | {c.covered_by} | {c.reason} |" for c in COVERED_BY)
    notes = "\n".join(f"* `{s.function}`: {s.note}" for s in SPECS if s.note)
    return f"""# Accuracy of the closed forms

*Generated by `{command}` on {date}; do not edit by hand.*

`rfcheck accuracy` evaluates every public closed form of `rfcheck.closed_forms` at random
points of its documented domain and compares its float64 face (evaluated vectorised) with a
reference: the function's own mpmath face at {DPS} digits -- or, for a function without one,
an independent mpmath expression written in its spec in `rfcheck/accuracy.py` -- checked for
convergence against {DPS_CHECK} digits (a point whose two references differ by more than
{CONVERGENCE_TOL:g} relative counts as *unconverged*, against the function).  The points
over-sample the hard regions: tiny and huge norms, `d` up to 1024, near-cancellation
(`x ~ +-y`, angles near 0 and pi) and parameters near the edges of their validity
(`A -> 1/8`, `p -> 1`, `lambda -> 1/2`); they are drawn from a generator seeded by the seed
and the function's name, so the run is reproducible.

The error of a point is relative (`|f - r| / max(|r|, tiny)`, `tiny` the smallest normal
float64), or absolute for log-space values (`|f - r| / max(1, 1e-3 |r|)`: absolute, except
above 1000 where float64's own spacing of the logarithm approaches the target), normwise for
arrays.  A point where the float64 face misses the target is recomputed at many more digits
(twice {DPS_CHECK}, plus the decimal exponent of a tiny value); if that disagrees with the
{DPS}-digit reference, the point is blamed on the reference (*unconverged*), not on float64.
A function **meets** the target when every point is within {TOL:g}, no NaN or inf is returned
that the reference does not have, no representable value is refused (a `ValueError` is
accepted only where float64 cannot hold the answer), and every reference converged.  Points
that both faces refuse lie outside the domain and are not counted.

**{met} of {len(entries)} functions meet the target** ({points} points, {seconds:.0f} s of
evaluation on one core).

{format_table(entries)}

## Not swept, covered elsewhere

| function | covered by | reason |
|---|---|---|
{covered}

## Notes on the domains

{notes}
"""

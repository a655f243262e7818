"""Users' own estimators and samplers, described with plain Python.

A random-feature estimator is two feature maps and a way to draw projections:

    K_hat(x, y) = (1/M) sum_m Re f1(w_m, x) f2(w_m, y),   (w_1..w_M) ~ sampler

(no conjugate is taken: a TrigRF user writes ``f2 = exp(-i w.y)``).  Feature maps are
vectorised over the leading axes: ``f1(W, x)`` receives ``W`` of shape ``(..., M, d)`` and
``x`` of shape ``(d,)`` and returns ``(..., M)``.  A sampler is a callable
``sampler(rng, n, M, d) -> (n, M, d)`` drawing ``n`` independent ensembles from a NumPy
``Generator``; :func:`per_draw` adapts a third-party ``f(rng, M, d) -> (M, d)``, and the
names of the built-in couplings (``"iid"``, ``"orf"``, ``"simrf"``) are accepted wherever
a sampler is.  :func:`antithetic` turns any sampler into one with antithetic pairs.

The checks live in :mod:`rfcheck.testing` (pytest helpers, :func:`rfcheck.testing.check_estimator`)
and :mod:`rfcheck.audit` (properties of a sampler).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfcheck import rng as _rng

__all__ = ["BoundEstimator", "Estimator", "Sampler", "antithetic", "builtin_sampler", "per_draw", "resolve_sampler"]

Sampler = Callable[[np.random.Generator, int, int, int], np.ndarray]
FeatureMap = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: ensembles drawn per call of a sampler (bounds memory to about 2**21 numbers)
_CHUNK_NUMBERS = 1 << 21


def builtin_sampler(name: str) -> Sampler:
    """The NumPy sampler of a built-in coupling (``iid``, ``orf``, ``simrf``): equal in law
    to the Numba engine's ensembles (:func:`rfcheck.montecarlo.simulate_numpy` uses it)."""
    from rfcheck.montecarlo import _numpy_directions as numpy_ensembles

    if name not in ("iid", "orf", "simrf"):
        raise ValueError(f"built-in samplers are 'iid', 'orf' and 'simrf'; got {name!r}")

    def sample(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
        return numpy_ensembles(rng, name, n, M, d)

    sample.__name__ = f"builtin_{name}"
    return sample


def per_draw(fn: Callable[[np.random.Generator, int, int], np.ndarray]) -> Sampler:
    """Adapt a one-ensemble sampler ``fn(rng, M, d) -> (M, d)`` to the batched protocol."""

    def sample(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
        return np.stack([np.asarray(fn(rng, M, d), dtype=float) for _ in range(n)])

    sample.__name__ = getattr(fn, "__name__", "per_draw")
    return sample


def resolve_sampler(sampler: str | Sampler) -> Sampler:
    """A sampler callable from a built-in coupling name or a callable (returned as is)."""
    if isinstance(sampler, str):
        return builtin_sampler(sampler)
    if not callable(sampler):
        raise ValueError(f"a sampler is a coupling name or a callable (rng, n, M, d) -> (n, M, d); got {sampler!r}")
    return sampler


def antithetic(sampler: str | Sampler) -> Sampler:
    """Antithetic pairs: ``ceil(M/2)`` projections from ``sampler``, each followed by its
    negative (``w_1, -w_1, w_2, -w_2, ...``, truncated to ``M`` rows) -- the convention of the
    engine's ``<base>-anti`` couplings and of :func:`rfcheck.couplings.antithetic`.

    Rows stay marginally ``N(0, I_d)`` (the law is symmetric).
    """
    base = resolve_sampler(sampler)

    def sample(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
        half = draw(base, rng, n, (M + 1) // 2, d)
        out = np.empty((n, 2 * half.shape[1], d))
        out[:, 0::2] = half
        out[:, 1::2] = -half
        return out[:, :M]

    sample.__name__ = f"antithetic_{getattr(base, '__name__', 'sampler')}"
    return sample


def draw(sampler: Sampler, rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
    """Call ``sampler`` and check what it returned (shape ``(n, M, d)``, finite reals)."""
    W = np.asarray(sampler(rng, n, M, d))
    if W.shape != (n, M, d):
        raise ValueError(f"sampler {getattr(sampler, '__name__', sampler)!r} returned shape {W.shape}; "
                         f"expected (n, M, d) = {(n, M, d)}")
    if np.iscomplexobj(W) or not np.all(np.isfinite(W)):
        raise ValueError("sampler returned non-finite or complex projections")
    return W.astype(float, copy=False)


@dataclass(frozen=True)
class Estimator:
    """A random-feature estimator ``(1/M) sum_m Re f1(w_m, x) f2(w_m, y)``.

    Attributes
    ----------
    f1, f2 : callable
        ``f(W, x)`` with ``W`` of shape ``(..., M, d)``, ``x`` of shape ``(d,)``, returning
        ``(..., M)`` (real or complex).
    kernel : callable
        ``kernel(x, y) -> float``, the value the estimator is meant to be unbiased for.
    sampler : str or callable
        A built-in coupling name or a :data:`Sampler`.
    name : str
        For reports.
    """

    f1: FeatureMap
    f2: FeatureMap
    kernel: Callable[[np.ndarray, np.ndarray], float]
    sampler: str | Sampler = "iid"
    name: str = "custom"

    def at(self, x: Any, y: Any) -> BoundEstimator:
        """The estimator at one input pair."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim != 1 or x.shape != y.shape or x.size == 0:
            raise ValueError(f"x and y must be vectors of the same length; got shapes {x.shape}, {y.shape}")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            raise ValueError("x and y must be finite")
        return BoundEstimator(self, x, y)


@dataclass(frozen=True)
class BoundEstimator:
    """An :class:`Estimator` at a fixed pair ``(x, y)``."""

    estimator: Estimator
    x: np.ndarray
    y: np.ndarray

    @property
    def target(self) -> float:
        return float(self.estimator.kernel(self.x, self.y))

    def replicas(self, m: int, n_trials: int, *, seed: int = 0, sampler: str | Sampler | None = None) -> np.ndarray:
        """``n_trials`` independent values of the ``m``-feature estimate (seeded; same seed,
        same numbers).  ``sampler`` overrides the estimator's own."""
        if not (isinstance(m, int | np.integer) and m >= 1):
            raise ValueError(f"m must be a positive integer; got {m!r}")
        if not (isinstance(n_trials, int | np.integer) and n_trials >= 2):
            raise ValueError(f"n_trials must be an integer >= 2; got {n_trials!r}")
        s = resolve_sampler(self.estimator.sampler if sampler is None else sampler)
        rng = np.random.default_rng(_rng.seed_key(seed))
        d = self.x.size
        out = np.empty(n_trials)
        chunk = max(1, min(n_trials, _CHUNK_NUMBERS // (m * d)))
        for start in range(0, n_trials, chunk):
            n = min(chunk, n_trials - start)
            W = draw(s, rng, n, m, d)
            a = np.asarray(self.estimator.f1(W, self.x))
            b = np.asarray(self.estimator.f2(W, self.y))
            if a.shape != (n, m) or b.shape != (n, m):
                raise ValueError(f"feature maps returned shapes {a.shape}, {b.shape} for W of shape {W.shape}; "
                                 f"expected {(n, m)} each")
            out[start:start + n] = np.real(a * b).mean(axis=1)
        return out

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

Layouts.  Third-party samplers often return the projections as *columns* (``(d, M)``,
features ``x @ W``, scikit-learn's convention) rather than rows; :func:`per_draw` with
``layout="columns"`` and :func:`columns` adapt them.  A transposed sampler is caught by the
shape check when ``M != d`` (the error says so) and, when ``M == d``, by the audit
(:func:`rfcheck.audit.audit_sampler` compares the statistics of rows and columns).

Auxiliary random variables.  Feature maps may take random inputs besides the projections --
the phase ``b ~ U[0, 2 pi)`` of random Fourier features, random signs, a random scale --
declared with their distribution (:class:`Aux`, with :func:`uniform`, :func:`normal`,
:func:`rademacher`, :func:`chi`); the feature maps receive them as keyword arguments::

    rff = lambda W, x, b: np.sqrt(2) * np.cos(W @ x + b)
    est = Estimator(rff, rff, kernel, "iid", aux=[Aux("b", uniform(0, 2 * np.pi))])

They are drawn from the same seeded stream as the projections (right after them, chunk by
chunk), so a seed reproduces every number.

Precision.  Projections keep the floating dtype the sampler returned (float32 stays
float32; anything else becomes float64), so a float32 implementation is exercised as it
runs; :meth:`BoundEstimator.trials` reports the dtype the user's code computed in, from
which :mod:`rfcheck.testing` and :mod:`rfcheck.audit` derive their rounding tolerances.

The checks live in :mod:`rfcheck.testing` (pytest helpers, :func:`rfcheck.testing.check_estimator`)
and :mod:`rfcheck.audit` (properties of a sampler).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from rfcheck.engine import rng as _rng

__all__ = [
    "Aux",
    "AuxDistribution",
    "BoundEstimator",
    "Estimator",
    "Sampler",
    "Trials",
    "antithetic",
    "builtin_sampler",
    "chi",
    "columns",
    "draw",
    "least_precise",
    "normal",
    "per_draw",
    "rademacher",
    "resolve_sampler",
    "uniform",
]

#: ``sampler(rng, n, M, d) -> (n, M, d)`` array: ``n`` independent ensembles of ``M`` projections in
#: ``R^d`` drawn from a NumPy ``Generator``
Sampler = Callable[[np.random.Generator, int, int, int], np.ndarray]
FeatureMap = Callable[..., np.ndarray]
#: ``draw(rng, shape) -> array`` of auxiliary random variables
AuxSampler = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]

#: ensembles drawn per call of a sampler (bounds memory to about 2**21 numbers)
_CHUNK_NUMBERS = 1 << 21


#: floating dtypes kept as returned by a sampler; anything else is converted to float64
_KEPT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def least_precise(*dtypes: Any) -> np.dtype:
    """The real floating dtype with the largest machine epsilon among ``dtypes``.

    Complex dtypes count as their real part (``complex64`` -> ``float32``); non-floating
    ones (integers, objects) as float64.  Used to decide which rounding the user's code
    incurred: the tolerances of :mod:`rfcheck.testing` and :mod:`rfcheck.audit` are
    multiples of ``np.finfo(least_precise(...)).eps``.

    Parameters
    ----------
    *dtypes : numpy dtype or type
        Anything ``numpy.dtype`` accepts.

    Returns
    -------
    numpy.dtype
        float16, float32 or float64 (float64 when ``dtypes`` is empty).

    Examples
    --------
    >>> least_precise("float64", "complex64", "int32")
    dtype('float32')
    """
    best = np.dtype(np.float64)
    for dt in dtypes:
        dt = np.dtype(dt)
        if dt.kind == "c":
            dt = np.dtype(dt.char.lower()) if dt.char in "FDG" else np.dtype(np.float64)
        if dt.kind != "f":
            continue
        if np.finfo(dt).eps > np.finfo(best).eps:
            best = dt
    return best


def builtin_sampler(name: str) -> Sampler:
    """The NumPy sampler of a built-in coupling (``iid``, ``orf``, ``simrf``): equal in law
    to the Numba engine's ensembles (:func:`rfcheck.engine.montecarlo.simulate_numpy` uses it).

    Parameters
    ----------
    name : {"iid", "orf", "simrf"}
        The coupling: iid Gaussian rows, orthogonal rows with chi norms, or simplex directions
        with chi norms.

    Returns
    -------
    Sampler
        ``sample(rng, n, M, d) -> (n, M, d)`` float64 array, named ``builtin_<name>``.

    Raises
    ------
    ValueError
        If ``name`` is not one of the three.

    Examples
    --------
    >>> import numpy as np
    >>> builtin_sampler("orf")(np.random.default_rng(0), 2, 3, 3).shape
    (2, 3, 3)
    """
    from rfcheck.engine.montecarlo import _numpy_directions as numpy_ensembles

    if name not in ("iid", "orf", "simrf"):
        raise ValueError(f"built-in samplers are 'iid', 'orf' and 'simrf'; got {name!r}")

    def sample(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
        return numpy_ensembles(rng, name, n, M, d)

    sample.__name__ = f"builtin_{name}"
    return sample


def _keep_float(a: np.ndarray) -> np.ndarray:
    return a if a.dtype in _KEPT_DTYPES else a.astype(float)


def per_draw(fn: Callable[[np.random.Generator, int, int], np.ndarray],
             layout: Literal["rows", "columns"] = "rows") -> Sampler:
    """Adapt a one-ensemble sampler ``fn(rng, M, d)`` to the batched protocol.

    Parameters
    ----------
    fn : callable
        ``fn(rng, M, d)`` returning one ensemble: ``(M, d)`` (rows are projections) or, with
        ``layout="columns"``, ``(d, M)`` (columns are projections, features ``x @ W``, as in
        scikit-learn's ``RBFSampler.random_weights_``).
    layout : {"rows", "columns"}
        Which axis of ``fn``'s output indexes the projections.

    Returns
    -------
    Sampler
        ``sample(rng, n, M, d) -> (n, M, d)``; a float32 ensemble stays float32.

    Raises
    ------
    ValueError
        If ``layout`` is neither ``"rows"`` nor ``"columns"``.

    Examples
    --------
    >>> import numpy as np
    >>> s = per_draw(lambda rng, M, d: rng.standard_normal((d, M)), layout="columns")
    >>> s(np.random.default_rng(0), 5, 3, 2).shape
    (5, 3, 2)
    """
    if layout not in ("rows", "columns"):
        raise ValueError(f"layout must be 'rows' or 'columns'; got {layout!r}")

    def sample(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
        out = [np.asarray(fn(rng, M, d)) for _ in range(n)]
        if layout == "columns":
            out = [a.T for a in out]
        return _keep_float(np.stack(out))

    sample.__name__ = getattr(fn, "__name__", "per_draw")
    return sample


def columns(sampler: Sampler) -> Sampler:
    """Adapt a batched sampler that returns projections as columns, ``(n, d, M)``, to the
    rows protocol ``(n, M, d)`` (for one-ensemble samplers use ``per_draw(fn, "columns")``).

    Parameters
    ----------
    sampler : str or callable
        ``sampler(rng, n, M, d) -> (n, d, M)`` (or a built-in coupling name, resolved by
        :func:`resolve_sampler`).

    Returns
    -------
    Sampler
        ``sample(rng, n, M, d) -> (n, M, d)``, the last two axes swapped.

    Examples
    --------
    >>> import numpy as np
    >>> s = columns(lambda rng, n, M, d: np.zeros((n, d, M)))
    >>> s(np.random.default_rng(0), 4, 3, 2).shape
    (4, 3, 2)
    """
    base = resolve_sampler(sampler)

    def sample(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
        return np.swapaxes(np.asarray(base(rng, n, M, d)), -1, -2)

    sample.__name__ = f"columns_{getattr(base, '__name__', 'sampler')}"
    return sample


def resolve_sampler(sampler: str | Sampler) -> Sampler:
    """A sampler callable from a built-in coupling name or a callable (returned as is).

    Parameters
    ----------
    sampler : str or callable
        A built-in coupling name (see :func:`builtin_sampler`) or ``sampler(rng, n, M, d)``.

    Returns
    -------
    Sampler
        The callable.

    Raises
    ------
    ValueError
        If ``sampler`` is neither a string nor callable (or an unknown built-in name).

    Examples
    --------
    >>> resolve_sampler("iid").__name__
    'builtin_iid'
    """
    if isinstance(sampler, str):
        return builtin_sampler(sampler)
    if not callable(sampler):
        raise ValueError(f"a sampler is a coupling name or a callable (rng, n, M, d) -> (n, M, d); got {sampler!r}")
    return sampler


def antithetic(sampler: str | Sampler) -> Sampler:
    """Antithetic pairs: ``ceil(M/2)`` projections from ``sampler``, each followed by its
    negative (``w_1, -w_1, w_2, -w_2, ...``, truncated to ``M`` rows) -- the convention of the
    engine's ``<base>-anti`` couplings and of :func:`rfcheck.engine.couplings.antithetic`.

    Rows stay marginally ``N(0, I_d)`` (the law is symmetric).

    Parameters
    ----------
    sampler : str or callable
        The base sampler (a built-in coupling name or ``sampler(rng, n, M, d)``).

    Returns
    -------
    Sampler
        ``sample(rng, n, M, d) -> (n, M, d)``, named ``antithetic_<base>``.

    Examples
    --------
    >>> import numpy as np
    >>> W = antithetic("iid")(np.random.default_rng(0), 1, 4, 2)
    >>> bool(np.all(W[0, 1] == -W[0, 0]))
    True
    """
    base = resolve_sampler(sampler)

    def sample(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
        half = draw(base, rng, n, (M + 1) // 2, d)
        out = np.empty((n, 2 * half.shape[1], d), dtype=half.dtype)
        out[:, 0::2] = half
        out[:, 1::2] = -half
        return out[:, :M]

    sample.__name__ = f"antithetic_{getattr(base, '__name__', 'sampler')}"
    return sample


def draw(sampler: Sampler, rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
    """Call ``sampler`` and check what it returned (shape ``(n, M, d)``, finite reals).

    float16, float32 and float64 arrays are returned in their own dtype (the precision the
    sampler works in is part of what is audited); other dtypes are converted to float64.
    A result of shape ``(n, d, M)`` with ``M != d`` is reported as a likely transposition.

    Parameters
    ----------
    sampler : callable
        ``sampler(rng, n, M, d)``.
    rng : numpy.random.Generator
        Handed to the sampler.
    n, M, d : int
        Ensembles, projections per ensemble, dimension.

    Returns
    -------
    numpy.ndarray
        Shape (n, M, d), float16/32/64.

    Raises
    ------
    ValueError
        If the result has another shape (with a hint when it is ``(n, d, M)``), or is complex
        or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> draw(builtin_sampler("iid"), np.random.default_rng(0), 2, 3, 4).shape
    (2, 3, 4)
    """
    W = np.asarray(sampler(rng, n, M, d))
    if W.shape != (n, M, d):
        hint = ""
        if W.shape == (n, d, M):
            hint = (": it looks like projections as columns (n, d, M); wrap the sampler with "
                    "rfcheck.custom.columns(...) or per_draw(fn, layout='columns')")
        raise ValueError(f"sampler {getattr(sampler, '__name__', sampler)!r} returned shape {W.shape}; "
                         f"expected (n, M, d) = {(n, M, d)}{hint}")
    if np.iscomplexobj(W) or not np.all(np.isfinite(W)):
        raise ValueError("sampler returned non-finite or complex projections")
    return _keep_float(W)


# -- auxiliary random variables --------------------------------------------------------------


@dataclass(frozen=True)
class AuxDistribution:
    """A named distribution of auxiliary random variables.

    Parameters
    ----------
    name : str
        For reports, e.g. ``"U[0, 6.28319)"``.
    sample : callable
        ``sample(rng, shape) -> array`` drawing from the NumPy ``Generator`` ``rng``.
    """

    name: str
    sample: AuxSampler

    def __call__(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return self.sample(rng, shape)

    def __repr__(self) -> str:
        return self.name


def uniform(low: float = 0.0, high: float = 1.0) -> AuxDistribution:
    """``U[low, high)``, e.g. ``uniform(0, 2 * np.pi)`` for the phase of random Fourier features.

    Parameters
    ----------
    low, high : float
        The ends, finite, ``low < high`` (default ``[0, 1)``).

    Returns
    -------
    AuxDistribution
        Named ``"U[low, high)"``.

    Raises
    ------
    ValueError
        If an end is not finite or ``low >= high``.

    Examples
    --------
    >>> uniform(0, 2)
    U[0, 2)
    """
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"uniform needs finite low < high; got {low}, {high}")
    return AuxDistribution(f"U[{low:g}, {high:g})", lambda rng, shape: rng.uniform(low, high, shape))


def normal(loc: float = 0.0, scale: float = 1.0) -> AuxDistribution:
    """``N(loc, scale^2)``.

    Parameters
    ----------
    loc : float, default 0.0
        The mean, finite.
    scale : float, default 1.0
        The standard deviation, finite and > 0.

    Returns
    -------
    AuxDistribution
        Named ``"N(loc, scale^2)"``.

    Raises
    ------
    ValueError
        If ``loc`` is not finite, or ``scale`` is not finite and > 0.

    Examples
    --------
    >>> normal(1, 2)
    N(1, 2^2)
    """
    loc, scale = float(loc), float(scale)
    if not (np.isfinite(loc) and np.isfinite(scale) and scale > 0):
        raise ValueError(f"normal needs a finite loc and scale > 0; got {loc}, {scale}")
    return AuxDistribution(f"N({loc:g}, {scale:g}^2)", lambda rng, shape: rng.normal(loc, scale, shape))


def rademacher() -> AuxDistribution:
    """Random signs, ``+1`` or ``-1`` with probability 1/2 each (float64).

    Returns
    -------
    AuxDistribution
        Named ``"Rademacher"``.

    Examples
    --------
    >>> import numpy as np
    >>> np.unique(rademacher()(np.random.default_rng(0), (100,)))
    array([-1.,  1.])
    """
    return AuxDistribution("Rademacher", lambda rng, shape: 2.0 * rng.integers(0, 2, shape) - 1.0)


def chi(df: float) -> AuxDistribution:
    """The chi distribution with ``df`` degrees of freedom (the norm of an ``N(0, I_df)`` vector).

    Parameters
    ----------
    df : float
        Degrees of freedom, finite and > 0.

    Returns
    -------
    AuxDistribution
        Named ``"chi_<df>"``.

    Raises
    ------
    ValueError
        If ``df`` is not finite and > 0.

    Examples
    --------
    >>> chi(3)
    chi_3
    """
    df = float(df)
    if not (np.isfinite(df) and df > 0):
        raise ValueError(f"chi needs df > 0; got {df}")
    return AuxDistribution(f"chi_{df:g}", lambda rng, shape: np.sqrt(rng.chisquare(df, shape)))


@dataclass(frozen=True)
class Aux:
    """An auxiliary random input of the feature maps, declared with its distribution.

    Parameters
    ----------
    name : str
        The keyword under which the feature maps receive the values (a Python identifier,
        not ``W`` or ``x``).
    dist : AuxDistribution or callable or scipy distribution
        ``dist(rng, shape) -> array`` (e.g. :func:`uniform`, :func:`rademacher`), or a frozen
        ``scipy.stats`` distribution (drawn with ``dist.rvs(size=shape, random_state=rng)``).
    per : {"feature", "ensemble"}, default "feature"
        ``"feature"``: one independent value per projection, an array of shape
        ``(..., M) + shape`` aligned with ``W``'s ``(..., M)``; ``"ensemble"``: one value per
        ensemble, shape ``(..., 1) + shape`` (broadcasts over the ``M`` features).
    shape : tuple of int, default ()
        Trailing shape of one value (default scalar).

    Raises
    ------
    ValueError
        If ``name`` is not a Python identifier or is ``W`` or ``x``, ``per`` is neither
        ``"feature"`` nor ``"ensemble"``, or ``dist`` is neither callable nor has ``.rvs``.

    Examples
    --------
    >>> import numpy as np
    >>> b = Aux("b", uniform(0, 2 * np.pi))
    >>> b.draw(np.random.default_rng(0), 3, 4).shape
    (3, 4)
    """

    name: str
    dist: Any
    per: Literal["feature", "ensemble"] = "feature"
    shape: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not (isinstance(self.name, str) and self.name.isidentifier()) or self.name in ("W", "x"):
            raise ValueError(f"an Aux name must be a Python identifier other than 'W' and 'x'; got {self.name!r}")
        if self.per not in ("feature", "ensemble"):
            raise ValueError(f"per must be 'feature' or 'ensemble'; got {self.per!r}")
        if not (hasattr(self.dist, "rvs") or callable(self.dist)):
            raise ValueError(f"Aux {self.name!r}: dist must be callable (rng, shape) -> array or have .rvs")
        object.__setattr__(self, "shape", tuple(int(k) for k in self.shape))

    def draw(self, rng: np.random.Generator, n: int, M: int) -> np.ndarray:
        """Values for ``n`` ensembles of ``M`` features, checked (finite reals of the right shape)."""
        shape = ((n, M) if self.per == "feature" else (n, 1)) + self.shape
        if hasattr(self.dist, "rvs"):
            v = np.asarray(self.dist.rvs(size=shape, random_state=rng))
        else:
            v = np.asarray(self.dist(rng, shape))
        if v.shape != shape:
            raise ValueError(f"Aux {self.name!r} returned shape {v.shape}; expected {shape}")
        if np.iscomplexobj(v) or not np.all(np.isfinite(v)):
            raise ValueError(f"Aux {self.name!r} returned non-finite or complex values")
        return _keep_float(v)


def _as_aux(aux: Any) -> tuple[Aux, ...]:
    if aux is None:
        return ()
    if isinstance(aux, Aux):
        return (aux,)
    if isinstance(aux, Mapping):
        out = tuple(a if isinstance(a, Aux) and a.name == k else Aux(k, a) for k, a in aux.items())
    elif isinstance(aux, Iterable) and not isinstance(aux, str):
        out = tuple(aux)
    else:
        raise ValueError(f"aux must be Aux objects or a mapping name -> distribution; got {aux!r}")
    if not all(isinstance(a, Aux) for a in out):
        raise ValueError("aux must be rfcheck.custom.Aux objects (or a mapping name -> distribution)")
    names = [a.name for a in out]
    if len(set(names)) != len(names):
        raise ValueError(f"Aux names must be distinct; got {names}")
    return out


def _accepted(fn: Callable[..., Any], names: tuple[str, ...]) -> tuple[str, ...]:
    """The auxiliary names ``fn`` takes as keywords (all of them if it takes ``**kwargs`` or
    its signature cannot be read)."""
    if not names:
        return ()
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return names
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return names
    ok = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
    return tuple(k for k in names if k in ok)


# -- estimators -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimator:
    """A random-feature estimator ``(1/M) sum_m Re f1(w_m, x, **aux_m) f2(w_m, y, **aux_m)``.

    Parameters
    ----------
    f1, f2 : callable
        ``f(W, x, **aux)`` with ``W`` of shape ``(..., M, d)``, ``x`` of shape ``(d,)``,
        returning ``(..., M)`` (real or complex).  Each receives, as keyword arguments, the
        auxiliary variables its signature names (all of them if it takes ``**kwargs``).
    kernel : callable
        ``kernel(x, y) -> float``, the value the estimator is meant to be unbiased for.
    sampler : str or callable, default "iid"
        A built-in coupling name or a :data:`Sampler`.
    name : str, default "custom"
        For reports.
    aux : sequence of Aux, or mapping name -> distribution, default ()
        Auxiliary random variables besides the projections (default none), e.g.
        ``[Aux("b", uniform(0, 2 * np.pi))]`` or ``{"b": uniform(0, 2 * np.pi)}``.  Drawn
        from the same seeded generator as the projections, after them.

    Raises
    ------
    ValueError
        If ``aux`` is not Aux objects or a mapping, has repeated names, or names a variable
        that neither feature map takes as a keyword.

    Examples
    --------
    Random Fourier features ``sqrt(2) cos(w.x + b)`` of the Gaussian kernel:

    >>> import numpy as np
    >>> def f(W, x, b):
    ...     return np.sqrt(2) * np.cos(W @ x + b)
    >>> est = Estimator(f, f, lambda x, y: np.exp(-np.sum((x - y) ** 2) / 2),
    ...                 aux={"b": uniform(0, 2 * np.pi)})
    >>> bound = est.at([0.1, 0.2], [0.0, 0.3])
    >>> round(bound.target, 6), bound.replicas(16, 5, seed=1).shape
    (0.99005, (5,))
    """

    f1: FeatureMap
    f2: FeatureMap
    kernel: Callable[[np.ndarray, np.ndarray], float]
    sampler: str | Sampler = "iid"
    name: str = "custom"
    aux: tuple[Aux, ...] | Iterable[Aux] | Mapping[str, Any] = field(default=())

    def __post_init__(self) -> None:
        aux = _as_aux(self.aux)
        object.__setattr__(self, "aux", aux)
        names = tuple(a.name for a in aux)
        unused = set(names) - set(_accepted(self.f1, names)) - set(_accepted(self.f2, names))
        if unused:
            raise ValueError(f"auxiliary variables {sorted(unused)} are taken by neither feature map "
                             "(name them as keyword parameters of f1 or f2)")

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
class Trials:
    """Trial values of an estimate and the floating dtype the user's code computed them in.

    Parameters
    ----------
    values : ndarray
        ``(n_trials,)`` float64 values of the ``m``-feature estimate.
    dtype : numpy.dtype
        The least precise real dtype among the sampler's projections and the feature maps'
        outputs (see :func:`least_precise`), e.g. ``float32`` for a float32 implementation.
    """

    values: np.ndarray
    dtype: np.dtype


@dataclass(frozen=True)
class BoundEstimator:
    """An :class:`Estimator` at a fixed pair ``(x, y)`` (made by :meth:`Estimator.at`).

    Parameters
    ----------
    estimator : Estimator
        The estimator.
    x, y : numpy.ndarray
        The input pair, float64 vectors of shape (d,).

    Attributes
    ----------
    target : float
        ``estimator.kernel(x, y)``.
    """

    estimator: Estimator
    x: np.ndarray
    y: np.ndarray

    @property
    def target(self) -> float:
        return float(self.estimator.kernel(self.x, self.y))

    def replicas(self, m: int, n_trials: int, *, seed: int = 0, sampler: str | Sampler | None = None) -> np.ndarray:
        """``n_trials`` independent values of the ``m``-feature estimate (seeded; same seed,
        same numbers).  ``sampler`` overrides the estimator's own."""
        return self.trials(m, n_trials, seed=seed, sampler=sampler).values

    def trials(self, m: int, n_trials: int, *, seed: int = 0, sampler: str | Sampler | None = None) -> Trials:
        """As :meth:`replicas`, with the dtype the user's code computed in (:class:`Trials`)."""
        if not (isinstance(m, int | np.integer) and m >= 1):
            raise ValueError(f"m must be a positive integer; got {m!r}")
        if not (isinstance(n_trials, int | np.integer) and n_trials >= 2):
            raise ValueError(f"n_trials must be an integer >= 2; got {n_trials!r}")
        est = self.estimator
        s = resolve_sampler(est.sampler if sampler is None else sampler)
        rng = np.random.default_rng(_rng.seed_key(seed))
        names = tuple(a.name for a in est.aux)
        take1, take2 = _accepted(est.f1, names), _accepted(est.f2, names)
        d = self.x.size
        out = np.empty(n_trials)
        dtypes: list[np.dtype] = []
        chunk = max(1, min(n_trials, _CHUNK_NUMBERS // (m * d)))
        for start in range(0, n_trials, chunk):
            n = min(chunk, n_trials - start)
            W = draw(s, rng, n, m, d)
            extra = {a.name: a.draw(rng, n, m) for a in est.aux}
            a = np.asarray(est.f1(W, self.x, **{k: extra[k] for k in take1}))
            b = np.asarray(est.f2(W, self.y, **{k: extra[k] for k in take2}))
            if a.shape != (n, m) or b.shape != (n, m):
                raise ValueError(f"feature maps returned shapes {a.shape}, {b.shape} for W of shape {W.shape}; "
                                 f"expected {(n, m)} each")
            prod = np.real(a * b)
            if not dtypes:
                dtypes = [W.dtype, a.dtype, b.dtype, prod.dtype]
            out[start:start + n] = prod.mean(axis=1)
        return Trials(out, least_precise(*dtypes))

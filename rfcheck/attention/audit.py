"""Causality audit for any attention function ``f(q, k, v) -> out`` (ours or a user's).

For each cut ``t``, each input and each perturbation kind, the input's entries at positions
``> t`` are replaced and the outputs at positions ``<= t`` must be unchanged to rounding:
``max |out' - out| <= rtol * max(|out|) + atol``.  Every per-position input is perturbed on
its own -- queries, keys and values, and any further per-position input the function takes
(``inputs=``: masks, segment ids, positions, ...) -- so the report names the input that
leaked.  Queries matter: an implementation may compute something from *all* queries (the
Performer's JAX code seeds its random projection from a sum over the queries), which moves
past outputs when only future queries change.  Perturbations of floating inputs:

- ``"normal"``: fresh Gaussian rows of the same scale as the data;
- ``"large"``: the data times ``large_factor`` (default 30), plus an offset for keys and
  queries, which moves any stabiliser computed from *all* positions (a global max, eq
  (8)-type statistics) by hundreds of nats and makes a non-causal stabiliser underflow
  visibly;
- ``"nan"`` (opt-in): NaN rows, which leak through ``mask * scores`` style masking.

Integer inputs (token or segment ids) get fresh values drawn from their observed range,
boolean ones are flipped; either once per cut (kind ``"resample"``).  A leak is a deviation
above tolerance (or a non-finite output where the original was finite).  The tolerance
follows the dtype of the function's output: ``rtol`` defaults to ``64 * eps`` of it (float32:
7.6e-6, float64: 1.4e-14).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CausalityReport", "causality_audit"]

#: default ``rtol`` in units of the machine epsilon of the output dtype
RTOL_ULPS = 64


@dataclass
class CausalityReport:
    """Outcome of :func:`causality_audit`.

    Parameters
    ----------
    causal : bool
        No perturbation of any input at positions ``> t`` moved an output at ``<= t``.
    max_deviation : float
        Largest deviation of a past output over all cases.
    tolerance : float
        The tolerance of the worst case (largest deviation / tolerance).
    worst : dict, default {}
        The worst case: ``input``, ``cut``, ``kind``, ``position``, ``deviation``, ``tolerance``.
    n_cases : int, default 0
        Perturbed calls of the function.
    leaked : list of str, default []
        The inputs whose perturbation leaked into the past (e.g. ``["q"]``), in audit order.
    by_input : dict, default {}
        For each audited input, its largest deviation relative to the tolerance (> 1: a leak).

    Examples
    --------
    >>> rep = CausalityReport(True, 0.0, 1e-6, n_cases=4)
    >>> bool(rep)
    True
    """

    causal: bool
    max_deviation: float
    tolerance: float
    worst: dict[str, Any] = field(default_factory=dict)
    n_cases: int = 0
    leaked: list[str] = field(default_factory=list)
    by_input: dict[str, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.causal

    def __str__(self) -> str:
        head = "causal" if self.causal else f"LEAKS through {', '.join(self.leaked)}"
        w = self.worst
        return (f"{head} ({self.n_cases} cases; worst: input {w.get('input')}, cut {w.get('cut')}, "
                f"kind {w.get('kind')}, position {w.get('position')}, deviation {w.get('deviation', 0.0):.3g} "
                f"vs tolerance {w.get('tolerance', 0.0):.3g})")


def _perturb(a: np.ndarray, axis: int, t: int, kind: str, large_factor: float, offset: bool,
             rng: np.random.Generator) -> np.ndarray:
    """``a`` with the entries at positions ``> t`` along ``axis`` replaced."""
    out = a.copy()
    sl: list[Any] = [slice(None)] * a.ndim
    sl[axis] = slice(t + 1, None)
    idx = tuple(sl)
    part = out[idx]
    if a.dtype.kind == "b":
        out[idx] = ~part
    elif a.dtype.kind in "iu":
        lo, hi = int(a.min()), int(a.max())
        if hi == lo:
            hi = lo + 1
        fresh = rng.integers(lo, hi + 1, part.shape).astype(a.dtype)
        out[idx] = np.where(fresh == part, np.where(part == lo, hi, lo), fresh)  # every entry changes
    elif kind == "normal":
        out[idx] = rng.standard_normal(part.shape) * (np.std(a) or 1.0)
    elif kind == "large":
        out[idx] = part * large_factor + (large_factor * (np.std(a) or 1.0) if offset else 0.0)
    else:
        out[idx] = np.nan
    return out


def causality_audit(
    fn: Callable[..., Any], q: Any, k: Any, v: Any, *, cuts: Sequence[int] | None = None,
    kinds: Sequence[str] = ("normal", "large"), large_factor: float = 30.0, seed: int = 0,
    rtol: float | None = None, atol: float = 0.0, inputs: Mapping[str, Any] | None = None,
    perturb: Sequence[str] | None = None,
) -> CausalityReport:
    """Check that ``fn``'s output at positions ``<= t`` ignores every input at positions ``> t``.

    Parameters
    ----------
    fn : callable
        ``fn(q, k, v, **inputs) -> out`` with ``out`` of shape ``(..., L, dv)``.
    q, k, v : array_like
        ``(..., L, d)`` arrays (sequence axis ``-2``; leading head axes allowed).
    cuts : sequence of int, optional
        Cut positions ``t`` in ``[0, L - 2]``; default ``{0, L//3, L//2, L-2}``.
    kinds : sequence of str
        Perturbations of floating inputs: ``"normal"``, ``"large"``, ``"nan"``.
    large_factor : float
        Scale of the ``"large"`` perturbation.
    seed : int
        Seed of the perturbations.
    rtol, atol : float
        Tolerance ``rtol * max|out| + atol`` on the past outputs; ``rtol`` defaults to
        ``64 * eps`` of the output's dtype (float32 output: 7.6e-6), so a float32
        implementation is held to float32 rounding.
    inputs : mapping, optional
        Further per-position inputs, passed to ``fn`` as keyword arguments: ``name -> array``
        (sequence axis ``-2``) or ``name -> (array, axis)``.
    perturb : sequence of str, optional
        The inputs to perturb (default all: ``"q"``, ``"k"``, ``"v"`` and every name of
        ``inputs``).

    Returns
    -------
    CausalityReport
        Truthy when no leak was found; ``leaked`` names the inputs that leaked.

    Raises
    ------
    ValueError
        If ``inputs`` redefines ``q``, ``k`` or ``v``, the sequences are shorter than 2, an
        input has no axis of length ``L`` where stated, ``kinds`` names an unknown
        perturbation, ``perturb`` names an unknown input, or a cut lies outside ``[0, L - 2]``.

    Examples
    --------
    A causal prefix sum passes; a reversed one leaks:

    >>> import numpy as np
    >>> q = k = v = np.random.default_rng(0).standard_normal((6, 2))
    >>> bool(causality_audit(lambda q, k, v: np.cumsum(v, axis=-2), q, k, v))
    True
    >>> causality_audit(lambda q, k, v: np.cumsum(v[::-1], axis=-2)[::-1], q, k, v).leaked
    ['v']
    """
    arrays: dict[str, tuple[np.ndarray, int]] = {"q": (np.asarray(q), -2), "k": (np.asarray(k), -2),
                                                 "v": (np.asarray(v), -2)}
    for name, val in (inputs or {}).items():
        if name in arrays:
            raise ValueError(f"inputs may not redefine {name!r}")
        arr, axis = (val if isinstance(val, tuple) else (val, -2))
        arrays[name] = (np.asarray(arr), int(axis))
    n = arrays["q"][0].shape[-2]
    if n < 2:
        raise ValueError("the audit needs sequences of length >= 2")
    for name, (arr, axis) in arrays.items():
        if not -arr.ndim <= axis < arr.ndim or arr.shape[axis] != n:
            raise ValueError(f"input {name!r} has no sequence axis of length L = {n} at axis {axis}")
    bad = set(kinds) - {"normal", "large", "nan"}
    if bad:
        raise ValueError(f"unknown perturbation kinds {sorted(bad)}; use 'normal', 'large', 'nan'")
    names = list(arrays) if perturb is None else list(perturb)
    unknown = set(names) - set(arrays)
    if unknown:
        raise ValueError(f"perturb names unknown inputs {sorted(unknown)}; known: {list(arrays)}")
    cuts = list(cuts) if cuts is not None else sorted({0, n // 3, n // 2, n - 2})
    if any(not 0 <= t < n - 1 for t in cuts):
        raise ValueError(f"cuts must lie in [0, L - 2] = [0, {n - 2}]")
    extra = {name: arr for name, (arr, _) in arrays.items() if name not in ("q", "k", "v")}

    def call(args: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(fn(args["q"], args["k"], args["v"], **{m: args[m] for m in extra}))

    base_args = {name: arr for name, (arr, _) in arrays.items()}
    base = call(base_args)
    eps = np.finfo(base.dtype).eps if np.issubdtype(base.dtype, np.inexact) else np.finfo(float).eps
    rtol = RTOL_ULPS * float(eps) if rtol is None else rtol
    rng = np.random.default_rng(seed)
    worst: dict[str, Any] = {}
    by_input: dict[str, float] = {}
    max_dev, max_ratio, n_cases = 0.0, -1.0, 0
    for t in cuts:
        ref = base[..., : t + 1, :]
        tol = rtol * float(np.max(np.abs(ref), initial=0.0, where=np.isfinite(ref))) + atol
        for name in names:
            arr, axis = arrays[name]
            floating = arr.dtype.kind in "fc"
            for kind in (kinds if floating else ("resample",)):
                args = dict(base_args)
                args[name] = _perturb(arr, axis, t, kind, large_factor, name in ("q", "k"), rng)
                with np.errstate(all="ignore"):  # extreme inputs are ours: overflow beyond t is expected
                    new = call(args)[..., : t + 1, :]
                bad_nf = np.isfinite(ref) & ~np.isfinite(new)
                with np.errstate(invalid="ignore"):
                    diff = np.where(np.isfinite(ref) & np.isfinite(new), np.abs(new - ref), 0.0)
                if np.any(bad_nf):
                    dev, pos = np.inf, int(np.argwhere(bad_nf)[0][-2])
                else:
                    dev = float(np.max(diff))
                    pos = int(np.unravel_index(np.argmax(diff), diff.shape)[-2])
                n_cases += 1
                ratio = dev / tol if tol > 0 else (np.inf if dev > 0 else 0.0)
                by_input[name] = max(by_input.get(name, 0.0), float(ratio))
                if ratio > max_ratio:
                    max_ratio = ratio
                    worst = {"input": name, "cut": t, "kind": kind, "position": pos, "deviation": dev,
                             "tolerance": tol}
                max_dev = max(max_dev, dev)
    leaked = [name for name in names if by_input.get(name, 0.0) > 1.0]
    return CausalityReport(not leaked, max_dev, float(worst["tolerance"]), worst, n_cases, leaked, by_input)

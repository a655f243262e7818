"""Causality audit for any attention function ``f(q, k, v) -> out`` (ours or a user's).

For each cut ``t`` and each perturbation kind, keys and values at positions ``> t`` are
replaced and the outputs at positions ``<= t`` must be unchanged to rounding:
``max |out' - out| <= rtol * max(|out|) + atol``.  Perturbations:

- ``"normal"``: fresh Gaussian rows of the same scale as the data;
- ``"large"``: the data times ``large_factor`` (default 30), which moves any stabiliser
  computed from *all* positions (a global max, eq (8)-type statistics) by hundreds of nats
  and makes a non-causal stabiliser underflow visibly;
- ``"nan"`` (opt-in): NaN rows, which leak through ``mask * scores`` style masking.

A leak is a deviation above tolerance (or a non-finite output where the original was
finite).  The report names the worst cut, kind and position.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CausalityReport", "causality_audit"]


@dataclass
class CausalityReport:
    """Outcome of :func:`causality_audit`."""

    causal: bool
    max_deviation: float
    tolerance: float
    worst: dict[str, Any] = field(default_factory=dict)
    n_cases: int = 0

    def __bool__(self) -> bool:
        return self.causal


def causality_audit(
    fn: Callable[[Any, Any, Any], Any], q: Any, k: Any, v: Any, *, cuts: Sequence[int] | None = None,
    kinds: Sequence[str] = ("normal", "large"), large_factor: float = 30.0, seed: int = 0,
    rtol: float | None = None, atol: float = 0.0,
) -> CausalityReport:
    """Check that ``fn``'s output at positions ``<= t`` ignores keys/values at positions ``> t``.

    ``q, k, v`` are (L, d) arrays (sequence axis ``-2``; leading head axes allowed).
    ``rtol`` defaults to ``64 * eps`` of the output dtype.  Returns a
    :class:`CausalityReport` (truthy when no leak was found).
    """
    qa, ka, va = (np.asarray(a) for a in (q, k, v))
    n = qa.shape[-2]
    if n < 2:
        raise ValueError("the audit needs sequences of length >= 2")
    bad = set(kinds) - {"normal", "large", "nan"}
    if bad:
        raise ValueError(f"unknown perturbation kinds {sorted(bad)}; use 'normal', 'large', 'nan'")
    cuts = list(cuts) if cuts is not None else sorted({0, n // 3, n // 2, n - 2})
    if any(not 0 <= t < n - 1 for t in cuts):
        raise ValueError(f"cuts must lie in [0, L - 2] = [0, {n - 2}]")
    base = np.asarray(fn(qa, ka, va))
    eps = np.finfo(base.dtype).eps if np.issubdtype(base.dtype, np.floating) else np.finfo(float).eps
    rtol = 64 * eps if rtol is None else rtol
    rng = np.random.default_rng(seed)
    worst: dict[str, Any] = {}
    max_dev, max_ratio, n_cases, leak = 0.0, -1.0, 0, False
    for t in cuts:
        for kind in kinds:
            kp, vp = ka.copy(), va.copy()
            sl = (..., slice(t + 1, None), slice(None))
            if kind == "normal":
                kp[sl] = rng.standard_normal(kp[sl].shape) * (np.std(ka) or 1.0)
                vp[sl] = rng.standard_normal(vp[sl].shape) * (np.std(va) or 1.0)
            elif kind == "large":
                kp[sl] = kp[sl] * large_factor + large_factor * (np.std(ka) or 1.0)
                vp[sl] = vp[sl] * large_factor
            else:
                kp[sl] = np.nan
                vp[sl] = np.nan
            out = np.asarray(fn(qa, kp, vp))
            ref, new = base[..., : t + 1, :], out[..., : t + 1, :]
            tol = rtol * float(np.max(np.abs(ref), initial=0.0, where=np.isfinite(ref))) + atol
            bad_nf = np.isfinite(ref) & ~np.isfinite(new)
            with np.errstate(invalid="ignore"):
                diff = np.where(np.isfinite(ref) & np.isfinite(new), np.abs(new - ref), 0.0)
            if np.any(bad_nf):
                dev, pos = np.inf, int(np.argwhere(bad_nf)[0][-2])
            else:
                dev = float(np.max(diff))
                pos = int(np.unravel_index(np.argmax(diff), diff.shape)[-2])
            n_cases += 1
            leak |= dev > tol
            ratio = dev / tol if tol > 0 else (np.inf if dev > 0 else 0.0)
            if ratio > max_ratio:
                max_ratio = ratio
                worst = {"cut": t, "kind": kind, "position": pos, "deviation": dev, "tolerance": tol}
            max_dev = max(max_dev, dev)
    return CausalityReport(not leak, max_dev, float(worst["tolerance"]), worst, n_cases)

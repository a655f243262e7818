"""Accuracy of the float32 attention harness on JAX's default device against a float64 CPU reference.

``python -m rfcheck.attention.devicecheck [--len L ...]`` runs the configurations of
``rfcheck bench attention`` (exact and FAVOR+, bidirectional and causal, causal FAVOR+ by the
scan and chunked) on the default device (a GPU where one is present) in float32, with the
same inputs and projections, at the harness's matmul precision (``precision="highest"``) and
at the backend's default (``precision="default"``), and reports ``|out - ref|_F / |ref|_F``
against the same function computed on the CPU in float64.  On Ampere and later GPUs the
default precision lets XLA use TF32 for float32 matrix products (10-bit mantissa): errors near
1e-3 there are TF32, errors of 1e-6 are float32; a NaN, or an error far above both, is a bug
of the backend or of the harness.

It checks the *same function* on two backends; whether that function estimates softmax
attention well is the business of :mod:`rfcheck.attention.mse`.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from rfcheck.attention.bench import METHODS

__all__ = ["device_errors", "main"]


def _inputs(n: int, d: int, m: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, d)) / math.sqrt(d)
    k = rng.normal(size=(n, d)) / math.sqrt(d)
    v = rng.normal(size=(n, d))
    w = rng.normal(size=(m, d))
    return q, k, v, w


def device_errors(n: int, d: int = 64, num_features: int = 64, seed: int = 0,
                  methods: tuple = METHODS) -> list[dict[str, Any]]:
    """Relative Frobenius error of each configuration in float32 on the default device vs float64 on CPU.

    One row per ``(method, causal, impl)``: ``err_default`` (``precision="default"``, the
    backend's choice), ``err_highest`` (``precision="highest"``, the harness's default) and ``device``.

    Parameters
    ----------
    n : int
        Sequence length ``L``.
    d : int, default 64
        Head dimension.
    num_features : int, default 64
        Projections of FAVOR+.
    seed : int, default 0
        Seed of the inputs and projections.
    methods : tuple, default rfcheck.attention.bench.METHODS
        ``(method, causal, causal_impl)`` configurations.

    Returns
    -------
    list of dict
        ``method``, ``causal``, ``impl``, ``L``, ``device``, ``err_default``, ``err_highest``.
    """
    import jax

    from rfcheck.attention import attention, enable_x64

    dev = jax.devices()[0]
    cpu = jax.devices("cpu")[0]
    q, k, v, w = _inputs(n, d, num_features, seed)
    rows = []
    for method, causal, impl in methods:
        kw: dict[str, Any] = dict(method=method, causal=causal, causal_impl=impl)

        def run(arrs: tuple, device: Any, dtype: Any, precision: str, kw: dict[str, Any] = kw) -> np.ndarray:
            a = [jax.device_put(np.asarray(x, dtype), device) for x in arrs]
            extra = {} if kw["method"] == "exact" else {"projections": a[3]}
            return np.asarray(attention(a[0], a[1], a[2], precision=precision, **kw, **extra), np.float64)

        with enable_x64(True):
            ref = run((q, k, v, w), cpu, np.float64, "highest")
        row = {"method": method, "causal": causal, "impl": impl, "L": n, "device": str(dev)}
        for label, prec in (("err_default", "default"), ("err_highest", "highest")):
            out = run((q, k, v, w), dev, np.float32, prec)
            row[label] = float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python -m rfcheck.attention.devicecheck [--len L ...] [--seed S]``: print the float32
    errors on the default device at both matmul precisions; exit status 1 when the worst error at
    ``highest`` precision reaches 1e-4 (or is not finite), else 0.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 if every error at ``highest`` precision is finite and below 1e-4, else 1.
    """
    p = argparse.ArgumentParser(prog="python -m rfcheck.attention.devicecheck", description=__doc__.splitlines()[0])
    p.add_argument("--len", type=int, nargs="+", default=[1024, 8192], help="sequence lengths L")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if any(n < 2 for n in args.len):
        p.error("every --len must be >= 2")
    print(f"{'method':22s} {'L':>6s} {'err default':>12s} {'err highest':>12s}  device")
    worst = 0.0
    for n in args.len:
        for r in device_errors(n, seed=args.seed):
            name = r["method"] + (" causal" if r["causal"] else "") + (" chunked" if r["impl"] == "chunked" else "")
            print(f"{name:22s} {n:6d} {r['err_default']:12.3e} {r['err_highest']:12.3e}  {r['device']}", flush=True)
            finite = math.isfinite(r["err_highest"]) and math.isfinite(r["err_default"])
            worst = max(worst, r["err_highest"]) if finite else math.inf
    print(f"worst float32 error at 'highest' precision: {worst:.3e} (inf: a non-finite error at either precision)")
    return 0 if worst < 1e-4 else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""Scaling benchmark of exact vs linear attention: wall time and peak memory versus L.

``rfcheck bench attention [--min-len 1024] [--max-len L] [--precision P] [--json PATH]`` times, on the
default JAX device (CPU here; a GPU when one is present, unchanged), the jitted forward pass
of exact softmax attention and FAVOR+ linear attention, bidirectional and causal (causal
FAVOR+ twice: ``lax.scan`` prefix sums and the chunked variant, ``causal_impl="chunked"``), in
float32 (matmul precision ``P``, default ``"highest"``) with ``d = d_v = 64`` and ``M = 64``
features, for ``L = min_len, 2 min_len, ..., max_len`` (default 65536 on CPU, 262144 on an
accelerator).  Each time is the best of
``repeats`` runs after a warm-up (compilation excluded).
Peak memory: each configuration runs in a fresh process; on CPU the growth of the peak
resident set during the first execution (inputs and compiled program already resident), on
a GPU the allocator's ``peak_bytes_in_use``; XLA's buffer assignment of the compiled program
(``memory_analysis()``, arguments + outputs + temporaries) is reported beside it.
Exact attention is skipped where its ``L x L`` score matrix would exceed ``--exact-mem``
bytes.  Reported: per-method fitted log-log slope of time and of memory (linear ~1,
exact ~2, fitted over ``L >= 4096`` where available, else over all points) and the
crossover length where linear attention becomes faster than exact (log-log interpolation).
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

import numpy as np

__all__ = ["crossover", "format_bench", "format_entry", "loglog_slope", "run_attention_bench"]

#: (method, causal, causal_impl): the chunked causal FAVOR+ row uses ``causal_impl="chunked"`` (chunk 64)
METHODS = (("exact", False, "scan"), ("favor+", False, "scan"), ("exact", True, "scan"), ("favor+", True, "scan"),
           ("favor+", True, "chunked"))


def loglog_slope(lengths: list[int], values: list[float], min_len: int = 4096) -> float:
    """Least-squares slope of ``log value`` against ``log L`` (points ``L >= min_len`` if >= 2 exist).

    Parameters
    ----------
    lengths : list of int
        Sequence lengths ``L``.
    values : list of float
        A time or memory per length (``None``, non-positive and non-finite values are dropped).
    min_len : int, default 4096
        Only lengths ``>= min_len`` are fitted when at least two such points exist.

    Returns
    -------
    float
        The fitted exponent (1 for linear, 2 for quadratic scaling); NaN with fewer than 2 points.

    Examples
    --------
    >>> round(loglog_slope([1024, 2048, 4096, 8192], [1.0, 4.0, 16.0, 64.0]), 6)
    2.0
    """
    pts = [(n, v) for n, v in zip(lengths, values, strict=True) if v and v > 0 and math.isfinite(v)]
    big = [(n, v) for n, v in pts if n >= min_len]
    use = big if len(big) >= 2 else pts
    if len(use) < 2:
        return math.nan
    x, y = np.log([p[0] for p in use]), np.log([p[1] for p in use])
    return float(np.polyfit(x, y, 1)[0])


def crossover(lengths: list[int], t_exact: list[float | None], t_linear: list[float | None]) -> dict[str, Any]:
    """First ``L`` where linear is at least as fast as exact (interpolated in log-log).

    Parameters
    ----------
    lengths : list of int
        Sequence lengths, increasing.
    t_exact, t_linear : list of float or None
        Times of exact and linear attention per length (``None``: not measured).

    Returns
    -------
    dict
        ``length``: the interpolated crossover ``L`` (``None`` if none was found) and ``note``:
        how it was found.

    Examples
    --------
    >>> c = crossover([1024, 2048], [1.0, 4.0], [2.0, 2.0])  # 1024 * sqrt(2)
    >>> round(c["length"]), c["note"]
    (1448, 'between 1024 and 2048')
    """
    pairs = [(n, a, b) for n, a, b in zip(lengths, t_exact, t_linear, strict=True) if a and b]
    if not pairs:
        return {"length": None, "note": "no length with both timings"}
    if pairs[0][2] <= pairs[0][1]:
        return {"length": pairs[0][0], "note": f"linear already faster at the smallest L = {pairs[0][0]}"}
    for (n0, a0, b0), (n1, a1, b1) in itertools.pairwise(pairs):
        if b1 <= a1:
            r0, r1 = math.log(b0 / a0), math.log(b1 / a1)
            frac = r0 / (r0 - r1)
            return {"length": float(math.exp(math.log(n0) + frac * (math.log(n1) - math.log(n0)))),
                    "note": f"between {n0} and {n1}"}
    return {"length": None, "note": f"exact still faster at the largest L with both timings ({pairs[-1][0]})"}


def _peak_bytes(compiled: Any) -> int | None:
    try:
        ma = compiled.memory_analysis()
        return int(ma.argument_size_in_bytes + ma.output_size_in_bytes + ma.temp_size_in_bytes
                   - getattr(ma, "alias_size_in_bytes", 0))
    except Exception:  # backends without memory analysis
        return None


def _rss_bytes() -> int:
    """Current resident set size (Linux ``/proc/self/statm``; 0 elsewhere)."""
    try:
        import os

        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def measure_one(method: str, causal: bool, n: int, d: int = 64, num_features: int = 64, repeats: int = 3,
                impl: str = "scan", precision: str = "highest") -> dict[str, Any]:
    """Time and memory of one configuration **in this process** (call it in a fresh one).

    ``peak_bytes``: on CPU the growth of the peak resident set over the resident set just
    before the first execution (inputs and compiled program already resident); on an
    accelerator the allocator's ``peak_bytes_in_use``.  ``xla_bytes``: XLA's buffer
    assignment of the compiled program (arguments + outputs + temporaries).
    """
    import resource

    import jax
    import jax.numpy as jnp

    from rfcheck.attention import attention

    dev = jax.devices()[0]
    rng = np.random.default_rng(n)
    q = jnp.asarray(rng.normal(size=(n, d)) / math.sqrt(d), jnp.float32)
    k = jnp.asarray(rng.normal(size=(n, d)) / math.sqrt(d), jnp.float32)
    v = jnp.asarray(rng.normal(size=(n, d)), jnp.float32)
    kw = {} if method == "exact" else {"projections": jax.random.normal(jax.random.key(0), (num_features, d))}

    def f(q, k, v):
        return attention(q, k, v, method=method, causal=causal, causal_impl=impl, precision=precision, **kw)

    compiled = jax.jit(f).lower(q, k, v).compile()
    rss0 = _rss_bytes()
    compiled(q, k, v).block_until_ready()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss0
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        compiled(q, k, v).block_until_ready()
        best = min(best, time.perf_counter() - t0)
    out = {"seconds": best, "peak_bytes": max(peak, 0), "xla_bytes": _peak_bytes(compiled), "device": dev.platform}
    if dev.platform != "cpu":
        out["peak_bytes"] = (dev.memory_stats() or {}).get("peak_bytes_in_use")
    return out


#: default largest L: on CPU, and on an accelerator (GPU/TPU memory allows longer sequences)
MAX_LEN_CPU = 65536
MAX_LEN_ACCELERATOR = 262144


def default_max_len(platform: str | None = None) -> int:
    """Largest ``L`` of the sweep when none is given: ``MAX_LEN_CPU`` on CPU, ``MAX_LEN_ACCELERATOR``
    when JAX's default device (or ``platform``) is an accelerator."""
    if platform is None:
        import jax

        platform = jax.devices()[0].platform
    return MAX_LEN_CPU if platform == "cpu" else MAX_LEN_ACCELERATOR


def run_attention_bench(
    *, min_len: int = 1024, max_len: int | None = None, d: int = 64, num_features: int = 64, repeats: int = 3,
    exact_mem: float = 4 * 2**30, methods: tuple = METHODS, progress: Any = None, timeout: float = 600,
    precision: str = "highest",
) -> list[dict[str, Any]]:
    """One entry per (method, causal, L), each measured in a fresh Python process.

    Entries: ``seconds``, ``peak_bytes``, ``xla_bytes`` (``None`` where skipped or failed).
    ``max_len=None``: :func:`default_max_len` (65536 on CPU, 262144 on an accelerator).
    ``precision``: the harness's matmul precision (``"highest"``: float32 products; ``"default"``:
    the backend's choice, TF32 on recent GPUs).

    Parameters
    ----------
    min_len : int, default 1024
        Smallest ``L``, >= 2; lengths double up to ``max_len``.
    max_len : int, optional
        Largest ``L`` (default :func:`default_max_len`).
    d : int, default 64
        Head dimension.
    num_features : int, default 64
        Projections of the linear methods.
    repeats : int, default 3
        Timed runs per configuration (the best is kept).
    exact_mem : float, default 4 GiB
        Exact attention is skipped where its ``L x L`` float32 scores (twice) exceed this many bytes.
    methods : tuple, default METHODS
        ``(method, causal, causal_impl)`` configurations.
    progress : callable, optional
        Called with each entry as it is measured.
    timeout : float, default 600
        Seconds allowed per configuration's process.
    precision : str, default "highest"
        Matmul precision (``"highest"``, ``"high"`` or ``"default"``).

    Returns
    -------
    list of dict
        One entry per configuration and length: ``workload``, ``method``, ``causal``, ``impl``,
        ``L``, ``seconds``, ``peak_bytes``, ``xla_bytes``, ``device``, ``note``.

    Raises
    ------
    ValueError
        If not ``2 <= min_len <= max_len``, or ``precision`` is unknown.
    """
    import json
    import subprocess
    import sys

    if max_len is None:
        max_len = default_max_len()

    if min_len < 2 or max_len < min_len:
        raise ValueError("need 2 <= min_len <= max_len")
    from rfcheck.attention._api import PRECISIONS

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}; got {precision!r}")
    lengths = []
    n = min_len
    while n <= max_len:
        lengths.append(n)
        n *= 2
    entries = []
    for n in lengths:
        for method, causal, *rest in methods:
            impl = rest[0] if rest else "scan"
            e = {"workload": f"attention d={d} M={num_features} float32 precision={precision}", "method": method,
                 "causal": causal, "impl": impl, "L": n, "seconds": None, "peak_bytes": None, "xla_bytes": None,
                 "device": None, "note": ""}
            if method == "exact" and 4.0 * n * n * 2 > exact_mem:
                e["note"] = f"skipped: L^2 scores exceed --exact-mem {exact_mem:.3g} B"
                entries.append(e)
                if progress:
                    progress(e)
                continue
            code = ("import json,sys; from rfcheck.attention.bench import measure_one; "
                    f"print(json.dumps(measure_one({method!r}, {causal!r}, {n}, {d}, {num_features}, {repeats}, "
                    f"{impl!r}, {precision!r})))")
            try:
                r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                                   check=False)
                if r.returncode == 0:
                    e.update(json.loads(r.stdout.strip().splitlines()[-1]))
                else:
                    e["note"] = "failed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:120]
            except subprocess.TimeoutExpired:
                e["note"] = f"timed out after {timeout:.0f} s"
            entries.append(e)
            if progress:
                progress(e)
    return entries


def summarise(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Slopes per method and the crossover lengths against exact attention (bidirectional, causal scan, causal
    chunked)."""
    out: dict[str, Any] = {"slopes": {}, "crossover": {}}
    lengths = sorted({e["L"] for e in entries})
    by = {}
    for e in entries:
        by.setdefault((e["method"], e["causal"], e.get("impl", "scan")), {})[e["L"]] = e
    for (m, c, impl), rows in by.items():
        name = f"{m}{' causal' if c else ''}{' chunked' if impl == 'chunked' else ''}"
        ls = [n for n in lengths if n in rows and rows[n]["seconds"]]
        out["slopes"][name] = {
            "time": loglog_slope(ls, [rows[n]["seconds"] for n in ls]),
            "memory": loglog_slope(ls, [rows[n]["peak_bytes"] for n in ls]),
        }
    pairs = (("bidirectional", False, "scan"), ("causal", True, "scan"), ("causal chunked", True, "chunked"))
    for name, c, impl in pairs:
        ex, li = by.get(("exact", c, "scan"), {}), by.get(("favor+", c, impl), {})
        if li:
            out["crossover"][name] = crossover(lengths, [ex.get(n, {}).get("seconds") for n in lengths],
                                               [li.get(n, {}).get("seconds") for n in lengths])
    return out


HEADER = f"{'method':22s} {'L':>7s} {'time [s]':>11s} {'peak MiB':>10s} {'XLA MiB':>10s}  note"


def format_entry(e: dict[str, Any]) -> str:
    """One row of :func:`format_bench` (also printed as progress while the sweep runs).

    Parameters
    ----------
    e : dict
        An entry of :func:`run_attention_bench`.

    Returns
    -------
    str
        The row: method, ``L``, time, peak MiB, XLA MiB, note.

    Examples
    --------
    >>> format_entry({"method": "favor+", "causal": True, "impl": "chunked", "L": 1024, "seconds": 0.5,
    ...               "peak_bytes": 2**20, "xla_bytes": None, "note": ""}).split()
    ['favor+', 'causal', 'chunked', '1024', '0.5', '1.0', '-']
    """
    name = e["method"] + (" causal" if e["causal"] else "") + (" chunked" if e.get("impl") == "chunked" else "")
    t = "-" if e["seconds"] is None else f"{e['seconds']:.4g}"
    mb = "-" if e["peak_bytes"] is None else f"{e['peak_bytes'] / 2**20:.1f}"
    xb = "-" if e.get("xla_bytes") is None else f"{e['xla_bytes'] / 2**20:.1f}"
    return f"{name:22s} {e['L']:7d} {t:>11s} {mb:>10s} {xb:>10s}  {e['note']}"


def format_bench(entries: list[dict[str, Any]]) -> str:
    """Table of times and memory, then slopes and crossovers.

    Parameters
    ----------
    entries : list of dict
        Entries of :func:`run_attention_bench`.

    Returns
    -------
    str
        The table, the log-log slopes per method, the crossover lengths and the device line.
    """
    lines = [HEADER] + [format_entry(e) for e in entries]
    s = summarise(entries)
    lines.append("")
    for name, sl in s["slopes"].items():
        lines.append(f"log-log slope {name:22s}: time {sl['time']:.2f}, memory {sl['memory']:.2f}")
    for kind, c in s["crossover"].items():
        ln = "n/a" if c["length"] is None else f"{c['length']:.0f}"
        lines.append(f"crossover ({kind}): L ~ {ln} ({c['note']})")
    devs = sorted({str(e["device"]) for e in entries if e["device"]})
    lines.append(f"device: {', '.join(devs) or '?'}; peak MiB = growth of the peak RSS during the first call (CPU) "
                 "or peak_bytes_in_use (GPU); XLA MiB = compiled buffer assignment")
    return "\n".join(lines)

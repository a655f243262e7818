"""The engines draw the same numbers whatever CPU they are compiled for.

The docs promise it (``docs/guide/montecarlo.md``: fused multiply-adds through ``llvm.fma``,
sums in a fixed order, the vector width deciding only how many columns share an instruction), and
the kernels take different paths by target: the bulk normals an 8-wide gather kernel (AVX-512), a
two-loop kernel (AVX2) or Numba's loop (anything else); ``llvm.fma`` one instruction or a libm
call.  Here a build for the x86-64 baseline (SSE2: no AVX, no FMA instruction -- the fallback
paths an Arm machine or an old x86 takes) is compared with this machine's own, stream by stream.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                                reason="the baseline build is an x86-64 target")

#: LLVM's x86-64 baseline: SSE2, no AVX/AVX2/FMA
BASELINE = {"NUMBA_CPU_NAME": "x86-64", "NUMBA_CPU_FEATURES": "+64bit,+cmov,+cx8,+fxsr,+mmx,+sse,+sse2"}

_STREAMS = r"""
import hashlib, json
import numba, numpy as np
from rfcheck import features
from rfcheck.engine import couplings as cp, montecarlo as mc, discrete_engine as de, parallel
from rfcheck.engine.llvm_vectors import target_features
from rfcheck.engine.simd_ziggurat import KERNEL

parallel.PARALLEL_MIN_S = 0.0  # every two-thread call shared between the threads
out = {}
def put(key, a):
    out[key] = hashlib.sha256(np.ascontiguousarray(np.asarray(a, dtype=float)).tobytes()).hexdigest()[:16]
X = np.random.default_rng(0).normal(size=(3, 16)) * 0.3
prods = {"real": features.positive_product(X[:2], X[1:]),
         "complex": features.gerf_product(X[:2], X[1:], a=0.1 + 0.2j)}
numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
for name in sorted(cp.COUPLINGS):
    for path in ["ensemble"] + (["projection"] if cp.COUPLINGS[name].has_projection else []):
        for kind, prod in prods.items():
            for M, n in ((24, 65), (17, 700)):
                put(f"{name}/{path}/{kind}/{M}/{n}", mc.simulate(prod, M, n, coupling=name, path=path, seed=3))
for dist, par in (("poisson", 0.3), ("geometric", 0.7)):
    put(f"disc/{dist}", de.simulate(X[:2], X[1:], dist, par, 32, 300, seed=5))
    put(f"counts/{dist}", de.draw_counts(dist, par, 300, M=4, d=16, seed=7))
print(json.dumps({"features": target_features(), "normals": KERNEL, "streams": out}))
"""


def _streams(extra_env: dict[str, str]) -> dict:
    env = {**os.environ, **extra_env}
    r = subprocess.run([sys.executable, "-c", _STREAMS], capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_baseline_x86_64_build_draws_the_same_numbers(tmp_path):
    """Every coupling on both paths (real and complex products, one and several blocks, two
    threads) and the discrete engine: the same digests from this machine's build and from an
    x86-64-baseline build compiled into a fresh cache (a stale cache cannot answer for it)."""
    native = _streams({})
    base = _streams({**BASELINE, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")})
    feats = set(base["features"].split(","))
    assert not {"+avx", "+avx2", "+fma", "+avx512f"} & feats, base["features"]  # the build is the baseline
    assert base["normals"] == "loop"
    assert len(native["streams"]) >= 60 and native["streams"].keys() == base["streams"].keys()
    differ = sorted(k for k in native["streams"] if native["streams"][k] != base["streams"][k])
    assert not differ, (f"streams that differ between this machine's build ({native['normals']} normals) "
                        f"and the baseline: {differ}")

"""rfcheck.memo: the memo caches of reference computations, and a claim's numbers independent of the claims that
ran before it in the same process (FLINT's caches and the memo caches are forgotten before each claim)."""

from __future__ import annotations

import json
import subprocess
import sys

from rfcheck import memo, quadrature
from rfcheck.references import crt as crt_refs

_RUN = """
import json, sys
import rfcheck.verify as V
for cid in sys.argv[1:]:
    d = V.run_claim(cid).as_dict()
d.pop("elapsed_s", None)
print(json.dumps(d, sort_keys=True, default=str))
"""


def _entry(*ids: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _RUN, *ids], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def _without_times(d: object) -> object:
    if isinstance(d, dict):
        return {k: _without_times(v) for k, v in d.items() if "elapsed" not in k}
    if isinstance(d, list):
        return [_without_times(v) for v in d]
    return d


def test_forget_empties_the_registered_caches():
    quadrature._MOMENT_CACHE["probe"] = 1
    crt_refs._BALL_CACHE["probe"] = 1
    memo.forget()
    assert "probe" not in quadrature._MOMENT_CACHE and "probe" not in crt_refs._BALL_CACHE
    assert crt_refs._gaussian_exp_moment_at_zero.cache_info().currsize == 0


def test_a_claim_gives_the_same_entry_after_a_claim_that_warms_arbs_caches():
    # simrf.eq22's rigorous integrals leave Arb's Gauss-Legendre nodes cached at a higher precision; without
    # forgetting them, hrf.eq37's quadrature error bars differed in the 11th digit (1.751698567984322e-46 after
    # simrf.eq22, 1.751698567995075e-46 alone)
    alone, after = _entry("hrf.eq37"), _entry("simrf.eq22", "hrf.eq37")
    assert after["id"] == "hrf.eq37"
    assert _without_times(after) == _without_times(alone)

"""The stored outputs of the attention-scale MSE studies (``results/attention-scale``) agree with
the verdict rules of the current code, and with what the attention guide
(``docs/guide/attention.md``) says of them.

The files are the evidence behind the guide's tables (CPU runs at L = 1024, 4096; the H200 run at
L = 16384; the DARKFormer runs): each entry's ``z`` is recomputed from its stored estimate and
SEs, and each verdict from ``z``, ``z_crit`` and the tail statistics by the documented rule, so
a hand-edited file, or a change of rule that flips a stored verdict, fails here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("jax", reason="rfcheck.attention needs JAX (pip install 'rfcheck[jax]')")

from rfcheck.attention import mse
from rfcheck.stats import Estimate, compare_mc, z_critical

RESULTS = Path(__file__).resolve().parent.parent / "results" / "attention-scale"


def _mse_files() -> list[Path]:
    """Every stored ``python -m rfcheck.attention.mse --json`` output (a list of studies)."""
    out = []
    for p in sorted(RESULTS.rglob("*.json")):
        data = json.loads(p.read_text())
        if isinstance(data, list) and data and "study" in data[0] and "entries" in data[0]:
            out.append(p)
    return out


FILES = _mse_files()


def test_the_stored_studies_are_found():
    names = {p.relative_to(RESULTS).as_posix() for p in FILES}
    assert {"L1024.json", "L4096.json", "gpu-h200/mse-L16384.json", "dark_L1024_t01.json"} <= names


def _equality_verdict(e: dict) -> str:
    """The code's own rule (``compare_mc`` and ``mse._verdict_eq``) on the stored estimate."""
    t = e["tails"]
    est = Estimate(value=e["empirical"], se=e["se"], n=t["n"], se_source="sample",
                   trustworthy=bool(t["trustworthy"]), tail_cv=t["tail_cv"], max_share=t["max_share"],
                   reason=t.get("note", ""))
    pe = compare_mc({}, e["closed_form"], est, z_crit=e["z_crit"], atol=e["closed_form_se"])
    assert pe.extra["z"] == pytest.approx(e["z"], rel=1e-9, abs=1e-12), e["id"]
    return mse._verdict_eq(pe)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_stored_verdicts_follow_from_the_stored_statistics(path):
    _check_studies(json.loads(path.read_text()))


def _check_studies(studies: list[dict]) -> None:
    for study in studies:
        cfg, entries = study["config"], study["entries"]
        assert cfg["R"] <= cfg["R_requested"]
        zc = z_critical(cfg["alpha"], len(entries))
        for e in entries:
            assert e["z_crit"] == pytest.approx(zc, rel=1e-12), e["id"]
            assert e["tails"]["n"] == cfg["R"], e["id"]
            if e["kind"] == "equality":
                z = (e["empirical"] - e["closed_form"]) / math.hypot(e["se"], e["closed_form_se"])
                assert e["z"] == pytest.approx(z, rel=1e-9, abs=1e-12), e["id"]
                assert e["verdict"] == _equality_verdict(e), e["id"]
            else:
                assert e["kind"] == "ordering"
                assert e["z"] == pytest.approx(e["paired_diff"] / e["se"], rel=1e-9), e["id"]
                paired = e.get("paired", "exact(" not in e["id"])
                assert e["verdict"] == mse.ordering_verdict({**e, "paired": paired}), e["id"]


def test_readme_isotropic_table_all_hold():
    """The attention guide: 'all 81 tests HOLD' over the L = 1024, 4096 (CPU) and 16384 (H200) studies, with
    the R of each row."""
    got = {}
    n = 0
    for name in ("L1024.json", "L4096.json", "gpu-h200/mse-L16384.json"):
        for study in json.loads((RESULTS / name).read_text()):
            assert study["study"] == "isotropic"
            got[(study["config"]["L"], study["config"]["M"])] = study["config"]["R"]
            for e in study["entries"]:
                assert e["verdict"] == "HOLDS", (name, e["id"])
                n += 1
    assert n == 81
    assert got == {(1024, 16): 4000, (1024, 64): 4000, (1024, 256): 1200, (4096, 16): 2850,
                   (4096, 64): 1500, (4096, 256): 975, (16384, 16): 4000, (16384, 64): 4000,
                   (16384, 256): 3025}


@pytest.mark.parametrize("plant", ["verdict", "z", "estimate", "tails"])
def test_a_planted_change_in_a_stored_file_is_caught(plant):
    """The check above has power: a changed verdict, z, estimate or tail statistic of one entry
    of the H200 study is caught."""
    studies = json.loads((RESULTS / "gpu-h200" / "mse-L16384.json").read_text())
    e = studies[1]["entries"][0]  # an equality, HOLDS at z = 1.61
    if plant == "verdict":
        studies[2]["entries"][5]["verdict"] = "INCONCLUSIVE"  # an ordering
    elif plant == "z":
        e["z"] *= 1.01
    elif plant == "estimate":
        e["empirical"] *= 1.001
    else:
        e["tails"]["trustworthy"] = False  # then the verdict must be INCONCLUSIVE
    with pytest.raises(AssertionError):
        _check_studies(studies)

"""The accuracy sweep (``rfcheck accuracy``): coverage, schema, planted defects, stored results."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest

from rfcheck import accuracy
from rfcheck.cli import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "accuracy" / "accuracy.json"
PAGE = ROOT / "docs" / "accuracy.md"

FIELDS = {
    "function": str, "points": int, "worst_input": dict, "nonfinite": int, "meets": bool, "refused": int,
    "reference_unconverged": int, "log_space": bool, "flagged": int, "excluded": int, "reference_errors": int,
    "errors": int,
}
CHEAP = ["crt.log_expm1", "hrf.log_w", "darkformer.sigma_star_eig", "simrf.simplex_cos"]


def _check_entry(e: dict) -> None:
    for k, t in FIELDS.items():
        assert isinstance(e[k], t), (k, e[k])
    err = e["max_rel_error"]
    assert err == "inf" or (isinstance(err, float) and math.isfinite(err) and err >= 0) or err == 0
    json.dumps(e, allow_nan=False)  # JSON-safe: no NaN/inf floats anywhere


# ------------------------------------------------------------------- (a) coverage


def test_every_public_closed_form_is_covered():
    """Adding a public closed form without a spec (or an explicit covered-by entry) fails here."""
    covered = accuracy.coverage()
    public = accuracy.public_closed_forms()
    assert set(covered) == public, {"not covered": sorted(public - set(covered)),
                                    "not public": sorted(set(covered) - public)}
    for c in accuracy.COVERED_BY:
        assert c.covered_by and c.reason
    for s in accuracy.SPECS:  # every spec names a public callable and a positive size
        assert callable(accuracy._resolve(s.function)) and s.points >= 1


def test_every_function_with_an_mpmath_face_is_swept_not_exempted():
    exempt = {c.function for c in accuracy.COVERED_BY}
    for name in accuracy.public_closed_forms():
        fn = accuracy._resolve(name)
        if hasattr(fn, "impl"):  # a formula: float64 and mpmath faces
            assert name not in exempt, name


# ------------------------------------------------------------------- (b) schema


def test_quick_run_schema(tmp_path):
    entries = accuracy.run_accuracy(quick=True, functions=CHEAP)
    assert [e["function"] for e in entries] == CHEAP
    for e in entries:
        _check_entry(e)
        assert e["points"] == accuracy.QUICK_POINTS
        assert e["meets"], accuracy.format_entry(e)
    # reproducible: same seed, same points
    again = accuracy.run_accuracy(quick=True, functions=CHEAP[:1])
    assert again[0]["worst_input"] == entries[0]["worst_input"]
    table = accuracy.format_table(entries)
    assert table.count("\n") == len(entries) + 1 and "`crt.log_expm1`" in table


def test_cli_writes_json_and_page(tmp_path, capsys):
    out, page = tmp_path / "acc.json", tmp_path / "acc.md"
    rc = main(["accuracy", "--quick", "--function", *CHEAP[:2], "--json", str(out), "--markdown", str(page)])
    assert rc == 0
    entries = json.loads(out.read_text())
    assert [e["function"] for e in entries] == CHEAP[:2]
    for e in entries:
        _check_entry(e)
    text = page.read_text()
    assert accuracy.format_table(entries) in text and "rfcheck accuracy --quick" in text


@pytest.mark.parametrize("name", ["crt.no_such_function", "crt.gerf_optimize"])
def test_cli_refuses_unknown_or_exempt_names_before_the_work(tmp_path, capsys, name):
    out = tmp_path / "acc.json"
    assert main(["accuracy", "--quick", "--function", name, "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rfcheck: error:") and err.count("\n") == 1
    assert not out.exists()


def test_cli_refuses_an_unwritable_path_before_the_work(tmp_path, capsys):
    assert main(["accuracy", "--quick", "--function", CHEAP[0], "--json", str(tmp_path / "no" / "x.json")]) == 2
    assert "no such directory" in capsys.readouterr().err


# ------------------------------------------------------------- (c) planted defects


def _fixed(*values: float):
    return lambda rng, n: {"x": np.array(values[:n])}


def _ref_log1p(a: dict, dps: int):
    with mpmath.workdps(dps):
        return mpmath.log1p(mpmath.mpf(a["x"]))


def test_planted_cancellation_is_caught_at_the_right_input():
    xs = (0.5, 1e-10, 3.0, 1e-3)
    naive = accuracy.Spec("planted.log1p_naive", _fixed(*xs), fp=lambda x: np.log(1 + x), ref=_ref_log1p)
    good = accuracy.Spec("planted.log1p", _fixed(*xs), fp=lambda x: np.log1p(x), ref=_ref_log1p)
    bad_e, good_e = accuracy.run_accuracy(quick=True, functions=[naive, good])
    assert not bad_e["meets"] and bad_e["worst_input"] == {"x": 1e-10}
    assert bad_e["max_rel_error"] == pytest.approx(abs(math.log(1 + 1e-10) / math.log1p(1e-10) - 1), rel=1e-6)
    assert good_e["meets"] and good_e["max_rel_error"] < 1e-15


def test_planted_unconverged_reference_is_caught():
    def drifting(a: dict, dps: int):  # a high-precision face good to only dps/4 digits
        with mpmath.workdps(dps):
            return mpmath.mpf(a["x"]) * (1 + mpmath.mpf(10) ** (-(dps // 4)))

    spec = accuracy.Spec("planted.unconverged", _fixed(0.5, 2.0, 3.0, 4.0), fp=lambda x: x, ref=drifting)
    (e,) = accuracy.run_accuracy(quick=True, functions=[spec])
    assert e["reference_unconverged"] == 4 and not e["meets"] and "unconverged_input" in e


def test_planted_reference_that_is_wrong_only_for_tiny_values_is_caught():
    """A reference that rounds log(1 + 1e-200) to 0 at 50 and at 80 digits agrees with itself;
    the disputed point is recomputed at many more digits and blamed on the reference."""
    def coarse(a: dict, dps: int):
        with mpmath.workdps(dps):
            return mpmath.log(1 + mpmath.mpf(a["x"]))

    spec = accuracy.Spec("planted.coarse_reference", _fixed(1e-200, 0.5, 2.0, 1e-3), fp=lambda x: np.log1p(x),
                         ref=coarse)
    (e,) = accuracy.run_accuracy(quick=True, functions=[spec])
    assert e["reference_unconverged"] == 1 and e["unconverged_input"] == {"x": 1e-200}
    assert e["max_rel_error"] < 1e-15  # the float64 face itself is right


def test_refusals_flags_and_nonfinite_results():
    def refuse_big(x):
        if np.any(np.asarray(x) > 1e300):
            raise ValueError("exceeds float64")
        return np.exp(x)

    def ref_exp(a: dict, dps: int):
        with mpmath.workdps(dps):
            return mpmath.exp(mpmath.mpf(a["x"]))

    flagged = accuracy.Spec("planted.flagged", _fixed(1.0, 2e300, 3.0, 1e301), fp=refuse_big, ref=ref_exp)
    def always_refuse(x):
        raise ValueError("refuses everything")

    refused = accuracy.Spec("planted.refused", _fixed(1.0, 2.0, 3.0, 4.0), fp=always_refuse, ref=ref_exp)
    nan = accuracy.Spec("planted.nan", _fixed(1.0, 2.0, 3.0, 4.0), fp=lambda x: np.where(x > 2.5, np.nan, np.exp(x)),
                        ref=ref_exp)
    inf_ok = accuracy.Spec("planted.overflow_to_inf", _fixed(1.0, 800.0, 3.0, 1e5), fp=lambda x: np.exp(x), ref=ref_exp)
    f, r, n, o = accuracy.run_accuracy(quick=True, functions=[flagged, refused, nan, inf_ok])
    assert f["meets"] and f["flagged"] == 2
    assert not r["meets"] and r["refused"] == 4
    assert not n["meets"] and n["nonfinite"] == 2 and n["max_rel_error"] == "inf"
    assert o["meets"]  # +inf for a reference beyond the float64 range is the right rounding


def test_log_space_metric():
    def ref(a: dict, dps: int):
        with mpmath.workdps(dps):
            return mpmath.mpf(a["x"])

    off = accuracy.Spec("planted.log_abs", _fixed(1e-30, 2.0), fp=lambda x: x + 1e-13, ref=ref, log_space=True)
    rel = accuracy.Spec("planted.rel", _fixed(1e-30, 2.0), fp=lambda x: x + 1e-13, ref=ref)
    a, b = accuracy.run_accuracy(quick=True, functions=[off, rel])
    assert a["meets"] and a["max_rel_error"] == pytest.approx(1e-13, rel=1e-6)
    assert not b["meets"] and b["worst_input"] == {"x": 1e-30}


def test_a_broken_spec_becomes_an_entry_and_the_sweep_goes_on():
    def broken(rng, n):
        raise ZeroDivisionError("sampler bug")

    spec = accuracy.Spec("planted.broken", broken, fp=lambda x: np.exp(x), ref=lambda a, dps: 0)
    e, ok = accuracy.run_accuracy(quick=True, functions=[spec, "crt.log_expm1"])
    assert not e["meets"] and e["error"].startswith("ZeroDivisionError: sampler bug")
    _check_entry(e)
    assert ok["meets"]


# ------------------------------------------------------------- (d) stored results


def test_stored_results_are_well_formed_and_the_page_is_their_table():
    entries = json.loads(RESULTS.read_text())
    for e in entries:
        _check_entry(e)
    assert [e["function"] for e in entries] == [s.function for s in accuracy.SPECS]
    text = PAGE.read_text()
    assert accuracy.format_table(entries) in text
    assert "rfcheck accuracy --json results/accuracy/accuracy.json --markdown docs/accuracy.md" in text
    met = sum(e["meets"] for e in entries)
    assert f"**{met} of {len(entries)} functions meet the target**" in text

"""The estimators package ``rfcheck.estimators``: the modules moved into it from the top of the
package (``rfcheck.hybrid``, ``rfcheck.rfa``, ``rfcheck.discrete``, ``rfcheck.crt_variance``),
whose old paths are deprecated shims that warn once and give the same module objects."""

import importlib
import sys
import warnings

import numpy as np
import pytest

import rfcheck
from rfcheck.estimators import _MOVED

#: old name -> new module (under rfcheck.estimators), with one public name that came from the old module
MOVES = {
    "hybrid": ("hrf", "general_hrf"),
    "rfa": ("rfa", "rfa_causal"),
    "discrete": ("crt", "simulate_dirf"),
    "crt_variance": ("crt", "mc_crosscheck"),
}


def test_moved_map_names_every_move():
    assert _MOVED == {f"rfcheck.{old}": f"rfcheck.estimators.{new}" for old, (new, _) in MOVES.items()}


@pytest.mark.parametrize("old_name", sorted(MOVES))
def test_old_path_warns_once_and_is_the_new_module(old_name, monkeypatch):
    new_name, public = MOVES[old_name]
    new = importlib.import_module(f"rfcheck.estimators.{new_name}")
    old_path = f"rfcheck.{old_name}"
    monkeypatch.delitem(sys.modules, old_path, raising=False)
    monkeypatch.delitem(vars(rfcheck), old_name, raising=False)  # not delattr: rfcheck.__getattr__ would import it
    with pytest.warns(DeprecationWarning,
                      match=rf"rfcheck\.{old_name} moved to rfcheck\.estimators\.{new_name}") as rec:
        old = importlib.import_module(old_path)
    assert len([w for w in rec if issubclass(w.category, DeprecationWarning)]) == 1
    assert old is new
    assert sys.modules[old_path] is new
    assert getattr(old, public) is getattr(new, public)
    assert public in new.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second import does not warn again
        assert importlib.import_module(old_path) is new
        exec(f"from rfcheck import {old_name} as again", ns := {})
        assert ns["again"] is new
        exec(f"from rfcheck.{old_name} import {public} as f", ns := {})
        assert ns["f"] is getattr(new, public)


def test_monkeypatch_through_old_path_reaches_the_new_module(monkeypatch):
    """A private constant patched through the old path changes what the new module computes:
    ``_CHUNK`` (trials per chunk) is part of the stream definition of ``simulate``."""
    from rfcheck.estimators import hrf

    x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    before = hrf.simulate("pos", x, y, 2, 1, 10, seed=3)
    monkeypatch.delitem(sys.modules, "rfcheck.hybrid", raising=False)
    with pytest.warns(DeprecationWarning):
        old = importlib.import_module("rfcheck.hybrid")
    monkeypatch.setattr(old, "_CHUNK", 4)
    assert hrf._CHUNK == 4
    after = hrf.simulate("pos", x, y, 2, 1, 10, seed=3)
    assert after.shape == before.shape and not np.array_equal(after, before)  # chunks of 4 draw differently


def test_merged_modules_keep_every_old_public_name():
    """What each old module exported is exported by its new home (the merged ``crt`` and ``rfa``
    hold both sets of names)."""
    from rfcheck.estimators import crt, hrf, rfa

    assert {"DISTRIBUTIONS", "log_pk", "product_log_abs_sign", "sample_omega", "simulate_dirf"} <= set(crt.__all__)
    assert {"COMPLEX", "METHODS", "REGIMES", "log_variances", "mc_crosscheck", "sample_sets",
            "summary"} <= set(crt.__all__)
    assert {"gated_attention_explicit", "masked_linear_attention", "rfa_causal", "rfa_decode_step_ops", "rfa_gated",
            "rfa_noncausal", "softmax_attention", "softmax_decode_step_ops", "trig_features"} == set(rfa.__all__)
    assert {"FIG2_M", "FIG2_HYBRID", "Blocks", "simulate", "mse_estimate", "general_hrf"} <= set(hrf.__all__)
    for mod in (crt, hrf, rfa):
        assert all(hasattr(mod, n) for n in mod.__all__), mod.__name__


def test_docs_public_modules_list_no_shim():
    from rfcheck import docsgen

    mods = docsgen.public_modules()
    assert not set(_MOVED) & set(mods)
    assert set(_MOVED.values()) <= set(mods)
    assert "rfcheck.estimators" in mods


def test_no_internal_import_of_an_old_path():
    """Nothing in the package, the tests, the notebooks or the docs imports a deprecated path (the
    shims themselves and this test aside; pytest turns the warning into an error, but only for the
    code a test happens to import)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    olds = "|".join(sorted(MOVES))
    pat = re.compile(rf"from rfcheck import [^\n]*\b({olds})\b|from rfcheck\.({olds}) import"
                     rf"|import rfcheck\.({olds})\b")
    shims = {root / "rfcheck" / f"{m}.py" for m in MOVES}
    files = [*root.glob("rfcheck/**/*.py"), *root.glob("tests/*.py"), *root.glob("notebooks/*.py"),
             *root.glob("docs/*.md"), *root.glob("docs/guide/*.md")]
    bad = [f.relative_to(root).as_posix() for f in files
           if f not in shims and f != Path(__file__).resolve() and pat.search(f.read_text())]
    assert not bad, bad

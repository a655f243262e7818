"""The engine package ``rfcheck.engine``: its public surface, and the deprecated old paths
(``rfcheck.montecarlo``, ...) that warn once and give the same module objects."""

import importlib
import sys
import warnings

import pytest

import rfcheck
import rfcheck.engine as engine
from rfcheck.engine import _MOVED

MODULES = ("rng", "bits", "couplings", "montecarlo", "discrete_engine")


def test_moved_map_names_every_engine_module():
    assert _MOVED == {f"rfcheck.{m}": f"rfcheck.engine.{m}" for m in MODULES}


@pytest.mark.parametrize("name", MODULES)
def test_old_path_warns_once_and_is_the_new_module(name, monkeypatch):
    new = importlib.import_module(f"rfcheck.engine.{name}")
    old_path = f"rfcheck.{name}"
    monkeypatch.delitem(sys.modules, old_path, raising=False)
    monkeypatch.delitem(vars(rfcheck), name, raising=False)  # not delattr: rfcheck.__getattr__ would import it
    with pytest.warns(DeprecationWarning, match=rf"rfcheck\.{name} moved to rfcheck\.engine\.{name}") as rec:
        old = importlib.import_module(old_path)
    assert len([w for w in rec if issubclass(w.category, DeprecationWarning)]) == 1
    assert old is new
    assert sys.modules[old_path] is new
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second import does not warn again
        assert importlib.import_module(old_path) is new
        exec(f"from rfcheck import {name} as again", ns := {})
        assert ns["again"] is new


def test_monkeypatch_through_old_path_reaches_engine(monkeypatch):
    from rfcheck.engine import montecarlo

    monkeypatch.delitem(sys.modules, "rfcheck.montecarlo", raising=False)
    with pytest.warns(DeprecationWarning):
        old = importlib.import_module("rfcheck.montecarlo")
    monkeypatch.setattr(old, "TRIALS_PER_BLOCK", 7)
    assert montecarlo.TRIALS_PER_BLOCK == 7


def test_public_surface_reexports_the_real_objects():
    from rfcheck.engine import couplings, discrete_engine, montecarlo

    assert sorted(engine.__all__) == sorted(["simulate", "simulate_discrete", "sample_ensemble",
                                             "sample_projection", "COUPLINGS", "Coupling", "get_coupling"])
    assert engine.simulate is montecarlo.simulate
    assert engine.simulate_discrete is discrete_engine.simulate
    assert engine.sample_ensemble is couplings.sample_ensemble
    assert engine.sample_projection is couplings.sample_projection
    assert engine.COUPLINGS is couplings.COUPLINGS
    assert engine.get_coupling("orf") is couplings.COUPLINGS["orf"]
    assert rfcheck.simulate is montecarlo.simulate
    with pytest.raises(AttributeError):
        engine.no_such_name  # noqa: B018


def test_docs_public_modules_list_no_shim():
    from rfcheck import docsgen

    mods = docsgen.public_modules()
    assert not set(_MOVED) & set(mods)
    assert set(_MOVED.values()) <= set(mods)
    assert "rfcheck.engine" in mods


#: the names ``rfcheck.engine.couplings`` exported when it was one module (0.1.0 and until the split)
OLD_COUPLINGS_NAMES = (
    "COUPLINGS", "Coupling", "SimRFPlusInfo", "antithetic", "block_sizes", "check_dim", "empty_lines",
    "ensemble_into", "fwht", "get_coupling", "hd_dim", "hd_rotation", "pad8", "projection_into",
    "projection_scratch", "sample_ensemble", "sample_ensemble_reference", "sample_fast", "sample_projection",
    "sample_simrf_plus", "scratch", "simrf_plus_block", "simrf_plus_passes", "stream_tag",
    "truncated_conformity_objective", "ANTI", "IID", "ORF", "ORF_HD", "SIMRF", "SIMRF_HD", "SIMRF_PLUS",
    "HD_FACTORS", "SIMRF_PLUS_MAX_PASSES", "SIMRF_PLUS_TOL",
)
FAMILIES = ("iid", "orf", "simrf", "simrf_plus", "hd", "anti")


def test_couplings_package_keeps_every_old_name():
    """Every name of the one-module ``couplings`` still imports from the package, and is the object
    its defining module holds (no copies)."""
    from rfcheck.engine import couplings

    assert set(couplings.__all__) <= set(OLD_COUPLINGS_NAMES)
    for name in OLD_COUPLINGS_NAMES:
        obj = getattr(couplings, name)
        home = getattr(obj, "__module__", None) or getattr(getattr(obj, "py_func", None), "__module__", None)
        if isinstance(home, str) and home.startswith("rfcheck.engine.couplings."):
            assert getattr(importlib.import_module(home), name) is obj, name


def test_each_coupling_lives_in_its_family_module():
    """The kernels and twins of each registered coupling are defined in its family's module (one
    module per family), the twins beside the kernels they mirror."""
    from rfcheck.engine import couplings

    family_of = {"iid": "iid", "orf": "orf", "simrf": "simrf", "simrf+": "simrf_plus", "orf-hd": "hd",
                 "simrf-hd": "hd"}
    for name, c in couplings.COUPLINGS.items():
        fam = "anti" if name.endswith("-anti") else family_of[name]
        mod = importlib.import_module(f"rfcheck.engine.couplings.{fam}")
        for twin in (c.py_ensemble, c.py_projection):
            if twin is not None:
                assert twin.__module__ == mod.__name__, (name, twin)
    for fam in FAMILIES:
        mod = importlib.import_module(f"rfcheck.engine.couplings.{fam}")
        kernels = [v for v in vars(mod).values() if hasattr(v, "py_func") and v.py_func.__module__ == mod.__name__]
        twins = [v for k, v in vars(mod).items() if k.startswith("_py_") and callable(v)]
        assert kernels and twins, fam

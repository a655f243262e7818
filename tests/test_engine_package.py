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

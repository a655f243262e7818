"""The suite's own configuration: how many workers ``-n auto`` starts (``tests/conftest.py``)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest


def _conftest():
    spec = importlib.util.spec_from_file_location("rfcheck_tests_conftest", Path(__file__).with_name("conftest.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 2), (8, 8), (64, 8)])
def test_auto_workers_follow_the_cores_up_to_the_cap(monkeypatch, cores, workers):
    conf = _conftest()
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    else:
        monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert conf.MAX_AUTO_WORKERS == 8
    assert conf.pytest_xdist_auto_num_workers(None) == workers


def test_the_environment_variable_is_left_to_xdist(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert _conftest().pytest_xdist_auto_num_workers(None) is None

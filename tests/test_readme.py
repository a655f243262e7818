"""README's Python quick start runs as written and prints the numbers its comments state."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _quick_start() -> str:
    text = README.read_text()
    body = text[text.index("## Quick start (Python)"):]
    return re.search(r"```python\n(.*?)```", body, re.S).group(1)


@pytest.mark.mc
def test_quick_start_runs_and_prints_what_readme_says():
    code = _quick_start()
    ns: dict = {}
    exec(compile(code, "README quick start", "exec"), ns)  # the README's own snippet
    stated = re.search(r"print\(mse\.value, mse\.se, mse\.trustworthy\)\s*# ([0-9.]+) \+- ([0-9.]+), (\w+)", code)
    value, se, trusted = float(stated.group(1)), float(stated.group(2)), stated.group(3) == "True"
    mse = ns["mse"]
    assert round(mse.value, 6) == value and round(mse.se, 6) == se and mse.trustworthy is trusted
    exact = float(re.search(r"m=64\)\)\s*# exact ORF variance: ([0-9.]+)", code).group(1))
    got = float(np.exp(ns["crt"].orf_gerf_log_variance(**ns["st"], a=ns["a_star"], m=64))[0])
    assert round(got, 7) == exact
    assert abs(mse.value - got) < 4 * mse.se  # the Monte Carlo MSE agrees with the exact variance

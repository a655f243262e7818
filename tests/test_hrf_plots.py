"""hrf-fig1: written by the command, and its data are the closed forms."""

from __future__ import annotations

import math

import numpy as np

from rfcheck.closed_forms import hrf as cf
from rfcheck.plots import FIGURES
from rfcheck.plots import hrf as plots


def test_hrf_fig1_written(tmp_path):
    paths = FIGURES["hrf-fig1"](out_dir=tmp_path)
    assert all(p.exists() and p.stat().st_size > 1000 for p in paths)


def test_fig1_grid_is_closed_form_and_only_hybrid_vanishes_at_both_ends():
    theta = np.array([0.0, 1.0, math.pi])
    r = np.array([1.5])
    ang = plots.log10_mse_grid("angular", theta, r)[0]
    assert abs(ang[1] - cf.log_mse_angular_hybrid_same_length(1.5, 1.0, 10, 1) / math.log(10)) < 1e-12
    assert ang[0] == -np.inf and ang[2] < -10  # float(pi) is 1.2e-16 short of pi
    trig = plots.log10_mse_grid("trig", theta, r)[0]
    pos = plots.log10_mse_grid("pos", theta, r)[0]
    assert trig[0] == -np.inf and trig[2] > 0  # trig: zero at theta = 0 only
    assert pos[2] < -10 and pos[0] > 0  # ++: (near) zero at theta = pi only

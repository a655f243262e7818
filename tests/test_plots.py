"""Figures are produced by commands and show what the closed forms say."""

from __future__ import annotations

import numpy as np
import pytest

from rfcheck.closed_forms import crt
from rfcheck.plots import FIGURES
from rfcheck.plots.crt import mu_monte_carlo, plot_mu


def test_crt_fig1_written(tmp_path):
    paths = FIGURES["crt-fig1"](out_dir=tmp_path, quick=True, seed=0)
    assert all(p.exists() and p.stat().st_size > 10_000 for p in paths)


def test_fig1_curves_are_closed_forms():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    lines = plot_mu(ax, dims=(64,), u_max=100.0)
    u, mu = lines[0].get_data()
    assert np.allclose(mu, crt.oprf_log_variance_ratio(u, 64), rtol=1e-14)
    plt.close(fig)


@pytest.mark.mc
def test_fig1_monte_carlo_point_agrees_with_closed_form():
    m, se, ok = mu_monte_carlo(0.5, 4, 200_000, seed=11)
    assert ok
    assert abs(m - float(crt.oprf_log_variance_ratio(0.5, 4))) < 4.5 * se  # alpha ~ 1e-5

"""SimRF figures: written by their commands, curves are the closed forms, Monte Carlo agrees."""

from __future__ import annotations

import numpy as np
import pytest

from rfcheck.closed_forms import simrf as cf
from rfcheck.plots import FIGURES
from rfcheck.plots import simrf as P


@pytest.mark.parametrize("name", ["simrf-fig4", "simrf-fig5", "simrf-fig6", "simrf-fig7"])
def test_simrf_figures_written(tmp_path, name):
    paths = FIGURES[name](out_dir=tmp_path, quick=True, seed=0)
    assert all(p.exists() and p.stat().st_size > 10_000 for p in paths)


def test_fig6_curves_are_closed_forms():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    lines = P.plot_mse_ratios(ax, d=64)
    v, r = lines[1].get_data()
    ref = np.array([cf.prf_mse(x, 64, 64, 0.0, "simrf") / cf.prf_mse(x, 64, 64, 0.0, "iid") for x in v[::40]])
    np.testing.assert_allclose(r[::40], ref, rtol=1e-9)
    assert r[0] == pytest.approx(cf.small_v_prefactor_simrf(64), rel=1e-3)  # sec 5.1 limit
    plt.close(fig)


def test_fig4_ordering():
    vals = P.conformities_fig4(n_iid=20, starts=1)
    assert vals["SimRF"][0] < vals["ORF"][0] < vals["IIDRF"][0]
    assert vals["numerically optimised"][0] <= vals["SimRF"][0] + 1e-12


def test_fig6_monte_carlo_point_agrees():
    r, se, ok = P.mse_ratio_monte_carlo(0.5, 64, "simrf", 100_000, seed=3)
    exact = cf.prf_mse(0.5, 64, 64, 0.0, "simrf") / cf.prf_mse(0.5, 64, 64, 0.0, "iid")
    assert ok
    assert abs(r - exact) < 4.5 * se


def test_fig7_simrf_beats_iid():
    mi, _ = P.gram_errors("iid", [64], reps=8, seed=1)
    ms, _ = P.gram_errors("simrf", [64], reps=8, seed=1)
    assert ms[0] < mi[0]

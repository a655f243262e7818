"""hrf-fig2: written by the command; its Monte Carlo data are seeded and agree with the closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rfcheck.plots import CAPTIONS, FIGURES
from rfcheck.plots import hrf as plots


def test_hrf_fig2_written_and_captioned(tmp_path):
    paths = FIGURES["hrf-fig2"](out_dir=tmp_path, quick=True, seed=0)
    assert [p.name for p in paths] == ["hrf-fig2.png", "hrf-fig2.pdf"]
    assert all(p.exists() and p.stat().st_size > 10_000 for p in paths)
    cap = CAPTIONS["hrf-fig2"]
    assert "Figure 2" in cap and "m n = M" in cap and "10,000" in cap


def test_matched_config_is_mn_equals_m_with_n_8():
    assert plots.matched_hybrid_config() == (16, 8)
    assert plots.matched_hybrid_config(512) == (64, 8)  # appendix I: 512 regular <-> m = 64, n = 8
    assert plots.matched_hybrid_config(1024) == (128, 8)  # Fig 10
    with pytest.raises(ValueError, match="multiple of n"):
        plots.matched_hybrid_config(100)
    with pytest.raises(ValueError, match="m_regular"):
        plots.matched_hybrid_config(0)


def test_pointwise_estimates_seeded_and_shaped():
    th = np.array([0.0, 1.0, math.pi])
    a = plots.pointwise_estimates(1.0, th, n_est=1030, seed=3)  # two chunks
    b = plots.pointwise_estimates(1.0, th, n_est=1030, seed=3)
    c = plots.pointwise_estimates(1.0, th, n_est=30, seed=4)
    for k in ("trig", "pos", "angular"):
        assert a[k].shape == (3, 1030)
        np.testing.assert_array_equal(a[k], b[k])
        assert not np.array_equal(a[k], c[k])


def test_zero_variance_ends():
    """trig is exact at theta = 0 and the angular hybrid at both theta = 0 and pi (equal norms)."""
    r = 1.5
    est = plots.pointwise_estimates(r, [0.0, math.pi], n_est=50, seed=1)
    truth = np.exp(r * r * np.cos([0.0, math.pi]))
    np.testing.assert_allclose(est["angular"], truth[:, None] * np.ones((1, 50)), rtol=1e-10)
    np.testing.assert_allclose(est["trig"][0], truth[0], rtol=1e-12)
    assert np.std(est["trig"][1]) > 0.1 * truth[1] and np.std(est["pos"][0]) > 0.1 * truth[0]
    s = plots.pointwise_summary(est["angular"], r, [0.0, math.pi])
    assert np.all(s["rel_err"] < 1e-10)


def test_summary_on_known_values():
    th = np.array([math.pi / 2])  # SM = 1
    e = np.array([[0.0, 2.0] * 50])
    s = plots.pointwise_summary(e, 1.0, th)
    assert s["truth"][0] == pytest.approx(1.0)
    assert s["rel_err"][0] == pytest.approx(1.0)  # sqrt(mean (e - 1)^2) / 1
    assert s["rel_err_se"][0] == pytest.approx(0.0, abs=1e-12)  # squared errors all equal
    assert s["q05"][0] == 0.0 and s["q95"][0] == 2.0
    with pytest.raises(ValueError, match="one row per theta"):
        plots.pointwise_summary(e, 1.0, [0.0, 1.0])
    with pytest.raises(ValueError, match=r"\[0, pi\]"):
        plots.pointwise_estimates(1.0, [4.0], n_est=2)
    with pytest.raises(ValueError, match="r must be > 0"):
        plots.pointwise_estimates(0.0, [1.0], n_est=2)
    with pytest.raises(ValueError, match="theta"):
        plots.pointwise_estimates(1.0, [float("nan")], n_est=2)


@pytest.mark.mc
def test_monte_carlo_relative_error_matches_closed_form_and_rejects_a_wrong_one():
    """At r = 0.3, theta = pi/2 the MC MSE of each estimator agrees with the closed form within
    4.5 SE (two-sided false-alarm rate ~7e-6 each, normal approximation); an MSE 25% larger
    (the closed form at ~102 instead of 128 features) must be rejected (power check).  At
    r >= 0.5 the hybrid's squared errors (m = 16) are heavy-tailed by the tail diagnostic, so
    its SE would not be trusted there."""
    r, th = 0.3, np.array([math.pi / 2])
    est = plots.pointwise_estimates(r, th, n_est=12_000, seed=0)
    for kind in ("trig", "pos", "angular"):
        s = plots.pointwise_summary(est[kind], r, th)
        assert s["trustworthy"][0], kind
        mse_mc = (s["rel_err"][0] * s["truth"][0]) ** 2
        se = 2 * s["rel_err"][0] * s["rel_err_se"][0] * s["truth"][0] ** 2
        mse_cf = (plots.closed_form_rel_error(kind, r, th)[0] * s["truth"][0]) ** 2
        assert abs(mse_mc - mse_cf) < 4.5 * se, (kind, mse_mc, mse_cf, se)
        assert abs(mse_mc - 1.25 * mse_cf) > 4.5 * se, kind  # a wrong formula is rejected

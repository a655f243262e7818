"""Monte Carlo for discretely-induced RFs (``rfcheck.estimators.crt.simulate_dirf``) against the
closed forms of ``rfcheck.closed_forms.crt`` (CRT Thm 3.4-3.5), and the sec 5.1 experiment
(``rfcheck.estimators.crt.log_variances``) against the per-pair closed forms.

Statistical tests use exact standard errors (raw moments E[(f f)^k], k <= 4, from the
exact series) and a two-sided z-threshold of 4.5 (false-alarm rate 7e-6 per test); each
has a power test: a formula off by 20% must be rejected.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rfcheck.closed_forms import crt
from rfcheck.estimators import crt as crt_est
from rfcheck.stats import estimate_mean, estimate_mse, fourth_central_moment_of_mean

Z = 4.5


def _raw_moments(x: np.ndarray, y: np.ndarray, log_pk) -> tuple[float, float, float, float]:
    """E[(f f)^k], k = 1..4, by exact series in mpmath (independent of the sampler)."""
    out = []
    with mpmath.workdps(40):
        for k in (1, 2, 3, 4):
            tot = mpmath.mpf(0)
            for a in x * y:
                a = mpmath.mpf(float(a))
                s = mpmath.fsum(mpmath.exp(log_pk(j)) * (a**j / (mpmath.factorial(j) * mpmath.exp(log_pk(j)))) ** k
                                for j in range(120))
                tot += mpmath.log(s) if s > 0 else -mpmath.inf
            out.append(float(mpmath.exp(tot - k * (float(x @ x) + float(y @ y)) / 2)))
    return tuple(out)


CASES = [("poisson", 0.6, 3, 0.5), ("poisson", 0.15, 8, 0.3), ("geometric", 0.4, 3, 0.5), ("geometric", 0.8, 8, 0.3)]


@pytest.mark.parametrize(("dist", "par", "d", "scale"), CASES)
def test_sampler_mean_and_variance_match_closed_forms(dist, par, d, scale):
    rng = np.random.default_rng(d)
    x, y = rng.normal(size=d) * scale, rng.normal(size=d) * scale
    k = math.exp(-float(np.sum((x - y) ** 2)) / 2)
    ds = crt.discrete_pair_stats(x, y)
    if dist == "poisson":
        var = math.exp(crt.poisson_log_variance(ds["q"][0], ds["xy"][0], ds["sq_diff"][0], d, par))
        lpk = crt.poisson_log_pk(par)
    else:
        var = math.exp(crt.geometric_log_variance(ds["abs_prod"][0], ds["xy"][0], ds["sq_diff"][0], par))
        lpk = crt.geometric_log_pk(par)
    raw = _raw_moments(x, y, lpk)
    assert abs(raw[0] - k) <= 1e-12 * k  # the series reproduce K (eq 10) ...
    assert abs(raw[1] - k * k - var) <= 1e-10 * raw[1]  # ... and the closed-form variance
    est = crt_est.simulate_dirf(x, y, dist, par, 1, 200_000, seed=11)
    mean = estimate_mean(est, exact_var=var)
    assert abs(mean.value - k) <= Z * mean.se
    mse = estimate_mse(est, k, exact_moments=fourth_central_moment_of_mean(raw, 1))
    assert mse.trustworthy, mse.reason
    assert abs(mse.value - var) <= Z * mse.se
    assert abs(mse.value - 1.2 * var) > Z * mse.se  # power: a 20% error is seen


def test_sampler_is_reproducible_and_seed_sensitive():
    x, y = np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.4, -0.3])
    a = crt_est.simulate_dirf(x, y, "poisson", 0.5, 4, 10_000, seed=3)
    b = crt_est.simulate_dirf(x, y, "poisson", 0.5, 4, 10_000, seed=3)
    c = crt_est.simulate_dirf(x, y, "poisson", 0.5, 4, 10_000, seed=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_geometric_sampler_support_starts_at_zero():
    w = crt_est.sample_omega("geometric", 0.3, (200_000,), np.random.default_rng(0))
    assert w.min() == 0
    # P(w = 0) = p: binomial SE
    frac = np.mean(w == 0)
    assert abs(frac - 0.3) <= Z * math.sqrt(0.3 * 0.7 / w.size)


@given(st.lists(st.floats(1e-3, 3.0), min_size=1, max_size=6), st.sampled_from(["poisson", "geometric"]),
       st.integers(0, 1000))
def test_dirf_features_positive_for_positive_inputs(xs, dist, seed):
    x = np.array(xs)
    par = 0.7 if dist == "poisson" else 0.4
    w = crt_est.sample_omega(dist, par, (500, x.size), np.random.default_rng(seed))
    la, sg = crt_est.product_log_abs_sign(w, x, np.ones_like(x), dist, par)
    assert np.all(sg > 0) and np.all(np.isfinite(la))


def test_shifted_inputs_are_positive_and_keep_the_kernel():
    rng = np.random.default_rng(5)
    xs, ys = rng.normal(size=(50, 4)), rng.normal(size=(50, 4)) + 1
    c = crt.positive_shift(xs, ys)
    assert np.all(xs - c > 0) and np.all(ys - c > 0)
    np.testing.assert_allclose(np.sum(((xs - c) - (ys - c)) ** 2, 1), np.sum((xs - ys) ** 2, 1), rtol=1e-12)


BAD_SAMPLER = [("poisson", 0.0, "lambda > 0"), ("geometric", 1.0, "0 < p < 1"),
               ("binomial", 0.5, "dist must be"), ("poisson", float("nan"), "finite")]


@pytest.mark.parametrize(("dist", "par", "match"), BAD_SAMPLER)
def test_sampler_invalid_parameters(dist, par, match):
    with pytest.raises(ValueError, match=match):
        crt_est.simulate_dirf([0.1], [0.2], dist, par, 1, 10, seed=0)


def test_sec51_entries_are_the_pairwise_closed_forms():
    rng = np.random.default_rng(2)
    x, y = crt_est.sample_sets("heterogen", 0.5, 12, 6, rng)
    lv = crt_est.log_variances(x, y)
    i, j = 3, 7
    st_ = {k: (float(v[0]) if k != "d" else v) for k, v in crt.pair_stats(x[i], y[j]).items()}
    a, s = lv["params"]["GERF"]
    assert abs(lv["GERF"][i, j] - crt.gerf_log_variance(**st_, a=a, s=s)) <= 1e-9
    assert abs(lv["TrigRF"][i, j] - crt.trig_log_variance(**st_)) <= 1e-9
    lam = lv["params"]["PoisRF"]
    ds = crt.discrete_pair_stats(x[i], y[j])
    ref = crt.poisson_log_variance(ds["q"][0], ds["xy"][0], ds["sq_diff"][0], 6, lam) - math.log(2)
    assert abs(lv["PoisRF"][i, j] - ref) <= 1e-9 * max(1, abs(ref))
    c = crt.positive_shift(x, y)
    dsp = crt.discrete_pair_stats(x[i] - c, y[j] - c)
    p = lv["params"]["GeomRF+"]
    ref = crt.geometric_log_variance(dsp["abs_prod"][0], dsp["xy"][0], ds["sq_diff"][0], p) - math.log(2)
    assert abs(lv["GeomRF+"][i, j] - ref) <= 1e-9 * max(1, abs(ref))
    # the GERF optimum over complex A and s is at least as good as OPRF on the set statistics
    sts = crt.set_stats(x, y)
    args = (sts["sq_x"], sts["sq_y"], sts["sq_sum"], sts["sq_diff"], 6)
    assert crt.gerf_log_variance(*args, a, s) <= crt.gerf_log_variance(*args, lv["params"]["OPRF"], 1) + 1e-9


def test_crt_fig2_written_and_lines_are_the_experiment(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rfcheck.plots import FIGURES
    from rfcheck.plots.crt import plot_log_variances

    paths = FIGURES["crt-fig2"](out_dir=tmp_path, quick=True, seed=0)
    assert all(p.exists() and p.stat().st_size > 1000 for p in paths)
    fig, ax = plt.subplots()
    sig = np.array([0.3, 1.0])
    lines = plot_log_variances(ax, "normal", ("OPRF", "GeomRF+"), sig, 16, 2)
    ref = [crt_est.summary("normal", float(s), L=16, n_sets=2)["OPRF"]["mean"] for s in sig]
    np.testing.assert_allclose(lines[0].get_ydata(), ref, rtol=1e-12)
    plt.close(fig)

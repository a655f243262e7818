"""The Numba engine for discretely-induced RFs (``rfcheck.engine.discrete_engine``, CRT sec 3.2,
eq (9)-(10)): parity with its plain-Python twin, independence of the thread count, the
law of the projections (chi-square against the exact pmf), and the estimator's variance
against the closed forms of Thm 3.4 / 3.5 (``rfcheck.closed_forms.crt``).

Statistical thresholds: chi-square tests at p-value 1e-6 (false-alarm rate 1e-6 per
test); z-tests at |z| <= 4.5 (7e-6 per test).  Each has a power test: a distribution with
its parameter off by 5-10%, or a variance off by 20%, must be rejected.
"""

from __future__ import annotations

import math

import mpmath
import numba
import numpy as np
import pytest
import scipy.stats as sps

from rfcheck.closed_forms import crt
from rfcheck.engine import discrete_engine as de
from rfcheck.stats import estimate_mean, estimate_mse, fourth_central_moment_of_mean

Z = 4.5
P_MIN = 1e-6

# (dist, param, expected sampler mode): sparse (2), dense table (0), dense log inversion (1)
SAMPLERS = [("poisson", 0.08, 2), ("poisson", 1.3, 0), ("poisson", 250.0, 0),
            ("geometric", 0.9, 2), ("geometric", 0.3, 0), ("geometric", 2e-4, 1)]


def _pmf(dist: str, par: float, k: np.ndarray) -> np.ndarray:
    return sps.poisson.pmf(k, par) if dist == "poisson" else par * (1 - par) ** k


def _chi2_pvalue(draws: np.ndarray, pmf) -> float:
    """Chi-square goodness of fit of integer ``draws`` to ``pmf`` (bins with expected count
    >= 20; the tails pooled into the end bins)."""
    n = draws.size
    lo, hi = int(draws.min()), int(draws.max())
    ks = np.arange(max(0, lo - 50), hi + 51)
    p = pmf(ks)
    cdf_lo = np.sum(pmf(np.arange(0, ks[0]))) if ks[0] > 0 else 0.0
    p[0] += cdf_lo
    p[-1] += max(0.0, 1 - p.sum())
    obs = np.bincount((draws.astype(np.int64) - ks[0]).clip(0, len(ks) - 1), minlength=len(ks)).astype(float)
    # merge bins until every expected count is >= 20
    e_b, o_b, acc_e, acc_o = [], [], 0.0, 0.0
    for e, o in zip(p * n, obs, strict=True):
        acc_e += e
        acc_o += o
        if acc_e >= 20:
            e_b.append(acc_e)
            o_b.append(acc_o)
            acc_e = acc_o = 0.0
    if e_b:
        e_b[-1] += acc_e
        o_b[-1] += acc_o
    e_b, o_b = np.array(e_b), np.array(o_b)
    stat = float(np.sum((o_b - e_b) ** 2 / e_b))
    return float(sps.chi2.sf(stat, len(e_b) - 1))


@pytest.mark.parametrize(("dist", "par", "mode"), SAMPLERS)
def test_sampler_mode_and_twin_parity(dist, par, mode):
    """Every sampler mode: the Numba draws equal the plain-Python twin's bit for bit."""
    assert de._sampler_args(dist, par, 7)["mode"] == mode
    a = de.draw_counts(dist, par, 130, 3, 7, seed=5)
    b = de.draw_counts_reference(dist, par, 130, 3, 7, seed=5)
    np.testing.assert_array_equal(a, b)
    assert np.all(a >= 0) and np.all(a == np.floor(a))


@pytest.mark.parametrize(("dist", "par", "mode"), SAMPLERS)
def test_marginal_law_chi_square(dist, par, mode):
    """Marginal law of one coordinate (first, middle and last of a row: the sparse mode's
    gaps must not bias positions) and of the row sum (sum of d i.i.d. draws: Poisson(d
    lambda) or negative binomial(d, p), which tests independence along the row) against
    the exact pmf; power: the same draws against a parameter 5% off are rejected."""
    d = 9
    w = de.draw_counts(dist, par, 40_000, 2, d, seed=17).reshape(-1, d)
    for col in (0, d // 2, d - 1):
        assert _chi2_pvalue(w[:, col], lambda k: _pmf(dist, par, k)) > P_MIN
    s = w.sum(axis=1)
    if dist == "poisson":
        row_pmf = lambda k, lam=par: sps.poisson.pmf(k, d * lam)  # noqa: E731
        wrong = lambda k, lam=par: sps.poisson.pmf(k, d * lam * 1.05)  # noqa: E731
    else:
        row_pmf = lambda k, p=par: sps.nbinom.pmf(k, d, p)  # noqa: E731
        wrong = lambda k, p=par: sps.nbinom.pmf(k, d, p * (1.05 if p < 0.9 else 1.01))  # noqa: E731
    assert _chi2_pvalue(s, row_pmf) > P_MIN
    assert _chi2_pvalue(s, wrong) < P_MIN  # power


def test_draws_do_not_depend_on_thread_count():
    x = np.array([[0.3, -0.2, 0.5, 0.0], [0.1, 0.1, -0.4, 0.2]])
    y = np.array([[0.1, 0.4, -0.3, 0.2], [0.2, -0.5, 0.3, 0.1]])
    saved = numba.get_num_threads()
    try:
        res = []
        for nt in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(nt)
            res.append([de.simulate(x, y, dist, par, 5, 1000, seed=9) for dist, par, _ in SAMPLERS[:2] + SAMPLERS[3:5]]
                       + [de.draw_counts("geometric", 0.9, 500, 4, 4, seed=9)])
    finally:
        numba.set_num_threads(saved)
    for a, b in zip(res[0], res[-1], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("dist", "par", "mode"), SAMPLERS[:2] + SAMPLERS[3:5] + SAMPLERS[5:])
def test_estimates_equal_python_twin(dist, par, mode):
    """Two pairs (one with a zero coordinate, x_l y_l = 0), negative products, a shift:
    the engine's estimates equal the twin's (same counts, same operations and order)."""
    x = np.array([[0.3, -0.2, 0.5, 0.0, 0.2], [0.1, 0.1, -0.4, 0.2, 0.3]])
    y = np.array([[0.1, 0.4, -0.3, 0.2, -0.1], [0.2, -0.5, 0.3, 0.1, 0.3]])
    a = de.simulate(x, y, dist, par, 3, 70, seed=4)
    b = de.simulate_reference(x, y, dist, par, 3, 70, seed=4)
    np.testing.assert_array_equal(a, b)
    c = np.full(5, -0.6)
    np.testing.assert_array_equal(de.simulate(x, y, dist, par, 2, 65, seed=4, shift=c),
                                  de.simulate_reference(x, y, dist, par, 2, 65, seed=4, shift=c))


def test_seed_and_stream_behaviour():
    x, y = np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.4, -0.3])
    a = de.simulate(x, y, "poisson", 0.5, 4, 300, seed=3)
    np.testing.assert_array_equal(a, de.simulate(x, y, "poisson", 0.5, 4, 300, seed=3))
    assert not np.array_equal(a, de.simulate(x, y, "poisson", 0.5, 4, 300, seed=4))
    # a longer run extends a shorter one (blocks are seeded by their index)
    np.testing.assert_array_equal(de.simulate(x, y, "poisson", 0.5, 4, 1000, seed=3)[:, :300], a)


# ------------------------------------------------------------------ variance vs Thm 3.4 / 3.5
def _raw_moments(x: np.ndarray, y: np.ndarray, dist: str, par: float) -> tuple[float, float, float, float]:
    """E[(f f)^k], k = 1..4, of one feature product by exact series in mpmath (independent
    of the sampler and of the closed forms)."""
    out = []
    with mpmath.workdps(40):
        lam = mpmath.mpf(par)

        def log_pk(j: int):
            if dist == "poisson":
                return -lam + j * mpmath.log(lam) - mpmath.loggamma(j + 1)
            return mpmath.log(lam) + j * mpmath.log1p(-lam)

        for k in (1, 2, 3, 4):
            tot = mpmath.mpf(0)
            for a in x * y:
                a = mpmath.mpf(float(a))
                s = mpmath.fsum(mpmath.exp(log_pk(j)) * (a**j / (mpmath.factorial(j) * mpmath.exp(log_pk(j)))) ** k
                                for j in range(150))
                tot += mpmath.log(s) if s > 0 else -mpmath.inf
            out.append(float(mpmath.exp(tot - k * (float(x @ x) + float(y @ y)) / 2)))
    return tuple(out)


VAR_CASES = [  # (dist, param, d, scale, M, shift): sparse and dense modes, M = 1 and M > 1
    ("poisson", "opt", 4, 0.35, 1, None), ("poisson", 0.9, 3, 0.5, 4, None), ("poisson", "opt", 6, 0.3, 3, 0.8),
    ("geometric", "opt", 4, 0.35, 1, None), ("geometric", 0.35, 3, 0.4, 4, None), ("geometric", "opt", 6, 0.3, 3, 0.8),
]


@pytest.mark.parametrize(("dist", "par", "d", "scale", "M", "shift"), VAR_CASES)
def test_mc_variance_matches_closed_form(dist, par, d, scale, M, shift):
    """MSE of K_hat_M (engine) = Var_1 / M from Thm 3.4 (eq 11) / Thm 3.5 (eq 13) within
    4.5 exact standard errors (fourth moments from the exact series); power: 1.2x rejected.
    ``"opt"``: lambda* of sec 3.2.1 / p* by Brent (appendix 9.10.1); ``shift``: PoisRF+ /
    GeomRF+ with c = -shift (all shifted products positive)."""
    rng = np.random.default_rng(d * 7 + M)
    x, y = rng.normal(size=d) * scale, rng.normal(size=d) * scale
    c = None if shift is None else np.full(d, -shift)
    xs, ys = (x, y) if c is None else (x - c, y - c)
    ds = crt.discrete_pair_stats(xs, ys)
    if par == "opt":
        par = (float(crt.poisson_lambda_star(ds["q"][0], d)) if dist == "poisson"
               else crt.geometric_p_star(ds["abs_prod"][0], float(ds["xy"][0]))[0])
    if dist == "poisson":
        var1 = math.exp(crt.poisson_log_variance(ds["q"][0], ds["xy"][0], ds["sq_diff"][0], d, par))
    else:
        var1 = math.exp(crt.geometric_log_variance(ds["abs_prod"][0], ds["xy"][0], ds["sq_diff"][0], par))
    k = math.exp(-float(np.sum((x - y) ** 2)) / 2)
    raw = _raw_moments(xs, ys, dist, par)
    assert abs(raw[0] - k) <= 1e-12 * k
    assert abs(raw[1] - k * k - var1) <= 1e-10 * raw[1]  # the series reproduce the closed form
    est = de.simulate(x, y, dist, par, M, 200_000, seed=21, shift=c)[0]
    mean = estimate_mean(est, exact_var=var1 / M)
    assert abs(mean.value - k) <= Z * mean.se
    mse = estimate_mse(est, k, exact_moments=fourth_central_moment_of_mean(raw, M))
    assert mse.trustworthy, mse.reason
    assert abs(mse.value - var1 / M) <= Z * mse.se
    assert abs(mse.value - 1.2 * var1 / M) > Z * mse.se  # power


@pytest.mark.parametrize(("dist", "par"), [("poisson", 0.2), ("geometric", 0.6)])
def test_numpy_baseline_is_unbiased_and_matches_engine_variance(dist, par):
    """The NumPy baseline (same estimator, numpy.random draws) is unbiased, and the two
    implementations' sample variances agree (F-like z-test on the difference)."""
    x, y = np.array([0.3, -0.2, 0.5, 0.1]), np.array([0.1, 0.4, -0.3, 0.2])
    k = math.exp(-float(np.sum((x - y) ** 2)) / 2)
    ds = crt.discrete_pair_stats(x, y)
    var1 = math.exp(crt.poisson_log_variance(ds["q"][0], ds["xy"][0], ds["sq_diff"][0], 4, par) if dist == "poisson"
                    else crt.geometric_log_variance(ds["abs_prod"][0], ds["xy"][0], ds["sq_diff"][0], par))
    a = de.simulate_numpy(x, y, dist, par, 2, 100_000, seed=1, chunk_elems=1 << 16)[0]
    b = de.simulate(x, y, dist, par, 2, 100_000, seed=1)[0]
    for est in (a, b):
        assert abs(est.mean() - k) <= Z * math.sqrt(var1 / 2 / est.size)
    ma, mb = estimate_mse(a, k), estimate_mse(b, k)
    assert ma.trustworthy and mb.trustworthy
    assert abs(ma.value - mb.value) <= Z * math.hypot(ma.se, mb.se)


def test_zero_product_coordinates_are_exact():
    """x_l y_l = 0 in every coordinate but one: only w_l = 0 there contributes (0^0 = 1)."""
    x, y = np.array([0.0, 0.5, 0.0]), np.array([0.7, 0.4, 0.0])
    est = de.simulate(x, y, "poisson", 0.3, 1, 50_000, seed=2)[0]
    k = math.exp(-float(np.sum((x - y) ** 2)) / 2)
    var1 = math.exp(crt.poisson_log_variance(0.04, 0.2, float(np.sum((x - y) ** 2)), 3, 0.3))
    assert abs(est.mean() - k) <= Z * math.sqrt(var1 / est.size)
    assert np.all(np.isfinite(est))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"dist": "poisson", "param": 0.0}, "lambda > 0"),
    ({"dist": "poisson", "param": -1.0}, "lambda > 0"),
    ({"dist": "poisson", "param": float("nan")}, "lambda must be finite"),
    ({"dist": "geometric", "param": 1.0}, "0 < p < 1"),
    ({"dist": "geometric", "param": 0.0}, "0 < p < 1"),
    ({"dist": "geometric", "param": 1e-13}, "p >= 1e-12"),
    ({"dist": "binomial", "param": 0.5}, "dist must be one of"),
])
def test_bad_parameters_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        de.simulate(np.ones(3), np.ones(3), M=2, n_trials=4, **kwargs)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="finite"):
        de.simulate(np.array([np.nan, 1.0]), np.ones(2), "poisson", 1.0, 2, 4)
    with pytest.raises(ValueError, match="same shape"):
        de.simulate(np.ones(3), np.ones(2), "poisson", 1.0, 2, 4)
    with pytest.raises(ValueError, match="shift must have shape"):
        de.simulate(np.ones(3), np.ones(3), "poisson", 1.0, 2, 4, shift=np.ones(2))
    with pytest.raises(ValueError, match="M"):
        de.simulate(np.ones(3), np.ones(3), "poisson", 1.0, 0, 4)
    with pytest.raises(ValueError, match="seed"):
        de.simulate(np.ones(3), np.ones(3), "poisson", 1.0, 2, 4, seed=-1)


def test_inversion_tables_are_valid_cdfs():
    """Thresholds increase to 2^53, the guide table never overshoots, and the tabulated CDF
    equals the exact CDF (mpmath, 40 digits) to 4e-16 absolute: the only departures from
    the exact law are this rounding and the 2^-53 grid of the uniforms."""
    for dist, par in (("poisson", 0.07), ("poisson", 3.0), ("poisson", 5e4), ("geometric", 0.5), ("geometric", 0.01)):
        for positive in (False, True):
            k_lo, T, guide, shift = de.inversion_table(dist, par, positive)
            assert np.all(np.diff(T) >= 0) and T[-1] == 1 << 53
            starts = np.arange(len(guide), dtype=np.int64) << shift
            assert np.all(T[guide] > starts) and np.all((guide == 0) | (T[np.maximum(guide - 1, 0)] <= starts))
            with mpmath.workdps(40):
                lam = mpmath.mpf(par)
                p0 = mpmath.exp(-lam) if dist == "poisson" else lam
                for i in np.unique(np.linspace(0, len(T) - 2, 25).astype(int)):
                    k = k_lo + int(i)
                    if dist == "poisson":
                        tail = mpmath.gammainc(k + 1, 0, lam, regularized=True)  # P(X > k)
                    else:
                        tail = (1 - lam) ** (k + 1)
                    cdf = 1 - tail / (1 - p0) if positive else 1 - tail
                    assert abs(T[i] / 2.0**53 - float(cdf)) <= 4e-16, (dist, par, positive, k)
    assert de.inversion_table("geometric", 1e-5) is None  # table too long: log inversion


# ------------------------------------------------------------------ bench section
def test_discrete_bench_quick_entries():
    """``run_discrete_bench(quick=True)``: the documented keys, the optimal parameters of
    the workload pair, consistent ratios (a smoke test of the harness, not a timing)."""
    from rfcheck import bench

    x, y, lam, p = bench.discrete_pair()
    st = crt.discrete_pair_stats(x, y)
    assert math.isclose(lam, math.sqrt(st["q"][0] / 64), rel_tol=1e-12)  # lambda* = sqrt(q/d)
    assert 0 < p < 1
    entries = bench.run_discrete_bench(quick=True)
    assert [(e["coupling"], e["setting"]) for e in entries] == [
        ("poisson", "optimal"), ("geometric", "optimal"), ("poisson", "dense"), ("geometric", "dense")]
    assert [e["sampler_mode"] for e in entries] == [2, 2, 0, 0]
    for e in entries:
        assert {"workload", "coupling", "path", "trials_per_s", "baseline", "baseline_trials_per_s", "ratio",
                "flop_ceiling_share"} <= set(e)
        assert e["trials_per_s"] > 0 and e["baseline_trials_per_s"] > 0
        assert math.isclose(e["ratio"], e["trials_per_s"] / e["baseline_trials_per_s"])
    assert "sparse" in bench.format_discrete_table(entries)

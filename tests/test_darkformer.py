"""DARKFormer closed forms (rfcheck.closed_forms.darkformer) against mpmath, quadrature,
numerical optimisation and Monte Carlo (SE-derived tolerances, stated false-alarm level)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ortho_group

from rfcheck.closed_forms import darkformer as df
from rfcheck.estimators import darkformer as dfe
from rfcheck.stats import estimate_mean, z_critical

Z = z_critical(1e-4)  # two-sided, per assertion false-alarm rate 1e-4


def _rot(d: int, seed: int) -> np.ndarray:
    return np.eye(1) if d == 1 else ortho_group.rvs(d, random_state=seed)


def _lam(eigs, seed=0) -> np.ndarray:
    u = _rot(len(eigs), seed)
    return (u * np.asarray(eigs, float)) @ u.T


# --------------------------------------------------------------- three faces


@pytest.mark.parametrize("lam", [0.0, 1e-12, 0.1, 0.3, 0.49, 0.4999999])
def test_sigma_star_eig_faces(lam):
    with mpmath.workdps(60):
        ref = (1 + 2 * mpmath.mpf(lam)) / (1 - 2 * mpmath.mpf(lam))
        assert abs(df.sigma_star_eig(lam) - float(ref)) <= 4 * np.finfo(float).eps * float(ref)
        assert abs(df.sigma_star_eig(lam, backend="mpmath", dps=50) - ref) < mpmath.mpf(10) ** -45 * ref
    x = sympy.Symbol("x")
    assert sympy.simplify(df.sigma_star_eig.symbolic(x) - (1 + 2 * x) / (1 - 2 * x)) == 0


@pytest.mark.parametrize(("lam", "s"), [(0.0, 1.0), (0.1, 1.0), (0.1, 0.76), (0.3, 2.5), (0.45, 30.0), (0.2, 1e6)])
def test_coord_second_moment_vs_quadrature(lam, s):
    """d = 1: 1-D quadrature of int p_I^2 B^2 / psi (B as checked by quadrature in
    test_b_x_vs_quadrature_d1_and_mc_d2)."""
    with mpmath.workdps(30):
        lam_m, s_m = mpmath.mpf(lam), mpmath.mpf(s)

        def b(w):
            return mpmath.exp(2 * lam_m / (1 + 2 * lam_m) * w * w) / mpmath.sqrt(1 + 2 * lam_m)

        def integrand(w):
            p_i = mpmath.exp(-w * w / 2) / mpmath.sqrt(2 * mpmath.pi)
            psi = mpmath.exp(-w * w / (2 * s_m)) / mpmath.sqrt(2 * mpmath.pi * s_m)
            return p_i**2 * b(w) ** 2 / psi

        ref = mpmath.log(mpmath.quad(integrand, [-mpmath.inf, 0, mpmath.inf]))
    got = df.coord_log_second_moment(lam, s)
    assert abs(got - float(ref)) < 1e-10
    assert abs(df.coord_log_second_moment(lam, s, backend="mpmath", dps=30) - ref) < 1e-18


def test_coord_second_moment_infinite_exactly_outside_domain():
    lam = 0.2
    thr = (1 + 2 * lam) / (2 * (1 - 2 * lam))
    assert math.isfinite(df.coord_log_second_moment(lam, thr * (1 + 1e-9)))
    assert df.coord_log_second_moment(lam, thr * (1 - 1e-9)) == math.inf
    assert df.coord_log_second_moment(0.5, 1e9) == math.inf
    assert df.coord_log_second_moment(0.7, 3.0) == math.inf
    assert df.coord_log_second_moment(0.7, 3.0, backend="mpmath") == mpmath.inf


def test_general_second_moment_matches_codiagonal_product():
    lam = _lam([0.05, 0.2, 0.35], seed=3)
    ev, u = np.linalg.eigh(lam)
    s_eigs = np.array([1.1, 2.0, 7.0])
    sigma = (u * s_eigs) @ u.T
    want = float(np.sum(df.coord_log_second_moment(ev, s_eigs)))
    assert abs(df.log_expected_second_moment(lam, sigma) - want) < 1e-12
    mp = df.log_expected_second_moment(lam, sigma, backend="mpmath", dps=40)
    assert abs(float(mp) - want) < 1e-12


# ------------------------------------------------------------------ finiteness


def test_isotropic_prf_finite_iff_lambda_below_one_sixth():
    below = 1 / 6  # the double nearest 1/6 lies below 1/6: finite (and huge)
    above = float(np.nextafter(1 / 6, 1))  # the next double lies above 1/6: infinite
    for d in (1, 3):
        eye = np.eye(d)
        lv = df.log_expected_variance(np.diag([below] + [0.01] * (d - 1)), eye)
        assert math.isfinite(lv) and lv > 15
        assert df.log_expected_variance(np.diag([above] + [0.01] * (d - 1)), eye) == math.inf
        assert df.expected_variance(np.diag([above] + [0.01] * (d - 1)), eye) == math.inf
        # away from the edge, with a rotation
        assert math.isfinite(df.log_expected_variance(_lam([0.16] + [0.01] * (d - 1), d), eye))
        assert df.log_expected_variance(_lam([0.17] + [0.01] * (d - 1), d), eye) == math.inf
    # near the edge the float64 face is recomputed in mpmath: it agrees with the mpmath face
    lam = np.diag([below])
    mp = df.log_expected_second_moment(lam, np.eye(1), backend="mpmath", dps=60)
    assert abs(df.log_expected_second_moment(lam, np.eye(1)) - float(mp)) < 1e-12 * abs(float(mp))
    assert abs(df.coord_log_second_moment(below, 1.0) - float(mp)) < 1e-12 * abs(float(mp))


def test_every_proposal_infinite_when_lambda_reaches_one_half():
    lam = np.diag([0.5, 0.1])
    for c in (1.0, 10.0, 1e6):
        assert df.log_expected_variance(lam, c * np.eye(2)) == math.inf
    assert df.log_expected_kappa_sq(lam) == math.inf
    with pytest.raises(ValueError, match="< 1/2"):
        df.sigma_star(lam)
    with pytest.raises(ValueError, match="1/2"):
        dfe.optimise_sigma(lam)


def test_finiteness_is_loewner_half_sigma_star():
    lam = _lam([0.1, 0.3], seed=5)
    ss = df.sigma_star(lam)
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.standard_normal((2, 2))
        u = rng.standard_normal(2)
        u /= np.linalg.norm(u)
        assert df.variance_finite(lam, ss / 2 + 0.01 * (a @ a.T) + 1e-6 * np.eye(2))
        assert not df.variance_finite(lam, ss / 2 - 0.01 * np.outer(u, u))  # still SPD (eigs >= 0.75)
        assert df.log_expected_variance(lam, ss / 2 - 0.01 * np.outer(u, u)) == math.inf


# -------------------------------------------------------- optimum (Thm 3.2 corrected)


@pytest.mark.parametrize(("eigs", "seed"), [([0.05, 0.4], 1), ([0.01, 0.2, 0.45], 2), ([0.02, 0.1, 0.3, 0.44], 3),
                                            ([0.3, 0.3, 0.01], 4)])
def test_numerical_optimum_is_sigma_star(eigs, seed):
    lam = _lam(eigs, seed)
    s_opt, lv = dfe.optimise_sigma(lam, seed=seed)
    ss = df.sigma_star(lam)
    assert np.max(np.abs(s_opt - ss)) / np.max(np.abs(ss)) < 1e-5
    assert abs(lv - math.log(df.optimal_variance(lam))) < 1e-9
    # V(Sigma*) equals the Cauchy-Schwarz bound of Lemma 3.1 computed independently:
    # (int f)^2 = (E_x exp|x|^2)^2 by 1-D quadratures along Lambda's eigenvectors
    with mpmath.workdps(30):
        intf = mpmath.mpf(1)
        for lam_i in eigs:
            intf *= mpmath.quad(lambda z, li=lam_i: mpmath.exp(li * z * z - z * z / 2) / mpmath.sqrt(2 * mpmath.pi),
                                [-mpmath.inf, mpmath.inf])
        k2 = mpmath.exp(df.log_expected_kappa_sq(lam))
        bound = intf**2 - k2
    assert abs(df.optimal_variance(lam) - float(bound)) < 1e-10 * float(bound)
    assert abs(math.exp(df.log_expected_variance(lam, ss)) - float(bound)) < 1e-9 * float(bound)


_eig = st.floats(0.0, 0.49, allow_nan=False)


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(st.lists(_eig, min_size=1, max_size=4), st.integers(0, 100))
def test_sigma_star_shares_eigenvectors(eigs, seed):
    lam = _lam(eigs, seed)
    ss = df.sigma_star(lam)
    comm = ss @ lam - lam @ ss
    assert np.max(np.abs(comm)) <= 1e-10 * max(1.0, np.max(np.abs(ss)))


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(st.lists(_eig, min_size=2, max_size=4), st.integers(0, 100), st.booleans())
def test_sigma_star_isotropic_iff_lambda_isotropic(eigs, seed, iso):
    if iso:
        eigs = [eigs[0]] * len(eigs)
    lam = _lam(eigs, seed)
    ev = np.linalg.eigvalsh(df.sigma_star(lam))
    spread_s = (ev[-1] - ev[0]) / ev[-1]
    spread_l = max(eigs) - min(eigs)
    if spread_l == 0:
        assert spread_s < 1e-12
    else:  # d/dlam (1+2lam)/(1-2lam) = 4/(1-2lam)^2 >= 4: the spread cannot close up
        assert spread_s * ev[-1] >= 3.9 * spread_l


@settings(max_examples=30, derandomize=True, database=None, deadline=None)
@given(st.lists(st.floats(0.0, 0.45), min_size=1, max_size=3), st.integers(0, 50),
       st.lists(st.floats(-1.0, 1.0), min_size=9, max_size=9))
def test_no_sigma_beats_sigma_star(eigs, seed, pert):
    lam = _lam(eigs, seed)
    d = lam.shape[0]
    ss = df.sigma_star(lam)
    a = np.array(pert[: d * d]).reshape(d, d)
    sigma = ss + 0.3 * (a @ a.T) - 0.1 * np.trace(a @ a.T) * 0 + 1e-3 * np.eye(d)
    lv_star = df.log_expected_variance(lam, ss)
    lv = df.log_expected_variance(lam, sigma)
    assert lv >= lv_star - 1e-12


def test_strict_improvement_over_isotropic():
    for eigs in ([1e-3], [0.05, 0.1], [0.1, 0.15, 0.01]):
        lam = _lam(eigs, 7)
        d = len(eigs)
        assert df.optimal_variance(lam) < df.expected_variance(lam, np.eye(d))
    lam0 = np.zeros((2, 2))
    assert df.optimal_variance(lam0) == 0.0
    assert df.log_expected_variance(lam0, np.eye(2)) == -math.inf


# ------------------------------------------------------------------ B_x and features


def test_b_x_vs_quadrature_d1_and_mc_d2():
    for lam, w in ((0.3, 0.7), (2.0, -1.3), (0.0, 5.0)):
        with mpmath.workdps(25):
            if lam == 0:
                ref = mpmath.mpf(1)
            else:
                ref = mpmath.quad(lambda x, w=w, lam=lam: mpmath.exp(2 * w * x - x * x - x * x / (2 * lam))
                                  / mpmath.sqrt(2 * mpmath.pi * lam), [-mpmath.inf, mpmath.inf])
        assert abs(df.b_x(np.array([[w]]), np.array([[lam]]))[0] - float(ref)) < 1e-12 * float(ref)
    lam = _lam([0.2, 1.5], 2)
    w = np.array([0.4, -0.3])
    rng = np.random.default_rng(1)
    x = rng.multivariate_normal(np.zeros(2), lam, size=400_000)
    samples = np.exp(2 * x @ w - np.sum(x * x, axis=1))
    est = estimate_mean(samples)
    assert est.trustworthy
    assert abs(est.value - df.b_x(w[None], lam)[0]) < Z * est.se


@pytest.mark.parametrize(("d", "r"), [(2, 1), (3, 2), (3, 3)])
def test_mahalanobis_prf_unbiased_eq3(d, r):
    rng = np.random.default_rng(10 * d + r)
    m_mat = 0.6 * rng.standard_normal((r, d))
    sigma = m_mat.T @ m_mat
    q = 0.5 * rng.standard_normal((1, d))
    k = 0.5 * rng.standard_normal((1, d))
    n_rep, m = 20_000, 16
    ests = np.empty(n_rep)
    for i in range(n_rep):
        om = rng.standard_normal((m, r)) @ m_mat  # rows ~ N(0, M^T M), possibly singular
        ests[i] = dfe.mahalanobis_prf_estimate(q, k, om, m_mat)[0]
    est = estimate_mean(ests)
    target = math.exp(float(q[0] @ sigma @ k[0]))
    assert est.trustworthy
    assert abs(est.value - target) < Z * est.se
    # power: the Euclidean softmax kernel is a different target
    assert abs(est.value - math.exp(float(q[0] @ k[0]))) > Z * est.se or np.allclose(sigma, np.eye(d))


def test_importance_weighted_estimator_unbiased_prop41():
    rng = np.random.default_rng(4)
    d = 2
    sigma = _lam([0.6, 1.4], 3)
    q = np.array([[0.3, -0.2]])
    k = np.array([[0.1, 0.4]])
    n, m = 40_000, 8
    cs = np.linalg.cholesky(sigma)
    om_s = rng.standard_normal((n * m, d)) @ cs.T
    a = dfe.importance_weighted_estimate(q, k, om_s, np.zeros(n * m), sigma)  # one row, n*m features
    a = np.exp(om_s @ (q + k)[0] - 0.5 * (q[0] @ sigma @ q[0] + k[0] @ sigma @ k[0])).reshape(n, m).mean(axis=1)
    assert abs(dfe.importance_weighted_estimate(q, k, om_s[:m], np.zeros(m), sigma)[0] - a[0]) < 1e-14 * a[0]
    om_i = rng.standard_normal((n * m, d))
    lw = dfe.log_gaussian_density(om_i, sigma) - dfe.log_gaussian_density(om_i, np.eye(d))
    b = np.exp(lw + om_i @ (q + k)[0] - 0.5 * (q[0] @ sigma @ q[0] + k[0] @ sigma @ k[0])).reshape(n, m).mean(axis=1)
    assert abs(dfe.importance_weighted_estimate(q, k, om_i[:m], lw[:m], sigma)[0] - b[0]) < 1e-14 * b[0]
    ea, eb = estimate_mean(a), estimate_mean(b)
    target = math.exp(float(q[0] @ sigma @ k[0]))
    assert ea.trustworthy and eb.trustworthy
    assert abs(ea.value - target) < Z * ea.se
    assert abs(eb.value - target) < Z * eb.se


def test_nested_mc_variance_general_sigma():
    lam = _lam([0.005, 0.02], 6)
    sigma = _lam([1.02, 1.1], 9)  # not co-diagonal with Lambda
    samples, exact = dfe.nested_mc_variance(lam, sigma, n_outer=100_000, n_inner=16, seed=3)
    est = estimate_mean(samples)
    assert est.trustworthy, est.reason
    assert abs(est.value - exact) < Z * est.se
    # power: a 10% error would be seen
    assert abs(1.1 * exact - est.value) > Z * est.se


# --------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("fn", "args", "msg"), [
    (df.sigma_star, (np.array([[0.1, 0.2], [0.0, 0.1]]),), "symmetric"),
    (df.sigma_star, (np.diag([-0.1, 0.1]),), "semidefinite"),
    (df.sigma_star, (np.diag([np.nan, 0.1]),), "finite"),
    (df.sigma_star, (np.diag([0.6, 0.1]),), "1/2"),
    (df.log_expected_variance, (np.diag([0.1, 0.1]), np.diag([1.0, 0.0])), "positive definite"),
    (df.sigma_star_eig, (0.5,), "1/2"),
    (df.coord_log_second_moment, (0.1, 0.0), "> 0"),
    (df.coord_log_second_moment, (float("nan"), 1.0), "NaN"),
    (df.log_expected_variance, (np.diag([0.1]), np.eye(1), 0), "m must"),
])
def test_bad_input(fn, args, msg):
    with pytest.raises(ValueError, match=msg):
        fn(*args)


def test_bad_feature_input():
    with pytest.raises(ValueError, match="r <= d"):
        dfe.mahalanobis_prf(np.zeros((1, 2)), np.zeros((3, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="finite"):
        dfe.mahalanobis_prf(np.array([[np.nan, 0.0]]), np.zeros((3, 2)), np.eye(2))


# ------------------------------------------------------------------------ figure


def test_darkformer_variance_figure(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rfcheck.plots import FIGURES
    from rfcheck.plots import darkformer as plots

    fig, ax = plt.subplots()
    lines = plots.plot_variance(ax)
    a, y = lines[0].get_data()
    iso, opt = plots.curves(np.asarray(a))
    assert np.array_equal(np.isinf(y), np.isinf(iso))
    assert np.isinf(y[np.asarray(a) >= plots.isotropic_edge()]).all()
    assert np.allclose(lines[1].get_data()[1], opt / math.log(10), rtol=1e-14)
    assert np.all(opt <= np.where(np.isinf(iso), np.inf, iso))
    plt.close(fig)
    paths = FIGURES["darkformer-variance"](out_dir=tmp_path, quick=True, seed=0)
    assert all(p.exists() and p.stat().st_size > 10_000 for p in paths)


def test_thm32_check_has_power():
    """The Cauchy-Schwarz equality check rejects a wrong Sigma* (planted: (I + L)(I - L)^{-1})."""
    from rfcheck.claims import BUDGETS
    from rfcheck.claims import darkformer as dc
    from rfcheck.ledger import check_equal
    from rfcheck.references import darkformer as dref

    def second_moment(sigma_of):
        return lambda ctx, p: ctx.exp(df.log_expected_second_moment(dc._lam(p), sigma_of(p), backend="mpmath",
                                                                    dps=mpmath.mp.dps))

    def wrong(p):
        lam = mpmath.matrix(dc._lam(p).tolist())
        eye = mpmath.eye(lam.rows)
        return (eye + lam) * mpmath.inverse(eye - lam)

    def rhs(p, dps):
        return dref.optimal_second_moment(dc._lam(p), dps)

    chk = check_equal(second_moment(wrong), rhs, name="cs")
    right = check_equal(second_moment(dc.printed_sigma_star), rhs, name="cs")
    p = {"d": 2, "l1": 0.2, "l2": 0.05, "l3": 0.0, "l4": 0.0, "rot": 3}
    assert chk.evaluate(p, BUDGETS["smoke"], 0).disc > 1
    assert right.evaluate(p, BUDGETS["smoke"], 0).disc <= 1


def test_nested_mc_variance_exact_zero_is_zero_not_a_log():
    """At Lambda = 0, Sigma = I the variance is exactly 0: the exact value is 0.0 (it was the log
    value -inf passed through), and every per-pair estimate is 0."""
    samples, exact = dfe.nested_mc_variance(0.0, 1.0, n_outer=4, n_inner=8, seed=0)
    assert exact == 0.0 and not np.any(samples)


def test_moved_estimators_warn_from_the_old_path():
    """The estimators moved to rfcheck.estimators.darkformer; the old closed_forms path warns and
    gives the same object for one release."""
    for name in ("mahalanobis_prf", "nested_mc_variance", "optimise_sigma"):
        with pytest.warns(DeprecationWarning, match=f"moved to rfcheck.estimators.darkformer.{name}"):
            old = getattr(df, name)
        assert old is getattr(dfe, name)
        assert name not in df.__all__ and name in dfe.__all__

"""Tests of the engine's antithetic (``<base>-anti``) and HD-product (``orf-hd``,
``simrf-hd``) couplings.

Antithetic pairs: ``ceil(M/2)`` rows of the base coupling, each followed by its negative.
Checked: the exact pair structure on both paths, the PosRF MSE of ``iid-anti`` against its
closed form (derived below) with a power companion, marginal laws, and equality in law of
the two engine paths and the NumPy baseline.

HD-product (SimRF eq 89-90, k = 3, zero-padding to D = 2^ceil(log2 d)): exact geometry in
D dimensions, exact first and second moments of the rows, equality in law with the NumPy
baseline, the Python twin, and -- the known limitation -- non-Gaussian rows at small D.

Statistical checks use fixed seeds and a per-test false-alarm level ALPHA = 1e-4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rfcheck import features
from rfcheck import stats as stats_mod
from rfcheck.engine import couplings as cp
from rfcheck.engine import montecarlo

ALPHA = 1e-4
Z_CRIT = stats.norm.isf(ALPHA / 2)
ANTI = [c for c in sorted(cp.COUPLINGS) if c.endswith("-anti")]

pytestmark = pytest.mark.mc


def _pair(d: int, u2: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    q, _ = np.linalg.qr(g.standard_normal((d, 2)))
    u, v = math.sqrt(u2) * q[:, 0], 0.6 * q[:, 1]
    return (u + v) / 2, (u - v) / 2


def _mse_z(khat: np.ndarray, k: float, var: float, m4: float) -> float:
    """z of the empirical MSE against ``var`` with the *exact* SE ``sqrt((m4 - var^2)/N)``
    (``m4 = E(K_hat - K)^4``): the squared error of PosRF has kurtosis ~1e3 here, and a
    sample-SE z at N = 2e4 is skewed (one seed in 40 gave z = -4.2 with a correct formula)."""
    est = stats_mod.estimate_mse(khat, k, exact_moments=(var, m4))
    return (est.value - var) / est.se


def posrf_var_iid_anti(x: np.ndarray, y: np.ndarray, M: int) -> float:
    """Var K_hat_M of the PosRF estimator with iid antithetic pairs.

    ``f(w) = A exp(w . u)``, ``A = exp(-(|x|^2 + |y|^2)/2)``, ``u = x + y``, ``K = A e^{|u|^2/2}``:
    ``Var f = K^2 (e^{|u|^2} - 1)``, ``Cov(f(w), f(-w)) = A^2 - K^2 = K^2 (e^{-|u|^2} - 1)``,
    so a pair sum has ``Var = 4 K^2 (cosh |u|^2 - 1)``; with ``p = floor(M/2)`` pairs and one
    single row if ``M`` is odd, ``Var K_hat = (p 4 K^2 (cosh|u|^2 - 1) + [M odd] Var f) / M^2``.
    """
    u2 = float((x + y) @ (x + y))
    k2 = math.exp(-float((x - y) @ (x - y)))
    var_pair = 4 * k2 * (math.cosh(u2) - 1)
    return ((M // 2) * var_pair + (M % 2) * k2 * math.expm1(u2)) / M**2


def posrf_m4_iid_anti(x: np.ndarray, y: np.ndarray, M: int) -> float:
    """``E(K_hat - K)^4`` for the estimator of :func:`posrf_var_iid_anti`, exactly.

    ``K_hat = (sum_i P_i + [M odd] F)/M`` with independent pair sums ``P = 2 A cosh(s Z)`` and
    ``F = A e^{s Z}`` (``s = |u|``, ``Z ~ N(0, 1)``); raw moments from ``E e^{t Z} = e^{t^2/2}``:
    ``E cosh^k(s Z) = 2^-k sum_j C(k, j) e^{(k - 2j)^2 s^2 / 2}``.  A sum of independent terms
    has ``mu_4 = sum mu_4,i + 3 ((sum sigma_i^2)^2 - sum sigma_i^4)``."""
    u2 = float((x + y) @ (x + y))
    a = math.exp(-0.5 * float(x @ x + y @ y))

    def central(raw: list[float]) -> tuple[float, float]:
        m1, m2, m3, m4 = raw
        return m2 - m1**2, m4 - 4 * m1 * m3 + 6 * m1**2 * m2 - 3 * m1**4

    pair = [(2 * a) ** k * sum(math.comb(k, j) * math.exp((k - 2 * j) ** 2 * u2 / 2)
                               for j in range(k + 1)) / 2**k for k in (1, 2, 3, 4)]
    single = [a**k * math.exp(k * k * u2 / 2) for k in (1, 2, 3, 4)]
    terms = [central(pair)] * (M // 2) + [central(single)] * (M % 2)
    var_sum = sum(v for v, _ in terms)
    mu4 = sum(m for _, m in terms) + 3 * (var_sum**2 - sum(v * v for v, _ in terms))
    return mu4 / M**4


def test_registry_has_antithetic_variants():
    assert set(ANTI) == {"iid-anti", "orf-anti", "simrf-anti", "simrf+-anti"}
    assert cp.block_sizes("iid-anti", 5, 3) == [2, 2, 1]
    assert cp.block_sizes("orf-anti", 9, 4) == [8, 1]
    assert cp.COUPLINGS["simrf-anti"].min_d == 2


@pytest.mark.parametrize("coupling", ANTI)
@pytest.mark.parametrize(("M", "d"), [(6, 4), (7, 4), (1, 3), (12, 5)])
def test_pairs_are_exact_negatives(coupling, M, d):
    W = cp.sample_ensemble(coupling, M, d, seed=M)
    np.testing.assert_array_equal(W[1::2], -W[0::2][: M // 2])
    t, sq = cp.sample_projection(coupling, M, d, 50, seed=M)
    np.testing.assert_array_equal(t[:, 1::2], -t[:, 0::2][:, : M // 2])
    np.testing.assert_array_equal(sq[:, 1::2], sq[:, 0::2][:, : M // 2])
    # the base rows are the base coupling's law: an ORF base keeps its orthogonality
    if coupling == "orf-anti" and M >= 4:
        B = W[0::2][: min(d, (M + 1) // 2)]
        q = B / np.linalg.norm(B, axis=1, keepdims=True)
        np.testing.assert_allclose(q @ q.T, np.eye(q.shape[0]), atol=1e-12)


@pytest.mark.parametrize("path", montecarlo.PATHS)
@pytest.mark.parametrize(("d", "u2", "M"), [(4, 1.0, 4), (4, 1.0, 7), (16, 0.5, 16)])
def test_iid_anti_mse_matches_closed_form(path, d, u2, M):
    x, y = _pair(d, u2, seed=d + M)
    prod = features.positive_product(x, y)
    k = float(prod.target[0])
    khat = montecarlo.simulate(prod, M, 20_000, coupling="iid-anti", path=path, seed=M)[0]
    var = posrf_var_iid_anti(x, y, M)
    m4 = posrf_m4_iid_anti(x, y, M)
    assert abs(_mse_z(khat, k, var, m4)) < Z_CRIT
    assert abs(khat.mean() - k) / math.sqrt(var / khat.size) < Z_CRIT
    # power: the iid variance (no antithetic cancellation) is rejected by the same check
    assert abs(_mse_z(khat, k, k * k * math.expm1(u2) / M, m4)) > Z_CRIT


def test_iid_anti_fourth_moment_against_quadrature():
    """:func:`posrf_m4_iid_anti` against direct Gauss-Hermite quadrature of the pair law (M = 2:
    one pair; M = 3: a pair and a single, convolved by the independent-sum formula's check
    ``E(S - ES)^4`` on a 2-D tensor grid)."""
    x, y = _pair(4, 1.0, seed=3)
    u = x + y
    s = math.sqrt(float(u @ u))
    a = math.exp(-0.5 * float(x @ x + y @ y))
    k = a * math.exp(s * s / 2)
    z, w = np.polynomial.hermite_e.hermegauss(120)
    w = w / w.sum()
    p = 2 * a * np.cosh(s * z)
    assert np.sum(w * (p / 2 - k) ** 4) == pytest.approx(posrf_m4_iid_anti(x, y, 2), rel=1e-10)
    f = a * np.exp(s * z)
    tot = (p[:, None] + f[None, :]) / 3 - k
    m4 = float(np.sum(w[:, None] * w[None, :] * tot**4))
    assert m4 == pytest.approx(posrf_m4_iid_anti(x, y, 3), rel=1e-10)


def test_negated_rows_marginally_standard_normal():
    d, n = 5, 3000
    rows = np.array([cp.sample_ensemble("simrf+-anti", 6, d, 500 + i)[2 * (i % 3) + 1]
                     for i in range(n)])
    e = np.ones(d) / math.sqrt(d)
    assert stats.kstest(rows @ e, "norm").pvalue > ALPHA
    assert stats.kstest(np.sum(rows * rows, axis=1), stats.chi2(d).cdf).pvalue > ALPHA
    assert stats.kstest(1.3 * (rows @ e), "norm").pvalue < ALPHA  # power


@pytest.mark.parametrize(("coupling", "d", "M"), [("orf-anti", 8, 12), ("simrf+-anti", 6, 7),
                                                  ("iid-anti", 5, 6)])
def test_paths_and_numpy_baseline_equal_in_law(coupling, d, M):
    x, y = _pair(d, 1.5, seed=d)
    prod = features.positive_product(x, y)
    k = float(prod.target[0])
    n = 6000
    ke = montecarlo.simulate(prod, M, n, coupling=coupling, path="ensemble", seed=1)[0]
    kp = montecarlo.simulate(prod, M, n, coupling=coupling, path="projection", seed=2)[0]
    kn = montecarlo.simulate_numpy(prod, M, n, coupling=coupling, seed=3)[0]
    for a, b in [(ke, kp), (ke, kn)]:
        assert stats.ks_2samp(a, b).pvalue > ALPHA
        ea, eb = (a - k) ** 2, (b - k) ** 2
        z = (ea.mean() - eb.mean()) / math.sqrt(ea.var(ddof=1) / n + eb.var(ddof=1) / n)
        assert abs(z) < Z_CRIT
    # power: the base coupling without pairs has another law of K_hat
    base = montecarlo.simulate(prod, M, n, coupling=coupling[:-5], path="ensemble", seed=4)[0]
    assert stats.ks_2samp(ke, base).pvalue < ALPHA


# ----------------------------------------------------------------------------- HD-product
HD = ("orf-hd", "simrf-hd")


@pytest.mark.parametrize("coupling", HD)
@pytest.mark.parametrize(("M", "d"), [(16, 16), (40, 16), (64, 64), (8, 5)])
def test_hd_block_geometry_exact(coupling, M, d):
    """Within a block of D rows: orthogonal directions (orf-hd) or pairwise cosines
    -1/(D-1) (simrf-hd) to rounding -- for d < D only after the zero-padding, so the check
    uses d = D except for the block-size case."""
    D = cp.hd_dim(d)
    assert cp.block_sizes(coupling, M, d)[0] == D
    for seed in range(3):
        W = cp.sample_ensemble(coupling, M, d, seed)
        assert W.shape == (M, d)
        if d != D:
            continue
        for m0 in range(0, M, D):
            U = W[m0:m0 + D]
            U = U / np.linalg.norm(U, axis=1, keepdims=True)
            G = U @ U.T
            off = G[~np.eye(G.shape[0], dtype=bool)]
            np.testing.assert_allclose(off, 0.0 if coupling == "orf-hd" else -1 / (D - 1),
                                       atol=1e-12)


@pytest.mark.parametrize("coupling", HD)
def test_hd_rows_have_exact_first_and_second_moments(coupling):
    """E w = 0 and E w w^T = I hold exactly for HD rows (the last Rademacher diagonal
    symmetrises; E r^2 = D), though the law is not Gaussian: z-tests on means, second
    moments and a covariance at ALPHA (Bonferroni over the tests)."""
    d, M, n = 8, 8, 4000
    W = np.stack([cp.sample_ensemble(coupling, M, d, 900 + i) for i in range(n)])
    rows = W[np.arange(n), np.arange(n) % M]  # one row per ensemble, independent
    zc = stats.norm.isf(ALPHA / 2 / (3 * d))
    assert np.all(np.abs(rows.mean(0)) * math.sqrt(n) / rows.std(0, ddof=1) < zc)
    sq = rows**2
    assert np.all(np.abs(sq.mean(0) - 1) * math.sqrt(n) / sq.std(0, ddof=1) < zc)
    cr = rows[:, 0] * rows[:, 1]
    assert abs(cr.mean()) * math.sqrt(n) / cr.std(ddof=1) < zc


def test_hd_rows_not_gaussian_at_small_D():
    """The known limitation (why exact_marginals is False): at d = D = 2 an orf-hd direction
    takes four values, so a coordinate over the norm is not Beta-distributed as for a
    uniform direction (KS rejects at ALPHA)."""
    assert not cp.COUPLINGS["orf-hd"].exact_marginals
    W = np.array([cp.sample_ensemble("orf-hd", 2, 2, i)[0] for i in range(2000)])
    t = W[:, 0] / np.linalg.norm(W, axis=1)
    assert stats.kstest((t + 1) / 2, stats.beta(0.5, 0.5).cdf).pvalue < ALPHA


@pytest.mark.parametrize("coupling", HD)
@pytest.mark.parametrize(("d", "M"), [(8, 12), (5, 7), (64, 64)])
def test_hd_engine_equals_numpy_baseline_in_law(coupling, d, M):
    x, y = _pair(d, 1.0, seed=d)
    prod = features.positive_product(x, y)
    k = float(prod.target[0])
    n = 6000
    ke = montecarlo.simulate(prod, M, n, coupling=coupling, path="ensemble", seed=1)[0]
    kn = montecarlo.simulate_numpy(prod, M, n, coupling=coupling, seed=3)[0]
    assert stats.ks_2samp(ke, kn).pvalue > ALPHA
    ea, eb = (ke - k) ** 2, (kn - k) ** 2
    z = (ea.mean() - eb.mean()) / math.sqrt(ea.var(ddof=1) / n + eb.var(ddof=1) / n)
    assert abs(z) < Z_CRIT


def test_hd_law_check_has_power():
    """The same KS check tells orf-hd from simrf-hd K_hat values (d = M = 8)."""
    x, y = _pair(8, 1.0, seed=8)
    prod = features.positive_product(x, y)
    a = montecarlo.simulate(prod, 8, 6000, coupling="orf-hd", path="ensemble", seed=1)[0]
    b = montecarlo.simulate_numpy(prod, 8, 6000, coupling="simrf-hd", seed=3)[0]
    assert stats.ks_2samp(a, b).pvalue < ALPHA


def test_hd_ensemble_only_and_bad_input():
    x, y = _pair(8, 1.0)
    prod = features.positive_product(x, y)
    for c in HD:
        with pytest.raises(ValueError, match="no projection sampler"):
            montecarlo.simulate(prod, 8, 10, coupling=c, path="projection")
        with pytest.raises(ValueError, match="no projection sampler"):
            cp.sample_projection(c, 8, 8, 2)
    with pytest.raises(ValueError, match="'simrf-hd' needs d >= 2"):
        cp.sample_ensemble("simrf-hd", 3, 1)
    assert cp.sample_ensemble("orf-hd", 3, 1).shape == (3, 1)  # D = 1: rows +-chi_1

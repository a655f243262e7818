"""Prose statements of Hybrid Random Features registered in rfcheck/claims/hrf.py:
appendix F (variance of the lambda-estimator with trigonometric / positive features of the
exponential in eq 67) and appendix D.4 (1/sqrt(mn) = Theta(1/d_est)).  Verdicts by computation,
references tied to closed forms (Gaussian moment generating functions) and to Monte Carlo,
and power: wrong variants of the statements are refuted."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rfcheck import verify
from rfcheck.claims import REGISTRY, Claim
from rfcheck.claims import hrf as H
from rfcheck.estimators import hrf as hy
from rfcheck.references import hrf as R
from rfcheck.stats import z_critical

F_IDS = ["hrf.text-f-lambda-estimator.trig-zero-at-0", "hrf.text-f-lambda-estimator.pos-zero-at-pi",
         "hrf.text-f-lambda-estimator.not-both"]


def closed_var(kind: str, r: float, theta: float, sigma: float, n: int) -> float:
    """Var lam_hat by the Gaussian MGF E exp(t g) = exp(t^2/2) (and E cos(t g) = exp(-t^2/2)), mpmath."""
    with mpmath.workdps(40):
        r, t, s = mpmath.mpf(r), mpmath.mpf(theta), mpmath.mpf(sigma)
        d2 = 4 * r**2 * mpmath.sin(t / 2) ** 2   # |x - y|^2
        z2 = 4 * r**2 * mpmath.cos(t / 2) ** 2   # |x + y|^2
        if kind == "trig":   # Var cos(s g |D|) = (1 + e^{-2 s^2 D^2})/2 - e^{-s^2 D^2}
            v = (1 - mpmath.exp(-s**2 * d2)) ** 2 / 2
        else:                # E f^2 = exp(2 s^2 z^2 - 4 s^2 r^2), (E f)^2 = exp(-s^2 |D|^2)
            v = mpmath.exp(2 * s**2 * z2 - 4 * s**2 * r**2) - mpmath.exp(-s**2 * d2)
        rho = -mpmath.expm1(-2 * s**2 * r**2)
        return float(v / (n * rho**2))


@pytest.mark.parametrize("cid,verdict", [(F_IDS[0], "HOLDS"), (F_IDS[1], "HOLDS"), (F_IDS[2], "HOLDS"),
                                         ("hrf.text-d4-rate", "REFUTED")])
def test_verdicts(cid, verdict):
    v = verify.run_claim(cid, budget="default", seed=0)
    assert v.verdict == verdict, v.reason
    if cid.endswith("not-both"):
        assert len(v.checks) == 2 and all(r.verdict == "HOLDS" for r in v.checks)


@pytest.mark.parametrize("kind", ["trig", "pos"])
@pytest.mark.parametrize("r,theta,sigma,n", [(0.7, 0.0, 1.0, 3), (0.7, math.pi, 1.0, 3), (1.3, 1.1, 0.6, 1),
                                             (0.2, 2.5, 1.7, 8), (2.0, 0.4, 0.5, 2)])
def test_quadrature_matches_closed_form(kind, r, theta, sigma, n):
    var, _, err = R.lambda_estimator_variance(kind, r, mpmath.pi if theta == math.pi else theta, sigma, n, 30)
    ref = closed_var(kind, r, theta, sigma, n)
    assert abs(float(var) - ref) <= 1e-20 + 1e-12 * abs(ref) + 10 * float(err)


def _mc_lambda(kind, r, theta, sigma, n, trials, seed):
    rng = np.random.default_rng(seed)
    x = np.array([r, 0.0])
    y = r * np.array([math.cos(theta), math.sin(theta)])
    tau = rng.normal(size=(trials, n, 2))
    if kind == "trig":   # eq (69) as implemented in rfcheck.estimators.hrf
        return hy.normalized_gauss_lambda(x, y, tau, sigma, r)
    rho = -math.expm1(-2 * sigma**2 * r**2)
    f = np.exp(sigma * tau @ x - sigma**2 * r**2) * np.exp(sigma * tau @ y - sigma**2 * r**2)
    return 1 / rho - f.mean(-1) / rho


@pytest.mark.parametrize("kind,theta", [("trig", math.pi), ("trig", 1.0), ("pos", 0.0), ("pos", 2.0)])
def test_closed_form_against_monte_carlo(kind, theta):
    """Sample variance vs closed form: z-test with the 4th-moment SE (two-sided, family level 1e-3)."""
    r, sigma, n, trials = 0.6, 0.8, 4, 200_000
    lam = _mc_lambda(kind, r, theta, sigma, n, trials, seed=17)
    exact_mean = (1 - math.exp(-2 * sigma**2 * r**2 * math.sin(theta / 2) ** 2)) / (-math.expm1(-2 * sigma**2 * r**2))
    assert abs(lam.mean() - exact_mean) < 5 * lam.std() / math.sqrt(trials)
    e = (lam - exact_mean) ** 2
    se = e.std() / math.sqrt(trials)
    ref = closed_var(kind, r, theta, sigma, n)
    assert abs(e.mean() - ref) < z_critical(1e-3, 4) * se
    assert se < 0.05 * ref  # power: a 20 % error in the closed form would be detected


def test_mc_zero_variance_ends():
    """The simulated lam_hat is constant where the claims say the variance is zero."""
    assert np.ptp(_mc_lambda("trig", 0.9, 0.0, 1.1, 5, 1000, 1)) == 0
    assert np.ptp(_mc_lambda("pos", 0.9, math.pi, 1.1, 5, 1000, 1)) < 1e-12


@pytest.mark.parametrize("kind,theta", [("trig", mpmath.pi), ("pos", 0), ("trig", 1.0), ("pos", 2.0)])
def test_power_wrong_zero_is_refuted(kind, theta):
    """Power: 'zero variance' at the other end (or inside (0, pi)) is refuted by the same check."""
    c = REGISTRY[F_IDS[0]]
    wrong = Claim(id=f"hrf.text-f-planted-{kind}", paper="hrf", source="planted", statement="wrong end",
                  domain=c.domain, checks=[H._lam_var_check("quadrature", kind, theta, True, "", max_points=6)])
    assert verify.run_claim(wrong, budget="smoke", seed=0).verdict == "REFUTED"


def test_power_wrong_nonzero_is_refuted():
    """Power: 'trig variance non-zero at theta = 0' is refuted (the floor check can fail)."""
    c = REGISTRY[F_IDS[2]]
    wrong = Claim(id="hrf.text-f-planted-nonzero", paper="hrf", source="planted", statement="wrong",
                  domain=c.domain, checks=[H._lam_var_check("q", "trig", 0.0, False, "", max_points=6)])
    assert verify.run_claim(wrong, budget="smoke", seed=0).verdict == "REFUTED"


@pytest.mark.parametrize("m,n", [(1, 1), (2, 3), (5, 1), (7, 11), (128, 128)])
def test_feature_dim_is_counted(m, n):
    """d_est = dim Psi (eq 11) of the angular hybrid, built with rfcheck.estimators.hrf, is 4m + 4mn (Theta(mn))."""
    assert R.hrf_feature_dim(m, n) == 4 * m + 4 * m * n


def test_d4_growth_and_power():
    """(1/sqrt(mn))/(1/d_est) = d_est/sqrt(mn) grows like sqrt(mn) (unbounded); the check would accept
    the exponent 1 (i.e. Theta(1/d_est) = Theta(1/(mn))) and refutes 1/2."""
    ratios = [R.hrf_feature_dim(k, k) / k for k in (10, 10**3, 10**6)]
    assert ratios[1] / ratios[0] > 90 and ratios[2] / ratios[1] > 900
    from rfcheck.claims import BUDGETS
    ev = H._d4_rate({"m": 3, "n": 5}, BUDGETS["default"], 0)
    assert ev.decided and ev.disc > 1e6
    assert abs(float(ev.reference) - 1) < 1e-10

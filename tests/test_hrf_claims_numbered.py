"""Claims added for the remaining numbered equations of hrf (eq 19-102), the appendix D.3
derivative remark, and the lambda-range guard of the normalised Gaussian hybrid (appendix F).

Each verdict test evaluates one claim at one point (``run_claim(at=...)``); each power test
feeds a deliberately wrong formula through the same check and requires a violation.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rfcheck.claims import BUDGETS, load_all
from rfcheck.claims import hrf as ch
from rfcheck.claims._common import deterministic_check, inequality_check
from rfcheck.closed_forms import hrf as cf
from rfcheck.estimators import hrf as hy
from rfcheck.references import hrf as refs
from rfcheck.stats import estimate_mean, estimate_mse, z_critical
from rfcheck.verify import run_check, run_claim

NEW = [
    "hrf.eq19", "hrf.eq31.variant1", "hrf.eq31.variant2", "hrf.eq33", "hrf.eq34", "hrf.eq35", "hrf.eq40", "hrf.eq41",
    "hrf.eq56", "hrf.eq59", "hrf.eq60", "hrf.text-d3-theta-le-sin", "hrf.eq62.left", "hrf.eq62.right",
    "hrf.text-d3-derivatives.signs", "hrf.text-d3-derivatives.local-max", "hrf.text-d3-endpoints",
    "hrf.text-d3-global-max", "hrf.eq69", "hrf.eq74", "hrf.eq75", "hrf.eq76", "hrf.eq80", "hrf.text-f-not-both",
    "hrf.text-f-lambda-range", "hrf.eq85", "hrf.eq102", "hrf.eq44.line2a",
]
DEFAULT = BUDGETS["default"]


def test_new_ids_registered():
    reg = load_all()
    assert not [c for c in NEW if c not in reg]


@pytest.mark.parametrize("cid,at", [
    ("hrf.eq19", {"theta": 2.0, "n": 5, "nx": 1.0, "ny": 0.7}),
    ("hrf.eq31.variant2", {"nx": 1.1, "ny": 0.6, "theta": 1.2, "m": 3, "n": 4, "lam": "angular", "sigma": 1.0,
                           "r": 1.0}),
    ("hrf.eq33", {"nx": 1.1, "ny": 0.6, "theta": 1.2, "m": 3, "n": 4, "lam": "gauss", "sigma": 0.9, "r": 1.0}),
    ("hrf.eq34", {"nx": 1.5, "ny": 0.6, "theta": 2.0, "m": 7}),
    ("hrf.eq35", {"nx": 1.5, "ny": 0.6, "theta": 2.0, "m": 7}),
    ("hrf.eq40", {"nx": 0.9, "ny": 1.3, "theta": 0.7, "m": 2, "n": 3, "lam": "angular", "sigma": 1.0, "r": 1.0}),
    ("hrf.eq41", {"nx": 0.9, "ny": 1.3, "theta": 0.7, "m": 2, "n": 3, "lam": "gauss", "sigma": 0.7, "r": 1.5}),
    ("hrf.eq56", {"r": 3.0, "n": 4}),
    ("hrf.eq59", {"r": 10.0, "n": 3}),
    ("hrf.eq60", {"r": 1.0, "n": 3}),
    ("hrf.eq62.left", {"r": 2.5, "n": 9}),
    ("hrf.text-d3-derivatives.signs", {"r": 1.0, "n": 2, "i": 1, "t1": 0.5, "t2": 2.0, "t3": 3.0}),
    ("hrf.text-d3-derivatives.local-max", {"r": 1.0, "n": 2, "i": 1}),
    ("hrf.text-d3-derivatives.local-max", {"r": 10.0, "n": 1, "i": 2}),
    ("hrf.text-d3-global-max", {"r": 1.0, "n": 5, "i": 1}),
    ("hrf.eq69", {"nx": 2.0, "ny": 0.5, "theta": 2.5, "n": 3, "sigma": 1.1, "r": 0.5}),
    ("hrf.eq74", {"nx": 2.0, "ny": 0.5, "theta": 2.5, "n": 3, "sigma": 1.1, "r": 0.5}),
    ("hrf.eq75", {"nx": 2.0, "ny": 0.5, "theta": 2.5, "n": 3, "sigma": 1.1, "r": 0.5}),
    ("hrf.eq76", {"r": 2.0, "theta": 3.0, "sigma": 0.4}),
    ("hrf.eq80", {"r": 7.0, "theta": 1e-3}),
    ("hrf.text-f-lambda-range", {"r": 2.0, "theta": math.pi, "sigma": 0.4}),
    ("hrf.eq85", {"alpha": 0.3, "beta": -1.7, "ri": 0.8, "rj": -1.1}),
])
def test_holds_at_point(cid, at):
    v = run_claim(cid, at=at)
    assert v.verdict == "HOLDS", v.reason


# ------------------------------------------------------------------------------ power


def _power(check, point, budget=DEFAULT):
    """The disc of ``check`` at ``point`` (a violation when > 1)."""
    return check.evaluate(point, budget, 0)


def test_eq59_check_rejects_wrong_constant():
    """theta* sin theta* = 1/(2 r^2) (the b_r^2 condition) must be rejected for b_r^1."""
    wrong = deterministic_check("x", lambda p: 1 / (2 * mpmath.mpf(p["r"]) ** 2), ch._eq59, atol_scale=lambda p, d: 0)
    assert _power(wrong, {"r": 1.0, "n": 3}).disc > 1


def test_eq62_check_rejects_smaller_bound():
    """The same check rejects eq (62) with its bound divided by 5 at r = 1 (b^1(theta*) = 0.203 vs bound 0.784)."""

    def half(p, dps):
        lhs, rhs, err = ch._eq62("left")(p, dps)
        return lhs, rhs / 5, err

    assert _power(inequality_check("x", half), {"r": 1.0, "n": 3}).disc > 1


def test_signs_claim_finds_violation_of_a_wrong_function(monkeypatch):
    """With b_r^1 replaced by -sin(3 theta) (derivative -3 cos(3 theta): -, +, - at 0.3, 1.5, 2.6) the claim's
    own check refutes it."""
    orig = ch._b_ctx
    monkeypatch.setattr(ch, "_b_ctx", lambda ctx, i, r, t, n: -ctx.sin(3 * t) if i == 1 else orig(ctx, i, r, t, n))
    claim = load_all()["hrf.text-d3-derivatives.signs"]
    res = run_check(claim, claim.checks[0], BUDGETS["smoke"], 0,
                    points=[{"r": 1.0, "n": 2, "i": 1, "t1": 0.3, "t2": 1.5, "t3": 2.6}])
    assert res.verdict == "REFUTED"


def test_local_max_check_rejects_two_maxima(monkeypatch):
    """A b_r^1 with two interior local maxima (2 + cos(6 theta): pi/3, 2 pi/3) is caught (count != 1)."""
    orig = ch._b_ctx
    ch._CACHE.clear()
    monkeypatch.setattr(ch, "_b_ctx", lambda ctx, i, r, t, n: 2 + ctx.cos(6 * t) if i == 1 else orig(ctx, i, r, t, n))
    pe = ch._d3_locmax({"r": 1.0, "n": 2, "i": 1}, DEFAULT, 0)
    ch._CACHE.clear()
    assert pe.disc > 1 and "interior local maxima" in pe.note


def test_eq19_quadrature_sees_a_missing_i():
    """eq (19) with real features (no i: 1/2 + sum sgn sgn/(2n)) is biased: E = 1 - theta/pi."""
    p = {"theta": 1.0, "n": 3, "nx": 1.0, "ny": 1.0}
    s, _ = refs.sgn_product_mean_quad(1.0, 30)
    with mpmath.workdps(30):
        assert abs((0.5 + s / 2) - (1 - 1 / mpmath.pi)) < 1e-25  # the quadrature itself is exact
        v, _ = ch._ref_eq19(p, 30)
        assert abs(v - 1 / mpmath.pi) < 1e-25 and abs(0.5 + s / 2 - 1 / mpmath.pi) > 0.1


def test_eq102_indicators_sum_to_one_and_soft_assignment_would_not():
    pe = ch._eq102({"seed": 3, "d": 4, "nq": 3, "nk": 2}, DEFAULT, 0)
    assert pe.disc == 0
    # a point assigned to two clusters (not a partition) gives sum 2: the comparison would flag it
    from rfcheck.stats import compare_deterministic
    assert compare_deterministic({}, 1.0, 2.0, 0, rtol=0, atol=1e-15).disc > 1


# ------------------------------------------------- appendix F: lambda in [0, 1] (library guard)

X15, Y15 = np.array([1.5, 0.0]), np.array([-1.5, 0.0])


def test_lambda_above_one_counterexample_value():
    """r = 1, x = 1.5 e1, y = -1.5 e1, sigma = 1: lambda = (1 - e^-4.5)/(1 - e^-2) = 1.1437 > 1."""
    want = (1 - math.exp(-4.5)) / (1 - math.exp(-2.0))
    assert want > 1.14
    with pytest.raises(ValueError, match=r"\|x - y\| <= 2r"):
        hy.check_gauss_lambda_range(X15, Y15, 1.0, 1.0)
    assert math.isclose(float(cf.gauss_lambda_mean(1.5, 1.5, math.pi, 1, 1.0, 1.0)), want, rel_tol=1e-13)


@pytest.mark.parametrize("call", [
    lambda: hy.normalized_gauss_lambda(X15, Y15, np.ones((1, 2, 2)), 1.0, 1.0),
    lambda: hy.normalized_gauss_hybrid(X15, Y15, np.ones((1, 2, 2)), np.ones((1, 2, 2)), np.ones((1, 2, 2)), 1.0, 1.0),
    lambda: hy.simulate("gauss", X15, Y15, 2, 2, 10, sigma=1.0, r=1.0),
    lambda: hy.simulate("gauss-lambda", X15, Y15, 2, 2, 10, sigma=1.0, r=1.0),
])
def test_lambda_above_one_raises(call):
    with pytest.raises(ValueError, match="lies in \\[0, 1\\] only for"):
        call()


def test_same_length_antipodal_is_allowed():
    """|x| = |y| = r, theta = pi: |x - y| = 2r exactly (up to rounding), lambda = 1."""
    r = 0.7
    x = np.array([r * math.cos(0.3), r * math.sin(0.3)])
    assert math.isclose(hy.check_gauss_lambda_range(x, -x, 1.3, r), 1.0, rel_tol=1e-12)
    lam = hy.normalized_gauss_lambda(x, -x, np.random.default_rng(0).normal(size=(4, 3, 2)), 1.3, r)
    assert lam.shape == (4,)


def test_lambda_above_one_allowed_is_unbiased_and_thm_f1_holds():
    """Where lambda = 1.41 (r = 0.3, x = -y = 0.4 e1, sigma = 2) the allowed hybrid is still unbiased and its MSE
    matches Thm F.1 (closed form): z-tests at family-wise level 1e-3; the raise is a range guard, not a bias fix."""
    x, y = np.array([0.4, 0.0]), np.array([-0.4, 0.0])
    lam = (1 - math.exp(-4 * 0.32)) / (1 - math.exp(-8 * 0.09))
    assert lam > 1.4
    assert hy.check_gauss_lambda_range(x, y, 2.0, 0.4) <= 1  # the same pair is fine for r = 0.4
    est = hy.simulate("gauss", x, y, 4, 8, 100_000, seed=5, sigma=2.0, r=0.3, allow_lambda_above_one=True)
    z = z_critical(1e-3, 3)
    mean = estimate_mean(est)
    assert mean.trustworthy, mean.reason
    assert abs(mean.value - math.exp(x @ y)) < z * mean.se
    mse = estimate_mse(est, math.exp(x @ y))
    want = math.exp(float(cf.log_mse_gauss_hybrid(0.4, 0.4, math.pi, 4, 8, 2.0, 0.3, 0)))
    assert mse.trustworthy, mse.reason
    assert abs(mse.value - want) < z * mse.se
    # power: the same test rejects the MSE with lambda clipped to 1 (E[lam^2] -> 1, E[(1 - lam)^2] -> 0 + var)
    clipped = math.exp(float(cf.log_mse_pos(0.4, 0.4, math.pi, 4)))
    assert abs(mse.value - clipped) > z * mse.se

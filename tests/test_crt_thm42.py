"""CRT Theorem 4.2: the references behind crt.thm4.2 (M > 1), crt.thm4.2.ort and
crt.thm4.2.ort.positive -- the OPRF moment generating function by quadrature, its Legendre
transform (rfcheck.references.crt.oprf_log_mgf, oprf_legendre_transform), the Monte Carlo tail
test and its power, the certified lower bound at M > 1."""

from __future__ import annotations

import math

import pytest

from rfcheck import quadrature
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.claims import crt as cc
from rfcheck.claims._common import stats_mp
from rfcheck.references import crt as R

P = {"d": 8, "nx": 0.5, "ny": 0.4, "theta": 0.7, "eps_rel": 0.5, "M": 4}


def test_mgf_quadrature_reproduces_mean_and_variance():
    """Lambda'(0) = E Z = K and Lambda''(0) = Var Z (independent: rfcheck.quadrature.gerf_reference)."""
    import mpmath

    at, log_zmax = R.oprf_log_mgf(P)
    k = math.exp(-cc.stats_fp(P)["sq_diff"] / 2)
    assert abs(at(0.0)[0]) < 1e-14 and abs(at(0.0)[1] - k) < 1e-12 * k
    h = 1e-4
    var_fd = (at(h)[1] - at(-h)[1]) / (2 * h)  # d/dtheta of the tilted mean = tilted variance
    with mpmath.workdps(30):
        st = stats_mp(P)
        a = cc.cf.oprf_a_star(st["sq_sum"], st["d"], backend="mpmath", dps=30)
        ref = quadrature.gerf_reference(**st, a=a, s=1, dps=20)["var"].value
    assert abs(var_fd - float(ref)) < 1e-6 * float(ref)
    assert math.exp(log_zmax) > k


def test_legendre_transform_properties():
    k = math.exp(-cc.stats_fp(P)["sq_diff"] / 2)
    l1, e1 = R.oprf_legendre_transform(P, 1.2 * k)
    l2, _ = R.oprf_legendre_transform(P, 1.6 * k)
    assert 0 < l1 < l2 and e1 < 1e-8  # increasing above the mean
    at, _ = R.oprf_log_mgf(P)
    var = (at(1e-4)[1] - at(-1e-4)[1]) / 2e-4
    small, _ = R.oprf_legendre_transform(P, k * 1.001)
    assert abs(small / ((0.001 * k) ** 2 / (2 * var)) - 1) < 0.01  # L ~ eps^2 / (2 Var Z)
    at, log_zmax = R.oprf_log_mgf(P)
    assert R.oprf_legendre_transform(P, 1.01 * math.exp(log_zmax))[0] == math.inf


def test_tail_check_holds_and_has_power(monkeypatch):
    """At an informative point the printed bound holds; a bound 4x too strong (L x 4) is rejected."""
    budget = BUDGETS["smoke"]
    ev = cc._thm42_ort_mc(dict(P), budget, 0)
    assert ev.decided and ev.disc <= 1 and 0 < ev.printed < 1
    real = R.oprf_legendre_transform
    monkeypatch.setattr(cc.refs, "oprf_legendre_transform", lambda p, level: (4 * real(p, level)[0] + 0.5, 0.0))
    ev = cc._thm42_ort_mc(dict(P), budget, 0)
    assert ev.decided and ev.disc > 1


def test_thm42_lower_bound_decides_violations_only():
    chk = REGISTRY["crt.thm4.2"].checks[1]
    budget = BUDGETS["smoke"]
    bad = chk.evaluate({"d": 64, "nx": 1.0, "ny": 1.0, "theta": 0.0, "eps": 1e9, "M": 8}, budget, 0)
    assert bad.decided and bad.disc > 1
    benign = chk.evaluate({"d": 4, "nx": 0.5, "ny": 0.5, "theta": 1.0, "eps": 0.3, "M": 4}, budget, 0)
    assert not benign.decided


@pytest.mark.parametrize(("eps_rel", "decided"), [(0.5, True), (1e-3, True)])
def test_positive_check(eps_rel, decided):
    ev = REGISTRY["crt.thm4.2.ort.positive"].checks[0].evaluate(
        {"d": 4, "nx": 0.5, "ny": 0.5, "theta": 1.0, "eps_rel": eps_rel}, BUDGETS["smoke"], 0)
    assert ev.decided == decided and ev.disc < 0

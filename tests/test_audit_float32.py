"""Every audit on float32 implementations: tolerances follow the dtype the user's code returns.

Before, float32 code got false failures that could not be configured away: the sampler audit's
geometry tolerance was a fixed 1e-9 (float32 rows are orthogonal to ~1e-7), and
``check_estimator`` treated an estimate as constant only below a fixed 1e-12 relative spread
(float32 rounding at x = -y gave z = -45 and +234).  Each test below also checks that the
float32 tolerance keeps the power to see real errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from rfcheck import custom
from rfcheck.attention.audit import causality_audit
from rfcheck.audit import GEOMETRY_ULPS, audit_sampler, geometry_tolerance
from rfcheck.closed_forms import crt
from rfcheck.testing import (
    adversarial_pairs,
    assert_sampler_valid,
    assert_unbiased,
    assert_variance_matches,
    check_estimator,
    rounding_rtol,
)

EPS32 = float(np.finfo(np.float32).eps)


def _haar(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)).astype(np.float32))
    return q * np.sign(np.diag(r))


def orf32(rng, M, d):
    """ORF computed in float32 (float32 QR and norms)."""
    return (_haar(rng, d).T[:M] * np.sqrt(rng.chisquare(d, M)).astype(np.float32)[:, None]).astype(np.float32)


def unsigned_qr32(rng, M, d):
    q, _ = np.linalg.qr(rng.standard_normal((d, d)).astype(np.float32))
    return (q.T[:M] * np.sqrt(rng.chisquare(d, M))[:, None]).astype(np.float32)


def simrf32(rng, n, M, d):
    return custom.builtin_sampler("simrf")(rng, n, M, d).astype(np.float32)


# -- the sampler audit -------------------------------------------------------------------------


@pytest.mark.parametrize("d", [8, 32])
def test_float32_orthogonal_and_simplex_samplers_pass(d):
    rep = assert_sampler_valid(custom.per_draw(orf32), d, structure="orthogonal", n=1000)
    assert rep.dtype == "float32" and rep.geometry_tol == pytest.approx(GEOMETRY_ULPS * np.sqrt(d) * EPS32)
    worst = next(t for t in rep.tests if t.name == "structure").worst
    assert 0 < worst < rep.geometry_tol  # float32 rounding is visible, and inside the float32 tolerance
    assert audit_sampler(simrf32, d, structure="simplex", n=1000).verdict == "HOLDS"


def test_float32_tolerance_keeps_its_power_and_is_overridable():
    rep = audit_sampler(custom.per_draw(unsigned_qr32), 16, structure="orthogonal", n=1000)
    assert {"coordinate-ks", "coordinate-mean"} <= {t.name for t in rep.failures}, str(rep)
    assert "structure" not in {t.name for t in rep.failures}
    iid32 = lambda rng, n, M, d: rng.standard_normal((n, M, d)).astype(np.float32)  # noqa: E731
    assert [t.name for t in audit_sampler(iid32, 16, structure="orthogonal", n=500).failures] == ["structure"]
    strict = audit_sampler(custom.per_draw(orf32), 16, structure="orthogonal", n=500, geometry_tol=1e-9)
    assert [t.name for t in strict.failures] == ["structure"] and strict.geometry_tol == 1e-9
    with pytest.raises(ValueError, match="geometry_tol"):
        audit_sampler("orf", 8, geometry_tol=-1.0)


def test_geometry_tolerance_rule():
    assert geometry_tolerance(64) == pytest.approx(1000 * 8 * np.finfo(float).eps)
    assert geometry_tolerance(64, np.float32) == pytest.approx(1000 * 8 * EPS32)
    assert geometry_tolerance(4, np.complex64) == geometry_tolerance(4, np.float32)
    # float64 samplers are held to float64 rounding: built-in ORF passes, its float32 copy would not
    rep = audit_sampler("orf", 8, n=300, geometry_tol=None)
    assert rep.dtype == "float64" and rep.verdict == "HOLDS" and rep.geometry_tol < 1e-11


def test_per_draw_and_antithetic_keep_float32():
    rng = np.random.default_rng(0)
    assert custom.per_draw(orf32)(rng, 3, 4, 4).dtype == np.float32
    assert custom.antithetic(custom.per_draw(orf32))(rng, 3, 4, 4).dtype == np.float32
    assert custom.per_draw(lambda rng, M, d: np.ones((M, d), dtype=int))(rng, 2, 3, 4).dtype == np.float64


# -- rfcheck.testing -----------------------------------------------------------------------------


def _posrf32(W, x):
    W, x = np.asarray(W, np.float32), np.asarray(x, np.float32)
    return np.exp(W @ x - x @ x)


def _gauss(x, y):
    return float(np.exp(-0.5 * np.sum((x - y) ** 2)))


def _pos_var(x, y, m):
    st = {k: (float(v[0]) if k != "d" else v) for k, v in crt.pair_stats(x[None], y[None]).items()}
    return float(crt.positive_variance(**st)) / m


def test_check_estimator_float32_holds_and_keeps_power():
    """PosRF in float32 over the adversarial pairs (x = -y included) HOLDS with the true
    variance; before, the float32 rounding at x = -y was REFUTED (z = -45 and +234)."""
    est = custom.Estimator(_posrf32, _posrf32, _gauss, "iid", "PosRF float32")
    pairs = adversarial_pairs(4, radii=(0.25,))
    rep = check_estimator(est, 8, claimed_variance=_pos_var, pairs=pairs, n_trials=50_000, max_trials=None, seed=0)
    assert rep.verdict == "HOLDS", str(rep)
    wrong = check_estimator(est, 8, claimed_variance=lambda x, y, m: 1.2 * _pos_var(x, y, m), pairs=pairs,
                            n_trials=50_000, max_trials=None, seed=0)
    assert wrong.verdict == "REFUTED", str(wrong)

    def biased32(W, x):  # 3% too large, in float32
        return np.float32(1.015) * _posrf32(W, x)

    b = check_estimator(custom.Estimator(biased32, biased32, _gauss, "iid"), 8, pairs=pairs, n_trials=50_000,
                        max_trials=None, seed=0)
    assert b.verdict == "REFUTED" and b.counterexample["test"] == "unbiased", str(b)
    # ... including at x = -y, where the estimate is constant: 3% is far above float32 rounding
    opp = [r for r in b.rows if "-" in r["pair"] and "nearly" not in r["pair"]]
    assert opp and all(r["status"] == "disagrees" for r in opp)


def test_float32_constant_estimate_and_rtol_override():
    est = custom.Estimator(_posrf32, _posrf32, _gauss, "iid")
    x = np.array([0.5, 0.0, 0.0, 0.0])
    b = est.at(x, -x)
    assert b.trials(8, 10).dtype == np.float32
    assert_unbiased(b, 8, n_trials=20_000)  # constant up to float32 rounding
    assert_variance_matches(b, 8, 0.0, n_trials=20_000)  # the variance is 0
    assert_variance_matches(b, 8, np.float32(1e-9), n_trials=20_000)  # a float32 claim: float32 rounding
    with pytest.raises(AssertionError, match="biased"):  # float64 tolerance on float32 code: refuted
        assert_unbiased(b, 8, n_trials=20_000, rtol=rounding_rtol(np.float64))


def test_complex64_features_use_float32_rounding():
    """TrigRF written with complex64 features: the estimate at x = y is 1 up to float32 rounding."""

    def f1(W, x):
        return np.exp(1j * (W.astype(np.float32) @ x.astype(np.float32))).astype(np.complex64)

    def f2(W, y):
        return np.conj(f1(W, y))

    est = custom.Estimator(f1, f2, _gauss, "iid")
    x = np.array([0.3, -0.2, 0.1])
    assert est.at(x, x).trials(4, 10).dtype == np.float32
    assert_unbiased(est.at(x, x), 4, n_trials=5_000)


# -- the causality audit -----------------------------------------------------------------------


def _linear_attention32(q, k, v, W, global_max=False):
    q, k, v, W = (np.asarray(a, np.float32) for a in (q, k, v, W))
    lq = q @ W.T - 0.5 * np.sum(q * q, -1, keepdims=True)
    lk = k @ W.T - 0.5 * np.sum(k * k, -1, keepdims=True)
    # the Performer's key stabiliser: the max of k.w over *all* positions -- not causal
    lk = lk - ((k @ W.T).max() if global_max else lk.max(axis=-1, keepdims=True))
    fq, fk = np.exp(lq - lq.max(-1, keepdims=True)), np.exp(lk)
    num = np.cumsum(fk[:, :, None] * v[:, None, :], axis=0)
    den = np.cumsum(fk, axis=0)
    return np.einsum("lm,lmd->ld", fq, num) / np.einsum("lm,lm->l", fq, den)[:, None]


def test_causality_audit_float32():
    rng = np.random.default_rng(1)
    q, k, v = (0.4 * rng.standard_normal((20, 4))).astype(np.float32), (0.4 * rng.standard_normal((20, 4))).astype(
        np.float32), rng.standard_normal((20, 3)).astype(np.float32)
    W = rng.standard_normal((16, 4)).astype(np.float32)
    ok = causality_audit(lambda q, k, v: _linear_attention32(q, k, v, W), q, k, v)
    assert ok.causal, str(ok)
    assert ok.tolerance <= 64 * EPS32 * 10  # float32 rounding of outputs of order 1
    leak = causality_audit(lambda q, k, v: _linear_attention32(q, k, v, W, global_max=True), q, k, v)
    assert not leak.causal and leak.leaked == ["k"], str(leak)

"""Attention-scale restatements of printed results (rfcheck/claims/attention.py): verdicts
by computation, and the power to refute a reversed ordering or a wrong closed form."""

from __future__ import annotations

import pytest

pytest.importorskip("jax", reason="the attention-scale claims need JAX (pip install 'rfcheck[jax]')")

from rfcheck import verify
from rfcheck.claims import BUDGETS, Check, Claim
from rfcheck.claims import attention as att
from rfcheck.domains import Choice, Domain
from rfcheck.references import attention as aref


@pytest.mark.parametrize("cid", ["crt.thm3.2.attention", "crt.thm4.1.attention", "crt.thm3.3.attention",
                                 "simrf.cor3.3.attention", "darkformer.thm3.2.item2.attention"])
def test_attention_claims_hold(cid):
    """Default budget (3 points: M = 16 and 64); at M = 16 some paired differences are
    heavy-tailed and stay undecided, which is reported, not hidden."""
    v = verify.run_claim(cid, budget="default", seed=0)
    assert v.verdict == "HOLDS", v.reason


def test_reversed_ordering_is_refuted():
    wrong = Claim(id="crt.thm4.1.attention-reversed", paper="crt", source="planted", statement="iid <= orf",
                  domain=Domain({"M": Choice((16,)), "which": Choice(("prf",))}),
                  checks=[Check("attention-paired", 3, att._ordering({"prf": ("prf-iid", "prf-orf")}), search=False)])
    assert verify.run_claim(wrong, budget="smoke", seed=0).verdict == "REFUTED"


def test_wrong_closed_form_is_refuted():
    def wrong(p, budget, seed):
        ev = att._equality(p, budget, seed)
        L, R = att._sizes(budget)
        v = aref.attention_study(L, int(p["M"]), R, 0, False).variants[p["variant"]]
        est = att.Estimate(v["mse_mean"], v["se"], R, "sample", v["trustworthy"], 0.0, 0.0, v["note"])
        return att.compare_mc(p, 1.1 * v["closed_form"], est, z_crit=ev.extra["z_crit"])

    c = Claim(id="crt.thm3.2.attention-wrong", paper="crt", source="planted", statement="10% too large",
              domain=Domain({"M": Choice((16,)), "variant": Choice(("oprf-orf",))}),
              checks=[Check("attention-mc", 3, wrong, search=False)])
    assert verify.run_claim(c, budget="smoke", seed=0).verdict == "REFUTED"


def test_sizes_by_budget():
    assert att._sizes(BUDGETS["default"]) == (64, 2000)
    assert att._sizes(BUDGETS["thorough"]) == (256, 4000)


def test_darkformer_exact_isotropic_check_decides_and_has_power():
    """The aligned proposal's per-draw errors are light-tailed and far below the exact isotropic
    MSE (z << -z_crit): a reversed claim (isotropic <= aligned) would be REFUTED by the same z;
    the paired difference on the same draws points the same way."""
    pe = att._exact_isotropic({"M": 16}, BUDGETS["default"], 0)
    assert pe.decided and pe.disc < -1, pe
    paired = att._ordering({"dark": ("dark-aligned", "dark-isotropic")}, dark=True)({"M": 16, "which": "dark"},
                                                                                   BUDGETS["default"], 0)
    assert paired.extra["z"] < 0

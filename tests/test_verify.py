"""Verdict machinery: every check must be able to fail (power tests with planted errors),
verdict semantics, reproducibility, and the registered ledger's ids and domains."""

from __future__ import annotations

import math

import mpmath
import pytest

from rfcheck import verify
from rfcheck.claims import BUDGETS, REGISTRY, Check, Claim, load_all
from rfcheck.claims import crt as crt_claims
from rfcheck.claims._common import deterministic_check, mc_check, pair_domain
from rfcheck.references.crt import gerf_mc_products
from rfcheck.stats import PointEval

SMOKE = BUDGETS["smoke"]


def _claim(cid: str, checks: list[Check], domain=None) -> Claim:
    return Claim(id=cid, paper="crt", source="test", statement="planted", domain=domain or pair_domain(norm=(0.0, 0.7)),
                 checks=checks)


_quad_var_pos = crt_claims._gerf_moment("var", 0, 1)


def test_registry_loads_with_valid_ids():
    reg = load_all()
    assert len(reg) >= 15
    for cid, c in reg.items():
        assert cid == c.id and cid.startswith(c.paper + ".")
        assert c.checks or c.readings or c.unverifiable  # a claim with readings has its checks there
        if c.readings:
            c.check_readings()


def test_bad_claim_id_rejected():
    with pytest.raises(ValueError, match="does not follow"):
        Claim(id="crt.theorem3", paper="crt", source="", statement="", domain=pair_domain(), checks=[])


@pytest.mark.parametrize("factor", [1.02, 0.5])
def test_deterministic_check_refutes_planted_factor(factor):
    """Power: a PosRF variance off by a constant factor is refuted by quadrature."""
    wrong = _claim("crt.text-planted-factor", [deterministic_check(
        "quadrature", lambda p: factor * crt_claims.printed_pos_variance(p), _quad_var_pos,
        atol_scale=lambda p, dps: 1)])
    v = verify.run_claim(wrong, budget=SMOKE, seed=1)
    assert v.verdict == "REFUTED"
    assert v.checks[0].worst.disc > 1


def test_deterministic_check_holds_for_true_formula():
    right = _claim("crt.text-planted-true", [deterministic_check(
        "quadrature", crt_claims.printed_pos_variance, _quad_var_pos, atol_scale=lambda p, dps: 1)])
    v = verify.run_claim(right, budget=SMOKE, seed=1)
    assert v.verdict == "HOLDS"
    assert all(e.disc <= 1 for e in v.checks[0].evals)


@pytest.mark.mc
def test_monte_carlo_check_power_and_no_false_alarm():
    """Power: a 30% too large PosRF variance is refuted by Monte Carlo alone; the true one is not."""
    sim = lambda p, n, seed: gerf_mc_products(p, n, seed, 0.0, 1)  # noqa: E731
    budget = BUDGETS["default"]
    wrong = _claim("crt.text-planted-mc",
                   [mc_check("monte-carlo", lambda p: 1.3 * crt_claims.printed_pos_variance(p), sim)],
                   domain=pair_domain(d=(2, 16), norm=(0.3, 0.5)))
    assert verify.run_claim(wrong, budget=budget, seed=3).verdict == "REFUTED"
    right = _claim("crt.text-planted-mc-ok", [mc_check("monte-carlo", crt_claims.printed_pos_variance, sim)],
                   domain=pair_domain(d=(2, 16), norm=(0.3, 0.5)))
    assert verify.run_claim(right, budget=budget, seed=3).verdict == "HOLDS"


def test_heavy_tails_give_inconclusive_not_holds():
    """A reference that cannot decide must never produce HOLDS."""
    undecided = Check("mc", 3, lambda p, b, s: PointEval(p, 1.0, 1.0, math.inf, 0.0, False, "heavy tails"),
                      search=False)
    v = verify.run_claim(_claim("crt.text-planted-undecided", [undecided]), budget=SMOKE, seed=0)
    assert v.verdict == "INCONCLUSIVE"


def test_references_that_disagree_are_inconclusive():
    holds = Check("det", 1, lambda p, b, s: PointEval(p, 1.0, 1.0, 0.0, 0.0), search=False)
    refutes = Check("mc", 3, lambda p, b, s: PointEval(p, 1.0, 2.0, 0.1, 5.0), search=False)
    v = verify.run_claim(_claim("crt.text-planted-conflict", [holds, refutes]), budget=SMOKE, seed=0)
    assert v.verdict == "INCONCLUSIVE" and "disagree" in v.reason


def test_unconfirmed_monte_carlo_refutation_is_not_refuted():
    """A one-off Monte Carlo excursion (not reproduced by the confirmation run) is not a refutation."""
    calls = []

    def flaky(p, b, s):
        calls.append(s)
        return PointEval(p, 1.0, 2.0, 0.1, 5.0 if len(calls) == 1 else 0.2)

    v = verify.run_claim(_claim("crt.text-planted-flaky", [Check("mc", 3, flaky, search=False)]), budget=SMOKE, seed=0)
    assert v.verdict != "REFUTED"


def test_verdicts_reproducible_for_a_seed():
    a = verify.run_claim("crt.eq22", budget=SMOKE, seed=5).as_dict()
    b = verify.run_claim("crt.eq22", budget=SMOKE, seed=5).as_dict()
    assert a["evidence"]["worst"] == b["evidence"]["worst"]


def test_eq7_as_printed_is_refuted_and_eq22_holds():
    # eq (7) as transcribed (the root over '- 2|x+y|^2 - d') is refuted; with the root closed as in eq (22) it holds
    v7 = verify.run_claim("crt.thm3.3", budget=SMOKE, seed=0)
    v22 = verify.run_claim("crt.eq22", budget=SMOKE, seed=0)
    assert v7.verdict == "MIXED" and v22.verdict == "HOLDS"
    assert {r.name: r.verdict for r in v7.readings} == {"long root": "REFUTED", "root closed": "HOLDS"}
    d = v7.as_dict()
    assert d["correction"] and d["reproduce_point"].startswith("rfcheck verify --claim crt.thm3.3 --at")


def test_counterexample_reproduces_at_point():
    v = verify.run_claim("crt.thm3.3", budget=SMOKE, seed=0)
    pt = v.checks[0].worst.point  # the refuted reading's counterexample
    again = verify.evaluate_at("crt.thm3.3", pt)
    assert again.verdict == "MIXED" and again.readings[0].verdict == "REFUTED"
    assert again.checks[0].worst.printed == pytest.approx(float(mpmath.re(v.checks[0].worst.printed)))


def test_eq1_conjugate_refuted_by_trig_counterexample():
    # x parallel to y: TrigRF with the conjugate estimates exp(-|x+y|^2/2) = e^-2, not K = 1
    v = verify.evaluate_at("crt.eq1", {"d": 2, "nx": 1.0, "ny": 1.0, "theta": 0.0, "mech": "trig"})
    assert v.verdict == "MIXED"  # refuted with the conjugate, holds without it (eq 2)
    assert {r.name: r.verdict for r in v.readings} == {"conjugate": "REFUTED", "no conjugate": "HOLDS"}
    w = v.checks[0].worst
    assert float(w.printed) == pytest.approx(1.0)
    assert float(w.reference) == pytest.approx(math.exp(-2.0), rel=1e-12)


def test_point_outside_domain_rejected():
    with pytest.raises(ValueError, match="outside the domain"):
        verify.evaluate_at("crt.thm3.3", {"d": 3, "nx": 1.0, "ny": 1.0, "theta": math.pi})


def test_run_many_cache_roundtrip(tmp_path):
    ids = ["crt.eq22.negative-root", "crt.eq8"]
    first = verify.run_many(ids, budget="smoke", seed=0, cache_dir=str(tmp_path))
    second = verify.run_many(ids, budget="smoke", seed=0, cache_dir=str(tmp_path))
    assert [e["verdict"] for e in first] == [e["verdict"] for e in second]
    assert all(e.get("cached") for e in second)
    assert len(list(tmp_path.glob("*.json"))) == 2


def test_every_registered_claim_has_independent_reference():
    for c in REGISTRY.values():
        if c.unverifiable:  # e.g. a table of experiments: INCONCLUSIVE with its reason
            continue
        # a claim with readings: every reading has its own reference
        for checks in [r.checks for r in c.readings] or [c.checks]:
            names = {ch.name for ch in checks}
            assert names, c.id
            assert not names <= {"printed"}, c.id


def test_mean_only_reference_beyond_second_moment_domain():
    """Re(1 - 8A) <= 0: the mean exists (Thm 3.1 domain), the second moment does not."""
    import mpmath

    from rfcheck import quadrature
    from rfcheck.claims._common import stats_mp

    with mpmath.workdps(20):
        st = stats_mp({"d": 3, "nx": 0.5, "ny": 0.4, "theta": 1.0})
    r = quadrature.gerf_reference(**st, a=0.2, s=1, dps=20)
    assert set(r) == {"mean"}
    assert float(r["mean"].value) == pytest.approx(math.exp(-float(st["sq_diff"]) / 2), rel=1e-15)
    v = verify.evaluate_at("crt.eq18", {"d": 3, "nx": 0.5, "ny": 0.4, "theta": 1.0, "a_re": 0.2, "a_im": 0.3, "s": 1})
    assert v.verdict == "HOLDS"


def test_dask_scheduler_gives_the_same_verdicts():
    """``--scheduler``: the same tasks on a Dask LocalCluster give the same verdicts."""
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    ids = ["crt.eq8", "crt.eq35"]  # cheap: one HOLDS, one REFUTED (crt.eq21.line2, used until its readings, is MIXED)
    local = verify.run_many(ids, budget="smoke", seed=5, jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = verify.run_many(ids, budget="smoke", seed=5, scheduler=cluster.scheduler_address)
    assert [e["verdict"] for e in remote] == [e["verdict"] for e in local] == ["HOLDS", "REFUTED"]
    for a, b in zip(local, remote, strict=True):
        assert a["evidence"]["worst"] == b["evidence"]["worst"]


def test_dask_workers_with_threads_refused():
    """mpmath's precision is process-global, so threaded workers could corrupt references."""
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as c, \
            pytest.raises(ValueError, match="one thread"):
        verify.run_many(["crt.eq8"], budget="smoke", scheduler=c.scheduler_address)


def test_scheduler_unreachable_is_a_clear_error(monkeypatch):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    monkeypatch.setenv("RFCHECK_DASK_TIMEOUT", "2")
    with pytest.raises(ValueError, match="cannot reach the Dask scheduler"):
        verify.run_many(["crt.eq8"], budget="smoke", scheduler="tcp://127.0.0.1:9")


def test_unconfirmed_worst_violation_does_not_hide_a_confirmed_one():
    """The worst Monte Carlo violation fails its confirmation run; the next one is confirmed: REFUTED,
    with the unconfirmed point counted as undecided, not as an agreement (audit of 2026-11-26)."""
    disc = {0.0: 0.1, 1.0: 8.0, 2.0: 15.0}

    def ev(p, b, s):
        t = p["t"]
        d = 0.5 if (t == 2.0 and b.mc_trials > SMOKE.mc_trials) else disc[t]  # t = 2: a fluke
        return PointEval(p, 1.0, 1.0, 0.1, d)

    from rfcheck.domains import Domain, Real

    chk = Check("mc", 3, ev, search=False)
    claim = _claim("crt.text-planted-two-violations", [chk], Domain(params={"t": Real(0, 2)}))
    r = verify.run_check(claim, chk, SMOKE, 0, points=[{"t": 0.0}, {"t": 1.0}, {"t": 2.0}])
    assert r.verdict == "REFUTED" and r.worst.point == {"t": 1.0}
    assert r.n_decided == 2 and [e.point for e in r.undecided] == [{"t": 2.0}]
    disc[1.0] = 0.2  # no violation survives: HOLDS on the 2 decided points, the fluke undecided
    r = verify.run_check(claim, chk, SMOKE, 0, points=[{"t": 0.0}, {"t": 1.0}, {"t": 2.0}])
    assert r.verdict == "HOLDS" and r.n_decided == 2 and len(r.undecided) == 1


def test_monte_carlo_alpha_is_shared_over_every_point_tested():
    """A domain with more fixed points than the budget's mc_points: the check sees every point in the
    Bonferroni count (crt.thm4.2.ort has 4 fixed points; the smoke budget has mc_points = 1)."""
    seen = []

    def ev(p, b, s):
        seen.append(b.mc_points)
        return PointEval(p, 1.0, 1.0, 0.1, 0.1)

    claim = load_all()["crt.thm4.2.ort"]
    chk = Check("mc", 3, ev, search=False)
    r = verify.run_check(claim, chk, SMOKE, 0)
    assert r.n_points == len(claim.domain.fixed_points) == 4 and set(seen) == {4}

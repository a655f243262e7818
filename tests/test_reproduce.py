"""A ledger entry's reproduce commands give its numbers back: the worst point's random draws
(``--point-index``), its budget, points inside the stated ranges, and refutations that the
printed side's own rounding cannot explain."""

from __future__ import annotations

import math
import shlex

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfcheck import verify
from rfcheck.claims import BUDGETS, recheck_rounding
from rfcheck.cli import _parse_at, build_parser, main
from rfcheck.domains import Domain, Real
from rfcheck.ledger import paper
from rfcheck.stats import PointEval, compare_deterministic

SMOKE = BUDGETS["smoke"]


def _replay(cmd: str) -> verify.Verdict:
    """The reproduce line ``cmd`` run through the API, parsed by the command line's own parser."""
    a = build_parser().parse_args(shlex.split(cmd)[1:])
    return verify.evaluate_at(a.claim[0], _parse_at(a.at), seed=a.seed, budget=a.budget, point_index=a.point_index)


# claims whose checks draw random numbers at each point: seeded ensembles (hrf.eq43, hrf.eq34) and
# Monte Carlo (crt.thm4.2.ort); their worst points are not the first of the run
@pytest.mark.parametrize("cid", ["hrf.eq43", "hrf.eq34", "crt.thm4.2.ort"])
def test_reproduce_point_gives_the_worst_point_back_number_for_number(cid):
    v = verify.run_claim(cid, budget=SMOKE, seed=0)
    w = v.deciding_check().worst
    cmd = v.reproduce_point()
    assert w.index and f"--point-index {w.index}" in cmd and "--seed 0 --budget smoke" in cmd
    again = _replay(cmd).deciding_check().worst
    assert again.as_dict() == w.as_dict()


def test_the_index_selects_the_draws():
    """The same point with the draws of another index: another Monte Carlo estimate."""
    v = verify.run_claim("crt.thm4.2.ort", budget=SMOKE, seed=0)
    w = v.deciding_check().worst
    other = verify.evaluate_at("crt.thm4.2.ort", w.point, seed=0, budget="smoke",
                               point_index=w.index + 1).deciding_check().worst
    assert other.extra["count"] != w.extra["count"]


def test_point_index_needs_a_point_and_is_not_negative():
    with pytest.raises(ValueError, match="point_index"):
        verify.run_claim("crt.eq22", budget=SMOKE, point_index=2)
    with pytest.raises(ValueError, match="point_index"):
        verify.evaluate_at("crt.eq22", {"d": 2, "nx": 1.0, "ny": 1.0, "theta": 0.0}, point_index=-1)


def test_the_command_line_replays_the_point(capsys):
    v = verify.run_claim("hrf.eq43", budget=SMOKE, seed=0)
    w = v.deciding_check().worst
    assert main(shlex.split(v.reproduce_point())[1:]) == 0
    assert f"printed {w.printed}, reference {w.reference}" in capsys.readouterr().out


@settings(max_examples=200, deadline=None)
@given(lo=st.floats(1e-6, 1e3), width=st.floats(0.0, 1e3), t=st.floats(-0.5, 1.5),
       scale=st.sampled_from(["linear", "log"]), seed=st.integers(0, 2**32 - 1))
def test_drawn_and_optimised_values_stay_in_the_range(lo, width, t, scale, seed):
    """``lo + t (hi - lo)`` and ``exp(log lo + t (log hi - log lo))`` round past the ends by ulps;
    a point outside the range is not a point of the domain (``--at`` refuses it)."""
    r = Real(lo, lo + width, scale)
    vals = [r.from_unit(t), r.from_unit(0.0), r.from_unit(1.0), r.sample(np.random.default_rng(seed))]
    assert all(r.contains(v) for v in vals), vals


def test_the_ledger_points_that_left_their_range_are_inside_now():
    """The three points the stored ledger printed 1-4 ulps outside their stated range."""
    for cid, name, t in (("crt.thm3.3.note-limit", "theta", 0.0), ("crt.thm3.4.convex", "lam", 1.0),
                         ("crt.text-geomrf-features", "scale", 1.0)):
        r = verify.get(cid).domain.params[name]
        assert r.contains(r.from_unit(t))


# ---------------------------------------------------------------- the printed side's rounding

def _cancelling(prec: int) -> mpmath.mpf:
    """``(1 - cos t) / t^2`` at ``t = 1e-9``: 18 of its digits cancel."""
    with mpmath.workdps(prec):
        t = mpmath.mpf("1e-9")
        return (1 - mpmath.cos(t)) / t**2


def _exact() -> mpmath.mpf:
    with mpmath.workdps(60):
        t = mpmath.mpf("1e-9")
        return 2 * mpmath.sin(t / 2) ** 2 / t**2


def _compare(v):
    return compare_deterministic({"t": 1e-9}, v, _exact(), 0, rtol=1e-25)


def test_a_refutation_by_rounding_alone_is_re_decided_at_higher_precision():
    first = _compare(_cancelling(30))
    assert first.decided and first.disc > 1  # 30 digits minus 18 cancelled: looks refuted
    ev = recheck_rounding(first, _cancelling(30), _cancelling, _compare, 30, 1e-25 * _exact())
    assert ev.decided and ev.disc <= 1 and "re-evaluated at" in ev.note


def test_a_refutation_that_rounding_cannot_explain_stays_as_computed():
    wrong = lambda prec: 1.001 * _cancelling(prec)  # noqa: E731 -- a planted factor
    first = _compare(wrong(30))
    assert recheck_rounding(first, wrong(30), wrong, _compare, 30, 1e-25 * _exact()) is first
    agree = _compare(_exact())
    assert recheck_rounding(agree, _exact(), lambda prec: 1 / 0, _compare, 30, 1e-25) is agree  # not re-evaluated


def test_a_printed_side_that_never_settles_leaves_the_point_undecided():
    noisy = iter(range(1, 100))
    first = PointEval({}, 1.0, 0.0, 0.0, 2.0)  # 2e-25 apart: noise of 1e-20 could explain it
    ev = recheck_rounding(first, 0.0, lambda prec: mpmath.mpf(next(noisy)) * 1e-20, lambda v: first, 30, 1e-25)
    assert not ev.decided and math.isnan(ev.disc) and "does not settle" in ev.note


def test_a_correct_formula_with_cancellation_is_not_refuted_by_the_search():
    """Through the public API: the optimiser climbs towards small t, where (1 - cos t)/t^2 cancels."""
    p = paper("cancel_test", "a formula that cancels")
    c = p.equality("cancel_test.eq1", printed=lambda ctx, q: (1 - ctx.cos(q["t"])) / q["t"] ** 2,
                   reference=lambda q, dps: 2 * mpmath.sin(mpmath.mpf(q["t"]) / 2) ** 2 / mpmath.mpf(q["t"]) ** 2,
                   domain=Domain({"t": Real(1e-12, 1e-3, "log")}))
    v = verify.run_claim(c.id, budget="default", seed=0)
    assert v.verdict == "HOLDS", v.reason
    assert any("re-evaluated at" in e.note for e in v.checks[0].evals)


def test_the_natural_reading_of_crt_thm33_holds_where_its_formula_cancels():
    """At the long-root reading's counterexample (|x + y| small) the root-closed formula loses 8 of 30
    digits; it was refuted there by its own rounding before the printed side was re-evaluated."""
    at = {"d": 43, "nx": 7.038328892169735, "ny": 7.030912121015909, "theta": math.pi}
    v = verify.evaluate_at("crt.thm3.3", at)
    assert v.verdict == "MIXED"
    assert {r.name: r.verdict for r in v.readings} == {"long root": "REFUTED", "root closed": "HOLDS"}

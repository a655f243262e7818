"""Certified counterexamples of SimRF's deterministic REFUTED/MIXED claims (Arb balls).

The checks of simrf.cor4.4, simrf.eq77, simrf.eq56 and both readings of simrf.eq45 carry
``printed_ball``/``reference_ball``: at a refuting point the balls of the printed side and of the
reference are disjoint (``extra["certified"]``), where the claim holds (the corrected formula,
the natural reading of eq (45)) the balls agree within the tolerance -- and a planted wrong
reference ball is never certified.  The checks with a printed side on the context (``printed_ctx``)
or with a ball twin of a printed series, and a reference ball, certify their holding points too.
"""

from __future__ import annotations

from typing import Any

import pytest

from rfcheck.backends import MP
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.claims import simrf as C
from rfcheck.claims._common import deterministic_check, eval_on_balls, mp_point

BUDGET = BUDGETS["default"]


def _check(cid: str, reading: str | None = None) -> Any:
    claim = REGISTRY[cid]
    if reading is None:
        return claim.checks[0]
    return next(r for r in claim.readings if r.name == reading).checks[0]


@pytest.mark.parametrize("cid,reading,point", [
    ("simrf.cor4.4", None, {"v": 1.0, "d": 8, "m": 4, "sq": 0.5}),
    ("simrf.cor4.4", None, {"v": 3.0, "d": 64, "m": 64, "sq": 2.0}),
    ("simrf.eq77", None, {"z": 1.0, "d": 8, "m": 4}),
    ("simrf.eq77", None, {"z": 3.0, "d": 128, "m": 128}),  # printed and true ratios differ by 5e-6 only
    ("simrf.eq56", None, {"w": 3.0, "d": 3, "cos": 0.5}),
    ("simrf.eq56", None, {"w": 10.0, "d": 32, "cos": -0.9}),  # densities ~1e-19 and ~3e-21
    ("simrf.eq45", "literal (46)", {"d": 4, "v": 1.0, "seed": 11}),
])
def test_refutation_is_certified(cid: str, reading: str | None, point: dict[str, Any]) -> None:
    ev = _check(cid, reading).evaluate(point, BUDGET, 0)
    assert ev.decided and ev.disc > 1
    assert ev.extra["certified"] is True, ev.extra


@pytest.mark.parametrize("point", [{"d": 4, "v": 1.0, "seed": 11}, {"d": 3, "v": 2.0, "seed": 12}])
def test_holding_reading_is_certified_as_holding(point: dict[str, Any]) -> None:
    ev = _check("simrf.eq45", "norm").evaluate(point, BUDGET, 0)
    assert ev.decided and ev.disc <= 1
    assert ev.extra["certified"] is True, ev.extra


def test_corrected_eq56_agrees_with_eq20_on_balls() -> None:
    from rfcheck.arb_backend import workprec
    from rfcheck.certify import certified_equal

    p = {"w": 10.0, "d": 32, "cos": -0.9}
    with workprec(200):
        fixed = C.on_balls(lambda ctx, q: C.printed_eq56(ctx, q, corrected=True))(p, 200)
        ref = C.cf.pdf_wij_angle(p["w"], p["d"], p["cos"], backend="arb", prec=200)
    assert certified_equal(fixed, ref, 1e-40) == "HOLDS"


def test_a_wrong_reference_ball_is_not_certified() -> None:
    """A check that refutes in mpmath with a reference ball that agrees with the printed ball: the
    balls say HOLDS, so the point is not certified (and says why)."""
    check = deterministic_check(
        "planted",
        None,
        lambda p, dps: C._gap_ref(p, dps),
        printed_ctx=C.printed_eq25,
        reference_ball=lambda p, bits: eval_on_balls(C.printed_eq25, p, bits),  # wrong: the printed side itself
    )
    ev = check.evaluate({"v": 1.0, "d": 8, "m": 4, "sq": 0.5}, BUDGET, 0)
    assert ev.decided and ev.disc > 1
    assert ev.extra["certified"] is False and "HOLDS" in ev.extra["not_certified"]


def test_a_ball_function_that_fails_leaves_the_point_uncertified() -> None:
    def broken(p: dict[str, Any], bits: int) -> Any:
        raise NotImplementedError("no ball here")

    check = deterministic_check("planted", lambda p: C.printed_eq25(MP, mp_point(p)), lambda p, dps: C._gap_ref(p, dps),
                                printed_ball=broken, reference_ball=C._gap_ball)
    ev = check.evaluate({"v": 1.0, "d": 8, "m": 4, "sq": 0.5}, BUDGET, 0)
    assert ev.extra["certified"] is False and "no ball here" in ev.extra["not_certified"]


@pytest.mark.parametrize("cid,check,point", [
    ("simrf.lem4.1.pdf", "cdf-derivative", {"w": 1.5, "d": 3}),
    ("simrf.lem4.1.pdf", "cdf-derivative", {"w": 40.0, "d": 256}),
    ("simrf.lem4.1", "quadrature", {"v": 5.0, "d": 1024}),
    ("simrf.eq58", "cdf-derivative", {"w": 0.05, "d": 1}),
    ("simrf.eq64", "quadrature-middle", {"d": 512}),
    ("simrf.eq64", "quadrature-right", {"d": 37}),
    ("simrf.eq85", "series", {"z": 5.0, "d": 1024}),
    ("simrf.text-small-v", "chi-moment-quadrature", {"d": 4096}),
    ("simrf.eq66", "quadrature", {"d": 300, "k": 40}),
    ("simrf.eq33", "direction-quadrature", {"v": 5.0, "w": 30.0, "d": 256}),
    ("simrf.thm4.3.orf", "eq10-quadrature", {"v": 5.0, "d": 256}),  # "hypergeometric": circular, never certified
    ("simrf.eq69.line1", "eq10-quadrature", {"v": 3.0, "d": 64, "m": 64, "sq": 2.0}),
    ("simrf.thm4.5", "bessel-quadrature", {"z": 4.0, "d": 64, "m": 64}),
])
def test_holding_points_are_certified(cid: str, check: str, point: dict[str, Any]) -> None:
    """The checks whose printed side is a context function (printed_ctx) or has a ball twin
    (printed_ball), with a reference ball: a holding point is certified as holding."""
    ch = next(c for c in REGISTRY[cid].checks if c.name == check)
    ev = ch.evaluate(point, BUDGET, 0)
    assert ev.decided and ev.disc <= 1
    assert ev.extra["certified"] is True, ev.extra


def test_a_planted_slip_in_eq18_is_refuted_and_certified() -> None:
    """eq (18) with a relative slip of 1e-22 (above the tolerance 1e-25 at 30 digits): the CDF-derivative
    reference refutes it and the balls certify the refutation; the unslipped formula is certified holding."""
    from rfcheck.backends import num

    def check(f: Any) -> Any:
        return deterministic_check(
            "cdf-derivative", None, lambda p, dps: C.ref.cdf_derivative_sqrt2_chi(p["w"], int(p["d"]), dps),
            atol_scale=lambda p, dps: 1, printed_ctx=f,
            reference_ball=lambda p, bits: C.cf.pdf_wij_iid(p["w"], int(p["d"]), backend="arb", prec=bits))

    def wrong(ctx: Any, p: dict[str, Any]) -> Any:
        return C.printed_eq18(ctx, p) * (1 + num(ctx, 1) / 10**22)

    ev = check(wrong).evaluate({"w": 1.5, "d": 3}, BUDGET, 0)
    assert ev.decided and ev.disc > 1 and ev.extra["certified"] is True
    ev = check(C.printed_eq18).evaluate({"w": 1.5, "d": 3}, BUDGET, 0)
    assert ev.decided and ev.disc <= 1 and ev.extra["certified"] is True


@pytest.mark.parametrize("cid,check,point", [
    ("simrf.cor4.4", "eq10-quadrature", {"v": 1.0, "d": 8, "m": 4, "sq": 0.5}),
    ("simrf.cor4.4.positive", "eq10-quadrature", {"v": 1.3, "d": 5, "m": 3, "sq": 0.7}),
    ("simrf.eq69.line1", "eq10-quadrature", {"v": 1.0, "d": 4, "m": 3, "sq": 0.5}),
    ("simrf.eq69.line2", "eq10-quadrature", {"v": 2.0, "d": 16, "m": 9, "sq": 1.0}),
    ("simrf.thm4.5", "bessel-quadrature", {"z": 0.9, "d": 4, "m": 3}),
    ("simrf.eq77", "bessel-quadrature", {"z": 1.0, "d": 8, "m": 4}),  # a refuting point
    ("simrf.eq61", "hypergeometric", {"v": 1.5, "d": 8, "cos": -1.0 / 7}),
])
def test_reference_balls_do_not_use_the_closed_form_of_the_printed_series(
    cid: str, check: str, point: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The printed series of eq (23)/(25)/(26)/(69) are the Taylor series of the library's 1F1 closed forms, and
    eq (61)'s reference was the eq (21) closed form: a reference ball from those would only show that a series
    equals its own sum.  With their Arb faces disabled, every one of these checks still certifies its point
    (the reference balls come from eq (10) / the Bessel expectation by chi quadrature or exact moments)."""
    from rfcheck.closed_forms import simrf as cf

    for name in ("log_prf_orthogonality_gap", "rff_orthogonality_gap", "log_conformity_orf", "log_conformity_angle",
                 "prf_orthogonality_gap", "conformity_orf", "conformity_angle"):
        orig = getattr(cf, name)

        def no_arb(*a: Any, _orig: Any = orig, _name: str = name, **k: Any) -> Any:
            if k.get("backend") == "arb":
                raise AssertionError(f"{_name}'s Arb face used as a ball reference")
            return _orig(*a, **k)

        monkeypatch.setattr(cf, name, no_arb)
    (chk,) = [c for c in REGISTRY[cid].checks if c.name == check]
    ev = chk.evaluate(point, BUDGET, 0)
    assert ev.decided and ev.extra["certified"] is True, ev.extra


def test_thm43_orf_hypergeometric_check_is_not_counted_certified() -> None:
    """Eq (23) against 1F1(d; d/2; v^2/2), its own sum: decided, never certified (the eq (10) check certifies)."""
    p = {"v": 1.0, "d": 8}
    checks = {c.name: c for c in REGISTRY["simrf.thm4.3.orf"].checks}
    ev = checks["hypergeometric"].evaluate(p, BUDGET, 0)
    assert ev.decided and ev.extra["certified"] is False and "circular" in ev.extra["not_certified"]
    ev = checks["eq10-quadrature"].evaluate(p, BUDGET, 0)
    assert ev.decided and ev.extra["certified"] is True

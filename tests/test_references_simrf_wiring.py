"""The SimRF check-building mechanisms shared by the two claim modules (``rfcheck.claims._simrf_shared``) and the
references that left the claim modules (``rfcheck.references.simrf``): values against mpmath at 50 digits,
Monte Carlo against closed forms, and the checks' wiring (points, search, certification)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import arb

import rfcheck.claims.simrf  # noqa: F401  (registers the simrf claims)
from rfcheck.arb_backend import ARB
from rfcheck.backends import MP
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.claims import _simrf_shared as S
from rfcheck.claims._simrf_proofs import at_bits
from rfcheck.closed_forms import simrf as cf
from rfcheck.references import simrf as ref
from rfcheck.references.simrf_proofs import ctx_rows, unit_config

BITS = 120
DEFAULT = BUDGETS["default"]


@pytest.mark.parametrize("v, d, c", [(1.0, 4, 0.0), (2.5, 8, -1.0 / 7), (0.7, 3, 0.5), (1.5, 32, -0.9)])
def test_angle_conformity_hyp1f1_integral_ball_encloses_the_50_digit_closed_form(v: float, d: int, c: float) -> None:
    ball = ref.angle_conformity_hyp1f1_integral_ball(v, d, c, BITS)
    with mpmath.workdps(50):
        exact = cf.conformity_angle(mpmath.mpf(v), d, mpmath.mpf(c), backend="mpmath", dps=50)
        assert ball.overlaps(arb(mpmath.nstr(exact, 45)))
    assert float(ball.rad()) < 1e-25 * float(ball.mid())


def test_angle_conformity_hyp1f1_integral_ball_at_right_angles_is_rho_orf() -> None:
    ball = ref.angle_conformity_hyp1f1_integral_ball(1.3, 6, 0.0, BITS)
    with mpmath.workdps(50):
        orf = mpmath.hyp1f1(6, 3, mpmath.mpf(1.3) ** 2 / 2)
    assert abs(float(ball.mid()) - float(orf)) < 1e-14 * float(orf)
    # an obtuse angle lowers the conformity (Lemma 4.2 / Thm 4.3): the SimRF angle is below the ORF value
    assert ref.angle_conformity_hyp1f1_integral_ball(1.3, 6, -0.2, BITS) < ball


@pytest.mark.parametrize("d, m, v, w, seed", [(3, 3, 1.0, 2.0, 1), (8, 5, 0.7, 3.0, 2), (2, 4, 2.0, 1.5, 4)])
def test_rotated_ensemble_conformity_on_mpmath_and_balls(d: int, m: int, v: float, w: float, seed: int) -> None:
    U = unit_config(m, d, seed)
    with mpmath.workdps(50):
        val = ref.rotated_ensemble_conformity(MP, ctx_rows(MP, U), MP.num(v), MP.num(w), d)
        # the same mean over ordered pairs, each pair by its own direction average at 50 digits
        rows = ctx_rows(MP, U)

        def pair(i: int, j: int) -> mpmath.mpf:
            s = mpmath.sqrt(mpmath.fsum((a + b) ** 2 for a, b in zip(rows[i], rows[j], strict=True)))
            return ref.direction_average(w * s, mpmath.mpf(v), d)[0]

        direct = mpmath.fsum(pair(i, j) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
        assert abs(val - direct) < mpmath.mpf(10) ** -40 * val
    from rfcheck.arb_backend import workprec

    with workprec(BITS):
        ball = ref.rotated_ensemble_conformity(ARB, ctx_rows(ARB, U), ARB.num(v), ARB.num(w), d).v
    assert ball.overlaps(arb(mpmath.nstr(val, 40)))
    assert float(ball.rad()) < 1e-25 * float(ball.mid())


def test_rotated_ensemble_conformity_is_one_without_directions_sum() -> None:
    # u_1 = -u_2: |u_1 + u_2| = 0, every b_1 b_2 = 1
    with mpmath.workdps(50):
        U = [[MP.num(0), MP.num(1), MP.num(0)], [MP.num(0), MP.num(-1), MP.num(0)]]
        assert abs(ref.rotated_ensemble_conformity(MP, U, MP.num(2), MP.num(3), 3) - 1) < mpmath.mpf(10) ** -45


@pytest.mark.parametrize("config", ["orthogonal", "simplex"])
def test_rotated_configuration_pair_products_against_the_coupled_pair_closed_forms(config: str) -> None:
    d, v, n = 4, 0.6, 200_000
    U = unit_config(d, d, 3, config)
    s = ref.rotated_configuration_pair_products(U, v, n, 7)
    exact = float(cf.pair_conformity(mpmath.mpf(v), d, "orf" if config == "orthogonal" else "simrf",
                                     backend="mpmath", dps=30))
    assert abs(s.mean() - exact) < 5 * s.std() / math.sqrt(n)
    # the same seed gives the same draws; a configuration's samples are not those of another
    assert np.array_equal(s, ref.rotated_configuration_pair_products(U, v, n, 7))


def test_rotated_configuration_pair_products_detects_a_wrong_configuration() -> None:
    # the simplex conformity is strictly below the orthogonal one (Thm 4.3): 200k samples separate them
    d, v, n = 4, 0.8, 200_000
    s = ref.rotated_configuration_pair_products(unit_config(d, d, 3, "simplex"), v, n, 11)
    orf = float(mpmath.hyp1f1(d, d / 2, v * v / 2))
    assert s.mean() + 5 * s.std() / math.sqrt(n) < orf


def test_on_balls_keeps_ints_and_returns_flint_balls() -> None:
    seen = {}

    def printed(ctx, p):
        seen["d"] = p["d"]
        return ctx.exp(ctx.num(p["t"])) * p["d"], ctx.num(p["d"])

    out = S.on_balls(printed)({"t": 0.5, "d": 3}, 80)
    assert isinstance(seen["d"], int)
    assert out[0].overlaps(3 * arb(0.5).exp()) and float(out[0].rad()) < 1e-20 and out[1] == arb(3)
    assert at_bits(lambda p, bits: arb(1) / 3)({}, 20).rad() > at_bits(lambda p, bits: arb(1) / 3)({}, 200).rad()


def test_two_prec_is_the_two_precision_reference_of_a_computation() -> None:
    """``two_prec(fn)(p, dps)``: ``fn(p)`` at ``dps + 25`` digits, its change from ``dps + 10`` plus ``10^(3-dps)``
    relative as the error (a computation exact at any precision has only the relative term)."""
    value, err = S.two_prec(lambda p: mpmath.pi * p["x"])({"x": 2}, 30)
    with mpmath.workdps(60):
        assert abs(value - 2 * mpmath.pi) < mpmath.mpf(10) ** -53
        assert mpmath.mpf(10) ** -28 < err < mpmath.mpf(10) ** -26
    # a computation that moves with the precision: its change between the two precisions is the error
    moving, err2 = S.two_prec(lambda p: mpmath.mpf(10) ** -mpmath.mp.dps)({}, 30)
    assert abs(moving * mpmath.mpf(10) ** 55 - 1) < 1e-14 and mpmath.mpf(10) ** -41 < err2 < mpmath.mpf(10) ** -39


def test_faces_are_the_mpmath_and_ball_faces_of_one_transcription() -> None:
    f = S.faces(lambda ctx, p: ctx.gamma(ctx.num(p["d"]) / 2))
    with mpmath.workdps(50):
        assert f["printed"]({"d": 5}) == mpmath.gamma(mpmath.mpf(5) / 2)
    assert f["printed_ball"]({"d": 5}, BITS).overlaps((arb(5) / 2).gamma())


def test_det_and_ineq_cap_points_and_do_not_climb() -> None:
    chk = S.det("x", None, lambda p, dps: (mpmath.mpf(1), 0), printed_ctx=lambda ctx, p: ctx.num(1), n=7)
    assert (chk.max_points, chk.search) == (7, False)
    chk = S.ineq("y", lambda p, dps: (mpmath.mpf(0), mpmath.mpf(1), 0), n=3)
    assert (chk.max_points, chk.search) == (3, False)


def test_eq10_angle_is_the_definition_quadrature() -> None:
    val, err = S.eq10_angle({"v": 1.0, "d": 4, "cos": 0.0}, 30)
    assert isinstance(val, mpmath.mpf) and abs(val - mpmath.hyp1f1(4, 2, 0.5)) < 1e-10 and err < 1e-8


def test_iid_mgf_check_decides_and_certifies_the_printed_side_and_refutes_a_wrong_one() -> None:
    good = S.iid_mgf_check("q", 5, printed_ctx=lambda ctx, p: ctx.exp(p["v"] ** 2))
    ev = good.evaluate({"v": 1.5, "d": 3}, DEFAULT, 0)
    assert ev.decided and ev.disc <= 1 and ev.extra == {"certified": True}
    assert (good.max_points, good.search) == (5, False)
    bad = S.iid_mgf_check("q", 5, printed_ctx=lambda ctx, p: ctx.exp(p["v"] ** 2 / 2))
    assert bad.evaluate({"v": 1.5, "d": 3}, DEFAULT, 0).disc > 1


def test_the_claims_use_the_shared_mechanisms() -> None:
    # lem4.1 and both eq (53) checks are iid-MGF checks; eq (72) and eq (28) feature inner products
    names = {cid: [c.name for c in REGISTRY[cid].checks] for cid in ("simrf.lem4.1", "simrf.eq53", "simrf.eq72",
                                                                      "simrf.eq28", "simrf.eq64")}
    assert names == {"simrf.lem4.1": ["quadrature"], "simrf.eq53": ["quadrature-middle", "quadrature-series"],
                     "simrf.eq72": ["feature-inner-product"], "simrf.eq28": ["feature-inner-product"],
                     "simrf.eq64": ["quadrature-middle", "quadrature-right"]}
    for cid in ("simrf.lem4.1", "simrf.eq53"):
        for c in REGISTRY[cid].checks:
            assert c.description == "E exp(t v), t ~ N(0, 2), by quadrature" and c.search is False


@pytest.mark.parametrize("cid, point", [
    ("simrf.eq61", {"v": 1.5, "d": 8, "cos": -1.0 / 7}),
    ("simrf.eq36", {"d": 3, "m": 3, "v": 1.0, "w": 2.0, "seed": 1}),
    ("simrf.eq31", {"w": 2.0, "v": 1.0, "d": 6}),
    ("simrf.eq75", {"w": 2.0, "z": 1.0, "d": 6}),
    ("simrf.eq72", {"m": 3, "d": 4, "scale": 0.7, "seed": 2}),
    ("simrf.eq28", {"m": 3, "d": 4, "scale": 0.7, "seed": 2}),
])
def test_checks_built_by_the_moved_references_and_factories_hold_and_certify(cid: str, point: dict) -> None:
    for chk in REGISTRY[cid].checks:
        ev = chk.evaluate(point, DEFAULT, 0)
        assert ev.decided and ev.disc <= 1 and ev.extra == {"certified": True}, (cid, chk.name, ev.disc, ev.extra)


def test_eq41_monte_carlo_holds_and_says_why_it_is_not_certified() -> None:
    ev = REGISTRY["simrf.eq41"].checks[0].evaluate({"d": 3, "v": 0.8, "seed": 5, "config": "simplex"}, DEFAULT, 3)
    assert ev.decided and ev.disc < 1 and ev.extra["certified"] is False and "Monte Carlo" in ev.extra["not_certified"]

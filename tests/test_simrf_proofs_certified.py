"""Certified points of the SimRF proof-step claims (rfcheck/claims/_simrf_proofs.py): the Arb balls
(rigorous integrals with proven tail bounds, series with proven remainders) certify the decided
points; a planted wrong printed ball is certified REFUTED, and a deliberately widened reference ball
leaves the point uncertified."""

from __future__ import annotations

import mpmath
import pytest
from flint import arb

import rfcheck.claims.simrf  # noqa: F401  (registers the claims)
from rfcheck.backends import MP
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.claims import _simrf_proofs as P
from rfcheck.claims._common import deterministic_check
from rfcheck.references.simrf import iid_mgf_ball, iid_mgf_quadrature

DEFAULT = BUDGETS["default"]

POINTS = [
    ("simrf.eq53", 0, {"v": 2.0, "d": 16}),
    ("simrf.eq53", 1, {"v": 4.0, "d": 128}),
    ("simrf.text-a4-integral", 0, {"z": 0.73}),
    ("simrf.text-footnote4", 0, {"d": 1024}),
    ("simrf.text-footnote4", 1, {"d": 3}),
    ("simrf.eq57", 0, {"w": 20.025, "d": 128}),
    ("simrf.eq57", 1, {"w": 3.0, "d": 1}),
    ("simrf.eq57", 2, {"w": 40.0, "d": 7}),
    ("simrf.eq78", 0, {"z": 4.0, "d": 128}),
    ("simrf.eq31", 0, {"w": 30.0, "v": 5.0, "d": 256}),
    ("simrf.eq31", 0, {"w": 0.05, "v": 0.0511794921875, "d": 16}),
    ("simrf.eq32", 0, {"d": 256, "z": 40.0, "imag": False}),
    ("simrf.eq32", 0, {"d": 1, "z": 0.01, "imag": True}),
    ("simrf.eq75", 0, {"w": 20.0, "z": 4.0, "d": 128}),
    ("simrf.eq22", 0, {"d": 512, "k": 200, "cos": -1e-6}),
    ("simrf.eq88", 0, {"d": 1024, "i": 1023, "j": 0}),
    ("simrf.alg1", 0, {"d": 64, "k": 5, "seed": 3}),
    ("simrf.eq72", 0, {"m": 5, "d": 7, "scale": 2.5, "seed": 1}),
    ("simrf.eq28", 0, {"m": 5, "d": 7, "scale": 2.5, "seed": 1}),
    ("simrf.eq36", 0, {"d": 8, "m": 5, "v": 0.7, "w": 3.0, "seed": 2}),
    ("simrf.eq38", 0, {"d": 8, "m": 12, "v": 1.5, "w": 3.0, "seed": 6}),
    ("simrf.eq42", 1, {"d": 3, "v": 5.0, "s": 200.0}),
    ("simrf.eq43.relabel", 0, {"d": 4, "v": 1.5, "seed": 8}),
    ("simrf.eq43", 0, {"d": 4, "v": 3.0, "seed": 9}),
    ("simrf.eq14", 0, {"d": 64, "v": 0.01, "coupling": "simrf"}),
    ("simrf.eq46", 0, {"d": 5, "t": 0.3, "seed": 2, "v": 1.0, "k": 3}),
    ("simrf.eq47", 0, {"d": 5, "t": 0.7, "seed": 3, "v": 1.0, "k": 9}),
]


@pytest.mark.parametrize(("cid", "k", "p"), POINTS)
def test_decided_points_are_certified(cid: str, k: int, p: dict) -> None:
    ev = REGISTRY[cid].checks[k].evaluate(p, DEFAULT, 0)
    assert ev.decided and ev.disc <= 1, (cid, ev)
    assert (ev.extra or {}).get("certified") is True, (cid, ev.extra)


def test_a_planted_error_is_certified_refuted_and_a_widened_ball_certifies_nothing() -> None:
    p = {"v": 2.0, "d": 16}
    eps = mpmath.mpf(10) ** -20

    # eq (53)'s middle off by 1e-20 relative: refuted by mpmath and by the balls
    wrong = deterministic_check(
        "planted",
        lambda p: P.printed_eq53_middle(P.MP, p) * (1 + eps),
        lambda p, dps: iid_mgf_quadrature(p["v"], dps),
        printed_ball=lambda p, bits: P.on_balls(P.printed_eq53_middle)(p, bits) * (1 + arb("1e-20")),
        reference_ball=lambda p, bits: iid_mgf_ball(p["v"], bits),
    )
    ev = wrong.evaluate(p, DEFAULT, 0)
    assert ev.disc > 1 and ev.extra["certified"] is True
    # the right printed side against a reference ball widened to 1e-20: decided, never certified
    wide = deterministic_check(
        "widened",
        lambda p: P.printed_eq53_middle(P.MP, p),
        lambda p, dps: iid_mgf_quadrature(p["v"], dps),
        printed_ball=P.on_balls(P.printed_eq53_middle),
        reference_ball=P.at_bits(lambda p, bits: (lambda b: arb(b.mid(), abs(b.mid()) * 1e-20))(
            iid_mgf_ball(p["v"], bits))),
    )
    ev = wide.evaluate(p, DEFAULT, 0)
    assert ev.decided and ev.disc <= 1 and ev.extra["certified"] is False


def test_mpmath_values_of_the_context_rewrites_are_unchanged() -> None:
    """The printed formulas rewritten against a context give the same mpmath numbers as the literal
    mpmath transcriptions they replace (spot values at 30 digits)."""
    with mpmath.workdps(30):
        row = P.printed_s_row(3, 7)
        d = 7
        a = (mpmath.sqrt(d) + 1) / mpmath.mpf(d - 1) ** mpmath.mpf(1.5)
        assert row[2] == -a + mpmath.sqrt(mpmath.mpf(d) / (d - 1)) and row[0] == -a and row[6] == 0
        p = {"d": 8, "m": 5, "v": 0.7, "w": 3.0, "seed": 2}
        _, m, v, w, U = P._equal_norm_point(p)
        tot = mpmath.mpf(0)
        for i in range(m):
            for j in range(m):
                if i != j:
                    s2 = mpmath.fsum((x + y) ** 2 for x, y in zip(U[i], U[j], strict=True))
                    tot += mpmath.hyp0f1(4, v * v * w * w * s2 / 4) / mpmath.gamma(4)
        assert abs(P.printed_eq36(MP, p) - mpmath.gamma(4) / 20 * tot) < mpmath.mpf(10) ** -27 * abs(tot)

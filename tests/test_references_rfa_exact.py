"""Exact (rational) twins of the RFA attention references: the quadratic form in exact arithmetic
agrees with the 50-digit mpmath one, the printed recurrences equal it exactly, a planted wrong
recurrence is refuted exactly, and the attention claims' decided points are certified."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import fmpq

from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.claims import rfa as crfa
from rfcheck.references import rfa as ref

RNG = np.random.default_rng(1127)


def _instance(i: int) -> dict:
    return ref.attention_instance(int(RNG.integers(1, 9)), int(RNG.integers(1, 5)), int(RNG.integers(1, 7)), 1.5, i)


def _weights(kind: str, g: list):
    if kind == "noncausal":
        return lambda t, i: 1
    if kind == "causal":
        return lambda t, i: 1 if i <= t else 0
    one = g[0] ** 0 if g else 1
    return lambda t, i: 0 if i > t else (1 - g[i]) * math.prod(g[i + 1: t + 1], start=one)


@pytest.mark.parametrize("kind", ["noncausal", "causal", "gate"])
@pytest.mark.parametrize("i", range(3))
def test_exact_quadratic_form_matches_mpmath_at_50_digits(kind, i):
    inst = _instance(i)
    gq = [fmpq(*float(x).as_integer_ratio()) for x in inst["g"]]
    exact = ref.attention_quadratic_exact(inst["phi_q"], inst["phi_k"], inst["v"], _weights(kind, gq))
    with mpmath.workdps(50):
        pq, pk, v = (mpmath.matrix(np.atleast_2d(inst[x]).tolist()) for x in ("phi_q", "phi_k", "v"))
        gm = [mpmath.mpf(x) for x in inst["g"]]
        h, cond = ref.attention_quadratic_mp(pq, pk, v, _weights(kind, gm))
        for t, row in enumerate(exact):
            for j, x in enumerate(row):
                ex = mpmath.mpf(int(x.p)) / int(x.q)
                assert abs(ex - h[t, j]) <= mpmath.mpf(10) ** -40 * cond[t] * max(1, abs(ex))


@pytest.mark.parametrize("kind", ["noncausal", "causal", "gate"])
def test_printed_recurrence_equals_the_quadratic_form_exactly(kind):
    inst = _instance(5)
    assert crfa._exact_verdict(inst, kind, mpmath.mpf(0)) == "HOLDS"  # residual exactly 0


def test_a_planted_wrong_recurrence_is_refuted_exactly():
    """Gates read as 1 - g (a planted transcription error): the exact residual is > 0."""
    inst = ref.attention_instance(4, 2, 3, 1.0, 6)
    g = [fmpq(*float(x).as_integer_ratio()) for x in inst["g"]]
    pq, pk, v = (ref.ExactGrid.of(inst[x]) for x in ("phi_q", "phi_k", "v"))
    wrong = crfa.printed_recurrence(pq, pk, v, [1 - x for x in g], causal=True, new=ref.ExactGrid)
    right = ref.attention_quadratic_exact(inst["phi_q"], inst["phi_k"], inst["v"], _weights("gate", g))
    assert wrong[0, 0] == right[0][0]  # at t = 0 the gate cancels in the ratio
    assert any(wrong[t, j] != right[t][j] for t in range(1, len(right)) for j in range(v.cols))


def test_exact_grid_reads_like_an_mpmath_matrix():
    g = ref.ExactGrid.of(np.array([0.5, 0.25]))
    assert (g.rows, g.cols, g[1], g[1, 0]) == (2, 1, fmpq(1, 4), fmpq(1, 4))
    g[0] = fmpq(3)
    assert g[0, 0] == 3


@pytest.mark.parametrize("cid", ["rfa.eq-noncausal", "rfa.alg-causal", "rfa.eq-gate"])
def test_attention_claims_certify_their_decided_points(cid):
    check = REGISTRY[cid].checks[0]
    ev = check.evaluate({"n": 12, "d": 4, "D": 8, "scale": 3.0, "draw": 42}, BUDGETS["default"], 0)
    assert ev.decided and ev.disc <= 1 and ev.extra["certified"] is True

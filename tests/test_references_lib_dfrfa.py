"""Library references moved out of the darkformer, rfa and attention claim modules: the exact and ball
forms of DARKFormer's Gaussian-integral closed forms against 50-digit mpmath, the rigorous whitening
residuals of Prop C.1, RFA's exact grid and attention instances, and the attention-scale studies."""

from __future__ import annotations

import importlib.util
import math
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
from flint import arb, fmpq, fmpq_mat

from rfcheck.arb_backend import to_ball, workprec
from rfcheck.closed_forms import darkformer as cf
from rfcheck.references import attention as aref
from rfcheck.references import darkformer as dref
from rfcheck.references import rfa as rref

BITS = 150
RNG = np.random.default_rng(20261127)


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    with workprec(BITS + 40):
        return bool(ball.contains(to_ball(value)))


def _random_case(i: int) -> tuple[np.ndarray, np.ndarray]:
    """A rotated Lambda (eigenvalues in [0, 0.15] or [0, 0.45]) and a random SPD Sigma (finite and infinite)."""
    d = int(RNG.integers(1, 4))
    lam = dref.rotated_covariance(list(RNG.uniform(0.0, 0.45 if i % 2 else 0.15, d)), i)  # V(p_I) < inf below 1/6
    u = dref.haar_rotation(d, i + 100)
    sigma = (u * RNG.uniform(0.3, 4.0, d)) @ u.T
    return lam, 0.5 * (sigma + sigma.T)


CASES = [_random_case(i) for i in range(8)]


def test_exact_identity_is_the_identity():
    e = dref.exact_identity(4)
    m = dref.exact_matrix(RNG.standard_normal((4, 4)))
    assert e * m == m and m * e == m and e.det() == 1


@pytest.mark.parametrize("lam, sigma", CASES)
def test_second_moment_matches_the_50_digit_closed_form(lam, sigma):
    """The exact determinants give the mpmath closed form's log second moment (+inf exactly where it does),
    and its ball contains the 50-digit value while a planted 1e-20-relative error is outside."""
    with mpmath.workdps(50):
        l2 = cf.log_expected_second_moment(lam, sigma, backend="mpmath", dps=50)
    lm, sm = dref.exact_matrix(lam), dref.exact_matrix(sigma)
    dets = dref.second_moment_dets_exact(lm, sm)
    ball = dref.expected_second_moment_ball(lm, sm, BITS)
    if l2 == mpmath.inf:
        assert dets is None and isinstance(ball, str)
        return
    with mpmath.workdps(50):
        det_s, det_p, det_i = (mpmath.mpf(int(x.p)) / int(x.q) for x in dets)
        assert abs(mpmath.log(det_s) / 2 - mpmath.log(det_p) / 2 - mpmath.log(det_i) - l2) < mpmath.mpf(10) ** -40
        value = mpmath.exp(l2)
        assert _contains(ball, value)
        assert not _contains(ball, value * (1 + mpmath.mpf(10) ** -20))


@pytest.mark.parametrize("lam, sigma", CASES)
def test_log_variance_ball_matches_the_50_digit_closed_form(lam, sigma):
    """log V on balls contains the 50-digit mpmath log V at Sigma, at I and at Sigma*; the infinities agree."""
    lm = dref.exact_matrix(lam)
    d = lam.shape[0]
    sig_star = (np.eye(d) + 2 * lam) @ np.linalg.inv(np.eye(d) - 2 * lam)
    for s in (sigma, np.eye(d), 0.5 * (sig_star + sig_star.T)):
        with mpmath.workdps(50):
            lv = cf.log_expected_variance(lam, s, backend="mpmath", dps=50)
        ball = dref.log_expected_variance_ball(lm, dref.exact_matrix(s), BITS)
        if lv == mpmath.inf:
            assert ball == math.inf
            continue
        assert isinstance(ball, arb) and _contains(ball, lv)
        with mpmath.workdps(50):
            assert not _contains(ball, lv + abs(lv) * mpmath.mpf(10) ** -25 + mpmath.mpf(10) ** -30)


def test_log_variance_ball_zero_and_infinite_branches_are_exact():
    zero, one = fmpq_mat(1, 1, [0]), fmpq_mat(1, 1, [1])
    assert dref.log_expected_variance_ball(zero, one, 64) == -math.inf  # Lambda = 0, Sigma = I: V = 0
    assert dref.log_expected_variance_ball(fmpq_mat(1, 1, [fmpq(1, 5)]), one, 64) == math.inf  # 1/5 > 1/6
    assert cf.log_expected_variance(0.2, 1.0) == math.inf


@pytest.mark.parametrize("i", range(4))
def test_whitening_residual_ball_encloses_the_exact_zero(i):
    """The residual bound of Prop C.1's whitening identities is rigorous and tiny at 128 bits, looser at 40: a
    bound of rounded arithmetic is positive (the residual balls are not exact) and scales with the precision (a bound
    that dropped the balls' radii, or returned 0, would not)."""
    d = int(RNG.integers(1, 5))
    u = dref.haar_rotation(d, i)
    eigs = np.exp(RNG.uniform(math.log(1e-4), 0.0, d))
    q, k = RNG.standard_normal(d), RNG.standard_normal(d)
    fine = dref.whitening_residual_ball(q, k, u, eigs, 128)
    coarse = dref.whitening_residual_ball(q, k, u, eigs, 40)
    assert isinstance(fine, arb) and 0 < fine < 1e-25
    assert isinstance(coarse, str) or coarse > 2**40 * fine


def test_whitening_residual_ball_says_why_for_unseparated_eigenvalues():
    """Eigenvalues 1 + O(1e-16) (Lambda = U U^T) are not isolated at 30 bits: a reason, not a ball."""
    u = dref.haar_rotation(3, 5)
    out = dref.whitening_residual_ball(np.ones(3), np.zeros(3), u, np.ones(3), 30)
    assert isinstance(out, str) and "eigen" in out


def test_exact_grid_runs_a_recurrence_exactly():
    """An mpmath-indexed accumulation on ExactGrid equals the exact sum; at 50 digits mpmath agrees."""
    a = RNG.standard_normal((5, 3))
    g = rref.ExactGrid.of(a)
    acc = rref.ExactGrid(1, 3)
    for i in range(5):
        for j in range(3):
            acc[0, j] += g[i, j]
    exact = [sum((fmpq(*float(a[i, j]).as_integer_ratio()) for i in range(5)), fmpq(0)) for j in range(3)]
    assert [acc[0, j] for j in range(3)] == exact
    with mpmath.workdps(50):
        for j in range(3):
            assert abs(mpmath.fsum(mpmath.mpf(a[i, j]) for i in range(5)) - mpmath.mpf(int(exact[j].p)) / int(
                exact[j].q)) < mpmath.mpf(10) ** -45
    col = rref.ExactGrid.of(np.array([0.1, 0.2]))
    assert (col.rows, col.cols) == (2, 1) and col[1] == col[1, 0] == fmpq(*(0.2).as_integer_ratio())


def test_attention_instance_features_give_the_cosine_kernel():
    """phi(q).phi(k) = mean_i cos(w_i.(q - k)) with the instance's own frequencies (regenerated here)."""
    n, d, big_d, scale, draw = 3, 2, 5, 1.5, 11
    inst = rref.attention_instance(n, d, big_d, scale, draw)
    rng = np.random.default_rng([draw, n, d, big_d])
    q = scale * rng.standard_normal((n, d)) / math.sqrt(d)
    k = scale * rng.standard_normal((n, d)) / math.sqrt(d)
    rng.standard_normal((n, d))
    w = rng.standard_normal((big_d, d))
    assert np.array_equal(q, inst["q"]) and np.array_equal(k, inst["k"])
    gram = inst["phi_q"] @ inst["phi_k"].T
    direct = np.array([[np.mean(np.cos(w @ (q[a] - k[b]))) for b in range(n)] for a in range(n)])
    assert np.allclose(gram, direct, rtol=0, atol=1e-14)
    again = rref.attention_instance(n, d, big_d, scale, draw)
    assert all(np.array_equal(inst[x], again[x]) for x in inst)
    assert not np.array_equal(inst["q"], rref.attention_instance(n, d, big_d, scale, draw + 1)["q"])


def test_dark_study_data_has_the_stated_covariance():
    q, k, lam = aref.dark_study_data(20_000, 3)
    assert lam.shape == (aref.STUDY_D, aref.STUDY_D) and lam.max() < 1 / 6
    for x in (q, k):
        assert np.allclose(np.diag(x.T @ x / len(x)), np.diag(lam), rtol=0.05)
    assert np.array_equal(aref.dark_study_data(4, 3)[0], aref.dark_study_data(4, 3)[0])


def test_study_ordering_reads_either_direction():
    ent = {"kind": "ordering", "statement": "pair-averaged MSE of a <= that of b", "z": 2.5}
    st = SimpleNamespace(entries=[{"kind": "equality", "statement": "x"}, ent])
    assert aref.study_ordering(st, "a", "b") == (ent, 1.0)
    assert aref.study_ordering(st, "b", "a") == (ent, -1.0)
    with pytest.raises(ValueError, match="no ordering between a and c"):
        aref.study_ordering(st, "a", "c")


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="needs rfcheck[jax]")
def test_attention_study_is_memoised_and_tests_its_orderings():
    st = aref.attention_study(4, 2, 64, 1, False)
    assert st is aref.attention_study(4, 2, 64, 1, False)
    e, sign = aref.study_ordering(st, "prf-iid", "prf-orf")
    assert sign == -1.0 and e["kind"] == "ordering"

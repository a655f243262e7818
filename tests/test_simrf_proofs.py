"""SimRF proof-step claims (rfcheck/claims/_simrf_proofs.py): the hand-derived references agree
with finite differences, the verdicts at chosen points are what the computation gives, and every
reference rejects a deliberately wrong printed formula (power)."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from rfcheck import verify
from rfcheck.backends import MP
from rfcheck.claims import BUDGETS, REGISTRY
from rfcheck.claims import _simrf_proofs as P
from rfcheck.claims._common import deterministic_check
from rfcheck.engine.montecarlo import simplex_matrix
from rfcheck.references import simrf as ref
from rfcheck.references import simrf_proofs as rp
from rfcheck.references.simrf import iid_mgf_quadrature

DEFAULT = BUDGETS["default"]


def _eq55_reference(p: dict, dps: int) -> tuple:
    """The reference of simrf.eq55: P(|w_i + w_j| <= w') by the root quadrature, at two precisions."""
    return ref.two_precision_value(lambda: ref.cdf_angle_root_quadrature(p["w"], int(p["d"]), p["cos"]), dps)


def _iid_mgf(p: dict, dps: int) -> tuple:
    """The reference of simrf.lem4.1 and eq (53): E exp(t v), t ~ N(0, 2), by quadrature."""
    return iid_mgf_quadrature(p["v"], dps)


def _L1(p: dict, U: list[list]) -> mpmath.mpf:
    """First term of the Lagrangian eq (44) for free (not normalised) vectors U."""
    d, v = int(p["d"]), mpmath.mpf(p["v"])
    r = [mpmath.mpf(float(x)) for x in rp.chi_norms(d, d, int(p["seed"]) + 1)]
    tot = mpmath.mpf(0)
    for perm in itertools.permutations(range(d)):
        for i, j in itertools.permutations(range(d), 2):
            a, b = r[perm[i]], r[perm[j]]
            q = a * a * rp.dot(U[i], U[i]) + b * b * rp.dot(U[j], U[j]) + 2 * a * b * rp.dot(U[i], U[j])
            tot += mpmath.hyp0f1(mpmath.mpf(d) / 2, v * v * q / 4) / mpmath.gamma(mpmath.mpf(d) / 2)
    return tot


def test_eq45_reference_gradient_is_the_finite_difference_gradient() -> None:
    p = {"d": 3, "v": 1.3, "seed": 4}
    with mpmath.workdps(30):
        _, _, _, U = P._lagrangian_point(p)
        for i in range(3):
            ref = P._grad_L(p, i)
            for c in range(3):

                def f(t: mpmath.mpf, i: int = i, c: int = c) -> mpmath.mpf:
                    V = [row[:] for row in U]
                    V[i][c] += t
                    return _L1(p, V)

                fd = mpmath.diff(f, 0)
                assert abs(fd - ref[c]) <= 1e-15 * (1 + abs(ref[c]))
        # the printed sum (norm reading) is exactly 1/4 of the gradient
        pr = P.printed_eq45_vector(P.MP, p, 0)
        for a, b in zip(pr, P._grad_L(p, 0), strict=True):
            assert abs(4 * a - b) <= 1e-20 * (1 + abs(b))


def test_eq49_reference_gradient_and_symmetrised_objective_gradient() -> None:
    rng = np.random.default_rng(0)
    W = rng.standard_normal((5, 4))
    h = 1e-6
    for i in range(5):
        ref = rp.rho_tilde_gradient(W, 0.9, i)
        fd = np.zeros(4)
        for c in range(4):
            Wp, Wm = W.copy(), W.copy()
            Wp[i, c] += h
            Wm[i, c] -= h
            fd[c] = (P.printed_rho_tilde(P.FP, Wp, 0.9) - P.printed_rho_tilde(P.FP, Wm, 0.9)) / (2 * h)
        np.testing.assert_allclose(fd, ref, rtol=1e-7, atol=1e-9)  # central differences, h = 1e-6
    obj = rp.symmetrised_pair_objective(rp.chi_norms(4, 4, 1), 1.1)
    x = rng.standard_normal(16)
    _, g = obj(x)
    fd = np.array([(obj(x + h * e)[0] - obj(x - h * e)[0]) / (2 * h) for e in np.eye(16)])
    np.testing.assert_allclose(fd, g, rtol=1e-6, atol=1e-6 * np.max(np.abs(g)))


@pytest.mark.parametrize(
    ("cid", "at", "verdict"),
    [
        # one printed line, two readings: 'literal (46)' REFUTED, 'norm' (natural) HOLDS
        # (tests/test_builtin_readings.py)
        ("simrf.eq45", {"d": 4, "v": 1.0, "seed": 11}, "MIXED"),
        ("simrf.eq47", {"d": 5, "t": 0.7, "seed": 3, "v": 1.0, "k": 9}, "HOLDS"),
        ("simrf.eq88", {"d": 6, "i": 685, "j": 428}, "HOLDS"),
        ("simrf.eq31", {"w": 0.05, "v": 0.0511794921875, "d": 16}, "HOLDS"),
        ("simrf.eq57", {"w": 20.025, "d": 128}, "HOLDS"),
        ("simrf.eq16", {"d": 12, "v": 1.0, "seed": 3, "start": "random", "big": 40.0}, "HOLDS"),
        ("simrf.eq48", {"d": 4, "v": 1.0, "seed": 14}, "HOLDS"),
    ],
)
def test_verdicts_at_points(cid: str, at: dict, verdict: str) -> None:
    assert verify.evaluate_at(cid, at).verdict == verdict


def _power(printed, reference, p: dict) -> float:
    """disc of a deliberately wrong printed formula against a claim's reference at ``p``."""
    return deterministic_check("power", printed, reference, atol_scale=lambda p, dps: 1).evaluate(p, DEFAULT, 0).disc


def test_references_reject_wrong_formulas() -> None:
    # eq (31) with the Bessel order d/2 instead of d/2 - 1
    p31 = {"w": 2.0, "v": 1.0, "d": 6}

    def wrong31(p: dict) -> mpmath.mpf:
        z = mpmath.mpc(0, 1) * p["w"] * p["v"]
        d = p["d"]
        return mpmath.re(mpmath.gamma(d / 2) * 2 ** (d / 2 - 1) * z ** (1 - d / 2) * mpmath.besselj(d / 2, z))

    ref31 = REGISTRY["simrf.eq31"].checks[0]
    assert ref31.evaluate(p31, DEFAULT, 0).disc < 1
    reference = lambda p, dps: ref.two_precision_value(lambda: ref.direction_average(2, 1, 6)[0], dps)  # noqa: E731
    assert _power(wrong31, reference, p31) > 1
    # eq (53) with e^{-w^2/2} in place of e^{-w^2/4} (the integral identity of the next sentence)
    p53 = {"v": 1.0, "d": 4}
    assert _power(lambda p: P.printed_eq53_middle(P.MP, p) * mpmath.mpf("1.000001"), _iid_mgf, p53) > 1
    # eq (36) with |w_i + w_j|^{2k} replaced by |w_i + w_j|^{k}
    p36 = {"d": 3, "m": 3, "v": 1.0, "w": 2.0, "seed": 1}
    ref36 = P.two_prec(lambda p: P._eq36_ref_ctx(MP, p))
    assert _power(lambda p: P.printed_eq36(MP, {**p, "w": math.sqrt(p["w"])}), ref36, p36) > 1
    # eq (22) reversed: for cos theta > 0 the integral is larger
    a, b, _ = P._eq22({"d": 5, "k": 3, "cos": 0.5}, 30)
    assert a > b


def test_eq41_monte_carlo_has_power() -> None:
    """The eq (41) Monte Carlo reference agrees with the printed form and rejects the conformity of a
    different configuration (simplex printed value against an orthogonal ensemble)."""
    p = {"d": 4, "v": 0.8, "seed": 1, "config": "orthogonal"}
    assert P._eq41_mc(p, DEFAULT, 5).disc < 1
    simplex_val, _ = P.printed_eq41({**p, "config": "simplex"})
    orth_val, _ = P.printed_eq41(p)
    assert simplex_val < orth_val
    from rfcheck.stats import compare_mc, estimate_mean, z_critical

    rng = np.random.default_rng(5)
    n, d, v = DEFAULT.mc_trials, 4, 0.8
    r = np.sqrt(rng.chisquare(d, size=(n, d)))
    q = rng.standard_normal((n, d))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    b = np.exp(v * r * q)  # orthogonal configuration: U = I
    est = estimate_mean((b.sum(axis=1) ** 2 - (b * b).sum(axis=1)) / (d * (d - 1)))
    assert compare_mc(p, simplex_val, est, z_crit=z_critical(DEFAULT.alpha, DEFAULT.mc_points)).disc > 1


def test_eq17_converges_in_few_passes_and_minimises() -> None:
    for d in (3, 6, 64, 256):
        r = rp.chi_norms(d, d, 0)
        W, n, res = rp.eq17_iterate(r[:, None] * simplex_matrix(d), tol=1e-12, max_passes=100)
        assert res < 1e-9 and n <= 100
        assert P.printed_rho_tilde(P.FP, W, 1.0) == pytest.approx(rp.rho_tilde_minimum(r, 1.0, d), rel=1e-9)
    # a non-minimising configuration (the simplex itself, unequal norms) is strictly above the minimum
    r = rp.chi_norms(6, 6, 0)
    assert P.printed_rho_tilde(P.FP, r[:, None] * simplex_matrix(6), 1.0) > rp.rho_tilde_minimum(r, 1.0, 6) * (1 + 1e-6)


def test_eq55_reference_has_power() -> None:
    """The eq (55) reference rejects the polar form with a perturbed ellipse radius (w' sqrt(1 + cos theta))."""
    p = {"w": 3.0, "d": 6, "cos": -0.2}
    assert REGISTRY["simrf.eq55"].checks[0].evaluate(p, DEFAULT, 0).disc < 1

    def wrong(p: dict) -> mpmath.mpf:
        w, c = mpmath.mpf(p["w"]), mpmath.mpf(p["cos"])
        return P.printed_eq55(P.MP, {**p, "w": float(w * mpmath.sqrt(1 + c))})

    assert _power(wrong, _eq55_reference, p) > 1


def test_eq14_growth_check_has_power(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong E(w_ij^2) (the orthogonal 2d used for a simplex pair) leaves an O(v^2) remainder: ratio ~ 1/4."""
    p = {"d": 64, "v": 0.01, "coupling": "simrf"}
    ratio, bound, _ = P._eq14_growth(p, 30)
    assert ratio < bound
    assert float(ratio) == pytest.approx(1 / 16, rel=0.05)
    monkeypatch.setattr(rp, "mean_pair_norm_sq", lambda d, coupling, ctx=None: mpmath.mpf(2 * d))
    ratio, bound, _ = P._eq14_growth(p, 30)
    assert float(ratio) == pytest.approx(1 / 4, rel=0.05)


def test_eq61_float_quadrature_is_precise_and_discriminating() -> None:
    p = {"v": 1.5, "d": 8, "cos": -1.0 / 7}
    ref, _ = P._eq61_ref(p, 30)
    val = P.printed_eq61(1.5, 8, -1.0 / 7, 300)
    assert abs(val - float(ref)) <= 1e-12 * float(ref)
    # the simplex angle vs the orthogonal one differ far beyond that precision (power)
    assert abs(P.printed_eq61(1.5, 8, 0.0, 300) - float(ref)) > 1e-3 * float(ref)


def test_eq28_reference_rejects_the_softmax_normalisation() -> None:
    """exp(-|z|^2/2) (the softmax-kernel PRF) in place of eq (7)'s exp(-|z|^2) is refuted; eq (28) holds."""
    p = {"m": 3, "d": 4, "scale": 0.7, "seed": 2}
    assert REGISTRY["simrf.eq28"].checks[0].evaluate(p, DEFAULT, 0).disc < 1

    def wrong(ctx, p: dict):
        _, x, y = P._rff_vectors(p, ctx)
        return P.printed_eq28(ctx, p) * ctx.exp((rp.ctx_dot(ctx, x, x) + rp.ctx_dot(ctx, y, y)) / 2)

    assert P._gram_check(wrong, P._prf_gram_ctx, True).evaluate(p, DEFAULT, 0).disc > 1

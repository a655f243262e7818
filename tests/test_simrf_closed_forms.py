"""Tests of ``rfcheck.closed_forms.simrf`` (Simplex Random Features) against independent references.

References (DESIGN.md, strongest first):

* the paper's printed series (eq 21, 23, 24, 25/69, 26) summed term by term in mpmath at
  60 digits -- the closed forms are hypergeometric rearrangements and must agree to 1e-40;
* the definition eq (10): a 2-D Gauss-Legendre quadrature over the two chi_d norms of
  ``0F1(; d/2; v^2 (r1^2 + r2^2 + 2 c r1 r2) / 4)`` (float64, independent of every 1F1 form);
* Monte Carlo with the actual couplings (``rfcheck.engine.couplings`` / ``rfcheck.engine.montecarlo``),
  z-tests at a stated false-alarm level.

Float64 faces must be within ``FP_RTOL = 1e-12`` of mpmath for d <= 1024, v <= 10.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from rfcheck import features
from rfcheck.closed_forms import simrf as S
from rfcheck.engine import couplings

FP_RTOL = 1e-12
MP_RTOL = mpmath.mpf("1e-40")
Z_CRIT = 4.0  # two-sided, false-alarm 6e-5 per comparison

DS = [2, 3, 5, 64, 257, 1024]
VS = [0.0, 1e-3, 0.3, 1.0, 3.0, 10.0]


# ------------------------------------------------------------------- printed series (mpmath)


def printed_eq23(v: float, d: int) -> mpmath.mpf:
    """Eq (23) summed until terms are below 1e-70 of the sum."""
    v = mpmath.mpf(v)
    pref = mpmath.gamma(mpmath.mpf(d) / 2) / mpmath.gamma(d)
    return pref * mpmath.nsum(
        lambda k: (
            v ** (2 * k) / (2**k * mpmath.factorial(k)) * mpmath.gamma(k + d) / mpmath.gamma(k + mpmath.mpf(d) / 2)
        ),
        [0, mpmath.inf],
    )


def printed_eq24(v: float, d: int, kmax: int = 400) -> mpmath.mpf:
    """Eq (24) double series, exactly as printed, truncated at ``kmax`` (terms < 1e-70)."""
    v = mpmath.mpf(v)
    c = -mpmath.mpf(1) / (d - 1)
    g = [mpmath.gamma(mpmath.mpf(d + p) / 2) / mpmath.gamma(mpmath.mpf(d + p + 1) / 2) for p in range(kmax + 1)]
    tot = mpmath.mpf(0)
    for k in range(kmax + 1):
        inner = mpmath.fsum(c**p * g[p] / (mpmath.factorial(k - p) * mpmath.factorial(p)) for p in range(k + 1))
        term = mpmath.gamma(k + d) / mpmath.gamma(k + mpmath.mpf(d) / 2) * v ** (2 * k) / 2**k * inner
        tot += term
        if k > 10 and abs(term) < mpmath.mpf(10) ** -70 * abs(tot):
            break
    return mpmath.sqrt(mpmath.pi) / (mpmath.gamma(mpmath.mpf(d) / 2) * 2 ** (d - 1)) * tot


def printed_eq21(v: float, d: int, c: float) -> mpmath.mpf:
    """Eq (21): phi-integral of the printed k-series (series summed inside the integral)."""
    v, c = mpmath.mpf(v), mpmath.mpf(c)

    def inner(ph: mpmath.mpf) -> mpmath.mpf:
        x = v * v * (1 + mpmath.sin(ph) * c) / 2
        return mpmath.sin(ph) ** (d - 1) * mpmath.nsum(
            lambda k: x**k / mpmath.factorial(k) * mpmath.gamma(k + d) / mpmath.gamma(k + mpmath.mpf(d) / 2),
            [0, mpmath.inf],
        )

    return mpmath.quad(inner, [0, mpmath.pi / 2, mpmath.pi]) / (2 ** (d - 1) * mpmath.gamma(mpmath.mpf(d) / 2))


def definition_eq10(v: float, d: int, c: float, n: int = 160) -> float:
    """Eq (10) by quadrature: E 0F1(; d/2; v^2 w_ij^2/4), w_ij^2 = r1^2 + r2^2 + 2 c r1 r2, r ~ chi_d."""
    lo, hi = max(0.0, math.sqrt(d) - 12.0), math.sqrt(d) + 12.0
    x, wq = np.polynomial.legendre.leggauss(n)
    r = lo + (hi - lo) * (x + 1) / 2
    wr = wq * (hi - lo) / 2 * stats.chi(d).pdf(r)
    r1, r2 = r[:, None], r[None, :]
    w2 = r1 * r1 + r2 * r2 + 2 * c * r1 * r2
    return float(wr @ special.hyp0f1(d / 2, np.maximum(w2, 0) * v * v / 4) @ wr)


def _rel(a: object, b: object) -> float:
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    return float(abs(a - b) / abs(b)) if b != 0 else float(abs(a))


# ----------------------------------------------------------- closed forms == printed series


@pytest.mark.parametrize("d", [2, 3, 4, 7, 16, 64])
@pytest.mark.parametrize("v", [0.1, 1.0, 3.0])
def test_orf_closed_form_equals_printed_eq23_at_50_digits(d: int, v: float) -> None:
    with mpmath.workdps(60):
        ref = printed_eq23(v, d)
    got = S.conformity_orf(v, d, backend="mpmath", dps=50)
    assert _rel(got, ref) < MP_RTOL


@pytest.mark.parametrize("d", [2, 3, 6, 17, 64])
@pytest.mark.parametrize("v", [0.1, 1.0, 3.0])
def test_simrf_closed_form_equals_printed_eq24_at_50_digits(d: int, v: float) -> None:
    with mpmath.workdps(90):  # the printed double series alternates (c < 0): extra digits
        ref = printed_eq24(v, d)
    got = S.conformity_simrf(v, d, backend="mpmath", dps=50)
    assert _rel(got, ref) < MP_RTOL


@pytest.mark.parametrize(("d", "c"), [(3, -0.5), (4, 0.9)])
def test_angle_closed_form_equals_printed_eq21(d: int, c: float) -> None:
    with mpmath.workdps(40):
        ref = printed_eq21(1.3, d, c)
    got = S.conformity_angle(1.3, d, c, backend="mpmath", dps=30)
    assert _rel(got, ref) < 1e-25


def test_iid_conformity_is_exp_v2() -> None:
    assert S.conformity_iid(1.7, 9) == pytest.approx(math.exp(1.7**2), rel=1e-15)


# ------------------------------------------------------------------ float64 vs mpmath


@pytest.mark.parametrize("d", DS)
def test_float64_conformities_match_mpmath(d: int) -> None:
    worst = 0.0
    for v in VS:
        for name in ("log_conformity_orf", "log_conformity_simrf"):
            f = getattr(S, name)
            got = f(v, d)
            ref = f(v, d, backend="mpmath", dps=30)
            # log values: absolute error of the log = relative error of the value
            worst = max(worst, abs(float(got) - float(ref)))
    assert worst < FP_RTOL


@pytest.mark.parametrize("d", [2, 3, 64, 1024])
def test_float64_gaps_match_mpmath_without_cancellation(d: int) -> None:
    for v in [1e-4, 1.0, 10.0]:
        for f in (S.log_prf_orthogonality_gap, S.orf_simrf_conformity_gap):
            got, ref = f(v, d), f(v, d, backend="mpmath", dps=40)
            assert abs(float(got) - float(ref)) < FP_RTOL, (f.__name__, v)
    # the naive difference would have lost every digit here; the series keeps them
    naive = S.conformity_iid(1e-4, 64) - S.conformity_orf(1e-4, 64)
    exact = math.exp(float(S.log_prf_orthogonality_gap(1e-4, 64, backend="mpmath")))
    assert abs(naive - exact) / exact > 1e-3
    assert math.exp(S.log_prf_orthogonality_gap(1e-4, 64)) == pytest.approx(exact, rel=FP_RTOL)


def test_vectorised_faces_broadcast() -> None:
    v = np.array([0.5, 1.0, 2.0])
    d = np.array([[3], [64]])
    out = S.log_conformity_simrf(v, d)
    assert out.shape == (2, 3)
    assert out[1, 2] == pytest.approx(S.log_conformity_simrf(2.0, 64), rel=1e-15)


# ------------------------------------------------------------- definition eq (10) by quadrature


@pytest.mark.parametrize("d", [2, 3, 8, 32])
@pytest.mark.parametrize("v", [0.5, 1.5])
def test_conformities_equal_definition_quadrature(d: int, v: float) -> None:
    for c, f in ((0.0, S.conformity_orf), (-1 / (d - 1), S.conformity_simrf)):
        assert f(v, d) == pytest.approx(definition_eq10(v, d, c), rel=1e-10)
    assert S.conformity_angle(v, d, 0.4) == pytest.approx(definition_eq10(v, d, 0.4), rel=1e-10)


# ----------------------------------------------------------------------------- pdfs


@pytest.mark.parametrize("d", [3, 8, 64])
def test_pdfs_normalised_and_give_conformity(d: int) -> None:
    w = np.linspace(1e-9, 4 * math.sqrt(d) + 20, 4001)
    for c in (0.0, -1 / (d - 1), 0.3):
        p = S.pdf_wij_angle(w, d, c)
        assert np.trapezoid(p, w) == pytest.approx(1.0, abs=1e-8)
        rho = np.trapezoid(p * S.conformity_kernel(w, 0.7, d), w)
        assert rho == pytest.approx(S.conformity_angle(0.7, d, c), rel=1e-7)
    assert np.trapezoid(S.pdf_wij_iid(w, d) * S.conformity_kernel(w, 0.7, d), w) == pytest.approx(
        math.exp(0.49), rel=1e-7
    )


@pytest.mark.parametrize("d", [2, 5, 64])
def test_eq58_chi2d_is_eq20_at_right_angle(d: int) -> None:
    for w in (0.3, 2.0, 9.0):
        ref = S.pdf_wij_angle(w, d, 0.0, backend="mpmath", dps=30)
        assert _rel(S.pdf_wij_orf(w, d), ref) < 1e-12
        assert S.pdf_wij_orf(w, d) == pytest.approx(stats.chi(2 * d).pdf(w), rel=1e-12)
        assert S.pdf_wij_iid(w, d) == pytest.approx(stats.chi(d, scale=math.sqrt(2)).pdf(w), rel=1e-12)


# ------------------------------------------------------------------- Monte Carlo (couplings)


@pytest.mark.parametrize(
    ("coupling", "fn"), [("orf", S.conformity_orf), ("simrf", S.conformity_simrf), ("iid", S.conformity_iid)]
)
def test_conformity_estimand_from_coupled_ensembles(coupling: str, fn: object) -> None:
    d, v, n = 6, 0.8, 2000
    ws = []
    for s in range(n):
        W = couplings.sample_ensemble(coupling, d, d, seed=1000 + s)
        sums = W[:, None, :] + W[None, :, :]
        iu = ~np.eye(d, dtype=bool)
        ws.append(np.linalg.norm(sums, axis=2)[iu])
    mean, se = S.conformity_estimate(np.array(ws), v, d)
    exact = fn(v, d)
    assert abs(mean - exact) < Z_CRIT * se
    if coupling == "simrf":  # power: the ORF value is rejected by the same test
        assert abs(mean - S.conformity_orf(v, d)) > Z_CRIT * se


@pytest.mark.parametrize("coupling", ["iid", "orf", "simrf"])
@pytest.mark.parametrize(("m", "d"), [(4, 4), (10, 4)])
def test_prf_mse_against_engine(coupling: str, m: int, d: int) -> None:
    from rfcheck.engine.montecarlo import simulate

    x = np.zeros((1, d))
    y = np.zeros((1, d))
    x[0, 0], y[0, 0], y[0, 1] = 0.35, 0.2, 0.25
    prod = features.positive_product(x, y)
    est = simulate(prod, m, 200_000, coupling=coupling, path="projection", seed=7)[0]
    e = (est - prod.target[0]) ** 2
    v = float(np.linalg.norm(x + y))
    sq = float(np.sum(x * x) + np.sum(y * y))
    se = e.std(ddof=1) / math.sqrt(e.size)
    assert abs(e.mean() - S.prf_mse(v, d, m, sq, coupling)) < Z_CRIT * se
    if coupling == "simrf":  # power: distinguishes SimRF from ORF at this size
        assert abs(e.mean() - S.prf_mse(v, d, m, sq, "orf")) > Z_CRIT * se


# --------------------------------------------------------------------------- MSE / gaps


@given(v=st.floats(1e-3, 8.0), d=st.integers(2, 300))
@settings(max_examples=25, deadline=None, derandomize=True, database=None)
def test_conformity_ordering(v: float, d: int) -> None:
    """Cor 3.3 / Cor 4.4: rho_SimRF < rho_ORF < rho_IID for v > 0 (gaps positive)."""
    assert np.isfinite(S.orf_simrf_conformity_gap(v, d))
    assert np.isfinite(S.log_prf_orthogonality_gap(v, d))
    assert S.log_conformity_simrf(v, d) <= S.log_conformity_orf(v, d) <= S.log_conformity_iid(v, d)


def test_mse_from_conformity_matches_prf_mse() -> None:
    for c in ("iid", "orf", "simrf"):
        rho = S.pair_conformity(1.2, 16, c)
        assert S.prf_mse_from_conformity(rho, 1.2, 16, 0.4) == pytest.approx(S.prf_mse(1.2, 16, 16, 0.4, c), rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 64, 1024])
def test_prf_mse_float64_vs_mpmath(d: int) -> None:
    for v in (1e-3, 0.3, 2.0):
        for c in ("iid", "orf", "simrf"):
            got, ref = S.prf_mse(v, d, d, 0.1, c), S.prf_mse(v, d, d, 0.1, c, backend="mpmath", dps=30)
            assert _rel(got, ref) < FP_RTOL, (v, c)


def test_small_v_prefactor() -> None:
    d = 64
    with mpmath.workdps(50):
        g = mpmath.gamma
        printed = 1 - mpmath.sqrt(mpmath.pi) * g(d + 1) * g(mpmath.mpf(d) / 2 + mpmath.mpf(1) / 2) / (
            g(mpmath.mpf(d) / 2) * g(mpmath.mpf(d) / 2 + 1) ** 2 * 2**d
        )
    assert _rel(S.small_v_prefactor_simrf(d, backend="mpmath"), printed) < MP_RTOL
    assert round(S.small_v_prefactor_simrf(64), 4) == 0.0078
    for dd in (2, 3, 31, 48, 1024, 10**6):
        assert _rel(S.small_v_prefactor_simrf(dd), S.small_v_prefactor_simrf(dd, backend="mpmath")) < FP_RTOL
    # it is the v^2 coefficient of m e^{2(x^2+y^2)} MSE_SimRF at m = d
    v = 1e-4
    assert S.prf_mse(v, d, d, 0.0, "simrf") * d / v**2 == pytest.approx(S.small_v_prefactor_simrf(d), rel=1e-3)
    assert S.small_v_mse_coefficient(d, d) == pytest.approx(S.small_v_prefactor_simrf(d), rel=1e-14)


def test_rff_gap_and_ratios() -> None:
    # float64 face vs mpmath, including the ill-conditioned large-z region
    for d in (3, 64, 1024):
        for z in (0.05, 1.0, 4.0, 9.0):
            got = S.rff_orthogonality_gap(z, d, min(d, 8))
            ref = S.rff_orthogonality_gap(z, d, min(d, 8), backend="mpmath", dps=30)
            assert _rel(got, ref) < FP_RTOL
    # Cor 4.6: d (1 - ratio)/(m - 1) -> e^{-z^2} z^4 / (1 - e^{-z^2})^2
    z, m = 1.1, 4
    lead = math.exp(-z * z) * z**4 / (-math.expm1(-z * z)) ** 2
    errs = [abs(d * (1 - S.rff_mse_ratio_orf_iid(z, d, m)) / (m - 1) - lead) for d in (256, 1024, 4096)]
    assert errs[1] < errs[0] / 3 and errs[2] < errs[1] / 3  # O(1/d) convergence


def test_rff_mse_against_engine() -> None:
    from rfcheck.engine.montecarlo import simulate

    d, m = 4, 4
    x = np.zeros((1, d))
    y = np.zeros((1, d))
    x[0, 0], y[0, 1] = 0.9, 0.6
    prod = features.trig_product(x, y)
    z = float(np.linalg.norm(x - y))
    for c in ("iid", "orf"):
        est = simulate(prod, m, 200_000, coupling=c, path="projection", seed=11)[0]
        e = (est - prod.target[0]) ** 2
        assert abs(e.mean() - S.rff_mse(z, d, m, c)) < Z_CRIT * e.std(ddof=1) / math.sqrt(e.size)


def test_lemma_a1_bound() -> None:
    rng = np.random.default_rng(3)
    d, v, w = 5, 1.3, 2.0
    bound = S.equal_norm_conformity_bound(v, w, d, d)
    simplex = np.array(couplings.sample_ensemble("simrf", d, d, seed=1))
    assert S.equal_norm_conformity(v, w, d, simplex) == pytest.approx(bound, rel=1e-12)
    for _ in range(50):
        assert S.equal_norm_conformity(v, w, d, rng.standard_normal((d, d))) >= bound * (1 - 1e-14)


def test_symbolic_faces() -> None:
    import sympy

    v, d = sympy.Rational(3, 2), 6
    expr = S.log_conformity_orf.symbolic(v, d)
    assert abs(float(sympy.N(expr, 30)) - S.log_conformity_orf(1.5, 6)) < 1e-13
    assert abs(float(sympy.N(S.small_v_prefactor_simrf.symbolic(64), 30)) - S.small_v_prefactor_simrf(64)) < 1e-15
    assert abs(float(sympy.N(S.pdf_wij_orf.symbolic(sympy.Rational(3), 5), 30)) - S.pdf_wij_orf(3.0, 5)) < 1e-15


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("call", "msg"),
    [
        (lambda: S.conformity_simrf(1.0, 1), "d must be an integer >= 2"),
        (lambda: S.conformity_orf(-1.0, 4), "v must be >= 0"),
        (lambda: S.conformity_orf(float("nan"), 4), "v must be finite"),
        (lambda: S.conformity_angle(1.0, 4, 1.5), "cos_theta must lie in"),
        (lambda: S.prf_mse(1.0, 4, 0, 0.1, "orf"), "m must be an integer >= 1"),
        (lambda: S.prf_mse(1.0, 4, 4, 0.1, "hd"), "coupling must be one of"),
        (lambda: S.prf_orthogonality_gap(1.0, 4, 5, 0.1), "m <= d"),
        (lambda: S.rff_mse_ratio_orf_iid(0.0, 4, 2), "z > 0"),
        (lambda: S.conformity_orf(1.0, 2.5), "d must be an integer"),
    ],
)
def test_bad_input_raises(call: object, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        call()  # type: ignore[operator]

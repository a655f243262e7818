"""Regression tests for the numerical defects found by the audit of ``rfcheck.closed_forms.simrf``.

Every value test compares with an independent mpmath reference at >= 50 digits, computed here
from the defining formula or the paper's printed series (eq 23, 24) -- never from the face
being fixed.  Each test failed on the code before the fix.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rfcheck.backends import MP
from rfcheck.claims.simrf import printed_eq23_ctx, printed_eq24
from rfcheck.closed_forms import simrf as S

# ----------------------------------------------------------------------- references (mpmath)


# eq (23) and eq (24) exactly as printed, summed in mpmath at the ambient precision (the claims' transcriptions)
def ref_rho_orf(v: object, d: int) -> mpmath.mpf:
    """Eq (23) as printed (the claim's transcription, mpmath face)."""
    return printed_eq23_ctx(MP, {"v": mpmath.mpf(v), "d": d})


def ref_rho_simrf(v: object, d: int) -> mpmath.mpf:
    """Eq (24) as printed (the claim's transcription, mpmath face)."""
    return printed_eq24(MP, {"v": mpmath.mpf(v), "d": d})


def ref_mse(v: object, m: int, sq: object, rho: object) -> mpmath.mpf:
    """Eq (11) for ``m <= d`` (``m(m-1)`` coupled ordered pairs; ``rho = e^{v^2}`` for iid)."""
    v2 = mpmath.mpf(v) ** 2
    e = mpmath.exp(v2)
    return mpmath.exp(-2 * mpmath.mpf(sq)) / m * (e * (e - 1) - (m - 1) * (e - rho))


def rel(a: object, b: object) -> float:
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    return float(abs(a - b) / abs(b))


# ------------------------------------------------------------------ 1: prf_mse in log space


def test_prf_mse_orf_large_v_and_norms_is_finite() -> None:
    with mpmath.workdps(60):
        ref = ref_mse(19, 4, mpmath.mpf("180.5"), ref_rho_orf(19, 4))
    got = S.prf_mse(19.0, 4, 4, 180.5, "orf")
    assert math.isfinite(got)
    assert rel(got, ref) < 1e-12


def test_prf_mse_iid_huge_intermediates_fit() -> None:
    # e^{v^2} expm1(v^2) = e^{1800} overflows, e^{-1120} underflows, the product fits
    with mpmath.workdps(60):
        ref = ref_mse(30, 4, 560, mpmath.exp(900))
    assert rel(S.prf_mse(30.0, 4, 4, 560.0, "iid"), ref) < 1e-12


def test_prf_mse_outside_float64_raises() -> None:
    with pytest.raises(ValueError, match="float64 range"):
        S.prf_mse(30.0, 4, 4, 450.0, "iid")


# --------------------------------------------------------------- 2: refinement at small v


@pytest.mark.parametrize(("v", "d", "dps"), [(1e-20, 64, 120), (1e-100, 64, 450), (1e-3, 64, 60)])
def test_prf_mse_refined_small_v(v: float, d: int, dps: int) -> None:
    # e^{v^2} - rho cancels ~ -log10(v^2) digits: the reference runs at dps digits
    with mpmath.workdps(dps):
        ref = ref_mse(v, d, 0, ref_rho_simrf(v, d))
    assert rel(S.prf_mse(v, d, d, 0.0, "simrf"), ref) < 1e-12


# ------------------------------------------------------------- 3: mpmath face honours dps


@pytest.mark.parametrize(("v", "d", "sq"), [(0.5, 4, 0.3), (0.1, 8, 0.0), (1e-20, 8, 0.1)])
def test_prf_mse_mpmath_face_honours_dps(v: float, d: int, sq: float) -> None:
    got = S.prf_mse(v, d, d, sq, "simrf", backend="mpmath", dps=50)  # at the default ambient precision
    with mpmath.workdps(120):
        ref = ref_mse(v, d, sq, ref_rho_simrf(v, d))
        assert rel(got, ref) < 1e-47


# ------------------------------------------------ 4: mpmath orthogonality gap without cancellation


@pytest.mark.parametrize("v", [1e-13, 1e-10, 0.3])
def test_log_prf_orthogonality_gap_mpmath_small_v(v: float) -> None:
    with mpmath.workdps(200):  # the defining difference loses ~ -4 log10(v) digits
        ref = mpmath.log(mpmath.exp(mpmath.mpf(v) ** 2) - ref_rho_orf(v, 4))
        got = S.log_prf_orthogonality_gap(v, 4, backend="mpmath", dps=50)
        assert rel(got, ref) < 1e-47


# --------------------------------------------------------------- 5: RFF ratios at small z


def ref_rff_ratio(z: str, d: int, m: int) -> mpmath.mpf:
    z2 = mpmath.mpf(z) ** 2
    g = mpmath.exp(-z2) - mpmath.hyp1f1(d, mpmath.mpf(d) / 2, -z2 / 2)
    return 1 - 2 * (m - 1) * g / (1 - mpmath.exp(-z2)) ** 2


@pytest.mark.parametrize(("z", "d", "m"), [("1e-100", 4, 2), ("1e-80", 100, 100), ("1e-9", 16, 7)])
def test_rff_mse_ratio_orf_iid_small_z(z: str, d: int, m: int) -> None:
    with mpmath.workdps(500):  # G ~ z^4 cancels ~ -4 log10(z) digits
        ref = ref_rff_ratio(z, d, m)
    assert rel(S.rff_mse_ratio_orf_iid(float(z), d, m), ref) < 1e-12


def test_rff_mse_ratio_asymptotic_at_and_near_zero() -> None:
    assert S.rff_mse_ratio_asymptotic(0.0, 4, 2) == 0.75
    assert S.rff_mse_ratio_asymptotic(0.0, 4, 2, backend="mpmath") == mpmath.mpf("0.75")
    z = 1e-100  # e^{-z^2} z^4 / (d expm1(-z^2)^2) -> 1/d: ratio 1 - (m-1)/d
    with mpmath.workdps(60):
        z2 = mpmath.mpf(z) ** 2
        ref = 1 - 3 * mpmath.exp(-z2) * z2**2 / (8 * mpmath.expm1(-z2) ** 2)
    assert rel(S.rff_mse_ratio_asymptotic(z, 8, 4), ref) < 1e-15
    assert np.all(np.isfinite(S.rff_mse_ratio_asymptotic(np.array([0.0, 1e-200, 0.5]), 8, 4)))


# ------------------------------------------------------------------- 6: m <= d of sec 5.1


def test_small_v_mse_coefficient_needs_m_le_d() -> None:
    with pytest.raises(ValueError, match="m <= d"):
        S.small_v_mse_coefficient(3, 5)
    with pytest.raises(ValueError, match="m <= d"):
        S.small_v_mse_coefficient(3, 5, backend="mpmath")


# --------------------------------------------------------------------- 7: pdf at w = 0


def test_pdf_wij_iid_at_zero() -> None:
    with mpmath.workdps(50):
        ref = 1 / mpmath.sqrt(mpmath.pi)  # sqrt(2) chi_1 = |N(0, 2)|
        assert rel(S.pdf_wij_iid(0.0, 1, backend="mpmath", dps=50), ref) < 1e-48
    assert rel(S.pdf_wij_iid(0.0, 1), ref) < 1e-15
    assert S.pdf_wij_iid(0.0, 3) == 0.0


# ------------------------------------------------------ 8: small logarithms keep their digits


@pytest.mark.parametrize("v", [1e-3, 1e-6, 1e-8])
def test_log_conformity_orf_small_v(v: float) -> None:
    with mpmath.workdps(80):
        ref = mpmath.log(ref_rho_orf(v, 4))
    assert rel(S.log_conformity_orf(v, 4), ref) < 1e-13


@pytest.mark.parametrize(("v", "d"), [(1e-3, 3), (1e-6, 4), (1e-8, 64)])
def test_log_conformity_simrf_small_v(v: float, d: int) -> None:
    with mpmath.workdps(80):
        ref = mpmath.log(ref_rho_simrf(v, d))
    assert rel(float(S.log_conformity_simrf(v, d)), ref) < 1e-13


@pytest.mark.parametrize("v", [1e-4, 1e-9])
def test_log_conformity_kernel_small_v(v: float) -> None:
    with mpmath.workdps(80):
        x = mpmath.mpf(v) ** 2 / 4  # w = 1; 0F1(; 3/2; x) = sum x^k / (k! (3/2)_k)
        ref = mpmath.log(mpmath.nsum(lambda k: x**k / (mpmath.factorial(k) * mpmath.rf(1.5, k)), [0, mpmath.inf]))
    assert rel(S.log_conformity_kernel(1.0, v, 3), ref) < 1e-14


# ---------------------------------------------------------------- 9: Lemma A.1 bound


def test_equal_norm_conformity_bound_outside_float64_raises() -> None:
    with pytest.raises(ValueError, match="float64 range"):
        S.equal_norm_conformity_bound(30.0, 30.0, 2, 3)
    assert mpmath.isfinite(S.equal_norm_conformity_bound(30.0, 30.0, 2, 3, backend="mpmath"))


@pytest.mark.parametrize("backend", ["float64", "mpmath"])
def test_equal_norm_conformity_bound_needs_m_ge_2(backend: str) -> None:
    with pytest.raises(ValueError, match="m must be an integer >= 2"):
        S.equal_norm_conformity_bound(1.0, 1.0, 2, 1, backend=backend)


# ---------------------------------------------------------------------- 10: validation


@pytest.mark.parametrize(
    "call",
    [
        lambda: S.log_conformity_orf(np.array([1 + 1j]), 3),
        lambda: S.log_conformity_orf(1 + 0j, 3),
        lambda: S.log_conformity_angle(1.0, 3, np.array([0.5 + 0.1j])),
        lambda: S.prf_mse(1.0, 4, 4, np.array([0.1 + 1j]), "orf"),
    ],
)
def test_complex_input_rejected(call: object) -> None:
    with pytest.raises(ValueError, match="must be real"):
        call()  # type: ignore[operator]


def test_rff_orthogonality_gap_needs_m_le_d() -> None:
    with pytest.raises(ValueError, match="m <= d"):
        S.rff_orthogonality_gap(1.0, 4, 5)
    with pytest.raises(ValueError, match="m <= d"):
        S.prf_orthogonality_gap(1.0, 4, 5, 0.0)

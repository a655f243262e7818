"""SimRF ledger: the refuted printed forms stay refuted at their counterexamples, the correct
ones hold there, and the corrections named in the ledger are what rfcheck computes."""

from __future__ import annotations

import math

import mpmath
import pytest

from rfcheck import verify
from rfcheck.backends import MP
from rfcheck.claims import simrf as C
from rfcheck.closed_forms import simrf as cf


@pytest.mark.parametrize(
    ("cid", "at", "verdict"),
    [
        ("simrf.cor4.4", {"v": 3.0, "d": 64, "m": 2, "sq": 0.0}, "REFUTED"),
        ("simrf.eq69.line1", {"v": 3.0, "d": 64, "m": 2, "sq": 0.0}, "HOLDS"),
        ("simrf.eq77", {"z": 1.0, "d": 2, "m": 2}, "REFUTED"),
        ("simrf.eq56", {"w": 0.05, "d": 2, "cos": -0.9}, "REFUTED"),
        ("simrf.lem4.2.pdf", {"w": 0.05, "d": 2, "cos": -0.9}, "HOLDS"),
        ("simrf.thm4.3.simrf", {"v": 2.0, "d": 7}, "HOLDS"),
    ],
)
def test_verdicts_at_points(cid: str, at: dict, verdict: str) -> None:
    assert verify.evaluate_at(cid, at).verdict == verdict


def test_corrections_match_closed_forms() -> None:
    # Cor 4.4 corrected (eq 69) equals the cancellation-free closed form
    with mpmath.workdps(30):
        p = {"v": 1.3, "d": 16, "m": 8, "sq": 0.2}
        val = C.printed_eq69_line1_ctx(MP, {**p, "v": mpmath.mpf(p["v"]), "sq": mpmath.mpf(p["sq"])})
    assert float(val) == pytest.approx(cf.prf_orthogonality_gap(1.3, 16, 8, 0.2), rel=1e-12)
    # eq (77) with (1 - e^{-z^2})^2 is the exact ratio
    with mpmath.workdps(30):
        ref, _ = C.ref.rff_mse_ratio_quadrature(1.0, 2, 2, 30)
    assert float(ref) == pytest.approx(cf.rff_mse_ratio_orf_iid(1.0, 2, 2), rel=1e-10)
    # printed eq (25) bracket is e^{v^2} - 1F1(d; d/2; v^2) < 0
    with mpmath.workdps(30):
        b = C.printed_eq25_bracket(MP, mpmath.mpf(1), 8)
    assert float(b) == pytest.approx(math.exp(1) - float(mpmath.hyp1f1(8, 4, 1)), rel=1e-12)
    assert b < 0


def test_pair_monte_carlo_check_has_power() -> None:
    """The thm4.3 Monte Carlo reference separates SimRF from ORF pairs (a wrong printed value is seen)."""
    import numpy as np

    from rfcheck.engine.couplings import sample_projection
    from rfcheck.stats import estimate_mean

    d, v = 3, 0.8
    t, _ = sample_projection("simrf", 2, d, 200_000, seed=5, need_sq=False)
    est = estimate_mean(np.exp(v * (t[:, 0] + t[:, 1])))
    with mpmath.workdps(30):
        simrf_val = float(C.printed_eq24(MP, {"v": v, "d": d}))
        orf_val = float(C.printed_eq23_ctx(MP, {"v": mpmath.mpf(v), "d": d}))
    assert abs(est.value - simrf_val) < 4.5 * est.se
    assert abs(est.value - orf_val) > 4.5 * est.se


@pytest.mark.parametrize(("w", "d", "c"), [(3.0, 3, 0.5), (2.0, 4, -0.5), (0.7, 6, 0.9), (5.0, 16, -0.3)])
def test_eq56_correction_needs_both_fixes(w: float, d: int, c: float) -> None:
    """The correction named in simrf.eq56: with the Jacobian w/s *and* the square root in the
    second p_chi argument, the first expression of eq (56) equals eq (20) (reference: the
    claim's change-of-variables quadrature, 1e-20 at 30 digits); the printed form and the
    square-root-only fix do not."""
    p = {"w": w, "d": d, "cos": c}
    with mpmath.workdps(30):
        ref, _ = C.ref.pdf_angle_change_of_variables_with_error(w, d, c, 30)
        fixed = C.printed_eq56(MP, p, corrected=True)
        printed = C.printed_eq56(MP, p)
        assert abs(fixed - ref) <= 1e-20 * abs(ref)
        assert abs(printed - ref) > 1e-3 * abs(ref)
        s = lambda ph: 1 + mpmath.sin(2 * ph) * c  # noqa: E731
        pchi = lambda r: r ** (d - 1) * mpmath.exp(-r * r / 2) / (2 ** (mpmath.mpf(d) / 2 - 1)  # noqa: E731
                                                                  * mpmath.gamma(mpmath.mpf(d) / 2))
        sqrt_only = mpmath.quad(lambda ph: w / mpmath.sqrt(s(ph)) * pchi(w * mpmath.cos(ph) / mpmath.sqrt(s(ph)))
                                * pchi(w * mpmath.sin(ph) / mpmath.sqrt(s(ph))), [0, mpmath.pi / 2])
        assert abs(sqrt_only - ref) > 1e-3 * abs(ref)

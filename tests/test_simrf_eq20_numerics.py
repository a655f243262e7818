"""Numerics of SimRF eq (20) (claim simrf.lem4.2.pdf): the printed integral and its reference.

``printed_eq20`` (the printed phi-integral in mpmath) must be accurate to the working precision where
its integrand is sharp (d = 64, cos theta = -0.95: a fixed 32-panel Gauss-Legendre rule gave 8 digits
there); ``pdf_angle_change_of_variables_with_error`` must carry an error bar that covers its actual
error (at w = 30, d = 2, cos theta = 0.95 the unsubstituted quadrature was off by 8e-6 relative with
an error bar of 1e-27 relative).  Arb's rigorous integrals (``printed_eq20`` on balls,
``pdf_angle_change_of_variables_ball``) and the closed form (a different integral) are the
independent values.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.backends import MP
from rfcheck.claims.simrf import on_balls, printed_eq20
from rfcheck.closed_forms import simrf as cf
from rfcheck.references import simrf as ref

MF = mpmath.mpf


def _mid(ball: arb) -> mpmath.mpf:
    return MF(ball.mid().str(80, radius=False))


def _rad(ball: arb) -> mpmath.mpf:
    return MF(ball.rad().str(10, radius=False))


def _points(n: int, seed: int) -> list[tuple[float, int, float]]:
    rng = np.random.default_rng(seed)
    return [(float(rng.uniform(0.05, 30.0)), int(rng.integers(2, 65)), float(rng.uniform(-0.95, 0.95)))
            for _ in range(n)]


#: the reviewer's bad points, the corners of simrf.lem4.2.pdf's domain, random points
POINTS = [(9.0, 64, -0.95), (30.0, 2, 0.95), (20.0, 64, -0.95), (30.0, 64, 0.95), (0.05, 64, -0.95),
          (0.05, 2, 0.95), *_points(4, 20261127)]


#: (point, dps) pairs: every point at the ledger's 30 digits, the bad point also at 20 and 50
CASES = [(*pt, 30) for pt in POINTS] + [(9.0, 64, -0.95, 20), (9.0, 64, -0.95, 50)]


@pytest.mark.parametrize("w,d,c,dps", CASES)
def test_printed_eq20_is_accurate_to_the_working_precision(w: float, d: int, c: float, dps: int) -> None:
    p = {"w": w, "d": d, "cos": c}
    with mpmath.workdps(dps):
        v = printed_eq20(MP, p)
    # the working precision itself (the check's tolerance is 10^(5 - dps)), against the closed form
    # (a t = sin(2 phi) average: a different integral) at 60 digits
    exact = cf.pdf_wij_angle(w, d, c, backend="mpmath", dps=60)
    bits = int(dps * 3.33) + 30
    with workprec(bits), mpmath.workdps(80):
        assert abs(v - exact) <= MF(10) ** (-dps) * abs(exact)
        # and inside Arb's rigorous integral of the printed integrand (tight where Arb resolves it)
        ball = on_balls(printed_eq20)(p, bits)
        assert abs(v - _mid(ball)) <= MF(10) ** (-dps) * abs(v) + _rad(ball)
        if (w, d, c) == (9.0, 64, -0.95):
            assert _rad(ball) < MF(10) ** -(dps + 3) * abs(v)


def test_printed_eq20_at_the_bad_point_is_the_closed_form() -> None:
    """(w, d, cos) = (9, 64, -0.95): the fixed rule gave 4.93465812e-17, a mismatch score of 13 at the
    check's tolerance; the exact value is 4.934657983891815...e-17."""
    p = {"w": 9.0, "d": 64, "cos": -0.95}
    with mpmath.workdps(30):
        v = printed_eq20(MP, p)
    exact = cf.pdf_wij_angle(9.0, 64, -0.95, backend="mpmath", dps=50)
    with mpmath.workdps(50):
        assert abs(v - exact) <= MF(10) ** -25 * abs(exact)
        assert abs(MF("4.93465812e-17") - exact) > MF(10) ** -25 * abs(exact) * 10**13  # the old value was off


@pytest.mark.parametrize("w,d,c,dps", [(*pt, 30) for pt in POINTS] + [(30.0, 2, 0.95, 20)])
def test_pdf_angle_reference_is_within_its_error_bar(w: float, d: int, c: float, dps: int) -> None:
    val, err = ref.pdf_angle_change_of_variables_with_error(w, d, c, dps)
    exact = cf.pdf_wij_angle(w, d, c, backend="mpmath", dps=60)
    bits = int(dps * 3.33) + 30
    with workprec(bits), mpmath.workdps(80):
        assert abs(val - exact) <= err
        assert err < MF(10) ** (5 - dps) * abs(val)  # and the bar is tight enough for the check's tolerance
        ball = ref.pdf_angle_change_of_variables_ball(w, d, c, bits)
        assert abs(val - _mid(ball)) <= err + _rad(ball)
        if (w, d, c) == (30.0, 2, 0.95):
            assert _rad(ball) < MF(10) ** -(dps + 3) * abs(val)


def test_pdf_angle_reference_at_the_endpoint_singularity_point() -> None:
    """(w, d, cos) = (30, 2, 0.95): the 1/sqrt end-point singularity in r_1 cost the unsubstituted
    quadrature 5 digits (8e-6 relative) under a 1e-27 error bar; r_1 = T sin(alpha) removes it."""
    val, err = ref.pdf_angle_change_of_variables_with_error(30.0, 2, 0.95, 30)
    exact = cf.pdf_wij_angle(30.0, 2, 0.95, backend="mpmath", dps=50)
    with mpmath.workdps(50):
        assert abs(val - exact) <= err
        assert abs(val - exact) <= MF(10) ** -27 * abs(exact)
        with mpmath.workdps(30):
            plain = ref.pdf_angle_change_of_variables(30.0, 2, 0.95)
        assert abs(plain - exact) <= MF(10) ** -27 * abs(exact)


def test_panel_quad_scales_tiny_integrands() -> None:
    """A narrow Gaussian of height 1e-300: the tanh-sinh stop is absolute, the result must be relative-accurate."""
    with mpmath.workdps(30):
        k = MF(10) ** 4
        val, err = ref.panel_quad(lambda x: MF(10) ** -300 * mpmath.exp(-k * (x - MF("0.3")) ** 2),
                                  mpmath.linspace(0, 1, 5), MF(10) ** -28)
        exact = MF(10) ** -300 * mpmath.sqrt(mpmath.pi / k)
        assert abs(val - exact) <= MF(10) ** -27 * exact
        assert err <= MF(10) ** -28 * abs(val)


@pytest.mark.parametrize(("w", "d"), [(40.0, 256), (40.0, 128), (0.5, 2), (3.0, 8), (12.0, 64)])
def test_chi2d_cdf_derivative_keeps_its_digits_where_the_cdf_is_near_1(w, d):
    """The chi_2d density as the derivative of its CDF: at (40, 256) the density is 8.5e-111 and the
    difference quotient of ``P`` (within 1e-111 of 1) was exactly 0 with error bar 0."""
    from rfcheck.references.simrf import cdf_derivative_chi2d, cdf_derivative_sqrt2_chi

    with mpmath.workdps(60):
        wm = mpmath.mpf(w)
        chi2d = wm ** (2 * d - 1) * mpmath.exp(-wm * wm / 2) / (2 ** (d - 1) * mpmath.gamma(d))
        sqrt2chi = wm ** (d - 1) * mpmath.exp(-wm * wm / 4) / (2 ** (d - 1) * mpmath.gamma(mpmath.mpf(d) / 2))
    for got, exact in ((cdf_derivative_chi2d(w, d, 30), chi2d), (cdf_derivative_sqrt2_chi(w, d, 30), sqrt2chi)):
        value, err = got
        assert value > 0
        assert abs(value - exact) <= err, (value, exact, err)
        assert err <= mpmath.mpf(10) ** -25 * exact

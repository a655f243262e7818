"""Library functions of rfcheck.references.simrf used by the SimRF claims (enclosures of printed series,
sums and integrals; MSE references): values against independent 50-digit mpmath computations, balls
that contain them, planted wrong values that they exclude, and properties."""

from __future__ import annotations

import mpmath
import pytest
from flint import arb, fmpq

from rfcheck.arb_backend import workprec
from rfcheck.backends import MP
from rfcheck.claims import simrf as CS
from rfcheck.closed_forms import simrf as cf
from rfcheck.references import simrf as ref

MF = mpmath.mpf
BITS = 120


def _contains(ball: arb, x: mpmath.mpf) -> bool:
    """Whether ``ball`` contains the 110-digit decimal of ``x`` (read at 400 bits)."""
    with workprec(400):
        return bool(ball.contains(arb(mpmath.nstr(x, 110, strip_zeros=False))))


def _off(x: mpmath.mpf, rel: str) -> mpmath.mpf:
    """``x`` moved by ``rel`` relative, formed at 110 digits (a planted wrong value)."""
    with mpmath.workdps(110):
        return x * (1 + MF(rel)) if x else MF(rel)


def _rho_simrf(v: float, d: int) -> mpmath.mpf:
    """rho_SimRF = E_t 1F1(d; d/2; v^2 (1 + c t)/2), t = sin(phi) under the sin^{d-1} law, c = -1/(d-1)."""
    c, b = -MF(1) / (d - 1), MF(d) / 2
    norm = mpmath.sqrt(mpmath.pi) * mpmath.gamma(b) / mpmath.gamma(b + MF(1) / 2)
    x = MF(v) ** 2 / 2
    avg = mpmath.quad(lambda ph: mpmath.sin(ph) ** (d - 1) * mpmath.hyp1f1(d, b, x * (1 + c * mpmath.sin(ph))),
                      [0, mpmath.pi / 2, mpmath.pi])
    return avg / norm


def _e_ort(z: float, d: int) -> mpmath.mpf:
    """E cos(w_ij . z) for an ORF pair: 1F1(d; d/2; -z^2/2) (eq (76))."""
    return mpmath.hyp1f1(d, MF(d) / 2, -MF(z) ** 2 / 2)


@pytest.mark.parametrize("w,d,c", [(1.5, 3, 0.0), (3.0, 3, 0.5), (0.7, 8, -0.6), (6.0, 16, 0.9)])
def test_printed_eq20_on_mpmath_and_balls(w: float, d: int, c: float) -> None:
    """Eq (20) written once (claims.simrf.printed_eq20): mpmath and ball values of the printed integral."""
    from rfcheck.claims.simrf import on_balls, printed_eq20

    p = {"w": w, "d": d, "cos": c}
    with mpmath.workdps(50):
        exact = cf.pdf_wij_angle(w, d, c, backend="mpmath", dps=50)
        if c == 0:  # the chi_{2d}-type law of eq (58), written out
            direct = MF(w) ** (2 * d - 1) * mpmath.exp(-MF(w) ** 2 / 2) / (2 ** (d - 1) * mpmath.gamma(d))
            assert abs(exact - direct) < MF(10) ** -45 * direct
        assert abs(printed_eq20(MP, p) - exact) < MF(10) ** -45 * exact
    ball = on_balls(printed_eq20)(p, BITS)
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-25"))


@pytest.mark.parametrize("v,d,c", [(1.0, 4, 0.0), (2.0, 3, -0.5), (0.5, 10, 0.8)])
def test_eq21_conformity_integral_ball(v: float, d: int, c: float) -> None:
    with mpmath.workdps(50):
        exact = cf.conformity_angle(v, d, c, backend="mpmath", dps=50)
        if c == 0:
            assert abs(exact - mpmath.hyp1f1(d, MF(d) / 2, MF(v) ** 2 / 2)) < MF(10) ** -45 * exact
    with workprec(BITS):
        ball = CS.on_balls(CS.printed_eq21)({"v": v, "d": d, "cos": c}, BITS)
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-25"))


@pytest.mark.parametrize("v,d", [(0.0, 2), (0.3, 2), (1.0, 3), (2.5, 16), (4.0, 5)])
def test_simrf_double_series_ball(v: float, d: int) -> None:
    with mpmath.workdps(50):
        exact = _rho_simrf(v, d)
    with workprec(BITS):
        ball = CS.on_balls(CS.printed_eq24)({"v": v, "d": d}, BITS)
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-25"))
    assert ball.rad() < 1e-30 * abs(ball.mid())


@pytest.mark.parametrize("v,d,m", [(0.5, 2, 2), (1.0, 4, 4), (2.0, 8, 3)])
def test_prf_mse_simrf_orf_and_ball(v: float, d: int, m: int) -> None:
    # m <= d: every pair of features is a coupled pair, so MSE_c = (e^{2v^2} - e^{v^2} + (m-1)(rho_c - e^{v^2}))/m
    with mpmath.workdps(50):
        e1, e2 = mpmath.exp(MF(v) ** 2), mpmath.exp(2 * MF(v) ** 2)
        rho_o, rho_s = mpmath.hyp1f1(d, MF(d) / 2, MF(v) ** 2 / 2), _rho_simrf(v, d)
        mse_s, mse_o = ((e2 - e1 + (m - 1) * (r - e1)) / m for r in (rho_s, rho_o))
    a, b, err = ref.prf_mse_simrf_orf(v, d, m, 30)
    assert abs(a - mse_s) <= err + MF(10) ** -28 * mse_s and abs(b - mse_o) <= err + MF(10) ** -28 * mse_o
    assert a < b  # Cor 3.3
    with workprec(BITS):
        sa, sb = ref.prf_mse_simrf_orf_ball(v, d, m, BITS)
    assert _contains(sa, mse_s) and _contains(sb, mse_o)
    assert not _contains(sa, _off(mse_s, "1e-25")) and not _contains(sb, _off(mse_o, "1e-25"))


def test_prf_mse_simrf_orf_ball_is_exactly_zero_at_v_0() -> None:
    a, b = ref.prf_mse_simrf_orf_ball(0.0, 4, 4, BITS)
    assert a == 0 and b == 0 and a.is_exact() and b.is_exact()


@pytest.mark.parametrize("z,d,m", [(0.5, 2, 2), (1.0, 3, 2), (2.5, 16, 8), (4.0, 64, 64)])
def test_printed_eq26_and_rff_orthogonality_gap(z: float, d: int, m: int) -> None:
    from rfcheck.claims.simrf import on_balls, printed_eq26

    with mpmath.workdps(50):
        exact = MF(m - 1) / m * (mpmath.exp(-MF(z) ** 2) - _e_ort(z, d))
    with workprec(BITS):
        series = on_balls(printed_eq26)({"z": z, "d": d, "m": m}, BITS)  # eq (26) as printed, one transcription
        gap = ref.rff_orthogonality_gap_ball(z, d, m, BITS)
    for ball in (series, gap):
        assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-25"))
    val, err = ref.rff_orthogonality_gap(z, d, m, 30)
    assert abs(val - exact) <= err and err == MF(1e-12)
    with mpmath.workdps(50):
        assert abs(printed_eq26(MP, {"z": z, "d": d, "m": m}) - exact) < MF(10) ** -48


@pytest.mark.parametrize("z,d,m", [(0.3, 2, 2), (1.0, 3, 2), (2.0, 32, 16)])
def test_rff_mse_ratios(z: float, d: int, m: int) -> None:
    with mpmath.workdps(50):
        e = mpmath.exp(-MF(z) ** 2)
        iid = (1 - e) ** 2 / 2
        exact = (iid + (m - 1) * (_e_ort(z, d) - e)) / iid  # eq (74) ratio
        printed = 1 + 2 * (m - 1) / (1 + e) ** 2 * (_e_ort(z, d) - e)  # eq (77) as printed
    val, err = ref.rff_mse_ratio_quadrature(z, d, m, 30)
    assert abs(val - exact) <= err
    with workprec(BITS):
        ball = ref.rff_mse_ratio_ball(z, d, m, BITS)
        pball = CS.on_balls(CS.printed_eq77)({"z": z, "d": d, "m": m}, BITS)
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-25"))
    assert _contains(pball, printed) and not _contains(pball, _off(printed, "1e-25"))
    assert not pball.overlaps(ball)  # eq (77) as printed is not the ratio (its correction)


@pytest.mark.parametrize("d,k", [(2, 0), (2, 5), (7, 12), (100, 40)])
def test_printed_eq66_on_mpmath_and_balls(d: int, k: int) -> None:
    """Eq (66) is written once (claims.simrf.printed_eq66 on a context): its mpmath value and its ball
    both agree with an independent quadrature of the left side (eq (66) holds)."""
    from rfcheck.claims.simrf import on_balls, printed_eq66

    with mpmath.workdps(100):  # the ball carries 4k guard bits: tighter than 50 digits
        exact = mpmath.quad(lambda ph: mpmath.sin(ph) ** (d - 1) * (1 - mpmath.sin(ph) / (d - 1)) ** k,
                            mpmath.linspace(0, mpmath.pi, 33))  # panels: sin^99 peaks sharply
    with mpmath.workdps(50):
        value = printed_eq66(MP, {"d": d, "k": k})
        assert abs(value - exact) < MF(10) ** -48 * exact
    ball = on_balls(printed_eq66)({"d": d, "k": k}, BITS)
    assert _contains(ball, exact) and abs(float(ball.mid()) - float(value)) <= 1e-15 * float(value)
    assert not _contains(ball, _off(exact, "1e-25"))


@pytest.mark.parametrize("v,d,m,sq", [(0.0, 2, 2, 0.0), (0.1, 2, 2, 0.5), (1.3, 5, 3, 0.7), (3.0, 64, 64, 2.0)])
def test_printed_eq69_line2_on_mpmath_and_balls(v: float, d: int, m: int, sq: float) -> None:
    """Eq (69), line 2, written once (claims.simrf.printed_eq69_line2): e^{-2 sq} (m-1)/m (e^{v^2} - 1F1(d; d/2; v^2/2))
    in mpmath and on balls."""
    from rfcheck.claims.simrf import on_balls, printed_eq69_line2

    p = {"v": v, "d": d, "m": m, "sq": sq}
    with mpmath.workdps(50):
        series = mpmath.exp(MF(v) ** 2) - mpmath.hyp1f1(d, MF(d) / 2, MF(v) ** 2 / 2)
        exact = mpmath.exp(-2 * MF(sq)) * MF(m - 1) / m * series
        assert abs(printed_eq69_line2(MP, p) - exact) <= MF(10) ** -45 * (1 + abs(exact))
    ball = on_balls(printed_eq69_line2)(p, BITS)
    assert _contains(ball, exact)
    if v:
        assert not _contains(ball, _off(exact, "1e-25"))


@pytest.mark.parametrize("m,dim,seed", [(2, 1, 0), (7, 3, 11), (20, 20, 5)])
def test_unit_pair_sum_and_ball(m: int, dim: int, seed: int) -> None:
    val, err = ref.unit_pair_sum(m, dim, seed, 50)
    with mpmath.workdps(50):
        rows = ref.random_unit_rows(m, dim, seed)
        s = [mpmath.fsum(r[k] for r in rows) for k in range(dim)]
        identity = 2 * m * (m - 2) + 2 * mpmath.fsum(x * x for x in s)  # eq (39): a different formula
        assert abs(val - identity) <= err and err == MF(10) ** -47 * (m * m + 1)
    with workprec(BITS):
        ball = ref.unit_pair_sum_ball(m, dim, seed, BITS)
    assert _contains(ball, identity) and not _contains(ball, _off(identity, "1e-25"))


def test_remainder_growth_sides_ball() -> None:
    assert ref.remainder_growth_sides_ball(fmpq(0), fmpq(7)) == (arb(0), arb(2))
    assert isinstance(ref.remainder_growth_sides_ball(arb(0, 1e-30), arb(1)), str)
    g, two = ref.remainder_growth_sides_ball(arb(3), fmpq(9, 2))
    assert g.is_exact() and g == arb(3) / 2  # 4.5 / 3, exact in binary
    assert two == 2


@pytest.mark.parametrize("w,d,c", [(3.0, 3, 0.5), (2.0, 4, -0.5), (0.7, 6, 0.0)])
def test_eq56_first_expression_ball(w: float, d: int, c: float) -> None:
    with mpmath.workdps(50):
        exact = cf.pdf_wij_angle(w, d, c, backend="mpmath", dps=50)  # eq (20), which the corrected form equals
        wm, cm = MF(w), MF(c)

        def pchi(r: mpmath.mpf) -> mpmath.mpf:
            return r ** (d - 1) * mpmath.exp(-r * r / 2) / (2 ** (MF(d) / 2 - 1) * mpmath.gamma(MF(d) / 2))

        def printed(ph: mpmath.mpf) -> mpmath.mpf:
            s = 1 + mpmath.sin(2 * ph) * cm
            return wm / mpmath.sqrt(s) * pchi(wm * mpmath.cos(ph) / mpmath.sqrt(s)) * pchi(wm * mpmath.sin(ph) / s)

        as_printed = mpmath.quad(printed, mpmath.linspace(0, mpmath.pi / 2, 9))
    with workprec(BITS):
        fixed = CS.on_balls(lambda ctx, p: CS.printed_eq56(ctx, p, corrected=True))({"w": w, "d": d, "cos": c}, BITS)
        ball = CS.on_balls(CS.printed_eq56)({"w": w, "d": d, "cos": c}, BITS)
    assert _contains(fixed, exact) and not _contains(fixed, _off(exact, "1e-25"))
    assert _contains(ball, as_printed) and not _contains(ball, _off(as_printed, "1e-25"))
    if c != 0:
        assert not ball.overlaps(fixed)  # the printed slips change the value


@pytest.mark.parametrize("v,d", [(0.5, 2), (1.0, 4), (3.0, 32)])
def test_pair_conformity_closed_form_and_eq10_pair_quadrature(v: float, d: int) -> None:
    with mpmath.workdps(50):
        orf, simrf = mpmath.hyp1f1(d, MF(d) / 2, MF(v) ** 2 / 2), _rho_simrf(v, d)
    for coupling, exact in (("orf", orf), ("simrf", simrf)):
        val, err = ref.pair_conformity_closed_form(v, d, coupling, 30)
        assert abs(val - exact) <= err and err == abs(val) * MF(10) ** -33
        q, qerr = ref.eq10_pair_quadrature(v, d, coupling)
        assert abs(q - exact) <= qerr + 1e-13 * exact
        assert abs(_off(q, "1e-6") - exact) > qerr + 1e-13 * exact  # a planted error is seen

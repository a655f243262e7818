"""Ball (Arb) references of rfcheck.references.simrf and the ball faces of claims.simrf.

Each ball must contain a 50-digit mpmath value computed independently (a closed form, an exact
rational, or a separately written quadrature) at several random points; a planted wrong value must
lie outside it; a widened ball must not certify an equality at the checks' tolerance.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.certify import certified_equal, certified_inequality
from rfcheck.closed_forms import simrf as cf
from rfcheck.references import simrf as ref

MF = mpmath.mpf
BITS = 116  # the working precision of the ledger's default budget (30 digits)


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    with workprec(300):
        return ball.contains(arb(mpmath.nstr(value, 60, strip_zeros=False)))


def _off(x: mpmath.mpf, rel: str = "1e-25", absolute: str = "0") -> mpmath.mpf:
    """A planted wrong value ``x (1 + rel) + absolute``, formed at 60 digits."""
    with mpmath.workdps(60):
        return x * (1 + MF(rel)) + MF(absolute)


def _random_angle_points(n: int, seed: int) -> list[tuple[float, int, float]]:
    rng = np.random.default_rng(seed)
    return [(float(rng.uniform(0.3, 9.0)), int(rng.integers(2, 21)), float(rng.uniform(-0.9, 0.9))) for _ in range(n)]


@pytest.mark.parametrize("w,d,c", [*_random_angle_points(5, 20261127), (3.0, 3, 0.5), (3.0, 3, 0.0), (2.0, 5, -0.5)])
def test_pdf_angle_change_of_variables_ball_contains_the_closed_form(w: float, d: int, c: float) -> None:
    with workprec(BITS):
        ball = ref.pdf_angle_change_of_variables_ball(w, d, c, BITS)
    exact = cf.pdf_wij_angle(w, d, c, backend="mpmath", dps=50)
    assert _contains(ball, exact)
    assert ball.rad() < 1e-28 * abs(ball.mid())
    assert not _contains(ball, _off(exact, "1e-25"))  # a planted wrong value is outside


def test_pdf_angle_change_of_variables_ball_integrates_to_one() -> None:
    """The density of w_ij (d = 3, cos theta = -0.4) has total mass 1 (Arb's integral over w on [0, 12],
    the rest below 1e-12)."""
    with workprec(80):
        # midpoint rule: crude, but far from a wrong normalisation
        mass = sum((ref.pdf_angle_change_of_variables_ball(0.1 * j + 0.05, 3, -0.4, 80) * arb("0.1")
                    for j in range(120)), arb(0))
    assert abs(float(mass.mid()) - 1) < 1e-3


@pytest.mark.parametrize("w,d,c", [*_random_angle_points(4, 7), (9.0, 64, -0.95), (30.0, 2, 0.95)])
def test_printed_eq20_ball_contains_the_printed_integral(w: float, d: int, c: float) -> None:
    # 50 digits of the density by the closed form (a t = sin(2 phi) average, computed differently); eq (20)
    # is correct, so the printed integral must equal it (adaptive mpmath quadrature of the printed integrand
    # itself misses digits where it peaks sharply: d = 64, cos theta = -0.95)
    exact = cf.pdf_wij_angle(w, d, c, backend="mpmath", dps=50)
    from rfcheck.claims.simrf import on_balls, printed_eq20

    ball = on_balls(printed_eq20)({"w": w, "d": d, "cos": c}, BITS)
    assert _contains(ball, exact)
    assert not _contains(ball, _off(exact, "1e-25"))
    # eq (20) is correct: the printed integral equals the independent change-of-variables density
    with workprec(BITS):
        assert certified_equal(ball, ref.pdf_angle_change_of_variables_ball(w, d, c, BITS), 1e-25) == "HOLDS"


def test_a_widened_ball_does_not_certify() -> None:
    with workprec(BITS):
        ball = ref.pdf_angle_change_of_variables_ball(3.0, 3, 0.5, BITS)
        wide = ball + arb(0, 1e-20)
        assert certified_equal(ball, ball, 1e-25) == "HOLDS"
        assert certified_equal(wide, ball, 1e-25) is None


@pytest.mark.parametrize("d,k", [(1, 0), (2, 2), (7, 5), (4096, 200), (1000, 12)])
def test_gamma_ratio_product_exact_is_the_gamma_ratio(d: int, k: int) -> None:
    q = ref.gamma_ratio_product_exact(d, k)
    expect = Fraction(1)
    for j in range(k):
        expect *= Fraction(d + j, d + 2 * j)
    assert (int(q.p), int(q.q)) == (expect.numerator, expect.denominator)
    with mpmath.workdps(50):
        gam = mpmath.gamma(k + d) * mpmath.gamma(MF(d) / 2) / (mpmath.gamma(k + MF(d) / 2) * mpmath.gamma(d)) / 2**k
        assert _contains(arb(q), gam) or abs(gam - MF(int(q.p)) / int(q.q)) < MF(10) ** -45 * gam
        assert abs(ref.gamma_ratio_product(d, k) - gam) < MF(10) ** -45 * gam


@pytest.mark.parametrize("z,d,m", [(0.2, 64, 2), (1.0, 100, 7), (3.0, 4096, 64), (0.7, 3, 3)])
def test_rff_mse_ratio_exact_ball_contains_the_mpmath_ratio(z: float, d: int, m: int) -> None:
    with workprec(BITS):
        ball = ref.rff_mse_ratio_exact_ball(z, d, m, BITS)
    with mpmath.workdps(60):
        exact = ref.rff_mse_ratio_exact(MF(z), d, m)
    assert _contains(ball, exact)
    assert not _contains(ball, _off(exact, "0", "1e-25"))
    if d > 128:  # (the Bessel quadrature's float64 Gamma overflows)
        return
    # and the ratio of the eq (74) MSEs with E_ort by Bessel quadrature (an independent route)
    with mpmath.workdps(30):
        zz = MF(z)
        iid = (1 - mpmath.exp(-zz * zz)) ** 2 / 2
        quad = (iid + (m - 1) * (ref.rff_orf_covariance(zz, d) - mpmath.exp(-zz * zz))) / iid
    assert abs(float(ball.mid()) - float(quad)) < 1e-9 * abs(float(quad)) + 1e-9


def test_growth_sides_ball_conventions() -> None:
    from flint import fmpq

    # an exactly vanishing remainder: growth 0
    assert ref.remainder_growth_sides_ball(fmpq(0), fmpq(3)) == (arb(0), arb(2))
    assert isinstance(ref.remainder_growth_sides_ball(arb(0, 1e-30), arb(1)), str)  # a remainder ball at 0: no verdict
    lhs, rhs = ref.remainder_growth_sides_ball(fmpq(1, 3), fmpq(1, 2))
    assert certified_inequality(lhs, rhs) == "HOLDS"
    lhs, rhs = ref.remainder_growth_sides_ball(fmpq(1, 4), fmpq(5, 4))  # growth 5 > 2
    assert certified_inequality(lhs, rhs) == "REFUTED"


@pytest.mark.parametrize("m,dim,seed", [(2, 1, 0), (5, 3, 17), (12, 7, 999_999)])
def test_random_unit_rows_ball_contains_the_mpmath_rows(m: int, dim: int, seed: int) -> None:
    rows = ref.random_unit_rows_ball(m, dim, seed, BITS)
    with mpmath.workdps(50):
        exact = ref.random_unit_rows(m, dim, seed)
    for rb, rm in zip(rows, exact, strict=True):
        for xb, xm in zip(rb, rm, strict=True):
            assert _contains(xb, xm) and xb.rad() < 1e-30
        assert not _contains(rb[0], _off(rm[0], "0", "1e-28"))
        with workprec(BITS):
            assert sum((x * x for x in rb), arb(0)).contains(1)


@pytest.mark.parametrize("m,dim,seed", [(2, 1, 3), (9, 4, 41), (30, 30, 7)])
def test_eq39_balls_contain_both_mpmath_sides(m: int, dim: int, seed: int) -> None:
    from rfcheck.arb_backend import ARB
    from rfcheck.backends import MP
    from rfcheck.claims.simrf import printed_eq39

    with mpmath.workdps(50):
        pm, rm = printed_eq39(MP, m, ref.random_unit_rows(m, dim, seed)), ref.unit_pair_sum(m, dim, seed, 50)[0]
    with workprec(BITS):
        pb = printed_eq39(ARB, m, ref.random_unit_rows_ball(m, dim, seed, BITS)).v
        rb = ref.unit_pair_sum_ball(m, dim, seed, BITS)
        assert _contains(pb, pm) and _contains(rb, rm)
        assert certified_equal(pb, rb, 1e-25) == "HOLDS"
        assert certified_equal(pb + arb("1e-20"), rb, 1e-25) == "REFUTED"  # a planted wrong value


@pytest.mark.parametrize("v,d", [(0.05, 1), (1.0, 8), (4.0, 2), (2.5, 64), (5.0, 256)])
def test_orf_conformity_chi_ball_contains_1f1(v: float, d: int) -> None:
    with workprec(BITS):
        ball = ref.orf_conformity_chi_ball(v, d, BITS)
    with mpmath.workdps(50):
        exact = mpmath.hyp1f1(d, MF(d) / 2, MF(v) ** 2 / 2)  # Thm 4.3: rho_ORF = 1F1(d; d/2; v^2/2)
    assert _contains(ball, exact) and ball.rad() < 1e-28 * abs(ball.mid())
    assert not _contains(ball, _off(exact, "1e-26"))


@pytest.mark.parametrize("v,d,m,sq", [(0.01, 2, 2, 0.0), (1.0, 4, 3, 0.5), (2.9, 64, 60, 1.0), (3.0, 2, 2, 2.0)])
def test_prf_orthogonality_gap_ball_contains_the_closed_form(v: float, d: int, m: int, sq: float) -> None:
    with workprec(BITS):
        ball = ref.prf_orthogonality_gap_ball(v, d, m, sq, BITS)
    with mpmath.workdps(50):  # eq (69) line 1 summed: e^{-2 sq} (m-1)/m (e^{v^2} - 1F1(d; d/2; v^2/2))
        v2 = MF(v) ** 2
        exact = mpmath.exp(-2 * MF(sq)) * MF(m - 1) / m * (mpmath.exp(v2) - mpmath.hyp1f1(d, MF(d) / 2, v2 / 2))
    assert _contains(ball, exact) and ball.rad() < 1e-27 * mpmath.exp(v2)
    assert not _contains(ball, _off(exact, "0", str(1e-25 * float(mpmath.exp(v2)))))


@pytest.mark.parametrize("z,d", [(0.0, 3), (0.9, 4), (4.0, 1), (3.7, 2), (1.0, 64), (4.0, 128)])
def test_rff_orf_covariance_ball_contains_the_closed_form(z: float, d: int) -> None:
    with workprec(BITS):
        ball = ref.rff_orf_covariance_ball(z, d, BITS)
    with mpmath.workdps(50):  # E_{w ~ chi_2d} 0F1(; d/2; -z^2 w^2/4) = 1F1(d; d/2; -z^2/2) (term by term)
        exact = mpmath.hyp1f1(d, MF(d) / 2, -MF(z) ** 2 / 2)
    assert _contains(ball, exact) and ball.rad() < 1e-28
    assert not _contains(ball, _off(exact, "0", "1e-26"))


@pytest.mark.parametrize("v,d", [(0.05, 2), (1.0, 3), (5.0, 2), (2.5, 64), (5.0, 256)])
def test_printed_eq24_on_balls_contains_the_mpmath_transcription(v: float, d: int) -> None:
    from rfcheck.backends import MP
    from rfcheck.claims.simrf import _simrf_conformity_ball, on_balls, printed_eq24

    with workprec(BITS):
        ball = on_balls(printed_eq24)({"v": v, "d": d}, BITS)
        closed = _simrf_conformity_ball({"v": v, "d": d}, BITS)
    with mpmath.workdps(50):
        exact = printed_eq24(MP, {"v": v, "d": d})
        # an independent 50-digit value: E_t 1F1(d; d/2; v^2 (1 + c t)/2), t = sin(phi), by mpmath quadrature
        c, b = -MF(1) / (d - 1), MF(d) / 2
        norm = mpmath.sqrt(mpmath.pi) * mpmath.gamma(b) / mpmath.gamma(b + MF(1) / 2)
        avg = mpmath.quad(lambda ph: mpmath.sin(ph) ** (d - 1)
                          * mpmath.hyp1f1(d, b, MF(v) ** 2 * (1 + c * mpmath.sin(ph)) / 2),
                          [0, mpmath.pi / 2, mpmath.pi])
        closed_mp = avg / norm
    assert _contains(ball, exact) and _contains(ball, closed_mp)
    assert ball.rad() < 1e-28 * abs(ball.mid())
    assert not _contains(ball, _off(exact, "1e-26"))
    assert certified_equal(ball, closed, 1e-25) == "HOLDS"


@pytest.mark.parametrize("v,d,m,sq", [(0.3, 2, 2, 0.0), (1.3, 5, 3, 0.7), (3.0, 64, 64, 2.0), (0.01, 64, 2, 0.0)])
def test_printed_eq69_line2_ball_contains_the_mpmath_transcription(v: float, d: int, m: int, sq: float) -> None:
    from rfcheck.backends import MP
    from rfcheck.claims.simrf import _gap_ball, on_balls, printed_eq69_line2

    p = {"v": v, "d": d, "m": m, "sq": sq}
    with workprec(BITS):
        ball = on_balls(printed_eq69_line2)(p, BITS)
        gap = _gap_ball(p, BITS)
    with mpmath.workdps(50):
        exact = printed_eq69_line2(MP, p)
    assert _contains(ball, exact)
    assert not _contains(ball, _off(exact, "1e-26"))
    assert certified_equal(ball, gap, 1e-25) == "HOLDS"  # line 2 holds: the correct gap


@pytest.mark.parametrize("m,d,v,seed", [(2, 2, 0.5, 1), (6, 6, 1.0, 2), (5, 16, 3.0, 3)])
def test_conformity_of_ensemble_ball_contains_the_mpmath_mean(m: int, d: int, v: float, seed: int) -> None:
    W = np.random.default_rng(seed).standard_normal((m, d))
    with workprec(BITS):
        ball = ref.conformity_of_ensemble_ball(W, v, BITS)
    with mpmath.workdps(50):
        rows = [[MF(float(x)) for x in r] for r in W]
        sq = [mpmath.fsum((a + b) ** 2 for a, b in zip(rows[i], rows[j], strict=True))
              for i in range(m) for j in range(m) if i != j]
        vals = [mpmath.hyp0f1(MF(d) / 2, MF(v) ** 2 * s2 / 4) for s2 in sq]
        exact = mpmath.fsum(vals) / len(vals)
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-26"))
    assert abs(float(ball.mid()) - cf.conformity_of_ensemble(W, v)) < 1e-12 * float(exact)


def test_simrf_plus_draw_ball_is_the_draw() -> None:
    a, b, _ = ref.simrf_plus_draw(6, 1.0, 12345)
    pb, sb = ref.simrf_plus_draw_ball(6, 1.0, 12345, BITS)
    assert abs(float(pb.mid()) - a) < 1e-12 * a and abs(float(sb.mid()) - b) < 1e-12 * b
    assert certified_inequality(pb, sb) == "HOLDS"  # SimRF+ below SimRF at v = 1 (Fig. 4)


@pytest.mark.parametrize("v,d,c", [(1.0, 2, -1.0), (3.0, 32, -1.0), (3.0, 32, 1.0), (3.0, 2, 0.3), (1.5, 17, -0.6)])
def test_angle_conformity_moment_series_ball_and_printed_eq21_on_balls(v: float, d: int, c: float) -> None:
    from rfcheck.backends import MP
    from rfcheck.claims.simrf import on_balls, printed_eq21

    with mpmath.workdps(50):
        exact = cf.conformity_angle(v, d, c, backend="mpmath", dps=50)  # the closed form (eq (21) summed)
        printed = printed_eq21(MP, {"v": v, "d": d, "cos": c})
    with workprec(BITS):
        ball = ref.angle_conformity_moment_series_ball(v, d, c, BITS)
        pb = on_balls(printed_eq21)({"v": v, "d": d, "cos": c}, BITS)
        assert certified_equal(pb, ball, 1e-25) == "HOLDS"  # Lemma 4.2 holds
    assert _contains(ball, exact) and _contains(pb, printed)
    assert ball.rad() < 1e-28 * abs(ball.mid())
    assert not _contains(ball, _off(exact, "1e-26")) and not _contains(pb, _off(printed, "1e-26"))

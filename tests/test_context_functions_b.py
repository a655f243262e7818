"""The context functions added for the SimRF transcriptions: ``ratio_series``, ``dominated_series``,
``gammainc_lower``, ``hyp0f1`` on every face (float64, mpmath, sympy, Arb), each against an independent
50-digit mpmath value (an identity, not the same library call), the ball containing it and tight."""

from __future__ import annotations

import mpmath
import pytest
import sympy
from flint import acb, arb

from rfcheck.arb_backend import ARB, workprec
from rfcheck.backends import FP, MP, SYM

MF = mpmath.mpf
BITS = 120


def _contains(ball: arb | acb, x: mpmath.mpf | mpmath.mpc) -> bool:
    """Whether ``ball`` contains the 60-digit decimal of ``x`` (read at 400 bits)."""
    with workprec(400):
        if isinstance(x, mpmath.mpc):
            return bool(ball.contains(acb(arb(mpmath.nstr(x.real, 60)), arb(mpmath.nstr(x.imag, 60)))))
        return bool(ball.contains(arb(mpmath.nstr(x, 60))))


def _sym(x: mpmath.mpf) -> sympy.Float:
    """``x`` as a 50-digit sympy Float."""
    return sympy.Float(mpmath.nstr(x, 55, strip_zeros=False), 50)


def _off(x: mpmath.mpf, rel: str) -> mpmath.mpf:
    with mpmath.workdps(60):
        return x * (1 + MF(rel))


# ------------------------------------------------------------------------------ ratio_series


@pytest.mark.parametrize("x", [0.0, 0.5, 2.5, 30.0])
def test_ratio_series_is_exp_on_every_face(x: float) -> None:
    """``sum_k x^k/k!`` by its term ratio ``x/(k+1)``: ``e^x`` (mpmath's exp, not a series)."""
    with mpmath.workdps(50):
        exact = mpmath.exp(MF(x))
        got = MP.ratio_series(MF(1), lambda k: MF(x) / (k + 1))
        assert abs(got - exact) <= MF(10) ** -48 * exact
    assert FP.ratio_series(1.0, lambda k: x / (k + 1)) == pytest.approx(float(exact), rel=1e-14)
    xs = sympy.Rational(x)
    assert sympy.N(SYM.ratio_series(sympy.Integer(1), lambda k: xs / (k + 1)).doit(), 50) == sympy.N(sympy.exp(xs), 50)
    with workprec(BITS):
        ball = ARB.ratio_series(ARB.num(1), lambda k: ARB.num(x) / (k + 1)).v
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-30"))


@pytest.mark.parametrize(("x", "d"), [(0.7, 2), (4.5, 7), (12.0, 32)])
def test_ratio_series_is_kummer_1f1(x: float, d: int) -> None:
    """The printed series of SimRF eq (21)/(62): ``sum_k x^k/k! Gamma(k+d)/Gamma(k+d/2) = Gamma(d)/Gamma(d/2)
    1F1(d; d/2; x)``; the reference is Kummer's transformation ``e^x 1F1(-d/2; d/2; -x)``, a terminating or
    different series."""
    with mpmath.workdps(50):
        b = MF(d) / 2
        g0 = mpmath.gamma(d) / mpmath.gamma(b)
        exact = g0 * mpmath.exp(x) * mpmath.hyp1f1(-b, b, -MF(x))
        got = MP.ratio_series(g0, lambda k: MF(x) * (k + d) / ((k + 1) * (k + b)))
        assert abs(got - exact) <= MF(10) ** -47 * exact
    with workprec(BITS):
        bb = ARB.num(d) / 2
        ball = ARB.ratio_series(ARB.gamma(d) / ARB.gamma(bb), lambda k: ARB.num(x) * (k + d) / ((k + 1) * (k + bb))).v
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-30"))


def test_ratio_series_complex_ball_and_wide_argument() -> None:
    """A complex argument gives a complex ball containing ``e^z``; an argument too wide for the series gives a
    non-finite ball (which contains the sum: a rigorous integration subdivides such boxes)."""
    with mpmath.workdps(50):
        exact = mpmath.exp(mpmath.mpc(1.5, -2.0))
    with workprec(BITS):
        z = ARB.num(complex(1.5, -2.0))
        ball = ARB.ratio_series(ARB.num(1), lambda k: z / (k + 1)).v
        wide = acb(arb(0, 1e6), arb(0, 1e6))
        huge = ARB.ratio_series(ARB.num(1), lambda k: ARB.num(wide) / (k + 1)).v
    assert _contains(ball, exact) and ball.rad() < 1e-30
    assert not huge.is_finite()


# -------------------------------------------------------------------------- dominated_series


@pytest.mark.parametrize("x", [0.0, 1.0, 9.0])
def test_dominated_series_alternating_exp(x: float) -> None:
    """``sum_k (-x)^k/k! = e^{-x}``, its terms bounded by ``x^k/k!`` (ratio ``x/(k+1)``); 20 guard digits for
    the cancellation in mpmath, as a transcription gives them."""
    with mpmath.workdps(50):
        exact = mpmath.exp(-MF(x))
        with mpmath.workdps(80):
            got = MP.dominated_series(lambda k: (-MF(x)) ** k / mpmath.factorial(k))
        assert abs(got - exact) <= MF(10) ** -48 * exact
    # float64: the cancellation costs e^x ulps (absolute e^x 1e-15)
    assert FP.dominated_series(lambda k: (-x) ** k / float(mpmath.factorial(k))) == pytest.approx(
        float(exact), rel=1e-12, abs=float(mpmath.exp(x)) * 1e-15
    )
    xs = sympy.Rational(x)
    assert sympy.N(SYM.dominated_series(lambda k: (-xs) ** k / sympy.factorial(k)).doit(), 50) == sympy.N(
        sympy.exp(-xs), 50
    )
    with workprec(BITS + 20):
        ball = ARB.dominated_series(
            lambda k: ARB.num(-x) ** k / ARB.gamma(k + 1),
            lambda k: ARB.num(x) ** k / ARB.gamma(k + 1),
            lambda k: ARB.num(x) / (k + 1),
        ).v
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-30"))


def test_dominated_series_sum_cancelling_to_zero_stops_and_needs_its_bounds() -> None:
    """A series whose sum is 0 up to rounding stops on the sum's own radius (no endless loop), and on balls a
    dominated series without majorant or ratio bound is refused (no rigorous tail)."""
    with workprec(BITS):
        third = ARB.num(1) / 3
        ball = ARB.dominated_series(
            lambda k: (3 * third - 1) if k == 0 else ARB.num(0), lambda k: ARB.num(0), lambda k: ARB.num(0)
        ).v
        assert ball.contains(0) and ball.rad() < 1e-30
        with pytest.raises(NotImplementedError):
            ARB.dominated_series(lambda k: ARB.num(1) / ARB.gamma(k + 1))


# ---------------------------------------------------------------------------- gammainc_lower


@pytest.mark.parametrize(("a", "x"), [(1, 2.0), (3, 2.5), (16, 0.01), (8, 40.0), (2.5, 2.5)])
def test_gammainc_lower_on_every_face(a: float, x: float) -> None:
    """``gamma(a, x) = x^a/a 1F1(a; a+1; -x)`` (DLMF 8.5.1) at 50 digits."""
    with mpmath.workdps(50):
        exact = MF(x) ** a / a * mpmath.hyp1f1(a, MF(a) + 1, -MF(x))
        assert abs(MP.gammainc_lower(a, MF(x)) - exact) <= MF(10) ** -45 * exact
    assert FP.gammainc_lower(a, x) == pytest.approx(float(exact), rel=1e-12)
    sym = sympy.N(SYM.gammainc_lower(sympy.Rational(a), sympy.Rational(x)), 50)
    assert abs(sym - _sym(exact)) < 1e-40 * _sym(exact)
    with workprec(BITS):
        ball = ARB.gammainc_lower(a, ARB.num(x)).v
    # the finite sum of an integer order cancels at small x: its accuracy is absolute, on the scale Gamma(a)
    assert _contains(ball, exact) and ball.rad() < float(mpmath.gamma(a)) * 2.0 ** (8 - BITS)
    if exact > mpmath.gamma(a) * 1e-10:
        assert not _contains(ball, _off(exact, "1e-20"))


def test_gammainc_lower_integer_order_on_a_complex_ball() -> None:
    """The DLMF 8.4.7 sum of an integer order on a complex argument: ``gamma(4, z)`` at ``z = 1 + 2i``."""
    with mpmath.workdps(50):
        z = mpmath.mpc(1, 2)
        exact = mpmath.quad(lambda t: t**3 * mpmath.exp(-t), [0, z])
    with workprec(BITS):
        ball = ARB.gammainc_lower(4, ARB.num(complex(1, 2))).v
    assert isinstance(ball, acb) and _contains(ball, exact) and ball.rad() < 1e-30


# ------------------------------------------------------------------------------------ hyp0f1


@pytest.mark.parametrize(("nu", "y"), [(-0.5, 1.0), (0.5, 3.0), (7.0, 10.0), (63.0, 0.2)])
def test_hyp0f1_is_a_bessel_i(nu: float, y: float) -> None:
    """``0F1(; nu+1; y^2/4) = Gamma(nu+1) (y/2)^{-nu} I_nu(y)`` (``nu = -1/2``: ``cosh y``) at 50 digits."""
    with mpmath.workdps(50):
        b, x = MF(nu) + 1, MF(y) ** 2 / 4
        exact = mpmath.gamma(b) * (MF(y) / 2) ** (-MF(nu)) * mpmath.besseli(nu, y)
        assert abs(MP.hyp0f1(b, x) - exact) <= MF(10) ** -45 * exact
    assert FP.hyp0f1(nu + 1, y * y / 4) == pytest.approx(float(exact), rel=1e-12)
    bs, xs = sympy.Rational(nu) + 1, sympy.Rational(y) ** 2 / 4
    assert abs(sympy.N(SYM.hyp0f1(bs, xs), 50) - _sym(exact)) < 1e-40 * _sym(exact)
    with workprec(BITS):
        ball = ARB.hyp0f1(ARB.num(nu + 1), ARB.num(y) ** 2 / 4).v
        cball = ARB.hyp0f1(ARB.num(nu + 1), ARB.num(y) ** 2 / 4 * ARB.num(complex(1, 0))).v
    assert _contains(ball, exact) and not _contains(ball, _off(exact, "1e-30"))
    assert isinstance(cball, acb) and _contains(cball.real, exact)


# ------------------------------------------------------------- a transcription that uses them


@pytest.mark.parametrize(("z", "d"), [(0.0, 3), (1.0, 2), (4.0, 128), (2.5, 7)])
def test_printed_eq78_on_both_faces(z: float, d: int) -> None:
    """SimRF eq (78) written once (``ctx.dominated_series``): its mpmath face and its ball agree with
    ``1F1(d; d/2; -z^2/2) - e^{-z^2}`` (eq (76) minus the iid term) at 50 digits, the ball containing it."""
    from rfcheck.claims import _simrf_proofs as P

    with mpmath.workdps(50):
        exact = mpmath.hyp1f1(d, MF(d) / 2, -MF(z) ** 2 / 2) - mpmath.exp(-MF(z) ** 2)
        got = P.printed_eq78(MP, {"z": z, "d": d})
        assert abs(got - exact) <= MF(10) ** -45
    ball = P.on_balls(P.printed_eq78)({"z": z, "d": d}, BITS)
    assert _contains(ball, exact) and ball.rad() < 1e-30
    if z:
        assert not _contains(ball, _off(exact, "1e-25"))

"""The Arb face of the closed forms (``backend="arb"``) and the certified verdicts.

* every public closed form that is a ``formula`` either evaluates on balls -- and then its
  ball contains the 50-digit mpmath value at random points of its domain (the accuracy
  sweep's samplers), and is tight (relative radius < 1e-20) at 128 bits or, where the
  formula cancels, at a higher precision -- or raises ``NotImplementedError`` naming it
  (the list below, tied to the closed forms so that a change is noticed);
* a planted wrong formula is REFUTED (disjoint balls), also where float64 cannot see it;
* a ball made artificially wide is never certified;
* the rigorous Gaussian expectation of ``cos(w x)`` contains ``exp(-x^2/2)`` with a tight ball.
"""

from __future__ import annotations

import importlib
import math
import zlib
from typing import Any

import mpmath
import numpy as np
import pytest
from flint import acb, arb
from flint import ctx as flint_ctx

from rfcheck import accuracy, certify
from rfcheck.arb_backend import ARB, NOT_ON_BALLS, Ball, UndecidableError, bits_for_dps, to_ball, workprec
from rfcheck.backends import FP, MP, SYM, formula
from rfcheck.closed_forms import crt, hrf, rfa

POINTS = 5
PREC = 128
TIGHT = 1e-20

#: formulas whose code leaves ball arithmetic (a sympy or mpmath branch taken for any context that
#: is not float64/mpmath), or is refused (``NOT_ON_BALLS``); see the report in the module docstring
#: of ``rfcheck.arb_backend``.  A formula that starts to evaluate on balls must be removed here.
NOT_ON_BALLS_EXPECTED: set[str] = set()


def _formulas() -> list[tuple[str, Any]]:
    out = []
    for paper in accuracy.PAPERS:
        mod = importlib.import_module(f"rfcheck.closed_forms.{paper}")
        for name in mod.__all__:
            f = getattr(mod, name)
            if callable(getattr(f, "impl", None)) and callable(getattr(f, "symbolic", None)):
                out.append((f"{paper}.{name}", f))
    return out


FORMULAS = _formulas()
SPECS = {s.function: s for s in accuracy.SPECS}


def _points(qual: str) -> list[dict[str, Any]]:
    spec = SPECS.get(qual)
    if spec is None:
        pytest.fail(f"{qual}: no sampler in rfcheck.accuracy.SPECS")
    cols = spec.sample(np.random.default_rng(zlib.crc32(qual.encode())), POINTS)
    pts = []
    for i in range(POINTS):
        p = {k: v[i] for k, v in cols.items()}
        pts.append({k: (v.item() if isinstance(v, np.generic) else v) for k, v in {**p, **spec.kwargs}.items()})
    return pts


def _rel_radius(b: arb | acb) -> float:
    """Relative radius (0 for an exact ball; inf for a ball around 0 or a non-finite one)."""
    if b.is_exact():
        return 0.0
    mag = abs(b).mid()
    if mag == 0 or not mag.is_finite():
        return math.inf
    rad = max(b.real.rad(), b.imag.rad()) if isinstance(b, acb) else b.rad()
    with workprec(64):
        return float(rad / mag)


def _encloses(b: arb | acb, r50: Any, r80: Any) -> bool:
    """``b`` contains the 80-digit mpmath value, allowing its own uncertainty
    (1e-45 relative, or the 50/80-digit disagreement where larger)."""
    with workprec(600):
        ref = to_ball(r80)
        if not ref.is_finite():  # an infinite value: the ball must be that infinity (not [+/- inf], NaN)
            return bool(b.contains(ref)) and bool(b.mid() == ref)
        slack = abs(to_ball(r50) - ref) + abs(ref) * arb("1e-45")
        e = arb(0, slack.upper())
        widened = acb(b.real + e, b.imag + e) if isinstance(b, acb) else b + e
        return bool(widened.contains(ref))


def test_arb_context_has_every_function_of_the_other_contexts() -> None:
    for other in (FP, MP, SYM):
        missing = {n for n in dir(other) if not n.startswith("_")} - {n for n in dir(ARB) if not n.startswith("_")}
        assert not missing, f"the Arb context lacks {sorted(missing)} (which the {other.name} context has)"


def test_not_on_balls_list_is_documented() -> None:
    assert set(NOT_ON_BALLS) <= NOT_ON_BALLS_EXPECTED
    assert NOT_ON_BALLS_EXPECTED <= {q for q, _ in FORMULAS}


@pytest.mark.parametrize("qual,f", FORMULAS, ids=[q for q, _ in FORMULAS])
def test_formula_on_balls(qual: str, f: Any) -> None:
    """The Arb ball contains the 50-digit mpmath value, and is tight where the precision allows."""
    pts = _points(qual)
    if qual in NOT_ON_BALLS_EXPECTED:
        with pytest.raises(NotImplementedError, match=qual.replace(".", r"\.")):
            f(**pts[0], backend="arb", prec=PREC)
        return
    checked = 0
    for p in pts:
        try:
            r50 = f(**p, backend="mpmath", dps=50)
        except ValueError:  # a sampled point outside the domain: both faces refuse it
            with pytest.raises(ValueError):
                f(**p, backend="arb", prec=PREC)
            continue
        r80 = f(**p, backend="mpmath", dps=80)
        b = f(**p, backend="arb", prec=PREC)
        assert isinstance(b, arb | acb), f"{qual}{p}: the Arb face returned {type(b).__name__}"
        assert _encloses(b, r50, r80), f"{qual}{p}: ball {b.str(40, radius=True)} misses mpmath {r80}"
        if not mpmath.isfinite(r80):
            checked += 1
            continue
        if r80 == 0:  # an exact zero: an absolute radius (a relative one cannot be small)
            assert b.is_exact() or float(abs(b).upper()) < 1e-30, f"{qual}{p}: ball {b} around the exact 0"
            checked += 1
            continue
        rel = _rel_radius(b)
        if rel >= TIGHT:  # only where the formula cancels: more bits must then make the ball tight
            tight = certify.tight_ball(f, rtol=TIGHT, prec=2 * PREC, max_prec=8192, **p)
            assert _rel_radius(tight) < TIGHT or tight.is_exact(), f"{qual}{p}: not tight at 8192 bits"
            assert _encloses(tight, r50, r80)
        checked += 1
    assert checked >= 3, f"{qual}: only {checked} of {POINTS} sampled points were in the domain"


def test_results_are_flint_balls_and_precision_is_restored() -> None:
    before = flint_ctx.prec
    b = crt.oprf_rho_star(2.0, 3, backend="arb", dps=40)
    assert isinstance(b, arb) and flint_ctx.prec == before
    assert _rel_radius(b) < 1e-40
    assert bits_for_dps(40) == math.ceil(40 * math.log2(10)) + 16
    wide = crt.oprf_rho_star(2.0, 3, backend="arb", dps=40, prec=60)  # prec (bits) wins over dps
    assert 1e-19 < _rel_radius(wide) < 1e-15
    for t in (0.5, 1e-30, 40.0):  # log I_0 = log 0F1(; 1; t^2/4) on balls, tight also where t^2/4 underflows 1 + .
        ball = crt.log_i0(t, backend="arb", dps=40)
        with mpmath.workdps(200):  # log1p: 1 + t^2/4 would round away at t = 1e-30
            exact = mpmath.log1p(mpmath.besseli(0, mpmath.mpf(t)) - 1)
        with workprec(800):
            assert ball.contains(to_ball(exact))
        assert _rel_radius(ball) < 1e-40
    assert flint_ctx.prec == before


def test_arrays_inputs_and_mpmath_inputs() -> None:
    out = crt.oprf_rho_star(np.array([0.5, 2.0]), 3, backend="arb")
    assert out.shape == (2,) and all(isinstance(v, arb) for v in out)
    assert out[1].overlaps(crt.oprf_rho_star(2.0, 3, backend="arb"))
    with mpmath.workdps(60):
        u = mpmath.mpf(1) / 3  # an mpmath input is taken at its exact binary value
        ref = crt.oprf_rho_star(u, 3, backend="mpmath", dps=60)
    b = crt.oprf_rho_star(u, 3, backend="arb", prec=180)
    assert _rel_radius(b) < 1e-50
    with workprec(256):
        assert (b + arb(0, 1e-55)).contains(to_ball(ref))
    with pytest.raises(ValueError, match="must be >= 0"):
        crt.oprf_rho_star(-1.0, 3, backend="arb")


def test_where_on_undecided_condition_is_the_union() -> None:
    with workprec(64):
        x = Ball(arb(0, 1))  # contains both signs
        cond = x > 0
        assert cond.value is None
        with pytest.raises(UndecidableError):
            bool(cond)
        u = ARB.where(cond, 1, 2).v
        assert u.contains(1) and u.contains(2)
        assert ARB.where(Ball(arb(3)) > 0, 1, 2).v == 1
        with pytest.raises(UndecidableError):
            bool(x)

    @formula
    def branchy(ctx: Any, t: Any) -> Any:
        return ctx.exp(t) if t > 0 else -ctx.exp(t)  # a Python branch on the value

    assert branchy(1.0, backend="arb").overlaps(arb(1).exp())
    with pytest.raises(UndecidableError):
        branchy(arb(0, 1e-3), backend="arb")


def test_balls_never_become_floats() -> None:
    with workprec(64):
        b = Ball(arb(2))
        with pytest.raises(TypeError):
            float(b)  # type: ignore[arg-type]
        with pytest.raises(NotImplementedError):
            mpmath_free = b._sympy_()  # noqa: F841
        with pytest.raises(TypeError):
            ARB.exp(mpmath.mpf(1))  # an mpmath value inside a formula is a rounded number


# ------------------------------------------------------------------------- verdicts


@formula
def _rho_planted(ctx: Any, u: Any, d: Any) -> Any:
    """OPRF rho* off by a relative 1e-40: invisible in float64, refuted by balls."""
    return crt.oprf_rho_star.impl(ctx, u, d) * (1 + ctx.exp(-92))


def test_planted_wrong_formula_is_refuted() -> None:
    for u, d in ((0.3, 2), (5.0, 16), (1e-3, 64)):
        assert _rho_planted(u, d) == crt.oprf_rho_star(u, d)  # float64 cannot tell
        printed = _rho_planted(u, d, backend="arb", prec=256)
        ref = crt.oprf_rho_star(u, d, backend="arb", prec=256)
        assert not printed.overlaps(ref)
        assert certify.certified_equal(printed, ref, rtol=1e-10) == "REFUTED"
        assert certify.certified_equal(ref, crt.oprf_rho_star(u, d, backend="arb", prec=300), rtol=1e-60) == "HOLDS"
        assert certify.certified_equal(printed, ref, rtol=1e-10, atol=1.0) == "REFUTED"  # tolerance never excuses


def test_rfa_printed_spectral_variance_refuted_except_at_sigma_one() -> None:
    """The RFA identity with the printed w ~ N(0, sigma^2 I) holds only at sigma = 1."""
    sq_x, sq_y, sq_diff = 1.25, 0.5, 0.75
    for sigma, verdict in ((1.0, "HOLDS"), (1.5, "REFUTED"), (0.5, "REFUTED")):
        printed = rfa.log_rff_limit(sigma, sq_x, sq_y, sq_diff, sigma**2, backend="arb")
        ref = rfa.log_kernel_limit(sigma, sq_x, sq_y, sq_diff, backend="arb")
        assert certify.certified_equal(printed, ref, rtol=1e-30) == verdict


def test_widened_ball_is_never_certified() -> None:
    rng = np.random.default_rng(7)
    ref = hrf.log_w(1.7, backend="arb", prec=200)
    rtol = 1e-12
    for _ in range(200):
        scale = 10.0 ** rng.uniform(-11, 2)
        wide = arb(ref.mid(), scale * float(abs(ref.mid())))
        verdict = certify.certified_equal(wide, ref, rtol=rtol)
        assert verdict != "REFUTED"  # it contains the exact value
        if scale > 2 * rtol:
            assert verdict is None, f"a ball of relative radius {scale:.1e} was certified {verdict}"
    # an input made wide gives a wide output: not certified
    wide_out = hrf.log_w(arb(1.7, 1e-6), backend="arb", prec=200)
    assert certify.certified_equal(wide_out, ref, rtol=1e-10) is None
    assert certify.certified_equal(arb.nan(), ref, rtol=1e-10) is None
    assert certify.certified_inequality(wide_out, ref + arb("1e-8")) is None


def test_certified_inequality() -> None:
    a = hrf.log_w(1.0, backend="arb")
    b = hrf.log_w(1.0 + 2.0**-40, backend="arb")  # log W is increasing
    assert certify.certified_inequality(a, b) == "HOLDS"
    assert certify.certified_inequality(b, a) == "REFUTED"
    assert certify.certified_inequality(a, a, strict=False) is None  # a - a: a ball around 0
    assert certify.certified_inequality(1, 1) == "HOLDS"
    assert certify.certified_inequality(1, 1, strict=True) == "REFUTED"
    assert certify.certified_inequality("0.1", 0.1) == "HOLDS"  # decimal 0.1 (enclosed) < float 0.1 (exact)
    assert certify.certified_inequality(0.1, "0.1", prec=40) is None  # a coarse enclosure of 0.1 decides nothing
    with pytest.raises(TypeError):
        certify.certified_inequality(acb(1, 1), 2)
    with pytest.raises(TypeError):
        certify.certified_equal(mpmath.mpf(1), 1)


# ------------------------------------------------------------------------ references


@pytest.mark.parametrize("x", [0.0, 0.3, 1.3, 4.0])
def test_gaussian_expectation_of_cos_is_exp(x: float) -> None:
    g = certify.gaussian_expectation_1d(lambda w, _: (w * x).cos(), growth=(1.0, 0.0), prec=128)
    with workprec(128):
        ref = (-(arb(x) ** 2) / 2).exp()
    assert g.contains(ref)
    assert _rel_radius(g) < 1e-30
    assert certify.certified_equal(g, ref, rtol=1e-30) == "HOLDS"
    with workprec(128):
        planted = ref * (1 + arb(2) ** -90)  # off by 8e-28 relative
    assert certify.certified_equal(g, planted, rtol=1e-20) == "REFUTED"


def test_gaussian_expectation_tail_bound_and_moments() -> None:
    # |w^6| <= exp(6|w|) for all w (w^6 e^{-6|w|} <= e^{-6}): C = 1, a = 6
    g = certify.gaussian_expectation_1d(lambda w, _: w**6, growth=(1.0, 6.0), prec=128)
    assert g.contains(certify.gaussian_moment(6)) and _rel_radius(g) < 1e-30
    assert certify.gaussian_moment(6) == 15 and certify.gaussian_moment(7) == 0
    # a truncation point too small: the tail bound (not the integral) makes the ball wide, and honest
    short = certify.gaussian_expectation_1d(lambda w, _: w**2, growth=(1.0, 2.0), T=3.0)
    assert short.contains(1) and short.rad() > 1e-3
    with workprec(128):
        tail = certify.gaussian_tail_bound(1.0, 0.0, 5.0)
        assert tail.overlaps((arb(5) / arb(2).sqrt()).erfc())  # 2 P(W > 5)
        assert tail.upper() < 5.8e-7


def test_series_sum_with_remainder_bound() -> None:
    s = certify.series_sum(lambda k: arb(3) ** k / arb.fac_ui(k), lambda n: 3 / (n + 1), prec=128)
    with workprec(128):
        assert s.contains(arb(3).exp()) and _rel_radius(s) < 1e-35
    with pytest.raises(ArithmeticError):
        certify.series_sum(lambda k: arb(1) / (k + 1), lambda n: 1.0, max_terms=50)  # no ratio bound < 1


def test_input_uncertainty_propagates_honestly() -> None:
    """A ball input stands for all its points: the output contains the value at each of them."""
    x = arb(1.7, 1e-6)
    out = hrf.log_w(x, backend="arb", prec=128)
    for t in (1.7 - 1e-6, 1.7 - 3e-7, 1.7, 1.7 + 9e-7):
        with mpmath.workdps(50):
            ref = hrf.log_w(t, backend="mpmath", dps=50)
        with workprec(256):
            assert out.contains(to_ball(ref))
    assert 1e-7 < _rel_radius(out) < 1e-4


def test_tight_ball_raises_the_precision_where_a_formula_cancels() -> None:
    # x . y / sigma^2 = (|x|^2 + |y|^2 - |x - y|^2) / 2 from norms that cancel: 2^100 + 2^-100 - 2^100
    args = (1.0, 2.0**100, 2.0**-100, 2.0**100)
    loose = rfa.log_kernel_limit(*args, backend="arb", prec=64)
    tight = certify.tight_ball(rfa.log_kernel_limit, *args, rtol=1e-30, prec=64)
    assert _rel_radius(tight) < 1e-30 <= _rel_radius(loose)
    assert tight.contains(arb(2.0**-101)) and loose.contains(arb(2.0**-101))
    assert certify.tight_ball(crt.oprf_rho_star, 0.0, 3).is_exact()  # rho*(0) = 1 exactly


def test_three_valued_conditions() -> None:
    from rfcheck.arb_backend import Cond

    t, f, u = Cond(True), Cond(False), Cond(None, "x > 0")
    assert (u & f).value is False and (u | t).value is True
    assert (u & t).value is None and (u | f).value is None and (~u).value is None
    assert (t & True).value is True and (False | u).value is None

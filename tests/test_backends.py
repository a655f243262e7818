"""Tests of ``rfcheck.backends``: the ``formula`` decorator and its three number systems.

One context-generic definition gets a float64 face (vectorised, with an mpmath fallback
at badly conditioned points), an mpmath face (precision set and restored by ``workdps``)
and a sympy face.  These tests use small probe formulas whose exact values are known, and
the CRT closed forms where the decorator's behaviour matters for them.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from rfcheck import backends
from rfcheck.backends import FP, MP, SYM, formula, get_backend
from rfcheck.closed_forms import crt

EPS = float(np.finfo(float).eps)


# ---------------------------------------------------------------------- probe formulas


@formula
def _scaled_exp(ctx, x, y):
    return ctx.exp(x) * y


def _probe_check(x):
    if np.any(np.asarray(x, dtype=float) < 0):
        raise ValueError("x must be >= 0 (probe)")


@formula(check=_probe_check)
def _dps_probe(ctx, x):
    """Returns the working precision it runs at (mpmath face) -- and raises on x = 13."""
    if ctx is MP and x == 13:
        raise ZeroDivisionError("probe")
    return mpmath.mp.dps + 0 * x if ctx is MP else x


def _cancel_cond(ctx, x):
    return (1 + ctx.abs(x)) / ctx.abs(x)  # |1| + |x| over the result x


@formula(conditioning=_cancel_cond)
def _one_plus_minus_one(ctx, x):
    """``(1 + x) - 1``: exact value x, catastrophic cancellation for small |x|."""
    return (1 + x) - 1


@formula(conditioning=lambda ctx, x: 2e3 + 0 * x)  # flags every point, underestimates
def _ratio_underestimated(ctx, x):
    """``((1 + x) - 1)/x = 1``; the conditioning claims 2e3, the truth is ~1/x."""
    return ((1 + x) - 1) / x


@formula(conditioning=lambda ctx, x: math.inf + 0 * x)
def _precision_dependent(ctx, x):
    """Never converges: its mpmath value depends on the working precision itself."""
    return x + (mpmath.mp.dps if ctx is MP else 0)


# ------------------------------------------------------------------------- float64 face


def test_float64_face_broadcasts():
    x = np.linspace(-1.0, 1.0, 3)[:, None]
    y = np.array([1.0, 2.0, -3.0, 0.5])[None, :]
    out = _scaled_exp(x, y)
    assert out.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert out[i, j] == _scaled_exp(float(x[i, 0]), float(y[0, j]))
    assert np.ndim(_scaled_exp(0.5, 2.0)) == 0


def test_float64_face_broadcasts_through_the_fallback():
    """A (3, 1) x (1, 4) GERF grid whose tiny-|x-y| row needs the mpmath fallback."""
    n = np.array([1.0, 0.3, 2.0])[:, None]
    sq_diff = np.array([1e-9, 0.1, 1e-3])[:, None]
    sq_x = sq_y = n * n
    sq_sum = 2 * (sq_x + sq_y) - sq_diff
    a = np.array([0.0, -0.1, 0.05 + 0.02j, -0.2j])[None, :]
    out = crt.gerf_log_variance(sq_x, sq_y, sq_sum, sq_diff, 3, a, -1)
    assert out.shape == (3, 4)
    assert not np.iscomplexobj(out)
    for i in range(3):
        for j in range(4):
            one = crt.gerf_log_variance(
                sq_x[i, 0], sq_y[i, 0], sq_sum[i, 0], sq_diff[i, 0], 3, a[0, j], -1
            )
            assert out[i, j] == pytest.approx(one, rel=2 * EPS, abs=2 * EPS)


def test_list_arguments_are_arrays():
    np.testing.assert_array_equal(crt.oprf_rho_star([0.0, 1.0, 2.0], 3),
                                  crt.oprf_rho_star(np.array([0.0, 1.0, 2.0]), 3))


# -------------------------------------------------------------------------- mpmath face


def test_mpmath_face_runs_at_the_requested_precision_and_restores_it():
    assert mpmath.mp.dps == 15
    assert _dps_probe(1.0, backend="mpmath", dps=77) == 77
    assert mpmath.mp.dps == 15
    with mpmath.workdps(30):
        assert _dps_probe(1.0, backend="mpmath", dps=60) == 60
        assert mpmath.mp.dps == 30
    assert mpmath.mp.dps == 15


def test_mpmath_precision_restored_when_the_formula_raises():
    with pytest.raises(ZeroDivisionError, match="probe"):
        _dps_probe(13, backend="mpmath", dps=40)
    assert mpmath.mp.dps == 15
    with pytest.raises(ValueError, match="x must be >= 0"):  # the check runs first
        _dps_probe(-1.0, backend="mpmath", dps=40)
    assert mpmath.mp.dps == 15
    with pytest.raises(ValueError, match="x must be >= 0"):  # ... in the float64 face too
        _dps_probe(-1.0)


def test_mpmath_face_arrays_are_object_arrays_of_mpf():
    out = crt.oprf_rho_star(np.array([[0.5, 1.0, 2.0]]), 3, backend="mpmath", dps=40)
    assert out.shape == (1, 3) and out.dtype == object
    assert all(isinstance(v, mpmath.mpf) for v in out.ravel())
    assert out[0, 1] == crt.oprf_rho_star(1.0, 3, backend="mpmath", dps=40)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (crt.oprf_rho_star, (0.3, 3)),
        (crt.positive_log_variance, (0.5, 0.25, 1.0, 0.5, 3)),
        (crt.trig_log_variance, (0.5, 0.25, 1.0, 0.5, 3)),
        (crt.oprf_log_variance, (0.5, 0.25, 1.0, 0.5, 3)),
        (crt.gerf_log_variance, (0.5, 0.25, 1.0, 0.5, 3, -0.1 + 0.05j, 1)),
        (crt.positive_variance, (0.5, 0.25, 1.0, 0.5, 3)),
        (crt.orf_gerf_log_variance, (0.5, 0.25, 1.0, 0.5, 3, -0.1, 2)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("kernel", ["gaussian", "softmax"])
def test_mpmath_face_delivers_its_digits_at_default_global_precision(fn, args, kernel):
    """Called with mp.dps = 15, ``dps=50`` must still give 50 digits (not 53 bits)."""
    kw = {} if fn is crt.oprf_rho_star else {"kernel": kernel}
    assert mpmath.mp.dps == 15
    v50 = fn(*args, backend="mpmath", dps=50, **kw)
    with mpmath.workdps(100):  # the reference is computed with a high global precision
        v90 = fn(*args, backend="mpmath", dps=90, **kw)
        assert abs(v50 - v90) <= mpmath.mpf("1e-48") * abs(v90), (v50, v90)


def test_mpmath_face_of_a_cancelling_formula_is_verified():
    """Formulas with a conditioning deliver ``dps`` correct digits despite cancellation."""
    x = mpmath.mpf("1e-30")  # a 53-bit number: (1 + x) - 1 = x exactly
    got = _one_plus_minus_one(x, backend="mpmath", dps=20)
    with mpmath.workdps(60):
        assert abs(got - x) <= mpmath.mpf("1e-20") * x, got
    # log(1 + G) ~ -u^2/(2(d+2)) cancels in -u/2 + log 1F1 for small u
    v50 = crt.orf_log_covariance_factor(1e-12, 3, backend="mpmath", dps=50)
    v120 = crt.orf_log_covariance_factor(1e-12, 3, backend="mpmath", dps=120)
    with mpmath.workdps(120):
        assert abs(v50 - v120) <= mpmath.mpf("1e-49") * abs(v120)


def test_dps_below_15_rejected():
    with pytest.raises(ValueError, match=r"dps must be >= 15"):
        _scaled_exp(1.0, 2.0, backend="mpmath", dps=14)


# -------------------------------------------------------------- conditioning fallback


def test_fallback_recomputes_cancelling_points():
    x = np.array([1e-20, 0.5, 1e-4, -3e-9])
    got = _one_plus_minus_one(x)
    # without the fallback: 0.0, exact, ~1e-12 relative error, ~1e-8 relative error
    raw = _one_plus_minus_one.impl(FP, x)
    assert raw[0] == 0.0 and abs(raw[3] / x[3] - 1) > 1e-9
    np.testing.assert_allclose(got, x, rtol=EPS)  # one rounding of the mpmath value
    assert got[1] == raw[1]  # a well-conditioned point is left alone


def test_fallback_threshold_keeps_twelve_digits():
    """Conditioning 1e4 (x = 1e-4) is recomputed: at most ~1e3 eps may be lost silently."""
    x = 1.2345e-4
    raw = _one_plus_minus_one.impl(FP, x)
    assert abs(raw / x - 1) > 1e-13  # float64 alone loses ~4 digits here
    assert backends.COND_MAX <= 1e3
    assert _one_plus_minus_one(x) == pytest.approx(x, rel=EPS)


def test_fallback_with_scalar_arguments():
    got = _one_plus_minus_one(1e-20)
    assert np.ndim(got) == 0 and got == 1e-20
    lv = crt.gerf_log_variance(1.0, 1.0, 4.0 - 1e-9, 1e-9, 3, 0.0, -1)
    assert np.ndim(lv) == 0 and math.isfinite(lv)


def test_fallback_verifies_its_own_precision():
    """A conditioning that underestimates (2e3 claimed, ~1e25 true) is caught by repeating
    the mpmath evaluation 20 digits higher; the first precision alone gives ~5 digits."""
    x = 3e-25
    with mpmath.workdps(28):  # what a single evaluation at 20 + log10(2e3) + 5 digits gives
        single = float(_ratio_underestimated.impl(MP, mpmath.mpf(x)))
    assert abs(single - 1) > 1e-8
    assert _ratio_underestimated(x) == pytest.approx(1.0, rel=2 * EPS)


def test_fallback_raises_rather_than_return_an_unverified_value():
    with pytest.raises(ValueError, match="no value good to 17 digits"):
        _precision_dependent(1.0)


@pytest.mark.parametrize("sq_diff", [1e-14, 1e-9, 1e-6, 2e-5, 1e-3])
def test_gerf_trig_limit_through_the_fallback(sq_diff):
    """GERF(A=0, s=-1) is TrigRF; near x = y its two expm1 terms cancel (Var ~ v^2/2 while
    the terms are ~v), which the fallback repairs."""
    n2 = 2.0
    stats = (n2, n2, 4 * n2 - sq_diff, sq_diff)
    gerf = crt.gerf_log_variance(*stats, 5, 0.0, -1)
    trig = crt.trig_log_variance(*stats, 5)
    # both are float64 roundings of the same number, |log Var| < 70
    assert abs(gerf - trig) <= 1e-12, (gerf, trig)
    with np.errstate(all="ignore"):
        raw = crt._gerf_log_variance.impl(FP, *stats, 5, 0.0, -1)
    if sq_diff <= 1e-6:  # power: float64 alone is visibly wrong here
        assert not abs(raw - trig) <= 1e-10


# ------------------------------------------------------------------ keyword arguments


def test_keyword_arguments_bind():
    pos = crt.oprf_rho_star(2.0, 7)
    assert crt.oprf_rho_star(u=2.0, d=7) == pos
    assert crt.oprf_rho_star(2.0, d=7) == pos
    assert crt.oprf_rho_star(d=7, u=2.0, backend="mpmath", dps=30) == crt.oprf_rho_star(
        2.0, 7, backend="mpmath", dps=30
    )
    kw = dict(sq_x=0.5, sq_y=0.25, sq_sum=1.0, sq_diff=0.5, d=3, a=-0.1, s=1)
    assert crt._gerf_log_variance(**kw) == crt._gerf_log_variance(0.5, 0.25, 1.0, 0.5, 3, -0.1, 1)
    with pytest.raises(ValueError, match="unexpected keyword argument 'v'"):
        crt.oprf_rho_star(2.0, 7, v=1.0)
    with pytest.raises(ValueError, match="missing a required argument: 'd'"):
        crt.oprf_rho_star(u=2.0, backend="float64")


# ----------------------------------------------------------------------- symbolic face


def test_symbolic_face_returns_sympy_expressions():
    u, d = sp.symbols("u d", positive=True)
    expr = crt.oprf_rho_star.symbolic(u, d)
    assert isinstance(expr, sp.Expr) and expr.free_symbols == {u, d}
    assert crt.oprf_rho_star(u, d, backend="sympy") == expr
    assert crt.oprf_rho_star.impl(SYM, u, d) == expr
    assert sp.simplify(expr.subs(u, 0)) == 1  # rho*(0) = 1
    # where(...) becomes a Piecewise (which a positive u would resolve)
    v = sp.Symbol("v", real=True)
    assert crt.oprf_log_variance_ratio.symbolic(v, d).has(sp.Piecewise)
    # the symbolic face skips numeric validation (symbols have no value to check)
    assert isinstance(crt.oprf_rho_star.symbolic(sp.Symbol("u"), 0), sp.Expr)


# ------------------------------------------------------------------------- contexts


def test_get_backend():
    assert get_backend("float64") is FP
    assert get_backend("mpmath") is MP
    assert get_backend("sympy") is SYM
    from rfcheck.arb_backend import ARB

    assert get_backend("arb") is ARB
    names = r"\['arb', 'float64', 'mpmath', 'sympy'\]"
    with pytest.raises(ValueError, match=f"backend must be one of {names}"):
        get_backend("interval")


def test_where_semantics():
    np.testing.assert_array_equal(FP.where(np.array([True, False]), 1.0, 2.0), [1.0, 2.0])
    assert MP.where(True, 1, 2) == 1 and MP.where(False, 1, 2) == 2
    x = sp.Symbol("x")
    assert SYM.where(x > 0, x, -x) == sp.Piecewise((x, x > 0), (-x, True))


@pytest.mark.parametrize(
    "z",
    [1e-20j, -2.7e-27 + 3e-40j, 1e-10 + 1e-10j, -1e-17 - 1e-9j, 0.3 - 0.4j, -0.5 + 2j, 3.0 + 0j],
)
def test_float64_complex_log1p_is_accurate(z):
    """``np.log1p`` drops the real part of ``log(1 + z)`` for small complex z; FP's does not."""
    got = complex(FP.log1p(np.complex128(z)))
    with mpmath.workdps(50):
        ref = mpmath.log1p(mpmath.mpc(z))
        re_ref, im_ref = float(ref.real), float(ref.imag)
    # a few roundings of each part, relative to that part (|z| small: no cancellation)
    assert got.real == pytest.approx(re_ref, rel=8 * EPS, abs=1e-300)
    assert got.imag == pytest.approx(im_ref, rel=8 * EPS, abs=1e-300)
    np.testing.assert_array_equal(FP.log1p(np.array([0.5, 1e-20])), np.log1p([0.5, 1e-20]))


def test_mp_i0e_matches_scipy():
    for x in (0.0, 0.5, 7.0, -30.0):
        assert float(MP.i0e(mpmath.mpf(x))) == pytest.approx(float(FP.i0e(x)), rel=4 * EPS)


@pytest.mark.parametrize("x", [0.3, 1.0, 2.5, 7.5])
def test_gamma_on_every_context(x: float) -> None:
    """``ctx.gamma`` (printed formulas that read Gamma): mpmath's exactly, scipy's to 1e-14,
    sympy's symbolically, Arb's a tight ball containing the 50-digit value."""
    from flint import arb

    from rfcheck.arb_backend import ARB, Ball, to_ball, workprec

    with mpmath.workdps(50):
        exact = mpmath.gamma(mpmath.mpf(x))
        assert MP.gamma(MP.num(x)) == exact
    assert FP.gamma(x) == pytest.approx(float(exact), rel=1e-14)
    assert sp.N(SYM.gamma(SYM.num(x)), 40) == pytest.approx(float(exact), rel=1e-15)
    with workprec(200):
        ball = ARB.gamma(ARB.num(x))
    assert isinstance(ball, Ball)
    assert (ball.v + arb(0, 1e-47 * float(exact))).contains(to_ball(exact)) and float(ball.v.rad()) < 1e-50


def test_num_makes_a_point_number_exact_on_each_context() -> None:
    """``ctx.num``: an int of the point becomes the context's number, so ``d / 2`` is exact."""
    from rfcheck.arb_backend import ARB, Ball, workprec

    assert MP.num(3) / 2 == mpmath.mpf("1.5") and isinstance(MP.num(np.int64(3)), mpmath.mpf)
    assert FP.num(3) / 2 == 1.5 and isinstance(FP.num(np.int64(3)), float)
    assert SYM.num(3) / 2 == sp.Rational(3, 2)
    with workprec(64):
        b = ARB.num(3) / 2
        assert isinstance(b, Ball) and b.v.is_exact() and b.v == 1.5
        assert ARB.num(b) is b

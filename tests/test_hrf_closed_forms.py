"""Tests of ``rfcheck.closed_forms.hrf`` (Hybrid Random Features) against independent references.

References (DESIGN.md, strongest first): 1-D Gaussian quadrature of the defining
variances (``rfcheck.quadrature.gaussian_exp_moment``); exact binomial sums for the
sgn-feature lambda; the paper's printed expressions evaluated naively in mpmath at 80
digits where they hold (Lemma 2.2, eq 45-46, eq 25, eq 72-73); brute-force grids for
maxima.  Tolerances start from float64 ``EPS``; every looser one says why.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from rfcheck import quadrature
from rfcheck.closed_forms import hrf

EPS = float(np.finfo(float).eps)
FP_RTOL = 1e-12  # float64 faces vs 50-digit mpmath (log values: absolute error on the log)
MP_TOL = mpmath.mpf("1e-40")

norms = st.floats(0.0, 3.0, allow_nan=False)
angles = st.floats(0.0, math.pi, allow_nan=False)
counts = st.integers(1, 64)


def _mp(v: float) -> mpmath.mpf:
    return mpmath.mpf(v)


# ------------------------------------------------------------------ independent references


def ref_mse_trig_quad(nx: float, ny: float, th: float, m: int) -> mpmath.mpf:
    """Var of one trig sample by quadrature: ``e^{|x|^2+|y|^2} (E cos^2(g D) - (E cos(g D))^2)/m``."""
    with mpmath.workdps(60):
        dd = mpmath.sqrt((_mp(nx) - ny) ** 2 + 4 * _mp(nx) * ny * mpmath.sin(_mp(th) / 2) ** 2)
        e1, _ = quadrature.gaussian_exp_moment(0, 1j * dd)
        e2, _ = quadrature.gaussian_exp_moment(0, 2j * dd)
        var = (1 + mpmath.re(e2)) / 2 - mpmath.re(e1) ** 2
        return mpmath.exp(_mp(nx) ** 2 + _mp(ny) ** 2) * var / m


def ref_mse_pos_quad(nx: float, ny: float, th: float, m: int) -> mpmath.mpf:
    """Var of one SM^++ sample by quadrature: ``e^{-(|x|^2+|y|^2)} Var cosh(g |z|)/m``."""
    with mpmath.workdps(60):
        zz = mpmath.sqrt((_mp(nx) - ny) ** 2 + 4 * _mp(nx) * ny * mpmath.cos(_mp(th) / 2) ** 2)
        e1, _ = quadrature.gaussian_exp_moment(0, zz)
        e2, _ = quadrature.gaussian_exp_moment(0, 2 * zz)
        var = (1 + e2) / 2 - e1**2  # E cosh = E e^{gz}; E cosh^2 = (1 + E e^{2gz})/2
        return mpmath.exp(-(_mp(nx) ** 2) - _mp(ny) ** 2) * var / m


def ref_angular_moments(th: float, n: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``E lambda, E lambda^2`` for ``lambda = K/n``, ``K ~ Bin(n, q)``, ``q`` = measure of
    directions separating x and y, by quadrature over the angle of tau's projection."""
    with mpmath.workdps(60):
        t = _mp(th)
        # sgn(cos phi) != sgn(cos(phi - t)) on arcs of total length 2t (phi uniform): integrate
        f = lambda phi: 1 if mpmath.cos(phi) * mpmath.cos(phi - t) < 0 else 0  # noqa: E731
        brk = sorted({mpmath.pi / 2, 3 * mpmath.pi / 2, (mpmath.pi / 2 + t) % (2 * mpmath.pi),
                      (3 * mpmath.pi / 2 + t) % (2 * mpmath.pi)})
        pts = [mpmath.mpf(0), *brk, 2 * mpmath.pi]
        q = mpmath.fsum(f((a + b) / 2) * (b - a) for a, b in itertools.pairwise(pts)) / (2 * mpmath.pi)
        m1 = mpmath.fsum(mpmath.binomial(n, k) * q**k * (1 - q) ** (n - k) * k for k in range(n + 1)) / n
        m2 = mpmath.fsum(mpmath.binomial(n, k) * q**k * (1 - q) ** (n - k) * k * k for k in range(n + 1)) / n**2
        return m1, m2


# ------------------------------------------------------------------------ Lemma 2.2 / eq (7)


@pytest.mark.parametrize("nx,ny,th,m", [(0.3, 0.7, 0.4, 1), (1.5, 1.2, 2.0, 7), (2.0, 2.0, 3.0, 3),
                                        (0.9, 0.1, 1e-3, 2)])
def test_lemma22_vs_quadrature(nx, ny, th, m):
    for fn, ref in ((hrf.log_mse_trig, ref_mse_trig_quad), (hrf.log_mse_pos, ref_mse_pos_quad)):
        val = fn(nx, ny, th, m, backend="mpmath", dps=50)
        r = ref(nx, ny, th, m)
        with mpmath.workdps(50):
            assert abs(mpmath.exp(val) / r - 1) < mpmath.mpf("1e-30"), fn.__name__


def _printed_lemma22(nx, ny, th, m):
    """Lemma 2.2 literally: f1(|z|) f3(|D|), f2(|z|) f3(|z|) with SM^{-+2}."""
    with mpmath.workdps(80):
        nx, ny, th = _mp(nx), _mp(ny), _mp(th)
        z2 = (nx - ny) ** 2 + 4 * nx * ny * mpmath.cos(th / 2) ** 2  # |x+y|^2, no cancellation
        d2 = (nx - ny) ** 2 + 4 * nx * ny * mpmath.sin(th / 2) ** 2  # |x-y|^2, no cancellation
        sm = mpmath.exp(nx * ny * mpmath.cos(th))
        f3 = lambda u2: mpmath.expm1(-u2) ** 2  # noqa: E731  (1 - e^-u)^2 without cancellation
        return (mpmath.exp(z2) / sm**2 / (2 * m) * f3(d2), mpmath.exp(z2) * sm**2 / (2 * m) * f3(z2))


@given(norms, norms, angles, counts)
def test_lemma22_mpmath_vs_printed(nx, ny, th, m):
    trig, pos = _printed_lemma22(nx, ny, th, m)
    for fn, ref in ((hrf.log_mse_trig, trig), (hrf.log_mse_pos, pos)):
        v = fn(nx, ny, th, m, backend="mpmath", dps=50)
        with mpmath.workdps(50):
            if ref == 0:
                assert v == -mpmath.inf
            else:
                # the naive printed form cancels at 80 digits when |D| or |z| is tiny
                assert abs(mpmath.exp(v) / ref - 1) < mpmath.mpf("1e-25")


@pytest.mark.parametrize("fn", [hrf.log_mse_trig, hrf.log_mse_pos])
def test_float64_face_matches_mpmath_up_to_r10(fn):
    rng = np.random.default_rng(1)
    nx, ny = rng.uniform(0, 10, 40), rng.uniform(0, 10, 40)
    th = np.concatenate([rng.uniform(0, math.pi, 36), [1e-9, math.pi - 1e-9, 0.0, math.pi]])
    fp = fn(nx, ny, th, 5)
    for i in range(nx.size):
        ref = fn(nx[i], ny[i], th[i], 5, backend="mpmath", dps=50)
        if ref == -mpmath.inf:
            assert fp[i] == -np.inf
        else:
            assert abs(fp[i] - float(ref)) <= FP_RTOL * max(1.0, abs(float(ref)))


def test_symbolic_face_agrees():
    s = sympy.symbols("nx ny theta m", positive=True)
    expr = hrf.log_mse_trig.symbolic(*s)
    v = float(expr.subs(dict(zip(s, (0.7, 1.3, 1.1, 4), strict=True))).evalf(30))
    assert abs(v - hrf.log_mse_trig(0.7, 1.3, 1.1, 4)) < 1e-13


# ---------------------------------------------------------------------------- Lemma 3.2


@pytest.mark.parametrize("th,n", [(0.0, 1), (0.3, 1), (1.0, 2), (2.5, 7), (math.pi, 3), (1.7, 40)])
def test_lemma32_vs_binomial_sum(th, n):
    m1, m2 = ref_angular_moments(th, n)
    with mpmath.workdps(50):
        assert abs(hrf.angular_lambda_mean(th, backend="mpmath") - m1) < MP_TOL
        assert abs(hrf.angular_lambda_second_moment(th, n, backend="mpmath") - m2) < MP_TOL
        one = hrf.angular_one_minus_second_moment(th, n, backend="mpmath")
        assert abs(one - (1 - 2 * m1 + m2)) < MP_TOL
        cross = hrf.angular_lambda_cross_moment(th, n, backend="mpmath")
        assert abs(cross - (m1 - m2)) < MP_TOL


# ---------------------------------------------------------------------------- Thm 3.1 / D.1


def _printed_eq45_46(nx, ny, th, m, n, shared):
    """Thm D.1, eq (45) / (46), literally (they hold)."""
    with mpmath.workdps(80):
        nx, ny, th = _mp(nx), _mp(ny), _mp(th)
        p = th / mpmath.pi
        z2 = (nx - ny) ** 2 + 4 * nx * ny * mpmath.cos(th / 2) ** 2  # |x+y|^2, no cancellation
        d2 = (nx - ny) ** 2 + 4 * nx * ny * mpmath.sin(th / 2) ** 2  # |x-y|^2, no cancellation
        sm = mpmath.exp(nx * ny * mpmath.cos(th))
        v = (p * (p - p / n + mpmath.mpf(1) / n) / (2 * m) * mpmath.exp(z2) * sm**2 * mpmath.expm1(-z2) ** 2
             + (1 - p) * (1 - p + p / n) / (2 * m) * mpmath.exp(z2) / sm**2 * mpmath.expm1(-d2) ** 2)
        if shared:
            v -= (mpmath.mpf(2) / m * sm**2 * (1 - mpmath.cos(nx**2 - ny**2))
                  * p * (1 - mpmath.mpf(1) / n - p + p / n))
        return v


@given(norms, norms, angles, counts, counts, st.sampled_from([0, 1]))
def test_angular_hybrid_mse_vs_printed_45_46(nx, ny, th, m, n, shared):
    ref = _printed_eq45_46(nx, ny, th, m, n, shared)
    v = hrf.log_mse_angular_hybrid(nx, ny, th, m, n, shared, backend="mpmath", dps=50)
    fp = hrf.log_mse_angular_hybrid(nx, ny, th, m, n, shared)
    with mpmath.workdps(50):
        if ref <= mpmath.mpf(10) ** -60:
            assert mpmath.exp(v) <= mpmath.mpf(10) ** -55
            return
        assert abs(mpmath.exp(v) / ref - 1) < mpmath.mpf("1e-25")  # 80-digit naive form cancels
        assert abs(fp - float(v)) <= 1e-11 * max(1.0, abs(float(v)))


def test_variant_ii_needs_unequal_norms():
    a = hrf.log_mse_angular_hybrid(1.0, 1.0, 1.2, 4, 3, 0)
    b = hrf.log_mse_angular_hybrid(1.0, 1.0, 1.2, 4, 3, 1)
    assert a == pytest.approx(b, abs=1e-15)
    a = hrf.log_mse_angular_hybrid(1.0, 1.5, 1.2, 4, 3, 0)
    b = hrf.log_mse_angular_hybrid(1.0, 1.5, 1.2, 4, 3, 1)
    assert b < a - 1e-3


def test_bipolar_cancellation_recomputed():
    # E lam^2, E(1-lam)^2 tiny vs E lam(1-lam): the variant-II term nearly cancels
    args = (1.0, 1.6, 1.0, 1, 1e-3, 1e-3, 0.0, 1)
    assert hrf.log_mse_bipolar(*args) == pytest.approx(float(hrf.log_mse_bipolar(*args, backend="mpmath")), abs=1e-12)


@given(norms, angles, counts, counts)
def test_same_length_form_and_zero_at_ends(r, th, m, n):
    if r == 0:
        return
    a = hrf.log_mse_angular_hybrid_same_length(r, th, m, n)
    b = hrf.log_mse_angular_hybrid(r, r, th, m, n, 1)
    assert a == b or abs(a - b) <= 1e-12 * max(1, abs(a))
    assert hrf.log_mse_angular_hybrid_same_length(r, 0.0, m, n) == -np.inf
    # float(pi) < pi by 1.2e-16: the MSE there is small but not zero; float64 face keeps it
    v = hrf.log_mse_angular_hybrid_same_length(r, math.pi, m, n)
    ref = float(hrf.log_mse_angular_hybrid_same_length(r, math.pi, m, n, backend="mpmath"))
    assert abs(v - ref) <= 1e-11 * max(1, abs(ref))


def test_printed_eq47_differs_from_correct():
    """Eq (47) as printed (coefficient p(1-1/n-p+p/n)) vs the correct (1-p)(1-p+p/n)."""
    r, th, m, n = 1.0, math.pi / 2, 1, 1
    p = th / math.pi
    printed = (p * (p - p / n + 1 / n) / (2 * m) * math.exp(8 * r * r * math.cos(th / 2) ** 2 - 2 * r * r)
               * (1 - math.exp(-4 * r * r * math.cos(th / 2) ** 2)) ** 2
               + p * (1 - 1 / n - p + p / n) / (2 * m) * math.exp(2 * r * r)
               * (1 - math.exp(-4 * r * r * math.sin(th / 2) ** 2)) ** 2)
    correct = math.exp(hrf.log_mse_angular_hybrid_same_length(r, th, m, n))
    assert abs(printed / correct - 1) > 0.3


# ------------------------------------------------------------------------ Lemma 3.4, Thm 3.5


@given(st.floats(0.05, 10.0), st.floats(1e-3, math.pi - 1e-3), counts)
def test_lemma34_symmetry_and_closed_form(r, th, m):
    # theta >= 1e-3: the test's own pi - theta rounds by eps*pi, amplified by 2/theta
    lt = hrf.log_rel_error_trig(r, th, m)
    lp = hrf.log_rel_error_pos(r, math.pi - th, m)
    assert lt == lp or abs(lt - lp) <= 1e-11 * max(1, abs(lt))
    # eps_trig from the MSE: (log MSE - 2 x.y)/2
    le = (hrf.log_mse_trig(r, r, th, m) - 2 * r * r * math.cos(th)) / 2
    assert lt == le or abs(lt - le) <= 1e-11 * max(1, abs(lt))
    assert lt <= hrf.log_max_rel_error_base(r, m) + 1e-12 * max(1, abs(lt))


def test_relative_errors_finite_up_to_r10():
    th = np.linspace(1e-6, math.pi - 1e-6, 50)
    for fn in (hrf.log_rel_error_trig, hrf.log_rel_error_pos):
        assert np.all(np.isfinite(fn(10.0, th, 1)))
    v = hrf.log_rel_error_angular_hybrid(10.0, th, 1, 1)
    assert np.all(np.isfinite(v)) and np.max(v) > 190  # exp(2 r^2) = e^200 regime, no overflow


def test_angular_rel_error_symmetric():
    th = np.linspace(0.01, math.pi - 0.01, 31)
    a = hrf.log_rel_error_angular_hybrid(2.0, th, 3, 5)
    b = hrf.log_rel_error_angular_hybrid(2.0, math.pi - th, 3, 5)
    np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("r,n", [(1.0, 1), (2.0, 3), (5.0, 1), (10.0, 8)])
def test_max_rel_error_vs_grid_and_mpmath(r, n):
    val = hrf.log_max_rel_error_angular_hybrid(r, 2, n)
    grid = np.concatenate([np.linspace(0, math.pi, 20001), np.geomspace(1e-7, 1, 5001)])
    g = np.max(hrf.log_rel_error_angular_hybrid(r, grid, 2, n))
    assert g <= val + 1e-12 * abs(val)
    assert val - g < 1e-7 * max(1, abs(val))  # grid spacing 1.6e-4: quadratic loss at the peak
    mp = hrf.log_max_rel_error_angular_hybrid(r, 2, n, backend="mpmath", dps=30)
    assert abs(float(mp) - val) < 1e-11 * max(1, abs(val))


def test_corrected_bound_holds_and_printed_27_fails():
    for r in (1.0, 1.5, 3.0, 6.0, 10.0):
        for n in (1, 2, 10, 1000):
            true = hrf.log_max_rel_error_angular_hybrid(r, 1, n)
            assert true <= hrf.log_angular_hybrid_max_rel_error_bound(r, 1, n)
    # printed (27): (1/r) sqrt(1/(2m)) W(r) sqrt(1/pi - 1/(n pi) + 1/(n sqrt(pi))), at n = 1, r = 5
    r, n = 5.0, 1
    printed = hrf.log_w(r) - 0.5 * math.log(2) - math.log(r) + 0.5 * math.log(
        1 / math.pi - 1 / (n * math.pi) + 1 / (n * math.sqrt(math.pi)))
    assert hrf.log_max_rel_error_angular_hybrid(r, 1, n) > printed + 0.05


def test_thm35_limit_at_zero():
    r, m, n = 1.5, 3, 4
    lim = hrf.log_w(r) - 0.5 * math.log(2 * math.pi * m * n)
    for th in (1e-6, 1e-8):
        v = hrf.log_rel_error_angular_hybrid(r, th, m, n) - 0.5 * math.log(th)
        assert abs(v - lim) < 10 * th
        w = hrf.log_rel_error_angular_hybrid(r, math.pi - th, m, n) - 0.5 * math.log(th)
        assert abs(w - lim) < 10 * th


# ------------------------------------------------------------------------ Thm F.1, F.2


def _printed_72_73(nx, ny, th, n, sigma, r):
    with mpmath.workdps(80):
        nx, ny, th, sigma, r = map(_mp, (nx, ny, th, sigma, r))
        d2 = (nx - ny) ** 2 + 4 * nx * ny * mpmath.sin(th / 2) ** 2  # |x-y|^2, no cancellation
        rho = 1 - mpmath.exp(-2 * sigma**2 * r**2)
        v = (1 - mpmath.exp(-(sigma**2) * d2)) ** 2 / (2 * rho**2 * n)
        e2 = (1 - mpmath.exp(-(sigma**2) / 2 * d2)) ** 2 / rho**2 + v
        o2 = ((1 - rho) - mpmath.exp(-(sigma**2) / 2 * d2)) ** 2 / rho**2 + v
        return e2, o2


def ref_gauss_moments_quad(nx, ny, th, n, sigma, r):
    """E lambda^2, E(1-lambda)^2 of eq (69) from quadrature moments of cos(sigma g |D|)."""
    with mpmath.workdps(60):
        nx, ny, th, sigma, r = map(_mp, (nx, ny, th, sigma, r))
        dd = mpmath.sqrt((nx - ny) ** 2 + 4 * nx * ny * mpmath.sin(th / 2) ** 2)
        c1 = mpmath.re(quadrature.gaussian_exp_moment(0, 1j * sigma * dd)[0])
        c2 = (1 + mpmath.re(quadrature.gaussian_exp_moment(0, 2j * sigma * dd)[0])) / 2
        rho = 1 - mpmath.exp(-2 * sigma**2 * r**2)
        mean_c2 = c1**2 + (c2 - c1**2) / n  # E[(mean of n cosines)^2]
        e2 = (1 - 2 * c1 + mean_c2) / rho**2
        o2 = ((rho - 1) ** 2 + 2 * (rho - 1) * c1 + mean_c2) / rho**2
        return e2, o2


@pytest.mark.parametrize("args", [(1.0, 1.0, 0.7, 3, 0.8, 1.0), (0.5, 1.4, 2.2, 1, 1.3, 0.9),
                                  (2.0, 2.0, math.pi, 5, 0.4, 2.0)])
def test_thmf1_moments(args):
    e2q, o2q = ref_gauss_moments_quad(*args)
    e2p, o2p = _printed_72_73(*args)
    e2 = hrf.gauss_lambda_second_moment(*args, backend="mpmath")
    o2 = hrf.gauss_one_minus_second_moment(*args, backend="mpmath")
    with mpmath.workdps(50):
        for v, q, p in ((e2, e2q, e2p), (o2, o2q, o2p)):
            assert abs(v - q) <= mpmath.mpf("1e-35") * max(abs(q), 1e-30)
            assert abs(v - p) <= mpmath.mpf("1e-35") * max(abs(p), 1e-30)
    fp = hrf.gauss_one_minus_second_moment(*args)
    assert fp == pytest.approx(float(o2), rel=1e-12, abs=1e-300)


def test_thmf1_shared_changes_mse_for_unequal_norms():
    a = hrf.log_mse_gauss_hybrid(1.0, 1.7, 1.3, 4, 2, 0.8, 1.2, 0)
    b = hrf.log_mse_gauss_hybrid(1.0, 1.7, 1.3, 4, 2, 0.8, 1.2, 1)
    assert abs(a - b) > 1e-3
    a = hrf.log_mse_gauss_hybrid(1.2, 1.2, 1.3, 4, 2, 0.8, 1.2, 0)
    b = hrf.log_mse_gauss_hybrid(1.2, 1.2, 1.3, 4, 2, 0.8, 1.2, 1)
    assert a == pytest.approx(b, abs=1e-14)
    assert hrf.log_mse_gauss_hybrid_same_length(1.2, 1.3, 4, 2, 0.8) == pytest.approx(a, abs=1e-14)


def test_gauss_hybrid_float_vs_mpmath_near_pi():
    for th in (math.pi, math.pi - 1e-7, 1e-7):
        fp = hrf.log_mse_gauss_hybrid_same_length(1.5, th, 3, 2, 0.7)
        mp = hrf.log_mse_gauss_hybrid_same_length(1.5, th, 3, 2, 0.7, backend="mpmath")
        assert abs(fp - float(mp)) <= 1e-12 * max(1, abs(float(mp)))


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("call,match", [
    (lambda: hrf.log_mse_trig(1.0, 1.0, 4.0, 1), "theta"),
    (lambda: hrf.log_mse_trig(1.0, -1.0, 1.0, 1), ">= 0"),
    (lambda: hrf.log_mse_trig(1.0, 1.0, float("nan"), 1), "finite"),
    (lambda: hrf.log_mse_pos(1.0, 1.0, 1.0, 0), "m must be"),
    (lambda: hrf.angular_lambda_second_moment(1.0, 0), "n must be"),
    (lambda: hrf.angular_lambda_second_moment(1.0, 1.5), "n must be"),
    (lambda: hrf.log_mse_bipolar(1, 1, 1, 1, 0.2, 0.3, 0.1, 2), "shared"),
    (lambda: hrf.log_mse_bipolar(1, 1, 1, 1, -0.2, 0.3, 0.1, 0), "second moment"),
    (lambda: hrf.log_angular_hybrid_max_rel_error_bound(0.5, 1, 1), ">= 1"),
    (lambda: hrf.gauss_rho(1.0, 0.0), "sigma"),
    (lambda: hrf.cexp_log_mse(np.array([[1, 2], [2, 4]]), [1, 0], [0, 1], 1), "invertible"),
    (lambda: hrf.log_max_rel_error_angular_hybrid(0.0, 1, 1), "r must be"),
])
def test_invalid_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_pair_geometry_accurate_near_0_and_pi():
    x = np.array([1.0, 0.0, 0.0])
    for t in (1e-9, 1.0, math.pi - 1e-9):
        y = 2 * np.array([math.cos(t), math.sin(t), 0.0])
        _nx, ny, th = hrf.pair_geometry(x, y)
        assert abs(th[0] - t) < 4 * EPS * max(1, t) and ny[0] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="zero vector"):
        hrf.pair_geometry(x, np.zeros(3))


def test_cexp_zero_variance_iff_z_zero():
    a = np.diag([2.0 + 1j, 0.5j])
    y = np.array([0.3, -0.7])
    x = -np.linalg.solve(a, np.linalg.solve(a.T, y)).real  # eq (17) with diagonal A and ...
    z = a @ x + np.linalg.inv(a.T) @ y
    if np.max(np.abs(z)) < 1e-12:
        assert hrf.cexp_log_mse(a, x, y, 3) == -np.inf or hrf.cexp_log_mse(a, x, y, 3) < -60
    assert hrf.cexp_log_mse(a, x + 0.1, y, 3) > -10

"""Tests of ``rfcheck.closed_forms.crt`` (Chefs' Random Tables) against independent references.

References, never the library's own rearrangements (DESIGN.md, strongest first):

* quadrature of the defining expectation (``rfcheck.quadrature``) for GERF and for the
  orthogonal-pair factor;
* series summed in mpmath (the double series behind ``orf_log_covariance_factor``);
* the paper's printed forms evaluated directly in mpmath at 60-80 digits: CRT sec 2.2
  (``exp(4 x.y) - K^2``, ``(1 - K^2)^2 / 2``), eq (22) for ``rho*`` and the first line of
  appendix 9.4 for the variance at ``A*``.

Inputs are float pair statistics that satisfy ``|x+y|^2 + |x-y|^2 = 2(|x|^2 + |y|^2)``
*exactly* (see :func:`exact_stats`), so that references that use different subsets of
them agree to all digits.  mpmath faces are always called at the caller's default
precision (``mp.dps = 15``) and must still deliver ``dps=50`` digits.

Tolerances start from float64 ``EPS``; every looser one says why.
"""

from __future__ import annotations

import math
import re

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rfcheck import quadrature
from rfcheck.closed_forms import crt

EPS = float(np.finfo(float).eps)
MP_RTOL = mpmath.mpf("1e-40")  # mpmath face at dps=50 vs references good to >= 44 digits
FP_RTOL = 1e-12  # float64 faces: the package's promise (DESIGN.md "Numerics")

LOG_VARIANCES = {
    "trig": crt.trig_log_variance,
    "positive": crt.positive_log_variance,
    "oprf": crt.oprf_log_variance,
}


# ----------------------------------------------------------------------------- helpers


def exact_stats(sq_x: float, sq_y: float, sq_sum: float) -> tuple[float, float, float, float]:
    """Float pair statistics with ``sq_sum + sq_diff == 2 (sq_x + sq_y)`` exactly.

    All four are integer multiples of one power of two ``q`` (integers below 2^51), so
    every sum and difference of them is exact; ``sq_sum`` is clipped to ``[0, 2(sq_x+sq_y)]``.
    """
    tot = 2.0 * (sq_x + sq_y)
    if tot == 0.0:
        return 0.0, 0.0, 0.0, 0.0
    q = 2.0 ** (math.frexp(tot)[1] - 51)
    kx, ky = round(sq_x / q), round(sq_y / q)
    kt = 2 * (kx + ky)
    ks = min(max(round(sq_sum / q), 0), kt)
    return kx * q, ky * q, ks * q, (kt - ks) * q


def realizable(nx: float, ny: float, cos: float) -> tuple[float, float, float, float]:
    """Exact statistics of a pair with norms ``nx, ny`` at angle ``arccos(cos)``."""
    return exact_stats(nx * nx, ny * ny, nx * nx + ny * ny + 2 * cos * nx * ny)


def near_antipodal(n: float, t: float) -> tuple[float, float, float, float]:
    """``|x| = |y| = n`` and ``|x + y|^2 = t |x - y|^2`` (x close to -y when t is tiny)."""
    return exact_stats(n * n, n * n, 4 * n * n * t / (1 + t))


def near_equal(n: float, t: float) -> tuple[float, float, float, float]:
    """``|x| = |y| = n`` and ``|x - y|^2 = t |x + y|^2`` (x close to y when t is tiny)."""
    return exact_stats(n * n, n * n, 4 * n * n / (1 + t))


def mpf_stats(stats):
    return [mpmath.mpf(v) for v in stats]


def assert_consistent_exactly(stats) -> None:
    sx, sy, ss, sd = mpf_stats(stats)
    with mpmath.workdps(100):
        assert ss + sd == 2 * (sx + sy)


def assert_log_close(got, ref, rows, *, atol: float, rtol: float, what: str) -> None:
    """``|got - ref| <= atol + rtol |ref|`` for log-values, -inf only where ref is -inf.

    On failure the message names the worst absolute difference and lists every bad row
    (SciPy ``assert_mpmath_equal`` style).
    """
    got = np.asarray(got, dtype=float)
    ref_f = np.array([float(r) for r in np.ravel(ref)]).reshape(got.shape)
    bad = []
    worst = (0.0, None)
    for i in np.ndindex(got.shape):
        g, r = got[i], ref[i] if isinstance(ref, np.ndarray) else ref
        if mpmath.isinf(r) or math.isinf(g) or math.isnan(g):
            if not (mpmath.isinf(r) and g == float(r)):
                bad.append((i, rows[i[0]] if rows is not None else None, g, float(r), math.inf))
            continue
        with mpmath.workdps(40):
            err = float(abs(mpmath.mpf(g) - r))
        if err > worst[0]:
            worst = (err, i)
        if not err <= atol + rtol * abs(ref_f[i]):
            bad.append((i, rows[i[0]] if rows is not None else None, g, float(r), err))
    if bad:
        lines = [f"{what}: {len(bad)} of {got.size} points out of tolerance "
                 f"(atol={atol:g}, rtol={rtol:g}); worst |diff| = {worst[0]:.3g} at {worst[1]}"]
        lines += [
            f"  {i} args={a} got={g!r} ref={r!r} |diff|={e:.3g}" for i, a, g, r, e in bad[:20]
        ]
        pytest.fail("\n".join(lines))


# ------------------------------------------------------------- independent references


def ref_positive_var(stats, dps: int = 60):
    """CRT sec 2.2 as printed: ``exp(4 x.y) - K^2``, ``x.y = (|x+y|^2 - |x-y|^2)/4``."""
    _, _, ss, sd = mpf_stats(stats)
    with mpmath.workdps(dps):
        xy = (ss - sd) / 4
        return mpmath.exp(4 * xy) - mpmath.exp(-sd)


def ref_trig_var(stats, dps: int = 60):
    """CRT sec 2.2 as printed: ``(1/2) (1 - K^2)^2``."""
    sd = mpmath.mpf(stats[3])
    with mpmath.workdps(dps):
        return (1 - mpmath.exp(-sd)) ** 2 / 2


def ref_rho_eq22(u, d: int, dps: int = 80):
    """The '+' root of CRT eq (22), exactly as printed (it cancels for small u: 80 digits)."""
    with mpmath.workdps(dps):
        u = mpmath.mpf(u)
        return (mpmath.sqrt((2 * u + d) ** 2 + 8 * d * u) - 2 * u - d) / (4 * u)


def ref_oprf_var(stats, d: int, dps: int = 80):
    """CRT appendix 9.4, first line, at ``A = (1 - 1/rho*)/8`` with rho* from eq (22)."""
    sx, sy, ss, sd = mpf_stats(stats)
    with mpmath.workdps(dps):
        a = (1 - 1 / ref_rho_eq22(ss, d, dps)) / 8
        second = ((1 - 4 * a) / mpmath.sqrt(1 - 8 * a)) ** d * mpmath.exp(
            2 * (1 - 4 * a) / (1 - 8 * a) * ss - 2 * (sx + sy)
        )
        return second - mpmath.exp(-sd)


def ref_gerf_eq6(stats, d: int, a, s: int, dps: int = 80):
    """CRT Thm 3.2, eq (6), exactly as printed (alpha_1..alpha_4), in mpmath."""
    sx, sy, ss, sd = mpf_stats(stats)
    with mpmath.workdps(dps):
        a = mpmath.mpmathify(a)
        v = ss if s == 1 else sd  # |x + s y|^2
        one8a = 1 - 8 * a
        a1 = mpmath.sqrt(1 + 16 * a**2 / one8a) ** d
        a2 = s + s / one8a
        a3 = (1 + 16 * abs(a) ** 2 / (1 - 8 * mpmath.re(a))) ** (mpmath.mpf(d) / 2)
        a4 = mpmath.mpf(s) / 2 + (s + 2 * abs(1 - 4 * a)) / (2 * (1 - 8 * mpmath.re(a)))
        pre = mpmath.exp(-(s + 1) * (sx + sy)) / 2
        second = pre * (mpmath.re(a1 * mpmath.exp(a2 * v)) + a3 * mpmath.exp(a4 * v))
        return second - mpmath.exp(-sd)


def ref_orf_series(u, d: int, dps: int = 70):
    """``e^{-u} sum_{k,l} (d/2)_k (d/2)_l / ((d/2)_{k+l} k! l!) (u/2)^{k+l}`` in mpmath.

    All terms are positive (no cancellation); summed by diagonals ``n = k + l`` until a
    diagonal past its peak is below ``10^-(dps+5)`` of the total.
    """
    with mpmath.workdps(dps):
        u = mpmath.mpf(u)
        h = mpmath.mpf(d) / 2
        x = u / 2
        coef = [mpmath.mpf(1)]  # (d/2)_k / k!
        total = mpmath.mpf(0)
        n = 0
        tiny = mpmath.mpf(10) ** (-(dps + 5))
        while True:
            if n > 0:
                coef.append(coef[-1] * (h + n - 1) / n)
            diag = mpmath.fsum(coef[k] * coef[n - k] for k in range(n + 1))
            term = diag * x**n / mpmath.rf(h, n)
            total += term
            if n > 2 * u + 10 and term < tiny * total:
                break
            n += 1
        return mpmath.exp(-u) * total


# ------------------------------------------------------------------- 1. reference values

VALUE_POINTS = [
    (0.5, 0.25, 1.0, 0.5),
    (0.75, 0.375, 0.25, 2.0),
    (4.0, 9.0, 0.0078125, 25.9921875),  # x close to -y
    (4.0, 4.0, 15.9990234375, 0.0009765625),  # x close to y
    (100.0, 121.0, 440.5, 1.5),  # large norms, e^{+400}-sized variances
    (300.0, 200.0, 2.0, 998.0),  # e^{-1000}-sized variances
]


@pytest.mark.parametrize("stats", VALUE_POINTS)
@pytest.mark.parametrize("kernel", ["gaussian", "softmax"])
def test_positive_against_printed_form(stats, kernel):
    assert_consistent_exactly(stats)
    shift = mpmath.mpf(stats[0]) + mpmath.mpf(stats[1]) if kernel == "softmax" else 0
    lib_mp = crt.positive_log_variance(*stats, 3, kernel=kernel, backend="mpmath", dps=50)
    lib_fp = crt.positive_log_variance(*stats, 3, kernel=kernel)
    with mpmath.workdps(60):
        ref = mpmath.log(ref_positive_var(stats)) + shift
        assert abs(lib_mp - ref) <= MP_RTOL, (lib_mp, ref)
        # float64: the exponents |x-y|^2, |x+y|^2 (and the kernel shift) are rounded once
        # each, an absolute error eps*|term| on the log, i.e. a relative one on the value
        scale = 1 + sum(stats)
        assert abs(lib_fp - ref) <= 8 * EPS * scale, (lib_fp, ref)


@pytest.mark.parametrize("stats", VALUE_POINTS)
@pytest.mark.parametrize("kernel", ["gaussian", "softmax"])
def test_trig_against_printed_form(stats, kernel):
    shift = mpmath.mpf(stats[0]) + mpmath.mpf(stats[1]) if kernel == "softmax" else 0
    lib_mp = crt.trig_log_variance(*stats, 3, kernel=kernel, backend="mpmath", dps=50)
    lib_fp = crt.trig_log_variance(*stats, 3, kernel=kernel)
    with mpmath.workdps(60):
        ref = mpmath.log(ref_trig_var(stats)) + shift
        assert abs(lib_mp - ref) <= MP_RTOL, (lib_mp, ref)
        assert abs(lib_fp - ref) <= 8 * EPS * (1 + sum(stats)), (lib_fp, ref)


def test_value_twins_keep_mpmath_precision():
    """``positive_variance(..., backend="mpmath", dps=50)`` is good to 40+ digits even when
    the caller's global precision is the default 15 digits."""
    assert mpmath.mp.dps == 15
    for stats in VALUE_POINTS[:4]:
        val = crt.positive_variance(*stats, 3, backend="mpmath", dps=50)
        tval = crt.trig_variance(*stats, 3, backend="mpmath", dps=50)
        with mpmath.workdps(60):
            ref, tref = ref_positive_var(stats), ref_trig_var(stats)
            assert abs(val - ref) <= MP_RTOL * ref, (val, ref)
            assert abs(tval - tref) <= MP_RTOL * tref, (tval, tref)
    assert mpmath.mp.dps == 15


# GERF against quadrature of the defining expectation (CRT eq 4-5, appendix 9.2-9.3).
# Each point costs ~1 s (tanh-sinh at 45 and 60 digits), so the fast suite keeps five.
GERF_QUAD_POINTS = [
    pytest.param((0.5, 0.25, 1.0, 0.5), 1, 0.0, 1, id="d1-posrf"),
    pytest.param((0.5, 0.375, 1.25, 0.5), 3, -0.25, 1, id="d3-realA-s+1"),
    pytest.param((0.5, 0.25, 0.5, 1.0), 3, 0.0625 + 0.03125j, -1, id="d3-complexA-s-1"),
    pytest.param((0.25, 0.375, 0.75, 0.5), 64, -0.125 + 0.03125j, 1, id="d64-complexA-s+1"),
    pytest.param((1.0, 0.75, 2.25, 1.25), 64, -0.375, -1, id="d64-realA-s-1"),
]
GERF_QUAD_POINTS_SLOW = [
    pytest.param((0.375, 0.25, 1.0, 0.25), 1, 0.03125 - 0.0625j, -1, id="d1-complexA-s-1"),
    pytest.param((2.0, 1.5, 6.5, 0.5), 3, 0.0625, 1, id="d3-positiveA"),
    pytest.param((0.375, 0.25, 1.0, 0.25), 3, 0.125j, 1, id="d3-imagA"),
    pytest.param((0.5, 0.5, 0.25, 1.75), 64, 0.1 + 0.1j, -1, id="d64-complexA-s-1"),
]


def _check_gerf_against_quadrature(stats, d, a, s):
    assert_consistent_exactly(stats)
    ref = quadrature.gerf_reference(*stats, d, a, s, dps=45)
    lib_mp = crt.gerf_log_variance(*stats, d, a, s, backend="mpmath", dps=50)
    lib_fp = crt.gerf_log_variance(*stats, d, a, s)
    with mpmath.workdps(60):
        var, err = ref["var"].value, ref["var"].err
        assert err <= MP_RTOL * abs(var) / 10, "the reference itself is not good to 41 digits"
        # the mean is K (Thm 3.1) -- a check that the quadrature sees the right feature map
        k = mpmath.exp(-mpmath.mpf(stats[3]) / 2)
        assert abs(ref["mean"].value - k) <= ref["mean"].err + MP_RTOL * k
        assert var > 0
        log_ref = mpmath.log(var)
        assert abs(lib_mp - log_ref) <= MP_RTOL + err / var, (lib_mp, log_ref)
        # float64: z1, z2 carry d/2 log(...) and |x + s y|^2-sized terms rounded once each
        assert abs(lib_fp - log_ref) <= 16 * EPS * (1 + d + sum(stats)), (lib_fp, log_ref)
        # and eq (6) as printed agrees with the quadrature (so it may serve as a reference)
        assert abs(ref_gerf_eq6(stats, d, a, s) - var) <= MP_RTOL * var + err


@pytest.mark.parametrize(("stats", "d", "a", "s"), GERF_QUAD_POINTS)
def test_gerf_against_quadrature(stats, d, a, s):
    _check_gerf_against_quadrature(stats, d, a, s)


@pytest.mark.slow
@pytest.mark.parametrize(("stats", "d", "a", "s"), GERF_QUAD_POINTS_SLOW)
def test_gerf_against_quadrature_more(stats, d, a, s):
    _check_gerf_against_quadrature(stats, d, a, s)


GERF_EQ6_PARAMS = [
    (0.0, 1), (0.0, -1), (-0.1, 1), (0.1, 1), (0.05, -1), (-2.0, 1), (0.12, 1),
    (-0.1 + 0.05j, 1), (0.02 - 0.05j, -1), (0.3j, 1), (-0.5 + 0.5j, -1),
]


@pytest.mark.parametrize(("a", "s"), GERF_EQ6_PARAMS)
@pytest.mark.parametrize("d", [1, 3, 64, 1024])
def test_gerf_against_printed_eq6(a, s, d):
    """Eq (6) as printed, at 80 digits (itself tied to quadrature above), at many points."""
    points = VALUE_POINTS
    lib_mp = [crt.gerf_log_variance(*p, d, a, s, backend="mpmath", dps=50) for p in points]
    lib_fp = crt.gerf_log_variance(*[np.array(c) for c in zip(*points, strict=True)], d, a, s)
    with mpmath.workdps(80):
        refs = np.array([mpmath.log(ref_gerf_eq6(p, d, a, s)) for p in points], dtype=object)
        for p, got, ref in zip(points, lib_mp, refs, strict=True):
            # the printed form subtracts K^2 from a sum of exponentials; 80 digits cover the
            # cancellation at these points (relative size of the variance >= 1e-20)
            assert abs(got - ref) <= MP_RTOL * max(1, abs(ref)), (p, got, ref)
    assert_log_close(lib_fp, refs, points, atol=FP_RTOL, rtol=8 * EPS, what=f"gerf A={a} s={s}")


RHO_POINTS = [1e-12, 1e-6, 0.1, 1.0, 10.0, 1e3, 1e5]


@pytest.mark.parametrize("d", [1, 3, 64, 1024])
def test_oprf_rho_and_a_star_against_eq22(d):
    us = np.array(RHO_POINTS)
    rho_fp = crt.oprf_rho_star(us, d)
    a_fp = crt.oprf_a_star(us, d)
    for i, u in enumerate(us):
        rho_mp = crt.oprf_rho_star(u, d, backend="mpmath", dps=50)
        a_mp = crt.oprf_a_star(u, d, backend="mpmath", dps=50)
        with mpmath.workdps(80):
            rho = ref_rho_eq22(u, d)
            a_star = (1 - 1 / rho) / 8
            assert abs(rho_mp - rho) <= MP_RTOL * rho, (u, d, rho_mp, rho)
            assert abs(a_mp - a_star) <= MP_RTOL * abs(a_star), (u, d, a_mp, a_star)
            # float64: the rationalised forms do not cancel; a handful of roundings
            assert abs(rho_fp[i] - rho) <= 8 * EPS * rho, (u, d, rho_fp[i], rho)
            assert abs(a_fp[i] - a_star) <= 16 * EPS * abs(a_star), (u, d, a_fp[i], a_star)


def test_oprf_limits_at_u_zero():
    """Note after Thm 3.3: ``rho* -> 1`` and ``A* -> 0`` as ``|x + y| -> 0``."""
    assert crt.oprf_rho_star(0.0, 5) == 1.0
    assert crt.oprf_a_star(0.0, 5) == 0.0
    assert crt.oprf_rho_star(0.0, 5, backend="mpmath") == 1
    assert crt.oprf_a_star(0.0, 5, backend="mpmath") == 0


OPRF_POINTS = [p for p in VALUE_POINTS if p[2] > 0] + [
    near_antipodal(3.0, 1e-12),
    near_antipodal(0.001, 1e-3),
    near_equal(10.0, 1e-10),
]


@pytest.mark.parametrize("stats", OPRF_POINTS)
@pytest.mark.parametrize("d", [1, 3, 64, 1024])
def test_oprf_variance_against_appendix_9_4(stats, d):
    assert_consistent_exactly(stats)
    lib_mp = crt.oprf_log_variance(*stats, d, backend="mpmath", dps=50)
    lib_fp = crt.oprf_log_variance(*stats, d)
    lib_val = crt.oprf_variance(*stats, d, backend="mpmath", dps=50)
    with mpmath.workdps(80):
        ref = ref_oprf_var(stats, d)
        assert ref > 0
        log_ref = mpmath.log(ref)
        assert abs(lib_mp - log_ref) <= MP_RTOL * max(1, abs(log_ref)), (lib_mp, log_ref)
        assert abs(lib_val - ref) <= 2 * MP_RTOL * max(1, abs(log_ref)) * ref
        # float64: |x-y|^2 and rho* u are rounded once each (absolute eps*|term| on the log)
        assert abs(lib_fp - log_ref) <= 16 * EPS * (1 + sum(stats)), (lib_fp, log_ref)


ORF_POINTS = [(0.01, 2), (0.5, 3), (2.0, 8), (7.0, 64), (1e-3, 1024), (30.0, 5), (1e-8, 3)]


@pytest.mark.parametrize(("u", "d"), ORF_POINTS)
def test_orf_covariance_factor_against_double_series(u, d):
    lib_mp = crt.orf_log_covariance_factor(u, d, backend="mpmath", dps=50)
    lib_fp = crt.orf_log_covariance_factor(u, d)
    with mpmath.workdps(70):
        ref = mpmath.log(ref_orf_series(u, d))
        assert ref < 0  # Thm 4.1: G < 0 for u > 0
        assert abs(lib_mp - ref) <= MP_RTOL * abs(ref), (lib_mp, ref)
        # float64: log 1F1 cancels against u/2; the fallback recomputes points whose
        # conditioning exceeds 1e3, so at most ~1e3 eps relative is lost
        assert abs(lib_fp - ref) <= FP_RTOL * abs(ref), (lib_fp, ref)


@pytest.mark.parametrize(("u", "d"), [(0.2, 2), (0.5, 3), (2.0, 8), (7.0, 64)])
def test_orf_covariance_factor_against_quadrature(u, d):
    ref = quadrature.orf_pair_factor(u, d, dps=20)
    lib = crt.orf_log_covariance_factor(u, d, backend="mpmath", dps=50)
    with mpmath.workdps(40):
        assert ref.err < 1e-10 * abs(1 - ref.value), "reference too coarse to test G"
        assert abs(mpmath.exp(lib) - ref.value) <= 2 * ref.err + 1e-30, (lib, ref)


@pytest.mark.parametrize(
    ("a", "s", "d"), [(0.0, 1, 1), (-0.3, 1, 3), (0.1 + 0.05j, -1, 2), (-0.2 - 0.1j, 1, 5)]
)
def test_gerf_coefficients_give_an_unbiased_estimator(a, s, d):
    """``E f1 f2 = K`` (Thm 3.1) by quadrature, with the library's (A, B, C, D)."""
    aa, b, c, dd = crt.gerf_coefficients(a, s, d)
    assert aa == a
    # eq (18): s B^2 = 1 - 4A, B^2/(2(1-4A)) + C = -1/2, and D^4 = (1-4A)^d
    assert s * b * b == pytest.approx(1 - 4 * a, rel=4 * EPS)
    assert b * b / (2 * (1 - 4 * a)) + c == pytest.approx(-0.5, abs=4 * EPS)
    assert dd**4 == pytest.approx((1 - 4 * a) ** d, rel=16 * d * EPS)
    assert c == -(s + 1) / 2
    stats = (0.5, 0.25, 1.0, 0.5)
    v = stats[2] if s == 1 else stats[3]
    with mpmath.workdps(25):
        i1, _ = quadrature.gaussian_exp_moment(2 * mpmath.mpc(aa), mpmath.mpc(b) * mpmath.sqrt(v))
        i0, _ = quadrature.gaussian_exp_moment(2 * mpmath.mpc(aa), 0)
        mean = mpmath.mpc(dd) ** 2 * mpmath.exp(c * (stats[0] + stats[1])) * i1 * i0 ** (d - 1)
        k = mpmath.exp(-mpmath.mpf(stats[3]) / 2)
        # B and D are complex128: a few roundings of O(1) numbers raised to the power d
        assert abs(mean - k) <= 32 * d * EPS * k, (mean, k)


def test_raw_moments_match_kernel_and_variance():
    """``E X = K`` (Thm 3.1) and ``E X^2 = Var + K^2`` (Thm 3.2) for real A, s = +1."""
    for stats in VALUE_POINTS[:4]:
        for a in (-1.0, -0.1, 0.0, 0.05):
            for d in (1, 7):
                m1 = crt.gerf_log_raw_moment(1, *stats, d, a, backend="mpmath", dps=50)
                m2 = crt.gerf_log_raw_moment(2, *stats, d, a, backend="mpmath", dps=50)
                lv = crt.gerf_log_variance(*stats, d, a, 1, backend="mpmath", dps=50)
                with mpmath.workdps(50):
                    log_k = -mpmath.mpf(stats[3]) / 2
                    assert abs(m1 - log_k) <= MP_RTOL
                    assert abs(mpmath.exp(m2) - (mpmath.exp(lv) + mpmath.exp(2 * log_k))) <= (
                        MP_RTOL * mpmath.exp(m2)
                    )


# --------------------------------------------------- 2. float64 across orders of magnitude


def magnitude_grid() -> list[tuple[float, float, float, float]]:
    """Pair statistics spanning every order of magnitude (SciPy ``Arg``-generator style).

    Norms on a log grid from 1e-6 to 20 (so variances range over e^-1600..e^+1600), generic
    angles, and the two interesting edges: ``|x + y|`` tiny (OPRF variance -> 0) and
    ``|x - y|`` tiny (TrigRF variance -> 0), down to 1e-14 relative.
    """
    norms = np.geomspace(1e-6, 20.0, 7)
    pts = []
    for nx in norms:
        for ny in norms:
            for cos in (-0.99, -0.3, 0.5, 1.0):
                pts.append(realizable(float(nx), float(ny), cos))
    for n in norms:
        for t in (1e-14, 1e-12, 1e-8, 1e-3):
            pts.append(near_antipodal(float(n), t))
            pts.append(near_equal(float(n), t))
    return pts


GRID = magnitude_grid()
GRID_COLS = [np.array(c) for c in zip(*GRID, strict=True)]


def _mp_column(fn, *extra, **kw):
    return np.array([fn(*p, *extra, backend="mpmath", dps=40, **kw) for p in GRID], dtype=object)


# 1e-12 absolute on the log = 1e-12 relative on the variance; plus 8 eps relative on the
# log itself, for |log Var| in the hundreds (the exponents are rounded once each)
GRID_ATOL, GRID_RTOL = FP_RTOL, 8 * EPS


@pytest.mark.parametrize("name", sorted(LOG_VARIANCES))
@pytest.mark.parametrize("kernel", ["gaussian", "softmax"])
def test_log_variances_across_magnitudes(name, kernel):
    fn = LOG_VARIANCES[name]
    for d in (1, 64, 1024) if name == "oprf" else (3,):
        got = fn(*GRID_COLS, d, kernel=kernel)
        assert got.shape == (len(GRID),)
        ref = _mp_column(fn, d, kernel=kernel)
        assert_log_close(got, ref, GRID, atol=GRID_ATOL, rtol=GRID_RTOL, what=f"{name} d={d}")
        # no NaN, no +inf; -inf only where the variance is exactly zero
        assert not np.any(np.isnan(got)) and not np.any(got == np.inf)
        zero = GRID_COLS[3] == 0 if name == "trig" else GRID_COLS[2] == 0
        assert np.all(np.isfinite(got) | zero)


@pytest.mark.parametrize(("a", "s"), GERF_EQ6_PARAMS)
def test_gerf_log_variance_across_magnitudes(a, s):
    for d in (1, 64, 1024):
        got = crt.gerf_log_variance(*GRID_COLS, d, a, s)
        ref = _mp_column(crt.gerf_log_variance, d, a, s)
        what = f"gerf A={a} s={s} d={d}"
        assert_log_close(got, ref, GRID, atol=GRID_ATOL, rtol=GRID_RTOL, what=what)
        assert not np.any(np.isnan(got)) and not np.any(got == np.inf)


def test_orf_covariance_factor_across_magnitudes():
    us = np.concatenate([[0.0], np.geomspace(1e-14, 3e3, 60)])
    for d in (2, 3, 16, 256, 1024):
        got = crt.orf_log_covariance_factor(us, d)
        ref = np.array([crt.orf_log_covariance_factor(u, d, backend="mpmath", dps=40) for u in us])
        # log(1 + G) = -u^2/(2(d+2)) + ... is tiny for small u: compare relatively (the
        # fallback bounds the loss from cancelling -u/2 + log 1F1 by ~1e3 eps)
        rows = [(u, d) for u in us]
        assert_log_close(got, ref, rows, atol=1e-300, rtol=FP_RTOL, what=f"log(1+G) d={d}")


def test_oprf_log_variance_ratio_across_magnitudes():
    us = np.geomspace(1e-300, 1e4, 200)
    for d in (1, 3, 64, 1024):
        got = crt.oprf_log_variance_ratio(us, d)
        ref = np.array([crt.oprf_log_variance_ratio(u, d, backend="mpmath", dps=40) for u in us])
        # a difference of two logs of size max(|log u|, u): 8 eps * 700 absolute for tiny
        # u, 8 eps relative for large u (where mu ~ -u)
        assert_log_close(got, ref, [(u, d) for u in us], atol=8 * EPS * 700, rtol=8 * EPS,
                         what=f"mu d={d}")


@pytest.mark.parametrize("coupling", ["orf", "iid"])
@pytest.mark.parametrize("a", [-2.0, -0.1, 0.05])
def test_orf_gerf_log_variance_across_magnitudes(coupling, a):
    sub = GRID[::3]
    cols = [np.array(c) for c in zip(*sub, strict=True)]
    for d in (3, 64):
        for m in (2, d, 2 * d + 1):
            got = crt.orf_gerf_log_variance(*cols, d, a, m, coupling=coupling)
            ref = np.array(
                [crt.orf_gerf_log_variance(*p, d, a, m, coupling=coupling, backend="mpmath",
                                           dps=40) for p in sub],
                dtype=object,
            )
            what = f"orf_gerf {coupling} A={a} d={d} M={m}"
            assert_log_close(got, ref, sub, atol=GRID_ATOL, rtol=GRID_RTOL, what=what)


@pytest.mark.parametrize(
    ("fn", "extra", "kernel"),
    [
        (crt.positive_variance, (), "gaussian"),
        (crt.oprf_variance, (), "softmax"),  # OPRF is bounded; the softmax factor is not
        (crt.gerf_variance, (0.05, 1), "gaussian"),
        (crt.orf_gerf_variance, (0.05, 4), "gaussian"),
    ],
)
def test_value_space_refuses_to_overflow(fn, extra, kernel):
    stats = (400.0, 400.0, 1590.0, 10.0)  # log Var in the hundreds, past float64's 709.78
    name = fn.__name__
    with pytest.raises(ValueError, match=rf"{name} exceeds the float64 range") as info:
        fn(*stats, 3, *extra, kernel=kernel)
    # the message says how to fix the call: name a log-space function that exists
    suggested = re.search(r"use (\w+)", str(info.value)).group(1)
    assert hasattr(crt, suggested), f"the message suggests {suggested!r}, which crt lacks"
    log_fn = getattr(crt, name.replace("_variance", "_log_variance"))
    lv = log_fn(*stats, 3, *extra, kernel=kernel)
    assert np.isfinite(lv) and lv > 709.78
    assert mpmath.isfinite(fn(*stats, 3, *extra, kernel=kernel, backend="mpmath"))


def test_softmax_factor_alone_can_overflow():
    with pytest.raises(ValueError, match="trig_variance exceeds the float64 range"):
        crt.trig_variance(400.0, 400.0, 1500.0, 100.0, 3, kernel="softmax")


def test_value_space_matches_log_space():
    cols = [np.array(c) for c in zip(*VALUE_POINTS[:5], strict=True)]
    for name in ("positive", "trig", "oprf"):
        val = getattr(crt, f"{name}_variance")(*cols, 3)
        lv = getattr(crt, f"{name}_log_variance")(*cols, 3)
        np.testing.assert_allclose(val, np.exp(lv), rtol=4 * EPS)
        assert val.shape == lv.shape


# --------------------------------------------------------------- 3. Hypothesis properties

_LOG_MIN, _LOG_MAX = -6.0, math.log10(20.0)


@st.composite
def pair_stats_st(draw, zeros: bool = True):
    """Exactly consistent, realizable pair statistics over every order of magnitude."""
    kinds = ["generic", "antipodal", "equal"] + (["x=-y", "x=y"] if zeros else [])
    kind = draw(st.sampled_from(kinds))
    nx = 10 ** draw(st.floats(_LOG_MIN, _LOG_MAX, allow_nan=False))
    if kind == "generic":
        ny = 10 ** draw(st.floats(_LOG_MIN, _LOG_MAX, allow_nan=False))
        cos = draw(st.floats(-1.0, 1.0, allow_nan=False))
        return realizable(nx, ny, cos)
    if kind in ("antipodal", "equal"):
        t = 10 ** draw(st.floats(-14.0, -1.0, allow_nan=False))
        return near_antipodal(nx, t) if kind == "antipodal" else near_equal(nx, t)
    return exact_stats(nx * nx, nx * nx, 0.0 if kind == "x=-y" else 4 * nx * nx)


dims = st.sampled_from([1, 2, 3, 5, 16, 64, 256, 1024])
real_a = st.floats(-5.0, 0.124, allow_nan=False)  # Re(1 - 8A) > 0
complex_a = st.builds(
    complex, st.floats(-2.0, 0.12, allow_nan=False), st.floats(-2.0, 2.0, allow_nan=False)
)
signs = st.sampled_from([-1, 1])
u_st = st.floats(1e-300, 1e5, allow_nan=False)


def _close(got, ref, scale=0.0):
    """float64 log-values: 1e-12 absolute plus 8 eps of the exponent sizes (see GRID)."""
    if math.isinf(got) or math.isinf(ref):
        return got == ref
    return abs(got - ref) <= FP_RTOL + 8 * EPS * (abs(ref) + scale)


@given(pair_stats_st(), dims)
def test_gerf_reduces_to_posrf_and_trigrf(stats, d):
    """CRT sec 3.1: A = 0, s = +1 is PosRF; A = 0, s = -1 is TrigRF."""
    pos = crt.positive_log_variance(*stats, d)
    trig = crt.trig_log_variance(*stats, d)
    assert _close(crt.gerf_log_variance(*stats, d, 0.0, 1), pos, sum(stats))
    assert _close(crt.gerf_log_variance(*stats, d, 0.0, -1), trig, sum(stats))


@given(pair_stats_st(), dims, st.one_of(real_a, complex_a), signs)
def test_gerf_variance_is_nonnegative(stats, d, a, s):
    lv = crt.gerf_log_variance(*stats, d, a, s)
    assert not math.isnan(lv) and lv != math.inf
    exactly_zero = a == 0 and ((s == 1 and stats[2] == 0) or (s == -1 and stats[3] == 0))
    assert math.isfinite(lv) or exactly_zero


@given(u_st, dims)
def test_rho_star_and_a_star_ranges(u, d):
    rho = crt.oprf_rho_star(u, d)
    a = crt.oprf_a_star(u, d)
    assert 0 < rho <= 1
    assert a < 0  # Note after Thm 3.3: A* < 0 for x != -y
    rho_mp = crt.oprf_rho_star(u, d, backend="mpmath", dps=50)
    a_mp = crt.oprf_a_star(u, d, backend="mpmath", dps=50)
    with mpmath.workdps(50):
        assert 0 < rho_mp <= 1 and a_mp < 0
        # A* = (1 - 1/rho*)/8, written rho* = 1/(1 - 8A*) which does not cancel for small u
        assert abs(1 / (1 - 8 * a_mp) - rho_mp) <= MP_RTOL * rho_mp
        # rho* solves eq (22): 2u rho^2 + (2u + d) rho - d = 0
        um = mpmath.mpf(u)
        assert abs(2 * um * rho_mp**2 + (2 * um + d) * rho_mp - d) <= MP_RTOL * (4 * um + d)


@given(u_st, u_st, dims)
def test_mu_is_nonpositive_and_nonincreasing(u1, u2, d):
    u1, u2 = min(u1, u2), max(u1, u2)
    m1, m2 = crt.oprf_log_variance_ratio(np.array([u1, u2]), d)
    # mu is a difference of two logs of size up to max(|log u|, u), each rounded
    slack = 16 * EPS * (1 + abs(math.log(u1)) + abs(math.log(u2)) + u2)
    assert m1 <= slack and m2 <= slack
    assert m2 <= m1 + slack
    p1 = crt.oprf_log_variance_ratio(u1, d, backend="mpmath", dps=50)
    p2 = crt.oprf_log_variance_ratio(u2, d, backend="mpmath", dps=50)
    with mpmath.workdps(50):
        tiny = mpmath.mpf("1e-45") * (1 + abs(mpmath.log(u1)) + u2)
        assert p1 <= tiny and p2 <= p1 + tiny


def test_mu_at_u_zero_is_its_limit():
    """``mu -> 0`` as ``u -> 0`` (docstring, CRT Fig. 1 right); u = 0 is in the domain."""
    assert crt.oprf_log_variance_ratio(0.0, 3) == 0.0
    assert crt.oprf_log_variance_ratio(np.array([0.0, 1e-300]), 3)[0] == 0.0
    assert crt.oprf_log_variance_ratio(0.0, 3, backend="mpmath") == 0


@given(pair_stats_st(zeros=False), dims, real_a)
def test_oprf_is_the_minimum_over_real_a(stats, d, a):
    """Thm 3.3: at s = +1, A* minimises eq (6) over real A with 1 - 8A > 0."""
    assume(stats[2] > 0)
    opt = crt.oprf_log_variance(*stats, d)
    other = crt.gerf_log_variance(*stats, d, a, 1)
    # both are rounded at the size of their exponents; equality is reached at A = A*
    assert opt <= other + FP_RTOL + 8 * EPS * (abs(other) + sum(stats) + d)
    opt_mp = crt.oprf_log_variance(*stats, d, backend="mpmath", dps=50)
    other_mp = crt.gerf_log_variance(*stats, d, a, 1, backend="mpmath", dps=50)
    with mpmath.workdps(50):
        assert opt_mp <= other_mp + MP_RTOL * (1 + abs(other_mp))


@given(pair_stats_st(), st.integers(2, 256), real_a, st.data())
def test_orf_variance_at_most_iid(stats, d, a, data):
    """Thm 4.1: orthogonal projections do not increase the GERF (s = +1) variance."""
    m = data.draw(st.integers(1, d), label="M")
    orf = crt.orf_gerf_log_variance(*stats, d, a, m)
    iid = crt.orf_gerf_log_variance(*stats, d, a, m, coupling="iid")
    single = crt.gerf_log_variance(*stats, d, a, 1)
    assert not math.isnan(orf) and not math.isnan(iid)
    assert _close(iid, single - math.log(m), sum(stats))  # Var_iid = Var_1 / M
    if iid == -math.inf:  # x = -y with A = 0: every sample is exactly K
        assert orf == -math.inf
    else:
        assert orf <= iid + FP_RTOL + 8 * EPS * (abs(iid) + sum(stats))
    if m == 1:
        assert orf == iid


@given(st.floats(0.0, 3e3, allow_nan=False), st.integers(2, 1024))
def test_orf_covariance_factor_is_nonpositive(u, d):
    """Thm 4.1's key fact, G = Cov/K^2 <= 0, i.e. log(1 + G) <= 0 (0 exactly at u = 0)."""
    lg = crt.orf_log_covariance_factor(u, d)
    assert lg <= 0
    if u == 0:
        assert lg == 0
    elif u > 1e-100:  # below, -u^2/(2(d+2)) underflows
        assert lg < 0


@given(pair_stats_st(), dims, st.one_of(real_a, complex_a), signs)
def test_softmax_is_gaussian_times_norm_factor(stats, d, a, s):
    """CRT sec 2.1: softmax features are Gaussian ones times exp(|x|^2/2), exp(|y|^2/2)."""
    shift = stats[0] + stats[1]
    cases = [(fn, ()) for fn in LOG_VARIANCES.values()] + [(crt.gerf_log_variance, (a, s))]
    for fn, extra in cases:
        g = fn(*stats, d, *extra)
        sm = fn(*stats, d, *extra, kernel="softmax")
        if math.isinf(g):
            assert sm == g
        else:
            assert abs(sm - (g + shift)) <= 4 * EPS * (abs(g) + shift)
    # the mpmath face adds the factor exactly, at the requested precision
    g = crt.positive_log_variance(*stats, d, backend="mpmath", dps=50)
    sm = crt.positive_log_variance(*stats, d, kernel="softmax", backend="mpmath", dps=50)
    if mpmath.isfinite(g):
        with mpmath.workdps(60):
            assert abs(sm - g - (mpmath.mpf(stats[0]) + mpmath.mpf(stats[1]))) <= MP_RTOL * (
                1 + abs(sm)
            )


# coordinates 0 or of size >= 1e-100, so that no square underflows (pair_stats is float64)
coords = st.one_of(
    st.just(0.0), st.floats(1e-100, 20.0), st.floats(-20.0, -1e-100)
)
vectors = st.integers(1, 12).flatmap(
    lambda d: st.tuples(*[st.lists(coords, min_size=d, max_size=d) for _ in range(2)])
)


@given(vectors)
def test_pair_stats_consistency(xy):
    x, y = (np.array(v) for v in xy)
    d = x.size
    ps = crt.pair_stats(x, y)
    assert set(ps) == {"sq_x", "sq_y", "sq_sum", "sq_diff", "d"}
    assert ps["d"] == d
    for key in ("sq_x", "sq_y", "sq_sum", "sq_diff"):
        assert ps[key].shape == (1,)
    with mpmath.workdps(60):
        mx, my = [mpmath.mpf(float(v)) for v in x], [mpmath.mpf(float(v)) for v in y]
        exact = {
            "sq_x": mpmath.fsum(v * v for v in mx),
            "sq_y": mpmath.fsum(v * v for v in my),
            "sq_sum": mpmath.fsum((a + b) ** 2 for a, b in zip(mx, my, strict=True)),
            "sq_diff": mpmath.fsum((a - b) ** 2 for a, b in zip(mx, my, strict=True)),
        }
        # sums of d non-negative terms, each (x_i +- y_i)^2 rounded up to 3 times:
        # at most (d + 4) eps relative
        for key, val in exact.items():
            assert abs(ps[key][0] - val) <= (d + 4) * EPS * val, key
        # PosRF variance exp(4 x.y) - K^2 (CRT sec 2.2) from the exact vector statistics;
        # written K^2 expm1(|x+y|^2) so that 60 digits survive x = -y up to the last bit
        ref = mpmath.exp(-exact["sq_diff"]) * mpmath.expm1(exact["sq_sum"])
    lv = crt.positive_log_variance(**ps)[0]  # accepted: the stats are consistent
    if ref == 0:
        assert lv == -math.inf
    else:
        with mpmath.workdps(60):
            err = abs(lv - mpmath.log(ref))
        # (d + 4) eps relative error of the stats carried through -|x-y|^2 + log expm1(|x+y|^2),
        # plus the rounding of the log-value itself (|log Var| reaches ~460 here)
        scale = 1 + float(exact["sq_sum"]) + float(exact["sq_diff"])
        assert err <= 4 * (d + 4) * EPS * scale + 2 * EPS * abs(lv), (lv, ref)


def test_pair_stats_batches():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    ps = crt.pair_stats(x, y)
    assert ps["d"] == 4
    np.testing.assert_allclose(ps["sq_x"], np.einsum("ij,ij->i", x, x), rtol=4 * EPS)
    np.testing.assert_allclose(ps["sq_sum"], np.einsum("ij,ij->i", x + y, x + y), rtol=4 * EPS)
    lv = crt.oprf_log_variance(**ps)
    assert lv.shape == (5,)
    for i in range(5):
        one = crt.pair_stats(x[i], y[i])
        assert crt.oprf_log_variance(**one)[0] == pytest.approx(lv[i], rel=2 * EPS, abs=2 * EPS)


# ------------------------------------------------------------- 4. invalid parameters

GOOD = (0.5, 0.25, 1.0, 0.5)
NAN, INF = float("nan"), float("inf")


_S = GOOD
_ARR = (np.array([1.0, NAN]), np.array([0.5, 0.5]))
# (label, function, positional arguments, keyword arguments, message pattern)
BAD = [
    ("gerf Re(1-8A)", crt.gerf_log_variance, (*_S, 3, 0.125, 1), {}, r"Re\(1 - 8A\) > 0"),
    ("gerf Re(1-8A) complex", crt.gerf_log_variance, (*_S, 3, 0.2 + 1j, 1), {},
     r"Re\(1 - 8A\) > 0"),
    ("gerf_variance Re(1-8A)", crt.gerf_variance, (*_S, 3, 0.5, -1), {}, r"Re\(1 - 8A\) > 0"),
    ("gerf s=0", crt.gerf_log_variance, (*_S, 3, 0.0, 0), {}, r"s must be -1 or \+1"),
    ("gerf s=2", crt.gerf_log_variance, (*_S, 3, 0.0, 2), {}, r"s must be -1 or \+1"),
    ("gerf s=True", crt.gerf_log_variance, (*_S, 3, 0.0, True), {}, r"s must be -1 or \+1"),
    ("gerf A nan", crt.gerf_log_variance, (*_S, 3, NAN, 1), {}, "A must be finite"),
    ("gerf A inf", crt.gerf_log_variance, (*_S, 3, complex(0, INF), 1), {}, "A must be finite"),
    ("d=0", crt.positive_log_variance, (*_S, 0), {}, r"d must be an integer >= 1"),
    ("d=-3", crt.oprf_log_variance, (*_S, -3), {}, r"d must be an integer >= 1"),
    ("d=2.5", crt.trig_log_variance, (*_S, 2.5), {}, r"d must be an integer >= 1"),
    ("gerf d=0", crt.gerf_log_variance, (*_S, 0, -0.1, 1), {}, r"d must be an integer >= 1"),
    ("rho d=0", crt.oprf_rho_star, (1.0, 0), {}, r"d must be an integer >= 1"),
    ("sq_x nan", crt.positive_log_variance, (NAN, *_S[1:], 3), {}, "sq_x must be finite"),
    ("sq_diff inf", crt.trig_log_variance, (*_S[:3], INF, 3), {}, "sq_diff must be finite"),
    ("sq_sum nan in array", crt.oprf_log_variance, (*_S[:2], *_ARR, 3), {},
     "sq_sum must be finite"),
    ("sq_y < 0", crt.positive_log_variance, (0.5, -0.25, 1.0, -1.0, 3), {},
     r"sq_y = \|\.\|\^2 must be >= 0"),
    ("sq_sum < 0", crt.gerf_log_variance, (0.5, 0.25, -1.0, 2.5, 3, -0.1, 1), {},
     r"sq_sum = \|\.\|\^2 must be >= 0"),
    ("inconsistent", crt.positive_log_variance, (0.5, 0.25, 1.0, 0.75, 3), {},
     "pair statistics are inconsistent"),
    ("inconsistent gerf", crt.gerf_log_variance, (1.0, 1.0, 1.0, 1.0, 3, 0.0, -1), {},
     "pair statistics are inconsistent"),
    ("u nan", crt.oprf_rho_star, (NAN, 3), {}, r"\|x\+y\|\^2 must be finite"),
    ("u inf", crt.oprf_log_variance_ratio, (INF, 3), {}, r"\|x\+y\|\^2 must be finite"),
    ("u < 0", crt.oprf_a_star, (-1.0, 3), {}, r"\|x\+y\|\^2 must be >= 0"),
    ("orf u < 0", crt.orf_log_covariance_factor, (-1.0, 3), {}, r"must be >= 0"),
    ("kernel", crt.positive_log_variance, (*_S, 3), {"kernel": "laplace"},
     "kernel must be one of"),
    ("kernel gerf", crt.gerf_variance, (*_S, 3, 0.0, 1), {"kernel": "Gaussian"},
     "kernel must be one of"),
    ("M=0", crt.orf_gerf_log_variance, (*_S, 3, -0.1, 0), {}, r"M must be an integer >= 1"),
    ("coupling", crt.orf_gerf_log_variance, (*_S, 3, -0.1, 2), {"coupling": "simplex"},
     "coupling must be 'iid' or 'orf'"),
    ("orf complex A", crt.orf_gerf_log_variance, (*_S, 3, -0.1 + 0.1j, 2), {}, "needs real A"),
    ("raw moment 1-4kA", crt.gerf_log_raw_moment, (4, *_S, 3, 0.07), {},
     r"E\[X\^k\] is finite only if 1 - 4kA > 0"),
    ("raw moment complex A", crt.gerf_log_raw_moment, (2, *_S, 3, 0.01j), {},
     "A must be real and finite"),
]


@pytest.mark.parametrize("backend", ["float64", "mpmath"])
@pytest.mark.parametrize(("label", "fn", "args", "kwargs", "match"), BAD, ids=[b[0] for b in BAD])
def test_invalid_parameters_raise(label, fn, args, kwargs, match, backend):
    with pytest.raises(ValueError, match=match):
        fn(*args, backend=backend, **kwargs)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0.25, 1, 3), r"Re\(1 - 4A\) > 0"),
        ((0.3 + 2j, -1, 3), r"Re\(1 - 4A\) > 0"),
        ((0.0, 0, 3), r"s must be -1 or \+1"),
        ((0.0, 1, 0), r"d must be an integer >= 1"),
        ((complex(NAN, 0), 1, 3), "A must be finite"),
    ],
)
def test_gerf_coefficients_invalid(args, match):
    with pytest.raises(ValueError, match=match):
        crt.gerf_coefficients(*args)


def test_pair_stats_invalid():
    with pytest.raises(ValueError, match="x and y must have the same shape"):
        crt.pair_stats(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="x and y must have the same shape"):
        crt.pair_stats(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="x must be finite"):
        crt.pair_stats(np.array([1.0, NAN]), np.ones(2))
    with pytest.raises(ValueError, match=r"must have shape \(d,\) or \(L, d\)"):
        crt.pair_stats(np.ones((1, 2, 2)), np.ones((1, 2, 2)))


def test_backend_and_precision_arguments_invalid():
    with pytest.raises(ValueError, match="backend must be one of"):
        crt.positive_log_variance(*GOOD, 3, backend="interval")
    with pytest.raises(ValueError, match="backend must be one of"):
        crt.oprf_rho_star(1.0, 3, backend="float32")
    with pytest.raises(ValueError, match=r"dps must be >= 15"):
        crt.oprf_rho_star(1.0, 3, backend="mpmath", dps=10)
    with pytest.raises(ValueError, match="takes scalars"):
        crt.orf_gerf_log_variance(*[np.array([v, v]) for v in GOOD], 3, -0.1, 2, backend="mpmath")


def test_orf_zero_variance_edge():
    """x = -y with A = 0 (PosRF): every sample is exactly K, so both variances are 0."""
    stats = (1.0, 1.0, 0.0, 4.0)
    assert crt.orf_gerf_log_variance(*stats, 3, 0.0, 2, coupling="iid") == -math.inf
    assert crt.orf_gerf_log_variance(*stats, 3, 0.0, 2) == -math.inf


# ------------------------------------------------------------ discretely-induced RFs (sec 3.2)

DIRF_POINTS = [  # (seed, d, scale): small, moderate and large inputs, d up to 64
    (0, 1, 0.3), (1, 3, 1.0), (2, 5, 2.0), (3, 16, 0.5), (4, 64, 0.2), (5, 4, 4.0),
]


def _mp_discrete_stats(x: np.ndarray, y: np.ndarray) -> dict:
    """Exact (60-digit) DIRF pair statistics of float vectors: the mpmath faces get exact inputs."""
    with mpmath.workdps(60):
        xs, ys = [mpmath.mpf(v) for v in x], [mpmath.mpf(v) for v in y]
        prods = [a * b for a, b in zip(xs, ys, strict=True)]
        return {"q": mpmath.fsum(t * t for t in prods), "xy": mpmath.fsum(prods),
                "sq_diff": mpmath.fsum((a - b) ** 2 for a, b in zip(xs, ys, strict=True)),
                "abs_prod": np.array([abs(t) for t in prods], dtype=object)}


def _pair(seed: int, d: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=d) * scale, rng.normal(size=d) * scale


@pytest.mark.parametrize(("seed", "d", "scale"), DIRF_POINTS)
@pytest.mark.parametrize("lam", [0.05, 0.7, 3.0])
def test_poisson_variance_against_series(seed, d, scale, lam):
    x, y = _pair(seed, d, scale)
    ds = crt.discrete_pair_stats(x, y)
    ref = crt.dirf_log_variance(x, y, crt.poisson_log_pk(lam), dps=45)
    ms = _mp_discrete_stats(x, y)
    got_mp = crt.poisson_log_variance(ms["q"], ms["xy"], ms["sq_diff"], d, lam, backend="mpmath", dps=50)
    with mpmath.workdps(60):
        assert abs(got_mp - ref) <= MP_RTOL * max(1, abs(ref))
    got = crt.poisson_log_variance(ds["q"], ds["xy"], ds["sq_diff"], d, lam)[0]
    assert abs(got - float(ref)) <= FP_RTOL * max(1.0, abs(float(ref)))


@pytest.mark.parametrize(("seed", "d", "scale"), DIRF_POINTS)
@pytest.mark.parametrize("p", [0.02, 0.5, 0.97])
def test_geometric_variance_against_series(seed, d, scale, p):
    x, y = _pair(seed, d, scale)
    ds = crt.discrete_pair_stats(x, y)
    ref = crt.dirf_log_variance(x, y, crt.geometric_log_pk(p), dps=45)
    ms = _mp_discrete_stats(x, y)
    got_mp = crt.geometric_log_variance(ms["abs_prod"], ms["xy"], ms["sq_diff"], p, backend="mpmath", dps=50)
    with mpmath.workdps(60):
        assert abs(got_mp - ref) <= MP_RTOL * max(1, abs(ref))
    got = crt.geometric_log_variance(ds["abs_prod"], ds["xy"], ds["sq_diff"], p)[0]
    # the sum of d float64 log I0 terms: d * eps relative
    assert abs(got - float(ref)) <= max(FP_RTOL, 4 * d * EPS) * max(1.0, abs(float(ref)))


def test_geometric_no_overflow_in_float64():
    """prod_l I0(.) over d = 1024 coordinates overflows float64 by far; log-space must not."""
    a = np.full(1024, 400.0)
    got = crt.geometric_log_variance(a, 0.0, 10.0, 0.5)
    ref = crt.geometric_log_variance(a, 0.0, 10.0, 0.5, backend="mpmath", dps=30)
    assert np.isfinite(got) and got > 709.78  # the value itself is beyond float64
    assert abs(got - float(ref)) <= 1e-12 * abs(float(ref))
    with pytest.raises(ValueError, match="float64 range"):
        crt.geometric_variance(a, 0.0, 10.0, 0.5)


def test_poisson_zero_variance_and_cancellation():
    """x = y with equal |entries|: PoisRF at lambda* is exact (variance 0); near it the
    exponent cancels and the float64 face must fall back to mpmath."""
    d, c = 8, 0.75  # binary-exact: q, x.y and lambda* = c^2 carry no rounding
    x = np.full(d, c)
    ds = crt.discrete_pair_stats(x, x)
    lam = float(crt.poisson_lambda_star(ds["q"][0], d))
    assert crt.poisson_log_variance(ds["q"][0], ds["xy"][0], 0.0, d, lam, backend="mpmath", dps=30) == -mpmath.inf
    lam2 = lam * (1 + 1e-7)
    got = crt.poisson_log_variance(ds["q"][0], ds["xy"][0], 0.0, d, lam2)
    ref = crt.poisson_log_variance(ds["q"][0], ds["xy"][0], 0.0, d, lam2, backend="mpmath", dps=40)
    assert abs(got - float(ref)) <= 1e-12 * abs(float(ref))


@pytest.mark.parametrize(("seed", "d", "scale"), DIRF_POINTS)
def test_lambda_star_minimises(seed, d, scale):
    from scipy.optimize import minimize_scalar

    x, y = _pair(seed, d, scale)
    ds = crt.discrete_pair_stats(x, y)
    q, xy, sd = ds["q"][0], ds["xy"][0], ds["sq_diff"][0]
    lam = float(crt.poisson_lambda_star(q, d))
    r = minimize_scalar(lambda t: float(crt.poisson_log_variance(q, xy, sd, d, math.exp(t))),
                        bracket=(math.log(lam) - 1, math.log(lam) + 1), tol=1e-12)
    assert abs(math.exp(r.x) - lam) <= 1e-5 * lam  # Brent on a quadratic minimum: sqrt(eps)


@pytest.mark.parametrize(("seed", "d", "scale"), DIRF_POINTS)
def test_geometric_p_star_is_the_grid_minimum(seed, d, scale):
    x, y = _pair(seed, d, scale)
    ds = crt.discrete_pair_stats(x, y)
    p, z = crt.geometric_p_star(ds["abs_prod"][0], ds["xy"][0])
    grid = np.linspace(1e-4, 1 - 1e-4, 4001)
    zg = crt.geometric_log_second_ratio(np.broadcast_to(ds["abs_prod"][0], (grid.size, d)), ds["xy"][0], grid)
    assert z <= zg.min() + 1e-9 * max(1.0, abs(z))
    assert abs(p - grid[np.argmin(zg)]) <= 2e-3 + 1e-6


@given(st.integers(1, 40), st.floats(0.01, 5.0), st.integers(0, 10_000))
def test_set_stats_match_brute_force(n, scale, seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 9))
    xs, ys = rng.normal(size=(n, d)) * scale, rng.normal(size=(n + 1, d)) * scale + 0.3
    got = crt.set_stats(xs, ys)
    pair_x = np.repeat(xs, len(ys), axis=0)
    pair_y = np.tile(ys, (len(xs), 1))
    for key, vals in (("sq_sum", np.sum((pair_x + pair_y) ** 2, 1)), ("sq_diff", np.sum((pair_x - pair_y) ** 2, 1)),
                      ("q", np.sum(pair_x**2 * pair_y**2, 1)), ("sq_x", np.sum(pair_x**2, 1)),
                      ("sq_y", np.sum(pair_y**2, 1))):
        assert abs(got[key] - vals.mean()) <= 1e-12 * max(1.0, np.abs(vals).mean()), key
    np.testing.assert_allclose(got["abs_prod"], np.abs(pair_x * pair_y).mean(0), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize(("seed", "d", "scale"), [(0, 3, 0.5), (1, 16, 0.3), (2, 64, 0.2), (3, 5, 1.5)])
def test_gerf_optimum_real_positive_is_oprf(seed, d, scale):
    """The L-BFGS-B routine of 9.10.1 restricted to real A, s = +1 lands on Thm 3.3's A*;
    the complex routines can only do as well or better."""
    x, y = _pair(seed, d, scale)
    st_ = {k: (float(v[0]) if k != "d" else v) for k, v in crt.pair_stats(x, y).items()}
    real = crt.gerf_optimize(**st_, real=True, signs=(1,))
    a_star = float(crt.oprf_a_star(st_["sq_sum"], d))
    assert abs(real["a"].real - a_star) <= 1e-4 * abs(a_star)
    assert abs(real["log_var"] - float(crt.oprf_log_variance(**st_))) <= 1e-8
    full = crt.gerf_optimize(**st_)
    assert full["log_var"] <= real["log_var"] + 1e-9


@given(st.floats(1e-6, 50.0), st.floats(-5.0, 5.0), st.integers(1, 64), st.floats(0.05, 20.0), st.floats(1.01, 3.0))
def test_poisson_exponent_is_convex_and_variance_nonnegative(q, xy_frac, d, lam, step):
    # x . y is bounded by sqrt(d q) (Cauchy-Schwarz on x_l y_l): keep the statistics realisable
    xy = xy_frac / 5 * math.sqrt(d * q)
    h = [lam * t * d + q / (lam * t) for t in (1.0, step, step * step)]
    assert h[1] <= (h[0] + h[2]) / 2 * (1 + 1e-12)  # convex along geometric steps (midpoint in log)
    assert crt.poisson_log_variance(q, xy, 0.0, d, lam) > -np.inf or abs(xy) > 0


DIRF_BAD = [
    ("lambda<=0", crt.poisson_log_variance, (1.0, 0.5, 0.1, 3, 0.0), "lambda > 0"),
    ("lambda NaN", crt.poisson_log_variance, (1.0, 0.5, 0.1, 3, float("nan")), "finite"),
    ("q<0", crt.poisson_log_variance, (-1.0, 0.5, 0.1, 3, 1.0), "q = "),
    ("p=0", crt.geometric_log_variance, (np.ones(3), 0.5, 0.1, 0.0), "0 < p < 1"),
    ("p=1", crt.geometric_log_variance, (np.ones(3), 0.5, 0.1, 1.0), "0 < p < 1"),
    ("p NaN", crt.geometric_log_variance, (np.ones(3), 0.5, 0.1, float("nan")), "finite"),
    ("lambda* q=0", crt.poisson_lambda_star, (0.0, 3), "q = "),
]


@pytest.mark.parametrize(("label", "fn", "args", "match"), DIRF_BAD, ids=[b[0] for b in DIRF_BAD])
@pytest.mark.parametrize("backend", ["float64", "mpmath"])
def test_dirf_invalid_parameters_raise(label, fn, args, match, backend):
    with pytest.raises(ValueError, match=match):
        fn(*args, backend=backend)


def test_positive_shift_and_log_pk_invalid():
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    c = crt.positive_shift(x, -x)
    assert np.all(x - c > 0) and np.all(-x - c > 0)
    with pytest.raises(ValueError, match="eps must be > 0"):
        crt.positive_shift(x, x, eps=0.0)
    with pytest.raises(ValueError, match="lambda > 0"):
        crt.poisson_log_pk(-1.0)
    with pytest.raises(ValueError, match="0 < p < 1"):
        crt.geometric_log_pk(1.0)

"""Edge cases of the closed forms found by an accuracy sweep (float64 faces to 1e-12, mpmath faces
converged, invalid inputs refused with a message that names the condition).

Every reference is computed here, in mpmath at 50 digits or more, from the defining expression
(a Gaussian integral, a density, a Bessel function), independently of the module under test.
Float64 results must be within ``1e-12`` relative of the reference (``1e-12 * max(1, |ref|)``
absolute for log-space values).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rfcheck import kernels
from rfcheck.closed_forms import crt, darkformer, hrf, rfa, simrf

TOL = 1e-12
DPS = 60
MF = mpmath.mpf


def _rel(val: float, ref: mpmath.mpf) -> float:
    return float(abs(mpmath.mpf(float(val)) - ref) / abs(ref))


def _abs_log(val: float, ref: mpmath.mpf) -> float:
    return float(abs(mpmath.mpf(float(val)) - ref) / max(1, abs(ref)))


# ------------------------------------------------- 1: HRF E[(1 - lambda)^2], gap 4r^2 - |Delta|^2


def _ref_gauss_moments(nx, ny, theta, n, sigma, r):
    """``(E lambda, E lambda^2, E (1 - lambda)^2)`` of the trig-estimated Gaussian lambda (HRF eq
    67-69): ``lambda_hat = (1 - mean_i cos(w_i . Delta)) / rho``, ``w_i ~ N(0, sigma^2 I)``, from the
    moments of ``cos(w . Delta)`` (``E = e^{-s^2 |D|^2/2}``, ``E cos^2 = (1 + e^{-2 s^2 |D|^2})/2``) and
    ``Delta = x - y`` of the planar vectors ``x = nx (1, 0)``, ``y = ny (cos theta, sin theta)``."""
    nx, ny, theta, sigma, r = (MF(v) for v in (nx, ny, theta, sigma, r))
    delta = (nx - ny * mpmath.cos(theta), -ny * mpmath.sin(theta))
    s2d2 = sigma**2 * (delta[0] ** 2 + delta[1] ** 2)
    rho = -mpmath.expm1(-2 * sigma**2 * r**2)
    e_cos, e_cos2 = mpmath.exp(-s2d2 / 2), (1 + mpmath.exp(-2 * s2d2)) / 2
    mean, var = (1 - e_cos) / rho, (e_cos2 - e_cos**2) / (n * rho**2)
    return mean, var + mean**2, var + (1 - mean) ** 2


GAUSS_GAP = (619.8389881795194, 619.8389881689601, 2.4965541915157378e-11, 1, 2.267851466456209,
             1.7337681241085635e-08)


def test_gauss_one_minus_second_moment_when_the_radius_is_tiny():
    # |x|, |y| >> r at a tiny angle: 4r^2 - |Delta|^2 ~ 8.5e-16 was a difference of two 1.5e6 terms
    with mpmath.workdps(120):  # (the reference's |x - y|^2 cancels 21 digits)
        _, e2, o2 = _ref_gauss_moments(*GAUSS_GAP)
        got = hrf.gauss_one_minus_second_moment(*GAUSS_GAP)
        assert _rel(got, o2) < TOL  # was 3.7e10, the truth 0.6718
        assert abs(float(o2) - 0.671819184041628) < 1e-14
        assert _rel(hrf.gauss_lambda_second_moment(*GAUSS_GAP), e2) < TOL
        mp = hrf.gauss_one_minus_second_moment(*GAUSS_GAP, backend="mpmath", dps=50)
        assert abs(mp - o2) <= MF(10) ** -45 * o2


def test_gauss_hybrid_mse_with_the_same_cancelling_gap():
    nx, ny, theta, n, sigma, r = GAUSS_GAP
    m = 3
    with mpmath.workdps(120):
        mean, e2, o2 = _ref_gauss_moments(nx, ny, theta, n, sigma, r)
        c = mean - e2  # E[lambda (1 - lambda)]
        X, Y, T = MF(nx), MF(ny), MF(theta)
        dot = X * Y * mpmath.cos(T)
        d2, z2 = X**2 + Y**2 - 2 * dot, X**2 + Y**2 + 2 * dot
        pos = mpmath.exp(2 * z2 - X**2 - Y**2) * (1 - mpmath.exp(-z2)) ** 2 / (2 * m)
        trig = mpmath.exp(X**2 + Y**2) * (1 - mpmath.exp(-d2)) ** 2 / (2 * m)
        for shared in (0, 1):
            cross = shared * c * 2 * mpmath.exp(2 * dot) * (1 - mpmath.cos(X**2 - Y**2)) / m
            ref = mpmath.log(e2 * pos + o2 * trig - cross)
            assert _abs_log(hrf.log_mse_gauss_hybrid(nx, ny, theta, m, n, sigma, r, shared), ref) < TOL


# ------------------------------------------------- 2: GERF, real A -> 1/8, s = -1


def _ref_gerf_log_variance(sq_x, sq_y, sq_sum, sq_diff, d, a, s):
    """log Var Re(f1 f2) of one GERF sample from the Gaussian integrals (CRT eq 4-5).

    ``f1 f2 = D^2 exp(2A|w|^2 + B w.(x + s y) + C(|x|^2 + |y|^2))``, ``w ~ N(0, I_d)``, with
    ``E exp(a|w|^2 + b.w) = (1 - 2a)^{-d/2} exp(b.b / (2(1 - 2a)))``; ``Var Re X =
    (E|X|^2 + Re E X^2)/2 - K^2``.
    """
    a = mpmath.mpc(a)
    v = MF(sq_sum) if s == 1 else MF(sq_diff)
    b2 = s * (1 - 4 * a)  # B^2
    c = -MF(s + 1) / 2
    d4 = (1 - 4 * a) ** d  # D^4
    norms = MF(sq_x) + MF(sq_y)
    e_sq = d4 * (1 - 8 * a) ** (-MF(d) / 2) * mpmath.exp(4 * b2 * v / (2 * (1 - 8 * a)) + 2 * c * norms)
    re_b = mpmath.re(mpmath.sqrt(b2))
    e_abs = abs(d4) * (1 - 8 * mpmath.re(a)) ** (-MF(d) / 2) * mpmath.exp(
        4 * re_b**2 * v / (2 * (1 - 8 * mpmath.re(a))) + 2 * c * norms)
    return mpmath.log((e_abs + mpmath.re(e_sq)) / 2 - mpmath.exp(-MF(sq_diff)))


@pytest.mark.parametrize("a", [0.125 - 1e-14, 0.125 - 1e-9, 0.125 - 3e-16, 0.1])
def test_gerf_log_variance_real_a_near_one_eighth_s_minus_one(a):
    # the coefficient (s + 2|1 - 4A|)/(2(1 - 8 Re A)) of v is exactly 1/2 for real A, s = -1
    args = (1.0, 1.0, 3.0, 1.0, 2, a, -1)
    with mpmath.workdps(DPS):
        ref = _ref_gerf_log_variance(*args)
        assert _abs_log(crt.gerf_log_variance(*args), ref) < TOL  # a = 1/8 - 1e-14: was 28.07603, true 28.07672
        assert abs(crt.gerf_log_variance(*args, backend="mpmath", dps=50) - ref) < MF(10) ** -40


@pytest.mark.parametrize("a", [0.12 + 0.3j, -0.4 + 1e-3j, 0.125 - 1e-12 + 1e-7j])
@pytest.mark.parametrize("s", [-1, 1])
def test_gerf_log_variance_complex_a_against_the_gaussian_integrals(a, s):
    args = (0.7, 1.3, 3.5, 0.5, 3, a, s)
    with mpmath.workdps(DPS):
        assert _abs_log(crt.gerf_log_variance(*args), _ref_gerf_log_variance(*args)) < TOL


# ------------------------------------------------- 3: GeomRF log I_0 at small arguments (p* -> 1)


GEOM = (np.array([9.623353345769086e-11]), 9.623353345769086e-11, 1.1308925400750203e-08, 0.9999999999102112)


def _ref_geom_z(abs_prod, xy, p):
    """``z = -d log p + sum_l log I_0(2|x_l y_l|/sqrt(1 - p)) - 2 x.y`` (CRT eq 13)."""
    p = MF(p)
    return (-len(abs_prod) * mpmath.log(p)
            + mpmath.fsum(mpmath.log(mpmath.besseli(0, 2 * MF(a) / mpmath.sqrt(1 - p))) for a in abs_prod)
            - 2 * MF(xy))


def test_geometric_variance_near_the_optimal_p():
    ab, xy, sq_diff, p = GEOM
    with mpmath.workdps(DPS):
        z = _ref_geom_z(ab, xy, p)
        var = mpmath.exp(-MF(sq_diff)) * mpmath.expm1(z)
        assert _rel(crt.geometric_variance(*GEOM), var) < TOL  # was off by 3.4e-4
        assert _abs_log(crt.geometric_log_variance(*GEOM), mpmath.log(var)) < TOL
        assert _rel(crt.geometric_log_second_ratio(ab, xy, p), z) < TOL


def test_geometric_p_star_objective_at_small_arguments():
    ab, xy = np.array([3e-9, 1e-8]), 1.2e-8
    p, z = crt.geometric_p_star(ab, xy)
    with mpmath.workdps(DPS):
        ref = _ref_geom_z(ab, xy, p)
        assert _rel(z, ref) < TOL
        assert _rel(crt.geometric_log_second_ratio(ab, xy, p), ref) < TOL


# ------------------------------------------------- 4: GERF raw moments, 1 - 4kA rounds


def _ref_raw_moment(k, sq_x, sq_y, sq_sum, d, a):
    """``log E X^k`` of a positive GERF sample (real A, s = +1) from the Gaussian integral."""
    a, u = MF(a), MF(sq_sum)
    return (k * d * mpmath.log(1 - 4 * a) / 2 - d * mpmath.log(1 - 4 * k * a) / 2
            + k**2 * (1 - 4 * a) * u / (2 * (1 - 4 * k * a)) - k * (MF(sq_x) + MF(sq_y)))


@pytest.mark.parametrize("k,a", [(3, 1 / 12 - 1e-13), (2, 0.125 - 1e-15), (4, 1 / 16 - 1e-11), (1, 0.2)])
def test_gerf_log_raw_moment_near_the_edge(k, a):
    with mpmath.workdps(DPS):
        ref = _ref_raw_moment(k, 1.0, 1.0, 3.0, 2, a)
        assert _abs_log(crt.gerf_log_raw_moment(k, 1.0, 1.0, 3.0, 1.0, 2, a), ref) < TOL  # (3, 1/12-1e-13): 4.6e-5


# ------------------------------------------------- 5: SimRF pdf at cos theta = -1, mpmath face


def _ref_pdf_antipodal(w, d):
    """pdf of ``|R_1 - R_2|``, ``R_i`` iid ``chi_d``, at ``w``: ``2 int chi_d(r) chi_d(r + w) dr``."""
    w = MF(w)

    def chi(r):
        return mpmath.exp((d - 1) * mpmath.log(r) - r * r / 2 - (MF(d) / 2 - 1) * mpmath.log(2)
                          - mpmath.loggamma(MF(d) / 2))

    return 2 * mpmath.quad(lambda r: chi(r) * chi(r + w), [0, 0.5, 1, 2, 3, 4, 6, 8, 12, mpmath.inf])


@pytest.mark.parametrize("w,d", [(7.682625451158044e-06, 6), (0.3, 2), (2.5, 9)])
def test_pdf_wij_angle_mpmath_face_converges_at_cos_minus_one(w, d):
    with mpmath.workdps(DPS):
        ref = _ref_pdf_antipodal(w, d)
    for dps in (50, 80):  # was 0.350 at 50 digits and 1.126 at 80 for the first point (truth 0.8179)
        got = simrf.pdf_wij_angle(w, d, -1.0, backend="mpmath", dps=dps)
        assert abs(got - ref) <= MF(10) ** -45 * ref


def test_pdf_wij_angle_mpmath_face_near_cos_minus_one_is_continuous():
    # just inside cos = -1 the t-average peaks at t = 1 with a width ~ sqrt(1 + c): graded panels
    with mpmath.workdps(DPS):
        ref = _ref_pdf_antipodal(0.01, 6)
    near = simrf.pdf_wij_angle(0.01, 6, -1.0 + 2.0**-40, backend="mpmath", dps=30)
    assert abs(near - ref) < 1e-4 * ref


def test_mpmath_faces_of_the_conformities_keep_small_logarithms():
    # log 1F1(d; d/2; v^2/2) ~ v^2: a logarithm of 1 + 1e-200 used to round to 0
    v = 1e-100
    assert abs(simrf.log_conformity_orf(v, 5, backend="mpmath") / MF(v) ** 2 - 1) < 1e-40
    assert abs(simrf.log_conformity_kernel(v, 1.0, 5, backend="mpmath") / (MF(v) ** 2 / 10) - 1) < 1e-40
    with mpmath.workdps(DPS):
        d, c = 5, MF(0.3)
        e_t = mpmath.beta(MF(d + 1) / 2, MF(1) / 2) / mpmath.beta(MF(d) / 2, MF(1) / 2)
        ref = MF(v) ** 2 * (1 + c * e_t)  # log E_t 1F1(d; d/2; v^2 (1 + c t)/2) to O(v^4)
    assert abs(simrf.log_conformity_angle(v, d, 0.3, backend="mpmath") / ref - 1) < 1e-40
    assert simrf.orf_simrf_conformity_gap(0.0, 2) == -np.inf
    assert mpmath.isfinite(simrf.orf_simrf_conformity_gap(1e-100, 3, backend="mpmath"))


# ------------------------------------------------- 6: DARKFormer Sigma* as lambda_max -> 1/2


@pytest.mark.parametrize("gap", [1e-12, 1e-9, 1e-6])
def test_sigma_star_near_the_edge_of_the_domain(gap):
    th = 0.7
    rot = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    lam = rot @ np.diag([0.5 - gap, 0.1]) @ rot.T
    lam = 0.5 * (lam + lam.T)
    got = darkformer.sigma_star(lam)
    with mpmath.workdps(80):
        lm = mpmath.matrix(lam.tolist())
        eye = mpmath.eye(2)
        ref = (eye + 2 * lm) * mpmath.inverse(eye - 2 * lm)  # Thm 3.2, without an eigen-decomposition
        scale = max(abs(ref[i, j]) for i in range(2) for j in range(2))
        err = max(abs(MF(got[i, j]) - ref[i, j]) for i in range(2) for j in range(2)) / scale
    assert err < TOL  # gap 1e-12: was 4.4e-5


# ------------------------------------------------- 7: RFA limits cancel; impossible norms


def test_rfa_limits_where_the_terms_cancel():
    s = 1.1e-05
    args = (s, 0.0, 721312.05, 721312.05, 1 / s**2)
    with mpmath.workdps(DPS):
        S = MF(s)
        ref = (MF(args[1]) + MF(args[2])) / (2 * S**2) - MF(args[4]) * MF(args[3]) / 2
        assert _abs_log(rfa.log_rff_limit(*args), ref) < TOL  # was 0.5, the truth 0.0953
        sq_y = 2 * 0.16877 * s * s  # x.y / sigma^2 ~ 0.16877 with x nearly orthogonal to y
        kargs = (s, 721312.05, sq_y, 721312.05)
        ref = (MF(kargs[1]) + MF(kargs[2]) - MF(kargs[3])) / (2 * S**2)
        assert _abs_log(rfa.log_kernel_limit(*kargs), ref) < TOL  # was 0.0
        assert abs(float(ref) - 0.16877) < 1e-12


@pytest.mark.parametrize("fn,args", [
    (rfa.log_kernel_limit, (1.0, 1.0, 1.0, 9.0)),  # |x - y| = 3 > |x| + |y| = 2 (returned -3.5)
    (rfa.log_kernel_limit, (1.0, 4.0, 1.0, 0.5)),  # |x - y| < ||x| - |y|| = 1
    (rfa.log_rff_limit, (1.0, 0.0, 0.0, 1.0, 1.0)),  # x = y = 0 but |x - y| = 1
])
@pytest.mark.parametrize("backend", ["float64", "mpmath"])
def test_rfa_limits_refuse_impossible_norms(fn, args, backend):
    with pytest.raises(ValueError, match="triangle inequality"):
        fn(*args, backend=backend)


# ------------------------------------------------- 8: Cor 4.6 needs m <= d


@pytest.mark.parametrize("m", [4, 5, 40])
@pytest.mark.parametrize("backend", ["float64", "mpmath"])
def test_rff_mse_ratio_asymptotic_refuses_m_above_d(m, backend):
    with pytest.raises(ValueError, match=r"m <= d"):
        simrf.rff_mse_ratio_asymptotic(1.0, 3, m, backend=backend)
    assert simrf.rff_mse_ratio_asymptotic(1.0, 3, 3) > 0


# ------------------------------------------------- 9: marginal misses


def _ref_oprf_delta(u, d):
    u, d = MF(u), MF(d)
    rho = (-(2 * u + d) + mpmath.sqrt((2 * u + d) ** 2 + 8 * d * u)) / (4 * u)  # CRT eq (22)
    return rho * u + d * mpmath.log((1 + rho) / (2 * mpmath.sqrt(rho)))


def test_oprf_softmax_shift_is_added_without_rounding():
    # 2 x.y ~ -log expm1(delta): the softmax factor |x|^2 + |y|^2 cancels the Gaussian log-variance
    st = (20000.0, 20000.0, 39990.08989419675, 40009.91010580325, 2)
    with mpmath.workdps(DPS):
        ref = (MF(st[0]) + MF(st[1]) - MF(st[3])
               + mpmath.log(mpmath.expm1(_ref_oprf_delta(st[2], st[4]))))
        assert abs(float(ref) - 0.3) < 1e-10
        assert _abs_log(crt.oprf_log_variance(*st, kernel="softmax"), ref) < 1e-14  # was 3.3e-12 off


def test_orf_gerf_softmax_shift_is_added_without_rounding():
    sq_x, sq_y, u, sd, d, a, m = 20000.0, 20000.0, 39991.1885035448, 40008.8114964552, 2, -4999.023556692191, 3
    npairs = 2  # blocks of 2 and 1 rows: 2 * 1 + 1 * 0 ordered pairs
    with mpmath.workdps(DPS):
        A, U = MF(a), MF(u)
        z = MF(d) / 2 * mpmath.log1p(16 * A**2 / (1 - 8 * A)) + U / (1 - 8 * A)  # log(E X^2 / K^2)
        g = mpmath.exp(-U / 2) * mpmath.hyp1f1(-MF(d) / 2, MF(d) / 2, -U / 2) - 1  # Cov(X_1, X_2) / K^2
        ref = MF(sq_x) + MF(sq_y) - MF(sd) + mpmath.log(mpmath.expm1(z) / m + MF(npairs) / m**2 * g)
        assert abs(float(ref) - 0.3) < 1e-10
        got = crt.orf_gerf_log_variance(sq_x, sq_y, u, sd, d, a, m, kernel="softmax")
        assert _abs_log(got, ref) < 1e-14  # was 4.2e-12 off


def _ref_log_chi(w, k, scale2):
    """log density of ``sqrt(scale2) chi_k`` at ``w``."""
    w, k = MF(w), MF(k)
    return ((k - 1) * mpmath.log(w) - w * w / (2 * scale2) - (k / 2 - 1) * mpmath.log(2)
            - mpmath.loggamma(k / 2) - k / 2 * mpmath.log(scale2))


@pytest.mark.parametrize("w,d", [(64.63318598907193, 1024), (108.97435897435899, 5000), (80.0, 3000),
                                 (1e-3, 1024), (3.0, 40), (200.0, 1024)])
def test_pdfs_of_wij_large_d(w, d):
    with mpmath.workdps(DPS):
        lo, li = _ref_log_chi(w, 2 * d, 1), _ref_log_chi(w, d, 2)
        if lo > -700:  # (d = 1024, w = 64.6: was 1.4e-12 off; d = 5000, w = 109: 9.3e-12)
            assert _rel(simrf.pdf_wij_orf(w, d), mpmath.exp(lo)) < TOL
        if li > -700:
            assert _rel(simrf.pdf_wij_iid(w, d), mpmath.exp(li)) < TOL
        assert _abs_log(simrf.log_pdf_wij_orf(w, d), lo) < TOL
        assert _abs_log(simrf.log_pdf_wij_iid(w, d), li) < TOL
        if d <= 1024:  # the angle pdf at cos = 0 is chi_2d
            assert _abs_log(simrf.log_pdf_wij_angle(w, d, 0.0), lo) < TOL


@pytest.mark.parametrize("d", [16, 64, 1024])
@pytest.mark.parametrize("c", [-1.0, -1.0 + 1e-9, -0.9])
def test_conformity_angle_near_cos_minus_one(d, c):
    # log E_t 1F1(d; d/2; v^2 (1 + c t)/2) = v^2 (1 + c E t) + O(v^4): at c -> -1 the weights
    # of the t-average near t = 1 set 1 - E t ~ 1/(2d) (scipy's were off by ~1e-12 there)
    v = 1e-8
    with mpmath.workdps(DPS):
        e_t = mpmath.beta(MF(d + 1) / 2, MF(1) / 2) / mpmath.beta(MF(d) / 2, MF(1) / 2)
        ref = MF(v) ** 2 * (1 + MF(c) * e_t)
    assert _rel(simrf.log_conformity_angle(v, d, c), ref) < TOL  # d = 1024, c = -1: was 1.9e-11


@pytest.mark.parametrize("v,d,c", [(5.5, 16, -1.0), (3.0, 64, -0.999), (0.8, 1024, -1.0), (4.0, 3, 1.0)])
def test_conformity_angle_against_the_mpmath_face(v, d, c):
    ref = simrf.conformity_angle(v, d, c, backend="mpmath", dps=40)
    assert _rel(simrf.conformity_angle(v, d, c), ref) < TOL  # (5.5, 16, -1): was 8.7e-13


# ------------------------------------------------- 10: inputs


@pytest.mark.parametrize("backend", ["float64", "mpmath"])
@pytest.mark.parametrize("e2,o2,c", [(0.0, 0.0, 1.0), (0.1, 0.1, -0.2), (1.0, 0.0, 0.01)])
def test_bipolar_refuses_moments_of_no_random_lambda(backend, e2, o2, c):
    with pytest.raises(ValueError, match="Cauchy-Schwarz"):
        hrf.log_mse_bipolar(1.0, 2.0, 1.0, 2, e2, o2, c, 1, backend=backend)


def test_bipolar_accepts_the_moments_of_a_constant_lambda():
    lam = 0.3  # E l^2 E (1 - l)^2 = (E l (1 - l))^2: the boundary of the check
    e2, o2, c = lam * lam, (1 - lam) ** 2, lam * (1 - lam)
    assert np.isfinite(hrf.log_mse_bipolar(1.0, 2.0, 1.0, 2, e2, o2, c, 1))


@pytest.mark.parametrize("call,names", [
    (lambda: simrf.pdf_wij_iid(np.ones(2), np.array([2, 3, 4])), "w .*d "),
    (lambda: simrf.pdf_wij_iid(np.ones(2), np.array([2, 3, 4]), backend="mpmath"), "w .*d "),
    (lambda: simrf.rff_orthogonality_gap(np.ones(2), 4, np.array([2, 3, 4])), "z .*m "),
    (lambda: crt.poisson_variance(np.ones(2), np.ones(3) * 0.5, 1.0, 2, 1.0), "q .*xy "),
    (lambda: crt.trig_log_variance(np.ones(2), np.ones(3), 3.0, 1.0, 2), "sq_x .*sq_y "),
    (lambda: hrf.log_mse_trig(np.ones(2), np.ones(3), 0.5, 2), "nx .*ny "),
    (lambda: simrf.prf_mse(np.ones(2) * 0.5, 3, 3, np.ones(3), "orf"), "v .*sq_norms "),
    (lambda: simrf.prf_orthogonality_gap(np.ones(2) * 0.5, 3, 2, np.ones(3)), "v .*sq_norms "),
    (lambda: crt.geometric_log_variance(np.ones((3, 2)), np.ones(2), 1.0, 0.5), "abs_prod.*xy "),
    (lambda: crt.geometric_log_variance(np.ones((3, 2)), np.ones(2), 1.0, 0.5, backend="mpmath"), "abs_prod.*xy "),
])
def test_mismatched_shapes_name_the_arguments(call, names):
    with pytest.raises(ValueError, match="do not broadcast together") as info:
        call()
    assert pytest.importorskip("re").search(names, str(info.value))


@pytest.mark.parametrize("backend", ["float64", "mpmath"])
def test_prf_mse_refuses_nan_v_by_name(backend):
    with pytest.raises(ValueError, match="v must be finite"):
        simrf.prf_mse(float("nan"), 3, 3, 0.5, "orf", backend=backend)
    with pytest.raises(ValueError, match="mpmath face of prf_mse takes scalar"):
        simrf.prf_mse(np.array([0.1, 0.2]), 3, 3, 0.5, "orf", backend="mpmath")


def test_log_pdfs_hold_values_below_the_float64_range():
    w, d = 60.0, 3
    with mpmath.workdps(DPS):
        li, lo = _ref_log_chi(w, d, 2), _ref_log_chi(w, 2 * d, 1)
        assert li < -800 and lo < -1700
        assert simrf.pdf_wij_iid(w, d) == 0.0  # (documented underflow of the value face)
        assert _abs_log(simrf.log_pdf_wij_iid(w, d), li) < TOL
        assert _abs_log(simrf.log_pdf_wij_orf(w, d), lo) < TOL
        assert _abs_log(simrf.log_pdf_wij_angle(w, d, 0.0), lo) < TOL
        assert abs(simrf.log_pdf_wij_orf(w, d, backend="mpmath") - lo) < MF(10) ** -45 * abs(lo)
        ref = mpmath.log(_ref_pdf_antipodal(7.5, 4))
        assert abs(simrf.log_pdf_wij_angle(7.5, 4, -1.0, backend="mpmath") - ref) < MF(10) ** -40
    assert simrf.log_pdf_wij_iid(0.0, 3) == -np.inf
    assert simrf.log_pdf_wij_iid(0.0, 1) == pytest.approx(math.log(1 / math.sqrt(math.pi)), abs=1e-15)


@pytest.mark.parametrize("z,d,m", [(40.0, 4, 3), (30.0, 5, 5), (0.7, 3, 2), (3.0, 3, 3), (0.0, 3, 2), (2.0, 3, 1)])
def test_log_rff_orthogonality_gap_sign_and_magnitude(z, d, m):
    sign, log_abs = simrf.log_rff_orthogonality_gap(z, d, m)
    with mpmath.workdps(120):
        Z = MF(z)
        ref = MF(m - 1) / m * (mpmath.exp(-Z * Z) - mpmath.hyp1f1(d, MF(d) / 2, -Z * Z / 2))
        if ref == 0:
            assert sign == 0 and log_abs == -np.inf
            return
        assert sign == (1 if ref > 0 else -1)
        assert _abs_log(log_abs, mpmath.log(abs(ref))) < TOL
    if z == 40.0:  # below 1e-308: the value face underflows (documented), the log face holds it
        assert float(ref) == 0.0 and log_abs < -780


def test_value_kernels_refuse_results_below_the_normal_range():
    with pytest.raises(ValueError, match=r"normal range.*log_gaussian_kernel"):
        kernels.gaussian_kernel(np.zeros(1), np.full(1, 40.0))
    with pytest.raises(ValueError, match=r"normal range.*log_softmax_kernel"):
        kernels.softmax_kernel(np.full(1, -30.0), np.full(1, 30.0))
    x, y = np.array([[0.3, -1.0], [2.0, 0.5]]), np.array([[0.1, 0.2], [-1.0, 1.5]])
    assert np.allclose(kernels.gaussian_kernel(x, y), np.exp(kernels.log_gaussian_kernel(x, y)), rtol=0, atol=0)
    assert kernels.gaussian_kernel(np.zeros(1), np.full(1, 37.6))[0] > 1e-308


# ----------------------------------- second sweep: data helpers whose dot products / angles cancel


def _mp_dot(x, y):
    with mpmath.workdps(2000):  # sums of products of float64 inputs: exact at this precision
        return mpmath.fsum(MF(float(a)) * MF(float(b)) for a, b in zip(x, y, strict=True))


def test_discrete_pair_stats_dot_product_of_an_orthogonal_pair():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(470) * 1e-3
    y0 = rng.standard_normal(470) * 1e-3
    y = y0 - (y0 @ x) / (x @ x) * x  # x . y ~ 1e-22 of |x| |y| ~ 5e-4: the float64 sum cancels
    got = crt.discrete_pair_stats(x, y)["xy"][0]
    ref = _mp_dot(x, y)
    assert abs(float(ref)) < 1e-20
    assert _rel(got, ref) < 1e-15  # correctly rounded (was off by 4.3x its size)
    xs, ys = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    for row, (a, b) in enumerate(zip(xs, ys, strict=True)):  # typical rows: the same dot product
        assert _rel(crt.discrete_pair_stats(xs, ys)["xy"][row], _mp_dot(a, b)) < 1e-15


def test_discrete_pair_stats_dot_product_beyond_dekkers_range():
    x, y = np.array([1e305, 1e-300, 3.0]), np.array([2e-170, 1e140, -1e-300])  # splitting overflows
    assert _rel(crt._exact_dot_rows(x[None], y[None])[0], _mp_dot(x, y)) < 1e-15  # (|x|^2 overflows)
    x, y = np.array([1e-200, 1e-150, 2.0]), np.array([3e-170, -1e-150, 1e-310])  # products underflow
    got = crt.discrete_pair_stats(x, y)["xy"][0]
    assert abs(got - float(_mp_dot(x, y))) <= 5e-324


SET_X = [[1.8446035315004138e-10, -1.8535118985006544e-09, 8.490611662822809e-11, -2.8283643120962532e-11,
          2.161561383015018e-10, 1.2931119157261455e-10],
         [-1.2794873813746753e-09, -1.5590656697888934e-11, -1.0406712859963193e-09, -1.2324378805418162e-10,
          -2.3127746930494994e-10, 4.325228943937357e-10],
         [8.326424646021722e-11, 5.848722660348235e-10, -1.3283903017569768e-09, 8.116772727426003e-10,
          3.043304678941008e-10, 7.009551412497772e-12],
         [-1.331654666093474e-10, -1.1268467010109893e-09, -1.778049495086569e-09, 1.1121889775055909e-10,
          9.004262561507744e-10, 1.419003122583509e-10]]
SET_Y = [[8.994874847366203e-10, -6.178028036612686e-10, 4.2252148632891725e-10, 6.066833437380332e-10,
          -1.4555603183885529e-10, 1.1006825737533975e-10],
         [6.700633342927941e-11, 1.9160955858368748e-10, -1.4714850199218852e-10, -1.3933773070157388e-10,
          7.614732803944065e-10, 3.680615202154226e-11]]


def test_set_stats_mean_dot_of_near_orthogonal_set_means():
    got = crt.set_stats(SET_X, SET_Y)["xy"]
    with mpmath.workdps(2000):
        ref = mpmath.fsum(_mp_dot(u, v) for u in SET_X for v in SET_Y) / (len(SET_X) * len(SET_Y))
    assert abs(float(ref) + 1.8777876771287189e-35) < 1e-48  # mean x_i . y_j: 1e-17 of |mean x| |mean y|
    assert _rel(got, ref) < 1e-15  # was -4.26e-35 (mean x . mean y in float64)
    rng = np.random.default_rng(3)
    xs, ys = rng.standard_normal((5, 4)), rng.standard_normal((3, 4))  # typical sets: the same value
    with mpmath.workdps(2000):
        ref = mpmath.fsum(_mp_dot(u, v) for u in xs for v in ys) / 15
    assert _rel(crt.set_stats(xs, ys)["xy"], ref) < 1e-15


def _mp_angle(x, y):
    with mpmath.workdps(2000):
        sx, sy, xy = _mp_dot(x, x), _mp_dot(y, y), _mp_dot(x, y)
        return mpmath.atan2(mpmath.sqrt(max(sx * sy - xy * xy, 0)), xy)


def test_pair_geometry_angle_of_parallel_and_nearly_parallel_vectors():
    x = np.full(1024, 0.01734809394357048)
    _, _, theta = hrf.pair_geometry(x, 3.7 * x)  # exactly parallel: was 4.4e-16
    assert theta[0] == 0.0
    rng = np.random.default_rng(11)
    x = rng.standard_normal(64)
    for eps in (1e-15, 1e-12, 1e-8, 1e-4):
        y = 2.5 * x * (1 + eps * rng.standard_normal(64))
        ref = _mp_angle(x, y)
        assert _rel(hrf.pair_geometry(x, y)[2][0], ref) < 1e-14, eps
    y = rng.standard_normal(64)  # a typical angle (the float64 formula): unchanged
    assert _rel(hrf.pair_geometry(x, y)[2][0], _mp_angle(x, y)) < 1e-14
    assert hrf.pair_geometry(x, -x)[2][0] == np.pi


# ------------------------------------------ DARKFormer: lambda_max -> 1/2 of a rotated Lambda


def _rotated_lambda(top):
    q, _ = np.linalg.qr(np.random.default_rng(5).standard_normal((4, 4)))
    lam = (q * np.array([top, 0.3, 0.1, 0.01])) @ q.T
    return 0.5 * (lam + lam.T)


def _mp_lam_eigs(lam):
    ev = mpmath.eigsy(mpmath.matrix(np.asarray(lam).tolist()), eigvals_only=True)
    return [ev[i] for i in range(len(ev))]


@pytest.mark.parametrize("gap", [1e-14, 1e-11, 3e-9])
def test_kappa_sq_and_optimal_variance_near_lambda_max_one_half(gap):
    lam = _rotated_lambda(0.5 - gap)
    m = 8
    with mpmath.workdps(100):
        ev = _mp_lam_eigs(lam)
        assert max(ev) < 0.5
        k2 = -mpmath.fsum(mpmath.log(1 - 4 * e * e) for e in ev) / 2
        ov = (mpmath.fprod(1 / (1 - 2 * e) for e in ev) - mpmath.fprod(1 / mpmath.sqrt(1 - 4 * e * e) for e in ev)) / m
    assert _abs_log(darkformer.log_expected_kappa_sq(lam), k2) < TOL  # was off by 6e-2 at gap 1e-14
    assert _rel(darkformer.optimal_variance(lam, m), ov) < TOL  # was off by 5e-2


def test_kappa_sq_and_optimal_variance_at_lambda_max_one_half():
    lam = np.diag([0.5, 0.2])
    assert darkformer.log_expected_kappa_sq(lam) == math.inf
    with pytest.raises(ValueError, match="< 1/2"):
        darkformer.optimal_variance(lam, 3)
    lam = _rotated_lambda(0.5 + 1e-13)  # just beyond 1/2 in exact arithmetic
    with mpmath.workdps(100):
        assert max(_mp_lam_eigs(lam)) > 0.5
    assert darkformer.log_expected_kappa_sq(lam) == math.inf
    with pytest.raises(ValueError, match="< 1/2"):
        darkformer.optimal_variance(lam, 3)


@pytest.mark.parametrize("lam", [1.9539391371330595e-133, 4.372806042869012e-108, 1e-30])
def test_log_expected_variance_mpmath_face_for_tiny_lambda(lam):
    m, s = 97, 1.0
    with mpmath.workdps(400):  # d = 1: V = (s^1/2 (2 (1 - 2l)/(1 + 2l) - 1/s)^-1/2 / (1 + 2l) - (1 - 4l^2)^-1/2) / m
        L, S = MF(lam), MF(s)
        v = (mpmath.sqrt(S) / mpmath.sqrt(2 * (1 - 2 * L) / (1 + 2 * L) - 1 / S) / (1 + 2 * L)
             - 1 / mpmath.sqrt(1 - 4 * L * L)) / m
        ref = mpmath.log(v)
    got = darkformer.log_expected_variance([[lam]], [[s]], m, backend="mpmath", dps=50)
    assert abs(got - ref) < MF(10) ** -45 * abs(ref)  # was -inf at 50 digits
    assert _abs_log(darkformer.log_expected_variance([[lam]], [[s]], m), ref) < TOL
    assert darkformer.log_expected_variance([[0.0]], [[1.0]], m, backend="mpmath") == -mpmath.inf


# ------------------------------------------------------------------- HRF hybrids (second sweep)


def _ref_hybrid_log_mse(nx, ny, theta, m, e2, o2, cross, shared):
    """Thm 3.1 from its parts: ``E l^2 MSE_pos + E (1-l)^2 MSE_trig - shared (2/m) SM^2 (1 - cos(nx^2 - ny^2))
    E l(1-l)`` with Lemma 2.2's MSEs of the vectors ``nx (1, 0)``, ``ny (cos theta, sin theta)``."""
    X, Y, T = MF(nx), MF(ny), MF(theta)
    dot = X * Y * mpmath.cos(T)
    d2, z2 = X**2 + Y**2 - 2 * dot, X**2 + Y**2 + 2 * dot
    trig = mpmath.exp(X**2 + Y**2) * (-mpmath.expm1(-d2)) ** 2 / (2 * m)
    pos = mpmath.exp(2 * z2 - X**2 - Y**2) * (-mpmath.expm1(-z2)) ** 2 / (2 * m)
    sub = shared * 2 * mpmath.exp(2 * dot) * (1 - mpmath.cos(X**2 - Y**2)) / m * cross
    return mpmath.log(e2 * pos + o2 * trig - sub)


def test_angular_hybrid_shared_with_tiny_norms():
    nx, ny, theta, m, n = 4.432903832839448e-67, 5.294510127159425e-66, 1.804414519418266, 8089, 84
    with mpmath.workdps(400):
        p = MF(theta) / mpmath.pi
        q = 1 - p
        e2, o2, cross = p * (p * (n - 1) + 1) / n, q * (q + (1 - q) / n), p * q * (n - 1) / n
        ref = _ref_hybrid_log_mse(nx, ny, theta, m, e2, o2, cross, 1)
    # the subtracted term cancels 27x against exponents ~ -611 good to ~eps * 611: was 1.006e-12 off
    assert _abs_log(hrf.log_mse_angular_hybrid(nx, ny, theta, m, n, 1), ref) < 2e-13


@pytest.mark.parametrize("r,theta,m,n,sigma", [
    (3.275994865865892e-37, 2.012338620395401, 2, 1_000_000_000, 1.4390468520527515e-46),  # rho^2 underflows: NaN
    (7.9782660388315284e-64, 2.1397085795656821e-51, 1_000_000_000, 2, 4.5011817580119962),  # (1-g)^2 underflows
])
def test_gauss_hybrid_same_length_with_underflowing_products(r, theta, m, n, sigma):
    with mpmath.workdps(1500):  # (the reference's E cos^2 - (E cos)^2 cancels ~(sigma r theta)^4 against 1)
        _, e2, o2 = _ref_gauss_moments(r, r, theta, n, sigma, r)
        ref = _ref_hybrid_log_mse(r, r, theta, m, e2, o2, 0, 0)
    got = hrf.log_mse_gauss_hybrid_same_length(r, theta, m, n, sigma)
    assert _abs_log(got, ref) < TOL


# ---------------------------------------------------------------------- SimRF (second sweep)


def test_prf_mse_from_conformity_when_e_2v2_overflows():
    rho, v, m, sq = 1.1330083047473988e155, 18.888377909379685, 168, 6.847958382953309e-06
    with mpmath.workdps(80):
        e = mpmath.exp(MF(v) ** 2)
        ref = mpmath.exp(-2 * MF(sq)) / m * (e * e - e + (m - 1) * (MF(rho) - e))
    assert 4e307 < ref < 5e307
    assert _rel(simrf.prf_mse_from_conformity(rho, v, m, sq), ref) < TOL  # was inf
    vals = simrf.prf_mse_from_conformity(np.array([rho, 2.0]), np.array([v, 0.5]), m, sq)
    assert _rel(vals[0], ref) < TOL and vals[1] == simrf.prf_mse_from_conformity(2.0, 0.5, m, sq)
    assert simrf.prf_mse_from_conformity(1.0, 30.0, 1, 300.0) == math.inf  # 1.4e521: beyond float64


def test_conformity_estimate_standard_error_of_values_near_one():
    w = np.array([[5.914836594930568, 2.9977317229605562], [3.8388288658461795, 4.180465793008596]])
    v, d = 1.1144551804204677e-08, 8
    with mpmath.workdps(80):
        rows = [mpmath.fsum(mpmath.hyp0f1(MF(d) / 2, (MF(v) * MF(x)) ** 2 / 4) for x in r) / 2 for r in w]
        mean = (rows[0] + rows[1]) / 2
        se = mpmath.sqrt(((rows[0] - mean) ** 2 + (rows[1] - mean) ** 2) / 1) / mpmath.sqrt(2)
    got_mean, got_se = simrf.conformity_estimate(w, v, d)
    assert _rel(got_mean, mean) < TOL
    assert _rel(got_se, se) < TOL  # 0F1 values 1 + ~1e-16 apart by ~1e-17: was 1.57e-16 vs 2.28e-17

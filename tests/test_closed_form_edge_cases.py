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

"""rfcheck.references.crt, the GERF moments, chi_d averages, DIRF series and noncentral chi^2 balls.

Each reference is compared with an independent computation at 50 digits: the closed forms of the
Gaussian integrals (``E exp(alpha W^2 + beta W) = (1 - 2 alpha)^{-1/2} exp(beta^2 / (2 (1 - 2 alpha)))``,
which the references never use), the DIRF series' sums in closed form (exponential, Bessel), the
orthogonal-pair factor by its other reduction (1F1), and the noncentral chi^2 CDF by quadrature of its
density; every Arb twin must contain the 50-digit value.
"""

from __future__ import annotations

import mpmath
import pytest
from flint import acb, arb

from rfcheck import quadrature
from rfcheck.arb_backend import workprec
from rfcheck.closed_forms import crt as cf
from rfcheck.ledger import pair_stats
from rfcheck.references import crt as ref

MF = mpmath.mpf
DPS = 50
BITS = 200
TOL = MF(10) ** -40


def _contains(ball: arb | acb, value: mpmath.mpf | mpmath.mpc) -> bool:
    """Does the ball meet the 50-digit mpmath value (widened by 1e-45 relative)?"""
    with workprec(BITS):
        w = float(abs(value)) * 1e-45 + 1e-300
        if isinstance(ball, acb):
            re, im = mpmath.re(value), mpmath.im(value)  # (no conversion: it would round to 53 bits)
            return ball.overlaps(acb(arb(mpmath.nstr(re, 60), w), arb(mpmath.nstr(im, 60), w)))
        return ball.overlaps(arb(mpmath.nstr(value, 60), w))


def _g(alpha: mpmath.mpc, beta: mpmath.mpc) -> mpmath.mpc:
    """``E exp(alpha W^2 + beta W)``, ``W ~ N(0, 1)``, in closed form (principal square root)."""
    q = 1 - 2 * alpha
    return mpmath.exp(beta**2 / (2 * q)) / mpmath.sqrt(q)


def _gerf_closed(p: dict) -> dict:
    """E X, E X^2, E|X|^2, Var Re X of X = f1 f2 (GERF) and E Re(f1 conj f2), by the closed forms."""
    st = pair_stats(p)
    d, s = st["d"], p["s"]
    a = mpmath.mpc(p.get("a_re", 0.0), p.get("a_im", 0.0))
    one4a = 1 - 4 * a
    b = mpmath.sqrt(s * one4a)
    c = -MF(s + 1) / 2
    dd = mpmath.power(mpmath.power(one4a, MF(1) / 4), d)
    v = st["sq_sum"] if s == 1 else st["sq_diff"]
    nz, nsum = mpmath.sqrt(v), st["sq_x"] + st["sq_y"]
    mean = dd**2 * mpmath.exp(c * nsum) * _g(2 * a, b * nz) * _g(2 * a, 0) ** (d - 1)
    second = dd**4 * mpmath.exp(2 * c * nsum) * _g(4 * a, 2 * b * nz) * _g(4 * a, 0) ** (d - 1)
    ra = mpmath.re(a)
    abs2 = abs(dd) ** 4 * mpmath.exp(2 * c * nsum) * mpmath.re(
        _g(4 * ra, 2 * mpmath.re(b) * nz) * _g(4 * ra, 0) ** (d - 1))
    nx, ny, th = MF(p["nx"]), MF(p["ny"]), MF(p["theta"])
    sb = mpmath.conj(s * b)
    l1, l2 = b * nx + sb * ny * mpmath.cos(th), sb * ny * mpmath.sin(th)
    alpha = 2 * ra
    conj_mean = mpmath.re(dd * mpmath.conj(dd) * mpmath.exp(c * st["sq_x"] + mpmath.conj(c) * st["sq_y"])
                          * _g(alpha, l1) * _g(alpha, l2) * _g(alpha, 0) ** (d - 2))
    return {"mean": mean, "second": second, "abs_second": abs2,
            "var": (mpmath.re(second) + abs2) / 2 - mpmath.re(mean) ** 2, "conj_mean": conj_mean}


GERF_POINTS = [
    {"d": 3, "nx": 0.7, "ny": 1.1, "theta": 1.0, "a_re": -0.3, "a_im": 0.4, "s": 1},
    {"d": 5, "nx": 1.3, "ny": 0.4, "theta": 2.2, "a_re": 0.05, "a_im": -0.7, "s": -1},
    {"d": 2, "nx": 0.9, "ny": 0.9, "theta": 0.3, "a_re": 0.0, "a_im": 0.0, "s": -1},  # TrigRF
    {"d": 4, "nx": 0.5, "ny": 1.5, "theta": 0.8, "a_re": 0.0, "a_im": 0.0, "s": 1},  # PosRF
]


@pytest.mark.parametrize("p", GERF_POINTS)
def test_gerf_moments_match_closed_forms_and_balls_contain_them(p: dict) -> None:
    with mpmath.workdps(DPS):
        ex = _gerf_closed(p)
        cm, cm_err = ref.gerf_conjugate_mean(p, DPS)
        assert abs(cm - ex["conj_mean"]) <= cm_err + TOL * abs(ex["conj_mean"]) + TOL
        a2, a2_err = ref.gerf_abs_second_moment(p, DPS)
        assert abs(a2 - ex["abs_second"]) <= a2_err + TOL * ex["abs_second"]
        s2, s2_err = ref.gerf_second_moment(p, DPS)
        assert abs(s2 - ex["second"]) <= s2_err + TOL * abs(ex["second"])
    assert _contains(ref.gerf_conjugate_mean_ball(p, BITS), ex["conj_mean"])
    assert _contains(ref.gerf_abs_second_moment_ball(p, BITS), ex["abs_second"])
    balls = ref.gerf_moments_ball(p, BITS)
    for key in ("mean", "second", "abs_second", "var"):
        assert _contains(balls[key], ex[key]), key
        assert balls[key].rad() < 1e-50 * (1 + abs(float(abs(balls[key]).mid()))), key


def test_gerf_conjugate_mean_is_the_kernel_for_real_positive_gerf() -> None:
    """Thm 3.1 for real A, s = +1: f2 is real, so E Re(f1 conj f2) = K(x, y) = exp(-|x - y|^2 / 2)."""
    p = {"d": 6, "nx": 0.8, "ny": 1.2, "theta": 2.0, "a_re": -0.6, "a_im": 0.0, "s": 1}
    with mpmath.workdps(DPS):
        k = mpmath.exp(-pair_stats(p)["sq_diff"] / 2)
        v, err = ref.gerf_conjugate_mean(p, DPS)
        assert abs(v - k) <= err + TOL * k


def test_gerf_moments_ball_mean_only_where_the_second_moment_diverges() -> None:
    p = {"d": 2, "nx": 0.5, "ny": 0.5, "theta": 0.5, "a_re": 0.2, "a_im": 0.0, "s": 1}
    balls = ref.gerf_moments_ball(p, 100)
    assert set(balls) == {"mean"}
    with mpmath.workdps(DPS):
        assert _contains(balls["mean"], _gerf_closed(p)["mean"])


def test_gerf_moments_ball_variance_matches_quadrature_reference() -> None:
    p = GERF_POINTS[0]
    st = pair_stats(p)
    r = quadrature.gerf_reference(**st, a=mpmath.mpc(p["a_re"], p["a_im"]), s=p["s"], dps=30)
    with mpmath.workdps(40):
        assert _contains(ref.gerf_moments_ball(p, BITS)["var"], r["var"].value) or \
            abs(float(ref.gerf_moments_ball(p, BITS)["var"].mid()) - float(r["var"].value)) <= 1e-25


# A point of crt.eq20's domain where the integral of E X^2 cancels heavily: a linear coefficient formed
# once as a ball at bits + 20 bits left the moment's ball at ~1e-10 relative (not certified).
CANCELLING = {"d": 1, "nx": 4.0, "ny": 4.0, "theta": 3.141592653589793, "a_re": -1.5, "a_im": -1.5, "s": -1}


def test_gaussian_exp_moment_ball_with_a_callable_argument_reaches_its_target() -> None:
    """A parameter given as ``prec -> ball`` is re-formed at each working precision: the ball of a
    cancelling moment reaches ``2^-bits`` relative and contains the 50-digit closed form."""
    alpha = acb(-6, -6)
    beta = ref._at_prec(lambda: 2 * acb(3).sqrt() * acb(4, -10))  # the integrand's L1 mass is ~0.24
    ball = ref.gaussian_exp_moment_ball(alpha, beta, 116)
    with mpmath.workdps(DPS):
        exact = _g(mpmath.mpc(-6, -6), 2 * mpmath.sqrt(3) * mpmath.mpc(4, -10))
        assert abs(exact) < MF(10) ** -17  # 17 orders below the L1 mass: it cancels
    assert _contains(ball, exact)
    assert float(max(ball.real.rad(), ball.imag.rad())) <= 2.0**-116 * float(abs(exact))


def test_gerf_moments_ball_cancelling_second_moment_is_tight_and_contains_the_closed_form() -> None:
    """E X^2 of a point where the integral cancels: the ball (its linear coefficient re-formed at each
    working precision) is tight and contains the closed form."""
    balls = ref.gerf_moments_ball(CANCELLING, 116)
    with mpmath.workdps(DPS):
        ex = _gerf_closed(CANCELLING)["second"]
    assert _contains(balls["second"], ex)
    z = balls["second"]
    assert float(max(z.real.rad(), z.imag.rad())) <= 2.0**-100 * float(abs(ex))


@pytest.mark.parametrize("beta", [mpmath.mpc(0, 7.5), mpmath.mpf(3.25), mpmath.mpc(1.5, -2.0)])
def test_alpha_zero_moment_ball_is_the_gaussian_mgf_and_meets_the_integral(beta: mpmath.mpc) -> None:
    """A = 0 (TrigRF, PosRF): the moment ball is exp(beta^2/2), which contains the 50-digit value and
    overlaps the rigorous integral's ball."""
    ball = ref._exp_moment_ball(0, ref._at_prec(lambda: acb(arb(mpmath.nstr(mpmath.re(beta), 30)),
                                                            arb(mpmath.nstr(mpmath.im(beta), 30)))), 160)
    with mpmath.workdps(DPS):
        assert _contains(ball, mpmath.exp(beta**2 / 2))
    with workprec(160):
        assert ball.overlaps(ref.gaussian_exp_moment_ball(0, beta, 160))
        assert max(ball.real.rad(), ball.imag.rad()) <= 2.0**-150 * abs(ball).upper()
    assert ref._exp_moment_ball(acb(0.25), beta, 100).overlaps(ref.gaussian_exp_moment_ball(0.25, beta, 100))


def test_gerf_moments_ball_is_memoised() -> None:
    """The same point and bits return the very same balls; a mean-only request reuses the full one."""
    p = dict(GERF_POINTS[1], nx=0.61)
    first = ref.gerf_moments_ball(p, 120)
    again = ref.gerf_moments_ball(dict(p), 120)
    assert all(first[k] is again[k] for k in first)
    assert ref.gerf_moments_ball(p, 120, second=False) == {"mean": first["mean"]}
    assert ref.gerf_moments_ball(p, 120, second=False)["mean"] is first["mean"]
    assert ref.gerf_abs_second_moment_ball(p, 120) is first["abs_second"]
    assert ref.gerf_moments_ball(dict(p, a_im=-0.69), 120)["mean"] is not first["mean"]  # another point


# ----------------------------------------------------------------------- chi_d averages (eq 25-27)


@pytest.mark.parametrize("a_re", [-0.7, 0.0, 0.1])
def test_conditional_mean_square_d1_closed_form(a_re: float) -> None:
    """d = 1: m(r) = D^2 e^{2A r^2 - |x|^2 - |y|^2} cosh(B r |z|), r = |W|, so
    E m^2 = D^4 e^{-2(|x|^2+|y|^2)} ((1-8A)^{-1/2} exp(2 B^2 |z|^2 / (1-8A)) + (1-8A)^{-1/2}) / 2."""
    p = {"d": 1, "nx": 0.9, "ny": 0.6, "theta": 0.0, "a_re": a_re}
    with mpmath.workdps(DPS):
        st = pair_stats(p)
        a = MF(a_re)
        q = 1 - 8 * a
        exact = ((1 - 4 * a) * mpmath.exp(-2 * (st["sq_x"] + st["sq_y"]))
                 * (mpmath.exp(2 * (1 - 4 * a) * st["sq_sum"] / q) + 1) / (2 * mpmath.sqrt(q)))
        v, err = ref.gerf_conditional_mean_square(p, DPS)
        assert abs(v - exact) <= err + TOL * exact
    assert _contains(ref.gerf_conditional_mean_square_ball(p, BITS), exact)


def test_conditional_mean_square_at_z0_and_its_ball_in_d4() -> None:
    # x = y = 0: m(r) = D^2 e^{2A r^2}, E m^2 = (1-4A)^d (1-8A)^{-d/2}
    p0 = {"d": 5, "nx": 0.0, "ny": 0.0, "theta": 0.0, "a_re": -0.4}
    p = {"d": 4, "nx": 0.7, "ny": 0.5, "theta": 1.1, "a_re": -0.2}
    with mpmath.workdps(DPS):
        a = MF(-0.4)
        exact = (1 - 4 * a) ** 5 * (1 - 8 * a) ** (-MF(5) / 2)
        v, err = ref.gerf_conditional_mean_square(p0, DPS)
        assert abs(v - exact) <= err + TOL * exact
        v4, err4 = ref.gerf_conditional_mean_square(p, DPS)
        assert err4 < MF(10) ** -35 * v4
        # Jensen and E m^2 <= E X^2: K^2 <= E m^2 <= E X^2
        ex = _gerf_closed(dict(p, s=1, a_im=0.0))
        assert mpmath.re(ex["mean"]) ** 2 < v4 < mpmath.re(ex["second"])
    assert _contains(ref.gerf_conditional_mean_square_ball(p0, BITS), exact)
    assert _contains(ref.gerf_conditional_mean_square_ball(p, BITS), v4)


def test_ort_pair_conditional_mean_is_one_at_z0_and_matches_the_orf_pair_factor() -> None:
    with mpmath.workdps(DPS):
        v, err = ref.gerf_ort_pair_conditional_mean({"d": 3, "nx": 0.0, "ny": 0.0, "theta": 0.0, "a_re": -0.5}, DPS)
        assert abs(v - 1) <= err + TOL
    # theta = 0, nx = 0.5, ny = 0.25: |x + y|^2 = 0.5625 and |x - y|^2 = 0.0625 exactly (the pair factor takes a float)
    p = {"d": 6, "nx": 0.5, "ny": 0.25, "theta": 0.0, "a_re": -0.3}
    with mpmath.workdps(25):
        st = pair_stats(p)
        v, err = ref.gerf_ort_pair_conditional_mean(p, 25)
        r = quadrature.orf_pair_factor(float(st["sq_sum"]), 6, dps=25)
        k2 = mpmath.exp(-st["sq_diff"])
        assert abs(v - k2 * r.value) <= err + k2 * r.err + MF(10) ** -20 * v


# ---------------------------------------------------------------------------- DIRF series (eq 9-11)


@pytest.mark.parametrize("xy", [(0.7, -1.3), (2.5, 1.5), (0.0, 3.0)])
def test_dirf_series_closed_forms(xy: tuple[float, float]) -> None:
    with mpmath.workdps(DPS):
        a = MF(xy[0]) * MF(xy[1])
        lam, pp = MF(2.5), MF(0.3)  # the floats the log p_k use
        pois, geom = cf.poisson_log_pk(2.5), cf.geometric_log_pk(0.3)
        # eq (9): the first moment is e^{xy} for every p_k
        for lpk in (pois, geom):
            v, err = ref.dirf_series_moment(xy, lpk, 1, DPS)
            assert abs(v - mpmath.exp(a)) <= err + TOL * mpmath.exp(a)
        # Poisson: E (XY)^2 = e^{lambda + a^2/lambda};  geometric: (1/p) I_0(2|a|/sqrt(1-p))
        v, err = ref.dirf_series_moment(xy, pois, 2, DPS)
        exact = mpmath.exp(lam + a * a / lam)
        assert abs(v - exact) <= err + TOL * exact
        v, err = ref.dirf_series_moment(xy, geom, 2, DPS)
        exact = mpmath.besseli(0, 2 * abs(a) / mpmath.sqrt(1 - pp)) / pp
        assert abs(v - exact) <= err + TOL * exact


def test_dirf_product_moment_first_moment_is_the_kernel() -> None:
    x, y = [0.3, -0.8, 1.1], [0.5, 0.2, -0.4]
    with mpmath.workdps(DPS):
        k = mpmath.exp(-mpmath.fsum((MF(a) - MF(b)) ** 2 for a, b in zip(x, y, strict=True)) / 2)
        v, err = ref.dirf_product_moment(x, y, cf.poisson_log_pk(1.7), 1, DPS)
        assert abs(v - k) <= err + TOL * k


# ------------------------------------------------------------------- noncentral chi^2 (Thm 4.2)


def _ncx2_cdf_quad(w: mpmath.mpf, d: int, nc: mpmath.mpf) -> mpmath.mpf:
    """P[W <= w] by quadrature of the noncentral chi^2 density (Bessel form)."""
    def dens(t: mpmath.mpf) -> mpmath.mpf:
        return (mpmath.exp(-(t + nc) / 2) / 2 * (t / nc) ** (MF(d) / 4 - MF(1) / 2)
                * mpmath.besseli(MF(d) / 2 - 1, mpmath.sqrt(nc * t)))
    return mpmath.quad(dens, [0, w / 4, w / 2, w])


@pytest.mark.parametrize("w,d,nc", [("3.0", 3, "2.0"), ("40.0", 8, "25.0"), ("0.5", 2, "7.0")])
def test_noncentral_chi2_mixture_lower_ball(w: str, d: int, nc: str) -> None:
    with mpmath.workdps(DPS):
        cdf = _ncx2_cdf_quad(MF(w), d, MF(nc))
        assert abs(mpmath.exp(ref.noncentral_chi2_log_cdf(MF(w), d, MF(nc), DPS)) - cdf) < MF(10) ** -35 * cdf
    with workprec(BITS):
        lo = ref.noncentral_chi2_mixture_lower_ball(arb(w), d, arb(nc) / 2, upper=False)
        up = ref.noncentral_chi2_mixture_lower_ball(arb(w), d, arb(nc) / 2, upper=True)
        with mpmath.workdps(DPS):
            for ball, exact in ((lo, cdf), (up, 1 - cdf)):
                b = MF(mpmath.mpf(ball.lower().str(60, radius=False)))
                assert b <= exact * (1 + MF(10) ** -45)  # a lower bound
                assert exact - b < MF(10) ** -30 * exact  # and a sharp one
        # a wider threshold ball: still a lower bound at every point of the ball
        wide = ref.noncentral_chi2_mixture_lower_ball(arb(w, 0.1), d, arb(nc) / 2, upper=False)
        assert wide.upper() <= lo.lower() + lo.rad()


# ------------------------------------------------------------- memoised moments, Monte Carlo, OPRF


def test_gerf_reference_at_is_the_quadrature_reference_memoised() -> None:
    p = dict(GERF_POINTS[0])
    r = ref.gerf_reference_at(p, 30)
    assert ref.gerf_reference_at(dict(p), 30) is r  # memoised
    with mpmath.workdps(30):
        st = pair_stats(p)
    direct = quadrature.gerf_reference(**st, a=mpmath.mpc(p["a_re"], p["a_im"]), s=p["s"], dps=30)
    assert all(r[k].value == direct[k].value for k in ("mean", "second", "var"))
    with mpmath.workdps(DPS):
        ex = _gerf_closed(p)
        assert abs(r["var"].value - ex["var"]) <= r["var"].err + MF(10) ** -25 * abs(ex["var"])
    # A and s given explicitly override the point's (PosRF)
    pos = ref.gerf_reference_at(p, 30, 0, 1)["mean"].value
    with mpmath.workdps(30):
        assert abs(pos - mpmath.exp(-st["sq_diff"] / 2)) < MF(10) ** -25


def test_gerf_mc_products_are_unbiased_with_exact_error_moments() -> None:
    import numpy as np

    p = {"d": 3, "nx": 0.4, "ny": 0.5, "theta": 1.0}
    est, k, exact = ref.gerf_mc_products(p, 20000, 7, -0.1, 1)
    assert exact is not None and abs(k - float(mpmath.exp(-pair_stats(p)["sq_diff"] / 2))) < 1e-15
    var = exact[0]  # E (K_hat - K)^2 at one feature
    assert abs(float(np.mean(est)) - k) < 5 * (var / len(est)) ** 0.5
    est_t, k_t, exact_t = ref.gerf_mc_products(p, 20000, 7, 0, -1)  # TrigRF
    assert exact_t is None and k_t == k and abs(float(np.mean(est_t)) - k) < 5 * float(np.std(est_t)) / 20000**0.5


def test_oprf_log_z_maximiser_reaches_the_closed_form_sup() -> None:
    """sup_w Z = D^2 exp(-(1-4A)|x+y|^2/(8A) - |x|^2 - |y|^2) (completing the square)."""
    p = {"d": 7, "nx": 0.9, "ny": 1.4, "theta": 0.6}
    o, logz, t = ref.oprf_log_z_maximiser(p, 40)
    with mpmath.workdps(50):
        exact = mpmath.log(o["D2"]) - (1 - 4 * o["A"]) * o["sq_sum"] / (8 * o["A"]) - o["sq_x"] - o["sq_y"]
        assert o["A"] < 0 and abs(logz(t) - exact) < MF(10) ** -35 * (1 + abs(exact))
        assert abs(t - o["B"] * mpmath.sqrt(o["sq_sum"]) / (-4 * o["A"])) < MF(10) ** -15


def test_oprf_mc_estimates_are_unbiased_and_iid_variance_scales_as_one_over_m() -> None:
    """The OPRF replicas (Numba engine) average to K; with iid features the variance of the mean of m is Var/m."""
    import numpy as np

    p = {"d": 6, "nx": 0.5, "ny": 0.4, "theta": 1.2}
    one, k = ref.oprf_mc_estimates(p, 1, 40000, 3)
    four, _ = ref.oprf_mc_estimates(p, 4, 40000, 4)
    orf, k_orf = ref.oprf_mc_estimates(p, 4, 40000, 5, "orf")
    assert k == k_orf and abs(k - float(mpmath.exp(-pair_stats(p)["sq_diff"] / 2))) < 1e-15
    for est in (one, four, orf):
        assert abs(float(np.mean(est)) - k) < 5 * float(np.std(est)) / len(est) ** 0.5
    assert abs(4 * float(np.var(four)) / float(np.var(one)) - 1) < 0.1

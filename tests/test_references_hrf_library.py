"""rfcheck.references.hrf: the numerical library pieces the HRF claims call, against mpmath at 50 digits.

* :func:`mp_max_on_interval` (grid + golden section) finds maxima known in closed form, inside
  the interval and at either end;
* :func:`hybrid_moments` / :func:`hybrid_mse` with explicit base moments (``base=``, the hook the
  claims use for their quadrature cross-checks) equal the default closed forms when given the
  same moments, and the closed-form base moments equal 1-d quadratures of their definitions;
* the moments with error bars (closed forms at raised precision, or quadrature) equal the closed
  forms computed here, and the error bookkeeping of the hybrid's moments, MSE and variance covers
  the distance from quadrature inputs to the exact values (and misses a deliberate perturbation);
* the CE-variance, sgn-product, single-feature and binomial-sum references equal their closed
  forms; the sign-pattern margin, interior local maxima and the null space of eq (18) behave as
  stated on known functions and matrices.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import pytest

from rfcheck.backends import MP
from rfcheck.references import hrf as R

DPS = 50


def _close(a: mpmath.mpf, b: mpmath.mpf, digits: int = 40) -> bool:
    return abs(a - b) <= mpmath.mpf(10) ** -digits * max(abs(b), 1)


def test_mp_max_on_interval_interior_and_ends() -> None:
    with mpmath.workdps(DPS + 10):
        v, err = R.mp_max_on_interval(lambda t: mpmath.sin(t) * mpmath.exp(-t), DPS)
        exact = mpmath.sin(mpmath.pi / 4) * mpmath.exp(-mpmath.pi / 4)
        assert _close(v, exact, 45) and v <= exact + mpmath.mpf(10) ** -55
        assert 0 < err < mpmath.mpf(10) ** -40
        # right end exactly pi (hi=None), left end lo, and an interior maximum on [-30, 30]
        assert _close(R.mp_max_on_interval(lambda t: t, DPS)[0], +mpmath.pi, 50)
        assert _close(R.mp_max_on_interval(lambda t: -t, DPS, 0.5, 2.0)[0], mpmath.mpf(-0.5), 50)
        v, _ = R.mp_max_on_interval(lambda t: 1 - (t - mpmath.mpf("0.3")) ** 2, DPS, -30.0, 30.0)
        assert _close(v, mpmath.mpf(1), 40)


def test_mp_max_on_interval_at_lower_precision_is_coarser() -> None:
    f = lambda t: mpmath.sin(t) * mpmath.exp(-t)  # noqa: E731
    with mpmath.workdps(DPS + 10):
        exact = mpmath.sin(mpmath.pi / 4) * mpmath.exp(-mpmath.pi / 4)
        v, err = R.mp_max_on_interval(f, 15)
    assert abs(v - exact) <= 1e-14 and float(err) > 1e-12


def _phi_quad(h: Callable[[mpmath.mpf], mpmath.mpf]) -> mpmath.mpf:
    """``E h(g)``, ``g ~ N(0, 1)``, by mpmath quadrature."""
    dens = lambda g: h(g) * mpmath.exp(-g * g / 2)  # noqa: E731
    return mpmath.quad(dens, [-mpmath.inf, 0, mpmath.inf]) / mpmath.sqrt(2 * mpmath.pi)


@pytest.mark.parametrize(("nx", "ny", "theta"), [(0.7, 1.3, 2.1), (1.2, 0.8, math.pi / 2), (0.5, 0.5, 0.3)])
def test_base_moments_and_base_override(nx: float, ny: float, theta: float) -> None:
    with mpmath.workdps(DPS + 10):
        a = [mpmath.mpf(v) for v in (nx, ny, theta)]
        g = R.pair_geometry(MP, *a)
        zz, dd = mpmath.sqrt(g["z2"]), mpmath.sqrt(g["d2"])
        alpha = (g["x2"] - g["y2"]) / zz
        beta = mpmath.sqrt(g["d2"] - alpha**2)
        quad = (_phi_quad(lambda t: mpmath.cosh(zz * t)), _phi_quad(lambda t: mpmath.cosh(zz * t) ** 2),
                _phi_quad(lambda t: mpmath.cos(dd * t)), _phi_quad(lambda t: mpmath.cos(dd * t) ** 2),
                _phi_quad(lambda t: mpmath.cosh(zz * t) * mpmath.cos(alpha * t))
                * _phi_quad(lambda t: mpmath.cos(beta * t)))
        closed = R.base_moments(MP, *a)
        for q, c in zip(quad, closed, strict=True):
            assert _close(q, c, 40)
        for m in (1, 3, 64):
            h0, h1 = R.hybrid_moments(MP, *a, m), R.hybrid_moments(MP, *a, m, quad)
            for k in h0:
                assert _close(h0[k], h1[k], 40)
            for sh in (0, 1):
                l1, l2 = R.angular_lambda_moments(MP, a[2], 7)
                assert _close(R.hybrid_mse(MP, *a, m, l1, l2, sh), R.hybrid_mse(MP, *a, m, l1, l2, sh, quad), 38)
        # the override is used: a perturbed E YZ changes the shared-projection MSE, not the independent one
        bad = (*closed[:4], closed[4] * (1 + mpmath.mpf(10) ** -3))
        l1, l2 = R.angular_lambda_moments(MP, a[2], 7)
        assert not _close(R.hybrid_mse(MP, *a, 1, l1, l2, 1), R.hybrid_mse(MP, *a, 1, l1, l2, 1, bad), 10)
        assert _close(R.hybrid_mse(MP, *a, 1, l1, l2, 0), R.hybrid_mse(MP, *a, 1, l1, l2, 0, bad), 45)


@pytest.mark.parametrize("z", [[mpmath.mpf("0.7")], [mpmath.mpc("1.1", "-0.4"), mpmath.mpf("-2.0")],
                               [mpmath.mpc(0, "2.5"), mpmath.mpc("0.3", "0.9"), mpmath.mpf(0)]])
def test_quad_gaussian_exp_dot_equals_lemma_2_4_closed_form(z: list) -> None:
    with mpmath.workdps(DPS + 10):
        exact = mpmath.exp(mpmath.fsum(zi**2 for zi in z) / 2)
        v, err = R.quad_gaussian_exp_dot(z, 30)
        assert abs(v - exact) <= max(err, mpmath.mpf(10) ** -25) * 10
        assert err < mpmath.mpf(10) ** -20 * max(abs(exact), 1)


def test_mp_bracketed_root() -> None:
    with mpmath.workdps(DPS + 10):
        # 1 - 2 r^2 t sin(t) at r = 1 (the maximiser equation of HRF appendix D): compare to findroot at 60 digits
        f = lambda t: 1 - 2 * t * mpmath.sin(t)  # noqa: E731
        root = R.mp_bracketed_root(f, mpmath.mpf(0), mpmath.pi / 2, DPS)
        assert abs(f(root)) < mpmath.mpf(10) ** -45
        assert _close(root, mpmath.findroot(f, mpmath.mpf("0.7")), 45)
        assert _close(R.mp_bracketed_root(lambda t: 2 - t * t, mpmath.mpf(0), mpmath.mpf(3), DPS), mpmath.sqrt(2), 45)
        with pytest.raises(ArithmeticError):
            R.mp_bracketed_root(lambda t: t * t + 1, mpmath.mpf(0), mpmath.mpf(1), DPS)


# ---------------------------------------------------- moments with error bars, moved from the claim file


_PAIRS = [(0.7, 1.3, 2.1), (1.2, 0.8, math.pi / 2), (0.5, 0.5, 0.3), (0.0, 0.9, 1.0)]


@pytest.mark.parametrize(("nx", "ny", "theta"), _PAIRS)
def test_base_moments_quad_and_with_error_equal_the_closed_forms(nx: float, ny: float, theta: float) -> None:
    """Quadrature moments (one pass and adaptive) equal the MGF closed forms computed here at 60 digits."""
    with mpmath.workdps(DPS + 10):
        a = [mpmath.mpf(v) for v in (nx, ny, theta)]
        g = R.pair_geometry(MP, *a)
        exact = [mpmath.exp(g["z2"] / 2), (1 + mpmath.exp(2 * g["z2"])) / 2, mpmath.exp(-g["d2"] / 2),
                 (1 + mpmath.exp(-2 * g["d2"])) / 2, mpmath.exp(2 * g["xy"]) * mpmath.cos(g["x2"] - g["y2"])]
        vals, errs = R.base_moments_quad(nx, ny, theta)
        for v, e, x in zip(vals, errs, exact, strict=True):
            assert _close(v, x, 40) and e < mpmath.mpf(10) ** -40 * max(abs(x), 1)
    for quad in (False, True):
        vals, errs = R.base_moments_with_error(nx, ny, theta, 30, quad)
        for v, e, x in zip(vals, errs, exact, strict=True):
            assert abs(v - x) <= e + mpmath.mpf(10) ** -45 * abs(x)
            assert e <= mpmath.mpf(10) ** -25 * max(abs(x), 1)


@pytest.mark.parametrize(("nx", "ny", "theta", "n", "sigma", "r"),
                         [(0.7, 1.3, 2.1, 5, 0.6, 1.1), (1.0, 0.2, 0.4, 1, 1.5, 0.3), (0.5, 0.5, 0.0, 64, 0.2, 3.0)])
def test_gauss_lambda_moments_quad_and_with_error(nx, ny, theta, n, sigma, r) -> None:
    """E lam, E lam^2 of eq (69) from E cos(s w.D) = exp(-s^2|D|^2/2), E cos^2 = (1 + exp(-2 s^2 |D|^2))/2."""
    with mpmath.workdps(DPS + 10):
        g = R.pair_geometry(MP, mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta))
        s, rr = mpmath.mpf(sigma), mpmath.mpf(r)
        c1 = mpmath.exp(-s * s * g["d2"] / 2)
        c2 = (1 + mpmath.exp(-2 * s * s * g["d2"])) / 2
        rho = 1 - mpmath.exp(-2 * s * s * rr * rr)
        exact = [(1 - c1) / rho, (1 - 2 * c1 + c1**2 + (c2 - c1**2) / n) / rho**2]
        vals, _ = R.gauss_lambda_moments_quad(nx, ny, theta, n, sigma, r)
        assert all(_close(v, x, 38) for v, x in zip(vals, exact, strict=True))
    for quad in (False, True):
        vals, errs = R.gauss_lambda_moments_with_error(nx, ny, theta, n, sigma, r, 30, quad)
        for v, e, x in zip(vals, errs, exact, strict=True):
            assert abs(v - x) <= e + mpmath.mpf(10) ** -45 and e <= mpmath.mpf(10) ** -25


def test_angular_lambda_moments_with_error() -> None:
    """theta/pi and the binomial second moment (q^2 + q(1 - q)/n)."""
    with mpmath.workdps(DPS + 10):
        q = mpmath.mpf(1.3) / mpmath.pi
        (m1, m2), errs = R.angular_lambda_moments_with_error(1.3, 7, 40)
        assert _close(m1, q, 40) and _close(m2, q * q + q * (1 - q) / 7, 40)
        assert errs == [mpmath.mpf(10) ** -45] * 2


@pytest.mark.parametrize(("nx", "ny", "theta"), _PAIRS[:3])
def test_hybrid_moments_and_mse_with_error_bound_the_quadrature_deviation(nx, ny, theta) -> None:
    """Values equal hybrid_moments / hybrid_mse; from quadrature inputs the bars cover the distance to the exact
    values, and a 10^-6 perturbation of E YZ in the base moments is far outside the shared-projection bar."""
    dps, m, n = 30, 3, 5
    lam, lerr = R.angular_lambda_moments_with_error(theta, n, dps)
    ex = R.hybrid_moments_with_error(nx, ny, theta, m, *R.base_moments_with_error(nx, ny, theta, dps), lam, lerr, dps)
    qu = R.hybrid_moments_with_error(nx, ny, theta, m, *R.base_moments_with_error(nx, ny, theta, dps, True),
                                     lam, lerr, dps)
    with mpmath.workdps(DPS + 10):
        a = [mpmath.mpf(v) for v in (nx, ny, theta)]
        h = R.hybrid_moments(MP, *a, m)
        k = h["K"]
        assert _close(ex["ES12"], h["ES12"], 28) and _close(ex["K"], k, 28)
        assert _close(ex["mse1"], h["ES1sq"] - 2 * k * h["ES1"] + k * k, 25)
        assert _close(ex["mse2"], h["ES2sq"] - 2 * k * h["ES2"] + k * k, 25)
        for key, err in (("mse1", "err1"), ("mse2", "err2"), ("ES12", "err12")):
            assert abs(qu[key] - ex[key]) <= qu[err] and 0 < qu[err] < mpmath.mpf(10) ** -20 * qu["scale"]
        l1, l2 = R.angular_lambda_moments(MP, a[2], n)
        for sh in (0, 1):
            mse = R.hybrid_mse(MP, *a, m, l1, l2, sh)
            v_ex, _ = R.hybrid_mse_with_error(ex, sh, dps)
            v_qu, e_qu = R.hybrid_mse_with_error(qu, sh, dps)
            assert _close(v_ex, mse, 25) and abs(v_qu - mse) <= e_qu < mpmath.mpf(10) ** -20 * qu["scale"]
        bad = dict(ex, base=(*ex["base"][:4], ex["base"][4] * (1 + mpmath.mpf(10) ** -6)))
        assert abs(R.hybrid_mse_with_error(bad, 1, dps)[0] - R.hybrid_mse(MP, *a, m, l1, l2, 1)) > 1e6 * e_qu


def test_cexp_variance_quad_closed_form_and_zero() -> None:
    """|c|^2 (exp(2|Re z|^2) - |exp(z^2/2)|^2) (Lemma 2.4), and 0 at x = -A^-1 (A^T)^-1 y (eq 17)."""
    with mpmath.workdps(DPS + 10):
        a = mpmath.matrix([[mpmath.mpc(1.2, 0.3), 0.4], [mpmath.mpc(-0.2, 0.5), mpmath.mpc(0.9, -0.1)]])
        x, y = mpmath.matrix([0.3, -0.6]), mpmath.matrix([0.8, 0.1])
        b = (a.T) ** -1
        z = a * x + b * y
        bsq = lambda v: v[0] ** 2 + v[1] ** 2  # noqa: E731
        c = mpmath.exp(-bsq(a * x) / 2 - bsq(b * y) / 2)
        exact = abs(c) ** 2 * (mpmath.exp(2 * (mpmath.re(z[0]) ** 2 + mpmath.re(z[1]) ** 2))
                               - abs(mpmath.exp(bsq(z) / 2)) ** 2)
    v, e = R.cexp_variance_quad(a, x, y, 30)
    assert exact > 0.01 and abs(v - exact) <= e + mpmath.mpf(10) ** -28 and e < mpmath.mpf(10) ** -20
    with mpmath.workdps(DPS + 10):
        ar = mpmath.matrix([[1.5, 0.3], [-0.4, 1.1]])
        x0 = -(ar**-1) * (ar.T) ** -1 * y
    v0, e0 = R.cexp_variance_quad(ar, x0, y, 30)
    assert abs(v0) <= e0 + mpmath.mpf(10) ** -25


@pytest.mark.parametrize("theta", [0.0, 0.4, math.pi / 2, 2.9, math.pi])
def test_sgn_product_mean_quad_is_one_minus_two_theta_over_pi(theta: float) -> None:
    with mpmath.workdps(DPS + 10):
        exact = 1 - 2 * mpmath.mpf(theta) / mpmath.pi
    v, e = R.sgn_product_mean_quad(theta, DPS)
    assert abs(v - exact) <= e + mpmath.mpf(10) ** -48 and e < mpmath.mpf(10) ** -40


def test_sign_pattern_margin_detects_minus_plus_minus() -> None:
    """A derivative that is -, +, - (e.g. -cos(2 theta)) violates '+, -, +'; cos(2 theta) does not."""
    bad, err = R.sign_pattern_margin(lambda t: -mpmath.cos(2 * t), [0.1, 1.5, 3.0], 30)
    good, _ = R.sign_pattern_margin(lambda t: mpmath.cos(2 * t), [3.0, 0.1, 1.5], 30)
    with mpmath.workdps(DPS):
        assert _close(bad, min(mpmath.cos(mpmath.mpf(0.2)), -mpmath.cos(mpmath.mpf(3.0)),
                               mpmath.cos(mpmath.mpf(6.0))), 40)
    assert bad > 100 * err and good < 0


def test_mp_interior_local_maxima() -> None:
    """sin(3t) has interior maxima pi/6 and 5 pi/6 on (0, pi); t (increasing) has none."""
    with mpmath.workdps(DPS + 10):
        ts = R.mp_interior_local_maxima(lambda t: mpmath.sin(3 * t), DPS, npts=200)
        assert len(ts) == 2 and _close(ts[0], mpmath.pi / 6, 40) and _close(ts[1], 5 * mpmath.pi / 6, 40)
        assert R.mp_interior_local_maxima(lambda t: t, 20, npts=50) == []


@pytest.mark.parametrize(("kind", "r", "theta", "sigma"), [("trig", 1.3, 2.0, 0.7), ("trig", 0.5, 0.0, 1.2),
                                                            ("pos", 0.8, 1.1, 0.9), ("pos", 1e-3, 3.0, 0.2)])
def test_feature_exp_moments_quad_equal_the_mgf(kind: str, r: float, theta: float, sigma: float) -> None:
    """trig: E cos(s v g) = exp(-s^2 v^2/2), E cos^2 = (1 + exp(-2 s^2 v^2))/2 (v = |x - y|);
    pos: E f = exp(s^2 v^2/2 - c), E f^2 = exp(2 s^2 v^2 - 2c) (v = |x + y|, c = s^2 (|x|^2 + |y|^2))."""
    with mpmath.workdps(DPS + 10):
        rr, t, s = mpmath.mpf(r), mpmath.mpf(theta), mpmath.mpf(sigma)
        if kind == "trig":
            v2 = 2 * rr * rr * (1 - mpmath.cos(t))
            exact = (mpmath.exp(-s * s * v2 / 2), (1 + mpmath.exp(-2 * s * s * v2)) / 2)
        else:
            v2, c = 2 * rr * rr * (1 + mpmath.cos(t)), 2 * s * s * rr * rr
            exact = (mpmath.exp(s * s * v2 / 2 - c), mpmath.exp(2 * s * s * v2 - 2 * c))
    m1, m2, err = R.feature_exp_moments_quad(kind, r, theta, sigma, 30)
    assert err < mpmath.mpf(10) ** -25
    assert abs(m1 - exact[0]) <= err and abs(m2 - exact[1]) <= err
    with pytest.raises(ValueError):
        R.feature_exp_moments_quad("gauss", r, theta, sigma, 20)


@pytest.mark.parametrize(("theta", "n"), [(0.0, 1), (0.7, 3), (math.pi / 2, 40), (3.0, 400), (math.pi, 7)])
def test_angular_lambda_moments_binomial_equal_the_closed_moments(theta: float, n: int) -> None:
    with mpmath.workdps(DPS + 10):
        q = mpmath.mpf(theta) / mpmath.pi
        m1, m2 = R.angular_lambda_moments_binomial(theta, n, DPS)
        assert _close(m1, q, 45) and _close(m2, q * q + q * (1 - q) / n, 45)



@pytest.mark.parametrize(("nx", "ny", "theta", "shared"), [(0.7, 1.3, 2.1, 0), (0.7, 1.3, 2.1, 1), (1.1, 0.4, 0.5, 1)])
def test_hybrid_variance_equals_the_mse_of_the_unbiased_hybrid(nx, ny, theta, shared) -> None:
    """The hybrid is unbiased (E S1 = E S2 = SM), so its variance is its MSE (hybrid_mse, 60 digits), and
    Var = Var(lam S1) + Var((1 - lam) S2) + 2 Cov (eq 31); the error versions agree within their bars from
    quadrature moments."""
    dps, m, n = 30, 4, 6
    with mpmath.workdps(DPS + 10):
        a = [mpmath.mpf(v) for v in (nx, ny, theta)]
        l1, l2 = R.angular_lambda_moments(MP, a[2], n)
        h = {**R.hybrid_moments(MP, *a, m), "l1": l1, "l2": l2}
        var = R.hybrid_variance(h, shared)
        assert _close(var, R.hybrid_mse(MP, *a, m, l1, l2, shared), 45)
        t = R.hybrid_variance_terms(h, shared)
        assert _close(t["v1"] + t["v2"] + 2 * t["cov"], var, 45)
        assert t["v1"] > 0 and t["v2"] > 0
    lam, lerr = R.angular_lambda_moments_with_error(theta, n, dps)
    hq = R.hybrid_moments_with_error(nx, ny, theta, m, *R.base_moments_with_error(nx, ny, theta, dps, True),
                                     lam, lerr, dps)
    v, e = R.hybrid_variance_with_error(hq, shared, dps)
    tq = R.hybrid_variance_terms_with_error(hq, shared, dps)
    assert abs(v - var) <= e < mpmath.mpf(10) ** -20 * hq["scale"]
    for k in ("v1", "v2", "cov"):
        assert abs(tq[k] - t[k]) <= tq["err"] < mpmath.mpf(10) ** -20 * hq["scale"]


def test_ce_real_system_null_space() -> None:
    """For real A (imaginary rows zero) the real solutions of eq (18) are 2-dimensional, orthonormal, and solve
    A x + (A^T)^-1 y = 0; for A = (1 + i) I the system has full rank (only 0 solves it)."""
    with mpmath.workdps(DPS + 10):
        a = mpmath.matrix([[1.5, 0.3], [-0.4, 1.1]])
        mat = R.ce_real_system(a)
        b = (a.T) ** -1
        assert mat.rows == 4 and all(mat[2 + i, j] == 0 for i in range(2) for j in range(4))
        assert _close(mat[0, 2], b[0, 0], 50) and _close(mat[1, 3], b[1, 1], 50)
        null = R.real_null_space(mat, DPS)
        assert len(null) == 2
        for u in null:
            z = a * mpmath.matrix([u[0], u[1]]) + b * mpmath.matrix([u[2], u[3]])
            assert max(abs(z[0]), abs(z[1])) < mpmath.mpf(10) ** -45 and _close(mpmath.norm(u), mpmath.mpf(1), 45)
        assert abs(mpmath.fsum(null[0][k] * null[1][k] for k in range(4))) < mpmath.mpf(10) ** -45
        assert R.real_null_space(R.ce_real_system(mpmath.eye(2) * mpmath.mpc(1, 1)), DPS) == []

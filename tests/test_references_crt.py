"""rfcheck.references.crt: each reference against mpmath at 50 digits, a closed form or an identity.

The direction averages of CRT appendix 9.7 (eq (26)-(32)) have elementary closed forms in
``d = 3`` (``E exp(gamma u_1) = sinh(gamma) / gamma``); the conditional moments built on them are
recomputed here from those closed forms, and the Arb twins must contain the mpmath values.
"""

from __future__ import annotations

import mpmath
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.ledger import pair_stats
from rfcheck.references import crt as ref

MF = mpmath.mpf
DPS = 50
BITS = 200
POINT = {"d": 3, "nx": 0.7, "ny": 1.1, "theta": 1.0, "a_re": -0.3, "M": 3, "rho1": 0.5, "rho2": 1.2, "rho3": 1.6}


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    """Does the ball meet the 50-digit mpmath value (widened by its own rounding, 1e-48 relative)?"""
    with workprec(BITS):
        return ball.overlaps(arb(mpmath.nstr(value, 60), float(abs(value)) * 1e-48 + 1e-300))


def test_public_api_is_documented() -> None:
    for name in ref.__all__:
        fn = getattr(ref, name)
        assert fn.__doc__ and "Returns" in fn.__doc__ and "CRT" in fn.__doc__, name


@pytest.mark.parametrize("gamma", ["0.001", "0.5", "3.25", "-7"])
def test_sphere_mean_in_d3_and_d1_closed_forms(gamma: str) -> None:
    with mpmath.workdps(DPS):
        g = MF(gamma)
        exact = mpmath.sinh(g) / g
        hyp, err = ref.sphere_exp_mean_hyp(g, 3)
        assert err == 0 and abs(hyp - exact) < MF(10) ** -48 * exact
        quad, qerr = ref.sphere_exp_mean_quad(g, 3)
        assert abs(quad - exact) < MF(10) ** -45 * exact and qerr < MF(10) ** -30 * exact
        # d = 1: u_1 = +-1, the average is cosh(gamma)
        assert abs(ref.sphere_exp_mean_hyp(g, 1)[0] - mpmath.cosh(g)) < MF(10) ** -48 * mpmath.cosh(g)


@pytest.mark.parametrize("d", [2, 5, 16])
def test_sphere_mean_routes_agree(d: int) -> None:
    with mpmath.workdps(DPS):
        g = MF("2.5")
        hyp = ref.sphere_exp_mean_hyp(g, d)[0]
        quad, err = ref.sphere_exp_mean_quad(g, d)
        if d == 2:
            # the density (1 - t^2)^{-1/2} is singular at the ends: tanh-sinh still gets 26 digits,
            # but mpmath's error estimate is not a bound there (about 4x short at this point)
            assert abs(hyp - quad) < MF(10) ** -25 * hyp
        else:
            assert abs(hyp - quad) <= err + MF(10) ** -40 * hyp
        # an identity that could fail: the Taylor series E exp(g u_1) = sum g^{2k} E u_1^{2k} / (2k)!,
        # E u_1^{2k} = (1/2)_k / (d/2)_k
        series = mpmath.nsum(lambda k: g ** (2 * k) * mpmath.rf(MF(1) / 2, k) / mpmath.rf(MF(d) / 2, k)
                             / mpmath.factorial(2 * k), [0, mpmath.inf])
        assert abs(hyp - series) < MF(10) ** -45 * hyp


def test_pair_stats_ball_contains_the_mpmath_stats() -> None:
    for p in (POINT, {"d": 1, "nx": 0.5, "ny": 2.0, "theta": 0.0},
              {"d": 8, "nx": 10.0, "ny": 10.0, "theta": 1e-9}):
        with workprec(BITS):
            b = ref.pair_stats_ball(p)
        with mpmath.workdps(DPS):
            s = pair_stats(p)
            for k in ("sq_x", "sq_y", "sq_sum", "sq_diff"):
                assert _contains(b[k], s[k]), (p, k)
                assert float(b[k].rad()) <= 1e-50 * max(1.0, float(s[k]))
        assert b["d"] == int(p["d"])


def _closed_form_moments(p: dict, scaled: bool) -> dict:
    """The conditional moments in d = 3 from sinh(g)/g, at 50 digits (independent of both routes)."""
    with mpmath.workdps(DPS + 10):
        s = pair_stats(p)
        a = MF(p["a_re"])
        b, nz = mpmath.sqrt(1 - 4 * a), mpmath.sqrt(s["sq_sum"])
        p0 = (1 - 4 * a) ** (MF(3) / 2) * mpmath.exp(-s["sq_x"] - s["sq_y"])
        m = int(p["M"])
        r = [MF(p[f"rho{i + 1}"]) * mpmath.sqrt(3) for i in range(m)]
        c = r if scaled else [MF(1)] * m

        def sph(g: mpmath.mpf) -> mpmath.mpf:
            return mpmath.sinh(g) / g

        w = [p0 * mpmath.exp(2 * a * ri * ri) for ri in r]
        mean = [wi * sph(b * ci * nz) for wi, ci in zip(w, c, strict=True)]
        second = [wi * wi * sph(2 * b * ci * nz) for wi, ci in zip(w, c, strict=True)]
        var_iid = sum(s2 - mu * mu for s2, mu in zip(second, mean, strict=True)) / m**2
        cov = sum(w[i] * w[j] * sph(b * nz * mpmath.sqrt(c[i] ** 2 + c[j] ** 2)) - mean[i] * mean[j]
                  for i in range(m) for j in range(i + 1, m))
        return {"var_iid": var_iid, "var_ort": var_iid + 2 * cov / m**2, "T": -2 * cov / m**2,
                "F": [wi * (sph(b * ci * nz) - 1) for wi, ci in zip(w, c, strict=True)]}


@pytest.mark.parametrize("scaled", [False, True])
@pytest.mark.parametrize("method", ["hyp", "quad"])
def test_conditional_moments_against_the_d3_closed_form(scaled: bool, method: str) -> None:
    exact = _closed_form_moments(POINT, scaled)
    got = ref.conditional_moments(dict(POINT), DPS - 10 if method == "quad" else DPS, scaled, method)
    assert got["M"] == 3 and got["d"] == 3
    tol = MF(10) ** -30 * got["scale"]
    for k in ("var_iid", "var_ort", "T"):
        assert abs(got[k] - exact[k]) <= got["err"] + tol, k
    for f, e in zip(got["F"], exact["F"], strict=True):
        assert abs(f - e) <= got["err"] + tol
    assert got["err"] < MF(10) ** -20 * got["scale"]


@pytest.mark.parametrize("scaled", [False, True])
def test_conditional_moments_ball_contains_the_closed_form(scaled: bool) -> None:
    exact = _closed_form_moments(POINT, scaled)
    b = ref.conditional_moments_ball(dict(POINT), BITS, scaled)
    for k in ("var_iid", "var_ort", "T"):
        assert _contains(b[k], exact[k]), k
        assert float(b[k].rad()) < 1e-45
    assert all(_contains(fb, fe) for fb, fe in zip(b["F"], exact["F"], strict=True))


def test_gerf_ort_point_constants() -> None:
    with mpmath.workdps(DPS):
        o = ref.gerf_ort_point(dict(POINT))
        s = pair_stats(POINT)
        assert o["B"] ** 2 == 1 - 4 * o["A"]
        p0 = (1 - 4 * MF(POINT["a_re"])) ** MF("1.5") * mpmath.exp(-s["sq_x"] - s["sq_y"])
        assert abs(o["P0"] - p0) < MF(10) ** -48
        assert abs(o["K2"] - mpmath.exp(-s["sq_diff"])) < MF(10) ** -48
        assert abs(o["r"][1] - MF(1.2) * mpmath.sqrt(3)) < MF(10) ** -48


def test_reference_a_star_is_the_minimiser() -> None:
    """At A* the derivative of the GERF log variance vanishes (50 digits) and the variance rises on
    both sides; the error bar covers the change to 60 digits."""
    from rfcheck.closed_forms import crt as cf

    p = {"d": 4, "nx": 0.8, "ny": 0.6, "theta": 0.7}
    a, err = ref.reference_a_star(dict(p), DPS)
    assert a < MF(1) / 8 and err < MF(10) ** -40
    with mpmath.workdps(DPS + 10):
        st = pair_stats(p)

        def v(x: mpmath.mpf) -> mpmath.mpf:
            return cf.gerf_log_variance(**st, a=x, s=1, backend="mpmath", dps=mpmath.mp.dps)

        assert abs(mpmath.diff(v, a)) < MF(10) ** -40
        h = MF(10) ** -6
        assert v(a - h) > v(a) and v(a + h) > v(a)


@pytest.mark.parametrize(("d", "nc", "w"), [(3, "0", "2.5"), (4, "1.75", "3"), (1, "9", "20"), (6, "0.5", "0.01")])
def test_noncentral_chi2_log_cdf_against_the_density_integral(d: int, nc: str, w: str) -> None:
    """Against quadrature of the noncentral chi^2 density (Bessel form), 50 digits; nc = 0 is the
    central chi^2 CDF."""
    with mpmath.workdps(DPS + 10):
        lam, x = MF(nc), MF(w)
        got = ref.noncentral_chi2_log_cdf(x, d, lam, DPS)
        if lam == 0:
            exact = mpmath.gammainc(MF(d) / 2, 0, x / 2, regularized=True)
        else:
            nu = MF(d) / 2 - 1

            def dens(t: mpmath.mpf) -> mpmath.mpf:
                return (mpmath.exp(-(t + lam) / 2) / 2 * (t / lam) ** (nu / 2)
                        * mpmath.besseli(nu, mpmath.sqrt(lam * t)))

            # t = s^2 removes the t^{(d-2)/2} end singularity (d = 1)
            sx = mpmath.sqrt(x)
            exact = mpmath.quad(lambda v: 2 * v * dens(v * v), [0, sx / 2, sx])
        assert abs(got - mpmath.log(exact)) < MF(10) ** -45
        assert ref.noncentral_chi2_log_cdf(MF(0), d, lam, DPS) == -mpmath.inf

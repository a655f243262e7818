"""Memoisation of the CRT references (crt.thm3.3 family, rfcheck.quadrature): a cached value
is the very value a fresh computation gives, and the cache tells precisions apart."""

from __future__ import annotations

import mpmath
import pytest

from rfcheck import quadrature
from rfcheck.claims._common import stats_mp
from rfcheck.closed_forms import crt as cf
from rfcheck.references import crt as R


@pytest.mark.parametrize("alpha,beta", [(0.1, 0.0), (-0.7, 2.5), (mpmath.mpc(0.05, 0.3), mpmath.mpc(1.0, -2.0)),
                                        (0.2, mpmath.mpc(0, 6.0))])
def test_gaussian_exp_moment_cache_equals_fresh_and_closed_form(alpha, beta):
    with mpmath.workdps(30):
        fresh = quadrature._gaussian_exp_moment_arb(mpmath.mpmathify(alpha), mpmath.mpmathify(beta))
        first = quadrature.gaussian_exp_moment(alpha, beta)
        again = quadrature.gaussian_exp_moment(alpha, beta)
        assert first == fresh and again == fresh  # bit-identical (value, error)
    with mpmath.workdps(50):
        a, b = mpmath.mpmathify(alpha), mpmath.mpmathify(beta)
        exact = mpmath.exp(b**2 / (2 * (1 - 2 * a))) / mpmath.sqrt(1 - 2 * a)
        v50, _ = quadrature.gaussian_exp_moment(alpha, beta)  # not the 30-digit entry
        assert abs(v50 - exact) <= mpmath.mpf(10) ** -44 * abs(exact)


def _plain_a_star(p, prec):
    """The root solve of reference_a_star with no memo at all (the pre-memo code path)."""
    with mpmath.workdps(prec):
        st = stats_mp(p)

        def g(a):
            return mpmath.diff(lambda t: cf.gerf_log_variance(**st, a=t, s=1, backend="mpmath",
                                                               dps=mpmath.mp.dps), a)

        lo = -mpmath.mpf(1) / 8
        while not g(lo) < 0:
            lo *= 2
        return mpmath.findroot(g, (lo, mpmath.mpf(0)), solver="anderson", tol=mpmath.mpf(10) ** (-2 * prec + 10),
                               maxsteps=400, verify=False)


def test_reference_a_star_memo_is_bit_identical():
    p = {"d": 5, "nx": 0.3, "ny": 2.0, "theta": 1.0}
    val, err = R._reference_a_star(p, 20)
    plain20, plain30 = _plain_a_star(p, 20), _plain_a_star(p, 30)
    assert val == plain30
    assert err == abs(plain30 - plain20) + mpmath.mpf(10) ** (5 - 20) * abs(plain30)
    R._A_STAR_CACHE.clear()
    assert R.reference_a_star(p, 20) == (val, err)
    assert R.reference_a_star(p, 20) == (val, err)  # from the cache
    assert R.reference_a_star(dict(p, step=1.2), 20) == (val, err)  # keyed on the pair only
    assert R.reference_a_star(p, 25) != (val, err)  # precision is part of the key


def test_reference_a_star_matches_closed_form_50_digits():
    p = {"d": 16, "nx": 1.3, "ny": 0.7, "theta": 0.9}
    val, err = R.reference_a_star(p, 50)
    with mpmath.workdps(60):
        exact = cf.oprf_a_star(stats_mp(p)["sq_sum"], 16, backend="mpmath", dps=60)
    assert abs(val - exact) <= err
    assert err < mpmath.mpf(10) ** -40


# ------------------------------------------------------- the Arb ball behind gaussian_exp_moment

_CASES = [(0.2, 3.0), (mpmath.mpc(0.05, 0.3), mpmath.mpc(1.0, -2.0)), (0.0, mpmath.mpc(0, 8.0)),
          (-1.0, mpmath.mpc(0, 20.0)), (0.4, 0.0), (mpmath.mpc(-0.6, 1.4), mpmath.mpc(2, 6)),
          (0.0, mpmath.mpc(0, 40.0)), (0.45, 10.0)]


@pytest.mark.parametrize("alpha,beta", _CASES)
def test_gaussian_exp_moment_ball_contains_mpmath_50_digits(alpha, beta):
    from rfcheck.references.crt import gaussian_exp_moment_ball

    ball = gaussian_exp_moment_ball(mpmath.mpmathify(alpha), mpmath.mpmathify(beta), 170)  # ~50 digits
    with mpmath.workdps(80):
        a, b = mpmath.mpmathify(alpha), mpmath.mpmathify(beta)
        exact = mpmath.exp(b**2 / (2 * (1 - 2 * a))) / mpmath.sqrt(1 - 2 * a)
        mid = mpmath.mpc(quadrature._arb_mpf(ball.real.mid()), quadrature._arb_mpf(ball.imag.mid()))
        rad = quadrature._arb_mpf(ball.real.rad()) + quadrature._arb_mpf(ball.imag.rad())
        assert abs(mid - exact) <= rad  # the ball contains the exact value
        assert rad <= mpmath.mpf(10) ** -48 * abs(exact)  # and is tight (50 digits)


def test_gaussian_exp_moment_ball_rejects_divergent():
    from rfcheck.references.crt import gaussian_exp_moment_ball

    with pytest.raises(ValueError):
        gaussian_exp_moment_ball(0.5, 1.0, 100)
    with pytest.raises(ValueError):
        gaussian_exp_moment_ball(0.1, 1.0, 4)


@pytest.mark.parametrize("alpha,beta", _CASES[:6])
def test_gaussian_exp_moment_agrees_with_tanh_sinh(alpha, beta):
    with mpmath.workdps(30):
        a, b = mpmath.mpmathify(alpha), mpmath.mpmathify(beta)
        v, e = quadrature.gaussian_exp_moment(a, b)
        v0, _ = quadrature._gaussian_exp_moment(a, b)
    with mpmath.workdps(60):
        exact = mpmath.exp(b**2 / (2 * (1 - 2 * a))) / mpmath.sqrt(1 - 2 * a)
        assert abs(v - exact) <= e  # the bar is a bound (the tanh-sinh estimate alone is not)
        assert e <= mpmath.mpf(10) ** -25 * abs(exact)
        if abs(exact) > 1e-10:  # (where the oscillation cancels, tanh-sinh needs more digits)
            assert abs(v - v0) <= mpmath.mpf(10) ** -25 * abs(exact)  # the former method agrees


def test_orf_pair_factor_cache_equals_fresh():
    quadrature._PAIR_CACHE.clear()
    first = quadrature.orf_pair_factor(1.7, 6, dps=20)
    fresh = quadrature._orf_pair_factor(1.7, 6, 20)
    assert (first.value, first.err, first.method) == (fresh.value, fresh.err, fresh.method)
    assert quadrature.orf_pair_factor(1.7, 6, dps=20) is first
    assert quadrature.orf_pair_factor(1.7, 7, dps=20).value != first.value
    with mpmath.workdps(50):  # vs the closed form (Chu-Vandermonde collapse) at 50 digits
        exact = mpmath.exp(cf.orf_log_covariance_factor(1.7, 6, backend="mpmath", dps=50))
        assert abs(first.value - exact) <= first.err + mpmath.mpf(10) ** -18

"""Memoisation of the CRT references (crt.thm3.3 family, rfcheck.quadrature): a cached value
is the very value a fresh computation gives, and the cache tells precisions apart."""

from __future__ import annotations

import mpmath
import pytest

from rfcheck import quadrature
from rfcheck.claims import crt as C
from rfcheck.claims._common import stats_mp
from rfcheck.closed_forms import crt as cf


@pytest.mark.parametrize("alpha,beta", [(0.1, 0.0), (-0.7, 2.5), (mpmath.mpc(0.05, 0.3), mpmath.mpc(1.0, -2.0)),
                                        (0.2, mpmath.mpc(0, 6.0))])
def test_gaussian_exp_moment_cache_equals_fresh_and_closed_form(alpha, beta):
    with mpmath.workdps(30):
        fresh = quadrature._gaussian_exp_moment(mpmath.mpmathify(alpha), mpmath.mpmathify(beta))
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
    val, err = C._reference_a_star(p, 20)
    plain20, plain30 = _plain_a_star(p, 20), _plain_a_star(p, 30)
    assert val == plain30
    assert err == abs(plain30 - plain20) + mpmath.mpf(10) ** (5 - 20) * abs(plain30)
    C._A_STAR_CACHE.clear()
    assert C.reference_a_star(p, 20) == (val, err)
    assert C.reference_a_star(p, 20) == (val, err)  # from the cache
    assert C.reference_a_star(dict(p, step=1.2), 20) == (val, err)  # keyed on the pair only
    assert C.reference_a_star(p, 25) != (val, err)  # precision is part of the key


def test_reference_a_star_matches_closed_form_50_digits():
    p = {"d": 16, "nx": 1.3, "ny": 0.7, "theta": 0.9}
    val, err = C.reference_a_star(p, 50)
    with mpmath.workdps(60):
        exact = cf.oprf_a_star(stats_mp(p)["sq_sum"], 16, backend="mpmath", dps=60)
    assert abs(val - exact) <= err
    assert err < mpmath.mpf(10) ** -40

"""Helpers of rfcheck.references.simrf_proofs (the printed sides of SimRF eq (31), (32), (55), (61), (62), (75)
and footnote 4 on balls, the checks' configurations, the eq (48) minimiser): values against independent
50-digit mpmath computations, enclosure, planted wrong values outside the balls."""

from __future__ import annotations

import mpmath
import pytest
from flint import acb, arb

from rfcheck.arb_backend import to_ball, workprec
from rfcheck.references.simrf_proofs import (
    chi2d_moment_ratio_ball,
    lower_gamma_int_ball,
    quarter_period_integral_ball,
    tight_ball,
)

BITS = 120


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    """The ball meets ``value`` widened by its own rounding (50 digits)."""
    with workprec(400):
        return bool(ball.overlaps(to_ball(value) * (1 + arb(0, 1e-48))))


def _planted_outside(ball: arb, value: mpmath.mpf, rel: float = 1e-25) -> bool:
    with workprec(400), mpmath.workdps(50):
        return not ball.overlaps(to_ball(value * (1 + mpmath.mpf(rel))))


@pytest.mark.parametrize("eps_exp", [10, 30, 60])
def test_tight_ball_resolves_cancellation(eps_exp: int) -> None:
    b = tight_ball(lambda: (1 + arb(10) ** -eps_exp) - 1, 53, 4, 4096)
    with mpmath.workdps(50):
        want = mpmath.mpf(10) ** -eps_exp
    assert b.is_finite() and float(b.rad()) <= float(abs(b.mid())) * 2.0**-53
    assert _contains(b, want)
    assert _planted_outside(b, want, 1e-10)


def test_tight_ball_complex_and_limit() -> None:
    b = tight_ball(lambda: acb(1, 2) * (1 + arb(10) ** -40) - acb(1, 2), 60, 8, 4096)
    assert max(float(b.real.rad()), float(b.imag.rad())) <= float(abs(b).mid()) * 2.0**-60
    # the limit stops the doubling: a ball that can never be tight comes back wide
    wide = tight_ball(lambda: arb(0, 1), 60, 8, 64)
    assert wide.rad() >= 1


@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_quarter_period_integral_ball_sine_powers(n: int) -> None:
    with mpmath.workdps(50):
        want = mpmath.sqrt(mpmath.pi) * mpmath.gamma(mpmath.mpf(n + 1) / 2) / (2 * mpmath.gamma(mpmath.mpf(n) / 2 + 1))
        quad = mpmath.quad(lambda t: mpmath.sin(t) ** n, [0, mpmath.pi / 2])
    assert abs(want - quad) < mpmath.mpf(10) ** -40 * want
    b = quarter_period_integral_ball(lambda ph, _a: ph.sin() ** n, BITS)
    assert _contains(b, want)
    assert _planted_outside(b, want)


@pytest.mark.parametrize("d", [1, 2, 7, 64])
def test_chi2d_moment_ratio_ball(d: int) -> None:
    with mpmath.workdps(50):
        k = 2 * d  # E w^n = 2^{n/2} Gamma((k+n)/2)/Gamma(k/2) for w ~ chi_k
        m4 = 4 * mpmath.gamma(mpmath.mpf(k + 4) / 2) / mpmath.gamma(mpmath.mpf(k) / 2)
        m2 = 2 * mpmath.gamma(mpmath.mpf(k + 2) / 2) / mpmath.gamma(mpmath.mpf(k) / 2)
        want = m4 / m2
    assert want == 2 * d + 2
    b = chi2d_moment_ratio_ball(d, BITS)
    assert _contains(b, want)
    assert _planted_outside(b, want, 1e-20)


@pytest.mark.parametrize("d", [1, 3, 8])
@pytest.mark.parametrize("z", [0.1, 2.0, 30.0, complex(1.5, 0.7)])
def test_lower_gamma_int_ball(d: int, z: float | complex) -> None:
    with mpmath.workdps(50):
        want = mpmath.gammainc(d, 0, mpmath.mpmathify(z))
    with workprec(BITS + d):
        b = lower_gamma_int_ball(d)(acb(to_ball(z)))
    with workprec(400), mpmath.workdps(50):
        wb = to_ball(mpmath.mpc(want))
        assert b.overlaps(wb * (1 + arb(0, 1e-48)))
        assert not b.overlaps(wb * (1 + arb(10) ** -20))


# ------------------------------------------------------------------ context helpers and configurations


@pytest.mark.parametrize(("x", "d"), [(0.5, 1), (2.0, 3), (40.0, 16), (-1.5, 7)])
def test_f_series_ctx_faces(x: float, d: int) -> None:
    from rfcheck.arb_backend import ARB
    from rfcheck.backends import MP
    from rfcheck.references.simrf_proofs import f_series, f_series_ctx

    with mpmath.workdps(50):
        # independent: 0F1(; d/2; x/4)/Gamma(d/2)
        want = mpmath.hyp0f1(mpmath.mpf(d) / 2, mpmath.mpf(x) / 4) / mpmath.gamma(mpmath.mpf(d) / 2)
        mp_val = f_series_ctx(MP, mpmath.mpf(x), d)
        assert mp_val == f_series(mpmath.mpf(x), d)
        assert abs(mp_val - want) <= mpmath.mpf(10) ** -45 * abs(want)
    with workprec(BITS):
        b = f_series_ctx(ARB, ARB.num(x), d).v
    assert _contains(b, want)
    assert _planted_outside(b, want)


def test_ctx_rows_and_dot() -> None:
    import numpy as np

    from rfcheck.arb_backend import ARB
    from rfcheck.backends import MP
    from rfcheck.references.simrf_proofs import ctx_dot, ctx_rows, dot, mp_rows, unit_config

    U = unit_config(4, 5, 3)
    with mpmath.workdps(50):
        rows = ctx_rows(MP, U)
        assert rows == mp_rows(U)
        g = [[ctx_dot(MP, a, b) for b in rows] for a in rows]
        assert g == [[dot(a, b) for b in rows] for a in rows]
        assert all(abs(g[i][i] - 1) < mpmath.mpf(10) ** -45 for i in range(4))
    with workprec(BITS):
        brows = ctx_rows(ARB, U)
        bg = [[ctx_dot(ARB, a, b).v for b in brows] for a in brows]
    for i in range(4):
        for j in range(4):
            assert _contains(bg[i][j], g[i][j])
    assert _planted_outside(bg[0][1], g[0][1], 1e-20)
    with pytest.raises(ValueError):
        ctx_dot(MP, [1, 2], [1])
    assert np.allclose([[float(x) for x in r] for r in rows], U)


def test_gaussian_vectors_and_equal_angle_config() -> None:
    import numpy as np

    from rfcheck.arb_backend import ARB
    from rfcheck.references.simrf_proofs import chi_norms, equal_angle_config, gaussian_vectors

    W, x, y = gaussian_vectors(5, 3, 7, 2.0)
    g = np.random.default_rng(7).standard_normal((7, 3))
    assert [[float(t) for t in r] for r in W] == g[:5].tolist()
    assert [float(t) for t in x] == (2.0 * g[5]).tolist() and [float(t) for t in y] == (2.0 * g[6]).tolist()
    with workprec(BITS):
        _, xb, _ = gaussian_vectors(5, 3, 7, 2.0, ARB)
        assert all(bool(a.v == b) for a, b in zip(xb, 2.0 * g[5], strict=True))
    for d, t in ((2, 0.0), (4, 0.0), (5, 0.5)):
        C, r = equal_angle_config(d, t, 11)
        with mpmath.workdps(50):
            want = -mpmath.mpf(1) / (d - 1) + mpmath.mpf(t) * (1 + mpmath.mpf(1) / (d - 1))
        assert all(C[i][i] == 1 for i in range(d))
        assert all(abs(C[i][j] - want) < mpmath.mpf(10) ** -14 for i in range(d) for j in range(d) if i != j)
        assert [float(v) for v in r] == chi_norms(d, d, 11).tolist()
        # at t = 0 the Gram matrix is the simplex's: rows sum to 0 (the matrix is singular, PSD)
        if t == 0.0:
            assert all(abs(mpmath.fsum(C[i])) < mpmath.mpf(10) ** -14 for i in range(d))


def test_plus_config() -> None:
    import numpy as np

    from rfcheck.engine.montecarlo import simplex_matrix
    from rfcheck.references.simrf_proofs import chi_norms, plus_config

    W, r = plus_config(5, 2)
    assert np.array_equal(r, chi_norms(5, 5, 2)) and np.allclose(W, r[:, None] * simplex_matrix(5))
    W, r = plus_config(5, 2, big=40.0, start="random")
    want = chi_norms(5, 5, 2)
    want[0] *= 40.0
    assert np.array_equal(r, want) and np.allclose(np.linalg.norm(W, axis=1), r)
    assert r[0] > r[1:].sum()
    assert not np.allclose(W / r[:, None], simplex_matrix(5))


def test_multistart_minimiser() -> None:
    import numpy as np

    from rfcheck.references.simrf_proofs import multistart_minimiser

    # a double well (x^2 - 1)^2 + 0.1 x: the deeper minimum is near x = -1; random starts find it
    def obj(x: np.ndarray) -> tuple[float, np.ndarray]:
        return float((x[0] ** 2 - 1) ** 2 + 0.1 * x[0]), np.array([4 * x[0] * (x[0] ** 2 - 1) + 0.1])

    x = multistart_minimiser(obj, 1, 3, tries=8)
    with mpmath.workdps(50):
        root = mpmath.findroot(lambda t: 4 * t * (t * t - 1) + mpmath.mpf("0.1"), -1)
    assert abs(x[0] - float(root)) < 1e-7
    # the first of the starts is the seeded rng's first draw: one try from it is deterministic
    assert np.array_equal(multistart_minimiser(obj, 1, 3, tries=1), multistart_minimiser(obj, 1, 3, tries=1))


def test_perm_config() -> None:
    from rfcheck.arb_backend import ARB
    from rfcheck.references.simrf_proofs import chi_norms, dot, mp_rows, perm_config, unit_config

    with mpmath.workdps(50):
        r, C = perm_config(4, 9)
        U = mp_rows(unit_config(4, 4, 9))
        assert C == [[dot(a, b) for b in U] for a in U]
        assert all(abs(C[i][i] - 1) < mpmath.mpf(10) ** -45 for i in range(4))
    assert [float(x) for x in r] == chi_norms(4, 4, 10).tolist()
    with workprec(BITS):
        _, Cb = perm_config(4, 9, ARB)
    assert all(_contains(Cb[i][j].v, C[i][j]) for i in range(4) for j in range(4))
    assert _planted_outside(Cb[1][2].v, C[1][2], 1e-20)


@pytest.mark.parametrize("d", [2, 3, 64])
@pytest.mark.parametrize("coupling", ["iid", "orf", "simrf"])
def test_mean_pair_norm_sq_faces(d: int, coupling: str) -> None:
    from rfcheck.arb_backend import ARB
    from rfcheck.references.simrf_proofs import mean_pair_norm_sq

    with mpmath.workdps(50):
        # independent: 2d + 2 cos(theta) (E r)^2, E r = sqrt(2) exp(lgamma((d+1)/2) - lgamma(d/2)), cos = -1/(d-1)
        er = mpmath.sqrt(2) * mpmath.exp(mpmath.loggamma(mpmath.mpf(d + 1) / 2) - mpmath.loggamma(mpmath.mpf(d) / 2))
        want = 2 * d - (2 * er**2 / (d - 1) if coupling == "simrf" else 0)
        assert abs(mean_pair_norm_sq(d, coupling) - want) < mpmath.mpf(10) ** -45 * want
    with workprec(BITS):
        b = mean_pair_norm_sq(d, coupling, ARB).v
    assert _contains(b, want)
    assert _planted_outside(b, want, 1e-20)


# ------------------------------------------------ moved out of rfcheck.claims._simrf_proofs (eq (17), (31), (45), (57))


@pytest.mark.parametrize("m, dim, big", [(3, 3, 1.0), (6, 6, 1.0), (5, 4, 40.0), (64, 64, 1.0)])
def test_eq17_iterate_reaches_an_eq16_configuration_keeping_the_norms(m: int, dim: int, big: float) -> None:
    import numpy as np

    from rfcheck.references.simrf_proofs import eq16_residual, eq17_iterate

    W0 = np.random.default_rng(m + dim).standard_normal((m, dim))
    W0[0] *= big
    W, passes, res = eq17_iterate(W0)
    assert res == eq16_residual(W) and res < 1e-10 and passes < 10_000
    assert np.allclose(np.linalg.norm(W, axis=1), np.linalg.norm(W0, axis=1), rtol=1e-14)
    # a fixed point: one more pass moves no row
    W2, passes2, _ = eq17_iterate(W, tol=1e-9)
    assert passes2 == 1 and np.allclose(W2, W, atol=1e-9)
    # with a pass budget of 1 the residual of a random start is not yet small
    assert eq17_iterate(W0, max_passes=1)[1] == 1


@pytest.mark.parametrize("a, z", [(0.5, 3.0), (-0.5, 0.7), (1.0, 12.5), (7.0, 2.0), (0.0, 1j * 2.0), (3.5, 1j * 0.3)])
def test_besselj_ctx_faces_against_mpmath_50_digits(a: float, z: complex) -> None:
    from rfcheck.arb_backend import ARB
    from rfcheck.backends import MP
    from rfcheck.references.simrf_proofs import besselj_ctx

    with mpmath.workdps(50):
        exact = mpmath.besselj(mpmath.mpf(a), mpmath.mpmathify(z))
        assert abs(besselj_ctx(MP, mpmath.mpf(a), mpmath.mpmathify(z)) - exact) <= abs(exact) * mpmath.mpf(10) ** -45
    with workprec(BITS):
        b = besselj_ctx(ARB, ARB.num(a), ARB.num(z)).v
    if isinstance(z, complex):
        assert isinstance(b, acb)
        assert _contains(b.real, exact.real) and _contains(b.imag, exact.imag)
    else:
        assert isinstance(b, arb) and _contains(b, exact) and _planted_outside(b, exact)


@pytest.mark.parametrize("d", [1, 2, 5, 33])
def test_integral_from_zero_ctx_sine_powers(d: int) -> None:
    """``int_0^pi sin^{d-1} = sqrt(pi) Gamma(d/2)/Gamma(d/2 + 1/2)`` (eq (64)) on both faces."""
    from rfcheck.arb_backend import ARB
    from rfcheck.backends import MP
    from rfcheck.references.simrf_proofs import integral_from_zero_ctx

    with mpmath.workdps(50):
        exact = mpmath.sqrt(mpmath.pi) * mpmath.gamma(mpmath.mpf(d) / 2) / mpmath.gamma(mpmath.mpf(d) / 2 + 0.5)
    with mpmath.workdps(30):
        got = integral_from_zero_ctx(MP, mpmath.pi, lambda t: mpmath.sin(t) ** (d - 1))
        assert abs(got - exact) <= abs(exact) * mpmath.mpf(10) ** -25
    with workprec(BITS):
        b = integral_from_zero_ctx(ARB, ARB.pi, lambda t: ARB.sin(t) ** (d - 1)).v
    assert _contains(b, exact) and _planted_outside(b, exact)


@pytest.mark.parametrize("d, seed, v", [(2, 1, 1.0), (3, 2, 0.7), (4, 11, 2.0)])
def test_lagrangian_gradient_ball_encloses_the_50_digit_gradient(d: int, seed: int, v: float) -> None:
    from rfcheck.arb_backend import ARB
    from rfcheck.references.simrf_proofs import (
        chi_norms,
        ctx_rows,
        lagrangian_gradient,
        lagrangian_gradient_ball,
        mp_rows,
        unit_config,
    )

    U0, r0 = unit_config(d, d, seed), [float(x) for x in chi_norms(d, d, seed + 1)]
    for i in range(d):
        with mpmath.workdps(50):
            g = lagrangian_gradient(mpmath.mpf(v), [mpmath.mpf(x) for x in r0], mp_rows(U0), i)
        with workprec(BITS):
            h = lagrangian_gradient_ball(arb(v), [ARB.num(x) for x in r0], ctx_rows(ARB, U0), i)
        assert len(h) == d and all(_contains(a, b) for a, b in zip(h, g, strict=True))
        assert any(_planted_outside(a, b) for a, b in zip(h, g, strict=True) if b != 0)

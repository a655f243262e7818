"""rfcheck.references.hrf: the numerical library pieces the HRF claims call, against mpmath at 50 digits.

* :func:`mp_max_on_interval` (grid + golden section) finds maxima known in closed form, inside
  the interval and at either end;
* :func:`hybrid_moments` / :func:`hybrid_mse` with explicit base moments (``base=``, the hook the
  claims use for their quadrature cross-checks) equal the default closed forms when given the
  same moments, and the closed-form base moments equal 1-d quadratures of their definitions.
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

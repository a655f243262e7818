"""Library functions of ``rfcheck.references.hrf`` that the claims of Hybrid Random Features (first part of
``rfcheck.claims.hrf``) used to define inline: each ball is checked against an independent 50-digit mpmath value
(MGF closed forms or a golden-section maximum) that it must contain, and a planted wrong value it must exclude."""

from __future__ import annotations

import math

import mpmath
import pytest
from flint import arb

from rfcheck.arb_backend import workprec
from rfcheck.backends import MP
from rfcheck.closed_forms.hrf import log_max_rel_error_angular_hybrid
from rfcheck.references import hrf as refs

BITS = 160


def _arb(v: mpmath.mpf) -> arb:
    with workprec(BITS + 64):
        return arb(mpmath.nstr(v, 60))


@pytest.mark.parametrize(("nx", "ny", "theta", "m"), [(0.5, 0.3, 1.0, 2), (0.9, 0.2, 2.5, 7), (0.4, 0.4, 0.0, 1)])
def test_hybrid_moments_quad_ball_contains_the_mgf_moments(nx: float, ny: float, theta: float, m: int) -> None:
    h = refs.hybrid_moments_quad_ball(nx, ny, theta, m, BITS)
    with mpmath.workdps(50):
        e = refs.hybrid_moments(MP, mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta), m)
        k = e["K"]
        exact = {**e, "mse1": e["ES1sq"] - 2 * k * e["ES1"] + k**2, "mse2": e["ES2sq"] - 2 * k * e["ES2"] + k**2,
                 "EYZ": refs.base_moments(MP, mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta))[4]}
    for key in ("ES1", "ES1sq", "ES2", "ES2sq", "ES12", "K", "mse1", "mse2", "EYZ"):
        v = _arb(exact[key])
        with workprec(BITS + 64):
            assert h[key].overlaps(v), key
            assert h[key].rad() < 1e-30 * (abs(v) + 1), key
            assert not h[key].overlaps(v + (abs(v) + 1) * arb(10) ** -25), key  # a planted wrong value


def test_hybrid_moments_quad_ball_flip_is_the_moments_at_pi_minus_theta() -> None:
    h = refs.hybrid_moments_quad_ball(0.7, 0.5, 0.4, 3, BITS, flip=True)
    with mpmath.workdps(50):
        e = refs.hybrid_moments(MP, mpmath.mpf(0.7), mpmath.mpf(0.5), mpmath.pi - mpmath.mpf(0.4), 3)
    with workprec(BITS + 64):
        assert h["ES2"].overlaps(_arb(e["ES2"])) and h["ES1sq"].overlaps(_arb(e["ES1sq"]))
    unflipped = refs.hybrid_moments_quad_ball(0.7, 0.5, 0.4, 3, BITS)
    assert not unflipped["ES2"].overlaps(h["ES2"])


_MAXIMA = {"identity": (lambda t: t, lambda: mpmath.pi), "sin": (lambda t: t.sin(), lambda: mpmath.mpf(1)),
           "parabola": (lambda t: -((t - 1) ** 2), lambda: mpmath.mpf(0))}


@pytest.mark.parametrize("name", sorted(_MAXIMA))
def test_max_bounds_0_pi_encloses_the_maximum(name: str) -> None:
    from rfcheck.arb_backend import Ball

    f, maximum = _MAXIMA[name]
    lo, hi = refs.max_bounds_0_pi(lambda t: Ball(f(t.v)), 128, max_evals=200)
    with mpmath.workdps(50):
        v = _arb(maximum())
    with workprec(200):
        assert lo <= v.upper() and hi >= v.lower()
        assert hi - lo < 0.05
        assert not (lo <= v + 0.1 <= hi)  # a planted wrong maximum lies outside


def test_max_bounds_0_pi_covers_the_sliver_above_the_float_pi() -> None:
    # the identity's maximum pi lies above math.pi, where interval_max_bounds alone stops
    lo, hi = refs.max_bounds_0_pi(lambda t: t, 128, max_evals=40)
    with workprec(128):
        assert hi >= arb.pi().upper() and lo < arb(math.pi).upper()


@pytest.mark.parametrize(("r", "m", "n", "gap"), [(4.0, 3, 5, 0.01), (2.0, 1, 1, 0.01), (6.5, 100, 40, 0.2)])
def test_angular_log_max_rel_error_ball_contains_the_mpmath_maximum(r: float, m: int, n: int, gap: float) -> None:
    v = _arb(log_max_rel_error_angular_hybrid(r, m, n, backend="mpmath", dps=50))
    with workprec(BITS):
        target = v + gap
    b = refs.angular_log_max_rel_error_ball(r, m, n, BITS, below=target)
    with workprec(BITS):
        assert b.overlaps(v)
        assert b.upper() < target  # proven below the target
        assert not b.overlaps(target)  # a planted wrong maximum is outside


def test_angular_log_max_rel_error_ball_lower_end_is_a_value() -> None:
    # the lower end is eps at one angle: never above the maximum, however few evaluations
    v = _arb(log_max_rel_error_angular_hybrid(3.0, 2, 4, backend="mpmath", dps=50))
    b = refs.angular_log_max_rel_error_ball(3.0, 2, 4, BITS, max_evals=5)
    with workprec(BITS):
        assert b.lower() <= v.upper() and b.overlaps(v)

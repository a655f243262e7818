"""SimRF claims from the main-text displays and the appendix proofs not covered by a theorem claim.

Imported at the end of :mod:`rfcheck.claims.simrf` (one ledger per paper), for its registrations only; neither
module imports the other's helpers (shared declarations: ``_simrf_shared``; the numerical references:
:mod:`rfcheck.references.simrf`, :mod:`rfcheck.references.simrf_proofs`, :mod:`rfcheck.references.gaussian`).
Every ``printed_*`` function transcribes the paper; references never reuse it: direction averages by 1-D
quadrature over the polar angle, mpmath Bessel functions, chi-law CDF derivatives and moments, Monte Carlo of the
estimand (eq 41), hand-derived gradients tied to finite differences in ``tests/test_simrf_proofs.py`` (eq 45,
49), the analytic minimum of the truncated objective eq (15) (eq 16 / 51) and L-BFGS with an exact gradient
(eq 48).

Where both sides have a rigorous enclosure the decided points are re-decided on Arb balls (printed formulas
written against a number-system context or evaluated on balls; references as rigorous integrals with proven
Gaussian tail bounds, :mod:`rfcheck.references.gaussian`).  Not certified, each with its reason in the ledger:
Monte Carlo (eq 41), a float64 optimiser (eq 48) and float64 iterates of eq (17) (eq 16, 17, 50).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import mpmath
import numpy as np
from flint import acb, arb
from flint import ctx as flint_ctx
from scipy import special

from rfcheck.arb_backend import ARB, Ball, to_ball, workprec
from rfcheck.backends import FP, MP
from rfcheck.checkkit import capped
from rfcheck.claims._simrf_shared import MF, det, eq10_angle, faces, iid_mgf_check, ineq, on_balls, two_prec, vd_domain
from rfcheck.closed_forms import simrf as cf
from rfcheck.ledger import (
    Budget,
    Check,
    Choice,
    Domain,
    Int,
    PointEval,
    Reading,
    Real,
    certify_with_balls,
    deterministic_check,
    inequality_check,
    not_certifiable,
    on_mp,
    paper,
)
from rfcheck.references import gaussian as gauss
from rfcheck.references import simrf as ref
from rfcheck.references import simrf_proofs as rp
from rfcheck.stats import compare_deterministic, compare_mc, estimate_mean, z_critical

P = paper("simrf")

__all__: list[str] = []

SEED = Int(0, 10**6, scale="linear")


def at_bits(fn: Any) -> Any:
    """``(p, bits) -> ball``: ``fn(p, bits)`` at ``bits`` bits of working precision (a ball function)."""
    def ball(p: dict[str, Any], bits: int) -> Any:
        with workprec(bits):
            return fn(p, bits)

    return ball


# -------------------------------------------------------------- eq (9) / (88), Algorithm 1


def printed_s_row(i: int, d: int, ctx: Any = MP) -> list[Any]:
    """Row ``s_i`` (1-based) of eq (9) / (88) on a context (default mpmath)."""
    ones = [ctx.num(1)] * (d - 1) + [ctx.num(0)]
    if i == d:
        return [x / ctx.sqrt(ctx.num(d - 1)) for x in ones]
    a = (ctx.sqrt(ctx.num(d)) + 1) / ctx.num(d - 1) ** ctx.num(1.5)
    row = [-a * x for x in ones]
    row[i - 1] += ctx.sqrt(ctx.num(d) / (d - 1))
    return row


def _gram_entry(ctx: Any, p: dict[str, Any]) -> Any:
    d, i, j = _s_pair(p)
    return rp.ctx_dot(ctx, printed_s_row(i, d, ctx), printed_s_row(j, d, ctx))


def _s_pair(p: dict[str, Any]) -> tuple[int, int, int]:
    d = int(p["d"])
    i = 1 + int(p["i"]) % d
    j = 1 + int(p["j"]) % d
    return d, i, j


def _eq88_ref(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    d, i, j = _s_pair(p)
    with mpmath.workdps(dps + 10):
        return (MF(1) if i == j else -MF(1) / (d - 1)), MF(10) ** (-dps - 5)


P.claim("eq88", source=P.at("sec 3 eq (9) (= appendix B.2 eq (88)) and the sentence after eq (9)"),
        statement="s_i = sqrt(d/(d-1)) e_i - (sqrt(d)+1)/(d-1)^{3/2} (1,...,1,0) (i < d), s_d = (1,...,1,0)/sqrt(d-1) "
        "'are manifestly normalised and subtend obtuse angles' theta = arccos(-1/(d-1))",
        domain=Domain({"d": Int(2, 1024, extra=(2, 3, 64)), "i": Int(0, 1023, scale="linear"),
                       "j": Int(0, 1023, scale="linear", extra=(0, 1023))}),
        checks=[deterministic_check(
                    "gram-entry", lambda p: _gram_entry(MP, p), _eq88_ref, atol_scale=lambda p, dps: 1,
                    printed_ball=on_balls(_gram_entry),
                    reference_ball=lambda p, bits: (
                        lambda d, i, j: arb(1) if i == j else arb(-1) / (d - 1))(*_s_pair(p)),
                    description="s_i . s_j from the printed rows (mpmath) vs 1 (i = j) and -1/(d-1) (i != j)")],
        notes="Rows i, j are taken modulo d (1-based); the grid visits i = j, i = d and j = d.")


def printed_alg1(x: list[Any], d: int, ctx: Any = MP) -> list[Any]:
    """Algorithm 1 (appendix B.2.1): y_d = sum_{i<d} x_i / sqrt(d-1);
    y_i = sqrt(d/(d-1)) x_i - (sqrt(d)+1)/(d-1) y_d (on a context, default mpmath)."""
    yd = ctx.fsum(*x[: d - 1]) / ctx.sqrt(ctx.num(d - 1))
    return [
        ctx.sqrt(ctx.num(d) / (d - 1)) * x[i] - (ctx.sqrt(ctx.num(d)) + 1) / (d - 1) * yd for i in range(d - 1)] + [yd]


def _alg1_vec(p: dict[str, Any], ctx: Any = MP) -> list[Any]:
    return [ctx.num(float(t)) for t in np.random.default_rng(int(p["seed"])).standard_normal(int(p["d"]))]


def _alg1_component(ctx: Any, p: dict[str, Any]) -> Any:
    return printed_alg1(_alg1_vec(p, ctx), int(p["d"]), ctx)[int(p["k"]) % int(p["d"])]


def _alg1_ref(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    d, k = int(p["d"]), int(p["k"]) % int(p["d"])
    with mpmath.workdps(dps + 10):
        x = _alg1_vec(p)
        return rp.dot(printed_s_row(k + 1, d), x), MF(10) ** (-dps - 5) * d


P.claim("alg1", source=P.at("appendix B.2.1, Algorithm 1"),
        statement="Algorithm 1 computes y = S x in O(d): y_d = sum_{i<d} x_i/sqrt(d-1), "
        "y_i = sqrt(d/(d-1)) x_i - (sqrt(d)+1)/(d-1) y_d (i < d), S of eq (9)",
        domain=Domain(
            {"d": Int(2, 1024, extra=(2, 3)), "k": Int(0, 1023, scale="linear", extra=(0, 1023)), "seed": SEED}),
        checks=[deterministic_check(
                    "matrix-vector", lambda p: _alg1_component(MP, p), _alg1_ref,
                    atol_scale=lambda p, dps: math.sqrt(int(p["d"])), printed_ball=on_balls(_alg1_component),
                    reference_ball=on_balls(lambda ctx, p: rp.ctx_dot(ctx, printed_s_row(
                                                                               int(p["k"]) % int(p["d"]) + 1,
                                                                               int(p["d"]), ctx), _alg1_vec(p, ctx))),
                    description="component k of S x with S built from the rows of eq (9), mpmath, random x")])


# ----------------------------------------------------------------------- eq (22)


def _eq22(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    d, k, c = int(p["d"]), int(p["k"]), MF(p["cos"])

    with mpmath.workdps(2 * dps + 10):  # tanh-sinh leaves ~ half the digits: double precision
        a, b = rp.sine_power_integral(d, k, c), rp.sine_power_integral(d, k, MF(0))
    return a, b, (abs(a) + abs(b)) * MF(10) ** (3 - dps)


P.claim("eq22", source=P.at("sec 4, eq (22) and the sentence after it"),
        statement="int_0^pi (sin phi)^{d-1} (1 + sin phi cos theta)^k dphi is strictly smaller for cos theta < 0 "
        "than for cos theta = 0",
        domain=Domain({"d": Int(1, 512, extra=(2, 3)), "k": Int(1, 200, extra=(1, 2)),
                       "cos": Real(-1.0, -1e-6, extra=(-0.5,))}),
        checks=[ineq("quadrature", _eq22, max_points=40,
                     description="both integrals by tanh-sinh quadrature (mpmath); checked as <=",
                     sides_ball=at_bits(lambda p, bits: tuple(
                         rp.sine_power_integral_ball(int(p["d"]), int(p["k"]), c, bits) for c in (p["cos"], 0))),
                     n=20)],
        notes="Checked for k >= 1 (at k = 0 the two integrals are equal). 'Strictly' is not separable from "
        "equality by a tolerance test; the evidence lists the margins.")


# ----------------------------------------------------------------------- eq (31), (32), (75)


def _hankel_check(printed: Any, arg: str, kernel: str, n: int, **kw: Any) -> Check:
    """A Hankel-transform line at ``|w_ij| = w`` (eq (31): ``kernel`` "exp", eq (75): "cos") against the direction
    average ``E kernel(w q . x)``, ``x = p[arg]``, ``q`` uniform on ``S^{d-1}``: 1-D quadrature in the polar angle,
    on balls :func:`rfcheck.references.gaussian.sphere_average_ball`.

    The printed ball is 2^-bits tight: at small ``x = w * p[arg]`` the power and the Bessel function each carry
    ``~ (d/2) log2(1/x)`` bits that cancel in the product: that many extra bits, more (up to 1024) where Arb's
    Bessel evaluation needs them (:func:`rfcheck.references.simrf_proofs.tight_ball`)."""
    mean = (lambda w, x, d: ref.direction_average(w, x, d)[0]) if kernel == "exp" else ref.direction_average_cos
    def printed_ball(p: dict[str, Any], bits: int) -> Any:
        with workprec(bits):
            x = float((to_ball(p["w"]) * to_ball(p[arg])).mid())
        extra = 30 + int(int(p["d"]) / 2 * max(0.0, -math.log2(x + 1e-300)))
        return rp.tight_ball(lambda: printed(ARB, p).v, bits, extra, 1024)

    def reference_ball(p: dict[str, Any], bits: int) -> Any:
        with workprec(bits):
            return gauss.sphere_average_ball(lambda t, _a: getattr(to_ball(p["w"]) * to_ball(p[arg]) * t, kernel)(),
                                             int(p["d"]), bits)

    return det("direction-quadrature", None, two_prec(lambda p: mean(MF(p["w"]), MF(p[arg]), int(p["d"]))),
               description=f"E {kernel}(w q.{arg}), q uniform on S^{{d-1}}, by 1-D quadrature in the polar angle",
               printed_ctx=printed, printed_ball=printed_ball, reference_ball=reference_ball, n=n, **kw)


def printed_eq31(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (31) at |w_ij| = w: Gamma(d/2) 2^{d/2-1} (i w v)^{1-d/2} J_{d/2-1}(i w v) (principal branches), on a
    context.

    In mpmath with 30 guard digits: at small w v the complex power and the Bessel function each lose
    ~ (d/2) log10(1/(w v)) digits that cancel in the (real) product (on balls: :func:`_hankel_check`)."""
    w, v, d = ctx.num(p["w"]), ctx.num(p["v"]), int(p["d"])
    wv = float(MF(p["w"]) * MF(p["v"]))
    with mpmath.workdps(mpmath.mp.dps + 30 + int(d / 2 * max(0.0, -math.log10(wv + 1e-300)))):
        z = ctx.num(1j) * w * v
        out = ctx.re(ctx.gamma(ctx.num(d) / 2) * 2 ** (ctx.num(d) / 2 - 1) * z ** (1 - ctx.num(d) / 2)
                     * rp.besselj_ctx(ctx, ctx.num(d) / 2 - 1, z))
    return +out


P.claim("eq31", source=P.at("appendix A.1, eq (31) (Hankel-transform line)"),
        statement="E[e^{w_ij^T v}] = Gamma(d/2) 2^{d/2-1} int_0^inf dw p(w) (i w v)^{1-d/2} J_{d/2-1}(i w v) "
        "(checked conditionally on |w_ij| = w, w_ij isotropic)",
        domain=Domain({"w": Real(0.05, 30.0), "v": Real(0.05, 5.0, extra=(1.0,)), "d": Int(1, 256, extra=(2, 3))}),
        checks=[_hankel_check(printed_eq31, "v", "exp", 24)])


def printed_eq32(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (32) at alpha = d/2 - 1 and z (or i z), on a context (the tail on balls: the term ratio
    ``|z/2|^2/((k+1)(k+alpha+1))``, non-increasing in k as alpha >= -1/2)."""
    a, z = ctx.num(int(p["d"])) / 2 - 1, ctx.num(p["z"]) * (ctx.num(1j) if p["imag"] else 1)
    with mpmath.workdps(mpmath.mp.dps + int(float(p["z"]))):  # alternating for real z: guard digits
        out = ctx.series(lambda k: (-1) ** k / (ctx.gamma(k + 1) * ctx.gamma(k + a + 1)) * (z / 2) ** (2 * k + a),
                         lambda k: ctx.abs(z / 2) ** 2 / ((k + 1) * (k + a + 1)))
    return +out


def _besselj_arb(p: dict[str, Any]) -> Any:
    """Arb's ``J_alpha(z)`` (``alpha = d/2 - 1``, ``z`` or ``i z``)."""
    z = acb(0, to_ball(p["z"])) if p["imag"] else acb(to_ball(p["z"]))
    return z.bessel_j(arb(int(p["d"])) / 2 - 1)


def _tight32(value: Any) -> Any:
    """``(p, bits) -> value(p)``, 2^-bits tight (``30 + 2 z`` guard bits, then doubled up to 2048:
    :func:`rfcheck.references.simrf_proofs.tight_ball`)."""
    return lambda p, bits: rp.tight_ball(lambda: value(p), bits, 30 + 2 * int(float(p["z"])), 2048)


P.claim("eq32", source=P.at("appendix A.1, eq (32)"),
        statement="J_alpha(z) = sum_k (-1)^k / (k! Gamma(k + alpha + 1)) (z/2)^{2k+alpha}",
        domain=Domain({"d": Int(1, 256, extra=(1, 2, 3)), "z": Real(0.01, 40.0, extra=(1.0,)),
                       "imag": Choice((False, True))}),
        checks=[deterministic_check(
                    "mpmath-besselj", None,
                    two_prec(lambda p: mpmath.besselj(MF(int(p["d"])) / 2 - 1,
                                                      MF(p["z"]) * (mpmath.mpc(0, 1) if p["imag"] else 1))),
                    atol_scale=lambda p, dps: 1, description="mpmath.besselj (alpha = d/2 - 1, real and imaginary z)",
                    printed_ctx=printed_eq32, printed_ball=_tight32(lambda p: printed_eq32(ARB, p).v),
                    reference_ball=_tight32(_besselj_arb))],
        notes="alpha = d/2 - 1 as used in eq (31) (alpha = -1/2 at d = 1).")


def printed_eq75(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (75) at |w_ij| = w: Gamma(d/2) 2^{d/2-1} (w z)^{1-d/2} J_{d/2-1}(w z), on a context."""
    w, z, d = ctx.num(p["w"]), ctx.num(p["z"]), int(p["d"])
    return (ctx.gamma(ctx.num(d) / 2) * 2 ** (ctx.num(d) / 2 - 1) * (w * z) ** (1 - ctx.num(d) / 2)
            * rp.besselj_ctx(ctx, ctx.num(d) / 2 - 1, w * z))


P.claim("eq75", source=P.at("appendix A.8, eq (75)"),
        statement="E[cos w_ij^T z] = Gamma(d/2) 2^{d/2-1} int_0^inf dw p(w) (w z)^{1-d/2} J_{d/2-1}(w z) "
        "(checked conditionally on |w_ij| = w, w_ij isotropic)",
        domain=Domain({"w": Real(0.05, 20.0), "z": Real(0.05, 4.0, extra=(1.0,)), "d": Int(1, 128, extra=(2, 3))}),
        checks=[_hankel_check(printed_eq75, "z", "cos", 16, atol_scale=lambda p, dps: 1)])


# ----------------------------------------------------------------------- eq (78)


def printed_eq78(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (78) as printed, on a context (mpmath or Arb; ``d`` a Python int): ``sum_k (-z^2)^k/k! (Gamma(k+d)
    Gamma(d/2) / (2^k Gamma(k+d/2) Gamma(d)) - 1)``.

    The alternating series runs with ``z^2 + 10`` guard digits (``1.5 z^2 + 10`` guard bits on balls).  On balls
    its tail is enclosed by the majorant ``M_k = z^{2k}/k! (A_k + 1)``, ``A_k`` the bracket's first term
    (``ctx.dominated_series``): ``M_{j+1}/M_j`` is at most the larger of the two hypergeometric ratios
    ``z^2 (j+d)/(2(j+1)(j+d/2))`` and ``z^2/(j+1)``, both non-increasing, so at most their sum at ``k <= j``.
    SimRF appendix A.9, eq (78).
    """
    z, d = ctx.num(p["z"]), int(p["d"])
    x = float(p["z"]) ** 2
    with mpmath.workdps(mpmath.mp.dps + int(x) + 10) if ctx is MP else workprec(flint_ctx.prec + int(1.5 * x) + 10):
        dh = ctx.num(d) / 2
        g = ctx.gamma(dh) / ctx.gamma(d)
        def bracket_first(k: int) -> Any:
            return g * ctx.gamma(k + d) / (2**k * ctx.gamma(k + dh))

        out = ctx.dominated_series(lambda k: (-z * z) ** k / ctx.gamma(k + 1) * (bracket_first(k) - 1),
                                   lambda k: (z * z) ** k / ctx.gamma(k + 1) * (bracket_first(k) + 1),
                                   lambda k: z * z * (k + d) / (2 * (k + 1) * (k + dh)) + z * z / (k + 1))
    return +out


def _eq78_ref(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    z, d = MF(p["z"]), int(p["d"])
    with mpmath.workdps(dps):
        return ref.rff_orf_covariance(z, d) - mpmath.exp(-z * z), MF(1e-12)


P.claim(
    "eq78", source=P.at("appendix A.9, eq (78)"),
    statement="E_ort(a_1 a_2) - e^{-z^2} = sum_k (-z^2)^k/k! (Gamma(k+d) Gamma(d/2) / (2^k Gamma(k+d/2) Gamma(d)) - 1)",
    domain=Domain({"z": Real(0.0, 4.0, extra=(1.0,)), "d": Int(2, 128, extra=(2, 3, 64))}),
    checks=[det("bessel-quadrature", on_mp(printed_eq78), _eq78_ref, atol_scale=lambda p, dps: 1,
                description="E cos(w_12.z) over |w_12| ~ chi_2d (orthogonal pair) and a uniform direction",
                printed_ball=on_balls(printed_eq78),
                reference_ball=at_bits(
                    lambda p, bits: (
                        gauss.orthogonal_pair_cos_ball(p["z"], int(p["d"]), bits) - (-(to_ball(p["z"]) ** 2)).exp())),
                n=16)])


# --------------------------------------------------------------- eq (72) (RFF inner product)


def _rff_vectors(p: dict[str, Any], ctx: Any = MP) -> tuple[list[list[Any]], list[Any], list[Any]]:
    return rp.gaussian_vectors(int(p["m"]), int(p["d"]), int(p["seed"]), float(p["scale"]), ctx)


def printed_eq72(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (72): (1/m) sum_i cos w_i^T (x - y), on a context."""
    W, x, y = _rff_vectors(p, ctx)
    diff = [a - b for a, b in zip(x, y, strict=True)]
    return ctx.fsum(*(ctx.cos(rp.ctx_dot(ctx, w, diff)) for w in W)) / len(W)


def _rff_gram_ctx(ctx: Any, p: dict[str, Any]) -> Any:
    """phi(x)^T phi(y) with phi of eq (3)/(71), ``sqrt(1/m) (sin(w_i.z), cos(w_i.z))`` concatenated, on a context."""
    W, x, y = _rff_vectors(p, ctx)
    def phi(z: list[Any]) -> list[Any]:
        out = []
        for w in W:
            t = rp.ctx_dot(ctx, w, z)
            out += [ctx.sin(t), ctx.cos(t)]
        return [o / ctx.sqrt(ctx.num(len(W))) for o in out]

    return rp.ctx_dot(ctx, phi(x), phi(y))


def _gram_check(printed: Any, gram: Any, relative: bool, how: str = "") -> Check:
    """The printed kernel estimate ``printed(ctx, p)`` against ``gram(ctx, p)``, the inner product of the feature
    vectors for random w, x, y, in mpmath at 10 guard digits (error ``10^(-dps-5)``, relative to the value if
    ``relative``, else absolute on the scale 1) and on balls (the point's ints kept as ints)."""
    def reference(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
        with mpmath.workdps(dps + 10):
            val = gram(MP, p)
            return val, (abs(val) if relative else 1) * MF(10) ** (-dps - 5)

    return deterministic_check("feature-inner-product", None, reference,
                               atol_scale=None if relative else lambda p, dps: 1, printed_ctx=printed,
                               printed_ball=on_balls(printed), reference_ball=on_balls(gram),
                               description="the inner product of the printed feature vectors, random w, x, y" + how)


#: the points of the feature inner-product claims, eq (72) (RFF) and eq (28) (PRF)
_GRAM_DOMAIN = Domain(
    {"m": Int(1, 64, extra=(1, 2)), "d": Int(1, 64, extra=(2,)), "scale": Real(0.0, 3.0), "seed": SEED})

P.claim("eq72", source=P.at("appendix A.8, eq (72)"),
        statement="K_hat = phi_RFF(x)^T phi_RFF(y) = (1/m) sum_i cos w_i^T (x - y), phi_RFF of eq (3) / (71)",
        domain=_GRAM_DOMAIN, checks=[_gram_check(printed_eq72, _rff_gram_ctx, False)])


# --------------------------------------------------------------- Lemma A.1: eq (36)-(38)


def _equal_norm_domain(m_max: int, fixed_points: list[dict[str, Any]]) -> Domain:
    """The points ``(d, m, v, w, seed)`` of the equal-norm claims, eq (36) and (38): ``m <= m_max`` random unit
    directions in ``R^d`` (seeded), norms ``w``."""
    return Domain({"d": Int(1, 64, extra=(2, 3)), "m": Int(2, m_max, extra=(2,)), "v": Real(0.0, 3.0),
                   "w": Real(0.0, 8.0), "seed": SEED}, fixed_points=fixed_points)


def _equal_norm_point(p: dict[str, Any], ctx: Any = MP) -> tuple[int, int, Any, Any, list[list[Any]]]:
    d, m = int(p["d"]), int(p["m"])
    return d, m, ctx.num(p["v"]), ctx.num(p["w"]), rp.ctx_rows(ctx, rp.unit_config(m, d, int(p["seed"])))


def printed_eq36(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (36), first expression: Gamma(d/2)/(m(m-1)) sum_{i != j} sum_k v^{2k} w^{2k} |u_i + u_j|^{2k}
    / (2^{2k} k! Gamma(k+d/2)), on a context."""
    d, m, v, w, U = _equal_norm_point(p, ctx)
    tot = ctx.num(0)
    for i, j in itertools.permutations(range(m), 2):
        s2 = ctx.fsum(*((a + b) ** 2 for a, b in zip(U[i], U[j], strict=True)))
        tot += rp.f_series_ctx(ctx, v * v * w * w * s2, d)
    return ctx.gamma(ctx.num(d) / 2) / (m * (m - 1)) * tot


def _eq36_ref_ctx(ctx: Any, p: dict[str, Any]) -> Any:
    """mean_{i != j} E exp(w (u_i + u_j) . R v) over a uniform rotation R, per pair the direction average in the
    polar angle (:func:`rfcheck.references.simrf.rotated_ensemble_conformity`)."""
    d, _, v, w, U = _equal_norm_point(p, ctx)
    return ref.rotated_ensemble_conformity(ctx, U, v, w, d)


P.claim("eq36", source=P.at("appendix A.2 (Lemma A.1 proof), eq (36)"),
        statement="equal norms w: rho(x,y) = Gamma(d/2)/(m(m-1)) sum_i sum_{j != i} sum_k v^{2k} w^{2k} "
        "|w_hat_i + w_hat_j|^{2k} / (2^{2k} k! Gamma(k + d/2))",
        domain=_equal_norm_domain(
            6, [{"d": 3, "m": 3, "v": 1.0, "w": 2.0, "seed": 1}, {"d": 8, "m": 5, "v": 0.7, "w": 3.0, "seed": 2},
                {"d": 64, "m": 6, "v": 1.5, "w": 4.0, "seed": 3}, {"d": 2, "m": 4, "v": 2.0, "w": 5.0, "seed": 4},
                {"d": 16, "m": 6, "v": 3.0, "w": 8.0, "seed": 5}]),
        checks=[det("direction-quadrature", None, two_prec(lambda p: _eq36_ref_ctx(MP, p)), printed_ctx=printed_eq36,
                    printed_ball=on_balls(printed_eq36), reference_ball=on_balls(_eq36_ref_ctx),
                    description="mean over ordered pairs of E exp(w (u_i + u_j).q |v|), q uniform on S^{d-1} "
                    "(the estimand E b_i b_j of a rotated equal-norm ensemble), 1-D quadrature per pair", n=7)],
        notes="Directions: m random unit vectors in R^d (seeded). The second equality of eq (36) defines f "
        "(eq 37) and is a tautology.")


def printed_f37(s: Any, p: dict[str, Any], ctx: Any = MP) -> Any:
    """Eq (37): f(s) = Gamma(d/2)/(m(m-1)) sum_k v^{2k} w^{2k} s^k / (2^{2k} k! Gamma(k+d/2)) (context: mpmath)."""
    d, m = int(p["d"]), int(p["m"])
    c = ctx.num(p["v"]) ** 2 * ctx.num(p["w"]) ** 2
    return ctx.gamma(ctx.num(d) / 2) / (m * (m - 1)) * rp.f_series_ctx(ctx, c * s, d)


#: how the derivative checks of eq (37), (42) compute the printed side's derivative
_NUM_DIFF = "mpmath numerical derivative of the series"


def _derivative_check(name: str, fun: Any, order: int, desc: str, derivative_ball: Any) -> Check:
    """``-fun^{(order)}(s) <= 0`` by mpmath numerical differentiation (error bar: two step sizes).

    Certified by ``derivative_ball(p, order)``: the derivative differentiated analytically
    (termwise, :func:`rfcheck.references.simrf_proofs.f_series_derivative_ball`) on balls."""
    def lhs_rhs(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
        with mpmath.workdps(dps + 20):
            s = MF(p["s"])
            a = mpmath.diff(lambda t: fun(t, p), s, order)
            b = mpmath.diff(lambda t: fun(t, p), s, order, h=MF(10) ** (-(dps + 20) // 3))
        return -a, MF(0), abs(a - b) + abs(a) * MF(10) ** (-dps)

    return inequality_check(name, lhs_rhs, description=desc,
                            sides_ball=at_bits(lambda p, bits: (-derivative_ball(p, order), arb(0))))


def _f37_derivative_ball(p: dict[str, Any], order: int) -> Any:
    """``f^{(n)}(s)`` of eq (37) on balls: with ``c = v^2 w^2`` and ``F_d`` the series of
    :func:`rfcheck.references.simrf_proofs.f_series`, ``f(s) = Gamma(d/2)/(m(m-1)) F_d(c s)`` and
    ``f^{(n)}(s) = Gamma(d/2)/(m(m-1)) c^n F_d^{(n)}(c s)`` (chain rule; ``F_d^{(n)}`` termwise)."""
    d, m = int(p["d"]), int(p["m"])
    c = arb(p["v"]) ** 2 * arb(p["w"]) ** 2
    return (arb(d) / 2).gamma() / (m * (m - 1)) * c**order * rp.f_series_derivative_ball(c * arb(p["s"]), d, order)


def _f42_derivative_ball(p: dict[str, Any], order: int) -> Any:
    """``f^{(n)}(s)`` of eq (42) on balls: ``f(s) = F_d(v^2 s)``, ``f^{(n)}(s) = v^{2n} F_d^{(n)}(v^2 s)``."""
    c = arb(p["v"]) ** 2
    return c**order * rp.f_series_derivative_ball(c * arb(p["s"]), int(p["d"]), order)


P.claim("eq37", source=P.at("appendix A.2 (Lemma A.1 proof), eq (37)"),
        statement="f(s) = Gamma(d/2)/(m(m-1)) sum_k v^{2k} w^{2k} s^k / (2^{2k} k! Gamma(k + d/2)) "
        "(s = |w_hat_i + w_hat_j|^2 in [0, 4]) is an increasing convex function",
        domain=Domain({"d": Int(1, 256, extra=(2, 3)), "m": Int(2, 64, extra=(2,)), "v": Real(0.0, 5.0),
                       "w": Real(0.0, 10.0), "s": Real(0.0, 4.0)}),
        checks=[_derivative_check(name, printed_f37, order, f"{f_n}(s) >= 0, {_NUM_DIFF}", _f37_derivative_ball)
                for name, order, f_n in (("increasing", 1, "f'"), ("convex", 2, "f''"))])


def _eq38(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    """(m(m-1) f(mean s_ij), sum_{i != j} f(s_ij), err): Jensen for random unit directions."""
    with mpmath.workdps(dps + 10):
        lhs, rhs = _eq38_sides(MP, p)
    return lhs, rhs, abs(rhs) * MF(10) ** (3 - dps)


def _eq38_sides(ctx: Any, p: dict[str, Any]) -> tuple[Any, Any]:
    _, m, _, _, U = _equal_norm_point(p, ctx)
    s = [ctx.fsum(*((a + b) ** 2 for a, b in zip(U[i], U[j], strict=True)))
         for i, j in itertools.permutations(range(m), 2)]
    lhs = m * (m - 1) * printed_f37(ctx.fsum(*s) / len(s), p, ctx)
    rhs = ctx.fsum(*(printed_f37(x, p, ctx) for x in s))
    return lhs, rhs


def _eq38_sides_ball(p: dict[str, Any], bits: int) -> Any:
    """Both sides of eq (38) on balls, or why they cannot decide: in Jensen's equality cases (``f`` constant,
    ``v w = 0``; a single pair's ``s_ij``, ``m = 2``) the two sides are equal and their balls always overlap."""
    if float(p["v"]) * float(p["w"]) == 0 or int(p["m"]) == 2:
        return ("Jensen's equality case (f constant as v w = 0, or one pair's s_ij as m = 2): the two sides are "
                "equal, and balls of equal values overlap")
    return on_balls(_eq38_sides)(p, bits)


P.claim("eq38", source=P.at("appendix A.2 (Lemma A.1 proof), eq (38)"),
        statement="sum_i sum_{j != i} f(|w_hat_i + w_hat_j|^2) >= m(m-1) f(sum_i sum_{j != i} |w_hat_i + w_hat_j|^2 "
        "/ (m(m-1))) (Jensen), f of eq (37)",
        domain=_equal_norm_domain(24, [{"d": 8, "m": 12, "v": 1.5, "w": 3.0, "seed": 6},
                                       {"d": 3, "m": 24, "v": 3.0, "w": 8.0, "seed": 7}]),
        checks=[inequality_check("direct-sum", _eq38, max_points=30, sides_ball=_eq38_sides_ball,
                                 description="both sides for random unit directions, f by its series (mpmath)")])


# --------------------------------------------------------------- Thm 3.4 proof: eq (41)-(48)


def printed_eq41(p: dict[str, Any]) -> tuple[float, float]:
    """Eq (41), second line: Gamma(d/2)/(m(m-1)) int p(w_1..w_d)/d! sum_P sum_{i != j} sum_k v^{2k}/(2^{2k} k!
    Gamma(k+d/2)) (w_{P_i}^2 u_i.u_i + w_{P_j}^2 u_j.u_j + 2 w_{P_i} w_{P_j} u_i.u_j)^k, m = d.

    Under the integral over i.i.d. norms each (P, i, j) term depends on two independent chi_d
    norms only (the other d - 2 integrate to 1), so the d! terms of a pair share one 2-D integral.

    Not written against the number-system context: its ingredient is a float64 2-D Gauss-Legendre quadrature of
    the printed integrand (:func:`rfcheck.references.simrf_proofs.pair_series_chi_integral`, returned with its
    error bar), and the check compares it with Monte Carlo only, so its printed side is never a ball (the check's
    points are marked not certifiable: the reference has no enclosure)."""
    d, v = int(p["d"]), float(p["v"])
    U = rp.unit_config(d, d, int(p["seed"]), p["config"])
    G = U @ U.T
    tot, err = 0.0, 0.0
    for i, j in itertools.permutations(range(d), 2):
        val, e = rp.pair_series_chi_integral(v, d, float(G[i, j]) / float(G[i, i] * G[j, j]) ** 0.5)
        # sum over the d! permutations of d!-fold identical integrals, divided by d!
        tot += val
        err += e
    g = math.gamma(d / 2) / (d * (d - 1))
    return g * tot, g * err


def _eq41_mc(p: dict[str, Any], budget: Budget, seed: int) -> PointEval:
    """Monte Carlo of mean_{i != j} b_i b_j, b_i = exp(w_i . v), w_i = r_i R u_i, r_i iid chi_d, R uniform."""
    d, v = int(p["d"]), float(p["v"])
    pv, perr = printed_eq41(p)
    U = rp.unit_config(d, d, int(p["seed"]), p["config"])
    est = estimate_mean(ref.rotated_configuration_pair_products(U, v, budget.mc_trials, seed))
    return compare_mc(p, pv, est, z_crit=z_critical(budget.alpha, budget.mc_points), atol=10 * perr)


P.claim("eq41", source=P.at("appendix A.2 (Thm 3.4 proof), eq (41)"),
        statement="rho(x,y) = Gamma(d/2)/(m(m-1)) int dw_1..dw_d p(w_1..w_d)/d! sum_{P in S_d} sum_i sum_{j != i} "
        "sum_k v^{2k}/(2^{2k} k! Gamma(k+d/2)) (w_{P_i}^2 w_hat_i.w_hat_i + w_{P_j}^2 w_hat_j.w_hat_j + "
        "2 w_{P_i} w_{P_j} w_hat_i.w_hat_j)^k for i.i.d. chi_d norms and a fixed direction configuration",
        domain=Domain({"d": Int(2, 5, scale="linear"), "v": Real(0.1, 1.0, extra=(1.0,)), "seed": SEED,
                       "config": Choice(("random", "simplex", "orthogonal"))}),
        checks=[
            not_certifiable(
                Check("monte-carlo", 3, _eq41_mc, search=False,
                      description="mean_{i != j} b_i b_j with norms iid chi_d and the configuration uniformly rotated "
                      "(the estimand of eq (30)); the printed side by 2-D Gauss-Legendre per pair"),
                "the reference is a Monte Carlo estimate (a z-test against sampled b_i b_j): no enclosure")],
        notes="m = d (one block). The printed side's d! permutation terms are equal integrals; they are evaluated "
        "once per ordered pair (i, j).")


def printed_f42(s: Any, p: dict[str, Any], ctx: Any = MP) -> Any:
    """Eq (42): f(s) = sum_k v^{2k} s^k / (2^{2k} k! Gamma(k + d/2)) (context: mpmath)."""
    return rp.f_series_ctx(ctx, ctx.num(p["v"]) ** 2 * s, int(p["d"]))


P.claim("eq42", source=P.at("appendix A.2 (Thm 3.4 proof), eq (42) and 'f is once again convex and positive definite'"),
        statement="f(s) = sum_k v^{2k} s^k / (2^{2k} k! Gamma(k + d/2)) is convex and positive for "
        "s = w_{P_i}^2 + w_{P_j}^2 + 2 w_{P_i} w_{P_j} w_hat_i.w_hat_j >= 0",
        domain=Domain({"d": Int(1, 256, extra=(2, 3)), "v": Real(0.0, 5.0), "s": Real(0.0, 200.0)}),
        checks=[_derivative_check("convex", printed_f42, 2, f"f''(s) >= 0, {_NUM_DIFF}", _f42_derivative_ball),
                inequality_check("positive", lambda p, dps: (-printed_f42(MF(p["s"]), p), MF(0), MF(0)),
                                 description="f(s) > 0 (checked as -f <= 0 at the working precision)",
                                 sides_ball=on_balls(lambda ctx, p: (-printed_f42(ctx.num(p["s"]), p, ctx),
                                                                     ctx.num(0))))],
        notes="'Positive definite' is read as 'positive'.")


def _eq43_sides(p: dict[str, Any], ctx: Any = MP) -> tuple[Any, Any, Any]:
    """(eq 42 sum, eq 43 LHS, eq 43 RHS) at the current precision (context: mpmath)."""
    d = int(p["d"])
    r, C = rp.perm_config(d, int(p["seed"]), ctx)
    perms, pairs = list(itertools.permutations(range(d))), list(itertools.permutations(range(d), 2))

    def q(i: int, j: int, P: tuple[int, ...]) -> Any:  # w_i^2 + w_j^2 + 2 w_i w_j w_hat_{P_i}.w_hat_{P_j}
        return r[i] ** 2 + r[j] ** 2 + 2 * r[i] * r[j] * C[P[i]][P[j]]

    s42 = ctx.fsum(*(printed_f42(r[P[i]] ** 2 + r[P[j]] ** 2 + 2 * r[P[i]] * r[P[j]] * C[i][j], p, ctx)
                     for P in perms for i, j in pairs))
    lhs = ctx.fsum(*(printed_f42(q(i, j, P), p, ctx) for P in perms for i, j in pairs))
    rhs = math.factorial(d) * ctx.fsum(
        *(printed_f42(ctx.fsum(*(q(i, j, P) for P in perms)) / math.factorial(d), p, ctx) for i, j in pairs))
    return s42, lhs, rhs


# eq (43) and its relabelling share this domain: interior points tried first (the grid's corners include
# degenerate v = 0 points that cannot fail)
_PERM_DOMAIN = Domain({"d": Int(2, 4, scale="linear"), "v": Real(0.0, 3.0), "seed": SEED},
                      fixed_points=[{"d": 4, "v": 1.5, "seed": 8}, {"d": 4, "v": 3.0, "seed": 9},
                                    {"d": 3, "v": 2.0, "seed": 10}])


def _two_sides(name: str, sides: Any, description: str, which: tuple[int, int] = (0, 1), rel: bool = False,
               n: int | None = None) -> Check:
    """``sides(p, ctx)[which[0]]`` (the printed side) against ``sides(p, ctx)[which[1]]`` (the reference: in mpmath at
    10 guard digits, error ``10^(-dps-3)``, relative to the value if ``rel``), both on balls too (the point's ints
    kept as ints); at most ``n`` points if given (an expensive check)."""
    i, j = which
    def reference(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
        with mpmath.workdps(dps + 10):
            val = sides(p)[j]
        return val, (abs(val) if rel else 1) * MF(10) ** (-dps - 3)

    check = deterministic_check(name, lambda p: sides(p)[i], reference, description=description,
                                printed_ball=on_balls(lambda ctx, p: sides(p, ctx)[i]),
                                reference_ball=on_balls(lambda ctx, p: sides(p, ctx)[j]))
    return check if n is None else capped(check, n)


P.claim("eq43.relabel",
        source=P.at("appendix A.2 (Thm 3.4 proof), eq (42) = eq (43) left side ('relabelling summation variables')"),
        statement="sum_P sum_i sum_{j != i} f(w_{P_i}^2 + w_{P_j}^2 + 2 w_{P_i} w_{P_j} w_hat_i.w_hat_j) = "
        "sum_P sum_i sum_{j != i} f(w_i^2 + w_j^2 + 2 w_i w_j w_hat_{P_i}.w_hat_{P_j})", domain=_PERM_DOMAIN,
        checks=[_two_sides("direct-sum", _eq43_sides, "both sums over all d! permutations, random norms and directions",
                           which=(1, 0), rel=True, n=16)])


def _eq43(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    with mpmath.workdps(dps + 10):
        _, lhs, rhs = _eq43_sides(p)
    return rhs, lhs, abs(lhs) * MF(10) ** (3 - dps)


P.claim("eq43", source=P.at("appendix A.2 (Thm 3.4 proof), eq (43)"),
        statement="sum_P sum_i sum_{j != i} f(w_i^2 + w_j^2 + 2 w_i w_j w_hat_{P_i}.w_hat_{P_j}) "
        ">= d! sum_i sum_{j != i} f(sum_P (w_i^2 + w_j^2 + 2 w_i w_j w_hat_{P_i}.w_hat_{P_j}) / d!) (Jensen)",
        domain=_PERM_DOMAIN,
        checks=[ineq("direct-sum", _eq43, description="both sides over all d! permutations (mpmath)",
                     sides_ball=on_balls(lambda ctx, p: (lambda t: (t[2], t[1]))(_eq43_sides(p, ctx))), n=16)])


def _lagrangian_point(p: dict[str, Any], ctx: Any = MP) -> tuple[int, Any, list[Any], list[list[Any]]]:
    """``(d, v, r, U)`` of a point, numbers of the context: norms ``r`` (the float64 draw, exact), unit rows ``U``
    (the float64 configuration normalised on the context, :func:`rfcheck.references.simrf_proofs.ctx_rows`)."""
    d = int(p["d"])
    r = [ctx.num(float(x)) for x in rp.chi_norms(d, d, int(p["seed"]) + 1)]
    return d, ctx.num(p["v"]), r, rp.ctx_rows(ctx, rp.unit_config(d, d, int(p["seed"])))


def printed_eq45_vector(ctx: Any, p: dict[str, Any], i: int, literal46: bool = False) -> list[Any]:
    """Eq (45) without the multiplier term, on a context: sum_P sum_{j != i} sum_k v^{2k} k w_{P_iP_j}^{2k-2} /
    (2^{2k} k! Gamma(k+d/2)) (w_{P_i}^2 u_i + w_{P_i} w_{P_j} u_j); w_{P_iP_j}^2 = the quadratic form of eq (46)
    (norm reading) or, ``literal46``, w_{P_iP_j} = the quadratic form as eq (46) writes it.  The k-series by its
    exact term ratio (``ctx.ratio_series``): first term ``v^2/(4 Gamma(1+d/2))``, ratio of terms ``k+1 : k``
    ``v^2 base^2 / (4 (k+1) (k+1+d/2))``."""
    d, v, r, U = _lagrangian_point(p, ctx)
    out = [ctx.num(0)] * d
    for P in itertools.permutations(range(d)):
        for j in range(d):
            if j == i:
                continue
            a, b = r[P[i]], r[P[j]]
            q = a * a + b * b + 2 * a * b * rp.ctx_dot(ctx, U[i], U[j])
            base = q if literal46 else ctx.sqrt(q)
            coef = ctx.ratio_series(v**2 / (4 * ctx.gamma(ctx.num(d) / 2 + 1)),
                                    lambda k, base=base: v * v * base**2 / (4 * (k + 1) * (k + 1 + ctx.num(d) / 2)))
            out = [o + coef * (a * a * U[i][c] + a * b * U[j][c]) for c, o in enumerate(out)]
    return out


def _grad_L(p: dict[str, Any], i: int) -> list[Any]:
    """Reference: the hand-derived gradient of eq (44)'s first term at the point (mpmath)."""
    _, v, r, U = _lagrangian_point(p)
    return rp.lagrangian_gradient(v, r, U, i)


def _unit(x: list[Any]) -> list[Any]:
    n = mpmath.sqrt(mpmath.fsum(t * t for t in x))
    return [t / n for t in x] if n else x


def _parallel_distance(p: dict[str, Any], literal46: bool, dps: int) -> Any:
    """max_i |G_i/|G_i| - grad_i/|grad_i|| at ``dps`` digits: 0 iff the printed vector is a positive multiple of the
    gradient."""
    with mpmath.workdps(dps):
        worst = MF(0)
        for i in range(int(p["d"])):
            a, b = _unit(printed_eq45_vector(MP, p, i, literal46)), _unit(_grad_L(p, i))
            worst = max(worst, mpmath.sqrt(mpmath.fsum((x - y) ** 2 for x, y in zip(a, b, strict=True))))
        return worst


def _parallel_distance_ball(p: dict[str, Any], bits: int, literal46: bool) -> Any:
    """:func:`_parallel_distance` on Arb balls (the configuration of :func:`_lagrangian_point`, exact on balls): the
    printed sum by :func:`printed_eq45_vector` on balls, the gradient by
    :func:`rfcheck.references.simrf_proofs.lagrangian_gradient_ball`."""
    d, v, r, U = _lagrangian_point(p, ARB)
    def unit(x: list[Any]) -> list[Any]:
        n = sum((t * t for t in x), arb(0))
        return x if n.is_zero() else [t / n.sqrt() for t in x]

    def nonneg_sqrt(x: Any) -> Any:  # sqrt of a ball of a sum of squares that may reach below 0
        if x >= 0:
            return x.sqrt()
        top = x.upper().sqrt().upper()
        return arb(top / 2, top / 2)

    worst = arb(0)
    for i in range(d):
        H = rp.lagrangian_gradient_ball(v.v, r, U, i)
        ga, ha = unit([g.v for g in printed_eq45_vector(ARB, p, i, literal46)]), unit(H)
        dist = nonneg_sqrt(sum(((x - y) * (x - y) for x, y in zip(ga, ha, strict=True)), arb(0)))
        worst = worst.max(dist)
    return worst


def _eq45_check(literal46: bool) -> Check:
    return deterministic_check("gradient-literal46" if literal46 else "gradient", lambda p: MF(0),
                               lambda p, dps: (_parallel_distance(p, literal46, dps + 10), MF(10) ** (-dps - 3)),
                               atol_scale=lambda p, dps: 1,
                               description="max_i distance between the unit vectors of the printed sum and of the "
                               "hand-derived gradient 4 sum_P sum_{j != i} F'(q)(w_{P_i}^2 u_i + w_{P_i} w_{P_j} u_j) "
                               "(tied to finite differences in the tests)", printed_ball=lambda p, bits: 0,
                               reference_ball=lambda p, bits: _parallel_distance_ball(p, bits, literal46))


P.claim("eq45", source=P.at("appendix A.2 (Thm 3.4 proof), eq (44)-(46)"),
        statement="d L / d w_hat_i = 0 reads sum_P sum_{j != i} sum_k v^{2k} k w_{P_iP_j}^{2k-2}/(2^{2k} k! "
        "Gamma(k+d/2)) (w_{P_i}^2 w_hat_i + w_{P_i} w_{P_j} w_hat_j) - lambda_i w_i = 0, where eq (46) writes "
        "w_{P_i}^2 w_hat_i.w_hat_i + w_{P_j}^2 w_hat_j.w_hat_j + 2 w_{P_i} w_{P_j} w_hat_i.w_hat_j = w_{P_iP_j}; "
        "checked as: the printed sum is a positive multiple of the gradient of the first term of L "
        "(eq 44), the multiple absorbed by lambda_i",
        domain=Domain({"d": Int(2, 4, scale="linear"), "v": Real(0.0, 2.0), "seed": SEED},
                      fixed_points=[{"d": 4, "v": 1.0, "seed": 11}, {"d": 3, "v": 2.0, "seed": 12},
                                    {"d": 4, "v": 0.3, "seed": 13}]),
        readings=[
            Reading("literal (46)", [capped(_eq45_check(True), 12)],
                    description="w_{P_iP_j} = the quadratic form itself, as eq (46) writes it: the weights are "
                    "q^{2k-2} instead of q^{k-1}"),
            Reading(
                "norm", [capped(_eq45_check(False), 16)],
                description="w_{P_iP_j} = |w_{P_i} w_hat_i + w_{P_j} w_hat_j|, the norm whose square is eq (46)'s "
                "quadratic form; the printed sum is then exactly 1/4 of the gradient (the factor and lambda_i w_i in "
                "place of lambda_i w_hat_i are absorbed by the multiplier)", natural=True,
                reason="w_ij is the norm |w_i + w_j| throughout the paper (Def 3.1, eq 10; sec 3.1), and only its "
                "(2k-2)-th power is what differentiating (eq 44)'s k-th power of the quadratic form gives")],
        correction="Eq (46) should read '= w_{P_iP_j}^2': with w_{P_iP_j} the norm, as w_ij throughout, eq (45) "
        "holds; read literally (w_{P_iP_j} the quadratic form) the weights are q^{2k-2} instead of q^{k-1} "
        "(d = 4, v = 1, seed 11: the printed and true gradient directions differ by 0.3366). Eq (47) and Thm 3.4 do "
        "not depend on it.",
        notes="Until 2026-11-26 the literal reading was registered as its own claim, simrf.eq45.literal46; it is now "
        "the reading 'literal (46)' of this claim.")


def _equal_angle_point(p: dict[str, Any], ctx: Any = MP) -> tuple[int, list[list[Any]], list[Any]]:
    """(d, Gram matrix of unit directions at equal angles, chi_d norms) at the point (on a context)."""
    return int(p["d"]), *rp.equal_angle_config(int(p["d"]), p["t"], int(p["seed"]), ctx)


def _eq46_pair(p: dict[str, Any], ctx: Any = MP) -> tuple[Any, Any]:
    d, C, r = _equal_angle_point(p, ctx)
    P = list(np.random.default_rng(int(p["seed"]) + 7).permutation(d))
    i, j = 0, 1
    a, b = r[P[i]], r[P[j]]
    left = a * a * C[i][i] + b * b * C[j][j] + 2 * a * b * C[i][j]
    right = a * a * C[P[i]][P[i]] + b * b * C[P[j]][P[j]] + 2 * a * b * C[P[i]][P[j]]
    return left, right


_EQUAL_ANGLE_DOMAIN = Domain({"d": Int(2, 5, scale="linear"), "t": Real(0.0, 0.99), "seed": SEED, "v": Real(0.0, 2.0),
                              "k": Int(1, 12, scale="linear")})

P.claim("eq46", source=P.at("appendix A.2 (Thm 3.4 proof), eq (46)"),
        statement="with w_hat_{P_i}.w_hat_{P_j} = w_hat_i.w_hat_j (all directions at equal angles): "
        "w_{P_i}^2 w_hat_i.w_hat_i + w_{P_j}^2 w_hat_j.w_hat_j + 2 w_{P_i} w_{P_j} w_hat_i.w_hat_j = "
        "w_{P_i}^2 w_hat_{P_i}.w_hat_{P_i} + w_{P_j}^2 w_hat_{P_j}.w_hat_{P_j} "
        "+ 2 w_{P_i} w_{P_j} w_hat_{P_i}.w_hat_{P_j}", domain=_EQUAL_ANGLE_DOMAIN,
        checks=[_two_sides("direct", _eq46_pair, "both quadratic forms for an equal-angle configuration "
                                                 "(common cosine from -1/(d-1) up), random norms and permutation")],
        notes="The middle '= w_{P_iP_j}' names the form (see the readings of simrf.eq45).")


def _eq47_terms(p: dict[str, Any], ctx: Any = MP) -> tuple[Any, Any]:
    """The parenthesis of eq (47), sum_P w_{P_iP_j}^{2k-2} w_{P_i} w_{P_j}, for the pair (1, 2) and a random pair."""
    d, C, r = _equal_angle_point(p, ctx)
    k = int(p["k"])
    i2, j2 = (int(x) for x in np.random.default_rng(int(p["seed"]) + 3).choice(d, 2, replace=False))
    def term(i: int, j: int) -> Any:
        tot = ctx.num(0)
        for P in itertools.permutations(range(d)):
            a, b = r[P[i]], r[P[j]]
            q = a * a + b * b + 2 * a * b * C[i][j]
            tot += q ** (k - 1) * a * b
        return tot

    return term(0, 1), term(i2, j2)


P.claim("eq47", source=P.at("appendix A.2 (Thm 3.4 proof), eq (47) and the sentence after it"),
        statement="the term in parentheses (sum_{P in S_d} w_{P_iP_j}^{2k-2} w_{P_i} w_{P_j}) is identical for every "
        "i, j (directions at equal angles, eq 46)", domain=_EQUAL_ANGLE_DOMAIN,
        checks=[_two_sides("direct", _eq47_terms, "the parenthesis for (i, j) = (1, 2) vs a random pair, all d! "
                                                  "permutations, equal-angle configuration, random chi_d norms")],
        notes="Without equal angles the parenthesis depends on w_hat_i.w_hat_j and differs between pairs; the "
        "proof gets equal angles from Jensen (eq 43) and eq (46).")

#: direction resolution of the L-BFGS minimiser in the eq (48) check (measured 1e-16 .. 8e-8 for d <= 5)
EQ48_RESOLUTION = 1e-6


def _eq48(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    """At the best of several L-BFGS minima of the eq (42) sum: (max_i |u_i + S_i/|S_i||, resolution, 0),
    S_i = sum_{j != i} u_j."""
    d, v, seed = int(p["d"]), float(p["v"]), int(p["seed"])
    X = rp.multistart_minimiser(rp.symmetrised_pair_objective(rp.chi_norms(d, d, seed), v), d * d, seed + 11).reshape(
        d, d)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = U.sum(axis=0)[None, :] - U
    dist = np.max(np.linalg.norm(U + S / np.linalg.norm(S, axis=1, keepdims=True), axis=1))
    return MF(float(dist)), MF(EQ48_RESOLUTION), MF(0)


P.claim("eq48", source=P.at("appendix A.2 (Thm 3.4 proof), eq (48)"),
        statement="at the minimiser of eq (42): w_hat_i proportional to -sum_{j != i} w_hat_j (i = 1..d), "
        "uniquely the simplex geometry",
        domain=Domain({"d": Int(2, 5, scale="linear"), "v": Real(0.1, 2.0, extra=(1.0,)), "seed": SEED},
                      fixed_points=[{"d": 4, "v": 1.0, "seed": 14}, {"d": 5, "v": 1.0, "seed": 15}]),
        checks=[ineq("optimiser", _eq48,
                     description="max_i |w_hat_i + S_i/|S_i|| (S_i = sum_{j != i} w_hat_j) at the best of 4 L-BFGS "
                     "minima (exact gradient) of the permutation-symmetrised eq (42) sum, random chi_d norms, "
                     "<= 1e-6 (the optimiser's direction resolution; a non-simplex minimiser gives O(1))",
                     not_certified="the checked configuration is a float64 L-BFGS-B minimiser (a numerical optimiser's "
                     "output, its resolution 1e-6 the bound): no enclosure of the exact minimiser", n=5)])


# --------------------------------------------------------------- A.3: eq (16)/(51), (17), (49), (50)


def printed_rho_tilde(ctx: Any, W: np.ndarray, v: Any) -> Any:
    """Eq (15) on a context: Gamma(d/2) v^2 / (4 m(m-1) Gamma(1 + d/2)) sum_{i != j} |w_i + w_j|^2, ``W`` an
    ``(m, d)`` array of the context's numbers (float64: the float64 eq (17) iterate it is evaluated at)."""
    m, d = W.shape
    S = W[:, None, :] + W[None, :, :]
    s2 = np.sum(S * S, axis=2)
    dh = ctx.num(d) / 2
    return ctx.gamma(dh) * v * v / (4 * m * (m - 1) * ctx.gamma(1 + dh)) * (s2.sum() - np.trace(s2))


def _plus_config(p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    return rp.plus_config(int(p["d"]), int(p["seed"]), float(p.get("big", 1.0)), p.get("start", "simplex"))


def _eq16(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    W0, r = _plus_config(p)
    _, _, res = rp.eq17_iterate(W0)
    d, v = int(p["d"]), float(p["v"])
    ref = rp.rho_tilde_minimum(r, v, d)
    return MF(ref), MF(1e-12 * ref + 10 * res * ref)


P.claim(
    "eq16", source=P.at("sec 3.2 eq (16) (= appendix A.3 eq (51))"),
    statement="the truncated objective eq (15) is exactly minimised by "
    "w_i = -(sum_{j != i} w_j)/|sum_{j != i} w_j| w_i, i = 1..d (any configuration satisfying it)",
    domain=Domain({"d": Int(2, 64, extra=(2, 3, 6)), "v": Real(0.1, 2.0), "seed": SEED,
                   "start": Choice(("simplex", "random")), "big": Choice((1.0, 40.0))}),
    checks=[
        det("analytic-minimum",
            lambda p: MF(float(printed_rho_tilde(FP, rp.eq17_iterate(_plus_config(p)[0])[0], float(p["v"])))), _eq16,
            description="eq (15) at a configuration satisfying eq (16) (reached by the eq (17) update from "
            "the simplex or a random start; residual in the error bar) vs the exact minimum "
            "Gamma(d/2) v^2/(4m(m-1)Gamma(1+d/2)) (2(m-2) sum w_i^2 + 2 max(0, 2 max w_i - sum w_i)^2)",
            not_certified="the eq (16) configuration is a float64 iterate of the eq (17) update, exact only up "
            "to its residual (carried in the error bar): no enclosure of an exact eq (16) configuration", n=24)],
    notes="big = 40 scales the first chi_d norm so that it exceeds the sum of the others (the antialigned case "
    "of appendix A.3).")


def _eq17(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    W0, _ = _plus_config({**p, "start": "simplex"})
    _, _, res = rp.eq17_iterate(W0, tol=1e-12, max_passes=100)
    # violation if not converged (residual > 1e-9) within the pass budget
    return MF(res), MF(1e-9), MF(0)


P.claim("eq17", source=P.at("sec 3.2, eq (17) and the sentence around it"),
        statement="the iterative update w_i <- -(sum_{j != i} w_j)/|sum_{j != i} w_j| w_i converges to eq (16) "
        "quickly (after a small number of passes through the d vectors) when initialised in the simplex geometry; "
        "read as: eq (16) residual <= 1e-9 after at most 100 passes",
        domain=Domain({"d": Int(2, 256, extra=(2, 3, 6, 64)), "seed": SEED, "big": Choice((1.0,))}),
        checks=[ineq("iteration", _eq17,
                     description="eq (16) residual of the eq (17) update from the simplex with chi_d norms "
                     "after at most 100 passes (numpy)",
                     not_certified="the claim is a float64 iteration's convergence (its eq (16) residual after a pass "
                     "budget): an algorithm's behaviour, not a value with an enclosure", n=16)],
        notes="'A small number of passes' is read as <= 100; the pass counts are in tests/test_simrf_proofs.py.")


def printed_eq49_vector(ctx: Any, W: np.ndarray, v: Any, i: int) -> np.ndarray:
    """Eq (49) without the multiplier, on a context: sum_{j != i} v^2/(4 Gamma(1 + d/2)) (w_i + w_j), component by
    component (float64: ``W`` a float array; on balls: ``W`` an object array of flint balls, the result an
    object array of :class:`~rfcheck.arb_backend.Ball`)."""
    m, d = W.shape
    coef = v * v / (4 * ctx.gamma(1 + ctx.num(d) / 2))
    return np.array([sum(coef * (W[i][c] + W[j][c]) for j in range(m) if j != i) for c in range(d)])


def _eq49(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    d, m, v = int(p["d"]), int(p["m"]), float(p["v"])
    W = np.random.default_rng(int(p["seed"])).standard_normal((m, d))
    worst = 0.0
    for i in range(m):
        a, b = printed_eq49_vector(FP, W, v, i), rp.rho_tilde_gradient(W, v, i)
        worst = max(worst, float(np.linalg.norm(a / np.linalg.norm(a) - b / np.linalg.norm(b))))
    return MF(worst), MF(1e-14)


def _eq49_ball(p: dict[str, Any], bits: int) -> Any:
    """:func:`_eq49`'s distance on balls at the same float64 vectors (exact as balls): the printed sum and the
    hand-derived gradient evaluated in Arb, ``|a/|a| - b/|b||`` enclosed as ``[0, sqrt(upper(|.|^2))]`` (the
    exact distance is 0 when the two are parallel, and a ball of a square cannot be rooted below 0)."""
    d, m = int(p["d"]), int(p["m"])
    W = np.random.default_rng(int(p["seed"])).standard_normal((m, d))
    Wb = np.array([[arb(float(x)) for x in row] for row in W], dtype=object)
    vb = arb(float(p["v"]))
    def unit(x: np.ndarray) -> np.ndarray:
        return x / sum(x * x).sqrt()

    worst = arb(0)
    for i in range(m):
        printed = np.array([x.v for x in printed_eq49_vector(ARB, Wb, vb, i)], dtype=object)
        diff = unit(printed) - unit(rp.rho_tilde_gradient(Wb, vb, i, lambda x: arb(x).gamma()))
        worst = max(worst, sum(diff * diff).upper())
    return arb(0, worst.sqrt().upper())


P.claim("eq49", source=P.at("appendix A.3, eq (49)"),
        statement="stationarity of the Lagrangian of eq (15): sum_{j != i} (v^2/(4 Gamma(1 + d/2)) (w_i + w_j)) - "
        "lambda_i w_i = 0; checked as: the printed sum is a positive multiple of the gradient of eq (15) in w_i",
        domain=Domain({"d": Int(1, 64, extra=(2, 3)), "m": Int(2, 64, extra=(2,)), "v": Real(0.1, 3.0), "seed": SEED}),
        checks=[deterministic_check("gradient", lambda p: MF(0), _eq49, atol_scale=lambda p, dps: 1,
                                    printed_ball=lambda p, bits: arb(0), reference_ball=at_bits(_eq49_ball),
                                    description="max_i distance between the unit vectors of the printed sum and "
                                    "of the hand-derived gradient (tied to finite differences in the tests); "
                                    "random vectors")],
        notes="The factor 4 m(m-1)/Gamma(d/2) between the two is absorbed by lambda_i.")


def _eq50(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """Tangential part of the eq (49) sum at configurations satisfying eq (50) (from the eq (17) update)."""
    W0, _ = _plus_config(p)
    W, _, res = rp.eq17_iterate(W0)
    v = float(p["v"])
    worst = 0.0
    for i in range(W.shape[0]):
        g = printed_eq49_vector(FP, W, v, i)
        u = W[i] / np.linalg.norm(W[i])
        worst = max(worst, float(np.linalg.norm(g - (g @ u) * u) / np.linalg.norm(g)))
    return MF(worst), MF(1e-13 + 10 * res)


P.claim("eq50", source=P.at("appendix A.3, eq (50)"),
        statement="eq (49) is solved by w_i proportional to -sum_{j != i} w_j (i = 1..d): at such a configuration "
        "sum_{j != i} (w_i + w_j) is parallel to w_i",
        domain=Domain({"d": Int(2, 64, extra=(2, 3)), "v": Real(0.1, 3.0), "seed": SEED,
                       "start": Choice(("simplex", "random")), "big": Choice((1.0, 40.0))}),
        checks=[
            det("direct", lambda p: MF(0), _eq50, atol_scale=lambda p, dps: 1,
                description="max_i |component of the eq (49) sum orthogonal to w_i| / |sum| at eq (50) configurations "
                "(eq (17) fixed points; their residual enters the error bar)",
                not_certified="the eq (50) configurations are float64 iterates of the eq (17) update, exact only up "
                "to their residual (carried in the error bar): no enclosure of an exact eq (50) configuration", n=24)])


# --------------------------------------------------------------- A.4: eq (53), the Gaussian integral


def printed_eq53_middle(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (53) middle, on a context (mpmath or Arb; ``d`` a Python int): Gamma(d/2) int_0^inf dw w^{d-1}
    e^{-w^2/4}/(2^{d-1} Gamma(d/2)) sum_k v^{2k} w^{2k}/(2^{2k} k! Gamma(k+d/2)).

    The k-series times ``Gamma(d/2)`` is ``0F1(; d/2; v^2 w^2/4)`` term by term (``ctx.hyp0f1``).  In mpmath the
    w-integral is a guarded tanh-sinh on ``[0, peak/2, peak, peak + 10, peak + 40, inf]``, the density in log
    space (large ``d``).  On balls the same integrand enters
    :func:`rfcheck.references.gaussian.half_line_gaussian_integral_ball` as its factors ``w^{d-1}``,
    ``e^{-w^2/4}`` (``s2 = 2``), the series, and the constant ``1/(2^{d-1} Gamma(d/2))``, with a proven tail from
    the growth bound ``0F1(; d/2; y) <= e^{2 sqrt(y)}`` (``= e^{v w}``): for ``d >= 2``, ``(d/2)_k >= k!`` so
    ``0F1 <= sum_k y^k/k!^2 = I_0(2 sqrt y) <= e^{2 sqrt y}``; for ``d = 1``, ``0F1(; 1/2; y) = cosh(2 sqrt y)``.
    SimRF appendix A.4, eq (53).
    """
    v, d = ctx.num(p["v"]), int(p["d"])
    dh = ctx.num(d) / 2
    def series(w: Any) -> Any:
        return ctx.hyp0f1(dh, v * v * w * w / 4)

    vf = float(p["v"])
    if ctx is not MP:
        val = gauss.half_line_gaussian_integral_ball(lambda w, _a: series(Ball(w)).v, power=d - 1, s2=2,
                                                     growth=(1, v.v),
                                                     log_scale=vf**2 + (d - 1) * math.log(2) + math.lgamma(d / 2),
                                                     prec=flint_ctx.prec, peak=math.sqrt(2 * (d - 1)) + 2 * vf)
        return Ball(val) / (ctx.num(2) ** (d - 1) * ctx.gamma(dh))
    def f(w: Any) -> Any:
        # the density in log space (large d)
        lp = (d - 1) * mpmath.log(w) - w * w / 4 - (d - 1) * mpmath.log(2) - mpmath.loggamma(dh) if w > 0 else None
        if lp is None:
            return MF(0) if d > 1 else 1 / mpmath.sqrt(mpmath.pi)
        return mpmath.exp(lp) * series(w)

    peak = mpmath.sqrt(2 * (d - 1)) + 2 * v
    return gauss.guarded_quad(f, lambda: [0, peak / 2, peak, peak + 10, peak + 40, mpmath.inf])


P.claim("eq53", source=P.at("appendix A.4, eq (53)"),
        statement="rho(x,y) = Gamma(d/2) int_0^inf dw w^{d-1} e^{-w^2/4}/(2^{d-1} Gamma(d/2)) sum_k v^{2k} w^{2k}/"
        "(2^{2k} k! Gamma(k+d/2)) = sum_k v^{2k}/k! = e^{v^2}",
        domain=vd_domain(d=(1, 256), fixed_points=[{"v": 2.0, "d": 16}, {"v": 4.0, "d": 128}]),
        checks=[iid_mgf_check("quadrature-middle", 6, **faces(printed_eq53_middle)),
                iid_mgf_check("quadrature-series", 6,
                              printed_ctx=lambda ctx, p: ctx.series(lambda k: p["v"] ** (2 * k) / ctx.gamma(k + 1),
                                                                    lambda k: p["v"] ** 2 / (k + 1)))],
        notes="The final equality e^{v^2} is claim simrf.lem4.1 (eq 19).")

P.claim("text-a4-integral", source=P.at("appendix A.4, sentence after eq (53)"),
        statement="int_0^inf dw w^{2z-1} e^{-w^2/2} = 2^{z-1} Gamma(z)",
        domain=Domain({"z": Real(0.5, 200.0, scale="log", extra=(1.0,))}),
        checks=[det("quadrature", None, two_prec(lambda p: gauss.gaussian_power_integral(p["z"])),
                    printed_ctx=lambda ctx, p: 2 ** (p["z"] - 1) * ctx.gamma(p["z"]),
                    reference_ball=at_bits(lambda p, bits: gauss.gaussian_power_integral_ball(p["z"], bits)), n=12)],
        notes="Eq (53) itself integrates against e^{-w^2/4}, for which the identity reads 2^{2z-1} Gamma(z); "
        "eq (53) is checked on its own (simrf.eq53).")


# --------------------------------------------------------------- A.5: eq (57)


def printed_eq57(part: int) -> Any:
    """Eq (57)'s first, middle (``part`` 1, 2: the phi-integral as printed) or right (3) expression, on a
    context."""
    def pr(ctx: Any, p: dict[str, Any]) -> Any:
        w, d = ctx.num(p["w"]), int(p["d"])
        e = ctx.exp(-w * w / 2)
        if part == 1:
            return (w ** (2 * d - 1) / (2 ** (d - 2) * ctx.gamma(ctx.num(d) / 2) ** 2)
                    * rp.integral_from_zero_ctx(ctx, ctx.pi / 2,
                                                lambda ph: (ctx.sin(ph) * ctx.cos(ph)) ** (d - 1)) * e)
        if part == 2:
            return (w ** (2 * d - 1) / (2 ** (2 * d - 2) * ctx.gamma(ctx.num(d) / 2) ** 2)
                    * rp.integral_from_zero_ctx(ctx, ctx.pi, lambda ph: ctx.sin(ph) ** (d - 1)) * e)
        return (ctx.sqrt(ctx.pi) * w ** (2 * d - 1)
                / (2 ** (2 * d - 2) * ctx.gamma(ctx.num(d) / 2) * ctx.gamma(ctx.num(d) / 2 + ctx.num(1) / 2)) * e)

    return pr


P.claim("eq57", source=P.at("appendix A.5, eq (57)"),
        statement="at theta = pi/2: p(w) = w^{2d-1}/(2^{d-2} Gamma(d/2)^2) int_0^{pi/2} (sin phi cos phi)^{d-1} "
        "e^{-w^2/2} = w^{2d-1}/(2^{2d-2} Gamma(d/2)^2) int_0^pi (sin phi)^{d-1} e^{-w^2/2} "
        "= sqrt(pi) w^{2d-1} e^{-w^2/2} / (2^{2d-2} Gamma(d/2) Gamma(d/2 + 1/2))",
        domain=Domain({"w": Real(0.05, 40.0), "d": Int(1, 128, extra=(2, 3))}),
        checks=[det(f"cdf-derivative-{name}", None, lambda p, dps: ref.cdf_derivative_chi2d(p["w"], int(p["d"]), dps),
                    atol_scale=lambda p, dps: 1,
                    description=f"{name} expression vs the derivative of the chi^2_2d CDF P(d, w^2/2)",
                    printed_ctx=printed_eq57(k), printed_ball=on_balls(printed_eq57(k)),
                    reference_ball=lambda p, bits: gauss.chi_pdf_ball(p["w"], 2 * int(p["d"]), bits), n=8)
                for k, name in ((1, "first"), (2, "middle"), (3, "right"))])


# --------------------------------------------------------------- A.6: eq (62)


def printed_eq62(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (62) as printed, on a context (mpmath or Arb; ``d`` a Python int): ``1/(2^{d-2} Gamma(d/2))
    int_0^{pi/2} (sin 2phi)^{d-1} sum_k v^{2k} Gamma(k+d) (1 + sin 2phi cos theta)^k / (2^k k! Gamma(k+d/2)) dphi``,
    the ``k``-sum taken inside the integral (positive terms) and summed by its exact term ratio
    ``x (k+d)/((k+1)(k+d/2))``, ``x = v^2 (1 + sin 2phi cos theta)/2`` (``ctx.ratio_series``; on balls its
    modulus does not increase, which encloses the tail).

    In mpmath the ``phi``-integral is a guarded tanh-sinh (:func:`rfcheck.references.gaussian.guarded_quad` on
    ``[0, pi/4, pi/2]``); on balls ``acb.integral`` over ``[0, pi/2]``
    (:func:`rfcheck.references.simrf_proofs.quarter_period_integral_ball`; finite interval, entire integrand).
    SimRF appendix A.6, eq (62).
    """
    v, d, c = ctx.num(p["v"]), int(p["d"]), ctx.num(p["cos"])
    dh = ctx.num(d) / 2
    g0 = ctx.gamma(d) / ctx.gamma(dh)
    def inner(ph: Any) -> Any:
        s = ctx.sin(2 * ph)
        x = v * v * (1 + s * c) / 2
        return s ** (d - 1) * ctx.ratio_series(g0, lambda k: x * (k + d) / ((k + 1) * (k + dh)))

    if ctx is MP:
        val = gauss.guarded_quad(inner, lambda: [0, mpmath.pi / 4, mpmath.pi / 2])
    else:
        val = Ball(rp.quarter_period_integral_ball(lambda ph, _analytic: inner(Ball(ph)).v, flint_ctx.prec))
    return val / (2 ** (d - 2) * ctx.gamma(dh))


P.claim("eq62", source=P.at("appendix A.6, eq (62)"),
        statement="rho_theta(x,y) = sum_k v^{2k} Gamma(k+d)/(2^k k! 2^{d-2} Gamma(d/2) Gamma(k+d/2)) "
        "int_0^{pi/2} dphi (sin 2phi)^{d-1} (1 + sin 2phi cos theta)^k",
        domain=vd_domain(v=(0.0, 3.0), d=(2, 32), extra={"cos": Real(-1.0, 1.0, extra=(0.0,))},
                         fixed_points=[{"v": 1.5, "d": 8, "cos": -1.0 / 7}, {"v": 2.5, "d": 32, "cos": 0.5},
                                       {"v": 1.0, "d": 3, "cos": -0.5}]),
        checks=[det("eq10-quadrature", reference=eq10_angle, max_points=12,
                    description="definition eq (10): 2-D Gauss-Legendre over the chi_d norms", **faces(printed_eq62),
                    reference_ball=at_bits(
                        lambda p, bits: rp.pair_conformity_moment_ball(p["v"], int(p["d"]), p["cos"], bits)), n=4)],
        notes="The k-sum is taken inside the phi integral (positive terms).")


# --------------------------------------------------------------- footnote 4


#: the reference of footnote 4: E w^4 / E w^2 for w ~ chi_2d (the orthogonal pair, eq 58), moments by quadrature
_CHI2D_RATIO = two_prec(lambda p: gauss.chi_moment(4, 2 * int(p["d"])) / gauss.chi_moment(2, 2 * int(p["d"])))

P.claim("text-footnote4", source=P.at("sec 3.2, footnote 4"),
        statement="with orthogonal coupling E(w_ij^4)/E(w_ij^2) = E(w_i^4)/E(w_i^2) + E(w_i^2) = "
        "2 Gamma(d/2+2)/Gamma(d/2+1) + 2 Gamma(d/2+1)/Gamma(d/2) ~ d",
        domain=Domain({"d": Int(1, 1024, extra=(2, 3, 64))}),
        checks=[det(name, None, _CHI2D_RATIO, description=description, printed_ctx=printed,
                    reference_ball=lambda p, bits: rp.chi2d_moment_ratio_ball(int(p["d"]), bits), n=5)
                for name, description, printed in (
                    ("chi2d-moments-right", "E w^4/E w^2 for w ~ chi_2d by quadrature",
                     lambda ctx, p: (2 * ctx.gamma(ctx.num(p["d"]) / 2 + 2) / ctx.gamma(ctx.num(p["d"]) / 2 + 1)
                                     + 2 * ctx.gamma(ctx.num(p["d"]) / 2 + 1) / ctx.gamma(ctx.num(p["d"]) / 2))),
                    ("chi2d-moments-middle", "E(w_i^4)/E(w_i^2) + E(w_i^2) with chi_d moments d(d+2), d",
                     lambda ctx, p: (lambda d: d * (d + 2) / d + d)(ctx.num(p["d"]))))])


# --------------------------------------------------------------- A.5: eq (55)


def printed_eq55(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (55) on a context (mpmath or Arb; ``d`` a Python int): ``int_0^{pi/2} dphi int_0^{w'/sqrt(1+sin 2phi
    cos theta)} dr r p_chi(r cos phi) p_chi(r sin phi)``.

    The r-integral of the printed integrand is done exactly: ``r p_chi(r cos phi) p_chi(r sin phi) =
    (cos phi sin phi)^{d-1} r^{2d-1} e^{-r^2/2} / (2^{d-2} Gamma(d/2)^2)`` and ``int_0^R r^{2d-1} e^{-r^2/2} dr
    = 2^{d-1} gamma(d, R^2/2)`` (``ctx.gammainc_lower``; on balls the finite sum of DLMF 8.4.7, entire and tight
    on the integrator's wide balls).  The phi-integral: in mpmath by guarded tanh-sinh on 16 panels; on balls
    (``d`` more bits: the cancellation of ``gamma(d, z)`` at small ``z``, the check's tolerance being absolute)
    by ``acb.integral`` over ``[0, pi/2]``, the poles of ``R^2`` off the real segment for ``|cos theta| < 1``.
    SimRF appendix A.5, eq (55).
    """
    w, d, c = ctx.num(p["w"]), int(p["d"]), ctx.num(p["cos"])
    def inner(ph: Any) -> Any:
        big_r2 = w * w / (1 + ctx.sin(2 * ph) * c)
        lower = ctx.gammainc_lower(d, big_r2 / 2)
        return (ctx.cos(ph) * ctx.sin(ph)) ** (d - 1) * 2 * lower / ctx.gamma(ctx.num(d) / 2) ** 2

    if ctx is MP:
        return gauss.guarded_quad(inner, lambda: mpmath.linspace(0, mpmath.pi / 2, 17))
    bits = flint_ctx.prec
    with workprec(bits + d):
        return Ball(rp.quarter_period_integral_ball(lambda ph, _analytic: inner(Ball(ph)).v, bits + d))


P.claim("eq55", source=P.at("appendix A.5, eq (54)-(55)"),
        statement="p(w < w') = int_0^{pi/2} dphi int_0^{w'/sqrt(1+sin(2phi) cos theta)} dr r p_chi(r cos phi) "
        "p_chi(r sin phi) (polar form of the chi_d x chi_d mass inside the ellipse w = w')",
        domain=Domain({"w": Real(0.1, 20.0, extra=(1.0,)), "d": Int(1, 64, extra=(2, 3)), "cos": Real(-0.95, 0.95)},
                      fixed_points=[{"w": 3.0, "d": 6, "cos": -0.2}, {"w": 9.0, "d": 32, "cos": 0.5}]),
        checks=[
            det("root-quadrature",
                reference=two_prec(lambda p: ref.cdf_angle_root_quadrature(p["w"], int(p["d"]), p["cos"])),
                atol_scale=lambda p, dps: 1,
                description="P(|w_i + w_j| <= w') from the chi_d CDF between the roots in r2, 1-D quadrature in r1",
                **faces(printed_eq55),
                reference_ball=at_bits(lambda p, bits: rp.cdf_angle_ball(p["w"], int(p["d"]), p["cos"], bits)), n=5)],
        notes="Eq (54) (the same probability as an area integral) is the definition this reference evaluates.")


# --------------------------------------------------------------- sec 3.2: eq (14)


def _eq14_sides(ctx: Any, p: dict[str, Any], digits: int) -> tuple[Any, Any]:
    """(|R(v/2)| / |R(v)|, 1/8) on a context, R(v) = (exact per-pair series) - (printed two terms): O(v^4) gives
    1/16, an O(v^2) remainder 1/4.  Exact: the pair conformity (closed form at ``digits`` digits, on its mpmath
    or Arb face) over Gamma(d/2)."""
    d, coupling = int(p["d"]), p["coupling"]
    def rem(x: Any) -> Any:
        exact = cf.pair_conformity(x.v if ctx.name == "arb" else x, d, coupling, backend=ctx.name, dps=digits)
        exact = (Ball(exact) if ctx.name == "arb" else exact) / ctx.gamma(ctx.num(d) / 2)
        # printed eq (14) per pair, the 1/Gamma(d/2) multiplying the whole sum over pairs
        printed = (1 + ctx.gamma(ctx.num(d) / 2) * x * x * rp.mean_pair_norm_sq(
                       d, coupling, ctx) / (4 * ctx.gamma(ctx.num(d) / 2 + 1))) / ctx.gamma(ctx.num(d) / 2)
        return abs(exact - printed)

    v = ctx.num(p["v"])
    r1, r2 = rem(v), rem(v / 2)
    return r2 / r1, ctx.num(1) / 8


def _eq14_growth(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    """:func:`_eq14_sides` in mpmath at ``dps + 20`` digits, the error bar ``10^(10 - dps)``."""
    with mpmath.workdps(dps + 20):
        return *_eq14_sides(MP, p, dps + 20), MF(10) ** (10 - dps)


def _eq14_growth_ball(p: dict[str, Any], bits: int) -> tuple[Any, Any]:
    """:func:`_eq14_sides` on balls, 200 guard bits for the ``O(v^4)`` cancellation."""
    with workprec(bits + 200):
        return tuple(x.v for x in _eq14_sides(ARB, p, (bits + 200) * 3 // 10))


P.claim("eq14", source=P.at("sec 3.2, eq (14) (with eq (13))"),
        statement="the sum in eq (10) is approximated by 1/Gamma(d/2) sum_{i,j != i} 1 + Gamma(d/2) v^2 E(w_ij^2)/"
        "(4 Gamma(d/2+1)) (1 + O(v^2) + ...); read with 1/Gamma(d/2) multiplying the whole sum over pairs "
        "(as eq (13) factors it), i.e. per pair E sum_k (...) = (1 + Gamma(d/2) v^2 E w_ij^2/(4 Gamma(d/2+1)))"
        "/Gamma(d/2) + O(v^4)", domain=Domain({"d": Int(2, 256, extra=(2, 3, 64)), "v": Real(1e-3, 0.1, scale="log"),
                                               "coupling": Choice(("iid", "orf", "simrf"))}),
        checks=[ineq("remainder-growth", _eq14_growth, sides_ball=at_bits(_eq14_growth_ball),
                     description="remainder after the printed two terms shrinks by <= 1/8 when v halves (O(v^4): "
                     "1/16; a wrong v^2 coefficient: 1/4); exact value from the closed-form pair conformity", n=20)],
        notes="Read literally with 1/Gamma(d/2) on the first term only, the v^2 coefficient would carry an extra "
        "Gamma(d/2)/(m(m-1)); the layout of eq (13) (tau = Gamma(d/2) v^2 E(w_ij^2)/(4 Gamma(d/2+1)) inside "
        "the bracket after 1/Gamma(d/2)) fixes the reading used here.")


# --------------------------------------------------------------- A.6: eq (61)


def printed_eq61(v: float, d: int, c: float, n: int) -> float:
    """Eq (61) on an n x n Gauss-Legendre grid in (w, phi) (float64): sum_k v^{2k}/(2^{2k} k! 2^{d-2}
    Gamma(d/2) Gamma(k+d/2)) int_0^inf dw int_0^{pi/2} dphi w^{2k+2d-1} (sin phi cos phi)^{d-1}
    e^{-w^2/(2(1+sin 2phi cos theta))} / (1+sin 2phi cos theta)^d, the k-sum taken inside the integral
    (positive terms): sum_k v^{2k} w^{2k}/(2^{2k} k! Gamma(k+d/2)) = 0F1(; d/2; v^2 w^2/4)/Gamma(d/2).

    Not written against the number-system context: this is a float64 quadrature of the printed integrand, its
    error bar the difference of two grid sizes; the printed side is enclosed instead by
    :func:`rfcheck.references.simrf.angle_conformity_hyp1f1_integral_ball`, the same double integral with its
    w-integral done exactly (Gaussian moments) and the phi-integral by Arb's rigorous integration."""
    x, wq = np.polynomial.legendre.leggauss(n)
    wmax = math.sqrt(4.0 * d) + 4.0 * v + 25.0
    w = wmax * (x + 1) / 2
    ww = wq * wmax / 2
    ph = math.pi / 4 * (x + 1)
    wph = wq * math.pi / 4
    s = 1 + np.sin(2 * ph) * c
    lw = (2 * d - 1) * np.log(np.maximum(w, 1e-300))[:, None] + (d - 1) * np.log(np.sin(ph) * np.cos(ph))[None, :]
    lw = lw - (w * w)[:, None] / (2 * s[None, :]) - d * np.log(s)[None, :]
    lw = lw - (d - 2) * math.log(2) - 2 * special.gammaln(d / 2)
    series = special.hyp0f1(d / 2, v * v * w * w / 4)
    return float(ww @ (np.exp(lw) * series[:, None]) @ wph)


def _eq61_ref(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    with mpmath.workdps(dps + 10):
        val = cf.conformity_angle(MF(p["v"]), int(p["d"]), MF(p["cos"]), backend="mpmath", dps=dps + 10)
        return val, abs(val) * MF(10) ** (-dps - 3)


P.claim("eq61", source=P.at("appendix A.6, eq (61)"),
        statement="rho_theta(x,y) = sum_k v^{2k}/(2^{2k} k! 2^{d-2} Gamma(d/2) Gamma(k+d/2)) int_0^inf dw int_0^{pi/2} "
        "dphi w^{2k+2d-1} (sin phi cos phi)^{d-1} e^{-w^2/(2(1+sin 2phi cos theta))}/(1+sin 2phi cos theta)^d",
        domain=vd_domain(v=(0.0, 3.0), d=(2, 32), extra={"cos": Real(-0.95, 0.95, extra=(0.0,))},
                         fixed_points=[{"v": 1.5, "d": 8, "cos": -1.0 / 7}, {"v": 2.5, "d": 32, "cos": 0.5}]),
        checks=[Check(
                    "hypergeometric", 1, lambda p, budget, seed: _eq61_eval(p, budget), search=False, max_points=12,
                    description="the eq (21) closed form (Beta average of 1F1, mpmath) vs the printed double integral "
                    "on 300^2 Gauss-Legendre nodes (float64; error bar: change from 200^2 nodes)")],
        notes="Printed side in float64 with its own error bar: the check is decided at ~1e-12 relative, not at "
        "the budget's digits.")


def _eq61_eval(p: dict[str, Any], budget: Budget) -> PointEval:
    v, d, c = float(p["v"]), int(p["d"]), float(p["cos"])
    a, b = printed_eq61(v, d, c, 200), printed_eq61(v, d, c, 300)
    rv, rerr = _eq61_ref(p, budget.dps)
    # the printed side's quadrature error enters the error bar (the reference is exact to dps digits)
    ev = compare_deterministic(p, MF(b), rv, rerr + MF(abs(a - b) + 1e-13 * abs(b)), rtol=budget.rtol)
    if not ev.decided:
        return ev
    # certified on balls at the working precision's tolerance (tighter than the float64 decision): the exact printed
    # double integral against rho_theta from its definition eq (10) by exact chi_d moments, as eq (62) (not the
    # eq (21) closed form, itself a printed claim)
    ref_ball = at_bits(lambda p, bits: rp.pair_conformity_moment_ball(p["v"], int(p["d"]), p["cos"], bits))
    printed_ball = at_bits(
        lambda p, bits: ref.angle_conformity_hyp1f1_integral_ball(p["v"], int(p["d"]), p["cos"], bits))
    return certify_with_balls(ev, p, budget.dps, printed_ball, ref_ball, rtol=budget.rtol)


# --------------------------------------------------------------- A.1: eq (28) (PRF inner product)


def printed_eq28(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (28), right-hand side: e^{-x^2-y^2}/m sum_i e^{w_i^T (x+y)}, on a context."""
    W, x, y = _rff_vectors(p, ctx)
    s = [a + b for a, b in zip(x, y, strict=True)]
    dot = lambda a, b: rp.ctx_dot(ctx, a, b)  # noqa: E731
    return ctx.exp(-dot(x, x) - dot(y, y)) / len(W) * ctx.fsum(*(ctx.exp(dot(w, s)) for w in W))


def _prf_gram_ctx(ctx: Any, p: dict[str, Any]) -> Any:
    """phi(x)^T phi(y) with phi of eq (7), ``sqrt(1/m) exp(-|z|^2) (exp(w_i^T z))_i``, on a context."""
    W, x, y = _rff_vectors(p, ctx)
    dot = lambda a, b: rp.ctx_dot(ctx, a, b)  # noqa: E731
    def phi(z: list[Any]) -> list[Any]:
        return [ctx.exp(-dot(z, z)) * ctx.exp(dot(w, z)) / ctx.sqrt(ctx.num(len(W))) for w in W]

    return dot(phi(x), phi(y))


P.claim("eq28", source=P.at("appendix A.1, eq (28)"),
        statement="K_hat = phi_PRF(x)^T phi_PRF(y) = e^{-x^2-y^2}/m sum_i e^{w_i^T (x+y)}, phi_PRF of eq (7)",
        domain=_GRAM_DOMAIN, checks=[_gram_check(printed_eq28, _prf_gram_ctx, True, " (mpmath)")])

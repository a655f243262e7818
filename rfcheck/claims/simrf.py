"""Claims of Simplex Random Features (``simrf``, seed 003), transcribed exactly as printed.

Each ``printed_*`` function transcribes the paper's formula once, against the number-system context (series
summed term by term, with guard digits where the printed series alternates).  References never use the printed
formula: the definition eq (10) by quadrature (2-D Gauss-Legendre over the ``chi_d`` norms of a pair, or 1-D in
mpmath), the hypergeometric closed forms of :mod:`rfcheck.closed_forms.simrf`, Monte Carlo with the actual
couplings (Thm 3.2, eq (74)) and numerical optimisation over direction configurations (Thm 3.4, Lemma A.1); they
and the Arb enclosures are public, unit-tested functions of :mod:`rfcheck.references.simrf`.

Where both sides have an Arb enclosure (``printed_ctx`` or ``printed_ball``; ``reference_ball`` or
``sides_ball``) a decided point is certified with balls.  A reference ball is independent of the printed side:
the orthogonality gaps of eq (25), (26), (69) take theirs from eq (10) / the Bessel expectation as ``chi_{2d}``
expectations, never from the ``1F1`` closed forms whose Taylor series the printed series are; the check of eq
(23) against that ``1F1`` is decided but not certified.  Checks that cannot be certified (Monte Carlo, an
optimiser's output) say why.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import flint
import mpmath
import numpy as np
from flint import acb, arb, fmpq

from rfcheck import features
from rfcheck.arb_backend import ARB, Ball, to_ball, workprec
from rfcheck.backends import MP, num
from rfcheck.claims._simrf_shared import MF, det, eq10_angle, faces, iid_mgf_check, ineq, on_balls, two_prec, vd_domain
from rfcheck.closed_forms import simrf as cf
from rfcheck.ledger import (
    Budget,
    Check,
    Choice,
    Domain,
    Int,
    PointEval,
    Real,
    deterministic_check,
    inequality_check,
    mc_check,
    not_certifiable,
    on_mp,
    pair_vectors,
    paper,
)
from rfcheck.references import simrf as ref
from rfcheck.references.gaussian import integral_ball
from rfcheck.stats import compare_inequality, compare_mc, z_critical

#: no public names: this module registers its paper's claims on import; the ``printed_*``
#: transcriptions and checks are reached through the registry (``rfcheck list``, ``rfcheck verify``)
#: and documented by the ledger pages, one entry per claim
__all__: list[str] = []

P = paper("simrf")
#: the seed of a point's random draw (directions, norms)
SEED = Int(0, 10**6, scale="linear")


# ------------------------------------------------------------------ printed formulas


def printed_eq23_ctx(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (23) on a context: Gamma(d/2)/Gamma(d) sum_k v^{2k}/(2^k k!) Gamma(k+d)/Gamma(k+d/2).

    On balls the tail is enclosed with the term ratio ``v^2 (k+d)/(2(k+1)(k+d/2))``, non-increasing in ``k``.
    """
    v, d = p["v"], p["d"]
    dh = ctx.num(d) / 2
    return (ctx.gamma(dh) / ctx.gamma(d)
            * ctx.series(lambda k: v ** (2 * k) / (2**k * ctx.gamma(k + 1)) * ctx.gamma(k + d) / ctx.gamma(k + dh),
                         lambda k: v * v * (k + d) / (2 * (k + 1) * (k + dh))))


def printed_eq24(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (24) on a context (mpmath or Arb; ``d`` a Python int >= 2), the double series as printed:
    sqrt(pi)/(Gamma(d/2) 2^{d-1}) sum_k Gamma(k+d)/Gamma(k+d/2) v^{2k}/2^k sum_{q<=k} c^q g_q/((k-q)! q!),
    ``c = -1/(d-1)``, ``g_q = Gamma((d+q)/2)/Gamma((d+q+1)/2)``.

    The alternating inner sum runs with ``dps + 20 + 3 v^2`` guard digits (``2 bits + 70 + 10 v^2`` bits on
    balls).  On balls the tail is enclosed by a majorant (``ctx.dominated_series``): as ``g_q <= g_0``
    (``Gamma(x)/Gamma(x+1/2)`` decreases), the inner sum is at most ``g_0 (1+|c|)^k / k!`` in modulus, so
    ``|t_k| <= M_k = g_0 Gamma(k+d)/Gamma(k+d/2) y^k/k!``, ``y = v^2 (1+|c|)/2``, whose ratio
    ``y (k+d)/((k+1)(k+d/2))`` does not increase.  SimRF Theorem 4.3, eq (24) (= eq (67)).
    """
    v, d = ctx.num(p["v"]), int(p["d"])
    x = (float(p["v"].v.mid()) if isinstance(p["v"], Ball) else float(p["v"])) ** 2  # a ball by its midpoint
    if ctx is MP:
        guard = mpmath.workdps(2 * mpmath.mp.dps + 20 + int(3 * x))
    else:
        guard = workprec(2 * flint.ctx.prec + 70 + int(10 * x))
    with guard:
        dh = ctx.num(d) / 2
        c = -ctx.num(1) / (d - 1)
        y = v * v * (1 + ctx.abs(c)) / 2
        g: list[Any] = []
        def g_q(q: int) -> Any:
            while len(g) <= q:
                g.append(ctx.gamma(ctx.num(d + len(g)) / 2) / ctx.gamma(ctx.num(d + len(g) + 1) / 2))
            return g[q]

        def term(k: int) -> Any:
            inner = ctx.fsum(*(c**q * g_q(q) / (ctx.gamma(k - q + 1) * ctx.gamma(q + 1)) for q in range(k + 1)))
            return ctx.gamma(k + d) / ctx.gamma(k + dh) * v ** (2 * k) / 2**k * inner

        tot = ctx.dominated_series(term,
                                   lambda k: g_q(0) * ctx.gamma(k + d) / ctx.gamma(k + dh) * y**k / ctx.gamma(k + 1),
                                   lambda k: y * (k + d) / ((k + 1) * (k + dh)))
        out = ctx.sqrt(ctx.pi) / (ctx.gamma(dh) * 2 ** (d - 1)) * tot
    return +out if ctx is MP else Ball(+out.v)  # rounded to the working precision


def printed_eq25_bracket(ctx: Any, v: Any, d: Any) -> Any:
    """Eq (25) bracket as printed, on a context: e^{v^2} - Gamma(d/2)/Gamma(d) sum_k v^{2k}/k! Gamma(k+d)/Gamma(k+d/2).

    On balls the tail is enclosed with the term ratio ``v^2 (k+d)/((k+1)(k+d/2))``, non-increasing in ``k``.
    """
    dh = ctx.num(d) / 2
    s = ctx.series(lambda k: v ** (2 * k) / ctx.gamma(k + 1) * ctx.gamma(k + d) / ctx.gamma(k + dh),
                   lambda k: v * v * (k + d) / ((k + 1) * (k + dh)))
    return ctx.exp(v * v) - ctx.gamma(dh) / ctx.gamma(d) * s


def printed_eq11(ctx: Any, rho: Any, v: Any, m: int, sq_norms: Any) -> Any:
    """Eq (11) on a context: e^{-2x^2-2y^2}/m ((e^{2v^2} - e^{v^2}) + (m-1)(rho - e^{v^2}))."""
    v = ctx.num(v)
    e = ctx.exp(v * v)
    return ctx.exp(-2 * ctx.num(sq_norms)) / m * ((ctx.exp(2 * v * v) - e) + (m - 1) * (rho - e))


# ------------------------------------------------------------------ eq (33) / (31)


def printed_eq33_bracket(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (33) bracket at a fixed w_ij = w, on a context: Gamma(d/2) sum_k v^{2k} w^{2k}/(2^{2k} k! Gamma(k+d/2)).

    On balls the tail is enclosed with the term ratio ``(v w)^2 / (4 (k+1)(k+d/2))``, non-increasing in ``k``.
    """
    v, w, d = p["v"], p["w"], p["d"]
    dh = ctx.num(d) / 2
    return ctx.gamma(dh) * ctx.series(lambda k: (v * w) ** (2 * k) / (4**k * ctx.gamma(k + 1) * ctx.gamma(k + dh)),
                                      lambda k: (v * w) ** 2 / (4 * (k + 1) * (k + dh)))


P.claim("eq33", source=P.at("appendix A.1, eq (31)-(33)"),
        statement="E[b_i b_j] = E[exp(w_ij^T v)] = Gamma(d/2) E_{w_ij}(sum_k v^{2k} w_ij^{2k} / (2^{2k} k! "
        "Gamma(k + d/2))) for isotropic w_ij (checked conditionally on |w_ij| = w)",
        domain=vd_domain(extra={"w": Real(0.0, 30.0)}, d=(1, 256)),
        checks=[deterministic_check(
                    "direction-quadrature", None,
                    two_prec(lambda p: ref.direction_average(MF(p["w"]), MF(p["v"]), int(p["d"]))[0]),
                    description="E exp(w q.v), q uniform on S^{d-1}, by 1-D quadrature in the polar angle",
                    printed_ctx=printed_eq33_bracket,
                    reference_ball=lambda p, bits: ref.direction_average_ball(p["w"], p["v"], int(p["d"]), bits))])


# --------------------------------------------------------------------- Lemma 4.1


def printed_eq18(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (18): w^{d-1} e^{-w^2/4} / (2^{d-1} Gamma(d/2)), on a context."""
    w, d = p["w"], p["d"]
    return w ** (d - 1) * ctx.exp(-w * w / 4) / (2 ** (d - 1) * ctx.gamma(num(ctx, d) / 2))


P.claim("lem4.1.pdf", source=P.at("Lemma 4.1, eq (18) (= eq (52))"),
        statement="i.i.d. w_i, w_j ~ N(0, I_d): p(w_ij) = w_ij^{d-1} e^{-w_ij^2/4} / (2^{d-1} Gamma(d/2))",
        domain=Domain({"w": Real(0.0, 40.0), "d": Int(1, 256, extra=(2, 3))}),
        checks=[deterministic_check(
                    "cdf-derivative", None, lambda p, dps: ref.cdf_derivative_sqrt2_chi(p["w"], int(p["d"]), dps),
                    atol_scale=lambda p, dps: 1, description="d/dw P(|N(0, 2I_d)| <= w) = d/dw P(d/2, w^2/4), mpmath",
                    printed_ctx=printed_eq18,
                    reference_ball=lambda p, bits: cf.pdf_wij_iid(p["w"], int(p["d"]), backend="arb", prec=bits))])

P.claim("lem4.1", source=P.at("Lemma 4.1, eq (19) (= eq (53))"),
        statement="IIDRFs: rho_IIDRF(x, y) = e^{v^2}, v = |x + y|", domain=vd_domain(d=(1, 1024)),
        checks=[iid_mgf_check("quadrature", 12, printed_ctx=lambda ctx, p: ctx.exp(p["v"] ** 2))])


# --------------------------------------------------------------------- Lemma 4.2


def printed_eq20(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (20) as printed, on a context (``d`` a Python int): the integrand and the prefactor written once.

    In mpmath, accurate to the working precision: the printed ``phi``-integral is evaluated with 10 guard
    digits by adaptive tanh-sinh on panels (:func:`rfcheck.references.simrf.panel_quad`: 16 to start, the
    integrand peaking near ``pi/4`` with width ~ ``1/sqrt(d)``, sharper as ``w`` and ``|cos theta|`` grow), until
    its error estimate is below ``10^-(dps+3)`` relative; failing that the guard digits and panel budget are
    raised twice, and an estimate still too large raises ``ArithmeticError`` rather than return a value short of
    the working precision.  On balls (20 guard bits), by Arb's rigorous Gauss-Legendre
    (:func:`rfcheck.references.gaussian.integral_ball`): the integrand is entire in ``phi`` but for the poles of
    ``1/s^d`` and the essential singularity of ``exp(-w^2/(2s))`` at ``s = 1 + sin(2phi) cos theta = 0``, away
    from ``[0, pi/2]`` for ``|cos theta| < 1`` (a box touching them gives a non-finite ball, which Arb
    subdivides).  SimRF Lemma 4.2, eq (20) (= eq (56), (60)).
    """
    w, d, c = ctx.num(p["w"]), int(p["d"]), ctx.num(p["cos"])
    def f(ph: Any) -> Any:
        s2 = 1 + ctx.sin(2 * ph) * c
        return (ctx.sin(ph) * ctx.cos(ph)) ** (d - 1) * ctx.exp(-w * w / (2 * s2)) / s2**d

    if ctx is MP:
        val = ref.quad_to_precision(f, lambda: mpmath.linspace(0, mpmath.pi / 2, 17), f"eq (20) at {p}")
        guard = mpmath.workdps(mpmath.mp.dps + 10)
    else:
        bits = flint.ctx.prec
        guard = workprec(bits + 20)
    with guard:
        if ctx is not MP:
            val = Ball(integral_ball(lambda ph, analytic: f(Ball(ph)).v, 0, arb.pi() / 2, bits).real)
        out = w ** (2 * d - 1) / (2 ** (d - 2) * ctx.gamma(ctx.num(d) / 2) ** 2) * val
    return +out


P.claim(
    "lem4.2.pdf", source=P.at("Lemma 4.2, eq (20) (= eq (56), (60))"),
    statement="w_i, w_j marginally Gaussian at fixed angle theta: p_theta(w_ij) = w^{2d-1}/(2^{d-2} Gamma(d/2)^2) "
    "int_0^{pi/2} (sin phi cos phi)^{d-1} exp(-w^2/(2(1+sin 2phi cos theta)))/(1+sin 2phi cos theta)^d dphi",
    domain=Domain({"w": Real(0.05, 30.0), "d": Int(2, 64, extra=(3, 6)), "cos": Real(-0.95, 0.95, extra=(0.0,))}),
    checks=[
        det("change-of-variables",
            reference=lambda p, dps: ref.pdf_angle_change_of_variables_with_error(p["w"], int(p["d"]), p["cos"], dps),
            atol_scale=lambda p, dps: 1,
            description="density of |w_i + w_j| from the chi_d x chi_d law by the root r2(r1, w)",
            **faces(printed_eq20),
            reference_ball=lambda p, bits: ref.pdf_angle_change_of_variables_ball(p["w"], int(p["d"]), p["cos"], bits),
            n=6)])


def printed_eq21(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (21) as printed, on a context (mpmath or Arb; ``d`` a Python int): ``1/(2^{d-1} Gamma(d/2))
    int_0^pi sin^{d-1}(phi) S(phi) dphi``, ``S`` the printed ``k``-series ``sum_k x^k/k! Gamma(k+d)/Gamma(k+d/2)``,
    ``x = v^2 (1 + sin(phi) cos theta)/2``, summed by its exact term ratio ``x (k+d)/((k+1)(k+d/2))``
    (``ctx.ratio_series``; on balls its modulus does not increase, which encloses the tail).

    In mpmath the ``phi``-integral is ``mpmath.quad`` on ``[0, pi/2, pi]``; on balls (20 guard bits) Arb's rigorous
    integration (:func:`rfcheck.references.gaussian.integral_ball`) of the same integrand, entire in ``phi``.

    Examples
    --------
    At ``cos theta = 0`` (orthogonal directions) it is ``rho_ORF = 1F1(d; d/2; v^2/2)``, eq (23):

    >>> import mpmath
    >>> b = on_balls(printed_eq21)({"v": 1.0, "d": 4, "cos": 0.0}, 64)
    >>> abs(float(b.mid()) - float(mpmath.hyp1f1(4, 2, 0.5))) < 1e-14, float(b.rad()) < 1e-14
    (True, True)

    References
    ----------
    SimRF Lemma 4.2, eq (21) (= eq (63)).
    """
    v, d, c = ctx.num(p["v"]), int(p["d"]), ctx.num(p["cos"])
    dh = ctx.num(d) / 2
    g0 = ctx.gamma(d) / ctx.gamma(dh)
    def inner(ph: Any) -> Any:
        x = v * v * (1 + ctx.sin(ph) * c) / 2
        return ctx.sin(ph) ** (d - 1) * ctx.ratio_series(g0, lambda k: x * (k + d) / ((k + 1) * (k + dh)))

    if ctx is MP:
        val = mpmath.quad(inner, [0, mpmath.pi / 2, mpmath.pi])
        return val / (2 ** (d - 1) * ctx.gamma(dh))
    bits = flint.ctx.prec
    with workprec(bits + 20):
        val = Ball(integral_ball(lambda ph, analytic: inner(Ball(ph)).v, 0, arb.pi(), bits).real)
        return val / (2 ** (d - 1) * ctx.gamma(dh))


P.claim(
    "lem4.2", source=P.at("Lemma 4.2, eq (21) (= eq (63))"),
    statement="rho_theta(x,y) = 1/(2^{d-1} Gamma(d/2)) int_0^pi dphi (sin phi)^{d-1} sum_k v^{2k} "
    "(1 + sin phi cos theta)^k Gamma(k+d) / (2^k k! Gamma(k + d/2))",
    domain=vd_domain(v=(0.0, 3.0), d=(2, 32), extra={"cos": Real(-1.0, 1.0, extra=(0.0,))}),
    checks=[
        det("eq10-quadrature", reference=eq10_angle,
            description="definition eq (10): 2-D Gauss-Legendre over the chi_d norms", **faces(printed_eq21),
            reference_ball=lambda p, bits: ref.angle_conformity_moment_series_ball(p["v"], int(p["d"]), p["cos"], bits),
            n=6)])


# --------------------------------------------------------------------- Thm 4.3


#: the printed RF-conformity of Thm 4.3 per coupling, on a context: eq (23) (ORF), eq (24) (SimRF)
_PRINTED_RHO = {"orf": printed_eq23_ctx, "simrf": printed_eq24}


def _simrf_conformity_ball(p: dict[str, Any], bits: int) -> Any:
    """rho_SimRF on balls: the Arb face of :func:`rfcheck.closed_forms.simrf.log_conformity_simrf` (the
    average over the angle law of ``1F1(d; d/2; v^2 (1 + c t)/2)``, ``c = -1/(d-1)``: eq (10) with the
    norms integrated out, not the double series of eq (24)); its exact value is the definition's, so it
    encloses the eq (10) quadrature's target too."""
    return cf.log_conformity_simrf(p["v"], int(p["d"]), backend="arb", prec=bits).exp()


#: the printed side of Thm 4.3 per coupling, each written once on a context (eq (24) takes Python-int ``d``)
_THM43_PRINTED: dict[str, dict[str, Any]] = {
    "orf": {"printed": None, "printed_ctx": printed_eq23_ctx},
    "simrf": {"printed": on_mp(printed_eq24), "printed_ball": on_balls(printed_eq24)}}

#: why a Monte Carlo check has no certified points
_MC_WHY = ("Monte Carlo reference: a sample mean with a z-test at the budget's family-wise level has no rigorous "
           "enclosure (its error bar is statistical)")


def _mc_pair(coupling: str) -> Any:
    """E[b_1 b_2] = E exp(v (w_1 + w_2) . u_hat) for two rows of one coupled block, by Monte Carlo
    with the projection sampler of the coupling; z-test at the budget's family-wise level."""
    def evaluate(p: dict[str, Any], budget: Budget, seed: int) -> PointEval:
        with mpmath.workdps(30):
            pv = float(on_mp(_PRINTED_RHO[coupling])(p))
        est = ref.pair_conformity_mc(coupling, float(p["v"]), int(p["d"]), budget.mc_trials, seed)
        return compare_mc(p, pv, est, z_crit=z_critical(budget.alpha, budget.mc_points))

    return not_certifiable(Check("monte-carlo", 3, evaluate, search=False,
                                 description="E[b_1 b_2] for a coupled pair from the projection sampler (Numba)",
                                 domain=vd_domain(v=(0.05, 0.8), d=(2, 256))), _MC_WHY)


for _part, _eq, _stmt in (
    ("orf", "(23) (= eq (65))", "rho_ORF(x,y) = Gamma(d/2)/Gamma(d) sum_k v^{2k}/(2^k k!) Gamma(k+d)/Gamma(k+d/2)"),
    ("simrf", "(24) (= eq (67))", "rho_SimRF(x,y) = sqrt(pi)/(Gamma(d/2) 2^{d-1}) sum_k Gamma(k+d)/Gamma(k+d/2) "
                                  "v^{2k}/2^k sum_{p=0}^k (-1/(d-1))^p Gamma((d+p)/2)/Gamma((d+p+1)/2) 1/((k-p)! p!)")):
    P.claim(f"thm4.3.{_part}", source=P.at(f"Theorem 4.3, eq {_eq}"), statement=_stmt, domain=vd_domain(d=(2, 256)),
            checks=[
                det("eq10-quadrature",
                    reference=lambda p, dps, _c=_part: ref.eq10_pair_quadrature(p["v"], int(p["d"]), _c),
                    description="definition eq (10): 2-D Gauss-Legendre over the chi_d norms, scipy 0F1",
                    reference_ball=(lambda p, bits: ref.orf_conformity_chi_ball(p["v"], int(p["d"]), bits))
                    if _part == "orf" else _simrf_conformity_ball, **_THM43_PRINTED[_part], n=6),
                det("hypergeometric",
                    reference=lambda p, dps, _c=_part: ref.pair_conformity_closed_form(p["v"], int(p["d"]), _c, dps),
                    description="1F1(d; d/2; v^2/2) (ORF) / Beta-average of 1F1 (SimRF), mpmath",
                    **_THM43_PRINTED[_part], reference_ball=None if _part == "orf" else _simrf_conformity_ball,
                    not_certified="the only ball of this reference is the library's 1F1(d; d/2; v^2/2), the sum "
                    "of the printed series itself (circular); check eq10-quadrature certifies against eq (10)"
                    if _part == "orf" else None, n=10), _mc_pair(_part)])


# ------------------------------------------------------------------- Thm 3.2 (MSE)


def printed_thm32(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (11) on a context with rho of eq (10) for the whole ensemble: coupled pairs in blocks of d (rho of
    eq (23) / (24)), others independent (``e^{v^2}``); ``v = |x + y|`` from the norms and the angle."""
    d, m, c = int(p["d"]), int(p["m"]), p["coupling"]
    nx, ny, th = ctx.num(p["nx"]), ctx.num(p["ny"]), ctx.num(p["theta"])
    v, sq = ctx.sqrt((nx - ny) ** 2 + 4 * nx * ny * ctx.cos(th / 2) ** 2), nx**2 + ny**2
    rc = ctx.exp(v * v) if c == "iid" else _PRINTED_RHO[c](ctx, {"v": v, "d": d})
    npairs = cf._n_coupled_pairs(m, d, c)
    rho = (npairs * rc + (m * (m - 1) - npairs) * ctx.exp(v * v)) / (m * (m - 1))
    return printed_eq11(ctx, rho, v, m, sq)


def _mc_mse(printed: Any, product: Any, kind: str) -> Check:
    """The MSE of the kernel estimator: the printed ``printed(ctx, p)`` against ``n`` simulated estimates of
    ``product(p)`` with the point's ``m`` features and coupling (projection engine) and their target."""
    def simulated(p: dict[str, Any], n: int, seed: int) -> tuple[np.ndarray, float, None]:
        from rfcheck.engine.montecarlo import simulate

        prod = product(p)
        est = simulate(prod, int(p["m"]), n, coupling=p["coupling"], path="projection", seed=seed)[0]
        return est, float(prod.target[0]), None

    description = f"MSE of the {kind} estimator simulated with the coupling (projection engine)"
    return not_certifiable(mc_check("monte-carlo", on_mp(printed), simulated, description=description), _MC_WHY)


P.claim("thm3.2", source=P.at("Theorem 3.2, eq (11) (= eq (30), (34))"),
        statement="For PRFs, MSE(K_hat) = e^{-2x^2-2y^2}/m ((e^{2v^2} - e^{v^2}) + (m-1)(rho(x,y) - e^{v^2})), "
        "rho the RF-conformity eq (10); instantiated with IIDRF/ORF/SimRF blocks of d rows (m > d: independent blocks)",
        domain=Domain(
            {"d": Int(2, 24, extra=(2, 3, 6)), "m": Int(2, 48, extra=(2,)), "nx": Real(0.0, 0.45),
             "ny": Real(0.0, 0.45), "theta": Real(0.0, math.pi, extra=(math.pi / 2,)),
             "coupling": Choice(("iid", "orf", "simrf"))},
            description="|x|, |y| <= 0.45 (finite, estimable fourth moment of the squared error at the budget)"),
        checks=[_mc_mse(printed_thm32, lambda p: features.positive_product(*pair_vectors(p)), "PRF")])


# --------------------------------------------------------------------- Cor 3.3


P.claim("cor3.3", source=P.at("Corollary 3.3"),
        statement="For PRFs, the kernel estimator MSE obtained with SimRFs is strictly lower than with ORFs "
        "for arbitrary data dimensionality d", domain=vd_domain(d=(2, 256), extra={"m": Int(2, 512, extra=(2,))}),
        checks=[
            ineq("closed-forms", lambda p, dps: ref.prf_mse_simrf_orf(p["v"], int(p["d"]), int(p["m"]), dps),
                 description="MSE_SimRF <= MSE_ORF from the hypergeometric closed forms (mpmath)",
                 sides_ball=lambda p, bits: ref.prf_mse_simrf_orf_ball(p["v"], int(p["d"]), int(p["m"]), bits), n=10)],
        notes="Checked as <= with rounding tolerance; at v = 0 (x = -y) both MSEs are exactly 0, so 'strictly' "
        "holds only for v > 0 (and m >= 2).")


# --------------------------------------------------------------- Thm 3.4 (numerical)


#: random restarts of the Thm 3.4 search per budget (one more start is a perturbed simplex)
THM34_RESTARTS = {"smoke": 1, "default": 3, "thorough": 12}


def _thm34_eval(p: dict[str, Any], budget: Budget, seed: int) -> PointEval:
    d, v = int(p["d"]), float(p["v"])
    simplex, best, err = ref.configuration_search(d, v, THM34_RESTARTS.get(budget.name, 3), seed=seed % 2**32)
    return compare_inequality(p, MF(simplex), MF(best), MF(err), rtol=budget.rtol)


P.claim("thm3.4", source=P.at("Theorem 3.4 (proof appendix A.2)"),
        statement="With d i.i.d. chi_d norms, SimRFs are the best possible weight-independent geometrical coupling: "
        "no arrangement of the d directions gives a lower RF-conformity (lower PRF MSE)",
        domain=vd_domain(v=(0.1, 3.0), d=(2, 16),
                         fixed_points=[{"d": 8, "v": 1.0}, {"d": 12, "v": 1.0}, {"d": 16, "v": 1.0}]),
        checks=[
            not_certifiable(
                Check("optimiser", 1, _thm34_eval, search=False, max_points=6,
                      description="rho(simplex) <= min over d unit directions of mean_{i!=j} rho_theta(cos theta_ij) "
                      "(L-BFGS with the exact gradient; random restarts per budget: smoke 1, default 3, thorough 12, "
                      "plus a perturbed simplex); rho_theta from the eq (21) closed form; d = 8, 12, 16 always tried"),
                "the right side is a numerical optimiser's output (L-BFGS in float64 from random starts): an upper "
                "bound of the minimum over configurations, not an enclosure of it, so a ball cannot certify "
                "rho(simplex) <= the minimum")],
        notes="A weight-independent coupling is a law over direction configurations independent of the norms; its "
        "conformity is the average over configurations, so minimising over deterministic configurations suffices.")


# --------------------------------------------------------------------- Cor 4.4


def _gap_ref(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """e^{-2(x^2+y^2)} (m-1)/m (e^{v^2} - rho_ORF), rho_ORF by the definition quadrature."""
    return ref.prf_orthogonality_gap_quadrature(float(p["v"]), int(p["d"]), int(p["m"]), p["sq"], dps)


def printed_eq25(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (25) as printed, on a context: ``e^{-2 sq} (m-1)/m`` times :func:`printed_eq25_bracket`."""
    m = p["m"]
    return ctx.exp(-2 * p["sq"]) * ctx.num(m - 1) / m * printed_eq25_bracket(ctx, p["v"], p["d"])


def _gap_ball(p: dict[str, Any], bits: int) -> Any:
    """The gap ``e^{-2 sq} (m-1)/m (e^{v^2} - rho_ORF)`` on balls, ``rho_ORF`` from the definition eq (10)
    as a ``chi_{2d}`` expectation (:func:`rfcheck.references.simrf.prf_orthogonality_gap_ball`): independent
    of the series of eq (25)/(69) and of their ``1F1`` sum."""
    return ref.prf_orthogonality_gap_ball(p["v"], int(p["d"]), int(p["m"]), p["sq"], bits)


def _gap_check(n: int, printed: Any = None, **kw: Any) -> Check:
    """The gap against the definition eq (10): :func:`_gap_ref` by quadrature, :func:`_gap_ball` on balls."""
    return det("eq10-quadrature", printed, _gap_ref,
               atol_scale=lambda p, dps: mpmath.exp(MF(p["v"]) ** 2 - 2 * MF(p["sq"])), reference_ball=_gap_ball, n=n,
               **kw)


#: the points of the orthogonality-gap claims, eq (25), (69), (70)
_GAP_DOMAIN = vd_domain(v=(0.0, 3.0), d=(2, 64), extra={"m": Int(2, 64, extra=(2,)), "sq": Real(0.0, 2.0)},
                        constraint=lambda p: p["m"] <= p["d"])

P.claim("cor4.4", source=P.at("Corollary 4.4, eq (25)"),
        statement="PRF orthogonality gap Delta MSE = e^{-2x^2-2y^2} (m-1)/m (e^{v^2} - Gamma(d/2)/Gamma(d) "
        "sum_k v^{2k}/k! Gamma(k+d)/Gamma(k+d/2)), m <= d", domain=_GAP_DOMAIN,
        checks=[_gap_check(10, description="MSE_IID - MSE_ORF with rho_ORF from the definition eq (10) by quadrature",
                           printed_ctx=printed_eq25)],
        correction="The series needs 2^k k! in the denominator, as in eq (23) and the first line of eq (69): "
        "Delta MSE = e^{-2x^2-2y^2} (m-1)/m (e^{v^2} - 1F1(d; d/2; v^2/2)) "
        "(rfcheck.closed_forms.simrf.prf_orthogonality_gap; claim simrf.eq69 holds). As printed the "
        "bracket is e^{v^2} - 1F1(d; d/2; v^2) < 0.")


def _gap_positive_ball(p: dict[str, Any], bits: int) -> tuple[Any, Any]:
    """``(0, gap)`` on balls, the gap by :func:`_gap_ball` (exactly 0 at ``v = 0``: ``e^0 - 1F1(d; d/2; 0)``)."""
    if float(p["v"]) == 0:
        return arb(0), arb(0)
    with workprec(bits):
        return arb(0), _gap_ball(p, bits)


P.claim("cor4.4.positive", source=P.at("Corollary 4.4 (last sentence) and eq (70)"),
        statement="The PRF orthogonality gap MSE_IIDRF - MSE_ORF is positive everywhere (m <= d)", domain=_GAP_DOMAIN,
        checks=[ineq("eq10-quadrature", lambda p, dps: (MF(0), *_gap_ref(p, dps)),
                     description="0 <= MSE_IID - MSE_ORF, rho_ORF by quadrature of eq (10)",
                     sides_ball=_gap_positive_ball, n=10)], notes="At v = 0 the gap is exactly 0 (positive for v > 0).")


def printed_eq69_line1_ctx(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (69), line 1, on a context: ``e^{-2 sq} (m-1)/m (e^{v^2} - S)``, ``S`` the series of eq (23)
    (printed identically: :func:`printed_eq23_ctx`)."""
    m = p["m"]
    return ctx.exp(-2 * p["sq"]) * ctx.num(m - 1) / m * (ctx.exp(p["v"] * p["v"]) - printed_eq23_ctx(ctx, p))


def printed_eq69_line2(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (69), line 2, on a context (mpmath or Arb; ``d``, ``m`` Python ints): e^{-2x^2-2y^2} (m-1)/m
    sum_k v^{2k}/k! (1 - r_k), r_k = (k+d-1)!/(d-1)! (d-2)!!/(2k+d-2)!!.

    On balls the tail is enclosed with ``v^2 / ((K+1)(1 - r_K))``, ``K >= 2``: for ``j >= K``, ``t_{j+1}/t_j =
    v^2/(j+1) (1 - r_{j+1})/(1 - r_j)`` with ``0 <= 1 - r_{j+1} <= 1`` and ``1 - r_j >= 1 - r_K > 0``
    (``r_{j+1}/r_j = (d+j)/(d+2j) <= 1``; the terms are non-negative).
    """
    v, d, m = ctx.num(p["v"]), int(p["d"]), int(p["m"])
    pref = ctx.exp(-2 * ctx.num(p["sq"])) * ctx.num(m - 1) / m
    def one_minus_r(k: int) -> Any:  # mpmath's factorials in mpmath; the exact rational r_k on balls
        if ctx is MP:
            r = mpmath.factorial(k + d - 1) / mpmath.factorial(d - 1) * mpmath.fac2(d - 2) / mpmath.fac2(2 * k + d - 2)
            return 1 - r
        dfac = [math.prod(range(n, 0, -2)) for n in (d - 2, 2 * k + d - 2)]
        return Ball(arb(1 - fmpq(math.factorial(k + d - 1), math.factorial(d - 1)) * fmpq(*dfac)))

    return pref * ctx.series(
        lambda k: v ** (2 * k) / ctx.gamma(k + 1) * one_minus_r(k),
        lambda k: v * v / ((k + 1) * one_minus_r(k)) if k >= 2 else ctx.num(math.inf),  # r_1 = 1: t_1 = 0
    )


for _line, _stmt, _printed in (
    (1, "Delta MSE = e^{-2(x^2+y^2)} (m-1)/m (e^{v^2} - Gamma(d/2)/Gamma(d) sum_k v^{2k}/(2^k k!) "
        "Gamma(k+d)/Gamma(k+d/2))", {"printed_ctx": printed_eq69_line1_ctx}),
    (2, "Delta MSE = e^{-2x^2-2y^2} (m-1)/m sum_k v^{2k}/k! (1 - (k+d-1)!/(d-1)! (d-2)!!/(2k+d-2)!!)",
     faces(printed_eq69_line2))):
    P.claim(f"eq69.line{_line}", source=P.at(f"appendix A.7, eq (69), line {_line}"), statement=_stmt,
            domain=_GAP_DOMAIN, checks=[_gap_check(8, **_printed)])


def _eq70(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    return MF(0), 1 - ref.gamma_ratio_product(int(p["d"]), int(p["k"])), MF(10) ** (-dps + 2)


def _eq70_ball(p: dict[str, Any], bits: int) -> tuple[Any, Any]:
    """``(0, 1 - prod)``, the product an exact rational (:func:`rfcheck.references.simrf.gamma_ratio_product_exact`)."""
    with workprec(bits):
        return arb(0), arb(1 - ref.gamma_ratio_product_exact(int(p["d"]), int(p["k"])))


P.claim("eq70", source=P.at("appendix A.7, eq (70)"),
        statement="1 - d/d (d+1)/(d+2) ... (d+k-2)/(d+2(k-2)) (d+k-1)/(d+2(k-1)) > 0 (k >= 2, as displayed)",
        domain=Domain({"d": Int(2, 4096), "k": Int(2, 200, extra=(2, 3))}),
        checks=[inequality_check("exact-product", _eq70, description="the product in mpmath; checked as >= 0",
                                 sides_ball=_eq70_ball)],
        notes="The displayed product has at least two factors (k >= 2); for k = 0, 1 the term is exactly 0.")


# --------------------------------------------------------------------- Thm 4.5 (RFF)


def printed_eq26(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (26) on a context (mpmath or Arb; ``d``, ``m`` Python ints): (m-1)/m (e^{-z^2} - Gamma(d/2)/Gamma(d)
    sum_k (-z^2)^k/(2^k k!) Gamma(k+d)/Gamma(k+d/2)).

    The alternating series runs with ``z^2 + 10`` guard digits (``1.5 z^2 + 10`` guard bits on balls, where its
    tail is enclosed with ``|t_{k+1}/t_k| = z^2 (k+d)/(2(k+1)(k+d/2))``, non-increasing in ``k``).
    """
    z, d, m = ctx.num(p["z"]), int(p["d"]), int(p["m"])
    x = float(p["z"]) ** 2
    with mpmath.workdps(mpmath.mp.dps + int(x) + 10) if ctx is MP else workprec(flint.ctx.prec + int(1.5 * x) + 10):
        s = ctx.series(
            lambda k: (-z * z) ** k / (2**k * ctx.gamma(k + 1)) * ctx.gamma(k + d) / ctx.gamma(k + ctx.num(d) / 2),
            lambda k: z * z * (k + d) / (2 * (k + 1) * (k + ctx.num(d) / 2)))
        out = ctx.num(m - 1) / m * (ctx.exp(-z * z) - ctx.gamma(ctx.num(d) / 2) / ctx.gamma(d) * s)
    return +out


P.claim("thm4.5", source=P.at("Theorem 4.5, eq (26) (= eq (76))"),
        statement="RFF orthogonality gap Delta MSE = (m-1)/m (e^{-z^2} - Gamma(d/2)/Gamma(d) sum_k (-z^2)^k/(2^k k!) "
        "Gamma(k+d)/Gamma(k+d/2)), z = |x - y|, m <= d",
        domain=Domain({"z": Real(0.0, 4.0, extra=(1.0,)), "d": Int(1, 128, extra=(2, 3, 64)),
                       "m": Int(1, 128, extra=(2,))}, constraint=lambda p: p["m"] <= p["d"]),
        checks=[det("bessel-quadrature",
                    reference=lambda p, dps: ref.rff_orthogonality_gap(p["z"], int(p["d"]), int(p["m"]), dps),
                    atol_scale=lambda p, dps: 1,
                    description="E cos(w_ij.z) over |w_ij| ~ chi_2d and a uniform direction (Bessel J)",
                    **faces(printed_eq26), reference_ball=lambda p, bits: ref.rff_orthogonality_gap_ball(
                                               p["z"], int(p["d"]), int(p["m"]), bits), n=8)])


def _e_ort(ctx: Any, z: Any, d: int) -> Any:
    """``E_ort(a_1 a_2) = E cos(w_ij . z)`` of an orthogonal pair, the ingredient of eq (74) and (77): in mpmath
    the Bessel quadrature :func:`rfcheck.references.simrf.rff_orf_covariance` (its float64 value), on balls its
    closed form eq (76), ``1F1(d; d/2; -z^2/2)`` (Arb's rigorous hypergeometric function)."""
    return ref.rff_orf_covariance(z, d) if ctx is MP else ctx.hyp1f1(d, ctx.num(d) / 2, -z * z / 2)


def printed_eq74(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (74) on a context with E[a_i a_j] = E cos(w_ij.z) (A.8, :func:`_e_ort`) for ORF pairs, e^{-z^2} for iid."""
    z, d, m = ctx.num(p["z"]), int(p["d"]), int(p["m"])
    eaa = _e_ort(ctx, z, d) if p["coupling"] == "orf" else ctx.exp(-z * z)
    npairs = cf._n_coupled_pairs(m, d, p["coupling"])
    mean_eaa = (npairs * eaa + (m * (m - 1) - npairs) * ctx.exp(-z * z)) / (m * (m - 1)) if m > 1 else 0
    return 1 / ctx.num(m) * ((1 - ctx.exp(-z * z)) ** 2 / 2 + (m - 1) * (mean_eaa - ctx.exp(-z * z)))


def _rff_product(p: dict[str, Any]) -> Any:
    """The RFF kernel estimate at ``x = z e_1``, ``y = 0`` (``|x - y| = z``)."""
    d = int(p["d"])
    x, y = np.zeros((1, d)), np.zeros((1, d))
    x[0, 0] = float(p["z"])
    return features.trig_product(x, y)


P.claim("eq74", source=P.at("appendix A.8, eq (74)-(75)"),
        statement="RFFs: MSE(K_hat) = 1/m ((1 - e^{-z^2})^2/2 + (m-1)(1/(m(m-1)) sum_{i != j} E[a_i a_j] - e^{-z^2})), "
        "a_i = cos(w_i^T z), E[a_i a_j] = E cos(w_ij^T z) (equal laws of w_i +- w_j for iid / orthogonal pairs)",
        domain=Domain({"z": Real(0.2, 2.5), "d": Int(2, 16, extra=(2, 3)), "m": Int(2, 32, extra=(2,)),
                       "coupling": Choice(("iid", "orf"))}), checks=[_mc_mse(printed_eq74, _rff_product, "RFF")])


# --------------------------------------------------------------------- Cor 4.6 / eq (77)


def printed_eq77(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (77) as printed, on a context (``d``, ``m`` Python ints): ``1 + 2(m-1)/(1 + e^{-z^2})^2 (E_ort(a_1 a_2) -
    e^{-z^2})``, ``E_ort`` by :func:`_e_ort` (mpmath: 10 guard digits; balls: flint's working precision).

    Examples
    --------
    The mpmath face (``E_ort`` by a Bessel quadrature) inside the ball face (``E_ort = 1F1``):

    >>> b, v = on_balls(printed_eq77)({"z": 1.0, "d": 3, "m": 4}, 64), printed_eq77(MP, {"z": 1.0, "d": 3, "m": 4})
    >>> round(float(v), 6), abs(float(b.mid()) - float(v)) < 1e-13, float(b.rad()) < 1e-13
    (0.842635, True, True)

    References
    ----------
    SimRF appendix A.9, eq (77); eq (76).
    """
    z, d, m = ctx.num(p["z"]), int(p["d"]), int(p["m"])
    with mpmath.workdps(mpmath.mp.dps + 10) if ctx is MP else contextlib.nullcontext():
        e_ort = _e_ort(ctx, z, d)
        out = 1 + 2 * (m - 1) / (1 + ctx.exp(-z * z)) ** 2 * (e_ort - ctx.exp(-z * z))
    return +out


P.claim(
    "eq77", source=P.at("appendix A.9, eq (77)"),
    statement="MSE_ORF / MSE_IIDRF = 1 + 2(m-1)/(1 + e^{-z^2})^2 (E_ort(a_1 a_2) - e^{-z^2}), m <= d",
    domain=Domain({"z": Real(0.1, 3.0, extra=(1.0,)), "d": Int(2, 128, extra=(2, 64)), "m": Int(2, 128, extra=(2,))},
                  constraint=lambda p: p["m"] <= p["d"]),
    checks=[det("bessel-quadrature",
                reference=lambda p, dps: ref.rff_mse_ratio_quadrature(p["z"], int(p["d"]), int(p["m"]), dps),
                description="ratio of eq (74) MSEs with E_ort by Bessel quadrature", **faces(printed_eq77),
                reference_ball=lambda p, bits: ref.rff_mse_ratio_ball(p["z"], int(p["d"]), int(p["m"]), bits), n=8)],
    correction="The denominator is (1 - e^{-z^2})^2 (the IIDRF MSE is (1 - e^{-z^2})^2/(2m), eq (74)); with it "
    "eq (77) holds and leads to eq (86) = eq (27) (rfcheck.closed_forms.simrf.rff_mse_ratio_orf_iid).")


def _cor46(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    """d^2 |exact - leading| must stay bounded: its growth from d to 4d is at most 2 (O(1/d) remainder -> 4)."""
    with mpmath.workdps(dps + 10):
        z, m, d0 = MF(p["z"]), int(p["m"]), int(p["d"])
        def rem(d: int) -> Any:
            lead = 1 - (m - 1) * mpmath.exp(-z * z) * z**4 / (d * (1 - mpmath.exp(-z * z)) ** 2)
            return d * d * abs(ref.rff_mse_ratio_exact(z, d, m) - lead)

        r1, r2 = rem(4 * d0), rem(16 * d0)
        growth = r2 / r1 if r1 else MF(0)
    return growth, MF(2), MF(10) ** (-dps + 5)


def _cor46_ball(p: dict[str, Any], bits: int) -> Any:
    """:func:`_cor46` on balls, the exact ratio by :func:`rfcheck.references.simrf.rff_mse_ratio_exact_ball`."""
    with workprec(bits + 20):
        z, m, d0 = to_ball(p["z"]), int(p["m"]), int(p["d"])
        def rem(d: int) -> Any:
            e = (-z * z).exp()
            lead = 1 - (m - 1) * e * z**4 / (d * (-z * z).expm1() ** 2)
            return d * d * abs(ref.rff_mse_ratio_exact_ball(z, d, m, bits + 20) - lead)

        return ref.remainder_growth_sides_ball(rem(4 * d0), rem(16 * d0))


P.claim("cor4.6", source=P.at("Corollary 4.6, eq (27) (= eq (86))"),
        statement="MSE(K_ORF)/MSE(K_IIDRF) = 1 - (m-1)(e^{-z^2} z^4 / (d (1 - e^{-z^2})^2) + O(1/d^2)), m <= d",
        domain=Domain({"z": Real(0.2, 3.0, extra=(1.0,)), "m": Int(2, 64, extra=(2,)), "d": Int(64, 256)}),
        checks=[inequality_check("remainder-growth", _cor46, max_points=12, sides_ball=_cor46_ball,
                                 description="d^2 |exact ratio - leading term| at 4d and 16d (exact ratio from the "
                                 "1F1 closed form, mpmath): growth <= 2 means O(1/d^2), O(1/d) gives ~4")])

P.claim("eq85", source=P.at("appendix A.9, eq (85), last equality"),
        statement="-sum_k (-z^2)^k/k! k(k-1)/(2d) = -z^4 e^{-z^2}/(2d)",
        domain=Domain({"z": Real(0.0, 5.0), "d": Int(1, 1024)}),
        checks=[deterministic_check(
                    "series", None, lambda p, dps: ref.alternating_k2_series(p["z"], int(p["d"]), dps),
                    atol_scale=lambda p, dps: 1 / MF(p["d"]),
                    printed_ctx=lambda ctx, p: -(p["z"] ** 4) * ctx.exp(-(p["z"] ** 2)) / (2 * p["d"]),
                    reference_ball=lambda p, bits: ref.alternating_k2_series_ball(p["z"], int(p["d"]), bits))])


def _growth_ratio(ctx: Any, k: int, d0: int, exact: Any, approx: Any) -> tuple[Any, Any]:
    """``(r(d0), r(4 d0))``, ``r(d) = d^2 |exact(k, d) - approx(k, d)|``, on a context (mpmath or Arb)."""
    def rem(d: int) -> Any:
        dd = ctx.num(d)
        return d * d * abs(exact(ctx, k, dd) - approx(ctx, k, dd))

    return rem(d0), rem(4 * d0)


#: the fixed-k order of the expansions of appendix A.9, eq (81)-(83)
_FIXED_K = " (to O(1/d^2) at fixed k)"


def _growth_claim(eq: str, statement: str, exact: Any, approx: Any, k: Int | None = None,
                  description: str = "d^2 |exact - expansion| grows by <= 2 from d to 4d (O(1/d) would give ~4)"
                  ) -> None:
    """A remainder-growth claim; ``exact(ctx, k, d)``, ``approx(ctx, k, d)`` the printed sides on a context."""
    def check(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
        with mpmath.workdps(dps):
            r1, r2 = _growth_ratio(MP, int(p["k"]), int(p["d"]), exact, approx)
            return (r2 / r1 if r1 else MF(0)), MF(2), MF(10) ** (-dps + 5)

    def sides(p: dict[str, Any], bits: int) -> Any:
        with workprec(bits):
            return ref.remainder_growth_sides_ball(*_growth_ratio(ARB, int(p["k"]), int(p["d"]), exact, approx))

    P.claim(f"eq{eq}", source=P.at(f"appendix A.9, eq ({eq})"), statement=statement,
            domain=Domain({"k": Int(0, 12, scale="linear") if k is None else k, "d": Int(1000, 10_000)}),
            checks=[inequality_check(
                        "remainder-growth", check, max_points=16, description=description, sides_ball=sides)])


# the exact side is the product of eq (70) (rfcheck.references.simrf.gamma_ratio_product)
_growth_claim("84", "(1/2^k) Gamma(k+d) Gamma(d/2) / (Gamma(k+d/2) Gamma(d)) ~ 1 - k(k-1)/(2d) (to O(1/d^2), "
              "fixed k)", lambda ctx, k, d: math.prod(ctx.num(d + j) / (d + 2 * j) for j in range(k)),
              lambda ctx, k, d: 1 - ctx.num(k * (k - 1)) / (2 * d), k=Int(0, 12),
              description="d^2 |exact - (1 - k(k-1)/(2d))| grows by <= 2 from d to 4d")


# --------------------------------------------------------------- sec 5.1 prefactor


def printed_prefactor(ctx: Any, p: dict[str, Any]) -> Any:
    """Sec 5.1: 1 - sqrt(pi) Gamma(d+1) Gamma(d/2+1/2) / (Gamma(d/2) Gamma(d/2+1)^2 2^d), on a context."""
    d, half, g = p["d"], num(ctx, 1) / 2, ctx.gamma
    dh = num(ctx, d) / 2
    return 1 - ctx.sqrt(ctx.pi) * g(d + 1) * g(dh + half) / (g(dh) * g(dh + 1) ** 2 * 2**d)


P.claim("text-small-v", source=P.at("sec 5.1"),
        statement="MSE_SimRF = v^2 (1 - sqrt(pi) Gamma(d+1) Gamma(d/2+1/2) / (Gamma(d/2) Gamma(d/2+1)^2 2^d)) + O(v^4) "
        "(MSE normalised so that MSE_IIDRF,ORF = v^2 + O(v^4): m = d features, prefactor e^{-2x^2-2y^2}/m dropped)",
        domain=Domain({"d": Int(2, 4096, extra=(2, 3, 64))}),
        checks=[det("chi-moment-quadrature", None, lambda p, dps: ref.simrf_mse_small_v_coefficient(int(p["d"]), dps),
                    description="v^2 coefficient from E w_ij^2 = 2d - 2 (E r)^2/(d-1), E r by quadrature",
                    printed_ctx=printed_prefactor,
                    reference_ball=lambda p, bits: ref.simrf_mse_small_v_coefficient_ball(int(p["d"]), bits), n=8)])


def _prefactor_digits(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    val, err = ref.simrf_mse_small_v_coefficient(int(p["d"]), dps)
    return abs(MF("0.0078") - val), MF("0.00005"), err


def _prefactor_digits_ball(p: dict[str, Any], bits: int) -> tuple[Any, Any]:
    """:func:`_prefactor_digits` on balls (:func:`rfcheck.references.simrf.simrf_mse_small_v_coefficient_ball`)."""
    with workprec(bits):
        return abs(arb("0.0078") - ref.simrf_mse_small_v_coefficient_ball(int(p["d"]), bits)), arb("0.00005")


P.claim("text-prefactor", source=P.at("sec 5.1"), statement="For d = 64, the SimRF v^2 prefactor evaluates to 0.0078",
        domain=Domain({"d": Choice((64,))}),
        checks=[inequality_check(
                    "chi-moment-quadrature", _prefactor_digits,
                    description="|0.0078 - prefactor| <= 5e-5 (the printed value read as correct to its last digit), "
                    "prefactor from the chi_d moment quadrature", sides_ball=_prefactor_digits_ball)])


# ------------------------------------------------------------------ Lemma A.1 / eq (39)-(40)


def _lema1(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    d, v, w = int(p["d"]), float(p["v"]), float(p["w"])
    bound = float(cf.equal_norm_conformity_bound(v, w, d, d))
    best = ref.equal_norm_minimum(v, w, d, starts=3, seed=d * 7919 + int(100 * v) + int(1000 * w))
    return MF(bound), MF(best), MF(1e-12 * bound)


P.claim("lema.1", source=P.at("Lemma A.1, eq (36)-(40)"),
        statement="If w_1..w_d have equal lengths w, rho(x,y) is minimised by the simplex geometry: "
        "rho >= m(m-1) f(2(m-2)/(m-1)) (eq 40), attained when all angles are equal and sum_i w_hat_i = 0",
        domain=Domain({"d": Int(2, 7), "v": Real(0.1, 3.0), "w": Real(0.5, 6.0)}),
        checks=[
            inequality_check(
                "optimiser", _lema1, max_points=5, search=False,
                description="eq (40) bound <= min over directions (L-BFGS, 3 random starts) of eq (36)",
                not_certified="the right side is a numerical optimiser's output (L-BFGS in float64, 3 random starts): "
                "an upper bound of the minimum over directions, not an enclosure of it, so a ball cannot certify "
                "bound <= minimum")])


def printed_eq39(ctx: Any, m: int, rows: list[list[Any]]) -> Any:
    """Eq (39), right side, for the unit vectors ``rows`` (mpmath numbers or balls): 2m(m-2) + 2 |sum_i w_hat_i|^2."""
    s = [ctx.fsum(*(r[k] for r in rows)) for k in range(len(rows[0]))]
    return 2 * m * (m - 2) + 2 * ctx.fsum(*(x * x for x in s))


def _eq39_draw(p: dict[str, Any]) -> tuple[int, int, int]:
    """``(m, dim, seed)`` of the point: ``m`` random unit vectors in ``R^dim``."""
    return int(p["m"]), int(p["dim"]), int(p["seed"])


P.claim("eq39", source=P.at("appendix A.2, eq (39)"),
        statement="sum_i sum_{j != i} |w_hat_i + w_hat_j|^2 = 2m(m-2) + 2 |sum_i w_hat_i|^2 (>= 2m(m-2))",
        domain=Domain({"m": Int(2, 40), "dim": Int(1, 40), "seed": SEED}),
        checks=[deterministic_check(
                    "direct-sum", lambda p: printed_eq39(MP, int(p["m"]), ref.random_unit_rows(*_eq39_draw(p))),
                    lambda p, dps: ref.unit_pair_sum(*_eq39_draw(p), dps), atol_scale=lambda p, dps: int(p["m"]) ** 2,
                    description="both sides for random unit vectors, mpmath",
                    printed_ball=lambda p, bits: printed_eq39(ARB, int(p["m"]),
                                                              ref.random_unit_rows_ball(*_eq39_draw(p), bits)).v,
                    reference_ball=lambda p, bits: ref.unit_pair_sum_ball(*_eq39_draw(p), bits))])


# --------------------------------------------------------------- identities of A.5-A.6


#: the left side of eq (64) by quadrature
_eq64 = two_prec(lambda p: ref.sine_power_integral(int(p["d"])) / mpmath.gamma(MF(int(p["d"])) / 2))


def _eq64_ball(p: dict[str, Any], bits: int) -> Any:
    """The left side of eq (64) on balls: Arb's rigorous integral over Gamma(d/2)."""
    d = int(p["d"])
    with workprec(bits):
        return ref.sine_power_integral_ball(d, bits) / (arb(d) / 2).gamma()


P.claim("eq64", source=P.at("appendix A.6, eq (64)"),
        statement="1/Gamma(d/2) int_0^pi (sin phi)^{d-1} dphi = sqrt(pi) Gamma(d/2)/(Gamma(d/2+1/2) Gamma(d/2)) "
        "= 2^{d-1} Gamma(d/2)/Gamma(d)", domain=Domain({"d": Int(1, 512, extra=(2, 3))}),
        checks=[deterministic_check(f"quadrature-{part}", None, _eq64, printed_ctx=printed, reference_ball=_eq64_ball)
                for part, printed in (
                    ("middle", lambda ctx, p: ctx.sqrt(ctx.pi) / ctx.gamma(num(ctx, p["d"]) / 2 + num(ctx, 1) / 2)),
                    ("right",
                     lambda ctx, p: 2 ** (p["d"] - 1) * ctx.gamma(num(ctx, p["d"]) / 2) / ctx.gamma(p["d"])))])

P.claim(
    "eq58", source=P.at("appendix A.5, eq (57)-(58)"),
    statement="At theta = pi/2, eq (20) reduces to p(w) = w^{2d-1} e^{-w^2/2} / (2^{d-1} Gamma(d)), the chi_{2d} law",
    domain=Domain({"w": Real(0.05, 40.0), "d": Int(1, 256, extra=(2, 3))}),
    checks=[deterministic_check(
                "cdf-derivative", None, lambda p, dps: ref.cdf_derivative_chi2d(p["w"], int(p["d"]), dps),
                atol_scale=lambda p, dps: 1, description="derivative of the chi^2_{2d} CDF P(d, w^2/2)",
                printed_ctx=lambda ctx, p: (
                    p["w"] ** (2 * p["d"] - 1) * ctx.exp(-(p["w"] ** 2) / 2) / (2 ** (p["d"] - 1) * ctx.gamma(p["d"]))),
                reference_ball=lambda p, bits: cf.pdf_wij_orf(p["w"], int(p["d"]), backend="arb", prec=bits)),
            det("eq20-at-right-angle", lambda p: printed_eq20(MP, {**p, "cos": 0}),
                lambda p, dps: ref.cdf_derivative_chi2d(p["w"], int(p["d"]), dps), atol_scale=lambda p, dps: 1,
                description="eq (20) evaluated at cos theta = 0",
                printed_ball=lambda p, bits: on_balls(printed_eq20)({**p, "cos": 0}, bits),
                reference_ball=lambda p, bits: cf.pdf_wij_orf(p["w"], int(p["d"]), backend="arb", prec=bits), n=6)])


def printed_eq56(ctx: Any, p: dict[str, Any], corrected: bool = False) -> Any:
    """Eq (56), first expression, on a context (mpmath or Arb; ``d`` a Python int): ``int_0^{pi/2} J(phi)
    p_chi(a) p_chi(b) dphi``, ``p_chi`` the ``chi_d`` density, ``s = 1 + sin(2phi) cos theta``.

    As printed (``corrected=False``): ``J = w / sqrt(s)``, ``a = w cos phi / sqrt(s)``, ``b = w sin phi / s``.
    Corrected: differentiating eq (55), whose upper limit is ``R = w / sqrt(s)``, gives ``J = R dR/dw = w / s``,
    and ``b = w sin phi / sqrt(s)``; with both fixes the expression equals eq (20) (the square root alone does
    not: ``tests/test_simrf_claims.py``).

    In mpmath the integral is :func:`rfcheck.references.simrf.quad_to_precision` (tanh-sinh on 16 panels, to the
    working precision).  On balls the integrand is analytic near ``[0, pi/2]`` for ``|cos theta| < 1`` (``s > 0``
    there; the square root is taken with its branch cut checked, ``sqrt(analytic=...)``) and is integrated by
    Arb's rigorous Gauss-Legendre (``acb.integral``) to a relative ``2^-prec``, with an absolute tolerance on
    the integrand's own scale (its largest value at 64 midpoints).

    Examples
    --------
    Corrected, it is the density of eq (20):

    >>> a = on_balls(lambda ctx, p: printed_eq56(ctx, p, corrected=True))({"w": 3.0, "d": 3, "cos": 0.5}, 64)
    >>> b = on_balls(printed_eq56)({"w": 3.0, "d": 3, "cos": 0.5}, 64)
    >>> round(float(a.mid()), 4), round(float(b.mid()), 4)
    (0.4433, 0.6041)

    References
    ----------
    SimRF appendix A.5, eq (55)-(56).
    """
    w, d, c = ctx.num(p["w"]), int(p["d"]), ctx.num(p["cos"])
    norm = 2 ** (ctx.num(d) / 2 - 1) * ctx.gamma(ctx.num(d) / 2)
    def pchi(r: Any) -> Any:
        return r ** (d - 1) * ctx.exp(-r * r / 2) / norm

    def f(ph: Any, sqrt: Any = ctx.sqrt) -> Any:
        s = 1 + ctx.sin(2 * ph) * c
        rs = sqrt(s)
        jac, b = (w / s, w * ctx.sin(ph) / rs) if corrected else (w / rs, w * ctx.sin(ph) / s)
        return jac * pchi(w * ctx.cos(ph) / rs) * pchi(b)

    if ctx is MP:
        return +ref.quad_to_precision(f, lambda: mpmath.linspace(0, mpmath.pi / 2, 17), f"eq (56) at {p}")
    bits = flint.ctx.prec
    def fb(ph: Any, analytic: bool) -> Any:
        return f(Ball(ph), lambda x: Ball(x.v.sqrt(analytic=analytic))).v

    mag = max(
        (abs(y).mid() for y in (fb(acb(arb.pi() * (2 * j + 1) / 256), False) for j in range(64)) if y.is_finite()),
        default=arb(0))
    tol = mag * arb(2) ** (-bits - 8) if mag > 0 else arb(2) ** (-4 * bits)
    return Ball(acb.integral(fb, 0, arb.pi() / 2, rel_tol=arb(2) ** -bits, abs_tol=tol, eval_limit=2_000_000).real)


P.claim(
    "eq56", source=P.at("appendix A.5, eq (56), first expression"),
    statement="p(w) = int_0^{pi/2} dphi w/sqrt(1+sin(2phi)cos theta) p_chi(w cos phi/sqrt(1+sin(2phi)cos theta)) "
    "p_chi(w sin phi/(1+sin(2phi)cos theta))",
    domain=Domain({"w": Real(0.05, 20.0), "d": Int(2, 32, extra=(3,)), "cos": Real(-0.9, 0.9, extra=(0.0,))}),
    checks=[
        det("change-of-variables",
            reference=lambda p, dps: ref.pdf_angle_change_of_variables_with_error(p["w"], int(p["d"]), p["cos"], dps),
            atol_scale=lambda p, dps: 1, **faces(printed_eq56),
            reference_ball=lambda p, bits: cf.pdf_wij_angle(p["w"], int(p["d"]), p["cos"], backend="arb", prec=bits),
            n=8)],
    correction="Two slips: the second p_chi argument needs the square root, w sin phi / sqrt(s), and the "
    "Jacobian of differentiating eq (55) is w / s, not w / sqrt(s) (s = 1 + sin(2phi) cos theta; the upper "
    "limit R = w / sqrt(s) gives R dR/dw = w / s). With both, the first expression equals the final form of "
    "eq (56) (= eq (20)), which is correct (claim simrf.lem4.2.pdf); the square root alone does not (w = 3, "
    "d = 3, cos theta = 0.5: printed 0.6041, square root only 0.5292, both 0.4433 = eq (20)).")


# ------------------------------------------------------------------- sec 3.2 / Fig. 4 (SimRF+)


def _plus_draw_ball(p: dict[str, Any], bits: int) -> tuple[Any, Any]:
    """Balls of ``(rho_SimRF+, rho_SimRF)`` for the point's draw of norms
    (:func:`rfcheck.references.simrf.simrf_plus_draw_ball`): the sides of :func:`_simrf_plus_vs`, and of
    :func:`_opt_close` up to their common ``- rho_opt`` (``(rho+ - o) - (rho_S - o) = rho+ - rho_S`` for every real
    ``o``, so the certified verdict needs no enclosure of the optimiser's ``rho_opt``)."""
    return ref.simrf_plus_draw_ball(int(p["d"]), float(p["v"]), int(p["seed"]), bits)


def _simrf_plus_vs(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    """(rho_SimRF+, rho_SimRF, err) for one draw of norms (eq 12, fixed vectors)."""
    a, b, _ = ref.simrf_plus_draw(int(p["d"]), float(p["v"]), int(p["seed"]))
    return MF(a), MF(b), MF(1e-13 * b)


P.claim("text-simrfplus", source=P.at("sec 3.2 and Fig. 4"),
        statement="SimRFs+ access (slightly) lower RF-conformity than SimRFs for a draw of norms "
        "(rho_SimRF+ <= rho_SimRF, eq 12 with the vectors fixed), for v up to the v = 1 of Fig. 4 "
        "('smaller kernel estimator MSE when v is sufficiently small', Fig. 3 caption)",
        domain=Domain({"d": Int(3, 16, extra=(6,)), "v": Real(0.1, 1.0, extra=(1.0,)), "seed": SEED}),
        checks=[ineq("fixed-draw", _simrf_plus_vs,
                     description="eq (12) for the SimRF and SimRF+ arrangements of the same norms",
                     sides_ball=_plus_draw_ball, n=20)],
        notes="SimRF+ minimises the k = 1 truncation (eq 15); the statement is made for small v "
        "(Fig. 4: d = 6, v = 1). "
        "Outside that (not claimed by the paper) it can fail: at d = 3, v = 3, seed 1000000 rho_SimRF+ = 24.63 > "
        "rho_SimRF = 23.34 (found by an earlier run of this check over v <= 3).")


def _opt_close(p: dict[str, Any], dps: int) -> tuple[Any, Any, Any]:
    """SimRF+ is closer to the numerical optimum than SimRF is: rho+ - rho_opt <= rho_S - rho_opt."""
    d, v, seed = int(p["d"]), float(p["v"]), int(p["seed"])
    a, b, norms = ref.simrf_plus_draw(d, v, seed)
    _, opt = ref.optimised_ensemble(norms, v, starts=1, seed=seed)
    opt = min(opt, a, b)
    return MF(a - opt), MF(b - opt), MF(1e-12 * b)


P.claim("fig4", source=P.at("Fig. 4 and sec 3.2"),
        statement="The minimisation of the truncated objective (SimRFs+) is a good approximation to the minimisation "
        "of the true objective ('numerically optimised'): read as rho_SimRF+ - rho_opt <= rho_SimRF - rho_opt "
        "for a draw of norms, d = 6, v = 1 and around",
        domain=Domain({"d": Int(4, 8, extra=(6,)), "v": Real(0.3, 1.5, extra=(1.0,)), "seed": SEED}),
        checks=[ineq("optimiser", _opt_close, sides_ball=_plus_draw_ball, n=4,
                     description="numerical minimum of eq (12) over directions (L-BFGS from the simplex and a random "
                     "start)")],
        notes="'Good approximation' is informal; this registers the weakest quantitative reading (SimRF+ closes part "
        "of the gap between SimRF and the numerical optimum).")


# ------------------------------------------------------------- A.6 eq (66), A.9 eq (79)-(83)


def printed_eq66(ctx: Any, p: dict[str, Any]) -> Any:
    """Eq (66), right-hand side, on a context (mpmath or Arb; ``d``, ``k`` Python ints):
    sum_p k!/((k-p)! p!) (-1/(d-1))^p sqrt(pi) Gamma((d+p)/2)/Gamma((d+p+1)/2)."""
    d, k = int(p["d"]), int(p["k"])
    # alternating binomial sum: k guard digits (4k guard bits on balls)
    with mpmath.workdps(mpmath.mp.dps + k) if ctx is MP else workprec(flint.ctx.prec + 4 * k):
        c = -ctx.num(1) / (d - 1)
        out = ctx.fsum(*(ctx.num(math.comb(k, q)) * c**q * ctx.sqrt(ctx.pi) * ctx.gamma(ctx.num(d + q) / 2)
                         / ctx.gamma(ctx.num(d + q + 1) / 2) for q in range(k + 1)))
    return +out


P.claim("eq66", source=P.at("appendix A.6, eq (66)"),
        statement="int_0^pi (sin phi)^{d-1} (1 - sin phi/(d-1))^k dphi = sum_p k!/((k-p)! p!) (-1/(d-1))^p "
        "sqrt(pi) Gamma((d+p)/2)/Gamma((d+p+1)/2)",
        domain=Domain({"d": Int(2, 512, extra=(2, 3)), "k": Int(0, 60, scale="linear", extra=(0, 1))}),
        checks=[det("quadrature", reference=two_prec(lambda p: ref.sine_power_integral(
                                                         int(p["d"]), int(p["k"]), mpmath.linspace(0, mpmath.pi, 9))),
                    **faces(printed_eq66),
                    reference_ball=lambda p, bits: ref.sine_power_integral_ball(int(p["d"]), bits, int(p["k"])), n=20)])

_growth_claim("81", "sqrt((k+d-1)(d/2-1)/((k+d/2-1)(d-1))) ~ 1 - k/(2d)" + _FIXED_K,
              lambda ctx, k, d: ctx.sqrt((k + d - 1) * (d / 2 - 1) / ((k + d / 2 - 1) * (d - 1))),
              lambda ctx, k, d: 1 - k / (2 * d))
_growth_claim("82", "(1/2^k) ((k+d-1)/(k+d/2-1))^k ~ 1 - k(k-1)/d" + _FIXED_K,
              lambda ctx, k, d: ((k + d - 1) / (k + d / 2 - 1)) ** k / 2**k, lambda ctx, k, d: 1 - k * (k - 1) / d)
_growth_claim("83", "(1 + k/(d-1))^{d-1} / (1 + k/(d/2-1))^{d/2-1} ~ 1 + k^2/(2d)" + _FIXED_K,
              lambda ctx, k, d: (1 + k / (d - 1)) ** (d - 1) / (1 + k / (d / 2 - 1)) ** (d / 2 - 1),
              lambda ctx, k, d: 1 + ctx.num(k * k) / (2 * d))

P.claim("eq79", source=P.at("appendix A.9, eq (79)"),
        statement="lim_{x -> infinity} Gamma(x+1) = sqrt(2 pi x) e^{-x} x^x", domain=Domain({"x": Real(1.0, 100.0)}),
        unverifiable="As printed the limit is ill-formed (both sides diverge, the right side depends on x); the "
        "intended Stirling asymptotic Gamma(x+1) ~ sqrt(2 pi x) (x/e)^x is standard. Not checked.")

P.claim("eq80", source=P.at("appendix A.9, eq (80)"),
        statement="lim_{d -> infinity} (1/2^k) Gamma(k+d)Gamma(d/2)/(Gamma(k+d/2)Gamma(d)) = (1/2^k) sqrt(...) "
        "(k+d-1)^{m+d-1} (d/2-1)^{d/2-1} / ((k+d/2-1)^{k+d/2-1} (d-1)^{d-1}) = ...",
        domain=Domain({"k": Int(0, 12), "d": Int(100, 10_000)}),
        unverifiable="Ill-formed as printed: a limit d -> infinity equated to d-dependent expressions, and an "
        "exponent m+d-1 (m undefined here; k+d-1 is meant). Its consequences eq (81)-(84) are checked.")

# the displays of the main text and appendix proofs without a theorem claim (eq 9/88, 14, 16/51, 17, 22, 28,
# 31-32, 36-38, 41-50, 53, 55, 57, 61-62, 72, 75, 78, Algorithm 1, footnote 4)
from rfcheck.claims import _simrf_proofs  # noqa: E402, F401

"""Claims of Hybrid Random Features (``hrf``, seed 004), transcribed exactly as printed.

Each ``printed_*`` function is a literal transcription of the paper's formula, evaluated
in mpmath; most are written against the number-system context (``printed_*_ctx(ctx, p)``),
so that the same transcription is also evaluated on Arb balls and decided points certify
against a ball reference.  References never use the printed formula; their numerical
library code (moments with error bars, quadratures, maxima, null spaces) lives in
``rfcheck.references.hrf``:

* *moment expansion by quadrature*: the MSE of a bipolar hybrid is expanded as
  ``E[(lam S1 + (1 - lam) S2 - SM)^2]`` from first and second moments of the base
  estimators (exact MGFs, or 1-D Gaussian quadratures of ``cosh``, ``cos`` and their
  products) and of the lambda-estimator (exact binomial sums for sgn features; quadrature
  for the cosine-estimated Gaussian lambda);
* Gaussian expectations of complex exponentials by per-coordinate quadrature;
* numerical maximisation (relative errors over theta) and root finding;
* Monte Carlo with ``rfcheck.estimators.hrf`` (NumPy), z-tests at the budget's level.

Pairs are ``x = nx e1``, ``y = ny (cos theta e1 + sin theta e2)``: every result depends
on ``(|x|, |y|, theta)`` only, and for iid Gaussian projections ``d = 2`` is exact in law.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
from flint import acb, arb

from rfcheck import memo
from rfcheck.arb_backend import ARB, Ball, bits_for_dps, to_ball, workprec
from rfcheck.backends import MP
from rfcheck.checkkit import ball_of, capped, certify_on_draws, dps_of_bits, max_below, mp_reference
from rfcheck.claims._common import certify_eval, eval_on_balls
from rfcheck.closed_forms import hrf as cf
from rfcheck.estimators import hrf as hy
from rfcheck.ledger import (
    Budget,
    Check,
    Choice,
    Domain,
    Int,
    PointEval,
    Reading,
    Real,
    certify_equal,
    deterministic_check,
    inequality_check,
    mc_check,
    mp_point,
    mpmath_rtol,
    not_certifiable,
    on_mp,
    paper,
)
from rfcheck.references import hrf as refs
from rfcheck.stats import compare_deterministic, compare_inequality, compare_mc, estimate_mean, z_critical

#: no public names: this module registers its paper's claims on import; the ``printed_*``
#: transcriptions and checks are reached through the registry (``rfcheck list``, ``rfcheck verify``)
#: and documented by the ledger pages, one entry per claim
__all__: list[str] = []
P = paper("hrf")
PI = math.pi
#: a point; a formula written against a number-system context, ``f(ctx, point)``; a check's reference
#: ``(point, dps) -> (value, error bar)``; a ball function ``(point, bits) -> ball``; an inequality's sides
#: ``(point, dps) -> (lhs, rhs, error bar)``
Point = dict[str, Any]
CtxFormula = Callable[[Any, Point], Any]
Reference = Callable[[Point, int], tuple[Any, Any]]
BallFn = Callable[[Point, int], Any]
Sides = Callable[[Point, int], tuple[Any, Any, Any]]


# ------------------------------------------------------------------------------ geometry
def _nums(ctx: Any, p: Point, *keys: str) -> list[Any]:
    """The point's ``keys`` as numbers of ``ctx`` (``refs.num``)."""
    return [refs.num(ctx, p[k]) for k in keys]


def _vecs(p: Point) -> tuple[np.ndarray, np.ndarray]:
    th = float(p["theta"])
    return np.array([float(p["nx"]), 0.0]), float(p["ny"]) * np.array([math.cos(th), math.sin(th)])


def _pair_domain(norm: tuple[float, float] = (0.0, 3.0), extra: dict[str, Any] | None = None,
                 description: str = "", same_length: bool = False, **kw: Any) -> Domain:
    params: dict[str, Any] = {"nx": Real(norm[0], norm[1]), "ny": Real(norm[0], norm[1]),
                              "theta": Real(0.0, PI, extra=(PI / 2,))}
    if same_length:
        params = {"r": Real(max(norm[0], 1e-3), norm[1]), "theta": Real(0.0, PI, extra=(PI / 2,))}

        def derive(p: Point) -> Point:
            p["nx"] = p["ny"] = p["r"]
            return p

        kw.setdefault("derive", derive)
    params.update(extra or {})
    return Domain(params, description=description, **kw)


_M = {"m": Int(1, 64)}
_MN = {"m": Int(1, 64), "n": Int(1, 64)}


def _pair_ctx(ctx: Any, p: Point) -> dict[str, Any]:
    """``refs.pair_geometry`` of the point's ``nx, ny, theta`` as numbers of ``ctx``."""
    return refs.pair_geometry(ctx, *_nums(ctx, p, "nx", "ny", "theta"))


def _zero_ctx(ctx: Any, p: Point) -> Any:
    """The printed value 0."""
    return refs.num(ctx, 0.0)


def _ctx_check(name: str, printed_ctx: CtxFormula, ref_ctx: CtxFormula,
               scale: Callable[[Point, Any], Any] = lambda p, v: 1 + abs(v), digits: int = 5,
               keep_ints: bool = False, **kw: Any) -> Check:
    """``printed_ctx`` against ``ref_ctx``, a reference written against a context: in mpmath (``mp_reference``, error
    bar ``10^(-dps - digits) scale(p, value)``) and on balls, the point's numbers exact (``eval_on_balls``; with
    ``keep_ints``, ``ball_of``: its ints stay ints); ``kw`` goes to ``deterministic_check``."""
    ball = ball_of(ref_ctx) if keep_ints else lambda p, bits: eval_on_balls(ref_ctx, p, bits)
    return deterministic_check(name, None, mp_reference(ref_ctx, scale, digits), printed_ctx=printed_ctx,
                               reference_ball=ball, **kw)


def _sides(f: Callable[[Point, int], tuple[Any, Any]], digits: int | None = 5) -> Sides:
    """An inequality's ``lhs_rhs(p, dps)``: ``(*f(p, dps), 10^(-dps - digits))`` at ``dps + 10`` digits (``digits``
    None: error bar 0)."""
    def lhs_rhs(p: Point, dps: int) -> tuple[Any, Any, Any]:
        with mpmath.workdps(dps + 10):
            return (*f(p, dps), 0 if digits is None else mpmath.mpf(10) ** (-dps - digits))
    return lhs_rhs


def _rtn(p: Point) -> tuple[Any, Any, int]:
    """The point's ``r``, ``theta`` (mpmath, exact) and ``n`` (an int)."""
    return mpmath.mpf(p["r"]), mpmath.mpf(p["theta"]), int(p["n"])


def _hyb_mse_ball(lam: str | None, shared: int | None = None) -> BallFn:
    """Ball of the hybrid's MSE from exact moments (``refs.hybrid_mse``), ``lam``, ``shared`` as :func:`_mse_check`."""
    def ball(p: Point, bits: int) -> Any:
        q, sh = p if lam is None else dict(p, lam=lam), int(p.get("shared", 0)) if shared is None else shared
        return refs.on_balls(lambda ctx: refs.hybrid_mse(ctx, q["nx"], q["ny"], q["theta"], q["m"],
                                                         *_lam_moments_ctx(ctx, q), sh), bits=bits)
    return ball


# ---------------------------------------------------------------- quadrature references
_CACHE: dict[Any, Any] = memo.cache()


def _key(p: Point, *names: str) -> tuple[Any, ...]:
    return tuple(repr(p.get(k)) for k in names)


def _base_moments(p: Point, dps: int, quad: bool = False) -> tuple[list[Any], list[Any]]:
    """Base-estimator moments at ``dps`` digits: exact MGFs (default) or quadrature (``quad``), memoised."""
    key = ("base", _key(p, "nx", "ny", "theta"), dps, quad)
    if key not in _CACHE:
        if len(_CACHE) > 512:
            _CACHE.clear()
        _CACHE[key] = refs.base_moments_with_error(p["nx"], p["ny"], p["theta"], dps, quad)
    return _CACHE[key]


def _lambda_moments(p: Point, dps: int, quad: bool = False) -> tuple[list[Any], list[Any]]:
    """``[E lam, E lam^2]`` and error bars for ``p["lam"]`` (``angular`` or ``gauss``)."""
    if p.get("lam", "angular") == "angular":
        return refs.angular_lambda_moments_with_error(p["theta"], int(p["n"]), dps)
    key = ("gl", _key(p, "nx", "ny", "theta", "n", "sigma", "r"), dps, quad)
    if key not in _CACHE:
        _CACHE[key] = refs.gauss_lambda_moments_with_error(p["nx"], p["ny"], p["theta"], int(p["n"]), p["sigma"],
                                                           p["r"], dps, quad)
    return _CACHE[key]


def _hyb_moments(p: Point, dps: int, quad: bool = False) -> dict[str, Any]:
    """Everything the bipolar references need at ``dps`` digits (``refs.hybrid_moments_with_error``)."""
    base, berr = _base_moments(p, dps, quad)
    lam, lerr = _lambda_moments(p, dps, quad) if "n" in p else ([0, 0], [0, 0])
    return refs.hybrid_moments_with_error(p["nx"], p["ny"], p["theta"], int(p.get("m", 1)), base, berr, lam, lerr, dps)


def _ref_hyb_mse(p: Point, dps: int, shared: int | None = None, quad: bool = False) -> tuple[Any, Any]:
    """``E[(lam S1 + (1 - lam) S2 - SM)^2]`` expanded from moments (lam independent of S1, S2)."""
    sh = int(p.get("shared", 0)) if shared is None else shared
    return refs.hybrid_mse_with_error(_hyb_moments(p, dps, quad), sh, dps)


def _scale(p: Point, dps: int) -> Any:
    return _hyb_moments(p, dps)["scale"]


def _mse_check(printed_ctx: CtxFormula, lam: str | None, shared: int | None = None, name: str = "moment-expansion",
               **kw: Any) -> Check:
    """``printed_ctx`` vs the hybrid's MSE expanded from moments (:func:`_ref_hyb_mse`; on balls :func:`_hyb_mse_ball`),
    ``lam`` angular or gauss (None: the point's), projections shared as the point says (or as ``shared``)."""
    return deterministic_check(name, None, lambda p, dps: _ref_hyb_mse(p if lam is None else dict(p, lam=lam), dps,
                                                                       shared), atol_scale=_scale,
                               printed_ctx=printed_ctx, reference_ball=_hyb_mse_ball(lam, shared), **kw)


# ====================================================================== Lemma 2.2, eq (7)
def printed_lem22_ctx(which: str) -> CtxFormula:
    """Lemma 2.2, eq (7) as printed: ``MSE = f1(|z|) f3(|Delta|)`` (trig) or ``f2(|z|) f3(|z|)`` (++)."""
    def printed(ctx: Any, p: Point) -> Any:
        g = refs.pair_geometry(ctx, p["nx"], p["ny"], p["theta"])
        m = refs.num(ctx, p["m"])
        f3 = lambda u: (1 - ctx.exp(-(u**2))) ** 2  # noqa: E731
        if which == "trig":  # f1(|z|) f3(|Delta|), f1(u) = (2m)^-1 exp(u^2) SM^-2
            return ctx.exp(g["z2"]) * g["sm"] ** -2 / (2 * m) * f3(ctx.sqrt(g["d2"]))
        return ctx.exp(g["z2"]) * g["sm"] ** 2 / (2 * m) * f3(ctx.sqrt(g["z2"]))
    return printed


def _exact_ball(f: Callable[[dict[str, Any]], Any]) -> BallFn:
    """Ball of ``f(h)``, ``h`` the exact moments at the point (``rfcheck.references.hrf.hybrid_moments``)."""
    return lambda p, bits: refs.on_balls(lambda ctx, *a: f(refs.hybrid_moments(ctx, *a)), p["nx"], p["ny"],
                                         p["theta"], int(p["m"]), bits=bits)


def _sim(kind: str, **kw: Any) -> Callable[[Point, int, int], tuple[np.ndarray, float, None]]:
    if kind.startswith("gauss"):
        # Thm F.1 is printed for general x, y (r only enters rho, eq 68): where |x - y| > 2r the weight
        # lambda exceeds 1 (no longer convex, rfcheck.estimators.hrf raises by default) but the hybrid is still
        # the unbiased estimator whose MSE eq (71) states, so the check simulates it there too.
        kw.setdefault("allow_lambda_above_one", True)

    def simulate(p: Point, n_trials: int, seed: int) -> tuple[np.ndarray, float, None]:
        x, y = _vecs(p)
        extra = {k: p[k] for k in ("sigma", "r") if k in p}
        est = hy.simulate(kind, x, y, int(p.get("m", 1)), int(p.get("n", 1)), n_trials, seed=seed, **extra, **kw)
        return est, float(np.exp(x @ y)), None
    return simulate


def _same_draws(reps: int, count: str, sides: Callable[[Point, Any, Any, Any], tuple[Any, Any, float, float]],
                on_draws: Callable[[Any, Point, Any, Any, Any], tuple[Any, Any]], description: str) -> Check:
    """The check ``same-draws``: ``(printed, reference, tol, scale) = sides(p, x, y, w)``, NumPy arrays over ``reps``
    seeded ensembles ``w`` of ``p[count]`` projections, compared at the worst ensemble and certified on all of them
    by ``on_draws(ctx, p, x, y, w_j) -> (printed, reference)`` on balls (the float64 draws exact)."""
    def evaluate(p: Point, budget: Budget, seed: int) -> PointEval:
        rng = np.random.default_rng(seed)
        x, y = _vecs(p)
        w = rng.standard_normal((reps, int(p[count]), 2))
        printed, ref, tol, scale = sides(p, x, y, w)
        k = int(np.argmax(np.abs(printed - ref)))
        ev = compare_deterministic(p, float(printed[k]), float(np.real(ref[k])), 0, rtol=0, atol=tol, scale=scale)
        return certify_on_draws(ev, budget, lambda ctx: [on_draws(ctx, p, x, y, wj) for wj in w], tol=tol)
    return Check("same-draws", 1, evaluate, search=False, description=description)


def _quad_moments_ball(p: Point, bits: int, flip: bool = False) -> dict[str, Any]:
    """``refs.hybrid_moments_quad_ball`` at the point (``flip``: at ``pi - theta``)."""
    return refs.hybrid_moments_quad_ball(p["nx"], p["ny"], p["theta"], int(p.get("m", 1)), bits, flip=flip)


_QUAD_PAIRS = _pair_domain(norm=(0.0, 1.0), extra={"m": Int(1, 64), "n": Int(1, 64)},
                           description="|x|, |y| <= 1: where 1-D quadrature of the oscillating moments is cheap")


def _quad_check(printed_ctx: CtxFormula, ref: Reference, reference_ball: BallFn, domain: Domain | None = None,
                **kw: Any) -> Check:
    """The same comparison with every Gaussian moment by 1-D quadrature (two points, no climb); its points certify
    against ``reference_ball`` (the moments by rigorous quadrature, :func:`_quad_moments_ball`, or exact ones);
    ``kw`` replaces the ``atol_scale``, ``max_points`` or ``description`` given to ``deterministic_check``."""
    kw = {"atol_scale": _scale, "max_points": 2,
          "description": "Gaussian moments by 1-D quadrature (rfcheck.quadrature), not the MGF", **kw}
    c = deterministic_check("quadrature", None, ref, printed_ctx=printed_ctx, reference_ball=reference_ball, **kw)
    c.search = False
    c.domain = domain or _QUAD_PAIRS
    return c


def _moment_checks(printed_ctx: CtxFormula, ref: Callable[[Point, int, bool], Any],
                   reference_ball: BallFn, quad_key: str, **kw: Any) -> list[Check]:
    """The check ``moment-expansion`` (``ref(p, dps, False)``: from the memoised exact moments, certified against
    ``reference_ball``; ``kw``: its ``max_points``, ``description``, ``atol_scale`` (default :func:`_scale`)) and
    its :func:`_quad_check` twin (``ref(p, dps, True)``: the moments by quadrature, certified against the rigorous
    quadrature's ``quad_key``, :func:`_quad_moments_ball`)."""
    kw.setdefault("atol_scale", _scale)
    return [deterministic_check("moment-expansion", None, lambda p, dps: ref(p, dps, False), printed_ctx=printed_ctx,
                                reference_ball=reference_ball, **kw),
            _quad_check(printed_ctx, lambda p, dps: ref(p, dps, True),
                        lambda p, bits: _quad_moments_ball(p, bits)[quad_key])]


def _moment_ref(value: str, err: str) -> Callable[[Point, int, bool], tuple[Any, Any]]:
    """``(h[value], h[err])`` of the memoised moments ``h`` (:func:`_hyb_moments`; by quadrature where ``quad``)."""
    def ref(p: Point, dps: int, quad: bool) -> tuple[Any, Any]:
        h = _hyb_moments(p, dps, quad)
        return h[value], h[err]
    return ref


_MC_PAIRS = _pair_domain(norm=(0.05, 0.5), extra={"m": Int(1, 16), "n": Int(1, 16)},
                         description="|x|, |y| <= 0.5: where the squared error of SM^++ has an estimable "
                                     "fourth moment at the Monte Carlo budget")
#: which, the index of its MSE among the moments (``mse2``: SM^trig), statement
for _which, _k, _stmt in (("trig", "2", "MSE(SM^trig_m(x,y)) = f1(|z|) f3(|Delta|)"),
                          ("pos", "1", "MSE(SM^++_m(x,y)) = f2(|z|) f3(|z|)")):
    P.claim(f"lem2.2.{_which}", source=P.at("Lemma 2.2, eq (7)"),
        statement=f"{_stmt}; Delta = x - y, z = x + y, f1(u) = (2m)^-1 exp(u^2) SM^-2(x,y), "
                  "f2(u) = (2m)^-1 exp(u^2) SM^2(x,y), f3(u) = (1 - exp(-u^2))^2", domain=_pair_domain(extra=_M),
        checks=[*_moment_checks(printed_lem22_ctx(_which), _moment_ref(f"mse{_k}", f"err{_k}"),
                                _exact_ball(lambda h, w=_which: refs.base_estimator_mse(h, w)), f"mse{_k}",
                                description="E(S - SM)^2 expanded over the m features; Gaussian moments from the MGF "
                                            "(Lemma 2.4)"),
                mc_check("monte-carlo", on_mp(printed_lem22_ctx(_which)), _sim(_which), domain=_MC_PAIRS)])


# ==================================================================== eq (2), (3): unbiased; the printed side SM(x, y)
for _which, _eq, _stmt in (
    ("trig", 2, "phi^trig_m(u) = m^-1/2 exp(|u|^2/2)(sin(w_i^T u)..., cos(w_i^T u)...) gives "
                "E[phi^trig_m(x)^T phi^trig_m(y)] = SM(x,y) (eq 6 with eq 2)"),
    ("pos", 3, "phi^++_m(u) = (2m)^-1/2 exp(-|u|^2/2)(exp(w_i^T u)..., exp(-w_i^T u)...) gives "
               "E[phi^++_m(x)^T phi^++_m(y)] = SM(x,y) (eq 6 with eq 3)")):
    _mk = "ES2" if _which == "trig" else "ES1"  # the base estimator's mean among the moments
    P.claim(f"eq{_eq}", source=P.at(f"sec 1, eq ({_eq}) and eq (6)"), statement=_stmt, domain=_pair_domain(extra=_M),
        checks=_moment_checks(lambda ctx, p: _pair_ctx(ctx, p)["sm"], lambda p, dps, quad, w=_which:
                              refs.base_estimator_mean_with_error(_hyb_moments(p, dps, quad), w),
                              _exact_ball(lambda h, k=_mk: h[k]), _mk, max_points=30))


# ============================================================== Lemma 2.4, eq (13)-(18)
def _zvec_ctx(ctx: Any, p: Point) -> list[Any]:
    """``z`` in ``C^d`` from the point, as numbers of ``ctx`` (``d`` an int)."""
    return [refs.num(ctx, p[f"zr{i}"]) + refs.num(ctx, p[f"zi{i}"]) * 1j for i in range(int(p["d"]))]


def printed_lem24_ctx(ctx: Any, p: Point) -> Any:
    """Lemma 2.4, eq (13) as printed: ``E exp(w^T z) = exp(sum_i z_i^2 / 2)``."""
    return ctx.exp(ctx.fsum(*(zi**2 for zi in _zvec_ctx(ctx, p))) / 2)


_Z_DOMAIN = Domain({"d": Int(1, 3, scale="linear"),
                    **{f"z{c}{i}": Real(-2.5, 2.5, extra=(0.0,)) for i in range(3) for c in "ri"}},
                   description="z in C^d, d <= 3, |Re z_i|, |Im z_i| <= 2.5")
P.claim("lem2.4", source=P.at("Lemma 2.4, eq (13); proof appendix A, eq (28)-(29)"),
    statement="Let w ~ N(0, I_d). Then for every z in C^d: E[exp(w^T z)] = exp(sum_i z_i^2 / 2)", domain=_Z_DOMAIN,
    checks=[capped(deterministic_check(
        "quadrature", on_mp(printed_lem24_ctx), lambda p, dps: refs.quad_gaussian_exp_dot(_zvec_ctx(MP, p), dps),
        printed_ball=ball_of(printed_lem24_ctx), max_points=30, reference_ball=lambda p, bits: (
            refs.gaussian_exp_dot_ball(refs.on_balls(lambda ctx: _zvec_ctx(ctx, p), bits=bits), bits)),
        atol_scale=lambda p, dps: mpmath.exp(mpmath.fsum(mpmath.re(zi) ** 2 for zi in _zvec_ctx(MP, p)) / 2)), 4)])


def _amat(p: Point) -> Any:
    """A 2x2 complex matrix from ``a{ij}r, a{ij}i`` plus ``shift`` I (keeps it invertible)."""
    a = mpmath.matrix(2, 2)
    for i in range(2):
        for j in range(2):
            a[i, j] = mpmath.mpc(p[f"a{i}{j}r"], p[f"a{i}{j}i"]) + (p["shift"] if i == j else 0)
    return a


_A_PARAMS = {f"a{i}{j}{c}": Real(-1.0, 1.0, extra=(0.0,)) for i in range(2) for j in range(2) for c in "ri"}
_A_DOMAIN = Domain({**_A_PARAMS, "shift": Choice((0.0, 1.5, 1.5j)),
                    **{k: Real(-1.0, 1.0) for k in ("x0", "x1", "y0", "y1")}},
                   constraint=lambda p: abs(complex(mpmath.det(_amat(p)))) > 0.05,
                   description="2x2 complex A (entries in the unit box, plus 0, 1.5 or 1.5i times I), "
                               "|det A| > 0.05; x, y in [-1, 1]^2")


def _ce_ctx(ctx: Any, p: Point) -> tuple[list[Any], list[Any], Any]:
    """``A x``, ``(A^T)^-1 y`` (the inverse by the adjugate) and ``x.y`` on ``ctx``, ``A`` as :func:`_amat`."""
    a = [[ctx.num(p[f"a{i}{j}r"]) + ctx.num(p[f"a{i}{j}i"]) * 1j + (ctx.num(p["shift"]) if i == j else 0)
          for j in range(2)] for i in range(2)]
    x0, x1, y0, y1 = (ctx.num(p[k]) for k in ("x0", "x1", "y0", "y1"))
    det = a[0][0] * a[1][1] - a[0][1] * a[1][0]
    ax = [a[0][0] * x0 + a[0][1] * x1, a[1][0] * x0 + a[1][1] * x1]
    return ax, [(a[1][1] * y0 - a[1][0] * y1) / det, (a[0][0] * y1 - a[0][1] * y0) / det], x0 * y0 + x1 * y1


def printed_eq14_ctx(ctx: Any, p: Point) -> Any:
    """Eq (14)'s left side as printed: ``exp((Ax)^2/2) exp(((A^T)^-1 y)^2/2) SM(x, y)``, ``z^2 = sum z_i^2``."""
    ax, by, xy = _ce_ctx(ctx, p)
    return ctx.exp(sum(v**2 for v in ax) / 2) * ctx.exp(sum(v**2 for v in by) / 2) * ctx.exp(xy)


def _ce_z_norm(ctx: Any, p: Point) -> tuple[list[Any], Any]:
    """``z = A x + (A^T)^-1 y`` and ``c = exp(-(Ax)^2/2 - ((A^T)^-1 y)^2/2)`` on ``ctx`` (:func:`_ce_ctx`)."""
    ax, by, _ = _ce_ctx(ctx, p)
    return [u + v for u, v in zip(ax, by, strict=True)], ctx.exp(-sum(u**2 for u in ax) / 2 - sum(u**2 for u in by) / 2)


def _ce_quad(quantity: Callable[..., tuple[Any, Any]]) -> Reference:
    """``quantity(A, x, y, dps)`` (``refs.cexp_mgf_quad`` or ``cexp_mean_quad``), ``A`` built at ``dps + 10`` digits."""
    def ref(p: Point, dps: int) -> tuple[Any, Any]:
        with mpmath.workdps(dps + 10):
            a = _amat(p)
        return quantity(a, [p["x0"], p["x1"]], [p["y0"], p["y1"]], dps)
    return ref


def _eq14_ref_ball(p: Point, bits: int) -> Any:
    """Ball of ``E exp(w^T z)``, ``z = A x + (A^T)^-1 y``, by rigorous quadrature (``refs.gaussian_exp_dot_ball``)."""
    return refs.gaussian_exp_dot_ball(refs.on_balls(lambda ctx: _ce_z_norm(ctx, p), bits=bits)[0], bits)


P.claim("eq14", source=P.at("sec 2.3, eq (14)"),
    statement="exp((Ax)^2/2) exp(((A^T)^-1 y)^2/2) SM(x,y) = E[exp(w^T(Ax + (A^T)^-1 y))] for invertible A in "
              "C^{dxd}, with z^2 = sum_i z_i^2", domain=_A_DOMAIN,
    checks=[capped(deterministic_check("quadrature", None, _ce_quad(refs.cexp_mgf_quad), printed_ctx=printed_eq14_ctx,
                                       reference_ball=_eq14_ref_ball, max_points=30,
                                       atol_scale=lambda p, dps: abs(printed_eq14_ctx(MP, mp_point(p))) + 1), 5)])


P.claim("eq15", source=P.at("sec 2.3, eq (15)-(16)"),
    statement="SM(x,y) = E[Psi_A^m(x)^T Psi_{(A^T)^-1}^m(y)], Psi_M^m(u) = m^-1/2 exp(-(Mu)^2/2)(exp(w_1^T M u), ..., "
              "exp(w_m^T M u)), w_i ~ N(0, I_d) (the CE estimator is unbiased)", domain=_A_DOMAIN,
    # the printed side SM(x, y) = exp(x.y), x.y from _ce_ctx
    checks=[capped(deterministic_check("quadrature", None, _ce_quad(refs.cexp_mean_quad), atol_scale=lambda p, dps: 1,
                                       printed_ctx=lambda ctx, p: ctx.exp(_ce_ctx(ctx, p)[2]), max_points=30,
                                       reference_ball=lambda p, bits: refs.exp_dot_mean_ball(*refs.on_balls(
                                           lambda ctx: _ce_z_norm(ctx, p), bits=bits), bits)), 5)])
_EXACT_ZERO_MSE = ("the claim is an exact identity (MSE = 0 at the end points): 'MSE <= 0' holds with equality, and "
                   "the moment expansion on balls cancels to a ball around 0, which can never decide it")
_MAX_LOWER_ONLY = ("a maximum over theta found numerically (grid + golden section, mpmath): a ball at one angle "
                   "encloses only a lower bound of it; an upper enclosure would need a branch-and-bound over theta "
                   "(not implemented)")
_ZERO_VARIANCE_AT_ROUNDED_X = (
    "the variance is 0 exactly only at the exact x = -A^-1 (A^T)^-1 y; the point evaluated is that x rounded to the "
    "working precision, where 'variance <= 0' holds within the tolerance only: balls enclose the variance near 0 but "
    "can never decide it <= 0")


def _real_a(p: Point) -> Any:
    """``A = R + 1.2 I`` or ``i (R + 1.2 I)`` (``p["imag"]``), ``R`` real from ``r00 .. r11``."""
    r = mpmath.matrix([[p["r00"], p["r01"]], [p["r10"], p["r11"]]]) + mpmath.eye(2) * 1.2
    return r * (1j if p["imag"] else 1)


def _eq17_point(p: Point, dps: int) -> tuple[Any, Any, Any]:
    """A with ``A^-1 (A^T)^-1`` real (A = R or i R), y given, x = -A^-1 (A^T)^-1 y (eq 17)."""
    a = _real_a(p)
    y = mpmath.matrix([p["y0"], p["y1"]])
    x = -(a**-1) * (a.T) ** -1 * y
    return a, mpmath.matrix([mpmath.re(x[0]), mpmath.re(x[1])]), y


def _zero_variance(point: Callable[[Point, int], tuple[Any, Any, Any]]) -> Sides:
    """``(Var, 0, err)``: the variance of one CE sample at ``(A, x, y) = point(p, dps)`` by quadrature."""
    def lhs_rhs(p: Point, dps: int) -> tuple[Any, Any, Any]:
        with mpmath.workdps(dps + 10):
            a, x, y = point(p, dps)
        v, e = refs.cexp_variance_quad(a, x, y, dps)
        return v, mpmath.mpf(0), e + mpmath.mpf(10) ** (5 - dps)
    return lhs_rhs


#: real A (or i times a real A) from a perturbation R of 1.2 I, and y
_R_PARAMS = {**{f"r{i}{j}": Real(-1.0, 1.0) for i in range(2) for j in range(2)}, "imag": Choice((False, True)),
             "y0": Real(-1.5, 1.5), "y1": Real(-1.5, 1.5)}
P.claim("eq17", source=P.at("sec 2.3, eq (17)"),
    statement="An estimator based on this mechanism [CE, eq 16] has variance equal to zero if x = -(A^-1)(A^T)^-1 y",
    domain=Domain(_R_PARAMS, description="A = R + 1.2 I or i(R + 1.2 I) with R real (so that x is real), "
                                         "y in [-1.5, 1.5]^2"),
    checks=[capped(inequality_check("quadrature", _zero_variance(_eq17_point), max_points=20,
                             description="variance of one CE sample by quadrature <= 0",
                             not_certified=_ZERO_VARIANCE_AT_ROUNDED_X), 5)])


def _eq18_point(p: Point, dps: int) -> tuple[Any, Any, Any]:
    """A as :func:`_real_a`; ``(x, y)`` the combination ``y0, y1`` of a basis of the real solutions of (18)."""
    a = _real_a(p)
    null = refs.real_null_space(refs.ce_real_system(a), dps)
    v = null[0] * p["y0"] + null[1] * p["y1"]
    return a, mpmath.matrix([v[0], v[1]]), mpmath.matrix([v[2], v[3]])


def _eq18_relax(p: Point, dps: int) -> tuple[Any, Any, Any]:
    """Largest |A x + (A^T)^-1 y| over unit solutions (x, y) of (18): (18) relaxes (17) only if > 0.

    ``lhs = 10^(5 - dps)`` (strictly positive at the working precision), ``rhs`` = that maximum
    (0 when (18) has only the zero solution).
    """
    with mpmath.workdps(dps + 10):
        a = _amat(p) if "a00r" in p else _eq18_point(p, dps)[0]
        return mpmath.mpf(10) ** (5 - dps), refs.ce_real_solutions_max_residual(a, dps), mpmath.mpf(0)


P.claim("eq18", source=P.at("sec 2.3, eq (18)"),
    statement="for the variance to be zero, we only need: Re(A)x + Re((A^T)^-1)y = 0 and Im(A)x + Im((A^T)^-1)y = 0 "
              "(sufficiency)",
    domain=Domain(_R_PARAMS, description="(x, y) solving (18) for A = R + 1.2 I or i(R + 1.2 I): the real solutions"),
    checks=[capped(inequality_check("quadrature", _zero_variance(_eq18_point), max_points=20,
                             description="(x, y) from the null space of the real system (18); variance of one CE "
                                         "sample by quadrature <= 0",
                             not_certified="(x, y) comes from an mpmath SVD null space of the real system (18) (Arb "
                                           "has no enclosure of it); and " + _ZERO_VARIANCE_AT_ROUNDED_X), 5)],
    notes="For real x, y, (18) is the real and imaginary part of A x + (A^T)^-1 y = 0, i.e. (17) itself.")
P.claim("text-eq18-relaxes-eq17", source=P.at("sec 2.3, sentence before eq (18)"),
    statement="In fact we can relax that condition [(17)]: (18) is a weaker condition than (17)",
    domain=Domain(_R_PARAMS, description="A = R + 1.2 I or i(R + 1.2 I), where (18) has a 2-dimensional real "
                                         "solution space"),
    checks=[inequality_check("linear-algebra", _eq18_relax, search=False, max_points=8,
                             description="max |A x + (A^T)^-1 y| over the real solutions of (18) (SVD null space): "
                                         "positive iff some solution of (18) violates (17)",
                             not_certified="the null space of the real system (18) comes from an mpmath SVD (Arb has "
                                           "no enclosure of it), and the refutation is an exact identity (max |A x + "
                                           "(A^T)^-1 y| = 0 on that null space), which balls can bound near 0 but "
                                           "never decide")],
    correction="(18) is equivalent to (17) for real x, y (real and imaginary parts of A x + (A^T)^-1 y = 0); the "
               "variance of one CE sample is |c|^2 (e^{2|Re z|^2} - e^{|Re z|^2 - |Im z|^2}), zero iff z = 0 "
               "(rfcheck.closed_forms.hrf.cexp_log_mse).")


def _ce_on_draws(ctx: Any, which: str, part: str, x: Any, y: Any, w: Any) -> tuple[Any, Any]:
    """(CE estimator with A = i I or I -- its real part for ``part="real"`` --, SM^trig or SM^++) on the draws ``w``."""
    xs, ys = [float(v) for v in x], [float(v) for v in y]
    ce = refs.cexp_scalar_on_draws(ctx, 1j if which == "trig" else 1, xs, ys, w)
    ref = (refs.sm_trig_on_draws if which == "trig" else refs.sm_pos_on_draws)(ctx, xs, ys, w)
    return (ctx.re(ce) if part == "real" else ce), ref


def _ce_same_draws(which: str, part: str = "complex") -> Check:
    """CE with A = i I (``trig``) or I (``pos``) vs SM^trig / SM^++ on the same projections (``part="real"``: Re)."""
    def evaluate(p: Point, budget: Budget, seed: int) -> PointEval:
        rng = np.random.default_rng(seed)
        x, y = _vecs(p)
        w = rng.standard_normal((4, int(p["m"]), 2))
        ce = hy.sm_cexp((1j if which == "trig" else 1) * np.eye(2), x, y, w)
        ref = (hy.sm_trig if which == "trig" else hy.sm_pos)(x, y, w)
        ce = np.real(ce) if part == "real" else ce
        diff = np.abs(ce - ref)
        k = int(np.argmax(diff))
        tol = 1e-12 * (np.max(np.abs(ref)) + 1)
        ev = PointEval(p, complex(ce[k]) if part == "complex" else float(ce[k]), float(ref[k]), tol,
                       float(diff[k] / tol),
                       extra={"draws": "4 ensembles of m projections, same for both estimators"})
        return certify_on_draws(ev, budget, lambda ctx: [_ce_on_draws(ctx, which, part, x, y, w[j])
                                                         for j in range(len(w))])

    what = "the CE estimator" if part == "complex" else "Re of the CE estimator"
    return Check("same-draws" if part == "complex" else "same-draws-real-part", 1, evaluate, search=False,
                 description=f"{what} and SM^{which} on the same projections")


P.claim("text-cexp-special-cases.trig", source=P.at("sec 2.3, after eq (16)"),
    statement="For A = i I_d, CE-estimator becomes trigonometric",
    domain=_pair_domain(norm=(0.1, 2.0), extra={"m": Int(1, 16)}),
    readings=[Reading("complex", [_ce_same_draws("trig")],
                      description="the CE estimator of eq (16) itself, complex-valued, equals SM^trig_m (eq 2) on the "
                                  "same projections"),
              Reading("real part", [_ce_same_draws("trig", "real")], natural=True,
                      description="the real part of the CE estimator equals SM^trig_m (eq 2) on the same projections",
                      reason="the convention of the package and of the trigonometric RFs it names: a complex "
                             "estimator is compared by its real part (hrf.eq90, hrf.eq94, hybrid.simulate; CRT eq 1-2 "
                             "write TrigRF as Re exp(i w^T x) exp(-i w^T y))")],
    correction="Read as the complex estimator it is not SM^trig: with A = i I it is (1/m) e^{(|x|^2+|y|^2)/2} sum_i "
               "exp(i w_i^T (x - y)), whose imaginary part has mean 0 but is not 0; its real part equals SM^trig (eq "
               "2) on the same projections.",
    notes="The sentence does not say whether the complex estimator or its real part is meant; both readings are "
          "checked on the same draws (difference of the real part: ~1e-15).")
P.claim("text-cexp-special-cases.pos", source=P.at("sec 2.3, after eq (16)"),
    statement="for A = I_d, it [the CE estimator] becomes SM^++_m(x,y)",
    domain=_pair_domain(norm=(0.1, 2.0), extra={"m": Int(1, 16)}), checks=[_ce_same_draws("pos")],
    correction="A = I gives the non-antithetic positive estimator (1/m) sum exp(w_i^T(x+y) - |x|^2/2 - |y|^2/2); "
               "SM^++ of eq (3) is its antithetic symmetrisation (average over w and -w).")


# ============================================================= Lemma 2.3, eq (8)-(11), (30)
def _lemma23(p: Point, budget: Budget, seed: int) -> PointEval:
    rng = np.random.default_rng(int(p["seed"]))
    d, m, n, pk = int(p["d"]), int(p["m"]), int(p["n"]), int(p["p"])
    x, y = rng.normal(size=d) * p["scale"], rng.normal(size=d) * p["scale"]
    bases = []
    for k in range(pk + 1):  # SM^++, SM^trig, CE with a random complex A, SM^++, ...
        w = rng.normal(size=(8, m, d))
        if k % 3 < 2:
            bases.append((hy.pos_blocks, hy.trig_blocks)[k % 3](x, y, w))
        else:
            a = rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d)) + 2 * np.eye(d)
            bases.append(hy.cexp_blocks(a, x, y, w))
    lambdas = []
    for _ in range(pk):
        tau = rng.normal(size=(8, n, d))
        f = hy.angular_lambda_features
        lambdas.append((float(rng.uniform(-1, 2)), hy.Blocks((f(x, tau) * math.sqrt(n),), (f(y, tau) * math.sqrt(n),))))
    direct = hy.general_hrf(bases, lambdas)
    p1, p2 = hy.hrf_feature_vectors(bases, lambdas)
    dot = np.sum(p1 * p2, axis=-1)
    scale = float(np.max(sum(np.abs(b.value()) for b in bases)) * (1 + sum(abs(a) + 1 for a, _ in lambdas)))
    k = int(np.argmax(np.abs(dot - direct)))
    return compare_deterministic(p, complex(dot[k]), complex(direct[k]), 0, rtol=0, atol=1e-13 * scale, scale=scale)


P.claim("lem2.3", source=P.at("Lemma 2.3, eq (11); proof appendix B, eq (30)"),
    statement="The HRF estimator SM^hyb_{m,n}(x,y) satisfies SM^hyb_{m,n}(x,y) = Psi_1(x)^T Psi_2(y), "
              "Psi_j = Psi_j^1 * Psi_j^2 * Psi_j^3 * Psi_j^4 as in eq (11)",
    domain=Domain({"seed": Int(0, 10_000, scale="linear"), "d": Int(1, 6), "m": Int(1, 12), "n": Int(1, 12),
                   "p": Int(1, 4, scale="linear"), "scale": Real(0.1, 1.5)},
                  description="random x, y; p + 1 base estimators cycling SM^++, SM^trig and CE with a "
                              "random complex A; p angular lambda-coefficients with a_k in [-1, 2]"),
    checks=[not_certifiable(Check("same-draws", 1, _lemma23, search=False,
                                  description="eq (11) feature vectors vs eq (8) on the same draws (float64 rounding)"),
                            "a float64 identity between two NumPy implementations of rfcheck.estimators.hrf (the "
                            "feature vectors of eq (11) and the direct sum of eq (8), p + 1 base estimators with a "
                            "random complex A) on random draws, within a float64 rounding tolerance: those estimator "
                            "functions have no ball face")])


def _eq20_xy_ctx(ctx: Any, p: Point) -> tuple[Any, Any, Any]:
    """``x = nx e1``, ``M_k y`` and ``c_k`` of eq (20) on ``ctx``."""
    nx, ny, th = _nums(ctx, p, "nx", "ny", "theta")
    return [nx, refs.num(ctx, 0.0)], [refs.num(ctx, p["m1"]) * (ny * ctx.cos(th)),
                                      refs.num(ctx, p["m2"]) * (ny * ctx.sin(th))], refs.num(ctx, p["c"])


def printed_eq20_ctx(ctx: Any, p: Point) -> Any:
    """lambda^k(x, y) = exp(-|x + M_k y|^2/(2 c_k^2)), the target of eq (20)'s features."""
    x, my, c = _eq20_xy_ctx(ctx, p)
    return ctx.exp(-ctx.fsum(*((a + b) ** 2 for a, b in zip(x, my, strict=True))) / (2 * c**2))


P.claim("eq20", source=P.at("sec 2.4, eq (20)"),
    statement="with a_k = 0, rho_1(x) = exp(-|x|^2/(2c_k^2)) phi^SM(x/c_k), rho_2(y) = exp(-|M_k y|^2/(2c_k^2)) "
              "phi^SM(-M_k y/c_k) estimate lambda^k(x,y) = exp(-|x + M_k y|^2/(2c_k^2)) unbiasedly (phi^SM = phi^++)",
    domain=_pair_domain(extra={"m1": Real(-2.0, 2.0), "m2": Real(-2.0, 2.0), "c": Real(0.3, 3.0)},
                        description="d = 2, M_k = diag(m1, m2), c_k in [0.3, 3]"),
    # E[rho_1(x)^T rho_2(y)] with positive features
    checks=[_ctx_check("moment-expansion", printed_eq20_ctx, lambda ctx, p: refs.positive_rho_features_mean(
        ctx, *_eq20_xy_ctx(ctx, p)), scale=lambda p, v: 1, atol_scale=lambda p, dps: 1, max_points=30)])


# ====================================================================== Thm 3.1, eq (22)-(23)
def _lam_moments_ctx(ctx: Any, p: Point) -> tuple[Any, Any]:
    """``E lam, E lam^2`` of the point's lambda (``p["lam"]``: angular, eq (19), or Gaussian, eq (69))."""
    if p.get("lam", "angular") == "angular":
        return refs.angular_lambda_moments(ctx, p["theta"], p["n"])
    return refs.gauss_lambda_moments(ctx, p["nx"], p["ny"], p["theta"], p["n"], p["sigma"], p["r"])


def printed_thm31_ctx(variant: int) -> CtxFormula:
    """Eq (22) / (23) with the exact lambda-moments and base MSEs (the theorem's ingredients)."""
    def printed(ctx: Any, p: Point) -> Any:
        h = _moments_ctx(ctx, p)
        g, l1, l2 = h["g"], h["l1"], h["l2"]
        v = l2 * h["mse1"] + (1 - 2 * l1 + l2) * h["mse2"]
        if variant == 2:
            v -= 2 / refs.num(ctx, p["m"]) * g["sm"] ** 2 * (1 - ctx.cos(g["x2"] - g["y2"])) * (l1 - l2)
        return v
    return printed


_THM31 = _pair_domain(extra={**_MN, "lam": Choice(("angular", "gauss")), "sigma": Real(0.2, 2.0), "r": Real(0.5, 3.0)},
                      description="|x|, |y| <= 3; lambda: angular (eq 19) or cosine-estimated Gaussian (eq 69)")
for _v, _sh, _eq in ((1, 0, 22), (2, 1, 23)):
    P.claim(f"thm3.1.variant{_v}", source=P.at(f"Theorem 3.1, eq ({_eq}); appendix C"),
        statement=("independent projections: MSE(SM^hyb) = E[lam^2] MSE(SM^++) + E[(1-lam)^2] MSE(SM^trig)" if _v == 1
                   else "same projections: MSE(SM^hyb) = E[lam^2] MSE(SM^++) + E[(1-lam)^2] MSE(SM^trig) - "
                        "(2/m) SM^2 (1 - cos(|x|^2 - |y|^2)) E[lam(1-lam)]"), domain=_THM31,
        checks=[_mse_check(printed_thm31_ctx(_v), None, _sh, max_points=40,
                           description="E[(lam S1 + (1-lam) S2 - SM)^2] expanded; base moments by quadrature, "
                                       "lambda moments exact (binomial) or by quadrature"),
                mc_check("monte-carlo", on_mp(printed_thm31_ctx(_v)), _sim("angular-shared" if _sh else "angular"),
                         domain=_pair_domain(norm=(0.05, 0.5), extra={"m": Int(1, 8), "n": Int(1, 8),
                                                                       "lam": Choice(("angular",))},
                                             description="0.05 <= |x|, |y| <= 0.5, angular lambda (x, y != 0)"))])


def _moments_ctx(ctx: Any, p: Point) -> dict[str, Any]:
    """Exact moments (``refs.hybrid_moments``), the lambda's ``l1, l2``, the MSEs ``mse1, mse2``, the geometry ``g``."""
    h = dict(refs.hybrid_moments(ctx, p["nx"], p["ny"], p["theta"], p["m"]))
    h["l1"], h["l2"] = _lam_moments_ctx(ctx, p)
    h["mse1"], h["mse2"] = refs.base_estimator_mse(h, "pos"), refs.base_estimator_mse(h, "trig")
    h["g"] = refs.pair_geometry(ctx, p["nx"], p["ny"], p["theta"])
    return h


def printed_eq36_ctx(ctx: Any, p: Point) -> Any:
    """Eq (36) as printed: ``(1/m^2)[binom(m, 2) SM^2 + m E[YZ]]`` (``E[YZ]`` from the Gaussian MGF)."""
    m = refs.num(ctx, p["m"])
    sm = refs.pair_geometry(ctx, p["nx"], p["ny"], p["theta"])["sm"]
    eyz = refs.base_moments(ctx, p["nx"], p["ny"], p["theta"])[4]
    return (m * (m - 1) / 2 * sm**2 + m * eyz) / m**2


#: E[SM^++_m SM^trig_m] (same projections) from the moments, and its ball
_ES12 = (_moment_ref("ES12", "err12"), _exact_ball(lambda h: h["ES12"]), "ES12")
P.claim("eq36", source=P.at("appendix C, eq (36)"),
    statement="E[SM^++_m SM^trig_m] = (1/m^2)[binom(m,2) SM(x,y)^2 + m E[cosh(w^T(x+y)) cos(w^T(x-y))]] (same "
              "projections)", domain=_pair_domain(extra=_M),
    checks=_moment_checks(printed_eq36_ctx, *_ES12, max_points=24),
    correction="The sum over i != j has m(m-1) terms, not binom(m,2): E = (1 - 1/m) SM^2 + (1/m) E[YZ], which is eq "
               "(38) (claim hrf.eq38 holds).")


def printed_eq37_ctx(ctx: Any, p: Point) -> Any:
    """Eq (37) as printed: ``rho = SM(x,y)^2 cos(|x|^2 - |y|^2)``."""
    g = _pair_ctx(ctx, p)
    return g["sm"] ** 2 * ctx.cos(g["x2"] - g["y2"])


P.claim("eq37", source=P.at("appendix C, eq (37)"), domain=_pair_domain(),
    statement="rho = E[cosh(w^T(x+y)) cos(w^T(x-y))] = E[exp(w^T(x+y)) cos(w^T(x-y))] = SM(x,y)^2 cos(|x|^2 - |y|^2)",
    # E[cosh(w.z) cos(w.Delta)] from the memoised base moments; its ball from the Gaussian MGF
    checks=_moment_checks(printed_eq37_ctx, lambda p, dps, quad: tuple(v[4] for v in _base_moments(p, dps, quad)),
                          lambda p, bits: refs.on_balls(lambda ctx, *a: refs.base_moments(ctx, *a)[4], p["nx"],
                                                        p["ny"], p["theta"], bits=bits), "EYZ", max_points=30,
                          atol_scale=lambda p, dps: _pair_ctx(MP, p)["sm"] ** 2 + 1,
                          description="E[cosh(g1 |z|) cos(alpha g1)] E[cos(beta g2)] from the Gaussian MGF"))


def printed_eq38_ctx(ctx: Any, p: Point) -> Any:
    """Eq (38) as printed: ``(1 - 1/m) SM^2 + (1/m) SM^2 cos(|x|^2 - |y|^2)``."""
    g = _pair_ctx(ctx, p)
    m = refs.num(ctx, p["m"])
    return (1 - 1 / m) * g["sm"] ** 2 + g["sm"] ** 2 * ctx.cos(g["x2"] - g["y2"]) / m


P.claim("eq38", source=P.at("appendix C, eq (38)"),
    statement="E[SM^++_m SM^trig_m] = (1 - 1/m) SM(x,y)^2 + (1/m) SM(x,y)^2 cos(|x|^2 - |y|^2) (same projections)",
    domain=_pair_domain(extra=_M), checks=_moment_checks(printed_eq38_ctx, *_ES12, max_points=24))


def _printed_eq39_ctx(variant: int) -> CtxFormula:
    """Eq (39) as printed: ``Cov = -SM^2 (Var(lam) [+ (1 - cos(|x|^2 - |y|^2)) E[lam(1 - lam)]/m])``."""
    def printed(ctx: Any, p: Point) -> Any:
        h = _moments_ctx(ctx, p)
        g = h["g"]
        var_l = h["l2"] - h["l1"] ** 2
        zz = (1 - ctx.cos(g["x2"] - g["y2"])) * (h["l1"] - h["l2"]) / refs.num(ctx, p["m"])
        return -g["sm"] ** 2 * (var_l + (zz if variant == 2 else 0))
    return printed


def _hyb_check(printed_ctx: CtxFormula, ref: Callable[[dict[str, Any], int], tuple[Any, Any]],
               exact: Callable[[dict[str, Any]], Any], name: str = "moment-expansion", **kw: Any) -> Check:
    """The check ``name``: ``printed_ctx`` vs ``ref(h, dps)`` (value, error bar) of the memoised moments
    ``h`` (:func:`_hyb_moments`), certified against ``exact(h)`` of the exact moments on balls (:func:`_moments_ctx`);
    ``kw`` goes to ``deterministic_check``."""
    return deterministic_check(name, None, lambda p, dps: ref(_hyb_moments(p, dps), dps), atol_scale=_scale,
                               printed_ctx=printed_ctx,
                               reference_ball=ball_of(lambda ctx, p: exact(_moments_ctx(ctx, p))), **kw)


def _cov_check(variant: int, printed_ctx: CtxFormula, **kw: Any) -> Check:
    """:func:`_hyb_check` of ``Cov(lam S1, (1 - lam) S2) = E[lam(1 - lam)] E[S1 S2] - E lam E(1 - lam) E S1 E S2``
    (variant 2: shared projections)."""
    def exact(h: dict[str, Any]) -> Any:
        e12 = h["ES12"] if variant == 2 else h["ES1"] * h["ES2"]
        return (h["l1"] - h["l2"]) * e12 - h["l1"] * (1 - h["l1"]) * h["ES1"] * h["ES2"]

    def ref(h: dict[str, Any], dps: int) -> tuple[Any, Any]:
        with mpmath.workdps(dps + 10):
            e12 = h["ES12"] if variant == 2 else h["ES1"] * h["ES2"]
            t1 = (h["l1"] - h["l2"]) * e12
            t2 = h["l1"] * (1 - h["l1"]) * h["ES1"] * h["ES2"]
            return t1 - t2, h["rel"] * 5 * (abs(t1) + abs(t2))

    return _hyb_check(printed_ctx, ref, exact, **kw)


for _v in (1, 2):
    P.claim(f"eq39.variant{_v}", source=P.at("appendix C, eq (39) (and eq (32))"),
        statement=f"Cov(lam SM^++_m, (1-lam) SM^trig_m) = -SM^2 (Var(lam) {'+ Z' if _v == 2 else ''}), "
                  "Z = (1/m)(1 - cos(|x|^2 - |y|^2)) E[lam(1-lam)]"
                  + (" (variant II: same projections)" if _v == 2 else " (variant I: independent)"), domain=_THM31,
        checks=[_cov_check(_v, _printed_eq39_ctx(_v), max_points=24)])


# ====================================================================== Lemma 3.2, eq (24)
def _binomial_check(which: int, printed_ctx: CtxFormula) -> Check:
    """``printed_ctx`` vs ``E lam`` (``which=1``) or ``E lam^2`` of the angular lambda from the binomial law summed
    over k (not the identity that eq (24) prints): ``refs.angular_lambda_moments_binomial``; on balls the exact
    moments (``refs.angular_lambda_moments``)."""
    def ref(p: Point, dps: int) -> tuple[Any, Any]:
        m1, m2 = refs.angular_lambda_moments_binomial(p["theta"], int(p["n"]), dps)
        with mpmath.workdps(dps + 10):
            return (m1 if which == 1 else m2), mpmath.mpf(10) ** (-dps - 5)

    return deterministic_check("binomial-sum", None, ref, atol_scale=lambda p, dps: 1, printed_ctx=printed_ctx,
                               reference_ball=lambda p, bits: refs.on_balls(
                                   lambda ctx, t, n: refs.angular_lambda_moments(ctx, t, n)[which - 1], p["theta"],
                                   int(p["n"]), bits=bits))


def printed_lem32_ctx(which: int) -> CtxFormula:
    """Lemma 3.2, eq (24) as printed: ``E lam = theta/pi``, ``E lam^2 = (theta/pi)(theta/pi - theta/(n pi) + 1/n)``."""
    def printed(ctx: Any, p: Point) -> Any:
        t, n = _nums(ctx, p, "theta", "n")
        pi = ctx.pi
        return t / pi if which == 1 else t / pi * (t / pi - t / (n * pi) + 1 / n)
    return printed


_LAM_DOMAIN = Domain({"theta": Real(0.0, PI, extra=(PI / 2,)), "n": Int(1, 10_000), "nx": Real(0.1, 3.0),
                      "ny": Real(0.1, 3.0), "m": Int(1, 1)},
                     description="theta in [0, pi], n <= 10000 (exact binomial sums up to n = 400)")


def printed_lem32_var_ctx(ctx: Any, p: Point) -> Any:
    """Var(lam_hat) = E lam^2 - (E lam)^2 from eq (24) as printed (both parts)."""
    return printed_lem32_ctx(2)(ctx, p) - printed_lem32_ctx(1)(ctx, p) ** 2


def printed_eq44_middle_ctx(ctx: Any, p: Point) -> Any:
    """Eq (44), second line, last expression as printed: ``(1/4)(4 q + (1 - 1/n)(1 - 2q)^2)``, ``q = theta/pi``."""
    q, n = refs.num(ctx, p["theta"]) / ctx.pi, refs.num(ctx, p["n"])
    return (4 * q + (1 - 1 / n) * (1 - 2 * q) ** 2) / 4


#: id, source, statement, (which moment, printed side) of the binomial-sum check, further checks, other fields
for _id, _src, _stmt, _bin, _more, _kw in (
    ("lem3.2.mean", "Lemma 3.2, eq (24); appendix D.1",
     "For the angular hybrid estimator (eq 19): E[lam_hat_n(x,y)] = theta_{x,y}/pi", (1, printed_lem32_ctx(1)), [], {}),
    ("lem3.2.second", "Lemma 3.2, eq (24); appendix D.1 eq (42)-(44)",
     "For the angular hybrid estimator (eq 19): E[lam_hat_n^2(x,y)] = (theta/pi)(theta/pi - theta/(n pi) + 1/n)",
     (2, printed_lem32_ctx(2)),
     [mc_check("monte-carlo", on_mp(printed_lem32_var_ctx), lambda p, n_trials, seed: (hy.simulate(
         "angular-lambda", *_vecs(p), 1, int(p["n"]), n_trials, seed=seed), float(p["theta"]) / PI, None),
               domain=Domain({"theta": Real(0.05, PI - 0.05), "n": Int(1, 64), "nx": Real(0.5, 2.0),
                              "ny": Real(0.5, 2.0), "m": Int(1, 1)},
                             description="theta away from 0 and pi (nonzero variance)"))],
     {"notes": "The Monte Carlo check compares Var(lam_hat) = E lam^2 - (E lam)^2 (both printed) with the "
               "sgn-feature estimator of eq (19) simulated by rfcheck.estimators.hrf."}),
    ("eq44.line2", "appendix D.1, eq (44), last expression of the second line",
     "c = E[lam^2] = (1/4)(4 theta/pi + (1 - 1/n)(1 - 2 theta/pi)^2)", (2, printed_eq44_middle_ctx), [],
     {"correction": "The '1 - 2(1 - 2theta/pi) + 1/n' terms were dropped: c = (1/4)(4 theta/pi - (1 - 1/n) + "
                    "(1 - 1/n)(1 - 2 theta/pi)^2) = (theta/pi)(theta/pi - theta/(n pi) + 1/n); the final line of "
                    "eq (44) (Lemma 3.2) holds."})):
    P.claim(_id, source=P.at(_src), statement=_stmt, domain=_LAM_DOMAIN, checks=[_binomial_check(*_bin), *_more], **_kw)


def _eq43_sides(p: Point, x: Any, y: Any, tau: Any) -> tuple[Any, Any, float, float]:
    """Eq (43) as printed and eq (19) (``hy.angular_lambda``) on the projections ``tau``, within 1e-15."""
    phx, phy = np.sign(tau @ x) / math.sqrt(int(p["n"])), np.sign(tau @ y) / math.sqrt(int(p["n"]))
    return 0.5 * (1 - np.sum(phx * phy, axis=-1)), hy.angular_lambda(x, y, tau), 1e-15, 0.0


def _eq43_printed_on_draws(ctx: Any, x: Any, y: Any, tau: Any) -> Any:
    """Eq (43) as printed on given projections ``tau`` (shape ``(n, 2)``, floats exact on balls):
    ``(1/2)(1 - sum_i X_i)``, ``X_i = n^-1 sgn(tau_i^T x) sgn(tau_i^T y)``."""
    n = refs.num(ctx, len(tau))
    dot = lambda t, u: refs.num(ctx, float(t[0])) * refs.num(ctx, float(u[0])) + refs.num(  # noqa: E731
        ctx, float(t[1])) * refs.num(ctx, float(u[1]))
    sgn = lambda v: 1 if v > 0 else -1 if v < 0 else 0  # noqa: E731
    return (1 - sum(sgn(dot(t, x)) * sgn(dot(t, y)) for t in tau) / n) / 2


P.claim("eq43", source=P.at("appendix D.1, eq (42)-(43)"),
    statement="lam_hat(theta) = (1/2)(1 - sum_i X_i), X_i = phi^ang_n(x)[i] phi^ang_n(y)[i], phi^ang_n(z) = n^-1/2 "
              "(sgn(tau_1^T z), ..., sgn(tau_n^T z)) [equals eq (19) for the same tau]",
    domain=_pair_domain(norm=(0.1, 3.0), extra={"n": Int(1, 64)}),
    checks=[_same_draws(16, "n", _eq43_sides, lambda ctx, p, x, y, t: (
        _eq43_printed_on_draws(ctx, x, y, t), refs.angular_lambda_on_draws(ctx, list(x), list(y), t)),
        "eq (43) vs eq (19) on the same tau")])


# ===================================================================== Thm D.1, eq (45)-(47)
def printed_eq45_ctx(shared: int) -> CtxFormula:
    """Thm D.1, eq (45) (independent projections) / (46) (``shared``) as printed."""
    def printed(ctx: Any, p: Point) -> Any:
        g = refs.pair_geometry(ctx, p["nx"], p["ny"], p["theta"])
        m, n = _nums(ctx, p, "m", "n")
        q = refs.num(ctx, p["theta"]) / ctx.pi
        v = (q * (q - q / n + 1 / n) / (2 * m) * ctx.exp(g["z2"]) * g["sm"] ** 2 * (1 - ctx.exp(-g["z2"])) ** 2
             + (1 - q) * (1 - q + q / n) / (2 * m) * ctx.exp(g["z2"]) * g["sm"] ** -2 * (1 - ctx.exp(-g["d2"])) ** 2)
        if shared:
            v -= 2 / m * g["sm"] ** 2 * (1 - ctx.cos(g["x2"] - g["y2"])) * q * (1 - 1 / n - q + q / n)
        return v
    return printed


_ANG = _pair_domain(extra=_MN, description="|x|, |y| <= 3, angular lambda (eq 19)")
for _sh, _eq in ((0, 45), (1, 46)):
    P.claim(f"eq{_eq}", source=P.at(f"Theorem D.1, eq ({_eq})"),
        statement=("MSE(SM^anghyb_{m,n}) = (theta/pi)(theta/pi - theta/(n pi) + 1/n)(2m)^-1 exp(|z|^2) SM^2 "
                   "(1 - exp(-|z|^2))^2 + (1 - theta/pi)(1 - theta/pi + theta/(n pi))(2m)^-1 exp(|z|^2) SM^-2 "
                   "(1 - exp(-|Delta|^2))^2" + (" - (2/m) SM^2 (1 - cos(|x|^2 - |y|^2)) (theta/pi)(1 - 1/n - "
                                                 "theta/pi + theta/(n pi))   [same projections]" if _sh else
                                                 "   [independent projections]")), domain=_ANG,
        checks=[_mse_check(printed_eq45_ctx(_sh), "angular", _sh, max_points=40)])


def printed_eq47_ctx(ctx: Any, p: Point) -> Any:
    """Eq (47) as printed (Thm D.1, ``|x| = |y| = r``)."""
    r, th, m, n = _nums(ctx, p, "r", "theta", "m", "n")
    q = th / ctx.pi
    return (q * (q - q / n + 1 / n) / (2 * m) * ctx.exp(8 * r**2 * ctx.cos(th / 2) ** 2 - 2 * r**2)
            * (1 - ctx.exp(-4 * r**2 * ctx.cos(th / 2) ** 2)) ** 2
            + q * (1 - 1 / n - q + q / n) / (2 * m) * ctx.exp(2 * r**2)
            * (1 - ctx.exp(-4 * r**2 * ctx.sin(th / 2) ** 2)) ** 2)


P.claim("eq47", source=P.at("Theorem D.1, eq (47)"),
    statement="if |x| = |y| = r then regardless of whether the same sets of random projections are applied: MSE = "
              "(theta/pi)(theta/pi - theta/(n pi) + 1/n)(2m)^-1 exp(8r^2 cos^2(theta/2) - 2r^2)(1 - exp(-4r^2 "
              "cos^2(theta/2)))^2 + (theta/pi)(1 - 1/n - theta/pi + theta/(n pi))(2m)^-1 exp(2r^2)(1 - exp(-4r^2 "
              "sin^2(theta/2)))^2", domain=_pair_domain(extra={**_MN, "shared": Choice((0, 1))}, same_length=True),
    checks=[_mse_check(printed_eq47_ctx, "angular", max_points=40), mc_check(
        "monte-carlo", on_mp(printed_eq47_ctx), _sim("angular"),
        domain=_pair_domain(norm=(0.1, 0.5), extra={"m": Int(1, 8), "n": Int(1, 8), "shared": Choice((0,))},
                            same_length=True, description="r <= 0.5, starting at r = 0.5, theta = 2.4, "
                                                          "m = n = 2 where the coefficients differ most",
                            fixed_points=[{"r": 0.5, "theta": 2.4, "m": 2, "n": 2, "shared": 0}]))],
    correction="The second coefficient is E[(1 - lam)^2] = (1 - theta/pi)(1 - theta/pi + theta/(n pi)) (as in eq "
               "(45)), not E[lam(1 - lam)]; rfcheck.closed_forms.hrf.log_mse_angular_hybrid_same_length.")


# ================================================================ Lemma 3.4, eq (25)-(26)
def printed_eq25_ctx(ctx: Any, p: Point) -> Any:
    """Lemma 3.4, eq (25) as printed: ``(2m)^-1/2 exp(2r^2 s)(1 - exp(-4r^2 s))``, ``s = sin^2(theta/2)``."""
    r, th, m = _nums(ctx, p, "r", "theta", "m")
    s = ctx.sin(th / 2) ** 2
    return 1 / ctx.sqrt(2 * m) * ctx.exp(2 * r**2 * s) * (1 - ctx.exp(-4 * r**2 * s))


def _ref_rel_err(which: str, quad: bool = False) -> Reference:
    """``refs.base_rel_error_with_error`` of the memoised moments (quadrature where ``quad``); ``pos`` at pi - theta."""
    def ref(p: Point, dps: int) -> tuple[Any, Any]:
        q = dict(p, nx=p["r"], ny=p["r"])
        if which == "pos":
            with mpmath.workdps(dps + 10):
                q["theta"] = mpmath.pi - mpmath.mpf(p["theta"])
        return refs.base_rel_error_with_error(_hyb_moments(q, dps, quad), which, dps)
    return ref


_SPHERE = _pair_domain(norm=(0.05, 3.0), extra=_M, same_length=True, description="x, y on S(r), r <= 3")
for _which in ("trig", "pos"):
    P.claim(f"lem3.4.{_which}", source=P.at("Lemma 3.4, eq (25)"),
        statement=("eps_{theta,r}(SM^trig_m)" if _which == "trig" else "eps_{pi-theta,r}(SM^++_m)")
        + " = (2m)^-1/2 exp(2r^2 sin^2(theta/2))(1 - exp(-4r^2 sin^2(theta/2)))", domain=_SPHERE,
        checks=[deterministic_check("moment-expansion", None, _ref_rel_err(_which),
                                    atol_scale=lambda p, dps: mpmath.exp(2 * mpmath.mpf(p["r"]) ** 2), max_points=30,
                                    printed_ctx=printed_eq25_ctx, reference_ball=lambda p, bits, w=_which:
                                    refs.base_rel_error_ball(w, p["r"], p["theta"], int(p["m"]), bits)),
                _quad_check(printed_eq25_ctx, _ref_rel_err(_which, quad=True), lambda p, bits, w=_which:
                            refs.base_rel_error_ball(w, p["r"], p["theta"], int(p["m"]), bits, quad=True),
                            _pair_domain(norm=(0.05, 1.0), extra=_M, same_length=True, description="r <= 1"))])


def printed_w_ctx(ctx: Any, p: Point) -> Any:
    """Lemma 3.4, eq (26) as printed: ``sqrt(1/(2m)) W(r)``, ``W(r) = exp(2r^2)(1 - exp(-4r^2))``."""
    r, m = refs.num(ctx, p["r"]), p["m"]
    return ctx.sqrt(refs.num(ctx, 1) / (2 * m)) * ctx.exp(2 * r**2) * (1 - ctx.exp(-4 * r**2))


_SPHERE_R = Domain({"r": Real(0.05, 10.0, extra=(1.0,)), "m": Int(1, 1000)}, description="r in (0, 10]")
for _which in ("trig", "pos"):
    P.claim(f"lem3.4.max-{_which}", source=P.at("Lemma 3.4, eq (26)"),
        statement=f"eps_{{S(r)}}(SM^{_which}_m) = sqrt(1/(2m)) W(r), W(r) = exp(2r^2)(1 - exp(-4r^2))",
        domain=_SPHERE_R,
        checks=[deterministic_check("numerical-maximisation", None, lambda p, dps, w=_which: refs.base_max_rel_error(
                                        w, p["r"], int(p["m"]), dps), printed_ctx=printed_w_ctx,
                                    atol_scale=lambda p, dps: 0, max_points=20,
                                    description="max over theta of eps_{theta,r} (Lemma 3.4's eq (25), tied to "
                                                "quadrature by hrf.lem3.4.*) by grid + golden section",
                                    not_certified="the reference is " + _MAX_LOWER_ONLY + ", and an equality needs "
                                                  "both bounds")])
P.claim("lem3.4.limits", source=P.at("Lemma 3.4, eq (26)"), domain=_SPHERE_R,
    statement="lim_{theta -> pi} eps_{theta,r}(SM^trig_m) = lim_{theta -> 0} eps_{theta,r}(SM^++_m) "
              "= sqrt(1/(2m)) W(r)",
    # refs.base_rel_error_limit at pi (trig) or 0 (++); its ball is the value at that end point
    checks=[deterministic_check(f"limit-{w}", None, lambda p, dps, w=w: refs.base_rel_error_limit(
        w, p["r"], int(p["m"]), dps), printed_ctx=printed_w_ctx, reference_ball=lambda p, bits, w=w:
        refs.base_rel_error_end_ball(w, p["r"], int(p["m"]), bits), atol_scale=lambda p, dps: 0, max_points=20)
            for w in ("trig", "pos")])


def _mse_at_ends(p: Point, dps: int, lam: str, shared: int) -> tuple[list[Any], Any]:
    """MSEs (moment expansion) of the hybrid with ``lam`` at theta = 0 and theta = pi, |x| = |y| = r; summed error."""
    vals, err = [], mpmath.mpf(0)
    for t in (mpmath.mpf(0), mpmath.pi):
        with mpmath.workdps(dps + 10):
            q = dict(p, nx=p["r"], ny=p["r"], theta=+t, lam=lam)
        v, e = _ref_hyb_mse(q, dps, shared)
        vals.append(v)
        err += e
    return vals, err


def _zero_mse_check(lam: str, both: bool, description: str) -> Check:
    """``MSE <= 0`` (:func:`_mse_at_ends`) at theta = 0, and (``both``) the largest of it at theta = 0 and pi, of the
    hybrid with the angular lambda (projections shared as the point says) or the trig-estimated Gaussian one."""
    def lhs_rhs(p: Point, dps: int) -> tuple[Any, Any, Any]:
        vals, err = _mse_at_ends(p, dps, lam, int(p["shared"]) if lam == "angular" else 0)
        return (max(mpmath.mpf(0), *vals) if both else vals[0]), mpmath.mpf(0), err

    return inequality_check("moment-expansion", lhs_rhs, max_points=24, search=False, description=description,
                            not_certified=_EXACT_ZERO_MSE)


P.claim("text-angular-zero-variance", source=P.at("sec 2.4 and after Lemma 3.2"),
    statement="the variance of the angular hybrid estimator is zero for both theta_{x,y} = 0 and theta_{x,y} = pi if "
              "inputs x, y have the same length",
    domain=_pair_domain(norm=(0.05, 3.0), extra={**_MN, "shared": Choice((0, 1))}, same_length=True),
    checks=[_zero_mse_check("angular", True, "MSE at theta = 0 and pi (exactly, in mpmath) <= 0")])
P.claim("text-f-zero-variance", source=P.at("appendix F, after eq (68)"),
    statement="for fixed input lengths, with trigonometric random features estimating lambda the variance of the "
              "normalised bipolar Gaussian hybrid is zero for theta_{x,y} = 0",
    domain=_pair_domain(norm=(0.05, 3.0), extra={**_MN, "sigma": Real(0.2, 2.0)}, same_length=True),
    checks=[_zero_mse_check("gauss", False, "MSE at theta = 0 (exactly) <= 0")])


# ======================================================================= Thm 3.5, eq (27)
def _log_eps_max(p: Point, dps: int) -> tuple[Any, Any]:
    """log eps_{S(r)} of the angular hybrid by numerical maximisation over theta (mpmath)."""
    key = ("epsmax", _key(p, "r", "m", "n"), dps)
    if key not in _CACHE:
        v = cf.log_max_rel_error_angular_hybrid(float(p["r"]), int(p["m"]), int(p["n"]), backend="mpmath", dps=dps)
        _CACHE[key] = (v, abs(v) * mpmath.mpf(10) ** (8 - dps) + mpmath.mpf(10) ** (8 - dps))
    return _CACHE[key]


def printed_eq27_log_ctx(ctx: Any, p: Point) -> Any:
    """log of eq (27)'s bound as printed: ``(1/r) sqrt(1/(2m)) W(r) sqrt(1/pi - 1/(n pi) + 1/(n sqrt(pi)))``."""
    r, m, n = _nums(ctx, p, "r", "m", "n")
    w = ctx.exp(2 * r**2) * (1 - ctx.exp(-4 * r**2))
    return ctx.log(1 / r * ctx.sqrt(1 / (2 * m)) * w
                   * ctx.sqrt(1 / ctx.pi - 1 / (n * ctx.pi) + 1 / (n * ctx.sqrt(ctx.pi))))


def _eps_max_ball(p: Point, bits: int, below: Any) -> Any:
    """``refs.angular_log_max_rel_error_ball`` at the point's ``r, m, n``, its branch-and-bound aimed at ``below``."""
    return refs.angular_log_max_rel_error_ball(p["r"], int(p["m"]), int(p["n"]), bits, below=below)


def _thm35_bound(p: Point, dps: int) -> tuple[Any, Any, Any]:
    v, e = _log_eps_max(p, dps)
    with mpmath.workdps(dps):
        return v, on_mp(printed_eq27_log_ctx)(p), e


_THM35 = Domain({"r": Real(1.0, 10.0, extra=(4.0, 5.0)), "m": Int(1, 1000), "n": Int(1, 10_000)},
                description="r in [1, 10], m <= 1000, n <= 10000 (logs compared: eps up to e^200)")
P.claim("thm3.5.bound", source=P.at("Theorem 3.5, eq (27); proof appendix D.3"),
    statement="for x, y on S(r), r >= 1: eps_{S(r)}(SM^anghyb_{m,n}) <= (1/r) sqrt(1/(2m)) W(r) sqrt(1/pi - 1/(n pi) "
              "+ 1/(n sqrt(pi))), W(r) = exp(2r^2)(1 - exp(-4r^2))", domain=_THM35,
    checks=[inequality_check("numerical-maximisation", _thm35_bound, max_points=40,
                             description="log max_theta eps_{theta,r} (from eq (45), tied to quadrature by "
                                         "hrf.eq45) vs log of the bound; certified by an enclosure of the maximum "
                                         "from exact moments (lower end: eps at the float maximiser; upper end: "
                                         "branch-and-bound on balls)",
                             sides_ball=max_below(_eps_max_ball, printed_eq27_log_ctx))],
    correction="Eq (64) should read max b_r^2 <= exp(2r^2)/(2 n sqrt(pi) r) (theta* <= sqrt(pi)/(2r)), giving "
               "eps_{S(r)} <= W(r)/sqrt(2m) sqrt((1 - 1/n)/(pi r^2) + 1/(n sqrt(pi) r)) "
               "(rfcheck.closed_forms.hrf.log_angular_hybrid_max_rel_error_bound; verified for r in [1, 10]). For "
               "fixed n the max-relative-error grows like exp(2r^2)/sqrt(r), not exp(2r^2)/r.")


# HRF sec 4, Figure 2 (and Figure 5): "The angular hybrid estimator most accurately approximates
# softmax kernel and has smaller max-relative-error than other estimators."  Configuration: 64-dim
# same-length inputs, SM^trig and SM^++ with 128 random features, the hybrid at matched cost
# (m, n) = (16, 8) (rfcheck.plots.hrf.matched_hybrid_config).
FIG2_BASE_M, FIG2_HYBRID = hy.FIG2_M, hy.FIG2_HYBRID


def _fig2_max_rel(p: Point, dps: int) -> tuple[Any, Any, Any]:
    """(log eps_{S(r)} of the hybrid (16, 8), log eps_{S(r)} of the base estimator with 128 features, err)."""
    q = {"r": p["r"], "m": FIG2_HYBRID[0], "n": FIG2_HYBRID[1]}
    hyb, e = _log_eps_max(q, dps)
    with mpmath.workdps(dps + 10):
        base = cf.log_max_rel_error_base.impl(MP, mpmath.mpf(p["r"]), FIG2_BASE_M)
    with mpmath.workdps(dps):
        return +hyb, +base, e


P.claim("text-sec4-max-rel-error", source=P.at("sec 4 (Figure 2; Figure 5 in appendix G)"),
    statement="The angular hybrid estimator (matched cost: m = 16, n = 8) has smaller max-relative-error eps_{S(r)} "
              "than SM^trig and SM^++ (FAVOR+) with 128 random features, for same-length inputs of Figures 2 and 5 (r "
              "= 1.0, 1.25, 1.5)",
    domain=Domain({"r": Real(1.0, 1.5, extra=(1.25,)), "base": Choice(("trig", "pos"))},
                  description="r in [1, 1.5] (Figures 2 and 5); eps_{S(r)} of SM^trig and SM^++ are equal "
                              "(Lemma 3.4 eq (26)), 'base' names the comparison"),
    checks=[inequality_check("numerical-maximisation", _fig2_max_rel, max_points=12,
                             description="log max_theta eps of the hybrid (eq (45), mpmath golden-section) vs "
                                         "log W(r)/sqrt(2 * 128) (eq (26)); certified one-sided: the ball of "
                                         "W(r)/sqrt(2 * 128) is the base's eps at its end point theta = pi "
                                         "(resp. 0), a lower bound of the base maximum unless eq (26) is taken "
                                         "as proven, so only 'smaller' is certified",
                             sides_ball=max_below(lambda p, bits, rhs: refs.angular_log_max_rel_error_ball(
                                 p["r"], FIG2_HYBRID[0], FIG2_HYBRID[1], bits, below=rhs), lambda ctx, p:
                                 cf.log_max_rel_error_base.impl(ctx, refs.num(ctx, p["r"]), FIG2_BASE_M)),
                             rhs_ball_is_lower_bound=True)],
    notes="Figure 2's hybrid configuration is not printed; (16, 8) is the rule of the paper's matched experiments "
          "(rfcheck.plots.hrf.matched_hybrid_config).  Outside the figures' radii the ordering reverses for small r: "
          "below r = 0.5887 the hybrid's max-relative-error is the larger one (by up to 6.07%, the r -> 0 limit 3/(2 "
          "sqrt 2)); reproduce with `python -m rfcheck.attention.maxrel --radii 0.5`.  Restated at attention scale: "
          "hrf.text-sec4-max-rel-error.attention.")


def _limit_ratio(end: str) -> Reference:
    """``refs.angular_rel_error_sqrt_limit`` at the point's ``r, m, n`` (``end``: "0" or "pi")."""
    return lambda p, dps: refs.angular_rel_error_sqrt_limit(end, p["r"], int(p["m"]), int(p["n"]), dps)


def printed_limit_ctx(ctx: Any, p: Point) -> Any:
    """Thm 3.5's limits as printed: ``sqrt(1/(2 pi m n)) W(r)``, ``W(r) = exp(2r^2)(1 - exp(-4r^2))``."""
    r, m, n = _nums(ctx, p, "r", "m", "n")
    return ctx.sqrt(1 / (2 * ctx.pi * m * n)) * ctx.exp(2 * r**2) * (1 - ctx.exp(-4 * r**2))


def _imaginary_ball(p: Point, bits: int) -> Any:
    """An enclosure of ``lim eps/sqrt(theta - pi)`` read literally: ``eps/sqrt(theta - pi) = -i eps/sqrt(pi - theta)``
    with ``eps/sqrt(pi - theta)`` real for theta < pi, so the limit (where it exists) is purely imaginary: real part
    exactly 0, imaginary part any real number (no bound on it is needed to separate it from a real printed value)."""
    return acb(arb(0), arb(0, math.inf))


def _printed_limit_pi_ratio(p: Point, dps: int) -> tuple[Any, Any]:
    """The printed ratio eps/sqrt(theta - pi) near theta = pi: sqrt of a negative number.

    Not written against a context: its ingredient is a numerical limit (the ratio at two angles near pi,
    :func:`rfcheck.references.hrf.angular_rel_error_sqrt_limit`), not a formula; it is enclosed by
    :func:`_imaginary_ball` (real part exactly 0), which needs no bound of the limit itself."""
    v, e = _limit_ratio("pi")(p, dps)
    with mpmath.workdps(dps):
        return v / mpmath.sqrt(-1), e


_LIM = Domain({"r": Real(1.0, 10.0), "m": Int(1, 1000), "n": Int(1, 10_000)}, description="r in [1, 10]")
P.claim("thm3.5.limit0", source=P.at("Theorem 3.5 ('Furthermore')"),
    statement="lim_{theta -> 0} eps_{theta,r}(SM^anghyb_{m,n}) / sqrt(theta) = sqrt(1/(2 pi m n)) W(r)", domain=_LIM,
    checks=[deterministic_check("limit", None, _limit_ratio("0"), atol_scale=lambda p, dps: 0,
                                printed_ctx=printed_limit_ctx, max_points=20,
                                description="ratio at theta = 10^-(dps+5) and 10^-(dps+6)",
                                not_certified="the reference is a numerical limit of a 0/0 ratio: eps_{theta,r}/"
                                              "sqrt(theta) at theta = 10^-(dps+5) and 10^-(dps+6), its truncation "
                                              "error estimated from their difference, not proven; a ball of the limit "
                                              "would need eps_{0,r} = 0 exactly (an identity, which balls only bound "
                                              "near 0) and d(eps^2)/dtheta at 0")])
P.claim("thm3.5.limit-pi", source=P.at("Theorem 3.5 ('Furthermore')"),
    statement="lim_{theta -> pi} eps_{theta,r}(SM^anghyb_{m,n}) / sqrt(theta - pi) = sqrt(1/(2 pi m n)) W(r)",
    domain=_LIM,
    readings=[
        Reading("literal sqrt(theta - pi)",
                [deterministic_check("limit", None, _printed_limit_pi_ratio, atol_scale=lambda p, dps: 0,
                                     max_points=10, description="theta < pi: sqrt(theta - pi) = i sqrt(pi - theta)",
                                     printed_ctx=printed_limit_ctx, reference_ball=_imaginary_ball)],
                description="sqrt(theta - pi) as printed: for theta < pi (theta is an angle in [0, pi]) the principal "
                            "root of a negative number, i sqrt(pi - theta)"),
        Reading("sqrt(pi - theta)",
                [deterministic_check("limit-pi-minus-theta", None, _limit_ratio("pi"), printed_ctx=printed_limit_ctx,
                                     atol_scale=lambda p, dps: 0, max_points=20,
                                     description="ratio eps/sqrt(pi - theta) at pi - theta = 10^-(dps+5), "
                                                 "10^-(dps+6)")],
                description="sqrt(|theta - pi|) = sqrt(pi - theta): the distance to pi, as sqrt(theta) is the "
                            "distance to 0 in the limit at 0", natural=True,
                reason="theta is an angle in [0, pi], so theta -> pi from below, where theta - pi < 0; the limit at 0 "
                       "beside it divides by sqrt(theta), the square root of the distance")],
    correction="With sqrt(pi - theta) in place of sqrt(theta - pi) (theta <= pi) the limit holds; as printed the "
               "denominator is imaginary for theta < pi.",
    notes="Until 2026-11-26 the reading sqrt(pi - theta) was registered as its own claim, "
          "hrf.thm3.5.limit-pi-corrected; it is now a reading of this claim.")


# ------------------------------------------------------------ appendix D.3, eq (48)-(66)
def _a_r_ctx(ctx: Any, r: Any, t: Any, n: Any) -> Any:
    """Eq (50) as printed."""
    r, t, n = refs.num(ctx, r), refs.num(ctx, t), refs.num(ctx, n)
    q = t / ctx.pi
    return q * (q - q / n + 1 / n) * ctx.exp(2 * r**2 * ctx.cos(t)) * (
        1 - ctx.exp(-4 * r**2 * ctx.cos(t / 2) ** 2)) ** 2


def _eq48_printed(p: Point) -> Any:
    r, m, n = mpmath.mpf(p["r"]), int(p["m"]), int(p["n"])
    mx, _ = refs.mp_max_on_interval(lambda t: _a_r_ctx(MP, r, t, n) + _a_r_ctx(MP, r, mpmath.pi - t, n), mpmath.mp.dps)
    return mpmath.log(mpmath.exp(r**2) / mpmath.sqrt(2 * m) * mpmath.sqrt(mx))


_D3 = Domain({"r": Real(1.0, 10.0, extra=(2.0, 5.0)), "m": Int(1, 1000), "n": Int(1, 10_000)},
             description="r in [1, 10]")
P.claim("eq48", source=P.at("appendix D.3, eq (48)-(50)"),
    statement="eps_{S(r)}(SM^anghyb_{m,n}) = exp(r^2)/sqrt(2m) sqrt(max_theta h_r(theta)), h_r(theta) = a_r(theta) + "
              "a_r(pi - theta), a_r = (theta/pi)(theta/pi - theta/(n pi) + 1/n) exp(2r^2 cos theta)(1 - exp(-4r^2 "
              "cos^2(theta/2)))^2 (logs compared)", domain=_D3,
    checks=[deterministic_check("numerical-maximisation", _eq48_printed, _log_eps_max,
                                atol_scale=lambda p, dps: 1, max_points=12,
                                not_certified="both sides are maxima over theta: each is " + _MAX_LOWER_ONLY)])


def _eq51(p: Point, dps: int) -> tuple[Any, Any, Any]:
    v, e = _log_eps_max(p, dps)
    with mpmath.workdps(dps + 10):
        r, m, n = mpmath.mpf(p["r"]), int(p["m"]), int(p["n"])
        mx, e2 = refs.mp_max_on_interval(lambda t: _a_r_ctx(MP, r, t, n), dps)
        return v, mpmath.log(mpmath.exp(r**2) / mpmath.sqrt(m) * mpmath.sqrt(mx)), e + e2 / mx


def _eq51_rhs_ball(p: Point, bits: int) -> Any:
    """Ball of eq (51)'s right side ``log(exp(r^2)/sqrt(m) sqrt(max_theta a_r(theta)))``: the maximum of the
    printed ``a_r`` enclosed by branch-and-bound (``refs.interval_max_ball``), the lower end at its float maximiser."""
    r, m, n = (refs.num(ARB, p[k]) for k in ("r", "m", "n"))
    rf, nf = float(p["r"]), int(p["n"])
    guess = refs.grid_argmax(lambda t: float(_a_r_ctx(MP, rf, t, nf)), 0.0, math.pi, npts=401)
    lo, hi = refs.max_bounds_0_pi(lambda t: _a_r_ctx(ARB, r, t, n), bits, guess=guess, max_evals=60)
    with workprec(bits):
        side = [(ARB.log(ARB.exp(r**2) / ARB.sqrt(m) * ARB.sqrt(Ball(v)))).v for v in (lo, hi)]
        return side[0].union(side[1])  # the hull after the log


P.claim("eq51", source=P.at("appendix D.3, eq (51)"),
    statement="eps_{S(r)}(SM^anghyb_{m,n}) <= exp(r^2)/sqrt(m) sqrt(max_theta a_r(theta))", domain=_D3,
    checks=[inequality_check("numerical-maximisation", _eq51, max_points=12,
                             sides_ball=max_below(_eps_max_ball, None, _eq51_rhs_ball))])


def _b_ctx(ctx: Any, i: int, r: Any, t: Any, n: Any) -> Any:
    """Eq (54)-(55) as printed."""
    r, t, n = refs.num(ctx, r), refs.num(ctx, t), refs.num(ctx, n)
    q = t / ctx.pi
    if i == 1:
        return (1 - 1 / n) * q**2 * ctx.exp(2 * r**2 * ctx.cos(t))
    return q / n * ctx.exp(2 * r**2 * ctx.cos(t))


def _deriv_check(i: int) -> Check:
    def printed(ctx: Any, p: Point) -> Any:
        """Eq (57) (``i = 1``) / eq (58) (``i = 2``) as printed."""
        r, t, n = p["r"], p["theta"], p["n"]
        e = ctx.exp(2 * r**2 * ctx.cos(t))
        if i == 1:
            return e * (1 - ctx.num(1) / n) * 2 * t / ctx.pi**2 * (1 - r**2 * t * ctx.sin(t))
        return e / (n * ctx.pi) * (1 - 2 * r**2 * t * ctx.sin(t))

    def ref(p: Point, dps: int) -> tuple[Any, Any]:
        r, t, n = _rtn(p)
        with mpmath.workdps(dps + 20):
            v = mpmath.diff(lambda s: _b_ctx(MP, i, r, s, n), t)
        return v, abs(v) * mpmath.mpf(10) ** (-dps - 5)

    def ref_ball(p: Point, bits: int) -> Any:
        """The derivative of eq (54)/(55) on Arb power series (no finite differences)."""
        r, n = arb(float(p["r"])), arb(int(p["n"]))
        return refs.derivative_ball(lambda ctx, u: _b_ctx(ctx, i, r, u, n), float(p["theta"]), bits)

    return deterministic_check("numerical-differentiation", None, ref, printed_ctx=printed, reference_ball=ref_ball,
                               atol_scale=lambda p, dps: mpmath.exp(2 * mpmath.mpf(p["r"]) ** 2), max_points=30)


for _i, _eq in ((1, 57), (2, 58)):
    P.claim(f"eq{_eq}", source=P.at(f"appendix D.3, eq ({_eq})"),
        statement=("d b_r^1/d theta = exp(2r^2 cos theta)(1 - 1/n)(2 theta/pi^2)(1 - r^2 theta sin theta)" if _i == 1
                   else "d b_r^2/d theta = exp(2r^2 cos theta)(1/(n pi))(1 - 2r^2 theta sin theta)"),
        domain=Domain({"r": Real(0.1, 5.0), "theta": Real(0.0, PI), "n": Int(1, 1000)}), checks=[_deriv_check(_i)])


def _eq52_ctx(ctx: Any, r: Any, t: Any, n: Any) -> tuple[Any, Any]:
    """The two printed sides of eq (52): ``a_r(theta)`` and ``(b_r^1 + b_r^2)(1 - exp(-4r^2))^2``."""
    return _a_r_ctx(ctx, r, t, n), (_b_ctx(ctx, 1, r, t, n) + _b_ctx(ctx, 2, r, t, n)) * (1 - ctx.exp(-4 * r**2)) ** 2


def _eq52_balls(p: Point, bits: int) -> Any:
    """Balls of :func:`_eq52_ctx`, at ``6 r^2`` extra bits: the sides differ by a relative
    ``~exp(-4r^2 cos^2(theta/2))``, which must stay resolved."""
    return refs.on_balls(_eq52_ctx, p["r"], p["theta"], int(p["n"]), bits=bits + int(6 * float(p["r"]) ** 2))


P.claim("eq52", source=P.at("appendix D.3, eq (52)-(55)"),
    statement="a_r(theta) <= b_r(theta)(1 - exp(-4r^2))^2, b_r = b_r^1 + b_r^2 (eq 54-55)",
    domain=Domain({"r": Real(0.1, 10.0), "theta": Real(0.0, PI), "n": Int(1, 10_000)}),
    checks=[inequality_check("mpmath", _sides(lambda p, dps: _eq52_ctx(MP, *_rtn(p)), None), sides_ball=_eq52_balls)])


def _eq61_balls(p: Point, bits: int) -> tuple[Any, Any]:
    """Balls of ``theta*`` (``refs.theta_sin_theta_root_ball``) and of the printed ``sqrt(pi/2)/r``."""
    try:
        t = refs.theta_sin_theta_root_ball(p["r"], bits)
    except ValueError as exc:
        return f"no enclosure of theta* ({exc})"
    return t, refs.on_balls(lambda ctx, r: ctx.sqrt(ctx.pi / 2) / r, p["r"], bits=bits)


P.claim("eq61", source=P.at("appendix D.3, eq (59)-(61)"),
    statement="theta* (theta* sin theta* = 1/r^2, the local maximiser of b_r^1) <= sqrt(pi/2)/r, r >= 1",
    domain=Domain({"r": Real(1.0, 10.0)}),
    checks=[inequality_check("root-finding", _sides(lambda p, dps: (
        refs.theta_sin_theta_root(mpmath.mpf(p["r"])), mpmath.sqrt(mpmath.pi / 2) / mpmath.mpf(p["r"])), 0),
        sides_ball=_eq61_balls)])


def _max_b_check(i: int, log_bound: CtxFormula) -> Check:
    """``log max_theta b_r^i <= log_bound``: the maximum by ``refs.mp_max_on_interval`` in mpmath, certified by
    :func:`_max_b_ball` aimed at the bound's ball."""
    def lhs_rhs(p: Point, dps: int) -> tuple[Any, Any, Any]:
        with mpmath.workdps(dps + 10):
            r, n = mpmath.mpf(p["r"]), int(p["n"])
            def f(t: Any, r: Any = r, n: int = n) -> Any:
                return mpmath.log(_b_ctx(MP, i, r, t, n)) if t > 0 else mpmath.mpf("-inf")

            mx, e = refs.mp_max_on_interval(f, dps, 0.0)
            return mx, log_bound(MP, mp_point(p)), e

    return inequality_check("numerical-maximisation", lhs_rhs, max_points=16,
                            sides_ball=max_below(_max_b_ball(i), log_bound))


def _eq63_rhs_ctx(ctx: Any, p: Point) -> Any:
    """log of eq (63)'s bound as printed: ``(1 - 1/n)(1/(2 pi r^2)) exp(2r^2)``."""
    r, n = _nums(ctx, p, "r", "n")
    return ctx.log((1 - 1 / n) / (2 * ctx.pi * r**2) * ctx.exp(2 * r**2))


def _eq64_rhs_ctx(ctx: Any, p: Point) -> Any:
    """log of eq (64)'s bound as printed: ``exp(2r^2)/(2 n sqrt(pi) r^2)``."""
    r, n = _nums(ctx, p, "r", "n")
    return ctx.log(ctx.exp(2 * r**2) / (2 * n * ctx.sqrt(ctx.pi) * r**2))


def _max_b_ball(i: int) -> Callable[[Point, int, Any], Any]:
    """Ball of ``log max_theta b_r^i(theta)`` by branch-and-bound on balls (``refs.interval_max_ball``), trying to
    prove it below ``rhs``; the lower end at the float maximiser."""
    def ball(p: Point, bits: int, rhs: Any) -> Any:
        r, n = refs.num(ARB, p["r"]), refs.num(ARB, p["n"])
        rf, nf = float(p["r"]), int(p["n"])
        guess = refs.grid_argmax(lambda u: ((math.log(1 - 1 / nf) + 2 * math.log(u / math.pi) if i == 1 else
                                             math.log(u / (math.pi * nf))) + 2 * rf * rf * math.cos(u)) if u > 0 and
                                 (i == 2 or nf > 1) else -math.inf, 0.0, math.pi, npts=401)
        with workprec(bits):
            target = rhs.exp()
        lo, hi = refs.max_bounds_0_pi(lambda t: _b_ctx(ARB, i, r, t, n), bits, below=target, guess=guess,
                                  max_evals=1500)
        with workprec(bits):
            return lo.log().union(hi.log())  # the hull after the log
    return ball


#: eq, source, i of b_r^i, the printed bound, statement, domain, other fields
for _eq, _src, _i, _bound, _stmt, _dom, _kw in (
    (63, "appendix D.3, eq (62)-(63)", 1, _eq63_rhs_ctx,
     "max_{theta in [0, pi]} b_r^1(theta) <= (1 - 1/n) (1/(2 pi r^2)) exp(2r^2), r >= 1 (logs compared)",
     Domain({"r": Real(1.0, 10.0), "n": Int(2, 10_000)}, description="r in [1, 10], n >= 2 (b^1 = 0 for n = 1)"), {}),
    (64, "appendix D.3, eq (64)", 2, _eq64_rhs_ctx,
     "max_{theta in [0, pi]} b_r^2(theta) <= (1/(2 n sqrt(pi) r^2)) exp(2r^2), r >= 1 (logs compared)",
     Domain({"r": Real(1.0, 10.0, extra=(3.0,)), "n": Int(1, 10_000)}),
     {"correction": "theta* sin theta* = 1/(2r^2) gives theta* <= sqrt(pi)/(2r) and max b_r^2 <= exp(2r^2)/(2 n "
                    "sqrt(pi) r) (r, not r^2); the printed bound fails for r > ~2.1."})):
    P.claim(f"eq{_eq}", source=P.at(_src), statement=_stmt, domain=_dom, checks=[_max_b_check(_i, _bound)], **_kw)


def _eq65_rhs_ctx(ctx: Any, p: Point) -> Any:
    """log of eq (65)'s bound as printed: ``exp(2r^2)/sqrt(2mr)(1 - exp(-4r^2)) sqrt(1/pi - 1/(n pi) +
    1/(n sqrt(pi)))``."""
    r, m, n = _nums(ctx, p, "r", "m", "n")
    return ctx.log(ctx.exp(2 * r**2) / ctx.sqrt(2 * m * r) * (1 - ctx.exp(-4 * r**2)) * ctx.sqrt(
        1 / ctx.pi - 1 / (n * ctx.pi) + 1 / (n * ctx.sqrt(ctx.pi))))


def _eq65(p: Point, dps: int) -> tuple[Any, Any, Any]:
    v, e = _log_eps_max(p, dps)
    with mpmath.workdps(dps + 10):
        return v, _eq65_rhs_ctx(MP, mp_point(p)), e


P.claim("eq65", source=P.at("appendix D.3, eq (65)"),
    statement="eps_{S(r)}(SM^anghyb_{m,n}) <= exp(2r^2)/sqrt(2mr) (1 - exp(-4r^2)) sqrt(1/pi - 1/(n pi) + 1/(n "
              "sqrt(pi)))", domain=_THM35,
    checks=[inequality_check("numerical-maximisation", _eq65, max_points=24,
                             sides_ball=max_below(_eps_max_ball, _eq65_rhs_ctx))],
    notes="As printed, r stands under the square root, sqrt(2mr), unlike eq (27) ((1/r) sqrt(1/(2m))), which eq (65) "
          "is said to complete. Registered as printed; before 2026-11-26 rfcheck registered eq (27)'s 1/(sqrt(2m) r) "
          "here (a misreading found by an independent audit), and that form fails for r > ~4 (claim "
          "hrf.thm3.5.bound). The printed eq (65) is weaker by sqrt(r): the corrected bound of hrf.thm3.5.bound, "
          "W(r)/sqrt(2m) sqrt((1 - 1/n)/(pi r^2) + 1/(n sqrt(pi) r)), is at most it for r >= 1.")


def _eq66_printed_ctx(ctx: Any, p: Point) -> Any:
    """log of eq (66) as printed: ``exp(2r^2)/sqrt(2m) sqrt(h_r(theta))``, ``h_r`` of eq (49)-(50)."""
    r, m, n, t = _nums(ctx, p, "r", "m", "n", "theta")
    h = _a_r_ctx(ctx, r, t, n) + _a_r_ctx(ctx, r, ctx.pi - t, n)
    return ctx.log(ctx.exp(2 * r**2) / ctx.sqrt(2 * m) * ctx.sqrt(h))


P.claim("eq66", source=P.at("appendix D.3, eq (66)"),
    statement="eps_{S(r)}(SM^anghyb_{m,n}) = exp(2r^2)/sqrt(2m) sqrt(h_r(theta)) (logs compared)",
    domain=Domain({"r": Real(1.0, 5.0), "m": Int(1, 100), "n": Int(1, 100), "theta": Real(0.01, PI - 0.01)}),
    checks=[deterministic_check("numerical-maximisation", None, _log_eps_max, atol_scale=lambda p, dps: 1,
                                max_points=12, printed_ctx=_eq66_printed_ctx,
                                # aimed at the printed value: one above the maximum or below it is disjoint
                                reference_ball=lambda p, bits: _eps_max_ball(p, bits, eval_on_balls(
                                    _eq66_printed_ctx, p, bits)))],
    correction="eps_{theta,r} = exp(r^2)/sqrt(2m) sqrt(h_r(theta)) (eq 48 without the max); "
               "rfcheck.closed_forms.hrf.log_rel_error_angular_hybrid.")


# ======================================================================== appendix F
#: why a Monte Carlo check's decided points are not certified
_MC_WHY = ("the reference is a Monte Carlo estimate (a z-test on simulated estimators), a random quantity with no "
           "enclosure; the deterministic checks of the claim carry the certification")


def printed_eq72_ctx(eq: int) -> CtxFormula:
    """Eq (72) as printed: ``E[lam^2] = rho^-2 (1 - exp(-sigma^2|Delta|^2/2))^2 + (2 rho^2 n)^-1
    (1 - exp(-sigma^2|Delta|^2))^2``; ``eq=73``: eq (73), ``E[(1 - lam)^2]``, the same with ``(1 - rho)`` in
    place of the first ``1``."""
    def printed(ctx: Any, p: Point) -> Any:
        d2 = refs.pair_geometry(ctx, p["nx"], p["ny"], p["theta"])["d2"]
        s, r, n = _nums(ctx, p, "sigma", "r", "n")
        rho = 1 - ctx.exp(-2 * s**2 * r**2)
        return (1 / rho**2 * ((1 if eq == 72 else (1 - rho)) - ctx.exp(-s**2 / 2 * d2)) ** 2
                + 1 / (2 * rho**2 * n) * (1 - ctx.exp(-s**2 * d2)) ** 2)
    return printed


def _ref_gl(which: int, quad: bool = False) -> Reference:
    """``E lam`` (``which=1``), ``E lam^2`` (72) or ``E (1 - lam)^2`` (73) of eq (69) from the memoised moments."""
    def ref(p: Point, dps: int) -> tuple[Any, Any]:
        (m1, m2), (e1, e2) = _lambda_moments(dict(p, lam="gauss"), dps, quad)
        if which == 1:
            return m1, e1
        with mpmath.workdps(dps + 10):
            return (m2 if which == 72 else 1 - 2 * m1 + m2), abs(e1) * 2 + abs(e2)
    return ref


def _gl_ball(which: int) -> BallFn:
    """Ball of ``E lam`` (``which=1``), ``E lam^2`` (72) or ``E (1 - lam)^2`` (73) of eq (69) from the exact moments."""
    def f(ctx: Any, *a: Any) -> Any:
        m1, m2 = refs.gauss_lambda_moments(ctx, *a)
        return m1 if which == 1 else m2 if which == 72 else 1 - 2 * m1 + m2

    return lambda p, bits: refs.on_balls(f, p["nx"], p["ny"], p["theta"], int(p["n"]), p["sigma"], p["r"], bits=bits)


_GAUSS = _pair_domain(extra={**_MN, "sigma": Real(0.2, 2.0), "r": Real(0.3, 3.0)},
                      description="|x|, |y| <= 3, sigma in [0.2, 2], rho from r in [0.3, 3]")
for _eq, _prc, _stmt in (
        (72, printed_eq72_ctx(72), "E[lam_hat^2] = rho^-2 (1 - exp(-sigma^2|Delta|^2/2))^2 + "
                                             "(2 rho^2 n)^-1 (1 - exp(-sigma^2 |Delta|^2))^2"),
        (73, printed_eq72_ctx(73), "E[(1 - lam_hat)^2] = rho^-2 ((1 - rho) - exp(-sigma^2|Delta|^2/2))^2 + "
                                             "(2 rho^2 n)^-1 (1 - exp(-sigma^2 |Delta|^2))^2")):
    P.claim(f"eq{_eq}", source=P.at(f"Theorem F.1, eq ({_eq}); proof eq (74)-(75)"),
        statement=f"{_stmt} for lam_hat of eq (69), rho = 1 - exp(-2 sigma^2 r^2) (eq 68)", domain=_GAUSS,
        checks=[deterministic_check("moment-expansion", None, _ref_gl(_eq),
                                    atol_scale=lambda p, dps, pr=_prc: on_mp(pr)(p) + 1, max_points=24,
                                    printed_ctx=_prc, reference_ball=_gl_ball(_eq)),
                _quad_check(_prc, _ref_gl(_eq, quad=True), _gl_ball(_eq), _pair_domain(
                    norm=(0.0, 1.0), extra={**_MN, "sigma": Real(0.2, 1.5), "r": Real(0.3, 3.0)},
                    description="|x|, |y| <= 1, sigma <= 1.5"))])


def printed_thmf1_ctx(ctx: Any, p: Point) -> Any:
    """Thm F.1, eq (71) as printed: ``E[lam^2] MSE(SM^++_m) + E[(1 - lam)^2] MSE(SM^trig_m)`` with (72)-(73)
    and Lemma 2.2's MSEs."""
    m = refs.num(ctx, p["m"])
    g = refs.pair_geometry(ctx, p["nx"], p["ny"], p["theta"])
    mse_pos = ctx.exp(g["z2"]) * g["sm"] ** 2 / (2 * m) * (1 - ctx.exp(-g["z2"])) ** 2
    mse_trig = ctx.exp(g["z2"]) * g["sm"] ** -2 / (2 * m) * (1 - ctx.exp(-g["d2"])) ** 2
    return printed_eq72_ctx(72)(ctx, p) * mse_pos + printed_eq72_ctx(73)(ctx, p) * mse_trig


P.claim("thmf.1", source=P.at("Theorem F.1, eq (71)-(73)"),
    statement="MSE(SM^gausshyb_{m,n}(x,y)) = E[lam^2] MSE(SM^++_m) + E[(1-lam)^2] MSE(SM^trig_m) with (72)-(73) and "
              "Lemma 2.2 (independent projections)", domain=_GAUSS,
    checks=[_mse_check(printed_thmf1_ctx, "gauss", 0, max_points=30), not_certifiable(mc_check(
        "monte-carlo", on_mp(printed_thmf1_ctx), _sim("gauss"), domain=_pair_domain(
            norm=(0.0, 0.5), extra={"m": Int(1, 8), "n": Int(1, 8), "sigma": Real(0.3, 1.5), "r": Real(0.3, 1.0)},
            description="|x|, |y| <= 0.5")), _MC_WHY)])
_THMF1_SAME = _mse_check(printed_thmf1_ctx, "gauss", 1, "moment-expansion-same-length")


def _thmf1_same_length(p: Point, budget: Budget, seed: int) -> PointEval:
    """The 'furthermore' at |x| = |y| = r; a point with |x| != |y| or |x| != r (e.g. a counterexample of the
    general reading given with --at) is not a point of this reading: undecided."""
    if not (p["nx"] == p["ny"] == p["r"]):
        return PointEval(p, None, None, math.inf, math.nan, False, "not a point of this reading (needs |x| = |y| = r)")
    return _THMF1_SAME.evaluate(p, budget, seed)


_GAUSS_SAME_F1 = _pair_domain(norm=(0.05, 3.0), extra={**_MN, "sigma": Real(0.2, 2.0)}, same_length=True,
                              description="|x| = |y| = r <= 3, rho from the same r (appendix F's premise)")
P.claim("thmf.1.furthermore", source=P.at("Theorem F.1 ('Furthermore') and its proof"),
    statement="if SM^trig_m and SM^++_m apply the exact same sets of random projections, the mean squared error of "
              "the hybrid estimator remains the same [as eq (71)]", domain=_GAUSS,
    readings=[
        Reading("general x, y", [_mse_check(printed_thmf1_ctx, "gauss", 1, max_points=30), not_certifiable(mc_check(
            "monte-carlo", on_mp(printed_thmf1_ctx), _sim("gauss-shared"), domain=_pair_domain(
                norm=(0.3, 1.1), extra={"m": Int(1, 4), "n": Int(1, 4), "sigma": Real(0.3, 1.5), "r": Real(0.3, 1.0)},
                description="|x|, |y| in [0.3, 1.1], starting at |x| = 0.5, |y| = 1.1, theta = 2.7",
                fixed_points=[{"nx": 0.5, "ny": 1.1, "theta": 2.7, "m": 1, "n": 1, "sigma": 1.2, "r": 0.5}])),
            _MC_WHY)], description="for every x, y as Thm F.1 writes them (Delta = x - y), r entering only rho "
                                   "(eq 68)"),
        Reading("same length", [Check(
            "moment-expansion-same-length", 1, _thmf1_same_length, max_points=30, domain=_GAUSS_SAME_F1,
            description="eq (71)-(73) at |x| = |y| = r against the moment expansion with shared projections")],
            description="under appendix F's premise |x| = |y| = r, for which the normalized estimator is defined",
            natural=True, reason="F.1 is about 'the normalized bipolar Gaussian estimator', which appendix F defines "
                                 "for |x| = |y| = r (its rho, eq 68, is built from r), and the proof of the "
                                 "'furthermore' argues with SM(theta, r) and 1 - cos(|x|^2 - |y|^2) = 0")],
    correction="For general x, y, with shared projections Thm 3.1 (variant II) subtracts (2/m) SM^2 (1 - cos(|x|^2 - "
               "|y|^2)) E[lam(1 - lam)], which vanishes only when |x|^2 - |y|^2 is a multiple of 2 pi (e.g. |x| = "
               "|y|, Thm F.2, claim hrf.thmf.2.furthermore holds); "
               "rfcheck.closed_forms.hrf.log_mse_gauss_hybrid(shared=1).",
    notes="Theorem F.1 writes Delta = x - y (Thm F.2 is its same-length version, where the first part of F.1, claim "
          "hrf.thmf.1, is registered for general x, y and holds); the proof's argument (1 - cos(|x|^2 - |y|^2) = 0) "
          "assumes |x| = |y|. Both domains are checked as readings.")
_GAUSS_SAME = _pair_domain(norm=(0.05, 3.0), extra={**_MN, "sigma": Real(0.2, 2.0)}, same_length=True,
                           description="|x| = |y| = r <= 3; rho from the same r (normalised estimator)")


def _same_r(p: Point) -> Point:
    return dict(p, nx=p["r"], ny=p["r"])


def printed_thmf2_ctx(ctx: Any, p: Point) -> Any:
    """Thm F.2, eq (77)-(79) as printed (``|x| = |y| = r``, ``sin^2(theta/2)``)."""
    r, th, m, n, s = _nums(ctx, p, "r", "theta", "m", "n", "sigma")
    rho = 1 - ctx.exp(-2 * s**2 * r**2)
    sn = ctx.sin(th / 2) ** 2
    el2 = 1 / rho**2 * (1 - ctx.exp(-2 * s**2 * r**2 * sn)) ** 2 + 1 / (2 * rho**2 * n) * (
        1 - ctx.exp(-4 * s**2 * r**2 * sn)) ** 2
    eo2 = 1 / rho**2 * ((1 - rho) - ctx.exp(-2 * s**2 * r**2 * sn)) ** 2 + 1 / (2 * rho**2 * n) * (
        1 - ctx.exp(-4 * s**2 * r**2 * sn)) ** 2
    g = refs.pair_geometry(ctx, p["r"], p["r"], p["theta"])
    mse_pos = ctx.exp(g["z2"]) * g["sm"] ** 2 / (2 * m) * (1 - ctx.exp(-g["z2"])) ** 2
    mse_trig = ctx.exp(g["z2"]) * g["sm"] ** -2 / (2 * m) * (1 - ctx.exp(-g["d2"])) ** 2
    return el2 * mse_pos + eo2 * mse_trig


#: extra bits for the balls of Thm F.2: near theta = pi with small r both sides form 1 - exp(-|z|^2) with
#: |z|^2 ~ 1e-35 (cos(theta/2) of the float pi), which needs about 120 bits beyond the working precision
_THMF2_GUARD = 128
for _sh, _sfx in ((0, ""), (1, ".furthermore")):
    P.claim(f"thmf.2{_sfx}", source=P.at("Theorem F.2, eq (77)-(79)"), domain=_GAUSS_SAME,
        statement=("|x| = |y| = r: MSE(SM^gausshyb_{m,n}(theta, r)) = E[lam^2] MSE(SM^++) + E[(1-lam)^2] MSE(SM^trig), "
                   "(78)-(79) with sin(theta/2)^2" if not _sh else
                   "|x| = |y| = r: with the exact same sets of random projections the MSE will remain the "
                   "same [eq 77]"),
        checks=[deterministic_check(
            "moment-expansion", None, lambda p, dps, sh=_sh: _ref_hyb_mse(dict(_same_r(p), lam="gauss"), dps, sh),
            atol_scale=lambda p, dps: _scale(_same_r(p), dps), max_points=24, printed_ctx=printed_thmf2_ctx,
            printed_ball=lambda p, bits: eval_on_balls(printed_thmf2_ctx, p, bits + _THMF2_GUARD),
            reference_ball=lambda p, bits, sh=_sh: _hyb_mse_ball("gauss", sh)(_same_r(p), bits + _THMF2_GUARD))])


def _eq70_sides(p: Point, x: Any, y: Any, tau: Any) -> tuple[Any, Any, float, float]:
    """Eq (70) as printed (no sigma in the features) and eq (69) for any r (eq 70's domain) on ``tau``."""
    n, s, r = int(p["n"]), float(p["sigma"]), float(p["r"])
    rho = float(-np.expm1(-2 * s * s * r * r))

    def feat(z: np.ndarray) -> np.ndarray:
        pz = tau @ z
        return 1j / math.sqrt(n * rho) * np.stack([np.sin(pz), np.cos(pz)], -1).reshape(16, 2 * n)

    printed = np.real(1 / rho + np.sum(feat(x) * feat(y), -1))
    ref = hy.normalized_gauss_lambda(x, y, tau, s, r, allow_lambda_above_one=True)
    return printed, ref, 1e-12 * (1 / rho + 1), 0.0


def _eq70_on_draws(ctx: Any, p: Point, x: Any, y: Any, tau: Any) -> tuple[Any, Any]:
    """Eq (70) as printed on the draws ``tau`` (n, d): ``Re(1/rho + rho_1(x)^T rho_2(y))`` with
    ``rho_{1,n}(z) = rho_{2,n}(z) = i/sqrt(n rho) (sin(tau_1 z), cos(tau_1 z), ...)`` (no sigma); and eq (69)."""
    n = refs.num(ctx, len(tau))
    s, r = refs.num(ctx, float(p["sigma"])), refs.num(ctx, float(p["r"]))
    rho = 1 - ctx.exp(-2 * s**2 * r**2)
    unit = 1j / ctx.sqrt(n * rho)
    px = [sum(refs.num(ctx, float(t[c])) * refs.num(ctx, float(x[c])) for c in range(len(x))) for t in tau]
    py = [sum(refs.num(ctx, float(t[c])) * refs.num(ctx, float(y[c])) for c in range(len(y))) for t in tau]
    dot = sum(unit * ctx.sin(a) * unit * ctx.sin(b) + unit * ctx.cos(a) * unit * ctx.cos(b)
              for a, b in zip(px, py, strict=True))
    return ctx.re(1 / rho + dot), refs.gauss_lambda_on_draws(ctx, list(x), list(y), tau, float(p["sigma"]),
                                                             float(p["r"]))


P.claim("eq70", source=P.at("appendix F, eq (69)-(70)"),
    statement="lam_hat of eq (69) = a + rho_{1,n}(x)^T rho_{2,n}(y) with a = 1/rho, rho_{1,n}(z) = rho_{2,n}(z) = "
              "i/sqrt(n rho) (sin(tau_1^T z), cos(tau_1^T z), ..., sin(tau_n^T z), cos(tau_n^T z))",
    domain=_pair_domain(norm=(0.1, 3.0), extra={"n": Int(1, 32), "sigma": Real(0.2, 2.0, extra=(1.0,)),
                                                "r": Real(0.3, 3.0)}),
    checks=[_same_draws(16, "n", _eq70_sides, _eq70_on_draws, "eq (70) vs eq (69) for the same tau")],
    correction="The features need sigma: sin(sigma tau_i^T z), cos(sigma tau_i^T z) "
               "(rfcheck.estimators.hrf.normalized_gauss_lambda_features); as printed they hold only for sigma = 1.")


def _f_endpoints_ctx(ctx: Any, p: Point) -> Any:
    """``lambda(theta=0) + (1 - lambda(theta=pi))`` of eq (76) at |x| = |y| = r (rho of eq 68)."""
    r, s = _nums(ctx, p, "r", "sigma")
    rho = 1 - ctx.exp(-2 * s**2 * r**2)
    lam = lambda t: (1 - ctx.exp(-s**2 / 2 * 4 * r**2 * ctx.sin(t / 2) ** 2)) / rho  # noqa: E731
    return lam(refs.num(ctx, 0)) + (1 - lam(ctx.pi))


P.claim("text-f-normalized-endpoints", source=P.at("appendix F, before eq (67)"),
    statement="for |x| = |y| = r the normalised bipolar Gaussian hybrid has lambda(x,y) = 0 if theta = 0 and "
              "lambda(x,y) = 1 if theta = pi (eq 67-68)",
    domain=Domain({"r": Real(0.05, 5.0), "sigma": Real(0.1, 3.0)}),
    checks=[_ctx_check("mpmath", _zero_ctx, _f_endpoints_ctx, scale=lambda p, v: 1, digits=0, keep_ints=True,
                       atol_scale=lambda p, dps: 1)], notes="Checked as lambda(theta=0) + (1 - lambda(theta=pi)) = 0.")


# ===================================================================== appendix H.2
def _centers_ctx(ctx: Any, p: Point) -> tuple[list[Any], list[Any]]:
    return _nums(ctx, p, "ri0", "ri1"), _nums(ctx, p, "rj0", "rj1")


def _a_diag_ctx(ctx: Any, p: Point) -> list[Any]:
    """Diagonal of A^{i,j}: eq (86)-(87) (complex) or eq (88) (real), as printed."""
    ri, rj = _centers_ctx(ctx, p)
    if p["kind"] == "complex":
        return [1j * ctx.sqrt(b / a) if a * b > 0 else ctx.sqrt(-b / a) for a, b in zip(ri, rj, strict=True)]
    return [ctx.sqrt(ctx.abs(b / a)) for a, b in zip(ri, rj, strict=True)]


def _eq83_residual(p: Point, dps: int) -> tuple[Any, Any, Any]:
    with mpmath.workdps(dps + 10):
        ri, rj = _centers_ctx(MP, p)
        res = max(abs(a * x + y / a) for a, x, y in zip(_a_diag_ctx(MP, p), ri, rj, strict=True))
        return res, mpmath.mpf(0), mpmath.mpf(10) ** (-dps) * (max(abs(v) for v in ri + rj) + 1)


_H2 = Domain({**{f"r{c}{k}": Real(-2.0, 2.0) for c in "ij" for k in range(2)}, "kind": Choice(("complex",))},
             constraint=lambda p: all(abs(p[f"r{c}{k}"]) > 1e-3 for c in "ij" for k in range(2)),
             description="centers r_i, r_j in [-2, 2]^2 with nonzero entries (d = 2)")
P.claim("eq86", source=P.at("appendix H.2, eq (83)-(87)"),
    statement="alpha_k = 0, beta_k = sqrt(r_j,k/r_i,k) if r_i,k r_j,k > 0 and alpha_k = sqrt(-r_j,k/r_i,k), beta_k = "
              "0 if r_i,k r_j,k < 0 solve (alpha_k + beta_k i) r_i,k + r_j,k/(alpha_k + beta_k i) = 0 (eq 83)",
    domain=_H2,
    checks=[inequality_check("mpmath", _eq83_residual, description="max_k |A_kk r_i,k + r_j,k/A_kk| <= 0",
                             not_certified="the residual is exactly 0 (an identity: A_kk^2 = -r_j,k/r_i,k) and the "
                             "check is residual <= 0 with no slack on balls; A_kk = i sqrt(r_j,k/r_i,k) or "
                             "sqrt(-r_j,k/r_i,k) is irrational, so its ball, and the residual's, has a positive "
                             "radius around 0 and never decides '<= 0' (balls could only certify a violation)")])


def _eq88(p: Point, budget: Budget, seed: int) -> PointEval:
    """Printed a_k vs the numerical minimiser of (a r_i + r_j/a)^2 over a > 0 (per coordinate)."""
    dps = budget.dps
    with mpmath.workdps(dps + 10):
        ri, rj = _centers_ctx(MP, p)
        worst = None
        for a_i, b_j in zip(ri, rj, strict=True):
            a_k = mpmath.sqrt(abs(b_j / a_i))
            if a_k == 0:
                return PointEval(p, a_k, None, 0, 1e9, True,
                                 "printed a_k = 0: A singular, (A^T)^-1 undefined (r_j,k = 0)")
            loss = (a_k * a_i + b_j / a_k) ** 2
            best = refs.inf_diagonal_residual_sq(a_i, b_j, dps)  # inf over a > 0 of (a r_i + r_j/a)^2
            disc = (loss - best) / (mpmath.mpf(10) ** (5 - dps) * (abs(best) + abs(a_i * b_j) + 1))
            if worst is None or disc > worst[0]:
                worst = (disc, loss, best)
        return PointEval(p, worst[1], worst[2], 0, float(worst[0]))


P.claim("eq88", source=P.at("appendix H.2, eq (88)"),
    statement="restricting A = diag(a_1..a_d) to R^{dxd}, to minimize |A r_i + (A^T)^-1 r_j|^2 we can take a_k = "
              "sqrt(|r_j,k/r_i,k|) if r_i,k != 0",
    domain=Domain({**{f"r{c}{k}": Real(-2.0, 2.0, extra=(0.0,)) for c in "ij" for k in range(2)}},
                  constraint=lambda p: all(abs(p[f"ri{k}"]) > 1e-3 for k in range(2)),
                  description="r_i,k != 0 (the stated condition); r_j,k may be 0"),
    checks=[not_certifiable(Check("numerical-minimisation", 1, _eq88, search=False,
                                  description="per-coordinate minimisation of (a r_i,k + r_j,k/a)^2 over a > 0"),
        "the reference is a golden-section minimum in mpmath (no enclosure); the deciding counterexample is "
        "structural (printed a_k = 0 where r_j,k = 0: A singular, (A^T)^-1 undefined), with no value to enclose")],
    correction="Where r_j,k = 0 the printed a_k = 0 makes A singular; the infimum (0) is approached as a_k -> 0 but "
               "not attained (rfcheck.estimators.hrf.cluster_a_real raises there).")
_H2_XY = Domain({**{f"r{c}{k}": Real(-1.5, 1.5) for c in "ij" for k in range(2)},
                 **{f"d{c}{k}": Real(-0.3, 0.3, extra=(0.0,)) for c in "xy" for k in range(2)},
                 "kind": Choice(("complex", "real")), "tau": Real(0.5, 3.0)},
                constraint=lambda p: all(abs(p[f"r{c}{k}"]) > 1e-2 for c in "ij" for k in range(2)),
                description="A^{i,j} from eq (86)-(87) (complex) or eq (88) (real) for centers r_i, r_j; "
                            "x = r_i + dx, y = r_j + dy")


def _xy_h2_ctx(ctx: Any, p: Point) -> tuple[list[Any], list[Any]]:
    ri, rj = _centers_ctx(ctx, p)
    return ([ri[k] + refs.num(ctx, p[f"dx{k}"]) for k in range(2)],
            [rj[k] + refs.num(ctx, p[f"dy{k}"]) for k in range(2)])


#: the two readings of ``||v||^2`` on any context: the Hermitian squared norm ``sum |v_k|^2`` and the bilinear
#: square of sec 2.3 ("for a complex vector z, z^2 = sum z_i^2")
_SQ_CTX = {"hermitian": lambda ctx, v: sum(ctx.abs(c) ** 2 for c in v), "bilinear": lambda ctx, v: sum(c**2 for c in v)}
_H2_READ = {"hermitian": "||v||^2 of the complex vectors A x, A^-1 y read as the Hermitian norm sum |v_k|^2",
            "bilinear": "||v||^2 of the complex vectors A x, A^-1 y read as sec 2.3's bilinear square (v)^2 = "
                        "sum v_k^2"}
_H2_WHY_BILINEAR = ("appendix H.2 derives (89) 'from the analysis in the main body', whose eq (14)-(15) write the "
                    "bilinear square (M u)^2 = sum (M u)_k^2 of sec 2.3; (89)-(96) use the one symbol throughout")


def _h2_ax_ay_ctx(ctx: Any, p: Point) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    a = _a_diag_ctx(ctx, p)
    x, y = _xy_h2_ctx(ctx, p)
    return x, y, [a[k] * x[k] for k in range(2)], [y[k] / a[k] for k in range(2)]


def printed_eq89_ctx(ctx: Any, p: Point, sq: str = "hermitian") -> Any:
    """Left side of eq (89), ``||.||^2`` read as ``sq`` (Hermitian norm or bilinear square)."""
    x, y, ax, ay = _h2_ax_ay_ctx(ctx, p)
    nrm = _SQ_CTX[sq]
    return ctx.exp(nrm(ctx, ax) / 2) * ctx.exp(nrm(ctx, ay) / 2) * ctx.exp(sum(x[k] * y[k] for k in range(2)))


def _h2_z_norm(ctx: Any, p: Point, sq: str | None, tau: bool) -> tuple[list[Any], Any]:
    """Eq (89)'s ``z = A x + A^-1 y`` and the normaliser ``exp(-||Ax||^2/2 - ||A^-1 y||^2/2)`` of eq (91)-(92)
    (``tau``: eq (95)-(96)'s ``(A x - A^-1 y)/tau`` and ``exp(-||Ax||^2/tau^2 - ||A^-1 y||^2/tau^2)``), ``||.||^2``
    read as ``sq`` (None: no normaliser)."""
    _, _, ax, ay = _h2_ax_ay_ctx(ctx, p)
    t = refs.num(ctx, p["tau"]) if tau else None
    z = [(ax[k] - ay[k]) / t for k in range(2)] if tau else [ax[k] + ay[k] for k in range(2)]
    if sq is None:
        return z, None
    d = t**2 if tau else 2
    return z, ctx.exp(-_SQ_CTX[sq](ctx, ax) / d - _SQ_CTX[sq](ctx, ay) / d)


def _ref_h2(sq: str | None = None, tau: bool = False) -> Reference:
    """``E exp(w.z)`` (:func:`_h2_z_norm`) by per-coordinate quadrature; with ``sq``, times the normaliser, real part:
    ``E[Psi_A(x)^T Psi_A^-1(y)]`` of eq (91)-(92) (``tau``: ``E[Psi^tau(x)^T Psi^tau(-y)]`` of eq (95)-(96))."""
    def ref(p: Point, dps: int) -> tuple[Any, Any]:
        with mpmath.workdps(dps + 10):
            z, c = _h2_z_norm(MP, p, sq, tau)
        if c is None:
            return refs.quad_gaussian_exp_dot(z, dps)
        v, e = refs.exp_dot_mean_quad(z, c, dps)
        return mpmath.re(v), e
    return ref


def _h2_ball(sq: str | None = None, tau: bool = False) -> BallFn:
    """Ball of :func:`_ref_h2`'s quantity, ``E exp(w.z)`` by rigorous quadrature of the defining expectation
    (``rfcheck.references.hrf.gaussian_exp_dot_ball``)."""
    def ball(p: Point, bits: int) -> Any:
        z, c = refs.on_balls(lambda ctx: _h2_z_norm(ctx, p, sq, tau), bits=bits)
        return refs.gaussian_exp_dot_ball(z, bits) if c is None else refs.exp_dot_mean_ball(z, c, bits).real
    return ball


def _h2_quad(name: str, ref: Reference, **kw: Any) -> Check:
    """A quadrature check of appendix H.2 (the printed side on ``printed_ctx``), capped at 6 points."""
    return capped(deterministic_check(name, None, ref, **kw), 6)


def _h2_readings(make: Callable[[str, str], Check], her: str, bil: str, reason: str = "") -> list[Reading]:
    """The two readings of ``||.||^2``: Hermitian, and bilinear (the natural one), each with the check
    ``make(sq, suffix)`` (``suffix`` ``""`` or ``"-bilinear"`` ends its name); ``her``, ``bil`` end their
    descriptions, ``reason`` ends the bilinear reading's reason."""
    return [Reading("hermitian", [make("hermitian", "")], description=_H2_READ["hermitian"] + her),
            Reading("bilinear", [make("bilinear", "-bilinear")], description=_H2_READ["bilinear"] + bil,
                    natural=True, reason=_H2_WHY_BILINEAR + reason)]


P.claim("eq89", source=P.at("appendix H.2, eq (89)"),
    statement="exp(||A^{i,j} x||^2/2) exp(||(A^{i,j})^-1 y||^2/2) SM(x,y) = E[exp(w^T(A^{i,j} x + (A^{i,j})^-1 y))] "
              "for arbitrary x, y in R^d (A^{i,j} from eq (85) or (88))", domain=_H2_XY,
    readings=_h2_readings(lambda sq, sfx: _h2_quad(
        "quadrature" + sfx, _ref_h2(), atol_scale=lambda p, dps: abs(printed_eq89_ctx(MP, mp_point(p), sq)) + 1,
        max_points=24, printed_ctx=lambda ctx, p: printed_eq89_ctx(ctx, p, sq), reference_ball=_h2_ball()),
        "", ": eq (14) of sec 2.3"),
    correction="Read with the Hermitian norm the identity fails for the complex A of eq (85)-(87); with the bilinear "
               "squares of sec 2.3, (A x)^2 = sum (A x)_k^2, it is eq (14) (claim hrf.eq14 holds). The two readings "
               "agree for the real A of eq (88).")


P.claim("eq90", source=P.at("appendix H.2, eq (90)-(92), (100)"),
    statement="SM(x,y) ~ Psi_{A^{i,j}}^m(x)^T Psi_{(A^{i,j})^-1}^m(y) with eq (91)-(92) (Psi = m^-1/2 exp(-||A "
              "u||^2/2)(exp(w_i^T A u))_i) is an unbiased estimate (real part compared)", domain=_H2_XY,
    readings=_h2_readings(lambda sq, sfx: _h2_quad("quadrature" + sfx, _ref_h2(sq), atol_scale=lambda p, dps: 1,
                                                   reference_ball=_h2_ball(sq), printed_ctx=lambda ctx, p: ctx.exp(
                                                       sum(a * b for a, b in zip(*_xy_h2_ctx(ctx, p), strict=True)))),
                          " in the normalisers of eq (91)-(92)",
                          " in the normalisers of eq (91)-(92): the Psi of eq (15)"),
    correction="Read with the Hermitian norm, eq (91)-(92) are biased for complex A^{i,j}; with exp(-(A u)^2/2) "
               "(bilinear square, eq 15) they are unbiased.")


def printed_eq93_ctx(ctx: Any, p: Point, sq: str = "hermitian") -> Any:
    """Right side of eq (93), ``||.||^2`` read as ``sq``."""
    x, y, ax, ay = _h2_ax_ay_ctx(ctx, p)
    t = refs.num(ctx, p["tau"])
    nrm = _SQ_CTX[sq]
    return (ctx.exp(-nrm(ctx, ax) / (2 * t**2)) * ctx.exp(-nrm(ctx, ay) / (2 * t**2))
            * ctx.exp(sum(x[k] * -y[k] for k in range(2)) / t**2))


def _lambda_h2_ctx(ctx: Any, p: Point, sq: str = "hermitian") -> Any:
    """``lambda^{i,j}(x, y) = exp(-||A x + A^-1 y||^2/(2 tau^2))``, the definition in eq (93), ``||.||^2`` as ``sq``."""
    a = _a_diag_ctx(ctx, p)
    x, y = _xy_h2_ctx(ctx, p)
    t = refs.num(ctx, p["tau"])
    return ctx.exp(-_SQ_CTX[sq](ctx, [a[k] * x[k] + y[k] / a[k] for k in range(2)]) / (2 * t**2))


#: the offsets of an H.2 point that put x, y at the centers r_i, r_j
_AT_CENTERS = {f"d{c}{k}": 0.0 for c in "xy" for k in range(2)}


def _lambda_h2_ball(sq: str, centers: bool = False) -> BallFn:
    """Ball of ``lambda^{i,j}`` at the point (``centers``: at ``x = r_i, y = r_j``)."""
    return lambda p, bits: refs.on_balls(lambda ctx: _lambda_h2_ctx(ctx, {**p, **_AT_CENTERS} if centers else p, sq),
                                         bits=bits)


def _ref_eq93(p: Point, dps: int, sq: str = "hermitian") -> tuple[Any, Any]:
    """lambda^{i,j}(x, y) = exp(-||A x + A^-1 y||^2/(2 tau^2)), the definition in (93), ``||.||^2`` read as ``sq``."""
    with mpmath.workdps(dps + 10):
        return _lambda_h2_ctx(MP, mp_point(p), sq), mpmath.mpf(10) ** (-dps - 5)


_H2_LAMBDA_ABOVE_ONE = ("under the bilinear square lambda^{i,j} exceeds 1 off the centers wherever a diagonal entry of "
                        "the complex A is imaginary (r_i,k r_j,k > 0), e.g. 1.046 at r_i = (1, 1), r_j = (1, -1), "
                        "x = r_i + (0.3, 0), y = r_j, tau = 1 (claim hrf.text-h2-lambda-max)")
P.claim("eq93", source=P.at("appendix H.2, eq (93)"),
    statement="lam^{i,j}(x,y) = exp(-||A^{i,j} x + (A^{i,j})^-1 y||^2/(2 tau^2)) = exp(-||A^{i,j} x||^2/(2 tau^2)) "
              "exp(-||(A^{i,j})^-1 y||^2/(2 tau^2)) SM(x/tau, -y/tau)", domain=_H2_XY,
    readings=_h2_readings(lambda sq, sfx: deterministic_check(
        "mpmath" + sfx, None, lambda p, dps: _ref_eq93(p, dps, sq), atol_scale=lambda p, dps: 1,
        printed_ctx=lambda ctx, p: printed_eq93_ctx(ctx, p, sq), reference_ball=_lambda_h2_ball(sq)),
        " (lambda a Gaussian kernel, <= 1)", "; " + _H2_LAMBDA_ABOVE_ONE),
    correction="Read with the Hermitian norm, the cross term for complex A is 2 x^T Re(A^H A^-1) y, not 2 x^T y: "
               "lam = exp(-||Ax||^2/(2tau^2)) exp(-||A^-1 y||^2/(2tau^2)) SM(x/tau, -D y/tau), D = Re(A^H (A^T)^-1) "
               "(rfcheck.estimators.hrf.gaussian_mixture_hybrid); with bilinear squares the identity is exact, but "
               "lambda is then no longer a Gaussian kernel: " + _H2_LAMBDA_ABOVE_ONE + ".")
P.claim("eq94", source=P.at("appendix H.2, eq (94)-(96), (99)"),
    statement="lam^{i,j}(x,y) = exp(-||A^{i,j}x + (A^{i,j})^-1 y||^2/(2tau^2)) ~ Psi^{tau,m}_{A^{i,j}}(x)^T "
              "Psi^{tau,m}_{(A^{i,j})^-1}(-y) (eq 95-96) unbiasedly (real part compared)", domain=_H2_XY,
    readings=_h2_readings(lambda sq, sfx: _h2_quad(
        "quadrature" + sfx, _ref_h2(sq, tau=True), atol_scale=lambda p, dps: 1, max_points=24,
        printed_ctx=lambda ctx, p: _lambda_h2_ctx(ctx, p, sq), reference_ball=_h2_ball(sq, tau=True)),
        ", in lambda and in the normalisers of eq (95)-(96)",
        ", in lambda and in the normalisers of eq (95)-(96); " + _H2_LAMBDA_ABOVE_ONE),
    correction="Read with the Hermitian norm, unbiased only for the real A of eq (88); for complex A^{i,j} (Def H.1) "
               "use the bilinear squares (then lambda is not a Gaussian kernel and can exceed 1) or keep the "
               "Hermitian lambda and estimate it with D = Re(A^H (A^T)^-1) "
               "(rfcheck.estimators.hrf.gaussian_mixture_hybrid).")


def _lambda_max_balls(sq: str) -> BallFn:
    """Balls of ``lambda^{i,j}(x, y)`` and ``lambda^{i,j}(r_i, r_j)`` (both exact closed forms).

    ``lambda`` is real under either reading (each ``(A u)_k`` is real or purely imaginary, so its bilinear square is
    real); a complex ball's real part is taken where its imaginary part contains 0."""
    def real(b: Any) -> Any:
        return (b.real if b.imag.contains(0) else None) if isinstance(b, acb) else b

    def balls(p: Point, bits: int) -> Any:
        lam, center = (real(_lambda_h2_ball(sq, centers=c)(p, bits)) for c in (False, True))
        if lam is None or center is None:
            return "a ball of lambda has an imaginary part that excludes 0"
        return lam, center
    return balls


_H2_XY_COMPLEX = Domain(dict(_H2_XY.params, kind=Choice(("complex",))), constraint=_H2_XY.constraint,
                        description="A^{i,j} from eq (86)-(87) (the complex matrix of Def H.1) for centers r_i, r_j; "
                                    "x = r_i + dx, y = r_j + dy")
P.claim("text-h2-lambda-max", source=P.at("appendix H.2, before eq (93)"),
    statement="We can also take the Gaussian lambda-coefficient estimator that gets its maximum value when x = r_i, y "
              "= r_j as lambda^{i,j}(x, y) [= exp(-||A^{i,j} x + (A^{i,j})^-1 y||^2/(2 tau^2)), eq (93); A^{i,j} the "
              "complex matrix of eq (85)]", domain=_H2_XY_COMPLEX,
    # lambda^{i,j}(x, y) <= lambda^{i,j}(r_i, r_j), the printed maximiser's value
    readings=_h2_readings(lambda sq, sfx: inequality_check("mpmath" + sfx, _sides(lambda p, dps: (
        _ref_eq93(p, dps, sq)[0], _ref_eq93({**p, **_AT_CENTERS}, dps, sq)[0])), sides_ball=_lambda_max_balls(sq)),
        " in eq (93)'s lambda", " in eq (93)'s lambda", " (the reading under which eq (93)-(94) hold)"),
    correction="With the bilinear squares under which eq (89)-(94) hold, lambda^{i,j} is not maximal at the centers "
               "for a complex A^{i,j}: " + _H2_LAMBDA_ABOVE_ONE + ". With the Hermitian norm it is (lambda <= 1, = 1 "
               "at the centers), but then eq (93)-(94) fail for complex A (claims hrf.eq93, hrf.eq94).",
    notes="Checked as lambda^{i,j}(x, y) <= lambda^{i,j}(r_i, r_j) near the centers (x = r_i + dx, y = r_j + dy).")


def _h2_zero_var(p: Point, dps: int) -> tuple[Any, Any, Any]:
    """Variance of one feature product of eq (91)-(92) at x = r_i, y = r_j (complex A of eq 86-87)."""
    with mpmath.workdps(dps + 10):
        z, c = _h2_z_norm(MP, {**p, **_AT_CENTERS}, "hermitian", False)
    v, e = refs.exp_dot_sample_variance_quad(z, c, dps)
    with mpmath.workdps(dps + 10):
        return v, mpmath.mpf(0), e + mpmath.mpf(10) ** (5 - dps) * abs(c) ** 2


P.claim("text-h2-zero-variance", source=P.at("appendix H.2, after eq (92)"),
    statement="Such a softmax kernel estimator [eq (90)-(92)] has variance equal to zero if x = r_i and y = r_j if we "
              "are using the complex matrix [eq (85)-(87)]", domain=_H2,
    checks=[capped(inequality_check(
        "quadrature", _h2_zero_var, max_points=16,
        not_certified="the variance is exactly 0 (the estimator is constant: z = A r_i + A^-1 r_j = 0 by eq (83)) and "
                      "the check is Var <= 0 with no slack on balls; z is formed from the irrational entries "
                      "sqrt(+-r_j,k/r_i,k) of A, so its ball, and the variance's, has a positive radius around 0 and "
                      "never decides '<= 0'"), 5)],
    notes="Holds under either reading of ||.||^2 in eq (91)-(92) (the estimator is constant there; the normaliser "
          "only scales it). That constant is SM(r_i, r_j) with the bilinear squares (the natural reading of claim "
          "hrf.eq90), so the MSE is zero too; with the Hermitian norm it is not, and the MSE is not zero.")


# ======================================================================= experiments
P.claim("tab1", source=P.at("sec 4.1, Table 1"),
    statement="MSE (1e-3 units) on wine / Boston: HRF-ort 0.70 / 0.72, HRF-iid 0.85 / 0.79, ORF-reg 1.00 / 1.05, "
              "ORF-Had 1.10 / 1.14, Halton-R 4.02 / 2.53 (512 features, FLOP-matched HRFs)", domain=Domain({}),
    unverifiable="Not reproducible from the paper: the 100 sampled pairs, their normalisation, the HRF (m, n) "
                 "configuration 'matched in FLOPS' and the HRF variant's lambda are not specified, and the UCI data "
                 "are not part of the package.")


# ============================================================================================
# Remaining numbered equations (eq 19, 31, 33-35, 40-41, 56, 59-60, 62, 69, 74-76, 80, 84-85,
# 102) and the derivative remark of appendix D.3.
# ============================================================================================
# ------------------------------------------------------------------ eq (19): angular lambda
def _ref_eq19(p: Point, dps: int) -> tuple[Any, Any]:
    """``E[1/2 + rho_n(x)^T rho_n(y)]`` with eq (19)'s complex features (``refs.sign_feature_lambda_mean``)."""
    return refs.sign_feature_lambda_mean(p["theta"], int(p["n"]), dps)


def _eq19_mc(p: Point, budget: Budget, seed: int) -> PointEval:
    """Mean of eq (19) built literally (complex features, plain dot product) vs theta/pi."""
    rng = np.random.default_rng(seed)
    x, y = _vecs(p)
    n, trials = int(p["n"]), budget.mc_trials
    tau = rng.standard_normal((trials, n, 2))
    rx, ry = (1j / math.sqrt(2 * n) * np.sign(tau @ v) for v in (x, y))
    lam = 0.5 + np.sum(rx * ry, axis=-1)
    if np.max(np.abs(lam.imag)) > 0:
        return PointEval(p, float(p["theta"]) / PI, None, math.inf, math.inf, True, "eq (19) is not real")
    est = estimate_mean(lam.real)
    return compare_mc(p, float(p["theta"]) / PI, est, z_crit=z_critical(budget.alpha, budget.mc_points))


P.claim("eq19", source=P.at("sec 2.4, eq (19)"),
    statement="lambda(x,y) = theta_{x,y}/pi is unbiasedly approximated by lam_hat(x,y) = 1/2 + rho_n(x)^T rho_n(y), "
              "rho_n(z) = i/sqrt(2n) (sgn(tau_1^T z), ..., sgn(tau_n^T z)), tau_i ~ N(0, I_d)",
    domain=Domain({"theta": Real(0.0, PI, extra=(PI / 2,)), "n": Int(1, 10_000), "nx": Real(0.1, 3.0),
                   "ny": Real(0.1, 3.0)}, description="theta in [0, pi], n <= 10000"),
    checks=[deterministic_check("quadrature", None, _ref_eq19, atol_scale=lambda p, dps: 1,
                                printed_ctx=lambda ctx, p: refs.num(ctx, p["theta"]) / ctx.pi,
                                reference_ball=lambda p, bits: refs.sign_feature_lambda_mean_ball(
                                    float(p["theta"]), int(p["n"]), bits),
                                description="E of the printed features: quadrature of sgn(cos phi) sgn(cos(phi - "
                                            "theta)) over tau's direction"),
            not_certifiable(Check("monte-carlo", 3, _eq19_mc, search=False,
                                  description="sample mean of eq (19) built literally with complex features",
                                  domain=Domain({"theta": Real(0.3, PI), "n": Int(1, 16), "nx": Real(0.5, 2.0),
                                                 "ny": Real(0.5, 2.0)}, description="theta >= 0.3 (power: the mean "
                                                                                    "must be resolvable to 10%)")),
                            _MC_WHY)])


# ------------------------------------------------------------- appendix C, eq (31)-(35)
def _printed_eq31_ctx(shared: int) -> CtxFormula:
    """Eq (31): ``Var(lam S1) + Var((1 - lam) S2) + 2 Cov(lam S1, (1 - lam) S2)``, each term from its definition."""
    def printed(ctx: Any, p: Point) -> Any:
        t = refs.hybrid_variance_terms(_moments_ctx(ctx, p), shared)
        return t["v1"] + t["v2"] + 2 * t["cov"]
    return printed


for _sh, _sfx in ((0, "variant1"), (1, "variant2")):
    P.claim(f"eq31.{_sfx}", source=P.at("appendix C, eq (31)"),
        statement="Var(SM^hyb_{m,n}) = Var(lam_hat SM^++_m) + Var((1 - lam_hat) SM^trig_m) + "
                  "2 Cov(lam_hat SM^++_m, (1 - lam_hat) SM^trig_m)"
                  + (" (independent projections)" if not _sh else " (shared projections)"), domain=_THM31,
        checks=[_hyb_check(_printed_eq31_ctx(_sh), lambda h, dps, sh=_sh: refs.hybrid_variance_with_error(h, sh, dps),
                           lambda h, sh=_sh: refs.hybrid_variance(h, sh), max_points=16,
                           description="each term from its definition vs E[S^2] - (E S)^2 of the hybrid")],
        notes="An algebraic identity (variance of a sum); the check guards the transcription and the moments.")


def printed_eq33_ctx(ctx: Any, p: Point) -> Any:
    """``E[S1 S2] E[lam(1 - lam)] - SM^2 E[lam] E[1 - lam]`` with E[S1 S2] (same projections) its value."""
    h = _moments_ctx(ctx, p)
    return h["ES12"] * (h["l1"] - h["l2"]) - h["K"] ** 2 * h["l1"] * (1 - h["l1"])


P.claim("eq33", source=P.at("appendix C, eq (33)"),
    statement="same projections: Cov(lam_hat SM^++_m, (1 - lam_hat) SM^trig_m) = E[SM^++_m SM^trig_m] E[lam_hat(1 - "
              "lam_hat)] - SM(x,y)^2 E[lam_hat] E[1 - lam_hat]", domain=_THM31,
    checks=[_cov_check(2, printed_eq33_ctx, max_points=16,
                       description="E[UV] - E[U] E[V] with E S1, E S2 from the Gaussian moments")])


def _eq34_35_on_draws(ctx: Any, which: str, x: Any, y: Any, w: Any) -> tuple[Any, Any]:
    """(eq (34) or (35) as printed, the feature-map estimator of eq (3) or (2)) on the draws ``w`` (m, d), the
    float64 inputs exact: the ball twin of the worst draw's comparison in :func:`_eq34_35`."""
    xs, ys = [float(v) for v in x], [float(v) for v in y]
    xb, yb = [arb(v) for v in xs], [arb(v) for v in ys]
    a = (sum(v * v for v in xb) + sum(v * v for v in yb)) / 2
    pos = which == "pos"  # eq (34): Y_i = cosh(w_i^T(x + y)), times exp(-a); eq (35): Z_i = cos(w_i^T(x - y)), exp(a)
    u = [xb[c] + yb[c] if pos else xb[c] - yb[c] for c in range(len(xb))]
    wu = [sum(arb(float(wi[c])) * u[c] for c in range(len(u))) for wi in w]
    printed = ((-a).exp() * sum(v.cosh() for v in wu) if pos else a.exp() * sum(v.cos() for v in wu)) / len(w)
    return Ball(printed), (refs.sm_pos_on_draws if pos else refs.sm_trig_on_draws)(ctx, xs, ys, w)


def _eq34_35(which: str) -> Check:
    def sides(p: Point, x: Any, y: Any, w: Any) -> tuple[Any, Any, float, float]:
        a, pos = (x @ x + y @ y) / 2, which == "pos"
        # eq (34): exp(-(|x|^2 + |y|^2)/2) (Y_1 + ... + Y_m)/m, Y_i = cosh(w_i^T(x + y)); eq (35): exp((|x|^2 +
        # |y|^2)/2) (Z_1 + ... + Z_m)/m, Z_i = cos(w_i^T(x - y))
        printed = (np.exp(-a) * np.mean(np.cosh(w @ (x + y)), axis=-1) if pos else
                   np.exp(a) * np.mean(np.cos(w @ (x - y)), axis=-1))
        ref = (hy.sm_pos if pos else hy.sm_trig)(x, y, w)
        scale = float(np.max(np.abs(ref)) + np.exp(a) + np.exp(-a) * np.max(np.cosh(w @ (x + y))))
        return printed, ref, 1e-13 * scale, scale
    return _same_draws(8, "m", sides, lambda ctx, p, x, y, wj: _eq34_35_on_draws(ctx, which, x, y, wj),
                       "eq (%s) vs the feature-map estimator of eq (%s) on the same projections"
                       % (("34", "3") if which == "pos" else ("35", "2")))


for _which, _eq, _stmt in (
    ("pos", 34, "SM^++_m(x,y) = exp(-(|x|^2 + |y|^2)/2) (Y_1 + ... + Y_m)/m, Y_i = cosh(w_i^T(x + y))"),
    ("trig", 35, "SM^trig_m(x,y) = exp((|x|^2 + |y|^2)/2) (Z_1 + ... + Z_m)/m, Z_i = cos(w_i^T(x - y))")):
    P.claim(f"eq{_eq}", source=P.at(f"appendix C, eq ({_eq})"), statement=_stmt,
        domain=_pair_domain(norm=(0.0, 3.0), extra=_M), checks=[_eq34_35(_which)])


# ---------------------------------------------------------------------- eq (40)-(41)
def _printed_eq40_ctx(which: str, line: str) -> CtxFormula:
    """Eq (40) (``pos``) / (41) (``trig``): ``SM^2 Var(lam) + E[c^2] MSE``; ``line="middle"``: eq (40)'s
    second expression ``E[lam^2](MSE + SM^2) - (E lam)^2 SM^2``.  MSE and SM are the symbols' values."""
    def printed(ctx: Any, p: Point) -> Any:
        h = _moments_ctx(ctx, p)
        l1, l2, k = h["l1"], h["l2"], h["K"]
        if line == "middle":
            return l2 * (h["mse1"] + k**2) - l1**2 * k**2
        c2, mse = (l2, h["mse1"]) if which == "pos" else (1 - 2 * l1 + l2, h["mse2"])
        return k**2 * (l2 - l1**2) + c2 * mse
    return printed


def _var_part_check(name: str, which: str, line: str, max_points: int, description: str = "") -> Check:
    """:func:`_printed_eq40_ctx` vs ``Var(lam S1)`` (``pos``) or ``Var((1 - lam) S2)`` (``trig``) from their
    definitions, with an error bar (``refs.hybrid_variance_terms_with_error``; ``E S1``, ``E S2`` not assumed to
    equal SM) and on balls."""
    key = "v1" if which == "pos" else "v2"

    def ref(h: dict[str, Any], dps: int) -> tuple[Any, Any]:
        t = refs.hybrid_variance_terms_with_error(h, 0, dps)
        return t[key], t["err"]

    return _hyb_check(_printed_eq40_ctx(which, line), ref, lambda h: refs.hybrid_variance_terms(h, 0)[key], name,
                      max_points=max_points, description=description)


P.claim("eq40", source=P.at("appendix C, eq (40)"),
    statement="Var(lam_hat SM^++_m) = E[lam_hat^2 (SM^++_m)^2] - (E[lam_hat SM^++_m])^2 = E[lam_hat^2](MSE(SM^++_m) + "
              "SM^2) - (E lam_hat)^2 SM^2 = SM^2 Var(lam_hat) + E[lam_hat^2] MSE(SM^++_m)", domain=_THM31,
    checks=[_var_part_check("moment-expansion", "pos", "last", 16,
                            "E[lam^2] E[S^2] - (E lam E S)^2 with E S, E S^2 from Gaussian moments"),
            _var_part_check("moment-expansion-middle", "pos", "middle", 8)])
P.claim("eq41", source=P.at("appendix C, eq (41)"),
    statement="Var((1 - lam_hat) SM^trig_m) = SM^2 Var(lam_hat) + E[(1 - lam_hat)^2] MSE(SM^trig_m)", domain=_THM31,
    checks=[_var_part_check("moment-expansion", "trig", "last", 16)])


# ------------------------------------------------- appendix D.3, eq (56)-(62) and the remark
def _eq56(p: Point, dps: int) -> tuple[Any, Any, Any]:
    with mpmath.workdps(dps + 10):
        r, n = mpmath.mpf(p["r"]), int(p["n"])
        lhs, e0 = refs.mp_max_on_interval(lambda t: _b_ctx(MP, 1, r, t, n) + _b_ctx(MP, 2, r, t, n), dps)
        m1, e1 = refs.mp_max_on_interval(lambda t: _b_ctx(MP, 1, r, t, n), dps)
        m2, e2 = refs.mp_max_on_interval(lambda t: _b_ctx(MP, 2, r, t, n), dps)
        return lhs, m1 + m2, e0 + e1 + e2


_D3_RN = Domain({"r": Real(1.0, 10.0, extra=(2.0, 5.0)), "n": Int(1, 10_000)}, description="r in [1, 10], n <= 10000")

def _max_of_b_ball(fn: Callable[[Any, Any, Any, Any], Any], p: Point, bits: int) -> Any:
    """Ball of ``max_{theta in [0, pi]} fn(ctx, r, theta, n)`` by rigorous branch and bound
    (``rfcheck.references.hrf.max_on_interval_ball``, relative width about ``2^-(bits - 30)``)."""
    r, n = arb(float(p["r"])), arb(int(p["n"]))
    return refs.max_on_interval_ball(lambda ctx, u: fn(ctx, r, u, n), 0.0, "pi", bits, rtol=2.0 ** (30 - bits))


def _eq56_balls(p: Point, bits: int) -> tuple[Any, Any] | str:
    """Balls of ``max b_r`` and ``max b_r^1 + max b_r^2`` on ``[0, pi]`` (eq 53-55 as printed), by branch and bound."""
    if int(p["n"]) == 1:
        return ("for n = 1, b_r^1 = 0 (eq 54) and both sides are the one maximum of b_r^2: an equality, which balls "
                "(with no slack) never decide as '<='")
    lhs = _max_of_b_ball(lambda ctx, r, t, n: _b_ctx(ctx, 1, r, t, n) + _b_ctx(ctx, 2, r, t, n), p, bits)
    m1, m2 = (_max_of_b_ball(lambda ctx, r, t, n, i=i: _b_ctx(ctx, i, r, t, n), p, bits) for i in (1, 2))
    with workprec(bits):
        return lhs, m1 + m2


P.claim("eq56", source=P.at("appendix D.3, eq (56)"),
    statement="max_{theta in [0, pi]} b_r(theta) <= max_{theta in [0, pi]} b_r^1(theta) + max_{theta in [0, pi]} "
              "b_r^2(theta) (b_r, b_r^1, b_r^2 of eq 53-55)", domain=_D3_RN,
    checks=[inequality_check("numerical-maximisation", _eq56, max_points=12,
                             description="each maximum by a 401-point grid and golden section in mpmath",
                             sides_ball=_eq56_balls)])


def _local_maxima(i: int, r: Any, n: int, dps: int, npts: int = 1200) -> list[Any]:
    """Memoised ``refs.mp_interior_local_maxima`` of ``log b_r^i`` (eq 54/55 as printed) on ``(0, pi)``."""
    key = ("locmax", i, repr(r), n, dps, npts)
    if key in _CACHE:
        return _CACHE[key]
    with mpmath.workdps(dps + 20):
        r = mpmath.mpf(r)
    out = refs.mp_interior_local_maxima(lambda t: mpmath.log(_b_ctx(MP, i, r, t, n)), dps, npts)
    _CACHE[key] = out
    return out


def _b1_locmax(p: Point, dps: int) -> list[Any]:
    """:func:`_local_maxima` of ``b_r^1``; ``ArithmeticError`` where there is none."""
    ts = _local_maxima(1, p["r"], int(p["n"]), dps)
    if not ts:
        raise ArithmeticError("b_r^1 has no interior local maximum")
    return ts


def _b1_locmax_balls(p: Point, bits: int) -> list[Any] | str:
    """:func:`_locmax_balls` of ``b_r^1``; a string where there is no interior local maximum."""
    balls = _locmax_balls(1, p, bits)
    return balls or "b_r^1 has no interior local maximum"


def _locmax_balls(i: int, p: Point, bits: int) -> list[Any] | str:
    """Balls enclosing every interior local maximiser of ``b_r^i`` on ``(0, pi)`` (eq 54/55 as printed), or a
    string saying why there are none: ``rfcheck.references.hrf.local_maximiser_balls`` around the numerical
    maximisers of :func:`_local_maxima` (same digits), their number proven from the signs of the exact first and
    second derivatives on Arb power series (``rfcheck.references.hrf.interior_local_maxima_balls``)."""
    dps = dps_of_bits(bits)
    r, n = arb(float(p["r"])), arb(int(p["n"]))
    ts = _local_maxima(i, p["r"], int(p["n"]), dps)
    return refs.local_maximiser_balls(lambda ctx, u: _b_ctx(ctx, i, r, u, n), ts, bits, dps)


def _eq59_ball(p: Point, bits: int) -> Any:
    """Ball of ``theta* sin theta*`` over every interior local maximiser ``theta*`` of ``b_r^1``: the hull of
    ``theta sin theta`` on the balls of :func:`_b1_locmax_balls` (which enclose all of them), so agreement with
    the printed ``1/r^2`` is certified for every maximiser at once, and a refutation where every one differs."""
    balls = _b1_locmax_balls(p, bits)
    if isinstance(balls, str):
        return balls
    with workprec(bits):
        return refs.hull_of_balls([b * b.sin() for b in balls], bits)


def _eq60_balls(p: Point, bits: int) -> Any:
    """Balls of ``max theta*^2`` over every interior local maximiser (:func:`_b1_locmax_balls`) and ``pi/(2 r^2)``."""
    balls = _b1_locmax_balls(p, bits)
    if isinstance(balls, str):
        return balls
    with workprec(bits):
        return refs.max_of_balls([b**2 for b in balls], bits), arb.pi() / 2 / arb(float(p["r"])) ** 2


def _eq62_left_balls(p: Point, bits: int) -> Any:
    """Balls of ``max b_r^1(theta*)`` over every interior local maximiser (:func:`_b1_locmax_balls`; eq 54 as
    printed on each ball) and of the bound ``(1 - 1/n)(1/(2 pi r^2)) exp(2r^2)`` of eq (62)."""
    balls = _b1_locmax_balls(p, bits)
    if isinstance(balls, str):
        return balls
    vals = [refs.on_balls(lambda ctx, r, t, n: _b_ctx(ctx, 1, r, t, n), p["r"], Ball(b), int(p["n"]), bits=bits)
            for b in balls]
    return refs.max_of_balls(vals, bits), _eq62_right_balls(p, bits)[1]


_D3_B1 = Domain({"r": Real(1.0, 10.0, extra=(2.0, 5.0)), "n": Int(2, 10_000)},
                description="r in [1, 10], n >= 2 (b_r^1 = 0 identically for n = 1, eq 54)")


def _eq59(p: Point, dps: int) -> tuple[Any, Any]:
    """``theta* sin theta*`` at the interior local maximiser of ``b_r^1`` farthest from ``1/r^2``."""
    with mpmath.workdps(dps + 10):
        worst = max((t * mpmath.sin(t) for t in _b1_locmax(p, dps)), key=lambda v: abs(v - 1 / mpmath.mpf(p["r"]) ** 2))
        return worst, mpmath.mpf(10) ** (-dps - 5)


P.claim("eq59", source=P.at("appendix D.3, eq (59)"),
    statement="in its local maximum on [0, pi] b_r^1 (eq 54) has theta* sin(theta*) = 1/r^2 (r >= 1)", domain=_D3_B1,
    checks=[deterministic_check("numerical-maximisation", None, _eq59,
                                printed_ctx=lambda ctx, p: 1 / refs.num(ctx, p["r"]) ** 2,
                                atol_scale=lambda p, dps: 0, max_points=12, reference_ball=_eq59_ball,
                                description="interior local maxima of log b_r^1 on a 1200-point grid, refined to the "
                                            "root of its numerical derivative; theta* sin theta* compared")])


P.claim("eq60", source=P.at("appendix D.3, eq (60)"),
    statement="(theta*)^2 <= (pi/2) (1/r^2) for the local maximiser theta* of b_r^1 (r >= 1)", domain=_D3_B1,
    checks=[inequality_check("numerical-maximisation", _sides(lambda p, dps: (
        max(_b1_locmax(p, dps)) ** 2, mpmath.pi / 2 / mpmath.mpf(p["r"]) ** 2)), max_points=12,
        sides_ball=_eq60_balls)])
P.claim("text-d3-theta-le-sin", source=P.at("appendix D.3, sentence before eq (60)"),
    statement="theta <= sin(theta) pi/2 on [0, pi/2]", domain=Domain({"theta": Real(0.0, PI / 2)}),
    checks=[inequality_check("mpmath", _sides(lambda p, dps: (
        mpmath.mpf(p["theta"]), mpmath.sin(mpmath.mpf(p["theta"])) * mpmath.pi / 2)), sides_ball=lambda p, bits:
        refs.on_balls(lambda ctx, t: (t, ctx.sin(t) * ctx.pi / 2), p["theta"], bits=bits))])


def _eq62_bound_ctx(ctx: Any, r: Any, n: Any) -> Any:
    """The bound ``(1 - 1/n)(1/(2 pi r^2)) exp(2r^2)`` of eq (62) as printed."""
    return (1 - 1 / n) / (2 * ctx.pi * r**2) * ctx.exp(2 * r**2)


def _eq62(part: str) -> Sides:
    def lhs_rhs(p: Point, dps: int) -> tuple[Any, Any, Any]:
        with mpmath.workdps(dps + 10):
            r, n = mpmath.mpf(p["r"]), int(p["n"])
            bound = _eq62_bound_ctx(MP, r, mpmath.mpf(n))
            lhs = (max(_b_ctx(MP, 1, r, t, n) for t in _b1_locmax(p, dps)) if part == "left" else
                   _b_ctx(MP, 1, r, mpmath.pi, n))
            return lhs, bound, mpmath.mpf(10) ** (-dps) * bound
    return lhs_rhs


def _eq62_right_balls(p: Point, bits: int) -> Any:
    """Balls of ``b_r^1(pi)`` (eq 54 as printed) and the bound of eq (62)."""
    return refs.on_balls(lambda ctx, r, n: (_b_ctx(ctx, 1, r, ctx.pi, n), _eq62_bound_ctx(ctx, r, n)), p["r"],
                         int(p["n"]), bits=bits)


for _part, _stmt in (("left", "b_r^1(theta*) <= (1 - 1/n) (1/(2 pi r^2)) exp(2r^2)"),
                     ("right", "(1 - 1/n) (1/(2 pi r^2)) exp(2r^2) >= b_r^1(pi)")):
    P.claim(f"eq62.{_part}", source=P.at("appendix D.3, eq (62)"), domain=_D3_B1,
        statement=f"{_stmt} (eq 62: b_r^1(theta*) <= (1 - 1/n)(1/(2 pi r^2)) exp(2r^2) >= b_r^1(pi)), r >= 1",
        checks=[inequality_check("numerical-maximisation" if _part == "left" else "mpmath", _eq62(_part),
                                 max_points=12, sides_ball=_eq62_left_balls if _part == "left" else _eq62_right_balls)])


# The remark of appendix D.3 between eq (58) and eq (59), split into its parts.
def _scaled_deriv(i: int, r: Any, n: int) -> Callable[[Any], Any]:
    """``d b_r^i/d theta`` (numerical differentiation of eq 54/55 as printed) times the positive
    ``exp(-2 r^2 cos theta)``: same sign, O(r^2) magnitude for every r."""
    return lambda t: mpmath.diff(lambda s: _b_ctx(MP, i, r, s, n), t) * mpmath.exp(-2 * r**2 * mpmath.cos(t))


def _d3_signs(p: Point, dps: int) -> tuple[Any, Any, Any]:
    with mpmath.workdps(dps + 20):
        margin, err = refs.sign_pattern_margin(_scaled_deriv(int(p["i"]), mpmath.mpf(p["r"]), int(p["n"])),
                                               [p["t1"], p["t2"], p["t3"]], dps)
        return margin, mpmath.mpf(0), err


def _d3_signs_balls(p: Point, bits: int) -> tuple[Any, Any]:
    """Balls of ``min(-D(t1), D(t2), -D(t3))`` and 0 (as :func:`_d3_signs`), ``D`` the derivative of eq (54)/(55)
    as printed times ``exp(-2 r^2 cos theta)``, differentiated exactly on Arb power series
    (``rfcheck.references.hrf.sign_pattern_margin_ball``), not by finite differences."""
    i, r, n = int(p["i"]), arb(float(p["r"])), arb(int(p["n"]))
    return refs.sign_pattern_margin_ball(lambda ctx, u: _b_ctx(ctx, i, r, u, n), [p[k] for k in ("t1", "t2", "t3")],
                                         bits, weight=lambda t: (-2 * r**2 * t.cos()).exp()), arb(0)


_REMARK = ("from the properties of function theta -> theta sin(theta) and the fact that r >= 1, we conclude that both "
           "derivatives [eq (57), (58)] are first non-negative, then non-positive and then non-negative and that the "
           "unique local maximum on the interval [0, pi] is achieved for theta <= pi/2")
P.claim("text-d3-derivatives.signs", source=P.at("appendix D.3, after eq (58)"),
    statement=_REMARK + " [part: sign pattern of d b_r^i/d theta, i = 1, 2]",
    domain=Domain({"r": Real(1.0, 10.0, extra=(2.0,)), "n": Int(1, 10_000), "i": Choice((1, 2)),
                   **{f"t{k}": Real(0.0, PI, extra=(PI / 2,)) for k in (1, 2, 3)}},
                  description="r in [1, 10], n <= 10000, b_r^1 and b_r^2; every triple t1 < t2 < t3 in [0, pi]"),
    checks=[inequality_check("numerical-differentiation", _d3_signs, sides_ball=_d3_signs_balls,
                             description="min(-D(t1), D(t2), -D(t3)) <= 0, D the numerical derivative of eq (54)-(55) "
                                         "(a '-, +, -' triple is exactly a violation of '+, -, +'); the optimiser "
                                         "moves r, t1, t2, t3")],
    notes="The derivative is taken numerically from eq (54)-(55), not from the printed eq (57)-(58) (claims "
          "hrf.eq57, hrf.eq58); for n = 1, d b_r^1/d theta = 0 identically, which satisfies the pattern.")


def _d3_locmax(p: Point, budget: Budget, seed: int) -> PointEval:
    dps = budget.dps
    ts = _local_maxima(int(p["i"]), p["r"], int(p["n"]), dps)
    if len(ts) != 1:
        return PointEval(p, "one interior local maximum", len(ts), 0, 1e9, True,
                         f"{len(ts)} interior local maxima: {[mpmath.nstr(t, 8) for t in ts]}")
    with mpmath.workdps(dps + 10):
        pe = compare_inequality(p, ts[0], mpmath.pi / 2, mpmath.mpf(10) ** (-dps - 5), rtol=mpmath_rtol(dps))
    pe.note = f"theta_max = {mpmath.nstr(ts[0], 10)}"
    return pe


def _d3_locmax_certified(p: Point, budget: Budget, seed: int) -> PointEval:
    """:func:`_d3_locmax`, its decided points certified by balls: every interior local maximum of b_r^i (eq 54/55
    as printed) enclosed, with a proof that there are no others, from the signs of its exact first and second
    derivatives on Arb power series (``rfcheck.references.hrf.interior_local_maxima_balls``); the claim holds on
    balls when there is one and its ball lies at or below pi/2."""
    ev = _d3_locmax(p, budget, seed)
    if not ev.decided:
        return ev
    bits = bits_for_dps(budget.dps)
    i, r, n = int(p["i"]), arb(float(p["r"])), arb(int(p["n"]))
    try:
        balls = refs.interior_local_maxima_balls(lambda ctx, u: _b_ctx(ctx, i, r, u, n), 0.0, "pi", bits)
    except ValueError as exc:
        return certify_eval(ev, None, f"no ball at this point ({exc})")
    with workprec(bits):
        half_pi = arb.pi() / 2
        verdict = ("REFUTED" if len(balls) != 1 or balls[0] > half_pi else "HOLDS" if balls[0] <= half_pi else None)
    return certify_eval(ev, verdict, "the local maximiser's ball straddles pi/2")


P.claim("text-d3-derivatives.local-max", source=P.at("appendix D.3, after eq (58)"),
    statement=_REMARK + " [part: b_r^i has exactly one interior local maximum on (0, pi), at theta <= pi/2]",
    domain=Domain({"r": Real(1.0, 10.0, extra=(2.0, 5.0)), "n": Int(1, 10_000), "i": Choice((1, 2))},
                  constraint=lambda p: p["i"] == 2 or p["n"] >= 2,
                  description="r in [1, 10]; b_r^1 needs n >= 2 (b_r^1 = 0 identically for n = 1)"),
    checks=[Check("grid-and-root", 1, _d3_locmax_certified, search=True, max_points=14,
                  description="interior local maxima of log b_r^i on a 1200-point grid of (0, pi), each refined to the "
                              "root of the numerical derivative; count must be 1 and location <= pi/2")],
    notes="'Local maximum' is read as an interior critical point: the next sentence treats theta = pi separately "
          "('either in its unique local maximum ... or for theta = pi'); on the closed interval theta = pi is "
          "also a one-sided local maximum (the derivative is positive just below pi).")


def _b_at_ctx(i: int, where: str) -> CtxFormula:
    """``b_r^i`` (eq 54-55 as printed) at ``theta = pi`` or ``0``."""
    return lambda ctx, p: _b_ctx(ctx, i, p["r"], ctx.pi if where == "pi" else refs.num(ctx, 0), p["n"])


def _b_at_check(i: int, where: str, printed_ctx: CtxFormula, **kw: Any) -> Check:
    """The check ``b{i}-at-{where}``: ``printed_ctx`` vs :func:`_b_at_ctx` (in mpmath and on balls)."""
    return _ctx_check(f"b{i}-at-{where}", printed_ctx, _b_at_ctx(i, where), lambda p, v: abs(v), keep_ints=True, **kw)


def _printed_b_pi_ctx(i: int) -> CtxFormula:
    """The printed values ``b_r^1(pi) = (1 - 1/n) exp(-2r^2)``, ``b_r^2(pi) = (1/n) exp(-2r^2)``."""
    def printed(ctx: Any, p: Point) -> Any:
        r, n = refs.num(ctx, p["r"]), p["n"]
        one = refs.num(ctx, 1)
        return (1 - one / n if i == 1 else one / n) * ctx.exp(-2 * r**2)
    return printed


def _b_nonneg_balls(p: Point, bits: int) -> Any:
    """Balls of ``-min(b_r^1(theta), b_r^2(theta))`` (eq 54-55 as printed) and 0."""
    b1, b2 = refs.on_balls(lambda ctx, r, t, n: (_b_ctx(ctx, 1, r, t, n), _b_ctx(ctx, 2, r, t, n)), p["r"],
                           p["theta"], int(p["n"]), bits=bits)
    with workprec(bits):
        return -(b1.min(b2)), 0


_D3_ENDS = Domain({"r": Real(1.0, 10.0), "n": Int(1, 10_000), "theta": Real(0.0, PI)},
                  description="r in [1, 10], n <= 10000 (theta only for non-negativity)")
P.claim("text-d3-endpoints", source=P.at("appendix D.3, after eq (58)"),
    statement="b_r^1(theta), b_r^2(theta) >= 0 and b_r^1(0) = b_r^2(0) = 0, b_r^1(pi) = (1 - 1/n) exp(-2r^2), "
              "b_r^2(pi) = (1/n) exp(-2r^2)", domain=_D3_ENDS,
    checks=[_b_at_check(1, "pi", _printed_b_pi_ctx(1), max_points=12,
                        atol_scale=lambda p, dps: mpmath.exp(-2 * mpmath.mpf(p["r"]) ** 2)),
            _b_at_check(2, "pi", _printed_b_pi_ctx(2), max_points=12),
            *(_b_at_check(i, "0", _zero_ctx, atol_scale=lambda p, dps: 1, max_points=6) for i in (1, 2)),
            inequality_check("non-negative", _sides(lambda p, dps: (
                -min(_b_ctx(MP, 1, *_rtn(p)), _b_ctx(MP, 2, *_rtn(p))), mpmath.mpf(0))), max_points=16,
                sides_ball=_b_nonneg_balls, description="-min(b_r^1, b_r^2) <= 0 over theta, with the optimiser")])


def _d3_global(p: Point, dps: int) -> tuple[Any, Any]:
    """The global maximum of b_r^i on [0, pi] by grid + golden section (no use of the local maxima)."""
    with mpmath.workdps(dps + 10):
        return refs.mp_max_on_interval(lambda t: _b_ctx(MP, int(p["i"]), mpmath.mpf(p["r"]), t, int(p["n"])), dps)


def printed_d3_global(p: Point) -> Any:
    """max(b_r^i(theta_loc), b_r^i(pi)): the printed alternative, theta_loc from the local-maximum search.

    Not written against a context: its ingredient ``theta_loc`` is the output of a numerical search, not a
    formula (``b_r^i`` itself is the context formula ``_b_ctx``); it is enclosed by
    :func:`_d3_global_printed_ball`, ``_b_ctx`` on balls at balls proven to hold each local maximiser."""
    r, i, n = mpmath.mpf(p["r"]), int(p["i"]), int(p["n"])
    return max([_b_ctx(MP, i, r, t, n) for t in _local_maxima(i, p["r"], n, mpmath.mp.dps)]
               + [_b_ctx(MP, i, r, mpmath.pi, n)])


def _d3_global_printed_ball(p: Point, bits: int) -> Any:
    """Ball of the printed alternative ``max(b_r^i(theta_loc), b_r^i(pi))`` (as :func:`printed_d3_global`), each
    local maximiser enclosed by :func:`_locmax_balls`."""
    i = int(p["i"])
    balls = _locmax_balls(i, p, bits)
    if isinstance(balls, str):
        return balls
    f = lambda ctx, r, t, n: _b_ctx(ctx, i, r, t, n)  # noqa: E731
    vals = [refs.on_balls(f, p["r"], Ball(b), int(p["n"]), bits=bits) for b in balls]
    return refs.max_of_balls([*vals, ball_of(_b_at_ctx(i, "pi"))(p, bits)], bits)


P.claim("text-d3-global-max", source=P.at("appendix D.3, after eq (58)"),
    statement="global maximum for b_r^i on the interval [0, pi] for i = 1, 2 is achieved either in its unique local "
              "maximum on that interval or for theta = pi",
    domain=Domain({"r": Real(1.0, 10.0, extra=(2.0,)), "n": Int(1, 10_000), "i": Choice((1, 2))},
                  constraint=lambda p: p["i"] == 2 or p["n"] >= 2, description="r in [1, 10]; b_r^1 needs n >= 2"),
    checks=[deterministic_check("numerical-maximisation", printed_d3_global, _d3_global, atol_scale=lambda p, dps: 0,
                                max_points=10, printed_ball=_d3_global_printed_ball,
                                reference_ball=lambda p, bits: _max_of_b_ball(
                                    lambda ctx, r, t, n, i=int(p["i"]): _b_ctx(ctx, i, r, t, n), p, bits))])


# ------------------------------------------------------------------ appendix F, eq (67)-(80)
def printed_eq67_ctx(ctx: Any, p: Point) -> Any:
    """lambda(x, y) = (1 - exp(-sigma^2/2 |x - y|^2))/rho, rho = 1 - exp(-2 sigma^2 r^2) (eq 67-68)."""
    g = _pair_ctx(ctx, p)
    s, r = _nums(ctx, p, "sigma", "r")
    return (1 - ctx.exp(-s**2 / 2 * g["d2"])) / (1 - ctx.exp(-2 * s**2 * r**2))


_GAUSS_N = _pair_domain(extra={"n": Int(1, 64), "sigma": Real(0.2, 2.0), "r": Real(0.3, 3.0)},
                        description="|x|, |y| <= 3, sigma in [0.2, 2], rho from r in [0.3, 3]")
P.claim("eq69", source=P.at("appendix F, eq (69) with eq (67)-(68)"),
    statement="lam_hat(x,y) = 1/rho - (1/(n rho)) sum_i cos(sigma w_i^T(x - y)) estimates lambda(x,y) = (1 - "
              "exp(-sigma^2/2 |x - y|^2))/rho unbiasedly", domain=_GAUSS_N,
    checks=[deterministic_check("characteristic-function", None, _ref_gl(1), printed_ctx=printed_eq67_ctx,
                                reference_ball=_gl_ball(1), atol_scale=lambda p, dps: 1, max_points=24,
                                description="E cos(sigma g |Delta|) = Re E exp(i sigma g |Delta|) (Lemma 2.4)"),
            _quad_check(printed_eq67_ctx, _ref_gl(1, quad=True), _gl_ball(1), _pair_domain(
                norm=(0.0, 1.0), extra={"n": Int(1, 64), "sigma": Real(0.2, 1.5), "r": Real(0.3, 3.0)},
                description="|x|, |y| <= 1, sigma <= 1.5"), atol_scale=lambda p, dps: 1, max_points=3,
                        description="E cos(sigma g |Delta|) by 1-D quadrature")])


def printed_eq74_line3_ctx(ctx: Any, p: Point) -> Any:
    """Eq (74), third line, as printed."""
    g = _pair_ctx(ctx, p)
    s, r, n = _nums(ctx, p, "sigma", "r", "n")
    rho = 1 - ctx.exp(-2 * s**2 * r**2)
    e1, e2 = ctx.exp(-s**2 / 2 * g["d2"]), ctx.exp(-s**2 * g["d2"])
    return (1 - rho) ** 2 / rho**2 + 2 * (rho - 1) / rho**2 * e1 + e2 / rho**2 + 1 / (2 * rho**2 * n) * (1 - e2) ** 2


P.claim("eq74", source=P.at("appendix F, eq (74), third line"),
    statement="E[(1 - lam_hat)^2] = (1 - rho)^2/rho^2 + (2(rho - 1)/rho^2) exp(-sigma^2/2 |Delta|^2) + (1/rho^2) "
              "exp(-sigma^2 |Delta|^2) + (1/(2 rho^2 n)) (1 - exp(-sigma^2 |Delta|^2))^2", domain=_GAUSS_N,
    checks=[deterministic_check("characteristic-function", None, _ref_gl(73), printed_ctx=printed_eq74_line3_ctx,
                                reference_ball=_gl_ball(73), max_points=24,
                                atol_scale=lambda p, dps: on_mp(printed_eq74_line3_ctx)(p) + 1)],
    notes="Lines 1-2 of eq (74) restate E[(1 - lam_hat)^2] with unevaluated expectations; its last line is eq (73) "
          "(claim hrf.eq73).")


def _eq75_head_ctx(ctx: Any, p: Point) -> Any:
    """``-1 + 2/rho - (2/rho) exp(-sigma^2/2 |Delta|^2)``: eq (75)'s second line without ``E[(1 - lam_hat)^2]``."""
    d2 = _pair_ctx(ctx, p)["d2"]
    s, r = _nums(ctx, p, "sigma", "r")
    rho = 1 - ctx.exp(-2 * s**2 * r**2)
    return -1 + 2 / rho - 2 / rho * ctx.exp(-s**2 / 2 * d2)


def printed_eq75_line2(p: Point) -> Any:
    """-1 + 2/rho - (2/rho) exp(-sigma^2/2 |Delta|^2) + E[(1 - lam_hat)^2] (the symbol's value).

    Not one context function: its printed part is the context formula :func:`_eq75_head_ctx`; the symbol
    ``E[(1 - lam_hat)^2]`` takes the reference's value (exact moments at ``dps + 15`` digits), which on the
    context would be evaluated at the check's ``dps`` and move the search's points; on balls it is enclosed
    by :func:`_eq75_line2_ball` (the head on balls plus the ball of the exact moments)."""
    return _eq75_head_ctx(MP, p) + _ref_gl(73)(p, mpmath.mp.dps)[0]


def _eq75_line2_ball(p: Point, bits: int) -> Any:
    """Ball of :func:`printed_eq75_line2`: its head on balls plus the ball of ``E[(1 - lam_hat)^2]`` (exact moments)."""
    head, eo2 = ball_of(_eq75_head_ctx)(p, bits), _gl_ball(73)(p, bits)
    with workprec(bits):
        return head + eo2


P.claim("eq75", source=P.at("appendix F, eq (75), first two lines"),
    statement="E[lam_hat^2] = 1 - 2 E[1 - lam_hat] + E[(1 - lam_hat)^2] = -1 + 2/rho - (2/rho) exp(-sigma^2/2 "
              "|Delta|^2) + E[(1 - lam_hat)^2]", domain=_GAUSS_N,
    checks=[deterministic_check("characteristic-function", printed_eq75_line2, _ref_gl(72),
                                atol_scale=lambda p, dps: abs(printed_eq75_line2(p)) + 1, max_points=24,
                                printed_ball=_eq75_line2_ball, reference_ball=_gl_ball(72),
                                description="E[(1 - lam)^2], E[lam^2] from the moments of cos(sigma g |Delta|)")],
    notes="Its last line is eq (72) (claim hrf.eq72).")


def _lam_coords_ctx(ctx: Any, p: Point) -> Any:
    """Eq (67) with ``|x - y|^2`` from the coordinates (the reference of hrf.eq76)."""
    return refs.gauss_lambda_same_length(ctx, p["r"], p["theta"], p["sigma"])


def printed_eq76_ctx(ctx: Any, p: Point) -> Any:
    """Eq (76) as printed: ``(1 - exp(-2 sigma^2 r^2 sin(theta/2)^2))/rho``."""
    s, r, t = _nums(ctx, p, "sigma", "r", "theta")
    return (1 - ctx.exp(-2 * s**2 * r**2 * ctx.sin(t / 2) ** 2)) / (1 - ctx.exp(-2 * s**2 * r**2))


_SAME_F = Domain({"r": Real(0.05, 5.0), "theta": Real(0.0, PI, extra=(PI / 2,)), "sigma": Real(0.1, 3.0)},
                 description="|x| = |y| = r in (0, 5], sigma in [0.1, 3]")
P.claim("eq76", source=P.at("appendix F, eq (76)"),
    statement="for |x| = |y| = r: lambda(theta, r) = (1 - exp(-2 sigma^2 r^2 sin(theta/2)^2))/rho is equivalent to eq "
              "(67)", domain=_SAME_F,
    checks=[_ctx_check("coordinates", printed_eq76_ctx, _lam_coords_ctx, atol_scale=lambda p, dps: 1,
                       description="eq (67) with |x - y|^2 from the coordinates of x, y")])

def printed_eq80_ctx(ctx: Any, p: Point) -> Any:
    """Eq (80) as printed: ``|Delta|^2 = 4 r^2 sin(theta/2)^2``."""
    return 4 * refs.num(ctx, p["r"]) ** 2 * ctx.sin(refs.num(ctx, p["theta"]) / 2) ** 2


P.claim("eq80", source=P.at("appendix F, eq (80)"),
    statement="for |x|^2 = |y|^2 = r^2: |Delta|^2 = 4 r^2 sin(theta/2)^2",
    domain=Domain({"r": Real(0.0, 10.0), "theta": Real(0.0, PI, extra=(PI / 2,))}),
    checks=[_ctx_check("coordinates", printed_eq80_ctx, lambda ctx, p: refs.same_length_distance_sq(
        ctx, p["r"], p["theta"]), lambda p, v: mpmath.mpf(p["r"]) ** 2 + 1,
                       atol_scale=lambda p, dps: mpmath.mpf(p["r"]) ** 2 + 1)])


def _f_not_both(p: Point, dps: int) -> tuple[Any, Any, Any]:
    """``lhs`` = a positive floor (10^(5-dps) of the scale), ``rhs`` = MSE at theta = pi: holds iff MSE(pi) > 0."""
    with mpmath.workdps(dps + 10):
        q = dict(p, nx=p["r"], ny=p["r"], theta=+mpmath.pi, lam="gauss")
    v, e = _ref_hyb_mse(q, dps, 0)
    return mpmath.mpf(10) ** (5 - dps) * _scale(q, dps) + 10 * e, v, e


def _f_not_both_balls(p: Point, bits: int) -> tuple[Any, Any]:
    """Balls of the floor ``10^(5-dps) scale`` (the check's number, exact) and of the hybrid's MSE at
    ``theta = pi`` (exactly: a ball of pi) from the exact moments (as :func:`_f_not_both`)."""
    dps = dps_of_bits(bits)
    with mpmath.workdps(dps + 10):
        q = dict(p, nx=p["r"], ny=p["r"], theta=+mpmath.pi, lam="gauss")
        floor = to_ball(mpmath.mpf(10) ** (5 - dps) * _scale(q, dps))
    with workprec(bits):
        mse = _hyb_mse_ball("gauss", 0)(dict(q, theta=Ball(arb.pi())), bits)
    return floor, mse


P.claim("text-f-not-both", source=P.at("appendix F, after eq (68)"),
    statement="[with trigonometric features estimating lambda] the variance never zeroes out for both theta_{x,y} = 0 "
              "and theta_{x,y} = pi",
    domain=_pair_domain(norm=(0.05, 3.0), extra={**_MN, "sigma": Real(0.2, 2.0)}, same_length=True),
    checks=[inequality_check("moment-expansion", _f_not_both, max_points=16, search=False, sides_ball=_f_not_both_balls,
                             description="MSE at theta = pi (Thm 3.1 expansion) > a floor of 10^(5-dps) x scale")],
    notes="With hrf.text-f-zero-variance (zero at theta = 0) this is the 'but not for both' part.")


def _lam_range(p: Point, dps: int) -> tuple[Any, Any, Any]:
    """max(-lambda, lambda - 1) <= 0, lambda of eq (67) from coordinates (|x| = |y| = r)."""
    v, e = mp_reference(_lam_coords_ctx)(p, dps)
    return max(-v, v - 1), mpmath.mpf(0), e


def _lam_range_balls(p: Point, bits: int) -> tuple[Any, Any]:
    """Balls of ``max(-lambda, lambda - 1)`` (lambda of eq (67) from coordinates, :func:`_lam_coords_ctx`) and 0.

    Near ``theta = pi`` with large ``sigma r``, ``1 - lambda`` is ``exp(-2 sigma^2 r^2)`` times a tiny factor
    (about 1e-226 at ``r = 5, sigma = 3``): the ball is recomputed at 4 and 16 times the precision until its
    sign is decided (closed forms: milliseconds)."""
    for b in (bits, 4 * bits, 16 * bits):
        v = eval_on_balls(_lam_coords_ctx, p, b)
        with workprec(b):
            lhs = (-v).max(v - 1)
        if not lhs.contains(0) or (lhs.is_exact() and lhs.is_zero()):
            break
    return lhs, 0


P.claim("text-f-lambda-range", source=P.at("sec 2.2 (lambda^k: R^d x R^d -> [0, 1]) with appendix F, eq (67)-(68)"),
    statement="for fixed L2-norm |x| = |y| = r the normalised bipolar Gaussian lambda of eq (67)-(68) is a "
              "lambda-coefficient of the HRF framework: lambda(x, y) in [0, 1]", domain=_SAME_F,
    checks=[inequality_check("coordinates", _lam_range, sides_ball=_lam_range_balls,
                             description="max(-lambda, lambda - 1) <= 0, with the optimiser")],
    notes="Appendix F states eq (67) as lambda: R^d x R^d -> R under the premise |x| = |y| = r; the paper never "
          "asserts lambda in [0, 1] for unequal norms. There lambda(x, y) <= 1 iff |x - y| <= 2r, e.g. r = 1, x = "
          "1.5 e1, y = -1.5 e1, sigma = 1: lambda = (1 - e^-4.5)/(1 - e^-2) = 1.1437. The estimator stays unbiased "
          "(lam_hat is independent of the base estimators) and Thm F.1 holds, but it is no longer a convex "
          "combination; rfcheck.estimators.hrf raises ValueError there unless allow_lambda_above_one=True.")


# ------------------------------------------------------------------- appendix H.2, (83)-(85)
def printed_eq85_ctx(ctx: Any, p: Point) -> Any:
    """Eq (85) as printed, its Re row plus i times its Im row: ``(alpha^2 + beta^2) alpha r_i + alpha r_j`` and
    ``(alpha^2 + beta^2) beta r_i - beta r_j``."""
    a, b, ri, rj = _nums(ctx, p, "alpha", "beta", "ri", "rj")
    s = a**2 + b**2
    return (s * a * ri + a * rj) + (s * b * ri - b * rj) * 1j


def printed_eq84_ctx(ctx: Any, p: Point) -> Any:
    """Left side of eq (84) times (alpha^2 + beta^2)."""
    a, b, ri, rj = _nums(ctx, p, "alpha", "beta", "ri", "rj")
    s = a**2 + b**2
    return s * ((a + b * 1j) * ri + (a - b * 1j) / s * rj)


def _eq83_ctx(ctx: Any, p: Point) -> Any:
    """``(alpha^2 + beta^2)`` times the left side of eq (83), with the complex division."""
    a, b, ri, rj = _nums(ctx, p, "alpha", "beta", "ri", "rj")
    z = a + b * 1j
    return (a**2 + b**2) * (z * ri + rj / z)


_AB = Domain({"alpha": Real(-3.0, 3.0, extra=(0.0,)), "beta": Real(-3.0, 3.0, extra=(0.0,)),
              "ri": Real(-2.0, 2.0, extra=(0.0,)), "rj": Real(-2.0, 2.0, extra=(0.0,))},
             constraint=lambda p: p["alpha"] ** 2 + p["beta"] ** 2 > 1e-6,
             description="alpha + beta i != 0, real r_i,k, r_j,k")
P.claim("eq85", source=P.at("appendix H.2, eq (83)-(85)"),
    statement="(alpha + beta i) r_i + r_j/(alpha + beta i) = 0 (eq 83) is (alpha + beta i) r_i + (alpha - beta "
              "i)/(alpha^2 + beta^2) r_j = 0 (eq 84), i.e. Re: (alpha^2 + beta^2) alpha r_i + alpha r_j = 0 and Im: "
              "(alpha^2 + beta^2) beta r_i - beta r_j = 0 (eq 85)", domain=_AB,
    checks=[_ctx_check("complex-arithmetic", printed_eq85_ctx, _eq83_ctx, atol_scale=lambda p, dps: 1,
                       description="(alpha^2 + beta^2) x (left side of eq 83) vs Re + i Im of eq (85)"),
            _ctx_check("eq84", printed_eq84_ctx, _eq83_ctx, atol_scale=lambda p, dps: 1, max_points=12)],
    notes="Compared after multiplying by alpha^2 + beta^2 > 0, which does not change the solution set.")


def _eq102(p: Point, budget: Budget, seed: int) -> PointEval:
    """Sum over (i, j) of the indicators of eq (103) for hard (nearest-center) cluster assignments."""
    rng = np.random.default_rng(int(p["seed"]))
    d, nq, nk = int(p["d"]), int(p["nq"]), int(p["nk"])
    cq, ck = rng.normal(size=(nq, d)), rng.normal(size=(nk, d))
    xs, ys = rng.normal(size=(64, d)) * 2, rng.normal(size=(64, d)) * 2
    iq = np.argmin(((xs[:, None, :] - cq[None]) ** 2).sum(-1), axis=1)
    jk = np.argmin(((ys[:, None, :] - ck[None]) ** 2).sum(-1), axis=1)
    psi_x = np.eye(nq)[iq]  # Psi_i(x): 1 iff x is in query cluster i
    psi_y = np.eye(nk)[jk]
    sums = np.einsum("ai,aj->a", psi_x, psi_y)  # sum_{i,j} Psi_i(x) Psi_j(y) for pairs (x_a, y_a)
    k = int(np.argmax(np.abs(sums - 1)))
    ev = compare_deterministic(p, 1.0, float(sums[k]), 0, rtol=0, atol=1e-15)
    if not ev.decided:
        return ev
    # the worst pair's sum in exact integer arithmetic over the 0/1 indicators (no float64 rounding)
    exact = sum(int(psi_x[k, i]) * int(psi_y[k, j]) for i in range(nq) for j in range(nk))
    return certify_equal(ev, arb(1), arb(exact), 0.0, 1e-15)


P.claim("eq102", source=P.at("appendix H.2, Def H.2, eq (102)-(103)"),
    statement="with lam_hat^{i,j}(x,y) = Psi_i(x) Psi_j(y) (cluster indicators, eq 103) the constraint sum_{i,j} "
              "lam_hat^{i,j}(x,y) = 1 (eq 102) holds",
    domain=Domain({"seed": Int(0, 10_000, scale="linear"), "d": Int(1, 8), "nq": Int(1, 6, scale="linear"),
                   "nk": Int(1, 6, scale="linear")},
                  description="random centers and points, hard nearest-center assignment (each point in one cluster)"),
    checks=[Check("indicators", 1, _eq102, search=False, max_points=12,
                  description="64 random pairs per point: sum of the indicator products")],
    notes="Holds whenever every input lies in exactly one cluster (a partition, as k-means gives).")


# ------------------------------------------------------------------- appendix D.1, eq (44)
def printed_eq44_line2a_ctx(ctx: Any, p: Point) -> Any:
    """(1/4)(1 - 2(1 - 2 theta/pi) + n (1/n^2) + n(n - 1)(1/n^2)(1 - 2 theta/pi)^2)."""
    t, n = refs.num(ctx, p["theta"]), p["n"]
    u = 1 - 2 * t / ctx.pi
    return (1 - 2 * u + refs.num(ctx, n) / refs.num(ctx, n**2)
            + refs.num(ctx, n * (n - 1)) / refs.num(ctx, n**2) * u**2) / 4


P.claim("eq44.line2a", source=P.at("appendix D.1, eq (44), first expression of the second line"),
    statement="c = E[lam_hat^2] = (1/4)(1 - 2(1 - 2theta/pi) + n (1/n^2) + n(n - 1)(1/n^2)(1 - 2theta/pi)^2)",
    domain=_LAM_DOMAIN, checks=[_binomial_check(2, printed_eq44_line2a_ctx)],
    notes="The step before the faulty simplification of hrf.eq44.line2: it holds, so the error is in the "
          "simplification (the '1 - 2(1 - 2theta/pi) + 1/n' = '4theta/pi - (1 - 1/n)' terms).")


# ------------------------------------------- appendix F, after eq (68): estimating the exponential in lambda
def _f_exp_moments(kind: str, p: Point, dps: int) -> tuple[Any, Any, Any]:
    """Memoised ``refs.feature_exp_moments_quad``: ``(E f, E f^2, err)`` of a feature of eq (67)'s exponential."""
    key = ("fexp", kind, _key(p, "r", "theta", "sigma"), dps)
    if key not in _CACHE:
        _CACHE[key] = refs.feature_exp_moments_quad(kind, p["r"], p["theta"], p["sigma"], dps)
    return _CACHE[key]


def _lam_var_check(name: str, kind: str, theta: Any, zero: bool, description: str, max_points: int = 16) -> Check:
    """``Var lam_hat`` (eq 69 form, ``kind`` features, ``rfcheck.references.hrf.lambda_estimator_variance``) at
    ``theta`` (0 or ``mpmath.pi``, taken exactly on balls).  ``zero``: ``lhs = Var lam_hat``, ``rhs = 0`` (holds
    iff the variance vanishes); otherwise ``lhs`` = a floor ``10^(5-dps) E[f^2]/(n rho^2) + 10 err``,
    ``rhs = Var lam_hat`` (holds iff it exceeds the floor)."""
    def lhs_rhs(p: Point, dps: int) -> tuple[Any, Any, Any]:
        m = _f_exp_moments(kind, dict(p, theta=theta), dps)
        v, scale, e = refs.lambda_estimator_variance(kind, p["r"], theta, p["sigma"], int(p["n"]), dps, moments=m)
        return (v, mpmath.mpf(0), e) if zero else (mpmath.mpf(10) ** (5 - dps) * scale + 10 * e, v, e)

    def balls(p: Point, bits: int) -> tuple[Any, Any]:
        th = "pi" if theta is mpmath.pi else float(theta)
        var, scale = refs.lambda_estimator_variance_ball(kind, p["r"], th, p["sigma"], int(p["n"]), bits)
        if zero:
            return var, 0
        with workprec(bits):
            return arb(10) ** (5 - dps_of_bits(bits)) * scale, var

    return inequality_check(name, lhs_rhs, max_points=max_points, search=False, sides_ball=balls,
                            description=description)


_F_EST = Domain({"r": Real(1e-3, 3.0), "sigma": Real(0.2, 2.0), "n": Int(1, 64)},
                description="|x| = |y| = r in (0, 3], sigma in [0.2, 2], n lambda-features; theta fixed by the claim")
_F_EST_STMT = "The exponential in lambda can be estimated either by trigonometric or positive random features. [...] "

#: id suffix, statement, checks, notes
for _sfx, _stmt, _checks, _notes in (
    ("trig-zero-at-0", _F_EST_STMT + "for the fixed input lengths, in the former case the variance of the estimator is "
                                     "zero for theta_{x,y} = 0",
     [_lam_var_check("quadrature", "trig", 0, True, "Var of lam_hat with cos(sigma w^T (x - y)) features at theta = 0 "
                                                    "(1-D Gaussian quadrature) <= 0")],
     "'The estimator' is read as the estimator lam_hat of lambda (eq 69 form); its variance is "
     "Var(f)/(n rho^2). Closed form (tested): Var(cos) = (1 - exp(-sigma^2 |Delta|^2))^2 / 2."),
    ("pos-zero-at-pi", _F_EST_STMT + "for the fixed input lengths, [...] in the latter it is zero for theta_{x,y} = pi",
     [_lam_var_check("quadrature", "pos", mpmath.pi, True,
                     "Var of lam_hat with exp(sigma w^T x - sigma^2 |x|^2) exp(sigma w^T y - sigma^2 |y|^2) "
                     "features at theta = pi (quadrature) <= 0")],
     "Positive features of exp(-sigma^2/2 |x - y|^2) = exp(-sigma^2|x|^2/2) exp(-sigma^2|y|^2/2) "
     "exp(sigma^2 x^T y). Closed form (tested): Var(f) = exp(2 sigma^2 |x + y|^2 - 2 sigma^2 (|x|^2 + |y|^2)) - "
     "exp(-sigma^2 |x - y|^2), zero iff x + y = 0."),
    ("not-both", "[estimating the exponential in lambda by trigonometric or positive random features] the variance "
                 "never zeroes out for both theta_{x,y} = 0 and theta_{x,y} = pi",
     [_lam_var_check("quadrature-trig-at-pi", "trig", mpmath.pi, False,
                     "trigonometric features: Var lam_hat at theta = pi > floor"),
      _lam_var_check("quadrature-pos-at-0", "pos", 0, False, "positive features: Var lam_hat at theta = 0 > floor")],
     "With the two claims above: each estimator zeroes at exactly one end. Both checks must hold.")):
    P.claim(f"text-f-lambda-estimator.{_sfx}", source=P.at("appendix F, after eq (68)"), statement=_stmt,
            domain=_F_EST, checks=_checks, notes=_notes)


# ------------------------------------------------------------------- appendix D.4: the rate 1/sqrt(mn)
def _d4_rate(p: Point, budget: Budget, seed: int) -> PointEval:
    """Exponent of ``1/sqrt(mn)`` (printed: 1/2) vs that of ``1/d_est`` in ``mn`` along ``(s m, s n)``.

    ``Theta`` between powers of ``mn`` means equal exponents.  The exponent of ``d_est`` is the local log-log
    slope ``log(d(2s)/d(s))/log 4`` at ``s`` with ``s^2 m n ~ 1e24``; its error bar is the change of that
    slope over the last doubling (the slope is monotone and converging).
    """
    m, n, dim = int(p["m"]), int(p["n"]), refs.hrf_feature_dim
    s = max(1, math.isqrt(10**24 // (m * n)))
    with mpmath.workdps(budget.dps):
        ref, prev = (refs.hrf_feature_dim_exponent(m, n, k, budget.dps) for k in (s, max(1, s // 2)))
        ev = compare_deterministic(p, mpmath.mpf(1) / 2, ref, abs(ref - prev) + mpmath.mpf(10) ** (5 - budget.dps),
                                   rtol=budget.rtol)
    ev.note = (f"along (m, n) x s, s = {s} (mn = {s * s * m * n:.3g}): d_est = {dim(s * m, s * n)}, "
               f"(1/sqrt(mn))/(1/d_est) = {dim(s * m, s * n) / math.sqrt(s * s * m * n):.4g}; "
               f"exponent of d_est in mn = {float(ref):.7f} (printed identity needs 1/2)")
    return ev


P.claim("text-d4-rate", source=P.at("appendix D.4 (with appendix L: Theta(mn)-dimensional HRFs)"),
    statement="the relative error decreases (as a function of m and n) as 1/sqrt(mn) = Theta(1/d_est), where d_est "
              "stands for the number of random features of the resulting estimator",
    domain=Domain({"m": Int(1, 64), "n": Int(1, 64)}, description="base and lambda feature counts; the check scales "
                  "both by s to mn ~ 1e24"),
    checks=[not_certifiable(
        Check("feature-count-exponent", 1, _d4_rate, search=False, max_points=8,
              description="exponent 1/2 of 1/sqrt(mn) vs the log-log slope of d_est = dim Psi (eq 11) in mn"),
        "the reference is an asymptotic exponent (a limit s -> inf along (s m, s n)), estimated by the log-log slope "
        "of d_est at mn ~ 1e24 with a convergence error bar, not an enclosure of the limit; no ball is evaluated")],
    notes="Checks the asserted identity 1/sqrt(mn) = Theta(1/d_est) only, with d_est the dimension of the Lemma 2.3 "
          "feature map Psi(z) of the angular hybrid (4m + 4mn, Theta(mn) as appendix L states). The 1/sqrt(mn) rate "
          "of the relative error itself is not checked here. 1/sqrt(mn) = Theta(1/sqrt(d_est)) would hold.")

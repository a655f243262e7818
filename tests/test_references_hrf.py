"""rfcheck.references.hrf: the exact-moment references of the HRF claims, on mpmath and on balls.

* every enclosure (``on_balls``) contains the 50-digit mpmath value of the same function, and
  the mpmath values agree with independent computations (1-d quadratures of the defining
  Gaussian expectations, the binomial sum, the numpy estimators on the same draws);
* a planted wrong formula (the misprints of HRF eq (36), (44), (47), a sign flip) gives
  disjoint balls: ``certified_equal`` says REFUTED;
* a ball made artificially wide is never certified, neither by ``certified_equal`` nor through
  the built-in checks (``deterministic_check``, ``inequality_check`` with ``reference_ball`` /
  ``sides_ball``), and a lower bound of a maximum never certifies that a bound holds.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import acb, arb

from rfcheck.backends import FP, MP
from rfcheck.certify import certified_equal, certified_inequality
from rfcheck.claims import BUDGETS
from rfcheck.claims._common import deterministic_check, inequality_check, not_certifiable
from rfcheck.estimators import hrf as hy
from rfcheck.references import hrf as R

POINTS = [(0.7, 1.3, 2.1), (0.0, 1.1, 0.4), (1.9, 1.9, math.pi), (2.5, 0.3, 0.0), (1.2, 0.8, math.pi / 2)]
BITS = 200


def _contains(ball: arb | acb, value: mpmath.mpf | mpmath.mpc) -> bool:
    """Whether ``ball`` contains the 50-digit ``value`` up to its own rounding (10^-45 relative)."""
    slack = abs(value) * mpmath.mpf(10) ** -45 + mpmath.mpf(10) ** -60
    if isinstance(ball, acb):
        return (_contains(ball.real, mpmath.re(value) if isinstance(value, mpmath.mpc) else value)
                and _contains(ball.imag, mpmath.im(value) if isinstance(value, mpmath.mpc) else mpmath.mpf(0)))
    lo, hi = mpmath.mpf(ball.lower().str(60, radius=False)), mpmath.mpf(ball.upper().str(60, radius=False))
    return lo - slack <= value <= hi + slack


def _mp50(f, *args):
    with mpmath.workdps(50):
        return f(MP, *(mpmath.mpf(a) if isinstance(a, float) else a for a in args))


def _gauss_1d(f) -> mpmath.mpf:
    """``E f(g)``, ``g ~ N(0, 1)``, by mpmath quadrature at the working precision."""
    return mpmath.quad(lambda t: f(t) * mpmath.exp(-t * t / 2), [-mpmath.inf, -5, 0, 5, mpmath.inf]) / mpmath.sqrt(
        2 * mpmath.pi)


@pytest.mark.parametrize("nx, ny, theta", POINTS)
def test_base_moments_against_quadrature(nx: float, ny: float, theta: float) -> None:
    """The MGF closed forms (E YZ = exp(2 x.y) cos(|x|^2 - |y|^2) included) equal 1-d quadratures of the
    defining expectations at 50 digits, and their balls contain those values."""
    with mpmath.workdps(50):
        g = R.pair_geometry(MP, mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta))
        zz, dd = mpmath.sqrt(g["z2"]), mpmath.sqrt(g["d2"])
        ey = _gauss_1d(lambda t: mpmath.cosh(zz * t))
        ey2 = _gauss_1d(lambda t: mpmath.cosh(zz * t) ** 2)
        ez = _gauss_1d(lambda t: mpmath.cos(dd * t))
        ez2 = _gauss_1d(lambda t: mpmath.cos(dd * t) ** 2)
        if zz == 0:
            eyz = ez
        else:  # Delta = alpha z/|z| + beta e_perp, w.z = |z| g1, w.Delta = alpha g1 + beta g2
            alpha = (g["x2"] - g["y2"]) / zz
            beta = mpmath.sqrt(max(g["d2"] - alpha**2, 0))
            eyz = (_gauss_1d(lambda t: mpmath.cosh(zz * t) * mpmath.cos(alpha * t))
                   * _gauss_1d(lambda t: mpmath.cos(beta * t)))
        quad = [ey, ey2, ez, ez2, eyz]
        exact = _mp50(R.base_moments, nx, ny, theta)
        for q, e in zip(quad, exact, strict=True):
            assert abs(q - e) <= mpmath.mpf(10) ** -40 * (abs(e) + 1)
    balls = R.on_balls(R.base_moments, nx, ny, theta, bits=BITS)
    for b, e in zip(balls, exact, strict=True):
        assert _contains(b, e)
        assert b.rad() < 1e-50 * (abs(b.mid()) + 1)


@pytest.mark.parametrize("nx, ny, theta", POINTS)
@pytest.mark.parametrize("m, n, shared", [(1, 1, 0), (3, 5, 1), (16, 2, 0), (64, 64, 1)])
def test_hybrid_mse_balls_contain_mpmath(nx: float, ny: float, theta: float, m: int, n: int, shared: int) -> None:
    def angular(ctx, nx, ny, t, m, n):
        return R.hybrid_mse(ctx, nx, ny, t, m, *R.angular_lambda_moments(ctx, t, n), shared)

    def gauss(ctx, nx, ny, t, m, n, sigma, r):
        return R.hybrid_mse(ctx, nx, ny, t, m, *R.gauss_lambda_moments(ctx, nx, ny, t, n, sigma, r), shared)

    for f, extra in ((angular, ()), (gauss, (0.8, 1.1))):
        v = _mp50(f, nx, ny, theta, m, n, *extra)
        b = R.on_balls(f, nx, ny, theta, m, n, *extra, bits=BITS)
        assert _contains(b, v), (f.__name__, b, v)
        assert mpmath.isfinite(v) and v >= -mpmath.mpf(10) ** -40 * (abs(v) + 1)  # an MSE


def test_hybrid_mse_against_closed_form_library() -> None:
    """The moment expansion equals the library's corrected closed form (independent derivation)."""
    from rfcheck.closed_forms import hrf as cf

    for nx, ny, theta in POINTS[:3]:
        for m, n, shared in ((2, 3, 0), (5, 7, 1)):
            v = _mp50(lambda ctx, *a, sh=shared: R.hybrid_mse(ctx, *a[:4], *R.angular_lambda_moments(ctx, a[2], a[4]),
                                                              sh), nx, ny, theta, m, n)
            ref = cf.log_mse_angular_hybrid(nx, ny, theta, m, n, shared, backend="mpmath", dps=50)
            with mpmath.workdps(50):
                assert abs(mpmath.log(v) - ref) < mpmath.mpf(10) ** -30


@pytest.mark.parametrize("dps", [15, 40, 60])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 1000, 6400])
def test_binomial_coefficients_are_mpmaths_values(n: int, dps: int) -> None:
    """The binomial sum's coefficients (exact integers rounded once) are mpmath.binomial's values, bit
    for bit, and exact where they fit the working precision."""
    with mpmath.workdps(dps):
        got = R._binomials(n)
        assert len(got) == n + 1
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n} & set(range(n + 1))):
            assert got[k] == mpmath.binomial(n, k), (n, k)
            if math.comb(n, k).bit_length() <= mpmath.mp.prec:
                assert int(got[k]) == math.comb(n, k)


@pytest.mark.parametrize("theta", [0.0, 0.3, math.pi / 2, 2.9, math.pi])
@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_angular_lambda_moments_binomial_sum(theta: float, n: int) -> None:
    """E lam, E lam^2 equal the binomial sums over K ~ Bin(n, theta/pi); balls contain them."""
    with mpmath.workdps(50):
        q = mpmath.mpf(theta) / mpmath.pi
        pk = [mpmath.binomial(n, k) * q**k * (1 - q) ** (n - k) for k in range(n + 1)]
        m1 = mpmath.fsum(pk[k] * k for k in range(n + 1)) / n
        m2 = mpmath.fsum(pk[k] * k * k for k in range(n + 1)) / n**2
        e1, e2 = R.angular_lambda_moments(MP, mpmath.mpf(theta), n)
        assert abs(e1 - m1) < mpmath.mpf(10) ** -45 and abs(e2 - m2) < mpmath.mpf(10) ** -45
    b1, b2 = R.on_balls(R.angular_lambda_moments, theta, n, bits=BITS)
    assert _contains(b1, m1) and _contains(b2, m2)


def test_gauss_lambda_moments_against_simulation() -> None:
    """E lam of eq (69) against the numpy estimator averaged over many draws (a loose, independent check)."""
    x, y = np.array([0.4, 0.0]), np.array([0.1, 0.5])
    sigma, r, n = 0.9, 0.8, 3
    tau = np.random.default_rng(1).standard_normal((200_000, n, 2))
    lam = hy.normalized_gauss_lambda(x, y, tau, sigma, r, allow_lambda_above_one=True)
    nx, ny = float(np.linalg.norm(x)), float(np.linalg.norm(y))
    theta = math.acos(float(x @ y) / (nx * ny))
    m1, m2 = (float(v) for v in _mp50(R.gauss_lambda_moments, nx, ny, theta, n, sigma, r))
    se1, se2 = lam.std() / math.sqrt(lam.size), (lam**2).std() / math.sqrt(lam.size)
    assert abs(lam.mean() - m1) < 5 * se1 and abs((lam**2).mean() - m2) < 5 * se2


@pytest.mark.parametrize("z", [[0.5 + 1.2j, -0.3], [3 - 2j, 1j], [12 + 5j, 0.1 - 0.2j]])
def test_gaussian_exp_dot_ball(z: list[complex]) -> None:
    """The rigorous quadrature of E exp(w.z) contains the 50-digit exp(z.z/2) (Lemma 2.4) with a tight ball;
    the planted exp(|z|^2/2) (the Hermitian square) is disjoint from it."""
    b = R.gaussian_exp_dot_ball(z, 160)
    with mpmath.workdps(50):
        exact = mpmath.exp(mpmath.fsum(mpmath.mpc(c) ** 2 for c in z) / 2)
    assert _contains(b, exact)
    assert b.real.rad() < 1e-30 * abs(b).mid()
    from rfcheck.arb_backend import workprec

    with workprec(160):
        zb = [acb(c.real, c.imag) for c in z]
        closed = (sum(c * c for c in zb) / 2).exp()
        planted = (sum(c.real**2 + c.imag**2 for c in zb) / 2).exp()  # the Hermitian square
    assert certified_equal(b, closed, 1e-25) == "HOLDS"
    assert certified_equal(acb(planted), b) == "REFUTED"


def test_estimators_on_draws_match_numpy() -> None:
    """The ctx transcriptions of eq (2), (3), (16), (69) on given draws equal rfcheck.estimators.hrf's numpy estimators,
    and their balls contain the 50-digit values."""
    rng = np.random.default_rng(3)
    x, y = [0.7, -0.2], [0.3, 1.1]
    w = rng.standard_normal((5, 2))
    xs, ys = np.array(x), np.array(y)
    pairs = [
        (lambda ctx: R.sm_trig_on_draws(ctx, x, y, w), hy.sm_trig(xs, ys, w)),
        (lambda ctx: R.sm_pos_on_draws(ctx, x, y, w), hy.sm_pos(xs, ys, w)),
        (lambda ctx: R.cexp_scalar_on_draws(ctx, 1j, x, y, w), hy.sm_cexp(1j * np.eye(2), xs, ys, w)),
        (lambda ctx: R.cexp_scalar_on_draws(ctx, 1, x, y, w), hy.sm_cexp(np.eye(2), xs, ys, w)),
        (lambda ctx: R.gauss_lambda_on_draws(ctx, x, y, w, 0.7, 1.3),
         hy.normalized_gauss_lambda(xs, ys, w, 0.7, 1.3, allow_lambda_above_one=True)),
    ]
    for f, ref in pairs:
        assert abs(complex(f(FP)) - complex(ref)) < 1e-12 * (abs(ref) + 1)
        with mpmath.workdps(50):
            v = f(MP)
        assert _contains(R.on_balls(f, bits=BITS), v)


def test_planted_misprints_give_disjoint_balls() -> None:
    """HRF's misprints against the references, on balls: binom(m, 2) for m(m-1) (eq 36), the dropped terms of
    eq (44), E[lam(1 - lam)] for E[(1 - lam)^2] (eq 47): REFUTED; the correct forms HOLD."""
    nx = ny = 1.25
    theta, m, n = 2.0, 4, 3

    def es12_wrong(ctx, nx, ny, t, m):
        g = R.pair_geometry(ctx, nx, ny, t)
        eyz = R.base_moments(ctx, nx, ny, t)[4]
        return (m * (m - 1) / 2 * g["sm"] ** 2 + m * eyz) / m**2

    def es12_right(ctx, nx, ny, t, m):
        g = R.pair_geometry(ctx, nx, ny, t)
        eyz = R.base_moments(ctx, nx, ny, t)[4]
        return (m * (m - 1) * g["sm"] ** 2 + m * eyz) / m**2

    ref = R.on_balls(lambda ctx, *a: R.hybrid_moments(ctx, *a)["ES12"], nx, ny, theta, m, bits=BITS)
    assert certified_equal(R.on_balls(es12_wrong, nx, ny, theta, m, bits=BITS), ref) == "REFUTED"
    assert certified_equal(R.on_balls(es12_right, nx, ny, theta, m, bits=BITS), ref, 1e-40) == "HOLDS"

    def eq44(ctx, t, n):
        q = t / ctx.pi
        return (4 * q + (1 - 1 / n) * (1 - 2 * q) ** 2) / 4

    lam2 = R.on_balls(lambda ctx, t, n: R.angular_lambda_moments(ctx, t, n)[1], theta, n, bits=BITS)
    assert certified_equal(R.on_balls(eq44, theta, n, bits=BITS), lam2) == "REFUTED"

    def mse(second_coeff):
        def f(ctx, r, t, m, n):
            q = t / ctx.pi
            c2 = q * (1 - 1 / n - q + q / n) if second_coeff == "printed" else (1 - q) * (1 - q + q / n)
            return (q * (q - q / n + 1 / n) / (2 * m) * ctx.exp(8 * r**2 * ctx.cos(t / 2) ** 2 - 2 * r**2)
                    * (1 - ctx.exp(-4 * r**2 * ctx.cos(t / 2) ** 2)) ** 2
                    + c2 / (2 * m) * ctx.exp(2 * r**2) * (1 - ctx.exp(-4 * r**2 * ctx.sin(t / 2) ** 2)) ** 2)
        return f

    ref = R.on_balls(lambda ctx, r, t, m, n: R.hybrid_mse(ctx, r, r, t, m, *R.angular_lambda_moments(ctx, t, n), 0),
                     nx, theta, m, n, bits=BITS)
    assert certified_equal(R.on_balls(mse("printed"), nx, theta, m, n, bits=BITS), ref) == "REFUTED"
    assert certified_equal(R.on_balls(mse("corrected"), nx, theta, m, n, bits=BITS), ref, 1e-40) == "HOLDS"


def test_widened_ball_is_never_certified() -> None:
    """Widening the reference ball until it covers the printed value turns REFUTED into None, directly and through
    deterministic_check, whose point then says why it is not certified."""
    budget = BUDGETS["default"]
    point = {"theta": 2.0, "n": 3}

    def printed(ctx, p):
        q = p["theta"] / ctx.pi
        return (4 * q + (1 - 1 / p["n"]) * (1 - 2 * q) ** 2) / 4

    def ref(p, dps):
        with mpmath.workdps(dps + 10):
            return R.angular_lambda_moments(MP, mpmath.mpf(p["theta"]), p["n"])[1], mpmath.mpf(10) ** (-dps - 5)

    def ball(p, bits):
        return R.on_balls(lambda ctx, t, n: R.angular_lambda_moments(ctx, t, n)[1], p["theta"], p["n"], bits=bits)

    def wide(p, bits):
        return ball(p, bits) + arb(0, 1)

    ev = deterministic_check("c", None, ref, printed_ctx=lambda ctx, p: printed(ctx, {**p, "n": R.num(ctx, p["n"])}),
                             reference_ball=ball).evaluate(point, budget, 0)
    assert ev.decided and ev.disc > 1 and ev.extra["certified"] is True
    ev = deterministic_check("c", None, ref, printed_ctx=lambda ctx, p: printed(ctx, {**p, "n": R.num(ctx, p["n"])}),
                             reference_ball=wide).evaluate(point, budget, 0)
    assert ev.decided and ev.disc > 1 and ev.extra["certified"] is False
    assert "overlap" in ev.extra["not_certified"]
    for k in range(0, 200, 20):  # however wide, never a verdict other than None
        w = ball(point, 128) + arb(0, 2.0**-k)
        v = certified_equal(R.on_balls(lambda ctx: printed(ctx, {"theta": R.num(ctx, 2.0), "n": R.num(ctx, 3)}),
                                       bits=128), w)
        assert v in ("REFUTED", None)
        if w.rad() > 0.1:
            assert v is None


def test_lower_bound_of_a_maximum_certifies_violations_only() -> None:
    """inequality_check(lhs_ball_is_lower_bound=True): a violation above the lower bound is certified; a bound that
    holds at the lower bound is not certified (the maximum could be larger)."""
    budget = BUDGETS["default"]

    def lhs_rhs(p, dps):
        return mpmath.mpf(p["lhs"]), mpmath.mpf(p["rhs"]), mpmath.mpf(0)

    def sides(p, bits):
        return arb(p["lhs"]), arb(p["rhs"])

    check = inequality_check("c", lhs_rhs, sides_ball=sides, lhs_ball_is_lower_bound=True)
    ev = check.evaluate({"lhs": 2.0, "rhs": 1.0}, budget, 0)
    assert ev.extra["certified"] is True
    ev = check.evaluate({"lhs": 1.0, "rhs": 2.0}, budget, 0)
    assert ev.decided and ev.extra["certified"] is False and "lower bound" in ev.extra["not_certified"]
    assert certified_inequality(arb(1.0), arb(2.0)) == "HOLDS"  # what the flag withholds


def test_lower_bound_of_the_right_side_certifies_holding_only() -> None:
    """inequality_check(rhs_ball_is_lower_bound=True) (HRF sec 4's base maximum, enclosed at its end point): a bound
    holding at the lower bound of the rhs is certified; a violation of it is not (the rhs could be larger)."""
    budget = BUDGETS["default"]

    def lhs_rhs(p, dps):
        return mpmath.mpf(p["lhs"]), mpmath.mpf(p["rhs"]), mpmath.mpf(0)

    def sides(p, bits):
        return arb(p["lhs"]), arb(p["rhs"])

    check = inequality_check("c", lhs_rhs, sides_ball=sides, rhs_ball_is_lower_bound=True)
    ev = check.evaluate({"lhs": 1.0, "rhs": 2.0}, budget, 0)
    assert ev.decided and ev.disc < 1 and ev.extra["certified"] is True
    ev = check.evaluate({"lhs": 2.0, "rhs": 1.0}, budget, 0)
    assert ev.decided and ev.disc > 1 and ev.extra["certified"] is False and "lower bound" in ev.extra["not_certified"]
    assert certified_inequality(arb(2.0), arb(1.0)) == "REFUTED"  # what the flag withholds


def test_not_certifiable_states_why() -> None:
    budget = BUDGETS["default"]
    check = not_certifiable(deterministic_check("c", lambda p: mpmath.mpf(1), lambda p, dps: (mpmath.mpf(2), 0)),
                            "only Monte Carlo")
    ev = check.evaluate({}, budget, 0)
    assert ev.decided and ev.extra == {"certified": False, "not_certified": "only Monte Carlo"}


def test_grid_argmax_and_rel_error_argmax() -> None:
    t = R.grid_argmax(lambda u: -(u - 0.123456) ** 2, 0.0, 1.0)
    assert abs(t - 0.123456) < 1e-8
    from rfcheck.closed_forms import hrf as cf

    r, m, n = 2.0, 3, 4
    t = R.angular_rel_error_argmax(r, m, n)
    mx = cf.log_max_rel_error_angular_hybrid(r, m, n, backend="mpmath", dps=30)
    with mpmath.workdps(30):
        at = R.log_rel_error_hybrid_same_length(MP, mpmath.mpf(r), mpmath.mpf(t), m, n)
    assert at <= mx + mpmath.mpf(10) ** -25 and mx - at < 1e-12


# ---------------------------------------------------------------- the built-in claims, certified

CERTIFIED_AT = [
    ("hrf.eq36", {"nx": 1.0, "ny": 0.5, "theta": 1.0, "m": 8}),
    ("hrf.eq44.line2", {"theta": 1.0, "n": 10, "nx": 1.0, "ny": 1.0, "m": 1}),
    ("hrf.eq47", {"r": 1.2, "theta": 2.4, "m": 1, "n": 3, "shared": 0}),
    ("hrf.thm3.5.bound", {"r": 6.6, "m": 1000, "n": 1}),
    ("hrf.eq64", {"r": 2.5, "n": 100}),
    ("hrf.eq66", {"r": 1.0, "m": 1, "n": 100, "theta": 3.0}),
    ("hrf.thm3.5.limit-pi", {"r": 1.0, "m": 1, "n": 1}),
    ("hrf.eq70", {"nx": 3.0, "ny": 0.1, "theta": math.pi, "n": 1, "sigma": 0.2, "r": 0.3}),
    ("hrf.text-cexp-special-cases.pos", {"nx": 2.0, "ny": 2.0, "theta": 0.0, "m": 1}),
    ("hrf.eq93", {"ri0": -1.5, "ri1": -1.5, "rj0": -1.5, "rj1": -1.5, "dx0": -0.3, "dx1": -0.3, "dy0": -0.3,
                  "dy1": -0.3, "kind": "complex", "tau": 0.5}),
    ("hrf.text-h2-lambda-max", {"ri0": -1.5, "ri1": 1.5, "rj0": 1.5, "rj1": 1.5, "dx0": -0.3, "dx1": -0.3,
                                "dy0": 0.3, "dy1": 0.3, "kind": "complex", "tau": 0.5}),
]


@pytest.mark.parametrize("claim_id, at", CERTIFIED_AT, ids=[c for c, _ in CERTIFIED_AT])
def test_refuted_hrf_claims_carry_certified_counterexamples(claim_id: str, at: dict) -> None:
    """At a counterexample of each claim, the deciding check's point is REFUTED and certified by disjoint balls."""
    from rfcheck.verify import run_claim

    d = run_claim(claim_id, at=at).as_dict()
    assert d["verdict"] in ("REFUTED", "MIXED"), d["reason"]
    assert d["certified"]["verdict"] is True, d["certified"]


@pytest.mark.parametrize("claim_id", ["hrf.eq88", "hrf.text-eq18-relaxes-eq17", "hrf.text-d4-rate"])
def test_uncertifiable_hrf_refutations_say_why(claim_id: str) -> None:
    from rfcheck.verify import run_claim

    d = run_claim(claim_id).as_dict()
    assert d["verdict"] == "REFUTED" and d["certified"]["verdict"] is False
    assert "no ball (Arb) evaluation" not in d["certified"]["why_not"] and len(d["certified"]["why_not"]) > 40

"""Random Maclaurin features (Kar & Karnick, AISTATS 2012): a claims pack for ``rfcheck verify --claims``.

A dot-product kernel ``f(<x, y>) = sum_n a_n <x, y>^n`` (``a_n >= 0``) is estimated by one random
feature product ``Z(x) Z(y)``: draw ``N`` with ``P(N = n) = q_n = (1 - 1/p) p^-n`` (``p > 1``; at
``p = 2`` this is the paper's ``1/p^(n+1)``), draw ``N`` Rademacher vectors ``w_j`` in ``{-1, 1}^d``,
and set ``Z(x) = sqrt(a_N / q_N) prod_j <w_j, x>``.

The statements below (eq (1) - (6)) are this pack's own derivations from that definition, numbered
as in notebooks/verify_your_paper.py -- not equation numbers of the paper.  Vectors live in
``R^3``; ``m(x, y) = E (<w, x> <w, y>)^2 = |x|^2 |y|^2 + 2 <x, y>^2 - 2 sum_i x_i^2 y_i^2``.

Every reference is computed from the definition, independently of the printed formula: expectations
over ``w`` by enumerating the 8 sign vectors (Rademacher) or by Gauss-Hermite quadrature that is
exact for the polynomial (Gaussian), expectations over ``N`` by summing the series in mpmath with
a bound on its tail, and Monte Carlo of the sampler itself.
"""

import itertools
import math

import mpmath
import numpy as np

from rfcheck.ledger import Choice, Domain, Int, Real, pair_domain, paper

P = paper("rmf", "Random Feature Maps for Dot Product Kernels",
          citation="Kar & Karnick, AISTATS 2012; statements derived in notebooks/verify_your_paper.py")

# ----------------------------------------------------------------------------- shared helpers
COORDS = ("x1", "x2", "x3", "y1", "y2", "y3")
SIGNS = list(itertools.product((-1, 1), repeat=3))
# the kernels: coefficients a_n (mpmath) and f(t) as printed; (2 + t)^3 has a_0 = 8
KERNELS = {
    "exp": (lambda n: 1 / mpmath.factorial(n), lambda ctx, t: ctx.exp(t)),
    "poly": (lambda n: mpmath.binomial(3, n) * mpmath.mpf(2) ** (3 - n) if n <= 3 else mpmath.mpf(0),
             lambda ctx, t: (2 + t) ** 3),
}
KERNEL = Choice(("exp", "poly"))
P_RANGE = Real(1.25, 4.0, extra=(2.0,))


def domain(lim=1.0, p=P_RANGE, description="", at=(), **extra):
    """x, y in [-lim, lim]^3, p, and extra parameters; ``at``: points always tried."""
    return Domain({**{c: Real(-lim, lim) for c in COORDS}, "p": p, **extra}, description=description,
                  fixed_points=[dict(zip(COORDS, map(float, v), strict=True), p=2.0, kernel="exp") for v in at])


def xy(pt):
    return [mpmath.mpf(pt[c]) for c in COORDS[:3]], [mpmath.mpf(pt[c]) for c in COORDS[3:]]


def dot(u, v):
    return sum(a * b for a, b in zip(u, v, strict=True))


def m_printed(pt, factor=2):
    """m(x, y) as printed in eq (2); ``factor`` is the coefficient of sum_i x_i^2 y_i^2 (printed: 2)."""
    x, y = xy(pt)
    return dot(x, x) * dot(y, y) + 2 * dot(x, y) ** 2 - factor * sum(a * a * b * b for a, b in zip(x, y, strict=True))


def rademacher_moment(x, y, k):
    """E (<w, x> <w, y>)^k over the 8 sign vectors w (exact)."""
    return sum((dot(w, x) * dot(w, y)) ** k for w in SIGNS) / mpmath.mpf(len(SIGNS))


def gaussian_moment2(x, y):
    """E (<g, x> <g, y>)^2, g ~ N(0, I_3): 3-point Gauss-Hermite per axis (exact up to degree 5)."""
    r, w = mpmath.sqrt(3), mpmath.mpf(1) / 6
    nodes = [(-r, w), (mpmath.mpf(0), 4 * w), (r, w)]
    return mpmath.fsum(wa * wb * wc * (dot(g, x) * dot(g, y)) ** 2
                       for (a, wa), (b, wb), (c, wc) in itertools.product(nodes, repeat=3) for g in [(a, b, c)])


def series(coef, z, dps):
    """sum_n coef(n) z^n, (value, error bar), for terms whose ratios |T_(n+1) / T_n| do not increase
    (a_n = 1/n!, a_n^2 p^n, a polynomial): once a ratio is <= 1/2 the tail is at most twice its first term."""
    total, n, tiny = mpmath.mpf(0), 0, mpmath.mpf(10) ** (-dps)
    while True:
        total += coef(n) * z**n
        n += 1
        nxt, after = abs(coef(n) * z**n), abs(coef(n + 1) * z ** (n + 1))
        if nxt <= tiny * max(abs(total), tiny) and (nxt == 0 or after <= nxt / 2):
            return total, 2 * nxt


def variance_ref(kernel, t, moment, p, dps):
    """Var Z(x)Z(y) = sum_n q_n (a_n / q_n)^2 m^n - f(t)^2 from the definition: (value, error bar)."""
    a = KERNELS[kernel][0]
    with mpmath.workdps(dps + 15):
        p = mpmath.mpf(p)
        q = lambda n: (1 - 1 / p) * p ** (-n)  # noqa: E731
        second, e2 = series(lambda n: a(n) ** 2 / q(n), moment, dps + 10)
        mean, e1 = series(a, t, dps + 10)
        return second - mean**2, e2 + 2 * abs(mean) * e1 + e1**2


def rademacher_variance(pt, dps):
    x, y = xy(pt)
    with mpmath.workdps(dps + 15):
        return variance_ref(pt.get("kernel", "exp"), dot(x, y), rademacher_moment(x, y, 2), pt["p"], dps)


# ----------------------------------------------------------------------------- eq (1): unbiasedness
def expectation_ref(pt, dps):
    """E_N E_w Z(x)Z(y) = sum_n q_n (a_n / q_n) (E_w <w,x><w,y>)^n, E_w by enumeration."""
    a = KERNELS[pt["kernel"]][0]
    x, y = xy(pt)
    with mpmath.workdps(dps + 15):
        p = mpmath.mpf(pt["p"])
        q = lambda n: (1 - 1 / p) * p ** (-n)  # noqa: E731
        return series(lambda n: q(n) * (a(n) / q(n)), rademacher_moment(x, y, 1), dps + 10)


P.equality("eq1", source="notebook eq (1)", statement="E Z(x)Z(y) = f(<x, y>) for f = exp and f = (2 + t)^3",
           printed=lambda ctx, pt: KERNELS[pt["kernel"]][1](ctx, dot(*xy(pt))),
           reference=expectation_ref, domain=domain(kernel=KERNEL),
           scale=lambda pt, dps: KERNELS[pt["kernel"]][1](mpmath, abs(dot(*xy(pt)))))  # (2 + t)^3 vanishes at t = -2


# ----------------------------------------------------------------------------- eq (2): the variance
def eq2(ctx, pt, factor=2):
    """eq (2) as printed: Var Z(x)Z(y) = p/(p-1) I_0(2 sqrt(p m)) - e^(2<x,y>) for f = exp."""
    p, z = pt["p"], 2 * ctx.sqrt(pt["p"] * m_printed(pt, factor))
    return p / (p - 1) * ctx.i0e(z) * ctx.exp(z) - ctx.exp(2 * dot(*xy(pt)))


P.equality("eq2", source="notebook eq (2)",
           statement="Var Z(x)Z(y) = p/(p-1) I_0(2 sqrt(p m(x,y))) - exp(2<x,y>)  (f = exp)",
           printed=eq2, reference=rademacher_variance, domain=domain())


def simulate(pt, n, seed):
    """n independent feature products Z(x)Z(y) (f = exp) and the kernel value they estimate."""
    rng = np.random.default_rng(seed)
    x, y, p = np.array([pt[c] for c in COORDS[:3]]), np.array([pt[c] for c in COORDS[3:]]), pt["p"]
    N = rng.geometric(1 - 1 / p, size=n) - 1  # P(N = k) = (1 - 1/p) p^-k, k >= 0
    est = np.empty(n)
    for k in np.unique(N):
        idx = np.flatnonzero(N == k)
        W = rng.choice([-1.0, 1.0], size=(idx.size, k, 3))
        est[idx] = np.prod((W @ x) * (W @ y), axis=1) * p ** (k + 1) / ((p - 1) * math.factorial(k))
    return est, math.exp(float(x @ y))


P.variance("eq2.mc", source="notebook eq (2), against Monte Carlo of the sampler",
           statement="Var Z(x)Z(y) = p/(p-1) I_0(2 sqrt(p m(x,y))) - exp(2<x,y>)  (f = exp)",
           printed=eq2, simulate=simulate, domain=domain(0.25, Real(1.5, 2.5, extra=(2.0,))),
           notes="Inputs in [-1/4, 1/4]^3 and p in [1.5, 2.5]: elsewhere the estimator's tails are too heavy "
                 "for 20,000 trials to resolve a 10% error.")

# a deliberately wrong transcription of eq (2): the factor 2 of sum_i x_i^2 y_i^2 dropped
P.equality("eq2.typo", source="notebook eq (2), transcribed with a dropped factor (deliberate)",
           statement="Var Z(x)Z(y) = p/(p-1) I_0(2 sqrt(p m')) - exp(2<x,y>), "
                     "m' = |x|^2|y|^2 + 2<x,y>^2 - sum_i x_i^2 y_i^2",
           printed=lambda ctx, pt: eq2(ctx, pt, factor=1), reference=rademacher_variance, domain=domain(),
           correction="m = |x|^2|y|^2 + 2<x,y>^2 - 2 sum_i x_i^2 y_i^2: claim rmf.eq2")


# ----------------------------------------------------------------------------- eq (3): a bound
def sup_estimate(ctx, pt):
    """sup over N and w of |Z(x)Z(y)|, exactly: max_n (a_n / q_n) c^n, c = max_w |<w,x><w,y>|."""
    a = KERNELS[pt["kernel"]][0]
    x, y = xy(pt)
    p, c = pt["p"], max(abs(dot(w, x) * dot(w, y)) for w in SIGNS)
    # exp: the terms decrease once n + 1 > p c (a_(n+1) = a_n / (n+1)); (2 + t)^3: four terms
    return max(a(n) / ((1 - 1 / p) * p ** (-n)) * c**n for n in range(max(int(p * c) + 2, 4)))


P.bound("eq3", source="notebook eq (3)", statement="|Z(x)Z(y)| <= p/(p-1) f(p |x|_1 |y|_1) for every N and w",
        lhs=sup_estimate, domain=domain(kernel=KERNEL, at=[(0, 0, 0, 1, 1, 1)]),  # tight at x = 0
        rhs=lambda ctx, pt: pt["p"] / (pt["p"] - 1) * KERNELS[pt["kernel"]][1](
            ctx, pt["p"] * sum(abs(v) for v in xy(pt)[0]) * sum(abs(v) for v in xy(pt)[1])))


# ----------------------------------------------------------------------------- eq (4): an ordering
def gaussian_variance(ctx, pt):
    """The variance with Gaussian w_j ~ N(0, I) in place of Rademacher (same series)."""
    x, y = xy(pt)
    return variance_ref(pt["kernel"], dot(x, y), gaussian_moment2(x, y), pt["p"], mpmath.mp.dps)[0]


P.ordering("eq4", source="notebook eq (4)", statement="Var (Rademacher w) <= Var (Gaussian w), any f with a_n >= 0",
           mse_a=lambda ctx, pt: rademacher_variance(pt, mpmath.mp.dps)[0], mse_b=gaussian_variance,
           domain=domain(kernel=KERNEL, at=[(1, 0, 0, 0, 1, 0)]))  # equal where x_i y_i = 0 for every i


# ----------------------------------------------------------------------------- eq (5): an optimum
def homogeneous_variance(ctx, pt, p):
    """Var Z(x)Z(y) for f(t) = t^k (a_n = 1 at n = k only) as a function of p, from the definition;
    x = nx e1, y = ny (cos theta e1 + sin theta e2) in R^3."""
    x = (pt["nx"], 0, 0)
    y = (pt["ny"] * ctx.cos(pt["theta"]), pt["ny"] * ctx.sin(pt["theta"]), 0)
    moment = sum((dot(w, x) * dot(w, y)) ** 2 for w in SIGNS) / len(SIGNS)
    return moment ** pt["k"] / ((1 - 1 / p) * p ** -pt["k"]) - dot(x, y) ** (2 * pt["k"])


P.optimum("eq5", source="notebook eq (5)", statement="for f(t) = t^k, argmin_p Var Z(x)Z(y) = 1 + 1/k",
          what="argmin", printed=lambda ctx, pt: 1 + 1 / mpmath.mpf(pt["k"]), objective=homogeneous_variance,
          bracket=lambda pt: (1.001, 8.0),
          domain=pair_domain(d=(3, 3), norm=(0.5, 1.5), extra={"k": Int(1, 12)}))


# ----------------------------------------------------------------------------- eq (6): a limit
def variance_near_zero(pt, dps):
    """Var Z(s x)Z(y) at s = 10^-(dps+5) and 10^-(dps+6): the value at the smaller, the change as error bar."""
    x, y = xy(pt)
    vals = []
    with mpmath.workdps(dps + 15):
        for s in (mpmath.mpf(10) ** -(dps + 5), mpmath.mpf(10) ** -(dps + 6)):
            sx = [s * v for v in x]
            vals.append(variance_ref(pt["kernel"], dot(sx, y), rademacher_moment(sx, y, 2), pt["p"], dps)[0])
        return vals[1], 10 * abs(vals[1] - vals[0])


P.equality("eq6", source="notebook eq (6)", statement="lim_{|x| -> 0} Var Z(x)Z(y) = a_0^2 / (p - 1)",
           printed=lambda ctx, pt: KERNELS[pt["kernel"]][1](ctx, 0) ** 2 / (pt["p"] - 1),
           reference=variance_near_zero,
           domain=domain(kernel=KERNEL, description="x scaled by 10^-(dps+5) and 10^-(dps+6) towards 0"))

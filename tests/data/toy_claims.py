"""A toy claims pack (used by tests/test_ledger_api.py): random Fourier features in one dimension.

For w ~ N(0, 1): E cos(w x) = exp(-x^2/2) (the Gaussian kernel), and the variance of one
feature product cos(w x) is (1 + exp(-2 x^2))/2 - exp(-x^2).
"""

import mpmath
import numpy as np

from rfcheck.ledger import Domain, Real, latex, paper

P = paper("toy", "Toy random Fourier features", citation="tests")
X = Domain({"x": Real(0.0, 2.0)})


def gaussian_expectation(p, dps):
    """E cos(w x), w ~ N(0, 1), by quadrature: (value, error bar)."""
    with mpmath.workdps(dps + 10):
        x = mpmath.mpf(p["x"])
        f = lambda w: mpmath.cos(w * x) * mpmath.npdf(w)  # noqa: E731
        v, e = mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf], error=True)
    return v, e + mpmath.mpf(10) ** (-dps)


P.equality("eq1", source="eq (1)", statement="E cos(w x) = exp(-x^2/2)",
           printed=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2), reference=gaussian_expectation, domain=X)
P.equality("eq2", source="eq (2), a wrong transcription", statement="E cos(w x) = exp(-x^2)",
           printed=lambda ctx, p: ctx.exp(-p["x"] ** 2), reference=gaussian_expectation, domain=X)
P.bound("eq3", source="eq (3)", statement="exp(-x^2/2) >= 1 - x^2/2", relation=">=",
        lhs=lambda ctx, p: ctx.exp(-p["x"] ** 2 / 2), rhs=lambda ctx, p: 1 - p["x"] ** 2 / 2, domain=X)
P.optimum("eq4", source="eq (4)", statement="argmin_t (t^2 - 2 a t) = a", what="argmin",
          printed=lambda ctx, p: p["a"], objective=lambda ctx, p, t: t * t - 2 * p["a"] * t,
          bracket=lambda p: (-5.0, 5.0), domain=Domain({"a": Real(-2.0, 2.0)}))


def simulate(p, n, seed):
    w = np.random.default_rng(seed).standard_normal(n)
    return np.cos(w * p["x"]), float(np.exp(-p["x"] ** 2 / 2))


P.variance("eq5", source="eq (5)", statement="Var cos(w x) = (1 + exp(-2x^2))/2 - exp(-x^2)",
           printed=lambda ctx, p: (1 + ctx.exp(-2 * p["x"] ** 2)) / 2 - ctx.exp(-p["x"] ** 2),
           simulate=simulate, domain=Domain({"x": Real(0.5, 2.0)}))


def simulate_pair(p, n, seed):
    """The average of 4 iid features (A) against that of 2 (B); common random numbers: B's two
    draws are A's first two."""
    w = np.random.default_rng(seed).standard_normal((n, 4))
    a = np.cos(w * p["x"]).mean(axis=1)
    b = np.cos(w[:, :2] * p["x"]).mean(axis=1)
    return a, b, float(np.exp(-p["x"] ** 2 / 2))


def _var1(ctx, p):
    return (1 + ctx.exp(-2 * p["x"] ** 2)) / 2 - ctx.exp(-p["x"] ** 2)


P.ordering("eq6", source="eq (6)", statement="MSE with 4 iid features <= MSE with 2",
           simulate_pair=simulate_pair, mse_a=lambda ctx, p: _var1(ctx, p) / 4, mse_b=lambda ctx, p: _var1(ctx, p) / 2,
           domain=Domain({"x": Real(0.5, 2.0)}))


P.equality("eq7", source="eq (7), pasted as LaTeX",
           statement=r"\mathrm{Var} = \frac{1}{2}\left(1 + e^{-2x^2}\right) - e^{-x^2}",
           printed=latex(r"\frac{1}{2}\left(1 + e^{-2x^2}\right) - e^{-x^2}"),
           reference=lambda p, dps: gaussian_expectation({"x": 2 * p["x"]}, dps)[0] / 2 + mpmath.mpf(1) / 2
           - gaussian_expectation(p, dps)[0] ** 2, domain=X)

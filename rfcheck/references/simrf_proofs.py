"""Reference computations behind SimRF's proof-step claims (appendix A): public, unit-tested.

The numerical library code of :mod:`rfcheck.claims._simrf_proofs` -- everything that is a
computation a user could call, not the wording of one printed result:

* the series ``f(x) = sum_k x^k/(4^k k! Gamma(k + d/2)) = 0F1(; d/2; x/4)/Gamma(d/2)`` behind
  eq (36)-(45) and its derivatives (:func:`f_series`, :func:`f_series_deriv`, and on balls
  :func:`f_series_derivative_ball`);
* direction configurations and chi_d norms of the checks (:func:`unit_config`, :func:`mp_rows`,
  :func:`dot`, :func:`chi_norms`);
* the pair conformity ``E_{r1, r2 iid chi_d} f(v^2 (r1^2 + r2^2 + 2 r1 r2 c))`` by 2-D
  Gauss-Legendre (:func:`pair_series_chi_integral`, eq (41));
* the same pair conformity for ``f = 0F1(; d/2; .)`` on balls, by its Taylor series in the exact
  ``chi_d`` moments with a proven remainder (:func:`pair_conformity_moment_ball`, eq (10), (62));
* ``P(r_1^2 + r_2^2 + 2 c r_1 r_2 <= w^2)`` on balls, a 1-D integral of the ``chi_d`` CDF between
  the roots, free of square roots by ``r_1 = w sin t / sqrt(1 - c^2)`` (:func:`cdf_angle_ball`, eq (54)-(55));
* the hand-derived gradients of the Lagrangians of eq (44) and eq (15)
  (:func:`lagrangian_gradient`, on balls :func:`lagrangian_gradient_ball`, :func:`rho_tilde_gradient`) and the
  permutation-symmetrised objective of eq (42) with its exact gradient (:func:`symmetrised_pair_objective`);
* the analytic minimum of the truncated objective eq (15) (:func:`rho_tilde_minimum`), the
  eq (16) residual of a configuration (:func:`eq16_residual`) and the eq (17) update iterated to it
  (:func:`eq17_iterate`);
* ``E |w_i + w_j|^2`` per coupling (:func:`mean_pair_norm_sq`, eq (14));
* the polar-angle integral of eq (22) in mpmath and as a rigorous ball
  (:func:`sine_power_integral`, :func:`sine_power_integral_ball`);
* enclosures used by the printed sides: a precision-raising loop for cancelling enclosures (:func:`tight_ball`,
  the Bessel functions of eq (31), (32), (75)), the phi-integral over a quarter period
  (:func:`quarter_period_integral_ball`), the lower incomplete gamma function of an integer order
  (:func:`lower_gamma_int_ball`, eq (55)) and ``E w^4/E w^2`` for ``chi_2d`` (:func:`chi2d_moment_ratio_ball`,
  footnote 4);
* functions on a number-system context (mpmath or Arb balls) used by the printed sides: :func:`f_series_ctx`,
  :func:`ctx_rows`, :func:`ctx_dot`, the Bessel function :func:`besselj_ctx` (eq (31), (75)), the integral
  :func:`integral_from_zero_ctx` (eq (57)), and the checks' configurations (:func:`gaussian_vectors`,
  :func:`equal_angle_config`, :func:`plus_config`, :func:`perm_config`) and the multi-start L-BFGS minimiser of
  eq (48) (:func:`multistart_minimiser`).

References
----------
Reid et al., "Simplex Random Features" (SimRF), sec 3-4 and appendix A.1-A.9.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
from scipy import special, stats

from rfcheck import memo

__all__ = [
    "besselj_ctx",
    "cdf_angle_ball",
    "chi2d_moment_ratio_ball",
    "chi_norms",
    "ctx_dot",
    "ctx_rows",
    "dot",
    "eq16_residual",
    "eq17_iterate",
    "equal_angle_config",
    "f_series",
    "f_series_ball",
    "f_series_ctx",
    "f_series_deriv",
    "f_series_derivative_ball",
    "gaussian_vectors",
    "integral_from_zero_ctx",
    "lagrangian_gradient",
    "lagrangian_gradient_ball",
    "lower_gamma_int_ball",
    "mean_pair_norm_sq",
    "mp_rows",
    "multistart_minimiser",
    "pair_conformity_moment_ball",
    "pair_series_chi_integral",
    "perm_config",
    "plus_config",
    "quarter_period_integral_ball",
    "ratio_series_abs_ball",
    "rho_tilde_gradient",
    "rho_tilde_minimum",
    "sine_power_integral",
    "sine_power_integral_ball",
    "symmetrised_pair_objective",
    "tight_ball",
    "unit_config",
]

_MF = mpmath.mpf


def f_series(x: Any, d: int) -> Any:
    """``sum_k x^k / (4^k k! Gamma(k + d/2))`` in mpmath, by the exact term ratio.

    Summed until the terms, past their peak, fall below ``10^-(dps+8)`` of the sum (``x < 0``
    allowed: numerical derivatives at 0).

    Parameters
    ----------
    x : mpmath.mpf
        The argument (``v^2 w^2 s`` in the paper's notation).
    d : int
        Dimension (>= 1).

    Returns
    -------
    mpmath.mpf
        The sum at the working precision (``= 0F1(; d/2; x/4)/Gamma(d/2)``).

    References
    ----------
    SimRF appendix A.2, eq (36), (37), (42).
    """
    t = 1 / mpmath.gamma(_MF(d) / 2)
    tot, k = t, 0
    tol = _MF(10) ** (-mpmath.mp.dps - 8)
    while True:
        r = x / (4 * (k + 1) * (k + _MF(d) / 2))
        t *= r
        tot += t
        k += 1
        if t == 0 or (abs(r) < 1 and abs(t) <= tol * abs(tot)):
            return tot


def f_series_ball(x: Any, d: int) -> Any:
    """:func:`f_series` on Arb balls, the series summed literally with a proven remainder bound.

    Terms ``t_{k+1} = t_k x / (4 (k+1)(k + d/2))`` are added until ``|ratio| < 1/2`` and
    ``|t| <= 2^-(prec+4) |sum|``; the rest is at most ``|t_K| rho/(1 - rho)``,
    ``rho = |x| / (4 (K+1)(K + d/2))`` (the ratios' moduli decrease in ``k``), added to the radius.
    Any real ``x`` (a ball straddling 0 included).

    Parameters
    ----------
    x : flint.arb or number
        The argument (real; a number is taken at its exact binary value).
    d : int
        Dimension (>= 1).

    Returns
    -------
    flint.arb
        A ball containing the sum, at flint's working precision.

    Raises
    ------
    ValueError
        If no remainder bound is reached within ``10^6`` terms (``|x|`` too large for the
        working precision to resolve the sum).

    References
    ----------
    SimRF appendix A.2, eq (36), (37), (42).

    Examples
    --------
    For ``d = 2`` the series is ``0F1(; 1; x/4) = I_0(sqrt(x))``:

    >>> import mpmath
    >>> from rfcheck.references.simrf_proofs import f_series_ball
    >>> b = f_series_ball(4, 2)
    >>> abs(float(b.mid()) - float(mpmath.besseli(0, 2))) < 1e-14, float(b.rad()) < 1e-14
    (True, True)
    """
    from flint import arb
    from flint import ctx as flint_ctx

    from rfcheck.arb_backend import to_ball

    xb = arb(to_ball(x))
    half = arb(d) / 2
    eps = arb(2) ** (-flint_ctx.prec - 4)
    t = 1 / half.gamma()
    tot = arb(0)
    for k in range(1_000_000):
        tot += t
        r = xb / (4 * (k + 1) * (k + half))
        t = t * r
        if abs(r) < arb(1) / 2 and abs(t) <= eps * abs(tot):
            rho = abs(xb).upper() / (4 * (k + 2) * (k + 1 + half))
            bound = (abs(t) * rho / (1 - rho)).upper()
            return tot + t + arb(0, bound)
    raise ValueError("f_series_ball: no remainder bound within 10^6 terms")


def f_series_derivative_ball(x: Any, d: int, order: int) -> Any:
    """The ``order``-th derivative of :func:`f_series` at ``x`` on Arb balls, differentiated analytically.

    ``F_d(x) = sum_k x^k/(4^k k! Gamma(k + d/2))`` is entire; termwise differentiation gives
    ``F_d'(x) = sum_{k >= 1} k x^{k-1}/(4^k k! Gamma(k + d/2)) = sum_j x^j/(4^{j+1} j! Gamma(j + 1 + d/2))
    = F_{d+2}(x)/4``, hence ``F_d^{(n)}(x) = F_{d+2n}(x)/4^n``, each summed by :func:`f_series_ball`
    (proven remainder).

    Parameters
    ----------
    x : flint.arb or number
        The argument (real; a number is taken at its exact binary value).
    d : int
        Dimension (>= 1).
    order : int
        Order of the derivative (>= 0).

    Returns
    -------
    flint.arb
        A ball containing the derivative, at flint's working precision.

    References
    ----------
    SimRF appendix A.2, eq (37) ("an increasing convex function") and eq (42) ("f is once again convex").

    Examples
    --------
    ``F_2(x) = I_0(sqrt x)``, so ``F_2'(x) = I_1(sqrt x)/(2 sqrt x)``:

    >>> import mpmath
    >>> from rfcheck.references.simrf_proofs import f_series_derivative_ball
    >>> b = f_series_derivative_ball(4, 2, 1)
    >>> abs(float(b.mid()) - float(mpmath.besseli(1, 2) / 4)) < 1e-15
    True
    """
    from flint import arb

    return f_series_ball(x, d + 2 * order) / arb(4) ** order


def ratio_series_abs_ball(
    t0: Any, ratio: Callable[[int], Any], ratio_bound: Callable[[int], float], *, max_terms: int = 1_000_000
) -> Any:
    """``sum_k t_k``, ``t_{k+1} = t_k ratio(k)``, on (real or complex) Arb balls with a proven remainder.

    Unlike :func:`rfcheck.references.simrf.ratio_series_ball` the terms may alternate or be complex:
    the caller gives ``ratio_bound(k) >= |ratio(j)|`` for all ``j >= k`` (a non-increasing bound).
    Terms are added until ``ratio_bound(k) < 1/2`` and ``|t| <= 2^-(prec+4) |sum|``; the rest is at most
    ``|t_{K+1}| / (1 - ratio_bound(K+1))`` in modulus, added to the radius (real and imaginary parts).

    Parameters
    ----------
    t0 : flint.arb or flint.acb
        The first term.
    ratio : callable
        ``k -> t_{k+1}/t_k`` as a ball.
    ratio_bound : callable
        ``k -> `` an upper bound (float) of ``|t_{j+1}/t_j|`` for every ``j >= k``.
    max_terms : int, optional
        ``ValueError`` past this many terms (default 1,000,000).

    Returns
    -------
    flint.arb or flint.acb
        A ball containing the sum, at flint's working precision.

    Raises
    ------
    ValueError
        If no remainder bound is reached within ``max_terms`` terms (``ratio_bound`` never falls
        below 1/2 with the next term below ``2^-(prec+4)`` of the sum's modulus).

    References
    ----------
    SimRF appendix A.1, eq (32) (the Bessel series, alternating for real argument).

    Examples
    --------
    ``e^-1 = sum_k (-1)^k / k!`` (alternating; ``|ratio(j)| = 1/(j + 1) <= 1/(k + 1)``):

    >>> from flint import arb
    >>> from rfcheck.references.simrf_proofs import ratio_series_abs_ball
    >>> s = ratio_series_abs_ball(arb(1), lambda k: -1 / arb(k + 1), lambda k: 1 / (k + 1))
    >>> s.contains((-arb(1)).exp()), float(s.rad()) < 1e-14
    (True, True)
    """
    from flint import acb, arb
    from flint import ctx as flint_ctx

    eps = arb(2) ** (-flint_ctx.prec - 4)
    t, tot = t0, t0 * 0
    for k in range(max_terms):
        tot += t
        t = t * ratio(k)
        rb = ratio_bound(k + 1)
        if ratio_bound(k) < 0.5 and abs(t) <= eps * abs(tot):
            bound = (abs(t) / (1 - arb(rb))).upper()
            if isinstance(tot, acb):
                return tot + acb(arb(0, bound), arb(0, bound))
            return tot + arb(0, bound)
    raise ValueError(f"ratio_series_abs_ball: no remainder bound within {max_terms} terms")


def f_series_deriv(x: Any, d: int) -> Any:
    """``d/dx`` of :func:`f_series`: ``0F1(; d/2 + 1; x/4) / (4 Gamma(d/2 + 1))`` (mpmath).

    Parameters
    ----------
    x : mpmath.mpf
        The argument.
    d : int
        Dimension.

    Returns
    -------
    mpmath.mpf
        The derivative.

    References
    ----------
    SimRF appendix A.2, eq (44)-(45) (the gradient of the Lagrangian).
    """
    return mpmath.hyp0f1(_MF(d) / 2 + 1, x / 4) / (4 * mpmath.gamma(_MF(d) / 2 + 1))


def unit_config(m: int, dim: int, seed: int, kind: str = "random") -> np.ndarray:
    """``m`` unit vectors in ``R^dim`` (rows).

    Parameters
    ----------
    m, dim : int
        Number and dimension of the vectors.
    seed : int
        Seed of the random configuration.
    kind : {"random", "simplex", "orthogonal"}
        Gaussian rows normalised; the simplex of eq (9) (``m <= dim``); the first ``m`` basis vectors.

    Returns
    -------
    numpy.ndarray
        ``(m, dim)`` float64.

    References
    ----------
    SimRF sec 3, eq (9) (the simplex); appendix A.2 (Lemma A.1, Thm 3.4: direction configurations).
    """
    if kind == "simplex":
        from rfcheck.engine.montecarlo import simplex_matrix

        return simplex_matrix(dim)[:m]
    if kind == "orthogonal":
        return np.eye(dim)[:m]
    g = np.random.default_rng(seed).standard_normal((m, dim))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def mp_rows(U: np.ndarray) -> list[list[Any]]:
    """Rows of ``U`` as mpmath vectors, renormalised at the working precision.

    Parameters
    ----------
    U : numpy.ndarray
        ``(m, d)`` rows.

    Returns
    -------
    list of list of mpmath.mpf
        Unit rows.

    References
    ----------
    SimRF appendix A.2 (unit directions ``w_hat_i``).
    """
    out = []
    for r in U:
        row = [_MF(float(x)) for x in r]
        n = mpmath.sqrt(mpmath.fsum(x * x for x in row))
        out.append([x / n for x in row])
    return out


def dot(a: list[Any], b: list[Any]) -> Any:
    """``a . b`` by ``mpmath.fsum``.

    Parameters
    ----------
    a, b : list of mpmath.mpf
        Vectors of equal length.

    Returns
    -------
    mpmath.mpf
        The inner product.

    References
    ----------
    SimRF eq (9), (28), (72) (inner products of rows and features).
    """
    return mpmath.fsum(x * y for x, y in zip(a, b, strict=True))


def chi_norms(d: int, n: int, seed: int) -> np.ndarray:
    """``n`` i.i.d. ``chi_d`` norms (square roots of ``chi^2_d`` draws, numpy's generator).

    Parameters
    ----------
    d : int
        Degrees of freedom.
    n : int
        How many.
    seed : int
        Seed.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` float64.

    References
    ----------
    SimRF sec 3 (norms ``w_i ~ chi_d`` of Gaussian rows), appendix A.2-A.3.
    """
    return np.sqrt(np.random.default_rng(seed).chisquare(d, size=n))


def pair_series_chi_integral(v: float, d: int, c: float, n: int = 96) -> tuple[float, float]:
    """``E_{r1, r2 iid chi_d} sum_k v^{2k} (r1^2 + r2^2 + 2 r1 r2 c)^k / (2^{2k} k! Gamma(k+d/2))``.

    float64: scipy's ``0F1`` (the k-series is ``0F1(; d/2; v^2 q/4)/Gamma(d/2)``), 2-D
    Gauss-Legendre on ``[max(0, sqrt d - 12), sqrt d + 12 + 4 v]^2``.

    Parameters
    ----------
    v : float
        ``|v|``.
    d : int
        Dimension.
    c : float
        ``w_hat_i . w_hat_j``.
    n : int
        Nodes per norm of the coarser rule.

    Returns
    -------
    value, error : float
        The ``3n/2``-node value and its change from ``n`` nodes plus 1e-13 relative.

    References
    ----------
    SimRF appendix A.2, eq (41) (one pair's term, the other norms integrating to 1).
    """

    def rule(nn: int) -> float:
        lo, hi = max(0.0, math.sqrt(d) - 12.0), math.sqrt(d) + 12.0 + 4 * v
        x, wq = np.polynomial.legendre.leggauss(nn)
        r = lo + (hi - lo) * (x + 1) / 2
        wr = wq * (hi - lo) / 2 * stats.chi(d).pdf(r)
        q = np.maximum(r[:, None] ** 2 + r[None, :] ** 2 + 2 * c * r[:, None] * r[None, :], 0.0)
        return float(wr @ (special.hyp0f1(d / 2, v * v * q / 4) / special.gamma(d / 2)) @ wr)

    a, b = rule(n), rule(n * 3 // 2)
    return b, abs(a - b) + 1e-13 * abs(b)


def lagrangian_gradient(v: Any, r: list[Any], U: list[list[Any]], i: int) -> list[Any]:
    """Gradient in ``u_i`` of ``sum_P sum_{a != b} F(q_{P,a,b}(u))`` (mpmath), hand-derived.

    ``q = w_{P_a}^2 u_a.u_a + w_{P_b}^2 u_b.u_b + 2 w_{P_a} w_{P_b} u_a.u_b`` and
    ``F(q) = 0F1(; d/2; v^2 q/4)/Gamma(d/2)``: each ordered pair containing ``i`` contributes
    ``F'(q) (2 w_{P_i}^2 u_i + 2 w_{P_i} w_{P_j} u_j)``, and ``(i, j)``, ``(j, i)`` are both ordered pairs.

    Parameters
    ----------
    v : mpmath.mpf
        ``|v|``.
    r : list of mpmath.mpf
        The ``d`` norms.
    U : list of list of mpmath.mpf
        The ``d`` unit directions (``|u_i| = 1`` at the point).
    i : int
        Which direction (0-based).

    Returns
    -------
    list of mpmath.mpf
        The gradient.

    References
    ----------
    SimRF appendix A.2, eq (44) (the first term of the Lagrangian) and eq (45).
    """
    d = len(U)
    out = [_MF(0)] * d
    for P in itertools.permutations(range(d)):
        for j in range(d):
            if j == i:
                continue
            a, b = r[P[i]], r[P[j]]
            q = a * a + b * b + 2 * a * b * dot(U[i], U[j])
            fp = v * v * f_series_deriv(v * v * q, d)
            out = [o + 4 * fp * (a * a * U[i][c] + a * b * U[j][c]) for c, o in enumerate(out)]
    return out


def symmetrised_pair_objective(r: np.ndarray, v: float) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """The eq (42) sum as a function of the directions, with its exact gradient (float64).

    ``X -> sum_{i != j} h(c_ij)`` (rows of ``X`` normalised, ``c_ij = u_i . u_j``),
    ``h(c) = (d-2)! sum_{a != b} f(r_a^2 + r_b^2 + 2 r_a r_b c)``, ``f = 0F1(; d/2; v^2 s/4)/Gamma(d/2)``.

    Parameters
    ----------
    r : numpy.ndarray
        The ``d`` norms.
    v : float
        ``|v|``.

    Returns
    -------
    callable
        ``flat (d*d,) -> (value, gradient)``, for ``scipy.optimize.minimize(jac=True)``.

    References
    ----------
    SimRF appendix A.2, eq (42) and eq (48).
    """
    d = r.size
    a, b = np.array([(x, y) for x, y in itertools.permutations(range(d), 2)]).T
    ra, rb = r[a], r[b]
    g = math.gamma(d / 2)
    fac = math.factorial(d - 2)
    off = ~np.eye(d, dtype=bool)

    def obj(flat: np.ndarray) -> tuple[float, np.ndarray]:
        X = flat.reshape(d, d)
        n = np.linalg.norm(X, axis=1, keepdims=True)
        U = X / n
        C = np.clip(U @ U.T, -1, 1)[off]
        s = ra[None, :] ** 2 + rb[None, :] ** 2 + 2 * ra[None, :] * rb[None, :] * C[:, None]
        val = fac * np.sum(special.hyp0f1(d / 2, v * v * s / 4)) / g
        dh = fac * np.sum(special.hyp0f1(d / 2 + 1, v * v * s / 4) * v * v / (4 * (d / 2)) * 2 * ra * rb, axis=1) / g
        H = np.zeros((d, d))
        H[off] = dh
        gU = (H + H.T) @ U
        gX = (gU - np.sum(gU * U, axis=1, keepdims=True) * U) / n
        return float(val), gX.ravel()

    return obj


def rho_tilde_minimum(norms: np.ndarray, v: float, d: int) -> float:
    """The exact minimum over directions of the truncated objective eq (15).

    ``sum_{i != j} |w_i + w_j|^2 = 2(m-2) sum_i w_i^2 + 2 |sum_i w_i|^2`` and
    ``min |sum_i w_i| = max(0, 2 max_i w_i - sum_i w_i)`` (a closed polygon, or the longest
    vector against the rest).

    Parameters
    ----------
    norms : numpy.ndarray
        The ``m`` norms.
    v : float
        ``|v|``.
    d : int
        Dimension.

    Returns
    -------
    float
        ``Gamma(d/2) v^2 / (4 m(m-1) Gamma(1 + d/2))`` times the minimal sum.

    References
    ----------
    SimRF sec 3.2, eq (15)-(16) and appendix A.3, eq (49)-(51).
    """
    m = norms.size
    smin = max(0.0, 2 * float(norms.max()) - float(norms.sum()))
    tot = 2 * (m - 2) * float(np.sum(norms**2)) + 2 * smin**2
    return math.gamma(d / 2) * v * v / (4 * m * (m - 1) * math.gamma(1 + d / 2)) * tot


def eq16_residual(W: np.ndarray) -> float:
    """``max_i |w_i + (sum_{j != i} w_j)/|sum_{j != i} w_j| |w_i|| / |w_i|``: 0 for an eq (16) configuration.

    Parameters
    ----------
    W : numpy.ndarray
        ``(m, d)`` rows.

    Returns
    -------
    float
        The residual.

    References
    ----------
    SimRF sec 3.2, eq (16) (= appendix A.3 eq (51)).
    """
    r = np.linalg.norm(W, axis=1)
    S = W.sum(axis=0)[None, :] - W
    ns = np.linalg.norm(S, axis=1)
    return float(np.max(np.linalg.norm(W + S / ns[:, None] * r[:, None], axis=1) / r))


def rho_tilde_gradient(W: np.ndarray, v: float, i: int, gamma: Callable[[float], Any] = math.gamma) -> np.ndarray:
    """Gradient of eq (15) in ``w_i``, hand-derived: ``4 C sum_{j != i} (w_i + w_j)``.

    ``C = Gamma(d/2) v^2/(4 m(m-1) Gamma(1 + d/2))``.

    Parameters
    ----------
    W : numpy.ndarray
        ``(m, d)`` rows (float64, or an object array of Arb balls with ``v`` a ball).
    v : float
        ``|v|``.
    i : int
        Which row.
    gamma : callable, optional
        The Gamma function of the arithmetic (default ``math.gamma``; on balls ``lambda x: arb(x).gamma()``).

    Returns
    -------
    numpy.ndarray
        ``(d,)``.

    References
    ----------
    SimRF sec 3.2, eq (15) and appendix A.3, eq (49).
    """
    m, d = W.shape
    c = gamma(d / 2) * v * v / (4 * m * (m - 1) * gamma(1 + d / 2))
    return 4 * c * ((m - 1) * W[i] + (W.sum(axis=0) - W[i]))


def mean_pair_norm_sq(d: int, coupling: str, ctx: Any = None) -> Any:
    """``E |w_i + w_j|^2`` for a pair of ``N(0, I_d)`` rows (mpmath, or on another number-system context).

    ``2d + 2 cos(theta) (E r)^2`` with ``E r = sqrt(2) Gamma((d+1)/2)/Gamma(d/2)`` (the chi_d mean):
    ``2d`` for i.i.d. and orthogonal rows, ``cos theta = -1/(d-1)`` for SimRF.

    Parameters
    ----------
    d : int
        Dimension (>= 2 for ``"simrf"``).
    coupling : {"iid", "orf", "simrf"}
        The coupling.
    ctx : Backend, optional
        The number-system context (default :data:`rfcheck.backends.MP`; :data:`rfcheck.arb_backend.ARB`: a ball).

    Returns
    -------
    mpmath.mpf or rfcheck.arb_backend.Ball
        The mean.

    References
    ----------
    SimRF sec 3.2, eq (13)-(14).

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.arb_backend import ARB, workprec
    >>> from rfcheck.references.simrf_proofs import mean_pair_norm_sq
    >>> mean_pair_norm_sq(4, "orf"), abs(mean_pair_norm_sq(4, "simrf") - (8 - 3 * mpmath.pi / 4)) < 1e-14
    (mpf('8.0'), True)
    >>> with workprec(80):
    ...     b = mean_pair_norm_sq(4, "simrf", ARB)
    >>> abs(float(b.v.mid()) - float(mean_pair_norm_sq(4, "simrf"))) < 1e-15
    True
    """
    from rfcheck.backends import MP

    ctx = MP if ctx is None else ctx
    if coupling != "simrf":
        return ctx.num(2 * d)
    er = ctx.sqrt(ctx.num(2)) * ctx.gamma(ctx.num(d + 1) / 2) / ctx.gamma(ctx.num(d) / 2)
    return 2 * d - 2 * er**2 / (d - 1)


def sine_power_integral(d: int, k: int, c: Any) -> Any:
    """``int_0^pi (sin phi)^{d-1} (1 + c sin phi)^k dphi`` by tanh-sinh quadrature (mpmath).

    Parameters
    ----------
    d, k : int
        Powers (``d >= 1``, ``k >= 0``).
    c : mpmath.mpf
        ``cos theta``.

    Returns
    -------
    mpmath.mpf
        The integral at the working precision (break point ``pi/2``).

    References
    ----------
    SimRF sec 4, eq (22).
    """
    return mpmath.quad(
        lambda ph: mpmath.sin(ph) ** (d - 1) * (1 + mpmath.sin(ph) * c) ** k, [0, mpmath.pi / 2, mpmath.pi]
    )


def sine_power_integral_ball(d: int, k: int, c: Any, prec: int) -> Any:
    """:func:`sine_power_integral` as a ball: ``acb.integral`` of the entire integrand on ``[0, pi]``.

    Parameters
    ----------
    d, k : int
        Powers.
    c : number
        ``cos theta`` (taken at its exact binary value).
    prec : int
        Target relative accuracy in bits.

    Returns
    -------
    flint.arb
        A ball containing the integral (a finite interval: no tail to bound).

    References
    ----------
    SimRF sec 4, eq (22).
    """
    from flint import arb

    from rfcheck.arb_backend import to_ball, workprec
    from rfcheck.references.gaussian import integral_ball

    cb = to_ball(c)
    with workprec(prec + 30):
        out = integral_ball(lambda ph, _a: ph.sin() ** (d - 1) * (1 + ph.sin() * cb) ** k, 0, arb.pi(), prec)
        return out.real


def pair_conformity_moment_ball(v: Any, d: int, c: Any, prec: int) -> Any:
    """``E 0F1(; d/2; v^2 |w|^2/4)``, ``|w|^2 = r_1^2 + r_2^2 + 2 c r_1 r_2``, ``r_1, r_2`` iid ``chi_d``, as a ball.

    The RF-conformity of a pair of rows at ``cos theta = c`` from its definition (eq (10)), by the
    Taylor series of ``0F1`` with exact moments, not a quadrature: ``sum_k a_k``,
    ``a_k = (v^2/4)^k E|w|^{2k} / (k! (d/2)_k)`` with the multinomial expansion
    ``E|w|^{2k} = k! sum_{j <= k} (2c)^j/j! sum_{a + b = k - j} M_{2a+j} M_{2b+j}/(a! b!)`` and the
    ``chi_d`` moments ``M_0 = 1``, ``M_1 = sqrt(2) Gamma((d+1)/2)/Gamma(d/2)``, ``M_{n+2} = (d + n) M_n``
    (the inner sums are coefficients of products of Arb polynomials, rigorous).

    Remainder: ``|w| <= r_1 + r_2`` (``|c| <= 1``) and ``(r_1 + r_2)^{2k} <= 2^{2k-1}(r_1^{2k} + r_2^{2k})``
    give ``E|w|^{2k} <= 4^k M_{2k} = 8^k (d/2)_k``, so ``0 <= a_k <= (2 v^2)^k / k!`` and
    ``sum_{k > K} a_k <= (2v^2)^{K+1}/(K+1)! / (1 - 2v^2/(K+2))`` (ratio of consecutive bounds
    ``2v^2/(k+1)``), added to the radius; ``K`` is the first index with that bound below
    ``2^-(prec+10)`` (the sum is at least ``a_0 = 1``).  Cancellation for ``c < 0`` costs at most
    ``log2 e^{2v^2}`` bits (every term is bounded by ``(2v^2)^k/k!``), which the working precision adds.

    Parameters
    ----------
    v : number
        ``|x + y|`` (>= 0; taken at its exact binary value).
    d : int
        Dimension (>= 1).
    c : number
        ``cos theta`` in ``[-1, 1]`` (taken at its exact binary value).
    prec : int
        Target relative accuracy in bits.

    Returns
    -------
    flint.arb
        A ball containing the expectation.

    Raises
    ------
    ValueError
        If ``|c| > 1`` or ``v < 0``.

    References
    ----------
    SimRF Def 3.1, eq (10) (the RF-conformity as an expectation over the two ``chi_d`` norms) and
    appendix A.6, eq (61)-(62).

    Examples
    --------
    At ``v = 0`` the conformity is 1 (only ``a_0 = 1`` is left, the remainder bound is 0):

    >>> from rfcheck.references.simrf_proofs import pair_conformity_moment_ball
    >>> b = pair_conformity_moment_ball(0.0, 5, -0.5, 64)
    >>> b.contains(1), float(b.rad()) < 1e-18
    (True, True)
    """
    from flint import arb, arb_poly

    from rfcheck.arb_backend import to_ball, workprec

    vf, cf = float(v), float(c)
    if vf < 0 or abs(cf) > 1:
        raise ValueError(f"pair_conformity_moment_ball: need v >= 0 and |c| <= 1, got v={v}, c={c}")
    x = 2 * vf * vf
    big_k = 0  # the first K whose tail bound (2v^2)^{K+1}/(K+1)!/(1 - 2v^2/(K+2)) is below 2^-(prec+10)
    while True:
        if big_k + 2 > 2 * x and (
            (big_k + 1) * math.log(max(x, 1e-300)) - math.lgamma(big_k + 2) - math.log(1 - x / (big_k + 2))
            < -(prec + 12) * math.log(2)
        ):
            break
        big_k += 1
    work = prec + 30 + int(x * 1.4427) + big_k.bit_length()
    with workprec(work):
        vb, cb = arb(to_ball(v)), arb(to_ball(c))
        half = arb(d) / 2
        mom = [arb(1), arb(2).sqrt() * ((arb(d) + 1) / 2).lgamma().exp() / half.lgamma().exp()]
        for n in range(2, 3 * big_k + 2):
            mom.append((d + n - 2) * mom[n - 2])
        fact = [arb(1)]
        for n in range(1, big_k + 1):
            fact.append(fact[-1] * n)
        # E|w|^{2k}/k! = sum_j (2c)^j/j! conv_j[k - j], conv_j = (sum_a M_{2a+j}/a! t^a)^2
        ew = [arb(0)] * (big_k + 1)
        for j in range(big_k + 1):
            half_len = big_k - j + 1
            poly = arb_poly([mom[2 * a + j] / fact[a] for a in range(half_len)])
            sq = poly * poly
            coef = (2 * cb) ** j / fact[j]
            for k in range(j, big_k + 1):
                ew[k] += coef * sq[k - j]
        tot, poch, z = arb(0), arb(1), vb * vb / 4
        for k in range(big_k + 1):
            if k:
                poch *= half + (k - 1)
            tot += z**k * ew[k] / poch  # a_k = z^k (E|w|^{2k}/k!) / (d/2)_k
        xb = 2 * vb * vb  # the exact 2 v^2 (the float x above only chooses K)
        tail = xb ** (big_k + 1) / fact[big_k] / (big_k + 1) / (1 - xb / (big_k + 2)) if vf else arb(0)
        return tot + arb(0, tail.upper())


def cdf_angle_ball(w: Any, d: int, c: Any, prec: int) -> Any:
    """``P(r_1^2 + r_2^2 + 2 c r_1 r_2 <= w^2)``, ``r_1, r_2`` iid ``chi_d``, ``|c| < 1``, as a ball.

    :func:`rfcheck.references.simrf.cdf_angle_root_quadrature` (the ``chi_d`` density of ``r_1`` times the
    ``chi_d`` CDF of ``r_2`` between the roots ``r_2 = -c r_1 -+ sqrt(w^2 - r_1^2 (1 - c^2))``) made entire:
    with ``T = w/sqrt(1 - c^2)`` and ``r_1 = T sin t``, ``t in [0, pi/2]``, the square root is ``w cos t``,
    ``dr_1 = T cos t dt``, the roots are ``hi = -c T sin t + w cos t`` and ``lo = -c T sin t - w cos t``.
    With ``t_0 = arccos |c|``: on ``[0, t_0]`` ``hi > 0 >= lo`` (the ``r_2``-interval is ``[0, hi]``); on
    ``[t_0, pi/2]`` it is ``[lo, hi]`` for ``c < 0`` (``lo >= 0``) and empty for ``c >= 0`` (``hi <= 0``).
    The integrands ``p(r) = r^{d-1} e^{-r^2/2}/(2^{d/2-1} Gamma(d/2))`` and the ``chi_d`` CDF
    ``F(x) = P(d/2, x^2/2)`` in its finite forms (DLMF 8.4.10-8.4.11, with ``z = x^2/2`` and ``sqrt z`` continued
    from ``x >= 0`` as ``x/sqrt 2``): ``1 - e^{-z} sum_{j < d/2} z^j/j!`` for even ``d``,
    ``erf(x/sqrt 2) - e^{-z} sum_{j < (d-1)/2} (x/sqrt 2)^{2j+1}/Gamma(j + 3/2)`` for odd ``d``, are entire in
    ``t`` (and, unlike Arb's ``1F1`` or ``gamma_lower``, tight on the integrator's wide probe balls): each
    piece is one ``acb.integral`` over a finite interval (no tail, no singular end point).  The cancellation
    of ``F`` at small ``x`` costs absolute accuracy only; ``d`` more working bits pay for it.

    Parameters
    ----------
    w : number
        The point (> 0; taken at its exact binary value).
    d : int
        Dimension (>= 1).
    c : number
        ``cos theta`` in ``(-1, 1)`` (taken at its exact binary value).
    prec : int
        Working precision in bits (the integrals' tolerance ``2^-(prec+20)``).

    Returns
    -------
    flint.arb
        A ball containing the probability.

    Raises
    ------
    ValueError
        If ``|c| >= 1`` or ``w <= 0``.

    References
    ----------
    SimRF appendix A.5, eq (54)-(55) (the CDF of ``|w_i + w_j|`` for rows at a fixed angle).

    Examples
    --------
    Orthogonal rows (``c = 0``): ``r_1^2 + r_2^2 ~ chi^2_{2d}``, ``P = P(d, w^2/2)``:

    >>> import mpmath
    >>> from rfcheck.references.simrf_proofs import cdf_angle_ball
    >>> b = cdf_angle_ball(1.5, 3, 0.0, 80)
    >>> abs(float(b.mid()) - float(mpmath.gammainc(3, 0, 1.125, regularized=True))) < 1e-15
    True
    """
    from flint import acb, arb

    from rfcheck.arb_backend import to_ball, workprec

    if not 0 < float(w) or not abs(float(c)) < 1:
        raise ValueError(f"cdf_angle_ball: need w > 0 and |c| < 1, got w={w}, c={c}")
    with workprec(prec + 20 + d):
        wb, cb = arb(to_ball(w)), arb(to_ball(c))
        half = arb(d) / 2
        big_t = wb / (1 - cb * cb).sqrt()
        pdf_norm = arb(2) ** (half - 1) * half.gamma()
        if d % 2 == 0:
            coefs = [1 / arb(j + 1).gamma() for j in range(d // 2)]  # z^j/j!
        else:
            coefs = [1 / (arb(j) + arb(3) / 2).gamma() for j in range((d - 1) // 2)]  # u^{2j+1}/Gamma(j + 3/2)
        sqrt2 = arb(2).sqrt()

        def pdf(r: Any) -> Any:
            return r ** (d - 1) * (-(r * r) / 2).exp() / pdf_norm

        def cdf(x: Any) -> Any:
            z = x * x / 2
            if d % 2 == 0:
                return 1 - (-z).exp() * sum((cf * z**j for j, cf in enumerate(coefs)), acb(0))
            u = x / sqrt2
            return u.erf() - (-z).exp() * sum((cf * u ** (2 * j + 1) for j, cf in enumerate(coefs)), acb(0))

        def first(t: Any, _analytic: bool) -> Any:
            r1 = big_t * t.sin()
            return pdf(r1) * cdf(-cb * r1 + wb * t.cos()) * big_t * t.cos()

        def second(t: Any, _analytic: bool) -> Any:
            r1 = big_t * t.sin()
            return pdf(r1) * (cdf(-cb * r1 + wb * t.cos()) - cdf(-cb * r1 - wb * t.cos())) * big_t * t.cos()

        t0 = abs(cb).acos()
        out = acb.integral(first, 0, t0).real
        if cb < 0:
            out += acb.integral(second, t0, arb.pi() / 2).real
        elif not cb >= 0:
            raise ValueError("cdf_angle_ball: the sign of c is undecided (c must be an exact number)")
        return out


def tight_ball(fn: Callable[[], Any], bits: int, extra: int, limit: int) -> Any:
    """``fn()`` at ``bits + extra`` bits of working precision, ``extra`` doubled until the ball is ``2^-bits`` tight.

    For enclosures that lose bits to cancellation (alternating series, a power and a Bessel function whose
    large factors cancel): the ball stays rigorous at every precision; raising it only narrows the ball.

    Parameters
    ----------
    fn : callable
        ``fn() -> flint.arb or flint.acb``, evaluated at flint's working precision.
    bits : int
        Target relative accuracy in bits: a finite ball with radius at most ``2^-bits`` of its midpoint's
        magnitude (complex: of each part's radius against the modulus) is returned.
    extra : int
        Guard bits of the first try (>= 1).
    limit : int
        No further doubling once ``extra`` exceeds this: the last (possibly wide) ball is returned.

    Returns
    -------
    flint.arb or flint.acb
        A ball containing the value.

    References
    ----------
    SimRF appendix A.1, eq (31)-(32) (the Bessel function of the direction average, evaluated on balls).

    Examples
    --------
    ``1 + 10^-30 - 1`` needs about 100 bits beyond 53 to be tight:

    >>> from flint import arb
    >>> from rfcheck.references.simrf_proofs import tight_ball
    >>> b = tight_ball(lambda: (1 + arb(10) ** -30) - 1, 53, 8, 1024)
    >>> b.contains(arb(10) ** -30) or b.overlaps(arb(10) ** -30), float(b.rad()) <= 1e-30 * 2.0 ** -53
    (True, True)
    """
    from flint import acb, arb

    from rfcheck.arb_backend import workprec

    while True:
        with workprec(bits + extra):
            out = fn()
        if isinstance(out, acb):
            tight = max(out.real.rad(), out.imag.rad()) <= abs(out).mid() * arb(2) ** (-bits)
        else:
            tight = out.rad() <= abs(out.mid()) * arb(2) ** (-bits)
        if (out.is_finite() and tight) or extra > limit:
            return out
        extra *= 2


def quarter_period_integral_ball(f: Callable[[Any, bool], Any], bits: int) -> Any:
    """``int_0^{pi/2} f`` by one ``acb.integral`` at ``bits + 20`` bits, the real part.

    Parameters
    ----------
    f : callable
        ``f(phi, analytic) -> flint.acb``, entire and real on the real line (``acb.integral``'s convention).
    bits : int
        Working precision in bits (``acb.integral`` at ``bits + 20`` bits with its default tolerances,
        which are absolute: a small integral can come back as a wide, still rigorous, ball).

    Returns
    -------
    flint.arb
        A ball containing the integral (a finite interval: no tail to bound).

    References
    ----------
    SimRF appendix A.5-A.6, eq (55), (61), (62) (the phi-integrals over a quarter period).

    Examples
    --------
    >>> from flint import arb
    >>> from rfcheck.references.simrf_proofs import quarter_period_integral_ball
    >>> b = quarter_period_integral_ball(lambda ph, _a: ph.sin(), 64)
    >>> bool(b.contains(1)), float(b.rad()) < 1e-18
    (True, True)
    """
    from flint import acb, arb

    from rfcheck.arb_backend import workprec

    with workprec(bits + 20):
        return acb.integral(f, 0, arb.pi() / 2).real


@memo.lru(64)
def chi2d_moment_ratio_ball(d: int, bits: int) -> Any:
    """``E w^4 / E w^2`` for ``w ~ chi_2d`` as a ball: both moments by rigorous quadrature (memoised).

    Parameters
    ----------
    d : int
        Half the degrees of freedom (>= 1): ``|w_i + w_j|`` of an orthogonal pair is ``chi_2d`` (SimRF eq (58)).
    bits : int
        Target accuracy in bits (:func:`rfcheck.references.gaussian.chi_moment_ball` at ``bits + 10``).

    Returns
    -------
    flint.arb
        A ball containing the ratio (exactly ``2d + 2``).

    References
    ----------
    SimRF sec 3.2, footnote 4.

    Examples
    --------
    >>> from rfcheck.references.simrf_proofs import chi2d_moment_ratio_ball
    >>> b = chi2d_moment_ratio_ball(3, 64)
    >>> bool(b.contains(8)), float(b.rad()) < 1e-15
    (True, True)
    """
    from rfcheck.arb_backend import workprec
    from rfcheck.references.gaussian import chi_moment_ball

    with workprec(bits + 20):
        return chi_moment_ball(4, 2 * d, bits + 10) / chi_moment_ball(2, 2 * d, bits + 10)


def lower_gamma_int_ball(d: int) -> Callable[[Any], Any]:
    """``z -> gamma(d, z) = (d-1)! (1 - e^{-z} sum_{j<d} z^j/j!)``, the lower incomplete gamma function of an
    integer order on balls (DLMF 8.4.7): entire, and tight on wide balls where Arb's ``gamma_lower``
    overestimates; its cancellation at small ``z`` costs absolute accuracy only.

    Parameters
    ----------
    d : int
        The order (>= 1); the factorials are formed at the working precision of each evaluation.

    Returns
    -------
    callable
        ``z -> flint.acb``, ``z`` a ``flint.arb`` or ``flint.acb``.

    References
    ----------
    SimRF appendix A.5, eq (55) (the r-integral of the printed integrand, ``2^{d-1} gamma(d, R^2/2)``).

    Examples
    --------
    ``gamma(1, z) = 1 - e^{-z}``:

    >>> from flint import arb
    >>> from rfcheck.references.simrf_proofs import lower_gamma_int_ball
    >>> bool(lower_gamma_int_ball(1)(arb(2)).overlaps(1 - (-arb(2)).exp()))
    True
    """
    from flint import acb

    from rfcheck.arb_backend import ARB, Ball

    def lower_gamma(z: Any) -> Any:
        return ARB.gammainc_lower(d, Ball(acb(z))).v  # the Arb context's DLMF 8.4.7 sum

    return lower_gamma


def f_series_ctx(ctx: Any, x: Any, d: int) -> Any:
    """``sum_k x^k/(4^k k! Gamma(k + d/2))`` on a number-system context: :func:`f_series` in mpmath,
    :func:`f_series_ball` (proven remainder) on Arb balls.

    Parameters
    ----------
    ctx : Backend
        :data:`rfcheck.backends.MP` or :data:`rfcheck.arb_backend.ARB`.
    x : mpmath.mpf or rfcheck.arb_backend.Ball
        The argument, a number of that context.
    d : int
        Dimension (>= 1).

    Returns
    -------
    mpmath.mpf or rfcheck.arb_backend.Ball
        The sum.

    References
    ----------
    SimRF appendix A.2, eq (36)-(37), (42).

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.arb_backend import ARB, workprec
    >>> from rfcheck.backends import MP
    >>> from rfcheck.references.simrf_proofs import f_series_ctx
    >>> with workprec(80):
    ...     b = f_series_ctx(ARB, ARB.num(2.0), 3)
    >>> want = f_series_ctx(MP, mpmath.mpf(2), 3)
    >>> abs(float(b.v.mid()) - float(want)) < 1e-15 * float(want), float(b.v.rad()) < 1e-20
    (True, True)
    """
    from rfcheck.arb_backend import Ball

    return Ball(f_series_ball(x.v, d)) if ctx.name == "arb" else f_series(x, d)


def ctx_rows(ctx: Any, U: np.ndarray) -> list[list[Any]]:
    """Rows of ``U`` on a number-system context, renormalised there (in mpmath: as :func:`mp_rows`).

    Parameters
    ----------
    ctx : Backend
        :data:`rfcheck.backends.MP` or :data:`rfcheck.arb_backend.ARB`.
    U : numpy.ndarray
        ``(m, d)`` float rows (each taken at its exact binary value).

    Returns
    -------
    list of list
        Unit rows, numbers of the context.

    References
    ----------
    SimRF appendix A.2 (unit directions ``w_hat_i``).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.backends import MP
    >>> from rfcheck.references.simrf_proofs import ctx_rows, mp_rows
    >>> U = np.array([[3.0, 4.0], [1.0, -1.0]])
    >>> ctx_rows(MP, U) == mp_rows(U), [float(x) for x in ctx_rows(MP, U)[0]]
    (True, [0.6, 0.8])
    """
    out = []
    for row in U:
        xs = [ctx.num(float(x)) for x in row]
        n = ctx.sqrt(ctx.fsum(*(x * x for x in xs)))
        out.append([x / n for x in xs])
    return out


def ctx_dot(ctx: Any, a: list[Any], b: list[Any]) -> Any:
    """``a . b`` on a number-system context (``ctx.fsum``: ``mpmath.fsum`` in mpmath, as :func:`dot`).

    Parameters
    ----------
    ctx : Backend
        :data:`rfcheck.backends.MP` or :data:`rfcheck.arb_backend.ARB`.
    a, b : list
        Vectors of equal length, numbers of the context.

    Returns
    -------
    number of the context

    Raises
    ------
    ValueError
        If the lengths differ.

    References
    ----------
    SimRF appendix A.2 (the cosines ``w_hat_i . w_hat_j``).

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.backends import MP
    >>> from rfcheck.references.simrf_proofs import ctx_dot
    >>> ctx_dot(MP, [mpmath.mpf(1), mpmath.mpf(2)], [mpmath.mpf(3), mpmath.mpf(-4)])
    mpf('-5.0')
    """
    return ctx.fsum(*(x * y for x, y in zip(a, b, strict=True)))


def gaussian_vectors(
    m: int, d: int, seed: int, scale: float, ctx: Any = None
) -> tuple[list[list[Any]], list[Any], list[Any]]:
    """``m`` standard normal rows ``w_i`` and two points ``x, y`` (standard normal times ``scale``) on a context.

    Parameters
    ----------
    m, d : int
        Number of rows and dimension.
    seed : int
        Seed of ``numpy.random.default_rng`` (``m + 2`` rows drawn at once: ``W``, then ``x``, ``y``).
    scale : float
        The scale of ``x`` and ``y`` (multiplied on the context).
    ctx : Backend, optional
        The number-system context (default :data:`rfcheck.backends.MP`); the float draws are exact there.

    Returns
    -------
    tuple
        ``(W, x, y)``: the rows, and the two points.

    References
    ----------
    SimRF appendix A.1, eq (28), and A.8, eq (72) (random features of ``x`` and ``y``).

    Examples
    --------
    >>> from rfcheck.references.simrf_proofs import gaussian_vectors
    >>> W, x, y = gaussian_vectors(3, 2, 0, 0.0)
    >>> len(W), len(W[0]), [float(t) for t in x + y]
    (3, 2, [0.0, 0.0, 0.0, 0.0])
    """
    from rfcheck.backends import MP

    ctx = MP if ctx is None else ctx
    g = np.random.default_rng(seed).standard_normal((m + 2, d))
    s = float(scale)
    rows = [[ctx.num(float(t)) for t in r] for r in g[:m]]
    return rows, [ctx.num(float(t)) * s for t in g[m]], [ctx.num(float(t)) * s for t in g[m + 1]]


def equal_angle_config(d: int, t: Any, seed: int, ctx: Any = None) -> tuple[list[list[Any]], list[Any]]:
    """The Gram matrix of ``d`` unit directions at equal angles and ``d`` ``chi_d`` norms, on a context.

    The common cosine is ``c = -1/(d-1) + t (1 + 1/(d-1))`` (``t = 0``: the simplex, ``t -> 1``: aligned); the
    directions enter SimRF eq (46)-(47) only through ``w_hat_i . w_hat_j``, so the exact Gram matrix (1 on the
    diagonal, ``c`` off it) stands for them.

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    t : float or mpmath.mpf
        Position of the cosine between the simplex (0) and alignment (1).
    seed : int
        Seed of the norms (:func:`chi_norms`).
    ctx : Backend, optional
        The number-system context (default :data:`rfcheck.backends.MP`).

    Returns
    -------
    tuple
        ``(C, r)``: the ``d x d`` Gram matrix and the norms, numbers of the context.

    References
    ----------
    SimRF appendix A.2, eq (46)-(47).

    Examples
    --------
    >>> from rfcheck.references.simrf_proofs import equal_angle_config
    >>> C, r = equal_angle_config(3, 0.0, 1)
    >>> float(C[0][0]), float(C[0][1]), len(r)
    (1.0, -0.5, 3)
    """
    from rfcheck.backends import MP

    ctx = MP if ctx is None else ctx
    c = -ctx.num(1) / (d - 1) + ctx.num(t) * (1 + ctx.num(1) / (d - 1))
    C = [[ctx.num(1) if i == j else c for j in range(d)] for i in range(d)]
    r = [ctx.num(float(x)) for x in chi_norms(d, d, seed)]
    return C, r


def plus_config(d: int, seed: int, big: float = 1.0, start: str = "simplex") -> tuple[np.ndarray, np.ndarray]:
    """``d`` vectors ``w_i = r_i u_i`` with ``chi_d`` norms (the first scaled by ``big``), the directions the
    simplex or random (float64): the starting configurations of the SimRF eq (17) update.

    Parameters
    ----------
    d : int
        Dimension and number of vectors (>= 2).
    seed : int
        Seed of the norms (:func:`chi_norms`) and, ``seed + 5``, of random directions (:func:`unit_config`).
    big : float, default 1.0
        Factor of the first norm (large: it exceeds the sum of the others, the antialigned case of A.3).
    start : {"simplex", "random"}, default "simplex"
        The directions.

    Returns
    -------
    tuple of numpy.ndarray
        ``(W, r)``: the ``(d, d)`` vectors and their norms.

    References
    ----------
    SimRF sec 3.2, eq (16)-(17), and appendix A.3, eq (50)-(51).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.simrf_proofs import plus_config
    >>> W, r = plus_config(4, 3, big=40.0)
    >>> bool(np.allclose(np.linalg.norm(W, axis=1), r)), bool(r[0] > r[1:].sum())
    (True, True)
    """
    from rfcheck.engine.montecarlo import simplex_matrix

    r = chi_norms(d, d, seed)
    r[0] *= float(big)
    U = simplex_matrix(d) if start == "simplex" else unit_config(d, d, seed + 5)
    return r[:, None] * U, r


def multistart_minimiser(
    obj: Callable[[np.ndarray], tuple[float, np.ndarray]], dim: int, seed: int, tries: int = 4
) -> np.ndarray:
    """The best of ``tries`` L-BFGS-B minima of ``obj`` (with its exact gradient) from standard normal starts.

    Parameters
    ----------
    obj : callable
        ``flat (dim,) -> (value, gradient)`` (``scipy.optimize.minimize(jac=True)``'s convention), e.g.
        :func:`symmetrised_pair_objective`.
    dim : int
        The number of variables.
    seed : int
        Seed of ``numpy.random.default_rng`` drawing the starts (one ``dim``-vector per try).
    tries : int, default 4
        Number of starts.

    Returns
    -------
    numpy.ndarray
        The minimiser with the lowest value (the first of equal ones), float64: a numerical optimiser's output
        (``maxiter`` 3000, ``gtol`` 1e-13, ``ftol`` 1e-16), not an enclosure.

    References
    ----------
    SimRF appendix A.2, eq (48) (the minimiser of the eq (42) sum).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.simrf_proofs import multistart_minimiser
    >>> x = multistart_minimiser(lambda x: (float(np.sum((x - 1) ** 2)), 2 * (x - 1)), 3, 0)
    >>> bool(np.allclose(x, 1))
    True
    """
    from scipy import optimize

    rng = np.random.default_rng(seed)
    best, bx = math.inf, None
    for _ in range(tries):
        res = optimize.minimize(
            obj,
            rng.standard_normal(dim),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": 3000, "gtol": 1e-13, "ftol": 1e-16},
        )
        if res.fun < best:
            best, bx = float(res.fun), res.x
    return bx


def perm_config(d: int, seed: int, ctx: Any = None) -> tuple[list[Any], list[list[Any]]]:
    """``d`` ``chi_d`` norms (seed ``seed + 1``) and the Gram matrix of ``d`` random unit directions (seed ``seed``),
    on a context: the configurations of the permutation sums of SimRF eq (42)-(43).

    Parameters
    ----------
    d : int
        Dimension and number of directions (>= 1).
    seed : int
        Seed of the directions (:func:`unit_config`); the norms use ``seed + 1`` (:func:`chi_norms`).
    ctx : Backend, optional
        The number-system context (default :data:`rfcheck.backends.MP`); the rows are renormalised there
        (:func:`ctx_rows`), the cosines by :func:`ctx_dot`.

    Returns
    -------
    tuple
        ``(r, C)``: the norms and the ``d x d`` Gram matrix, numbers of the context.

    References
    ----------
    SimRF appendix A.2, eq (42)-(43).

    Examples
    --------
    >>> from rfcheck.references.simrf_proofs import perm_config
    >>> r, C = perm_config(3, 8)
    >>> len(r), [round(float(C[i][i]), 12) for i in range(3)], C[0][1] == C[1][0]
    (3, [1.0, 1.0, 1.0], True)
    """
    from rfcheck.backends import MP

    ctx = MP if ctx is None else ctx
    U = ctx_rows(ctx, unit_config(d, d, seed))
    C = [[ctx_dot(ctx, U[i], U[j]) for j in range(d)] for i in range(d)]
    r = [ctx.num(float(x)) for x in chi_norms(d, d, seed + 1)]
    return r, C


def eq17_iterate(W: np.ndarray, tol: float = 1e-13, max_passes: int = 10_000) -> tuple[np.ndarray, int, float]:
    """The update of eq (17), ``w_i <- -(sum_{j != i} w_j)/|sum_{j != i} w_j| |w_i|``, in passes over ``i = 1..m``.

    Each pass updates the rows in turn (the running sum kept current); the passes stop when no row moved by more
    than ``tol`` relative to its norm, or after ``max_passes``.  The norms are kept.

    Parameters
    ----------
    W : numpy.ndarray
        ``(m, d)`` starting rows (not modified).
    tol : float
        Largest relative move of a row in the last pass.
    max_passes : int
        Pass budget.

    Returns
    -------
    W : numpy.ndarray
        The rows after the last pass.
    passes : int
        Passes made.
    residual : float
        The eq (16) residual of the result (:func:`eq16_residual`).

    Examples
    --------
    Three rows of different norms in the plane reach an eq (16) configuration, norms unchanged:

    >>> import numpy as np
    >>> W0 = np.array([[1.0, 0.0], [-0.4, 0.9], [-0.6, -0.8]]) * np.array([[1.0], [2.0], [1.5]])
    >>> W, passes, res = eq17_iterate(W0)
    >>> bool(res < 1e-12), bool(np.allclose(np.linalg.norm(W, axis=1), np.linalg.norm(W0, axis=1))), passes < 100
    (True, True, True)

    References
    ----------
    SimRF sec 3.2, eq (16)-(17) (= appendix A.3 eq (50)-(51)).
    """
    W = np.array(W, dtype=float, copy=True)
    r = np.linalg.norm(W, axis=1)
    tot = W.sum(axis=0)
    for n in range(1, max_passes + 1):  # noqa: B007 (n is returned)
        moved = 0.0
        for i in range(W.shape[0]):
            s = tot - W[i]
            ns = np.linalg.norm(s)
            if ns == 0:
                continue
            new = -s / ns * r[i]
            moved = max(moved, float(np.linalg.norm(new - W[i])) / r[i])
            tot = s + new
            W[i] = new
        if moved <= tol:
            break
    return W, n, eq16_residual(W)


def besselj_ctx(ctx: Any, a: Any, z: Any) -> Any:
    """``J_a(z)`` on a number-system context.

    Parameters
    ----------
    ctx : backend context
        :data:`rfcheck.backends.MP` (``mpmath.besselj``) or :data:`rfcheck.arb_backend.ARB` (Arb's Bessel
        function; real for a real ``z``).
    a, z : number of the context
        Order and argument (``z`` may be complex).

    Returns
    -------
    number of the context
        ``J_a(z)``.

    Examples
    --------
    ``J_{1/2}(x) = sqrt(2/(pi x)) sin x`` on both faces:

    >>> import mpmath
    >>> from rfcheck.arb_backend import ARB, workprec
    >>> from rfcheck.backends import MP
    >>> exact = mpmath.sqrt(2 / (mpmath.pi * 3)) * mpmath.sin(3)
    >>> bool(abs(besselj_ctx(MP, mpmath.mpf(0.5), mpmath.mpf(3)) - exact) < 1e-14)
    True
    >>> with workprec(80):
    ...     b = besselj_ctx(ARB, ARB.num(0.5), ARB.num(3)).v
    >>> bool(abs(float(b.mid()) - float(exact)) < 1e-15), bool(b.rad() < 1e-20)
    (True, True)

    References
    ----------
    SimRF appendix A.1, eq (31)-(32); appendix A.8, eq (75).
    """
    if ctx.name != "arb":
        return mpmath.besselj(a, z)
    from flint import acb, arb

    from rfcheck.arb_backend import Ball

    out = acb(z.v).bessel_j(a.v)
    return Ball(out.real if isinstance(z.v, arb) else out)


def integral_from_zero_ctx(ctx: Any, upper: Any, fn: Callable[[Any], Any]) -> Any:
    """``int_0^upper fn(phi) dphi`` on a number-system context, for an integrand entire near ``[0, upper]``.

    In mpmath a guarded tanh-sinh on 32 equal panels (:func:`rfcheck.references.gaussian.guarded_quad`; the peak of
    ``(sin phi)^{d-1}`` is ~ ``1/sqrt(d)`` wide); on balls Arb's rigorous integration
    (:func:`rfcheck.references.gaussian.integral_ball`, a finite interval: no tail) at flint's working precision.

    Parameters
    ----------
    ctx : backend context
        :data:`rfcheck.backends.MP` or :data:`rfcheck.arb_backend.ARB`.
    upper : number of the context
        Upper limit.
    fn : callable
        ``fn(phi)`` on the context's numbers.

    Returns
    -------
    number of the context
        The integral.

    Examples
    --------
    ``int_0^pi sin^2 = pi/2`` on both faces:

    >>> import mpmath
    >>> from rfcheck.arb_backend import ARB, workprec
    >>> from rfcheck.backends import MP
    >>> v = integral_from_zero_ctx(MP, mpmath.pi, lambda t: mpmath.sin(t) ** 2)
    >>> bool(abs(v - mpmath.pi / 2) < 1e-14)
    True
    >>> with workprec(80):
    ...     b = integral_from_zero_ctx(ARB, ARB.pi, lambda t: ARB.sin(t) ** 2).v
    >>> bool(abs(float(b.mid()) - float(mpmath.pi / 2)) < 1e-15), bool(b.rad() < 1e-20)
    (True, True)

    References
    ----------
    SimRF appendix A.5, eq (57).
    """
    from rfcheck.references import gaussian as gauss

    if ctx.name == "arb":
        from flint import ctx as flint_ctx

        from rfcheck.arb_backend import Ball

        return Ball(gauss.integral_ball(lambda ph, _a: fn(ph).v, 0, upper.v, flint_ctx.prec).real)
    return gauss.guarded_quad(fn, lambda: mpmath.linspace(0, upper, 33))


def lagrangian_gradient_ball(v: Any, r: list[Any], U: list[list[Any]], i: int) -> list[Any]:
    """:func:`lagrangian_gradient` on balls: ``F'(q) = v^2 0F1(; d/2 + 1; v^2 q/4) / (4 Gamma(d/2 + 1))`` by Arb's
    ``0F1``, at flint's working precision.

    Parameters
    ----------
    v : flint.arb
        ``|v|``.
    r : list of rfcheck.arb_backend.Ball
        The ``d`` norms (numbers of the Arb context).
    U : list of list of rfcheck.arb_backend.Ball
        The ``d`` unit directions (:func:`ctx_rows` on the Arb context).
    i : int
        Which direction (0-based).

    Returns
    -------
    list of flint.arb
        The gradient.

    Examples
    --------
    It encloses the mpmath gradient:

    >>> import mpmath
    >>> from rfcheck.arb_backend import ARB, workprec
    >>> U0 = unit_config(3, 3, 1)
    >>> with mpmath.workdps(40):
    ...     g = lagrangian_gradient(mpmath.mpf(1), [mpmath.mpf(x) for x in (1.0, 1.5, 0.5)], mp_rows(U0), 0)
    >>> with workprec(120):
    ...     h = lagrangian_gradient_ball(ARB.num(1).v, [ARB.num(x) for x in (1.0, 1.5, 0.5)], ctx_rows(ARB, U0), 0)
    >>> all(abs(float(a.mid()) - float(b)) < 1e-25 for a, b in zip(h, g)), all(a.rad() < 1e-25 for a in h)
    (True, True)

    References
    ----------
    SimRF appendix A.2, eq (44)-(45).
    """
    from flint import arb

    from rfcheck.arb_backend import ARB

    d = len(U)
    half_d = arb(d) / 2
    g1 = (half_d + 1).gamma()
    H = [arb(0)] * d
    for P in itertools.permutations(range(d)):
        for j in range(d):
            if j == i:
                continue
            a, b = r[P[i]].v, r[P[j]].v
            q = a * a + b * b + 2 * a * b * ctx_dot(ARB, U[i], U[j]).v
            fp = v * v * (v * v * q / 4).hypgeom_0f1(half_d + 1) / (4 * g1)
            H = [o + 4 * fp * (a * a * U[i][c].v + a * b * U[j][c].v) for c, o in enumerate(H)]
    return H

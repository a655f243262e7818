"""Reference computations for Chefs' Random Tables (``crt``): quantities defined independently of any printed claim.

The CRT claims of Thm 3.1-3.2 and eq (16)-(21) reduce (by rotation invariance) to the
one-dimensional Gaussian moment ``E exp(alpha W^2 + beta W)``, ``W ~ N(0, 1)``.  Here it is a
rigorous integral of the defining expectation (Arb's ``acb.integral`` on the truncated line,
plus a proved bound on the two tails) -- never the closed form ``(1 - 2 alpha)^{-1/2}
exp(beta^2 / (2 (1 - 2 alpha)))`` that the printed formulas build on (the ball twins use, where
``alpha`` is exactly 0 -- TrigRF and PosRF, ``A = 0`` -- the Gaussian moment generating function
``E exp(beta W) = exp(beta^2 / 2)``).

Also here: the pair statistics as Arb balls (:func:`pair_stats_ball`); the argmin of the GERF
variance of Thm 3.3 by a root solve (:func:`reference_a_star`); the noncentral chi^2 CDF as a
Poisson mixture behind Thm 4.2's OPRF tail (:func:`noncentral_chi2_log_cdf`); and, for
appendix 9.7 (eq (26)-(32), proof of Thm 9.1), the spherical averages ``E_u exp(gamma u_1)`` by
two independent routes (:func:`sphere_exp_mean_hyp`, :func:`sphere_exp_mean_quad`) and the
conditional iid/orthogonal moments built on them (:func:`conditional_moments`,
:func:`conditional_moments_ball`, :func:`gerf_ort_point`, :func:`gerf_ort_conditional_t_ball`).
Enclosures of the minimisers of Thm 3.3-3.4 by bisection on a sign decided on balls
(:func:`gerf_a_star_ball`, :func:`poisrf_lambda_star_ball`; :func:`poisrf_lambda_star` in mpmath) and
the OPRF log-variance gain (:func:`gerf_log_variance_ratio`); the exact tail of one OPRF sample behind
Thm 4.2 with certified lower and upper enclosures (:func:`oprf_tail_log_probability`); the range of
that sample, eq (35) (:func:`oprf_log_z_balls`); eq (17)'s shifted Gaussian integral
(:func:`gaussian_shifted_integral`); eq (34)'s extremal two-point tail (:func:`two_point_sum_tail`);
the DIRF feature of eq (10) from its definition (:func:`dirf_feature`) and the mean of eq (9)'s unnormalised
product (:func:`dirf_unnormalised_product_mean`), the DIRF estimator's variance of Thm 3.4-3.5
(:func:`dirf_product_variance`); the orthogonal-pair covariance gap of Thm 4.1
(:func:`orf_pair_covariance_gap`) and the variance reduction of Thm 9.1 (:func:`orf_variance_reduction`),
each by quadrature and by the exact covariance identity on balls; the OPRF estimator's Monte Carlo replicas,
iid or orthogonal (:func:`oprf_mc_estimates`); the averages over all pairs of two
sets that eq (8), (12), (14) rewrite (:func:`set_pair_mean_sq_norm`, :func:`set_pair_mean_sq_product`,
:func:`set_pair_mean_abs_product`); and the set statistics of sec 5.1 (:func:`sec51_set_statistics`).

References
----------
CRT appendix 9.2-9.3 (the integrals behind eq (16)-(21)), sec 3 (Thm 3.3), sec 4 (Thm 4.2) and
appendix 9.7.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import mpmath
from flint import acb, arb

from rfcheck import memo, quadrature
from rfcheck.arb_backend import to_ball, workprec
from rfcheck.closed_forms import crt as cf
from rfcheck.ledger import pair_stats as stats_mp
from rfcheck.ledger import pair_stats_fp as stats_fp
from rfcheck.ledger import pair_vectors

__all__ = [
    "conditional_moments",
    "conditional_moments_ball",
    "dirf_feature",
    "dirf_feature_ball",
    "dirf_product_moment",
    "dirf_product_moment_ball",
    "dirf_product_variance",
    "dirf_product_variance_ball",
    "dirf_series_moment",
    "dirf_series_moment_ball",
    "dirf_unnormalised_product_mean",
    "dirf_unnormalised_product_mean_ball",
    "gaussian_exp_moment_ball",
    "gaussian_shifted_integral",
    "gaussian_shifted_integral_ball",
    "gerf_a_star_ball",
    "gerf_abs_second_moment",
    "gerf_abs_second_moment_ball",
    "gerf_conditional_mean_square",
    "gerf_conditional_mean_square_ball",
    "gerf_conjugate_mean",
    "gerf_conjugate_mean_ball",
    "gerf_log_variance_ratio",
    "gerf_log_variance_ratio_ball",
    "gerf_mc_products",
    "gerf_moments_ball",
    "gerf_ort_conditional_t_ball",
    "gerf_ort_pair_conditional_mean",
    "gerf_ort_pair_conditional_mean_ball",
    "gerf_ort_point",
    "gerf_reference_at",
    "gerf_second_moment",
    "noncentral_chi2_log_cdf",
    "noncentral_chi2_mixture_lower_ball",
    "noncentral_chi2_mixture_upper_ball",
    "oprf_legendre_transform",
    "oprf_log_mgf",
    "oprf_log_z_balls",
    "oprf_log_z_maximiser",
    "oprf_mc_estimates",
    "oprf_point",
    "oprf_tail_log_probability",
    "oprf_tail_lower_ball",
    "oprf_tail_upper_ball",
    "orf_pair_covariance_gap",
    "orf_pair_covariance_gap_ball",
    "orf_variance_reduction",
    "orf_variance_reduction_ball",
    "pair_stats_ball",
    "poisrf_lambda_star",
    "poisrf_lambda_star_ball",
    "poisrf_q_ball",
    "reference_a_star",
    "sec51_set_statistics",
    "set_pair_mean_abs_product",
    "set_pair_mean_sq_norm",
    "set_pair_mean_sq_product",
    "sphere_exp_mean_hyp",
    "sphere_exp_mean_quad",
    "two_point_sum_tail",
    "two_point_sum_tail_ball",
]

#: extra bits tried, at most, when the integral of an oscillating integrand cancels
MAX_EXTRA_BITS = 512
#: half periods of the oscillation over the bulk beyond which the contour is moved to the
#: steepest-descent line (as ``rfcheck.quadrature.MAX_OSCILLATIONS``)
MAX_OSCILLATIONS = 120


def _tail_bound(r: arb, c: arb, w: arb) -> arb:
    """``e^{c^2/(2r)} erfc((W - c/r) sqrt(r/2)) / sqrt(r)`` (needs ``W > c/r``): a bound of
    ``int_{|t|>W} exp(-r t^2/2 + c|t|) dt / sqrt(2 pi)``."""
    return (c * c / (2 * r)).exp() * ((w - c / r) * (r / 2).sqrt()).erfc() / r.sqrt()


def gaussian_exp_moment_ball(alpha: Any, beta: Any, prec: int) -> acb:
    """``E exp(alpha W^2 + beta W)`` for ``W ~ N(0, 1)`` as a complex ball with a rigorous radius.

    Parameters
    ----------
    alpha, beta : int, float, complex, mpmath number, flint ball, or callable
        Complex parameters with ``Re(1 - 2 alpha) > 0``; numbers are taken at their exact
        binary value.  A callable ``prec -> ball`` (a parameter that is itself computed, e.g. a
        square root) is called at every working precision tried, so that its own radius shrinks
        with the integral's: a ball passed as such keeps its radius, which a cancelling
        integral amplifies beyond what any working precision can remove.
    prec : int
        Target precision in bits: the radius is at most about ``2^-prec`` times the value,
        unless even ``prec + MAX_EXTRA_BITS`` working bits cannot resolve a cancelling
        integral (the radius then says so honestly).

    Returns
    -------
    flint.acb
        A ball that contains the expectation.

    Raises
    ------
    ValueError
        If ``prec`` is not an integer ``>= 8``, or if ``Re(1 - 2 alpha) > 0`` does not hold
        (certainly) for the ball of ``alpha`` at the working precision: the expectation
        diverges (or ``alpha``'s ball straddles the boundary).

    Notes
    -----
    With ``q0 = 1 - 2 alpha`` the contour is rotated, ``w = e^{i phi} t``, ``phi =
    -arg(q0)/2`` (Cauchy: the integrand is entire and decays in the sector swept), so that
    the Gaussian factor ``exp(-|q0| t^2 / 2)`` is real and only the linear term ``b t``,
    ``b = beta e^{i phi}``, oscillates.  ``acb.integral`` integrates over ``[-T, T]``; on
    ``|t| > T`` the integrand is bounded by ``exp(-q t^2/2 + |Re b| |t|)``, whose integral
    (``e^{c^2/(2q)} erfc((T - c/q) sqrt(q/2)) / sqrt(q)``, ``c = |Re b|``, for the expectation)
    is added to the radius.  ``T`` puts that bound below ``2^-prec``
    times the value; where the value is small because the oscillation cancels, the working
    precision is raised by the bits lost, and the integral repeated.  Beyond
    ``MAX_OSCILLATIONS`` half periods over the bulk (as in
    :func:`rfcheck.quadrature.gaussian_exp_moment`) the contour is also shifted to the steepest-descent line ``Im t =
    Im(b)/q``, where the linear term is real (the integrand picks up the constant factor
    ``exp(-q s^2/2 + b s)``, ``s = i Im(b)/q``); on that line the same tail bound holds.

    References
    ----------
    CRT appendix 9.2-9.3: ``E exp(alpha w^2 + beta w)`` is the factor of eq (16), (19)-(21).

    Examples
    --------
    >>> from rfcheck.references.crt import gaussian_exp_moment_ball
    >>> ball = gaussian_exp_moment_ball(0.25, 1.0, 100)  # sqrt(2) e
    >>> round(float(ball.real.mid()), 10), float(ball.real.rad()) < 1e-28
    (3.8442310282, True)
    """
    if not isinstance(prec, int) or prec < 8:
        raise ValueError(f"prec must be an integer >= 8 (bits); got {prec!r}")
    extra = 0
    shift_contour = None
    while True:
        bits = prec + 20 + extra
        with workprec(bits):
            a = acb(alpha(bits) if callable(alpha) else to_ball(alpha))
            b0 = acb(beta(bits) if callable(beta) else to_ball(beta))
            q0 = 1 - 2 * a
            if not q0.real > 0:
                raise ValueError("the Gaussian expectation diverges: need Re(1 - 2 alpha) > 0")
            if q0.imag == 0:
                rot = acb(1)
                q = q0.real
            else:
                rot = (-q0.arg() / 2 * acb(0, 1)).exp()
                q = abs(q0)
            b = b0 * rot
            shift = acb(0)
            if shift_contour is None:
                width = math.sqrt(2 * (prec * math.log10(2) + 10) * math.log(10) / float(q.mid()))
                shift_contour = abs(float(b.imag.mid())) * 2 * width / math.pi + 4 > MAX_OSCILLATIONS
            if shift_contour:
                # the steepest-descent line Im t = Im(b)/q, where the linear term is real
                shift = acb(0, b.imag / q)
            c = abs(b.real)
            # T with exp(-(T - c/q)^2 q/2) <= 2^-(bits + 10 + extra) times the L1 scale
            z2 = (bits + 10) * math.log(2)
            qf, cf = float(q.mid()), float(c.upper())
            t_end = arb(cf / qf + math.sqrt(2 * z2 / qf) + 1)
            if shift_contour:
                const, lin = (q * shift * shift / -2 + b * shift).exp(), acb(b.real)
            else:
                const, lin = acb(1), b

            def integrand(t: acb, _an: bool, q: arb = q, lin: acb = lin) -> acb:
                return (-q * t * t / 2 + lin * t).exp()

            body = acb.integral(integrand, -t_end, t_end) / (2 * arb.pi()).sqrt()
            tail_r = arb(0, _tail_bound(q, c, t_end).upper())
            out = rot * const * acb(body.real + tail_r, body.imag + tail_r)
            mag = abs(out).lower()
            rad = max(out.real.rad(), out.imag.rad())
            if mag > 0 and rad <= mag * arb(2) ** (-prec):
                return out
            if extra >= MAX_EXTRA_BITS:
                return out
            # in Arb: the value may lie below the float64 range (a ratio of floats would be 0/0)
            lost = float(((rad.upper() / mag).log() / arb(2).log()).mid()) + prec + 4 if mag > 0 else 64
            extra = min(MAX_EXTRA_BITS, extra + max(16, math.ceil(lost)))


def _exp_moment_ball(alpha: Any, beta: Any, prec: int) -> acb:
    """``E exp(alpha W^2 + beta W)`` as a ball, arguments as :func:`gaussian_exp_moment_ball`: where
    ``alpha`` is exactly 0 (TrigRF, PosRF: ``A = 0``) the Gaussian moment generating function
    ``E exp(beta W) = exp(beta^2 / 2)`` (entire in ``beta``; not the closed form of eq (17), which the
    printed GERF formulas build on), else the rigorous integral :func:`gaussian_exp_moment_ball`."""
    if isinstance(alpha, int | float | complex | arb | acb) and alpha == 0:  # (a ball: exactly 0)
        with workprec(prec + 20):
            b = acb(beta(prec + 20) if callable(beta) else to_ball(beta))
            return (b * b / 2).exp()
    return gaussian_exp_moment_ball(alpha, beta, prec)


def _at_prec(fn: Callable[[], Any]) -> Callable[[int], Any]:
    """``fn()`` (a ball computed from exact data) as a parameter of :func:`gaussian_exp_moment_ball`
    re-formed at each working precision it tries."""
    def arg(prec: int) -> Any:
        with workprec(prec):
            return fn()
    return arg


def pair_stats_ball(p: dict[str, Any], general: bool = False) -> dict[str, Any]:
    """Squared norms of a pair point as Arb balls: the ball twin of ``rfcheck.ledger.pair_stats``.

    Parameters
    ----------
    p : dict
        A pair point (``nx``, ``ny``, ``theta``, ``d``); its floats are taken as exact.
    general : bool, default False
        The general formulas in every ``d``, also ``d = 1`` (``|x -+ y|^2 = (nx - ny)^2 + 4 nx ny
        sin^2, cos^2(theta/2)``), the operations of ``rfcheck.ledger.pair_stats`` on balls.

    Returns
    -------
    dict
        ``sq_x = |x|^2, sq_y = |y|^2, sq_sum = |x + y|^2, sq_diff = |x - y|^2`` as ``flint.arb``
        balls at the working precision, and ``d`` (int).

    Notes
    -----
    In ``d = 1`` the vectors are those of ``rfcheck.ledger.pair_vectors``, ``x = nx``,
    ``y = ny cos(theta)`` (theta is a float near 0 or pi there, and the balls resolve the
    ``ny sin(theta)`` that no axis carries).  Used by CRT eq (1)-(2), (21), (25), (32)-(35), Thm 4.2.

    Examples
    --------
    >>> st = pair_stats_ball({"nx": 1.0, "ny": 2.0, "theta": 0.0, "d": 3})
    >>> [st[k].mid() for k in ("sq_x", "sq_y", "sq_sum", "sq_diff")], st["d"]
    ([1.00000000000000, 4.00000000000000, 9.00000000000000, 1.00000000000000], 3)
    >>> bool(pair_stats_ball({"nx": 1.0, "ny": 2.0, "theta": 1.0, "d": 1}, general=True)["sq_y"] == 4)
    True
    """
    if general:
        return _pair_stats_ball_general(p)
    nx, ny, th = arb(p["nx"]), arb(p["ny"]), arb(p["theta"])
    if int(p["d"]) == 1:
        y = ny * th.cos()
        return {"sq_x": nx * nx, "sq_y": y * y, "sq_sum": (nx + y) ** 2, "sq_diff": (nx - y) ** 2, "d": 1}
    return {"sq_x": nx * nx, "sq_y": ny * ny,
            "sq_sum": (nx - ny) ** 2 + 4 * nx * ny * (th / 2).cos() ** 2,
            "sq_diff": (nx - ny) ** 2 + 4 * nx * ny * (th / 2).sin() ** 2, "d": int(p["d"])}


def _pair_stats_ball_general(p: dict[str, Any]) -> dict[str, Any]:
    """:func:`pair_stats_ball` by the general formulas in every ``d`` (also ``d = 1``), as
    ``rfcheck.ledger.pair_stats`` computes them: the ball twin of the mpmath references built on it."""
    nx, ny, th = arb(p["nx"]), arb(p["ny"]), arb(p["theta"])
    return {"sq_x": nx * nx, "sq_y": ny * ny,
            "sq_sum": (nx - ny) ** 2 + 4 * nx * ny * (th / 2).cos() ** 2,
            "sq_diff": (nx - ny) ** 2 + 4 * nx * ny * (th / 2).sin() ** 2, "d": int(p["d"])}


def sphere_exp_mean_hyp(gamma: Any, d: int) -> tuple[Any, Any]:
    """``E_u exp(gamma u_1)`` for ``u`` uniform on the unit sphere of R^d, by the spherical-mean identity.

    Parameters
    ----------
    gamma : mpmath number
        Real argument.
    d : int
        Dimension, ``d >= 1``.

    Returns
    -------
    (value, err) : tuple of mpf
        ``0F1(; d/2; gamma^2/4)`` (``mpmath.hyp0f1``) and the error bar 0.

    Notes
    -----
    CRT appendix 9.7 (eq (26)-(32), proof of Thm 9.1): the spherical averages of the GERF terms.
    """
    return mpmath.hyp0f1(mpmath.mpf(d) / 2, gamma * gamma / 4), mpmath.mpf(0)


def sphere_exp_mean_quad(gamma: Any, d: int) -> tuple[Any, Any]:
    """``E_u exp(gamma u_1)`` for ``u`` uniform on the unit sphere of R^d, by quadrature.

    The route independent of :func:`sphere_exp_mean_hyp`: tanh-sinh quadrature of
    ``e^{gamma t}`` against the density of ``u_1``, ``(1 - t^2)^{(d-3)/2} / B(1/2, (d-1)/2)``.

    Parameters
    ----------
    gamma : mpmath number
        Real argument.
    d : int
        Dimension, ``d >= 2``.

    Returns
    -------
    (value, err) : tuple of mpf
        The integral and mpmath's error estimate plus a rounding allowance.

    Notes
    -----
    CRT appendix 9.7 (eq (26)-(32), proof of Thm 9.1).
    """
    expo = (mpmath.mpf(d) - 3) / 2
    norm = 1 / mpmath.beta(mpmath.mpf(1) / 2, (mpmath.mpf(d) - 1) / 2)
    val, err = mpmath.quad(lambda t: norm * (1 - t * t) ** expo * mpmath.exp(gamma * t), [-1, 0, 1], error=True)
    return val, err + abs(val) * mpmath.eps * 100


def gerf_ort_point(p: dict[str, Any]) -> dict[str, Any]:
    """mpmath constants of the GERF instantiation of CRT appendix 9.7 at a point (call inside ``workdps``).

    Parameters
    ----------
    p : dict
        A pair point with ``a_re`` (real A < 1/4, s = +1), ``M`` and ``rho1..rhoM`` (the conditional
        norms are ``r_m = rho_m sqrt(d)``).

    Returns
    -------
    dict
        ``d, M, A, B = sqrt(1 - 4A), nz = |x + y|, P0 = (1 - 4A)^{d/2} e^{-|x|^2 - |y|^2}``,
        ``r`` (list of the norms) and ``K2 = exp(-|x - y|^2)``: the GERF term is
        ``g(a, b) = P0 exp(2 A b^2 + B a)`` (CRT eq (26)-(32), proof of Thm 9.1).
    """
    s = stats_mp(p)
    d, m = s["d"], int(p["M"])
    a = mpmath.mpf(p["a_re"])
    return {"d": d, "M": m, "A": a, "B": mpmath.sqrt(1 - 4 * a), "nz": mpmath.sqrt(s["sq_sum"]),
            "P0": mpmath.power(1 - 4 * a, mpmath.mpf(d) / 2) * mpmath.exp(-s["sq_x"] - s["sq_y"]),
            "r": [mpmath.mpf(p[f"rho{i + 1}"]) * mpmath.sqrt(d) for i in range(m)], "K2": mpmath.exp(-s["sq_diff"])}


def conditional_moments(p: dict[str, Any], dps: int, scaled: bool, method: str) -> dict[str, Any]:
    """Conditional moments of the GERF terms given the norms, iid vs orthogonal directions (CRT eq (26)-(32)).

    Conditioned on the norms ``r_1..r_M``, the terms are ``X_m = g(c_m u_m^T z, r_m)`` with ``u_m``
    uniform on the sphere (iid) or an orthonormal frame (ort); ``g`` as in :func:`gerf_ort_point`.

    Parameters
    ----------
    p : dict
        A point as in :func:`gerf_ort_point`.
    dps : int
        Decimal digits (10 guard digits are added).
    scaled : bool
        ``c_m = r_m`` (the estimator: ``w_m^T z = r_m u_m^T z``), else ``c_m = 1``
        (``X_m = g_{x_m}(u_m^T z)``, the literal eq (29)-(30)).
    method : {"hyp", "quad"}
        The spherical average: :func:`sphere_exp_mean_hyp` or :func:`sphere_exp_mean_quad`.

    Returns
    -------
    dict
        ``var_iid``, ``var_ort`` (conditional variances of the mean), ``T = var_iid - var_ort``,
        ``F`` (list, ``F_m = E[g~(c_m u^T z, r_m)]``), ``M``, ``d``, ``err`` (an error bar) and
        ``scale`` (the mean second moment).
    """
    sph = sphere_exp_mean_hyp if method == "hyp" else sphere_exp_mean_quad
    with mpmath.workdps(dps + 10):
        o = gerf_ort_point(p)
        d, m, a, b, nz, p0 = o["d"], o["M"], o["A"], o["B"], o["nz"], o["P0"]
        c = o["r"] if scaled else [mpmath.mpf(1)] * m
        err = mpmath.mpf(0)
        mean, second, f = [], [], []
        for ci, ri in zip(c, o["r"], strict=True):
            e1, er1 = sph(b * ci * nz, d)
            e2, er2 = sph(2 * b * ci * nz, d)
            w = p0 * mpmath.exp(2 * a * ri * ri)
            mean.append(w * e1)
            second.append(w * w * e2)
            f.append(w * (e1 - 1))
            err += w * er1 + w * w * er2
        var_iid = mpmath.fsum(s2 - mu * mu for s2, mu in zip(second, mean, strict=True)) / m**2
        cov = mpmath.mpf(0)
        for i in range(m):
            for j in range(i + 1, m):
                e, er = sph(b * nz * mpmath.sqrt(c[i] ** 2 + c[j] ** 2), d)
                w = p0 * p0 * mpmath.exp(2 * a * (o["r"][i] ** 2 + o["r"][j] ** 2))
                cov += w * e - mean[i] * mean[j]
                err += w * er
        var_ort = var_iid + 2 * cov / m**2
        scale = mpmath.fsum(second) / m
        return {"var_iid": var_iid, "var_ort": var_ort, "T": var_iid - var_ort, "F": f, "M": m, "d": d,
                "err": 4 * err / m + scale * mpmath.mpf(10) ** (-dps - 5), "scale": scale}


def conditional_moments_ball(p: dict[str, Any], bits: int, scaled: bool) -> dict[str, Any]:
    """Arb-ball twin of :func:`conditional_moments` (CRT eq (26)-(32), proof of Thm 9.1).

    The spherical averages by the identity ``E_u exp(gamma u^T e) = 0F1(; d/2; gamma^2/4)``
    (``arb.hypgeom_0f1``, rigorous).

    Parameters
    ----------
    p : dict
        A point as in :func:`gerf_ort_point`.
    bits : int
        Working precision in bits.
    scaled : bool
        As in :func:`conditional_moments`.

    Returns
    -------
    dict
        ``var_iid``, ``var_ort``, ``T`` and ``F`` (a list) as ``flint.arb`` balls, ``M`` and ``d``.
    """

    with workprec(bits):
        st = pair_stats_ball(p)
        d, m = st["d"], int(p["M"])
        a = arb(p["a_re"])
        b, nz = (1 - 4 * a).sqrt(), st["sq_sum"].sqrt()
        p0 = ((1 - 4 * a).log() * d / 2).exp() * (-st["sq_x"] - st["sq_y"]).exp()
        r = [arb(p[f"rho{i + 1}"]) * arb(d).sqrt() for i in range(m)]
        c = r if scaled else [arb(1)] * m

        def sph(gamma: Any) -> Any:
            return (gamma * gamma / 4).hypgeom_0f1(arb(d) / 2)

        mean, second, f = [], [], []
        for ci, ri in zip(c, r, strict=True):
            e1, e2 = sph(b * ci * nz), sph(2 * b * ci * nz)
            w = p0 * (2 * a * ri * ri).exp()
            mean.append(w * e1)
            second.append(w * w * e2)
            f.append(w * (e1 - 1))
        var_iid = sum((s2 - mu * mu for s2, mu in zip(second, mean, strict=True)), arb(0)) / m**2
        cov = arb(0)
        for i in range(m):
            for j in range(i + 1, m):
                w = p0 * p0 * (2 * a * (r[i] ** 2 + r[j] ** 2)).exp()
                cov += w * sph(b * nz * (c[i] ** 2 + c[j] ** 2).sqrt()) - mean[i] * mean[j]
        var_ort = var_iid + 2 * cov / m**2
        return {"var_iid": var_iid, "var_ort": var_ort, "T": var_iid - var_ort, "F": f, "M": m, "d": d}


def reference_a_star(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """argmin over real A < 1/8 of the GERF variance (s = +1), by numerical minimisation (CRT Thm 3.3, eq (7), (22)).

    The objective is the library's variance (``closed_forms.crt.gerf_log_variance``, which
    claim crt.thm3.2 ties to quadrature); neither eq (7) nor eq (22) is used.  The root of
    the derivative (mpmath numerical differentiation) is bracketed -- the derivative is
    positive at A = 0 when |x+y| > 0, and a lower end is found by doubling -- and solved
    by a bracketing method (Anderson-Bjorck); the error bar is the change between ``dps``
    and ``dps + 10``.  A failure raises, which leaves the point undecided.

    Memoised (module cache keyed by the point's ``d, nx, ny, theta`` and ``dps``): several
    claims and readings ask for the minimiser at the same points.  Within one solve the
    derivative is memoised by the exact abscissa and working precision: once converged the
    Anderson-Bjorck iteration revisits the same few abscissae until ``maxsteps`` (its
    tolerance lies below the working precision), so the memo returns bit-identical values
    at a fraction of the cost.

    Parameters
    ----------
    p : dict
        A pair point (``d``, ``nx``, ``ny``, ``theta``) with ``|x + y| > 0``.
    dps : int
        Decimal digits.

    Returns
    -------
    (value, err) : tuple of mpf
        The minimiser ``A*`` and its error bar.
    """
    key = (_pair_key(p), dps)
    hit = _A_STAR_CACHE.get(key)
    if hit is not None:
        return hit
    res = _reference_a_star(p, dps)
    if len(_A_STAR_CACHE) > 1024:
        _A_STAR_CACHE.clear()
    _A_STAR_CACHE[key] = res
    return res


def _pair_key(p: dict[str, Any]) -> tuple[Any, ...]:
    """The exact parameters of a pair point that ``rfcheck.ledger.pair_stats`` reads (a cache key)."""
    return tuple((k, repr(p[k])) for k in ("d", "nx", "ny", "theta"))


_A_STAR_CACHE: dict[Any, tuple[Any, Any]] = memo.cache()


def _reference_a_star(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """:func:`reference_a_star` without the module cache."""
    out = []
    for prec in (dps, dps + 10):
        with mpmath.workdps(prec):
            st = stats_mp(p)

            def fm(a: Any, st: dict[str, Any] = st) -> Any:
                # mpmath.diff raises the working precision: follow it
                return cf.gerf_log_variance(**st, a=a, s=1, backend="mpmath", dps=mpmath.mp.dps)

            memo: dict[Any, Any] = {}

            def g(a: Any, fm: Any = fm, memo: dict[Any, Any] = memo) -> Any:
                z = mpmath.mpmathify(a)
                k = (getattr(z, "_mpf_", None) or z._mpc_, mpmath.mp.prec)
                if k not in memo:
                    memo[k] = mpmath.diff(fm, a)
                return memo[k]

            hi = mpmath.mpf(0)
            lo = -mpmath.mpf(1) / 8
            for _ in range(80):
                if g(lo) < 0:
                    break
                lo *= 2
            else:
                raise ArithmeticError("could not bracket the minimiser")
            if not g(hi) > 0:
                raise ArithmeticError("derivative at A = 0 is not positive: cannot bracket")
            root = mpmath.findroot(g, (lo, hi), solver="anderson", tol=mpmath.mpf(10) ** (-2 * prec + 10),
                                   maxsteps=400, verify=False)
            out.append(root)
    return out[1], abs(out[1] - out[0]) + mpmath.mpf(10) ** (5 - dps) * abs(out[1])


def noncentral_chi2_log_cdf(w: Any, d: int, nc: Any, dps: int) -> Any:
    """``log P[W <= w]`` for ``W`` noncentral chi-squared with ``d`` degrees of freedom and noncentrality ``nc``.

    The Poisson mixture ``sum_j Pois(j; nc/2) P[chi^2_{d+2j} <= w]`` (regularized lower incomplete
    gamma functions, ``mpmath.gammainc``), summed outwards from the Poisson mode until a term falls
    ``dps + 10`` decades below the largest; every term is >= 0, so a partial sum is a lower bound.
    Used by the OPRF tail of CRT Thm 4.2 (``Z = Z_max exp(2 A W)``).

    Parameters
    ----------
    w : mpmath number
        The threshold (``w <= 0`` gives ``-inf``).
    d : int
        Degrees of freedom.
    nc : mpmath number
        Noncentrality, ``>= 0``.
    dps : int
        Decimal digits of the truncation (evaluate at a working precision of at least ``dps``).

    Returns
    -------
    mpf
        ``log P[W <= w]`` (``-inf`` when ``w <= 0``).
    """
    if w <= 0:
        return -mpmath.inf
    lam = nc / 2
    j0 = int(lam)
    terms = []
    for j in list(range(j0, -1, -1)) + list(range(j0 + 1, j0 + 100_000)):
        lt = -lam + j * mpmath.log(lam) - mpmath.loggamma(j + 1) if lam > 0 else (0 if j == 0 else -mpmath.inf)
        lt += mpmath.log(mpmath.gammainc(mpmath.mpf(d) / 2 + j, 0, w / 2, regularized=True))
        terms.append(lt)
        if j > j0 and lt < max(terms) - (dps + 10) * mpmath.log(10):
            break
    big = max(terms)
    return big + mpmath.log(mpmath.fsum(mpmath.exp(t - big) for t in terms if t > -mpmath.inf))


# ----------------------------------------------------------------- GERF moments (eq (1), (16)-(21))


def _gerf_a(p: dict[str, Any]) -> Any:
    """The GERF parameter ``A = a_re + i a_im`` of a point as an mpmath number (its floats exact)."""
    return mpmath.mpc(p.get("a_re", 0.0), p.get("a_im", 0.0))


def _gerf_conjugate_mean_at(p: dict[str, Any]) -> tuple[Any, Any]:
    st = stats_mp(p)
    a = _gerf_a(p)
    s = p["s"]
    one4a = 1 - 4 * a
    b = mpmath.sqrt(s * one4a)
    c = -mpmath.mpf(s + 1) / 2
    dd = mpmath.power(mpmath.power(one4a, mpmath.mpf(1) / 4), st["d"])
    # f1 conj(f2) = D conj(D) exp((A + conj A)|w|^2 + w.(B x + conj(s B) y) + C|x|^2 + conj(C)|y|^2)
    # the linear coefficient vector is complex and not along one real direction: use
    # coordinates along x and orthogonal to it (y in span{e1, e2}).
    nx, ny, th = mpmath.mpf(p["nx"]), mpmath.mpf(p["ny"]), mpmath.mpf(p["theta"])
    sb = mpmath.conj(s * b)
    l1 = b * nx + sb * ny * mpmath.cos(th)
    l2 = sb * ny * mpmath.sin(th)
    alpha = a + mpmath.conj(a)
    pref = dd * mpmath.conj(dd) * mpmath.exp(c * st["sq_x"] + mpmath.conj(c) * st["sq_y"])
    i1, e1 = quadrature.gaussian_exp_moment(alpha, l1)
    i2, e2 = quadrature.gaussian_exp_moment(alpha, l2) if st["d"] > 1 else (1, 0)
    i0, e0 = quadrature.gaussian_exp_moment(alpha, 0)
    val, err = quadrature.product_with_error([(i1, e1, 1), (i2, e2, 1), (i0, e0, max(st["d"] - 2, 0))])
    return mpmath.re(pref * val), abs(pref) * err


def gerf_conjugate_mean(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``E Re(f^(1)(w, x) conj(f^(2)(w, y)))`` for GERF(A, s), by 1-D Gaussian quadratures.

    ``f1 conj(f2) = D conj(D) exp((A + conj A)|w|^2 + w.(B x + conj(s B) y) + C|x|^2 + conj(C)|y|^2)``;
    the linear coefficient is complex and not along one real direction, so the expectation is the
    product of ``E exp(alpha W^2 + beta W)`` along ``e1`` (the direction of ``x``), ``e2`` and the
    ``d - 2`` remaining axes (:func:`rfcheck.quadrature.gaussian_exp_moment`, no closed form).

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``) with ``a_re``, ``a_im`` (default 0) and ``s`` (+-1);
        ``Re(1 - 4A) > 0``.
    dps : int
        Decimal digits of the result (the quadratures are repeated at rising precision until stable).

    Returns
    -------
    (value, err) : tuple of mpf
        The expectation and its error bar.

    References
    ----------
    CRT sec 2.1, eq (1) (with the conjugate) and Theorem 3.1, eq (4)-(5).
    """
    r = quadrature.with_error(lambda prec: _gerf_conjugate_mean_at(p), dps, "quadrature")
    return r.value, r.err


def gerf_conjugate_mean_ball(p: dict[str, Any], bits: int) -> arb:
    """Arb ball of :func:`gerf_conjugate_mean`: the same product of 1-D Gaussian moments, each a
    rigorous integral (:func:`gaussian_exp_moment_ball`), the prefactor on ``acb`` balls.

    Parameters
    ----------
    p : dict
        As :func:`gerf_conjugate_mean` (its floats exact).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing ``E Re(f1 conj(f2))``.

    References
    ----------
    CRT sec 2.1, eq (1) and Theorem 3.1, eq (4)-(5).

    Notes
    -----
    Evaluated at ``bits + 20`` bits; the linear coefficients of the integrals are re-formed at
    each working precision the integral tries (their rounding, amplified where the integral
    cancels, stays below the target).
    """
    with workprec(bits + 20):
        st = pair_stats_ball(p)
        d, s = st["d"], int(p["s"])
        a = acb(p.get("a_re", 0.0), p.get("a_im", 0.0))
        one4a = 1 - 4 * a
        c = acb(-(s + 1) / 2)
        dd = (one4a.log() / 4 * d).exp()  # (one4a^(1/4))^d, principal branch, d an integer
        alpha = a + a.conjugate()
        pref = dd * dd.conjugate() * (c * st["sq_x"] + c.conjugate() * st["sq_y"]).exp()
        val = _exp_moment_ball(alpha, _at_prec(lambda: _conjugate_linear(p)[0]), bits)
        if d > 1:
            val *= _exp_moment_ball(alpha, _at_prec(lambda: _conjugate_linear(p)[1]), bits)
        if d > 2:
            val *= _gaussian_exp_moment_at_zero(complex(2 * float(p.get("a_re", 0.0))), bits) ** (d - 2)
        return (pref * val).real


def _conjugate_linear(p: dict[str, Any]) -> tuple[acb, acb]:
    """The linear coefficients ``(l1, l2)`` of ``f1 conj(f2)`` along ``e1, e2`` (:func:`gerf_conjugate_mean_ball`)
    at the working precision."""
    s = int(p["s"])
    b = (s * (1 - 4 * acb(p.get("a_re", 0.0), p.get("a_im", 0.0)))).sqrt()
    nx, ny, th = acb(p["nx"]), acb(p["ny"]), acb(p["theta"])
    sb = (s * b).conjugate()
    return b * nx + sb * ny * th.cos(), sb * ny * th.sin()


def _gerf_abs_second_moment_at(p: dict[str, Any]) -> tuple[Any, Any]:
    st = stats_mp(p)
    a, s, d = _gerf_a(p), p["s"], st["d"]
    one4a = 1 - 4 * a
    b = mpmath.sqrt(s * one4a)
    dd = mpmath.power(mpmath.power(one4a, mpmath.mpf(1) / 4), d)
    v = st["sq_sum"] if s == 1 else st["sq_diff"]
    pref = abs(dd) ** 4 * mpmath.exp(-(s + 1) * (st["sq_x"] + st["sq_y"]))
    i1, e1 = quadrature.gaussian_exp_moment(4 * mpmath.re(a), 2 * mpmath.re(b) * mpmath.sqrt(v))
    i0, e0 = quadrature.gaussian_exp_moment(4 * mpmath.re(a), 0)
    val, err = quadrature.product_with_error([(i1, e1, 1), (i0, e0, d - 1)])
    return pref * val, abs(pref) * err


def gerf_abs_second_moment(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``E|f^(1)(w, x) f^(2)(w, y)|^2`` for GERF(A, s), by 1-D Gaussian quadratures.

    ``|f1 f2|^2 = |D|^4 exp(4 Re(A)|w|^2 + 2 Re(B) w.(x + s y) - (s+1)(|x|^2 + |y|^2))``; rotating
    ``x + s y`` onto the first axis, the product of ``E exp(4 Re(A) W^2 + 2 Re(B)|x + s y| W)`` and
    ``d - 1`` factors ``E exp(4 Re(A) W^2)`` (:func:`rfcheck.quadrature.gaussian_exp_moment`).

    Parameters
    ----------
    p : dict
        A pair point with ``a_re``, ``a_im`` and ``s``; ``Re(1 - 8A) > 0``.
    dps : int
        Decimal digits of the result.

    Returns
    -------
    (value, err) : tuple of mpf
        The moment and its error bar.

    References
    ----------
    CRT appendix 9.3, eq (19) and (21) (the quantity eq (21) computes).
    """
    r = quadrature.with_error(lambda prec: _gerf_abs_second_moment_at(p), dps, "quadrature")
    return r.value, r.err


def gerf_abs_second_moment_ball(p: dict[str, Any], bits: int) -> arb:
    """Arb ball of :func:`gerf_abs_second_moment`: the same product of 1-D Gaussian moments as
    rigorous integrals (:func:`gaussian_exp_moment_ball`).

    Parameters
    ----------
    p : dict
        As :func:`gerf_abs_second_moment`.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing ``E|f1 f2|^2``.

    Notes
    -----
    The linear coefficient of the integral is re-formed at each working precision that
    :func:`gaussian_exp_moment_ball` tries, so that its own rounding (amplified where the integral
    cancels) does not keep the ball from reaching ``bits``.  The pair statistics
    are those of the mpmath reference (``rfcheck.ledger.pair_stats``, the general formulas also in
    ``d = 1``), so that the ball encloses the same quantity.  Memoised by the point's exact
    parameters and ``bits`` (a module cache).

    References
    ----------
    CRT appendix 9.3, eq (19) and (21).
    """
    return _memo(("abs_second", _gerf_key(dict(p, s=int(p["s"]))), bits),
                 lambda: _gerf_abs_second_moment_ball(p, bits))


def _gerf_abs_second_moment_ball(p: dict[str, Any], bits: int) -> arb:
    """:func:`gerf_abs_second_moment_ball` without the module cache."""
    with workprec(bits + 20):
        st = _pair_stats_ball_general(p)
        s, d = int(p["s"]), st["d"]
        a = acb(p.get("a_re", 0.0), p.get("a_im", 0.0))
        one4a = 1 - 4 * a
        pref = abs((one4a.log() / 4 * d).exp()) ** 4 * (-(s + 1) * (st["sq_x"] + st["sq_y"])).exp()
        val = _exp_moment_ball(4 * a.real, _at_prec(lambda: _gerf_linear(p, s, True)), bits)
        if d > 1:
            val *= _gaussian_exp_moment_at_zero(complex(4 * float(p.get("a_re", 0.0))), bits) ** (d - 1)
        return (pref * val).real


def gerf_second_moment(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``E[(f^(1)(w, x) f^(2)(w, y))^2]`` (complex in general) for GERF(A, s), by 1-D Gaussian quadratures.

    ``(f1 f2)^2 = D^4 exp(4A|w|^2 + 2B w.(x + s y) - (s+1)(|x|^2 + |y|^2))``: the product of
    ``E exp(4A W^2 + 2B|x + s y| W)`` and ``d - 1`` factors ``E exp(4A W^2)`` (complex contour
    quadratures, :func:`rfcheck.quadrature.gaussian_exp_moment`).

    Parameters
    ----------
    p : dict
        A pair point with ``a_re``, ``a_im`` and ``s``; ``Re(1 - 8A) > 0``.
    dps : int
        Decimal digits of the result.

    Returns
    -------
    (value, err) : tuple
        The (complex) moment and its error bar.

    References
    ----------
    CRT appendix 9.3, eq (19) and (20) (the quantity eq (20) computes).
    """
    def compute(prec: int) -> tuple[Any, Any]:
        st = stats_mp(p)
        a, s, d = _gerf_a(p), p["s"], st["d"]
        one4a = 1 - 4 * a
        b = mpmath.sqrt(s * one4a)
        dd = mpmath.power(mpmath.power(one4a, mpmath.mpf(1) / 4), d)
        v = st["sq_sum"] if s == 1 else st["sq_diff"]
        c = -mpmath.mpf(s + 1) / 2
        pref = dd**4 * mpmath.exp(2 * c * (st["sq_x"] + st["sq_y"]))
        i1, e1 = quadrature.gaussian_exp_moment(4 * a, 2 * b * mpmath.sqrt(v))
        i0, e0 = quadrature.gaussian_exp_moment(4 * a, 0)
        val, err = quadrature.product_with_error([(i1, e1, 1), (i0, e0, d - 1)])
        return pref * val, abs(pref) * err

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def _gerf_linear(p: dict[str, Any], s: int, real_part: bool, d1_pair_vectors: bool = False) -> Any:
    """``B |x + s y|`` (or ``2 Re(B) |x + s y|`` where ``real_part``), ``B = sqrt(s (1 - 4A))``, at the
    working precision: the linear coefficient of the GERF moments along ``x + s y``; the pair
    statistics as :func:`gerf_moments_ball` takes them."""
    st = pair_stats_ball(p) if d1_pair_vectors else _pair_stats_ball_general(p)
    b = (s * (1 - 4 * acb(p.get("a_re", 0.0), p.get("a_im", 0.0)))).sqrt()
    nz = (st["sq_sum"] if s == 1 else st["sq_diff"]).sqrt()
    return 2 * b.real * nz if real_part else b * nz


@memo.lru(64)
def _gaussian_exp_moment_at_zero(alpha: complex, bits: int) -> acb:
    """``E exp(alpha W^2)`` as :func:`gaussian_exp_moment_ball` (``beta = 0``), memoised: the factor
    of the ``d - 1`` axes orthogonal to ``x + s y``, the same for every point with the same ``A``."""
    return _exp_moment_ball(alpha, 0, bits)


def gerf_moments_ball(p: dict[str, Any], bits: int, second: bool = True,
                      d1_pair_vectors: bool = False) -> dict[str, Any]:
    """Arb balls of the moments of ``X = f^(1)(w, x) f^(2)(w, y)`` for GERF(A, s): the ball twin of
    :func:`rfcheck.quadrature.gerf_reference` (whose quadratures are the midpoints of the same integrals).

    ``X = D^2 exp(2A|w|^2 + B w.(x + s y) + C(|x|^2 + |y|^2))``; rotating ``x + s y`` onto the first
    axis, ``E X = D^2 e^{C(..)} I(2A, B|x + s y|) I(2A, 0)^{d-1}`` with ``I(alpha, beta) = E exp(alpha W^2 +
    beta W)`` a rigorous integral (:func:`gaussian_exp_moment_ball`), likewise ``E X^2`` (parameters
    doubled) and ``E|X|^2`` (:func:`gerf_abs_second_moment_ball`); ``D^2 = exp((d/2) log(1 - 4A))``
    (the principal fourth root raised to ``2d``).

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``) with ``a_re``, ``a_im`` (default 0) and ``s`` (default +1);
        ``Re(1 - 4A) > 0`` (``Re(1 - 8A) > 0`` for the second moments).
    bits : int
        Working precision in bits.
    second : bool, default True
        Whether to compute the second moments (else only ``mean``).
    d1_pair_vectors : bool, default False
        Pair statistics of :func:`pair_stats_ball` (in ``d = 1`` the vectors of
        ``rfcheck.ledger.pair_vectors``, ``y = ny cos(theta)``) instead of those of the mpmath
        reference (``rfcheck.ledger.pair_stats``, the general formulas in every ``d``); the two
        differ only in ``d = 1`` at ``theta`` off ``0, pi`` (by the rounding of ``pi``, at a point of
        the domains).

    Returns
    -------
    dict
        ``mean`` (``E X``, ``acb``), ``second`` (``E X^2``, ``acb``), ``abs_second`` (``E|X|^2``,
        ``arb``) and ``var`` (``Var Re X = (Re E X^2 + E|X|^2)/2 - (Re E X)^2``, ``arb``); only
        ``mean`` where ``Re(1 - 8A) <= 0`` or ``second`` is false.

    Notes
    -----
    Memoised by the point's exact parameters and ``bits`` (a module cache, as
    :func:`gerf_abs_second_moment_ball`): the checks and readings of a claim, and claims on the
    same domain, ask for the balls of the same points; a hit returns the same balls.

    References
    ----------
    CRT Theorem 3.1-3.2, eq (4)-(6), appendix 9.2-9.3, eq (16)-(21).
    """
    full = _BALL_CACHE.get(("moments", _gerf_key(p), bits, True, d1_pair_vectors))
    if full is not None and (not second or "second" in full):
        return dict(full) if second else {"mean": full["mean"]}
    return dict(_memo(("moments", _gerf_key(p), bits, second, d1_pair_vectors),
                      lambda: _gerf_moments_ball(p, bits, second, d1_pair_vectors)))


def _gerf_key(p: dict[str, Any]) -> tuple[Any, ...]:
    """The exact parameters of a GERF pair point (a cache key of the balls)."""
    return _pair_key(p) + tuple((k, repr(p.get(k, dflt))) for k, dflt in (("a_re", 0.0), ("a_im", 0.0), ("s", 1)))


_BALL_CACHE: dict[Any, Any] = memo.cache()


def _memo(key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """``compute()`` memoised in :data:`_BALL_CACHE` (cleared past 2048 entries)."""
    hit = _BALL_CACHE.get(key)
    if hit is None:
        hit = compute()
        if len(_BALL_CACHE) > 2048:
            _BALL_CACHE.clear()
        _BALL_CACHE[key] = hit
    return hit


def _gerf_moments_ball(p: dict[str, Any], bits: int, second: bool, d1_pair_vectors: bool) -> dict[str, Any]:
    """:func:`gerf_moments_ball` without the module cache."""
    with workprec(bits + 20):
        st = pair_stats_ball(p) if d1_pair_vectors else _pair_stats_ball_general(p)
        d, s = st["d"], int(p.get("s", 1))
        a = acb(p.get("a_re", 0.0), p.get("a_im", 0.0))
        one4a = 1 - 4 * a
        c = -(s + 1) / 2
        d2 = (one4a.log() * d / 2).exp()
        nsum = st["sq_x"] + st["sq_y"]
        a_c = complex(p.get("a_re", 0.0), p.get("a_im", 0.0))  # exact: 2A, 4A are exact floats too
        lin = _at_prec(lambda: _gerf_linear(p, s, False, d1_pair_vectors))
        mean = d2 * (c * nsum).exp() * _exp_moment_ball(2 * a, lin, bits)
        if d > 1:
            mean *= _gaussian_exp_moment_at_zero(2 * a_c, bits) ** (d - 1)
        if not second or not (1 - 8 * a).real > 0:
            return {"mean": mean}
        lin2 = _at_prec(lambda: 2 * _gerf_linear(p, s, False, d1_pair_vectors))
        second = d2 * d2 * (2 * c * nsum).exp() * _exp_moment_ball(4 * a, lin2, bits)
        if d > 1:
            second *= _gaussian_exp_moment_at_zero(4 * a_c, bits) ** (d - 1)
        abs_second = gerf_abs_second_moment_ball(dict(p, s=s), bits)
        var = (second.real + abs_second) / 2 - mean.real * mean.real
        return {"mean": mean, "second": second, "abs_second": abs_second, "var": var}


# -------------------------------------------------- appendix 9.7: the chi_d averages of eq (25)-(27)


def gerf_conditional_mean_square(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``E_r[m(r)^2]``, ``m(r) = E[X | |w| = r]``, for one GERF sample (real A, s = +1), by quadrature over chi_d.

    ``m(r) = D^2 e^{2A r^2 - |x|^2 - |y|^2} 0F1(; d/2; B^2 r^2 |x + y|^2 / 4)`` (the average of
    ``e^{c u.e}`` over the uniform sphere, ``D^2 = (1 - 4A)^{d/2}``, ``B^2 = 1 - 4A``); the average
    over ``r ~ chi_d`` is a tanh-sinh quadrature (``mpmath.quad``) on ``[0, sqrt(d)/2, sqrt(d),
    2 sqrt(d) + 4, inf]``, repeated at rising precision (:func:`rfcheck.quadrature.with_error`).

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``) with real ``a_re`` (``A < 1/8``).
    dps : int
        Decimal digits of the result.

    Returns
    -------
    (value, err) : tuple of mpf
        ``E_r[m(r)^2]`` and its error bar.

    References
    ----------
    CRT appendix 9.7, eq (25)-(26) (the conditional means whose variance the law of total variance adds).
    """
    a = mpmath.mpf(p["a_re"])

    def compute(prec: int) -> tuple[Any, Any]:
        st = stats_mp(p)
        d = st["d"]
        b2 = 1 - 4 * a
        d2 = mpmath.power(1 - 4 * a, mpmath.mpf(d) / 2)
        c0 = mpmath.log(2) * (1 - mpmath.mpf(d) / 2) - mpmath.loggamma(mpmath.mpf(d) / 2)

        def f(r: Any) -> Any:
            m = d2 * mpmath.exp(2 * a * r * r - st["sq_x"] - st["sq_y"]) * mpmath.hyp0f1(
                mpmath.mpf(d) / 2, b2 * r * r * st["sq_sum"] / 4)
            return m * m * mpmath.exp(c0 + (d - 1) * mpmath.log(r) - r * r / 2) if r > 0 else mpmath.mpf(0)

        mid = mpmath.sqrt(d)
        return mpmath.quad(f, [0, mid / 2, mid, 2 * mid + 4, mpmath.inf], error=True)

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def gerf_conditional_mean_square_ball(p: dict[str, Any], bits: int) -> arb:
    """Arb ball of :func:`gerf_conditional_mean_square`.

    ``acb.integral`` of ``m(r)^2 chi_d(r)`` over ``[0, R]`` (``m`` with ``acb.hypgeom_0f1``) plus a
    bound of the tail: ``0F1(; d/2; y^2/4) <= cosh y <= e^y`` (the coefficients decrease in
    ``d/2 >= 1/2``) and ``r^(d-1) <= e^((d-1) r / e)``, so the integrand is at most
    ``c0 exp(-q r^2/2 + c r)``, ``q = 1 - 8A``, ``c = 2B|z| + (d-1)/e``, whose integral over ``r > R``
    is ``c0 e^(c^2/(2q)) sqrt(pi/(2q)) erfc((R - c/q) sqrt(q/2))``.

    Parameters
    ----------
    p : dict
        As :func:`gerf_conditional_mean_square` (its floats exact).
    bits : int
        Working precision in bits (the integral runs at ``bits + 20``).

    Returns
    -------
    flint.arb
        A ball containing ``E_r[m(r)^2]``.

    References
    ----------
    CRT appendix 9.7, eq (25)-(26).
    """
    with workprec(bits + 20):
        st = pair_stats_ball(p)
        d = st["d"]
        a = arb(p["a_re"])
        b2 = 1 - 4 * a
        b, nz = b2.sqrt(), st["sq_sum"].sqrt()
        d2 = (b2.log() * d / 2).exp()
        nsum = st["sq_x"] + st["sq_y"]
        c0 = (arb(2).log() * (1 - arb(d) / 2) - (arb(d) / 2).lgamma()).exp() * d2 * d2 * (-2 * nsum).exp()
        half_d, bz2 = acb(arb(d) / 2), acb(b2 * st["sq_sum"] / 4)

        def f(r: acb, _analytic: bool) -> acb:
            m = (2 * a * r * r).exp() * (bz2 * r * r).hypgeom_0f1(half_d)
            return m * m * r ** (d - 1) * (-r * r / 2).exp()

        q = 1 - 8 * a
        c = 2 * b * nz + arb(d - 1) / arb(1).exp()
        qf, cf_ = float(q.lower()), float(c.upper())
        r_end = arb(cf_ / qf + math.sqrt(2 * (bits + 30) * math.log(2) / qf) + 1)
        body = acb.integral(f, 0, r_end).real
        tail = (c * c / (2 * q)).exp() * (arb.pi() / (2 * q)).sqrt() * ((r_end - c / q) * (q / 2).sqrt()).erfc()
        return c0 * (body + arb(0, tail.upper()))


def gerf_ort_pair_conditional_mean(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``E_R[P0^2 e^{2A R^2} 0F1(; d/2; B^2 |x + y|^2 R^2 / 4)]``, ``R^2 ~ chi^2_{2d}``: the orthogonal-pair
    moment ``E[X_1 X_2]`` of GERF (real A, s = +1) averaged over the two norms, by quadrature over chi_{2d}.

    Conditioned on the norms ``r_1, r_2`` of an orthogonal pair the moment depends on ``r_1^2 + r_2^2``
    only; ``P0 = (1 - 4A)^{d/2} e^{-|x|^2 - |y|^2}``, ``B^2 = 1 - 4A``.  Tanh-sinh quadrature
    (``mpmath.quad``) on ``[0, sqrt(2d)/2, sqrt(2d), 2 sqrt(2d) + 4, inf]`` at rising precision.

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``) with real ``a_re`` (``A < 1/8``).
    dps : int
        Decimal digits of the result.

    Returns
    -------
    (value, err) : tuple of mpf
        The moment and its error bar.

    References
    ----------
    CRT appendix 9.7, eq (27)-(28) (the average of T over the norms).
    """
    d = int(p["d"])

    def compute(prec: int) -> tuple[Any, Any]:
        s = stats_mp(p)
        a = mpmath.mpf(p["a_re"])
        b2 = 1 - 4 * a
        p0 = mpmath.power(1 - 4 * a, mpmath.mpf(d) / 2) * mpmath.exp(-s["sq_x"] - s["sq_y"])
        c0 = mpmath.log(2) * (1 - mpmath.mpf(d)) - mpmath.loggamma(mpmath.mpf(d))  # chi_{2d} density constant

        def f(rr: Any) -> Any:
            if rr <= 0:
                return mpmath.mpf(0)
            cond = p0 * p0 * mpmath.exp(2 * a * rr * rr) * mpmath.hyp0f1(mpmath.mpf(d) / 2,
                                                                         b2 * s["sq_sum"] * rr * rr / 4)
            return cond * mpmath.exp(c0 + (2 * d - 1) * mpmath.log(rr) - rr * rr / 2)

        mid = mpmath.sqrt(2 * d)
        return mpmath.quad(f, [0, mid / 2, mid, 2 * mid + 4, mpmath.inf], error=True)

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def gerf_ort_pair_conditional_mean_ball(p: dict[str, Any], bits: int) -> arb:
    """Arb ball of :func:`gerf_ort_pair_conditional_mean`: the same ``chi_{2d}`` average, as a rigorous integral.

    With the density ``R^{2d-1} e^{-R^2/2} / (2^{d-1} Gamma(d))`` the average is ``P0^2 / (2^{d-1} Gamma(d))
    int_0^inf R^{2d-1} e^{-(1 - 4A) R^2 / 2} 0F1(; d/2; B^2 |x+y|^2 R^2 / 4) dR`` (``e^{2A R^2}`` folded into the
    Gaussian, variance ``1/(1 - 4A)``), integrated by
    :func:`rfcheck.references.gaussian.half_line_gaussian_integral_ball` (``acb.integral`` on a finite interval,
    the two ends bounded).  Its growth bound: ``(d/2)_k >= (1/2)_k`` for ``d >= 1``, so ``0 <= 0F1(; d/2; y)
    <= 0F1(; 1/2; y) = cosh(2 sqrt(y)) <= e^{2 sqrt(y)}`` for ``y >= 0``, i.e. ``|f(R)| <= e^{B |x+y| R}``.

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``) with real ``a_re < 1/4``.
    bits : int
        Working precision (and target relative accuracy) in bits.

    Returns
    -------
    flint.arb
        A ball containing the average.

    References
    ----------
    CRT appendix 9.7, eq (27)-(28) (the average of T over the norms).
    """
    from rfcheck.references.gaussian import half_line_gaussian_integral_ball

    d = int(p["d"])
    with workprec(bits):
        st = pair_stats_ball(p)
        a = arb(float(p["a_re"]))
        b2 = 1 - 4 * a
        p0 = ((b2.log() * d / 2).exp()) * (-st["sq_x"] - st["sq_y"]).exp()
        y_coef = b2 * st["sq_sum"] / 4  # 0F1's argument is y_coef R^2
        growth_c = (b2 * st["sq_sum"]).sqrt()
        half = arb(d) / 2
        yc = acb(y_coef)

        def f(w: acb, _analytic: bool) -> acb:
            return (yc * w * w).hypgeom_0f1(acb(half))

        # rough log of the integral (sets the truncation points only): a chi-like bulk at R^2 ~ 2d/(1-4A)
        s2 = float((1 / b2).mid())
        log_scale = ((d - 1) * math.log(2) + math.lgamma(d) + d * math.log(s2)
                     + float(growth_c.upper()) * math.sqrt(2 * d * s2))
        body = half_line_gaussian_integral_ball(f, power=2 * d - 1, s2=1 / b2, growth=(1, growth_c.upper()),
                                                log_scale=log_scale - 40, prec=bits,
                                                peak=math.sqrt((2 * d - 1) * s2))
        return p0 * p0 / (arb(2) ** (d - 1) * arb(d).gamma()) * body


# -------------------------------------------------------------- sec 3.2: DIRF series (eq (9)-(11))


def dirf_series_moment(a: tuple[float, float], log_pk: Callable[[int], Any], power: int,
                       dps: int) -> tuple[Any, Any]:
    """``E[(X_l Y_l)^power] = sum_k p_k (a^k / (k! p_k))^power``, ``a = x_l y_l``, summed term by term in mpmath.

    ``X_l Y_l = a^w (w!)^{-1} p_w^{-1}`` (CRT eq (9)) evaluated literally (``p_k`` is not cancelled
    symbolically).  Stops once terms are decreasing and below ``10^-(dps+5)`` of the largest.

    Parameters
    ----------
    a : (float, float)
        The coordinates ``(x_l, y_l)``; their product is formed exactly.
    log_pk : callable
        ``k -> log p_k`` in mpmath (e.g. :func:`rfcheck.closed_forms.crt.poisson_log_pk`).
    power : int
        The moment's order.
    dps : int
        Decimal digits (the sum runs at ``dps + 15``).

    Returns
    -------
    (value, err) : tuple of mpf
        The sum and its error bar: the working-precision rounding times the sum of ``|terms|``
        (which covers the cancellation of an alternating series) plus twice the last term.

    Raises
    ------
    ArithmeticError
        If the series has not converged in 200000 terms.

    References
    ----------
    CRT sec 3.2, eq (9)-(11) (DIRFs: PoisRF, GeomRF).
    """
    with mpmath.workdps(dps + 15):
        a = mpmath.mpf(a[0]) * mpmath.mpf(a[1])  # x_l y_l exactly (float inputs)
        terms = []
        big = mpmath.mpf(0)
        prev = None
        for k in range(200_000):
            lpk = log_pk(k)
            pk = mpmath.exp(lpk)
            feat = (a**k if k else mpmath.mpf(1)) / (mpmath.factorial(k) * pk)
            t = pk * feat**power
            terms.append(t)
            big = max(big, abs(t))
            if prev is not None and abs(t) < abs(prev) and abs(t) < big * mpmath.mpf(10) ** -(dps + 5):
                break
            prev = t
        else:
            raise ArithmeticError("series did not converge in 200000 terms")
        total = mpmath.fsum(terms)
        err = mpmath.fsum(abs(t) for t in terms) * mpmath.mpf(10) ** -(dps + 12) + 2 * abs(terms[-1])
        return total, err


def dirf_product_moment(x: Any, y: Any, log_pk: Callable[[int], Any], power: int,
                        dps: int) -> tuple[Any, Any]:
    """``E[(f_DI(w, x) f_DI(w, y))^power]`` for the DIRF of ``p_k``, one series per coordinate.

    ``f_DI(w, x) = exp(-|x|^2/2) prod_l x_l^{w_l} (w_l!)^{-1/2} p_{w_l}^{-1/2}`` (CRT eq (10)): the
    prefactor ``exp(-power (|x|^2 + |y|^2)/2)`` times the product over ``l`` of
    :func:`dirf_series_moment`.

    Parameters
    ----------
    x, y : sequence of float
        The two vectors (same length ``d``).
    log_pk : callable
        ``k -> log p_k`` in mpmath.
    power : int
        The moment's order.
    dps : int
        Decimal digits.

    Returns
    -------
    (value, err) : tuple of mpf
        The moment and its error bar.

    References
    ----------
    CRT sec 3.2, eq (10)-(11), Theorem 3.4-3.5.
    """
    facs = [dirf_series_moment(a, log_pk, power, dps) for a in zip(x, y, strict=True)]
    with mpmath.workdps(dps + 15):
        val, err = quadrature.product_with_error([(v, e, 1) for v, e in facs])
        pref = mpmath.exp(-power * (mpmath.fsum(mpmath.mpf(v) ** 2 for v in x)
                                    + mpmath.fsum(mpmath.mpf(v) ** 2 for v in y)) / 2)
        return pref * val, abs(pref) * err


def dirf_series_moment_ball(a: tuple[float, float], dist: str, par: float, power: int, bits: int) -> arb:
    """Arb ball of ``E[(X_l Y_l)^power] = sum_k p_k (a^k / (k! p_k))^power``, ``a = x_l y_l`` (the ball twin
    of :func:`dirf_series_moment`, for Poisson and geometric ``p_k``).

    The terms by their exact ratio ``t_{k+1} / t_k = (p_{k+1} / p_k)^{1 - power} a^power / (k + 1)^power``
    from ``t_0 = p_0^{1 - power}``, summed on balls by :meth:`rfcheck.arb_backend.ARB.series`, whose tail
    bound needs ``|t_{j+1} / t_j| <= q_k`` for every ``j >= k``.  Proof that the ratio at ``k`` is such a
    bound: for Poisson ``p_{k+1} / p_k = lambda / (k + 1)``, so ``|t_{k+1} / t_k| = |a|^power lambda^{1 - power}
    / (k + 1)``; for geometric ``p_{k+1} / p_k = 1 - p``, so ``|t_{k+1} / t_k| = (1 - p)^{1 - power} |a|^power /
    (k + 1)^power``; both are non-increasing in ``k`` (``power >= 1``).  The tail past the last term ``t_K`` is
    then at most ``|t_K| q / (1 - q)`` (geometric series), added as a ball of that radius.

    Parameters
    ----------
    a : (float, float)
        The coordinates ``(x_l, y_l)``; their product is formed exactly.
    dist : {"poisson", "geometric"}
        ``p_k = e^{-lambda} lambda^k / k!`` or ``p_k = p (1 - p)^k``.
    par : float
        ``lambda > 0`` or ``p`` in ``(0, 1)``, exact.
    power : int
        The moment's order, ``>= 1``.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the exact sum.

    Raises
    ------
    ValueError
        For ``power < 1``, an unknown ``dist``, or a series whose tail bound is not reached within
        ``SERIES_MAX_TERMS`` terms.

    References
    ----------
    CRT sec 3.2, eq (9)-(11), Theorem 3.4-3.5 (DIRFs: PoisRF, GeomRF).
    """
    from rfcheck.arb_backend import ARB

    if power < 1 or dist not in ("poisson", "geometric"):
        raise ValueError(f"dirf_series_moment_ball: power {power} >= 1 and dist poisson/geometric needed")
    with workprec(bits):
        ab = arb(float(a[0])) * arb(float(a[1]))
        par_b = arb(float(par))
        p0 = (-par_b).exp() if dist == "poisson" else par_b

        def ratio(k: int) -> arb:
            step = par_b / (k + 1) if dist == "poisson" else 1 - par_b  # p_{k+1} / p_k
            return step ** (1 - power) * ab**power / arb(k + 1) ** power

        terms = [p0 ** (1 - power)]

        def term(k: int) -> arb:
            while len(terms) <= k:
                terms.append(terms[-1] * ratio(len(terms) - 1))
            return terms[k]

        return ARB.series(term, lambda k: abs(ratio(k))).v


def dirf_product_moment_ball(x: Any, y: Any, dist: str, par: float, power: int, bits: int) -> arb:
    """Arb ball of ``E[(f_DI(w, x) f_DI(w, y))^power]`` (the ball twin of :func:`dirf_product_moment`):
    ``exp(-power (|x|^2 + |y|^2) / 2)`` times the product over ``l`` of :func:`dirf_series_moment_ball`.

    Parameters
    ----------
    x, y : sequence of float
        The two vectors (same length ``d``), exact.
    dist : {"poisson", "geometric"}
        The law of ``w_l``.
    par : float
        Its parameter (``lambda`` or ``p``).
    power : int
        The moment's order, ``>= 1``.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the exact moment.

    References
    ----------
    CRT sec 3.2, eq (10)-(11), Theorem 3.4-3.5.
    """
    with workprec(bits):
        out = arb(1)
        for a in zip(x, y, strict=True):
            out *= dirf_series_moment_ball(a, dist, par, power, bits)
        sq = sum((arb(float(v)) ** 2 for v in x), arb(0)) + sum((arb(float(v)) ** 2 for v in y), arb(0))
        return (-power * sq / 2).exp() * out


# ------------------------------------------------------- Thm 4.2: the noncentral chi^2 law on balls


def noncentral_chi2_mixture_lower_ball(w: arb, d: int, half_nc: arb, upper: bool) -> arb:
    """A certified lower bound (Arb ball) of ``P[W <= w]`` or ``P[W > w]``, ``W`` noncentral chi^2_d.

    The Poisson mixture ``sum_j Pois(j; half_nc) P[chi^2_{d+2j} <= w]`` (``arb.gamma_lower``, or
    ``arb.gamma_upper`` for the upper tail, regularized): every term is >= 0, so the partial sum over
    ``j`` in a window ``j0 +- (12 sqrt(half_nc) + 60)`` around the Poisson mode ``j0`` is a lower bound.
    It is evaluated at the lower end of ``w`` (the upper end for the upper tail), clamped at 0, as
    the probabilities are monotone in the threshold: the result bounds the probability at every
    ``w`` in the ball.

    Parameters
    ----------
    w : flint.arb
        The threshold.
    d : int
        Degrees of freedom.
    half_nc : flint.arb
        Half the noncentrality, ``>= 0``.
    upper : bool
        ``P[W > w]`` if true, else ``P[W <= w]``.

    Returns
    -------
    flint.arb
        A ball whose lower end is a lower bound of the probability.

    References
    ----------
    CRT Theorem 4.2 (the OPRF tail ``Z = Z_max exp(2 A W)``); the mpmath counterpart is
    :func:`noncentral_chi2_log_cdf`.
    """
    lf = float(half_nc.mid())
    j0, half = int(lf), int(12 * math.sqrt(lf) + 60)
    js = range(max(0, j0 - half), j0 + half)
    weights = [(-half_nc + j * half_nc.log() - arb(j + 1).lgamma()).exp() for j in js]
    end = w.upper() if upper else w.lower()  # exact endpoints: P[W > w], P[W <= w] monotone in w
    wx = end / 2 if end > 0 else arb(0)
    return sum((wt * (wx.gamma_upper(arb(d) / 2 + j, regularized=1) if upper
                      else wx.gamma_lower(arb(d) / 2 + j, regularized=1))
                for wt, j in zip(weights, js, strict=True)), arb(0))


def _poisson_tail_bounds(lam: arb, lo: int, hi: int) -> tuple[arb, arb]:
    """Upper bounds of ``P[N < lo]`` and ``P[N > hi]``, ``N ~ Poisson(lam)``, ``lo <= lam <= hi`` (Chernoff:
    ``P[N <= k] <= e^{-lam} (e lam / k)^k`` for ``k < lam``, ``P[N >= k] <= e^{-lam} (e lam / k)^k`` for
    ``k > lam``; ``P[N <= 0] = e^{-lam}``)."""
    def chern(k: int) -> arb:
        return (-lam + k * (lam.log() + 1 - arb(k).log())).exp()

    below = arb(0) if lo <= 0 else (-lam).exp() if lo == 1 else chern(lo - 1)
    return below, chern(hi + 1)


def _regularized_lower_gamma(a: arb, x: arb) -> arb:
    """``P(a, x) = gamma(a, x) / Gamma(a)`` on balls, ``x >= 0``: ``arb.gamma_lower`` where ``a <= x``; where
    ``a > x`` (there Arb's routine loses all precision at large ``a``) the series ``P(a, x) = x^a e^{-x} /
    Gamma(a + 1) sum_k x^k / ((a + 1)_k)`` of positive terms, whose ratio ``x / (a + 1 + k)`` is decreasing
    (:meth:`rfcheck.arb_backend.ARB.series` encloses its tail)."""
    from rfcheck.arb_backend import ARB

    if not a > x:
        return x.gamma_lower(a, regularized=1)
    if x == 0:
        return arb(0)
    terms = [arb(1)]

    def term(k: int) -> arb:
        while len(terms) <= k:
            terms.append(terms[-1] * x / (a + len(terms)))
        return terms[k]

    total = ARB.series(term, lambda k: x / (a + 1 + k)).v
    return (a * x.log() - x - (a + 1).lgamma()).exp() * total


def noncentral_chi2_mixture_upper_ball(w: arb, d: int, half_nc: arb, upper: bool,
                                       max_terms: int = 4096) -> arb:
    """A certified upper bound (Arb ball) of ``P[W <= w]`` or ``P[W > w]``, ``W`` noncentral chi^2_d (the
    companion of :func:`noncentral_chi2_mixture_lower_ball`).

    The Poisson mixture ``sum_j Pois(j; lam) c_j`` (``lam = half_nc``, ``c_j = P[chi^2_{d+2j} <= w]`` or
    ``P[chi^2_{d+2j} > w]``, regularized incomplete gamma functions) over a window ``lo <= j <= hi`` around
    the Poisson mode (``c_j`` by :func:`_regularized_lower_gamma` or ``arb.gamma_upper``), plus bounds of the
    two omitted parts: ``c_j`` is non-increasing in ``j`` for the lower
    tail and non-decreasing for the upper tail (``chi^2_{k+2}`` is stochastically larger than ``chi^2_k``),
    and ``0 <= c_j <= 1``.  Lower tail: ``sum_{j>hi} <= c_{hi+1} P[N > hi]``, ``sum_{j<lo} <= P[N < lo]``; upper tail:
    ``sum_{j>hi} <= P[N > hi]``, ``sum_{j<lo} <= c_lo P[N < lo]``; the Poisson tails by Chernoff's bound
    (:func:`_poisson_tail_bounds`).  The window is doubled until the omitted parts are below ``2^-30`` of the
    sum or it holds ``max_terms`` terms.  ``c_j`` is evaluated at the upper end of ``w`` (the lower end for the
    upper tail): the result bounds the probability at every ``w`` in the ball.

    Parameters
    ----------
    w : flint.arb
        The threshold.
    d : int
        Degrees of freedom.
    half_nc : flint.arb
        Half the noncentrality, ``> 0``.
    upper : bool
        ``P[W > w]`` if true, else ``P[W <= w]``.
    max_terms : int, optional
        The most terms of the window.

    Returns
    -------
    flint.arb
        A ball whose upper end is an upper bound of the probability.

    References
    ----------
    CRT Theorem 4.2 (the OPRF tail ``Z = Z_max exp(2 A W)``); the mpmath counterpart is
    :func:`noncentral_chi2_log_cdf`.
    """
    lf = float(half_nc.mid())
    j0, half = int(lf), int(12 * math.sqrt(lf) + 60)
    end = w.lower() if upper else w.upper()
    wx = end / 2 if end > 0 else arb(0)

    def c(j: int) -> arb:
        if upper:
            return wx.gamma_upper(arb(d) / 2 + j, regularized=1)
        return _regularized_lower_gamma(arb(d) / 2 + j, wx)

    while True:
        lo, hi = max(0, j0 - half), j0 + half
        total = sum(((-half_nc + j * half_nc.log() - arb(j + 1).lgamma()).exp() * c(j) for j in range(lo, hi + 1)),
                    arb(0))
        below, above = _poisson_tail_bounds(half_nc, lo, hi)
        rest = (c(hi + 1) * above + below) if not upper else (above + c(lo) * below)
        if rest.upper() <= total.lower() * arb(2) ** -30 or 2 * (2 * half + 1) > max_terms:
            return total + arb(0, rest.upper())
        half *= 2


# ------------------------------------------------- Thm 4.2 (orthogonal): the OPRF sample's MGF and rate


def oprf_log_mgf(p: dict[str, Any], n: int = 96) -> tuple[Callable[[float], tuple[float, float]], float]:
    """``theta -> (log E e^{theta Z}, E_theta[Z])`` for one OPRF sample ``Z`` at a pair point (float64).

    ``Z = C exp(2A t^2 + B|z| t + 2A S)``, ``t ~ N(0, 1)`` the component of ``w`` along ``z = x + y``,
    ``S ~ chi^2_{d-1}`` the squared rest, ``C = D^2 e^{-|x|^2-|y|^2}``, ``A = A*`` of Thm 3.3
    (:func:`rfcheck.closed_forms.crt.oprf_a_star`): a tensor Gauss-Hermite x generalised Gauss-Laguerre
    rule with ``n`` nodes each, summed in log space.  ``E_theta[Z]`` is the mean of ``Z`` under the
    exponentially tilted law (the derivative of the log MGF).

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``).
    n : int, default 96
        Nodes of each Gauss rule.

    Returns
    -------
    (at, log_zmax) : tuple
        ``at(theta) -> (log E e^{theta Z}, E_theta[Z])`` (floats) and ``log sup Z``.

    References
    ----------
    CRT Theorem 4.2 (the orthogonal-ensemble bound, a Chernoff rate of one OPRF sample) and Thm 3.3.
    """
    import numpy as np
    import scipy.special as sc


    st = stats_fp(p)
    d = st["d"]
    a = float(cf.oprf_a_star(st["sq_sum"], d))
    b = math.sqrt(1 - 4 * a)
    log_c = d / 2 * math.log1p(-4 * a) - st["sq_x"] - st["sq_y"]
    xh, wh = np.polynomial.hermite.hermgauss(n)
    t, lwt = math.sqrt(2) * xh, np.log(wh / math.sqrt(math.pi))
    if d > 1:
        yl, wl = sc.roots_genlaguerre(n, (d - 1) / 2 - 1)
        sv, lws = 2 * yl, np.log(wl) - sc.gammaln((d - 1) / 2)
    else:
        sv, lws = np.zeros(1), np.zeros(1)
    logz = (log_c + 2 * a * t**2 + b * math.sqrt(st["sq_sum"]) * t)[:, None] + 2 * a * sv[None, :]
    logw = lwt[:, None] + lws[None, :]
    zv = np.exp(logz)
    log_zmax = log_c - b * b * st["sq_sum"] / (8 * a)

    def at(theta: float) -> tuple[float, float]:
        e = logw + theta * zv
        lam = float(sc.logsumexp(e))
        return lam, float(np.sum(np.exp(e - lam) * zv))

    return at, log_zmax


def oprf_legendre_transform(p: dict[str, Any], level: float) -> tuple[float, float]:
    """``(L(level), err)``: the Legendre transform ``sup_theta (theta level - log E e^{theta Z})`` of one OPRF sample.

    Brent's method on ``theta >= 0`` (the sup over ``theta < 0`` is 0 for ``level > E Z``) over the log
    MGF of :func:`oprf_log_mgf`; ``err`` from repeating with 160 quadrature nodes, plus the quadrature's
    own error on ``E Z`` (known: ``K``) times ``theta`` and an absolute floor ``1e-14`` (the log-sum-exp
    is rounded at ~1e-15, so an ``L`` below ~1e-13 is not resolved).

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``).
    level : float
        The level (``K + eps`` in Thm 4.2).

    Returns
    -------
    (value, err) : tuple of float
        ``L(level)`` (``inf`` when ``level`` is at or above ``sup Z``) and its error bar.

    References
    ----------
    CRT Theorem 4.2 (``P[K_M - K >= eps] <= exp(-M L(K + eps))``, the Chernoff bound).
    """
    from scipy.optimize import minimize_scalar


    out = []
    for n in (96, 160):
        at, log_zmax = oprf_log_mgf(p, n)
        if level >= math.exp(log_zmax):
            return math.inf, 0.0
        hi = 1.0
        while at(hi)[1] < level and hi < 1e12:
            hi *= 2
        r = minimize_scalar(lambda th, at=at: at(th)[0] - th * level, bounds=(0.0, hi), method="bounded",
                            options={"xatol": 1e-12 * hi})
        # error: node-count dependence, the quadrature's own error on E Z (known: K), and the
        # rounding of theta level - log E e^{theta Z} (both ~ theta level)
        k = at(0.0)[1]
        k_true = math.exp(-stats_fp(p)["sq_diff"] / 2)
        out.append((-float(r.fun), float(r.x) * (abs(k - k_true) + 1e-13 * level)))
    return out[1][0], abs(out[1][0] - out[0][0]) + out[1][1] + 1e-14


# ---------------------------------------------------------------- memoised moments, Monte Carlo, OPRF


_GERF_REFERENCE_CACHE: dict[Any, dict[str, Any]] = memo.cache()


def gerf_reference_at(p: dict[str, Any], dps: int, a: Any = None, s: int | None = None) -> dict[str, Any]:
    """:func:`rfcheck.quadrature.gerf_reference` (mean, second moment and variance of ``Re f1 f2`` for
    GERF(A, s), by quadrature) at a pair point, memoised.

    A check asks for the variance and, for its tolerance scale, the second moment of the same point:
    the results are kept per (point, ``dps``, ``A``, ``s``) (at most 257 entries, then cleared).

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``), with ``a_re``, ``a_im``, ``s`` unless given.
    dps : int
        Decimal digits.
    a : number, optional
        ``A`` (default: ``a_re + i a_im`` of the point).
    s : int, optional
        ``s = +-1`` (default: the point's ``s``, else +1).

    Returns
    -------
    dict
        ``{"mean", "second", "var"}`` of :class:`rfcheck.quadrature.RefValue` (``mean`` only where
        ``Re(1 - 8A) <= 0``).

    References
    ----------
    CRT Theorem 3.1-3.2, eq (4)-(6) and sec 2.2 (TrigRF: ``A = 0, s = -1``; PosRF: ``A = 0, s = +1``).
    """
    a = _gerf_a(p) if a is None else mpmath.mpmathify(a)
    s = p.get("s", 1) if s is None else s
    key = (tuple(sorted((k, repr(v)) for k, v in p.items() if k in ("d", "nx", "ny", "theta"))), dps, repr(a), s)
    if key not in _GERF_REFERENCE_CACHE:
        if len(_GERF_REFERENCE_CACHE) > 256:
            _GERF_REFERENCE_CACHE.clear()
        with mpmath.workdps(dps):
            st = stats_mp(p)
        _GERF_REFERENCE_CACHE[key] = quadrature.gerf_reference(**st, a=a, s=s, dps=dps)
    return _GERF_REFERENCE_CACHE[key]


def gerf_mc_products(p: dict[str, Any], n: int, seed: int, a: complex, s: int, m: int = 1,
                     coupling: str = "iid") -> tuple[Any, float, tuple[float, float] | None]:
    """``n`` Monte Carlo estimates of ``K(x, y)`` by GERF(A, s) with ``m`` features (Numba engine).

    TrigRF (``A = 0, s = -1``) uses its own product (``Re exp(i w^T (x - y))``).  With the exact
    moments of the squared error where they are known in closed form (``s = +1``, real ``A``,
    ``1 - 16A > 0``, ``m = 1``, iid), so that a Monte Carlo test can use an exact standard error.

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``).
    n : int
        Number of estimates.
    seed : int
        Seed of the engine.
    a : complex
        ``A``.
    s : int
        ``s = +-1``.
    m : int, default 1
        Features per estimate.
    coupling : str, default "iid"
        ``"iid"`` or ``"orf"`` (orthogonal blocks).

    Returns
    -------
    (estimates, target, exact) : tuple
        The estimates (float64 array), ``K(x, y)`` and ``(E e, E e^2)`` of ``e = (K_hat - K)^2``
        (:func:`rfcheck.closed_forms.crt.gerf_iid_error_moments`) or None.

    References
    ----------
    CRT sec 2.2 (TrigRF, PosRF) and Theorem 3.1-3.2 (GERF).
    """
    from rfcheck import features
    from rfcheck.engine.montecarlo import simulate

    x, y = pair_vectors(p)
    prod = features.gerf_product(x, y, a, s)
    if s == -1 and a == 0:
        prod = features.trig_product(x, y)
    est = simulate(prod, m, n, coupling=coupling, path="projection", seed=seed)[0]
    exact = None
    if s == 1 and complex(a).imag == 0 and 1 - 16 * complex(a).real > 0 and m == 1 and coupling == "iid":
        exact = cf.gerf_iid_error_moments(**stats_fp(p), a=float(complex(a).real))
    return est, float(prod.target[0]), exact


def oprf_mc_estimates(p: dict[str, Any], m: int, n: int, seed: int, coupling: str = "iid") -> tuple[Any, float]:
    """``n`` Monte Carlo estimates of ``K(x, y)`` by OPRF (GERF with ``s = +1`` and the optimal real ``A*`` of
    Thm 3.3) with ``m`` features (Numba engine, projection path).

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``).
    m : int
        Features per estimate (at most ``d`` for ``coupling="orf"``).
    n : int
        Number of estimates.
    seed : int
        Seed of the engine.
    coupling : str, default "iid"
        ``"iid"`` or ``"orf"`` (orthogonal blocks).

    Returns
    -------
    (estimates, target) : tuple
        The estimates (float64 array) and ``K(x, y)``.

    Examples
    --------
    >>> import numpy as np
    >>> est, k = oprf_mc_estimates({"d": 4, "nx": 0.5, "ny": 0.3, "theta": 1.0}, 2, 20000, 1, "orf")
    >>> bool(abs(np.mean(est) - k) < 5 * np.std(est) / np.sqrt(len(est)))  # unbiased
    True

    References
    ----------
    CRT Theorem 3.3 (OPRF) and Theorem 4.1 (orthogonal features).
    """
    from rfcheck import features
    from rfcheck.engine.montecarlo import simulate

    prod = features.oprf_product(*pair_vectors(p))
    return simulate(prod, m, n, coupling=coupling, path="projection", seed=seed)[0], float(prod.target[0])


def oprf_point(p: dict[str, Any], dps: int) -> dict[str, Any]:
    """The OPRF constants at a pair point in mpmath: the pair statistics and ``A = A*`` of Thm 3.3
    (:func:`rfcheck.closed_forms.crt.oprf_a_star`), ``B = sqrt(1 - 4A)``, ``D2 = (1 - 4A)^{d/2}``.

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``).
    dps : int
        Decimal digits.

    Returns
    -------
    dict
        ``sq_x, sq_y, sq_sum, sq_diff, d, A, B, D2``.

    References
    ----------
    CRT Theorem 3.3, eq (7), (22); appendix 9.8, eq (35); Theorem 4.2.
    """
    with mpmath.workdps(dps):
        s = stats_mp(p)
        a = cf.oprf_a_star(s["sq_sum"], s["d"], backend="mpmath", dps=dps)
        return {**s, "A": a, "B": mpmath.sqrt(1 - 4 * a), "D2": mpmath.power(1 - 4 * a, mpmath.mpf(s["d"]) / 2)}


def oprf_log_z_maximiser(p: dict[str, Any], dps: int) -> tuple[dict[str, Any], Callable[[Any], Any], Any]:
    """The maximiser of one OPRF sample ``Z = D^2 exp(2A|w|^2 + B w^T(x+y) - |x|^2 - |y|^2)`` over ``w``,
    by golden-section search in mpmath (``dps + 10`` digits), never the closed form.

    With ``A < 0`` the part of ``w`` orthogonal to ``x + y`` only lowers ``Z``: the search runs on
    ``t = w . (x+y)/|x+y|``, from a bracket doubled until ``log Z`` decreases.

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``).
    dps : int
        Decimal digits.

    Returns
    -------
    (o, logz, t) : tuple
        The OPRF constants (:func:`oprf_point`), ``t -> log Z(t e_z)`` and the maximiser ``t``.

    References
    ----------
    CRT appendix 9.8, eq (35) (the range of Z, ``sup_w Z``) and Theorem 4.2.
    """
    o = oprf_point(p, dps)
    with mpmath.workdps(dps + 10):
        nz = mpmath.sqrt(o["sq_sum"])

        def logz(t: Any) -> Any:
            return mpmath.log(o["D2"]) + 2 * o["A"] * t * t + o["B"] * t * nz - o["sq_x"] - o["sq_y"]

        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while logz(2 * hi) > logz(hi):
            hi *= 2
        hi *= 2
        g = (mpmath.sqrt(5) - 1) / 2
        for _ in range(int((dps + 10) * 5)):
            c1, c2 = hi - g * (hi - lo), lo + g * (hi - lo)
            if logz(c1) < logz(c2):
                lo = c1
            else:
                hi = c2
        return o, logz, (lo + hi) / 2


# ----------------------------------------------------------- minimisers and their enclosures (Thm 3.3, 3.4)


def gerf_a_star_ball(p: dict[str, Any], bits: int) -> arb:
    """A ball containing the minimiser over real ``A < 1/8`` of the GERF variance (``s = +1``), found without
    eq (7) or eq (22) (CRT Theorem 3.3).

    For real ``A`` and ``s = +1`` the library's variance (``closed_forms.crt.gerf_log_variance``, tied to
    quadrature by claim crt.thm3.2) is ``V(A) = e^{u - 2(|x|^2+|y|^2)} e^{f(A)} - K^2`` with
    ``f(A) = d log(1-4A) - (d/2) log(1-8A) + u/(1-8A)``, ``u = |x+y|^2``, so ``V'`` has the sign of
    ``f'(A) = -4d/(1-4A) + 4d/(1-8A) + 8u/(1-8A)^2``.  With ``r = 1/(1-8A)`` (increasing in ``A`` on
    ``A < 1/8``, ``dr/dA = 8 r^2``), ``2 r (r + 1) df/dr = 2u r^2 + (2u + d) r - d``: an upward parabola,
    negative at ``r = 0``, so ``f'`` changes sign exactly once (``u > 0``) and the unique minimiser lies in
    any ``[lo, hi]`` with ``f'(lo) < 0 < f'(hi)`` decided on balls (``f'(0) = 8u > 0``, ``f'(A) -> d/(2A) < 0``
    as ``A -> -inf``).  Bisection on that sign, evaluated as ``(1-8A)^2 f'(A) = 16 d A (1-8A)/(1-4A) + 8u``, to
    a relative width ``2^-(bits + 8)``.

    Parameters
    ----------
    p : dict
        A pair point (``d``, ``nx``, ``ny``, ``theta``) with ``|x + y| > 0``; its floats are exact.
    bits : int
        Working precision (the bisection runs at ``bits + 64``).

    Returns
    -------
    flint.arb
        A ball containing ``A*``.

    Raises
    ------
    ValueError
        Where the sign of ``f'`` is not decided on balls (``u`` below the balls' resolution).

    Examples
    --------
    >>> b = gerf_a_star_ball({"d": 3, "nx": 0.7, "ny": 1.3, "theta": 0.4}, 128)
    >>> a = reference_a_star({"d": 3, "nx": 0.7, "ny": 1.3, "theta": 0.4}, 30)[0]
    >>> bool(b.overlaps(arb(mpmath.nstr(a, 30), 1e-25))), bool(b < 0), bool(b.rad() < 1e-30)
    (True, True, True)
    """
    with workprec(bits + 64):
        st = _pair_stats_ball_general(p)  # u as the mpmath reference computes it (also in d = 1)
        u, d = st["sq_sum"], st["d"]

        def sign(a: Any) -> int:
            # (1-8A)^2 f'(A) = 16 d A (1-8A)/(1-4A) + 8u: the same sign, without the cancellation of the 4d terms
            g = 16 * d * a * (1 - 8 * a) / (1 - 4 * a) + 8 * u
            if g < 0:
                return -1
            if g > 0:
                return 1
            raise ValueError("the sign of f' is not decided on balls")

        hi, lo = arb(0), arb(-1) / 8
        if sign(hi) <= 0:
            raise ValueError("f'(0) = 8u is not positive on balls")
        for _ in range(4000):
            if sign(lo) < 0:
                break
            lo *= 2
        eps = arb(2) ** -(bits + 8)
        while hi - lo > eps * abs(lo):
            mid = (lo + hi) / 2
            try:
                sg = sign(mid)
            except ValueError:  # mid within the balls' resolution of the root: step eps/4 off it
                delta = eps * abs(lo) / 4
                if sign(mid - delta) < 0 < sign(mid + delta):
                    lo, hi = mid - delta, mid + delta
                    break
                raise
            if sg < 0:
                lo = mid
            else:
                hi = mid
        return arb((lo + hi) / 2, (hi - lo) / 2)


def gerf_log_variance_ratio(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``mu = log(Var(A*) / Var(0))``: the log-variance gain of OPRF over PosRF (GERF, ``s = +1``) at a pair
    point, both variances by quadrature (:func:`gerf_reference_at`) and ``A*`` by :func:`reference_a_star`
    (CRT Theorem 3.3, its Note and Figure 1).

    Parameters
    ----------
    p : dict
        A pair point (``d``, ``nx``, ``ny``, ``theta``) with ``|x + y| > 0``.
    dps : int
        Decimal digits.

    Returns
    -------
    (mu, err) : tuple of mpf
        The log-ratio and its error bar (the two relative quadrature errors added).

    Examples
    --------
    >>> mu, err = gerf_log_variance_ratio({"d": 2, "nx": 1.0, "ny": 0.0, "theta": 0.0}, 20)
    >>> bool(mu < 0), bool(err < 1e-12)
    (True, True)
    """
    a_ref, _ = reference_a_star(p, dps)
    v_opt = gerf_reference_at(p, dps, a_ref, 1)["var"]
    v_pos = gerf_reference_at(p, dps, 0, 1)["var"]
    with mpmath.workdps(dps):
        mu = mpmath.log(v_opt.value / v_pos.value)
        err = v_opt.err / abs(v_opt.value) + v_pos.err / abs(v_pos.value)
    return mu, err


def gerf_log_variance_ratio_ball(p: dict[str, Any], bits: int) -> arb:
    """Arb ball of :func:`gerf_log_variance_ratio`'s ``mu = log(Var(A*) / Var(0))`` at the exact minimiser
    ``A*`` (enclosed by :func:`gerf_a_star_ball`), the variances by the Arb face of
    ``rfcheck.closed_forms.crt.gerf_log_variance`` (tied to quadrature by claim crt.thm3.2): a ball over the
    enclosure of ``A*`` contains the variance at ``A*`` (CRT Theorem 3.3, its Note and Figure 1).

    Parameters
    ----------
    p : dict
        A pair point (``d``, ``nx``, ``ny``, ``theta``) with ``|x + y| > 0``; its floats are exact.
    bits : int
        Working precision.

    Returns
    -------
    flint.arb
        A ball containing ``mu``.

    Raises
    ------
    ValueError
        Where :func:`gerf_a_star_ball` does.

    Examples
    --------
    >>> p = {"d": 2, "nx": 1.0, "ny": 0.0, "theta": 0.0}
    >>> b = gerf_log_variance_ratio_ball(p, 128)
    >>> bool(b.overlaps(arb(mpmath.nstr(gerf_log_variance_ratio(p, 30)[0], 25), 1e-20))), bool(b < 0)
    (True, True)
    """
    a = gerf_a_star_ball(p, bits)
    with workprec(bits):
        st = _pair_stats_ball_general(p)
        args = {k: st[k] for k in ("sq_x", "sq_y", "sq_sum", "sq_diff", "d")}
        dps = max(15, int(bits / 3.33))
        return (cf.gerf_log_variance(**args, a=a, s=1, backend="arb", dps=dps)
                - cf.gerf_log_variance(**args, a=a * 0, s=1, backend="arb", dps=dps))


def _poisrf_q(x: Any, y: Any) -> Any:
    """``q = sum_l x_l^2 y_l^2`` in mpmath at the working precision (the floats exact)."""
    return mpmath.fsum((mpmath.mpf(a) * mpmath.mpf(b)) ** 2 for a, b in zip(x, y, strict=True))


def poisrf_lambda_star(x: Any, y: Any, dps: int) -> tuple[Any, Any]:
    """argmin over ``lambda > 0`` of the PoisRF variance, by bracketed root-finding on its derivative
    (CRT Theorem 3.4, eq (11), and the lambda* after it).

    The objective is ``closed_forms.crt.poisson_log_variance`` (tied to the exact series by claim
    crt.thm3.4), never the printed ``lambda*``.  In ``t = log(lambda)`` (finite differences never leave
    ``lambda > 0``) the derivative of the variance itself (its log is singular where it vanishes, e.g.
    ``d = 1``) is bracketed by unit steps from ``t = 0`` and bisected to ``10^(8 - dps)`` (robust where the
    variance spans ``e^+-700`` across the bracket); the error bar is the change between ``dps`` and
    ``dps + 10`` digits plus ``10^(5 - dps)`` relative.

    Parameters
    ----------
    x, y : sequence of float
        The pair (its floats exact), with ``sum_l x_l^2 y_l^2 > 0``.
    dps : int
        Decimal digits.

    Returns
    -------
    (value, err) : tuple of mpf
        The minimiser and its error bar.

    Raises
    ------
    ArithmeticError
        If no bracket is found within 200 steps either way.

    Examples
    --------
    >>> lam, err = poisrf_lambda_star([0.5, 1.0], [2.0, 1.0], 20)   # lambda* = sqrt(q / d) = 1 here
    >>> bool(abs(lam - 1) < 1e-11), bool(err < 1e-10)
    (True, True)
    """
    ds = cf.discrete_pair_stats(x, y)
    out = []
    for prec in (dps, dps + 10):
        with mpmath.workdps(prec):
            q, d = _poisrf_q(x, y), len(x)
            xy = mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(x, y, strict=True))
            sd = mpmath.mpf(float(ds["sq_diff"][0]))

            def g(t: Any, q: Any = q, xy: Any = xy, sd: Any = sd, d: int = d) -> Any:
                return mpmath.diff(lambda u: mpmath.exp(cf.poisson_log_variance(
                    q, xy, sd, d, mpmath.exp(u), backend="mpmath", dps=mpmath.mp.dps)), t)

            lo, hi = mpmath.mpf(0), mpmath.mpf(0)
            for _ in range(200):
                if g(lo) < 0:
                    break
                lo -= 1
            else:
                raise ArithmeticError("could not bracket the minimiser from below")
            for _ in range(200):
                if g(hi) > 0:
                    break
                hi += 1
            else:
                raise ArithmeticError("could not bracket the minimiser from above")
            while hi - lo > mpmath.mpf(10) ** (8 - prec):
                mid = (lo + hi) / 2
                if g(mid) < 0:
                    lo = mid
                else:
                    hi = mid
            out.append(mpmath.exp((lo + hi) / 2))
    return out[1], abs(out[1] - out[0]) + mpmath.mpf(10) ** (5 - dps) * abs(out[1])


def poisrf_q_ball(x: Any, y: Any) -> arb:
    """``q = sum_l x_l^2 y_l^2`` of a DIRF pair as an Arb ball at the working precision (the floats exact):
    the quantity of PoisRF's variance (CRT Theorem 3.4, eq (11)).

    Parameters
    ----------
    x, y : sequence of float
        The pair.

    Returns
    -------
    flint.arb
        The ball of ``q``.

    Examples
    --------
    >>> poisrf_q_ball([0.5, 1.0], [2.0, 3.0])
    10.0000000000000
    """
    return sum(((arb(float(a)) * arb(float(b))) ** 2 for a, b in zip(x, y, strict=True)), arb(0))


def poisrf_lambda_star_ball(x: Any, y: Any, bits: int) -> arb:
    """A ball containing the minimiser over ``lambda > 0`` of the PoisRF variance (11), found without the
    printed ``lambda*`` (CRT Theorem 3.4, eq (11)).

    (11) is ``V(lambda) = e^{-|x|^2 - |y|^2} e^{h(lambda)} - K^2`` with ``h(lambda) = lambda d + q / lambda``, so
    ``V' = h' e^{...}`` has the sign of ``h'(lambda) = d - q / lambda^2``, strictly increasing on ``lambda > 0``
    for ``q > 0``: the unique minimiser lies in any ``[lo, hi]`` with ``h'(lo) < 0 < h'(hi)`` decided on balls.
    The bracket is found by halving/doubling from ``lambda = 1`` and narrowed by bisection on that sign to a
    relative width ``2^-(bits + 8)`` (as :func:`poisrf_lambda_star`, here on balls).

    Parameters
    ----------
    x, y : sequence of float
        The pair (its floats exact), with ``q = sum_l x_l^2 y_l^2 > 0``.
    bits : int
        Working precision (the bisection runs at ``bits + 64``).

    Returns
    -------
    flint.arb
        A ball containing the minimiser.

    Raises
    ------
    ValueError
        Where the sign of ``h'`` is not decided on balls.

    Examples
    --------
    >>> b = poisrf_lambda_star_ball([0.5, 1.0], [2.0, 3.0], 128)   # sqrt(q / d) = sqrt(5)
    >>> bool(b.overlaps(arb(5).sqrt())), bool(b.rad() < 1e-35)
    (True, True)
    """
    d = len(x)
    with workprec(bits + 64):
        q = poisrf_q_ball(x, y)

        def sign(lam: Any) -> int:
            g = d - q / (lam * lam)
            if g < 0:
                return -1
            if g > 0:
                return 1
            if g.is_exact():  # h'(lam) = 0 exactly: lam is the minimiser
                return 0
            raise ValueError("the sign of h' is not decided on balls")

        lo, hi = arb(1), arb(1)
        for _ in range(4000):
            if sign(lo) < 0:
                break
            lo /= 2
        for _ in range(4000):
            if sign(hi) > 0:
                break
            hi *= 2
        eps = arb(2) ** -(bits + 8)
        while hi - lo > eps * lo:
            mid = (lo + hi) / 2
            try:
                sg = sign(mid)
            except ValueError:  # mid within the balls' resolution (2^-(bits+64)) of the root: step eps/4 off it
                delta = eps * lo / 4
                if sign(mid - delta) < 0 < sign(mid + delta):
                    lo, hi = mid - delta, mid + delta
                    break
                raise
            if sg == 0:
                return mid
            if sg < 0:
                lo = mid
            else:
                hi = mid
        return arb((lo + hi) / 2, (hi - lo) / 2)


# ----------------------------------------------------------- appendix 9.2, eq (17); appendix 9.7, eq (32)


def gaussian_shifted_integral(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``int_{R^d} exp(-(alpha/2) sum_l (w_l - beta_l)^2) dw`` with ``beta_l = beta (l+1)/d``, a product over
    coordinates of 1-D contour quadratures (``rfcheck.quadrature.gaussian_exp_moment``) of
    ``int exp(-(alpha/2)(w - b)^2) dw = e^{-alpha b^2/2} sqrt(2 pi) E exp((1-alpha)/2 w^2 + alpha b w)``,
    never the closed form (CRT appendix 9.2, eq (17)).

    Parameters
    ----------
    p : dict
        ``d`` (int), ``al_re, al_im`` (``alpha``, ``Re alpha > 0``) and ``be_re, be_im`` (``beta``).
    dps : int
        Decimal digits.

    Returns
    -------
    (value, err) : tuple
        The integral (mpc) and its error bar (the change between ``dps`` and ``dps + 15`` digits).

    Examples
    --------
    >>> v, err = gaussian_shifted_integral({"d": 2, "al_re": 2.0, "al_im": 0.5, "be_re": 0.3, "be_im": -0.2}, 20)
    >>> bool(abs(v - 2 * mpmath.pi / mpmath.mpc(2, 0.5)) < 1e-15), bool(err < 1e-15)
    (True, True)
    """
    def compute(prec: int) -> tuple[Any, Any]:
        alpha = mpmath.mpc(p["al_re"], p["al_im"])
        d = int(p["d"])
        facs = []
        for k in range(d):
            beta = mpmath.mpc(p["be_re"], p["be_im"]) * (k + 1) / d  # beta in C^d, one entry per coordinate
            i1, e1 = quadrature.gaussian_exp_moment((1 - alpha) / 2, alpha * beta)
            pref = mpmath.exp(-alpha * beta**2 / 2) * mpmath.sqrt(2 * mpmath.pi)
            facs.append((pref * i1, abs(pref) * e1, 1))
        return quadrature.product_with_error(facs)

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def gaussian_shifted_integral_ball(p: dict[str, Any], bits: int) -> acb:
    """Arb ball of :func:`gaussian_shifted_integral`: the same product, each factor a rigorous integral
    (:func:`gaussian_exp_moment_ball`) (CRT appendix 9.2, eq (17)).

    Parameters
    ----------
    p : dict
        ``d``, ``al_re, al_im``, ``be_re, be_im`` (floats exact).
    bits : int
        Working precision (the product runs at ``bits + 20``).

    Returns
    -------
    flint.acb
        A ball containing the integral.

    Examples
    --------
    >>> b = gaussian_shifted_integral_ball({"d": 2, "al_re": 2.0, "al_im": 0.5, "be_re": 0.3, "be_im": -0.2}, 96)
    >>> bool(b.overlaps(2 * acb.pi() / acb(2, 0.5))), bool(b.rad() < 1e-20)
    (True, True)
    """
    def linear(k: int) -> Callable[[int], Any]:
        def lin(prec: int) -> Any:  # alpha beta_k, re-formed at each working precision the integral tries
            with workprec(prec):
                return acb(p["al_re"], p["al_im"]) * (acb(p["be_re"], p["be_im"]) * (k + 1) / int(p["d"]))
        return lin

    with workprec(bits + 20):
        alpha, d = acb(p["al_re"], p["al_im"]), int(p["d"])
        out = acb(1)
        for k in range(d):
            beta = acb(p["be_re"], p["be_im"]) * (k + 1) / d
            out *= ((-alpha * beta**2 / 2).exp() * (2 * arb.pi()).sqrt()
                    * gaussian_exp_moment_ball((1 - alpha) / 2, linear(k), bits))
        return out


def gerf_ort_conditional_t_ball(p: dict[str, Any], bits: int, scaled: bool) -> arb:
    """Arb ball of ``T = Var_iid - Var_ort = -(2/M^2) sum_{i<j} Cov(X_i, X_j)`` given the norms, by the
    spherical-mean 0F1 identity of :func:`conditional_moments_ball`, each covariance factored as
    ``w_i w_j (E_sph(b |z| sqrt(c_i^2 + c_j^2)) - E_sph(b c_i |z|) E_sph(b c_j |z|))``
    (``w_i = P0 e^{2A r_i^2}``, the same quantity): exactly 0 at ``z = 0``, and no cancellation of the large
    ``w_i w_j`` otherwise (CRT appendix 9.7, eq (28)-(32); GERF, real A, s = +1).

    Parameters
    ----------
    p : dict
        A pair point with ``a_re``, ``M`` and the norms ``rho1..rhoM`` (``r_m = rho_m sqrt(d)``).
    bits : int
        Working precision.
    scaled : bool
        The norms inside ``g`` (``X_m = g(r_m u_m^T z, r_m)``: ``c_i = r_i``) or as printed (``c_i = 1``).

    Returns
    -------
    flint.arb
        A ball containing ``T``.

    Examples
    --------
    >>> p = {"d": 3, "nx": 0.7, "ny": 1.1, "theta": 1.0, "a_re": -0.3, "M": 3, "rho1": 0.5, "rho2": 1.2, "rho3": 1.6}
    >>> t = conditional_moments(p, 30, True, "hyp")["T"]
    >>> bool(gerf_ort_conditional_t_ball(p, 128, True).overlaps(arb(mpmath.nstr(t, 30), 1e-25 * abs(float(t)))))
    True
    """
    with workprec(bits):
        st = pair_stats_ball(p)
        d, m = st["d"], int(p["M"])
        a = arb(p["a_re"])
        b, nz = (1 - 4 * a).sqrt(), st["sq_sum"].sqrt()
        p0 = ((1 - 4 * a).log() * d / 2).exp() * (-st["sq_x"] - st["sq_y"]).exp()
        r = [arb(p[f"rho{i + 1}"]) * arb(d).sqrt() for i in range(m)]
        c = r if scaled else [arb(1)] * m
        w = [p0 * (2 * a * ri * ri).exp() for ri in r]

        def sph(gamma: Any) -> Any:
            return (gamma * gamma / 4).hypgeom_0f1(arb(d) / 2)

        cov = arb(0)
        for i in range(m):
            for j in range(i + 1, m):
                cov += w[i] * w[j] * (sph(b * nz * (c[i] ** 2 + c[j] ** 2).sqrt())
                                      - sph(b * c[i] * nz) * sph(b * c[j] * nz))
        return -2 * cov / m**2


@functools.lru_cache(maxsize=4)
def sec51_set_statistics(regime: str, L: int, methods: tuple[str, ...], n_sets: int = 5, seed: int = 0,
                         d: int = 64) -> dict[str, dict[str, tuple[float, ...]]]:
    """Per method and per sampled pair of sets of CRT sec 5.1 (appendix 9.10.1, Figure 2): the mean
    log-variance over the ``L^2`` pairs (finite ones; as ``rfcheck.estimators.crt.summary``'s ``set_means``,
    drawn from the same stream) and the log of the mean variance (zero variances count as 0).  Memoised: the
    readings of the sec 5.1 claims share one pass over the sets.

    Parameters
    ----------
    regime : str
        A data regime of ``rfcheck.estimators.crt.REGIMES`` (``"normal"``, ``"heterogen"``, ...).
    L : int
        Points per set.
    methods : tuple of str
        Mechanisms (``rfcheck.estimators.crt.log_variances``).
    n_sets : int, default 5
        Sampled pairs of sets.
    seed : int, default 0
        Seed of the stream (``sigma = 1``).
    d : int, default 64
        Dimension.

    Returns
    -------
    dict
        ``{method: {"mean_log": (...), "log_mean": (...)}}``, one float per sampled pair of sets.

    Examples
    --------
    >>> r = sec51_set_statistics("normal", 4, ("PosRF", "OPRF"), n_sets=2, d=4)
    >>> len(r["OPRF"]["mean_log"]), all(o <= p for o, p in zip(r["OPRF"]["mean_log"], r["PosRF"]["mean_log"]))
    (2, True)
    """
    import numpy as np
    from scipy.special import logsumexp

    from rfcheck.estimators import crt as crt_variance

    rng = np.random.default_rng([seed, crt_variance.REGIMES.index(regime), round(1.0 * 1e6)])  # summary's stream
    out: dict[str, dict[str, list[float]]] = {m: {"mean_log": [], "log_mean": []} for m in methods}
    for _ in range(n_sets):
        x, y = crt_variance.sample_sets(regime, 1.0, L, d, rng)
        lv = crt_variance.log_variances(x, y, methods)
        for m in methods:
            v = np.asarray(lv[m], dtype=float).ravel()
            ok = np.isfinite(v)  # zero variance (log = -inf) is left out of the mean log, counts as 0 in the mean
            out[m]["mean_log"].append(float(np.mean(v[ok])))
            out[m]["log_mean"].append(float(logsumexp(v) - math.log(v.size)))
    return {m: {k: tuple(v) for k, v in st.items()} for m, st in out.items()}


# ----------------------------------------------------------- Theorem 4.2: the exact tail of one OPRF sample

#: half noncentralities above which :func:`oprf_tail_upper_ball` does not try the upper-bound mixture (its
#: incomplete gamma functions at large parameters cost seconds a term on balls and lose their precision)
OPRF_TAIL_MAX_HALF_NC = 200


def oprf_tail_log_probability(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``log P[|Z - K| >= eps]`` for one OPRF sample ``Z`` (``M = 1``), exactly; for ``M > 1`` the log of the
    certified lower bound ``max(P[Z >= K + eps], P[Z <= K - eps])^M`` of ``P[|K_M - K| >= eps]`` (all ``M``
    samples on one side) (CRT Theorem 4.2, OPRF with ``A = A*`` of Thm 3.3).

    With ``A < 0``, ``Z = Z_max exp(2A W)``, ``W = |w - w0|^2`` noncentral chi^2_d (noncentrality
    ``B^2 u / (16 A^2)``), so ``P[Z >= K + eps] = P[W <= log(Z_max/(K+eps)) / (-2A)]``, the Poisson mixture
    of :func:`noncentral_chi2_log_cdf` (every term >= 0: a partial sum is a lower bound); the lower tail
    ``P[Z <= K - eps]`` the same way.  All at ``dps + 10`` digits on :func:`oprf_point`'s constants.

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``) with ``|x + y| > 0``, ``eps > 0`` and ``M`` (default 1).
    dps : int
        Decimal digits.

    Returns
    -------
    (logp, err) : tuple of mpf
        The log-probability (``-inf`` where ``eps`` lies beyond the range of ``Z - K``: probability 0)
        and its error bar ``10^(8 - dps) (1 + |logp|)``.

    Examples
    --------
    >>> logp, err = oprf_tail_log_probability({"d": 2, "nx": 0.5, "ny": 0.5, "theta": 0.3, "eps": 0.2}, 20)
    >>> bool(-5 < logp < 0), bool(err < 1e-10)
    (True, True)
    """
    o = oprf_point(p, dps)
    with mpmath.workdps(dps + 10):
        eps = mpmath.mpf(p["eps"])
        a, b, u, d = o["A"], o["B"], o["sq_sum"], o["d"]
        k = mpmath.exp(-o["sq_diff"] / 2)
        log_zmax = mpmath.log(o["D2"]) - b * b * u / (8 * a) - o["sq_x"] - o["sq_y"]
        nc = b * b * u / (16 * a * a)

        def log_cdf(w: Any) -> Any:
            return noncentral_chi2_log_cdf(w, d, nc, dps)

        up = log_cdf((log_zmax - mpmath.log(k + eps)) / (-2 * a))
        n = int(p.get("M", 1))
        low = -mpmath.inf
        if k - eps > 0:
            w_lo = (log_zmax - mpmath.log(k - eps)) / (-2 * a)
            low = mpmath.log(-mpmath.expm1(log_cdf(w_lo))) if w_lo > 0 else mpmath.mpf(0)
        if n > 1:  # certified lower bound: all M samples beyond K + eps (or all below K - eps)
            logp = n * max(up, low)
        elif up > -mpmath.inf and low > -mpmath.inf:
            logp = max(up, low) + mpmath.log1p(mpmath.exp(-abs(up - low)))
        else:
            logp = max(up, low)
        return logp, mpmath.mpf(10) ** (-dps + 8) * (1 + abs(logp))


def _oprf_tail_setup(p: dict[str, Any], bits: int) -> tuple[Any, ...]:
    """``(d, eps, a, k, log_zmax, lam)`` of :func:`oprf_tail_lower_ball` on balls (``lam`` half the
    noncentrality), at the working precision."""
    s = pair_stats_ball(p)
    d, eps, u = s["d"], to_ball(p["eps"]), s["sq_sum"]
    a = cf.oprf_a_star(u, d, backend="arb", prec=bits)
    b2 = 1 - 4 * a
    k = (-s["sq_diff"] / 2).exp()
    log_zmax = d * b2.log() / 2 - b2 * u / (8 * a) - s["sq_x"] - s["sq_y"]
    return d, eps, a, k, log_zmax, b2 * u / (32 * a * a)


def oprf_tail_lower_ball(p: dict[str, Any], bits: int) -> arb | str:
    """Arb ball of ``log L`` with ``L`` a certified lower bound of the tail of :func:`oprf_tail_log_probability`
    (``L = P_+ + P_-`` at ``M = 1``, ``max(P_+, P_-)^M`` at ``M > 1``) (CRT Theorem 4.2).

    ``P_+ = P[W <= w_+]`` and ``P_- = P[W > w_-]`` (``W`` noncentral chi^2_d) are Poisson mixtures of regularized
    incomplete gamma functions (:func:`noncentral_chi2_mixture_lower_ball`): every term is >= 0, so a partial
    sum is a lower bound; ``A = A*`` is the Arb face of ``rfcheck.closed_forms.crt.oprf_a_star``.

    Parameters
    ----------
    p : dict
        As :func:`oprf_tail_log_probability` (floats exact).
    bits : int
        Working precision.

    Returns
    -------
    flint.arb or str
        The ball of ``M log(max(...))`` (``log(P_+ + P_-)`` at ``M = 1``), or why not where the lower bound
        is not positive.

    Examples
    --------
    >>> p = {"d": 2, "nx": 0.5, "ny": 0.5, "theta": 0.3, "eps": 0.2}
    >>> b, logp = oprf_tail_lower_ball(p, 128), float(oprf_tail_log_probability(p, 30)[0])
    >>> bool(b < logp + 1e-12), bool(b > logp - 1e-12)
    (True, True)
    """
    with workprec(bits):
        d, eps, a, k, log_zmax, lam = _oprf_tail_setup(p, bits)
        n = int(p.get("M", 1))
        mixture = noncentral_chi2_mixture_lower_ball
        p_up = mixture((log_zmax - (k + eps).log()) / (-2 * a), d, lam, upper=False)
        p_low = mixture((log_zmax - (k - eps).log()) / (-2 * a), d, lam, upper=True) if k - eps > 0 else arb(0)
        if n == 1:
            low = p_up + p_low
        else:  # the larger lower endpoint is below max(P_+, P_-)
            low = p_up.lower() if p_up.lower() >= p_low.lower() else p_low.lower()
        if not low > 0:
            return "no positive certified lower bound of the tail at this point"
        return n * low.log()


def oprf_tail_upper_ball(p: dict[str, Any], bits: int) -> arb | str:
    """At ``M = 1``: Arb ball of ``U >= P[|Z - K| >= eps] = P_+ + P_-``, a certified upper bound
    (:func:`noncentral_chi2_mixture_upper_ball` at the thresholds of :func:`oprf_tail_lower_ball`;
    ``P_- = 0`` where ``K - eps <= 0``) (CRT Theorem 4.2).

    Parameters
    ----------
    p : dict
        As :func:`oprf_tail_log_probability` (floats exact), ``M = 1``.
    bits : int
        Working precision.

    Returns
    -------
    flint.arb or str
        ``U`` (exactly 0 where ``eps`` lies beyond the range of ``Z - K``), or why not: half noncentrality
        above :data:`OPRF_TAIL_MAX_HALF_NC`, or ``K - eps`` undecided on balls.

    Examples
    --------
    >>> p = {"d": 2, "nx": 0.5, "ny": 0.5, "theta": 0.3, "eps": 0.2}
    >>> u, logp = oprf_tail_upper_ball(p, 128), float(oprf_tail_log_probability(p, 30)[0])
    >>> bool(u.log() > logp - 1e-12), bool(u < 1)
    (True, True)
    """
    with workprec(bits):
        d, eps, a, k, log_zmax, lam = _oprf_tail_setup(p, bits)
        if not lam < OPRF_TAIL_MAX_HALF_NC:
            return (f"half noncentrality {float(lam.mid()):.4g} > {OPRF_TAIL_MAX_HALF_NC}: the upper-bound mixture "
                    "of incomplete gamma functions is not affordable on balls")
        w_up = (log_zmax - (k + eps).log()) / (-2 * a)
        if not (k - eps).upper() <= 0 and not k - eps > 0:
            return "K - eps is not decided on balls"
        if w_up.upper() <= 0 and (k - eps).upper() <= 0:  # P = 0 exactly
            return arb(0)
        up = noncentral_chi2_mixture_upper_ball(w_up, d, lam, upper=False) if w_up.upper() > 0 else arb(0)
        low = (noncentral_chi2_mixture_upper_ball((log_zmax - (k - eps).log()) / (-2 * a), d, lam, upper=True)
               if k - eps > 0 else arb(0))
        return arb(up.upper() + low.upper())


# ----------------------------------------------------------- eq (10): the DIRF feature from its definition


def dirf_feature(v: Any, omega: list[int], log_pk: Callable[[int], Any]) -> Any:
    """``f_DI(w, x) = exp(-|x|^2/2) prod_l x_l^{w_l} (w_l!)^{-1/2} p_{w_l}^{-1/2}`` of CRT eq (10) at an integer
    ``w``, in mpmath at the working precision, ``p_k`` given by ``log p_k`` from the law's definition.

    Parameters
    ----------
    v : sequence of float
        The vector ``x`` (floats exact).
    omega : list of int
        The integer ``w`` (``w_l >= 0``), one entry per coordinate.
    log_pk : callable
        ``k -> log p_k`` (``rfcheck.closed_forms.crt.poisson_log_pk`` or ``geometric_log_pk``).

    Returns
    -------
    mpf
        The feature value.

    Examples
    --------
    >>> with mpmath.workdps(30):
    ...     f = dirf_feature([0.5, -1.0], [2, 1], cf.geometric_log_pk(0.5))
    >>> bool(abs(f - mpmath.exp(-0.625) * 0.25 / mpmath.sqrt(2) * -1 / mpmath.sqrt(0.125 * 0.25)) < 1e-14)
    True
    """
    xs = [mpmath.mpf(a) for a in v]
    return mpmath.exp(-mpmath.fsum(a * a for a in xs) / 2) * mpmath.fprod(
        a ** k / mpmath.sqrt(mpmath.factorial(k)) * mpmath.exp(-log_pk(k) / 2) for a, k in zip(xs, omega, strict=True))


def dirf_feature_ball(v: Any, omega: list[int], dist: str, par: float) -> arb:
    """Arb ball of :func:`dirf_feature` at the working precision: ``log p_k`` from its definition on balls
    (Poisson ``-lambda + k log lambda - log k!``, geometric ``log p + k log(1 - p)``) (CRT eq (10)).

    Parameters
    ----------
    v : sequence of float
        The vector ``x`` (floats exact).
    omega : list of int
        The integer ``w``.
    dist : str
        ``"poisson"`` or ``"geometric"``.
    par : float
        ``lambda`` or ``p`` (exact).

    Returns
    -------
    flint.arb
        A ball containing the feature value.

    Examples
    --------
    >>> with mpmath.workdps(30):
    ...     f = dirf_feature([0.5, -1.0], [2, 1], cf.poisson_log_pk(1.5))
    >>> bool(dirf_feature_ball([0.5, -1.0], [2, 1], "poisson", 1.5).overlaps(arb(mpmath.nstr(f, 30), 1e-25)))
    True
    """
    par_b, xs = arb(par), [arb(float(a)) for a in v]

    def log_pk(k: int) -> Any:
        if dist == "poisson":
            return -par_b + k * par_b.log() - arb.fac_ui(k).log()
        return par_b.log() + k * (1 - par_b).log()

    out = (-sum((a * a for a in xs), arb(0)) / 2).exp()
    for a, k in zip(xs, omega, strict=True):
        out *= a**k / arb.fac_ui(k).sqrt() * (-log_pk(k) / 2).exp()
    return out


def oprf_log_z_balls(p: dict[str, Any], bits: int) -> tuple[arb, arb]:
    """Arb balls of ``log Z(w*)`` and ``log sup_w Z`` for one OPRF sample
    ``Z = D^2 exp(2A|w|^2 + B w^T z - |x|^2 - |y|^2)``, ``z = x + y``, at ``A = A*`` (Arb face of
    ``rfcheck.closed_forms.crt.oprf_a_star``), ``B = sqrt(1-4A)``, ``D^2 = (1-4A)^{d/2}`` (CRT appendix 9.8,
    eq (35)).

    The first at ``w* = t e_z`` with ``t`` the golden-section maximiser of :func:`oprf_log_z_maximiser` taken as
    an exact number (``log Z(w*) <= log sup Z``: a lower bound of the supremum); the second exact: with
    ``A < 0``, ``log Z`` is a concave quadratic in ``w``, so completing the square gives
    ``log sup Z = (d/2) log(1-4A) - B^2 |z|^2 / (8A) - |x|^2 - |y|^2`` (attained at ``w = -B z / (4A)``).

    Parameters
    ----------
    p : dict
        A pair point (``d, nx, ny, theta``) with ``|x + y| > 0`` (floats exact).
    bits : int
        Working precision.

    Returns
    -------
    (lower, sup) : tuple of flint.arb
        ``log Z(w*)`` and ``log sup_w Z``.

    Examples
    --------
    >>> lower, sup = oprf_log_z_balls({"d": 3, "nx": 1.0, "ny": 0.5, "theta": 0.7}, 128)
    >>> bool(lower.overlaps(sup)), bool(sup.rad() < 1e-30)
    (True, True)
    """
    _, _, t = oprf_log_z_maximiser(p, max(15, int(bits / 3.33) - 5))
    with workprec(bits):
        s = pair_stats_ball(p)
        a = cf.oprf_a_star(s["sq_sum"], s["d"], backend="arb", prec=bits)
        one4a = 1 - 4 * a
        tb = to_ball(t)  # any t: log Z(t e_z) <= log sup Z
        lower = (s["d"] * one4a.log() / 2 + 2 * a * tb * tb + one4a.sqrt() * tb * s["sq_sum"].sqrt()
                 - s["sq_x"] - s["sq_y"])
        return lower, s["d"] * one4a.log() / 2 - one4a * s["sq_sum"] / (8 * a) - s["sq_x"] - s["sq_y"]


# ----------------------------------------------------------- appendix 9.8, eq (34): the extremal two-point law


def two_point_sum_tail(m: int, a_i: float, b_i: float, t: float, dps: int) -> Any:
    """``P[|X_1 + ... + X_M| > a]`` for ``M`` iid zero-mean two-point variables ``X in {-a_i, b_i}`` (the extremal
    law of Hoeffding's inequality, CRT appendix 9.8, Lemma 9.1, eq (34)), ``a = t M (a_i + b_i)/4``: the exact
    binomial sum in mpmath at ``dps`` digits.

    Parameters
    ----------
    m : int
        ``M >= 1``.
    a_i, b_i : float
        The two magnitudes (``> 0``; ``P[X = b_i] = a_i / (a_i + b_i)``).
    t : float
        The threshold's fraction of the range, ``t >= 0``.
    dps : int
        Decimal digits.

    Returns
    -------
    mpf
        The probability.

    Examples
    --------
    >>> float(two_point_sum_tail(2, 1.0, 1.0, 1.0, 20))   # |X_1 + X_2| > 1: both of one sign
    0.5
    """
    with mpmath.workdps(dps):
        lo, hi = mpmath.mpf(a_i), mpmath.mpf(b_i)
        q = lo / (lo + hi)  # P[X = b]: zero mean
        thr = mpmath.mpf(t) * m * (lo + hi) / 4 + 0  # thresholds across the range of the sum
        return mpmath.fsum(mpmath.binomial(m, k) * q**k * (1 - q) ** (m - k)
                           for k in range(m + 1) if abs(k * hi - (m - k) * lo) > thr)


def two_point_sum_tail_ball(m: int, a_i: float, b_i: float, t: float) -> arb:
    """Arb ball of :func:`two_point_sum_tail` at the working precision: which ``k`` lie beyond the threshold is
    decided in exact rational arithmetic on the floats, the binomial coefficients are exact (CRT appendix 9.8,
    eq (34)).

    Parameters
    ----------
    m : int
        ``M >= 1``.
    a_i, b_i, t : float
        As :func:`two_point_sum_tail` (exact).

    Returns
    -------
    flint.arb
        A ball containing the probability.

    Examples
    --------
    >>> two_point_sum_tail_ball(2, 1.0, 1.0, 1.0)
    0.500000000000000
    """
    from fractions import Fraction

    lo_q, hi_q, t_q = Fraction(a_i), Fraction(b_i), Fraction(t)
    thr_q = t_q * m * (lo_q + hi_q) / 4
    ks = [k for k in range(m + 1) if abs(k * hi_q - (m - k) * lo_q) > thr_q]
    lo, hi = arb(a_i), arb(b_i)
    q = lo / (lo + hi)
    return sum((arb(math.comb(m, k)) * q**k * (1 - q) ** (m - k) for k in ks), arb(0))


# ---------------------------------------------------- sec 3.2, eq (9): the DIRF product without its prefactor


def dirf_unnormalised_product_mean(x: Any, y: Any, log_pk: Callable[[int], Any], dps: int) -> tuple[Any, Any]:
    """``E[prod_l X_l prod_l Y_l]`` for the unnormalised DIRF coordinates, one series per coordinate.

    ``X_l = x_l^{w_l} (w_l!)^{-1/2} p_{w_l}^{-1/2}``, ``Y_l`` likewise with ``y_l``, ``w_l`` iid with
    ``P(w_l = k) = p_k > 0`` (CRT eq (9)).  By independence of the ``w_l`` the mean is the product over ``l``
    of ``E[X_l Y_l] = sum_k p_k (x_l y_l)^k / (k! p_k)``, each summed term by term in mpmath with the
    ``p_k`` kept (:func:`dirf_series_moment`, ``power = 1``), never the exponential the paper sums it to.

    Parameters
    ----------
    x, y : sequence of float
        The two vectors (same length ``d``), exact.
    log_pk : callable
        ``k -> log p_k`` in mpmath (e.g. :func:`rfcheck.closed_forms.crt.poisson_log_pk`).
    dps : int
        Decimal digits (the product is formed at ``dps + 15``).

    Returns
    -------
    (value, err) : tuple of mpf
        The mean and its error bar: the factors' error bars propagated through the product
        (:func:`rfcheck.quadrature.product_with_error`) -- each factor's bar is its rounding times
        the sum of ``|terms|`` plus twice its last term.

    Raises
    ------
    ArithmeticError
        If a coordinate's series has not converged in 200000 terms.

    References
    ----------
    CRT sec 3.2, eq (9) (the unbiasedness of DIRFs).

    Examples
    --------
    The Poisson law with ``lambda = 1``: ``E[X_l Y_l] = exp(x_l y_l)`` (Taylor series), here
    ``exp(0.5 * 0.25 - 0.75 * 2)``:

    >>> import math
    >>> from rfcheck.closed_forms.crt import poisson_log_pk
    >>> v, err = dirf_unnormalised_product_mean([0.5, -0.75], [0.25, 2.0], poisson_log_pk(1.0), 30)
    >>> abs(float(v) - math.exp(0.125 - 1.5)) < 1e-15, float(err) < 1e-25
    (True, True)
    """
    facs = [dirf_series_moment(a, log_pk, 1, dps) for a in zip(x, y, strict=True)]
    with mpmath.workdps(dps + 15):
        return quadrature.product_with_error([(v, e, 1) for v, e in facs])


def dirf_unnormalised_product_mean_ball(x: Any, y: Any, dist: str, par: float, bits: int) -> arb:
    """Arb ball of :func:`dirf_unnormalised_product_mean`: the product over ``l`` of the series balls
    :func:`dirf_series_moment_ball` (``power = 1``), each of which encloses the exact series (its terms by
    their exact ratio, its tail by a proved geometric bound).

    Parameters
    ----------
    x, y : sequence of float
        The two vectors (same length ``d``), exact.
    dist : {"poisson", "geometric"}
        The law of ``w_l``: ``p_k = e^{-lambda} lambda^k / k!`` or ``p_k = p (1 - p)^k``.
    par : float
        Its parameter (``lambda > 0`` or ``p`` in ``(0, 1)``), exact.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing ``E[prod_l X_l prod_l Y_l]``.

    Raises
    ------
    ValueError
        For an unknown ``dist`` (:func:`dirf_series_moment_ball`).

    References
    ----------
    CRT sec 3.2, eq (9).

    Examples
    --------
    The geometric law: ``E[X_l Y_l] = sum_k a^k / k! = exp(a)`` whatever ``p`` is:

    >>> from flint import arb
    >>> b = dirf_unnormalised_product_mean_ball([0.5, -0.75], [0.25, 2.0], "geometric", 0.3, 128)
    >>> bool(b.overlaps(arb(-1.375).exp())), bool(b.rad() < 1e-30), bool(b.overlaps(arb(-1.374).exp()))
    (True, True, False)
    """
    with workprec(bits):
        out = arb(1)
        for a in zip(x, y, strict=True):
            out *= dirf_series_moment_ball(a, dist, par, 1, bits)
        return out


# ------------------------------------------ Thm 4.1, appendix 9.7 (Thm 9.1, eq (24)-(33)): orthogonal vs iid


def orf_pair_covariance_gap(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``G = E[X_1 X_2] / K^2 - 1`` for two PosRF/GERF (real ``A``, ``s = +1``) samples of one orthogonal
    block, by the 1-D quadrature :func:`rfcheck.quadrature.orf_pair_factor` (independent of ``A``).

    ``Var(K_M^ort) - Var(K_M^iid) = (1 - 1/M) K^2 G``, so Thm 4.1's claim is ``G <= 0``.

    Parameters
    ----------
    p : dict
        A pair point (``nx, ny, theta, d``, floats); ``u = |x + y|^2`` is formed in float64.
    dps : int
        Decimal digits (the quadrature runs at ``min(dps, 25)``).

    Returns
    -------
    (value, err) : tuple of mpf
        ``G`` and the quadrature's error bar (the change between two node counts, an estimate);
        the difference ``E[X_1 X_2] / K^2 - 1`` is rounded at the caller's mpmath precision (relative
        ``2^-prec`` of ``G``, not counted in ``err``).

    Raises
    ------
    ValueError
        If ``d < 2``.

    References
    ----------
    CRT Theorem 4.1, eq (15), and appendix 9.7 (orthogonal pairs).

    Examples
    --------
    Against the exact identity ``1 + G = e^{-u/2} 1F1(-d/2; d/2; -u/2)`` at ``u = 1``, ``d = 3``:

    >>> import mpmath
    >>> g, err = orf_pair_covariance_gap({"nx": 1.0, "ny": 0.0, "theta": 0.0, "d": 3}, 20)
    >>> exact = mpmath.exp(-0.5) * mpmath.hyp1f1(-1.5, 1.5, -0.5) - 1
    >>> bool(abs(g - exact) < 1e-15), bool(g < 0)
    (True, True)
    """

    st = stats_fp(p)
    r = quadrature.orf_pair_factor(st["sq_sum"], st["d"], dps=min(dps, 25))
    return r.value - 1, r.err


def orf_pair_covariance_gap_ball(p: dict[str, Any], bits: int) -> arb:
    """Arb ball of :func:`orf_pair_covariance_gap`'s ``G = expm1(log(1 + G))``, ``log(1 + G)`` from the exact
    covariance identity ``1 + G = e^{-u/2} 1F1(-d/2; d/2; -u/2)``
    (:func:`rfcheck.closed_forms.crt.orf_log_covariance_factor`, Arb face), not the quadrature.

    Near ``x = -y``, ``G ~ -u^2 / (2 (d + 2))`` lies far below the rounding of ``1 + G``: the precision is
    raised to ``4 bits`` and ``8 bits`` while the ball contains 0 and is not exactly 0.

    Parameters
    ----------
    p : dict
        A pair point (exact floats).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing ``G``.

    References
    ----------
    CRT Theorem 4.1, eq (15), and appendix 9.7.

    Examples
    --------
    >>> import mpmath
    >>> from flint import arb
    >>> from rfcheck.arb_backend import workprec
    >>> with workprec(128), mpmath.workdps(50):
    ...     b = orf_pair_covariance_gap_ball({"nx": 1.0, "ny": 0.0, "theta": 0.0, "d": 3}, 128)
    ...     exact = arb(str(mpmath.exp(-0.5) * mpmath.hyp1f1(-1.5, 1.5, -0.5) - 1))
    ...     wrong = exact * (1 + arb(10) ** -20)
    >>> bool(b.overlaps(exact)), bool(b.overlaps(wrong)), bool(b < 0), bool(b.rad() < 1e-30)
    (True, False, True, True)
    """
    for b in (bits, 4 * bits, 8 * bits):
        with workprec(b):
            s = pair_stats_ball(p)
            g = cf.orf_log_covariance_factor(s["sq_sum"], s["d"], backend="arb", prec=b).expm1()
        if g < 0 or g.is_zero():
            break
    return g


def orf_variance_reduction(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``Var(K_M^iid) - Var(K_M^ort) = -(1 - 1/M) K^2 G = (1 - 1/M) K^2 (1 - E[X_1 X_2] / K^2)`` for the GERF
    estimator (real ``A``, ``s = +1``, ``2 <= M <= d``), ``E[X_1 X_2] / K^2`` by the 1-D quadrature
    :func:`rfcheck.quadrature.orf_pair_factor` (independent of ``A``), ``K^2 = exp(-|x - y|^2)`` in mpmath.

    Parameters
    ----------
    p : dict
        A pair point with ``M``.
    dps : int
        Decimal digits (the quadrature at ``min(dps, 25)``, the product at ``dps``).

    Returns
    -------
    (value, err) : tuple of mpf
        The variance reduction and ``(1 - 1/M) K^2`` times the quadrature's error bar.

    Raises
    ------
    ValueError
        If ``d < 2``.

    References
    ----------
    CRT appendix 9.7, Theorem 9.1, eq (24), (27), (33).

    Examples
    --------
    Against the exact identity ``1 + G = e^{-u/2} 1F1(-d/2; d/2; -u/2)`` (``u = 1``, ``d = 3``, ``K = 1``,
    ``M = 2``):

    >>> import mpmath
    >>> v, err = orf_variance_reduction({"nx": 0.5, "ny": 0.5, "theta": 0.0, "d": 3, "M": 2}, 20)
    >>> exact = (1 - mpmath.exp(-0.5) * mpmath.hyp1f1(-1.5, 1.5, -0.5)) / 2
    >>> bool(abs(v - exact) < 1e-15), bool(v > 0)
    (True, True)
    """

    st = stats_fp(p)
    m = int(p["M"])
    r = quadrature.orf_pair_factor(st["sq_sum"], st["d"], dps=min(dps, 25))
    with mpmath.workdps(dps):
        k2 = mpmath.exp(-stats_mp(p)["sq_diff"])
        w = 1 - mpmath.mpf(1) / m
        return w * k2 * (1 - r.value), w * k2 * r.err


def orf_variance_reduction_ball(p: dict[str, Any], bits: int) -> arb:
    """Arb ball of :func:`orf_variance_reduction`: ``-(1 - 1/M) K^2 G`` with ``G`` from
    :func:`orf_pair_covariance_gap_ball` (the exact covariance identity on balls, not the quadrature; its
    precision raised near ``x = -y`` where ``G`` lies far below the rounding of ``1 + G``), at ``bits``.

    Parameters
    ----------
    p : dict
        A pair point with ``M`` (exact floats).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing ``Var(K_M^iid) - Var(K_M^ort)``.

    References
    ----------
    CRT appendix 9.7, Theorem 9.1, eq (24), (27), (33).

    Examples
    --------
    >>> import mpmath
    >>> from flint import arb
    >>> from rfcheck.arb_backend import workprec
    >>> with workprec(128), mpmath.workdps(50):
    ...     b = orf_variance_reduction_ball({"nx": 0.5, "ny": 0.5, "theta": 0.0, "d": 3, "M": 2}, 128)
    ...     exact = arb(str((1 - mpmath.exp(-0.5) * mpmath.hyp1f1(-1.5, 1.5, -0.5)) / 2))
    ...     wrong = exact * (1 + arb(10) ** -20)
    >>> bool(b.overlaps(exact)), bool(b.overlaps(wrong)), bool(b > 0), bool(b.rad() < 1e-30)
    (True, False, True, True)
    """
    g = orf_pair_covariance_gap_ball(p, bits)
    with workprec(bits):
        s = pair_stats_ball(p)
        return -(1 - arb(1) / int(p["M"])) * (-s["sq_diff"]).exp() * g


# ------------------------------------------------------- Thm 3.4-3.5, eq (11), (13): the DIRF estimator's variance


def dirf_product_variance(x: Any, y: Any, log_pk: Callable[[int], Any], dps: int) -> tuple[Any, Any]:
    """``Var(f_DI(w, x) f_DI(w, y)) = E[(f_DI(w, x) f_DI(w, y))^2] - K(x, y)^2`` for the DIRF of ``p_k``.

    The second moment is one series per coordinate (:func:`dirf_product_moment`, ``power = 2``, the ``p_k``
    kept term by term); the mean is ``K(x, y) = exp(-|x - y|^2 / 2)``, the Taylor identity of eq (9) times
    the prefactor ``exp(-(|x|^2 + |y|^2) / 2)`` (exact for every law ``p_k > 0``), formed from the exact
    differences ``x_l - y_l`` at ``dps + 15`` digits.  Never the closed forms of Thm 3.4-3.5.

    Parameters
    ----------
    x, y : sequence of float
        The two vectors (same length ``d``), exact.
    log_pk : callable
        ``k -> log p_k`` in mpmath (:func:`rfcheck.closed_forms.crt.poisson_log_pk`,
        :func:`rfcheck.closed_forms.crt.geometric_log_pk`).
    dps : int
        Decimal digits.

    Returns
    -------
    (value, err) : tuple of mpf
        The variance and the second moment's error bar (``K^2`` is exact up to the ``dps + 15``-digit
        rounding).

    Raises
    ------
    ArithmeticError
        If a coordinate's series has not converged in 200000 terms.

    References
    ----------
    CRT sec 3.2, Theorem 3.4, eq (11) (PoisRF) and Theorem 3.5, eq (13) (GeomRF).

    Examples
    --------
    PoisRF in ``d = 1``: ``E[(X Y)^2] = sum_k p_k (a^k / (k! p_k))^2 = e^{lambda} sum_k (a^2 / lambda)^k / k!
    = e^{lambda + a^2 / lambda}``, ``a = x y``, times ``e^{-x^2 - y^2}``, minus ``K^2 = e^{-(x - y)^2}``:

    >>> import mpmath
    >>> from rfcheck.closed_forms.crt import poisson_log_pk
    >>> v, err = dirf_product_variance([0.5], [1.5], poisson_log_pk(2.0), 30)
    >>> with mpmath.workdps(50):
    ...     exact = mpmath.exp(2 + mpmath.mpf(0.5625) / 2 - 2.5) - mpmath.exp(-1)
    ...     wrong = exact * (1 + mpmath.mpf(10) ** -20)
    ...     bool(abs(v - exact) < 1e-28), bool(abs(v - wrong) < 1e-28), bool(err < 1e-28)
    (True, False, True)
    """
    m2, e2 = dirf_product_moment(x, y, log_pk, 2, dps)
    with mpmath.workdps(dps + 15):
        k = mpmath.exp(-mpmath.fsum([(mpmath.mpmathify(float(a)) - mpmath.mpmathify(float(b))) ** 2
                                     for a, b in zip(x, y, strict=True)]) / 2)
        return m2 - k**2, e2


def dirf_product_variance_ball(x: Any, y: Any, dist: str, par: float, bits: int) -> arb:
    """Arb ball of :func:`dirf_product_variance`: the second-moment ball :func:`dirf_product_moment_ball`
    (``power = 2``, a proved tail bound per coordinate) minus ``K^2``, ``K = exp(-|x - y|^2 / 2)`` on balls from
    the exact floats.

    Parameters
    ----------
    x, y : sequence of float
        The two vectors (same length ``d``), exact.
    dist : {"poisson", "geometric"}
        The law of ``w_l``.
    par : float
        Its parameter (``lambda`` or ``p``), exact.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball containing the variance.

    Raises
    ------
    ValueError
        For an unknown ``dist`` (:func:`dirf_series_moment_ball`).

    References
    ----------
    CRT sec 3.2, Theorem 3.4, eq (11) and Theorem 3.5, eq (13).

    Examples
    --------
    GeomRF in ``d = 1``: ``E[(X Y)^2] = sum_k (a^2 / (1 - p))^k / (p k!^2) = I_0(2 |a| / sqrt(1 - p)) / p``:

    >>> import mpmath
    >>> from flint import arb
    >>> from rfcheck.arb_backend import workprec
    >>> with workprec(128), mpmath.workdps(50):
    ...     b = dirf_product_variance_ball([0.5], [1.5], "geometric", 0.5, 128)
    ...     v = (mpmath.besseli(0, 1.5 / mpmath.sqrt(0.5)) / 0.5 * mpmath.exp(-2.5) - mpmath.exp(-1))
    ...     exact, wrong = arb(mpmath.nstr(v, 45)), arb(mpmath.nstr(v * (1 + mpmath.mpf(10) ** -20), 45))
    >>> bool(b.overlaps(exact)), bool(b.overlaps(wrong)), bool(b.rad() < 1e-30)
    (True, False, True)
    """
    with workprec(bits):
        sq = [(arb(float(a)) - arb(float(b))) ** 2 for a, b in zip(x, y, strict=True)]
        total = sq[0]
        for t in sq[1:]:
            total = total + t
        k = (-total / 2).exp()
        return dirf_product_moment_ball(x, y, dist, par, 2, bits) - k * k


# ------------------------------------------------- sec 3.1-3.2, eq (8), (12), (14): averages over pairs of two sets


def set_pair_mean_sq_norm(ctx: Any, xs: list[list[Any]], ys: list[list[Any]], s: int) -> Any:
    """``(1/L^2) sum_i sum_j |x_i + s y_j|^2``, the mean squared norm over all ``L^2`` pairs of two sets, summed
    term by term (``O(L^2 d)``) on a number-system context.

    Parameters
    ----------
    ctx : rfcheck.backends.Backend
        The context (:data:`rfcheck.backends.MP` for mpmath, :data:`rfcheck.arb_backend.ARB` for balls).
    xs, ys : list of list
        The two sets, ``L`` rows of ``d`` context numbers each (e.g. exact floats lifted by ``ctx.num``).
    s : int
        The sign, ``+1`` or ``-1``.

    Returns
    -------
    number
        The average, a context number: with mpmath the sums are exact (``mpmath.fsum``) up to the working
        precision's rounding of each square; with balls an enclosure.

    References
    ----------
    CRT sec 3.1, eq (8) (its left side, the quantity the identity rewrites in ``O(L d)``).

    Examples
    --------
    The set ``{e1, e2}`` with itself: the squared norms of the four differences are 0, 2, 2, 0 and of the four
    sums 4, 2, 2, 4:

    >>> from rfcheck.backends import MP
    >>> xs = [[1.0, 0.0], [0.0, 1.0]]
    >>> set_pair_mean_sq_norm(MP, xs, xs, -1), set_pair_mean_sq_norm(MP, xs, xs, 1)
    (mpf('1.0'), mpf('3.0'))
    """
    L, d = len(xs), len(xs[0])
    tot = ctx.fsum(*(ctx.fsum(*((xs[i][k] + s * ys[j][k]) ** 2 for k in range(d)))
                     for i in range(L) for j in range(L)))
    return tot / L**2


def set_pair_mean_sq_product(ctx: Any, xs: list[list[Any]], ys: list[list[Any]]) -> Any:
    """``(1/L^2) sum_i sum_j sum_l x_il^2 y_jl^2``, the mean over all ``L^2`` pairs of ``sum_l x_l^2 y_l^2`` (the
    PoisRF ``q`` of Thm 3.4), summed term by term (``O(L^2 d)``) on a number-system context.

    Parameters
    ----------
    ctx : rfcheck.backends.Backend
        The context (mpmath or Arb balls).
    xs, ys : list of list
        The two sets, ``L`` rows of ``d`` context numbers each.

    Returns
    -------
    number
        The average, a context number.

    References
    ----------
    CRT sec 3.2.1, eq (12) (its left side).

    Examples
    --------
    >>> from rfcheck.backends import MP
    >>> set_pair_mean_sq_product(MP, [[1.0, 2.0], [0.5, 0.0]], [[3.0, 1.0], [0.0, 1.0]])  # (13 + 4 + 2.25) / 4
    mpf('4.8125')
    """
    L, d = len(xs), len(xs[0])
    return ctx.fsum(*(xs[i][k] ** 2 * ys[j][k] ** 2 for i in range(L) for j in range(L) for k in range(d))) / L**2


def set_pair_mean_abs_product(ctx: Any, xs: list[list[Any]], ys: list[list[Any]], k: int) -> Any:
    """``(1/L^2) sum_i sum_j |x_ik y_jk|``, the mean over all ``L^2`` pairs of the absolute product of the
    ``k``-th coordinates, summed term by term (``O(L^2)``) on a number-system context.

    Parameters
    ----------
    ctx : rfcheck.backends.Backend
        The context (mpmath or Arb balls).
    xs, ys : list of list
        The two sets, ``L`` rows of context numbers each.
    k : int
        The coordinate.

    Returns
    -------
    number
        The average, a context number.

    References
    ----------
    CRT sec 3.2.2, eq (14) (its left side).

    Examples
    --------
    >>> from rfcheck.backends import MP
    >>> set_pair_mean_abs_product(MP, [[1.0, -2.0], [0.5, 3.0]], [[3.0, 1.0], [0.0, -0.5]], 1)  # (2+1+3+1.5)/4
    mpf('1.875')
    """
    L = len(xs)
    return ctx.fsum(*(ctx.abs(xs[i][k] * ys[j][k]) for i in range(L) for j in range(L))) / L**2


def dirf_nonpositive_count(w: Any, x: Any, dist: str, par: float, exact: bool = False) -> int:
    """How many of the draws ``w`` (rows) give a DIRF feature ``f_DI(w, x) <= 0``: from the feature's float64
    log-magnitude and sign (:func:`rfcheck.estimators.crt.product_log_abs_sign`; a log-magnitude that is not
    finite counts), or with ``exact`` by the sign rule on the exact floats.

    Parameters
    ----------
    w : numpy.ndarray
        Integer draws, shape ``(n, d)``: one projection per row.
    x : numpy.ndarray
        The input, shape ``(d,)``.
    dist : {"poisson", "geometric"}
        The law of the entries of ``w``.
    par : float
        ``lambda`` (Poisson) or ``p`` (geometric).
    exact : bool, default False
        Count in exact arithmetic: ``f_DI(w, x)`` is a positive factor times ``prod_l x_l^{w_l}``
        (``0^0 = 1``), which is ``<= 0`` exactly when some ``x_l = 0`` has ``w_l > 0`` or an odd number of
        negative ``x_l`` carry an odd ``w_l`` (``dist`` and ``par`` do not enter).

    Returns
    -------
    int
        The number of rows with ``f_DI(w, x)`` not positive.

    Notes
    -----
    The float route evaluates ``f_DI(w, x)`` as the product with ``y = 1``, which has the sign and magnitude
    class of ``f_DI(w, x)``.

    References
    ----------
    CRT sec 3.2.3 (DIRFs are positive for positive inputs) and eq (10).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[0, 1], [1, 1], [2, 0], [0, 0]])
    >>> dirf_nonpositive_count(w, np.array([0.5, -1.0]), "poisson", 1.0)  # odd w_2 with x_2 < 0: rows 0 and 1
    2
    >>> dirf_nonpositive_count(w, np.array([0.5, 1.0]), "geometric", 0.5)
    0
    >>> dirf_nonpositive_count(w, np.array([0.0, 1.0]), "poisson", 1.0, exact=True)  # 0^1 = 0 at w_1 > 0
    2
    """
    import numpy as np

    if exact:
        zero = np.any((x == 0) & (w > 0), axis=1)
        odd = np.sum((x < 0) & (w % 2 == 1), axis=1) % 2 == 1
        return int(np.sum(zero | odd))
    from rfcheck.estimators import crt as discrete

    la, sx = discrete.product_log_abs_sign(w, x, np.ones_like(x), dist, par)
    return int(np.sum((sx <= 0) | ~np.isfinite(la)))

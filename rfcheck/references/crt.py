"""Reference computations for Chefs' Random Tables (``crt``): Gaussian moments as Arb balls.

The CRT claims of Thm 3.1-3.2 and eq (16)-(21) reduce (by rotation invariance) to the
one-dimensional Gaussian moment ``E exp(alpha W^2 + beta W)``, ``W ~ N(0, 1)``.  Here it is a
rigorous integral of the defining expectation (Arb's ``acb.integral`` on the truncated line,
plus a proved bound on the two tails) -- never the closed form ``(1 - 2 alpha)^{-1/2}
exp(beta^2 / (2 (1 - 2 alpha)))`` that the printed formulas build on.

References
----------
CRT appendix 9.2-9.3 (the integrals behind eq (16)-(21)).
"""

from __future__ import annotations

import math
from typing import Any

from flint import acb, arb

from rfcheck.arb_backend import to_ball, workprec

__all__ = ["gaussian_exp_moment_ball"]

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
    alpha, beta : int, float, complex, mpmath number or flint ball
        Complex parameters with ``Re(1 - 2 alpha) > 0``; numbers are taken at their exact
        binary value.
    prec : int
        Target precision in bits: the radius is at most about ``2^-prec`` times the value,
        unless even ``prec + MAX_EXTRA_BITS`` working bits cannot resolve a cancelling
        integral (the radius then says so honestly).

    Returns
    -------
    flint.acb
        A ball that contains the expectation.

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
            a = acb(to_ball(alpha))
            b0 = acb(to_ball(beta))
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

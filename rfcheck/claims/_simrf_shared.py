"""Declarations and check-building mechanisms shared by the two SimRF claim modules (no claims).

:mod:`rfcheck.claims.simrf` (the paper's results) and :mod:`rfcheck.claims._simrf_proofs`
(its proof steps) both import from here, so that neither imports the other's helpers: the
domain builder, expensive checks (:func:`det`, :func:`ineq`, capped by
:func:`rfcheck.checkkit.capped`), the mpmath and ball faces of a transcription (:func:`faces`,
:func:`on_balls`), a reference at two precisions (:func:`two_prec`) and the checks against a reference used by
both modules (:func:`eq10_angle`, :func:`iid_mgf_check`); the numerical references themselves live in
:mod:`rfcheck.references.simrf`.
"""

from __future__ import annotations

from typing import Any

import mpmath

from rfcheck.arb_backend import ARB, Ball, to_ball, workprec
from rfcheck.backends import MP
from rfcheck.checkkit import capped
from rfcheck.ledger import Check, Domain, Int, Real, deterministic_check, inequality_check
from rfcheck.references.simrf import eq10_quadrature, iid_mgf_ball, iid_mgf_quadrature, two_precision_value

__all__ = ["MF", "det", "eq10_angle", "faces", "iid_mgf_check", "ineq", "on_balls", "two_prec", "vd_domain"]

#: mpmath's real type (the transcriptions are written with it)
MF = mpmath.mpf


def vd_domain(v: tuple[float, float] = (0.0, 5.0), d: tuple[int, int] = (2, 256), extra: dict[str, Any] | None = None,
              **kw: Any) -> Domain:
    """The ``(v, d)`` domain of a SimRF conformity claim, with ``extra`` parameters added."""
    params: dict[str, Any] = {"v": Real(v[0], v[1], extra=(1.0,)),
                              "d": Int(d[0], d[1], extra=tuple(x for x in (2, 3, 6, 64) if d[0] <= x <= d[1]))}
    params.update(extra or {})
    return Domain(params, **kw)


def det(*args: Any, n: int, **kw: Any) -> Check:
    """An expensive :func:`~rfcheck.ledger.deterministic_check`: at most ``n`` points, no optimiser climb."""
    return capped(deterministic_check(*args, **kw), n)


def ineq(*args: Any, n: int, **kw: Any) -> Check:
    """An expensive :func:`~rfcheck.ledger.inequality_check`: at most ``n`` points, no optimiser climb."""
    return capped(inequality_check(*args, **kw), n)


def on_balls(fn: Any) -> Any:
    """``(p, bits) -> fn(ARB, p)`` as a flint ball (or a tuple of them): a printed formula written against a
    context, the point's ints kept as ints (they index vectors, count terms, set guard precisions)."""
    def ball(p: dict[str, Any], bits: int) -> Any:
        with workprec(bits):
            out = fn(ARB, p)
        if isinstance(out, tuple):
            return tuple(o.v if isinstance(o, Ball) else to_ball(o) for o in out)
        return out.v if isinstance(out, Ball) else to_ball(out)

    return ball


def two_prec(fn: Any) -> Any:
    """A check's reference ``(p, dps) -> (value, error)``: the mpmath computation ``fn(p)`` repeated at two
    precisions (:func:`rfcheck.references.simrf.two_precision_value`)."""
    return lambda p, dps: two_precision_value(lambda: fn(p), dps)


def faces(printed: Any) -> dict[str, Any]:
    """The ``printed`` and ``printed_ball`` arguments of a check for a transcription ``printed(ctx, p)`` that
    takes the point as it is (ints stay ints): ``printed(MP, p)`` and :func:`on_balls`."""
    return {"printed": lambda p: printed(MP, p), "printed_ball": on_balls(printed)}


def eq10_angle(p: dict[str, Any], dps: int) -> tuple[Any, Any]:
    """``rho_theta`` at the point's ``(v, d, cos)`` from the definition eq (10) as mpmath numbers (value, error):
    :func:`rfcheck.references.simrf.eq10_quadrature`, float64 2-D Gauss-Legendre over the ``chi_d`` norms."""
    return tuple(MF(x) for x in eq10_quadrature(float(p["v"]), int(p["d"]), float(p["cos"])))


def iid_mgf_check(name: str, n: int, printed: Any = None, **faces: Any) -> Check:
    """A printed ``rho_IIDRF(v)`` (``faces``: :func:`faces` or ``printed_ctx``) against ``E exp(t v)``,
    ``t ~ N(0, 2)``: :func:`rfcheck.references.simrf.iid_mgf_quadrature`, on balls
    :func:`~rfcheck.references.simrf.iid_mgf_ball`; an expensive check (:func:`det`, at most ``n`` points)."""
    return det(name, printed, lambda p, dps: iid_mgf_quadrature(p["v"], dps),
               description="E exp(t v), t ~ N(0, 2), by quadrature",
               reference_ball=lambda p, bits: iid_mgf_ball(p["v"], bits), n=n, **faces)

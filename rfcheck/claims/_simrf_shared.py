"""Declarations shared by the two SimRF claim modules (no claims, no numerical references).

:mod:`rfcheck.claims.simrf` (the paper's results) and :mod:`rfcheck.claims._simrf_proofs`
(its proof steps) both import from here, so that neither imports the other's helpers; the
numerical references of both live in :mod:`rfcheck.references.simrf`.
"""

from __future__ import annotations

from typing import Any

import mpmath

from rfcheck.ledger import Check, Domain, Int, Real, deterministic_check, inequality_check

__all__ = ["MF", "det", "ineq", "no_search", "vd_domain"]

#: mpmath's real type (the transcriptions are written with it)
MF = mpmath.mpf


def vd_domain(
    v: tuple[float, float] = (0.0, 5.0), d: tuple[int, int] = (2, 256), extra: dict[str, Any] | None = None, **kw: Any
) -> Domain:
    """The ``(v, d)`` domain of a SimRF conformity claim, with ``extra`` parameters added."""
    params: dict[str, Any] = {
        "v": Real(v[0], v[1], extra=(1.0,)),
        "d": Int(d[0], d[1], extra=tuple(x for x in (2, 3, 6, 64) if d[0] <= x <= d[1])),
    }
    params.update(extra or {})
    return Domain(params, **kw)


def no_search(check: Check, n: int) -> Check:
    """An expensive check: at most ``n`` grid/random points, no optimiser climb (verify time budget)."""
    check.max_points = n
    check.search = False
    return check


def det(*args: Any, n: int, **kw: Any) -> Check:
    """An expensive :func:`~rfcheck.ledger.deterministic_check`: at most ``n`` points, no optimiser climb."""
    return no_search(deterministic_check(*args, **kw), n)


def ineq(*args: Any, n: int, **kw: Any) -> Check:
    """An expensive :func:`~rfcheck.ledger.inequality_check`: at most ``n`` points, no optimiser climb."""
    return no_search(inequality_check(*args, **kw), n)

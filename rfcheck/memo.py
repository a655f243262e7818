"""Memo caches of reference computations, and forgetting them between claims.

A reference computed on Arb balls depends in its last bits on FLINT's process-wide caches: Arb keeps
constants and Gauss-Legendre quadrature nodes computed at the highest precision asked for so far and rounds
them for later requests, so a ball's midpoint and radius can differ in their last bits with what ran earlier
in the process (every enclosure stays rigorous).  Measured: ``hrf.eq37``'s quadrature error bar was
1.751698567995075e-46 alone and 1.751698567984322e-46 after ``simrf.eq22``, whose integrals warm the node
cache at a higher precision.  A memo cache of such a computation carries the same history from one claim to
the next.  :func:`rfcheck.verify.run_claim` therefore calls :func:`forget` before each claim: FLINT's caches
are freed and every cache made by :func:`cache` or :func:`lru` is emptied, so that a claim's numbers do not
depend on the claims that ran before it in the same worker, and ``rfcheck verify --claim ID`` reproduces the
ledger's entry exactly whatever ``--jobs`` and the scheduling order were.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["cache", "forget", "lru"]

_DICTS: list[dict[Any, Any]] = []
_LRUS: list[Any] = []


def cache() -> dict[Any, Any]:
    """A memo dictionary that :func:`forget` empties.

    Returns
    -------
    dict
        A new, empty dictionary, registered.

    Examples
    --------
    >>> c = cache()
    >>> c["k"] = 1
    >>> forget()
    >>> c
    {}
    """
    d: dict[Any, Any] = {}
    _DICTS.append(d)
    return d


def lru(maxsize: int) -> Callable[[Callable[..., Any]], Any]:
    """``functools.lru_cache(maxsize)``, registered so that :func:`forget` clears it.

    Parameters
    ----------
    maxsize : int
        At most this many results are kept.

    Returns
    -------
    callable
        The decorator.

    Examples
    --------
    >>> calls = []
    >>> @lru(4)
    ... def f(x):
    ...     calls.append(x)
    ...     return x * x
    >>> f(3), f(3), len(calls)
    (9, 9, 1)
    >>> forget()
    >>> f(3), len(calls)
    (9, 2)
    """
    def decorate(fn: Callable[..., Any]) -> Any:
        wrapped = functools.lru_cache(maxsize=maxsize)(fn)
        _LRUS.append(wrapped)
        return wrapped

    return decorate


def forget() -> None:
    """Free FLINT's process-wide caches (``flint.ctx.cleanup()``) and empty every registered memo cache.

    Existing balls stay valid; later computations start from the state of a fresh process.

    Examples
    --------
    >>> import flint
    >>> x = flint.arb.pi()
    >>> forget()
    >>> y = flint.arb.pi()  # computed again: the same ball, and x is intact
    >>> x.mid() == y.mid() and x.rad() == y.rad()
    True
    """
    import flint

    flint.ctx.cleanup()
    for d in _DICTS:
        d.clear()
    for f in _LRUS:
        f.cache_clear()

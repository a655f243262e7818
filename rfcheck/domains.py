"""Claim domains and the points a search visits: a grid with edges, random points, and
unit-cube coordinates for an optimiser that maximises a discrepancy.

Domains are searched, not sampled politely: grids include both ends of every range and
log-spaced levels over orders of magnitude, so extremes that a paper's own figures never
visited are tried.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Choice", "Domain", "Int", "Real"]

Point = dict[str, Any]


@dataclass(frozen=True)
class Real:
    """A real parameter in ``[lo, hi]``; ``scale="log"`` spaces levels geometrically.

    Parameters
    ----------
    lo, hi : float
        The range's ends, ``lo <= hi`` (both included in grids).
    scale : {"linear", "log"}, default "linear"
        How grid levels and random draws are spaced; ``"log"`` needs ``lo > 0``.
    extra : tuple of float, default ()
        Values added to every grid (and accepted as in the domain) besides the range.

    Raises
    ------
    ValueError
        If ``lo > hi``, or ``scale="log"`` with ``lo <= 0``.

    Examples
    --------
    >>> Real(0.0, 1.0).levels(3)
    [0.0, 0.5, 1.0]
    >>> Real(1.0, 100.0, "log").levels(3)
    [1.0, 10.0, 100.0]

    Draws and optimiser moves stay in the range (``exp(log 0.1 + (log 10 - log 0.1))`` rounds to
    ``10.000000000000007``):

    >>> Real(0.1, 10.0, "log").from_unit(1.0)
    10.0
    """

    lo: float
    hi: float
    scale: str = "linear"
    extra: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not self.lo <= self.hi:
            raise ValueError(f"Real needs lo <= hi; got [{self.lo}, {self.hi}]")
        if self.scale == "log" and self.lo <= 0:
            raise ValueError("a log-scaled Real needs lo > 0")

    def levels(self, k: int) -> list[float]:
        if self.lo == self.hi:
            return [self.lo]
        base = np.geomspace(self.lo, self.hi, k) if self.scale == "log" else np.linspace(self.lo, self.hi, k)
        return sorted({float(v) for v in base} | set(self.extra))

    def _clip(self, v: float) -> float:
        """``v`` in ``[lo, hi]``: the logarithms and products below may round past an end by ulps,
        and a point outside the range is not a point of the domain (``--at`` would refuse it)."""
        return min(max(float(v), self.lo), self.hi)

    def sample(self, rng: np.random.Generator) -> float:
        if self.scale == "log":
            return self._clip(math.exp(rng.uniform(math.log(self.lo), math.log(self.hi))))
        return self._clip(rng.uniform(self.lo, self.hi))

    def from_unit(self, t: float) -> float:
        t = min(max(t, 0.0), 1.0)
        if self.scale == "log":
            return self._clip(math.exp(math.log(self.lo) + t * (math.log(self.hi) - math.log(self.lo))))
        return self._clip(self.lo + t * (self.hi - self.lo))

    def contains(self, v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and (self.lo <= v <= self.hi or v in self.extra)

    def to_unit(self, v: float) -> float:
        if self.hi == self.lo:
            return 0.0
        if self.scale == "log":
            return (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        return (v - self.lo) / (self.hi - self.lo)


@dataclass(frozen=True)
class Int:
    """An integer parameter in ``[lo, hi]`` (log-spaced levels by default).

    Parameters
    ----------
    lo, hi : int
        The range's ends, ``lo <= hi`` (both included in grids).
    scale : {"log", "linear"}, default "log"
        How grid levels and random draws are spaced (log spacing needs ``lo > 0``, else the
        levels are linear).
    extra : tuple of int, default ()
        Values added to every grid (and accepted as in the domain) besides the range.

    Examples
    --------
    >>> Int(1, 64).levels(4)
    [1, 4, 16, 64]
    """

    lo: int
    hi: int
    scale: str = "log"
    extra: tuple[int, ...] = ()

    def levels(self, k: int) -> list[int]:
        if self.scale == "log" and self.lo > 0:
            base = np.geomspace(self.lo, self.hi, k)
        else:
            base = np.linspace(self.lo, self.hi, k)
        # round() of a NumPy float returns a NumPy float before NumPy 2.0 (numpy>=1.26 is supported)
        return sorted({int(round(v)) for v in base} | {self.lo, self.hi} | set(self.extra))  # noqa: RUF046

    def contains(self, v: Any) -> bool:
        is_int = isinstance(v, int | np.integer) and not isinstance(v, bool)
        return is_int and (self.lo <= v <= self.hi or v in self.extra)

    def sample(self, rng: np.random.Generator) -> int:
        if self.scale == "log" and self.lo > 0:
            return round(math.exp(rng.uniform(math.log(self.lo), math.log(self.hi + 0.5))))
        return int(rng.integers(self.lo, self.hi + 1))


@dataclass(frozen=True)
class Choice:
    """A parameter taking one of finitely many values.

    Parameters
    ----------
    values : tuple
        The values, each a grid level.

    Examples
    --------
    >>> Choice(("iid", "orf")).levels(5)
    ['iid', 'orf']
    """

    values: tuple[Any, ...]

    def levels(self, k: int) -> list[Any]:
        return list(self.values)

    def sample(self, rng: np.random.Generator) -> Any:
        return self.values[int(rng.integers(len(self.values)))]

    def contains(self, v: Any) -> bool:
        return v in self.values


def _describe(r: Real | Int | Choice) -> str:
    if isinstance(r, Choice):
        return f"one of {', '.join(map(repr, r.values))}"
    kind = "an integer" if isinstance(r, Int) else "a real number"
    extra = f" (or one of {', '.join(map(repr, r.extra))})" if r.extra else ""
    return f"{kind} in [{r.lo}, {r.hi}]{extra}"


@dataclass
class Domain:
    """A claim's stated domain: named parameters, an optional constraint, derived values.

    ``constraint(point) -> bool`` drops points outside the domain (e.g. ``M <= d``);
    ``derive(point) -> point`` may snap or complete a point (e.g. ``M = min(M, d)``).

    Parameters
    ----------
    params : dict of str to Real, Int or Choice
        The named parameters and their ranges.
    constraint : callable, optional
        ``constraint(point) -> bool``: points where it is false are dropped.
    derive : callable, optional
        ``derive(point) -> point``: applied to each point before ``constraint`` (may snap values
        or add derived ones).
    description : str, default ""
        The domain as the paper states it, for reports.
    fixed_points : list of dict, default []
        Points always visited first (e.g. the paper's own figure points).

    Examples
    --------
    >>> import numpy as np
    >>> dom = Domain({"d": Int(1, 4, "linear"), "s": Choice((-1, 1))})
    >>> len(dom.grid(2, 100, np.random.default_rng(0)))
    4
    >>> dom.check_point({"d": 9, "s": 1})
    Traceback (most recent call last):
    ...
    ValueError: d = 9 lies outside the domain: an integer in [1, 4]
    """

    params: dict[str, Real | Int | Choice]
    constraint: Callable[[Point], bool] | None = None
    derive: Callable[[Point], Point] | None = None
    description: str = ""
    fixed_points: list[Point] = field(default_factory=list)

    def _finish(self, pts: Iterable[Point]) -> list[Point]:
        out, seen = [], set()
        for p in pts:
            if self.derive is not None:
                p = self.derive(dict(p))
            if self.constraint is not None and not self.constraint(p):
                continue
            key = tuple(sorted((k, repr(v)) for k, v in p.items()))
            if key not in seen:
                seen.add(key)
                out.append(p)
        return out

    def check_point(self, p: Point) -> None:
        """Raise ``ValueError`` naming what makes ``p`` (a user-given point, e.g. ``--at``) not a
        point of this domain: a missing parameter, an unknown name (names that ``derive``
        adds are allowed), or a value outside a parameter's range.  A value out of range is
        accepted where ``derive`` makes it of the nearest in-range value (e.g. theta snapped
        to pi at d = 1), as points printed after ``derive`` are.
        """
        missing = [n for n in self.params if n not in p]
        if missing:
            raise ValueError(f"the point needs {', '.join(missing)} (domain parameters: {', '.join(self.params)})")
        known = set(self.params)
        if self.derive is not None:
            known |= set(self.derive({n: p[n] for n in self.params}))
        unknown = [n for n in p if n not in known]
        if unknown:
            raise ValueError(f"unknown parameter {', '.join(unknown)} (domain parameters: {', '.join(self.params)})")
        for n, r in self.params.items():
            if r.contains(p[n]) or self._derived_from_range(p, n, r):
                continue
            raise ValueError(f"{n} = {p[n]!r} lies outside the domain: {_describe(r)}")

    def _derived_from_range(self, p: Point, n: str, r: Real | Int | Choice) -> bool:
        if self.derive is None or isinstance(r, Choice) or not isinstance(p[n], int | float):
            return False
        q = dict(p)
        q[n] = type(r.lo)(min(max(p[n], r.lo), r.hi))
        try:
            return self.derive(q).get(n) == p[n]
        except (ValueError, TypeError, KeyError):
            return False

    def grid(self, levels: int, cap: int, rng: np.random.Generator) -> list[Point]:
        """Cartesian grid with ``levels`` per axis (ends included), subsampled to ``cap``.

        All ``2^k`` corners are kept first when they fit, then a random subset of the rest.
        """
        names = list(self.params)
        axes = [self.params[n].levels(levels) for n in names]
        corners = [dict(zip(names, c, strict=True)) for c in itertools.product(*[[a[0], a[-1]] for a in axes])]
        if len(corners) > cap:
            keep = rng.choice(len(corners), size=cap, replace=False)
            corners = [corners[i] for i in sorted(keep)]
        full = [dict(zip(names, c, strict=True)) for c in itertools.product(*axes)]
        if len(full) > cap:
            idx = rng.choice(len(full), size=cap, replace=False)
            full = [full[i] for i in sorted(idx)]
        return self._finish(list(self.fixed_points) + corners[:cap] + full)[: max(cap, len(self.fixed_points))]

    def random(self, n: int, rng: np.random.Generator) -> list[Point]:
        """``n`` points drawn independently (log-uniform on log-scaled axes)."""
        pts = [{k: p.sample(rng) for k, p in self.params.items()} for _ in range(n)]
        return self._finish(pts)

    def continuous(self) -> list[str]:
        """Names of the real-valued parameters an optimiser may move."""
        return [k for k, p in self.params.items() if isinstance(p, Real) and p.lo < p.hi]

    def from_unit(self, base: Point, names: list[str], t: np.ndarray) -> Point | None:
        """The point ``base`` with ``names`` set from unit-cube coordinates ``t``."""
        p = dict(base)
        for n, ti in zip(names, t, strict=True):
            p[n] = self.params[n].from_unit(float(ti))  # type: ignore[union-attr]
        got = self._finish([p])
        return got[0] if got else None

    def to_unit(self, point: Point, names: list[str]) -> np.ndarray:
        return np.array([self.params[n].to_unit(point[n]) for n in names])  # type: ignore[union-attr]

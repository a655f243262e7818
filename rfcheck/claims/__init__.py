"""The claim ledger: statements exactly as printed, their domains and their references.

A :class:`Claim` binds a printed statement (transcribed verbatim, under the paper's own
equation number) to one or more :class:`Check` s -- independent reference computations
ordered by strength (1: high-precision deterministic, 2: symbolic, 3: Monte Carlo).
Verdicts are never written here: ``rfcheck.verify`` computes them.

Claim ids follow ``<paper>.<kind><number>[.<part>]`` (``crt.thm3.2``, ``crt.eq22``,
``crt.text-e60``); see ``../shared/DESIGN.md``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rfcheck.domains import Domain
from rfcheck.stats import PointEval

__all__ = [
    "BUDGETS",
    "PAPERS",
    "REGISTRY",
    "Budget",
    "Check",
    "Claim",
    "get",
    "load_all",
    "register",
]

PAPERS = {
    "crt": "000 Chefs' Random Tables (Likhosherstov et al., NeurIPS 2022)",
    "darkformer": "001 DARKFormer",
    "rfa": "002 Random Feature Attention (Peng et al., ICLR 2021)",
    "simrf": "003 Simplex Random Features (Reid et al., ICML 2023)",
    "hrf": "004 Hybrid Random Features (Choromanski et al., ICLR 2022)",
}
_ID = re.compile(r"^(crt|darkformer|rfa|simrf|hrf)\.(thm|lem|cor|prop|def|eq|fig|tab|text|alg)[a-z0-9.\-]*$")


@dataclass(frozen=True)
class Budget:
    """How hard a verification works: search sizes, Monte Carlo trials, precision."""

    name: str
    grid_levels: int
    grid_cap: int
    n_random: int
    opt_evals: int
    mc_points: int
    mc_trials: int
    dps: int
    alpha: float = 1e-3  # family-wise false-alarm level of each Monte Carlo check

    def key(self) -> str:
        return (
            f"{self.name}:{self.grid_levels}:{self.grid_cap}:{self.n_random}:{self.opt_evals}:"
            f"{self.mc_points}:{self.mc_trials}:{self.dps}:{self.alpha}"
        )


BUDGETS = {
    "smoke": Budget("smoke", 2, 8, 2, 0, 1, 20_000, 20),
    "default": Budget("default", 3, 24, 8, 30, 3, 200_000, 30),
    "thorough": Budget("thorough", 4, 120, 40, 200, 8, 2_000_000, 50),
}


@dataclass
class Check:
    """One reference computation for a claim.

    ``evaluate(point, budget, seed) -> PointEval``.  ``strength``: 1 deterministic
    high-precision, 2 symbolic, 3 Monte Carlo.  ``search``: whether the optimiser may
    climb the discrepancy with this check (deterministic checks only); ``max_points``
    caps the points per run (expensive references).
    """

    name: str
    strength: int
    evaluate: Callable[[dict[str, Any], Budget, int], PointEval]
    search: bool = True
    max_points: int | None = None
    description: str = ""
    domain: Domain | None = None  # a sub-domain where this reference has power (stated in reports)


@dataclass
class Claim:
    """A statement exactly as printed, its domain and its checks."""

    id: str
    paper: str
    source: str
    statement: str
    domain: Domain
    checks: list[Check] = field(default_factory=list)
    correction: str | None = None
    notes: str = ""
    unverifiable: str | None = None  # reason a claim can only be INCONCLUSIVE

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(f"claim id {self.id!r} does not follow <paper>.<kind><number>")
        if self.paper not in PAPERS or not self.id.startswith(self.paper + "."):
            raise ValueError(f"claim {self.id!r}: paper must be its id prefix, one of {sorted(PAPERS)}")
        if not self.checks and not self.unverifiable:
            raise ValueError(f"claim {self.id!r} has no check and no reason why")


REGISTRY: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add ``claim`` to the ledger (ids are unique)."""
    if claim.id in REGISTRY:
        raise ValueError(f"duplicate claim id {claim.id!r}")
    REGISTRY[claim.id] = claim
    return claim


def _paper_modules() -> list[str]:
    """The claim modules present: one per paper, named by its id (``crt.py``, ``hrf.py``), and
    ``attention.py`` (printed results restated at attention scale, several papers)."""
    import pkgutil

    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name in PAPERS or m.name == "attention")


def load_all() -> dict[str, Claim]:
    """Import every paper's claim module and return the registry."""
    for mod in _paper_modules():
        importlib.import_module(f"rfcheck.claims.{mod}")
    return REGISTRY


def get(claim_id: str) -> Claim:
    """The registered claim ``claim_id`` (``ValueError`` naming near misses otherwise)."""
    load_all()
    if claim_id not in REGISTRY:
        near = [k for k in REGISTRY if k.startswith(claim_id.split(".")[0] + ".")][:8]
        hint = f"did you mean one of {', '.join(near)}?" if near else "`rfcheck list` shows the registered ids"
        raise ValueError(f"unknown claim id {claim_id!r}; {hint}")
    return REGISTRY[claim_id]

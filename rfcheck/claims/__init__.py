"""The claim ledger: statements exactly as printed, their domains and their references.

A :class:`Claim` binds a printed statement (transcribed verbatim, under the paper's own
equation number) to one or more :class:`Check` s -- independent reference computations
ordered by strength (1: high-precision deterministic, 2: symbolic, 3: Monte Carlo).
Verdicts are never written here: ``rfcheck.verify`` computes them.

Claim ids follow ``<paper>.<kind><number>[.<part>]`` (``crt.thm3.2``, ``crt.eq22``,
``crt.text-e60``); papers are declared with ``register_paper``.
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
    "EXTRAS",
    "PAPERS",
    "PAPER_SOURCES",
    "REGISTRY",
    "Budget",
    "Check",
    "Claim",
    "Reading",
    "get",
    "load_all",
    "load_claims",
    "missing_extras",
    "mpmath_rtol",
    "needs_reason",
    "recheck_rounding",
    "register",
    "register_paper",
    "source_digest",
]

#: the declared papers, ``id -> title``: the five built-in ones, and those added by
#: :func:`register_paper` (``rfcheck.ledger.paper``)
PAPERS = {
    "crt": "Chefs' Random Tables (Likhosherstov et al., NeurIPS 2022)",
    "darkformer": "DARKFormer: Data-Aware Random Feature Kernel for Transformers (Farzam et al.)",
    "rfa": "Random Feature Attention (Peng et al., ICLR 2021)",
    "simrf": "Simplex Random Features (Reid et al., ICML 2023)",
    "hrf": "Hybrid Random Features (Choromanski et al., ICLR 2022)",
}
#: the source line of each built-in paper: the prefix of its claims' ``source`` (``rfcheck.ledger.Paper.at``)
PAPER_SOURCES = {
    "crt": "Chefs' Random Tables",
    "darkformer": "DARKFormer",
    "rfa": "Random Feature Attention (summary)",
    "simrf": "Simplex Random Features",
    "hrf": "Hybrid Random Features",
}
#: the kinds of a claim id, ``<paper>.<kind><number>[.<part>]``
KINDS = ("thm", "lem", "cor", "prop", "def", "eq", "fig", "tab", "text", "alg")
_ID = re.compile(r"^([a-z][a-z0-9_]*)\.(" + "|".join(KINDS) + r")[a-z0-9.\-]*$")
_PAPER_ID = re.compile(r"^[a-z][a-z0-9_]*$")

#: where each registered claim was loaded from (a claims file or module; None: built in)
ORIGINS: dict[str, str] = {}


def register_paper(paper_id: str, title: str, citation: str = "") -> str:
    """Declare a paper whose claims will be registered (``rfcheck.ledger.paper``).

    ``paper_id`` is the prefix of its claim ids: lower case letters, digits and ``_``,
    starting with a letter (``"mypaper"`` -> claims ``mypaper.thm2.1``, ``mypaper.eq7``).
    Declaring the same id again with the same title is a no-op; with another title a
    ``ValueError``.

    Parameters
    ----------
    paper_id : str
        The paper's id (the prefix of its claim ids).
    title : str
        The paper's title.
    citation : str, default ""
        Authors, venue, year; stored as ``"title (citation)"`` in :data:`PAPERS`.

    Returns
    -------
    str
        ``paper_id``.

    Raises
    ------
    ValueError
        If ``paper_id`` is not a string of lower case letters, digits and ``_`` starting with
        a letter, or is declared already with another title (or citation).

    Examples
    --------
    >>> register_paper("doctest_claims_paper", "A title"), PAPERS["doctest_claims_paper"]
    ('doctest_claims_paper', 'A title')
    >>> register_paper("doctest_claims_paper", "Another title")
    Traceback (most recent call last):
    ...
    ValueError: paper 'doctest_claims_paper' is already declared as 'A title'
    """
    if not isinstance(paper_id, str) or not _PAPER_ID.match(paper_id):
        raise ValueError(f"paper id {paper_id!r} must be lower case letters, digits or _, starting with a letter")
    full = f"{title} ({citation})" if citation else title
    if paper_id in PAPERS and PAPERS[paper_id] != full:
        raise ValueError(f"paper {paper_id!r} is already declared as {PAPERS[paper_id]!r}")
    PAPERS[paper_id] = full
    return paper_id


#: optional extras of the package -> the module each one provides (``pip install 'rfcheck[jax]'``)
EXTRAS = {"jax": "jax", "dask": "distributed", "data": "sklearn"}


def missing_extras(requires: tuple[str, ...] | list[str]) -> list[str]:
    """The extras among ``requires`` whose module cannot be found in this environment.

    Looked up with :func:`importlib.util.find_spec` (nothing is imported).  ``ValueError``
    for a name that is not an extra of the package (a registration mistake).

    Parameters
    ----------
    requires : tuple or list of str
        Names of extras, keys of :data:`EXTRAS` (``"jax"``, ``"dask"``, ``"data"``).

    Returns
    -------
    list of str
        The missing ones, in the order of ``requires`` (empty: all present).

    Raises
    ------
    ValueError
        If a name is not a key of :data:`EXTRAS`.

    Examples
    --------
    >>> missing_extras(())
    []
    >>> missing_extras(["numpy"])
    Traceback (most recent call last):
    ...
    ValueError: unknown extra 'numpy'; the extras are ['dask', 'data', 'jax']
    """
    import importlib.util

    out = []
    for extra in requires:
        if extra not in EXTRAS:
            raise ValueError(f"unknown extra {extra!r}; the extras are {sorted(EXTRAS)}")
        if importlib.util.find_spec(EXTRAS[extra]) is None:
            out.append(extra)
    return out


def needs_reason(extras: list[str]) -> str:
    """The reason given for a check or claim skipped for missing extras.

    Parameters
    ----------
    extras : list of str
        The missing extras (:func:`missing_extras`).

    Returns
    -------
    str
        The reason, with the install command.

    Examples
    --------
    >>> needs_reason(["jax"])
    "needs rfcheck[jax] (pip install 'rfcheck[jax]')"
    """
    spec = ",".join(extras)
    return f"needs rfcheck[{spec}] (pip install 'rfcheck[{spec}]')"


@dataclass(frozen=True)
class Budget:
    """How hard a verification works: search sizes, Monte Carlo trials, precision.

    Parameters
    ----------
    name : str
        The budget's name (``--budget``; a key of :data:`BUDGETS` for the built-in ones).
    grid_levels : int
        Levels per parameter of the grid search.
    grid_cap : int
        At most this many grid points.
    n_random : int
        Random points drawn from the domain.
    opt_evals : int
        Evaluations of the optimiser that climbs the discrepancy (0: no optimiser).
    mc_points : int
        Points at which a Monte Carlo check runs.
    mc_trials : int
        Monte Carlo trials per point.
    dps : int
        mpmath working precision of the references, in decimal digits.
    alpha : float, default 1e-3
        Family-wise false-alarm level of each Monte Carlo check.

    Examples
    --------
    >>> BUDGETS["smoke"].dps, BUDGETS["default"].mc_trials
    (20, 200000)
    """

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

    @property
    def rtol(self) -> float:
        """The relative tolerance of a deterministic comparison at this budget's precision,
        :func:`mpmath_rtol` of ``dps``.

        Examples
        --------
        >>> BUDGETS["default"].rtol
        1e-25
        """
        return mpmath_rtol(self.dps)


def mpmath_rtol(dps: int) -> float:
    """The relative tolerance of a deterministic comparison between values computed with mpmath at
    ``dps`` decimal digits: ``10^(5 - dps)``, five of the working digits set aside for the rounding
    of the computation (every mpmath check of the built-in claims and of :mod:`rfcheck.ledger`
    uses it).

    Parameters
    ----------
    dps : int
        The working precision, in decimal digits.

    Returns
    -------
    float
        ``10.0 ** (5 - dps)``.

    Examples
    --------
    >>> mpmath_rtol(30), mpmath_rtol(50)
    (1e-25, 1e-45)
    """
    return 10.0 ** (5 - dps)


#: :func:`recheck_rounding` raises the printed side's precision at most this many times (doubling)
MAX_RECHECKS = 4


def recheck_rounding(ev: PointEval, value: Any, evaluate: Callable[[int], Any], compare: Callable[[Any], PointEval],
                     dps: int, tol: Any) -> PointEval:
    """A decided violation of a deterministic comparison, re-decided where the printed side's own
    evaluation at ``dps`` digits is not accurate to the comparison's tolerance.

    :func:`mpmath_rtol` sets five of the working digits aside for the printed formula's rounding; a
    formula that cancels more (``(sqrt(a^2 + e) - a) / e`` at small ``e``) can then look refuted at
    ``dps`` digits while it is right -- and an optimiser that maximises the discrepancy climbs
    towards exactly such points.  Every refutation is therefore checked: the printed side
    (``evaluate(prec)``, at ``prec`` digits) is evaluated again at ``dps + 15`` digits, and the
    difference ``delta`` of the two estimates its rounding.  The violation stands as computed,
    number for number, when ``delta <= tol / 10`` (a tenth of the comparison's tolerance ``tol``,
    the denominator of its ``disc``) or when ``10 delta`` cannot explain it (``disc tol - 10 delta >
    tol``).  Otherwise the precision is doubled (at most :data:`MAX_RECHECKS` times) until two
    evaluations 15 digits apart agree to ``tol / 10``, and the point is compared again with the
    accurate value (``compare(value)``), its note saying so; if they never agree the point is
    undecided.  A point that is not a violation is not re-evaluated.

    Parameters
    ----------
    ev : PointEval
        The point as first compared, ``compare(value)``.
    value : number or tuple
        The printed side as evaluated at ``dps`` digits (a number, or a tuple of numbers for a
        comparison of two printed sides).
    evaluate : callable
        ``evaluate(prec)``: the printed side at ``prec`` decimal digits (``evaluate(dps)`` is ``value``).
    compare : callable
        ``compare(value)``: the point compared again with another value of the printed side.
    dps : int
        The comparison's working precision.
    tol : number
        The comparison's tolerance (the denominator of its ``disc``), > 0.

    Returns
    -------
    PointEval
        ``ev`` itself, or the point compared with the accurate printed value (or undecided).

    Examples
    --------
    ``1 - cos(t)`` at ``t = 1e-14`` cancels 28 digits: at 30 digits it is refuted against
    ``2 sin(t/2)^2``, at 60 it agrees.

    >>> import mpmath
    >>> from rfcheck.stats import compare_deterministic
    >>> def side(prec):
    ...     with mpmath.workdps(prec):
    ...         return 1 - mpmath.cos(mpmath.mpf("1e-14"))
    >>> with mpmath.workdps(40):
    ...     ref = 2 * mpmath.sin(mpmath.mpf("1e-14") / 2) ** 2
    >>> cmp = lambda v: compare_deterministic({}, v, ref, 0, rtol=mpmath_rtol(30))
    >>> v30 = side(30)
    >>> first = cmp(v30)
    >>> first.disc > 1, recheck_rounding(first, v30, side, cmp, 30, mpmath_rtol(30) * ref).disc <= 1
    (True, True)
    """
    import mpmath

    if not (ev.decided and ev.disc > 1):
        return ev

    def spread(a: Any, b: Any) -> Any:
        a, b = (v if isinstance(v, tuple) else (v,) for v in (a, b))
        return max(abs(mpmath.mpmathify(x) - mpmath.mpmathify(y)) for x, y in zip(a, b, strict=True))

    tol = mpmath.mpmathify(tol)
    if not tol > 0:
        return ev
    prec = dps
    low, high = value, evaluate(prec + 15)
    with mpmath.workdps(prec + 15):
        delta = spread(low, high)
        if delta <= tol / 10 or ev.disc * tol - 10 * delta > tol:
            return ev  # accurate to a tenth of the tolerance, or a violation its rounding cannot explain
    for _ in range(MAX_RECHECKS):
        prec *= 2
        low, high = evaluate(prec), evaluate(prec + 15)
        with mpmath.workdps(prec + 15):
            accurate = spread(low, high) <= tol / 10
        if accurate:
            out = compare(high)
            out.note = (out.note + "; " if out.note else "") + (
                f"the printed side re-evaluated at {prec + 15} digits (at {dps} its rounding could explain "
                f"the discrepancy)")
            return out
    return PointEval(ev.point, ev.printed, ev.reference, ev.err, float("nan"), False,
                     f"the printed side's evaluation does not settle up to {prec} digits (cancellation)",
                     ev.extra, ev.index)


#: the built-in budgets by name (``rfcheck verify --budget smoke|default|thorough``)
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
    caps the points per run (expensive references); ``requires``: the optional extras the
    reference needs (e.g. ``("jax",)``) -- where one is missing the check is not run and is
    INCONCLUSIVE with the reason "needs rfcheck[jax]".

    Parameters
    ----------
    name : str
        The check's name in reports (``"quadrature"``, ``"closed-form"``).
    strength : int
        1 deterministic high-precision, 2 symbolic, 3 Monte Carlo (the lowest decided
        strength decides the claim).
    evaluate : callable
        ``evaluate(point, budget, seed) -> PointEval``.
    search : bool, default True
        Whether the optimiser may climb the discrepancy with this check.
    max_points : int, optional
        At most this many points per run (default: the budget's).
    description : str, default ""
        How the reference is computed, for reports.
    domain : Domain, optional
        A sub-domain where this reference has power, stated in reports (default: the claim's).
    requires : tuple of str, default ()
        Optional extras (keys of :data:`EXTRAS`) the reference needs.
    labels : (str, str), default ("printed", "reference")
        What the two values of a point are called in reports.
    """

    name: str
    strength: int
    evaluate: Callable[[dict[str, Any], Budget, int], PointEval]
    search: bool = True
    max_points: int | None = None
    description: str = ""
    domain: Domain | None = None  # a sub-domain where this reference has power (stated in reports)
    requires: tuple[str, ...] = ()  # optional extras (keys of EXTRAS) the reference needs
    #: what the two values of a point are called in reports: an inequality's are ("rhs", "lhs")
    labels: tuple[str, str] = ("printed", "reference")


@dataclass
class Reading:
    """One reasonable reading of an ambiguous printed statement, with its own checks.

    ``name``: short (``"literal"``, ``"bilinear"``); ``description``: which notation is read
    how, or which transcription artefact is repaired; ``natural``: the reading a careful
    reader takes (exactly one per claim), with ``reason`` in one line.  Each reading gets its
    own verdict; the claim's verdict distinguishes REFUTED under every reading from MIXED
    (refuted under some, holds under another, named) -- see ``rfcheck.verify``.

    Parameters
    ----------
    name : str
        Short name of the reading.
    checks : list of Check
        The reading's checks.
    description : str, default ""
        Which notation is read how.
    natural : bool, default False
        Whether this is the natural reading (exactly one per claim).
    reason : str, default ""
        Why the reading is (or is not) natural, in one line; required of the natural one.
    correction : str, optional
        The corrected statement under this reading, reported when it is refuted.
    unverifiable : str, optional
        Why this reading cannot be checked (e.g. ill-formed as printed); then ``checks`` may
        be empty.
    """

    name: str
    checks: list[Check]
    description: str = ""
    natural: bool = False
    reason: str = ""
    correction: str | None = None
    unverifiable: str | None = None  # why this reading cannot be checked (e.g. ill-formed as printed)


@dataclass
class Claim:
    """A statement exactly as printed, its domain and its checks (or its readings).

    Parameters
    ----------
    id : str
        ``<paper>.<kind><number>[.<part>]``, a kind of ``KINDS`` (``"crt.eq33"``).
    paper : str, default ""
        The paper's id (default: the id's prefix); must be declared (:func:`register_paper`).
    source : str, default ""
        Where in the paper the claim is printed.
    statement : str, default ""
        The claim as printed.
    domain : Domain
        Where the claim is stated (required, despite the ``None`` default).
    checks : list of Check, default []
        The independent references (empty with ``readings`` or ``unverifiable``).
    correction : str, optional
        The corrected statement, reported when the claim is refuted.
    notes : str, default ""
        Notes for reports.
    unverifiable : str, optional
        Why the claim can only be INCONCLUSIVE.
    readings : list of Reading, default []
        For ambiguous notation: one :class:`Reading` per reasonable reading, each with its checks.

    Raises
    ------
    ValueError
        If the id does not follow ``<paper>.<kind><number>``, the paper is not declared or is
        not the id's prefix, ``domain`` is ``None``, ``checks`` are given together with
        ``readings``, or there is neither a check, a reading nor an ``unverifiable`` reason.

    Examples
    --------
    >>> Claim(id="crt.7")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: claim id 'crt.7' does not follow <paper>.<kind><number> with kind one of thm, lem, ...
    """

    id: str
    paper: str = ""  # derived from the id when empty
    source: str = ""
    statement: str = ""
    domain: Domain | None = None
    checks: list[Check] = field(default_factory=list)
    correction: str | None = None
    notes: str = ""
    unverifiable: str | None = None  # reason a claim can only be INCONCLUSIVE
    readings: list[Reading] = field(default_factory=list)  # ambiguous notation: each reading checked

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(f"claim id {self.id!r} does not follow <paper>.<kind><number> with kind one of "
                             f"{', '.join(KINDS)}")
        self.paper = self.paper or self.id.split(".")[0]
        if self.paper not in PAPERS or not self.id.startswith(self.paper + "."):
            raise ValueError(f"claim {self.id!r}: paper must be its id prefix and declared (register_paper); "
                             f"declared: {sorted(PAPERS)}")
        if self.domain is None:
            raise ValueError(f"claim {self.id!r} needs a domain")
        if self.readings:
            if self.checks:
                raise ValueError(f"claim {self.id!r}: with readings, the checks belong to the readings")
        elif not self.checks and not self.unverifiable:
            raise ValueError(f"claim {self.id!r} has no check and no reason why")


    def check_readings(self) -> None:
        """``ValueError`` unless the readings are complete: distinct names, every reading with
        checks, exactly one natural reading with its reason (called before verification, so
        that readings may be added one at a time)."""
        names = [r.name for r in self.readings]
        if len(set(names)) != len(names) or sum(r.natural for r in self.readings) != 1:
            raise ValueError(f"claim {self.id!r}: readings need distinct names and exactly one natural reading; "
                             f"got {names} with natural {[r.name for r in self.readings if r.natural]}")
        if any(not r.checks and not r.unverifiable for r in self.readings) or not all(
                r.reason for r in self.readings if r.natural):
            raise ValueError(f"claim {self.id!r}: every reading needs checks (or the reason it cannot be checked), "
                             "the natural one a reason")


#: every registered claim, ``id -> Claim``: filled by :func:`register` (the claim modules register
#: theirs on import, :func:`load_all` imports them)
REGISTRY: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add ``claim`` to the ledger (ids are unique).

    Parameters
    ----------
    claim : Claim
        The claim to register.

    Returns
    -------
    Claim
        ``claim``.

    Raises
    ------
    ValueError
        If a claim with the same id is registered already.
    """
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
    """Import every paper's claim module and return the registry.

    Returns
    -------
    dict
        :data:`REGISTRY`, ``{claim id: Claim}``: the built-in claims and those of packs loaded
        in this process.

    Examples
    --------
    >>> reg = load_all()
    >>> "crt.eq33" in reg, reg["crt.eq33"].paper
    (True, 'crt')
    """
    for mod in _paper_modules():
        importlib.import_module(f"rfcheck.claims.{mod}")
    return REGISTRY


def get(claim_id: str) -> Claim:
    """The registered claim ``claim_id`` (``ValueError`` naming near misses otherwise).

    Parameters
    ----------
    claim_id : str
        The claim's id (``"crt.eq33"``); the built-in claims are loaded first.

    Returns
    -------
    Claim
        The registered claim.

    Raises
    ------
    ValueError
        If no claim ``claim_id`` is registered.

    Examples
    --------
    >>> get("crt.eq33").id
    'crt.eq33'
    """
    load_all()
    if claim_id not in REGISTRY:
        import difflib

        near = difflib.get_close_matches(claim_id, list(REGISTRY), n=3, cutoff=0.75)
        hint = f"did you mean {' or '.join(near)}?" if near else "`rfcheck list` shows the registered ids"
        raise ValueError(f"unknown claim id {claim_id!r}; {hint}")
    return REGISTRY[claim_id]


#: claims packs loaded in this process: source -> (ids registered, digest of the source text)
_LOADED: dict[str, tuple[list[str], str]] = {}
ENTRY_POINT_GROUP = "rfcheck.claims"


def _digest(path: str | None) -> str:
    import hashlib

    if path is None:
        return "nosource"
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def load_claims(source: str) -> list[str]:
    """Load a claims pack and return the ids it registered.

    ``source`` is a Python file (``mypaper_claims.py``), an importable module
    (``mylab.claims``) or the name of an installed pack, i.e. an entry point of the group
    ``rfcheck.claims`` whose value is the module (``[project.entry-points."rfcheck.claims"]
    mypaper = "mylab.claims"``).  Importing the module declares its paper and registers its
    claims (:mod:`rfcheck.ledger`).  Loading the same source again is a no-op.  Each claim
    records where it came from (:data:`ORIGINS`), so that reproduce commands, worker
    processes and the verdict cache (keyed by the source's text) find it again.

    Parameters
    ----------
    source : str
        A path ending in ``.py`` or containing a path separator (a file), else a module name
        or an installed pack's entry point name.

    Returns
    -------
    list of str
        The claim ids the pack registered (the same list when it was loaded already).

    Raises
    ------
    ValueError
        If the file does not exist, the name is neither an importable module nor an installed
        pack, or importing it registered no claim.
    """
    import hashlib
    import os
    import sys
    from importlib import import_module, util
    from importlib.metadata import entry_points

    is_file = source.endswith(".py") or os.path.sep in source
    key = os.path.realpath(source) if is_file else source  # one file under two spellings is one pack
    if key in _LOADED:
        return _LOADED[key][0]
    load_all()  # built-in ids first: a pack's claims must not collide with them
    before = set(REGISTRY)
    if is_file:
        path = os.path.abspath(source)
        if not os.path.isfile(path):
            raise ValueError(f"--claims {source}: no such file")
        name = "rfcheck_claims_" + hashlib.sha256(path.encode()).hexdigest()[:12]
        spec = util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        file = path
    else:
        eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        try:
            module = eps[source].load() if source in eps else import_module(source)
        except ModuleNotFoundError as exc:
            raise ValueError(f"--claims {source}: not a file, an importable module or an installed claims pack "
                             f"(entry points {ENTRY_POINT_GROUP!r}: {sorted(eps) or 'none'}): {exc}") from None
        file = getattr(module, "__file__", None)
    ids = [c for c in REGISTRY if c not in before]
    if not ids:
        raise ValueError(f"--claims {source}: registered no claim")
    for cid in ids:
        ORIGINS[cid] = source
    _LOADED[key] = (ids, _digest(file))
    return ids


def source_digest(claim_id: str) -> str:
    """A digest of the text of the pack that declared ``claim_id`` ("" for a built-in claim,
    whose code is part of the package version).

    Parameters
    ----------
    claim_id : str
        The claim's id.

    Returns
    -------
    str
        16 hex digits of the SHA-256 of the pack's source file (``"nosource"`` for a module
        without one), or ``""``.

    Examples
    --------
    >>> source_digest("crt.eq33")
    ''
    """
    import os

    src = ORIGINS.get(claim_id)
    if src is None:
        return ""
    key = os.path.realpath(src) if src.endswith(".py") or os.path.sep in src else src
    return _LOADED[key][1] if key in _LOADED else ""

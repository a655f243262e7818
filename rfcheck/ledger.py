"""Verify your own paper: declare a paper and its claims, then run them like the built-in ledger.

A claims file (``mypaper_claims.py``) declares its paper and one claim per printed result::

    from rfcheck.ledger import Domain, Real, Int, paper

    P = paper("mypaper", "My random features", citation="arXiv:2601.00001")
    P.equality("eq7", source="Lemma 2, eq (7)", statement="E[k_hat^2] = 2 k^2 - ...",
               printed=lambda ctx, p: 2 * ctx.exp(p["t"]) - 1,      # transcribed as printed
               reference=lambda p, dps: my_quadrature(p, dps),      # independent: (value, error)
               domain=Domain({"t": Real(0.0, 3.0)}))

and ``rfcheck verify --claims mypaper_claims.py [--report DIR] [--jobs N]`` gives the same
table, reports, plots, domain search and ``--at`` reproduction as the built-in papers (a file,
an importable module, or an installed pack: an entry point of the group ``rfcheck.claims``).

Printed formulas are written against a number-system context ``ctx`` (``ctx.exp``,
``ctx.log``, ``ctx.sqrt``, ``ctx.gamma``, ``ctx.pi``, ...; :mod:`rfcheck.backends`) and evaluated, by
default, in mpmath at the budget's precision (``precision="mpmath"``; rounding tolerance
``10^(5 - dps)`` relative; the point's real and complex parameters arrive as mpmath numbers,
integers stay ``int`` -- write ``ctx.num(1) / 3``, not ``1 / 3``, for a constant), or in
float64 (``precision="float64"``: numpy floats, tolerance :data:`FLOAT64_RTOL` relative) for
a formula that only exists as float code.  The report states which.

Claim kinds (each declares one :class:`rfcheck.claims.Claim` with one or more checks):

* :meth:`Paper.equality` -- printed value = reference value;
* :meth:`Paper.bound` -- ``lhs <= rhs`` (or ``>=``) over the domain: the largest violation,
  and where it holds the slack (a negative discrepancy, in tolerances: ``-1`` means tight);
* :meth:`Paper.optimum` -- a printed argmin/argmax or optimal value against bounded
  numerical optimisation of the objective;
* :meth:`Paper.variance` -- a printed variance/MSE against Monte Carlo of an estimator
  (z-test at the family-wise level of the budget; heavy tails give INCONCLUSIVE);
* :meth:`Paper.ordering` -- ``MSE(A) <= MSE(B)`` of two estimators, by closed forms and/or
  paired Monte Carlo with common random numbers (one-sided z-test on the per-trial
  differences of squared errors);
* limits are equalities over a domain that reaches far along the parameter;
* :meth:`Paper.claim` -- any claim from :class:`~rfcheck.claims.Check` s (several references on one claim, a
  bespoke comparison such as a count of operations or a Monte Carlo test, per-check
  sub-domains, extras such as JAX through ``Check(requires=...)``) or from
  :class:`~rfcheck.claims.Reading` s; :func:`check_equal` builds the check behind :meth:`Paper.equality`
  for use among them.

The built-in papers are declared through the same API: ``paper("rfa")`` (no title) returns
a paper declared already, and :meth:`Paper.at` writes a claim's source under the paper's
own source line (``P.at("Lemma 2.1")`` -> ``"DARKFormer, Lemma 2.1"``).

Verdicts are computed, never declared; :func:`assert_verdict` runs a claim inside a test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

from rfcheck.backends import FP, MP
from rfcheck.claims import (
    PAPER_SOURCES,
    PAPERS,
    REGISTRY,
    Budget,
    Check,
    Claim,
    Reading,
    get,
    mpmath_rtol,
    recheck_rounding,
    register,
    register_paper,
)
from rfcheck.claims._common import (
    _ctx_ball,
    certify_equal,
    certify_with_balls,
    deterministic_check,
    eval_on_balls,
    inequality_check,
    mc_check,
    mp_point,
    not_certifiable,
    on_mp,
    pair_domain,
    pair_vectors,
    raw_number,
    raw_point,
    stats_fp,
    stats_mp,
)
from rfcheck.claims._common import certify_eval as _certify
from rfcheck.claims._common import eval_on_balls as _ball
from rfcheck.claims._common import mp_point as _mp_point
from rfcheck.domains import Choice, Domain, Int, Real
from rfcheck.stats import PointEval, compare_deterministic, compare_inequality

__all__ = [
    "FLOAT64_RTOL",
    "Budget",
    "Check",
    "Choice",
    "Domain",
    "Int",
    "Paper",
    "PointEval",
    "Reading",
    "Real",
    "assert_verdict",
    "certify_equal",
    "certify_with_balls",
    "check_equal",
    "claim_tests",
    "deterministic_check",
    "eval_on_balls",
    "inequality_check",
    "latex",
    "mc_check",
    "mp_point",
    "mpmath_rtol",
    "not_certifiable",
    "on_mp",
    "pair_domain",
    "pair_stats",
    "pair_stats_fp",
    "pair_vectors",
    "paper",
    "raw_number",
    "raw_point",
]

#: relative rounding tolerance of a printed formula evaluated in float64 (64 ulps: a formula of
#: a few dozen well-conditioned operations)
FLOAT64_RTOL = 64 * float(np.finfo(np.float64).eps)

Point = dict[str, Any]
Printed = Callable[[Any, Point], Any]
pair_stats = stats_mp
pair_stats_fp = stats_fp


def latex(text: str, symbols: dict[str, str] | None = None) -> Printed:
    """A printed formula pasted as LaTeX, parsed by sympy, usable wherever a ``printed`` is.

    Parameters
    ----------
    text : str
        The formula as printed, e.g. ``r"\\frac{1}{2}\\left(1 + e^{-2x^2}\\right) - e^{-x^2}"``.
    symbols : dict, optional
        LaTeX fragments -> names of the point's parameters, for notation sympy's parser does
        not read as one symbol (``{r"\\|x+y\\|": "nsum", r"\\sigma_x": "sx"}``).  Single
        letters need no entry; ``e`` and ``\\pi`` are the constants unless bound here.

    Returns
    -------
    callable
        ``printed(ctx, p)``: the parsed expression evaluated at the point's parameters, in
        mpmath at the working precision or in float64 (``ctx`` chooses); its attributes
        ``latex`` (the text as printed) and ``expr`` (the sympy expression) appear in reports.

    Raises
    ------
    ValueError
        When sympy cannot parse the text (the message shows where).
    """
    import sympy
    from sympy.parsing.latex import LaTeXParsingError, parse_latex

    src, names = text, {}
    for k, (frag, name) in enumerate(sorted((symbols or {}).items(), key=lambda kv: -len(kv[0]))):
        src = src.replace(frag, f" Q_{{{k}}} ")
        names[f"Q_{{{k}}}"] = name
    try:
        expr = parse_latex(src)
    except LaTeXParsingError as exc:
        raise ValueError(f"cannot parse the LaTeX {text!r}: {exc}") from None
    bound = set((symbols or {}).values())
    subs = {sym: sympy.Symbol(names[sym.name]) for sym in expr.free_symbols if sym.name in names}
    subs.update({sympy.Symbol(c): v for c, v in (("e", sympy.E), ("pi", sympy.pi)) if c not in bound})
    expr = expr.subs(subs)
    args = sorted(expr.free_symbols, key=lambda x: x.name)
    f_mp = sympy.lambdify(args, expr, modules="mpmath")
    f_np = sympy.lambdify(args, expr, modules="numpy")

    def printed(ctx: Any, p: Point) -> Any:
        missing = [a.name for a in args if a.name not in p]
        if missing:
            raise ValueError(f"the LaTeX formula uses {missing}, which the point does not have (bind them with "
                             f"symbols=..., or add them to the domain)")
        if ctx is FP:
            return f_np(*(p[a.name] for a in args))
        # integers as mpmath numbers too: 1/k must not be a float64 division
        return f_mp(*(mpmath.mpf(p[a.name]) if isinstance(p[a.name], int) else p[a.name] for a in args))

    printed.latex = text  # type: ignore[attr-defined]
    printed.expr = expr  # type: ignore[attr-defined]
    return printed


def _describe(printed: Printed) -> str:
    """``printed as LaTeX ... parsed as ...`` for a formula given by :func:`latex` (else "")."""
    text = getattr(printed, "latex", None)
    return f"; LaTeX as printed: {text}; parsed: {printed.expr}" if text else ""  # type: ignore[attr-defined]


def _rtol(precision: str, dps: int) -> float:
    if precision == "mpmath":
        return mpmath_rtol(dps)
    if precision == "float64":
        return FLOAT64_RTOL
    raise ValueError(f"precision must be 'mpmath' or 'float64'; got {precision!r}")


def _eval(printed: Printed, p: Point, precision: str, dps: int) -> Any:
    """``printed(ctx, p)`` in the claim's precision (mpmath at ``dps`` digits, or float64)."""
    if precision == "float64":
        return mpmath.mpmathify(np.asarray(printed(FP, dict(p))).item())
    with mpmath.workdps(dps):
        return +mpmath.mpmathify(printed(MP, _mp_point(p)))


def _recheck(ev: PointEval, value: Any, evaluate: Callable[[int], Any], compare: Callable[[Any], PointEval],
             precision: str, dps: int, tol: Any) -> PointEval:
    """:func:`rfcheck.claims.recheck_rounding` for a printed side evaluated in mpmath (float64 sides
    keep their own tolerance)."""
    return recheck_rounding(ev, value, evaluate, compare, dps, tol) if precision == "mpmath" else ev


def _value_err(ref: Any, dps: int) -> tuple[Any, Any]:
    """A reference's ``(value, error bar)``; a bare value is taken as exact to ``10^(5 - dps)``."""
    if isinstance(ref, tuple):
        return ref
    v = mpmath.mpmathify(ref)
    return v, abs(v) * mpmath.mpf(10) ** (5 - dps)


def check_equal(printed: Printed, reference: Callable[[Point, int], Any], *, name: str = "reference",
                precision: str = "mpmath", scale: Callable[[Point, int], Any] | None = None,
                reference_ball: Callable[[Point, int], Any] | None = None, max_points: int | None = None,
                description: str = "", requires: tuple[str, ...] = (), domain: Domain | None = None,
                printed_ball: Callable[[Point, int], Any] | None = None) -> Check:
    """The check of :meth:`Paper.equality` -- ``printed(ctx, p)`` against ``reference(p, dps)`` --
    as a :class:`~rfcheck.claims.Check`, for :meth:`Paper.claim` among other checks of one claim.

    Parameters are those of :meth:`Paper.equality`; further: ``description`` (in reports;
    default: the precision the printed side is evaluated in) and ``domain`` (a sub-domain
    where this reference applies, stated in reports).

    Parameters
    ----------
    printed : callable
        ``printed(ctx, p)``: the formula exactly as printed, written against ``ctx``.
    reference : callable
        ``reference(p, dps) -> value`` or ``(value, error bar)``, computed independently of the
        printed formula at ``dps`` digits (a bare value is taken as exact to ``10^(5 - dps)``
        relative).
    name : str, default "reference"
        The check's name in reports.
    precision : {"mpmath", "float64"}, default "mpmath"
        How ``printed`` is evaluated; its rounding enters the tolerance.
    scale : callable, optional
        ``scale(p, dps)``: a magnitude for an absolute tolerance where the value itself may
        vanish (default: none, a purely relative tolerance).
    reference_ball : callable, optional
        ``reference_ball(p, bits) -> flint.arb``: a rigorous enclosure of the reference; decided
        points are then re-decided in ball arithmetic and marked ``certified`` when the balls
        agree (default: none, no certification).
    max_points : int, optional
        At most this many points of the search are evaluated by this check (default: the
        budget's).
    description : str, default ""
        How the reference is computed, for reports (default: the printed side's precision).
    requires : tuple of str, default ()
        Optional extras the check needs (``("jax",)``); without them it is skipped.
    domain : Domain, optional
        A sub-domain where this reference applies, stated in reports (default: the claim's
        whole domain).
    printed_ball : callable, optional
        ``printed_ball(p, bits) -> flint.arb``: the printed formula's Arb enclosure where
        ``printed`` does not run on balls (e.g. matrix products in mpmath); default: ``printed``
        evaluated on the Arb context.

    Returns
    -------
    Check
        A strength-1 (deterministic) :class:`~rfcheck.claims.Check`.

    Examples
    --------
    >>> chk = check_equal(lambda ctx, p: ctx.exp(p["t"]) ** 2,
    ...                   lambda p, dps: mpmath.exp(2 * mpmath.mpf(p["t"])), name="closed-form")
    >>> chk.name, chk.strength, chk.evaluate({"t": 0.5}, Budget("t", 1, 1, 1, 0, 1, 1, 30), 0).decided
    ('closed-form', 1, True)
    """
    def evaluate(p: Point, budget: Budget, seed: int) -> PointEval:
        dps = budget.dps
        with mpmath.workdps(dps):
            ref, err = _value_err(reference(dict(p), dps), dps)
        pv = _eval(printed, p, precision, dps)
        rtol = _rtol(precision, dps)
        with mpmath.workdps(dps):
            sc = abs(mpmath.mpmathify(scale(dict(p), dps))) if scale else 0

            def compare(v: Any) -> PointEval:
                return compare_deterministic(p, v, ref, err, rtol=rtol, atol=sc * rtol, scale=sc)

            ev = _recheck(compare(pv), pv, lambda prec: _eval(printed, p, precision, prec), compare, precision, dps,
                          10 * abs(err) + rtol * abs(ref) + sc * rtol)
        if reference_ball is None or not ev.decided:
            return ev
        return certify_with_balls(ev, p, dps, printed_ball or _ctx_ball(printed), reference_ball, rtol=rtol,
                                  atol=float(sc * rtol))

    desc = description or (f"printed in {precision}" + (
        f" ({FLOAT64_RTOL:.1e} relative)" if precision == "float64" else "") + _describe(printed))
    return Check(name, 1, evaluate, max_points=max_points, description=desc, requires=requires, domain=domain)


class Paper:
    """A declared paper: its claims are registered through the methods below.

    Declaring the same claim id again with another method (or the same one with another
    ``name=``) adds a further, independent check to that claim -- e.g. Monte Carlo beside
    quadrature; its verdict is the strongest check's, and "references disagree" when two
    decided checks contradict each other.

    Claim ids may be given in full (``"mypaper.eq7"``) or without the paper prefix
    (``"eq7"``); kinds are those of the built-in ledger (``thm``, ``lem``, ``cor``, ``prop``,
    ``def``, ``eq``, ``fig``, ``tab``, ``text``, ``alg``), numbers as printed.

    ``title=None`` returns a paper declared already (a built-in one: ``Paper("rfa")``);
    ``source`` is the paper's source line, the prefix :meth:`at` gives claim sources
    (default: the built-in paper's, else the title).

    Parameters
    ----------
    paper_id : str
        The prefix of the paper's claim ids: lower case letters, digits and ``_``, starting
        with a letter (``"mypaper"``).
    title : str, optional
        The paper's title; ``None`` (default) looks up a paper declared already.
    citation : str, default ""
        Authors, venue, year; appended to the title in reports.
    source : str, default ""
        The paper's source line, prefix of the claim sources given by :meth:`at` (default:
        the built-in paper's, else the title with its citation).

    Raises
    ------
    ValueError
        If ``title`` is ``None`` and no paper ``paper_id`` is declared; from
        :func:`rfcheck.claims.register_paper`, if ``paper_id`` is not a valid id or is
        declared already with another title (or citation).

    Examples
    --------
    >>> P = Paper("doctest_paper_cls", "A paper declared in a doctest", citation="A. Author, 2026")
    >>> P.id, Paper("doctest_paper_cls").id
    ('doctest_paper_cls', 'doctest_paper_cls')
    >>> P.at("eq (3)")
    'A paper declared in a doctest (A. Author, 2026), eq (3)'
    """

    def __init__(self, paper_id: str, title: str | None = None, citation: str = "", source: str = "") -> None:
        if title is None:
            if paper_id not in PAPERS:
                raise ValueError(f"paper {paper_id!r} is not declared; give its title: paper({paper_id!r}, title)")
            self.id = paper_id
        else:
            self.id = register_paper(paper_id, title, citation)
        self.source = source or PAPER_SOURCES.get(self.id) or PAPERS[self.id]

    def at(self, where: str) -> str:
        """A claim's source: the paper's source line and where in it (``"Lemma 2.1, eq (3)"``)."""
        return f"{self.source}, {where}"

    def claim(self, cid: str, *, domain: Domain | None = None, checks: list[Check] | tuple[Check, ...] = (),
              readings: list[Reading] | tuple[Reading, ...] = (), source: str = "", statement: str = "",
              correction: str | None = None, notes: str = "", unverifiable: str | None = None) -> Claim:
        """A claim from its checks, or from its readings: the general form of the methods below.

        Parameters
        ----------
        cid : str
            Claim id (``"eq7"`` or ``"mypaper.eq7"``).
        domain : Domain
            Where the claim is stated (not needed to add checks to a claim declared already).
        checks : list of Check
            Independent references, each a :class:`~rfcheck.claims.Check` -- ``evaluate(point, budget, seed)
            -> PointEval`` with a strength (1 deterministic, 2 symbolic, 3 Monte Carlo), a
            sub-domain (``domain=``), extras it needs (``requires=("jax",)``); built by
            :func:`check_equal` or written for the claim (a count of operations, a bespoke
            Monte Carlo test).  The verdict is the strongest decided check's.  Given for a
            claim declared already (without readings), they are added to its checks.
        readings : list of Reading
            For ambiguous notation, instead of ``checks``: one :class:`~rfcheck.claims.Reading` per reasonable
            reading, each with its checks (exactly one ``natural``).
        source, statement, correction, notes : str
            As printed and as reported (:class:`rfcheck.claims.Claim`).
        unverifiable : str, optional
            Why the claim cannot be checked (its verdict is then INCONCLUSIVE).

        Returns
        -------
        Claim
            The registered claim.
        """
        full = self._id(cid)
        if readings:
            if checks:
                raise ValueError(f"claim {full!r}: with readings, the checks belong to the readings")
            return register(Claim(id=full, source=source, statement=statement, domain=domain,
                                  readings=list(readings), correction=correction, notes=notes,
                                  unverifiable=unverifiable))
        if unverifiable is not None:
            return register(Claim(id=full, source=source, statement=statement, domain=domain, checks=list(checks),
                                  correction=correction, notes=notes, unverifiable=unverifiable))
        return self._register(cid, source, statement, domain, list(checks), correction, notes)

    def _id(self, cid: str) -> str:
        return cid if cid.startswith(self.id + ".") else f"{self.id}.{cid}"

    def _register(self, cid: str, source: str, statement: str, domain: Domain, checks: list[Check],
                  correction: str | None, notes: str, printed: tuple[Any, ...] = (),
                  reading: dict[str, Any] | None = None) -> Claim:
        parsed = [f"LaTeX as printed: {f.latex} -- parsed by sympy as: {f.expr}" for f in printed
                  if getattr(f, "latex", None)]
        notes = " ".join([notes, *parsed]).strip()
        statement = statement or " ".join(getattr(f, "latex", "") for f in printed).strip()
        full = self._id(cid)
        if reading is None:
            if full in REGISTRY:  # a further check of a claim declared already (e.g. Monte Carlo beside quadrature)
                c = REGISTRY[full]
                clash = {ch.name for ch in c.checks} & {ch.name for ch in checks}
                if c.readings or clash:
                    raise ValueError(f"claim {full!r} is declared already" + (
                        f" with a check named {sorted(clash)[0]!r}: give this one another name=" if clash else
                        " with readings: declare this check as a reading"))
                c.checks.extend(checks)
                c.notes = " ".join([c.notes, *parsed]).strip()
                return c
            return register(Claim(id=full, source=source, statement=statement, domain=domain, checks=checks,
                                  correction=correction, notes=notes))
        r = Reading(reading["name"], checks, reading.get("description", ""), reading.get("natural", False),
                    reading.get("why", ""), correction)
        if full in REGISTRY:  # a further reading of a claim declared already
            c = REGISTRY[full]
            if not c.readings:
                raise ValueError(f"claim {full!r} is declared already, without readings")
            c.readings.append(r)
            c.notes = " ".join([c.notes, *parsed]).strip()
            return c
        return register(Claim(id=full, source=source, statement=statement, domain=domain, readings=[r],
                              correction=correction, notes=notes))

    def equality(self, cid: str, *, printed: Printed, reference: Callable[[Point, int], Any], domain: Domain,
                 source: str = "", statement: str = "", precision: str = "mpmath",
                 scale: Callable[[Point, int], Any] | None = None, name: str = "reference",
                 reference_ball: Callable[[Point, int], Any] | None = None,
                 max_points: int | None = None, correction: str | None = None, notes: str = "",
                 requires: tuple[str, ...] = (), reading: dict[str, Any] | None = None,
                 description: str = "", printed_ball: Callable[[Point, int], Any] | None = None) -> Claim:
        """A printed formula equals an independent reference.

        Parameters
        ----------
        cid : str
            Claim id (``"eq7"`` or ``"mypaper.eq7"``).
        printed : callable
            ``printed(ctx, p)``: the formula exactly as printed, written against ``ctx``.
        reference : callable
            ``reference(p, dps) -> value`` or ``(value, error bar)``, computed independently of
            the printed formula at ``dps`` digits (a bare value is taken as exact to
            ``10^(5 - dps)`` relative).
        domain : Domain
            Where the claim is stated; searched by grid, random points and an optimiser.
        precision : {"mpmath", "float64"}
            How ``printed`` is evaluated; its rounding enters the tolerance.
        scale : callable, optional
            ``scale(p, dps)``: a magnitude for an absolute tolerance where the value itself
            may vanish (e.g. a variance that is 0 at ``x = -y``, on the scale of the second moment).
        reference_ball : callable, optional
            ``reference_ball(p, bits) -> flint.arb``: a rigorous enclosure of the reference
            (e.g. :func:`rfcheck.certify.gaussian_expectation_1d`).  Each decided point is then
            also evaluated in ball arithmetic -- the printed formula on the Arb context -- and
            marked ``certified`` when the balls decide it the same way: disjoint balls for a
            refutation, a difference ball within the tolerance for agreement
            (:func:`rfcheck.certify.certified_equal`).
        reading : dict, optional
            Where the printed notation is ambiguous, declare the claim once per reasonable
            reading, each call with ``reading={"name": ..., "description": "how the notation is
            read", "natural": bool, "why": "one line"}`` (exactly one natural reading); each
            reading gets its own verdict and the claim is REFUTED only when every reading is,
            MIXED when one is refuted and another holds.  Every claim kind takes ``reading``.
        description : str, optional
            How the reference is computed, for reports (default: the printed side's precision).
        printed_ball : callable, optional
            ``printed_ball(p, bits) -> flint.arb``: the printed formula's Arb enclosure where
            ``printed`` does not run on balls (default: ``printed`` on the Arb context).

        Returns
        -------
        Claim
            The registered claim (its verdict comes from ``rfcheck verify``).
        """
        check = check_equal(printed, reference, name=name, precision=precision, scale=scale,
                            reference_ball=reference_ball, max_points=max_points, description=description,
                            requires=requires, printed_ball=printed_ball)
        return self._register(cid, source, statement, domain, [check], correction, notes, (printed,), reading)

    def bound(self, cid: str, *, lhs: Printed, rhs: Printed, domain: Domain, relation: str = "<=",
              err: Callable[[Point, int], Any] | None = None,
              source: str = "", statement: str = "", precision: str = "mpmath", name: str = "bound",
              max_points: int | None = None, correction: str | None = None, notes: str = "",
              requires: tuple[str, ...] = (), reading: dict[str, Any] | None = None) -> Claim:
        """A printed inequality ``lhs <= rhs`` (``relation="<="``, or ``">="``) over ``domain``.

        ``lhs(ctx, p)`` and ``rhs(ctx, p)`` are written against ``ctx`` like a printed formula
        (one of them is usually a closed form of the library or a reference).  The report's
        worst point is the largest ``(lhs - rhs) / tol``: above 1 a violation (REFUTED); at or
        below 0 the slack, in tolerances, where it holds (near 0: tight).  ``<`` and ``>`` are
        checked as ``<=`` and ``>=`` (equality is within rounding).  ``err(p, dps)``: the error
        bar of ``lhs - rhs`` where a side is computed approximately (quadrature, a truncated
        series); without it both sides count as exact up to the evaluation's rounding.
        """
        if relation not in ("<=", ">=", "<", ">"):
            raise ValueError(f"relation must be one of <=, <, >=, >; got {relation!r}")
        flip = relation.startswith(">")

        def evaluate(p: Point, budget: Budget, seed: int) -> PointEval:
            sides = (rhs, lhs) if flip else (lhs, rhs)
            lo, hi = (_eval(f, p, precision, budget.dps) for f in sides)
            with mpmath.workdps(budget.dps):
                e = mpmath.mpmathify(err(dict(p), budget.dps)) if err else 0
                rtol = _rtol(precision, budget.dps)

                def compare(v: Any) -> PointEval:
                    return compare_inequality(p, v[0], v[1], e, rtol=rtol)

                ev = _recheck(compare((lo, hi)), (lo, hi),
                              lambda prec: tuple(_eval(f, p, precision, prec) for f in sides),
                              compare, precision, budget.dps, 10 * abs(e) + rtol * max(abs(lo), abs(hi)))
            if err is not None or precision != "mpmath" or not ev.decided:
                return ev  # an approximate side (err) has no enclosure to certify with
            from rfcheck.arb_backend import bits_for_dps
            from rfcheck.certify import certified_inequality

            bits = bits_for_dps(budget.dps)
            small, big = (_ball(f, p, bits) for f in ((rhs, lhs) if flip else (lhs, rhs)))
            if small is None or big is None:
                return _certify(ev, None, "a side leaves ball arithmetic")
            return _certify(ev, certified_inequality(small, big), "the balls of the two sides overlap")

        check = Check(name, 1, evaluate, max_points=max_points,
                      description=f"{relation}, printed in {precision}{_describe(lhs)}{_describe(rhs)}",
                      requires=requires, labels=("lhs", "rhs") if flip else ("rhs", "lhs"))
        return self._register(cid, source, statement, domain, [check], correction, notes, (lhs, rhs), reading)

    def optimum(self, cid: str, *, printed: Printed, objective: Callable[[Any, Point, Any], Any],
                bracket: Callable[[Point], tuple[float, float]], domain: Domain, what: str = "argmin",
                source: str = "", statement: str = "", precision: str = "mpmath", name: str = "optimiser",
                max_points: int | None = None, correction: str | None = None, notes: str = "",
                requires: tuple[str, ...] = (), reading: dict[str, Any] | None = None) -> Claim:
        """A printed optimum against numerical optimisation of ``objective(ctx, p, t)`` over ``t``.

        ``what``: ``"argmin"``, ``"argmax"`` (the printed value is the optimiser ``t*``),
        ``"min"`` or ``"max"`` (the printed value is the optimal objective).  Reference:
        Brent's bounded method (:func:`scipy.optimize.minimize_scalar`) on ``bracket(p)`` in
        float64 locates the optimum, which is then refined in mpmath at the budget's precision
        as the root of the objective's derivative (an optimum on the bracket's edge stays
        there).  A point where the refinement fails is undecided.
        """
        from scipy.optimize import minimize_scalar

        if what not in ("argmin", "argmax", "min", "max"):
            raise ValueError(f"what must be argmin, argmax, min or max; got {what!r}")
        sign = -1.0 if what in ("argmax", "max") else 1.0

        def evaluate(p: Point, budget: Budget, seed: int) -> PointEval:
            lo, hi = bracket(dict(p))
            res = minimize_scalar(lambda t: sign * float(np.real(objective(FP, dict(p), t))), bounds=(lo, hi),
                                  method="bounded", options={"xatol": 1e-10 * max(1.0, abs(hi - lo))})
            dps = budget.dps
            with mpmath.workdps(dps + 10):
                pm = _mp_point(p)
                edge = min(abs(res.x - lo), abs(res.x - hi)) < 1e-6 * max(1.0, abs(hi - lo))
                try:
                    t = (mpmath.mpf(lo) if abs(res.x - lo) < abs(res.x - hi) else mpmath.mpf(hi)) if edge else \
                        mpmath.findroot(lambda u: mpmath.diff(lambda v: objective(MP, pm, v), u), mpmath.mpf(res.x))
                except (ValueError, ZeroDivisionError) as exc:
                    return PointEval(p, None, None, math.inf, math.nan, False, f"refinement failed: {exc}")
                ref = t if what.startswith("arg") else objective(MP, pm, t)
            pv = _eval(printed, p, precision, dps)
            err, rtol = abs(ref) * mpmath.mpf(10) ** (-dps), _rtol(precision, dps)

            def compare(v: Any) -> PointEval:
                return compare_deterministic(p, v, ref, err, rtol=rtol)

            return _recheck(compare(pv), pv, lambda prec: _eval(printed, p, precision, prec), compare, precision, dps,
                            10 * err + rtol * abs(ref))

        check = Check(name, 1, evaluate, search=True, max_points=max_points,
                      description=f"{what}: bounded Brent (float64) refined in mpmath{_describe(printed)}",
                      requires=requires)
        return self._register(cid, source, statement, domain, [check], correction, notes, (printed,), reading)

    def ordering(self, cid: str, *, domain: Domain, simulate_pair: Callable[[Point, int, int],
                 tuple[np.ndarray, np.ndarray, float]] | None = None, mse_a: Printed | None = None,
                 mse_b: Printed | None = None, source: str = "", statement: str = "",
                 correction: str | None = None, notes: str = "", requires: tuple[str, ...] = (),
                 reading: dict[str, Any] | None = None) -> Claim:
        """An ordering of two estimators, ``MSE(A) <= MSE(B)``, over ``domain``.

        Parameters
        ----------
        simulate_pair : callable, optional
            ``simulate_pair(p, n_trials, seed) -> (estimates_a, estimates_b, target)``: paired
            draws -- trial ``i`` of both arms uses the same base randomness (common random
            numbers) -- and the exact value both estimate.  Check ``paired-mc``: the per-trial
            differences ``(a_i - K)^2 - (b_i - K)^2`` by a one-sided z-test at the budget's
            family-wise level: significantly positive is a violation (REFUTED after the
            confirmation re-run), significantly negative shows the ordering, anything between
            (or heavy tails) leaves the point undecided.
        mse_a, mse_b : callable, optional
            Closed forms ``mse(ctx, p)`` of the two MSEs: check ``closed-forms``, the bound
            ``mse_a <= mse_b`` (deterministic, stronger than Monte Carlo).
        """
        from rfcheck.stats import estimate_mean, z_critical

        if simulate_pair is None and (mse_a is None or mse_b is None):
            raise ValueError("an ordering needs simulate_pair, or both mse_a and mse_b")
        checks = []
        if mse_a is not None and mse_b is not None:
            def evaluate_cf(p: Point, budget: Budget, seed: int) -> PointEval:
                a, b = (_eval(f, p, "mpmath", budget.dps) for f in (mse_a, mse_b))
                with mpmath.workdps(budget.dps):
                    rtol = _rtol("mpmath", budget.dps)

                    def compare(v: Any) -> PointEval:
                        return compare_inequality(p, v[0], v[1], 0, rtol=rtol)

                    return recheck_rounding(compare((a, b)), (a, b), lambda prec: tuple(_eval(f, p, "mpmath", prec)
                                                                                        for f in (mse_a, mse_b)),
                                            compare, budget.dps, rtol * max(abs(a), abs(b)))

            checks.append(Check("closed-forms", 1, evaluate_cf, description="MSE(A) <= MSE(B) from the closed forms",
                                requires=requires, labels=("MSE(B)", "MSE(A)")))
        if simulate_pair is not None:
            def evaluate_mc(p: Point, budget: Budget, seed: int) -> PointEval:
                a, b, target = simulate_pair(dict(p), budget.mc_trials, seed)
                a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
                diff = (a - target) ** 2 - (b - target) ** 2
                est = estimate_mean(diff)
                zc = z_critical(budget.alpha, budget.mc_points)
                if not est.trustworthy:
                    return PointEval(p, "A <= B", est.value, est.se, math.nan, False, est.note or "heavy tails")
                z = est.value / est.se if est.se > 0 else math.copysign(math.inf, est.value) if est.value else 0.0
                decided = abs(z) > zc
                return PointEval(p, "A <= B", est.value, est.se, z / zc, decided,
                                 "" if decided else f"difference not resolved (z = {z:.2f})", {"z": z, "z_crit": zc})

            checks.append(Check("paired-mc", 3, evaluate_mc, search=False, requires=requires,
                                description="paired Monte Carlo (common random numbers), one-sided z-test",
                                labels=("claim", "mean of (A - K)^2 - (B - K)^2")))
        return self._register(cid, source, statement, domain, checks, correction, notes, (mse_a, mse_b), reading)

    def variance(self, cid: str, *, printed: Printed,
                 simulate: Callable[[Point, int, int], tuple[np.ndarray, float]], domain: Domain,
                 source: str = "", statement: str = "", name: str = "monte-carlo",
                 correction: str | None = None, notes: str = "", requires: tuple[str, ...] = (),
                 reading: dict[str, Any] | None = None) -> Claim:
        """A printed variance (or MSE) of an estimator against Monte Carlo.

        ``simulate(p, n_trials, seed) -> (estimates, target)``: ``n_trials`` independent
        estimates (e.g. ``rfcheck.engine.montecarlo.simulate`` on a feature product, or a
        ``rfcheck.custom.Estimator``) and the exact kernel value they estimate; their MSE
        about ``target`` is compared with ``printed`` by a z-test at the budget's family-wise
        level (Bonferroni over the points), the standard error trusted only where the tail
        diagnostic trusts it, else the point is undecided.
        """
        def printed_mp(p: Point) -> Any:
            return printed(MP, _mp_point(p))

        def sim(p: Point, n: int, seed: int) -> tuple[np.ndarray, float, None]:
            est, target = simulate(dict(p), n, seed)
            return np.asarray(est, dtype=float), float(target), None

        check = mc_check(name, printed_mp, sim, description=f"Monte Carlo, z-test on the MSE{_describe(printed)}")
        check.requires = requires
        return self._register(cid, source, statement, domain, [check], correction, notes, (printed,), reading)


def paper(paper_id: str, title: str | None = None, citation: str = "", source: str = "") -> Paper:
    """Declare a paper (its id is the prefix of its claim ids) and return it for declaring claims.

    Without a title, the paper declared already under ``paper_id`` (a built-in one,
    ``paper("darkformer")``, or a pack's); ``source``: see :class:`Paper`.

    Parameters
    ----------
    paper_id : str
        The prefix of the paper's claim ids (lower case letters, digits, ``_``; a letter first).
    title : str, optional
        The paper's title; ``None`` (default) returns the paper declared already.
    citation : str, default ""
        Authors, venue, year, appended to the title in reports.
    source : str, default ""
        The paper's source line (see :class:`Paper`).

    Returns
    -------
    Paper
        The declared paper, whose methods register its claims.

    Raises
    ------
    ValueError
        As :class:`Paper`: an undeclared ``paper_id`` without a title, an invalid id, or an
        id declared already with another title.

    Examples
    --------
    >>> from rfcheck.ledger import Domain, Real, paper
    >>> P = paper("doctest_paper", "A paper declared in a doctest")
    >>> c = P.equality("eq1", printed=lambda ctx, p: ctx.exp(p["t"]) ** 2,
    ...                reference=lambda p, dps: mpmath.exp(2 * mpmath.mpf(p["t"])),
    ...                domain=Domain({"t": Real(0.0, 1.0)}), source="eq (1)", statement="e^t squared = e^2t")
    >>> c.id, c.paper
    ('doctest_paper.eq1', 'doctest_paper')
    """
    return Paper(paper_id, title, citation, source)


def assert_verdict(claim: Claim | str, expected: str, *, budget: str = "default", seed: int = 0) -> None:
    """Verify ``claim`` (a claim or its id) and raise ``AssertionError`` unless its verdict is
    ``expected`` (``"HOLDS"``, ``"REFUTED"``, ``"INCONCLUSIVE"``): a claims file as tests.

    The message gives the verdict's reason and the command that reproduces it.

    Parameters
    ----------
    claim : Claim or str
        The claim, or its registered id (``"rfa.eq-kernel"``).
    expected : {"HOLDS", "REFUTED", "INCONCLUSIVE"}
        The verdict the claim must get.
    budget : str, default "default"
        The verification budget (``"smoke"`` or ``"default"``), as ``rfcheck verify --budget``.
    seed : int, default 0
        Seed of the random search points and Monte Carlo checks.

    Raises
    ------
    ValueError
        If ``expected`` is not one of ``"HOLDS"``, ``"REFUTED"``, ``"INCONCLUSIVE"``, or
        ``claim`` is an id that is not registered (:func:`rfcheck.claims.get`).
    AssertionError
        If the claim's verdict is not ``expected``.

    Examples
    --------
    >>> assert_verdict("rfa.eq-kernel", "MIXED")
    Traceback (most recent call last):
    ...
    ValueError: expected must be HOLDS, REFUTED or INCONCLUSIVE; got 'MIXED'
    """
    from rfcheck.verify import run_claim

    if expected not in ("HOLDS", "REFUTED", "INCONCLUSIVE"):
        raise ValueError(f"expected must be HOLDS, REFUTED or INCONCLUSIVE; got {expected!r}")
    c = get(claim) if isinstance(claim, str) else claim
    v = run_claim(c, budget=budget, seed=seed)
    if v.verdict != expected:
        raise AssertionError(f"{c.id}: {v.verdict}, expected {expected} ({v.reason}); reproduce: {v.reproduce()}")


def claim_tests(pack: str, *, expect: dict[str, str] | None = None, budget: str = "default",
                seed: int = 0) -> Callable[[str], None]:
    """A pytest test with one case per claim of a claims pack: the pack's verdicts as a regression suite.

    Parameters
    ----------
    pack : str
        A claims file, module or installed pack (:func:`rfcheck.claims.load_claims`).
    expect : dict, optional
        Expected verdicts by claim id where they are not ``"HOLDS"`` (e.g. a transcription
        known to be wrong: ``{"mypaper.eq2": "REFUTED"}``).
    budget, seed : str, int
        As for ``rfcheck verify``.

    Returns
    -------
    callable
        A test function parametrised over the pack's claim ids; assign it to a ``test_*`` name
        in a test module::

            from rfcheck.ledger import claim_tests
            test_mypaper = claim_tests("mypaper_claims.py", expect={"mypaper.eq2": "REFUTED"})

        A case fails with the claim's reason and reproduce command (:func:`assert_verdict`).

    Raises
    ------
    ValueError
        If ``expect`` names a claim id that the pack does not declare.
    """
    import pytest

    from rfcheck.claims import load_claims

    ids = load_claims(pack)
    expect = dict(expect or {})
    unknown = sorted(set(expect) - set(ids))
    if unknown:
        raise ValueError(f"expect names claims the pack {pack!r} does not declare: {unknown}")

    @pytest.mark.parametrize("claim_id", ids)
    def test_claim(claim_id: str) -> None:
        assert_verdict(claim_id, expect.get(claim_id, "HOLDS"), budget=budget, seed=seed)

    return test_claim


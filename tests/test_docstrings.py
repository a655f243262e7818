"""Numpydoc completeness of public docstrings (open issue "Documentation site ...").

For the public names (``__all__``) of the modules in :data:`COVERED`, every function and class
must carry the numpydoc sections its signature calls for:

* ``Parameters`` naming each parameter when it takes any (``self``/``cls`` excepted, and the
  ``ctx`` of a :func:`rfcheck.backends.formula`, whose callers pass ``backend=``/``dps=``
  instead; a class is checked against its constructor),
* ``Returns`` (or ``Yields``) when a function returns something (a ``return <value>``, or a
  return annotation other than ``None``/``NoReturn``),
* ``Raises`` naming ``ValueError``/``TypeError`` when its body has a ``raise`` statement of that
  type (for a class: in ``__init__``/``__post_init__``).

Other modules are not covered yet.  The docstring examples of the covered modules also run as
doctests here, including those of names re-exported from private modules (``rfcheck.attention``
re-exports ``rfcheck.attention._api``), which ``tests/test_docs.py`` does not reach.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

try:  # numpydoc is in the test extra (through docs); a minimal section parser where it is missing
    from numpydoc.docscrape import ClassDoc, FunctionDoc
except ImportError:  # pragma: no cover - depends on the environment
    ClassDoc = FunctionDoc = None

ROOT = Path(__file__).resolve().parents[1]

#: modules whose public names must have complete numpydoc sections
COVERED = (
    "rfcheck.stats",
    "rfcheck.domains",
    "rfcheck.kernels",
    "rfcheck.features",
    "rfcheck.custom",
    "rfcheck.testing",
    "rfcheck.audit",
    "rfcheck.strategies",
    "rfcheck.validate",
    "rfcheck.attention",
    "rfcheck.attention.audit",
    "rfcheck.attention.bench",
    "rfcheck.attention.devicecheck",
    "rfcheck.attention.maxrel",
    "rfcheck.attention.mse",
    "rfcheck.plots.crt",
    "rfcheck.plots.hrf",
    "rfcheck.plots.darkformer",
    "rfcheck.closed_forms.darkformer",
    "rfcheck.closed_forms.rfa",
    "rfcheck.closed_forms.hrf",
    "rfcheck.closed_forms.crt",
    "rfcheck.closed_forms.simrf",
    "rfcheck.estimators.crt",
    "rfcheck.estimators.darkformer",
    "rfcheck.estimators.hrf",
    "rfcheck.estimators.rfa",
    "rfcheck.accuracy",
    "rfcheck.bench",
    "rfcheck.calibrate",
    "rfcheck.quadrature",
    "rfcheck.docsgen",
    "rfcheck.ledger",
    "rfcheck.certify",
    "rfcheck.arb_backend",
    "rfcheck.backends",
    "rfcheck.verify",
    "rfcheck.report",
    "rfcheck.claims",
    "rfcheck.references.gaussian",
    "rfcheck.references.crt",
    "rfcheck.references.hrf",
    "rfcheck.references.simrf",
    "rfcheck.references.simrf_proofs",
    "rfcheck.references.attention",
    "rfcheck.references.rfa",
    "rfcheck.references.darkformer",
    "rfcheck.engine",
    "rfcheck.engine.montecarlo",
    "rfcheck.plots.simrf",
    "rfcheck.engine.rng",
    "rfcheck.engine.couplings",
)

#: private modules defining public names of a covered module (their examples run here too)
PRIVATE = ("rfcheck.attention._api", "rfcheck.attention._core", "rfcheck.attention._features")

CHECKED_EXCEPTIONS = ("ValueError", "TypeError")


class _Entry:
    def __init__(self, name: str, type_: str) -> None:
        self.name, self.type = name, type_


def _sections(doc: str) -> dict[str, list[_Entry]]:
    """``{section title: entries}`` of a numpydoc docstring, without numpydoc: a title is a line
    underlined by dashes; an entry is a line at the section's base indentation
    (``name : type`` or ``name``)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out: dict[str, list[_Entry]] = {}
    cur = None
    for i, line in enumerate(lines):
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line.strip() and nxt and set(nxt) == {"-"} and len(nxt) >= len(line.strip()) // 2:
            cur = out.setdefault(line.strip(), [])
        elif cur is not None and line.strip() and not line.startswith(" ") and set(line.strip()) != {"-"}:
            name, _, type_ = line.partition(" : ")
            cur.append(_Entry(name.strip(), type_.strip()))
    return out


def _doc(obj) -> dict:
    if FunctionDoc is not None:
        return ClassDoc(obj, config={"show_class_members": False}) if inspect.isclass(obj) else FunctionDoc(obj)
    secs = _sections(obj.__doc__ or "")
    return {k: secs.get(k, []) for k in ("Parameters", "Other Parameters", "Returns", "Yields", "Raises")}


def _function_node(obj) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        src = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return None
    tree = ast.parse(src)
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _own_nodes(fn: ast.AST):
    """The nodes of a function body, not descending into nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _raised(fn: ast.AST) -> set[str]:
    out = set()
    for node in _own_nodes(fn):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", None)
            if name in CHECKED_EXCEPTIONS:
                out.add(name)
    return out


def _returns_value(obj, fn: ast.AST | None) -> bool:
    ann = inspect.signature(obj).return_annotation
    if ann is not inspect.Signature.empty:
        return ann not in (None, "None", "NoReturn") and getattr(ann, "__name__", "") != "NoReturn"
    if fn is None:
        return False
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) or (isinstance(n, ast.Return) and n.value is not None
               and not (isinstance(n.value, ast.Constant) and n.value.value is None)) for n in _own_nodes(fn))


def _documented(section) -> set[str]:
    names = set()
    for p in section:
        for n in p.name.split(","):
            names.add(n.strip().lstrip("*"))
    return names


def _params(obj) -> list[str]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    names = [p.name for p in sig.parameters.values() if p.name not in ("self", "cls")]
    if hasattr(obj, "impl") and hasattr(obj, "symbolic") and names[:1] == ["ctx"]:
        names = names[1:]  # a rfcheck.backends.formula: callers pass no ctx (backend=, dps= are generic)
    return names


def problems(obj) -> list[str]:
    """What the numpydoc docstring of ``obj`` lacks (an empty list: nothing)."""
    out = []
    if inspect.isclass(obj):
        doc = _doc(obj)
        params = _params(obj)
        raised = set()
        for meth in ("__init__", "__post_init__"):
            f = obj.__dict__.get(meth)
            node = _function_node(f) if f is not None else None  # (a generated __init__ has no source)
            if node is not None:
                raised |= _raised(node)
        returns = False
    else:
        doc = _doc(obj)
        params = _params(obj)
        node = _function_node(obj)
        raised = _raised(node) if node is not None else set()
        returns = _returns_value(obj, node)
    if params:
        if not doc["Parameters"]:
            out.append("Parameters")
        else:
            missing = [p for p in params if p not in _documented(doc["Parameters"]) | _documented(
                doc["Other Parameters"])]
            if missing:
                out.append(f"Parameters {missing}")
    if returns and not (doc["Returns"] or doc["Yields"]):
        out.append("Returns")
    if raised:
        named = {t for p in doc["Raises"] for t in (p.type or p.name).replace(",", " ").split()}
        missing = sorted(raised - named)
        if missing:
            out.append(f"Raises {missing}")
    return out


def _public(module: str, *, reexported: bool = False):
    """``(qualified name, object)`` for the functions and classes of ``module.__all__`` defined in
    a covered (or :data:`PRIVATE`) module; with ``reexported=True``, only those defined elsewhere
    (they are checked with their home module)."""
    mod = importlib.import_module(module)
    for name in getattr(mod, "__all__", ()):
        obj = getattr(mod, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            home = getattr(obj, "__module__", "")
            if (home in COVERED or home in PRIVATE) != reexported:
                yield f"{module}.{name}", obj


def incomplete(modules=COVERED) -> dict[str, list[str]]:
    """``{qualified public name: missing sections}`` over ``modules``."""
    return {q: p for m in modules for q, obj in _public(m) if (p := problems(obj))}


def test_checker_sees_missing_sections():
    def bare(x: int, y: int = 0) -> int:
        """Sum."""
        if x < 0:
            raise ValueError("x < 0")
        return x + y

    def full(x: int, y: int = 0) -> int:
        """Sum.

        Parameters
        ----------
        x, y : int
            The terms.

        Returns
        -------
        int

        Raises
        ------
        ValueError
            If ``x < 0``.
        """
        if x < 0:
            raise ValueError("x < 0")
        return x + y

    assert problems(bare) == ["Parameters", "Returns", "Raises ['ValueError']"]
    assert problems(full) == []


def test_fallback_parser_agrees_with_numpydoc():
    """The section parser used where numpydoc is missing finds the same sections and names."""
    for qual, obj in [q for m in ("rfcheck.stats", "rfcheck.custom", "rfcheck.validate") for q in _public(m)]:
        ours = _sections(obj.__doc__ or "")
        if FunctionDoc is None:
            continue
        theirs = _doc(obj)
        assert _documented(ours.get("Parameters", [])) == _documented(theirs["Parameters"]), qual
        assert {e.type or e.name for e in ours.get("Raises", [])} == {e.type or e.name for e in theirs["Raises"]}, qual


def test_checker_reads_dataclass_fields_and_post_init():
    from dataclasses import dataclass

    @dataclass
    class Bare:
        """A range."""

        lo: float
        hi: float

        def __post_init__(self) -> None:
            if self.lo > self.hi:
                raise ValueError("lo > hi")

    assert problems(Bare) == ["Parameters", "Raises ['ValueError']"]
    Bare.__doc__ = """A range.

    Parameters
    ----------
    lo, hi : float
        The ends.

    Raises
    ------
    ValueError
        If ``lo > hi``.
    """
    assert problems(Bare) == []


def test_covered_modules_exist_and_export_names():
    count = sum(1 for m in COVERED for _ in _public(m))
    assert count > 100


def test_public_docstrings_have_numpydoc_sections():
    bad = incomplete()
    assert not bad, "\n".join(f"{k}: {v}" for k, v in sorted(bad.items()))


@pytest.mark.parametrize("module", PRIVATE)
def test_private_module_examples_run(module):
    """Examples of names defined in private modules and re-exported publicly (a fresh interpreter)."""
    code = ("import doctest, importlib, sys\n"
            f"r = doctest.testmod(importlib.import_module({module!r}), optionflags=doctest.ELLIPSIS | "
            "doctest.NORMALIZE_WHITESPACE)\nprint(r.attempted, r.failed)\nsys.exit(1 if r.failed else 0)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr

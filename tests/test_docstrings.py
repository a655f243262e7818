"""Numpydoc completeness of public docstrings (open issue "Documentation site ...").

The modules checked are found, not listed: :func:`rfcheck.docsgen.public_modules` walks the
package (``pkgutil.walk_packages``) and keeps ``rfcheck`` and every module none of whose dotted
parts starts with ``_``, less the deprecated paths of moved modules (``rfcheck.hybrid``, ...,
which only warn and hand over the module of the new path).  :func:`test_every_module_is_classified`
checks that split: every module found is checked, private, or a shim that warns.  Every checked
module declares ``__all__`` (its public names; an empty list says it exports none), and any
exemption is an entry of :data:`EXEMPT` with its reason.

For every public name (a function or class of rfcheck in the ``__all__`` of a checked module,
wherever it is defined: a private module's name re-exported publicly counts; a Numba-compiled
function, a ``numba.core.dispatcher.Dispatcher``, is checked through the Python function it
compiles, its ``py_func``), the docstring must carry the numpydoc sections its signature calls for:

* ``Parameters`` naming each parameter when it takes any (``self``/``cls`` excepted, and the
  ``ctx`` of a :func:`rfcheck.backends.formula`, whose callers pass ``backend=``/``dps=``
  instead; a class is checked against its constructor),
* ``Returns`` (or ``Yields``) when a function returns something (a ``return <value>``, or a
  return annotation other than ``None``/``NoReturn``),
* ``Raises`` naming ``ValueError``/``TypeError`` when its body has a ``raise`` statement of that
  type (for a class: in ``__init__``/``__post_init__``).

The docstring examples of public modules run in ``tests/test_docs.py``; those of the private
modules defining public names (``rfcheck.attention._api``, ...) run here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import rfcheck
from rfcheck import docsgen

try:  # numba is a dependency of rfcheck; without it no public name is a Numba function
    from numba.core.dispatcher import Dispatcher
except ImportError:  # pragma: no cover - depends on the environment
    Dispatcher = None

try:  # numpydoc is in the test extra (through docs); a minimal section parser where it is missing
    from numpydoc.docscrape import ClassDoc, FunctionDoc
except ImportError:  # pragma: no cover - depends on the environment
    ClassDoc = FunctionDoc = None

ROOT = Path(__file__).resolve().parents[1]

#: modules exempt from the checks below, ``{module: reason}`` (none: every public module is checked)
EXEMPT: dict[str, str] = {}


def _all_modules() -> list[str]:
    """Every module of the package, as ``pkgutil.walk_packages`` finds it (``rfcheck`` first)."""
    return ["rfcheck", *(i.name for i in pkgutil.walk_packages(rfcheck.__path__, "rfcheck."))]


def _moved() -> dict[str, str]:
    """The deprecated paths of moved modules, ``old -> new`` (the shims' own registries)."""
    from rfcheck.engine import _MOVED as engine_moved
    from rfcheck.estimators import _MOVED as estimators_moved

    return {**engine_moved, **estimators_moved}


#: the modules whose public names are checked: every public module, found by walking the package
CHECKED = tuple(m for m in docsgen.public_modules() if m not in EXEMPT)


def _import(module: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module(module)


def _checked_object(obj):
    """What the checks read for ``obj``: the Python function a Numba ``Dispatcher`` compiles (its
    docstring, signature and source: ``inspect.isfunction`` is false for the dispatcher itself),
    otherwise ``obj``."""
    if Dispatcher is not None and isinstance(obj, Dispatcher) and inspect.isfunction(getattr(obj, "py_func", None)):
        return obj.py_func
    return obj


def _exported(mod):
    """``(name, object)`` for the functions and classes of rfcheck in ``mod.__all__`` (a Numba
    function as :func:`_checked_object` gives it)."""
    for name in getattr(mod, "__all__", ()):
        obj = _checked_object(getattr(mod, name))
        home = getattr(obj, "__module__", None) or ""
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and home.split(".")[0] == "rfcheck":
            yield name, obj


def _public_objects() -> dict[str, object]:
    """``{qualified name at home: object}`` for every function and class of rfcheck exported by a
    checked module (each object once, named where it is defined)."""
    out: dict[str, object] = {}
    for module in CHECKED:
        for _, obj in _exported(_import(module)):
            out.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return out


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


def _private_with_examples() -> list[str]:
    """The private modules that define public names or hold ``>>>`` examples (these run here)."""
    import importlib.util

    homes = {o.__module__ for o in _public_objects().values() if _private(o.__module__)}
    with_examples = {m for m in _all_modules() if _private(m)
                     and ">>>" in Path(importlib.util.find_spec(m).origin).read_text()}
    return sorted(homes | with_examples)


#: private modules defining public names (found from the public modules' ``__all__``) or holding
#: examples: their examples run here
PRIVATE = tuple(_private_with_examples())

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


def _public(module: str):
    """``(qualified name, object)`` for the functions and classes of rfcheck in ``module.__all__``."""
    for name, obj in _exported(_import(module)):
        yield f"{module}.{name}", obj


def incomplete(modules=None) -> dict[str, list[str]]:
    """``{qualified public name: missing sections}`` over ``modules`` (default: every public name
    of the checked modules, each once)."""
    if modules is None:
        return {q: p for q, obj in _public_objects().items() if (p := problems(obj))}
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


def test_checker_sees_numba_functions(monkeypatch):
    """A Numba-compiled public function is checked through its ``py_func``: a bare docstring is
    reported, by :func:`problems` and through the collectors (a module stub in ``sys.modules``)."""
    import types

    from numba import njit

    @njit(cache=False)
    def bare(x, y):
        """Sum."""
        if x < 0:
            raise ValueError("x < 0")
        return x + y

    @njit(cache=False)
    def full(x, y):
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

    assert not inspect.isfunction(bare) and isinstance(bare, Dispatcher)
    assert problems(_checked_object(bare)) == ["Parameters", "Returns", "Raises ['ValueError']"]
    assert problems(_checked_object(full)) == []
    name = "rfcheck._numba_docstring_probe"
    stub = types.ModuleType(name)
    stub.__all__ = ["bare", "full"]
    for f in (bare, full):
        f.py_func.__module__ = name
        setattr(stub, f.py_func.__name__, f)
    monkeypatch.setitem(sys.modules, name, stub)
    assert incomplete([name]) == {f"{name}.bare": ["Parameters", "Returns", "Raises ['ValueError']"]}
    # and the real ones are collected (by both collectors)
    from rfcheck.engine import rng

    assert _public_objects()["rfcheck.engine.rng.fill_normals"] is rng.fill_normals.py_func
    assert ("rfcheck.engine.rng.fill_normals", rng.fill_normals.py_func) in list(_public("rfcheck.engine.rng"))


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


def test_every_module_is_classified():
    """Walking the package finds every module: each is checked, private (a dotted part starting
    with ``_``), exempt with a reason, or a deprecated shim (and then importing it warns)."""
    moved = _moved()
    found = _all_modules()
    assert {"rfcheck.cli", "rfcheck.plots", "rfcheck.engine.philox", "rfcheck.claims.crt"} <= set(CHECKED)
    assert set(EXEMPT) <= set(found) and all(reason.strip() for reason in EXEMPT.values())
    assert set(moved) <= set(found)
    for m in found:
        assert (m in CHECKED) + _private(m) + (m in EXEMPT) + (m in moved) == 1, m
    code = ("import importlib, sys, warnings\nbad = []\n"
            f"for old, new in {sorted(moved.items())!r}:\n"
            "    with warnings.catch_warnings(record=True) as w:\n"
            "        warnings.simplefilter('always')\n"
            "        mod = importlib.import_module(old)\n"
            "    if not any(issubclass(x.category, DeprecationWarning) for x in w) or mod.__name__ != new:\n"
            "        bad.append(old)\n"
            "print(bad)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stdout + run.stderr


def test_every_checked_module_declares_all():
    """A public module says what it exports: ``__all__`` (an empty list: nothing)."""
    missing = [m for m in CHECKED if not isinstance(getattr(_import(m), "__all__", None), list | tuple)]
    assert not missing, f"public modules without __all__: {missing}"


def test_checked_modules_export_names():
    objs = _public_objects()
    assert len(objs) > 500
    assert {"rfcheck.cli.main", "rfcheck.engine.philox.PyPhilox", "rfcheck.claims._common.mc_check"} <= set(objs)
    assert "rfcheck.attention._api" in PRIVATE and "rfcheck.claims._common" in PRIVATE


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

"""Sphinx glue for the rfcheck documentation (loaded by ``docs/conf.py``).

* Docstrings are written with ``|x|`` for norms; reStructuredText would read ``|...|`` as a
  substitution.  ``autodoc-process-docstring`` (after numpydoc) escapes every ``|`` outside code,
  literal blocks and doctests, and lengthens section underlines that are too short.
* A cross-reference whose target is a real Python object that the reference does not document
  (a private helper, an internal constant, a standard-library function) is rendered as plain code
  instead of a broken link; a target that names no object at all still warns (nitpicky).
* autosummary's one-line summaries are not cut at a ``". "`` inside an inline literal.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

_CODE = re.compile(r"(``.+?``|:[a-z:]+:`[^`]*`|`[^`]*`_?)")
_UNDERLINE = re.compile(r"^([-=~^\"'`#*+])\1{2,}\s*$")


def _escape_line(line: str) -> str:
    parts = _CODE.split(line)
    return "".join(p if i % 2 else re.sub(r"(?<!\\)\|", r"\\|", p) for i, p in enumerate(parts))


def escape_bars(lines: list[str]) -> None:
    """Escape ``|`` in place, outside inline code, literal blocks (after ``::``) and doctests; fix
    short section underlines."""
    in_literal: int | None = None  # indentation of the paragraph that opened a literal block
    prev_text = ""
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if in_literal is not None:
            if not stripped or indent > in_literal:
                continue
            in_literal = None
        if stripped.startswith(">>>") or stripped.startswith("..."):
            prev_text = stripped
            continue
        if (stripped.startswith(".. ") and stripped.endswith("::")) or stripped.startswith(".. code"):
            in_literal = indent
            continue
        m = _UNDERLINE.match(stripped)
        if m and prev_text and len(stripped) < len(prev_text) and i > 0 and lines[i - 1].strip() == prev_text:
            lines[i] = " " * indent + m.group(1) * len(prev_text)
            prev_text = ""
            continue
        lines[i] = _escape_line(line)
        if stripped.endswith("::"):
            in_literal = indent
        prev_text = stripped


def _process_docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    escape_bars(lines)


def _resolve(path: str) -> bool:
    """Whether ``path`` (dotted) names an importable module or an attribute chain below one."""
    parts = path.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:k]))
        except Exception:
            continue
        try:
            for attr in parts[k:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def _docstring_owner(node: Any) -> str:
    """``rfcheck.testing.check_estimator`` for a node parsed from that object's docstring."""
    while node is not None:
        m = re.search(r"docstring of ([\w.]+)", str(getattr(node, "source", None) or ""))
        if m:
            return m.group(1)
        node = node.parent
    return ""


def _missing_reference(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    mod, cls = node.get("py:module") or "", node.get("py:class") or ""
    candidates = [target]
    if mod:
        candidates += [f"{mod}.{target}"] + ([f"{mod}.{cls}.{target}"] if cls else [])
    # a docstring shown under another name (rfcheck.check_estimator is rfcheck.testing's): its
    # short references are relative to the module that wrote it
    owner = _docstring_owner(node).split(".")
    candidates += [".".join([*owner[:k], target]) for k in range(len(owner) - 1, 0, -1)]
    py = env.get_domain("py")
    for c in candidates:
        if c != target and c in py.objects:
            ref = py.resolve_xref(env, node.get("refdoc", ""), app.builder, node.get("reftype", "obj"), c,
                                  node, contnode)
            if ref is None:
                ref = py.resolve_xref(env, node.get("refdoc", ""), app.builder, "obj", c, node, contnode)
            if ref is not None:
                return ref
    if any(c and _resolve(c) for c in [*candidates, f"builtins.{target}"]):
        return contnode  # a real object the reference does not document: code, no link
    return None


def _protect_literals(extract: Any) -> Any:
    def extract_summary(doc: list[str], document: Any) -> str:
        joined = "\n".join(doc)
        if "``" not in joined:
            return extract(doc, document)
        marker = "\u2063"  # invisible separator: no sentence ends inside a literal
        protected = re.sub(r"``.+?``", lambda m: m.group(0).replace(". ", "." + marker), joined, flags=re.S)
        return extract(protected.split("\n"), document).replace("." + marker, ". ")

    return extract_summary


def setup(app: Any) -> dict[str, Any]:
    from sphinx.ext import autosummary

    autosummary.extract_summary = _protect_literals(autosummary.extract_summary)
    app.connect("autodoc-process-docstring", _process_docstring, priority=600)
    app.connect("missing-reference", _missing_reference, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Sphinx configuration of the rfcheck documentation.

Build (from the project root; ``pip install -e ".[docs]"`` first)::

    sphinx-build -W -n --keep-going -b html docs docs/_build/html

The result pages (ledger, errata, calibration, benchmark, figures) and the API reference are
generated from the stored result files and the modules' ``__all__`` at the start of every build
(:func:`rfcheck.docsgen.generate`); nothing under ``docs/results/`` or ``docs/api/`` is written by
hand.  The notebooks (``notebooks/*.py``, jupytext) are converted to ``docs/notebooks/*.ipynb`` and
executed by myst-nb, cached under ``docs/_build/.jupyter_cache``; ``RFCHECK_DOCS_EXECUTE=off``
renders them without running them (the test suite's build), ``=force`` reruns them all.
``RFCHECK_NOTEBOOK_QUICK=1`` (the default here) runs them at the small sizes the tests use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import jupytext

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

import rfcheck  # noqa: E402
from rfcheck import docsgen  # noqa: E402

project = "rfcheck"
author = "the rfcheck authors"
copyright = "2026, the rfcheck authors"
version = release = rfcheck.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
    "sphinx_design",
    "sphinx-mathjax-offline",  # MathJax copied into the site (_static/mathjax): no CDN needed
    "rfcheck_sphinx",
]

# ---------------------------------------------------------------- generated sources
docsgen.generate(DOCS, ROOT)

os.environ.setdefault("RFCHECK_NOTEBOOK_QUICK", "1")
_NB_OUT = DOCS / "notebooks"
_NB_OUT.mkdir(exist_ok=True)
# the jupytext notebooks (percent format); other .py files there are modules the notebooks import
_notebooks = sorted(p for p in (ROOT / "notebooks").glob("*.py") if "\n# %%" in p.read_text())
for _old in _NB_OUT.glob("*.ipynb"):
    if _old.stem not in {p.stem for p in _notebooks}:
        _old.unlink()
for _src in sorted((ROOT / "notebooks").glob("*.py")):  # modules the notebooks import and link to
    if _src not in _notebooks and (not (_NB_OUT / _src.name).exists()
                                   or (_NB_OUT / _src.name).read_bytes() != _src.read_bytes()):
        (_NB_OUT / _src.name).write_bytes(_src.read_bytes())
for _src in _notebooks:
    _dst = _NB_OUT / f"{_src.stem}.ipynb"
    _nb = jupytext.read(_src)
    _nb.metadata.setdefault("kernelspec", {"display_name": "Python 3", "language": "python", "name": "python3"})
    _text = jupytext.writes(_nb, fmt="ipynb")
    if not _dst.exists() or _dst.read_text() != _text:
        _dst.write_text(_text)

# ---------------------------------------------------------------- general
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_templates", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints", "jupyter_execute"]
templates_path = ["_templates"]
nitpicky = True
# optional pages written by others (docs/guide/verify_your_paper.md, auditing.md) are globbed:
# a guide that is not there yet leaves its toctree entry empty instead of failing the build
suppress_warnings = ["toc.empty_glob"]

# ---------------------------------------------------------------- autodoc / autosummary / numpydoc
# the module pages written by docsgen (an explicit list: on an incremental build Sphinx would only
# look at the documents it knew before, missing a module added since)
autosummary_generate = sorted(f"api/{p.name}" for p in (DOCS / "api").glob("*.rst"))
autosummary_imported_members = True
autosummary_ignore_module_all = False
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()


def _big_values() -> list[str]:
    """Module-level data whose repr is long (dicts of claims, figure tables): shown without the value."""
    out = []
    for mod, names in docsgen.public_names().items():
        m = sys.modules[mod]
        for n in names:
            obj = getattr(m, n, None)
            if docsgen._is_data(obj):
                try:
                    r = repr(obj)
                except Exception:
                    r = "x" * 200
                if len(r) > 70 or "<" in r:
                    out.append(f"{mod}.{n}")
    return out


autosummary_context = {"hide_value": _big_values()}

# objects documented under two names (a module re-exporting another's) keep distinct stub files
# on case-insensitive file systems too (rfcheck.ledger.paper / rfcheck.ledger.Paper)
_seen: dict[str, str] = {}
autosummary_filename_map = {}
for _mod, _names in docsgen.public_names().items():
    for _n in _names:
        _full = f"{_mod}.{_n}"
        if _full.lower() in _seen:
            autosummary_filename_map[_full] = f"{_full}-{'lower' if _n.islower() else 'upper'}"
        _seen[_full.lower()] = _full

# ---------------------------------------------------------------- MyST / myst-nb
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3
_ledger = docsgen.load_ledger(ROOT)
myst_substitutions = {"headline": docsgen.headline(_ledger.entries), "version": release}
_mode = os.environ.get("RFCHECK_DOCS_EXECUTE", "cache")
nb_execution_mode = _mode if _mode in ("off", "cache", "force", "auto") else "cache"
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
nb_execution_excludepatterns: list[str] = []

# ---------------------------------------------------------------- nitpicky exceptions
# Types named in signatures and docstrings that belong to other projects (no intersphinx: the
# build runs offline).
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|mpmath|sympy|jax|jnp|matplotlib|dask|distributed|hypothesis|numba|"
               r"collections|typing|pathlib|concurrent|argparse|enum|types)\..*"),
    (r"py:class", r"(ndarray|array_like|ArrayLike|optional|callable|Callable|Path|Axes|Figure|mpf|mpc)"),
]
nitpick_ignore: list[tuple[str, str]] = []

# ---------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"rfcheck {release}"
html_static_path = ["_static"]
html_css_files = ["rfcheck.css"]
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "collapse_navigation": True,
    "navigation_depth": 2,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "getting_started": []}
html_context = {"default_mode": "light"}

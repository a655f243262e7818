"""Shared test configuration: Hypothesis profiles, and the number of workers of ``-n auto``.

``ci`` (the default) is deterministic -- derandomized, no example database, no deadline
(Numba compilation and mpmath references break deadlines) -- so a run is reproducible.
``thorough`` draws many more examples; select it with ``HYPOTHESIS_PROFILE=thorough``.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=50,
    print_blob=True,
)
settings.register_profile(
    "thorough",
    database=None,
    deadline=None,
    max_examples=2000,
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: ``-n auto`` (the pytest configuration's default) starts one worker per core, at most this many:
#: each worker imports NumPy, Numba, SciPy, SymPy, mpmath and JAX and compiles its own kernels (about
#: half a gigabyte each), and with more workers the longest test module (the site build) sets the
#: time anyway
MAX_AUTO_WORKERS = 8


def pytest_xdist_auto_num_workers(config: object) -> int | None:
    """Workers for ``-n auto``: the usable cores, at most :data:`MAX_AUTO_WORKERS`
    (``PYTEST_XDIST_AUTO_NUM_WORKERS``, when set, is left to pytest-xdist)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_AUTO_WORKERS))

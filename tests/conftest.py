"""Shared test configuration: Hypothesis profiles.

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

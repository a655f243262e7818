"""Deprecated path of :mod:`rfcheck.estimators.hrf` (moved there; this path goes in the next release).

Importing it warns (:class:`DeprecationWarning`) and gives the module object of the new path,
so private names and monkeypatching reach the same module.
"""

import sys
import warnings

from rfcheck.estimators import hrf as _new_module

warnings.warn("rfcheck.hybrid moved to rfcheck.estimators.hrf; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _new_module

"""Deprecated path of :mod:`rfcheck.estimators.rfa` (moved there; this path goes in the next release).

Importing it warns (:class:`DeprecationWarning`) and gives the module object of the new path,
so private names and monkeypatching reach the same module.
"""

import sys
import warnings

from rfcheck.estimators import rfa as _new_module

warnings.warn("rfcheck.rfa moved to rfcheck.estimators.rfa; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _new_module

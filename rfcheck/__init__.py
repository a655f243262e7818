"""rfcheck: is this formula about a random-feature estimator right?

The package verifies variance/MSE formulas of random-feature kernel estimators against
independent references (high-precision quadrature, symbolic derivation, Monte Carlo with
calibrated statistics) and carries the corrected closed forms.

The names below are the main entry points, importable from ``rfcheck`` itself; each lives in
the module named in its documentation (``rfcheck.paper`` is :func:`rfcheck.ledger.paper`), and
every other public name is in its module (``rfcheck.closed_forms.crt``, ``rfcheck.attention``,
...).  They are imported on first use, so ``import rfcheck`` is cheap.

Verify a paper
    :func:`paper`, :func:`assert_verdict`, :class:`Domain`, :class:`Real`, :class:`Int`,
    :class:`Choice` (:mod:`rfcheck.ledger`); :func:`run_claim` (:mod:`rfcheck.verify`).
Test an estimator or a sampler
    :func:`assert_unbiased`, :func:`assert_variance_matches`, :func:`assert_no_worse_than`,
    :func:`assert_sampler_valid`, :func:`check_estimator`, :class:`Inconclusive`
    (:mod:`rfcheck.testing`); :class:`Estimator` (:mod:`rfcheck.custom`);
    :func:`audit_sampler` (:mod:`rfcheck.audit`).
Simulate and estimate
    :func:`simulate` (:mod:`rfcheck.engine.montecarlo`); :func:`estimate_mse`,
    :func:`estimate_mean` (:mod:`rfcheck.stats`).

Examples
--------
>>> import numpy as np
>>> import rfcheck
>>> est = rfcheck.estimate_mse(np.array([0.9, 1.1, 1.0, 1.2, 0.8]), 1.0)
>>> round(est.value, 3), round(est.se, 3)
(0.02, 0.008)
"""

from __future__ import annotations

import importlib
from typing import Any

#: the version of the installed package (``rfcheck --version`` prints it)
__version__ = "0.1.0"

#: where each name of :data:`__all__` lives (``name -> module``)
_HOMES = {
    "paper": "rfcheck.ledger",
    "assert_verdict": "rfcheck.ledger",
    "Domain": "rfcheck.ledger",
    "Real": "rfcheck.ledger",
    "Int": "rfcheck.ledger",
    "Choice": "rfcheck.ledger",
    "run_claim": "rfcheck.verify",
    "assert_unbiased": "rfcheck.testing",
    "assert_variance_matches": "rfcheck.testing",
    "assert_no_worse_than": "rfcheck.testing",
    "assert_sampler_valid": "rfcheck.testing",
    "check_estimator": "rfcheck.testing",
    "Inconclusive": "rfcheck.testing",
    "Estimator": "rfcheck.custom",
    "audit_sampler": "rfcheck.audit",
    "simulate": "rfcheck.engine.montecarlo",
    "estimate_mse": "rfcheck.stats",
    "estimate_mean": "rfcheck.stats",
}

__all__ = ["__version__", *_HOMES]


def __getattr__(name: str) -> Any:
    """Import the entry points and the subpackages (``rfcheck.features``, ...) on first use."""
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""rfcheck: is this formula about a random-feature estimator right?

The package verifies variance/MSE formulas of random-feature kernel estimators
against independent references (high-precision quadrature, symbolic derivation,
Monte Carlo with calibrated statistics) and carries the corrected closed forms.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]

"""NumPy reference estimators of the papers, checked against the exact results of
:mod:`rfcheck.closed_forms` (which holds closed forms only).

One module per paper: :mod:`rfcheck.estimators.darkformer` (Mahalanobis positive features,
importance weighting, a nested Monte Carlo of the variance) and
:mod:`rfcheck.estimators.rfa` (the RFA trigonometric feature map).
"""

__all__: list[str] = []

"""NumPy reference estimators of the papers, checked against the exact results of
:mod:`rfcheck.closed_forms` (which holds closed forms only).

One module per paper: :mod:`rfcheck.estimators.crt` (the discretely-induced PoisRF / GeomRF
features and the variance comparison of Figure 2), :mod:`rfcheck.estimators.darkformer`
(Mahalanobis positive features, importance weighting, a nested Monte Carlo of the variance),
:mod:`rfcheck.estimators.hrf` (the hybrid random features: base estimators,
lambda-coefficients, hybrids, with explicit draws) and :mod:`rfcheck.estimators.rfa` (the RFA
trigonometric feature map and the attention algorithms with operation counts).

``rfcheck.hybrid``, ``rfcheck.rfa``, ``rfcheck.discrete`` and ``rfcheck.crt_variance`` (version
0.1.0) still import, with a :class:`DeprecationWarning`, and give the module objects of their new
paths, for one release.
"""

#: the old top-level paths of the estimators' modules (deprecated shims, removed in the next release)
_MOVED = {
    "rfcheck.hybrid": "rfcheck.estimators.hrf",
    "rfcheck.rfa": "rfcheck.estimators.rfa",
    "rfcheck.discrete": "rfcheck.estimators.crt",
    "rfcheck.crt_variance": "rfcheck.estimators.crt",
}

__all__: list[str] = []

"""Random Feature Attention (RFA, seed 002): the trigonometric feature map.

A feature map, not a closed form, so it lives here rather than in
:mod:`rfcheck.closed_forms.rfa` (which holds the kernel identity and its limits, closed forms
only); the attention algorithms that consume it are in :mod:`rfcheck.rfa`.  The map itself is
:func:`rfcheck.features.trig_feature_map` without the norm factor ``exp(|x|^2/2)``.

References
----------
Peng et al., *Random Feature Attention*, ICLR 2021, sec 2 ("Background: Random Feature
Methods"; summary in seed 002).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfcheck.features import trig_feature_map

__all__ = ["trig_features"]


def trig_features(x: Any, w: Any) -> np.ndarray:
    """RFA feature map ``phi(x) = D^{-1/2} [sin(w_1.x) .. sin(w_D.x), cos(w_1.x) .. cos(w_D.x)]``.

    Parameters
    ----------
    x : array_like
        Shape (n, d) (or (d,)), the inputs.
    w : array_like
        Shape (D, d) (or (d,)), the projections (the printed summary draws ``w ~ N(0, sigma^2 I)``;
        :func:`rfcheck.closed_forms.rfa.log_rff_limit` shows ``N(0, sigma^{-2} I)`` is what the
        kernel needs).

    Returns
    -------
    numpy.ndarray
        Shape (n, 2D): ``phi(x)`` row by row (sines, then cosines):
        :func:`rfcheck.features.trig_feature_map` with ``norm_factor=False``.

    Raises
    ------
    ValueError
        If ``x`` and ``w`` differ in dimension ``d``, or either holds NaN or inf.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021, sec 2 ("Background: Random Feature
    Methods"): the feature map ``phi``.

    Examples
    --------
    >>> trig_features([[0.0, 0.0]], [[1.0, 0.0]])
    array([[0., 1.]])
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    w = np.atleast_2d(np.asarray(w, dtype=float))
    if x.shape[1] != w.shape[1]:
        raise ValueError(f"x is in R^{x.shape[1]} but w in R^{w.shape[1]}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(w))):
        raise ValueError("x and w must be finite (no NaN/inf)")
    return trig_feature_map(x, w, norm_factor=False)

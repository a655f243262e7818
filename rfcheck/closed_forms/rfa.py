"""Random Feature Attention (RFA, seed 002): the kernel behind the trigonometric features.

The summary prints, with ``w_i ~ N(0, sigma^2 I_d)`` iid and
``phi(x) = D^{-1/2} [sin(w_i.x), cos(w_i.x)]_i``,

    exp(x.y / sigma^2) ~= exp((|x|^2 + |y|^2) / (2 sigma^2)) phi(x).phi(y)   (D -> inf).

Since ``phi(x).phi(y) = D^{-1} sum_i cos(w_i.(x - y))``, its limit is the characteristic
function of ``w``:  ``E cos(w.delta) = exp(-s^2 |delta|^2 / 2)`` for ``w ~ N(0, s^2 I)``.
The right-hand side therefore tends to

    exp((|x|^2 + |y|^2)/(2 sigma^2) - s^2 |x - y|^2 / 2),

which equals ``exp(x.y/sigma^2)`` for all ``x, y`` iff ``s^2 = 1/sigma^2``: the identity
holds with ``w ~ N(0, sigma^{-2} I_d)`` (Rahimi & Recht's Gaussian kernel
``exp(-|x-y|^2/(2 sigma^2))`` has spectral density ``N(0, sigma^{-2} I)``), and with the
printed ``N(0, sigma^2 I_d)`` only at ``sigma = 1``.

The feature map ``phi`` itself is :func:`rfcheck.estimators.rfa.trig_features` (this module
holds closed forms only).

References
----------
Peng et al., *Random Feature Attention*, ICLR 2021 (summary in seed 002, "Background:
Random Feature Methods"); Rahimi & Recht (2007).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from rfcheck.backends import formula

__all__ = ["check_sigma", "log_kernel_limit", "log_rff_limit"]


def check_sigma(sigma: Any, *rest: Any) -> None:
    """``ValueError`` unless the scale ``sigma`` is finite and > 0.

    Parameters
    ----------
    sigma : float or array_like
        The RFA scale ``sigma`` (``w ~ N(0, sigma^2 I_d)`` as printed); every entry finite, > 0.
    *rest : float or array_like
        Squared norms (``|x|^2``, ``|y|^2``, ``|x - y|^2``, a variance), each finite and >= 0.

    Raises
    ------
    ValueError
        If ``sigma`` is not finite or not > 0, or a value of ``rest`` is not finite or < 0.

    Examples
    --------
    >>> check_sigma(1.0, 2.0, 0.0)
    >>> check_sigma(0.0)
    Traceback (most recent call last):
    ...
    ValueError: sigma must be finite and > 0
    """
    a = np.asarray(sigma, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError("sigma must be finite and > 0")
    for r in rest:
        if not np.all(np.isfinite(np.asarray(r, dtype=float))):
            raise ValueError("norms must be finite (no NaN/inf)")
        if np.any(np.asarray(r, dtype=float) < 0):
            raise ValueError("squared norms must be >= 0")


_TRIANGLE_SLACK = 1e-9  # relative rounding slack of the triangle inequality of the squared norms


def _check_norms(sigma: Any, sq_x: Any, sq_y: Any, sq_diff: Any, *w_var: Any) -> None:
    """:func:`check_sigma`, and ``|x - y|`` between ``||x| - |y||`` and ``|x| + |y|`` (triangle
    inequality; squared norms of real vectors), up to a relative rounding slack of 1e-9."""
    check_sigma(sigma, sq_x, sq_y, sq_diff, *w_var)
    a, b, c = (np.asarray(v, dtype=float) for v in (sq_x, sq_y, sq_diff))
    nx, ny = np.sqrt(a), np.sqrt(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(nx + ny > 0, (a - b) ** 2 / (nx + ny) ** 2, 0.0)  # (|x| - |y|)^2 without cancellation
    slack = _TRIANGLE_SLACK * (a + b)
    if np.any(c > (nx + ny) ** 2 + slack) or np.any(c < lo - slack):
        raise ValueError("impossible squared norms: need (|x| - |y|)^2 <= |x - y|^2 <= (|x| + |y|)^2 "
                         "(triangle inequality) for sq_x = |x|^2, sq_y = |y|^2, sq_diff = |x - y|^2")


def _rff_limit_conditioning(ctx: Any, sigma: Any, sq_x: Any, sq_y: Any, sq_diff: Any, w_var: Any) -> Any:
    """The terms are carried to twice the working precision: what rounding errors remain is
    ``~eps^2 (|t1| + |t2|)``, so the cancellation ``(|t1| + |t2|)/|t1 - t2|`` counts ``16 eps``
    times (float64 points where even that leaves fewer digits are recomputed in mpmath)."""
    t1, t2 = (sq_x + sq_y) / (2 * sigma**2), w_var * sq_diff / 2
    return 1 + 16 * 2.0**-52 * (ctx.abs(t1) + ctx.abs(t2)) / ctx.abs(t1 - t2)


@formula(check=_check_norms, conditioning=_rff_limit_conditioning)
def log_rff_limit(ctx: Any, sigma: Any, sq_x: Any, sq_y: Any, sq_diff: Any, w_var: Any) -> Any:
    """``log lim_{D->inf} exp((|x|^2+|y|^2)/(2 sigma^2)) phi(x).phi(y)`` when
    ``w ~ N(0, w_var I)``:  ``(|x|^2 + |y|^2)/(2 sigma^2) - w_var |x - y|^2 / 2``.

    The printed RFA identity uses ``w_var = sigma^2``; the correct spectral variance is
    ``w_var = 1/sigma^2``, where the two terms cancel: the float64 face carries them as
    double-double numbers (error-free sums and products), so the difference keeps its digits
    (points where even that is not enough are recomputed in mpmath); squared norms that violate
    the triangle inequality raise ``ValueError``.  A :func:`rfcheck.backends.formula`: it also
    takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    sigma : float or array_like
        The RFA scale, > 0.
    sq_x, sq_y : float or array_like
        ``|x|^2`` and ``|y|^2``, >= 0.
    sq_diff : float or array_like
        ``|x - y|^2``, >= 0, within the triangle inequality of ``sq_x``, ``sq_y``.
    w_var : float or array_like
        Variance of each coordinate of the projections ``w_i`` (``sigma^2`` as printed,
        ``1/sigma^2`` for the Gaussian kernel's spectral density), >= 0.

    Returns
    -------
    float or numpy.ndarray
        The log of the ``D -> inf`` limit of the right-hand side (broadcast shape of the
        arguments; mpmath numbers on the mpmath face).

    Raises
    ------
    ValueError
        If ``sigma <= 0``, a value is not finite or negative, or the squared norms violate the
        triangle inequality.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021, sec 2 ("Background: Random Feature
    Methods"); Rahimi & Recht (2007).

    Examples
    --------
    >>> float(log_rff_limit(1.0, 1.0, 1.0, 2.0, 1.0))  # sigma = 1: printed and correct agree
    0.0
    """
    plain = (sq_x + sq_y) / (2 * sigma**2) - w_var * sq_diff / 2
    if ctx.name != "float64":
        return plain
    s_hi, s_lo = ctx.two_sum(sq_x, sq_y)
    d_hi, d_lo = ctx.two_prod(sigma, sigma)  # sigma^2 = d_hi + d_lo
    t1 = s_hi / (2 * d_hi)
    p_hi, p_lo = ctx.two_prod(t1, 2 * d_hi)
    t1_lo = (((s_hi - p_hi) - p_lo) + s_lo - t1 * 2 * d_lo) / (2 * d_hi)  # (s_hi - p_hi: exact)
    t2, t2_lo = ctx.two_prod(w_var, sq_diff)
    h, e = ctx.two_sum(t1, -t2 / 2)
    dd = h + (e + t1_lo - t2_lo / 2)
    return np.where(np.isfinite(dd), dd, plain)[()]  # (the error-free product overflows above ~1e290)


@formula(check=_check_norms)
def log_kernel_limit(ctx: Any, sigma: Any, sq_x: Any, sq_y: Any, sq_diff: Any) -> Any:
    """``x.y / sigma^2`` written with the norms (the log of the target ``exp(x.y/sigma^2)``):
    ``(|x|^2 + |y|^2 - |x - y|^2) / (2 sigma^2)``, the numerator a compensated sum of the exact
    inputs (it cancels where ``x`` is nearly orthogonal to ``y``).  Squared norms that violate
    the triangle inequality raise ``ValueError``.  A :func:`rfcheck.backends.formula`: it also
    takes ``backend="float64" | "mpmath"`` and ``dps``.

    Parameters
    ----------
    sigma : float or array_like
        The RFA scale, > 0.
    sq_x, sq_y : float or array_like
        ``|x|^2`` and ``|y|^2``, >= 0.
    sq_diff : float or array_like
        ``|x - y|^2``, >= 0, within the triangle inequality of ``sq_x``, ``sq_y``.

    Returns
    -------
    float or numpy.ndarray
        ``x.y / sigma^2`` (broadcast shape of the arguments; mpmath numbers on the mpmath face).

    Raises
    ------
    ValueError
        If ``sigma <= 0``, a value is not finite or negative, or the squared norms violate the
        triangle inequality.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021, sec 2 (the kernel ``exp(x.y / sigma^2)``).

    Examples
    --------
    >>> float(log_kernel_limit(2.0, 1.0, 1.0, 0.0))  # (1 + 1 - 0) / (2 * 2^2)
    0.25
    """
    return ctx.fsum(sq_x, sq_y, -sq_diff) / (2 * sigma**2)


def trig_features(x: Any, w: Any) -> np.ndarray:
    """Deprecated alias of :func:`rfcheck.estimators.rfa.trig_features` (a feature map, not a closed form).

    .. deprecated::
        Moved to :func:`rfcheck.estimators.rfa.trig_features`; this alias will be removed in the
        next release.

    Parameters
    ----------
    x, w : array_like
        As in :func:`rfcheck.estimators.rfa.trig_features`.

    Returns
    -------
    numpy.ndarray
        ``rfcheck.estimators.rfa.trig_features(x, w)``.

    References
    ----------
    Peng et al., *Random Feature Attention*, ICLR 2021, sec 2: the feature map ``phi``.
    """
    warnings.warn("rfcheck.closed_forms.rfa.trig_features is deprecated: it moved to "
                  "rfcheck.estimators.rfa.trig_features (a feature map, not a closed form)",
                  DeprecationWarning, stacklevel=2)
    from rfcheck.estimators.rfa import trig_features as _trig_features

    return _trig_features(x, w)

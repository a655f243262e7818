"""Reference computations for printed results restated at attention scale (``rfcheck.attention``).

The exact side of the max-relative-error ordering of Hybrid Random Features (sec 4, Figures 2
and 5) on an ``L x L`` attention matrix whose queries and keys lie on ``S(r)`` at angles
``k pi/(L - 1)`` (:func:`rfcheck.attention.maxrel.sphere_grid_data`): the largest per-entry
relative RMSE of each estimator over the matrix, from the closed forms in mpmath.

References
----------
Choromanski et al., *Hybrid Random Features*, ICLR 2022: Lemma 3.4 eq (25) (relative errors of
SM^trig and SM^++), Thm D.1 eq (45) (the angular hybrid), sec 4.
"""

from __future__ import annotations

from typing import Any

import mpmath

__all__ = ["grid_max_log_rel_errors"]


def grid_max_log_rel_errors(r: float, n_grid: int, base: str, dps: int) -> tuple[Any, Any, Any]:
    """``log max eps`` over the grid matrix of the angular hybrid and of a base estimator.

    Parameters
    ----------
    r : float
        Norm of the queries and keys.
    n_grid : int
        ``L``: the matrix's distinct angles are ``k pi/(L - 1)``, ``k = 0..L-1``.
    base : {"trig", "pos"}
        SM^trig or SM^++ (FAVOR+) with ``FIG2_M`` features; the hybrid with ``FIG2_HYBRID``
        (:mod:`rfcheck.estimators.hrf`).
    dps : int
        Digits; the maxima are taken at ``dps + 10``.

    Returns
    -------
    (mpmath.mpf, mpmath.mpf, mpmath.mpf)
        The hybrid's and the base's ``log max eps`` (rounded to ``dps``), and a rounding error
        bar ``10^(5 - dps) (|hybrid| + |base|)`` of their difference.

    Raises
    ------
    ValueError
        If ``base`` is neither ``"trig"`` nor ``"pos"``, or if ``n_grid < 2``.

    References
    ----------
    HRF Lemma 3.4 eq (25) (SM^trig, SM^++), Thm D.1 eq (45) (the angular hybrid), sec 4 and
    Figures 2 and 5.

    Examples
    --------
    At ``r = 1`` on five angles the hybrid's largest relative error is below SM^trig's:

    >>> from rfcheck.references.attention import grid_max_log_rel_errors
    >>> hyb, bas, err = grid_max_log_rel_errors(1.0, 5, "trig", 15)
    >>> bool(hyb + err < bas), bool(0 < err < 1e-8)
    (True, True)
    """
    from rfcheck.backends import MP
    from rfcheck.closed_forms import hrf as hcf
    from rfcheck.estimators.hrf import FIG2_HYBRID, FIG2_M

    if base not in ("trig", "pos"):
        raise ValueError(f"base must be 'trig' or 'pos'; got {base!r}")
    if int(n_grid) < 2:
        raise ValueError(f"need at least 2 grid angles; got {n_grid}")
    base_fn = hcf.log_rel_error_trig if base == "trig" else hcf.log_rel_error_pos
    with mpmath.workdps(dps + 10):
        rm = mpmath.mpf(r)
        th = [k * mpmath.pi / (int(n_grid) - 1) for k in range(int(n_grid))]
        hyb = max(hcf.log_rel_error_angular_hybrid.impl(MP, rm, t, *FIG2_HYBRID) for t in th)
        bas = max(base_fn.impl(MP, rm, t, FIG2_M) for t in th)
    with mpmath.workdps(dps):
        return +hyb, +bas, mpmath.mpf(10) ** (5 - dps) * (abs(hyb) + abs(bas))

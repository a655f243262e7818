"""Reference computations for printed results restated at attention scale (``rfcheck.attention``).

The attention-scale Monte Carlo studies the restated claims read (memoised: one study serves
every claim and check at the same sizes), the orderings they test, and the exact side of the
max-relative-error ordering of Hybrid Random Features (sec 4, Figures 2
and 5) on an ``L x L`` attention matrix whose queries and keys lie on ``S(r)`` at angles
``k pi/(L - 1)`` (:func:`rfcheck.attention.maxrel.sphere_grid_data`): the largest per-entry
relative RMSE of each estimator over the matrix, from the closed forms in mpmath.

References
----------
Choromanski et al., *Hybrid Random Features*, ICLR 2022: Lemma 3.4 eq (25) (relative errors of
SM^trig and SM^++), Thm D.1 eq (45) (the angular hybrid), sec 4.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import mpmath
import numpy as np

__all__ = ["STUDY_D", "STUDY_SCALE", "attention_study", "dark_study_data", "grid_max_log_rel_errors", "maxrel_study",
           "study_ordering"]

#: dimension of the queries and keys of the attention-scale studies
STUDY_D = 16
#: typical norm of the isotropic queries and keys (rows ``N(0, (STUDY_SCALE^2/STUDY_D) I)``)
STUDY_SCALE = 0.5


def dark_study_data(L: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Anisotropic Gaussian queries and keys of the DARKFormer attention study.

    ``Lambda = diag(geomspace(0.15, 0.0015, STUDY_D))`` (eigenvalues below ``1/6``, so the isotropic
    proposal's variance is finite too), ``q_i, k_j ~ N(0, Lambda)`` from NumPy's generator seeded
    ``seed + 7``.

    Parameters
    ----------
    L : int
        Number of queries (and keys).
    seed : int
        The study's seed.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        ``q`` and ``k`` (``L x STUDY_D``) and ``Lambda``.

    References
    ----------
    DARKFormer Theorem 3.2 item 2 (the aligned proposal ``N(0, Sigma*)`` against ``N(0, I)``).

    Examples
    --------
    >>> from rfcheck.references.attention import dark_study_data
    >>> q, k, lam = dark_study_data(4, 0)
    >>> q.shape, k.shape, float(lam[0, 0]), bool(lam.max() < 1 / 6), bool((q != k).all())
    ((4, 16), (4, 16), 0.15, True, True)
    """
    lam = np.diag(np.geomspace(0.15, 0.0015, STUDY_D))  # anisotropic, eigenvalues < 1/6: variances finite
    rng = np.random.default_rng(seed + 7)
    root = np.sqrt(lam)
    return rng.standard_normal((L, STUDY_D)) @ root, rng.standard_normal((L, STUDY_D)) @ root, lam


@lru_cache(maxsize=8)
def attention_study(L: int, m: int, R: int, seed: int, dark: bool) -> Any:
    """The pair-averaged MSE study of linear attention (:func:`rfcheck.attention.mse.run_study`), memoised.

    Isotropic inputs (:func:`rfcheck.attention.mse.isotropic_data`, ``STUDY_D``, ``STUDY_SCALE``) with
    every variant, or (``dark``) the DARKFormer proposals on :func:`dark_study_data`.  Needs JAX.

    Parameters
    ----------
    L : int
        Sequence length (the matrix is ``L x L``).
    m : int
        Number of random features.
    R : int
        Number of independent feature draws.
    seed : int
        Seed of the data and of the draws.
    dark : bool
        The DARKFormer study (aligned and isotropic proposals) instead of the isotropic one.

    Returns
    -------
    rfcheck.attention.mse.Study
        Its ``variants`` (per-variant MSE, SE, closed form) and ``entries`` (equality and ordering tests).

    References
    ----------
    CRT Thm 3.2, 3.3, 4.1; SimRF Cor 3.3; DARKFormer Thm 3.2 item 2; HRF Thm D.1 eq (45) -- each
    restated for the attention matrix.

    Examples
    --------
    Without JAX nothing runs; with it, a tiny study, computed once:

    >>> import importlib.util
    >>> from rfcheck.references.attention import attention_study
    >>> st = attention_study(4, 2, 64, 0, False) if importlib.util.find_spec("jax") else None
    >>> st is None or (st is attention_study(4, 2, 64, 0, False) and "prf-iid" in st.variants)
    True
    """
    from rfcheck.attention import mse

    if dark:
        q, k, lam = dark_study_data(L, seed)
        return mse.run_study(q, k, num_features=m, n_draws=R, seed=seed, variants=(), dark_cov=lam)
    q, k = mse.isotropic_data(L, STUDY_D, scale=STUDY_SCALE, seed=seed)
    return mse.run_study(q, k, num_features=m, n_draws=R, seed=seed)


def study_ordering(study: Any, a: str, b: str) -> tuple[dict[str, Any], float]:
    """The study's ordering test between variants ``a`` and ``b``, and the sign that reads it as ``a <= b``.

    Parameters
    ----------
    study : rfcheck.attention.mse.Study
        A study (:func:`attention_study`); only its ``entries`` are read.
    a, b : str
        Variant names.

    Returns
    -------
    (dict, float)
        The entry testing ``a <= b`` with sign 1, or the one testing ``b <= a`` with sign -1 (its
        paired difference and ``z`` then flip).

    Raises
    ------
    ValueError
        If the study tests no ordering between ``a`` and ``b``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from rfcheck.references.attention import study_ordering
    >>> e = {"kind": "ordering", "statement": "pair-averaged MSE of x <= that of y", "z": -3.0}
    >>> st = SimpleNamespace(entries=[e])
    >>> study_ordering(st, "x", "y")[1], study_ordering(st, "y", "x")[1]
    (1.0, -1.0)
    >>> study_ordering(st, "x", "w")
    Traceback (most recent call last):
    ...
    ValueError: the attention study has no ordering between x and w
    """
    for x in study.entries:  # the study tests its fixed orderings; a reversed one flips the sign
        if x["kind"] == "ordering" and x["statement"] == f"pair-averaged MSE of {a} <= that of {b}":
            return x, 1.0
        if x["kind"] == "ordering" and x["statement"] == f"pair-averaged MSE of {b} <= that of {a}":
            return x, -1.0
    raise ValueError(f"the attention study has no ordering between {a} and {b}")


@lru_cache(maxsize=8)
def maxrel_study(r: float, L: int, R: int, seed: int) -> Any:
    """The max-relative-error study of HRF sec 4 on the ``L x L`` sphere-grid matrix
    (:func:`rfcheck.attention.maxrel.run_maxrel`, ``d = 64``), memoised.  Needs JAX.

    Parameters
    ----------
    r : float
        Norm of the queries and keys.
    L : int
        Number of grid angles.
    R : int
        Number of feature draws.
    seed : int
        Seed of the draws.

    Returns
    -------
    rfcheck.attention.maxrel.MaxRelStudy
        Its ``entries``: the paired ordering tests ``hybrid <= trig`` and ``hybrid <= pos``.

    References
    ----------
    HRF sec 4, Figures 2 and 5.

    Examples
    --------
    Without JAX nothing runs; with it, a tiny study (4 angles), computed once:

    >>> import importlib.util
    >>> from rfcheck.references.attention import maxrel_study
    >>> st = maxrel_study(1.0, 4, 64, 0) if importlib.util.find_spec("jax") else None
    >>> ids = {"attention.maxrel.hybrid<=trig", "attention.maxrel.hybrid<=pos"}
    >>> st is None or (st is maxrel_study(1.0, 4, 64, 0) and ids <= {e["id"] for e in st.entries})
    True
    """
    from rfcheck.attention import maxrel

    return maxrel.run_maxrel(r, n=L, d=64, n_draws=R, seed=seed)


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

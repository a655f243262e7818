"""Couplings of the projections w_1..w_M (each row marginally N(0, I_d)).

A coupling is how the M projections of one ensemble are drawn *jointly*.  Each one in
:data:`COUPLINGS` provides

- an **ensemble sampler** (Numba): fills ``Wt`` (d, M), the transposed ensemble
  ``W.T``, from a generator state ``st`` (see :mod:`rfcheck.engine.rng`);
- where the law allows it, a **projection sampler** (Numba): fills, for one fixed unit
  vector ``u_hat``, ``t[m] = w_m . u_hat`` and ``sq[m] = |w_m|^2`` directly, without
  drawing the ensemble (``O(M + d)`` instead of ``O(d^3)`` for ORF);
- plain-Python twins of both, beside them in the same module, consuming the same random
  stream bit for bit (for the parity tests of :mod:`rfcheck.engine.montecarlo`).

The engines dispatch on the integer ``code`` of a coupling inside compiled code
(:func:`ensemble_into`, :func:`projection_into`); a new coupling adds a family module with its
samplers and twins, one branch in each dispatcher and an entry in :data:`COUPLINGS`.

Modules
-------
One module per coupling family, each holding its compiled kernels, their plain-Python twins
and the law they draw (see each module's page):

:mod:`~rfcheck.engine.couplings.iid`
    ``"iid"``: independent ``N(0, I_d)`` rows.
:mod:`~rfcheck.engine.couplings.orf`
    ``"orf"``: blocks of Haar directions with ``chi_d`` norms (Yu et al. 2016); the Haar
    block the simplex couplings rotate with.
:mod:`~rfcheck.engine.couplings.simrf`
    ``"simrf"``: simplex blocks ``D S R`` (Reid et al. 2023, eq (8)-(9)); needs ``d >= 2``.
:mod:`~rfcheck.engine.couplings.simrf_plus`
    ``"simrf+"``: the simplex blocks rearranged by the Gauss-Seidel update (eq 16-17).
:mod:`~rfcheck.engine.couplings.hd`
    ``"orf-hd"``, ``"simrf-hd"``: HD-product rotations (SimRF eq 89-90); ensemble path only,
    approximately Gaussian rows.
:mod:`~rfcheck.engine.couplings.anti`
    ``"<base>-anti"`` for ``iid``, ``orf``, ``simrf``, ``simrf+``: ``ceil(M/2)`` base rows,
    each followed by its negative.

and the mechanism they share:

:mod:`~rfcheck.engine.couplings.common`
    The integer codes, the scratch layout, the ``chi``-norm constants.
:mod:`~rfcheck.engine.couplings.dispatch`
    :func:`ensemble_into`, :func:`projection_into` and their scratch arrays.
:mod:`~rfcheck.engine.couplings.registry`
    :data:`COUPLINGS` (entries :class:`Coupling`, defined in this package), :func:`get_coupling`,
    the argument checks and the streams (:func:`stream_tag`).
:mod:`~rfcheck.engine.couplings.sampling`
    :func:`sample_ensemble`, :func:`sample_projection`, the twin
    :func:`sample_ensemble_reference`, :func:`simrf_plus_passes`.
:mod:`~rfcheck.engine.couplings.numpy_samplers`
    Independent NumPy samplers of SimRF+, the HD products and antithetic pairs (for the law
    tests).

Every public name is importable from this package (``from rfcheck.engine.couplings import
sample_ensemble``), as it was when the couplings were one module.

References
----------
F. X. Yu et al., "Orthogonal Random Features", NeurIPS 2016.  G. W. Stewart, "The
efficient generation of random orthogonal matrices with an application to condition
estimators", SIAM J. Numer. Anal. 17(3) (1980).  I. Reid, K. Choromanski, V. Likhosherstov,
A. Weller, "Simplex Random Features", ICML 2023 (eq (8)-(9), Algorithm 1).

Examples
--------
>>> from rfcheck.engine.couplings import COUPLINGS, sample_ensemble
>>> sample_ensemble("simrf+", 5, 4, seed=0).shape, COUPLINGS["simrf+"].min_d
((5, 4), 2)
"""
# ruff: noqa: E402 (Coupling is defined before the submodules that import it)

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Coupling:
    """A registered coupling.

    Parameters
    ----------
    name, code, description, block, has_projection, py_ensemble, py_projection : see Attributes
        The fields, in this order (positional or by keyword), as described under Attributes.
    min_d : int, optional
        Smallest dimension the coupling is defined for (default 1).
    exact_marginals : bool, optional
        Whether every row is exactly ``N(0, I_d)`` (default True).

    Attributes
    ----------
    name : str
        Registry key.
    code : int
        Integer dispatched on by :func:`~rfcheck.engine.couplings.ensemble_into` /
        :func:`~rfcheck.engine.couplings.projection_into`.
    description : str
        One line for reports.
    block : Callable[[int], int] | None
        Rows per independent block as a function of ``d`` (``None``: rows independent).
    has_projection : bool
        Whether a projection sampler exists (the law of ``(|w_m|^2, w_m . u_hat)`` is
        known in closed form).
    py_ensemble, py_projection : callable
        Plain-Python twins (same random stream) for the reference engine.
    min_d : int
        Smallest dimension the coupling is defined for (:func:`check_dim`).
    exact_marginals : bool
        Whether every row is exactly ``N(0, I_d)`` (false for the HD-product couplings,
        whose rotations are only approximately Haar: their estimators are biased).
    """

    name: str
    code: int
    description: str
    block: Callable[[int], int] | None
    has_projection: bool
    py_ensemble: Callable[..., np.ndarray]
    py_projection: Callable[..., tuple[list, list]] | None
    min_d: int = 1
    exact_marginals: bool = True


# The modules below import Coupling from here (the registry builds its entries), so it is defined
# before them: its public home is this package, where it is documented once although
# rfcheck.engine re-exports it too.  The integer codes, HD_FACTORS and the SimRF+ stopping rule
# stay importable here, as when the couplings were one module (documented in their modules).
from rfcheck.engine.couplings.common import (  # noqa: F401
    ANTI,
    IID,
    ORF,
    ORF_HD,
    SIMRF,
    SIMRF_HD,
    SIMRF_PLUS,
    empty_lines,
    pad8,
)
from rfcheck.engine.couplings.dispatch import ensemble_into, projection_into, projection_scratch, scratch
from rfcheck.engine.couplings.hd import HD_FACTORS, hd_dim  # noqa: F401
from rfcheck.engine.couplings.numpy_samplers import (
    SimRFPlusInfo,
    antithetic,
    fwht,
    hd_rotation,
    sample_fast,
    sample_simrf_plus,
    simrf_plus_block,
    truncated_conformity_objective,
)
from rfcheck.engine.couplings.registry import COUPLINGS as _COUPLINGS
from rfcheck.engine.couplings.registry import block_sizes, check_dim, get_coupling, stream_tag
from rfcheck.engine.couplings.sampling import (
    sample_ensemble,
    sample_ensemble_reference,
    sample_projection,
    simrf_plus_passes,
)
from rfcheck.engine.couplings.simrf_plus import SIMRF_PLUS_MAX_PASSES, SIMRF_PLUS_TOL  # noqa: F401

#: every coupling by name (``"iid"``, ``"orf"``, ``"simrf"``, ``"simrf+"``, their ``"-anti"``
#: antithetic variants, and the ensemble-only ``"orf-hd"``, ``"simrf-hd"``); the object
#: :data:`rfcheck.engine.couplings.registry.COUPLINGS`
COUPLINGS = _COUPLINGS

__all__ = [
    "COUPLINGS",
    "Coupling",
    "SimRFPlusInfo",
    "antithetic",
    "block_sizes",
    "check_dim",
    "empty_lines",
    "ensemble_into",
    "fwht",
    "get_coupling",
    "hd_dim",
    "hd_rotation",
    "pad8",
    "projection_into",
    "projection_scratch",
    "sample_ensemble",
    "sample_ensemble_reference",
    "sample_fast",
    "sample_projection",
    "sample_simrf_plus",
    "scratch",
    "simrf_plus_block",
    "simrf_plus_passes",
    "stream_tag",
    "truncated_conformity_objective",
]

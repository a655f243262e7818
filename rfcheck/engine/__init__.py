"""The Monte Carlo engine: seeded random streams, couplings of the projections, and compiled
samplers of random-feature estimators with plain-Python twins.

Nothing here is specific to one paper's claims: the claims (:mod:`rfcheck.claims`), the
references and the closed forms call into the engine.

Modules
-------
:mod:`rfcheck.engine.rng`
    Counter-seeded random streams: SplitMix64 generators seeded from ``(seed, stream,
    block)`` alone (:func:`~rfcheck.engine.rng.block_state`), so the numbers do not depend
    on the thread count; bulk normal, uniform and gamma draws; plain-Python twins
    (:class:`~rfcheck.engine.rng.PyRNG`) that give the same numbers bit for bit.
:mod:`rfcheck.engine.philox`
    Philox4x32-10 (32-bit multiplies) with a bulk normal fill and its twin: measured against
    SplitMix64 by ``rfcheck bench`` and slower on AVX-512 and AVX2 builds alike, so optional
    (nothing uses it by default).
:mod:`rfcheck.engine.ars`
    ARS-5 and ARS-7 (AES rounds; x86 AES-NI, 256-bit with VAES) with a bulk normal fill and its
    twin: measured against SplitMix64 by ``rfcheck bench``, the fill ~1.1x faster with VAES on
    Zen 3 and no faster without it, so optional (nothing uses it by default).
:mod:`rfcheck.engine.counter_normals`
    What the two alternatives share: a chunk of 64-bit words into ziggurat normals and fix-ups,
    and the plain-Python twin of their fill.
:mod:`rfcheck.engine.bits`
    Exact bit-level conversions (53-bit words to doubles, ``fma``) shared by the kernels
    and their twins.
:mod:`rfcheck.engine.wy`
    The compact-WY Householder panel kernels (LLVM, ``noalias``) of the orthogonal samplers.
:mod:`rfcheck.engine.simd_ziggurat`
    The bulk ziggurat's fast pass as an LLVM kernel on 8-wide vectors (AVX-512 targets).
:mod:`rfcheck.engine.gauss_seidel`
    The SimRF+ Gauss-Seidel step as an LLVM kernel on 8-wide vectors, and the pass with known
    factors (SimRF+'s scalar route) on 4 x 4 tiles transposed in registers.
:mod:`rfcheck.engine.project`
    The projections ``W^T u`` (and column norms) of every ensemble trial as an LLVM kernel,
    bit for bit the loop it replaces.
:mod:`rfcheck.engine.llvm_vectors`
    The LLVM IR helpers those four kernels share (broadcast, vector pointer, target features).
:mod:`rfcheck.engine.couplings`
    The couplings of the ``M`` projections of one ensemble (``iid``, ``orf``, ``simrf``,
    ``simrf+``, the antithetic ``<base>-anti`` and the HD-product ``orf-hd`` /
    ``simrf-hd``), one module per family holding its ensemble and projection kernels and
    their Python twins; beside them the dispatch on a coupling's integer code inside
    compiled code, the registry :data:`COUPLINGS` and NumPy samplers.
:mod:`rfcheck.engine.montecarlo`
    Independent replicas of the estimator ``K_hat_M`` of an exponential feature product
    (:func:`simulate`), on the ensemble or the projection path, with its plain-Python twin
    and a NumPy baseline.
:mod:`rfcheck.engine.discrete_engine`
    The same for discretely-induced random features (Poisson / geometric projections,
    :func:`simulate_discrete`).

Streams, twins and reproducibility
----------------------------------
Trials are split into fixed blocks, each with its own generators seeded from the user seed,
a stream tag (per coupling, per estimator) and the block index; within a block, draws and
sums are taken in a fixed order.  Every compiled kernel has a plain-Python twin consuming
the same stream, and the parity tests require the two to agree to the last bit.  The Numba
on-disk cache of every kernel is keyed to the contents of the engine's files
(:func:`rfcheck.engine.rng.tie_cache_to_engine`), so an edit anywhere recompiles.

Public surface
--------------
:func:`simulate`, :func:`simulate_discrete`, :func:`sample_ensemble`,
:func:`sample_projection`, the coupling registry :data:`COUPLINGS` with :class:`Coupling`
and :func:`get_coupling`.  Everything else is in its module.  The two estimators are imported
on first use, so ``from rfcheck.engine import rng`` loads neither :mod:`rfcheck.features` nor
SciPy.

The modules lived at the top of the package in version 0.1.0 (``rfcheck.rng``, ...,
``rfcheck.discrete_engine``); those paths still import, with a :class:`DeprecationWarning`,
and give the same module objects, for one release.

Examples
--------
>>> import numpy as np
>>> from rfcheck import features
>>> from rfcheck.engine import sample_ensemble, simulate
>>> sample_ensemble("orf", 4, 3, seed=0).shape
(4, 3)
>>> prod = features.positive_product(np.array([0.1, 0.2]), np.array([0.3, -0.1]))
>>> simulate(prod, 8, 5, coupling="orf", seed=1).shape
(1, 5)
"""

from __future__ import annotations

import importlib
from typing import Any

from rfcheck.engine.couplings import COUPLINGS as _COUPLINGS
from rfcheck.engine.couplings import Coupling, get_coupling, sample_ensemble, sample_projection

#: the coupling registry, ``name -> Coupling`` (the object :data:`rfcheck.engine.couplings.COUPLINGS`)
COUPLINGS = _COUPLINGS

#: the names imported on first use (``name -> (module, attribute)``): the estimators'
#: modules load :mod:`rfcheck.features` and SciPy, which the samplers do not need
_HOMES = {
    "simulate": ("rfcheck.engine.montecarlo", "simulate"),
    "simulate_discrete": ("rfcheck.engine.discrete_engine", "simulate"),
}

#: the old top-level paths of the engine's modules (deprecated shims, removed in the next release)
_MOVED = {f"rfcheck.{m}": f"rfcheck.engine.{m}"
          for m in ("rng", "bits", "couplings", "montecarlo", "discrete_engine")}

__all__ = ["COUPLINGS", "Coupling", "get_coupling", "sample_ensemble", "sample_projection", "simulate",
           "simulate_discrete"]


def __getattr__(name: str) -> Any:
    """Import the public names on first use (the submodules import as usual)."""
    if name in _HOMES:
        module, attr = _HOMES[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

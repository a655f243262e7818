"""Attention harness: exact softmax attention and linear attentions built from random features (JAX).

Needs the optional extra ``rfcheck[jax]``.  One functional entry point,
:func:`attention`, validates and canonicalises its inputs, then calls a jitted kernel.

Methods (``method=``)
---------------------
``"exact"``
    ``softmax(q k^T) v`` (bidirectional or causal; no ``1/sqrt(d)``: scale q, k first).
``"favor+"``
    positive random features (Performer; CRT sec 2.2), kernel ``exp(q . k)``.
``"favor++"``
    OPRF features (CRT Thm 3.3) with one real ``A``: by default ``A*`` at the eq (8)
    average of ``|q_i + k_j|^2`` over all pairs (uses every position, so causal mode needs an
    explicit ``oprf_a``); with ``coupling="orf"`` this is FAVOR++ (block-orthogonal).
``"rfa"``
    trigonometric features (RFA, Peng et al. 2021) for ``exp(sum_i q_i k_i / sigma_i^2)`` with
    per-head ``sigma`` (scalar, per head, or element-wise); ``gate=`` gives RFA-Gate (causal).
    ``rfa_norm_factor=False`` drops ``exp(|x|^2 / (2 sigma^2))`` as the RFA text does (exact only
    for equal-norm keys).  Projections are drawn ``N(0, I)`` and applied to ``x / sigma``,
    i.e. ``w ~ N(0, sigma^{-2} I)``: the law that makes the Gaussian-kernel identity true.
``"darkformer"``
    positive features for ``exp(q^T Sigma k)``, ``Sigma = M^T M`` (DARKFormer sec 4.1, eq (3)):
    PRF on ``M q, M k``; :func:`whitening_matrix` gives ``M = Lambda^{-1/2}`` from data.
``"hybrid"``
    angular hybrid (HRF eq (12), (19)): ``lam SM++ + (1 - lam) SM_trig`` with
    ``lam = 1/2 + rho(q)^T rho(k)`` from ``hybrid_n`` sgn features; not positive.  ``SM++`` is
    HRF's eq (3), the *antithetic* positive estimator (FAVOR+ on ``[w; -w]``), so the MSE is
    HRF Thm D.1 eq (45) (:func:`rfcheck.closed_forms.hrf.log_mse_angular_hybrid`, ``shared=0``).

Couplings (``coupling=``): ``"iid"``, ``"orf"``, ``"simrf"``, drawn **in JAX** from ``key``
(same laws as :mod:`rfcheck.engine.couplings`); or pass ``projections=`` (an ``(M, d)`` array, e.g.
``rfcheck.engine.couplings.sample_ensemble(...)``, or a dict of draws for ``"hybrid"``).

Verification modules: :mod:`rfcheck.attention.mse` (pair-averaged MSE and orderings of the
``L x L`` matrix), :mod:`rfcheck.attention.maxrel` (HRF's max-relative-error ordering).

Stabilisers (``stabilise=True``): the per-query max of the log-features is dropped (it
cancels in each row), keys are scaled by ``exp(-max)`` of their log-scales -- one global
constant (bidirectional) or the running max over positions ``<= t`` (causal scan), so the
normalised output is unchanged and causality is kept.  ``stabilise=False`` computes the
plain estimator with no subtraction (used by the verification code).
"""

from __future__ import annotations

try:
    import jax  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("rfcheck.attention needs JAX: pip install 'rfcheck[jax]'") from exc

from rfcheck.attention._api import (
    attention,
    attention_features,
    oprf_a_eq8,
    unnormalised_attention,
    whitening_matrix,
)
from rfcheck.attention._features import draw_projections, enable_x64
from rfcheck.attention.audit import CausalityReport, causality_audit

__all__ = [
    "CausalityReport",
    "attention",
    "attention_features",
    "causality_audit",
    "draw_projections",
    "enable_x64",
    "oprf_a_eq8",
    "unnormalised_attention",
    "whitening_matrix",
]

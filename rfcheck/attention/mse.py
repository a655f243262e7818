"""Variance claims checked at attention scale: the ``L x L`` unnormalised attention matrix.

For queries/keys ``q, k`` (L, d) and an estimator ``A_hat = phi(q) phi(k)^T`` of
``A = exp(q k^T)``, one feature draw ``r`` gives the pair-averaged squared error
``e_r = L^-2 sum_ij (A_hat_ij - A_ij)^2``; the ``e_r`` of ``R`` independent draws are iid,
so their mean estimates ``L^-2 sum_ij MSE_ij`` with a standard error (sample SE, trusted
only when :func:`rfcheck.stats.estimate_mean`'s tail diagnostic does).  The reference is
the mean of the per-entry closed forms of :mod:`rfcheck.closed_forms.crt`
(``orf_gerf_log_variance`` with ``A = 0`` (PRF) or the FAVOR++ ``A``, coupling iid/orf;
``trig_log_variance``), all with ``kernel="softmax"``, and for the angular hybrid HRF Thm D.1
eq (45) (:func:`rfcheck.closed_forms.hrf.log_mse_angular_hybrid`).

Statistics.  The unit of replication is the *feature draw*, not the matrix entry: the
``L^2`` entries of one draw share ``W`` and are strongly dependent, so entry-level statistics
(or an entry-level tail diagnostic) would be meaningless.  The ``R`` per-draw pair-averaged
errors ``e_r`` are iid; the SE is their sample SE and the tail diagnostic of
:func:`rfcheck.stats.estimate_mean` (per-batch 4th-moment CV <= 1 over 32 batches, largest
single share of ``sum (e_r - mean)^2`` <= 0.05, relative SE <= 0.1) is applied to exactly
these replicates (:func:`tail_stats` also reports their skewness, kurtosis, a Hill tail
index and the ``R`` the diagnostic would need).  That diagnostic is calibrated for a few
thousand replicates: at ``R = 200`` it flags even light-tailed replicates (gamma(4) samples
fail it 86% of the time, exponential ones always), which is why a study at ``R = 200`` came
out INCONCLUSIVE although its replicates are nearly Gaussian (kurtosis ~3 at L = 1024); with
``R`` in the thousands (affordable through the streaming below) the same diagnostic passes.
Genuinely heavy-tailed replicates (large norms; DARKFormer's isotropic proposal on
anisotropic data) still fail it at any affordable ``R`` and stay INCONCLUSIVE.

Every draw computes all variants from **shared randomness** (common random numbers):
``W_orf = D R``, ``W_simrf = D S R`` share the Haar ``R`` and norms ``D``; PRF and OPRF share
``W``; DARKFormer's aligned proposal ``W Sigma*^(1/2)`` shares ``W`` with the isotropic one.
Each variant is still drawn from its own law, and an ordering claim ``a <= b`` is tested on
the paired differences ``e_r^a - e_r^b`` (their SE is much smaller than either SE); their
trust is decided by the two tail rules only (:func:`difference_trusted`: for a difference
tested against 0, SE / |mean| is ``1/|z|``, not a tail property).  Where one side is
heavy-tailed but has an exact MSE -- DARKFormer's isotropic proposal *is* PosRF with iid
features -- the ordering is also tested one-sample: the other side's replicates (full
diagnostic) against the exact value.

Verdicts (computed here, never written by hand): an equality is REFUTED when
``|z| > z_crit`` (two-sided, Bonferroni over all tests of a study at family level
``alpha``), HOLDS when not and the test had the power to see a 10% error, else
INCONCLUSIVE; an ordering ``a <= b`` is REFUTED when ``mean(a - b)`` is significantly
``> 0``, HOLDS when significantly ``< 0``, INCONCLUSIVE when the difference is not resolved
or the replicates' tails are not trusted.

Scale: one draw costs ``O(L^2 M)``; draws are streamed in batches and queries in blocks
(memory ``O(V block L)``; with ``per_entry=False`` the Gram form avoids forming ``A_hat``);
sums are float64; above ``CF_MAX_PAIRS`` pairs the closed-form mean is taken over a random
subsample of pairs, whose finite-population SE is added in quadrature.  Report command:
``python -m rfcheck.attention.mse --len 4096 --features 16 64 256 --draws 3000
--max-seconds 900 --no-per-entry --json out.json`` (``--rereport out.json`` prints the table).

Also reported per variant: the error of the *normalised* attention output
``mean |out_hat - out|^2`` and the max over pairs of the empirical relative RMSE
``sqrt(MSE_ij) / A_ij`` (HRF's max-relative-error).

References
----------
CRT eq (6), (8), Thm 3.3, Thm 4.1; SimRF (003) sec 4-5 (SimRF <= ORF); DARKFormer (001)
Thm 3.2; HRF (004) eq (12), (19), Thm 3.5.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rfcheck.attention import _features as F
from rfcheck.closed_forms import crt, hrf
from rfcheck.stats import TAIL_CV_LIMIT, TAIL_MAX_SHARE, compare_mc, estimate_mean, z_critical

__all__ = [
    "Study",
    "anisotropic_data",
    "difference_trusted",
    "format_study",
    "isotropic_data",
    "main",
    "ordering_verdict",
    "paired_ordering_entry",
    "run_study",
    "study_as_dict",
    "tail_stats",
    "verdict_table",
]

# variant -> (mechanism, coupling)
VARIANTS: dict[str, tuple[str, str]] = {
    "prf-iid": ("prf", "iid"), "prf-orf": ("prf", "orf"), "prf-simrf": ("prf", "simrf"),
    "oprf-iid": ("oprf", "iid"), "oprf-orf": ("oprf", "orf"), "oprf-simrf": ("oprf", "simrf"),
    "trig-iid": ("trig", "iid"), "hybrid-iid": ("hybrid", "iid"),
}
#: sgn features of the angular hybrid's lambda estimator (HRF eq 19) in the studies
N_TAU = 8
# ordering claims a <= b, with the printed source they stand for
ORDERINGS: list[tuple[str, str, str]] = [
    ("prf-simrf", "prf-orf", "SimRF (003): SimRF MSE <= ORF MSE for PRFs (Thm 4.x, sec 5.4 attention)"),
    ("prf-orf", "prf-iid", "CRT Thm 4.1 / Performer: orthogonal PRFs reduce the MSE"),
    ("oprf-orf", "oprf-iid", "CRT Thm 4.1: orthogonal OPRFs (FAVOR++) reduce the MSE for any d"),
    ("oprf-iid", "prf-iid", "CRT Thm 3.3 / Fig 1: OPRF variance <= PosRF variance"),
    ("oprf-orf", "prf-orf", "CRT sec 4: FAVOR++ <= FAVOR+"),
]


def isotropic_data(n: int, d: int, *, scale: float = 1.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``q, k`` (n, d) with rows ``N(0, (scale^2 / d) I)`` (so ``|q| ~ scale``).

    Parameters
    ----------
    n : int
        Sequence length ``L``.
    d : int
        Dimension.
    scale : float, default 1.0
        Typical norm of a row.
    seed : int, default 0
        Seed of the NumPy generator.

    Returns
    -------
    q, k : numpy.ndarray
        Shape (n, d) each, independent.

    Examples
    --------
    >>> q, k = isotropic_data(4, 8, scale=0.5)
    >>> q.shape, k.shape
    ((4, 8), (4, 8))
    """
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * scale / math.sqrt(d), rng.normal(size=(n, d)) * scale / math.sqrt(d)


def anisotropic_data(n: int, d: int, *, top: float = 0.4, condition: float = 100.0, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``q, k`` rows iid ``N(0, Lambda)`` with a controlled spectrum, and ``Lambda``.

    Eigenvalues geometric from ``top`` down to ``top / condition`` (``top < 1/2`` so that
    DARKFormer's ``Sigma* = (I + 2 Lambda)(I - 2 Lambda)^{-1}`` exists, Thm 3.2), random
    rotation.

    Parameters
    ----------
    n : int
        Sequence length ``L``.
    d : int
        Dimension.
    top : float, default 0.4
        Largest eigenvalue of ``Lambda``, in (0, 1/2).
    condition : float, default 100.0
        Ratio of the largest to the smallest eigenvalue.
    seed : int, default 0
        Seed of the rotation and the rows.

    Returns
    -------
    q, k : numpy.ndarray
        Shape (n, d) each.
    lam : numpy.ndarray
        ``Lambda``, (d, d).

    Raises
    ------
    ValueError
        If ``top`` is not in (0, 1/2).

    References
    ----------
    DARKFormer (Farzam et al.), Theorem 3.2.

    Examples
    --------
    >>> import numpy as np
    >>> q, k, lam = anisotropic_data(5, 3, top=0.2, condition=4.0)
    >>> np.round(np.linalg.eigvalsh(lam), 12)
    array([0.05, 0.1 , 0.2 ])
    """
    if not 0 < top < 0.5:
        raise ValueError("need 0 < top < 1/2 (DARKFormer Thm 3.2: lambda_i < 1/2)")
    rng = np.random.default_rng(seed)
    lam = top * condition ** (-np.arange(d) / max(d - 1, 1))
    u, _ = np.linalg.qr(rng.normal(size=(d, d)))
    cov = (u * lam) @ u.T
    c = np.linalg.cholesky(cov)
    return rng.normal(size=(n, d)) @ c.T, rng.normal(size=(n, d)) @ c.T, cov


def _sqrtm(a: np.ndarray) -> np.ndarray:
    ev, u = np.linalg.eigh(a)
    return (u * np.sqrt(ev)) @ u.T


@dataclass
class Study:
    """Results of :func:`run_study` (see :func:`format_study`).

    Parameters
    ----------
    config : dict
        ``L``, ``d``, ``M``, ``R`` (draws reached), ``R_requested``, ``seed``, ``alpha``,
        ``oprf_a``, ``block``, ``batch``.
    variants : dict
        Per variant: ``mse_mean``, ``se``, ``rel_se``, ``trustworthy``, ``note``,
        ``output_mse``, ``output_mse_se``, ``tails`` (:func:`tail_stats`), ``closed_form``,
        ``closed_form_se`` and, with ``per_entry``, ``max_rel_rmse``, ``mean_rel_rmse``.
    entries : list of dict
        The equality and ordering tests, each with ``id``, ``verdict``, ``z``, ``z_crit``, ``tails``.
    seconds : float
        Wall time of the study.
    """

    config: dict[str, Any]
    variants: dict[str, dict[str, Any]]
    entries: list[dict[str, Any]]
    seconds: float


def _draw(key: jax.Array, m: int, d: int, n_tau: int) -> dict[str, jax.Array]:
    """One draw of every variant's projections from shared randomness."""
    ks = jax.random.split(key, 4)
    w_iid = jax.random.normal(ks[0], (m, d))
    n_blocks = -(-m // d)
    bk = jax.random.split(ks[1], 2 * n_blocks)
    orf, sim = [], []
    for i in range(n_blocks):
        b = min(d, m - i * d)
        r = F._haar(bk[2 * i], d, w_iid.dtype).T
        norms = jnp.linalg.norm(jax.random.normal(bk[2 * i + 1], (b, d)), axis=1)[:, None]
        orf.append(norms * r[:b])
        sim.append(norms * (F._simplex(d, w_iid.dtype) @ r)[:b])
    return {"iid": w_iid, "orf": jnp.concatenate(orf), "simrf": jnp.concatenate(sim),
            "trig": jax.random.normal(ks[2], (m, d)), "tau": jax.random.normal(ks[3], (n_tau, d))}


def _phi(name: str, x: jax.Array, side: str, draws: dict[str, jax.Array], a_oprf: float, dark: Any) -> jax.Array:
    """Plain (unstabilised) features ``phi(x)`` (n, F) of one variant for one draw (``side``: "q" or "k")."""
    def pos(w, a, extra=0.0):
        return jnp.exp(F.gerf_log_features(x, w, a) + extra)

    if name.startswith("dark-"):
        _w_iso, proposal_root, proposal_inv, logdet = dark
        if name == "dark-isotropic":
            return pos(draws["iid"], 0.0)
        w = draws["iid"] @ proposal_root  # rows ~ N(0, Sigma*)
        sq = jnp.sum(w * w, axis=1)
        quad = jnp.sum((w @ proposal_inv) * w, axis=1)
        extra = (0.5 * (-0.5 * sq + 0.5 * quad + 0.5 * logdet))[None, :]  # half of log p_I/p_Sigma
        return pos(w, 0.0, extra)
    mech, coup = VARIANTS[name]
    w = draws[coup]
    if mech in ("prf", "oprf"):
        return pos(w, 0.0 if mech == "prf" else a_oprf)
    if mech == "trig":
        s, b = F.trig_features(x, w, stabilise=False)
        return jnp.exp(s)[:, None] * b
    s, b = F.hybrid_features(x, w, draws["trig"], draws["tau"], side, stabilise=False)
    return jnp.exp(s)[:, None] * b


def _block_fn(names: list[str], m: int, d: int, a_oprf: float, dark: Any) -> Any:
    """Jitted ``(qb, k, v, keys) -> (e, oe, sq)`` for one block of query rows and a batch of draws.

    ``e[r, j]``: sum over the block's ``B x L`` entries of ``(A_hat - A)^2`` of variant ``j``
    under draw ``r``; ``oe[r, j]``: sum of the squared error of the normalised output rows;
    ``sq[j]`` (B, L): per-entry squared errors summed over the batch's draws.  Exact ``A``
    of the block is formed once per call; memory ``O(V B L)``, never ``L x L x R``.
    """
    @jax.jit
    def fn(qb, k, v, keys):
        a_b = jnp.exp(qb @ k.T)
        out_b = (a_b @ v) / jnp.sum(a_b, axis=1, keepdims=True)

        def one(acc, kk):  # scan over draws: per-entry squared errors are summed, never stacked
            draws = _draw(kk, m, d, N_TAU)
            es, oes, sqs = [], [], []
            for nm in names:
                fq, fk = _phi(nm, qb, "q", draws, a_oprf, dark), _phi(nm, k, "k", draws, a_oprf, dark)
                ahat = fq @ fk.T
                err2 = (ahat - a_b) ** 2
                oh = (ahat @ v) / jnp.sum(ahat, axis=1, keepdims=True)
                es.append(jnp.sum(err2))
                oes.append(jnp.sum((oh - out_b) ** 2))
                sqs.append(err2)
            return acc + jnp.stack(sqs), (jnp.stack(es), jnp.stack(oes))

        acc, (e, oe) = jax.lax.scan(one, jnp.zeros((len(names), qb.shape[0], k.shape[0]), qb.dtype), keys)
        return e, oe, acc

    return fn


def _gram_fn(names: list[str], m: int, d: int, a_oprf: float, dark: Any) -> Any:
    """Jitted ``(qb, k, v, keys) -> (e, oe, bound)`` without forming ``A_hat`` (``per_entry=False``).

    ``sum_ij (A_hat - A)^2 = sum(G_q * G_k) - 2 sum(F_q * (A F_k)) + sum(A^2)`` with the Gram
    matrices ``G = F^T F`` (M x M): cost ``O(B L M + L M^2)`` a draw, no ``B x L`` elementwise
    passes; the normalised output is ``F_q (F_k^T v) / F_q (F_k^T 1)``.  The three terms are
    positive and their difference can cancel: ``bound`` is ``8 eps`` times their sum, an upper
    bound on the float64 rounding of ``e`` (checked by the caller against ``e``).
    """
    eps = float(np.finfo(np.float64).eps)

    @jax.jit
    def fn(qb, k, v, keys):
        a_b = jnp.exp(qb @ k.T)
        s0 = jnp.sum(a_b * a_b)
        out_b = (a_b @ v) / jnp.sum(a_b, axis=1, keepdims=True)

        def one(carry, kk):
            draws = _draw(kk, m, d, N_TAU)
            es, oes, bs = [], [], []
            for nm in names:
                fq, fk = _phi(nm, qb, "q", draws, a_oprf, dark), _phi(nm, k, "k", draws, a_oprf, dark)
                s2 = jnp.sum((fq.T @ fq) * (fk.T @ fk))
                cross = jnp.sum(fq * (a_b @ fk))
                kv = fk.T @ v
                oh = (fq @ kv) / (fq @ jnp.sum(fk, axis=0))[:, None]
                es.append(s2 - 2 * cross + s0)
                bs.append(8 * eps * (s2 + 2 * jnp.abs(cross) + s0))
                oes.append(jnp.sum((oh - out_b) ** 2))
            return carry, (jnp.stack(es), jnp.stack(oes), jnp.stack(bs))

        _, (e, oe, b) = jax.lax.scan(one, 0.0, keys)
        return e, oe, b

    return fn


@functools.lru_cache(maxsize=16)
def _cached_fn(names: tuple[str, ...], m: int, d: int, a_oprf: float, per_entry: bool) -> Any:
    """Jitted block functions reused across studies of the same shape (no recompilation)."""
    return _block_fn(list(names), m, d, a_oprf, None) if per_entry else _gram_fn(list(names), m, d, a_oprf, None)


#: pairs at which the per-entry closed forms are evaluated; above it a uniform random subsample
#: (without replacement) estimates their mean, with its finite-population standard error
CF_MAX_PAIRS = 2**18


def _closed_form_mean(q: np.ndarray, k: np.ndarray, mech: str, coupling: str, m: int, a: float,
                      max_pairs: int = CF_MAX_PAIRS, seed: int = 0) -> tuple[float, float] | None:
    """``(L^-2 sum_ij MSE_ij, its SE)`` of the per-entry closed forms (None where rfcheck has none).

    ``L^2 <= max_pairs``: every pair, SE 0.  Otherwise the mean over a uniform sample of
    ``max_pairs`` distinct pairs (the float64 faces fall back to verified mpmath where they
    would cancel, ~60 us a pair, so 16.8M pairs at L = 4096 would take hours); its SE is
    ``s / sqrt(n) * sqrt(1 - n / L^2)`` (sampling without replacement; the values are smooth
    functions of the data, light-tailed, and :func:`rfcheck.stats.estimate_mean`'s diagnostic
    is applied to them as well -- an untrusted SE raises).  Pair statistics come from the
    vectors (``|q_i + k_j|^2``, ``|q_i - k_j|^2`` directly, no cancellation), in chunks.
    """
    if not ((mech in ("prf", "oprf") and coupling in ("iid", "orf")) or (mech in ("trig", "hybrid")
                                                                        and coupling == "iid")):
        return None
    n = q.shape[0]
    total = n * n
    if total <= max_pairs:
        idx = np.arange(total)
    else:
        idx = np.sort(np.random.default_rng([seed, 20261122]).choice(total, size=max_pairs, replace=False))
    vals = np.empty(idx.size)
    chunk = 2**16
    for c0 in range(0, idx.size, chunk):
        ii = idx[c0:c0 + chunk]
        st = crt.pair_stats(q[ii // n], k[ii % n])
        if mech == "trig":
            lv = crt.trig_log_variance(**st, kernel="softmax") - math.log(m)
        elif mech == "hybrid":  # HRF Thm D.1 eq (45): independent bases (shared=0), N_TAU sgn features
            nx, ny, th = hrf.pair_geometry(q[ii // n], k[ii % n])
            lv = hrf.log_mse_angular_hybrid(nx, ny, th, m, N_TAU, 0)
        else:
            lv = crt.orf_gerf_log_variance(**st, a=0.0 if mech == "prf" else a, m=m, coupling=coupling,
                                           kernel="softmax")
        vals[c0:c0 + chunk] = np.exp(lv)
    if idx.size == total:
        return float(np.mean(vals)), 0.0
    est = estimate_mean(vals)
    if not est.trustworthy:
        raise ValueError(f"closed-form subsample mean not trusted ({est.reason}); raise max_pairs")
    return est.value, est.se * math.sqrt(1.0 - idx.size / total)


def _verdict_eq(pe: Any) -> str:
    if not pe.decided:
        return "INCONCLUSIVE"
    return "REFUTED" if pe.disc > 1 else "HOLDS"


def tail_stats(x: Any) -> dict[str, float]:
    """Tail statistics of iid replicates ``x`` (the ones an SE is computed from).

    ``tail_cv``, ``max_share``: :func:`rfcheck.stats.estimate_mean`'s diagnostic (per-batch
    4th-moment CV over 32 batches, limit 1; largest single share of ``sum (x - mean)^2``,
    limit 0.05); ``skewness``, ``kurtosis`` (sample, not excess); ``hill_alpha``: Hill's
    estimate of the tail index of ``|x - median|`` from the top ``k = max(10, sqrt(n))``
    order statistics (``< 4`` means the variance of the SE itself is infinite, ``< 2`` that
    the mean has no CLT at all; lognormal-like tails show as a moderate value that keeps
    growing with ``n``); ``r_needed``: ``n * max(cv^2, share / 0.05)``, the ``R`` at which
    the diagnostic would pass if the tails were light (a guide, not a promise).

    Parameters
    ----------
    x : array_like
        The replicates (flattened), real; at least 2.

    Returns
    -------
    dict
        ``n``, ``mean``, ``se``, ``rel_se``, ``trustworthy``, ``tail_cv``, ``max_share``,
        ``skewness``, ``kurtosis``, ``hill_alpha``, ``r_needed``, ``note``.

    Examples
    --------
    >>> import numpy as np
    >>> t = tail_stats(np.random.default_rng(0).normal(5.0, 1.0, 4000))
    >>> t["n"], t["trustworthy"], abs(t["kurtosis"] - 3) < 0.5
    (4000, True, True)
    """
    x = np.asarray(x, float).ravel()
    n = x.size
    est = estimate_mean(x)
    c = x - x.mean()
    sd = float(np.std(x))
    skew = float(np.mean(c**3) / sd**3) if sd > 0 else 0.0
    kurt = float(np.mean(c**4) / sd**4) if sd > 0 else 0.0
    y = np.sort(np.abs(x - np.median(x)))[::-1]
    kk = max(10, int(math.sqrt(n)))
    hill = math.nan
    if n > kk + 1 and y[kk] > 0:
        ell = float(np.mean(np.log(y[:kk] / y[kk])))
        hill = 1.0 / ell if ell > 0 else math.inf
    need = n * max(est.tail_cv**2, est.max_share / 0.05) if math.isfinite(est.tail_cv) else math.inf
    return {"n": n, "mean": est.value, "se": est.se, "rel_se": est.rel_se, "trustworthy": est.trustworthy,
            "tail_cv": est.tail_cv, "max_share": est.max_share, "skewness": skew, "kurtosis": kurt,
            "hill_alpha": hill, "r_needed": float(math.ceil(need)) if math.isfinite(need) else math.inf,
            "note": est.reason}


def difference_trusted(tails: dict[str, Any]) -> tuple[bool, str]:
    """Whether a z-test of paired differences against 0 may use their sample SE.

    The tail diagnostic of :mod:`rfcheck.stats` (per-batch 4th-moment CV <= ``TAIL_CV_LIMIT``,
    largest single share <= ``TAIL_MAX_SHARE``; same thresholds) applied to the ``R`` paired
    replicates.  ``estimate_mean``'s third rule, relative SE <= 0.1, is *not* applied here: it
    guards estimates of a positive quantity, but for a difference tested against 0 the
    relative SE is ``1/|z|``, so it would demand ``|z| >= 10`` whatever the tails (a difference
    with mean 0 has an infinite relative SE and a perfect normal approximation).  Whether the
    normal approximation of the mean holds is a question about the replicates' tails, which
    the other two rules answer.

    Parameters
    ----------
    tails : dict
        :func:`tail_stats` of the differences (``tail_cv`` and ``max_share`` are read).

    Returns
    -------
    trusted : bool
        Whether both tail rules pass.
    reason : str
        Why not (empty when trusted).

    Examples
    --------
    >>> difference_trusted({"tail_cv": 0.3, "max_share": 0.01})
    (True, '')
    """
    cv, share = tails["tail_cv"], tails["max_share"]
    ok = math.isfinite(cv) and cv <= TAIL_CV_LIMIT and share <= TAIL_MAX_SHARE
    return ok, ("" if ok else f"heavy tails: per-batch 4th-moment CV {cv:.2g} (limit {TAIL_CV_LIMIT}), "
                f"largest single share {share:.2g} (limit {TAIL_MAX_SHARE})")


def ordering_verdict(entry: dict[str, Any]) -> str:
    """Verdict of an ordering entry ``a <= b`` from its ``z``, ``z_crit`` and tail statistics.

    REFUTED when ``z > z_crit``, HOLDS when ``z < -z_crit``, INCONCLUSIVE otherwise or when the
    replicates' SE is not trusted (paired differences: :func:`difference_trusted`; one-sample
    tests of an MSE against an exact value: ``estimate_mean``'s full diagnostic).

    Parameters
    ----------
    entry : dict
        With ``z``, ``z_crit``, ``tails`` (:func:`tail_stats`) and ``paired`` (default True).

    Returns
    -------
    str
        ``"HOLDS"``, ``"REFUTED"`` or ``"INCONCLUSIVE"``.

    Examples
    --------
    >>> tails = {"tail_cv": 0.3, "max_share": 0.01}
    >>> ordering_verdict({"z": -5.0, "z_crit": 3.3, "tails": tails})
    'HOLDS'
    """
    t = entry["tails"]
    trusted = difference_trusted(t)[0] if entry.get("paired", True) else bool(t["trustworthy"])
    if not trusted:
        return "INCONCLUSIVE"
    z, zc = entry["z"], entry["z_crit"]
    if z > zc:
        return "REFUTED"
    return "HOLDS" if z < -zc else "INCONCLUSIVE"


def paired_ordering_entry(ident: str, statement: str, dv: Any, z_crit: float, closed_form_diff: float | None,
                          **extra: Any) -> dict[str, Any]:
    """The test of an ordering ``a <= b`` on iid paired per-draw differences ``dv = e^a - e^b``.

    ``z = mean / SE``; verdict by :func:`ordering_verdict` (trust by :func:`difference_trusted`),
    with a note saying why a test is INCONCLUSIVE.  ``extra`` keys are stored in the entry.

    Parameters
    ----------
    ident : str
        The test's id.
    statement : str
        What is tested, in words.
    dv : array_like
        The ``R`` paired differences ``e_r^a - e_r^b``.
    z_crit : float
        The critical value (Bonferroni over the study's tests).
    closed_form_diff : float or None
        The exact difference, where known (reported, not tested).
    **extra
        Further keys stored in the entry (e.g. ``source``).

    Returns
    -------
    dict
        ``id``, ``kind`` (``"ordering"``), ``statement``, ``paired``, ``paired_diff``, ``se``,
        ``rel_se``, ``z``, ``z_crit``, ``closed_form_diff``, ``tails``, ``verdict``, ``note``.

    Examples
    --------
    >>> import numpy as np
    >>> dv = np.random.default_rng(0).normal(-1.0, 1.0, 4000)
    >>> paired_ordering_entry("a<=b", "a <= b", dv, 3.3, None)["verdict"]
    'HOLDS'
    """
    dv = np.asarray(dv, float)
    diff = estimate_mean(dv)
    z = diff.value / diff.se if diff.se > 0 else (0.0 if diff.value == 0 else math.copysign(math.inf, diff.value))
    ent = {"id": ident, "kind": "ordering", **extra, "statement": statement, "paired": True,
           "paired_diff": diff.value, "se": diff.se, "rel_se": diff.rel_se, "z": z, "z_crit": z_crit,
           "closed_form_diff": closed_form_diff, "tails": tail_stats(dv)}
    ent["verdict"] = ordering_verdict(ent)
    ent["note"] = difference_trusted(ent["tails"])[1] or (
        "difference not resolved at this R" if ent["verdict"] == "INCONCLUSIVE" else "")
    return ent


def run_study(
    q: Any, k: Any, *, num_features: int = 64, n_draws: int = 400, seed: int = 0, alpha: float = 1e-3,
    variants: tuple[str, ...] = tuple(VARIANTS), dark_cov: np.ndarray | None = None, batch: int = 50,
    block: int | None = None, max_seconds: float | None = None, per_entry: bool = True,
    progress: Any = None, cf_pairs: int = CF_MAX_PAIRS,
) -> Study:
    """Empirical vs closed-form pair-averaged MSE of ``A_hat`` and ordering tests (float64).

    Streaming: draws are processed in batches of ``batch`` (one jitted ``lax.scan`` per batch and
    query block); within a batch the ``L`` queries are taken ``block`` rows at a time, so memory
    is ``O(V * block * L)`` plus, with ``per_entry``, one ``(V, L, L)`` float64 accumulator of the
    per-entry squared errors (for the max relative RMSE).  ``per_entry=False`` drops it and
    uses the Gram form of :func:`_gram_fn` (no ``A_hat`` formed, memory ``O(block * L)``, its
    cancellation bounded and checked: at most 8 of 16 digits may be lost).  All sums are float64.
    ``max_seconds``: stop after the first batch that ends past this wall
    time (at least 64 draws; the stopping rule does not look at the results) and report the
    ``R`` reached.  ``cf_pairs``: pairs at which the closed forms are evaluated (see
    :func:`_closed_form_mean`; their sampling SE is added in quadrature to the MC SE).

    ``dark_cov`` (the data covariance ``Lambda``, eigenvalues < 1/2) adds the DARKFormer
    variants ``dark-isotropic`` and ``dark-aligned`` (proposal ``Sigma*`` of Thm 3.2 with
    importance weights, both unbiased for ``exp(q . k)``) and two tests of aligned <= isotropic:
    the paired one, and a one-sample test of the aligned mean against the *exact* isotropic
    value (the isotropic estimator is PosRF with iid features, whose pair-averaged MSE is the
    closed form of CRT Thm 3.2 with ``A = 0``), which needs only the aligned replicates' tails.

    Parameters
    ----------
    q, k : array_like
        Queries and keys, shape (L, d) each.
    num_features : int, default 64
        ``M``, projections per estimator.
    n_draws : int, default 400
        Independent feature draws ``R``, >= 64.
    seed : int, default 0
        Seed of the draws.
    alpha : float, default 1e-3
        Family-wise false-alarm level (Bonferroni over the study's tests).
    variants : tuple of str, default all of VARIANTS
        The variants (``"prf-iid"``, ``"oprf-orf"``, ``"trig-iid"``, ``"hybrid-iid"``, ...).
    dark_cov : numpy.ndarray, optional
        The data covariance ``Lambda`` (eigenvalues in [0, 1/2)): adds the DARKFormer variants.
    batch : int, default 50
        Draws per jitted call.
    block : int, optional
        Query rows per block (default: about 256 MiB live).
    max_seconds : float, optional
        Stop after the first batch that ends past this wall time (at least 64 draws).
    per_entry : bool, default True
        Keep the (V, L, L) per-entry accumulator (for the max relative RMSE); False: Gram form.
    progress : callable, optional
        ``progress(draws_done, seconds)`` after each batch.
    cf_pairs : int, default CF_MAX_PAIRS
        Pairs at which the closed forms are evaluated (a random subsample above it).

    Returns
    -------
    Study
        Configuration, per-variant results and the tests with their verdicts.

    Raises
    ------
    ValueError
        If ``q``, ``k`` are not (L, d) arrays of one shape, ``n_draws < 64``, a variant is
        unknown, ``dark_cov`` has an eigenvalue outside [0, 1/2), the closed-form subsample mean
        is not trusted, or the Gram form loses more than 8 digits to cancellation.

    References
    ----------
    CRT eq (6), (8), Thm 3.3, Thm 4.1; SimRF sec 4-5; DARKFormer Thm 3.2; HRF eq (12), (19),
    Thm D.1 eq (45).
    """
    t0 = time.perf_counter()
    q = np.asarray(q, float)
    k = np.asarray(k, float)
    if q.ndim != 2 or q.shape != k.shape:
        raise ValueError("q and k must have the same shape (L, d)")
    if n_draws < 64:
        raise ValueError("n_draws must be >= 64 (the tail diagnostic uses 32 batches)")
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        raise ValueError(f"unknown variants {bad}; choose from {sorted(VARIANTS)}")
    n, d = q.shape
    m = int(num_features)
    names = list(variants)
    dark = None
    orderings = [o for o in ORDERINGS if o[0] in names and o[1] in names]
    if dark_cov is not None:
        lam = np.asarray(dark_cov, float)
        ev = np.linalg.eigvalsh(lam)
        if not (np.all(ev >= 0) and np.all(ev < 0.5)):
            raise ValueError("DARKFormer's Sigma* needs 0 <= eigenvalues of Lambda < 1/2 (Thm 3.2)")
        sig = (np.eye(d) + 2 * lam) @ np.linalg.inv(np.eye(d) - 2 * lam)
        sig = (sig + sig.T) / 2
        dark = (None, _sqrtm(sig), np.linalg.inv(sig), float(np.linalg.slogdet(sig)[1]))
        names += ["dark-isotropic", "dark-aligned"]
        orderings.append(("dark-aligned", "dark-isotropic",
                          "DARKFormer Thm 3.2: the aligned proposal Sigma* has lower variance than N(0, I)"))
    a_oprf = float(crt.oprf_a_star(float(np.mean(np.sum(q * q, 1)) + 2 * np.mean(q, 0) @ np.mean(k, 0)
                                         + np.mean(np.sum(k * k, 1))), d))
    nv = len(names)
    if block is None:  # direct: ~ 4 live (V, B, L) float64 arrays within ~ 256 MiB; Gram form: A block only
        block = max(1, min(n, 2**25 // (4 * nv * n))) if per_entry else max(1, min(n, 2**25 // n))
    rng = np.random.default_rng(seed + 1)
    v = rng.normal(size=(n, 4))
    keys_all = None
    e_sum: list[np.ndarray] = []
    oe_sum: list[np.ndarray] = []
    sq_sum = np.zeros((nv, n, n)) if per_entry else None
    done = 0
    with F.enable_x64(True):
        qj, kj, vj = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
        dk = None if dark is None else tuple(None if x is None else jnp.asarray(x) for x in dark)
        fn = _cached_fn(tuple(names), m, d, a_oprf, per_entry) if dk is None else (
            _block_fn(names, m, d, a_oprf, dk) if per_entry else _gram_fn(names, m, d, a_oprf, dk))
        keys_all = jax.random.split(jax.random.key(seed), n_draws)
        for i in range(0, n_draws, batch):
            keys = keys_all[i:i + batch]
            e_b = np.zeros((len(keys), nv))
            oe_b = np.zeros((len(keys), nv))
            bound_b = np.zeros((len(keys), nv))
            for b0 in range(0, n, block):
                e, oe, extra = fn(qj[b0:b0 + block], kj, vj, keys)
                e_b += np.asarray(e)
                oe_b += np.asarray(oe)
                if sq_sum is not None:
                    sq_sum[:, b0:b0 + block, :] += np.asarray(extra)
                else:
                    bound_b += np.asarray(extra)
            if np.any(bound_b > 1e-8 * np.abs(e_b)):
                raise ValueError("Gram-form pair-averaged error lost more than 8 digits to cancellation; "
                                 "use per_entry=True (direct differences)")
            e_sum.append(e_b)
            oe_sum.append(oe_b)
            done += len(keys)
            el = time.perf_counter() - t0
            if progress:
                progress(done, el)
            if max_seconds is not None and el > max_seconds and done >= 64:
                break
    e_all = np.concatenate(e_sum) / (n * n)
    oe_all = np.concatenate(oe_sum) / (n * v.shape[1])
    r_done = e_all.shape[0]
    a_np = np.exp(q @ k.T) if per_entry else None
    n_eq = sum(1 for nm in names if nm in VARIANTS and VARIANTS[nm][1] in ("iid", "orf"))
    n_tests = n_eq + len(orderings) + (2 if dark is not None else 0)
    zc = z_critical(alpha, max(n_tests, 1))
    out_variants: dict[str, dict[str, Any]] = {}
    entries: list[dict[str, Any]] = []
    cfg = {"L": n, "d": d, "M": m, "R": r_done, "R_requested": n_draws, "seed": seed, "alpha": alpha,
           "oprf_a": a_oprf, "block": block, "batch": batch}
    cf_iso = _closed_form_mean(q, k, "prf", "iid", m, 0.0, cf_pairs, seed) if dark is not None else None
    for j, nm in enumerate(names):
        est = estimate_mean(e_all[:, j])
        info = {"mse_mean": est.value, "se": est.se, "rel_se": est.rel_se, "trustworthy": est.trustworthy,
                "note": est.reason, "output_mse": float(np.mean(oe_all[:, j])),
                "output_mse_se": float(np.std(oe_all[:, j], ddof=1) / math.sqrt(r_done)),
                "tails": tail_stats(e_all[:, j])}
        if sq_sum is not None:
            rel = np.sqrt(sq_sum[j] / r_done) / a_np
            info.update(max_rel_rmse=float(np.max(rel)), mean_rel_rmse=float(np.mean(rel)))
        cf = None
        if nm in VARIANTS:
            mech, coup = VARIANTS[nm]
            cf = _closed_form_mean(q, k, mech, coup, m, a_oprf, cf_pairs, seed)
            src = ("hrf.log_mse_angular_hybrid (Thm D.1 eq 45)" if mech == "hybrid" else
                   f"crt.{'orf_gerf' if mech != 'trig' else 'trig'}_log_variance, softmax")
        elif nm == "dark-isotropic":
            cf, src = cf_iso, "crt.orf_gerf_log_variance A=0 iid (it is PosRF), softmax"
        cf, cf_se = (None, 0.0) if cf is None else cf
        info["closed_form"], info["closed_form_se"] = cf, cf_se
        if cf is not None:
            # the reference's own sampling SE (0 when every pair is used) enters in quadrature
            pe = compare_mc({"variant": nm}, cf, est, z_crit=zc, atol=cf_se)
            entries.append({
                "id": f"attention.mse.{nm}.M{m}", "kind": "equality",
                "statement": f"L^-2 sum_ij MSE(A_hat_ij) of {nm} = mean of the per-entry closed form ({src})",
                "verdict": _verdict_eq(pe), "empirical": est.value, "se": est.se, "rel_se": est.rel_se,
                "closed_form": cf, "closed_form_se": cf_se, "z": (pe.extra or {}).get("z"), "z_crit": zc,
                "note": pe.note,
                "tails": info["tails"]})
        out_variants[nm] = info
    for a_nm, b_nm, src in orderings:
        ia, ib = names.index(a_nm), names.index(b_nm)
        cfa, cfb = out_variants[a_nm].get("closed_form"), out_variants[b_nm].get("closed_form")
        entries.append(paired_ordering_entry(
            f"attention.order.{a_nm}<={b_nm}.M{m}", f"pair-averaged MSE of {a_nm} <= that of {b_nm}",
            e_all[:, ia] - e_all[:, ib], zc, None if cfa is None or cfb is None else cfa - cfb, source=src))
    if dark is not None:
        ia = names.index("dark-aligned")
        est = estimate_mean(e_all[:, ia])
        cf_iso, cf_iso_se = cf_iso
        se_tot = math.hypot(est.se, cf_iso_se)
        z = (est.value - cf_iso) / se_tot if se_tot > 0 else math.copysign(math.inf, est.value - cf_iso)
        verdict = ordering_verdict({"tails": tail_stats(e_all[:, ia]), "paired": False, "z": z, "z_crit": zc})
        entries.append({"id": f"attention.order.dark-aligned<=exact(dark-isotropic).M{m}", "kind": "ordering",
                        "paired": False,
                        "source": "DARKFormer Thm 3.2, isotropic side exact (CRT Thm 3.2, A = 0, iid)",
                        "statement": "pair-averaged MSE of dark-aligned <= the exact pair-averaged MSE of "
                                     "dark-isotropic", "verdict": verdict, "paired_diff": est.value - cf_iso,
                        "se": se_tot, "rel_se": se_tot / cf_iso if cf_iso else math.inf, "z": z, "z_crit": zc,
                        "closed_form_diff": None, "tails": tail_stats(e_all[:, ia]),
                        "note": est.reason or ("difference not resolved at this R" if verdict == "INCONCLUSIVE"
                                               else "")})
    return Study(cfg, out_variants, entries, time.perf_counter() - t0)


def format_study(st: Study) -> str:
    """Plain-text tables of a :class:`Study` (MSE per variant, then verdicts with z and tails).

    Parameters
    ----------
    st : Study
        The study.

    Returns
    -------
    str
        The per-variant table and one line per test.
    """
    c = st.config
    lines = [f"attention-scale MSE study: L={c['L']} d={c['d']} M={c['M']} R={c['R']} seed={c['seed']} "
             f"(FAVOR++ A={c['oprf_a']:.4g}; {st.seconds:.1f} s)",
             f"{'variant':16s} {'mean MSE(A_hat)':>16s} {'SE':>10s} {'rel SE':>7s} {'closed form':>12s} "
             f"{'out MSE':>10s} {'max relRMSE':>11s} {'tail CV':>7s} {'max sh':>6s} {'kurt':>6s}"]
    for nm, v in st.variants.items():
        cf = v.get("closed_form")
        t = v["tails"]
        mr = v.get("max_rel_rmse")
        lines.append(f"{nm:16s} {v['mse_mean']:16.6g} {v['se']:10.3g} {v['rel_se']:7.2%} "
                     f"{'-' if cf is None else f'{cf:.6g}':>12s} {v['output_mse']:10.3g} "
                     f"{'-' if mr is None else f'{mr:.3g}':>11s} {t['tail_cv']:7.2f} {t['max_share']:6.3f} "
                     f"{t['kurtosis']:6.1f}")
    lines.append("")
    for e in st.entries:
        extra = (f"emp {e['empirical']:.6g} ± {e['se']:.2g} vs {e['closed_form']:.6g} (z={e['z']:.2f})"
                 if e["kind"] == "equality" else f"diff {e['paired_diff']:.4g} ± {e['se']:.2g} (z={e['z']:.2f})")
        t = e["tails"]
        lines.append(f"{e['verdict']:12s} {e['id']}: {extra} [tails: CV {t['tail_cv']:.2f}, share "
                     f"{t['max_share']:.3f}, kurt {t['kurtosis']:.1f}, Hill {t['hill_alpha']:.2g}] "
                     f"{e.get('note') or ''}".rstrip())
    lines.append(f"(z_crit = {st.entries[0]['z_crit']:.2f}: Bonferroni over {len(st.entries)} tests at family "
                 f"level {c['alpha']})" if st.entries else "")
    return "\n".join(lines)


def study_as_dict(st: Study) -> dict[str, Any]:
    """JSON-ready form of a :class:`Study`.

    Parameters
    ----------
    st : Study
        The study.

    Returns
    -------
    dict
        ``config``, ``seconds``, ``variants``, ``entries``.

    Examples
    --------
    >>> sorted(study_as_dict(Study({}, {}, [], 0.0)))
    ['config', 'entries', 'seconds', 'variants']
    """
    return {"config": st.config, "seconds": st.seconds, "variants": st.variants, "entries": st.entries}


def verdict_table(studies: list[dict[str, Any]], *, rederive: bool = False) -> str:
    """One line per test of stored studies (``--json`` output): L, M, R, verdict, z, relative SE, tails.

    ``rederive``: recompute ordering verdicts from the stored ``z``, ``z_crit`` and tail
    statistics with :func:`ordering_verdict` (for files written by an older rule).

    Parameters
    ----------
    studies : list of dict
        Studies as :func:`study_as_dict` writes them.
    rederive : bool, default False
        Recompute the ordering verdicts.

    Returns
    -------
    str
        The table.
    """
    lines = [f"{'L':>5s} {'M':>4s} {'R':>5s} {'verdict':12s} {'z':>9s} {'z_crit':>6s} {'rel SE':>7s} {'CV':>5s} "
             f"{'share':>6s} {'kurt':>6s}  test"]
    for st in studies:
        c = st["config"]
        for e in st["entries"]:
            verdict = e["verdict"]
            if rederive and e["kind"] == "ordering":
                verdict = ordering_verdict({**e, "paired": e.get("paired", "exact(" not in e["id"])})
            t = e["tails"]
            lines.append(f"{c['L']:5d} {c['M']:4d} {c['R']:5d} {verdict:12s} {e['z']:9.2f} {e['z_crit']:6.2f} "
                         f"{e['rel_se']:7.2%} {t['tail_cv']:5.2f} {t['max_share']:6.3f} {t['kurtosis']:6.1f}  "
                         f"{e['id'].rsplit('.M', 1)[0]}")
    return "\n".join(lines)


DEFAULT_VARIANTS = ("prf-iid", "prf-orf", "prf-simrf", "oprf-iid", "oprf-orf")


def main(argv: list[str] | None = None) -> int:
    """``python -m rfcheck.attention.mse [--len L] [--features M ...] [--draws R] [--json PATH]``.

    Report command of the attention-scale study: for each ``M`` one :func:`run_study` on
    isotropic data (rows ``N(0, scale^2/d I)``), optionally the DARKFormer study on anisotropic
    data; prints the tables and (``--json``) writes all results, rewritten after each study so
    that a long run keeps what it finished.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``; ``--help`` lists them).

    Returns
    -------
    int
        The exit status, 0.
    """
    p = argparse.ArgumentParser(prog="python -m rfcheck.attention.mse", description=__doc__.split("\n")[0])
    p.add_argument("--len", type=int, default=256, help="sequence length L (1024, 4096: slow)")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--features", type=int, nargs="+", default=[16, 64])
    p.add_argument("--draws", type=int, default=400, help="R, independent feature draws (>= 64)")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="per study: stop after the draw batch that ends past this time (R reported)")
    p.add_argument("--variants", nargs="+", default=list(DEFAULT_VARIANTS), choices=sorted(VARIANTS))
    p.add_argument("--batch", type=int, default=25, help="draws per jitted call")
    p.add_argument("--block", type=int, default=None, help="query rows per block (default: ~256 MiB live)")
    p.add_argument("--no-per-entry", action="store_true", help="skip the (V, L, L) per-entry accumulator")
    p.add_argument("--scale", type=float, default=0.5, help="|q|, |k| ~ scale")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--alpha", type=float, default=1e-3, help="family-wise false-alarm level per study")
    p.add_argument("--darkformer", action="store_true", help="add the anisotropic DARKFormer study")
    p.add_argument("--darkformer-only", action="store_true", help="only the DARKFormer study")
    p.add_argument("--dark-top", type=float, default=0.1, help="largest eigenvalue of Lambda (< 1/2)")
    p.add_argument("--dark-condition", type=float, default=10.0, help="condition number of Lambda")
    p.add_argument("--cf-pairs", type=int, default=CF_MAX_PAIRS,
                   help="pairs at which the closed forms are evaluated (random subsample above; SE reported)")
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--rereport", metavar="PATH", help="print the verdict table of a stored --json file "
                   "(ordering verdicts re-derived from the stored z and tail statistics) and exit")
    args = p.parse_args(argv)
    if args.rereport:
        with open(args.rereport) as fh:
            print(verdict_table(json.load(fh), rederive=True))
        return 0
    out: list[dict[str, Any]] = []

    def prog(done: int, el: float) -> None:
        print(f"  ... {done} draws, {el:.0f} s", file=sys.stderr, flush=True)

    def emit(st: Study, kind: str) -> None:
        print(format_study(st), "\n", flush=True)
        out.append({"study": kind, **study_as_dict(st)})
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=2, default=float)

    kw = {"n_draws": args.draws, "seed": args.seed, "alpha": args.alpha, "batch": args.batch, "block": args.block,
          "max_seconds": args.max_seconds, "per_entry": not args.no_per_entry, "progress": prog,
          "cf_pairs": args.cf_pairs}
    q, k = isotropic_data(args.len, args.dim, scale=args.scale, seed=args.seed)
    for m in args.features:
        if not args.darkformer_only:
            emit(run_study(q, k, num_features=m, variants=tuple(args.variants), **kw), "isotropic")
        if args.darkformer or args.darkformer_only:
            qa, ka, lam = anisotropic_data(args.len, args.dim, top=args.dark_top, condition=args.dark_condition,
                                           seed=args.seed)
            emit(run_study(qa, ka, num_features=m, variants=(), dark_cov=lam, **kw), "darkformer")
    print(verdict_table(out))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

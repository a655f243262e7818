"""HRF's max-relative-error ordering at attention scale: angular hybrid vs SM^trig and SM^++.

HRF sec 4 (Figure 2; Figure 5 adds r = 1.25) states: "The angular hybrid estimator most
accurately approximates softmax kernel and has smaller max-relative-error than other
estimators", for same-length 64-dim inputs (``r = 1.0, 1.5``), ``SM^trig`` and ``SM^++``
(FAVOR+, HRF eq (3): antithetic positive features) with 128 random features and the
angular hybrid at matched cost, ``(m, n) = (16, 8)``
(:func:`rfcheck.plots.hrf.matched_hybrid_config`).  The relative error of an estimator
at a pair is ``eps = sqrt(MSE)/SM`` (HRF Def 3.3) and its max-relative-error the maximum
over pairs.

Attention-scale restatement.  Queries and keys on the sphere ``S(r)`` in ``R^d`` whose
pairwise angles cover ``[0, pi]`` on a grid: ``q_i = r (cos a_i u + sin a_i v)``,
``k_j = r (cos a_j u + sin a_j v)`` with ``a_i = pi i/(L-1)`` and ``(u, v)`` a random
orthonormal 2-frame, so ``theta_ij = |a_i - a_j|`` and ``A_ij = exp(q_i . k_j)``.

* **Exact** (:func:`exact_max_rel_error`): ``eps_ij`` from the per-entry closed forms
  (:func:`rfcheck.closed_forms.hrf.log_mse_trig`, ``log_mse_pos``,
  ``log_mse_angular_hybrid`` with ``shared=0``), the maximum over the ``L x L`` matrix, its
  entry, and the ordering.  These closed forms are checked against quadrature and Monte
  Carlo at kernel level (claims ``hrf.lem2.2.*``, ``hrf.eq45``); this is the decisive part.
* **Monte Carlo** (:func:`run_maxrel`): ``R`` independent draws of the JAX feature maps of
  :mod:`rfcheck.attention._features` (unstabilised, float64; the methods draw independently).
  At the closed-form argmax entry of each method -- fixed before any draw, so the
  selection does not bias the test -- the per-draw squared relative errors
  ``(A_hat_ij/A_ij - 1)^2`` are recorded.  Tests: (1) each method's mean at its own argmax
  entry equals ``eps_max^2`` (z-test); (2) the ordering, on the per-draw differences
  ``hybrid(argmax_hybrid) - base(argmax_base)`` (HOLDS when significantly negative);
  (3) the matrix-averaged relative MSE of each method equals the mean closed form.
  Verdicts follow :mod:`rfcheck.attention.mse`: Bonferroni at family level ``alpha``,
  sample SEs trusted only when the tail diagnostic of :mod:`rfcheck.stats` trusts them.
  Positive features at ``|q + k|`` near ``2r`` have log-normal squared errors (log-sd
  ``2|q + k|``), so where the positive base carries weight the replicates are heavy-tailed
  and those tests come out INCONCLUSIVE; the trigonometric ones are bounded.
  Reported but not tested: the empirical max over entries of ``sqrt(mean rel err^2)``
  (biased upward by noise) and the error of the normalised output.

Report command: ``python -m rfcheck.attention.maxrel --len 1024 --draws 4000``.

References
----------
HRF (004) sec 4 and Figure 2, Figure 5 (appendix G); eq (2), (3), (12), (19); Def 3.3;
Lemma 3.4 eq (25)-(26); Thm D.1 eq (45).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfcheck import validate
from rfcheck.closed_forms import hrf as cf
from rfcheck.estimators.hrf import FIG2_HYBRID, FIG2_M
from rfcheck.stats import compare_mc, estimate_mean, z_critical

__all__ = ["METHODS", "MaxRelStudy", "exact_max_rel_error", "format_maxrel", "main", "run_maxrel",
           "sphere_grid_data"]

#: the estimators compared: SM^trig, SM^++ (FAVOR+ as HRF defines it, antithetic) and the angular hybrid
METHODS = ("trig", "pos", "hybrid")
_LABEL = {"trig": "SM^trig", "pos": "SM^++ (FAVOR+)", "hybrid": "angular hybrid"}


def sphere_grid_data(n: int, d: int, r: float, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, k, a)``: ``q = k`` (n, d) on ``S(r)`` at angles ``a_i = pi i/(n-1)`` in a random 2-plane.

    ``theta_ij = |a_i - a_j|`` covers ``[0, pi]`` on a grid of step ``pi/(n-1)`` (including
    0 and ``pi``, where ``SM^++`` and ``SM^trig`` attain their max-relative-error).

    Parameters
    ----------
    n : int
        Sequence length ``L``, >= 2.
    d : int
        Dimension, >= 2.
    r : float
        The common norm, finite and > 0.
    seed : int, default 0
        Seed of the random orthonormal 2-frame.

    Returns
    -------
    q, k : numpy.ndarray
        Shape (n, d), equal (``k`` a copy of ``q``).
    a : numpy.ndarray
        Shape (n,): the angles ``a_i``.

    Raises
    ------
    ValueError
        If ``n`` or ``d`` is not an integer >= 2, or ``r`` is not finite and > 0.

    References
    ----------
    HRF sec 4, Figure 2 (same-length inputs, ``r = 1.0, 1.5``).

    Examples
    --------
    >>> import numpy as np
    >>> q, k, a = sphere_grid_data(3, 4, 2.0)
    >>> np.round(np.linalg.norm(q, axis=1), 12), np.round(q @ k.T / 4, 12)[0]
    (array([2., 2., 2.]), array([ 1.,  0., -1.]))
    """
    n = validate.positive_int(n, "L")
    d = validate.positive_int(d, "d")
    if n < 2 or d < 2:
        raise ValueError("need L >= 2 and d >= 2 (angles in a 2-plane)")
    r = float(r)
    if not (math.isfinite(r) and r > 0):
        raise ValueError(f"r must be finite and > 0; got {r}")
    frame, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, 2)))
    a = np.linspace(0.0, math.pi, n)
    x = r * (np.cos(a)[:, None] * frame[:, 0] + np.sin(a)[:, None] * frame[:, 1])
    return x, x.copy(), a


def _log_mse(method: str, r: float, theta: np.ndarray, m: int, hybrid: tuple[int, int]) -> np.ndarray:
    if method == "trig":
        return np.asarray(cf.log_mse_trig(r, r, theta, m), float)
    if method == "pos":
        return np.asarray(cf.log_mse_pos(r, r, theta, m), float)
    return np.asarray(cf.log_mse_angular_hybrid(r, r, theta, hybrid[0], hybrid[1], 0), float)


def exact_max_rel_error(r: float, a: np.ndarray, *, m: int = FIG2_M, hybrid: tuple[int, int] = FIG2_HYBRID
                        ) -> dict[str, dict[str, Any]]:
    """Per method: ``eps_max`` over the grid matrix, its entry ``(i, j)`` (among tied maxima the one
    with the largest ``theta``: smallest ``|q + k|``, lightest Monte Carlo tails), ``theta`` there,
    the mean relative MSE over all entries, and the kernel-level supremum over ``theta``
    (:func:`rfcheck.closed_forms.hrf.log_max_rel_error_angular_hybrid`, ``log_max_rel_error_base``).

    ``log eps_ij = (log MSE_ij - 2 r^2 cos theta_ij)/2`` (``SM = exp(r^2 cos theta)``).

    Parameters
    ----------
    r : float
        The common norm of the queries and keys, > 0.
    a : numpy.ndarray
        Shape (L,): the angles of :func:`sphere_grid_data`.
    m : int, default FIG2_M
        Random features of ``SM^trig`` and ``SM^++`` (128, HRF Figure 2).
    hybrid : (int, int), default FIG2_HYBRID
        ``(m, n)`` of the angular hybrid at matched cost ((16, 8)).

    Returns
    -------
    dict
        ``{method: {"eps_max", "entry", "theta", "rel_mse_mean", "rel_mse", "eps_sup"}}`` for
        ``"trig"``, ``"pos"``, ``"hybrid"``; ``rel_mse`` is the (L, L) matrix of ``eps_ij^2``.

    References
    ----------
    HRF Def 3.3 (relative error); Lemma 3.4 eq (25)-(26); Thm D.1 eq (45).

    Examples
    --------
    >>> import numpy as np
    >>> ex = exact_max_rel_error(1.0, np.linspace(0, np.pi, 5))
    >>> ex["pos"]["theta"], ex["trig"]["theta"] == np.pi  # SM^++ worst at theta = 0, SM^trig at pi
    (0.0, True)
    >>> ex["hybrid"]["eps_max"] < min(ex["pos"]["eps_max"], ex["trig"]["eps_max"])
    True
    """
    theta = np.abs(a[:, None] - a[None, :])
    log_sm2 = 2 * r * r * np.cos(theta)
    out = {}
    for meth in METHODS:
        log_eps = (_log_mse(meth, r, theta, m, hybrid) - log_sm2) / 2
        top = np.nanmax(log_eps)
        # ties (eps_theta = eps_{pi - theta} for the hybrid, eq (49)): the largest theta, i.e. the
        # smallest |q + k|, where positive features have the lightest tails
        cand = np.where(log_eps >= top - 1e-12 * max(1.0, abs(top)), theta, -np.inf)
        i, j = np.unravel_index(int(np.argmax(cand)), cand.shape)
        sup = (cf.log_max_rel_error_angular_hybrid(r, *hybrid) if meth == "hybrid"
               else float(cf.log_max_rel_error_base(r, m)))
        out[meth] = {"eps_max": float(np.exp(log_eps[i, j])), "entry": (int(i), int(j)),
                     "theta": float(theta[i, j]), "rel_mse_mean": float(np.mean(np.exp(2 * log_eps))),
                     "rel_mse": np.exp(2 * log_eps), "eps_sup": float(math.exp(sup))}
    return out


def _mc_fn(m: int, hybrid: tuple[int, int], sel: np.ndarray) -> Any:
    """Jitted ``(q, k, keys) -> (rel2_sel (R, 3, S), rel2_mean (R, 3), out_err (R, 3), rel2_sum (3, L, L))``."""
    import jax
    import jax.numpy as jnp

    from rfcheck.attention import _features as F

    mh, nh = hybrid
    si, sj = jnp.asarray(sel[:, 0]), jnp.asarray(sel[:, 1])

    def phi(meth, x, side, dr):
        if meth == "trig":
            s, b = F.trig_features(x, dr["trig"], stabilise=False)
        elif meth == "pos":  # HRF eq (3): antithetic positive features, 2m of them
            s, b = F.positive_features(x, jnp.concatenate([dr["pos"], -dr["pos"]]), 0.0, stabilise=False)
        else:
            s, b = F.hybrid_features(x, dr["hp"], dr["ht"], dr["tau"], side, stabilise=False)
        return jnp.exp(s)[:, None] * b

    @jax.jit
    def fn(q, k, v, keys):
        a = jnp.exp(q @ k.T)
        out = (a @ v) / jnp.sum(a, axis=1, keepdims=True)

        def one(acc, key):
            ks = jax.random.split(key, 5)
            d = q.shape[1]
            dr = {"trig": jax.random.normal(ks[0], (m, d)), "pos": jax.random.normal(ks[1], (m, d)),
                  "hp": jax.random.normal(ks[2], (mh, d)), "ht": jax.random.normal(ks[3], (mh, d)),
                  "tau": jax.random.normal(ks[4], (nh, d))}
            sels, means, oes, r2s = [], [], [], []
            for meth in METHODS:
                ahat = phi(meth, q, "q", dr) @ phi(meth, k, "k", dr).T
                rel2 = (ahat / a - 1.0) ** 2
                oh = (ahat @ v) / jnp.sum(ahat, axis=1, keepdims=True)
                sels.append(rel2[si, sj])
                means.append(jnp.mean(rel2))
                oes.append(jnp.mean((oh - out) ** 2))
                r2s.append(rel2)
            return acc + jnp.stack(r2s), (jnp.stack(sels), jnp.stack(means), jnp.stack(oes))

        acc, (s, mn, oe) = jax.lax.scan(one, jnp.zeros((len(METHODS), *a.shape), a.dtype), keys)
        return s, mn, oe, acc

    return fn


@dataclass
class MaxRelStudy:
    """Results of :func:`run_maxrel` (see :func:`format_maxrel`).

    Parameters
    ----------
    config : dict
        ``r``, ``L``, ``d``, ``m``, ``hybrid_m``, ``hybrid_n``, ``R`` (draws), ``seed``, ``alpha``.
    exact : dict
        Per method, :func:`exact_max_rel_error` without the ``rel_mse`` matrix.
    mc : dict
        Per method: ``max_rel_rmse_empirical``, ``at_exact_argmax``, ``rel_mse_mean``,
        ``output_mse``, ``output_mse_se``.
    entries : list of dict
        The tests (equality and paired-ordering entries, each with a ``verdict``).
    seconds : float
        Wall time of the study.
    """

    config: dict[str, Any]
    exact: dict[str, dict[str, Any]]
    mc: dict[str, dict[str, Any]]
    entries: list[dict[str, Any]]
    seconds: float


def _equality_entry(ident: str, statement: str, x: np.ndarray, ref: float, zc: float) -> dict[str, Any]:
    from rfcheck.attention.mse import tail_stats

    est = estimate_mean(x)
    pe = compare_mc({"id": ident}, ref, est, z_crit=zc)
    verdict = "INCONCLUSIVE" if not pe.decided else ("REFUTED" if pe.disc > 1 else "HOLDS")
    return {"id": ident, "kind": "equality", "statement": statement, "verdict": verdict, "empirical": est.value,
            "se": est.se, "rel_se": est.rel_se, "closed_form": ref, "z": (pe.extra or {}).get("z"), "z_crit": zc,
            "note": pe.note, "tails": tail_stats(x)}


def run_maxrel(r: float, *, n: int = 256, d: int = 64, m: int = FIG2_M, hybrid: tuple[int, int] = FIG2_HYBRID,
               n_draws: int = 2000, seed: int = 0, alpha: float = 1e-3, batch: int = 50,
               reference_scale: dict[str, float] | None = None) -> MaxRelStudy:
    """Exact and Monte Carlo max-relative-error of ``SM^trig_m``, ``SM^++_m`` and the angular
    hybrid ``(m_h, n_h)`` on the :func:`sphere_grid_data` attention matrix (float64).

    ``reference_scale`` (method -> factor) multiplies that method's closed-form relative MSEs
    used as references of the equality tests (absent: 1, the real test; a power test passes
    e.g. ``{"trig": 1.3}`` and must see it rejected).
    Requires JAX (``rfcheck[jax]``).

    Parameters
    ----------
    r : float
        The common norm, > 0.
    n : int, default 256
        Sequence length ``L``, >= 2.
    d : int, default 64
        Dimension, >= 2.
    m : int, default FIG2_M
        Random features of the base estimators.
    hybrid : (int, int), default FIG2_HYBRID
        ``(m, n)`` of the angular hybrid.
    n_draws : int, default 2000
        Independent draws ``R``, >= 64.
    seed : int, default 0
        Seed of the data frame, values and draws.
    alpha : float, default 1e-3
        Family-wise false-alarm level (Bonferroni over the tests).
    batch : int, default 50
        Draws per jitted call.
    reference_scale : dict, optional
        Method -> factor on its closed-form references (power tests).

    Returns
    -------
    MaxRelStudy
        Configuration, exact values, Monte Carlo summaries and the test entries.

    Raises
    ------
    ValueError
        If ``n_draws < 64``, or ``m``, the hybrid's ``(m, n)``, ``n``, ``d`` or ``r`` are invalid.

    References
    ----------
    HRF sec 4, Figure 2 and Figure 5; Def 3.3; Thm D.1 eq (45).
    """
    import jax
    import jax.numpy as jnp

    from rfcheck.attention import _features as F
    from rfcheck.attention.mse import paired_ordering_entry

    t0 = time.perf_counter()
    m = validate.positive_int(m, "m")
    hybrid = (validate.positive_int(hybrid[0], "hybrid m"), validate.positive_int(hybrid[1], "hybrid n"))
    if n_draws < 64:
        raise ValueError("n_draws must be >= 64 (the tail diagnostic uses 32 batches)")
    q, k, a = sphere_grid_data(n, d, r, seed=seed)
    ex = exact_max_rel_error(r, a, m=m, hybrid=hybrid)
    sel = np.array([ex[meth]["entry"] for meth in METHODS])
    v = np.random.default_rng(seed + 1).normal(size=(n, 4))
    fn = _mc_fn(m, hybrid, sel)
    sels, means, oes = [], [], []
    acc = np.zeros((len(METHODS), n, n))
    with F.enable_x64(True):
        keys_all = jax.random.split(jax.random.key(seed), n_draws)
        qj, kj, vj = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
        for i in range(0, n_draws, batch):
            s, mn, oe, ac = fn(qj, kj, vj, keys_all[i:i + batch])
            sels.append(np.asarray(s))
            means.append(np.asarray(mn))
            oes.append(np.asarray(oe))
            acc += np.asarray(ac)
    sel_all = np.concatenate(sels)  # (R, method, entry)
    mean_all = np.concatenate(means)
    oe_all = np.concatenate(oes)
    n_tests = 2 * len(METHODS) + 2
    zc = z_critical(alpha, n_tests)
    mc: dict[str, dict[str, Any]] = {}
    entries: list[dict[str, Any]] = []
    for t, meth in enumerate(METHODS):
        sc = (reference_scale or {}).get(meth, 1.0)
        emp = np.sqrt(acc[t] / n_draws)
        mc[meth] = {"max_rel_rmse_empirical": float(np.max(emp)),
                    "at_exact_argmax": float(math.sqrt(max(float(np.mean(sel_all[:, t, t])), 0.0))),
                    "rel_mse_mean": float(np.mean(mean_all[:, t])),
                    "output_mse": float(np.mean(oe_all[:, t])),
                    "output_mse_se": float(np.std(oe_all[:, t], ddof=1) / math.sqrt(n_draws))}
        entries.append(_equality_entry(
            f"attention.maxrel.{meth}.argmax", f"mean (A_hat/A - 1)^2 of {meth} at its max entry = eps_max^2",
            sel_all[:, t, t], sc * ex[meth]["eps_max"] ** 2, zc))
        entries.append(_equality_entry(
            f"attention.maxrel.{meth}.mean", f"L^-2 sum_ij E(A_hat/A - 1)^2 of {meth} = mean closed form",
            mean_all[:, t], sc * ex[meth]["rel_mse_mean"], zc))
    h = METHODS.index("hybrid")
    for b in ("trig", "pos"):
        tb = METHODS.index(b)
        entries.append(paired_ordering_entry(
            f"attention.maxrel.hybrid<={b}", f"relative MSE of hybrid at its max entry <= that of {b} at its max entry",
            sel_all[:, h, h] - sel_all[:, tb, tb], zc, ex["hybrid"]["eps_max"] ** 2 - ex[b]["eps_max"] ** 2))
    cfg = {"r": float(r), "L": n, "d": d, "m": m, "hybrid_m": hybrid[0], "hybrid_n": hybrid[1], "R": n_draws,
           "seed": seed, "alpha": alpha}
    exact = {meth: {kk: vv for kk, vv in e.items() if kk != "rel_mse"} for meth, e in ex.items()}
    return MaxRelStudy(cfg, exact, mc, entries, time.perf_counter() - t0)


def format_maxrel(st: MaxRelStudy) -> str:
    """Plain-text report of a :class:`MaxRelStudy`.

    Parameters
    ----------
    st : MaxRelStudy
        The study.

    Returns
    -------
    str
        The table of exact and Monte Carlo max-relative-errors, the exact ratios and one line per test.
    """
    c = st.config
    lines = [f"HRF max-relative-error at attention scale: r={c['r']} L={c['L']} d={c['d']} M={c['m']} "
             f"hybrid (m, n)=({c['hybrid_m']}, {c['hybrid_n']}) R={c['R']} seed={c['seed']} ({st.seconds:.1f} s)",
             f"{'method':16s} {'eps_max exact':>13s} {'theta*':>7s} {'sup_theta':>9s} {'MC at argmax':>12s} "
             f"{'MC max (biased)':>15s} {'out MSE':>10s}"]
    for meth in METHODS:
        e, mm = st.exact[meth], st.mc[meth]
        lines.append(f"{_LABEL[meth]:16s} {e['eps_max']:13.5g} {e['theta']:7.4f} {e['eps_sup']:9.5g} "
                     f"{mm['at_exact_argmax']:12.5g} {mm['max_rel_rmse_empirical']:15.5g} {mm['output_mse']:10.3g}")
    for b in ("trig", "pos"):
        ratio = st.exact["hybrid"]["eps_max"] / st.exact[b]["eps_max"]
        lines.append(f"exact: eps_max(hybrid)/eps_max({b}) = {ratio:.4f} -> "
                     f"{'hybrid smaller' if ratio < 1 else 'hybrid NOT smaller'}")
    for e in st.entries:
        t = e["tails"]
        val = (f"emp {e['empirical']:.5g} ± {e['se']:.2g} vs {e['closed_form']:.5g}" if e["kind"] == "equality"
               else f"diff {e['paired_diff']:.4g} ± {e['se']:.2g} (exact {e['closed_form_diff']:.4g})")
        lines.append(f"{e['verdict']:12s} {e['id']}: {val} (z={e['z']:.2f}) [CV {t['tail_cv']:.2f}, share "
                     f"{t['max_share']:.3f}, kurt {t['kurtosis']:.1f}] {e.get('note') or ''}".rstrip())
    lines.append(f"(z_crit = {st.entries[0]['z_crit']:.2f}: Bonferroni over {len(st.entries)} tests at family level "
                 f"{c['alpha']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m rfcheck.attention.maxrel [--radii R ...] [--len L] [--draws R] [--json PATH]``.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``): ``--radii``, ``--len``, ``--dim``,
        ``--draws``, ``--seed``, ``--alpha``, ``--json``.

    Returns
    -------
    int
        The exit status, 0.
    """
    p = argparse.ArgumentParser(prog="python -m rfcheck.attention.maxrel", description=__doc__.split("\n")[0])
    p.add_argument("--radii", type=float, nargs="+", default=[1.0, 1.25, 1.5])
    p.add_argument("--len", type=int, default=256)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--draws", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--alpha", type=float, default=1e-3)
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    out = []
    for r in args.radii:
        st = run_maxrel(r, n=args.len, d=args.dim, n_draws=args.draws, seed=args.seed, alpha=args.alpha)
        print(format_maxrel(st), "\n", flush=True)
        out.append({"config": st.config, "exact": st.exact, "mc": st.mc, "entries": st.entries,
                    "seconds": st.seconds})
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=2, default=float)
    return 0


if __name__ == "__main__":  # pragma: no cover
    try:
        sys.exit(main())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)

"""Variance claims checked at attention scale: the ``L x L`` unnormalised attention matrix.

For queries/keys ``q, k`` (L, d) and an estimator ``A_hat = phi(q) phi(k)^T`` of
``A = exp(q k^T)``, one feature draw ``r`` gives the pair-averaged squared error
``e_r = L^-2 sum_ij (A_hat_ij - A_ij)^2``; the ``e_r`` of ``R`` independent draws are iid,
so their mean estimates ``L^-2 sum_ij MSE_ij`` with a standard error (sample SE, trusted
only when :func:`rfcheck.stats.estimate_mean`'s tail diagnostic does).  The reference is
the mean of the per-entry closed forms of :mod:`rfcheck.closed_forms.crt`
(``orf_gerf_log_variance`` with ``A = 0`` (PRF) or the FAVOR++ ``A``, coupling iid/orf;
``trig_log_variance``), all with ``kernel="softmax"``.

Every draw computes all variants from **shared randomness** (common random numbers):
``W_orf = D R``, ``W_simrf = D S R`` share the Haar ``R`` and norms ``D``; PRF and OPRF share
``W``; DARKFormer's aligned proposal ``W Sigma*^(1/2)`` shares ``W`` with the isotropic one.
Each variant is still drawn from its own law, and an ordering claim ``a <= b`` is tested on
the paired differences ``e_r^a - e_r^b`` (their SE is much smaller than either SE).

Verdicts (computed here, never written by hand): an equality is REFUTED when
``|z| > z_crit`` (two-sided, Bonferroni over all tests of a study at family level
``alpha``), HOLDS when not and the test had the power to see a 10% error, else
INCONCLUSIVE; an ordering ``a <= b`` is REFUTED when ``mean(a - b)`` is significantly
``> 0``, HOLDS when significantly ``< 0``, INCONCLUSIVE when the difference is not resolved.

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
from rfcheck.closed_forms import crt
from rfcheck.stats import compare_mc, estimate_mean, z_critical

__all__ = ["Study", "anisotropic_data", "format_study", "isotropic_data", "main", "run_study"]

# variant -> (mechanism, coupling)
VARIANTS: dict[str, tuple[str, str]] = {
    "prf-iid": ("prf", "iid"), "prf-orf": ("prf", "orf"), "prf-simrf": ("prf", "simrf"),
    "oprf-iid": ("oprf", "iid"), "oprf-orf": ("oprf", "orf"), "oprf-simrf": ("oprf", "simrf"),
    "trig-iid": ("trig", "iid"), "hybrid-iid": ("hybrid", "iid"),
}
# ordering claims a <= b, with the printed source they stand for
ORDERINGS: list[tuple[str, str, str]] = [
    ("prf-simrf", "prf-orf", "SimRF (003): SimRF MSE <= ORF MSE for PRFs (Thm 4.x, sec 5.4 attention)"),
    ("prf-orf", "prf-iid", "CRT Thm 4.1 / Performer: orthogonal PRFs reduce the MSE"),
    ("oprf-orf", "oprf-iid", "CRT Thm 4.1: orthogonal OPRFs (FAVOR++) reduce the MSE for any d"),
    ("oprf-iid", "prf-iid", "CRT Thm 3.3 / Fig 1: OPRF variance <= PosRF variance"),
    ("oprf-orf", "prf-orf", "CRT sec 4: FAVOR++ <= FAVOR+"),
]


def isotropic_data(n: int, d: int, *, scale: float = 1.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``q, k`` (n, d) with rows ``N(0, (scale^2 / d) I)`` (so ``|q| ~ scale``)."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * scale / math.sqrt(d), rng.normal(size=(n, d)) * scale / math.sqrt(d)


def anisotropic_data(n: int, d: int, *, top: float = 0.4, condition: float = 100.0, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``q, k`` rows iid ``N(0, Lambda)`` with a controlled spectrum, and ``Lambda``.

    Eigenvalues geometric from ``top`` down to ``top / condition`` (``top < 1/2`` so that
    DARKFormer's ``Sigma* = (I + 2 Lambda)(I - 2 Lambda)^{-1}`` exists, Thm 3.2), random
    rotation.
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
    """Results of :func:`run_study` (see :func:`format_study`)."""

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


def _estimates(q, k, v, a_exact, out_exact, draws, a_oprf, variants, dark):
    """``(e, sqerr, outerr)`` per variant for one draw."""
    def pos(x, w, a, extra=0.0):
        return jnp.exp(F.gerf_log_features(x, w, a) + extra)

    def trig(x, w):
        s, b = F.trig_features(x, w, stabilise=False)
        return jnp.exp(s)[:, None] * b

    out = []
    for name in variants:
        if name.startswith("dark-"):
            _w_iso, proposal_root, proposal_inv, logdet = dark
            if name == "dark-isotropic":
                w, extra = draws["iid"], 0.0
            else:
                w = draws["iid"] @ proposal_root  # rows ~ N(0, Sigma*)
                sq = jnp.sum(w * w, axis=1)
                quad = jnp.sum((w @ proposal_inv) * w, axis=1)
                extra = (0.5 * (-0.5 * sq + 0.5 * quad + 0.5 * logdet))[None, :]  # half of log p_I/p_Sigma
            fq, fk = pos(q, w, 0.0, extra), pos(k, w, 0.0, extra)
        else:
            mech, coup = VARIANTS[name]
            w = draws[coup]
            if mech in ("prf", "oprf"):
                a = 0.0 if mech == "prf" else a_oprf
                fq, fk = pos(q, w, a), pos(k, w, a)
            elif mech == "trig":
                fq, fk = trig(q, w), trig(k, w)
            else:
                sq_, bq = F.hybrid_features(q, w, draws["trig"], draws["tau"], "q", stabilise=False)
                sk_, bk = F.hybrid_features(k, w, draws["trig"], draws["tau"], "k", stabilise=False)
                fq, fk = jnp.exp(sq_)[:, None] * bq, jnp.exp(sk_)[:, None] * bk
        ahat = fq @ fk.T
        err2 = (ahat - a_exact) ** 2
        oh = (ahat @ v) / jnp.sum(ahat, axis=1, keepdims=True)
        out.append((jnp.mean(err2), err2, jnp.mean((oh - out_exact) ** 2)))
    return (jnp.stack([o[0] for o in out]), jnp.stack([o[1] for o in out]), jnp.stack([o[2] for o in out]))


def _closed_form_mean(q: np.ndarray, k: np.ndarray, mech: str, coupling: str, m: int, a: float) -> float | None:
    """``L^-2 sum_ij`` of the per-entry closed-form MSE (None where rfcheck has no closed form).

    Pair statistics are computed from the vectors (``|q_i + k_j|^2``, ``|q_i - k_j|^2`` directly,
    no cancellation) in row chunks, so memory stays ``O(chunk L d)``.
    """
    if not ((mech in ("prf", "oprf") and coupling in ("iid", "orf")) or (mech == "trig" and coupling == "iid")):
        return None
    n, d = q.shape
    chunk = max(1, 2**21 // (n * d))
    total = 0.0
    for i0 in range(0, n, chunk):
        qi = q[i0:i0 + chunk]
        x = np.repeat(qi, n, axis=0)
        y = np.tile(k, (len(qi), 1))
        st = crt.pair_stats(x, y)
        if mech == "trig":
            lv = crt.trig_log_variance(**st, kernel="softmax") - math.log(m)
        else:
            lv = crt.orf_gerf_log_variance(**st, a=0.0 if mech == "prf" else a, m=m, coupling=coupling,
                                           kernel="softmax")
        total += float(np.sum(np.exp(lv)))
    return total / (n * n)


def _verdict_eq(pe: Any) -> str:
    if not pe.decided:
        return "INCONCLUSIVE"
    return "REFUTED" if pe.disc > 1 else "HOLDS"


def run_study(
    q: Any, k: Any, *, num_features: int = 64, n_draws: int = 400, seed: int = 0, alpha: float = 1e-3,
    variants: tuple[str, ...] = tuple(VARIANTS), dark_cov: np.ndarray | None = None, batch: int = 50,
) -> Study:
    """Empirical vs closed-form pair-averaged MSE of ``A_hat`` and ordering tests (float64).

    ``dark_cov`` (the data covariance ``Lambda``, eigenvalues < 1/2) adds the DARKFormer
    variants ``dark-isotropic`` and ``dark-aligned`` (proposal ``Sigma*`` of Thm 3.2 with
    importance weights, both unbiased for ``exp(q . k)``) and the ordering aligned <= isotropic.
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
    rng = np.random.default_rng(seed + 1)
    v = rng.normal(size=(n, 4))
    with F.enable_x64(True):
        qj, kj, vj = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
        a_exact = jnp.exp(qj @ kj.T)
        out_exact = (a_exact @ vj) / jnp.sum(a_exact, axis=1, keepdims=True)
        dk = None if dark is None else tuple(None if x is None else jnp.asarray(x) for x in dark)

        @jax.jit
        def block(keys):
            def one(acc, kk):  # scan, not map: the L x L squared errors are summed, never stacked
                e, sq, oe = _estimates(qj, kj, vj, a_exact, out_exact, _draw(kk, m, d, 8), a_oprf, names, dk)
                return acc + sq, (e, oe)

            acc, (e, oe) = jax.lax.scan(one, jnp.zeros((len(names), n, n)), keys)
            return e, acc, oe

        keys = jax.random.split(jax.random.key(seed), n_draws)
        es, oes = [], []
        sq_sum = np.zeros((len(names), n, n))
        for i in range(0, n_draws, batch):
            e, sq, oe = block(keys[i:i + batch])
            es.append(np.asarray(e))
            oes.append(np.asarray(oe))
            sq_sum += np.asarray(sq)
        e_all = np.concatenate(es)
        oe_all = np.concatenate(oes)
        a_np = np.asarray(a_exact)
    per_entry_mse = sq_sum / n_draws
    n_tests = sum(1 for nm in names if nm in VARIANTS and VARIANTS[nm][1] in ("iid", "orf")
                  and VARIANTS[nm][0] != "hybrid") + len(orderings)
    zc = z_critical(alpha, max(n_tests, 1))
    out_variants: dict[str, dict[str, Any]] = {}
    entries: list[dict[str, Any]] = []
    cfg = {"L": n, "d": d, "M": m, "R": n_draws, "seed": seed, "alpha": alpha, "oprf_a": a_oprf}
    for j, nm in enumerate(names):
        est = estimate_mean(e_all[:, j])
        rel = np.sqrt(per_entry_mse[j]) / a_np
        info = {"mse_mean": est.value, "se": est.se, "trustworthy": est.trustworthy, "note": est.reason,
                "output_mse": float(np.mean(oe_all[:, j])), "output_mse_se": float(np.std(oe_all[:, j], ddof=1)
                                                                                  / math.sqrt(n_draws)),
                "max_rel_rmse": float(np.max(rel)), "mean_rel_rmse": float(np.mean(rel))}
        if nm in VARIANTS:
            mech, coup = VARIANTS[nm]
            cf = _closed_form_mean(q, k, mech, coup, m, a_oprf)
            info["closed_form"] = cf
            if cf is not None:
                pe = compare_mc({"variant": nm}, cf, est, z_crit=zc)
                entries.append({
                    "id": f"attention.mse.{nm}.M{m}", "kind": "equality",
                    "statement": f"L^-2 sum_ij MSE(A_hat_ij) of {nm} = mean of the per-entry closed form "
                                 f"(crt.{'orf_gerf' if mech != 'trig' else 'trig'}_log_variance, softmax)",
                    "verdict": _verdict_eq(pe), "empirical": est.value, "se": est.se, "closed_form": cf,
                    "z": (pe.extra or {}).get("z"), "z_crit": zc, "note": pe.note})
        out_variants[nm] = info
    for a_nm, b_nm, src in orderings:
        ia, ib = names.index(a_nm), names.index(b_nm)
        diff = estimate_mean(e_all[:, ia] - e_all[:, ib])
        z = diff.value / diff.se if diff.se > 0 else (0.0 if diff.value == 0 else math.copysign(math.inf, diff.value))
        if not diff.trustworthy:
            verdict = "INCONCLUSIVE"
        elif z > zc:
            verdict = "REFUTED"
        elif z < -zc:
            verdict = "HOLDS"
        else:
            verdict = "INCONCLUSIVE"
        cfa, cfb = out_variants[a_nm].get("closed_form"), out_variants[b_nm].get("closed_form")
        entries.append({"id": f"attention.order.{a_nm}<={b_nm}.M{m}", "kind": "ordering", "source": src,
                        "statement": f"pair-averaged MSE of {a_nm} <= that of {b_nm}", "verdict": verdict,
                        "paired_diff": diff.value, "se": diff.se, "z": z, "z_crit": zc,
                        "closed_form_diff": None if cfa is None or cfb is None else cfa - cfb,
                        "note": diff.reason or ("difference not resolved at this R" if verdict == "INCONCLUSIVE"
                                                else "")})
    return Study(cfg, out_variants, entries, time.perf_counter() - t0)


def format_study(st: Study) -> str:
    """Plain-text tables of a :class:`Study`."""
    c = st.config
    lines = [f"attention-scale MSE study: L={c['L']} d={c['d']} M={c['M']} R={c['R']} seed={c['seed']} "
             f"(FAVOR++ A={c['oprf_a']:.4g}; {st.seconds:.1f} s)",
             f"{'variant':16s} {'mean MSE(A_hat)':>16s} {'SE':>10s} {'closed form':>12s} {'out MSE':>10s} "
             f"{'max relRMSE':>11s}"]
    for nm, v in st.variants.items():
        cf = v.get("closed_form")
        lines.append(f"{nm:16s} {v['mse_mean']:16.6g} {v['se']:10.3g} {'-' if cf is None else f'{cf:.6g}':>12s} "
                     f"{v['output_mse']:10.3g} {v['max_rel_rmse']:11.3g}")
    lines.append("")
    for e in st.entries:
        extra = (f"emp {e['empirical']:.6g} ± {e['se']:.2g} vs {e['closed_form']:.6g}" if e["kind"] == "equality"
                 else f"paired diff {e['paired_diff']:.4g} ± {e['se']:.2g} (z={e['z']:.2f})")
        lines.append(f"{e['verdict']:12s} {e['id']}: {extra} {e.get('note') or ''}".rstrip())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m rfcheck.attention.mse [--len L] [--features M ...] [--draws R] [--json PATH]``."""
    p = argparse.ArgumentParser(prog="python -m rfcheck.attention.mse", description=__doc__.split("\n")[0])
    p.add_argument("--len", type=int, default=256, help="sequence length L (1024, 4096: slow)")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--features", type=int, nargs="+", default=[16, 64])
    p.add_argument("--draws", type=int, default=400)
    p.add_argument("--scale", type=float, default=1.0, help="|q|, |k| ~ scale")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--darkformer", action="store_true", help="add the anisotropic DARKFormer study")
    p.add_argument("--dark-top", type=float, default=0.1, help="largest eigenvalue of Lambda (< 1/2)")
    p.add_argument("--dark-condition", type=float, default=10.0, help="condition number of Lambda")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    q, k = isotropic_data(args.len, args.dim, scale=args.scale, seed=args.seed)
    out = []
    for m in args.features:
        st = run_study(q, k, num_features=m, n_draws=args.draws, seed=args.seed)
        print(format_study(st), "\n")
        out.append({"config": st.config, "variants": st.variants, "entries": st.entries})
        if args.darkformer:
            qa, ka, lam = anisotropic_data(args.len, args.dim, top=args.dark_top, condition=args.dark_condition,
                                           seed=args.seed)
            st = run_study(qa, ka, num_features=m, n_draws=args.draws, seed=args.seed,
                           variants=("prf-iid",), dark_cov=lam)
            print(format_study(st), "\n")
            out.append({"config": st.config, "variants": st.variants, "entries": st.entries})
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2, default=float)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

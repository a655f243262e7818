# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Random Feature Attention, checked
#
# The kernel identity behind RFA's trigonometric features, the non-causal formula, the
# causal and gated recurrences and the complexity table of *Random Feature Attention* (Peng et al., ICLR 2021), as
# printed, with their verdicts.  Set `RFCHECK_NOTEBOOK_QUICK=1` for small sizes.

# %%
import math
import os

import numpy as np

from rfcheck import verify
from rfcheck.estimators import rfa as rfe

QUICK = os.environ.get("RFCHECK_NOTEBOOK_QUICK") == "1"
BUDGET = "smoke" if QUICK else "default"
BIG_D = 20_000 if QUICK else 400_000

# %% [markdown]
# ## The printed sampling distribution is wrong for sigma != 1
# With `w ~ N(0, s^2 I)`, `phi(x).phi(y) -> exp(-s^2 |x-y|^2/2)`; the identity for
# `exp(x.y/sigma^2)` needs `s^2 = 1/sigma^2`, the summary prints `s^2 = sigma^2`.

# %%
rng = np.random.default_rng(0)
x, y, sigma = np.array([[0.6, -0.3]]), np.array([[0.1, 0.5]]), 2.0
target = math.exp(float(x[0] @ y[0]) / sigma**2)
pref = math.exp((x[0] @ x[0] + y[0] @ y[0]) / (2 * sigma**2))
for name, sd in (("printed N(0, sigma^2 I)", sigma), ("corrected N(0, sigma^-2 I)", 1 / sigma)):
    w = sd * rng.standard_normal((BIG_D, 2))
    approx = pref * float((rfe.trig_features(x, w) @ rfe.trig_features(y, w).T)[0, 0])
    print(f"{name:28s}: {approx:.4f}   target exp(x.y/sigma^2) = {target:.4f}")

# %% [markdown]
# ## Recurrences equal their quadratic forms (same features, float64 rounding)

# %%
n, d, big_d = 16, 4, 8
q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
w = rng.standard_normal((big_d, d))
pq, pk = rfe.trig_features(q, w), rfe.trig_features(k, w)
g = 1 / (1 + np.exp(-rng.standard_normal(n)))
h, ops = rfe.rfa_causal(pq, pk, v)
print("causal  :", np.max(np.abs(h - rfe.masked_linear_attention(pq, pk, v))), f"({ops} ops)")
print("gated   :", np.max(np.abs(rfe.rfa_gated(pq, pk, v, g) - rfe.gated_attention_explicit(pq, pk, v, g))))

# %% [markdown]
# ## The ledger

# %%
ids = ["rfa.eq-kernel", "rfa.eq-noncausal", "rfa.alg-causal", "rfa.eq-gate", "rfa.tab-complexity"] if QUICK else [
    c.id for c in verify.select(papers=["rfa"])]
entries = verify.run_many(ids, budget=BUDGET, seed=0)
for e in entries:
    print(f"{e['id']:26s} {e['verdict']:13s} {e['reason']}")
    if e["verdict"] == "REFUTED":
        print("    ", e["reproduce_point"])
        print("     correction:", e["correction"])

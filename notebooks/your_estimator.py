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
# # Verifying your own estimator: antithetic OPRF, end to end
#
# You have a new idea -- here, *antithetic* optimal positive random features: draw `M/2`
# Gaussian projections `w` and use both `w` and `-w` in the OPRF estimator of CRT
# (Thm 3.3).  You derived its variance.  Is the estimator unbiased?  Is your formula right?
# Is the sampler you use what you think it is?  This notebook answers the three questions
# with `rfcheck.custom`, `rfcheck.testing` and `rfcheck.audit`, and shows what a wrong
# formula looks like when rfcheck refutes it.  Set `RFCHECK_NOTEBOOK_QUICK=1` for the
# small sizes of the test suite.

# %%
import os

import numpy as np

from rfcheck import custom
from rfcheck.audit import audit_sampler
from rfcheck.closed_forms import crt
from rfcheck.testing import adversarial_pairs, check_estimator

QUICK = os.environ.get("RFCHECK_NOTEBOOK_QUICK") == "1"
N_TRIALS = 50_000 if QUICK else 200_000
D, M = 4, 8

# %% [markdown]
# ## 1. Describe the estimator in plain Python
# OPRF features (CRT eq 4 with `s = +1` and real `A`): `f(w, x) = D exp(A|w|^2 + B w.x + C|x|^2)`
# with `B = sqrt(1 - 4A)`, `C = -1`, `D = (1 - 4A)^(d/4)`.  The feature maps receive the
# projections `W` with shape `(..., M, d)`.  We fix `A` once (in practice from data
# statistics, CRT eq 8): here the optimum `A*` for `|x + y|^2 = 0.5`.

# %%
A = float(crt.oprf_a_star(0.5, D))
B = np.sqrt(1 - 4 * A)
LOG_D = D / 4 * np.log(1 - 4 * A)


def oprf_feature(W, x):
    return np.exp(LOG_D + A * np.sum(W * W, axis=-1) + B * (W @ x) - x @ x)


def gaussian_kernel(x, y):
    return float(np.exp(-0.5 * np.sum((x - y) ** 2)))


antithetic_oprf = custom.Estimator(oprf_feature, oprf_feature, gaussian_kernel,
                                   sampler=custom.antithetic("iid"), name="antithetic OPRF")
print(f"A = {A:.6f}")

# %% [markdown]
# ## 2. Your derivation
# With `g(w) = f(w, x) f(w, y)` and `P = M/2` independent antithetic pairs,
# `Var K_hat = (Var g + E[g(w) g(-w)] - K^2) / M`.  In `g(w) g(-w)` the linear terms
# cancel: `E[g(w) g(-w)] = D^4 e^{-2(|x|^2+|y|^2)} E e^{4A|w|^2} = (1-4A)^d (1-8A)^{-d/2} e^{-2(|x|^2+|y|^2)}`.
# `Var g` is CRT Thm 3.2 (`crt.gerf_variance`, verified by rfcheck).  A tempting shortcut
# forgets the antithetic covariance and claims `Var g / M`.

# %%
def var_one(x, y):
    st = {k: (float(v[0]) if k != "d" else v) for k, v in crt.pair_stats(x[None], y[None]).items()}
    return float(crt.gerf_variance(**st, a=A, s=1))


def claimed_variance(x, y, m):
    cross = np.exp(D * np.log(1 - 4 * A) - D / 2 * np.log(1 - 8 * A) - 2 * (x @ x + y @ y))
    return (var_one(x, y) + cross - gaussian_kernel(x, y) ** 2) / m


def forgot_the_covariance(x, y, m):
    return var_one(x, y) / m


# %% [markdown]
# ## 3. Let the computation decide
# `check_estimator` runs the estimator at adversarial inputs (along the axes, equal,
# opposite, nearly opposite, unequal norms, random), tests unbiasedness and the claimed
# variance at one family-wise false-alarm level, and returns HOLDS / REFUTED /
# INCONCLUSIVE.  Heavy-tailed points come back undecided rather than as lucky passes.

# %%
pairs = adversarial_pairs(D, radii=(0.2, 0.35))
good = check_estimator(antithetic_oprf, M, claimed_variance=claimed_variance, pairs=pairs,
                       n_trials=N_TRIALS, seed=1)
print(good)

# %%
bad = check_estimator(antithetic_oprf, M, claimed_variance=forgot_the_covariance, pairs=pairs,
                      n_trials=N_TRIALS, seed=1)
print(bad.verdict)
print("counterexample:", bad.counterexample["pair"], "--", bad.counterexample["detail"])

# %% [markdown]
# ## 4. Is the sampler what it claims?
# The variance formula assumed rows that are marginally `N(0, I_d)`.  `audit_sampler`
# checks that for every row index, plus the geometry a coupling claims, the independence
# of norms, and the unbiasedness of a positive-feature estimator at axis-aligned inputs.
# Antithetic rows pass; a popular shortcut -- orthogonal rows from a QR factorisation
# without the sign fix -- is exactly orthogonal yet fails.

# %%
n_audit = 500 if QUICK else 2000
print(audit_sampler(custom.antithetic("orf"), 16, 32, n=n_audit, seed=2))


def orthogonal_without_sign_fix(rng, m, d):
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return q.T[:m] * np.sqrt(rng.chisquare(d, m))[:, None]


flawed = audit_sampler(custom.per_draw(orthogonal_without_sign_fix), 16, n=n_audit, structure="orthogonal", seed=2)
print(flawed)

# %% [markdown]
# ## 5. In your own test suite
# The same checks as pytest assertions with a stated false-alarm level:
#
# ```python
# from rfcheck.testing import assert_unbiased, assert_variance_matches, assert_sampler_valid
#
# def test_antithetic_oprf_variance():
#     x, y = np.array([0.3, 0, 0, 0]), np.array([0, 0.2, 0, 0])
#     assert_variance_matches(antithetic_oprf.at(x, y), 8, claimed_variance(x, y, 8))
#
# def test_my_sampler():
#     assert_sampler_valid(my_sampler, d=64, structure="orthogonal")
# ```
#
# Each raises `AssertionError` on a disagreement and `rfcheck.testing.Inconclusive`
# (not an `AssertionError`: an undecided check is never counted as a refutation) when the
# evidence is too weak to pass honestly.

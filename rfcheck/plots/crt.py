"""CRT Figure 1 (right): mu = log(Var_OPRF / Var_PosRF) against |x + y|^2 for several d.

Closed-form curves (``rfcheck.closed_forms.crt.oprf_log_variance_ratio``) with Monte Carlo
points (one-sample variances of both estimators from the Numba engine, 2-SE error bars by
the delta method, SEs from the exact fourth moments) where the PosRF variance is estimable:
points whose relative SE exceeds 10% are not drawn.

References
----------
CRT Figure 1 (right) and its caption; Thm 3.2-3.3.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from rfcheck.closed_forms import crt as cf

__all__ = ["figure1", "figure2", "plot_log_variances", "plot_mu", "plot_mu_monte_carlo"]

FIGURES = {"crt-fig1": "figure1", "crt-fig2": "figure2"}

DIMS = (1, 4, 16, 64, 256)


def plot_mu(ax: Any = None, dims: tuple[int, ...] = DIMS, u_max: float = 150.0) -> list[Any]:
    """Closed-form mu(u) curves, one per d; returns the line artists.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Where to draw (default the current axes).
    dims : tuple of int, default DIMS
        The dimensions ``d``, one curve each (1, 4, 16, 64, 256).
    u_max : float, default 150.0
        Right end of the ``u = |x + y|^2`` axis (600 points from 1e-3).

    Returns
    -------
    list of matplotlib.lines.Line2D
        One per ``d``.

    References
    ----------
    CRT Figure 1 (right); Thm 3.2-3.3, eq (22).
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    u = np.linspace(1e-3, u_max, 600)
    lines = []
    for d in dims:
        (ln,) = ax.plot(u, cf.oprf_log_variance_ratio(u, d), label=f"d = {d}")
        lines.append(ln)
    return lines


def mu_monte_carlo(u: float, d: int, n_trials: int, seed: int) -> tuple[float, float, bool]:
    """Monte Carlo mu at ``|x + y|^2 = u`` (x = y): (estimate, standard error, drawable).

    Drawable: both MSEs have exact standard errors (from the exact fourth moments) of at most
    :data:`rfcheck.stats.MAX_REL_SE` relative.  An exact SE makes a correct error bar even where
    heavy tails keep the sample mean from being normal enough for a test at alpha = 1e-3 (which
    is why ``trustworthy`` may be False here).
    """
    from rfcheck import features
    from rfcheck.engine.montecarlo import simulate
    from rfcheck.stats import MAX_REL_SE, estimate_mse

    x = np.zeros((1, d))
    x[0, 0] = math.sqrt(u) / 2
    y = x.copy()
    ests = []
    st = cf.pair_stats(x, y)
    st = {k: (float(v[0]) if k != "d" else v) for k, v in st.items()}
    for i, (prod, a) in enumerate(((features.oprf_product(x, y), float(cf.oprf_a_star(u, d))),
                                   (features.positive_product(x, y), 0.0))):
        samples = simulate(prod, 1, n_trials, coupling="iid", seed=seed + i)[0]
        # exact standard errors from the exact fourth moments (the sample SE is not trusted here)
        exact = cf.gerf_iid_error_moments(**st, a=a)
        ests.append(estimate_mse(samples, float(prod.target[0]), exact_moments=exact))
    opt, pos = ests
    mu = math.log(opt.value / pos.value)
    se = math.hypot(opt.rel_se, pos.rel_se)
    return mu, se, all(e.se_source == "exact-4th-moment" and e.rel_se <= MAX_REL_SE for e in ests)


def plot_mu_monte_carlo(ax: Any = None, dims: tuple[int, ...] = (4, 64),
                        us: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 3.0),
                        n_trials: int = 400_000, seed: int = 0) -> list[Any]:
    """Monte Carlo mu points with 2-SE bars where both standard errors are exact and small.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Where to draw (default the current axes).
    dims : tuple of int, default (4, 64)
        The dimensions.
    us : tuple of float, default (0.25, 0.5, 1.0, 2.0, 3.0)
        The values of ``u = |x + y|^2``.
    n_trials : int, default 400_000
        One-sample trials per estimator and point.
    seed : int, default 0
        Base seed (point ``k`` of dimension ``j`` uses ``seed + 100 j + k``).

    Returns
    -------
    list of matplotlib.container.ErrorbarContainer
        One per dimension with at least one drawable point.

    References
    ----------
    CRT Figure 1 (right); Thm 3.2-3.3.
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    arts = []
    for j, d in enumerate(dims):
        pts = [(u, *mu_monte_carlo(u, d, n_trials, seed + 100 * j + k)) for k, u in enumerate(us)]
        good = [(u, m, s) for u, m, s, ok in pts if ok]
        if good:
            uu, mm, ss = map(np.array, zip(*good, strict=True))
            arts.append(ax.errorbar(uu, mm, yerr=2 * ss, fmt="o", ms=4, capsize=2, color="k",
                                    label="Monte Carlo (±2 SE)" if j == 0 else None))
    return arts


def figure1(out_dir: str | Path = "figures", quick: bool = False, seed: int = 0) -> list[Path]:
    """Write ``crt-fig1.png`` / ``.pdf``: CRT Figure 1 (right) with a Monte Carlo inset.

    Parameters
    ----------
    out_dir : str or pathlib.Path, default "figures"
        Output folder (created if missing).
    quick : bool, default False
        40,000 instead of 1,000,000 Monte Carlo trials per point.
    seed : int, default 0
        Seed of the Monte Carlo points.

    Returns
    -------
    list of pathlib.Path
        The PNG and PDF written.

    References
    ----------
    CRT Figure 1 (right) and its caption; Thm 3.2-3.3, eq (22).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.6, 1]})
    plot_mu(ax)
    mu = float(cf.oprf_log_variance_ratio(100.0, 64))
    ax.plot([100], [mu], "r*", ms=10, label=f"d = 64, |x+y|² = 100: mu = {mu:.2f}")
    ax.axhline(-60, color="r", lw=0.6, ls=":")
    ax.set_xlabel("|x + y|²")
    ax.set_ylabel("mu = log(Var OPRF / Var PosRF)")
    ax.set_title("CRT Fig. 1 (right), closed form (Thm 3.2-3.3, eq 22)")
    ax.legend(fontsize=8)
    n = 40_000 if quick else 1_000_000
    u_small = np.linspace(1e-3, 3.5, 200)
    for d in (4, 64):
        ax2.plot(u_small, cf.oprf_log_variance_ratio(u_small, d), label=f"closed form, d = {d}")
    plot_mu_monte_carlo(ax2, n_trials=n, seed=seed)
    ax2.set_xlabel("|x + y|²")
    ax2.set_title(f"Monte Carlo check ({n:,} one-sample trials per point)", fontsize=9)
    ax2.legend(fontsize=8)
    fig.text(0.01, 0.01, "Convention: one-sample variances (M = 1) of the Gaussian-kernel estimators; mu is the "
             "same for the softmax kernel.\nMonte Carlo SEs from exact fourth moments; "
             "points with relative SE > 10% are not drawn. "
             "Generated by `rfcheck plot crt-fig1`.", fontsize=7)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    paths = [out / "crt-fig1.png", out / "crt-fig1.pdf"]
    for p in paths:
        fig.savefig(p, dpi=130)
    plt.close(fig)
    return paths


_NONPOS = ("TrigRF", "GERF", "PoisRF", "GeomRF")
_POS = ("PosRF", "OPRF", "PoisRF+", "GeomRF+")


def plot_log_variances(ax: Any, regime: str, methods: tuple[str, ...], sigmas: np.ndarray, L: int, n_sets: int,
                       seed: int = 0) -> list[Any]:
    """Mean (line) and +-1 std (band) of the pairwise log-variances against sigma (CRT Fig. 2 panel).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    regime : str
        A data regime of :data:`rfcheck.estimators.crt.REGIMES`.
    methods : tuple of str
        The RF mechanisms (e.g. ``"PosRF"``, ``"OPRF"``, ``"TrigRF"``, ``"GERF"``).
    sigmas : numpy.ndarray
        The data scales ``sigma``.
    L : int
        Points per set.
    n_sets : int
        Independent samples of the two sets.
    seed : int, default 0
        Seed of the sets.

    Returns
    -------
    list of matplotlib.lines.Line2D
        One per method.

    References
    ----------
    CRT Figure 2; eq (6), (11), (13) with parameters from eq (8), (12), (14).
    """
    from rfcheck.estimators import crt as crt_est

    arts = []
    rows = [crt_est.summary(regime, float(sg), L=L, n_sets=n_sets, seed=seed) for sg in sigmas]
    for m in methods:
        mean = np.array([r[m]["mean"] for r in rows])
        std = np.array([r[m]["std"] for r in rows])
        (ln,) = ax.plot(sigmas, mean, label=m)
        ax.fill_between(sigmas, mean - std, mean + std, color=ln.get_color(), alpha=0.15)
        arts.append(ln)
    return arts


def figure2(out_dir: str | Path = "figures", quick: bool = False, seed: int = 0) -> list[Path]:
    """Write ``crt-fig2.png`` / ``.pdf``: CRT Figure 2 (log-variance of eight RF mechanisms vs sigma).

    Closed forms (6), (11), (13) over all pairs of two sets, parameters from the set
    statistics (8), (12), (14) (:mod:`rfcheck.estimators.crt`); d = 64.  The image regime uses
    the 8x8 scikit-learn digits instead of MNIST (not available offline).

    Parameters
    ----------
    out_dir : str or pathlib.Path, default "figures"
        Output folder (created if missing).
    quick : bool, default False
        Smaller sets (L = 48, 2 samples, 4 sigmas) instead of L = 256, 5 samples, 10 sigmas.
    seed : int, default 0
        Seed of the sets.

    Returns
    -------
    list of pathlib.Path
        The PNG and PDF written.

    References
    ----------
    CRT Figure 2; eq (6), (8), (11)-(14).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rfcheck.estimators.crt import REGIMES

    L, n_sets = (48, 2) if quick else (256, 5)
    sigmas = np.linspace(0.1, 1.0, 4 if quick else 10)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(2, len(REGIMES), figsize=(4 * len(REGIMES), 7), sharex=True)
    for j, regime in enumerate(REGIMES):
        for i, methods in enumerate((_NONPOS, _POS)):
            ax = axes[i, j]
            plot_log_variances(ax, regime, methods, sigmas, L, n_sets, seed)
            label = "digits 8x8 (sklearn; paper: MNIST)" if regime == "digits" else regime
            ax.set_title(f"{label}, {'non-positive' if i == 0 else 'positive'} RFs", fontsize=9)
            if j == 0:
                ax.set_ylabel("log Var (mean ± std over pairs)")
            if i == 1:
                ax.set_xlabel("sigma")
            ax.legend(fontsize=7)
    fig.text(0.01, 0.01, f"d = 64; {n_sets} samples of two sets of L = {L} points (paper: L = 1024), all L^2 pairs; "
             "variances from the closed forms (6), (11), (13) with parameters from the set statistics (8), (12), (14). "
             "Real-valued RFs: variance / 2 (M = 2 convention, appendix 9.10.1).\nThe image regime uses the 8x8 digits "
             "shipped with scikit-learn (pixels / 16), not MNIST; pairs of identical images (variance 0) are left out "
             "of the means. Generated by `rfcheck plot crt-fig2`.", fontsize=7)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    paths = [out / "crt-fig2.png", out / "crt-fig2.pdf"]
    for p in paths:
        fig.savefig(p, dpi=110)
    plt.close(fig)
    return paths

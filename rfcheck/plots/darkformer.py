"""DARKFormer: expected Monte Carlo variance of the isotropic PRF estimator and of the
data-aligned (optimal, Thm 3.2) proposal against the anisotropy of Lambda.

``q, k ~ N(0, Lambda)``, ``Lambda = diag(lbar (1 + a), lbar (1 - a), lbar, ...)`` (d = 2 by
default, mean eigenvalue ``lbar`` fixed), one feature (m = 1).  Closed forms
(``rfcheck.closed_forms.darkformer.log_expected_variance``) with nested Monte Carlo points
(fresh q, k and fresh omegas; 2-SE bars; points whose SE the tail diagnostic does not
trust are drawn grey and labelled: E Var is finite there but its estimator is
heavy-tailed) and a marker where the isotropic variance becomes infinite (``lambda_max = 1/6``).

References
----------
DARKFormer Lemma 3.1, Theorem 3.2, eq (5)-(6); rfcheck's closed form of V (module
docstring of ``rfcheck.closed_forms.darkformer``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from rfcheck.closed_forms import darkformer as cf
from rfcheck.estimators import darkformer as dfe

__all__ = ["anisotropy_lambda", "figure_variance", "plot_variance", "plot_variance_monte_carlo"]

FIGURES = {"darkformer-variance": "figure_variance"}

LBAR = 0.1


def anisotropy_lambda(a: float, lbar: float = LBAR, d: int = 2) -> np.ndarray:
    """``Lambda = diag(lbar (1 + a), lbar (1 - a), lbar, ..., lbar)``, ``0 <= a <= 1``.

    Parameters
    ----------
    a : float
        The anisotropy, in [0, 1] (0: isotropic; 1: the second eigenvalue is 0).
    lbar : float, default LBAR
        The mean eigenvalue (0.1).
    d : int, default 2
        The dimension, >= 2.

    Returns
    -------
    numpy.ndarray
        ``Lambda``, (d, d) diagonal.

    Raises
    ------
    ValueError
        If ``a`` is not in [0, 1].

    Examples
    --------
    >>> anisotropy_lambda(0.5)
    array([[0.15, 0.  ],
           [0.  , 0.05]])
    """
    if not 0 <= a <= 1:
        raise ValueError(f"anisotropy a must be in [0, 1]; got {a}")
    return np.diag([lbar * (1 + a), lbar * (1 - a)] + [lbar] * (d - 2))


def isotropic_edge(lbar: float = LBAR) -> float:
    """The anisotropy ``a`` at which ``lambda_max = lbar (1 + a)`` reaches 1/6 (V(p_I) = inf beyond)."""
    return cf.isotropic_finite_threshold() / lbar - 1


def curves(a: np.ndarray, lbar: float = LBAR, d: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``log V`` for ``Sigma = I`` and ``Sigma = Sigma*`` at anisotropies ``a`` (``+inf`` allowed)."""
    iso = np.array([cf.log_expected_variance(anisotropy_lambda(x, lbar, d), np.eye(d)) for x in a])
    lams = [anisotropy_lambda(x, lbar, d) for x in a]
    opt = np.array([cf.log_expected_variance(lam, cf.sigma_star(lam)) for lam in lams])
    return iso, opt


def plot_variance(ax: Any = None, lbar: float = LBAR, d: int = 2) -> list[Any]:
    """Closed-form ``log10 V`` curves (isotropic and data-aligned); returns the artists.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Where to draw (default the current axes).
    lbar : float, default LBAR
        The mean eigenvalue of ``Lambda``.
    d : int, default 2
        The dimension.

    Returns
    -------
    list of matplotlib artists
        The isotropic and data-aligned curves and the vertical line at ``lambda_max = 1/6``.

    References
    ----------
    DARKFormer (Farzam et al.), Lemma 3.1, Theorem 3.2, eq (5)-(6).
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    a = np.linspace(0.0, 0.999, 400)
    iso, opt = curves(a, lbar, d)
    ln1, = ax.plot(a, iso / math.log(10), label="isotropic PRF, Σ = I")
    ln2, = ax.plot(a, opt / math.log(10), label="data-aligned, Σ = Σ* (Thm 3.2)")
    edge = isotropic_edge(lbar)
    vl = ax.axvline(edge, color="r", ls=":", lw=1, label=f"λ_max = 1/6: V(p_I) = ∞ for a ≥ {edge:.3f}")
    return [ln1, ln2, vl]


def mc_point(a: float, which: str, n_outer: int, seed: int, lbar: float = LBAR,
             d: int = 2) -> tuple[float, float, bool]:
    """Nested Monte Carlo ``log10 V`` at anisotropy ``a``: (estimate, SE of log10, trustworthy)."""
    from rfcheck.stats import estimate_mean

    lam = anisotropy_lambda(a, lbar, d)
    sigma = np.eye(d) if which == "iso" else cf.sigma_star(lam)
    samples, _ = dfe.nested_mc_variance(lam, sigma, n_outer=n_outer, n_inner=8, seed=seed)
    est = estimate_mean(samples)
    if est.value <= 0:
        return math.nan, math.inf, False
    return math.log10(est.value), est.rel_se / math.log(10), est.trustworthy


def plot_variance_monte_carlo(ax: Any = None, a_values: tuple[float, ...] = (0.0, 0.2, 0.4, 0.55, 0.8),
                              n_outer: int = 40_000, seed: int = 0, lbar: float = LBAR, d: int = 2) -> list[Any]:
    """Nested Monte Carlo points (2-SE bars) where the closed form is finite; points whose SE the
    tail diagnostic does not trust are drawn grey ('x') and labelled so.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Where to draw (default the current axes).
    a_values : tuple of float, default (0.0, 0.2, 0.4, 0.55, 0.8)
        The anisotropies, each in [0, 1].
    n_outer : int, default 40_000
        Pairs ``(q, k)`` per point (8 fresh omegas each).
    seed : int, default 0
        Base seed (point ``i`` of proposal ``j`` uses ``seed + 100 j + i``).
    lbar : float, default LBAR
        The mean eigenvalue of ``Lambda``.
    d : int, default 2
        The dimension.

    Returns
    -------
    list of matplotlib.container.ErrorbarContainer
        The trusted and untrusted point sets of each proposal that has any.

    References
    ----------
    DARKFormer (Farzam et al.), eq (2), (5)-(6).
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    arts = []
    for j, which in enumerate(("iso", "opt")):
        pts = []
        for i, a in enumerate(a_values):
            lam = anisotropy_lambda(a, lbar, d)
            sigma = np.eye(d) if which == "iso" else cf.sigma_star(lam)
            if not cf.variance_finite(lam, sigma):
                continue
            v, se, ok = mc_point(a, which, n_outer, seed + 100 * j + i, lbar, d)
            pts.append((a, v, se, ok))
        name = "Σ = I" if which == "iso" else "Σ*"
        for trusted in (True, False):
            sel = [(a, v, se) for a, v, se, ok in pts if ok == trusted and math.isfinite(v)]
            if not sel:
                continue
            aa, vv, ss = map(np.array, zip(*sel, strict=True))
            label = (f"nested MC, {name} (±2 SE)" if trusted
                     else f"nested MC, {name}: heavy tails, SE not trusted")
            arts.append(ax.errorbar(aa, vv, yerr=np.where(np.isfinite(ss), 2 * ss, 0), fmt="o" if trusted else "x",
                                    ms=5, capsize=2, color=f"C{j}" if trusted else "0.5",
                                    mec="k" if trusted else None, label=label))
    return arts


def figure_variance(out_dir: str | Path = "figures", quick: bool = False, seed: int = 0) -> list[Path]:
    """Write ``darkformer-variance.png`` / ``.pdf``.

    Parameters
    ----------
    out_dir : str or pathlib.Path, default "figures"
        Output folder (created if missing).
    quick : bool, default False
        5,000 instead of 100,000 pairs per Monte Carlo point.
    seed : int, default 0
        Seed of the Monte Carlo points.

    Returns
    -------
    list of pathlib.Path
        The PNG and PDF written.

    References
    ----------
    DARKFormer (Farzam et al.), Lemma 3.1, Theorem 3.2, eq (5)-(6).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    plot_variance(ax)
    n = 5_000 if quick else 100_000
    plot_variance_monte_carlo(ax, n_outer=n, seed=seed)
    ax.set_xlabel("anisotropy a:  Λ = diag(0.1 (1 + a), 0.1 (1 - a))")
    ax.set_ylabel("log10 V = log10 E_{q,k} Var_ω κ̂ (m = 1)")
    ax.set_title("DARKFormer: expected PRF variance, q, k ~ N(0, Λ)")
    ax.legend(fontsize=8, loc="upper left")
    fig.text(0.01, 0.01, "Closed form: rfcheck.closed_forms.darkformer.log_expected_variance (finite iff "
             "2Σ*⁻¹ - Σ⁻¹ > 0).  Monte Carlo: fresh q, k, 8 fresh ω per pair;\ngrey points: SE not trusted "
             f"(heavy tails, it understates the error); {n:,} pairs per point.  "
             "Generated by `rfcheck plot darkformer-variance`.",
             fontsize=7)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    paths = [out / "darkformer-variance.png", out / "darkformer-variance.pdf"]
    for p in paths:
        fig.savefig(p, dpi=130)
    plt.close(fig)
    return paths

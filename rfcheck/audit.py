"""Audit a projection sampler: does it have the properties the theory relies on?

Every variance formula for ORF/SimRF-type estimators assumes that each row ``w_m`` is
marginally ``N(0, I_d)`` and that the coupling has the joint structure it claims.  A
sampler that gets the joint structure right can still get the marginals wrong (the
classic: orthogonal rows from a QR factorisation without the sign fix, whose row ``i``
always has a negative ``i``-th coordinate), and the kernel estimator built on it is then
biased for inputs aligned with that axis.  :func:`audit_sampler` draws ``n`` ensembles and
runs, for every row index separately:

* ``norm``: ``|w_m|^2 ~ chi^2_d`` (Kolmogorov-Smirnov);
* ``coordinate``: every coordinate ``w_mj`` and the projections on a few random unit
  vectors ``~ N(0, 1)`` (KS), with mean 0 and second moment 1 (z-tests);
* ``covariance``: ``E w_m w_m^T = I`` off the diagonal (z-tests);
* ``norm-direction``: ``|w_m|`` uncorrelated with ``(w_mj / |w_m|)^2`` (Fisher z);

and over the ensemble:

* ``structure``: the claimed geometry exactly (``orthogonal``: directions in each block of
  ``d`` rows orthonormal; ``simplex``: pairwise cosines ``-1/(d-1)``), to rounding:
  ``geometry_tol = GEOMETRY_ULPS * sqrt(d) * eps`` of the dtype the sampler returned
  (float64: 1.8e-12 at d = 64; float32: 9.5e-4), overridable;
* ``norm-independence``: norms of different rows uncorrelated (Fisher z);
* ``unbiased``: the positive-feature estimator of ``exp(x.y)`` built on the sampler is
  unbiased at adversarial inputs (along coordinate axes, opposite, and random).

All statistical tests share one family-wise false-alarm level ``alpha`` (Bonferroni over
every test run), so a correct sampler is flagged with probability at most ``alpha``.  The
report states, per family, the smallest deviation each test could see (its power).

Layout.  A sampler that returns its projections as columns (``(d, M)``, features ``x @ W``)
instead of rows fails the shape check when ``M != d``; when ``M == d`` it passes it, so a
refuted square sampler is audited once more with rows and columns swapped (the same draws):
if the columns pass where the rows failed, the report says the sampler is likely transposed
(``likely_transposed``) and how to adapt it (:func:`rfcheck.custom.columns`).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as sps
from scipy.special import ndtr

from rfcheck.custom import Sampler, draw, least_precise, resolve_sampler
from rfcheck.engine import rng as _rng
from rfcheck.stats import estimate_mean

__all__ = ["AuditReport", "AuditTest", "audit_sampler", "geometry_tolerance"]

STRUCTURES = ("iid", "orthogonal", "simplex", None)
_STRUCTURE_OF = {"iid": "iid", "orf": "orthogonal", "simrf": "simplex"}
#: default tolerance on exact geometric identities (cosines), in units of ``sqrt(d) * eps``
#: of the sampler's dtype -- rounding, not statistics.  Householder QR reaches about
#: ``0.2 sqrt(d) eps``, modified Gram-Schmidt on Gaussian matrices up to about ``100 sqrt(d) eps``;
#: a wrong geometry is off by cosines of order ``1/sqrt(d)``.
GEOMETRY_ULPS = 1000
#: extra batches of ensembles the unbiasedness test may draw before it reports INCONCLUSIVE
MORE_DRAWS = 3


@dataclass
class AuditTest:
    """One family of tests: its smallest p-value (or largest geometric error) and where.

    Parameters
    ----------
    name : str
        The family (``"norm"``, ``"coordinate-ks"``, ``"coordinate-mean"``, ``"coordinate-var"``,
        ``"covariance"``, ``"norm-direction"``, ``"norm-independence"``, ``"unbiased"`` or
        ``"structure"``).
    n_tests : int
        How many tests the family ran.
    worst : float
        The smallest p-value; for ``"structure"`` the largest error in a cosine.
    where : str
        Where ``worst`` occurred (a coordinate, row pair or input label).
    passed : bool
        Whether no test of the family rejected (at its share of the family-wise ``alpha``).
    power : str, default ""
        What the family could have detected (e.g. the size of a detectable deviation).
    decided : bool, default True
        False where the family could not decide (``"unbiased"`` still undecided after
        :data:`MORE_DRAWS` extra batches).
    """

    name: str
    n_tests: int
    worst: float  # smallest p-value; for 'structure' the largest error
    where: str
    passed: bool
    power: str = ""
    decided: bool = True


@dataclass
class AuditReport:
    """The outcome of :func:`audit_sampler` (``verdict``: HOLDS / REFUTED / INCONCLUSIVE).

    Parameters
    ----------
    sampler : str
        The sampler's name (a built-in coupling, or a callable's ``__name__``).
    d, M, n : int
        Dimension, rows per ensemble, ensembles drawn.
    structure : str or None
        The joint structure audited (``"iid"``, ``"orthogonal"``, ``"simplex"`` or None).
    alpha : float
        Family-wise false-alarm level.
    tests : list of AuditTest, default []
        One entry per family of tests.
    dtype : str, default "float64"
        The dtype the sampler returned.
    geometry_tol : float, optional
        The tolerance the ``structure`` test used.
    likely_transposed : bool, default False
        Whether the same draws with rows and columns swapped pass (a sampler returning columns).
    notes : list of str, default []
        Remarks printed with the report.

    Attributes
    ----------
    verdict : str
        ``"REFUTED"`` if a family failed, else ``"INCONCLUSIVE"`` if one was undecided, else
        ``"HOLDS"``.
    failures : list of AuditTest
        The families that failed.
    """

    sampler: str
    d: int
    M: int
    n: int
    structure: str | None
    alpha: float
    tests: list[AuditTest] = field(default_factory=list)
    dtype: str = "float64"
    geometry_tol: float | None = None
    likely_transposed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if any(not t.passed for t in self.tests):
            return "REFUTED"
        if any(not t.decided for t in self.tests):
            return "INCONCLUSIVE"
        return "HOLDS"

    @property
    def failures(self) -> list[AuditTest]:
        return [t for t in self.tests if not t.passed]

    def __str__(self) -> str:
        lines = [f"audit of {self.sampler} (d={self.d}, M={self.M}, n={self.n}, structure={self.structure}, "
                 f"{self.dtype}, family-wise alpha={self.alpha:g}): {self.verdict}"]
        for t in self.tests:
            mark = "ok  " if t.passed and t.decided else ("??  " if t.passed else "FAIL")
            what = f"max error {t.worst:.2g}" if t.name == "structure" else f"min p {t.worst:.2g}"
            lines.append(f"  {mark} {t.name:<18} {t.n_tests:>6} tests, {what} at {t.where}; {t.power}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def _ks_pvalues(samples: np.ndarray, cdf: Any) -> np.ndarray:
    """One-sample KS p-values for the columns of ``samples`` (n, k) against ``cdf``.

    Only the family's smallest p-value is used (its Bonferroni test and its report), and the
    KS p-value falls as the statistic grows, so only the column with the largest statistic
    gets its exact p-value; the others are set to 1.
    """
    n = samples.shape[0]
    s = np.sort(np.ascontiguousarray(samples.T), axis=1)  # (k, n): contiguous rows sort fast
    f = cdf(s)
    i = np.arange(1, n + 1)
    dstat = np.maximum(np.max(i / n - f, axis=1), np.max(f - (i - 1) / n, axis=1))
    p = np.ones(dstat.size)
    k = int(np.argmax(dstat))
    p[k] = sps.kstwo.sf(dstat[k], n)
    return p


def _z_pvalues(z: np.ndarray) -> np.ndarray:
    return 2 * sps.norm.sf(np.abs(z))


def _fisher_pvalues(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """p-values of zero correlation between columns of ``a`` and ``b`` (n, k) (Fisher z)."""
    n = a.shape[0]
    sa, sb = a.std(0), b.std(0)
    ok = (sa > 0) & (sb > 0)  # a constant column has no correlation to test (other tests see it)
    a = (a - a.mean(0)) / np.where(ok, sa, 1.0)
    b = (b - b.mean(0)) / np.where(ok, sb, 1.0)
    r = np.where(ok, np.clip(np.mean(a * b, axis=0), -0.999999, 0.999999), 0.0)
    return _z_pvalues(np.arctanh(r) * math.sqrt(n - 3))


def _where(idx: int, labels: list[str]) -> str:
    return labels[idx] if labels else str(idx)


def geometry_tolerance(d: int, dtype: Any = np.float64) -> float:
    """The default tolerance of the ``structure`` test: ``GEOMETRY_ULPS * sqrt(d) * eps``.

    ``eps`` is the machine epsilon of ``dtype`` (the dtype the sampler returned; complex and
    non-floating dtypes as in :func:`rfcheck.custom.least_precise`): float64 gives 1.8e-12
    at d = 64, float32 9.5e-4.

    Parameters
    ----------
    d : int
        The dimension, >= 1.
    dtype : numpy dtype or type, default numpy.float64
        The dtype whose machine epsilon sets the scale.

    Returns
    -------
    float
        The largest error in a cosine the ``structure`` test accepts.

    Examples
    --------
    >>> f"{geometry_tolerance(64):.2g}", f"{geometry_tolerance(64, 'float32'):.2g}"
    ('1.8e-12', '0.00095')
    """
    return GEOMETRY_ULPS * math.sqrt(d) * float(np.finfo(least_precise(dtype)).eps)


def audit_sampler(
    sampler: str | Sampler,
    d: int,
    M: int | None = None,
    *,
    structure: str | None = "infer",
    n: int = 2000,
    alpha: float = 1e-3,
    seed: int = 0,
    radius: float = 0.35,
    geometry_tol: float | None = None,
    check_layout: bool = True,
) -> AuditReport:
    """Check the properties the random-feature theory assumes of ``sampler``.

    Parameters
    ----------
    sampler : str or callable
        A built-in coupling name or ``sampler(rng, n, M, d) -> (n, M, d)`` (see
        :mod:`rfcheck.custom`; :func:`rfcheck.custom.per_draw` adapts one-ensemble samplers,
        :func:`rfcheck.custom.columns` samplers that return projections as columns).
    d, M : int
        Dimension and rows per ensemble (``M`` defaults to ``d``).
    structure : {"iid", "orthogonal", "simplex", None, "infer"}
        The joint structure the sampler claims; ``"infer"`` takes it from a built-in name
        (``None`` for a callable: marginals, independence of norms and unbiasedness only).
    n : int
        Ensembles drawn (default 2000: KS tests then see a CDF deviation of about 0.1 at
        d = 64, a coordinate-mean shift of about 0.12 and an estimator bias of about 0.2%).
    alpha : float
        Family-wise false-alarm level over all statistical tests.
    seed : int
        Seed of the NumPy generator handed to the sampler.
    radius : float
        Norm of the adversarial inputs of the unbiasedness test.
    geometry_tol : float, optional
        Largest rounding error the ``structure`` test accepts in a cosine.  Default
        :func:`geometry_tolerance` ``(d, dtype)``: ``GEOMETRY_ULPS * sqrt(d) * eps`` of the
        dtype the sampler returned, so a float32 sampler is held to float32 rounding.
    check_layout : bool
        When ``M == d`` and the audit refutes, audit the same draws with rows and columns
        swapped and report a likely transposition (default True).

    Returns
    -------
    AuditReport
        ``verdict`` HOLDS / REFUTED / INCONCLUSIVE, one :class:`AuditTest` per family, the
        sampler's dtype and the geometry tolerance used, and notes (a likely transposition).

    Raises
    ------
    ValueError
        If ``d`` or ``M`` is not an integer >= 2, ``n`` not an integer >= 100, ``alpha`` not in
        (0, 1), ``structure`` not one of ``"iid"``, ``"orthogonal"``, ``"simplex"``, None,
        ``"infer"``, or ``geometry_tol`` not finite and >= 0 (or the sampler name is unknown).
    """
    if not (isinstance(d, int | np.integer) and d >= 2):
        raise ValueError(f"d must be an integer >= 2; got {d!r}")
    M = d if M is None else M
    if not (isinstance(M, int | np.integer) and M >= 2):
        raise ValueError(f"M must be an integer >= 2; got {M!r}")
    if not (isinstance(n, int | np.integer) and n >= 100):
        raise ValueError(f"n must be an integer >= 100 (KS and correlation tests); got {n!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}")
    if structure == "infer":
        structure = _STRUCTURE_OF.get(sampler) if isinstance(sampler, str) else None
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {STRUCTURES}; got {structure!r}")
    if geometry_tol is not None and not (math.isfinite(geometry_tol) and geometry_tol >= 0):
        raise ValueError(f"geometry_tol must be finite and >= 0; got {geometry_tol!r}")
    name = str(sampler if isinstance(sampler, str) else getattr(sampler, "__name__", "sampler"))
    s = resolve_sampler(sampler)
    rng = np.random.default_rng(_rng.seed_key(seed))
    W = draw(s, rng, n, M, d)  # (n, M, d), in the sampler's own dtype
    after_draw = copy.deepcopy(rng.bit_generator.state)
    args = (name, int(d), int(M), int(n), structure, alpha, radius, geometry_tol)
    report = _audit(W, s, rng, *args)
    if check_layout and M == d and report.verdict == "REFUTED":

        def swapped(rng: np.random.Generator, n: int, M: int, d: int) -> np.ndarray:
            return np.swapaxes(draw(s, rng, n, M, d), 1, 2)

        rng.bit_generator.state = after_draw  # the same draws, and the same random directions and inputs
        cols = _audit(np.swapaxes(W, 1, 2), swapped, rng, *args)
        if cols.verdict != "REFUTED":
            report.likely_transposed = True
            report.notes.append(
                f"rows fail ({', '.join(t.name for t in report.failures)}) but the columns of the same draws "
                f"pass ({cols.verdict}): the sampler likely returns projections as columns (d, M); wrap it with "
                "rfcheck.custom.columns(sampler) or custom.per_draw(fn, layout='columns')")
    return report


def _audit(W_raw: np.ndarray, s: Sampler, rng: np.random.Generator, name: str, d: int, M: int, n: int,
           structure: str | None, alpha: float, radius: float, geometry_tol: float | None) -> AuditReport:
    """The audit of the draws ``W_raw`` (n, M, d); ``s`` and ``rng`` draw more where needed."""
    dtype = least_precise(W_raw.dtype)
    W = W_raw.astype(float, copy=False)  # statistics in float64; the tolerance follows the sampler's dtype
    tol = geometry_tolerance(d, dtype) if geometry_tol is None else float(geometry_tol)
    report = AuditReport(name, d, M, n, structure, alpha, dtype=dtype.name,
                         geometry_tol=tol if structure in ("orthogonal", "simplex") else None)

    # -- statistics: collect p-value families first, then apply one Bonferroni level --------
    fams: list[tuple[str, np.ndarray, list[str], str]] = []
    sq = np.sum(W * W, axis=2)  # (n, M)
    fams.append(("norm", _ks_pvalues(sq, lambda t: sps.chi2.cdf(t, d)), [f"row {i}" for i in range(M)],
                 "KS of |w|^2 vs chi2_d"))
    dirs = rng.standard_normal((d, 4))
    dirs /= np.linalg.norm(dirs, axis=0)
    proj = np.concatenate([W, W @ dirs], axis=2).reshape(n, -1)  # coordinates + 4 random directions
    labels = [f"row {i}, {'coordinate ' + str(j) if j < d else 'random direction ' + str(j - d)}"
              for i in range(M) for j in range(d + 4)]
    fams.append(("coordinate-ks", _ks_pvalues(proj, ndtr), labels, "KS vs N(0,1)"))
    fams.append(("coordinate-mean", _z_pvalues(proj.mean(0) * math.sqrt(n)), labels, "mean 0"))
    fams.append(("coordinate-var", _z_pvalues((np.mean(proj**2, 0) - 1) * math.sqrt(n / 2)), labels,
                 "second moment 1"))
    iu = np.triu_indices(d, 1)
    cov = np.matmul(W.transpose(1, 2, 0), W.transpose(1, 0, 2)) / n  # (M, d, d), batched BLAS
    off = cov[:, iu[0], iu[1]].reshape(-1)
    fams.append(("covariance", _z_pvalues(off * math.sqrt(n)),
                 [f"row {i}, coordinates ({a}, {b})" for i in range(M) for a, b in zip(*iu, strict=True)],
                 "E w_j w_k = 0"))
    norms = np.sqrt(sq)
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero row (the norm test flags it): no direction
        u2 = (W / norms[..., None]) ** 2
    fams.append(("norm-direction", _fisher_pvalues(np.repeat(norms, d, axis=1), u2.reshape(n, -1)),
                 [f"row {i}, coordinate {j}" for i in range(M) for j in range(d)], "corr(|w|, u_j^2) = 0"))
    if M >= 2:
        fams.append(("norm-independence", _fisher_pvalues(norms[:, :-1], norms[:, 1:]),
                     [f"rows {i}, {i + 1}" for i in range(M - 1)], "corr(|w_i|, |w_i+1|) = 0"))
    # unbiasedness of PosRF for exp(x.y) at adversarial inputs; where the sample SE is not
    # trusted yet (tail diagnostic), up to MORE_DRAWS further batches of n ensembles are drawn
    inputs = _adversarial_inputs(d, radius, rng)
    vals = [[np.exp(W @ (x + y) - (x @ x + y @ y) / 2).mean(axis=1)] for _, x, y in inputs]
    for _ in range(MORE_DRAWS):
        if all(estimate_mean(np.concatenate(v)).trustworthy for v in vals):
            break
        W2 = draw(s, rng, n, M, d).astype(float)
        for v, (_, x, y) in zip(vals, inputs, strict=True):
            v.append(np.exp(W2 @ (x + y) - (x @ x + y @ y) / 2).mean(axis=1))
    ub_p, ub_labels, ub_undecided = [], [], []
    for v, (label, x, y) in zip(vals, inputs, strict=True):
        est = estimate_mean(np.concatenate(v))
        target = math.exp(float(x @ y))
        ub_labels.append(f"{label} (mean {est.value:.6g} +- {est.se:.2g} over {est.n} draws, K = {target:.6g})")
        if est.se <= 1e-12 * target:  # x + y = 0: the estimate is the constant K up to rounding
            ub_p.append(1.0 if abs(est.value - target) <= 1e-12 * target else 0.0)
            continue
        ub_p.append(float(_z_pvalues(np.array([(est.value - target) / est.se]))[0]))
        if not est.trustworthy:
            ub_undecided.append(label)
    fams.append(("unbiased", np.array(ub_p), ub_labels, "PosRF estimate of exp(x.y)"))

    total = sum(p.size for _, p, _, _ in fams)
    level = alpha / total
    zc = float(sps.norm.isf(level / 2))
    dks = float(sps.kstwo.isf(level, n))
    power = {
        "norm": f"sees a CDF deviation >= {dks:.3f}",
        "coordinate-ks": f"sees a CDF deviation >= {dks:.3f}",
        "coordinate-mean": f"sees a mean shift >= {zc / math.sqrt(n):.3f}",
        "coordinate-var": f"sees a second-moment error >= {zc * math.sqrt(2 / n):.3f}",
        "covariance": f"sees a covariance >= {zc / math.sqrt(n):.3f}",
        "norm-direction": f"sees a correlation >= {math.tanh(zc / math.sqrt(n - 3)):.3f}",
        "norm-independence": f"sees a correlation >= {math.tanh(zc / math.sqrt(n - 3)):.3f}",
        "unbiased": "z-test per input at the family level",
    }
    for fam, p, labels, what in fams:
        k = int(np.argmin(p))
        report.tests.append(AuditTest(fam, int(p.size), float(p[k]), f"{_where(k, labels)} [{what}]",
                                      bool(p[k] >= level), power[fam],
                                      decided=not (fam == "unbiased" and ub_undecided)))
    if structure in ("orthogonal", "simplex"):
        report.tests.append(_structure_test(W, structure, tol, dtype.name))
    return report


def _adversarial_inputs(d: int, r: float, rng: np.random.Generator) -> list[tuple[str, np.ndarray, np.ndarray]]:
    e = np.eye(d)
    out = [("x = y = r e_0", r * e[0], r * e[0]), (f"x = y = r e_{d - 1}", r * e[d - 1], r * e[d - 1]),
           ("x = r e_0, y = r e_1", r * e[0], r * e[1]), ("x = r e_0, y = -r e_0", r * e[0], -r * e[0])]
    for k in range(2):
        v = rng.standard_normal((2, d))
        v *= r / np.linalg.norm(v, axis=1, keepdims=True)
        out.append((f"random pair {k}", v[0], v[1]))
    return out


def _structure_test(W: np.ndarray, structure: str, tol: float, dtype: str) -> AuditTest:
    n, M, d = W.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        U = W / np.linalg.norm(W, axis=2, keepdims=True)
    want = np.eye(d) if structure == "orthogonal" else np.full((d, d), -1.0 / (d - 1)) + (d / (d - 1)) * np.eye(d)
    worst, where = 0.0, "-"
    for b in range(-(-M // d)):
        blk = U[:, b * d:(b + 1) * d]
        k = blk.shape[1]
        err = np.abs(blk @ np.swapaxes(blk, 1, 2) - want[:k, :k])
        err[~np.isfinite(err)] = np.inf  # a zero row has no direction: the geometry fails
        i = int(np.argmax(err))
        if err.flat[i] > worst:
            t, a, c = np.unravel_index(i, err.shape)
            worst, where = float(err.flat[i]), f"draw {t}, rows {b * d + a}, {b * d + c}"
    return AuditTest("structure", n * -(-M // d), worst, f"{where} [{structure} cosines]", worst <= tol,
                     f"exact to {tol:.2g} ({dtype} rounding: {GEOMETRY_ULPS} sqrt(d) eps, or geometry_tol)")

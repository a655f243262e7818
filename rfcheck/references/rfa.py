"""Reference computations for Random Feature Attention (Peng et al., ICLR 2021; ``rfa``).

The independent sides of the ``rfa`` claims: the ``D -> inf`` limit of the trigonometric
random-feature kernel by quadrature of the characteristic function of the *sampling*
distribution (never its closed form), its Arb enclosure, the ``D -> inf`` limit of RFA
itself, attention as an explicit weighted quadratic form in mpmath and in exact rationals (with
a grid of exact rationals for the claims' recurrences), the random attention instances the
claims are checked on, and the operation counts behind the complexity table (from the
implementations in :mod:`rfcheck.estimators.rfa`).

Pairs of vectors are given as ``x = nx e1``, ``y = ny (cos theta e1 + sin theta e2)``
(:func:`rfcheck.ledger.pair_domain`).

References
----------
Peng et al., *Random Feature Attention*, ICLR 2021: sec 2 'Background: Random Feature
Methods' (the kernel identity), sec 3 'Non-Causal (Cross) Attention', Algorithm 'Causal
RFA', 'Gated Variant (RFA-Gate)', table 'Complexity Analysis'.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
from flint import fmpq

from rfcheck import quadrature
from rfcheck.estimators import rfa as impl

__all__ = [
    "ExactGrid",
    "attention_instance",
    "attention_quadratic_exact",
    "attention_quadratic_mp",
    "operation_count",
    "rfa_limit_attention",
    "rfa_limit_attention_ball",
    "softmax_instance",
    "trig_kernel_limit",
    "trig_kernel_limit_ball",
    "trig_kernel_samples",
]


def trig_kernel_limit(nx: float, ny: float, theta: float, sigma: float, dps: int) -> tuple[Any, Any]:
    """``lim_{D->inf} exp((|x|^2+|y|^2)/(2 sigma^2)) phi(x).phi(y)`` for ``w_i ~ N(0, sigma^2 I)``.

    ``phi(x) = D^{-1/2} [sin(w_i.x), cos(w_i.x)]_i`` gives ``phi(x).phi(y) -> E cos(w.(x - y))``,
    a 1-D Gaussian expectation along ``x - y``: ``E cos(sigma |x - y| z)``, ``z ~ N(0, 1)``,
    computed by quadrature (:func:`rfcheck.quadrature.gaussian_exp_moment`) at ``dps`` and
    ``dps + 15`` digits (Peng et al. 2021, sec 2).

    Parameters
    ----------
    nx, ny : float
        The norms ``|x|``, ``|y|`` of the pair ``x = nx e1``, ``y = ny (cos theta e1 + sin theta
        e2)`` (:func:`rfcheck.ledger.pair_domain`).
    theta : float
        The angle between ``x`` and ``y`` (radians).
    sigma : float
        The scale of the sampling distribution, ``w ~ N(0, sigma^2 I)`` (> 0).
    dps : int
        Decimal digits asked for.

    Returns
    -------
    (mpmath.mpf, mpmath.mpf)
        The limit and its error bar (rounded to the caller's mpmath precision).

    References
    ----------
    Peng et al. 2021, sec 2 'Background: Random Feature Methods' (the random-feature identity
    ``exp(-|x - y|^2/(2 sigma^2)) = E phi(x).phi(y)``).

    Examples
    --------
    ``x = y = e1``, ``sigma = 1``: ``e^{(1 + 1)/2} E cos(0) = e``:

    >>> import mpmath
    >>> from rfcheck.references.rfa import trig_kernel_limit
    >>> with mpmath.workdps(30):
    ...     value, err = trig_kernel_limit(1.0, 1.0, 0.0, 1.0, 30)
    ...     bool(abs(value - mpmath.e) < 1e-25), bool(err < 1e-25)
    (True, True)
    """
    def compute(prec: int) -> tuple[Any, Any]:
        a, b, t, sig = mpmath.mpf(nx), mpmath.mpf(ny), mpmath.mpf(theta), mpmath.mpf(sigma)
        sq_diff = (a - b) ** 2 + 4 * a * b * mpmath.sin(t / 2) ** 2  # |x - y|^2 without cancellation
        v, e = quadrature.gaussian_exp_moment(0, mpmath.mpc(0, sig * mpmath.sqrt(sq_diff)))
        pref = mpmath.exp((a**2 + b**2) / (2 * sig**2))
        return pref * mpmath.re(v), pref * abs(e)

    r = quadrature.with_error(compute, dps, "quadrature")
    return r.value, r.err


def _cos_expectation_ball(c: Any, bits: int) -> Any:
    """``E cos(c z)``, ``z ~ N(0, 1)``, as an Arb ball (rigorous integral and tail bound)."""
    from rfcheck.certify import gaussian_expectation_1d

    return gaussian_expectation_1d(lambda w, analytic: (w * c).cos(), growth=(1.0, 0.0), prec=bits)


def trig_kernel_limit_ball(nx: float, ny: float, theta: float, sigma: float, bits: int) -> Any:
    """:func:`trig_kernel_limit` as a ``flint.arb`` ball with a rigorous radius (the point's
    floats exact; ``E cos(sigma |x - y| z)`` by Arb's certified integration).

    Parameters
    ----------
    nx, ny : float
        The norms of the pair ``x = nx e1``, ``y = ny (cos theta e1 + sin theta e2)``, taken at
        their exact binary values.
    theta : float
        The angle between ``x`` and ``y`` (radians; the float itself, not the real it rounds).
    sigma : float
        The scale of the sampling distribution, ``w ~ N(0, sigma^2 I)`` (> 0).
    bits : int
        Working precision in bits (the radius is about ``2^-bits`` relative).

    Returns
    -------
    flint.arb
        A ball that contains the limit at the exact point.

    References
    ----------
    Peng et al. 2021, sec 2 'Background: Random Feature Methods'.

    Examples
    --------
    >>> import math
    >>> from rfcheck.references.rfa import trig_kernel_limit_ball
    >>> b = trig_kernel_limit_ball(1.0, 1.0, 0.0, 1.0, 80)  # x = y = e1: e^{|x|^2/sigma^2} = e
    >>> bool(abs(float(b.mid()) - math.e) < 1e-15), float(b.rad()) < 1e-20
    (True, True)
    """
    from flint import arb

    from rfcheck.arb_backend import workprec

    with workprec(bits):
        a, b, t, s = arb(nx), arb(ny), arb(theta), arb(sigma)
        sq_diff = (a - b) ** 2 + 4 * a * b * (t / 2).sin() ** 2
        pref = ((a * a + b * b) / (2 * s * s)).exp()
        return pref * _cos_expectation_ball(s * sq_diff.sqrt(), bits)


def trig_kernel_samples(x: np.ndarray, y: np.ndarray, sigma: float, n_features: int, n: int,
                        seed: int) -> np.ndarray:
    """``n`` independent draws of ``exp((|x|^2+|y|^2)/(2 sigma^2)) phi(x).phi(y)`` (float64).

    ``phi(x) = D^{-1/2} [sin(w_i.x), cos(w_i.x)]_{i<=D}`` with ``D = n_features`` iid
    ``w_i ~ N(0, sigma^2 I)`` per draw (Peng et al. 2021, sec 2); the mean is
    :func:`trig_kernel_limit` for every ``D`` (unbiased).  Drawn in chunks of 2000 from
    ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    x, y : numpy.ndarray
        The pair of vectors, shape ``(d,)`` each (raveled; converted to float64).
    sigma : float
        The scale of the sampling distribution, ``w ~ N(0, sigma^2 I)`` (> 0).
    n_features : int
        ``D``, the random features per draw (the feature map has width ``2 D``).
    n : int
        Number of independent draws.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray
        The ``n`` draws, shape ``(n,)``, float64.

    References
    ----------
    Peng et al. 2021, sec 2 'Background: Random Feature Methods'.

    Examples
    --------
    The sample mean agrees with the ``D -> inf`` limit (1 for ``x = e1``, ``y = e2``,
    ``sigma = 1``) within five standard errors:

    >>> import numpy as np
    >>> from rfcheck.references.rfa import trig_kernel_samples
    >>> s = trig_kernel_samples(np.array([1.0, 0.0]), np.array([0.0, 1.0]), 1.0, 4, 4000, seed=1)
    >>> s.shape, bool(abs(s.mean() - 1) < 5 * s.std() / np.sqrt(s.size))
    ((4000,), True)
    """
    x, y = np.ravel(np.asarray(x, float)), np.ravel(np.asarray(y, float))
    rng = np.random.default_rng(seed)
    vals = np.empty(n)
    for lo in range(0, n, 2000):
        c = min(2000, n - lo)
        w = sigma * rng.standard_normal((c, n_features, x.shape[0]))
        phx = np.concatenate([np.sin(w @ x), np.cos(w @ x)], axis=1) / math.sqrt(n_features)
        phy = np.concatenate([np.sin(w @ y), np.cos(w @ y)], axis=1) / math.sqrt(n_features)
        vals[lo:lo + c] = np.sum(phx * phy, axis=1)
    return vals * math.exp((x @ x + y @ y) / (2 * sigma**2))


def _instance_checks(q: np.ndarray, keys: np.ndarray, values: np.ndarray) -> None:
    if keys.ndim != 2 or q.shape != (keys.shape[1],) or values.shape != (keys.shape[0],):
        raise ValueError("q: (d,), keys: (n, d), values: (n,)")


def softmax_instance(n: int, d: int, qnorm: float, knorm: float, spread: float,
                     draw: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A random softmax-attention instance: one query, ``n`` keys of spread norms and ``n`` scalar values.

    From NumPy's generator seeded ``[draw, n, d]``: ``q`` of norm ``qnorm`` (random direction), keys of
    random directions and norms ``knorm (1 + spread U(-1, 1))``, values standard normal.  With
    ``spread = 0`` all keys are signed permutations of the first: their norms are equal exactly (random
    directions of one norm would differ by float64 rounding).

    Parameters
    ----------
    n : int
        Number of keys.
    d : int
        Dimension of the query and the keys.
    qnorm, knorm : float
        The query's norm and the keys' typical norm.
    spread : float
        Relative spread of the key norms, in ``[0, 1)``.
    draw : int
        Seed.

    Returns
    -------
    (q, keys, values, norms) : tuple of numpy.ndarray
        ``q`` (``d``), ``keys`` (``n x d``), ``values`` (``n``) and the drawn key norms (``n``).

    References
    ----------
    Peng et al., *Random Feature Attention*: 'Non-Causal (Cross) Attention' (softmax attention).

    Examples
    --------
    >>> from fractions import Fraction
    >>> q, k, v, norms = softmax_instance(4, 3, 1.0, 0.5, 0.0, 7)
    >>> k.shape, v.shape, len({sum(Fraction(float(x)) ** 2 for x in row) for row in k})  # one exact norm
    ((4, 3), (4,), 1)
    """
    rng = np.random.default_rng([int(draw), n, d])
    q = rng.standard_normal(d)
    q *= qnorm / np.linalg.norm(q)
    dirs = rng.standard_normal((n, d))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    norms = knorm * (1 + spread * rng.uniform(-1, 1, n))
    k = dirs * norms[:, None]
    v = rng.standard_normal(n)
    if spread == 0:  # equal norms exactly, not to float64 rounding: signed permutations of one key
        k0 = k[0].copy()
        k = np.array([k0[rng.permutation(d)] * rng.choice([-1.0, 1.0], d) for _ in range(n)])
    return q, k, v, norms


def rfa_limit_attention(q: np.ndarray, keys: np.ndarray, values: np.ndarray, dps: int) -> tuple[Any, Any]:
    """``lim_{D->inf} RFA(q, K, v)`` with ``sigma = 1`` (``w ~ N(0, I)``), by quadrature.

    ``phi(q).phi(k_i) -> E cos(w.(q - k_i)) = E cos(|q - k_i| z)`` (1-D quadrature, no closed
    form used); the limit is ``sum_i c_i v_i / sum_j c_j`` (Peng et al. 2021, sec 3).

    Parameters
    ----------
    q : ndarray, shape (d,)
    keys : ndarray, shape (n, d)
    values : ndarray, shape (n,)
    dps : int
        Working digits (the caller's precision context is used for the sums).

    Returns
    -------
    (mpmath.mpf, mpmath.mpf)
        The limit and the propagated quadrature error bar.

    Raises
    ------
    ValueError
        If the shapes are not ``q: (d,)``, ``keys: (n, d)``, ``values: (n,)``.
    """
    q, keys, values = np.asarray(q, float), np.asarray(keys, float), np.asarray(values, float)
    _instance_checks(q, keys, values)
    n, d = keys.shape
    with mpmath.workdps(dps):
        qm = [mpmath.mpf(x) for x in q]
        lim, err = [], mpmath.mpf(0)
        for i in range(n):
            delta = mpmath.sqrt(sum((qm[a] - mpmath.mpf(keys[i, a])) ** 2 for a in range(d)))
            val, e = quadrature.gaussian_exp_moment(0, mpmath.mpc(0, delta))
            lim.append(mpmath.re(val))
            err += abs(e)
        ref = sum(lim[i] * values[i] for i in range(n)) / sum(lim)
        return ref, err * (sum(abs(x) for x in values) + abs(ref) * n) / abs(sum(lim))


def rfa_limit_attention_ball(q: np.ndarray, keys: np.ndarray, values: np.ndarray, bits: int) -> Any:
    """:func:`rfa_limit_attention` as a ``flint.arb`` ball (the inputs' floats exact; each
    ``E cos(|q - k_i| z)`` by Arb's certified integration).

    Parameters
    ----------
    q : numpy.ndarray, shape (d,)
        The query (converted to float64; its floats are taken exactly).
    keys : numpy.ndarray, shape (n, d)
        The keys.
    values : numpy.ndarray, shape (n,)
        The (scalar) values.
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb
        A ball that contains ``sum_i c_i v_i / sum_j c_j``, ``c_i = E cos(|q - k_i| z)``.

    Raises
    ------
    ValueError
        If the shapes are not ``q: (d,)``, ``keys: (n, d)``, ``values: (n,)``.

    References
    ----------
    Peng et al. 2021, sec 3 'Non-Causal (Cross) Attention' (RFA with ``sigma = 1``).

    Examples
    --------
    Two keys at the same distance from the query get equal weights: the limit is the mean value.

    >>> import numpy as np
    >>> from flint import arb
    >>> from rfcheck.references.rfa import rfa_limit_attention_ball
    >>> b = rfa_limit_attention_ball(np.zeros(2), np.eye(2), np.array([1.0, 3.0]), 80)
    >>> b.contains(arb(2)), float(b.rad()) < 1e-15
    (True, True)
    """
    from flint import arb

    from rfcheck.arb_backend import workprec

    q, keys, values = np.asarray(q, float), np.asarray(keys, float), np.asarray(values, float)
    _instance_checks(q, keys, values)
    with workprec(bits):
        lim = [_cos_expectation_ball(sum(((arb(a) - arb(b)) ** 2 for a, b in zip(q, k, strict=True)),
                                         arb(0)).sqrt(), bits) for k in keys]
        return sum((c * arb(v) for c, v in zip(lim, values, strict=True)), arb(0)) / sum(lim, arb(0))


def attention_instance(n: int, d: int, big_d: int, scale: float, draw: int) -> dict[str, np.ndarray]:
    """A random attention instance: queries, keys, values, their trigonometric features and gates.

    From NumPy's generator seeded ``[draw, n, d, big_d]``: ``q, k`` with entries ``N(0, scale^2/d)``,
    ``v`` standard normal, ``big_d`` frequencies ``w ~ N(0, I_d)`` (the kernel identity's ``sigma = 1``)
    and the features :func:`rfcheck.estimators.rfa.trig_features` of ``q`` and ``k``, gates
    ``sigmoid(2 N(0, 1))``.

    Parameters
    ----------
    n : int
        Number of tokens.
    d : int
        Dimension of queries, keys and values.
    big_d : int
        Number of random frequencies ``D`` (``2 D`` features).
    scale : float
        Typical norm of a query or key.
    draw : int
        Seed.

    Returns
    -------
    dict of str to numpy.ndarray
        ``q``, ``k``, ``v`` (``n x d``), ``phi_q``, ``phi_k`` (``n x 2 D``) and ``g`` (``n``, in (0, 1)).

    References
    ----------
    Peng et al., *Random Feature Attention*: 'Background: Random Feature Methods' (the features),
    'Gated Variant (RFA-Gate)' (the gates).

    Examples
    --------
    >>> from rfcheck.references.rfa import attention_instance
    >>> inst = attention_instance(3, 2, 4, 1.0, 0)
    >>> inst["phi_q"].shape, inst["v"].shape, bool(((inst["g"] > 0) & (inst["g"] < 1)).all())
    ((3, 8), (3, 2), True)
    >>> bool(abs((inst["phi_q"] ** 2).sum(axis=1) - 1).max() < 1e-12)  # sin^2 + cos^2 over D, times 1/D
    True
    """
    n, d, big_d = int(n), int(d), int(big_d)
    rng = np.random.default_rng([int(draw), n, d, big_d])
    q = float(scale) * rng.standard_normal((n, d)) / math.sqrt(d)
    k = float(scale) * rng.standard_normal((n, d)) / math.sqrt(d)
    v = rng.standard_normal((n, d))
    w = rng.standard_normal((big_d, d))
    g = 1 / (1 + np.exp(-rng.standard_normal(n) * 2))
    return {"q": q, "k": k, "v": v, "phi_q": impl.trig_features(q, w), "phi_k": impl.trig_features(k, w), "g": g}


class ExactGrid:
    """A ``rows x cols`` grid of exact rationals (``flint.fmpq``) indexed like an ``mpmath.matrix``
    (``g[i, j]``; ``g[i]`` is ``g[i, 0]``, a column's entry), so that a recurrence written for
    mpmath matrices (RFA's printed ``S``, ``z`` updates) runs without rounding.

    Parameters
    ----------
    rows, cols : int
        The shape.
    values : sequence of sequences of float, optional
        Row-major entries, each taken as its exact binary value (default: all 0).

    References
    ----------
    Peng et al., *Random Feature Attention*: Algorithm 'Causal RFA', 'Gated Variant (RFA-Gate)'
    (the state ``S``, ``z`` the grid holds).

    Examples
    --------
    >>> import numpy as np
    >>> from flint import fmpq
    >>> from rfcheck.references.rfa import ExactGrid
    >>> g = ExactGrid.of(np.array([0.5, 0.1]))
    >>> g.rows, g.cols, g[0] == fmpq(1, 2), g[1, 0] == fmpq(1, 10), g[1, 0] == fmpq(*(0.1).as_integer_ratio())
    (2, 1, True, False, True)
    >>> z = ExactGrid(2, 2)
    >>> z[1, 0] += fmpq(1, 3)
    >>> z[1, 0] * 3 == 1, z[0, 1] == 0
    (True, True)
    """

    def __init__(self, rows: int, cols: int, values: Any = None) -> None:
        self.rows, self.cols = rows, cols
        self._v = [[fmpq(*float(x).as_integer_ratio()) for x in row] for row in values] if values is not None \
            else [[fmpq(0)] * cols for _ in range(rows)]

    @classmethod
    def of(cls, a: np.ndarray) -> ExactGrid:
        """The float64 array ``a`` (1-D: a column), each entry's exact value.

        Parameters
        ----------
        a : numpy.ndarray
            A 1-D or 2-D float64 array.

        Returns
        -------
        ExactGrid
            Its entries, exactly (a 1-D array as an ``n x 1`` column).
        """
        a2 = np.asarray(a)[:, None] if np.ndim(a) == 1 else np.atleast_2d(a)
        return cls(a2.shape[0], a2.shape[1], a2.tolist())

    def __getitem__(self, key: Any) -> Any:
        i, j = key if isinstance(key, tuple) else (key, 0)
        return self._v[i][j]

    def __setitem__(self, key: Any, value: Any) -> None:
        i, j = key if isinstance(key, tuple) else (key, 0)
        self._v[i][j] = value


def attention_quadratic_mp(phi_q: Any, phi_k: Any, v: Any, weights: Callable[[int, int], Any]) -> tuple[Any, list]:
    """Attention as an explicit quadratic form in mpmath, with its conditioning.

    ``h_t = sum_i c_ti A_ti v_i / sum_i c_ti A_ti``, ``A_ti = phi(q_t).phi(k_i)``, ``c_ti =
    weights(t, i)`` (1: non-causal; ``i <= t``: causal; ``(1 - g_i) prod_{j>i} g_j``: gated).

    Parameters
    ----------
    phi_q, phi_k, v : mpmath.matrix
        Query features (n_q x f), key features (n_k x f), values (n_k x d).
    weights : callable
        ``weights(t, i)``.

    Returns
    -------
    (mpmath.matrix, list)
        ``h`` (n_q x d) at the working precision (NaN in a row whose normaliser is exactly 0),
        and per query the conditioning ``sum_i |c_ti A_ti| / |sum_i c_ti A_ti|`` of its
        normaliser (``inf`` where it is 0).
    """
    n_q, n_k, d = phi_q.rows, phi_k.rows, v.cols
    h = mpmath.matrix(n_q, d)
    cond = []
    for t in range(n_q):
        a = [weights(t, i) * sum(phi_q[t, f] * phi_k[i, f] for f in range(phi_q.cols)) for i in range(n_k)]
        den = sum(a)
        cond.append(sum(abs(x) for x in a) / abs(den) if den != 0 else mpmath.inf)
        for j in range(d):
            h[t, j] = sum(a[i] * v[i, j] for i in range(n_k)) / den if den != 0 else mpmath.nan
    return h, cond


def attention_quadratic_exact(phi_q: np.ndarray, phi_k: np.ndarray, v: np.ndarray,
                              weights: Callable[[int, int], Any]) -> list[list[Any]]:
    """:func:`attention_quadratic_mp` in exact rational arithmetic on float64 inputs (no rounding).

    ``h_t = sum_i c_ti A_ti v_i / sum_i c_ti A_ti``, ``A_ti = phi(q_t).phi(k_i)``, every float64
    input taken as its exact binary value (``flint.fmpq``).

    Parameters
    ----------
    phi_q, phi_k, v : numpy.ndarray
        Query features (n_q x f), key features (n_k x f), values (n_k x d), float64.
    weights : callable
        ``weights(t, i) -> flint.fmpq`` (or an int).

    Returns
    -------
    list of list of flint.fmpq or None
        ``h`` (n_q x d), exactly; a row is ``None`` where its normaliser is exactly 0.

    References
    ----------
    Peng et al., *Random Feature Attention*: 'Non-Causal (Cross) Attention', Algorithm 'Causal
    RFA', 'Gated Variant (RFA-Gate)' (the attention each computes, as a quadratic form).

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.references.rfa import attention_quadratic_exact
    >>> h = attention_quadratic_exact(np.array([[1.0, 0.5]]), np.array([[1.0, 0.0], [0.5, 1.0]]),
    ...                               np.array([[2.0], [4.0]]), lambda t, i: 1)
    >>> h[0][0] == 3  # A = [1, 1]: (1 * 2 + 1 * 4)/2, exactly
    True
    """
    from flint import fmpq

    def ex(a: Any) -> list[list[Any]]:
        return [[fmpq(*float(x).as_integer_ratio()) for x in row] for row in np.atleast_2d(a)]

    pq, pk, vv = ex(phi_q), ex(phi_k), ex(v)
    out: list[list[Any]] = []
    for t in range(len(pq)):
        a = [weights(t, i) * sum((pq[t][f] * pk[i][f] for f in range(len(pq[t]))), fmpq(0)) for i in range(len(pk))]
        den = sum(a, fmpq(0))
        out.append(None if den == 0 else  # type: ignore[arg-type]
                   [sum((a[i] * vv[i][j] for i in range(len(pk))), fmpq(0)) / den for j in range(len(vv[0]))])
    return out


def operation_count(method: str, column: str, size: dict[str, int]) -> int:
    """Scalar operations (or words held) of softmax attention or RFA at one size.

    Parameters
    ----------
    method : {"softmax", "rfa"}
    column : {"train-time", "decode-time", "space"}
        Training (causal attention over ``N`` tokens, operations counted by
        :func:`rfcheck.estimators.rfa.rfa_causal` / :func:`rfcheck.estimators.rfa.softmax_attention`), one
        decoding step (:func:`rfcheck.estimators.rfa.rfa_decode_step_ops`,
        :func:`rfcheck.estimators.rfa.softmax_decode_step_ops`), or the words held while decoding step ``N``
        with a source of length ``M``.
    size : dict
        ``N`` (target length), ``M`` (source length), ``D`` (random features; RFA's width 2D),
        ``d`` (head dimension).

    Returns
    -------
    int
        The count: operations for ``"train-time"`` and ``"decode-time"``, words for
        ``"space"``.

    Raises
    ------
    ValueError
        If ``method`` is not ``"softmax"``/``"rfa"`` or ``column`` not one of
        ``"train-time"``, ``"decode-time"``, ``"space"``.
    KeyError
        If ``size`` lacks one of ``N``, ``M``, ``D``, ``d``.

    References
    ----------
    Peng et al. 2021, table 'Complexity Analysis', Algorithm 'Causal RFA'.

    Examples
    --------
    RFA's decoding state is independent of the lengths; softmax's cache grows with them:

    >>> from rfcheck.references.rfa import operation_count
    >>> size = {"N": 8, "M": 8, "D": 4, "d": 2}
    >>> operation_count("rfa", "space", size), operation_count("softmax", "space", size)
    (48, 64)
    """
    n, m, big_d, d = size["N"], size["M"], size["D"], size["d"]
    if method not in ("softmax", "rfa") or column not in ("train-time", "decode-time", "space"):
        raise ValueError(f"unknown method/column {method!r}/{column!r}")
    if column == "train-time":
        rng = np.random.default_rng(0)
        if method == "rfa":
            phi = rng.standard_normal((n, 2 * big_d))
            return impl.rfa_causal(phi, phi, rng.standard_normal((n, d)))[1]
        x = rng.standard_normal((n, d))
        return impl.softmax_attention(x, x, x, causal=True)[1]
    if column == "decode-time":
        if method == "rfa":
            return impl.rfa_decode_step_ops(n, m, 2 * big_d, d)
        return impl.softmax_decode_step_ops(n, m, d)
    if method == "rfa":
        return 2 * (2 * big_d * d + 2 * big_d)  # self-attention state (S, z) + source state
    return 2 * (n + m) * d  # cached keys and values of target and source

"""Feature maps f1(w, x), f2(w, y) and their products in projection form.

Every mechanism of the generalized-exponential family (CRT sec 3.1, eq 4) -- TrigRF,
PosRF, GERF(A, s) with complex A, OPRF -- has a feature *product* of the form

    f1(w, x) f2(w, y) = exp(log_c + alpha * |w|^2 + beta * w . u),      u = x + s y,

so an estimator depends on a projection ensemble only through ``|w_m|^2`` and the
projections ``w_m . u`` of one fixed vector.  :class:`ExpProduct` holds that form; the
Monte Carlo engines (``rfcheck.engine.montecarlo``) consume it, and the explicit feature maps
below are used by the ensemble path, the attention harness and the tests (the product of
the explicit maps equals the projection form to rounding).

References
----------
CRT: Likhosherstov et al., "Chefs' Random Tables: Non-Trigonometric Random Features",
sec 2.2 (TrigRF, PosRF), eq (4)-(5) (GERF), Thm 3.3 (OPRF).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rfcheck import validate
from rfcheck.closed_forms.crt import gerf_coefficients

__all__ = [
    "ExpProduct",
    "gerf_coefficients",
    "gerf_features",
    "gerf_product",
    "oprf_product",
    "positive_product",
    "trig_feature_map",
    "trig_product",
]


@dataclass(frozen=True)
class ExpProduct:
    """Feature product ``Re exp(log_c + alpha |w|^2 + beta w.u)`` for a batch of pairs.

    Parameters
    ----------
    alpha, beta : complex
        Coefficients of ``|w|^2`` and ``w . u`` (shared by all pairs).
    log_c : ndarray, shape (P,), float or complex
        Per-pair constant (log of the prefactor), principal branch.
    u : ndarray, shape (P, d), float
        Per-pair projection vector ``x + s y``.
    target : ndarray, shape (P,), float
        The kernel value the estimator is unbiased for.
    name : str, default "gerf"
        Mechanism name, for reports.

    Attributes
    ----------
    d : int
        The dimension (``u.shape[1]``).
    n_pairs : int
        The number of pairs ``P``.
    is_real : bool
        Whether ``alpha``, ``beta`` and ``log_c`` are all real (the product needs no ``Re``).

    References
    ----------
    Chefs' Random Tables (CRT), sec 3.1, eq (4): the generalized-exponential family.

    Examples
    --------
    >>> import numpy as np
    >>> p = positive_product([0.0, 0.0], [0.0, 0.0])
    >>> p.evaluate(np.array([1.0]), np.array([0.0]))  # exp(0 + 0 * 1 + 1 * 0)
    array([[1.]])
    """

    alpha: complex
    beta: complex
    log_c: np.ndarray
    u: np.ndarray
    target: np.ndarray
    name: str = "gerf"

    @property
    def d(self) -> int:
        return int(self.u.shape[1])

    @property
    def n_pairs(self) -> int:
        return int(self.u.shape[0])

    @property
    def is_real(self) -> bool:
        return (
            self.alpha.imag == 0.0
            and self.beta.imag == 0.0
            and bool(np.all(np.imag(self.log_c) == 0.0))
        )

    def evaluate(self, sq_norms: np.ndarray, proj: np.ndarray) -> np.ndarray:
        """Feature product for ``|w|^2 = sq_norms`` and ``w . u = proj`` (NumPy, vectorised)."""
        z = self.log_c[..., None] + self.alpha * sq_norms + self.beta * proj
        return np.real(np.exp(z)) if np.iscomplexobj(z) else np.exp(z)


def gerf_product(x: np.ndarray, y: np.ndarray, a: complex = 0.0, s: int = 1) -> ExpProduct:
    """GERF(A, s) feature product for pairs ``x[i], y[i]`` (CRT eq 4-5).

    ``f1 f2 = D^2 exp(2A|w|^2 + B w.(x + s y) + C(|x|^2 + |y|^2))``; its expectation under
    ``w ~ N(0, I_d)`` is the Gaussian kernel ``exp(-|x - y|^2 / 2)``.

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite, equal shapes.
    a : complex, default 0.0
        The GERF parameter ``A``, ``Re(1 - 4A) > 0`` (CRT Thm 3.1; see
        :func:`rfcheck.closed_forms.crt.gerf_coefficients`).
    s : {1, -1}, default 1
        The sign ``s`` of eq (4).

    Returns
    -------
    ExpProduct
        ``alpha = 2A``, ``beta = B``, ``log_c = log D^2 + C (|x|^2 + |y|^2)``, ``u = x + s y`` and
        the Gaussian kernel as ``target``; real coefficients where ``A`` and ``B`` are real.

    Raises
    ------
    ValueError
        If the pairs are invalid, ``s`` is not +-1, or ``Re(1 - 4A) <= 0``.

    References
    ----------
    Chefs' Random Tables (CRT), Thm 3.1, eq (4)-(5).

    Examples
    --------
    >>> p = gerf_product([0.5, 0.0], [0.0, 0.5], a=0.1)
    >>> p.is_real, p.u.shape
    (True, (1, 2))
    """
    x, y = validate.pairs(x, y)
    d = x.shape[1]
    a, b, c, _ = gerf_coefficients(a, s, d)
    log_d2 = 0.5 * d * np.log(complex(1 - 4 * a))  # log D^2, exact principal form
    norms = np.sum(x * x, axis=1) + np.sum(y * y, axis=1)
    log_c = log_d2 + c * norms
    target = np.exp(-0.5 * np.sum((x - y) ** 2, axis=1))
    if a.imag == 0 and b.imag == 0:
        log_c = np.real(log_c).astype(float)
        return ExpProduct(complex(2 * a), complex(b), log_c, x + s * y, target, "gerf")
    return ExpProduct(complex(2 * a), complex(b), log_c.astype(complex), x + s * y, target, "gerf")


def trig_product(x: np.ndarray, y: np.ndarray) -> ExpProduct:
    """TrigRF (CRT sec 2.2): ``Re exp(i w.(x - y))`` = GERF with A = 0, s = -1.

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite, equal shapes.

    Returns
    -------
    ExpProduct
        ``alpha = 0``, ``beta = i``, ``u = x - y``, target the Gaussian kernel.

    Raises
    ------
    ValueError
        If the pairs are invalid (:func:`rfcheck.validate.pairs`).

    References
    ----------
    Chefs' Random Tables (CRT), sec 2.2 (TrigRF).

    Examples
    --------
    >>> trig_product([1.0], [0.0]).beta
    1j
    """
    p = gerf_product(x, y, 0.0, -1)
    return ExpProduct(0j, 1j, p.log_c, p.u, p.target, "trig")


def positive_product(x: np.ndarray, y: np.ndarray) -> ExpProduct:
    """PosRF (CRT sec 2.2): ``exp(w.(x + y) - |x|^2 - |y|^2)`` = GERF with A = 0, s = +1.

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite, equal shapes.

    Returns
    -------
    ExpProduct
        ``alpha = 0``, ``beta = 1``, ``u = x + y``, target the Gaussian kernel.

    Raises
    ------
    ValueError
        If the pairs are invalid (:func:`rfcheck.validate.pairs`).

    References
    ----------
    Chefs' Random Tables (CRT), sec 2.2 (PosRF).

    Examples
    --------
    >>> positive_product([1.0], [0.0]).name
    'positive'
    """
    p = gerf_product(x, y, 0.0, 1)
    return ExpProduct(0j, 1 + 0j, p.log_c, p.u, p.target, "positive")


def oprf_product(x: np.ndarray, y: np.ndarray, a: float | None = None) -> ExpProduct:
    """OPRF (CRT Thm 3.3): GERF with s = +1 and the optimal real ``A*`` for this pair.

    With ``a=None`` and a single pair, ``A*`` is computed from ``|x + y|^2`` by the
    non-cancelling form of eq (22) (``rfcheck.closed_forms.crt.oprf_a_star``); for
    several pairs pass ``a`` explicitly (e.g. from the eq (8) statistics).

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite, equal shapes.
    a : float, optional
        The real GERF parameter ``A``; default ``A*`` of the single pair.

    Returns
    -------
    ExpProduct
        The GERF(A, +1) product, named ``"oprf"``.

    Raises
    ------
    ValueError
        If the pairs are invalid, or ``a`` is None with more than one pair.

    References
    ----------
    Chefs' Random Tables (CRT), Thm 3.3 and eq (22) (``A*``); eq (8) for several pairs.

    Examples
    --------
    >>> p = oprf_product([0.3, 0.0], [0.0, 0.4])
    >>> p.name, p.is_real
    ('oprf', True)
    """
    x, y = validate.pairs(x, y)
    if a is None:
        if x.shape[0] != 1:
            raise ValueError("oprf_product with several pairs needs an explicit A (eq 8 statistics)")
        from rfcheck.closed_forms.crt import oprf_a_star

        a = float(oprf_a_star(float(np.sum((x + y) ** 2)), x.shape[1]))
    p = gerf_product(x, y, a, 1)
    return ExpProduct(p.alpha, p.beta, p.log_c, p.u, p.target, "oprf")


def gerf_features(
    w: np.ndarray, x: np.ndarray, a: complex = 0.0, s: int = 1, which: int = 1
) -> np.ndarray:
    """Explicit GERF feature map (CRT eq 4) for projections ``w`` (M, d) and points ``x`` (L, d).

    Returns the (L, M) complex matrix ``f^(which)(w_m, x_l)``; ``which=2`` uses ``s B``.

    Parameters
    ----------
    w : array_like
        Shape (M, d): the projections ``w_m``, finite.
    x : array_like
        Shape (d,) or (L, d): the points, finite.
    a : complex, default 0.0
        The GERF parameter ``A``.
    s : {1, -1}, default 1
        The sign ``s`` of eq (4).
    which : {1, 2}, default 1
        ``f^(1)`` (coefficient ``B``) or ``f^(2)`` (coefficient ``s B``).

    Returns
    -------
    numpy.ndarray
        Shape (L, M), complex: ``D exp(A |w_m|^2 + B' w_m.x_l + C |x_l|^2)``.

    Raises
    ------
    ValueError
        If ``which`` is not 1 or 2, ``w`` or ``x`` is not finite, ``w`` is not (M, d) with the
        ``d`` of ``x``, or ``a``, ``s`` are not admissible.

    References
    ----------
    Chefs' Random Tables (CRT), eq (4)-(5).

    Examples
    --------
    >>> import numpy as np
    >>> f1 = gerf_features(np.zeros((3, 2)), [0.0, 0.0])
    >>> f1.shape
    (1, 3)
    """
    if which not in (1, 2):
        raise ValueError(f"which must be 1 (f^(1)) or 2 (f^(2)); got {which!r}")
    w = validate.finite_array(w, "w")
    x = validate.points(x, "x")
    if w.ndim != 2 or w.shape[1] != x.shape[1]:
        raise ValueError(f"w must have shape (M, d) with d = {x.shape[1]}; got {w.shape}")
    a, b, c, dd = gerf_coefficients(a, s, x.shape[1])
    sb = b if which == 1 else s * b
    z = a * np.sum(w * w, axis=1)[None, :] + sb * (x @ w.T) + c * np.sum(x * x, axis=1)[:, None]
    return dd * np.exp(z)


def trig_feature_map(
    x: Any,
    w: Any,
    *,
    xp: Any = np,
    norm_factor: bool = True,
    order: Literal["sin_cos", "cos_sin"] = "sin_cos",
    log_scale: bool = False,
) -> Any:
    """Trigonometric feature map ``phi(x) = M^-1/2 exp(|x|^2/2) [sin(w_1.x) .. sin(w_M.x), cos(w_1.x) .. cos(w_M.x)]``.

    The one definition of the trigonometric (random Fourier) feature map of the project; the
    HRF NumPy estimators (:func:`rfcheck.estimators.hrf.trig_features`), the RFA feature map
    (:func:`rfcheck.estimators.rfa.trig_features`) and the JAX attention harness
    (``rfcheck.attention``, cosines first, log-scale form) call it.
    ``phi(x) . phi(y) = exp((|x|^2 + |y|^2)/2) M^-1 sum_i cos(w_i.(x - y))``, unbiased for the
    softmax kernel ``exp(x.y)`` when ``w_i ~ N(0, I_d)``.  No validation: the callers validate.

    Parameters
    ----------
    x : array
        Either one point, shape (d,), with projections ``w`` of shape (..., M, d) (leading
        dimensions are independent draws; output (..., 2M)); or rows, shape (..., n, d), with
        one projection matrix ``w`` of shape (M, d) (output (..., n, 2M)).
    w : array
        The projections ``w_1 .. w_M`` (rows).
    xp : module, default numpy
        The array namespace (``numpy`` or ``jax.numpy``) the map is computed in.
    norm_factor : bool, default True
        Include ``exp(|x|^2/2)`` (``False``: the map ``M^-1/2 [sin, cos]`` of RFA as printed,
        unbiased for the Gaussian kernel ``exp(-|x - y|^2/2)``).
    order : {"sin_cos", "cos_sin"}, default "sin_cos"
        Which block comes first (the papers print sines first; the attention harness puts the
        cosines first).  The product ``phi(x) . phi(y)`` does not depend on it.
    log_scale : bool, default False
        Return ``(s, b)`` with ``phi = exp(s)[..., None] * b``: ``s = |x|^2/2`` (zeros without
        ``norm_factor``) the log-scale and ``b = M^-1/2 [sin, cos]`` bounded by ``M^-1/2``.

    Returns
    -------
    array or tuple of arrays
        ``phi(x)`` (computed as ``(exp(s) / sqrt(M))[..., None] * [sin, cos]``), or ``(s, b)``
        when ``log_scale``.

    Raises
    ------
    ValueError
        If ``order`` is not ``"sin_cos"`` or ``"cos_sin"``.

    References
    ----------
    K. Choromanski et al., "Hybrid Random Features", ICLR 2022, eq (2) (``phi^trig_m``);
    Peng et al., "Random Feature Attention", ICLR 2021, sec 2 (``phi`` without the norm factor);
    Likhosherstov et al., "Chefs' Random Tables", sec 2.2 (TrigRF).

    Examples
    --------
    >>> trig_feature_map(np.array([0.0, 0.0]), np.array([[1.0, 0.0]]))  # exp(0) * [sin 0, cos 0]
    array([0., 1.])
    >>> s, b = trig_feature_map(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), log_scale=True)
    >>> float(s[0]), b.tolist()
    (0.5, [[0.0, 1.0]])
    """
    if order not in ("sin_cos", "cos_sin"):
        raise ValueError(f"order must be 'sin_cos' or 'cos_sin'; got {order!r}")
    if x.ndim == 1:  # one point, batched draws (..., M, d)
        proj, sq = w @ x, x @ x
    else:  # rows (..., n, d), one projection matrix (M, d)
        proj, sq = x @ xp.swapaxes(w, -1, -2), xp.sum(x * x, axis=-1)
    root_m = math.sqrt(w.shape[-2])
    parts = (xp.sin(proj), xp.cos(proj)) if order == "sin_cos" else (xp.cos(proj), xp.sin(proj))
    c = xp.concatenate(parts, axis=-1)
    if log_scale:
        return (0.5 * sq if norm_factor else xp.zeros(x.shape[:-1], x.dtype)), c / root_m
    if not norm_factor:
        return c / root_m
    return (xp.exp(0.5 * sq) / root_m)[..., None] * c

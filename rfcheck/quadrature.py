"""High-precision references by quadrature of the defining expectations (mpmath).

These never use a closed form of the quantity they check: a Gaussian expectation in
R^d is reduced to one-dimensional integrals by rotation invariance only (the direction
of ``u`` and its orthogonal complement), and each integral is computed numerically: the
Gaussian moments by Arb's rigorous integration (:func:`gaussian_exp_moment`, whose error
bar is a bound), the orthogonal-pair factor by mpmath's tanh-sinh quadrature.  Every value
carries an error bar: the integrals' own error (bound or estimate) plus the change when the
whole computation is repeated with 15 more digits (an explicit check for cancellation, as
mpmath recommends).  The integrals are memoised by their exact arguments and precision.

References
----------
CRT appendix 9.2-9.3 (the integrals behind eq (16)-(21)); appendix 9.7 (orthogonal pairs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mpmath

from rfcheck import memo

#: half periods resolved by breakpoints before the contour is moved to the steepest-descent line
MAX_OSCILLATIONS = 120
#: precision doublings ``with_error`` may try when digits are lost
MAX_DOUBLINGS = 2

__all__ = [
    "RefValue",
    "gaussian_exp_moment",
    "gerf_reference",
    "orf_pair_factor",
    "product_with_error",
    "with_error",
]


@dataclass(frozen=True)
class RefValue:
    """A reference value with an absolute error bar (mpmath numbers).

    Parameters
    ----------
    value : mpmath.mpf or mpmath.mpc
        The reference value.
    err : mpmath.mpf
        Its absolute error bar (a bound where the method gives one, otherwise an estimate).
    method : str
        How it was computed, with the working precision reached (``"quadrature@30"``, ...).

    Examples
    --------
    >>> float(RefValue(mpmath.mpf(2), mpmath.mpf("1e-20"), "exact@15"))
    2.0
    """

    value: Any
    err: Any
    method: str

    def __float__(self) -> float:
        return float(mpmath.re(self.value))


def _adaptive(compute: Callable[[int], tuple[Any, Any]], dps: int,
              scales: Callable[[list[Any]], list[Any]] | None = None) -> tuple[list[Any], list[Any], int]:
    """Run ``compute(prec) -> (values, quad_errs)`` at ``prec`` and ``prec + 15`` digits.

    Values may be one number or a sequence.  Each error bar is ``|v(prec) - v(prec + 15)| +
    quad_err(prec + 15)``.  When a bar exceeds ``10^(5 - dps)`` times its scale (``|v|`` by
    default; digits lost to cancellation or oscillation), the working precision is doubled,
    up to ``MAX_DOUBLINGS`` times -- mpmath's ``autoprec`` idea; whatever is left is reported
    honestly in the error bar.  Precision is restored on exit.
    """

    def as_list(v: Any) -> list[Any]:
        return list(v) if isinstance(v, list | tuple | mpmath.matrix) else [v]

    prec = dps
    for _ in range(MAX_DOUBLINGS + 1):
        with mpmath.workdps(prec):
            v1 = as_list(compute(prec)[0])
        with mpmath.workdps(prec + 15):
            v2, e2 = (as_list(v) for v in compute(prec + 15))
            errs = [abs(b - a) + abs(e) for a, b, e in zip(v1, v2, e2, strict=True)]
            sc = scales(v2) if scales else [abs(v) for v in v2]
            if all(e <= mpmath.mpf(10) ** (5 - dps) * c for e, c in zip(errs, sc, strict=True)):
                break
        prec *= 2
    return v2, errs, prec


def with_error(compute: Callable[[int], tuple[Any, Any]], dps: int, method: str) -> RefValue:
    """A scalar reference with its error bar.

    ``compute(prec)`` runs at ``dps`` and ``dps + 15`` digits; the error bar is the difference
    of the two values plus the second run's own error, and the precision is doubled (at most
    ``MAX_DOUBLINGS`` times) while that exceeds ``10^(5 - dps)`` relative.

    Parameters
    ----------
    compute : callable
        ``prec -> (value, own_error)``, computed at the current mpmath precision (``prec`` digits).
    dps : int
        The target precision in decimal digits.
    method : str
        The name recorded in ``RefValue.method`` (the final precision is appended).

    Returns
    -------
    RefValue
        The value of the higher-precision run and its error bar.

    Examples
    --------
    >>> r = with_error(lambda prec: (mpmath.pi, 0), 20, "constant")
    >>> r.method, float(r.err)
    ('constant@20', 0.0)
    """
    v, e, prec = _adaptive(compute, dps)
    return RefValue(v[0], e[0], f"{method}@{prec}")


def product_with_error(factors: list[tuple[Any, Any, int]]) -> tuple[Any, Any]:
    """``prod v_i^{k_i}`` and its first-order error bar from ``(v_i, err_i, k_i)``.

    Parameters
    ----------
    factors : list of (number, number, int)
        ``(v_i, err_i, k_i)``: a factor, its absolute error bar and its nonnegative integer power.

    Returns
    -------
    value : mpmath.mpf or mpmath.mpc
        ``prod v_i^{k_i}``.
    err : mpmath.mpf
        ``sum_i k_i err_i |value| / |v_i|`` (``err_i`` alone for a zero factor).

    Examples
    --------
    >>> v, e = product_with_error([(2, 0.1, 2), (3, 0, 1)])
    >>> float(v), round(float(e), 12)
    (12.0, 1.2)
    """
    val = mpmath.mpf(1)
    for v, _, k in factors:
        val *= v**k
    err = mpmath.mpf(0)
    for v, e, k in factors:
        if k:
            err += k * abs(e) * abs(val) / abs(v) if v != 0 else abs(e)
    return val, err


def gaussian_exp_moment(alpha: Any, beta: Any) -> tuple[Any, Any]:
    """``E exp(alpha w^2 + beta w)`` for ``w ~ N(0, 1)`` by quadrature (complex allowed).

    Computed as a rigorous Arb integral of the defining expectation
    (:func:`rfcheck.references.crt.gaussian_exp_moment_ball` at the working precision): the
    value is the ball's midpoint and the error estimate its radius (plus the rounding of the
    midpoint to the working precision) -- a bound, not an estimate.  The contours are those
    of the former mpmath tanh-sinh computation (still available as a private cross-check),
    described here.  Needs ``Re(1 - 2 alpha) > 0``.  For complex ``alpha`` the integration contour is
    rotated, ``w = e^{i phi} t`` with ``phi = -arg(1 - 2 alpha)/2`` (valid by Cauchy's
    theorem: the integrand is entire and decays in the sector swept), so the Gaussian
    factor becomes real and the chirp disappears; the linear term keeps a fixed
    oscillation, resolved by breakpoints every half period over the bulk, which sits
    around ``Re(beta')/|1 - 2 alpha|``.  Beyond ``MAX_OSCILLATIONS`` half periods the
    contour is also shifted to the steepest-descent line (``Im t = Im(beta')/|1-2alpha|``),
    where nothing oscillates.  Uses the current mpmath precision; returns
    ``(value, error_estimate)``.

    Memoised by the exact ``(alpha, beta)`` and the working precision (a module cache):
    the moments of one point share factors (``beta = 0``; for real ``A`` the terms of
    ``E[X^2]`` and ``E|X|^2`` coincide), and claims evaluate the same points; a hit returns
    the very numbers a fresh computation gives.

    Parameters
    ----------
    alpha : number
        The quadratic coefficient, real or complex, with ``Re(1 - 2 alpha) > 0``.
    beta : number
        The linear coefficient, real or complex.

    Returns
    -------
    value : mpmath.mpf or mpmath.mpc
        ``E exp(alpha w^2 + beta w)`` at the working precision.
    err : mpmath.mpf
        A bound on its absolute error.

    References
    ----------
    CRT appendix 9.2-9.3 (the one-dimensional integrals of the variance derivations).

    Examples
    --------
    Against the closed form ``(1 - 2 alpha)^(-1/2) exp(beta^2 / (2 (1 - 2 alpha)))``:

    >>> with mpmath.workdps(30):
    ...     v, e = gaussian_exp_moment(mpmath.mpf("0.1"), mpmath.mpf("0.5"))
    ...     exact = mpmath.mpf("0.8") ** -0.5 * mpmath.exp(mpmath.mpf("0.25") / mpmath.mpf("1.6"))
    ...     bool(abs(v - exact) <= e and e < mpmath.mpf("1e-28"))
    True
    """
    a = mpmath.mpmathify(alpha)
    b = mpmath.mpmathify(beta)
    key = (_exact(a), _exact(b), mpmath.mp.prec, mpmath.mp.dps)
    hit = _MOMENT_CACHE.get(key)
    if hit is None:
        hit = _gaussian_exp_moment_arb(a, b)
        if len(_MOMENT_CACHE) > 4096:
            _MOMENT_CACHE.clear()
        _MOMENT_CACHE[key] = hit
    return hit


_MOMENT_CACHE: dict[Any, tuple[Any, Any]] = memo.cache()


def _arb_mpf(x: Any) -> Any:
    """The exact mpmath value of an Arb midpoint or radius (an ``arb`` with finite value)."""
    man, exp = x.man_exp()
    return mpmath.mpf((int(man), int(exp)))


def _gaussian_exp_moment_arb(a: Any, b: Any) -> tuple[Any, Any]:
    """The moment as a ball (:func:`rfcheck.references.crt.gaussian_exp_moment_ball`, a rigorous
    integral at the working precision), returned as (midpoint, radius + rounding) in mpmath."""
    from rfcheck.references.crt import gaussian_exp_moment_ball

    ball = gaussian_exp_moment_ball(a, b, mpmath.mp.prec)
    if not (ball.real.is_finite() and ball.imag.is_finite()):
        raise ArithmeticError("the Gaussian moment could not be enclosed")
    mid = mpmath.mpc(_arb_mpf(ball.real.mid()), _arb_mpf(ball.imag.mid()))
    if isinstance(a, mpmath.mpf) and isinstance(b, mpmath.mpf):
        mid = mpmath.re(mid)  # real parameters: a real moment, as the tanh-sinh path returns
    err = _arb_mpf(ball.real.rad()) + _arb_mpf(ball.imag.rad()) + abs(mid) * mpmath.eps
    return mid, err


def _exact(z: Any) -> Any:
    """A hashable exact image of an mpmath number (its binary representation)."""
    return getattr(z, "_mpf_", None) or z._mpc_


def _gaussian_exp_moment(a: Any, b: Any) -> tuple[Any, Any]:
    """The same moment by mpmath's tanh-sinh quadrature (the former method; kept as an
    independent cross-check in the tests)."""
    q0 = 1 - 2 * a
    if mpmath.re(q0) <= 0:
        raise ValueError("the Gaussian expectation diverges: need Re(1 - 2 alpha) > 0")
    phi = -mpmath.arg(q0) / 2 if mpmath.im(q0) != 0 else mpmath.mpf(0)
    rot = mpmath.expj(phi) if phi != 0 else mpmath.mpf(1)
    q = abs(q0)
    b_rot = b * rot
    sig = 1 / mpmath.sqrt(q)
    width = mpmath.sqrt(2 * (mpmath.mp.dps + 10) * mpmath.log(10)) * sig
    n_osc = int(abs(mpmath.im(b_rot)) * 2 * width / mpmath.pi) + 4
    shift = mpmath.mpf(0)
    if n_osc > MAX_OSCILLATIONS:
        # too many oscillations to resolve: move the contour to Im t = Im(beta')/q, where the
        # linear term is real (the steepest-descent line); the integrand picks up a constant
        # factor, the remaining integral is a plain Gaussian-shaped quadrature
        shift = mpmath.mpc(0, mpmath.im(b_rot) / q)
        n_osc = 4
    c = mpmath.re(b_rot) / q
    norm = rot / mpmath.sqrt(2 * mpmath.pi)

    def f(t: Any) -> Any:
        z = t + shift
        return mpmath.exp(-q * z * z / 2 + b_rot * z)

    pts = [-mpmath.inf] + [c - width + 2 * width * k / n_osc for k in range(n_osc + 1)] + [mpmath.inf]
    val, err = mpmath.quad(f, pts, error=True)
    return norm * val, abs(norm) * err


def gerf_reference(
    sq_x: Any, sq_y: Any, sq_sum: Any, sq_diff: Any, d: int, a: Any, s: int, dps: int = 30
) -> dict[str, RefValue]:
    """Mean and variance of ``Re f1(w, x) f2(w, y)`` for GERF(A, s) (CRT eq 4-5), by quadrature.

    ``X = D^2 exp(2A|w|^2 + B w.u + C(|x|^2 + |y|^2))`` with ``u = x + s y``; rotating
    ``u`` onto the first axis, ``E[X] = D^2 e^{C(..)} I(2A, B|u|) I(2A, 0)^{d-1}`` with
    ``I(alpha, beta) = E exp(alpha w^2 + beta w)`` a 1-D quadrature.  Likewise ``E[X^2]``
    (parameters doubled) and ``E|X|^2``; ``E[(Re X)^2] = (Re E[X^2] + E|X|^2)/2``.

    Returns ``{"mean": ..., "second": ..., "var": ...}`` of ``Re X`` (only ``"mean"`` when
    ``Re(1 - 8A) <= 0``, where the second moment is infinite).

    Parameters
    ----------
    sq_x, sq_y : number
        ``|x|^2`` and ``|y|^2``.
    sq_sum, sq_diff : number
        ``|x + y|^2`` and ``|x - y|^2``.
    d : int
        The dimension.
    a : number
        GERF's parameter ``A`` (complex allowed), ``Re(1 - 4A) > 0``.
    s : {-1, 1}
        GERF's sign ``s``.
    dps : int, optional
        Target decimal digits (default 30).

    Returns
    -------
    dict of str to RefValue
        ``"mean"`` (``E Re X``, the kernel ``exp(-|x - y|^2/2)`` for an unbiased estimator),
        ``"second"`` (``E (Re X)^2``) and ``"var"`` (their difference), each with its error bar.

    References
    ----------
    CRT eq (4)-(5) (GERF); appendix 9.2-9.3 (the integrals).

    Examples
    --------
    PosRF (``A = 0``, ``s = 1``) for orthogonal unit vectors in ``d = 2``: mean ``exp(-1)``,
    second moment ``exp(2|x + y|^2 - 2(|x|^2 + |y|^2)) = 1``:

    >>> r = gerf_reference(1, 1, 2, 2, 2, 0, 1, dps=15)
    >>> bool(abs(r["mean"].value - mpmath.exp(-1)) < 1e-14), bool(abs(r["second"].value - 1) < 1e-14)
    (True, True)
    """

    def compute(prec: int) -> tuple[Any, Any]:
        aa = mpmath.mpmathify(a)
        one4a = 1 - 4 * aa
        b = mpmath.sqrt(s * one4a)
        c = -mpmath.mpf(s + 1) / 2
        dd = mpmath.power(mpmath.power(one4a, mpmath.mpf(1) / 4), d)
        v = (1 + s) / mpmath.mpf(2) * mpmath.mpf(sq_sum) + (1 - s) / mpmath.mpf(2) * mpmath.mpf(sq_diff)
        norm_u = mpmath.sqrt(v)
        nsum = mpmath.mpf(sq_x) + mpmath.mpf(sq_y)
        out = []
        errs = []
        # second moments exist only when Re(1 - 8A) > 0; the mean needs Re(1 - 4A) > 0
        n_terms = 3 if mpmath.re(1 - 8 * aa) > 0 else 1
        for alpha, beta, pref in ((
            (2 * aa, b * norm_u, dd**2 * mpmath.exp(c * nsum)),
            (4 * aa, 2 * b * norm_u, dd**4 * mpmath.exp(2 * c * nsum)),
            (
                4 * mpmath.re(aa),
                2 * mpmath.re(b) * norm_u,
                abs(dd) ** 4 * mpmath.exp(2 * mpmath.re(c) * nsum),
            ),
        ))[:n_terms]:
            i1, e1 = gaussian_exp_moment(alpha, beta)
            i0, e0 = gaussian_exp_moment(alpha, 0)
            val, err = product_with_error([(i1, e1, 1), (i0, e0, d - 1)])
            out.append(pref * val)
            errs.append(abs(pref) * err)
        mean = mpmath.re(out[0])
        if n_terms == 1:
            return mpmath.matrix([mean]), mpmath.matrix([errs[0]])
        second = (mpmath.re(out[1]) + mpmath.re(out[2])) / 2
        return mpmath.matrix([mean, second, second - mean**2]), mpmath.matrix(
            [errs[0], (errs[1] + errs[2]) / 2, (errs[1] + errs[2]) / 2 + 2 * abs(mean) * errs[0]]
        )

    # the variance is compared on the scale of the second moment (it may vanish)
    v2, errs, prec = _adaptive(compute, dps, lambda v: [abs(v[0])] + ([abs(v[1])] * 2 if len(v) > 1 else []))
    return {name: RefValue(v2[i], errs[i], f"quadrature@{prec}")
            for i, name in enumerate(("mean", "second", "var")[: len(v2)])}


def orf_pair_factor(u: Any, d: int, dps: int = 20) -> RefValue:
    """``E[X_1 X_2] / K^2`` for two PosRF/GERF(s=+1) samples from one orthogonal block.

    With directions orthonormal and norms ``R_i ~ chi_d`` independent, ``w_i . z = R_i t_i
    |z|`` where ``(t_1, t_2)`` are the first two coordinates of a uniform point on
    S^{d-1}, so (odd parts vanish by the symmetry ``t_i -> -t_i``)

        E[X_1 X_2]/K^2 = e^{-u} E[m(a t_1) m(a t_2)],   a = sqrt(u),  m(b) = E cosh(b R),

    ``m(b) = 1F1(d/2; 1/2; b^2/2)`` (chi_d moments).  Given ``t_1 = t``,
    ``t_2 = sqrt(1 - t^2) t'`` with ``t'`` a coordinate of a uniform point on S^{d-2}, whose
    even moments ``(1/2)_k / ((d-1)/2)_k`` give ``E[m(b t')] = 1F1(d/2; (d-1)/2; b^2/2)``.
    The remaining average over ``t`` (density ``prop. to (1 - t^2)^{(d-3)/2}``) is a 1-D
    tanh-sinh quadrature.  This avoids the double-series collapse (Chu-Vandermonde) used
    by the closed form ``rfcheck.closed_forms.crt.orf_log_covariance_factor``.  Memoised by
    ``(u, d, dps)`` (claims crt.thm4.1, eq24, eq27, ... ask for the same pairs).

    Parameters
    ----------
    u : number
        ``|z|^2``, ``z`` the vector the two samples project (``x + y`` for PosRF), ``u >= 0``.
    d : int
        The dimension, ``>= 2``.
    dps : int, optional
        Target decimal digits (default 20).

    Returns
    -------
    RefValue
        ``E[X_1 X_2] / K^2`` with its error bar (exactly 1 at ``u = 0``).

    Raises
    ------
    ValueError
        If ``d < 2``.

    References
    ----------
    CRT appendix 9.7 (orthogonal pairs), Thm 4.1.

    Examples
    --------
    >>> float(orf_pair_factor(0, 3).value)
    1.0
    >>> bool(orf_pair_factor(0.5, 3).value < 1)
    True
    """
    if d < 2:
        raise ValueError("an orthogonal pair needs d >= 2")
    key = (repr(u), int(d), int(dps))
    hit = _PAIR_CACHE.get(key)
    if hit is None:
        hit = _orf_pair_factor(u, d, dps)
        if len(_PAIR_CACHE) > 1024:
            _PAIR_CACHE.clear()
        _PAIR_CACHE[key] = hit
    return hit


_PAIR_CACHE: dict[Any, RefValue] = {}


def _orf_pair_factor(u: Any, d: int, dps: int) -> RefValue:
    """:func:`orf_pair_factor` without the cache."""

    def compute(prec: int) -> tuple[Any, Any]:
        uu = mpmath.mpf(u)
        half = mpmath.mpf(d) / 2
        expo = (mpmath.mpf(d) - 3) / 2
        norm = 1 / mpmath.beta(mpmath.mpf(1) / 2, (mpmath.mpf(d) - 1) / 2)

        def f(t: Any) -> Any:
            one_t2 = 1 - t * t
            return (
                norm
                * one_t2**expo
                * mpmath.hyp1f1(half, mpmath.mpf(1) / 2, uu * t * t / 2)
                * mpmath.hyp1f1(half, half - mpmath.mpf(1) / 2, uu * one_t2 / 2)
            )

        w = min(mpmath.mpf(1) / 2, 4 / mpmath.sqrt(d))
        val, err = mpmath.quad(f, [-1, -w, 0, w, 1], error=True)
        scale = mpmath.exp(-uu)
        return val * scale, err * scale

    return with_error(compute, dps, "1-D quadrature")

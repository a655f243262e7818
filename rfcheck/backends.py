"""Number systems a closed form is evaluated in: float64 (vectorised), mpmath, sympy.

A formula is written **once**, against a context object ``ctx`` (the mpmath idea of
``fp``/``mp``/``iv`` contexts), and :func:`formula` turns it into a public function with
three faces::

    @formula
    def _rho(ctx, u, d):
        return 2 * d / ((2 * u + d) + ctx.sqrt((2 * u + d) ** 2 + 8 * d * u))

    _rho(u, d)                            # float64, numpy broadcasting
    _rho(u, d, backend="mpmath", dps=50)  # mpmath at 50 digits (elementwise over arrays)
    _rho.symbolic(u, d)                   # sympy expression (pass sympy symbols)

Formulas stay branch-free (no ``if`` on values) so that the sympy face is the same
expression; cancellation-free algebraic forms are used instead of branches.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from rfcheck import validate

__all__ = ["FP", "MP", "SYM", "Backend", "formula", "get_backend", "num"]


class Backend:
    """Common interface; subclasses bind the elementary functions."""

    name = "abstract"

    #: the series summation's stopping rule: terms past their peak below this power of ten
    #: (times the sum's magnitude) beyond the working precision
    SERIES_GUARD_DIGITS = 8
    #: a series that has not stopped after this many terms raises ``ValueError``
    SERIES_MAX_TERMS = 200_000


def _direct_series(term: Callable[[int], Any], tol: Any, zero: Any, inf: Any, max_terms: int) -> Any:
    """``sum_k term(k)`` summed directly: stops at the first ``k > 8`` whose term is at most
    ``tol |sum|`` and no larger than the one before (past the peak of the terms)."""
    tot, k, prev = zero, 0, inf
    while True:
        t = term(k)
        tot += t
        if k > 8 and abs(t) <= tol * abs(tot) and abs(t) <= prev:
            return tot
        prev = abs(t)
        k += 1
        if k > max_terms:
            raise ValueError(f"series did not converge in {max_terms} terms")


def _series_doc(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.__doc__ = """``sum_{k >= 0} term(k)``: one transcription of a printed series on every context.

        The float64 and mpmath contexts sum the terms directly and stop once a term, past the
        peak of the terms, is below ``10^-(digits + 8)`` of the sum (``mpmath.nsum``'s
        extrapolation misjudges large-argument series); the sympy context returns the
        unevaluated ``Sum(term(k), (k, 0, oo))``; the Arb context sums balls and encloses the
        tail with ``ratio_bound`` (see :data:`rfcheck.arb_backend.ARB`).

        Parameters
        ----------
        term : callable
            ``k -> k``-th term, written with this context's numbers and functions (``k`` a
            Python int; a sympy integer symbol on the sympy context).
        ratio_bound : callable, optional
            ``k -> q_k`` with ``|t_{j+1} / t_j| <= q_k`` for **every** ``j >= k``: the proof
            that the tail is small, used only on balls (required there).

        Returns
        -------
        number
            The sum in this context's number type.

        Raises
        ------
        ValueError
            If the series has not stopped after ``SERIES_MAX_TERMS`` terms.
        """
    return fn


def _ratio_series(t0: Any, ratio: Callable[[int], Any], tol: Any, max_terms: int) -> Any:
    """``sum_k t_k`` with ``t_{k+1} = t_k ratio(k)``: stops once ``|ratio(k)| < 1`` and the new term is at
    most ``tol`` of the sum in modulus (or exactly 0)."""
    t, tot, k = t0, t0, 0
    while True:
        r = ratio(k)
        t *= r
        tot += t
        k += 1
        if (abs(r) < 1 and abs(t) <= tol * abs(tot)) or t == 0:
            return tot
        if k > max_terms:
            raise ValueError(f"series did not converge in {max_terms} terms")


def _ratio_series_doc(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.__doc__ = """``sum_{k >= 0} t_k`` with ``t_{k+1} = t_k ratio(k)``: a printed series given by its first
        term and its exact term ratio (a hypergeometric series), transcribed once on every context.

        The float64 and mpmath contexts multiply the ratios out and stop once ``|ratio(k)| < 1`` and the new
        term is below ``10^-(digits + 8)`` of the sum; the sympy context returns
        ``t0 Sum(Product(ratio(j), (j, 0, k - 1)), (k, 0, oo))``; the Arb context encloses the tail with
        ``ratio`` itself (see :data:`rfcheck.arb_backend.ARB`).

        Parameters
        ----------
        t0 : number
            The first term, this context's number.
        ratio : callable
            ``k -> t_{k+1} / t_k`` (``k`` a Python int; a sympy integer symbol on the sympy context); on
            balls its modulus must not increase with ``k`` (true of a hypergeometric ratio with positive
            parameters past its peak).

        Returns
        -------
        number
            The sum in this context's number type.

        Raises
        ------
        ValueError
            If the series has not stopped after ``SERIES_MAX_TERMS`` terms.
        """
    return fn


def _dominated_series_doc(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.__doc__ = """``sum_{k >= 0} term(k)`` whose terms are bounded by a majorant series: one transcription of
        a printed series whose own term ratio has no usable bound (an alternating inner sum).

        The float64, mpmath and sympy contexts are :meth:`series` (``majorant`` and ``ratio_bound`` unused);
        the Arb context sums balls and encloses the tail with the majorant (see
        :data:`rfcheck.arb_backend.ARB`).

        Parameters
        ----------
        term : callable
            ``k -> k``-th term, written with this context's numbers and functions.
        majorant : callable, optional
            ``k -> M_k`` with ``|term(k)| <= M_k`` (used only on balls, required there).
        ratio_bound : callable, optional
            ``k -> q_k`` with ``M_{j+1} / M_j <= q_k`` for every ``j >= k`` (used only on balls, required
            there).

        Returns
        -------
        number
            The sum in this context's number type.

        Raises
        ------
        ValueError
            If the series has not stopped after ``SERIES_MAX_TERMS`` terms.
        """
    return fn


class _Float64(Backend):
    name = "float64"

    @staticmethod
    def hyp0f1(b: Any, x: Any) -> Any:
        """The confluent limit function ``0F1(; b; x) = sum_k x^k / ((b)_k k!)`` (scipy's ``hyp0f1``)."""
        return sc.hyp0f1(b, x)

    @staticmethod
    def gammainc_lower(a: Any, x: Any) -> Any:
        """The lower incomplete gamma function ``gamma(a, x) = int_0^x t^{a-1} e^{-t} dt`` (``a > 0``, ``x >= 0``;
        scipy's regularized ``gammainc`` times ``Gamma(a)``)."""
        return sc.gammainc(a, x) * sc.gamma(a)

    @staticmethod
    @_ratio_series_doc
    def ratio_series(t0: Any, ratio: Callable[[int], Any]) -> Any:
        return _ratio_series(t0, ratio, 10.0 ** -(15 + Backend.SERIES_GUARD_DIGITS), Backend.SERIES_MAX_TERMS)

    @staticmethod
    @_dominated_series_doc
    def dominated_series(term: Callable[[int], Any], majorant: Callable[[int], Any] | None = None,
                         ratio_bound: Callable[[int], Any] | None = None) -> Any:
        return _Float64.series(term)
    pi = np.pi
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    sqrt = staticmethod(np.sqrt)
    expm1 = staticmethod(np.expm1)
    cos = staticmethod(np.cos)
    sin = staticmethod(np.sin)
    re = staticmethod(np.real)
    im = staticmethod(np.imag)
    abs = staticmethod(np.abs)
    conj = staticmethod(np.conj)
    gammaln = staticmethod(sc.gammaln)
    gamma = staticmethod(sc.gamma)
    i0e = staticmethod(sc.i0e)

    @staticmethod
    def num(x: Any) -> Any:
        """A number as this context's number: a float (a complex number stays complex)."""
        return complex(x) if isinstance(x, complex) else float(x)

    @staticmethod
    def log1p(x: Any) -> Any:
        """``log(1 + x)``; for complex ``x`` accurate near 0 (``np.log1p`` is not: it
        returns ``log1p(-1e-17 - 1e-9j) = -1e-9j``, dropping the real part)."""
        if not np.iscomplexobj(x):
            return np.log1p(x)
        xr, xi = np.real(x), np.imag(x)
        return 0.5 * np.log1p(xr * (2 + xr) + xi * xi) + 1j * np.arctan2(xi, 1 + xr)

    @staticmethod
    def hyp1f1(a: Any, b: Any, x: Any) -> Any:
        return sc.hyp1f1(a, b, x)

    @staticmethod
    def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
        """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth's TwoSum)."""
        s = a + b
        bp = s - a
        return s, (a - (s - bp)) + (b - bp)

    @staticmethod
    def two_prod(a: Any, b: Any) -> tuple[Any, Any]:
        """``(p, e)`` with ``p = fl(a b)`` and ``a b = p + e`` exactly (Dekker's product; for
        ``|a|, |b| < 1e290``, beyond which the splitting overflows and ``e`` is NaN)."""
        def split(x: Any) -> tuple[Any, Any]:
            c = 134217729.0 * x  # 2^27 + 1
            hi = c - (c - x)
            return hi, x - hi

        p = a * b
        ah, al = split(a)
        bh, bl = split(b)
        return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl

    @staticmethod
    def fsum(*terms: Any) -> Any:
        """``sum(terms)`` with Neumaier's compensation (vectorised): error ``~eps |sum| +
        O(n eps^2) sum |terms|``, so a sum of exact floats that cancels keeps its digits."""
        s = np.asarray(terms[0], dtype=float)
        comp = np.zeros(np.shape(s))
        for x in terms[1:]:
            x = np.asarray(x, dtype=float)
            t = s + x
            err = np.where(np.abs(s) >= np.abs(x), (s - t) + x, (x - t) + s)
            comp = comp + np.where(np.isfinite(t), err, 0.0)
            s = t
        return (s + comp)[()]

    @staticmethod
    def power(x: Any, p: Any) -> Any:
        return np.power(x, p)

    @staticmethod
    @_series_doc
    def series(term: Callable[[int], Any], ratio_bound: Callable[[int], Any] | None = None) -> Any:
        return _direct_series(term, 10.0 ** -(15 + Backend.SERIES_GUARD_DIGITS), 0.0, np.inf,
                              Backend.SERIES_MAX_TERMS)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        return np.where(cond, a, b)

    @staticmethod
    def i0(x: Any) -> Any:
        """The modified Bessel function ``I_0(x)`` (``scipy.special.i0``; real ``x``)."""
        return sc.i0(x)

    @staticmethod
    def rf(x: Any, n: Any) -> Any:
        """The rising factorial ``(x)_n = Gamma(x + n) / Gamma(x)`` (``scipy.special.poch``)."""
        return sc.poch(x, n)

    @staticmethod
    def fac2(n: Any) -> Any:
        """The double factorial ``n!! = n (n - 2) (n - 4) ...`` of an integer ``n >= -1`` (``(-1)!! = 0!! = 1``),
        the exact integer product rounded once (``scipy.special.factorial2`` gives ``(-1)!! = 0``); ``ValueError``
        for other ``n``."""
        ns = np.asarray(n)
        if not np.all((ns == np.round(ns)) & (ns >= -1)):
            raise ValueError(f"fac2 needs integers n >= -1; got {n!r}")
        return np.vectorize(lambda k: float(math.prod(range(int(k), 0, -2))), otypes=[float])(ns)[()]

    @staticmethod
    def fdot(xs: Any, ys: Any) -> Any:
        """The dot product ``sum_i xs[i] ys[i]``: each product split exactly (:meth:`two_prod`) and the
        parts summed with compensation (:meth:`fsum`)."""
        parts = [_Float64.two_prod(x, y) for x, y in zip(xs, ys, strict=True)]
        return _Float64.fsum(0.0, *(p for p, _ in parts), *(e for _, e in parts))


class _Mpmath(Backend):
    name = "mpmath"

    @staticmethod
    def hyp0f1(b: Any, x: Any) -> Any:
        """The confluent limit function ``0F1(; b; x) = sum_k x^k / ((b)_k k!)`` (``mpmath.hyp0f1``)."""
        return mpmath.hyp0f1(b, x)

    @staticmethod
    def gammainc_lower(a: Any, x: Any) -> Any:
        """The lower incomplete gamma function ``gamma(a, x) = int_0^x t^{a-1} e^{-t} dt``
        (``mpmath.gammainc(a, 0, x)``)."""
        return mpmath.gammainc(a, 0, x)

    @staticmethod
    @_ratio_series_doc
    def ratio_series(t0: Any, ratio: Callable[[int], Any]) -> Any:
        tol = mpmath.mpf(10) ** (-mpmath.mp.dps - Backend.SERIES_GUARD_DIGITS)
        return _ratio_series(t0, ratio, tol, Backend.SERIES_MAX_TERMS)

    @staticmethod
    @_dominated_series_doc
    def dominated_series(term: Callable[[int], Any], majorant: Callable[[int], Any] | None = None,
                         ratio_bound: Callable[[int], Any] | None = None) -> Any:
        return _Mpmath.series(term)
    exp = staticmethod(mpmath.exp)
    log = staticmethod(mpmath.log)
    sqrt = staticmethod(mpmath.sqrt)
    expm1 = staticmethod(mpmath.expm1)
    log1p = staticmethod(mpmath.log1p)
    cos = staticmethod(mpmath.cos)
    sin = staticmethod(mpmath.sin)
    re = staticmethod(mpmath.re)
    im = staticmethod(mpmath.im)
    abs = staticmethod(mpmath.fabs)
    conj = staticmethod(mpmath.conj)
    gammaln = staticmethod(mpmath.loggamma)
    gamma = staticmethod(mpmath.gamma)
    hyp1f1 = staticmethod(mpmath.hyp1f1)

    @staticmethod
    def num(x: Any) -> Any:
        """A number (Python, NumPy or mpmath) as an mpmath number (so that ``d / 2`` of an int ``d``
        is exact, not a float division)."""
        return mpmath.mpmathify(x)

    @staticmethod
    def fsum(*terms: Any) -> Any:
        return mpmath.fsum(terms)

    @staticmethod
    def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
        return a + b, 0  # (the working precision carries the digits)

    @staticmethod
    def two_prod(a: Any, b: Any) -> tuple[Any, Any]:
        return a * b, 0

    @property
    def pi(self) -> Any:
        return mpmath.pi

    @staticmethod
    def i0e(x: Any) -> Any:
        return mpmath.besseli(0, x) * mpmath.exp(-mpmath.fabs(x))

    @staticmethod
    def power(x: Any, p: Any) -> Any:
        return mpmath.power(x, p)

    @staticmethod
    @_series_doc
    def series(term: Callable[[int], Any], ratio_bound: Callable[[int], Any] | None = None) -> Any:
        tol = mpmath.mpf(10) ** (-mpmath.mp.dps - Backend.SERIES_GUARD_DIGITS)
        return _direct_series(term, tol, mpmath.mpf(0), mpmath.inf, Backend.SERIES_MAX_TERMS)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        return a if cond else b

    @staticmethod
    def i0(x: Any) -> Any:
        """The modified Bessel function ``I_0(x)`` (``mpmath.besseli(0, x)``)."""
        return mpmath.besseli(0, x)

    @staticmethod
    def rf(x: Any, n: Any) -> Any:
        """The rising factorial ``(x)_n`` (``mpmath.rf``)."""
        return mpmath.rf(x, n)

    @staticmethod
    def fac2(n: Any) -> Any:
        """The double factorial ``n!!`` (``mpmath.fac2``; ``(-1)!! = 0!! = 1``)."""
        return mpmath.fac2(n)

    @staticmethod
    def fdot(xs: Any, ys: Any) -> Any:
        """The dot product ``sum_i xs[i] ys[i]`` (``mpmath.fdot``: exact products, rounded once, as the
        entries of an mpmath matrix product)."""
        return mpmath.fdot(list(xs), list(ys))


class _Sympy(Backend):
    name = "sympy"

    @staticmethod
    def hyp0f1(b: Any, x: Any) -> Any:
        """The confluent limit function ``0F1(; b; x)`` (``sympy.hyper([], [b], x)``)."""
        return sympy.hyper([], [b], x)

    @staticmethod
    def gammainc_lower(a: Any, x: Any) -> Any:
        """The lower incomplete gamma function ``gamma(a, x)`` (``sympy.lowergamma``)."""
        return sympy.lowergamma(a, x)

    @staticmethod
    @_ratio_series_doc
    def ratio_series(t0: Any, ratio: Callable[[int], Any]) -> Any:
        k = sympy.Symbol("k", integer=True, nonnegative=True)
        j = sympy.Symbol("j", integer=True, nonnegative=True)
        return t0 * sympy.Sum(sympy.Product(ratio(j), (j, 0, k - 1)), (k, 0, sympy.oo))

    @staticmethod
    @_dominated_series_doc
    def dominated_series(term: Callable[[int], Any], majorant: Callable[[int], Any] | None = None,
                         ratio_bound: Callable[[int], Any] | None = None) -> Any:
        return _Sympy.series(term)
    pi = sympy.pi
    exp = staticmethod(sympy.exp)
    log = staticmethod(sympy.log)
    sqrt = staticmethod(sympy.sqrt)
    cos = staticmethod(sympy.cos)
    sin = staticmethod(sympy.sin)
    re = staticmethod(sympy.re)
    im = staticmethod(sympy.im)
    abs = staticmethod(sympy.Abs)
    conj = staticmethod(sympy.conjugate)
    gammaln = staticmethod(sympy.loggamma)
    gamma = staticmethod(sympy.gamma)

    @staticmethod
    def num(x: Any) -> Any:
        """A Python number as an exact sympy number (a float as its exact rational)."""
        return sympy.Rational(x) if isinstance(x, int | float) and not isinstance(x, bool) else x

    @staticmethod
    def expm1(x: Any) -> Any:
        return sympy.exp(x) - 1

    @staticmethod
    def log1p(x: Any) -> Any:
        return sympy.log(1 + x)

    @staticmethod
    def hyp1f1(a: Any, b: Any, x: Any) -> Any:
        return sympy.hyper([a], [b], x)

    @staticmethod
    def fsum(*terms: Any) -> Any:
        return sympy.Add(*terms)

    @staticmethod
    def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
        return a + b, 0

    @staticmethod
    def two_prod(a: Any, b: Any) -> tuple[Any, Any]:
        return a * b, 0

    @staticmethod
    def i0e(x: Any) -> Any:
        return sympy.besseli(0, x) * sympy.exp(-sympy.Abs(x))

    @staticmethod
    def power(x: Any, p: Any) -> Any:
        return sympy.Pow(x, p)

    @staticmethod
    @_series_doc
    def series(term: Callable[[int], Any], ratio_bound: Callable[[int], Any] | None = None) -> Any:
        k = sympy.Symbol("k", integer=True, nonnegative=True)
        return sympy.Sum(term(k), (k, 0, sympy.oo))

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        return sympy.Piecewise((a, cond), (b, True))

    @staticmethod
    def i0(x: Any) -> Any:
        """The modified Bessel function ``I_0(x)`` (``sympy.besseli(0, x)``)."""
        return sympy.besseli(0, x)

    @staticmethod
    def rf(x: Any, n: Any) -> Any:
        """The rising factorial ``(x)_n`` (``sympy.rf``)."""
        return sympy.rf(x, n)

    @staticmethod
    def fac2(n: Any) -> Any:
        """The double factorial ``n!!`` (``sympy.factorial2``; ``(-1)!! = 0!! = 1``)."""
        return sympy.factorial2(n)

    @staticmethod
    def fdot(xs: Any, ys: Any) -> Any:
        """The dot product ``sum_i xs[i] ys[i]``."""
        return sympy.Add(*(x * y for x, y in zip(xs, ys, strict=True)))


#: the float64 context (NumPy/SciPy functions, vectorised)
FP = _Float64()
#: the mpmath context (working precision set by the caller, ``mpmath.workdps``)
MP = _Mpmath()
#: the sympy context (symbolic expressions)
SYM = _Sympy()
_BACKENDS = {"float64": FP, "mpmath": MP, "sympy": SYM}

COND_MAX = 1e3  # float64 points with a larger conditioning are recomputed in mpmath
_MAX_DPS = 2000  # the conditioning fallback gives up (raises) beyond this precision


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (``float64``, ``mpmath``, ``sympy`` or ``arb``: Arb balls,
    :mod:`rfcheck.arb_backend`).

    Parameters
    ----------
    name : {"float64", "mpmath", "sympy", "arb"}
        The backend's name.

    Returns
    -------
    Backend
        The backend object (:data:`FP`, :data:`MP`, :data:`SYM`, or the Arb context).

    Raises
    ------
    ValueError
        If ``name`` is none of the four.

    Examples
    --------
    >>> get_backend("mpmath") is MP, get_backend("float64").name
    (True, 'float64')
    """
    if name == "arb":
        from rfcheck.arb_backend import ARB

        return ARB
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ValueError(f"backend must be one of {sorted([*_BACKENDS, 'arb'])}; got {name!r}") from None


def _to_mp(v: Any) -> Any:
    if isinstance(v, complex | np.complexfloating):
        return mpmath.mpc(v)
    if isinstance(v, mpmath.mpf | mpmath.mpc):
        return v
    if isinstance(v, int | np.integer):
        return int(v)
    return mpmath.mpf(v)


def formula(
    fn: Callable[..., Any] | None = None,
    *,
    check: Callable[..., None] | None = None,
    conditioning: Callable[..., Any] | None = None,
) -> Any:
    """Give a context-generic formula ``fn(ctx, *args)`` its three faces.

    The returned function takes ``backend="float64" | "mpmath"`` and ``dps`` (mpmath
    digits, default 50; for a formula with ``conditioning`` the result is verified to
    ``dps`` significant digits, see below) keywords; ``.symbolic(*args)`` returns the
    sympy expression and ``.impl`` is the raw ``fn(ctx, ...)``.  mpmath precision is set
    with ``workdps`` and always restored.  Array arguments to the mpmath face are
    evaluated elementwise and returned as an object array of mpmath numbers.

    ``check(*args)`` validates numeric arguments (raising ``ValueError``) before either
    numeric face runs.  ``conditioning(ctx, *args)`` returns, for the float64 face, the
    factor by which rounding errors are amplified (e.g. ``(|t1| + |t2|) / |t1 + t2|`` for
    a sum that cancels); points where it exceeds ``COND_MAX`` (1e3, so at most ~1e3 eps
    is lost) are recomputed in mpmath with enough extra digits -- checked by repeating at
    20 more digits, and raised until two precisions agree -- and converted back, so
    float64 results never silently lose digits.

    Parameters
    ----------
    fn : callable, optional
        ``fn(ctx, *args)``: the formula, written against a backend ``ctx`` (its elementary
        functions: ``ctx.exp``, ``ctx.sqrt``, ...).  ``None`` (default) when the decorator is
        used with keywords, ``@formula(check=...)``.
    check : callable, optional
        ``check(*args)``: validates numeric arguments, raising ``ValueError`` (default: none).
    conditioning : callable, optional
        ``conditioning(ctx, *args)``: the float64 rounding-error amplification factor
        (default: none, the float64 face is returned as computed).

    Returns
    -------
    callable
        The formula with its faces, ``f(*args, backend="float64", dps=50)``, with ``.symbolic``
        and ``.impl``; or, for ``fn=None``, the decorator that makes it.  The returned
        function raises ``ValueError`` for arguments ``check`` refuses, arguments that do not
        bind to ``fn`` or do not broadcast, an unknown backend, or ``dps < 15`` with mpmath.

    Examples
    --------
    >>> @formula
    ... def sq_exp(ctx, t):
    ...     return ctx.exp(t) ** 2
    >>> abs(float(sq_exp(0.5)) - float(sq_exp(0.5, backend="mpmath", dps=30))) < 1e-15
    True
    >>> sq_exp.symbolic(0)
    1
    """
    if fn is None:
        return functools.partial(formula, check=check, conditioning=conditioning)

    def _mp(args: tuple[Any, ...], dps: int, f: Callable[..., Any] = fn) -> Any:
        arrays = [np.asarray(a, dtype=object) for a in args]
        with mpmath.workdps(dps):
            if all(a.ndim == 0 for a in arrays):
                return f(MP, *[_to_mp(a) for a in args])
            bcast = np.broadcast_arrays(*arrays)
            out = np.empty(bcast[0].shape, dtype=object)
            for idx in np.ndindex(out.shape):
                out[idx] = f(MP, *[_to_mp(b[idx]) for b in bcast])
            return out

    def _mp_conditioning(ctx: Any, *args: Any) -> Any:
        try:
            return conditioning(ctx, *args)  # type: ignore[misc]
        except ZeroDivisionError:  # mpmath raises where numpy gives inf or NaN
            return mpmath.inf

    def _mp_verified(args: tuple[Any, ...], work: int, digits: int) -> Any:
        """mpmath value good to ``digits`` significant digits, for a formula that cancels.

        Two checks, repeated with a larger working precision until both pass: the
        conditioning, evaluated in mpmath, must leave ``digits`` digits at the working
        precision, and the results at two precisions 20 digits apart must agree to
        ``10^-digits``.  A float64 conditioning estimate can be far too small (or NaN)
        when the difference it divides by is pure rounding noise, and an exact
        cancellation to 0 at one precision shows up as an infinite conditioning.  A
        result whose conditioning stays infinite up to ``_MAX_DPS`` digits (an exact
        zero) is accepted if the two precisions agree there; otherwise ``ValueError``.
        """
        tol = mpmath.mpf(10) ** -digits
        while True:
            lo, hi = _mp(args, work), _mp(args, work + 20)
            cond = _mp(args, work + 20, _mp_conditioning)
            with mpmath.workdps(work + 20):
                agree = all(
                    a == b or abs(b - a) <= tol * abs(b)
                    for a, b in zip(np.ravel(lo), np.ravel(hi), strict=True)
                )
                worst = max((abs(c) for c in np.ravel(cond)), key=lambda c: (c != c, c))
                finite = mpmath.isfinite(worst)
                need = digits + 5 + (max(0, int(mpmath.log10(worst))) if finite and worst else 0)
            if agree and finite and need <= work + 20:
                return hi
            if work >= _MAX_DPS:
                if agree:  # an exact cancellation that survives _MAX_DPS digits: exact
                    return hi
                raise ValueError(
                    f"{fn.__name__}: no value good to {digits} digits at {_MAX_DPS} "
                    f"working digits for arguments {args}"
                )
            work = min(_MAX_DPS, max(2 * work, need if finite else 0))

    sig = inspect.signature(fn)
    names = list(sig.parameters)[1:]  # (without ctx)

    @functools.wraps(fn)
    def wrapper(*args: Any, backend: str = "float64", dps: int = 50, **kwargs: Any) -> Any:
        if backend == "arb":  # Arb balls (python-flint), `prec` bits or `dps` digits: rfcheck.arb_backend
            from rfcheck import arb_backend

            return arb_backend.evaluate(fn, sig, check, args, kwargs, dps)
        if kwargs:
            try:
                args = sig.bind(None, *args, **kwargs).args[1:]
            except TypeError as exc:
                raise ValueError(f"{fn.__name__}: {exc}") from None
        ctx = get_backend(backend)
        if ctx is SYM:
            return fn(SYM, *args)
        validate.broadcast_shape(dict(zip(names, args, strict=False)), fn.__name__.lstrip("_"))
        if check is not None:
            check(*args)
        if ctx is MP:
            if dps < 15:
                raise ValueError(f"dps must be >= 15; got {dps}")
            if conditioning is not None:  # a formula that can cancel: verify dps digits
                return _mp_verified(args, dps + 10, dps)
            return _mp(args, dps)
        args = tuple(np.asarray(a) if isinstance(a, list | tuple) else a for a in args)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            out = fn(FP, *args)
            if conditioning is None:
                return out
            cond = np.asarray(conditioning(FP, *args), dtype=float)
        bad = ~(cond <= COND_MAX)  # NaN conditioning counts as bad
        if not np.any(bad):
            return out
        out = np.array(out, copy=True)
        bcast = np.broadcast_arrays(*[np.asarray(a) for a in args], cond)
        shape = bcast[0].shape
        out = np.broadcast_to(out, shape).copy()
        bad = np.broadcast_to(bad, shape)
        for idx in np.ndindex(shape):  # np.nonzero refuses 0-d arrays (scalar inputs)
            if not bad[idx]:
                continue
            c = float(bcast[-1][idx])
            extra = 40 if not np.isfinite(c) else int(np.log10(max(c, 1.0))) + 5
            val = _mp_verified(tuple(b[idx] for b in bcast[:-1]), 20 + extra, 17)
            out[idx] = complex(val) if np.iscomplexobj(out) else float(mpmath.re(val))
        return out if out.shape else out[()]

    wrapper.symbolic = lambda *args: fn(SYM, *args)  # type: ignore[attr-defined]
    wrapper.impl = fn  # type: ignore[attr-defined]
    return wrapper


def num(ctx: Any, v: Any) -> Any:
    """``v`` as a number of ``ctx``: an int becomes an mpmath number (MP), a float (FP) or an
    exact ball (ARB), so that ``1 / m`` is never a float64 division; anything else is unchanged.

    Parameters
    ----------
    ctx : backend context
        The arithmetic context (:data:`rfcheck.backends.MP`, ``FP`` or
        :data:`rfcheck.arb_backend.ARB`); only its ``name`` (``"mpmath"``, ``"arb"`` or other)
        is read.
    v : object
        The value; a Python or NumPy integer or a float is converted (``bool`` is not), anything
        else (an mpmath number, a ball, an array) is returned as it is.

    Returns
    -------
    object
        ``mpmath.mpf(v)`` under mpmath, an exact :class:`rfcheck.arb_backend.Ball` under arb,
        ``float(v)`` otherwise; ``v`` itself when it is not an int or float.

    Examples
    --------
    >>> import mpmath
    >>> from rfcheck.backends import MP
    >>> from rfcheck.backends import num
    >>> num(MP, 3) / 7 == mpmath.mpf(3) / 7, num(MP, True)
    (True, True)
    """
    if isinstance(v, bool) or not isinstance(v, int | np.integer | float):
        return v
    if ctx.name == "mpmath":
        return mpmath.mpf(v)
    if ctx.name == "arb":
        from rfcheck.arb_backend import Ball, to_ball

        return Ball(to_ball(v))
    return float(v)

"""Ball arithmetic (Arb, from ``python-flint``): the fourth face of the closed forms.

A closed form written against a context (:func:`rfcheck.backends.formula`) is evaluated here
on *balls*: every number is an Arb ball ``[m +/- r]`` (``flint.arb``, or ``flint.acb`` for
complex numbers), and every operation returns a ball guaranteed to contain the exact result
for every point of its inputs.  The returned radius is therefore an honest error bound::

    from rfcheck.closed_forms.crt import oprf_rho_star

    oprf_rho_star(2.0, 3, backend="arb", prec=128)   # flint.arb ball, 128-bit working precision
    oprf_rho_star(2.0, 3, backend="arb", dps=40)     # the same with 40 digits (+ guard bits)

Inputs are converted exactly: Python/NumPy floats and ints, complex numbers, mpmath numbers
(their binary value) and ``flint.arb``/``flint.acb`` balls, which are taken as given (a wide
input ball gives a correspondingly wide result).  Arrays are evaluated elementwise and come
back as object arrays of balls.  The argument checks of a formula run on the midpoints.

How the formula sees the balls
------------------------------
Inside ``impl(ARB, ...)`` numbers are :class:`Ball` proxies around the flint balls.  The
proxy exists for one reason: ``flint.arb`` comparisons return a plain ``False`` both when a
relation is false and when it cannot be decided (overlapping balls), so a formula's
``ctx.where(x > 0, a, b)`` would silently take ``b``.  A :class:`Ball` comparison returns a
three-valued :class:`Cond` instead, and

* ``ARB.where`` with an undecided condition returns the **union** of the two branch
  balls.  That is honest: the exact condition is either true or false, so the exact result is
  the exact value of one of the branches, and each branch ball contains its exact value.  The
  union can be wide (or NaN when the branch not taken is outside its domain): the verdicts of
  :mod:`rfcheck.certify` then stay undecided;
* using an undecided :class:`Cond` (or the truth value of a ball that contains 0 and is not
  exactly 0) in a Python ``if`` raises :class:`UndecidableError` (a ``ValueError``) naming the
  comparison: raise the precision, or narrow the inputs.

A ball never silently becomes a float: :class:`Ball` has no ``__float__``, and refuses
conversion to sympy; mpmath refuses it too.  A formula whose implementation leaves ball
arithmetic (a float64- or mpmath-only branch, a sympy fallback) raises ``NotImplementedError``
naming the formula; formulas that would *run* on balls but not rigorously (a series truncated
without a remainder bound) are listed in :data:`NOT_ON_BALLS` and refused up front (none today:
every closed form of :mod:`rfcheck.closed_forms` evaluates on balls).

Elementary functions follow the mpmath face where Arb's convention differs: ``log(0)`` and
``log1p(-1)`` of an exact zero give ``-inf`` (Arb gives NaN), ``i0e(x)`` is
``I_0(x) exp(-|x|)``.  Arb returns NaN (the whole line) where a function is undefined.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import operator
from collections.abc import Callable, Iterator
from typing import Any

import mpmath
import numpy as np
import sympy
from flint import acb, arb
from flint import ctx as flint_ctx

from rfcheck import validate
from rfcheck.backends import Backend, num

__all__ = [
    "ARB",
    "GUARD_BITS",
    "NOT_ON_BALLS",
    "Ball",
    "Cond",
    "UndecidableError",
    "bits_for_dps",
    "evaluate",
    "on_balls",
    "to_ball",
    "workprec",
]

#: bits added to ``ceil(dps log2(10))`` when a precision is given in decimal digits
GUARD_BITS = 16

#: formulas refused on balls although their code would run: ``"<paper>.<name>" -> reason``
NOT_ON_BALLS: dict[str, str] = {}


class UndecidableError(ValueError):
    """A comparison of overlapping balls was used where a definite answer is needed."""


class _NotOnBalls(NotImplementedError):
    """A ball was handed to code outside ball arithmetic (sympy, float conversion)."""


Number = arb | acb


# ------------------------------------------------------------------------------ conversion


def to_ball(x: Any) -> Number:
    """The exact ball of an input number.

    Parameters
    ----------
    x : int, float, complex, numpy scalar, mpmath number, flint.arb, flint.acb or Ball
        A float, int or mpmath number is converted exactly (its binary value, radius 0); a
        ball is returned as given.

    Returns
    -------
    flint.arb or flint.acb

    Raises
    ------
    TypeError
        For anything else (strings, sympy expressions, arrays).
    """
    v = _operand(x)
    if v is not None:
        return v
    if isinstance(x, mpmath.mpf):
        return _mpf_ball(x)
    if isinstance(x, mpmath.mpc):
        return acb(_mpf_ball(x.real), _mpf_ball(x.imag))
    raise TypeError(f"cannot make an exact ball from {type(x).__name__} {x!r}")


def _mpf_ball(x: mpmath.mpf) -> arb:
    """The exact ball of an mpmath real (``arb(mpf)`` would round it to the working precision)."""
    if mpmath.isnan(x):
        return arb.nan()
    if mpmath.isinf(x):
        return arb.pos_inf() if x > 0 else arb.neg_inf()
    sign, man, exp, _ = x._mpf_
    return arb((-int(man) if sign else int(man), int(exp)))


def _operand(x: Any) -> Number | None:
    """The flint ball of an operand inside a formula, or ``None`` if it is not a number that
    converts exactly.  mpmath numbers are *not* accepted here: inside a formula they would be
    rounded values of some mpmath computation, and taking them as exact would be dishonest."""
    if isinstance(x, Ball):
        return x.v
    if isinstance(x, arb | acb):
        return x
    if isinstance(x, bool | np.bool_ | int | np.integer):
        return arb(int(x))
    if isinstance(x, float | np.float32 | np.float16):  # (not longdouble: float() would round it)
        return arb(float(x))
    if isinstance(x, complex | np.complex64):
        return acb(float(x.real), float(x.imag))
    return None


def _value(x: Any) -> Number:
    v = _operand(x)
    if v is None:
        raise TypeError(f"ball arithmetic got a {type(x).__name__} ({x!r}), not a number")
    return v


def _is_exact_zero(v: Number) -> bool:
    return bool(v.is_zero()) and bool(v.is_exact())


def bits_for_dps(dps: int) -> int:
    """Working precision in bits for ``dps`` decimal digits: ``ceil(dps log2 10) + GUARD_BITS``.

    Parameters
    ----------
    dps : int
        Decimal digits, ``>= 1`` (``int`` or NumPy integer).

    Returns
    -------
    int
        The number of bits, :data:`GUARD_BITS` above the bits of ``dps`` digits.

    Raises
    ------
    ValueError
        If ``dps`` is not an integer ``>= 1``.

    Examples
    --------
    >>> bits_for_dps(50), bits_for_dps(15)
    (183, 66)
    """
    if not isinstance(dps, int | np.integer) or dps < 1:
        raise ValueError(f"dps must be an integer >= 1; got {dps!r}")
    return math.ceil(int(dps) * math.log2(10)) + GUARD_BITS


@contextlib.contextmanager
def workprec(bits: int) -> Iterator[None]:
    """Set flint's working precision to ``bits`` for the block (restored afterwards).

    Parameters
    ----------
    bits : int
        The working precision in bits, ``>= 2`` (``int`` or NumPy integer).

    Returns
    -------
    contextmanager
        A context manager; on exit (also by an exception) the previous precision is restored.

    Raises
    ------
    ValueError
        If ``bits`` is not an integer ``>= 2``.

    Examples
    --------
    >>> from flint import ctx
    >>> old = ctx.prec
    >>> with workprec(300):
    ...     ctx.prec
    300
    >>> ctx.prec == old
    True
    """
    if not isinstance(bits, int | np.integer) or bits < 2:
        raise ValueError(f"prec must be an integer >= 2 (bits); got {bits!r}")
    old = flint_ctx.prec
    flint_ctx.prec = int(bits)
    try:
        yield
    finally:
        flint_ctx.prec = old


# ------------------------------------------------------------------ three-valued conditions


class Cond:
    """The outcome of comparing balls: ``True``, ``False`` or undecided (``value is None``).

    ``bool()`` of an undecided condition raises :class:`UndecidableError`; ``&``, ``|`` and
    ``~`` follow Kleene's three-valued logic.

    Parameters
    ----------
    value : bool or None
        The decided truth value, or ``None`` when the balls overlap.
    what : str or object
        The comparison, for error messages (formatted with ``str`` when one is raised).
    """

    __slots__ = ("value", "what")
    __array_ufunc__ = None

    def __init__(self, value: bool | None, what: Any = "") -> None:
        self.value = value
        self.what = what

    def __bool__(self) -> bool:
        if self.value is None:
            raise UndecidableError(
                f"comparison of overlapping balls is undecidable: {self.what} (raise the precision "
                "or narrow the input balls)"
            )
        return self.value

    def __invert__(self) -> Cond:
        return Cond(None if self.value is None else not self.value, f"not ({self.what})")

    def _kleene(self, other: Any, absorbing: bool, word: str) -> Cond:
        """``and`` (``absorbing=False``) or ``or`` (``True``) in three-valued logic."""
        o = _as_cond(other)
        if self.value is absorbing or o.value is absorbing:
            return Cond(absorbing, f"({self.what}) {word} ({o.what})")
        value = None if self.value is None or o.value is None else not absorbing
        return Cond(value, f"({self.what}) {word} ({o.what})")

    def __and__(self, other: Any) -> Cond:
        return self._kleene(other, False, "and")

    def __or__(self, other: Any) -> Cond:
        return self._kleene(other, True, "or")

    __rand__ = __and__
    __ror__ = __or__

    def __repr__(self) -> str:
        return f"Cond({self.value!r}, {self.what!r})"


def _as_cond(c: Any) -> Cond:
    if isinstance(c, Cond):
        return c
    if isinstance(c, bool | np.bool_):
        return Cond(bool(c), str(bool(c)))
    raise TypeError(f"a condition on balls must be a comparison of balls or a bool; got {type(c).__name__}")


_ORDER = {"<": (operator.lt, operator.ge), "<=": (operator.le, operator.gt), ">": (operator.gt, operator.le),
          ">=": (operator.ge, operator.lt), "==": (operator.eq, operator.ne), "!=": (operator.ne, operator.eq)}


class _Comparison:
    """A comparison of two balls, formatted only when a message needs it."""

    __slots__ = ("a", "b", "op")

    def __init__(self, a: Number, b: Number, op: str) -> None:
        self.a, self.b, self.op = a, b, op

    def __str__(self) -> str:
        return f"{self.a} {self.op} {self.b}"


def _compare(a: Number, b: Number, op: str) -> Cond:
    """``a op b`` decided by flint: its comparisons are true only if true for every point of the
    balls, so the relation holds if ``op`` is true, fails if its negation is true, else undecided."""
    if op not in ("==", "!=") and (isinstance(a, acb) or isinstance(b, acb)):
        raise TypeError(f"complex balls are not ordered: {_Comparison(a, b, op)}")
    holds, fails = _ORDER[op]
    value = True if holds(a, b) else False if fails(a, b) else None
    return Cond(value, _Comparison(a, b, op))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ the proxy


def _binary(op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[[Ball, Any], Any]:
    def method(self: Ball, other: Any) -> Any:
        o = _operand(other)
        if o is None:
            return NotImplemented
        return Ball(op(o, self.v) if reflected else op(self.v, o))

    return method


def _comparison(op: str) -> Callable[[Ball, Any], Any]:
    def method(self: Ball, other: Any) -> Any:
        o = _operand(other)
        if o is None:
            return NotImplemented
        return _compare(self.v, o, op)

    return method


class Ball:
    """A flint ball (``arb`` or ``acb``) as a formula sees it on the Arb face.

    Arithmetic with balls and exact Python numbers returns balls; comparisons return
    :class:`Cond`.  Conversion to float, sympy or mpmath is refused, so no ball is silently
    replaced by a rounded number.

    Parameters
    ----------
    v : flint.arb or flint.acb
        The ball.
    """

    __slots__ = ("v",)
    __array_ufunc__ = None  # numpy scalars defer to the reflected methods
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, v: Number) -> None:
        self.v = v

    __add__ = _binary(operator.add)
    __radd__ = _binary(operator.add, reflected=True)
    __sub__ = _binary(operator.sub)
    __rsub__ = _binary(operator.sub, reflected=True)
    __mul__ = _binary(operator.mul)
    __rmul__ = _binary(operator.mul, reflected=True)
    __truediv__ = _binary(operator.truediv)
    __rtruediv__ = _binary(operator.truediv, reflected=True)
    __lt__ = _comparison("<")
    __le__ = _comparison("<=")
    __gt__ = _comparison(">")
    __ge__ = _comparison(">=")
    __eq__ = _comparison("==")  # type: ignore[assignment]
    __ne__ = _comparison("!=")  # type: ignore[assignment]

    def __pow__(self, p: Any) -> Any:
        if isinstance(p, bool | np.bool_ | int | np.integer):
            return Ball(self.v ** int(p))  # integer powers: exact for negative bases
        o = _operand(p)
        return NotImplemented if o is None else Ball(self.v**o)

    def __rpow__(self, base: Any) -> Any:
        o = _operand(base)
        return NotImplemented if o is None else Ball(o**self.v)

    def __neg__(self) -> Ball:
        return Ball(-self.v)

    def __pos__(self) -> Ball:
        return self

    def __abs__(self) -> Ball:
        return Ball(abs(self.v))

    def __bool__(self) -> bool:
        """``x != 0`` decided: ``False`` for an exact 0, ``True`` for a ball without 0."""
        if _is_exact_zero(self.v):
            return False
        if not self.v.contains(0):
            return True
        raise UndecidableError(f"the truth value (x != 0) of the ball {self.v} is undecidable")

    def _sympy_(self) -> Any:
        raise _NotOnBalls("a ball cannot enter a sympy expression (this path is not ball arithmetic)")

    def __repr__(self) -> str:
        return f"Ball({self.v})"


# ----------------------------------------------------------------------------- the context


def _unary(method: str) -> Callable[[Any], Ball]:
    def fn(x: Any) -> Ball:
        return Ball(getattr(_value(x), method)())

    fn.__name__ = method
    fn.__doc__ = f"``{method}`` of a ball (Arb's enclosure)."
    return staticmethod(fn)  # type: ignore[return-value]


def _union(a: Number, b: Number) -> Number:
    if isinstance(a, acb) or isinstance(b, acb):
        return acb(a).union(acb(b))
    return a.union(b)


def _radius(v: Number) -> arb:
    """The radius of a ball (of a complex ball: the larger of its real and imaginary radii)."""
    return arb(v.rad()) if isinstance(v, arb) else arb(max(v.real.rad(), v.imag.rad()))


class _Arb(Backend):
    """Arb ball arithmetic (python-flint) with the function names of the other contexts.

    Working precision is flint's global ``ctx.prec``, set by :func:`evaluate` (see
    :func:`workprec`).  Results are :class:`Ball` proxies; see the module docstring.
    """

    name = "arb"

    @staticmethod
    def hyp0f1(b: Any, x: Any) -> Ball:
        """The confluent limit function ``0F1(; b; x) = sum_k x^k / ((b)_k k!)`` (Arb's rigorous hypergeometric
        series/asymptotics; real or complex balls).

        Examples
        --------
        ``0F1(; 1/2; y^2/4) = cosh(y)``:

        >>> from flint import arb
        >>> from rfcheck.arb_backend import ARB, workprec
        >>> with workprec(80):
        ...     c = ARB.hyp0f1(ARB.num(0.5), ARB.num(0.25))
        >>> bool(c.v.overlaps(arb(1).cosh()))
        True
        """
        bv, xv = _value(b), _value(x)
        if isinstance(bv, acb) or isinstance(xv, acb):
            return Ball(acb(xv).hypgeom_0f1(acb(bv)))
        return Ball(xv.hypgeom_0f1(bv))

    @staticmethod
    def gammainc_lower(a: Any, x: Any) -> Ball:
        """The lower incomplete gamma function ``gamma(a, x) = int_0^x t^{a-1} e^{-t} dt`` on balls.

        For a Python int ``a >= 1``, ``(a-1)! (1 - e^{-x} sum_{j<a} x^j/j!)`` (DLMF 8.4.7): entire in ``x``, and
        tight on the wide complex balls of a rigorous integration, where Arb's ``gamma_lower`` overestimates
        (its cancellation at small ``x`` costs absolute accuracy only); otherwise Arb's ``gamma_lower``.

        Examples
        --------
        ``gamma(1, x) = 1 - e^{-x}``:

        >>> from flint import arb
        >>> from rfcheck.arb_backend import ARB, workprec
        >>> with workprec(80):
        ...     g = ARB.gammainc_lower(1, ARB.num(2))
        >>> bool(g.v.overlaps(1 - (-arb(2)).exp()))
        True
        """
        z = _value(x)
        if isinstance(a, int | np.integer) and not isinstance(a, bool) and a >= 1:
            fact = [arb(1)]
            for j in range(1, int(a)):
                fact.append(fact[-1] * j)
            one = acb(1) if isinstance(z, acb) else arb(1)
            return Ball(fact[-1] * (1 - (-z).exp() * sum((z**j / fact[j] for j in range(1, int(a))), one)))
        av = _value(a)
        if isinstance(z, acb) or isinstance(av, acb):
            return Ball(acb(z).gamma_lower(acb(av)))
        return Ball(z.gamma_lower(av))

    @staticmethod
    def ratio_series(t0: Any, ratio: Callable[[int], Any]) -> Ball:
        """``sum_{k >= 0} t_k``, ``t_{k+1} = t_k ratio(k)``, as a ball that contains the exact sum.

        Terms are added until, at some ``k``, ``|ratio(k)|`` is decided below 1/2 and the new term
        ``t_{k+1}`` is at most ``2^-(prec + 4)`` of the sum in modulus, or at most ``1/16`` of the sum's
        own radius (a wide argument, as in the boxes of a rigorous integration; from the 64th term on, a
        partial sum whose ball contains 0 gives a non-finite ball, which such an integration subdivides); the rest,
        ``sum_{j > k} |t_j| <= |t_{k+1}| / (1 - |ratio(k + 1)|)`` (``|ratio|`` does not increase), is
        added as a ball of that radius (real or complex).  The same ``t0`` and ``ratio`` as on the
        other contexts: the printed series is transcribed once.

        Parameters
        ----------
        t0 : Ball or number
            The first term.
        ratio : callable
            ``k -> t_{k+1} / t_k`` on balls, its modulus non-increasing in ``k`` (a hypergeometric
            ratio with positive parameters).

        Returns
        -------
        Ball

        Raises
        ------
        ValueError
            If no tail bound is reached within ``SERIES_MAX_TERMS`` terms.

        Examples
        --------
        ``e = sum_k 1/k!`` (``t_0 = 1``, ratio ``1/(k + 1)``):

        >>> from flint import arb
        >>> from rfcheck.arb_backend import ARB, workprec
        >>> with workprec(80):
        ...     e = ARB.ratio_series(ARB.num(1), lambda k: ARB.num(1) / (k + 1))
        >>> with workprec(200):
        ...     e.v.contains(arb(1).exp()), float(e.v.rad()) < 1e-22
        (True, True)
        """
        eps = arb(2) ** (-flint_ctx.prec - 4)
        t, tot = _value(t0), _value(t0)
        for k in range(Backend.SERIES_MAX_TERMS):
            r = _value(ratio(k))
            t = t * r
            tot = tot + t
            if not t.is_finite() or (k >= 64 and not abs(tot) > _radius(tot)):
                return Ball(t * arb("inf"))  # a non-finite ball (it contains the sum): the argument is too wide
            if abs(r) < arb(1) / 2 and (abs(t) <= eps * abs(tot) or abs(t) <= _radius(tot) / 16):
                q = abs(_value(ratio(k + 1)))
                b = (abs(t) / (1 - q)).upper()
                tail = arb(0, b)
                return Ball(tot + (acb(tail, tail) if isinstance(tot, acb) else tail))
        raise ValueError(f"ratio series on balls: no tail bound within {Backend.SERIES_MAX_TERMS} terms")

    @staticmethod
    def dominated_series(term: Callable[[int], Any], majorant: Callable[[int], Any] | None = None,
                         ratio_bound: Callable[[int], Any] | None = None) -> Ball:
        """``sum_{k >= 0} term(k)`` as a ball, its tail enclosed by a majorant series.

        Terms are added until, at some ``K >= 1``, ``q = ratio_bound(K + 1)`` is decided below 1/2
        and ``M_{K+1} = majorant(K + 1)`` is at most ``2^-(prec + 4) |sum|`` or ``1/16`` of the sum's own
        radius (a sum that cancels to about 0); the rest,
        ``sum_{j > K} |t_j| <= sum_{j > K} M_j <= M_{K+1} / (1 - q)``, is added as a ball of that
        radius (real or complex).  For a printed series whose term ratio has no usable bound (an
        alternating inner sum) but whose terms are bounded by a hypergeometric series.

        Parameters
        ----------
        term : callable
            ``k -> k``-th term on this context (balls).
        majorant : callable
            ``k -> M_k >= |term(k)|``.
        ratio_bound : callable
            ``k -> q_k`` with ``M_{j+1} / M_j <= q_k`` for every ``j >= k``.

        Returns
        -------
        Ball

        Raises
        ------
        NotImplementedError
            Without ``majorant`` or ``ratio_bound`` (no rigorous tail).
        ValueError
            If no tail bound is reached within ``SERIES_MAX_TERMS`` terms.

        Examples
        --------
        ``sum_k (-1)^k/k! = 1/e``, its terms bounded by ``1/k!`` (ratio ``1/(k + 1)``):

        >>> from flint import arb
        >>> from rfcheck.arb_backend import ARB, workprec
        >>> with workprec(80):
        ...     s = ARB.dominated_series(lambda k: ARB.num(-1) ** k / ARB.gamma(k + 1),
        ...                              lambda k: 1 / ARB.gamma(k + 1), lambda k: ARB.num(1) / (k + 1))
        >>> with workprec(200):
        ...     s.v.contains((-arb(1)).exp()), float(s.v.rad()) < 1e-22
        (True, True)
        """
        if majorant is None or ratio_bound is None:
            raise _NotOnBalls("a dominated series on balls needs majorant and ratio_bound to enclose its tail")
        eps = arb(2) ** (-flint_ctx.prec - 4)
        tot: Number = arb(0)
        for k in range(Backend.SERIES_MAX_TERMS):
            tot = tot + _value(term(k))
            if k < 1:
                continue
            q = _value(ratio_bound(k + 1))
            if isinstance(q, acb):
                q = abs(q)
            m = abs(_value(majorant(k + 1)))
            if q < arb(1) / 2 and (m <= eps * abs(tot) or m <= _radius(tot) / 16):
                tail = arb(0, (m / (1 - q)).upper())
                return Ball(tot + (acb(tail, tail) if isinstance(tot, acb) else tail))
        raise ValueError(f"dominated series on balls: no tail bound within {Backend.SERIES_MAX_TERMS} terms")

    exp = _unary("exp")
    expm1 = _unary("expm1")
    sqrt = _unary("sqrt")
    cos = _unary("cos")
    sin = _unary("sin")

    @property
    def pi(self) -> Ball:
        """pi at the working precision."""
        return Ball(arb.pi())

    @staticmethod
    def log(x: Any) -> Ball:
        """Natural log (principal branch); ``-inf`` at an exact 0 (as mpmath and numpy)."""
        v = _value(x)
        return Ball(arb.neg_inf()) if _is_exact_zero(v) else Ball(v.log())

    @staticmethod
    def log1p(x: Any) -> Ball:
        """``log(1 + x)`` without cancellation at small ``x``; ``-inf`` at an exact ``x = -1``."""
        v = _value(x)
        return Ball(arb.neg_inf()) if _is_exact_zero(v + 1) else Ball(v.log1p())

    @staticmethod
    def re(x: Any) -> Ball:
        """Real part."""
        v = _value(x)
        return Ball(v.real if isinstance(v, acb) else v)

    @staticmethod
    def im(x: Any) -> Ball:
        """Imaginary part (an exact 0 for a real ball)."""
        v = _value(x)
        return Ball(v.imag if isinstance(v, acb) else arb(0))

    @staticmethod
    def abs(x: Any) -> Ball:
        """Absolute value (modulus of a complex ball: a real ball)."""
        return Ball(abs(_value(x)))

    @staticmethod
    def conj(x: Any) -> Ball:
        """Complex conjugate."""
        v = _value(x)
        return Ball(v.conjugate() if isinstance(v, acb) else v)

    @staticmethod
    def gammaln(x: Any) -> Ball:
        """``log Gamma(x)`` (real: ``x > 0``, NaN elsewhere; complex: the principal ``loggamma``)."""
        return Ball(_value(x).lgamma())

    @staticmethod
    def gamma(x: Any) -> Ball:
        """``Gamma(x)`` (Arb's rigorous gamma function; real or complex balls)."""
        return Ball(_value(x).gamma())

    @staticmethod
    def num(x: Any) -> Any:
        """A number (Python, NumPy, mpmath, flint) as its exact ball; balls pass unchanged."""
        return x if isinstance(x, Ball) else Ball(to_ball(x))

    @staticmethod
    def i0e(x: Any) -> Ball:
        """``I_0(x) exp(-|x|)`` (scipy's ``i0e`` for real ``x``)."""
        v = _value(x)
        if isinstance(v, acb):
            return Ball(v.bessel_i(0) * (-abs(v)).exp())
        return Ball(abs(v).bessel_i(0, scaled=True))

    @staticmethod
    def hyp1f1(a: Any, b: Any, x: Any) -> Ball:
        """Kummer's ``1F1(a; b; x)`` (Arb's rigorous hypergeometric series/asymptotics)."""
        av, bv, xv = _value(a), _value(b), _value(x)
        if any(isinstance(v, acb) for v in (av, bv, xv)):
            return Ball(acb(xv).hypgeom_1f1(acb(av), acb(bv)))
        return Ball(xv.hypgeom_1f1(av, bv))

    @staticmethod
    def fsum(*terms: Any) -> Ball:
        """The sum of the terms (ball addition is already rigorous: no compensation needed)."""
        total = _value(terms[0])
        for t in terms[1:]:
            total = total + _value(t)
        return Ball(total)

    @staticmethod
    def two_sum(a: Any, b: Any) -> tuple[Ball, Ball]:
        """``(a + b, 0)``: the ball of the sum already contains the exact sum (no error term)."""
        return Ball(_value(a) + _value(b)), Ball(arb(0))

    @staticmethod
    def two_prod(a: Any, b: Any) -> tuple[Ball, Ball]:
        """``(a b, 0)``: the ball of the product already contains the exact product."""
        return Ball(_value(a) * _value(b)), Ball(arb(0))

    @staticmethod
    def power(x: Any, p: Any) -> Ball:
        """``x ** p`` (integer ``p``: exact powers, also of negative bases; else ``exp(p log x)``)."""
        return Ball(_value(x)) ** (p if isinstance(p, int | np.integer) else _value(p))

    @staticmethod
    def series(term: Callable[[int], Any], ratio_bound: Callable[[int], Any] | None = None) -> Ball:
        """``sum_{k >= 0} term(k)`` as a ball that contains the exact sum.

        Terms are added until, at some ``K >= 1``, ``q = ratio_bound(K)`` is decided below 1/2
        and ``|t_K| <= 2^-(prec + 4) |sum|``; the rest, ``sum_{j > K} |t_j| <= |t_K| q / (1 - q)``
        (a geometric bound: ``|t_{j+1}| <= q |t_j|`` for every ``j >= K``), is added as a ball
        of that radius (real or complex).  The same ``term`` as on the other contexts: the
        printed series is transcribed once.

        Parameters
        ----------
        term : callable
            ``k -> k``-th term on this context (balls).
        ratio_bound : callable
            ``k -> q_k`` with ``|t_{j+1} / t_j| <= q_k`` for every ``j >= k`` (a ball or an exact
            number; for a hypergeometric term with non-increasing ratio, the ratio at ``k``).

        Returns
        -------
        Ball

        Raises
        ------
        NotImplementedError
            Without ``ratio_bound`` (no rigorous tail: the series is not available on balls).
        ValueError
            If no tail bound is reached within ``SERIES_MAX_TERMS`` terms.

        Examples
        --------
        ``e = sum_k 1/k!`` with the ratio bound ``1/(k + 1)``:

        >>> from flint import arb
        >>> from rfcheck.arb_backend import ARB, workprec
        >>> with workprec(80):
        ...     e = ARB.series(lambda k: 1 / ARB.gamma(k + 1), lambda k: ARB.num(1) / (k + 1))
        >>> with workprec(200):  # e at 200 bits lies inside the 80-bit ball
        ...     e.v.contains(arb(1).exp()), float(e.v.rad()) < 1e-22
        (True, True)
        """
        if ratio_bound is None:
            raise _NotOnBalls("a series on balls needs ratio_bound (a bound of the term ratio past K) "
                              "to enclose its tail")
        eps = arb(2) ** (-flint_ctx.prec - 4)
        tot: Number = arb(0)
        for k in range(Backend.SERIES_MAX_TERMS):
            t = _value(term(k))
            tot = tot + t
            if k < 1:
                continue
            q = _value(ratio_bound(k))
            if isinstance(q, acb):
                q = abs(q)
            if q < arb(1) / 2 and abs(t) <= eps * abs(tot):
                b = (abs(t) * q / (1 - q)).upper()
                tail = arb(0, b)
                return Ball(tot + (acb(tail, tail) if isinstance(tot, acb) else tail))
        raise ValueError(f"series on balls: no tail bound within {Backend.SERIES_MAX_TERMS} terms")

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Ball:
        """``a`` if ``cond`` else ``b``; the union ball of both when ``cond`` is undecided.

        The union is honest: the exact condition picks one branch, whose exact value lies in
        that branch's ball (see the module docstring).
        """
        c = _as_cond(cond)
        if c.value is True:
            return Ball(_value(a))
        if c.value is False:
            return Ball(_value(b))
        return Ball(_union(_value(a), _value(b)))

    @staticmethod
    def i0(x: Any) -> Ball:
        """The modified Bessel function ``I_0(x)`` (Arb's rigorous ``bessel_i(0)``; real or complex balls)."""
        return Ball(_value(x).bessel_i(0))

    @staticmethod
    def rf(x: Any, n: Any) -> Ball:
        """The rising factorial ``(x)_n`` (Arb's ``rising``; real or complex balls, ``n`` an exact number or ball)."""
        return Ball(_value(x).rising(_value(n)))

    @staticmethod
    def fac2(n: Any) -> Ball:
        """The double factorial ``n!!`` of an integer ``n >= -1`` (a Python or NumPy int, or an exact integer
        ball): the exact integer product (``(-1)!! = 0!! = 1``) as a ball."""
        if isinstance(n, Ball):
            k = n.v.unique_fmpz() if isinstance(n.v, arb) and n.v.is_exact() else None
            if k is None:
                raise TypeError(f"fac2 needs an exact integer; got the ball {n.v}")
            n = int(k)
        if not isinstance(n, int | np.integer) or n < -1:
            raise ValueError(f"fac2 needs an integer n >= -1; got {n!r}")
        return Ball(arb(math.prod(range(int(n), 0, -2))))

    @staticmethod
    def fdot(xs: Any, ys: Any) -> Ball:
        """The dot product ``sum_i xs[i] ys[i]`` (ball products and sums: rigorous as they are)."""
        total: Number = arb(0)
        for x, y in zip(xs, ys, strict=True):
            total = total + _value(x) * _value(y)
        return Ball(total)


#: the Arb context (ball arithmetic; working precision set by :func:`evaluate`)
ARB = _Arb()


# ---------------------------------------------------------------------- the formula face


def _label(fn: Callable[..., Any]) -> str:
    """``"<paper>.<name>"`` of a formula (``"crt.log_i0"``)."""
    return f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}"


def _midpoint(x: Any) -> Any:
    """Float midpoints of balls (for the float64 argument checks); other values unchanged."""
    if isinstance(x, Ball):
        x = x.v
    if isinstance(x, arb):
        return float(x.mid())
    if isinstance(x, acb):
        return complex(x.mid())
    if isinstance(x, mpmath.mpf | mpmath.mpc):
        return complex(x) if isinstance(x, mpmath.mpc) else float(x)
    if isinstance(x, list | tuple | np.ndarray):
        arr = np.asarray(x, dtype=object)
        if any(isinstance(v, Ball | arb | acb | mpmath.mpf | mpmath.mpc) for v in arr.ravel()):
            return np.array([_midpoint(v) for v in arr.ravel()]).reshape(arr.shape)
    return x


def _as_object_array(x: Any) -> np.ndarray:
    if isinstance(x, Ball | arb | acb | mpmath.mpf | mpmath.mpc):
        out = np.empty((), dtype=object)
        out[()] = x
        return out
    return np.asarray(x, dtype=object)


def _point(fn: Callable[..., Any], label: str, values: list[Any]) -> Number:
    balls = [Ball(to_ball(v)) for v in values]
    try:
        out = fn(ARB, *balls)
    except UndecidableError:
        raise
    except (NotImplementedError, TypeError, KeyError, AttributeError, sympy.SympifyError) as exc:
        raise NotImplementedError(
            f"{label} is not available on balls: its implementation leaves ball arithmetic "
            f"({type(exc).__name__}: {exc})"
        ) from exc
    v = _operand(out)
    if v is None:
        raise NotImplementedError(
            f"{label} is not available on balls: its implementation returned a {type(out).__name__}, "
            "not a ball (a branch for another number system)"
        )
    return v


def evaluate(
    fn: Callable[..., Any],
    sig: inspect.Signature,
    check: Callable[..., None] | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    dps: int,
) -> Any:
    """The Arb face of a formula: ``fn(ARB, *args)`` on exact input balls.

    Called by :func:`rfcheck.backends.formula` for ``backend="arb"``.

    Parameters
    ----------
    fn : callable
        The context-generic ``impl(ctx, *args)``.
    sig : inspect.Signature
        Its signature (to bind keyword arguments).
    check : callable or None
        The formula's argument check (run on float midpoints of ball inputs).
    args : tuple
        Positional arguments (numbers, balls, or arrays of them).
    kwargs : dict
        Keyword arguments; ``prec`` (bits) is taken out and wins over ``dps``.
    dps : int
        Decimal digits, converted by :func:`bits_for_dps` when ``prec`` is not given.

    Returns
    -------
    flint.arb, flint.acb or numpy.ndarray
        A ball for scalar arguments, else an object array of balls (elementwise evaluation).

    Raises
    ------
    NotImplementedError
        For a formula in :data:`NOT_ON_BALLS`, or one whose implementation leaves ball arithmetic.
    UndecidableError
        Where the implementation branches in Python on a comparison the balls do not decide.
    ValueError
        For invalid arguments (the formula's own check).
    """
    label = _label(fn)
    prec = kwargs.pop("prec", None)
    bits = bits_for_dps(dps) if prec is None else prec
    if kwargs:
        try:
            args = sig.bind(None, *args, **kwargs).args[1:]
        except TypeError as exc:
            raise ValueError(f"{fn.__name__}: {exc}") from None
    if label in NOT_ON_BALLS:
        raise NotImplementedError(f"{label} is not available on balls: {NOT_ON_BALLS[label]}")
    names = list(sig.parameters)[1:]
    validate.broadcast_shape(dict(zip(names, [_midpoint(a) for a in args], strict=False)), fn.__name__.lstrip("_"))
    if check is not None:
        check(*[_midpoint(a) for a in args])
    arrays = [_as_object_array(a) for a in args]
    with workprec(bits):
        if all(a.ndim == 0 for a in arrays):
            return _point(fn, label, [a[()] for a in arrays])
        bcast = np.broadcast_arrays(*arrays)
        out = np.empty(bcast[0].shape, dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = _point(fn, label, [b[idx] for b in bcast])
        return out


def on_balls(fn: Callable[..., Any], *args: Any, bits: int) -> Any:
    """``fn(ARB, *args)`` on exact balls of ``args`` at ``bits`` bits: a ``flint.arb``/``acb``
    (or a tuple/dict of them, as ``fn`` returns).

    Parameters
    ----------
    fn : callable
        A context-generic function ``fn(ctx, *args)`` (written against a number-system context).
    *args : int, float or ball
        Its arguments (numbers are converted exactly, :func:`rfcheck.arb_backend.to_ball`).
    bits : int
        Working precision in bits.

    Returns
    -------
    flint.arb, flint.acb, tuple or dict
        The result with every :class:`rfcheck.arb_backend.Ball` unwrapped.

    Examples
    --------
    >>> b = on_balls(lambda ctx, m: 1 / ctx.sqrt(ctx.num(m)), 2, bits=100)
    >>> b.rad() < 1e-29, (2 * b * b - 1).contains(0)  # a tight ball of 1/sqrt(2)
    (True, True)
    """
    def unwrap(v: Any) -> Any:
        if isinstance(v, Ball):
            return v.v
        if isinstance(v, tuple | list):
            return type(v)(unwrap(u) for u in v)
        if isinstance(v, dict):
            return {k: unwrap(u) for k, u in v.items()}
        return to_ball(v) if isinstance(v, int | float) else v

    with workprec(bits):
        return unwrap(fn(ARB, *(num(ARB, a) for a in args)))

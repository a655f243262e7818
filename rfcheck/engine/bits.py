"""Exact primitives for the Numba kernels' SIMD loops: integer <-> double conversions by bit
arithmetic, and a fused multiply-add (:func:`fma`, :func:`py_fma`).

Below AVX-512 x86 has no SIMD instruction converting between 64-bit integers and doubles,
so LLVM converts such values one lane at a time (``vcvtsi2sd`` / ``vcvttsd2si`` with lane
extracts and inserts), and a table lookup indexed by a converted double becomes scalar loads.
On an AVX2-only machine (AMD EPYC, 2026-11-25) that cost ~20% of the bulk normal loop
(:func:`rfcheck.engine.rng.fill_normals`) and most of the vectorised ``exp``
(:func:`rfcheck.engine.montecarlo.exp_into`).  The functions here do the same conversions exactly
with a bit cast, an integer OR/add/shift and one floating-point add or subtract, all of which
are single SIMD instructions on every level.  Each equals the plain conversion to the last
bit on its stated domain (``tests/test_bits.py``: hypothesis against Python's exact
arithmetic, domain edges included); outside that domain the result is unspecified, so callers
guarantee it.

:func:`fma` is ``a * b + c`` rounded once (IEEE 754 fusedMultiplyAdd): a single instruction
where the CPU has FMA (every x86 since 2013-2015, every ARMv8), a correctly rounded libm call
elsewhere -- so, unlike letting the compiler contract ``a * b + c`` (``fastmath``), the result
is the same on every machine.  :func:`py_fma` is its exact plain-Python twin.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["as_f64", "f64_bits", "fma", "pow2", "py_fma", "u52_to_f64", "u53_to_f64"]

_U = np.uint64
_ONE = _U(1)
_EXP52 = _U(0x4330000000000000)  # the bits of 2.0**52
_TWO52 = 2.0**52
_ROUND = 2.0**52 + 2.0**51  # adding it puts a small integer-valued double's value in the low bits
_POW2_BIAS = _U(1023 - 0x4338000000000000 & 0xFFFFFFFFFFFFFFFF)  # bits(_ROUND + k) -> k + 1023
_S52 = _U(52)


@intrinsic
def as_f64(typingctx, x):
    """The ``float64`` whose bits are the ``uint64`` ``x`` (LLVM ``bitcast``; no conversion)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(x), codegen


@intrinsic
def f64_bits(typingctx, x):
    """The bits of the ``float64`` ``x`` as a ``uint64`` (LLVM ``bitcast``)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.uint64(x), codegen


_MATH_FMA = getattr(math, "fma", None)  # Python >= 3.13


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` with a single rounding (LLVM ``llvm.fma.f64``; vectorised in SIMD loops)."""
    if not (a == types.float64 and b == types.float64 and c == types.float64):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return types.float64(a, b, c), codegen


def py_fma(a: float, b: float, c: float) -> float:
    """Plain-Python :func:`fma`: ``a * b + c`` rounded once, bit for bit (``math.fma`` from
    Python 3.13; before it, the exact rational value rounded by ``Fraction.__float__``, which
    is correctly rounded, with IEEE 754's rules for zeros, infinities and NaN).

    Parameters
    ----------
    a, b, c : float
        The operands.

    Returns
    -------
    float
        ``a * b + c`` rounded once to the nearest double (ties to even), as :func:`fma` computes
        it in compiled code.

    References
    ----------
    IEEE 754-2008, sec 5.4.1 (``fusedMultiplyAdd``).

    Examples
    --------
    ``0.1 * 10 - 1`` rounded once keeps the representation error of ``0.1`` that a rounded
    product loses:

    >>> from fractions import Fraction
    >>> py_fma(0.1, 10.0, -1.0) == float(Fraction(0.1) * 10 - 1), 0.1 * 10.0 - 1.0
    (True, 0.0)
    >>> py_fma(0.1, 10.0, -1.0) == 2.0**-54
    True
    """
    if _MATH_FMA is not None:
        return _MATH_FMA(a, b, c)
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b + c  # the product is exactly inf or NaN
    if not math.isfinite(c):
        return c  # a finite product plus inf or NaN (a * b might overflow; the fma does not)
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        # an exact zero: then a * b is exact too, and the float sum has IEEE's zero sign
        return a * b + c
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


@njit(cache=True, error_model="numpy", inline="always")
def u52_to_f64(j):
    """``float(j)`` for an integer ``0 <= j < 2**52`` (``uint64``), exactly.

    ``j | bits(2**52)`` is the double ``2**52 + j`` (``j`` fills the mantissa); subtracting
    ``2**52`` is exact.

    Parameters
    ----------
    j : numpy.uint64
        The integer, ``0 <= j < 2**52`` (not checked: outside that range the result is
        unspecified).  It must be typed ``uint64``: from Python pass ``np.uint64(j)``.

    Returns
    -------
    float
        ``float(j)``, exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.bits import u52_to_f64
    >>> [u52_to_f64(np.uint64(j)) == float(j) for j in (0, 1, 12345, 2**51 + 3, 2**52 - 1)]
    [True, True, True, True, True]
    """
    return as_f64(j | _EXP52) - _TWO52


@njit(cache=True, error_model="numpy", inline="always")
def u53_to_f64(j):
    """``float(j)`` for ``0 <= j < 2**53`` (``uint64``), exactly: ``2 float(j >> 1) + (j & 1)``
    (both terms and the sum are exact below ``2**53``).

    Parameters
    ----------
    j : numpy.uint64
        The integer, ``0 <= j < 2**53`` (not checked: outside that range the result is
        unspecified).  It must be typed ``uint64``: from Python pass ``np.uint64(j)``.

    Returns
    -------
    float
        ``float(j)``, exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from rfcheck.engine.bits import u53_to_f64
    >>> [u53_to_f64(np.uint64(j)) == float(j) for j in (0, 1, 2**52 + 1, 2**53 - 1)]
    [True, True, True, True]
    """
    return 2.0 * u52_to_f64(j >> _ONE) + u52_to_f64(j & _ONE)


@njit(cache=True, error_model="numpy", inline="always")
def pow2(kf):
    """``2.0**k`` for an integer-valued double ``kf = k``, ``-1022 <= k <= 1023``, exactly.

    ``kf + (2**52 + 2**51)`` is exact and its bits are ``bits(2**52 + 2**51) + k``; adding
    ``1023 - bits(2**52 + 2**51)`` leaves the biased exponent ``k + 1023`` (in ``[1, 2046]``:
    a normal number), which ``<< 52`` moves into place.

    Parameters
    ----------
    kf : float
        The exponent ``k`` as a ``float64`` holding an integer, ``-1022 <= k <= 1023`` (not
        checked: outside that range, or for a non-integer ``kf``, the result is unspecified).

    Returns
    -------
    float
        ``2.0**k``, exactly (a normal double).

    Examples
    --------
    >>> from rfcheck.engine.bits import pow2
    >>> all(pow2(float(k)) == 2.0**k for k in range(-1022, 1024))
    True
    """
    return as_f64((f64_bits(kf + _ROUND) + _POW2_BIAS) << _S52)

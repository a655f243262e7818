"""Input validation shared by every public function.

Each check raises ``ValueError`` whose message names the violated condition, so that the
CLI can print it as one line.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "broadcast_shape",
    "finite_array",
    "finite_complex",
    "finite_real",
    "not_complex",
    "pairs",
    "points",
    "positive_int",
    "positive_real",
    "real_array",
    "sign",
]


def finite_real(v: object, name: str) -> float:
    """A finite real scalar.

    Parameters
    ----------
    v : object
        A Python, NumPy or mpmath real number (or anything ``float()`` accepts, such as a 0-d
        array); ``bool`` is refused.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    float
        ``float(v)``.

    Raises
    ------
    ValueError
        If ``v`` is not a real number, or is NaN or infinite.

    Examples
    --------
    >>> finite_real(2, "t")
    2.0
    >>> finite_real(float("nan"), "t")
    Traceback (most recent call last):
    ...
    ValueError: t must be finite; got nan
    """
    if isinstance(v, bool) or not isinstance(v, numbers.Real | np.floating | np.integer):
        try:
            v = float(v)  # mpmath mpf and 0-d arrays
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a real number; got {v!r}") from None
    f = float(v)
    if not math.isfinite(f):
        raise ValueError(f"{name} must be finite; got {f}")
    return f


def positive_real(v: object, name: str) -> float:
    """A finite real scalar > 0.

    Parameters
    ----------
    v : object
        A real number (see :func:`finite_real`).
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    float
        ``float(v)``.

    Raises
    ------
    ValueError
        If ``v`` is not a finite real number, or ``v <= 0``.

    Examples
    --------
    >>> positive_real(0.5, "sigma")
    0.5
    """
    f = finite_real(v, name)
    if not f > 0:
        raise ValueError(f"{name} must be > 0; got {f}")
    return f


def finite_complex(v: object, name: str) -> complex:
    """A finite complex scalar.

    Parameters
    ----------
    v : object
        Anything ``complex()`` accepts.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    complex
        ``complex(v)``.

    Raises
    ------
    ValueError
        If ``v`` is not a number, or its real or imaginary part is NaN or infinite.

    Examples
    --------
    >>> finite_complex(1, "z")
    (1+0j)
    """
    try:
        c = complex(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number; got {v!r}") from None
    if not (math.isfinite(c.real) and math.isfinite(c.imag)):
        raise ValueError(f"{name} must be finite; got {c}")
    return c


def sign(s: object, name: str = "s") -> int:
    """``s`` in {-1, +1} (CRT eq 4).

    Parameters
    ----------
    s : object
        The sign; ``-1`` or ``1`` (``bool`` is refused).
    name : str, default "s"
        The argument's name, used in the error message.

    Returns
    -------
    int
        ``int(s)``.

    Raises
    ------
    ValueError
        If ``s`` is not ``-1`` or ``+1``.

    References
    ----------
    Chefs' Random Tables, eq (4) (the sign ``s`` of the feature map).

    Examples
    --------
    >>> sign(-1)
    -1
    """
    if s not in (-1, 1) or isinstance(s, bool):
        raise ValueError(f"{name} must be -1 or +1; got {s!r}")
    return int(s)


def positive_int(n: object, name: str, minimum: int = 1) -> int:
    """An integer ``>= minimum``.

    Parameters
    ----------
    n : object
        An integer (Python or NumPy; a float with an integral value is accepted, ``bool`` is not).
    name : str
        The argument's name, used in the error message.
    minimum : int, default 1
        The smallest value accepted.

    Returns
    -------
    int
        ``int(n)``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer, or ``n < minimum``.

    Examples
    --------
    >>> positive_int(4.0, "m")
    4
    >>> positive_int(0, "m")
    Traceback (most recent call last):
    ...
    ValueError: m must be an integer >= 1; got 0
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral | np.integer):
        if isinstance(n, float | np.floating) and float(n).is_integer():
            n = int(n)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}; got {n!r}")
    if int(n) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {n}")
    return int(n)


def not_complex(v: object, name: str) -> np.ndarray:
    """``np.asarray(v)``, refusing complex input (NumPy, Python or mpmath complex numbers),
    whose imaginary part a float64 conversion would drop with only a warning.

    Parameters
    ----------
    v : object
        A scalar or array-like.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    numpy.ndarray
        ``np.asarray(v)`` (its dtype unchanged).

    Raises
    ------
    ValueError
        If ``v`` has a complex dtype or holds complex Python or mpmath numbers.

    Examples
    --------
    >>> not_complex([1, 2], "x")
    array([1, 2])
    """
    import mpmath

    a = np.asarray(v)
    if np.iscomplexobj(a) or (a.dtype == object and any(isinstance(e, complex | mpmath.mpc) for e in a.flat)):
        raise ValueError(f"{name} must be real (not complex)")
    return a


def real_array(v: object, name: str) -> np.ndarray:
    """A float64 array of real input (:func:`not_complex`).

    Parameters
    ----------
    v : object
        A real scalar or array-like.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    numpy.ndarray
        ``v`` as a float64 array of the same shape.

    Raises
    ------
    ValueError
        If ``v`` is complex, or cannot be converted to float.

    Examples
    --------
    >>> real_array(3, "x")
    array(3.)
    """
    try:
        return not_complex(v, name).astype(float)
    except (TypeError, ValueError) as exc:
        if "must be real" in str(exc):
            raise
        raise ValueError(f"{name} must be a real number or array; got {type(v).__name__}") from None


def finite_array(a: object, name: str) -> np.ndarray:
    """A float64 array with no NaN or inf.

    Parameters
    ----------
    a : object
        A real scalar or array-like.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    numpy.ndarray
        ``a`` as a float64 array of the same shape.

    Raises
    ------
    ValueError
        If ``a`` is complex, not numeric, or holds NaN or inf.

    Examples
    --------
    >>> finite_array([1, 2], "x")
    array([1., 2.])
    """
    arr = real_array(a, name)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def points(x: object, name: str) -> np.ndarray:
    """Points as an (L, d) float array; a single (d,) vector becomes (1, d).

    Parameters
    ----------
    x : object
        Array-like of shape (d,) or (L, d), real and finite, ``d >= 1``.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    numpy.ndarray
        Float64 array of shape (L, d) (``L = 1`` for a single vector).

    Raises
    ------
    ValueError
        If ``x`` is complex, non-finite, or not of shape (d,) or (L, d) with ``d >= 1``.

    Examples
    --------
    >>> points([1.0, 2.0], "x").shape
    (1, 2)
    """
    arr = finite_array(x, name)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape (d,) or (L, d) with d >= 1; got {arr.shape}")
    return arr


def pairs(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    """Paired points ``x[i], y[i]`` as two (P, d) arrays of equal shape.

    Parameters
    ----------
    x, y : array_like
        Shape (d,) or (P, d), real and finite; both of the same shape.

    Returns
    -------
    xa, ya : numpy.ndarray
        Float64 arrays of shape (P, d).

    Raises
    ------
    ValueError
        If either is not valid for :func:`points`, or their shapes differ.

    Examples
    --------
    >>> xa, ya = pairs([0.0, 1.0], [1.0, 0.0])
    >>> xa.shape, ya.shape
    ((1, 2), (1, 2))
    """
    xa, ya = points(x, "x"), points(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same shape; got {xa.shape} and {ya.shape}")
    return xa, ya


def broadcast_shape(args: dict[str, object], where: str = "") -> tuple[int, ...]:
    """The shape that the named arguments broadcast to; ``ValueError`` naming them (with their
    shapes) if they do not broadcast together (numpy's own message names no argument).
    Strings are skipped; ``where`` prefixes the message (e.g. the function's name).

    Parameters
    ----------
    args : dict of str to object
        ``{argument name: value}``; scalars, array-likes (strings are skipped).
    where : str, default ""
        Prefix of the error message (e.g. the calling function's name).

    Returns
    -------
    tuple of int
        The broadcast shape (``()`` for scalars only).

    Raises
    ------
    ValueError
        If a value is a ragged nested list, or the shapes do not broadcast together.

    Examples
    --------
    >>> broadcast_shape({"x": [1.0, 2.0], "s": 1})
    (2,)
    >>> broadcast_shape({"x": [1.0, 2.0], "y": [1.0, 2.0, 3.0]}, "f")
    Traceback (most recent call last):
    ...
    ValueError: f: the shapes of the arguments do not broadcast together (x (2,), y (3,))
    """
    shapes = {}
    for name, v in args.items():
        if isinstance(v, str):
            continue
        try:
            shapes[name] = np.shape(v)
        except ValueError:  # a ragged nested list
            raise ValueError(f"{where}{': ' if where else ''}{name} is not a rectangular array") from None
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        listed = ", ".join(f"{n} {s}" for n, s in shapes.items() if s != ())
        raise ValueError(f"{where}{': ' if where else ''}the shapes of the arguments do not broadcast "
                         f"together ({listed})") from None

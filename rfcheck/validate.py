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
    """A finite real scalar."""
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
    """A finite real scalar > 0."""
    f = finite_real(v, name)
    if not f > 0:
        raise ValueError(f"{name} must be > 0; got {f}")
    return f


def finite_complex(v: object, name: str) -> complex:
    """A finite complex scalar."""
    try:
        c = complex(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number; got {v!r}") from None
    if not (math.isfinite(c.real) and math.isfinite(c.imag)):
        raise ValueError(f"{name} must be finite; got {c}")
    return c


def sign(s: object, name: str = "s") -> int:
    """``s`` in {-1, +1} (CRT eq 4)."""
    if s not in (-1, 1) or isinstance(s, bool):
        raise ValueError(f"{name} must be -1 or +1; got {s!r}")
    return int(s)


def positive_int(n: object, name: str, minimum: int = 1) -> int:
    """An integer ``>= minimum``."""
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
    whose imaginary part a float64 conversion would drop with only a warning."""
    import mpmath

    a = np.asarray(v)
    if np.iscomplexobj(a) or (a.dtype == object and any(isinstance(e, complex | mpmath.mpc) for e in a.flat)):
        raise ValueError(f"{name} must be real (not complex)")
    return a


def real_array(v: object, name: str) -> np.ndarray:
    """A float64 array of real input (:func:`not_complex`)."""
    try:
        return not_complex(v, name).astype(float)
    except (TypeError, ValueError) as exc:
        if "must be real" in str(exc):
            raise
        raise ValueError(f"{name} must be a real number or array; got {type(v).__name__}") from None


def finite_array(a: object, name: str) -> np.ndarray:
    """A float64 array with no NaN or inf."""
    arr = real_array(a, name)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def points(x: object, name: str) -> np.ndarray:
    """Points as an (L, d) float array; a single (d,) vector becomes (1, d)."""
    arr = finite_array(x, name)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape (d,) or (L, d) with d >= 1; got {arr.shape}")
    return arr


def pairs(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    """Paired points ``x[i], y[i]`` as two (P, d) arrays of equal shape."""
    xa, ya = points(x, "x"), points(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same shape; got {xa.shape} and {ya.shape}")
    return xa, ya


def broadcast_shape(args: dict[str, object], where: str = "") -> tuple[int, ...]:
    """The shape that the named arguments broadcast to; ``ValueError`` naming them (with their
    shapes) if they do not broadcast together (numpy's own message names no argument).
    Strings are skipped; ``where`` prefixes the message (e.g. the function's name)."""
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

"""The coupling registry: :data:`~rfcheck.engine.couplings.COUPLINGS` (name ->
:class:`~rfcheck.engine.couplings.Coupling`, with the Python twins of each coupling's kernels),
the checks of a coupling's arguments and the streams each (coupling, path) draws from
(:func:`~rfcheck.engine.couplings.stream_tag`).

Examples
--------
>>> from rfcheck.engine.couplings import COUPLINGS, block_sizes
>>> sorted(COUPLINGS)[:3], block_sizes("simrf", 5, 3)
(['iid', 'iid-anti', 'orf'], [3, 2])
"""

from __future__ import annotations

from rfcheck import validate
from rfcheck.engine.couplings import Coupling
from rfcheck.engine.couplings.anti import _py_anti_ensemble, _py_anti_projection
from rfcheck.engine.couplings.common import ANTI, IID, ORF, ORF_HD, SIMRF, SIMRF_HD, SIMRF_PLUS
from rfcheck.engine.couplings.hd import _py_orf_hd_ensemble, _py_simrf_hd_ensemble, hd_dim
from rfcheck.engine.couplings.iid import _py_iid_ensemble, _py_iid_projection
from rfcheck.engine.couplings.orf import _py_orf_ensemble, _py_orf_projection
from rfcheck.engine.couplings.simrf import _py_simrf_ensemble, _py_simrf_projection
from rfcheck.engine.couplings.simrf_plus import _py_simrf_plus_ensemble, _py_simrf_plus_projection

__all__ = ["coupling_args"]


#: every coupling by name (``"iid"``, ``"orf"``, ``"simrf"``, ``"simrf+"``, their ``"-anti"``
#: antithetic variants, and the ensemble-only ``"orf-hd"``, ``"simrf-hd"``)
COUPLINGS: dict[str, Coupling] = {
    "iid": Coupling(
        "iid", IID, "independent N(0, I_d) rows", None, True,
        _py_iid_ensemble, _py_iid_projection,
    ),
    "orf": Coupling(
        "orf", ORF, "orthogonal blocks of d Haar directions with chi_d norms (Yu et al. 2016)",
        lambda d: d, True, _py_orf_ensemble, _py_orf_projection,
    ),
    "simrf": Coupling(
        "simrf", SIMRF,
        "simplex blocks D S R of d rows at angle arccos(-1/(d-1)), chi_d norms (Reid et al. 2023)",
        lambda d: d, True, _py_simrf_ensemble, _py_simrf_projection, 2,
    ),
    "simrf+": Coupling(
        "simrf+", SIMRF_PLUS,
        "SimRF+ (Reid et al. 2023, eq 16-17): simrf blocks rearranged by the Gauss-Seidel "
        "update to tol 1e-10",
        lambda d: d, True, _py_simrf_plus_ensemble, _py_simrf_plus_projection, 2,
    ),
}


for _base in ("iid", "orf", "simrf", "simrf+"):
    _b = COUPLINGS[_base]
    COUPLINGS[_base + "-anti"] = Coupling(
        _base + "-anti", ANTI + _b.code,
        f"antithetic pairs (w, -w) of {_base} rows: ceil(M/2) {_base} rows, each followed "
        "by its negative",
        (lambda d: 2) if _b.block is None else (lambda d, f=_b.block: 2 * f(d)),
        _b.has_projection, _py_anti_ensemble(_b.py_ensemble),
        _py_anti_projection(_b.py_projection), _b.min_d,
    )


del _base, _b


_HD_NO_PROJECTION = ("the law of w . u_hat depends on the direction of u_hat (the HD product "
                     "is not rotation invariant); the projection interface carries |u| only")


COUPLINGS["orf-hd"] = Coupling(
    "orf-hd", ORF_HD,
    "fast ORF (SimRF eq 89-90): blocks of D = 2^ceil(log2 d) rows of diag(r) H D1 H D2 H D3, "
    "chi_D norms, zero-padded data; approximately Haar",
    hd_dim, False, _py_orf_hd_ensemble, None, 1, False,
)


COUPLINGS["simrf-hd"] = Coupling(
    "simrf-hd", SIMRF_HD,
    "fast SimRF (SimRF eq 89-90): blocks of D = 2^ceil(log2 d) rows of diag(r) S H D1 H D2 H D3, "
    "chi_D norms, zero-padded data; approximately Haar",
    lambda d: hd_dim(max(d, 2)), False, _py_simrf_hd_ensemble, None, 2, False,
)


def get_coupling(name: object) -> Coupling:
    """The registered coupling called ``name``; ``ValueError`` listing the known ones.

    Parameters
    ----------
    name : str
        A key of :data:`COUPLINGS` (``"iid"``, ``"orf"``, ``"simrf"``, ``"simrf+"``, their
        ``"-anti"`` variants, ``"orf-hd"``, ``"simrf-hd"``).

    Returns
    -------
    Coupling
        The registry entry.

    Raises
    ------
    ValueError
        If ``name`` is not a string or not a registered coupling.

    Examples
    --------
    >>> from rfcheck.engine.couplings import get_coupling
    >>> orf = get_coupling("orf")
    >>> orf.name, orf.block(5), orf.has_projection, get_coupling("orf-hd").has_projection
    ('orf', 5, True, False)
    """
    if not isinstance(name, str) or name not in COUPLINGS:
        raise ValueError(f"unknown coupling {name!r}; known: {sorted(COUPLINGS)}")
    return COUPLINGS[name]


def check_dim(c: Coupling, d: int) -> int:
    """``d`` if coupling ``c`` is defined in dimension ``d``, else ``ValueError``.

    Parameters
    ----------
    c : Coupling
        The coupling.
    d : int
        The dimension.

    Returns
    -------
    int
        ``d`` itself.

    Raises
    ------
    ValueError
        If ``d < c.min_d`` (e.g. ``d = 1`` for the simplex couplings).

    Examples
    --------
    >>> from rfcheck.engine.couplings import check_dim, get_coupling
    >>> check_dim(get_coupling("simrf"), 2)
    2
    >>> check_dim(get_coupling("simrf"), 1)
    Traceback (most recent call last):
    ...
    ValueError: coupling 'simrf' needs d >= 2; got d=1
    """
    if d < c.min_d:
        raise ValueError(f"coupling {c.name!r} needs d >= {c.min_d}; got d={d}")
    return d


def coupling_args(coupling: str, M: int, d: int, *, projection: bool = False) -> tuple[Coupling, int, int]:
    """The checked arguments of a draw from coupling ``coupling``: its entry, ``M`` and ``d``.

    Parameters
    ----------
    coupling : str
        A key of :data:`COUPLINGS`.
    M, d : int
        Number of rows and dimension (both >= 1; ``d >= min_d`` of the coupling).
    projection : bool, optional
        Also require a projection sampler (default False).

    Returns
    -------
    tuple of (Coupling, int, int)
        The registry entry, ``M`` and ``d`` as Python ints.

    Raises
    ------
    ValueError
        In this order: an unknown coupling, one without a projection sampler (with
        ``projection``), ``M`` or ``d`` not an integer ``>= 1``, ``d`` below the coupling's
        ``min_d``.

    Examples
    --------
    >>> from rfcheck.engine.couplings.registry import coupling_args
    >>> c, M, d = coupling_args("simrf", 5, 3)
    >>> c.name, M, d
    ('simrf', 5, 3)
    """
    c = get_coupling(coupling)
    if projection and not c.has_projection:
        raise ValueError(f"coupling {c.name!r} has no projection sampler")
    M = validate.positive_int(M, "M")
    return c, M, check_dim(c, validate.positive_int(d, "d"))


def block_sizes(coupling: str, M: int, d: int) -> list[int]:
    """Sizes ``b_k`` of the independent blocks of an ensemble of ``M`` rows in dimension ``d``.

    ``[1] * M`` for ``iid``; ``[d, ..., d, M mod d]`` (without a zero) for ``orf``.

    Parameters
    ----------
    coupling : str
        A key of :data:`COUPLINGS`.
    M, d : int
        Number of rows and dimension (both >= 1; ``d >= min_d`` of the coupling).

    Returns
    -------
    list of int
        The block sizes, summing to ``M``.

    Raises
    ------
    ValueError
        Through its argument checks: an unknown coupling, ``M`` or ``d`` not an integer
        ``>= 1``, or ``d`` below the coupling's ``min_d``.

    Examples
    --------
    >>> from rfcheck.engine.couplings import block_sizes
    >>> block_sizes("orf", 7, 3), block_sizes("iid", 3, 5), block_sizes("orf-anti", 7, 3)
    ([3, 3, 1], [1, 1, 1], [6, 1])
    """
    c, M, d = coupling_args(coupling, M, d)
    if c.block is None:
        return [1] * M
    b = c.block(d)
    sizes = [b] * (M // b)
    if M % b:
        sizes.append(M % b)
    return sizes


def stream_tag(code: int, path: int) -> int:
    """Stream offset of (coupling, path): engines use ``stream_tag + pair`` as the stream.

    Parameters
    ----------
    code : int
        The coupling's integer code (``Coupling.code``).
    path : int
        The path's code (the projection and ensemble paths of
        :func:`rfcheck.engine.montecarlo.simulate`, 2 for :func:`~rfcheck.engine.couplings.sample_ensemble`, 3 for
        :func:`~rfcheck.engine.couplings.sample_projection`).

    Returns
    -------
    int
        ``code * 2^40 + path * 2^32``: ``2^32`` streams per (coupling, path).

    Examples
    --------
    >>> from rfcheck.engine.couplings import stream_tag
    >>> stream_tag(1, 2) == 2**40 + 2 * 2**32
    True
    """
    return (code << 40) | (path << 32)

"""rfcheck.engine.wy: the compact-WY Householder panel kernels equal their plain-Python twins bit for
bit, equal the reflectors applied one at a time to rounding, and the engine's cache stamps cover them."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from rfcheck.engine import couplings as cp
from rfcheck.engine import rng, wy
from rfcheck.engine.couplings import orf as cp_orf
from rfcheck.engine.couplings import simrf_plus as cp_plus


def _bits(a):
    """The exact bits (signed zeros and NaN payloads included) of an array or nested list."""
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).view(np.uint64).tolist()


def _panel(d, j0, nbp, seed):
    """A random panel: reflectors ``j < nbp`` at rows ``j0 + j ..`` (zero above), their taus."""
    g = np.random.default_rng(seed)
    V = np.zeros((d, 8))
    taus = np.zeros(8)
    for j in range(nbp):
        x = g.standard_normal(d - j0 - j)
        V[j0 + j:, j] = x
        V[j0 + j, j] += math.copysign(np.linalg.norm(x), x[0])
        taus[j] = 2.0 / (V[:, j] @ V[:, j])
    return V, taus


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 40), data=st.data())
def test_panel_kernels_equal_python_twins_bit_for_bit(d, data):
    j0 = data.draw(st.integers(0, d - 1))
    nbp = data.draw(st.integers(1, min(8, d - j0)))
    b = data.draw(st.integers(j0 + nbp, d))
    seed = data.draw(st.integers(0, 2**32 - 1))
    V, taus = _panel(d, j0, nbp, seed)
    X = np.random.default_rng(seed + 1).standard_normal((d, cp.pad8(b)))
    G = np.empty((8, 8))
    T = np.empty((8, 8))
    wy.gram(V, j0, d, G)
    wy.panel_t(G, taus, T)
    Gp = wy.py_gram(V.tolist(), j0, d)
    Tp = wy.py_panel_t(Gp, taus.tolist())
    assert _bits(G) == _bits(Gp) and _bits(T) == _bits(Tp)
    Xp = X.tolist()
    c0 = j0 - j0 % 8
    wy.panel_apply(X, V, T, j0, d, c0, cp.pad8(b))
    wy.py_panel_apply(Xp, V.tolist(), Tp, j0, d, range(c0, cp.pad8(b)))
    assert _bits(X) == _bits(Xp)


@pytest.mark.parametrize("d,nbp", [(8, 8), (20, 8), (13, 5), (3, 1), (64, 8)])
def test_panel_is_the_product_of_its_reflectors(d, nbp):
    """``I - V T V^T`` applied by the kernel equals ``H_0 ... H_{nbp-1}`` applied one reflector at
    a time (numpy), to rounding; a wrong ``T`` (its off-diagonal dropped) is far from it."""
    V, taus = _panel(d, 0, nbp, 7)
    X = np.random.default_rng(3).standard_normal((d, cp.pad8(d)))
    ref = X.copy()
    for j in range(nbp - 1, -1, -1):
        v = V[:, j]
        ref -= taus[j] * np.outer(v, v @ ref)
    G, T = np.empty((8, 8)), np.empty((8, 8))
    wy.gram(V, 0, d, G)
    wy.panel_t(G, taus, T)
    got = X.copy()
    wy.panel_apply(got, V, T, 0, d, 0, cp.pad8(d))
    assert np.abs(got - ref).max() < 1e-13 * max(1.0, np.abs(ref).max())
    if nbp >= 2:
        bad = X.copy()
        wy.panel_apply(bad, V, np.diag(np.diag(T)), 0, d, 0, cp.pad8(d))
        assert np.abs(bad - ref).max() > 1e-3


@njit
def _haar(d, b, X, vec, raw, nbuf):
    st = rng.init_block(np.uint64(5), np.uint64(1), np.uint64(2), raw)
    return cp_orf._haar_columns(st, d, b, X, vec, raw, nbuf)


@pytest.mark.parametrize("d,b", [(1, 1), (2, 1), (3, 2), (8, 8), (9, 9), (17, 5), (33, 33), (64, 64), (70, 64)])
def test_haar_columns_orthonormal_and_twin_bit_for_bit(d, b):
    """The engine's Haar columns (panels of 8, :func:`cp_orf._haar_columns`) are orthonormal to
    rounding and equal the plain-Python twin's, signs included, bit for bit."""
    X, vec, raw, nbuf = cp.scratch(b, d)
    _haar(d, b, X, vec, raw, nbuf)
    Q = X[:, :b]
    assert np.abs(Q.T @ Q - np.eye(b)).max() < 1e-14 * max(d, 8)
    r = rng.PyRNG(5, 1, 2)
    Xp, signs = cp_orf._py_haar_columns(r, d, b)
    assert _bits(Q) == _bits(Xp)
    assert _bits(vec[8, :b]) == _bits(signs)


def test_engine_cache_stamps_cover_compiled_imports():
    """Every module whose Numba cache is keyed to a set of files (``tie_cache_to_engine``)
    names in it every rfcheck module with compiled code that it imports, transitively (else an
    edit there, e.g. to this sweep, would leave stale machine code in the on-disk cache)."""
    import ast
    import pathlib

    from rfcheck.engine import ars, counter_normals, discrete_engine, philox, rng

    root = pathlib.Path(rng.__file__).parent

    def compiled(name: str) -> bool:
        """The module compiles code: it uses ``njit`` or ``intrinsic`` (a decorator or a call),
        read from its syntax tree, so an example in a docstring does not count."""
        for node in ast.walk(ast.parse((root / name).read_text())):
            if isinstance(node, ast.Name | ast.Attribute):
                if (node.id if isinstance(node, ast.Name) else node.attr) in ("njit", "intrinsic"):
                    return True
        return False

    family = {p.relative_to(root).as_posix() for p in (root / "couplings").glob("*.py")}
    stamped = {"rng.py": rng._ENGINE_FILES, "montecarlo.py": rng._ENGINE_FILES,
               "discrete_engine.py": discrete_engine.CACHE_FILES, "philox.py": philox.CACHE_FILES,
               "counter_normals.py": counter_normals.CACHE_FILES, "ars.py": ars.CACHE_FILES,
               **{f: rng._ENGINE_FILES for f in family if compiled(f)}}
    tied = {p.relative_to(root).as_posix() for p in root.rglob("*.py") if "tie_cache_to_engine(" in p.read_text()}
    assert tied == set(stamped)
    assert family <= set(rng._ENGINE_FILES)  # the package's modules, found by listing it

    def path(dotted: str) -> str | None:
        """The file of module ``rfcheck.<dotted>`` relative to ``root`` (``../x.py`` outside the
        engine: compiled code there could not be stamped; ``x/__init__.py`` for a package)."""
        rel = dotted.split(".")[1:]
        rel = rel[1:] if rel[:1] == ["engine"] else ["..", *rel]
        for cand in ("/".join(rel) + ".py", "/".join([*rel, "__init__.py"])):
            if rel and (root / cand).exists():
                return cand
        return None

    def imports(name: str) -> set[str]:
        """The rfcheck modules ``name`` imports (a package and the submodules taken from it)."""
        out = set()
        for node in ast.walk(ast.parse((root / name).read_text())):
            mod = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
            if mod == "rfcheck" or mod.startswith("rfcheck."):
                out |= {path(mod), *(path(f"{mod}.{a.name}") for a in node.names)}
        return out - {None}

    for name, files in stamped.items():
        seen, todo = set(), [name]
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(n for n in imports(m) if compiled(n))
        assert {m for m in seen if compiled(m)} <= set(files), (name, sorted(seen - set(files)))


def test_kernels_refuse_shapes_they_would_overrun():
    """The LLVM kernels do not check bounds; their wrappers refuse shapes that would make them
    read or write outside the arrays (a wrong panel width, a too narrow X, an odd column range)."""
    X = np.zeros((16, 16))
    V = np.zeros((16, 8))
    T = np.zeros((8, 8))
    with pytest.raises(ValueError, match="V needs shape"):
        wy.panel_apply(X, np.zeros((16, 4)), T, 0, 16, 0, 16)
    with pytest.raises(ValueError, match=r"columns c0 \.\. c1"):
        wy.panel_apply(X, V, T, 0, 16, 0, 24)
    with pytest.raises(ValueError, match=r"columns c0 \.\. c1"):
        wy.panel_apply(X, V, T, 0, 16, 0, 12)
    with pytest.raises(ValueError, match="G \\(8, 8\\)"):
        wy.gram(V, 0, 16, np.zeros((8, 4)))
    with pytest.raises(ValueError, match="pad8"):
        cp_plus._plus_update(np.zeros((5, 5)), 5, 5, np.ones(5), np.zeros(8), np.zeros(8), np.zeros(8), 1e-10, 3)


def test_scratch_rows_start_cache_lines():
    """The ensembles' scratch (``couplings.scratch``, ``empty_lines``) starts on 64-byte lines, so
    that each 8-wide row vector of the panel and Gauss-Seidel kernels is one cache line."""
    for M, d in ((64, 64), (5, 12), (130, 33)):
        X, vec, _, nbuf = cp.scratch(M, d)
        for a in (X, vec, nbuf):
            assert a.ctypes.data % 64 == 0 and a.flags.c_contiguous
        assert X.strides[0] % 64 == 0 and vec.strides[0] % 64 == 0
    for n in range(20):
        a = cp.empty_lines(n)
        assert a.shape == (n,) and a.ctypes.data % 64 == 0

"""rfcheck.engine.noalias.sweep_rows: the LLVM row sweep equals its plain-Python definition bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from rfcheck.engine.bits import py_fma
from rfcheck.engine.noalias import sweep_rows


@njit  # not cached: an on-disk cache here would not see edits to rfcheck/engine/noalias.py
def _sweep3(X, wa, wb, wc, wd, ab, gh, n):
    sweep_rows((X[0], X[1], X[2]), wa, wb, wc, wd, ab, gh, n)


@njit
def _sweep1(X, wa, wb, wc, wd, ab, gh, n):
    sweep_rows((X[0],), wa, wb, wc, wd, ab, gh, n)


def _reference(X, wa, wb, wc, wd, ab, gh, n):
    """The loop of the module docstring, one column at a time, in Python floats."""
    X = X.tolist()
    wc = wc.tolist()
    wd = wd.tolist()
    for c in range(n):
        ys = []
        for r in range(len(X)):
            y = py_fma(ab[2 * r + 1], float(wb[c]), py_fma(ab[2 * r], float(wa[c]), X[r][c]))
            X[r][c] = y
            ys.append(y)
        for r, y in enumerate(ys):
            wc[c] = py_fma(gh[2 * r], y, wc[c])
        for r, y in enumerate(ys):
            wd[c] = py_fma(gh[2 * r + 1], y, wd[c])
    return np.array(X), np.array(wc), np.array(wd)


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@settings(max_examples=60, deadline=None)
@given(rows=st.sampled_from([1, 3]), n=st.integers(0, 21), seed=st.integers(0, 2**32 - 1),
       coefs=st.lists(finite, min_size=12, max_size=12))
def test_sweep_rows_equals_python_definition(rows, n, seed, coefs):
    rng = np.random.default_rng(seed)
    width = n + 5  # columns past n must stay untouched
    X = rng.standard_normal((rows, width)) * 10.0 ** rng.integers(-3, 4, (rows, width))
    wa, wb, wc, wd = (rng.standard_normal(width) for _ in range(4))
    ab = tuple(coefs[:2 * rows])
    gh = tuple(coefs[6:6 + 2 * rows])
    X0, wc0, wd0 = X.copy(), wc.copy(), wd.copy()
    (_sweep3 if rows == 3 else _sweep1)(X, wa, wb, wc, wd, ab, gh, n)
    Xr, wcr, wdr = _reference(X0[:, :n], wa, wb, wc0[:n], wd0[:n], ab, gh, n)
    def bits(a):
        return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)

    np.testing.assert_array_equal(bits(X[:, :n]), bits(Xr.reshape(rows, n)))  # signed zeros too
    np.testing.assert_array_equal(bits(wc[:n]), bits(wcr))
    np.testing.assert_array_equal(bits(wd[:n]), bits(wdr))
    np.testing.assert_array_equal(bits(X[:, n:]), bits(X0[:, n:]))
    np.testing.assert_array_equal(bits(wc[n:]), bits(wc0[n:]))
    np.testing.assert_array_equal(bits(wd[n:]), bits(wd0[n:]))


def test_fused_not_separate_rounding():
    """One case where fma and multiply-then-add differ: the kernel must give the fma."""
    a = 1.0 + 2.0**-30
    X = np.array([[-(1.0 + 2.0**-29)]])  # a * a - (1 + 2**-29) = 2**-60 exactly
    wc = np.zeros(1)
    wd = np.zeros(1)
    _sweep1(X, np.array([a]), np.zeros(1), wc, wd, (a, 0.0), (1.0, 0.0), 1)
    assert X[0, 0] == 2.0**-60
    assert a * a - (1.0 + 2.0**-29) == 0.0  # what separate roundings give
    assert wc[0] == 2.0**-60 and wd[0] == 0.0


def _host_has_fma() -> bool:
    from llvmlite import binding
    from numba.core import config

    return bool(binding.get_host_cpu_features().get("fma")) and config.OPT >= 2


@pytest.mark.skipif(not _host_has_fma(), reason="vector FMA loops need a CPU with FMA and NUMBA_OPT >= 2")
@pytest.mark.parametrize("rows", [1, 3])
def test_vector_loop_without_runtime_alias_checks(rows):
    """The point of the module: LLVM vectorises the loop with no runtime overlap check
    (``vector.memcheck``), which it emits for the same loop written in Numba."""
    def sweep(X, wa, wb, wc, wd, ab, gh, n):
        sweep_rows((X[0], X[1], X[2]) if rows == 3 else (X[0],), wa, wb, wc, wd, ab, gh, n)

    def plain(X, wa, wb, wc, wd, a, b, g, h, n):
        x = X[0]
        for c in range(n):
            y = a * wa[c] + b * wb[c] + x[c]
            x[c] = y
            wc[c] += g * y
            wd[c] += h * y

    X = np.zeros((3, 8))
    v = [np.zeros(8) for _ in range(4)]
    f = njit(sweep)
    f(X, *v, (0.0,) * (2 * rows), (0.0,) * (2 * rows), 8)
    ir_text = f.inspect_llvm(f.signatures[0])
    assert "vector.body" in ir_text and "vector.memcheck" not in ir_text
    g = njit(plain)
    g(X, *v, 0.0, 0.0, 0.0, 0.0, 8)
    assert "vector.memcheck" in g.inspect_llvm(g.signatures[0])  # the control


def test_engine_cache_stamps_cover_compiled_imports():
    """Every module whose Numba cache is keyed to a set of files (``tie_cache_to_engine``)
    names in it every rfcheck module with compiled code that it imports, transitively (else an
    edit there, e.g. to this sweep, would leave stale machine code in the on-disk cache)."""
    import ast
    import pathlib

    from rfcheck.engine import discrete_engine, philox, rng

    root = pathlib.Path(rng.__file__).parent
    stamped = {"rng.py": rng._ENGINE_FILES, "couplings.py": rng._ENGINE_FILES,
               "montecarlo.py": rng._ENGINE_FILES, "discrete_engine.py": discrete_engine.CACHE_FILES,
               "philox.py": philox.CACHE_FILES}
    tied = {p.name for p in root.glob("*.py") if "tie_cache_to_engine(" in p.read_text()}
    assert tied == set(stamped)

    def compiled(name: str) -> bool:
        text = (root / name).read_text()
        return "@njit" in text or "@intrinsic" in text


    def imports(name: str) -> set[str]:
        """The rfcheck modules ``name`` imports, as paths relative to ``root`` (``../x.py``
        for one outside the engine: compiled code there could not be stamped)."""
        out = set()
        for node in ast.walk(ast.parse((root / name).read_text())):
            mod = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
            if mod in ("rfcheck", "rfcheck.engine"):
                out |= {"/".join([*mod.split(".")[1:], a.name]) + ".py" for a in node.names}
            elif mod.startswith("rfcheck."):
                out.add("/".join(mod.split(".")[1:]) + ".py")
        rel = {n[len("engine/"):] if n.startswith("engine/") else f"../{n}" for n in out}
        return {n for n in rel if (root / n).exists()}

    for name, files in stamped.items():
        seen, todo = set(), [name]
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(n for n in imports(m) if compiled(n))
        assert {m for m in seen if compiled(m)} <= set(files), (name, sorted(seen - set(files)))

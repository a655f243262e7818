"""rfcheck.engine.gauss_seidel: the SimRF+ step kernel gives the plain-Python twin's numbers bit for bit."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from rfcheck.engine import couplings as cp
from rfcheck.engine.couplings import simrf_plus as cp_plus


@njit
def _run(X, b, d, nrm, tol, max_passes):
    vec = np.full((3, cp.pad8(d)), np.nan)  # scratch starts as garbage: the kernel must not read it
    return cp_plus._plus_update(X, b, d, nrm, vec[0], vec[1], vec[2], tol, max_passes)


@settings(max_examples=60, deadline=None)
@given(d=st.integers(2, 21), data=st.data())
def test_plus_update_equals_python_twin_bit_for_bit(d, data):
    """Random blocks (any d, so partial 8-lane vectors; a zero row and a zero norm now and then):
    the rows, the pass count and the convergence flag equal the twin's, to the last bit."""
    b = data.draw(st.integers(2, d))
    seed = data.draw(st.integers(0, 2**32 - 1))
    g = np.random.default_rng(seed)
    rows = g.standard_normal((b, d))
    if data.draw(st.booleans()):
        rows[data.draw(st.integers(0, b - 1))] = 0.0
    nrm = np.sqrt((rows * rows).sum(axis=1))
    max_passes = data.draw(st.integers(1, 30))
    X = np.full((d, cp.pad8(d)), np.nan)
    X[:b, :d] = rows
    got = _run(X, b, d, nrm, 1e-10, max_passes)
    Xp = rows.tolist()
    want = cp_plus._py_plus_update(Xp, b, d, nrm.tolist(), 1e-10, max_passes)
    assert (int(got[0]), bool(got[1])) == want
    assert np.ascontiguousarray(X[:b, :d]).view(np.uint64).tolist() == np.array(Xp).view(np.uint64).tolist()

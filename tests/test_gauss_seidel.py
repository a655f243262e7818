"""rfcheck.engine.gauss_seidel: the SimRF+ step kernel gives the plain-Python twin's numbers bit for bit."""

import numpy as np
from hypothesis import example, given, settings
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


@njit
def _apply(Wt, m0, b, d, f):
    return cp_plus._plus_apply_columns(Wt, m0, b, d, f)


def _apply_reference(Wt, m0, b, d, f):
    """The scalar loop of the pass with known factors, coordinate by coordinate (plain Python)."""
    W = Wt.copy()
    for i in range(d):
        x = W[i]
        t = 0.0
        for j in range(b):
            t += x[m0 + j]
        for j in range(b):
            rest = t - x[m0 + j]
            x[m0 + j] = -(f[j] * rest)
            t = rest + x[m0 + j]
    return W


@settings(max_examples=80, deadline=None)
@given(d=st.integers(1, 40), b=st.integers(0, 23), m0=st.integers(0, 5), pad=st.integers(0, 3),
       seed=st.integers(0, 2**32 - 1), zeros=st.booleans())
@example(d=36, b=7, m0=3, pad=1, seed=5, zeros=True)  # groups of 16 and of 4, a tail; tiles and single columns
def test_plus_apply_equals_scalar_loop_bit_for_bit(d, b, m0, pad, seed, zeros):
    """SimRF+'s scalar-route pass (the tiled kernel of gauss_seidel.plus_apply on whole groups of
    coordinates, the loop on the last d mod 4): every entry of W^T equals the scalar loop's to the
    last bit -- any d (groups of 16 and of 4, a tail), any b (4 x 4 tiles and single columns), a
    block not at column 0, entries outside the block untouched, signed zeros kept."""
    g = np.random.default_rng(seed)
    Wt = g.standard_normal((d + 1, m0 + b + pad))
    if zeros:
        Wt[g.random(Wt.shape) < 0.3] = -0.0
    f = 0.5 + g.random(max(b, 1))
    want = _apply_reference(Wt, m0, b, d, f)
    _apply(Wt, m0, b, d, f)
    assert Wt.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_plus_apply_kernel_is_used_and_can_fail():
    """The kernel does the work on whole groups of four coordinates (``plus_apply`` returns
    ``d - d mod 4``: groups of 16, then of 4, the rest left to the loop), and the bit-for-bit
    comparison can fail: the kernel run with the factors shifted by one column differs from the
    loop's numbers."""
    from rfcheck.engine.gauss_seidel import plus_apply

    run = njit(lambda W, b, d, f: plus_apply(W, 0, b, d, f))
    g = np.random.default_rng(3)
    for d in (3, 4, 7, 16, 20, 23, 36, 64):
        Wt = g.standard_normal((d, 9))
        f = 0.5 + g.random(9)
        want = _apply_reference(Wt, 0, 9, d - d % 4, f)
        got = Wt.copy()
        assert run(got, 9, d, f) == d - d % 4
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64))
        if d >= 4:
            shifted = Wt.copy()
            run(shifted, 9, d, np.roll(f, 1))
            assert not np.array_equal(shifted, want)

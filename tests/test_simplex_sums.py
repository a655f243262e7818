"""rfcheck.engine.simplex_sums: the simplex block's signed row sums, bit for bit the scalar loop's."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numba import njit

from rfcheck.engine.simplex_sums import signed_row_sums


@njit
def _run(X, ncol, sg, ys, scale, d):
    return signed_row_sums(X, ncol, sg, ys, scale, d)


def _reference(X, ncol, sg, scale, d):
    """The scalar loop, row by row (plain Python floats): ``s = 0; s += x * sg`` in column order."""
    out = []
    for i in range(d):
        s = 0.0
        for j in range(ncol):
            s += float(X[i, j]) * float(sg[j])
        out.append(scale * s)
    return np.array(out)


@settings(max_examples=80, deadline=None)
@given(d=st.integers(0, 40), ncol=st.integers(0, 23), pad=st.integers(0, 3),
       seed=st.integers(0, 2**32 - 1), signs=st.booleans(), zeros=st.booleans())
@example(d=36, ncol=7, pad=1, seed=5, signs=True, zeros=True)  # groups of 16 and of 4, a tail; tiles and single columns
@example(d=64, ncol=63, pad=1, seed=1, signs=True, zeros=False)  # the engine's d = 64 block
def test_signed_row_sums_equal_scalar_loop_bit_for_bit(d, ncol, pad, seed, signs, zeros):
    """Every sum the kernel writes equals the scalar loop's to the last bit (any d: groups of 16
    and of 4; any ncol: 4 x 4 tiles and single columns; signs +-1 or any factors; signed zeros);
    it returns ``d - d mod 4``, reads ``X`` only and leaves ``ys`` past the rows it did alone."""
    g = np.random.default_rng(seed)
    X = g.standard_normal((d + 1, ncol + pad)) * np.exp(g.uniform(-30, 30, (d + 1, 1)))
    if zeros:
        X[g.random(X.shape) < 0.3] = -0.0
    sg = np.where(g.random(ncol + pad) < 0.5, -1.0, 1.0) if signs else g.standard_normal(ncol + pad)
    X0 = X.copy()
    ys = np.full(d + 1, np.nan)
    done = _run(X, ncol, sg, ys, 0.37, d)
    assert done == d - d % 4
    want = _reference(X0, ncol, sg, 0.37, done)
    assert ys[:done].view(np.uint64).tolist() == want.view(np.uint64).tolist()
    assert np.isnan(ys[done:]).all()
    assert X.view(np.uint64).tolist() == X0.view(np.uint64).tolist()


def test_signed_row_sums_comparison_can_fail():
    """The bit-for-bit comparison is not vacuous: the loop in another order (the columns reversed)
    differs from the kernel's sums in the last bits for some rows of a 64 x 63 block."""
    g = np.random.default_rng(7)
    X = g.standard_normal((64, 64))
    sg = np.where(g.random(64) < 0.5, -1.0, 1.0)
    ys = np.empty(64)
    assert _run(X, 63, sg, ys, 1.0, 64) == 64
    assert np.array_equal(ys, _reference(X, 63, sg, 1.0, 64))
    reversed_order = np.array([sum(float(X[i, j]) * sg[j] for j in range(62, -1, -1)) for i in range(64)])
    assert np.allclose(ys, reversed_order, rtol=1e-12) and not np.array_equal(ys, reversed_order)

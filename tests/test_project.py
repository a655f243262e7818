"""rfcheck.engine.project: the ensemble projection kernels equal the plain loops they replace bit
for bit (signed zeros, every column count the chunking splits differently) and check shapes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfcheck.engine.project import column_sqnorms, project


def _bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64).tolist()


def _loop(Wt, u, square):
    out = np.zeros(Wt.shape[1])
    for i in range(Wt.shape[0]):
        out = out + (Wt[i] * Wt[i] if square else u[i] * Wt[i])
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 70), st.integers(1, 140), st.integers(0, 2**31), st.booleans())
def test_kernels_equal_the_loop_bit_for_bit(d, M, seed, zeros):
    """Every ``M`` (wide chunks, single vectors, single columns) and ``d``; with exact zeros and
    negative zeros in ``u`` and ``Wt`` (``+0 + -0 = +0`` as in the loop)."""
    g = np.random.default_rng(seed)
    Wt, u = g.standard_normal((d, M)), g.standard_normal(d)
    if zeros:
        Wt[g.random((d, M)) < 0.3] = -0.0
        u[g.random(d) < 0.3] = -0.0
    out = np.full(M, np.nan)
    project(out, Wt, u)
    assert _bits(out) == _bits(_loop(Wt, u, False))
    column_sqnorms(out, Wt)
    assert _bits(out) == _bits(_loop(Wt, u, True))


def test_kernels_differ_from_a_reordered_sum():
    """Power companion: the sum's order is fixed; a reversed order gives other bits somewhere."""
    g = np.random.default_rng(3)
    Wt, u, out = g.standard_normal((64, 64)) * 10.0 ** g.integers(-8, 8, (64, 64)), g.standard_normal(64), np.empty(64)
    project(out, Wt, u)
    assert _bits(out) != _bits(_loop(Wt[::-1], u[::-1], False))


@pytest.mark.parametrize(("out", "Wt", "u"), [(np.empty(4), np.empty((3, 5)), np.empty(3)),
                                              (np.empty(5), np.empty((3, 5)), np.empty(2)),
                                              (np.empty(5), np.empty((0, 5)), np.empty(0))])
def test_project_checks_shapes(out, Wt, u):
    with pytest.raises(ValueError, match="project: Wt needs shape"):
        project(out, Wt, u)


def test_column_sqnorms_checks_shapes():
    with pytest.raises(ValueError, match="column_sqnorms: Wt needs shape"):
        column_sqnorms(np.empty(4), np.empty((3, 5)))

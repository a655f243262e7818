"""Tests of rfcheck.engine.rng: the generator's law, reproducibility and its Python twin.

Statistical checks use fixed seeds and a per-test false-alarm level ALPHA = 1e-4 (a p-value
below it fails); each law check has a power companion that feeds it a wrong law.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rfcheck.engine import montecarlo, rng

ALPHA = 1e-4  # per-test false-alarm level of every statistical check below
Z_CRIT = stats.norm.isf(ALPHA / 2)  # two-sided z threshold at ALPHA (~3.89)

pytestmark = pytest.mark.mc


def _z_mean(x: np.ndarray, mu: float) -> float:
    return (np.mean(x) - mu) / (np.std(x, ddof=1) / math.sqrt(x.size))


# ----------------------------------------------------------------------------- law
@pytest.mark.parametrize("bulk", [True, False])
def test_normal_ks_and_moments(bulk):
    z = rng.draw_normals(400_000, seed=11, bulk=bulk)
    assert stats.kstest(z, "norm").pvalue > ALPHA
    assert abs(_z_mean(z, 0.0)) < Z_CRIT
    assert abs(_z_mean(z * z, 1.0)) < Z_CRIT
    assert abs(_z_mean(z**4, 3.0)) < Z_CRIT


def test_normal_tail_branch():
    """The ziggurat tail (|z| > r = 4.039 with 1024 layers) has the right mass (binomial z-test
    at ALPHA)."""
    z = rng.draw_normals(2_000_000, seed=12)
    p = 2 * stats.norm.sf(rng._ZR)
    k = np.count_nonzero(np.abs(z) > rng._ZR)
    n = z.size
    assert abs(k - n * p) / math.sqrt(n * p * (1 - p)) < Z_CRIT
    # and beyond 4.5, far into the tail-only region
    p45 = 2 * stats.norm.sf(4.5)
    k45 = np.count_nonzero(np.abs(z) > 4.5)
    assert stats.binomtest(k45, n, p45).pvalue > ALPHA


@pytest.mark.parametrize("n", sorted(rng.ZIGGURAT_EDGES))
def test_ziggurat_edges_rederived(n):
    """``ZIGGURAT_EDGES[n]`` re-derived in mpmath (40 digits): ``v = r f(r) + int_r^inf f`` and,
    after the n - 2 steps ``x <- sqrt(-2 log(v/x + f(x)))`` of the table recursion, the top
    layer ``[0, x_1] x [f(x_1), 1]`` has area ``v``: the residual changes sign within two ulps
    of ``r``.  A wrong edge (r + 1e-9) leaves a residual 1e4 times larger (power)."""
    import mpmath as mp

    r0, v0 = rng.ZIGGURAT_EDGES[n]

    def residual(r):
        with mp.workdps(40):
            r = mp.mpf(r)
            v = r * mp.exp(-r * r / 2) + mp.sqrt(mp.pi / 2) * mp.erfc(r / mp.sqrt(2))
            x = r
            for _ in range(n - 2):
                x = mp.sqrt(-2 * mp.log(v / x + mp.exp(-x * x / 2)))
            return x * (1 - mp.exp(-x * x / 2)) - v, v

    res, v = residual(r0)
    # r0 is a double: its rounding moves v by r^2 f(r) ulp(r) ~ 1.5e-15 v at 1024 layers
    assert abs(v - v0) <= 1e-14 * v0
    # r0 is the root to within two units in the last place: the residual changes sign there
    ulp = math.ulp(r0)
    lo, hi = residual(r0 - 2 * ulp)[0], residual(r0 + 2 * ulp)[0]
    assert lo * hi < 0
    assert abs(residual(r0 + 1e-9)[0]) > 1e4 * abs(res)  # power: a wrong edge is seen


def test_ziggurat_tables_shape():
    """The tables the kernels use: 1024 layers, abscissa widths increasing to r, f = exp(-x^2/2)
    at the layer edges, every acceptance threshold below 2**52."""
    k, w, f, r = rng._ziggurat_tables()
    assert k.size == w.size == f.size == rng.ZIGGURAT_LAYERS == 1 << rng._ZBITS
    x = w[1:] * 2.0**52
    assert np.all(np.diff(x) > 0) and x[-1] == pytest.approx(r, rel=1e-15)
    np.testing.assert_allclose(f[1:], np.exp(-0.5 * x * x), rtol=1e-13)
    assert np.all(k < np.uint64(1 << 52)) and k[1] == 0


def test_normal_power():
    """The same KS check rejects a slightly wrong law (sd 1.02) -- it has power."""
    z = rng.draw_normals(400_000, seed=11) * 1.02
    assert stats.kstest(z, "norm").pvalue < ALPHA


def test_uniform_ks_and_moments():
    u = rng.draw_uniforms(400_000, seed=13)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > ALPHA
    assert abs(_z_mean(u, 0.5)) < Z_CRIT
    assert abs(_z_mean(u * u, 1 / 3)) < Z_CRIT
    assert stats.kstest(u**1.01, "uniform").pvalue < ALPHA  # power


@pytest.mark.parametrize("a", [0.3, 0.5, 1.0, 2.5, 7.5, 32.0])
@pytest.mark.parametrize("bulk", [True, False])
def test_gamma_ks_and_mean(a, bulk):
    g = rng.draw_gammas(100_000, a, seed=14, bulk=bulk)
    assert np.all(g > 0)
    assert stats.kstest(g, stats.gamma(a).cdf).pvalue > ALPHA
    assert abs(_z_mean(g, a)) < Z_CRIT


def test_gamma_power():
    g = rng.draw_gammas(100_000, 32.0, seed=14)
    assert stats.kstest(g, stats.gamma(32.5).cdf).pvalue < ALPHA


@pytest.mark.parametrize("k", [1, 2, 5, 64])
def test_chi_ks(k):
    a, _, _ = rng.gamma_consts(k / 2)
    r = np.sqrt(2.0 * rng.draw_gammas(100_000, a, seed=15))
    assert stats.kstest(r, stats.chi(k).cdf).pvalue > ALPHA
    assert stats.kstest(r, stats.chi(k + 1).cdf).pvalue < ALPHA  # power


def test_squeeze_is_a_lower_bound():
    """Deterministic: whenever the squeeze accepts, Marsaglia-Tsang's exact test accepts."""
    g = np.random.default_rng(0)
    for a in [1.0, 1.5, 2.5, 8.0, 32.0, 512.0]:
        _, dd, c = rng.gamma_consts(a)
        x = np.concatenate([g.standard_normal(20_000), g.uniform(-1 / c, 8, 20_000)])
        u = g.uniform(0, 1, x.size)
        for xi, ui in zip(x, u, strict=True):
            ok, v3 = rng._py_squeeze(float(xi), float(ui), dd, c)
            if ok:
                assert rng._py_exact(float(xi), float(ui), v3, dd), (a, xi, ui)


def test_squeeze_acceptance_rate():
    """The squeeze takes almost every candidate for shape 32 (the bulk path's premise)."""
    _, dd, c = rng.gamma_consts(32.0)
    x = rng.draw_normals(50_000, seed=1)
    u = np.random.default_rng(1).uniform(size=x.size)
    acc = np.mean([rng._py_squeeze(float(a), float(b), dd, c)[0]
                   for a, b in zip(x, u, strict=True)])
    assert acc > 0.995


# ----------------------------------------------------------------------------- streams
def test_same_seed_same_numbers_and_different_seeds_differ():
    a = rng.draw_normals(1000, seed=5)
    assert np.array_equal(a, rng.draw_normals(1000, seed=5))
    assert not np.any(a == rng.draw_normals(1000, seed=6))
    assert not np.any(a == rng.draw_normals(1000, seed=5, stream=1))
    u = rng.draw_uniforms(1000, seed=2**64 - 1)
    assert np.array_equal(u, rng.draw_uniforms(1000, seed=2**64 - 1))


def test_streams_uncorrelated():
    a = rng.draw_normals(200_000, seed=5, stream=0)
    b = rng.draw_normals(200_000, seed=5, stream=1)
    c = rng.draw_normals(200_000, seed=6, stream=0)
    for x, y in [(a, b), (a, c)]:
        r = np.corrcoef(x, y)[0, 1]
        assert abs(r) * math.sqrt(x.size) < Z_CRIT


def test_blocks_and_lanes_get_distinct_states():
    states = set()
    for block in range(50):
        for lane in range(2):
            states.add(rng.block_state(np.uint64(3), np.uint64(7), np.uint64(block), lane))
    assert len(states) == 100


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "1", True, None])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        rng.draw_normals(3, seed=seed)


def test_bad_gamma_shape():
    with pytest.raises(ValueError, match="shape"):
        rng.gamma_consts(0.0)


# ----------------------------------------------------------------------------- Python twin
def test_twin_scalar_streams_bit_identical():
    n = 20_000
    r = rng.PySplitMix(9, 4, 0)
    assert np.array_equal(rng.draw_normals(n, 9, 4, bulk=False), [r.normal() for _ in range(n)])
    r = rng.PySplitMix(9, 4, 0)
    assert np.array_equal(rng.draw_uniforms(n, 9, 4), [r.uniform() for _ in range(n)])
    for a in [0.4, 3.0]:
        _, dd, c = rng.gamma_consts(a)
        r = rng.PySplitMix(9, 4, 0)
        got = rng.draw_gammas(5000, a, 9, 4, bulk=False)
        assert np.array_equal(got, [r.gamma(a, dd, c) for _ in range(5000)])


def test_twin_bulk_streams_bit_identical():
    r = rng.PyRNG(8, 2, 0)
    assert np.array_equal(rng.draw_normals(50_000, 8, 2), r.fill_normals(50_000))
    for a in [0.4, 1.0, 32.0]:
        _, dd, c = rng.gamma_consts(a)
        r = rng.PyRNG(8, 2, 0)
        assert np.array_equal(rng.draw_gammas(20_000, a, 8, 2), r.fill_gammas(20_000, a, dd, c))


def test_bulk_normals_do_take_the_fixup_path():
    """The bulk parity above (50,000 normals of stream (8, 2)) covers the slow branches: its
    main words fail the 1024-layer fast test at the tables' rate, and some reach the tail."""
    r = rng.PyRNG(8, 2, 0)
    words = [r.next_u64() for _ in range(50_000)]
    mant = (1 << 52) - 1
    idx = [w & (rng.ZIGGURAT_LAYERS - 1) for w in words]
    fails = sum(((w >> 11) & mant) >= int(rng._ZK[i]) for w, i in zip(words, idx, strict=True))
    p = float(np.mean(1.0 - np.minimum(rng._ZK / 2.0**52, 1.0)))  # 0.43%
    assert abs(fails - 50_000 * p) < 5 * math.sqrt(50_000 * p)
    tails = sum(((w >> 11) & mant) >= int(rng._ZK[0]) and i == 0
                for w, i in zip(words, idx, strict=True))
    assert tails >= 1


@settings(max_examples=60, deadline=None)
@given(s=st.integers(0, 2**64 - 1), g=st.integers(0, 2**63 - 1), n=st.integers(0, 300))
def test_fill_uniforms_open_equals_the_twin_bit_for_bit(s, g, n):
    """The bulk uniforms (states stepped by ``g`` in a vector loop, wrapping mod 2**64) are the
    twin's repeated ``uniform_open`` draws to the last bit, for any state (``g`` odd, as
    SplitMix64's increments are) and any length (whole vectors and a tail), and the returned
    state is ``s + n g mod 2**64``."""
    g = 2 * g + 1
    r = rng.PySplitMix(0, 0, 0)
    r.s, r.g = s, g
    out = np.empty(n)
    got = rng.fill_uniforms_open((np.uint64(s), np.uint64(g)), out)
    want = [r.uniform_open() for _ in range(n)]
    assert out.view(np.uint64).tolist() == np.array(want, dtype=float).view(np.uint64).tolist()
    assert (int(got[0]), int(got[1])) == ((s + n * g) % 2**64, g) == (r.s, r.g)


def test_bulk_fills_take_plain_int_states():
    """A state of Python ints (int64 where it fits) gives the numbers of its uint64 form."""
    raw = np.empty(rng.RAW_SIZE, dtype=np.uint64)
    state = rng.init_block(np.uint64(1), np.uint64(0), np.uint64(0), raw)
    assert int(state[0]) < 2**63 <= int(state[1])  # Numba types the two ints differently
    raw0 = raw.copy()
    a, b = np.empty(3000), np.empty(3000)
    rng.fill_normals(tuple(int(v) for v in state), a, raw)
    rng.fill_normals((np.uint64(state[0]), np.uint64(state[1])), b, raw0)
    assert np.array_equal(a, b)
    rng.fill_uniforms_open(tuple(int(v) for v in state), a)
    rng.fill_uniforms_open((np.uint64(state[0]), np.uint64(state[1])), b)
    assert np.array_equal(a, b)


# ----------------------------------------------------------------------------- exp
def test_exp_into_accuracy_and_special_values():
    g = np.random.default_rng(3)
    x = np.concatenate([g.uniform(-708, 709, 200_000), g.uniform(-3, 3, 200_000),
                        [0.0, -0.0, 1e-300, -1e-300, -708.0, 709.0, 0.5 * math.log(2)]])
    out = np.empty_like(x)
    montecarlo.exp_into(x, out)
    ref = np.exp(x)
    ulp = np.abs(out - ref) / np.spacing(ref)
    assert ulp.max() <= 2.0  # tolerance: 1 ulp from the polynomial/reduction + 1 from np.exp
    special = np.array([709.8, 710.0, 1e6, np.inf, -745.2, -800.0, -np.inf, np.nan])
    out = np.empty_like(special)
    montecarlo.exp_into(special, out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, np.exp(special))
    assert all(montecarlo._py_exp(float(v)) == o or (math.isnan(v) and math.isnan(o))
               for v, o in zip(special, out, strict=True))


def test_exp_work_passes_equal_the_one_pass_twin_with_specials_mixed_in():
    """exp_work's three passes (scratch r, kf) give the one-pass twin's bits element by element,
    with out-of-range and non-finite arguments interleaved at odd positions (the libm pass),
    on arrays whose lengths are not multiples of the SIMD width; the scratch may hold garbage."""
    g = np.random.default_rng(8)
    for n in (0, 1, 3, 7, 64, 131):
        x = g.uniform(-750, 750, n)
        x[1::5] = np.resize([np.inf, -np.inf, np.nan, 1e300, -1e300], x[1::5].shape)
        out = np.full(n, -1.0)
        r, kf = np.full(n, np.nan), np.full(n, 1e308)
        montecarlo.exp_work(x, out, r, kf)
        want = [montecarlo._py_exp(float(v)) for v in x]
        got, want = np.asarray(out), np.asarray(want)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        assert np.array_equal(got[ok].view(np.uint64), want[ok].view(np.uint64)), n
    for short in ((np.empty(3), np.empty(4), np.empty(4)), (np.empty(4), np.empty(3), np.empty(4)),
                  (np.empty(4), np.empty(4), np.empty(3))):
        with pytest.raises(ValueError, match="at least len"):
            montecarlo.exp_work(np.zeros(4), *short)
    with pytest.raises(ValueError, match="at least len"):
        montecarlo.exp_into(np.zeros(4), np.empty(3))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 9000), min_size=1, max_size=4), st.integers(0, 2**63 - 1))
def test_consecutive_bulk_fills_match_the_twin(sizes, seed):
    """Fills of any lengths (within a chunk, across chunks and across groups of ``GROUP``
    chunks, whose fix-ups wait until the group's fast pass is done) continue one stream: each
    equals the twin's next request of that length, and the fallback generator in ``raw`` too."""
    raw = np.empty(rng.RAW_SIZE, dtype=np.uint64)
    state = rng.init_block(np.uint64(seed), np.uint64(3), np.uint64(0), raw)
    twin = rng.PyRNG(seed, 3, 0)
    for n in sizes:
        out = np.empty(n)
        state = rng.fill_normals(tuple(np.uint64(v) for v in state), out, raw)
        assert np.array_equal(out, twin.fill_normals(n))
    assert tuple(int(v) for v in raw[rng.CHUNK:rng.CHUNK + 2]) == (twin.fb.s, twin.fb.g)

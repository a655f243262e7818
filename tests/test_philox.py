"""Tests of rfcheck.engine.philox: Philox4x32-10 against Random123's known answers, its bulk
normal fill's law, reproducibility, per-block independence and bit parity with its Python twin.

Statistical checks use fixed seeds and the false-alarm level ALPHA = 1e-4 of tests/test_rng.py,
each law check with a power companion that feeds it a wrong law.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from rfcheck.engine import philox, rng

ALPHA = 1e-4
Z_CRIT = stats.norm.isf(ALPHA / 2)

pytestmark = pytest.mark.mc

#: Random123's known-answer vectors for philox4x32_10 (its tests/kat_vectors): counter, key, output
KAT = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
       ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
       ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]


@njit
def _philox(c0, c1, c2, c3, k0, k1):
    return philox.philox4x32_10(c0, c1, c2, c3, k0, k1)


@pytest.mark.parametrize(("ctr", "key", "out"), KAT)
def test_known_answers_kernel_and_twin(ctr, key, out):
    assert philox.py_philox4x32_10(ctr, key) == out
    assert tuple(int(v) for v in _philox(*(np.uint64(v) for v in ctr + key))) == out


def _z_mean(x: np.ndarray, mu: float) -> float:
    return (np.mean(x) - mu) / (np.std(x, ddof=1) / math.sqrt(x.size))


def test_normal_ks_moments_and_tail():
    z = philox.draw_normals(2_000_000, seed=11)
    assert stats.kstest(z, "norm").pvalue > ALPHA
    assert abs(_z_mean(z, 0.0)) < Z_CRIT
    assert abs(_z_mean(z * z, 1.0)) < Z_CRIT
    assert abs(_z_mean(z**4, 3.0)) < Z_CRIT
    p = 2 * stats.norm.sf(rng._ZR)  # the ziggurat tail, finished on the fallback generator
    k = np.count_nonzero(np.abs(z) > rng._ZR)
    assert abs(k - z.size * p) / math.sqrt(z.size * p * (1 - p)) < Z_CRIT


def test_normal_power():
    """The KS check above rejects a slightly wrong law (scale 1.01) from the same draws."""
    z = philox.draw_normals(2_000_000, seed=11)
    assert stats.kstest(1.01 * z, "norm").pvalue < ALPHA


def test_same_seed_same_numbers_blocks_and_streams_differ_and_uncorrelated():
    a = philox.draw_normals(200_000, seed=5)
    assert np.array_equal(a, philox.draw_normals(200_000, seed=5))
    b = philox.draw_normals(200_000, seed=5, stream=1)
    c = philox.draw_normals(200_000, seed=6)
    for y in (b, c):
        assert not np.any(a[:1000] == y[:1000])
        assert abs(np.corrcoef(a, y)[0, 1]) * math.sqrt(a.size) < Z_CRIT
    keys = {int(philox.block_key(np.uint64(3), np.uint64(7), np.uint64(blk))) for blk in range(200)}
    assert len(keys) == 200  # a bijective hash: distinct blocks, distinct keys
    main = {int(rng.block_state(np.uint64(3), np.uint64(7), np.uint64(blk), 0)[0]) for blk in range(200)}
    assert not keys & main


def test_twin_bulk_normals_bit_identical_and_fixups_covered():
    """Kernel and twin agree to the last bit over 50,000 normals (and an odd-length request),
    and those draws include ziggurat fix-ups on the fallback generator, tails included."""
    assert np.array_equal(philox.draw_normals(50_000, 8, 2), philox.PyPhilox(8, 2, 0).fill_normals(50_000))
    assert np.array_equal(philox.draw_normals(129, 8, 2), philox.PyPhilox(8, 2, 0).fill_normals(129))
    words = philox.PyPhilox(8, 2, 0).words(25_000)
    mant = (1 << 52) - 1
    fails = [w for w in words if ((w >> 11) & mant) >= rng._ZK_INT[w & 0x3FF]]
    p = float(np.mean(1.0 - np.minimum(rng._ZK / 2.0**52, 1.0)))
    assert abs(len(fails) - 50_000 * p) < 5 * math.sqrt(50_000 * p)
    assert any(w & 0x3FF == 0 for w in fails)  # the tail layer


def test_state_advances_by_calls_and_split_requests_start_fresh_calls():
    raw = np.empty(rng.RAW_SIZE, dtype=np.uint64)
    st = philox.init_block(np.uint64(1), np.uint64(0), np.uint64(0), raw)
    out = np.empty(129)
    st2 = philox.fill_normals(st, out, raw)
    assert int(st2[0]) == int(st[0]) and int(st2[1]) == 65  # 32 + 32 + 1 calls
    tw = philox.PyPhilox(1, 0, 0)
    assert np.array_equal(out, tw.fill_normals(129)) and tw.j == 65

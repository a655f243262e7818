"""Tests of rfcheck.engine.ars: the software AES round against FIPS-197, ARS against Random123.jl's
known answers, the compiled fill against its Python twin bit for bit (both AES kernels where the CPU
runs them), the normal law, reproducibility and per-block independence.

Statistical checks use fixed seeds and the false-alarm level ALPHA = 1e-4 of tests/test_rng.py,
the law check with a power companion that feeds it a wrong law.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from numba import njit
from numba.extending import intrinsic
from scipy import stats

from rfcheck.engine import ars, philox, rng
from rfcheck.engine.counter_normals import chunk_candidates
from rfcheck.engine.simd_ziggurat import kernel_call

ALPHA = 1e-4
Z_CRIT = stats.norm.isf(ALPHA / 2)

needs_aes = pytest.mark.skipif(ars.AES is None, reason="no AES instructions on this CPU target")


def _aes128(plain: bytes, key: bytes) -> bytes:
    """FIPS-197 AES-128 (its key expansion, sec 5.2) from the module's round: the reference that
    checks SubBytes, ShiftRows, MixColumns and the byte order of :func:`ars.py_aes_round`."""
    rcon = [1, 2, 4, 8, 16, 32, 64, 128, 27, 54]
    w = [list(key[4 * i:4 * i + 4]) for i in range(4)]
    for i in range(4, 44):
        t = list(w[i - 1])
        if i % 4 == 0:
            t = [ars._SBOX[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon[i // 4 - 1]
        w.append([a ^ b for a, b in zip(w[i - 4], t, strict=True)])
    rks = [int.from_bytes(bytes(b for word in w[4 * r:4 * r + 4] for b in word), "little") for r in range(11)]
    x = int.from_bytes(plain, "little") ^ rks[0]
    for r in range(1, 11):
        x = ars.py_aes_round(x, rks[r], last=r == 10)
    return x.to_bytes(16, "little")


def test_aes_round_gives_fips197_example():
    """FIPS-197 appendix C.1: AES-128 of 00112233...ff under the key 000102...0f."""
    out = _aes128(bytes.fromhex("00112233445566778899aabbccddeeff"), bytes(range(16)))
    assert out.hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"
    assert _aes128(bytes(16), bytes(range(16))).hex() != out.hex()


def test_sbox_is_the_aes_sbox():
    assert ars._SBOX[0x00] == 0x63 and ars._SBOX[0x53] == 0xED and ars._SBOX[0xFF] == 0x16
    assert sorted(ars._SBOX) == list(range(256))


#: Random123.jl's known answers for ARS1x{R} (its test/ars.jl): counter (incremented once before
#: the call there), key, output; R = 1, 2, 3, 10
_CTR = (0x9799B5D54F7B9227 << 64 | 0xB47607190D0DFEFB) + 1
_KEY = 0x07B8E4B6AA98EC24 << 64 | 0x5A7DA274D3B8146A
KAT = [(1, 0x1A0B14C707B64224E548EF12331396EF), (2, 0x3CED8E0970690F718336318BA22E8AE1),
       (3, 0xB6621A8B006319E8 << 64 | 0x67C841642C32FC19), (10, 0xAC35DF44F996ED82 << 64 | 0x4E287697BAD2F9A2)]


@pytest.mark.parametrize(("rounds", "out"), KAT)
def test_ars_known_answers(rounds, out):
    assert ars.py_ars(_CTR, _KEY, rounds) == out
    assert ars.py_ars(_CTR + 1, _KEY, rounds) != out


def _kernel(rounds: int, unit: str):
    @intrinsic
    def k(typingctx, klo, khi, j, ncand, out, start, nwords, wk, words):
        return kernel_call(ars.kernel_builder(rounds, unit), out, (wk, words), start, nwords, scalars=4)

    @njit(cache=False, error_model="numpy")
    def run(klo, khi, j, ncand, out, start, nwords, words):
        return k(klo, khi, j, ncand, out, start, nwords, rng._ZWK, words)

    return run


_UNITS = {None: [], "aes": ["aes"], "vaes": ["aes", "vaes"]}[ars.AES]


@needs_aes
@pytest.mark.parametrize("unit", _UNITS)
@pytest.mark.parametrize("rounds", ars.ROUNDS)
def test_both_kernels_give_the_twins_words_and_candidates(unit, rounds):
    """Each AES kernel this CPU runs: 4 nwords calls' words equal the twin's, and the candidates
    equal the scalar chunk loop's, for a key and counter past 2**32 and a block offset in out."""
    run = _kernel(rounds, unit)
    klo, khi, j = 0x0123456789ABCDEF, 0xFEDCBA9876543210, (1 << 40) + 5
    twin = ars.PyARS(0, 0, 0, rounds)
    twin.key = (klo, khi)
    twin.j = j
    for nwords, ncand in ((8, 8), (3, 2), (1, 0), (0, 0)):
        words = np.full(72, np.nan)  # 8 entries past the largest write: a store beyond shows
        out = np.full(3 + 64, np.nan)
        mask = run(np.uint64(klo), np.uint64(khi), np.uint64(j), np.uint64(ncand), out, 3, nwords, words)
        want = ars.PyARS.words(twin, 4 * nwords)
        twin.j = j
        assert words.view(np.uint64)[:8 * nwords].tolist() == want
        assert np.isnan(words[8 * nwords:]).all()
        ref = np.full(64, np.nan)
        rmask = chunk_candidates(words.view(np.uint64).copy(), ref, 0, 0, 8 * ncand)
        assert int(mask) == int(rmask)
        assert np.array_equal(out[3:3 + 8 * ncand].view(np.uint64), ref[:8 * ncand].view(np.uint64))
        assert np.isnan(out[3 + 8 * ncand:]).all() and np.isnan(out[:3]).all()


@needs_aes
@pytest.mark.parametrize("rounds", ars.ROUNDS)
def test_fill_equals_twin_bit_for_bit_with_fixups(rounds):
    """The compiled fill and the twin agree over lengths with every tail (m mod 8, odd m) and over
    20,000 normals, whose fix-ups on the fallback generator include the tail layer."""
    for n in (1, 2, 7, 8, 9, 37, 63, 64, 65, 129):
        assert np.array_equal(ars.draw_normals(n, 8, 2, rounds), ars.PyARS(8, 2, 0, rounds).fill_normals(n)), n
    twin = ars.PyARS(8, 2, 0, rounds)
    assert np.array_equal(ars.draw_normals(20_000, 8, 2, rounds), twin.fill_normals(20_000))
    twin.j = 0
    words = twin.words(10_000)  # the same 10,000 calls again
    mant = (1 << 52) - 1
    fails = [w for w in words if ((w >> 11) & mant) >= rng._ZK_INT[w & 0x3FF]]
    p = float(np.mean(1.0 - np.minimum(rng._ZK / 2.0**52, 1.0)))
    assert abs(len(fails) - 20_000 * p) < 5 * math.sqrt(20_000 * p)
    assert any(w & 0x3FF == 0 for w in fails)  # the tail layer


#: sha256 (first 32 hex digits) of the bytes of draw_normals(1001, seed=3, stream=1): the streams as
#: first written (2026-11-28; Philox's equal to its stream before its fill moved onto
#: rfcheck.engine.counter_normals), so that a change common to a kernel and its twin shows
STREAM_DIGESTS = {"philox": "fbb4c07eb8b2693d52a615dc7a7b06b8", 5: "4d27df756c4174bb3795e0e98b0d5747",
                  7: "1d749405e362c5e04b071e33c8d9d070"}


def _digest(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x, dtype=np.float64).tobytes()).hexdigest()[:32]


def test_philox_stream_is_unchanged():
    assert _digest(philox.draw_normals(1001, seed=3, stream=1)) == STREAM_DIGESTS["philox"]


@needs_aes
@pytest.mark.parametrize("rounds", ars.ROUNDS)
def test_ars_streams_are_as_first_written_and_consecutive_fills_match_the_twin(rounds):
    assert _digest(ars.draw_normals(1001, 3, 1, rounds)) == STREAM_DIGESTS[rounds]
    buf, twin = np.empty(11), ars.PyARS(1, 2, 0, rounds)
    last = [twin.fill_normals(11) for _ in range(3)][-1]  # odd requests: each starts at a fresh call
    x0 = ars.fill_normals_repeat(np.uint64(1), np.uint64(2), buf, 3, rounds)
    assert np.array_equal(buf, last) and x0 == last[0] and twin.j == 18


@needs_aes
def test_state_advances_by_calls_and_rounds_differ():
    raw = np.empty(rng.RAW_SIZE, dtype=np.uint64)
    st = ars.init_block(np.uint64(1), np.uint64(0), np.uint64(0), raw)
    out = np.empty(129)
    st2 = ars.fill_normals(st, out, raw, 7)
    assert tuple(int(v) for v in st2[:2]) == tuple(int(v) for v in st[:2]) and int(st2[2]) == 65  # 32 + 32 + 1
    assert not np.array_equal(ars.draw_normals(100, 1, 0, 5), ars.draw_normals(100, 1, 0, 7))
    with pytest.raises(ValueError, match="rounds must be 5 or 7"):
        ars.fill_normals(st, out, raw, 6)


@needs_aes
@pytest.mark.mc
@pytest.mark.parametrize("rounds", ars.ROUNDS)
def test_normal_ks_moments_tail_and_power(rounds):
    z = ars.draw_normals(2_000_000, 11, 0, rounds)
    assert stats.kstest(z, "norm").pvalue > ALPHA
    for k, mu in ((1, 0.0), (2, 1.0), (4, 3.0)):
        x = z**k
        assert abs((x.mean() - mu) / (x.std(ddof=1) / math.sqrt(x.size))) < Z_CRIT
    p = 2 * stats.norm.sf(rng._ZR)
    k = np.count_nonzero(np.abs(z) > rng._ZR)
    assert abs(k - z.size * p) / math.sqrt(z.size * p * (1 - p)) < Z_CRIT
    assert stats.kstest(1.01 * z, "norm").pvalue < ALPHA  # the check's power: a 1% wrong scale fails


@needs_aes
@pytest.mark.mc
def test_same_seed_same_numbers_blocks_and_streams_differ_and_uncorrelated():
    a = ars.draw_normals(200_000, seed=5)
    assert np.array_equal(a, ars.draw_normals(200_000, seed=5))
    for y in (ars.draw_normals(200_000, seed=5, stream=1), ars.draw_normals(200_000, seed=6)):
        assert not np.any(a[:1000] == y[:1000])
        assert abs(np.corrcoef(a, y)[0, 1]) * math.sqrt(a.size) < Z_CRIT


def test_invalid_rounds_and_units():
    with pytest.raises(ValueError, match="rounds must be one of"):
        ars.draw_normals(10, rounds=6)
    assert ars.aes_unit("+sse2,+avx2,-aes,+vaes") is None and ars.aes_unit("+neon,+aes,+crypto") is None
    with pytest.raises(ValueError, match="unit must be"):
        ars.kernel_builder(5, "neon")

"""The engines' parallel loop (:mod:`rfcheck.engine.parallel`): every job once, on the thread
count Numba is set to, errors passed on, a forked child's pool started afresh, and the engines'
numbers the same whatever the thread count and the chunking."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from rfcheck import features
from rfcheck.engine import discrete_engine as de
from rfcheck.engine import montecarlo as mc
from rfcheck.engine import parallel


@njit(nogil=True, cache=False)
def _count(out, lo, hi):
    for j in range(lo, hi):
        out[j] += 1


@njit(nogil=True, cache=False)
def _fail_at(bad, out, lo, hi):
    for j in range(lo, hi):
        if j == bad:
            raise ValueError("job failed")
        out[j] += 1


@pytest.fixture
def threads(monkeypatch):
    """Set Numba's thread count for a test, restored after it; work of any size is shared
    between the threads (``PARALLEL_MIN_S = 0``)."""
    saved = numba.get_num_threads()
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 0.0)
    yield numba.set_num_threads
    numba.set_num_threads(saved)


_FINE_CALLS: list[int] = []


def _one_job_chunks(n_jobs, threads):
    """Chunks of one job each, in place of the guided ones (recording that it was used)."""
    _FINE_CALLS.append(n_jobs)
    return list(range(n_jobs + 1))


@given(st.integers(0, 100_000), st.integers(1, 64))
def test_chunk_bounds_are_guided(n_jobs, threads):
    """Contiguous chunks covering the jobs, each ``ceil(left / (2 threads))`` of the jobs left:
    never growing, single jobs at the end (when there are more jobs than twice the threads), and
    about ``2 threads ln(n_jobs)`` of them."""
    b = parallel.chunk_bounds(n_jobs, threads)
    assert b[0] == 0 and b[-1] == n_jobs
    sizes = np.diff(b)
    left = n_jobs - np.array(b[:-1])
    assert np.array_equal(sizes, -(-left // (2 * threads)))
    if n_jobs:
        assert sizes.min() >= 1 and np.all(np.diff(sizes) <= 0)
        assert len(sizes) <= 2 * threads * (np.log(n_jobs) + 1) + 1
    if n_jobs > 2 * threads:
        assert sizes[-1] == 1


@given(st.integers(0, 10_000), st.integers(1, 100))
def test_n_blocks_is_the_ceiling(n, per):
    k = parallel.n_blocks(n, per)
    assert (k - 1) * per < n <= k * per or (n == 0 and k == 0)


@pytest.mark.parametrize("bad", [(-1, 2), (3, 0)])
def test_chunk_bounds_refuses_bad_counts(bad):
    with pytest.raises(ValueError, match="n_jobs >= 0 and threads >= 1"):
        parallel.chunk_bounds(*bad)


def test_n_blocks_and_run_jobs_refuse_negative_counts():
    with pytest.raises(ValueError, match="per_block >= 1"):
        parallel.n_blocks(5, 0)
    with pytest.raises(ValueError, match="n_jobs >= 0"):
        parallel.run_jobs(_count, -1, np.zeros(1, dtype=np.int64))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3000), st.sampled_from([1, 2]))
def test_every_job_runs_exactly_once(n_jobs, nt):
    saved, saved_min = numba.get_num_threads(), parallel.PARALLEL_MIN_S
    numba.set_num_threads(min(nt, numba.config.NUMBA_NUM_THREADS))
    parallel.PARALLEL_MIN_S = 0.0
    try:
        out = np.zeros(n_jobs, dtype=np.int64)
        parallel.run_jobs(_count, n_jobs, out)
    finally:
        numba.set_num_threads(saved)
        parallel.PARALLEL_MIN_S = saved_min
    assert (out == 1).all()


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_chunks_run_on_as_many_threads_as_numba_is_set_to(threads):
    seen: dict[int, int] = {}
    lock = threading.Lock()

    def kernel(lo, hi):
        with lock:
            seen[threading.get_ident()] = seen.get(threading.get_ident(), 0) + hi - lo
        time.sleep(0.02)  # releases the GIL, as a nogil kernel does

    threads(2)
    parallel.run_jobs(kernel, 64)
    assert len(seen) == 2 and sum(seen.values()) == 64
    seen.clear()
    threads(1)
    parallel.run_jobs(kernel, 64)
    assert list(seen) == [threading.get_ident()] and seen[threading.get_ident()] == 64


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_small_work_stays_in_the_calling_thread(threads, monkeypatch):
    """Work estimated (from the first job) below PARALLEL_MIN_S is not handed to a thread."""
    seen = set()

    def kernel(lo, hi):
        seen.add(threading.get_ident())
        time.sleep(0.002 * (hi - lo))

    threads(2)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 1.0)  # 40 jobs of 2 ms: below it
    parallel.run_jobs(kernel, 40)
    assert seen == {threading.get_ident()}
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 0.01)  # above it
    parallel.run_jobs(kernel, 40)
    assert len(seen) == 2


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_a_failing_chunk_raises_after_the_others_stop(threads):
    threads(2)
    out = np.zeros(1000, dtype=np.int64)
    with pytest.raises(ValueError, match="job failed"):
        parallel.run_jobs(_fail_at, 1000, 500, out)
    assert out[500] == 0 and set(np.unique(out)) <= {0, 1}
    out[:] = 0
    parallel.run_jobs(_fail_at, 1000, -1, out)  # the pool still works after a failure
    assert (out == 1).all()


_FORK_SCRIPT = """
import multiprocessing, threading, time
import numba
from rfcheck.engine import parallel

def kernel(seen, lo, hi):
    seen.add(threading.get_ident())
    time.sleep(0.01 * (hi - lo))  # releases the GIL, as a nogil kernel does

def child(q):
    seen = set()
    parallel.run_jobs(kernel, 40, seen)
    q.put(len(seen))

numba.set_num_threads(2)
parallel.PARALLEL_MIN_S = 0.0
seen = set()
parallel.run_jobs(kernel, 40, seen)  # the parent's pool exists, its worker idle
assert len(seen) == 2, seen
ctx = multiprocessing.get_context("fork")
q = ctx.Queue()
p = ctx.Process(target=child, args=(q,))
p.start()
p.join(60)
if p.is_alive():
    p.kill()
    raise SystemExit("the forked child hung")
print(q.get(timeout=5))
"""


@pytest.mark.skipif(sys.platform != "linux" or numba.config.NUMBA_NUM_THREADS < 2,
                    reason="fork on Linux, two Numba threads")
def test_a_forked_child_starts_its_own_pool():
    """A child forked after the pool started uses two threads too (the parent's pool threads do
    not exist in the child, and its executor would count the parent's idle worker as its own).
    Run in a fresh interpreter: this one may hold threads that forbid ``fork`` (JAX's)."""
    r = subprocess.run([sys.executable, "-c", _FORK_SCRIPT], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["2"]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
@pytest.mark.parametrize("path", mc.PATHS)
@pytest.mark.parametrize("coupling", ["iid", "orf", "simrf+"])
def test_simulate_is_the_same_whatever_the_threads_and_chunks(threads, monkeypatch, path, coupling):
    """The numbers of a run with one thread, two threads, and two threads in chunks of one job."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2, 3, 8)) * 0.3
    prod = features.positive_product(x, y)
    threads(1)
    one = mc.simulate(prod, 12, 700, coupling=coupling, path=path, seed=9)
    threads(2)
    two = mc.simulate(prod, 12, 700, coupling=coupling, path=path, seed=9)
    monkeypatch.setattr(parallel, "chunk_bounds", _one_job_chunks)
    _FINE_CALLS.clear()
    fine = mc.simulate(prod, 12, 700, coupling=coupling, path=path, seed=9)
    assert _FINE_CALLS  # the one-job chunks were used
    assert np.array_equal(one, two) and np.array_equal(one, fine)
    ref = mc.simulate_reference(prod, 12, 3, coupling=coupling, path=path, seed=9)
    assert np.array_equal(one[:, :3], ref)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_discrete_engine_is_the_same_whatever_the_threads_and_chunks(threads, monkeypatch):
    x, y = np.array([0.2, -0.1, 0.3]), np.array([0.1, 0.2, -0.2])
    threads(1)
    one = de.simulate(x, y, "poisson", 0.4, 8, 700, seed=2), de.draw_counts("geometric", 0.6, 700, M=3, d=4, seed=2)
    threads(2)
    monkeypatch.setattr(parallel, "chunk_bounds", _one_job_chunks)
    _FINE_CALLS.clear()
    two = de.simulate(x, y, "poisson", 0.4, 8, 700, seed=2), de.draw_counts("geometric", 0.6, 700, M=3, d=4, seed=2)
    assert _FINE_CALLS  # the one-job chunks were used
    assert all(np.array_equal(a, b) for a, b in zip(one, two, strict=True))


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_callers_on_several_threads_get_their_own_numbers(threads):
    """Simulations started from several Python threads at once share the pool and each gets
    the numbers it gets alone (a ``prange`` kernel on Numba's workqueue layer aborts the process
    when two threads launch it at once)."""
    threads(2)
    rng = np.random.default_rng(3)
    prods = [features.positive_product(*(rng.normal(size=(2, 1, 8)) * 0.3)) for _ in range(4)]
    alone = [mc.simulate(p, 16, 3000, coupling="orf", path="ensemble", seed=i) for i, p in enumerate(prods)]
    got: list = [None] * 4

    def one(i):
        got[i] = mc.simulate(prods[i], 16, 3000, coupling="orf", path="ensemble", seed=i)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert all(np.array_equal(a, b) for a, b in zip(alone, got, strict=True))


def test_real_and_complex_products_share_one_compiled_kernel():
    """The arrays ``simulate`` hands its kernels are writable whatever the product (``np.imag``
    of a real ``log_c`` is read-only, and a read-only array is another type to Numba: a real and a
    complex product compiled the kernel twice, ~5 s each on a fresh install)."""
    from numba import types

    x, y = np.array([0.3, 0.4, 0.1]), np.array([0.2, -0.1, 0.5])
    for prod in (features.positive_product(x, y), features.trig_product(x, y)):
        for path in mc.PATHS:
            mc.simulate(prod, 8, 64, coupling="iid", path=path, seed=0)
    for kernel in (mc._projection_jobs, mc._ensemble_jobs):
        arrays = [a for sig in kernel.signatures for a in sig if isinstance(a, types.Array)]
        assert arrays and all(a.mutable for a in arrays), kernel.signatures

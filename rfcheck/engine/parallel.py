"""The engines' parallel loop: independent jobs (blocks of trials) on Numba's thread count.

Every engine splits its trials into blocks of :data:`rfcheck.engine.montecarlo.TRIALS_PER_BLOCK`,
each with its own generator seeded from ``(seed, stream, block)``, so a block's numbers do not
depend on which thread runs it or in what order.  :func:`run_jobs` runs a compiled *range
kernel* -- a ``nogil`` Numba function whose last two arguments are a job range ``lo, hi`` --
over ``[0, n_jobs)`` in contiguous chunks on ``numba.get_num_threads()`` threads: the calling
thread and workers of a process-wide thread pool, each taking the next chunk when it finishes
one (dynamic scheduling, as the work per block varies with rejections), the chunks shrinking
towards the end (guided, :func:`chunk_bounds`) so that the threads finish together.

Why not ``prange``: a ``parallel=True`` Numba function links the whole compiled block function
into its gufunc and optimises it again (7-17 s per kernel, for a loop over blocks).  A range
kernel is compiled once, as any other function: with a cold Numba cache the first
``simulate(..., coupling="orf")`` went from 20-21 s to 13.5 s on an AVX2 machine, the first ORF
ensemble call from 41-42 s to 23-24 s.  The numbers are the same bit for bit (blocks are
independent; ``tests/test_parallel.py``).  Unlike a ``prange`` kernel under Numba's
``workqueue`` threading layer, :func:`run_jobs` may be called from several Python threads at once.

``numba.set_num_threads`` sets the thread count as it did for ``prange`` (the bench's one-thread
rounds use it); with one thread, one job, or less work than :data:`PARALLEL_MIN_S`, the kernel
runs in the calling thread alone.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba

__all__ = ["PARALLEL_MIN_S", "chunk_bounds", "n_blocks", "run_jobs"]

PARALLEL_MIN_S = 2e-4
"""Work below which :func:`run_jobs` stays in the calling thread: the rest of the jobs, estimated
from the first one's time, must take at least this long (seconds) on one thread.  Handing work
to a sleeping thread and being woken again costs ~80 us on a virtual machine (two wake-ups;
``prange``'s threads spin instead), so below ~200 us of work a second thread does not pay."""

_pool: ThreadPoolExecutor | None = None
_pool_pid = -1
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The process-wide worker pool, created again in a forked child: a pool's threads do not
    survive ``fork``, and the copied executor would count the parent's idle worker as its own
    and start none (the caller would run every chunk alone)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max_workers=max(1, numba.config.NUMBA_NUM_THREADS - 1),
                                       thread_name_prefix="rfcheck-engine")
            _pool_pid = os.getpid()
        return _pool


def n_blocks(n_trials: int, per_block: int) -> int:
    """Number of blocks of ``per_block`` trials that hold ``n_trials`` (the last may be short).

    Parameters
    ----------
    n_trials : int
        Number of trials (``>= 0``).
    per_block : int
        Trials per block (``>= 1``).

    Returns
    -------
    int
        ``ceil(n_trials / per_block)``.

    Raises
    ------
    ValueError
        If ``n_trials < 0`` or ``per_block < 1``.

    Examples
    --------
    >>> from rfcheck.engine.parallel import n_blocks
    >>> n_blocks(128, 64), n_blocks(129, 64), n_blocks(1, 64)
    (2, 3, 1)
    """
    if n_trials < 0 or per_block < 1:
        raise ValueError(f"n_blocks needs n_trials >= 0 and per_block >= 1; got {n_trials}, {per_block}")
    return -(-n_trials // per_block)


def chunk_bounds(n_jobs: int, threads: int) -> list[int]:
    """Bounds ``b_0 = 0 < b_1 < ... < b_k = n_jobs`` of guided chunks for ``threads`` threads:
    each chunk holds ``ceil(left / (2 threads))`` of the ``left`` jobs not yet in a chunk, so the
    chunks shrink geometrically (by ``1 - 1/(2 threads)``) down to single jobs.

    Taken in order by threads that each take the next chunk when done, the large first chunks
    keep the number of chunks (and their Python dispatch, ~10 us each) small --
    about ``2 threads ln(n_jobs)`` -- and the small last ones let the threads finish within
    about one job of each other.  Equal chunks (eight per thread until 2026-11-28) could leave a
    thread idle for up to one chunk, an eighth of its share, at the end of a call.  Measured on
    two AMD Zen 3 threads (``results/bench/2026-11-28-clock-zen3/ab_guided_chunks.py``, 63 paired
    rounds per workload, the order alternating): with guided chunks, calls of iid and ORF
    projection trials ran 0.99x-1.06x as fast as with equal ones (paired medians of six runs;
    their median 1.05x), ORF ensemble calls the same (0.98x-1.01x); single rounds spread by
    +-40% on that virtual machine.

    Parameters
    ----------
    n_jobs : int
        Number of jobs (``>= 0``).
    threads : int
        Number of threads that will take the chunks (``>= 1``).

    Returns
    -------
    list of int
        The bounds (``[0]`` when ``n_jobs == 0``).

    Raises
    ------
    ValueError
        If ``n_jobs < 0`` or ``threads < 1``.

    Examples
    --------
    >>> from rfcheck.engine.parallel import chunk_bounds
    >>> chunk_bounds(20, 2), chunk_bounds(3, 1), chunk_bounds(0, 2)
    ([0, 5, 9, 12, 14, 16, 17, 18, 19, 20], [0, 2, 3], [0])
    """
    if n_jobs < 0 or threads < 1:
        raise ValueError(f"chunk_bounds needs n_jobs >= 0 and threads >= 1; got {n_jobs}, {threads}")
    bounds = [0]
    while bounds[-1] < n_jobs:
        left = n_jobs - bounds[-1]
        bounds.append(bounds[-1] - (-left // (2 * threads)))
    return bounds


def run_jobs(kernel: Callable[..., None], n_jobs: int, *args: Any) -> None:
    """Run ``kernel(*args, lo, hi)`` over the jobs ``[0, n_jobs)`` on Numba's thread count.

    Parameters
    ----------
    kernel : callable
        A range kernel: a Numba function compiled with ``nogil=True`` (so that the threads run
        at once) that runs the jobs ``lo <= job < hi`` and writes only their own outputs.
    n_jobs : int
        Number of jobs (``>= 0``).
    *args
        The kernel's arguments before ``lo, hi``.

    Raises
    ------
    ValueError
        If ``n_jobs < 0``.
    Exception
        The first exception a chunk raised, after every chunk taken has finished (no chunk is
        taken after an exception or an interrupt).

    Notes
    -----
    With ``t = min(numba.get_num_threads(), n_jobs)`` threads, the calling thread runs job 0
    alone and times it; if the other jobs would take less than :data:`PARALLEL_MIN_S` at that
    rate, it runs them too.  Otherwise they are cut into guided chunks for ``t`` threads
    (:func:`chunk_bounds`: large first, single jobs last); the calling thread and ``t - 1`` pool
    workers each take the next chunk until none is left, and the call returns when the chunks
    taken have finished (a worker that wakes later finds none and leaves).
    ``t <= 1`` runs ``kernel(*args, 0, n_jobs)`` in the calling thread.

    Examples
    --------
    >>> import numpy as np
    >>> from numba import njit
    >>> from rfcheck.engine.parallel import run_jobs
    >>> @njit(nogil=True)
    ... def squares(out, lo, hi):
    ...     for j in range(lo, hi):
    ...         out[j] = j * j
    >>> out = np.zeros(100, dtype=np.int64)
    >>> run_jobs(squares, 100, out)
    >>> bool((out == np.arange(100) ** 2).all())
    True
    """
    if n_jobs < 0:
        raise ValueError(f"run_jobs needs n_jobs >= 0; got {n_jobs}")
    t = min(numba.get_num_threads(), n_jobs)
    if t <= 1:
        if n_jobs > 0:
            kernel(*args, 0, n_jobs)
        return
    t0 = time.perf_counter()
    kernel(*args, 0, 1)
    if (time.perf_counter() - t0) * (n_jobs - 1) < PARALLEL_MIN_S:
        kernel(*args, 1, n_jobs)
        return
    run = _Run(kernel, args, [1 + b for b in chunk_bounds(n_jobs - 1, t)])
    pool = _executor()
    for _ in range(t - 1):
        pool.submit(run.help)
    try:
        while (i := run.take(False)) is not None:
            run.chunk(i)
    except BaseException:
        run.stop()
        raise
    finally:
        run.wait_helpers()
    if run.error is not None:
        raise run.error


class _Run:
    """One call of :func:`run_jobs`: its chunks, handed out one at a time under a lock.

    The caller waits only for chunks that pool workers have *taken* -- not for workers still
    waking up: a worker that wakes after the last chunk was taken finds nothing and leaves
    (waking a sleeping thread costs ~40 us on a virtual machine, as much as a small call's
    whole work)."""

    def __init__(self, kernel: Callable[..., None], args: tuple[Any, ...], bounds: list[int]):
        self.kernel, self.args, self.bounds = kernel, args, bounds
        self.next = 0
        self.busy = 0  # chunks taken by workers and not finished
        self.stopped = False
        self.error: BaseException | None = None
        self.cv = threading.Condition()

    def take(self, worker: bool) -> int | None:
        with self.cv:
            if self.stopped or self.next >= len(self.bounds) - 1:
                return None
            i = self.next
            self.next += 1
            self.busy += worker
            return i

    def chunk(self, i: int) -> None:
        self.kernel(*self.args, self.bounds[i], self.bounds[i + 1])

    def stop(self) -> None:
        with self.cv:
            self.stopped = True

    def help(self) -> None:
        """A pool worker's share: chunks until none is left or one failed."""
        while (i := self.take(True)) is not None:
            try:
                self.chunk(i)
            except BaseException as e:  # passed to the caller, which raises it
                with self.cv:
                    self.stopped = True
                    self.error = self.error or e
            finally:
                with self.cv:
                    self.busy -= 1
                    self.cv.notify_all()

    def wait_helpers(self) -> None:
        with self.cv:
            self.cv.wait_for(lambda: self.busy == 0)

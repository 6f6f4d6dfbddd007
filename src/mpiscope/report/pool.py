# SPDX-License-Identifier: BSD-3-Clause
"""Drawing the report's figures in worker processes while this one goes on
analysing the runs.

Figures are independent of each other and, even made fast (figures.py),
over a third of a report's CPU time, so `draw(figure, ...)` hands one to a
worker and returns a Future; `resolved()` swaps every Future in the
gathered data for its result. With no pool active (`--jobs 0`, one CPU, or
a report too small to repay starting workers), `draw` draws it here.
"""

import contextlib
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor

# A worker is a fresh interpreter that imports matplotlib, which costs more
# CPU than drawing a few sections: a report with fewer benchmark sections
# than this is drawn here.
MIN_SECTIONS = 4
# The figures take less CPU than this process's own share of the work
# (imports, analysis, fits), so more than two workers only wait.
MAX_WORKERS = 2
_active = None


def default_jobs():
    """Workers to use by default: two, or none on a single CPU."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return MAX_WORKERS if cpus > 1 else 0


@contextlib.contextmanager
def drawing(jobs):
    """Within the block, draw() runs in `jobs` worker processes (0: here).
    They start at once, to import while the caller does."""
    global _active
    if jobs < 1:
        yield
        return
    # spawn, not fork: this process has threads (Arrow, DuckDB) that a forked
    # child would inherit in whatever state they were in; and unlike
    # forkserver, starting a worker does not wait for its imports.
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    try:
        for _ in range(jobs):
            pool.submit(_ready)  # a new worker per task while none is idle
        _active = pool
        yield
    except BaseException:
        pool.shutdown(cancel_futures=True)  # no point drawing the rest
        raise
    finally:
        _active = None
        pool.shutdown()


def _ready():
    from mpiscope.report import plots  # noqa: F401  (importing is the point)


def draw(figure, *args, **kwargs):
    """plots.<figure>(*args, **kwargs), the figure's SVG: in a worker (a
    Future) when a pool is active, else here."""
    if _active is None:
        return _draw(figure, *args, **kwargs)
    return _active.submit(_draw, figure, *args, **kwargs)


def _draw(figure, *args, **kwargs):
    from mpiscope.report import plots  # matplotlib: imported only where figures are drawn

    return getattr(plots, figure)(*args, **kwargs)


def resolved(data):
    """`data` with every Future (in nested dicts and lists) replaced by its result."""
    if isinstance(data, Future):
        return resolved(data.result())
    if isinstance(data, dict):
        return {k: resolved(v) for k, v in data.items()}
    if isinstance(data, list):
        return [resolved(v) for v in data]
    return data

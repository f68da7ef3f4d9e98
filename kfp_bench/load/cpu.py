"""The load generator's own CPU: what one process used while it sent (``client_cpu``), and the
threads it must not start (``one_blas_thread``).

Imports nothing but the standard library, so that the request loop (``engine.py``) and a
process's entry point can use it before numpy is imported; the aggregation merges and reads
these figures (``kfp_bench.stats.load``).
"""

from __future__ import annotations

import os

from kfp_bench.load.cgroup import CgroupCpu

#: numpy's OpenBLAS reads its thread count from this variable once, when numpy is imported.
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def client_cpu(
    user_s: float,
    system_s: float,
    wall_s: float,
    before: CgroupCpu | None = None,
    after: CgroupCpu | None = None,
) -> dict:
    """The ``client_cpu`` of one process that used ``user_s`` + ``system_s`` of CPU in ``wall_s``
    seconds of sending: the times, one process, and its busy share of one core (``busiest``).
    With two readings of its cgroup (``cgroup.usage()``, at the start and the end) also the
    cgroup's CPU limit in cores (``cpu_limit``, None when unlimited) and the time and periods
    that limit held the process back meanwhile (``throttled_s``, ``throttled_periods``).
    """
    busy = (user_s + system_s) / wall_s if wall_s > 0 else 0.0
    out = {"user_s": user_s, "system_s": system_s, "processes": 1, "busiest": busy}
    if before is not None and after is not None:
        out["cpu_limit"] = after.limit
        out["throttled_s"] = max(after.throttled_s - before.throttled_s, 0.0)
        out["throttled_periods"] = max(after.throttled_periods - before.throttled_periods, 0)
    return out


def one_blas_thread() -> None:
    """Limit numpy's OpenBLAS to one thread in this process and the ones it starts, unless the
    environment says otherwise. Call it at a load process's entry, before numpy is imported.

    OpenBLAS starts a thread per core that spins while idle; on the two cores a load generator
    shares with the server under test they take CPU from the request loop (seen in a profile,
    commit 7fa0fd8; BENCHMARKS.md, load engine (a), the "OpenBLAS threads off" row), and nothing
    here multiplies matrices.
    """
    os.environ.setdefault(BLAS_THREADS_ENV, "1")

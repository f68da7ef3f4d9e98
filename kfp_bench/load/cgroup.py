"""The CPU limit of this process's cgroup, and how long the limit held it back (CFS throttling).

A Kubernetes pod with a CPU limit runs under CFS bandwidth control: once its processes have used
their quota of a period (100 ms by default), they wait for the next one. A throttled load
generator sends late and reads late, and those stalls show up as latency of the server under test.
The load engine reads ``usage()`` when it starts sending and when it ends, and the difference goes
into the results (``client_cpu``), so a report can say so.

Both cgroup versions are read: v2 (``cpu.max``; ``cpu.stat``'s ``nr_throttled`` and
``throttled_usec``) and v1's cpu controller (``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``;
``cpu.stat``'s ``nr_throttled`` and ``throttled_time`` in ns). The cgroup is found from
``/proc/self/cgroup`` and ``/proc/self/mountinfo``; anything missing or unreadable gives None,
never an error: outside Linux, or without a cpu controller, there is nothing to say.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CgroupCpu:
    """A reading of the cgroup's CPU bandwidth counters: its limit in cores (quota / period;
    None: unlimited), and the seconds and periods in which the limit held its tasks back since
    the cgroup began."""

    limit: float | None
    throttled_s: float
    throttled_periods: int


def usage(proc: str = "/proc/self") -> CgroupCpu | None:
    """This process's cgroup CPU limit and throttling counters; None when they cannot be read."""
    try:
        found = _cpu_dir(proc)
        if found is None:
            return None
        path, version = found
        stat = _keyed(os.path.join(path, "cpu.stat"))
        if version == 2:
            quota, period = _read(os.path.join(path, "cpu.max")).split()[:2]
            limit = None if quota == "max" else int(quota) / int(period)
            throttled = stat["throttled_usec"] / 1e6
        else:
            quota = int(_read(os.path.join(path, "cpu.cfs_quota_us")))
            period = int(_read(os.path.join(path, "cpu.cfs_period_us")))
            limit = None if quota < 0 else quota / period
            throttled = stat["throttled_time"] / 1e9
        return CgroupCpu(limit, throttled, stat["nr_throttled"])
    except (OSError, KeyError, ValueError, ZeroDivisionError):
        return None


def _cpu_dir(proc: str) -> tuple[str, int] | None:
    """The folder of this process's cpu cgroup and its version (1 or 2): the v1 cpu controller
    when it is mounted, else the v2 hierarchy when its cpu controller is on."""
    groups = {}  # controller ("" for v2) -> path within the hierarchy
    for line in _read(os.path.join(proc, "cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            groups[c] = path
    mounts = {}  # "cpu" (v1) or "" (v2) -> (mount point, root of the mount in the hierarchy)
    for line in _read(os.path.join(proc, "mountinfo")).splitlines():
        fields = line.split()
        sep = fields.index("-")
        fstype, options = fields[sep + 1], fields[sep + 3].split(",")
        if fstype == "cgroup2":
            mounts.setdefault("", (fields[4], fields[3]))
        elif fstype == "cgroup" and "cpu" in options:
            mounts.setdefault("cpu", (fields[4], fields[3]))
    for key, version in (("cpu", 1), ("", 2)):
        if key not in groups or key not in mounts:
            continue
        point, root = mounts[key]
        rel = groups[key]
        if root != "/" and (rel == root or rel.startswith(root + "/")):
            rel = rel[len(root) :]
        path = os.path.join(point, rel.lstrip("/"))
        if not os.path.isdir(path):
            path = point  # a container's own cgroup, mounted as the root
        if version == 1 or os.path.exists(os.path.join(path, "cpu.max")):
            return path, version
    return None


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def _keyed(path: str) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split() for line in _read(path).splitlines())}

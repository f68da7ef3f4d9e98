"""The load generator under a CPU limit (a pod's): the cgroup's limit and throttling are read, and
a throttled run says so.

The first test puts a real `kfp-bench load` into a real cgroup with a CFS quota of 0.1 cores (as
Kubernetes does for a pod's CPU limit) and needs root and a writable cpu controller; it is skipped,
with the reason, where the machine has none. The others read cgroup files laid out as the kernel
writes them (cgroup v2 and v1), in a temporary folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kfp_bench.load import cgroup
from kfp_bench.load.cgroup import CgroupCpu
from tests.conftest import run_cli

QUOTA_US, PERIOD_US = 10_000, 100_000  # 0.1 cores


def _limited_cgroup(tmp_name: str) -> tuple[Path, Path]:
    """A child of this process's cpu cgroup limited to 0.1 cores: (its folder, its procs file)."""
    found = cgroup._cpu_dir("/proc/self")
    if found is None:
        pytest.skip("no cpu cgroup controller is mounted here")
    parent, version = Path(found[0]), found[1]
    child = parent / tmp_name
    try:
        child.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot make a cgroup under {parent}: {exc.strerror}")
    try:
        if version == 2:
            (child / "cpu.max").write_text(f"{QUOTA_US} {PERIOD_US}\n")
        else:
            (child / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (child / "cpu.cfs_quota_us").write_text(f"{QUOTA_US}\n")
    except OSError as exc:
        child.rmdir()
        pytest.skip(f"cannot set a CPU limit on {child}: {exc.strerror}")
    return child, child / "cgroup.procs"


def test_a_throttled_load_generator_says_so(fault_server, tmp_path):
    child, procs = _limited_cgroup(f"kfp-bench-test-{os.getpid()}")
    out = tmp_path / "load.json"
    try:
        p = run_cli(
            "load",
            *("-z", "2s", "-c", "10", "--json-out", str(out), fault_server.url),
            preexec_fn=lambda: procs.write_text(str(os.getpid())),
        )
    finally:
        child.rmdir()  # empty again: the process has exited
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    cpu = doc["client_cpu"]
    assert cpu["cpu_limit"] == pytest.approx(QUOTA_US / PERIOD_US)
    assert cpu["throttled_periods"] >= 1 and cpu["throttled_s"] > 0
    assert cpu["user_s"] + cpu["system_s"] <= 0.1 * doc["duration_s"] + 0.1  # held to the limit
    # a request in flight when the quota ran out waited for the next period: ~90 ms
    assert doc["latency_ms"]["max"] >= 20
    assert "Cgroup limit:\t0.1 cores; throttled" in p.stdout
    notes = p.stdout.partition("Notes:")[2]
    assert "the load generator's cgroup held it back for" in notes
    assert "0.1-core limit" in notes and "raise the CPU limit of the load pods" in notes


def _proc(tmp: Path, cgroup_line: str, mounts: list[str]) -> str:
    proc = tmp / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(cgroup_line + "\n")
    (proc / "mountinfo").write_text("".join(m + "\n" for m in mounts))
    return str(proc)


def _v2_mount(point: Path, root: str = "/") -> str:
    return f"41 31 0:38 {root} {point} rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw"


def test_cgroup_v2_limit_and_throttling(tmp_path):
    fs = tmp_path / "sys/fs/cgroup"
    leaf = fs / "kubepods/burstable/pod1/ctr"
    leaf.mkdir(parents=True)
    (leaf / "cpu.max").write_text("50000 100000\n")
    (leaf / "cpu.stat").write_text(
        "usage_usec 812\nuser_usec 500\nsystem_usec 312\n"
        "nr_periods 40\nnr_throttled 3\nthrottled_usec 250000\n"
    )
    proc = _proc(tmp_path, "0::/kubepods/burstable/pod1/ctr", [_v2_mount(fs)])
    assert cgroup.usage(proc) == CgroupCpu(0.5, 0.25, 3)
    (leaf / "cpu.max").write_text("max 100000\n")
    assert cgroup.usage(proc) == CgroupCpu(None, 0.25, 3)


def test_a_containers_own_cgroup_mounted_as_the_root(tmp_path):
    """With a cgroup namespace, /proc/self/cgroup says "/" and the mount is the container's."""
    fs = tmp_path / "sys/fs/cgroup"
    fs.mkdir(parents=True)
    (fs / "cpu.max").write_text("200000 100000\n")
    (fs / "cpu.stat").write_text("nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")
    proc = _proc(tmp_path, "0::/", [_v2_mount(fs)])
    assert cgroup.usage(proc) == CgroupCpu(2.0, 0.0, 0)


def test_cgroup_v1_cpu_controller(tmp_path):
    point = tmp_path / "sys/fs/cgroup/cpu,cpuacct"
    leaf = point / "kubepods/pod1/ctr"
    leaf.mkdir(parents=True)
    (leaf / "cpu.cfs_quota_us").write_text("25000\n")
    (leaf / "cpu.cfs_period_us").write_text("100000\n")
    (leaf / "cpu.stat").write_text("nr_periods 9\nnr_throttled 4\nthrottled_time 1500000000\n")
    mount = f"32 31 0:29 / {point} rw,relatime - cgroup cgroup rw,cpu,cpuacct"
    proc = _proc(tmp_path, "3:cpu,cpuacct:/kubepods/pod1/ctr", [mount, _v2_mount(tmp_path)])
    assert cgroup.usage(proc) == CgroupCpu(0.25, 1.5, 4)
    (leaf / "cpu.cfs_quota_us").write_text("-1\n")
    assert cgroup.usage(proc).limit is None


def test_no_cgroup_to_read_is_none_not_an_error(tmp_path):
    assert cgroup.usage(str(tmp_path / "nowhere")) is None
    # a v2 hierarchy without the cpu controller (no cpu.max): nothing to say
    fs = tmp_path / "sys/fs/cgroup"
    fs.mkdir(parents=True)
    assert cgroup.usage(_proc(tmp_path, "0::/", [_v2_mount(fs)])) is None

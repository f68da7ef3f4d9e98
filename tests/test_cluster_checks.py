"""`make cluster`'s checks before it makes anything: a port it needs that is taken is named, the
exit code is 2, and nothing is left (no state folder). Runs without a cluster."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

UP = Path(__file__).resolve().parent.parent / "cluster" / "up.sh"


@pytest.mark.skipif(os.geteuid() != 0, reason="make cluster needs root; so does this check")
def test_a_taken_port_is_named_and_nothing_is_made(tmp_path):
    state = tmp_path / "state"
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            holder.bind(("127.0.0.1", 10257))
        except OSError:
            pytest.skip("port 10257 is in use here already (a cluster is up?)")
        holder.listen()
        r = subprocess.run(
            ["bash", str(UP)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "KFP_BENCH_CLUSTER_STATE": str(state)},
        )
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "port 10257 is taken" in lines[0], r.stderr
    assert not state.exists()


def test_not_root_is_refused_in_one_line():
    """As another user (nobody), up.sh stops at once, naming root. It runs from a copy in a
    folder anyone can read, whatever the checkout's permissions."""
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        for name in ("up.sh", "lib.sh"):
            shutil.copy(UP.parent / name, folder)
        command = ["bash", str(Path(folder) / "up.sh")]
        if os.geteuid() == 0:
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        env = {**os.environ, "KFP_BENCH_CLUSTER_STATE": str(Path(folder) / "state")}
        r = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=folder)
        assert not (Path(folder) / "state").exists()
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.strip() == (
        "cluster: needs root (it runs containerd, kubelet and iptables); run it as root"
    )

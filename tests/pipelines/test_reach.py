"""The three ways users reach the pipeline, each against the local KFP API server.

(a) upload compiled/kfp_bench.yaml through the UI's upload endpoint and create a run of it;
(b) kfp-bench schedule: a recurring run that really triggers runs;
(c) kfp-bench submit (the notebook is in test_notebook.py); unknown --param names refused.
The server simulates runs (it would otherwise execute the benchmark itself, in a cluster's place).
"""

from __future__ import annotations

import time
import urllib.request
import uuid
import warnings

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.steps.compile import DEFAULT_OUT
from tests.conftest import run_cli

PACKAGE = DEFAULT_OUT / "kfp_bench.yaml"


@pytest.fixture(scope="module")
def kfp_api():
    with start_kfp_server(simulate="all:fixed(0.3)", max_parallel_runs=8) as server:
        yield server


@pytest.fixture(scope="module")
def client(kfp_api):
    import kfp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return kfp.Client(host=kfp_api.url)


def _multipart(path, name: str) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="uploadfile"; '
        f'filename="{path.name}"\r\nContent-Type: application/x-yaml\r\n\r\n'
    ).encode()
    body = head + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def test_a_upload_as_the_ui_does_then_run(kfp_api, client):
    # The UI posts the file as multipart "uploadfile" to /apis/v2beta1/pipelines/upload.
    body, ctype = _multipart(PACKAGE, "uploadfile")
    req = urllib.request.Request(
        f"{kfp_api.url}/apis/v2beta1/pipelines/upload?name=kfp-bench-ui-{uuid.uuid4().hex[:6]}",
        data=body,
        headers={"Content-Type": ctype},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        import json

        pipeline = json.loads(resp.read())
    pid = pipeline["pipeline_id"]
    (version,) = client.list_pipeline_versions(pid).pipeline_versions
    exp = client.create_experiment("kfp-bench-ui-test")
    run = client.run_pipeline(
        experiment_id=exp.experiment_id,
        job_name="kfp-bench from the UI",
        pipeline_id=pid,
        version_id=version.pipeline_version_id,
        params={"num_runs": 2},
    )
    # The run as the server keeps it: of the uploaded version, in the experiment, with the
    # parameter (its simulated end state is the server's option, set above, and proves nothing).
    got = client.get_run(run.run_id)
    ref = got.pipeline_version_reference
    assert (ref.pipeline_id, ref.pipeline_version_id) == (pid, version.pipeline_version_id)
    assert got.experiment_id == exp.experiment_id
    assert got.runtime_config.parameters == {"num_runs": 2}


def test_b_schedule_creates_a_recurring_run_that_triggers(kfp_api, client):
    done = run_cli(
        "schedule", "--host", kfp_api.url, "--cron", "*/2 * * * * *",
        "--max-concurrency", "1", "--param", "num_runs=2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rid = done.stdout.split("recurring run ")[1].split()[0]
    assert client.get_recurring_run(rid).max_concurrency in (1, "1")
    end = time.monotonic() + 20
    runs = []
    while time.monotonic() < end and len(runs) < 2:
        runs = [
            r
            for r in client.list_runs(page_size=100).runs or []
            if getattr(r, "recurring_run_id", None) == rid
        ]
        time.sleep(0.5)
    client.disable_recurring_run(rid)
    assert len(runs) >= 2, "the schedule did not trigger runs"


def test_b_schedule_refuses_a_five_field_cron(kfp_api):
    done = run_cli("schedule", "--host", kfp_api.url, "--cron", "0 3 * * *")
    assert done.returncode == 2
    assert "6 fields" in done.stderr


def test_c_submit_creates_a_run(kfp_api, client):
    done = run_cli(
        "submit", "--host", kfp_api.url, "--param", "num_runs=3",
        "--param", 'run_parameters={"width": 2}', "--param", "pipeline=fanout",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split("Created run ")[1].split()[0]
    params = client.get_run(run_id).runtime_config.parameters
    assert params["num_runs"] == 3 and params["pipeline"] == "fanout"
    assert params["run_parameters"] == {"width": 2}


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ("num_run=3", "no such parameter"),
        ("num_runs=three", "not an int"),
        ("num_runs", "NAME=VALUE"),
    ],
)
def test_submit_refuses_bad_params_before_sending(arg, words):
    # Port 9 (discard) is never a KFP server: the refusal must come before any connection.
    done = run_cli("submit", "--host", "http://127.0.0.1:9", "--param", arg)
    assert done.returncode == 2
    assert words in done.stderr

"""Error bodies as KFP writes them reach the driver's records with their text (issue 25).

KFP's upload endpoints answer an error as ``{"error_message", "error_details"}`` (kubeflow/
pipelines 7b70c7b95f server/pipeline_upload_server.go:426-435, writeErrorToResponse: json.Marshal
of api.Error, with no Content-Type of its own), not as the google.rpc Status its other
endpoints answer. A loopback server answers in that shape here: the local KFP API is not the
yardstick for it.
"""

from __future__ import annotations

import json

import pytest

from kfp_bench.errors import KfpApiError
from kfp_bench.kfp.api import Backoff, KfpApi, error_message
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.options import RunsOptions
from tests.kfp.conftest import HELLO
from tests.loopback import Handler, serving

MESSAGE = "Failed to create a pipeline and a pipeline version: The name x already exists"
DETAILS = MESSAGE + "\ngithub.com/kubeflow/pipelines/backend/src/common/util.NewAlreadyExistError"


class _Kfp(Handler):
    """Lists answer empty; an upload answers 409 as writeErrorToResponse writes it."""

    def do_GET(self):
        self.send(200, b"{}")

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = {"error_message": MESSAGE, "error_details": DETAILS}
        self.send(409, json.dumps(body).encode(), ctype="text/plain; charset=utf-8")


@pytest.fixture
def kfp_upload_refuses():
    with serving(_Kfp) as url:
        yield url


def test_the_upload_error_keeps_its_message(kfp_upload_refuses):
    api = KfpApi(kfp_upload_refuses, retry=Backoff(retries=0))
    try:
        r = api.upload_pipeline(str(HELLO), "kfp-bench-x", "d")
    finally:
        api.close()
    assert r.call.status == 409 and r.call.outcome == "error"
    assert r.call.error == f"HTTP 409 Conflict: {MESSAGE}"


def test_the_benchmark_stops_naming_the_servers_reason(kfp_upload_refuses):
    opts = RunsOptions(host=kfp_upload_refuses, pipeline=str(HELLO), num_runs=1, retries=0)
    with pytest.raises(KfpApiError, match="could not upload the pipeline .*The name x already"):
        run_benchmark(opts)


def test_both_shapes_are_read():
    assert error_message({"code": 3, "message": "m", "details": []}) == "m"
    assert error_message({"error_message": "m", "error_details": "m\nstack"}) == "m"
    assert error_message({"error_details": "first line\nstack"}) == "first line"
    assert error_message(["not", "an", "object"]) == ""

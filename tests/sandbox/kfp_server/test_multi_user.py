"""The local KFP API with --multi-user refuses what multi-user KFP refuses for want of a namespace
(kfp_bench.sandbox.kfp_server.multiuser), with the real server's code and messages."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server


@pytest.fixture(scope="module")
def server():
    with start_kfp_server(simulate="all:fixed(0.2)", multi_user=True) as s:
        yield s


def call(server, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"{server.api_url}{path}", data=data, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


SPEC = {"pipelineInfo": {"name": "p"}, "root": {"dag": {"tasks": {}}}, "schemaVersion": "2.1.0"}


@pytest.mark.parametrize(
    "method,path,body,words",
    [
        ("POST", "/experiments", {"display_name": "e"}, "An experiment cannot have an empty"),
        ("GET", "/experiments", None, "List experiments failed: Failed to authorize with API"),
        ("GET", "/runs", None, "A run cannot have an empty namespace in multi-user mode"),
        (
            "POST",
            "/runs",
            {"display_name": "r", "pipeline_spec": SPEC},
            "Experiment id can not be empty in multi-user mode",
        ),
    ],
)
def test_refused_without_namespace(server, method, path, body, words):
    status, doc = call(server, method, path, body)
    assert (status, doc["code"]) == (400, 3)
    assert words in doc["message"]


def test_with_a_namespace_it_works_as_before(server):
    status, exp = call(server, "POST", "/experiments", {"display_name": "e", "namespace": "ns1"})
    assert status == 200, exp
    status, _ = call(server, "GET", "/experiments?namespace=ns1")
    assert status == 200
    body = {"display_name": "r", "pipeline_spec": SPEC, "experiment_id": exp["experiment_id"]}
    status, run = call(server, "POST", "/runs", body)
    assert status == 200, run
    status, runs = call(server, "GET", f"/runs?experiment_id={exp['experiment_id']}")
    assert status == 200 and len(runs["runs"]) == 1

"""The sandbox model server: a real kserve.ModelServer in a child process, over loopback HTTP."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import psutil
import pytest

from kfp_bench.errors import ServerError
from kfp_bench.sandbox.model_server import start_model_server

from .helpers import children_running, gone

MODULE = "kfp_bench.sandbox.model_server"
VERSICOLOR, SETOSA, VIRGINICA = [6.8, 2.8, 4.8, 1.4], [5.1, 3.5, 1.4, 0.2], [6.3, 3.3, 6.0, 2.5]


def call(url: str, body=None, content_type="application/json") -> tuple[int, dict]:
    """GET (``body`` None) or POST JSON; return the status and the decoded answer."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_readiness(model_server):
    assert call(model_server.v1_model_url) == (200, {"name": "iris", "ready": True})
    assert model_server.health_url == model_server.v1_model_url
    assert call(model_server.url + "/v2/health/ready")[0] == 200
    assert call(model_server.v2_ready_url)[0] == 200


def test_v1_predict(model_server):
    status, answer = call(
        model_server.v1_predict_url, {"instances": [VERSICOLOR, SETOSA, VIRGINICA]}
    )
    assert status == 200
    assert answer == {"predictions": [1, 0, 2]}


def test_v1_predict_without_a_json_content_type_is_refused_as_kserve_refuses_it(model_server):
    # hey's default Content-Type, as the KServe guide's `hey -m POST -D input.json` sends it: a
    # real sklearn InferenceService hands the body to the model as bytes and answers 500.
    body = {"instances": [VERSICOLOR]}
    assert call(model_server.v1_predict_url, body, "text/html")[0] == 500
    assert call(model_server.v1_predict_url, b"not json", "text/html")[0] == 500


def test_v2_infer(model_server):
    request = {
        "inputs": [
            {"name": "input-0", "shape": [1, 4], "datatype": "FP32", "data": VERSICOLOR},
        ]
    }
    status, answer = call(model_server.v2_infer_url, request)
    assert status == 200
    assert answer["model_name"] == "iris"
    (output,) = answer["outputs"]
    assert output["shape"] == [1] and output["data"] == [1]
    request["inputs"][0].update(shape=[2, 4], data=SETOSA + VIRGINICA)
    assert call(model_server.v2_infer_url, request)[1]["outputs"][0]["data"] == [0, 2]


# What a real sklearn InferenceService answered each body (KServe v0.15.2's sklearnserver, an
# SVC on iris, on the real-cluster tier: make cluster-kserve, 2026-12-06): kserve refuses what it
# cannot parse (400; 422 for V2, FastAPI's validation), the model's failures are 500.
V1_REFUSED = {
    "not-json": (b"not json", 400),
    "not-a-list": ({"instances": "not a list"}, 400),
    "no-instances": ({"no_instances": [VERSICOLOR]}, 500),
    "short-row": ({"instances": [[1.0, 2.0]]}, 500),
    "strings": ({"instances": [["a", "b", "c", "d"]]}, 500),
    "empty": ({"instances": []}, 500),
    "one-row-unwrapped": ({"instances": VERSICOLOR}, 500),
}
V2_REFUSED = {
    "not-json": (b"{", 422),
    "no-inputs": ({"x": 1}, 422),
    "short-row": (
        {"inputs": [{"name": "input-0", "shape": [1, 3], "datatype": "FP32", "data": [1, 2, 3]}]},
        500,
    ),
    "shape-mismatch": (
        {"inputs": [{"name": "input-0", "shape": [2, 4], "datatype": "FP32", "data": VERSICOLOR}]},
        500,
    ),
}


@pytest.mark.parametrize("case", V1_REFUSED)
def test_v1_malformed_body_is_answered_as_kserve_answers_it(model_server, case):
    body, status = V1_REFUSED[case]
    assert call(model_server.v1_predict_url, body)[0] == status


@pytest.mark.parametrize("case", V2_REFUSED)
def test_v2_malformed_body_is_answered_as_kserve_answers_it(model_server, case):
    body, status = V2_REFUSED[case]
    assert call(model_server.v2_infer_url, body)[0] == status


def test_port_in_use_raises_server_error(model_server):
    with pytest.raises(ServerError, match=f"model server .* port {model_server.port}"):
        start_model_server(port=model_server.port)


def test_starts_in_seconds_and_stop_leaves_no_process():
    start = time.perf_counter()
    server = start_model_server()
    assert time.perf_counter() - start < 20  # 4.3-4.7 s on an idle 2-vCPU VM, mostly imports
    assert server.alive() and server.url == f"http://127.0.0.1:{server.port}"
    group = [server.pid] + [p.pid for p in psutil.Process(server.pid).children(recursive=True)]
    start = time.perf_counter()
    server.stop()
    assert time.perf_counter() - start < 5  # SIGTERM, not the SIGKILL fallback
    assert server.returncode == 0
    assert all(gone(pid, within=0) for pid in group)
    assert server.pid not in children_running(MODULE)


def test_with_a_predictor_host_it_is_a_transformer_that_sends_on_to_the_predictor(model_server):
    """As KServe starts an InferenceService's transformer container (``--predictor_host``):
    no model of its own, each request sent on to the predictor and its answer returned."""
    host = model_server.url.removeprefix("http://")
    with start_model_server(args=("--predictor_host", host)) as transformer:
        assert call(transformer.v1_predict_url, {"instances": [SETOSA, VIRGINICA]}) == (
            200,
            {"predictions": [0, 2]},
        )
    with start_model_server(args=("--predictor_host", "127.0.0.1:9")) as orphan:
        assert call(orphan.v1_predict_url, {"instances": [SETOSA]})[0] >= 500

"""Two /metrics scrapes turned into per-operation deltas, for the label schemes KFP servers use,
and against the local KFP API, whose /metrics counts each call in several families."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.error
import urllib.request

import pytest

from kfp_bench.kfp import promscrape

BEFORE = """# TYPE run_server_create_requests counter
run_server_create_requests 5
# TYPE grpc_server_handled_total counter
grpc_server_handled_total{grpc_method="ListRuns",grpc_code="OK"} 1
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{method="POST",path="/apis/v2beta1/runs",le="0.01"} 1
http_request_duration_seconds_bucket{method="POST",path="/apis/v2beta1/runs",le="+Inf"} 2
http_request_duration_seconds_sum{method="POST",path="/apis/v2beta1/runs"} 0.03
http_request_duration_seconds_count{method="POST",path="/apis/v2beta1/runs"} 2
"""
AFTER = """# TYPE run_server_create_requests counter
run_server_create_requests 15
# TYPE grpc_server_handled_total counter
grpc_server_handled_total{grpc_method="ListRuns",grpc_code="OK"} 4
grpc_server_handled_total{grpc_method="ListRuns",grpc_code="Unavailable"} 1
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{method="POST",path="/apis/v2beta1/runs",le="0.01"} 9
http_request_duration_seconds_bucket{method="POST",path="/apis/v2beta1/runs",le="+Inf"} 12
http_request_duration_seconds_sum{method="POST",path="/apis/v2beta1/runs"} 0.13
http_request_duration_seconds_count{method="POST",path="/apis/v2beta1/runs"} 12
"""


@pytest.fixture
def metrics_server():
    texts = [BEFORE, AFTER]

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            body = texts.pop(0).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/metrics"
    server.shutdown()


def test_deltas_per_operation(metrics_server):
    before = promscrape.scrape(metrics_server)
    after = promscrape.scrape(metrics_server)
    ops = promscrape.deltas(before, after)["operations"]
    # The histogram's count wins over KFP's plain counter for the same operation.
    assert ops["create_run"]["count"] == 10
    assert ops["create_run"]["sum_s"] == pytest.approx(0.10)
    assert ops["create_run"]["buckets"] == [[0.01, 8.0], [float("inf"), 10.0]]
    assert ops["list_runs"]["count"] == 4 and ops["list_runs"]["errors"] == 1


def test_a_failed_scrape_is_data():
    snap = promscrape.scrape("http://127.0.0.1:1/metrics", timeout=1)
    assert "cannot scrape" in snap["error"]
    assert "error" in promscrape.deltas(snap, snap)


@pytest.mark.parametrize(
    "name, labels, op",
    [
        ("x", {"grpc_method": "CreateRun"}, "create_run"),
        (
            "x",
            {"method": "/kubeflow.pipelines.backend.api.v2beta1.RunService/ListRuns"},
            "list_runs",
        ),
        ("x", {"method": "GET", "path": "/apis/v2beta1/runs/abc"}, "get_run"),
        (
            "x",
            {"method": "DELETE", "path": "/apis/v2beta1/pipelines/p/versions/v"},
            "delete_pipeline_version",
        ),
        ("pipeline_upload_requests", {}, "upload_pipeline"),
        ("job_server_list_requests", {}, "list_recurring_runs"),
        ("job_server_delete_requests", {}, "delete_recurring_run"),
        ("job_server_job_count", {}, None),
        ("x", {"method": "GET", "path": "/apis/v2beta1/recurringruns"}, "list_recurring_runs"),
        (
            "x",
            {"method": "DELETE", "path": "/apis/v2beta1/recurringruns/{recurring_run_id}"},
            "delete_recurring_run",
        ),
        ("process_cpu_seconds_total", {}, None),
    ],
)
def test_operation_of(name, labels, op):
    assert promscrape.operation_of(name, labels) == op


#: A scrape as KFP's API server gives it: the gRPC histogram and counters, KFP's own counter, and
#: another histogram of the same calls (an HTTP front's); each counts the same 3 CreateRun calls.
SEVERAL = """# TYPE run_server_create_requests counter
run_server_create_requests {n}
# TYPE grpc_server_handled_total counter
grpc_server_handled_total{{grpc_code="OK",grpc_method="CreateRun"}} {ok}
grpc_server_handled_total{{grpc_code="NotFound",grpc_method="CreateRun"}} {bad}
# TYPE grpc_server_started_total counter
grpc_server_started_total{{grpc_method="CreateRun"}} {n}
# TYPE grpc_server_handling_seconds histogram
grpc_server_handling_seconds_bucket{{grpc_method="CreateRun",le="0.01"}} {fast}
grpc_server_handling_seconds_bucket{{grpc_method="CreateRun",le="+Inf"}} {n}
grpc_server_handling_seconds_sum{{grpc_method="CreateRun"}} {s}
grpc_server_handling_seconds_count{{grpc_method="CreateRun"}} {n}
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{{method="POST",path="/apis/v2beta1/runs",le="+Inf"}} {n}
http_request_duration_seconds_sum{{method="POST",path="/apis/v2beta1/runs"}} {s}
http_request_duration_seconds_count{{method="POST",path="/apis/v2beta1/runs"}} {n}
"""


def _samples(text: str) -> dict:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_one_family_per_operation_the_grpc_histogram_first():
    before = {"url": "u", "at": 0.0, "samples": _samples(
        SEVERAL.format(n=2, ok=2, bad=0, fast=1, s=0.02))}  # fmt: skip
    after = {"url": "u", "at": 1.0, "samples": _samples(
        SEVERAL.format(n=5, ok=4, bad=1, fast=3, s=0.10))}  # fmt: skip
    op = promscrape.deltas(before, after)["operations"]["create_run"]
    assert op["count"] == 3 and op["errors"] == 1  # errors: the gRPC codes of the same calls
    assert op["source"] == "grpc_server_handling_seconds"
    assert op["sum_s"] == pytest.approx(0.08)
    assert op["buckets"] == [[0.01, 2.0], [float("inf"), 3.0]]


def _post(url: str, body: dict) -> int:
    req = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})  # fmt: skip
    return _status(req)


def _status(req) -> int:
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_local_apis_calls_are_counted_once(kfp_server):
    """The local API counts a call in its HTTP histogram, KFP's counter and the gRPC series:
    the deltas count each of the client's calls once, from the gRPC histogram."""
    api = kfp_server.api_url
    before = promscrape.scrape(kfp_server.metrics_url)
    created = [_post(f"{api}/experiments", {"display_name": f"once-{i}-{id(before)}"})
               for i in range(3)]  # fmt: skip
    listed = [_status(f"{api}/runs?page_size=1") for _ in range(2)]
    missing = _status(f"{api}/runs/no-such-run")
    after = promscrape.scrape(kfp_server.metrics_url)
    assert created == [200] * 3 and listed == [200] * 2 and missing == 404
    ops = promscrape.deltas(before, after)["operations"]
    for name, count, errors in (("create_experiment", 3, 0), ("list_runs", 2, 0),
                                ("get_run", 1, 1)):  # fmt: skip
        assert (ops[name]["count"], ops[name]["errors"]) == (count, errors), name
        assert ops[name]["source"] == "grpc_server_handling_seconds", name
        les = [le for le, _ in ops[name]["buckets"]]
        assert les[:2] == [0.005, 0.01] and les[-2:] == [300.0, float("inf")]  # main.go's
        assert ops[name]["buckets"][-1][1] == count

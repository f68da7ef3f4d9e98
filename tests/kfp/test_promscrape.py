"""Two /metrics scrapes turned into per-operation deltas, for the label schemes KFP servers use."""

from __future__ import annotations

import http.server
import threading

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

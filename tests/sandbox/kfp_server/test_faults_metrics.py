"""Injected latency and errors (all requests, or some operations, before or after handling), the
credentials seen, and the Prometheus /metrics endpoint, on real servers: the local server's own
series and the real API server's (KFP's counters, go-grpc-prometheus's gRPC series)."""

from __future__ import annotations

import http.client
import json
import re
import time
from collections import Counter

import pytest
import yaml

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.kfp_server import KfpServerOptions, start_kfp_server
from kfp_bench.sandbox.kfp_server.app import build_app
from kfp_bench.sandbox.kfp_server.faults import OPERATIONS
from kfp_bench.sandbox.kfp_server.grpc_metrics import GRPC_METHODS
from tests.paths import SWAGGER

from .support import API, PIPELINES, call


def _metric(text: str, name: str, **labels) -> float:
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_latency_and_error_rate_are_injected_and_counted():
    with start_kfp_server(latency_ms=30, error_rate=0.3, seed=1) as s:
        statuses, elapsed = Counter(), []
        for _ in range(60):
            start = time.perf_counter()
            status, body = call(s, "GET", f"{API}/runs")
            elapsed.append(time.perf_counter() - start)
            statuses[status] += 1
            if status != 200:
                assert body["code"] in (14, 8) and "injected" in body["message"]
        assert min(elapsed) >= 0.030
        assert set(statuses) == {200, 503, 429}
        assert 6 <= statuses[503] + statuses[429] <= 32
        text = call(s, "GET", "/metrics")[1]
        route = "/apis/v2beta1/runs"
        for code, n in statuses.items():
            assert _metric(text, "kfp_api_requests_total", route=route, code=code) == n
        assert _metric(text, "kfp_api_request_duration_seconds_count", route=route) == 60
        assert (
            _metric(text, "kfp_api_request_duration_seconds_bucket", route=route, le="0.025") == 0
        )
        # the real server's own counter counts requests that reached the handler
        assert _metric(text, "run_server_list_requests") == statuses[200]
        assert re.search(r"^# TYPE run_server_list_requests counter$", text, re.M)


def test_metrics_count_per_endpoint(server):
    before = call(server, "GET", "/metrics")[1]
    for _ in range(3):
        call(server, "GET", f"{API}/experiments")
    call(server, "GET", f"{API}/runs/missing")
    after = call(server, "GET", "/metrics")[1]

    def delta(**labels):
        name = "kfp_api_requests_total"
        return _metric(after, name, **labels) - _metric(before, name, **labels)

    assert delta(route="/apis/v2beta1/experiments", code=200, method="GET") == 3
    assert delta(route="/apis/v2beta1/runs/{run_id}", code=404) == 1
    assert "kfp_bench_runs_executing" in after


def _runs_named(s, name: str) -> int:
    status, body = call(s, "GET", f"{API}/runs", query={"page_size": 200})
    assert status == 200, body
    return sum(r["display_name"] == name for r in body.get("runs", []))


def test_error_ops_fault_only_those_operations_before_or_after_handling():
    """rate 1 on create_run: every create fails, every other call succeeds; before handling
    nothing is created, after handling the run exists although its create answered 503/429."""
    spec = (PIPELINES / "hello_world.yaml").read_text()
    for after in (False, True):
        with start_kfp_server(
            simulate="all:fixed(0.3)", error_rate=1.0, error_ops="create_run", error_after=after
        ) as s:
            status, exp = call(s, "POST", f"{API}/experiments", {"display_name": "faults"})
            assert status == 200, exp
            body = {"display_name": "faulted", "experiment_id": exp["experiment_id"],
                    "pipeline_spec": yaml.safe_load(spec)}  # fmt: skip
            status, answer = call(s, "POST", f"{API}/runs", body)
            assert status in (503, 429) and "injected fault" in answer["message"]
            assert ("after handling" in answer["message"]) == after
            assert _runs_named(s, "faulted") == (1 if after else 0)
            assert call(s, "GET", f"{API}/healthz")[0] == 200


def test_error_ops_names_are_checked_and_cover_every_route(tmp_path):
    with pytest.raises(ConfigError, match=r"--error-ops 'create_runs'.*create_run"):
        KfpServerOptions(error_rate=0.5, error_ops="create_runs")
    app = build_app(state_dir=tmp_path)
    served = {
        (r.method, r.resource.canonical)
        for r in app.router.routes()
        if r.resource.canonical.startswith("/apis/") and r.method != "HEAD"
    }
    assert served == set(OPERATIONS)


def test_credentials_are_counted_by_presence_never_by_value(server):
    def seen() -> str:
        return call(server, "GET", "/metrics")[1]

    before = seen()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for headers in ({"Authorization": "Bearer s3cr3t-token"}, {"Cookie": "session=s3cr3t"},
                        {"Authorization": "Basic Zm9vOmJhcg=="}, {}):  # fmt: skip
            conn.request("GET", f"{API}/healthz", headers=headers)
            conn.getresponse().read()
    finally:
        conn.close()
    after = seen()
    name = "kfp_api_request_credentials_total"
    for auth, cookie in (("bearer", "no"), ("none", "yes"), ("basic", "no"), ("none", "no")):
        labels = dict(authorization=auth, cookie=cookie)
        assert _metric(after, name, **labels) - _metric(before, name, **labels) == 1, labels
    assert "s3cr3t" not in after


# --- the real server's gRPC series -------------------------------------------------------------

RUNS = "kubeflow.pipelines.backend.api.v2beta1.RunService"
EXPERIMENTS = "kubeflow.pipelines.backend.api.v2beta1.ExperimentService"
#: kubeflow/pipelines 7b70c7b95f backend/src/apiserver/main.go:406-410
KFP_BUCKETS = ["0.005", "0.01", "0.03", "0.1", "0.3", "1", "3", "10", "15", "30", "60", "120",
               "300", "+Inf"]  # fmt: skip


def _grpc(text: str) -> dict:
    """{(sample name, frozenset of labels but le): value} of the grpc_server_* samples, and
    the le values of each histogram series as ("le", labels)."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if not s.name.startswith("grpc_server_"):
                continue
            labels = {k: v for k, v in s.labels.items() if k != "le"}
            key = frozenset(labels.items())
            if "le" in s.labels:
                out.setdefault(("le", key), []).append(s.labels["le"])
            out[(s.name, key)] = out.get((s.name, key), 0.0) + s.value
    return out


def _delta(before: dict, after: dict, name: str, service: str, method: str, **labels) -> float:
    key = frozenset({"grpc_service": service, "grpc_method": method, "grpc_type": "unary",
                     **labels}.items())  # fmt: skip
    return after.get((name, key), 0.0) - before.get((name, key), 0.0)


def test_every_served_grpc_route_is_the_swaggers_method_and_only_those():
    """GRPC_METHODS against the official swagger's operationIds ("<service>_<method>", from the
    protos' google.api.http options); what is left of the served routes is what KFP serves on
    its HTTP mux (main.go:599-601): healthz and the two uploads."""
    swagger = json.loads(SWAGGER.read_text())
    ids = {
        (verb.upper(), re.sub(r"\{pipeline(_version)?\.", "{", path)): op["operationId"]
        for path, ops in swagger["paths"].items()
        for verb, op in ops.items()
    }
    for route, (service, method) in GRPC_METHODS.items():
        assert ids[route] == f"{service}_{method}", route
    assert set(GRPC_METHODS) <= set(OPERATIONS)
    http_only = set(OPERATIONS) - set(GRPC_METHODS)
    assert {OPERATIONS[k] for k in http_only} == {
        "get_healthz", "upload_pipeline", "upload_pipeline_version"}  # fmt: skip


def test_grpc_series_count_each_call_with_its_code_and_kfps_buckets(server):
    before = _grpc(call(server, "GET", "/metrics")[1])
    name = f"grpc-{time.time_ns()}"
    assert call(server, "POST", f"{API}/experiments", {"display_name": name})[0] == 200
    assert call(server, "POST", f"{API}/experiments", {"display_name": name})[0] == 409
    assert call(server, "GET", f"{API}/runs/missing")[0] == 404
    assert call(server, "POST", f"{API}/runs", {})[0] == 400  # the handler's InvalidArgument
    # refused by the gateway before any gRPC call: a body it cannot decode, a bad page_size
    assert call(server, "POST", f"{API}/runs", {"display_name": 5})[0] == 400
    assert call(server, "GET", f"{API}/runs", query={"page_size": "x"})[0] == 400
    assert call(server, "GET", f"{API}/healthz")[0] == 200  # the HTTP mux's, not gRPC
    assert call(server, "GET", f"{API}/nothing")[0] == 404
    text = call(server, "GET", "/metrics")[1]
    after = _grpc(text)

    handled = "grpc_server_handled_total"
    assert _delta(before, after, handled, EXPERIMENTS, "CreateExperiment", grpc_code="OK") == 1
    assert _delta(before, after, handled, EXPERIMENTS, "CreateExperiment",
                  grpc_code="AlreadyExists") == 1  # fmt: skip
    assert _delta(before, after, handled, RUNS, "GetRun", grpc_code="NotFound") == 1
    assert _delta(before, after, handled, RUNS, "CreateRun", grpc_code="InvalidArgument") == 1
    for method, n, ok in (("CreateExperiment", 2, 1), ("GetRun", 1, 0), ("CreateRun", 1, 0)):
        service = RUNS if method != "CreateExperiment" else EXPERIMENTS
        assert _delta(before, after, "grpc_server_started_total", service, method) == n
        assert _delta(before, after, "grpc_server_msg_received_total", service, method) == n
        assert _delta(before, after, "grpc_server_msg_sent_total", service, method) == ok
        assert _delta(before, after, "grpc_server_handling_seconds_count", service, method) == n
        labels = frozenset({"grpc_service": service, "grpc_method": method,
                            "grpc_type": "unary"}.items())  # fmt: skip
        assert after[("le", labels)] == KFP_BUCKETS
    assert _delta(before, after, "grpc_server_started_total", RUNS, "ListRuns") == 0
    assert "Healthz" not in text and "grpc_server_handled_created" not in text
    assert re.search(r"^# TYPE grpc_server_handling_seconds histogram$", text, re.M)


def test_a_fault_before_handling_is_no_grpc_call_one_after_it_is_the_calls_own(server):
    """A fault before handling stands for the front (an ingress's 503): the gRPC server never
    sees the call. After handling, the call completed with its own code."""
    before = _grpc(call(server, "GET", "/metrics")[1])
    try:
        for after_handling in (False, True):
            server.set_faults(1.0, "get_run", after=after_handling, seed=1)
            assert call(server, "GET", f"{API}/runs/missing")[0] in (503, 429)
    finally:
        server.set_faults()
    after = _grpc(call(server, "GET", "/metrics")[1])
    handled = "grpc_server_handled_total"
    assert _delta(before, after, "grpc_server_started_total", RUNS, "GetRun") == 1
    assert _delta(before, after, handled, RUNS, "GetRun", grpc_code="NotFound") == 1
    assert _delta(before, after, handled, RUNS, "GetRun", grpc_code="Unavailable") == 0

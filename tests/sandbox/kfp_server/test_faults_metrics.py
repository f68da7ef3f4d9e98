"""Injected latency and errors (all requests, or some operations, before or after handling), the
credentials seen, and the Prometheus /metrics endpoint, on real servers."""

from __future__ import annotations

import http.client
import re
import time
from collections import Counter

import pytest
import yaml

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.kfp_server import KfpServerOptions, start_kfp_server
from kfp_bench.sandbox.kfp_server.app import build_app
from kfp_bench.sandbox.kfp_server.faults import OPERATIONS

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

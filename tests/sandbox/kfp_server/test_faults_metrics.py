"""Injected latency and errors, and the Prometheus /metrics endpoint, on a real server."""

from __future__ import annotations

import re
import time
from collections import Counter

from kfp_bench.sandbox.kfp_server import start_kfp_server

from .support import API, call


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

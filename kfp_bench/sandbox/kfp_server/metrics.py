"""The server's Prometheus metrics and injected faults, applied to every API request.

This module owns ``/metrics`` and the fault middleware. Metric names (Prometheus text format):

* ``kfp_api_requests_total{method, route, code}``: counter of API requests, by route template
  (e.g. ``/apis/v2beta1/runs/{run_id}``) and response status, injected faults included.
* ``kfp_api_request_duration_seconds{method, route}``: histogram of the time from a request's
  arrival to its response, injected latency included.
* The real KFP API server's own per-operation counters, with its names, for the operations this
  server implements: ``run_server_create_requests``, ``run_server_get_requests``,
  ``run_server_list_requests``, ``run_server_delete_requests``, ``run_server_terminate_requests``,
  ``pipeline_server_create_requests`` (uploads and creates), ``pipeline_server_get_requests``,
  ``pipeline_server_list_requests``, ``pipeline_server_delete_requests``,
  ``pipeline_server_create_version_requests``, ``experiment_server_create_requests``, ...,
  ``job_server_create_requests`` (recurring runs: job_server.go:34-72), ..., and the gauges
  ``run_server_run_count`` and ``job_server_job_count``. As the Go server does, they have no
  ``_total`` suffix and count requests that reached the handler.
* The real server's gRPC series (go-grpc-prometheus, as KFP's main.go turns it on): each REST
  call of a gRPC method is one unary call of ``kubeflow.pipelines.backend.api.v2beta1.<service>``
  in ``grpc_server_started_total``, ``grpc_server_handled_total{grpc_code}``,
  ``grpc_server_msg_received_total``, ``grpc_server_msg_sent_total`` and the histogram
  ``grpc_server_handling_seconds`` (KFP's buckets, 5 ms to 300 s), labelled ``grpc_method``,
  ``grpc_service``, ``grpc_type="unary"``; healthz and uploads have none (``grpc_metrics.py``).
* ``kfp_bench_runs{state}`` (gauge): runs by state; ``kfp_bench_runs_executing`` (gauge): runs
  holding an execution slot.
* ``kfp_api_request_credentials_total{authorization, cookie}``: API requests by the credentials
  they carried: ``authorization`` is the scheme of the Authorization header (``bearer``,
  ``basic``, ``other``) or ``none``, ``cookie`` is ``yes`` or ``no``. Only the presence and the
  scheme are kept, never a token: a test can check that credentials arrive without the server
  ever holding them.

Faults: ``--latency-ms`` delays every ``/apis/`` response by that long (healthz included: it is an
endpoint like the others); ``--error-rate`` answers that fraction of ``/apis/`` requests (of the
``--error-ops`` operations only, when given) with 503 UNAVAILABLE or 429 RESOURCE_EXHAUSTED (even
odds), in the google.rpc.Status shape, before they reach their handler or, with
``--error-after``, after it (``faults.py``). ``/metrics`` and the internal ``/__health`` are never
faulted or counted.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from aiohttp import web
from prometheus_client import CollectorRegistry, Gauge, Histogram, generate_latest
from prometheus_client import Counter as PromCounter
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from kfp_bench.sandbox.kfp_server.faults import Faults
from kfp_bench.sandbox.kfp_server.gateway import rpc_error
from kfp_bench.sandbox.kfp_server.grpc_metrics import GrpcMetrics

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_SCHEMES = ("bearer", "basic")


class Metrics:
    """The metrics of one server; ``middleware`` counts and faults each request."""

    def __init__(self, *, latency_ms: float, faults: Faults) -> None:
        self.latency = latency_ms / 1000.0
        self.faults = faults
        self.registry = CollectorRegistry()
        self.requests = PromCounter(
            "kfp_api_requests",
            "API requests by route template and status.",
            ["method", "route", "code"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "kfp_api_request_duration_seconds",
            "Time from a request's arrival to its response (s), injected latency included.",
            ["method", "route"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.runs_by_state = Gauge(
            "kfp_bench_runs", "Runs by state.", ["state"], registry=self.registry
        )
        self.executing = Gauge(
            "kfp_bench_runs_executing", "Runs holding an execution slot.", registry=self.registry
        )
        self.credentials = PromCounter(
            "kfp_api_request_credentials",
            "API requests by Authorization scheme (or none) and cookie presence; never a token.",
            ["authorization", "cookie"],
            registry=self.registry,
        )
        self.grpc = GrpcMetrics()
        self.registry.register(self.grpc)
        self.operations: Counter[str] = Counter()
        self.run_count = 0
        self.job_count = 0  # job_server.go: Inc on create, Dec on delete
        self.state_source = None  # () -> (Counter of run states, executing): set by the app

    def operation(self, name: str) -> None:
        """Count one request of a real-server operation, e.g. "run_server_create_requests"."""
        self.operations[name] += 1

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        if not request.path.startswith("/apis/"):
            return await handler(request)
        started = time.perf_counter()
        route = _route(request)
        self.credentials.labels(*_credentials(request)).inc()
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            fault = self.faults.draw(request.method, route)
            if fault is None or self.faults.after:
                # past the front's latency and faults: the gateway's call of the gRPC server
                response = await self.grpc.call(request, route, handler)
            if fault is not None:
                response = _fault_response(*fault)
            status = response.status
        except web.HTTPException as e:
            status = e.status
            raise
        except asyncio.CancelledError:
            status = 499  # the client went away
            raise
        finally:
            self.requests.labels(request.method, route, str(status)).inc()
            elapsed = time.perf_counter() - started
            self.duration.labels(request.method, route).observe(elapsed)
        return response

    async def handle_metrics(self, request: web.Request) -> web.Response:
        if self.state_source is not None:
            states, executing = self.state_source()
            self.runs_by_state.clear()
            for state, n in states.items():
                self.runs_by_state.labels(state).set(n)
            self.executing.set(executing)
        text = generate_latest(self.registry).decode() + self._operations_text()
        content_type, _, charset = CONTENT_TYPE_LATEST.partition("; charset=")
        return web.Response(text=text, content_type=content_type, charset=charset or "utf-8")

    def _operations_text(self) -> str:
        lines = []
        for name, value in sorted(self.operations.items()):
            lines += [f"# HELP {name} The total number of requests of this operation.",
                      f"# TYPE {name} counter", f"{name} {value}"]  # fmt: skip
        lines += [
            "# HELP run_server_run_count The current number of runs.",
            "# TYPE run_server_run_count gauge",
            f"run_server_run_count {self.run_count}",
            "# HELP job_server_job_count The current number of jobs in Kubeflow Pipelines instance",
            "# TYPE job_server_job_count gauge",
            f"job_server_job_count {self.job_count}",
        ]
        return "\n".join(lines) + "\n"


def _route(request: web.Request) -> str:
    info = request.match_info
    route = getattr(info, "route", None)
    resource = getattr(route, "resource", None)
    if resource is None:
        return "unmatched"
    return resource.canonical


def _credentials(request: web.Request) -> tuple[str, str]:
    """(authorization scheme or "none", "yes"/"no" for a cookie): what a request carried, never
    the secret itself."""
    header = request.headers.get("Authorization", "").strip()
    scheme = header.split(" ", 1)[0].lower() if header else "none"
    if header and scheme not in _SCHEMES:
        scheme = "other"
    return scheme, "yes" if request.headers.get("Cookie") else "no"


def _fault_response(status: int, code: int, message: str) -> web.Response:
    # An injected fault stands for an overloaded server or a proxy, not a handler's refusal:
    # the gateway's google.rpc.Status without a handler's detail.
    # Its HTTP status is the one the gateway gives the code (faults.ERRORS lists the same).
    return rpc_error(code, message, detail=False)

"""The real API server's gRPC request metrics, for the local KFP API's REST calls.

This module owns the map from each REST route to the gRPC method KFP's grpc-gateway calls for it
(``GRPC_METHODS``), the gRPC code of an answer (``code_of``), and the series go-grpc-prometheus
v1.2.0 (KFP's go.mod:78) exports for a unary call, with its names, labels and KFP's buckets
(``GrpcMetrics``). What is and is not a gRPC call is said at ``GrpcMetrics.call``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter

from aiohttp import web
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

from kfp_bench.sandbox.kfp_server.routes import API as _API
from kfp_bench.sandbox.kfp_server.routes import EXPERIMENT as _E
from kfp_bench.sandbox.kfp_server.routes import PIPELINE as _P
from kfp_bench.sandbox.kfp_server.routes import RECURRING as _J
from kfp_bench.sandbox.kfp_server.routes import RUN as _R
from kfp_bench.sandbox.kfp_server.routes import VERSION as _V

PACKAGE = "kubeflow.pipelines.backend.api.v2beta1"

#: (HTTP method, route template) -> (service, method): the google.api.http options of
#: backend/api/v2beta1/{experiment,pipeline,run,recurring_run}.proto, for the routes this server
#: serves (the swagger's operationIds are the same "<service>_<method>").
GRPC_METHODS: dict[tuple[str, str], tuple[str, str]] = {
    ("POST", f"{_API}/pipelines/create"): ("PipelineService", "CreatePipelineAndVersion"),
    ("POST", f"{_API}/pipelines"): ("PipelineService", "CreatePipeline"),
    ("GET", f"{_API}/pipelines"): ("PipelineService", "ListPipelines"),
    ("GET", f"{_API}/pipelines/names/{{name}}"): ("PipelineService", "GetPipelineByName"),
    ("GET", _P): ("PipelineService", "GetPipeline"),
    ("DELETE", _P): ("PipelineService", "DeletePipeline"),
    ("PATCH", _P): ("PipelineService", "UpdatePipeline"),
    ("GET", f"{_P}/versions"): ("PipelineService", "ListPipelineVersions"),
    ("POST", f"{_P}/versions"): ("PipelineService", "CreatePipelineVersion"),
    ("GET", _V): ("PipelineService", "GetPipelineVersion"),
    ("DELETE", _V): ("PipelineService", "DeletePipelineVersion"),
    ("PATCH", _V): ("PipelineService", "UpdatePipelineVersion"),
    ("POST", f"{_API}/experiments"): ("ExperimentService", "CreateExperiment"),
    ("GET", f"{_API}/experiments"): ("ExperimentService", "ListExperiments"),
    ("GET", _E): ("ExperimentService", "GetExperiment"),
    ("DELETE", _E): ("ExperimentService", "DeleteExperiment"),
    ("POST", f"{_E}:archive"): ("ExperimentService", "ArchiveExperiment"),
    ("POST", f"{_E}:unarchive"): ("ExperimentService", "UnarchiveExperiment"),
    ("POST", f"{_API}/runs"): ("RunService", "CreateRun"),
    ("GET", f"{_API}/runs"): ("RunService", "ListRuns"),
    ("GET", _R): ("RunService", "GetRun"),
    ("DELETE", _R): ("RunService", "DeleteRun"),
    ("POST", f"{_R}:terminate"): ("RunService", "TerminateRun"),
    ("POST", f"{_R}:retry"): ("RunService", "RetryRun"),
    ("POST", f"{_R}:archive"): ("RunService", "ArchiveRun"),
    ("POST", f"{_R}:unarchive"): ("RunService", "UnarchiveRun"),
    ("POST", f"{_API}/recurringruns"): ("RecurringRunService", "CreateRecurringRun"),
    ("GET", f"{_API}/recurringruns"): ("RecurringRunService", "ListRecurringRuns"),
    ("GET", _J): ("RecurringRunService", "GetRecurringRun"),
    ("DELETE", _J): ("RecurringRunService", "DeleteRecurringRun"),
    ("POST", f"{_J}:enable"): ("RecurringRunService", "EnableRecurringRun"),
    ("POST", f"{_J}:disable"): ("RecurringRunService", "DisableRecurringRun"),
}
#: main.go:406-410, "5 ms -> 5 min"
BUCKETS = (0.005, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 15, 30, 60, 120, 300)
#: google.golang.org/grpc/codes: each code's String(), by number
CODES = ("OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
         "AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
         "Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss",
         "Unauthenticated")  # fmt: skip
#: HTTP status -> code, for an error answer that carries no Status: the code grpc-gateway's
#: HTTPStatusFromCode sends as that status (gateway.HTTP_STATUS), the first where several do.
_FROM_HTTP = {400: 3, 401: 16, 403: 7, 404: 5, 409: 6, 429: 8, 499: 1, 500: 13, 501: 12,
              503: 14, 504: 4}  # fmt: skip
_LABELS = ["grpc_method", "grpc_service", "grpc_type"]  # Go's exposition sorts label names


class GrpcMetrics:
    """The gRPC server's series of one local server: a prometheus_client collector (register it
    in the server's registry), fed by ``call``.

    What it follows (kubeflow/pipelines 7b70c7b95f): ``backend/src/apiserver/main.go`` sends the
    /apis/ paths through grpc-gateway to the gRPC server (:496-518, :612), whose first interceptor
    is ``grpc_prometheus.UnaryServerInterceptor`` (:415-428), with the histogram on (:406-410);
    healthz and the multipart uploads are served on the HTTP mux (:599-601), no gRPC call.
    go-grpc-prometheus ``server_metrics.go:26-57`` (names, labels) and ``:103-114`` (a unary
    call: started and msg_received, then handled{grpc_code} and the histogram, msg_sent only
    without an error); ``util.go:23-28`` (codes by their Go names). KFP does not call
    ``grpc_prometheus.Register`` (server.go:37): a method's series appear with its first call.
    """

    def __init__(self) -> None:
        self.started: Counter[tuple[str, str]] = Counter()
        self.handled: Counter[tuple[str, str, str]] = Counter()
        self.sent: Counter[tuple[str, str]] = Counter()
        self.buckets: dict[tuple[str, str], list[int]] = {}
        self.sums: Counter[tuple[str, str]] = Counter()

    async def call(self, request: web.Request, route: str, handler) -> web.StreamResponse:
        """``handler``'s answer to ``request``, counted and timed as one gRPC call if ``route``
        (its template) is a gRPC method's and the answer is not the gateway's own.

        A gRPC call: an answer with a google.rpc.Status from the handlers (with its one detail,
        ``gateway.status_body``) or a success. Not one: the gateway's own refusals (a body or
        query it cannot decode: a Status without details); faults injected before handling
        (``faults.py``: the front) and ``--latency-ms`` (the network), which the caller applies
        outside this. A fault after handling replaces the answer of a call counted with its own
        code. Timed from here (the token check included: KFP checks tokens in its handlers,
        resource_manager.go:2575-2606) to the answer. Started is counted with the outcome, once
        the call is known to be one: a call in flight is not seen.
        """
        method = GRPC_METHODS.get((request.method, route))
        if method is None:
            return await handler(request)
        started = time.perf_counter()
        code: str | None = "Unknown"  # grpcstatus.FromError of an error that is no Status
        try:
            response = await handler(request)
            code = code_of(response)
        except web.HTTPException:
            code = None  # aiohttp's own refusal (a body too large): the gRPC call never began
            raise
        except asyncio.CancelledError:
            code = "Canceled"  # the client went away: the gateway cancels the call
            raise
        finally:
            if code is not None:
                self.observe(method, code, time.perf_counter() - started)
        return response

    def observe(self, method: tuple[str, str], code: str, seconds: float) -> None:
        """One finished unary call of ``method`` (service, method) with ``code``."""
        key = (f"{PACKAGE}.{method[0]}", method[1])
        self.started[key] += 1
        self.handled[(*key, code)] += 1
        if code == "OK":
            self.sent[key] += 1
        counts = self.buckets.setdefault(key, [0] * len(BUCKETS))
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                counts[i] += 1
        self.sums[key] += seconds

    def collect(self):
        if not self.started:
            return
        started = _counter("grpc_server_started", "Total number of RPCs started on the server.")
        handled = CounterMetricFamily(
            "grpc_server_handled",
            "Total number of RPCs completed on the server, regardless of success or failure.",
            labels=["grpc_code", *_LABELS],
        )
        received = _counter(
            "grpc_server_msg_received",
            "Total number of RPC stream messages received on the server.",
        )
        sent = _counter("grpc_server_msg_sent",
                        "Total number of gRPC stream messages sent by the server.")  # fmt: skip
        hist = HistogramMetricFamily(
            "grpc_server_handling_seconds",
            "Histogram of response latency (seconds) of gRPC that had been application-level "
            "handled by the server.",
            labels=_LABELS,
        )
        for (service, method), n in sorted(self.started.items()):
            labels = [method, service, "unary"]
            started.add_metric(labels, n)
            received.add_metric(labels, n)  # a unary call receives its one request first
            sent.add_metric(labels, self.sent[(service, method)])
            counts = self.buckets[(service, method)]
            cumulative = [(_go_float(b), c) for b, c in zip(BUCKETS, counts, strict=True)]
            hist.add_metric(labels, [*cumulative, ("+Inf", n)], self.sums[(service, method)])
        for (service, method, code), n in sorted(self.handled.items()):
            handled.add_metric([code, method, service, "unary"], n)
        yield from (handled, hist, received, sent, started)  # by name, as Go writes them


def code_of(response: web.StreamResponse) -> str | None:
    """The gRPC code (its Go name) of an answer; None for the gateway's own refusal."""
    if 200 <= response.status < 300:
        return "OK"
    try:
        doc = json.loads(getattr(response, "body", None) or b"")
    except (TypeError, ValueError):
        doc = None
    code = doc.get("code") if isinstance(doc, dict) else None
    if isinstance(code, int) and 0 <= code < len(CODES):
        # a handler's error carries its Status as a detail (UserError.GRPCStatus); the
        # gateway's own answers carry none (gateway.status_body, detail=False)
        return CODES[code] if "details" in doc else None
    return CODES[_FROM_HTTP.get(response.status, 2)]


def _counter(name: str, documentation: str) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, labels=_LABELS)


def _go_float(value: float) -> str:
    """A bucket bound as Go's exposition writes it: 0.005, 1, 300."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))

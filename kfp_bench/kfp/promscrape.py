"""The server's side: scrape the KFP API server's Prometheus /metrics, and diff two scrapes.

KFP's benchmark guide asks for server-side monitoring beside the client's measurements; the real
API server serves /metrics on its HTTP port (8888). ``scrape`` reads the text exposition (parsed
with ``prometheus_client.parser``); ``deltas`` turns a before and an after into per-operation
request counts, errors and latency histograms, named like the driver's operations (``create_run``,
``list_runs`` ...), so the stats can put the two views side by side.

How a series is tied to an operation:

- a label naming the RPC or handler (``method``, ``grpc_method``, ``operation``, ``handler``,
  ``endpoint``): CamelCase RPC names become snake_case (``CreateRun`` -> ``create_run``); REST
  paths with an HTTP verb map through ``_REST``;
- KFP's own unlabelled counters (``run_server_create_requests`` ...) through ``_KFP_COUNTERS``.

A scrape that fails is not an error of the benchmark: the deltas then say why there are none.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from collections import defaultdict

from kfp_bench.redact import public_url, scrub

#: KFP API server counters (backend/src/apiserver/server/*_server.go) -> the driver's operation.
_KFP_COUNTERS = {
    "run_server_create_requests": "create_run",
    "run_server_get_requests": "get_run",
    "run_server_list_requests": "list_runs",
    "run_server_delete_requests": "delete_run",
    "run_server_terminate_requests": "terminate_run",
    "pipeline_upload_requests": "upload_pipeline",
    "pipeline_version_upload_requests": "upload_pipeline_version",
    "pipeline_server_create_requests": "upload_pipeline",
    "pipeline_server_create_version_requests": "upload_pipeline_version",
    "pipeline_server_list_requests": "list_pipelines",
    "pipeline_server_delete_requests": "delete_pipeline",
    "pipeline_server_delete_pipeline_version_requests": "delete_pipeline_version",
    "pipeline_server_list_pipeline_versions_requests": "list_pipeline_versions",
    "experiment_server_create_requests": "create_experiment",
    "experiment_server_delete_requests": "delete_experiment",
    "experiment_server_list_requests": "list_experiments",
    # recurring runs count under their v1 name, jobs (job_server.go:34-66)
    "job_server_create_requests": "create_recurring_run",
    "job_server_get_requests": "get_recurring_run",
    "job_server_list_requests": "list_recurring_runs",
    "job_server_delete_requests": "delete_recurring_run",
    "job_server_enable_requests": "enable_recurring_run",
    "job_server_disable_requests": "disable_recurring_run",
}
_OP_LABELS = ("operation", "grpc_method", "method", "rpc", "handler", "endpoint", "route", "path")
_VERB_LABELS = ("http_method", "verb", "method")
_CODE_LABELS = ("code", "status", "status_code", "grpc_code")
_REST = [
    ("POST", r"/apis/v2beta1/pipelines/upload$", "upload_pipeline"),
    ("POST", r"/apis/v2beta1/pipelines/upload_version$", "upload_pipeline_version"),
    ("GET", r"/apis/v2beta1/pipelines/[^/]+/versions$", "list_pipeline_versions"),
    ("DELETE", r"/apis/v2beta1/pipelines/[^/]+/versions/[^/]+$", "delete_pipeline_version"),
    ("DELETE", r"/apis/v2beta1/pipelines/[^/]+$", "delete_pipeline"),
    ("GET", r"/apis/v2beta1/pipelines$", "list_pipelines"),
    ("POST", r"/apis/v2beta1/experiments$", "create_experiment"),
    ("GET", r"/apis/v2beta1/experiments$", "list_experiments"),
    ("DELETE", r"/apis/v2beta1/experiments/[^/]+$", "delete_experiment"),
    ("POST", r"/apis/v2beta1/runs$", "create_run"),
    ("GET", r"/apis/v2beta1/runs$", "list_runs"),
    ("GET", r"/apis/v2beta1/runs/[^/:]+$", "get_run"),
    ("POST", r"/apis/v2beta1/runs/[^/]+:terminate$", "terminate_run"),
    ("DELETE", r"/apis/v2beta1/runs/[^/]+$", "delete_run"),
    ("POST", r"/apis/v2beta1/recurringruns$", "create_recurring_run"),
    ("GET", r"/apis/v2beta1/recurringruns$", "list_recurring_runs"),
    ("GET", r"/apis/v2beta1/recurringruns/[^/:]+$", "get_recurring_run"),
    ("DELETE", r"/apis/v2beta1/recurringruns/[^/:]+$", "delete_recurring_run"),
]
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def scrape(url: str, timeout: float = 10.0, headers: dict | None = None) -> dict:
    """``{"url", "at", "samples": {(name, labels): value}}``, or ``{"url", "error"}``.
    ``headers`` (a bearer token) go with the request and into nothing returned."""
    from prometheus_client.parser import text_string_to_metric_families

    # urllib sends no URL userinfo (it would read it as part of the host name); a URL's
    # credentials never go into a scrape's record either.
    url = public_url(url)
    try:
        req = urllib.request.Request(url, headers=headers or {})
        with _opener.open(req, timeout=timeout) as resp:
            text = resp.read().decode("utf-8", "replace")
        samples = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                samples[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(exc, urllib.error.HTTPError):  # the code says a refusal (401) is one
            reason = f"HTTP {exc.code} {exc.reason}"
        return {"url": url, "error": scrub(f"cannot scrape {url}: {reason}")}
    return {"url": url, "at": time.time(), "samples": samples}


def snake(name: str) -> str:
    """``CreateRun`` -> ``create_run``; ``/x.RunService/ListRuns`` -> ``list_runs``."""
    name = name.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def operation_of(name: str, labels: dict) -> str | None:
    """The driver's operation a series counts, or None when it is about something else."""
    for base, op in _KFP_COUNTERS.items():
        if name == base or name == base + "_total":
            return op
    verb = next((labels[k].upper() for k in _VERB_LABELS if k in labels), "")
    for key in _OP_LABELS:
        value = labels.get(key)
        if not value:
            continue
        if value.startswith("/"):
            for method, pattern, op in _REST:
                if (not verb or verb == method) and re.search(pattern, value.split("?")[0]):
                    return op
            if re.fullmatch(r"/[\w.]+/[A-Z]\w*", value):  # a gRPC full method name
                return snake(value)
            continue
        if key == "method" and value.upper() in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            continue
        return snake(value)
    return None


def _is_error(labels: dict) -> bool:
    for k in _CODE_LABELS:
        v = labels.get(k)
        if v is None:
            continue
        if v.isdigit():
            return int(v) >= 400
        return v.upper() not in ("OK", "SUCCESS", "2XX")
    return False


def deltas(before: dict, after: dict) -> dict:
    """Per-operation deltas between two scrapes: ``{"operations": {op: {count, errors, sum_s,
    buckets: [[le, cumulative count], ...]}}, "interval_s", "url"}``."""
    if "error" in before or "error" in after:
        return {"error": before.get("error") or after.get("error")}
    b, a = before["samples"], after["samples"]
    ops: dict = defaultdict(lambda: {"count": 0, "errors": 0, "sum_s": None, "buckets": {}})
    counted_by_histogram: set = set()
    for (name, labels_t), value in a.items():
        d = value - b.get((name, labels_t), 0.0)
        if d <= 0 and not name.endswith("_bucket"):
            continue
        labels = dict(labels_t)
        op = operation_of(_base(name), {k: v for k, v in labels.items() if k != "le"})
        if op is None:
            continue
        o = ops[op]
        if name.endswith("_bucket") and "le" in labels and _is_latency(name):
            le = float(labels["le"]) * _unit(name)
            o["buckets"][le] = o["buckets"].get(le, 0.0) + max(d, 0.0)
        elif name.endswith("_sum") and _is_latency(name):
            o["sum_s"] = (o["sum_s"] or 0.0) + d * _unit(name)
        elif name.endswith("_count") and _is_latency(name):
            o["count_h"] = o.get("count_h", 0) + d
            counted_by_histogram.add(op)
            if _is_error(labels):
                o["errors_h"] = o.get("errors_h", 0) + d
        elif name.endswith(("_total", "_requests")) or name in _KFP_COUNTERS:
            o["count_c"] = o.get("count_c", 0) + d
            if _is_error(labels):
                o["errors_c"] = o.get("errors_c", 0) + d
    out = {}
    for op, o in ops.items():
        # A histogram's _count is the request count when there is one; else a plain counter.
        src = "h" if op in counted_by_histogram else "c"
        out[op] = {
            "count": int(o.get(f"count_{src}", 0)),
            # Histograms rarely carry the status; a labelled counter of the same route does.
            "errors": int(max(o.get("errors_h", 0), o.get("errors_c", 0))),
            "sum_s": o["sum_s"],
            "buckets": [[le, c] for le, c in sorted(o["buckets"].items())],
        }
    return {
        "operations": out,
        "interval_s": round(after["at"] - before["at"], 3),
        "url": after["url"],
    }


def _base(name: str) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_latency(name: str) -> bool:
    return any(w in name for w in ("seconds", "latency", "duration", "_ms", "milliseconds"))


def _unit(name: str) -> float:
    return 1e-3 if ("_ms" in name or "milliseconds" in name) else 1.0

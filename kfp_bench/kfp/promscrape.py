"""The server's side: scrape the KFP API server's Prometheus /metrics, and diff two scrapes.

``scrape`` reads the text exposition; ``deltas`` turns a before and an after into per-operation
counts, errors and latency histograms named as the driver's operations (a label naming the RPC
or handler, CamelCase to snake_case, REST paths through ``_REST``; KFP's own counters through
``_KFP_COUNTERS``), each from one family (``GRPC_HISTOGRAM``). A failed scrape is no error of
the benchmark: the deltas say why there are none."""

from __future__ import annotations

import functools
import re
import time
import urllib.error
from collections import defaultdict

from kfp_bench.redact import public_url, scrub

# Imports inside functions: prometheus_client comes with the kfp extra, and only a scrape needs it.

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


@functools.cache
def _opener():
    # urllib.request (~20 ms with http.client) at the first scrape, not at each start of load
    from urllib.request import ProxyHandler, build_opener

    return build_opener(ProxyHandler({}))


def scrape(url: str, timeout: float = 10.0, headers: dict | None = None) -> dict:
    """``{"url", "at", "samples": {(name, labels): value}}``, or ``{"url", "error"}``.
    ``headers`` (a bearer token) go with the request and into nothing returned."""
    from urllib.request import Request  # deferred, as in _opener

    from prometheus_client.parser import text_string_to_metric_families

    # urllib sends no URL userinfo (it would read it as part of the host name); a URL's
    # credentials never go into a scrape's record either.
    url = public_url(url)
    try:
        req = Request(url, headers=headers or {})
        with _opener().open(req, timeout=timeout) as resp:
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
    buckets: [[le, cumulative count], ...], source}}, "interval_s", "url"}``; ``source`` names
    the metric family the count and latency were read from (see ``_source``)."""
    if "error" in before or "error" in after:
        return {"error": before.get("error") or after.get("error")}
    b, a = before["samples"], after["samples"]
    families: dict = defaultdict(dict)  # op -> metric family -> its deltas
    for (name, labels_t), value in a.items():
        d = value - b.get((name, labels_t), 0.0)
        if d <= 0 and not name.endswith("_bucket"):
            continue
        labels = dict(labels_t)
        base = _base(name)
        op = operation_of(base, {k: v for k, v in labels.items() if k != "le"})
        if op is None:
            continue
        kind = _kind(name, base, labels)
        if kind is None:
            continue
        f = families[op].setdefault(base, _family())
        if kind == "bucket":
            le = float(labels["le"]) * _unit(name)
            f["buckets"][le] = f["buckets"].get(le, 0.0) + max(d, 0.0)
            f["histogram"] = True
        elif kind == "sum":
            f["sum_s"] = (f["sum_s"] or 0.0) + d * _unit(name)
        else:  # a histogram's _count or a counter: requests, by code when labelled
            f["count"] += d
            f["coded"] = f["coded"] or any(k in labels for k in _CODE_LABELS)
            if _is_error(labels):
                f["errors"] += d
    out = {op: _one_source(fams) for op, fams in families.items()}
    return {
        "operations": out,
        "interval_s": round(after["at"] - before["at"], 3),
        "url": after["url"],
    }


def _family() -> dict:
    return {"count": 0.0, "errors": 0.0, "coded": False, "sum_s": None, "buckets": {},
            "histogram": False}  # fmt: skip


def _kind(name: str, base: str, labels: dict) -> str | None:
    """What a sample adds: "bucket", "sum", "count" (requests), or None."""
    if name.endswith("_bucket") and "le" in labels and _is_latency(name):
        return "bucket"
    if name.endswith("_sum") and _is_latency(name):
        return "sum"
    if name.endswith("_count") and _is_latency(name):
        return "count"
    if name.endswith(("_total", "_requests")) or base in _KFP_COUNTERS:
        return "count"
    return None


#: The family an operation's figures are read from, when a scrape has it: KFP's gRPC handling
#: time (go-grpc-prometheus; kubeflow/pipelines main.go:406-410). A server exports several
#: families per operation (KFP: the gRPC histogram and counters beside its own run_server_*
#: counters; the local API also its HTTP histogram kfp_api_request_duration_seconds), each
#: counting the same calls: summed, they would count a call two to five times, so one family is
#: the source of an operation's count, sum and buckets. The gRPC histogram, because every real
#: API server exports it (a cluster and the local API are read the same way), it times the
#: handling as the server sees it (from the gRPC call's start to its reply: client − server is
#: the network, the ingress and the gateway) and every REST call of a gRPC method is one call in
#: it. Without it (uploads, healthz, another server): another latency histogram, else a counter.
GRPC_HISTOGRAM = "grpc_server_handling_seconds"
GRPC_HANDLED = "grpc_server_handled_total"


def _one_source(families: dict) -> dict:
    name = _source(families)
    f = families[name]
    # The errors among the same calls: the source's own codes, else gRPC's handled counter (its
    # codes are the calls' own), else the most any coded family of the operation counts.
    if f["coded"]:
        errors = f["errors"]
    elif GRPC_HANDLED in families:
        errors = families[GRPC_HANDLED]["errors"]
    else:
        errors = max((g["errors"] for g in families.values() if g["coded"]), default=0.0)
    return {
        "count": int(f["count"]),
        "errors": int(errors),
        "sum_s": f["sum_s"],
        "buckets": [[le, c] for le, c in sorted(f["buckets"].items())],
        "source": name,
    }


def _source(families: dict) -> str:
    """The authoritative family of one operation (see ``GRPC_HISTOGRAM``)."""
    histograms = sorted(n for n, f in families.items() if f["histogram"])
    if GRPC_HISTOGRAM in histograms:
        return GRPC_HISTOGRAM
    if histograms:
        return histograms[0]

    def rank(name: str) -> tuple[int, str]:
        # calls completed, by code; KFP's counter of the handler; other coded counters; the rest
        order = 0 if name == GRPC_HANDLED else 1 if name in _KFP_COUNTERS else 2
        return (order if order < 2 or families[name]["coded"] else 3, name)

    return min(families, key=rank)


def _base(name: str) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_latency(name: str) -> bool:
    return any(w in name for w in ("seconds", "latency", "duration", "_ms", "milliseconds"))


def _unit(name: str) -> float:
    return 1e-3 if ("_ms" in name or "milliseconds" in name) else 1.0

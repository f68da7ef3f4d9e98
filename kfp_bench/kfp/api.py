"""A small timed wrapper over kfp_server_api's v2beta1 client: every call becomes an ``ApiCall``.

One ``ApiClient`` serves all threads, with a connection pool at least as large as the number of
calls the driver makes at once. Each method returns a ``Reply`` (the ``ApiCall`` record and the
JSON body as a dict) and hands the record to ``on_call``; an HTTP error or a transport failure is
a record with outcome "error", never an exception.

Bodies are read raw (``_preload_content=False``) and parsed with ``json.loads``: the generated
models cost about a millisecond per run of a 200-run page, and the driver's CPU is part of what the
benchmark reports. Field names are the REST API's (snake_case, as in the swagger).

urllib3's own silent retries are switched off, so a record is one request. Retries are a policy
of their own (issue 7): ``RetryPolicy`` is the hook, and the default never retries.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import kfp_server_api
import urllib3

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.auth import AUTH_HINT, Auth
from kfp_bench.records import ApiCall

#: ListRuns refuses a page_size above 200 (KFP's cap).
MAX_PAGE_SIZE = 200
_MAX_ERROR = 300


@dataclass(frozen=True, slots=True)
class Reply:
    """What a call returned: its record and, when it succeeded, the JSON body."""

    call: ApiCall
    body: dict | None

    @property
    def ok(self) -> bool:
        return self.call.outcome == "ok"


class RetryPolicy(Protocol):
    """Decides whether a failed call is tried again (issue 7 brings the real policies)."""

    def delay(self, operation: str, call: ApiCall) -> float | None:
        """Seconds to wait before the next attempt, or None to give up."""


class NoRetry:
    def delay(self, operation: str, call: ApiCall) -> float | None:
        return None


class KfpApi:
    """The KFP v2beta1 calls the driver makes, timed.

    Args:
        host: base URL of the KFP API, e.g. http://127.0.0.1:8888.
        auth: credentials and namespace.
        pool_size: connections kept to the host; at least the number of calls made at once.
        timeout: seconds each call may take before it is recorded as failed.
        on_call: receives each ``ApiCall`` record, from whichever thread made the call.
        retry: the retry policy; by default no call is retried.
    """

    def __init__(
        self,
        host: str,
        *,
        auth: Auth | None = None,
        pool_size: int = 8,
        timeout: float = 30.0,
        on_call: Callable[[ApiCall], None] | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.host = check_host(host)
        self.auth = (auth or Auth()).resolved()
        self.namespace = self.auth.namespace or None
        self.timeout = timeout
        self.on_call = on_call or (lambda call: None)
        self.retry = retry or NoRetry()
        config = kfp_server_api.Configuration(host=self.host)
        config.connection_pool_maxsize = max(pool_size, 1)
        config.retries = urllib3.Retry(total=0, redirect=0, raise_on_redirect=False)
        extra = self.auth.configure(self.host, config)
        self.client = kfp_server_api.ApiClient(config, cookie=extra.get("cookie"))
        self.client.user_agent = "kfp-bench"
        for name, value in (extra.get("headers") or {}).items():
            self.client.set_default_header(name, value)
        self.runs = kfp_server_api.RunServiceApi(self.client)
        self.pipelines = kfp_server_api.PipelineServiceApi(self.client)
        self.uploads = kfp_server_api.PipelineUploadServiceApi(self.client)
        self.experiments = kfp_server_api.ExperimentServiceApi(self.client)

    def close(self) -> None:
        self.client.rest_client.pool_manager.clear()

    # -- the timed call ------------------------------------------------------------------------
    def call(self, operation: str, fn, *args, poll_round: int = 0, **kwargs) -> Reply:
        """Call the generated method ``fn`` and time it to the last byte of the body."""
        attempt = 1
        while True:
            reply = self._once(operation, fn, args, kwargs, attempt, poll_round)
            self.on_call(reply.call)
            wait = None if reply.ok else self.retry.delay(operation, reply.call)
            if wait is None:
                return reply
            time.sleep(wait)
            attempt += 1

    def _once(self, operation, fn, args, kwargs, attempt, poll_round) -> Reply:
        start = time.time()
        t0 = time.perf_counter()
        status, body, error = 0, None, ""
        try:
            resp = fn(*args, _preload_content=False, _request_timeout=self.timeout, **kwargs)
            try:
                raw = resp.data
                status = resp.status
            finally:
                resp.release_conn()
            body = json.loads(raw) if raw else {}
        except kfp_server_api.ApiException as exc:
            status = exc.status or 0
            error = _api_error_text(exc)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            error = _transport_error_text(exc)
        except ValueError as exc:  # a 2xx body that is not JSON
            error = f"response is not JSON: {exc}"
        duration = time.perf_counter() - t0
        outcome = "error" if error else "ok"
        call = ApiCall(
            operation,
            start,
            duration,
            outcome,
            status,
            self.auth.redact(error)[:_MAX_ERROR] if error else "",
            attempt,
            poll_round,
        )
        return Reply(call, body if not error else None)

    # -- the calls ------------------------------------------------------------------------------
    def upload_pipeline(self, path: str, name: str, description: str) -> Reply:
        return self.call(
            "upload_pipeline",
            self.uploads.upload_pipeline,
            path,
            name=name,
            display_name=name,
            description=description,
            namespace=self.namespace,
        )

    def upload_pipeline_version(self, path: str, pipeline_id: str, name: str, desc: str) -> Reply:
        return self.call(
            "upload_pipeline_version",
            self.uploads.upload_pipeline_version,
            path,
            name=name,
            display_name=name,
            pipelineid=pipeline_id,
            description=desc,
        )

    def list_pipeline_versions(
        self, pipeline_id: str, page_token: str = "", filter: str | None = None
    ) -> Reply:
        """``filter``: a v2beta1 Filter as JSON text, e.g. to list only kfp-bench's versions."""
        return self.call(
            "list_pipeline_versions",
            self.pipelines.pipeline_service_list_pipeline_versions,
            pipeline_id,
            page_size=MAX_PAGE_SIZE,
            page_token=page_token or None,
            filter=filter,
        )

    def list_pipelines(self, page_token: str = "", shared: bool = False) -> Reply:
        """The namespace's pipelines; ``shared``: those of no namespace (multi-user KFP's shared
        pipelines) instead."""
        return self.call(
            "list_pipelines",
            self.pipelines.pipeline_service_list_pipelines,
            namespace=None if shared else self.namespace,
            page_size=MAX_PAGE_SIZE,
            page_token=page_token or None,
        )

    def create_experiment(self, name: str, description: str) -> Reply:
        body = {"display_name": name, "description": description}
        if self.namespace:
            body["namespace"] = self.namespace
        return self.call(
            "create_experiment", self.experiments.experiment_service_create_experiment, body
        )

    def list_experiments(self, page_token: str = "", page_size: int = MAX_PAGE_SIZE) -> Reply:
        return self.call(
            "list_experiments",
            self.experiments.experiment_service_list_experiments,
            namespace=self.namespace,
            page_size=page_size,
            page_token=page_token or None,
        )

    def create_run(self, body: dict) -> Reply:
        return self.call("create_run", self.runs.run_service_create_run, body)

    def list_runs(self, experiment_id: str, page_token: str = "", poll_round: int = 0) -> Reply:
        return self.call(
            "list_runs",
            self.runs.run_service_list_runs,
            experiment_id=experiment_id,
            page_size=MAX_PAGE_SIZE,
            page_token=page_token or None,
            poll_round=poll_round,
        )

    def get_run(self, run_id: str, poll_round: int = 0) -> Reply:
        return self.call("get_run", self.runs.run_service_get_run, run_id, poll_round=poll_round)

    def terminate_run(self, run_id: str) -> Reply:
        return self.call("terminate_run", self.runs.run_service_terminate_run, run_id)

    def delete_run(self, run_id: str) -> Reply:
        return self.call("delete_run", self.runs.run_service_delete_run, run_id)

    def delete_pipeline_version(self, pipeline_id: str, version_id: str) -> Reply:
        return self.call(
            "delete_pipeline_version",
            self.pipelines.pipeline_service_delete_pipeline_version,
            pipeline_id,
            version_id,
        )

    def delete_pipeline(self, pipeline_id: str) -> Reply:
        # cascade: KFP refuses to delete a pipeline that still has versions; a server that
        # predates the flag ignores it, and the driver deletes its version first anyway.
        return self.call(
            "delete_pipeline",
            self.pipelines.pipeline_service_delete_pipeline,
            pipeline_id,
            cascade=True,
        )

    def delete_experiment(self, experiment_id: str) -> Reply:
        return self.call(
            "delete_experiment",
            self.experiments.experiment_service_delete_experiment,
            experiment_id,
        )

    # -- before anything is created --------------------------------------------------------------
    def preflight(self) -> Reply:
        """One authenticated read: raises ``ConfigError`` for an unreachable host or refused
        credentials, so bad input is reported before anything is created."""
        reply = self.list_experiments(page_size=1)
        if reply.ok:
            return reply
        c = reply.call
        if c.status in (401, 403):
            what = "unauthorized" if c.status == 401 else "forbidden"
            raise ConfigError(
                f"--host {self.host}: HTTP {c.status} {what} with {self.auth.describe()}; "
                f"{AUTH_HINT}"
            )
        if c.status == 0:
            raise ConfigError(
                f"--host {self.host}: cannot reach the KFP API ({c.error}); check the address, "
                "e.g. kubectl port-forward -n kubeflow svc/ml-pipeline 8888:8888 and "
                "--host http://127.0.0.1:8888"
            )
        if c.status == 404:
            raise ConfigError(
                f"--host {self.host}: no KFP v2beta1 API there (GET /apis/v2beta1/experiments "
                "returned 404); give the address of ml-pipeline, KFP 2.x"
            )
        raise ConfigError(f"--host {self.host}: the KFP API answered {c.error}")


def check_host(host: str) -> str:
    """The base URL without a trailing slash; ``ConfigError`` unless it is http(s)://HOST[:PORT]."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(host)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise ConfigError(f"--host {host!r}: {exc}; give e.g. http://127.0.0.1:8888") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--host {host!r}: give a URL such as http://127.0.0.1:8888")
    return host.rstrip("/")


def _api_error_text(exc) -> str:
    """``HTTP 404 Not Found: <the server's message>``, without the response headers that
    ApiException's own text carries."""
    detail = ""
    body = getattr(exc, "body", None)
    if body:
        try:
            doc = json.loads(body)
            detail = doc.get("message") or doc.get("error") or "" if isinstance(doc, dict) else ""
        except (ValueError, TypeError):
            detail = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
        detail = " ".join(str(detail).split())[:200]
    reason = exc.reason or ""
    return f"HTTP {exc.status} {reason}" + (f": {detail}" if detail else "")


def _transport_error_text(exc) -> str:
    # MaxRetryError wraps the real cause; its own text repeats the URL and the pool.
    cause = getattr(exc, "reason", None) or exc
    text = str(cause)
    if "Connection refused" in text:
        text = "connection refused"
    elif isinstance(cause, urllib3.exceptions.TimeoutError | TimeoutError):
        text = "timed out"
    return f"{type(cause).__name__}: {text}"

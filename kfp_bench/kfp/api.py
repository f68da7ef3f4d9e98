"""A small timed client of the KFP v2beta1 REST API: every call becomes an ``ApiCall``.

Each method returns a ``Reply`` (the record, and the JSON body parsed into no models: the
driver's CPU is part of what is measured) and hands the record to ``on_call``; a failed call is
a record, never an exception. urllib3 never retries: every attempt is a record of its own,
retried by ``Backoff`` (docs/failures.md). Idempotent calls are repeated; a create is first
looked up by its unique name (``FINDS``) and adopted when found; a terminate or a delete that
failed is settled by a GET. A create whose answer is lost while the server still makes it can
be made twice: KFP has no idempotency key. ``stats.runs`` counts the failures from the records."""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import urllib3

from kfp_bench.errors import ConfigError
from kfp_bench.kfp import rest
from kfp_bench.kfp.auth import AUTH_HINT, Auth
from kfp_bench.kfp.errortext import api_error_text, error_message, transport_error_text  # noqa: F401
from kfp_bench.kfp.errortext import retry_after as retry_after_of
from kfp_bench.kfp.options import DEFAULT_RETRIES, DEFAULT_RETRY_MAX_WAIT, check_host  # noqa: F401
from kfp_bench.records import FINDS, ApiCall
from kfp_bench.redact import public_url

#: KFP answers at most 200 items a page (list/list.go:487-502 at 7b70c7b95f, validatePageSize:
#: a larger page_size is cut to 200). Every LIST here asks for 200 and follows next_page_token,
#: sending the first page's filter again with the token: KFP takes the token's own filter and
#: sort and refuses a token whose filter or sort_by differ from those sent beside it
#: (server/list_request_util.go:192-213).
MAX_PAGE_SIZE = 200
#: The states KFP's TerminateRun acts on (storage/run_store.go:1392-1399 at 7b70c7b95f); any
#: other is refused with 400.
TERMINABLE = frozenset({"PAUSED", "PENDING", "RUNNING", "RUNTIME_STATE_UNSPECIFIED", "", None})
_MAX_ERROR = 300


@dataclass(frozen=True, slots=True)
class Reply:
    """What a call returned: its (last) record and, when it succeeded, the JSON body.

    ``adopted``: a create failed, and the lookup before its retry found that the server had made
    it all the same; ``body`` is then the resource as listed, and ``call`` the failed attempt.
    ``gone``: a delete failed, and a GET after it found nothing: the resource is deleted.
    ``retry_after``: the seconds of a numeric Retry-After header on an error answer.
    ``finished``: a terminate answered 400, and a GET after it found the run already final (or
    CANCELING): ``body`` is the run as got, and the record is "ok" with status 400.
    """

    call: ApiCall
    body: dict | None
    adopted: bool = False
    retry_after: float | None = None
    gone: bool = False
    finished: bool = False

    @property
    def ok(self) -> bool:
        """The call did what it asked for (a create that was adopted, or a delete whose failed
        answer was followed by a GET answering 404, included)."""
        return self.call.outcome == "ok" or self.adopted or self.gone


#: Statuses worth another try: no answer at all (0), rate limited (429), a server-side failure.
RETRY_STATUSES = frozenset({0, 429, 500, 502, 503, 504})
#: A Retry-After longer than this (s) is cut to it: a benchmark does not sleep for minutes.
RETRY_AFTER_CAP = 30.0


def idempotent(operation: str) -> bool:
    """Whether repeating ``operation`` is harmless. Terminate is not: KFP answers 400 to a second
    one (storage/run_store.go:1406-1407 at 7b70c7b95f); it is retried after a check instead."""
    return operation.startswith(("get_", "list_", "delete_", "find_", "check_"))


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter, for idempotent calls and looked-up creates.

    Args:
        retries: attempts after the first; 0 never retries (and a 404 on a delete stays an error).
        base: the first retry waits up to this long (s); each further one up to twice as long.
        cap: no wait is longer (s), but for a Retry-After (up to ``RETRY_AFTER_CAP``).
        statuses: the statuses tried again.
        rng: the jitter's random source.
    """

    retries: int = DEFAULT_RETRIES
    base: float = 0.2
    cap: float = DEFAULT_RETRY_MAX_WAIT
    statuses: frozenset = RETRY_STATUSES
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(
        self, operation: str, call: ApiCall, retry_after: float | None = None
    ) -> float | None:
        """Seconds to wait before attempt ``call.attempt + 1`` of ``operation``; None: give up."""
        if call.attempt > self.retries or call.status not in self.statuses:
            return None
        if not (idempotent(operation) or operation in FINDS):
            return None
        wait = self.rng.uniform(0.0, min(self.cap, self.base * 2 ** (call.attempt - 1)))
        if retry_after is not None and call.status in (429, 503):
            wait = max(wait, min(retry_after, RETRY_AFTER_CAP))
        return wait


#: A lookup's answer: (whether it could tell, the resource found or None).
Found = tuple[bool, dict | None]
#: How a create is looked up before its retry: the LIST it is found in, and the key that filters
#: it by name ("name" filters pipelines by name on every KFP 2.x; display_name not on all).
LOOKUPS = {
    "upload_pipeline": ("pipeline_service_list_pipelines", "name"),
    "upload_pipeline_version": ("pipeline_service_list_pipeline_versions", "name"),
    "create_experiment": ("experiment_service_list_experiments", "display_name"),
    "create_run": ("run_service_list_runs", "display_name"),
}


class KfpApi:
    """The KFP v2beta1 calls the driver makes, timed.

    Args:
        host: base URL of the KFP API, e.g. http://127.0.0.1:8888.
        auth: credentials and namespace.
        pool_size: connections kept to the host; at least the number of calls made at once.
        timeout: seconds each call may take before it is recorded as failed.
        on_call: receives each ``ApiCall`` record, from whichever thread made the call.
        retry: the retry policy; ``Backoff()`` by default, ``Backoff(retries=0)`` never retries.
        sleep: waits between attempts (tests pass their own); by default it ends early, and the
            retry is given up, once ``stop_retrying`` is called.
    """

    def __init__(
        self,
        host: str,
        *,
        auth: Auth | None = None,
        pool_size: int = 8,
        timeout: float = 30.0,
        on_call: Callable[[ApiCall], None] | None = None,
        retry: Backoff | None = None,
        sleep: Callable[[float], object] | None = None,
    ):
        self.base = check_host(host)  # what requests go to; ``host`` is fit to show
        self.host = public_url(self.base)
        self.auth = (auth or Auth()).resolved()
        self.namespace = self.auth.namespace or None
        self.timeout = timeout
        self.on_call = on_call or (lambda call: None)
        self.retry = retry if retry is not None else Backoff()
        self._stopping = threading.Event()
        self.sleep = sleep or self._stopping.wait
        transport = self.auth.configure(self.base)
        self.client = rest.Rest(self.base, transport, pool_size=pool_size, timeout=timeout)

    @classmethod
    def of(cls, opts, pool_size: int = 8, on_call=None) -> KfpApi:
        """The client of a ``RunsOptions`` or ``CleanupOptions``: its host, auth, request
        timeout and retry policy (``retries``, ``retry_max_wait``)."""
        retry = Backoff(retries=opts.retries, cap=opts.retry_max_wait)
        kw = {"pool_size": pool_size, "on_call": on_call, "retry": retry}
        return cls(opts.host, auth=opts.auth, timeout=opts.request_timeout, **kw)

    def close(self) -> None:
        self.client.close()

    def stop_retrying(self) -> None:
        """Give up every retry now waiting (on Ctrl-C); ``resume_retrying`` undoes it."""
        self._stopping.set()

    def resume_retrying(self) -> None:
        self._stopping.clear()

    def drain(self, pool) -> None:
        """After a Ctrl-C: the calls ``pool`` (an executor) already sent finish (within the
        request timeout), those waiting to retry give up, and those not started never start."""
        self.stop_retrying()
        try:
            pool.shutdown(wait=True, cancel_futures=True)
        finally:
            self.resume_retrying()

    # -- the timed call ------------------------------------------------------------------------
    def call(
        self,
        operation: str,
        endpoint: str,
        /,
        *args,
        poll_round: int = 0,
        find: Callable[[], Found] | None = None,
        retry: Backoff | None = None,
        settle: Callable[[Reply], Reply] | None = None,
        **kwargs,
    ) -> Reply:
        """Call ``endpoint`` (one of ``rest.CALLS``: one request), timed to the last byte of the
        body, and retry it as the policy (``retry``, else the client's) says; a create needs
        ``find``, its lookup. ``settle`` may turn an attempt's answer into another before it is
        recorded."""
        policy = retry or self.retry
        attempt = 1
        while True:
            reply = self._once(operation, endpoint, args, kwargs, attempt, poll_round)
            if policy.retries and reply.call.status == 404 and operation.startswith("delete_"):
                reply = _gone(reply)
            if settle is not None:
                reply = settle(reply)
            self.on_call(reply.call)
            if reply.ok:
                return reply
            wait = policy.delay(operation, reply.call, reply.retry_after)
            if wait is None or (operation in FINDS and find is None):
                return reply  # a non-idempotent call is retried only after its lookup
            self.sleep(wait)
            if self._stopping.is_set():
                return reply
            if find is not None:
                known, item = find()
                if not known:  # it may exist: creating it again could make a duplicate
                    return reply
                if item is not None:
                    return Reply(reply.call, item, adopted=True)
            attempt += 1

    def _once(self, operation, endpoint, args, kwargs, attempt, poll_round) -> Reply:
        start = time.time()
        t0 = time.perf_counter()
        status, body, error, retry_after = 0, None, "", None
        try:
            resp = self.client.call(endpoint, *args, **kwargs)
            status = resp.status
            if 200 <= status <= 299:
                body = json.loads(resp.data) if resp.data else {}
            else:  # what kfp_server_api raised as ApiException
                error = api_error_text(resp)
                retry_after = retry_after_of(resp)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            error = transport_error_text(exc)
        except ValueError as exc:  # a 2xx body that is not JSON
            error = f"response is not JSON: {exc}"
        duration = time.perf_counter() - t0
        error = self.auth.redact(error)[:_MAX_ERROR] if error else ""
        outcome = "error" if error else "ok"
        call = ApiCall(operation, start, duration, outcome, status, error, attempt, poll_round)
        return Reply(call, body if not error else None, retry_after=retry_after)

    def _finder(self, create: str, name: str, *args, operation: str = "", **kw):
        """The lookup of ``create`` (``LOOKUPS``): one LIST filtered to its key EQUALS ``name``,
        recorded as ``operation`` (``FINDS[create]`` by default). Known absent only when the
        page holds every match (a server that ignores the filter and pages on cannot tell)."""
        call, key = LOOKUPS[create]
        items = call.partition("_list_")[2]
        pred = {"key": key, "operation": "EQUALS", "string_value": name}
        query = json.dumps({"predicates": [pred]})
        operation = operation or FINDS[create]

        def find() -> Found:
            r = self.call(operation, call, *args, filter=query, page_size=MAX_PAGE_SIZE, **kw)
            if not r.ok:
                return False, None
            for item in r.body.get(items) or ():
                if name in (item.get("display_name"), item.get("name")):
                    return True, item
            return not r.body.get("next_page_token"), None

        return find

    # -- the calls ------------------------------------------------------------------------------
    def upload_pipeline(self, path: str, name: str, description: str) -> Reply:
        find = self._finder("upload_pipeline", name, namespace=self.namespace)
        ns = self.namespace
        return self._upload(
            "upload_pipeline", path, name, find, namespace=ns, description=description
        )

    def upload_pipeline_version(self, path: str, pipeline_id: str, name: str, desc: str) -> Reply:
        find = self._finder("upload_pipeline_version", name, pipeline_id)
        query = {"pipelineid": pipeline_id, "description": desc}
        return self._upload("upload_pipeline_version", path, name, find, **query)

    def _upload(self, endpoint: str, path: str, name: str, find, **query) -> Reply:
        """Upload the file ``path`` as ``name``, its display name too."""
        names = {"name": name, "display_name": name}
        return self.call(endpoint, endpoint, upload=path, **names, **query, find=find)

    def _list(self, endpoint: str, *ids, page_token: str = "", **query) -> Reply:
        """One page of the LIST ``endpoint`` (recorded as ``list_<items>``): ``MAX_PAGE_SIZE``
        items unless ``query`` says otherwise."""
        query.setdefault("page_size", MAX_PAGE_SIZE)
        operation = "list_" + endpoint.partition("_list_")[2]
        return self.call(operation, endpoint, *ids, page_token=page_token or None, **query)

    def list_pipeline_versions(
        self, pipeline_id: str, page_token: str = "", filter: str | None = None
    ) -> Reply:
        """``filter``: a v2beta1 Filter as JSON text, e.g. to list only kfp-bench's versions."""
        endpoint = "pipeline_service_list_pipeline_versions"
        return self._list(endpoint, pipeline_id, page_token=page_token, filter=filter)

    def list_pipelines(self, page_token: str = "", shared: bool = False) -> Reply:
        """The namespace's pipelines; ``shared``: those of no namespace (multi-user KFP's shared
        pipelines) instead."""
        namespace = None if shared else self.namespace
        return self._list(
            "pipeline_service_list_pipelines", page_token=page_token, namespace=namespace
        )

    def create_experiment(self, name: str, description: str) -> Reply:
        body = {"display_name": name, "description": description}
        if self.namespace:
            body["namespace"] = self.namespace
        find = self._finder("create_experiment", name, namespace=self.namespace)
        return self.call(
            "create_experiment", "experiment_service_create_experiment", body=body, find=find
        )

    def list_experiments(self, page_token: str = "", page_size: int = MAX_PAGE_SIZE) -> Reply:
        query = {"page_token": page_token, "page_size": page_size, "namespace": self.namespace}
        return self._list("experiment_service_list_experiments", **query)

    def find_experiment(self, name: str) -> Found:
        """The namespace's experiment named ``name``: (whether the LIST could tell, it or None)."""
        find = self._finder(
            "create_experiment", name, operation="list_experiments", namespace=self.namespace
        )
        return find()

    def create_run(self, body: dict) -> Reply:
        """``body`` needs a ``display_name`` unique in its experiment: a retry looks it up."""
        find = self._finder(
            "create_run",
            body["display_name"],
            experiment_id=body.get("experiment_id") or None,
            namespace=None if body.get("experiment_id") else self.namespace,
        )
        return self.call("create_run", "run_service_create_run", body=body, find=find)

    def list_runs(self, experiment_id: str, page_token: str = "", poll_round: int = 0) -> Reply:
        query = {"experiment_id": experiment_id, "page_token": page_token}
        return self._list("run_service_list_runs", **query, poll_round=poll_round)

    def experiment_runs(self, experiment_id: str) -> list[dict] | None:
        """Every run in experiment ``experiment_id`` (anyone's), page by page; None if a page
        could not be read: whether the experiment is empty, and may be deleted, is then unknown."""
        failed: list[str] = []
        runs = list(self.pages(lambda token: self.list_runs(experiment_id, token), "runs", failed))
        return None if failed else runs

    @staticmethod
    def pages(list_call: Callable[[str], Reply], key: str, failed: list[str]):
        """Every item ``key`` of a LIST (``list_call(page_token)``), page by page; a page that
        fails ends it, its operation and error appended to ``failed``."""
        token = ""
        while True:
            r = list_call(token)
            if not r.ok:
                failed.append(f"{r.call.operation}: {r.call.error}")
                return
            yield from r.body.get(key) or ()
            token = r.body.get("next_page_token") or ""
            if not token:
                return

    def list_runs_named(self, name_part: str, page_token: str = "") -> Reply:
        """LIST the namespace's runs (every experiment's) whose name holds ``name_part``: how a
        cleanup finds runs by benchmark id, even those whose experiment is gone."""
        return self._named("run_service_list_runs", name_part, page_token)

    def list_recurring_runs(self, name_part: str, page_token: str = "") -> Reply:
        """LIST the namespace's recurring runs whose name holds ``name_part``."""
        return self._named("recurring_run_service_list_recurring_runs", name_part, page_token)

    def _named(self, endpoint: str, name_part: str, page_token: str) -> Reply:
        query = {"namespace": self.namespace, "filter": _name_holds(name_part)}
        return self._list(endpoint, page_token=page_token, **query)

    def get_run(self, run_id: str, poll_round: int = 0) -> Reply:
        return self.call("get_run", "run_service_get_run", run_id, poll_round=poll_round)

    def terminate_run(self, run_id: str) -> Reply:
        """Terminate a run. KFP refuses (400) a run no longer PAUSED, PENDING or RUNNING
        (storage/run_store.go:1387-1410 at 7b70c7b95f): a GET then tells a finished run
        (``Reply.finished``, an "ok" call) from a refusal; a failed attempt is retried only while
        a GET (``FINDS["terminate_run"]``) shows the run running."""

        def check() -> Found:
            r = self.call(FINDS["terminate_run"], "run_service_get_run", run_id)
            if not r.ok:
                return False, None
            return True, None if r.body.get("state") in TERMINABLE else r.body

        def settle(reply: Reply) -> Reply:
            if reply.call.status != 400:
                return reply
            got = self.get_run(run_id)
            if not got.ok or got.body.get("state") in TERMINABLE:
                return reply  # refused for another reason: a failed call
            call = dataclasses.replace(reply.call, outcome="ok", error="")
            return Reply(call, got.body, finished=True)

        return self.call(
            "terminate_run", "run_service_terminate_run", run_id, find=check, settle=settle
        )

    def delete_recurring_run(self, recurring_run_id: str) -> Reply:
        return self._delete("recurring_run", recurring_run_id)

    def delete_run(self, run_id: str) -> Reply:
        return self._delete("run", run_id)

    def delete_pipeline_version(self, pipeline_id: str, version_id: str) -> Reply:
        return self._delete("pipeline_version", pipeline_id, version_id, service="pipeline")

    def delete_pipeline(self, pipeline_id: str) -> Reply:
        # cascade: KFP refuses to delete a pipeline that still has versions; a server that
        # predates the flag ignores it, and the driver deletes its version first anyway.
        return self._delete("pipeline", pipeline_id, cascade=True)

    def delete_experiment(self, experiment_id: str) -> Reply:
        return self._delete("experiment", experiment_id)

    def _delete(self, kind: str, *ids: str, service: str = "", **kwargs) -> Reply:
        """Delete the ``kind`` of ``ids`` (``<service>_service_delete_<kind>``); when it still
        failed after its retries (with retries on), a GET of the same resource: a 404 there
        means it is gone (the server deleted it and its answer was lost), and the delete counts
        as done (``Reply.gone``). The GET is a record of its own."""
        prefix = f"{service or kind}_service_"
        reply = self.call(f"delete_{kind}", f"{prefix}delete_{kind}", *ids, **kwargs)
        if reply.ok or not self.retry.retries:  # no retries: a 404 stays an error, unchecked
            return reply
        check = self.call(f"get_{kind}", f"{prefix}get_{kind}", *ids)
        if check.call.status == 404:
            return Reply(reply.call, {}, gone=True)
        return reply

    # -- before anything is created --------------------------------------------------------------
    def preflight(self) -> Reply:
        """One authenticated read: raises ``ConfigError`` for an unreachable host or refused
        credentials, so bad input is reported before anything is created."""
        # A 429 or 5xx is tried again; no answer at all is most likely a wrong address, so it is
        # reported at once rather than after the whole backoff.
        retry = dataclasses.replace(self.retry, statuses=self.retry.statuses - {0})
        query = {"namespace": self.namespace, "page_size": 1, "retry": retry}
        reply = self._list("experiment_service_list_experiments", **query)
        if reply.ok:
            return reply
        c = reply.call
        if c.status in (401, 403):
            what = "unauthorized" if c.status == 401 else "forbidden"
            # a 401 is the token: say which one, and what it claims (expiry, audience)
            why = f" ({self.auth.why_refused()})" if c.status == 401 else ""
            raise ConfigError(
                f"--host {self.host}: HTTP {c.status} {what} with {self.auth.describe()}{why}; "
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


def _name_holds(part: str) -> str:
    """A LIST filter: names that hold ``part`` (the caller still checks each name itself). KFP
    maps the key "name" to a run's and a recurring run's display name (backend/src/apiserver/
    model/run.go runAPIToModelFieldMap, model/job.go, at 7b70c7b95f)."""
    pred = {"key": "name", "operation": "IS_SUBSTRING", "string_value": part}
    return json.dumps({"predicates": [pred]})


def _gone(reply: Reply) -> Reply:
    """A delete answered 404: what it should delete is gone (an earlier attempt, or someone
    else, deleted it), so the call is done; the record keeps the 404."""
    call = dataclasses.replace(reply.call, outcome="ok", error="")
    return Reply(call, {})

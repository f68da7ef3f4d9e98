"""Options of a runs benchmark and of a cleanup sweep, and their validation.

``RunsOptions`` and ``CleanupOptions`` hold every knob; their docstrings are the source of the
CLI's help text. ``validate()`` raises ``ConfigError`` naming the flag and the fix before anything
is sent. The benchmark id ties everything a benchmark creates together: it is in the name of the
pipeline, the experiment and every run, which is how cleanup finds them, and only them.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.auth import Auth
from kfp_bench.names import check_dns1123_label
from kfp_bench.redact import public_url

#: Every resource a benchmark creates is named NAME_PREFIX + benchmark id (+ "-" + run number).
NAME_PREFIX = "kfp-bench-"
ON_TIMEOUT = ("terminate", "leave")
TASK_DETAILS = ("list", "get")
DEFAULT_MAX_RUNS = 1000
#: At 30% injected errors a call then still fails once in ~50,000 (0.3**9), after waits of at
#: most ~21 s in all; at 4 retries it would be once in ~400, a few lost runs per 1000-run benchmark.
DEFAULT_RETRIES = 8
DEFAULT_RETRY_MAX_WAIT = 5.0
MAX_RETRIES = 20


def new_benchmark_id() -> str:
    """A short id that sorts by time: UTC date and time, then 4 random hex digits."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def check_benchmark_id(bid: str, flag: str = "--benchmark-id") -> str:
    """The id, if it can go into the names of what the benchmark creates: a DNS-1123 label of up
    to 40 characters (KFP on Kubernetes makes object names of pipeline and run names)."""
    if not bid:
        raise ConfigError(f"{flag} {bid!r}: give an id, e.g. 20250101-120000-ab12")
    return check_dns1123_label(bid, flag, max_len=40)


def check_retries(retries, max_wait: float) -> None:
    """``ConfigError`` for a --retries or --retry-max-wait out of range."""
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
        raise ConfigError(
            f"--retries {retries!r}: give 0 (never retry) to {MAX_RETRIES}, e.g. {DEFAULT_RETRIES}"
        )
    if not 0 < max_wait <= 300:
        raise ConfigError(
            f"--retry-max-wait {max_wait}: give seconds above 0 and at most 300, e.g. "
            f"{DEFAULT_RETRY_MAX_WAIT:g}"
        )


def parse_params(text: str | None) -> dict:
    """The --params JSON object; ``ConfigError`` for anything else."""
    if not text:
        return {}
    try:
        params = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"--params: not valid JSON ({exc}); give an object, e.g. --params '{{\"a\": 1}}'"
        ) from None
    if not isinstance(params, dict):
        raise ConfigError(
            f"--params: a JSON {type(params).__name__}, not an object; e.g. --params '{{\"a\": 1}}'"
        )
    return params


@dataclass(frozen=True)
class RunsOptions:
    """What to upload, how many runs to spawn, and how to watch them.

    Attributes:
        host: base URL of the KFP API server, e.g. http://127.0.0.1:8888 (a port-forward to
            svc/ml-pipeline).
        pipeline: the compiled pipeline: a file, an http(s):// URL (fetched here) or
            gs://BUCKET/OBJECT.
        num_runs: number of runs to create.
        create_concurrency: runs created at once (the notebook creates them one after another).
        poll_interval: seconds between poll rounds; each round LISTs the experiment's runs in
            pages of 200.
        poll_jitter: each interval is varied by up to this fraction, so that many drivers do not
            poll in step.
        timeout: seconds from the first create after which unfinished runs are given up.
        on_timeout: what happens to runs unfinished at the timeout: terminate, or leave them
            running (and out of the cleanup).
        params: run parameters, a JSON object; each must be declared by the pipeline.
        get_sample: runs fetched with a GET in each poll round, to measure GET latency on its own;
            0 for none.
        task_details: where per-task durations come from: list (what LIST returns) or get (one
            GET per finished run whose LIST entry has none).
        max_runs: the cap on --num-runs.
        pipeline_id: upload the manifest as a new version of this existing pipeline rather than as
            a new pipeline; cleanup then deletes only that version.
        benchmark_id: the id carried by every name this benchmark creates; new when empty.
        keep: leave the runs, pipeline and experiment in place (clean up later with
            kfp-bench cleanup --benchmark-id).
        request_timeout: seconds each API call may take before it is recorded as failed.
        retries: times a failed API call is tried again (no answer, HTTP 429 or 5xx), with
            exponential backoff and jitter; a create only after a lookup by its name found that
            it was not made. 0: never.
        retry_max_wait: the longest wait between two tries, in seconds (a server's Retry-After
            may ask for up to 30).
        metrics_url: the KFP API server's Prometheus endpoint, scraped before and after;
            HOST/metrics when empty, "none" to skip.
        auth: credentials and namespace.
    """

    host: str
    pipeline: str
    num_runs: int = 10
    create_concurrency: int = 16
    poll_interval: float = 2.0
    poll_jitter: float = 0.2
    timeout: float = 600.0
    on_timeout: str = "terminate"
    params: dict = field(default_factory=dict)
    get_sample: int = 1
    task_details: str = "list"
    max_runs: int = DEFAULT_MAX_RUNS
    pipeline_id: str = ""
    benchmark_id: str = ""
    keep: bool = False
    request_timeout: float = 30.0
    retries: int = DEFAULT_RETRIES
    retry_max_wait: float = DEFAULT_RETRY_MAX_WAIT
    metrics_url: str = ""
    auth: Auth = field(default_factory=Auth)

    def validate(self) -> RunsOptions:
        """Check every option; raise ``ConfigError`` naming the flag and the fix."""
        if self.num_runs <= 0:
            raise ConfigError(f"--num-runs {self.num_runs}: give at least 1 run")
        if self.num_runs > self.max_runs:
            raise ConfigError(
                f"--num-runs {self.num_runs} is above the cap of {self.max_runs}: lower it, or "
                f"raise the cap with --max-runs {self.num_runs} if the cluster can take it"
            )
        if self.create_concurrency < 1:
            raise ConfigError(f"--create-concurrency {self.create_concurrency}: at least 1")
        if not self.poll_interval > 0:
            raise ConfigError(f"--poll-interval {self.poll_interval}: give seconds above 0")
        if not 0 <= self.poll_jitter < 1:
            raise ConfigError(f"--poll-jitter {self.poll_jitter}: give a fraction in [0, 1)")
        if not self.timeout > 0:
            raise ConfigError(f"--timeout {self.timeout}: give seconds above 0")
        if self.on_timeout not in ON_TIMEOUT:
            raise ConfigError(f"--on-timeout {self.on_timeout!r}: use terminate or leave")
        if self.task_details not in TASK_DETAILS:
            raise ConfigError(f"--task-details {self.task_details!r}: use list or get")
        if self.get_sample < 0:
            raise ConfigError(f"--get-sample {self.get_sample}: give 0 or more")
        if not self.request_timeout > 0:
            raise ConfigError(f"--request-timeout {self.request_timeout}: give seconds above 0")
        check_retries(self.retries, self.retry_max_wait)
        check_host(self.host)
        if not isinstance(self.params, dict):
            raise ConfigError("--params: give a JSON object")
        if self.benchmark_id:
            check_benchmark_id(self.benchmark_id)
        self.auth.resolved()
        return self

    def redacted(self) -> dict:
        """The options fit for a report (the token file's name, never its content)."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "auth"}
        d["auth"] = self.auth.describe()
        d["host"], d["metrics_url"] = public_url(self.host), public_url(self.metrics_url)
        d["pipeline"] = public_url(self.pipeline)
        return d

    def flags(self) -> list[str]:
        """The flags these options put on the stats: "runs-cap-raised" past the default cap."""
        return ["runs-cap-raised"] if self.max_runs > DEFAULT_MAX_RUNS else []


@dataclass(frozen=True)
class CleanupOptions:
    """What a cleanup sweep deletes: only what kfp-bench created, selected by id or age.

    Attributes:
        host: base URL of the KFP API server.
        benchmark_id: delete what the benchmark with this id created.
        older_than: delete what any kfp-bench benchmark created longer ago than this (e.g. 2h,
            1d): orphans of benchmarks that crashed or were stopped.
        dry_run: list what would be deleted, delete nothing.
        concurrency: deletes made at once.
        request_timeout: seconds each API call may take.
        retries: times a failed API call is tried again (no answer, HTTP 429 or 5xx), with
            exponential backoff and jitter; a delete that finds nothing left counts as done. 0:
            never.
        retry_max_wait: the longest wait between two tries, in seconds.
        auth: credentials and namespace.
    """

    host: str
    benchmark_id: str = ""
    older_than: float = 0.0
    dry_run: bool = False
    concurrency: int = 8
    request_timeout: float = 30.0
    retries: int = DEFAULT_RETRIES
    retry_max_wait: float = DEFAULT_RETRY_MAX_WAIT
    auth: Auth = field(default_factory=Auth)

    def validate(self) -> CleanupOptions:
        if not self.benchmark_id and not self.older_than:
            raise ConfigError(
                "cleanup: give --benchmark-id ID (one benchmark) or --older-than AGE (orphans)"
            )
        if self.benchmark_id:
            check_benchmark_id(self.benchmark_id)
        if self.older_than < 0:
            raise ConfigError(f"--older-than {self.older_than}: give a positive age, e.g. 2h")
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency {self.concurrency}: at least 1")
        check_retries(self.retries, self.retry_max_wait)
        self.auth.resolved()
        return self


def check_host(host: str) -> str:
    """The base URL without a trailing slash; ``ConfigError`` unless it is http(s)://HOST[:PORT].
    Here, not in ``api``, so that a step without urllib3 (a load worker checking its start mark,
    ``kfp_bench.kfp.start_mark``) can check a host."""
    try:
        parts = urlsplit(host)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise ConfigError(
            f"--host {public_url(host)!r}: {exc}; give e.g. http://127.0.0.1:8888"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--host {public_url(host)!r}: give a URL such as http://127.0.0.1:8888")
    return host.rstrip("/")

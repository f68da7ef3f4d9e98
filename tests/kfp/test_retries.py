"""Retries (issue 7): idempotent calls retried with backoff and jitter, creates looked up by name
and never made twice, retries counted and reported; the benchmark completes at 30% API errors.

Against the real local KFP server in a subprocess (``--error-rate``, ``--error-after``), a closed
port and a loopback server that answers 429 with Retry-After. The backoff schedule is checked with
an injected random source and sleep, never the wall clock.
"""

from __future__ import annotations

import collections
import http.server
import io
import json
import random
import threading

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.jsonl import read
from kfp_bench.kfp.api import RETRY_AFTER_CAP, Backoff, KfpApi
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.options import CleanupOptions, RunsOptions
from kfp_bench.records import ApiCall, RunRecord
from kfp_bench.report import runs as runs_report
from kfp_bench.report import tables
from kfp_bench.sandbox.process import free_port
from tests.conftest import run_cli
from tests.kfp.conftest import HELLO, _start, kfp_client


def _opts(url, **kw) -> RunsOptions:
    base = dict(host=url, pipeline=str(HELLO), num_runs=10, create_concurrency=4,
                poll_interval=0.2, timeout=120, get_sample=1)  # fmt: skip
    base.update(kw)
    return RunsOptions(**base)


def _leftovers(url: str, bid: str) -> dict:
    """What carries the benchmark id, as a dry-run sweep (itself retrying) finds it."""
    report = sweep(CleanupOptions(url, benchmark_id=bid, dry_run=True))
    assert report["failed"] == [], report["failed"]
    return {
        "experiments": len(report["experiments"]),
        "pipelines": len(report["pipelines"]),
        "runs": report["runs"],
    }


NONE_LEFT = {"experiments": 0, "pipelines": 0, "runs": 0}


class _TopOfRange:
    """A random source whose jitter is always the top of the range: the envelope itself."""

    def uniform(self, low: float, high: float) -> float:
        return high


def _failed(op: str, status: int, attempt: int = 1) -> ApiCall:
    return ApiCall(op, 0.0, 0.01, "error", status, f"HTTP {status}", attempt)


# -- the schedule ---------------------------------------------------------------------------------
def test_backoff_doubles_up_to_the_cap_and_stops_after_the_retries():
    policy = Backoff(retries=8, base=0.2, cap=5.0, rng=_TopOfRange())
    waits = [policy.delay("get_run", _failed("get_run", 503, n)) for n in range(1, 10)]
    assert waits[:8] == pytest.approx([0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])
    assert waits[8] is None  # the 9th attempt failed: 8 retries were all there was
    assert Backoff(retries=0).delay("get_run", _failed("get_run", 503)) is None


def test_backoff_is_full_jitter_within_the_envelope():
    policy = Backoff(retries=8, base=0.2, cap=5.0, rng=random.Random(3))
    for attempt in range(1, 9):
        top = min(5.0, 0.2 * 2 ** (attempt - 1))
        waits = [policy.delay("list_runs", _failed("list_runs", 429, attempt)) for _ in range(200)]
        assert all(0.0 <= w <= top for w in waits)
        # spread over the whole range, not one fixed step: many drivers do not retry in step
        assert len(set(waits)) == 200 and min(waits) < top / 4 and max(waits) > top * 3 / 4


def test_retry_after_is_honoured_and_capped():
    policy = Backoff(retries=4, rng=random.Random(1))
    assert policy.delay("get_run", _failed("get_run", 429), retry_after=3.0) == 3.0
    assert policy.delay("get_run", _failed("get_run", 503), retry_after=7.0) == 7.0
    assert policy.delay("get_run", _failed("get_run", 429), retry_after=900) == RETRY_AFTER_CAP
    # only 429 and 503 carry a meaningful Retry-After; elsewhere the backoff alone decides
    assert policy.delay("get_run", _failed("get_run", 500), retry_after=9.0) <= 0.2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 412, 501])
def test_other_statuses_are_never_retried(status):
    policy = Backoff(retries=8)
    for op in ("get_run", "list_runs", "delete_run", "create_run", "terminate_run"):
        assert policy.delay(op, _failed(op, status)) is None, (op, status)


@pytest.mark.parametrize("status", [0, 429, 500, 502, 503, 504])
def test_which_operations_are_retried(status):
    policy = Backoff(retries=8)
    for op in ("get_run", "list_runs", "delete_pipeline", "terminate_run", "find_run"):
        assert policy.delay(op, _failed(op, status)) is not None, op
    # a create only with a lookup (KfpApi.call's find); an unknown write never
    assert policy.delay("create_run", _failed("create_run", status)) is not None
    assert policy.delay("archive_run", _failed("archive_run", status)) is None


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"retries": -1}, "--retries -1: give 0 (never retry) to 20"),
        ({"retries": 21}, "--retries 21"),
        ({"retries": 1.5}, "--retries 1.5"),
        ({"retry_max_wait": 0}, "--retry-max-wait 0: give seconds above 0"),
    ],
)
def test_bad_retry_options_are_named(kw, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        _opts("http://127.0.0.1:1", **kw).validate()
    with pytest.raises(ConfigError, match=r"--retr"):
        CleanupOptions("http://127.0.0.1:1", benchmark_id="x", **kw).validate()


# -- single calls against real servers ------------------------------------------------------------
def test_no_answer_is_retried_but_not_at_preflight():
    """A closed port: each attempt a record (status 0), the waits from the injected sleep."""
    url = f"http://127.0.0.1:{free_port()}"
    calls, waits = [], []
    api = KfpApi(url, on_call=calls.append, sleep=waits.append, retry=Backoff(retries=3))
    reply = api.list_runs("e1")
    assert not reply.ok and [c.attempt for c in calls] == [1, 2, 3, 4]
    assert all(c.status == 0 and "refused" in c.error for c in calls) and len(waits) == 3
    calls.clear()
    with pytest.raises(ConfigError, match="cannot reach the KFP API"):
        api.preflight()  # a wrong address is told at once, not after the backoff
    assert len(calls) == 1


def test_stop_retrying_gives_up_at_once():
    """What Ctrl-C does to the creates waiting to retry: the default sleep (an Event) returns at
    once, and the call gives up with its failed attempt."""
    calls = []
    api = KfpApi(f"http://127.0.0.1:{free_port()}", on_call=calls.append)
    api.stop_retrying()
    assert not api.get_run("r1").ok and [c.attempt for c in calls] == [1]
    api.resume_retrying()
    calls.clear()
    api.sleep = lambda s: None  # the test's own, so that the 8 waits cost nothing
    assert not api.get_run("r1").ok and len(calls) == 9


class _RateLimited(http.server.BaseHTTPRequestHandler):
    """Answers 429 with a Retry-After the first ``limited`` times, then an empty list: the local
    KFP server sends no Retry-After, so this loopback stand-in does."""

    limited = 2
    retry_after = "2"
    seen = 0

    def log_message(self, *a):
        pass

    def do_GET(self):
        cls = type(self)
        cls.seen += 1
        limited = cls.seen <= cls.limited
        body = b'{"code": 8, "message": "slow down"}' if limited else b'{"experiments": []}'
        self.send_response(429 if limited else 200)
        if limited:
            self.send_header("Retry-After", cls.retry_after)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("header, wait", [("2", 2.0), ("120", RETRY_AFTER_CAP)])
def test_retry_after_from_the_server_sets_the_wait(header, wait):
    handler = type("H", (_RateLimited,), {"retry_after": header, "seen": 0})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    calls, waits = [], []
    try:
        api = KfpApi(f"http://127.0.0.1:{server.server_port}", on_call=calls.append,
                     sleep=waits.append)  # fmt: skip
        reply = api.list_experiments()
    finally:
        server.shutdown()
    assert reply.ok and reply.body == {"experiments": []}
    assert [(c.attempt, c.status) for c in calls] == [(1, 429), (2, 429), (3, 200)]
    assert waits == [wait, wait]


@pytest.fixture(scope="module")
def plain_server():
    with _start(simulate="all:fixed(0.2)", max_parallel_runs=8) as s:
        yield s


def test_a_create_refused_with_400_is_not_retried(plain_server):
    calls = []
    api = KfpApi(plain_server.url, on_call=calls.append, sleep=lambda s: None)
    exp = api.create_experiment("kfp-bench-retry-400", "Created by kfp-bench, test")
    assert exp.ok
    body = {"display_name": "kfp-bench-retry-400-00000", "experiment_id": exp.body["experiment_id"],
            "pipeline_spec": {"not": "a spec"}, "runtime_config": {"parameters": [1]}}  # fmt: skip
    reply = api.create_run(body)
    assert not reply.ok and reply.call.status == 400 and not reply.adopted
    runs = [c for c in calls if c.operation in ("create_run", "find_run")]
    assert [(c.operation, c.attempt) for c in runs] == [("create_run", 1)]
    assert api.delete_experiment(exp.body["experiment_id"]).ok


def test_a_delete_of_what_is_gone_is_done_only_when_retrying(plain_server):
    missing = "00000000-0000-0000-0000-000000000000"
    gone = KfpApi(plain_server.url).delete_run(missing)
    assert gone.ok and gone.call.status == 404 and gone.call.error == ""
    old = KfpApi(plain_server.url, retry=Backoff(retries=0)).delete_run(missing)
    assert not old.ok and old.call.status == 404 and old.call.outcome == "error"


# -- the benchmark at 30% errors ------------------------------------------------------------------
@pytest.fixture(scope="module")
def faulty_server():
    """30% of every API call answered 503 or 429, on top of 5 ms latency.

    The seed's draws hold no more than 4 faults in a row in the first 600: at the end of a
    benchmark one call may be the server's only traffic, and then it gets consecutive draws (seed
    23, with 6 in a row near draw 140, where a 30-run benchmark ends, failed a delete for good)."""
    with _start(simulate="all:fixed(0.3)", max_parallel_runs=8, latency_ms=5, error_rate=0.3,
                seed=7) as server:  # fmt: skip
        yield server


def test_the_benchmark_completes_at_30_percent_errors(faulty_server, tmp_path):
    n = 30
    stats = run_benchmark(_opts(faulty_server.url, num_runs=n), out_dir=tmp_path)
    doc = stats.summary()
    # Every run made once, finished and measured.
    records = read(tmp_path / "runs.jsonl", RunRecord)
    names = sorted(r.name for r in records)
    assert names == [f"kfp-bench-{stats.benchmark_id}-{i:05d}" for i in range(n)]
    assert doc["runs"]["created"] == n and doc["runs"]["by_state"] == {"SUCCEEDED": n}
    assert all(r.duration for r in records)
    # Faults happened, were retried, counted, and nothing that mattered failed for good.
    calls = read(tmp_path / "api_calls.jsonl", ApiCall)
    retried = [c for c in calls if c.attempt > 1]
    assert retried and doc["api_retries_total"] == len(retried)
    assert sum(d["errors"] for d in doc["api"].values()) > len(calls) * 0.15
    assert {c.status for c in calls if c.outcome == "error"} <= {429, 503}
    assert max(c.attempt for c in calls) <= 9
    for op in ("create_run", "delete_run", "upload_pipeline", "create_experiment"):
        chains = collections.Counter((c.attempt, c.status) for c in calls if c.operation == op)
        assert doc["api"][op]["failed"] == 0, (op, chains)
    assert doc["api"]["delete_run"]["retries"] > 0 and doc["api"]["create_run"]["retries"] > 0
    assert doc["runs"]["create_failed"] == 0
    cleanup = doc["cleanup"]
    assert cleanup["runs_deleted"] == n and cleanup["runs_failed"] == 0
    assert cleanup["pipeline_deleted"] and cleanup["experiment_deleted"]
    assert _leftovers(faulty_server.url, stats.benchmark_id) == NONE_LEFT
    # The report shows them.
    out = io.StringIO()
    runs_report.write_text(doc, out)
    text = out.getvalue()
    header = next(line.split() for line in text.splitlines() if line.startswith("  operation"))
    assert header[:5] == ["operation", "count", "errors", "retries", "failed"]
    row = next(line.split() for line in text.splitlines() if line.startswith("  delete_run "))
    assert int(row[3]) == doc["api"]["delete_run"]["retries"] > 0
    assert f"Retries:\t{doc['api_retries_total']} attempts retried" in text
    # The bundle's table, rebuilt from the records on disk, counts them as the summary does.
    ops = tables.api_table(tables.api_frame(calls), doc)
    for op, row in ops.iterrows():
        assert (row["retries"], row["failed"]) == (doc["api"][op]["retries"],
                                                   doc["api"][op]["failed"]), op  # fmt: skip
    assert ops.loc["find_run", "count"] == doc["api"]["find_run"]["count"] > 0
    json.dumps(doc, allow_nan=False)


def test_cli_runs_completes_at_30_percent_errors(faulty_server, tmp_path):
    out = tmp_path / "out"
    r = run_cli("runs", "--host", faulty_server.url, "--pipeline", str(HELLO), "--num-runs", "6",
                "--create-concurrency", "3", "--poll-interval", "0.2", "--out", str(out),
                timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((out / "summary.json").read_text())
    assert doc["runs"]["by_state"] == {"SUCCEEDED": 6}
    assert doc["options"]["retries"] == 8 and "Retries:" in r.stdout
    assert _leftovers(faulty_server.url, doc["benchmark_id"]) == NONE_LEFT


# -- creates are never duplicated -----------------------------------------------------------------
@pytest.fixture(scope="module", params=["before", "after"])
def faulty_creates(request):
    """30% of create_run calls fail: before the server makes the run, or after (made, and still
    answered 503/429)."""
    with _start(simulate="all:fixed(0.3)", max_parallel_runs=8, error_rate=0.3,
                error_ops="create_run", error_after=request.param == "after",
                seed=5) as server:  # fmt: skip
        yield request.param, server


def test_creates_are_never_duplicated(faulty_creates, tmp_path):
    when, server = faulty_creates
    n = 20
    stats = run_benchmark(_opts(server.url, num_runs=n, keep=True), out_dir=tmp_path)
    doc = stats.summary()
    bid = stats.benchmark_id
    client = kfp_client(server.url)  # LISTs are not faulted here
    exps = client.list_experiments(page_size=200).experiments or []
    (exp,) = [e for e in exps if e.display_name == f"kfp-bench-{bid}"]
    runs = client.list_runs(experiment_id=exp.experiment_id, page_size=200).runs or []
    assert sorted(r.display_name for r in runs) == [f"kfp-bench-{bid}-{i:05d}" for i in range(n)]
    assert doc["runs"]["created"] == n and doc["runs"]["by_state"] == {"SUCCEEDED": n}
    create, find = doc["api"]["create_run"], doc["api"]["find_run"]
    assert create["errors"] > 0 and create["failed"] == 0
    if when == "after":
        # every failed create had made its run: each lookup found it, none was created again
        assert create["count"] == n and create["retries"] == 0
        assert find["count"] - find["errors"] == create["errors"]
    else:
        # nothing was made: each lookup found nothing and the create was tried again
        assert create["retries"] == create["errors"] and create["count"] == n + create["retries"]
    sweep(CleanupOptions(server.url, benchmark_id=bid))
    assert _leftovers(server.url, bid) == NONE_LEFT


def test_pipeline_version_and_experiment_are_adopted_not_made_twice(tmp_path):
    """Every upload and experiment create is answered 503/429 after the server made it: each
    is found by its name and adopted (KFP would refuse a second one with 409)."""
    ops = "upload_pipeline,upload_pipeline_version,create_experiment"
    with _start(simulate="all:fixed(0.2)", error_rate=1.0, error_ops=ops, error_after=True,
                seed=2) as server:  # fmt: skip
        calls = []
        api = KfpApi(server.url, on_call=calls.append, sleep=lambda s: None)
        user = api.upload_pipeline(str(HELLO), "users-own-pipeline", "a user's pipeline")
        assert user.adopted and user.body["pipeline_id"]
        assert [(c.operation, c.outcome) for c in calls] == [
            ("upload_pipeline", "error"), ("find_pipeline", "ok")]  # fmt: skip
        pid = user.body["pipeline_id"]

        for kw in ({"pipeline_id": pid}, {}):
            stats = run_benchmark(_opts(server.url, num_runs=3, keep=True, **kw), out_dir=None)
            doc, bid = stats.summary(), stats.benchmark_id
            assert doc["runs"]["by_state"] == {"SUCCEEDED": 3}
            upload = "upload_pipeline_version" if kw else "upload_pipeline"
            once = {"count": 1, "errors": 1, "retries": 0, "failed": 0}
            for op in (upload, "create_experiment"):
                assert doc["api"][op] | once == doc["api"][op], op
            client = kfp_client(server.url)
            exps = client.list_experiments(page_size=200).experiments or []
            assert sum(e.display_name == f"kfp-bench-{bid}" for e in exps) == 1
            if kw:
                found = client.list_pipeline_versions(pid, page_size=200).pipeline_versions
                assert sorted(v.display_name for v in found) == sorted(
                    ["users-own-pipeline", f"kfp-bench-{bid}"]
                )
            else:
                pipes = client.list_pipelines(page_size=200).pipelines or []
                assert sum(p.display_name == f"kfp-bench-{bid}" for p in pipes) == 1
            report = sweep(CleanupOptions(server.url, benchmark_id=bid))
            assert not report["failed"]
            assert _leftovers(server.url, bid) == NONE_LEFT

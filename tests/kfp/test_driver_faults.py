"""The driver when some creates fail, in namespaces, and with --pipeline-id, against real local
KFP servers (subprocesses on loopback) and checked through kfp.Client: what it created is polled,
reported and cleaned up, and nothing carrying its benchmark id is left on the server."""

from __future__ import annotations

import json

import pytest

from kfp_bench.jsonl import read
from kfp_bench.kfp.auth import Auth
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.options import CleanupOptions, RunsOptions
from kfp_bench.records import RunRecord
from tests.conftest import run_cli
from tests.kfp.conftest import HELLO, NOTHING, _start, kfp_client, remains

N = 20


def _opts(url, **kw) -> RunsOptions:
    base = dict(host=url, pipeline=str(HELLO), num_runs=N, create_concurrency=4,
                poll_interval=0.2, timeout=60, get_sample=0)  # fmt: skip
    base.update(kw)
    return RunsOptions(**base)


@pytest.fixture(scope="module", params=["before", "after"])
def faulty_server(request):
    """~30% of create_run calls fail (503/429), every other call succeeds; the fault strikes
    before the run is made, or after (the run exists, the answer is still an error)."""
    with _start(
        simulate="all:fixed(0.3)",
        max_parallel_runs=8,
        error_rate=0.3,
        error_ops="create_run",
        error_after=request.param == "after",
        seed=11,
    ) as server:
        yield request.param, server


def test_failed_creates_do_not_lose_what_was_created(faulty_server, tmp_path):
    """With retries off (--retries 0, the behaviour before issue 7): a failed create is not
    tried again, and a run it made all the same is still found, measured and deleted."""
    when, server = faulty_server
    stats = run_benchmark(_opts(server.url, retries=0), out_dir=tmp_path)
    doc = stats.summary()
    errors = doc["runs"]["create_errors"]
    assert 0 < errors < N and doc["api"]["create_run"] == doc["api"]["create_run"] | {
        "count": N,
        "errors": errors,
        "retries": 0,
        "failed": errors,
    }
    assert doc["runs"]["create_failed"] == errors and doc["api_retries_total"] == 0
    assert "find_run" not in doc["api"]  # no lookups: nothing is retried
    for op in ("upload_pipeline", "create_experiment", "list_runs", "delete_run"):
        assert doc["api"][op]["errors"] == 0, op
    # Before: a failed create made nothing. After: the server made every run, and the runs
    # whose create answered an error are found by name in the LIST, polled and deleted too.
    made = N - errors if when == "before" else N
    assert doc["runs"]["created"] == made
    # Fewer runs than asked is a failure the exit code tells (kfp_bench.outcome): exit 1.
    assert ("create-failed" in doc["flags"]) == (when == "before")
    assert doc["runs"]["by_state"] == {"SUCCEEDED": made}
    records = read(tmp_path / "runs.jsonl", RunRecord)
    assert len({r.run_id for r in records}) == made
    assert all(r.state == "SUCCEEDED" and r.duration for r in records)
    cleanup = doc["cleanup"]
    assert cleanup["runs_deleted"] == made and cleanup["runs_failed"] == 0
    assert cleanup["pipeline_deleted"] and cleanup["experiment_deleted"]
    assert remains(server.url, stats.benchmark_id) == NOTHING


@pytest.fixture(scope="module")
def server():
    with _start(simulate="all:fixed(0.3)", max_parallel_runs=8) as s:
        yield s


@pytest.fixture(scope="module")
def multi_user_server():
    """Namespaces hold apart only in multi-user mode: a single-user KFP blanks the namespace of
    a pipeline (resource_manager.go ReplaceNamespace, 7b70c7b95f), so there two teams' pipelines
    of one name collide."""
    with _start(simulate="all:fixed(0.3)", max_parallel_runs=8, multi_user=True) as s:
        yield s


def _in(url: str, namespace: str, bid: str) -> dict:
    """What carries the benchmark id in one namespace, as that namespace's LISTs show it."""
    client = kfp_client(url)
    exps = client.list_experiments(page_size=200, namespace=namespace).experiments or []
    runs = client.list_runs(page_size=200, namespace=namespace).runs or []
    pipes = client.list_pipelines(page_size=200, namespace=namespace).pipelines or []
    return {
        "experiments": sum(bid in e.display_name for e in exps),
        "runs": sum(bid in r.display_name for r in runs),
        "pipelines": sum(bid in p.display_name for p in pipes),
    }


def test_namespace_holds_the_benchmark_and_hides_the_other_team(multi_user_server):
    """team-b ran a benchmark with the same id and kept it; team-a's benchmark must create in
    team-a, see and delete only its own, and leave team-b's untouched (multi-user KFP)."""
    server = multi_user_server
    bid = "ns-same-id"
    team_b = run_benchmark(
        _opts(server.url, num_runs=3, benchmark_id=bid, keep=True, auth=Auth(namespace="team-b"))
    )
    assert team_b.summary()["runs"]["created"] == 3
    seen = []

    def snapshot(phase, created, final, requested):
        if created == 5 and not seen:
            seen.append(_in(server.url, "team-a", bid))

    team_a = run_benchmark(
        _opts(server.url, num_runs=5, benchmark_id=bid, auth=Auth(namespace="team-a")),
        on_progress=snapshot,
    )
    doc = team_a.summary()
    assert seen == [{"experiments": 1, "runs": 5, "pipelines": 1}]
    assert doc["runs"]["created"] == 5 and doc["runs"]["by_state"] == {"SUCCEEDED": 5}
    assert doc["cleanup"]["runs_deleted"] == 5 and doc["cleanup"]["experiment_deleted"]
    assert _in(server.url, "team-a", bid) == {"experiments": 0, "runs": 0, "pipelines": 0}
    assert _in(server.url, "team-b", bid) == {"experiments": 1, "runs": 3, "pipelines": 1}

    # The sweep too works in its namespace only.
    report = sweep(CleanupOptions(server.url, benchmark_id=bid, auth=Auth(namespace="team-a")))
    assert report["experiments"] == [] and report["pipelines"] == [] and not report["failed"]
    report = sweep(CleanupOptions(server.url, benchmark_id=bid, auth=Auth(namespace="team-b")))
    assert report["deleted"] == {"recurring_runs": 0, "runs": 3, "experiments": 1,
                                 "pipeline_versions": 1, "pipelines": 1}  # fmt: skip
    empty = {"experiments": 0, "runs": 0, "pipelines": 0}
    assert [_in(server.url, ns, bid) for ns in ("team-a", "team-b")] == [empty, empty]


def test_cleanup_finds_a_version_uploaded_into_an_existing_pipeline(server, tmp_path):
    """--pipeline-id: the benchmark's version lives in someone else's pipeline; the driver's own
    cleanup and ``kfp-bench cleanup --benchmark-id`` delete that version and nothing else."""
    client = kfp_client(server.url)
    user = client.upload_pipeline(str(HELLO), pipeline_name="users-own-pipeline")
    pid = user.pipeline_id

    def versions() -> list[str]:
        found = client.list_pipeline_versions(pid, page_size=200).pipeline_versions or []
        return sorted(v.display_name for v in found)

    stats = run_benchmark(_opts(server.url, num_runs=2, pipeline_id=pid))
    assert stats.summary()["cleanup"]["pipeline_version_deleted"]
    assert versions() == ["users-own-pipeline"]

    bid = "version-in-users-pipeline"
    run_benchmark(_opts(server.url, num_runs=2, pipeline_id=pid, benchmark_id=bid, keep=True))
    assert versions() == [f"kfp-bench-{bid}", "users-own-pipeline"]
    r = run_cli("cleanup", "--host", server.url, "--benchmark-id", bid)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 versions in other pipelines" in r.stdout
    assert f"users-own-pipeline/kfp-bench-{bid}" in r.stdout
    assert (
        "Deleted: 0 recurring runs, 2 runs, 1 experiments, 1 pipeline versions, 0 pipelines"
        in r.stdout
    )
    assert versions() == ["users-own-pipeline"]
    assert remains(server.url, bid) == NOTHING
    assert client.get_pipeline(pid).display_name == "users-own-pipeline"
    json.dumps(stats.summary(), allow_nan=False)

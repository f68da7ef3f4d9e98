"""The fault matrix: ``kfp-bench runs``, and the pipeline's KFP steps, against the local KFP API
with a lasting fault on each operation the driver calls, struck before or after the server
handled the request.

For every case two things must hold:

- the exit code (and the flags behind it) is the one ``kfp_bench.outcome`` gives for what really
  happened, as the table below says: 0 only when all was done and nothing is left;
- nothing of the benchmark is left on the server: at once when the code is not 4 ("left
  behind"), and after ``kfp-bench cleanup --benchmark-id`` (run once the fault is over) when it
  is.

The fault lasts (``--error-rate 1``) and the retries are few and short, so each case takes a
second or two; transient faults, which the retries overcome, are tested in test_retries.py. The
server is one process for the module, its faults switched per case (``set_faults``).
"""

from __future__ import annotations

import contextlib
import io

import pytest

from kfp_bench.cli import main
from kfp_bench.errors import ConfigError, KfpApiError
from kfp_bench.kfp import phases
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.options import CleanupOptions, RunsOptions, new_benchmark_id
from kfp_bench.outcome import EXIT_LEFT_BEHIND, exit_code, failures
from tests.kfp.conftest import HELLO, NOTHING, _start, remains

RUNS = 4
FAST = ["--retries", "2", "--retry-max-wait", "0.05", "--request-timeout", "5"]

#: (operations faulted, when) -> (exit code of ``kfp-bench runs``, its failure flags).
#: Why each: a refused preflight is bad input (2); a create faulted after handling is adopted by
#: the lookup before its retry (0); a LIST that never answers leaves the runs unseen until the
#: timeout (1); a create that fails with no LIST to tell what it made, or a delete that never
#: answers, may leave something (4). A delete faulted after handling did delete: the GET after
#: it answers 404 (0). A version that cannot be deleted goes with its pipeline (cascade: 0).
CLI = {
    ("list_experiments", "before"): (2, []),
    ("list_experiments", "after"): (2, []),
    ("upload_pipeline", "before"): (1, []),
    ("upload_pipeline", "after"): (0, []),
    ("list_pipeline_versions", "before"): (1, []),
    ("list_pipeline_versions", "after"): (1, []),
    ("create_experiment", "before"): (1, []),
    ("create_experiment", "after"): (0, []),
    ("create_run", "before"): (1, ["no-runs"]),
    ("create_run", "after"): (0, []),
    ("list_runs", "before"): (1, ["timeout"]),
    ("list_runs", "after"): (1, ["timeout"]),
    ("get_run", "before"): (0, []),
    ("get_run", "after"): (0, []),
    ("delete_run", "before"): (4, ["cleanup-failed", "left-behind"]),
    ("delete_run", "after"): (0, []),
    ("delete_pipeline_version", "before"): (0, []),
    ("delete_pipeline_version", "after"): (0, []),
    ("delete_pipeline", "before"): (4, ["cleanup-failed", "left-behind"]),
    ("delete_pipeline", "after"): (0, []),
    ("delete_experiment", "before"): (4, ["cleanup-failed", "left-behind"]),
    ("delete_experiment", "after"): (0, []),
    ("create_run,list_runs", "before"): (4, ["timeout", "no-runs", "list-failed", "left-behind"]),
    ("create_run,list_runs", "after"): (4, ["timeout", "no-runs", "list-failed", "left-behind"]),
}


@pytest.fixture(scope="module")
def server():
    with _start(simulate="all:fixed(0.1)", max_parallel_runs=8, seed=5) as s:
        yield s


@contextlib.contextmanager
def _faulted(server, ops: str, when: str = "before"):
    """A lasting fault on ``ops`` (every call answered 503 or 429) for the block's length."""
    server.set_faults(1.0, ops, after=when == "after", seed=1)
    try:
        yield
    finally:
        server.set_faults()


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _summary_flags(out_dir) -> list[str]:
    import json

    path = out_dir / "summary.json"
    return failures(json.loads(path.read_text())["flags"]) if path.exists() else []


def _cleared(server, bid: str) -> None:
    """With the fault over, ``kfp-bench cleanup`` removes whatever was left, and says so."""
    server.set_faults()
    code, out, err = _cli("cleanup", "--host", server.url, "--benchmark-id", bid, *FAST)
    assert code == 0, out + err
    assert remains(server.url, bid) == NOTHING


@pytest.mark.parametrize("ops,when", list(CLI), ids=[f"{o}-{w}" for o, w in CLI])
def test_runs_command(server, tmp_path, ops, when):
    want_code, want_flags = CLI[(ops, when)]
    bid = new_benchmark_id()
    with _faulted(server, ops, when):
        code, out, err = _cli(
            "runs", "--host", server.url, "--pipeline", str(HELLO), "--num-runs", str(RUNS),
            "--create-concurrency", "4", "--poll-interval", "0.1", "--timeout", "3",
            "--get-sample", "1", "--metrics-url", "none", "--benchmark-id", bid,
            "--out", str(tmp_path / "out"), *FAST,
        )  # fmt: skip
    assert (code, sorted(_summary_flags(tmp_path / "out"))) == (want_code, sorted(want_flags)), (
        out + err
    )
    if code == EXIT_LEFT_BEHIND:
        assert remains(server.url, bid) != NOTHING  # it said so, and it is so
        assert "kfp-bench cleanup --benchmark-id " + bid in err
        _cleared(server, bid)
    else:
        assert remains(server.url, bid) == NOTHING, out + err


#: The pipeline's KFP steps (upload, spawn, poll: ``kfp_bench.kfp.phases``, which the steps
#: call) and its exit handler's sweep: the code the run's outcome stands for, as for the CLI,
#: but for what only the sweep can do here. It finds runs by LIST alone (the poll's run ids
#: are not handed to it), so a LIST that fails leaves them (4).
PIPELINE = {
    **CLI,
    ("list_runs", "before"): (4, ["timeout", "cleanup-failed", "left-behind"]),
    ("list_runs", "after"): (4, ["timeout", "cleanup-failed", "left-behind"]),
    ("create_run,list_runs", "before"): (
        4,
        ["timeout", "no-runs", "cleanup-failed", "left-behind"],
    ),
    ("create_run,list_runs", "after"): (4, ["timeout", "no-runs", "cleanup-failed", "left-behind"]),
}


def _pipeline(server, out_dir, bid: str) -> tuple[int, list[str], dict | None]:
    """The steps in order, as the pipeline runs them; a step that raises ends the run there and
    the exit handler sweeps. (code, failure flags of the poll, the sweep's report)."""
    opts = RunsOptions(
        host=server.url, pipeline=str(HELLO), num_runs=RUNS, create_concurrency=4,
        poll_interval=0.1, timeout=3, get_sample=1, metrics_url="none", benchmark_id=bid,
        retries=2, retry_max_wait=0.05, request_timeout=5,
    )  # fmt: skip
    code, flags = 0, []
    try:
        handle = phases.upload(opts, out_dir=out_dir)
        phases.spawn(handle, opts, out_dir)
        flags = failures(phases.poll(handle, opts, out_dir).flags)
        code = exit_code(flags)
    except ConfigError:
        return 2, [], None  # the first call refused: nothing was created, nothing to sweep
    except KfpApiError:
        code = 1
    clean = CleanupOptions(host=server.url, benchmark_id=bid, retries=2, retry_max_wait=0.05)
    report = sweep(clean)
    if report["failed"]:
        code = EXIT_LEFT_BEHIND  # the exit handler raises: the run fails, naming what is left
    return code, flags, report


@pytest.mark.parametrize("ops,when", list(PIPELINE), ids=[f"{o}-{w}" for o, w in PIPELINE])
def test_pipeline_steps(server, tmp_path, ops, when):
    want_code, want_flags = PIPELINE[(ops, when)]
    bid = new_benchmark_id()
    with _faulted(server, ops, when):
        code, flags, report = _pipeline(server, tmp_path, bid)
    poll_flags = [f for f in flags if f not in ("cleanup-failed", "left-behind")]
    sweep_flags = ["cleanup-failed", "left-behind"] if report and report["failed"] else []
    assert (code, sorted(poll_flags + sweep_flags)) == (want_code, sorted(want_flags)), report
    if code == EXIT_LEFT_BEHIND:
        report = sweep(CleanupOptions(host=server.url, benchmark_id=bid))
        assert not report["failed"], report
    assert remains(server.url, bid) == NOTHING, report


def test_the_matrix_covers_every_operation_the_driver_calls():
    """Every operation a runs benchmark and its sweep call is faulted, before and after."""
    from kfp_bench.sandbox.kfp_server.faults import OPERATION_NAMES

    driver_ops = {
        "list_experiments", "upload_pipeline", "list_pipeline_versions", "create_experiment",
        "create_run", "list_runs", "get_run", "delete_run", "delete_pipeline_version",
        "delete_pipeline", "delete_experiment",
    }  # fmt: skip
    faulted = {op for ops, _ in CLI for op in ops.split(",")}
    assert driver_ops <= OPERATION_NAMES and driver_ops <= faulted
    assert {w for _, w in CLI} == {"before", "after"}
    assert len(CLI) == 2 * len({o for o, _ in CLI})


def test_cleanup_finds_runs_whose_experiment_is_gone(server, tmp_path):
    """KFP's DeleteExperiment leaves the experiment's runs: the sweep finds them by name."""
    from kfp_bench.kfp.api import KfpApi

    bid = new_benchmark_id()
    code, out, err = _cli(
        "runs", "--host", server.url, "--pipeline", str(HELLO), "--num-runs", "3", "--keep",
        "--poll-interval", "0.1", "--benchmark-id", bid, "--out", str(tmp_path / "out"), *FAST,
    )  # fmt: skip
    assert code == 0, err
    api = KfpApi(server.url)
    exp = next(e for e in api.list_experiments().body["experiments"] if bid in e["display_name"])
    assert api.delete_experiment(exp["experiment_id"]).ok
    assert remains(server.url, bid)["runs"] == 3  # orphans: no experiment holds them
    code, out, err = _cli("cleanup", "--host", server.url, "--benchmark-id", bid, *FAST)
    assert code == 0 and "3 runs" in out, out + err
    assert remains(server.url, bid) == NOTHING


def test_cleanup_that_cannot_delete_says_so_and_exits_4(server, tmp_path):
    """A sweep whose deletes fail does not report "0 runs" left: it names what failed, keeps the
    experiment that still holds them, and exits 4; once the fault is over it finishes."""
    bid = new_benchmark_id()
    code, out, err = _cli(
        "runs", "--host", server.url, "--pipeline", str(HELLO), "--num-runs", "2", "--keep",
        "--poll-interval", "0.1", "--benchmark-id", bid, "--out", str(tmp_path / "out"), *FAST,
    )  # fmt: skip
    assert code == 0, err
    with _faulted(server, "delete_run"):
        code, out, err = _cli("cleanup", "--host", server.url, "--benchmark-id", bid, *FAST)
    assert code == EXIT_LEFT_BEHIND, out + err
    assert "Deleted: 0 recurring runs, 0 runs" in out and "kept experiment" in out
    assert remains(server.url, bid)["experiments"] == 1
    _cleared(server, bid)

"""Issue 18's acceptance test: a recurring run of the meta-pipeline on the local KFP API.

The server EXECUTES the meta-pipeline with kfp.local (``simulate="auto"``: its steps are
lightweight components; the noop child runs are too, and take about a second). The schedule is
made as a careless UI user would: every few seconds, max concurrency 2, so that two benchmarks of
one benchmark_id overlap. The lease keeps them apart: with lease_wait_sec the second waits for the
first's exit handler and its report shows the trend and a verdict from the first; with 0 it
refuses at check-params, naming the holder. The waiting pair keeps its history on S3, a real
SeaweedFS (tests/seaweedfs.py), as a nightly on Kubeflow keeps it in KFP's store; the server's
runs inherit its environment, boto3's endpoint and key. Its target slows down once the first
run's report is published (``_Target``): a regression injected into the second run, which
fail_on_regression fails after its report is published. Each run's kfp.local log is
<state_dir>/runs/<run_id>/log.txt (executor.py), its outputs under .../root/<job>/<task>/.

The pipeline is compiled/kfp_bench.yaml's compiled for this environment, as image mode compiles
it (tests/venv_image.py): the same DAG, parameters and step code, which the server's environment
already holds, so no step runs the two pip installs of package mode at its start (found
satisfied there, they took more than half of the module's CPU). Package mode's pinned install,
run as pods run it, is tests/pipelines/test_pods.py's and test_pinned_install.py's.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest

from kfp_bench import history as hist
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.steps.compile import compile_all
from tests.kfp.conftest import kfp_client
from tests.loopback import Handler, serving
from tests.seaweedfs import seaweedfs
from tests.venv_image import DELIVERY

pytestmark = pytest.mark.slow

FINAL = ("SUCCEEDED", "FAILED", "CANCELED", "SKIPPED")
#: What check_params prints when it took the lease after another released it (steps.take_lease).
WAITED = re.compile(r"lease kfp-bench-lease-(\S+) taken until \S+ \(\d+\) after waiting (\d+)s")


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kfp-state")


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with seaweedfs(tmp_path_factory.mktemp("seaweedfs")) as store:
        yield store


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    """The meta-pipeline's YAML for this environment (the module docstring)."""
    out = tmp_path_factory.mktemp("compiled")
    return compile_all(out, delivery=DELIVERY, names=["kfp_bench"])["kfp_bench"]


@pytest.fixture(scope="module")
def server(state_dir, s3):
    # Slots for two meta runs and their child runs; "auto" executes everything kfp.local can.
    # The server's runs inherit its environment.
    with pytest.MonkeyPatch.context() as env:
        for name, value in s3.env().items():
            env.setenv(name, value)
        env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        with start_kfp_server(
            simulate="auto:fixed(0.2)", max_parallel_runs=6, state_dir=str(state_dir)
        ) as s:
            yield s


class _Target(Handler):
    """A V1 predict endpoint that answers at once until ``slow`` is set, then 50 ms late."""

    protocol_version = "HTTP/1.1"  # keep-alive, as a model server's
    disable_nagle_algorithm = True  # else headers and body wait out the peer's delayed ACK
    slow = threading.Event()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.slow.is_set():
            time.sleep(0.05)
        self.send(200, {"predictions": [1, 1]})


def _slow_after_a_report(state_dir: Path, stop: threading.Event) -> None:
    """Set ``_Target.slow`` once a run's report_history has published (the first run's: the
    second's load begins only after the first's cleanup released the lease)."""
    while not stop.is_set() and not _Target.slow.is_set():
        if any(state_dir.glob("runs/*/root/*/report-history/executor_output.json")):
            _Target.slow.set()
        time.sleep(0.1)


def _schedule_two(server, package: Path, model_server, name: str, **params) -> list:
    """A recurring run every 3 s with max concurrency 2 and catch-up off, disabled as soon as it
    made two runs; those two runs once final (in no particular order: see ``_by_lease``)."""
    client = kfp_client(server.url)
    exp = client.create_experiment(name)
    job = client.create_recurring_run(
        experiment_id=exp.experiment_id,
        job_name=name,
        cron_expression="*/3 * * * * *",
        max_concurrency=2,
        no_catchup=True,
        pipeline_package_path=str(package),
        params={
            "kfp_host": server.url,
            "num_runs": 1,
            "poll_interval_sec": 0.5,
            "inference_url": getattr(model_server, "v1_predict_url", model_server),
            "duration_sec": 1.0,
            "concurrency": 1,
            "run_load": True,
            "benchmark_id": name,
            **params,
        },
    )
    runs = _wait(lambda: _runs(client, exp.experiment_id), lambda rs: len(rs) >= 2, 60)
    client.disable_recurring_run(job.recurring_run_id)
    # max concurrency 2 kept a third from starting while both lived, and it is disabled now
    ids = [r.run_id for r in runs]
    # a deadline, not a measurement: both cores may be busy with other work (a suite at load
    # average 15 took over 240 s for the first run, and the second waits for it, then runs)
    end = time.monotonic() + 1800
    done = [
        _wait(lambda i=i: client.get_run(i), lambda r: r.state in FINAL, end - time.monotonic())
        for i in ids
    ]
    assert len(_runs(client, exp.experiment_id)) == 2
    return done


def _runs(client, experiment_id: str) -> list:
    return client.list_runs(experiment_id=experiment_id, page_size=50).runs or []


def _wait(get, ok, timeout: float):
    end = time.monotonic() + timeout
    while True:
        value = get()
        if ok(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"not reached after {timeout}s: {value}")
        time.sleep(0.5)


def _log(state_dir: Path, run) -> str:
    text = (state_dir / "runs" / run.run_id / "log.txt").read_text()
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # kfp.local colours its lines


def _tasks(run) -> dict:
    """Each task's (start, end) in epoch seconds, by name (the runner's task events)."""
    return {
        t.display_name: (t.start_time.timestamp(), t.end_time.timestamp())
        for t in run.run_details.task_details or []
    }


def _report(state_dir: Path, run) -> tuple[dict, str]:
    """The metrics the run's report_history step (its report with the history) published, and
    its HTML report."""
    (out,) = (state_dir / "runs" / run.run_id / "root").glob(
        "*/report-history/executor_output.json"
    )
    arts = json.loads(out.read_text())["artifacts"]
    html = Path(arts["html"]["artifacts"][0]["uri"]).read_text()
    return arts["metrics"]["artifacts"][0]["metadata"], html


def _by_lease(state_dir: Path, runs: list, name: str) -> tuple:
    """The two runs as (the one that took the lease at once, the other).

    The order the schedule created them in is not the order their first steps reached the
    server: on a loaded machine the older run's check_params can start seconds after the newer
    one's, and the newer takes the lease. So "first" is the run whose check_params took the lease
    without waiting, as its log says; exactly one of the two did.
    """
    took = f"lease kfp-bench-lease-{name} taken until "
    at_once = re.compile(re.escape(took) + r"\S+ \(\d+\)(?! after waiting)")
    at_once = [r for r in runs if at_once.search(_log(state_dir, r))]
    assert len(at_once) == 1, [(r.run_id, _log(state_dir, r)[-2000:]) for r in runs]
    (first,) = at_once
    (second,) = [r for r in runs if r is not first]
    return first, second


def _benchmark_id(log: str) -> str:
    return re.search(r"parameters OK; benchmark id (\S+)", log).group(1)


def test_the_second_run_waits_for_the_first_and_fails_on_its_regression(
    server, package, state_dir, tmp_path, s3, monkeypatch
):
    uri = f"s3://{s3.bucket}/pair-wait-{tmp_path.name}"
    stop = threading.Event()
    watcher = threading.Thread(target=_slow_after_a_report, args=(state_dir, stop), daemon=True)
    with serving(_Target) as target:
        watcher.start()
        try:
            runs = _schedule_two(
                server, package, f"{target}/v1/models/iris:predict", "pair-wait",
                lease_wait_sec=1200.0,
                results_uri=uri, fail_on_regression=True,
            )  # fmt: skip
        finally:
            stop.set()
    first, second = _by_lease(state_dir, runs, "pair-wait")
    assert (first.state, second.state) == ("SUCCEEDED", "FAILED"), (first.error, second.error)
    # They never overlapped: the second started while the first ran, yet its benchmark began
    # only after the first's exit handler had ended (the tasks' times are the runner's events).
    t1, t2 = _tasks(first), _tasks(second)
    assert t2["check-params"][0] < t1["cleanup"][0]
    # ... because its check_params waited for the lease the first's cleanup released (checked
    # first: a second run that never took the lease has no later steps to compare)
    log1, log2 = _log(state_dir, first), _log(state_dir, second)
    waited = WAITED.search(log2)
    assert waited and waited.group(1) == "pair-wait" and int(waited.group(2)) >= 1, log2[-3000:]
    assert "lease kfp-bench-lease-pair-wait: released" in log1 and "after waiting" not in log1
    later = {n: start for n, (start, _) in t2.items() if n not in ("check-params", "cleanup")}
    # Whole seconds, as KFP's API server stores them (server/api_converter.go): a step that began
    # in the second the cleanup ended is not known to have begun before it.
    overlap = {n: round(t1["cleanup"][1] - t, 1) for n, t in later.items() if t < t1["cleanup"][1]}
    assert later and not overlap, (
        f"the second run's steps began (s) before the first's cleanup ended: {overlap}"
    )
    # The second's report holds the first's result: the trend and a verdict, a regression (its
    # target slowed down), which failed the run in the check after its report was published.
    m1, html1 = _report(state_dir, first)
    m2, html2 = _report(state_dir, second)
    assert "regression" not in m1 and "0 earlier results in" in html1
    assert (m1["gates_checked"], m1["gates_broken"]) == (1, 0)  # no verdict yet: not broken
    assert "no verdict (too few earlier results" in html1
    assert m2["baseline_results"] == 1 and m2["regression"] == 1 and m2["gates_broken"] == 1
    assert "<h2>History</h2>" in html2 and "1 earlier results in" in html2
    assert '<div class="verdict bad" id="gates">GATES: 1 of 1 broken' in html2
    assert "BROKEN fail_on_regression: a regression was found" in html2
    states = {t.display_name: t.state for t in second.run_details.task_details or []}
    # report_history ran instead of the plain report, and the one check took its outcome
    assert states["report-history"] == "SUCCEEDED" and states["check-outcome"] == "FAILED"
    assert "report" not in states
    assert "1 gate(s) broke (BROKEN fail_on_regression: a regression was found)" in log2
    for name, value in s3.env().items():
        monkeypatch.setenv(name, value)
    assert len(hist.entries(hist.open_store(uri))) == 2


def test_without_a_wait_the_overlapping_run_refuses_naming_the_holder(
    server, package, model_server, state_dir, tmp_path
):
    runs = _schedule_two(
        server, package, model_server, "pair-refuse", lease_wait_sec=0.0,
        results_uri=str(tmp_path / "h"),
    )  # fmt: skip
    first, second = _by_lease(state_dir, runs, "pair-refuse")
    assert first.state == "SUCCEEDED", first.error
    assert second.state == "FAILED"
    log2 = _log(state_dir, second)
    holder = _benchmark_id(_log(state_dir, first))
    assert f"another benchmark holds the lease kfp-bench-lease-pair-refuse: benchmark {holder}" in (
        log2
    )
    # refused at the first step: its benchmark never began, and its cleanup left the lease alone
    names = {t.display_name: t.state for t in second.run_details.task_details or []}
    assert names["check-params"] == "FAILED" and "inference-load" not in names
    assert "not ours: left" in log2

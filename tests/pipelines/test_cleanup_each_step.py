"""The meta-pipeline fails in each step in turn, and its exit handler still leaves nothing behind.

Each case runs the whole pipeline with kfp.local (SubprocessRunner) against a local KFP server (the
module's; a case with fault options has one of its own) and makes one step fail for real: a bad
parameter (check_params), a manifest URL that stops answering between the check and the staging
(stage_manifest), the KFP API refusing every upload, retries included (upload_manifest). The other
steps cannot be made to fail from outside: API errors are measurements to spawn_runs and poll_runs,
and deploy_isvc (without an InferenceService), rate_sweep, a load worker, aggregate, report and
check_outcome (on an unflagged result) fail only through a bug or a killed pod. They are failed
with the ``KFP_BENCH_FAIL_STEP`` hook (kfp_bench.failpoint), after their work, when everything they
would create exists. Then: the run failed in that step, the cleanup step ran and swept, and no
experiment, pipeline or run carrying the benchmark id is left on the server. watch_replicas does
work only with an InferenceService on a cluster, which this tier has not (its hook is in place).

Each run's benchmark id is its own (the benchmark_id parameter is a prefix): the sweep's line,
with that id, shows that the exit handler swept by it, and the lease check_params took is given
back (nothing named for the benchmark stays).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kfp import local
from kfp.local import config

from kfp_bench.failpoint import FAIL_STEP_ENV
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.steps.bundled import bundled_manifest
from tests.components.conftest import leftovers
from tests.venv_image import pipeline

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Case:
    """One step's failure.

    Attributes:
        task: kfp.local's name of the task that fails.
        says: what its output says about the failure.
        deleted: (runs, experiments, pipeline versions, pipelines) the cleanup deletes; None
            when kfp.local's order decides.
        params: pipeline parameters beyond the smallest benchmark.
        server: fault options of the local KFP server.
        hook: fail the step with KFP_BENCH_FAIL_STEP.
    """

    task: str
    says: str
    deleted: tuple[int, int, int, int] | None
    params: dict = field(default_factory=dict)
    server: dict = field(default_factory=dict)
    hook: bool = False


MADE = (2, 1, 1, 1)  # the two runs, the experiment, the pipeline and its version
CASES = {
    "check_params": Case(
        "check-params",
        "pipeline parameter create_concurrency=0",
        (0, 0, 0, 0),
        params={"create_concurrency": 0},
    ),
    # after check_params took the lease, which the exit handler gives back
    "stage_manifest": Case("stage-manifest", "HTTP 404", (0, 0, 0, 0), params={"pipeline": "ONCE"}),
    "upload_manifest": Case(
        "upload-manifest",
        "could not upload the pipeline",
        (0, 0, 0, 0),
        server={"error_ops": "upload_pipeline", "error_rate": 1.0},
    ),
    "spawn_runs": Case("spawn-runs", "step spawn_runs failed on purpose", MADE, hook=True),
    "poll_runs": Case("poll-runs", "step poll_runs failed on purpose", MADE, hook=True),
    # The load branch runs beside the runs branch, in an order kfp.local does not fix: what
    # was made when a load-branch step fails varies, so only "nothing left" is asserted.
    "deploy_isvc": Case("deploy-isvc", "step deploy_isvc failed on purpose", None, hook=True),
    "rate_sweep": Case(
        "rate-sweep",
        "step rate_sweep failed on purpose",
        None,
        params={"run_load": True, "sweep_rates": "5", "sweep_step_sec": 0.5},
        hook=True,
    ),
    # A failed worker is retried (kfp_bench/pipelines/meta.py), and the retry finds its start mark
    # on the
    # KFP API: it saves the worker lost and succeeds, so the run fails at check_outcome, after
    # the report (docs/running-in-a-cluster.md, "When a pod dies").
    "inference_load": Case(
        "check-outcome",
        "lost: its start mark, experiment kfp-bench-fail-inference-load-",
        None,
        params={"run_load": True},
        hook=True,
    ),
    "aggregate": Case("aggregate", "step aggregate failed on purpose", MADE, hook=True),
    "report": Case("report", "step report failed on purpose", MADE, hook=True),
    "check_outcome": Case("check-outcome", "step check_outcome failed on purpose", MADE, hook=True),
}


@pytest.fixture(scope="module", autouse=True)
def kfp_local(tmp_path_factory):
    before = config.LocalExecutionConfig.instance
    local.init(
        runner=local.SubprocessRunner(use_venv=False),
        pipeline_root=str(tmp_path_factory.mktemp("cleanup-each-step")),
    )
    yield
    config.LocalExecutionConfig.instance = before


class _Once(BaseHTTPRequestHandler):
    """Serves the manifest to the first GET (check_params' check), then 404: the object was
    deleted before stage_manifest fetched it."""

    body = bundled_manifest("noop").read_bytes()
    served = 0

    def do_GET(self):  # noqa: N802 - http.server's name
        type(self).served += 1
        first = type(self).served == 1
        self.send_response(200 if first else 404)
        self.send_header("Content-Length", str(len(self.body) if first else 0))
        self.end_headers()
        if first:
            self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def manifest_once():
    _Once.served = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Once)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/noop.yaml"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def shared_api():
    """The KFP API of the cases without fault options: each case's objects carry its own
    benchmark id, and what is left is counted by that id."""
    with start_kfp_server(simulate="all:fixed(0.2)") as server:
        yield server


@pytest.fixture
def kfp_api(request):
    """A server of the case's own when it has fault options, else the module's."""
    case = CASES[request.getfixturevalue("step")]
    if not case.server:
        yield request.getfixturevalue("shared_api")
        return
    with start_kfp_server(simulate="all:fixed(0.2)", **case.server) as server:
        yield server


@pytest.mark.parametrize("step", list(CASES))
def test_a_failed_step_leaves_nothing(step, request, monkeypatch, capfd, fault_server, kfp_api):
    case = CASES[step]
    bid = "fail-" + step.replace("_", "-")
    params = dict(
        num_runs=2,
        poll_interval_sec=0.2,
        run_load=False,
        inference_url=f"{fault_server.url}/v1/models/m:predict",
        duration_sec=0.5,
        concurrency=1,
        benchmark_id=bid,
    )
    params.update(case.params)
    if params.get("pipeline") == "ONCE":
        params["pipeline"] = request.getfixturevalue("manifest_once")
    if case.hook:
        monkeypatch.setenv(FAIL_STEP_ENV, step)
    with pytest.raises(RuntimeError, match=rf"Inner task failed: \S*'{case.task}'"):
        pipeline()(kfp_host=kfp_api.url, **params)
    out = re.sub(r"\x1b\[[0-9;]*m", "", capfd.readouterr().out)
    assert case.says in out
    assert "benchmark ended FAILED" in out  # the exit handler ran, after the failure
    swept = re.search(
        rf"benchmark {bid}-[0-9a-f]{{10}}: deleted (\d+) runs, (\d+) experiments, (\d+) "
        r"pipeline versions, (\d+) pipelines",
        out,
    )
    assert swept, "the cleanup step's output is missing"
    if case.deleted is not None:
        assert tuple(map(int, swept.groups())) == case.deleted
    assert leftovers(kfp_api.url, bid) == 0

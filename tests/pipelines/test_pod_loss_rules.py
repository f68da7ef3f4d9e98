"""A load or LLM worker pod that dies (OOM-killed, evicted, past its deadline) must still give a
report on KFP's real backend: with any one worker task failed, aggregate, report and report_llm
each run exactly once and the run ends FAILED, by the Argo compiler's rules
(``tests/pipelines/argo_rules.py``, from kubeflow/pipelines 7b70c7b argocompiler/dag.go).

No Argo can run here, and kfp.local is kinder than Argo (it runs tasks downstream of a failed
loop), so this reads the compiled pipeline spec, ``compiled/kfp_bench.yaml``, as the backend would.
"""

from __future__ import annotations

import pytest
import yaml
from kfp import compiler, dsl

from kfp_bench.steps.compile import DEFAULT_OUT
from tests.pipelines._tiny import gather as _gather
from tests.pipelines._tiny import make as _make
from tests.pipelines._tiny import read as _read
from tests.pipelines._tiny import step as _step
from tests.pipelines.argo_rules import FAILED, SUCCEEDED, Invalid, Pipeline, Scenario

WORKERS = {"inference-load": ["aggregate", "report"], "llm-load": ["report-llm"]}
FLAGGED = {"check-outcome": lambda run: True, "check-outcome-2": lambda run: True}


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline(next(yaml.safe_load_all((DEFAULT_OUT / "kfp_bench.yaml").read_text())))


def _params(run_llm: bool) -> dict:
    return {"run_llm": run_llm, "results_uri": ""}


def test_the_imitation_runs_everything_once_when_nothing_fails(pipeline):
    run = pipeline.run(Scenario(set(), _params(True)))
    assert run.phase == SUCCEEDED
    for name in ("aggregate", "report", "report-llm", "check-outcome", "cleanup"):
        assert run.ran[name] == 1, name
    assert run.ran["inference-load"] == 2 and run.ran["llm-load"] == 2


@pytest.mark.parametrize("worker", sorted(WORKERS))
def test_a_dead_worker_pod_still_gives_each_report_once_and_a_failed_run(pipeline, worker):
    """The worker's step is retried; its retry saves the worker lost and succeeds
    (kfp_bench.steps.worker_start.worker_started), so the loop succeeds and the report steps
    run; the lost worker's flag (workers-lost) makes check_outcome fail the run."""
    try:
        run = pipeline.run(Scenario(set(), _params(True), decides=FLAGGED, dies={worker}))
    except Invalid as exc:
        pytest.fail(f"Argo would refuse or drop part of this pipeline: {exc}")
    for name in ("aggregate", "report", "report-llm"):
        assert run.ran[name] == 1, f"{name} ran {run.ran[name]} times with {worker} failed"
    assert run.ran[worker] == 4  # two iterations, each a dead pod and its retry
    assert run.ran["cleanup"] == 1
    assert run.phase == FAILED


# The imitation's own rules, on small pipelines the SDK compiles here.


def _compiled(func, tmp_path) -> Pipeline:
    path = tmp_path / "p.yaml"
    compiler.Compiler().compile(dsl.pipeline(name="p")(func), str(path))
    return Pipeline(yaml.safe_load(path.read_text()))


def test_a_hook_on_two_tasks_runs_twice(tmp_path):
    def two():
        a, b = _step(x="a"), _step(x="b")
        _step(x=a.output).after(b).ignore_upstream_failure()  # dag.go: a hook of a and of b

    run = _compiled(two, tmp_path).run(Scenario(set(), {}))
    assert run.ran["step-3"] == 2


def test_a_hook_on_a_loop_is_dropped(tmp_path):
    def on_loop():
        with dsl.ParallelFor(["0", "1"]) as i:
            w = _step(x=i)
        _gather(xs=dsl.Collected(w.output)).ignore_upstream_failure()

    with pytest.raises(Invalid, match="exit hook of the loop"):
        _compiled(on_loop, tmp_path).run(Scenario(set(), {}))


def test_a_dead_pod_fails_its_loop_and_skips_what_follows_unless_retried(tmp_path):
    def loop(retry: bool):
        def func():
            with dsl.ParallelFor(["0", "1"]) as i:
                w = _step(x=i)
                if retry:
                    w.set_retry(num_retries=1)
            _gather(xs=dsl.Collected(w.output))

        return func

    dead = _compiled(loop(False), tmp_path).run(Scenario(set(), {}, dies={"step"}))
    assert dead.ran["gather"] == 0 and dead.phase == FAILED
    retried = _compiled(loop(True), tmp_path).run(Scenario(set(), {}, dies={"step"}))
    assert retried.ran["gather"] == 1 and retried.phase == SUCCEEDED
    assert retried.ran["step"] == 4


def test_a_task_after_a_hook_task_is_refused(tmp_path):
    def after_hook():
        a = _step(x="a")
        b = _step(x=a.output).ignore_upstream_failure()
        _step(x=b.output)

    with pytest.raises(Invalid, match="in a hook's template only"):
        _compiled(after_hook, tmp_path).run(Scenario(set(), {}))


@pytest.mark.parametrize("results_uri", ["", "s3://b/p"])
def test_the_one_check_takes_the_report_that_ran(pipeline, results_uri):
    """report or report_history by results_uri, and one check of whichever ran: its outcome a
    parameter of dsl.OneOf, which 2.15.0 takes from the branch that completed."""
    run = pipeline.run(Scenario(set(), {"run_llm": False, "results_uri": results_uri}))
    ran = "report-history" if results_uri else "report"
    skipped = "report" if results_uri else "report-history"
    assert (run.ran[ran], run.ran[skipped], run.ran["check-outcome"]) == (1, 0, 1)
    assert run.phase == SUCCEEDED


def test_a_oneof_of_artifacts_is_refused_and_of_parameters_taken_from_the_branch_that_ran(tmp_path):
    def branches(artifact: bool):
        def func(flag: str = ""):
            with dsl.If(flag != ""):
                a = _make() if artifact else _step(x="a")
            with dsl.Else():
                b = _make() if artifact else _step(x="b")
            if artifact:
                _read(x=dsl.OneOf(a.outputs["out"], b.outputs["out"]))
            else:
                _step(x=dsl.OneOf(a.output, b.output))

        func.__annotations__ = {"flag": str}  # a type, not the text this module's import makes
        return func

    with pytest.raises(Invalid, match="a dsl.OneOf of artifacts"):
        _compiled(branches(True), tmp_path).run(Scenario(set(), {"flag": ""}))
    for flag in ("", "on"):
        run = _compiled(branches(False), tmp_path).run(Scenario(set(), {"flag": flag}))
        assert run.ran["step-3"] == 1 and run.phase == SUCCEEDED
    # the branch that ran failed: nothing for the OneOf to take, the reader fails in its driver
    run = _compiled(branches(False), tmp_path).run(Scenario({"step"}, {"flag": "on"}))
    assert run.ran["step-3"] == 0 and run.phase == FAILED

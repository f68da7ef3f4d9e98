"""A component says in one place what its pod installs: the extra of its @step mark."""

from __future__ import annotations

import pytest

import kfp_bench.components as comps
from kfp_bench.components._step import Delivery, step

IMAGE = "ghcr.io/example/kfp-bench@sha256:" + "2" * 64


@pytest.fixture(autouse=True)
def _default_delivery():
    """These tests are about the default delivery (package mode); kfp.local's session fixture
    (conftest.kfp_local) keeps image mode active once a test of this folder has used it, and
    with one process the files run in order: test_components.py before this one."""
    with Delivery().active():
        yield


@pytest.mark.parametrize("name", comps.__all__)
def test_each_component_is_documented_and_installs_only_its_extra(name):
    component = getattr(comps, name)
    spec = component.component_spec
    assert spec.description  # documented: the UI shows it
    command = " ".join(spec.implementation.container.command)
    extras = f"[{','.join(component.extras)}]" if component.extras else ""  # none: no deps
    assert f'"KFP-bench{extras} @ file://$wheel#sha256=' in command
    assert "EMBEDDED" not in command


def test_the_delivery_of_a_pipeline_build_reaches_its_steps():
    image = Delivery(image=IMAGE)
    with image.active():
        spec = comps.report.component_spec
    assert spec.implementation.container.image == IMAGE
    assert "pip install" not in " ".join(spec.implementation.container.command)
    # outside the build, the default again: package mode
    assert comps.report.component_spec.implementation.container.image == "python:3.11-slim"


def test_a_step_must_name_known_extras():
    known = "history, kfp, kube, llm, load, report, stats"
    with pytest.raises(ValueError, match=f"give some of {known}"):
        step("kserve")(lambda: None)


def test_check_params_takes_exactly_the_pipelines_parameters():
    """KFP reads a component's inputs from its function's signature, so check_params lists the
    parameters; they must stay BenchParams' fields, in order and of the same types."""
    import inspect
    from dataclasses import fields

    from kfp_bench.steps.params import BenchParams

    sig = inspect.signature(comps.check_params.func)
    want = [(f.name, f.type) for f in fields(BenchParams)] + [("job_id", "str")]
    assert [(n, p.annotation.__name__) for n, p in sig.parameters.items()] == want


def _takes_all(job_id: str, **params) -> dict:
    return {"job_id": job_id, **params}


def test_a_signature_override_declares_inputs_that_the_pod_then_drops(tmp_path):
    """Why check_params writes its inputs out (kfp_bench/components/check_params.py): KFP declares a
    component's inputs from ``__signature__``, but the pod runs the function's source text,
    whose executor passes only the inputs that text annotates. KFP's own Executor, run on the
    embedded source as executor_main runs it; if this ever fails, derive the inputs instead."""
    import inspect
    import json

    from kfp import dsl
    from kfp.dsl.executor import Executor

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    _takes_all.__signature__ = inspect.Signature(
        [inspect.Parameter(n, kind, annotation=t) for n, t in (("num_runs", int), ("job_id", str))],
        return_annotation=dict,
    )
    spec = dsl.component(_takes_all, base_image="python:3.11-slim").component_spec
    assert list(spec.inputs) == ["num_runs", "job_id"]  # declared from the override
    source = spec.implementation.container.command[-1]
    assert "def _takes_all(job_id: str, **params) -> dict:" in source  # shipped as written
    shipped: dict = {}
    # what kfp.dsl.executor_main loads from ephemeral_component.py (without this module's
    # __future__ annotations, as in the pod)
    exec(compile(source, "ephemeral_component.py", "exec", dont_inherit=True), shipped)
    out = tmp_path / "executor_output.json"
    executor_input = {
        "inputs": {"parameterValues": {"num_runs": 5, "job_id": "run-1"}},
        "outputs": {
            "parameters": {"Output": {"outputFile": str(tmp_path / "Output")}},
            "outputFile": str(out),
        },
    }
    Executor(executor_input, shipped["_takes_all"]).execute()
    got = json.loads(out.read_text())["parameterValues"]["Output"]
    assert got == {"job_id": "run-1"}  # num_runs was dropped

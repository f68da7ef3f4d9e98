"""A component says in one place what its pod installs: the extra of its @step mark."""

from __future__ import annotations

import kfp_bench.components as comps
import pytest
from kfp_bench.components._step import Delivery, step

IMAGE = "ghcr.io/example/kfp-bench@sha256:" + "2" * 64


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
    with pytest.raises(ValueError, match="give some of history, kfp, kube, load, report, stats"):
        step("kserve")(lambda: None)


def test_check_params_takes_exactly_the_pipelines_parameters():
    """KFP reads a component's inputs from its function's signature, so check_params lists the
    parameters; they must stay BenchParams' fields, in order and of the same types."""
    import inspect
    from dataclasses import fields

    from kfp_bench.params import BenchParams

    sig = inspect.signature(comps.check_params.func)
    want = [(f.name, f.type) for f in fields(BenchParams)] + [("job_id", "str")]
    assert [(n, p.annotation.__name__) for n, p in sig.parameters.items()] == want

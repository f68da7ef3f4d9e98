"""Fetch the child pipeline's manifest, check it and its run parameters, and keep it."""

from kfp.dsl import Dataset, Output
from kfp_bench.components._step import step


@step("kfp")
def stage_manifest(
    pipeline: str,
    run_parameters: dict,
    run_node_selector: dict,
    enabled: bool,
    manifest: Output[Dataset],
):
    """Resolve the child manifest (a bundled name or a URL) and keep the exact bytes that the
    runs step uploads, so the run's lineage shows what was benchmarked.

    Args:
        pipeline: noop, fanout, train or the URL of a compiled pipeline.
        run_parameters: the child runs' parameters, checked against the manifest.
        run_node_selector: the child runs' node selector (their node_selector parameter).
        enabled: false when the runs benchmark is switched off: the step only says so.
        manifest: the compiled child pipeline (YAML).
    """
    from kfp_bench import steps
    from kfp_bench.params import BenchParams

    p = BenchParams(
        pipeline=pipeline, run_parameters=run_parameters, run_node_selector=run_node_selector
    )
    manifest.metadata.update(steps.stage_manifest(p, enabled, manifest.path))

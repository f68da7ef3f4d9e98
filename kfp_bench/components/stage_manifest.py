"""Fetch the child pipeline's manifest, check it and its run parameters, and keep it."""

from kfp.dsl import Dataset, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("kfp")
def stage_manifest(params: dict, manifest: Output[Dataset]):
    """Resolve the child manifest (a bundled name or a URL) and keep the exact bytes that the
    runs step uploads, so the run's lineage shows what was benchmarked; with run_benchmark off
    the step only says so.

    Args:
        params: the checked parameters, from check_params.
        manifest: the compiled child pipeline (YAML).
    """
    from kfp_bench.steps import child_runs
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    manifest.metadata.update(child_runs.stage_manifest(p, manifest.path))

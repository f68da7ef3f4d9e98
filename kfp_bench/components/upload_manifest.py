"""The runs benchmark's first phase: upload the staged manifest and create the experiment."""

from kfp.dsl import Dataset, Input, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("kfp")
def upload_manifest(params: dict, manifest: Input[Dataset], runs: Output[Dataset]) -> str:
    """Upload the child pipeline as this benchmark's pipeline and create its experiment
    (kfp_bench.kfp.phases.upload), after one /metrics scrape of the KFP API server.

    Args:
        params: the checked parameters, from check_params.
        manifest: the child pipeline, from stage_manifest.
        runs: a directory: handle.json, phases.json and api_calls.jsonl, for spawn_runs.

    Returns:
        The benchmark handle (kfp_bench.kfp.phases.BenchmarkHandle) as JSON; empty when the
        runs benchmark is off.
    """
    from kfp_bench.steps import child_runs
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    return child_runs.upload_manifest(p, manifest.path, runs.path)

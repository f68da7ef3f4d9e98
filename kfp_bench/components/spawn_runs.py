"""The runs benchmark's second phase: create the child runs at bounded concurrency."""

from kfp.dsl import Dataset, Input, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("kfp")
def spawn_runs(params: dict, handle: str, uploaded: Input[Dataset], runs: Output[Dataset]) -> int:
    """Create num_runs runs of the uploaded pipeline in the benchmark's experiment,
    create_concurrency at a time (kfp_bench.kfp.phases.spawn).

    Args:
        params: the checked parameters, from check_params.
        handle: the benchmark handle from upload_manifest; empty: switched off, only says so.
        uploaded: upload_manifest's directory, carried on with this step's calls appended.
        runs: a directory: uploaded's files, the created run ids in phases.json, for poll_runs.

    Returns:
        How many runs were created.
    """
    from kfp_bench.steps import child_runs
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    return child_runs.spawn_runs(p, handle, uploaded.path, runs.path)

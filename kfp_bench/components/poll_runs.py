"""The runs benchmark's third phase: poll the child runs until final, and summarize."""

from kfp.dsl import Dataset, Input, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("kfp")
def poll_runs(params: dict, handle: str, spawned: Input[Dataset], runs: Output[Dataset]):
    """LIST the benchmark's runs page by page until all are final, terminating those still
    running run_timeout_sec after the spawn started (kfp_bench.kfp.phases.poll); the exit
    handler's cleanup deletes them afterwards.

    Args:
        params: the checked parameters, from check_params.
        handle: the benchmark handle from upload_manifest; empty: switched off, only says so.
        spawned: spawn_runs' directory, carried on with this step's calls appended.
        runs: a directory: runs_summary.json, runs.jsonl and api_calls.jsonl of all three
            phases; empty when switched off.
    """
    from kfp_bench.steps import child_runs
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    child_runs.poll_runs(p, handle, spawned.path, runs.path)

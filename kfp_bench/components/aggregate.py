"""Merge the load workers' results and the runs benchmark's into one results directory."""

from kfp.dsl import Dataset, Input, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("stats")
def aggregate(
    params: dict,
    runs: Input[Dataset],
    loads: Input[list[Dataset]],
    sweep: Input[Dataset],
    replicas: Input[Dataset],
    results: Output[Dataset],
):
    """Write a results directory (kfp_bench.results): the runs summary and records, and the
    workers' load histograms merged. A worker whose result is missing is named in
    load.workers.missing, never silently dropped.

    Args:
        params: the checked parameters, from check_params.
        runs: the runs step's directory (empty when the runs benchmark was switched off).
        loads: each load worker's result.
        sweep: the rate sweep's rows and knee ({"skipped": true} when it was off).
        replicas: the replica watcher's samples ({"skipped": true} when nothing was watched),
            joined with the load's per-second series into summary.json's replicas rows.
        results: the results directory.
    """
    from kfp_bench.steps import publish
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    paths = [d.path for d in loads]
    publish.aggregate(p, runs.path, paths, sweep.path, replicas.path, results.path)

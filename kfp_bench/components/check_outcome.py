"""Fail the run when the benchmark is flagged or a gate broke, once its report is published."""

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step()
def check_outcome(outcome: str, params: dict) -> str:
    """Push the figures to pushgateway_url when set (kfp_bench.push), then fail when the results
    carry a failure flag (kfp_bench.outcome) or a gate the report step checked broke
    (thresholds, fail_on_regression; kfp_bench.gates), so that the run does not end SUCCEEDED;
    it runs after the report step, whose outputs are published by then. A failed push fails it
    too.

    A failed task publishes none of its outputs (only its logs), so the report step itself
    never fails for a flag: kfp 2.x's launcher (backend/src/v2/component/launcher_v2.go,
    ``uploadOutputArtifacts``: "Only register executor log artifact if component execution
    failed") would drop the HTML, Markdown and metrics the flags are shown in.

    Args:
        outcome: what the report step found (kfp_bench.steps.outcome.outcome_of): its flags,
            gates and metrics; a string, which KFP 2.15.0 takes from whichever of report and
            report_history ran (kfp_bench.steps.outcome).
        params: the checked parameters, from check_params.

    Returns:
        What was checked and found sound, e.g. "no failure flag, no gate broken", and what was
        pushed.
    """
    from kfp_bench.steps import outcome as checked

    return checked.check_outcome(outcome, params)

"""Fail the run when the benchmark is flagged, once its report is published."""

from kfp.dsl import Dataset, Input
from kfp_bench.components._step import step


@step()
def check_outcome(results: Input[Dataset], params: dict) -> str:
    """Push the figures to pushgateway_url when set (kfp_bench.push), then fail when the results
    carry a failure flag (kfp_bench.outcome), so that a flagged run does not end SUCCEEDED; it
    runs after report, whose outputs are published by then. A failed push fails it too.

    A failed task publishes none of its outputs (only its logs), so the report step itself
    never fails for a flag: kfp 2.x's launcher (backend/src/v2/component/launcher_v2.go,
    ``uploadOutputArtifacts``: "Only register executor log artifact if component execution
    failed") would drop the HTML, Markdown and metrics the flags are shown in.

    Args:
        results: the results directory a report step wrote (summary.json, metrics.json).
        params: the checked parameters, from check_params.

    Returns:
        "no failure flag" when none is set, and what was pushed.
    """
    from kfp_bench import steps

    return steps.check_outcome(results.path, params)

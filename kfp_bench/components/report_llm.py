"""The LLM load's results and report as the KFP UI shows them: HTML, Markdown and metrics."""

from kfp.dsl import HTML, Dataset, Input, Markdown, Metrics, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("report")
def report_llm(
    params: dict,
    loads: Input[list[Dataset]],
    results: Output[Dataset],
    html: Output[HTML],
    summary: Output[Markdown],
    metrics: Output[Metrics],
) -> str:
    """Merge the LLM workers' results (a missing one named and flagged workers-lost) and
    publish the LLM report bundle (kfp_bench.steps.llm_steps.report_llm).

    Args:
        params: the checked parameters, from check_params.
        loads: each LLM load worker's result.
        results: llm.json (the merged result, for kfp-bench report and merge), summary.json
            (the flags check_outcome reads) and the bundle's files.
        html: the self-contained LLM report: TTFT and ITL distributions, tokens/s over time,
            goodput.
        summary: the Markdown summary.
        metrics: the LLM metrics, names stable (kfp_bench.stats.llm.metric_values).

    Returns:
        What check_outcome checks (kfp_bench.steps.outcome.outcome_of).
    """
    from kfp_bench.steps import llm_steps, outcome
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    paths = [d.path for d in loads]
    found = llm_steps.report_llm(p, paths, results.path, html.path, summary.path)
    for name, value in found.items():
        metrics.log_metric(name, value)
    return outcome.outcome_of(results.path, "llm")

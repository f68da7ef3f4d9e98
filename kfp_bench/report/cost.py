"""The cost lines of the reports (``kfp_bench.stats.cost``): text after hey's and the LLM's
summaries, rows of the Markdown and HTML tables, and the Metrics. A result without a price
(``cost_per_hour`` 0 or absent) shows no cost."""

from __future__ import annotations

from kfp_bench.figures import sig
from kfp_bench.report.fmt import Section, load_rows
from kfp_bench.stats.cost import KEY, Cost, llm_metrics, of_llm, of_load

UNKNOWN = "unknown"


def _money(v: float | None) -> str:
    return UNKNOWN if v is None else sig(v, 6)


def rows(cost: Cost | None, *, llm: bool) -> list[list[str]]:
    """[label, value] rows of ``cost``; none without one."""
    if cost is None:
        return []
    what = "completed streams" if llm else "successful requests"
    out = [
        ["Cost per hour (given)", _money(cost.per_hour)],
        [f"Cost of the window ({sig(cost.window_s, 4)} s measured)", _money(cost.total)],
        [
            "Cost per 1000 requests",
            f"{_money(cost.per_thousand_requests)} ({cost.requests} {what})",
        ],
    ]
    if llm:
        tokens = cost.output_tokens
        why = "output tokens unknown" if tokens is None else f"{tokens} output tokens"
        out.append(
            ["Cost per 1M output tokens", f"{_money(cost.per_million_output_tokens)} ({why})"]
        )
    return out


def write_text(cost: Cost | None, w, *, llm: bool) -> None:
    """The cost section in hey's layout (tab-separated labels), through ``w``; nothing without
    a cost."""
    if cost is None:
        return
    w("\nCost (the serving capacity's price over the load's measured window):\n")
    for label, value in rows(cost, llm=llm):
        w(f"  {label}:\t{value}\n")


def of_load_stats(stats) -> Cost | None:
    """The cost of a ``LoadStats`` whose options carry ``cost_per_hour``."""
    s = stats.summary()
    return of_load(stats.requests, stats.requests - stats.ok, s.duration_s, stats.options.get(KEY))


def of_tables(t) -> Cost | None:
    """The cost of a results directory's load (``report.tables.Tables``): the price from
    summary.json's ``cost_per_hour``."""
    if t.load is None:
        return None
    load = t.load
    return of_load(load["requests"], load["errors"], load["total_s"], t.summary.get(KEY))


def load_table(t) -> list[list[str]]:
    """The Markdown and HTML load table: hey's summary, then the cost."""
    return [list(r) for r in load_rows(t.load)] + rows(of_tables(t), llm=False)


def llm_section(stats) -> list[Section]:
    """The LLM bundle's "Cost" section, or none."""
    found = rows(of_llm(stats.summary(), stats.options.get(KEY)), llm=True)
    if not found:
        return []
    intro = (
        "The serving capacity's price for the time the load took (its measured window, at the "
        "throughput it achieved), divided by what it served in that window."
    )
    return [Section("Cost", intro, tables=[(["cost", "value"], found)])]


def llm_stats_metrics(stats) -> dict:
    """The metrics of an ``LlmStats``' cost."""
    return llm_metrics(of_llm(stats.summary(), stats.options.get(KEY)))


def price(files, dirs, per_hour) -> None:
    """``kfp-bench report --cost-per-hour``: the price given set on every input (result files'
    ``(path, stats)`` and results directories), over any price they were saved with."""
    if not per_hour:
        return
    for _, stats in files:
        for one in getattr(stats, "steps", None) or [stats]:  # an LLM sweep: each step
            one.options[KEY] = per_hour
    for res in dirs:
        res.summary[KEY] = per_hour

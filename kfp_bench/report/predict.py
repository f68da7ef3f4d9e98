"""The sections of the benchmark's report (runs, full database, load, sweep, replicas, history),
built once from finished tables: summary.md (``markdown.page``) and report.html (``html.page``)
render the same list, the Markdown leaving the charts to the HTML."""

from __future__ import annotations

from kfp_bench.figures import HDR_MS, num
from kfp_bench.report import cost, fill_server, fmt
from kfp_bench.report import fill as fill_report
from kfp_bench.report import runs as runs_report
from kfp_bench.report.fmt import Section
from kfp_bench.report.metrics import RUN_RES, resolution
from kfp_bench.report.tables import (
    Tables,
    run_times_caption,
    run_times_shown,
    sweep_shown,
    task_times_shown,
)

#: The earlier results' figures in the history's table, and how many of them it shows.
HISTORY_KEYS = ("run_duration_p50_s", "api_create_run_p99_ms", "load_p99_ms", "load_rps")
HISTORY_ROWS = 15


def sections(t: Tables, history=None, server: Section | None = None) -> list[Section]:
    """The report's sections, in order; ``server``: the server metrics' section of the load
    (``report.server_plots.load_section``); ``history``: a ``kfp_bench.history.History``."""
    out = _runs(t) if t.has_runs else []
    fill = fill_report.wide(t.summary)
    if fill is not None:  # the full-database probe: p50 of each call at each K
        title = "Full database: p50 of the UI's calls at each K (milliseconds)"
        out.append(Section(title, figures=("fill_latency",), tables=[fmt.rows(fill, "K")]))
        out.append(fill_server.server_section(t.summary))  # with a metrics profile
    if t.load is not None:
        out.append(Section("Load", tables=[(["summary", "value"], cost.load_table(t))]))
        pcts = fmt.rows(t.load_pcts, res=HDR_MS)
        figures = ("load_latency", "load_timeline", "load_stages")  # (report/stage_plot.py)
        title = "Latency percentiles (milliseconds)"
        out.append(Section(title, figures=figures, tables=[pcts], level=3))
    out.append(server)
    if t.sweep is not None:
        sweep = [fmt.rows(sweep_shown(t.sweep))]
        out.append(Section("Rate sweep", figures=("sweep",), tables=sweep))
    if t.replicas is not None and "ready" in t.replicas:
        r = t.replicas
        span = num(float(r["t_s"].max() - r["t_s"].min()))
        intro = (
            f"Ready replicas from {int(r['ready'].min())} to {int(r['ready'].max())} "
            f"over {span} s ({len(r)} samples)."
        )
        out.append(Section("Replicas", intro))
    if history is not None:
        out += _history(history, t.resolution)
    if t.notes:
        out.append(Section("Notes", items=list(t.notes)))
    return [s for s in out if s is not None]


def _runs(t: Tables) -> list[Section]:
    states = [fmt.rows(t.states.set_index("state"))] if len(t.states) else []
    times = [fmt.rows(run_times_shown(t), "phase")]
    if t.run_bounds is not None:
        times += ["Bounds of each statistic (s):", fmt.rows(t.run_bounds, "phase")]
    caption = run_times_caption(t) or ""
    api = ("api_create_run", "api_get_run", "api_delete_run", "api_ecdf")
    title = "Run times (seconds, from server timestamps)"
    out = [
        Section("Runs", figures=("run_states",), tables=states),
        Section(title, caption, ("run_durations",), times, level=3),
        Section("API calls, client side (milliseconds)", figures=api, level=3),
    ]
    if len(t.api_ops):
        out[-1].tables.append(fmt.rows(t.api_ops))
    if len(t.task_times):
        tasks = [fmt.rows(task_times_shown(t))]
        out.append(Section("Tasks (seconds)", figures=("task_breakdown",), tables=tasks, level=3))
    out.append(runs_report.server_section(t.summary))  # KFP's own histogram beside the client's
    return out


def _history(h, run_res: float | None) -> list[Section]:
    """The earlier results' headline figures and the regression tests; ``run_res``: this
    result's run times' resolution, the tests' medians' too."""
    intro = f"{len(h.entries)} earlier results in {h.uri}; this result's key: {h.key or '-'}."
    out = [Section("History", intro, figures=("trend",))]
    if h.entries:
        keys = (*HISTORY_KEYS, "regression")
        body = [
            [e.key] + [num(e.metrics.get(k), resolution(k, e.metrics.get(RUN_RES))) for k in keys]
            for e in reversed(h.entries)
        ]
        if len(body) > HISTORY_ROWS:
            out[0].tables.append(f"The latest {HISTORY_ROWS}:")
        out[0].tables.append((["key", *keys], body[:HISTORY_ROWS]))
    v = h.verdict
    if v is not None:
        intro = (
            "One-sided Mann-Whitney U (latencies, durations) and Fisher exact (failures) against "
            f"{len(v.baseline)} earlier result(s) ({', '.join(v.baseline)}); Holm-adjusted p, "
            f"alpha {v.alpha:g}, minimum effect {v.min_effect:.0%} of the median."
        )
        body = fmt.regression_rows(v, lambda m: resolution(m, run_res))
        marks = ["reg" if test.regressed else "" for test in v.tests]
        tables = [(fmt.REGRESSION_HEAD, body, marks)]
        if v.skipped:
            tables.append(f"Not tested (too few samples): {', '.join(sorted(v.skipped))}.")
        out.append(Section("Regression tests", intro, tables=tables, level=3))
    return out

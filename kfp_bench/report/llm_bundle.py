"""The report bundle of a saved LLM result (``kfp-bench llm --json-out``, or a merge of them).

``write_llm_bundle`` writes ``FILES`` (and gates.json with gates) whole or not at all
(``report.folder``): the tables are built once as ``fmt.Section``s and rendered by the shared
Markdown and HTML writers, so the two never disagree; an LLM sweep's rows add goodput against
load."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from kfp_bench.figures import DASH, HDR_MS, count, num, pct, when
from kfp_bench.gates import counts, evaluate
from kfp_bench.outcome import describe, describe_warnings
from kfp_bench.report import cost, html, llm_plots, llm_text
from kfp_bench.report.bundle import write_pages
from kfp_bench.report.fmt import Section
from kfp_bench.report.hey import error_lines
from kfp_bench.report.llm_text import OPEN_LOOP_ONLY, ROWS
from kfp_bench.report.server_plots import llm_section
from kfp_bench.stats.llm import LlmStats, LlmSummary, metric_values
from kfp_bench.stats.pareto import PER_USER, SHORT, UNSCALED, Scale, fronts
from kfp_bench.stats.token_series import COUNTS

FILES = ("report.html", "summary.md", "metrics.json", "llm_latency.csv", "llm_series.csv")
PCT_COLUMNS = ("p50", "p90", "p95", "p99", "p99_9", "min", "max", "mean")
UNKNOWN = "unknown"
TITLE = "kfp-bench LLM report"
#: The headline cards of the page: metric, label, unit.
CARDS = (
    ("llm_rps", "requests", "req/s"),
    ("output_tokens_per_s", "output tokens", "tok/s"),
    ("ttft_p50_ms", "TTFT p50", "ms"),
    ("ttft_p99_ms", "TTFT p99", "ms"),
    ("itl_p99_ms", "ITL p99", "ms"),
    ("goodput_ratio", "goodput", ""),
)


def write_llm_bundle(
    stats: LlmStats,
    out_dir: str | os.PathLike,
    *,
    source: str = "",
    sweep: list[dict] | None = None,
    gates=(),
    sweep_by: str | None = None,
    server=None,
    search: dict | None = None,
) -> dict[str, Path]:
    """Write the bundle of ``stats`` into ``out_dir`` (created when missing).

    Args:
        stats: a finished LLM result (``kfp_bench.stats.store.load``).
        out_dir: the folder; other files in it are carried over.
        source: the results file's name, shown in the header.
        sweep: goodput against load, one dict per step of an LLM sweep (``level`` first, then
            its figures: ``stats.rate_sweep.LlmSweep.rows``).
        gates: ``kfp_bench.gates.Gate``s checked against the metrics: their verdicts open both
            pages, join the metrics (gates_checked, gates_broken) and go to gates.json.
        sweep_by: what the sweep stepped, "rate" or "concurrency" (its chart's x axis).
        server: the server's series of the load (``kfp_bench.metrics.series``), or None: a
            section of its own (``report.server_plots``).
        search: a --find-max search (``LlmSweep.search``): its boundary and probes, a section
            after the summary; ``stats`` is then its last passing probe.

    Returns:
        Each file's name (``FILES``) mapped to its path in ``out_dir``.
    """
    s = stats.summary()
    metrics = {**metric_values(s), **cost.llm_stats_metrics(stats)}  # report/cost.py
    verdicts = evaluate(gates, metrics)
    if gates:
        metrics.update(counts(verdicts))
    scale = Scale.of(stats.options)  # --replicas, --gpus, --cost-per-hour
    parts = [*sections(s, sweep, scale), *cost.llm_section(stats)]
    if search:
        parts.insert(1, search_section(search))
    head = header(s, stats, source)
    figures = llm_plots.render(stats, sweep, sweep_by, scale)
    if server is not None:
        section, more = llm_section(stats, s, server)
        parts.insert(3, section)
        figures += more
    records = {"llm_latency.csv": _latency_csv(s), "llm_series.csv": _series_csv(stats)}
    return write_pages(
        out_dir, TITLE, head, parts, figures, metrics, verdicts=verdicts, gates=gates,
        failed=describe(s.flags), top_html=html.cards(metrics, CARDS),
        footer=f"Charts: report.html. Records: {', '.join(FILES[3:])}.\n", records=records,
    )  # fmt: skip


def header(s: LlmSummary, stats: LlmStats, source: str) -> str:
    loop = "open loop (from the intended send times too)" if s.corrected else "closed loop"
    target = stats.options.get("url") or stats.options.get("base_url") or ""
    where = f" against {target}" if target else ""
    of = f"{source}: " if source else ""
    return (
        f"{of}LLM streaming load{where}, started {when(stats.started_at)}, "
        f"{num(s.duration_s)} s, {loop}"
    )


# -- the tables --------------------------------------------------------------------------------
def sections(s: LlmSummary, sweep: list[dict] | None = None, scale=UNSCALED) -> list[Section]:
    """The report's parts, in order, as plain-text tables (``scale``: the replicas, GPUs and
    price the sweep was given, for its Pareto front)."""
    out = [
        Section("Summary", tables=[(["summary", "value"], _summary_rows(s))]),
        Section(
            "Latency",
            "Milliseconds, from the HDR histograms. TTFT: from the send to the first content "
            "chunk; ITL: every gap between content chunks, pooled over requests; TPOT: per "
            "completed request, the first token excluded (docs/llm-metrics.md).",
            ("llm_ttft", "llm_itl"),
            [(["metric", "count", *(c.replace("_", ".") for c in PCT_COLUMNS)], _pct_rows(s))],
        ),
        Section(
            "Throughput over time",
            "Per second in llm_series.csv; overall: "
            f"{_or_unknown(s.output_tokens_per_s)} output tokens/s, {num(s.rps)} requests/s.",
            ("llm_timeline",),
        ),
        Section("Goodput", tables=[(["goodput", "value"], _goodput_rows(s))]),
    ]
    if s.turns:
        out.append(_turns(s))
    if sweep:
        keys = list(dict.fromkeys(k for point in sweep for k in point))
        body = [[v if isinstance(v, str) else num(v) for v in map(p.get, keys)] for p in sweep]
        out.append(Section("Goodput against load", figures=("llm_sweep",), tables=[(keys, body)]))
        if len(sweep) > 1:
            out.append(pareto_section({"": (sweep, scale)}))
    out.append(_failures(s))
    out.append(_usage(s))
    notes = [*llm_text.token_notes(s, count), *llm_text.measured_notes(s, count)]
    if notes:
        out.append(Section("Notes", items=notes))
    return out


def search_section(search: dict) -> Section:
    """A --find-max search: the boundary between the last passing and first failing level, and
    every probe in the order it ran (``load.llm_find``)."""
    by, ok, bad = search["by"], search["passing"], search["failing"]
    if ok is not None and bad is not None:
        where = f"between {num(ok)} (passes) and {num(bad)} (fails)"
    else:
        where = f"at least {num(ok)}" if ok is not None else f"below {num(bad)}"
    intro = (
        f"The highest {by} at which the SLO {search['slo']} holds for {pct(search['share'])} of "
        f"the requests: {where}, {search['reason']}. Probes of {num(search['probe_s'])} s "
        f"(warm-up {num(search['warmup_s'])} s); the report's figures are the last passing "
        "probe's (the lowest probe's when none passed)."
    )
    body = [[str(pr["probe"]), num(pr["level"]), pct(pr["good_ratio"]),
             "passes" if pr["passed"] else "fails"] for pr in search["probes"]]  # fmt: skip
    return Section("SLO search", intro, tables=[(["probe", by, "good", "verdict"], body)])


def pareto_section(sweeps: dict) -> Section:
    """What one user gets against what the server serves, level by level, each sweep's front
    and the front over all marked (``stats.pareto.fronts``; ``sweeps``: name -> (rows, scale),
    one sweep named "")."""
    y, label, pts = fronts(sweeps)
    several = len(sweeps) > 1
    shown = [k for k in LABELS if any(p[k] is not None for p in pts) or k == y]
    head = [*(["sweep"] if several else []), "level", PER_USER, *(LABELS[k] for k in shown)]
    head += [*(["its own front"] if several else []), "Pareto front"]
    body = [
        [*([p["sweep"]] if several else []), num(p["level"]), _or_unknown(p["per_user"]),
         *(_or_unknown(p[k]) for k in shown),
         *([_on(p["own"])] if several else []), _on(p["front"])]
        for p in pts
    ]  # fmt: skip
    intro = (
        f"A level is on the front when no other level gives both more output tokens/s per user "
        f"and more {label.removeprefix('output ')}{' (of any sweep)' if several else ''} "
        "(docs/llm-metrics.md); a level with either unknown is on none."
    )
    return Section(f"Per user against {SHORT[y]}", intro, ("llm_pareto",), [(head, body)])


#: The server side's columns of the Pareto table, in order, by their points' keys.
LABELS = {
    "output_tokens_per_s": "output tok/s", "per_replica": "output tok/s per replica",
    "per_gpu": "output tok/s per GPU", "tokens_per_price": "output tokens per unit of price",
}  # fmt: skip


def write_pareto_page(sweeps: dict, out_dir: str | os.PathLike, head: str) -> dict[str, Path]:
    """``kfp-bench compare --out``: report.html (the chart, each sweep's front and the front
    over all) and summary.md of ``sweeps`` (name -> (rows, ``stats.pareto.Scale``))."""
    parts = [pareto_section(sweeps)]
    figures = llm_plots.render_pareto(sweeps)
    title = "kfp-bench LLM sweeps compared"
    return write_pages(out_dir, title, head, parts, figures, None, verdicts=(),
                       footer="Chart: report.html.\n", records={})  # fmt: skip


def _on(front: bool) -> str:
    return "on the front" if front else DASH


def _or_unknown(v) -> str:
    return UNKNOWN if v is None else num(v)


def _turns(s: LlmSummary) -> Section:
    per_session = llm_text.sessions_cached(s.cached)
    return Section(
        "Per turn",
        f"A multi-turn load: {llm_text.sessions_line(s.turns)} (sessions started and completed "
        "to their last turn); each turn carries the session's earlier prompts and answers. "
        "Milliseconds from the send; input and cached tokens from the server's usage."
        + (f" Cached per session: {per_session}." if per_session else ""),
        ("llm_turns",),
        [(list(llm_text.TURN_HEADER), [llm_text.turn_cells(r) for r in s.turns])],
    )


def _summary_rows(s: LlmSummary) -> list[list[str]]:
    return [
        [
            "requests",
            f"{count(s.requests)} ({count(s.completed)} completed, {count(s.failed)} failed)",
        ],
        ["duration", f"{num(s.duration_s)} s (measured {num(s.measured_s)} s)"],
        ["requests/s", num(s.rps)],
        ["output tokens", _tokens(s.output_tokens, s.output_tokens_per_s)],
        ["input tokens", _tokens(s.input_tokens, s.input_tokens_per_s)],
        ["cached input tokens", llm_text.cached_text(s.cached, count)],
    ]


def _tokens(total: int | None, per_s: float | None) -> str:
    return UNKNOWN if total is None else f"{count(total)} ({num(per_s)}/s)"


def _pct_rows(s: LlmSummary) -> list[list[str]]:
    rows = []
    for key in ROWS:
        if key in OPEN_LOOP_ONLY and not s.corrected:
            continue  # equal to the rows from the send in closed loop
        lat = s.latency_ms[key]
        cells = [num(lat[c], None if c == "mean" else HDR_MS) if lat["count"] else DASH
                 for c in PCT_COLUMNS]  # fmt: skip
        rows.append([llm_text.row_label(s, key), count(lat["count"]), *cells])
    return rows


def _goodput_rows(s: LlmSummary) -> list[list[str]]:
    return [
        ["SLO", s.slo or "none: every completed request is good"],
        ["good requests", f"{count(s.good)} of {count(s.requests)}"],
        ["good ratio", pct(s.good_ratio)],
        ["goodput", f"{num(s.goodput_rps)} requests/s"],
    ]


def _failures(s: LlmSummary) -> Section:
    sec = Section("Failures", f"{count(s.failed)} of {count(s.requests)} requests failed.")
    if s.errors:  # grouped as the text summary groups them
        rows = [[text, count(n)] for text, n in error_lines(s.errors, " ")]
        sec.tables.append((["error", "requests"], rows))
    if s.status_codes:
        codes = [[str(c), count(n)] for c, n in s.status_codes.items()]
        sec.tables.append((["HTTP status", "responses"], codes))
    return sec


def _usage(s: LlmSummary) -> Section:
    u = s.usage
    body = [
        ["usage missing", count(u["missing"])],
        ["fewer tokens than content chunks", count(u["fewer"])],
        ["more tokens than content chunks", count(u["more"])],
    ]
    sec = Section(
        "Token usage",
        "Completed requests whose usage (the server's token counts) disagrees with the "
        "content chunks.",
        tables=[(["completed requests", "count"], body)],
    )
    sec.items = describe_warnings(s.flags)  # long sentences: a list, not a table's cells
    return sec


def _latency_csv(s: LlmSummary) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["metric", "count", *(f"{c}_ms" for c in PCT_COLUMNS)])
    for key, lat in s.latency_ms.items():
        w.writerow([key, lat["count"], *(lat[c] for c in PCT_COLUMNS)])
    return buf.getvalue()


def _series_csv(stats: LlmStats) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["t_s", "t", *COUNTS, "inflight"])
    rows = stats.series.rows()
    for r in rows:
        w.writerow([r["t"] - rows[0]["t"], r["t"], *(r[k] for k in COUNTS), r["inflight"]])
    return buf.getvalue()

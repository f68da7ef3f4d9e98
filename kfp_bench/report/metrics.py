"""metrics.json: the scalar metrics of one benchmark, a flat ``{name: number}`` dict.

This is also what the KFP component logs as its ``dsl.Metrics`` output, and what the history store
keeps for the trend chart, so the names are an interface: **keep them stable**. A name is only
ever added, in ``report.metric_names`` too (the reference). A metric whose value is unknown
(nothing measured) is left out, never NaN.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from kfp_bench.figures import HDR_MS
from kfp_bench.outcome import failures
from kfp_bench.report import cost
from kfp_bench.report.runs import RUN_TIMES
from kfp_bench.report.tables import STATS, Tables, build
from kfp_bench.results import LOAD_SUMMARY_KEYS, Results, flags
from kfp_bench.stats.cost import load_metrics
from kfp_bench.stats.runs import OPERATIONS

_LOAD_PCTS = ("p50", "p90", "p95", "p99", "p99_9")
#: The metric of the run times' resolution (s).
RUN_RES = "run_time_resolution_s"
#: A run time: a statistic of one (``stat``), or without one the samples of a regression test.
_RUN_FIGURE = re.compile(r"run_(?:duration|queue_delay|execution)(?:_(?P<stat>mean|p\d+|max))?_s")
#: A percentile (or the maximum) of an HDR histogram: the load's and the LLM load's latencies.
_HDR_FIGURE = re.compile(
    r"(?:load(?:_uncorrected|_no_response)?|(?:ttft|e2e)(?:_intended|_turn\d+)?|itl|tpot|sched_lag)"
    r"_(?:p\d+(?:_\d+)?|max)_ms"
)


def resolution(name: str, run_res: float | None) -> float | None:
    """The resolution of the source of figure ``name``, in its unit, to print it with
    (``kfp_bench.figures``): a run time at ``run_res``, its timestamps' (``RUN_RES``; a
    mean, over its count of runs, two decimals finer; the median of a regression test's
    samples, named without a statistic, half way between two), an HDR percentile at a
    microsecond; None for the rest, whose sources are finer than they print."""
    run = _RUN_FIGURE.fullmatch(name)
    if run:
        if not run_res:
            return None
        return {"mean": run_res / 100, None: run_res / 2}.get(run["stat"], run_res)
    return HDR_MS if _HDR_FIGURE.fullmatch(name) else None


def _name(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _put(out: dict, name: str, value) -> None:
    if value is None:
        return
    v = float(value)
    if math.isfinite(v):
        out[name] = int(v) if isinstance(value, bool | int) else round(v, 6)


def collect(tables: Tables, verdict=None) -> dict[str, float]:
    """The flat metrics of ``tables`` (and of ``verdict``, a ``kfp_bench.history.regress.Verdict``),
    sorted by name."""
    out: dict[str, float] = {}
    _failures(tables, out)
    if tables.has_runs:
        _runs(tables, out)
    if tables.load is not None:
        _load(tables, out)
        out.update(load_metrics(cost.of_tables(tables)))  # with a cost_per_hour
    if tables.replicas is not None and "ready" in tables.replicas:
        _put(out, "replicas_max", int(tables.replicas["ready"].max()))
        _put(out, "replicas_min", int(tables.replicas["ready"].min()))
    answered = None if tables.sweep is None else tables.sweep[tables.sweep["p99_ms"].notna()]
    if answered is not None and len(answered):  # a step without a response has no throughput
        best = answered.loc[answered["rps"].idxmax()]
        _put(out, "sweep_max_rps", best["rps"])
        _put(out, "sweep_p99_ms_at_max_rps", best["p99_ms"])
    if verdict is not None:
        out.update(verdict.metrics())
    return dict(sorted(out.items()))


def of_summary(summary: dict, load=None) -> dict[str, float]:
    """The metrics of a results summary held in memory (and its load stats), as ``collect``
    gives them for a results directory: what a benchmark command's gates are checked against."""
    return collect(build(Results(Path("."), summary, load=load)))


def of_load(stats) -> dict[str, float]:
    """The metrics of a load result (``kfp-bench load``), as its results directory gives them."""
    full = stats.to_dict()
    price = {cost.KEY: stats.options.get(cost.KEY)}  # the price --cost-per-hour saved
    return of_summary(
        {"load": {k: full[k] for k in LOAD_SUMMARY_KEYS if k in full}, **price}, stats
    )


def _failures(t: Tables, out: dict) -> None:
    found = failures(flags(t.summary))
    out["failures"] = len(found)
    for flag in found:
        out[f"flag_{_name(flag)}"] = 1


def _runs(t: Tables, out: dict) -> None:
    runs = t.summary.get("runs") or {}
    counts = t.states.groupby("outcome")["count"].sum()
    created = int(t.states["count"].sum())
    _put(out, "runs_requested", int(runs.get("requested", created)))
    _put(out, "runs_created", created)
    for key in ("succeeded", "failed", "other"):
        _put(out, f"runs_{key}", int(counts.get(key, 0)))
    if created:
        _put(out, "runs_success_ratio", counts.get("succeeded", 0) / created)
    for attr, label in RUN_TIMES:
        row = t.run_times.loc[label]
        for s in STATS[1:]:
            _put(out, f"run_{attr}_{s}_s", row[s])
        _put(out, f"run_{attr}_count", int(row["count"]))
    _put(out, RUN_RES, t.resolution)
    ops = t.api_ops
    _put(out, "api_calls_total", int(ops["count"].sum()))
    _put(out, "api_errors_total", int(ops["errors"].sum()))
    for op in OPERATIONS:
        out[f"api_{op}_count"] = 0
        out[f"api_{op}_errors"] = 0
    for op, row in ops.iterrows():
        name = _name(str(op))
        _put(out, f"api_{name}_count", int(row["count"]))
        _put(out, f"api_{name}_errors", int(row["errors"]))
        for s in STATS[1:]:
            _put(out, f"api_{name}_{s}_ms", row[s])


def _load(t: Tables, out: dict) -> None:
    s = t.load
    _put(out, "load_requests", s["requests"])
    _put(out, "load_errors", s["errors"])
    _put(out, "load_duration_s", s["total_s"])
    _put(out, "load_rps", s["rps"])
    _put(out, "load_success_ratio", s["success_ratio"])
    _put(out, "load_responses", s["responses"])
    _put(out, "load_no_response", s["no_response"])
    for p, v in (s["no_response_ms"] or {}).items():
        if p in ("mean", "p50", "p90", "p99", "max"):
            _put(out, f"load_no_response_{p}_ms", v)
    _put(out, "load_mean_ms", s["average_ms"])
    _put(out, "load_max_ms", s["slowest_ms"])
    for p in _LOAD_PCTS:
        key = p.replace("_", ".")
        _put(out, f"load_{p}_ms", t.load_pcts.loc[key, "corrected_ms"])
        _put(out, f"load_uncorrected_{p}_ms", t.load_pcts.loc[key, "uncorrected_ms"])
    cpu = s.get("client_cpu")
    if cpu:
        _put(out, "load_client_cpu_cores", cpu["cores"])
        _put(out, "load_client_cpu_us_per_request", cpu["us_per_request"])
        _put(out, "load_client_busiest_process", cpu["busiest"])
        if cpu["throttled_s"] is not None:
            _put(out, "load_client_throttled_s", cpu["throttled_s"])

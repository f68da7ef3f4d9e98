"""Aggregation for the report bundle: pandas tables built from one results directory.

Everything the charts, the Markdown, the HTML and metrics.json show is computed here, once, from
the records (``RunRecord``, ``TaskRecord``, ``ApiCall``) and the load stats; the renderers only
format. When a results directory has no JSON-lines records (a summary written by another tool),
the run and API tables fall back to the percentiles in summary.json (without p95, which the
summary does not keep).

Units are part of the column names: ``_s`` seconds, ``_ms`` milliseconds. Times on the shared time
axis (``t_s``) are seconds from the start of the load.

Run figures come at the resolution of the server's timestamps (``Tables.resolution``; 1 s on a
real KFP server): quantised ones take nearest-rank percentiles, and ``run_bounds`` gives each
statistic's bounds (``kfp_bench.stats.runs.figure``, docs/run-figures.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kfp_bench.figures import DASH, HDR_MS, clock, fixed, num, pct, span
from kfp_bench.outcome import FAILURES, failures
from kfp_bench.outcome import describe as describe_flags
from kfp_bench.records import ApiCall, RunRecord
from kfp_bench.report.runs import RUN_TIMES, run_time
from kfp_bench.results import Results, flags
from kfp_bench.stats.load import LoadStats, cpu_figures
from kfp_bench.stats.runs import FIGURES, FINDS, failed_calls, quantised

#: The statistics of every distribution table, in column order.
STATS = ("count", "mean", "p50", "p90", "p95", "p99", "max")
#: States counted as a success and as a failure; any other final state is "other".
SUCCEEDED, FAILED = ("SUCCEEDED",), ("FAILED", "CANCELED", "CANCELING")
#: The percentiles of the load's latency table (corrected and uncorrected).
LOAD_PCTS = (50.0, 90.0, 95.0, 99.0, 99.9)
#: Epoch seconds start here: smaller times in replicas rows are already offsets from the start.
_EPOCH = 1e9
#: load_series.csv's columns, the per-second series (``load_series_frame``).
SERIES_COLUMNS = ["t_s", "t", "requests", "errors", "bytes_in", "inflight", "p50_ms", "p90_ms",
                  "p99_ms"]  # fmt: skip


def describe(values, nearest: bool = False) -> dict:
    """count, mean, p50, p90, p95, p99 and max of ``values`` (NaN when there are none);
    ``nearest``: nearest-rank percentiles (of a quantised figure), else interpolated."""
    a = np.asarray(values, dtype=np.float64)
    a = a[~np.isnan(a)]
    if not a.size:
        return {"count": 0, **dict.fromkeys(STATS[1:], float("nan"))}
    p = np.percentile(a, (50, 90, 95, 99), method="inverted_cdf" if nearest else "linear")
    return {
        "count": int(a.size),
        "mean": float(a.mean()),
        **{f"p{q}": float(v) for q, v in zip((50, 90, 95, 99), p, strict=True)},
        "max": float(a.max()),
    }


def _frame(rows: dict, columns=STATS) -> pd.DataFrame:
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(columns))


# -- raw records -------------------------------------------------------------------------------
#: runs.csv's columns: each the record's attribute of that name (a time in seconds with ``_s``
#: added), but ``outcome`` and ``tasks`` (``_DERIVED``).
RUN_COLUMNS = ["run_id", "name", "state", "outcome", "created_at", "scheduled_at", "finished_at",
               "queue_delay_s", "execution_s", "duration_s", "tasks", "simulated", "error",
               "resolution_s", *(f"{f}_{end}_s" for f in FIGURES for end in ("lo", "hi")),
               "at_timeout"]  # fmt: skip
_DERIVED = {"outcome": lambda r: outcome(r.state), "tasks": lambda r: len(r.tasks)}


def runs_frame(runs: list[RunRecord]) -> pd.DataFrame:
    """One row per run: the record's fields, times in seconds, with an ``outcome`` column
    (succeeded, failed or other)."""
    rows = [
        [_DERIVED[c](r) if c in _DERIVED else getattr(r, c.removesuffix("_s")) for c in RUN_COLUMNS]
        for r in runs
    ]
    floats = [c for c in RUN_COLUMNS if c.endswith(("_at", "_s"))]
    return pd.DataFrame(rows, columns=RUN_COLUMNS).astype(dict.fromkeys(floats, "float64"))


def tasks_frame(runs: list[RunRecord]) -> pd.DataFrame:
    """One row per task of every run: run_id, task, state, duration_s."""
    rows = [(r.run_id, t.name, t.state, t.duration) for r in runs for t in r.tasks]
    df = pd.DataFrame(rows, columns=["run_id", "task", "state", "duration_s"])
    df["duration_s"] = df["duration_s"].astype("float64")
    return df


def api_frame(calls: list[ApiCall]) -> pd.DataFrame:
    """One row per API call, its duration in milliseconds."""
    rows = [
        (c.operation, c.start, c.duration * 1000, c.outcome, c.status, c.attempt, c.poll_round)
        for c in calls
    ]
    cols = ["operation", "start", "duration_ms", "outcome", "status", "attempt", "poll_round"]
    df = pd.DataFrame(rows, columns=cols)
    df["duration_ms"] = df["duration_ms"].astype("float64")
    return df


def outcome(state: str) -> str:
    """succeeded, failed or other, for a run's final state."""
    return "succeeded" if state in SUCCEEDED else "failed" if state in FAILED else "other"


# -- the runs benchmark ------------------------------------------------------------------------
def states_table(runs: pd.DataFrame, summary: dict) -> pd.DataFrame:
    """Runs by final state: ``state``, ``outcome`` and ``count``, most frequent first."""
    if len(runs):
        counts = runs["state"].value_counts()
    else:
        counts = pd.Series((summary.get("runs") or {}).get("by_state") or {}, dtype="int64")
    df = pd.DataFrame({"state": counts.index, "count": counts.to_numpy(dtype="int64")})
    df["outcome"] = df["state"].map(outcome)
    return df.sort_values(["count", "state"], ascending=[False, True], ignore_index=True)[
        ["state", "outcome", "count"]
    ]


def resolution(runs: pd.DataFrame, summary: dict) -> float | None:
    """The run figures' resolution (s): the coarsest of the runs' timestamps, else summary.json's;
    None when unknown (results written before it was kept: shown as they always were)."""
    if len(runs) and runs["resolution_s"].notna().any():
        return float(runs["resolution_s"].max())
    res = (summary.get("runs") or {}).get("resolution_s")
    return float(res) if res is not None else None


def run_times_table(runs: pd.DataFrame, summary: dict, res: float | None = None) -> pd.DataFrame:
    """Run duration, queue delay and execution (seconds): one row each, ``STATS`` columns;
    nearest-rank percentiles at a quantised resolution ``res``."""
    if len(runs):
        q = quantised(res)
        return _frame({label: describe(runs[f"{a}_s"], q) for a, label in RUN_TIMES})
    s = summary.get("runs") or {}
    return _frame({label: _from_summary(s.get(f"{attr}_s")) for attr, label in RUN_TIMES})


def run_times_shown(t: Tables) -> pd.DataFrame:
    """``t.run_times`` as the reports print it: no more decimals than the resolution gives
    (whole seconds from a real server); the mean, over ``count`` runs, two more."""
    return quantised_shown(t.run_times, t.resolution)


def task_times_shown(t: Tables) -> pd.DataFrame:
    """``t.task_times`` as the reports print it: the tasks' times come from the server's
    timestamps too, at the runs' resolution."""
    return quantised_shown(t.task_times, t.resolution)


def quantised_shown(df: pd.DataFrame, res: float | None) -> pd.DataFrame:
    """A table of ``STATS`` columns (s) as text at a quantised resolution ``res``
    (``report.runs.run_time``); as it is otherwise."""
    if not quantised(res):
        return df
    out = df.astype(object)
    for label, row in df.iterrows():
        for k in STATS[1:]:
            out.at[label, k] = run_time(row[k], res, mean=k == "mean")
        out.at[label, "count"] = int(row["count"])
    return out


def run_times_caption(t: Tables) -> str:
    """What the run times' digits mean at their resolution; "" when not quantised."""
    if not quantised(t.resolution):
        return ""
    res = f"{t.resolution:g}"
    return (
        f"The server writes its timestamps to {res} s: each run's figure is within ±{res} s "
        "of the truth (both ends are truncated), percentiles are nearest-rank (a figure the "
        "server gave), and the mean is over `count` runs. The bounds below are the same "
        "statistics of each run's interval, narrowed where the driver's polls saw the change."
    )


def run_bounds_table(runs: pd.DataFrame, res: float | None) -> pd.DataFrame | None:
    """Each statistic's bounds, ``lo–hi`` (s): the statistic of the runs' lower and of their
    upper bounds (the server's figure ± ``res``, narrowed by the polls), and how many runs the
    polls narrowed; None unless the figures are quantised and the records carry bounds."""
    if not quantised(res) or not len(runs):
        return None
    rows = {}
    for attr, label in RUN_TIMES:
        both = runs[[f"{attr}_lo_s", f"{attr}_hi_s"]].dropna()
        if not len(both):
            continue
        lo, hi = describe(both.iloc[:, 0], True), describe(both.iloc[:, 1], True)
        rows[label] = {k: span(lo[k], hi[k]) for k in ("p50", "p90", "p99", "max")}
        rows[label]["runs"] = len(both)
    return pd.DataFrame.from_dict(rows, orient="index") if rows else None


def api_table(api: pd.DataFrame, summary: dict) -> pd.DataFrame:
    """Per API operation (milliseconds): count and errors (attempts), retries (attempts after a
    first), failed (calls that failed after every retry, as ``RunsStats.failed`` counts them),
    then ``STATS``; busiest first."""
    cols = ["count", "errors", "retries", "failed", *STATS[1:]]
    rows = {}
    if len(api):
        for op, g in api.groupby("operation", sort=True):
            d = describe(g["duration_ms"])
            errors = int((g["outcome"] != "ok").sum())
            rows[op] = {**d, "errors": errors, "retries": int((g["attempt"] > 1).sum())}
        for op, row in rows.items():
            find = rows.get(FINDS.get(op, ""))
            lookups_ok = find["count"] - find["errors"] if find else 0
            row["failed"] = failed_calls(op, row["errors"], row["retries"], lookups_ok)
    else:
        for op, d in (summary.get("api") or {}).items():
            if d.get("count"):
                errors = d.get("errors", 0)
                rows[op] = {
                    **_from_summary(d, "_ms"),
                    "errors": errors,
                    "retries": d.get("retries", 0),
                    "failed": d.get("failed", errors),
                }
    df = _frame(rows, cols)
    df.index.name = "operation"
    return df.sort_values("count", ascending=False, kind="stable")


def tasks_table(tasks: pd.DataFrame, res: float | None = None) -> pd.DataFrame:
    """Per task name (seconds): ``STATS``, slowest median first."""
    q = quantised(res)
    rows = {name: describe(g["duration_s"], q) for name, g in tasks.groupby("task", sort=True)}
    df = _frame(rows)
    df.index.name = "task"
    return df.sort_values("p50", ascending=False, kind="stable")


def _from_summary(d: dict | None, unit: str = "") -> dict:
    d = d or {}
    out = {"count": int(d.get("count", 0))}
    for k in STATS[1:]:
        v = d.get(f"{k}{unit}")
        out[k] = float(v) if v is not None and out["count"] else float("nan")
    return out


# -- the load ----------------------------------------------------------------------------------
def load_summary(load: LoadStats) -> dict:
    """hey's summary as numbers: total, slowest, fastest, average, requests/s, data, plus the
    success ratio, errors, and whether latency is corrected for coordinated omission. Latency is
    of the responses (None without any); ``no_response`` counts the others and
    ``no_response_ms`` times them (send to failure; None without any)."""
    s = load.summary()
    lat = s.latency_ms or {}
    return {
        "requests": load.requests,
        "total_s": s.duration_s,
        "slowest_ms": lat.get("max"),
        "fastest_ms": lat.get("min"),
        "average_ms": lat.get("mean"),
        "rps": s.rps,
        "responses": s.responses,
        "no_response": s.no_response["requests"],
        "no_response_ms": s.no_response["time_ms"],
        "success_ratio": s.success_ratio,
        "errors": load.requests - load.ok,
        "bytes_in": load.bytes_in,
        "size_per_request": load.bytes_in // max(load.requests, 1),
        "not_sent": load.not_sent,
        "corrected": load.corrected,
        "client_cpu": cpu_figures(load),
    }


def load_percentiles(load: LoadStats) -> pd.DataFrame:
    """Latency percentiles (ms) of the responses, corrected (from the intended send time) and
    uncorrected; NaN when there was none. Beside them, when some requests got no response,
    ``no_response_ms``: their time from the send to the failure, never in the others."""

    def ms(h) -> list[float]:
        pcts = h.percentiles_us(LOAD_PCTS)
        return [pcts[p] / 1000 if h.count else float("nan") for p in LOAD_PCTS]

    columns = {
        "corrected_ms": ms(load.latency),
        "uncorrected_ms": ms(load.uncorrected if load.corrected else load.latency),
    }
    if load.no_responses:
        columns["no_response_ms"] = ms(load.no_response)
    df = pd.DataFrame(columns, index=[f"p{p:g}" for p in LOAD_PCTS])
    df.index.name = "percentile"
    return df


def load_series_frame(load: LoadStats) -> pd.DataFrame:
    """The per-second series: ``t_s`` from the load's start, epoch second ``t``, requests (the
    throughput of that second), errors, bytes_in, inflight and p50/p90/p99 (ms)."""
    cols = SERIES_COLUMNS[1:]
    df = pd.DataFrame([{c: r[c] for c in cols} for r in load.series.rows()], columns=cols)
    df.insert(0, "t_s", (df["t"] - int(load.started_at)).astype("float64"))
    return df


def load_histogram(load: LoadStats) -> pd.DataFrame:
    """The latency histograms' non-empty buckets: ``measure`` (corrected, uncorrected),
    ``latency_ms`` (the bucket's middle value) and ``count``. Weighting a plot by count draws
    every request. Without a schedule (closed loop) only the one histogram is given, as corrected.
    """
    parts = [("corrected", load.latency)]
    if load.corrected:
        parts.append(("uncorrected", load.uncorrected))
    frames = []
    for measure, h in parts:
        mids, counts = h.nonzero()
        frames.append(pd.DataFrame({"measure": measure, "latency_ms": mids / 1e3, "count": counts}))
    return pd.concat(frames, ignore_index=True)


# -- optional series from other steps ----------------------------------------------------------
def replicas_frame(summary: dict, origin: float | None) -> pd.DataFrame | None:
    """summary.json's optional ``replicas`` rows ({t, ready, total, desired?, actual?}) with
    ``t_s`` on the load's time axis; None when absent. Epoch times are made relative to
    ``origin`` (the load's start) or else to the first row."""
    rows = summary.get("replicas")
    if not rows:
        return None
    df = pd.DataFrame(rows)
    if "t" not in df:
        return None
    t = df["t"].astype("float64")
    if t.min() > _EPOCH:
        t = t - (origin if origin else t.min())
    df.insert(0, "t_s", t)
    return df.sort_values("t_s", ignore_index=True)


def sweep_frame(summary: dict) -> pd.DataFrame | None:
    """summary.json's optional ``sweep`` rows (rate, rps, mean_ms, p50_ms, p95_ms, p99_ms,
    success_ratio, max_replicas?), by rate; None when absent."""
    rows = summary.get("sweep")
    if not rows:
        return None
    df = pd.DataFrame(rows)
    if not {"rps", "p99_ms"} <= set(df.columns):
        return None
    return df.sort_values("rate" if "rate" in df else "rps", ignore_index=True)


#: The sweep table as shown: column -> header, in order (a column not measured is left out;
#: requests and duration_s, rps times the step's length, stay in summary.json).
SWEEP_SHOWN = {
    "rate": "rate",
    "rps": "rps",
    "mean_ms": "mean ms",
    "p50_ms": "p50 ms",
    "p95_ms": "p95 ms",
    "p99_ms": "p99 ms",
    "success_ratio": "success",
    "no_response": "no resp.",
    "max_replicas": "replicas",
    "client_busiest": "client CPU",
    "started_at": "started UTC",
}


def sweep_shown(sweep: pd.DataFrame) -> pd.DataFrame:
    """``sweep_frame``'s rows as the reports show them, indexed by rate: the start a time of
    day (the steps are seconds apart), the shares as percentages, the percentiles to the
    microsecond of their histograms, short headers, so that the table fits the page's column."""
    df = sweep[[c for c in SWEEP_SHOWN if c in sweep]].copy()
    if "started_at" in df:
        df["started_at"] = [clock(t) for t in df["started_at"]]
    if "rate" in df:  # the first step past the knee named in its rate: no column of its own
        knee = sweep["knee"] if "knee" in sweep else [False] * len(df)
        marks = zip(df["rate"], knee, strict=True)
        df["rate"] = [f"{r:g} (knee)" if k is True else f"{r:g}" for r, k in marks]
    if "max_replicas" in df:  # a count (NaN made the column float)
        df["max_replicas"] = [DASH if pd.isna(v) else str(int(v)) for v in df["max_replicas"]]
    for c in ("success_ratio", "client_busiest"):
        if c in df:
            df[c] = [pct(v, 0 if v in (0, 1) else 1) for v in df[c]]
    for c in ("p50_ms", "p95_ms", "p99_ms"):
        if c in df:
            df[c] = [num(v, HDR_MS) for v in df[c]]
    df = df.rename(columns=SWEEP_SHOWN)
    return df.set_index(df.columns[0])


# -- everything --------------------------------------------------------------------------------
@dataclass
class Tables:
    """Every table of one results directory (empty frames or None where nothing was measured)."""

    summary: dict
    runs: pd.DataFrame
    tasks: pd.DataFrame
    api: pd.DataFrame
    states: pd.DataFrame
    run_times: pd.DataFrame
    api_ops: pd.DataFrame
    task_times: pd.DataFrame
    load: dict | None = None
    load_pcts: pd.DataFrame | None = None
    series: pd.DataFrame | None = None
    histogram: pd.DataFrame | None = None
    replicas: pd.DataFrame | None = None
    sweep: pd.DataFrame | None = None
    #: the run figures' resolution (s), None when unknown; their bounds when quantised
    resolution: float | None = None
    run_bounds: pd.DataFrame | None = None
    notes: list = field(default_factory=list)
    #: The failure flags (``kfp_bench.outcome``), each ``(what it means, [details])``.
    failures: list = field(default_factory=list)

    @property
    def has_runs(self) -> bool:
        return bool(len(self.states)) or bool(len(self.api_ops))


def build(results: Results) -> Tables:
    """All tables of ``results``."""
    summary = results.summary
    runs = runs_frame(results.runs)
    tasks = tasks_frame(results.runs)
    api = api_frame(results.api_calls)
    res = resolution(runs, summary)
    t = Tables(
        summary=summary,
        runs=runs,
        tasks=tasks,
        api=api,
        states=states_table(runs, summary),
        run_times=run_times_table(runs, summary, res),
        api_ops=api_table(api, summary),
        task_times=tasks_table(tasks, res),
        resolution=res,
        run_bounds=run_bounds_table(runs, res),
    )
    load = results.load
    if load is not None:
        t.load = load_summary(load)
        t.load_pcts = load_percentiles(load)
        t.series = load_series_frame(load)
        t.histogram = load_histogram(load)
    t.replicas = replicas_frame(summary, load.started_at if load is not None else None)
    t.sweep = sweep_frame(summary)
    if not results.runs and summary.get("runs"):
        t.notes.append("no runs.jsonl: run and API figures come from summary.json")
    t.failures = failure_rows(summary)
    t.notes += flag_notes(summary)
    return t


def failure_rows(summary: dict) -> list[tuple[str, list[str]]]:
    """Each failure flag of ``summary`` as ``("<flag>: <what it means>", [details])``: which
    load workers were lost, each helper step's error."""
    pipeline, load = summary.get("pipeline") or {}, summary.get("load") or {}
    rows = []
    found = failures(flags(summary))
    for flag, line in zip(found, describe_flags(found), strict=True):
        details = []
        if flag == "workers-lost":
            lost = pipeline.get("workers_lost") or (load.get("workers") or {}).get("missing")
            details.append(f"load workers lost: {', '.join(map(str, lost or []))}")
        if flag == "step-failed":
            errors = pipeline.get("errors") or {}
            details += [f"{step}: {' '.join(str(e).split())}" for step, e in errors.items()]
        rows.append((line, details))
    return rows


def flag_notes(summary: dict) -> list[str]:
    """Notes for the flags that are not failures: the late load workers, and the others by
    name."""
    load = summary.get("load") or {}
    notes = [
        f"load worker {i} started {fixed(s, 2)} s after the common start time (late-start): its "
        "share of the schedule ran from its own start, shifted by that much"
        for i, s in (load.get("workers") or {}).get("late") or []
    ]
    others = [f for f in flags(summary) if f not in FAILURES]
    if others:
        notes.append(f"flags: {', '.join(others)}")
    return notes

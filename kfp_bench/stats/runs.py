"""Aggregation of a runs benchmark: API calls and runs, mergeable, summarized as summary.json.

Samples are float arrays with numpy's interpolated percentiles in plain Python (the driver's steps
install no numpy; thousands of calls cost nothing and merge by concatenation). ``set_server``
adds the KFP API server's per-operation deltas of two /metrics scrapes, beside the client's
latency. Retries are counted from the records alone (a retry is an attempt >= 2), so a summary
rebuilt from api_calls.jsonl agrees: ``failed`` is errors less retries for an idempotent
operation, errors less successful lookups (``FINDS``) for a create. Run figures from a server
of whole seconds are nearest-rank, with their bounds beside them (docs/run-figures.md)."""

from __future__ import annotations

import math
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field

from kfp_bench.records import FINDS, ApiCall, RunRecord

FORMAT = "kfp-bench/runs"
FORMAT_VERSION = 1
#: The operations summary.json always reports, with a count of 0 when none was made.
OPERATIONS = (
    "upload_pipeline",
    "create_experiment",
    "create_run",
    "list_runs",
    "get_run",
    "delete_run",
    "delete_pipeline",
)
_PCTS = (50.0, 90.0, 99.0)
#: Run ids kept per timeout fate in summary.json (runs.jsonl has every run's).
TIMEOUT_IDS = 20
#: Run figures from timestamps at least this coarse (s) are quantised: nearest-rank percentiles.
QUANTISED = 1e-3
#: The run figures, as RunRecord names them.
FIGURES = ("duration", "queue_delay", "execution")


def _dist(values: array, scale: float = 1.0, unit: str = "", quantised: bool = False) -> dict:
    """p50 p90 p99 max mean (and count) of ``values``; zeros when empty. ``quantised``: the
    percentiles are nearest-rank (values of the sample) rather than interpolated."""
    keys = [f"p{p:g}{unit}" for p in _PCTS] + [f"max{unit}", f"mean{unit}"]
    if not values:
        return {"count": 0, **dict.fromkeys(keys, 0.0)}
    a = sorted(v * scale for v in values)
    pct = nearest_rank if quantised else _percentile
    vals = [pct(a, p) for p in _PCTS] + [a[-1], math.fsum(a) / len(a)]
    return {"count": len(a), **{k: round(float(v), 6) for k, v in zip(keys, vals, strict=True)}}


def nearest_rank(a: list[float], p: float) -> float:
    """The ``p``-th percentile of sorted ``a`` by nearest rank: the smallest value with at least
    p% of the sample at or below it (numpy's ``inverted_cdf``)."""
    return a[max(math.ceil(len(a) * p / 100) - 1, 0)]


def quantised(resolution: float | None) -> bool:
    """Whether figures of this resolution (s; None: unknown) are summarised as quantised."""
    return resolution is not None and resolution >= QUANTISED


def figure(values, los, his, resolution: float | None, narrowed: int) -> dict:
    """The summary of one run figure: ``_dist`` at its resolution, the resolution, the way
    percentiles were taken and, for quantised figures, each statistic's bounds: the same
    statistic of the runs' lower and upper bounds (order statistics keep the bound of each run),
    with how many runs the polls narrowed."""
    q = quantised(resolution)
    d = _dist(values, quantised=q)
    d["resolution_s"] = resolution
    d["percentiles"] = "nearest-rank" if q else "linear"
    if q and values and len(los) == len(values):
        lo, hi = _dist(los, quantised=True), _dist(his, quantised=True)
        keys = [f"p{p:g}" for p in _PCTS] + ["max", "mean"]
        d["bounds"] = {k: [lo[k], hi[k]] for k in keys}
        d["polls_narrowed"] = narrowed
    return d


def _percentile(a: list[float], p: float) -> float:
    """The ``p``-th percentile of sorted ``a``, interpolated linearly between the two nearest
    ranks (numpy.percentile's default, and its way of interpolating)."""
    k = (len(a) - 1) * p / 100
    lo = math.floor(k)
    hi = min(lo + 1, len(a) - 1)
    t, diff = k - lo, a[hi] - a[lo]
    return a[hi] - diff * (1 - t) if t >= 0.5 else a[lo] + diff * t


@dataclass
class _Op:
    """The calls of one operation."""

    durations: array = field(default_factory=lambda: array("d"))
    errors: int = 0
    retries: int = 0
    statuses: Counter = field(default_factory=Counter)
    error_texts: Counter = field(default_factory=Counter)

    @property
    def ok(self) -> int:
        return len(self.durations) - self.errors

    def merge(self, other: _Op) -> None:
        self.durations.extend(other.durations)
        self.errors += other.errors
        self.retries += other.retries
        self.statuses.update(other.statuses)
        self.error_texts.update(other.error_texts)


@dataclass
class RunsStats:
    """The aggregate of a runs benchmark: the runs asked for, the id in the names of everything
    it created, the KFP API it measured; ``close`` sets the whole benchmark's wall time (upload
    to cleanup) and the CPU seconds the driver's process used over it."""

    requested: int = 0
    benchmark_id: str = ""
    host: str = ""
    started_at: float = field(default_factory=time.time)
    wall_s: float = 0.0
    cpu_s: float = 0.0
    options: dict = field(default_factory=dict)
    ops: dict = field(default_factory=dict)
    rounds: Counter = field(default_factory=Counter)
    by_state: Counter = field(default_factory=Counter)
    #: per figure (FIGURES): the runs' values, and their lower and upper bounds in that order
    values: dict = field(default_factory=lambda: {f: array("d") for f in FIGURES})
    los: dict = field(default_factory=lambda: {f: array("d") for f in FIGURES})
    his: dict = field(default_factory=lambda: {f: array("d") for f in FIGURES})
    narrowed: Counter = field(default_factory=Counter)
    #: the coarsest resolution of the runs' timestamps (s); None: none known
    resolution: float | None = None
    unknown_resolution: int = 0
    #: what the timeout did (RunRecord.at_timeout): fate -> Counter of final states, and run ids
    at_timeout: dict = field(default_factory=dict)
    timeout_ids: dict = field(default_factory=dict)
    tasks: dict = field(default_factory=dict)
    simulated: int = 0
    gave_up: int = 0
    server: dict = field(default_factory=dict)
    cleanup: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)

    # -- adding ------------------------------------------------------------------------------
    def add(self, record: ApiCall | RunRecord) -> None:
        """Add one record; cheap: an append or two."""
        if isinstance(record, ApiCall):
            self._add_call(record)
        else:
            self._add_run(record)

    def _add_call(self, c: ApiCall) -> None:
        op = self.ops.get(c.operation)
        if op is None:
            op = self.ops[c.operation] = _Op()
        op.durations.append(c.duration)
        op.statuses[c.status] += 1
        op.retries += c.attempt > 1
        if c.outcome != "ok":
            op.errors += 1
            op.error_texts[c.error] += 1
        if c.poll_round:
            self.rounds[c.poll_round] += 1

    def _add_run(self, r: RunRecord) -> None:
        self.by_state[r.state] += 1
        for f in FIGURES:
            v, lo, hi = getattr(r, f), getattr(r, f"{f}_lo"), getattr(r, f"{f}_hi")
            if v is not None:  # records without bounds stand for themselves
                self.values[f].append(v)
                self.los[f].append(lo if lo is not None else v)
                self.his[f].append(hi if hi is not None else v)
        self.narrowed.update(r.polled)
        if r.resolution is None:
            self.unknown_resolution += 1
        else:
            self.resolution = max(self.resolution or 0.0, r.resolution)
        if r.at_timeout:
            self.at_timeout.setdefault(r.at_timeout, Counter())[r.state] += 1
            self.timeout_ids.setdefault(r.at_timeout, []).append(r.run_id)
        for t in r.tasks:
            if t.duration is not None:
                self.tasks.setdefault(t.name, array("d")).append(t.duration)
        self.simulated += r.simulated
        self.gave_up += r.error.startswith("gave up")

    def set_server(self, deltas: dict) -> None:
        """The server-side view: per-operation deltas of two /metrics scrapes (see
        kfp_bench.kfp.promscrape.deltas), or ``{"error": why}`` when no scrape was possible."""
        self.server = deltas

    def close(self, wall_s: float, cpu_s: float) -> RunsStats:
        self.wall_s, self.cpu_s = wall_s, cpu_s
        return self

    # -- merging -----------------------------------------------------------------------------
    def merge(self, other: RunsStats) -> None:
        """Add another driver's stats (another pod or process of the same benchmark)."""
        end = max(self.started_at + self.wall_s, other.started_at + other.wall_s)
        self.started_at = min(self.started_at, other.started_at)
        self.wall_s = end - self.started_at
        self.cpu_s += other.cpu_s
        self.requested += other.requested
        for name, op in other.ops.items():
            self.ops.setdefault(name, _Op()).merge(op)
        # Poll rounds of different drivers are different rounds: renumber the other's after ours.
        base = max(self.rounds, default=0)
        self.rounds.update({base + r: n for r, n in other.rounds.items()})
        self.by_state.update(other.by_state)
        for f in FIGURES:
            self.values[f].extend(other.values[f])
            self.los[f].extend(other.los[f])
            self.his[f].extend(other.his[f])
        self.narrowed.update(other.narrowed)
        if other.resolution is not None:
            self.resolution = max(self.resolution or 0.0, other.resolution)
        self.unknown_resolution += other.unknown_resolution
        for fate, states in other.at_timeout.items():
            self.at_timeout.setdefault(fate, Counter()).update(states)
            self.timeout_ids.setdefault(fate, []).extend(other.timeout_ids.get(fate, []))
        for name, d in other.tasks.items():
            self.tasks.setdefault(name, array("d")).extend(d)
        self.simulated += other.simulated
        self.gave_up += other.gave_up
        self.server = merge_server(self.server, other.server)
        self.flags = sorted(set(self.flags) | set(other.flags))

    # -- summary -----------------------------------------------------------------------------
    def summary(self) -> dict:
        """The summary.json document."""
        api = {}
        for name in (*OPERATIONS, *sorted(set(self.ops) - set(OPERATIONS))):
            op = self.ops.get(name, _Op())
            d = _dist(op.durations, 1000.0, "_ms")
            failed = self.failed(name)
            api[name] = {"errors": op.errors, "retries": op.retries, "failed": failed, **d}
            if op.error_texts:
                api[name]["error_texts"] = dict(op.error_texts.most_common(5))
        created = self.ops.get("create_run", _Op())
        runs = {
            "requested": self.requested,
            "created": sum(self.by_state.values()),
            "create_errors": created.errors,
            "create_failed": self.failed("create_run"),
            "by_state": dict(sorted(self.by_state.items())),
            "resolution_s": self.resolution,
            **{
                f"{f}_s": figure(
                    self.values[f], self.los[f], self.his[f], self.resolution, self.narrowed[f]
                )
                for f in FIGURES
            },
            "simulated": self.simulated,
            "gave_up": self.gave_up,
            "tasks_s": {
                name: _dist(d, quantised=quantised(self.resolution))
                for name, d in sorted(self.tasks.items())
            },
        }
        if self.at_timeout:
            runs["at_timeout"] = {
                fate: {
                    "count": sum(states.values()),
                    "states": dict(sorted(states.items())),
                    "run_ids": sorted(self.timeout_ids.get(fate, []))[:TIMEOUT_IDS],
                }
                for fate, states in sorted(self.at_timeout.items())
            }
        calls_total = sum(len(op.durations) for op in self.ops.values())
        doc = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "benchmark_id": self.benchmark_id,
            "host": self.host,
            "started_at": self.started_at,
            "wall_s": round(self.wall_s, 3),
            "runs": runs,
            "api": api,
            "api_calls_total": calls_total,
            "api_retries_total": sum(op.retries for op in self.ops.values()),
            "api_failed_total": sum(self.failed(name) for name in self.ops),
            "poll_rounds": len(self.rounds),
            "calls_per_poll_round": {
                "max": max(self.rounds.values(), default=0),
                "mean": round(sum(self.rounds.values()) / len(self.rounds), 3)
                if self.rounds
                else 0.0,
            },
            "client": {"cpu_s": round(self.cpu_s, 3), "wall_s": round(self.wall_s, 3)},
            "server": self.server_view(api),
            "cleanup": self.cleanup,
            "flags": self.flags,
            "options": self.options,
        }
        return doc

    def failed(self, name: str) -> int:
        """Calls of operation ``name`` that still failed after all their retries."""
        op = self.ops.get(name)
        if op is None:
            return 0
        lookups = self.ops.get(FINDS.get(name, ""))
        return failed_calls(name, op.errors, op.retries, lookups.ok if lookups else 0)

    def server_view(self, api: dict) -> dict:
        """Per operation: the server's request count and latency beside the client's, and the
        share of the client's mean latency spent outside the server's handler."""
        if not self.server or "error" in self.server:
            return dict(self.server)
        out = {}
        for name, s in sorted(self.server.get("operations", {}).items()):
            view = {"requests": s.get("count", 0), "errors": s.get("errors", 0)}
            n, total = s.get("count", 0), s.get("sum_s")
            if n and total is not None:
                view["mean_ms"] = round(total / n * 1000, 3)
            for p in _PCTS:
                q = histogram_quantile(p / 100, s.get("buckets") or [])
                if q is not None:
                    view[f"p{p:g}_ms"] = round(q * 1000, 3)
            if s.get("buckets"):  # the report reads each percentile's bucket: its resolution
                view["buckets"] = [[le if math.isfinite(le) else "+Inf", c]
                                   for le, c in s["buckets"]]  # fmt: skip
            client = api.get(name)
            if client and client["count"] and "mean_ms" in view:
                network = client["mean_ms"] - view["mean_ms"]
                view["client_mean_ms"] = client["mean_ms"]
                view["network_ms"] = round(network, 3)
                view["network_share"] = round(network / client["mean_ms"], 4)
            out[name] = view
        return {"operations": out, **{k: v for k, v in self.server.items() if k != "operations"}}


def failed_calls(operation: str, errors: int, retries: int, lookups_ok: int = 0) -> int:
    """Calls of ``operation`` that failed after every retry, from counts of its records: its
    failed attempts, its retried attempts and, for a create, its successful lookups (see the
    module docstring)."""
    resolved = lookups_ok if operation in FINDS else retries
    return max(errors - resolved, 0)


def histogram_quantile(q: float, buckets: list) -> float | None:
    """Prometheus' histogram_quantile over cumulative [upper_bound, count] pairs: linear within
    the bucket; None without samples. The +Inf bucket answers with the last finite bound."""
    if not buckets:
        return None
    buckets = sorted(buckets, key=lambda b: b[0])
    total = buckets[-1][1]
    if total <= 0:
        return None
    rank = q * total
    prev_bound, prev_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return prev_bound
            if count == prev_count:
                return bound
            return prev_bound + (bound - prev_bound) * (rank - prev_count) / (count - prev_count)
        prev_bound, prev_count = bound, count
    return prev_bound


def merge_server(a: dict, b: dict) -> dict:
    """Sum two drivers' server-side deltas (they scraped the same or different servers)."""
    if not a or "error" in a:
        return dict(b)
    if not b or "error" in b:
        return dict(a)
    ops = {name: dict(v) for name, v in a.get("operations", {}).items()}
    for name, s in b.get("operations", {}).items():
        mine = ops.setdefault(name, {"count": 0, "errors": 0, "sum_s": 0.0, "buckets": []})
        mine["count"] = mine.get("count", 0) + s.get("count", 0)
        mine["errors"] = mine.get("errors", 0) + s.get("errors", 0)
        if s.get("sum_s") is not None:
            mine["sum_s"] = (mine.get("sum_s") or 0.0) + s["sum_s"]
        merged = Counter({le: c for le, c in mine.get("buckets") or []})
        merged.update({le: c for le, c in s.get("buckets") or []})
        mine["buckets"] = sorted([le, c] for le, c in merged.items())
    return {**a, "operations": ops}


class FillProbe:
    """The full-database probe's samples (``kfp_bench.kfp.fill``): per (runs on the server,
    call kind) the latencies of the repeated calls, and per step the server's own view; rows
    for the results' ``fill`` section, whose p50 and p95 are interpolated as numpy's."""

    def __init__(self) -> None:
        self.samples: dict[tuple[int, str], array] = {}
        self.errors: Counter = Counter()
        self.servers: list[tuple[int, int, dict]] = []

    def add(self, k: int, kind: str, seconds: float, ok: bool) -> None:
        self.samples.setdefault((k, kind), array("d")).append(seconds)
        self.errors[(k, kind)] += not ok

    def server(self, k: int, filled: int, deltas: dict) -> None:
        """The deltas of two /metrics scrapes around the probe at ``k`` runs (``{}``: none)."""
        self.servers.append((k, filled, deltas))

    def rows(self) -> list[dict]:
        out = []
        for (k, kind), values in sorted(self.samples.items()):
            a = sorted(v * 1000.0 for v in values)
            out.append({
                "k": k, "kind": kind, "count": len(a), "errors": self.errors[(k, kind)],
                "p50_ms": round(_percentile(a, 50.0), 3), "p95_ms": round(_percentile(a, 95.0), 3),
                "max_ms": round(a[-1], 3),
            })  # fmt: skip
        return out

    def server_rows(self) -> list[dict]:
        """Per step and operation: the server's request count, mean, p50 and p95 from its
        latency histogram (``histogram_quantile``), where it exports one."""
        out = []
        for k, filled, deltas in self.servers:
            if not deltas or "error" in deltas:
                if deltas:
                    out.append({"k": k, "filled": filled, "error": deltas["error"]})
                continue
            for op, s in sorted((deltas.get("operations") or {}).items()):
                if not s.get("count"):
                    continue  # an operation the probe did not call
                row = {"k": k, "filled": filled, "operation": op, "requests": s.get("count", 0)}
                n, total = s.get("count", 0), s.get("sum_s")
                if n and total is not None:
                    row["mean_ms"] = round(total / n * 1000, 3)
                for p in (50, 95):
                    q = histogram_quantile(p / 100, s.get("buckets") or [])
                    if q is not None:
                        row[f"p{p}_ms"] = round(q * 1000, 3)
                out.append(row)
        return out

"""Number and table formatting shared by the Markdown and HTML reporters (plain text, no markup)."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

DASH = "–"


def num(v) -> str:
    """About four significant digits, never scientific notation; a dash for NaN or None."""
    if v is None:
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list | tuple):  # a sweep step's failure flags
        return ", ".join(map(str, v)) or DASH
    if isinstance(v, int | np.integer):
        return f"{int(v):,}"
    v = float(v)
    if not math.isfinite(v):
        return DASH if math.isnan(v) else ("∞" if v > 0 else "-∞")
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) >= 1000:
        return f"{int(v):,}"
    decimals = min(6, max(0, 3 - math.floor(math.log10(abs(v)))))
    return f"{v:,.{decimals}f}"


def pct(v: float) -> str:
    return DASH if v is None or not math.isfinite(v) else f"{v:.1%}"


def when(epoch: float) -> str:
    """UTC time of an epoch second, e.g. 2026-11-30 07:17 UTC."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch)) if epoch else DASH


def rows(df: pd.DataFrame, index: str | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and formatted cells of ``df``; its index becomes the first column when named."""
    head = ([index or df.index.name or ""] if index is not False else []) + [
        str(c) for c in df.columns
    ]
    body = []
    # itertuples keeps each column's type (iterrows would turn the counts into floats).
    for idx, *values in df.itertuples(index=True, name=None):
        cells = [v if isinstance(v, str) else num(v) for v in values]
        body.append(([str(idx)] if index is not False else []) + cells)
    return head, body


def load_rows(load: dict) -> list[tuple[str, str]]:
    """hey's summary as (label, value) pairs."""
    rows = [
        ("Requests", num(load["requests"])),
        ("Total", f"{num(load['total_s'])} s"),
        ("Slowest", f"{num(load['slowest_ms'])} ms"),
        ("Fastest", f"{num(load['fastest_ms'])} ms"),
        ("Average", f"{num(load['average_ms'])} ms"),
        ("Requests/sec", num(load["rps"])),
        ("Responses (any status; the latency figures)", num(load.get("responses"))),
        ("No response (not in the latency figures)", _no_response(load)),
        ("Success ratio", pct(load["success_ratio"])),
        ("Failed requests", num(load["errors"])),
        ("Size/request", f"{num(load['size_per_request'])} bytes"),
        ("Not sent (--max-inflight)", num(load["not_sent"])),
        (
            "Latency measured from",
            "the intended send time (corrected)" if load["corrected"] else "the actual send time",
        ),
    ]
    cpu = load.get("client_cpu")
    if cpu:
        bound = "; CPU-bound: the rate may be its limit" if cpu["cpu_bound"] else ""
        if cpu["throttled"]:
            limit = cpu["cpu_limit"]
            by = f"its {num(limit)}-core cgroup limit" if limit is not None else "a cgroup limit"
            bound += f"; throttled {num(cpu['throttled_s'])} s by {by}"
        rows.append(
            (
                "Load generator CPU",
                f"{num(cpu['cores'])} cores, {num(cpu['us_per_request'])} µs/request, busiest "
                f"process {pct(cpu['busiest'])} of a core{bound}",
            )
        )
    return rows


def _no_response(load: dict) -> str:
    """How many requests got no response, and their time to failure."""
    n, t = load.get("no_response"), load.get("no_response_ms")
    if not t:
        return num(n)
    return f"{num(n)}; failed after p50 {num(t['p50'])} ms, p99 {num(t['p99'])} ms"


def header(summary: dict, load_options: dict | None = None) -> str:
    """One line naming the benchmark: id, host, load target, start."""
    parts = []
    if summary.get("benchmark_id"):
        parts.append(f"benchmark {summary['benchmark_id']}")
    if summary.get("host"):
        parts.append(f"KFP API {summary['host']}")
    url = (load_options or {}).get("url")
    if url:
        parts.append(f"load on {url}")
    start = summary.get("started_at") or (summary.get("load") or {}).get("started_at")
    if start:
        parts.append(f"started {when(start)}")
    return ", ".join(parts) or "saved results"

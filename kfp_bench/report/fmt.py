"""The tables and lines the Markdown and HTML reporters share, as text cells (no markup); each
figure printed by ``kfp_bench.figures``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kfp_bench.figures import HDR_MS, num, pct, sig, when

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Section:
    """One titled part of a report: an introduction, its charts (by name), tables of (head,
    body) text cells, then a bulleted list; ``markdown.section`` and ``html.section`` render it.
    A table may be (head, body, marks): "reg" marks a row that regressed (shown in bold), and
    a text between tables is a paragraph. ``level``: 2 a section, 3 a part of the one above."""

    title: str
    intro: str = ""
    figures: tuple[str, ...] = ()
    tables: list[tuple | str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    level: int = 2


def rows(
    df: pd.DataFrame, index: str | None = None, res: dict | float | None = None
) -> tuple[list[str], list[list[str]]]:
    """Header and formatted cells of ``df``; its index becomes the first column when named.
    ``res``: the resolution of every figure, or of each column by name (``figures.num``)."""
    head = ([index or df.index.name or ""] if index is not False else []) + [
        str(c) for c in df.columns
    ]
    body = []
    # itertuples keeps each column's type (iterrows would turn the counts into floats).
    of = res if isinstance(res, dict) else dict.fromkeys(df.columns, res)
    for idx, *values in df.itertuples(index=True, name=None):
        cells = [
            v if isinstance(v, str) else num(v, of.get(c))
            for c, v in zip(df.columns, values, strict=True)
        ]
        body.append(([str(idx)] if index is not False else []) + cells)
    return head, body


def load_rows(load: dict) -> list[tuple[str, str]]:
    """hey's summary as (label, value) pairs."""
    rows = [
        ("Requests", num(load["requests"])),
        ("Total", f"{num(load['total_s'])} s"),
        ("Slowest", f"{num(load['slowest_ms'], HDR_MS)} ms"),
        ("Fastest", f"{num(load['fastest_ms'], HDR_MS)} ms"),
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
    return f"{num(n)}; failed after p50 {num(t['p50'], HDR_MS)} ms, p99 {num(t['p99'], HDR_MS)} ms"


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


def change(test, pts: str = " pts") -> str:
    """A regression test's change (``kfp_bench.history.regress.Test``): of the median in per
    cent, or of the failure ratio in percentage points."""
    return (
        pct(test.change, sign=True) if test.test != "fisher" else f"{test.change * 100:+.1f}{pts}"
    )


#: The regression tests' table: its head (``regression_rows``).
REGRESSION_HEAD = ["metric", "test", "n cur / base", "baseline", "current", "change", "p",
                   "regressed"]  # fmt: skip


def regression_rows(verdict, res, yes: str = "yes") -> list[list[str]]:
    """A verdict's tests as rows, each figure at ``res(metric)``, its resolution."""
    return [
        [t.metric, t.test, f"{t.n_current} / {t.n_baseline}", num(t.baseline, res(t.metric)),
         num(t.current, res(t.metric)), change(t), sig(t.p_adjusted, 3),
         yes if t.regressed else "no"]
        for t in verdict.tests
    ]  # fmt: skip

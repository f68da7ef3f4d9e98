"""The rate sweep as text: KServe's benchmark table (QPS x mean, p50, p95, p99, success) and the
knee, from summary.json's ``sweep`` rows and ``sweep_knee`` (plain dicts, so that saved results
print the same as a live sweep). A step whose load generator was CPU-bound is named: its rate, and
a knee there, may be the generator's limit rather than the server's."""

from __future__ import annotations

from typing import TextIO

from kfp_bench.stats.load import CPU_BOUND

_COLUMNS = (
    ("rate", "QPS", "{:g}"),
    ("rps", "achieved", "{:.1f}"),
    ("mean_ms", "mean ms", "{:.2f}"),
    ("p50_ms", "p50 ms", "{:.2f}"),
    ("p95_ms", "p95 ms", "{:.2f}"),
    ("p99_ms", "p99 ms", "{:.2f}"),
    ("success_ratio", "success", "{:.2%}"),
    ("no_response", "no response", "{}"),
    ("max_replicas", "max replicas", "{}"),
    ("client_busiest", "client CPU", "{:.0%}"),
)


def write_text(rows: list[dict], knee: dict | None, out: TextIO) -> None:
    """Write the sweep table (a ``<`` marks the knee's row) and a line naming the knee."""
    cols = [c for c in _COLUMNS if any(c[0] in r for r in rows)]
    if not any(r.get("no_response") for r in rows):  # shown only when some step had some
        cols = [c for c in cols if c[0] != "no_response"]
    cells = [[c[1] for c in cols]]
    for r in rows:
        line = [c[2].format(r[c[0]]) if r.get(c[0]) is not None else "-" for c in cols]
        cells.append(line)
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    for i, row in enumerate(cells):
        mark = "  < knee" if i and rows[i - 1].get("knee") else ""
        out.write("  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) + mark + "\n")
    if knee is not None:
        if knee.get("rate") is None:
            out.write(f"\nNo knee: {knee['reason']}.\n")
        else:
            out.write(f"\nKnee at {knee['rate']:g} req/s: {knee['reason']}.\n")
    bound = [r for r in rows if (r.get("client_busiest") or 0) >= CPU_BOUND]
    if bound:
        out.write(
            f"The load generator was CPU-bound from {bound[0]['rate']:g} req/s on (a process at "
            f"{bound[0]['client_busiest']:.0%} of a core): from there the rate may be its limit, "
            "not the server's; add --workers or machines.\n"
        )

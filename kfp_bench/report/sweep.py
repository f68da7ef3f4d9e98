"""The rate sweep as text: KServe's benchmark table (QPS x mean, p50, p95, p99, success) and the
knee, from summary.json's ``sweep`` rows and ``sweep_knee`` (plain dicts, so that saved results
print the same as a live sweep)."""

from __future__ import annotations

from typing import TextIO

_COLUMNS = (
    ("rate", "QPS", "{:g}"),
    ("rps", "achieved", "{:.1f}"),
    ("mean_ms", "mean ms", "{:.2f}"),
    ("p50_ms", "p50 ms", "{:.2f}"),
    ("p95_ms", "p95 ms", "{:.2f}"),
    ("p99_ms", "p99 ms", "{:.2f}"),
    ("success_ratio", "success", "{:.2%}"),
    ("max_replicas", "max replicas", "{}"),
)


def write_text(rows: list[dict], knee: dict | None, out: TextIO) -> None:
    """Write the sweep table (a ``<`` marks the knee's row) and a line naming the knee."""
    cols = [c for c in _COLUMNS if any(c[0] in r for r in rows)]
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

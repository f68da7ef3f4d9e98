"""Write BENCHMARKS.md from bench/results/: a summary of where each figure stands against its
goal, then one section per benchmark from its latest results file. The measurements not yet in
results files stay below the generated part, as written.

    python bench/render.py [--check]

``--check`` writes nothing and exits 1 when BENCHMARKS.md is not what the results give.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from result_files import RESULTS, Result, latest

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "BENCHMARKS.md"
#: The line that ends the generated part: what follows it is kept as it is.
END = "<!-- end of the part bench/render.py writes -->"
VERDICT = {True: "met", False: "**missed**", None: "reported"}


def cell(value) -> str:
    """A table cell: a number with thousands separators, text with its | escaped."""
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: ""}[value]
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value).replace("|", "\\|")


def table(columns: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return out + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def anchor(title: str) -> str:
    """GitHub's and MkDocs' anchor of a heading."""
    keep = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return keep.strip().replace(" ", "-")


def summary(results: list[Result]) -> list[str]:
    rows = [
        [f"[{r.title}](#{anchor(r.title)})", g.figure, g.value, g.goal, VERDICT[g.met]]
        for r in results
        for g in r.goals
    ]
    return table(["benchmark", "figure", "measured", "goal", "verdict"], rows)


def section(r: Result) -> list[str]:
    m = r.machine
    where = f"{m.get('nproc')} cores, {m.get('cpu') or 'CPU unknown'}, kernel {m.get('kernel')}"
    where += f", Python {m.get('python')}"
    if isinstance(m.get("loadavg_1m"), int | float):
        where += f", load average {m['loadavg_1m']:.2f} at the start"
    versions = ", ".join(  # "hey 0.1.4", whether the tool's own text names it or not
        str(v) if str(v).startswith(k) else f"{k} {v}" for k, v in sorted(r.versions.items())
    )
    out = [f"## {r.title}", "", f"Measured {r.started} at {r.commit}: `{r.command}`.", ""]
    out += [f"Machine: {where}." + (f" Versions: {versions}." if versions else ""), ""]
    if r.notes:
        out += [r.notes, ""]
    for t in r.tables:
        out += ([f"**{t.title}**", ""] if t.title else []) + table(t.columns, t.rows) + [""]
    return out


def render(results: list[Result], kept: str) -> str:
    """BENCHMARKS.md: the generated part from ``results``, then ``kept`` as it is."""
    out = [
        "# Benchmarks",
        "",
        "Speed is measured by the scripts in `bench/`, with the peer tools in the same run, never",
        "by the tests. Each section is the latest results file of one script (`bench/results/`):",
        "its command, machine and commit; the machines are shared 2-core VMs, so figures from",
        "different runs are not comparable, ratios from one run are. `make benchmarks` writes this",
        "part from the results files; the history is in git and in those files.",
        "",
        "## Where things stand",
        "",
        *summary(results),
        "",
    ]
    for r in results:
        out += section(r)
    out += [END, ""]
    return "\n".join(out) + kept


def kept_part(text: str) -> str:
    """What follows the generated part of an existing BENCHMARKS.md."""
    return text.split(END + "\n", 1)[1] if END in text else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if BENCHMARKS.md is stale")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    old = a.out.read_text() if a.out.exists() else ""
    new = render(latest(a.results), kept_part(old))
    if a.check:
        if new != old:
            print(f"{a.out} is not what {a.results} gives: run make benchmarks", file=sys.stderr)
            return 1
        return 0
    a.out.write_text(new)
    print(f"wrote {a.out} ({len(new.encode()) // 1024} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

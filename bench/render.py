"""Write BENCHMARKS.md from bench/results/: a summary of where each figure stands against its
goal, then one section per benchmark from its latest results file.

    python bench/render.py [--check]

``--check`` writes nothing and exits 1 when BENCHMARKS.md is not what the results give.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from result_files import RESULTS, Result, file_name, latest

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "BENCHMARKS.md"
VERDICT = {True: "met", False: "**missed**", None: "reported"}
INTRO = """\
# Benchmarks

Speed is measured by the scripts in `bench/`, the peer tools in the same run, never by the
tests. Each section is the latest results file of one script (`bench/results/<benchmark>/`,
linked: it holds every table). The machines are shared 2-core VMs: figures of different runs
are not comparable, ratios within one run are. A *transcribed* section holds figures copied from
the hand-written BENCHMARKS.md of before, with their date, command and commit; its script's next
run replaces it. `make benchmarks` writes this file.
"""


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


def link(r: Result) -> str:
    """The summary's name of a benchmark: its section, and when it was measured."""
    return f"[{r.benchmark}](#{anchor(r.title)}) {r.started[:10]}" + " (transcribed)" * bool(
        r.source
    )


def summary(results: list[Result]) -> list[str]:
    rows = [  # a goal said again in the next row is a ditto mark
        [link(r) if i == 0 else "", g.figure, g.value]
        + ['"' if i and g.goal == r.goals[i - 1].goal else g.goal, VERDICT[g.met]]
        for r in results
        for i, g in enumerate(r.goals)
    ]
    out = table(["benchmark", "figure", "measured", "goal", "verdict"], rows)
    others = [f"[{r.benchmark}](#{anchor(r.title)})" for r in results if not r.goals]
    return out + (["", "Without a goal: " + "; ".join(others) + "."] if others else [])


def machine(r: Result) -> str:
    """Where it ran: the cores, the CPU, the load, the versions (the kernel and Python stay in
    the results file: BENCHMARKS.md is kept under 25 kB)."""
    m, parts = r.machine, []
    if "nproc" in m:
        parts.append(f"{m['nproc']} cores" + (f" ({m['cpu']})" if m.get("cpu") else ""))
    load = m.get("loadavg_1m")
    if isinstance(load, int | float):
        parts.append(f"load average {load:.2f} at the start")
    elif load:  # a transcription keeps the prose's own figure, as written
        parts.append(f"load average {load}")
    if m.get("note"):  # what the prose says of the machine, without a figure
        parts.append(m["note"])
    versions = [  # "hey 0.1.4", whether the tool's own text names it or not
        str(v) if str(v).startswith(k) else f"{k} {v}" for k, v in sorted(r.versions.items())
    ]
    return ", ".join(parts) + ("; " + ", ".join(versions) if versions else "")


def section(r: Result) -> list[str]:
    path = f"bench/results/{r.benchmark}/{file_name(r)}"
    ran = (f"`{r.command}`, " if r.command else "") + r.started
    ran += f" at {r.commit}" if r.commit else ", commit not recorded"
    more = sum(t.detail for t in r.tables)
    ran += (f": {machine(r)}" if machine(r) else "") + f". [Results file]({path})"
    out = [f"## {r.title}", "", ran + (f" ({more} more table{'s' * (more > 1)})." if more else ".")]
    out += [""] + ([f"*Transcribed* {r.source}.", ""] if r.source else [])
    if r.notes:
        out += [r.notes, ""]
    for t in r.tables:
        if not t.detail:
            out += ([f"**{t.title}**", ""] if t.title else []) + table(t.columns, t.rows) + [""]
    return out


def render(results: list[Result]) -> str:
    """BENCHMARKS.md from the latest result of each benchmark."""
    out = [INTRO, "## Where things stand", "", *summary(results), ""]
    for r in results:
        out += section(r)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if BENCHMARKS.md is stale")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    old = a.out.read_text() if a.out.exists() else ""
    new = render(latest(a.results))
    if a.check:
        if new != old:
            print(f"{a.out} is not what {a.results} gives: run make benchmarks", file=sys.stderr)
            return 1
        return 0
    a.out.write_text(new)
    print(f"wrote {a.out} ({len(new.encode()) / 1000:.1f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The full-database mode at K = 10,000 on the local KFP API, once, with its figures.

One command starts the local KFP API server (kfp_bench.sandbox.kfp_server, every run simulated),
then runs what ``kfp-bench runs --fill K --fill-steps S`` runs (``kfp_bench.kfp.fill``): fill to
K in S steps (runs created and terminated at once), probe the KFP UI's calls at each step, run
a small runs benchmark on the full server, sweep the fill. It reports:

  1. the fill rate (runs a second) and the CPU seconds of the driver and of the server per
     1000 runs filled (user+sys: getrusage here, /proc for the server);
  2. p50/p95 of each UI call at each K (the rows of the results' ``fill`` section);
  3. the runs of the fill left on the server afterwards, counted through the API (0 expected);
  4. side by side in this process, the CPU of one LIST page at K rows: the listing's key sort
     against the pairwise comparison sort it replaced.

Run it as ``.venv/bin/python bench/kfp_fill.py [--fill 10000] [--steps 5] [--out DIR]``; it
writes DIR/summary.json (``kfp-bench report DIR`` redraws the plot), bench figures to
DIR/bench.json and a results file for BENCHMARKS.md (bench/result_files.py). Nothing here runs
in CI: the figures hold for the machine they were taken on.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import resource
import shlex
import sys
import time
from pathlib import Path

import result_files
from peers import host

from kfp_bench import __version__
from kfp_bench.kfp.fill import FillOptions, fill_id, run_with_fill
from kfp_bench.kfp.options import RunsOptions
from kfp_bench.results import write_results
from kfp_bench.sandbox.kfp_server import listing, start_kfp_server
from kfp_bench.sandbox.kfp_server.store import RUN_FIELDS

ROOT = Path(__file__).resolve().parents[1]
HELLO = ROOT / "tests" / "data" / "kfp-pipelines" / "hello_world.yaml"


def cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_of(pid: int) -> float:
    """user+sys seconds of process ``pid`` (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Row:
    """What RUN_FIELDS reads of a run, for the side-by-side listing cost."""

    def __init__(self, i: int, rng: random.Random):
        self.run_id = f"{rng.randrange(16**12):012x}-{i}"
        self.display_name = f"kfp-bench-x-{i:05d}"
        self.description = ""
        self.created_at = 1_700_000_000 + i // 20  # whole seconds: ties, as the server has
        self.storage_state = "AVAILABLE"


def listing_cost(n: int, repeats: int = 5) -> dict:
    """CPU ms of one first page (20, created_at desc, not archived) of ``n`` rows: what
    ``listing.page`` does now against the pairwise filter and sort it replaced."""
    rng = random.Random(1)
    rows = [_Row(i, rng) for i in range(n)]
    fields = {k: RUN_FIELDS[k] for k in ("id", "name", "created_at", "storage_state")}
    flt = json.dumps(
        {
            "predicates": [
                {"key": "storage_state", "operation": "NOT_EQUALS", "string_value": "ARCHIVED"}
            ]
        }
    )
    get, key = fields["created_at"], fields["id"]

    def by_key():
        listing.page(rows, fields=fields, key=key, model="Run", filter_text=flt,
                     sort_by="created_at desc", page_size=20, page_token=None)  # fmt: skip

    def by_compare():  # the filter and sort listing.page made before: pairwise comparisons
        def cmp(a, b):
            return listing._compare(get(a), get(b)) or listing._compare(key(a), key(b))

        state = fields["storage_state"]
        kept = [r for r in rows if listing._compare(state(r), "ARCHIVED") != 0]
        sorted(kept, key=functools.cmp_to_key(cmp), reverse=True)[:20]

    out = {}
    for name, fn in (("key_sort_ms", by_key), ("compare_sort_ms", by_compare)):
        t0 = time.process_time()
        for _ in range(repeats):
            fn()
        out[name] = round((time.process_time() - t0) / repeats * 1000, 2)
    out["ratio"] = round(out["compare_sort_ms"] / out["key_sort_ms"], 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fill", type=int, default=10000)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--out", default="results/bench-fill")
    ap.add_argument("--results", type=Path, default=result_files.RESULTS, help="for BENCHMARKS.md")
    a = ap.parse_args()
    started, machine, commit = result_files.now(), host(), result_files.commit()
    bid = time.strftime("fill-%H%M%S", time.gmtime())
    with start_kfp_server(simulate="all:fixed(0.2)", max_parallel_runs=50) as server:
        opts = RunsOptions(
            host=server.url, pipeline=str(HELLO), num_runs=10,
            create_concurrency=a.concurrency, poll_interval=0.5, benchmark_id=bid,
            max_runs=max(a.fill, 1000),
        )  # fmt: skip
        fopts = FillOptions(target=a.fill, steps=a.steps, repeats=a.repeats)
        cpu0, srv0, t0 = cpu_self(), cpu_of(server.pid), time.perf_counter()
        stats, fill = run_with_fill(opts, fopts, on_fill_progress=_progress)
        wall = time.perf_counter() - t0
        cpu, srv = cpu_self() - cpu0, cpu_of(server.pid) - srv0
        sys.stderr.write("\n")
    doc = stats.summary()
    doc["fill"] = fill
    write_results(a.out, runs_summary=doc)
    per_k = 1000 / max(fill["filled"], 1)
    bench = {
        "command": f"kfp-bench runs --fill {a.fill} --fill-steps {a.steps} "
        f"--fill-repeats {a.repeats}",
        "argv": shlex.join(sys.argv),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared with other work",
        "fill_id": fill_id(bid),
        "filled": fill["filled"],
        "fill_s": fill["fill_s"],
        "fill_rate_per_s": fill["fill_rate_per_s"],
        "wall_s": round(wall, 1),
        "driver_cpu_s_per_1000_runs": round(cpu * per_k, 2),
        "server_cpu_s_per_1000_runs": round(srv * per_k, 2),
        "remaining_after": fill["cleanup"].get("remaining"),
        "runs_deleted": fill["cleanup"].get("runs_deleted"),
        "listing_at_k": listing_cost(a.fill),
        "rows_at_k": [r for r in fill["rows"] if r["k"] == max(x["k"] for x in fill["rows"])],
    }
    Path(a.out, "bench.json").write_text(json.dumps(bench, indent=2) + "\n")
    print(json.dumps(bench, indent=2))
    print(result_files.save(_result(bench, fill, started, machine, commit), a.results))
    return 0


def _result(bench: dict, fill: dict, started: str, machine: dict, commit: str):
    """The fill as a results file: its cost, its sweep, and the UI's calls at each K (kept in
    the file)."""
    listed = bench["listing_at_k"]
    rows = [
        ["runs filled", f"{bench['filled']:,} ({fill['create_failed']} creates failed)"],
        [
            "fill rate (creates and terminates)",
            f"{bench['fill_rate_per_s']:,.0f} runs/s ({bench['fill_s']:.1f} s)",
        ],  # fmt: skip
        ["driver CPU per 1000 runs filled", f"{bench['driver_cpu_s_per_1000_runs']} s"],
        ["local KFP API CPU per 1000 runs filled", f"{bench['server_cpu_s_per_1000_runs']} s"],
        ["whole run, wall", f"{bench['wall_s']} s"],
        ["the fill's runs left after the sweep", bench["remaining_after"]],
        [
            f"one LIST page at {bench['filled']:,} rows, CPU: the listing / the pairwise sort it "
            "replaced",
            f"{listed['key_sort_ms']} ms / {listed['compare_sort_ms']} ms",
        ],  # fmt: skip
    ]
    ks = sorted({r["k"] for r in fill["rows"]})
    at = {(r["kind"], r["k"]): f"{r['p50_ms']:.1f} / {r['p95_ms']:.1f}" for r in fill["rows"]}
    kinds = list(dict.fromkeys(r["kind"] for r in fill["rows"]))
    calls = [[kind, *(at.get((kind, k), "-") for k in ks)] for kind in kinds]
    return result_files.Result(
        benchmark="kfp-fill",
        title="The full-database mode: kfp-bench runs --fill",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={"kfp-bench": __version__},
        tables=[
            result_files.Table(
                f"`{bench['command']}` against the local KFP API", ["figure", "value"], rows
            ),  # fmt: skip
            result_files.Table(
                "the UI's calls at each K, client side, p50 / p95 ms",
                ["call", *(f"K={k:,}" for k in ks)],
                calls,
                detail=True,
            ),
        ],
        goals=[
            result_files.Goal(
                "the fill's runs left after the sweep",
                str(bench["remaining_after"]),
                "0",
                bench["remaining_after"] == 0,
            )
        ],  # fmt: skip
    )


def _progress(phase: str, filled: int, target: int) -> None:
    sys.stderr.write(f"\r  {phase}: {filled}/{target}   ")
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())

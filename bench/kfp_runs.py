"""Benchmark the KFP driver (``kfp-bench runs``) against the local KFP API server, side by side.

One command starts the local KFP API server (kfp_bench.sandbox.kfp_server) with 20 ms injected
latency a call and every run simulated, then runs the driver twice against it:

  sequential  --create-concurrency 1, as the KFP notebook creates runs, one after another
  concurrent  --create-concurrency 16

and checks the issue's targets:

  1. creating N=1000 runs at --create-concurrency 16 is >= 10x faster than one after another
     (create phase: first create_run sent to last create_run answered, from the records);
  2. a poll round costs <= N/100 API calls (a GET per run would cost N);
  3. the driver's API calls in total and its CPU seconds for the whole benchmark are reported.

Run it as ``.venv/bin/python bench/kfp_runs.py [--num-runs 1000] [--out bench/kfp_runs.json]``.
It prints every figure, the equivalent ``kfp-bench runs`` commands, and writes them all as JSON.
Nothing here runs in CI: the figures hold for the machine they were taken on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import result_files
from peers import host

from kfp_bench import __version__
from kfp_bench.jsonl import read
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.options import RunsOptions
from kfp_bench.records import ApiCall

ROOT = Path(__file__).resolve().parents[1]
#: the KFP project's hello_world pipeline, copied into tests/data (source and licence there)
HELLO = ROOT / "tests" / "data" / "kfp-pipelines" / "hello_world.yaml"


def create_phase_s(calls: list[ApiCall]) -> float:
    creates = [c for c in calls if c.operation == "create_run"]
    return max(c.start + c.duration for c in creates) - min(c.start for c in creates)


def one(url: str, n: int, concurrency: int, poll: float, out: Path) -> dict:
    opts = RunsOptions(
        host=url,
        pipeline=str(HELLO),
        num_runs=n,
        create_concurrency=concurrency,
        poll_interval=poll,
        timeout=1800,
    )
    t0 = time.perf_counter()
    stats = run_benchmark(opts, out_dir=out)
    wall = time.perf_counter() - t0
    doc = stats.summary()
    (out / "summary.json").write_text(json.dumps(doc, indent=1))
    calls = read(out / "api_calls.jsonl", ApiCall)
    return {
        "command": shlex.join(
            [
                "kfp-bench",
                "runs",
                "--host",
                url,
                "--pipeline",
                str(HELLO),
                "--num-runs",
                str(n),
                "--create-concurrency",
                str(concurrency),
                "--poll-interval",
                str(poll),
                "--out",
                str(out),
            ]
        ),
        "create_phase_s": round(create_phase_s(calls), 3),
        "wall_s": round(wall, 3),
        "driver_cpu_s": doc["client"]["cpu_s"],
        "api_calls_total": doc["api_calls_total"],
        "poll_rounds": doc["poll_rounds"],
        "calls_per_poll_round_max": doc["calls_per_poll_round"]["max"],
        "list_runs_calls_per_round_max": max(
            (
                sum(1 for c in calls if c.poll_round == r and c.operation == "list_runs")
                for r in {c.poll_round for c in calls if c.poll_round}
            ),
            default=0,
        ),
        "by_state": doc["runs"]["by_state"],
        "create_run_ms": {k: doc["api"]["create_run"][k] for k in ("p50_ms", "p99_ms")},
        "list_runs_ms": {k: doc["api"]["list_runs"][k] for k in ("p50_ms", "p99_ms")},
        "get_run_ms": {k: doc["api"]["get_run"][k] for k in ("p50_ms", "p99_ms")},
        "server": doc.get("server", {}),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-runs", type=int, default=1000)
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--run-seconds", type=float, default=0.5, help="simulated run duration")
    ap.add_argument("--poll-interval", type=float, default=1.0)
    ap.add_argument("--out", default=str(ROOT / "bench" / "kfp_runs.json"))
    ap.add_argument(
        "--results",
        type=Path,
        default=result_files.RESULTS,
        help="where the results file for BENCHMARKS.md goes (bench/render.py)",
    )
    a = ap.parse_args()
    started, machine, commit = result_files.now(), host(), result_files.commit()

    from kfp_bench.sandbox.kfp_server import start_kfp_server

    server_opts = {
        "latency_ms": a.latency_ms,
        "simulate": f"all:fixed({a.run_seconds:g})",
        "max_parallel_runs": a.num_runs,  # the driver is measured, not the queue
    }
    print(
        f"machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}"
    )
    print(f"server: kfp_bench.sandbox.kfp_server {server_opts}")
    results = {}
    with start_kfp_server(port=0, **server_opts) as server, tempfile.TemporaryDirectory() as tmp:
        for label, conc in (("sequential", 1), ("concurrent", 16)):
            out = Path(tmp) / label
            print(f"\n[{label}] {a.num_runs} runs at --create-concurrency {conc} ...", flush=True)
            results[label] = r = one(server.url, a.num_runs, conc, a.poll_interval, out)
            print(f"  $ {r['command']}")
            for k, v in r.items():
                if k not in ("command", "server"):
                    print(f"  {k}: {v}")

    seq, con = results["sequential"], results["concurrent"]
    speedup = seq["create_phase_s"] / con["create_phase_s"] if con["create_phase_s"] else 0.0
    budget = a.num_runs / 100
    table = [
        ("create speed-up, 16 vs 1", f"{speedup:.1f}x", ">= 10x", speedup >= 10),
        (
            "API calls per poll round (concurrent)",
            con["calls_per_poll_round_max"],
            f"<= N/100 = {budget:g} (GET per run: {a.num_runs})",
            con["calls_per_poll_round_max"] <= budget,
        ),
        ("driver API calls in total (concurrent)", con["api_calls_total"], "reported", True),
        ("driver CPU seconds (concurrent)", con["driver_cpu_s"], "reported", True),
        ("driver API calls in total (sequential)", seq["api_calls_total"], "reported", True),
        ("driver CPU seconds (sequential)", seq["driver_cpu_s"], "reported", True),
    ]
    print("\nfigure                                      value        target")
    for name, value, target, ok in table:
        print(f"  {name:<42}{value!s:<13}{target}  {'ok' if ok else 'MISS'}")
    doc = {
        "command": shlex.join([sys.executable, *sys.argv]),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "server": server_opts,
        "num_runs": a.num_runs,
        "results": results,
        "table": [{"figure": n, "value": v, "target": t, "ok": ok} for n, v, t, ok in table],
    }
    Path(a.out).write_text(json.dumps(doc, indent=1, default=str))
    print(f"\nwrote {a.out}")
    saved = result_files.save(_result(a, results, table, started, machine, commit), a.results)
    print(f"wrote {saved.relative_to(ROOT) if saved.is_relative_to(ROOT) else saved}")
    return 0 if all(ok for *_, ok in table) else 1


def _result(a, results: dict, table: list, started: str, machine: dict, commit: str):
    """The run as a results file (bench/result_files.py): the two concurrencies side by side."""
    seq, con = results["sequential"], results["concurrent"]
    rows = [
        ["create phase (first create sent to last answered), s", seq["create_phase_s"]]
        + [con["create_phase_s"]],
        ["API calls per poll round, most", seq["calls_per_poll_round_max"]]
        + [con["calls_per_poll_round_max"]],
        ["driver API calls in total", seq["api_calls_total"], con["api_calls_total"]],
        ["driver CPU seconds, whole benchmark", seq["driver_cpu_s"], con["driver_cpu_s"]],
        ["whole benchmark wall time, s", seq["wall_s"], con["wall_s"]],
        ["create_run p50 / p99, ms (client)", _pair(seq["create_run_ms"])]
        + [_pair(con["create_run_ms"])],
    ]
    goals = [
        result_files.Goal(name, str(value), target, ok)
        for name, value, target, ok in table
        if target != "reported"
    ]
    machine = {**machine, "loadavg_1m_end": round(os.getloadavg()[0], 2)}
    return result_files.Result(
        benchmark="kfp-runs",
        title="KFP runs: kfp-bench runs against the local KFP API",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={"kfp-bench": __version__},
        tables=[
            result_files.Table(
                f"{a.num_runs} runs of hello_world.yaml, every call {a.latency_ms:g} ms late, "
                f"every run simulated ({a.run_seconds:g} s)",
                ["figure", "`--create-concurrency 1` (the notebook's way)"]
                + ["`--create-concurrency 16`"],
                rows,
            )
        ],
        goals=goals,
    )


def _pair(ms: dict) -> str:
    return f"{ms['p50_ms']:.1f} / {ms['p99_ms']:.1f}"


if __name__ == "__main__":
    sys.exit(main())

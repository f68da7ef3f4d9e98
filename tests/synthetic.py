"""Synthetic results directories for the report and history tests: written through the real
record writers and aggregators (JsonlWriter, RunsStats, LoadStats, write_results), from seeded
random numbers, so the same arguments always give the same records."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kfp_bench.jsonl import JsonlWriter
from kfp_bench.load.cpu import client_cpu
from kfp_bench.records import ApiCall, Result, RunRecord, TaskRecord
from kfp_bench.results import write_results
from kfp_bench.stats.load import LoadStats
from kfp_bench.stats.runs import RunsStats

T0 = 1_790_000_000.0


def make_results(
    path: Path,
    *,
    seed: int = 1,
    slow: float = 1.0,
    runs: int = 30,
    failed: int = 3,
    requests: int = 600,
    load: bool = True,
    extra: dict | None = None,
    start: float = T0,
    load_cpu: tuple[float, float] = (0.02, 0.05),
) -> Path:
    """A results directory at ``path``; ``slow`` multiplies every latency and duration;
    ``load_cpu`` is the load generator's (user, system) CPU seconds, user times ``slow``."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    stats = RunsStats(requested=runs, benchmark_id=f"synthetic-{seed}", host="http://kfp.test")
    stats.started_at = start
    with JsonlWriter(path / "api_calls.jsonl") as calls, JsonlWriter(path / "runs.jsonl") as out:
        for op, n, median_s in (
            ("upload_pipeline", 1, 0.3),
            ("create_experiment", 1, 0.01),
            ("create_run", runs, 0.05),
            ("list_runs", min(12, runs), 0.015),
            ("get_run", runs, 0.007),
            ("delete_run", runs, 0.006),
        ):
            for i in range(n):
                d = float(rng.lognormal(np.log(median_s * slow), 0.3))
                c = ApiCall(
                    op, start + i * 0.1, round(d, 6), poll_round=i + 1 if op == "list_runs" else 0
                )
                calls.write(c)
                stats.add(c)
        for i in range(runs):
            queue = float(rng.lognormal(np.log(0.5 * slow), 0.4))
            tasks = tuple(
                TaskRecord(name, "SUCCEEDED", round(float(rng.lognormal(np.log(m * slow), 0.3)), 6))
                for name, m in (("fetch-data", 0.4), ("train", 1.5), ("evaluate", 0.3))
            )
            execution = sum(t.duration for t in tasks)
            state = "FAILED" if i < failed else "SUCCEEDED"
            created = start + i * 0.2
            r = RunRecord(
                run_id=f"run-{seed}-{i:03d}",
                name=f"kfp-bench-synthetic-{i:05d}",
                state=state,
                created_at=created,
                scheduled_at=created,
                finished_at=created + queue + execution,
                queue_delay=round(queue, 6),
                execution=round(execution, 6),
                duration=round(queue + execution, 6),
                tasks=tasks,
                simulated=True,
                error="boom" if state == "FAILED" else "",
            )
            out.write(r)
            stats.add(r)
    stats.close(wall_s=12.0, cpu_s=0.5)
    load_stats = None
    if load:
        load_stats = LoadStats(corrected=True, started_at=start + 1)
        for i in range(requests):
            lat = float(rng.lognormal(np.log(0.005 * slow), 0.35))
            status = 503 if i % 97 == 0 else 200
            t = i * 0.01
            load_stats.add(Result(i, t, t + 0.0002, lat, status, 2, 40))
        load_stats.close(requests * 0.01)
        user, system = load_cpu
        load_stats.client_cpu = client_cpu(user * slow, system, requests * 0.01)
    write_results(path, runs_summary=stats.summary(), load=load_stats, extra=extra)
    return path


SWEEP = [
    {
        "rate": r,
        "rps": r * 0.99,
        "mean_ms": 5 + r / 40,
        "p50_ms": 5 + r / 50,
        "p95_ms": 6 + r / 25,
        "p99_ms": 7 + (r / 60) ** 2,
        "success_ratio": 1.0,
        "max_replicas": 1 + r // 100,
    }
    for r in (50, 100, 200, 400)
]
REPLICAS = [
    {
        "t": T0 + 1 + s,
        "ready": min(1 + s // 2, 3),
        "total": min(1 + s // 2, 3) + (s % 2),
        "desired": 3,
    }
    for s in range(7)
]

"""The predict load's steps: rate_sweep (one open-loop step per rate, and the knee) and
inference_load (one load worker's share, saved as a mergeable result).
"""

from __future__ import annotations

from kfp_bench.errors import BenchError
from kfp_bench.failpoint import fail_point
from kfp_bench.figures import HDR_MS, fixed, pct
from kfp_bench.jsonl import write_json_atomic
from kfp_bench.steps import server_metrics
from kfp_bench.steps.load_params import load_options, sweep_rates
from kfp_bench.steps.outputs import failed, write_json
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.worker_start import worker_started

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).


def rate_sweep(p: BenchParams, out: str) -> None:
    """One open-loop step per rate of ``p.sweep_rates`` against its inference_url, and the knee."""
    if not p.sweep_rates.strip():
        print("rate sweep switched off (sweep_rates empty)")
        write_json(out, {"skipped": True})
        return
    from kfp_bench.load.sweep import run_sweep

    result = run_sweep(
        load_options(p),
        sweep_rates(p),
        p.sweep_step_sec,
        on_step=_said_step,
    )
    write_json(out, result.as_dict())
    print(f"knee: {result.knee.level} ({result.knee.reason})")
    fail_point("rate_sweep")


def _said_step(s) -> None:
    p99 = "no response" if s.p99_ms is None else f"p99 {fixed(s.p99_ms, 1, HDR_MS)} ms"
    ok = pct(s.success_ratio, 2)
    print(f"{s.rate:g} req/s: {p99}, {ok}, {s.no_response} without a response")


def inference_load(p: BenchParams, worker: int, out: str) -> None:
    """Send load worker ``worker``'s share of the load and save its histograms at ``out``."""
    if not p.run_load:
        print("inference load switched off (run_load=false)")
        write_json(out, {"skipped": True})
        return
    from kfp_bench.load.workers import run_load
    from kfp_bench.stats.load import cpu_caveat, cpu_figures

    if worker_started(out, worker, f"load worker {worker}: ", p, "worker"):
        return
    error = ""
    with server_metrics.window(p, worker, f"worker {worker}: ") as server:
        try:
            stats = run_load(load_options(p).share(worker, p.load_workers))
        except (BenchError, OSError) as exc:
            stats = getattr(exc, "stats", None)  # an EngineError's: what was measured before it
            error = failed("inference_load", exc, f"worker {worker}: ")
    # The error beside the stats (LoadStats reads past it); alone, the result is unreadable and
    # aggregate names the worker lost. The server's series too (aggregate merges them).
    doc = {**(stats.to_dict() if stats is not None else {}), "worker": worker, **server.doc}
    write_json_atomic({**doc, "error": error} if error else doc, out)
    if stats is None:
        fail_point("inference_load")
        return
    print(f"worker {worker}: {stats.requests} requests, {fixed(stats.summary().rps, 1)} req/s")
    cpu = cpu_figures(stats)
    if cpu:
        print(f"worker {worker}: load generator CPU {fixed(cpu['cores'], 2)} cores")
    if caveat := cpu_caveat(cpu):
        print(f"worker {worker}: WARNING: {caveat}")
    fail_point("inference_load")

"""The per-stage table of a staged load (``stats.stages.StageStats.summary`` rows), as text."""

from __future__ import annotations

from kfp_bench.figures import HDR_MS, fixed


def write_stages(rows: list[dict], out) -> None:
    """One line per stage: where it sits, the requests the schedule meant and those measured,
    successes per second and p50/p99 of each latency kept (ms; "-" for a stage without one)."""
    if not rows:
        return
    metrics = [k for k in ("latency", "ttft", "e2e") if k in rows[0]]
    head = f"  {'stage':<22} {'from':>7} {'to':>7} {'sched':>6} {'sent':>6} {'ok':>6} {'ok/s':>8}"
    for m in metrics:
        head += f" {m + ' p50':>11} {m + ' p99':>11}"
    if "tokens_per_s" in rows[0]:
        head += f" {'tok/s':>8}"
    print("\nStages (by intended send time):", file=out)
    print(head, file=out)
    for r in rows:
        line = (
            f"  {r['stage'][:22]:<22} {r['start_s']:>6g}s {r['end_s']:>6g}s {r['scheduled']:>6} "
            f"{r['requests']:>6} {r['ok']:>6} {fixed(r['throughput'], 2):>8}"
        )
        for m in metrics:
            p = r[m]
            if p:
                line += f" {fixed(p['p50'], 2, HDR_MS):>11} {fixed(p['p99'], 2, HDR_MS):>11}"
            else:
                line += f" {'-':>11} {'-':>11}"
        if "tokens_per_s" in r:
            line += f" {fixed(r['tokens_per_s'], 1):>8}"
        print(line, file=out)

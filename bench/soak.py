"""Soak: does ``kfp-bench load`` hold still over minutes of load? Nothing may leak.

This script owns the soak check of issue 7. It starts the local KServe model server
(``kfp_bench.sandbox.model_server``), runs
``kfp-bench load -m POST --v1-shape 1,4 --rate 200 -z <N>m`` against its V1 predict URL, and
samples the load process's RSS and open file descriptors (children included, with psutil)
every 5 s. It prints the machine, the command, the samples, and a verdict:

  RSS flat   the least-squares slope of RSS over the last 80 % of the run (the last 8 minutes of
             10) is below 1 MB/min; the first minutes are left out because allocators and
             histograms grow to their working size there
  fds flat   open fds at the last sample <= those at the first steady sample + 4

The samples also count the sockets among the fds: in rate mode the engine opens a connection when
a request is due and none is idle, and keeps it for reuse (up to --max-inflight), so a latency
spike grows the socket pool for good. That is a pool, not a leak; fds other than sockets must stay
flat either way, and the verdict says which of the two grew.

and the attack's errors and latency summary, and writes it all to JSON, and the figures against
their goals to a results file (bench/result_files.py) for BENCHMARKS.md.

Run it as ``.venv/bin/python bench/soak.py [--minutes N] [--rate R] [--out FILE]``. Nothing here
runs in CI; the figures hold for the machine printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import result_files
from peers import host

from kfp_bench import __version__
from kfp_bench.sandbox.model_server import start_model_server

HERE = Path(__file__).resolve().parent
KFP = shutil.which("kfp-bench", path=str(Path(sys.executable).parent)) or "kfp-bench"
SAMPLE_S = 5.0
RSS_SLOPE_MAX_MB_MIN = 1.0
FD_SLACK = 4  # a connection reopened after a server-side close may be mid-swap at a sample


def machine() -> dict:
    return {**host(), "mem_total_mb": round(psutil.virtual_memory().total / 2**20)}


def _sockets(pid: int) -> int:
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
            except OSError:
                continue
    except OSError:
        return 0
    return n


def sample(proc: psutil.Process) -> tuple[float, int, int] | None:
    """RSS (MB), open fds and sockets of ``proc`` and its children; None once it has gone."""
    rss, fds, socks = 0, 0, 0
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return None
    for p in procs:
        try:
            rss += p.memory_info().rss
            fds += p.num_fds()
            socks += _sockets(p.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return rss / 2**20, fds, socks


def slope_per_min(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) points, per minute."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    cov = sum((t - mx) * (v - my) for t, v in points)
    return cov / var * 60 if var else 0.0


def soak(minutes: float, rate: int, workers: int) -> dict:
    with start_model_server() as server, tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        out = Path(tmp) / "load.json"
        cmd = [
            KFP, "load", "-m", "POST", "-T", "application/json", "--v1-shape", "1,4",
            "--rate", str(rate), "-z", f"{minutes * 60:g}s",
            "--workers", str(workers), "--json-out", str(out), server.v1_predict_url,
        ]  # fmt: skip
        print(f"$ {shlex.join(cmd)}", flush=True)
        t0 = time.monotonic()
        popen = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        proc = psutil.Process(popen.pid)
        samples = []
        while popen.poll() is None:
            s = sample(proc)
            if s is not None and popen.poll() is None:
                t = time.monotonic() - t0
                samples.append(
                    {"t_s": round(t, 1), "rss_mb": round(s[0], 2), "fds": s[1], "sockets": s[2]}
                )
                print(f"  t={t:6.1f}s  rss={s[0]:7.2f} MB  fds={s[1]}  sockets={s[2]}", flush=True)
            deadline = time.monotonic() + SAMPLE_S
            while popen.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
        text = popen.stdout.read()
        if popen.returncode != 0:
            raise SystemExit(f"kfp-bench load exited {popen.returncode}:\n{text[-2000:]}")
        result = json.loads(out.read_text())
    return {"command": shlex.join(cmd), "samples": samples, "result": result, "text": text}


def verdict(samples: list[dict], minutes: float) -> dict:
    if not samples:
        return {"flat": False, "why": "no samples"}
    skip_s = minutes * 60 * 0.2
    steady = [s for s in samples if s["t_s"] >= skip_s] or samples
    rss_slope = slope_per_min([(s["t_s"], s["rss_mb"]) for s in steady])
    fd_start, fd_end = steady[0]["fds"], samples[-1]["fds"]
    other_start = steady[0]["fds"] - steady[0]["sockets"]
    other_end = samples[-1]["fds"] - samples[-1]["sockets"]
    rss_ok = rss_slope < RSS_SLOPE_MAX_MB_MIN
    fds_ok = fd_end <= fd_start + FD_SLACK
    return {
        "rss_mb": {
            "start": samples[0]["rss_mb"],
            "peak": max(s["rss_mb"] for s in samples),
            "end": samples[-1]["rss_mb"],
        },
        "fds": {
            "start": samples[0]["fds"],
            "steady_start": fd_start,
            "peak": max(s["fds"] for s in samples),
            "end": fd_end,
            "sockets_steady_start": steady[0]["sockets"],
            "sockets_end": samples[-1]["sockets"],
            "other_steady_start": other_start,
            "other_end": other_end,
        },
        "non_socket_fds_flat": other_end <= other_start + FD_SLACK,
        "rss_slope_mb_per_min": round(rss_slope, 3),
        "rss_slope_window_s": [steady[0]["t_s"], samples[-1]["t_s"]],
        "rss_flat": rss_ok,
        "fds_flat": fds_ok,
        "flat": rss_ok and fds_ok,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="length of the load (default 10)")
    ap.add_argument("--rate", type=int, default=200, help="open-loop rate in req/s (default 200)")
    ap.add_argument("--workers", type=int, default=1, help="load worker processes (default 1)")
    ap.add_argument("--out", default=str(HERE / "soak.json"), help="results JSON")
    ap.add_argument("--results", type=Path, default=result_files.RESULTS, help="for BENCHMARKS.md")
    args = ap.parse_args(argv)

    started, commit = result_files.now(), result_files.commit()
    mach = machine()
    print("machine:", json.dumps(mach), flush=True)
    run = soak(args.minutes, args.rate, args.workers)
    v = verdict(run["samples"], args.minutes)
    res = run["result"]
    report = {
        "machine": mach,
        "command": run["command"],
        "minutes": args.minutes,
        "verdict": v,
        "requests": res["requests"],
        "rps": res["rps"],
        "success_ratio": res["success_ratio"],
        "status_codes": res["status_codes"],
        "errors": res["errors"],
        "latency_ms": res["latency_ms"],
        "samples": run["samples"],
    }
    print(run["text"])
    summary = {k: v for k, v in report.items() if k not in ("samples", "machine")}
    print(json.dumps(summary, indent=1))
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    print(f"wrote {result_files.save(_result(report, started, commit), args.results)}")
    return 0 if v["flat"] else 1


def _result(report: dict, started: str, commit: str) -> result_files.Result:
    """The soak as a results file: its figures, and RSS and non-socket fds against flat."""
    v, lat, minutes = report["verdict"], report["latency_ms"], report["minutes"]
    rss, fds = v["rss_mb"], v["fds"]
    errors = sum(report["errors"].values()) if report["errors"] else 0
    codes = ", ".join(f"{k}: {n:,}" for k, n in sorted(report["status_codes"].items()))
    rows = [
        ["requests, rate", f"{report['requests']:,} at {report['rps']:.1f} req/s"],
        ["status codes, errors", f"{codes}; {errors} errors"],
        ["RSS start / peak / end", f"{rss['start']} / {rss['peak']} / {rss['end']} MB"],
        ["open fds other than sockets", f"{fds['other_steady_start']} → {fds['other_end']}"],
        [
            "sockets, most / at the end",
            f"{max(s['sockets'] for s in report['samples'])} / {fds['sockets_end']}",
        ],  # fmt: skip
        [
            "latency p50 / p90 / p99",
            " / ".join(f"{lat.get(k)}" for k in ("p50", "p90", "p99")) + " ms",
        ],  # fmt: skip
    ]
    window = f"the last {minutes * 0.8:g} of {minutes:g} minutes"
    goals = [
        result_files.Goal(
            f"RSS slope over {window}",
            f"{v['rss_slope_mb_per_min']} MB/min",
            f"< {RSS_SLOPE_MAX_MB_MIN:g} MB/min",
            v["rss_flat"],
        ),
        result_files.Goal(
            "open fds other than sockets, first steady sample → end",
            f"{fds['other_steady_start']} → {fds['other_end']}",
            f"flat (end <= start + {FD_SLACK})",
            v["non_socket_fds_flat"],
        ),
    ]
    return result_files.Result(
        benchmark="soak",
        title="Soak: kfp-bench load against the local KServe model server",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=report["machine"],
        versions={"kfp-bench": __version__},
        tables=[result_files.Table(f"`{_shown(report['command'])}`", ["figure", "value"], rows)],
        goals=goals,
    )


def _shown(cmd: str) -> str:
    """The load's command as a reader types it: kfp-bench by name, no temporary paths."""
    words = shlex.split(cmd)
    keep = [w for i, w in enumerate(words) if w != "--json-out" and words[i - 1] != "--json-out"]
    return shlex.join(["kfp-bench", *keep[1:-1], "URL"])


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark ``kfp-bench load`` side by side with hey and wrk, on loopback only.

This script owns the comparison behind the README's performance claims. One command finds (or
installs) nginx, hey and wrk, runs four cases in one go, prints the machine, every command it ran
and a table of figures, and writes them all to a JSON file:

  a  top throughput at -c 50 against nginx: hey, wrk, kfp-bench (1 and 2 worker processes), and
     bench/floor.py, a bare uvloop + httptools client: the floor of any Python client; with the
     CPU each client and nginx spent per request
  b  latency fidelity: a fault server holding each response 10 ms, at 500 req/s
  c  coordinated omission: a fault server stalling 0.5 s every 5 s, at 200 req/s, against the
     true p99 of that schedule computed from the server's and the client's start times
  d  memory: kfp-bench's RSS (children included) sampled every second at the top rate

Run it as ``.venv/bin/python bench/run.py [--quick] [--only a,b,c,d] [--out FILE]``. Nothing here
runs in CI; the figures depend on the machine, which is why the machine is printed with them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import result_files
from peers import (
    COMMANDS,
    GRACE_S,
    HERE,
    KFP,
    ensure_tools,
    floor,
    hey,
    kfp,
    kfp_figures,
    machine,
    nginx_server,
    with_cpu,
    wrk,
)

from kfp_bench.sandbox import start_fault_server

# --- (a) throughput ------------------------------------------------------------------------


def case_throughput(url: str, reps: int, seconds: int = 10, wrk_threads=(2,)) -> dict:
    """Median req/s of each tool over ``reps`` interleaved runs, the order rotated each round.
    wrk runs once per round for each of ``wrk_threads``, as ``wrk -tN``."""
    tools = {
        "hey": lambda: hey(["-c", "50"], url, seconds),
        **{f"wrk -t{n}": lambda n=n: wrk([f"-t{n}", "-c50"], url, seconds) for n in wrk_threads},
        "kfp-bench": lambda: kfp(["-c", "50"], url, seconds),
        "kfp-bench --workers 2": lambda: kfp(["-c", "50", "--workers", "2"], url, seconds),
        "python floor (bench/floor.py)": lambda: floor(url, seconds),
    }
    names = list(tools)
    runs: dict[str, list] = {name: [] for name in names}
    for rep in range(reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            runs[name].append(with_cpu(tools[name]))
    median = {name: statistics.median(r["rps"] for r in rs) for name, rs in runs.items()}
    cpu = {
        name: {
            key: statistics.median(vals)
            for key in ("client_cpu_us", "nginx_cpu_us", "attack_cpu_us")
            if (vals := [r[key] for r in rs if r.get(key) is not None])
        }
        for name, rs in runs.items()
    }
    return {"seconds": seconds, "runs": runs, "median_rps": median, "median_cpu_us": cpu}


# --- (b) latency fidelity ------------------------------------------------------------------


def case_latency(seconds: int = 20, delay_ms: float = 10.0) -> dict:
    """Each tool's p50 against the server-measured hold p50, on a fresh server per tool run."""
    tools = {
        "kfp-bench": lambda url: kfp(["--rate", "500"], url, seconds),
        "hey": lambda url: hey(["-c", "5", "-q", "100"], url, seconds),
        # wrk has no rate limit, but 5 connections held 10 ms each come to about 500 req/s.
        "wrk": lambda url: wrk(["-t1", "-c5", "--latency"], url, seconds),
    }
    out = {}
    for name, go in tools.items():
        with start_fault_server(delay_ms=delay_ms) as srv:
            r = go(srv.url + "/")
            r["truth_ms"] = srv.stats()["hold_ms"]["p50"]
        r["diff_ms"] = None if r["p50_ms"] is None else r["p50_ms"] - r["truth_ms"]
        out[name] = r
    return {"delay_ms": delay_ms, "tools": out}


# --- (c) coordinated omission --------------------------------------------------------------


def true_latencies(rate, seconds, offset, every, length, base_s) -> list[float]:
    """Latency of each request of a constant-rate schedule against the stalling server.

    Request i leaves ``offset + i / rate`` seconds after the server started; one due inside a
    stall window ``[k * every, k * every + length)`` is held to the window's end (the server's own
    rule); every request also costs ``base_s``.
    """
    out = []
    for i in range(round(rate * seconds)):
        into = (offset + i / rate) % every
        out.append(base_s + (length - into if into < length else 0.0))
    return out


def nearest_rank(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def case_omission(seconds: int = 30, rate: int = 200, every: float = 5, length: float = 0.5):
    """kfp-bench's and hey's p99 and p95 against those of the schedule, the truth."""
    modes = {"stall_every": every, "stall_for": length}
    tools = {
        "kfp-bench": lambda url: kfp(["--rate", str(rate)], url, seconds),
        "hey": lambda url: hey(["-c", "10", "-q", str(rate // 10)], url, seconds),
    }
    out = {}
    for name, go in tools.items():
        with start_fault_server(**modes) as srv:
            launched = time.time()  # hey prints no start time: take the moment it is launched
            r = go(srv.url + "/")
            stats = srv.stats()
        r["offset_s"] = r.get("started_at", launched) - stats["started_at"]
        r["server_requests"] = stats["requests"]
        out[name] = r
    # Outside the stalls a request costs what kfp-bench measured as its median.
    base = out["kfp-bench"]["p50_uncorrected_ms"] / 1e3
    for r in out.values():
        true = true_latencies(rate, seconds, r["offset_s"], every, length, base)
        for p in (95, 99):
            r[f"true_p{p}_ms"] = nearest_rank(true, p) * 1e3
            if r[f"p{p}_ms"] is not None:
                r[f"error_p{p}_pct"] = 100 * (r[f"p{p}_ms"] / r[f"true_p{p}_ms"] - 1)
    return {"rate": rate, "stall_every_s": every, "stall_for_s": length, "tools": out}


# --- (d) memory ----------------------------------------------------------------------------


def rss_mb(proc: psutil.Process) -> float:
    """RSS of a process and all its descendants, in MB (shared pages counted in each)."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            total += p.memory_info().rss
    return total / 2**20


def sample_rss(cmd: list[str], seconds: int) -> list[tuple[float, float]]:
    """Run ``cmd``, sampling its RSS every second until it exits: (elapsed s, MB) pairs."""
    COMMANDS.append(shlex.join(cmd))
    print(f"  $ {shlex.join(cmd)}", flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, start_new_session=True)
    samples, t0 = [], time.monotonic()
    try:
        ps = psutil.Process(proc.pid)
        while proc.poll() is None and time.monotonic() - t0 < seconds + GRACE_S:
            with contextlib.suppress(psutil.NoSuchProcess):
                samples.append((round(time.monotonic() - t0, 2), rss_mb(ps)))
            time.sleep(1)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    return samples


def case_rss(url: str, seconds: int) -> dict:
    """RSS of kfp-bench at -c 50, in one process and in two, through the run."""
    out = {}
    for label, extra in (("kfp-bench", []), ("kfp-bench --workers 2", ["--workers", "2"])):
        with tempfile.TemporaryDirectory() as tmp:
            doc = Path(tmp) / "load.json"
            cmd = [KFP, "load", "-z", f"{seconds}s", "-c", "50", *extra, "--json-out", str(doc)]
            samples = sample_rss([*cmd, url], seconds)
            figures = kfp_figures(json.loads(doc.read_text())) if doc.exists() else {}
        out[label] = {**summarize_rss(samples, seconds), **figures, "samples": samples}
    return out


def summarize_rss(samples: list[tuple[float, float]], seconds: int, warmup: float = 2.0) -> dict:
    """Start and end (the load phase only), peak; flat when the last third of the load phase
    is within 5 MB or 5 % of its second third. Start-up (imports, worker processes) and the
    merge after the load are left out of start, end and the flatness test.
    """
    load = [mb for t, mb in samples if warmup <= t <= seconds] or [mb for _, mb in samples]
    if not load:
        return {"start_mb": None, "peak_mb": None, "end_mb": None, "flat": False}
    third = max(1, len(load) // 3)
    middle = statistics.median(load[third : 2 * third] or load)
    flat = statistics.median(load[-third:]) - middle <= max(5.0, 0.05 * middle)
    peak = max(mb for _, mb in samples)
    return {"start_mb": load[0], "peak_mb": peak, "end_mb": load[-1], "flat": flat}


# --- the table -----------------------------------------------------------------------------

OK = {True: "ok", False: "MISS"}


def ms(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f} ms"


def table(res: dict) -> list[tuple[str, str, str, str]]:
    """Rows of (case, figure, value, target or note) from the results."""
    cases = {"a": rows_a, "b": rows_b, "c": rows_c, "d": rows_d}
    rows = []
    for case, doc in sorted(res.items()):
        if "failed" in doc:
            rows.append((case, "FAILED", "", doc["failed"].splitlines()[0][:120]))
        else:
            rows += cases[case](doc)
    return rows


def rows_a(a: dict) -> list:
    med, rows = a["median_rps"], []
    for name, rps in med.items():
        runs = a["runs"][name]
        note = f"{len(runs)} runs, errors {sum(r['errors'] for r in runs)}"
        rows.append(("a", f"{name} req/s (median)", f"{rps:,.0f}", note))
    for name, cpu in a.get("median_cpu_us", {}).items():
        if "client_cpu_us" not in cpu:
            continue
        value = f"{cpu['client_cpu_us']:.1f} / {cpu['nginx_cpu_us']:.1f}"
        note = "client (start-up included) / nginx, median"
        if "attack_cpu_us" in cpu:
            note += f"; while sending: {cpu['attack_cpu_us']:.1f}"
        rows.append(("a", f"{name} CPU us/request", value, note))
    floor_rps = med.get("python floor (bench/floor.py)")
    if floor_rps:
        note = "kfp-bench's own work: the rest is Python, uvloop and httptools"
        rows.append(("a", "kfp-bench / python floor", f"{med['kfp-bench'] / floor_rps:.2f}x", note))
    wrks = [name for name in a["runs"] if name.startswith("wrk")]
    cpu = a.get("median_cpu_us", {})
    for name in ("kfp-bench", "kfp-bench --workers 2"):
        for other, target in (("hey", 3.0), *((w, 0.9) for w in wrks)):
            ratio = med[name] / med[other]
            rows.append(
                ("a", f"{name} / {other}", f"{ratio:.2f}x", f">= {target}x {OK[ratio >= target]}")
            )
            mine, theirs = cpu.get(name, {}), cpu.get(other, {})
            if "client_cpu_us" in mine and "client_cpu_us" in theirs:
                ratio = mine["client_cpu_us"] / theirs["client_cpu_us"]
                note = "client CPU per request (start-up included), ratio of the medians"
                rows.append(("a", f"{name} / {other} CPU us/request", f"{ratio:.2f}x", note))
    # Each round ran every tool once, back to back: how often did a client reach both targets
    # against that round's own hey and wrk? (The medians above can hide a split verdict.)
    for w in wrks:
        peers = list(zip(a["runs"]["hey"], a["runs"][w], strict=True))
        for name in ("kfp-bench", "kfp-bench --workers 2", "python floor (bench/floor.py)"):
            if name in a["runs"]:
                held = sum(
                    r["rps"] >= 3.0 * h["rps"] and r["rps"] >= 0.9 * wr["rps"]
                    for r, (h, wr) in zip(a["runs"][name], peers, strict=True)
                )
                note = f"rounds where it reached >= 3.0x hey and >= 0.9x {w} of the same round"
                rows.append(("a", f"{name}: both targets ({w})", f"{held} of {len(peers)}", note))
    return rows


def rows_b(b: dict) -> list:
    rows = []
    for name, r in b["tools"].items():
        note = f"truth {ms(r['truth_ms'])}, errors {r['errors']}"
        rows.append(("b", f"{name} p50 at {r['rps']:.0f} req/s", ms(r["p50_ms"]), note))
        if r["diff_ms"] is not None:
            target = f"|d| <= 0.5 ms {OK[abs(r['diff_ms']) <= 0.5]}" if name == "kfp-bench" else ""
            rows.append(("b", f"{name} p50 - truth", f"{r['diff_ms']:+.3f} ms", target))
    return rows


def rows_c(c: dict) -> list:
    k, h = c["tools"]["kfp-bench"], c["tools"]["hey"]
    err = k["error_p99_pct"]
    verdict = f"error {err:+.1f}% (<= 10% {OK[abs(err) <= 10]})"
    hey_note = f"error {h.get('error_p99_pct', math.nan):+.1f}%, {h['server_requests']} requests"
    base, sent = f"base {ms(k['p50_uncorrected_ms'])}", f"{k['requests']} requests"
    p95 = (k["true_p95_ms"], k["p95_ms"], h["p95_ms"])
    p95 = " / ".join("n/a" if v is None else f"{v:.1f}" for v in p95)
    return [
        ("c", "true p99 of the schedule", ms(k["true_p99_ms"], 1), base),
        ("c", "kfp-bench p99 (corrected)", ms(k["p99_ms"], 1), verdict),
        ("c", "kfp-bench p99 (uncorrected)", ms(k["p99_uncorrected_ms"], 1), sent),
        ("c", "hey p99", ms(h["p99_ms"], 1), hey_note),
        ("c", "p95: true / kfp-bench / hey", f"{p95} ms", ""),
    ]


def rows_d(d: dict) -> list:
    rows = []
    for name, r in d.items():
        if r["peak_mb"] is None:
            rows.append(("d", f"{name} RSS", "no samples", "MISS"))
            continue
        figures = f"{r['start_mb']:.0f} / {r['peak_mb']:.0f} / {r['end_mb']:.0f} MB"
        good = r["peak_mb"] < 200 and r["flat"]
        verdict = f"< 200 MB and flat ({'yes' if r['flat'] else 'no'}) {OK[good]}"
        rows.append(("d", f"{name} RSS start/peak/end", figures, verdict))
    return rows


def print_table(rows) -> None:
    head = ("case", "figure", "value", "target / note")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(4)]
    for r in [head, tuple("-" * w for w in widths), *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


# --- the results file ----------------------------------------------------------------------

#: A target's verdict at the end of a row's note: ">= 3.0x ok", "error +1.2% (<= 10% MISS)".
_VERDICT = re.compile(r"\s*\b(ok|MISS)(\)?)$")
_VERSIONS = ("nginx", "wrk", "hey", "kfp-bench")
_CPU = ("client_cpu_us", "nginx_cpu_us")


def recorded(args, info: dict, res: dict, rows: list, started: str, commit: str):
    """The run as a results file (bench/result_files.py): case (a)'s clients side by side, the
    other cases' figures, and every row with a target as a goal."""
    a = res.get("a", {})
    peers = [
        [name, rps, *(a.get("median_cpu_us", {}).get(name, {}).get(k) for k in _CPU)]
        for name, rps in a.get("median_rps", {}).items()
    ]
    goals = []
    for case, figure, value, note in rows:
        m = _VERDICT.search(note)
        if m:
            goal = note[: m.start()] + m[2]
            goals.append(result_files.Goal(f"({case}) {figure}", value, goal, m[1] == "ok"))
    runs = (
        f"median of {args.rounds} round(s) of {args.seconds} s, nginx workers {args.nginx_workers}"
    )
    tables = [
        result_files.Table(
            f"(a) top throughput at -c 50 against nginx ({runs})",
            ["client", "req/s", "client CPU µs/request", "nginx CPU µs/request"],
            peers,
        ),
        result_files.Table(
            "(b) latency fidelity, (c) coordinated omission, (d) memory",
            ["case", "figure", "value", "target or note"],
            [list(r) for r in rows if r[0] != "a"],
        ),
    ]
    machine_ = {k: v for k, v in info.items() if k not in _VERSIONS}
    return result_files.Result(
        benchmark="load-engine",
        title="Load engine: kfp-bench load beside hey and wrk",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine_,
        versions={k: info[k] for k in _VERSIONS if k in info},
        tables=[t for t in tables if t.rows],
        goals=goals,
        notes="--quick: one round, a short memory run." if args.quick else "",
    )


# --- main ----------------------------------------------------------------------------------


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="1 run per tool in (a), 15 s in (d)")
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="rounds of (a), each tool once per round, the order rotated (default 3; 1 with "
        "--quick); more rounds give steadier medians on a noisy machine",
    )
    p.add_argument(
        "--nginx-workers",
        default="auto",
        help="nginx's worker_processes in (a) and (d): 'auto' (default) gives nginx a worker per "
        "core, sharing the cores with the client; 1 keeps the server on one core (then wrk -t1 "
        "beats wrk -t2: see --wrk-threads and bench/README.md)",
    )
    p.add_argument(
        "--seconds", type=int, default=10, help="duration of each client's run in (a) (default 10)"
    )
    p.add_argument(
        "--wrk-threads",
        default="2",
        help="wrk's thread counts in (a), comma-separated: each runs once per round as wrk -tN "
        "(default 2; '1,2' runs both)",
    )
    p.add_argument("--only", default="a,b,c,d", help="comma-separated cases to run, e.g. a,c")
    p.add_argument("--out", type=Path, default=HERE / "results.json", help="JSON results file")
    p.add_argument(
        "--results",
        type=Path,
        default=result_files.RESULTS,
        help="where the results file for BENCHMARKS.md goes (bench/render.py)",
    )
    args = p.parse_args(argv)
    args.cases = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = set(args.cases) - set("abcd")
    if unknown:
        p.error(f"--only: unknown cases {sorted(unknown)}; choose from a, b, c, d")
    if args.rounds is not None and not 1 <= args.rounds <= 20:
        p.error(f"--rounds {args.rounds}: give 1 to 20 rounds of (a)")
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if not 1 <= args.seconds <= 600:
        p.error(f"--seconds {args.seconds}: give 1 to 600 seconds per run of (a)")
    threads = [t.strip() for t in args.wrk_threads.split(",") if t.strip()]
    if not threads or not all(t.isdigit() and 1 <= int(t) <= 64 for t in threads):
        p.error(f"--wrk-threads {args.wrk_threads}: give thread counts from 1 to 64, e.g. 1,2")
    args.wrk_threads = sorted({int(t) for t in threads})
    if args.nginx_workers != "auto" and not (
        args.nginx_workers.isdigit() and 1 <= int(args.nginx_workers) <= 64
    ):
        p.error(f"--nginx-workers {args.nginx_workers}: give a count from 1 to 64, or auto")
    return args


def run_cases(args) -> dict:
    """The chosen cases' results; a case that fails leaves {"failed": why} and the rest go on."""
    res: dict = {}

    def attempt(case: str, title: str, go) -> None:
        if case not in args.cases:
            return
        print(f"({case}) {title}", flush=True)
        try:
            res[case] = go()
        except Exception as e:  # a harness reports a broken case rather than losing the others
            res[case] = {"failed": f"{type(e).__name__}: {e}"}
            print(f"  ({case}) FAILED: {res[case]['failed']}", flush=True)

    if {"a", "d"} & set(args.cases):
        with nginx_server(args.nginx_workers) as url:
            seconds = 15 if args.quick else 60
            attempt(
                "a",
                "throughput against nginx",
                lambda: case_throughput(url, args.rounds, args.seconds, args.wrk_threads),
            )
            attempt("d", "RSS at the top rate", lambda: case_rss(url, seconds))
    attempt("b", "latency fidelity, 10 ms delay at 500 req/s", case_latency)
    attempt("c", "coordinated omission, 0.5 s stall every 5 s at 200 req/s", case_omission)
    return res


def main(argv=None) -> int:
    args = parse_args(argv)
    ensure_tools()
    print("machine:", flush=True)
    info = machine()
    print("\n".join(f"  {k}: {v}" for k, v in info.items()))
    started_at, commit = result_files.now(), result_files.commit()
    started = time.time()
    res = run_cases(args)
    info["loadavg_1m_end"] = os.getloadavg()[0]
    print(f"\nload average at the end: {info['loadavg_1m_end']:.2f}")
    rows = table(res)
    print(f"\ncommands run ({len(COMMANDS)}):")
    print("\n".join(f"  {c}" for c in COMMANDS))
    print(
        f"\nresults ({time.time() - started:.0f} s, quick={args.quick}, rounds={args.rounds}, "
        f"seconds={args.seconds}, nginx workers={args.nginx_workers}):"
    )
    print_table(rows)
    doc = {
        "machine": info,
        "quick": args.quick,
        "rounds": args.rounds,
        "seconds": args.seconds,
        "wrk_threads": args.wrk_threads,
        "nginx_workers": args.nginx_workers,
        "cases": res,
        "table": rows,
        "commands": COMMANDS,
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"\nwritten to {args.out}")
    saved = result_files.save(recorded(args, info, res, rows, started_at, commit), args.results)
    print(f"results file: {saved}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

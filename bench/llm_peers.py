"""``kfp-bench llm`` beside guidellm, inference-perf and ``vllm bench serve``, each against the
truth log of ``kfp-bench llm-server`` in the same run.

Every tool runs alone (2 shared cores), against a fresh server in its own process (first token
200 ms, a token every 20 ms, 64 tokens, the completions endpoint), in three cases:

- ``c16``: 16 concurrent streams for about 15 s. TTFT error against the truth (the log's first
  token send minus the request's arrival): per request where the tool exports each request's send
  time (``llm_truth.pair``: by arrival and first token; kfp-bench-rows by X-Request-Id), else
  the tool's p50/p99 minus the truth's; ITL: one sample per gap or not, and its p99 minus the
  truth gaps' p99; the client's CPU per streamed token (the whole process tree: the whole run,
  ``getrusage(RUSAGE_CHILDREN)`` of the finished tool, and while streaming, from psutil samples)
  and its peak RSS (the tree's sum, sampled every 0.1 s with psutil).
- ``rate8``: a constant 8 requests/s for 15 s: scheduling lag from the truth log,
  ``arrival_i - (arrival_0 + i / 8)``, for every tool alike, and the tool's own figure if any.
- ``c200`` (kfp-bench and kfp-bench-rows only): 200 streams from one process, ITL error against
  the truth gaps, and the server's own send error at that load (its token sends against their
  deadlines).

Peers live in their own virtualenvs under ``bench/.peers/`` (git ignores it), pinned
(``llm_peer_tools.PEERS``); ``--install`` makes them (minutes, GBs); without it a missing peer is
skipped with the command that installs it. The tools load a word-level Hugging Face tokenizer
built here over the prompts' vocabulary (``llm_truth.build_tokenizer``), offline.

Usage: ``.venv/bin/python bench/llm_peers.py [--peers kfp-bench,kfp-bench-rows,guidellm,
inference-perf,vllm] [--cases c16,rate8,c200] [--install] [--seconds 15] [--keep DIR]
[--out bench/llm_peers.json]``; it also writes a results file for BENCHMARKS.md
(bench/result_files.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llm_peer_tools as tools  # noqa: E402
import llm_truth as truth  # noqa: E402
import result_files  # noqa: E402
from peers import host  # noqa: E402

from kfp_bench import __version__  # noqa: E402
from kfp_bench.sandbox.llm_server import read_truth, start_llm_server  # noqa: E402

SERVER = dict(first_token_ms=200.0, token_gap_ms=20.0, max_tokens=64)
TARGETS = {  # issue 19's targets, for the verdicts
    "ttft_err_p50_ms": 1.5,
    "ttft_err_p99_ms": 5.0,
    "itl_err_p99_ms": 0.5,
    "lag_p99_ms": 2.0,
    "cpu_us_per_token": 50.0,
    "rss_mb": 100.0,
}
COMMANDS: list[str] = []


def machine() -> dict:
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in open("/proc/cpuinfo")
            if ln.startswith("model name")
        ),
        "?",
    )
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "load_average": list(os.getloadavg()),
        "time_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }


def measured(cmd: list[str], env: dict, timeout: float, cwd: Path) -> dict:
    """Run ``cmd`` in its own session; its tree's CPU (getrusage of the reaped children), peak
    RSS (the tree's sum, sampled) and wall time; its output's tail when it fails."""
    COMMANDS.append(shlex.join(cmd))
    print(f"  $ {shlex.join(cmd)}", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = open(cwd / "tool.log", "w")  # noqa: SIM115 - closed below, after the wait
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
    )
    peak, cpu_line, stop = [0], [], threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not stop.wait(0.1):
            try:
                tree = [root, *root.children(recursive=True)]
                peak[0] = max(peak[0], sum(_rss(p) for p in tree))
                cpu_line.append((time.perf_counter(), sum(_cpu(p) for p in tree)))
            except psutil.Error:
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        rc = proc.wait()
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    log.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = {"rc": rc, "wall_s": round(wall, 2), "cpu_s": round(cpu, 3), "rss_mb": peak[0] / 1e6}
    out["cpu_line"] = cpu_line
    if rc != 0:
        out["log_tail"] = (cwd / "tool.log").read_text(errors="replace")[-1500:]
    return out


def _cpu(p: psutil.Process) -> float:
    try:
        t = p.cpu_times()
        return t.user + t.system
    except psutil.Error:
        return 0.0


def cpu_between(line: list[tuple[float, float]], start: float, end: float) -> float | None:
    """The tree's CPU seconds from ``start`` to ``end`` (perf_counter), from the samples
    nearest inside that window; None when fewer than two samples fall in it."""
    inside = [c for t, c in line if start <= t <= end]
    return inside[-1] - inside[0] if len(inside) >= 2 else None


def _rss(p: psutil.Process) -> int:
    try:
        return p.memory_info().rss
    except psutil.Error:
        return 0


def run_case(peer: tools.Peer, case: str, seconds: float, tok: Path, base: Path) -> dict:
    """One tool in one case, against a fresh server: the tool's figures and the truth's."""
    work = Path(tempfile.mkdtemp(prefix=f"{peer.name}-{case}-", dir=base))
    log = work / "truth.jsonl"
    with start_llm_server(truth_log=log, **SERVER) as server:
        plan = tools.Plan(
            case=case,
            url=server.url,
            model=server.models()["data"][0]["id"],
            tokenizer=tok,
            work=work,
            seconds=seconds,
            concurrency={"c16": 16, "c200": 200}.get(case, 0),
            rate=8.0 if case == "rate8" else 0.0,
            output_tokens=SERVER["max_tokens"],
            input_words=32,
        )
        cmd = peer.command(plan)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        env.update(peer.env(plan))
        run = measured(cmd, env, timeout=seconds * 4 + 180, cwd=work)
        time.sleep(0.5)  # the last streams' lines are written just after their last bytes
    t = read_truth(log)
    reqs = truth.ok_requests(t.requests)
    line = run.pop("cpu_line")
    result = {"tool": peer.name, "case": case, "run": run, "truth_requests": len(reqs)}
    if run["rc"] != 0 or not reqs:
        return result
    seen = peer.parse(plan)
    return {**result, **figures(case, seen, reqs, t, run, line)}


def figures(case: str, seen: tools.Seen, reqs: list[dict], t, run: dict, line: list) -> dict:
    """The comparison of what a tool saw against the truth log."""
    tokens = sum(r.get("completion_tokens", len(r["tokens"])) for r in reqs)
    out: dict = {
        "tool_requests": seen.requests,
        "streamed_tokens": tokens,
        "cpu_us_per_token": round(run["cpu_s"] / tokens * 1e6, 1) if tokens else None,
        "rss_mb": round(run["rss_mb"], 1),
    }
    # while streaming: from the first arrival to the last token, the tokens sent in between
    start, end = reqs[0]["arrived"], max(r["tokens"][-1] for r in reqs)
    steady = cpu_between(line, start, end)
    if steady is not None:
        sent = [x for r in t.requests.values() for x in r.get("tokens", []) if start <= x <= end]
        out["cpu_us_per_token_streaming"] = round(steady / len(sent) * 1e6, 1)
    if case == "rate8":
        # every request that arrived, cut or not: a missing one would shift the schedule
        arrivals = [r["arrived"] for r in t.requests.values() if "arrived" in r]
        lag = truth.sched_lag(arrivals, 8.0)
        out["lag_truth_ms"] = {
            "p50": round(truth.quantile(lag, 0.5) * 1e3, 3),
            "p99": round(truth.quantile(lag, 0.99) * 1e3, 3),
            "max": round(max(lag) * 1e3, 3),
        }
        # the lag less its median: the schedule's jitter, apart from a constant offset (a tool
        # whose first request goes out earlier than its schedule's others shifts them all)
        mid = truth.quantile(lag, 0.5)
        out["lag_jitter_p99_ms"] = round(truth.quantile([abs(x - mid) for x in lag], 0.99) * 1e3, 3)
        out["lag_own"] = seen.own_lag
        out["arrival_note"] = seen.note
        return out
    tt = truth.truth_ttfts(reqs)
    if seen.by_id:
        out["ttft_err"] = by_id(seen.by_id, t.requests)
    elif seen.sends:
        sends = seen.sends
        if seen.clock == "epoch":
            sends = [(truth.epoch_to_log(a, t.header), b) for a, b in sends]
        paired, unpaired = truth.pair(sends, reqs)
        out["ttft_err"] = {"how": "paired", **truth.abs_quantiles_ms(paired)}
        out["ttft_err"].update(
            signed_p50=round(truth.quantile(paired, 0.5) * 1e3, 3), unpaired=unpaired
        )
    elif seen.ttfts:
        out["ttft_err"] = {"how": "distribution", **truth.errors_ms(seen.ttfts, tt)}
    elif seen.ttft_ms:
        out["ttft_err"] = {
            "how": "tool's own percentiles",
            **{k: round(v - truth.quantile(tt, q) * 1e3, 3) for (k, q), v in _pq(seen.ttft_ms)},
        }
    gaps = truth.truth_gaps(reqs)
    out["itl"] = {"per_gap": seen.itl_per_gap, "note": seen.note}
    if seen.itls:
        out["itl"].update(
            samples=len(seen.itls), truth_gaps=len(gaps), **truth.errors_ms(seen.itls, gaps)
        )
    elif seen.itl_ms:
        own = {k: round(v - truth.quantile(gaps, q) * 1e3, 3) for (k, q), v in _pq(seen.itl_ms)}
        out["itl"].update(truth_gaps=len(gaps), **own)
    if case == "c200":
        out["server_send_err_ms"] = server_send_error(reqs)
    return out


def by_id(seen: dict, requests: dict) -> dict:
    """TTFT errors of requests paired by id, and their two legs: the send (client's send to the
    server's parse of the last byte) and the receipt (first token's send to the client's read)."""
    errors, send_leg, recv_leg = [], [], []
    for rid, (sent, first) in seen.items():
        r = requests.get(rid)
        if not r or r.get("outcome") != "ok" or not r.get("tokens"):
            continue
        errors.append((first - sent) - (r["tokens"][0] - r["arrived"]))
        send_leg.append(r["arrived"] - sent)
        recv_leg.append(first - r["tokens"][0])
    out = {"how": "paired by X-Request-Id", **truth.abs_quantiles_ms(errors)}
    out["signed_p50"] = round(truth.quantile(errors, 0.5) * 1e3, 3)
    out["send_leg_ms"] = truth.abs_quantiles_ms(send_leg)
    out["receive_leg_ms"] = truth.abs_quantiles_ms(recv_leg)
    out["paired"] = len(errors)
    return out


def _pq(d: dict):
    """A tool's own {"p50": ms, "p99": ms} as ((name, quantile), ms) pairs."""
    return [((k, int(k[1:]) / 100), v) for k, v in d.items() if v is not None]


def server_send_error(reqs: list[dict]) -> dict:
    """How late the server's token sends were against ``arrived + first + i * gap`` (ms): the
    bound of what any client can measure at that load."""
    f, g = SERVER["first_token_ms"] / 1e3, SERVER["token_gap_ms"] / 1e3
    late = [x - (r["arrived"] + f + i * g) for r in reqs for i, x in enumerate(r["tokens"])]
    qs = {"p50": 0.5, "p99": 0.99}
    return {k: round(truth.quantile(late, q) * 1e3, 3) for k, q in qs.items()}


# --- the run -------------------------------------------------------------------------------------


def select(names: str, install: bool) -> tuple[list[tools.Peer], dict]:
    """The peers asked for that are (or, with ``install``, get) installed; the others, with why."""
    chosen, skipped = [], {}
    for name in [n.strip() for n in names.split(",") if n.strip()]:
        peer = tools.PEERS.get(name)
        if peer is None:
            skipped[name] = f"unknown; known: {', '.join(tools.PEERS)}"
            continue
        if not peer.installed() and install:
            print(f"installing {name} into {peer.venv} ...", flush=True)
            try:
                peer.install()
            except subprocess.CalledProcessError as exc:
                skipped[name] = (
                    f"install failed: {shlex.join(map(str, exc.cmd))} exit {exc.returncode}"
                )
                continue
        if not peer.installed():
            how = " && ".join(shlex.join(map(str, c)) for c in peer.install_commands())
            skipped[name] = f"not installed ({peer.exe()}); pass --install, or run: {how}"
            continue
        why = peer.cannot_run()
        if why:
            skipped[name] = why
            continue
        chosen.append(peer)
    return chosen, skipped


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers", default=",".join(tools.PEERS), help="comma-separated tools")
    ap.add_argument("--install", action="store_true", help="install missing peers (GBs)")
    ap.add_argument("--cases", default="c16,rate8,c200", help="c16, rate8, c200 (kfp-bench)")
    ap.add_argument("--seconds", type=float, default=15.0, help="each tool's run (s)")
    ap.add_argument("--out", default=str(tools.ROOT / "bench" / "llm_peers.json"))
    ap.add_argument("--keep", default="", help="keep each run's folder (truth log, outputs) here")
    ap.add_argument("--results", type=Path, default=result_files.RESULTS, help="for BENCHMARKS.md")
    a = ap.parse_args(argv)
    started, commit = result_files.now(), result_files.commit()
    report: dict = {"machine": machine(), "host": host(), "server": SERVER, "results": []}
    peers, skipped = select(a.peers, a.install)
    report["skipped"] = skipped
    for name, why in skipped.items():
        print(f"SKIPPED {name}: {why}", flush=True)
    with tempfile.TemporaryDirectory(prefix="llm-peers-") as tmp:
        if a.keep:
            tmp = a.keep
            Path(tmp).mkdir(parents=True, exist_ok=True)
        tok = truth.build_tokenizer(Path(tmp) / "tokenizer")
        for case in a.cases.split(","):
            for peer in peers:
                if case == "c200" and not peer.name.startswith("kfp-bench"):
                    continue
                print(f"== {peer.name} {case}", flush=True)
                r = run_case(peer, case, a.seconds, tok, Path(tmp))
                print(json.dumps(r), flush=True)
                report["results"].append(r)
    report["installs_mb"] = {p.name: p.size_mb() for p in peers}
    report["versions"] = {p.name: p.version_text() for p in peers}
    report["machine"]["load_average_end"] = list(os.getloadavg())
    report["commands"] = COMMANDS
    report["measured"] = [p.name for p in peers]
    Path(a.out).write_text(json.dumps(report, indent=1))
    print(table(report))
    print(table_c200(report))
    print(f"measured: {', '.join(report['measured']) or 'none'}")
    for name, why in skipped.items():
        print(f"skipped: {name}: {why}")
    if report["results"]:
        print(result_files.save(_result(report, started, commit), a.results))
    return report


MAIN_COLUMNS = [
    "tool", "requests (c16)", "TTFT err p50 / p99 ms (how)", "ITL one sample per gap",
    "ITL p99 err ms", "CPU µs/token (run / streaming)", "peak RSS MB", "lag p99 ms at 8 req/s "
    "(truth)", "own lag p99 ms", "CPU µs/token streaming at 8 req/s", "venv MB",
]  # fmt: skip
C200_COLUMNS = [
    "tool (200 streams)", "requests", "TTFT err p50 / p99 ms (how)", "ITL p99 err ms",
    "server send late p50 / p99 ms", "CPU µs/token (run / streaming)", "peak RSS MB",
]  # fmt: skip


def _by_tool(report: dict) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for r in report["results"]:
        row = rows.setdefault(r["tool"], {})
        if "run" in r and r["run"]["rc"] != 0:
            row[r["case"] + "_failed"] = f"exit {r['run']['rc']}"
        if r["case"] == "c16":
            row.update(
                ttft=r.get("ttft_err"), itl=r.get("itl"), cpu=r.get("cpu_us_per_token"),
                cpu_s=r.get("cpu_us_per_token_streaming"),
                rss=r.get("rss_mb"), n=r.get("truth_requests"),
            )  # fmt: skip
        elif r["case"] == "rate8":
            row.update(
                lag=r.get("lag_truth_ms"), own_lag=r.get("lag_own"),
                cpu8=r.get("cpu_us_per_token_streaming"),
            )  # fmt: skip
        elif r["case"] == "c200":
            row.update(c200=r)
    return rows


def main_rows(report: dict) -> list[list[str]]:
    """One row per tool: c16's figures, rate8's lag and CPU, the tool's install."""
    out = []
    for tool, row in _by_tool(report).items():
        t, i, lag = row.get("ttft") or {}, row.get("itl") or {}, row.get("lag") or {}
        own = (row.get("own_lag") or {}).get("p99")
        fails = " ".join(f"{k}: {v}" for k, v in row.items() if k.endswith("_failed"))
        out.append([
            f"{tool}{' (' + fails + ')' if fails else ''}", _v(row.get("n", "")),
            f"{_v(t.get('p50'))} / {_v(t.get('p99'))} ({t.get('how', '-')})",
            _v(i.get("per_gap", "-")), _v(i.get("p99")),
            f"{_v(row.get('cpu'))} / {_v(row.get('cpu_s'))}", _v(row.get("rss")),
            _v(lag.get("p99")), _v(own), _v(row.get("cpu8")),
            _v(report["installs_mb"].get(tool)),
        ])  # fmt: skip
    return out


def c200_rows(report: dict) -> list[list[str]]:
    """kfp-bench at 200 streams: its errors beside the server's own send error at that load."""
    out = []
    for r in report["results"]:
        if r["case"] != "c200" or "itl" not in r:
            continue
        t, srv = r.get("ttft_err") or {}, r.get("server_send_err_ms") or {}
        out.append([
            r["tool"], _v(r["truth_requests"]),
            f"{_v(t.get('p50'))} / {_v(t.get('p99'))} ({t.get('how', '-')})",
            _v(r["itl"].get("p99")), f"{_v(srv.get('p50'))} / {_v(srv.get('p99'))}",
            f"{_v(r.get('cpu_us_per_token'))} / {_v(r.get('cpu_us_per_token_streaming'))}",
            _v(r.get("rss_mb")),
        ])  # fmt: skip
    return out


def _markdown(columns: list[str], rows: list[list[str]]) -> str:
    head = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(head + ["| " + " | ".join(r) + " |" for r in rows])


def table(report: dict) -> str:
    """The Markdown table of the figures, one row per tool."""
    return _markdown(MAIN_COLUMNS, main_rows(report))


def table_c200(report: dict) -> str:
    return _markdown(C200_COLUMNS, c200_rows(report))


def goals(report: dict) -> list[result_files.Goal]:
    """kfp-bench's figures (the CLI's) against issue 19's targets."""
    row = _by_tool(report).get("kfp-bench", {})
    t, i, lag = row.get("ttft") or {}, row.get("itl") or {}, row.get("lag") or {}
    c200 = row.get("c200") or {}
    cases = [
        ("TTFT error p50 at 16 streams", t.get("p50"), "ms", "ttft_err_p50_ms"),
        ("TTFT error p99 at 16 streams", t.get("p99"), "ms", "ttft_err_p99_ms"),
        ("ITL p99 error at 16 streams", i.get("p99"), "ms", "itl_err_p99_ms"),
        ("ITL p99 error at 200 streams", (c200.get("itl") or {}).get("p99"), "ms",
         "itl_err_p99_ms"),
        ("scheduling lag p99 at 8 req/s (truth)", lag.get("p99"), "ms", "lag_p99_ms"),
        ("CPU per token streaming, 16 streams", row.get("cpu_s"), "µs", "cpu_us_per_token"),
        ("CPU per token streaming, 200 streams", c200.get("cpu_us_per_token_streaming"), "µs",
         "cpu_us_per_token"),
        ("CPU per token streaming, 8 req/s", row.get("cpu8"), "µs", "cpu_us_per_token"),
        ("peak RSS, 16 streams", row.get("rss"), "MB", "rss_mb"),
    ]  # fmt: skip
    return [
        result_files.Goal(
            name,
            f"{_v(x)} {unit}",
            f"|x| <= {TARGETS[key]:g} {unit}" if "err" in key else f"<= {TARGETS[key]:g} {unit}",
            abs(x) <= TARGETS[key],
        )  # fmt: skip
        for name, x, unit, key in cases
        if x is not None
    ]


def _result(report: dict, started: str, commit: str) -> result_files.Result:
    versions = {"kfp-bench": __version__} | {
        k: v for k, v in report["versions"].items() if not k.startswith("kfp-bench")
    }
    return result_files.Result(
        benchmark="llm-peers",
        title="LLM load: kfp-bench llm beside guidellm, inference-perf and vllm bench serve",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=report["host"],
        versions=versions,
        tables=[
            result_files.Table(
                "against `kfp-bench llm-server` (first token 200 ms, a token every 20 ms, 64 "
                "tokens): 16 concurrent streams, and a constant 8 requests/s",
                MAIN_COLUMNS,
                main_rows(report),
            ),
            result_files.Table(
                "200 streams from one process", C200_COLUMNS, c200_rows(report), detail=True
            ),
        ],  # fmt: skip
        goals=goals(report),
    )


def _v(x) -> str:
    return "-" if x is None else f"{x:g}" if isinstance(x, float | int) else str(x)


if __name__ == "__main__":
    main()

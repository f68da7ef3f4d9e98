"""The LLM server's own send-time error: how late its token writes are against their deadlines.

Starts ``kfp-bench llm-server`` (first token 100 ms, then a token every 20 ms) with a truth log,
opens STREAMS streaming completions of TOKENS tokens each from one uvloop process (a client that
only drains the bytes, so that it costs the shared cores as little as it can), their arrivals
spread over SPREAD seconds, and reads each token's lateness from the truth log: its logged send
time (after the write) minus ``arrived + 100 ms + i * 20 ms``. Prints one JSON line with the
percentiles (ms), the median and largest drift (a stream's last token's lateness less its
first's: a sleep per token adds up its overshoots, absolute deadlines do not), the server's CPU
per token (µs) and its RSS (MB), RUNS times, and writes the runs to a results file
(bench/result_files.py) for BENCHMARKS.md. The suite bounds none of these figures: its tests
check that no token is early and that a paused server catches up
(tests/sandbox/test_llm_server.py).

Usage: ``python bench/llm_server_precision.py [STREAMS [TOKENS [SPREAD [RUNS]]]]`` (200 64 0.02 1)
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

import psutil
import result_files
import uvloop
from peers import host

from kfp_bench import __version__
from kfp_bench.sandbox.llm_server import read_truth, start_llm_server

FIRST, GAP = 0.100, 0.020


class _Drain(asyncio.Protocol):
    def __init__(self, request: bytes, done: asyncio.Future) -> None:
        self.request, self.done, self.transport = request, done, None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        if data.endswith(b"0\r\n\r\n"):  # the chunked body's end
            self.transport.close()

    def connection_lost(self, exc) -> None:
        self.done.set_result(None)


async def _streams(port: int, streams: int, tokens: int, spread: float) -> None:
    body = json.dumps({"prompt": "x", "max_tokens": tokens, "stream": True}).encode()
    request = (
        b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    loop = asyncio.get_running_loop()

    async def one(i: int) -> None:
        await asyncio.sleep(i * spread / streams)
        done = loop.create_future()
        await loop.create_connection(lambda: _Drain(request, done), "127.0.0.1", port)
        await done

    await asyncio.gather(*(one(i) for i in range(streams)))


def main(streams: int = 200, tokens: int = 64, spread: float = 0.02) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        truth = Path(tmp) / "truth.jsonl"
        options = dict(first_token_ms=FIRST * 1e3, token_gap_ms=GAP * 1e3)
        with start_llm_server(truth_log=truth, **options) as server:
            proc = psutil.Process(server.pid)
            before = proc.cpu_times()
            uvloop.run(_streams(server.port, streams, tokens, spread))
            after, rss = proc.cpu_times(), proc.memory_info().rss
        records = read_truth(truth).requests.values()
    per_stream = [
        [t - (r["arrived"] + FIRST + i * GAP) for i, t in enumerate(r["tokens"])] for r in records
    ]
    late = sorted(x for stream in per_stream for x in stream)
    drift = sorted(stream[-1] - stream[0] for stream in per_stream)
    n = len(late)
    cpu = after.user + after.system - before.user - before.system
    return {
        "streams": streams,
        "tokens": n,
        "spread_s": spread,
        **{f"p{p}_ms": round(late[min(n - 1, int(n * p / 100))] * 1e3, 3) for p in (50, 90, 99)},
        "max_ms": round(late[-1] * 1e3, 3),
        "min_ms": round(late[0] * 1e3, 3),
        "drift_p50_ms": round(drift[len(drift) // 2] * 1e3, 3),
        "drift_max_ms": round(drift[-1] * 1e3, 3),
        "server_cpu_us_per_token": round(cpu / n * 1e6, 1),
        "server_rss_mb": round(rss / 1e6, 1),
        "load_average_1m": psutil.getloadavg()[0],
    }


def _result(runs: list[dict], started: str, machine: dict, commit: str) -> result_files.Result:
    """The runs as a results file: one row each, lateness and drift in ms."""
    keys = ("p50_ms", "p90_ms", "p99_ms", "max_ms", "min_ms", "drift_p50_ms", "drift_max_ms")
    r = runs[0]
    return result_files.Result(
        benchmark="llm-server",
        title="LLM server: kfp-bench llm-server's own send-time error",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={"kfp-bench": __version__},
        tables=[
            result_files.Table(
                f"{r['streams']} streams, {r['tokens'] // r['streams']} tokens each, arrivals "
                f"spread over {r['spread_s'] * 1e3:g} ms: each token's logged send against "
                f"arrived + {FIRST * 1e3:g} ms + i x {GAP * 1e3:g} ms, ms",
                ["run", "p50", "p90", "p99", "max", "min", "drift p50", "drift max"]
                + ["server CPU µs/token"],
                [
                    [i, *(x[k] for k in keys), x["server_cpu_us_per_token"]]
                    for i, x in enumerate(runs, 1)
                ],  # fmt: skip
            )
        ],
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    started, machine, commit = result_files.now(), host(), result_files.commit()
    given = (int(args[0]), int(args[1]), float(args[2]))[: len(args)] if args else ()
    runs = [main(*given) for _ in range(int(args[3]) if len(args) > 3 else 1)]
    for r in runs:
        print(json.dumps(r))
    print(result_files.save(_result(runs, started, machine, commit)))

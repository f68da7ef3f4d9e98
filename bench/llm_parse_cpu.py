"""The stream client's CPU per content chunk once the bytes are read: the HTTP and SSE parse and
the per-chunk record (``stream._StreamConn.data_received_at``), with no socket and no loop.

One connection is given a response head, then ROUNDS streams of TOKENS content chunks in the
bytes ``kfp-bench llm-server`` writes (one chunk of the chunked encoding per token, a finish
chunk and ``data: [DONE]`` last), one chunk per call as a read brings them when the client keeps
up. Prints one JSON line: µs per content chunk (best and median of REPEATS timings, process CPU
time), which ``bench/llm_scale.py``'s end-to-end figure holds beside the read's syscalls.

Usage: ``.venv/bin/python bench/llm_parse_cpu.py [TOKENS [ROUNDS [REPEATS]]]`` (500 20 7)
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass

from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.stream import StreamAttack

HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"X-Request-Id: x\r\nTransfer-Encoding: chunked\r\n\r\n"
)


@dataclass(frozen=True)
class _Prompt:
    text: str = "a b c"
    output_tokens: int = 16


class _Sink:
    def begin(self, started_at):
        pass

    def add_batch(self, batch):
        pass

    def note_inflight(self, now_sec, inflight):
        pass


def _chunk(doc: dict) -> bytes:
    event = b"data: " + json.dumps(doc, separators=(",", ":")).encode() + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(event), event)


def stream_reads(tokens: int) -> list[bytes]:
    """One stream's reads after its head: a chunk per token, the finish, [DONE], the end."""
    doc = {"id": "cmpl-x", "object": "text_completion", "created": 1, "model": "kfp-bench-llm"}
    reads = []
    for i in range(tokens):
        finish = "length" if i == tokens - 1 else None
        choice = {"index": 0, "text": f" t{i}", "logprobs": None, "finish_reason": finish}
        reads.append(_chunk({**doc, "choices": [choice]}))
    return [*reads, b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"]


class _NoTransport:
    def write(self, data):
        pass

    def is_closing(self):
        return False

    def close(self):
        pass

    def abort(self):
        pass


def main(tokens: int = 500, rounds: int = 20, repeats: int = 7) -> dict:
    opts = LlmOptions(url="http://127.0.0.1:1/openai", model="m", concurrency=1, requests=1)
    attack = StreamAttack(opts, [_Prompt()], _Sink())
    attack.after = lambda conn: None  # no next request: the stream is fed by hand
    reads = stream_reads(tokens)
    conn = attack.conn_class(attack)
    conn.connection_made(_NoTransport())
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        for r in range(rounds):
            attack.inflight = 1
            conn.send(r, None)
            conn.data_received_at(HEAD, 1.0)
            for i, data in enumerate(reads):
                conn.data_received_at(data, 2.0 + i)
            attack.off = 0  # drop the rows: a flush's work is not the read's
            attack.times = type(attack.times)("d")
        times.append((time.process_time() - t0) / (rounds * tokens) * 1e6)
    times.sort()
    return {"tokens": tokens, "rounds": rounds, "us_per_chunk_best": round(times[0], 3),
            "us_per_chunk_median": round(times[len(times) // 2], 3)}  # fmt: skip


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]]
    print(json.dumps(main(*args)))

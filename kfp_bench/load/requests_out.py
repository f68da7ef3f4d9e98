"""``--requests-out FILE.jsonl``: one JSON line per request, written as the load runs.

Each worker process appends its rows at each flush (every 0.2 s, ``engine.FLUSH_EVERY_S``) on the
path its flush log takes (``workers.StatsSink.on_batch``): one ``write(2)`` per batch on a file
opened for appending (``JsonlWriter.write_many``), so the lines of several processes never cut into
each other, and a crash loses at most the last 0.2 s of a process. The lines are built from the
batch the engine hands over anyway: a load without the flag runs no code of this module. The line
formats are the ``load-request`` and ``llm-request`` schemas (``kfp_bench.schemas``); times are
seconds from the attack's start (``intended_s``, ``sent_s``) and the send's wall-clock time
(``sent_at``, epoch s); latencies are milliseconds.
"""

from __future__ import annotations

import bisect
import os
import time
from pathlib import Path

from kfp_bench.jsonl import JsonlWriter
from kfp_bench.load.connection import clock
from kfp_bench.load.openai import request_id
from kfp_bench.load.stages import bounds
from kfp_bench.records import (
    MARK_OUTPUT_TOKENIZED,
    MARK_PROMPT_TOKENIZED,
    STREAM_COLUMNS,
    ResultBatch,
    StreamBatch,
)

_C = {name: i for i, name in enumerate(STREAM_COLUMNS)}


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


class RequestsOut:
    """The per-request log of one load: ``start`` empties the file, ``factory(index)`` gives
    worker ``index`` its ``on_batch`` (in that worker's process), ``close`` closes this
    process's writers and ``discard`` removes a log of a load that never ran. With ``stages``
    each line names its stage; the LLM load's lines say ``"warmup": true`` when sent before
    ``warmup_s`` and name their request's id when they carried kfp-bench's (``ids``).
    """

    def __init__(self, path: str | os.PathLike, *, stages=(), warmup_s=0.0, ids=False):
        self.path = Path(path)
        self.ends = [b["end_s"] for b in bounds(stages)] if stages else None
        self.warmup_s, self.ids = warmup_s, ids
        self._writers: list[JsonlWriter] = []

    def start(self) -> None:
        """Create the file, or empty one left by an earlier load."""
        self.path.write_bytes(b"")

    def discard(self) -> None:
        """Remove the file when no line was written (the load was refused)."""
        if self.path.exists() and not self.path.stat().st_size:
            self.path.unlink()

    def close(self) -> None:
        for w in self._writers:
            w.close()

    def factory(self, index: int):
        """Worker ``index``'s ``on_batch``: a ``ResultBatch`` or ``StreamBatch`` to lines."""
        writer = JsonlWriter(self.path, append=True)
        self._writers.append(writer)
        epoch = time.time() - clock()  # a perf_counter reading to wall-clock time

        def on_batch(batch) -> None:
            lines = _stream_lines if isinstance(batch, StreamBatch) else _load_lines
            writer.write_many(lines(self, batch, index, epoch))

        return on_batch

    def stage(self, offset: float) -> int:
        return min(bisect.bisect_right(self.ends, offset), len(self.ends) - 1)


def _load_lines(log: RequestsOut, batch: ResultBatch, worker: int, epoch: float):
    t0 = batch.t0
    for r in batch.results():
        line = {
            "worker": worker,
            "seq": r.seq,
            "sent_at": round(epoch + t0 + r.sent, 6),
            "intended_s": round(r.intended, 6),
            "sent_s": round(r.sent, 6),
            "latency_ms": _ms(r.latency),
            "status": r.status,
            "ok": r.ok,
            "bytes_in": r.bytes_in,
            "bytes_out": r.bytes_out,
        }
        if r.error:
            line["error"] = r.error
        if r.connect:
            line["connect_ms"] = _ms(r.connect)
        if log.ends is not None:
            line["stage"] = log.stage(r.intended)
        yield line


def _itl(times: tuple) -> dict | None:
    """The request's inter-token gaps: count, mean, p50, p90 and max (ms), or None (< 2 tokens)."""
    gaps = sorted(b - a for a, b in zip(times, times[1:], strict=False))
    if not gaps:
        return None
    n = len(gaps)
    return {
        "n": n,
        "mean": _ms(sum(gaps) / n),
        "p50": _ms(gaps[(n - 1) // 2]),
        "p90": _ms(gaps[max(-(-n * 9 // 10) - 1, 0)]),
        "max": _ms(gaps[-1]),
    }


def _stream_lines(log: RequestsOut, batch: StreamBatch, worker: int, epoch: float):
    t0 = batch.t0
    errors = iter(batch.errors)
    turns = iter(batch.session_turns())
    for i, (row, times) in enumerate(zip(batch.rows(), batch.token_times(), strict=True)):
        sent, first, done = row[_C["sent"]], row[_C["first"]], row[_C["done"]]
        intended = row[_C["intended"]] - t0
        seq, outcome, marks = int(row[_C["seq"]]), int(row[_C["outcome"]]), int(row[_C["marks"]])
        line = {"worker": worker, "seq": seq}
        if log.ids:
            line["request_id"] = request_id(batch.source, seq)
        line.update(
            sent_at=round(epoch + sent, 6),
            intended_s=round(intended, 6),
            sent_s=round(sent - t0, 6),
            status=int(row[_C["status"]]),
            ok=outcome == 0,
        )
        if outcome:
            line["error"] = next(errors)
        line["ttft_ms"] = _ms(first - sent) if first else None
        line["e2e_ms"] = _ms(done - sent)
        line["itl_ms"] = _itl(times)
        tokens = int(row[_C["completion_tokens"]])
        counted = tokens if tokens >= 0 else len(times)  # as stats.llm's TPOT
        if outcome == 0 and counted >= 2 and len(times) >= 2:
            line["tpot_ms"] = _ms((times[-1] - first) / (counted - 1))
        prompt = int(row[_C["prompt_tokens"]])
        line["input_tokens"] = prompt if prompt >= 0 else None
        line["output_tokens"] = tokens if tokens >= 0 else None
        if marks & (MARK_PROMPT_TOKENIZED | MARK_OUTPUT_TOKENIZED):
            line["tokenized"] = True  # counted by --tokenizer: the server sent no usage
        if (cached := int(row[_C["cached_tokens"]])) >= 0:
            line["cached_tokens"] = cached
        line["content_chunks"] = int(row[_C["content_chunks"]])
        line["bytes_in"] = int(row[_C["bytes_in"]])
        line["bytes_out"] = int(batch.request_bytes[i])
        if log.ends is not None:
            line["stage"] = log.stage(intended)
        if batch.turns:
            line["session"], line["turn"] = (int(x) for x in next(turns))
        if sent - t0 < log.warmup_s:
            line["warmup"] = True
        yield line

"""kfp-bench's streaming engine with its per-request rows kept: the run ``kfp-bench llm`` makes
with one worker process (``load.workers.run_stream``, the same ``StreamAttack``), but the sink
keeps each ``StreamBatch`` row instead of aggregating it, and writes them as JSON lines.

Each row's ``id`` is the ``X-Request-Id`` kfp-bench sent (``openai.request_id``), which the LLM
server's truth log records: ``bench/llm_peers.py`` pairs kfp-bench's requests with the truth by
id, exactly, and splits the TTFT error into its two legs (send to arrival, first token's send to
its receipt).

Usage: ``python bench/llm_kfp_rows.py URL MODEL CONCURRENCY RATE SECONDS OUT.jsonl``
(RATE 0: closed loop at CONCURRENCY)
"""

from __future__ import annotations

import json
import sys

from kfp_bench.load import prompts as prompt_source
from kfp_bench.load.openai import LlmOptions, request_id
from kfp_bench.load.workers import run_stream
from kfp_bench.records import STREAM_COLUMNS


class RowSink:
    """A sink (``connection.Sink``) that keeps the rows: (id, intended, sent, written, first, done,
    outcome, content_chunks)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def begin(self, started_at: float) -> None:
        self.started_at = started_at

    def add_batch(self, batch) -> None:
        col = {name: i for i, name in enumerate(STREAM_COLUMNS)}
        keep = ("intended", "sent", "written", "first", "done", "outcome", "content_chunks")
        for row in batch.rows():
            out = {"id": request_id(batch.source, int(row[col["seq"]]))}
            out.update({k: row[col[k]] for k in keep})
            self.rows.append(out)

    def note_inflight(self, now_sec: int, inflight: int) -> None:
        pass

    def progress(self) -> tuple[int, int]:
        return len(self.rows), 0


def main(url: str, model: str, concurrency: int, rate: float, seconds: float, out: str) -> None:
    opts = LlmOptions(
        url=url, model=model, concurrency=concurrency, rate=rate, duration=seconds,
        max_tokens=64, ignore_eos=True,
    ).validate()  # fmt: skip
    prompts = prompt_source.synthetic(
        256, prompt_source.Dist.parse("fixed:32"), prompt_source.Dist.parse("fixed:64"), 0
    )
    sink = RowSink()
    run_stream(opts, prompts, lambda i: sink)
    with open(out, "w") as f:
        for row in sink.rows:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], int(a[2]), float(a[3]), float(a[4]), a[5])

"""``Tee``: an ``LlmSink`` that also keeps its batches, so a test can pair each row with the LLM
server's truth log (one process)."""

from __future__ import annotations

from kfp_bench.load.llm import LlmSink


class Tee(LlmSink):
    def __init__(self, stats):
        super().__init__(stats)
        self.batches = []

    def add_batch(self, batch) -> None:
        super().add_batch(batch)
        self.batches.append(batch)

"""The streaming LLM load end to end: options and prompts in, one merged ``LlmStats`` out.

``run_llm`` is to ``workers.run_stream`` what ``workers.run_load`` is to the plain attack: each
worker process aggregates its own ``StreamBatch``es (``LlmSink``) and ``workers.merge_reported``
merges them. A load in which no measured stream completed is flagged ``none-completed`` (its
errors are the measurement, but no token timing stands): ``kfp_bench.outcome``, exit 1.
"""

from __future__ import annotations

from collections.abc import Callable

from kfp_bench.errors import EngineError
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.stages import bounds
from kfp_bench.load.workers import StatsSink, check_engine, merge_reported, run_stream
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.slo import Slo
from kfp_bench.stats.stages import LLM_METRICS, LLM_SUMS, StageStats
from kfp_bench.stats.turns import TurnStats

NONE_COMPLETED = "none-completed"


class LlmSink(StatsSink):
    """The ``StatsSink`` of a streaming attack, into an ``LlmStats``. With ``keep`` it also keeps
    every batch (``batches``), for a caller in this process that pairs the rows with a server's
    log."""

    def __init__(self, stats: LlmStats, keep: bool = False, on_batch=None):
        super().__init__(stats, on_batch, corrected=stats.corrected)
        self.batches: list | None = [] if keep else None

    def add_batch(self, batch) -> None:
        super().add_batch(batch)
        if self.batches is not None:
            self.batches.append(batch)

    def note_inflight(self, now_sec: int, inflight: int) -> None:
        """Nothing: the per-second series counts in-flight requests from the rows' times."""

    def progress(self) -> tuple[int, int]:
        """(requests, failed) so far, warm-up included."""
        c = self.stats.counts
        return c["requests"] + c["warmup"], c["requests"] - c["completed"]


def run_llm(
    opts: LlmOptions,
    prompts: list,
    *,
    slo: Slo | None = None,
    warmup_s: float = 0.0,
    on_progress: Callable[[int, int], None] | None = None,
    on_batch_factory: Callable[[int], Callable] | None = None,
) -> LlmStats:
    """Stream ``prompts`` (objects with ``.text`` and ``.output_tokens``, cycled) as ``opts``
    says and return the merged stats; requests sent in the first ``warmup_s`` count nowhere
    but in the warm-up count. ``on_batch_factory``, as ``workers.run_load``'s: given a worker
    index, a callable that receives that worker's ``StreamBatch``es in its process.

    Raises:
        EngineError: a bug in the engine ended the attack; its ``stats`` are what was measured
            up to it.
    """

    def new_sink(index: int) -> LlmSink:
        stats = LlmStats(corrected=opts.open_loop, warmup_s=warmup_s, slo=slo or Slo())
        if opts.stages:  # per-stage figures
            stats.stages = StageStats(bounds(opts.stages), LLM_METRICS, LLM_SUMS)
        stats.turns = TurnStats(opts.turns) if opts.turns else None  # per-turn figures
        return LlmSink(stats, on_batch=on_batch_factory(index) if on_batch_factory else None)

    try:
        out = run_stream(opts, prompts, new_sink, on_progress)
    except EngineError as exc:
        out = exc.stats
    stats = merge_reported(opts, out, lambda: LlmStats(corrected=opts.open_loop))
    if not stats.counts["completed"]:  # every stream failed, or none was measured
        stats.flag(NONE_COMPLETED)
    if opts.insecure:
        stats.flag("insecure")
    check_engine(stats, "mid-stream")
    return stats

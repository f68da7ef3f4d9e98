"""Saved LLM results of two pods, built from hand-made StreamBatch records with exact times
(tests/stats/streams.py) and saved with ``LlmStats.to_dict``, for the report and merge tests."""

from __future__ import annotations

from pathlib import Path

from kfp_bench.stats import store
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.slo import Slo
from tests.stats.streams import STARTED_AT, T0, batch, stream

SLO = "ttft=250ms,itl=40ms"


def pod(index: int, *, slo: str = SLO) -> LlmStats:
    """One pod's stats: ten streams of five chunks, TTFT
    100 to 190 ms and gaps 20 to 29 ms, one with more usage tokens than
    chunks, one without usage, one failed with no content, one reset mid-stream."""
    s = LlmStats(
        corrected=True, warmup_s=0.1, slo=Slo.parse(slo), started_at=STARTED_AT + index * 0.5
    )
    streams = [
        stream(0.0, [0.2, 0.3], 0.35),  # warm-up
        *[
            stream(
                0.5 + k * 0.3,
                [0.6 + k * 0.31 + j * (0.02 + k * 0.001) for j in range(5)],
                0.9 + k * 0.3,
                intended=0.498 + k * 0.3,
            )
            for k in range(10)
        ],  # fmt: skip
        stream(1.0, [1.1, 1.15], 1.2, usage=5),
        stream(1.3, [1.5], 1.6, usage=-1),
        stream(1.4, [], 1.45, outcome=1, status=429, usage=-1, error="HTTP 429"),
        stream(2.0, [2.1, 2.3], 2.35, outcome=1, error="connection reset mid-stream"),
    ]
    s.add_batch(batch(*streams, t0=T0 + index * 7.0, source=f"pod{index}"))
    return s.close(4.0 + index)


def save_pods(d: Path, n: int = 2, **kw) -> list[Path]:
    """``n`` pods' results files in ``d``: pod0.json, pod1.json, ..."""
    d.mkdir(parents=True, exist_ok=True)
    return [store.save(pod(i, **kw), d / f"pod{i}.json") for i in range(n)]


def merged(n: int = 2) -> LlmStats:
    """What one aggregator makes of the ``n`` pods: ``LlmStats.merge``."""
    out = pod(0)
    for i in range(1, n):
        out.merge(pod(i))
    return out

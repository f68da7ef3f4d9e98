"""The LLM load's text summary, against a golden file (refresh with KFP_BENCH_UPDATE_GOLDEN=1).

The stats are built from hand-made StreamBatch records with exact times (tests/stats/streams.py).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from kfp_bench.report import llm_text
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.slo import Slo
from tests.stats.streams import STARTED_AT, batch, stream

GOLDEN = Path(__file__).parent / "golden" / "llm.txt"
# Read at import: the autouse clean_env fixture removes KFP_BENCH_* variables from the tests.
UPDATE = os.environ.get("KFP_BENCH_UPDATE_GOLDEN") == "1"


def _stats(corrected: bool) -> LlmStats:
    s = LlmStats(
        corrected=corrected,
        warmup_s=0.1,
        slo=Slo.parse("ttft=250ms,itl=40ms"),
        started_at=STARTED_AT,
    )
    s.add_batch(
        batch(
            stream(0.0, [0.2, 0.3], 0.35),  # warm-up
            stream(0.5, [0.7, 0.72, 0.75, 0.76], 0.8, intended=0.498),
            stream(1.0, [1.1, 1.15], 1.2, usage=5),
            stream(1.2, [], 1.25, outcome=1, status=0, usage=-1, error="connection reset"),
            stream(1.3, [1.5], 1.6, usage=-1),
            stream(1.4, [], 1.45, outcome=1, status=429, usage=-1, error="HTTP 429"),
        )
    )
    return s.close(2.1)


def _text(corrected: bool) -> str:
    out = io.StringIO()
    llm_text.write_text(_stats(corrected), out)
    return out.getvalue()


def test_text_golden():
    text = _text(corrected=True)
    if UPDATE or not GOLDEN.exists():
        GOLDEN.write_text(text)
        if not UPDATE:
            pytest.fail(f"{GOLDEN} did not exist: written; check it and commit it")
    assert text == GOLDEN.read_text(), "llm.txt changed; refresh with KFP_BENCH_UPDATE_GOLDEN=1"


def test_closed_loop_leaves_out_the_rows_equal_to_the_send_times():
    text = _text(corrected=False)
    assert "TTFT:\t3\t" in text and "ITL (per chunk):\t4\t" in text
    assert "from intended" not in text and "Sched. lag" not in text


def test_warnings_and_counts_are_in_the_notes():
    notes = _text(corrected=True).partition("Notes:")[2]
    assert "usage-mismatch: completed streams whose usage was missing" in notes
    assert "multi-token-chunks:" in notes
    assert "1 completed without usage, 0 with fewer tokens" in notes
    assert "1 requests sent in the warm-up, not counted" in notes

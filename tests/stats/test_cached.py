"""The usage's cached tokens in LlmStats (``stats.cached``): vLLM leaves the field out when 0,
so a run's rows without it count 0 once any row had it, and unknown (None, never 0) when none
did; a tokenizer's prompt count is no usage; merges and saved results keep every count."""

import json

from kfp_bench.records import MARK_PROMPT_TOKENIZED
from kfp_bench.stats.llm import LlmStats
from tests.stats.streams import batch, stream
from tests.stats.test_llm_stats import _stats

CHUNKS = [0.1, 0.2]


def test_rows_without_details_count_0_once_the_server_said_any():
    s = _stats(stream(0, CHUNKS, 0.3, prompt=40, cached=32),
               stream(0, CHUNKS, 0.3, prompt=40),  # a miss: vLLM says nothing
               stream(0, CHUNKS, 0.3, prompt=20, usage=-1),  # no usage: not counted
               stream(0, CHUNKS, 0.3, prompt=30, marks=MARK_PROMPT_TOKENIZED))  # fmt: skip
    c = s.summary().cached
    assert (c["cached_tokens"], c["prompt_tokens"], c["hit_rate"]) == (32, 80, 0.4)
    assert (c["requests"], c["reported"], c["sessions"]) == (2, 1, None)


def test_no_details_at_all_is_unknown_never_0():
    c = _stats(stream(0, CHUNKS, 0.3, prompt=40), stream(0, CHUNKS, 0.3, prompt=40)).summary()
    assert (c.cached["cached_tokens"], c.cached["hit_rate"]) == (None, None)
    assert c.cached["prompt_tokens"] == 80


def test_merged_halves_and_saved_results_keep_the_counts():
    rows = [stream(0, CHUNKS, 0.3, prompt=16 * k, cached=16 * (k - 1)) for k in range(1, 5)]
    whole = _stats(*rows)
    halves = [_stats(*rows[:2]), _stats(*rows[2:])]
    halves[0].merge(halves[1])
    assert halves[0].summary().cached == whole.summary().cached
    again = LlmStats.from_dict(json.loads(json.dumps(whole.to_dict())))
    assert again.summary().cached == whole.summary().cached
    doc = whole.to_dict()
    del doc["cached"]  # saved before the cached tokens were read
    assert LlmStats.from_dict(doc).summary().cached["cached_tokens"] is None


def test_per_session_each_sessions_own_ratio():
    b = batch(stream(0, CHUNKS, 0.3, prompt=40, cached=0), stream(0, CHUNKS, 0.3, prompt=80,
              cached=32), stream(0, CHUNKS, 0.3, prompt=40, cached=16))  # fmt: skip
    b.turns.extend([0, 1, 0, 2, 1, 1])  # (session, turn) of each row
    s = LlmStats()
    s.add_batch(b)
    sessions = s.summary().cached["sessions"]
    assert sessions == {"count": 2, "min": 32 / 120, "p50": (32 / 120 + 0.4) / 2,
                        "mean": (32 / 120 + 0.4) / 2, "max": 0.4}  # fmt: skip

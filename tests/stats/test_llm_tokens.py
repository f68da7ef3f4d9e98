"""Where LlmStats' token counts come from: the server's usage, else the tokenizer's count (the
rows' ``marks`` say so), else unknown (None in the summary, the JSON and the metrics, "unknown" in
text, never 0), and the completed streams that ended without [DONE]."""

import io
import json

from kfp_bench import gates, outcome
from kfp_bench.records import MARK_NO_DONE, MARK_OUTPUT_TOKENIZED, MARK_PROMPT_TOKENIZED
from kfp_bench.report.llm_text import write_text
from kfp_bench.stats.llm import LlmStats, metric_values
from tests.stats.streams import stream
from tests.stats.test_llm_stats import _stats, near

TOKENIZED = MARK_PROMPT_TOKENIZED | MARK_OUTPUT_TOKENIZED
#: KServe huggingfaceserver's word chunks: 4 chunks of 6 tokens, no usage (-1 both).
WORDS = [0.2, 0.3, 0.4, 0.5]


def _text(s) -> str:
    out = io.StringIO()
    write_text(s, out)
    return out.getvalue()


def test_without_usage_or_a_tokenizer_the_tokens_are_unknown_never_zero():
    s = _stats(stream(0.0, WORDS, 0.6, usage=-1), stream(0.0, [0.1, 0.2], 0.3, usage=2))
    summary = s.summary()
    assert (summary.output_tokens, summary.input_tokens) == (None, None)
    assert (summary.output_tokens_per_s, summary.input_tokens_per_s) == (None, None)
    assert "tokens-unknown" in s.flags and outcome.exit_code(s.flags) == outcome.EXIT_OK
    doc = json.loads(json.dumps(s.to_dict()))
    assert doc["summary"]["output_tokens"] is None and doc["summary"]["input_tokens"] is None
    m = metric_values(summary)
    assert m["output_tokens_per_s"] is None and m["input_tokens_per_s"] is None
    (verdict,) = gates.evaluate(gates.parse("output_tokens_per_s>1"), m)
    assert verdict.state == "not measured" and verdict.broken
    text = _text(s)
    assert "Output tokens:\tunknown\n" in text and "Input tokens:\tunknown\n" in text
    assert "pass --tokenizer" in text
    # TPOT falls back on the content chunks, and the note says so: (0.5 - 0.2) / 3
    assert summary.latency_ms["tpot"]["max"] == near(100.0)
    assert "their TPOT divides by content chunks" in text


def test_the_tokenizers_counts_stand_in_for_usage_and_say_so():
    s = _stats(
        stream(0.0, WORDS, 0.6, usage=6, prompt=3, marks=TOKENIZED),
        stream(0.0, [0.1, 0.2], 0.3, usage=2, prompt=5),  # with usage
    )
    summary = s.summary()
    assert (summary.output_tokens, summary.input_tokens) == (8, 8)
    assert summary.tokens["tokenized_output"] == summary.tokens["tokenized_input"] == 1
    assert summary.usage == {"missing": 1, "fewer": 0, "more": 1}
    assert s.flags == ["multi-token-chunks", "tokens-from-tokenizer"]  # not usage-mismatch
    assert summary.latency_ms["tpot"]["min"] == near(60.0)  # (0.5 - 0.2) / (6 - 1)
    text = _text(s)
    assert "ITL (per chunk):" in text and "counted by the tokenizer" in text


def test_a_failed_stream_without_usage_counts_its_chunks_and_the_note_says_so():
    s = _stats(
        stream(0.0, [0.1, 0.2], 0.3, usage=2, prompt=5),
        stream(0.0, [0.1, 0.2, 0.3], 0.35, outcome=1, usage=-1),  # reset before usage
    )
    summary = s.summary()
    assert (summary.output_tokens, summary.input_tokens) == (5, 5)
    assert summary.tokens["chunk_counted_failed"] == 1 and "tokens-unknown" not in s.flags
    assert "output of 1 failed requests is their content chunks" in _text(s)


def test_streams_without_done_are_counted_and_flagged():
    s = _stats(stream(0.0, [0.1, 0.2], 0.3, marks=MARK_NO_DONE), stream(0.0, [0.1], 0.2))
    assert s.summary().no_done == 1 and s.summary().completed == 2
    assert "no-done-marker" in s.flags and outcome.exit_code(s.flags) == outcome.EXIT_OK
    assert "1 completed streams ended without data: [DONE]" in _text(s)


def test_results_saved_before_the_provenance_counts_read_as_unknown_where_usage_was_missing():
    doc = _stats(stream(0.0, WORDS, 0.6, usage=-1)).to_dict(summary=False)
    for k in ("tokenized_output", "tokenized_input", "chunk_counted", "chunk_counted_failed",
              "input_unknown", "no_done"):  # fmt: skip
        del doc["counts"][k]
    doc["flags"] = ["usage-mismatch"]
    back = LlmStats.from_dict(doc)
    assert back.summary().output_tokens is None and "tokens-unknown" in back.flags

"""LlmStats: each metric against hand-computed values from StreamBatch records with exact times,
warm-up, goodput under SLOs, usage checks, exact merging and the results document."""

import json

import pytest

from kfp_bench import outcome
from kfp_bench.errors import ConfigError, ResultsError
from kfp_bench.stats.llm import LlmStats, metric_values
from kfp_bench.stats.slo import Slo
from tests.stats.streams import STARTED_AT, T0, batch, stream

# Four requests: a (4 chunks, gaps 20, 30, 10 ms), b (2 chunks, gap 50 ms), c failed before any
# content, d (1 chunk). Every content stream also had a role chunk (chunks = content + 1).
A = stream(0.0, [0.200, 0.220, 0.250, 0.260], 0.300, prompt=10)
B = stream(0.5, [0.600, 0.650], 0.700, prompt=5)
C = stream(1.0, [], 1.050, outcome=1, status=0, usage=-1, error="connection reset")
D = stream(1.1, [1.300], 1.400, prompt=7)


def _stats(*streams, slo="", warmup_s=0.0, corrected=False, duration=2.0, t0=T0):
    s = LlmStats(corrected=corrected, warmup_s=warmup_s, slo=Slo.parse(slo), started_at=STARTED_AT)
    s.add_batch(batch(*streams, t0=t0))
    return s.close(duration)


def near(ms):
    """An HDR figure: within the histogram's 3 significant digits of ``ms``."""
    return pytest.approx(ms, rel=1e-3)


def _ms(stats, name):
    return stats.summary().latency_ms[name]


def test_ttft_is_to_the_first_content_chunk_not_the_head_or_role_chunk():
    s = _stats(A, B, C, D)
    ttft = _ms(s, "ttft")
    assert ttft["count"] == 3  # c had no content chunk
    assert ttft["min"] == near(100.0)  # b: 0.6 - 0.5
    assert ttft["max"] == near(200.0)  # a and d; their heads came at 1 ms
    assert _ms(s, "ttft_intended") == ttft  # closed loop: intended == sent


def test_itl_is_one_sample_per_gap_pooled_over_requests():
    itl = _ms(_stats(A, B, C, D), "itl")
    assert itl["count"] == 4  # a's three gaps and b's one; d's single chunk has none
    assert (itl["min"], itl["max"]) == (near(10.0), near(50.0))
    # Pooled gaps 10, 20, 30, 50: the median is a gap (20), not the mean of per-request means.
    assert itl["p50"] == near(20.0)
    assert itl["mean"] == near(27.5)


def test_tpot_excludes_the_first_token_and_uses_usages_count():
    tpot = _ms(_stats(A, B, C, D), "tpot")
    assert tpot["count"] == 2  # d has one token, c none
    assert tpot["min"] == near(20.0)  # a: (0.260 - 0.200) / 3
    assert tpot["max"] == near(50.0)  # b: (0.650 - 0.600) / 1
    # Six tokens in a's four chunks: (0.260 - 0.200) / 5 = 12 ms.
    multi = _ms(_stats(stream(0.0, [0.200, 0.220, 0.250, 0.260], 0.300, usage=6)), "tpot")
    assert multi["max"] == near(12.0)


def test_e2e_tokens_rates_statuses_and_errors():
    s = _stats(A, B, C, D)
    e2e, sm = _ms(s, "e2e"), s.summary()
    assert e2e["count"] == 4  # the failed request too, to its failure
    assert e2e["min"] == near(50.0) and e2e["max"] == near(300.0)
    assert (sm.requests, sm.completed, sm.failed, sm.no_content) == (4, 3, 1, 1)
    assert (sm.output_tokens, sm.input_tokens) == (7, 22)  # c sent no usage: its prompt unknown
    assert sm.output_tokens_per_s == 3.5 and sm.input_tokens_per_s == 11.0 and sm.rps == 2.0
    assert sm.status_codes == {200: 3} and sm.errors == {"connection reset": 1}
    assert s.counts["chunks"] == 7 + 4 and s.counts["bytes_out"] == 1200
    assert _ms(s, "lag")["max"] == 0.0


def test_open_loop_measures_from_the_intended_send_and_the_lag():
    s = _stats(stream(0.005, [0.205, 0.225], 0.300, intended=0.0), corrected=True)
    assert _ms(s, "ttft")["max"] == near(200.0)
    assert _ms(s, "ttft_intended")["max"] == near(205.0)
    assert _ms(s, "e2e_intended")["max"] == near(300.0)
    assert _ms(s, "lag")["max"] == near(5.0)


def test_warmup_requests_count_nowhere_but_in_warmup():
    s = _stats(A, B, C, D, warmup_s=1.0, duration=3.0)
    sm = s.summary()
    assert sm.warmup_excluded == 2 and sm.requests == 2  # a and b were sent before 1 s
    assert _ms(s, "itl")["count"] == 0  # d's is a single chunk; a's and b's gaps are gone
    assert _ms(s, "ttft")["count"] == 1 and sm.errors == {"connection reset": 1}
    assert sm.measured_s == 2.0 and sm.output_tokens_per_s == 0.5 and sm.rps == 1.0
    assert sum(r["chunks"] for r in s.series.rows()) == 1


def test_the_per_second_series():
    rows = _stats(A, B, C, D).series.rows()
    assert [r["t"] for r in rows] == [STARTED_AT, STARTED_AT + 1]
    first, second = rows
    assert (first["requests"], first["failures"], first["output_tokens"]) == (2, 0, 6)
    assert (second["requests"], second["failures"], second["output_tokens"]) == (2, 1, 1)
    assert (first["chunks"], second["chunks"]) == (6, 1)
    # In flight: a 0.3 s and b 0.2 s in the first second; c 0.05 s and d 0.3 s in the second.
    assert (first["inflight_us"], second["inflight_us"]) == (500_000, 350_000)


def test_a_stream_across_seconds_is_in_flight_in_each():
    rows = _stats(stream(0.5, [0.9, 1.2], 2.25)).series.rows()
    assert [r["inflight_us"] for r in rows] == [500_000, 1_000_000, 250_000]
    assert [r["chunks"] for r in rows] == [1, 1, 0] and rows[2]["requests"] == 1


def test_usage_checks_count_both_ways_and_only_warn():
    s = _stats(
        stream(0.0, [0.1, 0.2, 0.3], 0.4, usage=-1),  # completed without usage
        stream(0.0, [0.1, 0.2, 0.3], 0.4, usage=2),  # usage says fewer than the chunks
        stream(0.0, [0.1, 0.2], 0.4, usage=5),  # several tokens a chunk
        stream(0.0, [0.1], 0.4, outcome=1, usage=-1),  # failed: no usage is expected
    )
    assert s.summary().usage == {"missing": 1, "fewer": 1, "more": 1}
    assert s.flags == ["multi-token-chunks", "tokens-unknown", "usage-mismatch"]
    assert outcome.exit_code(s.flags) == outcome.EXIT_OK
    assert [w.split(":")[0] for w in outcome.describe_warnings(s.flags)] == s.flags
    m = metric_values(s.summary())
    assert (m["usage_mismatch_requests"], m["multi_token_chunk_requests"]) == (2, 1)
    assert s.counts["output_tokens"] == 3 + 2 + 5 + 1  # usage, else the chunks


def test_agreeing_usage_raises_no_flag():
    assert _stats(A, B, C, D).flags == []


def test_goodput_counts_completed_requests_within_every_slo():
    def good(slo):
        return _stats(A, B, C, D, slo=slo).summary().good

    assert good("") == 3  # every completed request; c failed
    assert good("ttft=150ms") == 1  # b
    assert good("itl=25ms") == 1  # a's largest gap is 30 ms, b's 50; d has none
    assert good("tpot=30ms") == 2  # a (20 ms) and d (no TPOT); b's is 50
    assert good("e2e=250ms") == 1  # b
    assert good("ttft=250ms,itl=40ms") == 2  # a (largest gap 30) and d; b.s gap of 50 misses
    s = _stats(A, B, C, D, slo="ttft=150ms").summary()
    assert s.goodput_rps == 0.5 and s.good_ratio == 0.25


@pytest.mark.parametrize(
    "text, want",
    [
        ("ttft=500ms,itl=50ms", Slo(ttft=500_000, itl=50_000)),
        ("ttft=500ms,itl=50ms,tpot=30ms,e2e=5s", Slo(500_000, 50_000, 30_000, 5_000_000)),
        (" tpot = 1.5ms ", Slo(tpot=1_500)),
        ("e2e=250us", Slo(e2e=250)),
        ("", Slo()),
    ],
)
def test_slo_parses_and_prints_back(text, want):
    assert Slo.parse(text) == want
    assert Slo.parse(str(want)) == want


@pytest.mark.parametrize(
    "text, match",
    [
        ("ttfb=500ms", "unknown key 'ttfb'"),
        ("ttft", "'ttft' is not key=value"),
        ("ttft=500", "'500' is not a positive time with a unit"),
        ("ttft=fast", "is not a positive time"),
        ("ttft=0ms", "is not a positive time"),
        ("ttft=-5ms", "is not a positive time"),
        ("itl=5ms,itl=6ms", "itl is given twice"),
    ],
)
def test_a_bad_slo_is_one_config_error_naming_the_text(text, match):
    with pytest.raises(ConfigError, match=match) as err:
        Slo.parse(text)
    assert f"--slo {text!r}" in str(err.value)


def test_merge_equals_one_aggregator_fed_every_batch():
    pod_a = batch(A, B, t0=T0)
    pod_b = batch(C, D, stream(0.2, [0.4, 0.41], 0.5), t0=5_000.0, source="w1")
    whole = LlmStats(slo=Slo.parse("ttft=150ms"), started_at=STARTED_AT)
    for b in (pod_a, pod_b):
        whole.add_batch(b)
    whole.close(2.0)
    parts = []
    for b, dur in ((pod_a, 1.0), (pod_b, 2.0)):
        s = LlmStats(slo=Slo.parse("ttft=150ms"), started_at=STARTED_AT)
        s.add_batch(b)
        parts.append(s.close(dur))
    parts[0].merge(parts[1])
    merged, one = parts[0].to_dict(), whole.to_dict()
    assert merged.pop("workers")["reported"] == 2 and one.pop("workers")["reported"] == 1
    assert merged == one
    assert merged["summary"]["latency_ms"]["itl"]["count"] == 5


def test_merge_refuses_other_settings():
    with pytest.raises(ResultsError, match="different settings"):
        _stats(A).merge(_stats(B, slo="ttft=1s"))


def test_json_round_trip_and_merge_after_it():
    s = _stats(A, B, C, D, slo="ttft=150ms,e2e=5s", corrected=True)
    doc = json.loads(json.dumps(s.to_dict()))
    assert (doc["kind"], doc["format_version"]) == ("llm", 1)
    back = LlmStats.from_dict(doc)
    assert back.to_dict() == doc
    back.merge(LlmStats.from_dict(doc))
    assert back.summary().requests == 8 and back.summary().good == 2
    lean = s.to_dict(summary=False)  # what a worker appends at each flush
    assert "summary" not in lean and LlmStats.from_dict(lean).to_dict() == doc


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda d: d.update(format="kfp-bench/load"), "not a kfp-bench LLM result"),
        (lambda d: d.pop("kind"), "not a kfp-bench LLM result"),
        (lambda d: d.update(format_version=2), "format version 2"),
        (lambda d: d["counts"].pop("good"), "malformed LLM result"),
        (lambda d: d.update(slo="ttfb=1s"), "malformed LLM result"),
        (lambda d: d["histogram"].update(itl="!!"), "cannot decode"),
    ],
)
def test_bad_documents_are_refused(mutate, match):
    doc = _stats(A).to_dict()
    mutate(doc)
    with pytest.raises(ResultsError, match=match):
        LlmStats.from_dict(doc)


def test_out_of_range_samples_are_counted():
    s = _stats(stream(0.0, [0.1], 4000.0))  # a stream of over an hour
    assert s.summary().out_of_range["e2e"] == 1 and _ms(s, "e2e")["count"] == 0
    assert s.summary().requests == 1


def test_a_batch_whose_times_disagree_with_its_chunk_counts_is_refused():
    b = batch(A)
    b.times.pop()
    with pytest.raises(ResultsError, match="3 chunk times for 4 content chunks"):
        LlmStats().add_batch(b)


def test_metric_names_are_stable_and_empty_histograms_left_out():
    m = metric_values(_stats(A, B, C, D, slo="ttft=150ms").summary())
    assert m["ttft_p50_ms"] == near(200.0)
    assert m["itl_p99_ms"] == near(50.0)
    assert (m["output_tokens_per_s"], m["goodput_rps"], m["llm_requests"]) == (3.5, 0.5, 4)
    assert m.pop("cached_hit_rate") is None  # the usage said no cached tokens: unknown
    assert all(isinstance(v, int | float) for v in m.values())
    empty = metric_values(LlmStats().close(1.0).summary())
    assert "ttft_p50_ms" not in empty and "goodput_rps" not in empty

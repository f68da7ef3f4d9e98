"""``llm --find-max``: the SLO search against the local LLM server with a fixed number of decode
slots, whose capacity is computed here from its settings, and its bisection on a made-up probe."""

from __future__ import annotations

import pytest

from kfp_bench.load import llm_find
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.prompts import Dist, synthetic
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.stats import store
from kfp_bench.stats.slo import Slo

# Generous token times: the capacity is set by the server's slots and times, not by the
# client's CPU (a probe at capacity is 18 streams a second of 8 tokens), with both cores busy.
SLOTS, FIRST_MS, GAP_MS, TOKENS = 4, 50.0, 25.0, 8
#: Each request holds a slot this long, so the server serves SLOTS / SERVICE_S requests/s.
SERVICE_S = (FIRST_MS + (TOKENS - 1) * GAP_MS) / 1000
#: A queued request waits a slot's service (225 ms): well past TTFT 150 ms; a served one 50 ms.
SLO = Slo.parse("ttft=150ms")


@pytest.fixture(scope="module")
def llm():
    with start_llm_server(
        slots=SLOTS, first_token_ms=FIRST_MS, token_gap_ms=GAP_MS, max_tokens=TOKENS
    ) as server:
        yield server


def _search(llm, by: str, start: float, limit: float, step_s: float):
    opts = LlmOptions(url=llm.url, model="kfp-bench-llm", timeout=30.0).validate()
    prompts = synthetic(8, Dist.parse("fixed:8"), Dist.parse(f"fixed:{TOKENS}"), 0)
    return llm_find.find_max(
        opts, prompts, by=by, slo=SLO, step_s=step_s, start=start, limit=limit, share=0.9
    )


@pytest.mark.slow
@pytest.mark.timing
def test_the_rate_found_is_within_10_percent_of_the_slots_capacity(llm, tmp_path):
    """Open loop at a constant rate: below SLOTS / SERVICE_S (17.8/s) no request waits for a
    slot; above it the queue grows for the whole probe, and past a few percent more than 10% of
    the requests wait longer than the SLO's margin (100 ms of a 2 s probe)."""
    true = SLOTS / SERVICE_S
    sweep = _search(llm, "rate", start=12, limit=24, step_s=2.0)
    s = sweep.search
    assert s["passing"] is not None and s["failing"] is not None, s
    assert s["failing"] <= s["passing"] * 1.06  # bracketed to the precision (and one step)
    found = s["passing"]  # the highest rate seen to hold: the search's answer
    print(f"found rate {s['passing']:.2f}..{s['failing']:.2f}, computed {true:.2f}")
    assert abs(found - true) <= 0.10 * true, (found, true, s["probes"])
    assert [p["level"] for p in s["probes"]][:2] == [12, 24]  # doubled, capped at the limit
    # every probe is in the document, read back as written
    store.save(sweep, tmp_path / "find.json")
    back = store.load(tmp_path / "find.json")
    assert back.search == s and sorted(back.levels) == back.levels
    assert len(back.steps) == len(s["probes"])


@pytest.mark.slow
@pytest.mark.timing
def test_the_concurrency_found_is_the_number_of_slots(llm):
    """Closed loop: SLOTS streams never wait; one more, and a request in SLOTS + 1 waits a whole
    service for a slot (TTFT 275 ms > 150 ms), 20% of them: the boundary is SLOTS exactly."""
    s = _search(llm, "concurrency", start=2, limit=16, step_s=1.0).search
    assert (s["passing"], s["failing"]) == (SLOTS, SLOTS + 1), s["probes"]


def test_the_search_brackets_by_doubling_then_bisects_geometrically():
    """A made-up probe passing up to 37: doubled from 1 to 64, then bisected in log space until
    the ends are within 5%, each level probed once."""
    tried = []

    def probe(level):
        tried.append(level)
        return level <= 37

    passing, failing, _ = llm_find._search(probe, 1.0, 1000.0, 0.05, False, lambda: len(tried))
    assert tried[:7] == [1, 2, 4, 8, 16, 32, 64]
    assert passing <= 37 < failing <= passing * 1.05
    assert len(set(tried)) == len(tried) <= llm_find.MAX_PROBES
    tried.clear()
    passing, failing, why = llm_find._search(probe, 100.0, 1000.0, 0.05, True, lambda: len(tried))
    assert (passing, failing) == (37, 38) and tried[:2] == [100, 50]  # halved from a failing start

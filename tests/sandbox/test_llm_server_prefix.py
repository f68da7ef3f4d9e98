"""The local LLM server's prefix cache, counted on its /metrics with vLLM's names: block-granular
hits (full blocks only, never the prompt's last token), queries in prompt tokens, the blocks an
answer filled cached too, and the LRU capacity. Real parts: the server in its own process, its
/metrics read over HTTP and parsed by prometheus_client."""

from __future__ import annotations

import json
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.sandbox.llm_server_options import LlmServerOptions
from kfp_bench.sandbox.llm_server_prefix import PrefixCache


def _words(n: int, stem: str = "w") -> list[str]:
    return [f"{stem}{i}" for i in range(n)]


def _hits(cache: PrefixCache, prompt: list[str]) -> int:
    return cache.lookup(prompt)[0]


def _counters(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name.startswith("vllm:prefix_cache_") and s.name.endswith("_total"):
                assert s.labels == {"model_name": "kfp-bench-llm", "engine": "0"}, s.labels
                out[s.name] = s.value
    return out


def _send(url: str, body: dict, path: str = "/v1/completions") -> dict:
    req = urllib.request.Request(
        url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


def test_hits_are_whole_blocks_below_the_last_prompt_token():
    cache = PrefixCache(block_size=4, capacity=100)
    assert _hits(cache, _words(10)) == 0  # nothing cached yet; its 2 full blocks now are
    assert _hits(cache, _words(10)) == 8  # both blocks: the partial third never counts
    assert _hits(cache, _words(8)) == 4  # 2 cached blocks, but its last token is computed
    assert _hits(cache, _words(9)) == 8
    assert _hits(cache, _words(3) + ["x"] + _words(8)[4:]) == 0  # block 0 differs: no chain
    assert _hits(cache, _words(4) + ["x", "w5", "w6", "w7", "w8"]) == 4


def test_the_least_recently_used_blocks_go_first_tails_before_heads():
    cache = PrefixCache(block_size=2, capacity=3)
    _hits(cache, _words(5, "a"))  # blocks a0 a1 (head), a2 a3 (tail)
    _hits(cache, _words(3, "b"))  # block b0: 3 blocks, full
    _hits(cache, _words(3, "c"))  # block c0: a's tail goes (freed tail first)
    assert len(cache) == 3
    assert _hits(cache, _words(5, "a")) == 2  # the head stayed; a's tail back evicts b
    assert _hits(cache, _words(3, "b")) == 0


def test_an_extended_chain_is_the_chain_of_the_whole():
    cache = PrefixCache(block_size=3, capacity=10)
    tokens = _words(14)
    _, head = cache.lookup(tokens[:7])
    assert len(head) == 2
    assert cache.extend(head, tokens) == cache.chain(tokens)  # 4 blocks, the first 2 reused


def test_a_capacity_of_zero_turns_the_cache_off():
    cache = PrefixCache(block_size=2, capacity=0)
    _hits(cache, _words(6))
    assert _hits(cache, _words(6)) == 0 and len(cache) == 0


@pytest.mark.parametrize(
    ("name", "value"), [("block_size", 0), ("prefix_cache_blocks", -1), ("block_size", True)]
)
def test_bad_cache_options_are_refused_by_name(name, value):
    flag = "--" + name.replace("_", "-")
    with pytest.raises(ConfigError, match=f"{flag} {value!r}: give a whole number"):
        LlmServerOptions(**{name: value})


def test_metrics_count_prompt_tokens_and_block_hits_as_vllm_does():
    prefix = " ".join(_words(40, "p"))
    with start_llm_server(first_token_ms=0, token_gap_ms=0, prefix_cache_blocks=1000) as llm:
        assert _counters(llm.url) == {
            "vllm:prefix_cache_queries_total": 0.0,
            "vllm:prefix_cache_hits_total": 0.0,
        }
        _send(llm.url, {"prompt": prefix + " one two", "max_tokens": 2})  # 42 tokens, 0 hits
        # The same 40-token start: its 2 full blocks (32 tokens) hit; the third (tokens 32-47)
        # holds other words.
        _send(llm.url, {"prompt": prefix + " three four five", "max_tokens": 2})
        # A chat's tokens are its messages' words, in turn: the same 40 first.
        chat = [{"role": "system", "content": prefix}, {"role": "user", "content": "six"}]
        _send(llm.url, {"messages": chat, "max_tokens": 2}, "/v1/chat/completions")
        got = _counters(llm.url)
    assert got == {
        "vllm:prefix_cache_queries_total": 42 + 43 + 41,
        "vllm:prefix_cache_hits_total": 0 + 32 + 32,
    }


def test_an_answers_blocks_are_cached_for_the_next_turn():
    """A multi-turn chat sends the answer back: the blocks the answer's computed tokens filled
    (every answer token but the last) hit, as vLLM caches a request's blocks while it runs."""
    first = " ".join(_words(12, "q"))
    with start_llm_server(first_token_ms=0, token_gap_ms=0, block_size=4) as llm:
        answer = _send(llm.url, {"prompt": first, "max_tokens": 7})["choices"][0]["text"]
        assert answer.split() == [f"t{i}" for i in range(7)]
        # 12 prompt tokens + the answer's 6 computed ones: 4 full blocks (16 tokens) cached.
        _send(llm.url, {"prompt": f"{first} {answer} next turn", "max_tokens": 1})
        got = _counters(llm.url)
    assert got["vllm:prefix_cache_hits_total"] == 16
    assert got["vllm:prefix_cache_queries_total"] == 12 + 21


def test_no_prefix_caching_counts_no_lookup():
    with start_llm_server(first_token_ms=0, token_gap_ms=0, prefix_cache_blocks=0) as llm:
        for _ in range(2):
            _send(llm.url, {"prompt": " ".join(_words(40)), "max_tokens": 1})
        assert set(_counters(llm.url).values()) == {0.0}


def _stream_usage(url: str, body: dict, path: str = "/v1/completions") -> dict:
    """The usage of a streamed request with ``stream_options.include_usage``: its last chunk's."""
    body = {**body, "stream": True, "stream_options": {"include_usage": True}}
    req = urllib.request.Request(
        url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        events = [line[6:] for line in resp.read().decode().splitlines() if line[:6] == "data: "]
    assert events[-1] == "[DONE]"
    return json.loads(events[-2])["usage"]


def test_usage_carries_the_cached_tokens_as_vllm_sends_them(tmp_path):
    """``prompt_tokens_details.cached_tokens``: the tokens the lookup served from cached blocks,
    in the whole answer's usage and the streamed usage chunk alike; left out when none hit
    (vLLM's ``if ... and num_cached_tokens``) or with the details off (vLLM's default)."""
    prefix = " ".join(_words(40, "p"))
    log = tmp_path / "truth.jsonl"
    with start_llm_server(first_token_ms=0, token_gap_ms=0, truth_log=log) as llm:
        first = _send(llm.url, {"prompt": prefix + " one two", "max_tokens": 2})["usage"]
        assert "prompt_tokens_details" not in first  # 42 tokens, nothing cached yet
        again = _send(llm.url, {"prompt": prefix + " three", "max_tokens": 2})["usage"]
        assert again["prompt_tokens_details"] == {"cached_tokens": 32}
        chat = [{"role": "system", "content": prefix}, {"role": "user", "content": "six"}]
        streamed = _stream_usage(llm.url, {"messages": chat, "max_tokens": 2},
                                 "/v1/chat/completions")  # fmt: skip
        assert streamed["prompt_tokens"] == 41
        assert streamed["prompt_tokens_details"] == {"cached_tokens": 32}
        counters = _counters(llm.url)
        logged = [r["cached_tokens"] for r in llm.truth(count=3).requests.values()]
    assert sorted(logged) == [0, 32, 32]  # the server's own count of each, in its truth log
    assert counters["vllm:prefix_cache_hits_total"] == sum(logged)
    off = {"first_token_ms": 0, "token_gap_ms": 0, "enable_prompt_tokens_details": False}
    with start_llm_server(**off) as llm:
        for _ in range(2):
            usage = _stream_usage(llm.url, {"prompt": prefix, "max_tokens": 1})
            assert "prompt_tokens_details" not in usage
        assert _counters(llm.url)["vllm:prefix_cache_hits_total"] == 32  # it hit all the same

"""The LLM server's truth log says which prompt each request carried: its first characters and
a SHA-256 of the whole (completions: the prompt; chat: the messages' contents, one a line)."""

from __future__ import annotations

import hashlib

from kfp_bench.sandbox.llm_server import start_llm_server

from .llm_client import send


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_truth_log_names_each_requests_prompt(tmp_path):
    long = "système " * 20  # non-ASCII, longer than the head
    with start_llm_server(truth_log=tmp_path / "t.jsonl", max_tokens=2, token_gap_ms=1) as h:
        port = int(h.url.rsplit(":", 1)[1])
        body = {"model": "m", "prompt": long, "stream": True}
        send(port, "/v1/completions", body, {"X-Request-Id": "c1"})
        messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
        body = {"model": "m", "messages": messages, "stream": True}
        send(port, "/v1/chat/completions", body, {"X-Request-Id": "c2"})
        truth = h.truth(wait_for=("c1", "c2"))
    c1, c2 = truth.requests["c1"], truth.requests["c2"]
    assert c1["prompt_head"] == long[:64] and c1["prompt_sha256"] == _sha(long)
    assert c2["prompt_head"] == "be brief\nhi" and c2["prompt_sha256"] == _sha("be brief\nhi")

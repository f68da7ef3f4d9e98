"""``kfp-bench llm`` against the real local LLM server streaming no usage (as KServe's
huggingfaceserver does): tokens unknown without --tokenizer (never 0, exit 0, the note naming the
fix, null in the results file), counted with it; --no-request-id."""

from __future__ import annotations

import json
import time

import pytest
import tokenizers
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace

from kfp_bench.cli import main
from kfp_bench.sandbox.llm_server import start_llm_server

NO_USAGE = ["-H", "X-Llm-Fault: no-usage"]


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    truth = tmp_path_factory.mktemp("llm") / "truth.jsonl"
    with start_llm_server(truth_log=truth, first_token_ms=10, token_gap_ms=2) as server:
        yield server


def _args(llm, *more):
    return ["llm", llm.url + "/openai", "-n", "6", "-c", "2", "--output-tokens", "fixed:5",
            "--input-tokens", "fixed:7", *NO_USAGE, *more]  # fmt: skip


def test_without_usage_or_tokenizer_the_tokens_are_unknown(llm, tmp_path, capsys):
    out = tmp_path / "r.json"
    code = main(_args(llm, "--json-out", str(out)))
    text = capsys.readouterr().out
    assert code == 0, text
    assert "Output tokens:\tunknown\n" in text and "Input tokens:\tunknown\n" in text
    assert "pass --tokenizer" in text
    summary = json.loads(out.read_text())["summary"]
    assert summary["output_tokens"] is None and summary["input_tokens_per_s"] is None


def test_with_a_tokenizer_the_tokens_are_counted_and_said_so(llm, tmp_path, capsys):
    tok = tokenizers.Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()  # a word a token: the local server's own count
    tok.save(str(tmp_path / "tokenizer.json"))
    code = main(_args(llm, "--tokenizer", str(tmp_path / "tokenizer.json")))
    text = capsys.readouterr().out
    assert code == 0, text
    assert "Output tokens:\t30 (" in text and "Input tokens:\t42 (" in text
    assert "tokens-from-tokenizer" in text


def test_no_request_id_sends_none(llm, capsys):
    since = time.perf_counter()  # the truth log's clock: the earlier tests' requests arrived before
    assert main(_args(llm, "--no-request-id")) == 0
    new = {r["id"] for r in llm.arrived_since(since, 6)}
    assert len(new) == 6 and all(i.startswith("llm-") for i in new)  # the server's own ids

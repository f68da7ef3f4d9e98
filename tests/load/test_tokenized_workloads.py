"""Trace and shared-prefix prompts with a tokenizer: their lengths in the tokenizer's tokens
(the fewest words that make them) and their ``input_tokens`` its count of each prompt, as the
synthetic prompts count theirs. Against the byte-level BPE tokenizer.json of the tests' tiny
model (tests/data/llm_streams), and ``kfp-bench llm`` against the local LLM server streaming no
usage, so that the client's token counts are the tokenizer's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import tokenizers

from kfp_bench.cli import main
from kfp_bench.load.prompts import Dist
from kfp_bench.load.shared_prefix import SharedPrefix, shared_prefix_prompts, system_prompts
from kfp_bench.load.trace import read_trace
from kfp_bench.sandbox.llm_server import start_llm_server

TOKENIZER = str(Path(__file__).resolve().parents[1] / "data" / "llm_streams" / "tokenizer.json")
TOK = tokenizers.Tokenizer.from_file(TOKENIZER)


def _ids(text: str, special: bool = False) -> list[int]:
    return TOK.encode(text, add_special_tokens=special).ids


def _fewest_words_of(text: str, n: int) -> bool:
    """``text`` has ``n`` tokens or more, and would have fewer without its last word."""
    words = text.split()
    return len(_ids(text)) >= n > len(_ids(" ".join(words[:-1])))


def test_shared_prefix_lengths_are_the_tokenizers_tokens():
    spec = SharedPrefix.parse("3,4,40,9")
    prompts = shared_prefix_prompts(spec, Dist.parse("fixed:5"), seed=4, tokenizer=TOKENIZER)
    prefixes = system_prompts(spec, seed=4, tokenizer=TOKENIZER)
    assert len(set(prefixes)) == 3 and all(_fewest_words_of(p, 40) for p in prefixes)
    # BPE makes a word more than one token: fewer words than tokens, unlike the word count
    assert all(len(p.split()) < 40 for p in prefixes)
    group = [next(g for g, x in enumerate(prefixes) if p.text.startswith(x + " ")) for p in prompts]
    assert Counter(group) == dict.fromkeys(range(3), 4)
    for p, g in zip(prompts, group, strict=True):
        question = p.text[len(prefixes[g]) + 1 :]
        assert _fewest_words_of(question, 9)
        assert p.input_tokens == len(_ids(p.text, special=True))  # with the BOS a server adds
        # the prefix's tokens open the prompt's: what a server's prefix cache can share
        assert _ids(p.text)[: len(_ids(prefixes[g]))] == _ids(prefixes[g])
    again = shared_prefix_prompts(spec, Dist.parse("fixed:5"), seed=4, tokenizer=TOKENIZER)
    assert again == prompts


def test_without_a_tokenizer_shared_prefix_lengths_stay_words():
    spec = SharedPrefix.parse("2,2,30,4")
    prompts = shared_prefix_prompts(spec, Dist.parse("fixed:5"), seed=4)
    assert all(p.input_tokens == 34 == len(p.text.split()) for p in prompts)


def test_trace_lines_are_sized_and_counted_in_tokens(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [{"offset": 0, "input_tokens": 25}, {"offset": 1, "prompt": "the garden market"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    _, (built, given) = read_trace(path, seed=3, tokenizer=TOKENIZER)
    assert _fewest_words_of(built.text, 25)
    assert built.input_tokens == len(_ids(built.text, special=True))
    assert given.input_tokens == len(_ids("the garden market", special=True))
    assert given.input_tokens != 3  # not its words
    _, (words, _) = read_trace(path, seed=3)  # without: as before, words
    assert words.input_tokens == 25 == len(words.text.split())


@pytest.fixture(scope="module")
def llm():
    with start_llm_server(first_token_ms=5, token_gap_ms=1) as server:
        yield server


def test_the_llm_load_counts_shared_prefix_prompts_with_the_tokenizer(llm, tmp_path, capsys):
    """4 requests, the 4 prompts once each: no usage came, so the input tokens are the
    tokenizer's counts of the prompts."""
    out = tmp_path / "r.json"
    code = main([
        "llm", llm.url + "/openai", "--shared-prefix", "2,2,20,5", "--output-tokens", "fixed:3",
        "--tokenizer", TOKENIZER, "-n", "4", "-c", "1", "-H", "X-Llm-Fault: no-usage",
        "--no-model-check", "--json-out", str(out),
    ])  # fmt: skip
    assert code == 0, capsys.readouterr()
    prompts = shared_prefix_prompts(SharedPrefix.parse("2,2,20,5"), Dist.parse("fixed:3"), 0,
                                    TOKENIZER)  # fmt: skip
    summary = json.loads(out.read_text())["summary"]
    assert summary["input_tokens"] == sum(p.input_tokens for p in prompts)
    assert summary["input_tokens"] != 4 * 25  # not the words

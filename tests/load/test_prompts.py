"""Prompts for the LLM load (kfp_bench/load/prompts.py): the length distributions' moments with
a fixed seed, synthetic prompts of exact word counts that differ from one another, JSONL and
ShareGPT files, one ConfigError for every bad input, and a local tokenizer.json (a word-level
tokenizer built here with the tokenizers package, when it is installed)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tokenizers
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace

from kfp_bench.errors import ConfigError
from kfp_bench.load.openai import chat_messages
from kfp_bench.load.prompts import (
    DEFAULT_OUTPUT_TOKENS,
    VOCAB,
    Dist,
    Prompt,
    from_file,
    synthetic,
)

N = 20_000


def _draws(text: str, seed: int = 7) -> np.ndarray:
    return Dist.parse(text).draw(np.random.default_rng(seed), N)


def test_fixed_and_uniform():
    assert set(_draws("fixed:128").tolist()) == {128}
    assert set(_draws("64").tolist()) == {64}
    u = _draws("uniform:64,256")
    assert u.min() == 64 and u.max() == 256  # both ends drawn: inclusive
    assert abs(u.mean() - 160) < 1.5
    assert abs(u.std() - np.sqrt((193**2 - 1) / 12)) < 1.0


def test_normal_moments_and_the_clip_at_one():
    x = _draws("normal:128,32")
    assert abs(x.mean() - 128) < 1.0 and abs(x.std() - 32) < 1.0
    clipped = _draws("normal:2,10")
    assert clipped.min() == 1  # never 0 or negative tokens
    assert clipped.mean() > 4  # the clip lifts the mean: as the docstring says


def test_lognormal_is_given_by_its_median():
    x = _draws("lognormal:200,0.5")
    assert abs(np.median(x) - 200) < 4
    assert abs(x.mean() - 200 * np.exp(0.5**2 / 2)) < 3
    assert abs(np.log(x).std() - 0.5) < 0.02


def test_draws_are_seeded():
    assert (_draws("normal:128,32", 1) == _draws("normal:128,32", 1)).all()
    assert (_draws("normal:128,32", 1) != _draws("normal:128,32", 2)).any()
    assert str(Dist.parse("uniform:64,256")) == "uniform:64,256"


@pytest.mark.parametrize(
    "text",
    ["", "fixed", "fixed:0", "fixed:1.5", "uniform:10", "uniform:9,3", "normal:128",
     "normal:0,3", "normal:128,-1", "lognormal:a,b", "zipf:1,2", "fixed:nan", "uniform:1,2,3"],
)  # fmt: skip
def test_a_bad_distribution_names_the_text_and_the_forms(text):
    with pytest.raises(ConfigError) as e:
        Dist.parse(text)
    assert repr(text) in str(e.value) and "uniform:LO,HI" in str(e.value)
    assert str(e.value).count("\n") == 0


def test_synthetic_prompts_have_exact_word_counts_and_differ():
    prompts = synthetic(200, Dist.parse("uniform:1,300"), Dist.parse("normal:64,8"), seed=3)
    assert len(prompts) == 200 and all(isinstance(p, Prompt) for p in prompts)
    for p in prompts:
        words = p.text.split(" ")
        assert len(words) == p.input_tokens and len(p.text.split()) == p.input_tokens
        assert set(words) <= set(VOCAB) and p.output_tokens >= 1
    long = [p.text for p in prompts if p.input_tokens >= 8]
    assert len({" ".join(t.split()[:8]) for t in long}) == len(long)  # no shared 8-word prefix
    assert synthetic(5, Dist.parse("8"), Dist.parse("8"), seed=3) == synthetic(
        5, Dist.parse("8"), Dist.parse("8"), seed=3
    )
    with pytest.raises(ConfigError, match="number of prompts 0"):
        synthetic(0, Dist.parse("8"), Dist.parse("8"))


def test_messages_is_one_user_turn():
    assert chat_messages(Prompt("Hi there", 2, 5)) == [{"role": "user", "content": "Hi there"}]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_prompt_or_text_and_output_or_max_tokens(tmp_path):
    path = _write(tmp_path, "p.jsonl", "\n".join([
        json.dumps({"prompt": "one two three", "output_tokens": 7}),
        "",
        json.dumps({"text": "four five", "max_tokens": 9}),
        json.dumps({"prompt": "six"}),
    ]))  # fmt: skip
    assert from_file(path) == [
        Prompt("one two three", 3, 7),
        Prompt("four five", 2, 9),
        Prompt("six", 1, DEFAULT_OUTPUT_TOKENS),
    ]
    assert [p.output_tokens for p in from_file(path, "jsonl", output_tokens=4)] == [4, 4, 4]


SHAREGPT = [
    {"id": "a", "conversations": [
        {"from": "human", "value": "What is a river?"},
        {"from": "gpt", "value": "A river is a stream of water flowing to the sea."},
        {"from": "human", "value": "And a lake?"},
        {"from": "gpt", "value": "Still water."},
    ]},
    {"id": "b", "conversations": [{"from": "human", "value": "Alone"}]},  # no reply: skipped
    {"id": "e", "conversations": [  # an empty reply: skipped
        {"from": "human", "value": "Say nothing"},
        {"from": "gpt", "value": " "},
    ]},
    {"id": "c", "conversations": [
        {"from": "system", "value": "Be brief."},
        {"from": "user", "value": "Name a colour"},
        {"from": "assistant", "value": "Blue"},
    ]},
]  # fmt: skip


def test_sharegpt_first_human_turn_and_the_replys_words(tmp_path):
    path = _write(tmp_path, "sg.json", json.dumps(SHAREGPT, indent=1))
    want = [Prompt("What is a river?", 4, 11), Prompt("Name a colour", 3, 1)]
    assert from_file(path) == want == from_file(path, "sharegpt")
    lines = _write(tmp_path, "sg.jsonl", "\n".join(json.dumps(e) for e in SHAREGPT))
    assert from_file(lines) == want  # ShareGPT entries as JSON lines


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("empty.jsonl", "", "no prompts in it"),
        ("blank.jsonl", "\n  \n", "no prompts in it"),
        ("bad.jsonl", '{"prompt": "a"}\n{"prompt": "b"\n', "line 2: not JSON"),
        ("noprompt.jsonl", '{"prompt": "a"}\n{"question": "b"}\n', "line 2: no prompt"),
        ("str.jsonl", '"a"\n', "line 1: no prompt"),
        ("emptyprompt.jsonl", '{"prompt": "  "}\n', "line 1: the prompt is empty"),
        ("out.jsonl", '{"prompt": "a", "max_tokens": 0}\n', "line 1: output_tokens=0"),
        ("outs.jsonl", '{"prompt": "a", "output_tokens": "9"}\n', "output_tokens='9'"),
        ("bad.json", '[{"conversations": []},\n {"conv', "line 2: not JSON"),
        ("obj.json", '[1]', "entry 0: not a ShareGPT conversation"),
        ("turns.json", '[{"conversations": [{"from": "human"}]}]', "entry 0: not a ShareGPT"),
        ("none.json", '[{"conversations": [{"from": "gpt", "value": "x"}]}]', "no prompts"),
    ],
)  # fmt: skip
def test_a_bad_file_names_the_file_the_line_and_the_fix(tmp_path, name, text, words):
    path = _write(tmp_path, name, text)
    with pytest.raises(ConfigError, match=words) as e:
        from_file(path)
    assert str(path) in str(e.value) and ";" in str(e.value)  # the fix follows


def test_a_missing_or_unreadable_file_and_a_bad_format(tmp_path):
    with pytest.raises(ConfigError, match="nope.jsonl: not found; give the path"):
        from_file(tmp_path / "nope.jsonl")
    (tmp_path / "latin.jsonl").write_bytes(b'{"prompt": "caf\xe9"}\n')
    with pytest.raises(ConfigError, match="latin.jsonl: not UTF-8"):
        from_file(tmp_path / "latin.jsonl")
    with pytest.raises(ConfigError, match="prompts file .*: a ShareGPT file is a JSON list"):
        from_file(_write(tmp_path, "o.json", '{"prompt": "a"}'), "sharegpt")
    with pytest.raises(ConfigError, match="prompts format 'csv': use one of auto, jsonl"):
        from_file(tmp_path / "x", "csv")


def test_without_the_tokenizers_package_the_error_says_pip_install(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tokenizers", None)  # import fails
    path = _write(tmp_path, "p.jsonl", '{"prompt": "a"}\n')
    with pytest.raises(ConfigError, match="pip install tokenizers"):
        from_file(path, tokenizer=str(tmp_path / "tokenizer.json"))


def _word_tokenizer(tmp_path):
    """A word-level tokenizer.json over VOCAB that splits off punctuation: the real file
    format a model ships, small enough to build here."""
    vocab = {w: i for i, w in enumerate(("[UNK]", "?", ".", *VOCAB))}
    tok = tokenizers.Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()  # "river?" is two tokens: river and ?
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return path


def test_a_local_tokenizer_counts_the_input_tokens(tmp_path):
    tok = str(_word_tokenizer(tmp_path))
    path = _write(tmp_path, "sg.json", json.dumps(SHAREGPT))
    assert [p.input_tokens for p in from_file(path, tokenizer=tok)] == [5, 3]  # "river" "?"
    words = synthetic(20, Dist.parse("uniform:5,50"), Dist.parse("4"), seed=1)
    counted = synthetic(20, Dist.parse("uniform:5,50"), Dist.parse("4"), seed=1, tokenizer=tok)
    assert [p.text for p in counted] == [p.text for p in words]
    assert [p.input_tokens for p in counted] == [p.input_tokens for p in words]  # 1 word, 1 id
    with pytest.raises(ConfigError, match="tokenizer .*missing.json: not found"):
        from_file(path, tokenizer=str(tmp_path / "missing.json"))
    bad = _write(tmp_path, "bad-tokenizer.json", '{"not": "a tokenizer"}')
    with pytest.raises(ConfigError, match="not a tokenizers tokenizer.json"):
        from_file(path, tokenizer=str(bad))

"""Prompt token counts as a server makes them (``load/tokenizer.py``), with the tiny model's
real tokenizer and chat template (tests/data/llm_streams: what ``save_pretrained`` wrote)."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.load.tokenizer import load_tokenizer, prompt_counts
from tests.paths import DATA

STREAMS = DATA / "llm_streams"
PROMPTS = [SimpleNamespace(text="The quick brown fox"), SimpleNamespace(text="jumps over it")]


@pytest.fixture()
def folder(tmp_path):
    """The tokenizer alone in a folder; tests add what the model's folder would hold."""
    shutil.copy(STREAMS / "tokenizer.json", tmp_path)
    return tmp_path


def _chatml(text: str) -> str:
    return f"<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n"


def test_a_completion_counts_its_text_with_the_bos_a_chat_its_rendered_template(folder):
    path = str(folder / "tokenizer.json")
    tok = load_tokenizer(path)
    bare = [len(tok.encode(p.text, add_special_tokens=True).ids) for p in PROMPTS]
    assert prompt_counts(tok, path, False, PROMPTS) == bare
    assert prompt_counts(tok, path, True, PROMPTS) == bare  # no template beside it: the text
    shutil.copy(STREAMS / "chat_template.jinja", folder)  # transformers 5's file
    templated = [len(tok.encode(_chatml(p.text), add_special_tokens=False).ids) for p in PROMPTS]
    assert prompt_counts(tok, path, True, PROMPTS) == templated
    assert templated[0] > bare[0] + 5  # the template's own tokens are counted
    assert prompt_counts(tok, path, False, PROMPTS) == bare  # completions never templated


def test_an_older_tokenizer_config_carries_the_template(folder):
    template = (STREAMS / "chat_template.jinja").read_text()
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": [{"name": "default", "template": template}]})
    )
    path = str(folder / "tokenizer.json")
    tok = load_tokenizer(path)
    want = [len(tok.encode(_chatml(p.text), add_special_tokens=False).ids) for p in PROMPTS]
    assert prompt_counts(tok, path, True, PROMPTS) == want


def test_a_bad_config_or_template_is_named(folder):
    path = str(folder / "tokenizer.json")
    tok = load_tokenizer(path)
    (folder / "tokenizer_config.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"tokenizer_config.json: not readable JSON"):
        prompt_counts(tok, path, True, PROMPTS)
    (folder / "tokenizer_config.json").write_text("{}")
    (folder / "chat_template.jinja").write_text("{{ raise_exception('roles must alternate') }}")
    with pytest.raises(ConfigError, match=r"its chat template does not render \(roles must"):
        prompt_counts(tok, path, True, PROMPTS)

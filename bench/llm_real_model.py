"""A tiny Llama made here, offline, for ``llm_real_servers.py``: a byte-level BPE tokenizer
(the recordings' own, ``tests/data/llm_streams/tokenizer.json``, so that every server's
recording is counted by one tokenizer; ``--train`` trains a new one with ``tokenizers`` on the
project's docs, which change), a 2-layer ``LlamaForCausalLM`` with random weights saved with
``save_pretrained`` (a chat template included), and a GGUF of it for llama.cpp. Runs in the
servers' venv (torch, transformers, tokenizers), not the project's.

Usage: ``python bench/llm_real_model.py OUT_DIR [--train] [--gguf-convert
PATH/convert_hf_to_gguf.py]``
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

VOCAB = 1024  # small enough that tokenizer.json stays a test fixture (tens of KB)
CONTEXT = 512  # max_position_embeddings: what the servers report and check prompts against
SEED = 29
# The usual ChatML shape: every server renders chat requests through the tokenizer's template.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<s>", "</s>", "<unk>", "<|im_start|>", "<|im_end|>"]
REPO = Path(__file__).resolve().parents[1]
TOKENIZER = REPO / "tests/data/llm_streams/tokenizer.json"


def train_tokenizer(texts: list[Path]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    # GPT-2's byte-level split and regex: llama.cpp's "gpt-2" pre-tokenizer is the same one
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([str(p) for p in texts], trainer)
    return tok


def whole_words(tok) -> list[int]:
    """The ids of tokens that are a space and a word of letters and that the tokenizer gives
    back for that text. A random model restricted to them writes text whose re-tokenisation
    is the tokens it generated (as a trained model's mostly is), never an invalid UTF-8 piece
    (a byte-level vocabulary's lone bytes decode to U+FFFD), and never stops before max_tokens:
    a zero row of ``lm_head`` gives a logit of 0, below the largest of hundreds of random ones.
    """
    out = []
    for text, i in tok.get_vocab().items():
        word = tok.convert_tokens_to_string([text])
        if word[:1] == " " and word[1:].isascii() and word[1:].isalpha() and len(word) > 2:
            if tok.encode(word, add_special_tokens=False) == [i]:
                out.append(i)
    return sorted(out)


def save_model(out: Path, base) -> None:
    """The model and its tokenizer files in ``out``; ``base``: a ``tokenizers.Tokenizer``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=base,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="</s>",
    )
    tok.chat_template = CHAT_TEMPLATE
    tok.model_max_length = CONTEXT
    tok.save_pretrained(out)
    torch.manual_seed(SEED)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=CONTEXT,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():  # greedy (temperature 0) then picks whole words only, never </s>
        keep = torch.zeros(len(tok), dtype=torch.bool)
        keep[whole_words(tok)] = True
        model.lm_head.weight[~keep] = 0.0
    model.generation_config.max_length = CONTEXT
    model.save_pretrained(out, safe_serialization=True)


def convert_gguf(model_dir: Path, script: Path) -> Path:
    """llama.cpp's own converter, its pre-tokenizer check answered "gpt-2" (the converter
    knows trained vocabularies by a hash of their output and refuses an unknown one:
    ``conversion/base.py``, ``TextModel.get_vocab_base_pre``, llama-cpp-python 0.3.36's copy)."""
    sys.path[:0] = [str(script.parent), str(script.parent / "gguf-py")]
    from conversion import base, llama  # the converter's package, beside the script

    base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "gpt-2"
    # Llama's set_vocab tries sentencepiece first (and needs the package to find no
    # tokenizer.model); this vocabulary is GPT-2's kind
    llama.LlamaModel.set_vocab = lambda self: self._set_vocab_gpt2()
    out = model_dir / "model-f32.gguf"
    argv = sys.argv
    sys.argv = [str(script), str(model_dir), "--outfile", str(out), "--outtype", "f32"]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--docs", type=Path, default=REPO)
    p.add_argument("--tokenizer", type=Path, default=TOKENIZER, help="the tokenizer.json to use")
    p.add_argument("--train", action="store_true", help="train a tokenizer on --docs instead")
    p.add_argument("--gguf-convert", type=Path, help="llama.cpp's convert_hf_to_gguf.py")
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    if not (a.out / "config.json").exists():
        if a.train:
            texts = sorted(a.docs.glob("*.md")) + sorted((a.docs / "docs").glob("*.md"))
            base = train_tokenizer(texts)
        else:
            from tokenizers import Tokenizer

            base = Tokenizer.from_file(str(a.tokenizer))
        save_model(a.out, base)
    if a.gguf_convert and not (a.out / "model-f32.gguf").exists():
        convert_gguf(a.out, a.gguf_convert)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

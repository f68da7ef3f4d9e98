"""Shared-prefix prompts: S system prompts, each shared by U users who ask their own question.

What prefix caching and KV-cache-aware routing serve. It follows inference-perf's shared_prefix
data generator (kubernetes-sigs/inference-perf 7de5ef2,
inference_perf/datagen/synthetic/shared_prefix_datagen.py and the ``SharedPrefix`` config in
inference_perf/config/datagen/config.py): ``num_groups`` system prompts of
``system_prompt_len`` tokens, ``num_prompts_per_group`` questions of ``question_len`` tokens each,
every prompt the group's system prompt, a space and the question, and the S x U prompts shuffled
with the seeded generator so that a group's requests are spread over the run. Where
inference-perf draws token ids from the model's tokenizer, this draws words from
``prompts.VOCAB`` (no model hub): a length is in words, about 1.3 tokens each for BPE
tokenizers; with a local tokenizer.json a length is in its tokens (the fewest words that make
that many, ``tokenizer.words_of_tokens``) and a prompt's ``input_tokens`` is its count of the
whole prompt. Requests cycle through the prompts, as they cycle through any prompt list.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kfp_bench.errors import ConfigError
from kfp_bench.load.prompts import VOCAB, Dist, Prompt, draw_words
from kfp_bench.load.tokenizer import counter, words_of_tokens

FORM = "S,U,PREFIX_LEN,QUESTION_LEN (e.g. 4,16,500,50)"


@dataclass(frozen=True)
class SharedPrefix:
    """``num_groups`` system prompts of ``system_prompt_len`` words, each shared by
    ``num_prompts_per_group`` users with a question of ``question_len`` words."""

    num_groups: int
    num_prompts_per_group: int
    system_prompt_len: int
    question_len: int

    @classmethod
    def parse(cls, text: str, flag: str = "--shared-prefix") -> SharedPrefix:
        parts = [p.strip() for p in str(text).split(",")]
        try:
            values = [int(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 4 or min(values) < 1:
            raise ConfigError(f"{flag} {text!r}: give four whole numbers of 1 or more, {FORM}")
        spec = cls(*values)
        if spec.num_groups > spec.distinct():
            raise ConfigError(
                f"{flag} {text!r}: {spec.num_groups} distinct system prompts of "
                f"{spec.system_prompt_len} words cannot be made from {len(VOCAB)} words (at "
                f"most {spec.distinct()}); give fewer groups or longer prefixes, e.g. "
                f"{spec.num_groups},{spec.num_prompts_per_group},{spec.needed()},"
                f"{spec.question_len}"
            )
        return spec

    def distinct(self) -> int:
        """How many distinct system prompts of ``system_prompt_len`` words there are."""
        return len(VOCAB) ** min(self.system_prompt_len, 8)  # 187**8: more than anyone asks

    def needed(self) -> int:
        """The fewest words a system prompt needs for ``num_groups`` distinct ones."""
        return next(n for n in range(1, 9) if len(VOCAB) ** n >= self.num_groups)

    def __str__(self) -> str:
        return (
            f"{self.num_groups},{self.num_prompts_per_group},{self.system_prompt_len},"
            f"{self.question_len}"
        )


def _text(rng: np.random.Generator, n: int, count=None) -> str:
    """``n`` words, or with ``count`` (a tokenizer's) the fewest words of ``n`` tokens."""
    draw = draw_words(rng)
    return words_of_tokens(n, draw, count) if count else " ".join(draw(n))


def system_prompts(spec: SharedPrefix, seed: int = 0, tokenizer: str = "") -> list[str]:
    """The groups' system prompts, distinct, drawn first from ``seed``'s generator."""
    rng = np.random.default_rng(seed)
    count = counter(tokenizer) if tokenizer else None
    out: list[str] = []
    seen: set[str] = set()
    tries = 0
    while len(out) < spec.num_groups:
        text = _text(rng, spec.system_prompt_len, count)
        tries += 1
        if text not in seen:  # (two equal draws share a cache entry: not S groups)
            out.append(text)
            seen.add(text)
        elif tries > 20 * spec.num_groups + 1000:  # a tokenizer's lengths leave fewer texts
            raise ConfigError(
                f"--shared-prefix {spec}: {len(out)} distinct system prompts of "
                f"{spec.system_prompt_len} tokens found after {tries} draws, not "
                f"{spec.num_groups}; give fewer groups or longer prefixes"
            )
    return out


def shared_prefix_prompts(
    spec: SharedPrefix, output: Dist, seed: int = 0, tokenizer: str = ""
) -> list[Prompt]:
    """The S x U prompts, shuffled: each ``system_prompts(spec, seed)[g] + " " + question``.
    With ``tokenizer`` (a local tokenizer.json) the lengths are in its tokens and each
    prompt's ``input_tokens`` is its count of the prompt (with the special tokens a server
    adds to a completion's prompt, as ``prompts.synthetic`` counts)."""
    count = counter(tokenizer) if tokenizer else None
    prefixes = system_prompts(spec, seed, tokenizer)
    rng = np.random.default_rng([seed, 1])  # the questions: a stream apart from the prefixes'
    n = spec.num_groups * spec.num_prompts_per_group
    outs = output.draw(rng, n).tolist()
    prompts = []
    for g, prefix in enumerate(prefixes):
        for u in range(spec.num_prompts_per_group):
            text = prefix + " " + _text(rng, spec.question_len, count)
            size = count(text) if count else spec.system_prompt_len + spec.question_len
            prompts.append(Prompt(text, size, outs[g * spec.num_prompts_per_group + u]))
    order = rng.permutation(n).tolist()
    return [prompts[i] for i in order]

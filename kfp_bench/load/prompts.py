"""Prompts for the LLM load, without a model hub: ``Prompt``, length distributions (``Dist``),
synthetic prompts (``synthetic``), prompt files (``from_file``: JSONL or ShareGPT JSON), and an
optional local ``tokenizer.json`` to count input tokens.

Every bad input is one ``ConfigError`` naming the text or the file (and its line) and the fix,
raised before anything is sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kfp_bench.errors import ConfigError
from kfp_bench.load.tokenizer import counter

#: The max_tokens of a JSONL prompt that gives none: vLLM's default for its custom (JSONL)
#: dataset, --custom-output-len 256 (vllm-project/vllm at f2e97dda, vllm/benchmarks/datasets.py).
DEFAULT_OUTPUT_TOKENS = 256
FORMATS = ("auto", "jsonl", "sharegpt")
#: ShareGPT's speakers: "human"/"gpt" in ShareGPT_V3; some copies say "user"/"assistant".
HUMAN = frozenset({"human", "user"})
REPLY = frozenset({"gpt", "assistant", "chatgpt"})
DIST_FORMS = (
    "fixed:N, uniform:LO,HI, normal:MEAN,SD or lognormal:MEDIAN,SIGMA (e.g. uniform:64,256)"
)

#: Real English words, common ones of one or two BPE tokens each. Each prompt draws its words at
#: random from them, so no two prompts share more than a chance prefix.
VOCAB = tuple(
    """the of and to in is was for that with as on by at from his her they this which but be
    are not have one had were all there when been more would their into time only other new
    some could these two may first then after most also made over did many before must through
    back years where much your way well down should because each just those people state how
    too little good world very still own see men work long here between both life being under
    never day same another know while last might great old year off come since against go came
    right used take three small house water light place number city word river point music
    garden market window morning letter story table winter summer family country village paper
    mountain friend question answer history language animal flower forest island bridge road
    school teacher student doctor kitchen bread apple orange silver golden quiet simple strong
    bright early later open close green blue yellow north south east west stone cloud rain snow
    wind fire earth ocean harbor valley meadow station engine journey evening""".split()
)
_VOCAB = np.array(VOCAB, dtype=object)


@dataclass(frozen=True, slots=True)
class Prompt:
    """One request's prompt: its text, its input tokens (whitespace words, or a tokenizer's
    count) and its output tokens, the request's max_tokens."""

    text: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class Dist:
    """A distribution of token counts, drawn as whole numbers >= 1.

    Forms (``Dist.parse``): ``fixed:N`` (or a bare ``N``); ``uniform:LO,HI``, every whole
    number from LO to HI inclusive; ``normal:MEAN,SD``, rounded and clipped to >= 1 (so with an
    SD near the mean the drawn mean is above MEAN); ``lognormal:MEDIAN,SIGMA``, by its median
    (exp of the log's mean) and the log's SD: the median is the length one reads off a
    dataset, and the mean is MEDIAN * exp(SIGMA**2 / 2), rounded and clipped to >= 1.
    """

    kind: str
    a: float
    b: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Dist:
        """A ``Dist`` from its text; ``ConfigError`` naming the text and the accepted forms."""
        raw = str(text).strip()
        kind, _, rest = raw.partition(":")
        if not rest and _number(kind) is not None:
            kind, rest = "fixed", kind
        args = [_number(x) for x in rest.split(",")] if rest else []
        want = {"fixed": 1, "uniform": 2, "normal": 2, "lognormal": 2}.get(kind.strip())
        if want is None or len(args) != want or None in args:
            raise ConfigError(f"length distribution {text!r}: use {DIST_FORMS}")
        dist = cls(kind.strip(), *args)
        dist._check(text)
        return dist

    def _check(self, text: str) -> None:
        def bad(why: str) -> ConfigError:
            return ConfigError(f"length distribution {text!r}: {why}; use {DIST_FORMS}")

        if self.kind in ("fixed", "uniform"):
            if not (float(self.a).is_integer() and float(self.b).is_integer()):
                raise bad("give whole numbers of tokens")
            if self.a < 1 or (self.kind == "uniform" and self.b < self.a):
                raise bad("counts start at 1, and HI must not be below LO")
        elif self.a < 1 or self.b < 0:
            raise bad("the centre must be 1 or more and the spread 0 or more")

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` token counts from ``rng``, as int64 >= 1."""
        if self.kind == "fixed":
            return np.full(n, int(self.a), dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(int(self.a), int(self.b) + 1, size=n, dtype=np.int64)
        if self.kind == "normal":
            values = rng.normal(self.a, self.b, size=n)
        else:
            values = rng.lognormal(np.log(self.a), self.b, size=n)
        return np.maximum(np.rint(values), 1).astype(np.int64)

    def __str__(self) -> str:
        args = [self.a] if self.kind == "fixed" else [self.a, self.b]
        return f"{self.kind}:" + ",".join(f"{x:g}" for x in args)


def synthetic(
    n: int, input: Dist, output: Dist, seed: int = 0, tokenizer: str = ""
) -> list[Prompt]:
    """``n`` prompts of ``input`` words and ``output`` max_tokens, drawn with numpy's Generator
    seeded with ``seed`` (the same seed, the same prompts).

    Each text is exactly ``input_tokens`` whitespace-separated words drawn at random from
    ``VOCAB``, so that a server's prefix cache cannot serve every prompt from one prefix. A word
    is about 1.3 BPE tokens for real tokenizers (GPT-2's, Llama's): the server's usage counts
    more input tokens than ``input_tokens``. With ``tokenizer`` (a local tokenizer.json) the
    text keeps its drawn word count and ``input_tokens`` is that tokenizer's count of it.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ConfigError(f"number of prompts {n!r}: give a whole number of 1 or more")
    rng = np.random.default_rng(seed)
    ins, outs = input.draw(rng, n), output.draw(rng, n)
    words = rng.integers(0, len(VOCAB), size=int(ins.sum()))
    count = counter(tokenizer)
    prompts, at = [], 0
    for k, m in zip(ins.tolist(), outs.tolist(), strict=True):
        text = " ".join(_VOCAB[words[at : at + k]])
        at += k
        prompts.append(Prompt(text, count(text) if tokenizer else k, m))
    return prompts


def from_file(
    path: str | Path, fmt: str = "auto", *, output_tokens: int = 0, tokenizer: str = ""
) -> list[Prompt]:
    """The prompts of a file, in its order.

    JSONL (``fmt="jsonl"``): one JSON object a line, with ``prompt`` (or ``text``) and optional
    ``output_tokens`` (or ``max_tokens``; else ``DEFAULT_OUTPUT_TOKENS``); blank lines are
    skipped. ShareGPT (``fmt="sharegpt"``): a JSON list of ``{"conversations": [{"from":
    "human", "value": ...}, {"from": "gpt", "value": ...}, ...]}``: the first human turn is the
    prompt and the word count of the reply after it the output length, as vLLM's ShareGPT
    dataset takes a conversation's first two turns (vllm-project/vllm at f2e97dda,
    vllm/benchmarks/datasets.py ``ShareGPTDataset.sample``, which counts tokens where this
    counts words and also drops prompts or replies under 4 tokens; here only conversations
    with no human turn or no reply to it are skipped). ``auto`` takes a file whose first
    character is ``[`` as ShareGPT, else JSONL (whose lines may also be ShareGPT entries).

    ``output_tokens`` > 0 overrides every prompt's max_tokens; ``tokenizer``: a local
    tokenizer.json whose count of each prompt is its ``input_tokens`` (else whitespace words).
    """
    if fmt not in FORMATS:
        raise ConfigError(f"prompts format {fmt!r}: use one of {', '.join(FORMATS)}")
    path = Path(path)
    text = read_text(path, "prompts file", "a JSONL or ShareGPT JSON file")
    if fmt == "auto":
        fmt = "sharegpt" if text.lstrip().startswith("[") else "jsonl"
    rows = _sharegpt(path, text) if fmt == "sharegpt" else _jsonl(path, text)
    count = counter(tokenizer)
    prompts = []
    for where, prompt, out in rows:
        if not prompt.strip():
            raise ConfigError(f"prompts file {path} {where}: the prompt is empty; give it text")
        prompts.append(Prompt(prompt, count(prompt), output_tokens or out))
    if not prompts:
        raise ConfigError(
            f"prompts file {path}: no prompts in it; give JSONL lines "
            '{"prompt": "...", "output_tokens": 128} or ShareGPT conversations'
        )
    return prompts


def read_text(path: Path, what: str, kind: str) -> str:
    """The UTF-8 text of ``path``; a ``ConfigError`` naming ``what`` (e.g. "prompts file") and
    the ``kind`` of file to give otherwise."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{what} {path}: not found; give the path of {kind}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{what} {path}: not UTF-8 text ({e.reason}); save it as UTF-8") from None
    except OSError as e:
        raise ConfigError(
            f"{what} {path}: cannot be read ({e.strerror}); give a readable file"
        ) from None


def draw_words(rng: np.random.Generator):
    """``draw(k)``: the next ``k`` words of ``VOCAB`` from ``rng``."""
    return lambda k: [VOCAB[i] for i in rng.integers(0, len(VOCAB), size=k).tolist()]


_JSONL_FIX = 'each line must be a JSON object such as {"prompt": "Hello", "output_tokens": 128}'


def json_lines(text: str, source: str, fix: str):
    """(line number, value) of each non-blank line of the JSON-lines ``text``; a line that is
    not JSON is a ``ConfigError`` naming ``source``, the line and ``fix``."""
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{source} line {no}: not JSON ({e.msg}); {fix}") from None
        yield no, doc


def _jsonl(path: Path, text: str) -> list[tuple[str, str, int]]:
    rows = []
    for no, doc in json_lines(text, f"prompts file {path}", _JSONL_FIX):
        where = f"line {no}"
        if isinstance(doc, dict) and "conversations" in doc:
            row = _conversation(path, where, doc)
            if row:
                rows.append(row)
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("prompt", doc.get("text")), str):
            raise ConfigError(
                f"prompts file {path} {where}: no prompt (or text) string; {_JSONL_FIX}"
            )
        out = doc.get("output_tokens", doc.get("max_tokens", DEFAULT_OUTPUT_TOKENS))
        if not isinstance(out, int) or isinstance(out, bool) or out < 1:
            raise ConfigError(
                f"prompts file {path} {where}: output_tokens={out!r}; give a whole number of 1 "
                "or more, or leave it out"
            )
        rows.append((where, doc.get("prompt", doc.get("text")), out))
    return rows


def _sharegpt(path: Path, text: str) -> list[tuple[str, str, int]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"prompts file {path} line {e.lineno}: not JSON ({e.msg}); give a ShareGPT JSON list "
            'of {"conversations": [...]} objects'
        ) from None
    if not isinstance(doc, list):
        raise ConfigError(f"prompts file {path}: a ShareGPT file is a JSON list of conversations")
    rows = (_conversation(path, f"entry {i}", entry) for i, entry in enumerate(doc))
    return [row for row in rows if row]


def _conversation(path: Path, where: str, entry) -> tuple[str, str, int] | None:
    """(where, first human turn, words of the reply after it), or None with no such pair."""
    turns = entry.get("conversations") if isinstance(entry, dict) else None
    if not isinstance(turns, list) or not all(
        isinstance(t, dict) and isinstance(t.get("value"), str) for t in turns
    ):
        raise ConfigError(
            f"prompts file {path} {where}: not a ShareGPT conversation; give "
            '{"conversations": [{"from": "human", "value": "..."}, '
            '{"from": "gpt", "value": "..."}]}'
        )
    for i, turn in enumerate(turns[:-1]):
        if turn.get("from") in HUMAN:
            reply = turns[i + 1]
            words = len(reply["value"].split())
            if reply.get("from") in REPLY and words:
                return where, turn["value"], words
            return None
    return None


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None

"""The client's CPU per token of ``kfp-bench llm`` with and without ``--tokenizer``, against a
server with and without usage: what keeping each stream's chunks and re-tokenising the text of
the streams without usage costs (``load/stream.py``).

Starts ``kfp-bench llm-server`` in a process of its own (first token 1 ms, a token every 1 ms,
TOKENS tokens a stream), trains a byte-level BPE tokenizer on the synthetic prompts' words (no
hub), and runs the same closed-loop load (one client process) in four settings, ROUNDS times
each, interleaved so that a busy machine weighs on all alike: usage with no tokenizer (the path
as before the tokenizer was read), usage with a tokenizer (chunks kept, never decoded), no usage
with a tokenizer (decoded and re-tokenised), no usage with none (tokens unknown). Prints one JSON
line per setting: the client's user+system CPU per output token (µs), median over the rounds,
and writes them to a results file (bench/result_files.py) for BENCHMARKS.md.
Run with ``PYTHONPATH`` at a checkout from before ``--tokenizer`` to measure that one: the
settings with a tokenizer are then left out.

Usage: ``python bench/llm_tokenizer_cpu.py [REQUESTS [TOKENS [ROUNDS [ONLY]]]]`` (1000 64 3;
ONLY: run the settings whose name contains it, e.g. "usage, no")
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

import result_files
from peers import host
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from kfp_bench import __version__
from kfp_bench.load.llm import run_llm
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.prompts import VOCAB, Dist, synthetic
from kfp_bench.sandbox.llm_server import start_llm_server


def _bpe(folder: Path) -> str:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator([" ".join(VOCAB)] * 20 + [f" t{i}" for i in range(4096)], trainer)
    path = folder / "tokenizer.json"
    tok.save(str(path))
    return str(path)


def main(requests: int = 1000, tokens: int = 64, rounds: int = 3, only: str = "") -> None:
    started, machine, commit = result_files.now(), host(), result_files.commit()
    prompts = synthetic(64, Dist.parse("fixed:32"), Dist.parse(f"fixed:{tokens}"), seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        bpe = _bpe(Path(tmp))
        settings = {
            "usage, no tokenizer": ("", ()),
            "usage, tokenizer": (bpe, ()),
            "no usage, tokenizer": (bpe, ("X-Llm-Fault: no-usage",)),
            "no usage, no tokenizer": ("", ("X-Llm-Fault: no-usage",)),
        }
        if "tokenizer" not in LlmOptions.__dataclass_fields__:  # a checkout from before it
            settings = {k: v for k, v in settings.items() if not v[0]}
        settings = {k: v for k, v in settings.items() if only in k}
        cpu: dict[str, list[float]] = {k: [] for k in settings}
        with start_llm_server(first_token_ms=1, token_gap_ms=1, max_tokens=tokens) as server:
            for _ in range(rounds):
                for name, (tok, headers) in settings.items():
                    kw = {"tokenizer": tok} if tok else {}
                    opts = LlmOptions(
                        url=server.url + "/openai", model="m", requests=requests,
                        concurrency=16, headers=headers, **kw,
                    ).validate()  # fmt: skip
                    stats = run_llm(opts, prompts)
                    c = stats.client_cpu
                    chunks = stats.counts["content_chunks"]
                    cpu[name].append((c["user_s"] + c["system_s"]) / chunks * 1e6)
        for name, values in cpu.items():
            print(json.dumps({"setting": name, "us_per_token": round(statistics.median(values), 2),
                              "rounds": [round(v, 2) for v in values]}))  # fmt: skip
    rows = [[k, round(statistics.median(v), 2), ", ".join(f"{x:.2f}" for x in v)]
            for k, v in cpu.items()]  # fmt: skip
    print(result_files.save(result_files.Result(
        benchmark="llm-tokenizer-cpu",
        title="LLM load: the client's CPU per token with --tokenizer",
        command=result_files.command(), started=started, commit=commit, machine=machine,
        versions={"kfp-bench": __version__},
        tables=[result_files.Table(
            f"one client process, 16 streams, {requests} requests of {tokens} tokens, "
            "a byte-level BPE; settings interleaved, median of the rounds",
            ["setting", "µs per token", "rounds"], rows,
        )],
    )))  # fmt: skip


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]), *sys.argv[4:5])

"""The schedule and workload flags of ``load`` and ``llm``: --stages, --trace, --trace-speed and
(``llm``) --shared-prefix and --multi-turn, their checks and the options they make; --trace's
requests read once (``trace_of``), whose prompts ``cli.llm`` sends."""

from __future__ import annotations

import argparse

from kfp_bench._doc import field_help
from kfp_bench.errors import ConfigError
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.stages import parse_stages, total_s

# Imports inside functions: the CLI imports every command's module to build its parser: what only
# running a command needs is imported there, so that --help and a refused flag start at once
# (bench/cli_startup.py).

TRACE_HELP = (
    'Replay a JSONL trace, one request a line: {"offset": SECONDS} (llm: and "prompt": TEXT or '
    '"input_tokens": N, optional "output_tokens"), sent at start + offset (open loop); no -z, '
    "-n or --rate beside it."
)
SHARED_PREFIX_HELP = (
    "Shared-prefix prompts: S system prompts of PREFIX_LEN words, each shared by U users with a "
    "question of QUESTION_LEN words (with --tokenizer: its tokens; inference-perf's "
    "shared_prefix); --output-tokens gives their max_tokens. Instead of synthetic prompts or "
    "--prompts-file."
)
MULTI_TURN_HELP = (
    "Chat sessions of TURNS turns (--endpoint chat): each -c lane runs whole sessions, or with "
    "--rate sessions start at that rate (sessions/s); turn k sends turns 1..k-1's prompts and "
    "the answers as streamed, then a new prompt (the next of the prompts), THINK_S seconds "
    "(default 0) after turn k-1's stream ended. A failed turn ends its session. -n counts "
    "sessions. Reports add TTFT and input tokens per turn. E.g. 5,2."
)


def add_workload_flags(g, *, llm: bool = False) -> None:
    """--stages, --trace and --trace-speed; with ``llm``, --shared-prefix."""
    g.add_argument("--stages", default="", metavar="STAGES", help=field_help(LoadOptions, "stages"))
    g.add_argument("--trace", default="", metavar="FILE", help=TRACE_HELP)
    g.add_argument(
        "--trace-speed", type=float, default=1.0, metavar="X",
        help=field_help(LoadOptions, "trace_speed"),
    )  # fmt: skip
    if llm:
        g.add_argument(
            "--shared-prefix", default="", metavar="S,U,PREFIX_LEN,QUESTION_LEN",
            help=SHARED_PREFIX_HELP,
        )  # fmt: skip
        g.add_argument("--multi-turn", default="", metavar="TURNS[,THINK_S]", help=MULTI_TURN_HELP)


def schedule_options(a: argparse.Namespace) -> dict:
    """The ``LoadOptions`` fields of --stages and --trace (none when neither is given): the
    stages and their sum as the duration, or the trace's offsets and one request per line.
    ``ConfigError`` for -z or -n beside them, before anything is read or sent. With
    --multi-turn (``llm``), its turns and think time too."""
    turns = {}
    if getattr(a, "multi_turn", ""):
        from kfp_bench.load.openai import parse_multi_turn

        turns = dict(zip(("turns", "think_time"), parse_multi_turn(a.multi_turn), strict=True))
    return {**_schedule(a), **turns}


def _schedule(a: argparse.Namespace) -> dict:
    stages, trace = getattr(a, "stages", ""), getattr(a, "trace", "")
    if not (stages or trace):
        return {}
    flag = "--stages" if stages else "--trace"
    if a.duration:
        raise ConfigError(f"-z beside {flag}: the {'stages set' if stages else 'trace sets'} "
                          "how long the load runs; drop -z")  # fmt: skip
    if getattr(a, "requests", None) is not None:
        raise ConfigError(f"-n beside {flag}: the {'stages' if stages else 'trace'} set how many "
                          "requests go; drop -n")  # fmt: skip
    if stages:
        parsed = parse_stages(stages)
        return {"stages": parsed, "duration": total_s(parsed)}
    offsets, _ = trace_of(a)
    return {"trace": offsets, "requests": len(offsets), "trace_speed": a.trace_speed}


def trace_of(a: argparse.Namespace):
    """(offsets, prompts) of --trace, read once per command line."""
    if getattr(a, "_trace", None) is None:
        from kfp_bench.load.trace import read_trace

        llm = hasattr(a, "shared_prefix")
        seed = a.seed if a.seed is not None else 0
        out = getattr(a, "max_tokens", 0)
        tok = getattr(a, "tokenizer", "")
        a._trace = read_trace(a.trace, prompts=llm, output_tokens=out, seed=seed, tokenizer=tok)
    return a._trace

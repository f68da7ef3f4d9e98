"""What a benchmark's flags say about how it ended, and the exit code that tells it.

A result's ``flags`` mix notes (``i-know``: a cap raised on purpose) with warnings and failures.
This module owns the failures (their names, what each means, and the exit code of the command
that met one) and the warnings (their names and meanings; they never change the exit code).
The CLI's commands return ``exit_code(flags)``; the pipeline's Metrics and report show the same
flags (``failures(flags)``), so that a dashboard, a nightly schedule and a shell script read one
truth.

Exit codes (also in the docs, Exit codes and flags, generated from this table):

====  ==========================================================================================
0     everything asked was done, and everything created was cleaned up (or kept, as asked)
1     the benchmark ran but did not do all that was asked (timeout, failed creates, nothing
      created, a lost load worker or helper step, an engine error, no LLM stream completed, no
      request of a load or sweep step got a response)
2     bad input: nothing was sent or created (a ``--baseline`` key the results history does
      not hold is found by reading it: nothing else is sent); no rerun mends it
3     a gate broke: a ``--threshold`` bound (the figure beyond it, or not measured), or a
      regression verdict with ``--fail-on-regression`` (``kfp_bench.gates``); the report's
      first lines say which
4     something the benchmark created is left behind (cleanup failed, or a LIST that could not be
      read may hide some); the summary says what may remain and ``kfp-bench cleanup`` removes it
5     the measurements could not be written where asked; they are on stdout or in the fallback
      file the message names
130   interrupted (Ctrl-C); what was measured is still printed and saved
====  ==========================================================================================

When several apply, the first in this order wins: interrupted, left behind, not saved, failed,
gate broke (``gated``).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_GATE = 3
EXIT_REGRESSION = EXIT_GATE  # the regression verdict is a gate
EXIT_LEFT_BEHIND = 4
EXIT_NOT_SAVED = 5
EXIT_INTERRUPTED = 130

#: Failure flag -> (exit code, what it means). Any other flag is a note.
FAILURES: dict[str, tuple[int, str]] = {
    "interrupted": (EXIT_INTERRUPTED, "interrupted before it finished"),
    "left-behind": (EXIT_LEFT_BEHIND, "objects of the benchmark remain on the server"),
    "cleanup-failed": (EXIT_LEFT_BEHIND, "a cleanup call failed; objects may remain"),
    "list-failed": (EXIT_LEFT_BEHIND, "a LIST could not be read; runs it would show may remain"),
    "not-saved": (EXIT_NOT_SAVED, "the results could not be written where asked"),
    "timeout": (EXIT_FAILED, "runs were not final by the timeout"),
    "create-failed": (EXIT_FAILED, "some runs could not be created"),
    "no-runs": (EXIT_FAILED, "no run was created"),
    "poller-killed": (EXIT_FAILED, "the poller was killed; a later step finished its work"),
    "workers-lost": (EXIT_FAILED, "a load worker's result is missing or unreadable"),
    "no-load": (EXIT_FAILED, "no load worker's result could be read"),
    "step-failed": (EXIT_FAILED, "a helper step failed to measure; its error is in the report"),
    "engine-error": (EXIT_FAILED, "the load engine hit a bug of its own"),
    "none-completed": (
        EXIT_FAILED,
        "no measured LLM stream completed: no token timing stands (the errors say why)",
    ),
    "no-response": (
        EXIT_FAILED,
        "no request of the load got a response: no latency figure stands (the errors say why)",
    ),
}
#: Warning flag -> what it means: worth a reader's attention, never a failure (exit code 0). The
#: LLM load's usage checks (``kfp_bench.stats.llm``) are warnings: the stream was measured; what
#: is in doubt is a token count, and the summary says how many requests each concerns.
WARNINGS: dict[str, str] = {
    "usage-mismatch": (
        "completed streams whose usage was missing (and no tokenizer counted them) or counted "
        "fewer tokens than content chunks: TPOT may be off for them"
    ),
    "multi-token-chunks": (
        "completed streams with more tokens (usage's or the tokenizer's) than content chunks: the "
        "server sends several tokens a chunk, so ITL is per chunk, not per token"
    ),
    "tokens-from-tokenizer": (
        "the server sent no usage for some streams: their tokens are the tokenizer's count of the "
        "prompt (a chat's through the chat template saved beside it, if any) and of the "
        "streamed text"
    ),
    "tokens-unknown": (
        "some completed streams came without usage (the server sends none) and no tokenizer "
        "counted them: the token figures are unknown, not zero; pass --tokenizer (the model's "
        "tokenizer.json) to count them"
    ),
    "no-done-marker": (
        "some streams ended after a finish_reason without data: [DONE] (as transformers serve "
        "ends them): counted as completed"
    ),
    "mixed-latency": (
        "results saved before kfp-bench kept requests without a response apart: their latency "
        "figures include the failed requests' times"
    ),
    "read-time-tokens": (
        "some reads of the LLM streams had no kernel receive time (no SO_TIMESTAMPNS here): "
        "their tokens were timed when the client read them, which adds the client's own delay"
    ),
}
_ORDER = (EXIT_INTERRUPTED, EXIT_LEFT_BEHIND, EXIT_NOT_SAVED, EXIT_FAILED)


def failures(flags) -> list[str]:
    """The failure flags among ``flags``, in their given order, each once."""
    return list(dict.fromkeys(f for f in flags if f in FAILURES))


def exit_code(flags) -> int:
    """The exit code of a command whose result carries ``flags``: 0 when none is a failure."""
    codes = {FAILURES[f][0] for f in failures(flags)}
    return next((c for c in _ORDER if c in codes), EXIT_OK)


def gated(code: int, verdicts) -> int:
    """The exit code of a command whose flags gave ``code`` and whose gates gave ``verdicts``
    (``kfp_bench.gates.Verdict``): a failure's code first, then ``EXIT_GATE`` if one broke."""
    return code or (EXIT_GATE if any(v.broken for v in verdicts) else EXIT_OK)


def summary_flags(summary: dict) -> list[str]:
    """Every flag of a results summary (summary.json), each once: the pipeline's
    (``pipeline.flags``), the load's (``load.flags``), the rate sweep's steps' (``failures`` of
    each ``sweep`` row, as ``kfp-bench sweep`` exits on them) and the runs benchmark's
    (``flags``)."""
    pipeline, load = summary.get("pipeline") or {}, summary.get("load") or {}
    found = [*(pipeline.get("flags") or []), *(load.get("flags") or [])]
    found += [f for row in summary.get("sweep") or [] for f in row.get("failures") or []]
    return list(dict.fromkeys([*found, *(summary.get("flags") or [])]))


def describe(flags) -> list[str]:
    """One line per failure flag: ``<flag>: <what it means>``."""
    return [f"{f}: {FAILURES[f][1]}" for f in failures(flags)]


def describe_warnings(flags) -> list[str]:
    """One line per warning flag among ``flags`` (``WARNINGS``), in their given order, each
    once: ``<flag>: <what it means>``."""
    return [f"{f}: {WARNINGS[f]}" for f in dict.fromkeys(flags) if f in WARNINGS]


#: Flags that say how a run was set up (``--insecure``, ``--i-know``): the same on every step of
#: a sweep, so not among the flags shown beside a step.
SETTINGS = frozenset({"insecure", "i-know"})


def step_warnings(flags) -> list[str]:
    """A sweep step's flags shown beside its row and the knee: every flag but a failure (the
    row's ``failures``) and a setting, in their given order, each once."""
    return [f for f in dict.fromkeys(flags) if f not in FAILURES and f not in SETTINGS]

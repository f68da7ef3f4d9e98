"""The prefix-cache hits a server reports in its usage: ``prompt_tokens_details.cached_tokens``.

A row's ``cached_tokens`` (``records.STREAM_COLUMNS``) is what its usage said, -1 when the usage
had no ``prompt_tokens_details.cached_tokens``. vLLM sends the field only with
``--enable-prompt-tokens-details``, and then only when it is not 0
(vllm/entrypoints/openai/serving_chat.py, ``if self.enable_prompt_tokens_details and
num_cached_tokens``), so the figure is known once any measured request carried it, and its rows
without it count 0; when none did it is unknown (None), never 0. The hit rate is cached tokens
over the prompt tokens the server's usage counted (never a tokenizer's count): over the run,
per turn (``stats.turns``) and per session (each session's own ratio, summarised over the
sessions). Integer counts only, so a merge over processes is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kfp_bench.errors import ResultsError
from kfp_bench.records import MARK_PROMPT_TOKENIZED

_COUNTS = ("cached_tokens", "reported", "prompt_tokens", "counted")


def usage_rows(prompt: np.ndarray, marks: np.ndarray, cached: np.ndarray):
    """(rows whose usage counted the prompt, cached tokens with -1 as 0, rows that said them)."""
    counted = (prompt >= 0) & ((marks & MARK_PROMPT_TOKENIZED) == 0)
    return counted, np.where(counted & (cached > 0), cached, 0), counted & (cached >= 0)


def hit_rate(cached: int, prompt: int, known: bool) -> float | None:
    """Cached over prompt tokens; None when unknown or no prompt token was counted."""
    return cached / prompt if known and prompt > 0 else None


@dataclass
class CachedTokens:
    """The usage's cached tokens of a load: ``counts`` over the run, ``sessions`` per session of
    a multi-turn load (its number: [cached tokens, prompt tokens])."""

    counts: dict = field(default_factory=lambda: dict.fromkeys(_COUNTS, 0))
    sessions: dict = field(default_factory=dict)

    def add(self, prompt, marks, cached, session=None) -> None:
        """Add rows: their usage's ``prompt`` tokens (-1: none), ``marks``, ``cached`` tokens
        (-1: none said) and, in a multi-turn load, their ``session`` numbers."""
        counted, tokens, said = usage_rows(prompt, marks, cached)
        c = self.counts
        c["cached_tokens"] += int(tokens.sum())
        c["reported"] += int(np.count_nonzero(said))
        c["prompt_tokens"] += int(prompt[counted].sum())
        c["counted"] += int(np.count_nonzero(counted))
        if session is None:
            return
        numbers, at = np.unique(session[counted], return_inverse=True)
        cached_by = np.bincount(at, tokens[counted], len(numbers))
        prompt_by = np.bincount(at, prompt[counted], len(numbers))
        for n, k, p in zip(numbers.tolist(), cached_by.tolist(), prompt_by.tolist(), strict=True):
            mine = self.sessions.setdefault(n, [0, 0])
            mine[0] += round(k)  # bincount sums in floats: exact for counts below 2**53
            mine[1] += round(p)

    def merge(self, other: CachedTokens) -> None:
        for k in _COUNTS:
            self.counts[k] += other.counts[k]
        for n, (cached, prompt) in other.sessions.items():
            mine = self.sessions.setdefault(n, [0, 0])
            mine[0] += cached
            mine[1] += prompt

    @property
    def known(self) -> bool:
        """Whether the server said its cached tokens (in any row's usage)."""
        return self.counts["reported"] > 0

    def to_dict(self) -> dict:
        return {**self.counts, "sessions": [[n, *v] for n, v in sorted(self.sessions.items())]}

    @classmethod
    def from_dict(cls, doc: dict | None, source: str = "results") -> CachedTokens:
        """Rebuild from ``to_dict``'s document; None (results saved before it): nothing said."""
        if doc is None:
            return cls()
        try:
            counts = {k: int(doc[k]) for k in _COUNTS}
            sessions = {int(n): [int(c), int(p)] for n, c, p in doc["sessions"]}
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultsError(f"{source}: malformed cached-token counts ({exc!r})") from None
        return cls(counts, sessions)

    def summary(self) -> dict:
        """``hit_rate`` (None: unknown), ``cached_tokens`` (None: unknown), ``prompt_tokens``
        and ``requests`` (those whose usage counted the prompt), ``reported`` (of those, the
        ones whose usage said cached tokens), and ``sessions``: None, or the sessions' count
        and their hit rates' ``min``, ``p50``, ``mean`` and ``max``."""
        c, known = self.counts, self.known
        out = {
            "hit_rate": hit_rate(c["cached_tokens"], c["prompt_tokens"], known),
            "cached_tokens": c["cached_tokens"] if known else None,
            "prompt_tokens": c["prompt_tokens"],
            "requests": c["counted"],
            "reported": c["reported"],
            "sessions": None,
        }
        rates = [cached / prompt for cached, prompt in self.sessions.values() if prompt > 0]
        if known and rates:
            r = np.asarray(rates)
            out["sessions"] = {"count": len(rates), "min": float(r.min()),
                               "p50": float(np.median(r)), "mean": float(r.mean()),
                               "max": float(r.max())}  # fmt: skip
        return out

"""The text summary of a streaming (LLM) load: a pure function of its ``LlmStats``.

Laid out like hey's summary (``report/hey.py``): sections with tab-separated labels, then the
notes a reader must see (warnings such as ``usage-mismatch``, warm-up, out-of-range samples).
The figures' definitions are in ``kfp_bench.stats.llm`` and docs/llm-metrics.md.
"""

from __future__ import annotations

from typing import TextIO

from kfp_bench.figures import DASH, HDR_MS, fixed, pct
from kfp_bench.outcome import describe, describe_warnings
from kfp_bench.report import cost
from kfp_bench.report.hey import write_distributions
from kfp_bench.report.server_text import prefix_lines
from kfp_bench.stats.cost import KEY, of_llm
from kfp_bench.stats.llm import MULTI_TOKEN_CHUNKS, LlmStats, LlmSummary

COLUMNS = ("p50", "p90", "p95", "p99", "p99_9", "max", "mean")
#: Histogram key -> label; the ``intended`` and lag rows only in open loop, where they differ.
ROWS = {
    "ttft": "TTFT",
    "ttft_intended": "TTFT from intended",
    "itl": "ITL",
    "tpot": "TPOT",
    "e2e": "E2E",
    "e2e_intended": "E2E from intended",
    "lag": "Sched. lag",
}
OPEN_LOOP_ONLY = ("ttft_intended", "e2e_intended", "lag")


def write_text(stats: LlmStats, out: TextIO) -> None:
    """Write the summary of ``stats`` to ``out``, as hey.write_text does a predict load's (with a
    price in its options, what it cost: report/cost.py)."""
    s = stats.summary()
    w = out.write
    w("\nSummary:\n")
    w(f"  Requests:\t{s.requests} ({s.completed} completed, {s.failed} failed)\n")
    w(f"  Total:\t{fixed(s.duration_s, 4)} secs (measured {fixed(s.measured_s, 4)} secs)\n")
    w(f"  Requests/sec:\t{fixed(s.rps, 4)}\n")
    w(f"  Output tokens:\t{_tokens(s.output_tokens, s.output_tokens_per_s)}\n")
    w(f"  Input tokens:\t{_tokens(s.input_tokens, s.input_tokens_per_s)}\n")
    w(f"  Cached input tokens:\t{cached_text(s.cached)}\n")
    w("\nLatency (ms):\n")
    w("  \tcount\t" + "\t".join(c.replace("_", ".") for c in COLUMNS) + "\n")
    for key in ROWS:
        if key in OPEN_LOOP_ONLY and not s.corrected:
            continue
        lat = s.latency_ms[key]
        cells = "\t".join(latency(lat, c) for c in COLUMNS) if lat["count"] else DASH
        w(f"  {row_label(s, key)}:\t{lat['count']}\t{cells}\n")
    if s.turns:
        write_turns(s.turns, w, s.cached)
    w(f"\nGoodput ({'SLO ' + s.slo if s.slo else 'no SLO: every completed request'}):\n")
    w(f"  Good:\t{s.good} of {s.requests} ({pct(s.good_ratio)}), {fixed(s.goodput_rps, 4)}/sec\n")
    cost.write_text(of_llm(s, stats.options.get(KEY)), w, llm=True)
    write_distributions(s.status_codes, s.errors, w)
    _write_notes(s, w)
    w("\n")


def latency(lat: dict, stat: str) -> str:
    """A statistic of a latency histogram (ms): to the microsecond it records, a mean to three
    decimals."""
    return fixed(lat[stat], 3, None if stat == "mean" else HDR_MS)


def turn_cells(row: dict) -> list[str]:
    """A turn's cells: turn, requests, failed, mean input tokens, TTFT p50 and p99, E2E p50 (ms)."""

    def ms(m: str, p: str) -> str:
        return DASH if row[m]["p50"] is None else latency(row[m], p)

    inp, hit = row["input_tokens_mean"], row.get("cached_hit_rate")
    return [str(row["turn"]), str(row["requests"]), str(row["failed"]),
            "unknown" if inp is None else fixed(inp, 1),
            "unknown" if hit is None else pct(hit, 2), ms("ttft", "p50"), ms("ttft", "p99"),
            ms("e2e", "p50")]  # fmt: skip


TURN_HEADER = ("turn", "requests", "failed", "input tokens (mean)", "cached", "TTFT p50",
               "TTFT p99", "E2E p50")  # fmt: skip


def cached_text(c: dict, count=str) -> str:
    """The usage's cached prompt tokens (``LlmSummary.cached``): "N of M (R%)", or "unknown"
    when the server said none (vLLM: without --enable-prompt-tokens-details)."""
    if c["cached_tokens"] is None:
        return "unknown (no usage.prompt_tokens_details)"
    rate = DASH if c["hit_rate"] is None else pct(c["hit_rate"], 2)
    return f"{count(c['cached_tokens'])} of {count(c['prompt_tokens'])} ({rate})"


def sessions_cached(c: dict) -> str:
    """The sessions' own hit rates (``LlmSummary.cached["sessions"]``), or "" without them."""
    s = c.get("sessions")
    if not s:
        return ""
    return (f"{s['count']} sessions: min {pct(s['min'], 2)}, median {pct(s['p50'], 2)}, "
            f"mean {pct(s['mean'], 2)}, max {pct(s['max'], 2)}")  # fmt: skip


def sessions_line(turns: list[dict]) -> str:
    """ "N sessions of T turns, M whole": sessions started (their first turns) and completed."""
    return (f"{turns[0]['requests']} sessions of {len(turns)} turns, "
            f"{turns[-1]['completed']} whole")  # fmt: skip


def write_turns(turns: list[dict], w, cached: dict | None = None) -> None:
    """The per-turn table of a multi-turn load (``LlmSummary.turns``): the input grows with the
    history each turn carries; then the sessions' cached-token hit rates (``cached``)."""
    w(f"\nPer turn ({sessions_line(turns)}; ms; input and cached tokens from the server's "
      "usage):\n")  # fmt: skip
    w("  " + "\t".join(TURN_HEADER) + "\n")
    for row in turns:
        w("  " + "\t".join(turn_cells(row)) + "\n")
    per_session = sessions_cached(cached or {})
    if per_session:
        w(f"  Cached per session:\t{per_session}\n")


def _tokens(total: int | None, per_s: float | None) -> str:
    return "unknown" if total is None else f"{total} ({fixed(per_s, 4)}/sec)"


def row_label(s: LlmSummary, key: str) -> str:
    """A latency row's label: ITL says "per chunk" when chunks carry several tokens."""
    per_chunk = key == "itl" and MULTI_TOKEN_CHUNKS in s.flags
    return ROWS[key] + (" (per chunk)" if per_chunk else "")


def token_notes(s: LlmSummary, count=str) -> list[str]:
    """Where the token counts came from, when not all from the server's usage."""
    t, notes = s.tokens, []
    if t["tokenized_output"] or t["tokenized_input"]:
        notes.append(
            f"tokens: counted by the tokenizer for {count(t['tokenized_output'])} requests' "
            f"output and {count(t['tokenized_input'])} prompts (the server sent no usage)"
        )
    if t["chunk_counted"] or t["input_unknown"]:
        notes.append(
            f"tokens unknown: {count(max(t['chunk_counted'], t['input_unknown']))} completed "
            "requests without usage or a tokenizer's count; their TPOT divides by content chunks"
        )
    elif t["chunk_counted_failed"]:
        notes.append(
            f"tokens: the output of {count(t['chunk_counted_failed'])} failed requests is their "
            "content chunks (no usage came before they failed)"
        )
    if s.no_done:
        notes.append(f"{count(s.no_done)} completed streams ended without data: [DONE]")
    return notes


def measured_notes(s: LlmSummary, count=str) -> list[str]:
    """What a reader must know of the figures' samples: requests with no content chunk, the
    warm-up left out, samples out of the histograms' range (``count`` formats a number)."""
    notes = []
    if s.no_content:
        notes.append(f"{count(s.no_content)} requests without a content chunk (no TTFT)")
    if s.warmup_excluded:
        notes.append(f"{count(s.warmup_excluded)} requests sent in the warm-up, not counted")
    lost = {k: v for k, v in s.out_of_range.items() if v}
    if lost:
        what = ", ".join(f"{ROWS[k]} {count(v)}" for k, v in lost.items())
        notes.append(f"samples out of the histograms' range (below 0 or beyond 1 h): {what}")
    return notes


def _write_notes(s: LlmSummary, w) -> None:
    notes = [*describe(s.flags), *describe_warnings(s.flags)]
    u = s.usage
    if u["missing"] or u["fewer"]:
        notes.append(f"usage: {u['missing']} completed without usage, {u['fewer']} with fewer")
        notes[-1] += " tokens than content chunks"
    if u["more"]:
        notes.append(f"usage: {u['more']} completed with more tokens than content chunks")
    notes += token_notes(s)
    notes += measured_notes(s)
    if notes:
        w("\nNotes:\n")
        for note in notes:
            w(f"  {note}\n")


def write_prefix_cache(server, out: TextIO, cached: dict | None = None) -> None:
    """The server's prefix-cache hit rate over the load (``server``: its series, or None when
    none were asked for: nothing is written), and beside it the one its usage gave the client
    (``cached``: ``LlmSummary.cached``)."""
    if server is None:
        return
    out.write("\nServer:\n")
    for line in prefix_lines(server, cached):
        label, _, value = line.partition(": ")
        out.write(f"  {label}:\t{value}\n")

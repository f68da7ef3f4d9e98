"""hey's summary layout, from finished load stats; and hey's CSV of per-request rows.

The text follows hey's sections and formats (``%4.4f secs``, a 10-bucket response time histogram,
the 10/25/50/75/90/95/99% latency distribution, the phase details, status codes and errors), so
scripts that read hey's output read this too. kfp-bench adds lines hey does not have (the
coordinated-omission corrected figures in rate mode, the requests without a response, the load
generator's own CPU, requests not sent, missing workers) after hey's sections, never inside them.
As in hey, the latency sections are of the responses only; when there was none they are left
out, and the summary says so.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

from kfp_bench.figures import HDR_MS, HDR_S, fixed, pct, sig
from kfp_bench.outcome import describe
from kfp_bench.records import ENGINE_ERROR, ResultBatch
from kfp_bench.report import cost
from kfp_bench.stats.load import (
    MIXED_LATENCY,
    NO_RESPONSE,
    LoadStats,
    cpu_caveat,
    cpu_figures,
)

BAR = "■"
HEY_PCTS = (10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0)


def write_text(stats: LoadStats, out: TextIO) -> None:
    """Write the summary of ``stats`` in hey's layout."""
    s = stats.summary()
    w = out.write
    w("\nSummary:\n")
    w(f"  Total:\t{fixed(s.duration_s, 4)} secs\n")
    if s.latency_ms is not None:
        lat = stats.latency
        w(f"  Slowest:\t{fixed(lat.max_us / 1e6, 4, HDR_S)} secs\n")
        w(f"  Fastest:\t{fixed(lat.min_us / 1e6, 4, HDR_S)} secs\n")
        w(f"  Average:\t{fixed(lat.mean_us / 1e6, 4)} secs\n")
    w(f"  Requests/sec:\t{fixed(s.rps, 4)}\n")
    if s.latency_ms is None:
        w(f"  No response:\tnone of {s.requests} requests got one: no latency figures\n")
    if stats.bytes_in > 0:
        w(f"  \n  Total data:\t{stats.bytes_in} bytes\n")
        w(f"  Size/request:\t{stats.bytes_in // max(stats.requests, 1)} bytes\n")
    if s.latency_ms is not None:
        _write_latency(stats, w)
    write_distributions(stats.status_codes, stats.errors, w)
    _write_extras(stats, w)
    cost.write_text(cost.of_load_stats(stats), w, llm=False)
    w("\n")


def write_distributions(status_codes: dict, errors: dict, w) -> None:
    """hey's status code and error distributions (codes in order, errors most frequent first);
    the LLM summary writes the same sections (``report.llm_text``). Errors that differ only in
    their numbers (a server naming each prompt's token count, a port, an id) are one line, and
    at most ``MAX_ERROR_LINES`` lines are written (``group_errors``)."""
    w("\nStatus code distribution:\n")
    for code, n in sorted(status_codes.items()):
        w(f"  [{code}]\t{n} responses\n")
    if errors:
        w("\nError distribution:\n")
        for text, n in error_lines(errors):
            w(f"  [{n}]\t{text}\n")


def error_lines(errors: dict, sep: str = "  ") -> list[tuple[str, int]]:
    """The lines of an error table, (text, requests): a group's example and the number of other
    texts like it (``group_errors``), at most ``MAX_ERROR_LINES``, then one for the rest."""
    groups = group_errors(errors)
    lines = [
        (example + (f"{sep}(and {texts - 1} more like it)" if texts > 1 else ""), n)
        for example, n, texts in groups[:MAX_ERROR_LINES]
    ]
    if rest := groups[MAX_ERROR_LINES:]:
        lines.append((f"and {len(rest)} more kinds of error", sum(g[1] for g in rest)))
    return lines


#: The error lines written at most; the remaining kinds are summed in one line.
MAX_ERROR_LINES = 10
#: Characters of an error (its numbers read as one) that say its kind. The engine keeps the first
#: part of an error body, so a message naming numbers of other widths is cut at another word: two
#: such texts differ at their ends, and their kind is in their first part.
KIND_CHARS = 100
_NUMBER = re.compile(r"\d+")
#: The status an LLM stream's error starts with ("http 500: ..."), kept whole in the grouping:
#: a 400 and a 500 are different errors.
_STATUS = re.compile(r"http \d{3}\b", re.IGNORECASE)


def group_errors(errors: dict) -> list[tuple[str, int, int]]:
    """``errors`` (text -> count) grouped by their first ``KIND_CHARS`` characters with every run
    of digits read as one number (but an ``http NNN`` status at the start): ``(example, count,
    texts)`` per group, most requests first (ties in the order the texts were counted, as
    ``Counter.most_common``), the example its most frequent text.

    A display matter only: the saved results keep every text and its count, so that merged
    workers add up exactly and a reader can still see each one in the JSON."""
    groups: dict[str, list] = {}
    for text, n in sorted(errors.items(), key=lambda item: -item[1]):
        head = m.group(0) if (m := _STATUS.match(text)) else ""
        key = (head + _NUMBER.sub("N", text[len(head) :]))[:KIND_CHARS]
        g = groups.setdefault(key, [text, 0, 0])
        g[1] += n
        g[2] += 1
    return sorted((tuple(g) for g in groups.values()), key=lambda g: -g[1])


def write_stages(stats, out: TextIO | None = None) -> None:
    """The per-stage table of a load run in stages (``stats.stages``, predict or LLM), after the
    text report: one line per stage, where it sits, the requests scheduled and measured, the
    successes per second and p50/p99 of each latency kept (ms; "-" for a stage without one)."""
    if getattr(stats, "stages", None) is None:
        return
    rows, out = stats.stages.summary(), out or sys.stdout
    if not rows:
        return
    metrics = [k for k in ("latency", "ttft", "e2e") if k in rows[0]]
    head = f"  {'stage':<22} {'from':>7} {'to':>7} {'sched':>6} {'sent':>6} {'ok':>6} {'ok/s':>8}"
    for m in metrics:
        head += f" {m + ' p50':>11} {m + ' p99':>11}"
    if "tokens_per_s" in rows[0]:
        head += f" {'tok/s':>8}"
    print("\nStages (by intended send time):", file=out)
    print(head, file=out)
    for r in rows:
        line = (
            f"  {r['stage'][:22]:<22} {r['start_s']:>6g}s {r['end_s']:>6g}s {r['scheduled']:>6} "
            f"{r['requests']:>6} {r['ok']:>6} {fixed(r['throughput'], 2):>8}"
        )
        for m in metrics:
            p = r[m]
            if p:
                line += f" {fixed(p['p50'], 2, HDR_MS):>11} {fixed(p['p99'], 2, HDR_MS):>11}"
            else:
                line += f" {'-':>11} {'-':>11}"
        if "tokens_per_s" in r:
            line += f" {fixed(r['tokens_per_s'], 1):>8}"
        print(line, file=out)


def _write_latency(stats: LoadStats, w) -> None:
    """hey's histogram, latency distribution and phase details: of the responses."""
    lat = stats.latency
    w("\nResponse time histogram:\n")
    buckets = lat.buckets(lat.min_us, lat.max_us, 10)
    top = max((c for _, c in buckets), default=0)
    for mark, count in buckets:
        bar = BAR * ((count * 40 + top // 2) // top) if top else ""
        w(f"  {fixed(mark / 1e6, 3, HDR_S)} [{count}]\t|{bar}\n")
    w("\n\nLatency distribution:\n")
    for p, v in lat.percentiles_us(HEY_PCTS).items():
        if v > 0:
            w(f"  {p:g}% in {fixed(v / 1e6, 4, HDR_S)} secs\n")
    w("\nDetails (average, fastest, slowest):\n")
    labels = {
        "connect": "DNS+dialup",
        "dns": "DNS-lookup",
        "write": "req write",
        "wait": "resp wait",
        "read": "resp read",
    }
    for key, label in labels.items():
        d = stats.phases[key].as_dict()
        mean, low, high = (fixed(d[k], 4) for k in ("mean_s", "min_s", "max_s"))
        w(f"  {label}:\t{mean} secs, {low} secs, {high} secs\n")


def _write_extras(stats: LoadStats, w) -> None:
    """kfp-bench's own lines, after hey's sections."""
    s = stats.summary()
    if stats.corrected and s.latency_ms is not None:
        w("\nOpen loop (latency from the intended send time, corrected for coordinated")
        w(" omission):\n")
        w("  \tcorrected\tuncorrected\n")
        for key in ("p50", "p90", "p99", "p99_9", "max", "mean"):
            res = None if key == "mean" else HDR_MS
            corrected, uncorrected = s.latency_ms[key], s.uncorrected_ms[key]
            w(f"  {key}:\t{fixed(corrected, 3, res)} ms\t{fixed(uncorrected, 3, res)} ms\n")
    _write_no_response(s.requests, s.no_response, w)
    cpu = cpu_figures(stats)
    if cpu:
        w("\nLoad generator CPU (kfp-bench's own, while sending):\n")
        w(f"  Cores:\t{fixed(cpu['cores'], 2)} on average;")
        w(f" busiest process {pct(cpu['busiest'], 0)} of a core\n")
        w(f"  Per request:\t{fixed(cpu['us_per_request'], 1)} us")
        w(f" (user {fixed(cpu['user_s'], 2)} s, system {fixed(cpu['system_s'], 2)} s")
        w(f" in {cpu['processes']} process{'es' if cpu['processes'] != 1 else ''})\n")
        if cpu["cpu_limit"] is not None or cpu["throttled"]:  # (a pod's limit, say)
            limit = "none" if cpu["cpu_limit"] is None else f"{sig(cpu['cpu_limit'])} cores"
            w(f"  Cgroup limit:\t{limit}; throttled {fixed(cpu['throttled_s'], 2)} s")
            w(f" in {cpu['throttled_periods']} periods\n")
    notes = describe([f for f in stats.flags if f == NO_RESPONSE])  # named, as the exit's cause
    if MIXED_LATENCY in stats.flags:
        notes.append(
            "saved before kfp-bench kept requests without a response apart: the latency "
            "figures above include their times"
        )
    if caveat := cpu_caveat(cpu):
        notes.append(caveat)
    if stats.not_sent:
        notes.append(f"{stats.not_sent} scheduled requests not sent (--max-inflight reached)")
    if stats.latency.out_of_range:
        notes.append(f"{stats.latency.out_of_range} latencies beyond 1 h (not in the histogram)")
    if stats.workers.get("missing"):
        missing = ", ".join(str(m) for m in stats.workers["missing"])
        note = f"worker(s) {missing} of {stats.workers['expected']} did not report"
        if stats.workers.get("partial"):
            partial = ", ".join(str(m) for m in stats.workers["partial"])
            note += f"; the figures include what worker(s) {partial} measured up to the kill"
        notes.append(note)
    notes += [note for flag, note in FLAG_NOTES.items() if flag in stats.flags]
    if notes:
        w("\nNotes:\n" + "".join(f"  {n}\n" for n in notes))


#: The notes of the flags that end the list, in order.
FLAG_NOTES = {
    "interrupted": "interrupted: figures cover what was measured before the stop",
    ENGINE_ERROR: "the load engine failed (a bug in kfp-bench, its traceback on stderr): "
    "figures cover what was measured before it",
    "not-saved": "not saved where asked: stderr says where the result is instead",
    "insecure": "WARNING: TLS verification was off (--insecure)",
    "i-know": "safety caps overridden (--i-know)",
}


def _write_no_response(requests: int, nr: dict, w) -> None:
    """The requests without a response: how many, and how long they took to fail."""
    if not nr.get("requests"):
        return
    w("\nNo response (refused, reset, timed out or cut off; not in the latency figures):\n")
    w(f"  Requests:\t{nr['requests']} of {requests}\n")
    t = nr.get("time_ms")
    if t:
        p50, p90, p99, top = (fixed(t[k], 3, HDR_MS) for k in ("p50", "p90", "p99", "max"))
        w(f"  Time to failure:\tp50 {p50} ms, p90 {p90} ms, p99 {p99} ms, max {top} ms\n")


CSV_HEADER = (
    "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n"
)


def write_csv_header(out: TextIO) -> None:
    out.write(CSV_HEADER)


def write_csv_rows(batch: ResultBatch, out: TextIO) -> None:
    """hey's ``-o csv`` rows: seconds with 4 decimals; offset is the send time from the start."""
    out.writelines(
        f"{r.latency:4.4f},{r.connect:4.4f},{r.dns:4.4f},{r.write:4.4f},{r.wait:4.4f},"
        f"{r.read:4.4f},{r.status},{r.sent:4.4f}\n"
        for r in batch.results()
    )

"""Hand-built ``StreamBatch`` records with exact times, for the LLM aggregation's tests."""

from __future__ import annotations

from array import array

from kfp_bench.records import STREAM_COLUMNS, StreamBatch

T0 = 100.0
STARTED_AT = 1_700_000_000.0


def stream(sent, times, done, *, intended=None, outcome=0, status=200, usage=None, prompt=10,
           error="reset", extra_chunks=1, request_bytes=300, marks=0, cached=-1):  # fmt: skip
    """One request: its content-chunk ``times`` (s after ``T0``), and ``extra_chunks`` more
    data events that are no content (a role chunk by default: chunks = content_chunks + 1).
    ``usage``: completion tokens, default one per chunk; -1: no usage came. ``marks``: the
    row's ``records.MARK_*`` bits (e.g. the counts are the tokenizer's). ``cached``: the usage's
    cached_tokens (-1: none came)."""
    n = len(times)
    row = {
        "seq": 0,
        "intended": T0 + (sent if intended is None else intended),
        "sent": T0 + sent,
        "written": T0 + sent + 0.0001,
        "headers": T0 + sent + 0.001 if status else 0.0,
        "first": T0 + times[0] if n else 0.0,
        "done": T0 + done,
        "status": status,
        "outcome": outcome,
        "chunks": n + extra_chunks,
        "content_chunks": n,
        "prompt_tokens": prompt if usage != -1 else -1,
        "completion_tokens": n if usage is None else usage,
        "bytes_in": 100 * (n + extra_chunks),
        "marks": marks,
        "cached_tokens": cached,
    }
    return row, [T0 + t for t in times], error if outcome else None, request_bytes


def batch(*streams, t0=T0, source="w0") -> StreamBatch:
    data, times, errors, sizes = array("d"), array("d"), [], array("q")
    for seq, (row, ts, error, size) in enumerate(streams):
        row = {**row, "seq": seq}
        data.extend(float(row[c]) for c in STREAM_COLUMNS)
        times.extend(ts)
        if error is not None:
            errors.append(error)
        sizes.append(size)
    if t0 != T0:  # the same requests, on another process's clock
        data = array("d", (v + (t0 - T0) if i % len(STREAM_COLUMNS) in _TIMES and v else v
                           for i, v in enumerate(data)))  # fmt: skip
        times = array("d", (t + (t0 - T0) for t in times))
    return StreamBatch(t0, data, times, errors, [], sizes, source)


_TIMES = {
    STREAM_COLUMNS.index(c) for c in ("intended", "sent", "written", "headers", "first", "done")
}

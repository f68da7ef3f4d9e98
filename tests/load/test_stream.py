"""The streaming (SSE) client on the load engine's request loop, against a fixture server whose
every chunk and its send time are known (tests/load/sse_server.py): the rows are read directly
through a minimal sink, since the token statistics are another module's."""

from __future__ import annotations

import contextlib
import ssl
import sys
import time
from dataclasses import dataclass

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.load import stamped
from kfp_bench.load.openai import LlmOptions, render, request_id
from kfp_bench.load.stream import READ_TIME_TOKENS
from kfp_bench.load.workers import run_stream
from kfp_bench.records import STREAM_COLUMNS
from tests.load.sse_server import SPLIT_S, SseServer
from tests.load.test_tls import _self_signed

#: Assertions about time: the timing tier (tests/README.md), held beside two busy loops.
pytestmark = pytest.mark.timing

#: A kernel-stamped chunk's time lies between the fixture's clock readings just before and just
#: after the write of its last byte (the kernel stamps loopback bytes inside the write), or, when
#: the client came to read so late that the next chunk of the stream was waiting too, it is that
#: one's (one read, one stamp: stamped.py). EPS_S is for the stamp's conversion to perf_counter
#: (two clock readings in a row). That holds on any load and tells an event from its neighbours
#: (a role chunk counted, an event taken at its first part are a gap or SPLIT_S off) and from its
#: read (the held-up loop's test). How close to the write the client is, is the bench's
#: (bench/llm_peers.py, BENCHMARKS.md).
EPS_S = 0.002
#: The early side of that window: stamped.py reads perf_counter, then time_ns, and a client that
#: waits for a core between the two puts the time early by that wait (seen: 3.7 ms beside two
#: busy loops). Half of SPLIT_S still tells an event's last part from its first.
EARLY_S = SPLIT_S / 2
#: A time read by the loop (no kernel stamp) comes after the write, by however long the client
#: waited for a core: here no more than LATE_S, far above any wait seen beside two busy loops.
LATE_S = 0.050

COL = {name: i for i, name in enumerate(STREAM_COLUMNS)}


@dataclass(frozen=True)
class P:
    text: str
    input_tokens: int = 7
    output_tokens: int = 16


class ListSink:
    """Keeps every batch as it came (picklable, so a worker process can send it back)."""

    def __init__(self, index=0):  # new_sink(index)
        self.batches = []
        self.started_at = None

    def begin(self, started_at):
        self.started_at = started_at

    def add_batch(self, batch):
        if len(batch):
            self.batches.append(batch)

    def note_inflight(self, now_sec, inflight):
        pass

    def rows(self):
        """(row dict, token times, error) of every request."""
        out = []
        for b in self.batches:
            errors = iter(b.errors)
            for row, times in zip(b.rows(), b.token_times(), strict=True):
                d = dict(zip(STREAM_COLUMNS, row, strict=True))
                out.append((d, times, next(errors) if d["outcome"] else "", b.source))
        return out


class HoldingSink(ListSink):
    """Holds the loop ``HOLD_S`` at every flush (every 0.2 s), as a slow aggregation would."""

    def add_batch(self, batch):
        time.sleep(HOLD_S)
        super().add_batch(batch)


HOLD_S = 0.015  # under a gap: a held-up connection has at most one chunk of its stream waiting


@contextlib.contextmanager
def _fixture_server(**kw):
    # The server is a thread of this process: with the default 5 ms GIL switch interval the
    # client's loop could wait that long to read what it sent, and the times would say so.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        with SseServer(**kw) as server:
            yield server
    finally:
        sys.setswitchinterval(interval)


@pytest.fixture(scope="module")
def sse():
    with _fixture_server() as server:
        yield server


@pytest.fixture(scope="module")
def sse_tls(tmp_path_factory):
    cert, key = _self_signed(tmp_path_factory.mktemp("tls"))
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    with _fixture_server(ssl=ctx) as server:
        yield server, cert


def _run(url, prompts, sse_log=None, sink=ListSink, **kw):
    kw.setdefault("requests", len(prompts))
    kw.setdefault("concurrency", 1)
    opts = LlmOptions(url=url, model="m", **kw)
    if sse_log is not None:  # request ids repeat from run to run in one process
        sse_log.sent.clear()
        sse_log.before.clear()
        sse_log.writes.clear()
        sse_log.requests.clear()
    results = run_stream(opts, [P(p) for p in prompts], sink)
    return [r for _, sink, _ in results for r in sink.rows()], results


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
@pytest.mark.parametrize("scenario", ["ok", "split", "crlf"])
def test_content_chunks_arrive_when_the_server_sent_them(sse, endpoint, scenario):
    rows, results = _run(sse.url, sse_log=sse, prompts=[f"{scenario}:5"] * 3, endpoint=endpoint)
    assert len(rows) == 3
    for row, times, error, _source in rows:
        assert not error and row["outcome"] == 0 and row["status"] == 200
        # the role or empty chunk, 5 content chunks, the finish chunk, the usage chunk
        assert row["chunks"] == 8 and row["content_chunks"] == 5 == len(times)
        # received times are the kernel's: the head may come before the write call returned;
        # a client that came to read late reads the head and the first chunk at once, one stamp
        assert row["first"] == times[0] >= row["headers"] > row["sent"]
        assert row["written"] >= row["sent"]
        assert row["prompt_tokens"] == 7 and row["completion_tokens"] == 5
        assert row["done"] >= times[-1]
    assert not _outside_the_writes(rows, sse)
    sent = [r["body"] for r in sse.requests if r["id"].startswith(rows[0][3])]
    assert all(b["stream"] and b["stream_options"] == {"include_usage": True} for b in sent)
    assert results[0][2].duration_s > 0 and results[0][2].client_cpu["processes"] == 1
    # keep-alive: the one connection was opened by the first request and reused
    connects = [c for _, sink, _ in results for b in sink.batches for c in b.connects]
    assert [int(c[0]) for c in connects] == [0]


def _outside_the_writes(rows, sse, late=EPS_S):
    """(time, before, after) of every content chunk of ``rows`` whose time is not within
    ``[before - EARLY_S, after + late]`` of the fixture's write of it or, read at once with the
    writes after it (every content chunk among them with the same time), of one of theirs;
    every row must be whole."""
    out = []
    for row, times, error, source in rows:
        assert not error and row["outcome"] == 0, error
        writes = sse.writes[request_id(source, int(row["seq"]))]
        index = [k for k, (_, _, content) in enumerate(writes) if content is not None]
        assert len(times) == len(index)
        for i, t in enumerate(times):
            ok = False
            for before, after, content in writes[index[i] :]:
                if content is not None and times[content] != t:
                    break  # a later chunk read on its own: this one was read before it
                ok = ok or before - EARLY_S <= t <= after + late
            if not ok:
                out.append((t, writes[index[i]][0], writes[index[i]][1]))
    return out


def _wall_offset() -> float:
    """The wall clock's offset from the engine's (``time.perf_counter``)."""
    return time.time() - time.perf_counter()


def _all_stamped(results, wall_before: float) -> None:
    """No read went without its kernel stamp, unless the wall clock was stepped meanwhile (a
    VM resumed from a pause): a stamp then has an age out of range and the read is rightly
    timed when read and counted (load/stamped.py), which the flag says."""
    moved = _wall_offset() - wall_before
    assert READ_TIME_TOKENS not in results[0][2].flags or abs(moved) > 0.005, (
        f"a read without its kernel stamp, the wall clock steady (moved {moved * 1e3:.3f} ms)"
    )


def test_token_times_are_the_kernels_while_the_loop_is_held_up(sse):
    """Each flush holds the loop 15 ms; chunks that arrive meanwhile are read up to 15 ms late,
    but a chunk's time is when the kernel received it (load/stamped.py), not when it was read."""
    wall = _wall_offset()
    rows, results = _run(
        sse.url, sse_log=sse, prompts=["ok:40"], requests=2, concurrency=2, sink=HoldingSink
    )
    assert sum(len(times) for _, times, _, _ in rows) == 80
    assert not _outside_the_writes(rows, sse)  # read up to 15 ms late: not timed so
    _all_stamped(results, wall)


def test_without_kernel_stamps_chunks_take_the_read_time_and_the_run_says_so(sse, monkeypatch):
    monkeypatch.setattr(stamped, "SO_TIMESTAMPNS", 0)  # as on a system without them
    rows, results = _run(sse.url, sse_log=sse, prompts=["ok:3"] * 2)
    assert not _outside_the_writes(rows, sse, late=LATE_S)
    assert READ_TIME_TOKENS in results[0][2].flags


def test_tls_streams_are_read_and_timed_as_plain_ones(sse_tls):
    server, cert = sse_tls
    wall = _wall_offset()
    rows, results = _run(
        server.url, sse_log=server, prompts=["ok:5", "split:3", "crlf:4"], cacert=str(cert)
    )
    assert [r[0]["content_chunks"] for r in rows] == [5, 3, 4]
    assert not _outside_the_writes(rows, server)
    assert all(r[0]["prompt_tokens"] == 7 for r in rows)
    _all_stamped(results, wall)
    connects = [c for _, sink, _ in results for b in sink.batches for c in b.connects]
    assert [int(c[0]) for c in connects] == [0]  # one TLS connection, kept alive


def test_a_certificate_that_fails_verification_is_a_row(sse_tls):
    server, _ = sse_tls
    rows, _ = _run(server.url, ["ok:1"], requests=2)
    assert [r[0]["outcome"] for r in rows] == [1, 1]
    assert all(r[2].startswith("tls: certificate verify failed") for r in rows), rows[0][2]


def test_closed_loop_q_paces_each_connection(sse):
    rows, _ = _run(sse.url, sse_log=sse, prompts=["ok:1"], requests=4, qps=10)
    sent = sorted(r[0]["sent"] for r in rows)
    # (the engine paces a connection from its first reuse: request 1 follows request 0 at once)
    # Request k is due 0.1 s after request k-1 was due (engine.py, qps_due), never before: so no
    # send is earlier than its due time, counted from request 1. A gap between two sends may be
    # shorter when the first of them was late (seen on a fresh clone with both cores busy: 104
    # then 95 ms), as hey's ticker gives. libuv's timers count whole milliseconds (uv_now): one
    # may fire up to 1 ms early, as perf_counter sees it.
    assert all(t - sent[1] >= k * 0.1 - 0.002 for k, t in enumerate(sent[2:], 1)), sent
    assert all(r[0]["intended"] == r[0]["sent"] and r[0]["outcome"] == 0 for r in rows)


def test_split_events_take_the_time_of_their_last_part(sse):
    rows, _ = _run(sse.url, sse_log=sse, prompts=["split:3"])
    row, times, _, source = rows[0]
    # the first half of each event came SPLIT_S before: the chunk is not counted until its end
    assert not _outside_the_writes(rows, sse)
    assert times[0] - row["headers"] > SPLIT_S


def test_usage_that_disagrees_with_the_chunk_count_is_kept_as_sent(sse):
    rows, _ = _run(sse.url, sse_log=sse, prompts=["mismatch:4"])
    row = rows[0][0]
    assert row["content_chunks"] == 4 and row["completion_tokens"] == 5


@pytest.mark.parametrize(
    ("prompt", "want", "content"),
    [
        ("error", "stream: error event: model overloaded", 1),
        ("early", "stream: connection closed before [DONE]", 2),
        ("reset", "stream: connection reset by peer before [DONE]", 2),
        ("429", "http 429: ", 0),
        ("stall", "stall: no byte for 0.5s", 1),
    ],
)
def test_faults_are_rows_and_the_run_goes_on(sse, prompt, want, content):
    rows, _ = _run(sse.url, sse_log=sse, prompts=[prompt, "ok:2"], requests=4, stall_timeout=0.5)
    assert len(rows) == 4
    bad = [r for r in rows if r[0]["seq"] % 2 == 0]
    good = [r for r in rows if r[0]["seq"] % 2 == 1]
    for row, times, error, _ in bad:
        assert row["outcome"] == 1 and error.startswith(want), error
        assert row["content_chunks"] == content == len(times)
    assert all(r[0]["outcome"] == 0 and r[0]["content_chunks"] == 2 for r in good)
    if prompt == "429":
        assert bad[0][0]["status"] == 429 and "rate limited" in bad[0][2]


def test_a_refused_connection_is_a_row(sse):
    rows, _ = _run("http://127.0.0.1:1", ["ok:1"], requests=2)
    assert [r[0]["outcome"] for r in rows] == [1, 1]
    assert all("refused" in r[2] and r[0]["status"] == 0 for r in rows)


def test_open_loop_counts_from_the_intended_send(sse):
    rows, _ = _run(sse.url, sse_log=sse, prompts=["ok:2"], requests=10, rate=20, concurrency=2)
    intended = sorted(r[0]["intended"] for r in rows)
    gaps = [b - a for a, b in zip(intended, intended[1:], strict=False)]
    assert all(abs(g - 0.05) < 1e-6 for g in gaps)
    # sent on schedule: never before its time, and not a whole rate gap after it
    assert all(r[0]["outcome"] == 0 and 0 <= r[0]["sent"] - r[0]["intended"] < 0.05 for r in rows)


def test_workers_each_send_their_share_with_their_own_ids(sse):
    rows, results = _run(
        sse.url, sse_log=sse, prompts=["ok:2"], requests=8, concurrency=2, workers=2
    )
    assert len(results) == 2 and len(rows) == 8
    sources = {r[3] for r in rows}
    assert len(sources) == 2
    for source in sources:
        assert sorted(r[0]["seq"] for r in rows if r[3] == source) == [0, 1, 2, 3]
    assert all(r[0]["outcome"] == 0 for r in rows)


def test_bad_options_are_refused_naming_the_flag():
    for kw, flag in (
        ({"endpoint": "embeddings"}, "--endpoint"),
        ({"model": ""}, "--model"),
        ({"stall_timeout": -1}, "--stall-timeout"),
        ({"url": "http://h/openai/v1"}, "without /v1"),
    ):
        opts = LlmOptions(**{"url": "http://h/openai", "model": "m", **kw})
        with pytest.raises(ConfigError, match=flag):
            opts.validate()


def test_requests_are_rendered_before_the_attack_with_the_id_last():
    opts = LlmOptions(url="http://h:8080/openai", model="m", endpoint="chat", ignore_eos=True)
    ((head, tail),) = render(opts, [P("hi")], "kfpb-1")
    request = head + b"42" + tail
    assert request.startswith(b"POST /openai/v1/chat/completions HTTP/1.1\r\n")
    assert b"\r\nX-Request-Id: kfpb-1-42\r\n\r\n{" in request
    assert b'"ignore_eos":true' in tail and b'"messages":[{"role":"user","content":"hi"}]' in tail
    assert b"Accept-Encoding" not in head

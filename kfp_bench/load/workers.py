"""Run an attack, predict or LLM, in one process or across several; merge what they measured.

With ``workers == 1`` the attack runs in this process. With more, each worker process runs its
share (``LoadOptions.share``) from a common start time on the system-wide monotonic clock, so their
open-loop schedules interleave into one; each sends back its stats as the JSON results document and
this process merges them. A worker that dies without reporting is named in ``workers.missing``
rather than silently left out. A worker that starts after the common start time (its process
was slow to start) starts at once, its share of the schedule shifted: it is flagged
``late-start`` (a note) and ``workers.late`` holds ``[index, seconds late]``, for the report.

So that a worker killed mid-run (SIGKILL, the OOM killer) loses nothing it measured, each worker of
the predict load also appends the stats of every flush (the requests finished in the last 0.2 s,
percentiles left out) as one JSON line to its own file in a temporary folder. When a worker sends no
document, its stats are rebuilt from that file, a torn last line ignored, and merged; it is still
named in ``workers.missing``, and also in ``workers.partial``: its figures run up to about the kill.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import multiprocessing.connection
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace

import uvloop

from kfp_bench.errors import EngineError, ResultsError
from kfp_bench.jsonl import JsonlWriter, read_dicts
from kfp_bench.load.engine import Attack
from kfp_bench.load.multi_turn import stream_attack
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.stages import bounds
from kfp_bench.records import ENGINE_ERROR, AttackRecord
from kfp_bench.stats.load import LoadStats, warm_up
from kfp_bench.stats.stages import StageStats

START_DELAY_S = 0.3  # time for worker processes to start before request 0 is due
#: A worker later than this after the common start is flagged: below it, the shift of its
#: schedule is within the timer's own jitter.
LATE_AFTER_S = 0.001
LATE_START = "late-start"


def run_load(
    opts: LoadOptions,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    on_batch_factory: Callable[[int], Callable] | None = None,
) -> LoadStats:
    """Run the attack described by ``opts`` (validated here, before anything is sent) and
    return its merged stats. ``on_progress`` hears (requests, failed) so far about every 0.2 s,
    in this process; ``on_batch_factory(index)`` gives worker ``index`` a callable that receives
    its ``ResultBatch``es in its process (e.g. a CSV writer).

    Raises:
        EngineError: a bug in the engine ended the attack (in this process or a worker); its
            ``stats`` are what was measured up to it.
    """
    opts.validate()
    log_dir = tempfile.mkdtemp(prefix="kfp-bench-workers-") if opts.workers > 1 else None

    def new_sink(index: int) -> StatsSink:  # in the worker's process
        stats = _new_stats(opts)
        user = on_batch_factory(index) if on_batch_factory else None
        # (each line of the log is flushed as it is written: the process needs no close)
        log = _FlushLog(_log_path(log_dir, index), stats) if log_dir else None
        return StatsSink(stats, chained(log, user), corrected=opts.open_loop)

    try:
        out = run_workers(opts, Attack, new_sink, on_progress)
        stats = merge_reported(
            opts,
            out,
            lambda: _new_stats(opts).close(0.0),
            lambda i: _rebuild(_log_path(log_dir, i), i),
        )
    finally:
        if log_dir:
            shutil.rmtree(log_dir, ignore_errors=True)
    stats.note_no_response()  # as the LLM load's none-completed: a failure, exit 1
    check_engine(stats, "mid-attack")
    return stats


def chained(*calls: Callable | None) -> Callable | None:
    """One callable calling each of ``calls`` that is not None, in order; None for none."""
    calls = tuple(c for c in calls if c is not None)
    if len(calls) < 2:
        return calls[0] if calls else None

    def each(*args) -> None:
        for call in calls:
            call(*args)

    return each


def check_engine(stats, where: str) -> None:
    """Raise ``EngineError`` with ``stats`` when a bug of the engine ended the attack."""
    if ENGINE_ERROR in stats.flags:
        raise EngineError(
            f"the load engine failed {where}: a bug in kfp-bench, not a fault of the server "
            "(its traceback is above). The figures cover the requests before it; please report "
            "the traceback with the command line",
            stats,
        )


def _new_stats(opts: LoadOptions) -> LoadStats:
    flags = ["insecure"] if opts.insecure else []
    flags += ["i-know"] if opts.i_know else []
    stages = StageStats(bounds(opts.stages)) if opts.stages else None
    return LoadStats(options=opts.redacted(), flags=flags, stages=stages)


class StatsSink:
    """The sink (``connection.Sink``) of a load attack: its batches go into ``stats``, then to
    ``on_batch`` (CSV output, the flush log, the per-request log). It pickles as its results
    document, to cross from a worker process."""

    def __init__(self, stats: LoadStats, on_batch=None, corrected=False):
        self.stats, self.on_batch = stats, on_batch
        stats.corrected = corrected
        warm_up()  # before the attack's clock starts, not in its first flush

    def begin(self, started_at: float) -> None:
        self.stats.started_at = started_at

    def add_batch(self, batch) -> None:
        self.stats.add_batch(batch)
        if self.on_batch and len(batch):
            self.on_batch(batch)

    def note_inflight(self, now_sec: int, inflight: int) -> None:
        series = self.stats.series
        series.note_inflight(now_sec, inflight)
        series.close_before(now_sec - 1)

    def progress(self) -> tuple[int, int]:
        """(requests, failed) so far."""
        return self.stats.requests, self.stats.requests - self.stats.ok

    def __reduce__(self):
        return _sink_from_doc, (type(self), type(self.stats), self.stats.to_dict(summary=False))


def _sink_from_doc(cls, stats_type, doc: dict) -> StatsSink:
    sink = cls.__new__(cls)
    sink.stats = stats_type.from_dict(doc, "a worker's results")
    sink.on_batch = sink.batches = None
    return sink


def apply_record(stats, record: AttackRecord, index: int = 0):
    """Finish ``stats`` (a LoadStats or LlmStats) with what the attack said of itself: start,
    duration, requests not sent, CPU and flags (``late-start`` with ``workers.late`` for a
    process that began past the common start)."""
    stats.not_sent += record.not_sent
    stats.started_at = record.started_at
    stats.close(record.duration_s)
    stats.client_cpu = record.client_cpu
    stats.flag(*record.flags)
    if record.late_s > LATE_AFTER_S:
        stats.flag(LATE_START)
        stats.workers["late"] = [[index, round(record.late_s, 3)]]
    return stats


def merge_reported(opts, out: list, empty: Callable, rebuild: Callable = lambda i: None):
    """The stats of the workers that reported (``out``, ``run_workers``'), each finished with
    its attack's record, merged. A worker that did not is named in ``workers.missing`` and
    flagged ``workers-lost`` (a failure: exit 1); ``rebuild(index)`` gives what it measured
    when something can (its flush log), else None. ``empty()``: the stats when none can."""
    reported = {index: apply_record(sink.stats, record, index) for index, sink, record in out}
    merged, missing = None, []
    for i in range(opts.workers):
        stats = reported.get(i)
        if stats is None:
            missing.append(i)
            stats = rebuild(i)
        if stats is None:
            continue
        if merged is None:
            merged = stats
        else:
            merged.merge(stats)
    if merged is None:
        merged = empty()
        merged.workers = {"expected": 0, "reported": 0, "missing": []}
    merged.note_missing(missing)
    merged.options = opts.redacted()
    return merged


def run_attack(attack: Attack) -> AttackRecord:
    """Run ``attack`` on a fresh uvloop in this process; SIGINT and SIGTERM interrupt it."""

    async def main():
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, attack.interrupt)
        try:
            return await attack.run()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main())


class _FlushLog:
    """Appends, per flush, the stats of that flush's requests to a JSON-lines file.

    One extra ``add_batch`` and one short JSON line per 0.2 s, never per request: the hot path
    does not see it.
    """

    def __init__(self, path: str, stats: LoadStats):
        self._writer = JsonlWriter(path)
        self._stats = stats  # the worker's own: its start time and mode, set once it starts

    def __call__(self, batch) -> None:
        mine = self._stats
        stages = StageStats(mine.stages.bounds) if mine.stages else None
        delta = LoadStats(corrected=mine.corrected, started_at=mine.started_at, stages=stages)
        delta.add_batch(batch)
        delta.close(time.time() - delta.started_at)
        self._writer.write(delta.to_dict(summary=False))

    def close(self) -> None:
        self._writer.close()


def _rebuild(path: str, index: int) -> LoadStats | None:
    """A dead worker's stats up to its last flush, from its flush log; None if it logged none."""
    try:
        docs = read_dicts(path)
    except ResultsError:
        return None
    stats = None
    for n, doc in enumerate(docs):
        try:
            delta = LoadStats.from_dict(doc, f"worker {index} flush {n}")
        except ResultsError:  # keep the flushes before a damaged one
            break
        if stats is None:
            stats = delta
        else:
            stats.merge(delta)
    if stats is not None:
        stats.workers = {"expected": 0, "reported": 0, "missing": [], "partial": [index]}
    return stats


def _log_path(log_dir: str, index: int) -> str:
    return os.path.join(log_dir, f"worker-{index:04d}.jsonl")


def run_stream(opts, prompts, new_sink: Callable[[int], object], on_progress=None) -> list:
    """Run the streaming LLM load described by ``opts`` (``openai.LlmOptions``) over ``prompts``:
    ``run_workers`` with ``multi_turn.stream_attack``, each worker streaming its share of a
    trace's prompts.

    Raises:
        EngineError: a bug in the engine ended the attack; ``stats`` holds the list.
    """
    opts.validate()

    def attack(share, sink, **kw):
        lane, of = share.lane
        mine = prompts[lane::of] if opts.trace else prompts  # a trace's lines: their prompts
        return stream_attack(share, mine, sink, **kw)

    out = run_workers(opts, attack, new_sink, on_progress)
    if any(ENGINE_ERROR in record.flags for _, _, record in out):
        raise EngineError("the load engine failed mid-attack: a bug in kfp-bench", out)
    return out


def run_workers(opts, new_attack: Callable, new_sink: Callable, on_progress=None) -> list:
    """Run the attack of ``opts`` (``new_attack(opts, sink, start_at=, phase=)``) in this
    process, or its shares in ``opts.workers`` processes from a common start; return
    ``[(index, sink, record)]``, one per worker that reported. Each sink (``new_sink(index)``,
    made in the worker's process) must pickle: it holds its process's batches or their
    aggregate. A worker that died is left out: the caller sees fewer entries than
    ``opts.workers``. ``on_progress(requests, failed)`` hears the totals after each flush: each
    sink then needs a ``progress()`` giving its own (requests, failed) so far."""
    if opts.workers == 1:
        sink = new_sink(0)
        told = _Told(sink, lambda: on_progress(*sink.progress())) if on_progress else sink
        return [(0, sink, run_attack(new_attack(opts, told)))]
    ctx = mp.get_context("fork")
    start_at = time.perf_counter() + START_DELAY_S
    procs, pipes = [], []
    counters = ctx.Array("q", 2 * opts.workers, lock=False)  # (requests, failed) per worker
    for i in range(opts.workers):
        parent, child = ctx.Pipe(duplex=False)
        told = counters if on_progress else None
        args = (opts, new_attack, new_sink, i, start_at, child, told)
        p = ctx.Process(target=_worker, args=args, daemon=True)
        p.start()
        child.close()
        procs.append(p)
        pipes.append(parent)
    docs = _collect_forwarding_sigint(procs, pipes, counters, on_progress)
    return [doc for doc in docs if doc]


class _Told:
    """A sink that says how far it got after each flush (``tell()``), the rest as ``sink``."""

    def __init__(self, sink, tell):
        self.sink, self.tell = sink, tell

    def begin(self, started_at: float) -> None:
        self.sink.begin(started_at)

    def add_batch(self, batch) -> None:
        self.sink.add_batch(batch)

    def note_inflight(self, now_sec: int, inflight: int) -> None:
        self.sink.note_inflight(now_sec, inflight)
        self.tell()


def _worker(opts, new_attack, new_sink, index, start_at, conn, counters) -> None:
    """Body of a worker process: run its share and send back (index, sink, record)."""
    share = opts.share(index, opts.workers)
    if share.seed is not None:
        share = replace(share, seed=share.seed + index)
    # Each process of a constant-rate attack takes every P-th slot of the total schedule.
    phase = index / opts.rate if opts.rate else 0.0
    sink = told = new_sink(index)
    if counters is not None:

        def tell():
            counters[2 * index], counters[2 * index + 1] = sink.progress()

        told = _Told(sink, tell)
    record = run_attack(new_attack(share, told, start_at=start_at, phase=phase))
    conn.send((index, sink, record))
    conn.close()


def _collect_forwarding_sigint(procs, pipes, counters, on_progress) -> list:
    """``_collect``, with Ctrl-C forwarded to the workers: the first stops them cleanly
    (SIGTERM), a second at once (SIGKILL)."""
    interrupted = []

    def on_sigint(signum, frame):
        interrupted.append(signum)
        for p in procs:  # forward, in case the signal reached only this process
            if p.is_alive():
                os.kill(p.pid, signal.SIGTERM if len(interrupted) == 1 else signal.SIGKILL)

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        return _collect(procs, pipes, counters, on_progress)
    finally:
        signal.signal(signal.SIGINT, old)


def _collect(procs, pipes, counters, on_progress) -> list:
    """Wait for every worker's document; a worker that died without one is ``False``."""
    docs: list = [None] * len(procs)
    pending = dict(zip(pipes, range(len(pipes)), strict=True))
    while pending:
        for pipe in mp.connection.wait(list(pending), timeout=0.2):
            i = pending.pop(pipe)
            try:
                docs[i] = pipe.recv()
            except (EOFError, OSError):  # it died before reporting
                docs[i] = False
        if on_progress:
            on_progress(sum(counters[0::2]), sum(counters[1::2]))
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
            p.join()
    return docs

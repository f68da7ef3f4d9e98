"""The record types every layer shares: the ground floor of kfp-bench.

Engines emit records, aggregators consume them and reporters never look further down than this
module to learn a record's shape. All records are frozen, slotted dataclasses.

Times are seconds. ``intended`` and ``sent`` are offsets from the start of the attack (a monotonic
clock); the attack's wall-clock start is kept in its stats, so records stay small.
"""

from array import array
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Result:
    """One HTTP request of a load attack.

    Attributes:
        seq: sequence number of the request within its worker process.
        intended: when the schedule meant the request to be sent (s from the attack's start); equal
            to ``sent`` in closed-loop mode, where there is no schedule.
        sent: when the request was actually written (s from the attack's start).
        latency: from ``sent`` to the last byte of the response (s); for a failed request, to the
            moment of failure.
        status: HTTP status code, or 0 when no response was received.
        bytes_in: response body bytes.
        bytes_out: request bytes written (head and body).
        error: the transport error text, empty on success.
        connect: DNS lookup and TCP (and TLS) connect time charged to this request (s); 0 on a
            reused connection.
        dns: the DNS part of ``connect`` (s).
        write: time to hand the request to the kernel (s).
        wait: from the end of the write to the first response byte (s).
        read: from the first to the last response byte (s).
    """

    seq: int
    intended: float
    sent: float
    latency: float
    status: int
    bytes_in: int
    bytes_out: int
    error: str = ""
    connect: float = 0.0
    dns: float = 0.0
    write: float = 0.0
    wait: float = 0.0
    read: float = 0.0

    @property
    def corrected_latency(self) -> float:
        """Latency measured from the intended send time: the coordinated-omission-free figure."""
        return self.latency + (self.sent - self.intended)

    @property
    def ok(self) -> bool:
        """True for a response with a 1xx-3xx status; 4xx, 5xx and transport errors are failures."""
        return not self.error and 0 < self.status < 400


#: Columns of a ``ResultBatch``. Times are absolute ``time.perf_counter()`` readings; ``written`` is
#: 0 when nothing was written (the connection failed) and ``first`` 0 when no byte came back.
BATCH_COLUMNS = ("seq", "intended", "sent", "written", "first", "done", "status", "bytes_in")


@dataclass(frozen=True, slots=True)
class ResultBatch:
    """The results of many requests, in the compact form the request loop writes.

    Building a frozen ``Result`` per request, or arrays from a list of tuples, costs a share of the
    request loop's time per request that it cannot spare at tens of thousands of requests a second
    (BENCHMARKS.md, "Figures out of the code"; ``bench/instructions.py`` counts what the packed rows
    cost instead). So the request loop appends the ``BATCH_COLUMNS`` of each request to one flat
    ``array('d')``, which aggregators read as a numpy array without a copy. ``results()`` builds
    ``Result`` records on demand.

    Attributes:
        t0: the ``perf_counter()`` reading at the attack's start; row times are offsets from it.
        data: the flat columns, ``len(BATCH_COLUMNS)`` values per request.
        errors: the error text of each request whose status is 0, in row order.
        connects: (seq, connect_s, dns_s) of each request that opened its connection.
        request_len: bytes of the request, head and body.
    """

    t0: float
    data: array
    errors: list
    connects: list
    request_len: int

    def __len__(self) -> int:
        return len(self.data) // len(BATCH_COLUMNS)

    def rows(self):
        """The requests as tuples in ``BATCH_COLUMNS`` order."""
        d, w = self.data, len(BATCH_COLUMNS)
        return (tuple(d[i : i + w]) for i in range(0, len(d), w))

    def results(self):
        """Yield each request as a ``Result`` (times as offsets from the attack's start)."""
        t0, errors = self.t0, iter(self.errors)
        connects = {int(seq): (c, dns) for seq, c, dns in self.connects}
        for seq, intended, sent, written, first, done, status, b_in in self.rows():
            seq, status = int(seq), int(status)
            first = first or done
            connect, dns = connects.get(seq, (0.0, 0.0))
            yield Result(
                seq=seq,
                intended=intended - t0,
                sent=sent - t0,
                latency=done - sent,
                status=status,
                bytes_in=int(b_in),
                bytes_out=self.request_len if written else 0,
                error="" if status else next(errors),
                connect=connect,
                dns=dns,
                write=max(written - sent, 0.0) if written else 0.0,
                wait=max(first - written, 0.0) if written else 0.0,
                read=done - first,
            )


#: Columns of a ``StreamBatch``: one streamed (server-sent events) request of an LLM load.
#: Times are absolute ``time.perf_counter()`` readings (CLOCK_MONOTONIC on Linux: the same clock
#: in every process of the machine, so a local server's truth log compares without conversion).
#:
#: - ``seq``: the request's number within its worker process (``StreamBatch.source`` names the
#:   process; the request carried ``X-Request-Id: <source>-<seq as 12 hex digits>``, a UUID).
#: - ``intended``: when the schedule meant it to be sent (= ``sent`` in closed loop).
#: - ``sent`` / ``written``: the write's start and end (``written`` 0: nothing was written).
#: - ``headers``: when the response head was complete (0: none came). This and the times below
#:   are when the bytes were received (the kernel's stamp, ``load.stamped``), so a fast server's
#:   head can come before ``written``, the end of the client's own write call.
#: - ``first``: when the first *content* chunk arrived, a chunk whose text (completions) or
#:   ``delta.content`` (chat) is non-empty; never a role-only, empty or usage chunk (0: none).
#: - ``done``: when the stream ended (``[DONE]``, the body's end, or the moment it failed).
#: - ``status``: the HTTP status, 0 when no response head came.
#: - ``outcome``: 0 the stream completed (a finish_reason, then ``[DONE]`` or the body's clean
#:   end), 1 it failed (error text in ``StreamBatch.errors``, in row order): refused, reset,
#:   timeout, a stall past the timeout, an HTTP error status, an ``error`` event, a stream that
#:   ended before a finish_reason.
#: - ``chunks``: data events received (every ``data:`` line but ``[DONE]``).
#: - ``content_chunks``: of those, content chunks (their arrival times: ``StreamBatch.times``).
#: - ``prompt_tokens`` / ``completion_tokens``: from the server's ``usage``, else the tokenizer's
#:   count (``marks`` says so), else -1.
#: - ``bytes_in``: response bytes after the head.
#: - ``marks``: bits of ``MARK_*``: the token counts came from the tokenizer (the server sent no
#:   usage), the stream completed without ``[DONE]``.
#: - ``cached_tokens``: the usage's ``prompt_tokens_details.cached_tokens`` (of the prompt tokens,
#:   those the server's prefix cache served), -1 when the usage had none (``stats.cached``).
STREAM_COLUMNS = (
    "seq", "intended", "sent", "written", "headers", "first", "done", "status", "outcome",
    "chunks", "content_chunks", "prompt_tokens", "completion_tokens", "bytes_in", "marks",
    "cached_tokens",
)  # fmt: skip
#: ``marks`` bits: prompt_tokens is the tokenizer's count of the prompt (no usage came) ...
MARK_PROMPT_TOKENIZED = 1
#: ... completion_tokens is the tokenizer's count of the streamed text (no usage came) ...
MARK_OUTPUT_TOKENIZED = 2
#: ... the stream ended cleanly after a finish_reason but without ``data: [DONE]``.
MARK_NO_DONE = 4


@dataclass(frozen=True, slots=True)
class StreamBatch:
    """The streamed requests of one flush interval, in the compact form the request loop writes
    (the columns as ``ResultBatch``'s, for the same reason: no object per request or token).

    Attributes:
        t0: the ``perf_counter()`` reading at the attack's start.
        data: the flat ``STREAM_COLUMNS``, one row per request.
        times: the arrival time (``perf_counter``) of every content chunk, row after row: row
            ``i``'s ``content_chunks`` values follow those of the rows before it. The first of a
            row's is its ``first``; the gaps between a row's times are its inter-token latencies.
        errors: the error text of each row whose outcome is 1, in row order.
        connects: (seq, connect_s, dns_s) of each request that opened its connection.
        request_bytes: bytes written per row (head and body), in row order.
        source: the worker process's request id prefix (``X-Request-Id: <source>-<seq>``).
        turns: a multi-turn load's (session, turn) of each row, flat in row order: the
            session's number within its process (from 0) and the turn's within the session
            (from 1). Empty for single requests.
    """

    t0: float
    data: array
    times: array
    errors: list
    connects: list
    request_bytes: array
    source: str = ""
    turns: array = field(default_factory=lambda: array("q"))

    def __len__(self) -> int:
        return len(self.data) // len(STREAM_COLUMNS)

    def rows(self):
        """The requests as tuples in ``STREAM_COLUMNS`` order."""
        d, w = self.data, len(STREAM_COLUMNS)
        return (tuple(d[i : i + w]) for i in range(0, len(d), w))

    def token_times(self):
        """Each row's content-chunk arrival times, as a tuple per row, in row order."""
        at, k = 0, STREAM_COLUMNS.index("content_chunks")
        for row in self.rows():
            n = int(row[k])
            yield tuple(self.times[at : at + n])
            at += n

    def session_turns(self):
        """(session, turn) of each row, in row order; none for single requests."""
        t = self.turns
        return [(t[i], t[i + 1]) for i in range(0, len(t), 2)]


#: The flag of an attack that Ctrl-C or SIGTERM stopped.
INTERRUPTED = "interrupted"
#: The flag of an attack that a bug in the load engine ended (``errors.EngineError``).
ENGINE_ERROR = "engine-error"


@dataclass(frozen=True, slots=True)
class AttackRecord:
    """What one process's load attack says of itself, beside its rows (``ResultBatch`` or
    ``StreamBatch``): the aggregation applies it once the attack ends.

    Attributes:
        started_at: wall-clock time (epoch s) of the attack's start, when request 0 was due.
        duration_s: from the start to the end of the attack.
        not_sent: requests the schedule made due that never went out (a backlog at the end).
        client_cpu: this process's CPU and its cgroup's throttling while it sent
            (``kfp_bench.load.cpu.client_cpu``).
        late_s: how late past the common start (``start_at``) this process began.
        flags: ``INTERRUPTED`` (Ctrl-C or SIGTERM), ``ENGINE_ERROR`` (a bug ended it); the
            aggregation carries them into its own flags.
    """

    started_at: float
    duration_s: float
    not_sent: int
    client_cpu: dict
    late_s: float = 0.0
    flags: tuple[str, ...] = ()


#: The non-idempotent calls, and the operation their lookup before a retry is recorded as: a
#: create's LIST by name, a terminate's GET of its run.
FINDS = {
    "create_run": "find_run",
    "create_experiment": "find_experiment",
    "upload_pipeline": "find_pipeline",
    "upload_pipeline_version": "find_pipeline_version",
    "terminate_run": "check_run",
}


@dataclass(frozen=True, slots=True)
class ApiCall:
    """One call of the KFP API, as the driver made it.

    Attributes:
        operation: what was called: upload_pipeline, upload_pipeline_version, create_experiment,
            create_run, list_runs, get_run, terminate_run, delete_run, delete_pipeline_version,
            delete_pipeline, delete_experiment, ...; and ``FINDS[create]`` (find_run, ...), the
            lookup by name made before a failed create is retried.
        start: wall-clock start (epoch seconds).
        duration: seconds from the start to the end of the response.
        outcome: "ok", or "error" for an HTTP error or a transport failure. A delete answered
            404 while retrying is "ok" with status 404: what it was to delete is gone. A
            terminate answered 400 for a run that had already finished is "ok" with status 400.
        status: HTTP status code, or 0 when no response came back.
        error: the error text (never a token), empty when ok.
        attempt: 1 for the first try, 2 and more for retries.
        poll_round: the poll round a list_runs or sampled get_run call belongs to (1, 2, ...);
            0 for calls made outside polling. Lets the cost of a round be counted from the records.
    """

    operation: str
    start: float
    duration: float
    outcome: str = "ok"
    status: int = 200
    error: str = ""
    attempt: int = 1
    poll_round: int = 0


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task of a run, from the run's ``run_details.task_details``.

    Attributes:
        name: the task's display name.
        state: its final v2beta1 RuntimeState.
        duration: seconds from its create_time to its end_time, or None when unknown.
    """

    name: str
    state: str
    duration: float | None = None


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run the benchmark created, with figures taken from the server's own timestamps.

    Attributes:
        run_id: the server's run id.
        name: the run's display name (carries the benchmark id).
        state: final v2beta1 RuntimeState (SUCCEEDED, FAILED, SKIPPED, CANCELED, ...), or the
            last state seen when the benchmark gave up on it.
        created_at: epoch seconds, from the server.
        scheduled_at: epoch seconds, or None.
        finished_at: epoch seconds, or None while unfinished.
        queue_delay: created_at to the first RUNNING in state_history (s), or None.
        execution: the first RUNNING to finished_at (s), or None.
        duration: created_at to finished_at (s), or None.
        tasks: the run's tasks.
        simulated: True when the server simulated the run rather than executing it.
        error: the run's error message, if any.
        resolution: the coarsest precision the server wrote the run's timestamps to (s): 1.0
            for whole seconds (a real KFP server), 1e-6 for microseconds; None when unknown
            (records from before it was kept).
        queue_delay_lo, queue_delay_hi, execution_lo, execution_hi, duration_lo, duration_hi:
            the interval the true figure lies in: the server's figure less and plus its
            resolution (both ends are truncated), narrowed where the driver's own polls saw the
            transition (docs/run-figures.md); None when the figure is.
        polled: the figures (queue_delay, execution, duration) whose interval the polls narrowed.
        at_timeout: what the timeout did to the run: "terminated", "finished-first" (it had
            finished before its terminate, which KFP refused), "terminate-failed",
            "left-running"; "" when the run was not open at the timeout.
    """

    run_id: str
    name: str
    state: str
    created_at: float | None = None
    scheduled_at: float | None = None
    finished_at: float | None = None
    queue_delay: float | None = None
    execution: float | None = None
    duration: float | None = None
    tasks: tuple[TaskRecord, ...] = ()
    simulated: bool = False
    error: str = ""
    resolution: float | None = None
    queue_delay_lo: float | None = None
    queue_delay_hi: float | None = None
    execution_lo: float | None = None
    execution_hi: float | None = None
    duration_lo: float | None = None
    duration_hi: float | None = None
    polled: tuple[str, ...] = ()
    at_timeout: str = ""

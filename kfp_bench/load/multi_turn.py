"""Multi-turn chat sessions on the streaming request loop (``llm --multi-turn``).

Turn k of a session carries turns 1..k-1's user prompts and answers as streamed, then a new
prompt, ``think_time`` after turn k-1's stream ended; a failed turn ends its session. Closed
loop, each ``-c`` lane runs whole sessions; open loop, the schedule starts them. vLLM's
multi-turn benchmark does the same (vllm-project/vllm 00d3953,
benchmarks/multi_turn/benchmark_serving_multi_turn.py: ``send_turn`` appends the streamed answer,
``client_main`` drops a conversation whose request failed). docs/llm-workloads.md has the rest.
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass, field, replace

from kfp_bench.load.connection import Connection, clock
from kfp_bench.load.openai import LlmOptions, render
from kfp_bench.load.stream import StreamAttack, StreamConn, chunk_text


@dataclass
class Session:
    """One chat session of a lane: its number (global over the worker processes), the turn it is
    at (from 1), the messages of its finished turns, and when its next turn is due (``clock``:
    the end of the last turn's stream plus the think time)."""

    number: int
    turn: int = 1
    history: list = field(default_factory=list)
    due: float = 0.0


@dataclass(frozen=True)
class Turn:
    """A turn's request as ``openai.render`` takes a prompt: the new user prompt, its
    ``output_tokens`` and the session's ``history`` before it."""

    text: str
    output_tokens: int
    history: tuple = ()


class MultiTurnAttack(StreamAttack):
    """A ``StreamAttack`` whose requests are sessions' turns.

    ``row`` sees each turn end; a completed turn whose session goes on leaves that session in
    ``_next``, which the ``after`` that follows every row (the engine's order) takes up. Closed
    loop, its lane holds its connection through the think time and sends the next turn on it
    (a new one when it closed). Open loop (``--rate``), the schedule starts sessions; a later
    turn is due at the think's end and goes out on an idle connection, a new one below
    ``max_inflight``, or waits for one, its latency counted from when it was due.
    """

    def __init__(self, opts: LlmOptions, prompts, sink, **kw):
        super().__init__(opts, prompts, sink, **kw)
        self.prompts = list(prompts)
        self.keep_texts = True  # every content chunk: they make the answer the next turn carries
        self.lane_index, self.lanes = opts.lane
        self.started = 0  # sessions started by this process
        self.sessions: dict[int, Session] = {}  # by the seq of the turn in flight
        self.turns = array("q")
        self._next: Session | None = None
        self._thinking: dict = {}  # session number -> (timer, connection or None)
        self._waiting: deque = deque()  # open loop: (session, due) of turns with no connection

    def turn_prompt(self, s: Session) -> Turn:
        """Session ``s``'s current turn: the load's prompts in turn, session n's turn k taking
        prompt ``n * turns + k - 1`` (cycling); n counts over the worker processes (``lane``),
        so the prompts are the same however many there are."""
        p = self.prompts[(s.number * self.opts.turns + s.turn - 1) % len(self.prompts)]
        return Turn(p.text, p.output_tokens, tuple(s.history))

    def parts_of(self, seq: int) -> tuple[bytes, bytes]:
        """Request ``seq``, built as it is sent: its session's next turn."""
        return render(self.opts, [self.turn_prompt(self.sessions[seq])], self.source)[0]

    def _new_session(self) -> Session:
        number = self.started * self.lanes + self.lane_index
        self.started += 1
        return Session(number)

    def _issue(self, conn: Connection | None, intended: float | None) -> None:
        """Send the turn registered for the next seq, else a new session's first turn (the
        open-loop schedule's requests, ``engine.Attack._tick``)."""
        if self.seq not in self.sessions:
            self.sessions[self.seq] = self._new_session()
        super()._issue(conn, intended)

    def _issue_turn(self, conn: Connection | None, session: Session, intended=None) -> None:
        self.sessions[self.seq] = session  # the seq ``_issue`` is about to take
        self._issue(conn, intended)

    def after(self, conn: Connection | None) -> None:
        session, self._next = self._next, None
        if self.opts.open_loop:
            self._after_open(conn, session)
            return
        if self.stopping or (session is None and self.remaining <= 0):
            if conn is not None:
                conn.abort(graceful=True)
            self._check_done()
            return
        if session is None:
            self.remaining -= 1
            self._issue(conn, None)  # a new session
            return
        self.inflight += 1  # the lane is held through the think time
        self._think(session, conn)

    def _after_open(self, conn: Connection | None, session: Session | None) -> None:
        """Open loop: a session thinks without a connection (``inflight`` keeps it counted until
        its turn goes out); the connection serves a waiting later turn first, then the
        schedule's backlog of new sessions (``engine.Attack.after``)."""
        if session is not None and not self.stopping:
            self.inflight += 1
            self._think(session, None)
        if self._waiting and not self.stopping:
            self.inflight -= 1
            self._issue_turn(conn, *self._waiting.popleft())
            return
        super().after(conn)

    def _think(self, session: Session, conn: Connection | None) -> None:
        delay = max(0.0, session.due - clock())
        timer = self.loop.call_later(delay, self._think_over, session.number)
        self._thinking[session.number] = (timer, session, conn)

    def _think_over(self, number: int) -> None:
        _, session, conn = self._thinking.pop(number)
        if clock() < session.due:  # a timer of the loop's coarser clock, early: never send early
            self._think(session, conn)
            return
        if not self.opts.open_loop:
            self.inflight -= 1
            self._issue_turn(conn if conn is not None and not conn.dead else None, session)
        elif self.idle or self.nconns < self.opts.max_inflight:
            self.inflight -= 1  # due at the think's end: its latency counts from there
            self._issue_turn(self.idle.pop() if self.idle else None, session, session.due)
        else:
            self._waiting.append((session, session.due))

    def stop(self, drain_s: float | None = None) -> None:
        """Stop: turns in flight drain as any request; sessions thinking or waiting for a
        connection end at once."""
        for timer, _, conn in self._thinking.values():
            timer.cancel()
            self.inflight -= 1
            if conn is not None:
                conn.abort(graceful=True)
        self._thinking.clear()
        self.inflight -= len(self._waiting)
        self._waiting.clear()
        super().stop(drain_s)

    def row(self, c: StreamConn, done: float, error: str) -> None:
        super().row(c, done, error)
        session = self.sessions.pop(c.seq)
        self.turns.append(session.number)
        self.turns.append(session.turn)
        if error or session.turn >= self.opts.turns:
            return  # the session ends: done, or a turn failed
        answer = "".join(chunk_text(data, True) for data in c.texts)
        prompt = self.turn_prompt(session)
        session.history += [
            {"role": "user", "content": prompt.text},
            {"role": "assistant", "content": answer},
        ]
        session.turn += 1
        session.due = done + self.opts.think_time  # from the stream's end as received
        self._next = session

    def _take_batch(self):
        batch = replace(super()._take_batch(), turns=self.turns)
        self.turns = array("q")
        return batch


def stream_attack(opts: LlmOptions, prompts, sink, **kw) -> StreamAttack:
    """The attack of ``opts``: sessions with ``turns``, else single requests."""
    cls = MultiTurnAttack if opts.turns else StreamAttack
    return cls(opts, prompts, sink, **kw)

"""JSON on disk: records as JSON lines, flushed line by line; documents written atomically.

A benchmark that crashes keeps every record written before the crash: each ``write`` is one
``write`` of a whole line followed by a flush, under a lock, so lines from several threads never
interleave. ``read`` rebuilds the frozen records, nested ``TaskRecord``s included, and names the
file and line of anything it cannot use.

A writer killed in the middle of a line (SIGKILL, the OOM killer, a full disk) leaves that line cut
short. Readers leave it out and count it (``Records.torn``); a writer that appends to the file
later (the next phase, a restarted poller) first cuts the partial line off, so that its own lines
start whole and the file stays readable.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from pathlib import Path

from kfp_bench.atomic import write_json
from kfp_bench.errors import ResultsError
from kfp_bench.records import RunRecord, TaskRecord

_CHUNK = 64 * 1024


class Records(list):
    """The records of a JSON-lines file, in order; ``torn`` is 1 when its last line was cut short
    by a crash (that line is left out), else 0."""

    torn: int = 0


class JsonlWriter:
    """Write records to ``path``, one JSON object a line, flushed as each is written; ``append``
    keeps what the file holds (a later phase of the same benchmark adding its records), less a
    last line a crashed writer left cut short (``dropped`` is then its length in bytes)."""

    def __init__(self, path: str | os.PathLike, append: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.dropped = _drop_torn_tail(self.path) if append else 0
        self._f = self.path.open("a" if append else "w", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, record) -> None:
        """Append a record (a dataclass) or a plain dict."""
        doc = record if isinstance(record, dict) else dataclasses.asdict(record)
        line = json.dumps(doc, separators=(",", ":")) + "\n"
        with self._lock:
            if not self._f.closed:
                self._f.write(line)
                self._f.flush()

    def write_many(self, docs) -> None:
        """Append plain dicts in one write and one flush: a batch's lines stay together, and
        writers of several processes appending to one file never cut into each other's."""
        data = "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs).encode()
        with self._lock:
            if data and not self._f.closed:
                self._f.flush()  # one write(2) of the whole batch, past the file's own buffer
                view = memoryview(data)
                while view:
                    view = view[os.write(self._f.fileno(), view) :]

    def close(self) -> None:
        with self._lock:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def whole_lines_end(f) -> int:
    """The offset just past the last newline of the binary file ``f`` (0 if it has none): where
    its whole lines end, whatever a writer killed mid-line left after them."""
    pos = f.seek(0, os.SEEK_END)
    while pos > 0:  # back to the last newline, a chunk at a time
        start = max(pos - _CHUNK, 0)
        f.seek(start)
        chunk = f.read(pos - start)
        if b"\n" in chunk:
            return start + chunk.rindex(b"\n") + 1
        pos = start
    return 0


def _drop_torn_tail(path: Path) -> int:
    """Cut off a last line a crashed writer left without its newline; return its length in
    bytes. A last line that is whole JSON but for the newline gets the newline instead."""
    try:
        f = path.open("rb+")
    except FileNotFoundError:
        return 0
    with f:
        end = f.seek(0, os.SEEK_END)
        keep = whole_lines_end(f)
        if keep == end:
            return 0
        f.seek(keep)
        try:
            json.loads(f.read())
        except ValueError:
            f.truncate(keep)
            return end - keep
        f.write(b"\n")
        return 0


def read(path: str | os.PathLike, cls: type) -> Records:
    """The records of type ``cls`` (``ApiCall`` or ``RunRecord``) in a JSON-lines file; a last
    line cut short by a crash is left out and counted in ``torn``."""

    def record(d: dict):
        if cls is RunRecord:
            d["tasks"] = tuple(TaskRecord(**t) for t in d.get("tasks", ()))
            d["polled"] = tuple(d.get("polled", ()))
        return cls(**d)

    return _read(path, record, f"a {cls.__name__} record")


def read_dicts(path: str | os.PathLike) -> Records:
    """The JSON objects of a JSON-lines file; a last line cut short by a crash is left out and
    counted in ``torn``."""
    return _read(path, lambda d: d, "a JSON object")


def _read(path: str | os.PathLike, make, what: str) -> Records:
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ResultsError(f"{p}: no such records file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{p}: cannot read it ({exc})") from None
    out = Records()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(make(json.loads(line)))
        except (ValueError, TypeError) as exc:
            # The last line of a crashed benchmark may be cut short: keep what came before it.
            if n == len(lines):
                out.torn = 1
                break
            raise ResultsError(f"{p}:{n}: not {what} ({exc})") from None
    return out


#: Write a document as JSON; a crash mid-write never leaves a half file, and a good file there
#: is only ever replaced whole.
write_json_atomic = write_json

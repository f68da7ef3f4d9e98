"""JSON on disk: records as JSON lines, flushed line by line; documents written atomically.

A benchmark that crashes keeps every record written before the crash: each ``write`` is one
``write`` of a whole line followed by a flush, under a lock, so lines from several threads never
interleave. ``read`` rebuilds the frozen records, nested ``TaskRecord``s included, and names the
file and line of anything it cannot use.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import threading
from pathlib import Path

from kfp_bench.errors import ResultsError
from kfp_bench.records import ApiCall, RunRecord, TaskRecord


class JsonlWriter:
    """Write records to ``path``, one JSON object a line, flushed as each is written; ``append``
    keeps what the file holds (a later phase of the same benchmark adding its records)."""

    def __init__(self, path: str | os.PathLike, append: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
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

    def close(self) -> None:
        with self._lock:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read(path: str | os.PathLike, cls: type) -> list:
    """The records of type ``cls`` (``ApiCall`` or ``RunRecord``) in a JSON-lines file."""
    p = Path(path)
    out = []
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ResultsError(f"{p}: no such records file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{p}: cannot read it ({exc})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            if cls is RunRecord:
                d["tasks"] = tuple(TaskRecord(**t) for t in d.get("tasks", ()))
            out.append(cls(**d))
        except (ValueError, TypeError) as exc:
            # The last line of a crashed benchmark may be cut short: keep what came before it.
            if n == len(lines):
                break
            raise ResultsError(f"{p}:{n}: not a {cls.__name__} record ({exc})") from None
    return out


def read_dicts(path: str | os.PathLike) -> list[dict]:
    """The JSON objects of a JSON-lines file, ignoring a last line cut short by a crash."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ResultsError(f"{p}: no such records file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{p}: cannot read it ({exc})") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as exc:
            if n == len(lines):
                break
            raise ResultsError(f"{p}:{n}: not a JSON object ({exc})") from None
    return out


def write_json_atomic(doc, path: str | os.PathLike) -> Path:
    """Write ``doc`` as JSON; a crash mid-write never leaves a half file at ``path``, and a good
    file there is only ever replaced whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


__all__ = ["ApiCall", "JsonlWriter", "RunRecord", "read", "read_dicts", "write_json_atomic"]

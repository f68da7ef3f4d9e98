"""The results files of bench/: one JSON document per run of a script, kept in
``bench/results/<benchmark>/<started>.json``, from which ``bench/render.py`` writes BENCHMARKS.md.

A document holds what a reader needs to trust a figure and to measure it again: the machine, the
versions, the commit, the command, the tables (kfp-bench beside its peers) and the goals, each
with its verdict. ``save`` writes one; ``latest`` reads the newest of each benchmark. A document
whose figures were copied from earlier prose rather than written by a run says so in ``source``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

FORMAT = "kfp-bench/bench-result"
FORMAT_VERSION = 1
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


@dataclass(frozen=True)
class Table:
    """One table of a result: a title, its column names, its rows of cells (text or numbers).
    A ``detail`` table (a time series, every round) stays in the file, out of BENCHMARKS.md."""

    title: str
    columns: list[str]
    rows: list[list]
    detail: bool = False


@dataclass(frozen=True)
class Goal:
    """A figure against its goal: ``met`` True or False, or None where no verdict applies."""

    figure: str
    value: str
    goal: str
    met: bool | None


@dataclass(frozen=True)
class Result:
    """One run of a bench script."""

    benchmark: str
    title: str
    command: str
    started: str
    commit: str
    machine: dict
    versions: dict
    tables: list[Table]
    goals: list[Goal] = field(default_factory=list)
    notes: str = ""
    #: empty for a run of the script; else where the figures were copied from, e.g.
    #: "transcribed from BENCHMARKS.md at f069c4c"
    source: str = ""

    def to_dict(self) -> dict:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, **asdict(self)}

    @classmethod
    def from_dict(cls, doc: dict) -> Result:
        if doc.get("format") != FORMAT or doc.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"not a {FORMAT} v{FORMAT_VERSION} document")
        fields = {k: v for k, v in doc.items() if k not in ("format", "format_version")}
        fields["tables"] = [Table(**t) for t in fields["tables"]]
        fields["goals"] = [Goal(**g) for g in fields.get("goals", [])]
        return cls(**fields)


def now() -> str:
    """The current time as results files write it: UTC, to the second."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def command() -> str:
    """The running bench script's command line, as a reader types it from the checkout."""
    return shlex.join(["python", f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]])


def commit() -> str:
    """The checkout's commit, short, with ``-dirty`` when files differ from it."""
    git = ["git", "-C", str(HERE.parent)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no"], text=True, capture_output=True
    )
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def file_name(result: Result) -> str:
    """The results file's name in its benchmark's folder: its start time, without colons."""
    return f"{result.started.replace(':', '')}.json"


def save(result: Result, root: Path = RESULTS) -> Path:
    """Write ``result`` as ``root/<benchmark>/<started>.json``; the path written."""
    folder = root / result.benchmark
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name(result)
    path.write_text(json.dumps(result.to_dict(), indent=1, ensure_ascii=False) + "\n")
    return path


def latest(root: Path = RESULTS) -> list[Result]:
    """The newest result of each benchmark under ``root``, by benchmark name."""
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        files = sorted(folder.glob("*.json"))
        if files:
            found.append(Result.from_dict(json.loads(files[-1].read_text())))
    return found

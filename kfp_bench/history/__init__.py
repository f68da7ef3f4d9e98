"""The results history: each benchmark kept under a timestamped key; the baseline of a verdict.

A key is ``YYYYMMDDTHHMMSSZ-<8 hex>``: the benchmark's start (UTC) and a digest of its summary.json,
so keys sort by time, two benchmarks never share one, and the same results archived twice land on
the same key (the second time writes nothing). Under a key::

    summary.json, runs.jsonl, api_calls.jsonl, load.json   the results directory's files
    report.html, summary.md                               the report made when it was archived
    metrics.json                                          written last: a key without it is
                                                          incomplete and is ignored

A load or LLM result file (``kfp-bench load``/``llm --json-out``) is kept under
``YYYYMMDDTHHMMSSZ-<8 hex>-<kind>`` (its start, a digest of the file, ``load`` or ``llm``): its
report's files, then the file itself as ``<kind>.json``, written last as its completion mark.
Those keys are outside the trend and the baselines, which compare benchmark directories.

``History`` is what the report needs: the earlier entries (for the trend chart) and the verdict.
``kfp_bench.history.regress`` makes the verdict; ``kfp_bench.history.uri`` owns the storage.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kfp_bench.errors import BaselineError, ConfigError, HistoryError, ResultsError, UnknownKeyError
from kfp_bench.history.uri import Store, open_store
from kfp_bench.results import Results, read_results

if TYPE_CHECKING:  # scipy is imported only when a verdict is made
    from kfp_bench.history.regress import Verdict

# Imports inside functions: the regression tests need scipy (the history extra), and only a verdict
# needs them.

#: The results directory's files that are archived, when present.
RESULT_FILES = ("summary.json", "runs.jsonl", "api_calls.jsonl", "load.json")
#: The report's files archived beside them (metrics.json goes last, as the completion mark).
REPORT_FILES = ("report.html", "summary.md")
MARKER = "metrics.json"
#: The trend chart shows at most this many earlier results.
TREND_LIMIT = 30


@dataclass(frozen=True, slots=True)
class Entry:
    """One archived benchmark: its key, start time (epoch s) and metrics.json."""

    key: str
    time: float
    metrics: dict


@dataclass
class History:
    """What the report shows of the past.

    Attributes:
        uri: the store's URI.
        entries: earlier results, oldest first (at most ``TREND_LIMIT``).
        key: the current result's key.
        verdict: the regression verdict, or None when no baseline was compared.
        baseline: the baseline as asked for (``last:N`` or a key), or "".
        refused: why no verdict was made (too few samples), or "".
    """

    uri: str
    entries: list[Entry] = field(default_factory=list)
    key: str = ""
    verdict: Verdict | None = None
    baseline: str = ""
    refused: str = ""


def started_at(results: Results) -> float:
    """When the benchmark started (epoch s): the runs' or the load's start, else when written."""
    s = results.summary
    times = [s.get("started_at"), (s.get("load") or {}).get("started_at"), s.get("written_at")]
    times = [float(t) for t in times if isinstance(t, int | float) and t > 0]
    return min(times[:2]) if times[:2] else (times[0] if times else 0.0)


def key_of(results: Results) -> str:
    """The history key of ``results`` (see the module docstring)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started_at(results)))
    digest = hashlib.sha256((results.path / "summary.json").read_bytes()).hexdigest()[:8]
    return f"{stamp}-{digest}"


def entries(store: Store, before: str | None = None) -> list[Entry]:
    """Complete entries of benchmark directories (those with metrics.json), oldest first; only
    keys < ``before``."""
    out = []
    for key, names in store.keys().items():
        if not _DIR_KEY.fullmatch(key) or MARKER not in names:
            continue
        if before is not None and key >= before:
            continue
        try:
            metrics = json.loads(store.read(key, MARKER))
        except ValueError:
            continue  # a damaged entry is skipped, not fatal to tonight's report
        out.append(Entry(key, _key_time(key), metrics))
    return out


_DIR_KEY = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")


def file_key(path: Path, kind: str) -> str:
    """The history key of a load or LLM result file (see the module docstring)."""
    data = path.read_bytes()
    starts = _started(json.loads(data))
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(min(starts) if starts else 0))
    return f"{stamp}-{hashlib.sha256(data).hexdigest()[:8]}-{kind}"


def _started(doc) -> list[float]:
    """Every ``started_at`` in a result document (a sweep keeps one a step)."""
    if isinstance(doc, list):
        return [t for v in doc for t in _started(v)]
    if not isinstance(doc, dict):
        return []
    own = doc.get("started_at")
    mine = [float(own)] if isinstance(own, int | float) and own > 0 else []
    return mine + [t for v in doc.values() for t in _started(v)]


def archive_file(store: Store, path: Path, kind: str, bundle: dict[str, Path]) -> tuple[str, bool]:
    """Store a load or LLM result file and its report's files under its key; nothing existing is
    replaced. Returns (key, False) when the key was complete already.

    Raises:
        HistoryError: a name of the key is stored with other bytes.
    """
    key, mark = file_key(path, kind), f"{kind}.json"
    if mark in store.keys().get(key, []):
        return key, False
    why = f"(another writer); {path} is not archived: remove that key's files or archive elsewhere"
    _put(store, key, [*sorted(bundle.items()), (mark, path)], why)
    return key, True


def _put(store: Store, key: str, files, why: str) -> None:
    """Each ``(name, path)`` of ``files`` stored under ``key``: a name already stored with the
    same bytes is an archive cut off and run again; with other bytes, ``HistoryError``."""
    for name, path in files:
        data = Path(path).read_bytes()
        if not store.write(key, name, data) and store.read(key, name) != data:
            raise HistoryError(f"{store.uri}: {key}/{name} is there with other content {why}")


def _key_time(key: str) -> float:
    try:
        return float(calendar.timegm(time.strptime(key[:16], "%Y%m%dT%H%M%SZ")))
    except ValueError:
        return 0.0


def baseline_keys(spec: str, earlier: list[Entry], uri: str) -> list[str]:
    """The keys named by ``--baseline``: ``last:N`` (the N latest earlier results) or one KEY."""
    if spec.startswith("last:"):
        try:
            n = int(spec[5:])
        except ValueError:
            n = 0
        if n < 1:
            raise ConfigError(f"--baseline {spec}: N must be a whole number >= 1, e.g. last:5")
        return [e.key for e in earlier[-n:]]
    keys = [e.key for e in earlier]
    if spec in keys:
        return [spec]
    near = ", ".join(keys[-3:]) or "none"
    raise UnknownKeyError(
        f"--baseline {spec}: no such complete result in {uri} (latest keys: {near}); "
        "give last:N or one of the keys"
    )


def fetch(store: Store, key: str, into: Path) -> Results:
    """Download the results files of ``key`` into ``into/key`` and read them."""
    names = store.keys().get(key, [])
    d = into / key
    d.mkdir(parents=True, exist_ok=True)
    for name in RESULT_FILES:
        if name in names:
            (d / name).write_bytes(store.read(key, name))
    try:
        return read_results(d)
    except ResultsError as exc:
        raise HistoryError(f"{store.uri}: stored result {key} is unusable: {exc}") from None


def archive(store: Store, key: str, results: Results, bundle: dict[str, Path]) -> bool:
    """Store ``results`` and its report under ``key``; nothing existing is replaced.

    Returns False when the key was already complete (the same results archived before). The
    completion marker is written last, and only when every file is there with these bytes: a
    name already stored with the same bytes is an archive cut off and run again.

    Raises:
        HistoryError: a name of the key is stored with other bytes (another writer, or other
            results under the same key); the entry is left without its marker.
    """
    if MARKER in store.keys().get(key, []):
        return False
    files = [(name, results.path / name) for name in RESULT_FILES]
    files += [(name, Path(bundle[name])) for name in (*REPORT_FILES, MARKER) if name in bundle]
    why = (
        "(another writer, or other results under the same key); this entry is not archived: "
        "remove that key's files or archive under another --results-uri"
    )
    _put(store, key, [(name, path) for name, path in files if path.exists()], why)
    return True


def prepare(store: Store, results: Results, baseline: str = "") -> History:
    """The history of ``results``: earlier entries and, when ``baseline`` is given, the verdict.

    A baseline with too few samples leaves ``verdict`` None and says why in ``refused``.
    """
    from kfp_bench.history import regress

    key = key_of(results)
    earlier = entries(store, before=key)
    hist = History(store.uri, earlier[-TREND_LIMIT:], key, baseline=baseline)
    if not baseline:
        return hist
    keys = baseline_keys(baseline, earlier, store.uri)
    with tempfile.TemporaryDirectory(prefix="kfp-bench-baseline-") as tmp:
        base = [fetch(store, k, Path(tmp)) for k in keys]
        try:
            hist.verdict = regress.compare(results, base, names=keys)
        except BaselineError as exc:
            hist.refused = str(exc)
    return hist


__all__ = [
    "Entry",
    "History",
    "Store",
    "archive",
    "archive_file",
    "baseline_keys",
    "entries",
    "fetch",
    "file_key",
    "key_of",
    "open_store",
    "prepare",
]

"""The one skeleton of a measuring command (``load``, ``llm``, ``sweep``, ``runs``): every output
checked before any work, the work, the save, the gates, the report and the exit code, in that
order."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from kfp_bench.cli.common import said_gates
from kfp_bench.cli.outputs import NOT_SAVED, Outputs, save
from kfp_bench.errors import ConfigError, EngineError, ResultsError
from kfp_bench.jsonl import write_json_atomic
from kfp_bench.load.requests_out import RequestsOut
from kfp_bench.outcome import describe, exit_code, gated


class Measurement:
    """One measuring command. Built before the work: its output (``--json-out``, or the folder
    of ``runs --out``) is checked at once (a ``ConfigError`` naming the flag and the path,
    nothing sent); ``run`` then does the rest, and ``saved`` says afterwards whether the save
    worked. The server metrics' collector (``a.collector``, from ``cli.metrics_flags``) asks
    Prometheus only in ``run``: after every check that needs no request."""

    def __init__(
        self, a: argparse.Namespace, command: str, flag: str = "--json-out", folder: bool = False
    ) -> None:
        self.command, self.flag = command, flag
        self.path = getattr(a, flag[2:].replace("-", "_"))
        self.outs = Outputs()
        self.json_out: Path | None = self.outs.add(self.path, flag, folder=folder)
        self.collector = getattr(a, "collector", None)
        self._files = {flag: self.json_out} if self.json_out and not folder else {}
        self._exports: list[tuple[Path, str, str, Callable[[object], dict]]] = []
        self.saved = False

    def another_file(self, path: str | None, flag: str) -> Path | None:
        """Check one more output file of the command, as ``--json-out`` is: at once, and never
        the file another of its flags writes."""
        p = self.outs.add(path, flag)
        if p is None:
            return None
        for other, q in self._files.items():
            if p.resolve() == q.resolve():
                raise ConfigError(f"{flag} {path}: the file {other} writes; give another path")
        self._files[flag] = p
        return p

    def export(self, path: str | None, flag: str, doc: Callable[[object], dict]) -> None:
        """Also write ``doc(result)`` as JSON to ``path`` (checked now, as ``another_file``),
        once the result is saved; a write that fails there keeps the document as ``save``
        does."""
        if (p := self.another_file(path, flag)) is not None:
            self._exports.append((p, flag, path, doc))

    def requests_log(self, a: argparse.Namespace, **kw) -> RequestsOut | None:
        """``--requests-out`` checked (``another_file``), as a ``RequestsOut`` of ``kw``."""
        path = self.another_file(a.requests_out, "--requests-out")
        return RequestsOut(path, **kw) if path is not None else None

    def run(
        self,
        work: Callable[[], object],
        *,
        gates,
        metrics: Callable[[object], dict],
        report: Callable[[object], None],
        write: Callable[[object, Path], object],
        flags: Callable[[object], list[str]] = lambda r: list(r.flags),
        partial: Callable[[EngineError], object] = lambda exc: exc.stats,
        finish: Callable[[object], None] = lambda r: None,
        as_doc: Callable[[object], dict] = lambda r: r.to_dict(),
        gates_out=None,
        described: bool = False,
    ) -> int:
        """``work()`` with the output folders made and the collector started; what it measured
        (``partial`` of an ``EngineError``, a bug: still saved and reported) goes through
        ``finish`` (what the options add), is saved with ``write(result, path)`` (kept as
        ``as_doc(result)`` when that fails), checked against ``gates`` (on ``gates_out``,
        stdout by default) and reported; the exit code follows ``flags``, each failure among
        them ``described`` on stderr for a result whose report does not."""
        failure = None
        if self.collector is not None:
            self.collector.check()  # a query Prometheus cannot parse: refused, nothing made
        with self.outs.made():
            if self.collector is not None:
                self.collector.start()  # the window: the first scrape, then the work
            try:
                result = work()
            except EngineError as exc:
                if (result := partial(exc)) is None:
                    raise
                failure = exc
        finish(result)
        saved = not self.json_out or save(  # before the report, so that it can say it was not
            lambda: write(result, self.json_out), lambda: as_doc(result), command=self.command,
            flag=self.flag, path=self.path,
        )  # fmt: skip
        for p, flag, given, doc in self._exports:
            exported = doc(result)
            saved = save(
                lambda p=p, exported=exported: write_json_atomic(exported, p), exported,
                command=self.command, flag=flag, path=given,
            ) and saved  # fmt: skip
        self.saved = bool(saved and self.json_out)
        if not saved and hasattr(result, "flag"):  # a load's own flags, shown by its report
            result.flag(NOT_SAVED)
        elif not saved and isinstance(result, dict):  # a runs summary
            result["flags"] = [*result.get("flags", []), NOT_SAVED]
        verdicts = said_gates(gates, lambda: metrics(result), gates_out)
        report(result)
        found = list(dict.fromkeys(flags(result) + ([] if saved else [NOT_SAVED])))
        if failure is not None:
            print(f"kfp-bench: {failure}", file=sys.stderr)
        for line in describe(found) if described else ():
            print(f"kfp-bench {self.command}: {line}", file=sys.stderr)
        code = exit_code(found)  # not-saved, interrupted, workers-lost, engine-error, ...
        return gated(code, verdicts) if code or failure is None else 1


def lost_workers(workers: dict) -> None:
    """Warn on stderr of the worker processes that died before reporting (``missing``), and
    of what the figures still hold of them (``partial``: measured up to their last flush)."""
    if not workers.get("missing"):
        return
    missing = ", ".join(map(str, workers["missing"]))
    partial = workers.get("partial", [])
    lost = [m for m in workers["missing"] if m not in partial]
    what = (
        "their requests are not in the figures"
        if not partial
        else "the figures include what they measured up to their last flush"
        if not lost
        else f"the figures include what {', '.join(map(str, partial))} measured up to "
        f"their last flush; those of {', '.join(map(str, lost))} are lost"
    )
    print(
        f"kfp-bench: warning: worker process(es) {missing} died before reporting; {what}",
        file=sys.stderr,
    )


def logged(log: RequestsOut | None, work: Callable[[Callable | None], object]):
    """``work(on_batch_factory)`` with the per-request log started (None: no log); a load
    refused after all (a check only the engine makes) leaves no log behind."""
    if log is None:
        return work(None)
    log.start()
    try:
        return work(log.factory)
    except (ConfigError, ResultsError):
        log.discard()
        raise
    finally:
        log.close()

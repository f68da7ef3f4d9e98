"""``kfp-bench load``, ``merge`` and ``llm-server``: hey's flags, the load engine, a local LLM."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from kfp_bench.cli import metrics_flags
from kfp_bench.cli.common import (
    Progress,
    add_body_flags,
    add_cost_flag,
    add_hey_flags,
    add_open_loop_flags,
    add_progress_flag,
    add_requests_out_flag,
    add_shape_flags,
    add_threshold_flag,
    add_tls_flags,
    command,
    gates_of,
    request_body,
    server_command,
    shared_options,
)
from kfp_bench.cli.common import load_help as _h
from kfp_bench.cli.measure import Measurement, logged, lost_workers
from kfp_bench.cli.outputs import NOT_SAVED, Outputs, save
from kfp_bench.cli.workload import add_workload_flags
from kfp_bench.jsonl import whole_lines_end
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.workers import chained, run_load
from kfp_bench.outcome import EXIT_NOT_SAVED
from kfp_bench.report import hey, llm_text
from kfp_bench.sandbox import llm_server
from kfp_bench.stats import store
from kfp_bench.stats.cost import priced
from kfp_bench.stats.llm import LlmStats

# Imports inside functions: the CLI imports every command's module to build its parser: what only
# running a command needs is imported there, so that --help and a refused flag start at once
# (bench/cli_startup.py).


def register(sub) -> None:
    p = command(sub, "load", description="Load an HTTP endpoint. hey's flags keep hey's meaning.")
    _add_load_flags(p)
    metrics_flags.wrap(p, cmd_load)

    p = command(sub, "merge", cmd_merge, abbrev=True)
    p.add_argument("results", nargs="+", metavar="RESULT.json")
    p.add_argument("-o", "--out", required=True, metavar="FILE", help="Where to write the merge.")
    server_command(sub, "llm-server", llm_server)


def _add_load_flags(p: argparse.ArgumentParser) -> None:
    """hey's flags with hey's meaning (single dash, as hey spells them), then kfp-bench's own."""
    add_hey_flags(p, _h, concurrency=50, timeout=20.0)
    add_body_flags(p, method="GET", content_type="text/html")
    p.add_argument("-A", default="", dest="accept", help=_h("accept"))
    p.add_argument("-a", default="", dest="basic_auth", metavar="USER:PASS", help=_h("basic_auth"))
    p.add_argument("-U", default="", dest="user_agent", help=_h("user_agent"))
    for name in ("keepalive", "compression"):  # hey's single dash, and the usual double
        flag = f"disable-{name}"
        p.add_argument(f"-{flag}", f"--{flag}", action="store_true", help=_h(f"disable_{name}"))
    p.add_argument(
        "-o",
        choices=["csv"],
        dest="output",
        help="Output type: csv prints one row per request instead of the summary.",
    )
    g = p.add_argument_group("beyond hey")
    add_open_loop_flags(g, _h)
    add_workload_flags(g)
    add_tls_flags(g, _h)
    g.add_argument(
        "--json-out",
        metavar="FILE",
        help="Write the full result (histograms, "
        "series, status codes, errors, options) as JSON to FILE.",
    )
    add_requests_out_flag(g)
    add_shape_flags(g)
    add_progress_flag(g)
    add_threshold_flag(g)
    add_cost_flag(g)


#: The ``LoadOptions`` fields of hey's flags that ``load`` alone has, by their dests.
HEY_FLAGS = ("accept", "basic_auth", "user_agent", "disable_keepalive", "disable_compression")


def _load_options(a: argparse.Namespace) -> LoadOptions:
    hey_only = {k: getattr(a, k) for k in HEY_FLAGS}
    return LoadOptions(**shared_options(a), **request_body(a), **hey_only).validate()


def cmd_load(a: argparse.Namespace) -> int:
    opts = _load_options(a)
    gates = gates_of(a, {"load"}, "load")
    measurement = Measurement(a, "load")
    log = measurement.requests_log(a, stages=opts.stages)
    progress = Progress(a.progress or sys.stderr.isatty())
    csv_dir = tempfile.mkdtemp(prefix="kfp-bench-csv-") if a.output == "csv" else None

    def load(requests_log):
        csv = _csv_writer_factory(csv_dir) if csv_dir else None
        each = [f for f in (csv, requests_log) if f]  # CSV rows first, then the log's
        on_batch = (lambda i: chained(*(f(i) for f in each))) if each else None
        return run_load(opts, on_progress=progress, on_batch_factory=on_batch)

    def finish(stats) -> None:
        progress.done()
        priced(stats, a)  # --cost-per-hour, saved with the result

    def report(stats) -> None:
        if csv_dir:
            hey.write_csv_header(sys.stdout)
            for part in sorted(Path(csv_dir).glob("*.csv")):
                _copy_whole_lines(part, sys.stdout)
        else:
            hey.write_text(stats, sys.stdout)
            hey.write_stages(stats)
        lost_workers(stats.workers)

    try:
        return measurement.run(
            lambda: logged(log, load), gates=gates, metrics=_metrics, report=report,
            write=store.save, finish=finish,
            gates_out=sys.stderr if csv_dir else None,  # beside the CSV rows, on stderr
        )  # fmt: skip
    finally:
        if csv_dir:
            shutil.rmtree(csv_dir, ignore_errors=True)


def _metrics(stats) -> dict:
    from kfp_bench.report.metrics import of_load  # pandas: only when gates are given

    return of_load(stats)


def _copy_whole_lines(path: Path, out) -> None:
    """Copy a worker's CSV rows to ``out``, less a last row that a worker killed mid-write left
    cut short (its rows are written as they are measured, so the ones before stand)."""
    with path.open("rb") as f:
        left = whole_lines_end(f)
        f.seek(0)
        while left > 0:
            chunk = f.read(min(left, 1 << 20))
            out.write(chunk.decode())
            left -= len(chunk)


def _csv_writer_factory(directory: str):
    def factory(index: int):
        f = open(Path(directory) / f"{index:04d}.csv", "w", buffering=1 << 16)  # noqa: SIM115

        def on_batch(batch):
            hey.write_csv_rows(batch, f)
            f.flush()

        return on_batch

    return factory


def cmd_merge(a: argparse.Namespace) -> int:
    outs = Outputs()
    out = outs.add(a.out, "-o")
    merged, *rest = store.load_same_kind(a.results)
    for part in rest:
        merged.merge(part)
    outs.make()  # once every result was read: a refused merge creates nothing
    saved = save(
        lambda: store.save(merged, out), merged.to_dict, command="merge", flag="-o", path=a.out
    )
    if not saved:
        merged.flag(NOT_SAVED)
    else:  # the server series beside the inputs, merged beside the output
        from kfp_bench.metrics.series import merge_beside

        if (server := merge_beside(a.results, out)) is not None:
            print(f"kfp-bench: server metrics merged into {server}", file=sys.stderr)
    if isinstance(merged, LlmStats):
        llm_text.write_text(merged, sys.stdout)
    else:
        hey.write_text(merged, sys.stdout)
    return 0 if saved else EXIT_NOT_SAVED

"""``kfp-bench runs``, ``cleanup`` and ``kfp-server``: the KFP runs benchmark and its server."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys

from kfp_bench._doc import field_help
from kfp_bench.cli import metrics_flags
from kfp_bench.cli.common import (
    Progress,
    add_progress_flag,
    add_threshold_flag,
    command,
    duration,
    gates_of,
    server_command,
)
from kfp_bench.kfp.auth import MODES as AUTH_MODES
from kfp_bench.kfp.auth import Auth
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.fill import MODES as FILL_MODES
from kfp_bench.kfp.fill import FillOptions, run_with_fill
from kfp_bench.kfp.options import (
    DEFAULT_MAX_RUNS,
    DEFAULT_RETRIES,
    DEFAULT_RETRY_MAX_WAIT,
    CleanupOptions,
    RunsOptions,
    parse_params,
)
from kfp_bench.metrics import series
from kfp_bench.outcome import EXIT_LEFT_BEHIND
from kfp_bench.sandbox import kfp_server

# Imports inside functions: the CLI imports every command's module to build its parser: what only
# running a command needs is imported there, so that --help and a refused flag start at once
# (bench/cli_startup.py).


def register(sub) -> None:
    p = command(
        sub, "runs", cmd_runs,
        "Upload a pipeline, create N runs at bounded concurrency, poll them with paged LIST "
        "calls, and report run and API-call latencies.",
    )  # fmt: skip
    _add_runs_flags(p)
    p = command(sub, "cleanup", cmd_cleanup)
    h = _add_kfp_flags(p, CleanupOptions)
    p.add_argument("--benchmark-id", default="", help=h("benchmark_id"))
    p.add_argument("--older-than", type=duration, default=0.0, metavar="AGE", help=h("older_than"))
    p.add_argument("--dry-run", action="store_true", help=h("dry_run"))
    p.add_argument("--concurrency", type=int, default=8, help=h("concurrency"))
    server_command(sub, "kfp-server", kfp_server)


def _add_kfp_flags(p: argparse.ArgumentParser, owner):
    """Host, credentials, timeout and retries, shared by runs and cleanup; returns the help of
    ``owner``'s (the options') fields."""
    h = functools.partial(field_help, owner)
    p.add_argument("--host", required=True, metavar="URL", help=h("host"))
    g = p.add_argument_group("auth")
    g.add_argument("--auth", default="auto", choices=AUTH_MODES, help=field_help(Auth, "mode"))
    g.add_argument("--token-file", default="", metavar="FILE", help=field_help(Auth, "token_file"))
    g.add_argument("--namespace", default="", help=field_help(Auth, "namespace"))
    p.add_argument(
        "--request-timeout", type=duration, default=30.0, metavar="S", help=h("request_timeout")
    )
    p.add_argument("--retries", type=int, default=DEFAULT_RETRIES, metavar="N", help=h("retries"))
    p.add_argument(
        "--retry-max-wait", type=duration, default=DEFAULT_RETRY_MAX_WAIT, metavar="S",
        help=h("retry_max_wait"),
    )  # fmt: skip
    return h


def _kfp_options(cls, a: argparse.Namespace, **given):
    """``cls`` (``RunsOptions``, ``CleanupOptions``) of the flags named as its fields, and
    ``given``."""
    names = {f.name for f in dataclasses.fields(cls)} - {"auth", *given}
    auth = Auth(a.auth, a.token_file, a.namespace)
    return cls(**{n: getattr(a, n) for n in names}, auth=auth, **given)


def _add_runs_flags(p: argparse.ArgumentParser) -> None:
    _rh = _add_kfp_flags(p, RunsOptions)
    p.add_argument("--pipeline", required=True, metavar="FILE|URL", help=_rh("pipeline"))
    p.add_argument("--num-runs", type=int, required=True, metavar="N", help=_rh("num_runs"))
    p.add_argument(
        "--create-concurrency", type=int, default=16, metavar="C", help=_rh("create_concurrency")
    )
    p.add_argument(
        "--poll-interval", type=duration, default=2.0, metavar="S", help=_rh("poll_interval")
    )
    p.add_argument("--poll-jitter", type=float, default=0.2, help=_rh("poll_jitter"))
    p.add_argument("--timeout", type=duration, default=600.0, metavar="S", help=_rh("timeout"))
    p.add_argument(
        "--on-timeout", default="terminate", choices=["terminate", "leave"], help=_rh("on_timeout")
    )
    p.add_argument("--params", default=None, metavar="JSON", help=_rh("params"))
    p.add_argument("--get-sample", type=int, default=1, metavar="K", help=_rh("get_sample"))
    p.add_argument(
        "--task-details", default="list", choices=["list", "get"], help=_rh("task_details")
    )
    p.add_argument("--max-runs", type=int, default=DEFAULT_MAX_RUNS, help=_rh("max_runs"))
    p.add_argument("--pipeline-id", default="", help=_rh("pipeline_id"))
    p.add_argument("--benchmark-id", default="", help=_rh("benchmark_id"))
    p.add_argument("--keep", action="store_true", help=_rh("keep"))
    p.add_argument("--metrics-url", default="", metavar="URL", help=_rh("metrics_url"))
    p.add_argument(
        "--out",
        default="results/runs",
        metavar="DIR",
        help="Directory for summary.json, runs.jsonl and api_calls.jsonl.",
    )
    add_progress_flag(p)
    _add_fill_flags(p)
    add_threshold_flag(p)


def _add_fill_flags(p: argparse.ArgumentParser) -> None:
    fh = functools.partial(field_help, FillOptions)
    g = p.add_argument_group("full database (docs/full-database.md)")
    g.add_argument("--fill", type=int, default=0, metavar="K", help=fh("target"))
    g.add_argument("--fill-steps", type=int, default=5, metavar="N", help=fh("steps"))
    g.add_argument("--fill-mode", default="terminate", choices=FILL_MODES, help=fh("mode"))
    g.add_argument("--fill-repeats", type=int, default=20, metavar="R", help=fh("repeats"))
    g.add_argument(
        "--fill-page-sizes", type=_sizes, default=(10, 20, 50, 100), metavar="LIST",
        help=fh("page_sizes") + " Comma-separated.",
    )  # fmt: skip
    g.add_argument(
        "--fill-timeout", type=duration, default=600.0, metavar="S", help=fh("settle_timeout")
    )
    g.add_argument(
        "--metrics-profile", default="", metavar="FILE|NAME",
        help="Named PromQL queries (docs/metrics-profiles.md; built-in: kfp) read over the fill "
        "and at each probe from --prometheus-url: the API server's and MySQL's own figures "
        "beside the latency against K.",
    )  # fmt: skip
    metrics_flags.add_prometheus_flags(g, "namespace=kubeflow")
    g.add_argument(
        "--metrics-step", type=duration, default=30.0, metavar="S",
        help="Prometheus's scrape interval of the API server and MySQL (default 30): each "
        "probe is framed by this long without calls on each side, so that a scrape falls "
        "before and after it; also the range queries' step.",
    )  # fmt: skip


#: The collector's series over the fill, saved in the results directory beside summary.json.
FILL_SERIES = "fill.server.json"


def _sizes(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give page sizes separated by commas, e.g. 10,20,50,100"
        ) from None


def _fill_options(a: argparse.Namespace):
    return FillOptions(
        target=a.fill, steps=a.fill_steps, mode=a.fill_mode, repeats=a.fill_repeats,
        page_sizes=a.fill_page_sizes, settle_timeout=a.fill_timeout,
    )  # fmt: skip


def cmd_runs(a: argparse.Namespace) -> int:
    from kfp_bench.cli.measure import Measurement
    from kfp_bench.report import runs as runs_report
    from kfp_bench.results import write_results

    # --out checked first; its folder is made once every input is checked, and removed again
    # when the driver refuses the manifest (nothing left behind).
    measurement = Measurement(a, "runs", "--out", folder=True)
    gates = gates_of(a, {"runs"}, "runs")
    collector = metrics_flags.collector(a)  # the fill's server metrics, or None
    opts = _kfp_options(RunsOptions, a, params=parse_params(a.params)).validate()
    shown = Progress(a.progress or sys.stderr.isatty())
    fopts = _fill_options(a).validate(opts.max_runs) if a.fill else None
    found: dict = {}  # what the work leaves beside its summary: the stats and the fill

    def progress(phase: str, created: int, final: int, requested: int) -> None:
        shown.say(f"{phase}: {created}/{requested} created, {final} finished")

    def work() -> dict:
        if fopts is None:
            stats, fill = run_benchmark(opts, out_dir=a.out, on_progress=progress), None
        else:
            stats, fill = run_with_fill(
                opts, fopts, out_dir=a.out, on_progress=progress,
                on_fill_progress=lambda phase, filled, target: progress(phase, filled, 0, target),
                collector=collector,
            )  # fmt: skip
        shown.done()
        found.update(stats=stats, fill=fill)
        doc = stats.summary()
        if fill is not None:
            doc["fill"] = fill
            doc["flags"] = sorted({*doc["flags"], *_fill_flags(fill)})
        return doc

    def write(doc: dict, out) -> None:  # a results directory: kfp-bench report reads it
        write_results(out, runs_summary=doc)

    def report(doc: dict) -> None:
        if measurement.saved and collector is not None and collector.out.window[1]:
            series.save(collector.out, f"{a.out}/{FILL_SERIES}")  # the fill's, for a reader
        runs_report.write_text(doc, sys.stdout)
        if measurement.saved:
            print(f"Wrote {a.out}/summary.json, runs.jsonl and api_calls.jsonl")
        _left_behind(found["stats"].cleanup, found["stats"].benchmark_id, found["fill"])

    return measurement.run(
        work, gates=gates, metrics=lambda doc: _metrics(a.out if measurement.saved else None, doc),
        report=report, write=write, flags=lambda doc: doc["flags"], as_doc=dict, described=True,
    )  # fmt: skip


def _fill_flags(fill: dict) -> list[str]:
    """The flags the fill puts on the benchmark: interrupted, and left-behind when its sweep
    left runs (``kfp_bench.outcome``)."""
    flags = [f for f in fill.get("flags", []) if f == "interrupted"]
    if (fill.get("cleanup") or {}).get("left"):
        flags.append("left-behind")
    return flags


def _metrics(out: str | None, doc: dict) -> dict:
    """The metrics of the results directory ``out`` (records and all), or of ``doc`` alone
    when it could not be saved."""
    from kfp_bench.report.metrics import collect, of_summary
    from kfp_bench.report.tables import build
    from kfp_bench.results import read_results

    return collect(build(read_results(out))) if out else of_summary(doc)


def _left_behind(cleanup: dict, bid: str, fill: dict | None) -> None:
    """Say on stderr what the benchmark and its fill left behind, and how to remove it."""
    for left in (fill or {}).get("cleanup", {}).get("left", []):
        print(f"kfp-bench runs: the fill left behind: {left}", file=sys.stderr)
    if cleanup.get("left"):
        print(
            f"kfp-bench runs: left behind: {', '.join(cleanup['left'])}; remove them with "
            f"kfp-bench cleanup --benchmark-id {bid}",
            file=sys.stderr,
        )


def cmd_cleanup(a: argparse.Namespace) -> int:
    opts = _kfp_options(CleanupOptions, a)
    report = sweep(opts)
    verb = "Would delete" if report["dry_run"] else "Found"
    print(
        f"{verb}: {len(report['recurring_runs'])} recurring runs, "
        f"{len(report['experiments'])} experiments, {report['runs']} runs, "
        f"{len(report['pipelines'])} pipelines, "
        f"{len(report['pipeline_versions'])} versions in other pipelines"
    )
    for kind in ("recurring_runs", "experiments", "pipelines", "pipeline_versions"):
        for name in report[kind]:
            print(f"  {name}")
    if not report["dry_run"]:
        d = report["deleted"]
        print(
            f"Deleted: {d['recurring_runs']} recurring runs, {d['runs']} runs, "
            f"{d['experiments']} experiments, {d['pipeline_versions']} pipeline versions, "
            f"{d['pipelines']} pipelines"
        )
    for f in report["failed"]:
        print(f"  failed: {f}")
    if report["failed"]:
        print(
            "kfp-bench cleanup: some objects of kfp-bench may remain (see 'failed' above); "
            "run the same command again",
            file=sys.stderr,
        )
        return EXIT_LEFT_BEHIND
    return 0

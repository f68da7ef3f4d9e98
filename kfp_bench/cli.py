"""The ``kfp-bench`` command: parse, build options, call the engine, hand results to reporters.

One subcommand per job (vegeta's subcommand map). Bad input prints one line naming the input and
the fix, and exits 2 with no traceback. The first Ctrl-C stops a load cleanly and still prints
what was measured; the exit code is then 130.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from kfp_bench import __version__
from kfp_bench._doc import field_help
from kfp_bench.errors import BenchError, ConfigError
from kfp_bench.load import LoadOptions, parse_duration, run_load
from kfp_bench.load.payload import parse_shape, read_body, v1_payload, v2_payload
from kfp_bench.report import hey
from kfp_bench.stats import store

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_REGRESSION = 3


class _Parser(argparse.ArgumentParser):
    """argparse, with one-line errors: ``kfp-bench load: <what> (see --help)``."""

    def error(self, message):
        raise ConfigError(f"{message} (see {self.prog} --help)")


def _h(name: str) -> str:
    return field_help(LoadOptions, name)


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_load_flags(p: argparse.ArgumentParser) -> None:
    """hey's flags with hey's meaning (single dash, as hey spells them), then kfp-bench's own."""
    p.add_argument("url", help=_h("url"))
    p.add_argument("-n", type=int, default=200, dest="requests", help=_h("requests"))
    p.add_argument("-c", type=int, default=50, dest="concurrency", help=_h("concurrency"))
    p.add_argument("-q", type=float, default=0.0, dest="qps", help=_h("qps"))
    p.add_argument("-z", type=_duration, default=0.0, dest="duration", help=_h("duration"))
    p.add_argument("-m", default="GET", dest="method", help=_h("method"))
    p.add_argument(
        "-H", action="append", default=[], dest="headers", metavar="HEADER", help=_h("headers")
    )
    p.add_argument("-d", dest="data", help="HTTP request body.")
    p.add_argument("-D", dest="data_file", metavar="FILE", help="HTTP request body from a file.")
    p.add_argument("-T", default="text/html", dest="content_type", help=_h("content_type"))
    p.add_argument("-A", default="", dest="accept", help=_h("accept"))
    p.add_argument("-a", default="", dest="basic_auth", metavar="USER:PASS", help=_h("basic_auth"))
    p.add_argument("-U", default="", dest="user_agent", help=_h("user_agent"))
    p.add_argument("-t", type=float, default=20.0, dest="timeout", help=_h("timeout"))
    p.add_argument("-host", "--host", default="", dest="host", help=_h("host"))
    p.add_argument(
        "-disable-keepalive",
        "--disable-keepalive",
        action="store_true",
        help=_h("disable_keepalive"),
    )
    p.add_argument(
        "-disable-compression",
        "--disable-compression",
        action="store_true",
        help=_h("disable_compression"),
    )
    p.add_argument(
        "-o",
        choices=["csv"],
        dest="output",
        help="Output type: csv prints one row per request instead of the summary.",
    )
    g = p.add_argument_group("beyond hey")
    g.add_argument("--rate", type=float, default=0.0, help=_h("rate"))
    g.add_argument(
        "--arrival", default="constant", choices=["constant", "poisson"], help=_h("arrival")
    )
    g.add_argument("--max-inflight", type=int, default=1000, help=_h("max_inflight"))
    g.add_argument("--workers", type=int, default=1, help=_h("workers"))
    g.add_argument("--insecure", action="store_true", help=_h("insecure"))
    g.add_argument("--cacert", default="", metavar="FILE", help=_h("cacert"))
    g.add_argument("--seed", type=int, default=None, help=_h("seed"))
    g.add_argument("--i-know", action="store_true", help=_h("i_know"))
    g.add_argument(
        "--json-out",
        metavar="FILE",
        help="Write the full result (histograms, "
        "series, status codes, errors, options) as JSON to FILE.",
    )
    g.add_argument(
        "--v1-shape",
        metavar="SHAPE",
        help='Send a KServe V1 body {"instances": ...} of this shape, e.g. 1,4.',
    )
    g.add_argument(
        "--v2-shape",
        metavar="SHAPE",
        help="Send an Open Inference Protocol (V2) "
        "body with one input tensor of this shape, e.g. 1,4.",
    )
    g.add_argument("--v2-datatype", default="FP32", help="Datatype of the V2 input tensor.")
    g.add_argument(
        "--progress",
        action="store_true",
        help="Show progress on stderr even when it is not a terminal.",
    )


def _load_options(a: argparse.Namespace) -> LoadOptions:
    if sum(x is not None for x in (a.data, a.data_file, a.v1_shape, a.v2_shape)) > 1:
        raise ConfigError("give one body: -d, -D, --v1-shape or --v2-shape")
    content_type = a.content_type
    if a.v1_shape:
        body, content_type = v1_payload(parse_shape(a.v1_shape, "--v1-shape")), "application/json"
    elif a.v2_shape:
        shape = parse_shape(a.v2_shape, "--v2-shape")
        body, content_type = v2_payload(shape, a.v2_datatype), "application/json"
    else:
        body = read_body(a.data, a.data_file, content_type)
    return LoadOptions(
        url=a.url,
        method=a.method,
        headers=tuple(a.headers),
        body=body,
        content_type=content_type,
        accept=a.accept,
        basic_auth=a.basic_auth,
        host=a.host,
        user_agent=a.user_agent,
        requests=a.requests,
        concurrency=a.concurrency,
        qps=a.qps,
        duration=a.duration,
        timeout=a.timeout,
        disable_keepalive=a.disable_keepalive,
        disable_compression=a.disable_compression,
        rate=a.rate,
        arrival=a.arrival,
        max_inflight=a.max_inflight,
        workers=a.workers,
        insecure=a.insecure,
        cacert=a.cacert,
        i_know=a.i_know,
        seed=a.seed,
    ).validate()


class _Progress:
    """A one-line progress display on stderr."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = 0.0

    def __call__(self, requests: int, failed: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.last < 0.5:
            return
        self.last = now
        t = now - self.start
        sys.stderr.write(
            f"\r  {t:6.1f}s  {requests} requests  {failed} failed  "
            f"{requests / t if t else 0:.0f} req/s "
        )
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.last:
            sys.stderr.write("\n")


def cmd_load(a: argparse.Namespace) -> int:
    opts = _load_options(a)
    progress = _Progress(a.progress or sys.stderr.isatty())
    csv_dir = tempfile.mkdtemp(prefix="kfp-bench-csv-") if a.output == "csv" else None
    try:
        stats = run_load(
            opts,
            on_progress=progress,
            on_batch_factory=_csv_writer_factory(csv_dir) if csv_dir else None,
        )
        progress.done()
        if csv_dir:
            hey.write_csv_header(sys.stdout)
            for part in sorted(Path(csv_dir).glob("*.csv")):
                with part.open() as f:
                    shutil.copyfileobj(f, sys.stdout)
        else:
            hey.write_text(stats, sys.stdout)
    finally:
        if csv_dir:
            shutil.rmtree(csv_dir, ignore_errors=True)
    if a.json_out:
        store.save(stats, a.json_out)
    if stats.workers["missing"]:
        missing = ", ".join(map(str, stats.workers["missing"]))
        print(
            f"kfp-bench: warning: worker process(es) {missing} died before reporting; their "
            "requests are not in the figures",
            file=sys.stderr,
        )
    return EXIT_INTERRUPTED if "interrupted" in stats.flags else 0


def _csv_writer_factory(directory: str):
    def factory(index: int):
        f = open(Path(directory) / f"{index:04d}.csv", "w", buffering=1 << 16)  # noqa: SIM115

        def on_batch(batch):
            hey.write_csv_rows(batch, f)
            f.flush()

        return on_batch

    return factory


def cmd_merge(a: argparse.Namespace) -> int:
    merged = store.load(a.results[0])
    for path in a.results[1:]:
        merged.merge(store.load(path))
    store.save(merged, a.out)
    hey.write_text(merged, sys.stdout)
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    from kfp_bench.report.rebuild import rebuild_all

    outcomes = rebuild_all(
        a.results, sys.stdout, out_dir=a.out, results_uri=a.results_uri, baseline=a.baseline
    )
    refused = [o.history.refused for o in outcomes if o.history and o.history.refused]
    for why in refused:
        print(f"kfp-bench: {why}", file=sys.stderr)
    return 1 if refused else 0


def cmd_compare(a: argparse.Namespace) -> int:
    from kfp_bench.report.rebuild import compare_dirs

    verdict = compare_dirs(a.a, a.b, sys.stdout, results_uri=a.results_uri)
    return EXIT_REGRESSION if verdict.regression and a.fail_on_regression else 0


def cmd_demo(a: argparse.Namespace) -> int:
    from kfp_bench.sandbox.demo import run_demo

    return run_demo(
        Path(a.out), duration_s=a.duration, num_runs=a.num_runs, load_workers=a.load_workers
    )


def cmd_compile(a: argparse.Namespace) -> int:
    from kfp_bench.compile import compile_all

    for path in compile_all(a.out, base_image=a.base_image).values():
        print(f"{path}  {path.stat().st_size / 1000:.0f} kB")
    return 0


def _target(a: argparse.Namespace):
    from kfp_bench.submit import Target

    return Target(a.host, a.namespace, a.package, a.experiment)


def cmd_submit(a: argparse.Namespace) -> int:
    from kfp_bench.submit import parse_params, submit

    params = parse_params(a.param)  # unknown names refused before anything is sent
    run_id = submit(_target(a), params, run_name=a.run_name)
    print(f"Created run {run_id} on {a.host}")
    return 0


def cmd_schedule(a: argparse.Namespace) -> int:
    from kfp_bench.submit import parse_params, schedule

    params = parse_params(a.param)
    rid = schedule(_target(a), params, cron=a.cron, max_concurrency=a.max_concurrency)
    print(f"Created recurring run {rid} on {a.host} (cron {a.cron!r})")
    return 0


def _add_pipeline_commands(sub) -> None:
    """compile, submit, schedule and demo: the kfp_bench pipeline's own subcommands."""
    from kfp_bench.params import BenchParams
    from kfp_bench.submit import Target

    p = sub.add_parser(
        "compile",
        help="Compile the kfp_bench pipeline and the child pipelines to YAML (compiled/).",
        allow_abbrev=False,
    )
    p.add_argument("--out", default="compiled", metavar="DIR", help="Where to write the YAML.")
    p.add_argument(
        "--base-image",
        default="",
        metavar="IMAGE",
        help="Run every component in IMAGE (built from the repository's Dockerfile), for "
        "clusters that cannot reach PyPI.",
    )
    p.set_defaults(func=cmd_compile)

    params = ", ".join(BenchParams.names())
    for name, what in (("submit", "Start one run"), ("schedule", "Create a recurring run")):
        p = sub.add_parser(
            name,
            help=f"{what} of the kfp_bench pipeline on a KFP server.",
            description=f"{what} of the kfp_bench pipeline. Parameters: {params} "
            "(see kfp_bench.params.BenchParams).",
            allow_abbrev=False,
        )
        p.add_argument("--host", required=True, metavar="URL", help=field_help(Target, "host"))
        p.add_argument("--namespace", default="", help=field_help(Target, "namespace"))
        p.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="A pipeline parameter; repeat for more (JSON for object parameters).",
        )
        p.add_argument("--package", default=Target.package, help=field_help(Target, "package"))
        p.add_argument(
            "--experiment", default=Target.experiment, help=field_help(Target, "experiment")
        )
        if name == "submit":
            p.add_argument("--run-name", default="", help="The run's name (default: generated).")
            p.set_defaults(func=cmd_submit)
        else:
            p.add_argument(
                "--cron",
                required=True,
                help="KFP's 6-field cron, seconds first, e.g. '0 0 3 * * *' (03:00 daily).",
            )
            p.add_argument(
                "--max-concurrency",
                type=int,
                default=1,
                help="At most this many runs of the schedule at once (default 1).",
            )
            p.set_defaults(func=cmd_schedule)

    p = sub.add_parser(
        "demo",
        help="Run the kfp_bench pipeline with kfp.local against a local KServe model server "
        "and a local KFP API (the embedded default).",
        allow_abbrev=False,
    )
    p.add_argument("--out", default="results/demo", help="Directory for the results.")
    p.add_argument(
        "--duration", type=_duration, default=5.0, help="Seconds of load per worker (default 5s)."
    )
    p.add_argument("--num-runs", type=int, default=5, help="Child runs to spawn (default 5).")
    p.add_argument("--load-workers", type=int, default=2, help="Load workers (default 2).")
    p.set_defaults(func=cmd_demo)


def _rh(name: str) -> str:
    from kfp_bench.kfp.options import RunsOptions

    return field_help(RunsOptions, name)


def _add_kfp_flags(p: argparse.ArgumentParser, owner) -> None:
    """Host and credentials, shared by runs and cleanup."""
    from kfp_bench.kfp.auth import MODES, Auth

    p.add_argument("--host", required=True, metavar="URL", help=field_help(owner, "host"))
    g = p.add_argument_group("auth")
    g.add_argument("--auth", default="auto", choices=MODES, help=field_help(Auth, "mode"))
    g.add_argument("--token-file", default="", metavar="FILE", help=field_help(Auth, "token_file"))
    g.add_argument("--namespace", default="", help=field_help(Auth, "namespace"))
    p.add_argument(
        "--request-timeout",
        type=_duration,
        default=30.0,
        metavar="S",
        help=field_help(owner, "request_timeout"),
    )


def _add_runs_flags(p: argparse.ArgumentParser) -> None:
    from kfp_bench.kfp.options import DEFAULT_MAX_RUNS, RunsOptions

    _add_kfp_flags(p, RunsOptions)
    p.add_argument("--pipeline", required=True, metavar="FILE|URL", help=_rh("pipeline"))
    p.add_argument("--num-runs", type=int, required=True, metavar="N", help=_rh("num_runs"))
    p.add_argument(
        "--create-concurrency", type=int, default=16, metavar="C", help=_rh("create_concurrency")
    )
    p.add_argument(
        "--poll-interval", type=_duration, default=2.0, metavar="S", help=_rh("poll_interval")
    )
    p.add_argument("--poll-jitter", type=float, default=0.2, help=_rh("poll_jitter"))
    p.add_argument("--timeout", type=_duration, default=600.0, metavar="S", help=_rh("timeout"))
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
    p.add_argument(
        "--progress",
        action="store_true",
        help="Show progress on stderr even when it is not a terminal.",
    )


def cmd_runs(a: argparse.Namespace) -> int:
    from kfp_bench.kfp import Auth, RunsOptions, run_benchmark
    from kfp_bench.kfp.options import parse_params
    from kfp_bench.report import runs as runs_report

    opts = RunsOptions(
        host=a.host,
        pipeline=a.pipeline,
        num_runs=a.num_runs,
        create_concurrency=a.create_concurrency,
        poll_interval=a.poll_interval,
        poll_jitter=a.poll_jitter,
        timeout=a.timeout,
        on_timeout=a.on_timeout,
        params=parse_params(a.params),
        get_sample=a.get_sample,
        task_details=a.task_details,
        max_runs=a.max_runs,
        pipeline_id=a.pipeline_id,
        benchmark_id=a.benchmark_id,
        keep=a.keep,
        request_timeout=a.request_timeout,
        metrics_url=a.metrics_url,
        auth=Auth(a.auth, a.token_file, a.namespace),
    ).validate()
    show = a.progress or sys.stderr.isatty()
    last = [0.0]

    def progress(phase: str, created: int, final: int, requested: int) -> None:
        if show and time.monotonic() - last[0] >= 0.5:
            last[0] = time.monotonic()
            sys.stderr.write(f"\r  {phase}: {created}/{requested} created, {final} finished ")
            sys.stderr.flush()

    stats = run_benchmark(opts, out_dir=a.out, on_progress=progress)
    if show and last[0]:
        sys.stderr.write("\n")
    doc = stats.summary()
    runs_report.save_json(doc, Path(a.out) / "summary.json")
    runs_report.write_text(doc, sys.stdout)
    print(f"Wrote {a.out}/summary.json, runs.jsonl and api_calls.jsonl")
    return EXIT_INTERRUPTED if "interrupted" in stats.flags else 0


def cmd_cleanup(a: argparse.Namespace) -> int:
    from kfp_bench.kfp import Auth, CleanupOptions, sweep

    opts = CleanupOptions(
        host=a.host,
        benchmark_id=a.benchmark_id,
        older_than=a.older_than,
        dry_run=a.dry_run,
        concurrency=a.concurrency,
        request_timeout=a.request_timeout,
        auth=Auth(a.auth, a.token_file, a.namespace),
    )
    report = sweep(opts)
    verb = "Would delete" if report["dry_run"] else "Found"
    print(
        f"{verb}: {len(report['experiments'])} experiments, {report['runs']} runs, "
        f"{len(report['pipelines'])} pipelines, "
        f"{len(report['pipeline_versions'])} versions in other pipelines"
    )
    for name in report["experiments"] + report["pipelines"] + report["pipeline_versions"]:
        print(f"  {name}")
    if not report["dry_run"]:
        d = report["deleted"]
        print(
            f"Deleted: {d['runs']} runs, {d['experiments']} experiments, "
            f"{d['pipeline_versions']} pipeline versions, {d['pipelines']} pipelines"
        )
    for f in report["failed"]:
        print(f"  failed: {f}")
    return 1 if report["failed"] else 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kfp-bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"kfp-bench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser(
        "load",
        help="HTTP load with hey's flags, or open-loop at --rate.",
        description="Load an HTTP endpoint. hey's flags keep hey's meaning.",
        allow_abbrev=False,
    )
    _add_load_flags(p)
    p.set_defaults(func=cmd_load)

    p = sub.add_parser("merge", help="Merge load results from several processes or machines.")
    p.add_argument("results", nargs="+", metavar="RESULT.json")
    p.add_argument("-o", "--out", required=True, metavar="FILE", help="Where to write the merge.")
    p.set_defaults(func=cmd_merge)

    from kfp_bench.report.rebuild import rebuild

    p = sub.add_parser(
        "report",
        help="Rebuild the reports of saved results (no cluster needed).",
        description="For each results directory: report.html, summary.md, metrics.json and "
        "CSV files, with the trend and a regression verdict from --results-uri. A load "
        "result FILE.json is printed again in hey's layout.",
        allow_abbrev=False,
    )
    p.add_argument("results", nargs="+", metavar="RESULTS_DIR|RESULT.json")
    p.add_argument("--out", default="", metavar="DIR", help=field_help(rebuild, "out_dir"))
    p.add_argument(
        "--results-uri", default="", metavar="URI", help=field_help(rebuild, "results_uri")
    )
    p.add_argument(
        "--baseline", default="", metavar="last:N|KEY", help=field_help(rebuild, "baseline")
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "compare",
        help="Print how results B differ from results A, with the regression verdict.",
        allow_abbrev=False,
    )
    p.add_argument("a", metavar="A", help="the baseline: a results directory or history key.")
    p.add_argument("b", metavar="B", help="the current results: a directory or history key.")
    p.add_argument(
        "--results-uri",
        default="",
        metavar="URI",
        help="the results history where A and B are looked up when they are keys.",
    )
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help=f"exit {EXIT_REGRESSION} when the verdict is a regression.",
    )
    p.set_defaults(func=cmd_compare)

    _add_pipeline_commands(sub)

    p = sub.add_parser(
        "runs",
        help="Benchmark KFP: upload a pipeline, spawn N runs, poll them, clean up.",
        description="Upload a pipeline, create N runs at bounded concurrency, poll them with "
        "paged LIST calls, and report run and API-call latencies.",
        allow_abbrev=False,
    )
    _add_runs_flags(p)
    p.set_defaults(func=cmd_runs)

    from kfp_bench.kfp.options import CleanupOptions

    p = sub.add_parser(
        "cleanup",
        help="Delete what kfp-bench runs left on a KFP server (by benchmark id or age).",
        allow_abbrev=False,
    )
    _add_kfp_flags(p, CleanupOptions)
    p.add_argument("--benchmark-id", default="", help=field_help(CleanupOptions, "benchmark_id"))
    p.add_argument(
        "--older-than",
        type=_duration,
        default=0.0,
        metavar="AGE",
        help=field_help(CleanupOptions, "older_than"),
    )
    p.add_argument("--dry-run", action="store_true", help=field_help(CleanupOptions, "dry_run"))
    p.add_argument(
        "--concurrency", type=int, default=8, help=field_help(CleanupOptions, "concurrency")
    )
    p.set_defaults(func=cmd_cleanup)

    from kfp_bench.sandbox import kfp_server

    p = sub.add_parser(
        "kfp-server",
        help="Serve a local KFP API (v2beta1) that runs or simulates pipelines.",
        description=kfp_server.__doc__.split("\n\n")[0],
        allow_abbrev=False,
    )
    kfp_server.add_arguments(p)
    p.set_defaults(func=kfp_server.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except ConfigError as exc:
        print(f"kfp-bench: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BenchError as exc:
        print(f"kfp-bench: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kfp-bench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())

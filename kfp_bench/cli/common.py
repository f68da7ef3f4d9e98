"""What every subcommand shares: the parser class, its flags and types, and progress."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from kfp_bench import gates as gate_rules
from kfp_bench._doc import field_help
from kfp_bench.cli.commands import HELP
from kfp_bench.cli.workload import schedule_options
from kfp_bench.errors import ConfigError
from kfp_bench.figures import fixed
from kfp_bench.load.options import LoadOptions, parse_duration
from kfp_bench.load.payload import parse_shape, read_body, v1_payload, v2_payload
from kfp_bench.redact import scrub
from kfp_bench.stats.cost import FIX, is_price


class Parser(argparse.ArgumentParser):
    """argparse, with one-line errors: ``kfp-bench load: <what> (see --help)``; the arguments it
    quotes show no URL's userinfo (``kfp_bench.redact``)."""

    def error(self, message):
        raise ConfigError(f"{scrub(message)} (see {self.prog} --help)")


def command(sub, name: str, func=None, description: str | None = None, abbrev: bool = False):
    """The parser of the command ``name``: its line from ``cli.commands``, ``func`` to run it,
    and no abbreviated flags unless ``abbrev``."""
    p = sub.add_parser(name, help=HELP[name], description=description, allow_abbrev=abbrev)
    if func is not None:
        p.set_defaults(func=func)
    return p


def server_command(sub, name: str, module) -> None:
    """The command ``name`` that runs ``module``'s local server: its flags, its ``main``, and
    its docstring's first paragraph as the description."""
    module.add_arguments(command(sub, name, module.main, module.__doc__.split("\n\n")[0]))


def duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def writable(path: str, flag: str, *, folder: bool = False) -> Path:
    """``path`` if a file (or, with ``folder``, a folder) can be written there; ``ConfigError``
    naming the flag otherwise. Checked before the work, so that an hour of load is not lost to a
    typo in --json-out; nothing is left here (``cli.outputs.Outputs.made`` creates the
    folders once every input is checked; a probe file tried in the folder is removed)."""
    try:
        return _writable(Path(path).expanduser(), path, flag, folder)
    except ConfigError:
        raise
    except OSError as exc:  # a name too long, a loop of links: no rerun makes it a path
        why = exc.strerror or exc
        raise ConfigError(
            f"{flag} {path}: not a path that can be written ({why}); give another path"
        ) from None


def _writable(p: Path, path: str, flag: str, folder: bool) -> Path:
    # Path's checks follow links: a link is judged by its target
    if folder and p.exists() and not p.is_dir():
        raise ConfigError(f"{flag} {path}: a file, not a folder; give a folder")
    if not folder and p.is_dir():
        raise ConfigError(f"{flag} {path}: a folder; give a file name")
    if not folder and p.exists() and not p.is_file():  # /dev/stdout, a pipe: written into
        if not os.access(p, os.W_OK):
            raise ConfigError(f"{flag} {path}: cannot write to it; give a file you can write")
        return p
    if not folder and p.exists():  # a file written over: opened to append, nothing written
        try:
            open(p, "ab").close()  # noqa: SIM115
        except OSError as exc:
            why = exc.strerror or exc
            raise ConfigError(
                f"{flag} {path}: cannot write to it ({why}); give a file you can write"
            ) from None
        return p
    q = p if folder else p.parent
    while not q.exists() and q != q.parent:
        if q.is_symlink():  # a link to nowhere: its name is taken, no folder can be made there
            raise ConfigError(
                f"{flag} {path}: {q} is a link to {os.readlink(q)}, which does not exist; "
                "give another path"
            )
        q = q.parent
    if not q.is_dir():
        raise ConfigError(f"{flag} {path}: {q} is a file, not a folder; give another path")
    _try_folder(q, flag, path)
    return p


def _try_folder(q: Path, flag: str, path: str) -> None:
    """Make and remove a file in ``q``: what the permissions do not tell (root, a read-only
    mount, /proc) is known only by trying; nothing is left."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".kfp-bench-probe-", dir=q)
    except OSError as exc:
        why = exc.strerror or exc
        raise ConfigError(
            f"{flag} {path}: cannot write in {q} ({why}); give a folder you can write to"
        ) from None
    os.close(fd)
    os.unlink(probe)


def _number(parse, ok, fix: str):
    """An argparse type: ``parse(text)`` when ``ok`` of it; else an error that says ``fix``."""

    def number(text: str):
        try:
            value = parse(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"{text!r}: {fix}")
        return value

    return number


#: A whole number of 1 or more.
positive_int = _number(int, lambda v: v >= 1, "give a whole number of 1 or more")
#: A whole number of 0 (not given) or more.
_count = _number(int, lambda v: v >= 0, "give a whole number, e.g. 2 (0: not given)")
_price = _number(float, is_price, FIX)


class Progress:
    """A one-line progress display on stderr, redrawn at most every half second."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = 0.0

    def __call__(self, requests: int, failed: int) -> None:
        """A load's: its time, requests, failures and rate."""
        t = time.monotonic() - self.start
        rate = fixed(requests / t if t else 0, 0)
        self.say(f"{fixed(t, 1):>6}s  {requests} requests  {failed} failed  {rate} req/s")

    def say(self, text: str) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.last < 0.5:
            return
        self.last = now
        sys.stderr.write(f"\r  {text} ")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.last:
            sys.stderr.write("\n")


def add_hey_flags(
    p: argparse.ArgumentParser,
    h,
    *,
    concurrency: int | None,
    timeout: float,
    default_z: float = 0.0,
    z_help: str = "",
) -> None:
    """The flags ``load``, ``llm`` and ``sweep`` share with hey's meaning (single dash, as hey
    spells them): URL, -n, -c, -q, -z, -H, -t and -host; ``h(name)`` gives an option's help
    text. What differs between commands is a parameter: the defaults of -c, -t and -z
    (``default_z``), -z's help (``z_help``), and ``concurrency=None`` for a command whose steps
    are paced by their rate (no -n, -c, -q)."""
    p.add_argument("url", help=h("url"))
    if concurrency is not None:
        # None: not given (200, hey's default), so that -n beside --stages can be refused
        p.add_argument("-n", type=int, default=None, dest="requests", help=h("requests"))
        p.add_argument(
            "-c", type=int, default=concurrency, dest="concurrency", help=h("concurrency")
        )
        p.add_argument("-q", type=float, default=0.0, dest="qps", help=h("qps"))
    p.add_argument(
        "-z", type=duration, default=default_z, dest="duration", help=z_help or h("duration"),
    )  # fmt: skip
    p.add_argument(
        "-H", action="append", default=[], dest="headers", metavar="HEADER", help=h("headers")
    )
    p.add_argument("-t", type=float, default=timeout, dest="timeout", help=h("timeout"))
    p.add_argument("-host", "--host", default="", dest="host", help=h("host"))


def load_help(name: str) -> str:
    """The help of the ``LoadOptions`` field ``name``, for its flag."""
    return field_help(LoadOptions, name)


def add_body_flags(p, *, method: str, content_type: str) -> None:
    """hey's flags of the request, shared by ``load`` and ``sweep`` with their own defaults of
    -m and -T: -m, -d, -D and -T (``request_body`` reads them)."""
    p.add_argument("-m", default=method, dest="method", help=load_help("method"))
    p.add_argument("-d", dest="data", help="HTTP request body.")
    p.add_argument("-D", dest="data_file", metavar="FILE", help="HTTP request body from a file.")
    t_help = f"Content-Type of the body ({content_type})."
    if content_type == LoadOptions.content_type:  # the field's help names hey's
        t_help = load_help("content_type")
    p.add_argument("-T", default=content_type, dest="content_type", help=t_help)


def add_shape_flags(g) -> None:
    """kfp-bench's model bodies, shared by ``load`` and ``sweep``: --v1-shape, --v2-shape and
    --v2-datatype (``request_body`` reads them)."""
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


def request_body(a: argparse.Namespace) -> dict:
    """The ``LoadOptions`` fields of the request: -m, and the body and Content-Type from -d,
    -D, --v1-shape or --v2-shape (one of them at most)."""
    if sum(x is not None for x in (a.data, a.data_file, a.v1_shape, a.v2_shape)) > 1:
        raise ConfigError("give one body: -d, -D, --v1-shape or --v2-shape")
    if a.v1_shape:
        body, content_type = v1_payload(parse_shape(a.v1_shape, "--v1-shape")), "application/json"
    elif a.v2_shape:
        shape = parse_shape(a.v2_shape, "--v2-shape")
        body, content_type = v2_payload(shape, a.v2_datatype), "application/json"
    else:
        body, content_type = read_body(a.data, a.data_file, a.content_type), a.content_type
    return {"method": a.method, "body": body, "content_type": content_type}


def add_open_loop_flags(g, h, *, rate: bool = True) -> None:
    """kfp-bench's own pacing and process flags, shared by ``load``, ``llm`` and ``sweep``:
    --rate (``rate=False``: not for a sweep, whose --rates it replaces), --arrival,
    --max-inflight and --workers."""
    if rate:
        g.add_argument("--rate", type=float, default=0.0, help=h("rate"))
    g.add_argument(
        "--arrival", default="constant", choices=["constant", "poisson"], help=h("arrival")
    )
    g.add_argument("--max-inflight", type=int, default=1000, help=h("max_inflight"))
    g.add_argument("--workers", type=int, default=1, help=h("workers"))


def add_tls_flags(g, h) -> None:
    """--insecure, --cacert, --seed and --i-know, shared by ``load``, ``llm`` and ``sweep``."""
    g.add_argument("--insecure", action="store_true", help=h("insecure"))
    g.add_argument("--cacert", default="", metavar="FILE", help=h("cacert"))
    g.add_argument("--seed", type=int, default=None, help=h("seed"))
    g.add_argument("--i-know", action="store_true", help=h("i_know"))


#: The ``LoadOptions`` fields of the flags ``add_hey_flags``, ``add_open_loop_flags`` and
#: ``add_tls_flags`` add, by their dests; a sweep has not the first four (``add_hey_flags``
#: with ``concurrency=None``, ``add_open_loop_flags`` with ``rate=False``).
SHARED = ("requests", "concurrency", "qps", "rate", "url", "host", "duration", "timeout")
SHARED += ("arrival", "max_inflight", "workers", "insecure", "cacert", "i_know", "seed")


def shared_options(a: argparse.Namespace) -> dict:
    """The ``LoadOptions`` fields of the ``SHARED`` flags, from their parsed values, and those
    of ``workload.schedule_options`` (--stages, --trace)."""
    opts = {k: getattr(a, k) for k in SHARED if k in a}
    if opts.get("requests", 0) is None:
        opts["requests"] = LoadOptions.requests
    return {**opts, "headers": tuple(a.headers), **schedule_options(a)}


THRESHOLD_HELP = (
    "A gate: NAME<N, <=, > or >= over a stable Metrics name (kfp_bench/report/metrics.py; an "
    "LLM figure as llm_NAME too), comma-separated or repeated, e.g. load_p99_ms<50,"
    "load_success_ratio>=0.99. A broken gate (or a figure not measured) exits 3 once the "
    "results are printed and saved; its verdict opens the report."
)


def add_requests_out_flag(g) -> None:
    """--requests-out, one definition for ``load`` and ``llm`` (``load.requests_out``)."""
    g.add_argument(
        "--requests-out", metavar="FILE.jsonl",
        help="Also write one JSON line per request to FILE.jsonl as the load runs (a crash "
        "keeps what was written): worker, seq, send time, status, error, latency; an LLM "
        "request adds TTFT, its ITL summary, TPOT, input, output and cached tokens, its "
        "X-Request-Id, stage, session and turn (schemas load-request, llm-request: "
        "docs/reports.md). About 160 bytes (load) or 380 bytes (LLM) a request. Off by "
        "default, and then it costs nothing; one load of llm, not a sweep.",
    )  # fmt: skip


def add_progress_flag(g) -> None:
    """--progress, on ``load``, ``llm`` and ``runs`` (``Progress``)."""
    shown = "Show progress on stderr even when it is not a terminal."
    g.add_argument("--progress", action="store_true", help=shown)


def add_threshold_flag(p: argparse.ArgumentParser) -> None:
    """--threshold, on every command that measures or reports (``kfp_bench.gates``)."""
    p.add_argument("--threshold", action="append", default=[], metavar="GATES", help=THRESHOLD_HELP)


def gates_of(a: argparse.Namespace, measured: set[str], command: str) -> tuple:
    """The checked gates of --threshold: ``ConfigError`` for a bad one, or one on a figure
    ``command`` does not measure (``measured``: its kinds), before anything is sent."""
    found = gate_rules.parse(a.threshold, "--threshold")
    parts = " and ".join(gate_rules.KINDS[k] for k in sorted(measured))
    fix = f"kfp-bench {command} measures {parts} only: drop the gate, or gate the command that does"
    gate_rules.require(found, measured, "--threshold", fix)
    return found


def said_gates(gates, metrics, out=None) -> list:
    """Check ``gates`` against ``metrics`` (a dict, or a function giving it: called only with
    gates) and print their verdicts on ``out`` (stdout): the text report's first lines."""
    if not gates:
        return []
    verdicts = gate_rules.evaluate(gates, metrics() if callable(metrics) else metrics)
    for line in gate_rules.lines(verdicts):
        print(line, file=out or sys.stdout)
    return verdicts


COST_HELP = (
    "The serving nodes' or GPUs' price per hour, in your currency: the report adds the cost of "
    "the load's measured window per 1000 successful requests (and, for an LLM load, per million "
    "output tokens; unknown when the tokens are). 0: none."
)


def add_cost_flag(g) -> None:
    """--cost-per-hour, on ``load``, ``llm`` and ``report`` (``kfp_bench.stats.cost``)."""
    g.add_argument("--cost-per-hour", type=_price, default=0.0, metavar="PRICE", help=COST_HELP)


SCALE_HELP = {
    "replicas": "The server's replicas serving the load, for an LLM sweep's Pareto front: "
    "output tokens/s per replica against per user (docs/llm-metrics.md). 0: not given.",
    "gpus": "The GPUs serving the load (over all replicas), for an LLM sweep's Pareto front: "
    "output tokens/s per GPU against per user, before per replica (docs/llm-metrics.md). 0: "
    "not given.",
}


def add_scale_flags(g) -> None:
    """--replicas and --gpus, on ``llm`` and ``report`` (``kfp_bench.stats.pareto.Scale``)."""
    for name, help_ in SCALE_HELP.items():
        g.add_argument(f"--{name}", type=_count, default=0, metavar="N", help=help_)

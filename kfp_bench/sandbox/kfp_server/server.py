"""Running the local KFP API server: its options, command line, and the child-process handle.

This module owns ``KfpServerOptions`` (whose docstring is the ``--help`` text), ``add_arguments``
and ``main`` (which ``kfp-bench kfp-server`` and ``python -m kfp_bench.sandbox.kfp_server`` call),
and ``start_kfp_server``, which runs the server in a child process through
``kfp_bench.sandbox.process`` and returns once it answers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import shutil
import signal
import tempfile
import urllib.request
from dataclasses import dataclass, fields
from pathlib import Path

from kfp_bench._doc import field_help
from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.kfp_server.authn import read_token
from kfp_bench.sandbox.kfp_server.faults import parse_ops
from kfp_bench.sandbox.kfp_server.release import KFP_COMMIT, KFP_RELEASE
from kfp_bench.sandbox.kfp_server.simulate import SimulateSpec
from kfp_bench.sandbox.process import ServerHandle, ServerSpec, start_server, watch_parent

# Imports inside functions: its starter runs in the caller's process and the server in a process of
# its own: what only the server uses loads there.


@dataclass(frozen=True, slots=True)
class KfpServerOptions:
    """Options of the local KFP API server.

    Attributes:
        host: address to listen on.
        max_parallel_runs: at most this many runs execute (or are simulated) at once; the others
            wait PENDING in a FIFO queue.
        persistence_delay: seconds from a run taking a slot to it showing RUNNING. On a cluster
            this is the Argo workflow starting (controller, pod scheduling, image pull) and KFP's
            persistence agent reporting the workflow to the API server: a second or a few. A
            created run is answered PENDING whatever this is, as KFP answers it. Default: 1,
            which keeps the tests and the demo quick.
        latency_ms: delay every /apis/ response by this many milliseconds.
        error_rate: answer this fraction of /apis/ requests with 503 or 429 (even odds).
        error_ops: limit --error-rate to these operations, comma-separated, named as
            kfp_server_api's methods without the service prefix (e.g. create_run,list_runs,
            upload_pipeline, create_experiment); empty: every /apis/ request.
        error_after: inject the errors after the request was handled, not before: a create then
            creates and still answers 503/429, as when a proxy times out a call the server
            completed; by default an errored request changes nothing.
        simulate: SCOPE[:DIST][,fail=F]. SCOPE: auto (execute what kfp.local can run, simulate
            container components), all (simulate every run) or none. DIST: fixed(s),
            uniform(a,b) or lognormal(mean_s,sigma), in seconds; F: fraction of simulated runs
            that fail. Examples: auto, auto:fixed(2), all:lognormal(2,0.5),fail=0.1.
        state_dir: directory for run files (pipeline roots, logs); default: a temporary one,
            removed on exit.
        seed: seed of the random draws (faults, simulated durations and failures).
        use_venv: run each executed task in a fresh venv of kfp.local's own (seconds more per
            task) instead of the cached per-kfp-version environment.
        token_file: require "Authorization: Bearer TOKEN", TOKEN being this file's content, on
            every /apis/ request but healthz (401 otherwise), as multi-user KFP does; empty: no
            auth. The token is never printed, logged or shown in /metrics.
        backend_version: the KFP release healthz reports as tag_name; default: that of the
            swagger the server follows. E.g. 2.0.5 to act as an old backend, master or "" as a
            development build.
        multi_user: act as multi-user KFP: healthz says multi_user true, and what such a
            server refuses for want of a namespace is refused (``kfp_bench.sandbox.kfp_server.
            multiuser``): an experiment or a LIST of experiments without one, a run or recurring
            run without an experiment, a LIST of runs with neither.
    """

    host: str = "127.0.0.1"
    max_parallel_runs: int = 4
    persistence_delay: float = 1.0
    latency_ms: float = 0.0
    error_rate: float = 0.0
    error_ops: str = ""
    error_after: bool = False
    simulate: str = "auto"
    state_dir: str = ""
    seed: int | None = None
    use_venv: bool = False
    token_file: str = ""
    backend_version: str = KFP_RELEASE
    multi_user: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.max_parallel_runs, bool) or not (
            isinstance(self.max_parallel_runs, int) and self.max_parallel_runs >= 1
        ):
            raise ConfigError(f"kfp server: max_parallel_runs={self.max_parallel_runs!r} "
                              "must be an integer >= 1")  # fmt: skip
        if isinstance(self.persistence_delay, bool) or not (
            isinstance(self.persistence_delay, (int, float))
            and math.isfinite(self.persistence_delay)
            and self.persistence_delay >= 0
        ):
            raise ConfigError(f"kfp server: persistence_delay={self.persistence_delay!r} must "
                              "be a number of seconds >= 0, e.g. 1")  # fmt: skip
        if not (math.isfinite(self.latency_ms) and self.latency_ms >= 0):
            raise ConfigError(f"kfp server: latency_ms={self.latency_ms!r} must be >= 0")
        if not 0 <= self.error_rate <= 1:
            raise ConfigError(f"kfp server: error_rate={self.error_rate!r} must be in [0, 1]")
        try:
            parse_ops(self.error_ops)
        except ValueError as e:
            raise ConfigError(f"kfp server: --error-ops {self.error_ops!r}: {e}") from None
        SimulateSpec.parse(self.simulate)
        if self.token_file:
            read_token(self.token_file)
        if not isinstance(self.backend_version, str) or not self.backend_version.isprintable():
            raise ConfigError(f"kfp server: backend_version={self.backend_version!r}: give a "
                              "KFP release, e.g. 2.0.5")  # fmt: skip

    def argv(self) -> tuple[str, ...]:
        """The command-line flags that reproduce these options (defaults left out)."""
        out: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value == f.default:
                continue
            flag = f"--{f.name.replace('_', '-')}"
            out += [flag] if value is True else [flag, str(value)]
        return tuple(out)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the server's flags (``--port`` and every ``KfpServerOptions`` field) to ``parser``."""
    h = lambda name: field_help(KfpServerOptions, name)  # noqa: E731
    d = KfpServerOptions()
    parser.add_argument("--port", type=_port, default=8888, help="TCP port (default: 8888)")
    parser.add_argument("--host", default=d.host, help=h("host"))
    parser.add_argument("--max-parallel-runs", type=int, default=d.max_parallel_runs,
                        help=h("max_parallel_runs"))  # fmt: skip
    parser.add_argument("--persistence-delay", type=float, default=d.persistence_delay,
                        metavar="SECONDS", help=h("persistence_delay"))  # fmt: skip
    parser.add_argument("--latency-ms", type=float, default=d.latency_ms, help=h("latency_ms"))
    parser.add_argument("--error-rate", type=float, default=d.error_rate, help=h("error_rate"))
    parser.add_argument("--error-ops", default=d.error_ops, metavar="OPS", help=h("error_ops"))
    parser.add_argument("--error-after", action="store_true", help=h("error_after"))
    parser.add_argument("--simulate", default=d.simulate, metavar="DIST", help=h("simulate"))
    parser.add_argument("--state-dir", default=d.state_dir, help=h("state_dir"))
    parser.add_argument("--seed", type=int, default=None, help=h("seed"))
    parser.add_argument("--use-venv", action="store_true", help=h("use_venv"))
    parser.add_argument("--token-file", default="", metavar="FILE", help=h("token_file"))
    parser.add_argument("--backend-version", default=d.backend_version, metavar="VERSION",
                        help=h("backend_version"))  # fmt: skip
    parser.add_argument("--multi-user", action="store_true", help=h("multi_user"))


def _port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: give a TCP port from 0 to 65535, e.g. 8888")
    return port


def options_from_args(args: argparse.Namespace) -> KfpServerOptions:
    return KfpServerOptions(**{f.name: getattr(args, f.name) for f in fields(KfpServerOptions)})


def main(args: argparse.Namespace | list[str] | None = None) -> int:
    """Serve until SIGTERM or Ctrl-C. ``args``: parsed by ``add_arguments``'s flags, or argv."""
    if not isinstance(args, argparse.Namespace):
        parser = argparse.ArgumentParser(
            prog="python -m kfp_bench.sandbox.kfp_server",
            description="A local Kubeflow Pipelines API (v2beta1) that really runs pipelines.",
        )
        add_arguments(parser)
        args = parser.parse_args(args)
    options = options_from_args(args)
    watch_parent()
    state_dir = Path(options.state_dir) if options.state_dir else None
    owned = state_dir is None
    if owned:
        state_dir = Path(tempfile.mkdtemp(prefix="kfp-bench-kfp-server-"))
    try:
        asyncio.run(_serve(options, args.port, state_dir))
    finally:
        if owned:
            shutil.rmtree(state_dir, ignore_errors=True)
    return 0


async def _serve(options: KfpServerOptions, port: int, state_dir: Path) -> None:
    from aiohttp import web

    from kfp_bench.sandbox.kfp_server.app import build_app

    app = build_app(
        max_parallel_runs=options.max_parallel_runs,
        persistence_delay=options.persistence_delay,
        latency_ms=options.latency_ms,
        error_rate=options.error_rate,
        error_ops=options.error_ops,
        error_after=options.error_after,
        simulate=SimulateSpec.parse(options.simulate),
        state_dir=state_dir,
        seed=options.seed,
        use_venv=options.use_venv,
        token=read_token(options.token_file) if options.token_file else None,
        version=options.backend_version,
        commit=KFP_COMMIT if options.backend_version == KFP_RELEASE else "unknown",
        multi_user=options.multi_user,
    )
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, options.host, port, backlog=1024, reuse_address=True)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        with contextlib.suppress(Exception):
            await runner.cleanup()


class KfpServerHandle(ServerHandle):
    """A running local KFP API server; ``url`` is what ``kfp.Client(host=...)`` takes."""

    @property
    def api_url(self) -> str:
        return f"{self.url}/apis/v2beta1"

    @property
    def metrics_url(self) -> str:
        return f"{self.url}/metrics"

    def set_faults(self, rate: float = 0.0, ops: str = "", *, after: bool = False,
                   seed: int | None = None) -> None:  # fmt: skip
        """Change the injected faults (``--error-rate``, ``--error-ops``, ``--error-after``) of
        the running server; ``set_faults()`` turns them off."""

        body = json.dumps({"rate": rate, "ops": ops, "after": after, "seed": seed}).encode()
        req = urllib.request.Request(f"{self.url}/__faults", data=body, method="PUT")
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()


def start_kfp_server(port: int = 0, *, start_timeout: float = 30.0, **options) -> KfpServerHandle:
    """Run the server in a child process on 127.0.0.1 and return once it answers.

    Args:
        port: TCP port; 0 picks a free one.
        start_timeout: seconds to wait for it to answer.
        **options: fields of ``KfpServerOptions``, e.g. ``max_parallel_runs=1``.

    Raises:
        ConfigError: an unknown or invalid option; nothing was started.
        ServerError: the server exited or did not answer in time.
    """
    known = {f.name for f in fields(KfpServerOptions)} - {"host"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(f"kfp server: unknown options {unknown}; known: {sorted(known)}")
    spec = ServerSpec(
        name="kfp server",
        module="kfp_bench.sandbox.kfp_server",
        port_flag="--port",
        health_path="/__health",
        args=KfpServerOptions(**options).argv(),
        start_timeout=start_timeout,
        stop_timeout=5.0,
    )
    return start_server(spec, port, KfpServerHandle)

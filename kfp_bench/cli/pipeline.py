"""The kfp_bench pipeline's subcommands: ``compile``, ``install``, ``submit``, ``schedule`` and
``demo``."""

from __future__ import annotations

import argparse
import functools
import sys
import time
from dataclasses import fields
from pathlib import Path

from kfp_bench._doc import field_help
from kfp_bench.cli.common import command, duration, positive_int, writable
from kfp_bench.errors import ConfigError, yaml_error
from kfp_bench.figures import fixed
from kfp_bench.kserve.kube import Kube
from kfp_bench.names import check_dns1123_label
from kfp_bench.steps.bundled import compiled_file
from kfp_bench.steps.checks import MAX_DURATION_S, MAX_LOAD_WORKERS, MAX_RUNS
from kfp_bench.steps.params import GROUPS
from kfp_bench.steps.submit import Target, ignored_note, parse_params, schedule, submit

# Imports inside functions: the CLI imports every command's module to build its parser: what only
# running a command needs is imported there, so that --help and a refused flag start at once
# (bench/cli_startup.py).

#: Connections of the demo's load, across its workers.
DEMO_CONCURRENCY = 4


def cmd_demo(a: argparse.Namespace) -> int:
    from kfp_bench.sandbox.demo import run_demo

    # The pipeline's first step would refuse these too, but only after the servers have started.
    if not 0 < a.duration <= MAX_DURATION_S:
        raise ConfigError(f"--duration {a.duration:g}s: give more than 0s, at most 1h")
    if a.num_runs > MAX_RUNS:
        raise ConfigError(f"--num-runs {a.num_runs}: give 1 to {MAX_RUNS}")
    if a.load_workers > MAX_LOAD_WORKERS:
        raise ConfigError(f"--load-workers {a.load_workers}: give 1 to {MAX_LOAD_WORKERS}")
    writable(a.out, "--out", folder=True)
    return run_demo(
        Path(a.out),
        duration_s=a.duration,
        num_runs=a.num_runs,
        load_workers=a.load_workers,
        concurrency=max(DEMO_CONCURRENCY, a.load_workers),  # a connection per worker at least
    )


def cmd_compile(a: argparse.Namespace) -> int:
    from kfp_bench.steps.compile import compile_all, delivery_for

    delivery = delivery_for(a.image, a.pip_index_url, a.wheel_url, a.sha256)
    writable(a.out, "--out", folder=True)
    try:
        written = compile_all(a.out, delivery=delivery)
    except OSError as exc:  # what the check cannot see: a read-only mount, a full disk
        raise ConfigError(f"--out {a.out}: cannot write the YAML there ({exc.strerror})") from None
    for path in written.values():
        print(f"{path}  {fixed(path.stat().st_size / 1000, 0)} kB")
    return 0


def _check_kubeconfig(path: str) -> None:
    """``ConfigError`` for a kubeconfig given that is missing or not readable YAML of a
    mapping, in one line (the client's own error is many lines, and blames no input)."""
    import yaml

    if not path:
        return
    if not Path(path).is_file():
        raise ConfigError(f"--kubeconfig {path}: no such file; give your kubeconfig")
    fix = "give your kubeconfig (kubectl config view --raw)"
    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"--kubeconfig {yaml_error(exc, path)}; {fix}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--kubeconfig {path}: not readable ({exc}); {fix}") from None
    if not isinstance(doc, dict) or not doc.get("clusters"):
        raise ConfigError(f"--kubeconfig {path}: not a kubeconfig (no clusters); {fix}")


def cmd_install(a: argparse.Namespace) -> int:
    import yaml

    from kfp_bench import artifact
    from kfp_bench.components._step import Delivery

    check_dns1123_label(a.namespace, "--namespace")
    if not a.dry_run:
        _check_kubeconfig(a.kubeconfig)
    art = artifact.build()
    name = Delivery(sha256=art.sha256).config_map()
    if a.dry_run:
        yaml.safe_dump(artifact.config_map(art, a.namespace, name), sys.stdout, sort_keys=False)
        return 0
    done = artifact.install(Kube(a.namespace, kubeconfig=a.kubeconfig or None), art, name)
    print(
        f"ConfigMap {name} in namespace {a.namespace}: {done}; it holds {art.filename}, "
        f"sha256 {art.sha256}"
    )
    shipped = compiled_file("kfp_bench")
    if shipped.exists() and artifact.pins(shipped) != {art.sha256}:
        print(
            f"kfp-bench: note: {shipped} is pinned to another wheel than this kfp-bench builds "
            "(sources changed since it was compiled): run kfp-bench compile and use that YAML",
            file=sys.stderr,
        )
    return 0


def cmd_submit(a: argparse.Namespace) -> int:
    """``submit`` and ``schedule``: one run, or a recurring run with ``a.cron``."""
    params = parse_params(a.param)  # unknown names refused before anything is sent
    target = Target(a.host, a.namespace, a.package, a.experiment, a.token_file)
    if a.command == "submit":
        print(f"Created run {submit(target, params, run_name=a.run_name)} on {a.host}")
    else:
        rid = schedule(target, params, cron=a.cron, max_concurrency=a.max_concurrency)
        print(f"Created recurring run {rid} on {a.host} (cron {a.cron!r})")
    if note := ignored_note(params):  # parameters a part switched off leaves unread
        print(note)
    return 0


def cron(text: str) -> str:
    """An argparse type: KFP's cron as robfig/cron v1 reads it (``kfp_bench.kfp.cron``), checked
    here so that a typo, a Unix 5-field cron or a date that never comes is refused before
    anything is created on the server."""
    from kfp_bench.kfp.cron import check_user_cron

    try:
        check_user_cron(text, int(time.time()))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def register(sub) -> None:
    """compile, install, submit, schedule and demo: the kfp_bench pipeline's own commands."""
    p = command(sub, "compile", cmd_compile)
    p.add_argument("--out", default="compiled", metavar="DIR", help="Where to write the YAML.")
    p.add_argument(
        "--image",
        default="",
        metavar="IMAGE@sha256:DIGEST",
        help="Image mode: every step runs in this image, given by its digest (built by the "
        "repository's Dockerfile: make image), and installs nothing at start. Default: package "
        "mode, each step installs kfp-bench's wheel pinned by its sha256 from the ConfigMap "
        "that kfp-bench install writes.",
    )
    p.add_argument(
        "--wheel-url",
        default="",
        metavar="URL",
        help="Package mode: install kfp-bench's wheel from this http(s) URL (a release asset, a "
        "mirror's file) instead of the ConfigMap; needs --sha256.",
    )
    p.add_argument(
        "--sha256",
        default="",
        metavar="HEX",
        help="Package mode: the wheel's pin. Default: the sha256 of this kfp-bench's own wheel "
        "(kfp-bench install --dry-run prints it).",
    )
    p.add_argument(
        "--pip-index-url",
        default="",
        metavar="URL",
        help="Package mode: install kfp-bench's dependencies and kfp from this index (a mirror "
        "of PyPI) instead of PyPI. kfp-bench itself never comes from an index.",
    )

    p = command(
        sub,
        "install",
        cmd_install,
        "Build kfp-bench's wheel (reproducibly: the sha256 that compiled/"
        "kfp_bench.yaml pins) and write it into the ConfigMap kfp-bench-<sha256 prefix> of "
        "NAMESPACE, which every step of the pipeline mounts and installs from, checking the "
        "pin. Run it once per namespace (your profile's) and kfp-bench version, from a laptop "
        "with a kubeconfig that may create ConfigMaps there. No release, index or registry is "
        "needed. The ConfigMap is immutable; a second run finds it and changes nothing.",
    )
    p.add_argument("--namespace", required=True, help="The namespace the pipeline's runs run in.")
    p.add_argument(
        "--kubeconfig",
        default="",
        metavar="FILE",
        help="The kubeconfig to use (its current context). Default: $KUBECONFIG or ~/.kube/config.",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="Print the ConfigMap as YAML (for kubectl apply -f -) and write nothing.",
    )

    h = functools.partial(field_help, Target)
    params = "; ".join(f"{g.TITLE}: {', '.join(f.name for f in fields(g))}" for g in GROUPS)
    for name, what in (("submit", "Start one run"), ("schedule", "Create a recurring run")):
        p = command(
            sub,
            name,
            cmd_submit,
            f"{what} of the kfp_bench pipeline. Its parameters, by group (each documented in "
            f"its group of kfp_bench.steps.params.GROUPS): {params}.",
        )
        p.add_argument("--host", required=True, metavar="URL", help=h("host"))
        p.add_argument("--namespace", default="", help=h("namespace"))
        p.add_argument("--token-file", default="", metavar="FILE", help=h("token_file"))
        p.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="A pipeline parameter; repeat for more (JSON for object parameters).",
        )
        p.add_argument("--package", default=Target.package, help=h("package"))
        p.add_argument("--experiment", default=Target.experiment, help=h("experiment"))
        if name == "submit":
            p.add_argument("--run-name", default="", help="The run's name (default: generated).")
        else:
            p.add_argument(
                "--cron",
                required=True,
                type=cron,
                help="KFP's cron (robfig/cron v1): 6 fields, SECONDS first, e.g. '0 0 3 * * *' "
                "(03:00 UTC daily), or '@daily', '@every 1h'.",
            )
            p.add_argument(
                "--max-concurrency",
                type=int,
                default=1,
                help="At most this many runs of the schedule at once (default 1).",
            )

    p = command(sub, "demo", cmd_demo)
    p.add_argument("--out", default="results/demo", help="Directory for the results.")
    p.add_argument(
        "--duration", type=duration, default=5.0, help="Seconds of load per worker (default 5s)."
    )
    p.add_argument(
        "--num-runs", type=positive_int, default=5, help="Child runs to spawn (default 5)."
    )
    p.add_argument("--load-workers", type=positive_int, default=2, help="Load workers (default 2).")

"""The server-metrics flags of ``kfp-bench llm`` and ``load``, and the wrap that runs a load
between the collector's start and stop (``kfp_bench.metrics.collect``).

``wrap(p, cmd)`` is the one line a load command needs: it adds the flags and makes ``cmd`` the
parser's function with the collector around it. The profile is checked as far as it can be
without a request before ``cmd`` runs; ``cmd``'s ``Measurement`` asks Prometheus and starts the
collector once every check of its own has passed (``a.collector``), just before the work. The
series are saved beside ``--json-out`` (``run.json`` -> ``run.server.json``), where
``kfp-bench report`` finds them.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable

from kfp_bench import redact
from kfp_bench.errors import ConfigError
from kfp_bench.metrics import profile as profiles
from kfp_bench.metrics import series as store
from kfp_bench.metrics.collect import Collector

# Imports inside functions: the CLI imports every command's module to build its parser: what only
# running a command needs is imported there, so that --help and a refused flag start at once
# (bench/cli_startup.py).


def wrap(p: argparse.ArgumentParser, cmd: Callable[[argparse.Namespace], int]) -> None:
    """Add the flags to ``p`` and make ``cmd``, run between the collector's start and stop,
    its function."""
    g = p.add_argument_group("server metrics (docs/metrics-profiles.md)")
    g.add_argument(
        "--metrics-profile", default="", metavar="FILE|NAME",
        help="Named PromQL queries (kube-burner's shape) run against --prometheus-url over the "
        f"load's window, a YAML file or a built-in: {', '.join(profiles.BUILTIN)}.",
    )  # fmt: skip
    add_prometheus_flags(g, "namespace=bench, isvc=llm")
    g.add_argument(
        "--scrape", action="append", default=[], metavar="URL",
        help="A /metrics endpoint sampled every --metrics-step while the load runs (repeatable).",
    )  # fmt: skip
    g.add_argument(
        "--scrape-header", action="append", default=[], metavar="'NAME: VALUE'",
        help="A header sent with every --scrape, e.g. 'Authorization: Bearer TOKEN' for an "
        "endpoint behind Istio or KFP auth (repeatable; never printed nor saved).",
    )  # fmt: skip
    g.add_argument(
        "--metrics-step", type=float, default=1.0, metavar="SECONDS",
        help="The scrapes' period and the range queries' step (default 1).",
    )  # fmt: skip
    p.set_defaults(func=lambda a: run(a, cmd))


def add_prometheus_flags(g, example: str) -> None:
    """--prometheus-url and --metrics-var, of the load commands and of ``runs --fill``
    (``example``: the variables a profile of that command usually takes)."""
    g.add_argument(
        "--prometheus-url", default="", metavar="URL",
        help="The Prometheus whose HTTP API the profile's queries go to.",
    )  # fmt: skip
    g.add_argument(
        "--metrics-var", action="append", default=[], metavar="NAME=VALUE",
        help=f"A {{{{.NAME}}}} of the profile's queries, e.g. {example} (repeatable).",
    )  # fmt: skip


def collector(a: argparse.Namespace) -> Collector | None:
    """The collector the flags ask for, or None when they ask for none (``runs --fill`` has
    no --scrape)."""
    scrapes = tuple(getattr(a, "scrape", ()))
    if not (a.metrics_profile or scrapes):  # the flags that need them: cli/checks.py
        return None
    profile = profiles.load(a.metrics_profile) if a.metrics_profile else None
    return Collector(
        profile=profile,
        prometheus_url=a.prometheus_url,
        scrapes=scrapes,
        step_s=a.metrics_step,
        variables=profiles.parse_vars(a.metrics_var),
        headers=scrape_headers(getattr(a, "scrape_header", [])),
    )


def scrape_headers(items: list[str]) -> dict[str, str]:
    """``--scrape-header 'Name: value'`` flags as a dict; a bad one is shown as the reports show a
    header, never its value (``kfp_bench.redact.header``)."""
    out = {}
    for item in items:
        name, sep, value = item.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name) or not value:
            raise ConfigError(
                f"--scrape-header {redact.header(item)!r}: give 'Name: value', e.g. "
                "'Authorization: Bearer TOKEN'"
            )
        if "\r" in value or "\n" in value:
            raise ConfigError(f"--scrape-header {name}: the value has a line break: remove it")
        out[name] = value
    return out


def run(a: argparse.Namespace, cmd: Callable[[argparse.Namespace], int]) -> int:
    c = collector(a)
    if c is None:
        return cmd(a)
    c.check_local()
    a.collector = c  # checked with Prometheus and started by cmd's Measurement.run
    try:
        code = cmd(a)
    except BaseException:
        if c.started:
            c.stop(query=False)
        raise
    if not c.started:  # refused before the work: no window, nothing to save
        return code
    got = c.stop()
    if hasattr(a, "shared_prefix"):  # an LLM load: the server's line under its text summary
        from kfp_bench.report.llm_text import write_prefix_cache

        write_prefix_cache(got, sys.stdout, getattr(a, "cached", None))
    for note in got.notes:
        print(f"kfp-bench: server metrics: {note}", file=sys.stderr)
    json_out = getattr(a, "json_out", None)
    if not json_out:
        print("kfp-bench: server metrics not saved: give --json-out", file=sys.stderr)
        return code
    path = store.path_beside(json_out)
    store.save(got, path)
    print(
        f"kfp-bench: server metrics: {len(got.series)} series, {len(got.histograms)} "
        f"histograms in {path}",
        file=sys.stderr,
    )
    return code

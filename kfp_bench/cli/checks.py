"""The checks of the newer flags that need no file read and no request: run by ``main`` on the
parsed flags of every command, before its function does any work (issue 41).

``before_work`` checks a URL's scheme (``--prometheus-url``, ``--scrape``, ``--metrics-url``,
``--pushgateway-url``), so that a URL that can never be read is refused before the load rather
than noted after it; and it applies one rule to every flag that only means something beside
another (``kfp_bench.needs.NEEDS``, whose rules the pipeline's first step applies to its
parameters too): given alone, it is refused rather than ignored. Each refusal is a
``ConfigError`` of one line naming the flag and the fix; a value it repeats goes through
``kfp_bench.redact``.
"""

from __future__ import annotations

import argparse

from kfp_bench.errors import ConfigError
from kfp_bench.needs import NEEDS, Needs
from kfp_bench.push import check_url
from kfp_bench.redact import public_url
from kfp_bench.urls import http_parts

#: The URL flags of each command that must be http(s)://HOST[:PORT][/PATH], and an example.
URLS = {
    "--prometheus-url": ("prometheus_url", "http://prometheus.monitoring:9090"),
    "--scrape": ("scrape", "http://127.0.0.1:8080/metrics"),
    "--metrics-url": ("metrics_url", "http://ml-pipeline.kubeflow:8888/metrics, or none"),
}
#: Values a URL flag takes that are not URLs (runs --metrics-url none: no scrape).
NOT_URLS = {"none"}


def before_work(a: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """``ConfigError`` for the first bad flag of ``a``, parsed by ``parser``."""
    for flag, (dest, example) in URLS.items():
        for url in _listed(getattr(a, dest, None)):
            if url not in NOT_URLS:
                http_url(url, flag, example)
    if getattr(a, "pushgateway_url", ""):
        check_url(a.pushgateway_url)
    command = getattr(a, "command", "")
    defaults = _defaults(parser, command)
    for rule in NEEDS:
        if command in rule.commands and _given(a, rule.dest, defaults):
            if not any(_given(a, dest, defaults) for _, dest in rule.needs):
                raise ConfigError(_needs_message(a, rule))


def http_url(url: str, flag: str, example: str) -> str:
    """``url`` when it is http(s)://HOST...; ``ConfigError`` naming ``flag`` otherwise."""
    if http_parts(url):
        return url
    why = "not a http(s) URL" if "://" in url else "no http:// or https:// scheme"
    raise ConfigError(f"{flag} {public_url(url)!r}: {why}; give e.g. {example}")


def _listed(value) -> list[str]:
    if not value:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _defaults(parser: argparse.ArgumentParser, command: str) -> dict:
    """Each flag's default on the subcommand ``command``: a flag at its default was not given."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return {x.dest: x.default for x in action.choices[command]._actions}
    return {}


def _given(a: argparse.Namespace, dest: str, defaults: dict) -> bool:
    return dest in a and getattr(a, dest) != defaults.get(dest)


def _needs_message(a: argparse.Namespace, rule: Needs) -> str:
    value = getattr(a, rule.dest)
    # a number is shown; a text may hold a secret (a header, a URL's userinfo): the flag alone
    shown = f" {value:g}" if isinstance(value, int | float) and not isinstance(value, bool) else ""
    names = " or ".join(n.split()[0] for n, _ in rule.needs)
    fixes = " or ".join(n for n, _ in rule.needs)
    return (
        f"{rule.flag}{shown}: takes effect only beside {names}, not given; add {fixes}, or "
        f"drop {rule.flag}"
    )

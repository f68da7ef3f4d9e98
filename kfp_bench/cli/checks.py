"""The checks of the newer flags that need no file read and no request: run by ``main`` on the
parsed flags of every command, before its function does any work (issue 41).

``before_work`` checks a URL's scheme (``--prometheus-url``, ``--scrape``, ``--metrics-url``,
``--pushgateway-url``), so that a URL that can never be read is refused before the load rather
than noted after it. Each refusal is a ``ConfigError`` of one line naming the flag
and the fix; a value it repeats goes through ``kfp_bench.redact``.
"""

from __future__ import annotations

import argparse
from urllib.parse import urlsplit

from kfp_bench.errors import ConfigError
from kfp_bench.push import check_url
from kfp_bench.redact import public_url

#: The URL flags of each command that must be http(s)://HOST[:PORT][/PATH], and an example.
URLS = {
    "--prometheus-url": ("prometheus_url", "http://prometheus.monitoring:9090"),
    "--scrape": ("scrape", "http://127.0.0.1:8080/metrics"),
    "--metrics-url": ("metrics_url", "http://ml-pipeline.kubeflow:8888/metrics, or none"),
}
#: Values a URL flag takes that are not URLs (runs --metrics-url none: no scrape).
NOT_URLS = {"none"}


def before_work(a: argparse.Namespace) -> None:
    """``ConfigError`` for the first bad flag of ``a``, a command's parsed flags."""
    for flag, (dest, example) in URLS.items():
        for url in _listed(getattr(a, dest, None)):
            if url not in NOT_URLS:
                http_url(url, flag, example)
    if getattr(a, "pushgateway_url", ""):
        check_url(a.pushgateway_url)


def http_url(url: str, flag: str, example: str) -> str:
    """``url`` when it is http(s)://HOST...; ``ConfigError`` naming ``flag`` otherwise."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        parts = None
    if parts and parts.scheme in ("http", "https") and parts.hostname:
        return url
    why = "not a http(s) URL" if "://" in url else "no http:// or https:// scheme"
    raise ConfigError(f"{flag} {public_url(url)!r}: {why}; give e.g. {example}")


def _listed(value) -> list[str]:
    if not value:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]

"""The checks every part of the pipeline's parameters shares: the limits, one message form
(``bad``: the parameter, its value, the fix), the number, URL and selector checks, the note of
the parameters a part switched off leaves unread (``ignored``), and the checks of the
parameters no part owns (the results history, the mesh route).

Standard library only: the first step's pod installs the ``kfp`` extra alone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from kfp_bench import redact
from kfp_bench.errors import ConfigError
from kfp_bench.mesh import MESH_PORT, ROUTES
from kfp_bench.names import s3_uri_problem
from kfp_bench.needs import parameter_rules
from kfp_bench.steps.bundled import BUNDLED

MAX_LOAD_WORKERS = 64
MAX_RUNS = 1000
MAX_DURATION_S = 3600.0
MAX_RUN_TIMEOUT_S = 86400.0
#: The longest lease_wait_sec.
MAX_WAIT_S = MAX_RUN_TIMEOUT_S


def translated(fn):
    """Run an engine check; its message names a CLI flag, so say it is about the parameters."""
    try:
        return fn()
    except ConfigError as exc:
        raise ConfigError(f"pipeline parameters: {exc}") from None


def bad(name: str, value, fix: str) -> ConfigError:
    """The error of pipeline parameter ``name``: its value, as the reports would show it (no
    URL's userinfo, no credential: ``kfp_bench.redact``), and the fix."""
    return ConfigError(f"pipeline parameter {name}={redact.param(name, value)!r}: {fix}")


def need_url(name: str, value, schemes, example: str, bundled: bool = False) -> None:
    ok = isinstance(value, str) and urlsplit(value).scheme in schemes
    if ok and urlsplit(value).netloc:
        return
    names = f"one of {', '.join(BUNDLED)} or " if bundled else ""
    shown = redact.public_url(value) if isinstance(value, str) else value  # maybe no scheme
    raise bad(name, shown, f"give {names}a {'/'.join(schemes)} URL, e.g. {example}")


def positive(name: str, value, cap: float) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= cap
    if not ok:
        raise bad(name, value, f"give a number of seconds above 0 and at most {cap:g}")


def positive_int(name: str, value, cap: int) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= cap
    if not ok:
        raise bad(name, value, f"give a whole number from 1 to {cap}")


def selector(name: str, value) -> None:
    ok = isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )
    if not ok:
        raise bad(name, value, 'give a JSON object of label strings, e.g. {"pool": "pool-1"}')


def ignored(p) -> str:
    """The note naming each parameter of ``p`` (a ``BenchParams``) set away from its default
    (a text, blank or not) that no part switched on reads (``kfp_bench.needs.parameter_rules``),
    in one line; empty when there is none. Named, not refused, nor shown: why, in
    ``kfp_bench.needs``; a value may hold a secret (a URL's userinfo)."""
    rules = parameter_rules(p.PARTS)
    defaults = type(p)()  # every default, those of a default_factory too

    def read(name: str) -> bool:  # a switch is on, and its own part too
        return name not in rules or any(_on(p, n) and read(n) for n in rules[name])

    unread: dict[tuple[str, ...], list[str]] = {}
    for name, switches in rules.items():
        if _set(p, name, defaults) and not read(name):
            unread.setdefault(switches, []).append(name)
    if not unread:
        return ""
    parts = "; ".join(f"{', '.join(names)} (read only beside {' or '.join(switches)})"
                      for switches, names in unread.items())  # fmt: skip
    return (
        f"note: pipeline parameters of a part switched off, ignored in this run: {parts}; "
        "switch the part on to use them, or leave them at their defaults"
    )


def _on(p, name: str) -> bool:
    """A switch's value is on: true, above 0, a text not blank."""
    value = getattr(p, name)
    return bool(value.strip() if isinstance(value, str) else value)


def _set(p, name: str, defaults) -> bool:
    value, default = getattr(p, name), getattr(defaults, name)
    if isinstance(value, str) and isinstance(default, str):
        return value.strip() != default.strip()
    return value != default


def check_history(uri: str, baseline: str) -> None:
    """results_uri and baseline as ``kfp_bench.history`` reads them (uri.open_store,
    baseline_keys); checked here by their text alone: the first step's extra has neither the
    GCS client nor the results readers. A local folder must be writable."""
    if baseline and not re.fullmatch(
        r"last:[1-9][0-9]{0,3}|[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}", baseline
    ):
        raise bad(
            "baseline",
            baseline,
            "give last:N (N from 1 to 9999, e.g. last:5), a history key such as "
            "20260101T000000Z-0123abcd, or empty for no verdict",
        )
    if not uri:
        return
    fix = (
        "give gs://, s3:// or minio://BUCKET/PREFIX or a folder the steps can write, e.g. on a "
        "mounted volume"
    )
    parts = urlsplit(uri)
    if parts.scheme in ("gs", "s3", "minio"):
        if not parts.netloc:
            raise bad("results_uri", uri, f"no bucket; give {parts.scheme}://BUCKET/PREFIX")
        if parts.scheme != "gs" and parts.query:
            # the text check of kfp_bench.history.s3.parse (boto3 is not in this step's extra)
            query = parse_qs(parts.query, keep_blank_values=True)
            if set(query) - {"endpoint", "region"} or any(
                len(v) != 1 or not v[0] for v in query.values()
            ):
                raise bad("results_uri", uri, "the query takes endpoint=URL and region=NAME")
        if parts.scheme != "gs":
            options = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if why := s3_uri_problem(parts.netloc, options):
                raise bad("results_uri", uri, why)
        return
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise bad("results_uri", uri, "a file:// URI takes no host: file:///PATH")
        path = Path(unquote(parts.path))
    elif len(parts.scheme) > 1:  # one letter: a Windows drive
        raise bad("results_uri", uri, f"scheme {parts.scheme}:// is not supported; {fix}")
    else:
        path = Path(uri)
    if path.exists() and not path.is_dir():
        raise bad("results_uri", uri, f"{path} is a file; {fix}")
    # the folder is created when missing: its nearest existing parent must take it
    there = next(p for p in (path, *path.absolute().parents) if p.exists())
    if not (there.is_dir() and os.access(there, os.W_OK | os.X_OK)):
        raise bad("results_uri", uri, f"{there} is not writable here; {fix}")


def check_mesh_route(p) -> None:
    """mesh_route, and with the sidecar route the URLs the load pods' sidecar must carry."""

    if p.mesh_route not in ROUTES:
        raise bad("mesh_route", p.mesh_route, f"give one of {', '.join(ROUTES)}")
    if p.mesh_route != "sidecar" or p.isvc:  # an InferenceService's URL is port 80
        return
    urls = {"inference_url": p.inference_url} if p.run_load or p.sweep_rates else {}
    if p.run_llm and p.llm_url:
        urls["llm_url"] = p.llm_url
    for name, url in urls.items():
        parts = urlsplit(url)
        if parts.scheme != "http" or (parts.port or MESH_PORT) != MESH_PORT:
            raise bad(
                name,
                url,
                f"with mesh_route=sidecar the load pods' sidecar carries only plain http to "
                f"port {MESH_PORT} (a predictor's Service port); give an http:// URL without "
                "a port, or mesh_route=none",
            )

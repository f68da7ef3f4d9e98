"""The push of a benchmark's headline figures to a Prometheus Pushgateway, for alerting.

``push(url, metrics, labels, verdicts=...)`` turns the stable Metrics names
(``kfp_bench.report.metrics``) into Prometheus gauges (``HEADLINE``: base units, ratios 0-1,
``kfp_bench_`` prefix) and PUTs them to one group; when the run passed (no failure, no broken
gate, no regression) it also PUTs ``kfp_bench_last_success_timestamp_seconds`` to a group of its
own, which a failed run never touches. Standard library only: the pipeline's check step installs
nothing else. docs/alerting.md shows the series and the alert rules over them.
"""

from __future__ import annotations

import base64
import re
import time
import urllib.error
from collections.abc import Mapping
from urllib.parse import quote, unquote, urlsplit

from kfp_bench.errors import ConfigError, PushError
from kfp_bench.redact import public_url, scrub
from kfp_bench.urls import http_parts

#: The job label of the group with the figures, replaced whole by each run's push.
JOB = "kfp_bench"
#: The job label of the group with the last success, pushed only by a run that passed.
SUCCESS_JOB = "kfp_bench_last_success"
LAST_SUCCESS = "kfp_bench_last_success_timestamp_seconds"
#: Seconds a push may take; a Pushgateway answers in milliseconds when it is up.
TIMEOUT_S = 10.0

#: Stable Metrics name -> (Prometheus name, factor to its base unit, HELP text). Only these are
#: pushed, when the run has them: a figure the run did not measure is absent, never NaN.
HEADLINE: dict[str, tuple[str, float, str]] = {
    "load_p99_ms": ("kfp_bench_load_latency_p99_seconds", 1e-3, "p99 latency of the responses"),
    "load_rps": ("kfp_bench_load_requests_per_second", 1, "requests sent per second"),
    "load_success_ratio": ("kfp_bench_load_success_ratio", 1, "1xx-3xx responses / requests"),
    "sweep_max_rps": ("kfp_bench_sweep_max_requests_per_second", 1, "highest sweep throughput"),
    "runs_success_ratio": ("kfp_bench_runs_success_ratio", 1, "SUCCEEDED runs / runs created"),
    "run_duration_p99_s": ("kfp_bench_run_duration_p99_seconds", 1, "p99 run created-to-end"),
    "ttft_p99_ms": ("kfp_bench_llm_ttft_p99_seconds", 1e-3, "p99 LLM time to first token"),
    "itl_p99_ms": ("kfp_bench_llm_itl_p99_seconds", 1e-3, "p99 LLM inter-token latency"),
    "goodput_ratio": ("kfp_bench_llm_goodput_ratio", 1, "LLM requests within the SLO / all"),
    "failures": ("kfp_bench_failures", 1, "failure flags set (0: none)"),
    "regression": ("kfp_bench_regression", 1, "1: a regression against the baseline"),
    "gates_checked": ("kfp_bench_gates_checked", 1, "gates (thresholds) checked"),
    "gates_broken": ("kfp_bench_gates_broken", 1, "gates broken (or not measured)"),
}
PASSED = ("kfp_bench_passed", "1 when the run had no failure, no broken gate, no regression")
GATE = ("kfp_bench_gate_broken", "1 when this gate broke (or its figure was not measured)")

_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_PLAIN = re.compile(r"[A-Za-z0-9._~:-]+")


def check_url(url: str, name: str = "--pushgateway-url") -> str:
    """``url`` if it is an http(s) URL of a Pushgateway (a path is a prefix, e.g. behind a
    proxy); ``ConfigError`` naming ``name`` otherwise. The message never shows a password."""
    parts = http_parts(url)
    if parts and not parts.query and "/metrics/job/" not in parts.path:
        return url
    sep = "" if name.endswith("=") else " "
    raise ConfigError(
        f"{name}{sep}{public_url(url)!r}: give the Pushgateway's base URL, http(s)://HOST:PORT "
        "(e.g. http://pushgateway.monitoring:9091); the group's path is added from the labels"
    )


def check_labels(labels: Mapping[str, str], name: str = "--push-label") -> dict[str, str]:
    """``labels`` checked as Prometheus label names (``job`` and ``__`` names are ours)."""
    for key in labels:
        if not _LABEL.fullmatch(key) or key.startswith("__") or key in ("job", "instance"):
            raise ConfigError(
                f"{name} {key}=...: not a label this push can set; give a Prometheus label "
                "name ([a-zA-Z_][a-zA-Z0-9_]*, not job, instance or __*), e.g. benchmark=nightly"
            )
    return {k: str(v) for k, v in labels.items() if str(v)}


def passed(metrics: Mapping[str, float], verdicts: Mapping[str, object] | None = None) -> bool:
    """True when the run had no failure flag, no broken gate and no regression."""
    broken = sum(_broken(v) for v in (verdicts or {}).values())
    bad = (metrics.get(k) for k in ("failures", "regression", "gates_broken"))
    return not broken and not any(bad)


def _broken(verdict) -> bool:
    """A gate's verdict as the gates give it: True/"broken"/"unmeasured" broke, False/"held"."""
    if isinstance(verdict, str):
        return verdict.strip().lower() not in ("held", "ok", "pass", "passed")
    return bool(verdict)


def exposition(metrics: Mapping[str, float], verdicts=None) -> str:
    """The figures of one run in Prometheus' text format 0.0.4 (labels come from the URL)."""
    out: list[str] = []
    for stable, (name, factor, text) in HEADLINE.items():
        value = metrics.get(stable)
        if stable in ("gates_checked", "gates_broken") and value is None and verdicts:
            value = len(verdicts) if stable == "gates_checked" else None
            value = sum(map(_broken, verdicts.values())) if value is None else value
        if isinstance(value, int | float) and value == value and abs(value) != float("inf"):
            out += _family(name, text, [("", value * factor)])
    out += _family(*PASSED, [("", int(passed(metrics, verdicts)))])
    if verdicts:
        rows = [(f'{{gate="{_escape(g)}"}}', int(_broken(v))) for g, v in sorted(verdicts.items())]
        out += _family(*GATE, rows)
    return "\n".join(out) + "\n"


def _family(name: str, text: str, rows) -> list[str]:
    lines = [f"# HELP {name} {text}", f"# TYPE {name} gauge"]
    return lines + [f"{name}{labels} {_number(v)}" for labels, v in rows]


def _number(v) -> str:
    return str(v) if isinstance(v, int) else repr(float(v))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def group_url(url: str, job: str, labels: Mapping[str, str]) -> str:
    """The URL of the group ``{job, **labels}``: /metrics/job/JOB/NAME/VALUE..., a value with
    characters a path cannot carry plainly (a "/") base64url-encoded as NAME@base64/VALUE
    (prometheus/pushgateway README.md 412bd22, "URL", lines 266-290)."""
    parts = [f"job/{quote(job, safe='')}"]
    for key, value in labels.items():
        if _PLAIN.fullmatch(value):
            parts.append(f"{key}/{value}")
        else:
            code = base64.urlsafe_b64encode(value.encode()).decode()
            parts.append(f"{key}@base64/{code}")
    return url.rstrip("/") + "/metrics/" + "/".join(parts)


def push(
    url: str,
    metrics: Mapping[str, float],
    labels: Mapping[str, str],
    *,
    verdicts: Mapping[str, object] | None = None,
    now: float | None = None,
) -> list[str]:
    """PUT the figures of ``metrics`` (and ``verdicts``, gate -> verdict) to the group
    ``{job="kfp_bench", **labels}``, then, when the run passed, PUT ``LAST_SUCCESS`` (``now``,
    default the clock) to ``{job="kfp_bench_last_success", **labels}``; return what was done,
    a line each. ``PushError`` names the Pushgateway (without its password) and the fix.

    Two groups because a PUT replaces its whole group (README.md 412bd22 lines 366-369) and a
    POST keeps the names it does not send (lines 409-413): one PUT of the figures leaves no
    figure of an earlier run beside tonight's, and a failed run, which sends no last success,
    leaves the last one where it was.
    """
    check_url(url, "Pushgateway URL")
    labels = check_labels(labels)
    figures = group_url(url, JOB, labels)
    _put(figures, exposition(metrics, verdicts))
    done = [f"pushed {len(_names(metrics, verdicts))} figures to {public_url(figures)}"]
    if passed(metrics, verdicts):
        at = time.time() if now is None else now
        body = "\n".join(_family(LAST_SUCCESS, "end of the last run that passed", [("", at)]))
        success = group_url(url, SUCCESS_JOB, labels)
        _put(success, body + "\n")
        done.append(f"pushed {LAST_SUCCESS} {at:.0f} to {public_url(success)}")
    else:
        done.append(f"not passed: {LAST_SUCCESS} left as it was")
    return done


def _names(metrics, verdicts) -> list[str]:
    return [n for n in exposition(metrics, verdicts).splitlines() if not n.startswith("#")]


def _put(url: str, body: str) -> None:
    """One PUT; a user:password in the URL goes as Basic auth (urllib does not send it)."""
    # urllib.request costs ~20 ms (http.client with it); check_url runs at every start
    from urllib.request import Request, urlopen

    parts = urlsplit(url)
    headers = {"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}
    if parts.username is not None:
        raw = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        url = public_url(url)
    req = Request(url, data=body.encode(), headers=headers, method="PUT")
    shown = public_url(url)
    try:
        with urlopen(req, timeout=TIMEOUT_S) as resp:
            resp.read()
    except urllib.error.HTTPError as exc:
        text = scrub(exc.read().decode("utf-8", "replace").strip())[:500]
        raise PushError(
            f"Pushgateway {shown}: HTTP {exc.code} {text!r}: {_fix(exc.code)}"
        ) from None
    except (OSError, ValueError) as exc:
        why = scrub(str(getattr(exc, "reason", None) or exc))
        raise PushError(
            f"Pushgateway {shown}: could not be reached ({why}): check the URL, that the "
            "Pushgateway runs and that this pod may reach it (a NetworkPolicy, the mesh)"
        ) from None


def _fix(code: int) -> str:
    if code in (401, 403):
        return "check the credentials in the URL (user:password@) and the Pushgateway's web config"
    if code in (404, 405):
        return (
            "check the URL: give the Pushgateway's base URL (its --web.route-prefix, if any, "
            "included); this answer is not the Pushgateway's push API"
        )
    if code >= 500:
        return "the Pushgateway failed: see its log, then run again"
    return (
        "the push was refused; the Pushgateway's answer says why (e.g. a metric of the same name "
        "pushed with another type by another job)"
    )

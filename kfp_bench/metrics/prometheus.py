"""Prometheus's HTTP query API, as the metrics profiles use it: ``/api/v1/query`` (instant) and
``/api/v1/query_range`` (start, end, step), as docs/prometheus/latest/querying/api.md of
prometheus/prometheus describes them: a JSON envelope ``{"status": "success"|"error", "data",
"errorType", "error"}``, a matrix's values ``[unix seconds, "value as a string"]``.

A Prometheus that cannot be reached or answers an error is a measurement of the run (the caller
keeps the note); ``PromError.parse`` tells a query Prometheus could not parse (the profile's
fault) from the rest.
"""

from __future__ import annotations

import functools
import json
import math
import urllib.error
import urllib.parse

from kfp_bench.redact import public_url, scrub

#: Prometheus refuses a range query of more than 11,000 points per series
#: (web/api/v1/api.go, "exceeded maximum resolution of 11,000 points"): the step grows to stay
#: under it.
MAX_POINTS = 11_000


@functools.cache
def _opener():
    # urllib.request (~20 ms with http.client) when a query is sent, not at each start of load
    from urllib.request import ProxyHandler, build_opener

    return build_opener(ProxyHandler({}))


class PromError(Exception):
    """A query that gave no data: ``parse`` when Prometheus said the expression is invalid."""

    def __init__(self, message: str, parse: bool = False) -> None:
        super().__init__(message)
        self.parse = parse


def step_for(start: float, end: float, step: float) -> float:
    """``step``, or the smallest whole second that keeps the range under ``MAX_POINTS``."""
    return max(step, math.ceil((end - start) / (MAX_POINTS - 1)))


def query(url: str, expr: str, at: float, timeout: float = 30.0) -> list[dict]:
    """An instant query at ``at``: ``[{"labels", "t", "value"}]`` (a scalar: one, no labels)."""
    data = _get(url, "/api/v1/query", {"query": expr, "time": f"{at:.3f}"}, timeout)
    kind, result = data.get("resultType"), data.get("result")
    if kind == "string":
        raise PromError(f"{expr}: Prometheus answered a string, not a number")
    if kind == "scalar":
        return [{"labels": {}, "t": float(result[0]), "value": _num(result[1])}]
    return [
        {"labels": r.get("metric", {}), "t": float(r["value"][0]), "value": _num(r["value"][1])}
        for r in result or []
    ]


def query_range(
    url: str, expr: str, start: float, end: float, step: float, timeout: float = 60.0
) -> list[dict]:
    """A range query: ``[{"labels", "points": [[t, value], ...]}]``."""
    params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
    data = _get(url, "/api/v1/query_range", params, timeout)
    return [
        {
            "labels": r.get("metric", {}),
            "points": [[float(t), _num(v)] for t, v in r.get("values", [])],
        }
        for r in data.get("result") or []
    ]


def _num(v) -> float:
    # Prometheus writes NaN and the infinities as "NaN", "+Inf", "-Inf": float() reads them.
    return float(v)


def _get(base: str, path: str, params: dict, timeout: float) -> dict:
    where = public_url(base.rstrip("/") + path)
    full = base.rstrip("/") + path + "?" + urllib.parse.urlencode(params)
    try:
        with _opener().open(public_url(full), timeout=timeout) as resp:
            doc = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        # 400 bad_data, 422 execution, 503 timeout: the body is still the JSON envelope.
        try:
            doc = json.loads(exc.read())
        except ValueError:
            raise PromError(scrub(f"{where}: HTTP {exc.code}")) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PromError(scrub(f"cannot query {where}: {reason}")) from None
    if not isinstance(doc, dict) or doc.get("status") != "success":
        doc = doc if isinstance(doc, dict) else {}
        kind, error = doc.get("errorType", "?"), doc.get("error", "no error text")
        parse = kind == "bad_data" and "parse error" in str(error)
        raise PromError(scrub(f"{where}: {kind}: {error}"), parse=parse)
    return doc.get("data") or {}

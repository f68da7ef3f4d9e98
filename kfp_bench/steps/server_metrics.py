"""The server metrics of the pipeline's loads (docs/metrics-profiles.md, "In the pipeline"): the
parameters prometheus_url, metrics_profile, metrics_scrape, metrics_vars and
metrics_scrape_token checked; the collector a load worker runs its share inside; the workers'
series merged beside the merged result by the report steps.

Standard library only at import (the pipeline's modules import without any extra); a profile
is read with PyYAML, a dependency of kfp, which the first step's pod has.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from kfp_bench.errors import ConfigError
from kfp_bench.steps.checks import bad, need_url

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).

#: The one load worker that collects. The profile's queries cover the whole window and a direct
#: scrape reads the server, not the client: N pods asking the same would give the same answer N
#: times. Worker 0 is the one every load has; its window is its own share's (the workers start
#: together, fanned out by one ParallelFor), and a lost worker 0 leaves the note of its loss.
COLLECTING_WORKER = 0
#: The pod's Kubernetes service-account token (kubelet's projected default), sent as a bearer
#: token to the scrape endpoints with metrics_scrape_token on; $KFP_BENCH_SCRAPE_TOKEN moves it.
SCRAPE_TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount/token"
_EXAMPLE = "http://prometheus.monitoring:9090"


def check_metrics(p, fetch: bool = True) -> None:
    """The server-metrics parameters of ``p``, checked without a network: the profile read,
    its variables given (the InferenceService's namespace and name fill ``namespace`` and
    ``isvc``), the URLs' form. A query Prometheus cannot parse is found by the worker, which
    notes it and loads."""
    if not (on(p) and (p.run_load or p.run_llm)):  # else unread: steps.checks.ignored notes it
        return
    scrapes(p)
    found = profile(p)
    if found is None:
        return
    need_url("prometheus_url", p.prometheus_url.strip(), ("http", "https"), _EXAMPLE)
    try:
        found.check_variables(variables(p))
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("--metrics-var ", "metrics_vars ")) from None


@dataclass(frozen=True)
class ServerMetrics:
    """The server metrics' parameters (the pipeline's, ``steps.params.BenchParams``).

    Attributes:
        prometheus_url: the Prometheus (its HTTP API) that metrics_profile's queries go to, e.g.
            http://prometheus.monitoring:9090; empty without a profile.
        metrics_profile: named PromQL queries run over the load's window and drawn under the
            client's series (docs/metrics-profiles.md): a built-in name (kserve-predictor, kfp,
            gpu) or the profile's YAML text itself (a pod has no local file; the text is kept
            in the run's parameters, so the run records what was asked). Empty: none.
        metrics_scrape: /metrics endpoints sampled every second while the load runs,
            comma-separated (the predictor's pods, vLLM); empty for none. Load worker 0 alone
            scrapes and queries: the others would read the same server.
        metrics_vars: the profile's {{.NAME}} values, NAME=VALUE comma-separated; namespace and
            isvc are the isvc's own (its namespace and name) unless given here.
        metrics_scrape_token: send the pod's Kubernetes service-account token as a bearer
            token to the metrics_scrape endpoints (a predictor behind Istio or KFP auth).
    """

    prometheus_url: str = ""
    metrics_profile: str = ""
    metrics_scrape: str = ""
    metrics_vars: str = ""
    metrics_scrape_token: bool = False

    #: The parameters read only beside a switch (any one on): ``kfp_bench.needs``; the load
    #: workers collect.
    READ_BESIDE = {"metrics_profile metrics_scrape": "run_load run_llm"}
    #: What ``kfp-bench submit --help`` calls the group.
    TITLE = "the server metrics"

    check_group = check_metrics  # its own check, run by BenchParams.check


def on(p) -> bool:
    """Whether ``p`` (a ``BenchParams``) asks for server metrics."""
    return bool(p.metrics_profile.strip() or p.metrics_scrape.strip())


def profile(p):
    """The ``Profile`` of metrics_profile (a built-in name or its YAML text), or None."""
    if not p.metrics_profile.strip():
        return None
    from kfp_bench.metrics import profile as profiles

    return profiles.from_text(p.metrics_profile, "pipeline parameter metrics_profile=")


def scrapes(p) -> tuple[str, ...]:
    """The endpoints of metrics_scrape (comma-separated http(s) URLs), checked."""
    urls = tuple(u.strip() for u in p.metrics_scrape.split(",") if u.strip())
    for u in urls:
        need_url("metrics_scrape", u, ("http", "https"), "http://10.0.3.17:8080/metrics")
        if urlsplit(u).username is not None:
            raise bad("metrics_scrape", "(a URL with credentials)", "give the URL without "
                      "user:password@ (metrics_scrape_token sends the pod's token)")  # fmt: skip
    return urls


def variables(p) -> dict[str, str]:
    """The profile's ``{{.name}}`` values: ``namespace`` and ``isvc`` of the pipeline's own
    InferenceService (else ``namespace`` the parameter's), then metrics_vars (NAME=VALUE,
    comma-separated), which win."""
    found: dict[str, str] = {}
    if p.isvc:
        spec = p.isvc_spec()
        found = {"namespace": spec.namespace, "isvc": spec.name}
    elif p.namespace:
        found = {"namespace": p.namespace}
    from kfp_bench.metrics import profile as profiles

    items = [i.strip() for i in p.metrics_vars.split(",") if i.strip()]
    try:
        given = profiles.parse_vars(items)
    except ConfigError as exc:
        raise ConfigError(f"pipeline parameter {str(exc).replace('--metrics-var', 'metrics_vars')}"
                          ) from None  # fmt: skip
    return {**found, **given}


def collector(p, worker: int):
    """The ``Collector`` of load worker ``worker``: None unless it is ``COLLECTING_WORKER`` and
    ``p`` asks for server metrics."""
    if worker != COLLECTING_WORKER or not on(p):
        return None
    from kfp_bench.metrics.collect import Collector

    c = Collector(
        profile=profile(p),
        prometheus_url=p.prometheus_url.strip(),
        scrapes=scrapes(p),
        variables=variables(p),
    )
    try:
        c.headers = _scrape_headers(p)
    except ConfigError as exc:  # a note: the load is the measurement, the scrapes go without
        c.out.note(str(exc))
    return c


def _scrape_headers(p) -> dict[str, str]:
    if not p.metrics_scrape_token:
        return {}
    path = os.environ.get("KFP_BENCH_SCRAPE_TOKEN") or SCRAPE_TOKEN_PATH
    try:
        with open(path) as f:
            token = f.read().strip()
    except OSError as exc:
        raise ConfigError(
            f"pipeline parameter metrics_scrape_token=True: no service-account token at {path} "
            f"({type(exc).__name__}); let the pod mount one (automountServiceAccountToken) or "
            "switch it off"
        ) from None
    return {"Authorization": f"Bearer {token}"}


class Window:
    """What ``window`` measured: ``doc`` is ``{"server": ...}`` once it ends, else empty."""

    doc: dict

    def __init__(self) -> None:
        self.doc = {}


@contextlib.contextmanager
def window(p, worker: int, who: str):
    """Run the body (a worker's load) inside its collector's window, when it has one; the series
    then go into the worker's result (``Window.doc``): a KFP output artifact is one path, and a
    file beside it would not be uploaded. A query Prometheus cannot parse is a note and the
    load goes on: the figures of the load stand without the server's."""
    got = Window()
    c = collector(p, worker)
    if c is None:
        yield got
        return
    try:
        c.check()
    except ConfigError as exc:
        c.out.note(f"before the load: {exc}")
        c.profile = None
    c.start()
    try:
        yield got
    except BaseException:
        c.stop(query=False)
        raise
    series = c.stop()
    for note in series.notes:
        print(f"{who}server metrics: {note}")
    print(f"{who}server metrics: {len(series.series)} series, {len(series.histograms)} histograms")
    got.doc = {"server": series.to_dict()}


def merge(loads: list[str], out: str):
    """The server series in the workers' results ``loads`` merged and saved beside the merged
    result ``out`` (``run.json`` -> ``run.server.json``); None when none has any."""
    from kfp_bench.metrics import series as store

    merged = None
    for path in loads:
        try:
            with open(path) as f:
                doc = json.load(f).get("server")
        except (OSError, ValueError, AttributeError):
            continue  # the worker's loss is aggregate's to name
        if not doc:
            continue
        part = store.ServerSeries.from_dict(doc, f"{path}: server")
        if merged is None:
            merged = part
        else:
            merged.merge(part)
    if merged is not None:
        store.save(merged, store.path_beside(out))
    return merged

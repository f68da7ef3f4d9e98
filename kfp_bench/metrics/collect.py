"""One load's server metrics: checked before it, sampled while it runs, queried after it.

``Collector.check`` refuses a bad profile before anything is sent; ``start`` and ``stop`` bound
the window; a failed scrape or query is a note and a flag, never an exception. An ``instant``
entry sees only what Prometheus scraped, so ``stop`` waits until every target was scraped once
after the load (at most ``SETTLE_S``) and asks over a range back to the last scrape before the
start: the counters' growth over the whole load. The scrape thread paces from elapsed time."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.promscrape import scrape
from kfp_bench.metrics import prometheus as prom
from kfp_bench.metrics.profile import Profile
from kfp_bench.metrics.series import ServerSeries
from kfp_bench.redact import public_url

#: Histograms a direct scrape can set beside the client's figures: name -> client figure.
#: vLLM v1 (vllm/v1/metrics/loggers.py, vllm-project/vllm@005a810b); its
#: time_per_output_token_seconds is observed once per decoded token, the gap since the
#: previous one (vllm/v1/metrics/stats.py), the client's ITL. KServe's ModelServer:
#: request_predict_seconds (python/kserve/kserve/metrics.py, kserve/kserve@aaac4e29).
SCRAPED_HISTOGRAMS = {
    "vllm:time_to_first_token_seconds": "ttft",
    "vllm:time_per_output_token_seconds": "itl",
    "vllm:e2e_request_latency_seconds": "e2e",
    "request_predict_seconds": "latency",
}

#: The longest ``stop`` waits for Prometheus's first scrape of every target after the load.
SETTLE_S = 120.0
#: Every target's latest scrape is at or after this time (Prometheus's own ``up`` series).
SCRAPED_BY = "min(timestamp(up))"
MAY_MISS = "the instant queries may miss the load's last scrape interval"


@dataclass
class Collector:
    """The metrics of one load: ``profile`` against ``prometheus_url``, and ``scrapes``."""

    profile: Profile | None = None
    prometheus_url: str = ""
    scrapes: tuple[str, ...] = ()
    step_s: float = 1.0
    variables: dict[str, str] = field(default_factory=dict)
    #: Sent with every scrape (``--scrape-header``: a bearer token); never stored nor shown.
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    out: ServerSeries = field(default_factory=ServerSeries)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _first: dict = field(default_factory=dict)
    _last: dict = field(default_factory=dict)
    #: Every target's last scrape before the load is at or after this (None: not known).
    _scraped_before: float | None = None

    def check_local(self) -> None:
        """What ``check`` tells without a request: ``ConfigError`` for a step, a Prometheus URL
        or a variable missing."""
        if self.step_s <= 0:
            raise ConfigError(f"--metrics-step {self.step_s:g}: give a step above 0 seconds")
        if self.profile is None:
            return
        if not self.prometheus_url:
            raise ConfigError(
                f"--metrics-profile {self.profile.source} needs --prometheus-url (the "
                "Prometheus that scrapes the servers, e.g. http://prometheus.monitoring:9090)"
            )
        self.profile.check_variables(self.variables)

    def check(self) -> None:
        """Before the load: ``ConfigError`` for a profile that cannot run (``check_local``, or a
        query Prometheus refuses to parse: each asked once); a Prometheus out of reach is a
        note."""
        self.check_local()
        if self.profile is None:
            return
        values = {**self.variables, "elapsed": "60s"}
        now = time.time()
        for i, q in enumerate(self.profile.queries):
            try:
                prom.query(self.prometheus_url, q.render(values), now, timeout=10)
            except prom.PromError as exc:
                if exc.parse:
                    raise ConfigError(
                        f"metrics profile {self.profile.source}, entry {i + 1} "
                        f"({q.metric_name}): Prometheus cannot parse the query ({exc}); fix "
                        "the PromQL"
                    ) from None
                self.out.note(f"before the load: {exc}")
                return  # out of reach: the same for every query

    @property
    def started(self) -> bool:
        return self.out.window[0] > 0

    def start(self) -> None:
        self.out.step_s = self.step_s
        if self._instants():
            self._scraped_before = self._scraped_by()
        self.out.window = (time.time(), 0.0)
        if self.scrapes:
            # The first sample before the load sends anything: the histograms' baseline.
            for url in self.scrapes:
                self._scrape_one(url)
            self._thread = threading.Thread(target=self._sample, name="scrape", daemon=True)
            self._thread.start()

    def stop(self, query: bool = True) -> ServerSeries:
        """End the window; the samples and (``query``) the profile's answers over it."""
        end = time.time()
        self.out.window = (self.out.window[0], end)
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._scraped_histograms()
        if query and self.profile is not None and self.prometheus_url:
            self._query(*self.out.window)
        return self.out

    # -- Prometheus's scrapes around the load -----------------------------------------------------
    def _instants(self) -> bool:
        queries = self.profile.queries if self.profile else ()
        return bool(self.prometheus_url) and any(q.instant for q in queries)

    def _scraped_by(self) -> float | None:
        """The time by which Prometheus has scraped every target it has, now."""
        try:
            rows = prom.query(self.prometheus_url, SCRAPED_BY, time.time(), timeout=10)
        except prom.PromError:
            return None
        return rows[0]["value"] if rows and math.isfinite(rows[0]["value"]) else None

    def _settled(self, end: float) -> float:
        """When Prometheus has scraped every target after ``end`` (waited for, at most
        ``SETTLE_S``): the time to ask the instant entries at. A wait that runs out is a note."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            now = time.time()
            scraped = self._scraped_by()
            if scraped is None:
                self.out.note(f"no {SCRAPED_BY} from Prometheus: {MAY_MISS}", False)
                return end
            if scraped >= end:
                return now
            if time.monotonic() > deadline:
                late = f"Prometheus had not scraped every target {SETTLE_S:.0f} s after the load"
                self.out.note(f"{late}: {MAY_MISS}", False)
                return now
            time.sleep(0.25)

    # -- direct scrapes ------------------------------------------------------------------------
    def _sample(self) -> None:
        t0 = time.monotonic()
        k = 1
        # Paced from the start: a slow scrape shortens the next wait, it never shifts it.
        while not self._stop.wait(t0 + k * self.step_s - time.monotonic()):
            for url in self.scrapes:
                self._scrape_one(url)
            k = max(k + 1, math.ceil((time.monotonic() - t0) / self.step_s))
        for url in self.scrapes:  # the window's end: the buckets' last counts
            self._scrape_one(url)

    def _scrape_one(self, url: str) -> None:
        got = scrape(url, timeout=max(1.0, self.step_s), headers=self.headers)
        source = public_url(url)
        if "error" in got:
            self.out.note(got["error"])
            return
        t = got["at"]
        buckets: dict = {}
        for (name, labels), value in got["samples"].items():
            if name.endswith("_created"):
                continue
            base = name[: -len("_bucket")] if name.endswith("_bucket") else None
            if base in SCRAPED_HISTOGRAMS:
                le = dict(labels)["le"]
                buckets[(base, le)] = buckets.get((base, le), 0.0) + value
            elif base is None:
                self.out.add_points(source, name, dict(labels), [(t, value)])
        # A histogram not yet observed has no series: an empty first page is its baseline.
        self._first.setdefault(source, buckets)
        self._last[source] = buckets

    def _scraped_histograms(self) -> None:
        """Each scraped histogram's growth over the window: last minus first sample."""
        for source, last in self._last.items():
            first = self._first[source]
            for base, compare in SCRAPED_HISTOGRAMS.items():
                rows = [
                    (float(le), c - first.get((b, le), 0.0))
                    for (b, le), c in last.items()
                    if b == base
                ]
                if rows:
                    self.out.add_histogram(source, base, compare, rows)

    # -- the profile ---------------------------------------------------------------------------
    def _query(self, start: float, end: float) -> None:
        url, source = self.prometheus_url, public_url(self.prometheus_url)
        values = {**self.variables, "elapsed": f"{max(1, math.ceil(end - start))}s"}
        at, since = end, start
        if self._instants():
            at = self._settled(end)
            since = min(start, self._scraped_before or start)
        # The range reaches back past the last scrape before the load (a whole millisecond more).
        around = {**values, "elapsed": f"{math.floor((at - since) * 1e3) + 1}ms"}
        step = prom.step_for(start, end, self.step_s)
        for q in self.profile.queries:
            expr = q.render(around if q.instant else values)
            try:
                if q.instant:
                    rows = prom.query(url, expr, at)
                else:
                    rows = prom.query_range(url, expr, start, end, step)
            except prom.PromError as exc:
                self.out.note(f"{q.metric_name}: {exc}")
                continue
            if not rows:
                self.out.note(f"{q.metric_name}: no series over the window ({expr})", False)
            if q.compare:
                buckets = [(r["labels"]["le"], r["value"]) for r in rows if "le" in r["labels"]]
                if rows and not buckets:
                    self.out.note(f"{q.metric_name}: a compare query must keep the 'le' label")
                if buckets:
                    self.out.add_histogram(source, q.metric_name, q.compare, buckets)
            elif q.instant:
                for r in rows:
                    labels, t, value = r["labels"], r["t"], r["value"]
                    self.out.add_instant(source, q.metric_name, labels, t, value, q.figure)
            else:
                for r in rows:
                    self.out.add_points(source, q.metric_name, r["labels"], r["points"], q.panel)

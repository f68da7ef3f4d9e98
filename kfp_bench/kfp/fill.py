"""The full-database mode: fill KFP with K finished runs, probing the UI's calls as K grows.

This module owns the fill (runs of the benchmark's pipeline created at bounded concurrency,
each finished cheaply), the probe (the calls the KFP UI's Runs page makes, repeated for p50/p95)
and the fill's cleanup. Everything the fill makes carries its own benchmark id, ``<id>-fill``
(``kfp-bench-<id>-fill-NNNNN``, described as the driver describes its runs), so that
``kfp-bench cleanup --benchmark-id <id>-fill`` and the end of the benchmark sweep it with the
sweep of ``kfp_bench.kfp.cleanup``; the fill's creates never enter the runs benchmark's figures.

Why runs are terminated at once by default, and what each mode costs on a cluster: see
docs/full-database.md. The probe's calls are those of the KFP UI at kubeflow/pipelines
7b70c7b95f: ``frontend/src/pages/RunList.tsx`` ``_loadRuns`` (:339-415: listRuns with the page
size, ``created_at desc`` and ``storage_state NOT_EQUALS ARCHIVED``), ``_setColumns`` (:423-470:
listExperiments with no page size, then per run of the page ``_getAndSetPipelineVersionNames``,
:507-526, one getPipelineVersion each: the one-query-per-run pattern of kubeflow/pipelines#11346)
and ``frontend/src/components/CustomTable.tsx`` (:468, page sizes 10, 20, 50, 100; :249, desc).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

from kfp_bench.errors import ConfigError
from kfp_bench.kfp import cleanup, promscrape
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.driver import Driver, Sinks, metrics_url_of, run_benchmark
from kfp_bench.kfp.manifest import Manifest, load_manifest
from kfp_bench.kfp.options import CleanupOptions, RunsOptions, new_benchmark_id
from kfp_bench.metrics.windows import by_window
from kfp_bench.stats.runs import FillProbe, RunsStats

MODES = ("terminate", "finish")
#: CustomTable.tsx:468: the page sizes the UI offers
UI_PAGE_SIZES = (10, 20, 50, 100)
#: what the Runs page's filter box adds: RunList.tsx _loadRuns (:365-383)
NOT_ARCHIVED = {"key": "storage_state", "operation": "NOT_EQUALS", "string_value": "ARCHIVED"}
#: the UI's sort (CustomTable.tsx:249 and :522, RunSortKeys.CREATED_AT)
UI_SORT = "created_at desc"
#: the gets of one page go out as a browser sends them: Promise.all over HTTP/1.1, six
#: connections per host
BROWSER_CONNECTIONS = 6
#: states a run may still leave (model/runtime_state.go); the rest are final
OPEN_STATES = ("PENDING", "RUNNING", "CANCELING", "PAUSED", "RUNTIME_STATE_UNSPECIFIED")
SUFFIX = "-fill"

#: Progress callback: (phase, runs filled, target).
FillProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class FillOptions:
    """How to fill the server before the runs benchmark, and how to probe it.

    Attributes:
        target: runs to fill the server with (K); 0: no fill.
        steps: probes on the way: at the start and after each of this many equal fills.
        mode: how a fill run finishes: terminate (created, then terminated at once: CANCELED)
            or finish (left to run to its end).
        repeats: times each probed call is repeated at each step (p50 and p95 of them).
        page_sizes: the Runs page's page sizes probed (the UI offers 10, 20, 50, 100).
        settle_timeout: seconds to wait at each step for the fill's runs to be final.
    """

    target: int = 0
    steps: int = 5
    mode: str = "terminate"
    repeats: int = 20
    page_sizes: tuple[int, ...] = UI_PAGE_SIZES
    settle_timeout: float = 600.0

    def validate(self, max_runs: int) -> FillOptions:
        if self.target < 0:
            raise ConfigError(f"--fill {self.target}: give 0 (no fill) or a number of runs")
        if self.target > max_runs:
            raise ConfigError(
                f"--fill {self.target} is above the cap of {max_runs}: lower it, or raise the "
                f"cap with --max-runs {self.target} if the cluster can take it"
            )
        if not 1 <= self.steps <= max(self.target, 1):
            raise ConfigError(f"--fill-steps {self.steps}: give 1 to {max(self.target, 1)}")
        if self.mode not in MODES:
            raise ConfigError(f"--fill-mode {self.mode!r}: use {' or '.join(MODES)}")
        if self.repeats < 1:
            raise ConfigError(f"--fill-repeats {self.repeats}: give at least 1")
        if not self.page_sizes or any(not 1 <= s <= 200 for s in self.page_sizes):
            raise ConfigError(
                f"--fill-page-sizes {','.join(map(str, self.page_sizes))}: give sizes from 1 to "
                "200 (KFP's cap), e.g. 10,20,50,100"
            )
        if not self.settle_timeout > 0:
            raise ConfigError(f"--fill-timeout {self.settle_timeout}: give seconds above 0")
        return self

    def marks(self) -> list[int]:
        """The fill counts at which to probe: 0, then ``steps`` equal steps up to the target."""
        return [0, *(round(self.target * i / self.steps) for i in range(1, self.steps + 1))]


def fill_id(benchmark_id: str) -> str:
    """The fill's own benchmark id: ``<id>-fill``; an id too long for that (a pipeline run's
    own id may take all 40 characters: ``kfp_bench.steps.ids``) keeps its first 29
    characters and 5 hex digits of its SHA-256, so that the name stays unique and short."""
    room = 40 - len(SUFFIX)
    if len(benchmark_id) > room:
        digest = hashlib.sha256(benchmark_id.encode()).hexdigest()[:5]
        benchmark_id = f"{benchmark_id[: room - 6].rstrip('-')}-{digest}"
    return benchmark_id + SUFFIX


class Filler:
    """One fill: ``setup``, then ``to(k)`` and ``probe()`` in turn, and ``clean`` at the end
    (also after a Ctrl-C: the creates already sent are waited for, so their runs are swept)."""

    def __init__(
        self,
        opts: RunsOptions,
        fopts: FillOptions,
        manifest: Manifest,
        params: dict,
        on_progress: FillProgress | None = None,
    ):
        self.o, self.f = opts, fopts
        self.fid = fill_id(opts.benchmark_id)
        self.on_progress = on_progress or (lambda *a: None)
        self.calls = RunsStats(benchmark_id=self.fid)  # the fill's own calls, apart
        pool = opts.create_concurrency + BROWSER_CONNECTIONS + 4
        self.api = KfpApi.of(opts, pool, self.calls.add)
        fill_opts = dataclasses.replace(opts, benchmark_id=self.fid, num_runs=fopts.target)
        sinks = Sinks(self.calls, None)
        self.driver = Driver(fill_opts, self.api, manifest, params, self.fid, sinks, None)
        self.probes = FillProbe()
        self.filled = 0  # runs whose create was sent (the next run's number)
        self.fill_s = 0.0  # seconds spent creating (and terminating)
        self.settle_s = 0.0
        self.metrics_url = ""
        self.interrupted = False
        self.cleanup: dict = {}
        #: each probe's K and its window (epoch seconds): where a metrics profile is read
        self.windows: list[dict] = []
        self.server_series = None  # the collector's series over the fill (``collected``)
        #: quiet seconds before and after each probe: a scrape of the server on each side of it
        self.quiet_s = 0.0
        self.server_profile: dict = {}

    # -- setup and fill --------------------------------------------------------------------------
    def setup(self) -> None:
        """Upload the pipeline under the fill's id and create its experiment."""
        self.api.preflight()
        self.driver.setup()
        self.metrics_url = metrics_url_of(self.o, self.api)

    def to(self, k: int) -> None:
        """Create runs until ``k`` were sent, ``create_concurrency`` at a time; each is
        terminated at once (mode terminate); then wait until every fill run is final."""
        start = self.filled
        if k <= start:
            return
        t0 = time.perf_counter()
        pool = ThreadPoolExecutor(self.o.create_concurrency, thread_name_prefix="fill")
        futures: list = []
        try:
            futures += [pool.submit(self._one, i) for i in range(start, k)]
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=0.5)
                for f in done:
                    f.result()
                self.on_progress("filling", k - len(pending), self.f.target)
        except KeyboardInterrupt:
            self.interrupted = True
            self.api.drain(pool)  # creates already sent finish: their runs are known and swept
            k = start + sum(not f.cancelled() for f in futures)  # the creates sent
            raise
        finally:
            pool.shutdown(wait=True)
            self.filled = k
            self.fill_s += time.perf_counter() - t0
        self.settle()

    def _one(self, i: int) -> None:
        rid = self.driver.create(i)
        if rid and self.f.mode == "terminate":
            self.api.terminate_run(rid)  # a run already finished is refused, and that is fine

    def settle(self) -> None:
        """Wait until no fill run is open (one LIST a round, its total counted by the server),
        or ``settle_timeout``; a fill that does not settle is flagged, and probed all the same."""
        t0 = time.monotonic()
        pred = {"key": "state", "operation": "IN", "string_values": {"values": list(OPEN_STATES)}}
        query = json.dumps({"predicates": [pred]})
        while True:
            r = self.api.call(
                "list_runs", "run_service_list_runs",
                experiment_id=self.driver.experiment_id, page_size=1, filter=query,
            )  # fmt: skip
            left = int(r.body.get("total_size") or 0) if r.ok else -1
            self.on_progress("settling", self.filled, self.f.target)
            if left == 0:
                break
            if time.monotonic() - t0 > self.f.settle_timeout:
                self.calls.flags.append("fill-unsettled")
                break
            time.sleep(min(self.o.poll_interval, 1.0))
        self.settle_s += time.monotonic() - t0

    # -- the probe --------------------------------------------------------------------------------
    def probe(self) -> None:
        """The UI's calls at the current fill, ``repeats`` times each, with the server's own
        figures (a /metrics scrape before and after) when there is an endpoint to scrape."""
        url, timeout = self.metrics_url, self.o.request_timeout
        before = promscrape.scrape(url, timeout) if url else None
        k = self.server_total()
        time.sleep(self.quiet_s)
        start = time.time()
        self.on_progress("probing", self.filled, self.f.target)
        flt = json.dumps({"predicates": [NOT_ARCHIVED]})
        name = {"key": "name", "operation": "IS_SUBSTRING", "string_value": self.fid}
        named = json.dumps({"predicates": [NOT_ARCHIVED, name]})
        page: list[dict] = []
        for _ in range(self.f.repeats):
            for size in self.f.page_sizes:
                r = self._list(f"list_runs_p{size}", k, page_size=size, filter=flt)
                if size == 20 or not page:
                    page = (r.body or {}).get("runs") or page
            exp = self.driver.experiment_id
            self._list("list_runs_experiment_p20", k, experiment_id=exp, page_size=20, filter=flt)
            self._list("list_runs_name_p20", k, page_size=20, filter=named)
            r = self.api.list_experiments(page_size=None)  # the UI asks with no page size
            self.probes.add(k, "list_experiments", r.call.duration, r.ok)
            self._page_load(k, flt)
        for run in page:  # the run details page: one GET per run
            r = self.api.get_run(run.get("run_id", ""))
            self.probes.add(k, "get_run", r.call.duration, r.ok)
        end = time.time()
        time.sleep(self.quiet_s)
        self.windows.append({"k": k, "filled": self.filled, "start": start, "end": end,
                             "quiet": self.quiet_s})  # fmt: skip
        after = promscrape.scrape(url, timeout) if url else None
        self.probes.server(k, self.filled, promscrape.deltas(before, after) if url else {})

    def collected(self, collector) -> None:
        """Stop ``collector`` (``kfp_bench.metrics.collect.Collector``) and read its profile
        at each probe (``kfp_bench.metrics.windows.by_window``): ``server_profile``."""

        self.server_series = collector.stop()
        if collector.profile is not None and collector.prometheus_url:
            self.server_profile = by_window(
                collector.profile, collector.prometheus_url, collector.variables,
                self.server_series, self.windows,
            )  # fmt: skip
            missing = set(self.server_profile["not_exposed"])  # said there once
            self.server_profile["notes"] += [
                n for n in self.server_series.notes if n.split(":")[0] not in missing
            ]

    def _list(self, kind: str, k: int, **query):
        r = self.api.call(
            "list_runs", "run_service_list_runs",
            namespace=self.api.namespace, sort_by=UI_SORT, **query,
        )  # fmt: skip
        self.probes.add(k, kind, r.call.duration, r.ok)
        return r

    def _page_load(self, k: int, flt: str) -> None:
        """The Runs page at 20 a page, as the UI loads it: LIST, listExperiments, then a
        getPipelineVersion per run, six at a time; each call and the whole page timed."""
        t0 = time.perf_counter()
        r = self._list("page_list_runs_p20", k, page_size=20, filter=flt)
        e = self.api.list_experiments(page_size=None)
        refs = [x.get("pipeline_version_reference") or {} for x in (r.body or {}).get("runs", [])]
        refs = [x for x in refs if x.get("pipeline_id") and x.get("pipeline_version_id")]
        with ThreadPoolExecutor(BROWSER_CONNECTIONS) as pool:
            gets = list(pool.map(self._get_version, refs))
        ok = r.ok and e.ok and all(g.ok for g in gets)
        for g in gets:
            self.probes.add(k, "get_pipeline_version", g.call.duration, g.ok)
        self.probes.add(k, "page_load_p20", time.perf_counter() - t0, ok)

    def _get_version(self, ref: dict):
        return self.api.call(
            "get_pipeline_version", "pipeline_service_get_pipeline_version",
            ref["pipeline_id"], ref["pipeline_version_id"],
        )  # fmt: skip

    def server_total(self) -> int:
        """Runs the server holds, every experiment's (what the Runs page counts); the fill's
        count when the LIST fails."""
        r = self.api.call(
            "list_runs", "run_service_list_runs", namespace=self.api.namespace, page_size=1
        )
        return int(r.body.get("total_size") or 0) if r.ok else self.filled

    # -- the end --------------------------------------------------------------------------------
    def clean(self) -> dict:
        """Sweep everything of the fill's id (``kfp_bench.kfp.cleanup``), then count, through
        the API, the runs that still carry it: ``cleanup["remaining"]`` (0 when all are gone)."""
        if self.o.keep:
            self.cleanup = {"kept": True, "sweep": f"kfp-bench cleanup --benchmark-id {self.fid}"}
            return self.cleanup
        copts = CleanupOptions(
            host=self.o.host, benchmark_id=self.fid, concurrency=self.o.create_concurrency,
            request_timeout=self.o.request_timeout, retries=self.o.retries,
            retry_max_wait=self.o.retry_max_wait, auth=self.o.auth,
        )  # fmt: skip
        report = cleanup.sweep(copts, on_call=self.calls.add)
        r = self.api.list_runs_named(self.fid)
        remaining = int(r.body.get("total_size") or 0) if r.ok else None
        self.cleanup = {
            "runs_deleted": report["deleted"]["runs"],
            "experiments_deleted": report["deleted"]["experiments"],
            "pipelines_deleted": report["deleted"]["pipelines"],
            "remaining": remaining,
            "failed": report["failed"][:5],
        }
        if report["failed"] or remaining != 0:
            self.cleanup["left"] = [f"runs of {self.fid} (kfp-bench cleanup --benchmark-id "
                                    f"{self.fid})"]  # fmt: skip
        return self.cleanup

    def close(self) -> None:
        self.api.close()

    def summary(self) -> dict:
        """The results' ``fill`` section: the options, the fill's rate, the probe's rows."""
        api = self.calls.summary()["api"]
        created = api.get("create_run", {})
        return {
            "benchmark_id": self.fid,
            "target": self.f.target,
            "steps": self.f.steps,
            "mode": self.f.mode,
            "repeats": self.f.repeats,
            "page_sizes": list(self.f.page_sizes),
            "filled": self.filled,
            "create_failed": self.calls.failed("create_run"),
            "fill_s": round(self.fill_s, 3),
            "settle_s": round(self.settle_s, 3),
            "fill_rate_per_s": round(self.filled / self.fill_s, 3) if self.fill_s else 0.0,
            "create_run_p50_ms": created.get("p50_ms", 0.0),
            "rows": self.probes.rows(),
            "server": self.probes.server_rows(),
            "probe_windows": [
                {**w, "start": round(w["start"], 3), "end": round(w["end"], 3)}
                for w in self.windows
            ],
            **({"server_profile": self.server_profile} if self.server_profile else {}),
            "cleanup": self.cleanup,
            "flags": sorted({*self.calls.flags, *(["interrupted"] if self.interrupted else [])}),
        }


def fill_and_probe(filler: Filler, collector=None) -> None:
    """Probe at the start and after each step of the fill; ``KfpApiError`` when the fill's setup
    fails (nothing made is left: ``clean`` sweeps it). ``collector``
    (``kfp_bench.metrics.collect.Collector``) is checked before anything is made
    (``ConfigError``) and collects over the fill and its probes; the profile's figures at each
    probe are the fill's ``server_profile`` (``Filler.collected``)."""
    if collector is not None:
        collector.check()
        # Prometheus sees a probe's calls only between two scrapes: the step is its interval.
        filler.quiet_s = collector.step_s
    filler.setup()
    if collector is not None:
        collector.start()
    try:
        for k in filler.f.marks():
            filler.to(k)
            filler.probe()
    except BaseException:
        if collector is not None:
            collector.stop(query=False)
        raise
    if collector is not None:
        filler.collected(collector)


def run_with_fill(
    opts: RunsOptions,
    fopts: FillOptions,
    *,
    out_dir=None,
    on_progress=None,
    on_fill_progress: FillProgress | None = None,
    collector=None,
) -> tuple[RunsStats, dict]:
    """Fill and probe (``fill_and_probe``, with ``collector`` when given), run the runs
    benchmark on the full server, then sweep the fill; (the benchmark's stats, the ``fill``
    section). A Ctrl-C during the fill skips the benchmark; the fill is swept whatever
    happened."""
    opts.validate()
    fopts.validate(opts.max_runs)
    if not opts.benchmark_id:
        opts = dataclasses.replace(opts, benchmark_id=new_benchmark_id())
    manifest = load_manifest(opts.pipeline)
    params = manifest.check_params(opts.params)
    filler = Filler(opts, fopts, manifest, params, on_fill_progress)
    stats = None
    try:
        try:
            fill_and_probe(filler, collector)
        except KeyboardInterrupt:
            filler.interrupted = True
        except Exception:  # whatever stopped the fill (a KfpApiError...), its runs are swept
            filler.clean()
            raise
        if not filler.interrupted:
            stats = run_benchmark(opts, out_dir=out_dir, on_progress=on_progress, manifest=manifest)
        filler.clean()
    finally:
        filler.close()
    if stats is None:  # nothing of the benchmark ran: its summary says so
        stats = RunsStats(requested=opts.num_runs, benchmark_id=opts.benchmark_id,
                          host=filler.api.host, options=opts.redacted())  # fmt: skip
        stats.flags.append("interrupted")
    return stats, filler.summary()

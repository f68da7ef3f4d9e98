"""The runs benchmark as three phases that may run in three processes: upload, spawn, poll.

The meta-pipeline runs them as three components (the figures come from the server's
timestamps, so the gaps cost nothing); each is ``Driver`` code, so both ways measure alike. They
hand on through ``out_dir``: handle.json (the ids ``upload`` created), phases.json (start, CPU,
flags, the first /metrics scrape, the spawned run ids), api_calls.jsonl and runs.jsonl. ``poll``
returns the whole benchmark's ``RunsStats``. Cleanup is the exit handler's sweep by benchmark id.
A poll marks phases.json while it runs, so the next poll after a killed one flags
"poller-killed"."""

from __future__ import annotations

import dataclasses
import json
import time
from concurrent.futures import wait
from dataclasses import dataclass
from pathlib import Path

from kfp_bench import jsonl
from kfp_bench.errors import ConfigError, KfpApiError
from kfp_bench.kfp import promscrape
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.driver import Driver, Sinks, metrics_url_of, new_stats
from kfp_bench.kfp.manifest import Manifest, load_manifest
from kfp_bench.kfp.options import RunsOptions, new_benchmark_id
from kfp_bench.records import ApiCall, RunRecord
from kfp_bench.redact import public_url
from kfp_bench.stats.runs import RunsStats

HANDLE = "handle.json"
STATE = "phases.json"


@dataclass(frozen=True, slots=True)
class BenchmarkHandle:
    """What ``upload`` created, all a later phase (or a cleanup) needs to find it.

    Attributes:
        benchmark_id: the id in the name of everything the benchmark creates.
        host: the KFP API.
        pipeline_id: the pipeline the runs are made from.
        version_id: its version uploaded by this benchmark.
        new_pipeline: whether the pipeline itself is this benchmark's (else only the version).
        experiment_id: the benchmark's experiment, which holds its runs.
        namespace: the namespace of multi-user KFP; empty for standalone.
    """

    benchmark_id: str
    host: str
    pipeline_id: str
    version_id: str
    new_pipeline: bool
    experiment_id: str
    namespace: str = ""

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> BenchmarkHandle:
        """The handle ``to_json`` wrote; ``ConfigError`` naming what is wrong otherwise."""
        try:
            doc = json.loads(text)
            return cls(**doc)
        except (ValueError, TypeError) as exc:
            raise ConfigError(
                f"benchmark handle {text[:80]!r}: not the JSON of a BenchmarkHandle ({exc}); "
                "pass the output of the upload phase"
            ) from None


def upload(
    opts: RunsOptions, manifest: Manifest | None = None, out_dir: str | Path | None = None
) -> BenchmarkHandle:
    """Check the options and the manifest, upload the pipeline (or a version of
    ``opts.pipeline_id``) and create the experiment; scrape /metrics first.

    Args:
        opts: the options; validated here, before anything is sent.
        manifest: an already loaded manifest (otherwise ``opts.pipeline`` is loaded).
        out_dir: where the records and the state start (files already there are replaced).

    Returns:
        The handle of what was created; also written to ``out_dir/handle.json``.

    Raises:
        ConfigError: bad options, or an unreachable or refusing host; nothing was created.
        KfpApiError: an upload or create failed; what was made is deleted again.
    """
    opts.validate()
    manifest = manifest or load_manifest(opts.pipeline)
    params = manifest.check_params(opts.params)
    bid = opts.benchmark_id or new_benchmark_id()
    with _Phase(opts, out_dir, bid, first=True) as ph:
        ph.api.preflight()
        url = metrics_url_of(opts, ph.api)
        if url:
            ph.state["metrics_before"] = _saved(promscrape.scrape(url, opts.request_timeout))
        driver = ph.driver(params, manifest)
        try:
            driver.setup()
        except KfpApiError:
            driver.clean()
            raise
        ph.state["caching"] = ph.stats.options.get("caching")
        handle = BenchmarkHandle(
            benchmark_id=bid,
            host=public_url(opts.host),
            pipeline_id=driver.pipeline_id,
            version_id=driver.version_id,
            new_pipeline=driver.new_pipeline,
            experiment_id=driver.experiment_id,
            namespace=ph.api.namespace or "",
        )
    if out_dir is not None:
        (Path(out_dir) / HANDLE).write_text(handle.to_json() + "\n")
    return handle


def spawn(handle: BenchmarkHandle, opts: RunsOptions, out_dir: str | Path | None = None) -> list:
    """Create ``opts.num_runs`` runs in the handle's experiment, ``create_concurrency`` at a time.

    Creates not yet sent when ``opts.timeout`` has passed are dropped (flag "timeout"); those
    already sent are waited for, so that their runs are known.

    Returns:
        The ids of the runs created, sorted; also kept in ``out_dir/phases.json`` for ``poll``.
    """
    opts.validate()
    with _Phase(opts, out_dir, handle.benchmark_id) as ph:
        ph.state["spawn_started_at"] = time.time()
        driver = ph.driver(opts.params)
        driver.adopt(handle)
        futures = driver.start_creates()
        try:
            _, pending = wait(futures, timeout=opts.timeout)
            if pending:
                ph.stats.flags.append("timeout")
        finally:
            for f in futures:
                f.cancel()
            driver.pool.shutdown(wait=True)
        ids = sorted(driver.created)
        ph.state["created"] = ids
        # A failed create may have made its run: the poll must LIST before it can stop.
        ph.state["create_errors"] = driver.create_errors
    return ids


def poll(
    handle: BenchmarkHandle, opts: RunsOptions, out_dir: str | Path | None = None
) -> RunsStats:
    """LIST the experiment's runs, page by page, until all are final or the timeout (counted from
    the spawn's start) passes; then terminate or leave the unfinished ones as ``on_timeout``
    says. Cleanup is left to the sweep (``cleanup`` in the summary says so).

    Returns:
        The stats of the whole benchmark: every phase's API calls (read back from
        ``out_dir``), the runs, the server's view between the upload's scrape and this one's.
    """
    opts.validate()
    with _Phase(opts, out_dir, handle.benchmark_id) as ph:
        if ph.state.get("polling"):
            # A poll started and never wrote its end: it was killed (SIGKILL, OOM, node loss).
            # Its records up to then are in the files; say that it did not finish.
            ph.stats.flags.append("poller-killed")
        ph.state["polling"] = time.time()
        ph.save()
        driver = ph.driver(opts.params)
        driver.adopt(handle)
        driver.final.update({r.run_id: r for r in ph.earlier_runs})
        for rid in ph.state.get("created", []):
            driver.created.add(rid)
            driver.last.setdefault(rid, {"run_id": rid})
        driver.create_errors = ph.state.get("create_errors", 0)
        started = ph.state.get("spawn_started_at") or time.time()
        deadline = time.monotonic() + (started + opts.timeout - time.time())
        try:
            driver.poll_until(deadline, [])
        finally:
            driver.finish(clean=False)
        before = ph.state.get("metrics_before")
        if before is not None:
            after = promscrape.scrape(before["url"], opts.request_timeout)
            ph.stats.set_server(promscrape.deltas(_loaded(before), after))
    stats = ph.stats
    stats.flags = list(ph.state["flags"])
    stats.close(time.time() - ph.state["started_at"], ph.state["cpu_s"])
    return stats


class _Phase:
    """One phase's API client, sinks and state: the state read from ``out_dir`` on entry and
    written back on exit, whatever the phase ended in."""

    def __init__(self, opts: RunsOptions, out_dir, bid: str, first: bool = False):
        self.dir = Path(out_dir) if out_dir is not None else None
        self.o, self.bid = opts, bid
        self.state = {"started_at": time.time(), "cpu_s": 0.0, "flags": []}
        if not first and self.dir is not None and (self.dir / STATE).exists():
            self.state.update(json.loads((self.dir / STATE).read_text()))
        stats = new_stats(opts, bid)
        if self.state.get("caching"):  # what the upload phase did to the child's caching
            stats.options["caching"] = self.state["caching"]
        stats.started_at = self.state["started_at"]
        self.earlier_runs: list[RunRecord] = []
        if not first and self.dir is not None:
            for record in self._earlier("api_calls.jsonl", ApiCall):
                stats.add(record)
            self.earlier_runs = self._earlier("runs.jsonl", RunRecord)
            for record in self.earlier_runs:
                stats.add(record)
        self.stats = stats
        self.sinks = Sinks(stats, self.dir, append=not first)
        self.api = KfpApi.of(opts, opts.create_concurrency + opts.get_sample + 4, self.sinks.call)
        self.cpu0 = time.process_time()

    def _earlier(self, name: str, cls: type) -> list:
        path = self.dir / name
        return jsonl.read(path, cls) if path.exists() else []

    def driver(self, params: dict, manifest: Manifest | None = None) -> Driver:
        return Driver(self.o, self.api, manifest, params, self.bid, self.sinks, None)

    def __enter__(self) -> _Phase:
        return self

    def save(self) -> None:
        if self.dir is not None:
            jsonl.write_json_atomic(self.state, self.dir / STATE)

    def __exit__(self, *exc) -> None:
        self.sinks.close()
        self.api.close()
        self.state["cpu_s"] += time.process_time() - self.cpu0
        self.state["flags"] = sorted(set(self.state["flags"]) | set(self.stats.flags))
        self.state.pop("polling", None)  # the poll ended (whatever way): not killed
        self.save()


def _saved(scrape: dict) -> dict:
    """A scrape as JSON: its (name, labels) keys become lists."""
    samples = scrape.get("samples")
    if samples is None:
        return scrape
    rows = [[name, [list(kv) for kv in labels], v] for (name, labels), v in samples.items()]
    return {**scrape, "samples": rows}


def _loaded(saved: dict) -> dict:
    rows = saved.get("samples")
    if rows is None:
        return saved
    samples = {(name, tuple(tuple(kv) for kv in labels)): v for name, labels, v in rows}
    return {**saved, "samples": samples}

"""The runs benchmark: upload a pipeline, create an experiment, spawn runs, poll, clean up.

``run_benchmark`` runs it in one process; ``kfp.phases`` runs the same steps as the
meta-pipeline's components. It never prints: calls and runs become records (JSON lines as they
happen) aggregated into ``RunsStats``. Bad input is found before anything is created (the
manifest and parameters checked, one authenticated read). Runs are created by
``pipeline_version_reference`` (one upload, not one per run). Each poll round LISTs the
experiment's runs in pages of 200, not a GET per run, which at ~200 GETs/s exhausts KFP's MySQL
connections (kubeflow/pipelines#7716); CANCELED is final too (``wait_for_run_completion`` misses
it). Past ``timeout`` unfinished runs are terminated or left, and one that finished first keeps
its final state (``RunRecord.at_timeout``). The cleanup deletes only what this benchmark made,
versions before their pipeline; a run made by a create that failed carries the benchmark id in
its name, so a last LIST finds it. The first Ctrl-C stops creating and polling, still cleans up,
and flags the stats "interrupted"."""

from __future__ import annotations

import contextlib
import random
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from kfp_bench.errors import ConfigError, KfpApiError
from kfp_bench.jsonl import JsonlWriter
from kfp_bench.kfp import convert, promscrape
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.caching import caching_off, describe
from kfp_bench.kfp.manifest import Manifest, load_manifest
from kfp_bench.kfp.options import NAME_PREFIX, RunsOptions, new_benchmark_id
from kfp_bench.outcome import EXIT_LEFT_BEHIND
from kfp_bench.records import ApiCall, RunRecord
from kfp_bench.redact import public_url
from kfp_bench.stats.runs import RunsStats

#: Progress callback: (phase, runs created, runs final, runs requested).
Progress = Callable[[str, int, int, int], None]


def run_benchmark(
    opts: RunsOptions,
    *,
    out_dir: str | Path | None = None,
    on_progress: Progress | None = None,
    manifest: Manifest | None = None,
) -> RunsStats:
    """Run the benchmark described by ``opts`` and return its stats.

    Args:
        opts: the options; validated here, before anything is sent.
        out_dir: where runs.jsonl and api_calls.jsonl are written as records happen; none if None.
        on_progress: called about once per poll round with (phase, created, final, requested).
        manifest: an already loaded manifest (otherwise ``opts.pipeline`` is loaded).
    """
    opts.validate()
    manifest = manifest or load_manifest(opts.pipeline)
    params = manifest.check_params(opts.params)
    bid = opts.benchmark_id or new_benchmark_id()
    stats = new_stats(opts, bid)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    sinks = Sinks(stats, out_dir, defer=True)
    api = KfpApi.of(opts, opts.create_concurrency + opts.get_sample + 4, sinks.call)
    metrics_url = metrics_url_of(opts, api)
    try:
        api.preflight()  # ConfigError for an unreachable host, 401, 403: nothing created yet
        sinks.open()
        before = promscrape.scrape(metrics_url, opts.request_timeout) if metrics_url else None
        driver = Driver(opts, api, manifest, params, bid, sinks, on_progress)
        stopped = None
        try:
            driver.run()
        except KfpApiError as exc:  # setup failed: nothing to measure; what it made is cleaned up
            stopped = exc
        finally:
            driver.finish()
        if stopped is not None:
            raise stopped_error(stopped, driver.cleanup, bid) from None
        if before is not None:
            after = promscrape.scrape(metrics_url, opts.request_timeout)
            stats.set_server(promscrape.deltas(before, after))
    finally:
        sinks.close()
        api.close()
        stats.close(time.perf_counter() - wall0, time.process_time() - cpu0)
    return stats


def new_stats(opts: RunsOptions, bid: str) -> RunsStats:
    """The stats of the benchmark ``bid`` before its first record: its options and flags."""
    options = {**opts.redacted(), "benchmark_id": bid}
    stats = RunsStats(opts.num_runs, bid, public_url(opts.host), options=options)
    stats.flags += opts.flags()
    return stats


def stopped_error(exc: KfpApiError, cleanup: dict, bid: str) -> KfpApiError:
    """``exc`` with what its cleanup left behind, if anything (then exit code 4)."""
    left = cleanup.get("left")
    if not left:
        return exc
    err = KfpApiError(
        f"{exc}; left behind: {', '.join(left)}; remove them with "
        f"kfp-bench cleanup --benchmark-id {bid}"
    )
    err.exit_code = EXIT_LEFT_BEHIND
    return err


def metrics_url_of(opts: RunsOptions, api: KfpApi) -> str:
    """The KFP API server's /metrics URL to scrape, or "" when asked not to."""
    return "" if opts.metrics_url == "none" else (opts.metrics_url or api.base + "/metrics")


class Sinks:
    """Records go to the stats and, if asked, to JSON-lines files, from any thread; ``append``
    adds to the files an earlier phase wrote. With ``defer`` the files are made only by
    ``open()``: records until then wait in memory, so that a benchmark refused at its preflight
    (unreachable host, refused credentials) leaves no output directory behind."""

    def __init__(self, stats: RunsStats, out_dir, append: bool = False, defer: bool = False):
        self.stats = stats
        self.lock = threading.Lock()
        self.calls = self.runs = None
        self.out_dir, self.append = out_dir, append
        self.pending: list | None = [] if defer and out_dir is not None else None
        if self.pending is None:
            self.open()

    def open(self) -> None:
        """Make the files (if asked for) and write the records that waited."""
        if self.out_dir is None or self.calls is not None:
            return
        with self.lock:
            folder = Path(self.out_dir)
            calls, runs = folder / "api_calls.jsonl", folder / "runs.jsonl"
            made = [p for p in (calls, runs) if not p.exists()]
            try:
                self.calls = JsonlWriter(calls, append=self.append)
                self.runs = JsonlWriter(runs, append=self.append)
            except OSError as exc:  # the folder removed or replaced since it was checked
                self.close()
                for p in made:  # what this open made, before anything was created on the server
                    with contextlib.suppress(OSError):
                        p.unlink()
                self.calls = self.runs = None
                raise ConfigError(
                    f"{folder}: cannot write the benchmark's records there "
                    f"({exc.strerror or exc}); give a folder that can be written"
                ) from None
            for c in self.pending or ():
                self.calls.write(c)
            self.pending = None

    def call(self, c: ApiCall) -> None:
        with self.lock:
            self.stats.add(c)
            if self.pending is not None:
                self.pending.append(c)
                return
        if self.calls:
            self.calls.write(c)

    def run(self, r: RunRecord) -> None:
        with self.lock:
            self.stats.add(r)
        if self.runs:
            self.runs.write(r)

    def close(self) -> None:
        for w in (self.calls, self.runs):
            if w:
                w.close()


class Driver:
    def __init__(self, opts, api, manifest, params, bid, sinks, on_progress):
        self.o: RunsOptions = opts
        self.api: KfpApi = api
        self.manifest = manifest
        self.params = params
        self.bid = bid
        self.name = NAME_PREFIX + bid
        self.sinks: Sinks = sinks
        self.on_progress = on_progress or (lambda *a: None)
        self.pipeline_id = ""
        self.version_id = ""
        self.new_pipeline = False
        self.experiment_id = ""
        self.lock = threading.Lock()
        self.created: set[str] = set()  # ids the create call returned
        self.last: dict[str, dict] = {}  # run id -> the run as last listed
        self.final: dict[str, RunRecord] = {}
        self.left: set[str] = set()  # runs given up and left running
        self.seen: dict[str, convert.Sightings] = {}  # what the polls saw of each run
        self.fate: dict[str, str] = {}  # run id -> RunRecord.at_timeout
        self.creates_done = threading.Event()
        self.create_errors = 0  # creates that answered no run (it may exist all the same)
        self.listed_after_creates = False  # a LIST read whole once every create had returned
        self.round = 0
        self.pool: ThreadPoolExecutor | None = None
        self.interrupted = False
        self.note = ""  # the error every run finalized from now on carries (after a timeout)
        self.cleanup = {"runs_deleted": 0, "runs_failed": 0, "left": []}

    # -- phases -----------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self.setup()
            self.poll_until(time.monotonic() + self.o.timeout, self.start_creates())
        except KeyboardInterrupt:
            self.interrupted = True
            self.sinks.stats.flags.append("interrupted")
            if self.pool:
                # Creates already sent finish: the runs they make must be known before the
                # cleanup, or they would outlive the benchmark. Those waiting to retry give up;
                # finish() LISTs the runs they may have made.
                self.api.drain(self.pool)

    def setup(self) -> None:
        """Upload the pipeline (or a version) and create the experiment; any failure here cleans
        up what was made and raises ``KfpApiError``: without them there is nothing to measure."""
        desc = f"Created by kfp-bench, benchmark {self.bid}; delete with kfp-bench cleanup."
        # Caching off on every task, whatever the manifest says: a cache hit measures no work.
        manifest, overridden, tasks = caching_off(self.manifest)
        self.sinks.stats.options["caching"] = describe(overridden, tasks)
        with tempfile.TemporaryDirectory(prefix="kfp-bench-") as tmp:
            path = str(manifest.write_to(tmp))
            if self.o.pipeline_id:
                r = self.api.upload_pipeline_version(path, self.o.pipeline_id, self.name, desc)
                self._need(r, "upload the pipeline version")
                self.pipeline_id = self.o.pipeline_id
                self.version_id = r.body.get("pipeline_version_id", "")
            else:
                r = self.api.upload_pipeline(path, self.name, desc)
                self._need(r, "upload the pipeline")
                self.pipeline_id, self.new_pipeline = r.body.get("pipeline_id", ""), True
        if not self.version_id:
            r = self.api.list_pipeline_versions(self.pipeline_id)
            self._need(r, "find the uploaded pipeline's version")
            versions = r.body.get("pipeline_versions") or []
            self.version_id = versions[0].get("pipeline_version_id", "") if versions else ""
        r = self.api.create_experiment(self.name, desc)
        self._need(r, "create the experiment")
        self.experiment_id = r.body.get("experiment_id", "")

    def _need(self, reply, what: str) -> None:
        if reply.ok:
            return
        tries = f" after {reply.call.attempt} attempts" if reply.call.attempt > 1 else ""
        raise KfpApiError(
            f"{self.api.host}: could not {what} ({reply.call.error}{tries}); the benchmark "
            f"{self.bid} stops here and cleans up what it created"
        )

    def adopt(self, handle) -> None:
        """Take the ids of what an earlier ``setup`` (another process's) created."""
        self.pipeline_id, self.version_id = handle.pipeline_id, handle.version_id
        self.new_pipeline, self.experiment_id = handle.new_pipeline, handle.experiment_id

    def start_creates(self) -> list:
        """Submit the ``num_runs`` creates to ``create_concurrency`` threads; their futures."""
        self.pool = ThreadPoolExecutor(self.o.create_concurrency, thread_name_prefix="create")
        futures = [self.pool.submit(self.create, i) for i in range(self.o.num_runs)]
        self.pool.shutdown(wait=False)
        return futures

    def poll_until(self, deadline: float, futures: list) -> None:
        """Poll rounds until the creates are done and every run is final, or the deadline (on
        ``time.monotonic``) passes and ``give_up`` ends it."""
        rng = random.Random()
        while True:
            pending = [f for f in futures if not f.done()]
            if not pending:
                self.creates_done.set()
            self.poll_round(rng)
            self.on_progress("polling", len(self.created), len(self.final), self.o.num_runs)
            if self.creates_done.is_set() and self._all_final() and self._all_known():
                return
            if time.monotonic() >= deadline:
                self.give_up(futures)
                return
            jitter = self.o.poll_jitter
            pause = self.o.poll_interval * (1 + rng.uniform(-jitter, jitter))
            pause = min(pause, max(deadline - time.monotonic(), 0.0))
            if pending:  # wake early when the last create returns: no idle wait at the end
                wait(pending, timeout=pause)
            else:
                time.sleep(pause)

    def create(self, i: int) -> str:
        """Create run number ``i`` of this benchmark; its id, or "" if no run was answered
        (it may exist all the same: a LIST by name finds it)."""
        body = {
            "display_name": f"{self.name}-{i:05d}",
            "description": f"kfp-bench benchmark {self.bid}, run {i}",
            "experiment_id": self.experiment_id,
            "pipeline_version_reference": {
                "pipeline_id": self.pipeline_id,
                "pipeline_version_id": self.version_id,
            },
            "runtime_config": {"parameters": self.params},
        }
        r = self.api.create_run(body)
        with self.lock:
            if r.ok and r.body.get("run_id"):
                self.created.add(r.body["run_id"])
                self.last.setdefault(r.body["run_id"], r.body)
                if not r.adopted:  # the server stamped created_at while this call was out
                    call = (r.call.start, r.call.start + r.call.duration)
                    self.seen.setdefault(r.body["run_id"], convert.Sightings()).created = call
                return r.body["run_id"]
            self.create_errors += 1
            return ""

    def _all_final(self) -> bool:
        with self.lock:
            return all(rid in self.final or rid in self.left for rid in self.last)

    def _all_known(self) -> bool:
        """Whether every run the server may hold is known: every create answered with its run,
        or a LIST was read whole after the last create returned (a failed create may have made
        its run; with none known, ``_all_final`` alone would be true at once)."""
        return self.create_errors == 0 or self.listed_after_creates

    def poll_round(self, rng: random.Random) -> None:
        """One LIST of the experiment's runs, page by page, plus the sampled GETs."""
        self.round += 1
        if not self.list_ours(self.round):
            return  # counted as an error; the next round tries again
        with self.lock:
            ids = list(self.last)
        for rid in rng.sample(ids, min(self.o.get_sample, len(ids))):
            self.api.get_run(rid, poll_round=self.round)

    def list_ours(self, poll_round: int = 0) -> bool:
        """LIST the experiment's runs and take in this benchmark's, by name: runs whose create
        failed but which the server made are found here. False if a page could not be read."""
        token = ""
        whole = self.creates_done.is_set()  # this LIST began after every create returned
        while True:
            r = self.api.list_runs(self.experiment_id, token, poll_round=poll_round)
            if not r.ok:
                return False
            start, end = r.call.start, r.call.start + r.call.duration
            for run in r.body.get("runs") or ():
                if not self._ours(run):
                    continue
                rid = run["run_id"]
                with self.lock:
                    self.last[rid] = run
                    done = rid in self.final
                    if not done:
                        seen = self.seen.setdefault(rid, convert.Sightings())
                        seen.saw(convert.state_of(run), start, end)
                if not done and convert.is_terminal(run):
                    self._finalize(run)
            token = r.body.get("next_page_token") or ""
            if not token:
                self.listed_after_creates |= whole
                return True

    def _finalize(self, run: dict, error: str = "") -> None:
        if self.o.task_details == "get" and not convert.tasks_of(run) and convert.is_terminal(run):
            r = self.api.get_run(run["run_id"])
            if r.ok:
                run = r.body
        rid = run.get("run_id") or ""
        fate = self.fate.get(rid, "")
        note = "" if fate == "finished-first" else error or (self.note if fate else "")
        rec = convert.run_record(run, error=note, seen=self.seen.get(rid), at_timeout=fate)
        with self.lock:
            if rec.run_id in self.final:
                return
            self.final[rec.run_id] = rec
        self.sinks.run(rec)

    def give_up(self, futures) -> None:
        """Past the timeout: stop creating; terminate or leave what is unfinished."""
        for f in futures:
            f.cancel()
        wait(futures)  # creates already sent finish (within --request-timeout): their runs count
        self.creates_done.set()
        self.sinks.stats.flags.append("timeout")
        with self.lock:
            open_ids = [rid for rid in self.last if rid not in self.final]
        how = "terminated" if self.o.on_timeout == "terminate" else "left running"
        self.note = f"gave up after the {self.o.timeout:g}s timeout ({how})"
        if self.o.on_timeout == "terminate":
            self.terminate(open_ids)
            self.poll_round(random.Random())  # to record the state termination led to
        else:
            self.left.update(open_ids)
            self.fate.update(dict.fromkeys(open_ids, "left-running"))
        with self.lock:
            still_open = [self.last[rid] for rid in open_ids if rid not in self.final]
        for run in still_open:
            self._finalize(run)

    def terminate(self, ids: list[str]) -> None:
        """Terminate runs ``ids`` and note each one's fate. KFP refuses (400) to terminate a run
        that finished since the last poll; ``KfpApi.terminate_run`` then GETs it, and it is
        recorded at once with that real final state."""
        for rid, r in zip(ids, self._each(self.api.terminate_run, ids), strict=True):
            # adopted: an attempt failed, and the GET before its retry found the run stopped;
            # CANCELING or CANCELED then is most likely that attempt's doing
            ours = r.adopted and convert.state_of(r.body) in ("CANCELING", "CANCELED")
            if not (r.finished or r.adopted) or ours:
                self.fate[rid] = "terminated" if r.ok else "terminate-failed"
                continue
            self.fate[rid] = "finished-first"
            with self.lock:
                self.last[rid] = r.body
            if convert.is_terminal(r.body):
                self._finalize(r.body)

    def finish(self, clean: bool = True) -> None:
        """Record every run not yet final, flag what was not done, then clean up (unless asked
        to keep, or ``clean`` is false: the meta-pipeline's exit handler sweeps instead)."""
        if self.experiment_id and (self.interrupted or len(self.created) < self.o.num_runs):
            # Some creates failed or were cut short: one more LIST finds the runs the server
            # made after the last poll round or without answering, so they are cleaned up too.
            self.list_ours()
        with self.lock:
            open_ids = [rid for rid in self.last if rid not in self.final]
        note = "interrupted before it finished" if self.interrupted else "not final at the end"
        for rid in open_ids:
            self._finalize(self.last[rid], error=self.note or note)
        flags = self.sinks.stats.flags
        # Fewer runs than asked (kfp_bench.outcome); not after a Ctrl-C (flagged "interrupted")
        # nor before any create (a KfpApiError)
        if not self.interrupted and self.experiment_id:
            if not self.last:
                flags.append("no-runs")
            elif len(self.last) < self.o.num_runs and self.create_errors:
                flags.append("create-failed")
        if self.o.keep:
            self.cleanup = {"kept": True}
        elif not clean:
            self.cleanup = {"deferred": f"kfp-bench cleanup --benchmark-id {self.bid}"}
        else:
            self.clean()
        self.sinks.stats.cleanup = self.cleanup

    def clean(self) -> None:
        """Delete the runs, then, once a LIST shows the experiment empty, the pipeline version,
        the pipeline and the experiment (KFP's DeleteExperiment leaves an experiment's runs in
        place: backend/src/apiserver/resource/resource_manager.go, DeleteExperiment, at
        7b70c7b95f). What may remain is named in ``cleanup["left"]`` and flagged."""
        with self.lock:
            todo = [rid for rid in self.last if rid not in self.left]
        deleted, failed = self._delete_runs(todo)
        remaining = self._experiment_runs()
        known = self.left | failed  # known, and still there
        late = [r for r in remaining or () if self._ours(r) and r["run_id"] not in known]
        if late:  # made after the last LIST (a create answered late): measured, then deleted
            for run in late:
                with self.lock:
                    self.last.setdefault(run["run_id"], run)
                self._finalize(run, error="found only at the cleanup")
            more, more_failed = self._delete_runs([r["run_id"] for r in late])
            deleted, failed = deleted | more, failed | more_failed
            remaining = self._experiment_runs()
        c = self.cleanup
        c["runs_deleted"], c["runs_failed"] = len(deleted), len(failed)
        left = []
        if self.left:
            left.append(f"{len(self.left)} runs left running (--on-timeout leave)")
        if failed:
            left.append(f"{len(failed)} runs whose delete failed")
        if remaining is None and self.create_errors:
            # Failed creates may have made runs that no LIST has shown: keep their experiment.
            self.sinks.stats.flags.append("list-failed")
            left.append("runs made by failed creates, if any (the LIST failed)")
        elif remaining:
            others = [r for r in remaining if r.get("run_id") not in self.left | failed]
            if others:
                left.append(f"{len(others)} other runs in the experiment")
        if failed:
            self.sinks.stats.flags.append("cleanup-failed")
        if left:
            c["left"] = [*left, "experiment", "pipeline"]
            self.sinks.stats.flags.append("left-behind")
            return
        self._delete_containers()

    def _ours(self, run: dict) -> bool:
        name = run.get("display_name") or ""
        return bool(run.get("run_id")) and name.startswith(self.name + "-")

    def _delete_runs(self, ids: list[str]) -> tuple[set[str], set[str]]:
        """Delete runs ``ids``; (the ids deleted, the ids whose delete failed)."""
        results = self._each(self.api.delete_run, ids)
        deleted = {rid for rid, r in zip(ids, results, strict=True) if r.ok}
        return deleted, set(ids) - deleted

    def _experiment_runs(self) -> list[dict] | None:
        """Every run still in the experiment (anyone's); None if a page failed."""
        return self.api.experiment_runs(self.experiment_id) if self.experiment_id else []

    def _delete_containers(self) -> None:
        """The version, the pipeline (versions first: KFP refuses a pipeline that has them) and
        the experiment; a delete that failed is named in ``cleanup["left"]``."""
        c, left = self.cleanup, []
        if self.version_id:
            r = self.api.delete_pipeline_version(self.pipeline_id, self.version_id)
            c["pipeline_version_deleted"] = r.ok
        if self.new_pipeline and self.pipeline_id:
            r = self.api.delete_pipeline(self.pipeline_id)
            c["pipeline_deleted"] = r.ok
            if r.ok and self.version_id:  # its versions went with it (cascade)
                c["pipeline_version_deleted"] = True
            left += [] if r.ok else [f"pipeline {self.pipeline_id}"]
        if self.version_id and not c["pipeline_version_deleted"]:
            left.append(f"pipeline version {self.version_id}")
        if self.experiment_id:
            r = self.api.delete_experiment(self.experiment_id)
            c["experiment_deleted"] = r.ok
            left += [] if r.ok else [f"experiment {self.experiment_id}"]
        if left:
            c["left"] = left
            self.sinks.stats.flags += ["cleanup-failed", "left-behind"]

    def _each(self, call, ids: list[str]) -> list:
        """``call(id)`` for each id, ``create_concurrency`` at a time."""
        if not ids:
            return []
        with ThreadPoolExecutor(self.o.create_concurrency, thread_name_prefix="each") as pool:
            return list(pool.map(call, ids))

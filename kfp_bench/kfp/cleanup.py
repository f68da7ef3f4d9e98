"""Sweep what kfp-bench left on a KFP server: one benchmark's resources, or all orphans by age.

Only what kfp-bench made, known by its name (``kfp-bench-<id>``...) and by the description the
driver writes; a user's pipeline named "kfp-bench-..." is left alone. A benchmark given
``--pipeline-id`` made only versions, found in every other pipeline. The order and rules
(recurring runs, runs by name, experiments once empty, versions before pipelines) are in
docs/failures.md; what is not done is in ``failed``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from kfp_bench.kfp import convert
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.options import NAME_PREFIX, CleanupOptions
from kfp_bench.kfp.start_mark import KINDS as MARK_KINDS
from kfp_bench.records import ApiCall

_OWN_DESC = "Created by kfp-bench"
_RUN_DESC = "kfp-bench benchmark"


def sweep(opts: CleanupOptions, *, on_call: Callable[[ApiCall], None] | None = None) -> dict:
    """Delete what ``opts`` selects; return what was found and deleted.

    The report: ``{"recurring_runs": [...], "experiments": [...], "pipelines": [...],
    "pipeline_versions": [...], "runs": n, "deleted": {...}, "failed": [...], "dry_run": bool}``;
    every API call also goes to ``on_call``.
    """
    opts.validate()
    api = KfpApi.of(opts, opts.concurrency + 2, on_call)
    try:
        api.preflight()
        return _Sweep(opts, api).run()
    finally:
        api.close()


class _Sweep:
    def __init__(self, opts: CleanupOptions, api: KfpApi):
        self.o, self.api = opts, api
        self.cutoff = time.time() - opts.older_than if opts.older_than else None
        self.report = {
            "recurring_runs": [],
            "experiments": [],
            "pipelines": [],
            "pipeline_versions": [],  # kfp-bench's versions in pipelines not its own
            "runs": 0,
            "deleted": dict.fromkeys(
                ("recurring_runs", "runs", "experiments", "pipeline_versions", "pipelines"), 0
            ),
            "failed": [],
            "dry_run": opts.dry_run,
        }
        self.found_by_name: set[str] = set()
        # A run is kfp-bench-<id>-NNNNN: the id is all but the last part of the name.
        self.name_part = NAME_PREFIX + (opts.benchmark_id + "-" if opts.benchmark_id else "")

    def selected(self, item: dict, name_key: str = "display_name") -> bool:
        name = item.get(name_key) or item.get("display_name") or ""
        own = name.startswith(NAME_PREFIX) and self._described(item, _OWN_DESC)
        return own and (not self.o.benchmark_id or self._own_name(name))

    def _own_name(self, name: str) -> bool:
        """``kfp-bench-<id>``, or a worker's start mark ``kfp-bench-<id>-<kind>-<n>``
        (``kfp_bench.kfp.start_mark``)."""
        own = NAME_PREFIX + self.o.benchmark_id
        if name == own:
            return True
        head, _, number = name.rpartition("-")
        return number.isdigit() and head in (f"{own}-{kind}" for kind in MARK_KINDS)

    def _described(self, item: dict, prefix: str) -> bool:
        """Described as kfp-bench describes what it creates, and old enough to sweep."""
        if not (item.get("description") or "").startswith(prefix):
            return False
        if self.cutoff is None:
            return True
        created = convert.timestamp(item.get("created_at"))
        return created is not None and created <= self.cutoff

    def run_selected(self, run: dict) -> bool:
        """A run of a selected benchmark: ``kfp-bench-<id>-NNNNN``, described by the driver."""
        name = run.get("display_name") or ""
        head, _, number = name.rpartition("-")
        if not (head + "-").startswith(self.name_part) or not number.isdigit():
            return False
        if self.o.benchmark_id and head != NAME_PREFIX + self.o.benchmark_id:
            return False
        return self._described(run, _RUN_DESC)

    def run(self) -> dict:
        # Recurring runs first (they would make more runs), then runs wherever they are (an
        # experiment deleted without its runs leaves them), then the experiments, emptied.
        self._recurring_runs()
        self._runs_by_name()
        for exp in self._pages(self.api.list_experiments, "experiments"):
            if self.selected(exp):
                self._experiment(exp)
        pipes = {p.get("pipeline_id"): p for p in self._pages(self.api.list_pipelines, "pipelines")}
        if self.api.namespace:  # a single-user server ignores namespaces: the same ones again
            shared = self._pages(lambda t: self.api.list_pipelines(t, shared=True), "pipelines")
            pipes.update((p.get("pipeline_id"), p) for p in shared)
        for pipe in pipes.values():
            if self.selected(pipe):
                self._pipeline(pipe)
            else:
                self._versions_in(pipe)
        return self.report

    def _pages(self, list_call, key: str):
        """Every item of a LIST, page by page; a page that fails ends it, recorded in
        ``failed``."""
        return self.api.pages(list_call, key, self.report["failed"])

    def _recurring_runs(self) -> None:
        listed = self._pages(
            lambda t: self.api.list_recurring_runs(self.name_part.rstrip("-"), t),
            "recurringRuns",
        )
        for job in [j for j in listed if self._job_selected(j)]:
            self.report["recurring_runs"].append(job.get("display_name"))
            if not self.o.dry_run:
                r = self.api.delete_recurring_run(job.get("recurring_run_id"))
                self._delete(r, "recurring_runs")

    def _job_selected(self, job: dict) -> bool:
        """A recurring run named for a selected benchmark (``kfp-bench-<id>``, or that and a
        suffix) and described as kfp-bench describes what it creates."""
        name = job.get("display_name") or ""
        if not (name + "-").startswith(self.name_part):
            return False
        return self._described(job, _OWN_DESC)

    def _runs_by_name(self) -> None:
        listed = self._pages(lambda t: self.api.list_runs_named(self.name_part, t), "runs")
        runs = [r["run_id"] for r in listed if self.run_selected(r)]
        self.found_by_name = set(runs)
        self.report["runs"] += len(runs)
        if not self.o.dry_run:
            self._delete_runs(runs)

    def _delete_runs(self, ids: list[str]) -> int:
        """Delete runs ``ids``; how many deletes failed."""
        with ThreadPoolExecutor(self.o.concurrency) as pool:
            results = list(pool.map(self.api.delete_run, ids))
        failed = [r for r in results if not r.ok]
        self.report["deleted"]["runs"] += len(results) - len(failed)
        self.report["failed"] += [f"delete_run: {r.call.error}" for r in failed[:5]]
        return len(failed)

    def _experiment(self, exp: dict) -> None:
        name, eid = exp.get("display_name"), exp.get("experiment_id")
        self.report["experiments"].append(name)
        runs = self.api.experiment_runs(eid)
        mine = [r["run_id"] for r in runs or () if self.run_selected(r)]
        self.report["runs"] += len(set(mine) - self.found_by_name)  # a dry run lists them twice
        if self.o.dry_run:
            return
        failed = self._delete_runs(mine) if mine else 0
        # Deleted only once a LIST shows it empty: KFP's DeleteExperiment leaves the runs.
        left = self.api.experiment_runs(eid) if runs is not None else None
        if left is None or left:
            why = (
                "its runs could not be listed"
                if left is None
                else (f"{len(left)} runs remain ({failed} not deleted, the others not ours)")
            )
            self.report["failed"].append(f"kept experiment {name}: {why}")
            return
        self._delete(self.api.delete_experiment(eid), "experiments")

    def _pipeline(self, pipe: dict) -> None:
        name, pid = pipe.get("display_name"), pipe.get("pipeline_id")
        self.report["pipelines"].append(name)
        if self.o.dry_run:
            return
        listed = self._pages(lambda t: self.api.list_pipeline_versions(pid, t), "pipeline_versions")
        versions = list(listed)
        kept = []
        for v in versions:
            r = self.api.delete_pipeline_version(pid, v.get("pipeline_version_id"))
            if r.ok:
                self.report["deleted"]["pipeline_versions"] += 1
            else:
                kept.append(r)
        r = self.api.delete_pipeline(pid)  # cascade: the versions left go with it
        self._delete(r, "pipelines")
        if r.ok:
            self.report["deleted"]["pipeline_versions"] += len(kept)
        else:
            self.report["failed"] += [f"{k.call.operation}: {k.call.error}" for k in kept]

    def _versions_in(self, pipe: dict) -> None:
        """Delete the versions a benchmark uploaded into someone else's pipeline."""
        pid = pipe.get("pipeline_id")
        # The server narrows the list to kfp-bench's names; ``selected`` still decides.
        name = NAME_PREFIX + self.o.benchmark_id if self.o.benchmark_id else NAME_PREFIX
        op = "EQUALS" if self.o.benchmark_id else "IS_SUBSTRING"
        pred = {"key": "name", "operation": op, "string_value": name}
        query = json.dumps({"predicates": [pred]})
        versions = self._pages(
            lambda token: self.api.list_pipeline_versions(pid, token, query), "pipeline_versions"
        )
        for v in [v for v in versions if self.selected(v, "name")]:
            self.report["pipeline_versions"].append(f"{pipe.get('display_name')}/{v.get('name')}")
            if not self.o.dry_run:
                r = self.api.delete_pipeline_version(pid, v.get("pipeline_version_id"))
                self._delete(r, "pipeline_versions")

    def _delete(self, reply, kind: str) -> None:
        if reply.ok:
            self.report["deleted"][kind] += 1
        else:
            self.report["failed"].append(f"{reply.call.operation}: {reply.call.error}")

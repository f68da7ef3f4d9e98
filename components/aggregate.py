"""Merge the load workers' results and the runs benchmark's into one results directory."""

from kfp import dsl
from kfp.dsl import Dataset, Input, Output
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("stats"),
    embedded_artifact_path=engine("stats", "kserve/kube.py", "kserve/watch.py", "results.py"),
)
def aggregate(
    runs: Input[Dataset],
    loads: Input[list[Dataset]],
    sweep: Input[Dataset],
    replicas: Input[Dataset],
    load_workers: int,
    run_load: bool,
    results: Output[Dataset],
):
    """Write a results directory (kfp_bench.results): the runs summary and records, and the
    workers' load histograms merged. A worker whose result is missing is named in
    load.workers.missing, never silently dropped.

    Args:
        runs: the runs step's directory (empty when the runs benchmark was switched off).
        loads: each load worker's result.
        sweep: the rate sweep's rows and knee ({"skipped": true} when it was off).
        replicas: the replica watcher's samples ({"skipped": true} when nothing was watched),
            joined with the load's per-second series into summary.json's replicas rows.
        load_workers: how many load workers were started.
        run_load: whether the load ran.
        results: the results directory.
    """
    import json
    import os
    import shutil

    from kfp_bench.failpoint import fail_point
    from kfp_bench.results import write_results
    from kfp_bench.stats import store

    os.makedirs(results.path, exist_ok=True)
    summary = None
    if os.path.exists(os.path.join(runs.path, "runs_summary.json")):
        with open(os.path.join(runs.path, "runs_summary.json")) as f:
            summary = json.load(f)
        for name in ("runs.jsonl", "api_calls.jsonl"):
            shutil.copyfile(os.path.join(runs.path, name), os.path.join(results.path, name))
    merged, missing = None, []
    for i in range(load_workers if run_load else 0):
        part = None
        if i < len(loads):
            try:
                part = store.load(loads[i].path)
            except Exception as exc:  # a worker that died mid-write is reported below
                print(f"load worker {i}: unreadable result ({exc})")
        if part is None:
            missing.append(i)
        elif merged is None:
            merged = part
        else:
            merged.merge(part)
    if merged is not None and missing:
        merged.workers["expected"] += len(missing)
        merged.workers["missing"] += missing
        merged.flag("missing-workers")
    if missing:
        print(f"load workers missing from the result: {missing}")
    extra = {}
    with open(sweep.path) as f:
        doc = json.load(f)
    if not doc.get("skipped"):
        extra.update(doc)
    with open(replicas.path) as f:
        doc = json.load(f)
    if not doc.get("skipped"):
        from kfp_bench.kserve.watch import replica_rows, sweep_max_replicas

        series = merged.series.rows() if merged is not None else []
        extra.update(replica_rows(doc, series))
        if "sweep" in extra:
            extra["sweep"] = sweep_max_replicas(extra["sweep"], doc)
    write_results(results.path, runs_summary=summary, load=merged, extra=extra)
    print(f"results: {sorted(os.listdir(results.path))}")
    fail_point("aggregate")

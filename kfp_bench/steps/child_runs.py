"""The runs branch's steps: stage, upload, spawn and poll the child runs, over the engine's three
phases (``kfp_bench.kfp.phases``), each extending the directory of records the one before made.
With run_benchmark off each only says so.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil

from kfp_bench.errors import BenchError
from kfp_bench.failpoint import fail_point
from kfp_bench.steps.outputs import ERROR_FILE, FILL_FILE, OFF_RUNS, failed, write_json
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.runs_params import (
    child_params,
    fill_options,
    manifest_source,
    runs_options,
)

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).


def stage_manifest(p: BenchParams, out: str) -> dict:
    """Resolve, check and keep the child manifest at ``out``; return its metadata."""
    if not p.run_benchmark:
        print(OFF_RUNS)
        open(out, "w").close()
        return {}
    from kfp_bench.kfp.manifest import load_manifest

    m = load_manifest(manifest_source(p))
    m.check_params(child_params(p))
    with open(out, "wb") as f:
        f.write(m.data)
    print(f"manifest {m.name!r} from {p.pipeline}: {len(m.data)} bytes")
    fail_point("stage_manifest")
    return {"pipeline": m.name, "source": p.pipeline, "bytes": len(m.data)}


def upload_manifest(p: BenchParams, manifest: str, out: str) -> str:
    """Upload the staged manifest and create the experiment; the handle as JSON ("" if off)."""

    from kfp_bench.kfp.phases import upload

    os.makedirs(out, exist_ok=True)
    if not p.run_benchmark:
        print(OFF_RUNS)
        return ""
    opts = dataclasses.replace(runs_options(p, p.benchmark_id), pipeline=manifest)
    handle = upload(opts, out_dir=out)
    print(f"pipeline {handle.pipeline_id}, experiment {handle.experiment_id}")
    fail_point("upload_manifest")
    return handle.to_json()


def spawn_runs(p: BenchParams, handle: str, uploaded: str, out: str) -> int:
    """Create the child runs; return how many were created."""
    shutil.copytree(uploaded, out, dirs_exist_ok=True)
    if not handle:
        print(OFF_RUNS)
        return 0
    from kfp_bench.kfp.phases import BenchmarkHandle, spawn

    h = BenchmarkHandle.from_json(handle)
    if p.fill_runs:
        fill(p, h.benchmark_id, out)
    ids = spawn(h, runs_options(p, h.benchmark_id), out)
    print(f"created {len(ids)} of {p.num_runs} runs")
    fail_point("spawn_runs")
    return len(ids)


#: The scrape interval the pipeline's fill assumes of the cluster's Prometheus (the Prometheus
#: Operator's and kube-prometheus-stack's default): the quiet before and after each probe.
FILL_SCRAPE_INTERVAL_S = 30.0


def fill(
    p: BenchParams, benchmark_id: str, out: str, scrape_interval_s: float = FILL_SCRAPE_INTERVAL_S
) -> None:
    """Fill the server with fill_runs runs before the benchmark's, probing the UI's calls on
    the way (``kfp_bench.kfp.fill``); the ``fill`` section goes to FILL_FILE, which the next
    steps carry to the results. The fill is left for the exit handler's sweep, as the
    benchmark's runs are; a fill that fails is an error in that section, not of the step.
    With a metrics profile, each probe is framed by ``scrape_interval_s`` without calls."""
    from kfp_bench.kfp.fill import Filler, fill_and_probe
    from kfp_bench.kfp.manifest import load_manifest
    from kfp_bench.steps import server_metrics

    opts = runs_options(p, benchmark_id)
    filler = Filler(opts, fill_options(p), load_manifest(manifest_source(p)), child_params(p))
    # With a metrics profile: the API server's and MySQL's own figures at each probe
    # (docs/full-database.md); each probe framed by a scrape interval on each side.
    collector = server_metrics.collector(p, server_metrics.COLLECTING_WORKER)
    if collector is not None:
        collector.step_s = scrape_interval_s
    try:
        fill_and_probe(filler, collector)
        doc = filler.summary()
    except (BenchError, OSError) as exc:
        doc = {**filler.summary(), "error": failed("spawn_runs (fill)", exc)}
    finally:
        filler.close()
    doc["cleanup"] = {"deferred": f"kfp-bench cleanup --benchmark-id {filler.fid}"}
    write_json(os.path.join(out, FILL_FILE), doc)
    print(f"filled {doc['filled']} of {p.fill_runs} runs ({filler.fid})")


def poll_runs(p: BenchParams, handle: str, spawned: str, out: str) -> None:
    """Poll the child runs until final and write runs_summary.json beside the records."""
    os.makedirs(out, exist_ok=True)
    if not handle:
        print(OFF_RUNS)
        return
    from kfp_bench.kfp.phases import BenchmarkHandle, poll

    shutil.copytree(spawned, out, dirs_exist_ok=True)
    h = BenchmarkHandle.from_json(handle)
    try:
        doc = poll(h, runs_options(p, h.benchmark_id), out).summary()
    except (BenchError, OSError) as exc:  # the records written so far stay in ``out``
        write_json(os.path.join(out, ERROR_FILE), {"error": failed("poll_runs", exc)})
    else:
        with open(os.path.join(out, "runs_summary.json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
        print(json.dumps(doc.get("runs", {}), indent=1))
    fail_point("poll_runs")

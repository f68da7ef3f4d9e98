"""The driver needs no kfp-server-api: a pipeline step's pod installs the ``kfp`` extra, and that
package is an sdist every pod would build at start. A child process with ``kfp_server_api``
made unimportable (``sys.modules[name] = None``, so ``import`` raises ImportError) imports the
whole of ``kfp_bench.kfp`` and makes each kind of call against the local KFP API server: the
multipart upload, an experiment, a run, LISTs and the deletes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.kfp.conftest import HELLO

CHILD = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys

    sys.modules["kfp_server_api"] = None  # any import of it now raises ImportError
    import kfp_bench.kfp

    for mod in pkgutil.iter_modules(kfp_bench.kfp.__path__):
        importlib.import_module(f"kfp_bench.kfp.{mod.name}")
    from kfp_bench.kfp.api import Backoff, KfpApi

    url, pipeline, name = sys.argv[1:4]
    calls = []
    api = KfpApi(url, on_call=calls.append, retry=Backoff(retries=0))

    def ok(reply):
        assert reply.ok, reply.call
        return reply.body

    pipe = ok(api.upload_pipeline(pipeline, name, "kfp-bench test: no kfp-server-api"))
    pid = pipe["pipeline_id"]
    version = ok(api.upload_pipeline_version(pipeline, pid, name + "-v2", "second version"))
    vid = version["pipeline_version_id"]
    exp = ok(api.create_experiment(name, "kfp-bench test: no kfp-server-api"))
    eid = exp["experiment_id"]
    run = ok(api.create_run({
        "display_name": name + "-00000",
        "experiment_id": eid,
        "pipeline_version_reference": {"pipeline_id": pid, "pipeline_version_id": vid},
        "runtime_config": {"parameters": {}},
    }))
    listed = ok(api.list_runs(eid))
    got = ok(api.get_run(run["run_id"]))
    versions = ok(api.list_pipeline_versions(pid))
    pipelines = ok(api.list_pipelines())
    experiments = ok(api.list_experiments())
    for reply in (api.delete_run(run["run_id"]), api.delete_experiment(eid),
                  api.delete_pipeline_version(pid, vid), api.delete_pipeline(pid)):
        ok(reply)
    api.close()
    print(json.dumps({
        "blocked": sys.modules["kfp_server_api"] is None,
        "pipeline": pipe["display_name"],
        "runs": [r["display_name"] for r in listed["runs"]],
        "run": got["display_name"],
        "versions": sorted(v["display_name"] for v in versions["pipeline_versions"]),
        "pipelines": [p["display_name"] for p in pipelines.get("pipelines") or ()],
        "experiments": [e["display_name"] for e in experiments.get("experiments") or ()],
        "calls": [(c.operation, c.status, c.outcome, c.attempt) for c in calls],
    }))
    """
)


@pytest.fixture(scope="module")
def server():
    with start_kfp_server(simulate="all:fixed(0.2)") as s:
        yield s


def test_upload_create_list_delete_without_kfp_server_api(server):
    name = "kfp-bench-no-server-api"
    r = subprocess.run(
        [sys.executable, "-c", CHILD, server.url, str(HELLO), name],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout.splitlines()[-1])
    assert doc["blocked"] is True
    assert doc["pipeline"] == name and name in doc["pipelines"] and name in doc["experiments"]
    assert doc["runs"] == [name + "-00000"] and doc["run"] == name + "-00000"
    assert doc["versions"] == sorted([name, name + "-v2"])
    operations = [
        "upload_pipeline", "upload_pipeline_version", "create_experiment", "create_run",
        "list_runs", "get_run", "list_pipeline_versions", "list_pipelines", "list_experiments",
        "delete_run", "delete_experiment", "delete_pipeline_version", "delete_pipeline",
    ]  # fmt: skip
    assert [c[0] for c in doc["calls"]] == operations
    assert all(outcome == "ok" and attempt == 1 for _, _, outcome, attempt in doc["calls"])
    assert all(200 <= status < 300 for _, status, _, _ in doc["calls"])

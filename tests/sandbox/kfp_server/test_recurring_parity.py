"""A recurring run and the runs it makes, as KFP's API server and ScheduledWorkflow controller
write them (kubeflow/pipelines 7b70c7b95f), where the ported Go tests (tests/kfp_api) do not
look: the run's name, index and id, the service account of a pipeline-id-only recurring run,
the deprecated ``pipeline_version_id``, and the ``job_server_*`` metrics. Real local server.
"""

from __future__ import annotations

import re
import time
import uuid

import yaml

from .support import API, PIPELINES, call, unique, upload

SPEC = yaml.safe_load((PIPELINES / "hello_world.yaml").read_text())
#: k8s.io/apimachinery/pkg/util/rand: the alphabet of a generateName suffix
_K8S_RAND = "[bcdfghjklmnpqrstvwxz2456789]"
#: common/util/uuid.go:29 deterministicUUIDNamespace
_RUN_ID_NAMESPACE = uuid.UUID("c2f3a9d4-1e6b-4c8a-9f7d-0b5e3a1c2d4f")


def _fnv32a(text: str) -> int:
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def _create(server, **fields) -> dict:
    body = {"max_concurrency": "10", "mode": "ENABLE", **fields}
    status, job = call(server, "POST", f"{API}/recurringruns", body)
    assert status == 200, job
    return job


def _runs_of(server, job: dict, count: int, timeout: float = 60.0) -> list[dict]:
    end = time.monotonic() + timeout
    while True:
        status, page = call(server, "GET", f"{API}/runs", query={"page_size": 200})
        assert status == 200, page
        jid = job["recurring_run_id"]
        runs = [r for r in page.get("runs", []) if r.get("recurring_run_id") == jid]
        if len(runs) >= count:
            call(server, "POST", f"{API}/recurringruns/{job['recurring_run_id']}:disable")
            return runs
        assert time.monotonic() < end, f"{len(runs)} runs of {count} after {timeout}s"
        time.sleep(0.3)


def _hello_pipeline(server) -> dict:
    status, pipeline = upload(server, "hello_world.yaml", name=unique("hello"))
    assert status == 200, pipeline
    return pipeline


def test_the_runs_are_named_as_the_controller_names_its_workflows(server):
    """The swf is named from the display name (template.go:333-347: lower case, [a-z0-9-] only,
    25 characters, then Kubernetes' 5-character generateName suffix); each workflow, and the run
    reported from it, is ``<swf>-<index>-<fnv32a of "<swf>-<index>">``
    (scheduled_workflow.go:130-140, resource_manager.go:1895), the index counting from 1. The run
    carries no description (resource_manager.go:1892-1909)."""
    start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 4 * 3600 - 100))
    trigger = {"periodic_schedule": {"interval_second": "3600", "start_time": start}}
    job = _create(server, display_name="Hello World! Ä long name, over 25 chars",
                  description="not copied", pipeline_spec=SPEC, trigger=trigger)  # fmt: skip
    runs = _runs_of(server, job, 3)
    indexes = []
    for run in runs:
        pattern = rf"(helloworldlongnameover25c{_K8S_RAND}{{5}})-(\d+)-(\d+)"
        m = re.fullmatch(pattern, run["display_name"])
        assert m, run["display_name"]
        swf, index, digest = m.groups()
        assert int(digest) == _fnv32a(f"{swf}-{index}")
        indexes.append(int(index))
        assert "description" not in run
    assert sorted(indexes) == list(range(1, len(runs) + 1))
    assert len({r["display_name"].rsplit("-", 2)[0] for r in runs}) == 1  # one swf name


def test_a_pipeline_id_only_recurring_run_asks_for_runs_with_a_derived_id(server):
    """With a pipeline id alone the controller calls CreateRun (controller.go:690-708), whose
    run id is uuid5(deterministicUUIDNamespace, "<recurring run id>/<display name>")
    (resource_manager.go:645-652, common/util/uuid.go:29-36); the recurring run keeps the
    service account it was given, none (resource_manager.go:1569-1570: no template)."""
    pipeline = _hello_pipeline(server)
    job = _create(server, display_name=unique("latest"),
                  pipeline_version_reference={"pipeline_id": pipeline["pipeline_id"]})  # fmt: skip
    assert "service_account" not in job and "runtime_config" not in job
    (run,) = _runs_of(server, job, 1)
    name = f"{job['recurring_run_id']}/{run['display_name']}"
    assert run["run_id"] == str(uuid.uuid5(_RUN_ID_NAMESPACE, name))
    assert run["service_account"] == "pipeline-runner"


def test_a_pinned_recurring_run_gets_the_default_service_account(server):
    """template/v2_template.go:172,190 setDefaultServiceAccount, then resource_manager.go:1588;
    no runtime_config when it is empty, no no_catchup when false (api_converter.go:2340-2346,
    proto3 JSON)."""
    job = _create(server, display_name=unique("pinned"), pipeline_spec=SPEC)
    assert job["service_account"] == "pipeline-runner"
    assert "runtime_config" not in job and "no_catchup" not in job
    status, got = call(server, "GET", f"{API}/recurringruns/{job['recurring_run_id']}")
    assert status == 200 and got == job
    job = _create(server, display_name=unique("own"), pipeline_spec=SPEC, service_account="sa1")
    assert job["service_account"] == "sa1"


def test_the_deprecated_pipeline_version_id_alone_is_refused(server):
    """toModelJob reads no top-level pipeline_version_id (api_converter.go:2025-2027); CreateJob
    then has no pipeline id: a plain error (resource_manager.go:1503-1504), so 500 INTERNAL
    (util/error.go:375-397)."""
    pipeline = _hello_pipeline(server)
    status, page = call(server, "GET", f"{API}/pipelines/{pipeline['pipeline_id']}/versions")
    version = page["pipeline_versions"][0]["pipeline_version_id"]
    before = call(server, "GET", f"{API}/recurringruns", query={"page_size": 200})[1]
    body = {"display_name": unique("old"), "max_concurrency": "1", "pipeline_version_id": version}
    status, err = call(server, "POST", f"{API}/recurringruns", body)
    assert status == 500, err
    assert err["code"] == 13
    assert err["message"].startswith(
        "Internal error: Failed to create a recurring run: "
        "Cannot create a job with an empty pipeline ID"
    )
    assert call(server, "GET", f"{API}/recurringruns", query={"page_size": 200})[1] == before


def test_recurring_run_calls_are_counted_under_kfp_job_server_names(server):
    """job_server.go:34-72: job_server_{create,get,list,delete,enable,disable}_requests and the
    gauge job_server_job_count."""
    job = _create(server, display_name=unique("counted"), pipeline_spec=SPEC, mode="DISABLE")
    jid = job["recurring_run_id"]
    call(server, "GET", f"{API}/recurringruns/{jid}")
    call(server, "GET", f"{API}/recurringruns")
    call(server, "POST", f"{API}/recurringruns/{jid}:enable")
    call(server, "POST", f"{API}/recurringruns/{jid}:disable")
    text = call(server, "GET", "/metrics")[1]
    for op in ("create", "get", "list", "enable", "disable"):
        assert re.search(rf"^job_server_{op}_requests [1-9]", text, re.M), op
    assert "recurring_run_server" not in text
    count = int(re.search(r"^job_server_job_count (\d+)", text, re.M).group(1))
    call(server, "DELETE", f"{API}/recurringruns/{jid}")
    text = call(server, "GET", "/metrics")[1]
    assert re.search(r"^job_server_delete_requests [1-9]", text, re.M)
    assert int(re.search(r"^job_server_job_count (\d+)", text, re.M).group(1)) == count - 1

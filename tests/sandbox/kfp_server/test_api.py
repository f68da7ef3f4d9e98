"""The local KFP API over raw HTTP: listing, filters, paging, cascade, errors, and the swagger.

Every answer checked here is also validated against the official v2beta1 swagger's schemas.
"""

from __future__ import annotations

import json

from .support import API, PIPELINES, call, execution, unique, upload, wait_run
from .swagger import assert_valid


def _experiment(server) -> str:
    status, exp = call(server, "POST", f"{API}/experiments", {"display_name": unique("exp")})
    assert status == 200
    assert_valid(exp, "POST", "/apis/v2beta1/experiments")
    return exp["experiment_id"]


def _run(server, experiment_id: str, name: str, spec_file="hello_world.yaml") -> dict:
    import yaml

    spec = yaml.safe_load((PIPELINES / spec_file).read_text())
    body = {"display_name": name, "experiment_id": experiment_id, "pipeline_spec": spec}
    status, run = call(server, "POST", f"{API}/runs", body)
    assert status == 200, run
    assert_valid(run, "POST", "/apis/v2beta1/runs")
    return run


def test_healthz_and_contract_of_each_resource(server):
    status, health = call(server, "GET", f"{API}/healthz")
    assert status == 200
    assert health["tag_name"] and health["commit_sha"]
    # The API server's healthz also answers its release (backend/src/apiserver/main.go,
    # healthzResponse), which the swagger's v2beta1GetHealthzResponse leaves out.
    health = {k: v for k, v in health.items() if k not in ("commit_sha", "tag_name")}
    assert_valid(health, "GET", "/apis/v2beta1/healthz")
    status, pipeline = upload(server, "add_numbers.yaml", unique("add"))
    assert status == 200, pipeline
    assert_valid(pipeline, "POST", "/apis/v2beta1/pipelines/upload")
    pid = pipeline["pipeline_id"]
    status, version = upload(
        server, "add_numbers.yaml", "v2", path="/pipelines/upload_version",
        query={"pipelineid": pid},
    )  # fmt: skip
    assert status == 200, version
    assert_valid(version, "POST", "/apis/v2beta1/pipelines/upload_version")
    status, versions = call(server, "GET", f"{API}/pipelines/{pid}/versions")
    assert_valid(versions, "GET", "/apis/v2beta1/pipelines/{pipeline_id}/versions")
    assert versions["total_size"] == 2
    status, listed = call(server, "GET", f"{API}/pipelines", query={"page_size": 100})
    assert_valid(listed, "GET", "/apis/v2beta1/pipelines")
    exp_id = _experiment(server)
    run = _run(server, exp_id, "contract")
    done = wait_run(server, run["run_id"])
    assert_valid(done, "GET", "/apis/v2beta1/runs/{run_id}")
    assert done["run_details"]["task_details"] and execution(done) == "simulated"
    status, runs = call(server, "GET", f"{API}/runs", query={"experiment_id": exp_id})
    assert_valid(runs, "GET", "/apis/v2beta1/runs")
    status, exps = call(server, "GET", f"{API}/experiments")
    assert_valid(exps, "GET", "/apis/v2beta1/experiments")
    job_body = {
        "display_name": "job",
        "experiment_id": exp_id,
        "pipeline_version_reference": {"pipeline_id": pid},
        "trigger": {"cron_schedule": {"cron": "0 0 * * * *"}},
        "max_concurrency": "2",
        "mode": "DISABLE",
    }
    status, job = call(server, "POST", f"{API}/recurringruns", job_body)
    assert status == 200, job
    assert_valid(job, "POST", "/apis/v2beta1/recurringruns")
    status, jobs = call(server, "GET", f"{API}/recurringruns", query={"experiment_id": exp_id})
    assert_valid(jobs, "GET", "/apis/v2beta1/recurringruns")
    assert jobs["recurringRuns"][0]["status"] == "DISABLED"


def test_list_paging_filter_and_sort(server):
    exp_id = _experiment(server)
    names = [f"run-{i:02d}" for i in range(7)]
    ids = [_run(server, exp_id, n)["run_id"] for n in names]
    seen, token = [], None
    while True:
        query = {"experiment_id": exp_id, "page_size": 3, "sort_by": "display_name desc"}
        if token:
            query["page_token"] = token
        status, page = call(server, "GET", f"{API}/runs", query=query)
        assert status == 200 and page["total_size"] == 7
        seen += [r["display_name"] for r in page["runs"]]
        token = page.get("next_page_token")
        if not token:
            break
    assert seen == sorted(names, reverse=True)
    by_id = {"predicates": [{"operation": "IN", "key": "run_id",
                             "string_values": {"values": ids[:2]}}]}  # fmt: skip
    status, page = call(server, "GET", f"{API}/runs", query={"filter": json.dumps(by_id)})
    assert {r["run_id"] for r in page["runs"]} == set(ids[:2])
    # kfp.Client sends numeric operations and camelCase values
    by_name = {"predicates": [{"operation": 1, "key": "name", "stringValue": "run-03"}]}
    status, page = call(server, "GET", f"{API}/runs", query={"filter": json.dumps(by_name)})
    assert [r["run_id"] for r in page["runs"]] == [ids[3]]
    by_exp = {"predicates": [{"operation": "EQUALS", "key": "experiment_id",
                              "string_value": exp_id}]}  # fmt: skip
    status, page = call(server, "GET", f"{API}/runs", query={"filter": json.dumps(by_exp),
                                                             "page_size": 200})  # fmt: skip
    assert page["total_size"] == 7


def test_bad_input_answers_rpc_status(server):
    cases = [
        ("GET", f"{API}/runs/nope", None, None, 404),
        ("GET", f"{API}/pipelines/nope", None, None, 404),
        ("POST", f"{API}/runs", {"display_name": "x"}, None, 400),
        ("POST", f"{API}/runs", {"pipeline_spec": {"a": 1}, "display_name": "x"}, None, 400),
        ("GET", f"{API}/runs", None, {"filter": "{not json"}, 400),
        ("GET", f"{API}/runs", None, {"sort_by": "nope desc"}, 400),
        ("GET", f"{API}/runs", None, {"page_token": "garbage"}, 400),
        ("POST", f"{API}/recurringruns", {"display_name": "j", "trigger": {}}, None, 400),
    ]
    for method, path, body, query, want in cases:
        status, answer = call(server, method, path, body, query)
        assert status == want, (path, body, query, answer)
        assert set(answer) == {"code", "message", "details"} and answer["message"]
        assert_valid(answer, method, path.replace("/nope", "/{run_id}"), status) if (
            "runs/" in path
        ) else None
    # uploads answer {"error_message", "error_details"} (pipeline_upload_server.go:426-435)
    status, answer = upload(server, "bad.yaml", unique("bad"), data=b"just: [a, list")
    assert status == 400 and "YAML" in answer["error_message"]
    status, answer = upload(server, "bad.yaml", unique("bad"), data=b"kind: Deployment\n")
    assert status == 400 and "PipelineSpec" in answer["error_message"]


def test_delete_pipeline_needs_cascade(server):
    status, pipeline = upload(server, "add_numbers.yaml", unique("add"))
    pid = pipeline["pipeline_id"]
    status, answer = call(server, "DELETE", f"{API}/pipelines/{pid}")
    assert status == 400 and "cascade" in answer["message"]
    status, _ = call(server, "DELETE", f"{API}/pipelines/{pid}", query={"cascade": "true"})
    assert status == 200
    assert call(server, "GET", f"{API}/pipelines/{pid}")[0] == 404
    status, versions = call(server, "GET", f"{API}/pipelines/{pid}/versions")
    assert status == 404
    status, answer = upload(server, "add_numbers.yaml", pipeline["name"])
    assert status == 200  # the name is free again


def test_duplicate_pipeline_name_conflicts(server):
    name = unique("dup")
    assert upload(server, "add_numbers.yaml", name)[0] == 200
    status, answer = upload(server, "add_numbers.yaml", name)
    # pipeline_upload_server.go:186-190: the name is not in the message
    assert status == 409 and answer["error_message"] == (
        "Failed to create a pipeline and a pipeline version"
    )

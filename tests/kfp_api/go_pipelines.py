"""The pipeline helpers of backend/test/v2/api (kubeflow/pipelines 7b70c7b95f) on the wire.

``upload_and_verify`` is pipeline_upload_api_test.go uploadPipelineAndVerify with the test
context it reads (UploadParams, ExpectedPipeline); the list helpers are newListPipelinesParams
and the Go client calls the cases make. Go's zero values stand for keys the server leaves out.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from datetime import datetime

from tests.kfp_api.support import get, ok, upload_file, yaml_docs

#: testutil.GetNamespace() in single-user mode: config.Namespace (backend/test/config/flags.go)
NS = "kubeflow"
#: GetPipeline (testutil/pipeline_utils.go) copies these fields; Go compares the models whole
_PIPELINE_FIELDS = ("display_name", "description", "pipeline_id", "created_at", "namespace",
                    "name", "tags", "error")  # fmt: skip
_ZERO = (None, "", 0, False, {}, [])


def gen_name() -> str:
    """testContext.Pipeline.PipelineGeneratedName: "apitest-" + strconv(time.Now().UnixNano())."""
    return f"apitest-{time.time_ns()}"


def tags_json(tags: dict) -> str:
    """testutil.TagsMapToJSONStringPtr: json.Marshal of a Go map (sorted keys, no spaces)."""
    return json.dumps(tags, sort_keys=True, separators=(",", ":"))


def seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def tags_of(obj: dict) -> dict:
    """A model's Tags map; a left-out key is a nil map (BeEmpty holds, Equal(non-empty) fails)."""
    return obj.get("tags") or {}


def file_docs(path) -> list:
    """server.ReadPipelineFile then the YAML documents: a .zip holds one pipeline file."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as z:
            member = next(n for n in z.namelist() if not n.endswith("/"))
            import yaml

            return [d for d in yaml.safe_load_all(z.read(member)) if d is not None]
    return yaml_docs(path)


def match_spec(actual: dict, path) -> None:
    """matcher.MatchPipelineSpecs against testutil.ParseFileToSpecs(path)."""
    docs = file_docs(path)
    if "platform_spec" in actual:
        assert actual["pipeline_spec"] == docs[0], "Pipeline specs do not match"
        assert actual["platform_spec"] == docs[1], "Platform specs do not match"
    else:
        assert actual == docs[0], "Pipeline specs do not match"


def _field(obj: dict, key: str):
    value = obj.get(key)
    return None if value in _ZERO else value


def upload_and_verify(server, path, name: str, display: str | None = None,
                      description: str | None = None, tags: dict | None = None,
                      expected_tags: dict | None = None) -> dict:  # fmt: skip
    """uploadPipelineAndVerify: upload (name, display name, namespace, and the description and
    tags JSON the case set on UploadParams); the GET model equals the upload's; MatchPipelines
    against ExpectedPipeline; one version, whose spec is the file's."""
    start = int(time.time())  # strfmt.ParseDateTime(time.Now().Format(time.DateTime))
    query = {"name": name, "display_name": display, "namespace": NS, "description": description,
             "tags": None if tags is None else tags_json(tags)}  # fmt: skip
    created = ok(upload_file(server, path, query))
    from_db = ok(get(server, f"/pipelines/{created.get('pipeline_id', '')}"))
    diff = {k: (_field(from_db, k), _field(created, k)) for k in _PIPELINE_FIELDS
            if _field(from_db, k) != _field(created, k)}  # fmt: skip
    assert not diff, f"GetPipeline differs from the upload (db, upload): {diff}"
    assert created.get("pipeline_id"), "Pipeline ID is empty"
    assert seconds(created["created_at"]) >= start, "Pipeline creation time is before test start"
    assert created.get("display_name", "") == (display or name), "Display name not matching"
    assert created.get("description", "") == (description or ""), "Description not matching"
    if expected_tags is not None:
        assert created.get("tags") == expected_tags, "Pipeline Tags maps are not same"
    listed = ok(list_versions(server, created["pipeline_id"]))
    assert listed.get("total_size", 0) == 1, listed.get("total_size")
    assert len(listed.get("pipeline_versions", [])) == 1
    match_spec(listed["pipeline_versions"][0]["pipeline_spec"], path)
    return created


def upload_version(server, path, pipeline_id: str, name: str | None = None,
                   description: str | None = None, tags=None):  # fmt: skip
    """uploadPipelineVersion: (status, body); ``tags`` a map (sent as its JSON) or raw text."""
    raw = tags if isinstance(tags, str) or tags is None else tags_json(tags)
    query = {"pipelineid": pipeline_id, "name": name, "description": description, "tags": raw}
    return upload_file(server, path, query, version=True)


def list_pipelines(server, **query):
    """pipelineClient.List(newListPipelinesParams() + the case's fields)."""
    return get(server, "/pipelines", **{"namespace": NS, "page_size": 100, **query})


def list_versions(server, pipeline_id: str, **query):
    """pipelineClient.ListPipelineVersions(PipelineID + the case's fields)."""
    return get(server, f"/pipelines/{pipeline_id}/versions", **query)


def versions_by_created(server, pipeline_id: str) -> list:
    """testutil.GetSortedPipelineVersionsByCreatedAt(sortBy nil): newest first."""
    versions = ok(list_versions(server, pipeline_id)).get("pipeline_versions", [])
    return sorted(versions, key=lambda v: seconds(v["created_at"]), reverse=True)


def random_string(n: int) -> str:
    """testutil.GetRandomString: letters and digits."""
    import random
    import string

    return "".join(random.choice(string.ascii_letters + string.digits) for _ in range(n))

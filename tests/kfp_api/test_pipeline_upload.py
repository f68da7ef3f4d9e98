"""backend/test/v2/api/pipeline_upload_api_test.go at kubeflow/pipelines 7b70c7b95f, one test
per Ginkgo It (the tag cases are in test_pipeline_upload_tags.py).

``upload_and_verify`` (go_pipelines.py) is the Go helper uploadPipelineAndVerify.
"""

from __future__ import annotations

import time

import pytest

from tests.kfp_api.go_pipelines import NS, gen_name, match_spec, upload_and_verify
from tests.kfp_api.support import (
    ARGS,
    HELLO,
    INVALID,
    UPLOAD_ERR,
    VERSION_ERR,
    failed,
    go_id,
    ok,
    upload_file,
    valid_files,
)


def _name() -> str:
    return gen_name()


@pytest.mark.parametrize("path", valid_files(), ids=go_id)
def test_upload_valid_pipeline(server, path):
    """Verify Pipeline Upload > Upload a valid pipeline and verify pipeline metadata after
    upload > It("Upload %s pipeline"), one per file of test_data/sdk_compiled_pipelines/valid."""
    upload_and_verify(server, path, _name())


def test_upload_hello_world_with_custom_name_and_description(server):
    """It("Upload hello_world.yaml pipeline file with custom name and description")."""
    upload_and_verify(server, HELLO, _name(), description="Some pipeline description")


def test_upload_hello_world_with_custom_name_display_name_and_description(server):
    """It("Upload hello_world.yaml pipeline file with custom name, display name and
    description")."""
    name = _name()
    upload_and_verify(server, HELLO, name, f"Pipeline Display Name - {name} ",
                      "Some pipeline description")  # fmt: skip


def _change_version(server, first, second) -> None:
    """uploadPipelineAndChangePipelineVersion + uploadPipelineVersionAndVerify."""
    created = upload_and_verify(server, first, _name())
    start = int(time.time())
    name = created["display_name"] + "-1"
    q = {"pipelineid": created["pipeline_id"], "name": name,
         "description": "Some changed pipeline description"}  # fmt: skip
    v = ok(upload_file(server, second, q, version=True))
    assert v["pipeline_version_id"]
    from datetime import datetime

    at = datetime.fromisoformat(v["created_at"].replace("Z", "+00:00")).timestamp()
    assert at >= start
    assert v["display_name"] == name
    assert v.get("description", "") == "Some changed pipeline description"
    match_spec(v["pipeline_spec"], second)


def test_upload_version_with_the_same_file(server):
    """Verify Pipeline Upload Version > It("Upload hello_world.yaml pipeline file and upload a
    new version with the same file")."""
    _change_version(server, HELLO, HELLO)


def test_upload_version_with_a_different_file(server):
    """Verify Pipeline Upload Version > It("Upload hello_world.yaml pipeline file and upload a
    new version with the different file arguments_parameters.yaml")."""
    _change_version(server, HELLO, ARGS)


@pytest.mark.parametrize("path", sorted(INVALID.iterdir()), ids=lambda p: p.name)
def test_upload_invalid_pipeline_fails(server, path):
    """Verify Pipeline Upload Failure > It("Upload a %s pipeline and verify the failure"), one
    per file of test_data/sdk_compiled_pipelines/invalid."""
    assert UPLOAD_ERR in failed(upload_file(server, path, {"name": _name()}), UPLOAD_ERR)


def test_upload_a_pipeline_twice_fails(server):
    """It("Upload a pipeline twice and verify that it should fail the second time")."""
    created = upload_and_verify(server, HELLO, _name())
    again = upload_file(server, HELLO, {"name": created["name"], "namespace": NS})  # same params
    assert UPLOAD_ERR in failed(again, UPLOAD_ERR)


def test_upload_version_named_as_the_original_fails(server):
    """Verify Pipeline Upload Version Failure > It("Change hello_world.yaml pipeline's name to
    be same as original version")."""
    created = upload_and_verify(server, HELLO, _name())
    q = {"pipelineid": created["pipeline_id"], "name": created["display_name"]}
    assert VERSION_ERR in failed(upload_file(server, HELLO, q, version=True), VERSION_ERR)


def test_upload_version_with_a_fake_pipeline_id_fails(server):
    """It("Change hello_world.yaml pipeline's id with fake pipeline id")."""
    upload_and_verify(server, HELLO, _name())
    answer = upload_file(server, HELLO, {"pipelineid": "12345"}, version=True)
    assert VERSION_ERR in failed(answer, VERSION_ERR)

"""backend/test/v2/api/pipeline_upload_api_test.go at kubeflow/pipelines 7b70c7b95f: the tag
cases ("Verify Pipeline Upload with Tags", "... Upload Version with Tags", "... with Tags
Failure"), one test per Ginkgo It. Tags go as the ``tags`` query parameter, a JSON map.
"""

from __future__ import annotations

from tests.kfp_api.go_pipelines import (
    gen_name,
    list_versions,
    match_spec,
    tags_of,
    upload_and_verify,
    upload_version,
)
from tests.kfp_api.support import HELLO, VERSION_ERR, failed, get, ok


def test_upload_with_tags_returns_them(server):
    """Verify Pipeline Upload with Tags > ... > It("Upload hello_world.yaml pipeline with tags and
    verify tags are returned")."""
    tags = {"team": "ml-ops", "env": "prod"}
    upload_and_verify(server, HELLO, gen_name(), tags=tags, expected_tags=tags)


def test_upload_with_empty_tags_map(server):
    """It("Upload hello_world.yaml pipeline with empty tags map")."""
    upload_and_verify(server, HELLO, gen_name(), tags={})


def test_upload_without_tags(server):
    """It("Upload hello_world.yaml pipeline without tags and verify no tags are returned")."""
    upload_and_verify(server, HELLO, gen_name())


def test_upload_with_tags_get_pipeline_returns_them(server):
    """It("Upload hello_world.yaml pipeline with tags and verify tags via GetPipeline")."""
    tags = {"project": "kfp", "owner": "test"}
    created = upload_and_verify(server, HELLO, gen_name(), tags=tags, expected_tags=tags)
    assert tags_of(ok(get(server, f"/pipelines/{created['pipeline_id']}"))) == tags


def _version_and_verify(server, suffix: str, tags=None) -> tuple[dict, dict]:
    """uploadPipelineAndVerify, then uploadPipelineVersionAndVerify (MatchPipelineVersions:
    id set, display name, empty description, spec equal to the file's)."""
    created = upload_and_verify(server, HELLO, gen_name())
    name = created["display_name"] + suffix
    version = ok(upload_version(server, HELLO, created["pipeline_id"], name, tags=tags))
    assert version.get("pipeline_version_id"), "Pipeline Version ID is empty"
    assert version.get("display_name") == name
    assert version.get("description", "") == ""
    match_spec(version["pipeline_spec"], HELLO)
    return created, version


def test_upload_version_with_tags_returns_them(server):
    """Verify Pipeline Upload Version with Tags > ... > It("Upload a pipeline version with tags
    and verify tags are returned in the response")."""
    tags = {"team": "ml-ops", "env": "prod"}
    _, version = _version_and_verify(server, "-v2-tagged", tags)
    assert version.get("tags") == tags, "Tags should be returned in the upload response"


def test_upload_version_with_tags_get_version_returns_them(server):
    """It("Upload a pipeline version with tags and verify tags via GetPipelineVersion
    endpoint")."""
    tags = {"project": "kfp", "owner": "test"}
    created, version = _version_and_verify(server, "-v2-tagged-get", tags)
    path = f"/pipelines/{created['pipeline_id']}/versions/{version['pipeline_version_id']}"
    assert ok(get(server, path)).get("tags") == tags


def test_upload_version_with_tags_list_versions_returns_them(server):
    """It("Upload a pipeline version with tags and verify tags via ListPipelineVersions")."""
    tags = {"stage": "beta", "release": "v1"}
    created, version = _version_and_verify(server, "-v2-tagged-list", tags)
    listed = ok(list_versions(server, created["pipeline_id"]))
    assert listed.get("total_size", 0) >= 2
    found = [v for v in listed["pipeline_versions"] if v["display_name"] == version["display_name"]]
    assert found, "Should find the tagged version in the list"
    assert found[0].get("tags") == tags, "Tagged version should include tags in list response"


def test_upload_version_without_tags(server):
    """It("Upload a pipeline version without tags and verify no tags are returned")."""
    _, version = _version_and_verify(server, "-v2-no-tags")
    assert not tags_of(version), "Version uploaded without tags should have empty tags"


def test_upload_version_with_empty_tags_map(server):
    """It("Upload a pipeline version with empty tags map")."""
    _, version = _version_and_verify(server, "-v2-empty-tags", {})
    assert not tags_of(version), "Version uploaded with empty tags should have empty tags"


def _bad_tags(server, suffix: str, tags) -> None:
    """uploadPipelineVersionAndVerifyFailure(..., "Failed to upload pipeline version")."""
    created = upload_and_verify(server, HELLO, gen_name())
    name = created["display_name"] + suffix
    answer = upload_version(server, HELLO, created["pipeline_id"], name, tags=tags)
    assert VERSION_ERR in failed(answer, VERSION_ERR)


def test_upload_version_with_a_too_long_tag_key_fails(server):
    """Verify Pipeline Upload Version with Tags Failure > ... > It("Upload a pipeline version with
    tag key exceeding 63 characters")."""
    key = "this-key-is-way-too-long-for-tags-and-exceeds-the-sixty-three-char-limit"
    _bad_tags(server, "-v2-long-key", {key: "value"})


def test_upload_version_with_a_too_long_tag_value_fails(server):
    """It("Upload a pipeline version with tag value exceeding 63 characters")."""
    value = "this-value-is-way-too-long-for-tags-and-exceeds-the-sixty-three-char-limit"
    _bad_tags(server, "-v2-long-value", {"key": value})


def test_upload_version_with_invalid_tags_json_fails(server):
    """It("Upload a pipeline version with invalid tags JSON format")."""
    _bad_tags(server, "-v2-bad-json", "not-valid-json")

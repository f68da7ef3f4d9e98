# ruff: noqa: E501  (docstrings quote the Go cases' It text whole)
"""backend/test/v2/api/pipeline_api_test.go at kubeflow/pipelines 7b70c7b95f: "Verify Pipeline
Negative Tests", "Update Pipeline" and "Update Pipeline Version" (positive and negative), one
test per Ginkgo It. Go cases whose body is only Skip(...) are listed in not_run.py.
"""

from __future__ import annotations

import json

from tests.kfp_api.go_pipelines import (
    NS,
    gen_name,
    list_pipelines,
    random_string,
    tags_of,
    upload_and_verify,
    upload_version,
)
from tests.kfp_api.support import API, HELLO, call, delete, get, ok, post
from tests.kfp_api.test_pipeline_crud import TWENTY_ONE


def _fails(answer) -> None:
    assert answer[0] != 200, answer[1]


def _create(server, **pipeline):
    return post(server, "/pipelines", pipeline)


def _pred(key, op, value) -> str:
    return json.dumps({"predicates": [{"key": key, "operation": op, "string_value": value}]})


def _patch(server, pid, body):
    return call(server, "PATCH", f"{API}/pipelines/{pid}", body=body)


def _create_and_version(server, url: str):
    name = gen_name()
    return post(server, "/pipelines/create", {
        "pipeline": {"name": name},
        "pipeline_version": {"display_name": name + "-v1", "package_url": {"pipeline_url": url}}})  # fmt: skip


# ---- Verify Pipeline Negative Tests ------------------------------------------------------


def test_create_and_version_with_a_missing_spec_file_fails(server):
    """Verify Pipeline Negative Tests > Create a pipeline with version using '/pipelines/create' > It("With a valid pipeline and pipeline version name but invalid pipeline spec file")."""
    _fails(_create_and_version(server, "/nonexistent/path/to/pipeline.yaml"))


def test_create_and_version_with_an_unreachable_url_fails(server):
    """It("With a valid pipeline and pipeline version name but invalid pipeline spec url")."""
    _fails(
        _create_and_version(
            server, "https://invalid-url-that-does-not-exist.example.com/pipeline.yaml"
        )
    )


def test_create_with_a_500_char_name_fails(server):
    """Create a pipeline using '/pipelines' > It("With 500 char name")."""
    _fails(_create(server, name=random_string(500)))


def test_create_with_cjk_characters(server):
    """It("With CJK characters in the name"): Go asserts nothing ("may or may not be accepted");
    the call must still get an answer."""
    status, _ = _create(server, name="\u4f60\u597d\u4e16\u754c-pipeline")
    assert status in (200, 400)


def test_get_by_a_missing_id_fails(server):
    """Get pipeline by ID > It("By non existing ID")."""
    _fails(get(server, "/pipelines/00000000-0000-0000-0000-000000000000"))


def test_get_by_an_id_with_ascii_characters_fails(server):
    """It("By ID containing ASCII characters")."""
    _fails(get(server, "/pipelines/invalid-id-%21%40%23%24%25"))


def test_get_version_by_a_missing_id_fails(server):
    """Get pipeline version by ID > It("By non existing ID")."""
    created = upload_and_verify(server, HELLO, gen_name())
    _fails(
        get(
            server,
            f"/pipelines/{created['pipeline_id']}/versions/00000000-0000-0000-0000-000000000000",
        )
    )


def test_get_version_by_an_id_with_ascii_characters_fails(server):
    """It("By ID containing ASCII characters")."""
    _fails(get(server, "/pipelines/invalid-id/versions/invalid-version-id-%21%40%23%24%25"))


def test_delete_a_pipeline_with_versions_fails(server):
    """Delete by ID '/pipelines/{pipeline_id}' > It("Delete by ID that does have pipeline version(s)")."""
    created = upload_and_verify(server, HELLO, gen_name())
    _fails(delete(server, f"/pipelines/{created['pipeline_id']}"))


def test_delete_by_a_missing_id_fails(server):
    """It("Delete by non existing ID")."""
    _fails(delete(server, "/pipelines/00000000-0000-0000-0000-000000000000"))


def test_delete_by_an_id_with_ascii_characters_fails(server):
    """It("Delete by ID containing ASCII characters")."""
    _fails(delete(server, "/pipelines/invalid-id-%21%40%23%24%25"))


def test_delete_version_with_a_missing_id_fails(server):
    """Delete pipeline version by ID ... > It("Delete pipeline version with an invalid ID")."""
    created = upload_and_verify(server, HELLO, gen_name())
    _fails(
        delete(
            server,
            f"/pipelines/{created['pipeline_id']}/versions/00000000-0000-0000-0000-000000000000",
        )
    )


def test_delete_version_by_an_id_with_ascii_characters_fails(server):
    """It("Delete by ID containing ASCII characters")."""
    _fails(delete(server, "/pipelines/invalid-id/versions/invalid-version-%21%40%23%24%25"))


def _empty(server, filter_text: str) -> None:
    body = ok(list_pipelines(server, filter=filter_text))
    assert body.get("total_size", 0) == 0 and not body.get("pipelines")


def test_list_by_a_missing_name_is_empty(server):
    """List pipelines > It("By partial name")."""
    _empty(server, _pred("name", "EQUALS", "nonexistent-pipeline-name-xyz"))


def test_list_by_an_empty_name(server):
    """It("By invalid name")."""
    ok(list_pipelines(server, filter=_pred("name", "EQUALS", "")))


def test_list_by_a_missing_id_is_empty(server):
    """It("By invalid ID")."""
    _empty(server, _pred("pipeline_id", "EQUALS", "00000000-0000-0000-0000-000000000000"))


def test_list_by_an_id_with_ascii_characters_is_empty(server):
    """It("By invalid ID containing ASCII characters")."""
    _empty(server, _pred("pipeline_id", "EQUALS", "invalid-!@#$^&*"))


def test_filter_by_a_tag_with_not_equals_fails(server):
    """Negative tag tests > It("Filter by tag with non-EQUALS operation should fail")."""
    _fails(list_pipelines(server, filter=_pred("tags.team", "NOT_EQUALS", "ml-ops")))


def test_filter_by_a_tag_with_a_wrong_value_is_empty(server):
    """It("Filter by tag with wrong value returns empty results")."""
    tags = {"team": "ml-ops"}
    upload_and_verify(server, HELLO, gen_name(), tags=tags, expected_tags=tags)
    _empty(server, _pred("tags.team", "EQUALS", "wrong-value"))


def test_get_a_deleted_pipeline_with_tags_fails(server):
    """It("Get tags of deleted pipeline should fail")."""
    created = ok(_create(server, name=gen_name(), tags={"team": "ml-ops"}))
    ok(delete(server, f"/pipelines/{created['pipeline_id']}"))
    _fails(get(server, f"/pipelines/{created['pipeline_id']}"))


# ---- Update Pipeline - Positive / Negative Tests -----------------------------------------


def test_patch_adds_tags(server):
    """Update Pipeline - Positive Tests > Update pipeline via PATCH '/pipelines/{pipeline_id}' > It("Add tags to a pipeline that has no tags")."""
    created = ok(_create(server, name=gen_name()))
    tags = {"team": "ml-ops", "env": "prod"}
    assert ok(_patch(server, created["pipeline_id"], {"tags": tags})).get("tags") == tags
    assert ok(get(server, f"/pipelines/{created['pipeline_id']}")).get("tags") == tags


def test_patch_replaces_tags(server):
    """It("Replace existing tags with new tags")."""
    created = ok(_create(server, name=gen_name(), tags={"team": "ml-ops", "env": "dev"}))
    tags = {"project": "kfp", "owner": "test"}
    updated = ok(_patch(server, created["pipeline_id"], {"tags": tags}))
    assert updated.get("tags") == tags
    assert "team" not in tags_of(updated) and "env" not in tags_of(updated)


def test_patch_removes_all_tags(server):
    """It("Remove all tags by passing empty map")."""
    created = ok(_create(server, name=gen_name(), tags={"team": "ml-ops"}))
    assert not tags_of(ok(_patch(server, created["pipeline_id"], {"tags": {}})))
    assert not tags_of(ok(get(server, f"/pipelines/{created['pipeline_id']}")))


def test_patch_tags_then_list_filter(server):
    """It("Update tags and verify via list filter")."""
    created = ok(_create(server, name=gen_name(), namespace=NS))
    value = "ut-" + gen_name()[8:25]
    ok(_patch(server, created["pipeline_id"], {"tags": {"team": value}}))
    body = ok(list_pipelines(server, filter=_pred("tags.team", "EQUALS", value)))
    assert body.get("total_size", 0) >= 1
    assert created["pipeline_id"] in [p["pipeline_id"] for p in body.get("pipelines", [])]


def test_patch_tags_of_63_chars(server):
    """It("Update tags with maximum allowed key and value lengths (63 chars)")."""
    created = ok(_create(server, name=gen_name()))
    tags = {random_string(63): random_string(63)}
    assert ok(_patch(server, created["pipeline_id"], {"tags": tags})).get("tags") == tags


def test_patch_display_name_and_tags(server):
    """It("Update pipeline display_name along with tags")."""
    created = ok(_create(server, name=gen_name()))
    body = {"display_name": "Updated Display Name", "tags": {"team": "ml-ops"}}
    updated = ok(_patch(server, created["pipeline_id"], body))
    assert updated.get("display_name") == "Updated Display Name"
    assert updated.get("tags") == {"team": "ml-ops"}


def test_patch_a_missing_pipeline_fails(server):
    """Update Pipeline - Negative Tests > Update pipeline with invalid parameters > It("Update tags for non-existing pipeline ID")."""
    _fails(_patch(server, "00000000-0000-0000-0000-000000000000", {"tags": {"team": "ml-ops"}}))


def _patch_fails(server, tags: dict) -> None:
    created = ok(_create(server, name=gen_name()))
    _fails(_patch(server, created["pipeline_id"], {"tags": tags}))


def test_patch_a_64_char_key_fails(server):
    """It("Update tags with key exceeding 63 characters")."""
    _patch_fails(server, {random_string(64): "value"})


def test_patch_a_64_char_value_fails(server):
    """It("Update tags with value exceeding 63 characters")."""
    _patch_fails(server, {"team": random_string(64)})


def test_patch_an_empty_key_fails(server):
    """It("Update tags with empty key should fail")."""
    _patch_fails(server, {"": "value"})


def test_patch_a_key_with_a_dot_fails(server):
    """It("Update tags with key containing dot should fail")."""
    _patch_fails(server, {"team.name": "ml-ops"})


def test_patch_21_tags_fails(server):
    """It("Update tags exceeding maximum count of 20 should fail")."""
    _patch_fails(server, TWENTY_ONE)


def test_patch_a_deleted_pipeline_fails(server):
    """It("Update pipeline on a deleted pipeline should fail")."""
    created = ok(_create(server, name=gen_name()))
    ok(delete(server, f"/pipelines/{created['pipeline_id']}"))
    _fails(_patch(server, created["pipeline_id"], {"tags": {"team": "ml-ops"}}))


def test_get_after_delete_has_no_tags(server):
    """It("Get pipeline by ID after deletion should not return tags")."""
    tags = {"team": "ml-ops", "env": "prod"}
    created = ok(_create(server, name=gen_name(), tags=tags))
    assert ok(get(server, f"/pipelines/{created['pipeline_id']}")).get("tags") == tags
    ok(delete(server, f"/pipelines/{created['pipeline_id']}"))
    _fails(get(server, f"/pipelines/{created['pipeline_id']}"))


def test_deleted_pipeline_tags_leave_the_filter(server):
    """It("Deleted pipeline tags should not appear in list filter results")."""
    value = "dt-" + gen_name()[8:25]
    created = upload_and_verify(
        server, HELLO, gen_name(), tags={"team": value}, expected_tags={"team": value}
    )
    f = _pred("tags.team", "EQUALS", value)
    body = ok(list_pipelines(server, filter=f))
    assert body.get("total_size", 0) >= 1
    assert created["pipeline_id"] in [p["pipeline_id"] for p in body.get("pipelines", [])]
    ok(delete(server, f"/pipelines/{created['pipeline_id']}", cascade="true"))
    listed = ok(list_pipelines(server, filter=f)).get("pipelines", [])
    assert created["pipeline_id"] not in [p["pipeline_id"] for p in listed]


def _create_fails(server, tags: dict) -> None:
    _fails(_create(server, name=gen_name(), tags=tags))


def test_create_with_a_64_char_tag_key_fails(server):
    """Create pipeline with invalid tags > It("With tag key exceeding 63 characters")."""
    _create_fails(server, {random_string(64): "value"})


def test_create_with_a_64_char_tag_value_fails(server):
    """It("With tag value exceeding 63 characters")."""
    _create_fails(server, {"team": random_string(64)})


def test_create_with_an_empty_tag_key_fails(server):
    """It("With empty tag key")."""
    _create_fails(server, {"": "value"})


def test_create_with_a_tag_key_with_a_dot_fails(server):
    """It("With tag key containing dot")."""
    _create_fails(server, {"team.name": "ml-ops"})


def test_create_with_21_tags_fails(server):
    """It("With more than 20 tags")."""
    _create_fails(server, TWENTY_ONE)


def _version_fails(server, suffix: str, tags: dict) -> None:
    name = gen_name()
    created = upload_and_verify(server, HELLO, name)
    _fails(upload_version(server, HELLO, created["pipeline_id"], name + suffix, tags=tags))


def test_version_with_a_64_char_tag_key_fails(server):
    """Create pipeline version with invalid tags > It("With tag key exceeding 63 characters on pipeline version")."""
    _version_fails(server, "-v-bad-key", {random_string(64): "value"})


def test_version_with_a_64_char_tag_value_fails(server):
    """It("With tag value exceeding 63 characters on pipeline version")."""
    _version_fails(server, "-v-bad-val", {"team": random_string(64)})


def test_version_with_an_empty_tag_key_fails(server):
    """It("With empty tag key on pipeline version")."""
    _version_fails(server, "-v-empty-key", {"": "value"})


def test_version_with_a_tag_key_with_a_dot_fails(server):
    """It("With tag key containing dot on pipeline version")."""
    _version_fails(server, "-v-dot-key", {"team.name": "ml-ops"})


def test_version_with_21_tags_fails(server):
    """It("With more than 20 tags on pipeline version")."""
    _version_fails(server, "-v-many-tags", TWENTY_ONE)


# ---- Update Pipeline Version (positive and negative) -------------------------------------


def _new_version(server, suffix: str, tags=None) -> tuple[str, dict]:
    name = gen_name()
    created = upload_and_verify(server, HELLO, name)
    return created["pipeline_id"], ok(
        upload_version(server, HELLO, created["pipeline_id"], name + suffix, tags=tags)
    )


def _patch_version(server, pid: str, version: dict, body: dict):
    return call(
        server,
        "PATCH",
        f"{API}/pipelines/{pid}/versions/{version['pipeline_version_id']}",
        body=body,
    )


def test_patch_version_adds_tags(server):
    """Update Pipeline Version > Update pipeline version tags via UpdatePipelineVersion > It("Add tags to an existing pipeline version")."""
    pid, version = _new_version(server, "-v-add-tags")
    tags = {"team": "ml-ops", "env": "dev"}
    assert ok(_patch_version(server, pid, version, {"tags": tags})).get("tags") == tags
    got = ok(get(server, f"/pipelines/{pid}/versions/{version['pipeline_version_id']}"))
    assert got.get("tags") == tags


def test_patch_version_replaces_tags(server):
    """It("Replace existing tags on a pipeline version")."""
    pid, version = _new_version(server, "-v-replace-tags", {"team": "ml-ops"})
    tags = {"project": "kfp", "owner": "test"}
    updated = ok(_patch_version(server, pid, version, {"tags": tags}))
    assert updated.get("tags") == tags and "team" not in tags_of(updated)


def test_patch_version_display_name_and_tags(server):
    """It("Update pipeline version display_name along with tags")."""
    pid, version = _new_version(server, "-v-update-both")
    body = {"display_name": "Updated Version Name", "tags": {"team": "ml-ops"}}
    updated = ok(_patch_version(server, pid, version, body))
    assert updated.get("display_name") == "Updated Version Name"
    assert updated.get("tags") == {"team": "ml-ops"}


def _patch_version_fails(server, suffix: str, tags: dict) -> None:
    pid, version = _new_version(server, suffix)
    _fails(_patch_version(server, pid, version, {"tags": tags}))


def test_patch_version_with_an_empty_key_fails(server):
    """Update Pipeline Version - Negative Tests > ... > It("Update tags with empty key on pipeline version should fail")."""
    _patch_version_fails(server, "-v-neg-empty", {"": "value"})


def test_patch_version_with_a_key_with_a_dot_fails(server):
    """It("Update tags with key containing dot on pipeline version should fail")."""
    _patch_version_fails(server, "-v-neg-dot", {"team.name": "ml-ops"})


def test_patch_version_with_21_tags_fails(server):
    """It("Update tags exceeding maximum count on pipeline version should fail")."""
    _patch_version_fails(server, "-v-neg-count", TWENTY_ONE)


def test_patch_version_with_a_64_char_key_fails(server):
    """It("Update tags with key exceeding 63 characters on pipeline version should fail")."""
    _patch_version_fails(server, "-v-neg-longk", {random_string(64): "value"})


def test_patch_version_with_a_64_char_value_fails(server):
    """It("Update tags with value exceeding 63 characters on pipeline version should fail")."""
    _patch_version_fails(server, "-v-neg-longv", {"team": random_string(64)})

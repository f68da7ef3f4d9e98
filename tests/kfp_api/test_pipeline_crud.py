# ruff: noqa: E501  (docstrings quote the Go cases' It text whole)
"""backend/test/v2/api/pipeline_api_test.go at kubeflow/pipelines 7b70c7b95f: Create, Get, Create
Version, Delete, the negative cases and the PATCH (UpdatePipeline, UpdatePipelineVersion)
cases, one test per Ginkgo It. A Go case whose body is only Skip(...) is listed in not_run.py.
"""

from __future__ import annotations

from tests.kfp_api.go_pipelines import (
    NS,
    gen_name,
    list_versions,
    random_string,
    tags_of,
    upload_and_verify,
    upload_version,
    versions_by_created,
)
from tests.kfp_api.support import API, HELLO, call, delete, get, ok, post

TWENTY_ONE = {f"key{i}": f"val{i}" for i in range(21)}


def _hello(server, name=None, **kw) -> dict:
    return upload_and_verify(server, HELLO, name or gen_name(), **kw)


def _create(server, **pipeline):
    return post(server, "/pipelines", pipeline)


def _fails(answer) -> None:
    assert answer[0] != 200, answer[1]


def _patch(server, pid: str, body: dict):
    return call(server, "PATCH", f"{API}/pipelines/{pid}", body=body)


def _patch_version(server, pid: str, vid: str, body: dict):
    return call(server, "PATCH", f"{API}/pipelines/{pid}/versions/{vid}", body=body)


def _version(server, pid: str, vid: str):
    return get(server, f"/pipelines/{pid}/versions/{vid}")


# ---- Create Pipeline API Tests -----------------------------------------------------------


def test_create_with_just_name(server):
    """Create Pipeline API Tests > Create a pipeline using '/pipelines' > It("With just name")."""
    name = gen_name()
    created = ok(_create(server, name=name))
    assert created.get("pipeline_id") and created.get("name") == name


def test_create_with_name_and_description(server):
    """It("With name and description")."""
    name = gen_name()
    created = ok(_create(server, name=name, description="Test pipeline description"))
    assert created.get("pipeline_id") and created.get("name") == name
    assert created.get("description") == "Test pipeline description"


def test_create_with_a_100_char_name(server):
    """It("With name length of 100 chars")."""
    name = random_string(100).lower()
    created = ok(_create(server, name=name))
    assert created.get("pipeline_id") and created.get("name") == name


def test_create_with_ascii_characters_in_the_name(server):
    """It("With name containing ASCII characters") (the SQL store: it succeeds)."""
    assert ok(_create(server, name="test-pipeline-with-ascii-!@#$%")).get("pipeline_id")


def test_create_with_name_and_tags(server):
    """Create a pipeline with tags using '/pipelines' > It("With name and tags")."""
    tags = {"team": "ml-ops", "env": "dev"}
    created = ok(_create(server, name=gen_name(), tags=tags))
    assert created.get("pipeline_id") and created.get("tags") == tags
    assert ok(get(server, f"/pipelines/{created['pipeline_id']}")).get("tags") == tags


def test_create_with_name_description_and_tags(server):
    """It("With name, description and tags")."""
    tags = {"project": "kfp"}
    created = ok(_create(server, name=gen_name(), description="Pipeline with tags", tags=tags))
    assert created.get("description") == "Pipeline with tags" and created.get("tags") == tags


def test_create_with_an_empty_tags_map(server):
    """It("With empty tags map")."""
    assert ok(_create(server, name=gen_name(), tags={})).get("pipeline_id")


def test_create_without_tags(server):
    """It("Without tags (nil)")."""
    assert ok(_create(server, name=gen_name())).get("pipeline_id")


# ---- Get Pipeline / Get Pipeline Version API Tests ---------------------------------------


def test_get_with_id(server):
    """Get Pipeline API Tests > Get by ID '/pipelines/{pipeline_id}' > It("With ID")."""
    created = _hello(server)
    got = ok(get(server, f"/pipelines/{created['pipeline_id']}"))
    assert [got.get(k) for k in ("pipeline_id", "name", "display_name")] == [
        created.get(k) for k in ("pipeline_id", "name", "display_name")]  # fmt: skip


def test_get_with_id_returns_tags(server):
    """It("With ID and verify tags are returned")."""
    tags = {"team": "ml-ops", "env": "staging"}
    created = _hello(server, tags=tags, expected_tags=tags)
    got = ok(get(server, f"/pipelines/{created['pipeline_id']}"))
    assert got["pipeline_id"] == created["pipeline_id"] and got.get("tags") == tags


def test_get_with_id_of_a_pipeline_without_tags(server):
    """It("With ID for pipeline created without tags returns no tags")."""
    created = _hello(server)
    assert not tags_of(ok(get(server, f"/pipelines/{created['pipeline_id']}")))


def test_get_by_full_name(server):
    """Get by name '/pipelines/names/{name}' > It("With full name")."""
    created = _hello(server)
    got = ok(get(server, f"/pipelines/names/{created['name']}", namespace=NS))
    assert got["pipeline_id"] == created["pipeline_id"] and got.get("name") == created["name"]


def test_get_by_name_returns_tags(server):
    """It("With name and verify tags are returned")."""
    tags = {"project": "kfp", "owner": "test"}
    created = _hello(server, tags=tags, expected_tags=tags)
    got = ok(get(server, f"/pipelines/names/{created['name']}", namespace=NS))
    assert got["pipeline_id"] == created["pipeline_id"] and got.get("tags") == tags


def test_get_version_with_valid_ids(server):
    """Get Pipeline Version API Tests > Get by id ... > It("With valid pipeline id and version id")."""
    created = _hello(server)
    versions = versions_by_created(server, created["pipeline_id"])
    assert len(versions) == 1
    got = ok(_version(server, created["pipeline_id"], versions[0]["pipeline_version_id"]))
    assert got["pipeline_version_id"] == versions[0]["pipeline_version_id"]
    assert got["pipeline_id"] == created["pipeline_id"]


def test_get_version_without_tags(server):
    """It("With valid pipeline id and version id - verify tags are returned when version has no tags")."""
    created = _hello(server)
    versions = versions_by_created(server, created["pipeline_id"])
    assert len(versions) == 1
    got = ok(_version(server, created["pipeline_id"], versions[0]["pipeline_version_id"]))
    assert not tags_of(got), "Tags should be empty when version has no tags"


def test_get_version_with_tags(server):
    """It("With valid pipeline id and version id - verify tags are returned when version has tags")."""
    tags = {"env": "prod", "team": "data"}
    name = gen_name()
    created = _hello(server, name)
    new = ok(upload_version(server, HELLO, created["pipeline_id"], name + "-v2-tagged", tags=tags))
    assert new.get("pipeline_version_id")
    assert (
        ok(_version(server, created["pipeline_id"], new["pipeline_version_id"])).get("tags") == tags
    )


def test_get_version_with_another_pipelines_id(server):
    """It("Returns version even when pipeline ID in URL does not match the version's pipeline")."""
    name = gen_name()
    one, two = _hello(server, name + "-1"), _hello(server, name + "-2")
    listed = ok(list_versions(server, one["pipeline_id"])).get("pipeline_versions", [])
    assert len(listed) == 1
    got = ok(_version(server, two["pipeline_id"], listed[0]["pipeline_version_id"]))
    assert got["pipeline_id"] == one["pipeline_id"]


def test_list_versions_includes_tags(server):
    """List pipeline versions with tags '/pipelines/{pipeline_id}/versions' > It("List versions and verify tags are included in response")."""
    tags = {"stage": "beta", "owner": "alice"}
    name = gen_name()
    created = _hello(server, name)
    ok(upload_version(server, HELLO, created["pipeline_id"], name + "-v2-list", tags=tags))
    listed = ok(list_versions(server, created["pipeline_id"])).get("pipeline_versions", [])
    assert len(listed) >= 2
    found = [v for v in listed if v.get("display_name") == name + "-v2-list"]
    assert found and found[0].get("tags") == tags


def test_list_versions_without_tags(server):
    """It("Version created without tags should have empty tags in list")."""
    versions = versions_by_created(server, _hello(server)["pipeline_id"])
    assert len(versions) == 1 and not tags_of(versions[0])


# ---- Create Pipeline Version API Tests ---------------------------------------------------


def test_create_version_with_pipeline_id(server):
    """Create Pipeline Version API Tests > ... > It("Create version with valid pipeline ID, pipeline version body including PipelineID")."""
    name = gen_name()
    created = _hello(server, name)
    new = ok(upload_version(server, HELLO, created["pipeline_id"], name + "-v-create-rpc"))
    assert new.get("pipeline_version_id") and new["pipeline_id"] == created["pipeline_id"]
    got = ok(_version(server, created["pipeline_id"], new["pipeline_version_id"]))
    assert got["pipeline_version_id"] == new["pipeline_version_id"]
    assert got["pipeline_id"] == created["pipeline_id"]


def test_create_version_with_tags(server):
    """It("Create version with tags")."""
    tags = {"env": "test", "team": "ml"}
    name = gen_name()
    created = _hello(server, name)
    new = ok(
        upload_version(server, HELLO, created["pipeline_id"], name + "-v-create-tags", tags=tags)
    )
    assert (
        ok(_version(server, created["pipeline_id"], new["pipeline_version_id"])).get("tags") == tags
    )


def test_create_version_with_description(server):
    """It("Create version with description")."""
    name = gen_name()
    created = _hello(server, name)
    new = upload_version(server, HELLO, created["pipeline_id"], name + "-v-create-desc",
                         description="A versioned pipeline for testing")  # fmt: skip
    assert ok(new).get("pipeline_version_id")


def test_create_multiple_versions(server):
    """It("Create multiple versions for the same pipeline")."""
    name = gen_name()
    created = _hello(server, name)
    for i in (2, 3, 4):
        ok(upload_version(server, HELLO, created["pipeline_id"], f"{name}-v{i}"))
    listed = ok(list_versions(server, created["pipeline_id"])).get("pipeline_versions", [])
    assert len(listed) == 4, "Should have 4 versions total"


# ---- Delete Pipeline API Tests -----------------------------------------------------------


def test_delete_a_pipeline_without_versions(server):
    """Delete Pipeline API Tests > Delete pipeline by ID ... > It("Delete pipeline by ID that does not have any versions")."""
    created = ok(_create(server, name=gen_name()))
    assert created.get("pipeline_id")
    ok(delete(server, f"/pipelines/{created['pipeline_id']}"))
    _fails(get(server, f"/pipelines/{created['pipeline_id']}"))


def test_delete_a_pipeline_with_tags(server):
    """It("Delete pipeline with tags and verify tags are cleaned up")."""
    tags = {"team": "ml-ops", "env": "staging"}
    created = _hello(server, tags=tags, expected_tags=tags)
    ok(delete(server, f"/pipelines/{created['pipeline_id']}", cascade="true"))
    _fails(get(server, f"/pipelines/{created['pipeline_id']}"))


def test_delete_a_version(server):
    """Delete pipeline version by ID ... > It("Delete pipeline version by ID")."""
    created = _hello(server)
    versions = versions_by_created(server, created["pipeline_id"])
    assert len(versions) == 1
    ok(
        delete(
            server,
            f"/pipelines/{created['pipeline_id']}/versions/{versions[0]['pipeline_version_id']}",
        )
    )
    assert versions_by_created(server, created["pipeline_id"]) == []


def test_delete_a_version_with_another_pipelines_id(server):
    """It("Deletes version even when pipeline ID in URL does not match the version's pipeline")."""
    name = gen_name()
    one, two = _hello(server, name + "-1"), _hello(server, name + "-2")
    listed = ok(list_versions(server, one["pipeline_id"])).get("pipeline_versions", [])
    assert len(listed) == 1
    vid = listed[0]["pipeline_version_id"]
    ok(delete(server, f"/pipelines/{two['pipeline_id']}/versions/{vid}"))
    _fails(_version(server, one["pipeline_id"], vid))

# ruff: noqa: E501  (the filters quote the Go cases' JSON text whole)
"""backend/test/v2/api/pipeline_api_test.go at kubeflow/pipelines 7b70c7b95f: "List Pipelines API
Tests" and "List Pipelines Versions API Tests", one test per Ginkgo It.

Lists go as newListPipelinesParams (namespace, page_size 100) plus the case's fields; filters are
the Go cases' JSON text. Eventually(...) polls of the Kubernetes store are one call here (the
SQL store answers at once, as the Go comments say).
"""

from __future__ import annotations

import json

from tests.kfp_api.go_pipelines import (
    NS,
    gen_name,
    list_pipelines,
    list_versions,
    tags_of,
    upload_and_verify,
    upload_version,
    versions_by_created,
)
from tests.kfp_api.support import HELLO, get, ok, post


def _hello(server, name=None, display=None, **kw) -> dict:
    return upload_and_verify(server, HELLO, name or gen_name(), display, **kw)


def _pipelines(server, **query) -> tuple[list, int, str]:
    body = ok(list_pipelines(server, **query))
    return body.get("pipelines", []), body.get("total_size", 0), body.get("next_page_token", "")


def _versions(server, pid, **query) -> tuple[list, int, str]:
    body = ok(list_versions(server, pid, **query))
    return (
        body.get("pipeline_versions", []),
        body.get("total_size", 0),
        body.get("next_page_token", ""),
    )


def _fails(answer) -> None:
    assert answer[0] != 200, answer[1]  # Expect(err).To(HaveOccurred())


def _ordered(items: list, key: str, desc: bool = False) -> None:
    for prev, cur in zip(items, items[1:], strict=False):
        a, b = prev.get(key, "").lower(), cur.get(key, "").lower()
        assert (b <= a) if desc else (b >= a), f"not sorted by {key}: {a!r} then {b!r}"


def _only(items: list, *ids: str, key: str = "pipeline_id") -> list:
    """filterPipelinesByID: the listed items with these ids, in list order."""
    return [p for p in items if p.get(key) in ids]


def _pred(key: str, op: str, value: str) -> str:
    return json.dumps({"predicates": [{"key": key, "operation": op, "string_value": value}]})


CREATED_GT = '{"predicates":[{"key":"created_at","operation":"GREATER_THAN","string_value":"2000-01-01T00:00:00Z"}]}'


# ---- List Pipelines API Tests > Basic List Operations ------------------------------------


def test_list_after_creating_a_single_pipeline(server):
    """List Pipelines API Tests > Basic List Operations > It("After creating a single pipeline")."""
    created = _hello(server)
    assert created["pipeline_id"] in [p["pipeline_id"] for p in _pipelines(server)[0]]


def test_list_after_creating_multiple_pipelines(server):
    """It("After creating multiple pipelines")."""
    name = gen_name()
    one, two = _hello(server, name + "-1"), _hello(server, name + "-2")
    items, total, _ = _pipelines(server, page_size=100)
    assert total >= 2
    ids = {p["pipeline_id"] for p in items}
    assert one["pipeline_id"] in ids and two["pipeline_id"] in ids


def test_list_by_namespace(server):
    """It("By namespace")."""
    assert ok(get(server, "/pipelines", namespace=NS)).get("total_size", 0) >= 0


def test_list_with_page_size_limit(server):
    """Pagination > It("List pipelines with page size limit")."""
    name = gen_name()
    _hello(server, name + "-page1")
    _hello(server, name + "-page2")
    items, total, token = _pipelines(server, page_size=1)
    assert len(items) == 1 and total >= 2
    assert token, "Next page token should be set when more results exist"


def test_list_iterating_all_pages(server):
    """It("List pipelines with pagination - iterate through all pages (at least 2)")."""
    name = gen_name()
    for i in (1, 2, 3):
        _hello(server, f"{name}-iter{i}")
    seen, pages, token = [], 0, None
    while True:
        items, _, token = _pipelines(server, page_size=2, page_token=token)
        seen += items
        pages += 1
        if not token:
            break
    assert pages >= 2, "Should visit at least 2 pages"
    assert len(seen) >= 3


def test_sort_by_name_ascending(server):
    """Sorting > It("Sort by name in ascending order")."""
    name = gen_name()
    _hello(server, name + "-aaa")
    _hello(server, name + "-zzz")
    items = _pipelines(server, sort_by="name asc")[0]
    assert len(items) >= 2
    _ordered(items, "name")


def test_sort_by_name_descending(server):
    """It("Sort by name in descending order")."""
    name = gen_name()
    one, two = _hello(server, name + "-aaa-desc"), _hello(server, name + "-zzz-desc")
    items = _only(
        _pipelines(server, sort_by="name desc")[0], one["pipeline_id"], two["pipeline_id"]
    )
    assert len(items) == 2
    _ordered(items, "name", desc=True)


def _display_sort(server, suffix: str, order: str) -> None:
    name = gen_name()
    one = _hello(server, f"{name}-display{suffix}-1", f"display-alpha{suffix}")
    two = _hello(server, f"{name}-display{suffix}-2", f"display-zulu{suffix}")
    items = _pipelines(server, sort_by=f"display_name {order}")[0]
    items = _only(items, one["pipeline_id"], two["pipeline_id"])
    assert len(items) == 2
    _ordered(items, "display_name", desc=order == "desc")


def test_sort_by_display_name_ascending(server):
    """It("Sort by display name containing substring in ascending order")."""
    _display_sort(server, "", "asc")


def test_sort_by_display_name_descending(server):
    """It("Sort by display name containing substring in descending order")."""
    _display_sort(server, "-desc", "desc")


def test_sort_by_creation_date_ascending(server):
    """It("Sort by creation date in ascending order")."""
    ok(list_pipelines(server, sort_by="created_at asc"))


def test_sort_by_creation_date_descending(server):
    """It("Sort by creation date in descending order")."""
    ok(list_pipelines(server, sort_by="created_at desc"))


# ---- List Pipelines API Tests > Filtering / Combined Parameters / Filter by Tags ---------


def test_filter_by_pipeline_id(server):
    """Filtering > It("Filter by pipeline id")."""
    created = _hello(server)
    items, total, _ = _pipelines(
        server, filter=_pred("pipeline_id", "EQUALS", created["pipeline_id"])
    )
    assert total == 1
    assert items[0]["pipeline_id"] == created["pipeline_id"]


def test_filter_by_name(server):
    """It("Filter by name")."""
    name = gen_name()
    _hello(server, name)
    items, total, _ = _pipelines(server, filter=_pred("name", "EQUALS", name))
    assert total >= 1
    assert all(p.get("name") == name for p in items)


def test_filter_by_created_at(server):
    """It("Filter by created at")."""
    ok(list_pipelines(server, filter=CREATED_GT))


def test_filter_by_namespace(server):
    """It("Filter by namespace")."""
    ok(get(server, "/pipelines", namespace=NS))


def test_filter_by_description(server):
    """It("Filter by description")."""
    description = f"unique-test-description-{gen_name()[8:]}"
    _hello(server, description=description)
    items, total, _ = _pipelines(server, filter=_pred("description", "EQUALS", description))
    assert total >= 1
    assert all(p.get("description") == description for p in items)


def test_filter_by_name_not_equals(server):
    """It("Filter by name NOT_EQUALS")."""
    name = gen_name()
    created = _hello(server, name)
    items = _pipelines(server, filter=_pred("name", "NOT_EQUALS", name))[0]
    assert all(p.get("name") != name for p in items)
    assert all(p["pipeline_id"] != created["pipeline_id"] for p in items)


def test_filter_by_pipeline_id_in_with_a_string_value_fails(server):
    """It("Filter by pipeline_id IN with string_value should fail")."""
    created = _hello(server)
    _fails(list_pipelines(server, filter=_pred("pipeline_id", "IN", created["pipeline_id"])))


def test_filter_by_pipeline_id_in_with_string_values(server):
    """It("Filter by pipeline_id IN with stringValues array")."""
    created = _hello(server)
    f = '{"predicates":[{"key":"pipeline_id","operation":"IN","stringValues":{"values":["%s"]}}]}'
    items, total, _ = _pipelines(server, filter=f % created["pipeline_id"])
    assert total == 1
    assert items[0]["pipeline_id"] == created["pipeline_id"]


def test_filter_and_sort_by_name_ascending(server):
    """Combined Parameters > It("Filter and sort by name in ascending order")."""
    items = _pipelines(server, filter=_pred("name", "IS_SUBSTRING", "apitest"), sort_by="name asc")[
        0
    ]
    _ordered(items, "name")


def test_filter_and_sort_by_created_date_descending(server):
    """It("Filter and sort by created date in descending order")."""
    ok(list_pipelines(server, filter=CREATED_GT, sort_by="created_at desc"))


def test_filter_by_created_date_and_sort_by_updated_date_descending(server):
    """It("Filter by created date and sort by updated date in descending order")."""
    ok(list_pipelines(server, filter=CREATED_GT, sort_by="created_at desc"))


def test_filter_pipelines_by_a_single_tag(server):
    """Filter by Tags > It("Filter pipelines by a single tag")."""
    tags = {"team": "ml-ops"}
    created = _hello(server, tags=tags, expected_tags=tags)
    items, total, _ = _pipelines(server, filter=_pred("tags.team", "EQUALS", "ml-ops"))
    assert total >= 1
    found = _only(items, created["pipeline_id"])
    assert found, "Pipeline with tag should appear in filtered results"
    assert tags_of(found[0]).get("team") == "ml-ops"


def test_filter_pipelines_by_multiple_tags(server):
    """It("Filter pipelines by multiple tags")."""
    tags = {"team": "ml-ops", "env": "prod"}
    created = _hello(server, tags=tags, expected_tags=tags)
    f = '{"predicates":[{"key":"tags.team","operation":"EQUALS","string_value":"ml-ops"},{"key":"tags.env","operation":"EQUALS","string_value":"prod"}]}'
    items, total, _ = _pipelines(server, filter=f)
    assert total >= 1
    assert _only(items, created["pipeline_id"]), "Pipeline with both tags should appear"


def test_filter_by_a_tag_no_pipeline_has_is_empty(server):
    """It("Filter by tag that no pipeline has returns empty")."""
    items, total, _ = _pipelines(server, filter=_pred("tags.nonexistent", "EQUALS", "value"))
    assert total == 0 and not items


# ---- List Pipelines Versions API Tests ---------------------------------------------------


def _with_version(server, suffix: str, **kw) -> tuple[dict, str]:
    """uploadPipelineAndVerify then uploadPipelineVersion(name = generated name + suffix)."""
    name = gen_name()
    created = _hello(server, name)
    ok(upload_version(server, HELLO, created["pipeline_id"], name + suffix, **kw))
    return created, name + suffix


def test_versions_when_none_exist(server):
    """List Pipelines Versions API Tests > Basic List Operations > It("When no pipeline versions
    exist")."""
    created = ok(post(server, "/pipelines", {"name": gen_name() + "-no-versions", "namespace": NS}))
    items, total, _ = _versions(server, created["pipeline_id"])
    assert total == 0 and not items


def test_versions_after_a_single_version(server):
    """It("After creating a single pipeline version")."""
    created = _hello(server)
    items, total, _ = _versions(server, created["pipeline_id"])
    assert total == 1 and len(items) == 1
    assert items[0]["pipeline_id"] == created["pipeline_id"]


def test_versions_after_multiple_versions(server):
    """It("After creating multiple pipeline versions")."""
    created, name = _with_version(server, "-v2")
    ok(upload_version(server, HELLO, created["pipeline_id"], name[:-3] + "-v3"))
    items, total, _ = _versions(server, created["pipeline_id"])
    assert total == 3 and len(items) == 3


def test_versions_by_pipeline_id(server):
    """It("By pipeline ID - only returns versions for that pipeline")."""
    name = gen_name()
    one, two = _hello(server, name + "-pip1"), _hello(server, name + "-pip2")
    for p in (one, two):
        assert all(
            v["pipeline_id"] == p["pipeline_id"] for v in _versions(server, p["pipeline_id"])[0]
        )


def test_versions_with_page_size_limit(server):
    """Pagination > It("List pipeline versions with page size limit")."""
    created, _ = _with_version(server, "-v2-page")
    items, total, token = _versions(server, created["pipeline_id"], page_size=1)
    assert total >= 2 and len(items) == 1
    assert token, "Next page token should be set when more results exist"


def test_versions_iterating_all_pages(server):
    """It("List pipeline versions with pagination - iterate through all pages (at least 2)")."""
    name = gen_name()
    created = _hello(server, name)
    for i in (2, 3):
        ok(upload_version(server, HELLO, created["pipeline_id"], f"{name}-v{i}-iter"))
    seen, pages, token = [], 0, None
    while True:
        items, _, token = _versions(server, created["pipeline_id"], page_size=2, page_token=token)
        seen += items
        pages += 1
        if not token:
            break
    assert len(seen) >= 3
    assert pages >= 2, "Should visit at least 2 pages"


def _sorted_versions(server, suffix: str | None, sort_by: str, key: str) -> None:
    if suffix:
        created, _ = _with_version(server, suffix)
    else:
        created = _hello(server)
    items, total, _ = _versions(server, created["pipeline_id"], sort_by=sort_by)
    if suffix:
        assert total >= 2
    _ordered(items, key, desc=sort_by.endswith("desc"))


def test_versions_sort_by_name_ascending(server):
    """Sorting > It("Sort by name in ascending order")."""
    _sorted_versions(server, "-zzz-sort", "name asc", "name")


def test_versions_sort_by_name_descending(server):
    """It("Sort by name in descending order")."""
    _sorted_versions(server, "-zzz-sortdesc", "name desc", "name")


def test_versions_sort_by_display_name_ascending(server):
    """It("Sort by display name containing substring in ascending order")."""
    _sorted_versions(server, None, "display_name asc", "display_name")


def test_versions_sort_by_display_name_descending(server):
    """It("Sort by display name containing substring in descending order")."""
    _sorted_versions(server, None, "display_name desc", "display_name")


def test_versions_sort_by_creation_date_ascending(server):
    """It("Sort by creation date in ascending order")."""
    ok(list_versions(server, _hello(server)["pipeline_id"], sort_by="created_at asc"))


def test_versions_sort_by_creation_date_descending(server):
    """It("Sort by creation date in descending order")."""
    ok(list_versions(server, _hello(server)["pipeline_id"], sort_by="created_at desc"))


def test_versions_filter_by_version_id(server):
    """Filtering > It("Filter by pipeline version id")."""
    created = _hello(server)
    versions = versions_by_created(server, created["pipeline_id"])
    assert len(versions) == 1
    vid = versions[0]["pipeline_version_id"]
    items, total, _ = _versions(
        server, created["pipeline_id"], filter=_pred("pipeline_version_id", "EQUALS", vid)
    )
    assert total == 1
    assert items[0]["pipeline_version_id"] == vid


def test_versions_filter_by_name(server):
    """It("Filter by name")."""
    created, name = _with_version(server, "-filter-name")
    items, total, _ = _versions(
        server, created["pipeline_id"], filter=_pred("name", "EQUALS", name)
    )
    assert total >= 1
    assert all(v.get("name") == name for v in items)


def test_versions_filter_by_created_at(server):
    """It("Filter by created at")."""
    ok(list_versions(server, _hello(server)["pipeline_id"], filter=CREATED_GT))


def test_versions_filter_by_description(server):
    """It("Filter by description")."""
    description = f"unique-version-description-{gen_name()[8:]}"
    created, _ = _with_version(server, "-v2-desc", description=description)
    items, total, _ = _versions(
        server, created["pipeline_id"], filter=_pred("description", "EQUALS", description)
    )
    assert total >= 1
    assert all(v.get("description") == description for v in items)


def test_versions_filter_by_name_not_equals(server):
    """It("Filter by name NOT_EQUALS")."""
    name = gen_name()
    created = _hello(server, name)
    first = _versions(server, created["pipeline_id"])[0]
    assert len(first) >= 1
    ok(upload_version(server, HELLO, created["pipeline_id"], name + "-v2-neq"))
    items = _versions(
        server, created["pipeline_id"], filter=_pred("name", "NOT_EQUALS", first[0]["name"])
    )[0]
    assert all(v.get("name") != first[0]["name"] for v in items)


def test_versions_filter_by_version_id_in_with_a_string_value_fails(server):
    """It("Filter by pipeline_version_id IN with string_value should fail")."""
    created = _hello(server)
    first = _versions(server, created["pipeline_id"])[0]
    assert len(first) >= 1
    f = _pred("pipeline_version_id", "IN", first[0]["pipeline_version_id"])
    _fails(list_versions(server, created["pipeline_id"], filter=f))


def test_versions_filter_by_version_id_in_with_string_values(server):
    """It("Filter by pipeline_version_id IN with stringValues array")."""
    created = _hello(server)
    first = _versions(server, created["pipeline_id"])[0]
    assert len(first) >= 1
    vid = first[0]["pipeline_version_id"]
    f = '{"predicates":[{"key":"pipeline_version_id","operation":"IN","stringValues":{"values":["%s"]}}]}'
    items, total, _ = _versions(server, created["pipeline_id"], filter=f % vid)
    assert total == 1
    assert items[0]["pipeline_version_id"] == vid


def test_versions_filter_and_sort_by_name_ascending(server):
    """Combined Parameters > It("Filter and sort by name in ascending order")."""
    created = _hello(server)
    f = _pred("name", "IS_SUBSTRING", "apitest")
    _ordered(_versions(server, created["pipeline_id"], filter=f, sort_by="name asc")[0], "name")


def test_versions_filter_and_sort_by_created_date_descending(server):
    """It("Filter and sort by created date in descending order")."""
    created = _hello(server)
    ok(list_versions(server, created["pipeline_id"], filter=CREATED_GT, sort_by="created_at desc"))


def test_versions_with_tags_list_them(server):
    """Pipeline Version Tags in List > It("Versions with tags should include tags in list
    response")."""
    tags = {"env": "staging", "team": "ml"}
    created, name = _with_version(server, "-v2-tagged-list", tags=tags)
    items, total, _ = _versions(server, created["pipeline_id"])
    assert total >= 2
    found = [v for v in items if v.get("display_name") == name]
    assert found, "Should find the tagged version in the list"
    assert all(v.get("tags") == tags for v in found)


def test_versions_without_tags_list_none(server):
    """It("Versions without tags should have empty tags in list response")."""
    items = _versions(server, _hello(server)["pipeline_id"])[0]
    assert len(items) == 1
    assert not tags_of(items[0]), "Version without tags should have empty tags"


def test_versions_filter_by_a_single_tag(server):
    """Filter by Tags > It("Filter pipeline versions by a single tag")."""
    created, _ = _with_version(server, "-v2-tag-filter", tags={"env": "prod"})
    items, total, _ = _versions(
        server, created["pipeline_id"], filter=_pred("tags.env", "EQUALS", "prod")
    )
    assert total >= 1
    assert all(tags_of(v).get("env") == "prod" for v in items)


def test_versions_filter_by_multiple_tags(server):
    """It("Filter pipeline versions by multiple tags")."""
    created, name = _with_version(server, "-v2-multi-tag", tags={"env": "staging", "team": "data"})
    f = '{"predicates":[{"key":"tags.env","operation":"EQUALS","string_value":"staging"},{"key":"tags.team","operation":"EQUALS","string_value":"data"}]}'
    items, total, _ = _versions(server, created["pipeline_id"], filter=f)
    assert total >= 1
    assert any(v.get("display_name") == name for v in items), "Version with both tags should appear"


def test_versions_filter_by_a_tag_no_version_has_is_empty(server):
    """It("Filter by tag that no version has returns empty")."""
    created = _hello(server)
    items, total, _ = _versions(
        server, created["pipeline_id"], filter=_pred("tags.nonexistent", "EQUALS", "value")
    )
    assert total == 0 and not items


def test_versions_filter_by_a_tag_with_a_wrong_value_is_empty(server):
    """It("Filter by tag with wrong value returns empty")."""
    created, _ = _with_version(server, "-v2-wrong-val", tags={"env": "prod"})
    items, total, _ = _versions(
        server, created["pipeline_id"], filter=_pred("tags.env", "EQUALS", "wrong-value")
    )
    assert total == 0 and not items


def test_versions_filter_by_a_tag_with_not_equals_fails(server):
    """It("Filter by tag with non-EQUALS operation should fail")."""
    created = _hello(server)
    _fails(
        list_versions(
            server, created["pipeline_id"], filter=_pred("tags.env", "NOT_EQUALS", "prod")
        )
    )


def test_versions_filter_by_a_tag_and_a_name(server):
    """It("Filter by tag combined with name filter")."""
    created, name = _with_version(server, "-v2-combined", tags={"env": "combined-test"})
    f = json.dumps({"predicates": [
        {"key": "tags.env", "operation": "EQUALS", "string_value": "combined-test"},
        {"key": "name", "operation": "EQUALS", "string_value": name}]})  # fmt: skip
    items, total, _ = _versions(server, created["pipeline_id"], filter=f)
    assert total == 1
    assert items[0]["name"] == name
    assert tags_of(items[0]).get("env") == "combined-test"

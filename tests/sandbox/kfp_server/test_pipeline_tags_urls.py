"""Tags, PATCH, package_url and single-user namespaces of the local KFP API, beyond what KFP's
own API tests (tests/kfp_api) assert: the exact rules of kubeflow/pipelines 7b70c7b95f
(model/pipeline_tags.go, main.go clearTagsMiddleware, storage/pipeline_store.go,
validation/pipeline_url.go, resource_manager.go ReplaceNamespace). Real server, real sockets.
"""

from __future__ import annotations

import functools
import http.client
import http.server
import json
import threading

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.paths import PIPELINES
from tests.sandbox.kfp_server.support import API, call, unique, upload


def _patch_raw(server, path: str, raw: bytes):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("PATCH", API + path, body=raw, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def _pipeline(server, **tags) -> dict:
    status, body = call(server, "POST", f"{API}/pipelines", {"name": unique("t"), "tags": tags})
    assert status == 200, body
    return body


def test_only_the_exact_text_of_an_empty_map_clears_the_tags(server):
    """main.go:374-392: the middleware compares the raw JSON of ``tags`` with ``{}``; ``{ }``
    decodes to an empty map, which protobuf cannot tell from none: the tags stay."""
    pid = _pipeline(server, team="a")["pipeline_id"]
    status, body = _patch_raw(server, f"/pipelines/{pid}", b'{"tags": { }}')
    assert status == 200 and body["tags"] == {"team": "a"}
    status, body = _patch_raw(server, f"/pipelines/{pid}", b'{"display_name": "x", "tags":{}}')
    assert status == 200 and "tags" not in body and body["display_name"] == "x"


def test_a_patch_of_a_missing_pipeline(server):
    """Tags are checked before the row is looked up (400); tags for a missing row break the tag
    table's foreign key (500); without tags the read-back is 404."""
    missing = "00000000-0000-0000-0000-000000000000"
    assert call(server, "PATCH", f"{API}/pipelines/{missing}", {"tags": {"": "v"}})[0] == 400
    assert call(server, "PATCH", f"{API}/pipelines/{missing}", {"tags": {"k": "v"}})[0] == 500
    status, body = call(server, "PATCH", f"{API}/pipelines/{missing}", {"display_name": "x"})
    assert status == 404 and f"Pipeline {missing} not found" in body["message"]


def test_tag_messages_and_the_filter(server):
    """ValidateTags' words; a tag filter compares as MySQL's case-insensitive collation does,
    and takes EQUALS only (pipeline_server.go:572-574)."""
    status, body = call(server, "POST", f"{API}/pipelines", {"name": unique("t"),
                                                             "tags": {"a.b": "v"}})  # fmt: skip
    assert status == 400
    assert body["details"][0]["message"] == "tag key \"a.b\" must not contain '.' character"
    value = unique("v")
    pid = _pipeline(server, team=value)["pipeline_id"]
    shouted = value.upper() + " "
    f = json.dumps({"predicates": [
        {"key": "tags.TEAM", "operation": "EQUALS", "string_value": shouted}]})  # fmt: skip
    status, body = call(server, "GET", f"{API}/pipelines", query={"filter": f})
    assert status == 200 and [p["pipeline_id"] for p in body["pipelines"]] == [pid]
    f = json.dumps({"predicates": [{"key": "tags.team", "operation": "IN",
                                    "string_values": {"values": [value]}}]})  # fmt: skip
    status, body = call(server, "GET", f"{API}/pipelines", query={"filter": f})
    assert status == 400 and "only EQUALS operation is supported" in body["message"]


def test_upload_tags_that_are_not_a_json_map(server):
    """pipeline_upload_server.go:156-166: 400, KFP's words, before the JSON content type."""
    for raw in ("not-json", '{"k": 1}', '["k"]'):
        status, body = upload(server, "add_numbers.yaml", unique("u"), query={"tags": raw})
        assert status == 400 and body["error_message"].startswith("Failed to parse tags query")


def test_single_user_blanks_the_namespace(server):
    """ReplaceNamespace (resource_manager.go:2723-2729, pipeline_upload_server.go:124): one
    name is one pipeline across namespaces, and any namespace lists it."""
    name = unique("ns")
    status, first = upload(server, "add_numbers.yaml", name, query={"namespace": "team-a"})
    assert status == 200 and "namespace" not in first
    status, _ = upload(server, "add_numbers.yaml", name, query={"namespace": "team-b"})
    assert status == 409
    f = json.dumps({"predicates": [{"key": "name", "operation": "EQUALS", "string_value": name}]})
    status, body = call(server, "GET", f"{API}/pipelines",
                        query={"namespace": "team-b", "filter": f})  # fmt: skip
    assert status == 200 and body["total_size"] == 1


@pytest.fixture
def files():
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(PIPELINES))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _create_from(server, url: str):
    body = {"pipeline": {"name": unique("url")},
            "pipeline_version": {"package_url": {"pipeline_url": url}}}  # fmt: skip
    return call(server, "POST", f"{API}/pipelines/create", body)


def test_package_url_is_checked_as_kfp_checks_it(server, files):
    """By default (validation/pipeline_url.go) http, loopback and hosts off the allowlist are
    refused before any request: 400 "Pipeline URL validation failed"."""
    for url in (f"{files}/add_numbers.yaml", "https://example.com/p.yaml",
                "https://raw.githubusercontent.com:8443/p.yaml", "/local/p.yaml"):  # fmt: skip
        status, body = _create_from(server, url)
        assert status == 400, (url, body)
        assert body["details"][0]["message"] == "Pipeline URL validation failed"


def test_package_url_fetched_when_validation_is_off(files, monkeypatch):
    """PIPELINE_URL_VALIDATION_ENABLED=false (KFP's CI for its URL tests): the file is fetched;
    a 404 is 400 with the status line; a scheme Go's client has not is 500."""
    monkeypatch.setenv("PIPELINE_URL_VALIDATION_ENABLED", "false")
    with start_kfp_server(simulate="all:fixed(0.1)") as s:
        status, body = _create_from(s, f"{files}/add_numbers.yaml")
        assert status == 200, body
        status, versions = call(s, "GET", f"{API}/pipelines/{body['pipeline_id']}/versions")
        assert versions["pipeline_versions"][0]["package_url"]["pipeline_url"].endswith(
            "/add_numbers.yaml"
        )
        status, body = _create_from(s, f"{files}/missing.yaml")
        assert status == 400 and body["message"].endswith("request returned 404 File not found")
        status, body = _create_from(s, "ftp://example.com/p.yaml")
        assert status == 500 and "unsupported protocol scheme" in body["message"]

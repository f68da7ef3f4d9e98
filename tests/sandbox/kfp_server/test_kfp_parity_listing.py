"""LIST requests and uploads answered as KFP's API server answers them (kubeflow/pipelines
7b70c7b95f, on its default MySQL store). Each case cites the Go code it follows; a real server on
loopback is asked over raw HTTP.
"""

from __future__ import annotations

import json
import time

import pytest
import yaml

from kfp_bench.sandbox.kfp_server import start_kfp_server

from .support import API, PIPELINES, call, unique, upload


@pytest.fixture(scope="module")
def lister():
    """A server whose runs stay PENDING (long agent delay): listing only, nothing executes."""
    with start_kfp_server(simulate="all:fixed(0.1)", persistence_delay=600, seed=1) as s:
        yield s


def _experiment(server, name: str | None = None) -> str:
    body = {"display_name": name or unique("lst")}
    status, exp = call(server, "POST", f"{API}/experiments", body)
    assert status == 200, exp
    return exp["experiment_id"]


def _runs(server, exp_id: str, names: list[str]) -> list[dict]:
    spec = yaml.safe_load((PIPELINES / "hello_world.yaml").read_text())
    out = []
    for name in names:
        body = {"display_name": name, "experiment_id": exp_id, "pipeline_spec": spec}
        status, run = call(server, "POST", f"{API}/runs", body)
        assert status == 200, run
        out.append(run)
    return out


def _list(server, exp_id: str, **query) -> tuple[int, dict]:
    return call(server, "GET", f"{API}/runs", query={"experiment_id": exp_id, **query})


def _where(op: str, key: str, **value) -> str:
    return json.dumps({"predicates": [{"operation": op, "key": key, **value}]})


def test_page_size_is_capped_at_200_and_refused_below_zero(lister):
    """list/list.go:466-486 (validatePageSize)."""
    exp_id = _experiment(lister)
    _runs(lister, exp_id, [f"r{i}" for i in range(205)])
    status, page = _list(lister, exp_id, page_size=1000)
    assert status == 200 and len(page["runs"]) == 200 and page["total_size"] == 205
    rest = _list(lister, exp_id, page_token=page["next_page_token"])[1]
    assert len(rest["runs"]) == 5 and "next_page_token" not in rest
    assert len(_list(lister, exp_id)[1]["runs"]) == 20  # 0: the default, 20
    status, err = _list(lister, exp_id, page_size=-1)
    assert status == 400 and "The page size should be greater than 0. Got -1" in err["message"]


def test_a_page_token_alone_keeps_its_sort_and_filter(lister):
    """server/list_request_util.go:220-243 (validatedListOptions): a token alone carries the
    sort and filter of its first page; another sort_by or filter with it is refused."""
    exp_id = _experiment(lister)
    _runs(lister, exp_id, ["b-1", "a-2", "c-3", "x-4", "d-5"])
    where = _where("IS_SUBSTRING", "display_name", string_value="-")
    status, first = _list(lister, exp_id, page_size=2, sort_by="display_name DESC", filter=where)
    assert status == 200 and [r["display_name"] for r in first["runs"]] == ["x-4", "d-5"]
    token = first["next_page_token"]
    second = _list(lister, exp_id, page_size=2, page_token=token)[1]
    assert [r["display_name"] for r in second["runs"]] == ["c-3", "b-1"]
    status, err = _list(lister, exp_id, page_token=token, sort_by="created_at")
    assert status == 400 and "page token does not match" in err["message"], err
    status, err = _list(lister, exp_id, page_token="not-a-token")
    assert status == 400 and err["details"][0]["message"] == "Invalid page token", err


def test_sort_by_is_case_insensitive_and_a_bad_one_is_refused(lister):
    """list/list.go:247-272 (strings.ToLower, then the listable's fields)."""
    exp_id = _experiment(lister)
    _runs(lister, exp_id, ["m", "z", "a"])
    page = _list(lister, exp_id, sort_by="Display_Name Desc")[1]
    assert [r["display_name"] for r in page["runs"]] == ["z", "m", "a"]
    status, err = _list(lister, exp_id, sort_by="nope")
    assert status == 400 and 'Invalid sorting field: "nope" on listable type Run' in err["message"]
    status, err = _list(lister, exp_id, sort_by="created_at up")
    assert status == 400 and "Received invalid sort by format" in err["message"], err


def test_is_substring_is_like_under_a_case_insensitive_collation(lister):
    """filter/filter.go:359-367 (LIKE '%v%'), client/sql.go:28 (utf8: utf8_general_ci); the
    filter is URL-unescaped once more (list_request_util.go:157-160)."""
    exp_id = _experiment(lister)
    _runs(lister, exp_id, ["Bench_Run", "benchXrun", "other"])

    def names(value: str) -> list[str]:
        where = _where("IS_SUBSTRING", "name", string_value=value)
        status, page = _list(lister, exp_id, filter=where, sort_by="name")
        assert status == 200, page
        return [r["display_name"] for r in page.get("runs", [])]

    # "_" is any one character; general_ci orders by upper case, "X" before "_"
    assert names("bench_run") == ["benchXrun", "Bench_Run"]
    assert names("%25run") == ["benchXrun", "Bench_Run"]  # %25 unescapes to the LIKE "%"
    status, err = _list(lister, exp_id, filter=_where("IS_SUBSTRING", "name", string_value="5%"))
    assert status == 400 and "invalid URL escape" in err["message"], err
    where = _where("EQUALS", "name", string_value="OTHER")
    assert [r["display_name"] for r in _list(lister, exp_id, filter=where)[1]["runs"]] == ["other"]


def test_created_at_filters_take_unix_seconds_as_strings(lister):
    """A run's created_at is the column CreatedAtInSec (model/run.go:391), which MySQL compares
    with a string value as a number; timestamp_value is its Unix() (filter.go:529-530)."""
    exp_id = _experiment(lister)
    run = _runs(lister, exp_id, ["ts"])[0]
    now = int(time.time())
    after = _where("GREATER_THAN_EQUALS", "created_at", string_value=str(now - 3600))
    assert _list(lister, exp_id, filter=after)[1]["total_size"] == 1
    later = _where("GREATER_THAN", "created_at", string_value=str(now + 3600))
    assert _list(lister, exp_id, filter=later)[1]["total_size"] == 0
    same = _where("EQUALS", "created_at", timestamp_value=run["created_at"])
    assert _list(lister, exp_id, filter=same)[1]["total_size"] == 1


def test_bad_filters_answer_invalid_argument(lister):
    """filter/filter.go:184-201 (unknown key), :375-398 (checkPredicate), :491-503
    (no operation), list_request_util.go:152-184 (not a Filter)."""
    exp_id = _experiment(lister)
    cases = {
        _where("EQUALS", "nope", string_value="x"): 'unrecognized field "nope"',
        _where("IN", "name", string_value="x"): "cannot use IN operator with scalar type string",
        _where("EQUALS", "name", string_values={"values": ["x"]}): "on array type []string",
        json.dumps({"predicates": [{"key": "name", "string_value": "x"}]}):
            "Filter.Predicate.Operation",
        "not json": "failed to parse valid filter",
    }  # fmt: skip
    for where, text in cases.items():
        status, err = _list(lister, exp_id, filter=where)
        assert status == 400 and err["code"] == 3 and text in err["message"], (where, err)


def test_upload_errors_are_error_message_and_details(lister):
    """server/pipeline_upload_server.go:426-435 (writeErrorToResponse) with the statuses of
    :103-116 (400), :186-190 (409), :286-290 (a length: Go's plain-text http.Error)."""
    status, body = upload(lister, "hello_world.yaml", unique("up"), data=b"x")
    assert status == 400 and set(body) == {"error_message", "error_details"}, body
    name = unique("dup")
    assert upload(lister, "hello_world.yaml", name)[0] == 200
    status, body = upload(lister, "hello_world.yaml", name)
    assert status == 409, body
    assert body == {
        "error_message": "Failed to create a pipeline and a pipeline version",
        "error_details": "Failed to create a pipeline and a pipeline version",
    }
    status, body = upload(lister, "hello_world.txt", unique("txt"),
                          data=(PIPELINES / "hello_world.yaml").read_bytes())  # fmt: skip
    assert status == 400 and body["error_message"] == "Failed to read a pipeline spec file"
    status, body = upload(lister, "hello_world.yaml", path="/pipelines/upload_version",
                          query={"pipelineid": unique("missing")})  # fmt: skip
    assert status == 400 and body["error_message"] == "Failed to create a pipeline version"


def test_an_uploaded_pipeline_is_named_after_the_whole_file_name(lister):
    """buildPipelineName (server/pipeline_server.go:1320-1330): the file's name, extension
    included, when neither name nor display_name is given."""
    name = unique("file") + ".yaml"
    status, pipeline = upload(lister, name, data=(PIPELINES / "add_numbers.yaml").read_bytes())
    assert status == 200 and pipeline["name"] == pipeline["display_name"] == name, pipeline

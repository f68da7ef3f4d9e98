"""The errors the local KFP server answers before and around its handlers, as KFP's gateway does.

What each expectation rests on is cited in ``kfp_bench/sandbox/kfp_server/gateway.py``
(grpc-gateway v2.29.0 ``runtime/errors.go`` and ``runtime/mux.go``; KFP 2.17's ``main.go``,
``common/utils.go``, ``common/util/error.go``).
"""

from __future__ import annotations

import pytest

from kfp_bench.sandbox.kfp_server import faults, gateway

from .support import API, call
from .swagger import assert_valid

_STATUS = "type.googleapis.com/google.rpc.Status"


def test_routing_errors_are_the_gateways(server):
    # An unknown path under /apis/: DefaultRoutingErrorHandler's NotFound, no details.
    assert call(server, "GET", f"{API}/nothing-here") == (404, {"code": 5, "message": "Not Found"})
    # A known path with a method it has no binding for: 501 UNIMPLEMENTED, not 405.
    status, body = call(server, "PUT", f"{API}/runs")
    assert (status, body) == (501, {"code": 12, "message": "Method Not Allowed"})
    # Outside /apis/, KFP's gorilla mux answers its own plain-text 404.
    assert call(server, "GET", "/nothing-here") == (404, "404 page not found\n")


def test_an_operation_this_server_leaves_out_is_unimplemented(server):
    status, body = call(server, "POST", f"{API}/visualizations/some-namespace", {})
    assert status == 501 and body["code"] == 12 and "does not implement" in body["message"]
    assert_valid(body, "POST", "/apis/v2beta1/visualizations/{namespace}", status)


def test_a_handler_error_carries_kfps_user_error_detail(server):
    status, body = call(server, "GET", f"{API}/runs/no-such-run")
    assert status == 404 and body["code"] == 5
    assert body["details"] == [{"@type": _STATUS, "code": 5, "message": body["message"]}]
    assert_valid(body, "GET", "/apis/v2beta1/runs/{run_id}", status)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/experiments", {"display_name": [None, None]}),  # a string field given an array
        ("/experiments", {"display_name": "x", "storage_state": "GONE"}),  # unknown enum name
        ("/experiments", {"display_name": "x", "colour": "red"}),  # unknown field
        ("/pipelines", {"name": 7}),
        ("/pipelines/create", {"pipeline": [1]}),  # a message given an array
        ("/runs", {"display_name": "r", "runtime_config": {"parameters": [1]}}),  # map field
        ("/runs", {"display_name": "r", "created_at": "yesterday"}),  # Timestamp
        ("/recurringruns", {"display_name": "j", "max_concurrency": "lots"}),  # int64
        ("/recurringruns", {"display_name": "j", "no_catchup": "yes"}),  # bool
    ],
)
def test_a_body_protojson_would_not_decode_is_invalid_argument(server, path, body):
    status, answer = call(server, "POST", f"{API}{path}", body)
    assert status == 400 and answer["code"] == 3 and answer["message"].startswith("proto:")
    assert "details" not in answer  # the gateway's own refusal, not a handler's UserError


def test_null_fields_decode_as_unset_and_int64_takes_numbers_and_strings(server):
    status, exp = call(server, "POST", f"{API}/experiments",
                       {"display_name": "nulls", "description": None})  # fmt: skip
    assert status == 200 and "description" not in exp
    # protojson takes a field's lowerCamelCase JSON name too; answers keep the proto names.
    status, exp = call(server, "POST", f"{API}/experiments", {"displayName": "camel"})
    assert status == 200 and exp["display_name"] == "camel"
    for concurrency in ("2", 2):
        body = {"display_name": "j", "max_concurrency": concurrency}
        status, answer = call(server, "POST", f"{API}/recurringruns", body)
        # decoded; then refused by the handler (no pipeline: a trigger may be left out), with
        # the detail of a handler's error (CreateJob's plain error: 500, resource_manager.go:1504)
        assert status == 500 and "details" in answer and "empty pipeline ID" in answer["message"]


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/runs", {"page_size": "2147483648"}),  # int32 out of range
        ("/runs", {"page_size": "ten"}),
        ("/pipelines/some-id", {"cascade": "yes"}),  # not one of Go's ParseBool spellings
        ("/recurringruns/some-id", {"propagation_policy": "EVENTUALLY"}),
    ],
)
def test_a_query_parameter_that_does_not_parse_is_invalid_argument(server, path, query):
    method = "DELETE" if "some-id" in path else "GET"
    status, answer = call(server, method, f"{API}{path}", query=query)
    assert status == 400 and answer["code"] == 3 and "parsing field" in answer["message"]


def test_unknown_query_parameters_are_ignored(server):
    status, answer = call(server, "GET", f"{API}/experiments", query={"colour": "red"})
    assert status == 200 and "total_size" in answer


def test_injected_faults_have_the_status_the_gateway_gives_their_code():
    for status, code, _ in faults.ERRORS:
        assert gateway.HTTP_STATUS[code] == status

"""What KFP's HTTP front (grpc-gateway) answers before and around the handlers.

This module owns the error body and its HTTP status, the decoding of request bodies and query
parameters, and the routing errors, as KFP 2.17's API server has them. What it follows:

* kubeflow/pipelines ``backend/src/apiserver/main.go`` at 7b70c7b95f68: the /apis/ paths go to
  a grpc-gateway ``runtime.ServeMux`` with ``common.CustomMarshaler()``
  (``backend/src/apiserver/common/utils.go``: ``UseProtoNames``, ``EmitUnpopulated: false``,
  ``DiscardUnknown: false``), except the multipart uploads, served by their own handler.
* grpc-gateway v2.29.0 (KFP's go.mod; commit ba9b55c1c15c) ``runtime/errors.go``:
  ``DefaultHTTPErrorHandler`` writes the google.rpc.Status ``{"code", "message", "details"}`` (no
  ``error`` field: that was the v1 gateway's) with the status ``HTTPStatusFromCode`` maps its code
  to; empty ``details`` is left out, as ``EmitUnpopulated: false`` marshals it.
  ``DefaultRoutingErrorHandler``: an unknown path is 404 NOT_FOUND "Not Found", a known path with
  another method 501 UNIMPLEMENTED "Method Not Allowed" (``runtime/mux.go``, ``ServeHTTP``).
* ``backend/src/common/util/error.go`` (``UserError.GRPCStatus``): an error of KFP's handlers
  carries one detail, a google.rpc.Status with the same code and the user-facing message.
* A body that protojson cannot decode into the request message (a field of the wrong JSON type,
  an unknown field, an unknown enum name) is refused 400 INVALID_ARGUMENT by the generated
  gateway code (``status.Errorf(codes.InvalidArgument, "%v", err)``), and so is a query
  parameter that does not parse as its field's type (``runtime.PopulateQueryParameters``).
  Query parameters that name no field are ignored.

The request messages' fields and types are read from ``kfp_server_api``, the client generated
from the same v2beta1 swagger, which kfp installs.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import cache

from aiohttp import web

# Imports inside functions: kfp_server_api takes about 80 ms to import (python -X importtime), and
# only a request's field types need it.

#: google.rpc.Code -> HTTP status, as grpc-gateway's runtime.HTTPStatusFromCode maps them.
HTTP_STATUS = {
    0: 200, 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400,
    10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401,
}  # fmt: skip
_STATUS_TYPE = "type.googleapis.com/google.rpc.Status"
#: the fields the swagger types as int64 strings (kfp_server_api: "str"); protojson takes a
#: number or a decimal string for them
_INT64 = frozenset({"max_concurrency", "interval_second", "long_value", "execution_id",
                    "pipeline_context_id", "pipeline_run_context_id"})  # fmt: skip
_INT32_MAX = 2**31 - 1


class DecodeError(ValueError):
    """A request the gateway refuses before any handler sees it (400 INVALID_ARGUMENT)."""


class UserError(Exception):
    """An error of KFP's handlers, named as KFP names it: ``util.UserError``
    (backend/src/common/util/error.go:81-99), answered as a google.rpc.Status (``user_error``):
    the Status's message is the internal chain, each ``util.Wrap`` prepending ``"<context>: "``
    (:274-282), and its one detail carries the external message (``GRPCStatus``, :292-307). Not
    kfp-bench's own ``errors.KfpApiError``, which the driver raises when such an answer stops
    it."""

    def __init__(self, code: int, internal: str, external: str | None = None) -> None:
        super().__init__(internal)
        self.code, self.internal = code, internal
        self.external = internal if external is None else external

    def wrap(self, context: str) -> UserError:
        return UserError(self.code, f"{context}: {self.internal}", self.external)

    @classmethod
    def invalid_input(cls, message: str) -> UserError:
        """NewInvalidInputError (error.go:183-186): 400 INVALID_ARGUMENT."""
        return cls(3, f"Invalid input error: {message}", message)

    @classmethod
    def with_details(cls, cause: str, external: str, kind: str, code: int) -> UserError:
        """NewBadRequestError (kind "BadRequestError", code 10 ABORTED, so 409),
        NewFailedPreconditionError ("FailedPreconditionError", 9), NewInvalidInputErrorWithDetails
        ("InvalidInputError", 3): error.go:188-223."""
        return cls(code, f"{kind}: {external}: {cause}", external)

    @classmethod
    def internal_error(cls, cause: str, message: str) -> UserError:
        """NewInternalServerError (error.go:139-147): 500, external "Internal Server Error"."""
        return cls(13, f"InternalServerError: {message}: {cause}", "Internal Server Error")

    @classmethod
    def not_found(cls, kind: str, name: str) -> UserError:
        """NewResourceNotFoundError (error.go:167-173): 404."""
        text = f"{kind} {name} not found"
        return cls(5, f"ResourceNotFoundError: {text}", text)


def status_body(code: int, message: str, *, detail: bool = True, external: str = "") -> dict:
    """The google.rpc.Status of an error; ``detail``: with the user-facing copy KFP's handler
    errors carry (``UserError.GRPCStatus``; ``external`` if given, else ``message``), not for
    the gateway's own errors."""
    body: dict = {"code": code, "message": message}
    if detail:
        body["details"] = [{"@type": _STATUS_TYPE, "code": code, "message": external or message}]
    return body


def rpc_error(code: int, message: str, *, detail: bool = True, external: str = "") -> web.Response:
    """The error answer of google.rpc ``code``, with the HTTP status the gateway gives it."""
    body = json.dumps(status_body(code, message, detail=detail, external=external))
    return web.Response(status=HTTP_STATUS[code], text=body, content_type="application/json")


def user_error(e: UserError) -> web.Response:
    """The answer to a handler's ``UserError``."""
    return rpc_error(e.code, e.internal, external=e.external)


def not_found() -> web.Response:
    return rpc_error(5, "Not Found", detail=False)


def method_not_allowed() -> web.Response:
    return rpc_error(12, "Method Not Allowed", detail=False)


_SEG = "[^/:]+"
#: the swagger's operations this local server does not serve, as (method, path pattern)
UNIMPLEMENTED = tuple(
    (method, re.compile("/apis/v2beta1/" + path.replace("{}", _SEG) + "$"))
    for method, path in (
        ("GET", "auth"),
        ("GET", "filters"),
        ("POST", "scheduledworkflows"),
        ("POST", "workflows"),
        ("POST", "visualizations/{}"),
    )
)


def routing_error(request: web.Request, status: int) -> web.Response:
    """The answer to a request no route takes (aiohttp's ``status``: 404 or 405), as KFP
    answers it: 501 for an operation of the API this server leaves out (what a gRPC server
    answers for a method without a handler), else the gateway's routing error. Outside /apis/
    KFP's gorilla mux answers its plain-text 404."""
    if not request.path.startswith("/apis/"):
        return web.Response(status=404, text="404 page not found\n")
    for method, pattern in UNIMPLEMENTED:
        if request.method == method and pattern.match(request.path):
            what = f"{method} {request.path}"
            return rpc_error(12, f"kfp-bench's local KFP server does not implement {what}")
    return method_not_allowed() if status == 405 else not_found()


# --- bodies ---------------------------------------------------------------------------------


async def decode_body(request: web.Request, message: str) -> dict:
    """The request body, checked as protojson decodes it into ``message`` (a kfp_server_api
    model name, e.g. "V2beta1Run"); fields given as null are dropped. An empty body is the
    empty message, as the gateway reads it (it ignores io.EOF)."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DecodeError(f"proto: syntax error: {e}") from None
    return _message(body, message, "")


def _message(value, message: str, where: str) -> dict:
    if not isinstance(value, dict):
        raise DecodeError(f"proto: {where or message}: expected a JSON object, got {_show(value)}")
    fields = _fields(message)
    out = {}
    for key, item in value.items():
        name = key if key in fields else _camel_names(message).get(key)
        if name is None:
            raise DecodeError(f'proto: unknown field "{key}" in {where or message}')
        if name in out:
            raise DecodeError(f'proto: duplicate field "{key}" in {where or message}')
        if item is not None:  # protojson: null is the field's default, i.e. unset
            out[name] = _value(item, fields[name], f"{where}.{name}".lstrip("."))
    return out


def _value(value, kind: str, where: str):
    name = where.rsplit(".", 1)[-1]
    if kind.startswith("list["):
        if not isinstance(value, list):
            raise DecodeError(f"proto: invalid value for list field {where}: {_show(value)}")
        return [_value(v, kind[5:-1], f"{where}[{i}]") for i, v in enumerate(value)]
    if kind.startswith("dict(str, "):
        if not isinstance(value, dict):
            raise DecodeError(f"proto: invalid value for map field {where}: {_show(value)}")
        inner = kind[len("dict(str, ") : -1]
        if inner == "object":  # map<string, google.protobuf.Value>: any JSON value
            return value
        return {k: _value(v, inner, f"{where}[{k}]") for k, v in value.items()}
    if kind == "str":
        if name in _INT64:
            return _int(value, where, 2**63 - 1)
        if not isinstance(value, str):
            raise DecodeError(f"proto: invalid value for string field {where}: {_show(value)}")
        return value
    if kind == "int":
        return _int(value, where, _INT32_MAX)
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise DecodeError(f"proto: invalid value for double field {where}: {_show(value)}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise DecodeError(f"proto: invalid value for bool field {where}: {_show(value)}")
        return value
    if kind == "datetime":
        if not isinstance(value, str) or not _rfc3339(value):
            raise DecodeError(f"proto: invalid google.protobuf.Timestamp value {_show(value)}")
        return value
    if kind == "object":  # google.protobuf.Struct (pipeline_spec)
        if not isinstance(value, dict):
            raise DecodeError(f"proto: invalid value for Struct field {where}: {_show(value)}")
        return value
    enum = _enum(kind)
    if enum is not None:
        if isinstance(value, int) and not isinstance(value, bool):
            return value  # proto3 enums are open: any number decodes
        if not isinstance(value, str) or value not in enum:
            raise DecodeError(f"proto: invalid value for enum field {where}: {_show(value)}")
        return value
    if kind == "ProtobufAny":
        if not isinstance(value, dict):
            raise DecodeError(f"proto: invalid value for Any field {where}: {_show(value)}")
        return value
    return _message(value, kind, where)


def _int(value, where: str, limit: int) -> int | str:
    text = value if isinstance(value, str) else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if text is not None and re.fullmatch(r"-?\d+", text.strip()):
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or not -limit - 1 <= value <= limit:
        raise DecodeError(f"proto: invalid value for integer field {where}: {_show(value)}")
    return text if text is not None else value


def _rfc3339(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in text


def _show(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


@cache
def _fields(message: str) -> dict[str, str]:
    """JSON field name -> openapi-generator type of a kfp_server_api model."""
    import kfp_server_api

    model = getattr(kfp_server_api.models, message)
    return {model.attribute_map[k]: t for k, t in model.openapi_types.items()}


@cache
def _camel_names(message: str) -> dict[str, str]:
    """lowerCamelCase JSON name -> proto field name: protojson accepts either spelling (the
    handlers see the proto names, which KFP answers with: UseProtoNames)."""
    out = {}
    for name in _fields(message):
        head, *rest = name.split("_")
        out[head + "".join(w[:1].upper() + w[1:] for w in rest)] = name
    return out


@cache
def _enum(kind: str) -> frozenset[str] | None:
    import kfp_server_api

    model = getattr(kfp_server_api.models, kind, None)
    values = getattr(model, "allowable_values", None)
    return frozenset(values) if values else None


# --- query parameters -----------------------------------------------------------------------

#: query parameter -> its field's type, for the v2beta1 API's parameters that are not strings
_QUERY = {
    "page_size": "int32",
    "cascade": "bool",
    "propagation_policy": ("DELETE_PROPAGATION_POLICY_UNSPECIFIED", "FOREGROUND", "BACKGROUND",
                           "ORPHAN"),
    "resources": ("UNASSIGNED_RESOURCES", "VIEWERS"),
    "verb": ("UNASSIGNED_VERB", "CREATE", "GET", "DELETE"),
}  # fmt: skip
_BOOLS = frozenset("1 t T TRUE true True 0 f F FALSE false False".split())  # Go's ParseBool


def check_query(request: web.Request) -> None:
    """DecodeError for a query parameter that does not parse as its field's type, as
    ``runtime.PopulateQueryParameters`` refuses it (Go's strconv: ParseInt, ParseBool)."""
    for name, value in request.query.items():
        kind = _QUERY.get(name)
        if kind == "int32":
            number = int(value) if re.fullmatch(r"[+-]?\d+", value) else None
            if number is None or not -_INT32_MAX - 1 <= number <= _INT32_MAX:
                raise DecodeError(f'parsing field "{name}": strconv.ParseInt: parsing {value!r}: '
                                  "invalid syntax or value out of range")  # fmt: skip
        elif kind == "bool":
            if value not in _BOOLS:
                raise DecodeError(f'parsing field "{name}": strconv.ParseBool: parsing {value!r}: '
                                  "invalid syntax")  # fmt: skip
        elif isinstance(kind, tuple):
            if value not in kind and not re.fullmatch(r"-?\d+", value):
                raise DecodeError(f'parsing field "{name}": {value!r} is not a valid value')

"""A strict check of response bodies against the official v2beta1 swagger's definitions.

No schema library is installed, so this walks the Swagger 2.0 subset the KFP swagger uses:
``$ref``, ``type`` (object, array, string, integer, number, boolean), ``enum``, ``properties``
(unknown properties are errors: a misspelt field name must not pass), ``additionalProperties``,
``items`` and ``format: date-time`` / ``int64`` (strings in proto3 JSON). It returns the list of
problems, each with the JSON path at fault.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache

from tests.paths import SWAGGER


@lru_cache(maxsize=1)
def swagger() -> dict:
    return json.loads(SWAGGER.read_text())


def response_schema(method: str, path: str, status: int = 200) -> dict:
    """The schema of ``method path``'s answer with ``status`` (``default`` for errors)."""
    op = swagger()["paths"][path][method.lower()]
    answers = op["responses"]
    return (answers.get(str(status)) or answers["default"])["schema"]


def problems(body, schema: dict, where: str = "$") -> list[str]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return problems(body, swagger()["definitions"][name], where)
    kind = schema.get("type")
    if not kind and "properties" in schema:
        kind = "object"
    if not kind:
        return []  # e.g. MetadataValue.value: any JSON value
    check = _CHECKS[kind]
    return check(body, schema, where)


def _object(body, schema, where) -> list[str]:
    if not isinstance(body, dict):
        return [f"{where}: expected an object, got {type(body).__name__}"]
    out = []
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key, value in body.items():
        if props is not None and key in props:
            out += problems(value, props[key], f"{where}.{key}")
        elif isinstance(extra, dict):
            out += problems(value, extra, f"{where}.{key}")
        elif props is not None and extra is None:
            out.append(f"{where}: unknown field {key!r}")
    return out


def _array(body, schema, where) -> list[str]:
    if not isinstance(body, list):
        return [f"{where}: expected an array, got {type(body).__name__}"]
    out = []
    for i, item in enumerate(body):
        out += problems(item, schema.get("items", {}), f"{where}[{i}]")
    return out


def _string(body, schema, where) -> list[str]:
    if not isinstance(body, str):
        return [f"{where}: expected a string, got {body!r}"]
    if "enum" in schema and body not in schema["enum"]:
        return [f"{where}: {body!r} is not one of {schema['enum']}"]
    if schema.get("format") == "date-time":
        try:
            datetime.fromisoformat(body.replace("Z", "+00:00"))
        except ValueError:
            return [f"{where}: {body!r} is not an RFC3339 date-time"]
    if schema.get("format") in ("int64", "uint64"):
        if not body.lstrip("-").isdigit():
            return [f"{where}: {body!r} is not an int64 string"]
    return []


def _integer(body, schema, where) -> list[str]:
    ok = isinstance(body, int) and not isinstance(body, bool)
    return [] if ok else [f"{where}: expected an integer, got {body!r}"]


def _number(body, schema, where) -> list[str]:
    ok = isinstance(body, (int, float)) and not isinstance(body, bool)
    return [] if ok else [f"{where}: expected a number, got {body!r}"]


def _boolean(body, schema, where) -> list[str]:
    return [] if isinstance(body, bool) else [f"{where}: expected a boolean, got {body!r}"]


_CHECKS = {
    "object": _object,
    "array": _array,
    "string": _string,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
}


def assert_valid(body, method: str, path: str, status: int = 200) -> None:
    found = problems(body, response_schema(method, path, status))
    assert not found, f"{method} {path} -> {status} breaks the swagger:\n" + "\n".join(found[:20])

"""LIST semantics of the KFP API: filters, sort_by and page tokens, as KFP's MySQL store has them.

This module owns how a LIST request selects, orders and pages resources, after kubeflow/pipelines
7b70c7b95f ``backend/src/apiserver/``: ``server/list_request_util.go`` (validatedListOptions,
parseAPIFilter), ``list/list.go`` (page size, sort_by, page tokens, the ORDER BY) and
``filter/filter.go`` (predicates and their SQL). What follows from them:

* page_size: 0 is 20, above 200 is 200, below 0 is refused (list.go:468-486).
* sort_by: ``"field"``, ``"field asc"`` or ``"field desc"``, any case (list.go:247-272); ties are
  ordered by the resource's id in the same direction (list.go:300-328).
* A page token is base64 JSON holding the sort, the filter and the next row's sort value and
  id; a request with only a token reuses them, one with another sort_by or filter is refused
  (list_request_util.go:205-243).
* The filter text is URL-unescaped once more before it is parsed (list_request_util.go:157-160):
  ``+`` becomes a space, a ``%`` not followed by two hex digits is refused.
* Values compare as MySQL compares them under KFP's ``charset=utf8`` connection
  (client/sql.go:28; its default collation utf8_general_ci is case-insensitive and ignores
  trailing spaces): strings case-insensitively, a number against a string numerically (so
  ``created_at`` takes unix seconds as a string). IS_SUBSTRING is ``LIKE '%v%'``
  (filter.go:359-367): ``_`` matches any one character, ``%`` any run, ``\\`` escapes.

Bad input raises ``gateway.UserError`` with KFP's code and message; the caller wraps it.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from kfp_bench.sandbox.kfp_server.gateway import UserError

DEFAULT_PAGE_SIZE = 20  # list/list.go:466
MAX_PAGE_SIZE = 200  # list/list.go:467
_OP_NUMBERS = {1: "EQUALS", 2: "NOT_EQUALS", 3: "GREATER_THAN", 5: "GREATER_THAN_EQUALS",
               6: "LESS_THAN", 7: "LESS_THAN_EQUALS", 8: "IN", 9: "IS_SUBSTRING"}  # fmt: skip
_OPS = frozenset(_OP_NUMBERS.values())
_SCALAR = {"int_value": "int32", "long_value": "int64", "string_value": "string",
           "timestamp_value": "int64"}  # fmt: skip
_ARRAY = {"int_values": "[]int32", "long_values": "[]int64", "string_values": "[]string"}
#: filter.go's Go type names of the values (%T in its messages)
_CAMEL = {"intValue": "int_value", "longValue": "long_value", "stringValue": "string_value",
          "timestampValue": "timestamp_value", "intValues": "int_values",
          "longValues": "long_values", "stringValues": "string_values"}  # fmt: skip

Getter = Callable[[Any], Any]


def _bad(message: str) -> UserError:
    return UserError.invalid_input(message)


# --- the filter -----------------------------------------------------------------------------


def parse_filter(text: str | None) -> list[tuple[str, str, Any, str]]:
    """(operation, key, value, Go type) of each predicate of a v2beta1 Filter's JSON text, or
    raise UserError as parseAPIFilter and filter.New do (list_request_util.go:152-184,
    filter.go:375-412, :428-560)."""
    if not text:
        return []
    decoded = query_unescape(text, text)
    try:
        doc = json.loads(decoded)
    except json.JSONDecodeError as e:
        raise _bad(f"failed to parse valid filter from {go_q(text)}: proto: syntax error "
                   f"({e})") from None  # fmt: skip
    where = f"failed to parse valid filter from {go_q(text)}: proto:"
    if not isinstance(doc, dict) or set(doc) - {"predicates"}:
        extra = sorted(set(doc) - {"predicates"}) if isinstance(doc, dict) else []
        raise _bad(f'{where} unknown field "{extra[0]}"' if extra else f"{where} not an object")
    preds = doc.get("predicates") or []
    if not isinstance(preds, list):
        raise _bad(f"{where} invalid value for list field predicates")
    return [_predicate(p, where) for p in preds]


def _predicate(pred, where: str) -> tuple[str, str, Any, str]:
    if not isinstance(pred, dict):
        raise _bad(f"{where} invalid value for message field predicates")
    pred = {_CAMEL.get(k, k): v for k, v in pred.items()}
    unknown = sorted(set(pred) - {"operation", "key", *_SCALAR, *_ARRAY})
    if unknown:
        raise _bad(f'{where} unknown field "{unknown[0]}"')
    given = [k for k in (*_SCALAR, *_ARRAY) if pred.get(k) is not None]
    if len(given) > 1:
        raise _bad(f"{where} oneof value is already set ({given[0]}, {given[1]})")
    op = pred.get("operation")
    if isinstance(op, int) and not isinstance(op, bool):  # proto3 enums are open
        op = _OP_NUMBERS.get(op, "OPERATION_UNSPECIFIED")
    if op not in _OPS:
        if op in (None, "OPERATION_UNSPECIFIED"):  # toOperation's default (filter.go:500-502)
            raise _unknown("Filter.Predicate.Operation", "go_client.Predicate_Operation")
        raise _bad(f"{where} invalid value for enum field operation: {json.dumps(op)}")
    if not given:
        raise _unknown("Filter.Predicate.Value", "<nil>")
    value, kind = _operand(given[0], pred[given[0]], where)
    key = pred.get("key") or ""
    if not key:
        raise _bad(f"Predicate key cannot be empty for operation {op} and value {_go_v(value)}")
    _check(op, value, kind)
    return op, key, value, kind


def _unknown(what: str, type_name: str) -> UserError:
    """NewUnknownApiVersionError (common/util/error.go:241-247): 400."""
    text = f"Error using {what} with {type_name}"
    return UserError(3, f"UnknownApiVersionError: {text}", text)


def _operand(name: str, raw, where: str) -> tuple[Any, str]:
    if name in _ARRAY:
        values = raw.get("values") if isinstance(raw, dict) else None
        if not isinstance(raw, dict) or not isinstance(values or [], list):
            raise _bad(f"{where} invalid value for message field {name}")
        cast = str if name == "string_values" else int
        return [_cast(cast, v, where) for v in values or []], _ARRAY[name]
    if name == "timestamp_value":
        try:
            stamp = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
        except ValueError:
            bad = json.dumps(raw)
            raise _bad(f"{where} invalid google.protobuf.Timestamp value {bad}") from None
        stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
        return int(stamp.timestamp() // 1), "int64"  # filter.go:530 (AsTime().Unix())
    cast = str if name == "string_value" else int
    return _cast(cast, raw, where), _SCALAR[name]


def _cast(cast, raw, where: str):
    if cast is str:
        if not isinstance(raw, str):
            raise _bad(f"{where} invalid value for string field: {json.dumps(raw)}")
        return raw
    number = isinstance(raw, (int, str)) and not isinstance(raw, bool)
    if not number or not re.fullmatch(r"-?\d+", str(raw)):
        raise _bad(f"{where} invalid value for integer field: {json.dumps(raw)}")
    return int(raw)


def _check(op: str, value, kind: str) -> None:
    """checkPredicate (filter.go:375-398), its messages as Go prints them."""
    if op == "IN" and not kind.startswith("[]"):
        raise _bad(f"cannot use IN operator with scalar type {kind}")
    if op not in ("IN", "IS_SUBSTRING") and kind.startswith("[]"):
        raise _bad(f"cannot use scalar operator {op} on array type {kind}")
    if op == "IS_SUBSTRING" and kind != "string":
        # Go's arguments are swapped: %T of the operation (a string), %v of the value
        raise _bad(f"cannot use non string value type string with operator {_go_v(value)}")


def query_unescape(text: str, original: str) -> str:
    """Go's url.QueryUnescape: ``+`` is a space, ``%XX`` a byte, any other ``%`` an error."""
    bad = re.search(r"%(?![0-9A-Fa-f]{2})", text)
    if bad:
        escape = text[bad.start() : bad.start() + 3]
        raise _bad(f"failed to parse valid filter from {go_q(original)}: invalid URL escape "
                   f"{go_q(escape)}")  # fmt: skip
    raw = re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m[1], 16)]),
                 text.replace("+", " ").encode())  # fmt: skip
    return raw.decode("utf-8", "replace")


def go_q(text: str) -> str:
    """``text`` quoted as Go's ``%q`` shows it in the API server's messages."""
    return json.dumps(text, ensure_ascii=False)


def _go_v(value) -> str:
    return "[" + " ".join(map(str, value)) + "]" if isinstance(value, list) else str(value)


def matcher(preds, fields: dict[str, Getter]) -> Callable[[Any], bool]:
    """A row test ANDing the predicates; UserError for a key the resource has no column for
    (filter.go:184-201, ReplaceKeys)."""
    tests = []
    for op, key, value, _kind in preds:
        if key not in fields:
            raise _bad(f"no support for filtering on unrecognized field {go_q(key)}")
        tests.append(_test(op, fields[key], value))
    return lambda row: all(t(row) for t in tests)


def _test(op: str, get: Getter, value) -> Callable[[Any], bool]:
    if op == "IN":
        return lambda row: any(_compare(get(row), w) == 0 for w in value)
    if op == "IS_SUBSTRING":
        pattern = _like(f"%{value}%")
        return lambda row: pattern.fullmatch(_text(get(row))) is not None
    check = _COMPARE[op]
    if op in ("EQUALS", "NOT_EQUALS") and isinstance(value, str):
        # the storage_state predicate of every UI list: a string column against a string,
        # compared by weight without the general comparison's number checks
        weight, equal = collate(value), op == "EQUALS"

        def test(row) -> bool:
            have = get(row)
            if type(have) is str:
                return (have.rstrip(" ").upper() == weight) is equal
            return check(_compare(have, value))

        return test
    return lambda row: check(_compare(get(row), value))


_COMPARE = {
    "EQUALS": lambda c: c == 0,
    "NOT_EQUALS": lambda c: c != 0,
    "GREATER_THAN": lambda c: c > 0,
    "GREATER_THAN_EQUALS": lambda c: c >= 0,
    "LESS_THAN": lambda c: c < 0,
    "LESS_THAN_EQUALS": lambda c: c <= 0,
}


def _text(value) -> str:
    return "" if value is None else str(value)


def _compare(have, want) -> int:
    """-1, 0 or 1 as MySQL compares a column with a value: numerically when either is a number
    (a string by its numeric prefix, "abc" being 0), else case-insensitively without trailing
    spaces (utf8_general_ci, PAD SPACE)."""
    if have is None:
        have = ""
    if isinstance(have, (int, float)) or isinstance(want, (int, float)):
        a, b = _number(have), _number(want)
    else:
        a, b = collate(str(have)), collate(str(want))
    return (a > b) - (a < b)


def _number(value) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    head = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", str(value))
    return float(head.group(0)) if head else 0.0


def collate(text: str) -> str:
    """utf8_general_ci's weight, near enough: upper case, trailing spaces ignored."""
    return text.rstrip(" ").upper()


@functools.lru_cache(maxsize=256)
def _like(pattern: str) -> re.Pattern:
    """A LIKE pattern as a regex, case-insensitive: ``%``, ``_``, and ``\\`` escaping."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


# --- sorting and pages ----------------------------------------------------------------------


def _sort(sort_by: str | None, fields: dict[str, Getter], model: str) -> tuple[str, bool]:
    """(field, descending), as list.NewOptions reads sort_by (list.go:247-272)."""
    words = (sort_by or "").lower().split()
    if len(words) > 2 or (len(words) == 2 and words[1] not in ("asc", "desc")):
        raise _bad(f"Received invalid sort by format {go_q(sort_by or '')}. Supported format: "
                   '"field_name", "field_name desc", or "field_name asc"')  # fmt: skip
    if words and words[0] not in fields:
        raise _bad(f"Invalid sorting field: {go_q(words[0])} on listable type {model}")
    return (words[0] if words else "created_at"), len(words) == 2 and words[1] == "desc"


def _page_size(page_size) -> int:
    size = int(page_size or 0)
    if size < 0:
        raise _bad(f"The page size should be greater than 0. Got {size}")
    return DEFAULT_PAGE_SIZE if size == 0 else min(size, MAX_PAGE_SIZE)


def page(
    rows: Sequence,
    *,
    fields: dict[str, Getter],
    key: Getter,
    model: str,
    filter_text: str | None,
    sort_by: str | None,
    page_size: int | str | None,
    page_token: str | None,
) -> tuple[list, int, str]:
    """The rows of one page, the total matching the filter, and the next page token ("": last).
    ``key``: the row's id (its primary key); ``model``: KFP's model name for messages."""
    if page_token:  # list_request_util.go:220-243
        size = _page_size(page_size)
        opts = _decode_token(page_token)
        if sort_by or filter_text:
            asked = _options(fields, model, filter_text, sort_by, page_size)
            if [opts[k] for k in ("field", "desc", "filter")] != [
                asked[k] for k in ("field", "desc", "filter")
            ]:  # noqa: E501
                raise _bad("page token does not match the supplied sort by and/or filtering "
                           "criteria. Either specify the same criteria or leave the latter "
                           "empty if page token is specified")  # fmt: skip
    else:
        opts = _options(fields, model, filter_text, sort_by, page_size)
        size = _page_size(page_size)
    if opts["field"] not in fields:
        raise UserError.with_details(
            "no such sort field", "Invalid page token", "InvalidInputError", 3
        )
    test = matcher([tuple(p) for p in opts["filter"]], fields)
    get, desc = fields[opts["field"]], opts["desc"]
    matching = [r for r in rows if test(r)]
    ordered = _ordered(matching, get, key, desc, opts["after"])
    chunk, rest = ordered[:size], ordered[size:]
    token = ""
    if rest:  # list.go: one more row than asked is read; it is the next page's first
        nxt = rest[0]
        token = _encode_token({**opts, "after": [get(nxt), key(nxt)]})
    return chunk, len(matching), token


def _options(fields, model: str, filter_text, sort_by, page_size) -> dict:
    """Options of a first page, checked in the order of list_request_util.go:206-218 and
    list.go:247-289: the filter's form, the page size, sort_by, then the filter's keys."""
    preds = parse_filter(filter_text)
    _page_size(page_size)
    field, desc = _sort(sort_by, fields, model)
    matcher(preds, fields)
    return {"field": field, "desc": desc, "filter": _jsonish(preds), "after": None}


def _ordered(rows: list, get: Getter, key: Getter, desc: bool, after) -> list:
    """``rows`` in the ORDER BY of list.go:320-328 (the sort field, then the id, both in the
    sort's direction), from the token's ``after`` on. Each row's sort key is computed once
    (n log n comparisons of tuples, as an index scan would give), unless a column mixes
    numbers and strings, which only the pairwise MySQL comparison orders right."""
    values, ids = _sort_keys(map(get, rows)), _sort_keys(map(key, rows))
    if values is None or ids is None:
        order = functools.cmp_to_key(lambda a, b: _row_cmp(a, b, get, key))
        ordered = sorted(rows, key=order, reverse=desc)
        if after is None:
            return ordered
        after = tuple(after)
        return [r for r in ordered if _at_or_after((get(r), key(r)), after, desc)]
    pairs = list(zip(values, ids, strict=True))
    index = sorted(range(len(rows)), key=pairs.__getitem__, reverse=desc)
    if after is not None:
        mark = _sort_keys(after)
        if mark is None or (pairs and mark[0][0] != pairs[0][0][0]):
            return [r for r in (rows[i] for i in index)
                    if _at_or_after((get(r), key(r)), tuple(after), desc)]  # fmt: skip
        mark = tuple(mark)
        index = [i for i in index if (pairs[i] <= mark if desc else pairs[i] >= mark)]
    return [rows[i] for i in index]


def _sort_keys(values) -> list[tuple] | None:
    """Each value's place in MySQL's order as a tuple, (0, number) or (1, collation weight as
    ``collate`` makes it); None when the values mix numbers and strings or hold anything else
    (a bool, say): only the pairwise comparison orders those as MySQL would."""
    out, kinds = [], set()
    for v in values:
        t = type(v)
        if t is str:
            out.append((1, v.rstrip(" ").upper()))
        elif t is int or t is float:
            out.append((0, v))
        elif v is None:
            out.append((1, ""))
        else:
            return None
        kinds.add(out[-1][0])
    return None if len(kinds) > 1 else out


def _row_cmp(a, b, get: Getter, key: Getter) -> int:
    c = _compare(get(a), get(b))
    return c if c else _compare(key(a), key(b))


def _at_or_after(row: tuple, after: tuple, desc: bool) -> bool:
    """The WHERE of a next page (list.go:300-318): past the sort value, or equal to it and the
    id at or past the token's."""
    c = _compare(row[0], after[0]) or _compare(row[1], after[1])
    return c <= 0 if desc else c >= 0


def _jsonish(value):
    return json.loads(json.dumps(value))


def _encode_token(opts: dict) -> str:
    return base64.b64encode(json.dumps(opts, separators=(",", ":")).encode()).decode()


def _decode_token(token: str) -> dict:
    """The token's options; "Invalid page token" as list.go:116-124 words it otherwise."""
    try:
        opts = json.loads(base64.b64decode(token.encode(), validate=True))
        if not isinstance(opts, dict) or set(opts) != {"field", "desc", "filter", "after"}:
            raise ValueError("not a page token of this server")
    except (binascii.Error, ValueError, UnicodeDecodeError) as e:
        raise UserError.with_details(str(e), "Invalid page token", "InvalidInputError", 3) from None
    return opts

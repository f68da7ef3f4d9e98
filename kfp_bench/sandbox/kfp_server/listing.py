"""LIST semantics of the KFP API: JSON filters, ``sort_by`` and page tokens, over in-memory rows.

This module owns how a LIST request selects, orders and pages resources. A filter is the KFP
``v2beta1Filter`` JSON (``{"predicates": [{"operation", "key", <value>}]}``): operations by name
(``EQUALS``) or number (``1``, as kfp.Client sends them), values as ``string_value``,
``int_value``, ``long_value``, ``timestamp_value`` (RFC3339) or ``string_values`` /
``int_values`` / ``long_values`` for ``IN``, in snake_case or camelCase (kfp.Client sends
``stringValue``). Predicates are ANDed. ``sort_by`` is ``"field"`` or ``"field desc"``; ties
keep creation order. A page token is opaque base64 JSON holding the position after the last row
served and the query it belongs to, so paging stays right while rows are added or deleted.

Bad input raises ``ValueError`` (the server answers 400 INVALID_ARGUMENT with its message).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from kfp_bench.sandbox.kfp_server.timefmt import parse_rfc3339

_OPS = {
    "EQUALS": 1,
    "NOT_EQUALS": 2,
    "GREATER_THAN": 3,
    "GREATER_THAN_EQUALS": 5,
    "LESS_THAN": 6,
    "LESS_THAN_EQUALS": 7,
    "IN": 8,
    "IS_SUBSTRING": 9,
}
_OP_NAMES = {v: k for k, v in _OPS.items()}
MAX_PAGE_SIZE = 1000  # more than KFP's own limit of 200 per page is allowed, and capped here
DEFAULT_PAGE_SIZE = 20

Getter = Callable[[Any], Any]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _value(pred: dict, name: str):
    return pred.get(name, pred.get(_camel(name)))


def parse_filter(text: str | None, fields: dict[str, Getter]) -> list[Callable[[Any], bool]]:
    """Predicates (row -> bool) from a filter's JSON text; ``fields`` maps keys to getters."""
    if not text:
        return []
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"filter is not JSON ({e}): {text[:200]!r}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("predicates", []), list):
        raise ValueError('filter must be {"predicates": [...]}')
    return [_predicate(p, fields) for p in doc.get("predicates", [])]


def _predicate(pred: dict, fields: dict[str, Getter]) -> Callable[[Any], bool]:
    if not isinstance(pred, dict):
        raise ValueError(f"filter predicate {pred!r} is not an object")
    op = pred.get("operation")
    op = _OP_NAMES.get(op, op) if isinstance(op, int) else op
    if op not in _OPS:
        raise ValueError(f"filter predicate {pred!r}: unknown operation {op!r}")
    key = pred.get("key")
    if key not in fields:
        raise ValueError(f"filter predicate on key {key!r}: filterable keys are {sorted(fields)}")
    get = fields[key]
    want = _operand(pred, op == "IN")
    if op == "IN":
        values = set(want)
        return lambda row: get(row) in values
    if op == "IS_SUBSTRING":
        return lambda row: str(want) in str(get(row) or "")
    compare = _COMPARE[op]

    def test(row) -> bool:
        have = get(row)
        if have is None:
            return op == "NOT_EQUALS"
        try:
            return compare(have, want)
        except TypeError:
            return False

    return test


_COMPARE = {
    "EQUALS": lambda a, b: a == b,
    "NOT_EQUALS": lambda a, b: a != b,
    "GREATER_THAN": lambda a, b: a > b,
    "GREATER_THAN_EQUALS": lambda a, b: a >= b,
    "LESS_THAN": lambda a, b: a < b,
    "LESS_THAN_EQUALS": lambda a, b: a <= b,
}


def _operand(pred: dict, many: bool):
    if many:
        for name, cast in (("string_values", str), ("int_values", int), ("long_values", int)):
            holder = _value(pred, name)
            if holder is not None:
                return [cast(v) for v in (holder.get("values") or [])]
        raise ValueError(f"filter predicate {pred!r}: IN needs string_values, int_values, ...")
    for name, cast in (("string_value", str), ("int_value", int), ("long_value", int)):
        v = _value(pred, name)
        if v is not None:
            return cast(v)
    ts = _value(pred, "timestamp_value")
    if ts is not None:
        return parse_rfc3339(ts)
    raise ValueError(f"filter predicate {pred!r} has no value (string_value, int_value, ...)")


def sort_key(sort_by: str | None, fields: dict[str, Getter], default: str) -> tuple[str, bool]:
    """(field, descending) from ``sort_by``, e.g. "created_at desc"."""
    parts = (sort_by or default).split()
    if not parts or len(parts) > 2 or (len(parts) == 2 and parts[1].lower() not in ("asc", "desc")):
        raise ValueError(f"sort_by {sort_by!r} must be 'field' or 'field desc'")
    if parts[0] not in fields:
        raise ValueError(f"sort_by {sort_by!r}: sortable fields are {sorted(fields)}")
    return parts[0], len(parts) == 2 and parts[1].lower() == "desc"


def page(
    rows: Sequence,
    *,
    fields: dict[str, Getter],
    seq: Getter,
    filter_text: str | None,
    sort_by: str | None,
    page_size: int | str | None,
    page_token: str | None,
    default_sort: str = "created_at",
) -> tuple[list, int, str]:
    """The rows of one page, the total matching the filter, and the next page token ("": last)."""
    size = _page_size(page_size)
    predicates = parse_filter(filter_text, fields)
    field, desc = sort_key(sort_by, fields, default_sort)
    get = fields[field]
    matching = [r for r in rows if all(p(r) for p in predicates)]
    # seq is unique, so rows themselves are never compared
    keyed = sorted((((_orderable(get(r)), seq(r)), r) for r in matching), key=lambda kr: kr[0])
    if desc:
        keyed.reverse()
    query = [filter_text or "", f"{field} {'desc' if desc else 'asc'}"]
    start = 0
    if page_token:
        after = _decode_token(page_token, query)
        keys = [k for k, _ in keyed]
        if desc:
            # keys are descending: count those >= after, by bisecting the negated order
            start = len(keys) - bisect.bisect_left(keys[::-1], after)
        else:
            start = bisect.bisect_right(keys, after)
    chunk = keyed[start : start + size]
    token = ""
    if start + size < len(keyed) and chunk:
        token = _encode_token(chunk[-1][0], query)
    return [r for _, r in chunk], len(matching), token


def _orderable(value) -> tuple:
    """A key that orders None first, numbers and strings apart, without TypeErrors."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    if isinstance(value, datetime):
        return (1, value.timestamp())
    return (2, str(value))


def _page_size(page_size) -> int:
    if page_size in (None, "", 0, "0"):
        return DEFAULT_PAGE_SIZE
    try:
        size = int(page_size)
    except (TypeError, ValueError):
        raise ValueError(f"page_size {page_size!r} is not an integer") from None
    if size < 0:
        raise ValueError(f"page_size {size} must be >= 0")
    return min(size, MAX_PAGE_SIZE)


def _encode_token(key: tuple, query: list[str]) -> str:
    raw = json.dumps({"after": key, "query": query}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_token(token: str, query: list[str]) -> tuple:
    try:
        doc = json.loads(base64.urlsafe_b64decode(token.encode()))
        after, their_query = doc["after"], doc["query"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise ValueError(f"page_token {token[:40]!r} is not a token this server issued") from None
    if their_query != query:
        raise ValueError(
            "page_token was issued for another filter or sort_by; repeat the first request's "
            "filter and sort_by with it"
        )
    (rank, value), seq = after
    return ((rank, value), seq)

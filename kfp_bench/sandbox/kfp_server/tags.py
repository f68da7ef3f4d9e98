"""Tags of pipelines and pipeline versions: their checks, the upload's ``tags`` query, the
``tags.<key>`` list filter, and the clear-all intent of a PATCH.

After kubeflow/pipelines 7b70c7b95f ``backend/src/apiserver/``: ``model/pipeline_tags.go``
(ValidateTags: at most 20 tags, a key non-empty, without ``.``, keys and values at most 63
characters), ``server/pipeline_upload_server.go:156-166, :316-325`` (the upload's ``tags`` query
parameter, a JSON map), ``server/pipeline_server.go:542-600`` (extractTagFiltersFromFilterSpec:
EQUALS on a string only, the last predicate of a key winning), ``storage/pipeline_store.go:332-343``
(one ``UUID IN (SELECT ... WHERE TagKey = ? AND TagValue = ?)`` per tag, compared under MySQL's
case-insensitive collation) and ``main.go:366-400`` (clearTagsMiddleware: only a body whose
``tags`` is the exact text ``{}`` clears them).
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from kfp_bench.sandbox.kfp_server.gateway import UserError
from kfp_bench.sandbox.kfp_server.listing import collate, go_q, parse_filter, query_unescape

MAX_KEY = 63  # pipeline_tags.go:27
MAX_VALUE = 63  # pipeline_tags.go:31
MAX_TAGS = 20  # pipeline_tags.go:34
#: pipeline_upload_server.go:162 and :322, the text of a tags query that is not a JSON map
BAD_UPLOAD_TAGS = (
    "Failed to parse tags query parameter. Expected JSON object with string keys and values"
)


def check(tags: dict[str, str] | None) -> None:
    """UserError 400 as ValidateTags (pipeline_tags.go:37-56) words it. Go walks the map in no
    fixed order; with more than one bad key, this names the first given."""
    if not tags:
        return
    if len(tags) > MAX_TAGS:
        raise UserError.invalid_input(
            f"number of tags ({len(tags)}) exceeds maximum of {MAX_TAGS} per entity"
        )
    for key, value in tags.items():
        if key == "":
            raise UserError.invalid_input("tag key cannot be empty")
        if "." in key:
            raise UserError.invalid_input(f"tag key {go_q(key)} must not contain '.' character")
        if len(key) > MAX_KEY:  # utf8.RuneCountInString: code points, as len() of a str
            raise UserError.invalid_input(
                f"tag key {go_q(key)} exceeds maximum length of {MAX_KEY} characters"
            )
        if len(value) > MAX_VALUE:
            raise UserError.invalid_input(
                f"tag value {go_q(value)} for key {go_q(key)} exceeds maximum length of "
                f"{MAX_VALUE} characters"
            )


def from_query(text: str | None) -> dict[str, str] | None:
    """The upload's ``tags`` query as Go's json.Unmarshal into map[string]string reads it
    (None for absent, empty or ``null``; a JSON null value is ""), or ValueError."""
    if not text:
        return None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(BAD_UPLOAD_TAGS) from None
    if doc is None:
        return None
    if not isinstance(doc, dict) or not all(v is None or isinstance(v, str) for v in doc.values()):
        raise ValueError(BAD_UPLOAD_TAGS)
    return {k: v or "" for k, v in doc.items()}


def split_filter(text: str | None) -> tuple[str | None, dict[str, str]]:
    """(the filter without its ``tags.`` predicates, {tag key: value}) as
    extractTagFiltersFromFilterSpec gives them (pipeline_server.go:550-600); UserError 400 for a
    tag predicate that is not EQUALS on a string. A filter without tag predicates is kept as
    given, so that its own errors are the lister's."""
    if not text:
        return text, {}
    try:
        raw = json.loads(query_unescape(text, text))
    except (UserError, json.JSONDecodeError):
        raise UserError.invalid_input(f"failed to parse filter spec: {text}") from None
    preds = raw.get("predicates") if isinstance(raw, dict) else None
    if not isinstance(preds, list) or not any(_is_tag(p) for p in preds):
        return text, {}
    parse_filter(text)  # protojson.Unmarshal first: the same refusals as any filter
    found: dict[str, str] = {}
    rest = []
    for p in preds:
        if not _is_tag(p):
            rest.append(p)
            continue
        key = p["key"]
        if p.get("operation") not in ("EQUALS", 1):
            op = p.get("operation") or "OPERATION_UNSPECIFIED"
            raise UserError.invalid_input("only EQUALS operation is supported for tag filtering, "
                                         f"got {op} for key {go_q(key)}")  # fmt: skip
        value = p.get("string_value", p.get("stringValue"))
        if not isinstance(value, str):
            raise UserError.invalid_input(f"tag filter value must be a string for key {go_q(key)}")
        found[key[len("tags.") :]] = value
    # re-serialized and url.QueryEscape'd (:593-599): the lister unescapes it once more
    rest_text = urllib.parse.quote_plus(json.dumps({"predicates": rest})) if rest else None
    return rest_text, found


def _is_tag(pred: Any) -> bool:
    return isinstance(pred, dict) and str(pred.get("key") or "").startswith("tags.")


def matches(tags: dict[str, str], wanted: dict[str, str]) -> bool:
    """Every wanted tag present, key and value compared as MySQL's utf8_general_ci does."""
    have = {collate(k): collate(v) for k, v in tags.items()}
    return all(have.get(collate(k)) == collate(v) for k, v in wanted.items())


def clears(raw: bytes) -> bool:
    """clearTagsMiddleware (main.go:374-392): the top-level ``tags`` of the body is the exact
    text ``{}`` (the last one, as Go's map decoding keeps it). ``{ }`` does not clear."""
    try:
        text = raw.decode()
        json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    fields = _raw_fields(text)
    return fields is not None and fields.get("tags") == "{}"


def _raw_fields(text: str) -> dict[str, str] | None:
    """The raw JSON text of each member of a top-level object (json.RawMessage), or None."""
    decoder = json.JSONDecoder()
    i = _skip(text, 0)
    if not text.startswith("{", i):
        return None
    out: dict[str, str] = {}
    i = _skip(text, i + 1)
    while i < len(text) and text[i] != "}":
        key, i = decoder.raw_decode(text, i)
        i = _skip(text, _skip(text, i) + 1)  # past the colon
        _, end = decoder.raw_decode(text, i)
        out[key] = text[i:end]
        i = _skip(text, end)
        i = _skip(text, i + 1) if text.startswith(",", i) else i
    return out


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i

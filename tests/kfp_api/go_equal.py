"""Go's assert.Equal over a generated REST model, on the wire JSON.

A key the server leaves out is the Go field's zero value; a key it sends that the expected
model leaves at zero must be zero too (an empty object or list is a non-nil pointer, map or
slice in Go, so it is not zero).
"""

from __future__ import annotations

_ZERO = (None, "", 0, False)


def assert_go_equal(actual: dict, expected: dict) -> None:
    """Every expected field equal, every other field of ``actual`` zero."""
    diff = {}
    for key, want in expected.items():
        got = actual.get(key)
        if not (got == want or (got in _ZERO and want in _ZERO)):
            diff[key] = (got, want)
    for key, got in actual.items():
        if key not in expected and got not in _ZERO:
            diff[key] = (got, "<zero>")
    assert not diff, f"fields differ (actual, expected): {diff}"

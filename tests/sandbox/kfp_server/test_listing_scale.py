"""``listing.page`` at the size of a full database: the order of the key-based sort is the
order of MySQL's pairwise comparison (the reference kept in ``listing``), page tokens walk every
row once, and each row's sort value is read a constant number of times (no n log n getter
calls, whatever the machine's load: counted, not timed)."""

from __future__ import annotations

import functools
import json
import random

import pytest

from kfp_bench.sandbox.kfp_server import listing

NAMES = ["run", "Run", "run ", "RUN-1", "run-1", "a", "B", "b", "", "zz", "run_2", "run-10"]


class Row:
    def __init__(self, i: int, rng: random.Random):
        self.id = f"{rng.randrange(16**8):08x}-{i}"
        self.name = rng.choice(NAMES)
        self.created_at = 1_700_000_000 + rng.randrange(50)  # ties: whole seconds
        self.state = rng.choice(["AVAILABLE", "ARCHIVED"])


def rows(n: int, seed: int = 7) -> list[Row]:
    rng = random.Random(seed)
    return [Row(i, rng) for i in range(n)]


FIELDS = {
    "id": lambda r: r.id,
    "name": lambda r: r.name,
    "created_at": lambda r: r.created_at,
    "storage_state": lambda r: r.state,
}
KEY = FIELDS["id"]


def reference(items: list[Row], field: str, desc: bool) -> list[str]:
    """The pairwise comparison's order (``listing._compare`` of the field, then the id)."""
    get = FIELDS[field]

    def cmp(a, b):
        return listing._compare(get(a), get(b)) or listing._compare(KEY(a), KEY(b))

    return [r.id for r in sorted(items, key=functools.cmp_to_key(cmp), reverse=desc)]


def walk(items: list[Row], sort_by: str, size: int, filter_text: str | None = None):
    """Every page, following the tokens; (the ids in order, the totals answered)."""
    out, totals, token = [], set(), None
    while True:
        chunk, total, token = listing.page(
            items, fields=FIELDS, key=KEY, model="Run", filter_text=None if token else filter_text,
            sort_by=None if token else sort_by, page_size=size, page_token=token,
        )  # fmt: skip
        out += [r.id for r in chunk]
        totals.add(total)
        if not token:
            return out, totals


@pytest.mark.parametrize("sort_by", ["created_at desc", "created_at", "name", "name desc"])
def test_order_and_tokens_match_mysql_comparison(sort_by):
    items = rows(1500)
    field, _, direction = sort_by.partition(" ")
    ids, totals = walk(items, sort_by, 100)
    assert ids == reference(items, field, direction == "desc")
    assert totals == {1500}


@pytest.mark.parametrize(
    ("pred", "keep"),
    [
        ({"key": "storage_state", "operation": "NOT_EQUALS", "string_value": "archived"},
         lambda r: r.state != "ARCHIVED"),
        # utf8_general_ci: case and trailing spaces ignored
        ({"key": "name", "operation": "EQUALS", "string_value": "RUN"},
         lambda r: r.name in ("run", "Run", "run ")),
        # a number column against a string: compared as numbers
        ({"key": "created_at", "operation": "EQUALS", "string_value": "1700000007"},
         lambda r: r.created_at == 1_700_000_007),
    ],
)  # fmt: skip
def test_filtered_walk(pred, keep):
    items = rows(800)
    ids, totals = walk(items, "created_at desc", 50, json.dumps({"predicates": [pred]}))
    kept = [r for r in items if keep(r)]
    assert kept and ids == reference(kept, "created_at", True) and totals == {len(kept)}


def test_each_sort_value_is_read_once_per_row():
    items, reads = rows(4000), [0]

    def counted(r):
        reads[0] += 1
        return r.created_at

    fields = {**FIELDS, "created_at": counted}
    listing.page(items, fields=fields, key=KEY, model="Run", filter_text=None,
                 sort_by="created_at desc", page_size=20, page_token=None)  # fmt: skip
    # one read per row for the sort, two for the next page's token; a comparison sort would
    # read two per comparison: about 2 n log2 n (~96,000 here)
    assert reads[0] <= len(items) + 2

"""The driver's LISTs follow KFP's own list rules, not a looser server's (issue 25).

A loopback server lists runs as KFP's API server does (kubeflow/pipelines 7b70c7b95f): at most
200 a page whatever page_size asks (``list/list.go:487-502``, validatePageSize), a next page
token that carries the first page's filter, and a token sent beside another filter refused with
400 (``server/list_request_util.go:192-213``). The local KFP API is not the yardstick here: it is
being made to follow these rules itself.
"""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest

from kfp_bench.kfp.api import KfpApi
from tests.loopback import Handler, serving

RUNS = [{"run_id": f"r{i:04d}", "display_name": f"kfp-bench-b-{i:05d}"} for i in range(450)]
RUNS += [{"run_id": f"o{i:04d}", "display_name": f"someone-else-{i}"} for i in range(30)]
SEEN: list[dict] = []


class _Kfp(Handler):
    def do_GET(self):
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        SEEN.append(q)
        size = min(int(q.get("page_size") or 10), 200)  # list.go:497-499: cut, not refused
        filt, start = q.get("filter", ""), 0
        if q.get("page_token"):
            token = json.loads(base64.b64decode(q["page_token"]))
            if filt and filt != token["filter"]:  # list_request_util.go:201-211
                return self.send(400, {"code": 3, "message": "page token does not match"})
            filt, start = token["filter"], token["next"]
        rows = RUNS
        if filt:
            part = json.loads(filt)["predicates"][0]["string_value"]
            rows = [r for r in RUNS if part in r["display_name"]]
        page, body = rows[start : start + size], {}
        body["runs"] = page
        if start + size < len(rows):
            token = json.dumps({"filter": filt, "next": start + size}).encode()
            body["next_page_token"] = base64.b64encode(token).decode()
        self.send(200, body)


@pytest.fixture
def api():
    SEEN.clear()
    with serving(_Kfp) as url:
        client = KfpApi(url)
        yield client
        client.close()


def test_an_experiments_runs_come_in_pages_of_200(api):
    runs = api.experiment_runs("e1")
    assert runs is not None and len(runs) == len(RUNS)
    assert len(SEEN) == 3 and all(0 < int(q["page_size"]) <= 200 for q in SEEN)


def test_runs_by_name_follow_the_token_with_its_filter(api):
    found, token = [], ""
    while True:
        r = api.list_runs_named("kfp-bench-b-", token)
        assert r.ok, r.call.error
        found += r.body.get("runs") or []
        token = r.body.get("next_page_token") or ""
        if not token:
            break
    assert len(found) == 450 and all(0 < int(q["page_size"]) <= 200 for q in SEEN)
    # the filter sent beside each token is the first page's: KFP takes it (or none) with it
    assert len({q["filter"] for q in SEEN}) == 1

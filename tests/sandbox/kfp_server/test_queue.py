"""Real queueing under --max-parallel-runs, and simulated runs at scale."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import yaml

from kfp_bench.sandbox.kfp_server import start_kfp_server

from .support import API, PIPELINES, call, execution, wait_run


def _body(name: str, spec: dict) -> dict:
    return {"display_name": name, "pipeline_spec": spec}


def test_one_slot_queues_the_second_run():
    spec = yaml.safe_load((PIPELINES / "hello_world.yaml").read_text())
    # no persistence-agent delay: this checks the queue, not the agent
    with start_kfp_server(
        max_parallel_runs=1, simulate="auto:fixed(0.8)", persistence_delay=0
    ) as s:
        first = call(s, "POST", f"{API}/runs", _body("first", spec))[1]
        second = call(s, "POST", f"{API}/runs", _body("second", spec))[1]
        time.sleep(0.3)
        assert call(s, "GET", f"{API}/runs/{first['run_id']}")[1]["state"] == "RUNNING"
        assert call(s, "GET", f"{API}/runs/{second['run_id']}")[1]["state"] == "PENDING"
        done1 = wait_run(s, first["run_id"])
        done2 = wait_run(s, second["run_id"])
    assert done1["state"] == done2["state"] == "SUCCEEDED"
    running2 = next(h["update_time"] for h in done2["state_history"] if h["state"] == "RUNNING")
    assert running2 >= done1["finished_at"]  # RFC3339 UTC strings sort as times


async def _create_many(url: str, spec: dict, n: int, concurrency: int) -> list[int]:
    sem = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(i: int) -> int:
            async with sem:
                async with session.post(f"{url}{API}/runs", json=_body(f"r{i}", spec)) as r:
                    await r.read()
                    return r.status

        return await asyncio.gather(*(one(i) for i in range(n)))


def test_thousand_simulated_runs_are_created_listed_and_end():
    """1000 runs created at 16 at a time, listed, and every one ended as simulated. How fast
    the server creates and lists (at up to 10,000 stored runs) is bench/kfp_fill.py's: timing
    is no claim of a test that runs beside others on two cores."""
    spec = yaml.safe_load((PIPELINES / "add_numbers.yaml").read_text())
    options = dict(simulate="all:uniform(0.1,0.5),fail=0.2", max_parallel_runs=200, seed=3,
                   persistence_delay=0)  # fmt: skip
    with start_kfp_server(latency_ms=20, **options) as s:
        statuses = asyncio.run(_create_many(s.url, spec, 1000, 16))
        assert statuses == [200] * 1000
        status, page = call(s, "GET", f"{API}/runs", query={"page_size": 200})
        assert status == 200 and page["total_size"] == 1000 and len(page["runs"]) == 200
        ended = {"values": ["SUCCEEDED", "FAILED"]}
        final = {"predicates": [{"operation": "IN", "key": "state", "string_values": ended}]}
        deadline = time.monotonic() + 60.0  # ~1.5 s of simulated work: a bound, not a claim
        while True:
            page = call(s, "GET", f"{API}/runs", query={"filter": json.dumps(final)})[1]
            if page.get("total_size") == 1000 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert page["total_size"] == 1000
        failed = call(s, "GET", f"{API}/runs", query={"filter": json.dumps(
            {"predicates": [{"operation": "EQUALS", "key": "state", "string_value": "FAILED"}]}
        )})[1]["total_size"]  # fmt: skip
        assert 120 <= failed <= 280
        assert execution(page["runs"][0]) == "simulated"

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


def test_thousand_simulated_runs_are_created_and_listed_quickly():
    spec = yaml.safe_load((PIPELINES / "add_numbers.yaml").read_text())
    options = dict(simulate="all:uniform(0.1,0.5),fail=0.2", max_parallel_runs=200, seed=3,
                   persistence_delay=0)  # fmt: skip
    with start_kfp_server(latency_ms=20, **options) as s:
        start = time.perf_counter()
        statuses = asyncio.run(_create_many(s.url, spec, 1000, 16))
        created_in = time.perf_counter() - start
        assert statuses == [200] * 1000
        assert created_in < 6.0, f"1000 creations took {created_in:.1f}s"
        start = time.perf_counter()
        status, page = call(s, "GET", f"{API}/runs", query={"page_size": 200})
        listed_in = time.perf_counter() - start
        assert status == 200 and page["total_size"] == 1000 and len(page["runs"]) == 200
        assert listed_in < 1.0, f"a page of 200 took {listed_in:.2f}s"
        time.sleep(3.0)
        ended = {"values": ["SUCCEEDED", "FAILED"]}
        final = {"predicates": [{"operation": "IN", "key": "state", "string_values": ended}]}
        page = call(s, "GET", f"{API}/runs", query={"filter": json.dumps(final)})[1]
        assert page["total_size"] == 1000
        failed = call(s, "GET", f"{API}/runs", query={"filter": json.dumps(
            {"predicates": [{"operation": "EQUALS", "key": "state", "string_value": "FAILED"}]}
        )})[1]["total_size"]  # fmt: skip
        assert 120 <= failed <= 280
        assert execution(page["runs"][0]) == "simulated"

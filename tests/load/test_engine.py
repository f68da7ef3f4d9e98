"""The request loop against real loopback servers: counts, faults, the open-loop schedule,
coordinated-omission correction and worker processes."""

import numpy as np
import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.workers import run_load
from kfp_bench.sandbox.fault_server import start_fault_server


def _run(url, collect=None, **kw):
    results = []

    def factory(index):
        return lambda batch: results.extend(batch.results())

    stats = run_load(LoadOptions(url=url, **kw), on_batch_factory=factory if collect else None)
    return stats, results


def test_closed_loop_sends_exactly_n(fault_server):
    stats, results = _run(
        fault_server.url + "/x?bytes=100", collect=True, requests=300, concurrency=7
    )
    assert stats.requests == 300 == len(results)
    assert stats.status_codes == {200: 300}
    assert stats.bytes_in == 300 * 100
    assert sorted(r.seq for r in results) == list(range(300))
    assert all(r.ok and r.intended == r.sent for r in results)
    assert stats.phases["connect"].count == 300
    assert len([r for r in results if r.connect > 0]) == 7  # keep-alive: one connect per worker


def test_statuses_are_counted_and_4xx_5xx_are_failures(fault_server):
    stats, _ = _run(fault_server.url + "/?status=503", requests=40, concurrency=4)
    assert stats.status_codes == {503: 40}
    assert stats.summary().success_ratio == 0.0
    assert not stats.errors


def test_resets_are_errors_and_the_run_goes_on(fault_server):
    stats, results = _run(fault_server.url + "/?reset=1", collect=True, requests=30, concurrency=3)
    assert stats.requests == 30
    assert sum(stats.errors.values()) == 30
    assert all(r.status == 0 and r.error for r in results)
    assert "reset" in next(iter(stats.errors)) or "closed" in next(iter(stats.errors))


def test_a_server_dropping_kept_alive_connections_costs_requests_not_the_run(fault_server):
    """The server answers as if keeping each connection alive, then closes it (``drop=1``). The
    closed loop's next request on it (queued for the pass's burst, or already written) fails as
    a read error, its slot reconnects, and an -n run ends with every request accounted for once."""
    stats, results = _run(fault_server.url + "/x?drop=1", collect=True, requests=200, concurrency=4)
    assert stats.requests == 200 == len(results)
    assert sorted(r.seq for r in results) == list(range(200))
    failed = [r for r in results if not r.ok]
    assert stats.ok + len(failed) == 200 and stats.status_codes == {200: stats.ok}
    # each connection is answered once: about every other request fails on a dropped one
    assert 80 <= stats.ok <= 150, stats.errors
    assert failed and all(r.status == 0 and r.error.startswith("read") for r in failed)
    assert sum(stats.errors.values()) == len(failed)


def test_a_response_nobody_asked_for_is_not_counted(fault_server):
    """The server follows every response with a second copy (``extra=1``). Only answers to
    requests that went out count: the client's count matches what the server received, however
    the copy falls against the closed loop's queued next request."""
    before = fault_server.stats()["requests"]
    stats, results = _run(
        fault_server.url + "/x?extra=1", collect=True, requests=600, concurrency=3
    )
    assert stats.requests == 600 == stats.ok == len(results)
    assert sorted(r.seq for r in results) == list(range(600))
    assert all(r.bytes_out > 0 for r in results)  # each one was written
    assert fault_server.stats()["requests"] - before == 600


def test_timeouts_are_errors_with_their_latency(fault_server):
    stats, results = _run(
        fault_server.url + "/?hang=1", collect=True, requests=4, concurrency=2, timeout=0.3
    )
    assert stats.requests == 4
    assert all("timeout" in e for e in stats.errors)
    assert all(0.3 <= r.latency < 1.5 for r in results)


def test_connection_refused_is_counted_not_raised():
    with start_fault_server() as server:
        url = server.url
    stats, _ = _run(url, requests=20, concurrency=2)
    assert stats.requests == 20
    assert stats.errors == {"connect: connection refused": 20}


def test_disable_keepalive_opens_a_connection_per_request(fault_server):
    _, results = _run(
        fault_server.url, collect=True, requests=20, concurrency=2, disable_keepalive=True
    )
    assert len(results) == 20
    assert all(r.connect > 0 and r.ok for r in results)


@pytest.mark.parametrize("arrival", ["constant", "poisson"])
def test_open_loop_follows_the_schedule(fault_server, arrival):
    rate, duration = 200.0, 2.0
    stats, results = _run(
        fault_server.url,
        collect=True,
        rate=rate,
        duration=duration,
        arrival=arrival,
        concurrency=4,
        seed=3,
    )
    intended = np.sort([r.intended for r in results])
    assert stats.corrected
    assert abs(len(results) - rate * duration) <= (2 if arrival == "constant" else 60)
    gaps = np.diff(intended)
    if arrival == "constant":
        assert np.allclose(gaps, 1 / rate, atol=1e-6)
    else:
        assert abs(gaps.mean() - 1 / rate) < 0.25 / rate
        assert gaps.std() > 0.5 / rate  # exponential gaps: std close to the mean
    lateness = np.array([r.sent - r.intended for r in results])
    assert np.median(lateness) < 0.002


def test_open_loop_counts_a_stall_that_closed_loop_hides():
    """A server that holds every response for 0.4 s every 2 s: from the schedule's point of view
    the requests due in the stall wait up to 0.4 s. Closed loop sends few requests then and its
    percentiles barely move; open loop measures them from their intended time."""
    with start_fault_server(stall_every=2.0, stall_for=0.4) as server:
        stats, results = _run(server.url, collect=True, rate=100, duration=4.0, concurrency=4)
    corrected = np.array([r.corrected_latency for r in results])
    assert (corrected > 0.2).sum() >= 20  # ~20% of 4 s in stall windows, half of it over 0.2 s
    p99 = stats.summary().latency_ms["p99"]
    assert p99 > 300
    assert stats.latency.max_us >= stats.uncorrected.max_us


def test_max_inflight_backlog_counts_the_wait():
    with start_fault_server(delay_ms=100) as server:
        stats, results = _run(
            server.url, collect=True, rate=100, duration=1.0, concurrency=1, max_inflight=2
        )
    # Two connections at 0.1 s each serve 20 req/s; the rest wait in the backlog or are not sent.
    assert stats.requests + stats.not_sent == 100
    assert max(r.corrected_latency for r in results) > 0.3


def test_workers_merge_into_one_result(fault_server):
    stats, _ = _run(fault_server.url, requests=400, concurrency=8, workers=2)
    assert stats.requests == 400
    assert stats.workers == {"expected": 2, "reported": 2, "missing": []}
    assert stats.status_codes == {200: 400}
    assert stats.client_cpu["processes"] == 2  # each worker measured its own CPU


def test_the_load_generators_own_cpu_is_measured(fault_server):
    """The CPU of this process while it sent: some CPU time, never more than the wall time
    allows (one thread sends), and the busier for a harder load. Its split between user and
    system is the kernel's tick samples scaled to the precise runtime (Linux kernel/sched/
    cputime.c, ``cputime_adjust``), so a short run that no tick found in user mode counts its
    whole time as system: the sum is what is measured, each part only >= 0."""
    idle, _ = _run(fault_server.url + "/?delay_ms=20", duration=1.0, concurrency=1)
    busy, _ = _run(fault_server.url, duration=1.0, concurrency=20)
    for s in (idle, busy):
        c = s.client_cpu
        assert c["processes"] == 1
        assert c["user_s"] >= 0 and c["system_s"] >= 0 and c["user_s"] + c["system_s"] > 0
        assert 0 < c["busiest"] <= 1.5  # a little room for the stats' numpy threads
        assert c["user_s"] + c["system_s"] <= 1.5 * s.duration_s + 0.1
    assert busy.client_cpu["busiest"] > idle.client_cpu["busiest"]


def test_open_loop_workers_share_the_rate(fault_server):
    stats, _ = _run(fault_server.url, rate=300, duration=1.5, concurrency=4, workers=2)
    assert abs(stats.requests - 450) <= 4
    assert stats.corrected


def test_model_server_v1_and_v2(model_server):
    from kfp_bench.load.payload import v1_payload, v2_payload

    for url, body in (
        (model_server.v1_predict_url, v1_payload([2, 4])),
        (model_server.v2_infer_url, v2_payload([1, 4], "FP32")),
    ):
        stats, _ = _run(
            url,
            method="POST",
            body=body,
            content_type="application/json",
            requests=20,
            concurrency=2,
        )
        assert stats.status_codes == {200: 20}, stats.errors


def test_bad_options_raise_before_sending():
    with pytest.raises(ConfigError, match="-n 3 is less than -c 5"):
        run_load(LoadOptions(url="http://127.0.0.1:9/", requests=3, concurrency=5))

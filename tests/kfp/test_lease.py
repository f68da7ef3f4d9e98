"""Schedules that cannot overlap or cross (issue 18): a benchmark id per run, the lease the first
step takes on the KFP server and the exit handler gives back, and the sweep of what an expired
holder (terminated, crashed) left. Against the local KFP API."""

from __future__ import annotations

import threading
import time

import pytest

from kfp_bench.errors import LeaseError
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.lease import Lease, lease_name, read
from kfp_bench.kfp.options import NAME_PREFIX
from kfp_bench.names import is_dns1123_label
from kfp_bench.steps import exit_handler, start
from kfp_bench.steps.ids import MAX_ID, benchmark_id_for
from kfp_bench.steps.params import BenchParams
from tests.kfp.conftest import HELLO, kfp_client


def _params(url: str, prefix: str, **over) -> BenchParams:
    base = dict(kfp_host=url, benchmark_id=prefix, run_load=False, poll_interval_sec=0.2)
    return BenchParams(**{**base, **over})


def test_each_run_of_a_fixed_benchmark_id_gets_its_own_id():
    a, b = benchmark_id_for("nightly", "run-a"), benchmark_id_for("nightly", "run-b")
    assert a != b and a.startswith("nightly-") and b.startswith("nightly-")
    assert benchmark_id_for("nightly", "run-a") == a  # check_params and cleanup agree
    long = benchmark_id_for("x" * MAX_ID, "2f7c1d3e-0000-4000-8000-000000000000")
    assert len(long) <= MAX_ID and is_dns1123_label(long)
    assert benchmark_id_for("", "job-1") == "job-1"  # no prefix: the run's id, as before


def test_a_second_benchmark_is_refused_while_the_lease_is_live(kfp_server):
    p = _params(kfp_server.url, "lease-live")
    first = start.check_params(p, "job-a")
    with pytest.raises(LeaseError) as err:
        start.check_params(p, "job-b")
    msg = str(err.value)
    assert f"holds the lease {NAME_PREFIX}lease-lease-live" in msg
    assert f"benchmark {first['benchmark_id']} (pipeline run job-a), until " in msg
    assert "lease_wait_sec" in msg and f"cleanup --benchmark-id {first['benchmark_id']}" in msg
    line = exit_handler.cleanup(p, "job-a", "SUCCEEDED", "")
    assert line.endswith(f"lease {NAME_PREFIX}lease-lease-live: released")
    assert read(KfpApi(kfp_server.url), lease_name("lease-live")) is None


def test_a_waiting_benchmark_gets_the_lease_once_it_is_released(kfp_server):
    p = _params(kfp_server.url, "lease-wait")
    start.check_params(p, "job-a")
    got: dict = {}
    waiter = threading.Thread(
        target=lambda: got.update(start.check_params(_params(**_w(p)), "job-b"))
    )
    t0 = time.monotonic()
    waiter.start()
    time.sleep(1.0)
    assert not got  # still waiting
    exit_handler.cleanup(p, "job-a", "SUCCEEDED", "")
    waiter.join(timeout=20)
    assert got["benchmark_id"] == benchmark_id_for("lease-wait", "job-b")
    assert time.monotonic() - t0 < 10
    held = read(KfpApi(kfp_server.url), lease_name("lease-wait"))
    assert held.holder == got["benchmark_id"]
    exit_handler.cleanup(p, "job-b", "SUCCEEDED", "")


def _w(p: BenchParams) -> dict:
    return dict(url=p.kfp_host, prefix=p.benchmark_id, lease_wait_sec=15.0)


def test_an_expired_lease_is_taken_over_and_its_holders_leftovers_swept(kfp_server, capsys):
    api = KfpApi(kfp_server.url)
    old = "lease-old-0123456789"  # a holder terminated mid-way: its exit handler never ran
    stale = Lease(lease_name("lease-exp"), old, "job-old", time.time() - 1)
    assert api.create_experiment(stale.name, stale.description()).ok
    desc = f"Created by kfp-bench, benchmark {old}; delete with kfp-bench cleanup."
    assert api.create_experiment(NAME_PREFIX + old, desc).ok
    p = _params(kfp_server.url, "lease-exp")
    checked = start.check_params(p, "job-new")
    out = capsys.readouterr().out
    assert f"took over the stale lease of benchmark {old} (pipeline run job-old)" in out
    assert "swept its leftovers: 0 recurring runs, 0 runs, 1 experiments" in out
    assert api.find_experiment(NAME_PREFIX + old) == (True, None)
    assert read(api, stale.name).holder == checked["benchmark_id"]
    exit_handler.cleanup(p, "job-new", "SUCCEEDED", "")


def test_the_lease_of_a_terminated_benchmark_is_taken_over_at_once(slow_kfp_server, capsys):
    """A benchmark terminated mid-way (its exit handler never ran) holds a lease that expires
    in an hour; its pipeline run is CANCELED on the server, so the next run takes it over at
    once and sweeps what it left, without waiting for the expiry."""
    client = kfp_client(slow_kfp_server.url)
    run = client.create_run_from_pipeline_package(str(HELLO), arguments={})
    p = _params(slow_kfp_server.url, "lease-term")
    first = start.check_params(p, run.run_id)
    client.terminate_run(run.run_id)
    deadline = time.monotonic() + 20
    while client.get_run(run.run_id).state != "CANCELED":
        assert time.monotonic() < deadline, client.get_run(run.run_id).state
        time.sleep(0.2)
    capsys.readouterr()
    checked = start.check_params(p, "job-next")
    out = capsys.readouterr().out
    assert f"took over the stale lease of benchmark {first['benchmark_id']}" in out, out
    assert "swept its leftovers" in out
    assert (
        read(KfpApi(slow_kfp_server.url), lease_name("lease-term")).holder
        == checked["benchmark_id"]
    )
    exit_handler.cleanup(p, "job-next", "SUCCEEDED", "")

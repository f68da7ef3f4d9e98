"""The push to a real Prometheus Pushgateway (tests/pushgateway.py), read back through the
Pushgateway's own query API and its /metrics page: the figures in base units, the labels, the
last success kept across a failed run, and every refusal named without a password."""

from __future__ import annotations

import urllib.request

import pytest

from kfp_bench.errors import ConfigError, PushError
from kfp_bench.push import LAST_SUCCESS, check_labels, check_url, exposition, push
from kfp_bench.sandbox.process import free_port
from tests.pushgateway import binary, groups, pushgateway, scrape, series

pytestmark = pytest.mark.skipif(binary() is None, reason="Debian prometheus-pushgateway missing")

LABELS = {"benchmark": "nightly", "target": "http://model.ns/v1/models/m:predict", "part": "main"}
PASSED = {"failures": 0, "regression": 0, "load_p99_ms": 12.5, "load_rps": 250.0}
PASSED |= {"load_success_ratio": 1.0, "runs_success_ratio": 0.9, "run_duration_p99_s": 31.0}
FAILED = {"failures": 1, "flag_no_load": 1, "runs_success_ratio": 0.5}


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    with pushgateway(tmp_path_factory.mktemp("pushgateway")) as url:
        yield url


def _value(url: str, name: str, **labels) -> float | None:
    want = {"job": "kfp_bench", "instance": "", **LABELS, **labels}
    return series(url).get((name, frozenset(want.items())))


def test_figures_and_labels_read_back(gateway):
    verdicts = {"load_p99_ms<50": "held", "runs_success_ratio>=0.99": "broken"}
    lines = push(gateway, PASSED, {**LABELS, "benchmark": "figures"}, verdicts=verdicts)
    assert "pushed" in lines[0] and "not passed" in lines[1]  # a broken gate: no last success
    got = {
        name: value
        for (name, labels), value in series(gateway).items()
        if ("benchmark", "figures") in labels
    }
    assert got["kfp_bench_load_latency_p99_seconds"] == pytest.approx(0.0125)  # ms -> s
    assert got["kfp_bench_load_requests_per_second"] == 250
    assert got["kfp_bench_runs_success_ratio"] == 0.9
    assert got["kfp_bench_run_duration_p99_seconds"] == 31
    assert got["kfp_bench_gates_checked"] == 2 and got["kfp_bench_gates_broken"] == 1
    assert got["kfp_bench_passed"] == 0 and got["kfp_bench_failures"] == 0
    assert LAST_SUCCESS not in got
    # Every series carries the grouping key, the target (with its "/") base64-carried intact,
    # and an empty instance (README.md 412bd22 lines 180-188), as Prometheus will keep it.
    page = scrape(gateway)
    gate = (
        'kfp_bench_gate_broken{benchmark="figures",gate="runs_success_ratio>=0.99",instance="",'
        'job="kfp_bench",part="main",target="http://model.ns/v1/models/m:predict"} 1'
    )
    assert gate in page.splitlines()


def test_the_last_success_survives_a_failed_run(gateway):
    push(gateway, {**PASSED, "ttft_p99_ms": 80.0}, LABELS, now=1_790_000_000)
    assert _value(gateway, LAST_SUCCESS, job="kfp_bench_last_success") == 1_790_000_000
    assert _value(gateway, "kfp_bench_llm_ttft_p99_seconds") == pytest.approx(0.08)
    lines = push(gateway, FAILED, LABELS, now=1_790_086_400)
    assert lines[1] == f"not passed: {LAST_SUCCESS} left as it was"
    assert _value(gateway, LAST_SUCCESS, job="kfp_bench_last_success") == 1_790_000_000
    # The failed run's figures replaced the group whole: none of the night before remains.
    assert _value(gateway, "kfp_bench_failures") == 1
    assert _value(gateway, "kfp_bench_passed") == 0
    assert _value(gateway, "kfp_bench_runs_success_ratio") == 0.5
    assert _value(gateway, "kfp_bench_llm_ttft_p99_seconds") is None
    assert _value(gateway, "kfp_bench_load_latency_p99_seconds") is None
    # The next run that passes moves it on.
    push(gateway, PASSED, LABELS, now=1_790_172_800)
    assert _value(gateway, LAST_SUCCESS, job="kfp_bench_last_success") == 1_790_172_800
    assert _value(gateway, "kfp_bench_passed") == 1


def test_a_regression_is_pushed_and_is_no_success(gateway):
    labels = {**LABELS, "benchmark": "regressed"}
    push(gateway, {**PASSED, "regression": 1}, labels)
    assert _value(gateway, "kfp_bench_regression", benchmark="regressed") == 1
    assert (
        _value(gateway, LAST_SUCCESS, job="kfp_bench_last_success", benchmark="regressed") is None
    )


def test_an_unreachable_pushgateway_is_named_without_its_password():
    url = f"http://bench:s3cret@127.0.0.1:{free_port()}"
    with pytest.raises(PushError) as err:
        push(url, PASSED, LABELS)
    text = str(err.value)
    assert "s3cret" not in text and "bench:" not in text
    assert f"Pushgateway http://127.0.0.1:{url.rsplit(':', 1)[1]}/metrics/job/kfp_bench/" in text
    assert "could not be reached" in text and "check the URL" in text
    assert err.value.exit_code == 5


def test_a_push_the_pushgateway_refuses_is_named(tmp_path):
    # Another job's counter of the same name: the Pushgateway refuses the gauge as inconsistent
    # (README.md 412bd22 lines 190-199), with 400 and its reason. A Pushgateway of its own: the
    # module's already holds the gauge, and would refuse the counter instead.
    body = b"# TYPE kfp_bench_failures counter\nkfp_bench_failures 3\n"
    with pushgateway(tmp_path) as url:
        req = urllib.request.Request(f"{url}/metrics/job/other", data=body, method="PUT")
        urllib.request.urlopen(req, timeout=10).close()
        with pytest.raises(PushError) as err:
            push(url.replace("http://", "http://bench:pw0rd@"), PASSED, LABELS)
        # The group is there with its push_failure_time_seconds only (README.md lines 250-255):
        # what Prometheus alerts on as push_failure_time_seconds > push_time_seconds.
        ours = [g for g in groups(url) if g["labels"]["job"] == "kfp_bench"]
        assert [g["last_push_successful"] for g in ours] == [False]
        assert not [name for name in ours[0] if name.startswith("kfp_bench")]
    text = str(err.value)
    assert "HTTP 400" in text and "kfp_bench_failures" in text and "pw0rd" not in text
    assert text.startswith(f"Pushgateway {url}/metrics/job/kfp_bench/benchmark/nightly/")


def test_a_path_the_pushgateway_does_not_serve_is_named(gateway):
    with pytest.raises(PushError, match=r"HTTP 404 .*check the URL"):
        push(f"{gateway}/not-here", PASSED, LABELS)


@pytest.mark.parametrize(
    "url",
    [
        "pushgateway:9091",
        "ftp://pushgateway:9091",
        "http://u:hunter2@pushgateway:x/",
        "http://pushgateway:9091/metrics/job/kfp_bench",
        "http://pushgateway:9091/?job=x",
    ],
)
def test_a_bad_url_is_refused_before_any_push(url):
    with pytest.raises(ConfigError, match="give the Pushgateway's base URL") as err:
        check_url(url)
    assert "hunter2" not in str(err.value)


@pytest.mark.parametrize("name", ["job", "instance", "__name", "1x", "a-b"])
def test_a_label_the_push_cannot_set_is_refused(name):
    with pytest.raises(ConfigError, match=f"--push-label {name}="):
        check_labels({name: "v"})


def test_a_figure_not_measured_is_left_out_never_nan():
    text = exposition({"failures": 0, "load_p99_ms": float("nan"), "load_rps": float("inf")})
    assert "load" not in text and "NaN" not in text and "kfp_bench_failures 0" in text
    text = exposition({"failures": 0}, {'a"b\\c<1': False})
    assert 'kfp_bench_gate_broken{gate="a\\"b\\\\c<1"} 0' in text

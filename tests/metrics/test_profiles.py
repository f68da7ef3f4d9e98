"""Metrics profiles: a bad one is refused before the load (the file, the entry, the fix), and
every built-in profile's queries parse in a real Prometheus (Debian's, scraping nothing), whose
parser is the yardstick: a query it cannot parse is refused the same way."""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.metrics import profile as profiles
from kfp_bench.metrics.collect import Collector
from kfp_bench.sandbox.llm_server import start_llm_server
from tests.conftest import run_cli
from tests.metrics.prometheus_server import BINARY, prometheus

HAVE_PROMETHEUS = bool(shutil.which("prometheus")) or Path(BINARY).exists()
VARS = {"namespace": "bench", "isvc": "llm"}


@pytest.fixture(scope="module")
def prom(tmp_path_factory):
    if not HAVE_PROMETHEUS:
        pytest.skip("Debian prometheus not installed (scripts/system-deps.sh)")
    with prometheus(tmp_path_factory.mktemp("prom"), {}) as url:
        yield url


@pytest.mark.parametrize(
    "text, said",
    [
        ("query: up", "give a YAML list of entries"),
        ("- query: up\n", "entry 1: 'metricName' must be a name"),
        ("- query: up\n  metricName: a\n- query: up\n  metricName: a\n", "entry 2: metricName a"),
        ("- query: up\n  metricname: a\n", "entry 1: unknown key 'metricname'"),
        ("- query: up\n  metricName: a\n  instant: yes please\n", "'instant' must be true"),
        ("- query: up\n  metricName: a\n  compare: ttft\n", "add 'instant: true'"),
        ("- query: up\n  metricName: a\n  panel: gpu\n", "'panel' must be one of ttft"),
        ("- [unclosed\n", "fix the YAML"),
    ],
)
def test_a_bad_profile_names_the_file_and_entry(tmp_path, text, said):
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError, match="metrics.profile") as e:
        profiles.load(str(f))
    assert said in str(e.value) and str(f) in str(e.value)


def test_a_variable_not_given_is_refused():
    p = profiles.load("kserve-predictor")
    with pytest.raises(ConfigError, match=r"entry 1 \(vllmRequestsWaiting\) uses \{\{.isvc\}\}"):
        p.check_variables({"namespace": "bench"})
    p.check_variables(VARS)


@pytest.mark.parametrize("name", sorted(profiles.BUILTIN))
def test_builtin_profiles_parse_in_prometheus(prom, name):
    c = Collector(profile=profiles.load(name), prometheus_url=prom, variables=VARS)
    c.check()
    assert not c.out.notes, c.out.notes


def test_a_query_prometheus_cannot_parse_is_refused(prom, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("- query: up\n  metricName: fine\n- query: sum(rate(up[1m])\n  metricName: bad\n")
    c = Collector(profile=profiles.load(str(f)), prometheus_url=prom)
    with pytest.raises(ConfigError, match=r"entry 2 \(bad\): Prometheus cannot parse"):
        c.check()


def test_the_cli_refuses_before_sending(tmp_path):
    """Nothing reaches the LLM server: its own request counter stays at zero."""
    f = tmp_path / "p.yaml"
    f.write_text("- query: up\n  metricName: a\n  instant: maybe\n")
    with start_llm_server() as llm:
        done = run_cli(
            "llm", llm.url, "-n", "5", "--model", "m", "--metrics-profile", str(f),
            "--prometheus-url", "http://127.0.0.1:9",
        )  # fmt: skip
        with urllib.request.urlopen(f"{llm.url}/metrics", timeout=10) as resp:
            page = resp.read().decode()
    assert done.returncode == 2, done.stderr
    assert f"metrics profile {f}, entry 1 (a): 'instant' must be true or false" in done.stderr
    assert 'vllm:generation_tokens_total{engine="0",model_name="kfp-bench-llm"} 0.0' in page


def test_prometheus_out_of_reach_is_a_note_not_a_failure():
    c = Collector(profile=profiles.load("gpu"), prometheus_url="http://127.0.0.1:9",
                  variables=VARS)  # fmt: skip
    c.check()
    c.start()
    got = c.stop()
    assert got.flags == ["server-metrics-missing"]
    assert any("cannot query http://127.0.0.1:9/api/v1/query" in n for n in got.notes)


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--prometheus-url", "http://p:9090"], "--prometheus-url: takes effect only beside"),
        (["--metrics-profile", "gpu"], "needs --prometheus-url"),
        (["--metrics-profile", "nope"], "no such file, nor a built-in profile"),
        (["--scrape", "http://x/metrics", "--metrics-step", "0"], "--metrics-step 0"),
        (["--metrics-profile", "gpu", "--prometheus-url", "http://p", "--metrics-var", "x"],
         "give NAME=VALUE"),
    ],
)  # fmt: skip
def test_bad_flags(argv, said):
    done = run_cli("llm", "http://127.0.0.1:9", "-n", "1", "--model", "m", *argv)
    assert done.returncode == 2 and said in done.stderr, done.stderr

"""The pipeline's server metrics (prometheus_url, metrics_profile, metrics_scrape, metrics_vars,
metrics_scrape_token): refused by the first step's text checks and by ``kfp-bench submit``; run
by load worker 0 alone around its share; merged by aggregate and report_llm beside the merged
result; drawn by the reports under the client's series.

Real parts: the local LLM server and the real kserve ModelServer as scrape targets, Debian's
prometheus scraping the model server, the steps' own functions as the components call them.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.metrics import series as store
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.steps import llm_steps, predict, publish
from kfp_bench.steps.params import BenchParams
from tests.conftest import run_cli
from tests.loopback import Handler, serving
from tests.metrics.prometheus_server import BINARY, prometheus, wait_scraped

ISVC = {"name": "bench-llm", "namespace": "bench", "model_format": "huggingface",
        "model_args": ["--model_id=m"]}  # fmt: skip
#: A profile given as its YAML text (a pod has no local file): a range series under the
#: latency chart and the server's histogram beside the client's latency.
PREDICT_PROFILE = """
- query: sum(request_predict_seconds_count{namespace="{{.namespace}}"})
  metricName: predictsServed
  panel: latency
- query: sum by (le) (increase(request_predict_seconds_bucket{namespace="{{.namespace}}"}[{{.elapsed}}]))
  metricName: kservePredict
  instant: true
  compare: latency
"""  # noqa: E501


def _check(**over):
    base = dict(run_benchmark=False, run_load=True)
    return BenchParams(**{**base, **over}).check(fetch=False)


@pytest.mark.parametrize(
    "over, said",
    [
        ({"metrics_profile": "kserve"}, "metrics_profile='kserve': neither a built-in profile"),
        ({"metrics_profile": "kfp"}, "pipeline parameter prometheus_url='': give a http/https"),
        (
            {"metrics_profile": "kfp", "prometheus_url": "http://prom:9090"},
            "uses {{.namespace}}: give metrics_vars namespace=VALUE",
        ),
        (
            {"metrics_profile": "- query: up\n  metricName: up\n  step: 5"},
            "(YAML text), entry 1: unknown key 'step'",
        ),
        ({"metrics_scrape": "10.0.3.17:8080/metrics"}, "metrics_scrape='10.0.3.17:8080/metrics'"),
        (
            {"metrics_profile": "gpu", "prometheus_url": "http://p:9090", "metrics_vars": "ns"},
            "pipeline parameter metrics_vars 'ns': give NAME=VALUE",
        ),
    ],
)
def test_the_first_step_refuses_a_bad_metrics_parameter(over, said):
    with pytest.raises(ConfigError) as err:
        _check(**over)
    assert said in str(err.value), str(err.value)


def test_the_isvc_fills_namespace_and_isvc():
    """The built-in kserve-predictor profile asks for both; the pipeline's own isvc gives them."""
    prom = {"metrics_profile": "kserve-predictor", "prometheus_url": "http://prom:9090"}
    with pytest.raises(ConfigError, match="give metrics_vars isvc=VALUE"):
        _check(**prom)
    llm = dict(run_load=False, run_llm=True, isvc=ISVC)
    assert _check(**prom, **llm)
    from kfp_bench.steps.server_metrics import variables

    got = variables(BenchParams(**prom, **llm, metrics_vars="isvc=other,gpu=a100"))
    assert got == {"namespace": "bench", "isvc": "other", "gpu": "a100"}


class _Recorder(Handler):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.send(404, {"error_message": "not here"})

    do_POST = do_GET  # noqa: N815


def test_submit_refuses_a_bad_profile_before_anything_is_sent():
    with serving(_Recorder) as url:
        done = run_cli("submit", "--host", url, "--param", "metrics_profile=kserve-predicter")
    assert done.returncode == 2, done.stderr
    assert "metrics_profile='kserve-predicter': neither a built-in" in done.stderr


def _doc(path: Path) -> dict:
    return json.loads(path.read_text())


def test_llm_worker_zero_alone_scrapes_and_the_report_draws_it(tmp_path, capfd):
    with start_llm_server(first_token_ms=20, token_gap_ms=2) as llm:
        p = BenchParams(
            run_benchmark=False, run_load=False, run_llm=True, llm_url=llm.url, llm_workers=2,
            llm_model="kfp-bench-llm",
            llm_concurrency=4, llm_duration_sec=2.0, llm_output_tokens="fixed:8",
            metrics_scrape=f"{llm.url}/metrics",
        )  # fmt: skip
        loads = [tmp_path / f"w{i}.json" for i in range(2)]
        for i, out in enumerate(loads):
            llm_steps.llm_load(p, i, str(out))
    assert "server" in _doc(loads[0]) and "server" not in _doc(loads[1])
    assert "LLM worker 0: server metrics:" in capfd.readouterr().out
    out = tmp_path / "llm"
    llm_steps.report_llm(p, [str(x) for x in loads], str(out), str(tmp_path / "r.html"),
                         str(tmp_path / "s.md"))  # fmt: skip
    server = store.load_beside(out / llm_steps.LLM_RESULT)
    assert server is not None and not server.flags, server and server.notes
    (h,) = [h for h in server.histograms.values() if h["compare"] == "ttft"]
    merged = _doc(out / llm_steps.LLM_RESULT)
    assert store.percentiles(h["buckets"])["count"] <= merged["counts"]["completed"]
    html = (tmp_path / "r.html").read_text()
    assert 'id="fig-server_ttft"' in html and "client − server (ms)" in html


@pytest.mark.skipif(not Path(BINARY).exists(), reason="Debian prometheus not installed")
def test_predict_load_with_a_profile_and_prometheus_reaches_the_report(model_server, tmp_path):
    target = urllib.parse.urlsplit(model_server.url).netloc
    (tmp_path / "prom").mkdir()
    with prometheus(tmp_path / "prom", {target: {"namespace": "bench", "pod": "iris-0"}}) as prom:
        wait_scraped(prom, 1)
        p = BenchParams(
            run_benchmark=False, inference_url=model_server.v1_predict_url,
            payload=json.dumps({"instances": [[6.8, 2.8, 4.8, 1.4]]}), duration_sec=4.0,
            concurrency=2, prometheus_url=prom, metrics_profile=PREDICT_PROFILE,
            metrics_vars="namespace=bench", metrics_scrape=f"{model_server.url}/metrics",
        ).check(fetch=False)  # fmt: skip
        load = tmp_path / "w0.json"
        predict.inference_load(p, 0, str(load))
    runs, results = tmp_path / "runs", tmp_path / "results"
    runs.mkdir()
    for name in ("sweep", "replicas"):
        (tmp_path / f"{name}.json").write_text('{"skipped": true}')
    publish.aggregate(p, str(runs), [str(load)], str(tmp_path / "sweep.json"),
                      str(tmp_path / "replicas.json"), str(results))  # fmt: skip
    server = store.load_beside(results / "load.json")
    assert not server.flags, server.notes
    served = [s for s in server.series.values() if s["metric"] == "predictsServed"]
    assert len(served) == 1 and served[0]["panel"] == "latency"
    metrics = {h["metric"]: h for h in server.histograms.values()}
    assert set(metrics) == {"kservePredict", "request_predict_seconds"}
    # the direct scrape's count is exact: every predict the client had answered
    answered = _doc(results / "load.json")["responses"]
    assert store.percentiles(metrics["request_predict_seconds"]["buckets"])["count"] == answered
    html = tmp_path / "report.html"
    publish.report(str(results), str(tmp_path / "records"), str(html), str(tmp_path / "s.md"))
    page = html.read_text()
    assert "<h2>Server metrics</h2>" in page and 'id="fig-server_latency"' in page
    assert "latency p50" in page and "kservePredict" in page

"""The full-database mode with a metrics profile on: ``kfp-bench runs --fill`` against the local
KFP API while a real Prometheus (Debian's, tests/metrics/prometheus_server.py) scrapes its
/metrics; the built-in ``kfp`` profile plus two entries on the local server's own names. The
local API exports KFP's gRPC series as the real API server does: the profile's API-server
entries come out as figures at each K, beside the local ones; it has no MySQL, Argo or
persistence agent (its store is in memory): those entries must come out "not exposed". No timing
bounds."""

from __future__ import annotations

import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from kfp_bench.metrics import profile as profiles
from kfp_bench.metrics import series as store
from kfp_bench.metrics.windows import by_window
from tests.conftest import run_cli
from tests.kfp.conftest import HELLO, NOTHING, remains
from tests.metrics.prometheus_server import BINARY, prometheus, wait_scraped

pytestmark = pytest.mark.skipif(
    not shutil.which("prometheus") and not Path(BINARY).exists(),
    reason="Debian prometheus not installed (scripts/system-deps.sh)",
)
#: The local server's own names (kfp_bench/sandbox/kfp_server/metrics.py): its request
#: histogram of the Runs page's LIST, and the real server's run_server_run_count gauge.
LOCAL = """
- query: sum by (le) (increase(kfp_api_request_duration_seconds_bucket{namespace="{{.namespace}}",method="GET",route="/apis/v2beta1/runs"}[{{.elapsed}}]))
  metricName: localListRuns
  instant: true
  compare: latency
- query: max(run_server_run_count{namespace="{{.namespace}}"})
  metricName: localRunCount
"""  # noqa: E501
BUILTIN = [q.metric_name for q in profiles.load("kfp").queries]


@pytest.fixture(scope="module")
def filled(kfp_server, tmp_path_factory):
    work = tmp_path_factory.mktemp("fill-prom")
    builtin = (Path(profiles.__file__).parent / profiles.BUILTIN["kfp"]).read_text()
    prof = work / "profile.yaml"
    prof.write_text(builtin + LOCAL)
    target = urllib.parse.urlsplit(kfp_server.url).netloc
    out = work / "results"
    with prometheus(work, {target: {"namespace": "kubeflow"}}) as prom:
        wait_scraped(prom, 1)
        done = run_cli(
            "runs", "--host", kfp_server.url, "--pipeline", str(HELLO), "--num-runs", "1",
            "--poll-interval", "0.2", "--benchmark-id", "fill-prom",
            "--fill", "40", "--fill-steps", "2", "--fill-repeats", "2",
            "--fill-page-sizes", "10,20", "--metrics-profile", str(prof),
            "--prometheus-url", prom, "--metrics-var", "namespace=kubeflow",
            "--metrics-step", "2", "--out", str(out), timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # a probe's frame shorter than a scrape: nothing at it, yet not "not exposed"
        series = store.load(out / "fill.server.json")
        w = json.loads((out / "summary.json").read_text())["fill"]["probe_windows"][-1]
        short = [{"k": w["k"], "start": w["start"], "end": w["start"] + 0.05, "quiet": 0}]
        variables = {"namespace": "kubeflow"}
        too_short = by_window(profiles.load(str(prof)), prom, variables, series, short)
    report = run_cli("report", str(out), "--out", str(work / "report"))
    assert report.returncode == 0, report.stderr
    return {"out": out, "stdout": done.stdout, "report": work / "report", "short": too_short}


def _profile(filled) -> dict:
    return json.loads((filled["out"] / "summary.json").read_text())["fill"]


def test_the_servers_histogram_is_read_at_each_probe(filled):
    fill = _profile(filled)
    ks = [w["k"] for w in fill["probe_windows"]]
    assert len(ks) == 3 and all(w["quiet"] == 2 for w in fill["probe_windows"])
    prof = fill["server_profile"]
    listed = {h["k"]: h for h in prof["histograms"] if h["metric"] == "localListRuns"}
    assert sorted(listed) == ks
    for h in listed.values():
        assert h["count"] > 0
        for p in ("p50", "p95", "p99"):
            lo, hi = h[f"{p}_bucket_ms"]  # the bucket holding the percentile: its resolution
            assert lo <= h[f"{p}_ms"] <= (hi if hi != "+Inf" else lo)
    counts = {v["k"]: v["value"] for v in prof["values"] if v["metric"] == "localRunCount"}
    assert sorted(counts) == ks
    assert counts[ks[-1]] > counts[ks[0]]  # the server holds the fill's runs


#: The built-in entries on the API server's own series, which the local API exports under KFP's
#: names; of the API server's, only the persistence agent's ReportWorkflow calls are not made here.
API_SERVER = {"apiRequestsPerSecond", "apiHandlingP99Seconds", "apiListRuns",
              "apiGetPipelineVersion", "apiRunsCreated"}  # fmt: skip


def _kfp_bound(ms: float) -> bool:
    """A bucket bound of KFP's gRPC histogram (main.go:406-410), in ms, or 0."""
    bounds = (0, 5, 10, 30, 100, 300, 1e3, 3e3, 1e4, 1.5e4, 3e4, 6e4, 1.2e5, 3e5)
    return any(abs(ms - b) < 1e-6 for b in bounds)


def test_the_api_servers_grpc_latency_is_read_at_each_probe(filled):
    """KFP's gRPC handling-time histogram of the Runs page's calls (ListRuns, GetPipelineVersion)
    at each K, as a cluster's API server gives it, with main.go's buckets (5 ms and up)."""
    fill = _profile(filled)
    ks = [w["k"] for w in fill["probe_windows"]]
    prof = fill["server_profile"]
    called = sorted({r["k"] for r in fill["rows"] if r["kind"] == "get_pipeline_version"})
    for metric in ("apiListRuns", "apiGetPipelineVersion"):
        at = {h["k"]: h for h in prof["histograms"] if h["metric"] == metric}
        if metric == "apiListRuns":
            assert sorted(at) == ks
        else:
            # GetPipelineVersion only once the page shows runs of a version; KFP does not
            # pre-register a method's series (no grpc_prometheus.Register), so the window of its
            # first calls may read no increase, as on a fresh API server: the later ones do
            assert called and set(at) <= set(called) and called[-1] in at, (called, sorted(at))
        for h in at.values():
            assert h["count"] > 0
            lo, hi = h["p50_bucket_ms"]  # a bucket of KFP's, not of the local HTTP histogram
            assert _kfp_bound(lo) and (hi == "+Inf" or _kfp_bound(hi)), (lo, hi)
    rates = [v for v in prof["values"] if v["metric"] == "apiRequestsPerSecond"]
    assert rates and any(v["value"] > 0 for v in rates)
    text = filled["stdout"]
    assert any(x.split()[:2] == ["apiListRuns", "p50"] for x in text.splitlines())
    md = (filled["report"] / "summary.md").read_text()
    part = md.split("## Full database: the server's own figures at each K\n", 1)[1]
    for row in ("| apiListRuns p95 (ms) |", "| apiGetPipelineVersion p95 (ms) |"):
        assert row in part


def test_what_the_server_does_not_export_is_named_not_exposed(filled):
    prof = _profile(filled)["server_profile"]
    # neither MySQL nor Argo nor a persistence agent behind the local API: every built-in entry
    # but the API server's, and nothing of the local server's
    assert sorted(prof["not_exposed"]) == sorted(set(BUILTIN) - API_SERVER)
    assert "persistenceAgentReportsPerSecond" in prof["not_exposed"]
    created = [v for v in prof["values"] if v["metric"] == "apiRunsCreated"]
    assert created and all(v["value"] == 0 for v in created)  # a probe creates nothing
    assert not any("no series" in n for n in prof["notes"])  # said once: not_exposed
    assert "mysqlThreadsConnected" in filled["stdout"]
    line = next(x for x in filled["stdout"].splitlines() if "mysqlQueries" in x)
    assert line.split()[1:] == ["not", "exposed"] * 3


def test_the_reports_show_the_servers_figures_against_k(filled):
    text = filled["stdout"]
    assert "The server's own figures at each K" in text
    assert any(x.split()[:2] == ["localListRuns", "p50"] for x in text.splitlines())
    md = (filled["report"] / "summary.md").read_text()
    part = md.split("## Full database: the server's own figures at each K\n", 1)[1]
    assert "| mysqlThreadsConnected | not exposed | not exposed | not exposed |" in part
    assert "| localListRuns p95 (ms) |" in part
    html = (filled["report"] / "report.html").read_text()
    assert "The server&#x27;s own figures against K" in html or (
        "The server's own figures against K" in html
    )
    series = store.load(filled["out"] / "fill.server.json")
    assert any(s["metric"] == "localRunCount" for s in series.series.values())


def test_a_frame_shorter_than_a_scrape_is_said_so_not_called_not_exposed(filled):
    short = filled["short"]
    assert not short["histograms"]  # increase() over 50 ms: no two samples
    assert "localListRuns" not in short["not_exposed"]
    assert any(n.startswith("localListRuns: no figure at any probe") for n in short["notes"])
    assert "mysqlQueries" in short["not_exposed"]


def test_everything_of_the_fill_is_swept(filled, kfp_server):
    assert remains(kfp_server.url, "fill-prom-fill") == NOTHING
    assert remains(kfp_server.url, "fill-prom") == NOTHING


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--metrics-profile", "kfp"], "add --fill K"),
        (["--fill", "2", "--prometheus-url", "http://127.0.0.1:9"], "add --metrics-profile FILE"),
        (["--fill", "1", "--fill-steps", "1", "--metrics-profile", "kfp"], "--prometheus-url"),
    ],
)
def test_bad_metrics_flags_are_refused_before_anything_is_made(args, said, kfp_server, tmp_path):
    out = tmp_path / "out"
    done = run_cli(
        "runs", "--host", kfp_server.url, "--pipeline", str(HELLO), "--num-runs", "1",
        "--benchmark-id", "fill-bad", "--out", str(out), *args,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and not out.exists()
    assert remains(kfp_server.url, "fill-bad-fill") == NOTHING


def test_the_pipelines_fill_reads_the_profile_too(kfp_server, tmp_path):
    """spawn_runs' fill (``pipeline.child_runs.fill``) with the pipeline's metrics parameters:
    the profile's figures at each probe reach fill.json; the exit handler's sweep is run here
    as ``kfp-bench cleanup``. The scrape interval is given (2 s) instead of the 30 s default."""
    from kfp_bench.kfp.fill import fill_id
    from kfp_bench.steps import child_runs
    from kfp_bench.steps.outputs import FILL_FILE
    from kfp_bench.steps.params import BenchParams

    builtin = (Path(profiles.__file__).parent / profiles.BUILTIN["kfp"]).read_text()
    target = urllib.parse.urlsplit(kfp_server.url).netloc
    with prometheus(tmp_path, {target: {"namespace": "kubeflow"}}) as prom:
        wait_scraped(prom, 1)
        p = BenchParams(
            kfp_host=kfp_server.url, num_runs=1, poll_interval_sec=0.2, fill_runs=10,
            fill_steps=1, metrics_profile=builtin + LOCAL, prometheus_url=prom,
            metrics_vars="namespace=kubeflow",
        )  # fmt: skip
        child_runs.fill(p, "pipe-fill", str(tmp_path), scrape_interval_s=2)
    doc = json.loads((tmp_path / FILL_FILE).read_text())
    assert "error" not in doc and doc["filled"] == 10
    prof = doc["server_profile"]
    ks = {w["k"] for w in doc["probe_windows"]}
    assert len(ks) == 2
    assert {h["k"] for h in prof["histograms"] if h["metric"] == "localListRuns"} == ks
    assert "mysqlQueries" in prof["not_exposed"] and "localRunCount" not in prof["not_exposed"]
    swept = run_cli("cleanup", "--host", kfp_server.url, "--benchmark-id", fill_id("pipe-fill"))
    assert swept.returncode == 0, swept.stderr
    assert remains(kfp_server.url, fill_id("pipe-fill")) == NOTHING

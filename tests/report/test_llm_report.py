"""Saved LLM results downstream of ``kfp-bench llm --json-out``: ``kfp-bench merge`` of several
pods' files, and ``kfp-bench report`` on one, through the real CLI; every bad input one clear
message and exit 2. summary.md against a golden file (refresh with KFP_BENCH_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest

from kfp_bench import cli
from kfp_bench.results import read_results
from kfp_bench.stats import store
from tests.conftest import isolate_env
from tests.report.llm_results import merged, pod, save_pods
from tests.synthetic import make_results

GOLDEN = Path(__file__).parent / "golden" / "llm_summary.md"
# Read at import: the autouse clean_env fixture removes KFP_BENCH_* variables from the tests.
UPDATE = os.environ.get("KFP_BENCH_UPDATE_GOLDEN") == "1"
#: metrics.json of an LLM report: metric_values' names, an interface for KFP's "Compare runs".
METRIC_NAMES = {
    "llm_requests", "llm_failed", "llm_rps", "output_tokens_per_s", "input_tokens_per_s",
    "goodput_rps", "goodput_ratio", "usage_mismatch_requests", "multi_token_chunk_requests",
    "cached_hit_rate",
    *(f"{m}_{p}_ms"
      for m in ("ttft", "ttft_intended", "itl", "tpot", "e2e", "e2e_intended", "sched_lag")
      for p in ("p50", "p90", "p95", "p99", "p99_9", "mean", "max")),
}  # fmt: skip


@pytest.fixture
def pods(tmp_path):
    return save_pods(tmp_path / "pods")


@pytest.fixture
def load_file(tmp_path):
    res = read_results(make_results(tmp_path / "r", runs=0, failed=0))
    return store.save(res.load, tmp_path / "load.json")


def test_merge_of_pods_files_is_one_aggregators_merge(pods, tmp_path, capsys):
    out = tmp_path / "merged.json"
    assert cli.main(["merge", *map(str, pods), "-o", str(out)]) == 0
    assert json.loads(out.read_text()) == merged().to_dict()
    stdout = capsys.readouterr().out
    assert "TTFT:\t26\t" in stdout and "Good:\t22 of 28" in stdout
    # The merged file merges again, and reads back to the same document.
    assert store.load(out).to_dict() == merged().to_dict()


def test_merge_of_priced_pods_files_prints_their_cost(tmp_path, capsys):
    """The price saved with each result (llm --cost-per-hour) reaches the merged summary's text,
    as it does a merged predict load's (report/hey.py)."""
    files = []
    for i in range(2):
        st = pod(i)
        st.options["cost_per_hour"] = 36.0
        files.append(str(store.save(st, tmp_path / f"pod{i}.json")))
    assert cli.main(["merge", *files, "-o", str(tmp_path / "merged.json")]) == 0
    stdout = capsys.readouterr().out
    assert "Cost (the serving capacity's price over the load's measured window):" in stdout


@pytest.mark.parametrize("llm_first", [True, False])
def test_merge_of_an_llm_and_a_load_file_names_both(pods, load_file, tmp_path, capsys, llm_first):
    files = [str(pods[0]), str(load_file)] if llm_first else [str(load_file), str(pods[0])]
    out = tmp_path / "out" / "merged.json"
    assert cli.main(["merge", *files, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{files[1]} is {'a load' if llm_first else 'an LLM'} result and {files[0]}" in err
    assert "different kinds cannot be merged" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_merge_of_llm_results_of_other_settings_is_refused(tmp_path, capsys):
    a = store.save(pod(0), tmp_path / "a.json")
    b = store.save(pod(1, slo="ttft=1s"), tmp_path / "b.json")
    assert cli.main(["merge", str(a), str(b), "-o", str(tmp_path / "m.json")]) == 2
    assert "cannot merge LLM results of different settings" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_a_load_worker_of_the_other_kind_is_named_not_merged(pods, load_file):
    result, missing, notes = store.merge_workers([str(load_file), str(pods[0])], 2)
    assert missing == [1] and "workers-lost" in result.flags
    assert "load worker 1: an LLM result, not a load result; left out" in notes


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, str]:
    """The report of the merged pods' file, and what the command printed: made once, read by
    the tests below (none writes to it)."""
    folder = tmp_path_factory.mktemp("llm-report")
    out = folder / "merged.json"
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as env, contextlib.redirect_stdout(printed):
        isolate_env(env)
        assert cli.main(["merge", *map(str, save_pods(folder / "pods")), "-o", str(out)]) == 0
        assert cli.main(["report", str(out)]) == 0
    return folder / "merged-report", printed.getvalue()


def test_report_of_an_llm_file_writes_the_bundle(report):
    report, stdout = report
    assert sorted(p.name for p in report.iterdir()) == sorted(
        ["report.html", "summary.md", "metrics.json", "llm_latency.csv", "llm_series.csv"]
    )
    assert "Latency (ms):" in stdout and "wrote report.html, summary.md" in stdout
    page = report.joinpath("report.html").read_text()
    for fig in ("llm_ttft", "llm_itl", "llm_timeline"):
        assert f'<figure id="fig-{fig}"><img' in page
    assert not re.search(r"<script|https?://|<link", page)
    for text in ("ttft=250ms,itl=40ms", "connection reset mid-stream", "HTTP 429",
                 "multi-token-chunks: completed streams with more tokens"):  # fmt: skip
        assert text in page
    series = report.joinpath("llm_series.csv").read_text().splitlines()
    assert series[0] == (
        "t_s,t,requests,failures,output_tokens,chunks,inflight_us,firsts,ttft_us,inflight"
    )
    assert len(series) > 3


def test_metrics_have_the_stable_names(report):
    metrics = json.loads(report[0].joinpath("metrics.json").read_text())
    assert set(metrics) == METRIC_NAMES
    assert metrics["llm_requests"] == 28 and metrics["goodput_ratio"] == pytest.approx(22 / 28)


def test_markdown_golden(report):
    text = report[0].joinpath("summary.md").read_text()
    if UPDATE or not GOLDEN.exists():
        GOLDEN.write_text(text)
        if not UPDATE:
            pytest.fail(f"{GOLDEN} did not exist: written; check it and commit it")
    assert text == GOLDEN.read_text(), "llm_summary.md changed; refresh: KFP_BENCH_UPDATE_GOLDEN=1"


def test_report_with_out_and_several_files(pods, tmp_path, capsys):
    out = tmp_path / "reports"
    assert cli.main(["report", *map(str, pods), "--out", str(out)]) == 0
    assert (out / "pod0" / "report.html").exists() and (out / "pod1" / "summary.md").exists()


def _malformed(t: Path) -> Path:
    doc = pod(0).to_dict()
    del doc["histogram"]
    (t / "bad.json").write_text(json.dumps(doc))
    return t / "bad.json"


def _other_version(t: Path) -> Path:
    doc = {**pod(0).to_dict(), "format_version": 9}
    (t / "v9.json").write_text(json.dumps(doc))
    return t / "v9.json"


@pytest.mark.parametrize(
    "make, extra, message",
    [
        (lambda t: t / "missing.json", [], "missing.json: no such results file"),
        (_malformed, [], "bad.json: malformed LLM result"),
        (_other_version, [], "results format version 9, this kfp-bench reads version 1"),
        (
            lambda t: save_pods(t / "p", 1)[0],
            ["--results-uri", "ftp://h/never"],
            "--results-uri ftp://h/never: scheme ftp:// is not supported",
        ),
        (lambda t: save_pods(t / "p", 1)[0], ["--baseline", "last:2"], "report it without"),
    ],
)
def test_bad_input(tmp_path, capsys, make, extra, message):
    path = make(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    extra = [e.replace("{tmp}", str(tmp_path)) for e in extra]  # the history would go there
    assert cli.main(["report", str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert sorted(tmp_path.rglob("*")) == before  # nothing created


def test_a_lost_pod_is_a_failure_at_the_top_of_the_report(pods, tmp_path):
    result, missing, _ = store.merge_workers([str(pods[0]), str(tmp_path / "gone.json")], 2)
    assert missing == [1]
    lost = store.save(result, tmp_path / "lost.json")
    assert cli.main(["report", str(lost), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "summary.md").read_text()
    head = md.partition("## Summary")[0]
    assert "**FAILED**" in head and "workers-lost: a load worker's result is missing" in head
    page = (tmp_path / "rep" / "report.html").read_text()
    assert 'id="failures"' in page


def test_the_bundles_error_table_groups_errors_alike_but_for_their_numbers(tmp_path):
    """As the text summary does (``report.hey.error_lines``): one row for 40 overflow errors."""
    from kfp_bench.report.llm_bundle import write_llm_bundle
    from kfp_bench.stats.llm import LlmStats
    from tests.stats.streams import batch, stream

    said = "http 500: prompt of {} tokens, beyond the 64 of the model"
    bad = [
        stream(0.1 * i, [], 0.1 * i + 0.01, outcome=1, status=500, usage=-1, error=said.format(i))
        for i in range(100, 140)
    ]
    s = LlmStats()
    s.add_batch(batch(*bad))
    files = write_llm_bundle(s.close(5.0), tmp_path / "r")
    md = files["summary.md"].read_text()
    assert f"{said.format(100)} (and 39 more like it) | 40" in md
    assert said.format(101) not in md

"""The report bundle: its files, golden Markdown and metrics, sizes, and the all-or-nothing write.

Golden files live in tests/report/golden; refresh them with KFP_BENCH_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest

from kfp_bench.report import bundle as bundle_mod
from kfp_bench.report.bundle import FILES, write_bundle
from kfp_bench.report.metric_names import described
from kfp_bench.results import Results, read_results
from tests.conftest import fail_replace_after
from tests.synthetic import make_results

GOLDEN = Path(__file__).parent / "golden"
# Read at import: the autouse clean_env fixture removes KFP_BENCH_* variables from the tests.
UPDATE = os.environ.get("KFP_BENCH_UPDATE_GOLDEN") == "1"


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE or not path.exists():
        path.write_text(text)
        if not UPDATE:
            pytest.fail(f"{path} did not exist: written; check it and commit it")
    assert text == path.read_text(), f"{name} changed; refresh with KFP_BENCH_UPDATE_GOLDEN=1"


def test_every_file_is_written(bundle):
    assert list(bundle) == list(FILES)
    for name, path in bundle.items():
        assert path.name == name and path.stat().st_size > 0
    assert not [p for p in bundle["report.html"].parent.iterdir() if p.name.startswith(".")]


def test_markdown_golden(bundle):
    text = bundle["summary.md"].read_text()
    assert len(text.encode()) < 400_000
    _golden("summary.md", text)


def test_metrics_golden(bundle):
    metrics = json.loads(bundle["metrics.json"].read_text())
    assert all(isinstance(v, int | float) for v in metrics.values())
    for name in ("runs_succeeded", "runs_failed", "run_duration_p50_s", "api_create_run_p99_ms"):
        assert name in metrics
    for name in ("load_rps", "load_p99_ms", "load_success_ratio", "sweep_max_rps", "replicas_max"):
        assert name in metrics
    assert metrics["runs_succeeded"] == 27 and metrics["runs_failed"] == 3
    _golden("metrics.json", bundle["metrics.json"].read_text())


def test_metric_names_are_documented(bundle):
    """Every metric's name is described by exactly one entry of the reference the docs are
    generated from (report.metric_names)."""
    names = json.loads(bundle["metrics.json"].read_text())
    assert names and {n: len(described(n)) for n in names if len(described(n)) != 1} == {}


def test_html_is_self_contained(bundle):
    page = bundle["report.html"].read_text()
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    assert "@import" not in page and "url(" not in page
    imgs = re.findall(r'<img [^>]*src="data:image/png;base64,', page)
    # run states, durations, 3 API charts, ECDF, tasks, load latency, timeline, sweep
    assert len(imgs) == 10
    for fig in (
        "run_states",
        "run_durations",
        "api_create_run",
        "api_get_run",
        "api_delete_run",
        "task_breakdown",
        "load_latency",
        "load_timeline",
        "sweep",
    ):
        assert f'id="fig-{fig}"' in page


def test_csvs(bundle):
    rows = list(csv.DictReader(bundle["runs.csv"].open()))
    assert len(rows) == 30 and {"run_id", "state", "duration_s"} <= set(rows[0])
    assert len(list(csv.DictReader(bundle["api_calls.csv"].open()))) == 104
    assert len(list(csv.DictReader(bundle["tasks.csv"].open()))) == 90
    series = list(csv.DictReader(bundle["load_series.csv"].open()))
    assert len(series) >= 6 and {"t_s", "requests", "errors", "p99_ms"} <= set(series[0])


def test_load_only_results_and_empty_csvs(tmp_path):
    res = make_results(tmp_path / "r", runs=0, failed=0, requests=300)
    files = write_bundle(read_results(res), tmp_path / "out", kde=False)
    assert files["runs.csv"].read_text().startswith("run_id,")
    metrics = json.loads(files["metrics.json"].read_text())
    assert metrics["load_requests"] == 300 and "run_duration_p50_s" not in metrics


def test_a_failed_render_leaves_the_good_report(tmp_path, bundle, monkeypatch):
    """Rendering fails half-way: the report already there is untouched, and no temp dir stays."""
    out = tmp_path / "out"
    out.mkdir()
    for name, path in bundle.items():
        (out / name).write_bytes(path.read_bytes())
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(*a, **k):
        raise RuntimeError("disk full, say")

    monkeypatch.setattr(bundle_mod.html, "page", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        write_bundle(Results(tmp_path, {}), out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_failure_while_moving_into_place_leaves_one_whole_report(tmp_path, monkeypatch):
    """The bundle moves into place in one step: renames that fail after the second (disk full,
    a crash) never leave new files beside old ones, and no temporary folder stays. Whether the
    write then fails (the old report stays) or never needed a second rename (the new one is
    there) is the implementation's business; a mix is the bug."""
    out = tmp_path / "out"
    out.mkdir()
    for name in FILES:
        (out / name).write_text(f"the old {name}\n")
    (out / "notes.txt").write_text("not the bundle's\n")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    res = read_results(make_results(tmp_path / "r", runs=4, failed=0, requests=100))
    fail_replace_after(monkeypatch, 2)
    try:
        write_bundle(res, out, kde=False)
    except OSError as exc:
        assert "No space left" in str(exc)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    if after != before:
        assert after.keys() == before.keys() and after["notes.txt"] == before["notes.txt"]
        assert all(after[n] != before[n] for n in FILES), "old and new files mixed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "r"]


def test_a_new_report_replaces_the_old_whole_and_keeps_other_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("the old report\n")
    (out / "notes.txt").write_text("not the bundle's\n")
    res = read_results(make_results(tmp_path / "r", runs=4, failed=0, requests=100))
    files = write_bundle(res, out, kde=False)
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, "notes.txt"])
    assert files["report.html"].read_text().startswith("<!")
    assert (out / "notes.txt").read_text() == "not the bundle's\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "r"]

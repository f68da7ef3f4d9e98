"""Run figures at the resolution of the server's timestamps (issue 25).

A real KFP server writes a run's timestamps in whole seconds (kubeflow/pipelines 7b70c7b95f
server/api_converter.go: ``timestamppb.New(time.Unix(CreatedAtInSec, 0))``), so run JSON as it
writes it is fed here directly: the summary, the runs text, the report bundle and the Metrics
the report step logs must show whole seconds and say so; a server that writes microseconds
(the local one) still shows milliseconds.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from datetime import UTC, datetime

import pytest

from kfp_bench.jsonl import JsonlWriter, read
from kfp_bench.kfp import convert
from kfp_bench.records import RunRecord
from kfp_bench.report import runs as runs_report
from kfp_bench.results import write_results
from kfp_bench.stats.runs import RunsStats
from kfp_bench.steps import publish

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()


def _ts(t: float, micro: bool) -> str:
    when = datetime.fromtimestamp(t, UTC)
    if micro:
        return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")  # protobuf JSON of a whole second


def _run(i: int, queue: float, execution: float, micro: bool = False) -> dict:
    """A finished run as the API returns it; whole-second timestamps truncate the times."""
    c = T0 + i * 0.37
    r, f = c + queue, c + queue + execution
    cut = (lambda t: t) if micro else float.__floor__
    return {
        "run_id": f"run-{i}",
        "display_name": f"kfp-bench-x-{i:05d}",
        "state": "SUCCEEDED",
        "created_at": _ts(cut(c), micro),
        "finished_at": _ts(cut(f), micro),
        "state_history": [
            {"update_time": _ts(cut(c), micro), "state": "PENDING"},
            {"update_time": _ts(cut(r), micro), "state": "RUNNING"},
            {"update_time": _ts(cut(f), micro), "state": "SUCCEEDED"},
        ],
        "run_details": {
            "task_details": [
                {
                    "display_name": "train",
                    "state": "SUCCEEDED",
                    "start_time": _ts(cut(r), micro),
                    "end_time": _ts(cut(f), micro),
                }
            ]
        },
    }


RUNS = [(0.4, 2.3), (1.2, 2.9), (0.8, 3.4), (2.6, 2.2), (1.7, 2.5)]


def _stats(micro: bool) -> tuple[RunsStats, list[RunRecord]]:
    stats = RunsStats(requested=len(RUNS), benchmark_id="x", host="http://kfp")
    records = [convert.run_record(_run(i, q, e, micro)) for i, (q, e) in enumerate(RUNS)]
    for rec in records:
        stats.add(rec)
    return stats, records


def test_the_resolution_is_read_from_the_timestamps():
    assert convert.precision("2026-01-02T03:04:05Z") == 1.0
    assert convert.precision("2026-01-02T03:04:05.123Z") == pytest.approx(1e-3)
    assert convert.precision("2026-01-02T03:04:05.123456Z") == pytest.approx(1e-6)
    assert convert.precision("1970-01-01T00:00:00Z") is None  # KFP's unset
    rec = convert.run_record(_run(0, 0.4, 2.3))
    assert rec.resolution == 1.0
    # 0.4 s comes out 0 s, as on a cluster; the interval is the figure +-1 s (both ends are
    # truncated), and never below 0
    assert rec.queue_delay == 0.0 and (rec.queue_delay_lo, rec.queue_delay_hi) == (0.0, 1.0)
    assert rec.execution == 2.0 and (rec.execution_lo, rec.execution_hi) == (1.0, 3.0)
    assert convert.run_record(_run(0, 0.4, 2.3, micro=True)).resolution == pytest.approx(1e-6)


def test_the_polls_narrow_a_whole_second_figure_where_they_saw_the_change():
    """Created while the create call was out (100.0-100.1 on the driver's clock), PENDING at a
    poll from 101.5, RUNNING at a poll that ended at 102.4: the queue delay is 1.4-2.4 s, inside
    the server's 1-3 s (2 s +-1)."""
    seen = convert.Sightings(created=(100.0, 100.1))
    seen.saw("PENDING", 101.5, 101.6)
    seen.saw("RUNNING", 102.3, 102.4)
    run = _run(0, 2.2, 3.0)  # whole seconds: created :05, RUNNING :07
    rec = convert.run_record(run, seen=seen)
    assert rec.queue_delay == 2.0
    assert (rec.queue_delay_lo, rec.queue_delay_hi) == pytest.approx((1.4, 2.4))
    assert rec.polled == ("queue_delay",)
    # polls that contradict the server (another clock's trouble) are not used
    wrong = convert.Sightings(created=(100.0, 100.1))
    wrong.saw("RUNNING", 109.0, 109.1)
    wrong.running_after = 108.0
    rec = convert.run_record(run, seen=wrong)
    assert (rec.queue_delay_lo, rec.queue_delay_hi, rec.polled) == (1.0, 3.0, ())


def test_the_summary_of_whole_seconds_is_quantised_and_says_so():
    stats, _ = _stats(micro=False)
    runs = stats.summary()["runs"]
    assert runs["resolution_s"] == 1.0
    for key in ("duration_s", "queue_delay_s", "execution_s"):
        d = runs[key]
        assert d["resolution_s"] == 1.0 and d["percentiles"] == "nearest-rank"
        for k in ("p50", "p90", "p99", "max"):
            assert d[k] == int(d[k]), (key, k, d[k])  # a figure the server gave, no interpolation
            lo, hi = d["bounds"][k]
            assert lo <= d[k] <= hi and hi - lo <= 2.0
        assert d["count"] == len(RUNS)


def test_the_runs_text_prints_whole_seconds_with_their_bounds():
    stats, _ = _stats(micro=False)
    out = io.StringIO()
    runs_report.write_text(stats.summary(), out)
    text = out.getvalue()
    assert "the server writes them to 1 s" in text and "nearest-rank" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("queue delay"))
    cells = row.split()[2:]  # count, then p50 p90 p99 max mean
    assert all(re.fullmatch(r"\d+", c) for c in cells[1:5]), row  # no decimals
    assert re.fullmatch(r"\d+\.\d\d", cells[5]), row  # the mean, over `count` runs
    assert "bounds (server ±1 s" in text


def test_a_sub_second_server_still_shows_milliseconds():
    stats, records = _stats(micro=True)
    runs = stats.summary()["runs"]
    assert runs["queue_delay_s"]["percentiles"] == "linear"
    assert runs["queue_delay_s"]["p50"] == pytest.approx(1.2, abs=1e-5)
    out = io.StringIO()
    runs_report.write_text(stats.summary(), out)
    row = next(line for line in out.getvalue().splitlines() if "queue delay" in line)
    assert "1.200" in row and "bounds" not in out.getvalue()


def test_the_report_and_its_metrics_at_whole_seconds(tmp_path):
    """The report step's bundle (Markdown, HTML) and the Metrics it logs."""
    metrics, html, text = _whole_second_report(tmp_path)
    assert metrics["run_time_resolution_s"] == 1.0
    assert metrics["run_queue_delay_count"] == len(RUNS)
    for phase in ("duration", "queue_delay", "execution"):
        for s in ("p50", "p90", "p95", "p99", "max"):
            v = metrics[f"run_{phase}_{s}_s"]
            assert v == int(v), (phase, s, v)
    assert "writes its timestamps to 1 s" in text
    table = text.split("### Run times")[1].split("###")[0]
    row = next(line for line in table.splitlines() if line.startswith("| queue delay"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert all(re.fullmatch(r"\d+", c) for c in cells[3:]), row  # p50 .. max: whole seconds
    assert "Bounds of each statistic" in text
    assert "writes its timestamps to 1 s" in html
    # the records read back keep what they carried
    assert read(tmp_path / "results" / "runs.jsonl", RunRecord) == _stats(micro=False)[1]


def _whole_second_report(tmp_path) -> tuple[dict, str, str]:
    """The report step's Metrics, HTML and Markdown of the whole-second runs."""
    stats, records = _stats(micro=False)
    results = tmp_path / "results"
    results.mkdir()
    with JsonlWriter(results / "runs.jsonl") as w:
        for rec in records:
            w.write(rec)
    write_results(results, runs_summary=stats.summary())
    html, md = tmp_path / "report.html", tmp_path / "summary.md"
    metrics = publish.report(str(results), str(tmp_path / "records"), str(html), str(md))
    return metrics, html.read_text(), md.read_text()


def test_the_headline_cards_show_whole_seconds_as_the_table_does(tmp_path):
    """The page's cards print a run duration the server gave in whole seconds as the run
    times' table below them does: 3 s, never 3.000 s (issue 38, part 5)."""
    metrics, page, _ = _whole_second_report(tmp_path)
    card = r'<div class="card"><b>([^<]*)</b><span>([^<]*)</span>'
    cards = {label: value for value, label in re.findall(card, page)}
    for key, label in (
        ("run_duration_p50_s", "run duration p50"),
        ("run_duration_p99_s", "run duration p99"),
    ):
        assert cards[label] == f"{int(metrics[key])} s", (label, cards[label])


def test_the_tasks_table_shows_whole_seconds_too(tmp_path):
    """A task's times come from the same server's timestamps: its table prints them as the run
    times' table does, whole, and its mean two decimals finer."""
    _, page, md = _whole_second_report(tmp_path)
    table = md.split("### Tasks (seconds)")[1]
    row = next(line for line in table.splitlines() if line.startswith("| train"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == str(len(RUNS)) and re.fullmatch(r"\d+\.\d\d", cells[2]), row  # the mean
    assert all(re.fullmatch(r"\d+", c) for c in cells[3:]), row  # p50 .. max
    html_row = (
        page.split("<h3>Tasks (seconds)</h3>")[1].split("<td>train</td>")[1].split("</tr>")[0]
    )
    assert re.findall(r"<td>([^<]*)</td>", html_row) == cells[1:]


def test_saved_results_without_a_resolution_still_load(tmp_path):
    """A runs.jsonl and summary.json written before the resolution was kept."""
    stats, records = _stats(micro=True)
    results = tmp_path / "results"
    results.mkdir()
    old = ("resolution", "queue_delay_lo", "queue_delay_hi", "execution_lo", "execution_hi")
    old += ("duration_lo", "duration_hi", "polled", "at_timeout")
    with (results / "runs.jsonl").open("w") as f:
        for rec in records:
            doc = dataclasses.asdict(rec)
            f.write(json.dumps({k: v for k, v in doc.items() if k not in old}) + "\n")
    summary = stats.summary()
    for key in ("duration_s", "queue_delay_s", "execution_s"):
        for k in ("resolution_s", "percentiles"):
            summary["runs"][key].pop(k)
    summary["runs"].pop("resolution_s")
    write_results(results, runs_summary=summary)
    metrics = publish.report(
        str(results), str(tmp_path / "records"), str(tmp_path / "r.html"), str(tmp_path / "s.md")
    )
    assert "run_time_resolution_s" not in metrics and metrics["run_queue_delay_p50_s"] > 0
    out = io.StringIO()
    runs_report.write_text(summary, out)
    assert "Run times from server timestamps (seconds):" in out.getvalue()

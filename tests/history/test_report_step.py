"""The pipeline's report step with a results history (issue 18): each run archived under
results_uri, the next run's report with the trend and the regression verdict, as ``kfp-bench
report --results-uri --baseline`` makes them. A local folder and GCS (the emulator of
conftest.py)."""

from __future__ import annotations

import json

import pytest

from kfp_bench import history as hist
from kfp_bench.errors import BenchError
from kfp_bench.steps import outcome, publish
from tests.history.conftest import BUCKET
from tests.synthetic import T0, make_results


def _report(tmp_path, name: str, results, **history) -> tuple[dict, str, str]:
    out = tmp_path / name
    out.mkdir()
    html, md = out / "report.html", out / "summary.md"
    found = publish.report(str(results), str(out / "records"), str(html), str(md), **history)
    return found, html.read_text(), md.read_text()


@pytest.fixture(params=["local", "gcs"])
def results_uri(request, tmp_path):
    if request.param == "local":
        return str(tmp_path / "history")
    request.getfixturevalue("gcs")
    return f"gs://{BUCKET}/report-step-{tmp_path.name}"


def test_second_run_shows_the_trend_and_the_verdict_against_the_first(tmp_path, results_uri):
    first = make_results(tmp_path / "first", seed=1, start=T0)
    second = make_results(tmp_path / "second", seed=2, slow=2.0, start=T0 + 86400)
    history = {"results_uri": results_uri, "baseline": "last:5"}

    found, _, md = _report(tmp_path, "a", first, **history)
    # the first run has nothing to compare with: the report says so, no verdict is guessed
    assert "regression" not in found
    assert "**No verdict**: the baseline holds no earlier results" in md

    found, html, md = _report(tmp_path, "b", second, **history)
    assert found["regression"] == 1 and found["baseline_results"] == 1
    assert found["regression_failed_tests"] >= 1 and found["regression_tests"] >= 1
    assert "**REGRESSION**: REGRESSION against the baseline of 1 result(s)" in md
    assert "<h2>History</h2>" in html and "1 earlier results in" in html

    store = hist.open_store(results_uri)
    keys = [e.key for e in hist.entries(store)]
    assert len(keys) == 2
    assert json.loads(store.read(keys[1], "metrics.json"))["regression"] == 1


def test_without_results_uri_nothing_is_archived_and_no_verdict(tmp_path):
    found, html, md = _report(tmp_path, "a", make_results(tmp_path / "r"), baseline="last:5")
    assert "regression" not in found and "<h2>History</h2>" not in html
    assert "verdict" not in md.lower()


def _flagged(tmp_path, **history) -> str:
    """The report step over a history it cannot use: published without it, flagged
    step-failed; the error, as the summary and the check step give it."""
    found, html, md = _report(tmp_path, "a", make_results(tmp_path / "r"), **history)
    assert found["flag_step_failed"] == 1 and "regression" not in found
    assert "<h2>History</h2>" not in html and "step-failed" in md
    records = str(tmp_path / "a" / "records")
    summary = json.loads((tmp_path / "a" / "records" / "summary.json").read_text())
    with pytest.raises(BenchError, match="flagged step-failed"):
        outcome.check_outcome(outcome.outcome_of(records))
    return summary["pipeline"]["errors"]["report_history"]


def test_a_missing_bucket_publishes_the_report_flagged_naming_results_uri(tmp_path, gcs):
    message = _flagged(tmp_path, results_uri="gs://no-such-bucket/p")
    assert message.startswith("pipeline parameters: results_uri gs://no-such-bucket/p:"), message
    assert "bucket no-such-bucket does not exist" in message


def test_an_unknown_baseline_key_publishes_the_report_flagged_naming_baseline(tmp_path):
    message = _flagged(
        tmp_path, results_uri=str(tmp_path / "history"), baseline="20260101T000000Z-00000000"
    )
    assert message.startswith("pipeline parameters: baseline 20260101T000000Z-00000000:")

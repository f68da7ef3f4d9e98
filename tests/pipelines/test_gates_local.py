"""The meta-pipeline's gates with kfp.local: a gate no switched-on part measures is refused at
check_params, before anything starts; a broken threshold fails the run in check_outcome after
the report and its metrics are published, the report's first lines saying which gate broke.
(The regression verdict with fail_on_regression: tests/pipelines/test_schedule_pair.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.venv_image import pipeline

pytestmark = pytest.mark.slow


def _out(capfd) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", capfd.readouterr().out)  # kfp.local colours its lines


def test_a_gate_on_a_figure_nothing_measures_is_refused_first(local_root, capfd):
    with pytest.raises(RuntimeError, match="check-params"):
        pipeline()(run_benchmark=False, thresholds="llm_ttft_p99_ms<500", benchmark_id="gate-no")
    out = _out(capfd)
    assert "pipeline parameter thresholds 'llm_ttft_p99_ms<500': ttft_p99_ms is a figure of " in out
    assert not list(Path(local_root).rglob("inference-load*"))  # nothing started


def test_a_broken_threshold_fails_the_run_after_the_report_is_published(
    local_root, model_server, capfd
):
    with pytest.raises(RuntimeError, match=r"Inner task failed: \S*'check-outcome'"):
        pipeline()(
            run_benchmark=False,
            inference_url=model_server.v1_predict_url,
            duration_sec=1.0,
            concurrency=1,
            thresholds="load_success_ratio>=0.99,load_p50_ms<0.001",
            benchmark_id="gate-broken",
        )
    out = _out(capfd)
    assert "1 gate(s) broke (BROKEN load_p50_ms<0.001: load_p50_ms is " in out
    assert "benchmark ended FAILED" in out  # the exit handler saw it
    (md,) = [p for p in Path(local_root).rglob("summary") if p.parent.name == "report"]
    assert md.read_text().startswith(
        "# kfp-bench report\n\n> **GATES: 1 of 2 broken**\n>\n> - BROKEN load_p50_ms<0.001: "
    )
    doc = json.loads((md.parent / "executor_output.json").read_text())
    (metrics,) = doc["artifacts"]["metrics"]["artifacts"]  # the Metrics output, as published
    assert metrics["metadata"]["gates_checked"] == 2 and metrics["metadata"]["gates_broken"] == 1
    assert metrics["metadata"]["failures"] == 0  # a gate, not a failure flag

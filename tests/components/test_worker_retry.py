"""A load or LLM worker whose pod died is retried (kfp_bench/pipelines/meta.py); the retry must not
load late but save that its worker is lost, and aggregate and report_llm must name that worker by
its index, also when its entry is missing from the list they get.

The retry is told by Argo's attempt index (KFP_RETRY_INDEX, set here as KFP's compiler sets it on
a retried executor) or by the mark its first attempt left at the output path (as under kfp.local,
whose retries reuse the path; tests/pipelines/test_pod_loss.py kills a real worker process).
"""

from __future__ import annotations

import json

import pytest

from kfp_bench.stats import store
from kfp_bench.steps import exit_handler, llm_steps, predict, worker_start
from kfp_bench.steps.params import BenchParams
from tests.components.test_partial import _aggregate, _worker

UNREACHABLE = "ftp://127.0.0.1:9/v1/models/m:predict"  # refused before anything is sent


def _params(**over) -> BenchParams:
    base = dict(run_benchmark=False, run_load=True, load_workers=2, duration_sec=1.0)
    return BenchParams(**{**base, **over})


@pytest.fixture
def attempt(monkeypatch):
    def set_index(index: int | None):
        if index is None:
            monkeypatch.delenv(worker_start.RETRY_INDEX_ENV, raising=False)
        else:
            monkeypatch.setenv(worker_start.RETRY_INDEX_ENV, str(index))

    set_index(None)
    return set_index


def test_a_retried_load_worker_saves_itself_lost_and_aggregate_names_it(tmp_path, attempt, capfd):
    attempt(1)
    out = tmp_path / "w1.json"
    predict.inference_load(_params(inference_url=UNREACHABLE), 1, str(out))
    doc = json.loads(out.read_text())
    assert doc["worker"] == 1 and "retried the step (attempt 2)" in doc["error"]
    assert "load worker 1: lost: its pod died" in capfd.readouterr().out
    summary = _aggregate(tmp_path, _params(), [_worker(tmp_path / "w0.json"), str(out)])
    assert summary["pipeline"]["workers_lost"] == [1]
    assert "workers-lost" in summary["pipeline"]["flags"]
    assert "its pod died" in summary["pipeline"]["errors"]["inference_load 1"]
    assert summary["load"]["workers"]["missing"] == [1]


def test_the_first_attempt_loads_and_leaves_a_mark_its_retry_reads(tmp_path, attempt):
    attempt(0)
    out = tmp_path / "w0.json"
    assert worker_start.worker_started(str(out), 0, "load worker 0: ") == ""
    assert json.loads(out.read_text())["started"]  # the mark, until the result replaces it
    attempt(None)  # kfp.local: no attempt index, the same output path
    why = worker_start.worker_started(str(out), 0, "load worker 0: ")
    assert "its pod died after it started at" in why
    assert json.loads(out.read_text()) == {"worker": 0, "error": why}


def test_a_first_attempt_measures_as_before(tmp_path, attempt):
    attempt(0)
    out = tmp_path / "w0.json"
    predict.inference_load(_params(inference_url=UNREACHABLE), 0, str(out))
    doc = json.loads(out.read_text())
    assert doc["error"].startswith("ConfigError: ") and doc["worker"] == 0


def test_a_dead_workers_entry_missing_from_the_list_is_named_by_index(tmp_path):
    w1 = tmp_path / "w1.json"
    doc = json.loads(open(_worker(w1)).read())
    w1.write_text(json.dumps({**doc, "worker": 1}))
    merged, missing, notes = store.merge_workers([str(w1)], 3)
    assert missing == [0, 2] and merged.workers["missing"] == [0, 2]
    assert notes == ["load workers missing from the result: [0, 2]"]


def test_a_retried_llm_worker_saves_itself_lost_and_report_llm_names_it(tmp_path, attempt):
    p = _params(run_llm=True, llm_url="http://127.0.0.1:9/openai", llm_workers=2)
    attempt(1)
    lost = tmp_path / "llm1.json"
    llm_steps.llm_load(p, 1, str(lost))
    assert json.loads(lost.read_text())["worker"] == 1
    out, html, md = tmp_path / "res", tmp_path / "r.html", tmp_path / "r.md"
    llm_steps.report_llm(p, [str(lost)], str(out), str(html), str(md))
    summary = json.loads((out / "summary.json").read_text())["pipeline"]
    assert summary["workers_lost"] == [0, 1]
    assert "its pod died" in summary["errors"]["llm_load 1"]


def test_the_kfp_api_mark_alone_tells_a_retry(tmp_path, attempt, kfp_api, capfd):
    """As on an Argo retry before KFP 2.17.0: no KFP_RETRY_INDEX and a fresh output path; only
    the start mark the first attempt left on the (local) KFP API says the attempt is a retry."""
    p = _params(inference_url=UNREACHABLE, kfp_host=kfp_api.url, benchmark_id="retry-api-1")
    first = tmp_path / "first" / "w1.json"
    first.parent.mkdir()
    predict.inference_load(p, 1, str(first))
    assert json.loads(first.read_text())["error"].startswith("ConfigError: ")  # it loaded
    fresh = tmp_path / "retry" / "w1.json"
    fresh.parent.mkdir()
    predict.inference_load(p, 1, str(fresh))
    doc = json.loads(fresh.read_text())
    assert doc["worker"] == 1
    assert "experiment kfp-bench-retry-api-1-worker-1, exists" in doc["error"]
    assert "load worker 1: lost: its start mark" in capfd.readouterr().out
    # the LLM worker of the same index is not taken for a retry by the load worker's mark
    llm = _params(run_llm=True, llm_url="http://127.0.0.1:9/openai", llm_workers=2,
                  kfp_host=kfp_api.url, benchmark_id="retry-api-1")  # fmt: skip
    first_llm = str(tmp_path / "llm1.json")
    assert worker_start.worker_started(first_llm, 1, "LLM worker 1: ", llm, "llm-worker") == ""
    retried = tmp_path / "retry" / "llm1.json"
    llm_steps.llm_load(llm, 1, str(retried))
    assert "lost: its start mark" in json.loads(retried.read_text())["error"]


def test_an_unreachable_kfp_api_leaves_a_first_attempt_that_says_so(tmp_path, attempt, capfd):
    p = _params(inference_url=UNREACHABLE, kfp_host="http://127.0.0.1:9", benchmark_id="u-1")
    predict.inference_load(p, 0, str(tmp_path / "w0.json"))
    assert json.loads((tmp_path / "w0.json").read_text())["error"].startswith("ConfigError: ")
    assert "load worker 0: WARNING: no start mark on the KFP API" in capfd.readouterr().out


def test_the_exit_handlers_cleanup_deletes_the_marks_of_a_load_only_benchmark(kfp_api):
    from kfp_bench.kfp.auth import Auth
    from kfp_bench.kfp.start_mark import claim, mark_name
    from kfp_bench.steps.ids import benchmark_id_for
    from tests.components.conftest import leftovers

    bid = benchmark_id_for("retry-clean", "job-1")
    for kind, i in (("worker", 0), ("worker", 1), ("llm-worker", 0)):
        assert claim(kfp_api.url, Auth("none"), mark_name(bid, kind, i)) == (False, "")
    assert leftovers(kfp_api.url, bid) == 3
    p = _params(kfp_host=kfp_api.url, benchmark_id="retry-clean")  # run_benchmark off
    done = exit_handler.cleanup(p, "job-1", "FAILED", "load worker 1 lost")
    assert f"benchmark {bid}: deleted 0 runs, 3 experiments" in done and "no lease taken" in done
    assert leftovers(kfp_api.url, bid) == 0

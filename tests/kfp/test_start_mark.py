"""The start mark of a load or LLM worker on the KFP API (kfp_bench.kfp.start_mark), against the
local KFP API server, which answers a second experiment of the same name as the real one does
(409, gRPC AlreadyExists: kubeflow/pipelines 7b70c7b95f storage/experiment_store.go:261-264),
and the cleanup sweep that deletes the marks with their benchmark."""

from __future__ import annotations

from kfp_bench.kfp.auth import Auth
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.options import CleanupOptions
from kfp_bench.kfp.start_mark import claim, mark_name
from tests.kfp.conftest import NOTHING, remains

NONE = Auth("none")


def test_the_first_claim_makes_the_mark_and_a_second_finds_it(kfp_server):
    name = mark_name("mark-1", "worker", 0)
    assert name == "kfp-bench-mark-1-worker-0"
    assert claim(kfp_server.url, NONE, name) == (False, "")
    retry, why = claim(kfp_server.url, NONE, name)
    assert retry is True and f"experiment {name}, exists (created " in why
    # an LLM worker of the same index has a mark of its own
    assert claim(kfp_server.url, NONE, mark_name("mark-1", "llm-worker", 0)) == (False, "")


def test_a_create_whose_answer_was_lost_is_still_this_attempts(kfp_server):
    """The server makes the mark and answers 503 (a proxy timing out); the create sent again
    answers 409, and the attempt's token in the description says the mark is its own."""
    name = mark_name("mark-2", "worker", 1)
    kfp_server.set_faults(1.0, "create_experiment", after=True, seed=1)
    try:
        assert claim(kfp_server.url, NONE, name, sleep=lambda s: kfp_server.set_faults()) == (
            False,
            "",
        )
    finally:
        kfp_server.set_faults()
    assert claim(kfp_server.url, NONE, name)[0] is True


def test_an_unreachable_api_cannot_tell():
    slept = []
    retry, why = claim("http://127.0.0.1:9", NONE, "kfp-bench-x-worker-0", sleep=slept.append)
    assert retry is None and "create experiment kfp-bench-x-worker-0: no answer" in why
    assert slept == [1.0, 2.0]


def test_cleanup_deletes_the_marks_with_their_benchmark_only(kfp_server):
    for bid in ("mark-3", "mark-3x"):
        for kind, i in (("worker", 0), ("worker", 1), ("llm-worker", 0)):
            assert claim(kfp_server.url, NONE, mark_name(bid, kind, i)) == (False, "")
    report = sweep(CleanupOptions(host=kfp_server.url, benchmark_id="mark-3"))
    assert sorted(report["experiments"]) == [
        "kfp-bench-mark-3-llm-worker-0",
        "kfp-bench-mark-3-worker-0",
        "kfp-bench-mark-3-worker-1",
    ]
    assert report["deleted"]["experiments"] == 3 and not report["failed"]
    assert remains(kfp_server.url, "mark-3-") == NOTHING
    assert remains(kfp_server.url, "mark-3x-")["experiments"] == 3
    sweep(CleanupOptions(host=kfp_server.url, benchmark_id="mark-3x"))
    assert remains(kfp_server.url, "mark-3x-") == NOTHING


def test_a_load_pod_without_urllib3_leaves_its_mark(kfp_server):
    """A load worker's pod has the load extra only (no urllib3): the mark and the step's auth
    must not import the driver's HTTP client (what tests/pipelines/test_pod_loss.py found)."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['urllib3'] = None\n"
        "from kfp_bench.steps.params import BenchParams\n"
        "from kfp_bench.steps.worker_start import _api_mark\n"
        f"p = BenchParams(benchmark_id='mark-4', kfp_host={kfp_server.url!r})\n"
        "assert _api_mark(p, 'worker', 0, '') == ''\n"
        "assert 'exists' in _api_mark(p, 'worker', 0, '')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr

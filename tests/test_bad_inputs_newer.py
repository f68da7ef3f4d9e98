"""The bad-input table of the newer flags (issue 41): URLs without a scheme, flags that only mean
something beside another, gates that can never hold, output paths that cannot be written,
history reports that fail, malformed profiles and kubeconfigs, workloads that cannot be made.

Each case runs as a real ``kfp-bench`` process through ``tests/test_bad_inputs.py``'s
``run_cases`` (a fresh working directory and TMPDIR, no token, KFP or proxy variables) and is
checked as there: exit 2 (or the case's documented code, ``CODES``), one line
``kfp-bench: ...`` naming the input and the fix, no traceback, empty stdout, nothing left in
the working directory, TMPDIR or the local KFP server; and nothing sent to ``{seen}``, a server
that records every request (``listener``), before the refusal.
"""

from __future__ import annotations

import json

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.records import Result
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.stats.load import LoadStats
from kfp_bench.steps.params import BenchParams
from tests.loopback import Handler, serving
from tests.test_bad_inputs import (
    DEAD,
    GOOD,
    RESULTS,
    SUMMARY,
    Case,
    Outcome,
    _tree,
    assert_one_line_refusal,
    run_cases,
    server_state,
)

HELLO = "{ref}/hello_world.yaml"
RUNS = ("runs", "--host", "{kfp}", "--pipeline", HELLO, "--num-runs", "1", "--out", "o")
LOAD = ("load", "-n", "1", "-c", "1")
#: A folder name longer than a file system takes (255 bytes).
LONG = "a" * 300


def _load_result() -> str:
    """A load result as ``kfp-bench load --json-out`` writes it: one request."""
    stats = LoadStats(corrected=True, started_at=0.0)
    stats.add(Result(0, 0.0, 0.0002, 0.005, 200, 2, 40))
    stats.close(0.01)
    return json.dumps(stats.to_dict())


LOAD_RESULT = _load_result()
#: A run as runs.jsonl holds it: one that succeeded in 1 s.
RUN = json.dumps(
    {"run_id": "r1", "name": "kfp-bench-x-00000", "state": "SUCCEEDED", "created_at": 1.0,
     "scheduled_at": 1.0, "finished_at": 2.0, "queue_delay": 0.0, "execution": 1.0,
     "duration": 1.0, "tasks": [], "simulated": True, "error": ""}
)  # fmt: skip
#: A runs benchmark's results directory, and a load's (its load.json): no figure in common.
RUNS_DIR = {"runs/": None, "runs/summary.json": SUMMARY, "runs/runs.jsonl": RUN + "\n"}
LOAD_DIR = {"load/": None, "load/summary.json": SUMMARY, "load/load.json": LOAD_RESULT}
#: A metrics profile whose third line PyYAML cannot read.
BAD_PROFILE = "- query: up\n  metricName: a\n    bad: [\n"
#: An S3 history whose endpoint refuses connections (without credentials: refused for that).
S3_DOWN = f"s3://bucket/p?endpoint={DEAD}"
#: A built-in profile with the variables its queries use.
KSERVE_PROFILE = ("--metrics-profile", "kserve-predictor", "--metrics-var", "namespace=a",
                  "--metrics-var", "isvc=b")  # fmt: skip
FILL_PROFILE = ("--fill", "5", "--metrics-profile", "kfp", "--metrics-var", "namespace=k")
#: One push label given twice, with two values.
TWO_LABELS = ("--push-label", "pool=a", "--push-label", "pool=b")
LLM = ("llm", "--model", "m", "--no-model-check", "-n", "1", "-c", "1")
#: A --json-out in a folder no one can make a file in, root included (the tests run as root).
PROC_OUT = ("--json-out", "/proc/kfp-bench-x.json")
#: An SLO search whose result would go to o/r.json: nothing may be made there.
FIND = ("llm", "--model", "m", "--no-model-check", "-z", "2s", "--json-out", "o/r.json")

CASES = [
    Case(
        "llm-find-max-without-slo",
        (*FIND, "--find-max", "rate", DEAD + "/openai"),
        ("--find-max needs --slo", "--slo ttft=500ms"),
    ),
    Case(
        "llm-find-max-unknown-axis",
        (*FIND, "--find-max", "tokens", "--slo", "ttft=1s", DEAD + "/openai"),
        ("--find-max 'tokens'", "give rate or concurrency"),
    ),
    Case(
        "llm-find-max-limit-below-start",
        (
            *FIND,
            "--find-max",
            "rate",
            "--slo",
            "ttft=1s",
            "--find-start",
            "8",
            "--find-limit",
            "4",
            DEAD + "/openai",
        ),
        ("--find-limit 4", "give a level above --find-start 8"),
    ),  # fmt: skip
    Case(
        "llm-find-max-share-never-met",
        (
            *FIND,
            "--find-max",
            "concurrency",
            "--slo",
            "ttft=1s",
            "--slo-share",
            "1.5",
            DEAD + "/openai",
        ),
        ("--slo-share 1.5", "give a share in (0, 1]"),
    ),  # fmt: skip
    Case(
        "llm-find-max-without-z",
        ("llm", "--model", "m", "--find-max", "rate", "--slo", "ttft=1s", DEAD + "/openai"),
        ("--find-max needs -z", "-z 30s"),
    ),
    Case(
        "llm-replicas-not-a-number",
        (*LLM, "--replicas", "two", DEAD + "/openai"),
        ("--replicas: 'two'", "give a whole number, e.g. 2"),
    ),
    Case(
        "compare-gpus-of-zero",
        ("compare", "a.json", "b.json", "--gpus", "0,8"),
        ("--gpus: '0,8'", "A's and B's as A,B"),
    ),
    # -- a. a Prometheus, scrape or Pushgateway URL without a scheme ---------------------------
    Case(
        "load-prometheus-url-without-scheme",
        (*LOAD, *KSERVE_PROFILE, "--prometheus-url", "prom:9090", DEAD + "/"),
        ("--prometheus-url 'prom:9090': no http:// or https:// scheme", "give e.g. http://"),
    ),
    Case(
        "llm-scrape-without-scheme",
        (*LLM, "--scrape", "127.0.0.1:8000/metrics", DEAD + "/openai"),
        ("--scrape '127.0.0.1:8000/metrics': no http:// or https:// scheme", "give e.g."),
    ),
    Case(
        "load-second-scrape-not-http",
        (*LOAD, "--scrape", DEAD + "/metrics", "--scrape", "ftp://h/metrics", DEAD + "/"),
        ("--scrape 'ftp://h/metrics': not a http(s) URL", "give e.g."),
    ),
    Case(
        "runs-fill-prometheus-url-without-scheme",
        (*RUNS, *FILL_PROFILE, "--prometheus-url", "prom:9090"),
        ("--prometheus-url 'prom:9090': no http:// or https:// scheme",),
        kfp=True,
    ),
    Case(
        "runs-metrics-url-without-scheme",
        (*RUNS, "--metrics-url", "ml-pipeline:8888/metrics"),
        ("--metrics-url 'ml-pipeline:8888/metrics': no http:// or https:// scheme", "or none"),
        kfp=True,
    ),
    Case(
        "report-pushgateway-url-without-scheme",
        ("report", "r", "--pushgateway-url", "pushgateway:9091", "--out", "new"),
        ("--pushgateway-url 'pushgateway:9091'", "http(s)://HOST:PORT"),
        files=RESULTS,
    ),
    # -- b. a flag that only means something beside another: one rule, one message ----------
    Case(
        "runs-fill-steps-without-fill",
        (*RUNS, "--fill-steps", "3"),
        ("--fill-steps 3: takes effect only beside --fill", "add --fill K, or drop --fill-steps"),
        kfp=True,
    ),
    Case(
        "runs-fill-mode-without-fill",
        (*RUNS, "--fill-mode", "finish"),
        ("--fill-mode: takes effect only beside --fill", "add --fill K, or drop --fill-mode"),
        kfp=True,
    ),
    Case(
        "runs-metrics-step-without-profile",
        (*RUNS, "--fill", "5", "--metrics-step", "5s"),
        ("--metrics-step 5: takes effect only beside --metrics-profile", "add --metrics-profile"),
        kfp=True,
    ),
    Case(
        "runs-profile-without-fill",
        (*RUNS, "--metrics-profile", "kfp"),
        ("--metrics-profile: takes effect only beside --fill", "add --fill K"),
        kfp=True,
    ),
    Case(
        "load-trace-speed-without-trace",
        (*LOAD, "--trace-speed", "2", DEAD + "/"),
        ("--trace-speed 2: takes effect only beside --trace", "add --trace FILE, or drop"),
    ),
    Case(
        "load-metrics-step-without-profile-or-scrape",
        (*LOAD, "--metrics-step", "2", DEAD + "/"),
        ("--metrics-step 2", "add --metrics-profile FILE or --scrape URL"),
    ),
    Case(
        "llm-prometheus-url-beside-scrape-without-profile",
        (*LLM, "--scrape", DEAD + "/metrics", "--prometheus-url", DEAD, DEAD + "/openai"),
        ("--prometheus-url: takes effect only beside --metrics-profile",),
    ),
    Case(
        "llm-knee-factor-without-sweep",
        (*LLM, "--knee-factor", "5", DEAD + "/openai"),
        ("--knee-factor 5", "add --sweep-rates R,R or --sweep-concurrency C,C"),
    ),
    Case(
        "llm-prompts-format-without-file",
        (*LLM, "--prompts-format", "sharegpt", DEAD + "/openai"),
        ("--prompts-format: takes effect only beside --prompts-file", "add --prompts-file"),
    ),
    Case(
        "llm-scrape-header-without-scrape",
        (*LLM, "--scrape-header", "X-A: 1", DEAD + "/openai"),
        ("--scrape-header: takes effect only beside --scrape", "add --scrape URL"),
    ),
    Case(
        "llm-slo-share-without-find-max",
        (*LLM, "--slo", "ttft=1s", "--slo-share", "0.5", DEAD + "/openai"),
        ("--slo-share 0.5: takes effect only beside --find-max", "add --find-max AXIS, or drop"),
    ),
    Case(
        "llm-find-start-without-find-max",
        (*LLM, "--find-start", "4", DEAD + "/openai"),
        ("--find-start 4: takes effect only beside --find-max", "or drop --find-start"),
    ),
    Case(
        "load-arrival-in-closed-loop",
        (*LOAD, "--arrival", "poisson", DEAD + "/"),
        ("--arrival: takes effect only beside --rate or --stages", "add --rate R or --stages S"),
    ),
    Case(
        "load-max-inflight-in-closed-loop",
        (*LOAD, "--max-inflight", "3", DEAD + "/"),
        ("--max-inflight 3: takes effect only beside --rate or --stages or --trace",),
    ),
    Case(
        "llm-max-inflight-in-closed-loop",
        (*LLM, "--max-inflight", "3", DEAD + "/openai"),
        ("--max-inflight 3: takes effect only beside --rate", "or drop --max-inflight"),
    ),
    Case(
        "report-push-label-without-pushgateway",
        ("report", "r", "--push-label", "benchmark=x", "--out", "new"),
        ("--push-label: takes effect only beside --pushgateway-url", "or drop --push-label"),
        files=RESULTS,
    ),
    Case(
        "report-push-label-given-twice",
        ("report", "r", "--pushgateway-url", DEAD, *TWO_LABELS, "--out", "new"),
        ("--push-label pool: given twice", "give each label once"),
        files=RESULTS,
    ),
    # -- c. a gate whose bound its figure can never reach -------------------------------------
    Case(
        "load-ratio-gate-above-1",
        (*LOAD, "--threshold", "load_success_ratio>=99", DEAD + "/"),
        (
            "--threshold 'load_success_ratio>=99': load_success_ratio is a ratio from 0 to 1",
            "can never be >= 99",
            "e.g. load_success_ratio>=0.99",
        ),  # fmt: skip
    ),
    Case(
        "llm-ratio-gate-that-never-breaks",
        (*LLM, "--threshold", "llm_goodput_ratio<=99", DEAD + "/openai"),
        ("--threshold 'llm_goodput_ratio<=99'", "the gate can never break"),
    ),
    Case(
        "runs-negative-latency-gate",
        (*RUNS, "--threshold", "run_duration_p99_s<-1"),
        ("--threshold 'run_duration_p99_s<-1'", "never below 0", "can never be < -1"),
        kfp=True,
    ),
    # -- d. output paths that cannot be written: refused before any work, in every command ----
    # /proc is a folder no one can make a file in, root included (the tests run as root).
    Case(
        "llm-json-out-in-a-folder-that-takes-no-file",
        (*LLM, "--json-out", "/proc/kfp-bench-x.json", DEAD + "/openai"),
        ("--json-out /proc/kfp-bench-x.json: cannot write in /proc", "give a folder you can"),
    ),
    Case(
        "load-json-out-in-a-folder-that-takes-no-file",
        (*LOAD, "--json-out", "/proc/kfp-bench-x.json", DEAD + "/"),
        ("--json-out /proc/kfp-bench-x.json: cannot write in /proc",),
    ),
    Case(
        "llm-requests-out-in-a-folder-that-takes-no-file",
        (*LLM, "--requests-out", "/proc/kfp-bench-x.jsonl", DEAD + "/openai"),
        ("--requests-out /proc/kfp-bench-x.jsonl: cannot write in /proc", "give a folder you"),
    ),
    Case(
        "load-requests-out-in-a-folder-that-takes-no-file",
        (*LOAD, "--requests-out", "/proc/kfp-bench-x.jsonl", DEAD + "/"),
        ("--requests-out /proc/kfp-bench-x.jsonl: cannot write in /proc",),
    ),
    Case(
        "llm-requests-out-the-json-out-file",
        (*LLM, "--json-out", "o/r.json", "--requests-out", "o/r.json", DEAD + "/openai"),
        ("--requests-out o/r.json: the file --json-out writes", "give another path"),
    ),
    Case(
        "llm-requests-out-of-a-sweep",
        (*FIND[:-2], "--sweep-concurrency", "1,2", "--requests-out", "o/r.jsonl", DEAD + "/openai"),
        ("--requests-out logs the requests of one load", "drop --sweep-*, --find-max"),
    ),
    Case(
        "llm-export-unknown-format",
        (*LLM, "--export", "guidellm", "o/r.json", DEAD + "/openai"),
        ("--export guidellm: no such format", "give --export llm-d FILE"),
    ),
    Case(
        "llm-export-in-a-folder-that-takes-no-file",
        (*LLM, "--export", "llm-d", "/proc/kfp-bench-x.json", DEAD + "/openai"),
        ("--export /proc/kfp-bench-x.json: cannot write in /proc", "give a folder you"),
    ),
    Case(
        "llm-export-the-requests-out-file",
        (*LLM, "--requests-out", "o/r", "--export", "llm-d", "o/r", DEAD + "/openai"),
        ("--export o/r: the file --requests-out writes", "give another path"),
    ),
    Case(
        "llm-export-of-a-search",
        (*FIND, "--find-max", "rate", "--slo", "ttft=1s", "--export", "llm-d", "b", DEAD),
        ("--export llm-d writes the report of one load", "drop --sweep-*, --find-max"),
    ),
    Case(
        "runs-out-in-a-folder-that-takes-no-file",
        ("runs", "--host", "{kfp}", "--pipeline", HELLO, "--num-runs", "1", "--out", "/proc/o"),
        ("--out /proc/o: cannot write in /proc", "give a folder you can write to"),
        kfp=True,
    ),
    Case(
        "merge-out-in-a-folder-that-takes-no-file",
        ("merge", "a.json", "-o", "/proc/kfp-bench-m.json"),
        ("-o /proc/kfp-bench-m.json: cannot write in /proc", "give a folder you can write to"),
        files={"a.json": LOAD_RESULT},
    ),
    Case(
        "merge-out-under-a-file",
        ("merge", "a.json", "-o", "f/m.json"),
        ("-o f/m.json: f is a file, not a folder", "give another path"),
        files={"a.json": LOAD_RESULT, "f": "x"},
    ),
    Case(
        "merge-out-name-too-long",
        ("merge", "a.json", "-o", LONG + "/m.json"),
        (f"-o {LONG}/m.json: not a path that can be written (File name too long)",),
        files={"a.json": LOAD_RESULT},
    ),
    Case(
        "llm-json-out-name-too-long",
        (*LLM, "--json-out", LONG + "/x.json", DEAD + "/openai"),
        ("--json-out", "not a path that can be written", "give another path"),
    ),
    Case(
        "runs-out-name-too-long",
        ("runs", "--host", "{kfp}", "--pipeline", HELLO, "--num-runs", "1", "--out", LONG),
        (
            "--out",
            "not a path that can be written (File name too long)",
        ),
        kfp=True,
    ),
    Case(
        "report-out-that-can-never-be-written",
        ("report", "r", "--out", "/proc/kfp-bench-r"),
        ("--out /proc/kfp-bench-r: cannot write in /proc", "give a folder you can write to"),
        files=RESULTS,
    ),
    # -- e. a history report that fails leaves no --out; a push refused before the archive -----
    Case(
        "report-local-history-under-a-file",
        ("report", "r", "--results-uri", "f/hist", "--out", "new"),
        ("--results-uri f/hist: f is a file, not a folder", "give another path"),
        files={**RESULTS, "f": "x"},
    ),
    Case(
        "report-local-history-in-a-folder-that-takes-no-file",
        ("report", "r", "--results-uri", "/proc/kfp-bench-hist", "--out", "new"),
        ("--results-uri /proc/kfp-bench-hist: cannot write in /proc", "give a folder you can"),
        files=RESULTS,
    ),
    Case(
        "report-history-endpoint-down",
        ("report", "r", "--results-uri", S3_DOWN, "--out", "new"),
        (f"--results-uri {S3_DOWN}",),
        files=RESULTS,
    ),
    Case(
        "report-history-baseline-key-missing",
        ("report", "r", "--results-uri", "hist", "--baseline", "nokey-1", "--out", "new"),
        ("--baseline nokey-1: no such complete result in hist", "give last:N or one of the keys"),
        files={**RESULTS, "hist/": None},
    ),
    Case(
        "report-load-file-with-history-and-pushgateway",
        ("report", "a.json", "--results-uri", "hist", "--pushgateway-url", DEAD, "--out", "new"),
        (
            "--pushgateway-url: a.json is a load result file, which has no metrics to push",
            "give a results directory",
        ),  # fmt: skip
        files={"a.json": LOAD_RESULT, "hist/": None},
    ),
    # -- f. a malformed profile, kubeconfig or S3 URI: one line in the user's terms -----------
    Case(
        "load-metrics-profile-not-yaml",
        (*LOAD, "--metrics-profile", "p.yaml", "--prometheus-url", DEAD, DEAD + "/"),
        ("--metrics-profile p.yaml:3:8: mapping values are not allowed here", "fix the YAML"),
        files={"p.yaml": BAD_PROFILE},
    ),
    Case(
        "submit-metrics-profile-not-yaml",
        ("submit", "--host", "{kfp}", "--param", "metrics_profile=" + BAD_PROFILE),
        (
            "pipeline parameter metrics_profile=(YAML text):3:8: mapping values are not allowed",
            "fix the YAML",
        ),  # fmt: skip
        kfp=True,
    ),
    Case(
        "install-kubeconfig-not-yaml",
        ("install", "--namespace", "team", "--kubeconfig", "kc.yaml"),
        ("--kubeconfig kc.yaml:4:1: expected ',' or ']'", "give your kubeconfig"),
        files={"kc.yaml": "apiVersion: v1\nclusters: [\n  bad: x\n"},
    ),
    Case(
        "install-kubeconfig-not-a-kubeconfig",
        ("install", "--namespace", "team", "--kubeconfig", "kc.yaml"),
        ("--kubeconfig kc.yaml: not a kubeconfig (no clusters)", "give your kubeconfig"),
        files={"kc.yaml": "just: a mapping\n"},
    ),
    Case(
        "report-s3-bucket-name-malformed",
        ("report", "r", "--results-uri", "s3://Bench_Results/nightly", "--out", "new"),
        (
            "--results-uri s3://Bench_Results/nightly: bucket 'Bench_Results' is not an S3 bucket",
            "e.g. mlpipeline",
        ),  # fmt: skip
        files=RESULTS,
    ),
    Case(
        "report-s3-endpoint-malformed",
        ("report", "r", "--results-uri", "minio://mlpipeline/p?endpoint=http://h:99999"),
        ("endpoint 'http://h:99999' is not the store's address", "?endpoint=http://HOST:PORT"),
        files=RESULTS,
    ),
    # -- compare: two results with no figure in common (no rerun gives them one) -------------
    Case(
        "compare-a-load-result-with-a-runs-result",
        ("compare", "runs", "load"),
        (
            "compare runs load: load has no runs.jsonl (run_duration_s, runs_failed) and runs no "
            "load.json (load_failed, load_latency_ms)",
            "give two results of the same benchmark",
        ),  # fmt: skip
        files={**RUNS_DIR, **LOAD_DIR},
    ),
    # -- g. a workload that cannot be generated: refused at once, not spinning --------------
    Case(
        "llm-shared-prefix-more-groups-than-the-vocabulary-makes",
        (*LLM, "--shared-prefix", "200,4,1,10", DEAD + "/openai"),
        (
            "--shared-prefix '200,4,1,10': 200 distinct system prompts",
            "cannot be made",
            "give fewer groups or longer prefixes, e.g. 200,4,2,10",
        ),  # fmt: skip
    ),
    # -- h. nothing sent before the last check: not Prometheus, not a scrape -----------------
    # {seen}: this case's URL at the listener, which records what the case sent it
    Case(
        "load-prometheus-not-asked-before-json-out-refused",
        (*LOAD, *KSERVE_PROFILE, "--prometheus-url", "{seen}", *PROC_OUT, "{seen}/"),
        ("--json-out /proc/kfp-bench-x.json: cannot write in /proc",),
    ),
    Case(
        "llm-prometheus-and-scrape-not-asked-before-json-out-refused",
        (
            *LLM,
            *KSERVE_PROFILE,
            "--prometheus-url",
            "{seen}",
            "--scrape",
            "{seen}/metrics",
            *PROC_OUT,
            "{seen}/openai",
        ),
        ("--json-out /proc/kfp-bench-x.json: cannot write in /proc",),
    ),  # fmt: skip
]
#: The documented code of a failure of the environment, which a rerun may mend (an endpoint
#: down, no credentials: exit 1); every other case is bad input, exit 2 (a baseline key the
#: history lacks too: no rerun finds it).
CODES = {"report-history-endpoint-down": 1}


@pytest.fixture(scope="module")
def kfp_server():
    """The local KFP server, and what it holds before any case."""
    with start_kfp_server(simulate="all:fixed(0.2)") as server:
        server.initial = server_state(server.url)
        yield server


class Listener:
    """A server that answers every request 404 and records its path: ``{seen}`` in a case's
    arguments is ``url/<case id>``, so that what each case sent is told apart."""

    def __init__(self, url: str, paths: list[str]):
        self.url, self.paths = url, paths

    def sent_by(self, case_id: str) -> list[str]:
        return [p for p in self.paths if p.startswith(f"/{case_id}/") or p == f"/{case_id}"]


@pytest.fixture(scope="module")
def listener():
    paths: list[str] = []

    class Recorder(Handler):
        def do_GET(self):
            paths.append(self.path)
            self.send(404, {"status": "error", "error": "nothing here"})

        do_POST = do_GET

    with serving(Recorder) as url:
        yield Listener(url, paths)


@pytest.fixture(scope="module")
def outcomes(kfp_server, listener, tmp_path_factory) -> dict[str, Outcome]:
    def seen(case: Case) -> dict[str, str]:
        return {"{seen}": f"{listener.url}/{case.id}"}

    return run_cases(CASES, kfp_server, tmp_path_factory, seen)


def test_every_case_its_own_id():
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_input(case: Case, outcomes, kfp_server, listener):
    o = outcomes[case.id]
    r = o.result
    assert r is not None, "no answer in 120 s"
    assert_one_line_refusal(r, case.expect, CODES.get(case.id, 2))
    assert r.stdout == ""
    assert listener.sent_by(case.id) == [], "a request went out before the refusal"
    assert _tree(o.cwd) == o.made, "left behind in the working directory"
    assert _tree(o.tmpdir) == set(), "left behind in TMPDIR"
    assert o.start_left == set(), "left behind by kfp-bench's start-up"
    if case.kfp:
        assert kfp_server.after == kfp_server.initial, "left behind at the KFP server"


@pytest.mark.parametrize(
    "thresholds, said",
    [
        ("load_success_ratio>=99", "load_success_ratio is a ratio from 0 to 1"),
        ("load_p99_ms>-5", "load_p99_ms is never below 0, so the gate can never break"),
    ],
)
def test_a_gate_parameter_its_figure_cannot_reach_is_refused(thresholds, said):
    """The pipeline's first step refuses it as the CLI does (``gates.parse``)."""
    with pytest.raises(ConfigError, match=said) as err:
        BenchParams(**GOOD, thresholds=thresholds).check(fetch=False)
    assert "pipeline parameter thresholds" in str(err.value)


def test_a_malformed_s3_uri_parameter_is_refused_by_the_first_step():
    """The first step checks the URI's text as the CLI does (``names.s3_uri_problem``)."""
    with pytest.raises(ConfigError, match="bucket 'B' is not an S3 bucket name"):
        BenchParams(**GOOD, results_uri="s3://B/p").check(fetch=False)


def test_the_first_step_refuses_a_held_lease_in_one_line(capsys):
    """Another benchmark of the benchmark_id holds the lease: the first step's function as its
    pod calls it ends in one line naming the holder, its expiry and the fix, with the code of
    an error a rerun may mend (1: the holder ends), not a traceback."""
    from kfp_bench.components import check_params
    from kfp_bench.steps import exit_handler, start

    with start_kfp_server() as server:
        p = BenchParams(**{**GOOD, "kfp_host": server.url, "run_load": False}, benchmark_id="held")
        first = start.check_params(p, "job-a")
        args = {n: getattr(p, n) for n in BenchParams.names()}
        capsys.readouterr()
        try:
            with pytest.raises(SystemExit) as done:
                check_params.func(**args, job_id="job-b")
        finally:
            exit_handler.cleanup(p, "job-a", "SUCCEEDED", "")
    assert done.value.code == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kfp-bench: another benchmark holds the lease")
    for words in (f"benchmark {first['benchmark_id']} (pipeline run job-a), until ",
                  "wait for it (pipeline parameter lease_wait_sec)"):  # fmt: skip
        assert words in lines[0], lines[0]

"""The bad-input catalogue: one table of bad inputs to every subcommand, each run as a real
``kfp-bench`` process, and bad pipeline parameters refused by the pipeline's first step.

Each CLI case runs ``python -m kfp_bench.cli ARGV`` in a fresh working directory, with TMPDIR
pointing at a fresh folder and no token, KFP or proxy variables in its environment, and checks:

- the exit code is 2 (bad input);
- stderr is exactly ONE non-empty line, ``kfp-bench: ...``, holding the case's substrings, which
  name the input at fault and the fix; argparse's own errors are no exception (``Parser.error``
  turns them into that one line, without the usage lines), and stdout is empty;
- no "Traceback";
- nothing is left behind: the working directory holds exactly the files the case made itself,
  TMPDIR is empty, and the local KFP server the cases talk to (one for the module) holds no
  experiment, pipeline, run or recurring run but its Default experiment after them.

The cases run a few at a time, so the server is checked after all of them; its leftovers would
carry their names. Each is a process forked from a server that imported kfp-bench once
(``tests/cli_forks.py``); what that import leaves is checked with every case's leftovers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kfp_bench.cli import build_parser
from kfp_bench.errors import ConfigError
from kfp_bench.needs import parameter_rules
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.steps.checks import ignored
from kfp_bench.steps.params import BenchParams
from tests.cli_forks import ForkServer
from tests.paths import PIPELINES as REF

#: Nothing listens on port 1 of loopback: connections are refused at once.
DEAD = "http://127.0.0.1:1"
SUMMARY = json.dumps({"format": "kfp-bench/results", "format_version": 1})
_ISOLATED = ("KFP_", "KF_PIPELINES_", "KFP_BENCH_", "GOOGLE_APPLICATION_CREDENTIALS")
#: Cases run at once: enough to overlap their start-ups on two cores, few enough not to starve.
AT_ONCE = 4
_PROXIES = {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}


@dataclass(frozen=True)
class Case:
    """One bad input.

    Attributes:
        id: the test id.
        argv: the arguments; ``{kfp}`` is the local KFP server's URL, ``{ref}`` the reference
            pipelines' folder.
        expect: substrings of the one error line: the input at fault and the fix.
        files: files the case makes in its working directory first (a name ending in / is a
            folder).
        kfp: the case talks to the local KFP server (its counts are checked).
    """

    id: str
    argv: tuple[str, ...]
    expect: tuple[str, ...]
    files: dict = field(default_factory=dict)
    kfp: bool = False


RESULTS = {"r/": None, "r/summary.json": SUMMARY}
HELLO = "{ref}/hello_world.yaml"
RUN_ONE = ("runs", "--host", "{kfp}", "--num-runs", "1")
ADD = "{ref}/add_numbers.yaml"

CASES = [
    # -- load: flags, payload files, TLS files, output paths ----------------------------------
    Case(
        "load-payload-file-not-json",
        ("load", "-D", "in.json", "-T", "application/json", DEAD + "/"),
        ("-D in.json: not valid JSON", "fix the body or change -T"),
        files={"in.json": "instances: [[1, 2]]\n"},
    ),
    Case(
        "load-cacert-missing",
        ("load", "--cacert", "ca.pem", "https://127.0.0.1:1/"),
        ("--cacert ca.pem: cannot load CA certificates", "give a PEM file"),
    ),
    Case(
        "load-cacert-not-pem",
        ("load", "--cacert", "ca.pem", "https://127.0.0.1:1/"),
        ("--cacert ca.pem: cannot load CA certificates", "give a PEM file"),
        files={"ca.pem": "not a certificate\n"},
    ),
    Case(
        "load-host-header-malformed",
        ("load", "-host", "iris example.com", DEAD + "/"),
        ("-host 'iris example.com': not a host name", "give e.g. iris.default.example.com"),
    ),
    Case(
        "load-header-with-crlf",
        ("load", "-H", "X-A: 1\r\nX-B: 2", DEAD + "/"),
        ("-H 'X-A: 1\\r\\nX-B: 2': holds a control character", "remove it"),
    ),
    Case(
        "load-json-out-under-a-file",
        ("load", "-n", "1", "-c", "1", "--json-out", "f/r.json", DEAD + "/"),
        ("--json-out f/r.json: f is a file, not a folder", "give another path"),
        files={"f": "x"},
    ),
    Case(
        "load-v1-shape-zero",
        ("load", "--v1-shape", "0,4", DEAD + "/"),
        ("--v1-shape '0,4'", "write the shape as positive integers, e.g. 1,4"),
    ),
    Case(
        "load-two-bodies",
        ("load", "-d", "{}", "--v2-shape", "1,4", DEAD + "/"),
        ("give one body: -d, -D, --v1-shape or --v2-shape",),
    ),
    # -- llm and llm-server -------------------------------------------------------------------
    Case(
        "llm-url-with-v1",
        ("llm", "--model", "m", DEAD + "/openai/v1"),
        ("URL 'http://127.0.0.1:1/openai/v1': give the base URL without /v1", "--endpoint"),
    ),
    Case(
        "llm-no-model-and-no-server",
        ("llm", "-n", "1", "-c", "1", DEAD + "/openai"),
        (
            "--model not given and http://127.0.0.1:1/openai/v1/models could not be read",
            "give --model",
        ),
    ),  # fmt: skip
    Case(
        "llm-bad-slo",
        ("llm", "--model", "m", "--slo", "ttft=500", DEAD + "/openai"),
        ("--slo 'ttft=500'", "e.g. ttft=500ms"),
    ),
    Case(
        "llm-bad-length-distribution",
        ("llm", "--model", "m", "--input-tokens", "normal:128", DEAD + "/openai"),
        ("normal:128", "normal:MEAN,SD"),
    ),
    Case(
        "llm-prompts-file-bad-line",
        ("llm", "--model", "m", "--prompts-file", "p.jsonl", DEAD + "/openai"),
        ("prompts file p.jsonl line 2", "p.jsonl"),
        files={"p.jsonl": '{"prompt": "hi"}\nnot json\n'},
    ),
    Case(
        "llm-sweep-without-z",
        ("llm", "--model", "m", "--sweep-rates", "1,2", DEAD + "/openai"),
        ("a sweep needs -z", "-z 30s"),
    ),
    Case(
        "llm-json-out-under-a-file",
        ("llm", "--model", "m", "-n", "1", "-c", "1", "--json-out", "f/r.json", DEAD + "/openai"),
        ("--json-out f/r.json: f is a file, not a folder", "give another path"),
        files={"f": "x"},
    ),
    Case(
        "llm-multi-turn-bad-spec",
        ("llm", "--model", "m", "--endpoint", "chat", "--multi-turn", "3,soon", DEAD + "/openai"),
        ("--multi-turn '3,soon'", "TURNS[,THINK_S]"),
    ),
    Case(
        "llm-multi-turn-on-completions",
        ("llm", "--model", "m", "--multi-turn", "3", DEAD + "/openai"),
        ("--multi-turn 3,0", "add --endpoint chat"),
    ),
    Case(
        "llm-multi-turn-beside-stages",
        (
            "llm",
            "--model",
            "m",
            "--endpoint",
            "chat",
            "--multi-turn",
            "3,1",
            "--stages",
            "2s@5",
            DEAD + "/openai",
        ),  # fmt: skip
        ("--multi-turn 3,1 beside --stages", "drop --stages"),
    ),
    Case(
        "llm-server-bad-fault",
        ("llm-server", "--fault", "melt:after=2"),
        ("melt", "stall"),
    ),
    Case(
        "llm-server-no-processes",
        ("llm-server", "--processes", "0"),
        ("--processes 0", "give 1 to 64"),
    ),
    # -- merge --------------------------------------------------------------------------------
    Case(
        "merge-missing-file",
        ("merge", "a.json", "-o", "m.json"),
        ("a.json: no such results file", "give a file written by kfp-bench load --json-out"),
    ),
    Case(
        "merge-not-a-load-result",
        ("merge", "a.json", "-o", "m.json"),
        ("a.json: not a kfp-bench load result", "give a file written by kfp-bench load --json-out"),
        files={"a.json": '{"requests": 1}'},
    ),
    Case(
        "merge-not-json",
        ("merge", "a.json", "-o", "m.json"),
        ("a.json: not JSON", "give a file written by --json-out"),
        files={"a.json": "requests: 1\n"},
    ),
    Case(
        "merge-out-is-a-folder",
        ("merge", "a.json", "-o", "d"),
        ("-o d: a folder", "give a file name"),
        files={"d/": None},
    ),
    # -- runs: output paths, manifests, manifest URLs, hosts, parameters, caps ----------------
    Case(
        "runs-out-is-a-file",
        (*RUN_ONE, "--pipeline", HELLO, "--out", "f"),
        ("--out f: a file, not a folder", "give a folder"),
        files={"f": "x"},
        kfp=True,
    ),
    Case(
        "runs-out-under-a-file",
        (*RUN_ONE, "--pipeline", HELLO, "--out", "f/o"),
        ("--out f/o: f is a file, not a folder", "give another path"),
        files={"f": "x"},
        kfp=True,
    ),
    Case(
        "runs-manifest-not-yaml",
        ("runs", "--host", "{kfp}", "--pipeline", "p.yaml", "--num-runs", "1", "--out", "o"),
        ("--pipeline p.yaml: not YAML at line 2", "give a pipeline compiled with kfp.compiler"),
        files={"p.yaml": "a: [1,\n"},
        kfp=True,
    ),
    Case(
        "runs-manifest-not-a-pipeline",
        ("runs", "--host", "{kfp}", "--pipeline", "p.yaml", "--num-runs", "1", "--out", "o"),
        ("--pipeline p.yaml: not a pipeline spec", "give a pipeline compiled with kfp.compiler"),
        files={"p.yaml": "just: a mapping\n"},
        kfp=True,
    ),
    Case(
        "runs-manifest-url-404",
        ("runs", "--host", "{kfp}", "--pipeline", "{kfp}/no/such.yaml", "--num-runs", "1"),
        ("--pipeline http://127.0.0.1:", "/no/such.yaml: HTTP 404", "check the URL"),
        kfp=True,
    ),
    Case(
        "runs-manifest-unknown-scheme",
        ("runs", "--host", "{kfp}", "--pipeline", "ftp://x/p.yaml", "--num-runs", "1"),
        ("--pipeline 'ftp://x/p.yaml': unknown scheme 'ftp'", "give a file, http(s):// or gs://"),
        kfp=True,
    ),
    Case(
        "runs-manifest-gs-without-object",
        ("runs", "--host", "{kfp}", "--pipeline", "gs://bucket", "--num-runs", "1"),
        ("--pipeline gs://bucket", "give gs://BUCKET/OBJECT"),
        kfp=True,
    ),
    Case(
        "runs-params-not-json",
        ("runs", "--host", "{kfp}", "--pipeline", ADD, "--num-runs", "1", "--params", "{a: 1"),
        ("--params: not valid JSON", "give an object, e.g. --params"),
        kfp=True,
    ),
    Case(
        "runs-params-undeclared",
        ("runs", "--host", "{kfp}", "--pipeline", ADD, "--num-runs", "1", "--params", '{"zz": 1}'),
        ("--params: zz not declared by pipeline 'add-numbers'", "remove or rename them"),
        kfp=True,
    ),
    Case(
        "runs-num-runs-0",
        ("runs", "--host", "{kfp}", "--pipeline", HELLO, "--num-runs", "0"),
        ("--num-runs 0", "give at least 1 run"),
        kfp=True,
    ),
    Case(
        "runs-num-runs-over-the-cap",
        ("runs", "--host", "{kfp}", "--pipeline", HELLO, "--num-runs", "5000"),
        ("--num-runs 5000 is above the cap of 1000", "raise the cap with --max-runs 5000"),
        kfp=True,
    ),
    Case(
        "runs-benchmark-id-hostile",
        (*RUN_ONE, "--pipeline", HELLO, "--benchmark-id", "x; touch PWNED"),
        ("--benchmark-id 'x; touch PWNED'", "dashes"),
        kfp=True,
    ),
    Case(
        "runs-host-unreachable",
        ("runs", "--host", DEAD, "--pipeline", HELLO, "--num-runs", "1", "--out", "o"),
        ("--host http://127.0.0.1:1: cannot reach the KFP API", "check the address"),
    ),
    Case(
        "runs-host-malformed",
        ("runs", "--host", "localhost:8888", "--pipeline", HELLO, "--num-runs", "1", "--out", "o"),
        ("--host 'localhost:8888'", "give a URL such as http://127.0.0.1:8888"),
    ),
    # -- cleanup ------------------------------------------------------------------------------
    Case(
        "cleanup-no-selector",
        ("cleanup", "--host", "{kfp}"),
        ("cleanup: give --benchmark-id ID", "or --older-than AGE"),
        kfp=True,
    ),
    Case(
        "cleanup-older-than-not-a-duration",
        ("cleanup", "--host", "{kfp}", "--older-than", "soon"),
        ("--older-than: duration 'soon'", "write it like 30s, 2m or 1m30s"),
        kfp=True,
    ),
    # -- report and compare: results folders, URIs --------------------------------------------
    Case(
        "report-no-such-folder",
        ("report", "r"),
        ("r: no such results directory", "give a directory written by a kfp-bench benchmark"),
    ),
    Case(
        "report-empty-folder",
        ("report", "r"),
        ("r: empty", "give a directory written by a kfp-bench benchmark"),
        files={"r/": None},
    ),
    Case(
        "report-not-a-results-folder",
        ("report", "r"),
        ("r: has no summary.json", "give a directory written by a kfp-bench benchmark"),
        files={"r/": None, "r/notes.txt": "hello"},
    ),
    Case(
        "report-corrupt-summary",
        ("report", "r"),
        ("r/summary.json: not readable JSON", "run the benchmark again"),
        files={"r/": None, "r/summary.json": '{"format": "kfp-bench/res'},
    ),
    Case(
        "report-summary-of-another-tool",
        ("report", "r"),
        ("r/summary.json: not a kfp-bench results summary", "give a directory written by"),
        files={"r/": None, "r/summary.json": '{"format": "vegeta"}'},
    ),
    Case(
        "report-results-uri-unknown-scheme",
        ("report", "r", "--results-uri", "ftp://bucket/prefix"),
        ("--results-uri ftp://bucket/prefix: scheme ftp:// is not supported", "s3:// or minio://"),
        files=RESULTS,
    ),
    Case(
        "report-results-uri-s3-bad-query",
        ("report", "r", "--results-uri", "s3://bucket/prefix?endpont=http://x"),
        ("--results-uri s3://bucket/prefix?endpont=http://x: the query takes endpoint=URL",),
        files=RESULTS,
    ),
    Case(
        "report-results-uri-gs-without-bucket",
        ("report", "r", "--results-uri", "gs:///prefix"),
        ("--results-uri gs:///prefix: no bucket", "give gs://BUCKET/PREFIX"),
        files=RESULTS,
    ),
    Case(
        "report-baseline-without-history",
        ("report", "r", "--baseline", "last:3"),
        ("--baseline last:3", "give --results-uri too"),
        files=RESULTS,
    ),
    Case(
        "report-out-folder-kept-off-when-refused",
        ("report", "nothere", "--out", "new/dir"),
        ("nothere: no such results directory", "give a directory written by"),
    ),
    Case(
        "report-out-is-a-file",
        ("report", "r", "--out", "f"),
        ("--out f: a file, not a folder", "give a folder"),
        files={**RESULTS, "f": "x"},
    ),
    Case(
        "compare-one-of-the-two-missing",
        ("compare", "r", "nope"),
        ("nope: no such results directory", "give a directory written by a kfp-bench benchmark"),
        files=RESULTS,
    ),
    # -- submit and schedule ------------------------------------------------------------------
    Case(
        "submit-host-malformed",
        ("submit", "--host", "ml-pipeline:8888"),
        ("--host 'ml-pipeline:8888'", "give a URL such as http://127.0.0.1:8888"),
    ),
    Case(
        "submit-host-unreachable",
        ("submit", "--host", DEAD),
        ("--host http://127.0.0.1:1", "cannot reach"),
    ),
    Case(
        "submit-unknown-parameter",
        ("submit", "--host", "{kfp}", "--param", "nope=1"),
        ("--param nope: the kfp_bench pipeline has no such parameter", "it takes kfp_host"),
        kfp=True,
    ),
    Case(
        "submit-parameter-not-a-number",
        ("submit", "--host", "{kfp}", "--param", "num_runs=many"),
        ("--param num_runs='many'", "give e.g."),
        kfp=True,
    ),
    Case(
        "submit-package-missing",
        ("submit", "--host", "{kfp}", "--package", "nope.yaml"),
        ("--package nope.yaml: no such file", "run kfp-bench compile"),
        kfp=True,
    ),
    Case(
        "schedule-cron-of-5-fields",
        ("schedule", "--host", "{kfp}", "--cron", "0 3 * * *"),
        (
            "--cron: cron '0 3 * * *': 5 fields: KFP (robfig/cron v1) reads them as 'second minute",
            "give 6 fields, seconds first: '0 0 3 * * *'",
        ),
        kfp=True,
    ),
    Case(
        "schedule-cron-field-out-of-range",
        ("schedule", "--host", "{kfp}", "--cron", "0 0 25 * * *"),
        (
            "--cron: cron '0 0 25 * * *': hour field '25': End of range (25) above maximum (23)",
            "e.g. '0 0 3 * * *'",
        ),
        kfp=True,
    ),
    Case(
        "schedule-cron-never-fires",
        ("schedule", "--host", "{kfp}", "--cron", "0 0 0 30 2 *"),
        ("--cron: cron '0 0 0 30 2 *': never fires", "give a date that exists"),
        kfp=True,
    ),
    Case(
        "schedule-host-unreachable",
        ("schedule", "--host", DEAD, "--cron", "0 0 3 * * *"),
        ("--host http://127.0.0.1:1", "cannot reach"),
    ),
    # -- sweep, compile, demo, kfp-server, the command itself ---------------------------------
    Case(
        "sweep-rates-not-numbers",
        ("sweep", "--rates", "5,fast", DEAD + "/"),
        ("--rates '5,fast': not a list of numbers", "e.g. 5,50,500"),
    ),
    Case(
        "sweep-rates-decreasing",
        ("sweep", "--rates", "50,5", DEAD + "/"),
        ("--rates 50,5", "give the rates in increasing order"),
    ),
    Case(
        "sweep-json-out-under-a-file",
        ("sweep", "--rates", "5", "--json-out", "f/s.json", DEAD + "/"),
        ("--json-out f/s.json: f is a file, not a folder", "give another path"),
        files={"f": "x"},
    ),
    Case(
        "sweep-json-out-folder-kept-off-when-refused",
        ("sweep", "--rates", "5", "--knee-factor", "0.5", "--json-out", "new/s.json", DEAD + "/"),
        ("--knee-factor 0.5: give a p99 multiple above 1", "e.g. 3"),
    ),
    Case(
        "sweep-json-out-is-a-folder",
        ("sweep", "--rates", "5", "--json-out", "d", DEAD + "/"),
        ("--json-out d: a folder", "give a file name"),
        files={"d/": None},
    ),
    Case(
        "compile-out-is-a-file",
        ("compile", "--out", "f"),
        ("--out f: a file, not a folder", "give a folder"),
        files={"f": "x"},
    ),
    Case(
        "compile-out-under-a-file",
        ("compile", "--out", "f/yaml"),
        ("--out f/yaml: f is a file, not a folder", "give another path"),
        files={"f": "x"},
    ),
    Case(
        "compile-image-by-tag",
        ("compile", "--image", "ghcr.io/you/kfp-bench:0.1.0"),
        ("--image 'ghcr.io/you/kfp-bench:0.1.0': give the image by its digest", "@sha256:"),
    ),
    Case(
        "compile-wheel-url-unpinned",
        ("compile", "--wheel-url", "https://example.com/kfp_bench-0.1.0-py3-none-any.whl"),
        ("needs --sha256", "sha256sum FILE"),
    ),
    Case(
        "install-namespace-not-a-label",
        ("install", "--namespace", "Team_A", "--dry-run"),
        ("--namespace 'Team_A': not a DNS-1123 label", "e.g. team-a"),
    ),
    Case(
        "install-kubeconfig-missing",
        ("install", "--namespace", "team", "--kubeconfig", "nope.yaml"),
        ("--kubeconfig nope.yaml: no such file", "give your kubeconfig"),
    ),
    Case(
        "demo-num-runs-0",
        ("demo", "--num-runs", "0"),
        ("--num-runs: '0'", "give a whole number of 1 or more"),
    ),
    Case(
        "demo-duration-0",
        ("demo", "--duration", "0s"),
        ("--duration 0s", "give more than 0s"),
    ),
    Case(
        "kfp-server-port-out-of-range",
        ("kfp-server", "--port", "70000"),
        ("--port: '70000'", "0 to 65535"),
    ),
    Case(
        "unknown-subcommand",
        ("benchmark",),
        ("invalid choice: 'benchmark'", "see kfp-bench --help"),
    ),
]


def _env() -> dict:
    """The cases' environment (``cli_forks.ForkServer`` adds TMPDIR and PYTHONPATH)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(_ISOLATED) and k not in _PROXIES and "TOKEN" not in k.upper()
    }
    env.update(NO_PROXY="127.0.0.1,localhost")
    return env


def _tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


@dataclass
class Outcome:
    """A case's process, what its working directories held before it ran, and what the start-up
    its process shared left (``cli_forks.ForkServer.close``)."""

    result: subprocess.CompletedProcess | None
    cwd: Path
    tmpdir: Path
    made: set[str]
    start_left: set[str] = field(default_factory=set)


def run_case(case: Case, base: Path, subs: dict[str, str], server: ForkServer) -> Outcome:
    """``case`` run in a fresh folder under ``base``, each placeholder of ``subs`` (``{kfp}``,
    ``{ref}``, ...) in its arguments replaced."""
    cwd, tmpdir = base / "cwd", base / "tmp"
    cwd.mkdir()
    tmpdir.mkdir()
    for name, text in case.files.items():
        if name.endswith("/"):
            (cwd / name).mkdir()
        else:
            (cwd / name).write_text(text)
    made = _tree(cwd)
    argv = list(case.argv)
    for key, value in subs.items():
        argv = [a.replace(key, value) for a in argv]
    return Outcome(server.run(argv, cwd, tmpdir, timeout=120), cwd, tmpdir, made)


def server_state(url: str) -> dict:
    """What the server holds: its experiments, pipelines, runs and recurring runs (plain HTTP,
    so that the check shares no code with what it checks)."""
    state = {}
    for kind, key in KINDS.items():
        with urllib.request.urlopen(f"{url}/apis/v2beta1/{kind}?page_size=200", timeout=10) as r:
            doc = json.load(r)
        state[kind] = sorted(json.dumps(x, sort_keys=True) for x in doc.get(key) or [])
    return state


KINDS = {
    "experiments": "experiments",
    "pipelines": "pipelines",
    "runs": "runs",
    "recurringruns": "recurringRuns",
}


@pytest.fixture(scope="module")
def kfp_server():
    """The local KFP server, and what it holds before any case: its Default experiment only."""
    with start_kfp_server(simulate="all:fixed(0.2)") as server:
        server.initial = server_state(server.url)
        assert [len(v) for v in server.initial.values()] == [1, 0, 0, 0]
        yield server


def run_cases(cases, kfp_server, tmp_path_factory, subs=lambda case: {}) -> dict[str, Outcome]:
    """Every case, run a few at a time, each by one of ``AT_ONCE`` fork servers; then what the
    KFP server (if any) holds after all of them, which must be what it held before. ``subs``:
    a case's own placeholders, beside ``{kfp}`` and ``{ref}``."""
    bases = {c.id: tmp_path_factory.mktemp(c.id) for c in cases}
    queue = list(reversed(cases))
    lock = threading.Lock()
    done: dict[str, Outcome] = {}
    left: set[str] = set()

    def serve_queue():
        server = ForkServer(tmp_path_factory.mktemp("fork-server"), _env())
        try:
            while True:
                with lock:
                    if not queue:
                        break
                    c = queue.pop()
                url = kfp_server.url if c.kfp else ""
                filled = {"{kfp}": url, "{ref}": str(REF), **subs(c)}
                done[c.id] = run_case(c, bases[c.id], filled, server)
        finally:
            left.update(server.close())

    with ThreadPoolExecutor(max_workers=AT_ONCE) as pool:
        for f in [pool.submit(serve_queue) for _ in range(AT_ONCE)]:
            f.result()
    for outcome in done.values():
        outcome.start_left = left
    if kfp_server is not None:
        kfp_server.after = server_state(kfp_server.url)
    return done


@pytest.fixture(scope="module")
def outcomes(kfp_server, tmp_path_factory) -> dict[str, Outcome]:
    return run_cases(CASES, kfp_server, tmp_path_factory)


def test_every_subcommand_has_a_case_and_every_case_its_own_id():
    """A new subcommand comes with its bad inputs; an id used twice would make two cases share
    one outcome (``outcomes`` is keyed by id)."""
    (sub,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = set(sub.choices) - {c.argv[0] for c in CASES}
    assert not missing, f"no bad-input case for kfp-bench {sorted(missing)}"
    assert len({c.id for c in CASES}) == len(CASES)


def assert_one_line_refusal(r, expect, code: int = 2) -> None:
    """No traceback, exit ``code``, and one line of stderr, kfp-bench's, holding each of
    ``expect``."""
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-2000:]
    assert r.returncode == code, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("kfp-bench: ")
    for words in expect:
        assert words in lines[0], lines[0]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_input(case: Case, outcomes, kfp_server):
    o = outcomes[case.id]
    r = o.result
    assert r is not None, "no answer in 120 s"
    assert_one_line_refusal(r, case.expect)
    assert r.stdout == ""
    assert _tree(o.cwd) == o.made, "left behind in the working directory"
    assert _tree(o.tmpdir) == set(), "left behind in TMPDIR"
    assert o.start_left == set(), "left behind by kfp-bench's start-up"
    if case.kfp:
        assert kfp_server.after == kfp_server.initial, "left behind at the KFP server"


# -- pipeline parameters ----------------------------------------------------------------------
#: A parameter set that passes, but for the one bad value each case sets; fetch=False keeps the
#: check on the parameters themselves (the manifest fetch is the runs cases' business above).
GOOD = dict(kfp_host="http://127.0.0.1:9", inference_url="http://127.0.0.1:9/v1/models/m:predict")

BAD_PARAMS = [
    ({"num_runs": 0}, ("pipeline parameter num_runs=0", "give a whole number from 1 to 1000")),
    ({"num_runs": 5000}, ("num_runs=5000", "from 1 to 1000")),
    ({"duration_sec": 0.0}, ("pipeline parameter duration_sec=0.0", "give a number of seconds")),
    ({"duration_sec": 7200.0}, ("duration_sec=7200.0", "at most 3600")),
    ({"inference_url": "iris:8080/v1"}, ("inference_url='iris:8080/v1'", "give a http/https URL")),
    ({"kfp_host": "ml-pipeline:8888"}, ("kfp_host='ml-pipeline:8888'", "give a http/https URL")),
    ({"pipeline": "ftp://x/p.yaml"}, ("pipeline='ftp://x/p.yaml'", "give one of noop, fanout")),
    ({"sweep_rates": "5,fast"}, ("sweep_rates '5,fast': not a list of numbers", "e.g. 5,50,500")),
    ({"sweep_rates": "50,5"}, ("sweep_rates 50,5", "increasing order")),
    ({"concurrency": -1}, ("pipeline parameter concurrency=-1", "give a whole number from 1")),
    ({"concurrency": 2, "load_workers": 4}, ("concurrency=2", "one connection per load worker")),
    ({"rate": -5.0}, ("pipeline parameter rate=-5.0", "give requests/s >= 0")),
    ({"rate": 12000.0}, ("rate=12000.0", "safety cap of 5000", "load_workers to at least 3")),
    ({"sweep_rates": "5,9000"}, ("sweep_rates='5,9000'", "at most 5000 req/s")),
    ({"payload": "{not json"}, ("pipeline parameter payload='{not json'", "give e.g.")),
    ({"host_header": "a b"}, ("host_header='a b'", "give a host name")),
    ({"run_node_selector": {"pool": 1}}, ("run_node_selector=", "label strings")),
    ({"benchmark_id": "Nightly_1"}, ("benchmark_id='Nightly_1'", "e.g. nightly-1")),
    ({"namespace": "Team A"}, ("namespace='Team A'", "e.g. team-a")),
    # its value is never shown: a token given there by mistake (tests/test_bad_inputs_secrets.py)
    ({"token_secret": "My_Secret"}, ("token_secret='<redacted>'", "Kubernetes Secret name")),
    ({"isvc": {"name": "1-iris"}}, ("isvc name='1-iris'", "starts with a letter")),
    ({"isvc": {"name": "i" * 52}}, ("isvc name='iii", "at most 51")),
    (
        {"run_benchmark": False, "run_load": False},
        ("run_benchmark, run_load and run_llm are all false", "set one of them"),
    ),
    ({"results_uri": "ftp://h/p"}, ("results_uri='ftp://h/p'", "ftp:// is not supported")),
    ({"results_uri": "gs:///p"}, ("results_uri='gs:///p'", "no bucket; give gs://BUCKET")),
    ({"results_uri": "minio:///p"}, ("results_uri='minio:///p'", "give minio://BUCKET/PREFIX")),
    ({"results_uri": "s3://b/p?x=1"}, ("results_uri='s3://b/p?x=1'", "endpoint=URL and region")),
    ({"results_uri": "file://host/p"}, ("results_uri='file://host/p'", "takes no host")),
    ({"baseline": "last:0"}, ("pipeline parameter baseline='last:0'", "give last:N")),
    ({"baseline": "latest"}, ("baseline='latest'", "a history key such as")),
]


@pytest.mark.parametrize(
    "bad, expect",
    BAD_PARAMS,
    ids=[",".join(f"{k}={v!r:.20}" for k, v in b.items()) for b, _ in BAD_PARAMS],
)
def test_bad_pipeline_parameter_is_refused_naming_it_and_the_fix(bad, expect):
    """What the first step (kfp_bench/components/check_params.py) runs: ``BenchParams.check``."""
    with pytest.raises(ConfigError) as err:
        BenchParams(**{**GOOD, **bad}).check(fetch=False)
    message = str(err.value)
    assert "\n" not in message and "s3cret" not in message
    for words in expect:
        assert words in message, message


#: Parameters set for a part switched off, as a nightly schedule switches a part off for a night:
#: each check passes, and the first step's note names them and what reads them
#: (``steps.checks.ignored``; refused before: kfp_bench/needs.py says why no longer).
NOTED = [
    ({"fill_steps": 3}, ("fill_steps (read only beside fill_runs)",)),
    (
        {"run_llm": False, "llm_url": "http://vllm:8000", "llm_slo": "ttft=1s"},
        ("llm_url, llm_slo (read only beside run_llm)",),
    ),
    (
        {"run_load": False, "inference_url": "http://iris/v1/models/m:predict", "rate": 5.0},
        ("rate (read only beside run_load)", "inference_url (read only beside run_load or sweep"),
    ),
    (
        {"run_benchmark": False, "num_runs": 50, "fill_runs": 100, "fill_steps": 4},
        ("num_runs, fill_runs (read only beside run_benchmark)", "fill_steps (read only beside"),
    ),
    ({"sweep_step_sec": 10.0}, ("sweep_step_sec (read only beside sweep_rates)",)),
    ({"baseline": "last:3"}, ("baseline (read only beside results_uri)",)),
    (
        {"metrics_scrape": "http://10.0.3.17:8080/metrics", "metrics_vars": "namespace=x"},
        ("metrics_vars (read only beside metrics_profile)",),
    ),
    (
        {
            "metrics_profile": "gpu",
            "prometheus_url": "http://p:9090",
            "namespace": "team",
            "metrics_scrape_token": True,
        },
        ("metrics_scrape_token (read only beside metrics_scrape)",),
    ),  # fmt: skip
    (
        {"prometheus_url": "http://alice:s3cret@prom:9090"},
        ("prometheus_url (read only beside metrics_profile)",),
    ),
    (
        {"run_load": False, "run_llm": False, "metrics_profile": "gpu", "prometheus_url": "x"},
        ("metrics_profile (read only beside run_load or run_llm)", "prometheus_url (read only"),
    ),
]


@pytest.mark.parametrize(
    "given, named", NOTED, ids=[",".join(sorted(g)) for g, _ in NOTED]
)  # fmt: skip
def test_parameters_of_a_part_switched_off_are_noted_not_refused(given, named):
    p = BenchParams(**{**GOOD, **given}).check(fetch=False)
    note = ignored(p)
    assert note.startswith("note: pipeline parameters of a part switched off, ignored in this")
    assert "\n" not in note and "s3cret" not in note and "switch the part on" in note
    for words in named:
        assert words in note, note


def test_nothing_is_noted_of_the_defaults_or_of_parts_switched_on():
    assert ignored(BenchParams(**GOOD)) == ""
    on = {"run_llm": True, "llm_url": "http://vllm:8000", "fill_runs": 10, "fill_steps": 2}
    assert ignored(BenchParams(**GOOD, **on, sweep_rates="5,10", sweep_step_sec=10.0)) == ""


def test_what_needs_what_names_pipeline_parameters():
    """The CLI's rules marked for the pipeline (kfp_bench.needs) name parameters it has."""
    rules = parameter_rules(BenchParams.PARTS)
    named = set(rules) | {n for needs in rules.values() for n in needs}
    assert rules and named <= set(BenchParams.names())


def test_good_parameters_pass():
    assert BenchParams(**GOOD).check(fetch=False)


def test_results_uri_must_be_a_folder_it_can_create(tmp_path):
    """A local results_uri is a folder: created when missing, refused when a file is there."""
    assert BenchParams(**GOOD, results_uri=str(tmp_path / "new" / "history")).check(fetch=False)
    (tmp_path / "f").write_text("")
    with pytest.raises(ConfigError, match=r"results_uri='.*/f': .*/f is a file; give gs://"):
        BenchParams(**GOOD, results_uri=str(tmp_path / "f")).check(fetch=False)


#: Bad parameters as the first step meets them, and its one line.
STEP_REFUSES = [
    ({"sweep_rates": "50,5"}, "sweep_rates 50,5: give the rates in increasing order"),
    ({"lease_wait_sec": -1.0}, "lease_wait_sec=-1.0: give seconds from 0 (refuse) to 86400"),
]


@pytest.mark.parametrize("bad, said", STEP_REFUSES)
def test_first_step_exits_2_with_one_line(bad, said, capsys):
    """The first step's function as its pod calls it (kfp.local below runs the same): bad input
    is exit code 2 and one line, as from the CLI, not a traceback."""
    from kfp_bench.components import check_params

    args = {n: getattr(BenchParams(**GOOD), n) for n in BenchParams.names()}
    with pytest.raises(SystemExit) as done:
        check_params.func(**{**args, **bad, "job_id": "job-1"})
    assert done.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kfp-bench: pipeline parameter"), lines
    assert said in lines[0]


def test_first_step_notes_a_part_switched_off_in_one_line_and_goes_on(capsys):
    """The first step's function as its pod calls it: the parameters of a part switched off for
    this run (the LLM load, the fill) are named in one line of its log, and it succeeds."""
    from kfp_bench.components import check_params
    from kfp_bench.steps import exit_handler

    with start_kfp_server() as server:
        given = {"kfp_host": server.url, "run_load": False, "llm_url": "http://vllm:8000"}
        p = BenchParams(**{**GOOD, **given}, fill_steps=3)
        args = {n: getattr(p, n) for n in BenchParams.names()}
        try:
            checked = check_params.func(**args, job_id="job-1")
        finally:
            exit_handler.cleanup(p, "job-1", "SUCCEEDED", "")
    assert checked["llm_url"] == "http://vllm:8000" and checked["fill_steps"] == 3
    out = capsys.readouterr()
    notes = [line for line in out.out.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and out.err == "", out
    for words in ("llm_url (read only beside run_llm)", "fill_steps (read only beside fill_runs)"):
        assert words in notes[0], notes[0]


@pytest.mark.slow
@pytest.mark.parametrize("bad, said", STEP_REFUSES)
def test_first_step_of_the_pipeline_fails_with_the_message(bad, said, tmp_path, capfd, monkeypatch):
    """The check_params component itself, under kfp.local (a real subprocess, as a pod would
    run it): the step fails, and its log holds the one line, no traceback."""
    from kfp import local
    from kfp.local import config

    from kfp_bench.components import check_params
    from tests.venv_image import DELIVERY

    # kfp.local's configuration is global: give the other tests theirs back afterwards.
    monkeypatch.setattr(
        config.LocalExecutionConfig, "instance", config.LocalExecutionConfig.instance
    )
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(tmp_path))
    args = {n: getattr(BenchParams(**GOOD), n) for n in BenchParams.names()}
    args.update(bad, job_id="job-1")
    with DELIVERY.active(), pytest.raises(RuntimeError, match="check-params"):
        check_params(**args)
    out = capfd.readouterr().out
    assert "kfp-bench: pipeline parameter" in out and said in out
    assert "Traceback" not in out

"""``kfp-bench runs`` and ``kfp-bench cleanup`` in real processes against the local KFP server:
the files and keys the issue asks for, bad input (a clear message, exit 2, nothing created), and a
token that never leaves the process."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

from kfp_bench.results import read_results
from tests.conftest import run_cli
from tests.kfp.conftest import ADD, HELLO, counts, leftovers

SUMMARY_KEYS = {"p50", "p90", "p99", "max", "mean"}
API_KEYS = {"count", "errors", "p50_ms", "p90_ms", "p99_ms", "max_ms"}
OPS = (
    "upload_pipeline",
    "create_experiment",
    "create_run",
    "list_runs",
    "get_run",
    "delete_run",
    "delete_pipeline",
)


def test_runs_writes_the_three_files(kfp_server, tmp_path):
    out = tmp_path / "out"
    r = run_cli(
        "runs",
        "--host",
        kfp_server.url,
        "--pipeline",
        str(ADD),
        "--num-runs",
        "8",
        "--create-concurrency",
        "4",
        "--poll-interval",
        "0.2",
        "--params",
        '{"a": 1, "b": 2}',
        "--max-runs",
        "1500",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert "Run times from server timestamps" in r.stdout and "create_run" in r.stdout
    # Raising a safety cap is recorded, in the summary and in the report.
    assert "the safety cap on runs was raised to 1500 (--max-runs)" in r.stdout
    doc = json.loads((out / "summary.json").read_text())
    assert "runs-cap-raised" in doc["flags"]
    assert read_results(out).runs  # a results directory: kfp-bench report reads it
    runs = doc["runs"]
    assert runs["requested"] == 8 and runs["created"] == 8 and runs["by_state"] == {"SUCCEEDED": 8}
    for key in ("duration_s", "queue_delay_s", "execution_s"):
        assert SUMMARY_KEYS <= set(runs[key])
    for op in OPS:
        assert API_KEYS <= set(doc["api"][op]), op
    assert doc["api_calls_total"] > 0 and doc["poll_rounds"] >= 1
    lines = (out / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 8 and all(json.loads(x)["state"] == "SUCCEEDED" for x in lines)
    assert len((out / "api_calls.jsonl").read_text().splitlines()) == doc["api_calls_total"]


def _bad(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize(
    "case, words",
    [
        ("not-yaml", "not YAML"),
        ("not-spec", "not a pipeline spec"),
        ("zero", "--num-runs 0"),
        ("over-cap", "above the cap of 1000"),
        ("bad-json", "--params: not valid JSON"),
        ("undeclared", "c not declared"),
        ("unreachable-url", "cannot reach it"),
    ],
)
def test_bad_input_creates_nothing(kfp_server, tmp_path, case, words):
    pipeline, extra = str(ADD), ["--params", '{"a": 1, "b": 2}']
    num = "2"
    if case == "not-yaml":
        pipeline = _bad(tmp_path, "p.yaml", "a: [1,\n")
    elif case == "not-spec":
        pipeline = _bad(tmp_path, "p.yaml", "just: a mapping\n")
    elif case == "zero":
        num = "0"
    elif case == "over-cap":
        num = "1001"
    elif case == "bad-json":
        extra = ["--params", "{a: 1"]
    elif case == "undeclared":
        extra = ["--params", '{"a": 1, "b": 2, "c": 3}']
    elif case == "unreachable-url":
        pipeline = "http://127.0.0.1:1/p.yaml"
    before = counts(kfp_server.url)
    r = run_cli(
        "runs",
        "--host",
        kfp_server.url,
        "--pipeline",
        pipeline,
        "--num-runs",
        num,
        *extra,
        "--out",
        str(tmp_path / "out"),
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert counts(kfp_server.url) == before


def test_unreachable_host(tmp_path):
    r = run_cli(
        "runs",
        "--host",
        "http://127.0.0.1:1",
        "--pipeline",
        str(HELLO),
        "--num-runs",
        "1",
        "--out",
        str(tmp_path),
    )
    assert r.returncode == 2 and "http://127.0.0.1:1: cannot reach the KFP API" in r.stderr


class _Refuses(http.server.BaseHTTPRequestHandler):
    """A server that refuses every call, as an ingress in front of multi-user KFP does without a
    valid token: a loopback stand-in, because the local KFP server does not check tokens."""

    code = 401

    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b'{"error": "denied", "message": "denied"}'
        self.send_response(self.code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET


@pytest.mark.parametrize("code", [401, 403])
def test_401_403_name_the_host_and_hint_at_auth(tmp_path, code):
    handler = type("H", (_Refuses,), {"code": code})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        r = run_cli(
            "runs",
            "--host",
            url,
            "--pipeline",
            str(HELLO),
            "--num-runs",
            "1",
            "--out",
            str(tmp_path),
        )
    finally:
        server.shutdown()
    assert r.returncode == 2
    assert f"--host {url}: HTTP {code}" in r.stderr and "--token-file" in r.stderr


TOKEN = "kfp-bench-test-token-5f2a9c"


def test_token_is_sent_but_never_shown(kfp_server, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    out = tmp_path / "out"
    r = run_cli(
        "runs",
        "--host",
        kfp_server.url,
        "--pipeline",
        str(HELLO),
        "--num-runs",
        "2",
        "--poll-interval",
        "0.2",
        "--token-file",
        str(token_file),
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert TOKEN not in r.stdout + r.stderr
    for f in out.iterdir():
        assert TOKEN not in f.read_text(), f
    assert str(token_file) in (out / "summary.json").read_text()  # where from, not what


def test_cleanup_by_id_and_by_age(kfp_server, tmp_path):
    r = run_cli(
        "runs",
        "--host",
        kfp_server.url,
        "--pipeline",
        str(HELLO),
        "--num-runs",
        "2",
        "--poll-interval",
        "0.2",
        "--keep",
        "--benchmark-id",
        "cli-keep-1",
        "--out",
        str(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    assert "kfp-bench cleanup --benchmark-id cli-keep-1" in r.stdout
    assert leftovers(kfp_server.url, "cli-keep-1")["runs"] == 2
    r = run_cli("cleanup", "--host", kfp_server.url, "--older-than", "1h", "--dry-run")
    assert r.returncode == 0 and "kfp-bench-cli-keep-1" not in r.stdout  # too young
    r = run_cli("cleanup", "--host", kfp_server.url, "--benchmark-id", "cli-keep-1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (
        "Deleted: 0 recurring runs, 2 runs, 1 experiments, 1 pipeline versions, 1 pipelines"
        in r.stdout
    )
    assert leftovers(kfp_server.url, "cli-keep-1") == {"experiments": 0, "pipelines": 0, "runs": 0}


def test_cleanup_needs_a_selection():
    r = run_cli("cleanup", "--host", "http://127.0.0.1:1")
    assert r.returncode == 2 and "--benchmark-id ID" in r.stderr

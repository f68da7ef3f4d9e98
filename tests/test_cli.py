"""The kfp-bench command in real processes: hey's layout and flags, saved results, bad input,
and Ctrl-C."""

import json
import re
import time

import pytest

from tests.conftest import (
    LATENCY_KEYS,
    LOAD_RESULT_KEYS,
    SIGINT_AT_START,
    interrupt_when,
    run_cli,
    start_cli,
    start_python,
)

SECTIONS = [
    "Summary:",
    "  Total:\t",
    "  Slowest:\t",
    "  Fastest:\t",
    "  Average:\t",
    "  Requests/sec:\t",
    "  Total data:\t",
    "  Size/request:\t",
    "Response time histogram:",
    "Latency distribution:",
    "  10% in ",
    "  50% in ",
    "  99% in ",
    "Details (average, fastest, slowest):",
    "  DNS+dialup:\t",
    "  DNS-lookup:\t",
    "  req write:\t",
    "  resp wait:\t",
    "  resp read:\t",
    "Status code distribution:",
    "  [200]\t",
]


def test_prints_heys_layout_in_heys_order(fault_server):
    r = run_cli("load", "-n", "200", "-c", "10", fault_server.url + "/?bytes=64")
    assert r.returncode == 0, r.stderr
    positions = [r.stdout.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert "  [200]\t200 responses" in r.stdout
    assert "Size/request:\t64 bytes" in r.stdout
    assert r.stdout.count("|") == 11  # 11 histogram marks, as hey prints
    # kfp-bench's own lines come after hey's sections
    assert r.stdout.index("Load generator CPU") > positions[-1]
    cpu = r"Per request:\t[\d.]+ us \(user [\d.]+ s, system [\d.]+ s in 1 process\)"
    assert re.search(cpu, r.stdout)


def test_error_distribution_section(fault_server):
    """Every request reset: the errors are the measurement, and no latency figure is printed
    (flagged no-response, exit 1, as ``kfp_bench.outcome`` says)."""
    r = run_cli("load", "-n", "10", "-c", "2", fault_server.url + "/?reset=1")
    assert r.returncode == 1
    assert "Error distribution:\n  [10]\t" in r.stdout
    assert "no-response: no request of the load got a response" in r.stdout
    assert "Latency distribution" not in r.stdout and "Slowest" not in r.stdout


def test_the_kserve_guide_command_runs_unchanged_and_needs_a_json_type(model_server, tmp_path):
    """hey -z 30s -c 5 -m POST -host ${SERVICE_HOSTNAME} -D input.json URL, shortened to 2 s: the
    flags are taken as hey takes them. As written (hey's default Content-Type, text/html) a
    sklearn InferenceService answers every request 500, as KServe 0.15.2's sklearnserver does
    (tests/sandbox/test_model_server.py): a measurement of the server, so exit 0, as hey's; with
    -T application/json, 200."""
    payload = tmp_path / "input.json"
    payload.write_text('{"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}')
    guide = ["load", "-z", "2s", "-c", "5", "-m", "POST", "-host", "iris.default.example.com",
             "-D", str(payload)]  # fmt: skip
    r = run_cli(*guide, model_server.v1_predict_url)
    assert r.returncode == 0, r.stderr
    assert "  [500]\t" in r.stdout and "  [200]\t" not in r.stdout
    r = run_cli(*guide, "-T", "application/json", model_server.v1_predict_url)
    assert r.returncode == 0, r.stderr
    assert "  [200]\t" in r.stdout
    assert "Error distribution" not in r.stdout


def test_csv_output_has_heys_columns(fault_server):
    r = run_cli("load", "-n", "20", "-c", "2", "-o", "csv", fault_server.url)
    lines = r.stdout.strip().splitlines()
    assert lines[0] == (
        "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"
    )
    assert len(lines) == 21
    assert all(len(line.split(",")) == 8 and line.split(",")[6] == "200" for line in lines[1:])


def test_json_out_merge_and_report(fault_server, tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert (
        run_cli("load", "-n", "100", "-c", "5", "--json-out", str(a), fault_server.url).returncode
        == 0
    )
    assert (
        run_cli(
            "load", "-n", "50", "-c", "5", "--json-out", str(b), "--rate", "200", fault_server.url
        ).returncode
        == 0
    )
    doc = json.loads(a.read_text())
    assert set(LOAD_RESULT_KEYS) <= set(doc)
    assert set(doc["latency_ms"]) >= LATENCY_KEYS
    assert doc["corrected"] is False and json.loads(b.read_text())["corrected"] is True
    r = run_cli("merge", str(a), str(b), "-o", str(c))
    assert r.returncode == 0, r.stderr
    merged = json.loads(c.read_text())
    assert merged["requests"] == 150
    assert merged["workers"]["reported"] == 2
    r = run_cli("report", str(c))
    assert r.returncode == 0 and "  [200]\t150 responses" in r.stdout


def test_secrets_never_reach_the_output(fault_server, tmp_path):
    out = tmp_path / "r.json"
    r = run_cli(
        "load",
        "-n",
        "5",
        "-c",
        "1",
        "-a",
        "alice:s3cret-pw",
        "-H",
        "Authorization: Bearer tok-123",
        "--json-out",
        str(out),
        fault_server.url,
    )
    assert r.returncode == 0
    for text in (r.stdout, r.stderr, out.read_text()):
        assert "s3cret-pw" not in text and "tok-123" not in text


BAD = [
    (["load", "http://[::1/"], "URL"),
    (["load", "http://"], "no host"),
    (["load", "ftp://example.com/"], "scheme 'ftp'"),
    (["load", "example.com/path"], "no scheme"),
    (["load", "-H", "no-colon-here", "http://127.0.0.1:9/"], "-H 'no-colon-here'"),
    (
        ["load", "-D", "/nonexistent/input.json", "http://127.0.0.1:9/"],
        "-D /nonexistent/input.json",
    ),
    (["load", "-n", "10", "-c", "50", "http://127.0.0.1:9/"], "-n 10 is less than -c 50"),
    (["load", "-n", "0", "http://127.0.0.1:9/"], "-n 0"),
    (["load", "-n", "-5", "http://127.0.0.1:9/"], "-n -5"),
    (["load", "-c", "0", "http://127.0.0.1:9/"], "-c 0"),
    (["load", "-z", "10x", "http://127.0.0.1:9/"], "duration '10x'"),
    (["load", "--rate", "fast", "http://127.0.0.1:9/"], "--rate"),
    (["load", "--rate", "-5", "http://127.0.0.1:9/"], "--rate -5"),
    (["load", "--rate", "100", "-q", "10", "http://127.0.0.1:9/"], "--rate and -q"),
    (
        ["load", "-d", "{not json", "-T", "application/json", "http://127.0.0.1:9/"],
        "not valid JSON",
    ),
    (["load", "-m", "FETCH", "http://127.0.0.1:9/"], "-m 'FETCH'"),
    (["load", "--v2-shape", "1,x", "http://127.0.0.1:9/"], "--v2-shape"),
    (["load", "--rate", "100000", "http://127.0.0.1:9/"], "safety cap"),
    (["load", "--no-such-flag", "http://127.0.0.1:9/"], "--no-such-flag"),
    (["report", "/nonexistent.json"], "no such results file"),
]


@pytest.mark.parametrize("args, names", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_clear_line_and_exit_2(args, names, tmp_path):
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert names in lines[0]
    assert r.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_payload_file_not_json_when_json_asked(tmp_path):
    bad = tmp_path / "input.json"
    bad.write_text("instances: [1, 2]")
    r = run_cli("load", "-D", str(bad), "-T", "application/json", "http://127.0.0.1:9/")
    assert r.returncode == 2 and "not valid JSON" in r.stderr and str(bad) in r.stderr


def _wait_for_traffic(server, requests: int = 200, within: float = 30.0) -> None:
    """Wait until a load that just started has sent ``requests`` more requests to ``server``: a
    busy machine may take seconds to start worker processes."""
    start = server.stats()["requests"]
    deadline = time.monotonic() + within
    while server.stats()["requests"] < start + requests:
        assert time.monotonic() < deadline, "the load never reached the server"
        time.sleep(0.1)


def _traffic(server, requests: int = 200):
    """A ``ready`` for ``interrupt_when``: ``requests`` more reached ``server`` since this call."""
    start = server.stats()["requests"]
    return lambda: server.stats()["requests"] >= start + requests


def _interrupt_with_its_workers(proc, ready, what: str) -> tuple[str, str, list]:
    """``interrupt_when``, returning too the processes ``proc`` had started when it got SIGINT."""
    import psutil

    kids = []

    def ready_then_note():
        if not ready():
            return False
        kids.extend(psutil.Process(proc.pid).children(recursive=True))
        return True

    stdout, stderr = interrupt_when(proc, ready_then_note, what, wait_s=30, timeout=30)
    _, alive = psutil.wait_procs(kids, timeout=5)
    return stdout, stderr, alive


@pytest.mark.parametrize(
    ("sigint", "seen"), [("default", "default_int_handler"), ("ignored", "SIG_IGN")]
)
def test_the_interrupt_tests_start_with_the_sigint_they_name(sigint, seen):
    """The two starts of the Ctrl-C tests: Python's own handler, or SIGINT ignored at start."""
    show = (
        "import signal as s; h = s.getsignal(s.SIGINT); print(getattr(h, 'name', 0) or h.__name__)"
    )
    out, err = start_python("-c", show, sigint=sigint).communicate(timeout=30)
    assert out.strip() == seen, (out, err)


@pytest.mark.parametrize("sigint", SIGINT_AT_START)
@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_stops_cleanly_and_prints_what_was_measured(
    fault_server, tmp_path, monkeypatch, workers, sigint
):
    """SIGINT mid-load, whether the command started with SIGINT's default or with it ignored (a
    background command of a script): exit 130, hey's summary, no worker or flush log left."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where the workers' flush logs go
    proc = start_cli(
        "load", "-z", "60s", "-c", "4", "--workers", workers, fault_server.url, sigint=sigint
    )
    out, err, alive = _interrupt_with_its_workers(proc, _traffic(fault_server), "load")
    assert proc.returncode == 130, err
    assert "Summary:" in out and "  [200]\t" in out
    assert "interrupted" in out
    assert "Traceback" not in err
    assert alive == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sigint", SIGINT_AT_START)
def test_ctrl_c_mid_sweep_prints_the_steps_so_far(fault_server, tmp_path, sigint):
    """SIGINT in a sweep's first step, with SIGINT's default or ignored at start: exit 130, the
    table of the cut step, the next step never run, the result saved and saying so."""
    out = tmp_path / "sweep.json"
    proc = start_cli(
        "sweep", "--rates", "100,200", "-z", "60s", "--pause", "0", "--json-out", str(out),
        fault_server.url, sigint=sigint,
    )  # fmt: skip
    stdout, stderr, alive = _interrupt_with_its_workers(proc, _traffic(fault_server), "sweep")
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stdout.splitlines()[0].split()[:2] == ["QPS", "achieved"]
    doc = json.loads(out.read_text())
    assert [r["rate"] for r in doc["sweep"]] == [100] and len(stdout.splitlines()) > 1
    assert "interrupted" in doc["steps"][0]["flags"] and "sweep: interrupted" in stderr
    assert alive == [] and sorted(tmp_path.iterdir()) == [out]


def test_a_killed_worker_keeps_what_it_measured_and_is_reported(fault_server, tmp_path):
    """SIGKILL one of 2 workers mid-run: its requests up to its last flush are still merged."""
    import psutil

    rate, flush_s = 400, 0.2
    out = tmp_path / "r.json"
    before = fault_server.stats()["requests"]
    proc = start_cli(
        "load", "--rate", str(rate), "-z", "4s", "--workers", "2", "--json-out", str(out),
        fault_server.url,
    )  # fmt: skip
    _wait_for_traffic(fault_server, requests=300)
    psutil.Process(proc.pid).children()[1].kill()
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 1, stderr  # a lost worker is a failure (kfp_bench.outcome)
    assert "did not report" in stdout and "up to the kill" in stdout
    doc = json.loads(out.read_text())
    assert doc["workers"] == {"expected": 2, "reported": 1, "missing": [1], "partial": [1]}
    assert "workers-lost" in doc["flags"]
    served = fault_server.stats()["requests"] - before
    # The killed worker loses only what it measured since its last flush, and what was in flight:
    # allow two flush intervals of its share, for a timer that runs late on a busy machine.
    # Without its flush log, it would lose the 150+ requests it sent before the kill.
    lost = served - doc["requests"]
    assert 0 <= lost <= rate / 2 * 2 * flush_s + 10, (served, doc["requests"])


def test_a_sweep_that_lost_a_worker_says_so_and_exits_1(fault_server, tmp_path):
    """SIGKILL one of a sweep's 2 workers in its first step: the sweep goes on, the step's row
    carries ``workers-lost``, stderr says what it means, and the exit code is 1, not 0."""
    import psutil

    out = tmp_path / "sweep.json"
    proc = start_cli(
        "sweep", "--rates", "100,120", "-z", "3s", "--workers", "2", "--pause", "0",
        "--json-out", str(out), fault_server.url,
    )  # fmt: skip
    _wait_for_traffic(fault_server, requests=100)
    psutil.Process(proc.pid).children()[1].kill()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1, stderr
    rows = json.loads(out.read_text())["sweep"]
    assert rows[0]["failures"] == ["workers-lost"] and "failures" not in rows[1], rows
    assert "workers-lost: a load worker's result is missing or unreadable" in stderr


def test_a_killed_worker_keeps_its_csv_rows(fault_server, tmp_path):
    """SIGKILL one of 2 workers in -o csv mode: the rows it wrote before the kill are printed
    (whole rows only), as many as the merged result counts for it, give or take one flush."""
    import psutil

    rate, flush_s = 400, 0.2
    out = tmp_path / "r.json"
    before = fault_server.stats()["requests"]
    proc = start_cli(
        "load", "--rate", str(rate), "-z", "4s", "--workers", "2", "-o", "csv",
        "--json-out", str(out), fault_server.url,
    )  # fmt: skip
    _wait_for_traffic(fault_server, requests=800)  # ~2 s: the killed worker wrote ~400 rows
    psutil.Process(proc.pid).children()[1].kill()
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 1, stderr  # the lost worker
    rows = stdout.strip().splitlines()
    header, rows = rows[0], [r for r in rows[1:] if not r.startswith("kfp-bench")]
    assert all(r.count(",") == header.count(",") for r in rows)
    doc = json.loads(out.read_text())
    assert doc["workers"]["partial"] == [1]
    served = fault_server.stats()["requests"] - before
    one_flush = rate / 2 * 2 * flush_s + 10  # as in the test above
    # Without the killed worker's part, about half of what was served would be missing.
    assert 0 <= served - len(rows) <= 2 * one_flush, (served, len(rows))
    assert abs(doc["requests"] - len(rows)) <= one_flush, (doc["requests"], len(rows))


def test_csv_and_json_out_with_workers_leave_no_flush_logs(fault_server, tmp_path, monkeypatch):
    out = tmp_path / "r.json"
    env_tmp = tmp_path / "tmp"
    env_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(env_tmp))
    r = run_cli(
        "load", "-n", "300", "-c", "4", "--workers", "2", "-o", "csv", "--json-out", str(out),
        fault_server.url,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 301
    doc = json.loads(out.read_text())
    assert doc["requests"] == 300 and doc["workers"] == {
        "expected": 2,
        "reported": 2,
        "missing": [],
    }
    assert list(env_tmp.iterdir()) == []  # the workers' flush logs are gone


@pytest.mark.parametrize(
    "text, whole",
    [
        ("1,200\n2,200\n3,2", "1,200\n2,200\n"),  # a worker killed mid-row
        ("1,200\n2,200\n", "1,200\n2,200\n"),
        ("1,2", ""),
        ("", ""),
        ("9," * 40_000 + "\n" + "7,200\n" * 3, "9," * 40_000 + "\n" + "7,200\n" * 3),
    ],
)
def test_csv_parts_are_copied_in_whole_rows(tmp_path, text, whole):
    import io

    from kfp_bench.cli.load import _copy_whole_lines

    part = tmp_path / "0001.csv"
    part.write_text(text)
    out = io.StringIO()
    _copy_whole_lines(part, out)
    assert out.getvalue() == whole

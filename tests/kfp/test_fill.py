"""The full-database mode (``kfp_bench.kfp.fill``) against the local KFP API in a subprocess: a
small fill probed in two steps, then swept, counted through the API; a Ctrl-C mid-fill; bad
options. No timing bounds: the figures are only checked to exist."""

from __future__ import annotations

import json

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.fill import FillOptions, fill_id, run_with_fill
from kfp_bench.kfp.options import RunsOptions
from kfp_bench.report import fill as fill_report
from kfp_bench.report.runs import write_text
from tests.conftest import SIGINT_AT_START, interrupt_when, start_cli
from tests.kfp.conftest import HELLO, NOTHING, kfp_client, remains

UI_KINDS = {
    "list_runs_p10", "list_runs_p20", "list_runs_p50", "list_runs_p100",
    "list_runs_experiment_p20", "list_runs_name_p20", "list_experiments",
    "page_list_runs_p20", "get_pipeline_version", "page_load_p20", "get_run",
}  # fmt: skip


def carrying(url: str, part: str) -> int:
    """Runs on the server whose name holds ``part``: the server's own count (total_size)."""
    pred = {"key": "name", "operation": "IS_SUBSTRING", "string_value": part}
    listed = kfp_client(url).list_runs(page_size=1, filter=json.dumps({"predicates": [pred]}))
    return listed.total_size or 0


def test_fill_probe_and_sweep(kfp_server, tmp_path):
    """200 runs in two steps, each terminated at once; the UI's calls probed at 0, 100 and 200;
    the runs benchmark then runs; afterwards nothing of the fill or the benchmark is left."""
    bid = "fill-small"
    opts = RunsOptions(
        host=kfp_server.url, pipeline=str(HELLO), num_runs=2, create_concurrency=8,
        poll_interval=0.2, benchmark_id=bid,
    )  # fmt: skip
    fopts = FillOptions(target=200, steps=2, repeats=2)
    seen = []
    stats, fill = run_with_fill(opts, fopts, on_fill_progress=lambda *a: seen.append(a[0]))
    assert fill["filled"] == 200 and fill["create_failed"] == 0
    assert {"filling", "settling", "probing"} <= set(seen)
    ks = sorted({r["k"] for r in fill["rows"]})
    assert len(ks) == 3 and ks[-1] - ks[0] >= 200  # other tests' runs may be there too
    assert {r["kind"] for r in fill["rows"]} == UI_KINDS
    assert all(r["errors"] == 0 and r["count"] >= 1 for r in fill["rows"])
    # the server's own view beside them: its /metrics histogram, per step
    listed = [r for r in fill["server"] if r.get("operation") == "list_runs"]
    assert sorted(r["k"] for r in listed) == ks and all("p95_ms" in r for r in listed)
    assert fill["cleanup"]["runs_deleted"] == 200 and fill["cleanup"]["remaining"] == 0
    assert carrying(kfp_server.url, fill_id(bid)) == 0
    assert remains(kfp_server.url, fill_id(bid)) == NOTHING
    assert remains(kfp_server.url, bid) == NOTHING
    doc = stats.summary()
    assert doc["runs"]["created"] == 2 and "interrupted" not in doc["flags"]
    doc["fill"] = fill
    lines = []
    write_text(doc, type("W", (), {"write": staticmethod(lines.append)}))
    assert "Full database" in "".join(lines)
    (fig,) = fill_report.figures(doc)
    assert fig.name == "fill_latency" and fig.png.startswith(b"\x89PNG")
    assert list(fill_report.wide(doc).index) == ks


@pytest.mark.parametrize("sigint", SIGINT_AT_START)
def test_ctrl_c_mid_fill_leaves_nothing(slow_kfp_server, tmp_path, sigint):
    """SIGINT once some fill runs exist: the creates already sent finish, everything of the
    fill is swept, the benchmark does not run, exit 130 and a summary saying so; whether the
    command started with SIGINT's default or with it ignored (a background command of a script:
    how a fresh clone's suite once lost this Ctrl-C)."""
    url, bid, out = slow_kfp_server.url, f"fill-sigint-{sigint}", tmp_path / "out"
    proc = start_cli(
        "runs", "--host", url, "--pipeline", str(HELLO), "--num-runs", "1",
        "--create-concurrency", "2", "--benchmark-id", bid, "--out", str(out),
        "--fill", "1000", "--fill-steps", "1", "--max-runs", "1000", sigint=sigint,
    )  # fmt: skip
    stdout, stderr = interrupt_when(
        proc, lambda: carrying(url, fill_id(bid)) >= 10, "fill runs were created"
    )
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    doc = json.loads((out / "summary.json").read_text())
    assert "interrupted" in doc["fill"]["flags"] and "interrupted" in doc["flags"]
    assert 10 <= doc["fill"]["cleanup"]["runs_deleted"] < 1000
    assert doc["fill"]["filled"] == doc["fill"]["cleanup"]["runs_deleted"]  # creates sent
    assert doc["fill"]["cleanup"]["remaining"] == 0
    assert doc["runs"]["created"] == 0  # the benchmark itself never started
    assert carrying(url, fill_id(bid)) == 0
    assert remains(url, fill_id(bid)) == NOTHING and remains(url, bid) == NOTHING


@pytest.mark.parametrize(
    ("fopts", "flag"),
    [
        (FillOptions(target=5000), "--fill 5000 is above the cap of 1000"),
        (FillOptions(target=100, steps=0), "--fill-steps 0"),
        (FillOptions(target=100, mode="archive"), "--fill-mode 'archive'"),
        (FillOptions(target=100, repeats=0), "--fill-repeats 0"),
        (FillOptions(target=100, page_sizes=(20, 500)), "--fill-page-sizes 20,500"),
    ],
)
def test_bad_fill_options_name_the_flag(fopts, flag):
    with pytest.raises(ConfigError, match=flag):
        fopts.validate(max_runs=1000)


def test_fill_id_of_a_long_id_stays_a_name_of_its_own():
    from kfp_bench.kfp.options import check_benchmark_id

    assert fill_id("20250101-120000-ab12") == "20250101-120000-ab12-fill"
    long_a, long_b = "a" * 30 + "-0123456789", "a" * 30 + "-0123456788"
    assert len(fill_id(long_a)) == 40 and check_benchmark_id(fill_id(long_a))
    assert fill_id(long_a) != fill_id(long_b) and fill_id(long_a) == fill_id(long_a)


def test_marks_step_up_to_the_target():
    assert FillOptions(target=10000, steps=5).marks() == [0, 2000, 4000, 6000, 8000, 10000]
    assert FillOptions(target=7, steps=3).marks() == [0, 2, 5, 7]


def test_report_rebuilds_the_fill_from_summary_json(tmp_path):
    """``kfp-bench report`` on a saved result draws the K plot and prints the p50 table, from
    summary.json alone (no records)."""
    from kfp_bench.report.rebuild import rebuild
    from kfp_bench.results import write_results
    from kfp_bench.stats.runs import FillProbe, RunsStats

    probe = FillProbe()
    for k in (3, 1003, 2003):
        for kind in ("list_runs_p20", "get_pipeline_version"):
            for i in range(4):
                probe.add(k, kind, 0.001 * (1 + k / 1000 + i), ok=True)
    doc = RunsStats(requested=1, benchmark_id="rebuilt").summary()
    doc["fill"] = {"benchmark_id": "rebuilt-fill", "mode": "terminate", "repeats": 4,
                   "rows": probe.rows(), "server": probe.server_rows()}  # fmt: skip
    write_results(tmp_path / "res", runs_summary=doc)
    files = rebuild(tmp_path / "res", tmp_path / "report").files
    page = files["report.html"].read_text()
    assert 'id="fig-fill_latency"' in page and "Full database" in page
    assert "Full database" in files["summary.md"].read_text()
    row = next(r for r in doc["fill"]["rows"] if r["k"] == 2003 and r["kind"] == "list_runs_p20")
    assert row["count"] == 4 and row["p50_ms"] == pytest.approx(4.503)


def test_kept_fill_is_swept_by_kfp_bench_cleanup(kfp_server, tmp_path):
    """--keep keeps the fill; ``kfp-bench cleanup --benchmark-id <id>-fill`` then removes
    every run, the experiment and the pipeline it made (the server's count: 0)."""
    from tests.conftest import run_cli

    url, bid = kfp_server.url, "fill-kept"
    done = run_cli(
        "runs", "--host", url, "--pipeline", str(HELLO), "--num-runs", "1", "--keep",
        "--benchmark-id", bid, "--out", str(tmp_path / "out"), "--fill", "30",
        "--fill-steps", "1", "--fill-repeats", "1", "--fill-page-sizes", "20",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert carrying(url, fill_id(bid)) == 30
    swept = run_cli("cleanup", "--host", url, "--benchmark-id", fill_id(bid))
    assert swept.returncode == 0, swept.stderr
    assert "Deleted: 0 recurring runs, 30 runs, 1 experiments" in swept.stdout
    assert carrying(url, fill_id(bid)) == 0 and remains(url, fill_id(bid)) == NOTHING
    run_cli("cleanup", "--host", url, "--benchmark-id", bid)  # the kept benchmark itself


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--fill", "5000"], "--fill 5000 is above the cap of 1000"),
        (["--fill", "10", "--fill-steps", "20"], "--fill-steps 20: give 1 to 10"),
        (["--fill", "10", "--fill-page-sizes", "20,x"], "give page sizes separated by commas"),
    ],
)
def test_cli_refuses_bad_fill_flags_before_anything_is_made(args, said, tmp_path):
    from tests.conftest import run_cli

    done = run_cli(
        "runs", "--host", "http://127.0.0.1:9", "--pipeline", str(HELLO), "--num-runs", "1",
        "--out", str(tmp_path / "out"), *args,
    )  # fmt: skip
    assert done.returncode != 0 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_finish_mode_waits_for_the_runs_to_end(kfp_server):
    """Mode finish: the runs are left to run (0.2 s each, simulated) and the fill waits, at
    each step, until the server says none is open: every run then SUCCEEDED."""
    from kfp_bench.kfp.fill import Filler
    from kfp_bench.kfp.manifest import load_manifest

    opts = RunsOptions(host=kfp_server.url, pipeline=str(HELLO), benchmark_id="fill-finish",
                       create_concurrency=4, poll_interval=0.2)  # fmt: skip
    filler = Filler(opts, FillOptions(target=12, steps=1, mode="finish", repeats=1),
                    load_manifest(str(HELLO)), {})  # fmt: skip
    try:
        filler.setup()
        filler.to(12)
        pred = [{"key": "name", "operation": "IS_SUBSTRING", "string_value": filler.fid},
                {"key": "state", "operation": "EQUALS", "string_value": "SUCCEEDED"}]  # fmt: skip
        done = kfp_client(kfp_server.url).list_runs(
            page_size=1, filter=json.dumps({"predicates": pred})
        )
        assert done.total_size == 12 and filler.summary()["filled"] == 12
        assert "fill-unsettled" not in filler.summary()["flags"]
    finally:
        filler.clean()
        filler.close()
    assert carrying(kfp_server.url, filler.fid) == 0

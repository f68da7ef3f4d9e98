"""The runs benchmark's client figures beside the KFP API server's own request-duration
histogram (two scrapes of the local KFP API's real /metrics around the benchmark): each
operation's p50/p90/p99 on both sides, the bucket that holds the server's (its resolution), and
the difference named, in the text, summary.md and report.html. No timing bounds."""

from __future__ import annotations

import json

from tests.conftest import run_cli
from tests.kfp.conftest import HELLO


def test_server_percentiles_stand_beside_the_clients(kfp_server, tmp_path):
    out = tmp_path / "runs"
    done = run_cli(
        "runs", "--host", kfp_server.url, "--pipeline", str(HELLO), "--num-runs", "4",
        "--poll-interval", "0.2", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads((out / "summary.json").read_text())
    created = doc["server"]["operations"]["create_run"]
    assert created["buckets"][-1][0] == "+Inf"  # JSON has no infinity

    # the server's own table: its p50 and p99 as the bucket that holds them, never a figure
    # finer than the histogram (an interpolated 2.50 ms inside 0-5 ms)
    head, table = done.stdout.split("Server side, from /metrics deltas", 1)[1].split("\n", 1)
    assert "the bucket of the server's histogram" in head
    row = next(line.split() for line in table.splitlines() if line.split()[:1] == ["create_run"])
    le = [f"{float(b[0]) * 1e3:g}" for b in created["buckets"][:-1]]  # the bounds, in ms
    for cell in row[4:6]:  # p50, p99
        lo, hi = cell.split("–")
        assert hi in le and (lo == "0" or lo in le), (cell, le)

    text = done.stdout.split("client − server is the time outside", 1)[1]
    rows = {
        " ".join(line.split()[:2]): line
        for line in text.splitlines()
        if line.strip().startswith(("create_run p", "list_runs p"))
    }
    assert {"create_run p50", "create_run p90", "create_run p99"} <= set(rows)
    cells = rows["create_run p50"].split("  ")
    cells = [c.strip() for c in cells if c.strip()]
    # figure, histogram, server count, server, its bucket, client, client count, difference
    assert cells[1] == "its /metrics histogram"
    assert cells[2] == cells[6] == "4"  # every create the client sent, counted by the server
    assert "–" in cells[4]
    assert cells[7] == "within its bucket" or isinstance(float(cells[7].replace(",", "")), float)

    report = run_cli("report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "report" / "summary.md").read_text()
    part = md.split("## KFP API server beside the client\n", 1)[1]
    assert "| create_run p99 | its /metrics histogram | 4 |" in part
    assert "client − server (ms)" in part
    html = (tmp_path / "report" / "report.html").read_text()
    assert "KFP API server beside the client" in html

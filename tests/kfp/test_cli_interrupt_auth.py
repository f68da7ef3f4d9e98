"""``kfp-bench runs`` in a real process against the local KFP server: Ctrl-C mid-benchmark, and
``--auth kfp-client`` with the credentials kfp.Client itself finds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request

import pytest

from tests.conftest import SIGINT_AT_START, interrupt_when, start_cli
from tests.kfp.conftest import HELLO, NOTHING, kfp_client, remains


@pytest.mark.parametrize("sigint", SIGINT_AT_START)
def test_ctrl_c_prints_saves_and_cleans_up(slow_kfp_server, tmp_path, sigint):
    """Runs last 60 s: SIGINT once some exist, as a first Ctrl-C would, whether the command
    started with SIGINT's default or with it ignored (a background command of a script)."""
    url, bid, out = slow_kfp_server.url, f"sigint-cli-{sigint}", tmp_path / "out"
    proc = start_cli(
        "runs", "--host", url, "--pipeline", str(HELLO), "--num-runs", "6",
        "--create-concurrency", "2", "--poll-interval", "0.2", "--benchmark-id", bid,
        "--out", str(out), sigint=sigint,
    )  # fmt: skip
    client = kfp_client(url)
    stdout, stderr = interrupt_when(
        proc, lambda: remains(url, bid)["runs"] >= 3, "runs were created", wait_s=60, timeout=60
    )
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "create_run" in stdout and "summary.json" in stdout  # the summary was printed
    doc = json.loads((out / "summary.json").read_text())
    assert "interrupted" in doc["flags"]
    created = doc["runs"]["created"]
    assert 3 <= created <= 6 and "SUCCEEDED" not in doc["runs"]["by_state"]
    lines = (out / "runs.jsonl").read_text().splitlines()
    assert len(lines) == created
    assert all("interrupted" in json.loads(x)["error"] for x in lines)
    assert len((out / "api_calls.jsonl").read_text().splitlines()) == doc["api_calls_total"]
    assert doc["cleanup"]["runs_deleted"] == created and doc["cleanup"]["experiment_deleted"]
    assert remains(url, bid) == NOTHING
    assert client.get_kfp_healthz() is not None  # the server is still fine


TOKEN = "kfp-client-secret-7d41e0"
COOKIE = "kfp-client-cookie-93ab2f"


def _credentials_seen(url: str) -> dict[tuple[str, str], float]:
    """kfp_api_request_credentials_total by (authorization, cookie): presence, never a token."""
    text = urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode()
    seen = {}
    for line in text.splitlines():
        if line.startswith("kfp_api_request_credentials_total{"):
            labels, value = line.rsplit(" ", 1)
            auth = labels.split('authorization="')[1].split('"')[0]
            cookie = labels.split('cookie="')[1].split('"')[0]
            seen[(auth, cookie)] = float(value)
    return seen


def test_kfp_client_credentials_reach_the_server_and_stay_secret(kfp_server, tmp_path):
    """kfp.Client's saved context (~/.config/kfp/context.json: an authentication header and a
    cookie) is what ``--auth kfp-client`` borrows from a real kfp.Client; HOME points at a
    temporary directory so that the machine's own context is never read. kfp.Client's other
    sources (IAP client ids, Google credentials) need Google's OAuth and are not exercised."""
    home = tmp_path / "home"
    (home / ".config/kfp").mkdir(parents=True)
    context = {
        "namespace": "",
        "client_authentication_header_name": "Authorization",
        "client_authentication_header_value": f"Bearer {TOKEN}",
        "client_authentication_cookie": f"session={COOKIE}",
    }
    (home / ".config/kfp/context.json").write_text(json.dumps(context))
    out = tmp_path / "out"
    before = _credentials_seen(kfp_server.url)
    r = subprocess.run(
        [sys.executable, "-m", "kfp_bench.cli", "runs", "--host", kfp_server.url,
         "--pipeline", str(HELLO), "--num-runs", "2", "--poll-interval", "0.2",
         "--auth", "kfp-client", "--out", str(out)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(home)},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    after = _credentials_seen(kfp_server.url)
    doc = json.loads((out / "summary.json").read_text())
    with_both = after.get(("bearer", "yes"), 0) - before.get(("bearer", "yes"), 0)
    # kfp.Client's own healthz check, then every call of the driver's, carried both.
    assert with_both >= doc["api_calls_total"] > 0
    assert doc["options"]["auth"] == "kfp.Client's credentials"
    for secret in (TOKEN, COOKIE):
        assert secret not in r.stdout + r.stderr
        for f in out.iterdir():
            assert secret not in f.read_text(), f

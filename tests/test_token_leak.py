"""A full benchmark with a known token leaves it nowhere: not in stdout or stderr, logs, reports,
Markdown, metrics, saved results or any other file it writes.

The local KFP server requires the token (``--token-file``). The token reaches the benchmark by a
file (``--token-file``), by the environment (``$KF_PIPELINES_SA_TOKEN_PATH``, as the projected
service-account token of multi-user KFP) and on the command line (``kfp-bench load -H
"Authorization: Bearer ..."``); a second token that the server refuses is tried too, since an
error is where a credential is most likely echoed. The meta-pipeline runs once under kfp.local
with the token in the environment, as its KFP steps find it in a pod. Then every file under the
working directory, the results, the report history, kfp.local's pipeline root, the temporary
directory (``TMPDIR``) and the server's state directory, the captured output of every process,
the server's log and its /metrics are searched for the tokens, raw and base64-encoded.
"""

from __future__ import annotations

import base64
import gzip
import json
import secrets
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from kfp import local
from kfp.local import config

from kfp_bench.results import write_results
from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.conftest import run_cli
from tests.kfp.conftest import HELLO
from tests.venv_image import pipeline

pytestmark = pytest.mark.slow


def _forms(token: str) -> set[bytes]:
    """The token as it could leak: raw, and base64-encoded (standard and URL-safe) at each of
    the three alignments it can have inside a longer encoded text."""
    raw = token.encode()
    forms = {raw}
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + raw)
        core = enc[(pad * 4 + 2) // 3 : -4]  # the characters only the token's bytes decide
        forms |= {core, core.translate(bytes.maketrans(b"+/", b"-_"))}
    return forms


def _contents(roots: list[Path]):
    """(path, bytes) of every file under ``roots``; gzip files also decompressed."""
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            data = path.read_bytes()
            yield path, data + str(path).encode()
            if data[:2] == b"\x1f\x8b":
                yield path, gzip.decompress(data)


def _as_results(runs_out: Path) -> None:
    """A results directory of a ``kfp-bench runs --out`` folder, as the pipeline's aggregate
    step makes one (``kfp-bench report`` reads results directories, not a runs summary)."""
    out = runs_out / "results"
    out.mkdir()
    for name in ("runs.jsonl", "api_calls.jsonl"):
        shutil.copyfile(runs_out / name, out / name)
    write_results(out, runs_summary=json.loads((runs_out / "summary.json").read_text()))


@pytest.fixture
def places(tmp_path, monkeypatch):
    """A working directory, a TMPDIR and kfp.local's pipeline root, all searched afterwards."""
    dirs = {name: tmp_path / name for name in ("work", "tmp", "root", "server", "secrets")}
    for d in dirs.values():
        d.mkdir()
    monkeypatch.chdir(dirs["work"])
    monkeypatch.setenv("TMPDIR", str(dirs["tmp"]))
    monkeypatch.setattr(tempfile, "tempdir", str(dirs["tmp"]))
    before = config.LocalExecutionConfig.instance
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(dirs["root"]))
    yield dirs
    config.LocalExecutionConfig.instance = before


def test_a_known_token_appears_in_no_output(places, monkeypatch, capfd, fault_server):
    token, wrong = f"kfpb-{secrets.token_urlsafe(24)}", f"kfpb-{secrets.token_urlsafe(24)}"
    good, bad = places["secrets"] / "token", places["secrets"] / "wrong"
    good.write_text(token + "\n")
    bad.write_text(wrong + "\n")
    work, outputs = places["work"], []

    def cli(*args: str, ok: bool = True) -> None:
        r = run_cli(*args, timeout=180)
        outputs.extend([r.stdout, r.stderr])
        assert (r.returncode == 0) == ok, r.stderr

    with start_kfp_server(
        simulate="all:fixed(0.2)", token_file=str(good), state_dir=str(places["server"])
    ) as server:
        url = server.url
        runs = ("runs", "--host", url, "--pipeline", str(HELLO), "--num-runs", "2")
        runs += ("--poll-interval", "0.2")
        cli(*runs, "--token-file", str(good), "--out", "by-file", "--benchmark-id", "tok-file")
        cli(*runs, "--token-file", str(bad), "--out", "refused", ok=False)
        monkeypatch.setenv("KF_PIPELINES_SA_TOKEN_PATH", str(good))
        cli(*runs, "--out", "by-env", "--benchmark-id", "tok-env")
        cli("cleanup", "--host", url, "--benchmark-id", "tok-env")
        for name in ("by-file", "by-env"):
            _as_results(work / name)
        history = f"file://{work / 'history'}"
        cli("report", "by-file/results", "--results-uri", history)
        cli("report", "by-env/results", "--out", "by-env-report")

        load = ("load", "-z", "0.5s", "-c", "2", "-A", "application/json")
        cli(*load, "-H", f"Authorization: Bearer {token}", "--json-out", "load.json",
            f"{fault_server.url}/v1/models/m:predict")  # fmt: skip
        cli("report", "load.json")

        # The meta-pipeline's KFP steps take the token from the environment, as in a pod.
        pipeline()(
            kfp_host=url,
            num_runs=2,
            poll_interval_sec=0.2,
            run_load=False,
            benchmark_id="tok-meta",
        )
        captured = capfd.readouterr()
        outputs += [captured.out, captured.err]
        with urllib.request.urlopen(f"{url}/metrics") as resp:
            outputs.append(resp.read().decode())
        refused = urllib.request.Request(
            f"{url}/apis/v2beta1/experiments", headers={"Authorization": f"Bearer {wrong}"}
        )
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(refused)
        assert answer.value.code == 401
        outputs.append(answer.value.read().decode())
    outputs.append(server.log_tail(10**6))

    assert (work / "by-file" / "results" / "report" / "report.html").exists()
    assert (work / "by-env-report" / "summary.md").exists()
    assert list(places["root"].glob("kfp-bench-*/report/records/metrics.json"))
    assert "401" in "".join(outputs)  # the refused token was refused, and said so
    forms = _forms(token) | _forms(wrong)
    searched = 0
    for path, data in _contents([places[d] for d in ("work", "tmp", "root", "server")]):
        searched += 1
        assert not [f for f in forms if f in data], f"a token in {path}"
    for text in outputs:
        assert not [f for f in forms if f in text.encode()], f"a token in output: {text[:300]}"
    assert searched > 50  # the results, reports, CSVs, history and pipeline root were there

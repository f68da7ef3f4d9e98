"""(c) examples/benchmark.ipynb, executed with nbclient against the local KFP API server: as on a
laptop (single-user KFP, no pod files) and as in a Kubeflow notebook on multi-user KFP (the
notebook pod's service-account token and namespace, simulated in tmp_path)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import nbclient
import nbformat

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.kfp.conftest import GOOD, NS

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "benchmark.ipynb"


def _execute(server, monkeypatch) -> str:
    monkeypatch.setenv("KFP_BENCH_NOTEBOOK_HOST", server.url)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )


def test_notebook_submits_the_pipeline(monkeypatch):
    with start_kfp_server(simulate="all:fixed(0.3)") as server:
        outputs = _execute(server, monkeypatch)
    assert "state SUCCEEDED" in outputs


def test_notebook_in_a_kubeflow_notebook_pod_on_multi_user_kfp(monkeypatch, tmp_path):
    (tmp_path / "server-token").write_text(GOOD)
    (tmp_path / "token").write_text(GOOD)
    (tmp_path / "namespace").write_text(NS)
    monkeypatch.setenv("KF_PIPELINES_SA_TOKEN_PATH", str(tmp_path / "token"))
    monkeypatch.setenv("KFP_BENCH_POD_NAMESPACE_PATH", str(tmp_path / "namespace"))
    with start_kfp_server(
        simulate="all:fixed(0.3)", multi_user=True, token_file=str(tmp_path / "server-token")
    ) as server:
        outputs = _execute(server, monkeypatch)
        req = urllib.request.Request(f"{server.api_url}/runs?namespace={NS}")
        req.add_header("Authorization", f"Bearer {GOOD}")
        with urllib.request.urlopen(req, timeout=10) as resp:
            runs = json.loads(resp.read()).get("runs", [])
    assert "state SUCCEEDED" in outputs
    assert f"namespace {NS}: " in outputs  # the notebook says which namespace it took
    assert len(runs) == 1

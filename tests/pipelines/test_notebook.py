"""(c) examples/benchmark.ipynb, executed with nbclient against the local KFP API server."""

from __future__ import annotations

from pathlib import Path

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "benchmark.ipynb"


def test_notebook_submits_the_pipeline(monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    with start_kfp_server(simulate="all:fixed(0.3)") as server:
        monkeypatch.setenv("KFP_BENCH_NOTEBOOK_HOST", server.url)
        nb = nbformat.read(NOTEBOOK, as_version=4)
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "state SUCCEEDED" in outputs

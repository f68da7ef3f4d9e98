"""summary.md's size limit, shared by the predict and the LLM bundle: one error of the exception
tree (``BundleTooLarge``), raised before anything is written, and a clean exit 1 from the CLI.

The limit is lowered for these tests (``report.folder.MAX_BYTES``): real results small enough
for a test do not reach 400 kB, and the reporters' row limits keep real ones under it."""

from __future__ import annotations

import pytest

from kfp_bench import cli
from kfp_bench.errors import BenchError, BundleTooLarge
from kfp_bench.report import folder
from kfp_bench.report.bundle import write_bundle
from kfp_bench.report.llm_bundle import write_llm_bundle
from kfp_bench.results import read_results
from kfp_bench.stats import store
from tests.report.llm_results import merged


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(folder, "MAX_BYTES", 2_000)


def _kept(out) -> dict:
    return {p.name: p.read_bytes() for p in out.iterdir()}


def test_both_bundles_raise_the_one_error_and_write_nothing(small_limit, results_dir, tmp_path):
    assert issubclass(BundleTooLarge, BenchError) and BundleTooLarge.exit_code == 1
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.md").write_text("the report before\n")
    before = _kept(out)
    with pytest.raises(BundleTooLarge, match=r"summary.md would be \d+ bytes \(limit 2000\)"):
        write_bundle(read_results(results_dir), out, kde=False)
    with pytest.raises(BundleTooLarge, match=r"summary.md would be \d+ bytes \(limit 2000\)"):
        write_llm_bundle(merged(), out)
    assert _kept(out) == before


def test_the_command_ends_with_the_message_and_exit_1(small_limit, tmp_path, capsys):
    saved = store.save(merged(), tmp_path / "merged.json")
    assert cli.main(["report", str(saved), "--out", str(tmp_path / "rep")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kfp-bench: summary.md would be ") and "Traceback" not in err

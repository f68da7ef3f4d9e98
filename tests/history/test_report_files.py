"""``kfp-bench report --results-uri`` archives a load or an LLM result file as it does a results
directory, in a local folder and on S3 (a real SeaweedFS), under keys the trend leaves out."""

from __future__ import annotations

import pytest

from kfp_bench import cli
from kfp_bench import history as hist
from kfp_bench.records import Result
from kfp_bench.stats import store as results_file
from kfp_bench.stats.load import LoadStats
from tests.report.llm_results import save_pods
from tests.synthetic import T0, make_results


@pytest.fixture(params=["local", "s3"])
def results_uri(request, tmp_path):
    if request.param == "s3":
        return f"s3://{request.getfixturevalue('s3').bucket}/files-{tmp_path.name}"
    return str(tmp_path / "history")


def _load_file(path):
    stats = LoadStats(corrected=True, started_at=T0)
    for i in range(50):
        stats.add(Result(i, i * 0.01, i * 0.01 + 0.0002, 0.004 + i * 1e-5, 200, 2, 40))
    return results_file.save(stats.close(0.5), path)


def test_a_load_result_file_is_archived(results_uri, tmp_path, capsys):
    path = _load_file(tmp_path / "load.json")
    assert cli.main(["report", str(path), "--results-uri", results_uri]) == 0
    out = capsys.readouterr().out
    key = hist.file_key(path, "load")
    assert key.endswith("-load") and f"{path}: archived as {key} in {results_uri}" in out
    store = hist.open_store(results_uri)
    assert store.keys() == {key: ["load.json"]}
    assert store.read(key, "load.json") == path.read_bytes()
    # again: nothing replaced, and said so
    assert cli.main(["report", str(path), "--results-uri", results_uri]) == 0
    assert f"already archived as {key}" in capsys.readouterr().out


def test_an_llm_result_file_is_archived_with_its_report(results_uri, tmp_path, capsys):
    (path,) = save_pods(tmp_path / "p", 1)
    assert cli.main(["report", str(path), "--results-uri", results_uri]) == 0
    key = hist.file_key(path, "llm")
    assert f"archived as {key} in {results_uri}" in capsys.readouterr().out
    names = hist.open_store(results_uri).keys()[key]
    assert "llm.json" in names and "report.html" in names


def test_result_files_stay_out_of_the_trend(results_uri, tmp_path):
    """A directory's history shows only directories: a load file archived before is no
    earlier benchmark of it."""
    assert (
        cli.main(["report", str(_load_file(tmp_path / "l.json")), "--results-uri", results_uri])
        == 0
    )
    night = make_results(tmp_path / "night", seed=3, start=T0 + 86400)
    assert cli.main(["report", str(night), "--results-uri", results_uri]) == 0
    store = hist.open_store(results_uri)
    assert len(store.keys()) == 2 and [e.key for e in hist.entries(store)] != []
    assert all(not e.key.endswith("-load") for e in hist.entries(store))

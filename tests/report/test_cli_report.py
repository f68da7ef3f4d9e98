"""``kfp-bench report`` and ``kfp-bench compare``: saved results to reports, history and verdicts,
and a clear message with a nonzero exit for every bad input."""

from __future__ import annotations

import json

import pytest

from kfp_bench import cli
from kfp_bench.results import write_results
from tests.conftest import run_cli
from tests.synthetic import T0, make_results


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    d = tmp_path_factory.mktemp("nights")
    return [
        make_results(d / f"night{i}", seed=20 + i, start=T0 + i * 86400, slow=1.5 if i == 2 else 1)
        for i in range(3)
    ]


def test_report_builds_history_and_names_a_regression(nights, tmp_path, capsys):
    uri = (tmp_path / "hist").as_uri()
    out = tmp_path / "reports"
    # Given newest first: reports are built oldest first so the history grows in order.
    rc = cli.main(
        ["report", str(nights[1]), str(nights[0]), "--out", str(out), "--results-uri", uri]
    )
    stdout = capsys.readouterr().out
    assert rc == 0
    assert stdout.index("night0") < stdout.index("night1")
    assert (out / "night0" / "report.html").exists() and (out / "night1" / "summary.md").exists()
    assert stdout.count("archived as") == 2
    # Tonight's report in a real process, as cron runs it.
    p = run_cli(
        "report",
        str(nights[2]),
        "--out",
        str(out / "tonight"),
        "--results-uri",
        uri,
        "--baseline",
        "last:2",
    )
    assert p.returncode == 0, p.stderr
    assert "REGRESSION" in p.stdout
    metrics = json.loads((out / "tonight" / "metrics.json").read_text())
    assert metrics["regression"] == 1 and metrics["baseline_results"] == 2
    assert len(list((tmp_path / "hist").iterdir())) == 3


def test_report_of_a_load_file_keeps_hey_layout(tmp_path):
    from kfp_bench.results import read_results
    from kfp_bench.stats import store

    res = read_results(make_results(tmp_path / "r", runs=0, failed=0))
    store.save(res.load, tmp_path / "load.json")
    p = run_cli("report", str(tmp_path / "load.json"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("\nSummary:\n") and "Latency distribution:" in p.stdout


def test_compare_prints_differences_and_verdict(nights, capsys):
    assert cli.main(["compare", str(nights[0]), str(nights[2])]) == 0
    out = capsys.readouterr().out
    assert "run_duration_p50_s" in out and "Verdict: REGRESSION" in out
    assert cli.main(["compare", str(nights[0]), str(nights[2]), "--fail-on-regression"]) == 3
    capsys.readouterr()
    assert cli.main(["compare", str(nights[0]), str(nights[1]), "--fail-on-regression"]) == 0
    assert "Verdict: no regression" in capsys.readouterr().out


def test_compare_cautions_when_a_load_generator_was_cpu_bound(nights, tmp_path, capsys):
    busy = make_results(tmp_path / "busy", seed=23, start=T0 + 3 * 86400, load_cpu=(3.0, 2.6))
    cli.main(["compare", str(nights[0]), str(busy)])
    out = capsys.readouterr().out
    assert "Caution, B: the load generator was CPU-bound (a process at 93% of a core" in out
    assert "Caution, A" not in out
    cli.main(["compare", str(nights[0]), str(nights[1])])
    assert "Caution" not in capsys.readouterr().out


def test_a_baseline_with_too_few_samples_is_refused(tmp_path, capsys):
    uri = str(tmp_path / "hist")
    small = [
        make_results(tmp_path / f"s{i}", seed=i, runs=3, failed=0, load=False, start=T0 + i)
        for i in range(2)
    ]
    assert cli.main(["report", str(small[0]), "--results-uri", uri]) == 0
    rc = cli.main(["report", str(small[1]), "--results-uri", uri, "--baseline", "last:1"])
    err = capsys.readouterr().err
    assert rc == 1 and "too few samples" in err and "no verdict made" in err
    # The report is still written, saying there is no verdict; it guesses nothing.
    assert "No verdict" in (small[1] / "report" / "summary.md").read_text()
    assert "regression" not in json.loads((small[1] / "report" / "metrics.json").read_text())


def _incompatible(tmp_path):
    write_results(tmp_path)
    doc = json.loads((tmp_path / "summary.json").read_text())
    doc["format_version"] = 7
    (tmp_path / "summary.json").write_text(json.dumps(doc))
    return tmp_path


@pytest.mark.parametrize(
    "make, extra, rc, message",
    [
        (lambda t: t / "missing", [], 2, "no such results directory"),
        (lambda t: t, [], 2, "empty; give a directory written by a kfp-bench benchmark"),
        (_incompatible, [], 2, "results format version 7; this kfp-bench reads version 1"),
        (
            lambda t: make_results(t / "r", runs=2, load=False),
            ["--results-uri", "gs:///p"],
            2,
            "no bucket",
        ),
        (
            lambda t: make_results(t / "r", runs=2, load=False),
            ["--baseline", "last:3"],
            2,
            "give --results-uri too",
        ),
    ],
)
def test_bad_input(tmp_path, capsys, make, extra, rc, message):
    path = make(tmp_path)
    assert cli.main(["report", str(path), *extra]) == rc
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_compare_of_a_missing_directory(tmp_path):
    p = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert p.returncode == 2 and "no such results directory" in p.stderr

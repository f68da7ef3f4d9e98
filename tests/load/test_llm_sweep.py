"""The LLM sweep: its steps against the real local LLM server, its knee on hand-made stats, its
results file read back by ``kfp-bench report`` (the table, the chart, the step it reports)."""

from __future__ import annotations

import pytest

from kfp_bench.cli import main
from kfp_bench.errors import ConfigError
from kfp_bench.figures import num
from kfp_bench.load.llm_sweep import parse_concurrencies, run_llm_sweep
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.prompts import Dist, synthetic
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.stats import store
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.rate_sweep import LlmSweep, find_llm_knee
from kfp_bench.stats.slo import Slo
from tests.stats.streams import batch, stream


@pytest.fixture(scope="module")
def llm():
    with start_llm_server(first_token_ms=30, token_gap_ms=5, max_tokens=6) as server:
        yield server


def _stats(ttft_s: float, n: int = 10, failed: int = 0, slo: str = "") -> LlmStats:
    """``n`` streams of 3 chunks whose first comes ``ttft_s`` after the send; ``failed`` more
    that failed with no content."""
    s = LlmStats(slo=Slo.parse(slo))
    ok = [stream(k * 0.1, [k * 0.1 + ttft_s + j * 0.01 for j in range(3)], k * 0.1 + ttft_s + 0.05)
          for k in range(n)]  # fmt: skip
    bad = [stream(2.0, [], 2.1, outcome=1, status=429, usage=-1, error="HTTP 429")] * failed
    s.add_batch(batch(*ok, *bad))
    return s.close(3.0)


def test_the_knee_is_the_first_step_past_the_ttft_factor_or_under_the_good_share():
    base, ok, slow = _stats(0.1), _stats(0.25), _stats(0.35)
    knee = find_llm_knee([1, 2, 4], [base, ok, slow], factor=3.0)
    assert knee.level == 4 and knee.reason.startswith("TTFT p99 350.")
    assert knee.reason.endswith("ms > 3x the first step's 100.0 ms")
    knee = find_llm_knee([1, 2, 4], [base, _stats(0.1, failed=2), slow], min_good=0.9)
    assert knee.level == 2 and knee.reason == "good 83.3% < 90%"
    # under an SLO, good is within it, not merely completed
    tight = [_stats(0.1, slo="ttft=200ms"), _stats(0.25, slo="ttft=200ms")]
    assert find_llm_knee([1, 2], tight, factor=10).level == 2
    assert find_llm_knee([1, 2], [base, ok]).level is None


def _refused(n: int = 5) -> LlmStats:
    """``n`` requests that got no response: the port refused them."""
    s = LlmStats()
    s.add_batch(batch(*[stream(k * 0.1, [], k * 0.1, outcome=1, status=0,
                               error="connection refused") for k in range(n)]))  # fmt: skip
    return s.close(3.0)


def test_a_step_without_any_response_is_neither_the_knee_nor_its_baseline():
    """As in the predict sweep (the same function, ``stats.knee``): a closed port is not a
    saturated server. A step whose requests all failed with a status is still the knee."""
    base, slow = _stats(0.1), _stats(0.35)
    knee = find_llm_knee([1, 2, 4], [_refused(), base, slow])
    assert knee.level == 4 and knee.reason.endswith("3x the first step's 100.0 ms")
    assert find_llm_knee([1, 2], [_refused(), _refused()]).reason == "no steps with a response"
    assert find_llm_knee([1, 2], [base, _stats(0.1, n=0, failed=3)]).level == 2


def test_a_concurrency_sweep_runs_a_step_a_level_and_its_file_reports(llm, tmp_path, capsys):
    opts = LlmOptions(url=llm.url + "/openai", model="m", concurrency=1, duration=1.0).validate()
    prompts = synthetic(4, Dist.parse("fixed:8"), Dist.parse("fixed:6"), seed=1)
    seen = []
    sweep = run_llm_sweep(
        opts, prompts, concurrencies=(1, 3), step_s=1.0, on_step=lambda lv, st: seen.append(lv)
    )
    assert seen == [1.0, 3.0] and sweep.by == "concurrency" and sweep.knee.level is None
    rows = sweep.rows()
    assert [r["level"] for r in rows] == [1.0, 3.0]
    # three streams at once complete about three times as many requests as one
    assert rows[1]["rps"] > 2 * rows[0]["rps"] and all(r["failed"] == 0 for r in rows)
    path = store.save(sweep, tmp_path / "sweep.json")
    back = store.load(path)
    assert isinstance(back, LlmSweep) and back.rows() == rows
    assert main(["report", str(path), "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert (
        "Sweep by concurrency" in out
        and "The report's figures are the step at concurrency 3" in out
    )
    md = (tmp_path / "r" / "summary.md").read_text()
    assert "## Goodput against load" in md
    assert '<figure id="fig-llm_sweep">' in (tmp_path / "r" / "report.html").read_text()
    # compare sets two sweeps' levels on one front: the same sweep twice, the busiest level of
    # each is on it; a sweep beside a results directory is refused
    assert main(["compare", str(path), str(path)]) == 0
    out = capsys.readouterr().out
    busiest = f"{max(rows, key=lambda r: r['output_tokens_per_s'])['level']:g}"
    for side in "AB":
        assert f"  {side}\t{busiest}\t" in out
        line = next(x for x in out.splitlines() if x.startswith(f"  {side}\t{busiest}\t"))
        assert line.endswith("on the front"), out
    assert main(["compare", str(path), str(tmp_path / "r")]) == 2
    assert "compare takes two results directories" in capsys.readouterr().err
    # the level serving the most in all is never beaten on both axes
    pareto = md.split("## Per user against in all", 1)[1].split("\n## ", 1)[0]
    most = max(rows, key=lambda r: r["output_tokens_per_s"])["level"]
    assert any(
        line.startswith(f"| {num(most)} |") and line.rstrip().endswith("| on the front |")
        for line in pareto.splitlines()
    ), pareto


def test_the_cli_sweeps_rates_and_saves_the_sweep(llm, tmp_path, capsys):
    out = tmp_path / "s.json"
    code = main(
        ["llm", llm.url + "/openai", "--sweep-rates", "2,6", "-z", "1s", "-c", "1",
         "--json-out", str(out)]
    )  # fmt: skip
    text = capsys.readouterr()
    assert code == 0, text.err
    assert "Sweep by rate" in text.out and "Knee: none" in text.out
    assert "rate 2: " in text.err and "rate 6: " in text.err  # a line a step, as it ends
    sweep = store.load(out)
    assert sweep.by == "rate" and len(sweep.steps) == 2 and sweep.steps[1].corrected


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sweep-rates", "4,2", "-z", "1s"], "--sweep-rates 4,2: give the rates in increasing"),
        (["--sweep-concurrency", "1,x", "-z", "1s"], "--sweep-concurrency '1,x': not a list"),
        (["--sweep-rates", "1,2"], "a sweep needs -z"),
        (["--sweep-rates", "1", "--sweep-concurrency", "1", "-z", "1s"], "give one of"),
        (["--sweep-rates", "1,2", "-z", "1s", "--knee-factor", "1"], "--knee-factor 1.0"),
    ],
)
def test_a_bad_sweep_is_one_line_and_exit_2(llm, capsys, args, message):
    code = main(["llm", llm.url + "/openai", "-c", "1", "--model", "m", *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_concurrencies_are_whole_increasing_stream_counts():
    assert parse_concurrencies("1, 4,16") == (1, 4, 16)
    for bad in ("0,1", "4,2", "", "1.5"):
        with pytest.raises(ConfigError, match="--sweep-concurrency"):
            parse_concurrencies(bad)


def test_each_step_shows_its_flags_and_the_report_of_the_file_prints_every_step(
    llm, tmp_path, capsys
):
    """The server leaves out usage (fault no-usage) and no tokenizer counts: every step is
    flagged tokens-unknown and usage-mismatch, warnings; an SLO no stream meets puts the knee at
    the first step."""
    out = tmp_path / "s.json"
    code = main(
        ["llm", llm.url + "/openai", "--sweep-concurrency", "1,2", "-z", "1s", "--slo",
         "ttft=1ms", "-H", "X-Llm-Fault: no-usage", "--json-out", str(out)]
    )  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0, text
    lines = [line for line in text.splitlines() if line.startswith(("  1\t", "  2\t"))]
    assert len(lines) == 2 and all(
        line.endswith("  (tokens-unknown, usage-mismatch)") for line in lines
    ), text
    assert (
        "Knee: at concurrency 1: good 0.0% < 90% (that step's flags: tokens-unknown, "
        "usage-mismatch)"
    ) in text
    warned = ["tokens-unknown", "usage-mismatch"]
    assert all(r["warnings"] == warned for r in store.load(out).rows())
    assert main(["report", str(out), "--out", str(tmp_path / "r")]) == 0
    report = capsys.readouterr().out
    assert report.count("\nSummary:\n") == 2, report
    one, two = report.index("Step at concurrency 1:"), report.index("Step at concurrency 2:")
    assert report.index("Sweep by concurrency") < one < two

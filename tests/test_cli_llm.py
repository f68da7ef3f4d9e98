"""``kfp-bench llm`` against the real local LLM server: its summary, its results file, its exit
codes, and bad input (one line, exit 2, nothing created)."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from kfp_bench.cli import main
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.stats import store
from kfp_bench.stats.llm import LlmStats
from tests.conftest import SIGINT_AT_START, interrupt_when, start_cli


@pytest.fixture(scope="module")
def llm():
    with start_llm_server(first_token_ms=30, token_gap_ms=5, max_tokens=8) as server:
        yield server


def test_a_load_prints_the_summary_and_saves_a_result_that_reads_back(llm, tmp_path, capsys):
    out = tmp_path / "new" / "r.json"
    code = main(
        [
            "llm", llm.url + "/openai", "-n", "12", "-c", "3", "--endpoint", "chat",
            "--output-tokens", "fixed:6", "--slo", "ttft=2s", "--json-out", str(out),
        ]
    )  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0, text
    assert "Requests:\t12 (12 completed, 0 failed)" in text and "TTFT:\t12\t" in text
    assert "Good:\t12 of 12" in text
    stats = store.load(out)
    assert isinstance(stats, LlmStats) and stats.summary().output_tokens == 12 * 6
    # the model was the one /v1/models lists; the prompts are described, never their text
    assert stats.options["model"] == llm.models()["data"][0]["id"]
    assert stats.options["prompts"] == {
        "input_tokens": "fixed:128", "output_tokens": "fixed:6", "count": 256, "seed": 0,
    }  # fmt: skip
    assert "headers" in stats.options and json.loads(out.read_text())["kind"] == "llm"


def test_a_load_whose_streams_all_failed_exits_1_with_its_errors(llm, capsys):
    code = main(["llm", llm.url + "/openai", "-n", "4", "-c", "2", "-H", "X-Llm-Fault: 429"])
    text = capsys.readouterr()
    assert code == 1
    assert "[429]\t4 responses" in text.out and "none-completed" in text.out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--slo", "ttft=soon"], "--slo 'ttft=soon'"),
        (["--input-tokens", "gauss:3"], "length distribution 'gauss:3'"),
        (["--prompts-file", "missing.jsonl"], "prompts file missing.jsonl: not found"),
        (["--endpoint", "embeddings"], "--endpoint: invalid choice"),
        (["-z", "2s", "--warmup", "2s"], "--warmup 2s: give a duration shorter than -z (2s)"),
        (["--stall-timeout", "-1"], "--stall-timeout -1.0"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_with_nothing_created(
    llm, tmp_path, capsys, args, message
):
    out = tmp_path / "never" / "r.json"
    code = main(["llm", llm.url + "/openai", "-n", "4", "-c", "2", "--json-out", str(out), *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not out.parent.exists()


def test_an_unreachable_server_without_model_names_the_url(tmp_path, capsys):
    code = main(["llm", "http://127.0.0.1:9/openai", "-n", "1", "-c", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "http://127.0.0.1:9/openai/v1/models could not be read" in err
    assert "give --model" in err


def _completed(server) -> float:
    """Streams the server has completed so far (vLLM's ``vllm:request_success_total``)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(server.url + "/metrics", timeout=5) as resp:
        lines = resp.read().decode().splitlines()
    return sum(
        float(x.rsplit(" ", 1)[1]) for x in lines if x.startswith("vllm:request_success_total{")
    )


@pytest.mark.parametrize("sigint", SIGINT_AT_START)
def test_ctrl_c_mid_load_prints_and_saves_what_was_measured(llm, tmp_path, sigint):
    """SIGINT once streams completed, whether the command started with SIGINT's default or with
    it ignored (a background command of a script): exit 130, the summary, the result saved."""
    out = tmp_path / "r.json"
    before = _completed(llm)
    proc = start_cli(
        "llm", llm.url + "/openai", "-z", "60s", "-c", "2", "--json-out", str(out), sigint=sigint
    )
    stdout, stderr = interrupt_when(
        proc, lambda: _completed(llm) >= before + 10, "completed streams", wait_s=30, timeout=30
    )
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "Requests:\t" in stdout and "TTFT:\t" in stdout
    stats = store.load(out)
    assert "interrupted" in stats.flags and stats.summary().completed >= 10
    assert sorted(tmp_path.iterdir()) == [out]


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    """A server whose model's context is 100 tokens, with a truth log of what it was sent."""
    log = tmp_path_factory.mktemp("short") / "truth.jsonl"
    with start_llm_server(
        first_token_ms=5, token_gap_ms=1, max_tokens=8, max_model_len=100, truth_log=log
    ) as server:
        yield server


def test_a_model_or_context_the_server_refuses_exits_2_before_any_request(short, capsys):
    base = ["llm", short.url + "/openai", "-z", "30s", "-c", "2", "--output-tokens", "fixed:8"]
    code = main([*base, "--model", "llama", "--input-tokens", "fixed:10"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--model llama: not among the models" in err and "(kfp-bench-llm)" in err
    code = main([*base, "--input-tokens", "uniform:50,120"])
    err = capsys.readouterr().err
    assert code == 2 and "beyond the 100 tokens of model kfp-bench-llm's context" in err
    code = main([*base, "--sweep-concurrency", "1,2", "--input-tokens", "fixed:95"])
    err = capsys.readouterr().err  # a sweep's too
    assert code == 2 and "needs 103 tokens (95 in the prompt + max_tokens 8)" in err
    assert short.truth().requests == {}  # nothing was streamed (any model is streamed here)


def test_without_the_check_the_servers_refusals_are_one_error_line(short, capsys):
    code = main(
        [
            "llm", short.url + "/openai", "-n", "40", "-c", "4", "--model", "kfp-bench-llm",
            "--no-model-check", "--input-tokens", "uniform:60,120", "--output-tokens", "fixed:8",
        ]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert "warning: --model kfp-bench-llm not checked against the server's /v1/models" in err
    refused = int(re.search(r"\[400\]\t(\d+) responses", out).group(1))
    errors = out.split("Error distribution:\n")[1].split("\n\n")[0].splitlines()
    assert code == 0 and refused > 2, out  # some prompts fit: their streams completed
    assert errors == [errors[0]] and errors[0].startswith(f"  [{refused}]\thttp 400: "), out
    assert "maximum context length is 100 tokens" in errors[0] and "more like it)" in errors[0]

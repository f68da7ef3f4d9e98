"""bench/llm_peers.py's own logic, with no peer installed: the tokenizer it hands the peers, the
pairing of a tool's requests with the server's truth log, the scheduling lag, the figures of a
case, and the skip of a peer that is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    path = ROOT / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up; llm_peers imports the others
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def bench():
    names = ("llm_truth", "llm_peer_tools", "llm_peers")
    mods = [_load(n) for n in names]
    yield mods
    for n in names:
        sys.modules.pop(n, None)


def _req(arrived: float, first: float, gap: float = 0.02, n: int = 4, outcome: str = "ok"):
    tokens = [arrived + first + i * gap for i in range(n)]
    return {"arrived": arrived, "tokens": tokens, "outcome": outcome, "completion_tokens": n}


def test_tokenizer_counts_prompt_words_and_server_tokens(bench, tmp_path):
    truth, _, _ = bench
    from tokenizers import Tokenizer

    from kfp_bench.load.prompts import Dist, synthetic

    folder = truth.build_tokenizer(tmp_path / "tok")
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    prompt = synthetic(1, Dist.parse("fixed:32"), Dist.parse("fixed:64"), 0)[0]
    enc = tok.encode(prompt.text)
    assert len(enc.ids) == 32 and "[UNK]" not in enc.tokens
    # the server's tokens: "t0", " t1", ... joined; a tool that re-tokenizes the text gets 64
    text = "".join(["t0"] + [f" t{i}" for i in range(1, 64)])
    server = tok.encode(text)
    assert len(server.ids) == 64 and "[UNK]" not in server.tokens
    config = json.loads((folder / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert config["eos_token"] in tok.get_vocab()
    assert {"special_tokens_map.json", "config.json"} <= {p.name for p in folder.iterdir()}


def test_pair_uses_arrival_and_first_token(bench):
    truth, _, _ = bench
    # two requests sent 0.1 ms apart arrive in the other order: pairing by order would give
    # each the other's truth (errors of about 30 ms); the first tokens tell them apart
    a = _req(10.0003, 0.200)
    b = _req(10.0002, 0.230)
    late = _req(20.0, 0.200)
    tool = [(10.0001, 0.2305), (10.0000, 0.2008), (30.0, 0.2)]
    errors, unpaired = truth.pair(tool, [late, b, a])
    assert unpaired == 1  # nothing arrived within 50 ms of 30.0
    assert sorted(round(e * 1e4, 3) for e in errors) == [5.0, 8.0]  # 0.5 ms, 0.8 ms
    # an arrival before the send (beyond the 1 ms allowed) is never a partner
    assert truth.pair([(10.01, 0.2)], [_req(10.0, 0.2)]) == ([], 1)


def test_sched_lag_against_a_constant_schedule(bench):
    truth, _, _ = bench
    arrivals = [100.0 + i / 8 for i in range(8)]
    arrivals[3] += 0.004
    lag = truth.sched_lag(list(reversed(arrivals)), 8.0)  # any order: sorted first
    assert [round(x * 1e3, 6) for x in lag] == [0, 0, 0, 4.0, 0, 0, 0, 0]
    assert truth.sched_lag([], 8.0) == []
    assert truth.quantile([3, 1, 2, 4], 0.5) == 2 and truth.quantile([1, 2], 0.99) == 2


def test_figures_of_a_rate_case_count_every_arrival(bench):
    truth, tools, peers = bench
    # request 2 was cut at the run's end (outcome client-gone): it still holds its slot in the
    # schedule, or every later arrival would look a gap late
    reqs = {str(i): _req(50.0 + i / 8, 0.2) for i in range(6)}
    reqs["2"]["outcome"] = "client-gone"
    log = type("Log", (), {"requests": reqs, "header": {}})()
    ok = truth.ok_requests(reqs)
    assert len(ok) == 5
    run = {"cpu_s": 0.64, "rss_mb": 40e6 / 1e6}
    line = [(49.0, 0.9), (50.1, 1.0), (50.8, 1.1), (51.3, 1.2)]  # CPU samples (perf_counter, s)
    out = peers.figures("rate8", tools.Seen(requests=5), ok, log, run, line)
    assert out["lag_truth_ms"]["p99"] == 0.0
    assert out["streamed_tokens"] == 20 and out["cpu_us_per_token"] == 32000.0
    # streaming CPU: the samples inside first arrival .. last token, per token sent in that window
    assert out["cpu_us_per_token_streaming"] == round(0.1 / 24 * 1e6, 1)


def test_figures_of_a_concurrency_case_pair_or_compare(bench):
    truth, tools, peers = bench
    reqs = {str(i): _req(1.0 + i * 0.01, 0.2 + i * 0.001, n=3) for i in range(4)}
    log = type("Log", (), {"requests": reqs, "header": {}})()
    ok = truth.ok_requests(reqs)
    run = {"cpu_s": 0.1, "rss_mb": 10.0}
    sends = [(r["arrived"] - 0.0001, r["tokens"][0] - r["arrived"] + 0.001) for r in ok]
    paired = peers.figures("c16", tools.Seen(sends=sends, itls=[0.02] * 8), ok, log, run, [])
    assert paired["ttft_err"]["how"] == "paired" and paired["ttft_err"]["p99"] == 1.0
    assert paired["itl"]["samples"] == 8 and paired["itl"]["truth_gaps"] == 8
    # percentiles only (kfp-bench's HDR histograms): the tool's p50 minus the truth's
    own = tools.Seen(ttft_ms={"p50": 202.5, "p99": 205.0}, itl_ms={"p50": 20.0, "p99": 20.3})
    dist = peers.figures("c16", own, ok, log, run, [])
    assert dist["ttft_err"]["how"] == "tool's own percentiles"
    assert dist["ttft_err"]["p50"] == pytest.approx(1.5) and dist["itl"]["p99"] == 0.3


def test_a_missing_peer_is_skipped_with_its_install_command(bench, tmp_path, monkeypatch):
    _, tools, peers = bench

    class Absent(tools.Peer):
        name = "absent"

        def exe(self):
            return tmp_path / "no" / "bin" / "absent"

        def install_commands(self):
            return [["python", "-m", "venv", str(tmp_path / "no")], ["pip", "install", "absent==1"]]

    monkeypatch.setattr(tools, "PEERS", {"absent": Absent()})
    chosen, skipped = peers.select("absent,nosuch", install=False)
    assert chosen == []
    assert "pass --install" in skipped["absent"] and "pip install absent==1" in skipped["absent"]
    assert skipped["nosuch"].startswith("unknown")


def test_kfp_bench_rows_pair_by_request_id_with_both_legs(bench):
    _, _, peers = bench
    # ids as kfp-bench sends them (X-Request-Id: <source>-<seq>) and the server logs them
    requests = {
        "kfpb-1-0": _req(5.0005, 0.2),  # sent at 5.0: 0.5 ms to arrive, first read 1 ms late
        "kfpb-1-1": _req(5.0002, 0.2, outcome="client-gone"),  # cut: not a completed request
    }
    seen = {"kfpb-1-0": (5.0, 5.2015), "kfpb-1-1": (5.0, 5.2003), "kfpb-1-9": (6.0, 6.2)}
    out = peers.by_id(seen, requests)
    assert out["paired"] == 1
    assert out["p50"] == pytest.approx(1.5) and out["signed_p50"] == pytest.approx(1.5)
    assert out["send_leg_ms"]["p50"] == pytest.approx(0.5)
    assert out["receive_leg_ms"]["p50"] == pytest.approx(1.0)

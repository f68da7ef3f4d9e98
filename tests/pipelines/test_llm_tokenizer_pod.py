"""The LLM load step of compiled/kfp_bench.yaml counts tokens with llm_tokenizer in a pod's
environment: its executor, as compiled, run alone with kfp.local in a fresh virtual environment
holding only what the step's own ``pip install`` lines install (``kfp_bench.sandbox.pods``),
against the local LLM server streaming no usage (as KServe's huggingfaceserver does), the
tokenizer.json fetched by the step from a loopback HTTP server. Real parts only."""

# (no "from __future__ import annotations": KFP reads the components' annotations as types)
import functools
import hashlib
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import tokenizers
import yaml
from kfp import components

from kfp_bench.load.tokenizer import count_tokens
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.sandbox.pods import as_pods
from kfp_bench.stats import store
from kfp_bench.steps.bundled import compiled_file
from kfp_bench.steps.llm_params import llm_prompts
from kfp_bench.steps.params import BenchParams

pytestmark = pytest.mark.slow
DATA = Path(__file__).resolve().parents[1] / "data" / "llm_streams"
STEP = "llm-load"


def one_step(spec: dict, name: str) -> dict:
    """A pipeline of the compiled pipeline ``spec``'s task ``name`` alone: its component and
    executor as compiled (install lines, image, command), its inputs the pipeline's."""
    comp = spec["components"][f"comp-{name}"]
    inputs = comp["inputDefinitions"]["parameters"]
    task = {
        "componentRef": {"name": f"comp-{name}"},
        "inputs": {"parameters": {k: {"componentInputParameter": k} for k in inputs}},
        "taskInfo": {"name": name},
    }
    executor = comp["executorLabel"]
    return {
        "components": {f"comp-{name}": comp},
        "deploymentSpec": {"executors": {executor: spec["deploymentSpec"]["executors"][executor]}},
        "pipelineInfo": {"name": f"one-{name}"},
        "root": {
            "dag": {"tasks": {name: task}},
            "inputDefinitions": {
                "parameters": {k: {"parameterType": v["parameterType"]} for k, v in inputs.items()}
            },
        },
        "schemaVersion": spec["schemaVersion"],
        "sdkVersion": spec["sdkVersion"],
    }


@pytest.fixture
def tokenizer_url():
    """DATA served over loopback, as a model's files are from a bucket or a hub."""
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(DATA))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/tokenizer.json"
    finally:
        server.shutdown()
        server.server_close()


def test_the_llm_load_step_counts_tokens_with_llm_tokenizer(
    wheels, mounted, tmp_path, tokenizer_url
):
    spec = next(yaml.safe_load_all(compiled_file("kfp_bench").read_text()))
    script = spec["deploymentSpec"]["executors"]["exec-llm-load"]["container"]["command"][2]
    assert "[llm,load]" in script  # the step installs the llm extra beside the load engine
    step = components.load_component_from_text(yaml.safe_dump(one_step(spec, STEP)))
    p = BenchParams(
        run_load=False, run_llm=True, llm_duration_sec=1.0, llm_concurrency=2,
        llm_input_tokens="fixed:12", llm_output_tokens="fixed:4", llm_tokenizer=tokenizer_url,
    )  # fmt: skip
    root = tmp_path / "root"
    truth_log = tmp_path / "truth.jsonl"
    with start_llm_server(first_token_ms=5, token_gap_ms=2, fault="no-usage",
                          truth_log=truth_log) as llm:  # fmt: skip
        params = {**p.as_dict(), "llm_url": llm.url + "/openai", "llm_model": "kfp-bench-llm"}
        with as_pods(wheels, root, mounted):
            step(params=params, worker=0)
        (result,) = root.glob(f"one-{STEP}-*/{STEP}/result")
        error = json.loads(result.read_text()).get("error")  # the worker's, had it failed
        assert not error, error
        s = store.load(result).summary()
        assert s.completed > 0
        truth = llm.truth(count=s.completed)
    # No usage came: the step counted every completed request's prompt and answer with the
    # tokenizer it fetched, as a server running that model would count them.
    assert s.tokens["tokenized_input"] == s.tokens["tokenized_output"] == s.completed
    tok = tokenizers.Tokenizer.from_file(str(DATA / "tokenizer.json"))
    texts = {hashlib.sha256(q.text.encode()).hexdigest(): q.text for q in llm_prompts(p, 0)}
    done = [r for r in truth.requests.values() if r["outcome"] == "ok"]
    assert len(done) == s.completed
    assert s.input_tokens == sum(count_tokens(tok, texts[r["prompt_sha256"]], True) for r in done)
    assert s.input_tokens != 12 * s.completed  # not the words the prompts were drawn in

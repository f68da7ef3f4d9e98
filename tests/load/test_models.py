"""The checks before an LLM load (``load.models``): against the real local LLM server (its model
list, its max_model_len and its 400 beyond it), the real KServe ModelServer's V1 list at its root,
and loopback peers answering what no server here answers (an HTML page, an entry without an id,
the headers the check sends)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.load.models import preflight
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.prompts import Prompt
from kfp_bench.sandbox.llm_server import start_llm_server
from tests.loopback import Handler, serving

LIMIT = 100


@pytest.fixture(scope="module")
def llm():
    with start_llm_server(first_token_ms=5, token_gap_ms=1, max_model_len=LIMIT) as server:
        yield server


def _opts(url: str, model: str = "kfp-bench-llm", **kw) -> LlmOptions:
    return LlmOptions(url=url, model=model, requests=1, concurrency=1, **kw).validate()


def _prompts(*words: int, out: int = 8) -> list[Prompt]:
    return [Prompt(" ".join(["word"] * n), n, out) for n in words]


def test_a_listed_model_passes_and_its_context_is_read(llm):
    found = preflight(_opts(llm.url + "/openai"), _prompts(10, 20), model_given=True)
    assert found.served.name == "kfp-bench-llm" and found.served.max_model_len == LIMIT
    assert found.opts.model == "kfp-bench-llm" and not found.note
    # not given: the one model listed
    taken = preflight(_opts(llm.url + "/openai", "(unset)"), _prompts(10), model_given=False)
    assert taken.opts.model == "kfp-bench-llm"


def test_a_model_the_server_does_not_list_is_refused_naming_those_it_does(llm):
    with pytest.raises(ConfigError) as e:
        preflight(_opts(llm.url + "/openai", "llama"), _prompts(10), model_given=True)
    msg = str(e.value)
    assert msg.startswith("--model llama: not among the models ")
    assert f"{llm.url}/openai/v1/models lists (kfp-bench-llm); give one of them" in msg
    assert "--no-model-check" in msg
    # a pipeline step names its parameter, and has no switch to skip the check
    with pytest.raises(ConfigError) as e:
        opts = _opts(llm.url + "/openai", "llama")
        preflight(opts, _prompts(10), model_given=True, flag="llm_model")
    assert str(e.value).startswith("llm_model llama: ") and "--no-model-check" not in str(e.value)


def test_a_wrong_base_names_the_url_the_status_and_the_first_bytes(llm):
    with pytest.raises(ConfigError) as e:
        preflight(_opts(llm.url + "/v2"), _prompts(10), model_given=True)
    msg = str(e.value)
    assert f'{llm.url}/v2/v1/models answered HTTP 404, starting \'{{"error"' in msg
    assert "check the URL (the base, without /v1" in msg and "KeyError" not in msg


def test_the_longest_prompt_beyond_max_model_len_is_refused_and_the_server_agrees(llm):
    prompts = _prompts(10, 95, 40)  # 95 words + max_tokens 8 = 103 > 100
    with pytest.raises(ConfigError) as e:
        preflight(_opts(llm.url + "/openai"), prompts, model_given=True)
    msg = str(e.value)
    assert "the longest prompt (2 of 3) needs 103 tokens (95 in the prompt + max_tokens 8)" in msg
    assert f"beyond the {LIMIT} tokens of model kfp-bench-llm's context" in msg
    assert "1 prompt(s) exceed it" in msg
    # --max-tokens replaces each prompt's own: 40 + 70 > 100 too
    with pytest.raises(ConfigError, match=r"needs 165 tokens \(95 in the prompt \+ max_tokens 70"):
        preflight(_opts(llm.url + "/openai", max_tokens=70), prompts, model_given=True)
    fits = preflight(_opts(llm.url + "/openai"), _prompts(92), model_given=True)
    assert fits.served.max_model_len == LIMIT
    # the check is the server's own rule: the longest request is refused there (400, vLLM's
    # words), the one that fits is served
    assert _post(llm.url, prompts[1].text, 8)[0] == 400
    assert (
        "you requested 103 tokens (95 in the messages, 8 in the completion)"
        in _post(llm.url, prompts[1].text, 8)[1]
    )
    assert _post(llm.url, "word " * 92, 8)[0] == 200


def _post(url: str, prompt: str, max_tokens: int) -> tuple[int, str]:
    body = json.dumps({"model": "kfp-bench-llm", "prompt": prompt, "max_tokens": max_tokens})
    req = urllib.request.Request(url + "/v1/completions", body.encode(), method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_skipped_on_request_without_any_request_and_said_so():
    """Port 9 listens to nothing: a request would fail; the skipped check sends none."""
    found = preflight(_opts("http://127.0.0.1:9/openai", "m"), [], model_given=True, check=False)
    assert found.served is None and found.opts.model == "m"
    assert found.note == "--model m not checked against the server's /v1/models (as asked)"
    with pytest.raises(ConfigError, match=r"could not be read .*that the server is up"):
        preflight(_opts("http://127.0.0.1:9/openai", "m"), [], model_given=True)


def test_kserves_v1_list_at_the_root_names_the_openai_base(model_server):
    """The real KServe ModelServer answers ``{"models": ["iris"]}`` at its root's /v1/models."""
    with pytest.raises(ConfigError) as e:
        preflight(_opts(model_server.url, "iris"), [], model_given=True)
    msg = str(e.value)
    assert "answered KServe's V1 model list (models: iris), not the OpenAI one" in msg
    assert f"use {model_server.url}/openai as the URL" in msg
    assert "'data'" not in msg


class _Page(Handler):
    seen: list = []

    def do_GET(self):
        _Page.seen.append((self.path, dict(self.headers)))
        if self.path.startswith("/html"):
            self.send(200, b"<html><body>Sign in</body></html>", "text/html")
        elif self.path.startswith("/noid"):
            self.send(200, {"object": "list", "data": [{"name": "m"}]})
        else:
            self.send(200, {"data": [{"id": "m", "max_model_len": True}]})


def test_an_answer_that_is_no_model_list_is_named_never_a_key_error():
    with serving(_Page) as url:
        with pytest.raises(ConfigError) as e:
            preflight(_opts(url + "/html"), [], model_given=True)
        assert f"{url}/html/v1/models answered HTTP 200, starting '<html><body>Sign in" in str(
            e.value
        )
        with pytest.raises(ConfigError, match=r"an entry of its model list has no id"):
            preflight(_opts(url + "/noid"), [], model_given=True)


def test_the_check_sends_what_the_load_sends_and_ignores_a_non_integer_context():
    """Host, -H headers and URL credentials reach /v1/models as they reach the completions."""
    _Page.seen.clear()
    with serving(_Page) as url:
        base = url.replace("http://", "http://user:pw@") + "/ok"
        opts = _opts(base, "m", host="llm.example.com", headers=("X-Team: a",))
        found = preflight(opts, _prompts(5000), model_given=True)  # True is not a length
    assert found.served.max_model_len is None
    path, headers = _Page.seen[-1]
    assert path == "/ok/v1/models" and headers["Host"] == "llm.example.com"
    assert headers["X-Team"] == "a" and headers["Authorization"] == "Basic dXNlcjpwdw=="

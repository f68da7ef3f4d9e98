"""The driver's urllib3 client (kfp_bench.kfp.rest) sends what kfp-server-api's generated client
sent: for every call of ``KfpApi``, the method, path, query, headers and body a loopback server
receives are those of the generated method called as the driver called it before (the multipart
boundary aside). Error answers become the same records (texts, statuses, Retry-After), and the
request timeout holds for a fractional number of seconds too.

The generated client (kfp_server_api) is in the development environment, as a dependency of kfp;
the pipeline steps no longer install it."""

from __future__ import annotations

import http.server
import re
import socket
import threading

import kfp_server_api as ksa
import pytest
import urllib3

from kfp_bench.kfp.api import Backoff, KfpApi
from kfp_bench.kfp.auth import Auth
from tests.kfp.conftest import HELLO

TOKEN = "wire-token-51c9"


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request and answers it with ``answers[path]`` or an empty JSON object."""

    protocol_version = "HTTP/1.1"
    seen: list
    answers: dict

    def log_message(self, *a):
        pass

    def _any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        headers = [(k, v) for k, v in self.headers.items() if k != "Host"]
        boundary = re.search(r"boundary=(\S+)", self.headers.get("Content-Type") or "")
        if boundary:  # random per request
            b = boundary.group(1)
            body = body.replace(b.encode(), b"BOUNDARY")
            headers = [(k, v.replace(b, "BOUNDARY")) for k, v in headers]
        self.seen.append((self.command, self.path, headers, body))
        status, extra, out = self.answers.get(self.path.split("?")[0], (200, {}, b"{}"))
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_DELETE = _any


@pytest.fixture
def recorder():
    handler = type("R", (_Recorder,), {"seen": [], "answers": {}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    handler.url = f"http://127.0.0.1:{server.server_port}"
    yield handler
    server.shutdown()
    server.server_close()


def _generated(url: str, token: str):
    """The generated client as kfp_bench.kfp.api configured it before."""
    config = ksa.Configuration(host=url)
    config.connection_pool_maxsize = 8
    config.retries = urllib3.Retry(total=0, redirect=0, raise_on_redirect=False)
    config.api_key["authorization"] = token
    config.api_key_prefix["authorization"] = "Bearer"
    client = ksa.ApiClient(config)
    client.user_agent = "kfp-bench"
    return (ksa.RunServiceApi(client), ksa.PipelineServiceApi(client),
            ksa.PipelineUploadServiceApi(client), ksa.ExperimentServiceApi(client))  # fmt: skip


def _driver_calls(api: KfpApi) -> None:
    p, run = str(HELLO), {"display_name": "r 1", "experiment_id": "e1", "x": [1, 2.5, None, True]}
    api.upload_pipeline(p, "n a&me", "d é")
    api.upload_pipeline_version(p, "p/1", "v1", "desc")
    api.list_pipeline_versions("p/1", "tok", '{"predicates": []}')
    api.list_pipelines("pt")
    api.list_pipelines(shared=True)
    api.create_experiment("e1", "d1")
    api.list_experiments("t", 5)
    api.create_run(run)
    api.list_runs("e1", "pt", 3)
    api.get_run("r/1")
    api.terminate_run("r1")
    api.delete_run("r1")
    api.delete_pipeline_version("p1", "v 1")
    api.delete_pipeline("p1")
    api.delete_experiment("e1")
    api.preflight()


def _generated_calls(runs, pipelines, uploads, experiments) -> None:
    """The generated methods, with the arguments kfp_bench.kfp.api passed them before."""
    p, ns, kw = str(HELLO), "ns1", {"_preload_content": False, "_request_timeout": 30}
    run = {"display_name": "r 1", "experiment_id": "e1", "x": [1, 2.5, None, True]}
    uploads.upload_pipeline(p, name="n a&me", display_name="n a&me", description="d é",
                            namespace=ns, **kw)  # fmt: skip
    uploads.upload_pipeline_version(p, name="v1", display_name="v1", pipelineid="p/1",
                                    description="desc", **kw)  # fmt: skip
    pipelines.pipeline_service_list_pipeline_versions(
        "p/1", page_size=200, page_token="tok", filter='{"predicates": []}', **kw
    )
    pipelines.pipeline_service_list_pipelines(namespace=ns, page_size=200, page_token="pt", **kw)
    pipelines.pipeline_service_list_pipelines(namespace=None, page_size=200, **kw)
    experiments.experiment_service_create_experiment(
        {"display_name": "e1", "description": "d1", "namespace": ns}, **kw
    )
    experiments.experiment_service_list_experiments(namespace=ns, page_size=5, page_token="t", **kw)
    runs.run_service_create_run(run, **kw)
    runs.run_service_list_runs(experiment_id="e1", page_size=200, page_token="pt", **kw)
    runs.run_service_get_run("r/1", **kw)
    runs.run_service_terminate_run("r1", **kw)
    runs.run_service_delete_run("r1", **kw)
    pipelines.pipeline_service_delete_pipeline_version("p1", "v 1", **kw)
    pipelines.pipeline_service_delete_pipeline("p1", cascade=True, **kw)
    experiments.experiment_service_delete_experiment("e1", **kw)
    experiments.experiment_service_list_experiments(namespace=ns, page_size=1, **kw)


def test_every_call_is_the_generated_clients_request(recorder, tmp_path):
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    api = KfpApi(recorder.url, auth=Auth("token-file", str(token), "ns1"), retry=Backoff(0))
    _driver_calls(api)
    api.close()
    ours = list(recorder.seen)
    recorder.seen.clear()
    _generated_calls(*_generated(recorder.url, TOKEN))
    assert len(ours) == len(recorder.seen) == 16
    for mine, theirs in zip(ours, recorder.seen, strict=True):
        assert mine == theirs
    # what they were: the swagger's paths, the upload's form field, the token per call
    method, path, headers, body = ours[0]
    assert (method, path.split("?")[0]) == ("POST", "/apis/v2beta1/pipelines/upload")
    assert b'name="uploadfile"; filename="hello_world.yaml"' in body
    assert ("authorization", f"Bearer {TOKEN}") in headers
    assert ("User-Agent", "kfp-bench") in headers
    assert ours[13][:2] == ("DELETE", "/apis/v2beta1/pipelines/p1?cascade=True")


def test_error_answers_make_the_same_records(recorder):
    runs = "/apis/v2beta1/runs/"
    recorder.answers = {
        runs + "a": (404, {}, b'{"error": "x", "code": 5, "message": "Run a not\\n  found"}'),
        runs + "b": (503, {"Retry-After": "3"}, b'{"message": "busy"}'),
        runs + "c": (500, {}, b"plain text failure"),
        runs + "d": (502, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, b""),
        runs + "e": (429, {"retry-after": "1.5"}, b"[1, 2]"),
        runs + "f": (302, {"Location": runs + "g"}, b""),
        runs + "h": (200, {}, b"not json"),
    }
    api = KfpApi(recorder.url, retry=Backoff(retries=0))
    got = {}
    for r in "abcdefh":
        reply = api.get_run(r)
        got[r] = (reply.call.status, reply.call.outcome, reply.call.error, reply.retry_after)
    assert got == {
        "a": (404, "error", "HTTP 404 Not Found: Run a not found", None),
        "b": (503, "error", "HTTP 503 Service Unavailable: busy", 3.0),
        "c": (500, "error", "HTTP 500 Internal Server Error: plain text failure", None),
        "d": (502, "error", "HTTP 502 Bad Gateway", None),
        "e": (429, "error", "HTTP 429 Too Many Requests", 1.5),
        "f": (302, "error", "HTTP 302 Found", None),  # one request: the redirect not followed
        "h": (200, "error", "response is not JSON: Expecting value: line 1 column 1 (char 0)",
              None),
    }  # fmt: skip
    assert [p for _, p, _, _ in recorder.seen] == [runs + r for r in "abcdefh"]


def test_a_fractional_request_timeout_holds():
    """A server that accepts and never answers: the call fails after ``timeout`` seconds (the
    generated client took only a whole number of seconds and waited for ever on 0.5)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        reply = KfpApi(url, timeout=0.3, retry=Backoff(retries=0)).get_run("r1")
    assert reply.call.status == 0 and reply.call.error == "ReadTimeoutError: timed out"
    assert 0.3 <= reply.call.duration < 5


def test_the_transport_shows_no_credential(tmp_path):
    token = tmp_path / "token"
    token.write_text(TOKEN)
    transport = Auth("token-file", str(token)).configure("http://127.0.0.1:1")
    assert transport.authorization() == f"Bearer {TOKEN}"
    assert TOKEN not in repr(transport) and TOKEN not in str(transport)

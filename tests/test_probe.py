"""probe(): one request to each target before anything is created, against real local servers:
the sandbox model server, the fault server (its status= query and server-wide error modes), a
closed port, a loopback ingress that routes by Host, and the local KFP API."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.fault_server import start_fault_server
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.probe import REFUSED_FOR_S, TIMEOUT_S, probe, probe_llm


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_only(url: str, **kw) -> BenchParams:
    return BenchParams(run_benchmark=False, inference_url=url, **kw)


def runs_only(host: str) -> BenchParams:
    return BenchParams(run_load=False, kfp_host=host)


@pytest.fixture(scope="module")
def kfp_api():
    with start_kfp_server(port=0) as server:
        yield server


@pytest.fixture(scope="module")
def ingress():
    """An ingress gateway's behaviour: 404 unless the Host header names the service."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            ok = self.headers.get("Host") == "iris.example.com"
            self.send_response(200 if ok else 404)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1/models/iris:predict"
    server.shutdown()
    server.server_close()


def test_a_serving_model_passes(model_server):
    [line] = probe(load_only(model_server.v1_predict_url))
    assert "HTTP 200" in line


@pytest.mark.parametrize(
    "status, name, words",
    [
        (404, "inference_url", "no model there"),
        (401, "inference_url", "sends no credentials"),
        (403, "inference_url", "sends no credentials"),
        (400, "payload", "refuses the request body"),
        (405, "inference_url", "takes no POST"),
    ],
)
def test_an_unusable_answer_stops_naming_the_parameter(fault_server, status, name, words):
    with pytest.raises(ConfigError, match=f"pipeline parameter {name}=") as err:
        probe(load_only(f"{fault_server.url}/predict?status={status}"))
    assert words in str(err.value) and f"HTTP {status}" in str(err.value)


@pytest.mark.parametrize("status", [503, 502, 500, 429])
def test_a_server_fault_goes_on_and_says_so(fault_server, status):
    [line] = probe(load_only(f"{fault_server.url}/predict?status={status}"))
    assert f"HTTP {status}" in line and "not bad input" in line


def test_a_closed_port_stops_within_its_time_bound():
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="inference_url=.*connection refused"):
        probe(load_only(f"http://127.0.0.1:{closed_port()}/v1/models/iris:predict"))
    assert REFUSED_FOR_S <= time.monotonic() - t0 < REFUSED_FOR_S + TIMEOUT_S


def test_an_unknown_host_stops():
    with pytest.raises(ConfigError, match="inference_url=.*does not resolve"):
        probe(load_only("http://sklearn-iris-predictor.nowhere.invalid/v1/models/x:predict"))


def test_the_host_header_is_sent(ingress):
    assert "HTTP 200" in probe(load_only(ingress, host_header="iris.example.com"))[0]
    with pytest.raises(ConfigError, match="host_header names no service"):
        probe(load_only(ingress, host_header="other.example.com"))


def test_with_an_isvc_the_url_is_not_probed():
    p = load_only(f"http://127.0.0.1:{closed_port()}/", isvc={"name": "iris"})
    assert probe(p) == []


def test_the_kfp_api_passes(kfp_api):
    [line] = probe(runs_only(kfp_api.url))
    assert "healthz answered" in line and "2.17" in line


def test_a_closed_kfp_port_stops():
    with pytest.raises(ConfigError, match="kfp_host=.*connection refused"):
        probe(runs_only(f"http://127.0.0.1:{closed_port()}"))


def test_no_kfp_api_there_stops(model_server):
    with pytest.raises(ConfigError, match="kfp_host=.*HTTP 404.*no KFP 2.x API"):
        probe(runs_only(model_server.url))


def test_a_refusing_kfp_gateway_stops():
    with start_fault_server(error_rate=1.0, error_status=401) as gateway:
        with pytest.raises(ConfigError, match="kfp_host=.*HTTP 401.*token_secret"):
            probe(runs_only(gateway.url))


def test_something_else_than_kfp_stops(fault_server):
    with pytest.raises(ConfigError, match="kfp_host=.*no JSON"):
        probe(runs_only(fault_server.url))


SECRET = "s3cr3t-T0KEN-81f3a9"


@pytest.mark.parametrize(
    ("check", "params", "named"),
    [
        (probe, lambda url: load_only(url + "/v1/models/x:predict"), "inference_url='http://127"),
        (probe, runs_only, "kfp_host='http://127"),
        (probe_llm, lambda url: BenchParams(llm_url=url), "llm_url='http://127"),
    ],
    ids=["inference_url", "kfp_host", "llm_url"],
)
def test_a_refusal_never_shows_the_urls_userinfo(check, params, named):
    """A URL with credentials in it (user:password@) is refused without them: the target is
    named as the reports name it (kfp_bench.redact.public_url)."""
    url = f"http://alice:{SECRET}@127.0.0.1:{closed_port()}"
    with pytest.raises(ConfigError) as got:
        check(params(url))
    assert (
        named in str(got.value) and SECRET not in str(got.value) and "alice" not in str(got.value)
    )

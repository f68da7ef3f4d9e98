"""The sidecar route through Kubeflow's Istio mesh (kfp_bench.mesh), against loopback stand-ins:
a server that refuses as envoy's RBAC filter does, one that answers a plain 403, and one that
stands for pilot-agent's /quitquitquit. No Istio can run here; each stand-in answers as the cited
source does (status, headers, body), and no kinder."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest
import yaml

from kfp_bench.errors import ConfigError
from kfp_bench.mesh import QUIT_URL_ENV, end_sidecar, is_mesh_refusal
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.probe import probe, probe_llm


def _serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _answer(h: BaseHTTPRequestHandler, status: int, headers: dict, body: bytes) -> None:
    # send_response_only: no BaseHTTP "Server" header of its own
    h.send_response_only(status)
    for k, v in headers.items():
        h.send_header(k, v)
    h.send_header("content-length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


class _Envoy(BaseHTTPRequestHandler):
    """A predictor's inbound sidecar denying a caller: envoy's RBAC local reply, 403 with the
    body "RBAC: access denied" as text/plain (envoyproxy/envoy source/extensions/filters/http/
    rbac/rbac_filter.cc, decodeHeaders), the inbound server name istio-envoy (istio/istio
    86c9f01fd73, pilot/pkg/networking/util/proxy_headers.go:50)."""

    protocol_version = "HTTP/1.1"

    def _deny(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        headers = {
            "content-type": "text/plain",
            "date": self.date_time_string(),
            "server": "istio-envoy",
        }
        _answer(self, 403, headers, b"RBAC: access denied")

    do_GET = do_POST = _deny

    def log_message(self, *args):
        pass


class _Plain403(_Envoy):
    """A server's own refusal: 403 with a JSON body, as a model server or gateway answers."""

    def _deny(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _answer(self, 403, {"content-type": "application/json"}, b'{"error": "forbidden"}')

    do_GET = do_POST = _deny


@pytest.fixture(scope="module")
def envoy():
    server = _serve(_Envoy)
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture(scope="module")
def plain403():
    server = _serve(_Plain403)
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def _load(url: str, **kw) -> BenchParams:
    return BenchParams(run_benchmark=False, inference_url=url + "/v1/models/m:predict", **kw)


def test_envoys_refusal_names_mesh_route(envoy):
    with pytest.raises(ConfigError) as err:
        probe(_load(envoy))
    text = str(err.value)
    assert "RBAC: access denied" in text and "mesh_route=sidecar" in text
    assert "compiled/kfp_bench_mesh.yaml" in text and "credentials" not in text


def test_envoys_refusal_with_the_sidecar_route_names_the_policy(envoy):
    with pytest.raises(ConfigError, match="deploy/mesh/allow-load.yaml"):
        probe(_load(envoy, mesh_route="sidecar"))


def test_a_plain_403_is_about_credentials(plain403):
    with pytest.raises(ConfigError) as err:
        probe(_load(plain403))
    assert "credentials refused" in str(err.value) and "mesh_route" not in str(err.value)


def test_the_llm_probe_tells_the_mesh_too(envoy, plain403):
    with pytest.raises(ConfigError, match="mesh_route=sidecar"):
        probe_llm(BenchParams(run_llm=True, llm_url=envoy + "/openai"))
    with pytest.raises(ConfigError) as err:
        probe_llm(BenchParams(run_llm=True, llm_url=plain403 + "/openai"))
    assert "mesh_route" not in str(err.value)


def test_only_envoys_body_is_a_mesh_refusal():
    assert is_mesh_refusal(403, b"RBAC: access denied")
    assert not is_mesh_refusal(403, b'{"error": "RBAC: access denied"}')
    assert not is_mesh_refusal(401, b"RBAC: access denied")


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"mesh_route": "ambient"}, "mesh_route"),
        ({"mesh_route": "sidecar", "inference_url": "https://m.example.com/v1"}, "inference_url"),
        ({"mesh_route": "sidecar", "inference_url": "http://m.ns:8080/v1"}, "inference_url"),
        (
            {"mesh_route": "sidecar", "run_llm": True, "llm_url": "http://vllm.ns:8000"},
            "llm_url",
        ),
    ],
)
def test_the_route_and_its_urls_are_checked(kw, name):
    with pytest.raises(ConfigError, match=f"pipeline parameter {name}="):
        BenchParams(run_benchmark=False, **kw).check(fetch=False)


def test_the_sidecar_route_takes_an_isvc_or_a_port_80_url():
    BenchParams(run_benchmark=False, mesh_route="sidecar").check(fetch=False)


class _PilotAgent(BaseHTTPRequestHandler):
    """pilot-agent's /quitquitquit: POST only (405 otherwise), then 200 "OK" (istio/istio
    86c9f01fd73, pilot/cmd/pilot-agent/status/server.go:1056-1071). Records when it was told."""

    protocol_version = "HTTP/1.1"
    quits: list = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/quitquitquit":
            return _answer(self, 404, {}, b"")
        self.quits.append((time.monotonic(), len(_Model.seen)))
        _answer(self, 200, {}, b"OK")

    def do_GET(self):
        _answer(self, 405, {}, b"Method Not Allowed\n")

    def log_message(self, *args):
        pass


class _Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.seen.append(time.monotonic())
        _answer(self, 200, {"content-type": "application/json"}, b'{"predictions": [1]}')

    def log_message(self, *args):
        pass


@pytest.fixture()
def pilot_agent(monkeypatch):
    _PilotAgent.quits.clear()
    _Model.seen.clear()
    agent, model = _serve(_PilotAgent), _serve(_Model)
    monkeypatch.setenv(QUIT_URL_ENV, f"http://127.0.0.1:{agent.server_port}/quitquitquit")
    yield SimpleNamespace(model=f"http://127.0.0.1:{model.server_port}/v1/models/m:predict")
    agent.shutdown()
    model.shutdown()


def _run_load_step(url: str, route: str, tmp_path) -> None:
    """The inference_load component's own function, as its pod runs it."""
    from kfp_bench.components.inference_load import inference_load

    params = BenchParams(run_benchmark=False, inference_url=url, duration_sec=0.5)
    params = {**params.as_dict(), "mesh_route": route}  # a route the check would not take here
    inference_load.func(params=params, worker=0, result=SimpleNamespace(path=str(tmp_path / "r")))


def test_the_load_step_ends_its_sidecar_after_the_load(pilot_agent, tmp_path, capsys):
    _run_load_step(pilot_agent.model, "sidecar", tmp_path)
    assert len(_PilotAgent.quits) == 1
    told_at, seen_then = _PilotAgent.quits[0]
    assert seen_then == len(_Model.seen) > 0, "told to quit before the load ended"
    assert told_at > max(_Model.seen)
    assert "sidecar told to quit" in capsys.readouterr().out


def test_without_the_route_no_sidecar_is_ended(pilot_agent, tmp_path):
    _run_load_step(pilot_agent.model, "none", tmp_path)
    assert _PilotAgent.quits == [] and _Model.seen


def test_an_absent_pilot_agent_is_a_warning(pilot_agent, tmp_path, capsys, monkeypatch):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv(QUIT_URL_ENV, f"http://127.0.0.1:{port}/quitquitquit")
    _run_load_step(pilot_agent.model, "sidecar", tmp_path)  # no exception
    assert (tmp_path / "r").exists()
    assert "warning: mesh_route=sidecar: could not end the sidecar" in capsys.readouterr().out


def test_a_refusing_pilot_agent_is_a_warning(pilot_agent):
    line = end_sidecar("sidecar", url=f"{_url_of_agent()}/not-quit")
    assert line.startswith("warning:") and "HTTP 404" in line


def _url_of_agent() -> str:
    import os

    return os.environ[QUIT_URL_ENV].rsplit("/", 1)[0]


# -- what the compiled pipelines carry, read from compiled/ ------------------------------------
COMPILED = Path(__file__).resolve().parent.parent / "compiled"
DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
_MESH_STEPS = {"exec-check-params", "exec-rate-sweep", "exec-inference-load", "exec-llm-load"}


def _compiled(name: str):
    spec, platform = yaml.safe_load_all((COMPILED / f"{name}.yaml").read_text())
    executors = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    route = spec["root"]["inputDefinitions"]["parameters"]["mesh_route"]["defaultValue"]
    return route, {k: v.get("podMetadata", {}) for k, v in executors.items()}


def test_the_mesh_pipeline_puts_its_load_pods_in_the_mesh():
    route, pods = _compiled("kfp_bench_mesh")
    assert route == "sidecar"
    for step in _MESH_STEPS:
        meta = pods[step]
        assert meta["labels"]["sidecar.istio.io/inject"] == "true", step
        notes = meta["annotations"]
        assert notes["traffic.sidecar.istio.io/includeOutboundPorts"] == "80", step
        assert json.loads(notes["proxy.istio.io/config"]) == {
            "holdApplicationUntilProxyStarts": True
        }
        assert json.loads(notes["workflows.argoproj.io/kill-cmd-istio-proxy"])[0] == "pilot-agent"
    others = [s for s, m in pods.items() if s not in _MESH_STEPS and "sidecar" in str(m)]
    assert others == [], "only the steps that send load join the mesh"


def test_the_default_pipeline_stays_out_of_the_mesh():
    route, pods = _compiled("kfp_bench")
    assert route == "none"
    assert not [s for s, m in pods.items() if "istio" in str(m)]


def _ap_schema(version: str) -> dict:
    crd = yaml.safe_load(
        (Path(__file__).parent / "data/istio_authorizationpolicies_crd.yaml").read_text()
    )
    (v,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    return _strict(v["schema"]["openAPIV3Schema"]["properties"]["spec"])


def _strict(schema):
    """No field the schema does not name, as the API server's strict field validation
    (kubectl apply --validate=strict) refuses it; a structural schema alone only prunes it."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        out.setdefault("additionalProperties", False)
    return out


def _policy() -> dict:
    (doc,) = yaml.safe_load_all((DEPLOY / "mesh/allow-load.yaml").read_text())
    return doc


def test_the_policy_validates_against_istios_crd():
    doc = _policy()
    assert doc["apiVersion"] == "security.istio.io/v1"
    jsonschema.validate(doc["spec"], _ap_schema("v1"))  # apiVersion, kind, metadata: the API's
    assert doc["spec"]["selector"]["matchLabels"] == {"serving.kserve.io/inferenceservice": "ISVC"}


def test_a_misspelt_policy_fails_the_schema():
    """The check has teeth: Istio's schema allows no unknown field in a rule's source."""
    doc = _policy()
    doc["spec"]["rules"][0]["from"][0]["source"]["namespace"] = ["PROFILE"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc["spec"], _ap_schema("v1"))

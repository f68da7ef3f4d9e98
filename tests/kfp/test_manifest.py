"""Manifests from a file, a loopback http.server (404, redirects, a redirect loop) and gs:// through
gcp-storage-emulator (a real GCS JSON API server): checked as pipeline specs before anything."""

from __future__ import annotations

import http.server
import threading

import pytest
from gcp_storage_emulator import server as emulator

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.manifest import load_manifest, parse_manifest
from tests.paths import PIPELINES

HELLO = PIPELINES / "hello_world.yaml"
ADD = PIPELINES / "add_numbers.yaml"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        routes = {
            "/hello.yaml": (200, HELLO.read_bytes()),
            "/html": (200, b"<html><body>Sign in</body></html>"),
        }
        if self.path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop2")
            self.end_headers()
            return
        if self.path == "/loop2":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.end_headers()
            return
        if self.path in ("/moved", "/signin"):
            target = "/hello.yaml" if self.path == "/moved" else "/html"
            self.send_response(301)
            self.send_header("Location", target)
            self.end_headers()
            return
        code, body = routes.get(self.path, (404, b"not found"))
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def web():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_file_is_parsed_with_its_parameters():
    m = load_manifest(str(ADD))
    assert m.name == "add-numbers"
    assert {p.name: (p.type, p.optional) for p in m.params.values()} == {
        "a": ("NUMBER_INTEGER", False),
        "b": ("NUMBER_INTEGER", False),
    }
    assert m.check_params({"a": 1, "b": 2}) == {"a": 1, "b": 2}


@pytest.mark.parametrize(
    "values, words",
    [
        ({"a": 1, "b": 2, "c": 3}, "c not declared by pipeline 'add-numbers'"),
        ({"a": 1}, "requires b"),
        ({"a": "x", "b": 1}, "does not fit its declared type NUMBER_INTEGER"),
        ({"a": True, "b": 1}, "does not fit"),
    ],
)
def test_params_are_checked_against_the_declaration(values, words):
    with pytest.raises(ConfigError, match=words):
        load_manifest(str(ADD)).check_params(values)


@pytest.mark.parametrize(
    "text, words",
    [
        (b"a: [1, 2\n", "not YAML at line 2"),
        (b"just text\n", "not a pipeline spec"),
        (b"name: x\nimplementation:\n  container: {image: a}\n", "a v1 component"),
        (b"pipelineInfo: {name: x}\nroot: {}\nbogus: 1\n", "not a valid pipeline spec"),
    ],
)
def test_not_a_pipeline_is_refused(text, words):
    with pytest.raises(ConfigError, match=words):
        parse_manifest(text, "m.yaml")


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: no such file"):
        load_manifest(str(tmp_path / "nope.yaml"))


def test_http_fetch_and_redirect(web):
    assert load_manifest(web + "/hello.yaml").name == "echo"
    m = load_manifest(web + "/moved")
    assert m.name == "echo" and m.redirects == (web + "/hello.yaml",)


def test_http_404(web):
    with pytest.raises(ConfigError, match="HTTP 404"):
        load_manifest(web + "/missing.yaml")


def test_http_redirect_loop(web):
    with pytest.raises(ConfigError, match="redirects in a loop"):
        load_manifest(web + "/loop")


def test_redirect_to_a_sign_in_page_is_explained(web):
    with pytest.raises(ConfigError, match="after a redirect to .*/html"):
        load_manifest(web + "/signin")


def test_storage_cloud_google_com_hint():
    with pytest.raises(ConfigError, match="gs://BUCKET/OBJECT"):
        parse_manifest(
            b"<html></html>",
            "https://storage.cloud.google.com/b/p.yaml",
            ("https://accounts.google.com/signin",),
        )


def test_unreachable_url():
    with pytest.raises(ConfigError, match="cannot reach it"):
        load_manifest("http://127.0.0.1:1/p.yaml", timeout=2)


@pytest.fixture
def gcs(monkeypatch):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = emulator.create_server("127.0.0.1", port, in_memory=True)
    server.start()
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{port}")
    from google.cloud import storage

    bucket = storage.Client(project="kfp-bench").create_bucket("kfp-bench-test")
    bucket.blob("p/hello.yaml").upload_from_filename(str(HELLO))
    yield "gs://kfp-bench-test"
    server.stop()


def test_gs_object(gcs):
    assert load_manifest(gcs + "/p/hello.yaml").name == "echo"


def test_gs_missing_object(gcs):
    with pytest.raises(ConfigError, match="no such object"):
        load_manifest(gcs + "/p/none.yaml")


def test_gs_needs_an_object():
    with pytest.raises(ConfigError, match="gs://BUCKET/OBJECT"):
        load_manifest("gs://bucket-only")


def test_write_to_names_a_yaml_file(tmp_path):
    path = load_manifest(str(HELLO)).write_to(tmp_path)
    assert path.suffix == ".yaml" and path.read_bytes() == HELLO.read_bytes()

"""A loopback Kubernetes API of ConfigMaps, for ``kfp-bench install`` (no cluster runs here).

The one mock of the install tests: the real kubernetes client talks to it through an ordinary
kubeconfig. It is as strict as the API server where the install depends on it: create answers
201 with the stored object, 409 AlreadyExists for a name that exists, 422 Invalid over 1 MiB
(apis/core/validation, ValidateConfigMap: keys and values together at most MaxSecretSize), 403
Forbidden in a namespace the user may not write; read answers 200 or 404; each with the API's
Status body.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

MAX_SIZE = 1024 * 1024


class _ConfigMaps(BaseHTTPRequestHandler):
    store: dict
    allowed: set

    def log_message(self, *args):
        pass

    def _status(self, code: int, reason: str, message: str) -> None:
        body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                "reason": reason, "code": code}  # fmt: skip
        self._send(code, body)

    def _send(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _ns(self) -> str:
        return self.path.split("?")[0].strip("/").split("/")[3]  # api v1 namespaces NS ...

    def do_POST(self):  # noqa: N802
        ns = self._ns()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        name = body["metadata"]["name"]
        if ns not in self.allowed:
            why = f'User "u" cannot create resource "configmaps" in the namespace "{ns}"'
            return self._status(403, "Forbidden", f"configmaps is forbidden: {why}")
        size = sum(len(k) + len(v) for k, v in (body.get("data") or {}).items())
        size += sum(len(k) + len(base64.b64decode(v)) for k, v in body["binaryData"].items())
        if size > MAX_SIZE:
            return self._status(422, "Invalid", f'ConfigMap "{name}" is invalid: []: Too long: '
                                f"must have at most {MAX_SIZE} bytes")  # fmt: skip
        if (ns, name) in self.store:
            return self._status(409, "AlreadyExists", f'configmaps "{name}" already exists')
        body["metadata"].update(uid="u-1", resourceVersion="1", namespace=ns)
        self.store[(ns, name)] = body
        self._send(201, body)

    def do_GET(self):  # noqa: N802
        ns, name = self._ns(), self.path.split("?")[0].rstrip("/").split("/")[-1]
        if (ns, name) not in self.store:
            return self._status(404, "NotFound", f'configmaps "{name}" not found')
        self._send(200, self.store[(ns, name)])


@contextlib.contextmanager
def config_map_api(folder: Path, allowed: set[str]):
    """Serve the API on loopback; yield its store ({(namespace, name): object}) and the path of
    a kubeconfig (in ``folder``) that points the client at it. ``allowed``: the namespaces the
    user may create ConfigMaps in."""
    handler = type("H", (_ConfigMaps,), {"store": {}, "allowed": set(allowed)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
        "users": [{"name": "u", "user": {"token": "t0ken-not-printed"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    }  # fmt: skip
    kubeconfig = Path(folder) / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    try:
        yield handler.store, str(kubeconfig)
    finally:
        server.shutdown()
        server.server_close()

"""Small JSON-over-HTTP calls and waits shared by the KFP server tests (real sockets, no mocks)."""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
import uuid

from tests.paths import PIPELINES

API = "/apis/v2beta1"
FINAL = {"SUCCEEDED", "FAILED", "CANCELED", "SKIPPED"}


def call(server, method: str, path: str, body=None, query: dict | None = None, timeout=10.0):
    """(status, parsed JSON body or text) of one request to ``server``."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        if query:
            path += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    ctype = resp.getheader("Content-Type", "")
    return resp.status, json.loads(raw) if "json" in ctype else raw.decode()


def upload(server, filename: str, name: str | None = None, path: str = "/pipelines/upload",
           query: dict | None = None, data: bytes | None = None):  # fmt: skip
    """Multipart upload of a reference pipeline (or ``data``) as kfp.Client sends it."""
    if data is None:
        data = (PIPELINES / filename).read_bytes()
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="uploadfile"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    q = dict(query or {})
    if name:
        q["name"] = name
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(
            "POST",
            f"{API}{path}?{urllib.parse.urlencode(q)}",
            body=body,
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def wait_run(server, run_id: str, states=FINAL, timeout: float = 60.0) -> dict:
    """The run once its state is in ``states``; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        status, run = call(server, "GET", f"{API}/runs/{run_id}")
        assert status == 200, run
        if run["state"] in states:
            return run
        assert time.monotonic() < deadline, f"run {run_id} still {run['state']} after {timeout}s"
        time.sleep(0.1)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def execution(run: dict) -> str:
    """The simulated-run marker: "simulated", "executed" or "queued"."""
    return run["plugins_output"]["kfp-bench"]["entries"]["execution"]["value"]

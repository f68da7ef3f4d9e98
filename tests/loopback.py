"""A small HTTP server on loopback for tests that need a peer answering as a real one does.

Real sockets, a thread per request; the handler says what the peer answers. Used where the peer
is a server that cannot run here (a KFP API answering as the Go server does) and its answers are
the thing under test.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator


class Handler(http.server.BaseHTTPRequestHandler):
    """A quiet handler with one way to answer: bytes, or a document sent as JSON."""

    def send(self, status: int, body: bytes | dict | list, ctype: str = "application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server of ``handler``, shut down and closed on exit."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

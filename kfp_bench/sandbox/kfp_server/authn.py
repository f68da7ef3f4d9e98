"""Bearer-token authentication of the local KFP API, as multi-user KFP asks for one.

With ``--token-file FILE`` every ``/apis/`` request but healthz must carry
``Authorization: Bearer <the token in FILE>``; any other is answered 401 UNAUTHENTICATED, as the
real API server answers a token its TokenReview refuses. The token is read once, from a file so
that it never shows in the server's command line, compared in constant time, and never written
to an answer, a log or ``/metrics``. ``/metrics`` and ``/__health`` stay open, as on a real
cluster, where Prometheus scrapes ml-pipeline:8888 without a token. aiohttp is imported only
when the server builds its app: the options import ``read_token`` to check the file early.
"""

from __future__ import annotations

import hmac
from pathlib import Path

from kfp_bench.errors import ConfigError

# Imports inside functions: callers of start_kfp_server import this module for read_token and need
# no aiohttp: it loads in the server's own process.

_OPEN = ("/apis/v2beta1/healthz",)


def read_token(path: str) -> bytes:
    """The token in ``path``, stripped; ``ConfigError`` naming the file if unreadable or empty."""
    try:
        token = Path(path).read_bytes().strip()
    except OSError as exc:
        raise ConfigError(
            f"kfp server: --token-file {path}: cannot read it ({exc.strerror}); give a file "
            "holding the bearer token to require"
        ) from None
    if not token:
        raise ConfigError(f"kfp server: --token-file {path}: the file is empty; write a token")
    return token


def token_middleware(token: bytes):
    """An aiohttp middleware that answers 401 unless the request carries ``token``."""
    from aiohttp import web

    from kfp_bench.sandbox.kfp_server.gateway import rpc_error

    expected = b"Bearer " + token

    @web.middleware
    async def require_token(request, handler):
        if not request.path.startswith("/apis/") or request.path in _OPEN:
            return await handler(request)
        given = request.headers.get("Authorization", "").strip().encode("latin-1", "replace")
        if not hmac.compare_digest(given, expected):
            what = "no bearer token" if not given else "a bearer token that is not accepted"
            return rpc_error(16, f"Unauthenticated: the request carried {what}")
        return await handler(request)

    return require_token

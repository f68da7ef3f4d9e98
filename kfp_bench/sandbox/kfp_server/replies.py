"""Reading JSON requests and writing JSON answers, google.rpc.Status errors and LIST pages.

This module owns the shape of every answer: a ``ValueError`` raised while handling becomes 400
INVALID_ARGUMENT, a ``LookupError`` 404 NOT_FOUND, both with the google.rpc.Status body
``{"code", "message", "details"}`` (``gateway.py``); a request no route takes, a body or query
parameter the gateway would not decode, are answered as KFP's grpc-gateway answers them. LIST
answers leave out an empty list and an empty next_page_token, as proto3 JSON does.
"""

from __future__ import annotations

import json
import logging

from aiohttp import web

from kfp_bench.sandbox.kfp_server import gateway, listing
from kfp_bench.sandbox.kfp_server.gateway import rpc_error
from kfp_bench.sandbox.kfp_server.store import LISTABLE

log = logging.getLogger("kfp_bench.kfp_server")


@web.middleware
async def errors_middleware(request: web.Request, handler):
    missed = request.match_info.http_exception
    if missed is not None and missed.status in (404, 405):
        return gateway.routing_error(request, missed.status)
    try:
        if request.path.startswith("/apis/"):
            gateway.check_query(request)
        return await handler(request)
    except gateway.DecodeError as e:
        return rpc_error(3, str(e), detail=False)
    except gateway.UserError as e:
        return gateway.user_error(e)
    except LookupError as e:
        return rpc_error(5, str(e).strip("'\""))
    except ValueError as e:
        return rpc_error(3, str(e))
    except web.HTTPException:
        raise
    except Exception as e:
        # A bug of ours, not the client's: say so in the answer and keep the trace in our log.
        log.exception("internal error on %s %s", request.method, request.path)
        return rpc_error(13, f"internal error: {type(e).__name__}: {e}")


async def json_body(request: web.Request, message: str) -> dict:
    """The body, decoded as the gateway decodes it into ``message`` (a kfp_server_api model
    name such as "V2beta1Run"): see ``gateway.decode_body``."""
    return await gateway.decode_body(request, message)


def ok(payload: dict) -> web.Response:
    return web.Response(text=json.dumps(payload), content_type="application/json")


def list_answer(name: str, rows: list, total: int, token: str) -> web.Response:
    out: dict = {"total_size": total}
    if rows:
        out[name] = [r.to_api() for r in rows]
    if token:
        out["next_page_token"] = token
    return ok(out)


def list_rows(request: web.Request, rows, fields, filter_text: str | None = None):
    """One page of ``rows`` (``listing.page``): (rows, total, next page token); a bad list
    request is wrapped in the words of the resource's LIST handler (``store.LISTABLE``).
    ``filter_text``: the filter to apply instead of the request's (pipelines take their tag
    predicates out first)."""
    q = request.query
    model, context = LISTABLE[id(fields)]
    try:
        return listing.page(
            rows,
            fields=fields,
            key=fields["id"],
            model=model,
            filter_text=q.get("filter") if filter_text is None else filter_text,
            sort_by=q.get("sort_by"),
            page_size=q.get("page_size"),
            page_token=q.get("page_token"),
        )
    except gateway.UserError as e:
        raise e.wrap(context) from None

"""The start mark of a load or LLM worker on the KFP API: how a retried worker knows it is one
on every KFP backend.

A worker's first attempt creates an experiment named for its benchmark and index
(``mark_name``); the retry of a worker whose pod died finds the name taken. KFP's experiment
names are unique per namespace (kubeflow/pipelines 7b70c7b95f backend/src/apiserver/model/
experiment.go:20-25, ``uniqueIndex:idx_name_namespace``), and a second create answers gRPC
AlreadyExists (storage/experiment_store.go:261-264, ``util.NewAlreadyExistError``), HTTP 409
through the gateway. ``KFP_RETRY_INDEX`` tells the same only from backend 2.17.0 (#13175), and an
Argo retry gets a fresh output path, so before 2.17.0 (Kubeflow 1.11 ships 2.16.0) this mark is
the only one a retry can see.

The description holds a random token of the attempt: a create whose answer was lost and that is
sent again answers 409 for the attempt's own mark, which the token tells apart. The mark is an
experiment with no runs, described "Created by kfp-bench", so the cleanup sweep deletes it with
its benchmark (``kfp_bench.kfp.cleanup``). Plain urllib: a worker's pod has the load extra only.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from urllib.parse import urlencode

from kfp_bench.kfp.auth import Auth
from kfp_bench.kfp.incluster import send
from kfp_bench.kfp.options import NAME_PREFIX

#: What a mark's description starts with: the cleanup sweep's own-description prefix.
MARK_DESC = "Created by kfp-bench: start mark of"
#: The kinds of worker that leave a mark; each its own name, so a load and an LLM worker of the
#: same index do not take each other for a retry.
KINDS = ("worker", "llm-worker")
#: Answers worth sending the create again: none at all (0), rate limited, a server-side failure.
_AGAIN = frozenset({0, 429, 500, 502, 503, 504})


def mark_name(benchmark_id: str, kind: str, worker: int) -> str:
    """``kfp-bench-<benchmark id>-<kind>-<worker>``, the experiment name of a worker's mark."""
    if kind not in KINDS:
        raise ValueError(f"mark kind {kind!r}: use one of {', '.join(KINDS)}")
    return f"{NAME_PREFIX}{benchmark_id}-{kind}-{int(worker)}"


def claim(
    host: str,
    auth: Auth,
    name: str,
    *,
    tries: int = 3,
    timeout: float = 30.0,
    sleep: Callable[[float], object] = time.sleep,
) -> tuple[bool | None, str]:
    """Create the mark ``name`` on the KFP API at ``host``.

    Returns (False, "") when this attempt made it (a first attempt); (True, why) when it was
    there already (a retry); (None, why) when the API could not tell (unreachable, refused).
    """
    token = secrets.token_hex(8)
    body = {"display_name": name, "description": f"{MARK_DESC} {name}, attempt {token}"}
    if auth.namespace:
        body["namespace"] = auth.namespace
    status, text = 0, ""
    for attempt in range(tries):
        if attempt:
            sleep(float(attempt))
        status, text = send(host, auth, "POST", "/apis/v2beta1/experiments", body, timeout)
        if status not in _AGAIN:
            break
    if 200 <= status <= 299:
        return False, ""
    if status != 409:
        return None, f"create experiment {name}: {_what(status, text)}"
    mine, created = _made_by(host, auth, name, token, timeout)
    if mine:  # an earlier send of this attempt made it, and its answer was lost
        return False, ""
    return True, f"its start mark, experiment {name}, exists (created {created or 'earlier'})"


def _made_by(host: str, auth: Auth, name: str, token: str, timeout: float) -> tuple[bool, str]:
    """Whether the experiment ``name`` holds ``token`` in its description, and when it was made;
    a LIST that fails: not this attempt's (a retry named lost is loud; one loading late is not)."""
    pred = {"key": "display_name", "operation": "EQUALS", "string_value": name}
    query = {"filter": json.dumps({"predicates": [pred]}), "page_size": 10}
    if auth.namespace:
        query["namespace"] = auth.namespace
    status, text = send(host, auth, "GET", f"/apis/v2beta1/experiments?{urlencode(query)}")
    if status != 200:
        return False, ""
    try:
        listed = json.loads(text).get("experiments") or ()
        found = [e for e in listed if e.get("display_name") == name]
    except (ValueError, AttributeError):
        return False, ""
    if not found:
        return False, ""
    return token in (found[0].get("description") or ""), found[0].get("created_at") or ""


def _what(status: int, text: str) -> str:
    return f"HTTP {status}: {text}" if status else f"no answer ({text})"

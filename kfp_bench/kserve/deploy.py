"""Deploy an InferenceService, wait until it is ready, delete it: each through ``kube.Kube``.

``deploy`` refuses a bad ``IsvcSpec`` before anything is created, creates the InferenceService,
and waits for its Ready condition. When it is not ready in time it deletes what it created and
raises ``NotReadyError`` naming the condition that failed (its reason and message, e.g.
PredictorReady False: RevisionMissing) and the fix. The module never prints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kfp_bench.errors import NotReadyError
from kfp_bench.kserve.kube import Kube
from kfp_bench.kserve.spec import IsvcSpec


@dataclass(frozen=True, slots=True)
class Deployed:
    """A ready InferenceService.

    Attributes:
        name: its name.
        namespace: its namespace.
        url: its in-cluster address (status.address.url), else its external status.url.
        predict_url: the URL a load POSTs to: V1 predict, or V2 infer for protocol v2.
        ready_s: seconds from create to Ready.
    """

    name: str
    namespace: str
    url: str
    predict_url: str
    ready_s: float


def deploy(
    kube: Kube, spec: IsvcSpec, *, timeout_s: float = 600.0, poll_s: float = 2.0
) -> Deployed:
    """Create the InferenceService of ``spec`` and wait until it is ready.

    Raises:
        ConfigError: a bad spec; nothing was created.
        KubeError: the API refused the create.
        NotReadyError: not ready within ``timeout_s``; it has been deleted.
    """
    isvc = spec.to_dict()  # validates first: a bad spec creates nothing
    start = time.monotonic()
    kube.create_isvc(isvc)
    try:
        doc = wait_ready(kube, spec.name, timeout_s=timeout_s, poll_s=poll_s)
    except BaseException:
        kube.delete_isvc(spec.name)
        raise
    status = doc.get("status") or {}
    url = ((status.get("address") or {}).get("url")) or status.get("url") or ""
    path = (
        f"/v2/models/{spec.name}/infer"
        if spec.protocol_version == "v2"
        else f"/v1/models/{spec.name}:predict"
    )
    return Deployed(spec.name, kube.namespace, url, url + path, time.monotonic() - start)


def wait_ready(kube: Kube, name: str, *, timeout_s: float, poll_s: float = 2.0) -> dict:
    """Poll the InferenceService until its Ready condition is True; return it.

    Raises:
        NotReadyError: not ready within ``timeout_s``, naming the failing condition.
    """
    deadline = time.monotonic() + timeout_s
    doc = None
    while True:
        doc = kube.get_isvc(name)
        if doc is not None and _condition(doc, "Ready").get("status") == "True":
            return doc
        if time.monotonic() >= deadline:
            raise NotReadyError(
                f"InferenceService {name} in namespace {kube.namespace} not ready after "
                f"{timeout_s:g}s: {failing_condition(doc)}; it was deleted. Check its events "
                f"(kubectl describe isvc {name}) or raise the readiness timeout"
            )
        time.sleep(poll_s)


def failing_condition(doc: dict | None) -> str:
    """The first condition that is not True, as "Type Status: Reason: message"."""
    if doc is None:
        return "it does not exist (was it deleted, or is the namespace wrong?)"
    conditions = (doc.get("status") or {}).get("conditions") or []
    bad = [c for c in conditions if c.get("status") != "True" and c.get("type") != "Ready"]
    bad = bad or [c for c in conditions if c.get("status") != "True"]
    if not bad:
        return "no status conditions yet (is the KServe controller running?)"
    c = bad[0]
    parts = [f"{c.get('type')} {c.get('status', 'Unknown')}", c.get("reason"), c.get("message")]
    return ": ".join(p for p in parts if p)


def delete(kube: Kube, name: str, *, wait_s: float = 0.0, poll_s: float = 2.0) -> bool:
    """Delete the InferenceService; with ``wait_s``, wait until it is gone. False when there was
    none."""
    found = kube.delete_isvc(name)
    deadline = time.monotonic() + wait_s
    while found and wait_s and time.monotonic() < deadline:
        if kube.get_isvc(name) is None:
            break
        time.sleep(poll_s)
    return found


def _condition(doc: dict, kind: str) -> dict:
    for c in (doc.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c
    return {}

"""Deploy an InferenceService, wait until it is ready, delete it: each through ``kube.Kube``.

With no deployment_mode in the spec, ``deploy`` learns the cluster's default first
(``mode.learn_mode``); when the ConfigMap cannot be read, from the created object (KServe's webhook
annotates a Standard default; its controller records the mode in the status), else it assumes
Serverless. It deletes only what it created (that object, by uid), and ``delete`` only an
InferenceService that carries the benchmark's label, and only the object it read. The module
never prints."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kfp_bench.errors import ConfigError, KubeError, NotOursError, NotReadyError
from kfp_bench.kserve.kube import CHANGED, GONE, Kube
from kfp_bench.kserve.mode import Mode, learn_mode, mode_of
from kfp_bench.kserve.spec import BENCHMARK_LABEL, SERVERLESS, IsvcSpec, benchmark_of

#: What ``delete`` did, as the cleanup step says it.
DELETED, NOT_FOUND, NOT_OURS = "deleted", "not found", "not ours: left alone"


@dataclass(frozen=True, slots=True)
class Deployed:
    """A ready InferenceService.

    Attributes:
        name: its name.
        namespace: its namespace.
        url: its in-cluster address (status.address.url), else its external status.url.
        predict_url: the URL a load POSTs to: V1 predict, or V2 infer for protocol v2.
        ready_s: seconds from create to Ready.
        mode: its deployment mode and where that was learnt.
    """

    name: str
    namespace: str
    url: str
    predict_url: str
    ready_s: float
    mode: Mode = field(default_factory=lambda: Mode(SERVERLESS))


def deploy(
    kube: Kube,
    spec: IsvcSpec,
    *,
    benchmark_id: str,
    timeout_s: float = 600.0,
    poll_s: float = 2.0,
) -> Deployed:
    """Create the InferenceService of ``spec``, labelled as the benchmark ``benchmark_id``'s, and
    wait until it is ready.

    Raises:
        ConfigError: a bad spec or benchmark id, or one the cluster's deployment mode cannot
            take; nothing was created (or, when the mode was learnt only from the created
            object, it was deleted).
        NotOursError: an InferenceService of that name exists; nothing was changed.
        KubeError: the API refused the create.
        NotReadyError: not ready within ``timeout_s``; it has been deleted.
    """
    spec.to_dict(benchmark_id=benchmark_id)  # validates first: a bad spec asks nothing
    mode = learn_mode(kube, spec)
    isvc = _checked(spec, mode, lambda: spec.to_dict(benchmark_id=benchmark_id, mode=mode.name))
    found = kube.get_isvc(spec.name)
    if found is not None:
        raise _taken(kube, spec.name, found, benchmark_id)
    start = time.monotonic()
    created = kube.create_isvc(isvc)
    if created is None:  # created by someone else since the GET: theirs, never to be deleted
        raise _taken(kube, spec.name, kube.get_isvc(spec.name), benchmark_id)
    uid = (created.get("metadata") or {}).get("uid", "")
    try:
        if not mode.name:
            mode = _learnt(spec, mode, created)
        doc = wait_ready(kube, spec.name, timeout_s=timeout_s, poll_s=poll_s)
        if not mode.name:
            mode = _learnt(spec, mode, doc, last=True)
    except BaseException:
        kube.delete_isvc(spec.name, uid=uid)  # the one created here, not a replacement
        raise
    status = doc.get("status") or {}
    url = ((status.get("address") or {}).get("url")) or status.get("url") or ""
    v2 = spec.protocol_version == "v2"
    path = f"/v2/models/{spec.name}/infer" if v2 else f"/v1/models/{spec.name}:predict"
    return Deployed(spec.name, kube.namespace, url, url + path, time.monotonic() - start, mode)


def _checked(spec: IsvcSpec, mode: Mode, build):
    """``build()``, its ``ConfigError`` (the spec does not suit ``mode``) naming the mode's
    source: a user who gave no deployment_mode learns where the HPA came from."""
    try:
        return build()
    except ConfigError as exc:
        if spec.deployment_mode or not mode.name:
            raise
        raise ConfigError(f"{exc} ({mode.name} is {mode.source})") from None


def _learnt(spec: IsvcSpec, unknown: Mode, isvc: dict, last: bool = False) -> Mode:
    """The mode ``isvc`` (created or ready) records, the spec checked against it (a
    ``ConfigError`` whose caller deletes what it created); when it records none and ``last``,
    Serverless assumed, with a warning (``Mode.assumed``)."""
    found = mode_of(isvc)
    if found is None:
        if not last:
            return unknown
        return unknown.assumed(
            "the InferenceService records no mode either, so Serverless is assumed; give isvc "
            "deployment_mode to be sure"
        )
    found = found.after(unknown)
    try:
        _checked(spec, found, lambda: spec.validate(found.name))
    except ConfigError as exc:
        raise ConfigError(f"{exc}; the InferenceService created before the mode was known "
                          "is deleted") from None  # fmt: skip
    return found


def wait_ready(kube: Kube, name: str, *, timeout_s: float, poll_s: float = 2.0) -> dict:
    """Poll the InferenceService until its Ready condition is True; return it.

    Raises:
        NotReadyError: not ready within ``timeout_s``, naming the failing condition.
    """
    deadline = time.monotonic() + timeout_s
    doc = None
    while True:
        doc = kube.get_isvc(name)
        conditions = ((doc or {}).get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
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


def _whose(found: dict | None, benchmark_id: str) -> str:
    owner = benchmark_of(found or {})
    if found is None:
        return "created by someone else at the same moment (and gone again)"
    if not owner:
        return "not created by kfp-bench"
    if owner == benchmark_id:
        return f"created by this benchmark ({owner}) in an earlier attempt"
    return f"created by benchmark {owner}"


def _taken(kube: Kube, name: str, found: dict | None, benchmark_id: str) -> NotOursError:
    whose = _whose(found, benchmark_id)
    return NotOursError(
        f"InferenceService {name} in namespace {kube.namespace} exists already, {whose}; "
        "nothing was changed. To benchmark, give the isvc parameter another name, or delete "
        f"that InferenceService (kubectl delete inferenceservice {name} -n {kube.namespace}) "
        "if it is no longer needed"
    )


def delete(
    kube: Kube,
    name: str,
    *,
    benchmark_id: str,
    wait_s: float = 0.0,
    poll_s: float = 2.0,
    attempts: int = 3,
) -> str:
    """Delete the InferenceService ``name`` if it carries the label of ``benchmark_id``; with
    ``wait_s``, wait until it is gone. Returns DELETED, NOT_FOUND, or NOT_OURS (left alone)
    followed by whose it is, e.g. "not ours: left alone (not created by kfp-bench)".

    The delete names the uid and resourceVersion that were read, so an object replaced or
    relabelled after the GET is not deleted: the API refuses (409) and it is read again, up to
    ``attempts`` times (the KServe controller updating the status also moves the version).

    Raises:
        KubeError: it changed between each read and delete.
    """
    for _ in range(attempts):
        doc = kube.get_isvc(name)
        if doc is None:
            return NOT_FOUND
        if benchmark_of(doc) != benchmark_id:
            return f"{NOT_OURS} ({_whose(doc, benchmark_id)})"
        meta = doc.get("metadata") or {}
        done = kube.delete_isvc(
            name, uid=meta.get("uid", ""), resource_version=meta.get("resourceVersion", "")
        )
        if done == GONE:
            return NOT_FOUND
        if done != CHANGED:
            _wait_gone(kube, name, meta.get("uid", ""), wait_s, poll_s)
            return DELETED
    raise KubeError(
        f"InferenceService {name} in namespace {kube.namespace} changed between each read and "
        f"delete, {attempts} times; check that it is benchmark {benchmark_id}'s "
        f"(label {BENCHMARK_LABEL}) and delete it: kubectl delete inferenceservice {name} "
        f"-n {kube.namespace}"
    )


def _wait_gone(kube: Kube, name: str, uid: str, wait_s: float, poll_s: float) -> None:
    """Wait up to ``wait_s`` until the object ``uid`` of that name is gone (finalizers)."""
    deadline = time.monotonic() + wait_s
    while wait_s and time.monotonic() < deadline:
        doc = kube.get_isvc(name)
        if doc is None or (doc.get("metadata") or {}).get("uid") != uid:
            return
        time.sleep(poll_s)

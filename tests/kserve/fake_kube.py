"""A loopback Kubernetes API of recorded responses, for the kserve tests.

It stands in for a live Kubernetes API server because none runs in ``make test`` (the real one is
the cluster tier's, tests/cluster/): it is the one
mock of the kserve tests, a tiny HTTP server that answers the paths the real kubernetes client
calls (KServe's InferenceService, the pods of a component, Knative's PodAutoscalers or the HPA of
Standard mode, KServe's inferenceservice-config ConfigMap, in whichever namespace the scenario
installs KServe) with JSON
shaped like what a cluster returns, changing over time as a scripted ``Scenario``. The client
itself is real: ``kube_config`` points it at the server through an ordinary kubeconfig.

InferenceServices are kept as the API server keeps them, by name: each stored object gets a new
uid and resourceVersion and keeps the labels it was created with; a create of a name that exists
is refused (409 AlreadyExists), and a delete honours the preconditions of its DeleteOptions (uid,
resourceVersion: 409 Conflict when they do not match), with the API server's messages. KServe's
part is played from its source (kserve/kserve at aaac4e29): the defaulting webhook writes a
Standard default onto the deploymentMode annotation (apis/serving/v1beta1/
inference_service_defaults.go), the controller records the mode, old names mapped to new, in
status.deploymentMode (controller.go; utils.go GetDeploymentMode), and only a Standard
InferenceService has an HPA (reconcilers/hpa); Knative's PodAutoscaler resource exists only where
the cluster's default is Knative. With serving.kserve.io/autoscalerClass keda a Standard
InferenceService has instead a KEDA ScaledObject, made from its autoScaling metrics as kserve
v0.15.2 reconcilers/keda/keda_reconciler.go makes it, and the HPA KEDA makes for it,
keda-hpa-NAME-predictor, labelled as the ScaledObject (kedacore/keda v2.16.1
controllers/keda/hpa.go:71-135); the ScaledObject resource exists only where KEDA is installed.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

NS = "bench"
ISVC_PATH = f"/apis/serving.kserve.io/v1beta1/namespaces/{NS}/inferenceservices"
PODS_PATH = f"/api/v1/namespaces/{NS}/pods"
PA_PATH = f"/apis/autoscaling.internal.knative.dev/v1alpha1/namespaces/{NS}/podautoscalers"
HPA_PATH = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
SO_PATH = f"/apis/keda.sh/v1alpha1/namespaces/{NS}/scaledobjects"
AUTOSCALER_ANNOTATION = "serving.kserve.io/autoscalerClass"
#: KServe's ConfigMap in a namespace: by default where Kubeflow's manifests install it, kubeflow
#: (kubeflow/manifests 009c8808, applications/kserve/kserve/kserve_kubeflow.yaml); CM_KSERVE
#: where KServe's own do.
CM_AT = "/api/v1/namespaces/{}/configmaps/inferenceservice-config"
CM_PATH = CM_AT.format("kubeflow")
CM_KSERVE = CM_AT.format("kserve")
MODE_ANNOTATION = "serving.kserve.io/deploymentMode"
T0 = "2025-01-01T00:00:00Z"


@dataclass
class Frame:
    """One moment of the scenario: pods of the predictor and the PodAutoscaler's scales."""

    ready: int
    total: int
    desired: int | None = None
    actual: int | None = None


@dataclass
class Scenario:
    """A scripted cluster: the InferenceService's conditions per GET, and the pod frames per pods
    LIST (each LIST moves to the next frame; the last one stays)."""

    conditions: list[list[dict]] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    #: creates refused with 403, as by a Role without the create verb (reads are allowed)
    forbidden: bool = False
    #: InferenceServices in the namespace before the scenario starts (a user's, another
    #: benchmark's), as bodies; they are stored, not counted in ``created``.
    present: list[dict] = field(default_factory=list)
    #: Races: method -> a body stored under its name (a new object, a new uid) just before the
    #: next request of that method to that name is served. "POST": someone created the name
    #: after our GET; "DELETE": someone replaced the object after our GET.
    race: dict[str, dict] = field(default_factory=dict)
    #: answer autoscaler LISTs (PodAutoscalers, HPAs, ScaledObjects) with 403 after this many
    #: (None: never)
    pa_forbidden_after: int | None = None
    #: the predictor's address (status.address.url); empty: its cluster-local one
    address: str = ""
    #: the cluster's defaultDeploymentMode, in its inferenceservice-config ConfigMap
    default_mode: str = "Serverless"
    #: that ConfigMap: "ok", "forbidden" (a GET answered 403, in any namespace, as RBAC refuses
    #: before it looks: a Role in the benchmark's namespace only) or "absent" (404)
    config_map: str = "ok"
    #: the namespace that holds it (KServe's: kubeflow on a standard Kubeflow install); a GET
    #: in any other answers 404
    kserve_namespace: str = "kubeflow"
    #: whether the controller records status.deploymentMode (False: a KServe that does not)
    record_mode: bool = True
    #: whether KEDA is installed (its ScaledObject CRD; else a LIST answers 404)
    keda: bool = True
    #: whether KEDA has made the HPA of a ScaledObject yet (and named it in status.hpaName)
    keda_hpa: bool = True
    created: list[dict] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    #: name -> the stored InferenceService (metadata filled in as the API server does)
    live: dict[str, dict] = field(default_factory=dict)
    _gets: int = 0
    _lists: int = 0
    _serial: int = 0
    _pa_lists: int = 0

    def __post_init__(self):
        for body in self.present:
            self.store(body)

    def store(self, body: dict) -> dict:
        """Keep ``body`` under its name as a new object: a new uid and resourceVersion."""
        self._serial += 1
        doc = json.loads(json.dumps(body))
        doc["metadata"].update(uid=f"0b6d5c1e-{self._serial}", generation=1,
                               creationTimestamp=T0,
                               resourceVersion=str(1000 + self._serial))  # fmt: skip
        self.live[doc["metadata"]["name"]] = doc
        return doc

    def mode_of(self, stored: dict) -> str:
        """The mode KServe gives ``stored``: its annotation, else the default; new names."""
        mode = (stored["metadata"].get("annotations") or {}).get(MODE_ANNOTATION, self.default_mode)
        return {"Serverless": "Knative", "RawDeployment": "Standard"}.get(mode, mode)

    def keda_of(self, stored: dict | None) -> bool:
        """Whether KServe gives ``stored`` a KEDA ScaledObject, not an HPA of its own."""
        if stored is None or self.mode_of(stored) != "Standard":
            return False
        annotations = stored["metadata"].get("annotations") or {}
        return annotations.get(AUTOSCALER_ANNOTATION) == "keda"

    def admit(self, body: dict) -> dict:
        """``body`` as KServe's defaulting webhook leaves it: a Standard default annotated."""
        doc = json.loads(json.dumps(body))
        annotations = doc["metadata"].setdefault("annotations", {})
        if MODE_ANNOTATION not in annotations and self.mode_of(doc) == "Standard":
            annotations[MODE_ANNOTATION] = "Standard"
        return doc

    def run_race(self, method: str, name: str) -> None:
        body = self.race.get(method)
        if body is not None and body["metadata"]["name"] == name:
            self.store(body)
            del self.race[method]

    def frame(self, advance: bool) -> Frame:
        """The frame of the latest pods LIST; ``advance`` (a pods LIST) moves to the next."""
        i = min(self._lists - (not advance), len(self.frames) - 1)
        self._lists += advance
        return self.frames[max(i, 0)] if self.frames else Frame(0, 0)


def condition(kind: str, status: str = "True", reason: str = "", message: str = "") -> dict:
    c = {"type": kind, "status": status, "lastTransitionTime": T0}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


READY = [condition(k) for k in ("IngressReady", "PredictorConfigurationReady", "PredictorReady",
                                "PredictorRouteReady", "Ready")]  # fmt: skip
STARTING = [
    condition("PredictorConfigurationReady", "Unknown"),
    condition("PredictorReady", "Unknown", "RevisionMissing", "Configuration is waiting for a "
              "Revision to become ready."),
    condition("Ready", "Unknown", "RevisionMissing"),
]  # fmt: skip
FAILING = [
    condition("PredictorConfigurationReady", "False", "RevisionFailed", "Revision "
              '"bench-iris-predictor-00001" failed with message: Unschedulable: 0/3 nodes are '
              "available: 3 Insufficient nvidia.com/gpu."),
    condition("PredictorReady", "False", "RevisionMissing"),
    condition("Ready", "False", "RevisionMissing"),
]  # fmt: skip


def _isvc(stored: dict, conditions: list[dict], address: str = "", mode: str = "") -> dict:
    name = stored["metadata"]["name"]
    doc = json.loads(json.dumps(stored))
    doc["status"] = {
        "conditions": conditions,
        "observedGeneration": 1,
        "url": f"http://{name}.{NS}.example.com",
        "address": {"url": address or f"http://{name}-predictor.{NS}.svc.cluster.local"},
        "components": {"predictor": {"latestCreatedRevision": f"{name}-predictor-00001"}},
    }
    if mode:
        doc["status"]["deploymentMode"] = mode
    return doc


def _pod(name: str, i: int, ready: bool) -> dict:
    rev = f"{name}-predictor-00001"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{rev}-deployment-7d9c-{i:05d}",
            "namespace": NS,
            "creationTimestamp": T0,
            "labels": {
                "serving.kserve.io/inferenceservice": name,
                "component": "predictor",
                "serving.knative.dev/revision": rev,
                "app": rev,
            },
        },
        "spec": {"containers": [{"name": "kserve-container", "image": "kserve/sklearnserver"}]},
        "status": {
            "phase": "Running" if ready else "Pending",
            "conditions": [
                condition("PodScheduled"),
                condition("ContainersReady", "True" if ready else "False"),
                condition("Ready", "True" if ready else "False"),
            ],
        },
    }


def _pa(name: str, f: Frame) -> dict:
    rev = f"{name}-predictor-00001"
    status = {"serviceName": rev, "metricsServiceName": f"{rev}-private"}
    if f.desired is not None:
        status["desiredScale"] = f.desired
    if f.actual is not None:
        status["actualScale"] = f.actual
    return {
        "apiVersion": "autoscaling.internal.knative.dev/v1alpha1",
        "kind": "PodAutoscaler",
        "metadata": {"name": rev, "namespace": NS,
                     "labels": {"serving.kserve.io/inferenceservice": name,
                                "component": "predictor"}},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": f"{rev}-deployment"}, "protocolType": "http1"},
        "status": status,
    }  # fmt: skip


def _hpa(name: str, f: Frame) -> dict:
    """An HPA as KServe's reconcilers/hpa createHPA makes it: the component's name and labels."""
    status = {"currentMetrics": None}
    if f.desired is not None:
        status["desiredReplicas"] = f.desired
    if f.actual is not None:
        status["currentReplicas"] = f.actual
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"{name}-predictor", "namespace": NS,
                     "labels": {"serving.kserve.io/inferenceservice": name,
                                "component": "predictor"}},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": f"{name}-predictor"}, "minReplicas": 1,
                 "maxReplicas": 5},
        "status": status,
    }  # fmt: skip


def _labels(name: str) -> dict:
    return {"serving.kserve.io/inferenceservice": name, "component": "predictor"}


def _scaled_object(stored: dict, with_hpa: bool) -> dict:
    """The ScaledObject KServe makes for ``stored``'s predictor (keda_reconciler.go:69-200: a
    trigger per Resource metric, its type the resource, metadata.value the utilization; min 1 by
    default, max at least min), with the status KEDA gives it once it made the HPA."""
    name = stored["metadata"]["name"]
    pred = stored["spec"]["predictor"]
    triggers = []
    for m in (pred.get("autoScaling") or {}).get("metrics", []):
        target = m["resource"]["target"]
        value = str(target.get("averageUtilization", 0))
        triggers.append({"type": m["resource"]["name"], "metricType": target["type"],
                         "metadata": {"value": value}})  # fmt: skip
    low = pred.get("minReplicas", 1)
    doc = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": f"{name}-predictor", "namespace": NS, "labels": _labels(name)},
        "spec": {"scaleTargetRef": {"name": f"{name}-predictor"}, "triggers": triggers,
                 "minReplicaCount": low, "maxReplicaCount": max(pred.get("maxReplicas", 0), low)},
    }  # fmt: skip
    if with_hpa:
        doc["status"] = {
            "hpaName": f"keda-hpa-{name}-predictor",
            "conditions": [condition("Ready"), condition("Active", "False")],
        }
    return doc


def _keda_hpa(name: str, f: Frame) -> dict:
    """The HPA KEDA makes for the ScaledObject NAME-predictor (hpa.go:71-135): keda-hpa-NAME-
    predictor, the ScaledObject's labels and KEDA's own."""
    doc = _hpa(name, f)
    doc["metadata"]["name"] = f"keda-hpa-{name}-predictor"
    doc["metadata"]["labels"].update(
        {
            "app.kubernetes.io/managed-by": "keda-operator",
            "app.kubernetes.io/part-of": f"{name}-predictor",
        }
    )
    return doc


def _config_map(default_mode: str, namespace: str) -> dict:
    """KServe's inferenceservice-config as config/configmap/inferenceservice.yaml has it (the
    deploy key; the others left out)."""
    deploy = json.dumps({"defaultDeploymentMode": default_mode})
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": namespace},
            "data": {"deploy": deploy,
                     "ingress": json.dumps({"ingressDomain": "example.com"})}}  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    scenario: Scenario

    def log_message(self, *args):  # quiet
        pass

    def _send(self, code: int, doc: dict) -> None:
        data = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code: int, reason: str, message: str) -> None:
        self._send(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "message": message, "reason": reason, "code": code})  # fmt: skip

    def _route(self, method: str) -> None:
        s = self.scenario
        url = urlsplit(self.path)
        s.requests.append(f"{method} {url.path}")
        if s.forbidden and method == "POST":
            return self._status(403, "Forbidden", 'inferenceservices.serving.kserve.io is '
                                'forbidden: User "system:serviceaccount:bench:default" cannot '
                                'create resource "inferenceservices"')  # fmt: skip
        query = parse_qs(url.query)
        if url.path == ISVC_PATH and method == "POST":
            body = self._body()
            name = body["metadata"]["name"]
            s.run_race("POST", name)
            if name in s.live:
                return self._status(409, "AlreadyExists", f'inferenceservices.serving.kserve.io '
                                    f'"{name}" already exists')  # fmt: skip
            s.created.append(body)
            return self._send(201, _isvc(s.store(s.admit(body)), []))
        if url.path.startswith(ISVC_PATH + "/"):
            name = url.path.rsplit("/", 1)[1]
            if method == "DELETE":
                return self._delete(name, self._body())
            if name not in s.live:
                return self._status(404, "NotFound", f'inferenceservices "{name}" not found')
            conds = s.conditions[min(s._gets, len(s.conditions) - 1)] if s.conditions else []
            s._gets += 1
            stored = s.live[name]
            mode = s.mode_of(stored) if s.record_mode and conds else ""
            return self._send(200, _isvc(stored, conds, s.address, mode))
        cm_ns = _config_map_namespace(url.path)
        if cm_ns is not None:
            return self._config_map(cm_ns)
        name = _selected(query)
        if url.path == PODS_PATH:
            f = s.frame(advance=True)
            pods = [_pod(name, i, i < f.ready) for i in range(f.total)]
            return self._send(200, {"kind": "PodList", "apiVersion": "v1", "items": pods,
                                    "metadata": {"resourceVersion": "2002"}})  # fmt: skip
        if url.path == HPA_PATH:
            s._pa_lists += 1
            if s.pa_forbidden_after is not None and s._pa_lists > s.pa_forbidden_after:
                return self._status(403, "Forbidden", "horizontalpodautoscalers.autoscaling is "
                                    'forbidden: User "system:serviceaccount:bench:pipeline-'
                                    'runner" cannot list resource '
                                    '"horizontalpodautoscalers"')  # fmt: skip
            f = s.frame(advance=False)
            live = s.live.get(name)
            hpas = [_hpa(name, f)] if live and s.mode_of(live) == "Standard" else []
            if s.keda_of(live):
                hpas = [_keda_hpa(name, f)] if s.keda_hpa else []
            return self._send(200, {"kind": "HorizontalPodAutoscalerList",
                                    "apiVersion": "autoscaling/v2", "items": hpas,
                                    "metadata": {}})  # fmt: skip
        if url.path.startswith(HPA_PATH + "/"):
            return self._keda_hpa(url.path.rsplit("/", 1)[1])
        if url.path == SO_PATH:
            if not s.keda:
                return self._status(
                    404, "NotFound", "the server could not find the requested resource"
                )  # fmt: skip  (no KEDA: no ScaledObject CRD)
            s._pa_lists += 1
            if s.pa_forbidden_after is not None and s._pa_lists > s.pa_forbidden_after:
                return self._status(403, "Forbidden", 'scaledobjects.keda.sh is forbidden: User '
                                    '"system:serviceaccount:bench:pipeline-runner" cannot list '
                                    'resource "scaledobjects"')  # fmt: skip
            live = s.live.get(name)
            items = [_scaled_object(live, s.keda_hpa)] if s.keda_of(live) else []
            return self._send(200, {"kind": "ScaledObjectList", "apiVersion": "keda.sh/v1alpha1",
                                    "items": items, "metadata": {}})  # fmt: skip
        if url.path == PA_PATH and s.mode_of({"metadata": {}}) != "Knative":
            return self._status(
                404, "NotFound", "the server could not find the requested resource"
            )  # fmt: skip  (no Knative: no PodAutoscaler CRD)
        if url.path == PA_PATH:
            s._pa_lists += 1
            if s.pa_forbidden_after is not None and s._pa_lists > s.pa_forbidden_after:
                return self._status(403, "Forbidden", 'podautoscalers.autoscaling.internal.'
                                    'knative.dev is forbidden: User "system:serviceaccount:'
                                    'bench:pipeline-runner" cannot list resource '
                                    '"podautoscalers"')  # fmt: skip
            f = s.frame(advance=False)
            return self._send(200, {"kind": "PodAutoscalerList", "items": [_pa(name, f)],
                                    "metadata": {}})  # fmt: skip
        return self._status(404, "NotFound", f"no route {url.path}")

    def _keda_hpa(self, hpa: str) -> None:
        """A GET of the HPA ``hpa``: KEDA's, once made, for a live InferenceService with it."""
        s = self.scenario
        for name, live in s.live.items():
            if hpa == f"keda-hpa-{name}-predictor" and s.keda_of(live) and s.keda_hpa:
                return self._send(200, _keda_hpa(name, s.frame(advance=False)))
        return self._status(404, "NotFound", f'horizontalpodautoscalers.autoscaling "{hpa}" '
                            "not found")  # fmt: skip

    def _config_map(self, namespace: str) -> None:
        s = self.scenario
        if s.config_map == "forbidden":
            return self._status(403, "Forbidden", 'configmaps "inferenceservice-config" is '
                                'forbidden: User "system:serviceaccount:bench:default-editor" '
                                'cannot get resource "configmaps" in API group "" in the '
                                f'namespace "{namespace}"')  # fmt: skip
        if s.config_map == "absent" or namespace != s.kserve_namespace:
            return self._status(404, "NotFound", 'configmaps "inferenceservice-config" not found')
        return self._send(200, _config_map(s.default_mode, namespace))

    def _body(self) -> dict:
        size = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(size)) if size else {}

    def _delete(self, name: str, options: dict) -> None:
        """A DELETE as the API server serves it: 404 when there is none; 409 when a
        precondition (uid, resourceVersion) names another object or version; else gone."""
        s = self.scenario
        s.run_race("DELETE", name)
        if name not in s.live:
            return self._status(404, "NotFound", f'inferenceservices "{name}" not found')
        meta = s.live[name]["metadata"]
        pre = options.get("preconditions") or {}
        for key, what in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            if pre.get(key) and pre[key] != meta[key]:
                return self._status(409, "Conflict", "Operation cannot be fulfilled on "
                                    f'inferenceservices.serving.kserve.io "{name}": Precondition '
                                    f"failed: {what} in precondition: {pre[key]}, {what} in "
                                    f"object meta: {meta[key]}")  # fmt: skip
        del s.live[name]
        s.deleted.append(name)
        return self._send(200, {"kind": "Status", "status": "Success"})

    def do_GET(self):  # noqa: N802
        self._route("GET")

    def do_POST(self):  # noqa: N802
        self._route("POST")

    def do_DELETE(self):  # noqa: N802
        self._route("DELETE")


def _config_map_namespace(path: str) -> str | None:
    """The namespace of a GET of KServe's ConfigMap at ``path``; None for another path."""
    head, _, tail = path.partition("/configmaps/")
    if tail != "inferenceservice-config" or not head.startswith("/api/v1/namespaces/"):
        return None
    return head.removeprefix("/api/v1/namespaces/")


def _selected(query: dict) -> str:
    sel = dict(p.split("=", 1) for p in query.get("labelSelector", [""])[0].split(",") if p)
    return sel.get("serving.kserve.io/inferenceservice", "")


class FakeKube:
    """The server, its scenario, and a kubeconfig dict pointing at it."""

    def __init__(self):
        self.scenario = Scenario()
        handler = type("Handler", (_Handler,), {"scenario": None})
        self._handler = handler
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def play(self, scenario: Scenario) -> Scenario:
        self.scenario = self._handler.scenario = scenario
        return scenario

    def kube_config(self) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "bench", "user": {"token": "recorded"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "bench",
                                                      "namespace": NS}}],
            "current-context": "fake",
        }  # fmt: skip

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def default_kubeconfig(server: FakeKube, folder, monkeypatch) -> None:
    """Make ``server`` the default kubeconfig's cluster (``$KUBECONFIG``, and the path the
    kubernetes client read from it when first imported), as a step's ``Kube(namespace)`` finds
    it."""
    from kubernetes.config import kube_config

    cfg = Path(folder) / "kubeconfig"
    cfg.write_text(json.dumps(server.kube_config()))  # JSON is YAML
    monkeypatch.setenv("KUBECONFIG", str(cfg))
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(cfg))

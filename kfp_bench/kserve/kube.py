"""The one small interface between kfp-bench and Kubernetes: ``Kube``.

Every call to a cluster goes through it, over the ``kubernetes`` client only (the kserve SDK's 69
packages cost a step's pod a minute, for three custom-object calls); the rest of
``kfp_bench.kserve`` sees plain values, so the tests drive the real client against recorded
responses. A 404 of a get, delete or list, a 409 of a create (None) or of a delete with
preconditions (CHANGED) are answers; any other failure raises ``KubeError`` naming the call, the
object and the API's reason. ``kube_namespace`` alone picks the namespace of every object."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from kfp_bench.errors import KubeError

# Imports inside functions: the kubernetes client comes with the kube extra, and a pod of another
# step imports this module's names.

ISVC_LABEL = "serving.kserve.io/inferenceservice"
GROUP, VERSION, PLURAL = "serving.kserve.io", "v1beta1", "inferenceservices"
PA_GROUP, PA_VERSION, PA_PLURAL = "autoscaling.internal.knative.dev", "v1alpha1", "podautoscalers"
SO_GROUP, SO_VERSION, SO_PLURAL = "keda.sh", "v1alpha1", "scaledobjects"
#: What ``Kube.delete_isvc`` found: deleted; none of that name; one, but not the uid and
#: resourceVersion given (replaced or changed since it was read), so not deleted.
DELETED, GONE, CHANGED = "deleted", "gone", "changed"
#: Where an object goes when no namespace is given or found: kubectl's, without -n.
DEFAULT_NAMESPACE = "default"


def kube_namespace(namespace: str) -> str:
    """The namespace of the benchmark's Kubernetes objects (its InferenceService, their pods and
    autoscalers) for the pipeline's ``namespace`` once resolved (``BenchParams.with_namespace``:
    the parameter when set, else on multi-user KFP the pod's own, as the KFP calls take it):
    that one, else "default" (single-user KFP, or outside a pod)."""
    return namespace or DEFAULT_NAMESPACE


def selector(name: str, component: str = "predictor") -> str:
    """The label selector of an InferenceService component's pods (and PodAutoscalers)."""
    return f"{ISVC_LABEL}={name},component={component}"


@dataclass(frozen=True, slots=True)
class PodState:
    """One pod, as the replica watcher counts it.

    Attributes:
        name: the pod's name.
        ready: its Ready condition is True.
        live: it counts towards the total: neither terminating nor Succeeded/Failed.
    """

    name: str
    ready: bool
    live: bool


@dataclass(frozen=True, slots=True)
class ScaleState:
    """One autoscaler's scales: a Knative PodAutoscaler's, or an HPA's.

    Attributes:
        name: the PodAutoscaler's name (the revision's), or the HPA's (NAME-predictor).
        desired: status.desiredScale (an HPA's status.desiredReplicas), the pods the autoscaler
            wants; None before it decides.
        actual: status.actualScale (an HPA's status.currentReplicas), the pods it counts.
    """

    name: str
    desired: int | None
    actual: int | None


@dataclass(frozen=True, slots=True)
class KedaTrigger:
    """One trigger of a KEDA ScaledObject: what it scales on, and its target.

    Attributes:
        type: the scaler: cpu, memory, prometheus, external...
        metric_type: Utilization, AverageValue or Value; "" when the trigger gives none.
        target: the target as the trigger's metadata gives it: ``value`` for cpu and memory (a
            percent for Utilization), else ``threshold`` or ``targetValue``; "" when none.
    """

    type: str
    metric_type: str
    target: str


@dataclass(frozen=True, slots=True)
class ScaledObjectState:
    """A KEDA ScaledObject (keda.sh/v1alpha1), as the replica watcher reads it.

    Attributes:
        name: the ScaledObject's name (KServe names it as the component, NAME-predictor).
        hpa: the HPA it drives: status.hpaName, else the name KEDA gives it, keda-hpa-NAME
            (kedacore/keda v2.16.1 controllers/keda/hpa.go:339-348).
        min_replicas, max_replicas: spec.minReplicaCount and maxReplicaCount; None if unset.
        triggers: its triggers, in order.
        ready: its Ready condition is True.
    """

    name: str
    hpa: str
    min_replicas: int | None
    max_replicas: int | None
    triggers: tuple[KedaTrigger, ...]
    ready: bool


class Kube:
    """The kubernetes clients of one namespace.

    Args:
        namespace: the namespace of the InferenceService and its pods.
        kubeconfig: a kubeconfig file; None for the in-cluster service account (inside a pod) or
            ~/.kube/config.
        config_dict: a kubeconfig as a dict, instead of a file.
    """

    def __init__(self, namespace: str, *, kubeconfig: str | None = None, config_dict=None):
        from kubernetes import client

        self.namespace = namespace
        try:
            cfg = _load_config(kubeconfig, config_dict)
        except Exception as exc:  # kubernetes' config errors have no common base
            raise KubeError(
                f"no Kubernetes configuration ({exc}); run inside the cluster or give a kubeconfig"
            ) from None
        self.api = client.ApiClient(cfg)
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.autoscaling = client.AutoscalingV2Api(self.api)

    def _call(self, what: str, fn, *args, answers=None, namespace: str = "", **kwargs):
        """``fn(*args, **kwargs)``; ``answers`` maps the HTTP statuses that are answers, not
        errors, to what to return for them (by default a 404 is None); ``namespace``: the one
        an error names, when not this Kube's."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        answers = {404: None} if answers is None else answers
        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            if exc.status in answers:
                return answers[exc.status]
            raise KubeError(
                f"{what} in namespace {namespace or self.namespace}: HTTP {exc.status} "
                f"{exc.reason}"
                f"{_message(exc.body)}"
            ) from None
        except HTTPError as exc:
            raise KubeError(f"{what}: the Kubernetes API is unreachable ({exc})") from None

    def create_isvc(self, isvc: dict) -> dict | None:
        """Create ``isvc``, an InferenceService's JSON body (``IsvcSpec.to_dict``), in this
        namespace; return the object the API created, or None when one of that name exists
        (409 AlreadyExists: nothing was changed)."""
        # as KServeClient.create (kserve/api/kserve_client.py): the version from apiVersion
        version = isvc["apiVersion"].split("/")[1]
        return self._call(
            f"create InferenceService {isvc['metadata']['name']}",
            self.custom.create_namespaced_custom_object,
            GROUP, version, self.namespace, PLURAL, isvc,
            # a 404 here means no InferenceService CRD: KServe is not installed
            answers={409: None},
        )  # fmt: skip

    def get_isvc(self, name: str) -> dict | None:
        """The InferenceService ``name`` as JSON, or None when there is none."""
        return self._call(
            f"get InferenceService {name}",
            self.custom.get_namespaced_custom_object,
            GROUP, VERSION, self.namespace, PLURAL, name,
        )  # fmt: skip

    def delete_isvc(self, name: str, *, uid: str = "", resource_version: str = "") -> str:
        """Delete the InferenceService ``name``, only if it is still the object of ``uid`` (and
        at ``resource_version``) when they are given: the API server checks these preconditions
        in the delete itself, so an object replaced since it was read is never deleted.

        Returns DELETED, GONE (none of that name) or CHANGED (a precondition failed: 409)."""
        from kubernetes.client import V1DeleteOptions, V1Preconditions

        pre = V1Preconditions(uid=uid or None, resource_version=resource_version or None)
        done = self._call(
            f"delete InferenceService {name}",
            self.custom.delete_namespaced_custom_object,
            GROUP, VERSION, self.namespace, PLURAL, name,
            body=V1DeleteOptions(preconditions=pre),
            answers={404: GONE, 409: CHANGED},
        )  # fmt: skip
        return done if done in (GONE, CHANGED) else DELETED

    def _pod_list(self, label_selector: str) -> list:
        found = self._call(
            f"list pods {label_selector}",
            self.core.list_namespaced_pod,
            self.namespace,
            label_selector=label_selector,
        )
        return found.items if found is not None else []

    def pods(self, label_selector: str) -> list[PodState]:
        """The pods matching ``label_selector``, ready or not."""
        return [_pod(p) for p in self._pod_list(label_selector)]

    def pod_docs(self, label_selector: str) -> list[dict]:
        """The pods matching ``label_selector`` as JSON (camelCase, as the API sends them)."""
        return [self.api.sanitize_for_serialization(p) for p in self._pod_list(label_selector)]

    def delete_pod(self, name: str) -> None:
        """Delete the pod ``name`` (its controller makes another); gone already is no error."""
        self._call(f"delete pod {name}", self.core.delete_namespaced_pod, name, self.namespace)

    def pod_events(self, pod: str) -> list[dict]:
        """The events of the pod ``pod`` as JSON (the kubelet's: Scheduled, Pulled, Started...)."""
        found = self._call(
            f"list events of pod {pod}",
            self.core.list_namespaced_event,
            self.namespace,
            field_selector=f"involvedObject.kind=Pod,involvedObject.name={pod}",
        )
        return [self.api.sanitize_for_serialization(e) for e in (found.items if found else [])]

    def podautoscalers(self, label_selector: str) -> list[ScaleState]:
        """The Knative PodAutoscalers matching ``label_selector`` (one per live revision)."""
        found = self._call(
            f"list podautoscalers {label_selector}",
            self.custom.list_namespaced_custom_object,
            PA_GROUP, PA_VERSION, self.namespace, PA_PLURAL,
            label_selector=label_selector,
        )  # fmt: skip
        return [_pa(pa) for pa in (found or {}).get("items", [])]

    def hpas(self, label_selector: str) -> list[ScaleState]:
        """The HorizontalPodAutoscalers (autoscaling/v2) matching ``label_selector``: in
        Standard/RawDeployment mode one per component, named as its Deployment and labelled as
        it (kserve/kserve at aaac4e29, pkg/controller/v1beta1/inferenceservice/reconcilers/hpa/
        hpa_reconciler.go createHPA: ObjectMeta is the component's, from components/predictor.go
        buildObjectMeta: NAME-predictor, labels serving.kserve.io/inferenceservice=NAME and
        component=predictor)."""
        found = self._call(
            f"list horizontalpodautoscalers {label_selector}",
            self.autoscaling.list_namespaced_horizontal_pod_autoscaler,
            self.namespace,
            label_selector=label_selector,
        )
        return [_hpa(h) for h in (found.items if found is not None else [])]

    def hpa(self, name: str) -> ScaleState | None:
        """The HorizontalPodAutoscaler ``name`` (autoscaling/v2), or None when there is none."""
        found = self._call(
            f"get horizontalpodautoscaler {name}",
            self.autoscaling.read_namespaced_horizontal_pod_autoscaler,
            name,
            self.namespace,
        )
        return _hpa(found) if found is not None else None

    def scaled_objects(self, label_selector: str) -> list[ScaledObjectState]:
        """The KEDA ScaledObjects matching ``label_selector``: for an InferenceService KServe
        makes one per component with autoscalerClass keda, named and labelled as the component
        (kserve v0.15.2 pkg/controller/v1beta1/inferenceservice/reconcilers/keda/
        keda_reconciler.go:185-200). None found, or no ScaledObject CRD (404): []."""
        found = self._call(
            f"list scaledobjects {label_selector}",
            self.custom.list_namespaced_custom_object,
            SO_GROUP, SO_VERSION, self.namespace, SO_PLURAL,
            label_selector=label_selector,
        )  # fmt: skip
        return [_scaled_object(so) for so in (found or {}).get("items", [])]

    def create_config_map(self, body: dict) -> dict | None:
        """Create the ConfigMap ``body`` in this namespace; return the object created, or None
        when one of that name exists (409 AlreadyExists: nothing was changed)."""
        found = self._call(
            f"create ConfigMap {body['metadata']['name']}",
            self.core.create_namespaced_config_map,
            self.namespace,
            body,
            answers={409: None},
        )
        return None if found is None else self.api.sanitize_for_serialization(found)

    def get_config_map(self, name: str, namespace: str = "") -> dict | None:
        """The ConfigMap ``name`` of ``namespace`` (else this one) as JSON (binaryData base64, as
        the API sends it), or None when there is none; a refusal (a Role that may not read it:
        403) raises ``KubeError``."""
        namespace = namespace or self.namespace
        found = self._call(
            f"read ConfigMap {name}",
            self.core.read_namespaced_config_map,
            name,
            namespace,
            namespace=namespace,
        )
        return None if found is None else self.api.sanitize_for_serialization(found)


def _in_pod() -> bool:
    """Whether a service account is mounted, as kserve's ``utils.is_running_in_k8s``."""
    return os.path.isdir("/var/run/secrets/kubernetes.io/")


def _load_config(kubeconfig: str | None, config_dict):
    """A ``kubernetes.client.Configuration`` in ``KServeClient.__init__``'s order
    (kserve/api/kserve_client.py): a config dict, else a kubeconfig file when one is given or
    outside a pod (~/.kube/config by default), else the pod's service account."""
    from kubernetes import client, config

    # Loaded into a Configuration of this Kube's own (KServeClient loads the process default) so
    # that two Kubes never overwrite each other's cluster.
    cfg = client.Configuration()
    if kubeconfig or config_dict or not _in_pod():
        if config_dict:
            config.load_kube_config_from_dict(config_dict=config_dict, client_configuration=cfg)
        else:
            config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    else:
        config.load_incluster_config(client_configuration=cfg)
    return cfg


def _pod(p) -> PodState:
    status = p.status
    conditions = (status.conditions if status is not None else None) or []
    ready = any(c.type == "Ready" and c.status == "True" for c in conditions)
    phase = status.phase if status is not None else None
    live = p.metadata.deletion_timestamp is None and phase not in ("Succeeded", "Failed")
    return PodState(p.metadata.name, ready and live, live)


def _pa(pa: dict) -> ScaleState:
    status = pa.get("status") or {}
    return ScaleState(pa["metadata"]["name"], status.get("desiredScale"), status.get("actualScale"))


def _hpa(hpa) -> ScaleState:
    """An HPA's desired and current replicas (None before its controller has set them)."""
    s = hpa.status
    return ScaleState(hpa.metadata.name, s and s.desired_replicas, s and s.current_replicas)


def _scaled_object(so: dict) -> ScaledObjectState:
    """A ScaledObject's JSON as the watcher reads it (kedacore/keda v2.16.1
    apis/keda/v1alpha1/scaledobject_types.go: ScaledObjectSpec, ScaleTriggers, status.hpaName)."""
    name = so["metadata"]["name"]
    spec, status = so.get("spec") or {}, so.get("status") or {}
    triggers = []
    for t in spec.get("triggers") or []:
        meta = t.get("metadata") or {}
        target = meta.get("value") or meta.get("threshold") or meta.get("targetValue") or ""
        triggers.append(KedaTrigger(t.get("type", ""), t.get("metricType", ""), target))
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    return ScaledObjectState(
        name,
        status.get("hpaName") or f"keda-hpa-{name}",
        spec.get("minReplicaCount"),
        spec.get("maxReplicaCount"),
        tuple(triggers),
        ready,
    )


def _message(body) -> str:
    try:
        msg = json.loads(body).get("message", "")
    except (TypeError, ValueError, AttributeError):
        msg = ""
    return f": {msg}" if msg else ""

"""Which deployment mode an InferenceService gets, and where kfp-bench learnt it: ``Mode``.

KServe takes it (GetDeploymentMode, utils.go at aaac4e29) from the status, then the
serving.kserve.io/deploymentMode annotation, then ``defaultDeploymentMode`` in the ``deploy``
key of KServe's inferenceservice-config ConfigMap. ``learn_mode`` follows that order from what
kfp-bench may read: the isvc parameter, the InferenceService, the ConfigMap (kserve_namespace,
else ``KSERVE_NAMESPACES``). A Role that cannot read it (a 403) leaves the ``Mode`` unnamed
with why in ``unread``. The module never prints."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from kfp_bench.errors import ConfigError, KubeError
from kfp_bench.kserve.kube import Kube
from kfp_bench.kserve.spec import (
    DEPLOYMENT_MODES,
    KNATIVE_MODES,
    MODE_ANNOTATION,
    SERVERLESS,
    IsvcSpec,
)

CONFIG_MAP = "inferenceservice-config"
DEPLOY_KEY = "deploy"
DEFAULT_KEY = "defaultDeploymentMode"
#: Where KServe's ConfigMap is looked for when the isvc gives no kserve_namespace, in this order:
#: KServe's controller reads it in its own namespace (kserve/kserve aaac4e29,
#: pkg/constants/constants.go KServeNamespace: $POD_NAMESPACE, else kserve). Kubeflow's manifests
#: install KServe in kubeflow (kubeflow/manifests 009c8808, applications/kserve/kserve/
#: kustomization.yaml: kserve_kubeflow.yaml, whose inferenceservice-config has namespace
#: kubeflow); KServe's own in kserve (config/default/kustomization.yaml, namespace: kserve).
KSERVE_NAMESPACES = ("kubeflow", "kserve")


@dataclass(frozen=True, slots=True)
class Mode:
    """A deployment mode and where it was learnt.

    Attributes:
        name: Serverless, Knative, RawDeployment or Standard; "" when it could not be learnt.
        source: where it was learnt, as the steps say it.
        warning: why it was not learnt from the cluster's ConfigMap, when kfp-bench tried; "".
    """

    name: str
    source: str = ""
    warning: str = ""
    unread: str = ""

    @property
    def knative(self) -> bool:
        """Knative scales it (a KPA), not an HPA."""
        return self.name in KNATIVE_MODES

    def said(self) -> str:
        """The mode and its source as one line for a step's output."""
        text = f"deployment mode {self.name or 'unknown'}"
        text += f" (from {self.source})" if self.source else ""
        text += f"; {self.unread}" if self.unread else ""
        return text + (f"; WARNING: {self.warning}" if self.warning else "")

    def also(self, warning: str) -> Mode:
        """This mode with ``warning`` added before its own."""
        both = "; ".join(w for w in (warning, self.warning) if w)
        return replace(self, warning=both)

    def after(self, unknown: Mode) -> Mode:
        """This mode, learnt after ``unknown`` (the cluster's default, not learnt): its warning
        and its note of why carried over."""
        return replace(self.also(unknown.warning), unread=unknown.unread)

    def assumed(self, why: str) -> Mode:
        """Serverless, assumed for want of this (unknown) mode: a warning saying ``why``, and
        why the cluster's default was not learnt."""
        return Mode(SERVERLESS, "nowhere: assumed").also(why).also(self.warning).also(self.unread)


def learn_mode(kube: Kube, spec: IsvcSpec, isvc: dict | None = None) -> Mode:
    """The mode ``spec``'s InferenceService gets: the one it asks for, else the one the object
    ``isvc`` (when given) records, else the cluster's default.

    Raises:
        ConfigError: the cluster's default is ModelMesh, which kfp-bench does not deploy.
    """
    if spec.deployment_mode:
        return Mode(spec.deployment_mode, "the isvc parameter's deployment_mode")
    found = mode_of(isvc) if isvc is not None else None
    return found or cluster_default(kube, spec.kserve_namespace)


def mode_of(isvc: dict) -> Mode | None:
    """The mode an InferenceService object records (status first, as KServe reads it); None
    when it records none (a Knative default before the controller reconciled it)."""
    status = (isvc.get("status") or {}).get("deploymentMode")
    if status:
        return Mode(status, "the InferenceService's status.deploymentMode")
    annotated = ((isvc.get("metadata") or {}).get("annotations") or {}).get(MODE_ANNOTATION)
    if annotated:
        return Mode(annotated, "the InferenceService's deploymentMode annotation, set by KServe")
    return None


def cluster_default(kube: Kube, namespace: str = "") -> Mode:
    """``defaultDeploymentMode`` of KServe's ConfigMap in ``namespace``, else in the first of
    ``KSERVE_NAMESPACES`` that holds it; without a name when it cannot be read: refused (a note
    in ``unread``) or in none of them (a warning naming kserve_namespace)."""
    refused = []
    for ns in (namespace,) if namespace else KSERVE_NAMESPACES:
        try:
            found = kube.get_config_map(CONFIG_MAP, ns)
        except KubeError as exc:  # a Role for the benchmark's namespace only: 403
            refused.append(str(exc))
            continue
        if found is not None:
            return _default_in(found.get("data") or {}, f"ConfigMap {ns}/{CONFIG_MAP}")
    if refused:
        return Mode("", unread=f"the cluster's default is not readable here: {'; '.join(refused)}")
    where = f"namespaces {' or '.join(KSERVE_NAMESPACES)}"
    where = f"namespace {namespace}" if namespace else where
    return Mode("", warning=f"no ConfigMap {CONFIG_MAP} in {where}, so the cluster's default "
                "deployment mode is unknown: set isvc kserve_namespace to the namespace KServe "
                "is installed in")  # fmt: skip


def _default_in(data: dict, where: str) -> Mode:
    """The mode the ConfigMap's ``data`` (found at ``where``) names."""
    try:
        mode = json.loads(data.get(DEPLOY_KEY) or "{}").get(DEFAULT_KEY) or ""
    except (ValueError, AttributeError):
        mode = ""
    if mode == "ModelMesh":
        raise ConfigError(
            f"isvc deployment_mode: the cluster's default ({DEFAULT_KEY} in {where}) is "
            "ModelMesh, which kfp-bench does not deploy; give deployment_mode Serverless or "
            "Standard"
        )
    if mode not in DEPLOYMENT_MODES:
        return Mode("", warning=f"{where} names no known {DEFAULT_KEY} ({mode!r})")
    return Mode(mode, f"the cluster's default, {DEFAULT_KEY} in {where}")

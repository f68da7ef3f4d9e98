"""Which deployment mode an InferenceService gets, and where kfp-bench learnt it: ``Mode``.

KServe decides an InferenceService's mode (kserve/kserve at aaac4e29,
pkg/controller/v1beta1/inferenceservice/utils/utils.go GetDeploymentMode) from, in order, its
status.deploymentMode (set by the controller once it reconciled it, controller.go), its
serving.kserve.io/deploymentMode annotation, and the cluster's default: ``defaultDeploymentMode``
in the JSON of the ``deploy`` key of the ``inferenceservice-config`` ConfigMap in KServe's
namespace (pkg/constants/constants.go InferenceServiceConfigMapName, KServeNamespace;
pkg/apis/serving/v1beta1/configmap.go DeployConfigName, NewDeployConfig: Serverless, Knative,
RawDeployment, Standard or ModelMesh). Its defaulting webhook writes a Standard or ModelMesh default
onto the annotation, a Knative default not (apis/serving/v1beta1/inference_service_defaults.go
DefaultInferenceService).

``learn_mode`` follows that order from what kfp-bench may read: the isvc parameter's mode, the
InferenceService when there is one, then the ConfigMap, which a namespaced Role may not reach (a
403): the ``Mode`` then says so in ``warning`` and has no name. The module never prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from kfp_bench.errors import ConfigError, KubeError
from kfp_bench.kserve.kube import Kube
from kfp_bench.kserve.spec import DEPLOYMENT_MODES, KNATIVE_MODES, MODE_ANNOTATION, IsvcSpec

CONFIG_MAP = "inferenceservice-config"
DEPLOY_KEY = "deploy"
DEFAULT_KEY = "defaultDeploymentMode"


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

    @property
    def knative(self) -> bool:
        """Knative scales it (a KPA), not an HPA."""
        return self.name in KNATIVE_MODES

    def said(self) -> str:
        """The mode and its source as one line for a step's output."""
        text = f"deployment mode {self.name or 'unknown'}"
        text += f" (from {self.source})" if self.source else ""
        return text + (f"; WARNING: {self.warning}" if self.warning else "")

    def also(self, warning: str) -> Mode:
        """This mode with ``warning`` added before its own."""
        both = "; ".join(w for w in (warning, self.warning) if w)
        return Mode(self.name, self.source, both)


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


def cluster_default(kube: Kube, namespace: str) -> Mode:
    """``defaultDeploymentMode`` of KServe's ConfigMap in ``namespace``; a ``Mode`` without a
    name whose warning says why when it cannot be read."""
    where = f"ConfigMap {namespace}/{CONFIG_MAP}"
    try:
        data = kube.config_map(CONFIG_MAP, namespace)
    except KubeError as exc:  # a Role for the benchmark's namespace only: 403
        return Mode("", warning=f"cannot read the cluster's default deployment mode: {exc}")
    if data is None:
        return Mode("", warning=f"no {where} (is KServe installed in namespace {namespace}? "
                    "set isvc kserve_namespace to its namespace)")  # fmt: skip
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

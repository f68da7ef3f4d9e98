"""An InferenceService from parameters: ``IsvcSpec``, its checks, and its JSON body.

``IsvcSpec`` holds the knobs of KServe's autoscaling guide (an optional transformer has its own
``ScaleSpec``); ``validate()`` raises ``ConfigError`` naming the parameter and the fix before
anything is created; ``to_dict()`` is the plain JSON body (validated in the tests against
KServe's CRD), not the kserve SDK's models, whose 69 packages cost a step's pod a minute.
The checks: no GPU for a format whose runtimes ship no CUDA (``MODEL_FORMATS``); an HPA
(RawDeployment, Standard) knows cpu and memory only and never scales to zero, so concurrency,
rps, minReplicas 0 and containerConcurrency need Knative; KEDA scales RawDeployment only, on
cpu or memory. With no deployment_mode they use the cluster's default, once deploy learnt it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields

from kfp_bench.errors import ConfigError
from kfp_bench.kserve.kube import DEFAULT_NAMESPACE
from kfp_bench.names import check_dns1123_label

#: Model formats of KServe's ClusterServingRuntimes -> whether a GPU image serves them.
MODEL_FORMATS = {
    "sklearn": False,
    "xgboost": False,
    "lightgbm": False,
    "pmml": False,
    "tensorflow": True,
    "pytorch": True,
    "onnx": True,
    "triton": True,
    "huggingface": True,
}
SCALE_METRICS = ("concurrency", "rps", "cpu", "memory")
#: KServe's serving.kserve.io/deploymentMode values: Knative and Standard are the names KServe
#: 0.16 gave Serverless and RawDeployment (kserve/kserve at aaac4e29, pkg/constants/constants.go
#: DeploymentModeType, ParseDeploymentMode; renamed in 92899a1f, first in v0.16.0), which still
#: takes the old names. Releases before 0.16 know only the old ones.
SERVERLESS = "Serverless"
KNATIVE_MODES = (SERVERLESS, "Knative")
HPA_MODES = ("RawDeployment", "Standard")
DEPLOYMENT_MODES = KNATIVE_MODES + HPA_MODES
MODE_ANNOTATION = "serving.kserve.io/deploymentMode"
#: KServe v0.15.2's autoscaler of a RawDeployment component (pkg/constants/constants.go:95, values
#: ll. 186-192): hpa (the default) or keda (a KEDA ScaledObject, which drives an HPA), as chosen
#: in pkg/controller/v1beta1/inferenceservice/reconcilers/autoscaler/autoscaler_reconciler.go:77-99.
AUTOSCALER_ANNOTATION = "serving.kserve.io/autoscalerClass"
HPA_CLASS, KEDA_CLASS = "hpa", "keda"
AUTOSCALER_CLASSES = (HPA_CLASS, KEDA_CLASS)
TARGET_ANNOTATION = "autoscaling.knative.dev/target"
METRIC_ANNOTATION = "autoscaling.knative.dev/metric"
GPU = "nvidia.com/gpu"
#: KServe names the Knative Service (or Deployment and Service) of each component NAME-predictor
#: and NAME-transformer: Kubernetes names of 63 characters at most. So 51 for NAME.
MAX_NAME = 63 - len("-transformer")
_QUANTITY = re.compile(r"\d+(\.\d+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?")
DEFAULT_STORAGE_URI = "gs://kfserving-examples/models/sklearn/1.0/model"
#: The labels of every InferenceService kfp-bench creates: who manages it, and which benchmark
#: made it (its id, a DNS-1123 label, so a valid label value). Cleanup deletes only an
#: InferenceService whose BENCHMARK_LABEL is its own benchmark's id. KServe copies the
#: InferenceService's labels onto what it makes from it (kserve/kserve at aaac4e29,
#: pkg/controller/v1beta1/inferenceservice/): components/predictor.go buildObjectMeta and
#: transformer.go / explainer.go build each component's metadata as
#: utils.Union(runtime labels, isvc.Labels, component labels); reconcilers/knative/
#: ksvc_reconciler.go gives the Knative Service those labels and its revision template (which
#: Knative copies to each revision and its pods) the same minus ServiceLabelDisallowedList (only
#: networking.kserve.io/visibility; a cluster may add keys in its inferenceservice ConfigMap);
#: reconcilers/deployment/deployment_reconciler.go uses them for RawDeployment's Deployment and
#: its pod template. Those objects are owned by the InferenceService and go with it.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "kfp-bench"
BENCHMARK_LABEL = "kfp-bench/benchmark-id"


@dataclass(frozen=True, slots=True)
class ScaleSpec:
    """How one component (predictor or transformer) scales and what it may use.

    Attributes:
        scale_target: the autoscaler's target per pod of scale_metric (e.g. 1 request in flight);
            0 writes none, as KServe's guide does beside containerConcurrency: Knative then
            targets container_concurrency, else 100 in flight or 200 requests/s
            (``watch.knative_target``), an HPA 80% of the request (KServe's default).
        scale_metric: concurrency or rps (Knative's KPA), or cpu or memory (an HPA).
        container_concurrency: a hard limit of requests in flight per pod (Knative); 0: none.
        min_replicas: the fewest pods; 0 scales to zero (Serverless only).
        max_replicas: the most pods; 0: no limit.
        cpu: CPU request and limit, e.g. 1 or 500m; empty: the runtime's default.
        memory: memory request and limit, e.g. 2Gi; empty: the runtime's default.
        gpu: nvidia.com/gpu limit; 0 for none.
    """

    scale_target: int = 1
    scale_metric: str = "concurrency"
    container_concurrency: int = 0
    min_replicas: int = 1
    max_replicas: int = 0
    cpu: str = ""
    memory: str = ""
    gpu: int = 0

    def validate(self, where: str, mode: str) -> None:
        """Check the fields; with ``mode`` one of HPA_MODES also what an HPA cannot do (an empty
        ``mode``, the cluster's default not yet known, checks the rest)."""

        def bad(name: str, value, fix: str) -> ConfigError:
            return ConfigError(f"isvc {where}{name}={value!r}: {fix}")

        if self.scale_metric not in SCALE_METRICS:
            raise bad("scale_metric", self.scale_metric, f"use one of {', '.join(SCALE_METRICS)}")
        for name in ("scale_target", "container_concurrency", "min_replicas", "max_replicas"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise bad(name, value, "give a whole number")
        if self.scale_target < 0:
            raise bad("scale_target", self.scale_target, "give a target above 0, e.g. 1, or 0 "
                      "for KServe's default")  # fmt: skip
        if self.container_concurrency < 0:
            raise bad("container_concurrency", self.container_concurrency, "give 0 (no limit) "
                      "or a positive limit of requests in flight per pod")  # fmt: skip
        if self.min_replicas < 0 or self.max_replicas < 0:
            raise bad("min_replicas", self.min_replicas, "replica counts cannot be negative")
        if self.max_replicas and self.min_replicas > self.max_replicas:
            raise bad("min_replicas", self.min_replicas,
                      f"must not exceed max_replicas={self.max_replicas}; lower it or raise "
                      "max_replicas (0: no limit)")  # fmt: skip
        if not isinstance(self.gpu, int) or isinstance(self.gpu, bool) or self.gpu < 0:
            raise bad("gpu", self.gpu, "give a whole number of GPUs, 0 for none")
        for name in ("cpu", "memory"):
            value = getattr(self, name)
            if value and not _QUANTITY.fullmatch(str(value)):
                raise bad(name, value, "give a Kubernetes quantity, e.g. 500m, 1 or 2Gi")
        if mode in HPA_MODES:
            if self.scale_metric in ("concurrency", "rps"):
                raise bad("scale_metric", self.scale_metric, f"{mode} scales with an HPA, which "
                          "knows cpu and memory only; use one of them or deployment_mode "
                          "Serverless")  # fmt: skip
            if self.min_replicas == 0:
                raise bad("min_replicas", 0, f"{mode} (HPA) cannot scale to zero; give 1 or "
                          "more, or deployment_mode Serverless")  # fmt: skip
            if self.container_concurrency:
                raise bad("container_concurrency", self.container_concurrency, "a Knative "
                          f"setting, not used by {mode}; give 0 or deployment_mode "
                          "Serverless")  # fmt: skip

    def resources(self) -> dict | None:
        """The resources (requests and limits) of cpu, memory and gpu, or None when none is set;
        a GPU is a limit only (Kubernetes takes the request from it)."""
        amounts = {k: str(v) for k, v in (("cpu", self.cpu), ("memory", self.memory)) if v}
        limits = dict(amounts)
        if self.gpu:
            limits[GPU] = str(self.gpu)
        if not limits:
            return None
        return {"limits": limits, "requests": amounts} if amounts else {"limits": limits}

    def validate_keda(self, where: str) -> None:
        """What KServe v0.15.2 lets KEDA scale on (pkg/apis/serving/v1beta1/
        inference_service_validation.go:331-345 and 272-278): no scaleMetric, a Resource metric
        of cpu or memory at a Utilization it must be given, 1 to 100%."""
        if not 1 <= self.scale_target <= 100:
            raise ConfigError(
                f"isvc {where}scale_target={self.scale_target!r}: KEDA scales on a "
                f"{self.scale_metric} utilization, which KServe wants given in percent of the "
                "request: give 1 to 100"
            )

    def component_fields(self, old_schema: bool, keda: bool = False) -> dict:
        """The scale fields of a V1beta1 predictor or transformer spec (camelCase, as sent);
        ``keda``: the autoScaling metrics KEDA reads instead of scaleMetric and scaleTarget."""
        out = {"minReplicas": self.min_replicas}
        if self.max_replicas:
            out["maxReplicas"] = self.max_replicas
        if self.container_concurrency:
            out["containerConcurrency"] = self.container_concurrency
        if keda:  # one Resource metric, the utilization scale_target of scale_metric
            # (component.go:135-215; KServe makes it a ScaledObject's trigger in
            # reconcilers/keda/keda_reconciler.go:79-107)
            target = {"type": "Utilization", "averageUtilization": self.scale_target}
            resource = {"name": self.scale_metric, "target": target}
            out["autoScaling"] = {"metrics": [{"type": "Resource", "resource": resource}]}
        elif not old_schema:
            out["scaleMetric"] = self.scale_metric
            if self.scale_target:  # else none: KServe writes no target annotation then
                out["scaleTarget"] = self.scale_target
        return out

    def annotations(self, old_schema: bool) -> dict:
        """The old schema's Knative annotations, when it is asked for."""
        if not old_schema:
            return {}
        out = {METRIC_ANNOTATION: self.scale_metric}
        if self.scale_target:
            out[TARGET_ANNOTATION] = str(self.scale_target)
        return out


@dataclass(frozen=True, slots=True)
class IsvcSpec:
    """An InferenceService to deploy for a benchmark.

    Attributes:
        name: the InferenceService's name: lower-case letters, digits and dashes, starting with a
            letter, at most 51 characters (so that NAME-transformer, which KServe derives, fits).
        namespace: its namespace; the pipeline's is ``kube.kube_namespace``'s.
        model_format: the predictor's model format: sklearn, xgboost, lightgbm, pmml,
            tensorflow, pytorch, onnx, triton or huggingface.
        storage_uri: where the model lives (gs://, s3://, pvc://, https://, hf://).
        runtime_version: the serving runtime's image tag; empty for the runtime's default.
        protocol_version: v1 or v2 (Open Inference Protocol); empty for the runtime's default.
        deployment_mode: Serverless or Knative (Knative, KPA), or RawDeployment or Standard
            (Deployment and HPA); empty (the default) writes no deploymentMode annotation, so
            the cluster's default applies (its inferenceservice-config ConfigMap).
        old_schema: write scaleTarget and scaleMetric as the old autoscaling.knative.dev/target
            and /metric annotations instead of fields.
        predictor: the predictor's scale and resources (a ScaleSpec).
        transformer_image: the transformer's container image; empty for no transformer.
        transformer: the transformer's own scale and resources (a ScaleSpec).
        kserve_namespace: the namespace KServe is installed in, where its
            inferenceservice-config ConfigMap names the cluster's default deployment mode;
            empty (the default): kubeflow (Kubeflow's manifests), then kserve (KServe's own),
            whichever holds it (``mode.KSERVE_NAMESPACES``).
        runtime: the name of a ServingRuntime (or ClusterServingRuntime) to serve the model;
            empty lets KServe pick one supporting model_format.
        model_args: the model server's arguments (predictor.model.args), e.g. for huggingface
            ``--model_name=NAME`` and ``--model_id=ORG/MODEL`` (``kserve.llm`` builds these).
            With model_args, storage_uri may be empty: the model comes from the arguments.
        autoscaler_class: what scales a RawDeployment (Standard) component: hpa or keda (a KEDA
            ScaledObject on a cpu or memory utilization of scale_target percent, driving an
            HPA); empty (the default) writes no annotation: KServe's default, hpa.
    """

    name: str
    namespace: str = DEFAULT_NAMESPACE
    model_format: str = "sklearn"
    storage_uri: str = DEFAULT_STORAGE_URI
    runtime_version: str = ""
    protocol_version: str = ""
    deployment_mode: str = ""
    old_schema: bool = False
    predictor: ScaleSpec = field(default_factory=ScaleSpec)
    transformer_image: str = ""
    transformer: ScaleSpec = field(default_factory=ScaleSpec)
    kserve_namespace: str = ""
    runtime: str = ""
    model_args: tuple[str, ...] = ()
    autoscaler_class: str = ""

    @classmethod
    def from_dict(cls, doc: dict) -> IsvcSpec:
        """An ``IsvcSpec`` from a JSON object (the pipeline's isvc parameter); ``predictor`` and
        ``transformer`` are objects of ``ScaleSpec`` fields. Unknown keys are refused."""
        if not isinstance(doc, dict):
            raise ConfigError(f"isvc {doc!r}: give a JSON object of IsvcSpec fields")
        _known(doc, cls, "isvc")
        doc = dict(doc)
        for part in ("predictor", "transformer"):
            if part in doc:
                sub = doc[part]
                if not isinstance(sub, dict):
                    raise ConfigError(
                        f"isvc {part}={sub!r}: give a JSON object of ScaleSpec fields"
                    )
                _known(sub, ScaleSpec, f"isvc {part}")
                doc[part] = ScaleSpec(**{k: _whole(v) for k, v in sub.items()})
        if "name" not in doc:
            raise ConfigError("isvc: no name; give the InferenceService a name, e.g. bench-iris")
        args = doc.get("model_args", ())
        if not isinstance(args, list | tuple) or not all(isinstance(a, str) for a in args):
            raise ConfigError(
                f"isvc model_args={args!r}: give a list of strings, e.g. "
                '["--model_name=llm", "--model_id=facebook/opt-125m"]'
            )
        doc["model_args"] = tuple(args)
        return cls(**doc)

    def as_dict(self) -> dict:
        """The fields as JSON values (model_args a list), as ``from_dict`` takes them."""
        return {**asdict(self), "model_args": list(self.model_args)}

    def validate(self, mode: str = "") -> IsvcSpec:
        """Check every field; raise ``ConfigError`` naming the field and the fix. ``mode``: the
        deployment mode the cluster will use when ``deployment_mode`` is empty (its default, as
        ``deploy.learn_mode`` found it); with neither, the HPA checks wait until it is known."""
        check_dns1123_label(self.namespace, "isvc namespace=")
        if self.kserve_namespace:
            check_dns1123_label(self.kserve_namespace, "isvc kserve_namespace=")
        check_dns1123_label(self.name, "isvc name=", MAX_NAME)
        if not self.name[0].isalpha():
            raise ConfigError(
                f"isvc name={self.name!r}: KServe wants a name that starts with a letter; "
                f"e.g. isvc-{self.name}"
            )
        if self.model_format not in MODEL_FORMATS:
            raise ConfigError(
                f"isvc model_format={self.model_format!r}: unknown; use one of "
                f"{', '.join(MODEL_FORMATS)}"
            )
        if self.deployment_mode and self.deployment_mode not in DEPLOYMENT_MODES:
            raise ConfigError(
                f"isvc deployment_mode={self.deployment_mode!r}: use one of "
                f"{', '.join(DEPLOYMENT_MODES)}, or leave it out for the cluster's default"
            )
        mode = self.deployment_mode or mode
        if self.runtime:
            check_dns1123_label(self.runtime, "isvc runtime=")
        if not (self.storage_uri or self.model_args) or (
            self.storage_uri and "://" not in self.storage_uri
        ):
            raise ConfigError(
                f"isvc storage_uri={self.storage_uri!r}: give a model URI, e.g. "
                f"{DEFAULT_STORAGE_URI}, or model_args that name the model (huggingface: "
                "--model_id=ORG/MODEL)"
            )
        if self.protocol_version not in ("", "v1", "v2"):
            raise ConfigError(f"isvc protocol_version={self.protocol_version!r}: use v1 or v2")
        if self.autoscaler_class:
            mode = self._check_autoscaler(mode)
        self.predictor.validate("predictor.", mode)
        if self.autoscaler_class == KEDA_CLASS:
            self.predictor.validate_keda("predictor.")
            if self.transformer_image:
                self.transformer.validate_keda("transformer.")
        if self.predictor.gpu and not MODEL_FORMATS[self.model_format]:
            gpu_formats = ", ".join(k for k, v in MODEL_FORMATS.items() if v)
            raise ConfigError(
                f"isvc predictor.gpu={self.predictor.gpu}: KServe's {self.model_format} runtime "
                f"has no GPU image; use gpu 0, or a model format with GPU support ({gpu_formats})"
            )
        if self.transformer_image:
            self.transformer.validate("transformer.", mode)
        return self

    def _check_autoscaler(self, mode: str) -> str:
        """Refuse an autoscaler_class KServe does not use for ``mode``; the mode to check the
        scale settings against (a RawDeployment's, as KEDA's ScaledObject drives an HPA)."""
        if self.autoscaler_class not in AUTOSCALER_CLASSES:
            raise ConfigError(
                f"isvc autoscaler_class={self.autoscaler_class!r}: use one of "
                f"{', '.join(AUTOSCALER_CLASSES)}, or leave it out for KServe's default (hpa)"
            )
        if mode and mode not in HPA_MODES:
            raise ConfigError(
                f"isvc autoscaler_class={self.autoscaler_class!r}: KServe reads it in "
                f"RawDeployment only, not in {mode}, where Knative scales; give "
                "deployment_mode RawDeployment, or leave autoscaler_class out"
            )
        if self.autoscaler_class == KEDA_CLASS and self.old_schema:
            raise ConfigError(
                "isvc old_schema=True: the old schema writes Knative's annotations, which "
                "KEDA does not read; leave old_schema out with autoscaler_class keda"
            )
        return mode or HPA_MODES[0]

    def to_dict(self, *, benchmark_id: str, mode: str = "") -> dict:
        """The InferenceService as the JSON body sent to the Kubernetes API (camelCase), validated,
        labelled as made by kfp-bench for the benchmark ``benchmark_id`` (``benchmark_labels``);
        ``mode``: the cluster's default deployment mode, when known, to validate against.

        Its spec equals what the kserve SDK sent (``V1beta1InferenceService`` and its specs,
        serialized by ``ApiClient.sanitize_for_serialization`` of kserve/api_client.py, which
        drops unset fields; tests/kserve/isvc_golden.json records it)."""
        self.validate(mode)
        labels = benchmark_labels(benchmark_id)
        # model.name "" is V1beta1ModelSpec's default (kserve/models/v1beta1_model_spec.py,
        # __init__): the SDK always sent it, so the body stays the one clusters took from it.
        model = {"modelFormat": {"name": self.model_format}, "name": ""}
        _put(model, "storageUri", self.storage_uri)
        _put(model, "runtime", self.runtime)
        _put(model, "args", list(self.model_args))
        if self.runtime_version:
            model["runtimeVersion"] = self.runtime_version
        if self.protocol_version:
            model["protocolVersion"] = self.protocol_version
        _put(model, "resources", self.predictor.resources())
        old, keda = self.old_schema, self.autoscaler_class == KEDA_CLASS
        spec = {"predictor": {"model": model, **self.predictor.component_fields(old, keda)}}
        if self.transformer_image:
            container = {"image": self.transformer_image, "name": "kserve-container"}
            _put(container, "resources", self.transformer.resources())
            transformer = {
                "containers": [container],
                **self.transformer.component_fields(old, keda),
            }
            _put(transformer, "annotations", self.transformer.annotations(old))
            spec["transformer"] = transformer
        # The mode annotation only when asked for: without it KServe applies the cluster's
        # default (pkg/controller/v1beta1/inferenceservice/utils/utils.go GetDeploymentMode), and
        # one written always (Serverless) never becomes ready where Knative is not installed.
        annotations = self.predictor.annotations(old)
        if self.deployment_mode:
            annotations = {MODE_ANNOTATION: self.deployment_mode, **annotations}
        if self.autoscaler_class:
            annotations = {**annotations, AUTOSCALER_ANNOTATION: self.autoscaler_class}
        metadata = {"name": self.name, "namespace": self.namespace}
        _put(metadata, "annotations", annotations)
        return {
            "apiVersion": "serving.kserve.io/v1beta1",
            "kind": "InferenceService",
            "metadata": {**metadata, "labels": labels},
            "spec": spec,
        }


def benchmark_labels(benchmark_id: str) -> dict:
    """The labels of an InferenceService of the benchmark ``benchmark_id`` (a DNS-1123 label:
    ``ConfigError`` otherwise, so that nothing is created without its owner's mark)."""
    check_dns1123_label(benchmark_id, "benchmark id")
    return {MANAGED_BY_LABEL: MANAGED_BY, BENCHMARK_LABEL: benchmark_id}


def benchmark_of(isvc: dict) -> str:
    """The benchmark id an InferenceService is labelled with; "" when it has none."""
    return ((isvc.get("metadata") or {}).get("labels") or {}).get(BENCHMARK_LABEL, "")


def _put(doc: dict, key: str, value) -> None:
    """Set ``key`` only when ``value`` is not empty: the SDK's serializer left unset fields out."""
    if value:
        doc[key] = value


def _known(doc: dict, cls, where: str) -> None:
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(doc) - names)
    if unknown:
        raise ConfigError(f"{where}: unknown fields {unknown}; known: {', '.join(sorted(names))}")


def _whole(value):
    """A KFP dict parameter's numbers arrive as doubles: 1.0 becomes 1."""
    return int(value) if isinstance(value, float) and value.is_integer() else value

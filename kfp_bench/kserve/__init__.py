"""KServe: InferenceServices from parameters, deploy, wait and delete, and the replica watcher.

``spec`` (parameters -> V1beta1InferenceService, checked), ``kube`` (the one small interface over
the kubernetes and kserve clients), ``deploy`` (deploy, wait until ready, delete), ``watch`` (ready
and total pods and the Knative PodAutoscaler's scales, as rows) and ``coldstart`` (time to the
first success from zero pods). Importing this package imports neither kserve nor kubernetes, and
its names are imported on first use (``kfp_bench._lazy``).
"""

from kfp_bench._lazy import exports

_WHERE = {"IsvcSpec": "spec", "ScaleSpec": "spec"}
__all__ = sorted(_WHERE)
__getattr__ = exports(__name__, _WHERE)

"""Where KServe's inferenceservice-config is found (issue 24, part 5): with no kserve_namespace,
in kubeflow (Kubeflow's manifests) then kserve (KServe's own), whichever holds it, with no
warning on either install; a given kserve_namespace is read alone; a warning naming the parameter
only when no namespace looked in holds it.

No Kubernetes API can run here: the cluster is ``fake_kube``, the loopback API of recorded
responses behind the real kubernetes client; the scenario says which namespace holds KServe's
ConfigMap, and a GET in any other answers 404, as the API server does.
"""

from __future__ import annotations

from kfp_bench.kserve.deploy import deploy
from kfp_bench.kserve.mode import cluster_default
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec
from tests.kserve.fake_kube import CM_KSERVE, CM_PATH, NS, READY, Scenario

RAW = IsvcSpec("bench-iris", namespace=NS, predictor=ScaleSpec(scale_target=80, scale_metric="cpu"))


def test_a_standard_kubeflow_install_is_read_in_kubeflow_first_without_a_warning(fake, kube):
    s = fake.play(Scenario(conditions=[READY], default_mode="Serverless"))
    mode = cluster_default(kube)
    assert (mode.name, mode.warning, mode.unread) == ("Serverless", "", "")
    assert mode.source == "the cluster's default, defaultDeploymentMode in ConfigMap " + (
        "kubeflow/inferenceservice-config"
    )
    assert s.requests == [f"GET {CM_PATH}"]


def test_kserves_own_install_is_read_in_kserve_after_kubeflow_without_a_warning(fake, kube):
    s = fake.play(Scenario(conditions=[READY], default_mode="Standard", kserve_namespace="kserve"))
    done = deploy(kube, RAW, benchmark_id="ns-1", timeout_s=5, poll_s=0.01)
    assert done.mode.name == "Standard" and not done.mode.warning
    assert "ConfigMap kserve/inferenceservice-config" in done.mode.said()
    assert s.requests[:2] == [f"GET {CM_PATH}", f"GET {CM_KSERVE}"]


def test_neither_namespace_holding_it_warns_naming_the_parameter(fake, kube):
    fake.play(Scenario(conditions=[READY], kserve_namespace="kserve-system"))
    mode = cluster_default(kube)
    assert mode.name == ""
    assert "no ConfigMap inferenceservice-config in namespaces kubeflow or kserve" in mode.warning
    assert "set isvc kserve_namespace to the namespace KServe is installed in" in mode.warning


def test_a_given_kserve_namespace_is_read_alone(fake, kube):
    s = fake.play(Scenario(kserve_namespace="kserve-system", default_mode="Standard"))
    assert cluster_default(kube, "kserve-system").name == "Standard"
    assert s.requests == ["GET /api/v1/namespaces/kserve-system/configmaps/inferenceservice-config"]
    s = fake.play(Scenario())  # KServe in kubeflow, but the parameter says kserve
    mode = cluster_default(kube, "kserve")
    assert s.requests == [f"GET {CM_KSERVE}"]
    assert mode.name == "" and "in namespace kserve" in mode.warning
    assert "set isvc kserve_namespace" in mode.warning


def test_a_refusal_is_a_note_not_a_warning(fake, kube):
    """A profile's default-editor may read no ConfigMap outside its namespace (a standard
    Kubeflow install): the ConfigMap may well be there, so this is said, not warned as absent;
    the mode is then learnt from the InferenceService (test_kube)."""
    fake.play(Scenario(config_map="forbidden"))
    mode = cluster_default(kube)
    assert mode.name == "" and mode.warning == ""
    assert "HTTP 403 Forbidden" in mode.unread and 'namespace "kubeflow"' in mode.unread
    assert "WARNING" not in mode.said()


def test_the_isvc_parameter_leaves_kserve_namespace_empty_by_default():
    assert IsvcSpec.from_dict({"name": "x"}).kserve_namespace == ""
    assert IsvcSpec.from_dict({"name": "x", "kserve_namespace": "kserve"}).validate()

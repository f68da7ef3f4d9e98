"""deploy/: the in-cluster manifests validate against Kubernetes 1.30's schemas, strictly, and
grant only the verbs the benchmark calls.

kubernetes-validate ships the schemas of each Kubernetes version in its wheel: no download.
PodDefault is a Kubeflow CRD, which it has no schema for; its pod parts (env, volumes, mounts)
are validated inside a Pod instead.
"""

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
K8S = "1.30"


def _docs():
    return [
        (path.relative_to(DEPLOY), doc)
        for path in sorted(DEPLOY.rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


def _by_kind(kind):
    return [doc for _, doc in _docs() if doc["kind"] == kind]


def test_every_core_manifest_validates_strictly():
    checked = 0
    for _, doc in _docs():
        if doc["apiVersion"].startswith(("kubeflow.org/", "security.istio.io/")):
            continue  # CRDs: Istio's is validated against its own schema in tests/test_mesh.py
        kubernetes_validate.validate(doc, K8S, strict=True)  # raises ValidationError
        checked += 1
    assert checked >= 4, "expected a ServiceAccount, a Role and two RoleBindings"


def test_a_misspelt_field_fails_validation():
    """The check has teeth: strict mode rejects a field Kubernetes does not know."""
    (role,) = _by_kind("Role")
    bad = {**role, "rules": [{**role["rules"][0], "verb": ["get"]}]}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S, strict=True)


def test_the_role_grants_only_what_the_benchmark_calls():
    (role,) = _by_kind("Role")
    granted = {
        (group, resource): sorted(rule["verbs"])
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert granted == {
        ("serving.kserve.io", "inferenceservices"): ["create", "delete", "get"],
        ("", "pods"): ["get", "list", "watch"],
        ("autoscaling.internal.knative.dev", "podautoscalers"): ["get", "list", "watch"],
        ("autoscaling", "horizontalpodautoscalers"): ["get", "list", "watch"],
        ("keda.sh", "scaledobjects"): ["get", "list", "watch"],
    }
    binding = next(b for b in _by_kind("RoleBinding") if b["roleRef"]["kind"] == "Role")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert {"kind": "ServiceAccount", "name": "kfp-bench"} in binding["subjects"]


def test_the_poddefault_projects_a_token_for_the_kfp_api():
    (pd,) = _by_kind("PodDefault")
    spec = pd["spec"]
    (source,) = spec["volumes"][0]["projected"]["sources"]
    assert source["serviceAccountToken"]["audience"] == "pipelines.kubeflow.org"
    assert spec["selector"]["matchLabels"] == {"access-ml-pipeline": "true"}
    # Where kfp_bench.kfp.auth reads the token when KF_PIPELINES_SA_TOKEN_PATH is unset.
    from kfp_bench.kfp.auth import SA_TOKEN_PATH

    mount = spec["volumeMounts"][0]["mountPath"]
    assert f"{mount}/{source['serviceAccountToken']['path']}" == SA_TOKEN_PATH
    assert {"name": "KF_PIPELINES_SA_TOKEN_PATH", "value": SA_TOKEN_PATH} in spec["env"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "probe", "labels": spec["selector"]["matchLabels"]},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "python:3.11",
                    "env": spec["env"],
                    "volumeMounts": spec["volumeMounts"],
                }
            ],
            "volumes": spec["volumes"],
        },
    }
    kubernetes_validate.validate(pod, K8S, strict=True)

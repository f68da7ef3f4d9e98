"""One namespace for everything (issue 24, part 3): with the namespace parameter empty on
multi-user KFP, every Kubernetes object the benchmark creates, reads, watches or deletes goes to
the pod's own namespace, as its KFP calls (the lease included) do.

No Kubernetes API can run here: the cluster is ``fake_kube``, the loopback API of recorded
responses behind the real kubernetes client (reached through the default kubeconfig, as a step's
pod reaches its own), and it serves only its namespace NS. The KFP API is the local server in
multi-user mode with a required token. A pod is simulated in tmp_path: its service-account
namespace file at $KFP_BENCH_POD_NAMESPACE_PATH (standing in for /var/run/secrets/kubernetes.io/
serviceaccount/namespace) and its projected token at $KF_PIPELINES_SA_TOKEN_PATH.
"""

from __future__ import annotations

import json
import urllib.request
from urllib.parse import quote

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.lease import lease_name
from kfp_bench.steps import exit_handler, serving, start
from kfp_bench.steps.ids import benchmark_id_for
from kfp_bench.steps.params import BenchParams
from tests.kfp.conftest import GOOD, _start
from tests.kserve.fake_kube import CM_PATH, NS, READY, Frame, Scenario

ISVC = {"name": "bench-iris"}
UNREACHABLE = "http://127.0.0.1:9"  # discard: nothing answers there


@pytest.fixture(scope="module")
def kfp(tmp_path_factory):
    token = tmp_path_factory.mktemp("server") / "token"
    token.write_text(GOOD)
    with _start(simulate="all:fixed(0.2)", multi_user=True, token_file=str(token)) as s:
        yield s


@pytest.fixture
def single_user_kfp():
    with _start(simulate="all:fixed(0.2)") as s:
        yield s


@pytest.fixture
def pod(tmp_path, monkeypatch):
    """A pipeline pod of profile NS: its namespace file and projected token; no Secret."""
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "namespace").write_text(NS + "\n")
    (sa / "token").write_text(GOOD)
    monkeypatch.setenv("KFP_BENCH_POD_NAMESPACE_PATH", str(sa / "namespace"))
    monkeypatch.setenv("KF_PIPELINES_SA_TOKEN_PATH", str(sa / "token"))
    monkeypatch.setenv("KFP_BENCH_TOKEN_DIR", str(tmp_path / "no-secret"))
    return sa


def _experiments(kfp, namespace: str) -> list[str]:
    req = urllib.request.Request(f"{kfp.api_url}/experiments?namespace={quote(namespace)}")
    req.add_header("Authorization", f"Bearer {GOOD}")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return [e["display_name"] for e in json.loads(resp.read()).get("experiments", [])]


def test_every_object_of_a_run_goes_to_the_pods_namespace(kfp, pod, fake_cluster, tmp_path):
    s = fake_cluster.play(
        Scenario(conditions=[READY], frames=[Frame(1, 1, 1, 1)])  # KServe in kubeflow
    )
    given = BenchParams(kfp_host=kfp.url, isvc=ISVC, run_load=False, num_runs=1,
                        benchmark_id="podns", duration_sec=1.0)  # fmt: skip
    params = start.check_params(given, "run-1")
    bid = params["benchmark_id"]
    assert lease_name("podns") in _experiments(kfp, NS)  # the lease, a KFP experiment
    serving.deploy_isvc(BenchParams.from_dict(params), 5.0)
    s.pa_forbidden_after = 2  # ends the watch's window early
    serving.watch_replicas(BenchParams.from_dict(params), str(tmp_path / "replicas.json"))
    print(exit_handler.cleanup(given, "run-1", "SUCCEEDED", ""))  # the pipeline's own parameters

    assert [c["metadata"]["namespace"] for c in s.created] == [NS]
    assert s.deleted == ["bench-iris"]
    assert params["namespace"] == NS  # decided once, handed to every later step
    ours = [r for r in s.requests if "/configmaps/" not in r]
    assert {r.split("/namespaces/")[1].split("/")[0] for r in ours} == {NS}, ours
    assert any("/pods" in r for r in ours) and any("/podautoscalers" in r for r in ours)
    assert f"GET {CM_PATH}" in s.requests  # KServe's config, in KServe's namespace
    assert lease_name("podns") not in _experiments(kfp, NS)  # released
    assert not [e for e in _experiments(kfp, NS) if bid in e]  # swept


def test_cleanup_alone_finds_the_pods_namespace(kfp, pod, fake_cluster):
    """The exit handler reads the pipeline's parameters, not check_params' output."""
    s = fake_cluster.play(Scenario(conditions=[READY]))
    owner = benchmark_id_for("x-1", "run-2")  # as deploy_isvc labelled it
    s.store(s.admit(BenchParams(isvc=ISVC, namespace=NS).isvc_spec().to_dict(benchmark_id=owner)))
    given = BenchParams(kfp_host=kfp.url, isvc=ISVC, run_benchmark=False, benchmark_id="x-1")
    done = exit_handler.cleanup(given, "run-2", "FAILED", "")
    assert "InferenceService bench-iris deleted" in done
    assert s.deleted == ["bench-iris"]


def test_an_isvc_that_names_its_namespace_keeps_it_and_asks_no_api(tmp_path):
    p = BenchParams(kfp_host=UNREACHABLE, isvc={**ISVC, "namespace": "models"},
                    run_benchmark=False)  # fmt: skip
    assert p.with_namespace() is p
    assert p.isvc_spec().namespace == "models"
    given = BenchParams(kfp_host=UNREACHABLE, namespace="team-b", isvc=ISVC)
    assert given.with_namespace().isvc_spec().namespace == "team-b"


def test_single_user_kfp_keeps_default_for_kubernetes_objects(single_user_kfp, pod):
    p = BenchParams(kfp_host=single_user_kfp.url, isvc=ISVC).with_namespace()
    assert p.namespace == ""  # a single-user server takes none
    assert p.isvc_spec().namespace == "default"


def test_outside_a_pod_on_multi_user_kfp_the_cleanup_names_the_parameter(
    kfp, tmp_path, monkeypatch
):
    monkeypatch.setenv("KFP_BENCH_POD_NAMESPACE_PATH", str(tmp_path / "absent"))
    given = BenchParams(kfp_host=kfp.url, isvc=ISVC, run_benchmark=False)
    with pytest.raises(ConfigError, match="pipeline parameter namespace is empty"):
        given.with_namespace()
    done = exit_handler.cleanup(given, "run-3", "FAILED", "")
    assert done.startswith("nothing to clean up: ") and "namespace" in done

"""Issue 17: the pipeline's steps deploy only under a free name and delete only what carries this
benchmark's label, against ``fake_kube`` (no Kubernetes API runs in this tier, tests/cluster/ has
the real one; that loopback server stands in for one, keeping objects by name with uids, refusing
a taken name with 409 and honouring delete preconditions). The steps are the real ones; only their
kubeconfig is pointed at the fake.
"""

from __future__ import annotations

import json

import pytest

from kfp_bench.errors import NotOursError
from kfp_bench.kserve.deploy import NOT_OURS, delete
from kfp_bench.kserve.kube import Kube
from kfp_bench.steps import exit_handler, serving
from kfp_bench.steps.ids import benchmark_id_for
from kfp_bench.steps.params import BenchParams
from tests.kserve.fake_kube import ISVC_PATH, NS, READY, Scenario

#: A user's InferenceService, not made by kfp-bench, under the name the benchmark asks for.
USERS = {
    "apiVersion": "serving.kserve.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "bench-iris", "namespace": NS, "labels": {"team": "fraud"}},
    "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"},
                                     "storageUri": "gs://fraud/model"}}},
}  # fmt: skip


@pytest.fixture
def cluster(fake, monkeypatch):
    """The steps build ``Kube(namespace)`` from the default kubeconfig: give them the fake's."""
    from kfp_bench.kserve import kube

    real = kube._load_config
    monkeypatch.setattr(kube, "_load_config", lambda _file, _dict: real(None, fake.kube_config()))
    return fake


def _params(benchmark_id: str) -> BenchParams:
    return BenchParams(namespace=NS, run_benchmark=False, run_load=False, sweep_rates="",
                       isvc={"name": "bench-iris"}, benchmark_id=benchmark_id)  # fmt: skip


def _checked(prefix: str, job_id: str) -> BenchParams:
    """The parameters as check_params hands them on: the run's own benchmark id (issue 18);
    the exit handler derives the same from the prefix and the job id."""
    return _params(benchmark_id_for(prefix, job_id))


def _deletes(s: Scenario) -> list[str]:
    return [r for r in s.requests if r.startswith("DELETE")]


def test_a_users_isvc_of_that_name_is_refused_untouched_and_left_by_the_cleanup(cluster):
    s = cluster.play(Scenario(conditions=[READY], present=[USERS]))
    before = json.loads(json.dumps(s.live["bench-iris"]))
    with pytest.raises(NotOursError) as err:
        serving.deploy_isvc(_checked("bench-a", "job-a"), timeout_s=5)
    msg = str(err.value)
    assert "InferenceService bench-iris in namespace bench exists already" in msg
    assert "not created by kfp-bench" in msg and "nothing was changed" in msg
    assert "give the isvc parameter another name" in msg and "kubectl delete" in msg
    assert s.created == [] and _deletes(s) == []
    line = exit_handler.cleanup(_params("bench-a"), "job-a", "FAILED", msg)
    assert "InferenceService bench-iris not ours: left alone (not created by kfp-bench)" in line
    assert s.live["bench-iris"] == before and _deletes(s) == []


def test_a_second_benchmark_of_the_same_name_is_refused_and_its_cleanup_spares_the_first(cluster):
    s = cluster.play(Scenario(conditions=[READY]))
    serving.deploy_isvc(_checked("bench-a", "job-a"), timeout_s=5)
    with pytest.raises(NotOursError, match="exists already, created by benchmark bench-a"):
        serving.deploy_isvc(_checked("bench-b", "job-b"), timeout_s=5)
    line = exit_handler.cleanup(_params("bench-b"), "job-b", "FAILED", "")
    assert (
        f"not ours: left alone (created by benchmark {benchmark_id_for('bench-a', 'job-a')})"
        in line
    )
    assert "bench-iris" in s.live and s.deleted == []
    line = exit_handler.cleanup(_params("bench-a"), "job-a", "SUCCEEDED", "")
    assert "InferenceService bench-iris deleted" in line and s.deleted == ["bench-iris"]


def test_every_object_the_steps_create_carries_the_benchmark_label(cluster):
    s = cluster.play(Scenario(conditions=[READY]))
    serving.deploy_isvc(_checked("bench-a", "job-a"), timeout_s=5)
    # The InferenceService is the one object kfp-bench creates; KServe's own (Knative Service,
    # revisions, Deployments, pods) inherit its labels (kfp_bench.kserve.spec, LABELS).
    assert [r for r in s.requests if r.startswith("POST")] == [f"POST {ISVC_PATH}"]
    (body,) = s.created
    assert body["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "kfp-bench",
        "kfp-bench/benchmark-id": benchmark_id_for("bench-a", "job-a"),
    }


def test_an_isvc_replaced_between_the_get_and_the_delete_is_not_deleted(cluster):
    s = cluster.play(Scenario(conditions=[READY]))
    serving.deploy_isvc(_checked("bench-a", "job-a"), timeout_s=5)
    s.race["DELETE"] = USERS  # a user deletes ours and creates theirs after the cleanup's GET
    line = exit_handler.cleanup(_params("bench-a"), "job-a", "SUCCEEDED", "")
    assert "InferenceService bench-iris not ours: left alone" in line
    assert s.live["bench-iris"]["metadata"]["labels"] == {"team": "fraud"} and s.deleted == []


def test_a_name_taken_between_the_get_and_the_create_is_refused_the_same_way(cluster):
    s = cluster.play(Scenario(conditions=[READY], race={"POST": USERS}))
    with pytest.raises(NotOursError) as err:
        serving.deploy_isvc(_checked("bench-a", "job-a"), timeout_s=5)
    msg = str(err.value)
    assert "InferenceService bench-iris in namespace bench exists already" in msg
    assert "not created by kfp-bench" in msg
    assert s.created == [] and _deletes(s) == []
    assert s.live["bench-iris"]["metadata"]["labels"] == {"team": "fraud"}


def test_an_object_still_ours_after_a_failed_precondition_is_read_again_and_deleted(fake):
    """The KServe controller writing the status moves the resourceVersion between the GET and the
    DELETE: the API refuses the delete (409), and the object, read again, is still ours."""
    s = fake.play(Scenario(conditions=[READY]))
    kube = Kube(NS, config_dict=fake.kube_config())
    ours = {**USERS, "metadata": {**USERS["metadata"], "labels": {"kfp-bench/benchmark-id": "a"}}}
    s.store(ours)
    s.race["DELETE"] = ours
    assert delete(kube, "bench-iris", benchmark_id="a") == "deleted"
    assert _deletes(s) == [f"DELETE {ISVC_PATH}/bench-iris"] * 2 and s.live == {}
    s.store(ours)
    assert delete(kube, "bench-iris", benchmark_id="b").startswith(NOT_OURS)
    assert "bench-iris" in s.live and len(_deletes(s)) == 2

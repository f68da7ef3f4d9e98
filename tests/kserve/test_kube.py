"""Deploy, wait, delete, watch and cold start through the real kubernetes client.

No Kubernetes API runs in this tier (the real one is tests/cluster/): the clients talk to
``fake_kube``, a loopback server of recorded responses shaped like KServe's InferenceService,
pods and Knative's PodAutoscalers, changing over time as a scripted scenario. That server is the
only mock here; the clients, the InferenceService objects (checked against KServe's CRD in
test_spec), the load and the model server of the cold start are real.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from kfp_bench.errors import ConfigError, KubeError, NotReadyError
from kfp_bench.kserve.coldstart import cold_start
from kfp_bench.kserve.deploy import delete, deploy
from kfp_bench.kserve.kube import Kube
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec
from kfp_bench.kserve.watch import (
    ReplicaWatcher,
    expected_replicas,
    knative_target,
    replica_rows,
    watcher_doc,
)
from kfp_bench.load.options import LoadOptions
from kfp_bench.sandbox.model_server import start_model_server
from kfp_bench.steps.load_params import DEFAULT_PAYLOAD
from tests.kserve.fake_kube import (
    CM_PATH,
    FAILING,
    HPA_PATH,
    ISVC_PATH,
    NS,
    PA_PATH,
    PODS_PATH,
    READY,
    STARTING,
    Frame,
    Scenario,
)

SPEC = IsvcSpec("bench-iris", namespace=NS, predictor=ScaleSpec(scale_target=1, min_replicas=0))
BID = "kube-test-1"


def test_deploy_creates_the_isvc_and_waits_until_ready(fake, kube):
    s = fake.play(Scenario(conditions=[STARTING, STARTING, READY]))
    done = deploy(kube, SPEC, benchmark_id=BID, timeout_s=10, poll_s=0.01)
    (body,) = s.created
    assert body["spec"]["predictor"]["minReplicas"] == 0
    assert "annotations" not in body["metadata"]  # no mode given: the cluster's default
    assert done.predict_url == (
        f"http://bench-iris-predictor.{NS}.svc.cluster.local/v1/models/bench-iris:predict"
    )
    assert s.requests[:3] == [f"GET {CM_PATH}", f"GET {ISVC_PATH}/bench-iris", f"POST {ISVC_PATH}"]
    assert delete(kube, "bench-iris", benchmark_id=BID) == "deleted"
    assert s.deleted == ["bench-iris"]
    assert delete(kube, "bench-iris", benchmark_id=BID) == "not found"  # a 404 is an answer


def test_a_readiness_timeout_names_the_condition_and_deletes_what_was_created(fake, kube):
    s = fake.play(Scenario(conditions=[FAILING]))
    with pytest.raises(NotReadyError) as err:
        deploy(kube, SPEC, benchmark_id=BID, timeout_s=0.2, poll_s=0.05)
    msg = str(err.value)
    assert "InferenceService bench-iris in namespace bench not ready after 0.2s" in msg
    assert "PredictorConfigurationReady False: RevisionFailed" in msg
    assert "Insufficient nvidia.com/gpu" in msg and "it was deleted" in msg
    assert s.deleted == ["bench-iris"]


def test_bad_input_creates_nothing(fake, kube):
    s = fake.play(Scenario(conditions=[READY]))
    with pytest.raises(ConfigError, match="min_replicas=3: must not exceed max_replicas=2"):
        deploy(kube, IsvcSpec("x", predictor=ScaleSpec(min_replicas=3, max_replicas=2)),
               benchmark_id=BID)  # fmt: skip
    assert s.requests == []


def test_an_api_refusal_is_a_kube_error_naming_the_call(fake, kube):
    fake.play(Scenario(forbidden=True))
    words = "create InferenceService bench-iris in namespace bench: HTTP 403 Forbidden: "
    with pytest.raises(KubeError, match=words + "inferenceservices.serving.kserve.io is forbidden"):
        deploy(kube, SPEC, benchmark_id=BID, timeout_s=1)


def test_a_404_on_create_is_an_error_not_an_answer(fake):
    """No InferenceService resource where we create (no KServe, or here: no route) is refused."""
    s = fake.play(Scenario(conditions=[READY]))
    with pytest.raises(KubeError, match="create InferenceService bench-iris in namespace other: "
                       "HTTP 404 Not Found: no route"):  # fmt: skip
        Kube("other", config_dict=fake.kube_config()).create_isvc(SPEC.to_dict(benchmark_id=BID))
    assert s.created == []


def test_a_kubeconfig_file_and_a_missing_one(fake, tmp_path):
    path = tmp_path / "config"
    path.write_text(json.dumps(fake.kube_config()))  # JSON is YAML
    fake.play(Scenario(frames=[Frame(2, 3)]))
    assert [p.ready for p in Kube(NS, kubeconfig=str(path)).pods("component=predictor")] == [
        True, True, False,
    ]  # fmt: skip
    with pytest.raises(KubeError, match="no Kubernetes configuration"):
        Kube(NS, kubeconfig=str(tmp_path / "absent"))


def test_each_kube_keeps_its_own_cluster(fake):
    """The config loads into each Kube's own Configuration, not the process-wide default."""
    elsewhere = fake.kube_config()
    elsewhere["clusters"][0]["cluster"]["server"] = "http://127.0.0.1:9"
    here = Kube(NS, config_dict=fake.kube_config())
    there = Kube(NS, config_dict=elsewhere)
    assert here.api.configuration.host == fake.url
    assert there.api.configuration.host == "http://127.0.0.1:9"
    fake.play(Scenario(frames=[Frame(1, 1)]))
    assert len(here.pods("component=predictor")) == 1


RAW = IsvcSpec("bench-iris", namespace=NS, predictor=ScaleSpec(scale_target=80, scale_metric="cpu"))


def test_the_clusters_default_mode_is_read_from_kserves_config_map_and_said(fake, kube):
    s = fake.play(Scenario(conditions=[READY], default_mode="RawDeployment"))
    done = deploy(kube, RAW, benchmark_id=BID, timeout_s=5, poll_s=0.01)
    assert done.mode.name == "RawDeployment" and not done.mode.warning
    assert done.mode.said() == (
        "deployment mode RawDeployment (from the cluster's default, defaultDeploymentMode in "
        "ConfigMap kubeflow/inferenceservice-config)"
    )
    assert "annotations" not in s.created[0]["metadata"]  # KServe's webhook annotates it


def test_a_spec_the_clusters_default_cannot_take_is_refused_before_the_create(fake, kube):
    s = fake.play(Scenario(conditions=[READY], default_mode="Standard"))
    words = r"'concurrency': Standard scales with an HPA.* \(Standard is the cluster's default"
    with pytest.raises(ConfigError, match=words + ", defaultDeploymentMode in ConfigMap kubeflow/"):
        deploy(kube, SPEC, benchmark_id=BID, timeout_s=5, poll_s=0.01)
    assert s.created == [] and s.requests == [f"GET {CM_PATH}"]


def test_a_forbidden_config_map_falls_back_to_the_created_object_and_says_so(fake, kube):
    """A profile's default-editor may not read ConfigMaps in kubeflow on a standard install: the
    mode the InferenceService records is the one KServe applied, so that is said, not warned."""
    fake.play(Scenario(conditions=[READY], default_mode="Standard", config_map="forbidden"))
    done = deploy(kube, RAW, benchmark_id=BID, timeout_s=5, poll_s=0.01)
    assert done.mode.name == "Standard" and not done.mode.warning
    said = done.mode.said()
    assert "from the InferenceService's deploymentMode annotation, set by KServe" in said
    assert "; the cluster's default is not readable here: read ConfigMap " in said
    assert "in namespace kubeflow: HTTP 403 Forbidden" in said
    assert "in namespace kserve: HTTP 403 Forbidden" in said
    assert "WARNING" not in said


def test_a_forbidden_config_map_and_a_silent_object_assume_serverless_with_a_warning(fake, kube):
    fake.play(Scenario(conditions=[READY], config_map="forbidden", record_mode=False))
    done = deploy(kube, SPEC, benchmark_id=BID, timeout_s=5, poll_s=0.01)
    assert done.mode.name == "Serverless" and done.mode.source == "nowhere: assumed"
    assert "HTTP 403 Forbidden" in done.mode.warning
    assert "records no mode either, so Serverless is assumed" in done.mode.warning


def test_a_forbidden_config_map_then_a_standard_object_deletes_a_knative_spec(fake, kube):
    s = fake.play(Scenario(conditions=[READY], default_mode="Standard", config_map="forbidden"))
    with pytest.raises(ConfigError, match="Standard scales with an HPA.*created before the mode "
                       "was known is deleted"):  # fmt: skip
        deploy(kube, SPEC, benchmark_id=BID, timeout_s=5, poll_s=0.01)
    assert s.deleted == ["bench-iris"]


def test_the_watcher_reads_the_hpa_in_standard_mode(fake, kube):
    s = fake.play(Scenario(conditions=[READY], frames=FRAMES, default_mode="RawDeployment"))
    s.store(s.admit(RAW.to_dict(benchmark_id=BID, mode="RawDeployment")))  # as deploy left it
    w = ReplicaWatcher(kube, "bench-iris", autoscaler="hpa", interval_s=0.01)
    samples = [w.sample() for _ in FRAMES]
    assert [(x.ready, x.total, x.desired, x.actual) for x in samples] == [
        (f.ready, f.total, f.desired, f.actual) for f in FRAMES
    ]
    assert {r.split()[1] for r in s.requests} == {PODS_PATH, HPA_PATH}


#: Scale 1 -> 5 under load, a panic jump of the desired scale, then scale to zero.
FRAMES = [
    Frame(1, 1, 1, 1),
    Frame(1, 1, 1, 1),
    Frame(1, 3, 5, 1),  # panic: desired 1 -> 5 in one sample
    Frame(3, 5, 5, 3),
    Frame(5, 5, 5, 5),
    Frame(5, 5, 5, 5),
    Frame(2, 5, 0, 5),
    Frame(0, 0, 0, 0),
]


def test_the_watcher_samples_pods_and_the_podautoscaler(fake, kube):
    s = fake.play(Scenario(frames=FRAMES))
    w = ReplicaWatcher(kube, "bench-iris", interval_s=0.01)
    samples = [w.sample() for _ in FRAMES]
    assert [(x.ready, x.total, x.desired, x.actual) for x in samples] == [
        (f.ready, f.total, f.desired, f.actual) for f in FRAMES
    ]
    assert {r.split()[1] for r in s.requests} == {PODS_PATH, PA_PATH}


def test_the_watcher_runs_beside_a_load_in_a_thread(fake, kube):
    fake.play(Scenario(frames=FRAMES))
    w = ReplicaWatcher(kube, "bench-iris", interval_s=0.05).start()
    time.sleep(0.5)
    samples = w.stop()
    assert len(samples) >= 4 and max(x.ready for x in samples) >= 3
    assert w.max_ready(samples[0].t, samples[-1].t) == max(x.ready for x in samples)


def test_replica_rows_join_the_load_series_with_expected_replicas_and_panic_marks(fake, kube):
    fake.play(Scenario(frames=FRAMES))
    w = ReplicaWatcher(kube, "bench-iris")
    t0 = 1_700_000_000
    samples = [w.sample() for _ in FRAMES]
    samples = [
        type(x)(t0 + i, x.ready, x.total, x.desired, x.actual) for i, x in enumerate(samples)
    ]
    inflight = [1, 1, 5, 5, 5, 3, 0, 0]
    series = [
        {"t": t0 + i, "requests": 10 * n, "inflight": n, "p50_ms": 5.0, "p99_ms": 9.0}
        for i, n in enumerate(inflight)
    ]
    doc = replica_rows(watcher_doc(samples, target=1, knative=True), series)
    rows = doc["replicas"]
    assert [r["panic"] for r in rows] == [False, False, True, False, False, False, False, False]
    assert [r["expected"] for r in rows] == [2, 2, 8, 8, 8, 5, 0, 0]  # ceil(c / (1 x 0.7))
    assert rows[2]["apart"] and not rows[0]["apart"]
    assert {"t", "ready", "total", "desired", "actual", "p99_ms"} <= set(rows[0])
    assert doc["replicas_summary"]["panic_moments"] == [t0 + 2]
    assert doc["replicas_summary"]["max_ready"] == 5


def test_expected_replicas_follows_knatives_rule():
    assert expected_replicas(5, 1, 1.0) == 5  # the guide: 5 in flight, target 1 -> 5 pods
    assert expected_replicas(10, 1, 1.0) == 10
    assert expected_replicas(7, 1) == 10  # 70% utilization
    assert expected_replicas(0, 1) == 0


@pytest.mark.parametrize(
    ("metric", "target", "cc", "total"),
    [
        ("concurrency", 0, 0, 100),  # defaults
        ("concurrency", 0, 12, 12),  # with container concurrency 12
        ("concurrency", 0, 10, 10),  # with container concurrency 10
        ("concurrency", 0, 1, 1),  # with container concurrency 1
        ("concurrency", 1, 0, 1),  # with target annotation 1
        ("concurrency", 10, 0, 10),  # with target annotation 10
        ("concurrency", 1, 10, 1),  # container concurrency greater than target annotation
        ("concurrency", 500, 0, 500),  # target annotation greater than default
        ("concurrency", 10, 1, 1),  # target above container concurrency: ignored for safety
        ("rps", 0, 1, 200),  # RPS: defaults
        ("rps", 1, 0, 1),  # RPS: with target annotation 1
        ("rps", 300, 0, 300),  # RPS: with target annotation greater than default
    ],
)
def test_knatives_resolved_target(metric, target, cc, total):
    """The wantTotal of each case of Knative's TestResolveMetricTarget (knative.dev/serving
    v0.43.3 pkg/reconciler/autoscaling/resources/target_test.go) whose PodAutoscaler kfp-bench
    can make (no utilization annotation, the config's defaults)."""
    assert knative_target(metric, target, cc) == total


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cold_start_from_zero_against_the_real_model_server(fake, kube):
    """The pods scale to zero in the recorded scenario; the "pod" that then starts is the real
    KServe model server, started after the first request, so the time to the first success is a
    real cold start (process start and model load)."""
    fake.play(Scenario(frames=[Frame(1, 1), Frame(0, 1), Frame(0, 0)]))
    port = _free_port()
    opts = LoadOptions(
        url=f"http://127.0.0.1:{port}/v1/models/iris:predict",
        method="POST",
        body=DEFAULT_PAYLOAD.encode(),
        content_type="application/json",
        timeout=5,
    )
    servers = []
    starter = threading.Timer(0.3, lambda: servers.append(start_model_server(port)))
    starter.start()
    try:
        cold = cold_start(kube, "bench-iris", opts, poll_s=0.01, first_timeout_s=60,
                          warm_requests=20)  # fmt: skip
    finally:
        starter.join()
        for server in servers:
            server.stop()
    assert cold.attempts > 1 and cold.errors[0].startswith("ConnectionRefusedError")
    assert cold.first_success_s > 0.3
    assert cold.warm_requests == 20 and cold.warm_p99_ms < cold.first_success_s * 1000
    assert set(cold.as_dict()) >= {"first_success_s", "warm_p50_ms", "warm_p99_ms"}


def test_the_first_request_of_a_cold_start_is_the_loads_own(tmp_path):
    """Its headers too: behind Knative's activator without an ingress the revision is named by
    Knative-Serving-Revision and -Namespace, and behind a mesh a bearer token is required; a
    server that wants them answers 403 to anything else."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from kfp_bench.kserve.coldstart import first_success

    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append(dict(self.headers))
            self.rfile.read(int(self.headers["Content-Length"]))
            ok = (self.headers["Knative-Serving-Revision"] == "iris-predictor-00001"
                  and self.headers["Authorization"] == "Bearer t0ken")  # fmt: skip
            self.send_response(200 if ok else 403)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        opts = LoadOptions(
            url=f"http://127.0.0.1:{server.server_port}/v1/models/iris:predict",
            method="POST", body=DEFAULT_PAYLOAD.encode(), content_type="application/json",
            headers=("Knative-Serving-Revision: iris-predictor-00001",
                     "Authorization: Bearer t0ken"),
        ).validate()  # fmt: skip
        took, attempts, errors = first_success(opts, timeout_s=5)
    finally:
        server.shutdown()
        server.server_close()
    assert (attempts, errors) == (1, ()), errors
    assert seen[0]["Content-Type"] == "application/json" and took < 5

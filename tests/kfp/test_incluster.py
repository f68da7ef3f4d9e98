"""Namespace and credentials in a pod and outside (issue 18), against the local KFP API in
multi-user mode with a required token (``--multi-user --token-file``).

A pod is simulated in tmp_path: its projected service-account token at $KF_PIPELINES_SA_TOKEN_PATH,
its namespace file at $KFP_BENCH_POD_NAMESPACE_PATH and the Secret's token under
$KFP_BENCH_TOKEN_DIR. Outside a pod, those variables point at files that do not exist.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.steps import child_runs
from kfp_bench.steps.auth import token_auth
from kfp_bench.steps.bundled import bundled_manifest
from kfp_bench.steps.params import BenchParams
from tests.conftest import run_cli
from tests.kfp.conftest import GOOD, NS, STALE, _start


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    token = tmp_path_factory.mktemp("server") / "token"
    token.write_text(GOOD)
    with _start(simulate="all:fixed(0.2)", multi_user=True, token_file=str(token)) as s:
        yield s


class Pod:
    """The files a pod sees, in tmp_path; ``outside()`` leaves none."""

    def __init__(self, tmp_path, monkeypatch):
        self.token = tmp_path / "sa" / "token"
        self.namespace = tmp_path / "sa" / "namespace"
        self.secret = tmp_path / "secret" / "token"
        for path in (self.token, self.secret):
            path.parent.mkdir(exist_ok=True)
        monkeypatch.setenv("KF_PIPELINES_SA_TOKEN_PATH", str(self.token))
        monkeypatch.setenv("KFP_BENCH_POD_NAMESPACE_PATH", str(self.namespace))
        monkeypatch.setenv("KFP_BENCH_TOKEN_DIR", str(self.secret.parent))

    def enter(self, token=GOOD, namespace=NS, secret=None):
        self.token.write_text(token)
        if namespace:
            self.namespace.write_text(namespace + "\n")
        if secret:
            self.secret.write_text(secret)
        return self


@pytest.fixture
def pod(tmp_path, monkeypatch):
    return Pod(tmp_path, monkeypatch)


def api(server, path: str) -> dict:
    req = urllib.request.Request(f"{server.api_url}{path}")
    req.add_header("Authorization", f"Bearer {GOOD}")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def upload(server, tmp_path, bid: str, namespace: str = ""):
    p = BenchParams(kfp_host=server.url, namespace=namespace, benchmark_id=bid, run_load=False)
    return child_runs.upload_manifest(p, str(bundled_manifest("noop")), str(tmp_path / "out"))


# -- the local KFP API in multi-user mode ---------------------------------------------------------


def test_multi_user_server_says_so_and_refuses_an_experiment_without_namespace(server):
    with urllib.request.urlopen(f"{server.api_url}/healthz", timeout=10) as resp:
        assert json.loads(resp.read())["multi_user"] is True
    req = urllib.request.Request(
        f"{server.api_url}/experiments",
        data=json.dumps({"display_name": "x"}).encode(),
        headers={"Authorization": f"Bearer {GOOD}", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    body = json.loads(err.value.read())
    assert err.value.code == 400 and body["code"] == 3
    assert "An experiment cannot have an empty namespace in multi-user mode" in body["message"]


# -- the steps: namespace -------------------------------------------------------------------------


def test_upload_step_takes_the_pods_namespace_on_multi_user_kfp(server, pod, tmp_path, capsys):
    pod.enter()
    handle = json.loads(upload(server, tmp_path, "mu-ns"))
    out = capsys.readouterr().out
    assert f"namespace {NS}: " in out and "multi-user" in out
    exp = api(server, f"/experiments/{handle['experiment_id']}")
    assert exp["namespace"] == NS


def test_multi_user_without_any_namespace_is_refused_before_anything_is_created(
    server, pod, tmp_path
):
    pod.enter(namespace="")  # a token, but no namespace file
    with pytest.raises(ConfigError, match="pipeline parameter namespace is empty") as err:
        upload(server, tmp_path, "mu-none")
    assert "multi-user" in str(err.value)
    names = [p["display_name"] for p in api(server, "/pipelines").get("pipelines", [])]
    assert not [n for n in names if "mu-none" in n]


# -- the steps: which token -----------------------------------------------------------------------


def test_the_projected_token_comes_before_the_secret(server, pod):
    pod.enter(token=GOOD, secret=GOOD)
    auth = token_auth(NS, server.url, "kfp-bench-token")
    assert auth.resolved().mode == "sa-token"
    assert token_auth(NS).resolved().mode == "sa-token"  # the check, which makes no call


def test_a_refused_projected_token_gives_way_to_the_secret(server, pod, tmp_path, capsys):
    pod.enter(token=STALE, secret=GOOD)
    auth = token_auth(NS, server.url, "kfp-bench-token")
    assert (auth.mode, auth.source) == ("token-file", "Secret kfp-bench-token")
    out = capsys.readouterr().out
    assert f"refused the projected service-account token at {pod.token}" in out
    assert "expired" in out and "https://kubernetes.default.svc" in out
    assert STALE not in out
    handle = json.loads(upload(server, tmp_path, "mu-fallback"))  # the Secret's token works
    assert handle["experiment_id"]


def test_a_refused_token_is_named_with_its_expiry_and_audience(server, pod, tmp_path):
    pod.enter(token=STALE)
    with pytest.raises(ConfigError, match="HTTP 401") as err:
        upload(server, tmp_path, "mu-401")
    text = str(err.value)
    assert f"projected service-account token at {pod.token}" in text
    assert "exp " in text and "expired" in text
    assert "aud https://kubernetes.default.svc, not pipelines.kubeflow.org" in text
    assert STALE not in text and STALE.split(".")[1] not in text


def test_a_refused_secret_is_named_as_the_secret(server, pod, tmp_path):
    pod.secret.write_text("not-a-jwt")  # no projected token in this pod
    with pytest.raises(ConfigError, match="HTTP 401") as err:
        upload(server, tmp_path, "mu-secret", namespace=NS)
    text = str(err.value)
    assert f"Secret kfp-bench-token ({pod.secret})" in text and "not a JWT" in text
    assert "not-a-jwt" not in text


# -- submit: in a pod and outside -----------------------------------------------------------------


def _runs_in(server, namespace: str) -> int:
    return len(api(server, f"/runs?namespace={namespace}").get("runs", []))


def test_submit_in_a_pod_uses_its_token_and_namespace(server, pod):
    pod.enter()
    before = _runs_in(server, NS)
    done = run_cli("submit", "--host", server.url, "--param", "run_load=false")
    assert done.returncode == 0, done.stderr
    assert f"namespace {NS}" in done.stderr
    assert _runs_in(server, NS) == before + 1
    assert GOOD not in done.stdout + done.stderr


def test_submit_outside_a_pod_takes_a_token_file_and_namespace(server, pod, tmp_path):
    token = tmp_path / "my-token"
    token.write_text(GOOD)
    before = _runs_in(server, "team-b")
    done = run_cli(
        "submit", "--host", server.url, "--token-file", str(token), "--namespace", "team-b"
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _runs_in(server, "team-b") == before + 1


def test_submit_outside_a_pod_without_namespace_names_the_flag(server, pod, tmp_path):
    token = tmp_path / "my-token"
    token.write_text(GOOD)
    done = run_cli("submit", "--host", server.url, "--token-file", str(token))
    assert done.returncode == 2, done.stderr
    assert "--namespace is empty" in done.stderr and "multi-user" in done.stderr


def test_schedule_in_a_pod_creates_the_recurring_run_in_its_namespace(server, pod):
    pod.enter()
    done = run_cli("schedule", "--host", server.url, "--cron", "0 0 3 * * *")
    assert done.returncode == 0, done.stderr
    jobs = api(server, f"/recurringruns?namespace={NS}").get("recurringRuns", [])
    assert [j["display_name"] for j in jobs] == ["kfp-bench-schedule"]

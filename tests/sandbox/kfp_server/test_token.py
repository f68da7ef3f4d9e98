"""``--token-file``: the local KFP API asks for a bearer token, as multi-user KFP does, and never
shows it; a token file that cannot be used is refused before a server starts."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.auth import Auth
from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.conftest import run_cli

TOKEN = "local-kfp-token-8f2e1c"


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_only_the_token_opens_the_api_and_it_is_never_shown(tmp_path):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    with start_kfp_server(simulate="all:fixed(0.2)", token_file=str(path)) as server:
        experiments = f"{server.api_url}/experiments"
        assert _get(experiments)[0] == 401
        status, body = _get(experiments, "some-other-token")
        assert status == 401 and "Unauthenticated" in body and "some-other-token" not in body
        assert _get(experiments, TOKEN)[0] == 200
        assert _get(f"{server.api_url}/healthz")[0] == 200  # open, as on a cluster
        status, metrics = _get(server.metrics_url)
        assert status == 200 and TOKEN not in metrics
        bearer = 'kfp_api_request_credentials_total{authorization="bearer",cookie="no"} 2.0'
        assert bearer in metrics
        # KFP checks the token in its handlers (resource_manager.go IsAuthorized): a refused
        # one is a gRPC call that ends Unauthenticated
        service = "kubeflow.pipelines.backend.api.v2beta1.ExperimentService"
        for code, n in (("Unauthenticated", 2), ("OK", 1)):
            line = (f'grpc_server_handled_total{{grpc_code="{code}",grpc_method="ListExperiments",'
                    f'grpc_service="{service}",grpc_type="unary"}} {n}.0')  # fmt: skip
            assert line in metrics

        api = KfpApi(server.url, auth=Auth("token-file", str(path)))
        try:
            assert api.preflight().ok
        finally:
            api.close()
    assert TOKEN not in server.log_tail(10**6)


@pytest.mark.parametrize(
    ("content", "words"),
    [(None, "cannot read it"), ("\n", "the file is empty")],
)
def test_an_unusable_token_file_is_refused_before_starting(tmp_path, content, words):
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=f"--token-file {path}: {words}"):
        start_kfp_server(token_file=str(path))
    r = run_cli("kfp-server", "--port", "0", "--token-file", str(path), timeout=30)
    assert r.returncode != 0 and words in r.stderr and "Traceback" not in r.stderr

"""What the port of KFP's v2beta1 API tests shares: paths and Go-client calls.

The Go tests call the API through generated REST clients; what matters is the wire, so these
helpers send the same JSON (and multipart uploads) with ``tests.sandbox.kfp_server.support``.
Every case cites kubeflow/pipelines at ``KFP`` (the commit below).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from pathlib import Path

from tests.paths import DATA
from tests.sandbox.kfp_server.support import API, call, upload, wait_run  # noqa: F401

KFP = "7b70c7b95f"
DATA_DIR = DATA / "kfp_api"
RESOURCES = DATA_DIR / "resources"
VALID = DATA_DIR / "sdk_compiled_pipelines" / "valid"
INVALID = DATA_DIR / "sdk_compiled_pipelines" / "invalid"
HELLO = VALID / "hello_world.yaml"  # api/pipeline_upload_api_test.go helloWorldPipelineFileName
ARGS = VALID / "arguments_parameters.yaml"  # pipelineWithArgsFileName
#: config.DefaultServiceAccountName (backend/test/config/flags.go): the single-user runner
RUNNER_SA = "pipeline-runner"


def valid_files() -> list[Path]:
    """testutil.GetListOfAllFilesInDir(valid): every file, walked in lexical order as Go's
    filepath.Walk does (a directory's entries sorted by name, directories entered in place)."""
    out: list[Path] = []

    def walk(d: Path) -> None:
        for p in sorted(d.iterdir(), key=lambda p: p.name):
            if p.is_dir():
                walk(p)
            else:
                out.append(p)

    walk(VALID)
    return out


def go_id(path: Path) -> str:
    return str(path.relative_to(VALID))


def upload_file(server, path: Path, query: dict | None = None, version: bool = False):
    """(status, body) of POST /pipelines/upload (or upload_version) of ``path`` as the Go
    client's UploadFile / UploadPipelineVersion sends it: multipart ``uploadfile``."""
    return upload(
        server,
        path.name,
        data=path.read_bytes(),
        path="/pipelines/upload_version" if version else "/pipelines/upload",
        query={k: v for k, v in (query or {}).items() if v is not None},
    )


def ok(answer) -> dict:
    """The body of a 200 answer; fail showing the answer otherwise (Go: Expect(err).To(BeNil()))."""
    status, body = answer
    assert status == 200, (status, body)
    return body


def failed(answer, client_prefix: str = "") -> str:
    """The error text of a non-200 answer, as the Go client's err.Error() carries it: the
    generated clients prefix their own words (e.g. pipeline_upload_client.go: "Failed to upload
    pipeline"), which Go tests then look for; ``client_prefix`` is that text."""
    status, body = answer
    assert status != 200, body
    text = json.dumps(body) if not isinstance(body, str) else body
    return f"{client_prefix}. Params: ...: {text}" if client_prefix else text


UPLOAD_ERR = "Failed to upload pipeline"  # pipeline_upload_client.go:131-132
VERSION_ERR = "Failed to upload pipeline version"  # pipeline_upload_client.go:166-167


def get(server, path: str, **query):
    return call(
        server, "GET", f"{API}{path}", query={k: v for k, v in query.items() if v is not None}
    )


def post(server, path: str, body=None):
    return call(server, "POST", f"{API}{path}", body=body if body is not None else {})


def delete(server, path: str, **query):
    q = {k: v for k, v in query.items() if v is not None}
    return call(server, "DELETE", f"{API}{path}", query=q)


def filter_json(*predicates: dict) -> str:
    return json.dumps({"predicates": list(predicates)})


def pred(key: str, op: str, value) -> dict:
    field = "string_value" if isinstance(value, str) else "int_value"
    return {"key": key, "operation": op, field: value}


def list_all(server, path: str, key: str, **query) -> tuple[list, int]:
    """test.ListAll*: every page (page_size 100 as the Go helper sends, then page tokens)."""
    items, token, total = [], None, 0
    while True:
        body = ok(get(server, path, page_size=100, page_token=token, **query))
        items += body.get(key, [])
        total = body.get("total_size", 0)
        token = body.get("next_page_token")
        if not token:
            return items, total


def quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def next_second() -> int:
    """Sleep past the next whole-second boundary and return it (unix seconds): what the Go
    tests' 5 s sleeps around a created_at filter are for, at the real server's 1 s resolution."""
    now = time.time()
    boundary = int(now) + 1
    time.sleep(boundary - now + 0.05)
    return boundary


def experiment(server, name: str, description: str = "", namespace: str = "") -> dict:
    """test.MakeExperiment + ExperimentClient.Create."""
    body = {"display_name": name, "description": description, "namespace": namespace}
    return ok(post(server, "/experiments", body))


def yaml_docs(path: Path) -> list:
    import yaml

    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]

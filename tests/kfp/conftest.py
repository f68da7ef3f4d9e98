"""The local KFP API server (kfp_bench.sandbox.kfp_server) in a subprocess, simulating short runs,
and kfp.Client pointed at it to check what the driver left behind."""

from __future__ import annotations

import base64
import json
import time
import warnings

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.paths import PIPELINES

HELLO = PIPELINES / "hello_world.yaml"
ADD = PIPELINES / "add_numbers.yaml"


def _start(**options):
    return start_kfp_server(port=0, **options)


@pytest.fixture(scope="session")
def kfp_server():
    """Every run simulated, 0.2 s each: the driver's behaviour without kfp.local's cost."""
    with _start(simulate="all:fixed(0.2)") as server:
        yield server


@pytest.fixture(scope="session")
def slow_kfp_server():
    """Runs that outlast any test's --timeout."""
    with _start(simulate="all:fixed(60)") as server:
        yield server


def kfp_client(url: str):
    import kfp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return kfp.Client(host=url)


def leftovers(url: str, benchmark_id: str) -> dict:
    """What a benchmark left on the server, seen through kfp.Client."""
    client = kfp_client(url)
    name = f"kfp-bench-{benchmark_id}"
    exps = [
        e
        for e in (client.list_experiments(page_size=200).experiments or [])
        if e.display_name == name
    ]
    pipes = [
        p for p in (client.list_pipelines(page_size=200).pipelines or []) if p.display_name == name
    ]
    runs = [
        r
        for e in exps
        for r in (client.list_runs(experiment_id=e.experiment_id, page_size=200).runs or [])
    ]
    return {"experiments": len(exps), "pipelines": len(pipes), "runs": len(runs)}


def counts(url: str) -> tuple[int, int, int]:
    """How many experiments, pipelines and runs the server holds."""
    client = kfp_client(url)
    return (
        client.list_experiments(page_size=200).total_size or 0,
        client.list_pipelines(page_size=200).total_size or 0,
        client.list_runs(page_size=200).total_size or 0,
    )


def _named(benchmark_id: str) -> str:
    """A LIST filter: names that carry the benchmark id."""
    pred = {"key": "name", "operation": "IS_SUBSTRING", "string_value": benchmark_id}
    return json.dumps({"predicates": [pred]})


def remains(url: str, benchmark_id: str, namespaces=("",)) -> dict:
    """Everything on the server whose name carries ``benchmark_id``, seen through kfp.Client:
    experiments and runs of every namespace (a LIST without namespace sees them all on the local
    server), pipelines of ``namespaces`` and their versions, the versions of every other
    pipeline included."""
    client = kfp_client(url)
    named = _named(benchmark_id)
    exps = client.list_experiments(page_size=200, filter=named).experiments or []
    runs = client.list_runs(page_size=200, filter=named).runs or []
    pipes, versions = [], []
    for ns in namespaces:
        listed = client.list_pipelines(page_size=200, namespace=ns or None).pipelines or []
        pipes += [p for p in listed if benchmark_id in p.display_name]
        for p in listed:
            found = client.list_pipeline_versions(p.pipeline_id, page_size=200, filter=named)
            versions += found.pipeline_versions or []
    return {
        "experiments": len(exps),
        "pipelines": len(pipes),
        "pipeline_versions": len(versions),
        "runs": len(runs),
    }


NOTHING = {"experiments": 0, "pipelines": 0, "pipeline_versions": 0, "runs": 0}


# -- a simulated pod's tokens (test_incluster.py, test_notebook.py) --------------------------------
#: the namespace of the simulated pod
NS = "team-a"


def jwt(aud="pipelines.kubeflow.org", exp=None, sub="system:serviceaccount:team-a:default-editor"):
    """A token shaped as a projected service-account token (unsigned: no server here checks the
    signature, the local API compares the whole token)."""

    def part(doc):
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).rstrip(b"=").decode()

    exp = time.time() + 3600 if exp is None else exp
    return f"{part({'alg': 'RS256'})}.{part({'aud': [aud], 'exp': int(exp), 'sub': sub})}.c2ln"


GOOD = jwt()
#: Refused: another token, expired and for the Kubernetes API's audience.
STALE = jwt(aud="https://kubernetes.default.svc", exp=time.time() - 7200)

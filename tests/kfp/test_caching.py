"""Caching off in every uploaded child: a manifest whose tasks cache, as given and as compiled
here with kfp's compiler, comes back from the local KFP API with caching off on every task of
every DAG, the rest of its text unchanged, and the summary says how many tasks were overridden."""

import json
import urllib.request

import yaml

from kfp_bench.kfp.caching import caching_off
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.manifest import load_manifest
from kfp_bench.kfp.options import CleanupOptions
from kfp_bench.kfp.phases import poll, spawn, upload
from kfp_bench.report.runs import write_text
from tests.kfp.test_driver import _opts
from tests.paths import PIPELINES

LOOPS = PIPELINES / "pipeline_with_parallelfor_parallelism.yaml"
LOOP_PARAMS = {"loop_parameter": ["a", "b"]}


def _tasks(spec: dict):
    dags = [spec["root"]["dag"], *(c["dag"] for c in spec["components"].values() if "dag" in c)]
    return [t for dag in dags for t in dag["tasks"].values()]


def _uploaded_spec(url: str, pipeline_id: str, version_id: str) -> dict:
    path = f"{url}/apis/v2beta1/pipelines/{pipeline_id}/versions/{version_id}"
    with urllib.request.urlopen(path, timeout=10) as resp:
        return json.loads(resp.read())["pipeline_spec"]


def _cached(spec: dict) -> int:
    return sum(bool((t.get("cachingOptions") or {}).get("enableCache")) for t in _tasks(spec))


def test_the_uploaded_spec_caches_nothing(kfp_server, tmp_path):
    assert _cached(yaml.safe_load(LOOPS.read_text())) == 17  # the manifest as given caches
    opts = _opts(
        kfp_server.url,
        pipeline=str(LOOPS),
        num_runs=1,
        params=LOOP_PARAMS,
        benchmark_id="nocache-1",
    )
    handle = upload(opts, out_dir=tmp_path)
    spec = _uploaded_spec(kfp_server.url, handle.pipeline_id, handle.version_id)
    assert len(_tasks(spec)) == 27 and _cached(spec) == 0
    spawn(handle, opts, tmp_path)
    doc = poll(handle, opts, tmp_path).summary()
    assert doc["options"]["caching"] == "off (17 of 27 tasks overridden)"
    sweep(CleanupOptions(kfp_server.url, benchmark_id="nocache-1"))


def test_run_benchmark_says_caching_is_off(kfp_server, tmp_path):
    import io

    doc = run_benchmark(
        _opts(kfp_server.url, num_runs=1, pipeline=str(LOOPS), params=LOOP_PARAMS)
    ).summary()
    assert doc["options"]["caching"] == "off (17 of 27 tasks overridden)"
    out = io.StringIO()
    write_text(doc, out)
    assert "Caching:\toff (17 of 27 tasks overridden)" in out.getvalue()


def test_a_compiled_manifest_with_a_platform_spec_keeps_the_rest(tmp_path):
    from kfp import compiler, dsl, kubernetes

    @dsl.component(base_image="python:3.11")
    def work(n: int) -> int:
        print("enableCache: true")  # in the executor's source: no task's option
        return n

    @dsl.pipeline(name="cached")
    def cached(n: int = 1):
        with dsl.ParallelFor([1, 2]):
            t = work(n=n)
            kubernetes.add_node_selector(t, "pool", "a")
        work(n=n).set_caching_options(True)

    path = tmp_path / "cached.yaml"
    compiler.Compiler().compile(cached, str(path))
    given = load_manifest(str(path))
    assert len(list(yaml.safe_load_all(given.data))) == 2  # a PlatformSpec follows
    off, overridden, tasks = caching_off(given)
    assert (overridden, tasks) == (2, 3)
    docs = list(yaml.safe_load_all(off.data))
    assert _cached(docs[0]) == 0 and docs[1] == list(yaml.safe_load_all(given.data))[1]
    # Byte for byte the same but for each flipped value.
    assert off.data.decode().replace("enableCache: false", "enableCache: true") == (
        given.data.decode()
    )
    assert b'print(\\"enableCache: true\\")' in off.data  # untouched

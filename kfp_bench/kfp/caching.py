"""Caching off in the child manifest the runs benchmark uploads, whatever the manifest says.

A child run whose tasks hit KFP's execution cache measures a cache lookup, not the work. The
v2beta1 API has no run-level switch: ``v2beta1Run`` has no caching field (swagger, and
backend/src/apiserver at kubeflow/pipelines 7b70c7b9); the only off switch on the server is the
API server's whole-cluster ``CacheEnabled`` config (backend/src/apiserver/main.go:
``CacheDisabled: !GetBoolConfigWithDefault("CacheEnabled", true)``), and
KFP_DISABLE_EXECUTION_CACHING_BY_DEFAULT is the SDK's compile-time default only
(sdk/python/kfp/dsl/pipeline_context.py). So the spec itself is changed before upload, as
kfp.Client does for ``enable_caching=False`` (kfp 2.17.3 client.py ``_override_caching_options``,
applied in ``_create_job_config``): ``cachingOptions.enableCache`` false. kfp.Client changes the
root DAG's tasks only; here every DAG's tasks are changed too (sub-DAGs, loops, exit handlers),
since the v2 driver reads each task's own options (backend/src/v2/driver/cache.go,
container.go at 7b70c7b9: ``opts.Task.GetCachingOptions().GetEnableCache()``), and a task with no
cachingOptions does not cache (a nil message's GetEnableCache is false).

Only the ``true`` values are rewritten, in place in the YAML text, so the rest of the manifest
(its comments, its order, a PlatformSpec document after it) stays byte for byte what was given.
Should that in-place edit not come out clean (an enableCache given by a YAML alias), the first
document is re-serialized from its parsed form instead.
"""

from __future__ import annotations

import dataclasses

import yaml

from kfp_bench.kfp.manifest import Manifest

_BOOL = "tag:yaml.org,2002:bool"


def describe(overridden: int, tasks: int) -> str:
    """The summary's ``options.caching``: what the upload did to the child's caching."""
    return f"off ({overridden} of {tasks} tasks overridden)"


def caching_off(manifest: Manifest) -> tuple[Manifest, int, int]:
    """``manifest`` with caching disabled on every task; also (tasks overridden, tasks)."""
    text = manifest.data.decode("utf-8")
    doc = next(iter(yaml.compose_all(text)), None)
    values, tasks = _enable_cache_values(doc)
    flip = [v for v in values if _truthy(v)]
    for node in sorted(flip, key=lambda v: v.start_mark.index, reverse=True):
        text = text[: node.start_mark.index] + "false" + text[node.end_mark.index :]
    data = text.encode("utf-8")
    if any(_truthy(v) for v in _enable_cache_values(next(yaml.compose_all(text), None))[0]):
        data = _reserialized(manifest.data)
    return dataclasses.replace(manifest, data=data), len(flip), tasks


def _truthy(node) -> bool:
    value = node.value if isinstance(node, yaml.ScalarNode) else ""
    return str(value).strip().lower() in ("true", "yes", "on", "y") or (
        node.tag == _BOOL and yaml.SafeLoader.bool_values.get(str(value).lower(), False)
    )


def _get(node, key: str):
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def _dags(doc):
    """Every DAG's tasks mapping: the root's and each component's."""
    yield _get(_get(_get(doc, "root"), "dag"), "tasks")
    components = _get(doc, "components")
    for _, component in components.value if isinstance(components, yaml.MappingNode) else ():
        yield _get(_get(component, "dag"), "tasks")


def _enable_cache_values(doc) -> tuple[list, int]:
    """The enableCache value nodes of every task, and the number of tasks."""
    values, tasks = [], 0
    for dag in _dags(doc):
        for _, task in dag.value if isinstance(dag, yaml.MappingNode) else ():
            tasks += 1
            value = _get(_get(task, "cachingOptions"), "enableCache")
            if value is not None:
                values.append(value)
    return values, tasks


def _reserialized(data: bytes) -> bytes:
    docs = [d for d in yaml.safe_load_all(data) if d is not None]
    spec = docs[0]
    dags = [spec.get("root", {}).get("dag", {})]
    dags += [c.get("dag", {}) for c in (spec.get("components") or {}).values()]
    for dag in dags:
        for task in (dag.get("tasks") or {}).values():
            if isinstance(task.get("cachingOptions"), dict):
                task["cachingOptions"]["enableCache"] = False
    return yaml.safe_dump_all(docs, sort_keys=False).encode()

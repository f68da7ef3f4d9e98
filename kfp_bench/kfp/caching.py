"""Caching off in the child manifest the runs benchmark uploads, whatever the manifest says.

A cached child task measures a cache lookup, not the work. v2beta1 has no run-level switch (only
the API server's cluster-wide ``CacheEnabled``, backend/src/apiserver/main.go at 7b70c7b9), so
the spec is changed before upload, as kfp.Client's ``enable_caching=False`` does (kfp 2.17.3
client.py ``_override_caching_options``): ``cachingOptions.enableCache`` false, and in every
DAG, not only the root's, since the v2 driver reads each task's own options
(backend/src/v2/driver/cache.go). Only the ``true`` values are rewritten, in the YAML text, so
the rest stays byte for byte; where that cannot come out clean (a YAML alias) the first
document is re-serialized."""

from __future__ import annotations

import dataclasses

import yaml

from kfp_bench.kfp.manifest import YAML_LOADER, Manifest

_BOOL = "tag:yaml.org,2002:bool"


def describe(overridden: int, tasks: int) -> str:
    """The summary's ``options.caching``: what the upload did to the child's caching."""
    return f"off ({overridden} of {tasks} tasks overridden)"


def caching_off(manifest: Manifest) -> tuple[Manifest, int, int]:
    """``manifest`` with caching disabled on every task; also (tasks overridden, tasks)."""
    text = manifest.data.decode("utf-8")
    doc = next(iter(yaml.compose_all(text, Loader=YAML_LOADER)), None)
    values, tasks = _enable_cache_values(doc)
    flip = [v for v in values if _truthy(v)]
    for node in sorted(flip, key=lambda v: v.start_mark.index, reverse=True):
        text = text[: node.start_mark.index] + "false" + text[node.end_mark.index :]
    data = text.encode("utf-8")
    if any(
        _truthy(v)
        for v in _enable_cache_values(next(yaml.compose_all(text, Loader=YAML_LOADER), None))[0]
    ):
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
    docs = [d for d in yaml.load_all(data, Loader=YAML_LOADER) if d is not None]
    spec = docs[0]
    dags = [spec.get("root", {}).get("dag", {})]
    dags += [c.get("dag", {}) for c in (spec.get("components") or {}).values()]
    for dag in dags:
        for task in (dag.get("tasks") or {}).values():
            if isinstance(task.get("cachingOptions"), dict):
                task["cachingOptions"]["enableCache"] = False
    return yaml.safe_dump_all(docs, sort_keys=False).encode()

"""The pipelines: the kfp_bench meta-pipeline and the child pipelines it benchmarks with.

``PIPELINES`` names each one and where its function lives; modules are imported only when a
pipeline is compiled, so that the engine can compile a bundled child without importing the
components (which embed the engine, children included).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

#: name -> "module:function"; each compiles to compiled/<name>.yaml.
PIPELINES = {
    "kfp_bench": "kfp_bench.pipelines.meta:kfp_bench",
    "noop": "kfp_bench.pipelines.children:noop",
    "fanout": "kfp_bench.pipelines.children:fanout",
    "train": "kfp_bench.pipelines.children:train",
}


def pipeline_func(name: str):
    """The pipeline function registered as ``name``."""
    module, func = PIPELINES[name].split(":")
    return getattr(importlib.import_module(module), func)


def compile_pipeline(name: str, path: str | os.PathLike) -> Path:
    """Compile the pipeline ``name`` to ``path`` (YAML) and return the path."""
    from kfp import compiler

    path = Path(path)
    compiler.Compiler().compile(pipeline_func(name), str(path))
    return path

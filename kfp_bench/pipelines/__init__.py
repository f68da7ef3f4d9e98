"""The pipelines: the kfp_bench meta-pipeline and the child pipelines it benchmarks with.

``PIPELINES`` names each one and where its function lives; modules are imported only when a
pipeline is compiled. The meta-pipeline is built for a ``Delivery`` (its steps' packages or
image, ``kfp_bench.components._step``); the children are the workload and install no kfp-bench.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

# Imports inside functions: the kfp SDK's compiler, needed only to compile; kfp-bench itself depends
# on nothing.

#: name -> "module:function"; each compiles to compiled/<name>.yaml.
PIPELINES = {
    "kfp_bench": "kfp_bench.pipelines.meta:kfp_bench",
    "kfp_bench_mesh": "kfp_bench.pipelines.meta:kfp_bench_mesh",
    "noop": "kfp_bench.pipelines.children:noop",
    "fanout": "kfp_bench.pipelines.children:fanout",
    "train": "kfp_bench.pipelines.children:train",
}


def pipeline_func(name: str, delivery=None):
    """The pipeline registered as ``name``; a meta-pipeline (each mesh route's) built for
    ``delivery`` when given (``kfp_bench.pipelines.meta.build``)."""
    module, func = PIPELINES[name].split(":")
    module = importlib.import_module(module)
    if delivery is not None and hasattr(module, "build"):
        return module.build(delivery, func)
    return getattr(module, func)


def compile_pipeline(name: str, path: str | os.PathLike, delivery=None) -> Path:
    """Compile the pipeline ``name`` (for ``delivery``, see ``pipeline_func``) to ``path``."""
    from kfp import compiler

    path = Path(path)
    compiler.Compiler().compile(pipeline_func(name, delivery), str(path))
    return path

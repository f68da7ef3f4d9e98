"""KFP components of kfp-bench, one per step, installed as ``kfp_bench.components``.

Each is a short ``@dsl.component`` over the engine, whose code it carries in the compiled YAML
(see ``_embed``). The steps, in pipeline order: check_params, stage_manifest, spawn_and_poll_runs,
inference_load (one per load worker), aggregate, report, and cleanup (the exit handler).
"""

from kfp_bench.components.aggregate import aggregate
from kfp_bench.components.check_params import check_params
from kfp_bench.components.cleanup import cleanup
from kfp_bench.components.inference_load import inference_load
from kfp_bench.components.report import report
from kfp_bench.components.spawn_and_poll_runs import spawn_and_poll_runs
from kfp_bench.components.stage_manifest import stage_manifest

__all__ = [
    "aggregate",
    "check_params",
    "cleanup",
    "inference_load",
    "report",
    "spawn_and_poll_runs",
    "stage_manifest",
]

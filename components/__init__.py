"""KFP components of kfp-bench, one per step, installed as ``kfp_bench.components``.

Each is a short ``@dsl.component`` over the engine, whose code it carries in the compiled YAML
(see ``_embed``). The steps, in pipeline order: check_params, deploy_isvc, stage_manifest,
upload_manifest, spawn_runs, poll_runs, rate_sweep, inference_load (one per load worker) beside
watch_replicas, aggregate, report, and cleanup (the exit handler, which also deletes the
InferenceService and sweeps the KFP resources the runs phases made). Every step between the first
and the exit handler calls ``kfp_bench.failpoint.fail_point`` once its work is done: the
``KFP_BENCH_FAIL_STEP`` test hook, with which the tests fail a step that cannot be made to fail
from outside and check that the cleanup still leaves nothing behind.
"""

from kfp_bench.components.aggregate import aggregate
from kfp_bench.components.check_params import check_params
from kfp_bench.components.cleanup import cleanup
from kfp_bench.components.deploy_isvc import deploy_isvc
from kfp_bench.components.inference_load import inference_load
from kfp_bench.components.poll_runs import poll_runs
from kfp_bench.components.rate_sweep import rate_sweep
from kfp_bench.components.report import report
from kfp_bench.components.spawn_runs import spawn_runs
from kfp_bench.components.stage_manifest import stage_manifest
from kfp_bench.components.upload_manifest import upload_manifest
from kfp_bench.components.watch_replicas import watch_replicas

__all__ = [
    "aggregate",
    "check_params",
    "cleanup",
    "deploy_isvc",
    "inference_load",
    "poll_runs",
    "rate_sweep",
    "report",
    "spawn_runs",
    "stage_manifest",
    "upload_manifest",
    "watch_replicas",
]

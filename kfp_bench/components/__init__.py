"""KFP components of kfp-bench, one per step, installed as ``kfp_bench.components``.

Each is a short function marked with the kfp-bench extra its pod installs (``_step.step``) whose
body is one call into a step module of ``kfp_bench.steps``. The steps, in pipeline order:
check_params, deploy_isvc, stage_manifest, upload_manifest, spawn_runs, poll_runs, rate_sweep,
inference_load (one per load worker) beside watch_replicas, aggregate, report (and report_history
with a results_uri), check_outcome (fails a flagged run once the report is published); with run_llm,
llm_targets, llm_load (one per LLM load worker; ``kfp_bench.steps.llm_steps``), report_llm and
its own check_outcome; and cleanup (the exit handler, which also deletes the InferenceService and
sweeps the KFP resources the runs phases made).
"""

from kfp_bench.components.aggregate import aggregate
from kfp_bench.components.check_outcome import check_outcome
from kfp_bench.components.check_params import check_params
from kfp_bench.components.cleanup import cleanup
from kfp_bench.components.deploy_isvc import deploy_isvc
from kfp_bench.components.inference_load import inference_load
from kfp_bench.components.llm_load import llm_load
from kfp_bench.components.llm_targets import llm_targets
from kfp_bench.components.poll_runs import poll_runs
from kfp_bench.components.rate_sweep import rate_sweep
from kfp_bench.components.report import report
from kfp_bench.components.report_history import report_history
from kfp_bench.components.report_llm import report_llm
from kfp_bench.components.spawn_runs import spawn_runs
from kfp_bench.components.stage_manifest import stage_manifest
from kfp_bench.components.upload_manifest import upload_manifest
from kfp_bench.components.watch_replicas import watch_replicas

__all__ = [
    "aggregate",
    "check_outcome",
    "check_params",
    "cleanup",
    "deploy_isvc",
    "inference_load",
    "llm_load",
    "llm_targets",
    "poll_runs",
    "rate_sweep",
    "report",
    "report_llm",
    "report_history",
    "spawn_runs",
    "stage_manifest",
    "upload_manifest",
    "watch_replicas",
]

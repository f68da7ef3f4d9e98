"""The KFP driver: upload, spawn, poll and clean up runs, as timed records. Never prints.

``run_benchmark`` runs the whole benchmark in one call; ``upload``, ``spawn`` and ``poll`` are the
same steps as separate phases, joined by a ``BenchmarkHandle`` and an output directory.
"""

from kfp_bench.kfp.auth import Auth
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.manifest import Manifest, load_manifest
from kfp_bench.kfp.options import CleanupOptions, RunsOptions
from kfp_bench.kfp.phases import BenchmarkHandle, poll, spawn, upload

__all__ = [
    "Auth",
    "BenchmarkHandle",
    "CleanupOptions",
    "Manifest",
    "RunsOptions",
    "load_manifest",
    "poll",
    "run_benchmark",
    "spawn",
    "sweep",
    "upload",
]

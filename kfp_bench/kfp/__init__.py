"""The KFP driver: upload, spawn, poll and clean up runs, as timed records. Never prints."""

from kfp_bench.kfp.auth import Auth
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.manifest import Manifest, load_manifest
from kfp_bench.kfp.options import CleanupOptions, RunsOptions

__all__ = [
    "Auth",
    "CleanupOptions",
    "Manifest",
    "RunsOptions",
    "load_manifest",
    "run_benchmark",
    "sweep",
]

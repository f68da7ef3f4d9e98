"""The KFP driver: upload, spawn, poll and clean up runs, as timed records. Never prints.

``run_benchmark`` runs the whole benchmark in one call; ``upload``, ``spawn`` and ``poll`` are the
same steps as separate phases, joined by a ``BenchmarkHandle`` and an output directory. The
names are imported on first use (``kfp_bench._lazy``): checking options does not import the driver.
"""

from kfp_bench._lazy import exports

_WHERE = {
    "Auth": "auth",
    "sweep": "cleanup",
    "run_benchmark": "driver",
    "Manifest": "manifest",
    "load_manifest": "manifest",
    "CleanupOptions": "options",
    "RunsOptions": "options",
    "BenchmarkHandle": "phases",
    "poll": "phases",
    "spawn": "phases",
    "upload": "phases",
}
__all__ = sorted(_WHERE)
__getattr__ = exports(__name__, _WHERE)

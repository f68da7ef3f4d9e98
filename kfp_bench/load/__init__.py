"""HTTP load: options, pacing, the request loop and worker processes. Never prints."""

from kfp_bench.load.options import LoadOptions, parse_duration
from kfp_bench.load.workers import run_load

__all__ = ["LoadOptions", "parse_duration", "run_load"]

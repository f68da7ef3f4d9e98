"""HTTP load: options, pacing, the request loop and worker processes. Never prints.

The names below are imported on first use (``kfp_bench._lazy``): ``kfp_bench.load.options`` alone
does not import the request loop.
"""

from kfp_bench._lazy import exports

_WHERE = {"LoadOptions": "options", "parse_duration": "options", "run_load": "workers"}
__all__ = sorted(_WHERE)
__getattr__ = exports(__name__, _WHERE)

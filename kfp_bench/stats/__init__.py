"""Mergeable aggregation: HDR histograms, per-second series and load summaries."""

from kfp_bench.stats.hdr import Histogram
from kfp_bench.stats.load import LoadStats, LoadSummary
from kfp_bench.stats.series import Series

__all__ = ["Histogram", "LoadStats", "LoadSummary", "Series"]

"""KFP components of kfp-bench, one per step, installed as ``kfp_bench.components``."""

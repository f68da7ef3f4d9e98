"""KFP pipelines of kfp-bench (wiring only), installed as ``kfp_bench.pipelines``."""

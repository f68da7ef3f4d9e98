"""The bodies of the pipeline's steps (``kfp_bench.components`` wraps each in a KFP component,
``kfp_bench.pipelines`` wires them), their parameters, the first step's probes, and compiling
and submitting the pipeline; each module says what it owns.

Every step between the first and the exit handler calls ``fail_point`` once its work is done (the
``KFP_BENCH_FAIL_STEP`` test hook). Modules import one another at the top and only downwards
(tests/test_imports.py fails on a cycle); an engine module that needs another extra than every
step's is imported by the function that uses it: a step's pod installs its own extra only."""

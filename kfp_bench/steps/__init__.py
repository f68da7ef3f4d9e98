"""The bodies of the pipeline's steps (``kfp_bench.components`` wraps each in a KFP component,
``kfp_bench.pipelines`` wires them), their parameters, the first step's probes, and compiling
and submitting the pipeline. Each module says what it owns:

- parameters: ``params`` (``BenchParams`` and its ``check``), one module per part that checks
  the part's parameters and makes the engine's options of them (``runs_params``,
  ``load_params``, ``llm_params``), the shared checks (``checks``), the benchmark's id (``ids``),
  the pod's credentials (``auth``) and the bundled child pipelines (``bundled``);
- steps, by job (a component in kfp_bench/components/ is one call into one of them): ``start``
  (check_params and the lease), ``child_runs``, ``serving`` (the InferenceService),
  ``predict``, ``llm_steps``, ``publish`` (aggregate, report), ``outcome`` (check_outcome),
  ``exit_handler`` (cleanup), with ``outputs`` and ``worker_start`` beneath them;
- ``probe``, ``compile``, ``submit``.

Every step between the first and the exit handler calls ``fail_point`` once its work is done (the
``KFP_BENCH_FAIL_STEP`` test hook). Modules import one another at the top and only downwards
(tests/test_imports.py fails on a cycle); an engine module that needs another extra than every
step's is imported by the function that uses it, so that a step's pod installs its own extra only.
"""

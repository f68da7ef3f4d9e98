"""kfp-bench: benchmarks for Kubeflow Pipelines and KServe.

The engine lives here as plain Python, importable and testable without a cluster:
``records`` (the shared record types), ``load`` (HTTP load), ``kfp`` (the KFP driver), ``stats``
(mergeable aggregation), ``report`` (reporters) and ``sandbox`` (the local servers behind
``kfp-bench demo``).
"""

__version__ = "0.1.0"

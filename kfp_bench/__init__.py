"""kfp-bench: benchmarks for Kubeflow Pipelines and KServe.

The engine lives here as plain Python, importable and testable without a cluster:
``records`` (the shared record types), ``load`` (HTTP load), ``kfp`` (the KFP driver), ``stats``
(mergeable aggregation), ``report`` (reporters) and ``sandbox`` (the local servers behind
``kfp-bench demo``).
"""

import os

__version__ = "0.1.0"

# numpy's OpenBLAS starts a thread per core that spins while idle; on the two cores a load
# generator shares with the system under test they take CPU from the request loop, and nothing
# here multiplies matrices. Set before numpy is first imported; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

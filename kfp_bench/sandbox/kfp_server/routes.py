"""The route templates of the local KFP API's v2beta1 paths, as aiohttp declares them: the keys
of ``faults.OPERATIONS`` and ``grpc_metrics.GRPC_METHODS``."""

API = "/apis/v2beta1"
PIPELINE = f"{API}/pipelines/{{pipeline_id}}"
VERSION = f"{PIPELINE}/versions/{{pipeline_version_id}}"
EXPERIMENT = f"{API}/experiments/{{experiment_id}}"
RUN = f"{API}/runs/{{run_id}}"
RECURRING = f"{API}/recurringruns/{{recurring_run_id}}"

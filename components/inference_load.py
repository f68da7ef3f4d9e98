"""One load worker: its share of the inference load, as a mergeable result."""

from kfp.dsl import Dataset, Output
from kfp_bench.components._step import step


@step("load")
def inference_load(
    worker: int,
    load_workers: int,
    inference_url: str,
    host_header: str,
    payload: str,
    duration_sec: float,
    concurrency: int,
    rate: float,
    enabled: bool,
    result: Output[Dataset],
):
    """Send this worker's share of the load (kfp_bench.load.workers.run_load) and save its
    histograms.

    Args:
        worker: this worker's index, 0 to load_workers - 1.
        load_workers: the number of workers sharing the load.
        inference_url: the URL to POST to.
        host_header: the Host header; empty for the URL's host.
        payload: the JSON body.
        duration_sec: seconds of load.
        concurrency: connections across all workers; this worker opens its share.
        rate: open-loop requests/s across all workers (0: closed loop); this worker sends its
            share.
        enabled: false when the load is switched off: the step only says so.
        result: the load result JSON (kfp_bench.stats.store), merged by aggregate.
    """
    from kfp_bench import steps
    from kfp_bench.params import BenchParams

    p = BenchParams(
        load_workers=load_workers,
        inference_url=inference_url,
        host_header=host_header,
        payload=payload,
        duration_sec=duration_sec,
        concurrency=concurrency,
        rate=rate,
    )
    steps.inference_load(p, int(worker), enabled, result.path)

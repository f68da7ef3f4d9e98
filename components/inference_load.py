"""One load worker: its share of the inference load, as a mergeable result."""

from kfp import dsl
from kfp.dsl import Dataset, Output
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("load", "stats"),
    embedded_artifact_path=engine("load", "stats"),
)
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
    """Send this worker's share of the load (kfp_bench.load.run_load) and save its histograms.

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
    import json

    from kfp_bench.params import BenchParams
    from kfp_bench.stats import store

    if not enabled:
        print("inference load switched off (run_load=false)")
        with open(result.path, "w") as f:
            json.dump({"skipped": True}, f)
        return
    from kfp_bench.failpoint import fail_point
    from kfp_bench.load import run_load

    p = BenchParams(
        inference_url=inference_url,
        host_header=host_header,
        payload=payload,
        duration_sec=duration_sec,
        concurrency=concurrency,
        rate=rate,
    )
    opts = p.load_options().share(int(worker), int(load_workers))
    stats = run_load(opts)
    store.save(stats, result.path)
    s = stats.to_dict()
    print(f"worker {int(worker)}: {s['requests']} requests, {s['rps']:.1f} req/s")
    from kfp_bench.stats.load import cpu_caveat, cpu_figures

    cpu = cpu_figures(stats)
    if cpu:
        print(f"worker {int(worker)}: load generator CPU {cpu['cores']:.2f} cores")
    if caveat := cpu_caveat(cpu):
        print(f"worker {int(worker)}: WARNING: {caveat}")
    fail_point("inference_load")

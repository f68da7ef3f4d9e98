"""The rate sweep: one open-loop step per rate against the inference URL, and the knee."""

from kfp.dsl import Dataset, Output
from kfp_bench.components._step import step


@step("load")
def rate_sweep(
    targets: list,
    host_header: str,
    payload: str,
    sweep_rates: str,
    sweep_step_sec: float,
    sweep: Output[Dataset],
):
    """Run kfp_bench.load.sweep.run_sweep: KServe's table of QPS against mean, p50, p95 and p99
    latency and success, and the saturation knee.

    Args:
        targets: deploy_isvc's items; the sweep POSTs to the first one's url.
        host_header: the Host header; empty for the URL's host.
        payload: the JSON body.
        sweep_rates: the steps' rates, requests/s, increasing (e.g. "5,50,500"); empty: the
            step only says the sweep is off.
        sweep_step_sec: seconds of each step.
        sweep: {"sweep": rows, "sweep_knee": knee}, the keys aggregate adds to summary.json.
    """
    from kfp_bench import steps
    from kfp_bench.params import BenchParams

    p = BenchParams(
        host_header=host_header,
        payload=payload,
        sweep_rates=sweep_rates,
        sweep_step_sec=sweep_step_sec,
    )
    steps.rate_sweep(p, targets[0]["url"], sweep.path)

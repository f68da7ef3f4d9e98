"""The rate sweep: one open-loop step per rate against the inference URL, and the knee."""

from kfp import dsl
from kfp.dsl import Dataset, Output
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("load", "stats"),
    embedded_artifact_path=engine("load", "stats"),
)
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
    import json

    if not sweep_rates.strip():
        print("rate sweep switched off (sweep_rates empty)")
        with open(sweep.path, "w") as f:
            json.dump({"skipped": True}, f)
        return
    from kfp_bench.failpoint import fail_point
    from kfp_bench.load.options import parse_rates
    from kfp_bench.load.sweep import run_sweep
    from kfp_bench.params import BenchParams

    url = targets[0]["url"]
    p = BenchParams(inference_url=url, host_header=host_header, payload=payload)
    result = run_sweep(
        p.load_options(),
        parse_rates(sweep_rates, "sweep_rates"),
        sweep_step_sec,
        on_step=lambda s: print(f"{s.rate:g} req/s: p99 {s.p99_ms:.1f} ms, {s.success_ratio:.2%}"),
    )
    with open(sweep.path, "w") as f:
        json.dump(result.as_dict(), f)
    print(f"knee: {result.knee.rate} ({result.knee.reason})")
    fail_point("rate_sweep")

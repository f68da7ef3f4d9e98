"""The predict load's parameters (run_load and sweep_rates: inference_url, payload, duration_sec,
concurrency, rate, load_workers, ...): their checks and the load engine's ``LoadOptions`` they
become, side by side."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, fields

from kfp_bench.errors import ConfigError
from kfp_bench.load.options import MAX_RATE_PER_WORKER, LoadOptions, parse_rates
from kfp_bench.load.stages import parse_stages, peak_rate, total_s
from kfp_bench.steps.checks import (
    MAX_DURATION_S,
    MAX_LOAD_WORKERS,
    bad,
    need_url,
    positive,
    positive_int,
    selector,
    translated,
)

DEFAULT_INFERENCE_URL = (
    "http://sklearn-iris-predictor.default.svc.cluster.local/v1/models/sklearn-iris:predict"
)
DEFAULT_PAYLOAD = '{"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}'


def check_load(p, fetch: bool = True) -> None:
    """The predict load's parameters of ``p`` (a ``BenchParams``): load_node_selector's form,
    and with run_load on or sweep_rates given the rest, each load worker's share checked as the
    engine will check it, then the sweep's rates (``fetch``: unused, no network here)."""
    selector("load_node_selector", p.load_node_selector)
    if not (p.run_load or p.sweep_rates):
        return  # sweep_rates empty: no rates to check
    need_url("inference_url", p.inference_url, ("http", "https"), DEFAULT_INFERENCE_URL)
    positive("duration_sec", p.duration_sec, MAX_DURATION_S)
    positive_int("concurrency", p.concurrency, 10000)
    positive_int("load_workers", p.load_workers, MAX_LOAD_WORKERS)
    if p.concurrency < p.load_workers:
        raise bad(
            "concurrency",
            p.concurrency,
            f"give at least one connection per load worker (load_workers={p.load_workers})",
        )
    if not (isinstance(p.rate, int | float) and 0 <= p.rate < float("inf")):
        raise bad("rate", p.rate, "give requests/s >= 0 (0: closed loop)")
    stages = load_stages(p)
    if p.host_header and not re.fullmatch(r"[A-Za-z0-9.:\[\]-]+", p.host_header):
        raise bad("host_header", p.host_header, "give a host name such as iris.example.com")
    try:
        json.loads(p.payload)
    except (TypeError, ValueError) as exc:
        raise bad(
            "payload", p.payload[:60], f"not JSON ({exc}); give e.g. {DEFAULT_PAYLOAD}"
        ) from None
    total = peak_rate(stages) if stages else p.rate
    per_worker = total / p.load_workers
    if per_worker > MAX_RATE_PER_WORKER:
        need = math.ceil(total / MAX_RATE_PER_WORKER)
        fix = (
            f"raise load_workers to at least {need}"
            if need <= MAX_LOAD_WORKERS
            else f"give at most {MAX_LOAD_WORKERS * MAX_RATE_PER_WORKER:g} req/s in total"
        )
        raise bad(
            "stages" if stages else "rate",
            p.stages or p.rate,
            f"that is {per_worker:g} req/s per load worker{' at the peak' if stages else ''}, "
            "above the safety cap of "
            f"{MAX_RATE_PER_WORKER:g}: {fix}",
        )
    # What each load worker runs (the largest share), checked as the engine will check it.
    translated(lambda: load_options(p).share(0, p.load_workers).validate())
    sweep_rates(p)


@dataclass(frozen=True)
class PredictLoad:
    """The predict load's and the rate sweep's parameters (the pipeline's,
    ``steps.params.BenchParams``).

    Attributes:
        run_load: run the inference load.
        inference_url: the URL to load, e.g. an InferenceService's V1 predict URL.
        host_header: HTTP Host header, for an InferenceService behind the ingress
            (SERVICE_HOSTNAME in KServe's guides); empty to use the URL's host.
        payload: the JSON request body, POSTed as application/json.
        duration_sec: seconds of load (KServe's autoscaling guide: hey -z 30s).
        concurrency: connections sending at once across all load workers (hey -c).
        rate: open-loop total requests/s across all load workers; 0 for closed loop at the
            given concurrency.
        stages: the load in stages instead of one rate, as kfp-bench load --stages takes them
            (e.g. "30s@10,60s@10-100,idle 30s,30s@100": constant, ramp, idle), open loop, one
            schedule split across the load workers; the load and the replica watcher last their
            sum (leave rate at 0 and duration_sec at its default). Empty: none.
        load_workers: pods generating the load in parallel; their histograms are merged.
        load_node_selector: node labels the load pods must have, a JSON object; empty for none.
        mesh_route: how the load reaches a model behind Kubeflow's Istio mesh: none (the load
            pods have no sidecar: KFP starts every pod with sidecar.istio.io/inject "false",
            so a predictor in a profile namespace answers 403 "RBAC: access denied") or
            sidecar (compiled/kfp_bench_mesh.yaml, whose load pods carry an Istio sidecar and
            so the profile namespace's identity; each load step ends its sidecar when its
            load is over). See docs/running-in-a-cluster.md, "Through the mesh".
        sweep_rates: a rate sweep before the load, one open-loop step per rate (requests/s,
            increasing, e.g. "5,50,500,1000"): KServe's table of QPS against latency and success,
            and the saturation knee; empty for none.
        sweep_step_sec: seconds of each step of the rate sweep.
    """

    run_load: bool = True
    inference_url: str = DEFAULT_INFERENCE_URL
    host_header: str = ""
    payload: str = DEFAULT_PAYLOAD
    duration_sec: float = 30.0
    concurrency: int = 5
    rate: float = 0.0
    stages: str = ""
    load_workers: int = 1
    load_node_selector: dict = field(default_factory=dict)
    mesh_route: str = "none"
    sweep_rates: str = ""
    sweep_step_sec: float = 30.0

    #: The parameters read only beside a switch (any one on): ``kfp_bench.needs``.
    READ_BESIDE = {
        "duration_sec rate load_workers": "run_load",
        "inference_url host_header payload concurrency stages": "run_load sweep_rates",
        "sweep_step_sec": "sweep_rates",
        "load_node_selector": "run_load sweep_rates run_llm",
    }
    #: What ``kfp-bench submit --help`` calls the group.
    TITLE = "the predict load"

    check_group = check_load  # its own check, run by BenchParams.check


def sweep_rates(p) -> tuple[float, ...]:
    """The rates of sweep_rates, checked (empty: no sweep), and sweep_step_sec with them."""
    if not p.sweep_rates.strip():
        return ()
    rates = translated(lambda: parse_rates(p.sweep_rates, "sweep_rates"))
    if rates and max(rates) > MAX_RATE_PER_WORKER:
        raise bad(
            "sweep_rates",
            p.sweep_rates,
            f"the sweep runs in one process: keep each rate at most "
            f"{MAX_RATE_PER_WORKER:g} req/s (the safety cap of a load process)",
        )
    positive("sweep_step_sec", p.sweep_step_sec, MAX_DURATION_S)
    return rates


def staged(p, stages_name: str, text: str, rate_name: str, rate, duration_name: str, duration):
    """The parsed stages of the parameter ``stages_name`` (``text``; empty: none), refused
    beside a rate or a duration other than its default, as the CLI refuses --rate and -z beside
    --stages (``cli/workload.py``): the stages set both. ``ConfigError`` naming the parameter."""
    if not text.strip():
        return ()
    try:
        stages = parse_stages(text, f"pipeline parameter {stages_name}")
    except ConfigError as exc:  # it names the parameter already
        raise ConfigError(str(exc)) from None
    if rate:
        raise bad(rate_name, rate, f"the stages of {stages_name} set the rate; set {rate_name} 0")
    if total_s(stages) > MAX_DURATION_S:  # each load step's timeout is made for this bound
        raise bad(stages_name, text, f"they last {total_s(stages):g} s; keep their sum at most "
                  f"{MAX_DURATION_S:g} s (the load steps' bound)")  # fmt: skip
    default = next(f.default for f in fields(p) if f.name == duration_name)
    if duration not in (default, total_s(stages)):
        raise bad(
            duration_name, duration, f"the stages of {stages_name} last {total_s(stages):g} s "
            f"and set the load's duration: leave {duration_name} at {default:g}",
        )  # fmt: skip
    return stages


def load_stages(p) -> tuple:
    """The stages of the stages parameter, checked (empty: none)."""
    return staged(p, "stages", p.stages, "rate", p.rate, "duration_sec", p.duration_sec)


def load_duration(p) -> float:
    """How long the predict load lasts: the stages' sum, else duration_sec."""
    stages = load_stages(p)
    return total_s(stages) if stages else p.duration_sec


def load_options(p) -> LoadOptions:
    """The load engine's options for all load workers together (``share`` splits them: each
    worker takes its lane of the stages' one schedule, ``load.stages.StageSchedule``)."""
    stages = load_stages(p)
    return LoadOptions(
        url=p.inference_url,
        method="POST",
        body=p.payload.encode(),
        content_type="application/json",
        host=p.host_header,
        duration=total_s(stages) if stages else p.duration_sec,
        concurrency=p.concurrency,
        rate=p.rate,
        stages=stages,
        workers=1,
    )

"""The runs benchmark's parameters (run_benchmark: kfp_host, pipeline, num_runs, ...): their
checks and the driver's ``RunsOptions`` they become, side by side."""

from __future__ import annotations

from dataclasses import dataclass, field

from kfp_bench.kfp.options import RunsOptions
from kfp_bench.steps.auth import token_auth
from kfp_bench.steps.bundled import BUNDLED, bundled_manifest
from kfp_bench.steps.checks import (
    MAX_RUN_TIMEOUT_S,
    MAX_RUNS,
    bad,
    need_url,
    positive,
    positive_int,
    selector,
    translated,
)

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).

#: The cap on fill_runs: the full-database guide's scale (docs/full-database.md), ten times
#: num_runs' cap; the fill's runs are finished at once and swept at the end.
MAX_FILL_RUNS = 10_000


def check_runs(p, fetch: bool = True) -> None:
    """The runs benchmark's parameters of ``p`` (a ``BenchParams``) with run_benchmark on,
    checked as the driver will check its options; with ``fetch``, the child manifest read and
    run_parameters checked against it."""
    if not p.run_benchmark:
        return
    need_url("kfp_host", p.kfp_host, ("http", "https"), "http://ml-pipeline.kubeflow:8888")
    if p.pipeline not in BUNDLED:
        need_url(
            "pipeline",
            p.pipeline,
            ("http", "https", "gs"),
            "noop, or https://host/pipeline.yaml",
            bundled=True,
        )
    positive_int("num_runs", p.num_runs, MAX_RUNS)
    positive_int("create_concurrency", p.create_concurrency, 256)
    positive("poll_interval_sec", p.poll_interval_sec, 3600)
    positive("run_timeout_sec", p.run_timeout_sec, MAX_RUN_TIMEOUT_S)
    if not isinstance(p.run_parameters, dict):
        raise bad("run_parameters", p.run_parameters, 'give a JSON object, e.g. {"n": 1}')
    selector("run_node_selector", p.run_node_selector)
    check_fill(p)
    translated(lambda: runs_options(p, "check").validate())
    if fetch:
        # PyYAML: the kfp extra's, which the steps that only load do not install
        from kfp_bench.kfp.manifest import load_manifest

        manifest = translated(lambda: load_manifest(manifest_source(p)))
        params = child_params(p)
        translated(lambda: manifest.check_params(params))


@dataclass(frozen=True)
class Runs:
    """The runs benchmark's parameters (the pipeline's, ``steps.params.BenchParams``).

    Attributes:
        pipeline: the child pipeline to spawn runs of: noop, fanout or train (bundled), or the
            http(s):// or gs:// URL of a compiled pipeline.
        run_benchmark: run the KFP runs benchmark (upload, spawn, poll).
        num_runs: number of child runs to create.
        create_concurrency: child runs created at once.
        poll_interval_sec: seconds between poll rounds (each LISTs the runs in pages of 200).
        run_timeout_sec: seconds after which unfinished child runs are terminated.
        run_parameters: parameters of each child run, a JSON object; each must be declared by
            the child pipeline.
        run_node_selector: node labels the child runs' pods must have, e.g.
            {"cloud.google.com/gke-nodepool": "pool-1"} as in KFP's benchmark guide; empty for
            none (the child pipeline must declare a node_selector parameter, as bundled ones do).
        fill_runs: first fill the KFP server with this many finished runs of the child pipeline
            (each created, then terminated at once), probing the calls of the KFP UI's Runs
            page as they grow (docs/full-database.md); swept at the end; 0 for none.
        fill_steps: the probes on the way to fill_runs: at the start and after each of this
            many equal steps.
    """

    pipeline: str = "noop"
    run_benchmark: bool = True
    num_runs: int = 10
    create_concurrency: int = 4
    poll_interval_sec: float = 2.0
    run_timeout_sec: float = 600.0
    run_parameters: dict = field(default_factory=dict)
    run_node_selector: dict = field(default_factory=dict)
    fill_runs: int = 0
    fill_steps: int = 5

    #: The parameters read only beside a switch (any one on): ``kfp_bench.needs``.
    READ_BESIDE = {
        "pipeline num_runs create_concurrency poll_interval_sec run_timeout_sec run_parameters "
        "run_node_selector fill_runs": "run_benchmark",
    }
    #: What ``kfp-bench submit --help`` calls the group.
    TITLE = "the runs benchmark"

    check_group = check_runs  # its own check, run by BenchParams.check


def check_fill(p) -> None:
    """fill_runs and fill_steps, as ``kfp-bench runs --fill`` checks them."""
    ok = isinstance(p.fill_runs, int) and not isinstance(p.fill_runs, bool)
    if not ok or not 0 <= p.fill_runs <= MAX_FILL_RUNS:
        raise bad("fill_runs", p.fill_runs,
                  f"give 0 (no fill) or a whole number of runs up to {MAX_FILL_RUNS}")  # fmt: skip
    if p.fill_runs:
        positive_int("fill_steps", p.fill_steps, p.fill_runs)


def fill_options(p):
    """The fill's options (``kfp_bench.kfp.fill.FillOptions``) of ``p``."""
    from kfp_bench.kfp.fill import FillOptions

    return FillOptions(target=p.fill_runs, steps=p.fill_steps).validate(MAX_FILL_RUNS)


def manifest_source(p) -> str:
    """The child manifest as the driver loads it: a file for a bundled name, else the URL."""
    return str(bundled_manifest(p.pipeline)) if p.pipeline in BUNDLED else p.pipeline


def child_params(p) -> dict:
    """The child runs' parameters, with run_node_selector as their node_selector.

    A KFP dict parameter travels as a protobuf Struct, whose numbers are all doubles: a whole
    number comes back an int, as the child's integer parameters need (and a double parameter
    accepts).
    """
    params = {
        k: int(v) if isinstance(v, float) and v.is_integer() else v
        for k, v in p.run_parameters.items()
    }
    if p.run_node_selector:
        params["node_selector"] = dict(p.run_node_selector)
    return params


def runs_options(p, benchmark_id: str, pipeline_id: str = "") -> RunsOptions:
    """The driver's options for ``p`` (the API token as ``token_auth`` finds it); benchmark_id
    "check" for the first step's check, which makes no call."""
    check = benchmark_id == "check"
    return RunsOptions(
        host=p.kfp_host,
        pipeline=manifest_source(p),
        num_runs=p.num_runs,
        create_concurrency=p.create_concurrency,
        poll_interval=p.poll_interval_sec,
        timeout=p.run_timeout_sec,
        params=child_params(p),
        pipeline_id=pipeline_id,
        benchmark_id="" if check else benchmark_id,
        # the check makes no call; the steps resolve the namespace and the token on the API
        auth=token_auth(p.namespace, "" if check else p.kfp_host, p.token_secret),
    )

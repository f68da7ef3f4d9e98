"""The meta-pipeline's parameters: ``BenchParams``, their defaults, and ``check``, which runs each
part's checks.

``BenchParams`` holds every knob of the kfp_bench pipeline; its docstring is the source of the
pipeline's parameter help and of ``kfp-bench submit --help``. The defaults work in a cluster with
Kubeflow Pipelines and KServe's first example InferenceService (sklearn-iris): the in-cluster KFP
API, the bundled noop child pipeline, and the KServe autoscaling guide's load (30 s at
concurrency 5). ``check()`` is what the pipeline's first step runs: a bad value raises one
``ConfigError`` naming the parameter and the fix, before anything is created. Each part's
parameters are checked, and made into the engine's options, in the part's own module:
``runs_params``, ``load_params``, ``llm_params``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field, fields

from kfp_bench import gates
from kfp_bench.errors import ConfigError
from kfp_bench.kfp.incluster import resolve_namespace
from kfp_bench.kserve.kube import kube_namespace
from kfp_bench.kserve.spec import IsvcSpec
from kfp_bench.names import check_dns1123_label
from kfp_bench.push import check_url
from kfp_bench.stats.cost import FIX, is_price
from kfp_bench.steps.checks import (
    MAX_WAIT_S,
    bad,
    check_history,
    check_mesh_route,
    selector,
    translated,
)
from kfp_bench.steps.ids import check_id
from kfp_bench.steps.llm_params import check_llm
from kfp_bench.steps.load_params import (
    DEFAULT_INFERENCE_URL,
    DEFAULT_PAYLOAD,
    check_load,
    sweep_rates,
)
from kfp_bench.steps.runs_params import check_runs
from kfp_bench.steps.server_metrics import check_metrics

DEFAULT_KFP_HOST = "http://ml-pipeline.kubeflow.svc.cluster.local:8888"


@dataclass(frozen=True)
class BenchParams:
    """The parameters of the kfp_bench pipeline.

    Attributes:
        kfp_host: the KFP API to benchmark; the in-cluster ml-pipeline service by default.
        namespace: the Kubernetes namespace of multi-user KFP (your profile); empty for
            standalone KFP.
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
        isvc: an InferenceService to deploy before the load, watch during it and delete at the
            end, a JSON object of kfp_bench.kserve.IsvcSpec fields (name, model_format,
            storage_uri, deployment_mode, predictor: {scale_target, scale_metric, min_replicas,
            ...}); its URL replaces inference_url. Empty (the default): none, no cluster needed.
        run_llm: run the streaming LLM load (kfp-bench llm) on llm_url, instead of or beside the
            inference load; its steps (llm_load per worker, report_llm) run only when on.
        llm_url: the OpenAI-compatible base URL to stream from, without /v1 (KServe:
            http://NAME-predictor.NAMESPACE.svc.cluster.local/openai; vLLM: http://host:8000);
            empty with an isvc: the deployed InferenceService's /openai.
        llm_endpoint: completions (/v1/completions) or chat (/v1/chat/completions).
        llm_model: the model name requests ask for; empty: the one model llm_url's /v1/models
            lists, or with an isvc the name it serves.
        llm_concurrency: streams at once across all LLM load workers (closed loop).
        llm_rate: open-loop total requests/s across the LLM load workers, TTFT also from the
            intended send; 0 for closed loop at llm_concurrency.
        llm_duration_sec: seconds of LLM load.
        llm_stages: the LLM load in stages, as stages is for the predict load (kfp-bench llm
            --stages); leave llm_rate at 0 and llm_duration_sec at its default. Empty: none.
        llm_multi_turn: chat sessions, TURNS[,THINK_S] (kfp-bench llm --multi-turn), e.g. 5,2:
            each of llm_concurrency streams runs sessions of 5 turns, each turn carrying the
            history, 2 s between turns (with llm_rate: sessions started at that rate); needs
            llm_endpoint chat. Empty: none.
        llm_input_tokens: the synthetic prompts' length in words: fixed:N, uniform:LO,HI,
            normal:MEAN,SD or lognormal:MEDIAN,SIGMA.
        llm_output_tokens: the requests' max_tokens, drawn as llm_input_tokens is.
        llm_slo: goodput bounds, e.g. ttft=500ms,itl=50ms,tpot=30ms,e2e=10s; empty: every
            completed request is good.
        llm_warmup_sec: requests sent in this first part of the LLM load count in no figure.
        llm_find_max: rate or concurrency: instead of one load, search for the highest level at
            which llm_slo holds for 90% of the requests (kfp-bench llm --find-max), probes of
            llm_duration_sec each from 1 req/s or 1 stream; needs llm_slo and one LLM load
            worker. The report gives the last passing and first failing level and every probe;
            its figures are the last passing probe's. Empty: one load.
        llm_workers: pods streaming the LLM load in parallel; their histograms are merged.
        cost_per_hour: the serving nodes' or GPUs' price per hour, in your currency: the
            reports and Metrics add the cost of each load's measured window per 1000
            successful requests (load_cost_per_thousand_requests, cost_per_thousand_requests)
            and per million output tokens (cost_per_million_output_tokens; unknown when the
            tokens are). 0 (the default): none.
        llm_tokenizer: the model's tokenizer.json, an http(s) URL (fetched once by each LLM
            load worker) or a path its pod can read: a server that streams no usage has its
            tokens counted with it; without it they are unknown.
        token_secret: a Secret whose key "token" is a KFP API bearer token, mounted into the
            steps that call KFP when it exists; they use it only when the projected
            service-account token of multi-user KFP (pods labelled access-ml-pipeline) is absent
            or refused; with neither, no auth.
        benchmark_id: a prefix of the id in the name of everything the benchmark creates on
            the KFP server, up to 40 lower-case letters, digits and dashes; each run appends its
            own: the prefix (its first 29 characters) + "-" + 10 hex digits of the SHA-256 of
            the pipeline run's id, so that the runs of a recurring run never share (and sweep)
            each other's resources. Empty: the pipeline run's id alone. It also names the lease
            (kfp-bench-lease-<benchmark_id>, else kfp-bench-lease-kfp-bench) that keeps two
            benchmarks of that name from running at once.
        lease_wait_sec: seconds to wait for the lease while another live benchmark of the same
            benchmark_id holds it; 0 (the default): refuse at once, naming the holder. Only with
            run_benchmark on (the lease is an experiment on the KFP server).
        results_uri: the results history: gs://BUCKET/PREFIX, s3://BUCKET/PREFIX (AWS, or any
            S3 API with ?endpoint=URL), minio://BUCKET/PREFIX (KFP's own store and its
            mlpipeline-minio-artifact Secret; on multi-user Kubeflow a profile may write under
            minio://mlpipeline/private/NAMESPACE/), or a folder the report step's pod can write
            (a mounted volume; file:///PATH too). The report step archives the
            results there, and the report shows the trend of the earlier ones and the
            regression verdict against baseline (in the metrics: regression, baseline_results,
            ...). Empty (the default): no history.
        baseline: with results_uri, what the regression verdict tests against: last:N (the N
            latest earlier results there, pooled) or one history key (YYYYMMDDTHHMMSSZ-
            followed by 8 hex digits); empty for the trend alone. Too few earlier results: the
            report says so.
        thresholds: gates over the stable Metrics names, comma-separated: NAME<N, <=, > or
            >=, e.g. load_p99_ms<50,runs_success_ratio>=0.99,llm_goodput_ratio>=0.95. Checked
            once the report and its metrics are published: a figure beyond its bound, or not
            measured, fails the run, and the report's first lines say which gate broke. A gate
            on a figure that no switched-on part measures is refused at check_params.
        fail_on_regression: with results_uri and baseline, fail the run (once its report is
            published) when the regression verdict finds a regression; too few earlier results
            for a verdict (a new history's first runs) does not fail it.
        pushgateway_url: a Prometheus Pushgateway's base URL (http://HOST:9091): the check step
            pushes the headline figures there, labelled benchmark (benchmark_id as given, else
            kfp-bench), target and part, and the last-success time when the run passed
            (kfp_bench.push, docs/alerting.md). Empty (the default): no push.
        prometheus_url: the Prometheus (its HTTP API) that metrics_profile's queries go to, e.g.
            http://prometheus.monitoring:9090; empty without a profile.
        metrics_profile: named PromQL queries run over the load's window and drawn under the
            client's series (docs/metrics-profiles.md): a built-in name (kserve-predictor, kfp,
            gpu) or the profile's YAML text itself (a pod has no local file; the text is kept
            in the run's parameters, so the run records what was asked). Empty: none.
        metrics_scrape: /metrics endpoints sampled every second while the load runs,
            comma-separated (the predictor's pods, vLLM); empty for none. Load worker 0 alone
            scrapes and queries: the others would read the same server.
        metrics_vars: the profile's {{.NAME}} values, NAME=VALUE comma-separated; namespace and
            isvc are the isvc's own (its namespace and name) unless given here.
        metrics_scrape_token: send the pod's Kubernetes service-account token as a bearer
            token to the metrics_scrape endpoints (a predictor behind Istio or KFP auth).
    """

    kfp_host: str = DEFAULT_KFP_HOST
    namespace: str = ""
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
    isvc: dict = field(default_factory=dict)
    run_llm: bool = False
    llm_url: str = ""
    llm_endpoint: str = "completions"
    llm_model: str = ""
    llm_concurrency: int = 16
    llm_rate: float = 0.0
    llm_stages: str = ""
    llm_multi_turn: str = ""
    llm_duration_sec: float = 30.0
    llm_input_tokens: str = "fixed:128"
    llm_output_tokens: str = "fixed:64"
    llm_slo: str = ""
    llm_warmup_sec: float = 0.0
    llm_find_max: str = ""
    llm_workers: int = 1
    cost_per_hour: float = 0.0
    llm_tokenizer: str = ""
    token_secret: str = "kfp-bench-token"
    benchmark_id: str = ""
    lease_wait_sec: float = 0.0
    results_uri: str = ""
    baseline: str = "last:5"
    thresholds: str = ""
    fail_on_regression: bool = False
    pushgateway_url: str = ""
    prometheus_url: str = ""
    metrics_profile: str = ""
    metrics_scrape: str = ""
    metrics_vars: str = ""
    metrics_scrape_token: bool = False

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def as_dict(self) -> dict:
        """The parameters as a JSON object, as the first step hands them to the others."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, doc: dict) -> BenchParams:
        """Parameters from ``as_dict`` as they come back through KFP: a protobuf Struct, whose
        numbers are all doubles, so each field is made its own type again."""
        kinds = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(doc) - set(kinds))
        if unknown:
            raise ConfigError(f"pipeline parameters {unknown}: not parameters of kfp_bench")
        cast = {"int": int, "float": float}
        return cls(**{k: cast[kinds[k]](v) if kinds[k] in cast else v for k, v in doc.items()})

    def check(self, *, fetch: bool = True) -> BenchParams:
        """Check every parameter; raise ``ConfigError`` naming the parameter and the fix.

        Args:
            fetch: also read the child manifest and check run_parameters against it.
        """
        if not (self.run_benchmark or self.run_load or self.sweep_rates or self.run_llm):
            raise ConfigError(
                "pipeline parameters run_benchmark, run_load and run_llm are all false and "
                "sweep_rates is empty: nothing to measure; set one of them"
            )
        check_id(self.benchmark_id)
        w = self.lease_wait_sec
        if not (isinstance(w, int | float) and not isinstance(w, bool) and 0 <= w <= MAX_WAIT_S):
            raise bad("lease_wait_sec", w, f"give seconds from 0 (refuse) to {MAX_WAIT_S:g}")
        if self.namespace:
            check_dns1123_label(self.namespace, "pipeline parameter namespace=")
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", self.token_secret):
            raise bad("token_secret", self.token_secret, "give a Kubernetes Secret name")
        selector("load_node_selector", self.load_node_selector)
        if self.run_benchmark:
            check_runs(self, fetch)
        if self.run_load or self.sweep_rates:
            check_load(self)
        sweep_rates(self)
        if self.isvc:
            self.isvc_spec()
        if self.run_llm:
            check_llm(self)
        if not is_price(self.cost_per_hour):
            raise bad("cost_per_hour", self.cost_per_hour, FIX)
        check_history(self.results_uri, self.baseline)
        self.gates(self.kinds())  # refused here, before anything starts
        if self.pushgateway_url:
            check_url(self.pushgateway_url, "pipeline parameter pushgateway_url=")
        check_mesh_route(self)  # after the URLs: their form is known good here
        check_metrics(self)
        return self

    def kinds(self) -> set[str]:
        """The parts of the benchmark these parameters switch on (``kfp_bench.gates.KINDS``)."""
        on = {"runs": self.run_benchmark, "load": self.run_load, "llm": self.run_llm}
        on |= {"sweep": bool(self.sweep_rates.strip()), "replicas": bool(self.isvc)}
        on["regression"] = bool(self.results_uri and self.baseline)
        return {k for k, v in on.items() if v}

    def gates(self, kinds) -> tuple:
        """The gates of thresholds and fail_on_regression (``kfp_bench.gates``) on the figures of
        ``kinds`` (what one report step publishes); ``ConfigError`` for a bad one, or one on a
        figure no switched-on part measures."""
        found = gates.parse(self.thresholds, "pipeline parameter thresholds")
        found += (gates.REGRESSION_GATE,) if self.fail_on_regression else ()
        fix = (
            "switch on what measures it (run_benchmark, run_load, sweep_rates, isvc, "
            "run_llm; results_uri and baseline for the regression verdict) or drop the gate"
        )
        gates.require(found, self.kinds(), "pipeline parameter thresholds", fix,
                      "pipeline parameter fail_on_regression")  # fmt: skip
        return tuple(g for g in found if g.kind in kinds)

    def isvc_spec(self):
        """The checked ``IsvcSpec`` of the isvc parameter, or None when no InferenceService is
        to be deployed. Its namespace, unless the isvc names one, is ``kube_namespace``'s for
        namespace (resolved first by ``with_namespace``)."""
        if not self.isvc:
            return None
        doc = {"namespace": kube_namespace(self.namespace), **self.isvc}
        return translated(lambda: IsvcSpec.from_dict(doc).validate())

    def with_namespace(self, log=print) -> BenchParams:
        """These parameters with namespace decided for every step, KFP calls and Kubernetes
        objects alike (``kfp.incluster.resolve_namespace``): the parameter when set; else, on
        multi-user KFP, this pod's own (printed; ``ConfigError`` naming the parameter when the
        pod has none); else empty (single-user KFP: Kubernetes objects go to "default").
        Asks the KFP API's healthz only when something needs a namespace: the runs benchmark,
        or an isvc that names none."""
        isvc_needs = bool(self.isvc) and "namespace" not in self.isvc
        if self.namespace or not (self.run_benchmark or isvc_needs):
            return self
        host = self.kfp_host.rstrip("/")
        found = resolve_namespace(host, "", "pipeline parameter namespace", log)
        return dataclasses.replace(self, namespace=found)

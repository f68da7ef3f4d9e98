"""The meta-pipeline's parameters: their defaults, their checks, and the engine options they become.

``BenchParams`` holds every knob of the kfp_bench pipeline; its docstring is the source of the
pipeline's parameter help and of ``kfp-bench submit --help``. The defaults work in a cluster with
Kubeflow Pipelines and KServe's first example InferenceService (sklearn-iris): the in-cluster KFP
API, the bundled noop child pipeline, and the KServe autoscaling guide's load (30 s at
concurrency 5). ``check()`` is what the pipeline's first step runs: a bad value raises one
``ConfigError`` naming the parameter and the fix, before anything is created. The components then
turn the parameters into the engine's own options (``runs_options``, ``load_options``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from kfp_bench.errors import ConfigError
from kfp_bench.names import check_dns1123_label, dns1123_label

DEFAULT_KFP_HOST = "http://ml-pipeline.kubeflow.svc.cluster.local:8888"
DEFAULT_INFERENCE_URL = (
    "http://sklearn-iris-predictor.default.svc.cluster.local/v1/models/sklearn-iris:predict"
)
DEFAULT_PAYLOAD = '{"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}'
#: The child pipelines bundled with kfp-bench (pipelines/children.py), by name.
BUNDLED = ("noop", "fanout", "train")
#: Where a component finds a mounted API token (the Secret of kfp_bench's token_secret).
TOKEN_DIR = "/var/run/secrets/kfp-bench"
MAX_LOAD_WORKERS = 64
MAX_RUNS = 1000
MAX_DURATION_S = 3600.0
MAX_RUN_TIMEOUT_S = 86400.0
#: A benchmark id's length: NAME_PREFIX + id + "-00001" must stay a 63-character label.
MAX_ID = 40
#: The run's own part of a benchmark id made from a given prefix: hex digits of a SHA-256.
RUN_HASH_LEN = 10
#: The longest lease_wait_sec.
MAX_WAIT_S = MAX_RUN_TIMEOUT_S


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
        run_load: run the inference load.
        inference_url: the URL to load, e.g. an InferenceService's V1 predict URL.
        host_header: HTTP Host header, for an InferenceService behind the ingress
            (SERVICE_HOSTNAME in KServe's guides); empty to use the URL's host.
        payload: the JSON request body, POSTed as application/json.
        duration_sec: seconds of load (KServe's autoscaling guide: hey -z 30s).
        concurrency: connections sending at once across all load workers (hey -c).
        rate: open-loop total requests/s across all load workers; 0 for closed loop at the
            given concurrency.
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
        llm_input_tokens: the synthetic prompts' length in words: fixed:N, uniform:LO,HI,
            normal:MEAN,SD or lognormal:MEDIAN,SIGMA.
        llm_output_tokens: the requests' max_tokens, drawn as llm_input_tokens is.
        llm_slo: goodput bounds, e.g. ttft=500ms,itl=50ms,tpot=30ms,e2e=10s; empty: every
            completed request is good.
        llm_warmup_sec: requests sent in this first part of the LLM load count in no figure.
        llm_workers: pods streaming the LLM load in parallel; their histograms are merged.
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
    run_load: bool = True
    inference_url: str = DEFAULT_INFERENCE_URL
    host_header: str = ""
    payload: str = DEFAULT_PAYLOAD
    duration_sec: float = 30.0
    concurrency: int = 5
    rate: float = 0.0
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
    llm_duration_sec: float = 30.0
    llm_input_tokens: str = "fixed:128"
    llm_output_tokens: str = "fixed:64"
    llm_slo: str = ""
    llm_warmup_sec: float = 0.0
    llm_workers: int = 1
    token_secret: str = "kfp-bench-token"
    benchmark_id: str = ""
    lease_wait_sec: float = 0.0
    results_uri: str = ""
    baseline: str = "last:5"
    thresholds: str = ""
    fail_on_regression: bool = False
    pushgateway_url: str = ""

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
        _check_id(self.benchmark_id)
        w = self.lease_wait_sec
        if not (isinstance(w, int | float) and not isinstance(w, bool) and 0 <= w <= MAX_WAIT_S):
            raise _bad("lease_wait_sec", w, f"give seconds from 0 (refuse) to {MAX_WAIT_S:g}")
        if self.namespace:
            check_dns1123_label(self.namespace, "pipeline parameter namespace=")
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", self.token_secret):
            raise _bad("token_secret", self.token_secret, "give a Kubernetes Secret name")
        _selector("load_node_selector", self.load_node_selector)
        if self.run_benchmark:
            self._check_runs(fetch)
        if self.run_load or self.sweep_rates:
            self._check_load()
        if self.sweep_rates:
            from kfp_bench.load.options import MAX_RATE_PER_WORKER, parse_rates

            rates = self._translated(lambda: parse_rates(self.sweep_rates, "sweep_rates"))
            if rates and max(rates) > MAX_RATE_PER_WORKER:
                raise _bad(
                    "sweep_rates",
                    self.sweep_rates,
                    f"the sweep runs in one process: keep each rate at most "
                    f"{MAX_RATE_PER_WORKER:g} req/s (the safety cap of a load process)",
                )
            _positive("sweep_step_sec", self.sweep_step_sec, MAX_DURATION_S)
        if self.isvc:
            self.isvc_spec()
        if self.run_llm:
            from kfp_bench.llm_params import check_llm

            check_llm(self)
        _check_history(self.results_uri, self.baseline)
        self.gates(self.kinds())  # refused here, before anything starts
        if self.pushgateway_url:
            from kfp_bench.push import check_url

            check_url(self.pushgateway_url, "pipeline parameter pushgateway_url=")
        self._check_mesh_route()  # after the URLs: their form is known good here
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
        from kfp_bench import gates

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
        from kfp_bench.kserve.kube import kube_namespace
        from kfp_bench.kserve.spec import IsvcSpec

        doc = {"namespace": kube_namespace(self.namespace), **self.isvc}
        return self._translated(lambda: IsvcSpec.from_dict(doc).validate())

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
        import dataclasses

        from kfp_bench.kfp.incluster import resolve_namespace

        host = self.kfp_host.rstrip("/")
        found = resolve_namespace(host, "", "pipeline parameter namespace", log)
        return dataclasses.replace(self, namespace=found)

    def _check_runs(self, fetch: bool) -> None:
        _url("kfp_host", self.kfp_host, ("http", "https"), "http://ml-pipeline.kubeflow:8888")
        if self.pipeline not in BUNDLED:
            _url(
                "pipeline",
                self.pipeline,
                ("http", "https", "gs"),
                "noop, or https://host/pipeline.yaml",
                bundled=True,
            )
        _positive_int("num_runs", self.num_runs, MAX_RUNS)
        _positive_int("create_concurrency", self.create_concurrency, 256)
        _positive("poll_interval_sec", self.poll_interval_sec, 3600)
        _positive("run_timeout_sec", self.run_timeout_sec, MAX_RUN_TIMEOUT_S)
        if not isinstance(self.run_parameters, dict):
            raise _bad("run_parameters", self.run_parameters, 'give a JSON object, e.g. {"n": 1}')
        _selector("run_node_selector", self.run_node_selector)
        self._translated(lambda: self.runs_options("check").validate())
        if fetch:
            from kfp_bench.kfp.manifest import load_manifest

            manifest = self._translated(lambda: load_manifest(self.manifest_source()))
            params = self.child_params()
            self._translated(lambda: manifest.check_params(params))

    def _check_load(self) -> None:
        _url("inference_url", self.inference_url, ("http", "https"), DEFAULT_INFERENCE_URL)
        _positive("duration_sec", self.duration_sec, MAX_DURATION_S)
        _positive_int("concurrency", self.concurrency, 10000)
        _positive_int("load_workers", self.load_workers, MAX_LOAD_WORKERS)
        if self.concurrency < self.load_workers:
            raise _bad(
                "concurrency",
                self.concurrency,
                f"give at least one connection per load worker (load_workers={self.load_workers})",
            )
        if not (isinstance(self.rate, int | float) and 0 <= self.rate < float("inf")):
            raise _bad("rate", self.rate, "give requests/s >= 0 (0: closed loop)")
        if self.host_header and not re.fullmatch(r"[A-Za-z0-9.:\[\]-]+", self.host_header):
            raise _bad("host_header", self.host_header, "give a host name such as iris.example.com")
        try:
            json.loads(self.payload)
        except (TypeError, ValueError) as exc:
            raise _bad(
                "payload", self.payload[:60], f"not JSON ({exc}); give e.g. {DEFAULT_PAYLOAD}"
            ) from None
        from kfp_bench.load.options import MAX_RATE_PER_WORKER

        per_worker = self.rate / self.load_workers
        if per_worker > MAX_RATE_PER_WORKER:
            need = math.ceil(self.rate / MAX_RATE_PER_WORKER)
            fix = (
                f"raise load_workers to at least {need}"
                if need <= MAX_LOAD_WORKERS
                else f"give at most {MAX_LOAD_WORKERS * MAX_RATE_PER_WORKER:g} req/s in total"
            )
            raise _bad(
                "rate",
                self.rate,
                f"that is {per_worker:g} req/s per load worker, above the safety cap of "
                f"{MAX_RATE_PER_WORKER:g}: {fix}",
            )
        # What each load worker runs (the largest share), checked as the engine will check it.
        self._translated(lambda: self.load_options().share(0, self.load_workers).validate())

    def _check_mesh_route(self) -> None:
        from kfp_bench.mesh import MESH_PORT, ROUTES

        if self.mesh_route not in ROUTES:
            raise _bad("mesh_route", self.mesh_route, f"give one of {', '.join(ROUTES)}")
        if self.mesh_route != "sidecar" or self.isvc:  # an InferenceService's URL is port 80
            return
        urls = {"inference_url": self.inference_url} if self.run_load or self.sweep_rates else {}
        if self.run_llm and self.llm_url:
            urls["llm_url"] = self.llm_url
        for name, url in urls.items():
            parts = urlsplit(url)
            if parts.scheme != "http" or (parts.port or MESH_PORT) != MESH_PORT:
                raise _bad(
                    name,
                    url,
                    f"with mesh_route=sidecar the load pods' sidecar carries only plain http to "
                    f"port {MESH_PORT} (a predictor's Service port); give an http:// URL without "
                    "a port, or mesh_route=none",
                )

    @staticmethod
    def _translated(fn):
        """Run an engine check; its message names a CLI flag, so say it is about the parameters."""
        try:
            return fn()
        except ConfigError as exc:
            raise ConfigError(f"pipeline parameters: {exc}") from None

    # -- what the components build from the parameters ---------------------------------------
    def manifest_source(self) -> str:
        """The child manifest as the driver loads it: a file for a bundled name, else the URL."""
        return str(bundled_manifest(self.pipeline)) if self.pipeline in BUNDLED else self.pipeline

    def child_params(self) -> dict:
        """The child runs' parameters, with run_node_selector as their node_selector.

        A KFP dict parameter travels as a protobuf Struct, whose numbers are all doubles: a
        whole number comes back an int, as the child's integer parameters need (and a double
        parameter accepts).
        """
        params = {
            k: int(v) if isinstance(v, float) and v.is_integer() else v
            for k, v in self.run_parameters.items()
        }
        if self.run_node_selector:
            params["node_selector"] = dict(self.run_node_selector)
        return params

    def runs_options(self, benchmark_id: str, pipeline_id: str = ""):
        """The driver's options for these parameters (the API token as ``token_auth`` finds it)."""
        from kfp_bench.kfp.options import RunsOptions

        return RunsOptions(
            host=self.kfp_host,
            pipeline=self.manifest_source(),
            num_runs=self.num_runs,
            create_concurrency=self.create_concurrency,
            poll_interval=self.poll_interval_sec,
            timeout=self.run_timeout_sec,
            params=self.child_params(),
            pipeline_id=pipeline_id,
            benchmark_id=benchmark_id if benchmark_id != "check" else "",
            # the check makes no call; the steps resolve the namespace and the token on the API
            auth=token_auth(
                self.namespace, "" if benchmark_id == "check" else self.kfp_host, self.token_secret
            ),  # fmt: skip
        )

    def load_options(self):
        """The load engine's options for all load workers together (``share`` splits them)."""
        from kfp_bench.load.options import LoadOptions

        return LoadOptions(
            url=self.inference_url,
            method="POST",
            body=self.payload.encode(),
            content_type="application/json",
            host=self.host_header,
            duration=self.duration_sec,
            concurrency=self.concurrency,
            rate=self.rate,
            workers=1,
        )


def token_auth(namespace: str = "", host: str = "", secret: str = "kfp-bench-token"):
    """The driver's auth inside a pipeline pod: the projected service-account token (multi-user
    KFP), else the token of the mounted Secret ``secret``, else none.

    With ``host``, ``kfp_bench.kfp.incluster.step_auth`` asks the API: an empty namespace
    becomes the pod's own when it is multi-user KFP (printed; ``ConfigError`` when the pod has
    none), and a projected token it refuses gives way to the Secret's. Without, no call is made.
    """
    from kfp_bench.kfp.auth import Auth

    token = Path(token_dir()) / "token"
    if host:
        from kfp_bench.kfp.incluster import step_auth

        return step_auth(host, namespace, str(token), secret)
    from kfp_bench.kfp.auth import sa_token_path

    if Path(sa_token_path()).exists() or not token.exists():
        return Auth("auto", "", namespace)
    return Auth("token-file", str(token), namespace, source=f"Secret {secret}")


def token_dir() -> str:
    """Where the Secret's token is mounted: ``TOKEN_DIR``, moved by $KFP_BENCH_TOKEN_DIR (tests
    simulate a pod with it)."""
    import os

    return os.environ.get("KFP_BENCH_TOKEN_DIR") or TOKEN_DIR


def benchmark_id_for(given: str, job_id: str) -> str:
    """The benchmark id of one pipeline run: always its own (issue 18).

    ``given`` (the benchmark_id parameter) is a prefix: its first 29 characters, "-", and 10 hex
    digits of the SHA-256 of ``job_id``, 40 characters at most. A recurring run passes every run
    the same parameters, so a fixed id would be shared by all its runs, and each run's cleanup
    would sweep the others'. Empty: ``job_id`` itself made a DNS-1123 label. The first step and
    the exit handler each derive it from the same two values, so they agree.
    """
    if not given:
        return dns1123_label(job_id or "run", MAX_ID)
    _check_id(given)
    digest = hashlib.sha256((job_id or "run").encode("utf-8", "surrogatepass")).hexdigest()
    head = given[: MAX_ID - RUN_HASH_LEN - 1].rstrip("-")
    return f"{head}-{digest[:RUN_HASH_LEN]}"


def bundled_manifest(name: str) -> Path:
    """The compiled YAML of a bundled child pipeline, as the package ships it (compiled/)."""
    if name not in BUNDLED:
        raise _bad("pipeline", name, f"give one of {', '.join(BUNDLED)} or a URL")
    return compiled_file(name)


def compiled_file(name: str) -> Path:
    """compiled/<name>.yaml, installed with the package as kfp_bench.compiled."""
    from importlib.resources import files

    return Path(str(files("kfp_bench.compiled") / f"{name}.yaml"))


def _bad(name: str, value, fix: str) -> ConfigError:
    return ConfigError(f"pipeline parameter {name}={value!r}: {fix}")


def _check_id(bid: str) -> str:
    # The id is in the name of the child pipeline, its versions and runs (kfp-bench-ID-00001):
    # in KFP's Kubernetes-native mode a pipeline's name is a Kubernetes object's name.
    if bid:
        check_dns1123_label(bid, "pipeline parameter benchmark_id=", MAX_ID)
    return bid


def _url(name: str, value, schemes, example: str, bundled: bool = False) -> None:
    ok = isinstance(value, str) and urlsplit(value).scheme in schemes
    if ok and urlsplit(value).netloc:
        return
    names = f"one of {', '.join(BUNDLED)} or " if bundled else ""
    raise _bad(name, value, f"give {names}a {'/'.join(schemes)} URL, e.g. {example}")


def _positive(name: str, value, cap: float) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= cap
    if not ok:
        raise _bad(name, value, f"give a number of seconds above 0 and at most {cap:g}")


def _positive_int(name: str, value, cap: int) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= cap
    if not ok:
        raise _bad(name, value, f"give a whole number from 1 to {cap}")


def _selector(name: str, value) -> None:
    ok = isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )
    if not ok:
        raise _bad(name, value, 'give a JSON object of label strings, e.g. {"pool": "pool-1"}')


def _check_history(uri: str, baseline: str) -> None:
    """results_uri and baseline as ``kfp_bench.history`` reads them (uri.open_store,
    baseline_keys); checked here by their text alone: the first step's extra has neither the
    GCS client nor the results readers. A local folder must be writable."""
    if baseline and not re.fullmatch(
        r"last:[1-9][0-9]{0,3}|[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}", baseline
    ):
        raise _bad(
            "baseline",
            baseline,
            "give last:N (N from 1 to 9999, e.g. last:5), a history key such as "
            "20260101T000000Z-0123abcd, or empty for no verdict",
        )
    if not uri:
        return
    fix = (
        "give gs://, s3:// or minio://BUCKET/PREFIX or a folder the steps can write, e.g. on a "
        "mounted volume"
    )
    parts = urlsplit(uri)
    if parts.scheme in ("gs", "s3", "minio"):
        if not parts.netloc:
            raise _bad("results_uri", uri, f"no bucket; give {parts.scheme}://BUCKET/PREFIX")
        if parts.scheme != "gs" and parts.query:
            # the text check of kfp_bench.history.s3.parse (boto3 is not in this step's extra)
            query = parse_qs(parts.query, keep_blank_values=True)
            if set(query) - {"endpoint", "region"} or any(
                len(v) != 1 or not v[0] for v in query.values()
            ):
                raise _bad("results_uri", uri, "the query takes endpoint=URL and region=NAME")
        return
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise _bad("results_uri", uri, "a file:// URI takes no host: file:///PATH")
        path = Path(unquote(parts.path))
    elif len(parts.scheme) > 1:  # one letter: a Windows drive
        raise _bad("results_uri", uri, f"scheme {parts.scheme}:// is not supported; {fix}")
    else:
        path = Path(uri)
    if path.exists() and not path.is_dir():
        raise _bad("results_uri", uri, f"{path} is a file; {fix}")
    # the folder is created when missing: its nearest existing parent must take it
    there = next(p for p in (path, *path.absolute().parents) if p.exists())
    if not (there.is_dir() and os.access(there, os.W_OK | os.X_OK)):
        raise _bad("results_uri", uri, f"{there} is not writable here; {fix}")

"""The meta-pipeline's parameters: ``BenchParams``, the flat union of the groups of ``GROUPS``.

Each group is a small dataclass of one concern (the target, the runs benchmark, the predict load,
KServe, the LLM load, the history and gates, the server metrics) holding its fields, their
defaults, their help (its docstring: the source of the pipeline's parameter help, of the check
step's and of ``kfp-bench submit --help``) and its own checks (``check_group``), in the module
that also makes them into the engine's options: ``runs_params``, ``load_params``,
``llm_params``, ``server_metrics``, or here. The defaults work in a cluster with Kubeflow
Pipelines and KServe's first example InferenceService (sklearn-iris): the in-cluster KFP API, the
bundled noop child pipeline, and the KServe autoscaling guide's load (30 s at concurrency 5).
``check()`` is what the pipeline's first step runs: a bad value raises one ``ConfigError``
naming the parameter and the fix, before anything is created.
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
    translated,
)
from kfp_bench.steps.ids import check_id
from kfp_bench.steps.llm_params import LlmLoad
from kfp_bench.steps.load_params import PredictLoad
from kfp_bench.steps.runs_params import Runs
from kfp_bench.steps.server_metrics import ServerMetrics

DEFAULT_KFP_HOST = "http://ml-pipeline.kubeflow.svc.cluster.local:8888"


@dataclass(frozen=True)
class BenchTarget:
    """Where the benchmark runs and what it names (the pipeline's, ``BenchParams``).

    Attributes:
        kfp_host: the KFP API to benchmark; the in-cluster ml-pipeline service by default.
        namespace: the Kubernetes namespace of multi-user KFP (your profile); empty for
            standalone KFP.
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
    """

    kfp_host: str = DEFAULT_KFP_HOST
    namespace: str = ""
    token_secret: str = "kfp-bench-token"
    benchmark_id: str = ""
    lease_wait_sec: float = 0.0

    #: The parameters read only beside a switch (any one on): ``kfp_bench.needs``.
    READ_BESIDE = {"lease_wait_sec": "run_benchmark"}
    #: What ``kfp-bench submit --help`` calls the group.
    TITLE = "the target"

    def check_group(self, fetch: bool = True) -> None:
        """The id, the lease's wait, the namespace's and the Secret's names."""
        check_id(self.benchmark_id)
        w = self.lease_wait_sec
        if not (isinstance(w, int | float) and not isinstance(w, bool) and 0 <= w <= MAX_WAIT_S):
            raise bad("lease_wait_sec", w, f"give seconds from 0 (refuse) to {MAX_WAIT_S:g}")
        if self.namespace:
            check_dns1123_label(self.namespace, "pipeline parameter namespace=")
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", self.token_secret):
            raise bad("token_secret", self.token_secret, "give a Kubernetes Secret name")


@dataclass(frozen=True)
class KServe:
    """The InferenceService served and its price (the pipeline's, ``BenchParams``).

    Attributes:
        isvc: an InferenceService to deploy before the load, watch during it and delete at the
            end, a JSON object of kfp_bench.kserve.IsvcSpec fields (name, model_format,
            storage_uri, deployment_mode, predictor: {scale_target, scale_metric, min_replicas,
            ...}); its URL replaces inference_url. Empty (the default): none, no cluster needed.
        cost_per_hour: the serving nodes' or GPUs' price per hour, in your currency: the
            reports and Metrics add the cost of each load's measured window per 1000
            successful requests (load_cost_per_thousand_requests, cost_per_thousand_requests)
            and per million output tokens (cost_per_million_output_tokens; unknown when the
            tokens are). 0 (the default): none.
    """

    isvc: dict = field(default_factory=dict)
    cost_per_hour: float = 0.0

    #: The parameters read only beside a switch (any one on): ``kfp_bench.needs``.
    READ_BESIDE = {"cost_per_hour": "run_load sweep_rates run_llm"}
    #: What ``kfp-bench submit --help`` calls the group.
    TITLE = "KServe"

    def check_group(self, fetch: bool = True) -> None:
        """The isvc's spec (``isvc_spec``) and the price's form."""
        if self.isvc:
            self.isvc_spec()
        if not is_price(self.cost_per_hour):
            raise bad("cost_per_hour", self.cost_per_hour, FIX)


@dataclass(frozen=True)
class HistoryGates:
    """The results history, the gates on the figures and where they are pushed (the
    pipeline's, ``BenchParams``).

    Attributes:
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

    results_uri: str = ""
    baseline: str = "last:5"
    thresholds: str = ""
    fail_on_regression: bool = False
    pushgateway_url: str = ""

    #: The parameters read only beside a switch (any one on): ``kfp_bench.needs``.
    READ_BESIDE = {"baseline": "results_uri"}
    #: What ``kfp-bench submit --help`` calls the group.
    TITLE = "the history and gates"

    def check_group(self, fetch: bool = True) -> None:
        """The history's URI and baseline, every gate (refused here, before anything starts,
        when no switched-on part measures its figure) and the Pushgateway's URL."""
        check_history(self.results_uri, self.baseline)
        self.gates(self.kinds())
        if self.pushgateway_url:
            check_url(self.pushgateway_url, "pipeline parameter pushgateway_url=")


#: The parameters' groups, each a dataclass with its fields' help and its own checks, in the
#: order of the pipeline's parameters and of their checks.
GROUPS = (BenchTarget, Runs, PredictLoad, KServe, LlmLoad, HistoryGates, ServerMetrics)


@dataclass(frozen=True)
class BenchParams(*reversed(GROUPS)):  # a dataclass's fields come base last to first
    """The parameters of the kfp_bench pipeline: the fields of ``GROUPS``, flat, as KFP takes a
    pipeline's parameters (each documented in its group)."""

    #: Each group's parameters read only beside a switch (its ``READ_BESIDE``), as
    #: ``kfp_bench.needs.parameter_rules`` takes them.
    PARTS = tuple(item for g in GROUPS for item in vars(g).get("READ_BESIDE", {}).items())

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
        for group in GROUPS:
            group.check_group(self, fetch)
        check_mesh_route(self)  # after the URLs: their form is known good here
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

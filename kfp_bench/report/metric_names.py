"""The stable Metrics names a benchmark publishes (metrics.json, the KFP Metrics, the history), each
with when it is present and what it means: the docs' metric reference is generated from here, and
the tests hold it to the names the code publishes."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A name's statistics, as in ``run_duration_{mean,p50,p90,p95,p99,max}_s``.
_STATS = "{mean,p50,p90,p95,p99,max}"
_LLM_STATS = "{p50,p90,p95,p99,p99_9,mean,max}"


@dataclass(frozen=True, slots=True)
class Name:
    """One name, or a family of names: ``{a,b}`` stands for either, ``<word>`` for a part the
    meaning explains (``api_<operation>_count``)."""

    pattern: str
    meaning: str


@dataclass(frozen=True, slots=True)
class Group:
    """Names published together, and when they are."""

    title: str
    when: str
    names: tuple[Name, ...]


GROUPS = (
    Group(
        "Failure flags",
        "always (`kfp_bench.outcome`)",
        (
            Name("failures", "the number of failure flags set (0: none)"),
            Name(
                "flag_<flag>",
                "1 for each failure flag set, its name with _ for - (`flag_workers_lost`, "
                "`flag_no_load`, `flag_step_failed`, `flag_timeout`, ...); absent when not set",
            ),
        ),
    ),
    Group(
        "Runs benchmark",
        "when runs were measured",
        (
            Name("runs_requested", "runs asked for"),
            Name("runs_created", "runs the driver saw to a final state"),
            Name("runs_succeeded", "runs that ended SUCCEEDED"),
            Name("runs_failed", "runs that ended FAILED, CANCELED or CANCELING"),
            Name("runs_other", "any other final state (SKIPPED, still RUNNING, ...)"),
            Name("runs_success_ratio", "runs_succeeded / runs_created"),
            Name(f"run_duration_{_STATS}_s", "created to finished, from the server's timestamps"),
            Name(f"run_queue_delay_{_STATS}_s", "created to the first RUNNING"),
            Name(f"run_execution_{_STATS}_s", "first RUNNING to finished"),
            Name(
                "run_{duration,queue_delay,execution}_count",
                "the runs each of these is over (the mean's n)",
            ),
            Name(
                "run_time_resolution_s",
                "the resolution of the server's timestamps the run figures come from (1: a real "
                "KFP server's whole seconds; the percentiles are then nearest-rank whole "
                "seconds); absent when unknown",
            ),
            Name("api_calls_total", "every KFP API call the driver made"),
            Name("api_errors_total", "the calls that failed"),
            Name(
                "api_<operation>_{count,errors}",
                "the calls of one operation, and those that failed. `<operation>` is the "
                "driver's name of the call (create_run, get_run, list_runs, delete_run, "
                "upload_pipeline, create_experiment, delete_pipeline, ...); the operations of "
                "`kfp_bench.stats.runs.OPERATIONS` always have both when runs were measured",
            ),
            Name(f"api_<operation>_{_STATS}_ms", "client-side latency, e.g. api_create_run_p99_ms"),
        ),
    ),
    Group(
        "Load",
        "when a load ran",
        (
            Name("load_requests", "requests sent"),
            Name("load_errors", "failed requests (4xx, 5xx, transport)"),
            Name("load_duration_s", "the attack's length"),
            Name("load_rps", "requests per second"),
            Name("load_success_ratio", "responses with a 1xx-3xx status / requests"),
            Name(
                "load_{mean,p50,p90,p95,p99,p99_9,max}_ms",
                "latency of the responses (any status), corrected for coordinated omission in "
                "rate mode (from the intended send time); absent when no request got a response",
            ),
            Name("load_uncorrected_{p50,p90,p95,p99,p99_9}_ms", "from the actual send time"),
            Name("load_responses", "requests that got a response, of any status"),
            Name(
                "load_no_response",
                "requests that got none (refused, reset, timed out): never in the latency figures",
            ),
            Name(
                "load_no_response_{mean,p50,p90,p99,max}_ms",
                "their time from the send to the failure (present when there were some)",
            ),
            Name("load_client_cpu_cores", "the load generator's own CPU over the attack, in cores"),
            Name("load_client_cpu_us_per_request", "its CPU time per request (µs)"),
            Name(
                "load_client_busiest_process",
                "the busiest load process's share of one core (0.9 and up: it was likely the "
                "limit of the request rate)",
            ),
            Name(
                "load_client_throttled_s",
                "time its cgroup's CPU limit held a load process back (present where the cgroup "
                "could be read)",
            ),
            Name(
                "load_cost_per_thousand_requests",
                "with a cost_per_hour: its price over the load's duration per 1000 successful "
                "requests (`kfp_bench.stats.cost`)",
            ),
        ),
    ),
    Group(
        "Other steps",
        "when summary.json carries them",
        (
            Name("replicas_{max,min}", "ready replicas over the load (the `replicas` rows)"),
            Name("sweep_max_rps", "the highest throughput of the rate sweep"),
            Name("sweep_p99_ms_at_max_rps", "p99 at that step"),
        ),
    ),
    Group(
        "LLM load",
        "when an LLM load ran (`kfp_bench.stats.llm.metric_values`)",
        (
            Name("llm_requests", "streams sent"),
            Name("llm_failed", "streams that failed"),
            Name("llm_rps", "streams per second"),
            Name(
                "{output,input}_tokens_per_s",
                "tokens per second; null in metrics.json when the token counts are unknown",
            ),
            Name("goodput_rps", "streams per second that met the SLO"),
            Name("goodput_ratio", "streams that met the SLO / streams"),
            Name(
                "usage_mismatch_requests",
                "streams whose usage was missing or counted fewer tokens than content chunks",
            ),
            Name("multi_token_chunk_requests", "streams with more tokens than content chunks"),
            Name(
                "cached_hit_rate",
                "prompt tokens the usage said were cached / prompt tokens; null when the server "
                "said none (no prompt_tokens_details)",
            ),
            Name(
                f"{{ttft,ttft_intended,itl,tpot,e2e,e2e_intended,sched_lag}}_{_LLM_STATS}_ms",
                "time to first token, inter-token latency, time per output token, end to end "
                "(the `_intended` ones from the intended send time) and the scheduler's lag",
            ),
            Name("ttft_turn<k>_{p50,p99}_ms", "a multi-turn load: TTFT of turn k"),
            Name("input_tokens_turn<k>_mean", "a multi-turn load: the mean prompt of turn k"),
            Name(
                "cost_per_million_output_tokens",
                "with a cost_per_hour; null when the tokens are unknown",
            ),
            Name("cost_per_thousand_requests", "with a cost_per_hour"),
        ),
    ),
    Group(
        "Regression verdict",
        "when a baseline was compared (`kfp_bench.history.regress`)",
        (
            Name("regression", "1 when a regression was found, else 0"),
            Name("regression_tests", "metrics tested (enough samples on both sides)"),
            Name("regression_failed_tests", "tests that found a regression"),
            Name("regression_min_p_value", "the smallest Holm-adjusted p-value"),
            Name("baseline_results", "results pooled into the baseline"),
        ),
    ),
    Group(
        "Gates",
        "when gates were checked: `--threshold`, `thresholds`, `fail_on_regression` "
        "(`kfp_bench.gates`, whose verdicts are in the report's first lines and in gates.json)",
        (
            Name("gates_checked", "the gates checked"),
            Name(
                "gates_broken",
                "the gates broken: a figure beyond its bound, a figure not measured, or a "
                "regression with fail_on_regression",
            ),
        ),
    ),
)


def regex(pattern: str) -> re.Pattern:
    """The names ``pattern`` stands for, as a regular expression."""
    out = re.escape(pattern)
    out = re.sub(r"\\\{([^}]*)\\\}", lambda m: "(?:" + m[1].replace(",", "|") + ")", out)
    out = re.sub(r"<\w+>", "[a-z0-9_]+?", out)
    return re.compile(out)


def described(name: str) -> list[Name]:
    """The entries whose pattern stands for ``name``."""
    return [n for g in GROUPS for n in g.names if regex(n.pattern).fullmatch(name)]

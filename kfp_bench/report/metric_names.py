"""The stable Metrics names a benchmark publishes (metrics.json, the KFP Metrics, the history), each
with when it is present and what it means: the docs' metric reference is generated from here, and
the tests hold it to the names the code publishes."""

from __future__ import annotations

import re
from dataclasses import dataclass


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


#: The reference: a group at each "## title | when" line, then a name a line, "pattern | meaning",
#: the meaning going on over the indented lines under it.
_REFERENCE = """
## Failure flags | always (`kfp_bench.outcome`)
failures | the number of failure flags set (0: none)
flag_<flag> | 1 for each failure flag set, its name with _ for - (`flag_workers_lost`,
    `flag_no_load`, `flag_step_failed`, `flag_timeout`, ...); absent when not set

## Runs benchmark | when runs were measured
runs_requested | runs asked for
runs_created | runs the driver saw to a final state
runs_succeeded | runs that ended SUCCEEDED
runs_failed | runs that ended FAILED, CANCELED or CANCELING
runs_other | any other final state (SKIPPED, still RUNNING, ...)
runs_success_ratio | runs_succeeded / runs_created
run_duration_{mean,p50,p90,p95,p99,max}_s | created to finished, from the server's timestamps
run_queue_delay_{mean,p50,p90,p95,p99,max}_s | created to the first RUNNING
run_execution_{mean,p50,p90,p95,p99,max}_s | first RUNNING to finished
run_{duration,queue_delay,execution}_count | the runs each of these is over (the mean's n)
run_time_resolution_s | the resolution of the server's timestamps the run figures come from (1: a
    real KFP server's whole seconds; the percentiles are then nearest-rank whole seconds); absent
    when unknown
api_calls_total | every KFP API call the driver made
api_errors_total | the calls that failed
api_<operation>_{count,errors} | the calls of one operation, and those that failed. `<operation>`
    is the driver's name of the call (create_run, get_run, list_runs, delete_run, upload_pipeline,
    create_experiment, delete_pipeline, ...); the operations of `kfp_bench.stats.runs.OPERATIONS`
    always have both when runs were measured
api_<operation>_{mean,p50,p90,p95,p99,max}_ms | client-side latency, e.g. api_create_run_p99_ms

## Load | when a load ran
load_requests | requests sent
load_errors | failed requests (4xx, 5xx, transport)
load_duration_s | the attack's length
load_rps | requests per second
load_success_ratio | responses with a 1xx-3xx status / requests
load_{mean,p50,p90,p95,p99,p99_9,max}_ms | latency of the responses (any status), corrected for
    coordinated omission in rate mode (from the intended send time); absent when no request got a
    response
load_uncorrected_{p50,p90,p95,p99,p99_9}_ms | from the actual send time
load_responses | requests that got a response, of any status
load_no_response | requests that got none (refused, reset, timed out): never in the latency figures
load_no_response_{mean,p50,p90,p99,max}_ms | their time from the send to the failure (present when
    there were some)
load_client_cpu_cores | the load generator's own CPU over the attack, in cores
load_client_cpu_us_per_request | its CPU time per request (µs)
load_client_busiest_process | the busiest load process's share of one core (0.9 and up: it was
    likely the limit of the request rate)
load_client_throttled_s | time its cgroup's CPU limit held a load process back (present where the
    cgroup could be read)
load_cost_per_thousand_requests | with a cost_per_hour: its price over the load's duration per 1000
    successful requests (`kfp_bench.stats.cost`)

## Other steps | when summary.json carries them
replicas_{max,min} | ready replicas over the load (the `replicas` rows)
sweep_max_rps | the highest throughput of the rate sweep
sweep_p99_ms_at_max_rps | p99 at that step

## LLM load | when an LLM load ran (`kfp_bench.stats.llm.metric_values`)
llm_requests | streams sent
llm_failed | streams that failed
llm_rps | streams per second
{output,input}_tokens_per_s | tokens per second; null in metrics.json when the token counts are
    unknown
goodput_rps | streams per second that met the SLO
goodput_ratio | streams that met the SLO / streams
usage_mismatch_requests | streams whose usage was missing or counted fewer tokens than content
    chunks
multi_token_chunk_requests | streams with more tokens than content chunks
cached_hit_rate | prompt tokens the usage said were cached / prompt tokens; null when the server
    said none (no prompt_tokens_details)
{ttft,ttft_intended,itl,tpot,e2e,e2e_intended,sched_lag}_{p50,p90,p95,p99,p99_9,mean,max}_ms | time
    to first token, inter-token latency, time per output token, end to end (the `_intended` ones
    from the intended send time) and the scheduler's lag
ttft_turn<k>_{p50,p99}_ms | a multi-turn load: TTFT of turn k
input_tokens_turn<k>_mean | a multi-turn load: the mean prompt of turn k
cost_per_million_output_tokens | with a cost_per_hour; null when the tokens are unknown
cost_per_thousand_requests | with a cost_per_hour

## Regression verdict | when a baseline was compared (`kfp_bench.history.regress`)
regression | 1 when a regression was found, else 0
regression_tests | metrics tested (enough samples on both sides)
regression_failed_tests | tests that found a regression
regression_min_p_value | the smallest Holm-adjusted p-value
baseline_results | results pooled into the baseline

## Gates | when gates were checked: `--threshold`, `thresholds`, `fail_on_regression`
    (`kfp_bench.gates`, whose verdicts are in the report's first lines and in gates.json)
gates_checked | the gates checked
gates_broken | the gates broken: a figure beyond its bound, a figure not measured, or a regression
    with fail_on_regression
"""


def _groups(text: str) -> tuple[Group, ...]:
    lines: list[list[str]] = []  # [pattern or "## title", meaning or when]
    for line in text.strip().splitlines():
        if line.startswith("    "):
            lines[-1][1] += " " + line.strip()
        elif line:
            lines.append(line.split(" | ", 1))
    groups: list[tuple[str, str, list[Name]]] = []
    for head, text in lines:
        if head.startswith("## "):
            groups.append((head[3:], text, []))
        else:
            groups[-1][2].append(Name(head, text))
    return tuple(Group(title, when, tuple(names)) for title, when, names in groups)


GROUPS = _groups(_REFERENCE)


def regex(pattern: str) -> re.Pattern:
    """The names ``pattern`` stands for, as a regular expression."""
    out = re.escape(pattern)
    out = re.sub(r"\\\{([^}]*)\\\}", lambda m: "(?:" + m[1].replace(",", "|") + ")", out)
    out = re.sub(r"<\w+>", "[a-z0-9_]+?", out)
    return re.compile(out)


def described(name: str) -> list[Name]:
    """The entries whose pattern stands for ``name``."""
    return [n for g in GROUPS for n in g.names if regex(n.pattern).fullmatch(name)]

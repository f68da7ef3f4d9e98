"""Gates: bounds on a benchmark's stable Metrics names that fail the benchmark when broken.

This module owns the gates' syntax (``--threshold`` and the pipeline's ``thresholds``:
``NAME OP NUMBER``, comma-separated, e.g. ``load_p99_ms<50,runs_success_ratio>=0.99``), the
catalogue of the names a gate may bound (``kfp_bench.report.metrics``; the LLM's from
``kfp_bench.stats.llm.metric_values``) and the part of a benchmark that measures each, and each
gate's verdict against a metrics dict: held, broken (the figure beyond its bound), or broken
because the figure was not measured, never a pass. ``fail_on_regression`` is one more gate, on
the regression verdict. The verdicts are saved as ``gates.json`` beside a report: the pipeline's
check step reads it (standard library only) and fails the run when a gate broke.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from dataclasses import dataclass

from kfp_bench.errors import ConfigError
from kfp_bench.figures import sig

#: The file a report's folder holds the gates' verdicts in.
GATES_FILE = "gates.json"
OPS = ("<=", ">=", "<", ">")
_STATS = ("mean", "p50", "p90", "p95", "p99", "max")
_LOAD_PCTS = ("p50", "p90", "p95", "p99", "p99_9")
#: kfp_bench.stats.llm.metric_values' names (tests/test_gates.py holds the two together).
_LLM_HISTOGRAMS = ("ttft", "ttft_intended", "itl", "tpot", "e2e", "e2e_intended", "sched_lag")
_LLM_NAMES = {"llm_requests", "llm_failed", "llm_rps", "output_tokens_per_s"}
_LLM_NAMES |= {"input_tokens_per_s", "goodput_rps", "goodput_ratio", "usage_mismatch_requests"}
_LLM_NAMES |= {"multi_token_chunk_requests", "cached_hit_rate"}
_LLM_NAMES |= {"cost_per_million_output_tokens", "cost_per_thousand_requests"}  # stats/cost.py
_LLM_NAMES |= {f"{h}_{s}_ms" for h in _LLM_HISTOGRAMS for s in (*_LOAD_PCTS, "mean", "max")}


def _catalogue() -> dict[str, str]:
    """Every fixed metric name a gate may bound -> the part of a benchmark that measures it."""
    names = {n: "llm" for n in _LLM_NAMES}
    runs = ["runs_requested", "runs_created", "runs_succeeded", "runs_failed", "runs_other"]
    runs += ["runs_success_ratio", "run_time_resolution_s", "api_calls_total", "api_errors_total"]
    for figure in ("run_duration", "run_queue_delay", "run_execution"):
        runs += [f"{figure}_{s}_s" for s in _STATS] + [f"{figure}_count"]
    names |= dict.fromkeys(runs, "runs")
    load = ["load_requests", "load_errors", "load_duration_s", "load_rps", "load_success_ratio"]
    load += ["load_responses", "load_no_response", "load_client_cpu_cores"]
    load += ["load_client_cpu_us_per_request", "load_client_busiest_process"]
    load += ["load_client_throttled_s", "load_mean_ms", "load_max_ms"]
    load += ["load_cost_per_thousand_requests"]  # with a cost_per_hour: stats/cost.py
    load += [f"load_{p}_ms" for p in _LOAD_PCTS] + [f"load_uncorrected_{p}_ms" for p in _LOAD_PCTS]
    load += [f"load_no_response_{s}_ms" for s in ("mean", "p50", "p90", "p99", "max")]
    names |= dict.fromkeys(load, "load")
    names |= dict.fromkeys(("sweep_max_rps", "sweep_p99_ms_at_max_rps"), "sweep")
    names |= dict.fromkeys(("replicas_max", "replicas_min"), "replicas")
    regression = ("regression", "regression_tests", "regression_failed_tests")
    names |= dict.fromkeys(
        (*regression, "regression_min_p_value", "baseline_results"), "regression"
    )
    return names


CATALOGUE = _catalogue()
#: api_<operation>_{count,errors,<stat>_ms}: the driver names its calls (metrics.py).
_API = re.compile(r"api_[a-z0-9_]+_(count|errors|(mean|p50|p90|p95|p99|max)_ms)")
#: What each part of a benchmark is, as a refusal names it.
KINDS = {
    "runs": "the KFP runs benchmark",
    "load": "the inference load",
    "sweep": "the rate sweep",
    "replicas": "the InferenceService's replicas",
    "llm": "the LLM load",
    "regression": "the regression verdict (a history and a baseline)",
}
_GATE = re.compile(r"\s*([A-Za-z0-9_.]+)\s*(<=|>=|<|>|==|=|!=)?\s*(.*?)\s*")


@dataclass(frozen=True, slots=True)
class Gate:
    """One gate: ``metric op bound``.

    Attributes:
        name: the name as written (an LLM figure may take an ``llm_`` prefix: llm_goodput_ratio).
        metric: the stable Metrics name it bounds.
        op: one of ``OPS``.
        bound: the number the figure must stay within.
        kind: the part of a benchmark that measures it (a key of ``KINDS``).
        regression: the fail_on_regression gate: without a verdict (too few earlier results,
            as on a new history's first runs) it is not broken; the report says why.
    """

    name: str
    metric: str
    op: str
    bound: float
    kind: str
    regression: bool = False

    @property
    def text(self) -> str:
        return "fail_on_regression" if self.regression else f"{self.name}{self.op}{self.bound:g}"

    def holds(self, value: float) -> bool:
        return {"<": value < self.bound, "<=": value <= self.bound, ">": value > self.bound,
                ">=": value >= self.bound}[self.op]  # fmt: skip


#: The gate fail_on_regression adds: the verdict found no regression.
REGRESSION_GATE = Gate("regression", "regression", "<", 1.0, "regression", regression=True)


def kind_of(name: str) -> tuple[str, str] | None:
    """(the stable name, its kind) of a gate's ``name``, or None when no metric has that name."""
    if name in CATALOGUE:
        return name, CATALOGUE[name]
    if name.startswith("llm_") and name[4:] in _LLM_NAMES:
        return name[4:], "llm"
    if _API.fullmatch(name):
        return name, "runs"
    return None


def parse(texts, where: str = "--threshold") -> tuple[Gate, ...]:
    """The gates of ``texts`` (each comma-separated; several flags join). ``ConfigError``
    naming the gate and the fix for an unknown name, a bad operator or a bound that is not a
    number; ``where`` names the flag or parameter."""
    if isinstance(texts, str):
        texts = [texts]
    gates = []
    for part in (p for t in texts for p in t.split(",")):
        if not part.strip():
            continue
        m = _GATE.fullmatch(part)
        if m is None:
            raise ConfigError(f"{where} {part.strip()!r}: give NAME OP NUMBER, e.g. load_p99_ms<50")
        name, op, bound = m.groups()
        found = kind_of(name)
        if found is None:
            raise ConfigError(f"{where} {part.strip()!r}: {_unknown(name)}")
        if op not in OPS:
            raise ConfigError(
                f"{where} {part.strip()!r}: give an operator <, <=, > or >= between the name and "
                f"the bound, e.g. {name}<50"
            )
        try:
            value = float(bound)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ConfigError(f"{where} {part.strip()!r}: the bound {bound!r} is not a number; "
                              f"give one, e.g. {name}{op}50")  # fmt: skip
        _reachable(where, part.strip(), name, found[0], op, value)
        gates.append(Gate(name, found[0], op, value, found[1]))
    return tuple(gates)


def _reachable(where: str, text: str, name: str, metric: str, op: str, bound: float) -> None:
    """``ConfigError`` for a bound outside its figure's range: every figure is 0 or more, and a
    ratio (or a p-value) at most 1, so that ``load_success_ratio>=99`` (meant 0.99: it can
    never hold) or ``load_p99_ms>-5`` (it can never break) is refused before the work."""
    ratio = metric.endswith(("_ratio", "_p_value"))
    high = 1.0 if ratio else math.inf
    below = op.startswith("<")
    never = (
        bound < 0 or (bound == 0 and op == "<")
        if below
        else bound > high or (bound == high and op == ">")
    )
    always = bound > high if below else bound < 0
    if not (never or always):
        return
    what = "a ratio from 0 to 1" if ratio else "never below 0"
    verdict = f"can never be {op} {bound:g}" if never else "the gate can never break"
    fix = f"give the bound as a ratio, e.g. {name}{op}0.99" if ratio else f"e.g. {name}{op}50"
    raise ConfigError(f"{where} {text!r}: {name} is {what}, so {verdict}; {fix}")


def _unknown(name: str) -> str:

    close = difflib.get_close_matches(name, [*CATALOGUE, *(f"llm_{n}" for n in _LLM_NAMES)], 1)
    hint = f"did you mean {close[0]}? " if close else ""
    if name in ("failures", "gates_checked", "gates_broken") or name.startswith("flag_"):
        return (f"{name} is not a gate's figure: a failure flag already fails the benchmark "
                "(kfp_bench.outcome); bound a measured figure instead")  # fmt: skip
    return (f"no metric {name}; {hint}give a stable Metrics name (kfp_bench/report/metrics.py "
            "and the LLM's in kfp_bench/stats/llm.py), e.g. load_p99_ms<50")  # fmt: skip


def require(gates, measured, where: str, fix: str, regression: str = "fail_on_regression"):
    """Refuse (``ConfigError``) a gate on a figure of a part that is not measured: ``measured``
    is the set of kinds that will be; ``fix`` says how to measure more (or drop the gate);
    ``where`` names the thresholds' flag or parameter, ``regression`` fail_on_regression's."""
    for g in gates:
        if g.kind not in measured:
            what = regression if g.regression else f"{where} {g.text!r}"
            raise ConfigError(
                f"{what}: {g.metric} is a figure of {KINDS[g.kind]}, which this benchmark does "
                f"not measure; {fix}"
            )


@dataclass(frozen=True, slots=True)
class Verdict:
    """A gate against the figures: ``state`` is held, broken, not measured (broken too) or, for
    the regression gate alone, no verdict (not broken)."""

    gate: Gate
    value: float | None
    state: str

    @property
    def broken(self) -> bool:
        return self.state in ("broken", "not measured")

    def line(self) -> str:
        """``BROKEN load_p99_ms<50: load_p99_ms is 73.2, the bound 50`` and the like."""
        g, head = self.gate, "BROKEN" if self.broken else self.state
        if g.regression:
            said = {"held": "no regression", "broken": "a regression was found",
                    "no verdict": "no verdict (too few earlier results: the report says why)",
                    "not measured": "not measured"}[self.state]  # fmt: skip
            return f"{head} {g.text}: {said}"
        if self.value is None:
            return f"{head} {g.text}: {g.metric} was not measured"
        return f"{head} {g.text}: {g.metric} is {sig(self.value)}, the bound {g.op} {g.bound:g}"


def evaluate(gates, metrics: dict) -> list[Verdict]:
    """Each gate's verdict against ``metrics`` (a flat ``{name: number}`` dict)."""
    out = []
    for g in gates:
        value = metrics.get(g.metric)
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            value = None
        if value is None:
            state = "no verdict" if g.regression else "not measured"
        else:
            state = "held" if g.holds(float(value)) else "broken"
        out.append(Verdict(g, value, state))
    return out


def counts(verdicts) -> dict[str, int]:
    """The Metrics of the verdicts: ``gates_checked`` and ``gates_broken``."""
    verdicts = list(verdicts)
    return {"gates_checked": len(verdicts), "gates_broken": sum(v.broken for v in verdicts)}


def lines(verdicts) -> list[str]:
    """The report's first lines: the broken gates first, then the held ones."""
    verdicts = sorted(verdicts, key=lambda v: not v.broken)
    if not verdicts:
        return []
    broken = sum(v.broken for v in verdicts)
    head = f"GATES: {broken} of {len(verdicts)} broken" if broken else "Gates: all held"
    return [head, *(f"  {v.line()}" for v in verdicts)]


def write(folder, verdicts) -> None:
    """Save the verdicts as ``GATES_FILE`` in ``folder`` (``_saved`` reads them)."""
    verdicts = list(verdicts)
    rows = [{"gate": v.gate.text, "metric": v.gate.metric, "op": v.gate.op,
             "bound": v.gate.bound, "value": v.value, "state": v.state, "broken": v.broken,
             "line": v.line()} for v in verdicts]  # fmt: skip
    regression = [v for v in verdicts if v.gate.regression]
    doc = {**counts(verdicts), "gates": rows}
    if regression:  # the push sends it apart from the thresholds (a "regressed" alert)
        doc["regression"] = regression[0].state
    with open(os.path.join(folder, GATES_FILE), "w") as f:
        json.dump(doc, f, indent=1)


def _saved(folder) -> list[dict]:
    """The gates' rows saved in ``folder`` (none: no file). Standard library only: the check
    step reads them."""
    try:
        with open(os.path.join(folder, GATES_FILE)) as f:
            return json.load(f).get("gates", [])
    except FileNotFoundError:
        return []


def broken_lines(folder) -> list[str]:
    """The lines of the broken gates saved in ``folder`` (none: no file, or none broke)."""
    return [row["line"] for row in _saved(folder) if row.get("broken")]


def saved_verdicts(folder) -> dict[str, bool]:
    """Each gate saved in ``folder`` (its text) and whether it broke, as ``kfp_bench.push``
    sends them."""
    return {row["gate"]: bool(row.get("broken")) for row in _saved(folder)}

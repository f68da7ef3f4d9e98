"""An LLM result as llm-d-benchmark's Benchmark Report, version 0.2.1 (``kfp-bench llm --export
llm-d FILE``): the shared format that llm-d's tools (llm-d-prism, its notebooks) read.

The definition is llm-d's: the pydantic models of the PyPI package ``llmd-benchmark-report``
0.2.1 (``llmd_benchmark_report/schema_v0_2.py``) and the JSON Schema beside it. Every model
forbids keys it does not name (l. 44). What goes where is in docs/reports.md; the lines of the
schema: version l. 41 and 1379-1391, run l. 1306-1336, load l. 102-274, requests l. 397-433,
latency l. 436-506, throughput l. 509-571, aggregate l. 574-585; the stack as llm-d writes one
it did not deploy (``native_to_br0_2.py`` ``_populate_minimal_stack``, l. 921-947)."""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from datetime import UTC, datetime

from kfp_bench import __version__
from kfp_bench.errors import ConfigError
from kfp_bench.load.prompts import Dist
from kfp_bench.stats.llm import LlmStats

VERSION = "0.2.1"
#: Benchmark Report ``Statistics`` percentile keys (schema_v0_2.py l. 282-301) and ours.
PERCENTILES = {
    "p0p1": 0.1, "p1": 1, "p5": 5, "p10": 10, "p25": 25, "p50": 50, "p75": 75, "p90": 90,
    "p95": 95, "p99": 99, "p99p9": 99.9,
}  # fmt: skip
#: Our histogram of each latency of ``AggregateLatency``, and its units (``Units``, base.py).
LATENCIES = {
    "time_to_first_token": ("ttft", "ms"),
    "inter_token_latency": ("itl", "ms/token"),
    "time_per_output_token": ("tpot", "ms/token"),
    "request_latency": ("e2e", "ms"),
}


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _mean(value: float | int | None, units: str) -> dict | None:
    return None if value is None else {"units": units, "mean": float(value)}


def _latency(stats: LlmStats, name: str, units: str) -> dict | None:
    h = stats.hists[name]
    if not h.count:
        return None
    p = h.percentiles_us(list(PERCENTILES.values()))
    out = {"units": units, "mean": h.mean_us / 1000, "min": h.min_us / 1000}
    out.update({key: p[v] / 1000 for key, v in PERCENTILES.items()})
    out["max"] = h.max_us / 1000
    return out


def _seq_len(text: str) -> dict | None:
    """A ``SequenceLength`` (schema_v0_2.py l. 145-160) of a length distribution's text."""
    try:
        d = Dist.parse(text)
    except ConfigError:  # none asked (a file's prompts, a trace)
        return None
    if d.kind == "fixed":
        return {"distribution": "fixed", "value": int(d.a)}
    if d.kind == "uniform":
        return {"distribution": "uniform", "value": (d.a + d.b) / 2, "min": int(d.a),
                "max": int(d.b)}  # fmt: skip
    if d.kind == "normal":
        return {"distribution": "gaussian", "value": d.a, "std_dev": d.b}
    return {"distribution": "other", "value": d.a * math.exp(d.b**2 / 2)}  # lognormal's mean


def _load(stats: LlmStats, s, cfg_id: str) -> dict:
    o = stats.options
    prompts = o.get("prompts") or {}
    per = max(s.completed, 1)
    std = {
        "tool": "kfp-bench",
        "tool_version": __version__,
        "parallelism": max(int(o.get("workers") or 1), 1),
        "source": "random" if "input_tokens" in prompts or "shared_prefix" in prompts
        else "sampled",
        "stage": 0,
        "input_seq_len": {
            "distribution": "other",
            "value": (s.input_tokens or 0) / per,  # measured: asked lengths are in words
        },
    }  # fmt: skip
    if (out := _seq_len(prompts.get("output_tokens", ""))) is not None:
        std["output_seq_len"] = out
    if o.get("turns"):
        turns = {"distribution": "fixed", "value": o["turns"]}
        std["multi_turn"] = {"enabled": True, "max_turns": turns}
    if o.get("rate") and not o.get("stages"):
        std["rate_qps"] = o["rate"]
    elif not o.get("rate") and not o.get("stages"):
        std["concurrency"] = int(o.get("concurrency") or 1)
    mode = f"at {o['rate']:g}/s" if o.get("rate") else f"-c {o.get('concurrency')}"
    return {
        "metadata": {
            "schema_version": "0.0.1",
            "cfg_id": cfg_id,
            "description": f"kfp-bench llm {o.get('endpoint', '')} {mode}",
        },
        "standardized": std,
        "native": {"config": o},
    }


def _stack(model: str, cfg_id: str) -> list:
    return [
        {
            "metadata": {"schema_version": "0.0.1", "label": "server", "cfg_id": cfg_id},
            "standardized": {
                "kind": "inference_engine",
                "tool": "",
                "tool_version": "",
                "role": "replica",
                "replicas": 1,
                "model": {"name": model},
                "accelerator": {
                    "model": "",
                    "count": 0,
                    "parallelism": {"tp": 1, "dp": 1, "dp_local": 1, "workers": 1},
                },
            },
            "native": {"args": {}, "envars": {}},
        }
    ]


def benchmark_report(stats: LlmStats) -> dict:
    """The Benchmark Report v0.2.1 of one LLM load (the module docstring says what is where)."""
    s = stats.summary()
    options = json.dumps(stats.options, sort_keys=True, default=str)
    cfg_id = hashlib.sha256(options.encode()).hexdigest()[:32]
    uid = uuid.uuid5(uuid.NAMESPACE_URL, f"kfp-bench:{stats.started_at!r}:{options}").hex
    model = str(stats.options.get("model", ""))
    per = max(s.completed, 1)
    inp, out = s.input_tokens_per_s, s.output_tokens_per_s
    total = inp + out if inp is not None and out is not None else None
    requests = {"total": s.requests, "failures": s.failed}
    if s.input_tokens is not None:
        requests["input_length"] = _mean(s.input_tokens / per, "count")
    if s.output_tokens is not None:
        requests["output_length"] = _mean(s.output_tokens / per, "count")
    latency = {k: _latency(stats, name, units) for k, (name, units) in LATENCIES.items()}
    throughput = {
        "input_token_rate": _mean(inp, "tokens/s"),
        "output_token_rate": _mean(out, "tokens/s"),
        "total_token_rate": _mean(total, "tokens/s"),
        "request_rate": _mean(s.rps, "queries/s"),
    }
    start = stats.started_at
    return {
        "version": VERSION,
        "run": {
            "uid": uid,
            "time": {
                "start": _iso(start),
                "end": _iso(start + stats.duration_s),
                "duration": f"PT{stats.duration_s:.6f}S",
            },
            "description": f"{model} [kfp-bench {_iso(start)}]",
        },
        "scenario": {"stack": _stack(model, cfg_id), "load": _load(stats, s, cfg_id)},
        "results": {
            "request_performance": {
                "aggregate": {
                    "requests": requests,
                    "latency": {k: v for k, v in latency.items() if v is not None},
                    "throughput": {k: v for k, v in throughput.items() if v is not None},
                }
            }
        },
    }

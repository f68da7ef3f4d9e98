"""The work of the meta-pipeline's LLM load steps (run_llm), as functions of parameters and paths,
under the rules of every step (``kfp_bench.steps``, ``kfp_bench.steps.outputs``). report_llm
merges the workers' results exactly, flags what is missing as ``aggregate`` does, and writes the
LLM report bundle, whose summary.json and gates.json check_outcome reads."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import tempfile

from kfp_bench.errors import BenchError
from kfp_bench.failpoint import fail_point
from kfp_bench.figures import fixed
from kfp_bench.gates import evaluate as evaluate_gates
from kfp_bench.gates import write as write_gates
from kfp_bench.jsonl import write_json_atomic
from kfp_bench.stats.cost import priced
from kfp_bench.steps import server_metrics
from kfp_bench.steps.llm_params import llm_options, llm_prompts, llm_slo, local_tokenizer
from kfp_bench.steps.outputs import failed, write_json
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.publish import merge_loads, missing
from kfp_bench.steps.worker_start import worker_started

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).

#: The merged LLM result in report_llm's results directory (a ``kfp-bench llm --json-out`` file).
LLM_RESULT = "llm.json"


def deployed_llm_target(p: BenchParams, spec, url: str) -> BenchParams:
    """``p`` with llm_url the OpenAI base of the InferenceService at ``url`` (its address) and
    llm_model, when empty, the name it serves (``kserve.llm.openai_base``, ``served_model``)."""
    from kfp_bench.kserve.llm import openai_base, served_model

    model = p.llm_model or served_model(spec)
    p = dataclasses.replace(p, llm_url=openai_base(url), llm_model=model)
    print(f"LLM load: {p.llm_url}, model {model}")
    return p


def llm_items(params: dict) -> list[dict]:
    """One item per LLM load worker, ``{"worker": index, "params": params}``; none with run_llm
    off (its steps are then skipped by the pipeline's condition)."""
    p = BenchParams.from_dict(params)
    return [{"worker": i, "params": params} for i in range(p.llm_workers if p.run_llm else 0)]


def llm_load(p: BenchParams, worker: int, out: str) -> None:
    """Stream LLM load worker ``worker``'s share and save its LLM result at ``out`` (with its
    error, when it failed to measure: what was measured before it stays)."""
    from kfp_bench.load.llm import run_llm
    from kfp_bench.load.models import preflight

    if worker_started(out, worker, f"LLM worker {worker}: ", p, "llm-worker"):
        return
    error, stats, search = "", None, None
    with (
        server_metrics.window(p, worker, f"LLM worker {worker}: ") as server,
        tempfile.TemporaryDirectory(prefix="kfpb-tokenizer-") as folder,
    ):
        try:  # the tokenizer fetched, the model and the context checked before any request: a
            # refusal is this worker's error
            tokenizer = local_tokenizer(p.llm_tokenizer, folder) if p.llm_tokenizer else ""
            opts = llm_options(p, tokenizer=tokenizer).share(worker, p.llm_workers).validate()
            prompts = llm_prompts(p, worker)
            opts = preflight(opts, prompts, model_given=True, flag="llm_model").opts
            if p.llm_find_max:
                stats, search = _find_max(p, opts, prompts, f"LLM worker {worker}: ")
            else:
                stats = run_llm(opts, prompts, slo=llm_slo(p), warmup_s=p.llm_warmup_sec)
        except (BenchError, OSError) as exc:
            stats = getattr(exc, "stats", None)  # an EngineError's: what was measured before it
            error = failed("llm_load", exc, f"LLM worker {worker}: ")
    doc = {**(stats.to_dict() if stats is not None else {}), "worker": worker, **server.doc}
    if search is not None:
        doc["search"] = search  # beside the figures: report_llm's section of the search
    write_json_atomic({**doc, "error": error} if error else doc, out)
    if stats is not None:
        s = stats.summary()
        rate = "unknown" if s.output_tokens_per_s is None else fixed(s.output_tokens_per_s, 1)
        print(f"LLM worker {worker}: {s.requests} requests, {rate} output "
              f"tokens/s, flags {stats.flags or 'none'}")  # fmt: skip
    fail_point("llm_load")


def _find_max(p: BenchParams, opts, prompts: list, said: str) -> tuple:
    """llm_find_max: the search (``load.llm_find``) as kfp-bench llm --find-max runs it, each
    probe llm_duration_sec; the last passing probe's stats (``LlmSweep.reported``) and the
    search."""
    from kfp_bench.load.llm_find import find_max

    def on_probe(level: float, stats, passed: bool) -> None:
        s = stats.summary()
        print(f"{said}probe {p.llm_find_max} {level:g}: good {s.good_ratio:.1%} of "
              f"{s.requests}: {'passes' if passed else 'fails'}")  # fmt: skip

    sweep = find_max(
        opts, prompts, by=p.llm_find_max, slo=llm_slo(p), step_s=p.llm_duration_sec,
        warmup_s=p.llm_warmup_sec, on_probe=on_probe,
    )  # fmt: skip
    return sweep.reported()[1], sweep.search


def _search_of(loads: list[str]) -> dict | None:
    """The llm_find_max search a worker saved beside its figures (None: one load)."""
    from kfp_bench.stats.store import by_worker

    for path in by_worker(loads).values():
        try:
            with open(path) as f:
                found = json.load(f).get("search")
        except (OSError, ValueError, AttributeError):
            continue  # unreadable: merge_workers names it
        if found is not None:
            return found
    return None


def report_llm(p: BenchParams, loads: list[str], out: str, html: str, summary: str) -> dict:
    """Merge the LLM workers' results into ``out`` (llm.json, summary.json with the pipeline's
    flags, and the bundle's files), copy the bundle's HTML and Markdown out, and return its
    finite metrics by name."""
    os.makedirs(out, exist_ok=True)
    merged, lost, errors = merge_loads(loads, p.llm_workers, "llm_load")
    doc = {"pipeline": missing(lost, merged is None, errors)}
    flags = doc["pipeline"]["flags"]
    metrics: dict = {}
    if merged is None:
        text = f"# LLM load\n\nNo LLM load worker's result could be read: {', '.join(flags)}.\n"
        for path in (html, summary):
            with open(path, "w") as f:
                f.write(text)
        if gates := p.gates({"llm"}):  # nothing measured: each gate broken, "not measured"
            write_gates(out, evaluate_gates(gates, {}))
    else:
        priced(merged, p)  # the LLM report's price of its window (report/cost.py)
        server = server_metrics.merge(loads, os.path.join(out, LLM_RESULT))
        search = _search_of(loads)
        metrics = _bundle(merged, flags, out, html, summary, p.gates({"llm"}), server, search)
        doc.update(flags=merged.flags, llm=merged.summary().as_dict())
        doc.update({"search": search} if search is not None else {})
    write_json(os.path.join(out, "summary.json"), doc)
    print(f"LLM results: {sorted(os.listdir(out))}" + (f"; flags {flags}" if flags else ""))
    fail_point("report_llm")
    return metrics


def _bundle(
    merged, flags: list[str], out: str, html: str, summary: str, gates, server, search=None
) -> dict:
    from kfp_bench.report.llm_bundle import write_llm_bundle
    from kfp_bench.stats import store

    merged.flag(*flags)  # the report shows what the pipeline found missing
    store.save(merged, os.path.join(out, LLM_RESULT))
    files = write_llm_bundle(
        merged, out, source=LLM_RESULT, gates=gates, server=server, search=search
    )
    shutil.copyfile(files["report.html"], html)
    shutil.copyfile(files["summary.md"], summary)  # the bundle keeps it under the UI's limit
    metrics = json.loads(files["metrics.json"].read_text())
    return {
        k: v
        for k, v in sorted(metrics.items())
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    }

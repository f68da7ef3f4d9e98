"""``kfp-bench llm``: an OpenAI-compatible streaming load, with hey's flags where they mean the
same, and its token-timing summary (``report/llm_text.py``)."""

from __future__ import annotations

import argparse
import sys

from kfp_bench._doc import field_help
from kfp_bench.cli import metrics_flags
from kfp_bench.cli.common import (
    SCALE_HELP,
    Progress,
    add_cost_flag,
    add_hey_flags,
    add_open_loop_flags,
    add_progress_flag,
    add_requests_out_flag,
    add_scale_flags,
    add_threshold_flag,
    add_tls_flags,
    command,
    duration,
    gates_of,
    shared_options,
)
from kfp_bench.cli.measure import Measurement, logged, lost_workers
from kfp_bench.cli.workload import add_workload_flags, trace_of
from kfp_bench.errors import ConfigError
from kfp_bench.figures import HDR_MS, fixed
from kfp_bench.load import llm_find
from kfp_bench.load import prompts as prompt_source
from kfp_bench.load.llm import NONE_COMPLETED, run_llm
from kfp_bench.load.llm_sweep import (
    check_llm_sweep,
    parse_concurrencies,
    run_llm_repeats,
    run_llm_sweep,
)
from kfp_bench.load.models import UNSET, preflight
from kfp_bench.load.openai import ENDPOINTS, LlmOptions, sends_id
from kfp_bench.load.options import LoadOptions, parse_rates
from kfp_bench.report import llm_d, llm_text
from kfp_bench.report import sweep as sweep_text
from kfp_bench.report.cost import llm_stats_metrics as priced_metrics
from kfp_bench.report.hey import write_stages
from kfp_bench.stats import store
from kfp_bench.stats.cost import priced
from kfp_bench.stats.llm import metric_values
from kfp_bench.stats.rate_sweep import KNEE_FACTOR, KNEE_MIN_GOOD
from kfp_bench.stats.slo import Slo

# Imports inside functions: the CLI imports every command's module to build its parser: what only
# running a command needs is imported there, so that --help and a refused flag start at once
# (bench/cli_startup.py).

#: The synthetic prompts when no --prompts-file is given: distinct prompts, cycled.
DEFAULT_PROMPTS = 256


def register(sub) -> None:
    p = command(
        sub, "llm",
        description="Stream completions or chat completions from an OpenAI-compatible server "
        "(KServe's /openai routes, vLLM, ...) and measure time to first token, inter-token "
        "latency, TPOT, tokens/s and goodput. hey's flags keep hey's meaning. URL is the base, "
        "without /v1: http://host/openai for KServe.",
    )  # fmt: skip
    _add_flags(p)
    metrics_flags.wrap(p, cmd_llm)


def _h(name: str) -> str:
    try:
        return field_help(LlmOptions, name)
    except KeyError:
        return field_help(LoadOptions, name)


def _add_flags(p: argparse.ArgumentParser) -> None:
    add_hey_flags(p, _h, concurrency=16, timeout=600.0)
    g = p.add_argument_group("the requests")
    g.add_argument(
        "--endpoint", default="completions", choices=list(ENDPOINTS), help=_h("endpoint")
    )
    g.add_argument(
        "--model", default="", help=_h("model") + " Default: the one model /v1/models lists."
    )
    g.add_argument(
        "--no-model-check", action="store_true",
        help="Send without reading /v1/models first (a server without a models route); by "
        "default --model must be listed there and the prompts fit its max_model_len.",
    )  # fmt: skip
    g.add_argument("--max-tokens", type=int, default=0, help=_h("max_tokens"))
    g.add_argument("--ignore-eos", action="store_true", help=_h("ignore_eos"))
    g.add_argument("--stall-timeout", type=float, default=30.0, help=_h("stall_timeout"))
    g.add_argument(
        "--no-request-id", action="store_false", dest="request_id",
        help="Send no X-Request-Id. Ours is a UUID naming this process and the request's "
        "number, which a server's log can pair with the results; -H 'X-Request-Id: ...' "
        "replaces it.",
    )  # fmt: skip
    g = p.add_argument_group("the prompts (no model hub needed)")
    g.add_argument(
        "--input-tokens",
        default="fixed:128",
        metavar="DIST",
        help="Synthetic prompts' length in words: fixed:N, uniform:LO,HI, normal:MEAN,SD or "
        "lognormal:MEDIAN,SIGMA.",
    )
    g.add_argument(
        "--output-tokens",
        default="fixed:64",
        metavar="DIST",
        help="Synthetic prompts' max_tokens, drawn as --input-tokens is.",
    )
    g.add_argument(
        "--prompts", type=int, default=DEFAULT_PROMPTS, dest="num_prompts", metavar="N",
        help="How many distinct synthetic prompts to draw; requests cycle through them.",
    )  # fmt: skip
    g.add_argument(
        "--prompts-file",
        default="",
        metavar="FILE",
        help='Prompts from a JSONL file ({"prompt": ..., "output_tokens": ...} a line) or a '
        "ShareGPT JSON file, instead of synthetic ones.",
    )
    g.add_argument(
        "--prompts-format", default="auto", choices=list(prompt_source.FORMATS), metavar="FMT",
        help="jsonl, sharegpt, or auto (by the file's first character).",
    )  # fmt: skip
    g.add_argument(
        "--tokenizer",
        default="",
        metavar="FILE",
        help="The model's tokenizer.json (the tokenizers package): counts the prompt and output "
        "tokens of streams that bring no usage (else they are unknown); a chat's prompt through "
        "the chat template of the tokenizer_config.json beside it (jinja2), as a server counts.",
    )
    g = p.add_argument_group("pacing and figures")
    add_open_loop_flags(g, _h)
    add_workload_flags(g, llm=True)  # --stages, --trace, --shared-prefix (cli/workload.py)
    g.add_argument(
        "--warmup", type=duration, default=0.0, metavar="DURATION",
        help="Requests sent in this first part of the run count in no figure (e.g. 5s).",
    )  # fmt: skip
    g.add_argument(
        "--slo", default="", metavar="SLO",
        help="Goodput bounds, e.g. ttft=500ms,itl=50ms,tpot=30ms,e2e=10s: a good request "
        "completed within every one (itl: its longest gap).",
    )  # fmt: skip
    g.add_argument(
        "--sweep-rates", default="", metavar="R,R,...",
        help="A sweep: one open-loop step of -z per rate (requests/s, increasing), goodput and "
        "token timing against rate, and the knee.",
    )  # fmt: skip
    g.add_argument(
        "--sweep-concurrency", default="", metavar="C,C,...",
        help="A sweep: one closed-loop step of -z per number of streams (increasing).",
    )  # fmt: skip
    g.add_argument(
        "--knee-factor", type=float, default=KNEE_FACTOR,
        help="A sweep's knee: the first step whose TTFT p99 exceeds this multiple of the first "
        "step's.",
    )  # fmt: skip
    g.add_argument(
        "--knee-good", type=float, default=KNEE_MIN_GOOD,
        help="... or whose good share (completed, or within --slo) is below this ratio.",
    )  # fmt: skip
    g = p.add_argument_group(
        "the SLO search (--find-max): the highest load at which --slo holds",
        "Probes of -z each, bracketing by doubling from --find-start, then bisecting; prints "
        "the last passing and first failing level and every probe.",
    )
    g.add_argument(
        "--find-max", default="", metavar="AXIS",
        help="rate (open loop, requests/s) or concurrency (closed loop, streams): search for "
        "the highest level at which --slo holds for --slo-share of the requests.",
    )  # fmt: skip
    g.add_argument(
        "--slo-share", type=float, default=llm_find.SHARE, metavar="SHARE",
        help="The share of a probe's requests that must meet --slo for it to pass.",
    )  # fmt: skip
    g.add_argument(
        "--find-start",
        type=float,
        default=1.0,
        metavar="LEVEL",
        help="The first level probed (doubled, or halved, from there).",
    )
    g.add_argument(
        "--find-limit", type=float, default=None, metavar="LEVEL",
        help="The highest level probed (default: rate 10000, concurrency 4096).",
    )  # fmt: skip
    g.add_argument(
        "--find-precision", type=float, default=llm_find.PRECISION, metavar="RATIO",
        help="Stop when the first failing level is within this ratio above the last passing "
        "one (concurrency: or next to it).",
    )  # fmt: skip
    g.add_argument(
        "--repeat", type=int, default=1, metavar="K",
        help="Run the load K times (2 or more), one after the other, and give each headline "
        "figure's mean and 95%% interval over the runs (Student t: K is small, each run's "
        "figure near normal).",
    )  # fmt: skip
    g = p.add_argument_group("connections and output")
    add_tls_flags(g, _h)
    g.add_argument(
        "--json-out", metavar="FILE",
        help="Write the full result (histograms, series, options) as JSON to FILE, for "
        "kfp-bench merge and report.",
    )  # fmt: skip
    add_requests_out_flag(g)
    g.add_argument(
        "--export", nargs=2, metavar=("FORMAT", "FILE"),
        help="Also write the result in another tool's format to FILE. llm-d: llm-d-benchmark's "
        "Benchmark Report v0.2.1 (JSON), which llm-d's tools read (docs/reports.md). One load, "
        "not a sweep.",
    )  # fmt: skip
    add_progress_flag(g)
    add_threshold_flag(g)
    add_cost_flag(g)
    add_scale_flags(g)  # --replicas, --gpus


#: The ``LlmOptions`` fields of the flags of the same dests (beside ``shared_options``').
LLM_FLAGS = ("endpoint", "max_tokens", "ignore_eos", "stall_timeout", "tokenizer", "request_id")


def _options(a: argparse.Namespace) -> LlmOptions:
    return LlmOptions(
        **shared_options(a),
        **{k: getattr(a, k) for k in LLM_FLAGS},
        # none given: a stand-in through the checks, then the server's own (``_checked``)
        model=a.model or UNSET,
    ).validate()


def _prompts(a: argparse.Namespace) -> list:
    """The prompts of --trace, --shared-prefix or --prompts-file, or synthetic ones."""
    if a.trace and a.shared_prefix:
        raise ConfigError("--trace and --shared-prefix both given: a trace has its own prompts")
    if (a.trace or a.shared_prefix) and a.prompts_file:
        raise ConfigError("--prompts-file beside --trace or --shared-prefix: give one source")
    if a.trace:
        return trace_of(a)[1]
    if a.shared_prefix:
        from kfp_bench.load.shared_prefix import SharedPrefix, shared_prefix_prompts

        spec, out = SharedPrefix.parse(a.shared_prefix), prompt_source.Dist.parse(a.output_tokens)
        return shared_prefix_prompts(spec, out, _seed(a), a.tokenizer)
    if a.prompts_file:
        return prompt_source.from_file(
            a.prompts_file, a.prompts_format, output_tokens=a.max_tokens, tokenizer=a.tokenizer
        )
    inp, out = prompt_source.Dist.parse(a.input_tokens), prompt_source.Dist.parse(a.output_tokens)
    return prompt_source.synthetic(a.num_prompts, inp, out, _seed(a), tokenizer=a.tokenizer)


def _seed(a: argparse.Namespace) -> int:
    return a.seed if a.seed is not None else 0


def _checked(a: argparse.Namespace, opts: LlmOptions, prompts: list) -> LlmOptions:
    """``opts`` with the model the server serves, checked before the load (``load.models``):
    listed by ``/v1/models``, and the longest prompt within its context when it says one."""
    found = preflight(opts, prompts, model_given=bool(a.model), check=not a.no_model_check)
    if found.note:
        print(f"kfp-bench: warning: {found.note}", file=sys.stderr)
    return found.opts


def cmd_llm(a: argparse.Namespace) -> int:
    opts = _options(a)
    slo = Slo.parse(a.slo)
    gates = gates_of(a, {"llm"}, "llm")
    if a.warmup < 0 or (a.duration and a.warmup >= a.duration):
        raise ConfigError(
            f"--warmup {a.warmup:g}s: give a duration shorter than -z ({a.duration:g}s)"
        )
    if a.repeat != 1 and (a.find_max or a.sweep_rates or a.sweep_concurrency):
        raise ConfigError("--repeat runs one load K times: drop --find-max and --sweep-*")
    if a.repeat != 1 and a.repeat < 2:
        raise ConfigError(f"--repeat {a.repeat}: give 2 runs or more (an interval needs a spread)")
    if a.find_max:
        _check_find(a, slo)
    export = _export(a.export)
    several = a.find_max or a.sweep_rates or a.sweep_concurrency or a.repeat != 1
    if several and (a.requests_out or export):  # outputs of one load each
        what = ("--requests-out logs the requests" if a.requests_out
                else f"--export {a.export[0]} writes the report")  # fmt: skip
        raise ConfigError(f"{what} of one load: drop --sweep-*, --find-max and --repeat, or "
                          "run each level alone")  # fmt: skip
    measurement = Measurement(a, "llm")
    log = measurement.requests_log(a, stages=opts.stages, warmup_s=a.warmup, ids=sends_id(opts))
    if export:
        measurement.export(export, "--export", EXPORTS[a.export[0]])
    prompts = _prompts(a)
    if a.find_max:
        return _find(a, opts, prompts, slo, measurement, gates)
    if a.sweep_rates or a.sweep_concurrency:
        return _sweep(a, opts, prompts, slo, measurement, gates)
    if a.repeat > 1:
        return _repeat(a, opts, prompts, slo, measurement, gates)
    opts = _checked(a, opts, prompts)  # the server read once the input is known good
    progress = Progress(a.progress or sys.stderr.isatty())

    def finish(stats) -> None:
        progress.done()
        _noted(a, prompts, [stats])

    def report(stats) -> None:
        summary = stats.summary()
        llm_text.write_text(stats, sys.stdout)
        a.cached = summary.cached  # beside the server's hit rate (cli.metrics_flags)
        write_stages(stats)
        lost_workers(stats.workers)

    def load(requests_log):
        return run_llm(
            opts, prompts, slo=slo, warmup_s=a.warmup, on_progress=progress,
            on_batch_factory=requests_log,
        )  # fmt: skip

    return measurement.run(
        lambda: logged(log, load), gates=gates, finish=finish, report=report, write=store.save,
        metrics=lambda stats: {**metric_values(stats.summary()), **priced_metrics(stats)},
    )  # fmt: skip


#: The formats of --export, each the function of an LLM result that writes it.
EXPORTS = {"llm-d": llm_d.benchmark_report}


def _export(given: list[str] | None) -> str | None:
    """The file of ``--export FORMAT FILE``, its format checked (bad input: ``ConfigError``)."""
    if not given:
        return None
    fmt, path = given
    if fmt not in EXPORTS:
        raise ConfigError(f"--export {fmt}: no such format; give --export llm-d FILE")
    return path


def _sweep(a, opts: LlmOptions, prompts: list, slo: Slo, measurement, gates) -> int:
    """``--sweep-rates`` / ``--sweep-concurrency``: a step of -z per level, the table and knee.
    A step in which no stream completed is a measurement of overload, not a failure: only a
    sweep none of whose steps completed a stream is flagged so (exit 1). The gates are checked
    against the highest level before the knee, the step the report's figures are."""
    rates = parse_rates(a.sweep_rates, "--sweep-rates") if a.sweep_rates else ()
    streams = parse_concurrencies(a.sweep_concurrency) if a.sweep_concurrency else ()
    if not a.duration:
        raise ConfigError("a sweep needs -z, the length of each step (e.g. -z 30s)")
    by = "rate" if rates else "concurrency"
    knee = {"factor": a.knee_factor, "min_good": a.knee_good}
    check_llm_sweep(
        opts, rates=rates, concurrencies=streams, step_s=a.duration, warmup_s=a.warmup, **knee
    )
    opts = _checked(a, opts, prompts)

    def on_step(level: float, stats) -> None:
        s = stats.summary()
        rate, ttft = s.output_tokens_per_s, fixed(s.latency_ms["ttft"]["p99"], 1, HDR_MS)
        tokens = "tokens unknown" if rate is None else f"{fixed(rate, 0)} tok/s"
        line = f"  {by} {level:g}: {s.completed}/{s.requests} completed, TTFT p99 {ttft} ms, "
        print(line + tokens, file=sys.stderr)

    def flags(sweep) -> list[str]:
        found = [f for f in sweep.flags if f != NONE_COMPLETED]
        if sweep.steps and all(NONE_COMPLETED in st.flags for st in sweep.steps):
            found.append(NONE_COMPLETED)
        return found

    return _steps(
        a, prompts, measurement, gates,
        lambda: run_llm_sweep(
            opts, prompts, rates=rates, concurrencies=streams, step_s=a.duration, slo=slo,
            warmup_s=a.warmup, **knee, on_step=on_step,
        ),
        gated=lambda sweep: sweep.sustained()[1], flags=flags,
    )  # fmt: skip


def _repeat(a, opts: LlmOptions, prompts: list, slo: Slo, measurement, gates) -> int:
    """``--repeat K``: the load K times, the runs' table and each headline figure's interval;
    the gates are checked against the last run."""
    opts = _checked(a, opts, prompts)

    def on_step(level: float, stats) -> None:
        s = stats.summary()
        print(f"  run: {s.completed}/{s.requests} completed", file=sys.stderr)

    return _steps(
        a, prompts, measurement, gates,
        lambda: run_llm_repeats(opts, prompts, a.repeat, slo=slo, warmup_s=a.warmup,
                                on_step=on_step),
        gated=lambda sweep: sweep.steps[-1],
        more=lambda sweep: sweep_text.write_repeats_text(sweep.repeats, sys.stdout),
    )  # fmt: skip


def _check_find(a, slo: Slo) -> None:
    if a.sweep_rates or a.sweep_concurrency:
        raise ConfigError("--find-max picks its own levels: drop --sweep-rates/--sweep-concurrency")
    limit = llm_find.LIMITS.get(a.find_max, 0) if a.find_limit is None else a.find_limit
    llm_find.check_find(
        a.find_max, slo, step_s=a.duration, warmup_s=a.warmup, share=a.slo_share,
        start=a.find_start, limit=limit, precision=a.find_precision,
    )  # fmt: skip


def _find(a, opts: LlmOptions, prompts: list, slo: Slo, measurement, gates) -> int:
    """``--find-max``: the probes, then the sweep's table of them and the boundary."""
    opts = _checked(a, opts, prompts)

    def on_probe(level: float, stats, passed: bool) -> None:
        s = stats.summary()
        print(
            f"  probe {a.find_max} {level:g} ({a.duration:g} s): good {s.good_ratio:.1%} "
            f"of {s.requests}: {'passes' if passed else 'fails'}",
            file=sys.stderr,
        )

    return _steps(
        a, prompts, measurement, gates,
        lambda: llm_find.find_max(
            opts, prompts, by=a.find_max, slo=slo, step_s=a.duration, warmup_s=a.warmup,
            share=a.slo_share, start=a.find_start, limit=a.find_limit,
            precision=a.find_precision, on_probe=on_probe,
        ),
        gated=lambda sweep: sweep.reported()[1], partial=lambda exc: None,
        more=lambda sweep: sweep_text.write_search_text(sweep.search, sys.stdout),
    )  # fmt: skip


def _steps(a, prompts: list, measurement, gates, work, *, gated, more=None, **kw) -> int:
    """``work()``, a sweep, --repeat or --find-max: the steps' table, then what ``more``
    writes; the gates checked against the step ``gated(sweep)``."""

    def report(sweep) -> None:
        sweep_text.write_llm_text(sweep.rows(), sweep.knee.as_dict(), sweep.by, sys.stdout)
        if more is not None:
            more(sweep)

    return measurement.run(
        work, gates=gates, finish=lambda sweep: _noted(a, prompts, sweep.steps), report=report,
        write=store.save,
        metrics=lambda sweep: metric_values(gated(sweep).summary()),
        **{"partial": lambda exc: exc.partial, **kw},
    )  # fmt: skip


def _noted(a: argparse.Namespace, prompts: list, results: list) -> None:
    """Each of ``results`` (LLM results, a sweep's steps) with what its prompts were, and
    --cost-per-hour, --replicas and --gpus (a Pareto front's axes) when given, in its options:
    saved with it and read by the reports (``stats.pareto.Scale.of``)."""
    for st in results:
        st.options["prompts"] = _described(a, prompts)
        priced(st, a)
        st.options.update({k: getattr(a, k) for k in SCALE_HELP if getattr(a, k)})


def _described(a: argparse.Namespace, prompts: list) -> dict:
    """What the prompts were, for the saved options (never their text)."""
    if a.trace:
        return {"trace": a.trace, "trace_speed": a.trace_speed, "count": len(prompts)}
    if a.shared_prefix:
        return {"shared_prefix": a.shared_prefix, "output_tokens": a.output_tokens,
                "count": len(prompts), "seed": _seed(a)}  # fmt: skip
    if a.prompts_file:
        return {"file": a.prompts_file, "format": a.prompts_format, "count": len(prompts)}
    return {"input_tokens": a.input_tokens, "output_tokens": a.output_tokens,
            "count": len(prompts), "seed": _seed(a)}  # fmt: skip

"""``kfp-bench report`` and ``compare``: reports rebuilt from saved results, and verdicts."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kfp_bench import gates as gate
from kfp_bench._doc import field_help
from kfp_bench.cli.common import (
    SCALE_HELP,
    add_cost_flag,
    add_scale_flags,
    add_threshold_flag,
    command,
    writable,
)
from kfp_bench.cli.outputs import Outputs
from kfp_bench.errors import ConfigError
from kfp_bench.history.uri import local_root
from kfp_bench.outcome import EXIT_NOT_SAVED, EXIT_REGRESSION, gated
from kfp_bench.push import check_labels, push
from kfp_bench.report.rebuild import compare_dirs, rebuild, rebuild_all
from kfp_bench.stats import store
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.rate_sweep import LlmSweep, RateSweep

# Imports inside functions: the CLI imports every command's module to build its parser: what only
# running a command needs is imported there, so that --help and a refused flag start at once
# (bench/cli_startup.py).


def register(sub) -> None:
    p = command(
        sub,
        "report",
        cmd_report,
        "For each results directory: report.html, summary.md, metrics.json and CSV files, with "
        "the trend and a regression verdict from --results-uri. A load result FILE.json is "
        "printed again in hey's layout; an LLM result FILE.json (kfp-bench llm --json-out) is "
        "printed and gets its report in FILE-report/ (or --out); a sweep's file (kfp-bench "
        "sweep, or llm --sweep-..., --json-out) prints its table and every step. With "
        "--results-uri every input is archived there.",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS_DIR|RESULT.json")
    p.add_argument("--out", default="", metavar="DIR", help=field_help(rebuild, "out_dir"))
    p.add_argument(
        "--results-uri", default="", metavar="URI", help=field_help(rebuild, "results_uri")
    )
    p.add_argument(
        "--baseline", default="", metavar="last:N|KEY", help=field_help(rebuild, "baseline")
    )
    add_threshold_flag(p)
    add_cost_flag(p)
    add_scale_flags(p)  # --replicas, --gpus: an LLM sweep's Pareto front
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help=f"exit {EXIT_REGRESSION} when the verdict against --baseline is a regression (a "
        "gate: the report's first lines say so).",
    )
    p.add_argument(
        "--pushgateway-url",
        default="",
        metavar="URL",
        help="push the headline figures and, when the run passed, its last-success time to this "
        "Prometheus Pushgateway (docs/alerting.md); one input only.",
    )
    p.add_argument(
        "--push-label",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a label of the pushed group, e.g. benchmark=nightly, target=my-model (repeat; "
        "benchmark defaults to kfp-bench).",
    )

    p = command(sub, "compare", cmd_compare)
    p.add_argument(
        "a",
        metavar="A",
        help="the baseline: a results directory or history key; or an LLM sweep file, whose "
        "levels and B's are then set on one Pareto front (docs/llm-metrics.md); or a kfp-bench llm "
        "--repeat file, B's figures then judged against A's by their intervals (docs/llm-load.md).",
    )
    p.add_argument(
        "b", metavar="B", help="the current results: a directory, history key or LLM sweep file."
    )
    p.add_argument(
        "--results-uri",
        default="",
        metavar="URI",
        help="the results history where A and B are looked up when they are keys.",
    )
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help=f"exit {EXIT_REGRESSION} when the verdict is a regression.",
    )
    g = p.add_argument_group(
        "two LLM sweeps",
        "Their levels on one Pareto front, per GPU when both give GPUs, else per replica, else "
        "per unit of price, else in all (saved by kfp-bench llm --gpus, --replicas, "
        "--cost-per-hour, or given here).",
    )
    for name in ("replicas", "gpus"):
        g.add_argument(
            f"--{name}", type=_pair, default=None, metavar="N|A,B",
            help=f"the {name} that served A and B (one number for both): as kfp-bench llm "
            f"--{name}, over what the files saved.",
        )  # fmt: skip
    g.add_argument(
        "--out", default="", metavar="DIR",
        help="also write the Pareto page there: report.html (the chart, both fronts marked) and "
        "summary.md.",
    )  # fmt: skip


def _pair(text: str) -> tuple[int, int]:
    """An argparse type: ``N`` (A's and B's) or ``A,B``, whole numbers of 1 or more."""
    parts = text.split(",")
    try:
        values = [int(v) for v in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or min(values) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a whole number of 1 or more for both, or A's and B's as A,B (e.g. 2,4)"
        )
    return (values[0], values[-1])


def cmd_report(a: argparse.Namespace) -> int:
    gates = gate.parse(a.threshold, "--threshold")
    if a.fail_on_regression:
        if not a.baseline:
            raise ConfigError(
                "--fail-on-regression: give --baseline (last:N with --results-uri, a history "
                "key, or a results directory): without one there is no verdict to fail on"
            )
        gates += (gate.REGRESSION_GATE,)
    labels = _push_labels(a)
    outs = Outputs()
    outs.add(a.out, "--out", folder=True)
    if a.results_uri and (root := local_root(a.results_uri)) is not None:
        writable(str(root), "--results-uri", folder=True)  # the archive's folder, as --out's
    try:
        with outs.made():  # the results are read in rebuild_all: a refused one undoes this
            outcomes = rebuild_all(
                a.results, sys.stdout, out_dir=a.out, results_uri=a.results_uri,
                baseline=a.baseline, gates=gates, cost_per_hour=a.cost_per_hour,
                scale={k: getattr(a, k) for k in SCALE_HELP if getattr(a, k)},
            )  # fmt: skip
    except OSError as exc:  # after the checks: a full disk, a folder removed meanwhile
        where = f"--out {a.out}" if a.out else "RESULTS_DIR/report"
        print(
            f"kfp-bench: {where}: could not write the report ({exc.strerror or exc}: "
            f"{exc.filename}); the results it is built from are unchanged: run it again",
            file=sys.stderr,
        )
        return EXIT_NOT_SAVED
    refused = [o.history.refused for o in outcomes if o.history and o.history.refused]
    for why in refused:
        print(f"kfp-bench: {why}", file=sys.stderr)
    if a.pushgateway_url:  # after the report is written: a failed push hides nothing
        _push(a, outcomes[0], labels)
    return gated(1 if refused else 0, [v for o in outcomes for v in o.gates])


def _push_labels(a: argparse.Namespace) -> dict[str, str]:
    """The pushed group's labels, checked before any work (bad input: exit 2)."""
    if not a.pushgateway_url:  # --push-label alone and the URL's form: cli/checks.py
        return {}
    if len(a.results) > 1:
        raise ConfigError(
            "--pushgateway-url: one run's figures are pushed at a time, and "
            f"{len(a.results)} inputs were given; report the run to push alone"
        )
    _pushable(a.results[0])
    labels = {}
    for item in a.push_label:
        key, sep, value = item.partition("=")
        if not sep or not value:
            raise ConfigError(f"--push-label {item!r}: give NAME=VALUE, e.g. benchmark=nightly")
        if key in labels:  # which one was meant, no rule can tell
            raise ConfigError(f"--push-label {key}: given twice; give each label once")
        labels[key] = value
    return check_labels({"benchmark": "kfp-bench", **labels})


def _pushable(path: str) -> None:
    """``ConfigError`` for an input whose report has no metrics to push, a load result file:
    refused before the report is written or archived."""
    if Path(path).is_file() and not isinstance(store.load(path), LlmStats | LlmSweep | RateSweep):
        raise ConfigError(
            f"--pushgateway-url: {path} is a load result file, which has no metrics to "
            "push; give a results directory (kfp-bench runs --out, a pipeline run's results) "
            "or an LLM result file"
        )


def _push(a: argparse.Namespace, outcome, labels: dict[str, str]) -> None:
    if "metrics.json" not in outcome.files:  # refused before the work (_pushable); kept
        raise ConfigError(
            f"--pushgateway-url: {a.results[0]} has no metrics to push; give a results "
            "directory (kfp-bench runs --out, a pipeline run's results) or an LLM result file"
        )
    metrics = json.loads(outcome.files["metrics.json"].read_text())
    part = "llm" if "llm_latency.csv" in outcome.files else "main"
    labels = {**labels, "part": labels.get("part", part)}
    verdicts = {v.gate.text: v.broken for v in outcome.gates}
    for line in push(a.pushgateway_url, metrics, labels, verdicts=verdicts):
        print(line)


def cmd_compare(a: argparse.Namespace) -> int:
    if Path(a.a).is_file() or Path(a.b).is_file():
        return _compare_sweeps(a)
    if a.replicas or a.gpus or a.out:
        raise ConfigError(
            "--replicas, --gpus and --out take two LLM sweep files (their Pareto page): drop "
            "them to compare results directories"
        )
    verdict = compare_dirs(a.a, a.b, sys.stdout, results_uri=a.results_uri)
    return EXIT_REGRESSION if verdict.regression and a.fail_on_regression else 0


def _compare_repeats(a: argparse.Namespace, base, current) -> int:
    """``compare A.json B.json`` of two ``kfp-bench llm --repeat K`` results: the verdict over
    their intervals (``history.regress.compare_repeats``)."""
    from kfp_bench.history.regress import compare_repeats
    from kfp_bench.report.sweep import write_repeats_verdict

    if a.results_uri or a.replicas or a.gpus or a.out:
        raise ConfigError(
            "two --repeat files get a verdict over their intervals: drop --results-uri, "
            "--replicas, --gpus and --out"
        )
    verdict = compare_repeats(current.repeats, base.repeats, names=[a.a])
    sys.stdout.write(f"\nA: {a.a} ({base.repeats['runs']} runs)\n"
                     f"B: {a.b} ({current.repeats['runs']} runs)\n")  # fmt: skip
    write_repeats_verdict(verdict, sys.stdout)
    return EXIT_REGRESSION if verdict.regression and a.fail_on_regression else 0


def _compare_sweeps(a: argparse.Namespace) -> int:
    """``compare A.json B.json`` of two LLM sweeps: their levels on one Pareto front, each
    sweep's own front marked too; with --out, the page of it (``report.llm_bundle``)."""
    from kfp_bench.report.llm_bundle import write_pareto_page
    from kfp_bench.report.sweep import write_pareto_text
    from kfp_bench.stats.pareto import Scale

    both = [store.load(p) if Path(p).is_file() else None for p in (a.a, a.b)]
    if all(isinstance(s, LlmSweep) and s.repeats for s in both):
        return _compare_repeats(a, *both)
    if a.fail_on_regression or a.results_uri:
        raise ConfigError(
            "--fail-on-regression and --results-uri take results directories, history keys or "
            "two kfp-bench llm --repeat files: two LLM sweep files get their Pareto front, and "
            "no verdict"
        )
    outs = Outputs()
    outs.add(a.out, "--out", folder=True)
    sweeps = {}
    for i, (side, path, stats) in enumerate(zip("AB", (a.a, a.b), both, strict=True)):
        if not isinstance(stats, LlmSweep) or stats.search is not None or len(stats.levels) < 2:
            raise ConfigError(
                f"{path}: compare takes two results directories (or history keys), or two LLM "
                "sweep files of two levels or more (kfp-bench llm --sweep-rates or "
                "--sweep-concurrency --json-out)"
            )
        saved = Scale.of(stats.steps[0].options)
        scale = Scale(
            a.replicas[i] if a.replicas else saved.replicas,
            a.gpus[i] if a.gpus else saved.gpus,
            saved.per_hour,
        )
        sweeps[side] = (stats.rows(), scale)
    sys.stdout.write(f"\nA: {a.a}\nB: {a.b}\n")
    write_pareto_text(sweeps, sys.stdout)
    if a.out:
        with outs.made():
            files = write_pareto_page(sweeps, a.out, f"A: {a.a}; B: {a.b}")
        print(f"\nThe Pareto page: {files['report.html']}")
    return 0

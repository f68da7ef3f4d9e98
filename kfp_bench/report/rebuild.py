"""Reports from saved results, with the history: what ``kfp-bench report`` and ``compare`` do;
the KFP component and ``kfp-bench demo`` call ``rebuild`` as the CLI does."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from kfp_bench import gates as gate
from kfp_bench import history as hist
from kfp_bench.errors import BaselineError, ConfigError, ResultsError
from kfp_bench.figures import num, pct, sig
from kfp_bench.metrics.series import load_beside
from kfp_bench.report import cost, server_text
from kfp_bench.report.fmt import change
from kfp_bench.results import Results, read_results

if TYPE_CHECKING:
    from kfp_bench.history.regress import Verdict

# Imports inside functions: pandas, scipy and matplotlib come with what imports them, and the CLI
# imports this module to build its help: `kfp-bench load` must not pay seconds of imports it never
# uses.


@dataclass
class Outcome:
    """What ``rebuild`` did.

    Attributes:
        files: the bundle's files.
        history: the history shown in the report, or None without a results URI or baseline.
        key: the result's key in the history ("" without a results URI).
        archived: True when stored now, False when the key was stored before, None without a URI.
        gates: the gates' verdicts (``kfp_bench.gates.Verdict``), empty without gates.
    """

    files: dict[str, Path]
    history: hist.History | None = None
    key: str = ""
    archived: bool | None = None
    gates: list = field(default_factory=list)


def rebuild(
    results: Results | str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    results_uri: str = "",
    baseline: str = "",
    gates=(),
) -> Outcome:
    """Write the bundle of ``results`` into ``out_dir``, with the history when asked, and the
    verdicts of ``gates`` (``kfp_bench.gates.Gate``) first in it.

    A baseline too small for a verdict is not an error here: ``Outcome.history.refused`` says
    why (the CLI then exits nonzero).

    Args:
        results: a results directory (or one read back already).
        out_dir: where the report goes; default RESULTS_DIR/report, or OUT/NAME for each of
            several results directories.
        results_uri: the results history: gs://BUCKET/PREFIX, s3://BUCKET/PREFIX (endpoint
            from ?endpoint=URL or AWS_ENDPOINT_URL, keys from AWS_ACCESS_KEY_ID...),
            minio://BUCKET/PREFIX (KFP's store) or a local folder (file:///PATH): the report
            shows the trend of the earlier results there, and the results and report are
            archived under a new timestamped key (nothing is overwritten); a load or LLM result
            file is archived too.
        baseline: what to test for a regression against: last:N (the N latest earlier results
            in --results-uri, pooled), one KEY of it, or a results directory.
    """
    res = results if isinstance(results, Results) else read_results(results)
    store = hist.open_store(results_uri) if results_uri else None
    history = _history(res, store, baseline)
    # after the checks: the bundle's charts import seaborn and with it scipy.stats (1.6 s of
    # CPU), which a refused --results-uri or --baseline has no use for
    from kfp_bench.report.bundle import write_bundle

    files = write_bundle(res, out_dir, history=history, gates=gates)
    # the verdicts against the metrics the bundle wrote, as its pages show them
    metrics = json.loads(files["metrics.json"].read_text()) if gates else {}
    out = Outcome(files, history, gates=gate.evaluate(gates, metrics))
    if store is not None:
        out.key = history.key
        out.archived = hist.archive(store, history.key, res, files)
    return out


def kinds(res: Results, baseline: str = "") -> set[str]:
    """The parts of a benchmark ``res`` measured (``kfp_bench.gates.KINDS``): a gate on another
    part's figure is refused."""
    s, found = res.summary, {"regression"} if baseline else set()
    found |= {"runs"} if s.get("runs") or res.runs or res.api_calls else set()
    found |= {"load"} if res.load is not None else set()
    return found | {k for k in ("sweep", "replicas") if s.get(k)}


def _history(res: Results, store, baseline: str) -> hist.History | None:
    from kfp_bench.history import regress

    if baseline and Path(baseline).is_dir():
        h = hist.prepare(store, res) if store else hist.History(uri="")
        h.baseline = baseline
        try:
            h.verdict = regress.compare(res, [read_results(baseline)], names=[baseline])
        except BaselineError as exc:
            h.refused = str(exc)
        return h
    if store is None:
        if baseline:
            raise ConfigError(
                f"--baseline {baseline}: give --results-uri too (where the earlier results are), "
                "or a results directory as the baseline"
            )
        return None
    return hist.prepare(store, res, baseline)


# -- compare -----------------------------------------------------------------------------------
def rebuild_all(
    paths: list[str],
    out: TextIO,
    *,
    out_dir: str = "",
    results_uri: str = "",
    baseline: str = "",
    gates=(),
    cost_per_hour: float = 0.0,
    scale: dict | None = None,
) -> list[Outcome]:
    """``kfp-bench report``: a load result file is printed in hey's layout; an LLM result file
    is printed and gets its bundle (``report.llm_bundle``); each results directory gets its
    bundle (oldest first, so a batch builds the history in order). With ``results_uri`` every
    input is archived there (``history.archive_file`` for a result file). Every input is read,
    and each of ``gates`` refused unless every input measures its figure, before anything is
    written; each input's verdicts are printed first. ``scale``: --replicas and --gpus, set on
    every LLM result's options over what it saved (``stats.pareto.Scale``)."""
    from kfp_bench.report import hey
    from kfp_bench.stats import store
    from kfp_bench.stats.llm import LlmStats
    from kfp_bench.stats.rate_sweep import LlmSweep, RateSweep

    dirs, files = [], []
    for p in paths:
        if Path(p).is_file() or (p.endswith(".json") and not Path(p).exists()):
            files.append((p, store.load(p)))
        else:
            dirs.append(read_results(p))
    if files and baseline:
        raise ConfigError(
            f"--baseline: {files[0][0]} is a load or LLM result file, and a verdict compares "
            "benchmark directories only; report it without --baseline"
        )
    cost.price(files, dirs, cost_per_hour)  # --cost-per-hour (report/cost.py)
    for _, stats in files:
        if isinstance(stats, LlmStats | LlmSweep):
            for one in getattr(stats, "steps", None) or [stats]:
                one.options.update(scale or {})
    fix = "drop the gate, or give results that measure it"
    kind = {p: "llm" if isinstance(s, LlmStats | LlmSweep) else "load" for p, s in files}
    kind |= {p: "sweep" for p, s in files if isinstance(s, RateSweep)}
    for p, _ in files:
        gate.require(gates, {kind[p]}, f"--threshold (for {p})", fix, "--fail-on-regression")
    for res in dirs:
        where = f"--threshold (for {res.path})"
        gate.require(gates, kinds(res, baseline), where, fix, "--fail-on-regression")
    store = hist.open_store(results_uri) if results_uri and files else None
    outcomes = []
    for p, stats in files:
        if kind[p] == "llm":
            o = _llm_report(p, stats, out, out_dir, len(paths) > 1, gates)
        elif kind[p] == "sweep":
            o = _sweep_report(p, stats, out, gates)
        else:
            from kfp_bench.report.metrics import of_load

            o = _gated(gates, lambda stats=stats: of_load(stats), out, f"{p}: ")
            hey.write_text(stats, out)
            if server := load_beside(p):
                server_text.write_text(server, server_text.client_of_load(stats), out)
        if store is not None:
            o.key, o.archived = hist.archive_file(store, Path(p), kind[p], o.files)
            _archived(o, results_uri, out, f"{p}: ")
        outcomes.append(o)
    dirs.sort(key=hist.started_at)
    for res in dirs:
        if not out_dir:
            target = res.path / "report"
        else:
            target = Path(out_dir) / res.path.name if len(dirs) > 1 else Path(out_dir)
        o = rebuild(res, target, results_uri=results_uri, baseline=baseline, gates=gates)
        _said(o, out, f"{res.path}: ")
        out.write(f"{res.path}: wrote {', '.join(o.files)} in {target}\n")
        h = o.history
        if h is not None and h.verdict is not None:
            out.write(f"  {h.verdict.headline()}\n")
        _archived(o, results_uri, out, "  ")
        outcomes.append(o)
    return outcomes


def _said(o: Outcome, out: TextIO, lead: str) -> None:
    """The gates' verdicts: the first lines of an input's text report."""
    for line in gate.lines(o.gates):
        out.write(f"{lead}{line.strip() if line.startswith('  ') else line}\n")


def _gated(gates, metrics, out: TextIO, lead: str) -> Outcome:
    """An input's outcome with the verdicts of ``gates`` against ``metrics()`` (called only
    with gates), said first."""
    o = Outcome({}, gates=gate.evaluate(gates, metrics() if gates else {}))
    _said(o, out, lead)
    return o


def _archived(o: Outcome, results_uri: str, out: TextIO, lead: str) -> None:
    if o.archived is not None:
        done = "archived as" if o.archived else "already archived as"
        out.write(f"{lead}{done} {o.key} in {results_uri}\n")


def _sweep_report(path: str, sweep, out: TextIO, gates=()) -> Outcome:
    """A saved rate sweep: its table and knee as ``kfp-bench sweep`` printed them, then every
    step in hey's layout; its gates against the rows, as ``kfp-bench sweep`` checks them."""
    from kfp_bench.report import hey
    from kfp_bench.report import sweep as sweep_text

    def metrics() -> dict:  # pandas only with gates
        from kfp_bench.report.metrics import of_summary

        return of_summary({"sweep": sweep.rows, "sweep_knee": sweep.knee})

    o = _gated(gates, metrics, out, f"{path}: ")
    sweep_text.write_text(sweep.rows, sweep.knee, out)
    for row, stats in zip(sweep.rows, sweep.steps, strict=True):
        out.write(f"\nStep at {row['rate']:g} req/s:\n")
        hey.write_text(stats, out)
    return o


def _llm_report(path: str, stats, out: TextIO, out_dir: str, several: bool, gates=()) -> Outcome:
    """An LLM result's text summary, and its bundle in ``out_dir`` (OUT/STEM for one of several
    inputs), by default STEM-report beside the file. A sweep prints its table, then every
    step's summary; its bundle's figures are the highest level before the knee, with the table."""
    from kfp_bench.report import llm_text
    from kfp_bench.report import sweep as sweep_text
    from kfp_bench.report.llm_bundle import write_llm_bundle
    from kfp_bench.stats.llm import metric_values
    from kfp_bench.stats.rate_sweep import LlmSweep

    p = Path(path)
    if not out_dir:
        target = p.with_name(f"{p.stem}-report")
    else:
        target = Path(out_dir) / p.stem if several else Path(out_dir)
    step = stats.reported()[1] if isinstance(stats, LlmSweep) else stats
    o = _gated(gates, lambda: {**metric_values(step.summary()), **cost.llm_stats_metrics(step)},
               out, f"{p}: ")  # fmt: skip
    sweep = None
    if isinstance(stats, LlmSweep):
        (level, reported), sweep = stats.reported(), stats
        sweep_text.write_llm_text(sweep.rows(), sweep.knee.as_dict(), sweep.by, out)
        for lv, step in sweep.zipped():
            out.write(f"\nStep at {sweep.by} {lv:g}:\n")
            llm_text.write_text(step, out)
        stats = reported
        out.write(f"The report's figures are the step at {sweep.by} {level:g}.\n")
    else:
        llm_text.write_text(stats, out)
    server = load_beside(p)
    if server is not None:
        server_text.write_text(server, stats.summary().latency_ms, out)
    llm_text.write_prefix_cache(server, out, stats.summary().cached)
    o.files = write_llm_bundle(
        stats, target, source=p.name, sweep=sweep and sweep.rows(), gates=gates,
        sweep_by=sweep and sweep.by, server=server, search=sweep and sweep.search,
    )  # fmt: skip
    out.write(f"{p}: wrote {', '.join(o.files)} in {target}\n")
    return o


def load_either(spec: str, results_uri: str, tmp: Path) -> Results:
    """A results directory, or a key of the history at ``results_uri``."""
    if Path(spec).exists() or not results_uri:
        return read_results(spec)
    return hist.fetch(hist.open_store(results_uri), spec, tmp)


def metrics_of(results: Results) -> dict[str, float]:
    """The metrics of a results directory (``report.metrics``)."""
    from kfp_bench.report.metrics import collect
    from kfp_bench.report.tables import build

    return collect(build(results))


def diff(ma: dict, mb: dict) -> list[tuple[str, float | None, float | None]]:
    """Every metric of either result's metrics whose value differs: (name, a, b); None where
    absent."""
    return [
        (name, ma.get(name), mb.get(name))
        for name in sorted(set(ma) | set(mb))
        if ma.get(name) != mb.get(name)
    ]


def compare_dirs(a_spec: str, b_spec: str, out: TextIO, *, results_uri: str = "") -> Verdict:
    """Print the metrics that differ between A and B, then the verdict of B against A.

    Raises:
        BaselineError: A or B has too few samples for a verdict (after the differences).
    """
    from kfp_bench.history import regress
    from kfp_bench.report.metrics import RUN_RES

    with tempfile.TemporaryDirectory(prefix="kfp-bench-compare-") as tmp:
        a = load_either(a_spec, results_uri, Path(tmp))
        b = load_either(b_spec, results_uri, Path(tmp))
        check_comparable(a, b, a_spec, b_spec)  # before a line of the comparison is printed
        ma, mb = metrics_of(a), metrics_of(b)
        write_diff(ma, mb, a_spec, b_spec, out)
        write_generator_caveats({"A": a, "B": b}, out)
        verdict = regress.compare(b, [a], names=[a_spec])
    write_verdict(verdict, out, mb.get(RUN_RES))
    return verdict


#: The result file of each metric a verdict tests (``history.regress.samples``), by its prefix.
SOURCES = {"api_": "api_calls.jsonl", "load_": "load.json", "run": "runs.jsonl"}


def check_comparable(a: Results, b: Results, a_name: str, b_name: str) -> None:
    """``ResultsError`` (bad input, exit 2) when A and B, each holding figures a verdict tests,
    share none: the results of different benchmarks (runs and a load), which no rerun makes
    comparable. Too few samples of a shared figure is left to the verdict (``BaselineError``,
    exit 1: a longer run mends it)."""
    from kfp_bench.history.regress import figures

    fa, fb = figures(a), figures(b)
    if not (fa or fb) or fa & fb:
        return
    lacks = [f"{n} no {_files(other)}" for n, other in ((b_name, fa), (a_name, fb)) if other]
    raise ResultsError(
        f"compare {a_name} {b_name}: {' and '.join(lacks).replace(' no ', ' has no ', 1)}: no "
        "figure of one is in the other; give two results of the same benchmark (runs with runs, "
        "a load with a load)"
    )


def _files(metrics: set[str]) -> str:
    """The result files ``metrics`` come from, each with its metrics: "runs.jsonl
    (run_duration_s, runs_failed)"."""
    by_file: dict[str, list[str]] = {}
    for m in sorted(metrics):
        by_file.setdefault(next(f for pre, f in SOURCES.items() if m.startswith(pre)), []).append(m)
    return " or ".join(
        f"{f} ({', '.join(ms[:3])}{', ...' if len(ms) > 3 else ''})" for f, ms in by_file.items()
    )


def write_diff(ma: dict, mb: dict, a_name: str, b_name: str, out: TextIO) -> None:
    """The metrics that differ between A's ``ma`` and B's ``mb``, each at its source's
    resolution (``report.metrics.resolution``), and their change."""
    from kfp_bench.report.metrics import RUN_RES, resolution

    rows = diff(ma, mb)
    w = out.write
    w(f"\nA (baseline): {a_name}\nB (current):  {b_name}\n\n")
    if not rows:
        w("The metrics are identical.\n")
        return
    width = max(len(r[0]) for r in rows) + 2
    w(f"  {'metric':<{width}}{'A':>14}{'B':>14}{'change':>10}\n")
    for name, va, vb in rows:
        change = ""
        if va not in (None, 0) and vb is not None:
            change = pct((vb - va) / abs(va), sign=True)
        a_text, b_text = (num(v, resolution(name, m.get(RUN_RES))) for v, m in ((va, ma), (vb, mb)))
        w(f"  {name:<{width}}{a_text:>14}{b_text:>14}{change:>10}\n")


def write_generator_caveats(sides: dict[str, Results], out: TextIO) -> None:
    """A line for each side whose load generator was throttled by its cgroup or CPU-bound: a
    change in its load figures may then be the generator's, not the server's."""
    from kfp_bench.stats.load import cpu_caveat, cpu_figures

    for name, res in sides.items():
        caveat = cpu_caveat(cpu_figures(res.load)) if res.load is not None else None
        if caveat:
            out.write(f"\nCaution, {name}: {caveat}.\n")


def write_verdict(v: Verdict, out: TextIO, run_res: float | None = None) -> None:
    """The verdict and its tests; ``run_res``: B's run times' resolution, the medians' too."""
    from kfp_bench.report.metrics import resolution

    w = out.write
    w(f"\nVerdict: {v.headline()}\n")
    w(f"  {'metric':<28}{'test':<14}{'n B/A':>13}{'A':>11}{'B':>11}{'change':>10}{'p':>10}\n")
    for t in v.tests:
        res = resolution(t.metric, run_res)
        w(
            f"{'!' if t.regressed else ' '} {t.metric:<28}{t.test:<14}"
            f"{f'{t.n_current}/{t.n_baseline}':>13}{num(t.baseline, res):>11}"
            f"{num(t.current, res):>11}{change(t, 'pt'):>10}{sig(t.p_adjusted, 3):>10}\n"
        )
    if v.skipped:
        w(f"  not tested (too few samples): {', '.join(sorted(v.skipped))}\n")

"""The regression verdict: tonight's raw samples against a baseline's, with a statistical test.

Never one number crossing a threshold: per metric, a one-sided Mann-Whitney U test (are the
samples larger, slower?) or, for failure counts, a one-sided Fisher exact test; p-values
Holm-adjusted over the verdict's tests, so ten metrics are not ten chances of a false alarm. A
metric regresses when its adjusted p is below ``alpha`` *and* the change matters (``min_effect``
of the median, ``min_rate`` of the failure ratio): over thousands of samples a 1 % drift is
"significant" and not worth waking anyone. The samples: run durations of SUCCEEDED runs (a
failed run is often faster: failures are a rate), API latencies, and load latencies drawn from
the HDR histogram at most ``LOAD_SAMPLES`` evenly spaced ranks (not the per-second series, whose
percentiles are no samples; requests of one attack are not independent, so 10^5 of them would
make any wobble significant). A baseline is earlier results pooled; a metric with fewer than
``min_samples`` on a side is skipped, and with none testable ``compare`` raises
``BaselineError``. Results repeated K times (``kfp-bench llm --repeat K``) carry each headline
figure's 95% interval instead of samples: ``compare_repeats`` judges those."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from kfp_bench.errors import BaselineError
from kfp_bench.figures import pct, sig
from kfp_bench.results import Results

ALPHA = 0.01
MIN_EFFECT = 0.10
MIN_RATE = 0.02
MIN_SAMPLES = 8
#: At most this many load latencies are drawn from one result's histogram.
LOAD_SAMPLES = 2000


@dataclass(frozen=True, slots=True)
class Test:
    """One metric's test.

    Attributes:
        metric: what was compared, e.g. "run_duration_s", "api_create_run_ms", "runs_failed".
        test: "mannwhitneyu" or "fisher".
        n_current: samples (or trials) of the current result.
        n_baseline: samples (or trials) of the baseline.
        current: the current median (or failure ratio).
        baseline: the baseline median (or failure ratio).
        change: relative change of the median, or the absolute change of the failure ratio.
        p_value: the one-sided p-value.
        p_adjusted: the Holm-adjusted p-value.
        regressed: adjusted p below alpha and the change at least the minimum effect.
    """

    metric: str
    test: str
    n_current: int
    n_baseline: int
    current: float
    baseline: float
    change: float
    p_value: float
    p_adjusted: float = 1.0
    regressed: bool = False
    #: An "interval" test's 95% intervals (low, high) of the current and the baseline figure.
    current_ci: tuple[float, float] | None = None
    baseline_ci: tuple[float, float] | None = None


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing one result with a baseline.

    Attributes:
        regression: True when any test regressed.
        baseline: the keys (or paths) of the results pooled into the baseline.
        tests: every test made, worst first.
        skipped: metric -> why it was not tested (too few samples).
        alpha: the significance level.
        min_effect: the smallest relative change of a median that counts.
    """

    regression: bool
    baseline: tuple[str, ...]
    tests: tuple[Test, ...]
    skipped: dict = field(default_factory=dict)
    alpha: float = ALPHA
    min_effect: float = MIN_EFFECT

    @property
    def regressed(self) -> list[Test]:
        return [t for t in self.tests if t.regressed]

    def metrics(self) -> dict[str, float]:
        """The verdict's entries of metrics.json (see kfp_bench.report.metrics); an interval
        test has no p-value, and a verdict of those alone no regression_min_p_value."""
        tested = [t.p_adjusted for t in self.tests if t.test != INTERVAL]
        return {
            "regression": int(self.regression),
            "regression_tests": len(self.tests),
            "regression_failed_tests": len(self.regressed),
            **({"regression_min_p_value": round(min(tested), 6)} if tested else {}),
            "baseline_results": len(self.baseline),
        }

    def headline(self) -> str:
        """One line: the verdict and the metrics that regressed."""
        base = f"baseline of {len(self.baseline)} result(s)"
        if not self.regression:
            return f"no regression against the {base} ({len(self.tests)} metrics tested)"
        worst = ", ".join(f"{t.metric} {_change(t)}" for t in self.regressed)
        return f"REGRESSION against the {base}: {worst}"


def _change(t: Test) -> str:
    if t.test == INTERVAL:
        return f"{pct(t.change, 0, sign=True)} (mean {sig(t.baseline, 4)} -> {sig(t.current, 4)})"
    if t.test == "fisher":
        return f"{pct(t.baseline)} -> {pct(t.current)} failed"
    return f"{pct(t.change, 0, sign=True)} (median {sig(t.baseline, 4)} -> {sig(t.current, 4)})"


# -- samples -----------------------------------------------------------------------------------
def samples(results: Results) -> dict[str, np.ndarray]:
    """The raw samples of ``results`` by metric name (see the module docstring)."""
    out: dict[str, np.ndarray] = {}
    durations = [r.duration for r in results.runs if r.state == "SUCCEEDED" and r.duration]
    if durations:
        out["run_duration_s"] = np.asarray(durations, dtype=np.float64)
    by_op: dict[str, list[float]] = {}
    for c in results.api_calls:
        by_op.setdefault(c.operation, []).append(c.duration * 1000)
    for op, values in sorted(by_op.items()):
        out[f"api_{op}_ms"] = np.asarray(values, dtype=np.float64)
    if results.load is not None and results.load.latency.count:
        out["load_latency_ms"] = hdr_samples(results.load.latency, LOAD_SAMPLES) / 1000
    return out


def hdr_samples(hist, n: int) -> np.ndarray:
    """At most ``n`` values (µs) of a ``kfp_bench.stats.hdr.Histogram`` at evenly spaced ranks:
    the histogram's quantile function at (i + 0.5) / n; every value when it holds fewer."""
    values, counts = hist.nonzero()
    total = int(counts.sum())
    if total <= n:
        return np.repeat(values, counts)
    ranks = (np.arange(n) + 0.5) * total / n
    return values[np.searchsorted(np.cumsum(counts), ranks, side="left")]


def failures(results: Results) -> dict[str, tuple[int, int]]:
    """metric -> (failed, trials): finished runs, and load requests."""
    out = {}
    finished = [r for r in results.runs if r.finished_at is not None or r.state != "RUNNING"]
    if finished:
        failed = sum(r.state != "SUCCEEDED" for r in finished)
        out["runs_failed"] = (failed, len(finished))
    if results.load is not None and results.load.requests:
        out["load_failed"] = (results.load.requests - results.load.ok, results.load.requests)
    return out


def figures(results: Results) -> set[str]:
    """The metrics ``results`` holds samples or trials of: those a verdict can test."""
    return {m for m, v in samples(results).items() if v.size} | set(failures(results))


# -- the verdict -------------------------------------------------------------------------------
def compare(
    current: Results,
    baseline: list[Results],
    *,
    names: list[str] | None = None,
    alpha: float = ALPHA,
    min_effect: float = MIN_EFFECT,
    min_rate: float = MIN_RATE,
    min_samples: int = MIN_SAMPLES,
) -> Verdict:
    """Compare ``current`` with the pooled ``baseline`` results; ``names`` label the baseline.

    Raises:
        BaselineError: when no metric has ``min_samples`` on both sides.
    """
    names = names or [str(b.path) for b in baseline]
    if not baseline:
        raise BaselineError(
            "the baseline holds no earlier results: no verdict made; record more benchmarks "
            "into --results-uri first, or pin a baseline that exists"
        )
    cur, base = samples(current), _pool([samples(b) for b in baseline])
    tests, skipped = [], {}
    for metric in sorted(set(cur) | set(base)):
        a, b = cur.get(metric, np.empty(0)), base.get(metric, np.empty(0))
        if min(a.size, b.size) < min_samples:
            skipped[metric] = f"{a.size} current, {b.size} baseline samples (need {min_samples})"
            continue
        p = stats.mannwhitneyu(a, b, alternative="greater").pvalue
        ma, mb = float(np.median(a)), float(np.median(b))
        change = (ma - mb) / mb if mb > 0 else (np.inf if ma > mb else 0.0)
        tests.append(Test(metric, "mannwhitneyu", a.size, b.size, ma, mb, change, float(p)))
    cur_f = failures(current)
    base_f = _pool_counts([failures(b) for b in baseline])
    for metric in sorted(set(cur_f) & set(base_f)):
        (fa, na), (fb, nb) = cur_f[metric], base_f[metric]
        if min(na, nb) < min_samples:
            skipped[metric] = f"{na} current, {nb} baseline trials (need {min_samples})"
            continue
        p = stats.fisher_exact([[fa, na - fa], [fb, nb - fb]], alternative="greater").pvalue
        ra, rb = fa / na, fb / nb
        tests.append(Test(metric, "fisher", na, nb, ra, rb, ra - rb, float(p)))
    if not tests:
        why = "; ".join(f"{m}: {s}" for m, s in skipped.items()) or "no samples at all"
        raise BaselineError(
            f"too few samples for a verdict against {', '.join(names)} ({why}); no verdict made. "
            f"Run longer benchmarks (more runs, a longer load) or a larger baseline (last:N)"
        )
    tests = _holm(tests, alpha, min_effect, min_rate)
    return Verdict(
        regression=any(t.regressed for t in tests),
        baseline=tuple(names),
        tests=tuple(tests),
        skipped=skipped,
        alpha=alpha,
        min_effect=min_effect,
    )


#: The test of two repeated results' intervals (``compare_repeats``).
INTERVAL = "interval"
#: Each headline figure of a repeated LLM result (``stats.confidence.HEADLINE``) and the way it
#: gets worse: 1, when it grows (a latency); -1, when it falls (a throughput, a good share).
WORSE = {
    "rps": -1, "output_tokens_per_s": -1, "ttft_p50_ms": 1, "ttft_p99_ms": 1, "itl_p50_ms": 1,
    "itl_p99_ms": 1, "tpot_p50_ms": 1, "e2e_p99_ms": 1, "goodput_rps": -1, "good_ratio": -1,
}  # fmt: skip


def compare_repeats(
    current: dict, baseline: dict, *, names: list[str], min_effect: float = MIN_EFFECT
) -> Verdict:
    """The verdict of a repeated result against another (``LlmSweep.repeats`` of each: every
    headline figure's mean and 95% Student t interval over its K runs).

    A figure regresses when the current interval lies wholly on the worse side of the
    baseline's (they do not overlap) *and* its mean moved by ``min_effect`` or more. Two 95%
    intervals that do not overlap mean a difference significant at about p < 0.006 for equal
    widths (Schenker & Gentleman 2001, "On judging the significance of differences by examining
    the overlap between confidence intervals", The American Statistician 55(3); Cumming & Finch
    2005, "Inference by eye"): a conservative rule, which with K of 3 to 10 runs a side, and
    ten figures at once, keeps a night's noise from being called a regression; overlapping
    intervals are no regression, whatever the means. The runs' figures, not their requests, are
    the samples: requests of one run are not independent.

    Raises:
        BaselineError: no figure has an interval on both sides.
    """
    tests, skipped = [], {}
    for metric, worse in WORSE.items():
        a, b = current["intervals"].get(metric), baseline["intervals"].get(metric)
        if a is None or b is None:
            skipped[metric] = "no interval on both sides (fewer than 2 runs with the figure)"
            continue
        ma, mb = a["mean"], b["mean"]
        change = (ma - mb) / abs(mb) if mb else (math.inf if ma != mb else 0.0)
        apart = a["low"] > b["high"] if worse > 0 else a["high"] < b["low"]
        regressed = apart and worse * change >= min_effect
        ci_a, ci_b = (a["low"], a["high"]), (b["low"], b["high"])
        tests.append(Test(metric, INTERVAL, a["n"], b["n"], ma, mb, change, math.nan, math.nan,
                          regressed, ci_a, ci_b))  # fmt: skip
    if not tests:
        raise BaselineError(
            f"no figure has an interval in both {names[0]} and the current result; no verdict "
            "made: give two kfp-bench llm --repeat K (K of 2 or more) results"
        )
    tests.sort(key=lambda t: (not t.regressed, t.metric))
    return Verdict(
        regression=any(t.regressed for t in tests), baseline=tuple(names), tests=tuple(tests),
        skipped=skipped, alpha=0.05, min_effect=min_effect,
    )  # fmt: skip


def _pool(parts: list[dict]) -> dict[str, np.ndarray]:
    keys = {k for p in parts for k in p}
    return {k: np.concatenate([p[k] for p in parts if k in p]) for k in keys}


def _pool_counts(parts: list[dict]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for p in parts:
        for k, (f, n) in p.items():
            f0, n0 = out.get(k, (0, 0))
            out[k] = (f0 + f, n0 + n)
    return out


def _holm(tests: list[Test], alpha: float, min_effect: float, min_rate: float) -> list[Test]:
    """Holm's step-down adjustment; returns the tests worst (smallest adjusted p) first."""
    order = sorted(range(len(tests)), key=lambda i: tests[i].p_value)
    m, running, out = len(tests), 0.0, []
    for rank, i in enumerate(order):
        t = tests[i]
        running = max(running, min(1.0, (m - rank) * t.p_value))
        big = t.change >= (min_rate if t.test == "fisher" else min_effect)
        out.append(replace(t, p_adjusted=running, regressed=running < alpha and big))
    return out

"""What the server metrics cost the load engine: ``kfp-bench llm`` at a fixed open-loop rate
against the local LLM server, without server metrics, with a direct ``--scrape`` of its
/metrics every second, and with the kserve-predictor profile against a real Prometheus (Debian's)
as well; the runs alternate (A B C A B C ...), so a busy machine weighs on each alike.

Two figures per completed request: the load engine's process CPU (user + sys) from the results'
``client_cpu`` (``RUSAGE_SELF`` from the load's start to its end; with one worker the engine runs
in the CLI's process, so the scrape thread's CPU is in it), and the whole ``kfp-bench llm``
process tree's (``RUSAGE_CHILDREN`` around each run: start-up, the profile's queries and the
saving included). Run from the checkout's root:

``python bench/metrics_cost.py [RATE] [SECONDS] [ROUNDS]`` (defaults 50 10 3)

It also prints the CPU of one scrape of the LLM server's page (``Collector._scrape_one``, 200
times in this process, ``RUSAGE_SELF``): what the scrape thread takes per step, and writes the
table to a results file (bench/result_files.py) for BENCHMARKS.md.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import result_files  # noqa: E402
from peers import host  # noqa: E402

from kfp_bench import __version__  # noqa: E402
from kfp_bench.sandbox.llm_server import start_llm_server  # noqa: E402
from tests.metrics.prometheus_server import prometheus, wait_scraped  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one(argv: list[str], out: Path) -> tuple[float, float, int]:
    """One ``kfp-bench llm`` run: the engine's CPU seconds, the process tree's, and its
    completed requests."""
    before = cpu()
    done = subprocess.run(
        [sys.executable, "-m", "kfp_bench.cli", "llm", *argv, "--json-out", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    used = cpu() - before
    if done.returncode != 0:
        raise SystemExit(f"kfp-bench llm failed: {done.stderr[-2000:]}")
    doc = json.loads(out.read_text())
    engine = doc["client_cpu"]["user_s"] + doc["client_cpu"]["system_s"]
    return engine, used, doc["counts"]["completed"]


def per_scrape(url: str, n: int = 200) -> float:
    """CPU seconds of one scrape and parse of ``url``, the mean of ``n``."""
    from kfp_bench.metrics.collect import Collector

    c = Collector(scrapes=(url,))
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(n):
        c._scrape_one(url)
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime - r0.ru_utime + r.ru_stime - r0.ru_stime) / n


def main(rate: float = 50, seconds: float = 10, rounds: int = 3) -> None:
    started, machine, commit = result_files.now(), host(), result_files.commit()
    work = Path(tempfile.mkdtemp(prefix="metrics-cost-"))
    with start_llm_server(first_token_ms=40, token_gap_ms=10) as llm:
        target = urllib.parse.urlsplit(llm.url).netloc
        pod = {"namespace": "bench", "pod": "llm-predictor-0"}
        with prometheus(work, {target: pod}) as prom:
            wait_scraped(prom, 1)
            base = [llm.url, "--model", "kfp-bench-llm", "--rate", f"{rate:g}", "-z",
                    f"{seconds:g}s", "-c", "256", "--max-tokens", "32"]  # fmt: skip
            scrape = ["--scrape", f"{llm.url}/metrics"]
            profile = ["--metrics-profile", "kserve-predictor", "--prometheus-url", prom,
                       "--metrics-var", "namespace=bench", "--metrics-var", "isvc=llm"]  # fmt: skip
            cases = {"none": base, "scrape 1 s": base + scrape,
                     "scrape + profile": base + scrape + profile}  # fmt: skip
            one_scrape = per_scrape(f"{llm.url}/metrics")
            per: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
            for r in range(rounds):
                for name, argv in cases.items():
                    engine, tree, n = one(argv, work / f"{r}-{name.replace(' ', '_')}.json")
                    per[name].append((engine / n * 1e6, tree / n * 1e6))
                    print(f"round {r + 1} {name}: engine {engine:.3f} s, tree {tree:.3f} s "
                          f"CPU, {n} requests", flush=True)  # fmt: skip
    print(f"\none scrape of the LLM server's /metrics: {one_scrape * 1e3:.2f} ms CPU")
    base = [statistics.median(v[i] for v in per["none"]) for i in (0, 1)]
    print("\n| server metrics | engine CPU/request (µs) | ratio | process tree CPU/request (µs) "
          "| ratio |\n|---|---:|---:|---:|---:|")  # fmt: skip
    rows = []
    for name, vals in per.items():
        m = [statistics.median(v[i] for v in vals) for i in (0, 1)]
        rows.append([name, f"{m[0]:,.0f}", f"{m[0] / base[0]:.2f}", f"{m[1]:,.0f}",
                     f"{m[1] / base[1]:.2f}"])  # fmt: skip
        print("| " + " | ".join(rows[-1]) + " |")
    print(result_files.save(result_files.Result(
        benchmark="metrics-cost",
        title="Server metrics: what the scrapes cost the load engine",
        command=result_files.command(), started=started, commit=commit, machine=machine,
        versions={"kfp-bench": __version__},
        tables=[result_files.Table(
            f"`kfp-bench llm`, {rate:g} requests/s for {seconds:g} s, 32 tokens, one worker, local "
            f"LLM server; cases alternated, medians of {rounds} rounds, µs of CPU per completed "
            "request",
            ["server metrics", "engine CPU/request µs", "ratio", "process tree CPU/request µs",
             "ratio"], rows,
        )],
        notes=f"One scrape and parse of the LLM server's /metrics: {one_scrape * 1e3:.1f} ms of "
        "CPU (mean of 200).",
    )))  # fmt: skip


if __name__ == "__main__":
    main(*(float(a) if i < 2 else int(a) for i, a in enumerate(sys.argv[1:])))

"""What the server metrics cost the load engine: ``kfp-bench llm`` at a fixed open-loop rate
against the local LLM server, without server metrics, with a direct ``--scrape`` of its
/metrics every second, and with the kserve-predictor profile against a real Prometheus (Debian's)
as well; the runs alternate (A B C A B C ...), so a busy machine weighs on each alike.

The figure is the CPU (user + sys) of the whole ``kfp-bench llm`` process tree per completed
request (``resource.getrusage(RUSAGE_CHILDREN)`` around each run: the CLI waits for its worker
processes, so their CPU is in its own). Run from the checkout's root:

``python bench/metrics_cost.py [RATE] [SECONDS] [ROUNDS]`` (defaults 50 10 3)
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

from kfp_bench.sandbox.llm_server import start_llm_server  # noqa: E402
from tests.metrics.prometheus_server import prometheus, wait_scraped  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one(argv: list[str], out: Path) -> tuple[float, int]:
    """CPU seconds of one ``kfp-bench llm`` run and its completed requests."""
    before = cpu()
    done = subprocess.run(
        [sys.executable, "-m", "kfp_bench.cli", "llm", *argv, "--json-out", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    used = cpu() - before
    if done.returncode != 0:
        raise SystemExit(f"kfp-bench llm failed: {done.stderr[-2000:]}")
    return used, json.loads(out.read_text())["counts"]["completed"]


def main(rate: float = 50, seconds: float = 10, rounds: int = 3) -> None:
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
            per: dict[str, list[float]] = {k: [] for k in cases}
            for r in range(rounds):
                for name, argv in cases.items():
                    used, n = one(argv, work / f"{r}-{name.replace(' ', '_')}.json")
                    per[name].append(used / n * 1e6)
                    print(f"round {r + 1} {name}: {used:.3f} s CPU, {n} requests", flush=True)
    first = statistics.median(per["none"])
    print("\n| server metrics | CPU per request (µs), median of rounds | ratio to none |")
    print("|---|---:|---:|")
    for name, vals in per.items():
        m = statistics.median(vals)
        print(f"| {name} | {m:,.0f} ({', '.join(f'{v:,.0f}' for v in vals)}) | {m / first:.2f} |")


if __name__ == "__main__":
    main(*(float(a) if i < 2 else int(a) for i, a in enumerate(sys.argv[1:])))

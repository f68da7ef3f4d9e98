"""The SLO search's precision: ``llm --find-max`` against the local LLM server with ``--slots``,
whose capacity is known by construction, repeated, the found boundary against the computed one.

Starts ``kfp-bench llm-server --slots SLOTS`` (first token FIRST ms, then a token every GAP ms,
TOKENS tokens): each request holds a slot FIRST + (TOKENS - 1) * GAP ms, so it serves SLOTS /
that requests/s, and SLOTS streams at once. Runs the search REPEATS times by rate and by
concurrency (``load.llm_find.find_max``, probes of PROBE_S seconds, --slo ttft=FIRST+100ms for
90% of the requests) and writes each search's last passing and first failing level, its error
against the computed boundary, and its probes and time, to a results file (bench/result_files.py).
Nothing here runs in CI: the figures hold for the machine they were taken on (run it idle).

Usage: ``python bench/llm_find_max.py [--slots 8] [--repeats 5] [--probe-s 5] [--results DIR]``
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import result_files
from peers import host

from kfp_bench import __version__
from kfp_bench.load import llm_find
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.prompts import Dist, synthetic
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.stats.slo import Slo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slots", type=int, default=8)
    ap.add_argument("--first-ms", type=float, default=50.0)
    ap.add_argument("--gap-ms", type=float, default=25.0)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--probe-s", type=float, default=5.0)
    ap.add_argument("--results", type=Path, default=result_files.RESULTS)
    a = ap.parse_args()
    started, machine, commit = result_files.now(), host(), result_files.commit()
    service_s = (a.first_ms + (a.tokens - 1) * a.gap_ms) / 1000
    truth = {"rate": a.slots / service_s, "concurrency": float(a.slots)}
    slo = Slo.parse(f"ttft={int(a.first_ms + 100)}ms")
    prompts = synthetic(16, Dist.parse("fixed:8"), Dist.parse(f"fixed:{a.tokens}"), 0)
    rows = []
    with start_llm_server(
        slots=a.slots, first_token_ms=a.first_ms, token_gap_ms=a.gap_ms, max_tokens=a.tokens
    ) as server:
        opts = LlmOptions(url=server.url, model="kfp-bench-llm", timeout=60.0).validate()
        for by in llm_find.AXES:
            for n in range(a.repeats):
                t0 = time.monotonic()
                s = llm_find.find_max(
                    opts, prompts, by=by, slo=slo, step_s=a.probe_s,
                    start=max(1, round(truth[by] / 4)), limit=round(truth[by] * 2),
                ).search  # fmt: skip
                took = time.monotonic() - t0
                ok, bad = (None if v is None else round(v, 3) for v in (s["passing"], s["failing"]))
                err = None if ok is None else round(100 * (ok / truth[by] - 1), 2)
                rows.append([by, n + 1, round(truth[by], 3), ok, bad, err, len(s["probes"]),
                             round(took, 1)])  # fmt: skip
                print(rows[-1], flush=True)
    worst = max((abs(r[5]) for r in rows if r[5] is not None), default=None)
    goals = [
        result_files.Goal(
            "largest error of the last passing level", f"{worst}%", "<= 10%",
            None if worst is None else worst <= 10,
        )
    ]  # fmt: skip
    machine = {**machine, "loadavg_1m_end": round(os.getloadavg()[0], 2)}
    result = result_files.Result(
        benchmark="llm-find-max",
        title="The SLO search against a server of known capacity",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={"kfp-bench": __version__},
        tables=[
            result_files.Table(
                f"--find-max by rate and concurrency, {a.slots} slots, {service_s * 1000:g} ms "
                f"a request, --slo {slo}, probes of {a.probe_s:g} s",
                [
                    "axis",
                    "search",
                    "computed",
                    "last passing",
                    "first failing",
                    "error %",
                    "probes",
                    "seconds",
                ],  # fmt: skip
                rows,
            )
        ],
        goals=goals,
    )
    print(result_files.save(result, a.results))


if __name__ == "__main__":
    main()

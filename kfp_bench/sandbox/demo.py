"""``kfp-bench demo``: the embedded default, run end to end on one machine.

It starts the sandbox KServe model server on loopback and loads it the two ways users do: closed
loop with the KServe autoscaling guide's hey command, then open loop at a fixed rate. It prints each
summary and writes the results to the output directory. Everything it starts is stopped on the
way out, Ctrl-C included.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kfp_bench.load import LoadOptions, run_load
from kfp_bench.load.payload import v1_payload
from kfp_bench.report import hey
from kfp_bench.sandbox.model_server import start_model_server
from kfp_bench.stats import store

SERVICE_HOSTNAME = "iris.kfp-bench.example.com"


def _say(msg: str) -> None:
    print(f"[demo] {msg}", file=sys.stderr, flush=True)


def run_demo(out: Path, duration_s: float = 10.0, rate: float = 50.0) -> int:
    """Run the demo; return the process exit code (130 when interrupted)."""
    out.mkdir(parents=True, exist_ok=True)
    body = v1_payload([1, 4])
    (out / "input.json").write_bytes(body)
    _say("starting the KServe model server (iris, scikit-learn) on 127.0.0.1")
    started = time.monotonic()
    with start_model_server() as server:
        _say(f"model server ready at {server.url} in {time.monotonic() - started:.1f}s")
        steps = [
            (
                "closed-loop",
                f"hey-style: -z {duration_s:g}s -c 5 -m POST -host ...",
                dict(concurrency=5),
            ),
            (
                "open-loop",
                f"open loop: --rate {rate:g} -z {duration_s:g}s",
                dict(rate=rate, concurrency=5),
            ),
        ]
        for i, (name, what, knobs) in enumerate(steps, 1):
            _say(f"step {i}/{len(steps)}: {what} {server.v1_predict_url}")
            opts = LoadOptions(
                url=server.v1_predict_url,
                method="POST",
                body=body,
                content_type="application/json",
                host=SERVICE_HOSTNAME,
                duration=duration_s,
                **knobs,
            )
            stats = run_load(opts)
            print(f"\n=== {name}: {what}")
            hey.write_text(stats, sys.stdout)
            path = store.save(stats, out / f"load-{name}.json")
            with (out / f"summary-{name}.txt").open("w") as f:
                hey.write_text(stats, f)
            _say(f"wrote {path}")
            if "interrupted" in stats.flags:
                _say("interrupted: stopping the demo after saving what was measured")
                return 130
    _say(f"done: results in {out}/ (kfp-bench report {out}/load-open-loop.json prints it again)")
    return 0

"""``kfp-bench sweep``: KServe's benchmark table (one open-loop step per rate) and its knee."""

from __future__ import annotations

import argparse
import sys

from kfp_bench.atomic import write_json
from kfp_bench.cli.common import (
    add_body_flags,
    add_hey_flags,
    add_open_loop_flags,
    add_shape_flags,
    add_threshold_flag,
    add_tls_flags,
    command,
    duration,
    gates_of,
    request_body,
    shared_options,
)
from kfp_bench.cli.common import load_help as _h
from kfp_bench.cli.measure import Measurement
from kfp_bench.figures import HDR_MS, fixed, pct
from kfp_bench.load.options import LoadOptions, parse_rates
from kfp_bench.load.sweep import KNEE_FACTOR, KNEE_MIN_SUCCESS, run_sweep
from kfp_bench.report import sweep as sweep_report


def register(sub) -> None:
    p = command(
        sub, "sweep", cmd_sweep,
        "Load URL open-loop at each rate of --rates for -z each, print KServe's benchmark table "
        "and the saturation knee: the first rate whose p99 exceeds --knee-factor x the first "
        "rate's p99, or whose success falls below --knee-success.",
    )  # fmt: skip
    # hey's flags and kfp-bench's, defined once (cli/common.py); a sweep's steps
    # are paced by --rates, so it has no -n, -c, -q or --rate
    add_hey_flags(
        p, _h, concurrency=None, timeout=20.0, default_z=30.0, z_help="Length of each step."
    )
    add_body_flags(p, method="POST", content_type="application/json")
    p.add_argument("--rates", required=True, help="Rates of the steps, requests/s, e.g. 5,50,500.")
    g = p.add_argument_group("beyond hey")
    add_open_loop_flags(g, _h, rate=False)
    add_tls_flags(g, _h)
    add_shape_flags(g)
    p.add_argument(
        "--knee-factor",
        type=float,
        default=KNEE_FACTOR,
        help="k: a step whose p99 exceeds k x the first step's p99 is past the knee.",
    )
    p.add_argument(
        "--knee-success",
        type=float,
        default=KNEE_MIN_SUCCESS,
        help="A step whose success ratio is below this is past the knee.",
    )
    p.add_argument(
        "--pause",
        type=duration,
        default=0.0,
        help="Rest between steps, so one step's backlog does not spill over.",
    )
    p.add_argument(
        "--json-out",
        metavar="FILE",
        help='Write {"sweep": rows, "sweep_knee": knee} and every step\'s load result as JSON '
        "to FILE, for kfp-bench report.",
    )
    add_threshold_flag(p)


def _options(a: argparse.Namespace) -> LoadOptions:
    return LoadOptions(**shared_options(a), **request_body(a))


def cmd_sweep(a: argparse.Namespace) -> int:
    rates = parse_rates(a.rates)
    opts = _options(a)
    gates = gates_of(a, {"sweep"}, "sweep")
    measurement = Measurement(a, "sweep")

    def said(step) -> None:
        cpu = "" if step.client_busiest is None else f", client CPU {pct(step.client_busiest, 0)}"
        p99 = "no response" if step.p99_ms is None else f"p99 {fixed(step.p99_ms, 1, HDR_MS)} ms"
        gone = f", {step.no_response} without a response" if step.no_response else ""
        print(
            f"  {step.rate:g} req/s: {step.requests} requests, {p99}, "
            f"success {pct(step.success_ratio, 2)}{gone}{cpu}",
            file=sys.stderr,
            flush=True,
        )

    def sweep():  # the knee settings are checked in run_sweep, before it sends
        return run_sweep(
            opts, rates, a.duration, factor=a.knee_factor, min_success=a.knee_success,
            pause_s=a.pause, on_step=said,
        )  # fmt: skip

    def report(result) -> None:
        doc = result.as_dict()
        sweep_report.write_text(doc["sweep"], doc["sweep_knee"], sys.stdout)

    def flags(result) -> list[str]:
        found = [f for s in result.steps for f in s.failures]
        return found + ["interrupted"] * any(s.interrupted for s in result.steps)

    return measurement.run(
        sweep, gates=gates, metrics=lambda r: _metrics(r.as_dict()), report=report,
        write=lambda r, path: write_json(r.to_dict(), path), flags=flags,
        partial=lambda exc: exc.partial, described=True,
    )  # fmt: skip


def _metrics(doc: dict) -> dict:
    from kfp_bench.report.metrics import of_summary  # pandas: only when gates are given

    return of_summary(doc)

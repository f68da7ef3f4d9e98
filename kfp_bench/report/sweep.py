"""Sweeps as text, from their rows and knee (plain dicts, so that saved results print the same as
a live sweep): the rate sweep as KServe's benchmark table (QPS x mean, p50, p95, p99, success,
``write_text``) and the LLM sweep's goodput and token timing (``write_llm_text``). Each step's
flags (failures and warnings) follow its row, and the knee's step's follow the knee line: a knee
at a step that lost a worker or read tokens late is read with that in mind. A step whose load
generator was CPU-bound is named: its rate, and a knee there, may be the generator's limit."""

from __future__ import annotations

from typing import TextIO

from kfp_bench.figures import HDR_MS, fixed, pct, sig
from kfp_bench.stats.load import CPU_BOUND
from kfp_bench.stats.pareto import SHORT, fronts

#: The rate sweep table's columns: (row key, header, the cell of a value).
_COLUMNS = (
    ("rate", "QPS", "{:g}".format),  # the rate asked for
    ("rps", "achieved", lambda v: fixed(v, 1)),
    ("mean_ms", "mean ms", lambda v: fixed(v, 2)),
    ("p50_ms", "p50 ms", lambda v: fixed(v, 2, HDR_MS)),
    ("p95_ms", "p95 ms", lambda v: fixed(v, 2, HDR_MS)),
    ("p99_ms", "p99 ms", lambda v: fixed(v, 2, HDR_MS)),
    ("success_ratio", "success", lambda v: pct(v, 2)),
    ("no_response", "no response", str),
    ("max_replicas", "max replicas", str),
    ("client_busiest", "client CPU", lambda v: pct(v, 0)),
)


def write_text(rows: list[dict], knee: dict | None, out: TextIO) -> None:
    """Write the sweep table (a ``<`` marks the knee's row) and a line naming the knee."""
    cols = [c for c in _COLUMNS if any(c[0] in r for r in rows)]
    if not any(r.get("no_response") for r in rows):  # shown only when some step had some
        cols = [c for c in cols if c[0] != "no_response"]
    cells = [[c[1] for c in cols]]
    for r in rows:
        line = [c[2](r[c[0]]) if r.get(c[0]) is not None else "-" for c in cols]
        cells.append(line)
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    for i, row in enumerate(cells):
        mark = "  < knee" if i and rows[i - 1].get("knee") else ""
        flags = _flags(rows[i - 1]) if i else ""
        out.write("  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) + mark)
        out.write(f"  ({flags})\n" if flags else "\n")
    if knee is not None:
        if knee.get("rate") is None:
            out.write(f"\nNo knee: {knee['reason']}.\n")
        else:
            at = next((r for r in rows if r.get("knee")), {})
            out.write(f"\nKnee at {knee['rate']:g} req/s: {knee['reason']}{_knee_flags(at)}.\n")
    bound = [r for r in rows if (r.get("client_busiest") or 0) >= CPU_BOUND]
    if bound:
        busiest = pct(bound[0]["client_busiest"], 0)
        out.write(
            f"The load generator was CPU-bound from {bound[0]['rate']:g} req/s on (a process at "
            f"{busiest} of a core): from there the rate may be its limit, not the server's; add "
            "--workers or machines.\n"
        )


def _flags(row: dict) -> str:
    """A step's failure and warning flags, for the end of its line ("" when none)."""
    return ", ".join([*(row.get("failures") or ()), *(row.get("warnings") or ())])


def _knee_flags(row: dict) -> str:
    flags = _flags(row)
    return f" (that step's flags: {flags})" if flags else ""


#: The LLM sweep table's columns: (row key, header).
LLM_COLUMNS = (
    ("rps", "req/s"), ("output_tokens_per_s", "tok/s"), ("ttft_p50_ms", "TTFT p50"),
    ("ttft_p99_ms", "TTFT p99"), ("itl_p99_ms", "ITL p99"), ("tpot_p50_ms", "TPOT p50"),
    ("goodput_rps", "good/s"), ("good_ratio", "good"), ("failed", "failed"),
)  # fmt: skip


def write_llm_text(rows: list[dict], knee: dict, by: str, out: TextIO) -> None:
    """An LLM sweep's table (``stats.rate_sweep.LlmSweep.rows``), one line per step (ms) with
    its flags, and its knee with the knee step's flags."""
    w = out.write
    w(f"\nSweep by {by} (latencies in ms{', from the intended send' if by == 'rate' else ''}):\n")
    w(f"  {by}\t" + "\t".join(h for _, h in LLM_COLUMNS) + "\n")
    for r in rows:
        cells = "\t".join(sig(r.get(k), 4) for k, _ in LLM_COLUMNS)
        mark = "  <- knee" if r.get("knee") else ""
        flags = f"  ({_flags(r)})" if _flags(r) else ""
        w(f"  {r['level']:g}\t{cells}{mark}{flags}\n")
    where = f"at {by} {knee['level']:g}" if knee["level"] is not None else "none"
    at = next((r for r in rows if r.get("knee")), {})
    w(f"\nKnee: {where}: {knee['reason']}{_knee_flags(at)}\n")


def write_search_text(search: dict, out: TextIO) -> None:
    """``--find-max``'s result: the boundary between the last passing and first failing level,
    and every probe in the order it ran."""
    w = out.write
    by, unit = search["by"], " req/s" if search["by"] == "rate" else " streams"
    ok, bad = search["passing"], search["failing"]
    w(f"\nSLO search by {by}: --slo {search['slo']} for {search['share']:.0%} of requests, "
      f"probes of {search['probe_s']:g} s (warm-up {search['warmup_s']:g} s)\n")  # fmt: skip
    for p in search["probes"]:
        verdict = "passes" if p["passed"] else "fails"
        w(f"  probe {p['probe']}: {by} {p['level']:g}: good {p['good_ratio']:.1%}: {verdict}\n")
    if ok is not None and bad is not None:
        w(f"Boundary: between {ok:g} (passes) and {bad:g}{unit} (fails): {search['reason']}\n")
    elif ok is not None:
        w(f"Boundary: at least {ok:g}{unit}: {search['reason']}\n")
    else:
        w(f"Boundary: below {bad:g}{unit}: {search['reason']}\n")


def write_repeats_text(repeats: dict, out: TextIO) -> None:
    """``--repeat K``'s intervals: each headline figure's mean and 95% interval over the runs."""
    w = out.write
    w(f"\nOver {repeats['runs']} runs: mean and {repeats['confidence']:.0%} interval "
      f"({repeats['method']}):\n")  # fmt: skip
    for key, ci in repeats["intervals"].items():
        if ci is not None:
            w(f"  {key}\t{sig(ci['mean'], 4)}\t[{sig(ci['low'], 4)}, {sig(ci['high'], 4)}]\n")


def write_repeats_verdict(v, out: TextIO) -> None:
    """The verdict of one ``--repeat`` result against another (``history.regress.
    compare_repeats``): each figure's mean and 95% interval in A and B, its change, a ``!`` when
    it regressed."""
    w = out.write
    w(f"\nVerdict: {v.headline()}\n")
    w(f"  (a figure regresses when B's 95% interval is wholly worse than A's and its mean moved "
      f"{v.min_effect:.0%} or more)\n")  # fmt: skip
    w("  metric\tA mean [95% interval]\tB mean [95% interval]\tchange\n")
    for t in v.tests:
        a, b = (_ci(t.baseline, t.baseline_ci), _ci(t.current, t.current_ci))
        w(f"{'!' if t.regressed else ' '} {t.metric}\t{a}\t{b}\t{t.change:+.1%}\n")


def _ci(mean: float, ci: tuple[float, float]) -> str:
    return f"{sig(mean, 4)} [{sig(ci[0], 4)}, {sig(ci[1], 4)}]"


def write_pareto_text(sweeps: dict, out: TextIO) -> None:
    """Two or more LLM sweeps' levels (by name: their rows and ``stats.pareto.Scale``) as
    output tokens/s per user against the server side's axis (``stats.pareto.axis``), each
    sweep's own front and the front over all of them marked (``stats.pareto.fronts``)."""
    y, label, points = fronts(sweeps)
    w = out.write
    w(f"\nOutput tokens/s per user (1000 / TPOT p50) against {label}:\n")
    w(f"  sweep\tlevel\tper user\t{SHORT[y]}\tits own front\tPareto front\n")
    for p in points:
        cells = f"{sig(p['per_user'], 4)}\t{sig(p[y], 4)}\t{_on(p['own'])}"
        w(f"  {p['sweep']}\t{p['level']:g}\t{cells}\t{_on(p['front'])}\n")


def _on(front: bool) -> str:
    return "on the front" if front else "-"

"""The runs benchmark's summary: a text table for people and summary.json for programs.

Both are functions of the finished ``RunsStats.summary()`` document, so ``kfp-bench`` can print
the same table again from a saved summary.json without a cluster.
"""

from __future__ import annotations

from typing import TextIO

from kfp_bench.figures import fixed, pct, sig, span
from kfp_bench.metrics.series import ServerSeries, percentiles
from kfp_bench.report import fill_server as fill_report
from kfp_bench.report.fmt import Section
from kfp_bench.report.server_text import COMPARE_HEAD, compare_rows, write_table
from kfp_bench.stats.runs import QUANTISED


def write_text(doc: dict, out: TextIO) -> None:
    """Print the summary table of a summary.json document."""
    w = out.write
    runs, api = doc["runs"], doc["api"]
    w(f"\nBenchmark {doc['benchmark_id']} against {doc['host']}\n")
    # Older summaries have no create_failed: every failed create attempt was a failed call then.
    failed = runs.get("create_failed", runs["create_errors"])
    w(
        f"  Runs:\t{runs['requested']} requested, {runs['created']} created"
        + (f", {failed} create calls failed" if failed else "")
        + "\n"
    )
    states = ", ".join(f"{k} {v}" for k, v in runs["by_state"].items()) or "none"
    w(f"  States:\t{states}\n")
    caching = (doc.get("options") or {}).get("caching")
    if caching:
        w(f"  Caching:\t{caching}\n")
    if runs.get("simulated"):
        w(f"  Simulated:\t{runs['simulated']} runs (the server simulated them)\n")
    if runs.get("gave_up"):
        w(f"  Gave up:\t{runs['gave_up']} runs at the timeout\n")

    _write_run_times(runs, w)
    _write_timeout(runs.get("at_timeout") or {}, w)

    w("\nAPI calls, client side (milliseconds; count and errors are attempts, retries the ")
    w("attempts after a first, failed the calls that failed after every retry):\n")
    w(
        f"  {'operation':<24}{'count':>7}{'errors':>7}{'retries':>8}{'failed':>7}"
        f"{'p50':>10}{'p90':>10}{'p99':>10}{'max':>10}\n"
    )
    for op, d in api.items():
        if not d["count"] and op not in ("create_run", "list_runs"):
            continue
        w(
            f"  {op:<24}{d['count']:>7}{d['errors']:>7}{d.get('retries', 0):>8}"
            f"{d.get('failed', d['errors']):>7}"
            + "".join(f"{fixed(d[k], 2):>10}" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms"))
            + "\n"
        )
    per_round = doc.get("calls_per_poll_round", {})
    w(
        f"\n  API calls:\t{doc['api_calls_total']} in total, {doc['poll_rounds']} poll rounds "
        f"(at most {per_round.get('max', 0)} calls a round)\n"
    )
    if doc.get("api_retries_total"):
        w(
            f"  Retries:\t{doc['api_retries_total']} attempts retried a failed call; "
            f"{doc.get('api_failed_total', 0)} calls still failed after every retry\n"
        )
    client = doc.get("client", {})
    cpu, wall = fixed(client.get("cpu_s", 0), 2), fixed(client.get("wall_s", 0), 2)
    w(f"  Driver:\t{cpu} CPU seconds over {wall} s\n")
    _write_server(doc.get("server") or {}, w, api)
    if doc.get("fill"):
        _write_fill(doc["fill"], w)
    _write_errors(api, w)
    _write_notes(doc, w)
    w("\n")


#: Run phases and their labels: (records attribute, table row).
RUN_TIMES = (("duration", "duration"), ("queue_delay", "queue delay"), ("execution", "execution"))


def _write_run_times(runs: dict, w) -> None:
    res = runs.get("resolution_s")
    coarse = res is not None and res >= QUANTISED
    if coarse:
        w(
            f"\nRun times from server timestamps (seconds; the server writes them to {res:g} s: "
            f"percentiles are nearest-rank, each run's figure within ±{res:g} s; mean over the "
            "count):\n"
        )
    else:
        w("\nRun times from server timestamps (seconds):\n")
    w(f"  {'':<14}{'count':>7}{'p50':>10}{'p90':>10}{'p99':>10}{'max':>10}{'mean':>10}\n")
    for attr, label in RUN_TIMES:
        d = runs[f"{attr}_s"]
        w(
            f"  {label:<14}{d['count']:>7}"
            + "".join(f"{run_time(d[k], res):>10}" for k in ("p50", "p90", "p99", "max"))
            + f"{run_time(d['mean'], res, mean=True):>10}\n"
        )
    if coarse:
        _write_bounds(runs, res, w)


def _write_bounds(runs: dict, res: float, w) -> None:
    """Each statistic's bounds: the server's figure +- its resolution, narrowed by the polls."""
    w(f"  bounds (server ±{res:g} s; narrowed where the driver's polls saw the change):\n")
    for attr, label in RUN_TIMES:
        d = runs[f"{attr}_s"]
        bounds = d.get("bounds")
        if not d["count"] or not bounds:
            continue
        cells = "  ".join(f"{k} {span(*bounds[k])}" for k in ("p50", "p90", "p99", "max"))
        polls = d.get("polls_narrowed", 0)
        by = f"polls narrowed {polls} of {d['count']} runs" if polls else "server only"
        w(f"  {label:<14}{cells}  ({by})\n")


def run_time(v: float, res: float | None, mean: bool = False) -> str:
    """A run time statistic (s) as the run times' tables print it: three decimals, no more than
    the server's timestamps carry (whole seconds from a real server); a mean, over its count of
    runs, two more."""
    return fixed(v, 3, res / 100 if mean and res else res)


def _write_timeout(at_timeout: dict, w) -> None:
    """What the timeout did to each run open at it: terminated, finished before its terminate
    (KFP refused the terminate), terminate failed, left running."""
    if not at_timeout:
        return
    w("\nAt the timeout (runs unfinished at the last poll):\n")
    for fate, label in _FATES:
        d = at_timeout.get(fate)
        if not d:
            continue
        states = ", ".join(f"{k} {v}" for k, v in d["states"].items())
        ids = ", ".join(d["run_ids"][:5]) + (", ..." if d["count"] > 5 else "")
        w(f"  {label}:\t{d['count']} ({states}): {ids}\n")


_FATES = (
    ("terminated", "terminated"),
    ("finished-first", "had finished before its terminate (refused by the server)"),
    ("terminate-failed", "terminate failed"),
    ("left-running", "left running (--on-timeout leave)"),
)


def _write_server(server: dict, w, api: dict | None = None) -> None:
    if not server:
        return
    if "error" in server:
        w(f"\nServer side: no metrics ({server['error']})\n")
        return
    ops = server.get("operations") or {}
    if not ops:
        w("\nServer side: /metrics has no per-operation series kfp-bench recognises\n")
        return
    w(
        "\nServer side, from /metrics deltas (milliseconds; p50 and p99: the bucket of the "
        "server's histogram that holds them; network = client mean - server mean):\n"
    )
    w(
        f"  {'operation':<24}{'requests':>9}{'errors':>7}{'mean':>10}{'p50':>14}{'p99':>14}"
        f"{'client':>10}{'network':>10}{'share':>8}\n"
    )

    def f(v, width=10):
        return f"{fixed(v, 2):>{width}}" if isinstance(v, int | float) else f"{'-':>{width}}"

    def bucket(v: dict, q: float) -> str:
        """The server's percentile ``q`` as what its histogram can tell: the bucket."""
        found = percentiles([(float(le), c) for le, c in v.get("buckets") or []], (q,)).get(q)
        if found is None:  # no histogram saved: the figure as the summary has it
            return f(v.get(f"p{q * 100:g}_ms"), 14)
        return f"{sig(found['lower'] * 1e3)}–{sig(found['upper'] * 1e3)}".rjust(14)

    for op, v in ops.items():
        share = v.get("network_share")
        w(
            f"  {op:<24}{v.get('requests', 0):>9}{v.get('errors', 0):>7}{f(v.get('mean_ms'))}"
            f"{bucket(v, 0.5)}{bucket(v, 0.99)}{f(v.get('client_mean_ms'))}"
            f"{f(v.get('network_ms'))}"
            + (f"{pct(share):>8}" if isinstance(share, float) else f"{'-':>8}")
            + "\n"
        )
    rows = server_compare({"server": server, "api": api or {}})
    if rows:
        w(f"\n  {SERVER_LEGEND}\n")
        write_table(w, COMPARE_HEAD, rows)


SERVER_LEGEND = (
    "Percentiles per operation, the server's from its /metrics histogram (interpolated as "
    "Prometheus's histogram_quantile does; its bucket is its resolution) beside the client's; "
    "client − server is the time outside the server's handler (network, ingress, the gateway, "
    "retries' waits); 'within its bucket': below what the histogram can tell."
)


def server_compare(doc: dict) -> list[list[str]]:
    """Per operation with a server histogram and percentile (p50, p90, p99): the server's
    value and bucket, the client's, and the difference (``server_text.compare_rows``);
    [] when the summary's server view has no buckets."""
    ops = (doc.get("server") or {}).get("operations") or {}
    if not any(v.get("buckets") for v in ops.values()):
        return []
    server, client = ServerSeries(), {}
    for op, v in ops.items():
        if v.get("buckets"):
            buckets = [(float(le), c) for le, c in v["buckets"]]
            server.add_histogram("/metrics", "its /metrics histogram", op, buckets)
            c = (doc.get("api") or {}).get(op) or {}
            client[op] = {"count": c.get("count", 0), **{
                p: c[f"{p}_ms"] for p in ("p50", "p90", "p99") if f"{p}_ms" in c}}  # fmt: skip
    return compare_rows(server, client)


def server_section(doc: dict) -> Section | None:
    """The runs benchmark's server view, for the HTML and summary.md; None without a server
    histogram."""
    rows = server_compare(doc)
    if not rows:
        return None
    server = doc["server"]
    items = [
        f"Two scrapes of {server.get('url', '/metrics')}, {server.get('interval_s', 0):g} s "
        "apart, around the benchmark: every call of it counted, and any other client's."
    ]
    title = "KFP API server beside the client"
    return Section(title, SERVER_LEGEND, tables=[(COMPARE_HEAD, rows)], items=items)


def _write_errors(api: dict, w) -> None:
    lines = [
        f"  [{n}]\t{op}: {text}"
        for op, d in api.items()
        for text, n in (d.get("error_texts") or {}).items()
    ]
    if lines:
        w("\nError distribution:\n" + "\n".join(lines) + "\n")


_FLAG_NOTES = {
    "interrupted": "interrupted: figures cover what was measured before the stop",
    "timeout": "the timeout was reached before every run finished",
    "poller-killed": "a poller was killed before it finished; its records up to the kill are in",
}


def _write_notes(doc: dict, w) -> None:
    flags = doc.get("flags") or []
    notes = [note for flag, note in _FLAG_NOTES.items() if flag in flags]
    if "runs-cap-raised" in flags:
        cap = (doc.get("options") or {}).get("max_runs", "?")
        notes.append(f"the safety cap on runs was raised to {cap} (--max-runs)")
    cleanup = doc.get("cleanup") or {}
    if cleanup.get("left"):
        notes.append(
            f"left in place: {', '.join(cleanup['left'])}; remove later with "
            f"kfp-bench cleanup --host {doc['host']} --benchmark-id {doc['benchmark_id']}"
        )
    elif cleanup.get("kept"):
        notes.append(f"kept (--keep): kfp-bench cleanup --benchmark-id {doc['benchmark_id']}")
    if notes:
        w("\nNotes:\n" + "".join(f"  {n}\n" for n in notes))


def _write_fill(fill: dict, w) -> None:
    """The probe's p50/p95 per call kind (a line each) at each K (a column each)."""
    rows = fill.get("rows") or []
    if not rows:
        return
    w(
        f"\nFull database ({fill.get('benchmark_id')}): {fill.get('filled', 0)} runs filled "
        f"({fill.get('mode')}), {sig(fill.get('fill_rate_per_s', 0))} runs/s.\n  The UI's calls, "
        f"p50/p95 in milliseconds of {fill.get('repeats')} repeats, at K runs on the server:\n"
    )
    ks = sorted({r["k"] for r in rows})

    def line(label: str, cells: dict, of) -> str:
        out = f"  {label:<26}"
        for k in ks:
            r = cells.get((of, k))
            out += f"{fixed(r['p50_ms'], 1):>7}/{fixed(r['p95_ms'], 1):<6}" if r else f"{'-':>14}"
        return out.rstrip()

    cells = {(r["kind"], r["k"]): r for r in rows}
    w(f"  {'K':<26}" + "".join(f"{k:>14}" for k in ks) + "\n")
    for kind in sorted({r["kind"] for r in rows}):
        errors = sum(cells[(kind, k)]["errors"] for k in ks if (kind, k) in cells)
        w(line(kind, cells, kind) + (f"  ({errors} failed)" if errors else "") + "\n")
    # the server's own figures, from its /metrics histogram (every call of the probe counted)
    server = {(r["operation"], r["k"]): r for r in fill.get("server") or () if "p50_ms" in r}
    for op in sorted({op for op, _ in server}):
        w(line("server " + op, server, op) + "\n")
    _write_fill_server({"fill": fill}, w)
    cleanup = fill.get("cleanup") or {}
    if "remaining" in cleanup:
        w(
            f"  Fill swept: {cleanup.get('runs_deleted', 0)} runs deleted, "
            f"{cleanup['remaining']} of its runs remain\n"
        )


def _write_fill_server(doc: dict, w) -> None:
    """The server's own figures at each K, from the metrics profile read over the fill
    (``report.fill.server_table``): a column per K, "not exposed" where an entry gave none."""
    t = fill_report.server_table(doc)
    if t is None:
        return
    prof = doc["fill"]["server_profile"]
    w(
        f"  The server's own figures at each K ({prof.get('source')} from "
        f"{prof.get('prometheus')}; a percentile's bucket, its resolution, in brackets):\n"
    )
    head, body = t
    first = max(len(r[0]) for r in [head, *body]) + 2
    width = max(14, *(len(c) + 2 for r in body for c in r[1:]))
    for r in [head, *body]:
        w(f"  {r[0]:<{first}}" + "".join(f"{c:>{width}}" for c in r[1:]) + "\n")
    for n in fill_report.server_notes(doc):
        w(f"  {n}\n")

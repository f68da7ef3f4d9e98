"""report.html: one self-contained page of tables and charts.

The page carries everything inline: CSS in a ``<style>`` element, each chart a base64 PNG in an
``<img>``'s data: URL. It has no script, no font or stylesheet link, no external URL, so it works
offline, from a file, and inside the KFP UI's sandboxed iframe (which runs no scripts and may
refuse other origins). The layout is one column at most 840 px wide; the charts are 800 px wide,
the width of the KFP UI's viewer, and shrink with the window.

A function of finished tables, figures and metrics; every text is escaped.
"""

from __future__ import annotations

import base64
from html import escape

from kfp_bench.figures import num, pct
from kfp_bench.gates import lines
from kfp_bench.report.fmt import Section
from kfp_bench.report.metrics import RUN_RES, resolution
from kfp_bench.report.plots import Figure

CSS = """
body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;color:#212121;
 background:#fff;margin:0;padding:16px}
main{max-width:840px;margin:0 auto}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}p.sub{color:#616161;margin:0 0 12px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}th{background:#f5f5f5}
.wrap{overflow-x:auto}
figure{margin:12px 0 20px}figure img{display:block;width:100%;max-width:800px;height:auto}
figcaption{color:#616161;font-size:12px;margin-top:4px}
.verdict{padding:10px 14px;border-radius:6px;margin:12px 0;font-weight:600}
.ok{background:#e8f5e9;border:1px solid #2e7d32;color:#1b5e20}
.bad{background:#ffebee;border:2px solid #c62828;color:#b71c1c}
.none{background:#fff8e1;border:1px solid #f9a825;color:#6d4c00}
.cards{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.card{border:1px solid #e0e0e0;border-radius:6px;padding:6px 10px;min-width:120px}
.card b{display:block;font-size:18px}.card span{color:#616161;font-size:12px}
tr.reg td{background:#ffebee;font-weight:600}
"""

#: The headline cards: metric, label, unit.
CARDS = (
    ("runs_succeeded", "runs succeeded", ""),
    ("runs_failed", "runs failed", ""),
    ("run_duration_p50_s", "run duration p50", "s"),
    ("run_duration_p99_s", "run duration p99", "s"),
    ("api_create_run_p99_ms", "create_run p99", "ms"),
    ("load_rps", "load throughput", "req/s"),
    ("load_p99_ms", "load p99", "ms"),
    ("load_success_ratio", "load success", ""),
)


def table(head: list[str], body: list[list[str]], classes: list[str] | None = None) -> str:
    """An HTML table of text cells (escaped), ``classes`` a CSS class per body row."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    trs = []
    for i, r in enumerate(body):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        trs.append(f"<tr{cls}>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>")
    return f'<div class="wrap"><table><tr>{th}</tr>{"".join(trs)}</table></div>\n'


def figure(f: Figure) -> str:
    """A chart inline: its PNG as a data URI, with its caption."""
    data = base64.b64encode(f.png).decode("ascii")
    return (
        f'<figure id="fig-{escape(f.name)}"><img alt="{escape(f.title)}" width="800" '
        f'src="data:image/png;base64,{data}"><figcaption>{escape(f.caption)}</figcaption>'
        "</figure>\n"
    )


def gates_html(verdicts) -> str:
    """The gates' verdicts, at the top of a page (``kfp_bench.gates.lines``)."""
    head, *rest = lines(verdicts) or [""]
    if not head:
        return ""
    items = "".join(f"<li>{escape(r.strip())}</li>" for r in rest)
    cls = "bad" if any(v.broken for v in verdicts) else "ok"
    return f'<div class="verdict {cls}" id="gates">{escape(head)}<ul>{items}</ul></div>\n'


def _fig(figs: dict, name: str) -> str:
    return figure(figs[name]) if name in figs else ""


def _failures(failed) -> str:
    """The failure flags' lines, each a line or (line, [details])."""
    if not failed:
        return ""
    items = []
    for f in failed:
        line, details = f if isinstance(f, tuple) else (f, ())
        sub = "".join(f"<li>{escape(d)}</li>" for d in details)
        items.append(f"<li>{escape(line)}" + (f"<ul>{sub}</ul>" if sub else "") + "</li>")
    return (
        '<div class="verdict bad" id="failures">FAILED: the benchmark did not do all that was '
        f"asked; what is below is partial.<ul>{''.join(items)}</ul></div>\n"
    )


def verdict(history) -> str:
    """The history's regression verdict, a box at the top of the page; "" without one."""
    if history is None or not history.baseline:
        return ""
    if history.verdict is None:
        return f'<div class="verdict none">No verdict: {escape(history.refused)}</div>\n'
    v = history.verdict
    cls = "bad" if v.regression else "ok"
    return f'<div class="verdict {cls}" id="verdict">{escape(v.headline())}</div>\n'


def cards(metrics: dict, which=CARDS) -> str:
    """The headline cards: (metric key, label, unit) of ``which``, those ``metrics`` has."""
    cards = []
    for key, label, unit in which:
        if key in metrics:
            v = metrics[key]
            text = (
                pct(v) if key.endswith("_ratio") else num(v, resolution(key, metrics.get(RUN_RES)))
            )
            cards.append(
                f'<div class="card"><b>{escape(text)} {escape(unit)}</b>'
                f"<span>{escape(label)}</span></div>"
            )
    return f'<div class="cards">{"".join(cards)}</div>\n' if cards else ""


def section(sec: Section, figs: dict) -> str:
    """A ``fmt.Section``: its charts from ``figs`` (by name), tables and list."""
    out = [f"<h{sec.level}>{escape(sec.title)}</h{sec.level}>\n"]
    if sec.intro:
        out.append(f'<p class="sub">{escape(sec.intro)}</p>\n')
    out += [_fig(figs, n) for n in sec.figures]
    for t in sec.tables:
        out.append(f"<p>{escape(t)}</p>\n" if isinstance(t, str) else table(*t))
    if sec.items:
        out.append("<ul>" + "".join(f"<li>{escape(i)}</li>" for i in sec.items) + "</ul>\n")
    return "".join(out)


def page(
    title: str, head: str, parts: list, figures, *, verdicts=(), failed=(), top: str = ""
) -> str:
    """A report.html of ``parts`` under ``title``: the gates' ``verdicts``, the ``head`` line,
    the ``failed`` flags' lines (``_failures``), ``top`` (the cards), then the sections
    (``fmt.Section``s, or HTML made already; None: a section not measured)."""
    figs = {f.name: f for f in figures}
    out = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>\n",
        f"<h1>{escape(title)}</h1>",
        gates_html(verdicts),
        f'<p class="sub">{escape(head)}</p>\n',
        _failures(failed),
        top,
        *(p if isinstance(p, str) else section(p, figs) for p in parts if p is not None),
        "</main></body></html>\n",
    ]
    return "".join(out)

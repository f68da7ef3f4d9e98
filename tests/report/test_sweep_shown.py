"""How the reports show a sweep: the predict sweep's table (times of day, percentages, short
headers, the knee in its rate) and the LLM sweep's chart, whose x axis says what was stepped."""

from __future__ import annotations

import io

import pytest

from kfp_bench.report import fmt, html, llm_plots, markdown, tables

#: 2026-12-02 04:14:48 UTC and two steps after it, as run_sweep writes them (epoch seconds).
T0 = 1796184888.6197658


def _rows() -> list[dict]:
    return [
        dict(rate=r, rps=r * 0.99, requests=int(2 * r), mean_ms=3.2, p50_ms=2.8, p95_ms=7.1,
             p99_ms=p99, success_ratio=ok, no_response=0, started_at=T0 + 2.2 * i,
             duration_s=2.0, client_busiest=0.006 * (i + 1), knee=i == 2)
        for i, (r, p99, ok) in enumerate([(5.0, 7.1, 1.0), (20.0, 8.3, 1.0), (50.0, 40.5, 0.987)])
    ]  # fmt: skip


def test_the_sweep_table_shows_its_starts_as_times_and_fits_in_few_characters():
    shown = tables.sweep_shown(tables.sweep_frame({"sweep": _rows()}))
    head, body = fmt.rows(shown)
    page = html.table(head, body)
    assert "04:14:48" in page and "04:14:53" in page
    assert "1,796" not in page and "1796" not in page
    assert [r[0] for r in body] == ["5", "20", "50 (knee)"]
    assert head == ["rate", "rps", "mean ms", "p50 ms", "p95 ms", "p99 ms", "success",
                    "no resp.", "client CPU", "started UTC"]  # fmt: skip
    assert body[2][6] == "98.7%" and body[0][6] == "100%" and body[0][8] == "0.6%"
    # every row as wide as the 840-pixel column holds at 13 px (about 7 px a character, 16 of
    # padding a cell): the header row is the widest
    assert sum(max(len(c) for c in col) * 7 + 16 for col in zip(head, *body, strict=True)) < 840


def test_the_markdown_report_shows_the_same_sweep_table():
    t = tables.sweep_frame({"sweep": _rows()})
    out = io.StringIO()
    markdown.table(out.write, *fmt.rows(tables.sweep_shown(t)))
    assert "| 50 (knee) |" in out.getvalue() and "04:14:53" in out.getvalue()


@pytest.mark.parametrize(
    ("by", "axis"),
    [("rate", "offered rate (requests/s)"), ("concurrency", "concurrent streams")],
)
def test_the_goodput_chart_names_its_x_axis(monkeypatch, by, axis):
    labels = []
    real = llm_plots.to_png
    monkeypatch.setattr(llm_plots, "to_png", lambda fig: labels.append(fig.axes[0].get_xlabel())
                        or real(fig))  # fmt: skip
    rows = [
        dict(level=lv, rps=lv, goodput_rps=lv * 0.9, ttft_p99_ms=200 + lv, knee=False)
        for lv in (1.0, 2.0, 4.0)
    ]
    fig = llm_plots.against_load(rows, by)
    assert labels == [axis]
    assert axis in fig.caption

"""The one formatter of figures (``kfp_bench.figures``): each style as the reports print it, and
never more decimals than the figure's source has."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from kfp_bench.figures import (
    DASH,
    HDR_MS,
    HDR_S,
    clock,
    count,
    fixed,
    num,
    pct,
    places,
    sig,
    span,
    when,
)

#: 2026-09-21 14:13:20 UTC
T = 1_790_000_000.0


@pytest.mark.parametrize(
    ("res", "decimals"),
    [(1.0, 0), (10.0, 0), (0.5, 1), (0.1, 1), (0.01, 2), (HDR_MS, 3), (HDR_S, 6), (1e-9, 9)],
)
def test_the_decimals_a_resolution_carries(res, decimals):
    assert places(res) == decimals


@pytest.mark.parametrize("res", [None, 0, -1.0, math.inf, math.nan])
def test_an_unknown_resolution_does_not_limit(res):
    assert places(res) is None
    assert num(2.66412, res) == "2.664" and fixed(2.66412, 3, res) == "2.664"


@pytest.mark.parametrize(
    ("v", "text"),
    [
        (2.66412, "2.664"),
        (0.57243, "0.5724"),
        (12.8, "12.80"),
        (332.8, "332.8"),
        (1234.0, "1,234"),
        (1234.5, "1,234"),  # half to even, as Python rounds
        (0.0, "0"),
        (600, "600"),
        (np.int64(12345), "12,345"),
        (np.float64(0.5), "0.5000"),
        (None, DASH),
        (math.nan, DASH),
        (math.inf, "∞"),
        (-math.inf, "-∞"),
        (True, "yes"),
        (["workers-lost"], "workers-lost"),
        ([], DASH),
    ],
)
def test_num_without_a_resolution_prints_about_four_significant_digits(v, text):
    assert num(v) == text


def test_num_prints_a_whole_second_figure_whole():
    # the runs report's headline cards: run durations the KFP server gave in whole seconds
    assert num(8.0, 1.0) == "8" and num(10.0, 1.0) == "10" and num(8.0) == "8.000"
    assert num(1234.0, 1.0) == "1,234" and num(0.0, 1.0) == "0"
    # a mean over runs: two decimals finer than its samples
    assert num(8.46667, 0.01) == "8.47"


def test_num_prints_an_hdr_percentile_to_the_microsecond():
    assert num(0.512, HDR_MS) == "0.512" and num(0.512) == "0.5120"
    assert num(0.042, HDR_MS) == "0.042"
    assert num(15.0, HDR_MS) == "15.00"  # the microseconds are there: the digits stay


def test_fixed_keeps_a_layouts_decimals_unless_the_source_has_fewer():
    assert fixed(2.1, 4) == "2.1000"  # hey's %4.4f
    assert fixed(0.123456, 4, HDR_S) == "0.1235"
    assert fixed(3.0, 3, 1.0) == "3"
    assert fixed(2.6, 3, 0.01) == "2.60"
    assert fixed(2.6, 3, 0.1) == "2.6"
    assert fixed(None, 2) == DASH and fixed(math.nan, 2) == DASH


def test_sig_is_percent_g_rounded_to_the_resolution():
    assert sig(8.0, 3) == "8" and sig(73.2) == "73.2" and sig(0.000123456) == "0.000123456"
    assert sig(12345.0, 4) == "1.234e+04"  # as %g writes it
    assert sig(0.51249, 4) == "0.5125" and sig(0.51249, 4, HDR_MS) == "0.512"
    assert sig(None) == DASH


def test_percentages_counts_spans_and_times():
    assert pct(0.988) == "98.8%" and pct(1.0, 0) == "100%" and pct(0.0123, 2) == "1.23%"
    assert pct(0.05, 0, sign=True) == "+5%" and pct(-0.125, sign=True) == "-12.5%"
    assert pct(None) == DASH and pct(math.nan) == DASH
    assert count(1234) == "1,234" and count(1234.6) == "1,235" and count(None) == DASH
    assert span(0.96, 2.01) == "0.9–2.1" and span(1.0, 3.0) == "1–3"
    assert when(T) == "2026-09-21 14:13 UTC" and when(0) == DASH
    assert clock(T + 42.9) == "14:14:02" and clock(math.nan) == DASH


@pytest.mark.parametrize("res", [1.0, 0.5, 0.01, HDR_MS, HDR_S])
def test_no_style_prints_more_decimals_than_the_resolution_carries(res):
    values = [0.0004, 0.0123, 0.4, 0.96, 1.5, 8.0, 10.0, 12.345678, 99.99, 432.1, 5678.9]
    for v in values:
        for text in (num(v, res), fixed(v, 4, res), fixed(v, 1, res), sig(v, 6, res)):
            shown = re.search(r"\.(\d+)", text)
            decimals = len(shown.group(1)) if shown else 0
            assert decimals <= places(res), (v, res, text)

"""How every report, summary and command prints a measured figure: never with more digits than
its source has.

Each function takes the figure and ``res``, the resolution of its source in the figure's unit:
1 for a run time from a KFP server's whole-second timestamps, ``HDR_MS`` for a percentile of an
HDR histogram (integer microseconds) in milliseconds, None where the source is finer than any
layout prints (a monotonic clock, a count over a time, a mean). The style says how many digits a
figure may show; the resolution caps its decimals. An input echoed back (a rate asked for,
alpha, an interval) keeps Python's ``:g``: it has the digits its user gave. Plain Python, so
that every layer and every step's pod can use it.
"""

from __future__ import annotations

import math
import time
from numbers import Integral

DASH = "–"
#: An HDR histogram's resolution (``kfp_bench.stats.hdr`` records integer microseconds), in
#: milliseconds and in seconds.
HDR_MS, HDR_S = 1e-3, 1e-6


def places(res: float | None) -> int | None:
    """The decimals a figure of resolution ``res`` carries: 0 for whole units, 3 for
    thousandths; None when unknown (no limit)."""
    if not res or res <= 0 or not math.isfinite(res):
        return None
    return max(0, math.ceil(-math.log10(res) - 1e-9))


def _capped(decimals: int, res: float | None) -> int:
    p = places(res)
    return decimals if p is None else min(decimals, p)


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def num(v, res: float | None = None) -> str:
    """The reports' style: about four significant digits, never scientific notation, no more
    decimals than ``res`` carries; integers and whole figures of 1,000 and up with thousands
    separated; a dash for NaN or None."""
    if v is None:
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list | tuple):  # a sweep step's failure flags
        return ", ".join(map(str, v)) or DASH
    if isinstance(v, Integral):
        return f"{int(v):,}"
    v = float(v)
    if not math.isfinite(v):
        return DASH if math.isnan(v) else ("∞" if v > 0 else "-∞")
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) >= 1000:
        return f"{int(v):,}"
    decimals = min(6, max(0, 3 - math.floor(math.log10(abs(v)))))
    return f"{v:,.{_capped(decimals, res)}f}"


def fixed(v, decimals: int, res: float | None = None) -> str:
    """A layout's fixed decimals (hey's ``%4.4f``, a text table's column), fewer where ``res``
    carries fewer; a dash for NaN or None."""
    return DASH if _missing(v) else f"{v:.{_capped(decimals, res)}f}"


def sig(v, digits: int = 6, res: float | None = None) -> str:
    """``%g``'s style: ``digits`` significant digits, trailing zeros dropped, rounded first to
    the decimals ``res`` carries; a dash for NaN or None."""
    if _missing(v):
        return DASH
    p = places(res)
    return f"{v if p is None else round(v, p):.{digits}g}"


def pct(v, decimals: int = 1, sign: bool = False) -> str:
    """A ratio as a percentage (``sign``: with + or -); a dash for NaN, None or infinity."""
    if v is None or not math.isfinite(v):
        return DASH
    return f"{v:{'+' if sign else ''}.{decimals}%}"


def count(n) -> str:
    """A count, thousands separated (a count Prometheus extrapolated rounded to a whole one)."""
    return DASH if _missing(n) else f"{n:,.0f}"


def span(lo: float, hi: float) -> str:
    """The bounds ``lo–hi`` rounded outwards to 0.1, whole numbers without a decimal."""
    lo, hi = math.floor(lo * 10 + 1e-9) / 10, math.ceil(hi * 10 - 1e-9) / 10
    return f"{lo:g}–{hi:g}"


def when(epoch: float) -> str:
    """The UTC time of an epoch second to the minute, e.g. 2026-11-30 07:17 UTC."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch)) if epoch else DASH


def clock(epoch: float) -> str:
    """The UTC time of day of an epoch second, e.g. 07:17:42; a dash for NaN or None."""
    return DASH if _missing(epoch) else time.strftime("%H:%M:%S", time.gmtime(epoch))

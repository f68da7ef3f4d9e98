"""HDR latency histograms in integer microseconds, recorded in bulk and mergeable.

A thin layer over the ``hdrhistogram`` package. Values are recorded in batches: a request loop that
runs at tens of thousands of requests a second cannot afford a Python call of ``record_value`` per
sample (BENCHMARKS.md, "Figures out of the code"), so ``record_many`` computes the counts-array
index of a whole numpy array of values with the package's own arithmetic and adds a ``bincount``
into the counts. A test checks it against ``record_value``. Samples outside the trackable range are
counted in ``out_of_range``, never dropped silently.
"""

from __future__ import annotations

import numpy as np
from hdrh.histogram import HdrHistogram

from kfp_bench.errors import ResultsError

#: One hour in microseconds: the longest latency a histogram tracks.
HIGHEST_US = 3_600_000_000


#: Fewer values than the buckets / this: each is added in place rather than by a bincount.
SPARSE_RATIO = 16


class Histogram:
    """A latency histogram (µs) with bulk recording, merge, and a compact text encoding.

    Args:
        digits: significant decimal digits kept (3 for run totals, 2 for per-second series).
    """

    __slots__ = ("digits", "out_of_range", "_h", "_view")

    def __init__(self, digits: int = 3, _h: HdrHistogram | None = None):
        self.digits = digits
        self._h = _h or HdrHistogram(1, HIGHEST_US, digits)
        self._view = np.frombuffer(self._h.counts, dtype=np.uint64)
        self.out_of_range = 0

    # -- recording ---------------------------------------------------------------------------
    def record(self, value_us: int) -> None:
        """Record one value; a value out of range is counted, not recorded."""
        if not self._h.record_value(int(value_us)):
            self.out_of_range += 1

    def record_many(self, values_us: np.ndarray) -> None:
        """Record an array of values (µs, any numeric dtype; rounded down to integers)."""
        v = np.asarray(values_us, dtype=np.int64)
        if v.size == 0:
            return
        h = self._h
        ok = (v >= 0) & (v <= HIGHEST_US)
        bad = int(v.size - np.count_nonzero(ok))
        if bad:
            self.out_of_range += bad
            v = v[ok]
            if v.size == 0:
                return
        # The package's index arithmetic, vectorized: bucket from the bit length of
        # (value | sub_bucket_mask), sub-bucket from the shifted value.
        bits = np.frexp((v | h.sub_bucket_mask).astype(np.float64))[1].astype(np.int64)
        bucket = bits - h.unit_magnitude - (h.sub_bucket_half_count_magnitude + 1)
        sub = v >> (bucket + h.unit_magnitude)
        idx = ((bucket + 1) << h.sub_bucket_half_count_magnitude) + sub - h.sub_bucket_half_count
        if idx.size * SPARSE_RATIO < h.counts_len:
            # A few values (a flush of a slow stream): add them where they fall. A bincount
            # over every bucket costs the same for one value as for thousands (~0.2 ms each,
            # on the request loop, where it delays the next send).
            np.add.at(self._view, idx, np.uint64(1))
        else:
            self._view += np.bincount(idx, minlength=h.counts_len).astype(np.uint64)
        h.total_count += int(v.size)
        h.min_value = min(h.min_value, int(v.min()))
        h.max_value = max(h.max_value, int(v.max()))

    def merge(self, other: Histogram) -> None:
        """Add ``other``'s counts into this histogram."""
        if other.count:
            self._h.add(other._h)
        self.out_of_range += other.out_of_range

    # -- reading -----------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return self._h.get_total_count()

    @property
    def min_us(self) -> int:
        return self._h.get_min_value() if self.count else 0

    @property
    def max_us(self) -> int:
        return self._h.get_max_value() if self.count else 0

    @property
    def mean_us(self) -> float:
        """The mean, each value at the middle of its bucket: the package's ``get_mean_value``,
        summed over the buckets that hold values only. The package steps through every bucket
        of the range in Python (over 23,000 at 3 digits), which took most of an LLM report's
        CPU (a mean per latency metric); a test checks the two agree."""
        if not self.count:
            return 0.0
        h, total = self._h, 0
        for i in np.flatnonzero(self._view):
            top = h.get_highest_equivalent_value(h.get_value_from_index(int(i)))
            low = h.get_lowest_equivalent_value(top)
            total += int(self._view[i]) * (low + ((top - low + 1) >> 1))
        return float(total) / h.total_count

    def percentiles_us(self, pcts) -> dict[float, int]:
        """Values at the given percentiles (0-100), in µs; all zero for an empty histogram.

        The package's ``get_percentile_to_value_dict``, each percentile's bucket found in the
        running count by a binary search instead of its loop in Python over every bucket up to
        the highest percentile's; a test checks the two agree."""
        if not self.count:
            return {float(p): 0 for p in pcts}
        h = self._h
        running = np.cumsum(self._view)
        out: dict[float, int] = {}
        for pct in sorted({float(p) for p in pcts}):
            if pct > 100:
                break
            i = int(np.searchsorted(running, h.get_target_count_at_percentile(pct)))
            if i >= running.size:  # a count the buckets never reach: the package leaves it out
                break
            value = h.get_value_from_index(i)
            edge = h.get_highest_equivalent_value if pct else h.get_lowest_equivalent_value
            out[pct] = int(edge(value))
        return out

    def summary_ms(self, pcts) -> dict:
        """The values at ``pcts`` (``p50``, ``p99_9`` ...), then min, max and mean, in ms."""
        p = self.percentiles_us(pcts)
        out = {f"p{k:g}".replace(".", "_"): v / 1000 for k, v in p.items()}
        out.update(min=self.min_us / 1000, max=self.max_us / 1000, mean=self.mean_us / 1000)
        return out

    def nonzero(self, middle: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """The non-empty buckets, in order: their values (µs; each bucket's middle value, or
        with ``middle`` False its lowest) and their counts."""
        idx = np.nonzero(self._view)[0]
        value = self._h.get_value_from_index
        if middle:
            values = [self._h._hdr_median_equiv_value(value(int(i))) for i in idx]
        else:
            values = [value(int(i)) for i in idx]
        return np.asarray(values, dtype=np.float64), self._view[idx].astype(np.int64)

    def buckets(self, lo_us: int, hi_us: int, n: int) -> list[tuple[float, int]]:
        """``n + 1`` marks evenly spaced from lo to hi with the count of values up to each mark
        (and above the previous one), as hey's response time histogram lays them out."""
        marks = [lo_us + (hi_us - lo_us) * i / n for i in range(n)] + [hi_us]
        values, counts = self.nonzero(middle=False)
        if not values.size:
            return [(m, 0) for m in marks]
        slot = np.searchsorted(np.array(marks), values, side="left").clip(0, n)
        out = np.bincount(slot, weights=counts, minlength=n + 1)
        return [(m, int(c)) for m, c in zip(marks, out, strict=True)]

    # -- persistence -------------------------------------------------------------------------
    def encode(self) -> str:
        """The HdrHistogram V2 compressed base64 text of this histogram."""
        return self._h.encode().decode("ascii")

    @classmethod
    def decode(cls, text: str, out_of_range: int = 0) -> Histogram:
        try:
            h = HdrHistogram.decode(text.encode("ascii"))
        except Exception as exc:  # the codec raises several unrelated types
            raise ResultsError(f"cannot decode a saved latency histogram: {exc}") from None
        hist = cls(h.significant_figures, _h=h)
        hist.out_of_range = out_of_range
        return hist

"""The bulk HDR recorder against the hdrhistogram package's own record_value."""

import numpy as np
import pytest

from kfp_bench.errors import ResultsError
from kfp_bench.stats.hdr import HIGHEST_US, Histogram


@pytest.mark.parametrize("digits", [2, 3])
@pytest.mark.parametrize("n", [5000, 3])  # a bincount over every bucket, or a few added in place
def test_record_many_matches_record_value(digits, n):
    rng = np.random.default_rng(7)
    values = np.concatenate(
        [
            rng.integers(0, 3000, n),  # exact region
            rng.lognormal(10, 2, n).astype(np.int64),  # spread over many buckets
            [0, 1, 2047, 2048, 2049, HIGHEST_US, 2048],
        ]
    )
    bulk, one = Histogram(digits), Histogram(digits)
    bulk.record_many(values)
    for v in values:
        one.record(int(v))
    assert bulk.count == one.count == len(values)
    assert np.array_equal(bulk._view, one._view)
    assert (bulk.min_us, bulk.max_us) == (one.min_us, one.max_us)
    assert bulk.percentiles_us([50, 99, 99.9]) == one.percentiles_us([50, 99, 99.9])


@pytest.mark.parametrize("digits", [2, 3])
def test_the_mean_is_the_packages_mean(digits):
    """Over the recorded buckets only, as the package's iterator over all of them sums it."""
    rng = np.random.default_rng(11)
    h = Histogram(digits)
    h.record_many(rng.lognormal(9, 2.5, 20_000).astype(np.int64))
    h.record_many(np.array([0, 1, 2047, 2048, 4095, 4096, HIGHEST_US]))
    merged = Histogram.decode(h.encode())
    merged.merge(h)
    for hist in (h, merged, Histogram(digits)):
        assert hist.mean_us == (hist._h.get_mean_value() if hist.count else 0.0)


@pytest.mark.parametrize("digits", [2, 3])
def test_the_percentiles_are_the_packages(digits):
    """At the edges (0, 100, out of range), the tails and repeated or unordered ones."""
    rng = np.random.default_rng(13)
    pcts = [0, 0.0, 1, 25, 50, 50.0, 90, 99, 99.9, 99.99, 100, 100.5, 12.5, -1]
    one = Histogram(digits)
    one.record(1234)
    for values in (rng.lognormal(9, 2.5, 20_000), [0, 0, 5], [HIGHEST_US] * 3):
        h = Histogram(digits)
        h.record_many(np.asarray(values).astype(np.int64))
        decoded = Histogram.decode(h.encode())
        for hist in (h, decoded, one):
            want = hist._h.get_percentile_to_value_dict(pcts)
            assert hist.percentiles_us(pcts) == {float(k): int(v) for k, v in want.items()}


def test_out_of_range_is_counted_not_dropped():
    h = Histogram()
    h.record_many(np.array([-5, 10, HIGHEST_US * 2]))
    h.record(HIGHEST_US * 3)
    assert h.count == 1
    assert h.out_of_range == 3


def test_merge_and_encode_roundtrip():
    a, b = Histogram(), Histogram()
    a.record_many(np.arange(1, 1001))
    b.record_many(np.arange(1001, 2001))
    b.out_of_range = 2
    a.merge(b)
    assert a.count == 2000 and a.out_of_range == 2
    c = Histogram.decode(a.encode(), a.out_of_range)
    assert c.count == 2000 and c.out_of_range == 2
    assert c.percentiles_us([50]) == a.percentiles_us([50])
    assert 995 <= c.percentiles_us([50])[50.0] <= 1005


def test_decode_garbage_names_the_problem():
    with pytest.raises(ResultsError, match="histogram"):
        Histogram.decode("not a histogram")


def test_buckets_cover_every_value_as_hey_lays_them_out():
    h = Histogram()
    h.record_many(np.array([100, 200, 300, 1000]))
    buckets = h.buckets(h.min_us, h.max_us, 10)
    assert len(buckets) == 11
    assert sum(c for _, c in buckets) == 4
    assert buckets[0] == (100, 1) and buckets[-1][1] == 1

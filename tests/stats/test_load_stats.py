"""LoadStats: record-by-record and batch adds agree, merges add up, and results round-trip."""

import json

import pytest

from kfp_bench.errors import ResultsError
from kfp_bench.load.cgroup import CgroupCpu
from kfp_bench.load.cpu import client_cpu
from kfp_bench.records import Result
from kfp_bench.stats.load import CPU_BOUND, LoadStats, cpu_figures
from tests.conftest import LATENCY_KEYS, LOAD_RESULT_KEYS


def _results(n, start=0.0, status=200, error=""):
    return [
        Result(
            seq=i,
            intended=start + i * 0.01,
            sent=start + i * 0.01 + (0.005 if i % 10 == 0 else 0),
            latency=0.002 + (i % 7) * 0.001,
            status=status,
            bytes_in=10,
            bytes_out=50,
            error=error,
            connect=0.001 if i == 0 else 0.0,
            write=1e-5,
            wait=0.0015,
            read=1e-4,
        )
        for i in range(n)
    ]


def _stats(results, corrected=False, started_at=1_700_000_000.0):
    s = LoadStats(corrected=corrected, started_at=started_at)
    for r in results:
        s.add(r)
    return s.close(max(r.sent + r.latency for r in results))


def test_counts_statuses_and_errors():
    s = _stats(_results(90) + _results(10, start=1, status=503) + _results(5, 2, 0, "read: reset"))
    d = s.to_dict()
    assert d["requests"] == 105
    assert d["status_codes"] == {"200": 90, "503": 10}
    assert d["errors"] == {"read: reset": 5}
    assert d["success_ratio"] == pytest.approx(90 / 105)
    assert d["corrected"] is False
    assert s.bytes_out == 100 * 50 + 5 * 50


def test_corrected_latency_counts_the_wait_before_sending():
    rs = _results(100)
    s = _stats(rs, corrected=True)
    worst_corrected = max(r.corrected_latency for r in rs)
    assert s.latency.max_us == pytest.approx(worst_corrected * 1e6, rel=1e-3)
    assert s.uncorrected.max_us == pytest.approx(max(r.latency for r in rs) * 1e6, rel=1e-3)
    assert s.latency.max_us > s.uncorrected.max_us


def test_merge_equals_the_whole():
    rs = _results(400)
    whole = _stats(rs)
    a, b = _stats(rs[:150]), _stats(rs[150:])
    a.merge(b)
    assert a.requests == whole.requests == 400
    assert a.latency.percentiles_us([50, 90, 99]) == whole.latency.percentiles_us([50, 90, 99])
    assert [r["requests"] for r in a.series.rows()] == [r["requests"] for r in whole.series.rows()]
    assert a.workers["reported"] == 2


def test_json_roundtrip_keeps_what_a_merge_needs():
    s = _stats(_results(300), corrected=True)
    doc = json.loads(json.dumps(s.to_dict()))
    assert set(LOAD_RESULT_KEYS) <= set(doc)
    assert set(doc["latency_ms"]) >= LATENCY_KEYS
    back = LoadStats.from_dict(doc)
    assert back.to_dict() == doc


def test_client_cpu_adds_up_over_processes_and_keeps_the_busiest():
    a, b, old = _stats(_results(200)), _stats(_results(100)), _stats(_results(100))
    a.client_cpu = client_cpu(0.5, 1.5, 2.0)  # a whole core
    b.client_cpu = client_cpu(0.1, 0.3, 2.0)  # a fifth of one
    a.merge(b)
    assert a.client_cpu == {
        "user_s": 0.6,
        "system_s": pytest.approx(1.8),
        "processes": 2,
        "busiest": 1.0,
    }
    a.merge(old)  # results that did not measure CPU add nothing to it
    assert a.client_cpu["processes"] == 2
    figures = cpu_figures(a)
    assert figures["cores"] == pytest.approx(2.4 / a.duration_s)
    assert figures["us_per_request"] == pytest.approx(2.4 / 400 * 1e6)
    assert figures["cpu_bound"] is True
    assert cpu_figures(old) is None


@pytest.mark.parametrize("busy, bound", [(CPU_BOUND - 0.01, False), (CPU_BOUND, True)])
def test_a_process_at_the_threshold_is_cpu_bound(busy, bound):
    s = _stats(_results(10))
    s.client_cpu = client_cpu(busy, 0.0, 1.0)
    assert cpu_figures(s)["cpu_bound"] is bound


def test_throttling_is_the_most_throttled_process_and_the_smallest_limit():
    a, b, c = (_stats(_results(100)) for _ in range(3))
    a.client_cpu = client_cpu(0.1, 0.1, 2.0, CgroupCpu(0.5, 1.0, 10), CgroupCpu(0.5, 1.4, 14))
    b.client_cpu = client_cpu(0.1, 0.1, 2.0, CgroupCpu(None, 0.0, 0), CgroupCpu(None, 0.0, 0))
    c.client_cpu = client_cpu(0.1, 0.1, 2.0)  # no cgroup to read
    a.merge(b)
    a.merge(c)
    cpu = a.client_cpu
    assert (cpu["cpu_limit"], cpu["throttled_periods"]) == (0.5, 4)
    assert cpu["throttled_s"] == pytest.approx(0.4)
    figures = cpu_figures(a)
    assert figures["throttled"] and figures["cpu_limit"] == 0.5
    assert cpu_figures(b)["throttled"] is False and cpu_figures(b)["cpu_limit"] is None
    assert cpu_figures(c)["throttled_s"] is None
    doc = json.loads(json.dumps(a.to_dict()))
    assert LoadStats.from_dict(doc).client_cpu == cpu
    doc["client_cpu"]["throttled_periods"] = 1.5
    with pytest.raises(ResultsError, match="client_cpu throttling"):
        LoadStats.from_dict(doc)


def test_busy_at_90_percent_of_a_cgroup_limit_is_cpu_bound():
    s = _stats(_results(10))
    s.client_cpu = client_cpu(0.46, 0.0, 1.0, CgroupCpu(0.5, 0.0, 0), CgroupCpu(0.5, 0.0, 0))
    assert cpu_figures(s)["cpu_bound"] is True


def test_client_cpu_round_trips_and_older_results_read_without_it():
    s = _stats(_results(50))
    s.client_cpu = client_cpu(0.25, 0.75, 4.0)
    doc = json.loads(json.dumps(s.to_dict()))
    assert LoadStats.from_dict(doc).client_cpu == s.client_cpu
    del doc["client_cpu"]  # written before kfp-bench measured its CPU
    assert LoadStats.from_dict(doc).client_cpu == {}
    doc["client_cpu"] = {"user_s": "fast"}
    with pytest.raises(ResultsError, match="x.json: malformed load result.*client_cpu"):
        LoadStats.from_dict(doc, "x.json")


def test_series_has_one_row_per_second():
    s = _stats(_results(300))  # 3 s at 100/s
    rows = s.series.rows()
    assert sum(r["requests"] for r in rows) == 300
    assert 3 <= len(rows) <= 4
    assert all(r["p50_ms"] > 0 for r in rows)


@pytest.mark.parametrize(
    "doc, match",
    [
        ({"format": "something else"}, "not a kfp-bench load result"),
        ({"format": "kfp-bench/load", "format_version": 99}, "version 99"),
        ({"format": "kfp-bench/load", "format_version": 1}, "malformed"),
    ],
)
def test_bad_documents_are_refused_by_name(doc, match):
    with pytest.raises(ResultsError, match=match):
        LoadStats.from_dict(doc, "x.json")


@pytest.mark.parametrize("spacing", [0.01, 0.1, 3.0])  # one second, a few, a sparse wide span
def test_series_of_one_batch_equals_the_series_record_by_record(spacing):
    results = [
        Result(
            seq=i,
            intended=i * spacing,
            sent=i * spacing,
            latency=0.001 * (1 + i % 5),
            status=200 if i % 4 else 500,
            bytes_in=i,
            bytes_out=50,
        )
        for i in range(40)
    ]
    whole, single = LoadStats(started_at=1000.0), LoadStats(started_at=1000.0)
    for r in results:
        single.add(r)
    from array import array

    from kfp_bench.records import ResultBatch

    rows = array("d")
    for r in results:
        rows.extend(
            (r.seq, r.intended, r.sent, r.sent, r.sent, r.sent + r.latency, r.status, r.bytes_in)
        )
    whole.add_batch(ResultBatch(0.0, rows, [], [], 50))
    for s in (whole, single):
        s.close(40 * spacing)
    assert whole.series.rows() == single.series.rows()
    assert sum(row["requests"] for row in whole.series.rows()) == 40


def test_the_uncorrected_histograms_out_of_range_count_survives_saving_and_merging():
    """A latency past the histogram's hour is counted, never dropped: the uncorrected one's
    count too, through the saved document and a merge of two of them."""
    from kfp_bench.stats.hdr import HIGHEST_US

    rs = _results(50)
    rs[3] = Result(**{**{f: getattr(rs[3], f) for f in rs[3].__slots__}, "latency": HIGHEST_US})
    one = _stats(rs, corrected=True)
    assert one.uncorrected.out_of_range == 1
    back = LoadStats.from_dict(json.loads(json.dumps(one.to_dict())))
    assert back.uncorrected.out_of_range == 1
    back.merge(LoadStats.from_dict(one.to_dict()))
    assert back.uncorrected.out_of_range == 2 and back.latency.out_of_range == 2


# -- requests without a response: counted and timed apart ---------------------------------------
def _slow(n, start=0.0):
    """Responses of 50 ms or more (a 5xx is a response too)."""
    return [
        Result(i, start + i * 0.01, start + i * 0.01, 0.05 + i * 1e-4, 200 if i % 3 else 503, 2, 50)
        for i in range(n)
    ]


def _refused(n, start=0.0):
    """Connects refused after 1 ms: no response."""
    return [
        Result(i, start + i * 0.01, start + i * 0.01, 0.001, 0, 0, 0, "connect: refused", 0.001)
        for i in range(n)
    ]


@pytest.mark.parametrize("corrected", [False, True])
def test_latency_is_of_the_responses_and_the_others_are_timed_apart(corrected):
    s = _stats(_slow(60) + _refused(40, start=1), corrected=corrected)
    assert s.latency.count == 60 and s.uncorrected.count == (60 if corrected else 0)
    assert s.latency.min_us >= 49_900 and s.no_response.count == 40  # (HDR: 3 digits)
    assert s.no_response.max_us <= 1_100 and s.phases["connect"].hi == 0.0
    d = s.summary()
    assert d.responses == 60 and d.no_response["requests"] == 40
    assert d.no_response["errors"] == {"connect: refused": 40}
    assert d.latency_ms["min"] >= 49.9 and d.no_response["time_ms"]["max"] < 2
    rows = s.series.rows()
    assert sum(r["no_response"] for r in rows) == 40 and all(
        r["p50_ms"] >= 50 for r in rows if r["p50_ms"]
    )


def test_no_response_at_all_gives_no_latency_and_merges_right():
    none = _stats(_refused(30))
    none.note_no_response()
    assert none.flags == ["no-response"] and none.summary().latency_ms is None
    doc = json.loads(json.dumps(none.to_dict()))
    assert doc["latency_ms"] is None and doc["no_response"]["requests"] == 30
    back = LoadStats.from_dict(doc)
    assert back.no_response.count == 30 and back.flags == ["no-response"]
    # a pod that got responses: the merged run got some, and its latency is theirs only
    back.merge(_stats(_slow(20, start=1)))
    assert back.flags == [] and back.responses == 20 and back.no_responses == 30
    assert back.latency.count == 20 and back.no_response.count == 30
    assert back.latency.min_us >= 49_900


def _as_saved_before(doc: dict, mixed_hist: str) -> dict:
    """``doc`` as kfp-bench wrote it before requests without a response were kept apart: one
    histogram for all, no ``no_response``, ``responses`` or per-second ``no_response``."""
    old = {k: v for k, v in doc.items() if k not in ("no_response", "responses")}
    old["histogram"] = {"unit": "us", "latency": mixed_hist}
    old["series"] = [{k: v for k, v in r.items() if k != "no_response"} for r in doc["series"]]
    return old


def test_results_saved_before_still_load():
    mixed = _stats(_slow(60) + _refused(40, start=1))
    everything = _stats(_slow(60) + _refused(40, start=1))
    everything.latency.merge(everything.no_response)  # the one histogram of an older file
    old = _as_saved_before(mixed.to_dict(), everything.latency.encode())
    back = LoadStats.from_dict(json.loads(json.dumps(old)))
    assert back.flags == ["mixed-latency"] and back.latency.count == 100
    assert back.responses == 60 and back.no_responses == 40
    back.to_dict()  # and it reports

    refused = _stats(_refused(30))
    old = _as_saved_before(refused.to_dict(), refused.no_response.encode())
    back = LoadStats.from_dict(json.loads(json.dumps(old)))
    assert back.flags == ["no-response"] and back.summary().latency_ms is None
    assert back.no_response.count == 30 and back.latency.count == 0

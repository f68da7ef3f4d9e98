"""Aggregation of a load attack: mergeable, with a cheap ``add`` and a ``summary()``.

Latency figures cover the requests that got a response, of any status, as hey times only the
results without an error (rakyll/hey 8985827, ``requester/report.go`` ``runReporter``). Requests
that got none are counted by error and timed apart, send to failure (``no_response``); an attack
with no response at all is flagged ``no-response``. In rate mode the primary histogram counts
from the intended send time (coordinated-omission corrected), a second from the actual one."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from kfp_bench.errors import ResultsError
from kfp_bench.figures import fixed, pct
from kfp_bench.records import BATCH_COLUMNS, ResultBatch
from kfp_bench.stats import document
from kfp_bench.stats.hdr import Histogram
from kfp_bench.stats.series import Series
from kfp_bench.stats.shared import Shared, SharedSummary

#: Version of the JSON results format; ``from_dict`` refuses any other.
FORMAT = "kfp-bench/load"
FORMAT_VERSION = 1
PHASES = ("connect", "dns", "write", "wait", "read")
#: The flag of an attack in which no request got a response: no latency figure stands
#: (a failure, ``kfp_bench.outcome``).
NO_RESPONSE = "no-response"
#: The flag of results saved before requests without a response were kept apart, some of whose
#: requests got none: their latency figures include those requests' times (a warning).
MIXED_LATENCY = "mixed-latency"
SUMMARY_PCTS = (10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9)


def _ok(status: np.ndarray) -> np.ndarray:
    return (status >= 200) & (status < 400)


@dataclass
class _Phase:
    """Count, sum, min and max of one request phase (seconds), over requests that got a response."""

    count: int = 0
    total: float = 0.0
    lo: float = float("inf")
    hi: float = 0.0

    def add(self, values: np.ndarray, zeros: int = 0) -> None:
        """Add ``values`` and ``zeros`` more samples of 0 (left implicit: most requests reuse a
        connection and spend no time connecting)."""
        if values.size:
            self.total += float(values.sum())
            self.lo = min(self.lo, float(values.min()))
            self.hi = max(self.hi, float(values.max()))
        if zeros:
            self.lo = 0.0
        self.count += int(values.size) + zeros

    def merge(self, other: _Phase) -> None:
        self.count += other.count
        self.total += other.total
        self.lo, self.hi = min(self.lo, other.lo), max(self.hi, other.hi)

    def as_dict(self) -> dict:
        mean = self.total / self.count if self.count else 0.0
        return {
            "count": self.count,
            "mean_s": mean,
            "min_s": self.lo if self.count else 0.0,
            "max_s": self.hi,
        }


@dataclass
class LoadStats(Shared):
    """The aggregate of a load attack: ``Shared``'s fields, then the counts, latency histograms
    (corrected, uncorrected, without a response), request phases and per-second series."""

    requests: int = 0
    ok: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    not_sent: int = 0
    latency: Histogram = field(default_factory=Histogram)
    uncorrected: Histogram = field(default_factory=Histogram)
    no_response: Histogram = field(default_factory=Histogram)
    phases: dict = field(default_factory=lambda: {p: _Phase() for p in PHASES})
    series: Series = field(default_factory=Series)

    # -- adding ------------------------------------------------------------------------------
    def add(self, result) -> None:
        """Add one ``Result`` record (offsets from this attack's start)."""
        written = result.sent + result.write if result.bytes_out else 0.0
        first = result.sent + result.write + result.wait
        row = (
            result.seq,
            result.intended,
            result.sent,
            written,
            first,
            result.sent + result.latency,
            result.status,
            result.bytes_in,
        )
        connects = [(result.seq, result.connect, result.dns)] if result.connect else []
        errors = [result.error] if not result.status else []
        self.add_batch(ResultBatch(0.0, array("d", row), errors, connects, result.bytes_out))

    def add_batch(self, batch: ResultBatch) -> None:
        """Add a batch from the request loop."""
        if not len(batch):
            return
        a = np.frombuffer(batch.data, dtype=np.float64).reshape(-1, len(BATCH_COLUMNS))
        intended, sent, written, first, done = (a[:, i] for i in range(1, 6))
        status = a[:, 6].astype(np.int64)
        b_in = a[:, 7].astype(np.int64)
        answered = status > 0
        lat_us = np.rint((done - sent) * 1e6).astype(np.int64)
        # A request without a response is timed apart: its time is how long failing took.
        self.no_response.record_many(lat_us[~answered])
        if self.corrected:
            self.uncorrected.record_many(lat_us[answered])
            lat_us = np.rint((done - np.minimum(intended, sent)) * 1e6).astype(np.int64)
        self.latency.record_many(lat_us[answered])

        ok = _ok(status)
        self.requests += len(a)
        self.ok += int(np.count_nonzero(ok))
        self.bytes_in += int(b_in.sum())
        self.bytes_out += batch.request_len * int(np.count_nonzero(written))
        codes, counts = np.unique(status[answered], return_counts=True)
        for code, n in zip(codes.tolist(), counts.tolist(), strict=True):
            self.status_codes[code] += n
        self.errors.update(batch.errors)
        self._add_phases(batch, a, answered)

        secs = np.floor(self.started_at + (done - batch.t0)).astype(np.int64)
        self.series.add(secs, lat_us, ~ok, b_in, answered)
        if self.stages is not None:
            self.stages.add(intended - batch.t0, ok, latency=(lat_us, answered))

    def _add_phases(self, batch: ResultBatch, a: np.ndarray, answered: np.ndarray) -> None:
        """The request phases of the rows ``a`` of ``batch`` that got a response."""
        n_answered = int(np.count_nonzero(answered))
        conns = batch.connects
        if conns and n_answered < len(a):  # a failed connect is no phase of a response
            kept = set(a[answered, 0].tolist())
            conns = [c for c in conns if c[0] in kept]
        # Connect and DNS time are charged to the request that opened the connection; the
        # others add zeros, as in hey's averages.
        for p, col in (("connect", 1), ("dns", 2)):
            vals = np.array([c[col] for c in conns], dtype=np.float64)
            self.phases[p].add(vals, max(n_answered - vals.size, 0))
        sent, w, f, d = (a[answered, i] for i in (2, 3, 4, 5))
        f = np.where(f > 0, f, d)
        self.phases["write"].add(np.maximum(w - sent, 0.0))
        self.phases["wait"].add(np.maximum(f - w, 0.0))
        self.phases["read"].add(d - f)

    def close(self, duration_s: float) -> LoadStats:
        """Finish: record the duration and close every second of the series."""
        self.duration_s = duration_s
        self.series.close_before(2**62)
        return self

    # -- merging -----------------------------------------------------------------------------
    def merge(self, other: LoadStats) -> None:
        """Add another process's or machine's stats; the duration spans both."""
        super().merge(other)
        for name in ("requests", "ok", "bytes_in", "bytes_out", "not_sent"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.latency.merge(other.latency)
        self.uncorrected.merge(other.uncorrected)
        self.no_response.merge(other.no_response)
        for p in PHASES:
            self.phases[p].merge(other.phases[p])
        self.series.merge(other.series)
        if self.responses:  # a pod that got no response does not make the whole run so
            self.flags = [f for f in self.flags if f != NO_RESPONSE]

    def note_no_response(self) -> None:
        """Flag ``no-response`` when no request got a response (none was sent, or every one
        failed): for the finished attack, as ``merge`` keeps it true of the merged one."""
        if not self.responses:
            self.flag(NO_RESPONSE)

    @property
    def responses(self) -> int:
        """Requests that got a response, of any status."""
        return sum(self.status_codes.values())

    @property
    def no_responses(self) -> int:
        """Requests that got no response (their errors are in ``errors``)."""
        return self.requests - self.responses

    # -- persistence -------------------------------------------------------------------------
    def to_dict(self, *, summary: bool = True) -> dict:
        """The JSON results document: summary keys first, then what a merge needs.

        With ``summary=False`` the percentiles are left out: ``from_dict`` still reads it, and it
        is cheap enough for a worker to append the stats of each flush as it goes.
        """
        doc = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "requests": self.requests,
            "duration_s": self.duration_s,
        }
        if summary:
            s = self.summary()
            doc.update(rps=s.rps, success_ratio=s.success_ratio, latency_ms=s.latency_ms)
            doc.update(responses=s.responses, no_response=s.no_response)
        doc.update(
            self.shared_dict(),
            ok=self.ok,
            bytes_in=self.bytes_in,
            bytes_out=self.bytes_out,
            not_sent=self.not_sent,
            out_of_range=self.latency.out_of_range,
            details={p: ph.as_dict() for p, ph in self.phases.items()},
            histogram={
                "unit": "us",
                "latency": self.latency.encode(),
                "no_response": self.no_response.encode(),
            },
            series=self.series.rows(),
        )
        if self.corrected and summary:
            doc["latency_uncorrected_ms"] = s.uncorrected_ms
        if self.corrected:
            doc["histogram"]["uncorrected"] = self.uncorrected.encode()
            doc["out_of_range_uncorrected"] = self.uncorrected.out_of_range
        return doc

    @classmethod
    def from_dict(cls, doc: dict, source: str = "results") -> LoadStats:
        """Rebuild stats from a JSON results document; ``source`` names it in errors."""
        document.check(
            doc, source, fmt=FORMAT, version=FORMAT_VERSION, what="load result",
            written_by="kfp-bench load --json-out",
        )  # fmt: skip
        try:
            stats = cls(**cls.shared_fields(doc))
            stats.read_shared(doc, source)
            for name in ("requests", "ok", "bytes_in", "bytes_out", "not_sent"):
                setattr(stats, name, int(doc[name]))
            hist = doc["histogram"]
            stats.latency = Histogram.decode(hist["latency"], int(doc.get("out_of_range", 0)))
            if "uncorrected" in hist:
                lost = int(doc.get("out_of_range_uncorrected", 0))
                stats.uncorrected = Histogram.decode(hist["uncorrected"], lost)
            if "no_response" in hist:
                stats.no_response = Histogram.decode(hist["no_response"])
            for p, d in doc["details"].items():
                lo = d["min_s"] if d["count"] else float("inf")
                stats.phases[p] = _Phase(d["count"], d["mean_s"] * d["count"], lo, d["max_s"])
            stats.series = Series.from_rows(doc["series"])
            if "no_response" not in hist:  # saved before they were kept apart
                _from_mixed(stats)
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultsError(
                f"{source}: malformed load result ({exc!r} is missing or wrong)"
            ) from None
        return stats

    # -- summary -----------------------------------------------------------------------------
    def summary(self) -> LoadSummary:
        def ms(h: Histogram) -> dict:
            return h.summary_ms(SUMMARY_PCTS)

        dur = self.duration_s
        answered = self.responses > 0  # else no latency figure stands: None, not zeros
        no_response = {"requests": self.no_responses, "errors": dict(self.errors.most_common())}
        no_response["time_ms"] = ms(self.no_response) if self.no_response.count else None
        return LoadSummary(
            requests=self.requests,
            duration_s=dur,
            rps=self.requests / dur if dur > 0 else 0.0,
            success_ratio=self.ok / self.requests if self.requests else 0.0,
            latency_ms=ms(self.latency) if answered else None,
            uncorrected_ms=(
                ms(self.uncorrected if self.corrected else self.latency) if answered else None
            ),
            corrected=self.corrected,
            responses=self.responses,
            no_response=no_response,
        )


def _from_mixed(stats: LoadStats) -> None:
    """Read results saved before requests without a response were timed apart: when none got
    a response, its histogram is theirs (moved to ``no_response``); when some did, it mixes
    both and is kept, flagged ``mixed-latency``."""
    if not stats.no_responses:
        return
    if stats.responses:
        stats.flag(MIXED_LATENCY)
        return
    stats.no_response = stats.uncorrected if stats.corrected else stats.latency
    stats.latency, stats.uncorrected = Histogram(), Histogram()
    stats.flag(NO_RESPONSE)


# -- the load generator's own CPU ------------------------------------------------------------
#: A process busier than this share of one core was likely the limit of its own request rate.
CPU_BOUND = 0.9


def cpu_figures(stats: LoadStats) -> dict | None:
    """What the load generator's CPU says, for reports: cores used on average over the run, CPU
    per request (µs), the busiest process's share of a core, and whether that process was
    CPU-bound (so the request rate may be the generator's limit, not the server's): at
    ``CPU_BOUND`` of a core, or of its cgroup's limit when that is lower. Where the cgroup was
    read, also its limit and how long it throttled the generator (``throttled``: it did, so the
    generator sent and read late). None when the results did not measure CPU."""
    c = stats.client_cpu
    if not c:
        return None
    cpu_s = c["user_s"] + c["system_s"]
    core = min(1.0, c.get("cpu_limit") or 1.0)
    return {
        "cpu_limit": c.get("cpu_limit"),
        "throttled_s": c.get("throttled_s"),
        "throttled_periods": c.get("throttled_periods"),
        "throttled": bool(c.get("throttled_periods")),
        "cores": cpu_s / stats.duration_s if stats.duration_s > 0 else 0.0,
        "us_per_request": cpu_s / stats.requests * 1e6 if stats.requests else 0.0,
        "user_s": c["user_s"],
        "system_s": c["system_s"],
        "processes": c["processes"],
        "busiest": c["busiest"],
        "cpu_bound": c["busiest"] >= CPU_BOUND * core,
    }


def cpu_caveat(cpu: dict | None) -> str | None:
    """The sentence a reader of ``cpu_figures`` must see, or None: the load generator's cgroup
    throttled it (its stalls are in the latencies), else it was CPU-bound (the rate may be its
    limit). The text report, ``compare`` and the load component's log all say it this way."""
    if not cpu:
        return None
    if cpu["throttled"]:
        limit = cpu["cpu_limit"]  # None: the limit is on a cgroup above the generator's own
        where = f"at its {limit:g}-core limit" if limit is not None else "at a limit above it"
        return (
            f"the load generator's cgroup held it back for {fixed(cpu['throttled_s'], 2)} s "
            f"({cpu['throttled_periods']} periods {where}): "
            "it sent and read late, and the latencies include those stalls; raise the CPU limit "
            "of the load pods or lower the load"
        )
    if cpu["cpu_bound"]:  # (more workers would not help under a cgroup's limit: that is above)
        return (
            f"the load generator was CPU-bound (a process at {pct(cpu['busiest'], 0)} of a core, "
            f">= {CPU_BOUND:.0%} of a core or of its cgroup's limit): the rate may be its "
            "limit, not the server's; add --workers or machines"
        )
    return None


@dataclass(frozen=True, slots=True)
class LoadSummary(SharedSummary):
    """The headline figures of a load attack, in the units reports print.

    ``latency_ms`` and ``uncorrected_ms`` cover the ``responses`` (any status) and are None when
    there were none; ``no_response`` holds the others: ``requests``, ``errors`` (count by error
    text) and ``time_ms`` (send to failure; None when there were none)."""

    success_ratio: float
    latency_ms: dict | None
    uncorrected_ms: dict | None
    responses: int = 0
    no_response: dict = field(default_factory=dict)


def warm_up() -> None:
    """Aggregate one throwaway batch, for a load engine about to start its clock: numpy's first
    calls are slow (BENCHMARKS.md, "Figures out of the code"), which would otherwise stall the
    first flush and show up in the corrected latencies."""
    row = array("d", [0, 1.0, 1.0, 1.0, 1.0, 1.0, 200, 0])
    LoadStats(corrected=True).add_batch(ResultBatch(1.0, row, [], [(0, 0.1, 0.0)], 1))

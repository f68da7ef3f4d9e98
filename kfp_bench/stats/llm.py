"""Aggregation of a streaming (LLM) load: ``StreamBatch`` records in, token-timing figures out.

``LlmStats`` adds the request loop's batches, merges exactly (histograms and integer counts),
round-trips through its results document (``kind: "llm"``) and summarizes; ``metric_values``
names the figures stably. docs/llm-metrics.md defines each figure (TTFT, ITL, TPOT, e2e, lag,
tokens and their provenance, goodput, the usage checks and their flags, cached tokens, warm-up)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from kfp_bench.errors import ResultsError
from kfp_bench.records import (
    MARK_NO_DONE,
    MARK_OUTPUT_TOKENIZED,
    MARK_PROMPT_TOKENIZED,
    STREAM_COLUMNS,
    StreamBatch,
)
from kfp_bench.stats import document
from kfp_bench.stats.cached import CachedTokens, usage_rows
from kfp_bench.stats.hdr import Histogram
from kfp_bench.stats.shared import Shared, SharedSummary
from kfp_bench.stats.slo import Slo
from kfp_bench.stats.token_series import TokenSeries
from kfp_bench.stats.turns import TurnStats

FORMAT = "kfp-bench/llm"
KIND = "llm"
FORMAT_VERSION = 1
#: The histograms, in µs, by name.
HISTOGRAMS = ("ttft", "ttft_intended", "itl", "tpot", "e2e", "e2e_intended", "lag")
SUMMARY_PCTS = (50.0, 90.0, 95.0, 99.0, 99.9)
#: Flags (``kfp_bench.outcome.WARNINGS``): warnings, not failures.
USAGE_MISMATCH = "usage-mismatch"
MULTI_TOKEN_CHUNKS = "multi-token-chunks"
TOKENS_FROM_TOKENIZER = "tokens-from-tokenizer"
TOKENS_UNKNOWN = "tokens-unknown"
NO_DONE_MARKER = "no-done-marker"
#: The token counts' provenance (``LlmSummary.tokens``): rows counted by the tokenizer, rows whose
#: output is their content-chunk count (completed, failed), completed rows with no input count.
TOKEN_COUNTS = (
    "tokenized_output", "tokenized_input", "chunk_counted", "chunk_counted_failed",
    "input_unknown",
)  # fmt: skip
_COUNTS = (
    "requests", "completed", "warmup", "no_content", "output_tokens", "input_tokens",
    "content_chunks", "chunks", "bytes_in", "bytes_out", "good", "usage_missing",
    "usage_fewer", "usage_more", "not_sent", *TOKEN_COUNTS, "no_done",
)  # fmt: skip
_COL = {name: i for i, name in enumerate(STREAM_COLUMNS)}
#: Each flag, and the counts any of which raises it.
_FLAGGED_BY = {
    USAGE_MISMATCH: ("chunk_counted", "usage_fewer"),
    MULTI_TOKEN_CHUNKS: ("usage_more",),
    TOKENS_FROM_TOKENIZER: ("tokenized_output", "tokenized_input"),
    TOKENS_UNKNOWN: ("chunk_counted", "input_unknown"),
    NO_DONE_MARKER: ("no_done",),
}


def _us(seconds: np.ndarray) -> np.ndarray:
    return np.rint(seconds * 1e6).astype(np.int64)


@dataclass
class LlmStats(Shared):
    """The aggregate of a streaming load: ``Shared``'s fields, then its own. Requests sent
    earlier than ``warmup_s`` after the start are left out (counted in ``warmup``); ``slo``
    bounds a good request (goodput); ``hists`` are the token-timing histograms (µs)."""

    warmup_s: float = 0.0
    slo: Slo = field(default_factory=Slo)
    counts: dict = field(default_factory=lambda: dict.fromkeys(_COUNTS, 0))
    hists: dict = field(default_factory=lambda: {h: Histogram() for h in HISTOGRAMS})
    series: TokenSeries = field(default_factory=TokenSeries)
    turns: TurnStats | None = None
    cached: CachedTokens = field(default_factory=CachedTokens)

    # -- adding ------------------------------------------------------------------------------
    def add_batch(self, batch: StreamBatch) -> None:
        """Add a batch from the request loop."""
        n = len(batch)
        if not n:
            return
        a = np.asarray(batch.data, dtype=np.float64).reshape(-1, len(STREAM_COLUMNS))
        col = {name: a[:, i] for name, i in _COL.items()}
        cc = col["content_chunks"].astype(np.int64)
        times = np.asarray(batch.times, dtype=np.float64)
        if times.size != int(cc.sum()):
            raise ResultsError(
                f"stream batch of {batch.source or 'a worker'}: {times.size} chunk times for "
                f"{int(cc.sum())} content chunks (a bug in the request loop)"
            )
        measured = col["sent"] - batch.t0 >= self.warmup_s
        turn = np.asarray(batch.turns, dtype=np.int64).reshape(-1, 2) if batch.turns else None
        self.counts["warmup"] += int(n - np.count_nonzero(measured))
        self._count_errors(batch, col["outcome"], measured)
        request_bytes = np.asarray(batch.request_bytes, dtype=np.int64)
        if not measured.all():
            a, cc, times = a[measured], cc[measured], times[np.repeat(measured, cc)]
            col = {name: a[:, i] for name, i in _COL.items()}
            request_bytes = request_bytes[measured]
            turn = turn[measured] if turn is not None else None
            if not len(a):
                return
        self.counts["bytes_out"] += int(request_bytes.sum())
        self._add_rows(col, cc, times, batch.t0, turn)

    def _count_errors(self, batch: StreamBatch, outcome: np.ndarray, measured: np.ndarray):
        failed_rows = np.nonzero(outcome == 1)[0].tolist()
        for row, text in zip(failed_rows, batch.errors, strict=True):
            if measured[row]:
                self.errors[text] += 1

    def _add_rows(self, col: dict, cc: np.ndarray, times: np.ndarray, t0: float, turn) -> None:
        n = cc.size
        intended, sent, first, done = col["intended"], col["sent"], col["first"], col["done"]
        origin = np.minimum(intended, sent)
        completed = col["outcome"] == 0
        counted = col["completion_tokens"].astype(np.int64)  # usage's, else the tokenizer's
        tokens = np.where(counted >= 0, counted, cc)
        has = cc > 0
        self._count(col, cc, tokens, counted, completed)

        h = self.hists
        ttft = _us(first - sent)
        h["ttft"].record_many(ttft[has])
        ttft_i = _us(first - origin)
        h["ttft_intended"].record_many(ttft_i[has])
        e2e_i = _us(done - origin)
        e2e = _us(done - sent)
        h["e2e"].record_many(e2e)
        h["e2e_intended"].record_many(e2e_i)
        h["lag"].record_many(_us(sent - intended))

        # Gaps: consecutive times of one row (row ids repeat for each of the row's chunks).
        row = np.repeat(np.arange(n), cc)
        same = row[1:] == row[:-1]
        gaps, gap_row = _us(np.diff(times)[same]), row[1:][same]
        h["itl"].record_many(gaps)
        max_gap = np.zeros(n, dtype=np.int64)
        np.maximum.at(max_gap, gap_row, gaps)

        last = np.zeros(n)
        last[has] = times[np.cumsum(cc)[has] - 1]
        timed = completed & (tokens >= 2) & (cc >= 2)
        tpot = np.full(n, -1, dtype=np.int64)
        tpot[timed] = _us((last[timed] - first[timed]) / (tokens[timed] - 1))
        h["tpot"].record_many(tpot[timed])

        good = completed & self._meets_slo(has, ttft_i, max_gap, tpot, e2e_i)
        self.counts["good"] += int(np.count_nonzero(good))

        epoch = self.started_at - t0
        self.series.add_ends(done + epoch, ~completed, tokens)
        self.series.add_chunks(times + epoch)
        self.series.add_firsts(first[has] + epoch, first[has] - sent[has])
        self.series.add_inflight(sent + epoch, done + epoch)
        if self.stages is not None:
            every = np.ones(n, dtype=bool)  # (stats.stages.LLM_METRICS, LLM_SUMS)
            self.stages.add(intended - t0, completed, {"tokens": tokens}, ttft=(ttft_i, has),
                            e2e=(e2e_i, every))  # fmt: skip
        prompt, marks = col["prompt_tokens"].astype(np.int64), col["marks"].astype(np.int64)
        cached = col["cached_tokens"].astype(np.int64)
        self.cached.add(prompt, marks, cached, None if turn is None else turn[:, 0])
        if self.turns is not None and turn is not None:
            rows = usage_rows(prompt, marks, cached)
            self.turns.add(turn[:, 1], completed, prompt, tokens, (ttft, has), e2e, rows[:2])

    def _count(self, col: dict, cc, tokens, counted, completed) -> None:
        c, n = self.counts, cc.size
        marks = col["marks"].astype(np.int64)
        usage = np.where(marks & MARK_OUTPUT_TOKENIZED, -1, counted)  # the server's own
        c["requests"] += n
        c["completed"] += int(np.count_nonzero(completed))
        c["no_content"] += int(np.count_nonzero(cc == 0))
        c["output_tokens"] += int(tokens.sum())
        prompt = col["prompt_tokens"].astype(np.int64)
        c["input_tokens"] += int(prompt[prompt >= 0].sum())
        self._provenance(marks, cc, counted, prompt, completed)
        c["content_chunks"] += int(cc.sum())
        c["chunks"] += int(col["chunks"].sum())
        c["bytes_in"] += int(col["bytes_in"].sum())
        status = col["status"].astype(np.int64)
        codes, counts = np.unique(status[status > 0], return_counts=True)
        for code, k in zip(codes.tolist(), counts.tolist(), strict=True):
            self.status_codes[code] += k
        missing = completed & (usage < 0)
        fewer = completed & (usage >= 0) & (usage < cc)
        more = completed & (counted > cc)  # usage's count or the tokenizer's
        c["usage_missing"] += int(np.count_nonzero(missing))
        c["usage_fewer"] += int(np.count_nonzero(fewer))
        c["usage_more"] += int(np.count_nonzero(more))
        self._flag_counts()

    def _provenance(self, marks, cc, counted, prompt, completed) -> None:
        """Count where the rows' token counts came from (``TOKEN_COUNTS``, ``no_done``)."""
        c = self.counts
        c["tokenized_output"] += int(np.count_nonzero(marks & MARK_OUTPUT_TOKENIZED))
        c["tokenized_input"] += int(np.count_nonzero(marks & MARK_PROMPT_TOKENIZED))
        by_chunks = (counted < 0) & (cc > 0)
        c["chunk_counted"] += int(np.count_nonzero(by_chunks & completed))
        c["chunk_counted_failed"] += int(np.count_nonzero(by_chunks & ~completed))
        c["input_unknown"] += int(np.count_nonzero(completed & (prompt < 0)))
        c["no_done"] += int(np.count_nonzero(marks & MARK_NO_DONE))

    def _flag_counts(self) -> None:
        self.flag(*(f for f, keys in _FLAGGED_BY.items() if any(self.counts[k] for k in keys)))

    def _meets_slo(self, has, ttft_us, max_gap_us, tpot_us, e2e_us) -> np.ndarray:
        """Which requests meet every bound of ``slo`` (see ``kfp_bench.stats.slo``)."""
        ok = np.ones(has.size, dtype=bool)
        s = self.slo
        if s.ttft is not None:
            ok &= has & (ttft_us <= s.ttft)
        if s.itl is not None:
            ok &= max_gap_us <= s.itl
        if s.tpot is not None:
            ok &= tpot_us <= s.tpot  # (-1: no TPOT, which meets it)
        if s.e2e is not None:
            ok &= e2e_us <= s.e2e
        return ok

    def close(self, duration_s: float) -> LlmStats:
        """Finish: ``duration_s`` is from the start (``t0``) to the end of the load."""
        self.duration_s = duration_s
        return self

    @property
    def not_sent(self) -> int:
        """Requests the schedule made due that never went out."""
        return self.counts["not_sent"]

    @not_sent.setter
    def not_sent(self, n: int) -> None:
        self.counts["not_sent"] = n

    # -- merging -----------------------------------------------------------------------------
    def merge(self, other: LlmStats) -> None:
        """Add another process's or pod's stats of the same load; the duration spans both."""
        if (other.slo, other.warmup_s) != (self.slo, self.warmup_s):
            raise ResultsError(
                f"cannot merge LLM results of different settings (slo {self.slo} / {other.slo}, "
                f"warm-up {self.warmup_s:g} s / {other.warmup_s:g} s); merge one benchmark's"
            )
        if (self.turns is None) != (other.turns is None):
            raise ResultsError("cannot merge a multi-turn LLM result with one of single requests")
        super().merge(other)
        for k in _COUNTS:
            self.counts[k] += other.counts[k]
        for name in HISTOGRAMS:
            self.hists[name].merge(other.hists[name])
        self.series.merge(other.series)
        self.cached.merge(other.cached)
        if self.turns is not None:
            self.turns.merge(other.turns)

    # -- persistence -------------------------------------------------------------------------
    def to_dict(self, *, summary: bool = True) -> dict:
        """The JSON results document: the summary first (unless ``summary=False``), then what a
        merge needs."""
        doc = {"format": FORMAT, "kind": KIND, "format_version": FORMAT_VERSION}
        if summary:
            doc["summary"] = self.summary().as_dict()
        doc.update(
            self.shared_dict(),
            warmup_s=self.warmup_s,
            slo=str(self.slo),
            counts=dict(self.counts),
            histogram={"unit": "us", **{k: self.hists[k].encode() for k in HISTOGRAMS}},
            out_of_range={k: self.hists[k].out_of_range for k in HISTOGRAMS},
            series=self.series.rows(),
            cached=self.cached.to_dict(),
        )
        if self.turns is not None:
            doc["turns"] = self.turns.to_dict()
        return doc

    @classmethod
    def from_dict(cls, doc: dict, source: str = "results") -> LlmStats:
        """Rebuild stats from a JSON results document; ``source`` names it in errors."""
        document.check(
            doc, source, fmt=FORMAT, kind=KIND, version=FORMAT_VERSION, what="LLM result",
            written_by="kfp-bench llm --json-out",
        )  # fmt: skip
        try:
            stats = cls(
                **cls.shared_fields(doc),
                warmup_s=float(doc["warmup_s"]),
                slo=Slo.parse(doc["slo"]),
            )
            stats.read_shared(doc, source)
            counts = doc["counts"]
            if "chunk_counted" not in counts:  # saved before: no usage meant chunks, input 0
                counts = {**counts, "chunk_counted": counts["usage_missing"]}
                counts["input_unknown"] = counts["usage_missing"]
            added = (*TOKEN_COUNTS, "no_done")  # 0 in results saved before them
            stats.counts = {k: int(counts.get(k, 0) if k in added else counts[k]) for k in _COUNTS}
            lost = doc["out_of_range"]
            stats.hists = {
                k: Histogram.decode(doc["histogram"][k], int(lost[k])) for k in HISTOGRAMS
            }
            stats.series = TokenSeries.from_rows(doc["series"])
            stats.cached = CachedTokens.from_dict(doc.get("cached"), source)
            stats._flag_counts()  # results saved before a flag existed show it too
            if doc.get("turns"):  # a --multi-turn result (none saved before it)
                stats.turns = TurnStats.from_dict(doc["turns"], source)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ResultsError(
                f"{source}: malformed LLM result ({exc!r} is missing or wrong)"
            ) from None
        return stats

    # -- summary -----------------------------------------------------------------------------
    def summary(self) -> LlmSummary:
        c, dur = self.counts, max(self.duration_s - self.warmup_s, 0.0)
        # never a silent undercount: unknown when a completed request had no count
        out = None if c["chunk_counted"] else c["output_tokens"]
        inp = None if c["input_unknown"] else c["input_tokens"]

        def per_s(v: int | None) -> float | None:
            return None if v is None else v / dur if dur > 0 else 0.0

        def ms(name: str) -> dict:
            return {"count": self.hists[name].count, **self.hists[name].summary_ms(SUMMARY_PCTS)}

        return LlmSummary(
            requests=c["requests"],
            completed=c["completed"],
            failed=c["requests"] - c["completed"],
            no_content=c["no_content"],
            warmup_excluded=c["warmup"],
            duration_s=self.duration_s,
            measured_s=dur,
            corrected=self.corrected,
            rps=per_s(c["requests"]),
            output_tokens=out,
            input_tokens=inp,
            output_tokens_per_s=per_s(out),
            input_tokens_per_s=per_s(inp),
            latency_ms={name: ms(name) for name in HISTOGRAMS},
            out_of_range={k: self.hists[k].out_of_range for k in HISTOGRAMS},
            slo=str(self.slo),
            good=c["good"],
            goodput_rps=per_s(c["good"]),
            good_ratio=c["good"] / c["requests"] if c["requests"] else 0.0,
            usage={k: c[f"usage_{k}"] for k in ("missing", "fewer", "more")},
            status_codes=dict(sorted(self.status_codes.items())),
            errors=dict(self.errors.most_common()),
            flags=list(self.flags),
            not_sent=c["not_sent"],
            client_cpu=dict(self.client_cpu),
            tokens={k: c[k] for k in TOKEN_COUNTS},
            no_done=c["no_done"],
            turns=self.turns.summary(self.cached.known) if self.turns is not None else [],
            cached=self.cached.summary(),
        )


@dataclass(frozen=True, slots=True)
class LlmSummary(SharedSummary):
    """The finished figures of a streaming load, in the units reports print (ms, per second).

    ``latency_ms`` holds, for each of ``HISTOGRAMS``, the sample count, p50 to p99.9, min, max
    and mean in ms; ``usage`` the completed requests whose usage was ``missing``, said ``fewer``
    tokens than content chunks, or ``more`` (usage's or the tokenizer's count). The token
    figures are None when unknown (a completed request with neither usage nor a tokenizer's
    count); ``tokens`` counts the requests by where their counts came from (``TOKEN_COUNTS``),
    ``no_done`` the completed streams without ``[DONE]``; ``turns`` the per-turn figures of a
    multi-turn load (``stats.turns.TurnStats.summary``), empty for single requests; ``cached``
    the usage's cached prompt tokens and hit rate (``stats.cached.CachedTokens.summary``).
    """

    completed: int
    failed: int
    no_content: int
    warmup_excluded: int
    measured_s: float
    output_tokens: int | None
    input_tokens: int | None
    output_tokens_per_s: float | None
    input_tokens_per_s: float | None
    latency_ms: dict
    out_of_range: dict
    slo: str
    good: int
    goodput_rps: float
    good_ratio: float
    usage: dict
    status_codes: dict
    errors: dict
    flags: list
    not_sent: int = 0
    client_cpu: dict = field(default_factory=dict)
    tokens: dict = field(default_factory=lambda: dict.fromkeys(TOKEN_COUNTS, 0))
    no_done: int = 0
    turns: list = field(default_factory=list)
    cached: dict = field(default_factory=lambda: CachedTokens().summary())

    def as_dict(self) -> dict:
        d = asdict(self)
        d["status_codes"] = {str(k): v for k, v in self.status_codes.items()}
        return d


#: The metric names of ``metric_values``, for KFP Metrics: an interface, only ever added to.
METRIC_HISTOGRAMS = {
    "ttft": "ttft",
    "ttft_intended": "ttft_intended",
    "itl": "itl",
    "tpot": "tpot",
    "e2e": "e2e",
    "e2e_intended": "e2e_intended",
    "lag": "sched_lag",
}


def metric_values(s: LlmSummary) -> dict[str, float]:
    """The flat ``{name: number}`` metrics of a summary, names stable (``report.metric_names``
    lists them). A metric with no sample is left out, never NaN; an unknown token rate is None
    (null in metrics.json, "not measured" for a gate), never 0."""
    out: dict[str, float | None] = {
        "llm_requests": s.requests,
        "llm_failed": s.failed,
        "llm_rps": s.rps,
        "output_tokens_per_s": s.output_tokens_per_s,
        "input_tokens_per_s": s.input_tokens_per_s,
        "usage_mismatch_requests": s.usage["missing"] + s.usage["fewer"],
        "multi_token_chunk_requests": s.usage["more"],
        "cached_hit_rate": s.cached["hit_rate"],
    }
    if s.requests:
        out.update(goodput_rps=s.goodput_rps, goodput_ratio=s.good_ratio)
    for key, name in METRIC_HISTOGRAMS.items():
        lat = s.latency_ms[key]
        if lat["count"]:
            for p in ("p50", "p90", "p95", "p99", "p99_9", "mean", "max"):
                out[f"{name}_{p}_ms"] = lat[p]
    for row in s.turns:  # a multi-turn load: ttft_turn<k>_{p50,p99}_ms, input_tokens_turn<k>
        k = row["turn"]
        if row["ttft"]["count"]:
            out[f"ttft_turn{k}_p50_ms"] = row["ttft"]["p50"]
            out[f"ttft_turn{k}_p99_ms"] = row["ttft"]["p99"]
        if row["input_tokens_mean"] is not None:
            out[f"input_tokens_turn{k}_mean"] = row["input_tokens_mean"]
    return out

"""The local LLM server's ``/metrics``: vLLM's names, labels and histogram buckets.

Every name, label and bucket list is vLLM v1's (vllm/v1/metrics/loggers.py,
``PrometheusStatLogger.__init__``, vllm-project/vllm@005a810b): labels ``model_name`` and
``engine``; counters are exposed with ``_total`` as prometheus_client adds it. When they are
observed follows vLLM too: TTFT at the first token, one inter-token gap per later token (the
time_per_output_token_seconds histogram), the end-to-end latency and the token counts when a
request finishes. What the local server does not have reads as an idle vLLM's would: it admits
every request at once (``num_requests_waiting`` stays 0: no scheduler queue) and holds no KV
memory (``kv_cache_usage_perc`` 0). Its prefix cache (``llm_server_prefix``) is counted as vLLM
counts its own: ``prefix_cache_queries`` the prompt tokens of every lookup, ``prefix_cache_hits``
the tokens served from cached blocks (loggers.py; the lookup in
vllm/v1/core/kv_cache_manager.py ``get_computed_blocks``).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from kfp_bench.sandbox.llm_server_prefix import PrefixCache

#: vLLM's buckets (loggers.py): TTFT, time per output token, and request latency.
TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
TPOT_BUCKETS = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0,
)  # fmt: skip
REQUEST_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
    240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
CONTENT_TYPE = CONTENT_TYPE_LATEST.encode()
_LABELS = ("model_name", "engine")
#: (attribute, type, vLLM's name, its documentation, buckets), as loggers.py declares them.
_METRICS = (
    ("running", Gauge, "vllm:num_requests_running",
     "Number of requests in model execution batches.", None),
    ("waiting", Gauge, "vllm:num_requests_waiting",
     "Number of requests waiting to be processed.", None),
    ("kv_cache", Gauge, "vllm:kv_cache_usage_perc",
     "KV-cache usage. 1 means 100 percent usage.", None),
    ("prompt_tokens", Counter, "vllm:prompt_tokens", "Number of prefill tokens processed.", None),
    ("generation_tokens", Counter, "vllm:generation_tokens",
     "Number of generation tokens processed.", None),
    ("prefix_queries", Counter, "vllm:prefix_cache_queries",
     "Prefix cache queries, in terms of number of queried tokens.", None),
    ("prefix_hits", Counter, "vllm:prefix_cache_hits",
     "Prefix cache hits, in terms of number of cached tokens.", None),
    ("ttft", Histogram, "vllm:time_to_first_token_seconds",
     "Histogram of time to first token in seconds.", TTFT_BUCKETS),
    ("tpot", Histogram, "vllm:time_per_output_token_seconds",
     "Histogram of time per output token in seconds.", TPOT_BUCKETS),
    ("e2e", Histogram, "vllm:e2e_request_latency_seconds",
     "Histogram of e2e request latency in seconds.", REQUEST_BUCKETS),
)  # fmt: skip


class VllmMetrics:
    """The counters of one server; ``started``/``token``/``finished`` are called by the
    streams (event loop thread), ``exposition`` by the ``/metrics`` route."""

    def __init__(self, model: str, cache: PrefixCache | None = None) -> None:
        self.cache = PrefixCache() if cache is None else cache
        self.registry = r = CollectorRegistry(auto_describe=True)
        self._lv = lv = (model, "0")
        for attr, kind, name, doc, buckets in _METRICS:
            kw = {"buckets": buckets} if buckets else {}
            setattr(self, attr, kind(name, doc, _LABELS, registry=r, **kw).labels(*lv))
        self._success = Counter(
            "vllm:request_success", "Count of successfully processed requests.",
            [*_LABELS, "finished_reason"], registry=r,
        )  # fmt: skip

    def started(self) -> None:
        self.running.inc()

    def admitted(self, prompt: list[str]) -> tuple[int, list[bytes]]:
        """A request is answered: its prompt's tokens looked up in the prefix cache (none with
        the cache off: vLLM counts no lookup it skipped); (its tokens served from the cache, its
        full blocks' hashes) returned."""
        if not self.cache.capacity:
            return 0, []
        hits, blocks = self.cache.lookup(prompt)
        self.prefix_queries.inc(len(prompt))
        self.prefix_hits.inc(hits)
        return hits, blocks

    def computed(self, blocks: list[bytes], prompt: list[str], answer: list[str]) -> None:
        """An admitted request ended: the full blocks of the tokens computed, its prompt (whose
        ``blocks`` were hashed when admitted) and ``answer`` (the answer's tokens but the
        last, whose KV is never computed), cached as vLLM frees them."""
        if self.cache.capacity:
            self.cache.store(self.cache.extend(blocks, prompt + answer[:-1]))

    def token(self, stream, at: float) -> None:
        """A content token of ``stream`` went out at ``at`` (the server's perf_counter)."""
        if len(stream.times) == 1:
            self.ttft.observe(at - stream.arrived)
        else:
            self.tpot.observe(at - stream.times[-2])

    def finished(self, stream, done: float, sent: int, ok: bool) -> None:
        """``stream`` ended at ``done`` having sent ``sent`` content tokens."""
        self.running.dec()
        self.prompt_tokens.inc(stream.prompt_tokens)
        self.generation_tokens.inc(sent)
        if ok:
            # vLLM's FinishReason names, lower case (vllm/v1/engine/__init__.py).
            reason = "length" if stream.plan.finish == "length" else "stop"
            self._success.labels(*self._lv, reason).inc()
            self.e2e.observe(done - stream.arrived)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

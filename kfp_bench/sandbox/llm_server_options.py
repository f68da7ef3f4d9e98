"""What both sides of the local LLM server share: its options, health path and clock anchor.

``LlmServerOptions`` (checked when made; its docstring is the flags' help), ``HEALTH_PATH`` and
``anchor`` (the truth log's first line) are read by the front, ``llm_server`` (flags,
``start_llm_server``, ``main``), and by the running server, ``llm_server_app``; neither imports
the other for them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.llm_server_faults import parse_fault

HEALTH_PATH = "/health"
MAX_PROCESSES = 64


@dataclass(frozen=True, slots=True)
class LlmServerOptions:
    """Server-wide settings of the local LLM server; a request's ``X-Llm-*`` headers override some.

    Attributes:
        first_token_ms: time from a request's arrival to its first content token (ms).
        token_gap_ms: time between two content tokens of one stream (ms).
        max_tokens: tokens per answer when the request gives no max_tokens.
        max_tokens_cap: the most tokens one answer has, whatever the request asks.
        model: the model name served (GET /v1/models) and put in chunks the request names none in.
        fault: a fault applied to requests at fault_rate: NAME[:key=value,...], one of stall,
            drop, 429, error, no-usage, wrong-usage, empty (listed below); empty: none.
        fault_rate: the fraction of requests the fault is applied to.
        seed: seed of the draws behind fault_rate; unset: unseeded.
        truth_log: file to write the truth log to (JSON lines); empty: none.
        max_model_len: the model's context in tokens, listed as ``max_model_len`` by GET
            /v1/models (as vLLM lists it); a request whose prompt tokens plus max_tokens exceed
            it is refused with a 400 naming both (vLLM's answer). 0: neither.
        block_size: tokens per block of the prefix cache (vLLM's --block-size, 16 by default).
        prefix_cache_blocks: the blocks the prefix cache holds, least recently used evicted
            first (what a vLLM's KV memory holds, --num-gpu-blocks-override); 0: no prefix
            caching (--no-enable-prefix-caching): nothing hits, no lookup is counted.
        processes: processes serving the one port (SO_REUSEPORT: the kernel spreads the
            connections over them), so that the server is not the limit of a large load. Each
            writes its own truth log, FILE.1, FILE.2, ... beside FILE (``read_truth`` reads them
            all), and serves its own /metrics.
        slots: decode slots (a batch's size): at most this many requests are answered at once,
            the others wait in arrival order and their timing starts when a slot frees, so that
            the server's capacity is known by construction (slots / (first_token_ms + (tokens -
            1) * token_gap_ms) requests/s); 0: no limit.
        enable_prompt_tokens_details: put the prefix cache's hits in each usage as
            prompt_tokens_details.cached_tokens when there are any, as vLLM does with its flag
            of this name (off by default there, on here); --no-enable-prompt-tokens-details
            leaves them out.
    """

    first_token_ms: float = 200.0
    token_gap_ms: float = 20.0
    max_tokens: int = 64
    max_tokens_cap: int = 4096
    model: str = "kfp-bench-llm"
    fault: str = ""
    fault_rate: float = 1.0
    seed: int | None = None
    truth_log: str = ""
    max_model_len: int = 0
    block_size: int = 16
    prefix_cache_blocks: int = 65536
    processes: int = 1
    slots: int = 0
    enable_prompt_tokens_details: bool = True

    def __post_init__(self) -> None:
        for name in ("first_token_ms", "token_gap_ms"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value < 3.6e6:
                raise ConfigError(f"llm server: {flag(name)} {value!r} must be ms in [0, 3600000)")
        for name in ("max_tokens", "max_tokens_cap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"llm server: {flag(name)} {value!r} must be an integer >= 1")
        if isinstance(self.max_model_len, bool) or not isinstance(self.max_model_len, int):
            raise ConfigError(f"llm server: --max-model-len {self.max_model_len!r}: an integer")
        if self.max_model_len < 0:
            raise ConfigError(
                f"llm server: --max-model-len {self.max_model_len}: give tokens, or 0 for none"
            )
        for name, least in (("block_size", 1), ("prefix_cache_blocks", 0), ("slots", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(
                    f"llm server: {flag(name)} {value!r}: give a whole number of {least} or more"
                )
        if isinstance(self.processes, bool) or not isinstance(self.processes, int):
            raise ConfigError(f"llm server: --processes {self.processes!r}: an integer")
        if not 1 <= self.processes <= MAX_PROCESSES:
            raise ConfigError(
                f"llm server: --processes {self.processes}: give 1 to {MAX_PROCESSES}"
            )
        if self.max_tokens > self.max_tokens_cap:
            raise ConfigError(
                f"llm server: --max-tokens {self.max_tokens} exceeds --max-tokens-cap "
                f"{self.max_tokens_cap}; lower it or raise the cap"
            )
        if not 0 <= self.fault_rate <= 1:
            raise ConfigError(f"llm server: --fault-rate {self.fault_rate!r} must be in [0, 1]")
        if not self.model.strip():
            raise ConfigError("llm server: --model must not be empty")
        if not isinstance(self.enable_prompt_tokens_details, bool):
            raise ConfigError(
                f"llm server: enable_prompt_tokens_details {self.enable_prompt_tokens_details!r}: "
                "True or False"
            )
        parse_fault(self.fault)

    def argv(self) -> tuple[str, ...]:
        """The command-line flags that reproduce these options (defaults left out)."""
        out: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):  # a switch: --name / --no-name
                out += [] if value == f.default else [flag(("" if value else "no_") + f.name)]
            elif value != f.default:
                out += [flag(f.name), str(value)]
        return tuple(out)


def flag(name: str) -> str:
    """The command-line flag of the option ``name``: ``--token-gap-ms`` for token_gap_ms."""
    return "--" + name.replace("_", "-")


def process_log(path: str, index: int) -> str:
    """The truth log of the server's process ``index`` (0: ``path`` itself)."""
    return f"{path}.{index}" if index and path else path


def anchor() -> dict:
    """One ``perf_counter`` reading and the epoch time at the same moment (the midpoint)."""
    a = time.perf_counter()
    epoch = time.time()
    b = time.perf_counter()
    return {"perf_counter": (a + b) / 2, "epoch": epoch}
